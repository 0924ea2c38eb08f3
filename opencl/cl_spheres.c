/* The balls a registry entry carries for the second phase's cull
 * (pair_may_cross, shared/crossing.h): the mesh's vertex clusters, and
 * where it has more than RTCD_CL_SPHERES, runs of consecutive clusters
 * (Morton order: neighbours in space) merged into one ball that holds
 * theirs. A bigger ball only lets more pairs through the cull, whose items
 * then find nothing, so the results stay the CPU's. The same balls let the
 * kernels' standard pass skip every vertex of a ball far from the other
 * mesh (pair_ball_may_hold): each vertex's ball is written beside it. */
#include "cl_internal.h"

#include <math.h>
#include <string.h>

void rtcd_cl_entry_spheres(rtcd_cl_mesh* e, const rtcd_mesh* m, uint8_t* vertex_balls)
{
    /* A vertex in no cluster (none were built) is in no ball: always swept. */
    memset(vertex_balls, RTCD_NO_BALL, m->vertex_count);
    e->max_edge = m->max_edge_length;
    uint32_t n = m->clusters ? m->cluster_count : 0u;
    uint32_t groups = n < RTCD_CL_SPHERES ? n : RTCD_CL_SPHERES;
    e->sphere_count = groups;
    for (uint32_t g = 0; g < groups; ++g) {
        uint32_t first = (uint32_t)((uint64_t)g * n / groups), last = (uint32_t)((uint64_t)(g + 1) * n / groups);
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (uint32_t k = first; k < last; ++k)
            for (int j = 0; j < 3; ++j) {
                lo[j] = fmin(lo[j], (double)m->clusters[k].centre[j] - m->clusters[k].radius);
                hi[j] = fmax(hi[j], (double)m->clusters[k].centre[j] + m->clusters[k].radius);
            }
        for (uint32_t k = first; k < last; ++k)
            for (uint32_t j = 0; j < m->clusters[k].count; ++j)
                vertex_balls[m->cluster_vertices[m->clusters[k].first + j]] = (uint8_t)g;
        double centre[3], radius = 0.0;
        for (int j = 0; j < 3; ++j) centre[j] = 0.5 * (lo[j] + hi[j]);
        for (uint32_t k = first; k < last; ++k) {
            double d2 = 0.0;
            for (int j = 0; j < 3; ++j) {
                double d = (double)m->clusters[k].centre[j] - centre[j];
                d2 += d * d;
            }
            radius = fmax(radius, sqrt(d2) + m->clusters[k].radius);
        }
        for (int j = 0; j < 3; ++j) e->spheres[g][j] = (float)centre[j];
        /* Rounded up, so that the float centre still holds every ball. */
        e->spheres[g][3] = (float)(radius * (1.0 + 1e-6)) + 1e-6f * (float)(fabs(centre[0]) + fabs(centre[1]) + fabs(centre[2]));
    }
}
