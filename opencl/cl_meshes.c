/* Meshes on the devices: each mesh is appended once to concatenated arrays
 * (vertices, normals, indices, BVH, occupancy and near grids, triangle
 * neighbours) shared by every pair that
 * uses it; devices re-upload only when a new mesh arrives. */
#include "cl_internal.h"

#include <string.h>

_Static_assert(RTCD_GRID_N == RTCD_NEAR_GRID_N, "the kernels' near grid is the mesh's occupancy grid");
_Static_assert(sizeof(((rtcd_solid_grid*)0)->near) == RTCD_NEAR_BYTES, "near grid layout");

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

rtcd_error rtcd_cl_register_mesh(cl_mesh_registry* reg, const rtcd_mesh* m, uint32_t* index)
{
    for (uint32_t i = 0; i < reg->count; ++i)
        if (reg->meshes[i] == m) {
            *index = i;
            return RTCD_OK;
        }
    uint32_t nv = m->vertex_count, nt = m->triangle_count, nn = m->bvh.node_count;
    int ok = grow((void**)&reg->meshes, &reg->cap, reg->count + 1, sizeof *reg->meshes) &&
             grow((void**)&reg->table, &reg->cap_table, reg->count + 1, sizeof *reg->table) &&
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
             append((void**)&reg->grids, &reg->cap_grids, reg->count * RTCD_GRID_BYTES, m->grid.solid,
                    RTCD_GRID_BYTES, 1) &&
             append((void**)&reg->nears, &reg->cap_nears, reg->count * RTCD_NEAR_BYTES, m->grid.near, RTCD_NEAR_BYTES,
                    1) &&
             append((void**)&reg->neighbors, &reg->cap_neighbors, 3 * reg->tri_total, m->neighbors, 3 * nt,
                    sizeof(uint32_t));
    if (!ok) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory to register mesh %s", m->name);
    rtcd_cl_mesh* e = &reg->table[reg->count];
    memset(e, 0, sizeof *e);
    e->vertex_offset = reg->vertex_total;
    e->vertex_count = nv;
    e->tri_offset = reg->tri_total;
    e->tri_count = nt;
    e->node_offset = reg->node_total;
    e->node_count = nn;
    e->grid_offset = reg->count * RTCD_GRID_BYTES;
    e->near_offset = reg->count * RTCD_NEAR_BYTES;
    e->min_cell = m->grid.min_cell;
    for (int k = 0; k < 3; ++k) {
        e->lo[k] = m->lo[k];
        e->hi[k] = m->hi[k];
        e->grid_lo[k] = m->grid.lo[k];
        e->grid_inv[k] = m->grid.inv_cell[k];
    }
    rtcd_mesh_retain((rtcd_mesh*)m); /* device copies mirror it: keep it alive */
    reg->meshes[reg->count] = m;
    reg->vertex_total += nv;
    reg->tri_total += nt;
    reg->node_total += nn;
    *index = reg->count++;
    reg->version++;
    return RTCD_OK;
}

void rtcd_cl_registry_free(cl_mesh_registry* reg)
{
    for (uint32_t i = 0; i < reg->count; ++i) rtcd_mesh_release((rtcd_mesh*)reg->meshes[i]);
    rtcd_free(reg->meshes);
    rtcd_free(reg->table);
    rtcd_free(reg->vertices);
    rtcd_free(reg->vnormals);
    rtcd_free(reg->tnormals);
    rtcd_free(reg->tris);
    rtcd_free(reg->indices);
    rtcd_free(reg->tri_ids);
    rtcd_free(reg->nodes);
    rtcd_free(reg->grids);
    rtcd_free(reg->nears);
    rtcd_free(reg->neighbors);
    memset(reg, 0, sizeof *reg);
}

rtcd_error rtcd_cl_upload_meshes(cl_device_state* d, const cl_mesh_registry* reg)
{
    if (d->mesh_version == reg->version) return RTCD_OK;
    const void* src[RTCD_CL_MESH_BUFFERS] = {reg->table, reg->vertices, reg->vnormals, reg->tnormals,
                                             reg->indices, reg->nodes, reg->tris, reg->tri_ids,
                                             reg->grids, reg->nears, reg->neighbors};
    size_t bytes[RTCD_CL_MESH_BUFFERS] = {reg->count * sizeof(rtcd_cl_mesh), 3 * (size_t)reg->vertex_total * sizeof(float),
                       3 * (size_t)reg->vertex_total * sizeof(float), 3 * (size_t)reg->tri_total * sizeof(float),
                       3 * (size_t)reg->tri_total * sizeof(uint32_t), (size_t)reg->node_total * sizeof(rtcd_bvh_node),
                       9 * (size_t)reg->tri_total * sizeof(float), (size_t)reg->tri_total * sizeof(uint32_t),
                       (size_t)reg->count * RTCD_GRID_BYTES, (size_t)reg->count * RTCD_NEAR_BYTES,
                       3 * (size_t)reg->tri_total * sizeof(uint32_t)};
    for (int b = 0; b < RTCD_CL_MESH_BUFFERS; ++b) {
        if (d->mesh_buffers[b]) clReleaseMemObject(d->mesh_buffers[b]);
        d->mesh_buffers[b] = NULL;
        cl_int err;
        d->mesh_buffers[b] = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes[b],
                                            (void*)src[b], &err);
        RTCD_CL_CHECK(err, "clCreateBuffer(mesh data)");
    }
    d->mesh_version = reg->version;
    return RTCD_OK;
}
