/* One triangle per vertex, for the serial kernel's second phase: it walks
 * the fan of triangles around each marked vertex (through the triangle
 * neighbours) instead of looking at every triangle of both meshes. The walk
 * sees exactly the triangles that hold the vertex when every vertex's
 * triangles form one closed fan, each holding it once; a mesh where one
 * does not (open surfaces, pinched vertices, repeated corners, a vertex of
 * RTCD_CL_FAN_ITEMS triangles or more) gets
 * fans = 0 and the kernel looks at every triangle, as before. Either way
 * the same items run, so the results stay the CPU's. */
#include "cl_internal.h"

#include <string.h>

/* Corner of t that is v, or 3. */
static uint32_t corner_of(const uint32_t* idx, uint32_t t, uint32_t v)
{
    for (uint32_t j = 0; j < 3; ++j)
        if (idx[3 * t + j] == v) return j;
    return 3;
}

int rtcd_cl_vertex_fans(const rtcd_mesh* m, uint32_t* vertex_tris)
{
    uint32_t nv = m->vertex_count, nt = m->triangle_count;
    const uint32_t* idx = m->indices;
    memset(vertex_tris, 0xff, (size_t)nv * sizeof *vertex_tris);
    for (uint32_t t = 0; t < nt; ++t) {
        uint32_t a = idx[3 * t], b = idx[3 * t + 1], c = idx[3 * t + 2];
        if (a == b || b == c || a == c) return 0;
        for (uint32_t j = 0; j < 3; ++j)
            if (vertex_tris[idx[3 * t + j]] == RTCD_INVALID) vertex_tris[idx[3 * t + j]] = t;
    }
    /* Each walk around a vertex returns to its start without a repeat, so it
     * sees distinct triangles that hold the vertex; the walks together see
     * all 3 nt corners only when every walk saw all of its vertex's. */
    uint64_t seen = 0;
    for (uint32_t v = 0; v < nv; ++v) {
        uint32_t start = vertex_tris[v], t = start, steps = 0;
        if (start == RTCD_INVALID) continue; /* unreferenced: no normal, never an item */
        do {
            uint32_t j = corner_of(idx, t, v);
            uint32_t next = j < 3 ? m->neighbors[3 * t + (j + 2) % 3] : RTCD_INVALID;
            /* Past RTCD_CL_FAN_ITEMS - 1 triangles the kernel's list would not hold the fan. */
            if (next == RTCD_INVALID || ++steps >= RTCD_CL_FAN_ITEMS) return 0;
            t = next;
        } while (t != start);
        seen += steps;
    }
    return seen == 3ull * nt;
}
