/* The kernels' binding of the shared per-vertex pipeline (core/shared/pair.h):
 * a pair's context built from the devices' concatenated buffers, and the
 * items of its pass. The per-vertex work itself is shared/pair.h's. */
#ifndef RTCD_CL_PAIR_BINDING_H
#define RTCD_CL_PAIR_BINDING_H

#include "cl_types.h"
#include "../../core/shared/candidates4.h"

/* Every buffer a pair reads (the kernels' first RTCD_CL_MESH_BUFFERS arguments). */
typedef struct cl_buffers {
    __global const rtcd_cl_mesh* meshes;
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
    __global const float* prev_vertices;
    __global const uchar* vertex_balls;
    __global const uint* vertex_tris;
    __global const rtcd_bvh4_node* nodes4;
} cl_buffers;

inline rtcd_xform load_xform(__global const float* p)
{
    rtcd_xform x;
    for (int i = 0; i < 9; ++i) x.r[i] = p[i];
    for (int i = 0; i < 3; ++i) x.t[i] = p[9 + i];
    return x;
}

/* Mesh m of the registry as the shared pipeline reads it. */
inline rtcd_mesh_view cl_mesh_view(const cl_buffers* b, uint m)
{
    __global const rtcd_cl_mesh* e = b->meshes + m;
    rtcd_mesh_view v;
    v.bvh.nodes = b->nodes + e->node_offset;
    v.bvh.tris = b->tris + 9 * e->tri_offset;
    v.bvh.tri_ids = b->tri_ids + e->tri_offset;
    v.bvh.indices = b->indices + 3 * e->tri_offset;
    v.bvh.node_count = e->node_count;
    v.nodes4 = b->nodes4 + e->node4_offset;
    v.node4_count = e->node4_count;
    v.vertices = b->vertices + 3 * e->vertex_offset;
    v.prev_vertices = b->prev_vertices + 3 * e->vertex_offset;
    v.vnormals = b->vnormals + 3 * e->vertex_offset;
    v.tnormals = b->tnormals + 3 * e->tri_offset;
    v.indices = b->indices + 3 * e->tri_offset;
    v.neighbors = b->neighbors + 3 * e->tri_offset;
    v.solid = b->grids + e->grid_offset;
    v.near = b->nears + e->near_offset;
    v.vertex_count = e->vertex_count;
    v.tri_count = e->tri_count;
    v.lo = v3_load(e->lo);
    v.hi = v3_load(e->hi);
    v.grid_lo = v3_load(e->grid_lo);
    v.grid_inv = v3_load(e->grid_inv);
    v.min_cell = e->min_cell;
    v.spheres = e->spheres[0];
    v.sphere_count = e->sphere_count;
    v.sphere_stride = 4u;
    v.max_edge = e->max_edge;
    v.reach = e->reach;
    v.vertex_balls = b->vertex_balls + e->vertex_offset;
    return v;
}

/* bodies: the call's body poses (RTCD_KARG_BODIES), which the pair names. */
inline void cl_pair_ctx(rtcd_pair_ctx* c, const cl_buffers* b, __global const float* bodies,
                        __global const rtcd_cl_pair* pair, uint brute_force)
{
    c->a = cl_mesh_view(b, pair->mesh_a);
    c->b = cl_mesh_view(b, pair->mesh_b);
    rtcd_xform xa = load_xform(bodies + RTCD_CL_BODY_FLOATS * (size_t)pair->body_a),
               xb = load_xform(bodies + RTCD_CL_BODY_FLOATS * (size_t)pair->body_b), before;
    int motion = (pair->flags & RTCD_CL_HAS_MOTION) != 0u;
    if (motion) before = load_xform(pair->before);
    pair_ctx_init(c, &xa, &xb, pair->flags & RTCD_CL_ALGORITHM_MASK, brute_force, pair->extension, pair->culling,
                  pair->max_iterations, motion ? &before : 0, (pair->flags >> RTCD_CL_DEFORMED_SHIFT) & 3u,
                  pair->speculative);
    c->edge_crossings = (pair->flags & RTCD_CL_EDGES) != 0u;
    c->deep_contacts = (pair->flags & RTCD_CL_DEEP) != 0u;
    c->margin = c->speculative > 0.0f ? pair->margin : 0.0f; /* as rtcd_pair_ctx_init on the CPU */
}

/* How many items the pair's pass has: both meshes' vertices (A's, then
 * B's) for a standard pass whose boxes overlap, its kept rays otherwise. */
inline uint pass_items(const rtcd_pair_ctx* c, int standard, uint entry_count)
{
    if (!standard) return entry_count;
    return pair_boxes_overlap(c) ? c->a.vertex_count + c->b.vertex_count : 0u;
}

/* Is standard-pass item k (A's vertices, then B's) in a ball that the
 * pair's masks (pair_ball_mask, per direction) turned down? Its sweep would
 * give up on it, so the kernels skip it before loading anything else. */
inline int pass_item_skipped(const rtcd_pair_ctx* c, const uint balls[2], uint k)
{
    uint direction = k >= c->a.vertex_count;
    return vertex_ball_skipped(direction ? &c->b : &c->a, balls[direction], direction ? k - c->a.vertex_count : k);
}

/* The first standard-pass item at or after k that pass_item_skipped lets
 * through, or `total`: one byte a vertex, a direction at a time (the
 * serial kernel's loop). */
inline uint next_swept_item(const rtcd_pair_ctx* c, const uint balls[2], uint k, uint total)
{
    uint na = c->a.vertex_count;
    for (uint direction = k >= na; direction < 2u && k < total; ++direction) {
        const rtcd_mesh_view* caster = direction ? &c->b : &c->a;
        uint base = direction ? na : 0u, mask = balls[direction];
        for (uint i = k - base; i < caster->vertex_count; ++i)
            if (!vertex_ball_skipped(caster, mask, i)) return base + i;
        k = base + caster->vertex_count;
    }
    return total;
}

/* next_swept_item, less the vertices that are no candidates
 * (pair_candidates4, four at a time): pair_sweep_vertex gives up on those
 * before it counts or casts anything, so the pass is the same. The serial
 * kernel's loop on CPU devices (RTCD_CL_SWEEP4). */
inline uint next_candidate_item(const rtcd_pair_ctx* c, const uint balls[2], uint k, uint total)
{
    uint na = c->a.vertex_count;
    for (uint direction = k >= na; direction < 2u && k < total; ++direction) {
        const rtcd_pair_side side = pair_side(c, direction);
        uint base = direction ? na : 0u, mask = balls[direction], nv = side.caster->vertex_count;
        for (uint i = k - base; i < nv; i += 4u) {
            uint count = min(4u, nv - i), live = 0u;
            for (uint j = 0; j < count; ++j) live |= (uint)!vertex_ball_skipped(side.caster, mask, i + j) << j;
            if (live) live &= pair_candidates4(c, side.target, side.to_target, side.caster->vertices, i, count);
            if (live) return base + i + (31u - clz(live & (0u - live))); /* the lowest set bit */
        }
        k = base + nv;
    }
    return total;
}

/* Ball `ball` of either mesh (0..31: A's, 32..63: B's) by pair_ball_passes,
 * as its bit in the direction's mask; the group kernel's items test one each. */
inline uint pair_ball_bit(const rtcd_pair_ctx* c, uint ball, int crossing)
{
    return pair_ball_passes(c, ball >= 32u, ball & 31u, crossing) ? 1u << (ball & 31u) : 0u;
}

/* Item k of the pass: a vertex (standard pass) or kept ray k (iterative
 * pass, read from the pair's state slot). */
inline int pass_item(const rtcd_pair_ctx* c, int standard, __global const uint* state, uint entries_in, uint k,
                     rtcd_pass_counts* n, rtcd_ray_rec* rec)
{
    if (standard) {
        uint direction = k >= c->a.vertex_count;
        return pair_sweep_vertex(c, direction, direction ? k - c->a.vertex_count : k, n, rec);
    }
    uint e = entries_in + k;
    return pair_walk_entry(c, state[2 * e], state[2 * e + 1], n, rec);
}

/* How many items the second phase of the pair's pass has (a standard pass
 * that found nothing: no colliding ray, no prediction; and surfaces that
 * may cross: shared/crossing.h), 0 otherwise. */
inline uint crossing_items(const rtcd_pair_ctx* c, int standard, uint found)
{
    return standard && found == 0u && pair_boxes_overlap(c) && (pair_may_cross(c, 0u) || pair_may_cross(c, 1u))
               ? pair_crossing_items(c)
               : 0u;
}

/* The second-phase items the pair runs of the `wanted` (crossing_items): none
 * when the host proved its surfaces apart (RTCD_CL_APART). */
inline uint crossing_items_run(__global const rtcd_cl_pair* pair, uint wanted)
{
    return pair->flags & RTCD_CL_APART ? 0u : wanted;
}

/* Words of the pair's vertex marks (pair_crossing_mark_word); the pair can
 * be marked on chip when they fit RTCD_CL_MARK_WORDS. */
inline uint crossing_mark_words(const rtcd_pair_ctx* c) { return (c->a.vertex_count + c->b.vertex_count + 31u) / 32u; }
inline int crossing_markable(const rtcd_pair_ctx* c) { return crossing_mark_words(c) <= RTCD_CL_MARK_WORDS; }

/* Vertex v's mark (local memory in the group kernel, private in the serial
 * one: OpenCL 1.2 has no generic address space, hence a macro), and the
 * marks of a unit's three vertices as crossing_unit_mask takes them. */
#define CROSSING_MARK(marks, v) (((marks)[(v) >> 5] >> ((v) & 31u)) & 1u)
#define CROSSING_UNIT_MARKS(marks, v) \
    (CROSSING_MARK(marks, (v)[0]) | CROSSING_MARK(marks, (v)[1]) << 1 | CROSSING_MARK(marks, (v)[2]) << 2)

/* Does registry entry m walk fans in the serial kernel's second phase (cl_fans.c)? */
inline int cl_entry_fans(const cl_buffers* b, uint m) { return b->meshes[m].fans != 0u; }

/* The second phase's items of marked vertex g (A's vertices then B's) when
 * both meshes walk fans (cl_fans.c): the edge slots of the triangles around
 * it that start at it and end at a marked vertex, then its deep vertex. Over
 * every marked vertex these are the items that the units loop lets through
 * (crossing_unit_mask: an edge slot needs both ends marked), in another
 * order. Writes them to items[] (the host allows fans of fewer than
 * RTCD_CL_FAN_ITEMS triangles only); returns how many. */
inline uint fan_items(const rtcd_pair_ctx* c, const cl_buffers* b, __global const rtcd_cl_pair* pair,
                      const uint* marks, uint g, uint items[RTCD_CL_FAN_ITEMS])
{
    uint direction = g >= c->a.vertex_count, i = direction ? g - c->a.vertex_count : g, n = 0u;
    const rtcd_mesh_view* caster = direction ? &c->b : &c->a;
    if (c->edge_crossings) {
        uint base = direction ? c->a.vertex_count : 0u, unit0 = direction ? c->a.tri_count : 0u;
        uint m = direction ? pair->mesh_b : pair->mesh_a;
        uint start = (b->vertex_tris + b->meshes[m].vertex_offset)[i], t = start;
        /* At most as many steps as triangles (the host checked the fan closes). */
        for (uint guard = 0u; t != RTCD_INVALID && guard < caster->tri_count; ++guard) {
            uint j = caster->indices[3u * t] == i ? 0u : (caster->indices[3u * t + 1u] == i ? 1u : 2u);
            uint end = base + caster->indices[3u * t + (j + 1u) % 3u];
            if (CROSSING_MARK(marks, end)) items[n++] = 3u * (unit0 + t) + j;
            t = caster->neighbors[3u * t + (j + 2u) % 3u];
            if (t == start) break;
        }
    }
    if (c->deep_contacts) items[n++] = (c->edge_crossings ? 3u * (c->a.tri_count + c->b.tri_count) : 0u) + g;
    return n;
}

/* Keeps entry `slot` of the pass's output (dropped past
 * RTCD_CL_STATE_ENTRIES: the host sees the count and resets the pair; the
 * pass's items never outnumber the room the host gave it). */
inline void keep_entry(__global uint* state, uint entries_out, uint slot, rtcd_ray_rec r)
{
    if (slot >= RTCD_CL_STATE_ENTRIES) return;
    uint e = entries_out + slot;
    state[2 * e] = r.feature;
    state[2 * e + 1] = r.tri;
}

#endif
