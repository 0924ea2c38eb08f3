/* Mesh repair: argument checks, the steps in order (repair_weld.c,
 * repair_sliver.c, repair_topo.c, repair_holes.c), the result handle and its
 * one-line summary. */
#include "repair_steps.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct rtcd_repaired {
    uint32_t refcount;
    rtcd_repair_report report;
    uint32_t component_count, vertex_count, triangle_count;
    uint32_t* vstart;  /* component_count + 1 */
    uint32_t* tstart;  /* component_count + 1 */
    uint8_t* closed;   /* per component */
    float* vertices;   /* 3 per vertex, component after component */
    uint32_t* local;   /* 3 per triangle, numbered within the component */
    uint32_t* merged;  /* 3 per triangle, numbered in `vertices` */
    char* summary;
};

rtcd_repair_def rtcd_default_repair_def(void)
{
    rtcd_repair_def def;
    memset(&def, 0, sizeof def);
    def.flags = RTCD_REPAIR_ALL;
    def.weld_tolerance = 1e-5f;
    def.sliver_ratio = 1e-3f;
    def.max_hole_edges = 8;
    return def;
}

static rtcd_error check_arguments(const rtcd_repair_def* def, const float* vertices, uint32_t vertex_count,
                                  size_t stride, const uint32_t* indices, uint32_t triangle_count, rtcd_repaired** out)
{
    const char* bad = !out ? "out" : !def ? "def" : !vertices ? "vertices" : !indices ? "indices" : NULL;
    if (bad) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repair: %s is NULL", bad);
    if (vertex_count == 0 || triangle_count == 0)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repair: %s is 0",
                         vertex_count == 0 ? "vertex_count" : "triangle_count");
    if (def->flags & ~(uint32_t)RTCD_REPAIR_ALL)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repair: flags 0x%x has unknown bits 0x%x", def->flags,
                         def->flags & ~(uint32_t)RTCD_REPAIR_ALL);
    if (!(def->weld_tolerance >= 0.0f) || !isfinite(def->weld_tolerance))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repair: weld_tolerance %g is not finite and >= 0",
                         (double)def->weld_tolerance);
    if (!(def->sliver_ratio >= 0.0f) || !isfinite(def->sliver_ratio))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repair: sliver_ratio %g is not finite and >= 0",
                         (double)def->sliver_ratio);
    if (stride < 3 * sizeof(float))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repair: vertex_stride %zu is below 12 bytes", stride);
    /* The last vertex must be addressable, byte sizes must fit size_t, and 3
     * corners per triangle (plus hole fills) the 32-bit corner numbers used
     * inside. */
    if ((size_t)(vertex_count - 1) > (SIZE_MAX - 3 * sizeof(float)) / stride)
        return rtcd_fail(RTCD_ERROR_MESH_TOO_LARGE, "rtcd_repair: %u vertices of %zu bytes exceed the address space",
                         vertex_count, stride);
#if SIZE_MAX < UINT64_MAX
    if ((uint64_t)vertex_count * 16u > SIZE_MAX || (uint64_t)triangle_count * 24u > SIZE_MAX)
        return rtcd_fail(RTCD_ERROR_MESH_TOO_LARGE, "rtcd_repair: %u vertices / %u triangles exceed the address space",
                         vertex_count, triangle_count);
#endif
    if (triangle_count > (UINT32_MAX - 64) / 3)
        return rtcd_fail(RTCD_ERROR_MESH_TOO_LARGE, "rtcd_repair: %u triangles exceed the limit of %u",
                         triangle_count, (UINT32_MAX - 64) / 3);
    for (uint32_t t = 0; t < triangle_count; ++t)
        for (int c = 0; c < 3; ++c)
            if (indices[3 * (size_t)t + c] >= vertex_count)
                return rtcd_fail(RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE,
                                 "rtcd_repair: triangle %u corner %d has vertex index %u, but there are %u vertices", t,
                                 c, indices[3 * (size_t)t + c], vertex_count);
    for (uint32_t v = 0; v < vertex_count; ++v) {
        const float* p = (const float*)(const void*)((const char*)vertices + stride * v);
        for (int k = 0; k < 3; ++k)
            if (!isfinite(p[k]))
                return rtcd_fail(RTCD_ERROR_MESH_NONFINITE_VERTEX,
                                 "rtcd_repair: vertex %u has a non-finite coordinate (%c = %g)", v, "xyz"[k],
                                 (double)p[k]);
    }
    return RTCD_OK;
}

static void state_free(repair_state* s)
{
    rtcd_free(s->pos);
    rtcd_free(s->tri);
    rtcd_free(s->vsrc);
    rtcd_free(s->comp_vstart);
    rtcd_free(s->tri2);
    rtcd_free(s->tsrc);
    rtcd_free(s->tcomp);
    rtcd_free(s->flip);
    rtcd_free(s->comp_flags);
    repair_edges_free(&s->edges);
}

static void release_fields(rtcd_repaired* r)
{
    rtcd_free(r->vstart);
    rtcd_free(r->tstart);
    rtcd_free(r->closed);
    rtcd_free(r->vertices);
    rtcd_free(r->local);
    rtcd_free(r->merged);
    rtcd_free(r->summary);
    rtcd_free(r);
}

/* Appends ", " and the formatted phrase to buf (of size cap, at *len). */
static void phrase(char* buf, size_t cap, size_t* len, const char* format, ...) RTCD_PRINTF(4, 5);
static void phrase(char* buf, size_t cap, size_t* len, const char* format, ...)
{
    if (*len > 0 && *len + 2 < cap) {
        memcpy(buf + *len, ", ", 3);
        *len += 2;
    }
    if (*len >= cap) return;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(buf + *len, cap - *len, format, args);
    va_end(args);
    if (n > 0) *len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

static const char* plural(uint32_t n) { return n == 1 ? "" : "s"; }

static char* make_summary(const rtcd_repair_report* r)
{
    char buf[640];
    size_t len = 0;
    buf[0] = '\0';
    if (r->welded_vertices)
        phrase(buf, sizeof buf, &len, "welded %u %s (first %u)", r->welded_vertices,
               r->welded_vertices == 1 ? "vertex" : "vertices", r->first_welded_vertex);
    if (r->degenerate_triangles)
        phrase(buf, sizeof buf, &len, "removed %u degenerate triangle%s (first triangle %u)", r->degenerate_triangles,
               plural(r->degenerate_triangles), r->first_degenerate_triangle);
    if (r->duplicate_triangles)
        phrase(buf, sizeof buf, &len, "removed %u duplicate triangle%s (first triangle %u)", r->duplicate_triangles,
               plural(r->duplicate_triangles), r->first_duplicate_triangle);
    if (r->sliver_triangles)
        phrase(buf, sizeof buf, &len, "repaired %u sliver%s (first triangle %u)", r->sliver_triangles,
               plural(r->sliver_triangles), r->first_sliver_triangle);
    if (r->split_components)
        phrase(buf, sizeof buf, &len, "split off %u component%s", r->split_components, plural(r->split_components));
    if (r->filled_holes)
        phrase(buf, sizeof buf, &len, "filled %u hole%s (first at vertex %u)", r->filled_holes,
               plural(r->filled_holes), r->first_hole_edge_vertex);
    if (r->flipped_triangles)
        phrase(buf, sizeof buf, &len, "flipped %u triangle%s (first triangle %u)", r->flipped_triangles,
               plural(r->flipped_triangles), r->first_flipped_triangle);
    if (r->open_components)
        phrase(buf, sizeof buf, &len, "%u component%s still open", r->open_components, plural(r->open_components));
    if (r->nonmanifold_edges)
        phrase(buf, sizeof buf, &len, "%u non-manifold edge%s left", r->nonmanifold_edges,
               plural(r->nonmanifold_edges));
    return rtcd_strdup(buf);
}

/* The handle from the final state: triangles grouped by component (fills
 * after the component's own), windings flipped where orient decided. */
static rtcd_error make_result(const repair_state* s, rtcd_repaired** out)
{
    rtcd_repaired* r = rtcd_calloc(1, sizeof *r);
    if (!r) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory for the result");
    uint32_t nc = s->ncomp, nv = s->nv2, nt = s->nt2;
    r->refcount = 1;
    r->report = s->report;
    r->component_count = nc, r->vertex_count = nv, r->triangle_count = nt;
    r->vstart = rtcd_alloc(((size_t)nc + 1) * sizeof *r->vstart);
    r->tstart = rtcd_calloc((size_t)nc + 2, sizeof *r->tstart);
    r->closed = rtcd_alloc((size_t)nc + 1);
    r->vertices = rtcd_alloc(3 * (size_t)nv * sizeof *r->vertices + 1);
    r->local = rtcd_alloc(3 * (size_t)nt * sizeof *r->local + 1);
    r->merged = rtcd_alloc(3 * (size_t)nt * sizeof *r->merged + 1);
    r->summary = make_summary(&s->report);
    if (!r->vstart || !r->tstart || !r->closed || !r->vertices || !r->local || !r->merged || !r->summary) {
        release_fields(r);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory for the result of %u triangles", nt);
    }
    memcpy(r->vstart, s->comp_vstart, ((size_t)nc + 1) * sizeof *r->vstart);
    for (uint32_t c = 0; c < nc; ++c) r->closed[c] = s->comp_flags[c] == 0;
    for (uint32_t v = 0; v < nv; ++v) memcpy(r->vertices + 3 * (size_t)v, repair_pos2(s, v), 3 * sizeof(float));
    for (uint32_t t = 0; t < nt; ++t) r->tstart[s->tcomp[t] + 2]++;
    for (uint32_t c = 0; c < nc; ++c) r->tstart[c + 2] += r->tstart[c + 1];
    for (uint32_t t = 0; t < nt; ++t) { /* tstart[c + 1] is c's cursor until the end */
        uint32_t c = s->tcomp[t], slot = r->tstart[c + 1]++;
        const uint32_t* k = s->tri2 + 3 * (size_t)t;
        uint32_t v[3] = {k[0], s->flip[t] ? k[2] : k[1], s->flip[t] ? k[1] : k[2]};
        for (int j = 0; j < 3; ++j) {
            r->merged[3 * (size_t)slot + j] = v[j];
            r->local[3 * (size_t)slot + j] = v[j] - s->comp_vstart[c];
        }
    }
    *out = r;
    return RTCD_OK;
}

rtcd_error rtcd_repair(const rtcd_repair_def* def, const float* vertices, uint32_t vertex_count, size_t vertex_stride,
                       const uint32_t* indices, uint32_t triangle_count, rtcd_repaired** out)
{
    if (out) *out = NULL;
    size_t stride = vertex_stride ? vertex_stride : 3 * sizeof(float);
    rtcd_error err = check_arguments(def, vertices, vertex_count, stride, indices, triangle_count, out);
    if (err != RTCD_OK) return err;
    repair_state s;
    memset(&s, 0, sizeof s);
    s.def = *def;
    s.nv = vertex_count, s.nt = triangle_count;
    rtcd_repair_report* r = &s.report;
    r->input_vertices = vertex_count, r->input_triangles = triangle_count;
    r->first_welded_vertex = r->first_degenerate_triangle = r->first_sliver_triangle = REPAIR_NONE;
    r->first_duplicate_triangle = r->first_hole_edge_vertex = r->first_flipped_triangle = REPAIR_NONE;
    s.pos = rtcd_alloc(3 * (size_t)vertex_count * sizeof *s.pos);
    s.tri = rtcd_alloc(3 * (size_t)triangle_count * sizeof *s.tri);
    if (!s.pos || !s.tri) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory for %u vertices / %u triangles",
                        vertex_count, triangle_count);
        goto done;
    }
    for (uint32_t v = 0; v < vertex_count; ++v) {
        const float* p = (const float*)(const void*)((const char*)vertices + stride * v);
        for (int k = 0; k < 3; ++k) s.pos[3 * (size_t)v + k] = p[k] == 0.0f ? 0.0f : p[k]; /* -0 welds with +0 */
    }
    memcpy(s.tri, indices, 3 * (size_t)triangle_count * sizeof *s.tri);
    uint32_t f = def->flags;
    if ((f & RTCD_REPAIR_WELD) && (err = repair_weld(&s)) != RTCD_OK) goto done;
    /* Zero-area triangles with three distinct corners are slivers' limit:
     * removing them would open a closed surface, so the sliver step gets
     * them first when it runs. */
    if (f & RTCD_REPAIR_DEGENERATE) repair_degenerate(&s, !(f & RTCD_REPAIR_SLIVERS));
    if ((f & RTCD_REPAIR_DUPLICATES) && (err = repair_duplicates(&s)) != RTCD_OK) goto done;
    if (f & RTCD_REPAIR_SLIVERS) {
        if ((err = repair_slivers(&s)) != RTCD_OK) goto done;
        if (f & RTCD_REPAIR_DEGENERATE) repair_degenerate(&s, 1);
    }
    if ((err = repair_split(&s)) != RTCD_OK) goto done;
    rtcd_free(s.tri); /* the split's numbering from here on */
    s.tri = NULL;
    if ((f & RTCD_REPAIR_HOLES) && (err = repair_holes(&s)) != RTCD_OK) goto done;
    if ((err = repair_orient(&s)) != RTCD_OK) goto done;
    err = make_result(&s, out);
done:
    state_free(&s);
    return err;
}

void rtcd_repaired_retain(rtcd_repaired* r)
{
    if (r) __atomic_add_fetch(&r->refcount, 1, __ATOMIC_RELAXED);
}

void rtcd_repaired_release(rtcd_repaired* r)
{
    if (!r || __atomic_sub_fetch(&r->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    release_fields(r);
}

const rtcd_repair_report* rtcd_repaired_report(const rtcd_repaired* r) { return r ? &r->report : NULL; }

uint32_t rtcd_repaired_component_count(const rtcd_repaired* r) { return r ? r->component_count : 0; }

rtcd_error rtcd_repaired_component(const rtcd_repaired* r, uint32_t component, const float** vertices,
                                   uint32_t* vertex_count, const uint32_t** indices, uint32_t* triangle_count)
{
    if (!r) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repaired_component: repaired is NULL");
    if (component >= r->component_count)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repaired_component: component %u, but there are %u",
                         component, r->component_count);
    uint32_t v0 = r->vstart[component], t0 = r->tstart[component];
    if (vertices) *vertices = r->vertices + 3 * (size_t)v0;
    if (vertex_count) *vertex_count = r->vstart[component + 1] - v0;
    if (indices) *indices = r->local + 3 * (size_t)t0;
    if (triangle_count) *triangle_count = r->tstart[component + 1] - t0;
    return RTCD_OK;
}

int rtcd_repaired_component_closed(const rtcd_repaired* r, uint32_t component)
{
    return r && component < r->component_count && r->closed[component];
}

rtcd_error rtcd_repaired_merged(const rtcd_repaired* r, const float** vertices, uint32_t* vertex_count,
                                const uint32_t** indices, uint32_t* triangle_count)
{
    if (!r) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_repaired_merged: repaired is NULL");
    if (vertices) *vertices = r->vertices;
    if (vertex_count) *vertex_count = r->vertex_count;
    if (indices) *indices = r->merged;
    if (triangle_count) *triangle_count = r->triangle_count;
    return RTCD_OK;
}

const char* rtcd_repaired_summary(const rtcd_repaired* r) { return r ? r->summary : ""; }
