/* Private to rtcd: the point queries that other modules use
 * (core/query/point_query.c; the public ones are in rtcd_mesh.h). */
#ifndef RTCD_CORE_POINT_QUERY_H
#define RTCD_CORE_POINT_QUERY_H

#include "mesh/mesh_layout.h"

/* The squared distance from p to m's surface, searching only closer than
 * sqrt(bound2) first (a bound at or above the distance keeps it exact and
 * prunes the search; below it, the whole mesh is searched). Needs the BVH. */
double rtcd_mesh_closest_distance2_within(const rtcd_mesh* m, const double p[3], double bound2);

/* Is p behind the open surface m (core/query/point_query.c)? Needs the BVH. */
int rtcd_open_surface_contains(const rtcd_mesh* m, rtcd_v3 p);

#endif
