/* Contacts from colliding rays, and their reduction to a 4-point manifold. */
#include "pair_internal.h"

rtcd_contact rtcd_contact_from_ray(const rtcd_ray_hit* ray, rtcd_contact_normal mode)
{
    return rtcd_contact_to_public(contact_from_hit(ray->direction, ray->vertex, v3_load(ray->origin), v3_load(ray->ray_dir),
                                      v3_load(ray->normal), ray->length, (int)mode));
}

static rtcd_contact_v from_public(const rtcd_contact* c)
{
    rtcd_contact_v v;
    v.point_on_b = v3_load(c->point_on_b);
    v.normal_on_b = v3_load(c->normal_on_b);
    v.depth = c->depth;
    v.feature = c->feature;
    return v;
}

uint32_t rtcd_reduce_contacts(const rtcd_contact* contacts, uint32_t count, rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS])
{
    if (!contacts || !out || count == 0) return 0;
    /* The shared reduction reads rtcd_contact_v: a copy, on the stack for
     * the usual counts. */
    enum { STACK = 256 };
    rtcd_contact_v stack[STACK];
    rtcd_contact_v* v = count <= STACK ? stack : rtcd_alloc((size_t)count * sizeof *v);
    if (!v) {
        rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_reduce_contacts: no memory for %u contacts", count);
        return 0;
    }
    for (uint32_t i = 0; i < count; ++i) v[i] = from_public(&contacts[i]);
    uint32_t chosen[RTCD_MANIFOLD_POINTS];
    uint32_t n = reduce_contacts(v, count, chosen);
    for (uint32_t k = 0; k < n; ++k) out[k] = contacts[chosen[k]];
    if (v != stack) rtcd_free(v);
    return n;
}
