/* Contacts from colliding rays, and their reduction to a 4-point manifold. */
#include "core_internal.h"


#include "shared/contact.h"

static rtcd_contact to_public(rtcd_contact_v v)
{
    rtcd_contact c;
    c.point_on_b[0] = v.point_on_b.x, c.point_on_b[1] = v.point_on_b.y, c.point_on_b[2] = v.point_on_b.z;
    c.normal_on_b[0] = v.normal_on_b.x, c.normal_on_b[1] = v.normal_on_b.y, c.normal_on_b[2] = v.normal_on_b.z;
    c.depth = v.depth;
    c.feature = v.feature;
    return c;
}

rtcd_contact rtcd_contact_from_ray(const rtcd_ray_hit* ray, rtcd_contact_normal mode)
{
    return to_public(contact_from_hit(ray->direction, ray->vertex, v3_load(ray->origin), v3_load(ray->ray_dir),
                                      v3_load(ray->normal), ray->length, (int)mode));
}

uint32_t rtcd_reduce_contacts(const rtcd_contact* contacts, uint32_t count, rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS])
{
    if (!contacts || !out || count == 0) return 0;
    uint32_t chosen[RTCD_MAX_MANIFOLD_POINTS];
    uint32_t n_out = count < RTCD_MAX_MANIFOLD_POINTS ? count : RTCD_MAX_MANIFOLD_POINTS;
    rtcd_v3 p[RTCD_MAX_MANIFOLD_POINTS] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (uint32_t k = 0; k < n_out; ++k) {
        /* pass 0 finds the best score, pass 1 the lowest feature within the tie band */
        float best = -RTCD_FLT_MAX;
        uint32_t pick = RTCD_INVALID;
        for (int pass = 0; pass < 2; ++pass) {
            float band = reduce_band(best);
            for (uint32_t i = 0; i < count; ++i) {
                int taken = 0;
                for (uint32_t j = 0; j < k; ++j) taken |= chosen[j] == i;
                if (taken) continue;
                float score = reduce_score((int)k, v3_load(contacts[i].point_on_b), contacts[i].depth, p[0], p[1], p[2]);
                if (pass == 0) best = rtcd_maxf(best, score);
                else if (score >= band && (pick == RTCD_INVALID || contacts[i].feature < contacts[pick].feature))
                    pick = i;
            }
        }
        chosen[k] = pick;
        p[k] = v3_load(contacts[pick].point_on_b);
        out[k] = contacts[pick];
    }
    return n_out;
}
