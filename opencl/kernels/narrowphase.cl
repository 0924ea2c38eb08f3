/* The narrow phase on the device: the pass of each pair (standard, or the
 * walk of its kept rays) and the contact reduction, in two kernels with the
 * same arguments and results. The per-vertex work and the reduction's scores
 * are core/shared's (pair.h, contact.h), as on the CPU; these kernels only
 * hand out the items:
 * - rtcd_collide_pairs: one work-group per pair. Its work items share the
 *   pair's items (both directions, JVRC 2013 Figure 6 folded into one group),
 *   keep the colliding rays in local memory and reduce them there to at most
 *   four contacts, so only the reduced contacts leave the device.
 * - rtcd_collide_pairs_serial: one work item per pair, the CPU reference's
 *   loop, for CPU devices (PoCL), where a work-group per pair costs more
 *   than it gives.
 * Kept rays go to the output arena at the pair's entries_out (any order in
 * the group kernel, item order in the serial one). */
#include "pair_binding.h"

#define RTCD_CL_BUFFERS                                                                                           \
    {meshes,     vertices,  vnormals,      tnormals,     indices,     nodes,      tris,     \
     tri_ids,    grids,     nears,         neighbors,    prev_vertices, vertex_balls, vertex_tris, \
     nodes4}

inline void write_counts(__global rtcd_cl_result* res, uint rays, const rtcd_pass_counts* n, uint kept,
                         uint predictions, float length)
{
    res->colliding_rays = rays;
    res->rays_cast = n->rays;
    res->predictive_rays = n->predictive_rays;
    res->walk_steps = n->steps;
    res->kept_rays = kept - predictions;
    res->kept_predictions = predictions;
    res->state_overflow = kept > RTCD_CL_STATE_ENTRIES;
    res->ray_length = length;
}

inline void write_contact(__global rtcd_cl_result* res, uint k, rtcd_contact_v c)
{
    res->point[k][0] = c.point_on_b.x, res->point[k][1] = c.point_on_b.y, res->point[k][2] = c.point_on_b.z;
    res->normal[k][0] = c.normal_on_b.x, res->normal[k][1] = c.normal_on_b.y, res->normal[k][2] = c.normal_on_b.z;
    res->depth[k] = c.depth;
    res->feature[k] = c.feature;
}

/* What a pair's work-group shares on chip besides its contact records. */
typedef struct group_scratch {
    uint count, hits, crossings, cast, kept, predictions, predictive_rays, steps, any_marked;
    float best_score[RTCD_CL_GROUP_SIZE];
    uint best_feature[RTCD_CL_GROUP_SIZE];
    uint chosen[RTCD_MANIFOLD_POINTS];
    float chosen_pt[RTCD_MANIFOLD_POINTS][3];
    float level;                     /* reduce_level, from the first pick */
    uint marks[RTCD_CL_MARK_WORDS];  /* the second phase's vertices (pair_vertex_may_cross) */
    uint ball_masks[2];              /* the standard pass's balls (pair_ball_mask), A's and B's */
    uint cross_masks[2];             /* the second phase's (pair_ball_mask, crossing) */
} group_scratch;

/* Pair p on the calling work-group, its records in recs[cap]. A pair with
 * more records than cap is listed in retry (count first) for the retry
 * kernel when there is one, and reported as overflowed either way: the
 * retry rewrites everything this wrote. */
inline void collide_group(RTCD_PAIR_KERNEL_ARGS, uint p, __local group_scratch* g, __local rtcd_ray_rec* recs,
                          uint cap, __global uint* retry)
{
    uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* the retry kernel's group: every item is done with its last pair */
    __global const rtcd_cl_pair* pair = pairs + p;
    cl_buffers buffers = RTCD_CL_BUFFERS;
    rtcd_pair_ctx ctx;
    cl_pair_ctx(&ctx, &buffers, bodies, pair, brute_force);
    if (lid == 0)
        g->count = g->hits = g->crossings = g->cast = g->kept = g->predictions = g->predictive_rays = g->steps =
            g->any_marked = 0u;
    if (lid < 2) g->ball_masks[lid] = g->cross_masks[lid] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

    int standard = (pair->flags & RTCD_CL_STANDARD_PASS) != 0u;
    int keeps = (pair->flags & RTCD_CL_ALGORITHM_MASK) != 0u;
    uint total = pass_items(&ctx, standard, pair->entry_count);
    /* One ball per work item (64 = 2 x RTCD_CL_SPHERES). */
    uint balls[2] = {~0u, ~0u};
    if (standard && total) {
        uint bit = pair_ball_bit(&ctx, lid, 0);
        if (bit) atomic_or(&g->ball_masks[lid >= 32u], bit);
        barrier(CLK_LOCAL_MEM_FENCE);
        balls[0] = g->ball_masks[0], balls[1] = g->ball_masks[1];
    }
    rtcd_pass_counts mine = {0u, 0u, 0u, 0u};
    float my_length = 0.0f;
    for (uint k = lid; k < total; k += RTCD_CL_GROUP_SIZE) {
        if (standard && pass_item_skipped(&ctx, balls, k)) continue;
        rtcd_ray_rec r;
        int what = pass_item(&ctx, standard, state, pair->entries_in, k, &mine, &r);
        if (what == RTCD_WALK_LOST) continue;
        if (keeps) keep_entry(state_out, pair->entries_out, atomic_inc(&g->kept), r);
        if (what == RTCD_WALK_PREDICT) {
            atomic_inc(&g->predictions);
            if (!pair_speculative(&ctx, &r, &mine)) continue;
        } else {
            my_length += r.t;
            uint hit = atomic_inc(&g->hits);
            if (want_rays) rays_out[pair->ray_offset + hit] = pair_world_ray(&ctx, r);
        }
        uint slot = atomic_inc(&g->count);
        if (slot < cap) recs[slot] = r;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint found = g->count + g->predictions; /* read by every item before any adds a crossing */
    barrier(CLK_LOCAL_MEM_FENCE);
    uint wanted = crossing_items(&ctx, standard, found);
    uint second = crossing_items_run(pair, wanted);
    /* The items of vertices and edges far from the other surface find
     * nothing: mark the vertices that may, once, and run only their items. */
    int marked = second && crossing_markable(&ctx);
    if (marked) {
        uint bit = pair_ball_bit(&ctx, lid, 1);
        if (bit) atomic_or(&g->cross_masks[lid >= 32u], bit);
        barrier(CLK_LOCAL_MEM_FENCE);
        uint crossing_balls[2] = {g->cross_masks[0], g->cross_masks[1]};
        for (uint w = lid; w < crossing_mark_words(&ctx); w += RTCD_CL_GROUP_SIZE) {
            uint word = pair_crossing_mark_word(&ctx, w, crossing_balls);
            g->marks[w] = word;
            if (word) atomic_or(&g->any_marked, 1u);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    /* No vertex marked: no unit has an item left. */
    uint units = second && (!marked || g->any_marked) ? pair_crossing_units(&ctx) : 0u;
    for (uint u = lid; u < units; u += RTCD_CL_GROUP_SIZE) {
        uint first, v[3], items = pair_crossing_unit(&ctx, u, &first, v);
        uint mask = marked ? crossing_unit_mask(items, CROSSING_UNIT_MARKS(g->marks, v)) : 7u;
        for (uint j = 0; j < items; ++j) {
            rtcd_ray_rec r;
            if (!((mask >> j) & 1u) || pair_crossing_item(&ctx, first + j, &mine, &r) != RTCD_WALK_HIT) continue;
            atomic_inc(&g->crossings);
            uint slot = atomic_inc(&g->count);
            if (slot < cap) recs[slot] = r;
        }
    }
    atomic_add(&g->cast, mine.rays);
    atomic_add(&g->predictive_rays, mine.predictive_rays);
    atomic_add(&g->steps, mine.steps);
    g->best_score[lid] = my_length;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = RTCD_CL_GROUP_SIZE / 2; s > 0; s >>= 1) {
        if (lid < s) g->best_score[lid] += g->best_score[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float length = g->best_score[0];
    barrier(CLK_LOCAL_MEM_FENCE);

    uint n_rays = g->count;
    uint stored = n_rays < cap ? n_rays : cap;
    uint n_out = stored < RTCD_MANIFOLD_POINTS ? stored : RTCD_MANIFOLD_POINTS;
    int overflow = n_rays > cap;
    /* reduce_contacts (shared/contact.h) across the group: per pick, the
     * best score, then the lowest feature within the tie band. */
    for (uint k = 0; k < n_out && !overflow; ++k) {
        rtcd_v3 p0 = v3(g->chosen_pt[0][0], g->chosen_pt[0][1], g->chosen_pt[0][2]);
        rtcd_v3 p1 = v3(g->chosen_pt[1][0], g->chosen_pt[1][1], g->chosen_pt[1][2]);
        rtcd_v3 p2 = v3(g->chosen_pt[2][0], g->chosen_pt[2][1], g->chosen_pt[2][2]);
        uint taken[RTCD_MANIFOLD_POINTS]; /* reduce_taken reads private memory */
        for (uint j = 0; j < k; ++j) taken[j] = g->chosen[j];
        float top = -RTCD_FLT_MAX;
        for (uint r = lid; r < stored; r += RTCD_CL_GROUP_SIZE) {
            if (reduce_taken(taken, k, r)) continue;
            rtcd_contact_v c = pair_contact(&ctx, recs[r], (int)mode);
            if (!reduce_valid(c)) continue;
            top = rtcd_maxf(top, reduce_score((int)k, c.point_on_b, c.rank, g->level, p0, p1, p2));
        }
        g->best_score[lid] = top;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = RTCD_CL_GROUP_SIZE / 2; s > 0; s >>= 1) {
            if (lid < s) g->best_score[lid] = rtcd_maxf(g->best_score[lid], g->best_score[lid + s]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        float band = reduce_band(g->best_score[0]);
        uint mine_feature = RTCD_INVALID, mine_index = RTCD_INVALID;
        for (uint r = lid; r < stored; r += RTCD_CL_GROUP_SIZE) {
            if (reduce_taken(taken, k, r)) continue;
            rtcd_contact_v c = pair_contact(&ctx, recs[r], (int)mode);
            if (!reduce_valid(c)) continue;
            if (reduce_score((int)k, c.point_on_b, c.rank, g->level, p0, p1, p2) >= band && c.feature < mine_feature) {
                mine_feature = c.feature;
                mine_index = r;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        g->best_feature[lid] = mine_feature;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = RTCD_CL_GROUP_SIZE / 2; s > 0; s >>= 1) {
            if (lid < s) g->best_feature[lid] = min(g->best_feature[lid], g->best_feature[lid + s]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (g->best_feature[0] == RTCD_INVALID) { /* no valid contact left: every item stops here */
            n_out = k;
            break;
        }
        if (mine_feature == g->best_feature[0] && mine_index != RTCD_INVALID) {
            /* features are unique within a pair: exactly one work item gets here */
            g->chosen[k] = mine_index;
            rtcd_contact_v c = pair_contact(&ctx, recs[mine_index], (int)mode);
            g->chosen_pt[k][0] = c.point_on_b.x, g->chosen_pt[k][1] = c.point_on_b.y, g->chosen_pt[k][2] = c.point_on_b.z;
            if (k == 0) g->level = reduce_level(c.rank, ctx.margin);
            write_contact(results + p, k, c);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        if (overflow && retry) retry[1u + atomic_inc(&retry[0])] = p;
        rtcd_pass_counts all = {0u, g->cast, g->predictive_rays, g->steps};
        results[p].contact_count = overflow ? 0u : n_out;
        results[p].overflow = (uint)overflow;
        write_counts(results + p, g->hits, &all, g->kept, g->predictions, length);
        results[p].crossings = g->crossings;
        results[p].second_phase = wanted != 0u;
    }
}


/* The GPUs' kernel: one work-group per pair, RTCD_CL_GROUP_RAYS records on
 * chip, so that more groups fit a compute unit; the few pairs with more go
 * to the retry kernel's list. */
__kernel __attribute__((reqd_work_group_size(RTCD_CL_GROUP_SIZE, 1, 1))) void rtcd_collide_pairs(
    RTCD_PAIR_KERNEL_ARGS, __global uint* retry)
{
    __local group_scratch g;
    __local rtcd_ray_rec recs[RTCD_CL_GROUP_RAYS];
    /* The group's pair: a segment's launch starts at an offset (the host's slots). */
    uint p = (uint)(get_global_offset(0) / RTCD_CL_GROUP_SIZE) + get_group_id(0);
    if (p >= pair_count) return;
    collide_group(RTCD_PAIR_KERNEL_NAMES, p, &g, recs, RTCD_CL_GROUP_RAYS, retry);
}

/* The pairs rtcd_collide_pairs listed, again with RTCD_CL_LOCAL_RAYS records
 * on chip, each group taking every get_num_groups(0)-th: the host launches a
 * fixed number of groups and never reads the list. Past this store the host
 * redoes the pair. */
__kernel __attribute__((reqd_work_group_size(RTCD_CL_GROUP_SIZE, 1, 1))) void rtcd_collide_retry(
    RTCD_PAIR_KERNEL_ARGS, __global uint* retry)
{
    __local group_scratch g;
    __local rtcd_ray_rec recs[RTCD_CL_LOCAL_RAYS];
    uint listed = retry[0];
    for (uint k = get_group_id(0); k < listed; k += get_num_groups(0))
        collide_group(RTCD_PAIR_KERNEL_NAMES, retry[1u + k], &g, recs, RTCD_CL_LOCAL_RAYS, 0);
}

/* The serial kernel's second-phase item k: its contact kept when it hits. */
inline void serial_crossing(const rtcd_pair_ctx* c, uint k, uint mode, rtcd_pass_counts* n, rtcd_contact_v* contacts,
                            uint* count, uint* crossings)
{
    rtcd_ray_rec r;
    if (pair_crossing_item(c, k, n, &r) != RTCD_WALK_HIT) return;
    if (*count < RTCD_CL_LOCAL_RAYS) contacts[*count] = pair_contact(c, r, (int)mode);
    ++*count;
    ++*crossings;
}

__kernel void rtcd_collide_pairs_serial(RTCD_PAIR_KERNEL_ARGS)
{
    uint p = get_global_id(0);
    if (p >= pair_count) return;
    /* One work item per pair, alone in its group (see the host's launch). */
    rtcd_contact_v contacts[RTCD_CL_LOCAL_RAYS];
    __global const rtcd_cl_pair* pair = pairs + p;
    cl_buffers buffers = RTCD_CL_BUFFERS;
    rtcd_pair_ctx ctx;
    cl_pair_ctx(&ctx, &buffers, bodies, pair, brute_force);
    int standard = (pair->flags & RTCD_CL_STANDARD_PASS) != 0u;
    int keeps = (pair->flags & RTCD_CL_ALGORITHM_MASK) != 0u;
    uint total = pass_items(&ctx, standard, pair->entry_count);
    rtcd_pass_counts n = {0u, 0u, 0u, 0u};
    uint count = 0, hits = 0, kept = 0, predictions = 0;
    float length = 0.0f;
    uint balls[2] = {~0u, ~0u};
    if (standard && total) balls[0] = pair_ball_mask(&ctx, 0u, 0), balls[1] = pair_ball_mask(&ctx, 1u, 0);
#if defined(RTCD_CL_SWEEP4) && RTCD_CL_SWEEP4
#define NEXT_ITEM next_candidate_item /* CPU devices: four vertices' candidate test at a time */
#else
#define NEXT_ITEM next_swept_item
#endif
    for (uint k = standard ? NEXT_ITEM(&ctx, balls, 0u, total) : 0u; k < total;
         k = standard ? NEXT_ITEM(&ctx, balls, k + 1u, total) : k + 1u) {
        rtcd_ray_rec r;
        int what = pass_item(&ctx, standard, state, pair->entries_in, k, &n, &r);
        if (what == RTCD_WALK_LOST) continue;
        if (keeps) keep_entry(state_out, pair->entries_out, kept++, r);
        if (what == RTCD_WALK_PREDICT) {
            predictions++;
            if (!pair_speculative(&ctx, &r, &n)) continue;
        } else {
            length += r.t;
            if (want_rays) rays_out[pair->ray_offset + hits] = pair_world_ray(&ctx, r);
            hits++;
        }
        if (count < RTCD_CL_LOCAL_RAYS) contacts[count] = pair_contact(&ctx, r, (int)mode);
        count++;
    }
    uint wanted = crossing_items(&ctx, standard, count + predictions), crossings = 0;
    uint second = crossing_items_run(pair, wanted);
    uint marks[RTCD_CL_MARK_WORDS]; /* as in the group kernel */
    int marked = second && crossing_markable(&ctx);
    uint crossing_balls[2] = {0u, 0u};
    if (marked) crossing_balls[0] = pair_ball_mask(&ctx, 0u, 1), crossing_balls[1] = pair_ball_mask(&ctx, 1u, 1);
    uint any_marked = 0u;
    for (uint w = 0; marked && w < crossing_mark_words(&ctx); ++w) {
        marks[w] = pair_crossing_mark_word(&ctx, w, crossing_balls);
        any_marked |= marks[w];
    }
    /* Marked vertices of meshes whose fans close (cl_fans.c) lead to their
     * items; else every unit is looked at. */
    int fans = marked && cl_entry_fans(&buffers, pair->mesh_a) && cl_entry_fans(&buffers, pair->mesh_b);
    uint units = second && (!marked || any_marked) && !fans ? pair_crossing_units(&ctx) : 0u;
    for (uint u = 0; u < units; ++u) {
        uint first, v[3], items = pair_crossing_unit(&ctx, u, &first, v);
        uint mask = marked ? crossing_unit_mask(items, CROSSING_UNIT_MARKS(marks, v)) : 7u;
        for (uint j = 0; j < items; ++j)
            if ((mask >> j) & 1u) serial_crossing(&ctx, first + j, mode, &n, contacts, &count, &crossings);
    }
    for (uint w = 0; second && fans && any_marked && w < crossing_mark_words(&ctx); ++w) {
        for (uint bits = marks[w]; bits; bits &= bits - 1u) {
            uint items[RTCD_CL_FAN_ITEMS];
            uint g = 32u * w + (31u - clz(bits & (0u - bits))); /* the lowest set bit */
            uint count_g = fan_items(&ctx, &buffers, pair, marks, g, items);
            for (uint j = 0; j < count_g; ++j) serial_crossing(&ctx, items[j], mode, &n, contacts, &count, &crossings);
        }
    }
    __global rtcd_cl_result* res = results + p;
    int overflow = count > RTCD_CL_LOCAL_RAYS;
    uint n_out = 0;
    if (!overflow) {
        uint chosen[RTCD_MANIFOLD_POINTS];
        n_out = reduce_contacts(contacts, count, ctx.margin, chosen);
        for (uint k = 0; k < n_out; ++k) write_contact(res, k, contacts[chosen[k]]);
    }
    res->contact_count = n_out;
    res->overflow = (uint)overflow;
    write_counts(res, hits, &n, kept, predictions, length);
    res->crossings = crossings;
    res->second_phase = wanted != 0u;
}
