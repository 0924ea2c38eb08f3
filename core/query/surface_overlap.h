/* Private to rtcd: the surface-overlap test of two placed meshes
 * (core/query/surface_overlap.c), the narrow phase's separation test. */
#ifndef RTCD_CORE_SURFACE_OVERLAP_H
#define RTCD_CORE_SURFACE_OVERLAP_H

#include "mesh/mesh_layout.h"

/* Do the surfaces of a and b (b placed by b_in_a, the pose of b in a's frame)
 * intersect? Conservative: touching or coplanar overlap counts as yes
 * (core/query/surface_overlap.c). */
/* exported for tests only */
RTCD_API int rtcd_surfaces_intersect(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a);

#endif
