/* The user's meshes of the demos' --mesh FILE (repeatable), read through the
 * import library (include/rtcd/rtcd_import.h; built only where assimp is).
 * Every file becomes one body shape: a file the import takes as stored gives
 * one mesh, a repaired one a mesh per closed component, and a file of several
 * pieces (a convex decomposition, a set of touching parts) one compound shape
 * of them (rtcd_shape_create_compound). */
#ifndef RTCD_SCENE_USER_MESHES_H
#define RTCD_SCENE_USER_MESHES_H

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_world.h>

#include <stddef.h>

/* scale > 0 multiplies every coordinate; scale 0 fits each file to the
 * avalanche blob's size: USER_MESH_FIT_SIZE metres from the centre of its
 * bounding box to its farthest vertex (all pieces of a file alike). */
#define USER_MESH_FIT_SIZE 0.5f

typedef struct user_meshes {
    rtcd_mesh** meshes;   /* one reference each, file after file */
    uint32_t count;       /* pieces of all files */
    uint32_t* first;      /* file f's pieces: meshes[first[f]] .. meshes[first[f + 1] - 1] */
    uint32_t file_count;
} user_meshes;

/* Non-zero when the demos were built with the import library. */
int user_meshes_available(void);

/* Reads the files. On failure returns the error and writes one line to
 * `why` naming the file and the reason (the import's, "no such file", or
 * "built without the import library"); *out is then empty. */
rtcd_error user_meshes_load(const char* const* paths, uint32_t path_count, float scale, user_meshes* out, char* why,
                            size_t why_size);
void user_meshes_free(user_meshes* m);

/* File f's body shape: its one mesh, or a compound of its pieces.
 * *triangles: its triangle count. */
rtcd_error user_meshes_shape(rtcd_world* world, const user_meshes* m, uint32_t file, rtcd_shape** out,
                             uint32_t* triangles);

/* Largest distance of a vertex of the shape's body mesh from the body origin. */
float demo_shape_bounding_radius(const rtcd_shape* shape);

#endif
