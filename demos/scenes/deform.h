/* Deforming bodies for the demos (--deforming K): each of K bodies gets a
 * shape of its own, a copy of its mesh, whose vertices pulse (scaled about
 * the centre) and twist (turned about the vertical axis through the
 * centre, by an angle growing with height) at 1 Hz, each body at its own
 * phase: about +-17 % of the radius at most (12 % scale, 0.12 rad twist at
 * the top). Through rtcd_shape_set_vertices, so rtcd and GImpact see the
 * same shapes. */
#ifndef RTCD_SCENE_DEFORM_H
#define RTCD_SCENE_DEFORM_H

#include <rtcd/rtcd_world.h>

#define DEMO_DEFORM_HZ 1.0
#define DEMO_DEFORM_AMPLITUDE 0.12

/* One deforming body's shape. */
typedef struct demo_deforming {
    rtcd_shape* shape;     /* held */
    rtcd_mesh* mesh;       /* its body mesh, held: rtcd's updates of it (rtcd_mesh_get_deform_stats) */
    float* rest;           /* its vertices as created (its mesh frame) */
    uint32_t vertex_count;
    float radius;          /* largest distance of a rest vertex from the origin */
    float phase;
} demo_deforming;

typedef struct demo_deformer {
    uint32_t count, capacity;
    demo_deforming* items;
    float* scratch;        /* the largest shape's vertices */
    uint32_t scratch_count;
    double ms_total;       /* time in rtcd_shape_set_vertices */
} demo_deformer;

/* A new shape for one deforming body: a copy of `like`'s body mesh. *out
 * is held by the deformer (the caller adds bodies with it). */
rtcd_error demo_deformer_add(demo_deformer* d, rtcd_world* world, const rtcd_shape* like, float phase,
                             rtcd_shape** out);
/* rtcd's update time per part (rtcd_mesh_deform_part_name), summed over
 * the deforming meshes and every update so far, milliseconds. */
void demo_deformer_parts(const demo_deformer* d, double part_ms[RTCD_DEFORM_PARTS]);
/* Every shape at time step * dt. */
rtcd_error demo_deformer_step(demo_deformer* d, uint32_t step, double dt);
void demo_deformer_free(demo_deformer* d);

#endif
