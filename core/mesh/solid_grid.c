/* A coarse occupancy grid over each mesh's box: a cell is "solid" when it may
 * hold part of the closed mesh (its surface or its inside). A vertex in a
 * cell that is not solid lies outside the mesh, so its ray can never collide
 * (the first hit from outside enters): the narrow phase skips it. This keeps
 * the candidate set to vertices near or inside the other body, instead of the
 * whole box overlap, at one table lookup per vertex. */
#include "solid_grid.h"
#include "query/point_query.h"

#include <rtcd/rtcd_query.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static uint32_t cell_index(int x, int y, int z)
{
    return ((uint32_t)z * RTCD_GRID_N + (uint32_t)y) * RTCD_GRID_N + (uint32_t)x;
}

/* A grid coordinate's cell, clamped to the grid. NaN (a box beyond the float
 * range: Inf * 0) gives nan_cell: converting it to int is undefined. */
static int clamp_cell(float v, int nan_cell)
{
    return isnan(v) ? nan_cell : (v < 0.0f ? 0 : (v >= RTCD_GRID_N ? RTCD_GRID_N - 1 : (int)v));
}

/* 1 for every cell a triangle's box touches (inclusive, widened by a hair
 * so a triangle lying on a cell face marks both sides), else 0: a superset
 * of the cells the surface crosses. */
static void mark_surface_cells(const rtcd_mesh* m, uint8_t* surface)
{
    const rtcd_solid_grid* g = &m->grid;
    memset(surface, 0, RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N);
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        float lo[3] = {RTCD_FLT_MAX, RTCD_FLT_MAX, RTCD_FLT_MAX}, hi[3] = {-RTCD_FLT_MAX, -RTCD_FLT_MAX, -RTCD_FLT_MAX};
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k) {
                float v = m->vertices[3 * m->indices[3 * t + c] + k];
                lo[k] = v < lo[k] ? v : lo[k];
                hi[k] = v > hi[k] ? v : hi[k];
            }
        int c0[3], c1[3];
        for (int k = 0; k < 3; ++k) {
            c0[k] = clamp_cell((lo[k] - g->lo[k]) * g->inv_cell[k] - 1e-3f, 0); /* NaN: the whole range */
            c1[k] = clamp_cell((hi[k] - g->lo[k]) * g->inv_cell[k] + 1e-3f, RTCD_GRID_N - 1);
        }
        for (int z = c0[2]; z <= c1[2]; ++z)
            for (int y = c0[1]; y <= c1[1]; ++y)
                for (int x = c0[0]; x <= c1[0]; ++x) surface[cell_index(x, y, z)] = 1;
    }
}

/* One line of the squared distance transform (Felzenszwalb and
 * Huttenlocher 2012): d[q] = min over p of w2 (q - p)^2 + f[p] (f finite:
 * no surface is RTCD_NEAR_NONE). */
#define RTCD_NEAR_NONE 1e30
static void distance_line(const double* f, double* d, double w2)
{
    int v[RTCD_GRID_N], k = 0;
    double z[RTCD_GRID_N + 1];
    v[0] = 0;
    z[0] = -INFINITY;
    z[1] = INFINITY;
    for (int q = 1; q < RTCD_GRID_N; ++q) {
        double s;
        for (;;) {
            int p = v[k];
            s = ((f[q] + w2 * q * q) - (f[p] + w2 * p * p)) / (2.0 * w2 * (q - p));
            if (s > z[k] || k == 0) break; /* z[0] is -infinity; k == 0 also stops a NaN */
            --k;
        }
        ++k;
        v[k] = q;
        z[k] = s;
        z[k + 1] = INFINITY;
    }
    for (int q = 0, j = 0; q < RTCD_GRID_N; ++q) {
        while (z[j + 1] < q) ++j;
        double dq = (double)(q - v[j]);
        d[q] = w2 * dq * dq + f[v[j]];
    }
}

/* RTCD_MESH_DEFORMABLE: from each cell's centre, the distance to the
 * nearest surface cell's centre (an exact Euclidean distance transform of
 * the grid, separable, cell edges as weights) less half a cell's diagonal
 * (the surface lies somewhere in that cell): a lower bound of the distance
 * to the surface, in microseconds where exact distances take milliseconds. */
static void near_grid_from_cells(rtcd_mesh* m, float step)
{
    rtcd_solid_grid* g = &m->grid;
    enum { CELLS = RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N };
    uint8_t surface[CELLS];
    mark_surface_cells(m, surface);
    double d2[CELLS], line[RTCD_GRID_N], out[RTCD_GRID_N];
    for (uint32_t i = 0; i < CELLS; ++i) d2[i] = surface[i] ? 0.0 : RTCD_NEAR_NONE;
    double edge[3], half_diag2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        edge[k] = 1.0 / g->inv_cell[k];
        half_diag2 += 0.25 * edge[k] * edge[k];
    }
    for (int axis = 0; axis < 3; ++axis) {
        double w2 = edge[axis] * edge[axis];
        for (int a = 0; a < RTCD_GRID_N; ++a)
            for (int b = 0; b < RTCD_GRID_N; ++b) {
                uint32_t idx[RTCD_GRID_N];
                for (int q = 0; q < RTCD_GRID_N; ++q) {
                    int x = axis == 0 ? q : a, y = axis == 1 ? q : (axis == 0 ? a : b), z = axis == 2 ? q : b;
                    idx[q] = cell_index(x, y, z);
                    line[q] = d2[idx[q]];
                }
                distance_line(line, out, w2);
                for (int q = 0; q < RTCD_GRID_N; ++q) d2[idx[q]] = out[q];
            }
    }
    double half_diag = sqrt(half_diag2);
    for (uint32_t i = 0; i < CELLS; ++i) {
        double d = d2[i] >= 0.5 * RTCD_NEAR_NONE ? INFINITY : sqrt(d2[i]) - half_diag;
        float q = d > 0.0 ? floorf((float)(d / step) * (1.0f - 1e-4f)) - 1.0f : 0.0f;
        g->near[i] = (uint8_t)(!(q > 0.0f) ? 0.0f : (q >= 255.0f ? 255.0f : q));
    }
}

/* Distance from each cell's centre to the surface, rounded down to
 * RTCD_NEAR_STEPS-ths of the smallest cell edge (so 255 reaches about 16
 * cells): a point p of the cell is at least near * step - |p - centre| from
 * the surface (distance is 1-Lipschitz). Needs the BVH. */
rtcd_error rtcd_near_grid_build(rtcd_mesh* m)
{
    rtcd_solid_grid* g = &m->grid;
    g->min_cell = fminf(1.0f / g->inv_cell[0], fminf(1.0f / g->inv_cell[1], 1.0f / g->inv_cell[2]));
    float step = g->min_cell / RTCD_NEAR_STEPS;
    if (m->deformable) {
        near_grid_from_cells(m, step);
        return RTCD_OK;
    }
    /* Each distance's search starts bounded by the last one plus the way
     * between the cells (the triangle inequality, a hair wider): the same
     * distances, found in a fraction of the time (the near grid was most
     * of a deforming mesh's update). */
    double last[3] = {0, 0, 0}, last_d = -1.0;
    for (int z = 0; z < RTCD_GRID_N; ++z)
        for (int y = 0; y < RTCD_GRID_N; ++y)
            for (int x = 0; x < RTCD_GRID_N; ++x) {
                float c[3] = {g->lo[0] + (x + 0.5f) / g->inv_cell[0], g->lo[1] + (y + 0.5f) / g->inv_cell[1],
                              g->lo[2] + (z + 0.5f) / g->inv_cell[2]};
                uint32_t i = cell_index(x, y, z);
                /* A solid cell off the grid's boundary is never asked
                 * (grid_may_be_near is only consulted where the solid grid
                 * says outside, and outside the box for boundary cells). */
                int boundary = x == 0 || y == 0 || z == 0 || x == RTCD_GRID_N - 1 || y == RTCD_GRID_N - 1 ||
                               z == RTCD_GRID_N - 1;
                if (!boundary && (g->solid[i >> 3] & (1u << (i & 7)))) {
                    g->near[i] = 0;
                    continue;
                }
                double p[3] = {c[0], c[1], c[2]}, bound2 = INFINITY;
                if (last_d >= 0.0) {
                    double dx = p[0] - last[0], dy = p[1] - last[1], dz = p[2] - last[2];
                    double b = (last_d + sqrt(dx * dx + dy * dy + dz * dz)) * (1.0 + 1e-9) + 1e-30;
                    bound2 = b * b;
                }
                if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])) || m->bvh.node_count == 0) bound2 = NAN;
                double d2 = bound2 == bound2 ? rtcd_mesh_closest_distance2_within(m, p, bound2) : INFINITY;
                float d = isfinite(d2) ? (float)sqrt(d2) : INFINITY;
                if (isfinite(d2)) {
                    last[0] = p[0], last[1] = p[1], last[2] = p[2];
                    last_d = sqrt(d2);
                }
                /* float rounding of the centre and the distance: err low */
                float q = floorf(d / step * (1.0f - 1e-4f)) - 1.0f;
                /* NaN (a box beyond the float range) gives 0: "may be near", the safe side */
                g->near[cell_index(x, y, z)] = (uint8_t)(!(q > 0.0f) ? 0.0f : (q >= 255.0f ? 255.0f : q));
            }
    return RTCD_OK;
}

/* An open surface walls nothing in: a cell away from it lies wholly on one
 * side, and is solid when its centre lies behind the surface (the narrow
 * phase's own rule). */
static rtcd_error open_surface_cells(rtcd_mesh* m, uint8_t* state)
{
    rtcd_solid_grid* g = &m->grid;
    memset(g->solid, 0, sizeof g->solid);
    for (int z = 0; z < RTCD_GRID_N; ++z)
        for (int y = 0; y < RTCD_GRID_N; ++y)
            for (int x = 0; x < RTCD_GRID_N; ++x) {
                uint32_t i = cell_index(x, y, z);
                rtcd_v3 c = v3(g->lo[0] + (x + 0.5f) / g->inv_cell[0], g->lo[1] + (y + 0.5f) / g->inv_cell[1],
                               g->lo[2] + (z + 0.5f) / g->inv_cell[2]);
                if (state[i] || rtcd_open_surface_contains(m, c)) g->solid[i >> 3] |= (uint8_t)(1u << (i & 7));
            }
    return RTCD_OK;
}

rtcd_error rtcd_solid_grid_build(rtcd_mesh* m) { return rtcd_solid_grid_build_margin(m, 0.0f); }

rtcd_error rtcd_solid_grid_build_margin(rtcd_mesh* m, float margin)
{
    rtcd_solid_grid* g = &m->grid;
    for (int k = 0; k < 3; ++k) {
        float ext = m->hi[k] - m->lo[k];
        float pad = 1e-4f * ext + 1e-6f * fabsf(m->lo[k]) + 1e-30f + margin;
        g->lo[k] = m->lo[k] - pad;
        g->inv_cell[k] = RTCD_GRID_N / (ext + 2.0f * pad);
    }
    return rtcd_solid_grid_fill(m);
}

_Static_assert(RTCD_GRID_N == 16, "a row of cells along x is one 16-bit word");

/* The surface cells as rows (mark_surface_cells, a row of 16 cells along x
 * per word): the same cells, a word operation per row a triangle touches. */
static void mark_surface_rows(const rtcd_mesh* m, uint16_t* rows)
{
    const rtcd_solid_grid* g = &m->grid;
    memset(rows, 0, RTCD_GRID_N * RTCD_GRID_N * sizeof *rows);
    /* A deformed mesh has scratch for each vertex's grid coordinates, found
     * once instead of once per triangle: (x - lo) * inv is monotone, so the
     * smallest of a triangle's is the one of its smallest coordinate, the
     * same float. */
    float* f = m->normal_sums ? (float*)(void*)m->normal_sums : NULL;
    for (uint32_t i = 0; f && i < m->vertex_count; ++i)
        for (int k = 0; k < 3; ++k) f[3 * i + k] = (m->vertices[3 * i + k] - g->lo[k]) * g->inv_cell[k];
    uint32_t t = 0;
#if defined(__SSE2__)
    /* Four triangles at a time: the same cells (min and max are exact, and
     * clamping before the truncation gives clamp_cell's cell; the grid
     * coordinates of checked vertices are finite). */
    const __m128 top = _mm_set1_ps((float)(RTCD_GRID_N - 1)), zero = _mm_setzero_ps(), hair = _mm_set1_ps(1e-3f);
    for (; f && t + 4 <= m->triangle_count; t += 4) {
        const uint32_t* tri = m->indices + 3 * t;
        int32_t c0[3][4], c1[3][4];
        for (int k = 0; k < 3; ++k) {
            __m128 a = _mm_set_ps(f[3 * tri[9] + k], f[3 * tri[6] + k], f[3 * tri[3] + k], f[3 * tri[0] + k]);
            __m128 b = _mm_set_ps(f[3 * tri[10] + k], f[3 * tri[7] + k], f[3 * tri[4] + k], f[3 * tri[1] + k]);
            __m128 c = _mm_set_ps(f[3 * tri[11] + k], f[3 * tri[8] + k], f[3 * tri[5] + k], f[3 * tri[2] + k]);
            __m128 lo = _mm_min_ps(_mm_min_ps(a, b), c), hi = _mm_max_ps(_mm_max_ps(a, b), c);
            lo = _mm_min_ps(_mm_max_ps(_mm_sub_ps(lo, hair), zero), top);
            hi = _mm_max_ps(_mm_min_ps(_mm_add_ps(hi, hair), top), zero);
            _mm_storeu_si128((__m128i*)(void*)c0[k], _mm_cvttps_epi32(lo));
            _mm_storeu_si128((__m128i*)(void*)c1[k], _mm_cvttps_epi32(hi));
        }
        for (int j = 0; j < 4; ++j) {
            uint16_t mask = (uint16_t)((0xffffu >> (15 - c1[0][j])) & (0xffffu << c0[0][j]));
            for (int z = c0[2][j]; z <= c1[2][j]; ++z)
                for (int y = c0[1][j]; y <= c1[1][j]; ++y) rows[z * RTCD_GRID_N + y] |= mask;
        }
    }
#endif
    for (; t < m->triangle_count; ++t) {
        const uint32_t* tri = m->indices + 3 * t;
        int c0[3], c1[3];
        for (int k = 0; k < 3; ++k) {
            float a, b, c;
            if (f) a = f[3 * tri[0] + k], b = f[3 * tri[1] + k], c = f[3 * tri[2] + k];
            else {
                a = m->vertices[3 * tri[0] + k], b = m->vertices[3 * tri[1] + k], c = m->vertices[3 * tri[2] + k];
            }
            float lo = a < b ? a : b, hi = a > b ? a : b;
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
            if (!f) lo = (lo - g->lo[k]) * g->inv_cell[k], hi = (hi - g->lo[k]) * g->inv_cell[k];
            c0[k] = clamp_cell(lo - 1e-3f, 0); /* NaN: the whole range */
            c1[k] = clamp_cell(hi + 1e-3f, RTCD_GRID_N - 1);
        }
        uint16_t mask = (uint16_t)((0xffffu >> (15 - c1[0])) & (0xffffu << c0[0]));
        for (int z = c0[2]; z <= c1[2]; ++z)
            for (int y = c0[1]; y <= c1[1]; ++y) rows[z * RTCD_GRID_N + y] |= mask;
    }
}

/* The free runs of a row that hold a seed, whole: an occluded fill both
 * ways along x (Kogge-Stone: four shifts each way, no loop). */
static uint16_t fill_runs(uint16_t seeds, uint16_t free_cells)
{
    uint32_t up = seeds, down = seeds, pu = free_cells, pd = free_cells;
    up |= pu & (up << 1), pu &= pu << 1;
    up |= pu & (up << 2), pu &= pu << 2;
    up |= pu & (up << 4), pu &= pu << 4;
    up |= pu & (up << 8);
    down |= pd & (down >> 1), pd &= pd >> 1;
    down |= pd & (down >> 2), pd &= pd >> 2;
    down |= pd & (down >> 4), pd &= pd >> 4;
    down |= pd & (down >> 8);
    return (uint16_t)((up | down) & 0xffffu);
}

/* The outside's flood of rtcd_solid_grid_build, a row at a time: sweeps
 * forwards and backwards over the rows, each row taking its neighbours'
 * outside cells that are free and spreading along its free runs, until
 * nothing changes. The same fixed point as the cell-by-cell flood (the free
 * cells connected to the border through faces), in a few sweeps. */
static void flood_rows(const uint16_t* surface, uint16_t* out)
{
    enum { N = RTCD_GRID_N, R = RTCD_GRID_N * RTCD_GRID_N };
    for (int i = 0; i < R; ++i) {
        int y = i % N, z = i / N;
        uint16_t free_cells = (uint16_t)~surface[i];
        out[i] = (uint16_t)(free_cells & (y == 0 || z == 0 || y == N - 1 || z == N - 1 ? 0xffffu : 0x8001u));
    }
    for (int changed = 1, sweep = 0; changed; ++sweep) {
        changed = 0;
        for (int j = 0; j < R; ++j) {
            int i = sweep % 2 ? R - 1 - j : j, y = i % N, z = i / N;
            uint16_t free_cells = (uint16_t)~surface[i];
            uint16_t o = out[i];
            if (y > 0) o |= out[i - 1];
            if (y < N - 1) o |= out[i + 1];
            if (z > 0) o |= out[i - N];
            if (z < N - 1) o |= out[i + N];
            o = fill_runs((uint16_t)(o & free_cells), free_cells);
            if (o != out[i]) out[i] = o, changed = 1;
        }
    }
}

rtcd_error rtcd_solid_grid_fill(rtcd_mesh* m)
{
    rtcd_solid_grid* g = &m->grid;
    if (!m->open_surface) {
        uint16_t surface[RTCD_GRID_N * RTCD_GRID_N], out[RTCD_GRID_N * RTCD_GRID_N];
        mark_surface_rows(m, surface);
        flood_rows(surface, out);
        for (int i = 0; i < RTCD_GRID_N * RTCD_GRID_N; ++i) {
            uint16_t solid = (uint16_t)~out[i]; /* bit x of row i: byte 2i + x / 8, bit x % 8 */
            g->solid[2 * i] = (uint8_t)(solid & 0xffu);
            g->solid[2 * i + 1] = (uint8_t)(solid >> 8);
        }
        return RTCD_OK;
    }
    enum { CELLS = RTCD_GRID_N * RTCD_GRID_N * RTCD_GRID_N };
    uint8_t state[CELLS]; /* 0 unknown, 1 surface, 2 outside */
    mark_surface_cells(m, state);
    if (m->open_surface) return open_surface_cells(m, state);
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
    return RTCD_OK;
}

/* Spreads the low 10 bits of x to every third bit. */
static uint32_t spread3(uint32_t x)
{
    x &= 0x3ffu;
    x = (x | (x << 16)) & 0x030000ffu;
    x = (x | (x << 8)) & 0x0300f00fu;
    x = (x | (x << 4)) & 0x030c30c3u;
    x = (x | (x << 2)) & 0x09249249u;
    return x;
}

typedef struct keyed_vertex {
    uint32_t key, vertex;
} keyed_vertex;

static int keyed_cmp(const void* a, const void* b)
{
    const keyed_vertex* x = a;
    const keyed_vertex* y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->vertex < y->vertex ? -1 : (x->vertex > y->vertex);
}

rtcd_error rtcd_vertex_clusters_build(rtcd_mesh* m)
{
    uint32_t n = m->vertex_count, nc = (n + RTCD_CLUSTER_SIZE - 1) / RTCD_CLUSTER_SIZE;
    keyed_vertex* keyed = rtcd_alloc((n ? n : 1) * sizeof *keyed);
    /* A deformed mesh sorts again into the arrays it has. */
    if (!m->cluster_vertices) m->cluster_vertices = rtcd_alloc((n ? n : 1) * sizeof *m->cluster_vertices);
    if (!m->clusters) m->clusters = rtcd_alloc((nc ? nc : 1) * sizeof *m->clusters);
    if (!keyed || !m->cluster_vertices || !m->clusters) {
        rtcd_free(keyed);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for vertex clusters", m->name);
    }
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t q[3];
        for (int k = 0; k < 3; ++k) {
            float ext = m->hi[k] - m->lo[k];
            float f = ext > 0.0f ? (m->vertices[3 * i + k] - m->lo[k]) / ext : 0.0f;
            q[k] = (uint32_t)fminf(fmaxf(f * 1023.0f, 0.0f), 1023.0f);
        }
        keyed[i].key = spread3(q[0]) | spread3(q[1]) << 1 | spread3(q[2]) << 2;
        keyed[i].vertex = i;
    }
    qsort(keyed, n, sizeof *keyed, keyed_cmp);
    for (uint32_t i = 0; i < n; ++i) m->cluster_vertices[i] = keyed[i].vertex;
    rtcd_free(keyed);
    for (uint32_t c = 0; c < nc; ++c) {
        m->clusters[c].first = c * RTCD_CLUSTER_SIZE;
        m->clusters[c].count = n - m->clusters[c].first < RTCD_CLUSTER_SIZE ? n - m->clusters[c].first : RTCD_CLUSTER_SIZE;
    }
    m->cluster_count = nc;
    rtcd_vertex_clusters_refit(m);
    return RTCD_OK;
}

/* The balls of the runs as they are: exact for the vertices of now, whatever
 * the runs (a deformed mesh keeps its runs between sorts). */
void rtcd_vertex_clusters_refit(rtcd_mesh* m)
{
    for (uint32_t c = 0; c < m->cluster_count; ++c) {
        rtcd_vertex_cluster* cl = &m->clusters[c];
        float lo[3] = {RTCD_FLT_MAX, RTCD_FLT_MAX, RTCD_FLT_MAX}, hi[3] = {-RTCD_FLT_MAX, -RTCD_FLT_MAX, -RTCD_FLT_MAX};
        for (uint32_t j = cl->first; j < cl->first + cl->count; ++j)
            for (int k = 0; k < 3; ++k) { /* finite vertices: compares do what fminf does, inline */
                float x = m->vertices[3 * m->cluster_vertices[j] + k];
                lo[k] = x < lo[k] ? x : lo[k];
                hi[k] = x > hi[k] ? x : hi[k];
            }
        float r2 = 0.0f;
        for (int k = 0; k < 3; ++k) cl->centre[k] = 0.5f * (lo[k] + hi[k]);
        for (uint32_t j = cl->first; j < cl->first + cl->count; ++j) {
            float d2 = 0.0f;
            for (int k = 0; k < 3; ++k) {
                float e = m->vertices[3 * m->cluster_vertices[j] + k] - cl->centre[k];
                d2 += e * e;
            }
            r2 = d2 > r2 ? d2 : r2;
        }
        /* a hair more, so rounding in the transform never drops a vertex */
        cl->radius = sqrtf(r2) * (1.0f + 1e-5f) + 1e-6f * (fabsf(cl->centre[0]) + fabsf(cl->centre[1]) + fabsf(cl->centre[2]));
    }
}
