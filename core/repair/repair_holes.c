/* Hole filling: boundary loops of at most max_hole_edges edges, each closed
 * by ear clipping in the loop's best-fit plane and wound against its
 * neighbours. Two holes that touch at a vertex stay two loops. A loop is
 * skipped (left open) where it visits a vertex twice or one with more than
 * four boundary edges, meets a non-manifold edge, where a new diagonal would
 * duplicate an existing edge, or where a fill triangle would be degenerate
 * or fold back onto its neighbour (the rim of an open sheet, which has no
 * inside). */
#include "repair_steps.h"

#include <math.h>
#include <string.h>

/* Ear clipping takes the best ear up to this size, the first one beyond. */
#define HOLE_BEST_EAR_MAX 64
/* A fill triangle folds back when its normal is this close to opposite the
 * neighbour's (about 10 degrees between the two faces). */
#define HOLE_FOLD_COS -0.985

typedef struct hole_ctx {
    repair_state* s;
    uint32_t* loop; /* vertices, in fill order */
    size_t loop_cap;
    double* xy;     /* 2 per loop vertex: the projection */
    size_t xy_cap;
    uint32_t* rest; /* loop positions not clipped yet */
    size_t rest_cap;
    uint8_t* rim;   /* rim[i]: the edge from rest[i] to the next one is a loop edge */
    size_t rim_cap;
    uint32_t* fill; /* 3 per triangle */
    size_t fill_cap;
} hole_ctx;

static size_t next_corner(size_t k) { return k % 3 == 2 ? k - 2 : k + 1; }

/* Whether the fill triangle (a, b, c) folds back onto the triangle beyond its
 * loop edge a -> b. */
static int folds_back(const repair_state* s, uint32_t a, uint32_t b, const double n[3])
{
    uint32_t id = repair_edges_find(&s->edges, a, b);
    uint32_t k = s->edges.corners[2 * (size_t)id];
    const uint32_t* t = s->tri2 + (k - k % 3);
    double m[3];
    repair_normal(repair_pos2(s, t[0]), repair_pos2(s, t[1]), repair_pos2(s, t[2]), m);
    double dot = n[0] * m[0] + n[1] * m[1] + n[2] * m[2];
    double len = sqrt((n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) * (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]));
    if (s->tri2[k] == a) dot = -dot; /* the neighbour runs a -> b too: it faces the other way */
    return !(len > 0.0) || dot < HOLE_FOLD_COS * len;
}

/* Whether the loop corner ear (i: previous, j, next) may be cut off: a real
 * triangle, a new diagonal, no fold onto a neighbour; with strict, also
 * convex and empty in the projection. Returns its quality, or -1. */
static double ear_quality(hole_ctx* h, uint32_t m, uint32_t i, int strict)
{
    const repair_state* s = h->s;
    uint32_t ip = (i + m - 1) % m, in = (i + 1) % m;
    uint32_t pa = h->rest[ip], pb = h->rest[i], pc = h->rest[in];
    uint32_t a = h->loop[pa], b = h->loop[pb], c = h->loop[pc];
    const float *A = repair_pos2(s, a), *B = repair_pos2(s, b), *C = repair_pos2(s, c);
    double q = repair_quality(A, B, C);
    if (!(q > REPAIR_ZERO_AREA)) return -1.0;
    if (m > 3 && repair_edges_find(&s->edges, a, c) != REPAIR_NONE) return -1.0;
    double n[3];
    repair_normal(A, B, C, n);
    if (h->rim[ip] && folds_back(s, a, b, n)) return -1.0;
    if (h->rim[i] && folds_back(s, b, c, n)) return -1.0;
    if (m == 3 && h->rim[in] && folds_back(s, c, a, n)) return -1.0;
    if (!strict || m == 3) return q;
    const double *xa = h->xy + 2 * pa, *xb = h->xy + 2 * pb, *xc = h->xy + 2 * pc;
    double area = (xb[0] - xa[0]) * (xc[1] - xa[1]) - (xb[1] - xa[1]) * (xc[0] - xa[0]);
    if (!(area > 0.0)) return -1.0;
    for (uint32_t r = 0; r < m; ++r) {
        if (r == ip || r == i || r == in) continue;
        const double* p = h->xy + 2 * h->rest[r];
        double w0 = (xb[0] - xa[0]) * (p[1] - xa[1]) - (xb[1] - xa[1]) * (p[0] - xa[0]);
        double w1 = (xc[0] - xb[0]) * (p[1] - xb[1]) - (xc[1] - xb[1]) * (p[0] - xb[0]);
        double w2 = (xa[0] - xc[0]) * (p[1] - xc[1]) - (xa[1] - xc[1]) * (p[0] - xc[0]);
        if (w0 >= 0.0 && w1 >= 0.0 && w2 >= 0.0) return -1.0; /* inside or on the ear */
    }
    return q;
}

/* Projects the loop onto the plane of its Newell normal, where it runs
 * counter-clockwise. 0 when the loop spans no area. */
static int project_loop(hole_ctx* h, uint32_t k)
{
    const float* o = repair_pos2(h->s, h->loop[0]);
    double n[3] = {0, 0, 0};
    for (uint32_t i = 0; i < k; ++i) {
        const float *p = repair_pos2(h->s, h->loop[i]), *q = repair_pos2(h->s, h->loop[(i + 1) % k]);
        double a[3], b[3];
        for (int j = 0; j < 3; ++j) a[j] = (double)p[j] - o[j], b[j] = (double)q[j] - o[j];
        n[0] += a[1] * b[2] - a[2] * b[1];
        n[1] += a[2] * b[0] - a[0] * b[2];
        n[2] += a[0] * b[1] - a[1] * b[0];
    }
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(len > 0.0)) return 0;
    for (int j = 0; j < 3; ++j) n[j] /= len;
    /* u: perpendicular to n from its smallest component; w = n x u. */
    double u[3] = {0, 0, 0};
    int small = fabs(n[0]) <= fabs(n[1]) && fabs(n[0]) <= fabs(n[2]) ? 0 : fabs(n[1]) <= fabs(n[2]) ? 1 : 2;
    u[(small + 1) % 3] = n[(small + 2) % 3];
    u[(small + 2) % 3] = -n[(small + 1) % 3];
    double ul = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int j = 0; j < 3; ++j) u[j] /= ul;
    double w[3] = {n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]};
    for (uint32_t i = 0; i < k; ++i) {
        const float* p = repair_pos2(h->s, h->loop[i]);
        double d[3] = {(double)p[0] - o[0], (double)p[1] - o[1], (double)p[2] - o[2]};
        h->xy[2 * i] = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
        h->xy[2 * i + 1] = d[0] * w[0] + d[1] * w[1] + d[2] * w[2];
    }
    return 1;
}

/* Ear clipping of loop[0..k) into h->fill. 0 when some corner cannot be cut. */
static int triangulate(hole_ctx* h, uint32_t k)
{
    if (!project_loop(h, k)) return 0;
    for (uint32_t i = 0; i < k; ++i) {
        h->rest[i] = i;
        h->rim[i] = 1;
    }
    uint32_t m = k, nfill = 0;
    while (m >= 3) {
        uint32_t best = REPAIR_NONE;
        double best_q = -1.0;
        for (int strict = 1; strict >= 0 && best == REPAIR_NONE; --strict)
            for (uint32_t i = 0; i < m; ++i) {
                double q = ear_quality(h, m, i, strict);
                if (q > best_q) best_q = q, best = i;
                if (best != REPAIR_NONE && m > HOLE_BEST_EAR_MAX) break;
            }
        if (best == REPAIR_NONE) return 0;
        uint32_t ip = (best + m - 1) % m, in = (best + 1) % m;
        uint32_t* f = h->fill + 3 * (size_t)nfill++;
        f[0] = h->loop[h->rest[ip]], f[1] = h->loop[h->rest[best]], f[2] = h->loop[h->rest[in]];
        if (m == 3) break;
        h->rim[ip] = 0; /* now the diagonal to rest[in] */
        memmove(h->rest + best, h->rest + best + 1, (m - best - 1) * sizeof *h->rest);
        memmove(h->rim + best, h->rim + best + 1, (m - best - 1) * sizeof *h->rim);
        --m;
    }
    return 1;
}

static rtcd_error grow_triangles(repair_state* s, size_t need)
{
    if (need <= s->tri2_cap) return RTCD_OK;
    size_t cap = s->tri2_cap * 2 > need ? s->tri2_cap * 2 : need;
    uint32_t* tri = rtcd_alloc(3 * cap * sizeof *tri);
    uint32_t* src = rtcd_alloc(cap * sizeof *src);
    uint32_t* comp = rtcd_alloc(cap * sizeof *comp);
    if (!tri || !src || !comp) {
        rtcd_free(tri);
        rtcd_free(src);
        rtcd_free(comp);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory for %zu triangles", need);
    }
    memcpy(tri, s->tri2, 3 * (size_t)s->nt2 * sizeof *tri);
    memcpy(src, s->tsrc, (size_t)s->nt2 * sizeof *src);
    memcpy(comp, s->tcomp, (size_t)s->nt2 * sizeof *comp);
    rtcd_free(s->tri2);
    rtcd_free(s->tsrc);
    rtcd_free(s->tcomp);
    s->tri2 = tri, s->tsrc = src, s->tcomp = comp;
    s->tri2_cap = cap;
    return RTCD_OK;
}

/* Closes loop[0..k), whose first edge is boundary edge `first`. */
static rtcd_error fill_loop(hole_ctx* h, uint32_t k, uint32_t first)
{
    repair_state* s = h->s;
    /* Wind against the neighbours: most loop edges should be run the other
     * way by the triangle beyond them. */
    int keep = 0;
    for (uint32_t i = 0; i < k; ++i) {
        uint32_t id = repair_edges_find(&s->edges, h->loop[i], h->loop[(i + 1) % k]);
        keep += s->tri2[s->edges.corners[2 * (size_t)id]] == h->loop[i] ? -1 : 1;
    }
    if (keep < 0)
        for (uint32_t i = 0, j = k - 1; i < j; ++i, --j) {
            uint32_t v = h->loop[i];
            h->loop[i] = h->loop[j], h->loop[j] = v;
        }
    if (!rtcd_grow((void**)&h->xy, &h->xy_cap, 2 * (size_t)k, sizeof *h->xy) ||
        !rtcd_grow((void**)&h->rest, &h->rest_cap, k, sizeof *h->rest) ||
        !rtcd_grow((void**)&h->rim, &h->rim_cap, k, sizeof *h->rim) ||
        !rtcd_grow((void**)&h->fill, &h->fill_cap, 3 * (size_t)k, sizeof *h->fill))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to fill a hole of %u edges", k);
    if (!triangulate(h, k)) return RTCD_OK; /* left open */
    rtcd_error err = grow_triangles(s, (size_t)s->nt2 + k - 2);
    if (err != RTCD_OK) return err;
    uint32_t comp = s->tcomp[s->edges.corners[2 * (size_t)first] / 3];
    memcpy(s->tri2 + 3 * (size_t)s->nt2, h->fill, 3 * (size_t)(k - 2) * sizeof *h->fill);
    for (uint32_t i = 0; i < k - 2; ++i) {
        s->tsrc[s->nt2 + i] = REPAIR_NONE;
        s->tcomp[s->nt2 + i] = comp;
    }
    s->nt2 += k - 2;
    if (s->report.filled_holes++ == 0)
        for (uint32_t i = 0; i < k; ++i)
            if (s->vsrc[h->loop[i]] < s->report.first_hole_edge_vertex)
                s->report.first_hole_edge_vertex = s->vsrc[h->loop[i]];
    return RTCD_OK;
}

/* The other end of the wedge of triangles at v that `edge` bounds: around
 * v's fan from edge's triangle. REPAIR_NONE where the fan crosses a
 * non-manifold edge. */
static uint32_t wedge_end(const repair_state* s, uint32_t edge, uint32_t v)
{
    const repair_edges* e = &s->edges;
    uint32_t k = e->corners[2 * (size_t)edge];
    for (uint32_t steps = 0; steps < s->nt2; ++steps) {
        uint32_t t = k / 3, kv = 3 * t;
        while (kv < 3 * t + 2 && s->tri2[kv] != v) ++kv;
        uint32_t e1 = e->corner_edge[kv], e2 = e->corner_edge[kv % 3 == 0 ? kv + 2 : kv - 1];
        uint32_t other = e1 == edge ? e2 : e1;
        if (other == edge || e->uses[other] > 2) return REPAIR_NONE;
        if (e->uses[other] == 1) return other;
        uint32_t c0 = e->corners[2 * (size_t)other], c1 = e->corners[2 * (size_t)other + 1];
        k = c0 / 3 == t ? c1 : c0;
        edge = other;
    }
    return REPAIR_NONE;
}

/* Whether the boundary edge's triangle runs it into v. */
static int runs_into(const repair_state* s, uint32_t edge, uint32_t v)
{
    return s->tri2[next_corner(s->edges.corners[2 * (size_t)edge])] == v;
}

/* The loop's boundary edge after `edge` at v. One wedge at v: its other
 * end. Two wedges (two holes touching at v): the loop crosses to the other
 * wedge, at the end its triangle runs the other way round v than edge's
 * does (the other end borders the other hole). More: REPAIR_NONE. */
static uint32_t next_boundary(const repair_state* s, const uint8_t* degree, const uint32_t* ends, uint32_t edge,
                              uint32_t v)
{
    const uint32_t* at = ends + 4 * (size_t)v;
    if (degree[v] == 2) return at[0] == edge ? at[1] : at[0];
    if (degree[v] != 4) return REPAIR_NONE;
    uint32_t same = wedge_end(s, edge, v), pick = REPAIR_NONE;
    if (same == REPAIR_NONE) return REPAIR_NONE;
    for (int i = 0; i < 4; ++i) {
        if (at[i] == edge || at[i] == same || runs_into(s, at[i], v) == runs_into(s, edge, v)) continue;
        if (pick != REPAIR_NONE) return REPAIR_NONE; /* inconsistent winding: no way to tell */
        pick = at[i];
    }
    return pick;
}

static uint32_t other_end(const repair_state* s, uint32_t edge, uint32_t v)
{
    uint32_t k = s->edges.corners[2 * (size_t)edge], a = s->tri2[k];
    return a == v ? s->tri2[next_corner(k)] : a;
}

rtcd_error repair_holes(repair_state* s)
{
    rtcd_error err = repair_edges_build(&s->edges, s->tri2, s->nt2, s->nv2);
    if (err != RTCD_OK) return err;
    s->edges_valid = 1;
    const repair_edges* e = &s->edges;
    uint32_t limit = s->def.max_hole_edges, nt_before = s->nt2;
    hole_ctx h;
    memset(&h, 0, sizeof h);
    h.s = s;
    /* stamp[v]: the last loop through v; filled[v]: v is on a filled loop;
     * degree[v] boundary edges at v (saturated), the first four in ends. */
    uint32_t* stamp = rtcd_calloc((size_t)s->nv2 + 1, sizeof *stamp);
    uint8_t* filled = rtcd_calloc((size_t)s->nv2 + 1, 1);
    uint8_t* degree = rtcd_calloc((size_t)s->nv2 + 1, 1);
    uint32_t* ends = rtcd_alloc(4 * (size_t)s->nv2 * sizeof *ends + 1);
    uint8_t* done = rtcd_calloc((size_t)e->count + 1, 1);
    if (!stamp || !filled || !degree || !ends || !done) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to find holes");
        goto out;
    }
    for (uint32_t id = 0; id < e->count; ++id) {
        if (e->uses[id] != 1) continue;
        uint32_t k = e->corners[2 * (size_t)id], ab[2] = {s->tri2[k], s->tri2[next_corner(k)]};
        for (int j = 0; j < 2; ++j) {
            if (degree[ab[j]] < 4) ends[4 * (size_t)ab[j] + degree[ab[j]]] = id;
            if (degree[ab[j]] < 255) degree[ab[j]]++;
        }
    }
    uint32_t loops = 0;
    for (uint32_t start = 0; start < e->count; ++start) {
        if (e->uses[start] != 1 || done[start]) continue;
        /* Walk the loop along the start triangle's direction. Fillable: it
         * closes, visits no vertex twice, and shares at most one vertex with
         * loops filled before (so no two fills make the same diagonal). */
        uint32_t k0 = e->corners[2 * (size_t)start], v0 = s->tri2[k0], cur = s->tri2[next_corner(k0)];
        uint32_t edge = start, n = 1, shared = filled[v0];
        int simple = 1;
        done[start] = 1;
        stamp[v0] = ++loops;
        if (limit >= 3) {
            if (!rtcd_grow((void**)&h.loop, &h.loop_cap, 1, sizeof *h.loop)) goto oom;
            h.loop[0] = v0;
        }
        for (;;) {
            uint32_t next = next_boundary(s, degree, ends, edge, cur);
            if (next == start && cur == v0) break;
            if (next == REPAIR_NONE || done[next]) {
                simple = 0;
                break;
            }
            done[next] = 1;
            if (stamp[cur] == loops) simple = 0;
            stamp[cur] = loops;
            shared += filled[cur];
            if (++n <= limit && simple) {
                if (!rtcd_grow((void**)&h.loop, &h.loop_cap, n, sizeof *h.loop)) goto oom;
                h.loop[n - 1] = cur;
            }
            cur = other_end(s, next, cur);
            edge = next;
        }
        if (!simple || n < 3 || n > limit || shared > 1) continue;
        uint32_t before = s->report.filled_holes;
        if ((err = fill_loop(&h, n, start)) != RTCD_OK) goto out;
        if (s->report.filled_holes != before)
            for (uint32_t i = 0; i < n; ++i) filled[h.loop[i]] = 1;
    }
    if (s->nt2 != nt_before) { /* the orientation needs the fills' edges */
        repair_edges_free(&s->edges);
        s->edges_valid = 0;
    }
    goto out;
oom:
    err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to trace holes");
out:
    rtcd_free(stamp);
    rtcd_free(filled);
    rtcd_free(degree);
    rtcd_free(ends);
    rtcd_free(done);
    rtcd_free(h.loop);
    rtcd_free(h.xy);
    rtcd_free(h.rest);
    rtcd_free(h.rim);
    rtcd_free(h.fill);
    return err;
}
