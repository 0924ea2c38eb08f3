/* Repair steps on the input numbering: weld (exact, then within a
 * tolerance), degenerate triangles, duplicated faces. */
#include "repair_steps.h"

#include <math.h>
#include <string.h>

double repair_quality(const float* a, const float* b, const float* c)
{
    double e1[3], e2[3], e3[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)b[k] - a[k];
        e2[k] = (double)c[k] - a[k];
        e3[k] = (double)c[k] - b[k];
    }
    double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2], cz = e1[0] * e2[1] - e1[1] * e2[0];
    double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
    double l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
    double l3 = e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2];
    double longest = l1 > l2 ? (l1 > l3 ? l1 : l3) : (l2 > l3 ? l2 : l3);
    return longest > 0.0 ? sqrt(cx * cx + cy * cy + cz * cz) / longest : 0.0;
}

void repair_normal(const float* a, const float* b, const float* c, double n[3])
{
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)b[k] - a[k];
        e2[k] = (double)c[k] - a[k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
}

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
    return mix64((a * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull) ^ (c * 0x94d049bb133111ebull));
}

/* Open-addressing table size: a power of two at least twice n. */
static size_t table_size(size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    return cap;
}

static uint64_t float_bits(const float* p, int k)
{
    uint32_t u;
    memcpy(&u, p + k, sizeof u);
    return u;
}

/* Exact duplicates: the same float bits (-0 was stored as +0). rep[v] is the
 * lowest referenced vertex with v's coordinates. */
static rtcd_error weld_exact(repair_state* s, const uint8_t* used, uint32_t used_count, uint32_t* rep)
{
    size_t cap = table_size(used_count), mask = cap - 1;
    uint32_t* table = rtcd_calloc(cap, sizeof *table); /* vertex + 1; 0 is empty */
    if (!table) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to weld %u vertices", used_count);
    for (uint32_t v = 0; v < s->nv; ++v) {
        rep[v] = v;
        if (!used[v]) continue;
        const float* p = s->pos + 3 * (size_t)v;
        size_t h = (size_t)hash3(float_bits(p, 0), float_bits(p, 1), float_bits(p, 2)) & mask;
        for (; table[h]; h = (h + 1) & mask) {
            uint32_t u = table[h] - 1;
            if (memcmp(s->pos + 3 * (size_t)u, p, 3 * sizeof(float)) == 0) {
                rep[v] = u;
                break;
            }
        }
        if (!table[h]) table[h] = v + 1;
    }
    rtcd_free(table);
    return RTCD_OK;
}

/* Cells of the tolerance weld: WELD_CELL_SIZE tolerances wide, so a vertex
 * usually lies farther than the tolerance from every side of its cell and
 * only its own cell is searched; 21 bits per axis pack a cell into a key that
 * sorts (no hash table: the candidates sort into contiguous cells). */
#define WELD_CELL_SIZE 16.0
#define WELD_AXIS_CELLS (1u << 21)
#define WELD_RADIX_BITS 11

typedef struct weld_item {
    uint64_t key;
    uint32_t candidate;
    uint32_t unused;
} weld_item;

typedef struct weld_grid {
    double lo[3], size;
    uint32_t ncells;
    uint64_t* keys;   /* ascending, one per cell */
    uint32_t* start;  /* ncells + 1: each cell's members */
} weld_grid;

static uint32_t weld_axis(const weld_grid* g, const float* p, int k, double* frac)
{
    double f = ((double)p[k] - g->lo[k]) / g->size, cell = floor(f);
    if (frac) *frac = f - cell;
    return cell < 0.0 ? 0u : cell >= WELD_AXIS_CELLS - 1 ? WELD_AXIS_CELLS - 1 : (uint32_t)cell;
}

static uint64_t weld_key(uint32_t x, uint32_t y, uint32_t z) { return x | (uint64_t)y << 21 | (uint64_t)z << 42; }

/* The cell with that key, or REPAIR_NONE. */
static uint32_t weld_cell(const weld_grid* g, uint64_t key)
{
    uint32_t lo = 0, hi = g->ncells;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->ncells && g->keys[lo] == key ? lo : REPAIR_NONE;
}

/* Stable LSD radix sort of 63-bit keys; an even number of passes leaves the
 * result in a. */
static void weld_sort(weld_item* a, weld_item* tmp, uint32_t n)
{
    uint32_t count[1u << WELD_RADIX_BITS];
    for (int shift = 0; shift < 66; shift += WELD_RADIX_BITS) {
        memset(count, 0, sizeof count);
        for (uint32_t i = 0; i < n; ++i) count[(a[i].key >> shift) & ((1u << WELD_RADIX_BITS) - 1)]++;
        uint32_t sum = 0;
        for (uint32_t d = 0; d < (1u << WELD_RADIX_BITS); ++d) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; ++i) tmp[count[(a[i].key >> shift) & ((1u << WELD_RADIX_BITS) - 1)]++] = a[i];
        weld_item* swap = a;
        a = tmp, tmp = swap;
    }
}

/* Within tol, greedy in index order: the lowest unclaimed vertex claims every
 * unclaimed one within tol (no chains: a claimed vertex claims nothing). */
static rtcd_error weld_tolerance(repair_state* s, const uint8_t* used, uint32_t* rep, const double lo[3],
                                 const double hi[3], double tol)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < s->nv; ++v) n += used[v] && rep[v] == v;
    weld_grid g;
    memset(&g, 0, sizeof g);
    double extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    g.size = fmax(WELD_CELL_SIZE * tol, extent / (WELD_AXIS_CELLS - 2)); /* larger cells only cost candidates */
    memcpy(g.lo, lo, sizeof g.lo);
    weld_item* items = rtcd_alloc(2 * (size_t)n * sizeof *items + 1);
    uint32_t* cand = rtcd_alloc((size_t)n * sizeof *cand + 1);    /* candidates, ascending */
    uint32_t* cell_of = rtcd_alloc((size_t)n * sizeof *cell_of + 1);
    uint32_t* members = rtcd_alloc((size_t)n * sizeof *members + 1);
    float* mpos = rtcd_alloc(3 * (size_t)n * sizeof *mpos + 1); /* members' positions */
    g.keys = rtcd_alloc((size_t)n * sizeof *g.keys + 1);
    g.start = rtcd_alloc(((size_t)n + 1) * sizeof *g.start);
    rtcd_error err = RTCD_OK;
    if (!items || !cand || !cell_of || !members || !mpos || !g.keys || !g.start) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory for the weld grid of %u vertices", n);
        goto done;
    }
    for (uint32_t v = 0, i = 0; v < s->nv; ++v) {
        if (!used[v] || rep[v] != v) continue;
        const float* p = s->pos + 3 * (size_t)v;
        items[i].key = weld_key(weld_axis(&g, p, 0, NULL), weld_axis(&g, p, 1, NULL), weld_axis(&g, p, 2, NULL));
        items[i].candidate = i;
        cand[i++] = v;
    }
    weld_sort(items, items + n, n);
    for (uint32_t j = 0; j < n; ++j) {
        if (j == 0 || items[j].key != items[j - 1].key) {
            g.keys[g.ncells] = items[j].key;
            g.start[g.ncells++] = j;
        }
        cell_of[items[j].candidate] = g.ncells - 1;
        members[j] = cand[items[j].candidate];
        memcpy(mpos + 3 * (size_t)j, s->pos + 3 * (size_t)members[j], 3 * sizeof(float));
    }
    g.start[g.ncells] = n;
    double tol2 = tol * tol, reach = tol * (1.0 + 1e-6); /* reach: rounding must not hide a neighbour cell */
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t v = cand[i];
        if (rep[v] != v) continue; /* claimed */
        const float* p = s->pos + 3 * (size_t)v;
        /* Per axis the own cell, and a neighbour only within tol of that side. */
        uint32_t own[3], from[3], to[3];
        for (int k = 0; k < 3; ++k) {
            double frac;
            own[k] = weld_axis(&g, p, k, &frac);
            from[k] = own[k] > 0 && frac * g.size <= reach ? own[k] - 1 : own[k];
            to[k] = own[k] + 1 < WELD_AXIS_CELLS && (1.0 - frac) * g.size <= reach ? own[k] + 1 : own[k];
        }
        for (uint32_t z = from[2]; z <= to[2]; ++z)
            for (uint32_t y = from[1]; y <= to[1]; ++y)
                for (uint32_t x = from[0]; x <= to[0]; ++x) {
                    int home = x == own[0] && y == own[1] && z == own[2];
                    uint32_t cell = home ? cell_of[i] : weld_cell(&g, weld_key(x, y, z));
                    if (cell == REPAIR_NONE) continue;
                    for (uint32_t j = g.start[cell]; j < g.start[cell + 1]; ++j) {
                        uint32_t u = members[j];
                        if (u <= v || rep[u] != u) continue;
                        const float* q = mpos + 3 * (size_t)j;
                        double d2 = 0.0;
                        for (int k = 0; k < 3; ++k) d2 += ((double)q[k] - p[k]) * ((double)q[k] - p[k]);
                        if (d2 <= tol2) rep[u] = v;
                    }
                }
    }
done:
    rtcd_free(items);
    rtcd_free(cand);
    rtcd_free(cell_of);
    rtcd_free(members);
    rtcd_free(mpos);
    rtcd_free(g.keys);
    rtcd_free(g.start);
    return err;
}

rtcd_error repair_weld(repair_state* s)
{
    uint8_t* used = rtcd_calloc(s->nv, 1);
    uint32_t* rep = rtcd_alloc((size_t)s->nv * sizeof *rep);
    rtcd_error err = RTCD_OK;
    if (!used || !rep) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to weld %u vertices", s->nv);
        goto done;
    }
    /* Only referenced vertices weld and span the bounding box: a stray unused
     * vertex must not widen the tolerance. */
    uint32_t used_count = 0;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < 3 * (size_t)s->nt; ++i) {
        uint32_t v = s->tri[i];
        if (used[v]) continue;
        used[v] = 1;
        ++used_count;
        for (int k = 0; k < 3; ++k) { /* no fmin/fmax: libm calls, and nothing here is NaN */
            double x = s->pos[3 * (size_t)v + k];
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    }
    if ((err = weld_exact(s, used, used_count, rep)) != RTCD_OK) goto done;
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    double tol = (double)s->def.weld_tolerance * diag;
    if (tol > 0.0 && (err = weld_tolerance(s, used, rep, lo, hi, tol)) != RTCD_OK) goto done;
    /* A duplicate points at an exact representative, which points at its
     * cluster's lowest vertex: one pass in index order resolves both. */
    for (uint32_t v = 0; v < s->nv; ++v) {
        if (!used[v]) continue;
        rep[v] = rep[rep[v]];
        if (rep[v] != v) repair_note(&s->report.welded_vertices, &s->report.first_welded_vertex, v);
    }
    for (size_t i = 0; i < 3 * (size_t)s->nt; ++i) s->tri[i] = rep[s->tri[i]];
done:
    rtcd_free(used);
    rtcd_free(rep);
    return err;
}

void repair_degenerate(repair_state* s, int zero_area)
{
    for (uint32_t t = 0; t < s->nt; ++t) {
        if (repair_removed(s, t)) continue;
        const uint32_t* c = s->tri + 3 * (size_t)t;
        int bad = c[0] == c[1] || c[1] == c[2] || c[0] == c[2];
        if (!bad && zero_area)
            bad = repair_quality(s->pos + 3 * (size_t)c[0], s->pos + 3 * (size_t)c[1], s->pos + 3 * (size_t)c[2]) <=
                  REPAIR_ZERO_AREA;
        if (!bad) continue;
        s->tri[3 * (size_t)t] = REPAIR_NONE;
        repair_note(&s->report.degenerate_triangles, &s->report.first_degenerate_triangle, t);
    }
}

/* The triangle's vertices ascending, and whether its winding is the
 * ascending cycle (1) or the other one (0). */
static int sorted_face(const uint32_t* c, uint32_t out[3])
{
    int m = c[0] < c[1] ? (c[0] < c[2] ? 0 : 2) : (c[1] < c[2] ? 1 : 2);
    uint32_t a = c[m], b = c[(m + 1) % 3], d = c[(m + 2) % 3];
    out[0] = a;
    out[1] = b < d ? b : d;
    out[2] = b < d ? d : b;
    return b < d;
}

/* Same three vertices: a later face wound the same way is a copy; one wound
 * the other way makes the pair an internal wall (two pieces glued face to
 * face), and every face on those vertices goes. */
rtcd_error repair_duplicates(repair_state* s)
{
    size_t cap = table_size(s->nt), mask = cap - 1;
    uint32_t* table = rtcd_calloc(cap, sizeof *table); /* triangle + 1 */
    uint8_t* opposite = rtcd_calloc(s->nt, 1);
    rtcd_error err = RTCD_OK;
    if (!table || !opposite) {
        err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to find duplicates among %u triangles",
                        s->nt);
        goto done;
    }
    for (uint32_t t = 0; t < s->nt; ++t) {
        if (repair_removed(s, t)) continue;
        uint32_t key[3], other[3];
        int wind = sorted_face(s->tri + 3 * (size_t)t, key);
        size_t h = (size_t)hash3(key[0], key[1], key[2]) & mask;
        for (; table[h]; h = (h + 1) & mask) {
            uint32_t u = table[h] - 1;
            int other_wind = sorted_face(s->tri + 3 * (size_t)u, other);
            if (memcmp(key, other, sizeof key) != 0) continue;
            if (other_wind != wind) opposite[u] = 1;
            s->tri[3 * (size_t)t] = REPAIR_NONE;
            repair_note(&s->report.duplicate_triangles, &s->report.first_duplicate_triangle, t);
            break;
        }
        if (!table[h]) table[h] = t + 1;
    }
    for (uint32_t t = 0; t < s->nt; ++t) {
        if (!opposite[t]) continue;
        s->tri[3 * (size_t)t] = REPAIR_NONE;
        repair_note(&s->report.duplicate_triangles, &s->report.first_duplicate_triangle, t);
    }
done:
    rtcd_free(table);
    rtcd_free(opposite);
    return err;
}
