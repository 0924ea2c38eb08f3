#include "user_meshes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RTCD_HAVE_IMPORT
#include <rtcd/rtcd_import.h>
#endif

int user_meshes_available(void)
{
#ifdef RTCD_HAVE_IMPORT
    return 1;
#else
    return 0;
#endif
}

void user_meshes_free(user_meshes* m)
{
    for (uint32_t i = 0; m->meshes && i < m->count; ++i) rtcd_mesh_release(m->meshes[i]);
    free(m->meshes);
    free(m->first);
    memset(m, 0, sizeof *m);
}

rtcd_error user_meshes_shape(rtcd_world* world, const user_meshes* m, uint32_t file, rtcd_shape** out,
                             uint32_t* triangles)
{
    if (file >= m->file_count) return RTCD_ERROR_INVALID_ARGUMENT;
    uint32_t a = m->first[file], b = m->first[file + 1];
    *triangles = 0;
    for (uint32_t i = a; i < b; ++i) *triangles += rtcd_mesh_triangle_count(m->meshes[i]);
    return b - a == 1 ? rtcd_shape_create(world, m->meshes[a], out)
                      : rtcd_shape_create_compound(world, m->meshes + a, b - a, out);
}

#ifdef RTCD_HAVE_IMPORT
/* The file's pieces' common fit: the centre of their joint bounding box and
 * the factor that puts their farthest vertex USER_MESH_FIT_SIZE from it. */
static void fit_of(rtcd_mesh* const* pieces, uint32_t count, float c[3], float* f)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, r2 = 0.0f;
    for (uint32_t p = 0; p < count; ++p) {
        float l[3], h[3];
        rtcd_mesh_bounds(pieces[p], l, h);
        for (int k = 0; k < 3; ++k) {
            lo[k] = fminf(lo[k], l[k]);
            hi[k] = fmaxf(hi[k], h[k]);
        }
    }
    for (int k = 0; k < 3; ++k) c[k] = 0.5f * (lo[k] + hi[k]);
    for (uint32_t p = 0; p < count; ++p) {
        const float* v = rtcd_mesh_vertices(pieces[p]);
        for (uint32_t i = 0; i < rtcd_mesh_vertex_count(pieces[p]); ++i) {
            float d2 = 0.0f;
            for (int k = 0; k < 3; ++k) d2 += (v[3 * i + k] - c[k]) * (v[3 * i + k] - c[k]);
            r2 = d2 > r2 ? d2 : r2;
        }
    }
    *f = r2 > 0.0f ? USER_MESH_FIT_SIZE / sqrtf(r2) : 1.0f;
}

/* A copy of `mesh` moved by -c and scaled by f. */
static rtcd_error fit(const rtcd_mesh* mesh, const float c[3], float f, rtcd_mesh** out)
{
    const uint32_t n = rtcd_mesh_vertex_count(mesh);
    const float* v = rtcd_mesh_vertices(mesh);
    float* w = malloc(3 * sizeof(float) * (n ? n : 1));
    if (!w) return RTCD_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) w[3 * i + k] = (v[3 * i + k] - c[k]) * f;
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = w;
    def.vertex_count = n;
    def.indices = rtcd_mesh_indices(mesh);
    def.triangle_count = rtcd_mesh_triangle_count(mesh);
    def.name = rtcd_mesh_name(mesh);
    rtcd_error err = rtcd_mesh_create(&def, out);
    free(w);
    return err;
}

static rtcd_error append(user_meshes* m, rtcd_mesh* mesh)
{
    rtcd_mesh** grown = realloc(m->meshes, (m->count + 1) * sizeof *grown);
    if (!grown) {
        rtcd_mesh_release(mesh);
        return RTCD_ERROR_OUT_OF_MEMORY;
    }
    m->meshes = grown;
    m->meshes[m->count++] = mesh;
    return RTCD_OK;
}

/* One file's pieces appended to *m. */
static rtcd_error load_one(const char* path, float scale, user_meshes* m, char* why, size_t why_size)
{
    /* a missing or unreadable file named plainly, before assimp's wording */
    FILE* f = fopen(path, "rb");
    if (!f) {
        snprintf(why, why_size, "--mesh %s: cannot open: %s", path, strerror(errno));
        return RTCD_ERROR_INVALID_ARGUMENT;
    }
    fclose(f);
    rtcd_import_def def = rtcd_default_import_def();
    def.scale = scale > 0.0f ? scale : 1.0f;
    rtcd_imported* imp = NULL;
    rtcd_error err = rtcd_import_file(&def, path, &imp);
    if (err != RTCD_OK) {
        const char* msg = imp ? rtcd_imported_error_message(imp) : rtcd_last_error_message();
        snprintf(why, why_size, "--mesh %s: declined (%s): %s", path, rtcd_error_name(err), msg ? msg : "");
        rtcd_imported_release(imp);
        return err;
    }
    uint32_t pieces = rtcd_imported_mesh_count(imp);
    if (rtcd_imported_status(imp) == RTCD_IMPORT_REPAIRED)
        fprintf(stderr, "--mesh %s: repaired into %u piece(s): %s\n", path, pieces, rtcd_imported_repair_summary(imp));
    float centre[3] = {0, 0, 0}, factor = 1.0f;
    rtcd_mesh* all[4096];
    if (pieces > 4096) {
        snprintf(why, why_size, "--mesh %s: %u pieces, more than a compound takes (4096)", path, pieces);
        rtcd_imported_release(imp);
        return RTCD_ERROR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < pieces; ++i) all[i] = rtcd_imported_mesh(imp, i);
    if (!(scale > 0.0f)) fit_of(all, pieces, centre, &factor);
    for (uint32_t i = 0; i < pieces && err == RTCD_OK; ++i) {
        rtcd_mesh* piece = all[i];
        rtcd_mesh* mesh = NULL;
        if (scale > 0.0f) {
            rtcd_mesh_retain(piece);
            mesh = piece;
        } else if ((err = fit(piece, centre, factor, &mesh)) != RTCD_OK) {
            snprintf(why, why_size, "--mesh %s: piece %u: cannot be scaled (%s): %s", path, i, rtcd_error_name(err),
                     rtcd_last_error_message());
            break;
        }
        err = append(m, mesh);
    }
    if (err == RTCD_OK && pieces == 0) {
        snprintf(why, why_size, "--mesh %s: no closed piece", path);
        err = RTCD_ERROR_INVALID_ARGUMENT;
    }
    rtcd_imported_release(imp);
    return err;
}
#endif

rtcd_error user_meshes_load(const char* const* paths, uint32_t path_count, float scale, user_meshes* out, char* why,
                            size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (why_size) why[0] = '\0';
    if (!path_count) return RTCD_OK;
#ifdef RTCD_HAVE_IMPORT
    out->first = calloc(path_count + 1, sizeof *out->first);
    if (!out->first) return RTCD_ERROR_OUT_OF_MEMORY;
    for (uint32_t p = 0; p < path_count; ++p) {
        rtcd_error err = load_one(paths[p], scale, out, why, why_size);
        if (err != RTCD_OK) {
            user_meshes_free(out);
            return err;
        }
        out->first[++out->file_count] = out->count;
    }
    return RTCD_OK;
#else
    (void)scale;
    snprintf(why, why_size, "--mesh %s: built without the import library (rtcd_import needs assimp)", paths[0]);
    return RTCD_ERROR_UNSUPPORTED;
#endif
}

float demo_shape_bounding_radius(const rtcd_shape* shape)
{
    const rtcd_mesh* m = rtcd_shape_body_mesh(shape);
    const float* v = rtcd_mesh_vertices(m);
    float r2 = 0.0f;
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(m); ++i) {
        float d2 = v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2];
        r2 = d2 > r2 ? d2 : r2;
    }
    return sqrtf(r2);
}
