/* rtcd_import: model files to rtcd meshes (rtcd_import.h). PLY, OFF and
 * glTF/GLB through rtcd's own readers (readers.h), everything else through
 * assimp; either way into one soup (soup.h), which checks the indices and
 * triangulates polygons, then judged.
 *
 * assimp's post-processing, none, and why:
 *   no aiProcess_Triangulate         soup_face triangulates: linear for convex
 *                                    polygons (assimp's took 16 s on a face of
 *                                    100 000 corners) and it asserts (aborts)
 *                                    on malformed faces;
 *   no aiProcess_PreTransformVertices node transforms are baked here instead:
 *                                    in assimp 5.2 that step aborts (OpenGEX) or
 *                                    crashes (RAW) on files of its own test corpus;
 *   no aiProcess_JoinIdenticalVertices the repair welds and counts it; assimp's
 *                                    join also compares normals and UVs, so it
 *                                    would leave seams open anyway;
 *   no aiProcess_SortByPType         points and lines are counted here, face by
 *                                    face; the step refuses some valid STLs;
 *   no aiProcess_ValidateDataStructure it refuses usable scenes (a light without
 *                                    a node, a point cloud); the gathering below
 *                                    checks what it reads instead.
 * Bone-only files get no made-up skeleton mesh (AI_CONFIG_IMPORT_NO_SKELETON_MESHES). */
#include <rtcd/rtcd_import.h>

#include "header_check.h"
#include "imported.h"
#include "readers.h"
#include "soup.h"

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HEAD_BYTES 65536u          /* read for the header check */
#define MAX_NODE_DEPTH 1024u       /* deeper hierarchies are corrupt (or a cycle) */
#define MAX_NODE_VISITS (1u << 22) /* node instances in total, the same */
/* assimp's C API keeps its last error in one global string. */
static pthread_mutex_t g_assimp_lock = PTHREAD_MUTEX_INITIALIZER;

rtcd_import_def rtcd_default_import_def(void)
{
    rtcd_import_def def;
    memset(&def, 0, sizeof def);
    def.repair = rtcd_default_repair_def();
    def.scale = 1.0f;
    def.max_file_bytes = 1ull << 30;
    def.wrap = RTCD_WRAP_AUTO;
    def.wrap_def = rtcd_default_wrap_def();
    return def;
}

const char* rtcd_import_status_name(rtcd_import_status status)
{
    switch (status) {
    case RTCD_IMPORT_ACCEPTED: return "accepted";
    case RTCD_IMPORT_REPAIRED: return "repaired";
    case RTCD_IMPORT_DECLINED: return "declined";
    case RTCD_IMPORT_WRAPPED: return "wrapped";
    }
    return "declined";
}

#define decline rtcd_import_decline
rtcd_error rtcd_import_decline(rtcd_imported* im, rtcd_error code, const char* format, ...)
{
    im->status = RTCD_IMPORT_DECLINED;
    im->error = code;
    va_list args;
    va_start(args, format);
    vsnprintf(im->message, sizeof im->message, format, args);
    va_end(args);
    return code;
}

/* ---- an assimp scene to the soup: every polygon, node transforms baked ---- */

typedef struct scene_walk {
    import_soup* soup;
    const struct aiScene* scene;
    uint32_t instances;       /* meshes reached through nodes */
    uint32_t visits;
} scene_walk;

static affine affine_from_ai(const struct aiMatrix4x4* t)
{
    affine a = {{t->a1, t->a2, t->a3, t->a4, t->b1, t->b2, t->b3, t->b4, t->c1, t->c2, t->c3, t->c4}};
    return a;
}

/* One instance of scene mesh `index` under transform `xf`; 0 on failure. */
static int walk_mesh(scene_walk* w, unsigned index, const affine* xf)
{
    import_soup* s = w->soup;
    const struct aiMesh* mesh = w->scene->mMeshes ? w->scene->mMeshes[index] : NULL;
    if (!mesh) return soup_fail(s, RTCD_ERROR_INVALID_ARGUMENT, "corrupt scene: mesh %u is missing", index);
    if (mesh->mNumFaces && !mesh->mFaces)
        return soup_fail(s, RTCD_ERROR_INVALID_ARGUMENT, "corrupt scene: mesh %u has no face array", index);
    uint64_t polygons = 0;
    for (unsigned f = 0; f < mesh->mNumFaces; ++f)
        polygons += mesh->mFaces[f].mNumIndices >= 3 && mesh->mFaces[f].mIndices;
    s->dropped += mesh->mNumFaces - polygons; /* points and lines */
    if (polygons == 0) return 1; /* its vertices belong to points and lines only */
    if (!mesh->mVertices)
        return soup_fail(s, RTCD_ERROR_INVALID_ARGUMENT, "corrupt scene: mesh %u has no vertex array", index);
    uint32_t base = s->vertex_count;
    if (!soup_reserve(s, mesh->mNumVertices, polygons)) return 0;
    for (unsigned i = 0; i < mesh->mNumVertices; ++i)
        if (!soup_vertex(s, xf, mesh->mVertices[i].x, mesh->mVertices[i].y, mesh->mVertices[i].z)) return 0;
    /* A mirroring transform turns counter-clockwise into clockwise: soup_face turns it back. */
    int mirror = affine_det(xf) < 0.0;
    for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
        const struct aiFace* face = &mesh->mFaces[f];
        if (face->mNumIndices < 3 || !face->mIndices) continue;
        if (!soup_face(s, base, mesh->mNumVertices, face->mIndices, face->mNumIndices, mirror)) return 0;
    }
    return 1;
}

static int walk_node(scene_walk* w, const struct aiNode* node, const affine* parent, unsigned depth)
{
    if (!node) return 1; /* some loaders leave holes in the child arrays (RAW) */
    if (depth > MAX_NODE_DEPTH || ++w->visits > MAX_NODE_VISITS)
        return soup_fail(w->soup, RTCD_ERROR_INVALID_ARGUMENT,
                         "corrupt scene: node hierarchy deeper than %u or with more than %u nodes",
                         MAX_NODE_DEPTH, MAX_NODE_VISITS);
    affine local = affine_from_ai(&node->mTransformation);
    affine world = affine_mul(parent, &local);
    if (node->mMeshes) {
        for (unsigned i = 0; i < node->mNumMeshes; ++i) {
            unsigned index = node->mMeshes[i];
            if (index >= w->scene->mNumMeshes)
                return soup_fail(w->soup, RTCD_ERROR_INVALID_ARGUMENT,
                                 "corrupt scene: node '%s' refers to mesh %u of %u", node->mName.data, index,
                                 w->scene->mNumMeshes);
            ++w->instances;
            if (!walk_mesh(w, index, &world)) return 0;
        }
    }
    if (node->mChildren)
        for (unsigned i = 0; i < node->mNumChildren; ++i)
            if (!walk_node(w, node->mChildren[i], &world, depth + 1)) return 0;
    return 1;
}

/* Through the node graph, or, when no node refers to a mesh, every mesh untransformed. */
static int walk_scene(import_soup* s, const struct aiScene* scene)
{
    scene_walk w = {s, scene, 0, 0};
    affine identity = affine_identity();
    if (!walk_node(&w, scene->mRootNode, &identity, 0)) return 0;
    if (w.instances == 0)
        for (unsigned i = 0; i < scene->mNumMeshes; ++i)
            if (!walk_mesh(&w, i, &identity)) return 0;
    return 1;
}

/* ---- the verdict: as stored, else repaired per component, else declined ---- */

static rtcd_error take_meshes(const rtcd_import_def* def, rtcd_imported* im, const float* vertices,
                              uint32_t vertex_count, const uint32_t* indices, uint32_t triangle_count)
{
    rtcd_mesh_def md = rtcd_default_mesh_def();
    md.flags = def->mesh_flags;
    md.bvh_leaf_size = def->bvh_leaf_size;
    md.name = im->name;
    md.vertices = vertices;
    md.vertex_count = vertex_count;
    md.indices = indices;
    md.triangle_count = triangle_count;

    if (def->wrap == RTCD_WRAP_ALWAYS)
        return rtcd_import_wrap_all(def, im, vertices, vertex_count, indices, triangle_count);
    im->meshes = calloc(1, sizeof *im->meshes);
    if (!im->meshes) return decline(im, RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for the mesh list", im->name);
    rtcd_mesh* mesh = NULL;
    rtcd_error err = rtcd_mesh_create(&md, &mesh);
    if (err == RTCD_OK) {
        im->meshes[0] = mesh;
        im->mesh_count = 1;
        im->component_count = 1;
        im->status = RTCD_IMPORT_ACCEPTED;
        return RTCD_OK;
    }
    free(im->meshes);
    im->meshes = NULL;
    im->stored_error = err;
    snprintf(im->stored_message, sizeof im->stored_message, "%s", rtcd_last_error_message());
    if (def->flags & RTCD_IMPORT_NO_REPAIR) return decline(im, err, "%s", im->stored_message);

    err = rtcd_repair(&def->repair, vertices, vertex_count, 0, indices, triangle_count, &im->repaired);
    if (err != RTCD_OK) return decline(im, err, "%s: repair failed: %s", im->name, rtcd_last_error_message());
    /* Nothing left (every triangle degenerate): the file's own triangles wrapped, when allowed. */
    if (rtcd_repaired_component_count(im->repaired) == 0 && def->wrap == RTCD_WRAP_AUTO && rtcd_wrap_available())
        return rtcd_import_wrap_all(def, im, vertices, vertex_count, indices, triangle_count);
    return rtcd_import_settle(def, im);
}

/* The soup a reader filled (or failed to fill), judged. */
static rtcd_error judge_soup(const rtcd_import_def* def, rtcd_imported* im, import_soup* s, int read)
{
    im->input_vertices = s->vertex_count;
    im->input_triangles = s->triangle_count;
    im->dropped_primitives = s->dropped > UINT32_MAX ? UINT32_MAX : (uint32_t)s->dropped;
    if (!read) return decline(im, s->error, "%s: %s", im->name, s->message);
    if (s->triangle_count == 0)
        return decline(im, RTCD_ERROR_INVALID_ARGUMENT,
                       "%s: no triangles in the file (%u vertices, %llu points or lines dropped)", im->name,
                       s->vertex_count, (unsigned long long)s->dropped);
    return take_meshes(def, im, s->vertices, s->vertex_count, s->indices, s->triangle_count);
}

/* ---- reading ---- */

/* assimp reads the file at `path`, or `data`, into the soup; 0 with the soup's error on failure. */
static int read_with_assimp(import_soup* s, const char* path, const void* data, size_t size, const char* hint)
{
    const unsigned flags = 0; /* polygons are triangulated by soup_face, in linear time where convex */
    char reason[MESSAGE_SIZE] = "";
    pthread_mutex_lock(&g_assimp_lock);
    struct aiPropertyStore* props = aiCreatePropertyStore();
    if (props) aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_NO_SKELETON_MESHES, 1);
    const struct aiScene* scene = path ? aiImportFileExWithProperties(path, flags, NULL, props)
                                       : aiImportFileFromMemoryWithProperties(data, (unsigned)size, flags, hint, props);
    if (!scene) snprintf(reason, sizeof reason, "%s", aiGetErrorString());
    if (props) aiReleasePropertyStore(props);
    pthread_mutex_unlock(&g_assimp_lock);
    if (!scene && strstr(reason, "bad_alloc")) /* assimp catches it: counts beyond the memory there is */
        return soup_fail(s, RTCD_ERROR_OUT_OF_MEMORY, "assimp ran out of memory reading it (%s)", reason);
    if (!scene) return soup_fail(s, RTCD_ERROR_INVALID_ARGUMENT, "assimp cannot read it: %s", reason[0] ? reason : "no reason given");
    int ok = walk_scene(s, scene);
    aiReleaseImport(scene);
    return ok;
}

/* rtcd's own reader of `format` (readers.h) on the whole data. */
static int read_own(import_soup* s, import_format format, const unsigned char* data, size_t size, const char* dir,
                    uint64_t max_bytes)
{
    switch (format) {
    case FORMAT_PLY: return rtcd_read_ply(data, size, s);
    case FORMAT_OFF: return rtcd_read_off(data, size, s);
    case FORMAT_GLTF: return rtcd_read_gltf(data, size, 0, dir, max_bytes, s);
    case FORMAT_GLB: return rtcd_read_gltf(data, size, 1, dir, max_bytes, s);
    case FORMAT_ASSIMP: break;
    }
    return soup_fail(s, RTCD_ERROR_INVALID_ARGUMENT, "no reader");
}

/* Reads with rtcd's reader of `format` or with assimp (the file at `path`
 * when there is one, else `data`), then judges the triangles. */
static rtcd_error load_and_judge(const rtcd_import_def* def, rtcd_imported* im, import_format format,
                                 const char* path, const unsigned char* data, size_t size, const char* ext,
                                 const char* dir)
{
    import_soup s;
    soup_init(&s, def->scale, size);
    int read = format == FORMAT_ASSIMP ? read_with_assimp(&s, path, data, size, ext)
                                       : read_own(&s, format, data, size, dir, def->max_file_bytes);
    rtcd_error err = judge_soup(def, im, &s, read);
    soup_free(&s);
    return err;
}

/* ---- entry points ---- */

static void lower_extension(const char* ext, char out[16])
{
    size_t n = 0;
    if (ext) {
        if (*ext == '.') ++ext;
        for (; ext[n] && n < 15; ++n) out[n] = (char)tolower((unsigned char)ext[n]);
        if (ext[n]) n = 0; /* too long to be an extension */
    }
    out[n] = '\0';
}

static rtcd_error check_def(const rtcd_import_def* def, const char* what)
{
    char msg[160];
    if (!(def->scale > 0.0f) || !isfinite(def->scale))
        snprintf(msg, sizeof msg, "%s: scale %g must be finite and positive", what, (double)def->scale);
    else if (def->flags & ~(uint32_t)RTCD_IMPORT_NO_REPAIR)
        snprintf(msg, sizeof msg, "%s: unknown flags 0x%x", what, def->flags);
    else if (def->repair.flags & ~(uint32_t)RTCD_REPAIR_ALL)
        snprintf(msg, sizeof msg, "%s: unknown repair flags 0x%x", what, def->repair.flags);
    else if ((unsigned)def->wrap > RTCD_WRAP_ALWAYS)
        snprintf(msg, sizeof msg, "%s: unknown wrap mode %d", what, (int)def->wrap);
    else
        return RTCD_OK;
    return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, msg);
}

static rtcd_imported* imported_new(const char* name)
{
    rtcd_imported* im = calloc(1, sizeof *im);
    if (!im) {
        rtcd_report_error(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_import: no memory for the result");
        return NULL;
    }
    im->refcount = 1;
    im->status = RTCD_IMPORT_DECLINED;
    snprintf(im->name, sizeof im->name, "%s", name);
    return im;
}

static rtcd_error finish(rtcd_imported* im, rtcd_error err, rtcd_imported** out)
{
    /* The decline is the call's error: last message and callback. */
    if (err != RTCD_OK) rtcd_report_error(err, im->message);
    *out = im;
    return err;
}

rtcd_error rtcd_import_file(const rtcd_import_def* def, const char* path, rtcd_imported** out)
{
    if (out) *out = NULL;
    if (!def || !path || !out)
        return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_import_file: NULL definition, path or output");
    rtcd_error err = check_def(def, "rtcd_import_file");
    if (err != RTCD_OK) return err;
    const char* base = strrchr(path, '/');
    base = base ? base + 1 : path;
    rtcd_imported* im = imported_new(*base ? base : path);
    if (!im) return RTCD_ERROR_OUT_OF_MEMORY;

    /* What assimp would stumble on, found before it reads anything. */
    struct stat st;
    if (stat(path, &st) != 0)
        return finish(im, decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: cannot open it: %s", path, strerror(errno)),
                      out);
    if (S_ISDIR(st.st_mode))
        return finish(im, decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: is a directory, not a file", path), out);
    if (!S_ISREG(st.st_mode)) /* a FIFO or a device would block or never end */
        return finish(im, decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: not a regular file", path), out);
    uint64_t size = (uint64_t)st.st_size;
    if (size == 0) return finish(im, decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: the file is empty", path), out);
    if (def->max_file_bytes && size > def->max_file_bytes)
        return finish(im, decline(im, RTCD_ERROR_MESH_TOO_LARGE, "%s: %llu bytes, above max_file_bytes (%llu)", path,
                                  (unsigned long long)size, (unsigned long long)def->max_file_bytes), out);
    FILE* f = fopen(path, "rb");
    if (!f)
        return finish(im, decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: cannot open it: %s", path, strerror(errno)),
                      out);
    /* The head for the header check and the choice of reader; all of it for rtcd's readers. */
    size_t want = size < HEAD_BYTES ? (size_t)size : HEAD_BYTES;
    unsigned char* data = malloc(want);
    if (!data) {
        fclose(f);
        return finish(im, decline(im, RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory to read its header", path), out);
    }
    size_t got = fread(data, 1, want, f);
    char ext[16], msg[512];
    const char* dot = strrchr(base, '.');
    lower_extension(dot, ext);
    import_format format = rtcd_import_sniff(data, got, ext, rtcd_import_extension_supported(ext));
    if (got != want || ferror(f)) {
        err = decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: cannot read it", path);
    } else if ((err = rtcd_import_check_header(data, got, size, ext, msg, sizeof msg)) != RTCD_OK) {
        decline(im, err, "%s: %s", im->name, msg);
    } else if (format != FORMAT_ASSIMP && size > want) {
        unsigned char* all = realloc(data, (size_t)size);
        if (!all)
            err = decline(im, RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory to read its %llu bytes", path,
                          (unsigned long long)size);
        else if ((data = all), fread(data + want, 1, (size_t)size - want, f) != size - want)
            err = decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: cannot read it (shorter than its size?)", path);
    }
    fclose(f);
    if (err == RTCD_OK) {
        /* Buffers named by a glTF are found beside it. */
        size_t dir_len = base > path ? (size_t)(base - path) : 0;
        char* dir = malloc(dir_len + 2);
        if (!dir) {
            err = decline(im, RTCD_ERROR_OUT_OF_MEMORY, "%s: no memory for its folder's name", path);
        } else {
            memcpy(dir, dir_len ? path : "./", dir_len ? dir_len : 2);
            dir[dir_len ? dir_len : 2] = '\0';
            err = load_and_judge(def, im, format, path, data, (size_t)size, ext, dir);
            free(dir);
        }
    }
    free(data);
    return finish(im, err, out);
}

rtcd_error rtcd_import_memory(const rtcd_import_def* def, const void* data, size_t size, const char* format_hint,
                              rtcd_imported** out)
{
    if (out) *out = NULL;
    if (!def || !data || !out)
        return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_import_memory: NULL definition, data or output");
    rtcd_error err = check_def(def, "rtcd_import_memory");
    if (err != RTCD_OK) return err;
    char ext[16];
    lower_extension(format_hint, ext);
    char name[32];
    snprintf(name, sizeof name, "memory%s%s", ext[0] ? "." : "", ext);
    rtcd_imported* im = imported_new(name);
    if (!im) return RTCD_ERROR_OUT_OF_MEMORY;
    if (size == 0) return finish(im, decline(im, RTCD_ERROR_INVALID_ARGUMENT, "%s: no data (size 0)", name), out);
    if ((def->max_file_bytes && size > def->max_file_bytes) || size > UINT_MAX)
        return finish(im, decline(im, RTCD_ERROR_MESH_TOO_LARGE, "%s: %zu bytes, above max_file_bytes or 4 GiB", name,
                                  size), out);
    char msg[512];
    err = rtcd_import_check_header(data, size < HEAD_BYTES ? size : HEAD_BYTES, size, ext, msg, sizeof msg);
    if (err != RTCD_OK)
        decline(im, err, "%s: %s", name, msg);
    else
        err = load_and_judge(def, im,
                             rtcd_import_sniff(data, size < HEAD_BYTES ? size : HEAD_BYTES, ext,
                                               rtcd_import_extension_supported(ext)),
                             NULL, data, size, ext, NULL);
    return finish(im, err, out);
}

int rtcd_import_extension_supported(const char* extension)
{
    char ext[17];
    if (!extension) return 0;
    ext[0] = '.';
    lower_extension(extension, ext + 1);
    return ext[1] && aiIsExtensionSupported(ext) == AI_TRUE;
}

/* ---- handle ---- */

void rtcd_imported_retain(rtcd_imported* im)
{
    if (im) __atomic_add_fetch(&im->refcount, 1, __ATOMIC_RELAXED);
}

void rtcd_imported_release(rtcd_imported* im)
{
    if (!im || __atomic_sub_fetch(&im->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    for (uint32_t i = 0; i < im->mesh_count; ++i) rtcd_mesh_release(im->meshes[i]);
    free(im->meshes);
    rtcd_repaired_release(im->repaired);
    rtcd_wrapped_release(im->wrapped);
    free(im->wrap_vertices);
    free(im->wrap_indices);
    free(im);
}

rtcd_import_status rtcd_imported_status(const rtcd_imported* im) { return im ? im->status : RTCD_IMPORT_DECLINED; }
const rtcd_wrap_report* rtcd_imported_wrap_report(const rtcd_imported* im)
{
    return im && im->wrapped ? rtcd_wrapped_report(im->wrapped) : NULL;
}
rtcd_error rtcd_imported_wrap_input(const rtcd_imported* im, const float** vertices, uint32_t* vertex_count,
                                    const uint32_t** indices, uint32_t* triangle_count)
{
    if (!im || !im->wrapped)
        return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_imported_wrap_input: NULL or not WRAPPED");
    if (vertices) *vertices = im->wrap_vertices;
    if (vertex_count) *vertex_count = im->wrap_vertex_count;
    if (indices) *indices = im->wrap_indices;
    if (triangle_count) *triangle_count = im->wrap_triangle_count;
    return RTCD_OK;
}
uint32_t rtcd_imported_dropped_scrap_count(const rtcd_imported* im) { return im ? im->scraps : 0; }
double rtcd_imported_dropped_scrap_area_share(const rtcd_imported* im) { return im ? im->scrap_area_share : 0; }
rtcd_error rtcd_imported_error(const rtcd_imported* im)
{
    return im ? (im->status == RTCD_IMPORT_DECLINED ? im->error : RTCD_OK) : RTCD_ERROR_INVALID_ARGUMENT;
}
const char* rtcd_imported_error_message(const rtcd_imported* im)
{
    return im && im->status == RTCD_IMPORT_DECLINED ? im->message : "";
}
rtcd_error rtcd_imported_stored_error(const rtcd_imported* im) { return im ? im->stored_error : RTCD_OK; }
const char* rtcd_imported_stored_error_message(const rtcd_imported* im) { return im ? im->stored_message : ""; }
uint32_t rtcd_imported_mesh_count(const rtcd_imported* im) { return im ? im->mesh_count : 0; }
rtcd_mesh* rtcd_imported_mesh(const rtcd_imported* im, uint32_t index)
{
    return im && index < im->mesh_count ? im->meshes[index] : NULL;
}
uint32_t rtcd_imported_component_count(const rtcd_imported* im) { return im ? im->component_count : 0; }
const rtcd_repair_report* rtcd_imported_repair_report(const rtcd_imported* im)
{
    return im && im->repaired ? rtcd_repaired_report(im->repaired) : NULL;
}
const char* rtcd_imported_repair_summary(const rtcd_imported* im)
{
    return im && im->repaired ? rtcd_repaired_summary(im->repaired) : "";
}
uint32_t rtcd_imported_input_vertex_count(const rtcd_imported* im) { return im ? im->input_vertices : 0; }
uint32_t rtcd_imported_input_triangle_count(const rtcd_imported* im) { return im ? im->input_triangles : 0; }
uint32_t rtcd_imported_dropped_primitive_count(const rtcd_imported* im) { return im ? im->dropped_primitives : 0; }
