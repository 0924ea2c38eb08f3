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
    demo_deforming* items = realloc(d->items, cap * sizeof *items);
    if (!items) return 0;
    d->items = items;
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
    rtcd_mesh* body = (rtcd_mesh*)rtcd_shape_body_mesh(*out);
    rtcd_mesh_retain(body);
    float r2 = 0.0f;
    for (uint32_t i = 0; i < n; ++i)
        r2 = fmaxf(r2, rest[3 * i] * rest[3 * i] + rest[3 * i + 1] * rest[3 * i + 1] + rest[3 * i + 2] * rest[3 * i + 2]);
    d->items[d->count++] = (demo_deforming){*out, body, rest, n, sqrtf(r2), phase};
    return RTCD_OK;
}

rtcd_error demo_deformer_step(demo_deformer* d, uint32_t step, double dt)
{
    if (!d->count) return RTCD_OK;
    double start = demo_now_ms();
    const double w = 2.0 * M_PI * DEMO_DEFORM_HZ * dt * (double)step;
    for (uint32_t k = 0; k < d->count; ++k) {
        const demo_deforming* b = &d->items[k];
        double scale = 1.0 + DEMO_DEFORM_AMPLITUDE * sin(w + b->phase);
        double twist = DEMO_DEFORM_AMPLITUDE * cos(w + b->phase) / b->radius; /* radians per metre of height */
        scene_pulse_twist(b->rest, b->vertex_count, scale, twist, d->scratch);
        rtcd_error err = rtcd_shape_set_vertices(b->shape, d->scratch, 0);
        if (err != RTCD_OK) return err;
    }
    d->ms_total += demo_now_ms() - start;
    return RTCD_OK;
}

void demo_deformer_parts(const demo_deformer* d, double part_ms[RTCD_DEFORM_PARTS])
{
    for (int p = 0; p < RTCD_DEFORM_PARTS; ++p) part_ms[p] = 0.0;
    for (uint32_t k = 0; k < d->count; ++k) {
        rtcd_mesh_deform_stats st = rtcd_mesh_get_deform_stats(d->items[k].mesh);
        for (int p = 0; p < RTCD_DEFORM_PARTS; ++p) part_ms[p] += st.part_ms[p];
    }
}

void demo_deformer_free(demo_deformer* d)
{
    for (uint32_t k = 0; k < d->count; ++k) {
        rtcd_mesh_release(d->items[k].mesh);
        rtcd_shape_release(d->items[k].shape);
        free(d->items[k].rest);
    }
    free(d->items);
    free(d->scratch);
    memset(d, 0, sizeof *d);
}
