/* Contact math shared by the CPU reference and the kernels: a colliding ray
 * becomes a contact in Bullet's convention, and the reduction scores. */
#ifndef RTCD_SHARED_CONTACT_H
#define RTCD_SHARED_CONTACT_H

#include "geom.h"

#define RTCD_MODE_REPROJECTED 0
#define RTCD_MODE_RAY 1
#define RTCD_MODE_RAY_WEIGHTED 2
/* Reduction scores within this fraction of the best count as tied; ties go
 * to the lowest feature id. Contacts of a body at rest differ by rounding
 * only, so an exact argmax would pick another point every step and Bullet
 * would lose its warm start. */
#define RTCD_REDUCE_TIE_BAND 0.01f
#define RTCD_MANIFOLD_POINTS 4

typedef struct rtcd_contact_v {
    rtcd_v3 point_on_b;
    rtcd_v3 normal_on_b; /* from B to A */
    float depth;         /* >= 0: penetration */
    float rank;          /* the reduction's key: the depth it would reach over the next step (depth + approach) */
    rtcd_u32 feature;    /* direction << 31 | vertex */
} rtcd_contact_v;

/* The caster's vertex at `origin` (direction 0: A's, 1: B's) moves along
 * the unit `push` by `depth` to leave the other mesh (a negative depth: it
 * is that far from touching it). */
RTCD_INLINE rtcd_contact_v contact_pushed(rtcd_u32 direction, rtcd_u32 vertex, rtcd_v3 origin, rtcd_v3 push,
                                          float depth)
{
    rtcd_contact_v c;
    c.depth = depth;
    c.rank = depth;
    c.feature = (direction << 31) | (vertex & 0x7fffffffu);
    if (direction == 0) {
        /* A's vertex inside B: A moves along push; B's point is where the vertex lands. */
        c.normal_on_b = push;
        c.point_on_b = v3_add(origin, v3_scale(push, depth));
    } else {
        /* B's vertex inside A: B moves along push, so A moves along -push. */
        c.normal_on_b = v3_neg(push);
        c.point_on_b = origin;
    }
    return c;
}

/* direction 0: the caster (A's vertex at `origin`) is inside B; 1: B's vertex inside A.
 * `dir` is the unit ray, `n` the hit triangle's outward normal, `length` the hit t. */
RTCD_INLINE rtcd_contact_v contact_from_hit(rtcd_u32 direction, rtcd_u32 vertex, rtcd_v3 origin, rtcd_v3 dir,
                                            rtcd_v3 n, float length, int mode)
{
    float cos_alpha = v3_dot(dir, n);
    rtcd_v3 push = mode == RTCD_MODE_REPROJECTED ? n : dir;
    float depth = mode == RTCD_MODE_RAY ? length : length * cos_alpha; /* JVRC 2013 eq. 2 */
    return contact_pushed(direction, vertex, origin, push, depth);
}

RTCD_INLINE float tri_area2(rtcd_v3 a, rtcd_v3 b, rtcd_v3 c) { return v3_length(v3_cross(v3_sub(b, a), v3_sub(c, a))); }

/* How a candidate point q spreads the manifold at the k-th pick (k >= 1),
 * given the points already picked (p0..p{k-1}): farthest from the deepest,
 * then the widest triangle, then the largest area added outside it. */
RTCD_INLINE float reduce_spread(int k, rtcd_v3 q, rtcd_v3 p0, rtcd_v3 p1, rtcd_v3 p2)
{
    if (k == 1) {
        rtcd_v3 d = v3_sub(q, p0);
        return v3_dot(d, d);
    }
    if (k == 2) return tri_area2(p0, p1, q);
    return tri_area2(p0, p1, q) + tri_area2(p1, p2, q) + tri_area2(p2, p0, q) - tri_area2(p0, p1, p2);
}

/* After the first pick (depth0), points within `touch` of touching come
 * first: penetrating ones and those less than touch apart, or with no
 * penetration at all, those within touch of the nearest gap (a body about
 * to land on its flattest side gets its points there, not one point and
 * three far ones it would spin about). A point farther apart scores below
 * every one of those, its spread s mapped to -1/s, which keeps the order
 * and the relative tie band among them. */
RTCD_INLINE float reduce_level(float depth0, float touch) { return rtcd_minf(depth0, 0.0f) - touch; }

/* A spread as the reduction compares it: finite. Of bodies of some 1e9 m
 * and more a squared distance or a doubled area overflows float (Inf, and
 * Inf - Inf = NaN in the area added): it counts as the largest float, so
 * such points tie and go to the lowest feature id. Finite spreads pass
 * unchanged, bit for bit. */
RTCD_INLINE float reduce_finite(float s)
{
    return isnan(s) ? RTCD_FLT_MAX : rtcd_maxf(rtcd_minf(s, RTCD_FLT_MAX), -RTCD_FLT_MAX);
}

/* The score of a contact reduce_valid accepts (finite point and rank) is
 * finite, whatever its size: the picks' best, and so the tie band, never
 * turns NaN. */
RTCD_INLINE float reduce_score(int k, rtcd_v3 q, float depth, float level, rtcd_v3 p0, rtcd_v3 p1, rtcd_v3 p2)
{
    if (k == 0) return depth;
    float s = reduce_finite(reduce_spread(k, q, p0, p1, p2));
    return depth >= level ? s : -1.0f / (rtcd_maxf(s, 0.0f) + 1e-30f);
}

/* Lowest score still tied with `best` (finite: reduce_score), never above
 * it, so the best always ties with itself. A best below -FLT_MAX / 2 (a
 * depth of -1.7e38 m) ties with everything: the band stays a float. */
RTCD_INLINE float reduce_band(float best)
{
    return best > -0.5f * RTCD_FLT_MAX ? best - RTCD_REDUCE_TIE_BAND * fabs(best) - 1e-12f : -RTCD_FLT_MAX;
}

/* May the reduction pick c? Only when every number of it is finite: a
 * contact with an Inf coordinate or a NaN depth (non-finite input, or
 * arithmetic that overflowed) is never picked, and never scored. */
RTCD_INLINE int reduce_valid(rtcd_contact_v c)
{
    return isfinite(c.point_on_b.x) && isfinite(c.point_on_b.y) && isfinite(c.point_on_b.z) &&
           isfinite(c.normal_on_b.x) && isfinite(c.normal_on_b.y) && isfinite(c.normal_on_b.z) &&
           isfinite(c.depth) && isfinite(c.rank);
}

/* Is contact i among the first k picks? */
RTCD_INLINE int reduce_taken(const rtcd_u32* chosen, rtcd_u32 k, rtcd_u32 i)
{
    int taken = 0;
    for (rtcd_u32 j = 0; j < k; ++j) taken |= chosen[j] == i;
    return taken;
}

/* Keeps at most RTCD_MANIFOLD_POINTS of the valid contacts (reduce_valid):
 * per pick the best score (reduce_score), then the lowest feature id within
 * the tie band, so the result does not depend on the input order. chosen[k]
 * gets the index of the k-th pick; returns how many: min(4, valid contacts),
 * every index below count. score: NULL, or room for count floats, where
 * each pick's first pass keeps the scores its second pass compares (the
 * same values, computed once; the CPU's callers pass it). (The work-group
 * kernel runs the same two passes per pick across its work items, and stops
 * as this does when no valid contact is left.) */
RTCD_INLINE rtcd_u32 reduce_contacts_in(const rtcd_contact_v* c, rtcd_u32 count, float touch, rtcd_u32* chosen,
                                        float* score)
{
    rtcd_u32 n_out = count < RTCD_MANIFOLD_POINTS ? count : RTCD_MANIFOLD_POINTS;
    rtcd_v3 p[RTCD_MANIFOLD_POINTS];
    p[0] = p[1] = p[2] = p[3] = v3(0.0f, 0.0f, 0.0f);
    float level = 0.0f;
    for (rtcd_u32 k = 0; k < n_out; ++k) {
        float best = -RTCD_FLT_MAX;
        for (rtcd_u32 i = 0; i < count; ++i)
            if (!reduce_taken(chosen, k, i) && reduce_valid(c[i])) {
                float s = reduce_score((int)k, c[i].point_on_b, c[i].rank, level, p[0], p[1], p[2]);
                if (score) score[i] = s;
                best = rtcd_maxf(best, s);
            }
        float band = reduce_band(best);
        rtcd_u32 pick = RTCD_INVALID;
        for (rtcd_u32 i = 0; i < count; ++i) {
            if (reduce_taken(chosen, k, i) || !reduce_valid(c[i])) continue;
            float s = score ? score[i] : reduce_score((int)k, c[i].point_on_b, c[i].rank, level, p[0], p[1], p[2]);
            if (s >= band && (pick == RTCD_INVALID || c[i].feature < c[pick].feature)) pick = i;
        }
        if (pick == RTCD_INVALID) return k; /* no valid contact left */
        chosen[k] = pick;
        p[k] = c[pick].point_on_b;
        if (k == 0) level = reduce_level(c[pick].rank, touch);
    }
    return n_out;
}

/* reduce_contacts_in without a score buffer (the kernels). */
RTCD_INLINE rtcd_u32 reduce_contacts(const rtcd_contact_v* c, rtcd_u32 count, float touch, rtcd_u32* chosen)
{
    return reduce_contacts_in(c, count, touch, chosen, 0);
}

#endif
