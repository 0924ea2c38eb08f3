/* The per-vertex pipeline of one pair, written once for the CPU reference
 * and the kernels (C11 and OpenCL C 1.2): the candidate test, the standard
 * ray with Hermann's two tests, the predictive and motion rays, the walk of a
 * kept ray (JVRC 2013 Algorithm 1), and what a colliding ray becomes (a world
 * ray, a contact). Callers only distribute the items: the CPU loops over its
 * candidates and kept rays, the kernels give them to work items. */
#ifndef RTCD_SHARED_PAIR_H
#define RTCD_SHARED_PAIR_H

#include "contact.h"
#include "mesh_view.h"

/* A result of one item: the casting vertex (direction << 31 | vertex), the
 * triangle of the other mesh (| RTCD_ENTRY_PREDICTION for a prediction), and
 * the ray's parameter there. */
typedef struct rtcd_ray_rec {
    rtcd_u32 feature;
    rtcd_u32 tri;
    float t;
} rtcd_ray_rec;

/* What the items of one pass counted. */
typedef struct rtcd_pass_counts {
    rtcd_u32 candidates;      /* vertices that may be inside (or near) the other mesh */
    rtcd_u32 rays;            /* first-hit queries, self tests included */
    rtcd_u32 predictive_rays; /* opposite and motion rays */
    rtcd_u32 steps;           /* triangle tests of the walks */
} rtcd_pass_counts;

/* One pair's pass: both meshes, poses and the algorithm's parameters. */
typedef struct rtcd_pair_ctx {
    rtcd_mesh_view a, b;
    rtcd_xform xa, xb;          /* world poses */
    rtcd_xform a_in_b, b_in_a;  /* each caster in its target's frame */
    rtcd_u32 brute_force;
    rtcd_u32 predictive;        /* the predictive algorithm: lost rays stay as predictions */
    rtcd_u32 predict_pass;      /* a standard pass that casts predictive rays (extension > 0) */
    float extension, culling;
    rtcd_u32 max_iterations;
    rtcd_u32 has_motion;        /* the poses one call earlier are known: speculative contacts past the margin */
    rtcd_u32 motion_rays;       /* with has_motion, the predictive algorithm: motion rays too */
    rtcd_u32 deformed;          /* with has_motion, bit k: mesh k (A, B) deformed since that call (prev_vertices) */
    rtcd_u32 reshaped;          /* bit k: mesh k deformed since the last call, motion known or not */
    rtcd_xform a_in_b_before, b_in_a_before;
    float speculative;          /* predictions this close to their triangle's plane are contacts; 0: none */
    rtcd_u32 edge_crossings, deep_contacts; /* the second phase's items (crossing.h) */
    /* Speculative contacts this close need no motion towards them, and
     * points this close to touching come first in the reduction. */
    float margin;
    rtcd_u32 coincident; /* bit d: direction d's box centres coincide (pair_centres_coincide) */
} rtcd_pair_ctx;

/* One direction of a pair: the caster's vertices against the target
 * (direction 0: A's vertices into B, 1: B's into A). */
typedef struct rtcd_pair_side {
    const rtcd_mesh_view* caster;
    const rtcd_mesh_view* target;
    const rtcd_xform* to_target; /* caster's frame to the target's */
    const rtcd_xform* before;    /* the same one step back (when the context has_motion) */
} rtcd_pair_side;

RTCD_INLINE rtcd_pair_side pair_side(const rtcd_pair_ctx* c, rtcd_u32 direction)
{
    rtcd_pair_side s;
    s.caster = direction ? &c->b : &c->a;
    s.target = direction ? &c->a : &c->b;
    s.to_target = direction ? &c->b_in_a : &c->a_in_b;
    s.before = direction ? &c->b_in_a_before : &c->a_in_b_before;
    return s;
}

/* How caster vertex i (v in its own frame, o in the target's) moved over
 * the last step, in the target's frame (needs has_motion): the rigid motion
 * and, when the caster deformed since that call, its own deformation (a
 * twist slides vertices sideways onto the other surface). The target's
 * deformation is not per vertex here; the displacement bound covers it. */
RTCD_INLINE rtcd_v3 pair_vertex_motion(const rtcd_pair_ctx* c, rtcd_u32 direction, rtcd_u32 i, rtcd_v3 v, rtcd_v3 o)
{
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_v3 was = (c->deformed >> direction) & 1u ? v3_load(side.caster->prev_vertices + 3 * i) : v;
    return v3_sub(o, xf_point(side.before, was));
}

/* Do the meshes' box centres coincide (within 1e-4 of the target's box
 * diagonal, in the target's frame)? Bodies created at one pose: their
 * vertices lie on each other's surfaces, where every ray ties. */
RTCD_INLINE rtcd_u32 pair_centres_coincide(const rtcd_pair_ctx* c, rtcd_u32 direction)
{
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_v3 from = v3_scale(v3_add(side.target->lo, side.target->hi), 0.5f);
    rtcd_v3 to = xf_point(side.to_target, v3_scale(v3_add(side.caster->lo, side.caster->hi), 0.5f));
    return (rtcd_u32) !(v3_length(v3_sub(to, from)) > 1e-4f * v3_length(v3_sub(side.target->hi, side.target->lo)));
}

/* before: b in a's frame one call earlier, or NULL. algorithm: 0 standard,
 * 1 iterative, 2 predictive (rtcd_algorithm). */
RTCD_INLINE void pair_ctx_init(rtcd_pair_ctx* c, const rtcd_xform* xa, const rtcd_xform* xb, rtcd_u32 algorithm,
                               rtcd_u32 brute_force, float extension, float culling, rtcd_u32 max_iterations,
                               const rtcd_xform* before, rtcd_u32 deformed, float speculative)
{
    c->xa = *xa;
    c->xb = *xb;
    c->a_in_b = xf_relative(xb, xa);
    c->b_in_a = xf_relative(xa, xb);
    c->brute_force = brute_force;
    /* The iterative algorithm predicts too when it makes speculative
     * contacts, but only out to the speculative margin (its extension and
     * culling, rtcd_track_plan) and without motion rays: the vertices near
     * the other surface now, not those the motion brings. */
    c->predictive = algorithm == 2u || (algorithm == 1u && speculative > 0.0f);
    c->extension = extension;
    c->predict_pass = c->predictive && extension > 0.0f;
    c->culling = culling;
    c->max_iterations = max_iterations;
    /* Both predicting algorithms reach past the margin only where the
     * last step's motion brings a vertex onto the other surface
     * (pair_speculative); the iterative one casts no motion rays. */
    c->has_motion = c->predict_pass && before != 0;
    c->motion_rays = algorithm == 2u && c->has_motion;
    c->deformed = c->has_motion ? deformed & 3u : 0u;
    c->reshaped = deformed & 3u;
    c->speculative = c->predict_pass ? speculative : 0.0f;
    c->edge_crossings = c->deep_contacts = 0u; /* the caller's choice */
    c->margin = 0.0f;
    /* Once per pair, not per second-phase item (crossing.h). */
    c->coincident = pair_centres_coincide(c, 0u) | (pair_centres_coincide(c, 1u) << 1);
    if (c->has_motion) {
        c->b_in_a_before = *before;
        c->a_in_b_before = xf_inverse(before);
    }
}

/* The meshes' boxes as oriented boxes (padded by the predictive extension):
 * disjoint ones cannot touch, nor come near. */
RTCD_INLINE int pair_boxes_overlap(const rtcd_pair_ctx* c)
{
    rtcd_v3 ca = v3_scale(v3_add(c->a.lo, c->a.hi), 0.5f), ha = v3_sub(c->a.hi, ca);
    rtcd_v3 cb = v3_scale(v3_add(c->b.lo, c->b.hi), 0.5f), hb = v3_sub(c->b.hi, cb);
    float pad = 1e-5f * (v3_length(ha) + v3_length(hb)) + (c->predict_pass ? c->extension : 0.0f);
    return obb_overlap(ca, ha, cb, hb, &c->b_in_a, pad);
}

/* May p (target frame) collide, or (predictive pass) come near? */
RTCD_INLINE int pair_is_candidate(const rtcd_pair_ctx* c, const rtcd_mesh_view* target, rtcd_v3 p)
{
    return view_may_contain(target, p) || (c->predict_pass && view_may_be_near(target, p, c->extension));
}

/* May a ball of caster vertices (centre in the caster's frame, radius) hold
 * one that pair_sweep_vertex does not give up on? A ball farther than its
 * radius plus the extension from the target's grid box holds no candidate.
 * A ball whose centre is outside the target and farther than its radius
 * plus `clear` from its surface holds vertices that are outside, so their
 * normal ray cannot collide, and farther than the longest predictive ray
 * (RTCD_PREDICT_REACH x culling; the motion ray is shorter). The small
 * extra keeps rounding out of it. The CPU tests its vertex clusters with it
 * and the kernels their merged balls (any ball that holds the vertices
 * will do); both then skip the vertices of a ball turned down. */
RTCD_INLINE int pair_ball_may_hold(const rtcd_pair_ctx* c, rtcd_u32 direction, rtcd_v3 centre, float radius)
{
    const rtcd_pair_side side = pair_side(c, direction);
    float reach = c->predict_pass ? c->extension : 0.0f;
    float clear = (c->predict_pass ? RTCD_PREDICT_REACH * c->culling : 0.0f) + 1e-4f * side.target->reach;
    rtcd_v3 p = xf_point(side.to_target, centre);
    if (!view_ball_near_grid(side.target, p, radius, reach)) return 0;
    return view_may_contain(side.target, p) || view_may_be_near(side.target, p, radius + clear);
}

/* Is caster vertex i in a ball that `mask` (bit k: ball k let through)
 * turned down? Never without per-vertex balls (the CPU's views). */
RTCD_INLINE int vertex_ball_skipped(const rtcd_mesh_view* caster, rtcd_u32 mask, rtcd_u32 i)
{
    if (!caster->vertex_balls) return 0;
    rtcd_u32 ball = caster->vertex_balls[i];
    return ball < 32u && !((mask >> ball) & 1u);
}

/* The standard ray of caster vertex i (local_v, dir_local in its own frame;
 * o, dir in the target's): it collides when its first hit exits the target
 * and the caster's own surface is not hit before. */
RTCD_INLINE int pair_cast_normal(const rtcd_pair_ctx* c, const rtcd_mesh_view* caster, const rtcd_mesh_view* target,
                                 rtcd_u32 i, rtcd_v3 local_v, rtcd_v3 dir_local, rtcd_v3 o, rtcd_v3 dir,
                                 rtcd_pass_counts* n, rtcd_tri_hit* out)
{
    n->rays += 1u;
    rtcd_tri_hit hit = view_first_hit(target, c->brute_force, o, dir, RTCD_FLT_MAX);
    if (hit.tri == RTCD_INVALID || !(v3_dot(dir, v3_load(target->tnormals + 3 * hit.tri)) > 0.0f))
        return 0; /* enters the target: the vertex is outside */
    n->rays += 1u;
    if (view_hit_before(caster, c->brute_force, local_v, dir_local, hit.t, i)) return 0;
    *out = hit;
    return 1;
}

/* Vertex i of the caster (direction 0: A's vertex into B; 1: B's into A) in
 * a standard pass: RTCD_WALK_HIT (a colliding ray, *rec), RTCD_WALK_PREDICT
 * (a predictive ray to keep) or RTCD_WALK_LOST (nothing). */
RTCD_INLINE int pair_sweep_vertex(const rtcd_pair_ctx* c, rtcd_u32 direction, rtcd_u32 i, rtcd_pass_counts* n,
                                  rtcd_ray_rec* rec)
{
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_v3 nrm = v3_load(side.caster->vnormals + 3 * i);
    if (nrm.x == 0.0f && nrm.y == 0.0f && nrm.z == 0.0f) return RTCD_WALK_LOST; /* unreferenced vertex */
    rtcd_v3 local_v = v3_load(side.caster->vertices + 3 * i);
    rtcd_v3 o = xf_point(side.to_target, local_v);
    int inside = view_may_contain(side.target, o);
    if (!inside && !(c->predict_pass && view_may_be_near(side.target, o, c->extension))) return RTCD_WALK_LOST;
    n->candidates += 1u;
    rtcd_v3 dir_local = v3_neg(nrm);
    rtcd_v3 dir = xf_rotate(side.to_target, dir_local);
    rec->feature = (direction << 31) | i;
    rtcd_tri_hit hit;
    if (inside && pair_cast_normal(c, side.caster, side.target, i, local_v, dir_local, o, dir, n, &hit)) {
        rec->tri = hit.tri;
        rec->t = hit.t;
        return RTCD_WALK_HIT;
    }
    if (!c->predict_pass) return RTCD_WALK_LOST;
    /* The opposite ray: the triangle it enters is where this vertex would
     * go in, kept when the vertex is within the culling distance of its plane. */
    n->predictive_rays += 1u;
    rtcd_v3 back = v3_neg(dir);
    rtcd_tri_hit ph = view_first_hit(side.target, c->brute_force, o, back, RTCD_PREDICT_REACH * c->culling);
    if (ph.tri != RTCD_INVALID) {
        float cosn = v3_dot(back, v3_load(side.target->tnormals + 3 * ph.tri));
        if (cosn < 0.0f && prediction_within(ph.t, -cosn, c->culling)) {
            rec->tri = ph.tri | RTCD_ENTRY_PREDICTION;
            rec->t = ph.t;
            return RTCD_WALK_PREDICT;
        }
    }
    /* Else along the vertex's own motion in the last step: a vertex that the
     * other mesh's rim slides over is never in front of its normal. */
    if (!c->motion_rays) return RTCD_WALK_LOST;
    rtcd_v3 motion = pair_vertex_motion(c, direction, i, local_v, o);
    float travel = v3_length(motion);
    if (!(travel > 0.0f)) return RTCD_WALK_LOST;
    n->predictive_rays += 1u;
    rtcd_v3 md = v3_scale(motion, 1.0f / travel);
    rtcd_tri_hit mh = view_first_hit(side.target, c->brute_force, o, md, c->culling);
    if (mh.tri == RTCD_INVALID || !(v3_dot(md, v3_load(side.target->tnormals + 3 * mh.tri)) < 0.0f))
        return RTCD_WALK_LOST;
    rec->tri = mh.tri | RTCD_ENTRY_PREDICTION;
    rec->t = mh.t;
    return RTCD_WALK_PREDICT;
}

/* A kept ray (feature, triangle word) relaunched on its triangle in an
 * iterative pass: HIT, PREDICT (kept, not colliding) or LOST (dropped). */
RTCD_INLINE int pair_walk_entry(const rtcd_pair_ctx* c, rtcd_u32 feature, rtcd_u32 tri_word, rtcd_pass_counts* n,
                                rtcd_ray_rec* rec)
{
    rtcd_u32 direction = feature >> 31, i = feature & 0x7fffffffu;
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_v3 local_v = v3_load(side.caster->vertices + 3 * i);
    rtcd_v3 p = xf_point(side.to_target, local_v);
    rtcd_v3 dir_local = v3_neg(v3_load(side.caster->vnormals + 3 * i));
    rtcd_v3 dir = xf_rotate(side.to_target, dir_local);
    rtcd_u32 tri = tri_word & RTCD_ENTRY_TRIANGLE;
    float t = 0.0f;
    int r = walk_ray(side.target->vertices, side.target->indices, side.target->neighbors, side.target->tnormals, p, dir,
                     c->max_iterations, (int)c->predictive, c->culling, &tri, &t, &n->steps);
    if (r == RTCD_WALK_BEHIND || (r == RTCD_WALK_HIT && c->reshaped)) {
        /* The line went into the other mesh behind the vertex: on a bumpy
         * surface the walk found that crossing, not the exit ahead (a
         * deformation or a slide carried the vertex over a bump). The
         * standard ray settles it. So it does for every hit of a pair
         * whose meshes deformed since the last call: a pulse carries
         * vertices out of the other mesh, where the walk still reaches an
         * exit beyond the surface the ray now enters first (0.4 % of the
         * rays kept wrongly, test_deform_opencl); colliding rays are few
         * beside the predictions, so this costs little. */
        rtcd_tri_hit hit;
        r = RTCD_WALK_LOST;
        if (view_may_contain(side.target, p) &&
            pair_cast_normal(c, side.caster, side.target, i, local_v, dir_local, p, dir, n, &hit)) {
            tri = hit.tri;
            t = hit.t;
            r = RTCD_WALK_HIT;
        }
    }
    /* A vertex in an empty cell of the other mesh's grid is certainly
     * outside it, whatever triangle the walk reached. */
    if (r == RTCD_WALK_HIT && !view_may_contain(side.target, p)) r = RTCD_WALK_LOST;
    /* A colliding ray ends inside its caster (its own surface is not hit
     * first), within the caster's box diagonal: an exit farther on is one
     * the walk reached round the other mesh (over the apex of a terrain's
     * steep spike, past the face the ray enters first), not along the ray. */
    if (r == RTCD_WALK_HIT && !(t <= 1.001f * v3_length(v3_sub(side.caster->hi, side.caster->lo)))) r = RTCD_WALK_LOST;
    if (r == RTCD_WALK_LOST) {
        /* A ray the walk lost stays as a prediction, on the triangle it
         * had, until the next standard pass: a prediction not reached yet,
         * or a vertex leaving that may come back. The iterative algorithm
         * keeps them too (its own predictions reach only the speculative
         * margin, none without speculative contacts): a resting
         * vertex the solver lifts out comes back within a few steps, and
         * dropped it would be seen only at the next standard pass, which
         * a pair creeping less than the threshold never runs (it sank 4 cm,
         * docs/contacts.md). The kept set never outgrows the standard
         * pass's. */
        tri = tri_word & RTCD_ENTRY_TRIANGLE;
        r = RTCD_WALK_PREDICT;
    }
    rec->feature = feature;
    rec->tri = r == RTCD_WALK_PREDICT ? tri | RTCD_ENTRY_PREDICTION : tri;
    rec->t = t;
    return r;
}

/* A prediction (a vertex outside the other mesh, rec->tri the triangle its
 * predictive ray found) as a speculative contact: when the vertex lies in
 * front of the triangle's plane and within the pair's speculative reach of
 * it, its distance to the plane goes to rec->t and the record is kept as a
 * contact with that positive distance. Past the margin, and when
 * the pair's last step is known, only a vertex that its motion (the last
 * step's, again) brings onto the plane and into the other mesh within the
 * step: the plane is the surface's tangent, and a vertex passing beside
 * the other mesh would otherwise be stopped by it (a ghost contact). */
RTCD_INLINE int pair_speculative(const rtcd_pair_ctx* c, rtcd_ray_rec* rec, rtcd_pass_counts* n)
{
    if (!(c->speculative > 0.0f)) return 0;
    rtcd_u32 direction = rec->feature >> 31, i = rec->feature & 0x7fffffffu;
    const rtcd_pair_side side = pair_side(c, direction);
    rtcd_u32 tri = rec->tri & RTCD_ENTRY_TRIANGLE;
    rtcd_v3 v = v3_load(side.caster->vertices + 3 * i);
    rtcd_v3 p = xf_point(side.to_target, v);
    rtcd_v3 on_plane = v3_load(side.target->vertices + 3 * side.target->indices[3 * tri]);
    rtcd_v3 nrm = v3_load(side.target->tnormals + 3 * tri);
    float s = v3_dot(v3_sub(p, on_plane), nrm);
    if (!(s >= 0.0f && s <= c->speculative)) return 0;
    if (s > c->margin && c->has_motion) {
        rtcd_v3 m = pair_vertex_motion(c, direction, i, v, p);
        if (!(-v3_dot(m, nrm) > s - c->margin)) return 0; /* does not reach the plane in a step */
        float travel = v3_length(m);
        rtcd_v3 md = v3_scale(m, 1.0f / travel);
        n->predictive_rays += 1u;
        rtcd_tri_hit h = view_first_hit(side.target, c->brute_force, p, md, travel + c->margin);
        if (h.tri == RTCD_INVALID || !(v3_dot(md, v3_load(side.target->tnormals + 3 * h.tri)) < 0.0f)) return 0;
        /* The contact is where the motion goes in, not where the normal
         * points: a vertex on the side of a bump would push sideways. */
        tri = h.tri;
        nrm = v3_load(side.target->tnormals + 3 * tri);
        s = v3_dot(v3_sub(p, v3_load(side.target->vertices + 3 * side.target->indices[3 * tri])), nrm);
        if (!(s >= 0.0f && s <= c->speculative)) return 0;
        rec->tri = tri | RTCD_ENTRY_PREDICTION;
    }
    rec->t = s;
    return 1;
}

/* A colliding ray in world space (the layout of rtcd_ray_hit). */
typedef struct rtcd_world_ray {
    rtcd_u32 direction, vertex, triangle;
    float origin[3], ray_dir[3], point[3], normal[3], length;
} rtcd_world_ray;

/* The world-space origin, direction and hit normal of a colliding ray: what
 * both the world ray and the contact are made of. */
RTCD_INLINE void pair_ray_frame(const rtcd_pair_ctx* c, rtcd_ray_rec r, rtcd_v3* origin, rtcd_v3* dir, rtcd_v3* normal)
{
    rtcd_u32 direction = r.feature >> 31, i = r.feature & 0x7fffffffu;
    const rtcd_mesh_view* caster = direction ? &c->b : &c->a;
    const rtcd_mesh_view* target = direction ? &c->a : &c->b;
    const rtcd_xform* xc = direction ? &c->xb : &c->xa;
    const rtcd_xform* xt = direction ? &c->xa : &c->xb;
    *origin = xf_point(xc, v3_load(caster->vertices + 3 * i));
    *dir = xf_rotate(xc, v3_neg(v3_load(caster->vnormals + 3 * i)));
    *normal = xf_rotate(xt, v3_load(target->tnormals + 3 * (r.tri & RTCD_ENTRY_TRIANGLE)));
}

RTCD_INLINE rtcd_world_ray pair_world_ray(const rtcd_pair_ctx* c, rtcd_ray_rec r)
{
    rtcd_v3 o, d, nrm;
    pair_ray_frame(c, r, &o, &d, &nrm);
    rtcd_v3 p = v3_add(o, v3_scale(d, r.t));
    rtcd_world_ray w;
    w.direction = r.feature >> 31;
    w.vertex = r.feature & 0x7fffffffu;
    w.triangle = r.tri & RTCD_ENTRY_TRIANGLE;
    w.origin[0] = o.x, w.origin[1] = o.y, w.origin[2] = o.z;
    w.ray_dir[0] = d.x, w.ray_dir[1] = d.y, w.ray_dir[2] = d.z;
    w.point[0] = p.x, w.point[1] = p.y, w.point[2] = p.z;
    w.normal[0] = nrm.x, w.normal[1] = nrm.y, w.normal[2] = nrm.z;
    w.length = r.t;
    return w;
}

/* How far (a fraction of the other mesh's box diagonal) the foot of a
 * speculative contact may lie from where the vertex's motion reaches the
 * other surface (pair_ray_contact). */
#define RTCD_SPECULATIVE_FOOT_OFF 0.1f

/* The contact of a colliding ray or a speculative record (contact.h,
 * Bullet's convention; the speculative one always along the triangle's
 * normal, at the distance to its plane). Every record: pair_contact
 * (crossing.h). */
RTCD_INLINE rtcd_contact_v pair_ray_contact(const rtcd_pair_ctx* c, rtcd_ray_rec r, int mode)
{
    rtcd_v3 o, d, nrm;
    pair_ray_frame(c, r, &o, &d, &nrm);
    rtcd_u32 direction = r.feature >> 31, i = r.feature & 0x7fffffffu;
    if ((r.tri & RTCD_ENTRY_PREDICTION) && c->has_motion && r.t > c->margin) {
        /* Past the margin (pair_speculative's motion ray) the contact joins
         * the vertex and its foot on the triangle's plane. Where the plane
         * is steep to the motion and the gap long, the foot lies off the
         * other body: a contact there would spin the bodies instead of
         * stopping them (a fast body passes through). Then the contact
         * runs along the motion, from the vertex to the point of the
         * surface it reaches: both points on their bodies. */
        const rtcd_pair_side side = pair_side(c, direction);
        rtcd_v3 v = v3_load(side.caster->vertices + 3 * i);
        rtcd_v3 m = pair_vertex_motion(c, direction, i, v, xf_point(side.to_target, v));
        float travel = v3_length(m);
        rtcd_v3 md = v3_scale(m, 1.0f / travel);
        float approach = -v3_dot(md, v3_load(side.target->tnormals + 3 * (r.tri & RTCD_ENTRY_TRIANGLE)));
        float gap = rtcd_minf(r.t / approach, travel + c->margin); /* to the plane along the motion */
        float off = gap * gap - r.t * r.t;                       /* squared: from the foot to that point */
        rtcd_v3 box = v3_sub(side.target->hi, side.target->lo);
        if (off > RTCD_SPECULATIVE_FOOT_OFF * RTCD_SPECULATIVE_FOOT_OFF * v3_dot(box, box)) {
            rtcd_contact_v out = contact_pushed(direction, i, o, v3_neg(xf_rotate(direction ? &c->xa : &c->xb, md)), -gap);
            out.rank = travel - gap;
            return out;
        }
    }
    rtcd_contact_v out = (r.tri & RTCD_ENTRY_PREDICTION) ? contact_pushed(direction, i, o, nrm, -r.t)
                                                         : contact_from_hit(direction, i, o, d, nrm, r.t, mode);
    if (c->has_motion && c->speculative > 0.0f) {
        /* Ranked by the depth it reaches if the step goes on as the last:
         * of a body about to land, the points it lands on come first, not
         * the nearest gap on the side of a bump. */
        const rtcd_pair_side side = pair_side(c, direction);
        rtcd_v3 v = v3_load(side.caster->vertices + 3 * i);
        rtcd_v3 m = pair_vertex_motion(c, direction, i, v, xf_point(side.to_target, v));
        float approach = -v3_dot(m, v3_load(side.target->tnormals + 3 * (r.tri & RTCD_ENTRY_TRIANGLE)));
        out.rank = out.depth + rtcd_maxf(approach, 0.0f);
    }
    return out;
}

/* A mesh against a static plane (points p with dot(n, p) = d, world frame;
 * the mesh placed by x): vertex i below the plane is a contact (Bullet's
 * convention, the plane body being A when plane_is_a) at its depth, and
 * one less than `reach` above it a speculative contact (negative depth). */
RTCD_INLINE int plane_vertex_contact(const rtcd_mesh_view* m, const rtcd_xform* x, rtcd_v3 n, float d, float reach,
                                     rtcd_u32 i, int plane_is_a, rtcd_contact_v* out)
{
    rtcd_v3 p = xf_point(x, v3_load(m->vertices + 3 * i));
    float dist = v3_dot(n, p) - d;
    if (!(dist < reach) && !(dist < 0.0f)) return 0;
    out->depth = out->rank = -dist;
    out->feature = i;
    /* The plane pushes the mesh along n: from B to A. */
    out->normal_on_b = plane_is_a ? v3_neg(n) : n;
    out->point_on_b = plane_is_a ? p : v3_sub(p, v3_scale(n, dist));
    return 1;
}

#endif
