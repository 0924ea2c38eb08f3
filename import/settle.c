/* What becomes of the repaired pieces of an imported file (rtcd_import.h,
 * steps 2 to 4): scraps (fewer than 4 triangles, or flat) dropped and
 * counted when a solid piece remains; closed pieces made meshes; pieces the
 * repair left open (or rtcd_mesh_create refused) wrapped together into one
 * envelope (rtcd_wrap.h) when the def allows and the build has it, else the
 * file declined as before. */
#include "imported.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PIECE_SOLID = 0, PIECE_SCRAP = 1, PIECE_OPEN = 2 };

static double tri_area(const float* v, const uint32_t* t, double n[3])
{
    const float *a = v + 3 * (size_t)t[0], *b = v + 3 * (size_t)t[1], *c = v + 3 * (size_t)t[2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = u[1] * w[2] - u[2] * w[1];
    n[1] = u[2] * w[0] - u[0] * w[2];
    n[2] = u[0] * w[1] - u[1] * w[0];
    return 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

/* Every vertex within 1e-4 of the piece's diagonal of the plane of its largest triangle. */
static int piece_is_flat(const float* v, uint32_t nv, const uint32_t* idx, uint32_t nt)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, best[3] = {0, 0, 0};
    double best_area = 0, n[3];
    uint32_t best_t = 0;
    for (uint32_t i = 0; i < nv; ++i)
        for (int a = 0; a < 3; ++a) {
            lo[a] = fmin(lo[a], v[3 * (size_t)i + a]);
            hi[a] = fmax(hi[a], v[3 * (size_t)i + a]);
        }
    for (uint32_t t = 0; t < nt; ++t) {
        double area = tri_area(v, idx + 3 * (size_t)t, n);
        if (area > best_area) {
            best_area = area;
            best_t = t;
            memcpy(best, n, sizeof best);
        }
    }
    double len = sqrt(best[0] * best[0] + best[1] * best[1] + best[2] * best[2]);
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    if (!(len > 0)) return 1; /* no triangle with area: nothing solid */
    const float* o = v + 3 * (size_t)idx[3 * (size_t)best_t];
    for (uint32_t i = 0; i < nv; ++i) {
        const float* p = v + 3 * (size_t)i;
        double d = ((p[0] - o[0]) * best[0] + (p[1] - o[1]) * best[1] + (p[2] - o[2]) * best[2]) / len;
        if (fabs(d) > 1e-4 * diag) return 0;
    }
    return 1;
}

static void release_meshes(rtcd_imported* im)
{
    for (uint32_t i = 0; i < im->mesh_count; ++i) rtcd_mesh_release(im->meshes[i]);
    free(im->meshes);
    im->meshes = NULL;
    im->mesh_count = 0;
}

static void drop_wrap(rtcd_imported* im)
{
    rtcd_wrapped_release(im->wrapped);
    im->wrapped = NULL;
    free(im->wrap_vertices);
    free(im->wrap_indices);
    im->wrap_vertices = NULL;
    im->wrap_indices = NULL;
    im->wrap_vertex_count = im->wrap_triangle_count = 0;
}

static rtcd_error make_mesh(const rtcd_import_def* def, const char* name, const float* v, uint32_t nv,
                            const uint32_t* idx, uint32_t nt, rtcd_mesh** out)
{
    rtcd_mesh_def md = rtcd_default_mesh_def();
    md.flags = def->mesh_flags;
    md.bvh_leaf_size = def->bvh_leaf_size;
    md.name = name;
    md.vertices = v;
    md.vertex_count = nv;
    md.indices = idx;
    md.triangle_count = nt;
    return rtcd_mesh_create(&md, out);
}

/* Wraps the soup and appends the envelope to im->meshes (room for it made by the caller). */
static rtcd_error wrap_into(const rtcd_import_def* def, rtcd_imported* im, const float* v, uint32_t nv,
                            const uint32_t* idx, uint32_t nt)
{
    rtcd_error err = rtcd_wrap(&def->wrap_def, v, nv, 0, idx, nt, &im->wrapped);
    if (err != RTCD_OK) return err;
    im->wrap_vertices = malloc(3 * sizeof(float) * (size_t)nv);
    im->wrap_indices = malloc(3 * sizeof(uint32_t) * (size_t)nt);
    if (!im->wrap_vertices || !im->wrap_indices) return RTCD_ERROR_OUT_OF_MEMORY;
    memcpy(im->wrap_vertices, v, 3 * sizeof(float) * (size_t)nv);
    memcpy(im->wrap_indices, idx, 3 * sizeof(uint32_t) * (size_t)nt);
    im->wrap_vertex_count = nv;
    im->wrap_triangle_count = nt;
    const float* wv;
    const uint32_t* wi;
    uint32_t wnv, wnt;
    rtcd_wrapped_mesh(im->wrapped, &wv, &wnv, &wi, &wnt);
    char name[sizeof im->name + 8];
    snprintf(name, sizeof name, "%s#wrap", im->name);
    err = make_mesh(def, name, wv, wnv, wi, wnt, &im->meshes[im->mesh_count]);
    if (err != RTCD_OK) return err;
    ++im->mesh_count;
    im->status = RTCD_IMPORT_WRAPPED;
    return RTCD_OK;
}

rtcd_error rtcd_import_wrap_all(const rtcd_import_def* def, rtcd_imported* im, const float* vertices,
                                uint32_t vertex_count, const uint32_t* indices, uint32_t triangle_count)
{
    im->meshes = calloc(1, sizeof *im->meshes);
    if (!im->meshes) return rtcd_import_decline(im, RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for the mesh list", im->name);
    if (!im->repaired) im->component_count = 1; /* else the repair's count stands (0: nothing left) */
    rtcd_error err = wrap_into(def, im, vertices, vertex_count, indices, triangle_count);
    if (err != RTCD_OK) {
        release_meshes(im);
        drop_wrap(im);
        return rtcd_import_decline(im, err, "%s: wrap failed: %s", im->name, rtcd_last_error_message());
    }
    return RTCD_OK;
}

rtcd_error rtcd_import_settle(const rtcd_import_def* def, rtcd_imported* im)
{
    const uint32_t count = rtcd_repaired_component_count(im->repaired);
    im->component_count = count;
    if (count == 0)
        return rtcd_import_decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: nothing left after the repair (%s)", im->name,
                                   rtcd_repaired_summary(im->repaired));
    unsigned char* kind = calloc(count, 1);
    im->meshes = calloc((size_t)count + 1, sizeof *im->meshes);
    if (!kind || !im->meshes) {
        free(kind);
        free(im->meshes);
        im->meshes = NULL;
        return rtcd_import_decline(im, RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for %u meshes", im->name, count);
    }
    rtcd_error first_err = RTCD_OK, scrap_err = RTCD_OK;
    char first_msg[MESSAGE_SIZE] = "", scrap_msg[MESSAGE_SIZE] = "";
    char name[sizeof im->name + 16];
    double total_area = 0, scrap_area = 0, n[3];
    uint32_t solids = 0, open = 0, scraps = 0;
    uint64_t wrap_v = 0, wrap_t = 0;
    for (uint32_t c = 0; c < count; ++c) {
        const float* cv;
        const uint32_t* ci;
        uint32_t nv, nt;
        rtcd_repaired_component(im->repaired, c, &cv, &nv, &ci, &nt);
        double area = 0;
        for (uint32_t t = 0; t < nt; ++t) area += tri_area(cv, ci + 3 * (size_t)t, n);
        total_area += area;
        rtcd_error err = RTCD_ERROR_MESH_OPEN_EDGE;
        if (nt < 4 || piece_is_flat(cv, nv, ci, nt)) {
            kind[c] = PIECE_SCRAP;
            scrap_area += area;
            if (scraps++ == 0) { /* the reason, should nothing solid be left */
                int closed = rtcd_repaired_component_closed(im->repaired, c);
                scrap_err = closed ? RTCD_ERROR_MESH_DEGENERATE_TRIANGLE : RTCD_ERROR_MESH_OPEN_EDGE;
                snprintf(scrap_msg, sizeof scrap_msg, "component %u of %u: %s, and no solid piece in the file", c,
                         count, nt < 4 ? "fewer than 4 triangles" : closed ? "flat" : "a flat open sheet");
            }
            continue;
        }
        if (rtcd_repaired_component_closed(im->repaired, c)) {
            snprintf(name, sizeof name, "%s#%u", im->name, c);
            err = make_mesh(def, name, cv, nv, ci, nt, &im->meshes[im->mesh_count]);
            if (err == RTCD_OK) {
                ++im->mesh_count;
                ++solids;
                continue;
            }
            if (err == RTCD_ERROR_OUT_OF_MEMORY) {
                free(kind);
                release_meshes(im);
                return rtcd_import_decline(im, err, "component %u of %u: %s", c, count, rtcd_last_error_message());
            }
        }
        kind[c] = PIECE_OPEN;
        ++open;
        wrap_v += nv;
        wrap_t += nt;
        if (first_err == RTCD_OK) {
            first_err = err;
            if (err == RTCD_ERROR_MESH_OPEN_EDGE)
                snprintf(first_msg, sizeof first_msg, "component %u of %u: still open after the repairs (%s)", c,
                         count, rtcd_repaired_summary(im->repaired));
            else
                snprintf(first_msg, sizeof first_msg, "component %u of %u: %s", c, count, rtcd_last_error_message());
        }
    }
    if (open == 0 && solids > 0) { /* scraps dropped, the rest taken */
        free(kind);
        im->scraps = scraps;
        im->scrap_area_share = total_area > 0 ? scrap_area / total_area : 0;
        im->status = RTCD_IMPORT_REPAIRED;
        return RTCD_OK;
    }
    /* Something needs the wrap: the open pieces, with the scraps when nothing solid is left. */
    if (solids == 0) {
        for (uint32_t c = 0; c < count; ++c) {
            if (kind[c] != PIECE_SCRAP) continue;
            const float* cv;
            const uint32_t* ci;
            uint32_t nv, nt;
            rtcd_repaired_component(im->repaired, c, &cv, &nv, &ci, &nt);
            kind[c] = PIECE_OPEN;
            wrap_v += nv;
            wrap_t += nt;
        }
        scraps = 0;
        scrap_area = 0;
        if (first_err == RTCD_OK) {
            first_err = scrap_err;
            memcpy(first_msg, scrap_msg, sizeof first_msg);
        }
    }
    const char* no_wrap = def->wrap == RTCD_WRAP_OFF ? "wrap off" : !rtcd_wrap_available() ? "wrap not available" : NULL;
    if (no_wrap) {
        free(kind);
        release_meshes(im);
        return rtcd_import_decline(im, first_err, "%s; %s", first_msg, no_wrap);
    }
    float* v = wrap_v <= UINT32_MAX ? malloc(3 * sizeof(float) * (size_t)wrap_v) : NULL;
    uint32_t* idx = wrap_t <= UINT32_MAX / 3 ? malloc(3 * sizeof(uint32_t) * (size_t)wrap_t) : NULL;
    rtcd_error err = RTCD_ERROR_OUT_OF_MEMORY;
    if (v && idx) {
        uint32_t bv = 0, bt = 0;
        for (uint32_t c = 0; c < count; ++c) {
            if (kind[c] != PIECE_OPEN) continue;
            const float* cv;
            const uint32_t* ci;
            uint32_t nv, nt;
            rtcd_repaired_component(im->repaired, c, &cv, &nv, &ci, &nt);
            memcpy(v + 3 * (size_t)bv, cv, 3 * sizeof(float) * nv);
            for (size_t k = 0; k < 3 * (size_t)nt; ++k) idx[3 * (size_t)bt + k] = ci[k] + bv;
            bv += nv;
            bt += nt;
        }
        err = wrap_into(def, im, v, bv, idx, bt);
    }
    free(v);
    free(idx);
    free(kind);
    if (err != RTCD_OK) {
        release_meshes(im);
        drop_wrap(im);
        return rtcd_import_decline(im, err, "%s; wrap failed: %s", first_msg, rtcd_last_error_message());
    }
    im->scraps = scraps;
    im->scrap_area_share = total_area > 0 ? scrap_area / total_area : 0;
    return RTCD_OK;
}
