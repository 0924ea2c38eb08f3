/* Private to rtcd_import: the triangle list every reader fills (rtcd's own
 * readers and the walk over an assimp scene), with the checks that make
 * hostile files harmless: every face index is checked against the vertices
 * it may name (corrupt data, RTCD_ERROR_INVALID_ARGUMENT), polygons are
 * triangulated here in time linear in their size where convex (see
 * soup_face), and the list may not grow beyond rtcd's limits nor beyond a
 * budget proportional to the file's size (instancing can multiply a small
 * file's triangles: nodes referring to nodes). */
#ifndef RTCD_IMPORT_SOUP_H
#define RTCD_IMPORT_SOUP_H

#include "header_check.h"

#include <rtcd/rtcd_common.h>

#include <stddef.h>
#include <stdint.h>

/* Non-convex polygons are ear-clipped, quadratic to cubic in their corners:
 * the steps of all of a file's clipping are bounded by SOUP_WORK_BASE +
 * SOUP_WORK_PER_BYTE * its size, beyond which the file is refused
 * (RTCD_ERROR_MESH_TOO_LARGE). Convex polygons of any size become a fan. */
#define SOUP_WORK_BASE (1ull << 24)
#define SOUP_WORK_PER_BYTE 16ull
/* Vertices and triangles a file of n bytes may make (after instancing):
 * SOUP_BUDGET_BASE + SOUP_BUDGET_PER_BYTE * n, within rtcd's limits. */
#define SOUP_BUDGET_BASE (1ull << 20)
#define SOUP_BUDGET_PER_BYTE 64ull

/* Row-major 3x4: rotation/scale/shear, then translation. */
typedef struct affine {
    double m[12];
} affine;

affine affine_identity(void);
affine affine_mul(const affine* parent, const affine* child);
double affine_det(const affine* a);

typedef struct import_soup {
    float* vertices;          /* 3 per vertex: transformed and scaled */
    uint32_t* indices;        /* 3 per triangle, counter-clockwise as stored */
    uint32_t vertex_count, triangle_count;
    uint32_t vertex_capacity, triangle_capacity;
    uint64_t vertex_budget, triangle_budget;
    uint64_t work_budget;     /* ear clipping steps left */
    uint64_t dropped;         /* faces of one or two corners: points and lines */
    uint64_t faces;           /* faces seen, for messages */
    double scale;
    void* scratch;            /* the triangulation's */
    size_t scratch_bytes;
    rtcd_error error;         /* of the first failure */
    char message[512];
} import_soup;

void soup_init(import_soup* s, double scale, uint64_t file_bytes);
void soup_free(import_soup* s);
/* Records the failure (the first one wins); returns 0. */
int soup_fail(import_soup* s, rtcd_error code, const char* format, ...) __attribute__((format(printf, 3, 4)));
/* Room for this many more (a hint: the readers pass counts already checked
 * against the data's size); 0 on failure. */
int soup_reserve(import_soup* s, uint64_t vertices, uint64_t triangles);
/* Appends a vertex, transformed by xf (NULL: none) and scaled; 0 on failure. */
int soup_vertex(import_soup* s, const affine* xf, double x, double y, double z);
/* A face of n corners, each an index into the `count` vertices that start at
 * vertex `base` of the soup: an index >= count is corrupt data. One or two
 * corners: dropped and counted. Three or more: triangulated, the winding
 * reversed when `mirror` (a transform with a negative determinant). 0 on
 * failure. */
int soup_face(import_soup* s, uint32_t base, uint32_t count, const uint32_t* corners, uint32_t n, int mirror);

/* triangulate.c: the polygon of n >= 4 corners (absolute soup indices, all
 * checked) as n - 2 triangles. */
int soup_polygon(import_soup* s, const uint32_t* corners, uint32_t n, int mirror);
/* Appends one triangle (checked indices); 0 on failure. */
int soup_triangle(import_soup* s, uint32_t a, uint32_t b, uint32_t c, int mirror);

#endif
