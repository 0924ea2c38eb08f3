/* Buffers shared by the OpenCL host code and the kernels: only 32-bit
 * scalars and arrays of them, so C and OpenCL C lay them out alike. */
#ifndef RTCD_CL_TYPES_H
#define RTCD_CL_TYPES_H

#include "../../core/shared/geom.h"

#define RTCD_CL_GROUP_SIZE 64   /* work items per pair */
#define RTCD_CL_LOCAL_RAYS 2048 /* colliding rays a pair keeps on chip; past it the host redoes the pair */

typedef struct rtcd_cl_mesh {
    rtcd_u32 vertex_offset, vertex_count, tri_offset, tri_count;
    rtcd_u32 node_offset, node_count, grid_offset, unused;
    float lo[3], grid_lo[3], grid_inv[3], hi[3];
} rtcd_cl_mesh;

typedef struct rtcd_cl_pair {
    rtcd_u32 mesh_a, mesh_b;
    rtcd_u32 ray_offset;   /* where its colliding rays go when rays are requested */
    rtcd_u32 unused;
    float pose_a[12];      /* rotation row-major, then translation */
    float pose_b[12];
} rtcd_cl_pair;

typedef struct rtcd_cl_result {
    float point[4][3];
    float normal[4][3];
    float depth[4];
    rtcd_u32 feature[4];
    rtcd_u32 contact_count, colliding_rays, rays_cast, overflow;
} rtcd_cl_result;

/* Same layout as rtcd_ray_hit. */
typedef struct rtcd_cl_ray {
    rtcd_u32 direction, vertex, triangle;
    float origin[3], ray_dir[3], point[3], normal[3], length;
} rtcd_cl_ray;

#endif
