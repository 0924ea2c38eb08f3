/* Private to rtcd: the shape check of a mesh's creation and of every update
 * (core/mesh/mesh_check.c). */
#ifndef RTCD_CORE_MESH_CHECK_H
#define RTCD_CORE_MESH_CHECK_H

#include <rtcd/rtcd_mesh.h>

#include <stdint.h>

/* Finite coordinates, the range of validity, no degenerate triangle.
 * volume_out (may be NULL): the closed mesh's volume, as rtcd_compute_volume
 * sums it (up to rounding), from the check's own cross products. */
rtcd_error rtcd_mesh_check_shape(const char* name, const float* v, uint32_t vertex_count, const uint32_t* idx,
                                 uint32_t triangle_count, double* volume_out);

#endif
