/* One item of a pair's work, for both kernels: a vertex of the standard
 * pass (with the iterative algorithms' kept and predictive rays) or a kept
 * ray of the iterative pass (JVRC 2013 Algorithm 1). Same conditions, in the
 * same order, as core/narrowphase.c's cast_direction and core/iterative.c's
 * iterative_pass. Both return RTCD_WALK_LOST (nothing), RTCD_WALK_HIT (a
 * colliding ray, *rec) or RTCD_WALK_PREDICT (a predictive ray to keep: *rec,
 * its tri word flagged). */

/* Sweep item k: A's vertices, then B's. */
inline int sweep_vertex(const pair_ctx* c, uint k, uint* rays, uint* predictive_rays, ray_rec* rec)
{
    uint va = c->ma->vertex_count;
    uint direction = k >= va;
    uint i = direction ? k - va : k;
    __global const rtcd_cl_mesh* caster = direction ? c->mb : c->ma;
    __global const rtcd_cl_mesh* target = direction ? c->ma : c->mb;
    const rtcd_xform* to_target = direction ? &c->b_in_a : &c->a_in_b;
    uint vi = caster->vertex_offset + i;
    rtcd_v3 n = v3_load(c->vnormals + 3 * vi);
    if (n.x == 0.0f && n.y == 0.0f && n.z == 0.0f) return RTCD_WALK_LOST; /* unreferenced vertex */
    rtcd_v3 local_v = v3_load(c->vertices + 3 * vi);
    rtcd_v3 o = xf_point(to_target, local_v);
    int inside = may_contain(target, c->grids, o);
    if (!inside && !(c->predict_pass && grid_may_be_near(c->nears + target->near_offset, v3_load(target->grid_lo),
                                                       v3_load(target->grid_inv), target->min_cell, o, c->extension)))
        return RTCD_WALK_LOST;
    rtcd_v3 dir_local = v3_neg(n);
    rtcd_v3 dir = xf_rotate(to_target, dir_local);
    rec->feature = (direction << 31) | i;
    rtcd_tri_hit hit;
    if (inside && cast_normal(c, caster, target, i, local_v, dir_local, o, dir, rays, &hit)) {
        rec->tri = hit.tri;
        rec->t = hit.t;
        return RTCD_WALK_HIT;
    }
    if (!c->predict_pass) return RTCD_WALK_LOST;
    /* The opposite ray, up to the culling distance: the triangle it enters
     * is where this vertex would go in. */
    *predictive_rays += 1;
    rtcd_v3 back = v3_neg(dir);
    rtcd_tri_hit ph = target_first_hit(c, target, o, back, RTCD_PREDICT_REACH * c->culling);
    if (ph.tri != RTCD_INVALID) {
        float cosn = v3_dot(back, v3_load(c->tnormals + 3 * (target->tri_offset + ph.tri)));
        /* it must enter the target, and the vertex be within the culling distance */
        if (cosn < 0.0f && prediction_within(ph.t, -cosn, c->culling)) {
            rec->tri = ph.tri | RTCD_ENTRY_PREDICTION;
            rec->t = ph.t;
            return RTCD_WALK_PREDICT;
        }
    }
    /* Else along the vertex's own motion in the last step, up to the
     * culling distance: a vertex that the other mesh's rim slides over is
     * never in front of its normal. */
    if (!c->has_motion) return RTCD_WALK_LOST;
    const rtcd_xform* before = direction ? &c->b_in_a_before : &c->a_in_b_before;
    rtcd_v3 motion = v3_sub(o, xf_point(before, local_v));
    float travel = v3_length(motion);
    if (!(travel > 0.0f)) return RTCD_WALK_LOST;
    *predictive_rays += 1;
    rtcd_v3 md = v3_scale(motion, 1.0f / travel);
    rtcd_tri_hit mh = target_first_hit(c, target, o, md, c->culling);
    if (mh.tri == RTCD_INVALID || !(v3_dot(md, v3_load(c->tnormals + 3 * (target->tri_offset + mh.tri))) < 0.0f))
        return RTCD_WALK_LOST;
    rec->tri = mh.tri | RTCD_ENTRY_PREDICTION;
    rec->t = mh.t;
    return RTCD_WALK_PREDICT;
}

/* A kept ray (feature, triangle word) relaunched on its triangle. */
inline int walk_entry(const pair_ctx* c, uint feature, uint tri_word, uint* steps, ray_rec* rec)
{
    uint direction = feature >> 31, i = feature & 0x7fffffffu;
    __global const rtcd_cl_mesh* caster = direction ? c->mb : c->ma;
    __global const rtcd_cl_mesh* target = direction ? c->ma : c->mb;
    const rtcd_xform* to_target = direction ? &c->b_in_a : &c->a_in_b;
    uint vi = caster->vertex_offset + i;
    rtcd_v3 p = xf_point(to_target, v3_load(c->vertices + 3 * vi));
    rtcd_v3 dir = xf_rotate(to_target, v3_neg(v3_load(c->vnormals + 3 * vi)));
    uint tri = tri_word & RTCD_ENTRY_TRIANGLE;
    float t = 0.0f;
    uint to = target->tri_offset;
    int r = walk_ray(c->vertices + 3 * target->vertex_offset, c->indices + 3 * to, c->neighbors + 3 * to,
                     c->tnormals + 3 * to, p, dir, c->max_iterations, c->predictive, c->culling, &tri, &t, steps);
    /* A vertex in an empty cell of the other mesh's grid is certainly
     * outside it, whatever triangle the walk reached. */
    if (r == RTCD_WALK_HIT && !may_contain(target, c->grids, p)) r = RTCD_WALK_LOST;
    if (r == RTCD_WALK_LOST && c->predictive) {
        /* With predictions, a ray the walk lost stays as one, on the
         * triangle it had, until the next standard pass. */
        tri = tri_word & RTCD_ENTRY_TRIANGLE;
        r = RTCD_WALK_PREDICT;
    }
    rec->feature = feature;
    rec->tri = r == RTCD_WALK_PREDICT ? tri | RTCD_ENTRY_PREDICTION : tri;
    rec->t = t;
    return r;
}

/* Counters of one pair's pass (rtcd_cl_result). */
typedef struct pass_counts {
    uint rays, predictive_rays, steps;
    float length;
} pass_counts;

/* Item k of the pair's pass: a sweep vertex (standard pass) or kept ray k
 * (iterative pass, read from `state`). */
inline int pass_item(const pair_ctx* c, int standard, __global const uint* state, uint entries_in, uint k,
                     pass_counts* n, ray_rec* rec)
{
    if (standard) return sweep_vertex(c, k, &n->rays, &n->predictive_rays, rec);
    uint e = entries_in + k;
    return walk_entry(c, state[2 * e], state[2 * e + 1], &n->steps, rec);
}

/* How many items the pass has. */
inline uint pass_items(const pair_ctx* c, int standard, uint entry_count)
{
    if (!standard) return entry_count;
    return pair_boxes_overlap(c) ? c->ma->vertex_count + c->mb->vertex_count : 0u;
}

/* Keeps entry `slot` of the pass's output (dropped past the slot's capacity:
 * the host sees the count and resets the pair). */
inline void keep_entry(__global uint* state, uint entries_out, uint slot, ray_rec r)
{
    if (slot >= RTCD_CL_STATE_ENTRIES) return;
    uint e = entries_out + slot;
    state[2 * e] = r.feature;
    state[2 * e + 1] = r.tri;
}
