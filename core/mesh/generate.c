/* Deterministic generated meshes: concave blobs for the benchmark scenes, a UV
 * sphere, a torus and a subdivided box.
 *
 * The blob is the convex hull of jittered Fibonacci points on the unit sphere
 * (all of them hull vertices, so the hull is a genus-0 triangulation with
 * exactly 2V-4 triangles), displaced radially by smooth bumps. Displacing
 * vertex i to r_i * u_i keeps every hull triangle's det(p0, p1, p2) =
 * r0 r1 r2 det(u0, u1, u2) > 0, so any positive r gives a star-shaped,
 * non-self-intersecting mesh whatever the bumps do.
 *
 * Cross-platform determinism: the generators use only + - * / sqrt floor
 * (correctly rounded in IEEE 754, and the build disables FMA contraction) and
 * their own sine/cosine, and the hull runs on integer coordinates with exact
 * 64-bit orientation tests. */
#include "mesh_internal.h"

#include <math.h>
#include <string.h>

#define GEN_PI 3.14159265358979323846
#define GEN_NONE 0xffffffffu
#define BLOB_MAX_VERTICES (1u << 16)
/* Hull coordinates are integers of at most 2^18 in magnitude: differences fit
 * 19 bits, orientation determinants 3 * 2^58 < 2^63, exact in int64. */
#define HULL_SCALE 262144.0

void rtcd_generated_free(rtcd_generated_mesh* mesh)
{
    if (!mesh) return;
    rtcd_free(mesh->vertices);
    rtcd_free(mesh->indices);
    memset(mesh, 0, sizeof *mesh);
}

uint32_t rtcd_spawner_mesh_vertices(uint32_t which)
{
    static const uint32_t sizes[RTCD_SPAWNER_MESH_COUNT] = {453u, 1067u, 1730u, 1731u};
    return which < RTCD_SPAWNER_MESH_COUNT ? sizes[which] : 0u;
}

/* ---- helpers ---- */

static uint64_t rng_next(uint64_t* state) /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t* state, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next(state) >> 11) * 0x1p-53);
}

/* sin and cos from basic operations only: libm's may differ in the last bit
 * between platforms. Taylor series at x/8 (|x/8| <= pi/8, truncation < 1e-18)
 * followed by three angle doublings. */
static void gen_sincos(double x, double* s, double* c)
{
    x -= 2.0 * GEN_PI * floor(x / (2.0 * GEN_PI) + 0.5);
    double h = x * 0.125, h2 = h * h;
    double sn = h * (1 - h2 / 6 * (1 - h2 / 20 * (1 - h2 / 42 * (1 - h2 / 72 * (1 - h2 / 110 * (1 - h2 / 156 * (1 - h2 / 210)))))));
    double cs = 1 - h2 / 2 * (1 - h2 / 12 * (1 - h2 / 30 * (1 - h2 / 56 * (1 - h2 / 90 * (1 - h2 / 132 * (1 - h2 / 182))))));
    for (int i = 0; i < 3; ++i) {
        double s2 = 2 * sn * cs;
        cs = cs * cs - sn * sn;
        sn = s2;
    }
    *s = sn;
    *c = cs;
}

static rtcd_error alloc_output(uint32_t vertex_count, uint32_t triangle_count, rtcd_generated_mesh* out)
{
    out->vertices = rtcd_calloc((size_t)vertex_count * 3, sizeof(float));
    out->indices = rtcd_calloc((size_t)triangle_count * 3, sizeof(uint32_t));
    if (!out->vertices || !out->indices) {
        rtcd_generated_free(out);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "generate: cannot allocate %u vertices and %u triangles",
                         vertex_count, triangle_count);
    }
    out->vertex_count = vertex_count;
    out->triangle_count = triangle_count;
    return RTCD_OK;
}

static void set_vertex(rtcd_generated_mesh* m, uint32_t i, double x, double y, double z)
{
    m->vertices[3 * i] = (float)x;
    m->vertices[3 * i + 1] = (float)y;
    m->vertices[3 * i + 2] = (float)z;
}

static void set_triangle(rtcd_generated_mesh* m, uint32_t t, uint32_t a, uint32_t b, uint32_t c)
{
    m->indices[3 * t] = a;
    m->indices[3 * t + 1] = b;
    m->indices[3 * t + 2] = c;
}

/* ---- incremental convex hull on integer points (exact predicates) ---- */

typedef struct hull_face {
    uint32_t v[3];   /* counter-clockwise from outside */
    uint32_t adj[3]; /* face across edge v[e] -> v[(e+1)%3] */
    uint32_t head;   /* first outside point assigned to this face */
    uint32_t mark;
    int alive;
} hull_face;

typedef struct hull {
    const int64_t* p; /* 3 per point */
    uint32_t n, cap, used, free_n, live;
    hull_face* f;
    uint32_t* free_slots;
    uint32_t* next;    /* per point: next point in its face's outside list */
    uint32_t* face_of; /* per point: the face it lies outside of, or GEN_NONE */
} hull;

/* det(b - a, c - a, q - a): positive when q is strictly outside face abc. */
static int64_t orient4(const int64_t* p, uint32_t a, uint32_t b, uint32_t c, uint32_t q)
{
    const int64_t *A = p + 3 * (size_t)a, *B = p + 3 * (size_t)b, *C = p + 3 * (size_t)c, *Q = p + 3 * (size_t)q;
    int64_t u0 = B[0] - A[0], u1 = B[1] - A[1], u2 = B[2] - A[2];
    int64_t v0 = C[0] - A[0], v1 = C[1] - A[1], v2 = C[2] - A[2];
    int64_t w0 = Q[0] - A[0], w1 = Q[1] - A[1], w2 = Q[2] - A[2];
    return (u1 * v2 - u2 * v1) * w0 + (u2 * v0 - u0 * v2) * w1 + (u0 * v1 - u1 * v0) * w2;
}

static int outside(const hull* h, uint32_t face, uint32_t q)
{
    const hull_face* f = &h->f[face];
    return orient4(h->p, f->v[0], f->v[1], f->v[2], q) > 0;
}

static void assign_point(hull* h, uint32_t face, uint32_t q)
{
    h->face_of[q] = face;
    h->next[q] = h->f[face].head;
    h->f[face].head = q;
}

static uint32_t new_face(hull* h, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t g = h->free_n ? h->free_slots[--h->free_n] : (h->used < h->cap ? h->used++ : GEN_NONE);
    if (g == GEN_NONE) return g;
    hull_face* f = &h->f[g];
    f->v[0] = a, f->v[1] = b, f->v[2] = c;
    f->adj[0] = f->adj[1] = f->adj[2] = GEN_NONE;
    f->head = GEN_NONE;
    f->mark = 0;
    f->alive = 1;
    h->live++;
    return g;
}

/* Starts from a tetrahedron of extreme points and inserts the others in
 * `order`, keeping for every pending point one face it lies outside of
 * (Clarkson-Shor conflict lists). A point outside a deleted face and outside
 * the new hull is outside one of the new faces, so orphans only test those. */
static rtcd_error hull_build(hull* h, uint32_t* order, uint32_t* scratch)
{
    const int64_t* p = h->p;
    uint32_t n = h->n, t[4] = {0, 0, 0, 0};
    int64_t best = -1;
    for (uint32_t i = 1; i < n; ++i) {
        int64_t d = 0;
        for (int k = 0; k < 3; ++k) d += (p[3 * i + k] - p[k]) * (p[3 * i + k] - p[k]);
        if (d > best) best = d, t[1] = i;
    }
    double best_area = 0.0; /* squared cross product overflows int64: rank it in double */
    for (uint32_t i = 0; i < n; ++i) {
        double u[3], w[3];
        for (int k = 0; k < 3; ++k) u[k] = (double)(p[3 * t[1] + k] - p[k]), w[k] = (double)(p[3 * i + k] - p[k]);
        double c0 = u[1] * w[2] - u[2] * w[1], c1 = u[2] * w[0] - u[0] * w[2], c2 = u[0] * w[1] - u[1] * w[0];
        double a = c0 * c0 + c1 * c1 + c2 * c2;
        if (a > best_area) best_area = a, t[2] = i;
    }
    int64_t best_vol = 0;
    for (uint32_t i = 0; i < n; ++i) {
        int64_t o = orient4(p, t[0], t[1], t[2], i);
        if ((o < 0 ? -o : o) > best_vol) best_vol = o < 0 ? -o : o, t[3] = i;
    }
    if (best_vol == 0) return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: hull points are coplanar");
    if (orient4(p, t[0], t[1], t[2], t[3]) > 0) { /* make t3 lie below face t0 t1 t2 */
        uint32_t s = t[1];
        t[1] = t[2], t[2] = s;
    }
    static const int tet[4][3] = {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}};
    for (int i = 0; i < 4; ++i) new_face(h, t[tet[i][0]], t[tet[i][1]], t[tet[i][2]]);
    for (uint32_t a = 0; a < 4; ++a) /* link faces sharing a reversed edge */
        for (int e = 0; e < 3; ++e)
            for (uint32_t b = 0; b < 4; ++b)
                for (int k = 0; k < 3; ++k)
                    if (h->f[a].v[e] == h->f[b].v[(k + 1) % 3] && h->f[a].v[(e + 1) % 3] == h->f[b].v[k])
                        h->f[a].adj[e] = b;
    for (uint32_t i = 0; i < n; ++i) {
        h->face_of[i] = GEN_NONE;
        if (i == t[0] || i == t[1] || i == t[2] || i == t[3]) continue;
        for (uint32_t f = 0; f < 4 && h->face_of[i] == GEN_NONE; ++f)
            if (outside(h, f, i)) assign_point(h, f, i);
        if (h->face_of[i] == GEN_NONE)
            return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: point %u is inside the hull", i);
    }

    /* Scratch layout: visible faces, horizon (edge start, outer face, outer
     * edge), new faces, orphans, per-vertex new face starting there. */
    uint32_t *vis = scratch, *hz_a = vis + h->cap, *hz_n = hz_a + h->cap, *hz_k = hz_n + h->cap;
    uint32_t *made = hz_k + h->cap, *orphans = made + h->cap, *start = orphans + n;
    for (uint32_t i = 0; i < n; ++i) start[i] = GEN_NONE;
    uint32_t stamp = 0;
    for (uint32_t oi = 0; oi < n; ++oi) {
        uint32_t q = order[oi];
        if (q == t[0] || q == t[1] || q == t[2] || q == t[3]) continue;
        if (h->face_of[q] == GEN_NONE)
            return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: point %u is not on the hull", q);
        /* Visible faces: flood from the conflict face (they form a disk). */
        uint32_t nvis = 0, nhz = 0, norph = 0;
        ++stamp;
        vis[nvis++] = h->face_of[q];
        h->f[h->face_of[q]].mark = stamp;
        for (uint32_t i = 0; i < nvis; ++i)
            for (int e = 0; e < 3; ++e) {
                uint32_t g = h->f[vis[i]].adj[e];
                if (h->f[g].mark != stamp && outside(h, g, q)) {
                    h->f[g].mark = stamp;
                    vis[nvis++] = g;
                }
            }
        for (uint32_t i = 0; i < nvis; ++i) {
            hull_face* f = &h->f[vis[i]];
            for (int e = 0; e < 3; ++e) {
                uint32_t g = f->adj[e];
                if (h->f[g].mark == stamp) continue;
                int k = 0;
                while (k < 3 && h->f[g].adj[k] != vis[i]) ++k;
                if (k == 3 || nhz >= h->cap) return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: broken adjacency");
                hz_a[nhz] = e, hz_n[nhz] = g, hz_k[nhz] = (uint32_t)k, made[nhz] = vis[i];
                ++nhz;
            }
            for (uint32_t o = f->head; o != GEN_NONE; o = h->next[o])
                if (o != q) orphans[norph++] = o;
        }
        /* Replace the visible faces by a cone of new faces over the horizon. */
        for (uint32_t i = 0; i < nhz; ++i) { /* read the edges before the slots are reused */
            const hull_face* f = &h->f[made[i]];
            uint32_t e = hz_a[i];
            hz_a[i] = f->v[e];
            made[i] = f->v[(e + 1) % 3];
        }
        for (uint32_t i = 0; i < nvis; ++i) {
            h->f[vis[i]].alive = 0;
            h->free_slots[h->free_n++] = vis[i];
            h->live--;
        }
        for (uint32_t i = 0; i < nhz; ++i) {
            uint32_t g = new_face(h, hz_a[i], made[i], q);
            if (g == GEN_NONE || start[hz_a[i]] != GEN_NONE)
                return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: horizon of point %u is not a simple cycle", q);
            h->f[g].adj[0] = hz_n[i];
            h->f[hz_n[i]].adj[hz_k[i]] = g;
            start[hz_a[i]] = g;
            made[i] = g;
        }
        for (uint32_t i = 0; i < nhz; ++i) {
            hull_face* f = &h->f[made[i]];
            uint32_t g = start[f->v[1]];
            if (g == GEN_NONE)
                return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: horizon of point %u is open", q);
            f->adj[1] = g;
            h->f[g].adj[2] = made[i];
        }
        for (uint32_t i = 0; i < nhz; ++i) start[h->f[made[i]].v[0]] = GEN_NONE;
        for (uint32_t i = 0; i < norph; ++i) {
            uint32_t o = orphans[i];
            h->face_of[o] = GEN_NONE;
            for (uint32_t j = 0; j < nhz && h->face_of[o] == GEN_NONE; ++j)
                if (outside(h, made[j], o)) assign_point(h, made[j], o);
            if (h->face_of[o] == GEN_NONE)
                return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: point %u fell inside the hull", o);
        }
    }
    if (h->live != 2 * n - 4)
        return rtcd_fail(RTCD_ERROR_INTERNAL, "generate_blob: hull has %u faces, expected %u", h->live, 2 * n - 4);
    return RTCD_OK;
}

/* ---- blob ---- */

#define BLOB_BUMPS 14

static rtcd_error blob_fill(uint32_t n, float radius, uint64_t seed, rtcd_generated_mesh* out, int64_t* q,
                            double* dir, uint32_t* order, uint32_t* scratch, hull* h)
{
    uint64_t rng = seed ^ 0x5eedb10b5eedb10bull;
    /* Jittered Fibonacci lattice: well spread, and the jitter breaks the
     * lattice's near-cocircular quadruples. */
    const double golden_angle = GEN_PI * (3.0 - sqrt(5.0));
    const double jitter = 0.12 * sqrt(4.0 * GEN_PI / n);
    for (uint32_t i = 0; i < n; ++i) {
        double z = 1.0 - (2.0 * i + 1.0) / n, rr = sqrt(1.0 - z * z), s, c;
        gen_sincos(golden_angle * i, &s, &c);
        double v[3] = {rr * c, rr * s, z}, len2 = 0.0;
        for (int k = 0; k < 3; ++k) v[k] += rng_uniform(&rng, -jitter, jitter), len2 += v[k] * v[k];
        double inv = HULL_SCALE / sqrt(len2), qlen2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            q[3 * i + k] = (int64_t)floor(v[k] * inv + 0.5);
            qlen2 += (double)q[3 * i + k] * (double)q[3 * i + k];
        }
        for (int k = 0; k < 3; ++k) dir[3 * i + k] = (double)q[3 * i + k] / sqrt(qlen2);
        order[i] = i;
    }
    for (uint32_t i = n - 1; i > 0; --i) { /* random insertion order: expected O(n log n) */
        uint32_t j = (uint32_t)(rng_next(&rng) % (i + 1));
        uint32_t s = order[i];
        order[i] = order[j], order[j] = s;
    }
    h->p = q;
    rtcd_error err = hull_build(h, order, scratch);
    if (err != RTCD_OK) return err;

    /* Smooth compact bumps (C1 smoothstep of the cosine to each centre).
     * Amplitudes are scaled so that 0.4 * radius <= r <= 1.8 * radius. */
    double centre[BLOB_BUMPS][3], cos_w[BLOB_BUMPS], amp[BLOB_BUMPS], negative = 0.0, positive = 0.0;
    for (int b = 0; b < BLOB_BUMPS; ++b) {
        double len2;
        do {
            len2 = 0.0;
            for (int k = 0; k < 3; ++k) centre[b][k] = rng_uniform(&rng, -1.0, 1.0), len2 += centre[b][k] * centre[b][k];
        } while (len2 > 1.0 || len2 < 1e-6);
        for (int k = 0; k < 3; ++k) centre[b][k] /= sqrt(len2);
        double s;
        gen_sincos(rng_uniform(&rng, 0.30, 0.75), &s, &cos_w[b]); /* angular radius, rad */
        amp[b] = rng_uniform(&rng, -0.35, 0.45);
        if (amp[b] < 0.0) negative -= amp[b];
        else positive += amp[b];
    }
    double neg_scale = negative > 0.6 ? 0.6 / negative : 1.0, pos_scale = positive > 0.8 ? 0.8 / positive : 1.0;
    for (uint32_t i = 0; i < n; ++i) {
        const double* u = dir + 3 * i;
        double f = 1.0;
        for (int b = 0; b < BLOB_BUMPS; ++b) {
            double d = u[0] * centre[b][0] + u[1] * centre[b][1] + u[2] * centre[b][2];
            if (d <= cos_w[b]) continue;
            double t = (d - cos_w[b]) / (1.0 - cos_w[b]);
            f += amp[b] * (amp[b] < 0.0 ? neg_scale : pos_scale) * t * t * (3.0 - 2.0 * t);
        }
        double r = radius * f;
        set_vertex(out, i, u[0] * r, u[1] * r, u[2] * r);
    }
    uint32_t t = 0;
    for (uint32_t g = 0; g < h->used; ++g)
        if (h->f[g].alive) set_triangle(out, t++, h->f[g].v[0], h->f[g].v[1], h->f[g].v[2]);
    return RTCD_OK;
}

rtcd_error rtcd_generate_blob(uint32_t vertex_count, float radius, uint64_t seed, rtcd_generated_mesh* out)
{
    if (!out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_blob: out is NULL");
    memset(out, 0, sizeof *out);
    if (vertex_count < 4 || vertex_count > BLOB_MAX_VERTICES)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_blob: vertex_count %u is outside [4, %u]",
                         vertex_count, BLOB_MAX_VERTICES);
    if (!(radius > 0.0f) || !isfinite(radius))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_blob: radius %g is not positive and finite",
                         (double)radius);
    uint32_t n = vertex_count, cap = 2 * n - 4;
    rtcd_error err = alloc_output(n, cap, out);
    if (err != RTCD_OK) return err;
    hull h;
    memset(&h, 0, sizeof h);
    h.n = n;
    h.cap = cap;
    int64_t* q = rtcd_alloc((size_t)n * 3 * sizeof(int64_t));
    double* dir = rtcd_alloc((size_t)n * 3 * sizeof(double));
    uint32_t* ints = rtcd_alloc(((size_t)n * 5 + (size_t)cap * 6) * sizeof(uint32_t));
    h.f = rtcd_alloc((size_t)cap * sizeof(hull_face));
    if (!q || !dir || !ints || !h.f) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "generate_blob: cannot allocate hull for %u vertices", n);
    } else {
        h.free_slots = ints;
        h.next = ints + cap;
        h.face_of = h.next + n;
        uint32_t* order = h.face_of + n;
        err = blob_fill(n, radius, seed, out, q, dir, order, order + n, &h); /* scratch: 5 cap + 2 n */
    }
    rtcd_free(q);
    rtcd_free(dir);
    rtcd_free(ints);
    rtcd_free(h.f);
    if (err != RTCD_OK) rtcd_generated_free(out);
    return err;
}

/* ---- analytic shapes ---- */

rtcd_error rtcd_generate_uv_sphere(uint32_t rings, uint32_t segments, float radius, rtcd_generated_mesh* out)
{
    if (!out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_uv_sphere: out is NULL");
    memset(out, 0, sizeof *out);
    if (rings < 1 || segments < 3 || rings > 65536 || segments > 65536 || (uint64_t)rings * segments > (1u << 24))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                         "generate_uv_sphere: rings %u / segments %u invalid (rings >= 1, segments >= 3, "
                         "rings * segments <= 2^24)", rings, segments);
    if (!(radius > 0.0f) || !isfinite(radius))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_uv_sphere: radius %g is not positive and finite",
                         (double)radius);
    uint32_t vc = rings * segments + 2, south = vc - 1;
    rtcd_error err = alloc_output(vc, 2 * rings * segments, out);
    if (err != RTCD_OK) return err;
    set_vertex(out, 0, 0.0, 0.0, radius);
    set_vertex(out, south, 0.0, 0.0, -(double)radius);
    for (uint32_t i = 0; i < rings; ++i) {
        double st, ct;
        gen_sincos(GEN_PI * (i + 1) / (rings + 1), &st, &ct);
        for (uint32_t j = 0; j < segments; ++j) {
            double sp, cp;
            gen_sincos(2.0 * GEN_PI * j / segments, &sp, &cp);
            set_vertex(out, 1 + i * segments + j, radius * st * cp, radius * st * sp, radius * ct);
        }
    }
    uint32_t t = 0;
    for (uint32_t j = 0; j < segments; ++j) {
        uint32_t j1 = (j + 1) % segments;
        set_triangle(out, t++, 0, 1 + j, 1 + j1);
        for (uint32_t i = 0; i + 1 < rings; ++i) { /* upper ring i, lower ring i + 1 */
            uint32_t a = 1 + i * segments + j, b = 1 + i * segments + j1;
            uint32_t c = a + segments, d = b + segments;
            set_triangle(out, t++, a, c, d);
            set_triangle(out, t++, a, d, b);
        }
        set_triangle(out, t++, south, 1 + (rings - 1) * segments + j1, 1 + (rings - 1) * segments + j);
    }
    return RTCD_OK;
}

rtcd_error rtcd_generate_torus(float major_radius, float minor_radius, uint32_t major_segments,
                               uint32_t minor_segments, rtcd_generated_mesh* out)
{
    if (!out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_torus: out is NULL");
    memset(out, 0, sizeof *out);
    uint32_t n = major_segments, m = minor_segments;
    if (n < 3 || m < 3 || n > 65536 || m > 65536 || (uint64_t)n * m > (1u << 24))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                         "generate_torus: major_segments %u / minor_segments %u invalid (each >= 3, product <= 2^24)",
                         n, m);
    if (!(minor_radius > 0.0f) || !(major_radius > minor_radius) || !isfinite(major_radius))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                         "generate_torus: radii major %g, minor %g invalid (need major > minor > 0, finite)",
                         (double)major_radius, (double)minor_radius);
    rtcd_error err = alloc_output(n * m, 2 * n * m, out);
    if (err != RTCD_OK) return err;
    for (uint32_t i = 0; i < n; ++i) {
        double su, cu;
        gen_sincos(2.0 * GEN_PI * i / n, &su, &cu);
        for (uint32_t j = 0; j < m; ++j) {
            double sv, cv;
            gen_sincos(2.0 * GEN_PI * j / m, &sv, &cv);
            double rho = major_radius + minor_radius * cv;
            set_vertex(out, i * m + j, rho * cu, rho * su, minor_radius * sv);
        }
    }
    /* d/du x d/dv points outward, so (i,j) -> (i+1,j) -> (i+1,j+1) is counter-clockwise. */
    uint32_t t = 0;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = 0; j < m; ++j) {
            uint32_t i1 = (i + 1) % n, j1 = (j + 1) % m;
            uint32_t a = i * m + j, b = i1 * m + j, c = i1 * m + j1, d = i * m + j1;
            set_triangle(out, t++, a, b, c);
            set_triangle(out, t++, a, c, d);
        }
    return RTCD_OK;
}

/* Box surface points are the lattice points (i, j, k) in [0, s]^3 with some
 * coordinate 0 or s. They are numbered by a closed-form count of the surface
 * points before them in (i, j, k) lexicographic order, so faces share their
 * edge and corner vertices exactly (integer keys, no float welding). */
static uint32_t box_index(uint32_t s, uint32_t i, uint32_t j, uint32_t k)
{
    uint64_t plane = (uint64_t)(s + 1) * (s + 1), ring = 4ull * s; /* surface points per i-slice */
    uint64_t before_i = i == 0 ? 0 : plane + (uint64_t)(i - 1) * ring;
    if (i == 0 || i == s) return (uint32_t)(before_i + (uint64_t)j * (s + 1) + k);
    /* Interior slice: row j = 0 and j = s are full, rows between hold k = 0 and k = s. */
    if (j == 0) return (uint32_t)(before_i + k);
    if (j == s) return (uint32_t)(before_i + (s + 1) + 2ull * (s - 1) + k);
    return (uint32_t)(before_i + (s + 1) + 2ull * (j - 1) + (k == s));
}

rtcd_error rtcd_generate_box(const float half_extents[3], uint32_t subdivisions, rtcd_generated_mesh* out)
{
    if (!out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_box: out is NULL");
    memset(out, 0, sizeof *out);
    if (!half_extents) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_box: half_extents is NULL");
    for (int a = 0; a < 3; ++a)
        if (!(half_extents[a] > 0.0f) || !isfinite(half_extents[a]))
            return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_box: half_extents[%d] = %g is not positive and finite",
                             a, (double)half_extents[a]);
    uint32_t s = subdivisions;
    if (s < 1 || s > 1024)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "generate_box: subdivisions %u is outside [1, 1024]", s);
    rtcd_error err = alloc_output(6 * s * s + 2, 12 * s * s, out);
    if (err != RTCD_OK) return err;
    uint32_t t = 0;
    for (int axis = 0; axis < 3; ++axis)
        for (uint32_t side = 0; side < 2; ++side) {
            int ua = (axis + 1) % 3, va = (axis + 2) % 3; /* e_ua x e_va = e_axis */
            for (uint32_t u = 0; u <= s; ++u)
                for (uint32_t v = 0; v <= s; ++v) {
                    uint32_t l[3];
                    l[axis] = side * s, l[ua] = u, l[va] = v;
                    double pos[3];
                    for (int k = 0; k < 3; ++k) pos[k] = (double)half_extents[k] * (2.0 * l[k] - s) / s;
                    set_vertex(out, box_index(s, l[0], l[1], l[2]), pos[0], pos[1], pos[2]);
                    if (u == s || v == s) continue;
                    /* quad corners (u, v), (u+1, v), (u+1, v+1), (u, v+1) */
                    uint32_t c[4];
                    for (int corner = 0; corner < 4; ++corner) {
                        l[ua] = u + (corner == 1 || corner == 2);
                        l[va] = v + (corner >= 2);
                        c[corner] = box_index(s, l[0], l[1], l[2]);
                    }
                    if (side) { /* counter-clockwise in (ua, va) faces +axis */
                        set_triangle(out, t++, c[0], c[1], c[2]);
                        set_triangle(out, t++, c[0], c[2], c[3]);
                    } else {
                        set_triangle(out, t++, c[0], c[2], c[1]);
                        set_triangle(out, t++, c[0], c[3], c[2]);
                    }
                }
        }
    return RTCD_OK;
}
