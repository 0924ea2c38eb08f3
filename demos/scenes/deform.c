/* Deforming bodies for the demos (deform.h). */
#include "deform.h"

#include "demo_cli.h"
#include "scene_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int grow(demo_deformer* d)
{
    if (d->count < d->capacity) return 1;
    uint32_t cap = d->capacity ? 2 * d->capacity : 16;
    rtcd_shape** shapes = realloc(d->shapes, cap * sizeof *shapes);
    if (shapes) d->shapes = shapes;
    float** rest = realloc(d->rest, cap * sizeof *rest);
    if (rest) d->rest = rest;
    uint32_t* vc = realloc(d->vertex_count, cap * sizeof *vc);
    if (vc) d->vertex_count = vc;
    float* radius = realloc(d->radius, cap * sizeof *radius);
    if (radius) d->radius = radius;
    float* phase = realloc(d->phase, cap * sizeof *phase);
    if (phase) d->phase = phase;
    if (!shapes || !rest || !vc || !radius || !phase) return 0;
    d->capacity = cap;
    return 1;
}

rtcd_error demo_deformer_add(demo_deformer* d, rtcd_world* world, const rtcd_shape* like, float phase,
                             rtcd_shape** out)
{
    *out = NULL;
    const rtcd_mesh* src = rtcd_shape_body_mesh(like);
    if (!src) return RTCD_ERROR_INVALID_ARGUMENT;
    if (!grow(d)) return RTCD_ERROR_OUT_OF_MEMORY;
    uint32_t n = rtcd_mesh_vertex_count(src);
    float* rest = malloc(3 * (size_t)n * sizeof *rest);
    if (!rest) return RTCD_ERROR_OUT_OF_MEMORY;
    memcpy(rest, rtcd_mesh_vertices(src), 3 * (size_t)n * sizeof *rest);
    if (n > d->scratch_count) {
        float* s = realloc(d->scratch, 3 * (size_t)n * sizeof *s);
        if (!s) {
            free(rest);
            return RTCD_ERROR_OUT_OF_MEMORY;
        }
        d->scratch = s;
        d->scratch_count = n;
    }
    /* A mesh of its own: the body mesh's vertices (centred on the centre of
     * mass) and triangles. */
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = rest;
    def.vertex_count = n;
    def.indices = rtcd_mesh_indices(src);
    def.triangle_count = rtcd_mesh_triangle_count(src);
    def.name = "deforming";
    rtcd_mesh* mesh = NULL;
    rtcd_error err = rtcd_mesh_create(&def, &mesh);
    if (err == RTCD_OK) err = rtcd_shape_create(world, mesh, out);
    rtcd_mesh_release(mesh);
    if (err != RTCD_OK) {
        free(rest);
        return err;
    }
    float r2 = 0.0f;
    for (uint32_t i = 0; i < n; ++i)
        r2 = fmaxf(r2, rest[3 * i] * rest[3 * i] + rest[3 * i + 1] * rest[3 * i + 1] + rest[3 * i + 2] * rest[3 * i + 2]);
    uint32_t k = d->count++;
    d->shapes[k] = *out;
    d->rest[k] = rest;
    d->vertex_count[k] = n;
    d->radius[k] = sqrtf(r2);
    d->phase[k] = phase;
    return RTCD_OK;
}

rtcd_error demo_deformer_step(demo_deformer* d, uint32_t step, double dt)
{
    if (!d->count) return RTCD_OK;
    double start = demo_now_ms();
    const double w = 2.0 * M_PI * DEMO_DEFORM_HZ * dt * (double)step;
    for (uint32_t k = 0; k < d->count; ++k) {
        double scale = 1.0 + DEMO_DEFORM_AMPLITUDE * sin(w + d->phase[k]);
        double twist = DEMO_DEFORM_AMPLITUDE * cos(w + d->phase[k]) / d->radius[k]; /* radians per metre of height */
        scene_pulse_twist(d->rest[k], d->vertex_count[k], scale, twist, d->scratch);
        rtcd_error err = rtcd_shape_set_vertices(d->shapes[k], d->scratch, 0);
        if (err != RTCD_OK) return err;
    }
    d->ms_total += demo_now_ms() - start;
    return RTCD_OK;
}

void demo_deformer_free(demo_deformer* d)
{
    for (uint32_t k = 0; k < d->count; ++k) {
        rtcd_shape_release(d->shapes[k]);
        free(d->rest[k]);
    }
    free(d->shapes);
    free(d->rest);
    free(d->vertex_count);
    free(d->radius);
    free(d->phase);
    free(d->scratch);
    memset(d, 0, sizeof *d);
}
