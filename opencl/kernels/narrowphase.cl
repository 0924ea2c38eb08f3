/* The narrow phase on the device, both passes of the iterative algorithms
 * (iterative.cl) and the contact reduction of core/contact.c, in two
 * kernels with the same arguments and results:
 * - rtcd_collide_pairs: one work-group per pair. Its work items share the
 *   pair's items (both directions, JVRC 2013 Figure 6 folded into one group),
 *   keep the colliding rays in local memory and reduce them there to at most
 *   four contacts, so only the reduced contacts leave the device.
 * - rtcd_collide_pairs_serial: one work item per pair, the CPU reference's
 *   loop without local memory or barriers, for CPU devices (PoCL), where a
 *   work-group per pair costs more than it gives.
 * Kept rays go to the pair's state slot: entries_out, written in any order. */

#define RTCD_PAIR_KERNEL_ARGS                                                                                      \
    __global const rtcd_cl_mesh *meshes, __global const float *vertices, __global const float *vnormals,           \
        __global const float *tnormals, __global const uint *indices, __global const rtcd_bvh_node *nodes,         \
        __global const float *tris, __global const uint *tri_ids, __global const uchar *grids,                     \
        __global const uchar *nears, __global const uint *neighbors, __global const rtcd_cl_pair *pairs,          \
        uint pair_count, uint brute_force, uint mode, __global rtcd_cl_result *results,                           \
        __global rtcd_cl_ray *rays_out, uint want_rays, __global uint *state

#define RTCD_MAKE_CTX(pair)                                                                                        \
    make_ctx(meshes, vertices, vnormals, tnormals, indices, nodes, tris, tri_ids, grids, nears, neighbors, pair,  \
             brute_force)

inline void write_counts(__global rtcd_cl_result* res, uint rays, uint cast, uint predictive_rays, uint steps,
                         uint kept, uint predictions, float length)
{
    res->colliding_rays = rays;
    res->rays_cast = cast;
    res->predictive_rays = predictive_rays;
    res->walk_steps = steps;
    res->kept_rays = kept - predictions;
    res->kept_predictions = predictions;
    res->state_overflow = kept > RTCD_CL_STATE_ENTRIES;
    res->ray_length = length;
}

__kernel __attribute__((reqd_work_group_size(RTCD_CL_GROUP_SIZE, 1, 1))) void rtcd_collide_pairs(
    RTCD_PAIR_KERNEL_ARGS)
{
    __local ray_rec recs[RTCD_CL_LOCAL_RAYS];
    __local uint count, cast, kept, predictions, predictive_rays, steps;
    __local float best_score[RTCD_CL_GROUP_SIZE];
    __local uint best_feature[RTCD_CL_GROUP_SIZE];
    __local uint chosen[4];
    __local float chosen_pt[4][3];

    uint p = get_group_id(0), lid = get_local_id(0);
    if (p >= pair_count) return;
    __global const rtcd_cl_pair* pair = pairs + p;
    pair_ctx ctx = RTCD_MAKE_CTX(pair);
    __global const rtcd_cl_mesh* ma = ctx.ma;
    __global const rtcd_cl_mesh* mb = ctx.mb;
    rtcd_xform xa = ctx.xa, xb = ctx.xb;
    if (lid == 0) {
        count = cast = kept = predictions = predictive_rays = steps = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    int standard = (pair->flags & RTCD_CL_STANDARD_PASS) != 0u;
    uint total = pass_items(&ctx, standard, pair->entry_count);
    pass_counts mine = {0u, 0u, 0u, 0.0f};
    for (uint k = lid; k < total; k += RTCD_CL_GROUP_SIZE) {
        ray_rec r;
        int what = pass_item(&ctx, standard, state, pair->entries_in, k, &mine, &r);
        if (what == RTCD_WALK_LOST) continue;
        if (ctx.keep) keep_entry(state, pair->entries_out, atomic_inc(&kept), r);
        if (what == RTCD_WALK_PREDICT) {
            atomic_inc(&predictions);
            continue;
        }
        mine.length += r.t;
        uint slot = atomic_inc(&count);
        if (slot < RTCD_CL_LOCAL_RAYS) recs[slot] = r;
        if (want_rays) write_ray(&ctx, r, rays_out + pair->ray_offset + slot);
    }
    atomic_add(&cast, mine.rays);
    atomic_add(&predictive_rays, mine.predictive_rays);
    atomic_add(&steps, mine.steps);
    best_score[lid] = mine.length;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = RTCD_CL_GROUP_SIZE / 2; s > 0; s >>= 1) {
        if (lid < s) best_score[lid] += best_score[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float length = best_score[0];
    barrier(CLK_LOCAL_MEM_FENCE);

    uint n_rays = count;
    uint stored = n_rays < RTCD_CL_LOCAL_RAYS ? n_rays : RTCD_CL_LOCAL_RAYS;
    uint n_out = stored < 4u ? stored : 4u;
    int overflow = n_rays > RTCD_CL_LOCAL_RAYS;
    /* The reduction of core/contact.c, in parallel: per pick, the best score,
     * then the lowest feature id within the tie band. */
    for (uint k = 0; k < n_out && !overflow; ++k) {
        rtcd_v3 p0 = v3(chosen_pt[0][0], chosen_pt[0][1], chosen_pt[0][2]);
        rtcd_v3 p1 = v3(chosen_pt[1][0], chosen_pt[1][1], chosen_pt[1][2]);
        rtcd_v3 p2 = v3(chosen_pt[2][0], chosen_pt[2][1], chosen_pt[2][2]);
        float mine = -RTCD_FLT_MAX;
        for (uint r = lid; r < stored; r += RTCD_CL_GROUP_SIZE) {
            int taken = 0;
            for (uint j = 0; j < k; ++j) taken |= chosen[j] == r;
            if (taken) continue;
            rtcd_contact_v c = rec_contact(recs[r], ma, mb, &xa, &xb, vertices, vnormals, tnormals, (int)mode);
            mine = rtcd_maxf(mine, reduce_score((int)k, c.point_on_b, c.depth, p0, p1, p2));
        }
        best_score[lid] = mine;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = RTCD_CL_GROUP_SIZE / 2; s > 0; s >>= 1) {
            if (lid < s) best_score[lid] = rtcd_maxf(best_score[lid], best_score[lid + s]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        float band = reduce_band(best_score[0]);
        uint mine_feature = RTCD_INVALID, mine_index = RTCD_INVALID;
        for (uint r = lid; r < stored; r += RTCD_CL_GROUP_SIZE) {
            int taken = 0;
            for (uint j = 0; j < k; ++j) taken |= chosen[j] == r;
            if (taken) continue;
            rtcd_contact_v c = rec_contact(recs[r], ma, mb, &xa, &xb, vertices, vnormals, tnormals, (int)mode);
            if (reduce_score((int)k, c.point_on_b, c.depth, p0, p1, p2) >= band && c.feature < mine_feature) {
                mine_feature = c.feature;
                mine_index = r;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        best_feature[lid] = mine_feature;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = RTCD_CL_GROUP_SIZE / 2; s > 0; s >>= 1) {
            if (lid < s) best_feature[lid] = min(best_feature[lid], best_feature[lid + s]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (mine_feature == best_feature[0] && mine_index != RTCD_INVALID) {
            /* features are unique within a pair: exactly one work item gets here */
            chosen[k] = mine_index;
            rtcd_contact_v c = rec_contact(recs[mine_index], ma, mb, &xa, &xb, vertices, vnormals, tnormals, (int)mode);
            chosen_pt[k][0] = c.point_on_b.x, chosen_pt[k][1] = c.point_on_b.y, chosen_pt[k][2] = c.point_on_b.z;
            __global rtcd_cl_result* res = results + p;
            res->point[k][0] = c.point_on_b.x, res->point[k][1] = c.point_on_b.y, res->point[k][2] = c.point_on_b.z;
            res->normal[k][0] = c.normal_on_b.x, res->normal[k][1] = c.normal_on_b.y, res->normal[k][2] = c.normal_on_b.z;
            res->depth[k] = c.depth;
            res->feature[k] = c.feature;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        results[p].contact_count = overflow ? 0u : n_out;
        results[p].overflow = (uint)overflow;
        write_counts(results + p, n_rays, cast, predictive_rays, steps, kept, predictions, length);
    }
}

/* The reduction of core/contact.c over a private ray store. */
inline uint reduce_serial(const pair_ctx* c, const ray_rec* recs, uint count, int mode, __global rtcd_cl_result* res)
{
    uint n_out = count < 4u ? count : 4u;
    uint chosen[4];
    rtcd_v3 pt[4];
    pt[0] = pt[1] = pt[2] = pt[3] = v3(0.0f, 0.0f, 0.0f);
    for (uint k = 0; k < n_out; ++k) {
        float best = -RTCD_FLT_MAX;
        for (uint r = 0; r < count; ++r) {
            int taken = 0;
            for (uint j = 0; j < k; ++j) taken |= chosen[j] == r;
            if (taken) continue;
            rtcd_contact_v ct = rec_contact(recs[r], c->ma, c->mb, &c->xa, &c->xb, c->vertices, c->vnormals, c->tnormals, mode);
            best = rtcd_maxf(best, reduce_score((int)k, ct.point_on_b, ct.depth, pt[0], pt[1], pt[2]));
        }
        float band = reduce_band(best);
        uint pick = RTCD_INVALID, pick_feature = RTCD_INVALID;
        for (uint r = 0; r < count; ++r) {
            int taken = 0;
            for (uint j = 0; j < k; ++j) taken |= chosen[j] == r;
            if (taken) continue;
            rtcd_contact_v ct = rec_contact(recs[r], c->ma, c->mb, &c->xa, &c->xb, c->vertices, c->vnormals, c->tnormals, mode);
            if (reduce_score((int)k, ct.point_on_b, ct.depth, pt[0], pt[1], pt[2]) >= band && ct.feature < pick_feature) {
                pick = r;
                pick_feature = ct.feature;
            }
        }
        chosen[k] = pick;
        rtcd_contact_v ct = rec_contact(recs[pick], c->ma, c->mb, &c->xa, &c->xb, c->vertices, c->vnormals, c->tnormals, mode);
        pt[k] = ct.point_on_b;
        res->point[k][0] = ct.point_on_b.x, res->point[k][1] = ct.point_on_b.y, res->point[k][2] = ct.point_on_b.z;
        res->normal[k][0] = ct.normal_on_b.x, res->normal[k][1] = ct.normal_on_b.y, res->normal[k][2] = ct.normal_on_b.z;
        res->depth[k] = ct.depth;
        res->feature[k] = ct.feature;
    }
    return n_out;
}

__kernel void rtcd_collide_pairs_serial(RTCD_PAIR_KERNEL_ARGS)
{
    uint p = get_global_id(0);
    if (p >= pair_count) return;
    /* One work item per pair, alone in its group (see the host's launch). */
    ray_rec recs[RTCD_CL_LOCAL_RAYS];
    __global const rtcd_cl_pair* pair = pairs + p;
    pair_ctx ctx = RTCD_MAKE_CTX(pair);
    int standard = (pair->flags & RTCD_CL_STANDARD_PASS) != 0u;
    uint total = pass_items(&ctx, standard, pair->entry_count);
    pass_counts n = {0u, 0u, 0u, 0.0f};
    uint count = 0, kept = 0, predictions = 0;
    for (uint k = 0; k < total; ++k) {
        ray_rec r;
        int what = pass_item(&ctx, standard, state, pair->entries_in, k, &n, &r);
        if (what == RTCD_WALK_LOST) continue;
        if (ctx.keep) keep_entry(state, pair->entries_out, kept++, r);
        if (what == RTCD_WALK_PREDICT) {
            predictions++;
            continue;
        }
        n.length += r.t;
        if (count < RTCD_CL_LOCAL_RAYS) recs[count] = r;
        if (want_rays) write_ray(&ctx, r, rays_out + pair->ray_offset + count);
        count++;
    }
    __global rtcd_cl_result* res = results + p;
    int overflow = count > RTCD_CL_LOCAL_RAYS;
    res->contact_count = overflow ? 0u : reduce_serial(&ctx, recs, count, (int)mode, res);
    res->overflow = (uint)overflow;
    write_counts(res, count, n.rays, n.predictive_rays, n.steps, kept, predictions, n.length);
}
