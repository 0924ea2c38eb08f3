/* Conservative surface-surface intersection test: simultaneous descent of the
 * two BVHs, then a tolerant triangle-triangle test at leaf pairs. It may say 1
 * for surfaces that only come within a tiny tolerance of each other, never 0
 * for surfaces that touch.
 *
 * The tolerance has a floor of RTCD_SO_FLOAT_ULPS float ulps of the pair's
 * coordinates: the narrow phase's second phase (core/shared/crossing.h)
 * decides crossings with float rays, which at a grazing touch can see an
 * edge dip through a face by a rounding error. A "no" here skips those items
 * on the CPU while the kernels run them, so the gate must say "maybe" for
 * every pair the float items could call crossing, or the backends differ. */
#include "surface_overlap.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define SO_LOCAL_STACK 256
#define SO_REL_TOL 1e-6 /* triangle test tolerance, relative to the pair's size */

typedef struct node_pair {
    uint32_t a, b;
} node_pair;

/* ---- triangle-triangle in double ---- */

typedef struct dtri {
    double v[3][3];
    double n[3]; /* unit normal, zero when degenerate */
} dtri;

static double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double* a, const double* b, double* out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static void dtri_init(dtri* t, const float* c)
{
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) t->v[i][k] = c[3 * i + k];
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = t->v[1][k] - t->v[0][k];
        e2[k] = t->v[2][k] - t->v[0][k];
    }
    cross3(e1, e2, t->n);
    double len = sqrt(dot3(t->n, t->n));
    for (int k = 0; k < 3; ++k) t->n[k] = len > 0.0 ? t->n[k] / len : 0.0;
}

/* Is x within eps of the triangle, given x lies (nearly) in its plane? */
static int point_in_tri_3d(const double* x, const dtri* t, double eps)
{
    for (int i = 0; i < 3; ++i) {
        const double* a = t->v[i];
        const double* b = t->v[(i + 1) % 3];
        double e[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ax[3] = {x[0] - a[0], x[1] - a[1], x[2] - a[2]}, c[3];
        cross3(e, ax, c);
        /* In-plane signed distance from the edge's line, positive inside. */
        if (dot3(c, t->n) < -eps * sqrt(dot3(e, e))) return 0;
    }
    return 1;
}

static double orient2(const double* a, const double* b, const double* c)
{
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

static double point_segment_dist2_2d(const double* p, const double* a, const double* b)
{
    double ab[2] = {b[0] - a[0], b[1] - a[1]}, ap[2] = {p[0] - a[0], p[1] - a[1]};
    double len2 = ab[0] * ab[0] + ab[1] * ab[1];
    double s = len2 > 0.0 ? fmin(fmax((ap[0] * ab[0] + ap[1] * ab[1]) / len2, 0.0), 1.0) : 0.0;
    double dx = ap[0] - s * ab[0], dy = ap[1] - s * ab[1];
    return dx * dx + dy * dy;
}

/* Segment pq against triangle t when pq lies within eps of t's plane: both
 * projected onto the coordinate plane t faces most (which only shrinks
 * distances, so the tolerance stays conservative). */
static int coplanar_segment_triangle(const double* p, const double* q, const dtri* t, double eps)
{
    int drop = 0;
    if (fabs(t->n[1]) > fabs(t->n[drop])) drop = 1;
    if (fabs(t->n[2]) > fabs(t->n[drop])) drop = 2;
    int i0 = drop == 0 ? 1 : 0, i1 = drop == 2 ? 1 : 2;
    double P[2] = {p[i0], p[i1]}, Q[2] = {q[i0], q[i1]}, T[3][2];
    for (int i = 0; i < 3; ++i) {
        T[i][0] = t->v[i][i0];
        T[i][1] = t->v[i][i1];
    }
    double area = orient2(T[0], T[1], T[2]);
    double sign = area >= 0.0 ? 1.0 : -1.0;
    int p_in = 1, q_in = 1;
    for (int i = 0; i < 3; ++i) {
        const double* a = T[i];
        const double* b = T[(i + 1) % 3];
        double len = sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]));
        if (sign * orient2(a, b, P) < -eps * len) p_in = 0;
        if (sign * orient2(a, b, Q) < -eps * len) q_in = 0;
    }
    if (p_in || q_in) return 1;
    for (int i = 0; i < 3; ++i) {
        const double* a = T[i];
        const double* b = T[(i + 1) % 3];
        double o1 = orient2(P, Q, a), o2 = orient2(P, Q, b), o3 = orient2(a, b, P), o4 = orient2(a, b, Q);
        if (((o1 > 0.0 && o2 < 0.0) || (o1 < 0.0 && o2 > 0.0)) && ((o3 > 0.0 && o4 < 0.0) || (o3 < 0.0 && o4 > 0.0)))
            return 1;
        double e2 = eps * eps;
        if (point_segment_dist2_2d(a, P, Q) <= e2 || point_segment_dist2_2d(b, P, Q) <= e2 ||
            point_segment_dist2_2d(P, a, b) <= e2 || point_segment_dist2_2d(Q, a, b) <= e2)
            return 1;
    }
    return 0;
}

/* Segment pq (signed plane distances dp, dq) against triangle t. */
static int segment_triangle(const double* p, const double* q, double dp, double dq, const dtri* t, double eps)
{
    if ((dp > eps && dq > eps) || (dp < -eps && dq < -eps)) return 0;
    if (fabs(dp) <= eps && fabs(dq) <= eps) return coplanar_segment_triangle(p, q, t, eps);
    /* One end is beyond eps, so dp - dq is at least eps away from zero. */
    double s = fmin(fmax(dp / (dp - dq), 0.0), 1.0), x[3];
    for (int k = 0; k < 3; ++k) x[k] = p[k] + s * (q[k] - p[k]);
    return point_in_tri_3d(x, t, eps);
}

/* Two triangles intersect iff an edge of one meets the other (the ends of
 * their intersection segment lie on edges); coplanar overlap included. */
static int triangles_intersect(const float* ca, const float* cb, double tol)
{
    dtri a, b;
    dtri_init(&a, ca);
    dtri_init(&b, cb);
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = fmin(fmin(a.v[0][k], a.v[1][k]), fmin(a.v[2][k], fmin(fmin(b.v[0][k], b.v[1][k]), b.v[2][k])));
        hi[k] = fmax(fmax(a.v[0][k], a.v[1][k]), fmax(a.v[2][k], fmax(fmax(b.v[0][k], b.v[1][k]), b.v[2][k])));
    }
    double size = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
    double eps = fmax(SO_REL_TOL * size, tol) + 1e-30;
    /* A (numerically) degenerate triangle has no plane to test against: say yes. */
    if (dot3(a.n, a.n) == 0.0 || dot3(b.n, b.n) == 0.0) return 1;
    double da[3], db[3];
    for (int i = 0; i < 3; ++i) {
        double w[3] = {b.v[i][0] - a.v[0][0], b.v[i][1] - a.v[0][1], b.v[i][2] - a.v[0][2]};
        db[i] = dot3(a.n, w);
        double u[3] = {a.v[i][0] - b.v[0][0], a.v[i][1] - b.v[0][1], a.v[i][2] - b.v[0][2]};
        da[i] = dot3(b.n, u);
    }
    if ((db[0] > eps && db[1] > eps && db[2] > eps) || (db[0] < -eps && db[1] < -eps && db[2] < -eps)) return 0;
    if ((da[0] > eps && da[1] > eps && da[2] > eps) || (da[0] < -eps && da[1] < -eps && da[2] < -eps)) return 0;
    for (int i = 0; i < 3; ++i) {
        int j = (i + 1) % 3;
        if (segment_triangle(a.v[i], a.v[j], da[i], da[j], &b, eps)) return 1;
        if (segment_triangle(b.v[i], b.v[j], db[i], db[j], &a, eps)) return 1;
    }
    return 0;
}

/* ---- BVH descent ---- */

/* Triangle boxes come from the very floats the triangle test reads, padded
 * by the tolerance, so an inclusive comparison never drops a pair the
 * triangle test would call touching. */
static void tri_bounds(const float* c, float tol, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        lo[k] = fminf(fminf(c[k], c[3 + k]), c[6 + k]) - tol;
        hi[k] = fmaxf(fmaxf(c[k], c[3 + k]), c[6 + k]) + tol;
    }
}

static int boxes_overlap(const float* alo, const float* ahi, const float* blo, const float* bhi)
{
    return alo[0] <= bhi[0] && blo[0] <= ahi[0] && alo[1] <= bhi[1] && blo[1] <= ahi[1] && alo[2] <= bhi[2] &&
           blo[2] <= ahi[2];
}

/* b's node box in a's frame (centre and |R| times the half extents), padded
 * for the rounding of the transform. Returns the box's half-extent sum. */
static float xf_box(const rtcd_xform* x, const float* absr, const rtcd_bvh_node* n, float tol, float lo[3],
                    float hi[3])
{
    rtcd_v3 c = xf_point(x, v3(0.5f * (n->lo[0] + n->hi[0]), 0.5f * (n->lo[1] + n->hi[1]),
                               0.5f * (n->lo[2] + n->hi[2])));
    float e[3] = {0.5f * (n->hi[0] - n->lo[0]), 0.5f * (n->hi[1] - n->lo[1]), 0.5f * (n->hi[2] - n->lo[2])};
    float ex[3], cc[3] = {c.x, c.y, c.z};
    for (int i = 0; i < 3; ++i) ex[i] = absr[3 * i] * e[0] + absr[3 * i + 1] * e[1] + absr[3 * i + 2] * e[2];
    float pad = 1e-5f * fmaxf(fmaxf(ex[0], ex[1]), ex[2]) +
                1e-6f * (fabsf(cc[0]) + fabsf(cc[1]) + fabsf(cc[2]) + fabsf(x->t[0]) + fabsf(x->t[1]) + fabsf(x->t[2])) +
                2.0f * tol; /* a's box is not padded: this one covers both */
    for (int i = 0; i < 3; ++i) {
        lo[i] = cc[i] - ex[i] - pad;
        hi[i] = cc[i] + ex[i] + pad;
    }
    return ex[0] + ex[1] + ex[2];
}

static int leaves_intersect(const rtcd_bvh_view* va, const rtcd_bvh_node* na, const rtcd_bvh_view* vb,
                            const rtcd_bvh_node* nb, const rtcd_xform* x, const float* blo, const float* bhi, float tol)
{
    float tb[RTCD_BVH_MAX_LEAF_SIZE][9], tb_lo[RTCD_BVH_MAX_LEAF_SIZE][3], tb_hi[RTCD_BVH_MAX_LEAF_SIZE][3];
    uint32_t fb = nb->prims >> RTCD_BVH_LEAF_BITS, cb = nb->prims & RTCD_BVH_MAX_LEAF_SIZE;
    uint32_t fa = na->prims >> RTCD_BVH_LEAF_BITS, ca = na->prims & RTCD_BVH_MAX_LEAF_SIZE;
    uint32_t live = 0;
    for (uint32_t k = 0; k < cb; ++k) {
        const float* c = vb->tris + 9 * (fb + k);
        for (int i = 0; i < 3; ++i) {
            rtcd_v3 p = xf_point(x, v3_load(c + 3 * i));
            tb[live][3 * i] = p.x;
            tb[live][3 * i + 1] = p.y;
            tb[live][3 * i + 2] = p.z;
        }
        tri_bounds(tb[live], tol, tb_lo[live], tb_hi[live]);
        float nlo[3] = {na->lo[0] - tol, na->lo[1] - tol, na->lo[2] - tol};
        float nhi[3] = {na->hi[0] + tol, na->hi[1] + tol, na->hi[2] + tol};
        if (boxes_overlap(nlo, nhi, tb_lo[live], tb_hi[live])) ++live; /* else drop: it misses a's leaf */
    }
    for (uint32_t k = 0; k < ca && live > 0; ++k) {
        const float* c = va->tris + 9 * (fa + k);
        float alo[3], ahi[3];
        tri_bounds(c, tol, alo, ahi);
        if (!boxes_overlap(alo, ahi, blo, bhi)) continue;
        for (uint32_t j = 0; j < live; ++j)
            if (boxes_overlap(alo, ahi, tb_lo[j], tb_hi[j]) && triangles_intersect(c, tb[j], tol)) return 1;
    }
    return 0;
}

RTCD_API int rtcd_surfaces_intersect(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a)
{
    if (!a || !b || !b_in_a || a->bvh.node_count == 0 || b->bvh.node_count == 0) return 0;
    rtcd_bvh_view va = rtcd_mesh_bvh_view(a), vb = rtcd_mesh_bvh_view(b);
    /* Each mesh lies in the ball of its reach about its origin. Balls more
     * than twice the tolerance apart hold no two triangles within it, so
     * the descent below would say 0 too. Most pairs that ask (near in the
     * broadphase, apart) end here: 85 % of the OpenCL host's gates on the
     * avalanche, which cost 1.4 us each in the descent. */
    if (rtcd_reach_balls_apart(a, b, b_in_a)) return 0;
    float absr[9];
    for (int i = 0; i < 9; ++i) absr[i] = fabsf(b_in_a->r[i]) + 1e-6f; /* covers a slightly non-orthonormal R */
    float tol = rtcd_surfaces_tolerance(a, b, b_in_a);
    node_pair local[SO_LOCAL_STACK];
    node_pair* stack = local;
    uint32_t capacity = SO_LOCAL_STACK, sp = 0;
    int result = 0;
    stack[sp++] = (node_pair){0, 0};
    while (sp > 0) {
        node_pair pr = stack[--sp];
        const rtcd_bvh_node* na = va.nodes + pr.a;
        const rtcd_bvh_node* nb = vb.nodes + pr.b;
        float blo[3], bhi[3];
        float bsize = xf_box(b_in_a, absr, nb, tol, blo, bhi);
        if (!boxes_overlap(na->lo, na->hi, blo, bhi)) continue;
        if (na->prims != 0 && nb->prims != 0) {
            if (leaves_intersect(&va, na, &vb, nb, b_in_a, blo, bhi, tol)) {
                result = 1;
                break;
            }
            continue;
        }
        if (sp + 2 > capacity) {
            /* Grow on the heap; without memory, answer the conservative yes. */
            node_pair* bigger = rtcd_alloc(2 * (size_t)capacity * sizeof(node_pair));
            if (!bigger) {
                result = 1;
                break;
            }
            memcpy(bigger, stack, sp * sizeof(node_pair));
            if (stack != local) rtcd_free(stack);
            stack = bigger;
            capacity *= 2;
        }
        float asize = 0.5f * ((na->hi[0] - na->lo[0]) + (na->hi[1] - na->lo[1]) + (na->hi[2] - na->lo[2]));
        /* Descend the larger box (a leaf cannot be descended). */
        if (nb->prims != 0 || (na->prims == 0 && asize >= bsize)) {
            uint32_t l = pr.a + 1;
            stack[sp++] = (node_pair){va.nodes[l].escape, pr.b};
            stack[sp++] = (node_pair){l, pr.b};
        } else {
            uint32_t l = pr.b + 1;
            stack[sp++] = (node_pair){pr.a, vb.nodes[l].escape};
            stack[sp++] = (node_pair){pr.a, l};
        }
    }
    if (stack != local) rtcd_free(stack);
    return result;
}
