/* Private to the mesh repair (core/repair/): the working state the steps
 * share, the edge table, and the steps themselves in the order they run.
 * The driver (repair.c, rtcd_repair) calls the steps; no step calls it.
 *
 * Two numberings. Up to the split, vertices and triangles keep the input's
 * numbers (a removed triangle has tri[3t] == REPAIR_NONE), so every count can
 * name an input element directly. The split gives each component its own
 * vertex copies, numbered component after component; vsrc and tsrc lead back
 * to the input. */
#ifndef RTCD_CORE_REPAIR_STEPS_H
#define RTCD_CORE_REPAIR_STEPS_H

#include <rtcd/rtcd_repair.h>

#include "hooks.h"

#define REPAIR_NONE 0xffffffffu
/* Zero area as rtcd_mesh_create sees it: |cross| <= this * (longest edge)^2. */
#define REPAIR_ZERO_AREA 1e-6

/* Per-component flags (repair_state.comp_flags). */
#define REPAIR_COMP_OPEN 1u
#define REPAIR_COMP_NONMANIFOLD 2u
#define REPAIR_COMP_INCONSISTENT 4u

/* Undirected edges of a triangle list, numbered by lower endpoint then first
 * use. corner_edge[3t+j] is the edge from corner j to corner (j+1)%3. */
typedef struct repair_edges {
    uint32_t count;
    uint32_t* corner_edge; /* 3 per triangle; REPAIR_NONE for removed triangles */
    uint32_t* uses;        /* per edge: how many triangle sides use it */
    uint32_t* corners;     /* per edge: the corners (3t+j) of its first two uses */
    uint32_t* hi;          /* per edge: the higher endpoint */
    uint32_t* start;       /* per vertex + 1: edges whose lower endpoint it is */
} repair_edges;

typedef struct repair_state {
    rtcd_repair_def def;
    rtcd_repair_report report;
    /* Input numbering (weld .. slivers). */
    uint32_t nv, nt;
    float* pos;      /* 3 per input vertex, -0 stored as +0 */
    uint32_t* tri;   /* 3 per input triangle, welded */
    /* Component numbering (split .. orient). */
    uint32_t ncomp, nv2, nt2;
    size_t tri2_cap; /* triangles tri2, tsrc and tcomp have room for */
    uint32_t* vsrc;  /* per vertex: its input vertex */
    uint32_t* comp_vstart; /* ncomp + 1: vertices of component c */
    uint32_t* tri2;  /* 3 per triangle */
    uint32_t* tsrc;  /* per triangle: its input triangle, REPAIR_NONE for hole fills */
    uint32_t* tcomp; /* per triangle: its component */
    uint8_t* flip;   /* per triangle: winding to reverse on output */
    uint8_t* comp_flags;
    repair_edges edges; /* of tri2, valid while edges_valid */
    int edges_valid;
} repair_state;

static inline int repair_removed(const repair_state* s, uint32_t t) { return s->tri[3 * (size_t)t] == REPAIR_NONE; }

/* Counts one repair and keeps the smallest element named (input numbering). */
static inline void repair_note(uint32_t* count, uint32_t* first, uint32_t element)
{
    ++*count;
    if (element < *first) *first = element;
}

static inline const float* repair_pos2(const repair_state* s, uint32_t v) { return s->pos + 3 * (size_t)s->vsrc[v]; }

/* |cross| / longest^2 in double: the smallest altitude over the longest edge
 * (0 for coincident corners). */
double repair_quality(const float* a, const float* b, const float* c);
/* Unnormalised normal (b - a) x (c - a) in double. */
void repair_normal(const float* a, const float* b, const float* c, double n[3]);

/* Steps (repair_weld.c, repair_sliver.c, repair_topo.c, repair_holes.c). */
rtcd_error repair_weld(repair_state* s);
/* Removes repeated-index triangles and, with zero_area, those of zero area. */
void repair_degenerate(repair_state* s, int zero_area);
rtcd_error repair_duplicates(repair_state* s);
rtcd_error repair_slivers(repair_state* s);
rtcd_error repair_split(repair_state* s);
rtcd_error repair_holes(repair_state* s);
rtcd_error repair_orient(repair_state* s);

/* Edge table of nt triangles over nv vertices (triangles whose first index is
 * REPAIR_NONE are skipped). */
rtcd_error repair_edges_build(repair_edges* e, const uint32_t* tri, uint32_t nt, uint32_t nv);
void repair_edges_free(repair_edges* e);
/* The edge between a and b, or REPAIR_NONE. */
uint32_t repair_edges_find(const repair_edges* e, uint32_t a, uint32_t b);

#endif
