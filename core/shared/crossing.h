/* Contacts where the standard rays see none, written once for the CPU
 * reference and the kernels (C11 and OpenCL C 1.2). A standard pass that
 * found nothing (no colliding ray, no prediction: no vertex near the other
 * surface follows it) runs these items after its vertices:
 * - edge crossings: an edge of one mesh passes through the other while both
 *   its ends stay outside (crossed boxes, thin features, coarse meshes). A
 *   ray along the edge from each end finds where it enters and leaves; the
 *   contact is the edge-edge one when the two triangles share an edge
 *   (normal = the cross product of both edges), else the entry face's.
 * - deep vertices: a vertex inside the other mesh whose inward ray crosses
 *   its own body first (Hermann et al. Figure 9, one mesh inside the other).
 *   Every such vertex of the pair leaves the same way, along the line from
 *   the other mesh's centre through its own mesh's (so their pushes add up
 *   instead of cancelling: a wide plate's corners each nearest a different
 *   side); where that line does not lead out, by the nearer way along its
 *   normal line.
 * Records of these items carry flags (below) so that pair_contact rebuilds
 * their contact and the ray outputs skip them. */
#ifndef RTCD_SHARED_CROSSING_H
#define RTCD_SHARED_CROSSING_H

#include "pair.h"

/* Features stay unique within a pair (the reduction breaks ties by them):
 * direction << 31 | class | index, the class 0 for a vertex's ray or
 * prediction, RTCD_REC_DEEP for a deep vertex, RTCD_REC_EDGE for an edge
 * slot (3 * triangle + k of the caster). */
#define RTCD_REC_EDGE 0x40000000u
#define RTCD_REC_DEEP 0x20000000u
#define RTCD_REC_INDEX 0x1fffffffu
#define RTCD_REC_OUTWARD 0x40000000u /* in a deep record's triangle word: it leaves along its outward normal */
#define RTCD_REC_CENTRE 0x20000000u  /* ...: it leaves along the pair's centre line (deep_way_out) */
#define RTCD_COINCIDENT_SAMPLES 64u  /* deep vertices a direction of coincident bodies tests, at most */
#define RTCD_REC_TRI_MASK 0x0fffffffu /* an edge record's entry triangle; its shared-edge slot above (3: none) */
#define RTCD_REC_SHARED_SHIFT 28u

/* Items of the second phase: every edge slot (3 per triangle) of A then of
 * B when edge crossings are on, then every vertex of A then B when deep
 * contacts are. */
RTCD_INLINE rtcd_u32 pair_crossing_items(const rtcd_pair_ctx* c)
{
    rtcd_u32 edges = c->edge_crossings ? 3u * (c->a.tri_count + c->b.tri_count) : 0u;
    return edges + (c->deep_contacts ? c->a.vertex_count + c->b.vertex_count : 0u);
}

/* May a triangle of the caster (direction 0: A) touch the target or lie
 * inside it? Every point of a triangle is within the caster's longest edge
 * of the triangle's vertices, so a ball of vertices farther than its radius
 * plus that edge from the target's surface, and outside it, holds none
 * (nor a vertex inside the target). Exact in that direction: a pair that
 * fails it both ways finds nothing in the second phase, which the CPU and
 * the kernels then skip. */
/* Ball k (its centre in the caster's frame) by pair_may_cross's test. */
RTCD_INLINE int pair_ball_may_cross(const rtcd_pair_ctx* c, rtcd_u32 direction, const RTCD_GLOBAL float* ball)
{
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_v3 centre = xf_point(side.to_target, v3_load(ball));
    return view_may_contain(side.target, centre) || view_may_be_near(side.target, centre, ball[3] + side.caster->max_edge);
}

RTCD_INLINE int pair_may_cross(const rtcd_pair_ctx* c, rtcd_u32 direction)
{
    const rtcd_mesh_view* caster = direction ? &c->b : &c->a;
    const RTCD_GLOBAL float* ball = caster->spheres;
    for (rtcd_u32 k = 0; k < caster->sphere_count; ++k, ball += caster->sphere_stride)
        if (pair_ball_may_cross(c, direction, ball)) return 1;
    return 0;
}

/* Ball k of the caster (the first 32 of mesh_view.spheres) by the standard
 * pass's test (pair_ball_may_hold) or, `crossing`, the second phase's
 * (pair_ball_may_cross: a vertex of a ball without it is not one that
 * pair_vertex_may_cross lets through, the ball being outside and far). */
RTCD_INLINE int pair_ball_passes(const rtcd_pair_ctx* c, rtcd_u32 direction, rtcd_u32 k, int crossing)
{
    const rtcd_mesh_view* caster = direction ? &c->b : &c->a;
    if (k >= caster->sphere_count) return 0;
    const RTCD_GLOBAL float* ball = caster->spheres + k * caster->sphere_stride;
    return crossing ? pair_ball_may_cross(c, direction, ball) : pair_ball_may_hold(c, direction, v3_load(ball), ball[3]);
}

/* Bit k set when ball k of the caster's first 32 passes (pair_ball_passes). */
RTCD_INLINE rtcd_u32 pair_ball_mask(const rtcd_pair_ctx* c, rtcd_u32 direction, int crossing)
{
    rtcd_u32 mask = 0u;
    for (rtcd_u32 k = 0; k < 32u; ++k)
        if (pair_ball_passes(c, direction, k, crossing)) mask |= 1u << k;
    return mask;
}

/* May vertex i of the caster be an end of an edge that crosses the target,
 * or lie inside it? Both ends of such an edge lie within the edge's length
 * of where it crosses the surface, and a deep vertex is inside: a vertex
 * farther than the caster's longest edge from the target's surface, and
 * outside, is neither. The kernels mark these before the second phase and
 * skip the items of unmarked vertices and edges (crossing_unit_mask). */
RTCD_INLINE int pair_vertex_may_cross(const rtcd_pair_ctx* c, rtcd_u32 direction, rtcd_u32 i)
{
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_v3 p = xf_point(side.to_target, v3_load(side.caster->vertices + 3 * i));
    return view_may_contain(side.target, p) || view_may_be_near(side.target, p, side.caster->max_edge);
}

/* Vertex v of the pair (A's then B's) by pair_vertex_may_cross, its ball
 * (balls: pair_ball_mask with crossing, per direction, where the view has
 * vertex_balls) deciding first. */
RTCD_INLINE int pair_vertex_may_cross_at(const rtcd_pair_ctx* c, rtcd_u32 v, const rtcd_u32 balls[2])
{
    rtcd_u32 direction = v >= c->a.vertex_count, i = direction ? v - c->a.vertex_count : v;
    if (vertex_ball_skipped(direction ? &c->b : &c->a, balls[direction], i)) return 0;
    return pair_vertex_may_cross(c, direction, i);
}

/* Word w of the pair's vertex marks: bit b for vertex 32 w + b (A's then
 * B's) by pair_vertex_may_cross_at; a word per work item, no atomics. */
RTCD_INLINE rtcd_u32 pair_crossing_mark_word(const rtcd_pair_ctx* c, rtcd_u32 w, const rtcd_u32 balls[2])
{
    rtcd_u32 nv = c->a.vertex_count + c->b.vertex_count, word = 0u;
    for (rtcd_u32 b = 0; b < 32u && 32u * w + b < nv; ++b)
        if (pair_vertex_may_cross_at(c, 32u * w + b, balls)) word |= 1u << b;
    return word;
}

/* The second phase's items by unit (pair_crossing_items' order): a
 * triangle's three edge slots (A's triangles then B's) when edge crossings
 * are on, then one deep vertex each; one look at a triangle's marks decides
 * its three edges. */
RTCD_INLINE rtcd_u32 pair_crossing_units(const rtcd_pair_ctx* c)
{
    return (c->edge_crossings ? c->a.tri_count + c->b.tri_count : 0u) +
           (c->deep_contacts ? c->a.vertex_count + c->b.vertex_count : 0u);
}

/* Unit u: returns its item count (3 edge slots, or 1 deep vertex), sets
 * its first item and the vertices (A's then B's) whose marks decide it: the
 * triangle's corners (edge slot j runs from v[j] to v[(j + 1) % 3]), or the
 * vertex itself in all three. */
RTCD_INLINE rtcd_u32 pair_crossing_unit(const rtcd_pair_ctx* c, rtcd_u32 u, rtcd_u32* first, rtcd_u32 v[3])
{
    rtcd_u32 tris = c->edge_crossings ? c->a.tri_count + c->b.tri_count : 0u;
    if (u < tris) {
        rtcd_u32 direction = u >= c->a.tri_count, t = direction ? u - c->a.tri_count : u;
        const rtcd_mesh_view* caster = direction ? &c->b : &c->a;
        rtcd_u32 base = direction ? c->a.vertex_count : 0u;
        for (rtcd_u32 j = 0; j < 3u; ++j) v[j] = base + caster->indices[3u * t + j];
        *first = 3u * u;
        return 3u;
    }
    *first = 2u * tris + u;
    v[0] = v[1] = v[2] = u - tris;
    return 1u;
}

/* The unit's items its vertices' marks let through (bit j: item first + j),
 * from those marks (bit i: v[i] marked): an edge needs both ends, a deep
 * vertex itself. */
RTCD_INLINE rtcd_u32 crossing_unit_mask(rtcd_u32 count, rtcd_u32 marked)
{
    if (count == 1u) return marked & 1u;
    /* Edge j runs from corner j to corner (j + 1) % 3: bit j of the marks
     * rotated down by one is the second end's. */
    rtcd_u32 next = (marked >> 1) | ((marked & 1u) << 2);
    return marked & next & 7u;
}

/* Does a record come from the second phase (no Hermann ray of its own)? */
RTCD_INLINE int rec_is_crossing(rtcd_ray_rec r) { return (r.feature & (RTCD_REC_EDGE | RTCD_REC_DEEP)) != 0u; }

/* Is a record a colliding ray (not a speculative or second-phase contact)? */
RTCD_INLINE int rec_is_ray(rtcd_ray_rec r) { return !(r.tri & RTCD_ENTRY_PREDICTION) && !rec_is_crossing(r); }

/* Edge slot `slot` (3 t + k) of the caster, in the target's frame: its ends. */
RTCD_INLINE void crossing_edge(const rtcd_mesh_view* caster, const rtcd_xform* x, rtcd_u32 slot, rtcd_v3* p0,
                               rtcd_v3* p1)
{
    rtcd_u32 t = slot / 3u, k = slot % 3u;
    *p0 = xf_point(x, v3_load(caster->vertices + 3 * caster->indices[3 * t + k]));
    *p1 = xf_point(x, v3_load(caster->vertices + 3 * caster->indices[3 * t + (k + 1u) % 3u]));
}

/* The contact of an edge record in the target's frame: the caster's edge
 * point `at`, the unit push that moves the caster out, and the depth.
 * Returns 0 when the geometry gives no positive depth. */
RTCD_INLINE int crossing_edge_contact(const rtcd_mesh_view* caster, const rtcd_mesh_view* target, const rtcd_xform* x,
                                      rtcd_ray_rec r, rtcd_v3* at, rtcd_v3* push, float* depth)
{
    rtcd_v3 p0, p1;
    crossing_edge(caster, x, r.feature & RTCD_REC_INDEX, &p0, &p1);
    rtcd_u32 entry = r.tri & RTCD_REC_TRI_MASK, shared = r.tri >> RTCD_REC_SHARED_SHIFT;
    rtcd_v3 n1 = v3_load(target->tnormals + 3 * entry);
    rtcd_v3 e = v3_sub(p1, p0);
    if (shared < 3u) {
        /* Edge against edge: the normal of both lines, pointing out of the
         * target (towards its two faces' normals), and their gap along it. */
        rtcd_u32 exit_tri = target->neighbors[3 * entry + shared];
        rtcd_v3 q0 = v3_load(target->vertices + 3 * target->indices[3 * entry + shared]);
        rtcd_v3 q1 = v3_load(target->vertices + 3 * target->indices[3 * entry + (shared + 1u) % 3u]);
        rtcd_v3 f = v3_sub(q1, q0);
        rtcd_v3 m = v3_cross(e, f);
        float len = v3_length(m);
        if (len > 1e-6f * v3_length(e) * v3_length(f)) {
            rtcd_v3 n = v3_scale(m, 1.0f / len);
            if (v3_dot(n, v3_add(n1, v3_load(target->tnormals + 3 * exit_tri))) < 0.0f) n = v3_neg(n);
            float d = v3_dot(v3_sub(q0, p0), n);
            if (!(d > 0.0f)) return 0;
            /* The caster's point nearest the target's edge line. */
            rtcd_v3 w = v3_sub(p0, q0);
            float a = v3_dot(e, e), b = v3_dot(e, f), cc = v3_dot(f, f), dd = v3_dot(e, w), ee = v3_dot(f, w);
            float den = a * cc - b * b;
            float s = den > 0.0f ? rtcd_minf(rtcd_maxf((b * ee - cc * dd) / den, 0.0f), 1.0f) : 0.5f;
            *at = v3_add(p0, v3_scale(e, s));
            *push = n;
            *depth = d;
            return 1;
        }
    }
    /* Else the entry face: the edge's exit point lies deepest below it. */
    rtcd_v3 exit_point = v3_add(p0, v3_scale(e, r.t));
    float d = v3_dot(v3_sub(v3_load(target->vertices + 3 * target->indices[3 * entry]), exit_point), n1);
    if (!(d > 0.0f)) return 0;
    *at = exit_point;
    *push = n1;
    *depth = d;
    return 1;
}

/* Edge slot `slot` of the caster (direction 0: A's edges into B): a record
 * when the edge enters and leaves the target between its two ends. */
RTCD_INLINE int pair_edge_item(const rtcd_pair_ctx* c, rtcd_u32 direction, rtcd_u32 slot, rtcd_pass_counts* n,
                               rtcd_ray_rec* rec)
{
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_u32 t = slot / 3u;
    /* Each edge once: from the lower of its two triangles. Coincident
     * bodies' edges lie on each other's surfaces: their deep vertices
     * separate them. */
    if (side.caster->neighbors[slot] < t || slot > RTCD_REC_INDEX || ((c->coincident >> direction) & 1u))
        return RTCD_WALK_LOST;
    rtcd_v3 p0, p1;
    crossing_edge(side.caster, side.to_target, slot, &p0, &p1);
    rtcd_v3 e = v3_sub(p1, p0);
    float len = v3_length(e);
    if (!(len > 0.0f)) return RTCD_WALK_LOST;
    /* One end lies within half the edge of where it crosses the surface. */
    rtcd_v3 mid = v3_scale(v3_add(p0, p1), 0.5f);
    if (!view_may_contain(side.target, mid) && !view_may_be_near(side.target, mid, 0.5f * len)) return RTCD_WALK_LOST;
    n->candidates += 1u;
    rtcd_v3 d = v3_scale(e, 1.0f / len);
    n->rays += 1u;
    rtcd_tri_hit in = view_first_hit(side.target, c->brute_force, p0, d, len);
    if (in.tri == RTCD_INVALID || !(v3_dot(d, v3_load(side.target->tnormals + 3 * in.tri)) < 0.0f))
        return RTCD_WALK_LOST; /* does not enter from this end: outside, or the end is inside */
    rtcd_v3 back = v3_neg(d);
    n->rays += 1u;
    rtcd_tri_hit out = view_first_hit(side.target, c->brute_force, p1, back, len);
    if (out.tri == RTCD_INVALID || !(v3_dot(back, v3_load(side.target->tnormals + 3 * out.tri)) < 0.0f) ||
        !(in.t + out.t < len) || in.tri >= RTCD_REC_TRI_MASK)
        return RTCD_WALK_LOST;
    rtcd_u32 shared = 3u;
    for (rtcd_u32 k = 0; k < 3u; ++k)
        if (side.target->neighbors[3 * in.tri + k] == out.tri) shared = k;
    rec->feature = (direction << 31) | RTCD_REC_EDGE | slot;
    rec->tri = in.tri | (shared << RTCD_REC_SHARED_SHIFT);
    rec->t = (len - out.t) / len; /* where it leaves, as a fraction of the edge */
    rtcd_v3 at, push;
    float depth;
    return crossing_edge_contact(side.caster, side.target, side.to_target, *rec, &at, &push, &depth) ? RTCD_WALK_HIT
                                                                                       : RTCD_WALK_LOST;
}

/* The deep vertices' common way out, in the target's frame: from the
 * target's box centre through the caster's. Where they coincide, A leaves
 * along the world's +z and B along -z (opposite ways, so the two
 * directions' pushes add up; any fixed axis would do). */
RTCD_INLINE rtcd_v3 deep_way_out(const rtcd_pair_ctx* c, rtcd_u32 direction)
{
    const rtcd_pair_side side = pair_side(c, direction);
    if ((c->coincident >> direction) & 1u) {
        const rtcd_xform* xt = direction ? &c->xa : &c->xb;
        rtcd_xform to_target = xf_inverse(xt);
        return xf_rotate(&to_target, v3(0.0f, 0.0f, direction ? -1.0f : 1.0f));
    }
    rtcd_v3 from = v3_scale(v3_add(side.target->lo, side.target->hi), 0.5f);
    rtcd_v3 to = xf_point(side.to_target, v3_scale(v3_add(side.caster->lo, side.caster->hi), 0.5f));
    rtcd_v3 d = v3_sub(to, from);
    return v3_scale(d, 1.0f / v3_length(d));
}

/* Vertex i of the caster when every ray of its direction was rejected: a
 * record when it lies inside the target (its inward and outward rays both
 * leave the target first), along the pair's way out, else the nearer way
 * along its normal line. */
RTCD_INLINE int pair_deep_item(const rtcd_pair_ctx* c, rtcd_u32 direction, rtcd_u32 i, rtcd_pass_counts* n,
                               rtcd_ray_rec* rec)
{
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_v3 nrm = v3_load(side.caster->vnormals + 3 * i);
    if (nrm.x == 0.0f && nrm.y == 0.0f && nrm.z == 0.0f) return RTCD_WALK_LOST;
    /* Coincident bodies: every vertex is deep, and a few spread over the
     * mesh make the same manifold (bounding the pair's rays). */
    int coincident = (int)((c->coincident >> direction) & 1u);
    if (coincident && i % ((side.caster->vertex_count + RTCD_COINCIDENT_SAMPLES - 1u) / RTCD_COINCIDENT_SAMPLES))
        return RTCD_WALK_LOST;
    rtcd_v3 o = xf_point(side.to_target, v3_load(side.caster->vertices + 3 * i));
    if (!view_may_contain(side.target, o)) return RTCD_WALK_LOST;
    n->candidates += 1u;
    rtcd_v3 dir = xf_rotate(side.to_target, v3_neg(nrm));
    /* A vertex on the other surface (coincident bodies) is tested a hair
     * inside its own body, where it is inside the other too. */
    if (coincident) o = v3_add(o, v3_scale(dir, 1e-3f * v3_length(v3_sub(side.target->hi, side.target->lo))));
    n->rays += 2u;
    rtcd_tri_hit hin = view_first_hit(side.target, c->brute_force, o, dir, RTCD_FLT_MAX);
    rtcd_tri_hit hout = view_first_hit(side.target, c->brute_force, o, v3_neg(dir), RTCD_FLT_MAX);
    if (hin.tri == RTCD_INVALID || hout.tri == RTCD_INVALID || hin.tri >= RTCD_REC_CENTRE ||
        hout.tri >= RTCD_REC_CENTRE || i > RTCD_REC_INDEX)
        return RTCD_WALK_LOST;
    float cin = v3_dot(dir, v3_load(side.target->tnormals + 3 * hin.tri));
    float cout = -v3_dot(dir, v3_load(side.target->tnormals + 3 * hout.tri));
    if (!(cin > 0.0f) || !(cout > 0.0f)) return RTCD_WALK_LOST; /* outside */
    rec->feature = (direction << 31) | RTCD_REC_DEEP | i;
    rtcd_v3 way = deep_way_out(c, direction);
    n->rays += 1u;
    rtcd_tri_hit h = view_first_hit(side.target, c->brute_force, o, way, RTCD_FLT_MAX);
    if (h.tri < RTCD_REC_CENTRE && v3_dot(way, v3_load(side.target->tnormals + 3 * h.tri)) > 0.0f) {
        rec->tri = h.tri | RTCD_REC_CENTRE;
        rec->t = h.t;
        return RTCD_WALK_HIT;
    }
    int outward = hout.t * cout < hin.t * cin;
    rec->tri = outward ? hout.tri | RTCD_REC_OUTWARD : hin.tri;
    rec->t = outward ? hout.t : hin.t;
    return RTCD_WALK_HIT;
}

/* Item k of the second phase (pair_crossing_items). */
RTCD_INLINE int pair_crossing_item(const rtcd_pair_ctx* c, rtcd_u32 k, rtcd_pass_counts* n, rtcd_ray_rec* rec)
{
    if (c->edge_crossings) {
        rtcd_u32 ea = 3u * c->a.tri_count, eb = 3u * c->b.tri_count;
        if (k < ea) return pair_edge_item(c, 0u, k, n, rec);
        if (k < ea + eb) return pair_edge_item(c, 1u, k - ea, n, rec);
        k -= ea + eb;
    }
    if (k < c->a.vertex_count) return pair_deep_item(c, 0u, k, n, rec);
    return pair_deep_item(c, 1u, k - c->a.vertex_count, n, rec);
}

/* The contact of any record, in world space (Bullet's convention): a
 * colliding ray's or a speculative one's (pair_ray_contact), an edge
 * crossing's, or a deep vertex's (along the way its record says). */
RTCD_INLINE rtcd_contact_v pair_contact(const rtcd_pair_ctx* c, rtcd_ray_rec r, int mode)
{
    if (!rec_is_crossing(r)) return pair_ray_contact(c, r, mode);
    rtcd_u32 direction = r.feature >> 31;
    const rtcd_xform* xt = direction ? &c->xa : &c->xb;
    if (r.feature & RTCD_REC_EDGE) {
        const rtcd_pair_side side = pair_side(c, direction);
        rtcd_v3 at = v3(0.0f, 0.0f, 0.0f), push = at;
        float depth = 0.0f;
        crossing_edge_contact(side.caster, side.target, side.to_target, r, &at, &push, &depth);
        return contact_pushed(direction, r.feature & 0x7fffffffu, xf_point(xt, at), xf_rotate(xt, push), depth);
    }
    rtcd_ray_rec plain = r;
    plain.feature = (r.feature & 0x80000000u) | (r.feature & RTCD_REC_INDEX);
    plain.tri = r.tri & ~(RTCD_REC_OUTWARD | RTCD_REC_CENTRE);
    rtcd_v3 o, d, nrm;
    pair_ray_frame(c, plain, &o, &d, &nrm);
    if (r.tri & RTCD_REC_OUTWARD) d = v3_neg(d);
    if (r.tri & RTCD_REC_CENTRE) d = xf_rotate(xt, deep_way_out(c, direction));
    rtcd_contact_v out = contact_from_hit(direction, 0u, o, d, nrm, r.t, mode);
    out.feature = r.feature;
    return out;
}

#endif
