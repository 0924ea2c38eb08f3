/* Point queries on one closed mesh: generalised winding number (brute-force
 * reference), BVH ray-parity inside test, BVH closest point. */
#include "point_query.h"

#include <float.h>
#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- winding number ---- */

double rtcd_mesh_winding_number(const rtcd_mesh* mesh, const float point[3])
{
    if (!mesh || !point) return 0.0;
    double p[3] = {point[0], point[1], point[2]};
    double sum = 0.0;
    for (uint32_t t = 0; t < mesh->triangle_count; ++t) {
        double c[3][3], len[3];
        for (int k = 0; k < 3; ++k) {
            const float* v = mesh->vertices + 3 * mesh->indices[3 * t + k];
            for (int j = 0; j < 3; ++j) c[k][j] = (double)v[j] - p[j];
            len[k] = sqrt(c[k][0] * c[k][0] + c[k][1] * c[k][1] + c[k][2] * c[k][2]);
        }
        /* Van Oosterom & Strackee: tan(omega / 2) = a.(b x c) / denominator. */
        double det = c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) -
                     c[0][1] * (c[1][0] * c[2][2] - c[1][2] * c[2][0]) +
                     c[0][2] * (c[1][0] * c[2][1] - c[1][1] * c[2][0]);
        double ab = c[0][0] * c[1][0] + c[0][1] * c[1][1] + c[0][2] * c[1][2];
        double ac = c[0][0] * c[2][0] + c[0][1] * c[2][1] + c[0][2] * c[2][2];
        double bc = c[1][0] * c[2][0] + c[1][1] * c[2][1] + c[1][2] * c[2][2];
        double den = len[0] * len[1] * len[2] + ab * len[2] + ac * len[1] + bc * len[0];
        sum += 2.0 * atan2(det, den);
    }
    return sum / (4.0 * M_PI);
}

/* ---- inside test ---- */

/* Fixed, deterministic cast directions: unit, far from the axes and the
 * diagonals, so axis-aligned and boxy meshes rarely make them graze. */
static const float k_directions[8][3] = {
    {-0.3135514f, -0.9255403f, -0.2122749f}, {0.4956869f, 0.7861791f, 0.3690759f},
    {-0.8587901f, 0.4408484f, 0.2610216f},   {-0.8467099f, -0.4456089f, 0.2907146f},
    {0.3722402f, 0.4752790f, -0.7972121f},   {0.7928666f, 0.2569486f, 0.5525757f},
    {-0.6053643f, -0.7216713f, -0.3357448f}, {0.3620439f, 0.5116062f, 0.7792197f},
};
#define PQ_TRIES 6
#define PQ_BARY_TOL 1e-4f    /* crossings closer than this to an edge are ambiguous */
#define PQ_PARALLEL_TOL 1e-3f /* |cos(ray, normal)| below this is ambiguous */

enum { CAST_OK = 0, CAST_AMBIGUOUS = 1, CAST_ON_SURFACE = 2 };

/* Signed crossing count (+1 leaving, -1 entering) of the ray p + t d, t > 0,
 * over every triangle, by a stackless walk of all nodes the ray touches. On a
 * valid closed mesh this is 1 inside and 0 outside (parity), and it matches
 * the winding number where components overlap. */
static int cast_crossings(const rtcd_mesh* m, rtcd_v3 p, rtcd_v3 d, float ttol, int* crossings)
{
    rtcd_bvh_view bvh = rtcd_mesh_bvh_view(m);
    rtcd_v3 inv = safe_reciprocal(d);
    /* Scaling a triangle by 1 + k about its centroid covers barycentrics down
     * to -k/3, so ray_triangle on the grown copy catches every ray passing
     * near an edge, even one the exact test rounds into a miss on both sides. */
    const float grow = 1.0f + 3.0f * PQ_BARY_TOL;
    int sum = 0;
    uint32_t i = 0;
    while (i < bvh.node_count) {
        const rtcd_bvh_node* n = bvh.nodes + i;
        float t_enter;
        if (!ray_aabb(p, inv, v3_load(n->lo), v3_load(n->hi), -ttol, FLT_MAX, &t_enter)) {
            i = n->escape;
            continue;
        }
        if (n->prims == 0) {
            ++i;
            continue;
        }
        uint32_t first = n->prims >> RTCD_BVH_LEAF_BITS, count = n->prims & RTCD_BVH_MAX_LEAF_SIZE;
        for (uint32_t k = first; k < first + count; ++k) {
            const float* c = bvh.tris + 9 * k;
            rtcd_v3 p0 = v3_load(c), p1 = v3_load(c + 3), p2 = v3_load(c + 6);
            rtcd_v3 ctr = v3_scale(v3_add(v3_add(p0, p1), p2), 1.0f / 3.0f);
            rtcd_v3 g0 = v3_add(ctr, v3_scale(v3_sub(p0, ctr), grow));
            rtcd_v3 g1 = v3_add(ctr, v3_scale(v3_sub(p1, ctr), grow));
            rtcd_v3 g2 = v3_add(ctr, v3_scale(v3_sub(p2, ctr), grow));
            float t, u, v;
            if (!ray_triangle(p, d, g0, g1, g2, -ttol, FLT_MAX, &t, &u, &v)) continue;
            if (fabsf(t) <= ttol) return CAST_ON_SURFACE;
            if (t < 0.0f) continue;
            rtcd_v3 nrm = v3_cross(v3_sub(p1, p0), v3_sub(p2, p0));
            float cosang = v3_dot(nrm, d) / v3_length(nrm);
            if (!(fabsf(cosang) > PQ_PARALLEL_TOL)) return CAST_AMBIGUOUS;
            if (!ray_triangle(p, d, p0, p1, p2, -ttol, FLT_MAX, &t, &u, &v)) return CAST_AMBIGUOUS;
            if (u < PQ_BARY_TOL || v < PQ_BARY_TOL || 1.0f - u - v < PQ_BARY_TOL) return CAST_AMBIGUOUS;
            if (fabsf(t) <= ttol) return CAST_ON_SURFACE;
            sum += cosang > 0.0f ? 1 : -1;
        }
        i = n->escape;
    }
    *crossings = sum;
    return CAST_OK;
}

/* Behind an open surface: the narrow phase's own rule (a ray from inside
 * first meets a back face), along the first direction that meets it: the
 * way the surface faces, the opposite way (short rays across a terrain),
 * then the fixed directions. */
int rtcd_open_surface_contains(const rtcd_mesh* m, rtcd_v3 p)
{
    rtcd_bvh_view bvh = rtcd_mesh_bvh_view(m);
    for (int k = -2; k < 8; ++k) {
        rtcd_v3 d = k == -2 ? v3_load(m->facing) : k == -1 ? v3_neg(v3_load(m->facing)) : v3_load(k_directions[k]);
        rtcd_tri_hit h = bvh_first_hit(&bvh, p, d, 0.0f, FLT_MAX, RTCD_INVALID);
        if (h.tri != RTCD_INVALID) return v3_dot(d, v3_load(m->triangle_normals + 3 * h.tri)) > 0.0f;
    }
    return 0;
}

int rtcd_mesh_contains_point(const rtcd_mesh* mesh, const float point[3])
{
    if (!mesh || !point || mesh->bvh.node_count == 0) return 0;
    if (!isfinite(point[0]) || !isfinite(point[1]) || !isfinite(point[2])) return 0;
    if (mesh->open_surface) {
        for (int k = 0; k < 3; ++k)
            if (point[k] < mesh->lo[k] || point[k] > mesh->hi[k]) return 0;
        return rtcd_open_surface_contains(mesh, v3_load(point));
    }
    float scale = 0.0f;
    for (int k = 0; k < 3; ++k) {
        if (point[k] < mesh->lo[k] || point[k] > mesh->hi[k]) return 0;
        scale = fmaxf(scale, fmaxf(mesh->hi[k] - mesh->lo[k], fmaxf(fabsf(mesh->lo[k]), fabsf(mesh->hi[k]))));
    }
    float ttol = 1e-6f * scale;
    rtcd_v3 p = v3_load(point);
    for (int attempt = 0; attempt < PQ_TRIES; ++attempt) {
        int crossings = 0;
        int r = cast_crossings(mesh, p, v3_load(k_directions[attempt]), ttol, &crossings);
        if (r == CAST_OK) return crossings > 0;
        if (r == CAST_ON_SURFACE) break; /* every direction would start on the surface */
    }
    return rtcd_mesh_winding_number(mesh, point) > 0.5;
}

/* ---- closest point ---- */

/* Ericson, Real-Time Collision Detection 5.1.5: Voronoi regions of the
 * vertices, then the edges, then the face. Returns the squared distance. */
static double closest_on_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                                  double out[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int k = 0; k < 3; ++k) {
        ab[k] = b[k] - a[k];
        ac[k] = c[k] - a[k];
        ap[k] = p[k] - a[k];
        bp[k] = p[k] - b[k];
        cp[k] = p[k] - c[k];
    }
#define DOT(x, y) (x[0] * y[0] + x[1] * y[1] + x[2] * y[2])
    double d1 = DOT(ab, ap), d2 = DOT(ac, ap);
    double d3 = DOT(ab, bp), d4 = DOT(ac, bp);
    double d5 = DOT(ab, cp), d6 = DOT(ac, cp);
#undef DOT
    double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
    const double* base = a;
    const double* dir = ab;
    double bc[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]};
    double s = 0.0, w = 0.0; /* out = base + s * dir (+ w * ac for the face) */
    if (d1 <= 0.0 && d2 <= 0.0) {
        /* vertex a */
    } else if (d3 >= 0.0 && d4 <= d3) {
        base = b;
    } else if (d6 >= 0.0 && d5 <= d6) {
        base = c;
    } else if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        s = d1 / (d1 - d3);
    } else if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        dir = ac;
        s = d2 / (d2 - d6);
    } else if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        base = b;
        dir = bc;
        s = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    } else {
        double denom = va + vb + vc;
        if (denom > 0.0) {
            s = vb / denom;
            w = vc / denom;
        }
    }
    double d2sum = 0.0;
    for (int k = 0; k < 3; ++k) {
        out[k] = base[k] + s * dir[k] + w * ac[k];
        d2sum += (p[k] - out[k]) * (p[k] - out[k]);
    }
    return d2sum;
}

static double box_distance2(const rtcd_bvh_node* n, const double p[3])
{
    /* Comparisons, not fmax: libm calls were a fifth of the near grid's
     * build (the values are finite here, so the result is the same). */
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        double below = (double)n->lo[k] - p[k], above = p[k] - (double)n->hi[k];
        double e = below > above ? below : above;
        if (e > 0.0) d2 += e * e;
    }
    return d2;
}

typedef struct closest_state {
    rtcd_bvh_view bvh;
    double p[3], best_d2, best_point[3];
    uint32_t best_tri;
} closest_state;

static void closest_leaf(closest_state* s, uint32_t prims)
{
    uint32_t first = prims >> RTCD_BVH_LEAF_BITS, count = prims & RTCD_BVH_MAX_LEAF_SIZE;
    for (uint32_t k = first; k < first + count; ++k) {
        const float* c = s->bvh.tris + 9 * k;
        double a[3] = {c[0], c[1], c[2]}, b[3] = {c[3], c[4], c[5]}, cc[3] = {c[6], c[7], c[8]}, q[3];
        double d2 = closest_on_triangle(s->p, a, b, cc, q);
        uint32_t id = s->bvh.tri_ids[k];
        /* Ties go to the lower triangle id, as for ray hits. */
        if (d2 < s->best_d2 || (d2 == s->best_d2 && id < s->best_tri)) {
            s->best_d2 = d2;
            s->best_tri = id;
            for (int j = 0; j < 3; ++j) s->best_point[j] = q[j];
        }
    }
}

/* Unordered escape-link walk of the subtree at `root`: the fallback for a
 * full stack, so no subtree is ever dropped. */
static void closest_subtree_stackless(closest_state* s, uint32_t root)
{
    uint32_t end = s->bvh.nodes[root].escape, i = root;
    while (i < end) {
        const rtcd_bvh_node* n = s->bvh.nodes + i;
        if (box_distance2(n, s->p) > s->best_d2) {
            i = n->escape;
        } else if (n->prims != 0) {
            closest_leaf(s, n->prims);
            i = n->escape;
        } else {
            ++i;
        }
    }
}

/* The nearest triangle to s->p closer than sqrt(s->best_d2) (infinity: any). */
static void closest_search(closest_state* ss)
{
    closest_state s = *ss;
    {
        /* Depth first, nearer child first, pruned by the distance to the box. */
        uint32_t stack[RTCD_BVH_STACK_SIZE];
        double stack_d2[RTCD_BVH_STACK_SIZE];
        int sp = 0;
        stack[sp] = 0;
        stack_d2[sp++] = box_distance2(s.bvh.nodes, s.p);
        while (sp > 0) {
            --sp;
            if (stack_d2[sp] > s.best_d2) continue;
            uint32_t i = stack[sp];
            while (s.bvh.nodes[i].prims == 0) {
                uint32_t l = i + 1, r = s.bvh.nodes[l].escape;
                double dl = box_distance2(s.bvh.nodes + l, s.p), dr = box_distance2(s.bvh.nodes + r, s.p);
                uint32_t near_i = dl <= dr ? l : r, far_i = dl <= dr ? r : l;
                double near_d = dl <= dr ? dl : dr, far_d = dl <= dr ? dr : dl;
                if (near_d > s.best_d2) break;
                if (far_d <= s.best_d2) {
                    if (sp < RTCD_BVH_STACK_SIZE) {
                        stack[sp] = far_i;
                        stack_d2[sp++] = far_d;
                    } else {
                        closest_subtree_stackless(&s, far_i);
                    }
                }
                i = near_i;
            }
            if (s.bvh.nodes[i].prims != 0 && box_distance2(s.bvh.nodes + i, s.p) <= s.best_d2)
                closest_leaf(&s, s.bvh.nodes[i].prims);
        }
    }
    *ss = s;
}

double rtcd_mesh_closest_distance2_within(const rtcd_mesh* mesh, const double p[3], double bound2)
{
    closest_state s;
    s.bvh = rtcd_mesh_bvh_view(mesh);
    for (int k = 0; k < 3; ++k) s.p[k] = p[k];
    s.best_d2 = bound2;
    s.best_tri = RTCD_NO_TRIANGLE;
    closest_search(&s);
    if (s.best_tri == RTCD_NO_TRIANGLE) { /* the bound was no bound: everything */
        s.best_d2 = INFINITY;
        closest_search(&s);
    }
    return s.best_d2;
}

float rtcd_mesh_closest_point(const rtcd_mesh* mesh, const float point[3], float closest[3], uint32_t* triangle)
{
    closest_state s;
    s.best_d2 = INFINITY;
    s.best_tri = RTCD_NO_TRIANGLE;
    int valid = mesh && point && mesh->bvh.node_count > 0 && isfinite(point[0]) && isfinite(point[1]) &&
                isfinite(point[2]);
    if (valid) {
        s.bvh = rtcd_mesh_bvh_view(mesh);
        for (int k = 0; k < 3; ++k) s.p[k] = point[k];
        closest_search(&s);
    }
    if (closest) {
        for (int k = 0; k < 3; ++k)
            closest[k] = s.best_tri != RTCD_NO_TRIANGLE ? (float)s.best_point[k] : (point ? point[k] : 0.0f);
    }
    if (triangle) *triangle = s.best_tri;
    /* No mesh or a non-finite point: nothing is near, report infinity. */
    return s.best_tri != RTCD_NO_TRIANGLE ? (float)sqrt(s.best_d2) : INFINITY;
}
