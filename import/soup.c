/* The readers' triangle list (soup.h). */
#include "soup.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

affine affine_identity(void)
{
    affine a = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}};
    return a;
}

affine affine_mul(const affine* p, const affine* c)
{
    affine r;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) {
            double v = p->m[4 * i] * c->m[j] + p->m[4 * i + 1] * c->m[4 + j] + p->m[4 * i + 2] * c->m[8 + j];
            r.m[4 * i + j] = v + (j == 3 ? p->m[4 * i + 3] : 0.0);
        }
    }
    return r;
}

double affine_det(const affine* a)
{
    const double* m = a->m;
    return m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
           m[2] * (m[4] * m[9] - m[5] * m[8]);
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

void soup_init(import_soup* s, double scale, uint64_t file_bytes)
{
    memset(s, 0, sizeof *s);
    s->scale = scale;
    uint64_t budget = SOUP_BUDGET_BASE + SOUP_BUDGET_PER_BYTE * min_u64(file_bytes, 1ull << 40);
    s->vertex_budget = min_u64(budget, RTCD_IMPORT_MAX_VERTICES);
    s->triangle_budget = min_u64(budget, RTCD_IMPORT_MAX_TRIANGLES);
    s->work_budget = SOUP_WORK_BASE + SOUP_WORK_PER_BYTE * min_u64(file_bytes, 1ull << 40);
}

void soup_free(import_soup* s)
{
    free(s->vertices);
    free(s->indices);
    free(s->scratch);
    s->vertices = NULL;
    s->indices = NULL;
    s->scratch = NULL;
}

int soup_fail(import_soup* s, rtcd_error code, const char* format, ...)
{
    if (s->error != RTCD_OK) return 0;
    s->error = code;
    va_list args;
    va_start(args, format);
    vsnprintf(s->message, sizeof s->message, format, args);
    va_end(args);
    return 0;
}

static int over_budget(import_soup* s)
{
    const int rtcd_limit = s->vertex_budget == RTCD_IMPORT_MAX_VERTICES || s->triangle_budget == RTCD_IMPORT_MAX_TRIANGLES;
    if (rtcd_limit)
        return soup_fail(s, RTCD_ERROR_MESH_TOO_LARGE,
                         "more than %u vertices or %u triangles (rtcd's limits), counting node instances",
                         RTCD_IMPORT_MAX_VERTICES, RTCD_IMPORT_MAX_TRIANGLES);
    return soup_fail(s, RTCD_ERROR_MESH_TOO_LARGE,
                     "more than %llu vertices or %llu triangles, out of proportion to the file's size (node "
                     "instances multiply its meshes)",
                     (unsigned long long)s->vertex_budget, (unsigned long long)s->triangle_budget);
}

/* Grows an array of `width` items of `item` bytes to hold `need` items. */
static int grow(import_soup* s, void** array, uint32_t* capacity, uint64_t need, size_t item)
{
    if (need <= *capacity) return 1;
    uint64_t cap = *capacity ? *capacity : 64;
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX) cap = need; /* need is within the budget, itself below 2^32 */
    void* p = realloc(*array, (size_t)cap * item);
    if (!p)
        return soup_fail(s, RTCD_ERROR_OUT_OF_MEMORY, "no memory for %llu items of %zu bytes",
                         (unsigned long long)cap, item);
    *array = p;
    *capacity = (uint32_t)cap;
    return 1;
}

int soup_reserve(import_soup* s, uint64_t vertices, uint64_t triangles)
{
    uint64_t nv = min_u64((uint64_t)s->vertex_count + vertices, s->vertex_budget);
    uint64_t nt = min_u64((uint64_t)s->triangle_count + triangles, s->triangle_budget);
    return grow(s, (void**)&s->vertices, &s->vertex_capacity, nv, 3 * sizeof(float)) &&
           grow(s, (void**)&s->indices, &s->triangle_capacity, nt, 3 * sizeof(uint32_t));
}

int soup_vertex(import_soup* s, const affine* xf, double x, double y, double z)
{
    if (s->vertex_count >= s->vertex_budget) return over_budget(s);
    if (!grow(s, (void**)&s->vertices, &s->vertex_capacity, (uint64_t)s->vertex_count + 1, 3 * sizeof(float)))
        return 0;
    if (xf) {
        const double* m = xf->m;
        double tx = m[0] * x + m[1] * y + m[2] * z + m[3];
        double ty = m[4] * x + m[5] * y + m[6] * z + m[7];
        double tz = m[8] * x + m[9] * y + m[10] * z + m[11];
        x = tx, y = ty, z = tz;
    }
    /* Out-of-range doubles become +-Inf (not undefined): rtcd_mesh_create refuses them. */
    float* v = s->vertices + 3 * (size_t)s->vertex_count++;
    const double big = 3.4028234663852886e38;
    double c[3] = {s->scale * x, s->scale * y, s->scale * z};
    for (int k = 0; k < 3; ++k)
        v[k] = c[k] > big ? (float)INFINITY : c[k] < -big ? -(float)INFINITY : (float)c[k];
    return 1;
}

int soup_triangle(import_soup* s, uint32_t a, uint32_t b, uint32_t c, int mirror)
{
    if (s->triangle_count >= s->triangle_budget) return over_budget(s);
    if (!grow(s, (void**)&s->indices, &s->triangle_capacity, (uint64_t)s->triangle_count + 1, 3 * sizeof(uint32_t)))
        return 0;
    uint32_t* t = s->indices + 3 * (size_t)s->triangle_count++;
    t[0] = a;
    t[1] = mirror ? c : b;
    t[2] = mirror ? b : c;
    return 1;
}

int soup_face(import_soup* s, uint32_t base, uint32_t count, const uint32_t* corners, uint32_t n, int mirror)
{
    uint64_t face = s->faces++;
    for (uint32_t k = 0; k < n; ++k)
        if (corners[k] >= count)
            return soup_fail(s, RTCD_ERROR_INVALID_ARGUMENT,
                             "corrupt data: face %llu names vertex %u, there are %u", (unsigned long long)face,
                             corners[k], count);
    if ((uint64_t)base + count > s->vertex_count)
        return soup_fail(s, RTCD_ERROR_INVALID_ARGUMENT, "corrupt data: face %llu refers to missing vertices",
                         (unsigned long long)face);
    if (n < 3) {
        ++s->dropped;
        return 1;
    }
    if (n == 3) return soup_triangle(s, base + corners[0], base + corners[1], base + corners[2], mirror);
    /* The triangulation takes absolute indices. */
    uint32_t small[64];
    uint32_t* absolute = n <= 64 ? small : malloc((size_t)n * sizeof(uint32_t));
    if (!absolute) return soup_fail(s, RTCD_ERROR_OUT_OF_MEMORY, "no memory for a face of %u corners", n);
    for (uint32_t k = 0; k < n; ++k) absolute[k] = base + corners[k];
    int ok = soup_polygon(s, absolute, n, mirror);
    if (absolute != small) free(absolute);
    return ok;
}
