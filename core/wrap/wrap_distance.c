/* Two-sided sampled Hausdorff distance between triangle sets
 * (rtcd_sampled_distance, rtcd_wrap.h): what the wrap reports of how far its
 * envelope is from the input. Plain C, no OpenVDB: built in every variant.
 *
 * Samples: every vertex (strided down to the sample count) and area-weighted
 * points (fixed-seed LCG). Each sample's exact distance to the other set
 * comes from a uniform grid of that set's triangles searched ring by ring:
 * cells at ring k+1 are at least k cells away, so the search stops once the
 * best distance is below that. */
#include <rtcd/rtcd_wrap.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct tri_grid {
    double lo[3], cell;
    int dim[3];
    uint32_t* start;  /* cells + 1 */
    uint32_t* items;  /* triangle numbers, cell after cell */
    const float* v;
    const uint32_t* idx;
} tri_grid;

static void vsub(double* r, const double* a, const double* b)
{
    r[0] = a[0] - b[0];
    r[1] = a[1] - b[1];
    r[2] = a[2] - b[2];
}
static double vdot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Squared distance from p to triangle abc (Ericson, Real-Time Collision Detection 5.1.5). */
static double point_triangle_d2(const double* p, const double* a, const double* b, const double* c)
{
    double ab[3], ac[3], ap[3], bp[3], cp[3], q[3];
    vsub(ab, b, a);
    vsub(ac, c, a);
    vsub(ap, p, a);
    double d1 = vdot(ab, ap), d2 = vdot(ac, ap);
    double v, w;
    if (d1 <= 0 && d2 <= 0) { v = 0; w = 0; goto done; }
    vsub(bp, p, b);
    double d3 = vdot(ab, bp), d4 = vdot(ac, bp);
    if (d3 >= 0 && d4 <= d3) { v = 1; w = 0; goto done; }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { v = d1 / (d1 - d3); w = 0; goto done; }
    vsub(cp, p, c);
    double d5 = vdot(ab, cp), d6 = vdot(ac, cp);
    if (d6 >= 0 && d5 <= d6) { v = 0; w = 1; goto done; }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) { v = 0; w = d2 / (d2 - d6); goto done; }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        v = 1 - w;
        goto done;
    }
    {
        double denom = 1.0 / (va + vb + vc);
        v = vb * denom;
        w = vc * denom;
    }
done:
    for (int i = 0; i < 3; ++i) q[i] = a[i] + ab[i] * v + ac[i] * w - p[i];
    return vdot(q, q);
}

static void corner(const float* v, const uint32_t* idx, uint32_t t, int c, double* out)
{
    const float* p = v + 3 * (size_t)idx[3 * (size_t)t + c];
    out[0] = p[0];
    out[1] = p[1];
    out[2] = p[2];
}

static int cell_of(const tri_grid* g, double x, int axis)
{
    double f = floor((x - g->lo[axis]) / g->cell);
    if (f < 0) return 0;
    if (f >= g->dim[axis]) return g->dim[axis] - 1;
    return (int)f;
}

static void tri_cells(const tri_grid* g, uint32_t t, int lo[3], int hi[3])
{
    double p[3][3];
    for (int c = 0; c < 3; ++c) corner(g->v, g->idx, t, c, p[c]);
    for (int a = 0; a < 3; ++a) {
        double mn = fmin(p[0][a], fmin(p[1][a], p[2][a])), mx = fmax(p[0][a], fmax(p[1][a], p[2][a]));
        lo[a] = cell_of(g, mn, a);
        hi[a] = cell_of(g, mx, a);
    }
}

/* Cells about as many as triangles (fewer when large triangles would fill
 * too many): memory in proportion to the input. 0 on no memory. */
static int grid_build(tri_grid* g, const float* v, uint32_t nv, const uint32_t* idx, uint32_t nt)
{
    memset(g, 0, sizeof *g);
    g->v = v;
    g->idx = idx;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    (void)nv;
    for (size_t k = 0; k < 3 * (size_t)nt; ++k) /* the corners: unused vertices are no part of it */
        for (int a = 0; a < 3; ++a) {
            lo[a] = fmin(lo[a], v[3 * (size_t)idx[k] + a]);
            hi[a] = fmax(hi[a], v[3 * (size_t)idx[k] + a]);
        }
    double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    if (!(ext > 0)) ext = 1;
    double target = cbrt((double)nt) + 1;
    for (int attempt = 0; attempt < 12; ++attempt, target *= 0.6) {
        g->cell = ext / target;
        size_t cells = 1;
        for (int a = 0; a < 3; ++a) {
            g->lo[a] = lo[a];
            g->dim[a] = (int)fmin(1024.0, floor((hi[a] - lo[a]) / g->cell) + 1);
            cells *= (size_t)g->dim[a];
        }
        size_t entries = 0;
        int lo_c[3], hi_c[3];
        for (uint32_t t = 0; t < nt; ++t) {
            tri_cells(g, t, lo_c, hi_c);
            entries += (size_t)(hi_c[0] - lo_c[0] + 1) * (hi_c[1] - lo_c[1] + 1) * (hi_c[2] - lo_c[2] + 1);
        }
        if (entries > 16 * (size_t)nt + (1u << 20) && attempt < 11) continue;
        g->start = calloc(cells + 1, sizeof *g->start);
        g->items = malloc((entries ? entries : 1) * sizeof *g->items);
        if (!g->start || !g->items) return 0;
        for (int pass = 0; pass < 2; ++pass) {
            for (uint32_t t = 0; t < nt; ++t) {
                tri_cells(g, t, lo_c, hi_c);
                for (int z = lo_c[2]; z <= hi_c[2]; ++z)
                    for (int y = lo_c[1]; y <= hi_c[1]; ++y)
                        for (int x = lo_c[0]; x <= hi_c[0]; ++x) {
                            size_t c = ((size_t)z * g->dim[1] + y) * g->dim[0] + x;
                            if (pass == 0) ++g->start[c + 1];
                            else g->items[g->start[c]++] = t;
                        }
            }
            if (pass == 0)
                for (size_t c = 0; c < cells; ++c) g->start[c + 1] += g->start[c];
            else
                for (size_t c = cells; c > 0; --c) g->start[c] = g->start[c - 1];
        }
        g->start[0] = 0;
        return 1;
    }
    return 0;
}

static double grid_distance(const tri_grid* g, const double* p)
{
    int c[3] = {cell_of(g, p[0], 0), cell_of(g, p[1], 1), cell_of(g, p[2], 2)};
    int maxring = g->dim[0] + g->dim[1] + g->dim[2];
    double best = INFINITY;
    for (int k = 0; k <= maxring; ++k) {
        for (int z = c[2] - k; z <= c[2] + k; ++z) {
            if (z < 0 || z >= g->dim[2]) continue;
            for (int y = c[1] - k; y <= c[1] + k; ++y) {
                if (y < 0 || y >= g->dim[1]) continue;
                int shell = z == c[2] - k || z == c[2] + k || y == c[1] - k || y == c[1] + k;
                for (int x = c[0] - k; x <= c[0] + k; x += (shell || k == 0) ? 1 : 2 * k) {
                    if (x < 0 || x >= g->dim[0]) continue;
                    size_t cell = ((size_t)z * g->dim[1] + y) * g->dim[0] + x;
                    for (uint32_t i = g->start[cell]; i < g->start[cell + 1]; ++i) {
                        double a[3], b[3], cc[3];
                        uint32_t t = g->items[i];
                        corner(g->v, g->idx, t, 0, a);
                        corner(g->v, g->idx, t, 1, b);
                        corner(g->v, g->idx, t, 2, cc);
                        double d2 = point_triangle_d2(p, a, b, cc);
                        if (d2 < best) best = d2;
                    }
                }
            }
        }
        if (best <= (double)k * g->cell * (double)k * g->cell) break;
    }
    return sqrt(best);
}

static double tri_area(const float* v, const uint32_t* idx, uint32_t t)
{
    double a[3], b[3], c[3], u[3], w[3];
    corner(v, idx, t, 0, a);
    corner(v, idx, t, 1, b);
    corner(v, idx, t, 2, c);
    vsub(u, b, a);
    vsub(w, c, a);
    double x = u[1] * w[2] - u[2] * w[1], y = u[2] * w[0] - u[0] * w[2], z = u[0] * w[1] - u[1] * w[0];
    return 0.5 * sqrt(x * x + y * y + z * z);
}

static double lcg01(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

/* Largest distance from samples of A to B; -1 on no memory. */
static double one_side(const float* va, uint32_t nva, const uint32_t* ia, uint32_t nta, const tri_grid* gb,
                       uint32_t samples)
{
    double worst = 0, p[3];
    /* Vertices no triangle uses are not part of the surface. */
    unsigned char* used = calloc(nva, 1);
    double* cum = malloc((size_t)nta * sizeof *cum);
    if (!used || !cum) {
        free(used);
        free(cum);
        return -1;
    }
    for (size_t i = 0; i < 3 * (size_t)nta; ++i) used[ia[i]] = 1;
    uint32_t step = nva > samples ? (nva + samples - 1) / samples : 1;
    for (uint32_t i = 0; i < nva; i += step) {
        if (!used[i]) continue;
        for (int a = 0; a < 3; ++a) p[a] = va[3 * (size_t)i + a];
        worst = fmax(worst, grid_distance(gb, p));
    }
    free(used);
    double total = 0;
    for (uint32_t t = 0; t < nta; ++t) cum[t] = total += tri_area(va, ia, t);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint32_t s = 0; s < samples && total > 0; ++s) {
        double r = lcg01(&seed) * total;
        uint32_t lo = 0, hi = nta - 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (cum[mid] < r) lo = mid + 1;
            else hi = mid;
        }
        double u = lcg01(&seed), w = lcg01(&seed);
        if (u + w > 1) {
            u = 1 - u;
            w = 1 - w;
        }
        double a[3], b[3], c[3];
        corner(va, ia, lo, 0, a);
        corner(va, ia, lo, 1, b);
        corner(va, ia, lo, 2, c);
        for (int k = 0; k < 3; ++k) p[k] = a[k] + (b[k] - a[k]) * u + (c[k] - a[k]) * w;
        worst = fmax(worst, grid_distance(gb, p));
    }
    free(cum);
    return worst;
}

double rtcd_sampled_distance(const float* va, uint32_t nva, const uint32_t* ia, uint32_t nta, const float* vb,
                             uint32_t nvb, const uint32_t* ib, uint32_t ntb, uint32_t samples, double* a_to_b,
                             double* b_to_a)
{
    if (!va || !ia || !vb || !ib || !nva || !nta || !nvb || !ntb) return -1;
    for (size_t i = 0; i < 3 * (size_t)nta; ++i)
        if (ia[i] >= nva) return -1;
    for (size_t i = 0; i < 3 * (size_t)ntb; ++i)
        if (ib[i] >= nvb) return -1;
    for (size_t i = 0; i < 3 * (size_t)nva; ++i)
        if (!isfinite(va[i])) return -1;
    for (size_t i = 0; i < 3 * (size_t)nvb; ++i)
        if (!isfinite(vb[i])) return -1;
    tri_grid ga, gb;
    memset(&ga, 0, sizeof ga);
    memset(&gb, 0, sizeof gb);
    double ab = -1, ba = -1;
    if (grid_build(&ga, va, nva, ia, nta) && grid_build(&gb, vb, nvb, ib, ntb)) {
        ab = one_side(va, nva, ia, nta, &gb, samples);
        ba = one_side(vb, nvb, ib, ntb, &ga, samples);
    }
    free(ga.start);
    free(ga.items);
    free(gb.start);
    free(gb.items);
    if (a_to_b) *a_to_b = ab;
    if (b_to_a) *b_to_a = ba;
    return ab < 0 || ba < 0 ? -1 : fmax(ab, ba);
}
