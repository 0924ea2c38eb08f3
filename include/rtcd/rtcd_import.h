/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* rtcd mesh import: model files (OBJ, STL, PLY, OFF, glTF 2.0, GLB, and
 * every other format assimp reads: FBX, Collada, ...) to rtcd meshes,
 * repaired where needed.
 *
 * A separate library (librtcd_import, built when assimp is found); the core
 * does not depend on it and its users do not need assimp's headers.
 *
 * PLY (ASCII, binary little- and big-endian), OFF ([ST][C][N]OFF) and glTF
 * 2.0 / GLB are read by rtcd's own readers, whatever the extension or hint
 * when the content is theirs: assimp 5.2's loaders of these formats hang or
 * crash on hostile files. Their time and memory are proportional to the
 * file's size, whatever counts it claims. glTF 1.0, 4OFF/nOFF, binary OFF,
 * sparse accessors and compressed geometry that a glTF requires (Draco,
 * meshopt, KHR_mesh_quantization) are declined with
 * RTCD_ERROR_INVALID_ARGUMENT and a message. The rest goes to assimp.
 *
 * Polygons are triangulated here: convex ones (in the plane of their
 * normal) as a fan, in linear time, whatever their size; others by ear
 * clipping, whose steps over the whole file are bounded in proportion to its
 * size: a file of huge non-convex faces is declined with
 * RTCD_ERROR_MESH_TOO_LARGE rather than taking minutes.
 *
 * One call reads a file, bakes the scene's node transforms into the
 * vertices, gathers every triangle of the scene into one list and then:
 *   1. takes the list as stored when rtcd_mesh_create accepts it (ACCEPTED,
 *      one mesh);
 *   2. else repairs it (rtcd_repair.h) and creates one mesh per component
 *      (REPAIRED, when every component is taken). Scraps, pieces that
 *      cannot be a solid (fewer than 4 triangles, or flat: every vertex
 *      within 1e-4 of the piece's diagonal of one plane), are dropped and
 *      counted with their share of the area when a solid piece remains;
 *   3. else, with def.wrap AUTO (the default) and the wrap built in
 *      (rtcd_wrap.h), wraps what the repair could not close (the pieces
 *      still open or refused; the scraps too when nothing solid is left)
 *      into one watertight envelope, kept beside the closed pieces
 *      (WRAPPED; rtcd_imported_wrap_report says how far it is from them);
 *      with def.wrap ALWAYS the whole file is wrapped into one mesh;
 *   4. else gives up with the code and message of the first failure
 *      (DECLINED): the loader's, the repair's or the first component's,
 *      the message saying "wrap not available" or "wrap off" where a wrap
 *      would have been tried.
 * Points and lines in the file are dropped and counted, never an error. */
#ifndef RTCD_IMPORT_H
#define RTCD_IMPORT_H

#include "rtcd_common.h"
#include "rtcd_mesh.h"
#include "rtcd_repair.h"
#include "rtcd_wrap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rtcd_import_flags {
    /* Take the file as stored or decline it: no repair. */
    RTCD_IMPORT_NO_REPAIR = 1u << 0
} rtcd_import_flags;

typedef struct rtcd_import_def {
    rtcd_repair_def repair;  /* step 2's repairs; default rtcd_default_repair_def() */
    float scale;             /* multiplies every coordinate after the node transforms; finite, > 0; default 1 */
    uint32_t flags;          /* rtcd_import_flags; default 0 */
    /* rtcd_mesh_flags for every rtcd_mesh_create. Default 0: an inside-out
     * file is declined as stored and fixed (and counted) by the repair's
     * orientation step; RTCD_MESH_FLIP_INSIDE_OUT would take it as stored,
     * flipped without a word in the report. */
    uint32_t mesh_flags;
    uint32_t bvh_leaf_size;  /* for every mesh; 0 means rtcd's default */
    /* Larger inputs are declined with RTCD_ERROR_MESH_TOO_LARGE before being
     * read. Default 1 GiB; 0 means no limit. */
    uint64_t max_file_bytes;
    /* What the repair cannot close: RTCD_WRAP_AUTO (default) wraps it where
     * the wrap is built in, OFF declines it, ALWAYS wraps every file whole. */
    rtcd_wrap_mode wrap;
    rtcd_wrap_def wrap_def;  /* default rtcd_default_wrap_def() */
} rtcd_import_def;

RTCD_API rtcd_import_def rtcd_default_import_def(void);

typedef enum rtcd_import_status {
    RTCD_IMPORT_ACCEPTED = 0,  /* taken as stored: one mesh */
    RTCD_IMPORT_REPAIRED = 1,  /* taken after repair: one mesh per component */
    RTCD_IMPORT_DECLINED = 2,  /* not taken: see rtcd_imported_error */
    RTCD_IMPORT_WRAPPED = 3    /* taken with a wrapped envelope: the closed pieces, then the envelope */
} rtcd_import_status;

/* The outcome of one import: meshes, report, counts. Reference counted
 * (starts at 1), immutable, may be read from any thread. */
typedef struct rtcd_imported rtcd_imported;

/* Reads `path` (caller-owned, read during the call). Returns RTCD_OK when the
 * file is ACCEPTED or REPAIRED, else the code of the decline:
 *   RTCD_ERROR_INVALID_ARGUMENT   missing, unreadable, empty, a directory, a
 *                                 format nothing here reads, corrupt or
 *                                 truncated data (a face index beyond the
 *                                 vertices included, in every format; the
 *                                 message holds the reader's or assimp's
 *                                 reason), no triangles in the scene;
 *   RTCD_ERROR_MESH_TOO_LARGE     above max_file_bytes, or counts beyond what
 *                                 rtcd meshes hold (checked from the file's
 *                                 header before anything is allocated), or
 *                                 node instances multiplying a file's meshes
 *                                 out of proportion to its size (more than
 *                                 2^20 + 64 x its bytes vertices or
 *                                 triangles), or non-convex faces too costly
 *                                 to triangulate (above);
 *   RTCD_ERROR_OUT_OF_MEMORY      here or inside assimp;
 *   RTCD_ERROR_MESH_*             the first component rtcd_mesh_create refuses.
 * The header counts of binary STL are checked against the data's size
 * first; assimp trusts the counts of some other text formats (X, ASE) and
 * may reserve that much memory before failing, and its loaders of formats
 * other than OBJ and STL are not fuzzed here: a process reading untrusted
 * files of those formats should limit its memory or read them in a child
 * process, as rtcd_mesh_check does. A glTF's buffer files are read from
 * beside it (relative names only, regular files only, at most
 * max_file_bytes in all).
 * Unlike rtcd_mesh_create, *out receives a handle on a decline too (status
 * DECLINED, with the reason and whatever counts and report were reached):
 * release it in every case. *out is NULL only for bad arguments (NULL def,
 * path or out, a non-positive scale, unknown flags) and out of memory.
 *
 * The error callback (rtcd_set_error_callback) also sees the failures that a
 * later step makes good (e.g. the as-stored attempt of a REPAIRED file).
 * Thread-safe: assimp runs under a lock of this library. */
RTCD_API rtcd_error rtcd_import_file(const rtcd_import_def* def, const char* path, rtcd_imported** out);

/* The same from memory (caller-owned, read during the call). format_hint is
 * the extension without the dot ("obj", "stl"; NULL or "" lets the content
 * decide: PLY, OFF and glTF are recognised here, anything else is assimp's
 * guess). Files the data refers to (an OBJ's .mtl, a glTF's .bin) cannot be
 * found from memory. */
RTCD_API rtcd_error rtcd_import_memory(const rtcd_import_def* def, const void* data, size_t size,
                                       const char* format_hint, rtcd_imported** out);

RTCD_API void rtcd_imported_retain(rtcd_imported* imported);
RTCD_API void rtcd_imported_release(rtcd_imported* imported); /* NULL is fine */

RTCD_API rtcd_import_status rtcd_imported_status(const rtcd_imported* imported);
/* RTCD_OK unless DECLINED; the message ("" unless DECLINED) is owned by the handle. */
RTCD_API rtcd_error rtcd_imported_error(const rtcd_imported* imported);
RTCD_API const char* rtcd_imported_error_message(const rtcd_imported* imported);
/* Why the data as stored was not taken (RTCD_OK and "" when it was, or when
 * the loader failed first). For a REPAIRED file: what the repair made good. */
RTCD_API rtcd_error rtcd_imported_stored_error(const rtcd_imported* imported);
RTCD_API const char* rtcd_imported_stored_error_message(const rtcd_imported* imported);

/* Meshes: 1 when ACCEPTED, one per kept component when REPAIRED, the
 * closed components then the envelope when WRAPPED, 0 when DECLINED. Owned
 * by the handle (rtcd_mesh_retain one to keep it longer); NULL for an index
 * out of range. Named "<file name>", "<file name>#<i>" or "<file name>#wrap". */
RTCD_API uint32_t rtcd_imported_mesh_count(const rtcd_imported* imported);
RTCD_API rtcd_mesh* rtcd_imported_mesh(const rtcd_imported* imported, uint32_t index);

/* Components the surface has: 1 when ACCEPTED, the repair's count when the
 * repair ran (also when DECLINED afterwards), 0 when the loader failed. */
RTCD_API uint32_t rtcd_imported_component_count(const rtcd_imported* imported);

/* The repair's report, owned by the handle; NULL when no repair ran
 * (ACCEPTED, RTCD_IMPORT_NO_REPAIR, or declined before it). Its numbering is
 * the gathered triangle list's: the scene's meshes one after another, in
 * node order, each with its reader's vertex numbering, polygons split into
 * triangles in order. */
RTCD_API const rtcd_repair_report* rtcd_imported_repair_report(const rtcd_imported* imported);
/* rtcd_repaired_summary's line ("" when no repair ran); owned by the handle. */
RTCD_API const char* rtcd_imported_repair_summary(const rtcd_imported* imported);

/* The wrap's report (resolution, triangle counts in and out, sampled
 * two-sided distance between what was wrapped and the envelope); NULL
 * unless WRAPPED. Owned by the handle. */
RTCD_API const rtcd_wrap_report* rtcd_imported_wrap_report(const rtcd_imported* imported);

/* The triangles that were wrapped (the pieces the repair left open, or the
 * whole file with ALWAYS), arrays owned by the handle; any output pointer
 * may be NULL. RTCD_ERROR_INVALID_ARGUMENT unless WRAPPED. */
RTCD_API rtcd_error rtcd_imported_wrap_input(const rtcd_imported* imported, const float** vertices,
                                             uint32_t* vertex_count, const uint32_t** indices,
                                             uint32_t* triangle_count);

/* Scraps dropped (step 2), and their share of the repaired surface's area (0 to 1). */
RTCD_API uint32_t rtcd_imported_dropped_scrap_count(const rtcd_imported* imported);
RTCD_API double rtcd_imported_dropped_scrap_area_share(const rtcd_imported* imported);

/* The gathered triangle list (before any repair): vertices of the scene's
 * triangle meshes and their triangles; faces of one or two corners (points,
 * lines) dropped and counted. */
RTCD_API uint32_t rtcd_imported_input_vertex_count(const rtcd_imported* imported);
RTCD_API uint32_t rtcd_imported_input_triangle_count(const rtcd_imported* imported);
RTCD_API uint32_t rtcd_imported_dropped_primitive_count(const rtcd_imported* imported);

/* Non-zero when assimp reads files with this extension ("obj", ".STL";
 * case-insensitive, with or without the dot). */
RTCD_API int rtcd_import_extension_supported(const char* extension);

/* "accepted", "repaired", "declined", "wrapped" (never NULL). */
RTCD_API const char* rtcd_import_status_name(rtcd_import_status status);

#ifdef __cplusplus
}
#endif
#endif
