/* What one pair's work reads on the device, and the standard algorithm's ray
 * of one vertex (as core/narrowphase.c). geom.h, bvh.h, contact.h,
 * iterate.h and cl_types.h are prepended at build time; iterative.cl and
 * narrowphase.cl follow. */

typedef struct ray_rec {
    uint feature; /* direction << 31 | vertex */
    uint tri;     /* for a prediction: | RTCD_ENTRY_PREDICTION */
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
    __global const uchar* nears;
    __global const uint* neighbors;
    uint brute_force;
    /* the iterative algorithms (rtcd_cl_pair) */
    uint keep;       /* ITERATIVE or PREDICTIVE: the standard pass keeps its rays */
    uint predictive;
    uint predict_pass;  /* a standard pass that casts predictive rays (extension > 0), as core/iterative.c */
    float extension, culling;
    uint max_iterations;
    /* Predictive standard pass: each caster's frame in its target's one
     * call earlier (has_motion), for the motion rays. */
    uint has_motion;
    rtcd_xform a_in_b_before, b_in_a_before;
} pair_ctx;

inline pair_ctx make_ctx(__global const rtcd_cl_mesh* meshes, __global const float* vertices,
                         __global const float* vnormals, __global const float* tnormals, __global const uint* indices,
                         __global const rtcd_bvh_node* nodes, __global const float* tris, __global const uint* tri_ids,
                         __global const uchar* grids, __global const uchar* nears, __global const uint* neighbors,
                         __global const rtcd_cl_pair* pair, uint brute_force)
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
    c.nears = nears;
    c.neighbors = neighbors;
    c.brute_force = brute_force;
    uint algorithm = pair->flags & RTCD_CL_ALGORITHM_MASK;
    c.keep = algorithm != 0u;
    c.predictive = algorithm == 2u;
    c.extension = pair->extension;
    c.predict_pass = c.predictive && c.extension > 0.0f;
    c.culling = pair->culling;
    c.max_iterations = pair->max_iterations;
    c.has_motion = c.predictive && (pair->flags & RTCD_CL_HAS_MOTION) != 0u;
    if (c.has_motion) {
        c.b_in_a_before = load_xform(pair->before);
        c.a_in_b_before = xf_inverse(&c.b_in_a_before);
    }
    return c;
}

/* Disjoint oriented boxes (padded by the predictive extension): no vertex can
 * be inside, or near, the other mesh (as the CPU reference). */
inline int pair_boxes_overlap(const pair_ctx* c)
{
    rtcd_v3 ca = v3_scale(v3_add(v3_load(c->ma->lo), v3_load(c->ma->hi)), 0.5f), ha = v3_sub(v3_load(c->ma->hi), ca);
    rtcd_v3 cb = v3_scale(v3_add(v3_load(c->mb->lo), v3_load(c->mb->hi)), 0.5f), hb = v3_sub(v3_load(c->mb->hi), cb);
    float pad = 1e-5f * (v3_length(ha) + v3_length(hb)) + (c->predict_pass ? c->extension : 0.0f);
    return obb_overlap(ca, ha, cb, hb, &c->b_in_a, pad);
}

/* First hit of a ray in the target mesh's frame. */
inline rtcd_tri_hit target_first_hit(const pair_ctx* c, __global const rtcd_cl_mesh* m, rtcd_v3 o, rtcd_v3 dir,
                                     float tmax)
{
    if (c->brute_force)
        return brute_first_hit(c->vertices + 3 * m->vertex_offset, c->indices + 3 * m->tri_offset, m->tri_count, o,
                               dir, 0.0f, tmax, RTCD_INVALID);
    rtcd_bvh_view view = mesh_view(m, c->nodes, c->tris, c->tri_ids, c->indices);
    return bvh_first_hit_stackless(&view, o, dir, 0.0f, tmax, RTCD_INVALID);
}

/* The standard ray of caster vertex i (o, dir in the target's frame): 1 when
 * it collides (*hit set). *rays counts first-hit queries. As cast_normal. */
inline int cast_normal(const pair_ctx* c, __global const rtcd_cl_mesh* caster, __global const rtcd_cl_mesh* target,
                       uint i, rtcd_v3 local_v, rtcd_v3 dir_local, rtcd_v3 o, rtcd_v3 dir, uint* rays,
                       rtcd_tri_hit* out)
{
    *rays += 1;
    rtcd_tri_hit hit = target_first_hit(c, target, o, dir, RTCD_FLT_MAX);
    if (hit.tri == RTCD_INVALID || !(v3_dot(dir, v3_load(c->tnormals + 3 * (target->tri_offset + hit.tri))) > 0.0f))
        return 0; /* enters the target: the vertex is outside */
    /* Exits the target; now the caster's own surface must not come first. */
    *rays += 1;
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
    *out = hit;
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
