/* Contact quality (issue 10), judged against analytic or brute-force
 * references, never against rtcd's own narrow phase:
 *
 * - throws at 10 and 30 m/s, blob at blob and blob at the plane: no
 *   tunnelling, penetration (rtcd_world_measure_penetration, every step)
 *   under 5 % of the blob's diameter; GImpact's outcome printed beside;
 * - a blob passing 2 cm beside another: no ghost contacts;
 * - two boxes crossed edge to edge with no vertex inside the other
 *   (edge_crossings): contacts along the edge-edge normal, and the world
 *   separates them;
 * - Hermann et al. Figure 9 (thin plates, 0.4 m and 0.6 m wide, deep in a
 *   block) and one box inside another (deep_contacts): contacts, and the
 *   world separates them within 1 s at under 2 m/s;
 * - speculative contacts (predictive algorithm): a positive distance never
 *   smaller than the true surface distance, and none when switched off.
 *
 * Sizes: the blob is the avalanche's generator (rtcd_generate_blob, 453
 * vertices, seed 1) at radius 0.35 m (about 0.9 m across); its "diameter" is
 * the largest distance between two of its vertices. Every world runs rtcd on
 * the CPU reference, one thread, zero gravity; the narrow-phase checks use
 * an rtcd_batch on the CPU reference (its reduced contacts). Several of these
 * fail until issue 10's contact processing is complete; that is intended.
 * RTCD_TEST_VERBOSE=1 traces the throws step by step. */
#include "test_util.h"

#include <rtcd/rtcd_batch.h>
#include <rtcd/rtcd_query.h>
#include <rtcd/rtcd_world.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_RADIUS 0.35f
#define BLOB_SEED 1u
#define DT (1.0f / 60.0f)

/* ---------------------------------------------------------------- vectors */

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void sub3(const double a[3], const double b[3], double out[3])
{
    for (int k = 0; k < 3; ++k) out[k] = a[k] - b[k];
}

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double norm3(const double a[3]) { return sqrt(dot3(a, a)); }

static double clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

static double angle_deg_f(const float a[3], const double b[3])
{
    double ad[3] = {a[0], a[1], a[2]};
    double c = dot3(ad, b) / (norm3(ad) * norm3(b));
    return acos(clampd(c, -1.0, 1.0)) * 180.0 / M_PI;
}

/* ------------------------------------------------------------- transforms */

static void xform_point(const rtcd_transform* t, const float p[3], float out[3])
{
    for (int i = 0; i < 3; ++i)
        out[i] = t->rotation[3 * i] * p[0] + t->rotation[3 * i + 1] * p[1] + t->rotation[3 * i + 2] * p[2] +
                 t->translation[i];
}

/* The point p (world) in t's local frame. */
static void inverse_xform_point(const rtcd_transform* t, const float p[3], float out[3])
{
    float d[3] = {p[0] - t->translation[0], p[1] - t->translation[1], p[2] - t->translation[2]};
    for (int i = 0; i < 3; ++i)
        out[i] = t->rotation[i] * d[0] + t->rotation[3 + i] * d[1] + t->rotation[6 + i] * d[2];
}

/* a o b: first b, then a. */
static rtcd_transform compose(const rtcd_transform* a, const rtcd_transform* b)
{
    rtcd_transform r;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            float s = 0.0f;
            for (int k = 0; k < 3; ++k) s += a->rotation[3 * i + k] * b->rotation[3 * k + j];
            r.rotation[3 * i + j] = s;
        }
        r.translation[i] = a->rotation[3 * i] * b->translation[0] + a->rotation[3 * i + 1] * b->translation[1] +
                           a->rotation[3 * i + 2] * b->translation[2] + a->translation[i];
    }
    return r;
}

/* Rotation of angle_deg about coordinate axis `axis` (0 x, 1 y, 2 z), then a translation. */
static rtcd_transform axis_pose(int axis, float angle_deg, float x, float y, float z)
{
    float half = 0.5f * angle_deg * (float)M_PI / 180.0f;
    float q[4] = {0, 0, 0, cosf(half)};
    q[axis] = sinf(half);
    float t[3] = {x, y, z};
    return rtcd_transform_from_quat(q, t);
}

/* ------------------------------------------------------------------ meshes */

static rtcd_mesh* make_blob(void) { return test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, BLOB_RADIUS, BLOB_SEED); }

/* A closed 12-triangle box centred at the origin, built by hand, outward
 * counter-clockwise winding. Vertex i has the sign bits x: 1, y: 2, z: 4. */
static rtcd_mesh* make_box_mesh(float hx, float hy, float hz, const char* name)
{
    float v[24];
    for (int i = 0; i < 8; ++i) {
        v[3 * i] = (i & 1) ? hx : -hx;
        v[3 * i + 1] = (i & 2) ? hy : -hy;
        v[3 * i + 2] = (i & 4) ? hz : -hz;
    }
    static const uint32_t tri[36] = {
        0, 2, 1, 1, 2, 3, /* -z */
        4, 5, 6, 5, 7, 6, /* +z */
        0, 1, 4, 1, 5, 4, /* -y */
        2, 6, 3, 3, 6, 7, /* +y */
        0, 4, 2, 2, 4, 6, /* -x */
        1, 3, 5, 3, 7, 5, /* +x */
    };
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v;
    def.vertex_count = 8;
    def.indices = tri;
    def.triangle_count = 12;
    def.name = name;
    rtcd_mesh* mesh = NULL;
    rtcd_error err = rtcd_mesh_create(&def, &mesh);
    if (err != RTCD_OK) print_error("%s: %s: %s\n", name, rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    return mesh;
}

/* Largest distance between two vertices. */
static float mesh_diameter(const rtcd_mesh* m)
{
    const float* v = rtcd_mesh_vertices(m);
    uint32_t n = rtcd_mesh_vertex_count(m);
    double best = 0.0;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = i + 1; j < n; ++j) {
            double dx = v[3 * i] - v[3 * j], dy = v[3 * i + 1] - v[3 * j + 1], dz = v[3 * i + 2] - v[3 * j + 2];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 > best) best = d2;
        }
    return (float)sqrt(best);
}

/* A mesh placed in the world: vertices, triangles, edges (each undirected
 * edge once), with boxes for pruning. */
typedef struct wmesh {
    uint32_t nv, nt, ne;
    double* v;
    const uint32_t* tri;
    uint32_t* edge;
    double lo[3], hi[3];
} wmesh;

static wmesh wmesh_make(const rtcd_mesh* m, const rtcd_transform* pose)
{
    wmesh w;
    w.nv = rtcd_mesh_vertex_count(m);
    w.nt = rtcd_mesh_triangle_count(m);
    w.tri = rtcd_mesh_indices(m);
    w.v = malloc(3 * (size_t)w.nv * sizeof *w.v);
    w.edge = malloc(3 * (size_t)w.nt * 2 * sizeof *w.edge);
    assert_non_null(w.v);
    assert_non_null(w.edge);
    const float* src = rtcd_mesh_vertices(m);
    for (int k = 0; k < 3; ++k) w.lo[k] = DBL_MAX, w.hi[k] = -DBL_MAX;
    for (uint32_t i = 0; i < w.nv; ++i) {
        float p[3];
        xform_point(pose, src + 3 * i, p);
        for (int k = 0; k < 3; ++k) {
            w.v[3 * i + k] = p[k];
            w.lo[k] = fmin(w.lo[k], p[k]);
            w.hi[k] = fmax(w.hi[k], p[k]);
        }
    }
    /* Closed and consistently oriented: every edge appears once as a->b with a < b. */
    w.ne = 0;
    for (uint32_t t = 0; t < w.nt; ++t)
        for (int e = 0; e < 3; ++e) {
            uint32_t a = w.tri[3 * t + e], b = w.tri[3 * t + (e + 1) % 3];
            if (a < b) {
                w.edge[2 * w.ne] = a;
                w.edge[2 * w.ne + 1] = b;
                w.ne++;
            }
        }
    return w;
}

static void wmesh_free(wmesh* w)
{
    free(w->v);
    free(w->edge);
}

static const double* wv(const wmesh* w, uint32_t i) { return w->v + 3 * i; }

static double boxes_dist2(const double alo[3], const double ahi[3], const double blo[3], const double bhi[3])
{
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        double d = fmax(0.0, fmax(blo[k] - ahi[k], alo[k] - bhi[k]));
        d2 += d * d;
    }
    return d2;
}

/* Squared distance from p to the box [lo, hi]: the box [p, p]'s. */
static double box_dist2(const double p[3], const double lo[3], const double hi[3]) { return boxes_dist2(p, p, lo, hi); }

/* Ericson, Real-Time Collision Detection 5.1.5. */
static double point_triangle_dist2(const double p[3], const double a[3], const double b[3], const double c[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3], q[3], d[3];
    sub3(b, a, ab), sub3(c, a, ac), sub3(p, a, ap);
    double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
    if (d1 <= 0 && d2 <= 0) return dot3(ap, ap);
    sub3(p, b, bp);
    double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    if (d3 >= 0 && d4 <= d3) return dot3(bp, bp);
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        double t = d1 / (d1 - d3);
        for (int k = 0; k < 3; ++k) q[k] = a[k] + t * ab[k];
        sub3(p, q, d);
        return dot3(d, d);
    }
    sub3(p, c, cp);
    double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d6 >= 0 && d5 <= d6) return dot3(cp, cp);
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        double t = d2 / (d2 - d6);
        for (int k = 0; k < 3; ++k) q[k] = a[k] + t * ac[k];
        sub3(p, q, d);
        return dot3(d, d);
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; ++k) q[k] = b[k] + t * (c[k] - b[k]);
        sub3(p, q, d);
        return dot3(d, d);
    }
    double den = 1.0 / (va + vb + vc), v = vb * den, w = vc * den;
    for (int k = 0; k < 3; ++k) q[k] = a[k] + ab[k] * v + ac[k] * w;
    sub3(p, q, d);
    return dot3(d, d);
}

/* Ericson 5.1.9, non-degenerate segments. */
static double segment_segment_dist2(const double p1[3], const double q1[3], const double p2[3], const double q2[3])
{
    double d1[3], d2[3], r[3];
    sub3(q1, p1, d1), sub3(q2, p2, d2), sub3(p1, p2, r);
    double a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r), c = dot3(d1, r), b = dot3(d1, d2);
    double den = a * e - b * b, s = den > 1e-18 ? clampd((b * f - c * e) / den, 0, 1) : 0.0;
    double t = (b * s + f) / e;
    if (t < 0) {
        t = 0;
        s = clampd(-c / a, 0, 1);
    } else if (t > 1) {
        t = 1;
        s = clampd((b - c) / a, 0, 1);
    }
    double x[3];
    for (int k = 0; k < 3; ++k) x[k] = (p1[k] + d1[k] * s) - (p2[k] + d2[k] * t);
    return dot3(x, x);
}

static void tri_box(const wmesh* w, uint32_t t, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; ++k) {
        double a = wv(w, w->tri[3 * t])[k], b = wv(w, w->tri[3 * t + 1])[k], c = wv(w, w->tri[3 * t + 2])[k];
        lo[k] = fmin(a, fmin(b, c));
        hi[k] = fmax(a, fmax(b, c));
    }
}

static void edge_box(const wmesh* w, uint32_t e, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; ++k) {
        double a = wv(w, w->edge[2 * e])[k], b = wv(w, w->edge[2 * e + 1])[k];
        lo[k] = fmin(a, b);
        hi[k] = fmax(a, b);
    }
}

static void vertex_triangle_pass(const wmesh* a, const wmesh* b, double* best2)
{
    for (uint32_t i = 0; i < a->nv; ++i) {
        const double* p = wv(a, i);
        if (box_dist2(p, b->lo, b->hi) > *best2) continue;
        for (uint32_t t = 0; t < b->nt; ++t) {
            double lo[3], hi[3];
            tri_box(b, t, lo, hi);
            if (box_dist2(p, lo, hi) > *best2) continue;
            double d2 = point_triangle_dist2(p, wv(b, b->tri[3 * t]), wv(b, b->tri[3 * t + 1]), wv(b, b->tri[3 * t + 2]));
            if (d2 < *best2) *best2 = d2;
        }
    }
}

/* Exact distance between the surfaces of two separated meshes, brute force:
 * the minimum over vertex-triangle pairs (both ways) and edge-edge pairs. */
static double mesh_distance(const wmesh* a, const wmesh* b)
{
    double best2 = DBL_MAX;
    for (uint32_t i = 0; i < a->nv; ++i)
        for (uint32_t j = 0; j < b->nv; ++j) {
            double d[3];
            sub3(wv(a, i), wv(b, j), d);
            best2 = fmin(best2, dot3(d, d));
        }
    vertex_triangle_pass(a, b, &best2);
    vertex_triangle_pass(b, a, &best2);
    for (uint32_t e = 0; e < a->ne; ++e) {
        double alo[3], ahi[3];
        edge_box(a, e, alo, ahi);
        if (boxes_dist2(alo, ahi, b->lo, b->hi) > best2) continue;
        for (uint32_t f = 0; f < b->ne; ++f) {
            double blo[3], bhi[3];
            edge_box(b, f, blo, bhi);
            if (boxes_dist2(alo, ahi, blo, bhi) > best2) continue;
            double d2 = segment_segment_dist2(wv(a, a->edge[2 * e]), wv(a, a->edge[2 * e + 1]), wv(b, b->edge[2 * f]),
                                              wv(b, b->edge[2 * f + 1]));
            if (d2 < best2) best2 = d2;
        }
    }
    return sqrt(best2);
}

/* 2-D distance from point p to segment ab in the (u, v) coordinates. */
static double point_segment_dist2_2d(const double* p, const double* a, const double* b, int u, int v)
{
    double abu = b[u] - a[u], abv = b[v] - a[v], apu = p[u] - a[u], apv = p[v] - a[v];
    double len2 = abu * abu + abv * abv;
    double t = len2 > 0 ? clampd((apu * abu + apv * abv) / len2, 0, 1) : 0.0;
    double du = apu - t * abu, dv = apv - t * abv;
    return du * du + dv * dv;
}

/* Distance between the shadows of two meshes on the (u, v) plane (disjoint
 * shadows: attained at a vertex of one and an edge of the other). With one
 * mesh sliding along the third axis this is their distance at closest
 * approach. */
static double shadow_distance(const wmesh* a, const wmesh* b, int u, int v)
{
    double best2 = DBL_MAX;
    for (int pass = 0; pass < 2; ++pass) {
        const wmesh* p = pass ? b : a;
        const wmesh* q = pass ? a : b;
        for (uint32_t i = 0; i < p->nv; ++i)
            for (uint32_t e = 0; e < q->ne; ++e) {
                double d2 = point_segment_dist2_2d(wv(p, i), wv(q, q->edge[2 * e]), wv(q, q->edge[2 * e + 1]), u, v);
                if (d2 < best2) best2 = d2;
            }
    }
    return sqrt(best2);
}

static double det3(const double a[3], const double b[3], const double c[3])
{
    double bc[3];
    cross3(b, c, bc);
    return dot3(a, bc);
}

/* Moller-Trumbore: t >= 0 where o + t d meets triangle (v0, v1, v2), or DBL_MAX. */
static double ray_triangle(const double o[3], const double d[3], const double v0[3], const double v1[3],
                           const double v2[3])
{
    double e1[3], e2[3], p[3], s[3], q[3];
    sub3(v1, v0, e1), sub3(v2, v0, e2);
    cross3(d, e2, p);
    double det = dot3(e1, p);
    if (fabs(det) < 1e-18) return DBL_MAX;
    double inv = 1.0 / det;
    sub3(o, v0, s);
    double u = dot3(s, p) * inv;
    if (u < 0.0 || u > 1.0) return DBL_MAX;
    cross3(s, e1, q);
    double v = dot3(d, q) * inv;
    if (v < 0.0 || u + v > 1.0) return DBL_MAX;
    double t = dot3(e2, q) * inv;
    return t >= 0.0 ? t : DBL_MAX;
}

/* How far `a` can move along the unit direction d before its surface
 * touches b's (brute force: vertices of a against triangles of b, vertices
 * of b backwards against triangles of a, edges against edges); DBL_MAX when
 * never. The two must be apart. */
static double sweep_distance(const wmesh* a, const wmesh* b, const double d[3])
{
    double best = DBL_MAX, back[3] = {-d[0], -d[1], -d[2]};
    for (int pass = 0; pass < 2; ++pass) {
        const wmesh* p = pass ? b : a;
        const wmesh* q = pass ? a : b;
        const double* dir = pass ? back : d;
        for (uint32_t i = 0; i < p->nv; ++i)
            for (uint32_t t = 0; t < q->nt; ++t)
                best = fmin(best, ray_triangle(wv(p, i), dir, wv(q, q->tri[3 * t]), wv(q, q->tri[3 * t + 1]),
                                               wv(q, q->tri[3 * t + 2])));
    }
    /* p + s u + l d = r + t w: s u - t w + l d = r - p (Cramer). */
    for (uint32_t e = 0; e < a->ne; ++e) {
        const double* p0 = wv(a, a->edge[2 * e]);
        double u[3];
        sub3(wv(a, a->edge[2 * e + 1]), p0, u);
        for (uint32_t f = 0; f < b->ne; ++f) {
            const double* r0 = wv(b, b->edge[2 * f]);
            double w[3], mw[3], rhs[3];
            sub3(wv(b, b->edge[2 * f + 1]), r0, w);
            for (int k = 0; k < 3; ++k) mw[k] = -w[k];
            sub3(r0, p0, rhs);
            double det = det3(u, mw, d);
            if (fabs(det) < 1e-14) continue;
            double sp = det3(rhs, mw, d) / det, tq = det3(u, rhs, d) / det, l = det3(u, mw, rhs) / det;
            if (sp >= 0.0 && sp <= 1.0 && tq >= 0.0 && tq <= 1.0 && l >= 0.0) best = fmin(best, l);
        }
    }
    return best;
}

/* Separating-axis test of two convex meshes over their face normals and
 * the cross products of their edges: the smallest overlap over those axes,
 * which for convex polyhedra is the penetration depth (> 0) or minus a
 * separating distance (<= 0 separated). axis_out: the axis, pointing from
 * b to a. */
static double sat_overlap(const wmesh* a, const wmesh* b, double axis_out[3])
{
    double best = DBL_MAX;
    const wmesh* m[2] = {a, b};
    uint32_t nfaces = a->nt + b->nt, naxes = nfaces + a->ne * b->ne;
    for (uint32_t k = 0; k < naxes; ++k) {
        double n[3];
        if (k < nfaces) {
            const wmesh* w = k < a->nt ? a : b;
            uint32_t t = k < a->nt ? k : k - a->nt;
            double e1[3], e2[3];
            sub3(wv(w, w->tri[3 * t + 1]), wv(w, w->tri[3 * t]), e1);
            sub3(wv(w, w->tri[3 * t + 2]), wv(w, w->tri[3 * t]), e2);
            cross3(e1, e2, n);
        } else {
            uint32_t e = (k - nfaces) / b->ne, f = (k - nfaces) % b->ne;
            double d1[3], d2[3];
            sub3(wv(a, a->edge[2 * e + 1]), wv(a, a->edge[2 * e]), d1);
            sub3(wv(b, b->edge[2 * f + 1]), wv(b, b->edge[2 * f]), d2);
            cross3(d1, d2, n);
            if (norm3(n) < 1e-6 * norm3(d1) * norm3(d2)) continue; /* parallel edges */
        }
        double len = norm3(n);
        for (int c = 0; c < 3; ++c) n[c] /= len;
        double lo[2] = {DBL_MAX, DBL_MAX}, hi[2] = {-DBL_MAX, -DBL_MAX};
        for (int s = 0; s < 2; ++s)
            for (uint32_t i = 0; i < m[s]->nv; ++i) {
                double d = dot3(wv(m[s], i), n);
                lo[s] = fmin(lo[s], d);
                hi[s] = fmax(hi[s], d);
            }
        double push_a_up = hi[1] - lo[0], push_a_down = hi[0] - lo[1]; /* move a along +n / -n */
        double overlap = fmin(push_a_up, push_a_down);
        if (overlap < best) {
            best = overlap;
            double sign = push_a_up <= push_a_down ? 1.0 : -1.0;
            for (int c = 0; c < 3; ++c) axis_out[c] = sign * n[c];
        }
    }
    return best;
}

/* Vertices of `a` (placed by pose_a) inside `b` (placed by pose_b), with rtcd's point-in-mesh query. */
static uint32_t vertices_inside(const rtcd_mesh* a, const rtcd_transform* pose_a, const rtcd_mesh* b,
                                const rtcd_transform* pose_b)
{
    uint32_t n = 0;
    const float* v = rtcd_mesh_vertices(a);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(a); ++i) {
        float w[3], local[3];
        xform_point(pose_a, v + 3 * i, w);
        inverse_xform_point(pose_b, w, local);
        n += (uint32_t)rtcd_mesh_contains_point(b, local);
    }
    return n;
}

/* ------------------------------------------------------------ narrow phase */

static rtcd_batch* make_batch(rtcd_narrowphase_def def)
{
    def.backend = RTCD_BACKEND_CPU;
    def.threads = 1;
    rtcd_batch* batch = NULL;
    assert_int_equal(rtcd_batch_create(&def, &batch), RTCD_OK);
    return batch;
}

static rtcd_pair_result collide_pair(rtcd_batch* batch, const rtcd_mesh* a, const rtcd_transform* pa,
                                     const rtcd_mesh* b, const rtcd_transform* pb, uint64_t key, float motion)
{
    rtcd_pair_desc d;
    memset(&d, 0, sizeof d);
    d.a = a, d.b = b, d.pose_a = *pa, d.pose_b = *pb, d.key = key, d.motion = motion;
    rtcd_pair_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(rtcd_batch_collide(batch, &d, 1, &r, NULL), RTCD_OK);
    return r;
}

/* One fresh call with `def` on the CPU reference. */
static rtcd_pair_result collide_fresh(const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_transform* pa,
                                      const rtcd_mesh* b, const rtcd_transform* pb)
{
    rtcd_batch* batch = make_batch(*def);
    rtcd_pair_result r = collide_pair(batch, a, pa, b, pb, 1, 0.0f);
    rtcd_batch_release(batch);
    return r;
}

static void print_contacts(const char* label, const rtcd_pair_result* r)
{
    print_message("%s: %u contact(s), %u colliding rays\n", label, r->contact_count, r->colliding_rays);
    for (uint32_t i = 0; i < r->contact_count; ++i) {
        const rtcd_contact* c = &r->contacts[i];
        print_message("  point (%.4f %.4f %.4f) normal (%.3f %.3f %.3f) depth %.5f\n", c->point_on_b[0],
                      c->point_on_b[1], c->point_on_b[2], c->normal_on_b[0], c->normal_on_b[1], c->normal_on_b[2],
                      c->depth);
    }
}

/* ------------------------------------------------------------------ worlds */

static rtcd_world* make_world(rtcd_narrowphase_kind kind)
{
    rtcd_world_def def = rtcd_default_world_def();
    def.gravity[0] = def.gravity[1] = def.gravity[2] = 0.0f;
    def.narrowphase_kind = kind;
    def.narrowphase.backend = RTCD_BACKEND_CPU;
    def.narrowphase.threads = 1;
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&def, &w), RTCD_OK);
    return w;
}

static rtcd_shape* make_shape(rtcd_world* w, rtcd_mesh* mesh)
{
    rtcd_shape* s = NULL;
    assert_int_equal(rtcd_shape_create(w, mesh, &s), RTCD_OK);
    return s;
}

/* A body whose mesh (in its own coordinates) sits at mesh_pose: the body
 * (principal) frame is mesh_pose o frame. Returns the body pose too. */
static uint32_t add_mesh_at(rtcd_world* w, rtcd_shape* s, float mass, const rtcd_transform* mesh_pose,
                            rtcd_transform* body_pose)
{
    rtcd_transform frame = rtcd_shape_frame(s);
    rtcd_transform bp = compose(mesh_pose, &frame);
    uint32_t id;
    assert_int_equal(rtcd_world_add_body(w, s, mass, &bp, &id), RTCD_OK);
    if (body_pose) *body_pose = bp;
    return id;
}

static uint32_t add_body_at(rtcd_world* w, rtcd_shape* s, float mass, const rtcd_transform* body_pose)
{
    uint32_t id;
    assert_int_equal(rtcd_world_add_body(w, s, mass, body_pose, &id), RTCD_OK);
    return id;
}

static rtcd_transform body_pose(const rtcd_world* w, uint32_t b)
{
    rtcd_transform t;
    assert_int_equal(rtcd_world_get_pose(w, b, &t), RTCD_OK);
    return t;
}

static void body_velocity(const rtcd_world* w, uint32_t b, float v[3])
{
    float ang[3];
    assert_int_equal(rtcd_world_get_velocity(w, b, v, ang), RTCD_OK);
}

static float body_speed(const rtcd_world* w, uint32_t b)
{
    float v[3];
    body_velocity(w, b, v);
    return sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static rtcd_penetration measure(const rtcd_world* w)
{
    rtcd_penetration p;
    assert_int_equal(rtcd_world_measure_penetration(w, &p), RTCD_OK);
    return p;
}

static const char* kind_name(rtcd_narrowphase_kind kind)
{
    return kind == RTCD_NARROWPHASE_GIMPACT ? "gimpact" : (kind == RTCD_NARROWPHASE_HULL ? "hull" : "rtcd");
}

/* ================================================================= 1. throws */

typedef struct throw_outcome {
    float max_penetration; /* m, the ruler's maximum over every step */
    /* The thrown blob's centre reached the far side of the target's centre
     * plane (normal to the throw) while within half a diameter of the
     * target's centre across the throw (so through it, not deflected past
     * it); for the plane: its centre went below the plane. */
    int tunnelled;
    int first_tunnel_step;
    /* At the end: closing speed along the line from the thrown blob's centre
     * to the target's (the plane: along the throw); <= 0 stopped or reversed. */
    float final_approach;
    float diameter;
} throw_outcome;

#define THROW_STEPS 45 /* 0.75 s */
/* The throw covers this far before the surfaces meet: 6 steps at 10 m/s and
 * 2 at 30 m/s leave 3 cm, so the impact falls inside a step (not on a step
 * boundary, where a bare touch would be found in time by any algorithm). */
#define THROW_DISTANCE 1.03f

/* A blob thrown along +x at a resting blob of equal mass, or down at the
 * plane z = 0, THROW_DISTANCE before first contact (brute-force sweep). */
static throw_outcome throw_blob(rtcd_narrowphase_kind kind, int at_plane, float speed)
{
    throw_outcome out = {0.0f, 0, -1, 0.0f, 0.0f};
    rtcd_world* w = make_world(kind);
    rtcd_mesh* blob = make_blob();
    rtcd_shape* shape = make_shape(w, blob);
    rtcd_mesh_release(blob);
    const rtcd_mesh* body = rtcd_shape_body_mesh(shape);
    out.diameter = mesh_diameter(body);
    float lo[3], hi[3];
    rtcd_mesh_bounds(body, lo, hi);
    rtcd_transform pa = rtcd_transform_identity(), pb = rtcd_transform_identity();
    float dir[3] = {0, 0, 0};
    uint32_t a, b = 0;
    if (at_plane) {
        float up[3] = {0, 0, 1};
        assert_int_equal(rtcd_world_add_plane(w, up, 0.0f), RTCD_OK);
        pa.translation[2] = THROW_DISTANCE - lo[2];
        dir[2] = -1.0f;
        a = add_body_at(w, shape, 1.0f, &pa);
    } else {
        /* Body frames, identity rotations, centres on the x axis. */
        pb.translation[0] = hi[0] - lo[0] + THROW_DISTANCE;
        wmesh wa = wmesh_make(body, &pa), wb = wmesh_make(body, &pb);
        double dx[3] = {1, 0, 0};
        double sweep = sweep_distance(&wa, &wb, dx);
        wmesh_free(&wa);
        wmesh_free(&wb);
        assert_true(sweep < 10.0);
        pb.translation[0] += (float)(THROW_DISTANCE - sweep); /* the sweep is linear in the offset */
        wb = wmesh_make(body, &pb);
        wa = wmesh_make(body, &pa);
        sweep = sweep_distance(&wa, &wb, dx);
        wmesh_free(&wa);
        wmesh_free(&wb);
        assert_true(fabs(sweep - THROW_DISTANCE) < 1e-4);
        dir[0] = 1.0f;
        a = add_body_at(w, shape, 1.0f, &pa);
        b = add_body_at(w, shape, 1.0f, &pb);
    }
    float v0[3] = {speed * dir[0], speed * dir[1], speed * dir[2]}, zero[3] = {0, 0, 0};
    assert_int_equal(rtcd_world_set_velocity(w, a, v0, zero), RTCD_OK);
    for (int step = 1; step <= THROW_STEPS; ++step) {
        assert_int_equal(rtcd_world_step(w), RTCD_OK);
        rtcd_penetration p = measure(w);
        out.max_penetration = fmaxf(out.max_penetration, p.max);
        rtcd_transform ta = body_pose(w, a);
        int passed;
        if (at_plane) {
            passed = ta.translation[2] <= 0.0f;
        } else {
            rtcd_transform tb = body_pose(w, b);
            float ahead = ta.translation[0] - tb.translation[0];
            float across = hypotf(ta.translation[1] - tb.translation[1], ta.translation[2] - tb.translation[2]);
            passed = ahead >= 0.0f && across < 0.5f * out.diameter;
        }
        if (passed && !out.tunnelled) out.tunnelled = 1, out.first_tunnel_step = step;
        if (getenv("RTCD_TEST_VERBOSE")) {
            float va[3];
            body_velocity(w, a, va);
            rtcd_transform tb = at_plane ? pb : body_pose(w, b);
            print_message("  %s step %d: a at (%.3f %.3f %.3f) v (%.2f %.2f %.2f), b at (%.3f %.3f %.3f), "
                          "penetration %.4f (%u vertices)\n",
                          kind_name(kind), step, (double)ta.translation[0], (double)ta.translation[1],
                          (double)ta.translation[2], (double)va[0], (double)va[1], (double)va[2],
                          (double)tb.translation[0], (double)tb.translation[1], (double)tb.translation[2],
                          (double)p.max, p.vertices_inside);
        }
    }
    float va[3], vb[3] = {0, 0, 0}, line[3] = {dir[0], dir[1], dir[2]};
    body_velocity(w, a, va);
    if (!at_plane) {
        body_velocity(w, b, vb);
        rtcd_transform ta = body_pose(w, a), tb = body_pose(w, b);
        float len = 0.0f;
        for (int k = 0; k < 3; ++k) line[k] = tb.translation[k] - ta.translation[k], len += line[k] * line[k];
        for (int k = 0; k < 3; ++k) line[k] /= sqrtf(len);
    }
    out.final_approach = (va[0] - vb[0]) * line[0] + (va[1] - vb[1]) * line[1] + (va[2] - vb[2]) * line[2];
    rtcd_shape_release(shape);
    rtcd_world_release(w);
    return out;
}

static int report_throw(rtcd_narrowphase_kind kind, int at_plane, float speed, int assert_it)
{
    throw_outcome o = throw_blob(kind, at_plane, speed);
    float limit = 0.05f * o.diameter;
    int ok = !o.tunnelled && o.final_approach <= 0.1f * speed && o.max_penetration < limit;
    print_message("%-7s blob -> %-5s %4.0f m/s: max penetration %.4f m (%.1f %% of diameter %.3f m, limit %.4f), "
                  "tunnelled %s (step %d), final closing speed %.3f m/s%s\n",
                  kind_name(kind), at_plane ? "plane" : "blob", (double)speed, (double)o.max_penetration,
                  100.0 * o.max_penetration / o.diameter, (double)o.diameter, (double)limit,
                  o.tunnelled ? "YES" : "no", o.first_tunnel_step, (double)o.final_approach,
                  assert_it ? (ok ? "  [ok]" : "  [FAIL]") : "  (reported only)");
    return ok;
}

static void throws(int at_plane)
{
    const float speeds[2] = {10.0f, 30.0f};
    int ok = 1;
    for (int i = 0; i < 2; ++i) ok &= report_throw(RTCD_NARROWPHASE_RTCD, at_plane, speeds[i], 1);
    for (int i = 0; i < 2; ++i) (void)report_throw(RTCD_NARROWPHASE_GIMPACT, at_plane, speeds[i], 0);
    /* rtcd: never through, stopped, and under 5 % of the diameter deep. */
    assert_true(ok);
}

/* A blob thrown at a resting blob of equal mass at 10 and 30 m/s. */
static void test_throw_blob_at_blob(void** state)
{
    (void)state;
    throws(0);
}

/* A blob thrown at the ground plane at 10 and 30 m/s. */
static void test_throw_blob_at_plane(void** state)
{
    (void)state;
    throws(1);
}

/* =========================================================== 2. ghost contacts */

typedef struct pass_run {
    float* x; /* 3 per step: the moving blob's centre */
    float other_moved;
    float max_penetration;
    float max_angular;
    double min_distance; /* lone run: closest surface distance to where the other blob would be, over the steps */
} pass_run;

static pass_run run_pass(rtcd_mesh* blob, int with_other, int speculative, float y_offset, float x_start,
                         float x_other, int steps, float speed)
{
    pass_run r = {malloc(3 * (size_t)steps * sizeof(float)), 0.0f, 0.0f, 0.0f, DBL_MAX};
    assert_non_null(r.x);
    rtcd_world_def def = rtcd_default_world_def();
    def.gravity[0] = def.gravity[1] = def.gravity[2] = 0.0f;
    def.narrowphase.backend = RTCD_BACKEND_CPU;
    def.narrowphase.threads = 1;
    def.narrowphase.speculative = speculative;
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&def, &w), RTCD_OK);
    rtcd_shape* shape = make_shape(w, blob);
    const rtcd_mesh* body = rtcd_shape_body_mesh(shape);
    rtcd_transform pa = rtcd_transform_identity(), pb = rtcd_transform_identity();
    pa.translation[0] = x_start;
    pb.translation[0] = x_other;
    pb.translation[1] = y_offset;
    uint32_t a = add_body_at(w, shape, 1.0f, &pa), b = 0;
    if (with_other) b = add_body_at(w, shape, 1.0f, &pb);
    float v[3] = {speed, 0, 0}, zero[3] = {0, 0, 0};
    assert_int_equal(rtcd_world_set_velocity(w, a, v, zero), RTCD_OK);
    for (int step = 0; step < steps; ++step) {
        assert_int_equal(rtcd_world_step(w), RTCD_OK);
        rtcd_penetration p = measure(w);
        r.max_penetration = fmaxf(r.max_penetration, p.max);
        rtcd_transform t = body_pose(w, a);
        memcpy(r.x + 3 * step, t.translation, sizeof t.translation);
        if (!with_other) {
            wmesh wa = wmesh_make(body, &t), wb = wmesh_make(body, &pb);
            r.min_distance = fmin(r.min_distance, mesh_distance(&wa, &wb));
            wmesh_free(&wa);
            wmesh_free(&wb);
        }
        float lin[3], ang[3];
        assert_int_equal(rtcd_world_get_velocity(w, a, lin, ang), RTCD_OK);
        r.max_angular = fmaxf(r.max_angular, sqrtf(ang[0] * ang[0] + ang[1] * ang[1] + ang[2] * ang[2]));
        if (with_other) {
            rtcd_transform tb = body_pose(w, b);
            float d = 0.0f;
            for (int k = 0; k < 3; ++k) d += (tb.translation[k] - pb.translation[k]) * (tb.translation[k] - pb.translation[k]);
            r.other_moved = fmaxf(r.other_moved, sqrtf(d));
        }
    }
    rtcd_shape_release(shape);
    rtcd_world_release(w);
    return r;
}

/* A blob at 3 m/s along x passes a resting blob whose surface is 2 cm away
 * at closest approach (the distance between the two blobs' shadows on the
 * y-z plane, brute force). Nothing touches, so the run must equal the run
 * without the other blob: no ghost contacts, speculative or otherwise. */
static void test_no_ghost_contacts_passing_by(void** state)
{
    (void)state;
    const float speed = 3.0f, gap = 0.02f;
    rtcd_world* probe = make_world(RTCD_NARROWPHASE_RTCD);
    rtcd_mesh* raw = make_blob();
    rtcd_shape* probe_shape = make_shape(probe, raw);
    /* The body mesh (principal frame) is what the world places by body
     * poses: the geometry is computed on it (every world below builds the
     * same one from `raw`). */
    const rtcd_mesh* body = rtcd_shape_body_mesh(probe_shape);

    float lo[3], hi[3];
    rtcd_mesh_bounds(body, lo, hi);
    rtcd_transform ident = rtcd_transform_identity(), other = rtcd_transform_identity();
    float offset = hi[1] - lo[1] + gap; /* vertex extrema: a 2 cm slab between them along y */
    wmesh wa = wmesh_make(body, &ident);
    double d = 0.0;
    for (int iter = 0; iter < 40; ++iter) {
        other.translation[1] = offset;
        wmesh wb = wmesh_make(body, &other);
        d = shadow_distance(&wa, &wb, 1, 2);
        wmesh_free(&wb);
        if (fabs(d - gap) < 2e-5) break;
        offset -= (float)(d - gap); /* Lipschitz 1: stays >= gap, converges down to it */
    }
    wmesh_free(&wa);
    print_message("side offset %.4f m (extent gap %.4f m), closest approach %.5f m\n", (double)offset,
                  (double)(offset - (hi[1] - lo[1])), d);
    assert_true(fabs(d - gap) < 1e-4);

    /* Start 0.3 m before the other blob, end 0.3 m past it. */
    float x_other = 0.0f;
    float x_start = x_other + lo[0] - hi[0] - 0.3f;
    float travel = 2.0f * (hi[0] - lo[0]) + 0.6f;
    int steps = (int)ceilf(travel / (speed * DT)) + 1;
    pass_run lone = run_pass(raw, 0, 1, offset, x_start, x_other, steps, speed);
    pass_run pair = run_pass(raw, 1, 1, offset, x_start, x_other, steps, speed);
    /* Reported only: the same pass without speculative contacts. */
    pass_run plain = run_pass(raw, 1, 0, offset, x_start, x_other, steps, speed);
    float worst = 0.0f, worst_plain = 0.0f;
    int worst_step = -1;
    for (int s = 0; s < steps; ++s) {
        float dd = 0.0f, dp = 0.0f;
        for (int k = 0; k < 3; ++k) {
            dd += (pair.x[3 * s + k] - lone.x[3 * s + k]) * (pair.x[3 * s + k] - lone.x[3 * s + k]);
            dp += (plain.x[3 * s + k] - lone.x[3 * s + k]) * (plain.x[3 * s + k] - lone.x[3 * s + k]);
        }
        if (sqrtf(dd) > worst) worst = sqrtf(dd), worst_step = s + 1;
        worst_plain = fmaxf(worst_plain, sqrtf(dp));
    }
    print_message("%d steps at %.1f m/s: closest surface distance at the steps %.5f m; largest deviation from the "
                  "lone run %.6f m (step %d), other blob moved %.6f m, max penetration %.5f m, max angular speed "
                  "%.4f rad/s (lone %.4f)\n",
                  steps, (double)speed, lone.min_distance, (double)worst, worst_step, (double)pair.other_moved,
                  (double)pair.max_penetration, (double)pair.max_angular, (double)lone.max_angular);
    print_message("reported only: with speculative = 0 the deviation is %.6f m, the other blob moved %.6f m\n",
                  (double)worst_plain, (double)plain.other_moved);
    free(lone.x);
    free(pair.x);
    free(plain.x);
    rtcd_shape_release(probe_shape);
    rtcd_world_release(probe);
    rtcd_mesh_release(raw);
    assert_true(pair.max_penetration == 0.0f); /* they never touch */
    assert_true(worst <= 0.001f);
    assert_true(pair.other_moved <= 0.001f);
}

/* ========================================================= 3. crossed boxes */

#define CUBE_HALF 0.25f
#define CROSS_DEPTH 0.015f

typedef struct crossed {
    rtcd_mesh* cube;
    rtcd_transform pa, pb; /* mesh poses: A edge down, B edge up */
    double normal[3];      /* edge x edge, from B to A */
    double crossing[3];    /* where the two edges cross (their midpoint of closest approach) */
} crossed;

/* A: rotated 45 degrees about x, its lowest edge along x; B: rotated 45
 * degrees about y, its highest edge along y; A's edge CROSS_DEPTH below B's. */
static crossed make_crossed(void)
{
    crossed c;
    c.cube = make_box_mesh(CUBE_HALF, CUBE_HALF, CUBE_HALF, "cube");
    float r2 = CUBE_HALF * sqrtf(2.0f);
    c.pb = axis_pose(1, 45.0f, 0.0f, 0.0f, 0.0f);
    c.pa = axis_pose(0, 45.0f, 0.05f, -0.03f, 2.0f * r2 - CROSS_DEPTH);
    /* The edges' directions in the world: A's x axis, B's y axis. */
    double ea[3] = {c.pa.rotation[0], c.pa.rotation[3], c.pa.rotation[6]};
    double eb[3] = {c.pb.rotation[1], c.pb.rotation[4], c.pb.rotation[7]};
    cross3(ea, eb, c.normal);
    double ab[3] = {c.pa.translation[0] - c.pb.translation[0], c.pa.translation[1] - c.pb.translation[1],
                    c.pa.translation[2] - c.pb.translation[2]};
    double len = norm3(c.normal), sign = dot3(c.normal, ab) < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 3; ++k) c.normal[k] *= sign / len;
    c.crossing[0] = 0.0, c.crossing[1] = c.pa.translation[1], c.crossing[2] = r2 - 0.5 * CROSS_DEPTH;
    return c;
}

/* Checks the pose against independent references: no vertex of either inside
 * the other (rtcd's exact point query), and an overlap of CROSS_DEPTH along
 * the edge-edge normal, which is the separating-axis minimum. */
static void check_crossed_setup(const crossed* c)
{
    assert_int_equal(vertices_inside(c->cube, &c->pa, c->cube, &c->pb), 0);
    assert_int_equal(vertices_inside(c->cube, &c->pb, c->cube, &c->pa), 0);
    wmesh wa = wmesh_make(c->cube, &c->pa), wb = wmesh_make(c->cube, &c->pb);
    double axis[3];
    double overlap = sat_overlap(&wa, &wb, axis);
    print_message("crossed boxes: SAT overlap %.6f m along (%.3f %.3f %.3f); edge-edge normal (%.3f %.3f %.3f)\n",
                  overlap, axis[0], axis[1], axis[2], c->normal[0], c->normal[1], c->normal[2]);
    assert_true(fabs(overlap - CROSS_DEPTH) < 1e-4);
    assert_true(dot3(axis, c->normal) > 0.9999);
    wmesh_free(&wa);
    wmesh_free(&wb);
}

/* Every contact along the edge-edge normal (within 10 degrees), positive and
 * no deeper than the overlap (25 % tolerance), the deepest near the overlap,
 * the points near the crossing. */
static int check_edge_contacts(const rtcd_pair_result* r, const double normal[3], const double crossing[3])
{
    int ok = r->contact_count >= 1;
    float deepest = 0.0f;
    for (uint32_t i = 0; i < r->contact_count; ++i) {
        const rtcd_contact* k = &r->contacts[i];
        double ang = angle_deg_f(k->normal_on_b, normal);
        double p[3] = {k->point_on_b[0], k->point_on_b[1], k->point_on_b[2]}, d[3];
        sub3(p, crossing, d);
        int good = ang <= 10.0 && k->depth > 0.0f && k->depth <= 1.25f * CROSS_DEPTH && norm3(d) < 0.05;
        if (!good)
            print_message("  contact %u: angle %.2f deg, depth %.5f (overlap %.5f), %.4f m from the crossing: bad\n", i,
                          ang, (double)k->depth, (double)CROSS_DEPTH, norm3(d));
        ok &= good;
        deepest = fmaxf(deepest, k->depth);
    }
    ok &= deepest >= 0.75f * CROSS_DEPTH;
    return ok;
}

static void test_crossed_boxes_narrowphase(void** state)
{
    (void)state;
    crossed c = make_crossed();
    check_crossed_setup(&c);
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_pair_result ab = collide_fresh(&def, c.cube, &c.pa, c.cube, &c.pb);
    rtcd_pair_result ba = collide_fresh(&def, c.cube, &c.pb, c.cube, &c.pa);
    print_contacts("edge_crossings = 1, (A, B)", &ab);
    print_contacts("edge_crossings = 1, (B, A)", &ba);
    double flipped[3] = {-c.normal[0], -c.normal[1], -c.normal[2]};
    int ok_ab = check_edge_contacts(&ab, c.normal, c.crossing);
    int ok_ba = check_edge_contacts(&ba, flipped, c.crossing);
    def.edge_crossings = 0;
    rtcd_pair_result off_ab = collide_fresh(&def, c.cube, &c.pa, c.cube, &c.pb);
    rtcd_pair_result off_ba = collide_fresh(&def, c.cube, &c.pb, c.cube, &c.pa);
    print_message("edge_crossings = 0: %u and %u contact(s)\n", off_ab.contact_count, off_ba.contact_count);
    rtcd_mesh_release(c.cube);
    assert_true(ok_ab);
    assert_true(ok_ba);
    /* Without the feature: the papers' behaviour, no vertex inside, no contact. */
    assert_int_equal(off_ab.contact_count, 0);
    assert_int_equal(off_ba.contact_count, 0);
}

/* Separation of two convex bodies in a world: the SAT overlap of their body
 * meshes at their poses (<= 0: apart). */
static double world_sat(const rtcd_world* w, const rtcd_mesh* ma, uint32_t a, const rtcd_mesh* mb, uint32_t b)
{
    rtcd_transform ta = body_pose(w, a), tb = body_pose(w, b);
    wmesh wa = wmesh_make(ma, &ta), wb = wmesh_make(mb, &tb);
    double axis[3];
    double o = sat_overlap(&wa, &wb, axis);
    wmesh_free(&wa);
    wmesh_free(&wb);
    return o;
}

typedef struct separation_run {
    int separated_at;      /* first step with no vertex inside and SAT overlap <= tolerance; -1 never */
    double final_overlap;  /* SAT overlap after the last step */
    uint32_t final_inside; /* the ruler's vertices inside after the last step */
    float max_penetration; /* the ruler, over the run */
    float max_speed;       /* either body's linear speed, over the run */
} separation_run;

#define SEPARATED_TOL 1e-4 /* 0.1 mm */

/* Two convex meshes (mesh poses pa, pb), both dynamic (masses ma, mb), zero
 * gravity, 60 steps. */
static separation_run run_separation(rtcd_mesh* mesh_a, const rtcd_transform* pa, float mass_a, rtcd_mesh* mesh_b,
                                     const rtcd_transform* pb, float mass_b)
{
    separation_run r = {-1, 0.0, 0, 0.0f, 0.0f};
    rtcd_world* w = make_world(RTCD_NARROWPHASE_RTCD);
    rtcd_shape* sa = make_shape(w, mesh_a);
    rtcd_shape* sb = mesh_b == mesh_a ? (rtcd_shape_retain(sa), sa) : make_shape(w, mesh_b);
    uint32_t a = add_mesh_at(w, sa, mass_a, pa, NULL), b = add_mesh_at(w, sb, mass_b, pb, NULL);
    const rtcd_mesh* ba = rtcd_shape_body_mesh(sa);
    const rtcd_mesh* bb = rtcd_shape_body_mesh(sb);
    /* The placement is what was asked: the bodies' surfaces sit where the meshes do. */
    {
        double axis[3];
        wmesh w0a = wmesh_make(mesh_a, pa), w0b = wmesh_make(mesh_b, pb);
        double expected = sat_overlap(&w0a, &w0b, axis);
        assert_true(fabs(world_sat(w, ba, a, bb, b) - expected) < 1e-4);
        wmesh_free(&w0a);
        wmesh_free(&w0b);
    }
    for (int step = 1; step <= 60; ++step) {
        assert_int_equal(rtcd_world_step(w), RTCD_OK);
        rtcd_penetration p = measure(w);
        r.max_penetration = fmaxf(r.max_penetration, p.max);
        r.max_speed = fmaxf(r.max_speed, fmaxf(body_speed(w, a), body_speed(w, b)));
        double o = world_sat(w, ba, a, bb, b);
        if (r.separated_at < 0 && p.vertices_inside == 0 && o <= SEPARATED_TOL) r.separated_at = step;
        r.final_overlap = o;
        r.final_inside = p.vertices_inside;
    }
    rtcd_shape_release(sa);
    rtcd_shape_release(sb);
    rtcd_world_release(w);
    return r;
}

static void print_separation(const char* label, const separation_run* r)
{
    print_message("%s: separated at step %d (-1: not within 60), final SAT overlap %.5f m, final vertices inside %u, "
                  "max penetration (ruler) %.4f m, max speed %.3f m/s\n",
                  label, r->separated_at, r->final_overlap, r->final_inside, (double)r->max_penetration,
                  (double)r->max_speed);
}

static void test_crossed_boxes_world(void** state)
{
    (void)state;
    crossed c = make_crossed();
    check_crossed_setup(&c);
    separation_run r = run_separation(c.cube, &c.pa, 1.0f, c.cube, &c.pb, 1.0f);
    print_separation("crossed boxes, world", &r);
    rtcd_mesh_release(c.cube);
    assert_true(r.separated_at >= 1 && r.separated_at <= 60);
    assert_true(r.final_overlap <= SEPARATED_TOL);
    assert_int_equal(r.final_inside, 0);
    assert_true(r.max_speed < 2.0f);
}

/* ============================================== 4. Figure 9 and containment */

typedef struct deep_case {
    rtcd_mesh* a;  /* the inner mesh */
    rtcd_mesh* b;  /* the outer one */
    rtcd_transform pa, pb;
    double escape[3]; /* direction A leaves B along (the minimum translation) */
    double escape_depth; /* how far */
} deep_case;

/* Hermann et al. Figure 9: a 0.4 x 0.4 x 0.02 m plate, parallel to the top
 * face of a 1 m block, its centre 0.25 m under that face. Its corners are
 * 0.24-0.26 m from the top and 0.30 m from the sides: the way out is up. */
static deep_case make_plate_case(void)
{
    deep_case d;
    d.a = make_box_mesh(0.2f, 0.2f, 0.01f, "plate");
    d.b = make_box_mesh(0.5f, 0.5f, 0.5f, "block");
    d.pa = axis_pose(2, 0.0f, 0.0f, 0.0f, 0.5f - 0.25f);
    d.pb = rtcd_transform_identity();
    d.escape[0] = 0, d.escape[1] = 0, d.escape[2] = 1;
    d.escape_depth = 0.26;
    return d;
}

/* The same with a 0.6 x 0.6 m plate: its corners are now nearer the block's
 * sides (0.20 m) than its top (0.24 m), but the way out is still up (0.26 m;
 * sideways it is 0.80 m). Contacts that push each corner to its nearest side
 * cancel out and leave the plate stuck: the world must still separate them. */
static deep_case make_wide_plate_case(void)
{
    deep_case d = make_plate_case();
    rtcd_mesh_release(d.a);
    d.a = make_box_mesh(0.3f, 0.3f, 0.01f, "wide plate");
    return d;
}

/* A 0.2 m box wholly inside a 1 m box, off-centre along x: its faces are
 * 0.1 m from the big box's +x face and 0.4 m from the others; the way out is +x (0.3 m). */
static deep_case make_contained_case(void)
{
    deep_case d;
    d.a = make_box_mesh(0.1f, 0.1f, 0.1f, "small");
    d.b = make_box_mesh(0.5f, 0.5f, 0.5f, "big");
    d.pa = axis_pose(2, 0.0f, 0.3f, 0.0f, 0.0f);
    d.pb = rtcd_transform_identity();
    d.escape[0] = 1, d.escape[1] = 0, d.escape[2] = 0;
    d.escape_depth = 0.3;
    return d;
}

static void check_deep_setup(const deep_case* d, uint32_t expect_inside)
{
    wmesh wa = wmesh_make(d->a, &d->pa), wb = wmesh_make(d->b, &d->pb);
    double axis[3];
    double overlap = sat_overlap(&wa, &wb, axis);
    uint32_t inside = vertices_inside(d->a, &d->pa, d->b, &d->pb);
    print_message("setup: %u of %u vertices of A inside B; SAT overlap %.4f m along (%.2f %.2f %.2f)\n", inside,
                  rtcd_mesh_vertex_count(d->a), overlap, axis[0], axis[1], axis[2]);
    assert_int_equal(inside, expect_inside);
    assert_int_equal(vertices_inside(d->b, &d->pb, d->a, &d->pa), 0);
    assert_true(fabs(overlap - d->escape_depth) < 1e-4);
    assert_true(dot3(axis, d->escape) > 0.9999);
    wmesh_free(&wa);
    wmesh_free(&wb);
}

/* Narrow phase with default settings: *count_on contacts, *ok_on when they
 * all point the way out (within 30 degrees) no deeper than it; with
 * deep_contacts = 0: *count_off contacts. */
static void deep_narrowphase(const deep_case* d, const char* label, int* ok_on, uint32_t* count_on,
                             uint32_t* count_off)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    rtcd_pair_result on = collide_fresh(&def, d->a, &d->pa, d->b, &d->pb);
    def.deep_contacts = 0;
    rtcd_pair_result off = collide_fresh(&def, d->a, &d->pa, d->b, &d->pb);
    char buf[96];
    snprintf(buf, sizeof buf, "%s, deep_contacts = 1", label);
    print_contacts(buf, &on);
    snprintf(buf, sizeof buf, "%s, deep_contacts = 0", label);
    print_contacts(buf, &off);
    int ok = on.contact_count >= 1;
    for (uint32_t i = 0; i < on.contact_count; ++i) {
        const rtcd_contact* k = &on.contacts[i];
        double ang = angle_deg_f(k->normal_on_b, d->escape);
        int good = ang <= 30.0 && k->depth > 0.0f && k->depth <= d->escape_depth + 0.01;
        if (!good) print_message("  contact %u: %.1f deg from the way out, depth %.4f: bad\n", i, ang, (double)k->depth);
        ok &= good;
    }
    *ok_on = ok;
    *count_on = on.contact_count;
    *count_off = off.contact_count;
}

/* World: separated (no vertex inside, SAT overlap <= 0.1 mm) within 60
 * steps and still at the end, neither body ever faster than 2 m/s. */
static void deep_world_assert(const separation_run* r)
{
    assert_true(r->separated_at >= 1 && r->separated_at <= 60);
    assert_int_equal(r->final_inside, 0);
    assert_true(r->final_overlap <= SEPARATED_TOL);
    assert_true(r->max_speed <= 2.0f);
}

static void run_deep_case(deep_case* d, const char* label, int check_directions)
{
    check_deep_setup(d, 8);
    /* The world first, so that its numbers are printed whatever fails. */
    separation_run r = run_separation(d->a, &d->pa, 1.0f, d->b, &d->pb, 1.0f);
    char buf[96];
    snprintf(buf, sizeof buf, "%s, world", label);
    print_separation(buf, &r);
    int ok_on;
    uint32_t count_on, count_off;
    deep_narrowphase(d, label, &ok_on, &count_on, &count_off);
    rtcd_mesh_release(d->a);
    rtcd_mesh_release(d->b);
    /* Per contact, the way out (every deep vertex of a pair leaves along the
     * pair's centre line, so the wide plate's corners, each nearest a
     * different side, still push the same way). */
    assert_true(count_on >= 1);
    if (check_directions) assert_true(ok_on);
    assert_int_equal(count_off, 0); /* deep_contacts = 0: the papers' known limitation */
    deep_world_assert(&r);
}

static void test_thin_plate_deep_in_block(void** state)
{
    (void)state;
    deep_case d = make_plate_case();
    run_deep_case(&d, "thin plate in block", 1);
}

static void test_wide_thin_plate_deep_in_block(void** state)
{
    (void)state;
    deep_case d = make_wide_plate_case();
    run_deep_case(&d, "wide thin plate in block", 1);
}

static void test_box_inside_box(void** state)
{
    (void)state;
    deep_case d = make_contained_case();
    run_deep_case(&d, "box inside box", 1);
}

/* ================================================ 5. speculative contacts */

/* B placed along +x of A so that their surfaces are exactly `gap` apart
 * (brute-force mesh distance); returns B's x. */
static float place_at_distance(const rtcd_mesh* m, const rtcd_transform* pa, rtcd_transform* pb, float gap,
                               double* extent_gap, double* distance)
{
    wmesh wa = wmesh_make(m, pa);
    rtcd_transform at0 = *pb;
    at0.translation[0] = at0.translation[1] = at0.translation[2] = 0.0f;
    wmesh w0 = wmesh_make(m, &at0);
    float x = (float)(wa.hi[0] - w0.lo[0]) + gap; /* vertex extents: `gap` between them along x */
    wmesh_free(&w0);
    double d = 0.0;
    for (int iter = 0; iter < 60; ++iter) {
        pb->translation[0] = x;
        wmesh wb = wmesh_make(m, pb);
        d = mesh_distance(&wa, &wb);
        *extent_gap = wb.lo[0] - wa.hi[0];
        wmesh_free(&wb);
        if (fabs(d - gap) < 2e-5) break;
        x -= (float)(d - gap); /* the distance shrinks by at most the shift: stays >= gap */
    }
    wmesh_free(&wa);
    *distance = d;
    return x;
}

static double true_distance(const rtcd_mesh* m, const rtcd_transform* pa, const rtcd_transform* pb)
{
    wmesh wa = wmesh_make(m, pa), wb = wmesh_make(m, pb);
    double d = mesh_distance(&wa, &wb);
    wmesh_free(&wa);
    wmesh_free(&wb);
    return d;
}

/* Speculative contacts must all be speculative (depth < 0: the surfaces do
 * not touch), face from B to A (A lies along -x), and never claim a gap
 * smaller than the true one by more than 1 mm. Returns how many there are;
 * *bad counts violations. */
static uint32_t check_speculative(const rtcd_pair_result* r, double distance, int* bad)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->contact_count; ++i) {
        const rtcd_contact* k = &r->contacts[i];
        int good = k->depth < 0.0f && -k->depth >= distance - 0.001 && k->normal_on_b[0] < 0.0f;
        if (!good) {
            print_message("  contact %u: depth %.5f (true distance %.5f), normal x %.3f: bad\n", i, (double)k->depth,
                          distance, (double)k->normal_on_b[0]);
            ++*bad;
        }
        n += k->depth < 0.0f;
    }
    return n;
}

static void test_speculative_contacts(void** state)
{
    (void)state;
    rtcd_mesh* blob = make_blob();
    test_rng rng = {7};
    rtcd_transform pa = rtcd_transform_identity();
    rtcd_transform pb = test_random_pose(&rng, 0.0f);
    double extent_gap, d_near;
    float x_near = place_at_distance(blob, &pa, &pb, 0.01f, &extent_gap, &d_near);
    rtcd_transform near = pb, far = pb;
    far.translation[0] = x_near + 0.02f; /* the step before: 2 cm further, closing at 2 cm per step */
    double d_far = true_distance(blob, &pa, &far);
    print_message("blobs: true surface distance %.5f m (vertex-extent gap along x %.5f m); the call before at %.5f m\n",
                  d_near, extent_gap, d_far);
    assert_true(fabs(d_near - 0.01) < 1e-4);
    assert_int_equal(vertices_inside(blob, &pa, blob, &near), 0);
    assert_int_equal(vertices_inside(blob, &near, blob, &pa), 0);

    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    assert_int_equal(def.iterative.algorithm, RTCD_ALGORITHM_PREDICTIVE);
    int bad = 0;
    /* (i) speculative = 1: a first call establishes the motion, the second is 1 cm apart. */
    rtcd_batch* batch = make_batch(def);
    rtcd_pair_result r1 = collide_pair(batch, blob, &pa, blob, &far, 1, 0.0f);
    rtcd_pair_result r2 = collide_pair(batch, blob, &pa, blob, &near, 1, 0.0f);
    rtcd_batch_release(batch);
    print_contacts("speculative = 1, first call (3 cm)", &r1);
    print_contacts("speculative = 1, second call (1 cm)", &r2);
    (void)check_speculative(&r1, d_far, &bad);
    uint32_t spec_motion = check_speculative(&r2, d_near, &bad);
    /* (ii) the same gap on a fresh pair with its motion given (rtcd_pair_desc.motion). */
    batch = make_batch(def);
    rtcd_pair_result r3 = collide_pair(batch, blob, &pa, blob, &near, 1, 0.02f);
    rtcd_batch_release(batch);
    print_contacts("speculative = 1, fresh pair, motion 0.02 m", &r3);
    uint32_t spec_desc = check_speculative(&r3, d_near, &bad);
    /* (iii) speculative = 0: nothing, either way. */
    def.speculative = 0;
    batch = make_batch(def);
    rtcd_pair_result o1 = collide_pair(batch, blob, &pa, blob, &far, 1, 0.0f);
    rtcd_pair_result o2 = collide_pair(batch, blob, &pa, blob, &near, 1, 0.0f);
    rtcd_batch_release(batch);
    batch = make_batch(def);
    rtcd_pair_result o3 = collide_pair(batch, blob, &pa, blob, &near, 1, 0.02f);
    rtcd_batch_release(batch);
    print_message("speculative = 0: %u, %u and %u contact(s)\n", o1.contact_count, o2.contact_count, o3.contact_count);
    rtcd_mesh_release(blob);
    assert_int_equal(bad, 0);
    assert_true(spec_motion >= 1);
    assert_true(spec_desc >= 1);
    assert_int_equal(o1.contact_count, 0);
    assert_int_equal(o2.contact_count, 0);
    assert_int_equal(o3.contact_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throw_blob_at_blob),
        cmocka_unit_test(test_throw_blob_at_plane),
        cmocka_unit_test(test_no_ghost_contacts_passing_by),
        cmocka_unit_test(test_crossed_boxes_narrowphase),
        cmocka_unit_test(test_crossed_boxes_world),
        cmocka_unit_test(test_thin_plate_deep_in_block),
        cmocka_unit_test(test_wide_thin_plate_deep_in_block),
        cmocka_unit_test(test_box_inside_box),
        cmocka_unit_test(test_speculative_contacts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
