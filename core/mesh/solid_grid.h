/* Private to rtcd: the occupancy and near grids and the vertex clusters of a
 * mesh (core/mesh/solid_grid.c), built at creation and after updates. */
#ifndef RTCD_CORE_SOLID_GRID_H
#define RTCD_CORE_SOLID_GRID_H

#include "mesh_layout.h"

rtcd_error rtcd_solid_grid_build(rtcd_mesh* m);
/* The same over the mesh's box widened by margin on every side. */
rtcd_error rtcd_solid_grid_build_margin(rtcd_mesh* m, float margin);
/* The occupancy of the vertices of now over the grid's box as it is (which
 * must hold the mesh's box). */
rtcd_error rtcd_solid_grid_fill(rtcd_mesh* m);
rtcd_error rtcd_near_grid_build(rtcd_mesh* m); /* after the BVH */
rtcd_error rtcd_vertex_clusters_build(rtcd_mesh* m);
/* New balls for the clusters' vertices as they are now (same runs). */
void rtcd_vertex_clusters_refit(rtcd_mesh* m);

#endif
