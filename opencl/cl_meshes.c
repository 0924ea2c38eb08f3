/* Meshes on the devices: each mesh is appended once to concatenated arrays
 * (vertices, normals, indices, BVH, occupancy and near grids, triangle
 * neighbours) shared by every pair that uses it; devices re-upload only when
 * a new mesh arrives.
 *
 * Deforming meshes (rtcd_mesh_update_vertices): each entry remembers the
 * mesh version it copied. A call's mesh with another version is copied
 * again over its entry, and only its ranges go to the devices, when its
 * sizes held (the topology never changes: indices and neighbours stay);
 * when a BVH rebuild changed its node count (binary or 4-wide) it leaves
 * the registry with every entry after it and they come back as the call's
 * new meshes, through the same append, fit and refusal steps as any new
 * mesh.
 *
 * Device faults: when a device refuses the memory for the concatenated
 * arrays (a mesh larger than the device's largest buffer, or many meshes
 * that are together), the registry goes back to where it was before the mesh
 * that made it fail, that mesh is refused for good (one warning names it and
 * the OpenCL error; its pairs run on the CPU reference, cl_backend.c), and
 * the devices are brought up to date with the others. */
#include "cl_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

_Static_assert(RTCD_GRID_N == RTCD_NEAR_GRID_N, "the kernels' near grid is the mesh's occupancy grid");
_Static_assert(sizeof(((rtcd_solid_grid*)0)->near) == RTCD_NEAR_BYTES, "near grid layout");

/* In the order of the kernel arguments (RTCD_KARG_MESHES + b). */
static const char* const k_buffer_names[RTCD_CL_MESH_BUFFERS] = {
    "mesh table",    "vertices",         "vertex normals",  "triangle normals", "triangle indices", "BVH nodes",
    "BVH triangles", "BVH triangle ids", "occupancy grids", "near grids",       "triangle neighbours",
    "previous vertices", "vertex balls", "vertex triangles", "BVH 4-wide nodes"};

static int grow(void** p, uint32_t* cap_elems, size_t need, size_t size)
{
    size_t cap = *cap_elems;
    int ok = rtcd_grow(p, &cap, need, size);
    *cap_elems = (uint32_t)cap;
    return ok;
}

/* Appends n elements to an array whose used length is `used`, capacity tracked in *cap. */
static int append(void** arr, uint32_t* cap, uint32_t used, const void* src, uint32_t n, size_t size)
{
    if (!grow(arr, cap, (size_t)used + n, size)) return 0;
    memcpy((char*)*arr + (size_t)used * size, src, (size_t)n * size);
    return 1;
}

/* ---- the registry: append, find, roll back ---- */

/* A new name for new content (0 names the empty registry only). */
static void new_version(cl_mesh_registry* reg)
{
    if (++reg->stamp == 0) ++reg->stamp;
    reg->version = reg->stamp;
}

/* What a rollback returns to. */
typedef struct registry_mark {
    uint32_t count, vertex_total, tri_total, node_total, node4_total, version;
} registry_mark;

static registry_mark mark_of(const cl_mesh_registry* reg)
{
    registry_mark m = {reg->count, reg->vertex_total, reg->tri_total, reg->node_total, reg->node4_total, reg->version};
    return m;
}

/* Back to `m`: the meshes appended since leave the registry (released). The
 * arrays keep their capacity; what lies past the totals is never read, and
 * the content up to them is the content `m` named, so is its version. */
static void roll_back(cl_mesh_registry* reg, const registry_mark* m)
{
    if (m->count < reg->count) reg->cuts++; /* find_mesh's index rebuilds */
    for (uint32_t i = m->count; i < reg->count; ++i) rtcd_mesh_release((rtcd_mesh*)reg->meshes[i]);
    reg->count = m->count;
    reg->vertex_total = m->vertex_total;
    reg->tri_total = m->tri_total;
    reg->node_total = m->node_total;
    reg->node4_total = m->node4_total;
    reg->version = m->version;
}

static uint32_t index_home(const cl_mesh_registry* reg, uint64_t id)
{
    return (uint32_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (reg->index_cap - 1u);
}

static void index_put(cl_mesh_registry* reg, uint32_t entry)
{
    uint32_t s = index_home(reg, reg->ids[entry]);
    while (reg->index_ids[s]) s = (s + 1u) & (reg->index_cap - 1u);
    reg->index_ids[s] = reg->ids[entry];
    reg->index_at[s] = entry;
}

/* Brings the index up to the registry: the entries appended since, or all
 * of them after a removal, in a table for at least `room` entries (a bigger
 * one when needed). 0 without memory (the caller searches the entries one by
 * one). */
static int index_current(cl_mesh_registry* reg, uint64_t room)
{
    if (room < reg->count) room = reg->count;
    if (reg->index_cuts != reg->cuts || reg->index_count > reg->count || 2u * room >= reg->index_cap) {
        uint64_t cap = 64;
        while (cap <= 2u * room) cap *= 2u;
        if (cap > UINT32_MAX) return 0;
        if (cap > reg->index_cap) {
            rtcd_free(reg->index_ids);
            rtcd_free(reg->index_at);
            reg->index_ids = rtcd_alloc(cap * sizeof *reg->index_ids);
            reg->index_at = rtcd_alloc(cap * sizeof *reg->index_at);
            reg->index_cap = reg->index_ids && reg->index_at ? (uint32_t)cap : 0u;
            if (!reg->index_cap) return 0;
        }
        memset(reg->index_ids, 0, reg->index_cap * sizeof *reg->index_ids);
        reg->index_count = 0;
        reg->index_cuts = reg->cuts;
    }
    for (; reg->index_count < reg->count; ++reg->index_count) index_put(reg, reg->index_count);
    return 1;
}

/* find_mesh once the index is current: reads only, any number of threads. */
static uint32_t lookup_mesh(const cl_mesh_registry* reg, const rtcd_mesh* m)
{
    for (uint32_t s = index_home(reg, m->id); reg->index_ids[s]; s = (s + 1u) & (reg->index_cap - 1u))
        if (reg->index_ids[s] == m->id) return reg->meshes[reg->index_at[s]] == m ? reg->index_at[s] : RTCD_CL_NO_SLOT;
    return RTCD_CL_NO_SLOT;
}

/* Entry of mesh m (the same object: its id is never reused), or
 * RTCD_CL_NO_SLOT. By the index: a call asks once per pair end. */
static uint32_t find_mesh(cl_mesh_registry* reg, const rtcd_mesh* m)
{
    if (!index_current(reg, 0)) {
        for (uint32_t i = 0; i < reg->count; ++i)
            if (reg->meshes[i] == m && reg->ids[i] == m->id) return i;
        return RTCD_CL_NO_SLOT;
    }
    return lookup_mesh(reg, m);
}

/* A deformed refused mesh is still refused (the same id: not refused again
 * with a warning each step); a new mesh at its address is not. */
static int is_refused(const cl_mesh_registry* reg, const rtcd_mesh* m)
{
    for (uint32_t i = 0; i < reg->refused_count; ++i)
        if (reg->refused[i].mesh == m && reg->refused[i].id == m->id) return 1;
    return 0;
}

/* The table entry's fields that follow the shape (box, grid placement). */
static void entry_shape(rtcd_cl_mesh* e, const rtcd_mesh* m, uint8_t* vertex_balls)
{
    e->min_cell = m->grid.min_cell;
    for (int k = 0; k < 3; ++k) {
        e->lo[k] = m->lo[k];
        e->hi[k] = m->hi[k];
        e->grid_lo[k] = m->grid.lo[k];
        e->grid_inv[k] = m->grid.inv_cell[k];
    }
    e->reach = m->reach;
    rtcd_cl_entry_spheres(e, m, vertex_balls);
}

/* The motion rays' previous shape (shared/pair.h): read only for a pair
 * whose mesh deformed since its last call. */
static const float* prev_of(const rtcd_mesh* m) { return m->prev_vertices ? m->prev_vertices : m->vertices; }

/* Appends m to the host arrays and retains it; 0 on no memory (the totals,
 * so the registry's content, unchanged). */
static int append_mesh(cl_mesh_registry* reg, const rtcd_mesh* m)
{
    uint32_t nv = m->vertex_count, nt = m->triangle_count, nn = m->bvh.node_count;
    uint32_t n4 = m->bvh.nodes4 ? m->bvh.node4_count : 0u; /* none: its rays take the binary walk */
    rtcd_mesh_grids_ready(m); /* an update leaves the grids' fill to the first reader */
    int ok = grow((void**)&reg->meshes, &reg->cap, reg->count + 1, sizeof *reg->meshes) &&
             grow((void**)&reg->table, &reg->cap_table, reg->count + 1, sizeof *reg->table) &&
             grow((void**)&reg->versions, &reg->cap_versions, reg->count + 1, sizeof *reg->versions) &&
             grow((void**)&reg->ids, &reg->cap_ids, reg->count + 1, sizeof *reg->ids) &&
             append((void**)&reg->vertices, &reg->cap_vertices, 3 * reg->vertex_total, m->vertices, 3 * nv,
                    sizeof(float)) &&
             append((void**)&reg->vnormals, &reg->cap_vnormals, 3 * reg->vertex_total, m->vertex_normals, 3 * nv,
                    sizeof(float)) &&
             append((void**)&reg->tnormals, &reg->cap_tnormals, 3 * reg->tri_total, m->triangle_normals, 3 * nt,
                    sizeof(float)) &&
             append((void**)&reg->indices, &reg->cap_indices, 3 * reg->tri_total, m->indices, 3 * nt,
                    sizeof(uint32_t)) &&
             append((void**)&reg->tri_ids, &reg->cap_tri_ids, reg->tri_total, m->bvh.tri_ids, nt, sizeof(uint32_t)) &&
             append((void**)&reg->tris, &reg->cap_tris, 9 * reg->tri_total, m->bvh.tris, 9 * nt, sizeof(float)) &&
             append((void**)&reg->nodes, &reg->cap_nodes, reg->node_total, m->bvh.nodes, nn, sizeof(rtcd_bvh_node)) &&
             (!n4 || append((void**)&reg->nodes4, &reg->cap_nodes4, reg->node4_total, m->bvh.nodes4, n4,
                            sizeof(rtcd_bvh4_node))) &&
             append((void**)&reg->grids, &reg->cap_grids, reg->count * RTCD_GRID_BYTES, m->grid.solid,
                    RTCD_GRID_BYTES, 1) &&
             append((void**)&reg->nears, &reg->cap_nears, reg->count * RTCD_NEAR_BYTES, m->grid.near, RTCD_NEAR_BYTES,
                    1) &&
             append((void**)&reg->neighbors, &reg->cap_neighbors, 3 * reg->tri_total, m->neighbors, 3 * nt,
                    sizeof(uint32_t)) &&
             append((void**)&reg->prev_vertices, &reg->cap_prev_vertices, 3 * reg->vertex_total, prev_of(m), 3 * nv,
                    sizeof(float)) &&
             grow((void**)&reg->vertex_balls, &reg->cap_vertex_balls, (size_t)reg->vertex_total + nv, 1) &&
             grow((void**)&reg->vertex_tris, &reg->cap_vertex_tris, (size_t)reg->vertex_total + nv, sizeof(uint32_t));
    if (!ok) return 0;
    rtcd_cl_mesh* e = &reg->table[reg->count];
    memset(e, 0, sizeof *e);
    e->vertex_offset = reg->vertex_total;
    e->vertex_count = nv;
    e->tri_offset = reg->tri_total;
    e->tri_count = nt;
    e->node_offset = reg->node_total;
    e->node_count = nn;
    e->node4_offset = reg->node4_total;
    e->node4_count = n4;
    e->grid_offset = reg->count * RTCD_GRID_BYTES;
    e->near_offset = reg->count * RTCD_NEAR_BYTES;
    entry_shape(e, m, reg->vertex_balls + e->vertex_offset);
    e->fans = (rtcd_u32)rtcd_cl_vertex_fans(m, reg->vertex_tris + e->vertex_offset); /* the topology stays */
    rtcd_mesh_retain((rtcd_mesh*)m); /* device copies mirror it: keep it alive */
    reg->versions[reg->count] = m->version;
    reg->ids[reg->count] = m->id;
    reg->meshes[reg->count++] = m;
    reg->vertex_total += nv;
    reg->tri_total += nt;
    reg->node_total += nn;
    reg->node4_total += n4;
    new_version(reg);
    return 1;
}

static int append_run(cl_mesh_registry* reg, const rtcd_mesh* const* meshes, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; ++i)
        if (!append_mesh(reg, meshes[i])) return 0;
    return 1;
}

/* An array far larger than its content (after a mesh that did not fit) goes
 * back to about its content's size; kept as it is when there is no memory. */
static void trim(void** p, uint32_t* cap, size_t used, size_t size)
{
    if (*cap <= 64 || (size_t)*cap <= 2 * used) return;
    size_t c = used > 64 ? used : 64;
    void* q = rtcd_alloc(c * size);
    if (!q) return;
    if (used) memcpy(q, *p, used * size);
    rtcd_free(*p);
    *p = q;
    *cap = (uint32_t)c;
}

static void trim_registry(cl_mesh_registry* reg)
{
    trim((void**)&reg->meshes, &reg->cap, reg->count, sizeof *reg->meshes);
    trim((void**)&reg->table, &reg->cap_table, reg->count, sizeof *reg->table);
    trim((void**)&reg->versions, &reg->cap_versions, reg->count, sizeof *reg->versions);
    trim((void**)&reg->ids, &reg->cap_ids, reg->count, sizeof *reg->ids);
    trim((void**)&reg->vertices, &reg->cap_vertices, 3 * (size_t)reg->vertex_total, sizeof(float));
    trim((void**)&reg->vnormals, &reg->cap_vnormals, 3 * (size_t)reg->vertex_total, sizeof(float));
    trim((void**)&reg->tnormals, &reg->cap_tnormals, 3 * (size_t)reg->tri_total, sizeof(float));
    trim((void**)&reg->indices, &reg->cap_indices, 3 * (size_t)reg->tri_total, sizeof(uint32_t));
    trim((void**)&reg->tri_ids, &reg->cap_tri_ids, reg->tri_total, sizeof(uint32_t));
    trim((void**)&reg->tris, &reg->cap_tris, 9 * (size_t)reg->tri_total, sizeof(float));
    trim((void**)&reg->nodes, &reg->cap_nodes, reg->node_total, sizeof(rtcd_bvh_node));
    trim((void**)&reg->nodes4, &reg->cap_nodes4, reg->node4_total, sizeof(rtcd_bvh4_node));
    trim((void**)&reg->grids, &reg->cap_grids, (size_t)reg->count * RTCD_GRID_BYTES, 1);
    trim((void**)&reg->nears, &reg->cap_nears, (size_t)reg->count * RTCD_NEAR_BYTES, 1);
    trim((void**)&reg->neighbors, &reg->cap_neighbors, 3 * (size_t)reg->tri_total, sizeof(uint32_t));
    trim((void**)&reg->prev_vertices, &reg->cap_prev_vertices, 3 * (size_t)reg->vertex_total, sizeof(float));
    trim((void**)&reg->vertex_balls, &reg->cap_vertex_balls, reg->vertex_total, 1);
    trim((void**)&reg->vertex_tris, &reg->cap_vertex_tris, reg->vertex_total, sizeof(uint32_t));
}

void rtcd_cl_registry_free(cl_mesh_registry* reg)
{
    for (uint32_t i = 0; i < reg->count; ++i) rtcd_mesh_release((rtcd_mesh*)reg->meshes[i]);
    rtcd_free(reg->meshes);
    rtcd_free(reg->table);
    rtcd_free(reg->versions);
    rtcd_free(reg->ids);
    rtcd_free(reg->index_ids);
    rtcd_free(reg->index_at);
    rtcd_free(reg->vertices);
    rtcd_free(reg->vnormals);
    rtcd_free(reg->tnormals);
    rtcd_free(reg->tris);
    rtcd_free(reg->indices);
    rtcd_free(reg->tri_ids);
    rtcd_free(reg->nodes);
    rtcd_free(reg->nodes4);
    rtcd_free(reg->grids);
    rtcd_free(reg->nears);
    rtcd_free(reg->neighbors);
    rtcd_free(reg->prev_vertices);
    rtcd_free(reg->vertex_balls);
    rtcd_free(reg->vertex_tris);
    rtcd_free(reg->refused);
    memset(reg, 0, sizeof *reg);
}

/* ---- the devices' copies ---- */

static void registry_buffers(const cl_mesh_registry* reg, const void* src[RTCD_CL_MESH_BUFFERS],
                             size_t bytes[RTCD_CL_MESH_BUFFERS])
{
    const void* s[RTCD_CL_MESH_BUFFERS] = {reg->table, reg->vertices, reg->vnormals, reg->tnormals,
                                           reg->indices, reg->nodes,    reg->tris,     reg->tri_ids,
                                           reg->grids, reg->nears,    reg->neighbors, reg->prev_vertices,
                                           reg->vertex_balls, reg->vertex_tris, reg->nodes4};
    size_t b[RTCD_CL_MESH_BUFFERS] = {reg->count * sizeof(rtcd_cl_mesh),
                                      3 * (size_t)reg->vertex_total * sizeof(float),
                                      3 * (size_t)reg->vertex_total * sizeof(float),
                                      3 * (size_t)reg->tri_total * sizeof(float),
                                      3 * (size_t)reg->tri_total * sizeof(uint32_t),
                                      (size_t)reg->node_total * sizeof(rtcd_bvh_node),
                                      9 * (size_t)reg->tri_total * sizeof(float),
                                      (size_t)reg->tri_total * sizeof(uint32_t),
                                      (size_t)reg->count * RTCD_GRID_BYTES,
                                      (size_t)reg->count * RTCD_NEAR_BYTES,
                                      3 * (size_t)reg->tri_total * sizeof(uint32_t),
                                      3 * (size_t)reg->vertex_total * sizeof(float),
                                      (size_t)reg->vertex_total,
                                      (size_t)reg->vertex_total * sizeof(uint32_t),
                                      (size_t)reg->node4_total * sizeof(rtcd_bvh4_node)};
    memcpy(src, s, sizeof s);
    memcpy(bytes, b, sizeof b);
}

static void release_mesh_buffers(cl_device_state* d)
{
    for (int b = 0; b < RTCD_CL_MESH_BUFFERS; ++b)
        if (d->mesh_buffers[b]) clReleaseMemObject(d->mesh_buffers[b]);
    memset(d->mesh_buffers, 0, sizeof d->mesh_buffers);
    d->mesh_version = 0;
}

/* Brings d up to the registry. The old copies go first (the peak is one
 * copy, not two). On failure *buffer names the buffer that failed and d
 * holds no mesh buffers at all (mesh_version 0): nothing half-made is left. */
static cl_int upload(cl_device_state* d, const cl_mesh_registry* reg, int* buffer)
{
    if (d->mesh_version == reg->version) return CL_SUCCESS;
    release_mesh_buffers(d);
    const void* src[RTCD_CL_MESH_BUFFERS];
    size_t bytes[RTCD_CL_MESH_BUFFERS];
    registry_buffers(reg, src, bytes);
    for (int b = 0; b < RTCD_CL_MESH_BUFFERS; ++b) {
        if (!bytes[b]) continue; /* an empty registry: no buffers (no pair reads them) */
        cl_int err = CL_SUCCESS;
        if (d->fail_bytes && bytes[b] > d->fail_bytes)
            err = CL_MEM_OBJECT_ALLOCATION_FAILURE; /* the test hook's device out of memory */
        else
            d->mesh_buffers[b] =
                clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes[b], (void*)src[b], &err);
        if (err == CL_SUCCESS && !d->mesh_buffers[b]) err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        if (err != CL_SUCCESS) {
            d->mesh_buffers[b] = NULL;
            release_mesh_buffers(d);
            *buffer = b;
            return err;
        }
    }
    d->mesh_version = reg->version;
    d->full_uploads++;
    for (int b = 0; b < RTCD_CL_MESH_BUFFERS; ++b) d->upload_bytes += bytes[b];
    return CL_SUCCESS;
}

rtcd_error rtcd_cl_upload_meshes(cl_device_state* d, const cl_mesh_registry* reg)
{
    int buffer = 0;
    cl_int err = upload(d, reg, &buffer);
    if (err != CL_SUCCESS)
        return rtcd_fail(RTCD_ERROR_DEVICE, "OpenCL clCreateBuffer(%s) failed on %s: %s (%d)", k_buffer_names[buffer],
                         d->name, rtcd_cl_error_string(err), (int)err);
    return RTCD_OK;
}

/* ---- deformed meshes ---- */

/* Where entry i lies in each device buffer, in bytes. Indices, neighbours
 * and vertex triangles: none (a deformation keeps the topology). */
static void entry_ranges(const cl_mesh_registry* reg, uint32_t i, size_t off[RTCD_CL_MESH_BUFFERS],
                         size_t bytes[RTCD_CL_MESH_BUFFERS])
{
    const rtcd_cl_mesh* e = &reg->table[i];
    size_t vo = e->vertex_offset, nv = e->vertex_count, to = e->tri_offset, nt = e->tri_count;
    const size_t o[RTCD_CL_MESH_BUFFERS] = {(size_t)i * sizeof(rtcd_cl_mesh),
                                            3 * vo * sizeof(float),
                                            3 * vo * sizeof(float),
                                            3 * to * sizeof(float),
                                            0,
                                            (size_t)e->node_offset * sizeof(rtcd_bvh_node),
                                            9 * to * sizeof(float),
                                            to * sizeof(uint32_t),
                                            e->grid_offset,
                                            e->near_offset,
                                            0,
                                            3 * vo * sizeof(float),
                                            vo,
                                            0,
                                            (size_t)e->node4_offset * sizeof(rtcd_bvh4_node)};
    const size_t b[RTCD_CL_MESH_BUFFERS] = {sizeof(rtcd_cl_mesh),
                                            3 * nv * sizeof(float),
                                            3 * nv * sizeof(float),
                                            3 * nt * sizeof(float),
                                            0,
                                            (size_t)e->node_count * sizeof(rtcd_bvh_node),
                                            9 * nt * sizeof(float),
                                            nt * sizeof(uint32_t),
                                            RTCD_GRID_BYTES,
                                            RTCD_NEAR_BYTES,
                                            0,
                                            3 * nv * sizeof(float),
                                            nv,
                                            0,
                                            (size_t)e->node4_count * sizeof(rtcd_bvh4_node)};
    memcpy(off, o, sizeof o);
    memcpy(bytes, b, sizeof b);
}

/* What a device holding the entry before its refresh need not be sent:
 * the previous vertices are its vertices (one update since: copied on the
 * device), the leaf order is the same (a refit: the triangle ids stay). */
enum { KEEP_PREV_ON_DEVICE = 1, KEEP_TRI_IDS = 2 };
#define ENTRY 0x3fffffffu /* the refreshed entries' list: the index below, the KEEP_ flags in the top bits */

/* Copies entry i's mesh over the entry again (its sizes held); returns the
 * KEEP_ flags. */
static unsigned refresh_entry(cl_mesh_registry* reg, uint32_t i)
{
    const rtcd_mesh* m = reg->meshes[i];
    rtcd_cl_mesh* e = &reg->table[i];
    size_t vo = 3 * (size_t)e->vertex_offset, to = e->tri_offset, nv = m->vertex_count, nt = m->triangle_count;
    rtcd_mesh_grids_ready(m);
    unsigned keep = 0;
    if (!memcmp(reg->vertices + vo, prev_of(m), 3 * nv * sizeof(float))) keep |= KEEP_PREV_ON_DEVICE;
    if (!memcmp(reg->tri_ids + to, m->bvh.tri_ids, nt * sizeof(uint32_t))) keep |= KEEP_TRI_IDS;
    memcpy(reg->vertices + vo, m->vertices, 3 * nv * sizeof(float));
    memcpy(reg->prev_vertices + vo, prev_of(m), 3 * nv * sizeof(float));
    memcpy(reg->vnormals + vo, m->vertex_normals, 3 * nv * sizeof(float));
    memcpy(reg->tnormals + 3 * to, m->triangle_normals, 3 * nt * sizeof(float));
    memcpy(reg->tris + 9 * to, m->bvh.tris, 9 * nt * sizeof(float));
    /* A rebuild that kept the node count may still have reordered the leaves. */
    memcpy(reg->tri_ids + to, m->bvh.tri_ids, nt * sizeof(uint32_t));
    memcpy(reg->nodes + e->node_offset, m->bvh.nodes, (size_t)e->node_count * sizeof(rtcd_bvh_node));
    /* The 4-wide boxes follow the refit (rtcd_bvh4_refit), or a rebuild of the same size. */
    if (e->node4_count)
        memcpy(reg->nodes4 + e->node4_offset, m->bvh.nodes4, (size_t)e->node4_count * sizeof(rtcd_bvh4_node));
    memcpy(reg->grids + e->grid_offset, m->grid.solid, RTCD_GRID_BYTES);
    memcpy(reg->nears + e->near_offset, m->grid.near, RTCD_NEAR_BYTES);
    entry_shape(e, m, reg->vertex_balls + e->vertex_offset);
    reg->versions[i] = m->version;
    return keep;
}

/* Queues entries first..last to a device that holds the registry (not
 * waited for). Consecutive entries are contiguous in every buffer: one
 * write per buffer, however many meshes deformed side by side. */
static cl_int write_entries(cl_device_state* d, const cl_mesh_registry* reg, uint32_t first, uint32_t last,
                            unsigned keep)
{
    enum { VERTICES = 1, TRI_IDS = 7, PREV = 11, NODES4 = 14 };
    _Static_assert(RTCD_CL_MESH_BUFFERS == 15,
                   "k_buffer_names' order: vertices 1, triangle ids 7, previous 11, 4-wide nodes 14");
    const void* src[RTCD_CL_MESH_BUFFERS];
    size_t all[RTCD_CL_MESH_BUFFERS], off[RTCD_CL_MESH_BUFFERS], bytes[RTCD_CL_MESH_BUFFERS];
    size_t end[RTCD_CL_MESH_BUFFERS], end_bytes[RTCD_CL_MESH_BUFFERS], sent = 0;
    registry_buffers(reg, src, all);
    entry_ranges(reg, first, off, bytes);
    entry_ranges(reg, last, end, end_bytes);
    if (keep & KEEP_TRI_IDS) bytes[TRI_IDS] = 0;
    /* A mesh without a 4-wide copy has none to send, its neighbours may. */
    bytes[NODES4] = end[NODES4] + end_bytes[NODES4] - off[NODES4];
    if (keep & KEEP_PREV_ON_DEVICE) { /* before the vertices' write (the queue runs in order) */
        cl_int st = clEnqueueCopyBuffer(d->queue, d->mesh_buffers[VERTICES], d->mesh_buffers[PREV], off[VERTICES],
                                        off[PREV], end[VERTICES] + end_bytes[VERTICES] - off[VERTICES], 0, NULL, NULL);
        if (st != CL_SUCCESS) return st;
        bytes[PREV] = 0;
    }
    for (int b = 0; b < RTCD_CL_MESH_BUFFERS; ++b) {
        if (!bytes[b]) continue; /* what a deformation keeps */
        size_t n = end[b] + end_bytes[b] - off[b];
        cl_int st = clEnqueueWriteBuffer(d->queue, d->mesh_buffers[b], CL_FALSE, off[b], n,
                                         (const char*)src[b] + off[b], 0, NULL, NULL);
        if (st != CL_SUCCESS) return st;
        sent += n;
    }
    d->mesh_refreshes += last - first + 1;
    d->upload_bytes += sent;
    return CL_SUCCESS;
}

static int by_index(const void* x, const void* y)
{
    uint32_t a = *(const uint32_t*)x & ENTRY, b = *(const uint32_t*)y & ENTRY;
    return (a > b) - (a < b);
}

/* Meshes out of the registry for a moment, retained here: they come back
 * in the same call, whoever else holds them. */
typedef struct held_meshes {
    const rtcd_mesh** meshes;
    uint32_t count;
} held_meshes;

static void release_held(held_meshes* h)
{
    for (uint32_t i = 0; i < h->count; ++i) rtcd_mesh_release((rtcd_mesh*)h->meshes[i]);
    rtcd_free(h->meshes);
    h->meshes = NULL;
    h->count = 0;
}

static int resized(const cl_mesh_registry* reg, uint32_t i)
{
    const rtcd_mesh* m = reg->meshes[i];
    uint32_t n4 = m->bvh.nodes4 ? m->bvh.node4_count : 0u;
    return reg->versions[i] != m->version &&
           (m->bvh.node_count != reg->table[i].node_count || n4 != reg->table[i].node4_count);
}

/* Entries from `cut` on leave the registry into *held: those whose sizes
 * held first, the resized ones last, so that when the whole no longer fits
 * a device, the settling refuses a resized mesh rather than one that was
 * there before. */
static rtcd_error take_out(cl_mesh_registry* reg, uint32_t cut, held_meshes* held)
{
    held->meshes = rtcd_alloc((size_t)(reg->count - cut) * sizeof *held->meshes);
    if (!held->meshes) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory to register deformed meshes again");
    for (int last = 0; last < 2; ++last)
        for (uint32_t j = cut; j < reg->count; ++j) {
            if (resized(reg, j) != last) continue;
            rtcd_mesh_retain((rtcd_mesh*)reg->meshes[j]);
            held->meshes[held->count++] = reg->meshes[j];
            reg->reregistrations += (uint64_t)last;
        }
    const rtcd_cl_mesh* e = &reg->table[cut];
    registry_mark m = {cut, e->vertex_offset, e->tri_offset, e->node_offset, e->node4_offset, 0};
    roll_back(reg, &m);
    new_version(reg); /* no earlier version named this content */
    return RTCD_OK;
}

/* The call's registered meshes that deformed since their entry was copied.
 * where[i]: the registry index of the call's i-th mesh (RTCD_CL_NO_SLOT:
 * not registered), still right when *held comes back empty. */
/* Every body's entry (where[]), on the call's workers: how many are stale
 * (their mesh deformed since it was written) and the first resized. */
typedef struct lookup_job {
    const cl_mesh_registry* reg;
    const rtcd_body_desc* bodies;
    uint32_t* where;
    _Atomic uint32_t stale, cut;
} lookup_job;


/* Pieces of the lookup: a body costs a cache miss or two. */
#define LOOKUP_RANGE 512u

static void lookup_range(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    lookup_job* job = ctx;
    const cl_mesh_registry* reg = job->reg;
    uint32_t stale = 0, cut = UINT32_MAX;
    for (uint32_t i = begin; i < end; ++i) {
        const rtcd_mesh* m = job->bodies[i].mesh;
        if (!m) { /* a body no pair names (checked before: core/batch/batch.c, rtcd_call_expand) */
            job->where[i] = RTCD_CL_NO_SLOT;
            continue;
        }
        uint32_t at = job->where[i] = lookup_mesh(reg, m);
        if (at == RTCD_CL_NO_SLOT || reg->versions[at] == m->version) continue;
        stale++;
        if (resized(reg, at) && at < cut) cut = at;
    }
    if (stale) atomic_fetch_add_explicit(&job->stale, stale, memory_order_relaxed);
    rtcd_atomic_min_u32(&job->cut, cut);
}

/* The index is current (rtcd_cl_place_meshes made it so). */
static rtcd_error follow_deformations(rtcd_opencl* cl, const rtcd_body_desc* bodies, uint32_t n, uint32_t* where,
                                      held_meshes* held)
{
    cl_mesh_registry* reg = &cl->registry;
    lookup_job job = {.reg = reg, .bodies = bodies, .where = where};
    atomic_init(&job.stale, 0u);
    atomic_init(&job.cut, reg->count);
    rtcd_parallel_for(&cl->tasks, n, LOOKUP_RANGE, lookup_range, &job);
    uint32_t cut = atomic_load(&job.cut), stale = atomic_load(&job.stale);
    if (!stale) return RTCD_OK;
    /* Same sizes: the new content goes over the old, on the host and on
     * every device that holds the registry; a device whose writes fail
     * drops its copy and takes a whole one below (or says why not). When
     * entries are taken out every device takes a whole copy anyway. */
    uint32_t old = reg->version, k = 0;
    int in_place = cut == reg->count;
    uint32_t* fresh = NULL; /* the refreshed entries, for the device writes */
    if (in_place && !(fresh = rtcd_alloc((size_t)stale * sizeof *fresh)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory to follow %u deformed mesh(es)", stale);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t at = where[i];
        if (at == RTCD_CL_NO_SLOT || at >= cut || reg->versions[at] == reg->meshes[at]->version) continue;
        unsigned flags = refresh_entry(reg, at);
        if (fresh) fresh[k++] = at | (uint32_t)flags << 30; /* entries stay far below 2^30 */
    }
    new_version(reg);
    if (k) qsort(fresh, k, sizeof *fresh, by_index);
    for (uint32_t d = 0; d < cl->device_count && in_place; ++d) {
        cl_device_state* dev = &cl->devices[d];
        if (dev->mesh_version != old) continue; /* takes a whole copy below */
        int ok = 1;
        for (uint32_t s = 0, e; s < k && ok; s = e + 1) {
            /* a run of neighbouring entries that keep the same */
            for (e = s; e + 1 < k && (fresh[e + 1] & ENTRY) == (fresh[e] & ENTRY) + 1 &&
                        fresh[e + 1] >> 30 == fresh[s] >> 30;)
                ++e;
            ok = write_entries(dev, reg, fresh[s] & ENTRY, fresh[e] & ENTRY, fresh[s] >> 30) == CL_SUCCESS;
        }
        /* Waited for here: the host arrays may move (grow, trim) later in the call. */
        if (clFinish(dev->queue) == CL_SUCCESS && ok)
            dev->mesh_version = reg->version;
        else
            release_mesh_buffers(dev);
    }
    rtcd_free(fresh);
    return in_place ? RTCD_OK : take_out(reg, cut, held);
}

/* ---- placing a call's meshes ---- */

/* Why the registry's content does not fit: the status, the device and the
 * buffer, its size; by_size: found by the size rule alone (no OpenCL call). */
typedef struct fit_failure {
    cl_int status;
    uint32_t device;
    int buffer;
    size_t bytes;
    int by_size;
} fit_failure;

static cl_int upload_all(rtcd_opencl* cl, fit_failure* f)
{
    for (uint32_t d = 0; d < cl->device_count; ++d) {
        int buffer = 0;
        cl_int st = upload(&cl->devices[d], &cl->registry, &buffer);
        if (st != CL_SUCCESS) {
            const void* src[RTCD_CL_MESH_BUFFERS];
            size_t bytes[RTCD_CL_MESH_BUFFERS];
            registry_buffers(&cl->registry, src, bytes);
            f->status = st;
            f->device = d;
            f->buffer = buffer;
            f->bytes = bytes[buffer];
            f->by_size = 0;
            return st;
        }
    }
    return CL_SUCCESS;
}

/* A buffer larger than a device's CL_DEVICE_MAX_MEM_ALLOC_SIZE, which
 * clCreateBuffer refuses with CL_INVALID_BUFFER_SIZE: 1 and *f says which. */
static int over_size(const rtcd_opencl* cl, fit_failure* f)
{
    const void* src[RTCD_CL_MESH_BUFFERS];
    size_t bytes[RTCD_CL_MESH_BUFFERS];
    registry_buffers(&cl->registry, src, bytes);
    for (uint32_t d = 0; d < cl->device_count; ++d) {
        cl_ulong limit = cl->devices[d].max_alloc;
        for (int b = 0; limit && b < RTCD_CL_MESH_BUFFERS; ++b)
            if (bytes[b] > limit) {
                f->status = CL_INVALID_BUFFER_SIZE;
                f->device = d;
                f->buffer = b;
                f->bytes = bytes[b];
                f->by_size = 1;
                return 1;
            }
    }
    return 0;
}

/* Does the registry's content fit? by_size: the size rule decides alone;
 * otherwise every device takes it (uploaded). */
static int fits(rtcd_opencl* cl, int by_size, fit_failure* f)
{
    if (over_size(cl, f)) return 0;
    return by_size || upload_all(cl, f) == CL_SUCCESS;
}

/* The device refused the memory (as opposed to a broken context or queue). */
static int allocation_failure(cl_int st)
{
    return st == CL_INVALID_BUFFER_SIZE || st == CL_MEM_OBJECT_ALLOCATION_FAILURE || st == CL_OUT_OF_RESOURCES ||
           st == CL_OUT_OF_HOST_MEMORY;
}

static const double k_mib = 1024.0 * 1024.0;

/* m stays off the devices for good: remembered, and said once. `beside`:
 * how many meshes are on the devices without it. */
static rtcd_error refuse(rtcd_opencl* cl, const rtcd_mesh* m, const fit_failure* f, uint32_t beside)
{
    cl_mesh_registry* reg = &cl->registry;
    size_t cap = reg->refused_cap;
    if (!rtcd_grow((void**)&reg->refused, &cap, (size_t)reg->refused_count + 1, sizeof *reg->refused))
        return RTCD_ERROR_OUT_OF_MEMORY;
    reg->refused_cap = (uint32_t)cap;
    cl_refused_mesh* r = &reg->refused[reg->refused_count++];
    r->mesh = m;
    r->id = m->id;
    const cl_device_state* d = &cl->devices[f->device];
    char others[64] = "";
    if (beside) snprintf(others, sizeof others, " beside the %u mesh(es) already there", beside);
    if (f->by_size)
        rtcd_log(RTCD_LOG_WARNING,
                 "rtcd: OpenCL: mesh '%s' (%u triangles) does not fit on device %s%s: the %s would take %.1f MiB in "
                 "one buffer, the device allows %.1f MiB (CL_DEVICE_MAX_MEM_ALLOC_SIZE) and clCreateBuffer fails "
                 "with %s (%d); its pairs run on the CPU reference backend",
                 m->name, m->triangle_count, d->name, others, k_buffer_names[f->buffer], (double)f->bytes / k_mib,
                 (double)d->max_alloc / k_mib, rtcd_cl_error_string(f->status), (int)f->status);
    else
        rtcd_log(RTCD_LOG_WARNING,
                 "rtcd: OpenCL: mesh '%s' (%u triangles) does not fit on device %s%s: clCreateBuffer(%s, %.1f MiB) "
                 "failed: %s (%d); its pairs run on the CPU reference backend",
                 m->name, m->triangle_count, d->name, others, k_buffer_names[f->buffer], (double)f->bytes / k_mib,
                 rtcd_cl_error_string(f->status), (int)f->status);
    return RTCD_OK;
}

/* fresh[0..k): the call's new meshes, in order of first use, none in the
 * registry, whose content fits. Appends those that fit; each mesh that
 * makes the content stop fitting is refused. `all`: why base plus all of
 * fresh does not fit. For each refusal a binary search finds the longest
 * run that still fits (log k probes; with the size rule no OpenCL call). */
static rtcd_error settle(rtcd_opencl* cl, const rtcd_mesh* const* fresh, uint32_t k, int by_size, fit_failure all)
{
    cl_mesh_registry* reg = &cl->registry;
    fit_failure fail = all; /* why base plus fresh[start..k) does not fit */
    int known = 1;
    uint32_t start = 0;
    while (start < k) {
        registry_mark base = mark_of(reg);
        if (!known) {
            if (!append_run(reg, fresh, start, k)) return RTCD_ERROR_OUT_OF_MEMORY;
            if (fits(cl, by_size, &fail)) return RTCD_OK;
            roll_back(reg, &base);
        }
        known = 0;
        /* fresh[start..start+lo) fits with base, fresh[start..start+hi) does not. */
        uint32_t lo = 0, hi = k - start;
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            fit_failure f;
            if (!append_run(reg, fresh, start, start + mid)) return RTCD_ERROR_OUT_OF_MEMORY;
            int ok = fits(cl, by_size, &f);
            roll_back(reg, &base);
            if (ok) {
                lo = mid;
            } else {
                hi = mid;
                fail = f;
            }
        }
        if (!append_run(reg, fresh, start, start + lo)) return RTCD_ERROR_OUT_OF_MEMORY;
        rtcd_error err = refuse(cl, fresh[start + lo], &fail, reg->count);
        if (err != RTCD_OK) return err;
        start += lo + 1;
    }
    return RTCD_OK;
}

/* The call's new meshes (appended since `before`) leave the registry and
 * are settled again, one by one where they do not fit together. */
static rtcd_error resettle(rtcd_opencl* cl, const registry_mark* before, int by_size, fit_failure all)
{
    cl_mesh_registry* reg = &cl->registry;
    uint32_t k = reg->count - before->count;
    const rtcd_mesh** fresh = rtcd_alloc((size_t)k * sizeof *fresh);
    if (!fresh) return RTCD_ERROR_OUT_OF_MEMORY;
    /* The call's pairs (or the call, for entries taken out to follow a
     * deformation: held_meshes) hold these meshes: they outlive the
     * registry's release. */
    memcpy(fresh, reg->meshes + before->count, (size_t)k * sizeof *fresh);
    roll_back(reg, before);
    fit_failure f;
    rtcd_error err = RTCD_OK;
    /* The content the call began with fits (the previous call left it on
     * every device): else the device, not a mesh, is at fault. */
    if (!fits(cl, by_size, &f))
        err = rtcd_fail(RTCD_ERROR_DEVICE, "OpenCL: device %s no longer takes the meshes it held: %s (%d)",
                        cl->devices[f.device].name, rtcd_cl_error_string(f.status), (int)f.status);
    else
        err = settle(cl, fresh, k, by_size, all);
    if (err == RTCD_ERROR_OUT_OF_MEMORY) err = rtcd_fail(err, "OpenCL: no memory to register this call's meshes");
    rtcd_free(fresh);
    return err;
}

/* where[]: as follow_deformations left it; `held`: entries it took out. */
static rtcd_error place(rtcd_opencl* cl, const rtcd_body_desc* bodies, uint32_t n, uint32_t* where,
                        const held_meshes* held)
{
    cl_mesh_registry* reg = &cl->registry;
    registry_mark before = mark_of(reg);
    /* Entries taken out come back first, as new meshes of this call. */
    if (!append_run(reg, held->meshes, 0, held->count)) {
        roll_back(reg, &before);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory to register deformed meshes again");
    }
    for (uint32_t i = 0; i < n; ++i) {
        const rtcd_mesh* m = bodies[i].mesh;
        if (!m) continue; /* where[i] stays RTCD_CL_NO_SLOT: no pair names it */
        uint32_t at = where[i];
        if (held->count || at == RTCD_CL_NO_SLOT) at = find_mesh(reg, m);
        if (at == RTCD_CL_NO_SLOT && !is_refused(reg, m)) {
            if (!append_mesh(reg, m)) {
                roll_back(reg, &before);
                return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory to register mesh %s", m->name);
            }
            at = reg->count - 1;
        }
        where[i] = at;
    }
    fit_failure f;
    cl_int st = upload_all(cl, &f);
    if (st == CL_SUCCESS) return RTCD_OK;
    rtcd_error err = RTCD_OK;
    if (allocation_failure(st) && reg->count > before.count) {
        /* Which of the new meshes did not fit? When a buffer exceeds a
         * device's largest allocation the sizes tell, without a device;
         * otherwise each probe is an upload. */
        fit_failure by_rule;
        int by_size = st == CL_INVALID_BUFFER_SIZE && over_size(cl, &by_rule);
        err = resettle(cl, &before, by_size, by_size ? by_rule : f);
        if (err == RTCD_OK) st = upload_all(cl, &f);
        if (err == RTCD_OK && st != CL_SUCCESS && by_size && allocation_failure(st)) {
            /* The sizes fit but the device still says no: probe by uploads. */
            err = resettle(cl, &before, 0, f);
            if (err == RTCD_OK) st = upload_all(cl, &f);
        }
    }
    if (err == RTCD_OK && st != CL_SUCCESS)
        err = rtcd_fail(RTCD_ERROR_DEVICE, "OpenCL clCreateBuffer(%s) failed on %s: %s (%d)", k_buffer_names[f.buffer],
                        cl->devices[f.device].name, rtcd_cl_error_string(st), (int)st);
    if (err != RTCD_OK) {
        /* Nothing new of this call stays: the next call tries its meshes again. */
        roll_back(reg, &before);
        trim_registry(reg);
        return err;
    }
    trim_registry(reg);
    /* The indices moved: read them again (a refused mesh: none). */
    for (uint32_t i = 0; i < n; ++i) where[i] = bodies[i].mesh ? find_mesh(reg, bodies[i].mesh) : RTCD_CL_NO_SLOT;
    return RTCD_OK;
}

rtcd_error rtcd_cl_place_meshes(rtcd_opencl* cl, const rtcd_body_desc* bodies, uint32_t n, uint32_t* where)
{
    /* Room in find_mesh's index for every mesh the call may append, so that
     * only this allocation can fail, and says so. */
    if (!index_current(&cl->registry, (uint64_t)cl->registry.count + (uint64_t)n))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory to index %u meshes", cl->registry.count + n);
    held_meshes held = {NULL, 0};
    rtcd_error err = follow_deformations(cl, bodies, n, where, &held);
    if (err == RTCD_OK) err = place(cl, bodies, n, where, &held);
    release_held(&held);
    return err;
}
