/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* Deterministic generated meshes: the benchmark scenes' concave blobs and a few
 * analytic shapes. The output arrays are allocated with rtcd's allocator and
 * freed with rtcd_generated_free; pass them to rtcd_mesh_create. */
#ifndef RTCD_GENERATE_H
#define RTCD_GENERATE_H

#include "rtcd_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtcd_generated_mesh {
    float* vertices;        /* 3 per vertex */
    uint32_t* indices;      /* 3 per triangle, counter-clockwise from outside */
    uint32_t vertex_count;
    uint32_t triangle_count;
} rtcd_generated_mesh;

RTCD_API void rtcd_generated_free(rtcd_generated_mesh* mesh);

/* Closed, concave, genus-0 blob with exactly `vertex_count` vertices and
 * 2 * vertex_count - 4 triangles, about `radius` in size, star-shaped around
 * the origin. The same seed gives the same mesh on every platform. */
RTCD_API rtcd_error rtcd_generate_blob(uint32_t vertex_count, float radius, uint64_t seed,
                                       rtcd_generated_mesh* out);

/* UV sphere: `rings` latitude rings of `segments` vertices plus two poles. */
RTCD_API rtcd_error rtcd_generate_uv_sphere(uint32_t rings, uint32_t segments, float radius,
                                            rtcd_generated_mesh* out);

/* Torus around z: `major_segments` x `minor_segments` quads, 2 triangles each. */
RTCD_API rtcd_error rtcd_generate_torus(float major_radius, float minor_radius,
                                        uint32_t major_segments, uint32_t minor_segments,
                                        rtcd_generated_mesh* out);

/* Axis-aligned box centred at the origin, each face split into
 * subdivisions x subdivisions quads (subdivisions >= 1). */
RTCD_API rtcd_error rtcd_generate_box(const float half_extents[3], uint32_t subdivisions,
                                      rtcd_generated_mesh* out);

/* The benchmark scenes' meshes (DESIGN.md). */
#define RTCD_AVALANCHE_BLOB_VERTICES 453u   /* 902 triangles */
#define RTCD_SPAWNER_MESH_COUNT 4u
RTCD_API uint32_t rtcd_spawner_mesh_vertices(uint32_t which); /* 453, 1067, 1730, 1731 */

#ifdef __cplusplus
}
#endif
#endif
