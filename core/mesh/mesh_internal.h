/* Private to rtcd: mesh creation's helpers that updates share (core/mesh/mesh.c),
 * and with them every header of what is built with a mesh: its layout, the
 * BVH, the grids, mass properties, point queries, the surface-overlap test.
 * A builder itself includes only the headers it needs (so that mesh.c, which
 * calls the builders, is not included back by them). */
#ifndef RTCD_CORE_MESH_INTERNAL_H
#define RTCD_CORE_MESH_INTERNAL_H

#include "mass.h"
#include "mesh_check.h"
#include "mesh_layout.h"
#include "query/bvh_tree.h"
#include "query/point_query.h"
#include "query/surface_overlap.h"
#include "solid_grid.h"

/* Shared by creation and rtcd_mesh_update_vertices (core/mesh/mesh.c; the
 * shape check: mesh_check.h). */
rtcd_error rtcd_mesh_fail_inside_out(const char* name, double volume, int flip_hint);
/* sums: 3 doubles per vertex of scratch, or NULL to allocate them here. */
rtcd_error rtcd_mesh_derive_geometry(rtcd_mesh* m, double* sums);
/* Fills the grids an update left stale (core/mesh/mesh_deform.c; the
 * mesh's fill_grids, which rtcd_mesh_grids_ready calls). */
RTCD_API void rtcd_mesh_fill_grids(rtcd_mesh* m); /* exported for the tests' grid checks */

#endif
