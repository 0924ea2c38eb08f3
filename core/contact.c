/* Contacts from colliding rays, and their reduction to a 4-point manifold. */
#include "core_internal.h"

#include <math.h>
#include <string.h>

rtcd_contact rtcd_contact_from_ray(const rtcd_ray_hit* ray, rtcd_contact_normal mode)
{
    rtcd_v3 dir = v3_load(ray->ray_dir), n = v3_load(ray->normal), origin = v3_load(ray->origin);
    /* The caster's vertex moves along `push` by `depth` to leave the other mesh. */
    rtcd_v3 push;
    float depth;
    float cos_alpha = v3_dot(dir, n);
    switch (mode) {
    case RTCD_CONTACT_RAY:
        push = dir;
        depth = ray->length;
        break;
    case RTCD_CONTACT_RAY_WEIGHTED:
        push = dir;
        depth = ray->length * cos_alpha;
        break;
    case RTCD_CONTACT_REPROJECTED:
    default:
        /* JVRC 2013 eq. 2: the ray projected on the hit normal, the minimum translation. */
        push = n;
        depth = ray->length * cos_alpha;
        break;
    }
    rtcd_contact c;
    memset(&c, 0, sizeof c);
    c.depth = depth;
    c.feature = (ray->direction << 31) | (ray->vertex & 0x7fffffffu);
    rtcd_v3 normal_on_b, point_on_b;
    if (ray->direction == 0) {
        /* A's vertex inside B: A moves along push; B's point is where the vertex lands. */
        normal_on_b = push;
        point_on_b = v3_add(origin, v3_scale(push, depth));
    } else {
        /* B's vertex inside A: B moves along push, so A moves along -push. */
        normal_on_b = v3_neg(push);
        point_on_b = origin;
    }
    c.normal_on_b[0] = normal_on_b.x, c.normal_on_b[1] = normal_on_b.y, c.normal_on_b[2] = normal_on_b.z;
    c.point_on_b[0] = point_on_b.x, c.point_on_b[1] = point_on_b.y, c.point_on_b[2] = point_on_b.z;
    return c;
}

static float tri_area2(rtcd_v3 a, rtcd_v3 b, rtcd_v3 c) { return v3_length(v3_cross(v3_sub(b, a), v3_sub(c, a))); }

/* Scores within this fraction of the best count as tied; ties go to the lowest
 * feature id. Contacts of a body at rest differ by rounding noise only, so an
 * exact argmax would pick a different point every step and Bullet would lose
 * its warm start; a tolerance band keeps the choice put. */
#define RTCD_REDUCE_TIE_BAND 0.01f

uint32_t rtcd_reduce_contacts(const rtcd_contact* contacts, uint32_t count, rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS])
{
    if (!contacts || !out || count == 0) return 0;
    uint32_t chosen[RTCD_MAX_MANIFOLD_POINTS];
    uint32_t n_out = count < RTCD_MAX_MANIFOLD_POINTS ? count : RTCD_MAX_MANIFOLD_POINTS;
    rtcd_v3 p[RTCD_MAX_MANIFOLD_POINTS];
    for (uint32_t k = 0; k < n_out; ++k) {
        float best_score = -RTCD_FLT_MAX;
        for (int pass = 0; pass < 2; ++pass) {
            /* pass 0 finds the best score, pass 1 the lowest feature within the band */
            uint32_t pick = RTCD_INVALID;
            float band = best_score - RTCD_REDUCE_TIE_BAND * fabsf(best_score) - 1e-12f;
            for (uint32_t i = 0; i < count; ++i) {
                int taken = 0;
                for (uint32_t j = 0; j < k; ++j) taken |= chosen[j] == i;
                if (taken) continue;
                rtcd_v3 q = v3_load(contacts[i].point_on_b);
                float score;
                if (k == 0) {
                    score = contacts[i].depth; /* deepest first */
                } else if (k == 1) {
                    rtcd_v3 d = v3_sub(q, p[0]); /* then the farthest from it */
                    score = v3_dot(d, d);
                } else if (k == 2) {
                    score = tri_area2(p[0], p[1], q); /* then the widest triangle */
                } else {
                    /* then the largest area added outside that triangle */
                    score = tri_area2(p[0], p[1], q) + tri_area2(p[1], p[2], q) + tri_area2(p[2], p[0], q) -
                            tri_area2(p[0], p[1], p[2]);
                }
                if (pass == 0) {
                    best_score = fmaxf(best_score, score);
                } else if (score >= band && (pick == RTCD_INVALID || contacts[i].feature < contacts[pick].feature)) {
                    pick = i;
                }
            }
            if (pass == 1) chosen[k] = pick;
        }
        p[k] = v3_load(contacts[chosen[k]].point_on_b);
        out[k] = contacts[chosen[k]];
    }
    return n_out;
}
