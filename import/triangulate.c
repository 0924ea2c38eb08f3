/* Polygon triangulation for the readers (soup.h). The polygon is projected
 * onto the plane of its Newell normal. A convex polygon (the common case:
 * quads, n-gon caps of cylinders) becomes a fan from its sharpest corner, in
 * time linear in its size;
 * any other is ear-clipped, which is quadratic to cubic in the corners, so
 * within the soup's work budget: beyond it the file is refused
 * (RTCD_ERROR_MESH_TOO_LARGE) rather than taking minutes. A polygon
 * with no ear left (self-intersecting, or every remaining corner collinear)
 * is clipped anyway, so the loop always ends; the repair judges the result. */
#include "soup.h"

#include <math.h>
#include <stdlib.h>

typedef struct pt {
    double u, v;
} pt;

typedef struct plane {
    int iu, iv;   /* the coordinates kept by the projection */
    double ulp;   /* rounding of the coordinates: turns this small are straight */
} plane;

static pt project(const import_soup* s, const plane* pl, uint32_t corner)
{
    const float* p = s->vertices + 3 * (size_t)corner;
    pt r = {p[pl->iu], p[pl->iv]};
    return r;
}

static double cross(pt a, pt b, pt c) { return (b.u - a.u) * (c.v - a.v) - (b.v - a.v) * (c.u - a.u); }

/* The Newell normal's dominant axis, oriented so that the polygon runs
 * counter-clockwise in (u, v); 0 when it has no area at all. */
static int plane_of(const import_soup* s, const uint32_t* corners, uint32_t n, plane* pl)
{
    double nrm[3] = {0, 0, 0}, extent = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const float* p = s->vertices + 3 * (size_t)corners[i];
        const float* q = s->vertices + 3 * (size_t)corners[i + 1 < n ? i + 1 : 0];
        nrm[0] += ((double)p[1] - q[1]) * ((double)p[2] + q[2]);
        nrm[1] += ((double)p[2] - q[2]) * ((double)p[0] + q[0]);
        nrm[2] += ((double)p[0] - q[0]) * ((double)p[1] + q[1]);
        for (int k = 0; k < 3; ++k) extent = fmax(extent, fabs((double)p[k]));
    }
    int axis = 0;
    for (int k = 1; k < 3; ++k)
        if (fabs(nrm[k]) > fabs(nrm[axis])) axis = k;
    if (!(fabs(nrm[axis]) > 0.0) || !isfinite(nrm[axis]) || !isfinite(extent)) return 0;
    pl->iu = (axis + 1) % 3;
    pl->iv = (axis + 2) % 3;
    if (nrm[axis] < 0) {
        int t = pl->iu;
        pl->iu = pl->iv;
        pl->iv = t;
    }
    pl->ulp = extent * 0x1p-22;
    return 1;
}

/* Convex: no turn to the right beyond the coordinates' rounding, and the
 * turns add up to one full turn (a star winds twice). Linear time. *apex:
 * the sharpest corner, where a fan has no sliver for neighbour (a fan from a
 * corner between nearly collinear ones would be all slivers). */
static int is_convex(const import_soup* s, const plane* pl, const uint32_t* corners, uint32_t n, uint32_t* apex)
{
    double total = 0, sharpest = -1;
    pt a = project(s, pl, corners[n - 2]), b = project(s, pl, corners[n - 1]);
    for (uint32_t i = 0; i < n; ++i) {
        pt c = project(s, pl, corners[i]);
        double ab = hypot(b.u - a.u, b.v - a.v), bc = hypot(c.u - b.u, c.v - b.v);
        double turn = cross(a, b, c);
        double dot = (b.u - a.u) * (c.u - b.u) + (b.v - a.v) * (c.v - b.v);
        if (turn < -4.0 * pl->ulp * (ab + bc)) return 0;
        if (turn <= 0 && dot < 0) return 0; /* a spike: the boundary doubles back */
        double angle = atan2(turn, dot);
        total += angle;
        if (angle > sharpest) sharpest = angle, *apex = i ? i - 1 : n - 1; /* the corner at b */
        a = b;
        b = c;
    }
    return fabs(total - 2 * M_PI) < 0.5;
}

/* From corner `apex`: quads and triangles from corner 0, as assimp split them. */
static int fan(import_soup* s, const uint32_t* corners, uint32_t n, uint32_t apex, int mirror)
{
    if (n <= 4) apex = 0;
    for (uint32_t k = 1; k + 1 < n; ++k) {
        uint32_t i = apex + k < n ? apex + k : apex + k - n, j = i + 1 < n ? i + 1 : 0;
        if (!soup_triangle(s, corners[apex], corners[i], corners[j], mirror)) return 0;
    }
    return 1;
}

/* Strictly inside the counter-clockwise triangle abc. */
static int inside(pt p, pt a, pt b, pt c) { return cross(a, b, p) > 0 && cross(b, c, p) > 0 && cross(c, a, p) > 0; }

static int too_costly(import_soup* s, uint32_t n)
{
    return soup_fail(s, RTCD_ERROR_MESH_TOO_LARGE,
                     "face %llu (%u corners, not convex) and the faces before it take more steps to triangulate "
                     "than a file of this size may (convex faces of any size are cheap)",
                     (unsigned long long)(s->faces - 1), n);
}

static int ear_clip(import_soup* s, const plane* pl, const uint32_t* corners, uint32_t n, int mirror)
{
    size_t bytes = (size_t)n * (sizeof(pt) + 2 * sizeof(uint32_t));
    if (bytes > s->scratch_bytes) {
        void* p = realloc(s->scratch, bytes);
        if (!p) return soup_fail(s, RTCD_ERROR_OUT_OF_MEMORY, "no memory to triangulate a face of %u corners", n);
        s->scratch = p;
        s->scratch_bytes = bytes;
    }
    pt* P = s->scratch;
    uint32_t* prev = (uint32_t*)(P + n);
    uint32_t* next = prev + n;
    for (uint32_t i = 0; i < n; ++i) {
        P[i] = project(s, pl, corners[i]);
        prev[i] = i ? i - 1 : n - 1;
        next[i] = i + 1 < n ? i + 1 : 0;
    }
    uint32_t remaining = n, i = 0, misses = 0;
    while (remaining > 3) {
        uint32_t p = prev[i], q = next[i];
        if (s->work_budget < remaining) return too_costly(s, n);
        s->work_budget -= remaining; /* the tests below, at most */
        int ear = cross(P[p], P[i], P[q]) > 0;
        for (uint32_t k = next[q]; ear && k != p; k = next[k]) ear = !inside(P[k], P[p], P[i], P[q]);
        if (!ear && ++misses < remaining) {
            i = q;
            continue;
        }
        /* An ear, or a full round without one: clip this corner anyway. */
        if (!soup_triangle(s, corners[p], corners[i], corners[q], mirror)) return 0;
        next[p] = q;
        prev[q] = p;
        --remaining;
        misses = 0;
        i = p; /* the neighbour may have become an ear */
    }
    return soup_triangle(s, corners[prev[i]], corners[i], corners[next[i]], mirror);
}

int soup_polygon(import_soup* s, const uint32_t* corners, uint32_t n, int mirror)
{
    plane pl;
    uint32_t apex = 0;
    if (!plane_of(s, corners, n, &pl) || is_convex(s, &pl, corners, n, &apex)) return fan(s, corners, n, apex, mirror);
    return ear_clip(s, &pl, corners, n, mirror);
}
