/* The standard narrow phase on the device: one work-group per pair. Its work
 * items sweep the vertices of both meshes (both directions, JVRC 2013
 * Figure 6 folded into one group), cast the rays, keep the colliding ones in
 * local memory and reduce them there to at most four contacts, so only the
 * reduced contacts leave the device. geom.h, bvh.h, contact.h and cl_types.h
 * are prepended at build time. */

typedef struct ray_rec {
    uint feature; /* direction << 31 | vertex */
    uint tri;
    float t;
} ray_rec;

inline rtcd_xform load_xform(__global const float* p)
{
    rtcd_xform x;
    for (int i = 0; i < 9; ++i) x.r[i] = p[i];
    for (int i = 0; i < 3; ++i) x.t[i] = p[9 + i];
    return x;
}

/* 0 when p (mesh frame) is certainly outside the mesh (occupancy grid, as core/solid_grid.c). */
inline int may_contain(__global const rtcd_cl_mesh* m, __global const uchar* grids, rtcd_v3 p)
{
    float fx = (p.x - m->grid_lo[0]) * m->grid_inv[0], fy = (p.y - m->grid_lo[1]) * m->grid_inv[1],
          fz = (p.z - m->grid_lo[2]) * m->grid_inv[2];
    if (!(fx >= 0.0f && fy >= 0.0f && fz >= 0.0f && fx < 16.0f && fy < 16.0f && fz < 16.0f)) return 0;
    uint i = ((uint)fz * 16u + (uint)fy) * 16u + (uint)fx;
    return (grids[m->grid_offset + (i >> 3)] >> (i & 7u)) & 1u;
}

inline rtcd_bvh_view mesh_view(__global const rtcd_cl_mesh* m, __global const rtcd_bvh_node* nodes,
                               __global const float* tris, __global const uint* tri_ids, __global const uint* indices)
{
    rtcd_bvh_view view;
    view.nodes = nodes + m->node_offset;
    view.tris = tris + 9 * m->tri_offset;
    view.tri_ids = tri_ids + m->tri_offset;
    view.indices = indices + 3 * m->tri_offset;
    view.node_count = m->node_count;
    return view;
}

/* The contact a stored ray stands for, in world space. */
inline rtcd_contact_v rec_contact(ray_rec r, __global const rtcd_cl_mesh* ma, __global const rtcd_cl_mesh* mb,
                                  const rtcd_xform* xa, const rtcd_xform* xb, __global const float* vertices,
                                  __global const float* vnormals, __global const float* tnormals, int mode)
{
    uint direction = r.feature >> 31, vertex = r.feature & 0x7fffffffu;
    __global const rtcd_cl_mesh* caster = direction ? mb : ma;
    __global const rtcd_cl_mesh* target = direction ? ma : mb;
    const rtcd_xform* xc = direction ? xb : xa;
    const rtcd_xform* xt = direction ? xa : xb;
    uint vi = caster->vertex_offset + vertex;
    rtcd_v3 origin = xf_point(xc, v3_load(vertices + 3 * vi));
    rtcd_v3 dir = xf_rotate(xc, v3_neg(v3_load(vnormals + 3 * vi)));
    rtcd_v3 n = xf_rotate(xt, v3_load(tnormals + 3 * (target->tri_offset + r.tri)));
    return contact_from_hit(direction, vertex, origin, dir, n, r.t, mode);
}

/* Everything one pair's rays read. */
typedef struct pair_ctx {
    __global const rtcd_cl_mesh* ma;
    __global const rtcd_cl_mesh* mb;
    rtcd_xform xa, xb, a_in_b, b_in_a;
    __global const float* vertices;
    __global const float* vnormals;
    __global const float* tnormals;
    __global const uint* indices;
    __global const rtcd_bvh_node* nodes;
    __global const float* tris;
    __global const uint* tri_ids;
    __global const uchar* grids;
    uint brute_force;
} pair_ctx;

/* Sweep item k (A's vertices, then B's): 1 when its ray collides (rec filled);
 * *rays gets the number of first-hit queries it cast. As core/narrowphase.c. */
inline int cast_vertex(const pair_ctx* c, uint k, uint* rays, ray_rec* rec)
{
    *rays = 0;
    uint va = c->ma->vertex_count;
    uint direction = k >= va;
    uint i = direction ? k - va : k;
    __global const rtcd_cl_mesh* caster = direction ? c->mb : c->ma;
    __global const rtcd_cl_mesh* target = direction ? c->ma : c->mb;
    const rtcd_xform* to_target = direction ? &c->b_in_a : &c->a_in_b;
    uint vi = caster->vertex_offset + i;
    rtcd_v3 n = v3_load(c->vnormals + 3 * vi);
    if (n.x == 0.0f && n.y == 0.0f && n.z == 0.0f) return 0; /* unreferenced vertex */
    rtcd_v3 local_v = v3_load(c->vertices + 3 * vi);
    rtcd_v3 o = xf_point(to_target, local_v);
    if (!may_contain(target, c->grids, o)) return 0;
    rtcd_v3 dir_local = v3_neg(n);
    rtcd_v3 dir = xf_rotate(to_target, dir_local);
    rtcd_tri_hit hit;
    if (c->brute_force) {
        hit = brute_first_hit(c->vertices + 3 * target->vertex_offset, c->indices + 3 * target->tri_offset,
                              target->tri_count, o, dir, 0.0f, RTCD_FLT_MAX, RTCD_INVALID);
    } else {
        rtcd_bvh_view view = mesh_view(target, c->nodes, c->tris, c->tri_ids, c->indices);
        hit = bvh_first_hit_stackless(&view, o, dir, 0.0f, RTCD_FLT_MAX, RTCD_INVALID);
    }
    *rays = 1;
    if (hit.tri == RTCD_INVALID || !(v3_dot(dir, v3_load(c->tnormals + 3 * (target->tri_offset + hit.tri))) > 0.0f))
        return 0;
    /* Exits the target; now the caster's own surface must not come first. */
    *rays = 2;
    int self_hit;
    if (c->brute_force) {
        rtcd_tri_hit h = brute_first_hit(c->vertices + 3 * caster->vertex_offset, c->indices + 3 * caster->tri_offset,
                                         caster->tri_count, local_v, dir_local, 0.0f, hit.t, i);
        self_hit = h.tri != RTCD_INVALID && h.t < hit.t;
    } else {
        rtcd_bvh_view view = mesh_view(caster, c->nodes, c->tris, c->tri_ids, c->indices);
        self_hit = bvh_any_hit(&view, local_v, dir_local, 0.0f, hit.t, i);
    }
    if (self_hit) return 0;
    rec->feature = (direction << 31) | i;
    rec->tri = hit.tri;
    rec->t = hit.t;
    return 1;
}

/* The full colliding ray, for callers that ask for rays (tests, tools). */
inline void write_ray(const pair_ctx* c, ray_rec r, __global rtcd_cl_ray* out)
{
    uint direction = r.feature >> 31, i = r.feature & 0x7fffffffu;
    __global const rtcd_cl_mesh* caster = direction ? c->mb : c->ma;
    __global const rtcd_cl_mesh* target = direction ? c->ma : c->mb;
    const rtcd_xform* xc = direction ? &c->xb : &c->xa;
    const rtcd_xform* xt = direction ? &c->xa : &c->xb;
    uint vi = caster->vertex_offset + i;
    rtcd_v3 local_v = v3_load(c->vertices + 3 * vi), dir_local = v3_neg(v3_load(c->vnormals + 3 * vi));
    rtcd_v3 wo = xf_point(xc, local_v), wd = xf_rotate(xc, dir_local);
    rtcd_v3 wp = v3_add(wo, v3_scale(wd, r.t));
    rtcd_v3 wn = xf_rotate(xt, v3_load(c->tnormals + 3 * (target->tri_offset + r.tri)));
    out->direction = direction;
    out->vertex = i;
    out->triangle = r.tri;
    out->origin[0] = wo.x, out->origin[1] = wo.y, out->origin[2] = wo.z;
    out->ray_dir[0] = wd.x, out->ray_dir[1] = wd.y, out->ray_dir[2] = wd.z;
    out->point[0] = wp.x, out->point[1] = wp.y, out->point[2] = wp.z;
    out->normal[0] = wn.x, out->normal[1] = wn.y, out->normal[2] = wn.z;
    out->length = r.t;
}

inline pair_ctx make_ctx(__global const rtcd_cl_mesh* meshes, __global const float* vertices,
                         __global const float* vnormals, __global const float* tnormals, __global const uint* indices,
                         __global const rtcd_bvh_node* nodes, __global const float* tris, __global const uint* tri_ids,
                         __global const uchar* grids, __global const rtcd_cl_pair* pair, uint brute_force)
{
    pair_ctx c;
    c.ma = meshes + pair->mesh_a;
    c.mb = meshes + pair->mesh_b;
    c.xa = load_xform(pair->pose_a);
    c.xb = load_xform(pair->pose_b);
    c.a_in_b = xf_relative(&c.xb, &c.xa);
    c.b_in_a = xf_relative(&c.xa, &c.xb);
    c.vertices = vertices;
    c.vnormals = vnormals;
    c.tnormals = tnormals;
    c.indices = indices;
    c.nodes = nodes;
    c.tris = tris;
    c.tri_ids = tri_ids;
    c.grids = grids;
    c.brute_force = brute_force;
    return c;
}

/* Disjoint oriented boxes: no vertex can be inside the other mesh (as the CPU reference). */
inline int pair_boxes_overlap(const pair_ctx* c)
{
    rtcd_v3 ca = v3_scale(v3_add(v3_load(c->ma->lo), v3_load(c->ma->hi)), 0.5f), ha = v3_sub(v3_load(c->ma->hi), ca);
    rtcd_v3 cb = v3_scale(v3_add(v3_load(c->mb->lo), v3_load(c->mb->hi)), 0.5f), hb = v3_sub(v3_load(c->mb->hi), cb);
    return obb_overlap(ca, ha, cb, hb, &c->b_in_a, 1e-5f * (v3_length(ha) + v3_length(hb)));
}

__kernel __attribute__((reqd_work_group_size(RTCD_CL_GROUP_SIZE, 1, 1))) void rtcd_collide_pairs(
    __global const rtcd_cl_mesh* meshes, __global const float* vertices, __global const float* vnormals,
    __global const float* tnormals, __global const uint* indices, __global const rtcd_bvh_node* nodes,
    __global const float* tris, __global const uint* tri_ids, __global const uchar* grids,
    __global const rtcd_cl_pair* pairs, uint pair_count, uint brute_force, uint mode, __global rtcd_cl_result* results,
    __global rtcd_cl_ray* rays_out, uint want_rays)
{
    __local ray_rec recs[RTCD_CL_LOCAL_RAYS];
    __local uint count, cast;
    __local float best_score[RTCD_CL_GROUP_SIZE];
    __local uint best_feature[RTCD_CL_GROUP_SIZE];
    __local uint chosen[4];
    __local float chosen_pt[4][3];

    uint p = get_group_id(0), lid = get_local_id(0);
    if (p >= pair_count) return;
    pair_ctx ctx = make_ctx(meshes, vertices, vnormals, tnormals, indices, nodes, tris, tri_ids, grids, pairs + p,
                            brute_force);
    __global const rtcd_cl_mesh* ma = ctx.ma;
    __global const rtcd_cl_mesh* mb = ctx.mb;
    rtcd_xform xa = ctx.xa, xb = ctx.xb;
    if (lid == 0) {
        count = 0;
        cast = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    uint total = pair_boxes_overlap(&ctx) ? ma->vertex_count + mb->vertex_count : 0;
    for (uint k = lid; k < total; k += RTCD_CL_GROUP_SIZE) {
        uint rays;
        ray_rec r;
        int colliding = cast_vertex(&ctx, k, &rays, &r);
        atomic_add(&cast, rays);
        if (!colliding) continue;
        uint slot = atomic_inc(&count);
        if (slot < RTCD_CL_LOCAL_RAYS) recs[slot] = r;
        if (want_rays) write_ray(&ctx, r, rays_out + pairs[p].ray_offset + slot);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    uint n_rays = count;
    uint kept = n_rays < RTCD_CL_LOCAL_RAYS ? n_rays : RTCD_CL_LOCAL_RAYS;
    uint n_out = kept < 4u ? kept : 4u;
    int overflow = n_rays > RTCD_CL_LOCAL_RAYS;
    /* The reduction of core/contact.c, in parallel: per pick, the best score,
     * then the lowest feature id within the tie band. */
    for (uint k = 0; k < n_out && !overflow; ++k) {
        rtcd_v3 p0 = v3(chosen_pt[0][0], chosen_pt[0][1], chosen_pt[0][2]);
        rtcd_v3 p1 = v3(chosen_pt[1][0], chosen_pt[1][1], chosen_pt[1][2]);
        rtcd_v3 p2 = v3(chosen_pt[2][0], chosen_pt[2][1], chosen_pt[2][2]);
        float mine = -RTCD_FLT_MAX;
        for (uint r = lid; r < kept; r += RTCD_CL_GROUP_SIZE) {
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
        for (uint r = lid; r < kept; r += RTCD_CL_GROUP_SIZE) {
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
        results[p].colliding_rays = n_rays;
        results[p].rays_cast = cast;
        results[p].overflow = (uint)overflow;
    }
}

/* One work item per pair, no local memory or barriers: the CPU reference's
 * loop, for CPU OpenCL devices (PoCL), where a work-group per pair costs more
 * than it gives. Same results as the work-group kernel. */
__kernel void rtcd_collide_pairs_serial(
    __global const rtcd_cl_mesh* meshes, __global const float* vertices, __global const float* vnormals,
    __global const float* tnormals, __global const uint* indices, __global const rtcd_bvh_node* nodes,
    __global const float* tris, __global const uint* tri_ids, __global const uchar* grids,
    __global const rtcd_cl_pair* pairs, uint pair_count, uint brute_force, uint mode, __global rtcd_cl_result* results,
    __global rtcd_cl_ray* rays_out, uint want_rays)
{
    uint p = get_global_id(0);
    if (p >= pair_count) return;
    ray_rec recs[RTCD_CL_LOCAL_RAYS];
    pair_ctx ctx = make_ctx(meshes, vertices, vnormals, tnormals, indices, nodes, tris, tri_ids, grids, pairs + p,
                            brute_force);
    uint count = 0, cast = 0;
    uint total = pair_boxes_overlap(&ctx) ? ctx.ma->vertex_count + ctx.mb->vertex_count : 0;
    for (uint k = 0; k < total; ++k) {
        uint rays;
        ray_rec r;
        int colliding = cast_vertex(&ctx, k, &rays, &r);
        cast += rays;
        if (!colliding) continue;
        if (count < RTCD_CL_LOCAL_RAYS) recs[count] = r;
        if (want_rays) write_ray(&ctx, r, rays_out + pairs[p].ray_offset + count);
        count++;
    }
    __global rtcd_cl_result* res = results + p;
    int overflow = count > RTCD_CL_LOCAL_RAYS;
    uint n_out = overflow ? 0u : (count < 4u ? count : 4u);
    uint chosen[4];
    rtcd_v3 pt[4];
    pt[0] = pt[1] = pt[2] = pt[3] = v3(0.0f, 0.0f, 0.0f);
    for (uint k = 0; k < n_out; ++k) {
        float best = -RTCD_FLT_MAX;
        for (uint r = 0; r < count; ++r) {
            int taken = 0;
            for (uint j = 0; j < k; ++j) taken |= chosen[j] == r;
            if (taken) continue;
            rtcd_contact_v c = rec_contact(recs[r], ctx.ma, ctx.mb, &ctx.xa, &ctx.xb, vertices, vnormals, tnormals, (int)mode);
            best = rtcd_maxf(best, reduce_score((int)k, c.point_on_b, c.depth, pt[0], pt[1], pt[2]));
        }
        float band = reduce_band(best);
        uint pick = RTCD_INVALID, pick_feature = RTCD_INVALID;
        for (uint r = 0; r < count; ++r) {
            int taken = 0;
            for (uint j = 0; j < k; ++j) taken |= chosen[j] == r;
            if (taken) continue;
            rtcd_contact_v c = rec_contact(recs[r], ctx.ma, ctx.mb, &ctx.xa, &ctx.xb, vertices, vnormals, tnormals, (int)mode);
            if (reduce_score((int)k, c.point_on_b, c.depth, pt[0], pt[1], pt[2]) >= band && c.feature < pick_feature) {
                pick = r;
                pick_feature = c.feature;
            }
        }
        chosen[k] = pick;
        rtcd_contact_v c = rec_contact(recs[pick], ctx.ma, ctx.mb, &ctx.xa, &ctx.xb, vertices, vnormals, tnormals, (int)mode);
        pt[k] = c.point_on_b;
        res->point[k][0] = c.point_on_b.x, res->point[k][1] = c.point_on_b.y, res->point[k][2] = c.point_on_b.z;
        res->normal[k][0] = c.normal_on_b.x, res->normal[k][1] = c.normal_on_b.y, res->normal[k][2] = c.normal_on_b.z;
        res->depth[k] = c.depth;
        res->feature[k] = c.feature;
    }
    res->contact_count = n_out;
    res->colliding_rays = count;
    res->rays_cast = cast;
    res->overflow = (uint)overflow;
}
