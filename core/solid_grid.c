/* A coarse occupancy grid over each mesh's box: a cell is "solid" when it may
 * hold part of the closed mesh (its surface or its inside). A vertex in a
 * cell that is not solid lies outside the mesh, so its ray can never collide
 * (the first hit from outside enters): the narrow phase skips it. This keeps
 * the candidate set to vertices near or inside the other body, instead of the
 * whole box overlap, at one table lookup per vertex. */
#include "core_internal.h"

#include <math.h>
#include <string.h>

static uint32_t cell_index(int x, int y, int z)
{
    return ((uint32_t)z * RTCD_GRID_N + (uint32_t)y) * RTCD_GRID_N + (uint32_t)x;
}

static int clamp_cell(float v) { return v < 0.0f ? 0 : (v >= RTCD_GRID_N ? RTCD_GRID_N - 1 : (int)v); }

/* Chebyshev distance to the nearest solid cell: breadth-first over the 26
 * neighbours from every solid cell at once. */
static void build_near(rtcd_solid_grid* g, const uint8_t* state, uint16_t* queue)
{
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N; ++i) {
        g->near[i] = 255;
        if (state[i] != 2) {
            g->near[i] = 0;
            queue[tail++] = (uint16_t)i;
        }
    }
    while (head < tail) {
        uint32_t i = queue[head++];
        int x = (int)(i % RTCD_GRID_N), y = (int)(i / RTCD_GRID_N % RTCD_GRID_N), z = (int)(i / (RTCD_GRID_N * RTCD_GRID_N));
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    int nx = x + dx, ny = y + dy, nz = z + dz;
                    if (nx < 0 || ny < 0 || nz < 0 || nx >= RTCD_GRID_N || ny >= RTCD_GRID_N || nz >= RTCD_GRID_N)
                        continue;
                    uint32_t j = cell_index(nx, ny, nz);
                    if (g->near[j] != 255) continue;
                    g->near[j] = (uint8_t)(g->near[i] + 1);
                    queue[tail++] = (uint16_t)j;
                }
    }
}

rtcd_error rtcd_solid_grid_build(rtcd_mesh* m)
{
    rtcd_solid_grid* g = &m->grid;
    for (int k = 0; k < 3; ++k) {
        float ext = m->hi[k] - m->lo[k];
        float pad = 1e-4f * ext + 1e-6f * fabsf(m->lo[k]) + 1e-30f;
        g->lo[k] = m->lo[k] - pad;
        g->inv_cell[k] = RTCD_GRID_N / (ext + 2.0f * pad);
    }
    enum { CELLS = RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N };
    uint8_t state[CELLS]; /* 0 unknown, 1 surface, 2 outside */
    memset(state, 0, sizeof state);
    /* Every cell a triangle's box touches (inclusive): a superset of the surface cells. */
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        float lo[3] = {RTCD_FLT_MAX, RTCD_FLT_MAX, RTCD_FLT_MAX}, hi[3] = {-RTCD_FLT_MAX, -RTCD_FLT_MAX, -RTCD_FLT_MAX};
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k) {
                float v = m->vertices[3 * m->indices[3 * t + c] + k];
                lo[k] = fminf(lo[k], v);
                hi[k] = fmaxf(hi[k], v);
            }
        int c0[3], c1[3];
        for (int k = 0; k < 3; ++k) {
            /* Widen by a hair so a triangle lying on a cell face marks both sides. */
            c0[k] = clamp_cell((lo[k] - g->lo[k]) * g->inv_cell[k] - 1e-3f);
            c1[k] = clamp_cell((hi[k] - g->lo[k]) * g->inv_cell[k] + 1e-3f);
        }
        for (int z = c0[2]; z <= c1[2]; ++z)
            for (int y = c0[1]; y <= c1[1]; ++y)
                for (int x = c0[0]; x <= c1[0]; ++x) state[cell_index(x, y, z)] = 1;
    }
    /* Flood the outside from the border through face neighbours: the surface
     * cells form a closed wall, so what stays unknown is inside. */
    uint16_t queue[CELLS];
    uint32_t head = 0, tail = 0;
    for (int z = 0; z < RTCD_GRID_N; ++z)
        for (int y = 0; y < RTCD_GRID_N; ++y)
            for (int x = 0; x < RTCD_GRID_N; ++x) {
                int border = x == 0 || y == 0 || z == 0 || x == RTCD_GRID_N - 1 || y == RTCD_GRID_N - 1 ||
                             z == RTCD_GRID_N - 1;
                uint32_t i = cell_index(x, y, z);
                if (border && state[i] == 0) {
                    state[i] = 2;
                    queue[tail++] = (uint16_t)i;
                }
            }
    while (head < tail) {
        uint32_t i = queue[head++];
        int x = (int)(i % RTCD_GRID_N), y = (int)(i / RTCD_GRID_N % RTCD_GRID_N), z = (int)(i / (RTCD_GRID_N * RTCD_GRID_N));
        const int d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
        for (int k = 0; k < 6; ++k) {
            int nx = x + d[k][0], ny = y + d[k][1], nz = z + d[k][2];
            if (nx < 0 || ny < 0 || nz < 0 || nx >= RTCD_GRID_N || ny >= RTCD_GRID_N || nz >= RTCD_GRID_N) continue;
            uint32_t j = cell_index(nx, ny, nz);
            if (state[j] != 0) continue;
            state[j] = 2;
            queue[tail++] = (uint16_t)j;
        }
    }
    memset(g->solid, 0, sizeof g->solid);
    for (uint32_t i = 0; i < CELLS; ++i)
        if (state[i] != 2) g->solid[i >> 3] |= (uint8_t)(1u << (i & 7));
    build_near(g, state, queue);
    g->min_cell = fminf(1.0f / g->inv_cell[0], fminf(1.0f / g->inv_cell[1], 1.0f / g->inv_cell[2]));
    return RTCD_OK;
}
