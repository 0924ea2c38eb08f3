/* Slivers: triangles whose smallest altitude is below sliver_ratio times
 * their longest edge (and, whatever the ratio, those of zero area). Let c be
 * the corner opposite the longest edge ab and a the nearer of its ends:
 *  - a needle (ca short) collapses ca, moving the end whose triangles stay
 *    closer to their planes (c onto a when c lies in a flat region);
 *  - a cap (c close to ab, away from its ends) flips ab with the triangle on
 *    its other side, which keeps every vertex where it is.
 * The other operation is the fallback. Both run only where they keep the
 * surface a 2-manifold: a collapse needs every edge at a and c shared by two
 * triangles and the link condition (the one-rings of a and c share exactly
 * the two vertices opposite ca, and no face spans those two with each of
 * them), and must fold no triangle over; a flip needs ab shared by two
 * consistently wound triangles, a new diagonal and better triangles. What
 * cannot be done safely is left as it is.
 *
 * Rounds: each builds the vertex-to-triangle lists, then repairs slivers
 * whose neighbourhoods do not overlap (the vertices an operation read or
 * changed are locked until the next round, so the lists stay exact where
 * they are read). Collapses remove vertices and flips raise the worst
 * quality of the pair, so the rounds end. */
#include "repair_steps.h"

#include <math.h>
#include <string.h>

#define SLIVER_MAX_ROUNDS 64
/* Shortest edge below this fraction of the longest: a needle. */
#define SLIVER_NEEDLE 0.1

typedef struct sliver_ctx {
    repair_state* s;
    double ratio;
    uint32_t* vstart; /* nv + 1 */
    uint32_t* vtri;   /* 3 per triangle: the triangles at each vertex */
    uint32_t* lock;   /* per vertex: the round that locked it */
    uint32_t* mark;   /* per vertex: scratch stamp */
    uint32_t* uses;   /* per vertex: scratch count of star triangles */
    uint32_t round, stamp;
    uint32_t *ring_a, *ring_c;
    size_t ring_a_cap, ring_c_cap;
} sliver_ctx;

static const float* P(const repair_state* s, uint32_t v) { return s->pos + 3 * (size_t)v; }

static double tri_quality(const repair_state* s, uint32_t t)
{
    const uint32_t* c = s->tri + 3 * (size_t)t;
    return repair_quality(P(s, c[0]), P(s, c[1]), P(s, c[2]));
}

static int has_vertex(const uint32_t* c, uint32_t v) { return c[0] == v || c[1] == v || c[2] == v; }

static int is_sliver(const sliver_ctx* x, uint32_t t)
{
    const uint32_t* c = x->s->tri + 3 * (size_t)t;
    if (c[0] == REPAIR_NONE || c[0] == c[1] || c[1] == c[2] || c[0] == c[2]) return 0;
    double q = tri_quality(x->s, t);
    return q < x->ratio || q <= REPAIR_ZERO_AREA;
}

static void build_stars(sliver_ctx* x)
{
    const repair_state* s = x->s;
    memset(x->vstart, 0, ((size_t)s->nv + 1) * sizeof *x->vstart);
    for (uint32_t t = 0; t < s->nt; ++t)
        if (!repair_removed(s, t))
            for (int j = 0; j < 3; ++j) x->vstart[s->tri[3 * (size_t)t + j] + 1]++;
    for (uint32_t v = 0; v < s->nv; ++v) x->vstart[v + 1] += x->vstart[v];
    for (uint32_t t = 0; t < s->nt; ++t) /* vstart[v] is the cursor, shifted back below */
        if (!repair_removed(s, t))
            for (int j = 0; j < 3; ++j) x->vtri[x->vstart[s->tri[3 * (size_t)t + j]]++] = t;
    for (uint32_t v = s->nv; v > 0; --v) x->vstart[v] = x->vstart[v - 1];
    x->vstart[0] = 0;
}

/* Runs the statement after it for each alive triangle t at vertex v (the
 * lists are a round old: skip what no longer holds v). */
#define FOR_STAR(x, v, t)                                                                  \
    for (uint32_t i_##t = (x)->vstart[v], t; i_##t < (x)->vstart[(v) + 1]; ++i_##t)       \
        if ((t = (x)->vtri[i_##t]), (!repair_removed((x)->s, t) && has_vertex((x)->s->tri + 3 * (size_t)t, v)))

/* Alive triangles on edge (a, b): their number, the first two in out. */
static uint32_t edge_triangles(const sliver_ctx* x, uint32_t a, uint32_t b, uint32_t out[2])
{
    uint32_t n = 0;
    FOR_STAR(x, a, t)
    {
        if (!has_vertex(x->s->tri + 3 * (size_t)t, b)) continue;
        if (n < 2) out[n] = t;
        ++n;
    }
    return n;
}

static uint32_t third_vertex(const uint32_t* c, uint32_t a, uint32_t b)
{
    return c[0] != a && c[0] != b ? c[0] : c[1] != a && c[1] != b ? c[1] : c[2];
}

/* v's one-ring into *ring (stamped in mark, star counts in uses); 0 when an
 * edge at v is not shared by exactly two triangles or a vertex is locked. */
static int gather_ring(sliver_ctx* x, uint32_t v, uint32_t** ring, size_t* cap, uint32_t* n, rtcd_error* err)
{
    uint32_t stamp = ++x->stamp;
    *n = 0;
    FOR_STAR(x, v, t)
    {
        const uint32_t* c = x->s->tri + 3 * (size_t)t;
        for (int j = 0; j < 3; ++j) {
            uint32_t w = c[j];
            if (w == v) continue;
            if (x->mark[w] != stamp) {
                if (!rtcd_grow((void**)ring, cap, (size_t)*n + 1, sizeof **ring)) {
                    *err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory for a vertex ring");
                    return 0;
                }
                (*ring)[(*n)++] = w;
                x->mark[w] = stamp;
                x->uses[w] = 0;
            }
            x->uses[w]++;
        }
    }
    if (*n == 0 || x->lock[v] == x->round) return 0;
    for (uint32_t i = 0; i < *n; ++i)
        if (x->uses[(*ring)[i]] != 2 || x->lock[(*ring)[i]] == x->round) return 0;
    return 1;
}

static int has_face(const sliver_ctx* x, uint32_t v, uint32_t p, uint32_t q)
{
    FOR_STAR(x, v, t)
    {
        if (has_vertex(x->s->tri + 3 * (size_t)t, p) && has_vertex(x->s->tri + 3 * (size_t)t, q)) return 1;
    }
    return 0;
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Collapses edge (c, a) of sliver t, moving c onto a. 1 when done. */
static int try_collapse(sliver_ctx* x, uint32_t t, uint32_t c, uint32_t a, rtcd_error* err)
{
    repair_state* s = x->s;
    uint32_t pair[2], nc, na;
    if (edge_triangles(x, c, a, pair) != 2 || (pair[0] != t && pair[1] != t)) return 0;
    uint32_t n = pair[0] == t ? pair[1] : pair[0];
    uint32_t xv = third_vertex(s->tri + 3 * (size_t)t, c, a), yv = third_vertex(s->tri + 3 * (size_t)n, c, a);
    if (xv == yv) return 0;
    if (!gather_ring(x, c, &x->ring_c, &x->ring_c_cap, &nc, err)) return 0;
    if (!gather_ring(x, a, &x->ring_a, &x->ring_a_cap, &na, err)) return 0;
    /* Shared ring vertices: those of c's ring that a's gathering restamped. */
    uint32_t shared = 0;
    for (uint32_t i = 0; i < nc; ++i) shared += x->mark[x->ring_c[i]] == x->stamp;
    if (shared != 2 || has_face(x, a, xv, yv) + has_face(x, c, xv, yv) == 2) return 0;
    /* No triangle that moves may fold over or become degenerate. */
    FOR_STAR(x, c, u)
    {
        if (u == t || u == n) continue;
        const uint32_t* k = s->tri + 3 * (size_t)u;
        const float* moved[3];
        for (int j = 0; j < 3; ++j) moved[j] = P(s, k[j] == c ? a : k[j]);
        if (!(repair_quality(moved[0], moved[1], moved[2]) > REPAIR_ZERO_AREA)) return 0;
        double before[3], after[3];
        repair_normal(P(s, k[0]), P(s, k[1]), P(s, k[2]), before);
        repair_normal(moved[0], moved[1], moved[2], after);
        if (repair_quality(P(s, k[0]), P(s, k[1]), P(s, k[2])) > REPAIR_ZERO_AREA && !(dot3(before, after) > 0.0))
            return 0;
    }
    if (is_sliver(x, n)) repair_note(&s->report.sliver_triangles, &s->report.first_sliver_triangle, n);
    repair_note(&s->report.sliver_triangles, &s->report.first_sliver_triangle, t);
    s->tri[3 * (size_t)t] = REPAIR_NONE;
    s->tri[3 * (size_t)n] = REPAIR_NONE;
    FOR_STAR(x, c, u)
    {
        uint32_t* k = s->tri + 3 * (size_t)u;
        for (int j = 0; j < 3; ++j)
            if (k[j] == c) k[j] = a;
    }
    x->lock[a] = x->lock[c] = x->round;
    for (uint32_t i = 0; i < nc; ++i) x->lock[x->ring_c[i]] = x->round;
    for (uint32_t i = 0; i < na; ++i) x->lock[x->ring_a[i]] = x->round;
    return 1;
}

/* Flips edge j of sliver t (corner j to corner j+1) with the triangle beyond
 * it. 1 when done. */
static int try_flip(sliver_ctx* x, uint32_t t, int j)
{
    repair_state* s = x->s;
    uint32_t* kt = s->tri + 3 * (size_t)t;
    uint32_t a = kt[j], b = kt[(j + 1) % 3], c = kt[(j + 2) % 3], pair[2];
    if (edge_triangles(x, a, b, pair) != 2) return 0;
    uint32_t u = pair[0] == t ? pair[1] : pair[0];
    uint32_t* ku = s->tri + 3 * (size_t)u;
    int ju = ku[0] == b ? 0 : ku[1] == b ? 1 : 2;
    if (ku[(ju + 1) % 3] != a) return 0; /* u must run b -> a */
    uint32_t d = ku[(ju + 2) % 3];
    if (d == c || x->lock[a] == x->round || x->lock[b] == x->round || x->lock[c] == x->round ||
        x->lock[d] == x->round)
        return 0;
    uint32_t none[2];
    if (edge_triangles(x, c, d, none) != 0) return 0;
    /* a -> d -> b -> c is the pair's outline: (a, d, c) and (d, b, c). */
    double q_new = repair_quality(P(s, a), P(s, d), P(s, c)), q2 = repair_quality(P(s, d), P(s, b), P(s, c));
    double q_old = tri_quality(s, t), q_u = tri_quality(s, u);
    if (q2 < q_new) q_new = q2;
    if (q_u < q_old) q_old = q_u;
    if (!(q_new > q_old) || !(q_new > REPAIR_ZERO_AREA) || !(q_u > REPAIR_ZERO_AREA)) return 0;
    double nu[3], n1[3], n2[3];
    repair_normal(P(s, b), P(s, a), P(s, d), nu);
    repair_normal(P(s, a), P(s, d), P(s, c), n1);
    repair_normal(P(s, d), P(s, b), P(s, c), n2);
    if (!(dot3(n1, nu) > 0.0) || !(dot3(n2, nu) > 0.0)) return 0;
    if (is_sliver(x, u)) repair_note(&s->report.sliver_triangles, &s->report.first_sliver_triangle, u);
    repair_note(&s->report.sliver_triangles, &s->report.first_sliver_triangle, t);
    kt[0] = a, kt[1] = d, kt[2] = c;
    ku[0] = d, ku[1] = b, ku[2] = c;
    x->lock[a] = x->lock[b] = x->lock[c] = x->lock[d] = x->round;
    return 1;
}

/* How far moving c onto a takes c off the planes of the triangles that keep
 * it (those on edge ca disappear). */
static double move_error(const sliver_ctx* x, uint32_t c, uint32_t a)
{
    const repair_state* s = x->s;
    double worst = 0.0, d[3];
    for (int k = 0; k < 3; ++k) d[k] = (double)P(s, a)[k] - P(s, c)[k];
    FOR_STAR(x, c, t)
    {
        const uint32_t* k = s->tri + 3 * (size_t)t;
        if (has_vertex(k, a)) continue;
        double n[3];
        repair_normal(P(s, k[0]), P(s, k[1]), P(s, k[2]), n);
        double len = sqrt(dot3(n, n));
        double e = len > 0.0 ? fabs(dot3(d, n)) / len : sqrt(dot3(d, d));
        if (e > worst) worst = e;
    }
    return worst;
}

static int fix_sliver(sliver_ctx* x, uint32_t t, rtcd_error* err)
{
    const repair_state* s = x->s;
    const uint32_t* k = s->tri + 3 * (size_t)t;
    double len2[3];
    for (int j = 0; j < 3; ++j) {
        const float *p = P(s, k[j]), *q = P(s, k[(j + 1) % 3]);
        len2[j] = 0.0;
        for (int i = 0; i < 3; ++i) len2[j] += ((double)q[i] - p[i]) * ((double)q[i] - p[i]);
    }
    int jl = 0, js = 0;
    for (int j = 1; j < 3; ++j) {
        if (len2[j] > len2[jl]) jl = j;
        if (len2[j] < len2[js]) js = j;
    }
    if (jl == js) return 0;
    /* The shortest edge collapses onto whichever end moves the surface less. */
    uint32_t from = k[js], to = k[(js + 1) % 3];
    if (move_error(x, to, from) < move_error(x, from, to)) from = k[(js + 1) % 3], to = k[js];
    if (len2[js] < SLIVER_NEEDLE * SLIVER_NEEDLE * len2[jl])
        return try_collapse(x, t, from, to, err) || (*err == RTCD_OK && try_flip(x, t, jl));
    return try_flip(x, t, jl) || try_collapse(x, t, from, to, err);
}

rtcd_error repair_slivers(repair_state* s)
{
    sliver_ctx x;
    memset(&x, 0, sizeof x);
    x.s = s;
    x.ratio = s->def.sliver_ratio;
    rtcd_error err = RTCD_OK;
    uint32_t* todo = NULL;
    size_t todo_cap = 0;
    for (x.round = 1; x.round <= SLIVER_MAX_ROUNDS && err == RTCD_OK; ++x.round) {
        uint32_t n = 0;
        for (uint32_t t = 0; t < s->nt; ++t) {
            if (!is_sliver(&x, t)) continue;
            if (!rtcd_grow((void**)&todo, &todo_cap, (size_t)n + 1, sizeof *todo)) goto oom;
            todo[n++] = t;
        }
        if (n == 0) break;
        if (!x.vstart) {
            x.vstart = rtcd_alloc(((size_t)s->nv + 1) * sizeof *x.vstart);
            x.vtri = rtcd_alloc(3 * (size_t)s->nt * sizeof *x.vtri);
            x.lock = rtcd_calloc(s->nv, sizeof *x.lock);
            x.mark = rtcd_calloc(s->nv, sizeof *x.mark);
            x.uses = rtcd_calloc(s->nv, sizeof *x.uses);
            if (!x.vstart || !x.vtri || !x.lock || !x.mark || !x.uses) goto oom;
        }
        build_stars(&x);
        uint32_t done = 0;
        for (uint32_t i = 0; i < n && err == RTCD_OK; ++i) {
            uint32_t t = todo[i];
            const uint32_t* k = s->tri + 3 * (size_t)t;
            /* Changed this round (its corners are locked) or gone: next round. */
            if (repair_removed(s, t) || x.lock[k[0]] == x.round || x.lock[k[1]] == x.round ||
                x.lock[k[2]] == x.round)
                continue;
            done += (uint32_t)fix_sliver(&x, t, &err);
        }
        if (done == 0) break;
    }
    goto out;
oom:
    err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to repair slivers among %u triangles", s->nt);
out:
    rtcd_free(todo);
    rtcd_free(x.vstart);
    rtcd_free(x.vtri);
    rtcd_free(x.lock);
    rtcd_free(x.mark);
    rtcd_free(x.uses);
    rtcd_free(x.ring_a);
    rtcd_free(x.ring_c);
    return err;
}
