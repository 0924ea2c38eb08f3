/* The import's result handle (rtcd_import.h), shared by import.c (reading)
 * and settle.c (what becomes of the repaired pieces: kept, dropped, wrapped). */
#ifndef RTCD_IMPORT_IMPORTED_H
#define RTCD_IMPORT_IMPORTED_H

#include <rtcd/rtcd_import.h>

#define MESSAGE_SIZE 1024

struct rtcd_imported {
    unsigned refcount;
    rtcd_import_status status;
    rtcd_error error;
    rtcd_error stored_error;
    uint32_t mesh_count;
    uint32_t component_count;
    uint32_t input_vertices, input_triangles, dropped_primitives;
    uint32_t scraps;           /* pieces dropped as no solid */
    double scrap_area_share;
    rtcd_mesh** meshes;        /* mesh_count, owned */
    rtcd_repaired* repaired;   /* owned, NULL when no repair ran: the report and summary */
    rtcd_wrapped* wrapped;     /* owned, NULL unless WRAPPED */
    float* wrap_vertices;      /* what was wrapped (owned), NULL unless WRAPPED */
    uint32_t* wrap_indices;
    uint32_t wrap_vertex_count, wrap_triangle_count;
    char name[256];
    char message[MESSAGE_SIZE];
    char stored_message[MESSAGE_SIZE];
};

rtcd_error rtcd_import_decline(rtcd_imported* im, rtcd_error code, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

/* After the repair ran (im->repaired set): scraps dropped, closed pieces
 * made meshes, the rest wrapped or declined (rtcd_import.h, steps 2 to 4). */
rtcd_error rtcd_import_settle(const rtcd_import_def* def, rtcd_imported* im);

/* Step 3 with ALWAYS: the gathered triangles wrapped whole into one mesh. */
rtcd_error rtcd_import_wrap_all(const rtcd_import_def* def, rtcd_imported* im, const float* vertices,
                                uint32_t vertex_count, const uint32_t* indices, uint32_t triangle_count);

#endif
