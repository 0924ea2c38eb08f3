/* Contacts from colliding rays, and their reduction to a 4-point manifold. */
#include "pair_internal.h"

#include <math.h>
#include <string.h>

/* What rtcd_contact_from_ray gives for a ray it cannot use: no point, no
 * normal and a NaN depth, which rtcd_reduce_contacts drops. */
static rtcd_contact invalid_contact(uint32_t feature)
{
    rtcd_contact c;
    memset(&c, 0, sizeof c);
    c.depth = NAN;
    c.feature = feature;
    return c;
}

rtcd_contact rtcd_contact_from_ray(const rtcd_ray_hit* ray, rtcd_contact_normal mode)
{
    const char* fn = "rtcd_contact_from_ray";
    if (!ray) {
        rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: NULL ray", fn);
        return invalid_contact(RTCD_INVALID);
    }
    uint32_t feature = (ray->direction << 31) | (ray->vertex & 0x7fffffffu);
    int m = (int)mode; /* read as an integer: any value may come in */
    if (m < (int)RTCD_CONTACT_REPROJECTED || m > (int)RTCD_CONTACT_RAY_WEIGHTED) {
        rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: mode %d is not an rtcd_contact_normal (0..2)", fn, m);
        return invalid_contact(feature);
    }
    int finite = isfinite(ray->length) != 0;
    for (int k = 0; k < 3; ++k)
        finite &= isfinite(ray->origin[k]) && isfinite(ray->ray_dir[k]) && isfinite(ray->normal[k]);
    if (!finite) {
        rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: ray of vertex %u (direction %u) is not finite", fn, ray->vertex,
                  ray->direction);
        return invalid_contact(feature);
    }
    return rtcd_contact_to_public(contact_from_hit(ray->direction, ray->vertex, v3_load(ray->origin), v3_load(ray->ray_dir),
                                      v3_load(ray->normal), ray->length, m));
}

static rtcd_contact_v from_public(const rtcd_contact* c)
{
    rtcd_contact_v v;
    v.point_on_b = v3_load(c->point_on_b);
    v.normal_on_b = v3_load(c->normal_on_b);
    v.depth = v.rank = c->depth;
    v.feature = c->feature;
    return v;
}

enum { REDUCE_STACK = 256 };

/* The shared reduction over `count` contacts through buffers of `room`
 * (v: what reduce_contacts reads, from: the contacts themselves), dropping
 * non-finite ones. When room < count it runs a buffer's worth at a time,
 * each time over the points kept so far and the next ones: the deepest
 * point is the same as in one go (up to the tie band), the others may
 * differ (their spread is judged against fewer points). */
static uint32_t reduce_through(const rtcd_contact* contacts, uint32_t count, rtcd_contact_v* v, rtcd_contact* from,
                               float* score, uint32_t room, rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS])
{
    uint32_t kept = 0, i = 0, dropped = 0;
    while (i < count) {
        uint32_t m = 0;
        for (; m < kept; ++m) {
            from[m] = out[m];
            v[m] = from_public(&out[m]);
        }
        for (; i < count && m < room; ++i) {
            rtcd_contact_v c = from_public(&contacts[i]);
            if (!reduce_valid(c)) {
                dropped++;
                continue;
            }
            from[m] = contacts[i];
            v[m++] = c;
        }
        uint32_t chosen[RTCD_MANIFOLD_POINTS];
        kept = reduce_contacts_in(v, m, 0.0f, chosen, score);
        rtcd_contact picked[RTCD_MANIFOLD_POINTS];
        for (uint32_t k = 0; k < kept; ++k) picked[k] = from[chosen[k]];
        for (uint32_t k = 0; k < kept; ++k) out[k] = picked[k];
    }
    if (dropped)
        rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_reduce_contacts: %u of %u contacts not finite, dropped", dropped,
                  count);
    return kept;
}

uint32_t rtcd_reduce_contacts(const rtcd_contact* contacts, uint32_t count, rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS])
{
    if (!contacts || !out || count == 0) return 0;
    /* In one go: on the stack for the usual counts, else in scratch memory;
     * out of it, a stack's worth at a time (reported). */
    rtcd_contact_v stack_v[REDUCE_STACK];
    rtcd_contact stack_from[REDUCE_STACK];
    float stack_score[REDUCE_STACK];
    if (count <= REDUCE_STACK)
        return reduce_through(contacts, count, stack_v, stack_from, stack_score, REDUCE_STACK, out);
    rtcd_contact_v* v = rtcd_alloc((size_t)count * sizeof *v);
    rtcd_contact* from = rtcd_alloc((size_t)count * sizeof *from);
    float* score = rtcd_alloc((size_t)count * sizeof *score);
    uint32_t n;
    if (v && from && score) {
        n = reduce_through(contacts, count, v, from, score, count, out);
    } else {
        rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_reduce_contacts: no memory for %u contacts (reduced %u at a time)",
                  count, (unsigned)REDUCE_STACK);
        n = reduce_through(contacts, count, stack_v, stack_from, stack_score, REDUCE_STACK, out);
    }
    rtcd_free(v);
    rtcd_free(from);
    rtcd_free(score);
    return n;
}

rtcd_error rtcd_collide_plane(const rtcd_mesh* mesh, const rtcd_transform* pose, const float plane[4],
                              int plane_is_a, float speculative, float touch, rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS],
                              uint32_t* count)
{
    if (count) *count = 0;
    if (!mesh || !pose || !plane || !out || !count)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_collide_plane: NULL argument");
    rtcd_v3 n = v3_load(plane);
    float d = plane[3];
    rtcd_xform x = rtcd_to_xform(pose);
    int finite = isfinite(n.x) && isfinite(n.y) && isfinite(n.z) && isfinite(d) && isfinite(speculative) && isfinite(touch);
    for (int i = 0; i < 9; ++i) finite &= isfinite(pose->rotation[i]) != 0;
    for (int i = 0; i < 3; ++i) finite &= isfinite(pose->translation[i]) != 0;
    if (!finite) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_collide_plane: %s: pose, plane or reach not finite",
                                  mesh->name);
    float reach = speculative > 0.0f ? speculative : 0.0f;
    /* The contacts on the stack; in memory for every vertex only when more
     * than the stack holds are found (a malloc a call was a fifth of a
     * resting blob's time). */
    enum { STACK = 256 };
    rtcd_contact_v stack[STACK];
    float stack_score[STACK];
    rtcd_contact_v* c = stack;
    float* score = stack_score;
    rtcd_mesh_view view = rtcd_mesh_view_of(mesh, RTCD_TRAVERSAL_BVH);
    uint32_t m = 0;
    /* The plane in the mesh's frame (normal R^T n, offset n.t - d): a
     * vertex's height in 3 products instead of placing it (12), so most of a
     * resting body's vertices are passed over for the price of a dot. It
     * only culls, with room for its rounding (a few ulps of the magnitudes
     * summed; 1e-5 of them is ample): plane_vertex_contact decides, in the
     * world frame, for every vertex it keeps, so the contacts are the same
     * bits as without it. */
    rtcd_v3 nl = v3(x.r[0] * n.x + x.r[3] * n.y + x.r[6] * n.z, x.r[1] * n.x + x.r[4] * n.y + x.r[7] * n.z,
                    x.r[2] * n.x + x.r[5] * n.y + x.r[8] * n.z);
    rtcd_v3 t = v3(x.t[0], x.t[1], x.t[2]);
    float offset = v3_dot(n, t) - d;
    /* Magnitudes of the sums (Frobenius norm: any matrix a caller passes). */
    float rnorm = 0.0f;
    for (int i = 0; i < 9; ++i) rnorm += x.r[i] * x.r[i];
    rnorm = sqrtf(rnorm);
    float vscale = v3_length(n) * rnorm, base = v3_length(n) * v3_length(t) + fabsf(d);
    /* Clusters whose ball lies farther above the plane than the reach hold no contact. */
    for (uint32_t k = 0; k < mesh->cluster_count; ++k) {
        const rtcd_vertex_cluster* cl = &mesh->clusters[k];
        if (v3_dot(n, xf_point(&x, v3_load(cl->centre))) - d - reach > cl->radius * (1.0f + 1e-5f) + 1e-6f) continue;
        rtcd_v3 centre = v3_load(cl->centre);
        float limit = reach + 1e-5f * (vscale * (v3_length(centre) + cl->radius) + base) + 1e-6f;
        for (uint32_t j = cl->first; j < cl->first + cl->count; ++j) {
            uint32_t i = mesh->cluster_vertices[j];
            const float* v = view.vertices + 3 * (size_t)i;
            if (nl.x * v[0] + nl.y * v[1] + nl.z * v[2] + offset > limit) continue;
            if (m == STACK && c == stack) {
                c = rtcd_alloc((size_t)mesh->vertex_count * sizeof *c);
                score = rtcd_alloc((size_t)mesh->vertex_count * sizeof *score);
                if (!c || !score) {
                    rtcd_free(c);
                    rtcd_free(score);
                    return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_collide_plane: no memory for %u contacts",
                                     mesh->vertex_count);
                }
                memcpy(c, stack, sizeof stack);
            }
            m += (uint32_t)plane_vertex_contact(&view, &x, n, d, reach, i, plane_is_a, &c[m]);
        }
    }
    uint32_t chosen[RTCD_MANIFOLD_POINTS];
    *count = reduce_contacts_in(c, m, touch > 0.0f ? touch : 0.0f, chosen, score);
    for (uint32_t k = 0; k < *count; ++k) out[k] = rtcd_contact_to_public(c[chosen[k]]);
    if (c != stack) rtcd_free(c);
    if (score != stack_score) rtcd_free(score);
    return RTCD_OK;
}
