/* Repair topology: the edge table, the split into components (each with its
 * own vertices) and the orientation (consistent per piece, outward where
 * closed), which also classifies each component for the report. */
#include "repair_steps.h"

#include <stdlib.h>
#include <string.h>

void repair_edges_free(repair_edges* e)
{
    rtcd_free(e->corner_edge);
    rtcd_free(e->uses);
    rtcd_free(e->corners);
    rtcd_free(e->hi);
    rtcd_free(e->start);
    memset(e, 0, sizeof *e);
}

static size_t next_corner(size_t k) { return k % 3 == 2 ? k - 2 : k + 1; }

static int u64_cmp(const void* pa, const void* pb)
{
    uint64_t a = *(const uint64_t*)pa, b = *(const uint64_t*)pb;
    return a < b ? -1 : a > b;
}

static void edge_use(repair_edges* e, uint32_t id, uint32_t corner)
{
    if (e->uses[id] < 2) e->corners[2 * (size_t)id + e->uses[id]] = corner;
    e->uses[id]++;
    e->corner_edge[corner] = id;
}

/* Corners bucketed by their edge's lower endpoint (a counting sort, each
 * entry the higher endpoint and the corner), then each bucket's edges
 * numbered: a short scan for small buckets, a sort for large ones (fans of
 * many triangles). */
rtcd_error repair_edges_build(repair_edges* e, const uint32_t* tri, uint32_t nt, uint32_t nv)
{
    memset(e, 0, sizeof *e);
    size_t nc = 3 * (size_t)nt;
    uint32_t* cstart = rtcd_calloc((size_t)nv + 2, sizeof *cstart);
    uint64_t* bucket = rtcd_alloc(nc * sizeof *bucket + 1); /* hi << 32 | corner */
    e->corner_edge = rtcd_alloc(nc * sizeof *e->corner_edge + 1);
    e->uses = rtcd_calloc(nc + 1, sizeof *e->uses);
    e->corners = rtcd_alloc(2 * nc * sizeof *e->corners + 1);
    e->hi = rtcd_alloc(nc * sizeof *e->hi + 1);
    e->start = rtcd_alloc(((size_t)nv + 1) * sizeof *e->start);
    if (!cstart || !bucket || !e->corner_edge || !e->uses || !e->corners || !e->hi || !e->start) {
        repair_edges_free(e);
        rtcd_free(cstart);
        rtcd_free(bucket);
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory for the edges of %u triangles", nt);
    }
    for (size_t k = 0; k < nc; ++k) {
        if (tri[k - k % 3] == REPAIR_NONE) continue;
        uint32_t a = tri[k], b = tri[next_corner(k)];
        cstart[(a < b ? a : b) + 2]++;
    }
    for (uint32_t v = 0; v < nv; ++v) cstart[v + 2] += cstart[v + 1];
    for (size_t k = 0; k < nc; ++k) { /* cstart[v + 1] is v's fill cursor */
        if (tri[k - k % 3] == REPAIR_NONE) {
            e->corner_edge[k] = REPAIR_NONE;
            continue;
        }
        uint32_t a = tri[k], b = tri[next_corner(k)];
        bucket[cstart[(a < b ? a : b) + 1]++] = (uint64_t)(a < b ? b : a) << 32 | k;
    }
    uint32_t count = 0;
    for (uint32_t v = 0; v < nv; ++v) {
        e->start[v] = count;
        uint64_t* b = bucket + cstart[v];
        uint32_t n = cstart[v + 1] - cstart[v];
        if (n > 32) { /* sorted by higher endpoint, corners ascending within */
            qsort(b, n, sizeof *b, u64_cmp);
            for (uint32_t i = 0; i < n; ++i) {
                if (i == 0 || b[i] >> 32 != b[i - 1] >> 32) e->hi[count++] = (uint32_t)(b[i] >> 32);
                edge_use(e, count - 1, (uint32_t)b[i]);
            }
            continue;
        }
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t hi = (uint32_t)(b[i] >> 32), id = e->start[v];
            while (id < count && e->hi[id] != hi) ++id;
            if (id == count) e->hi[count++] = hi;
            edge_use(e, id, (uint32_t)b[i]);
        }
    }
    e->start[nv] = count;
    e->count = count;
    rtcd_free(cstart);
    rtcd_free(bucket);
    return RTCD_OK;
}

uint32_t repair_edges_find(const repair_edges* e, uint32_t a, uint32_t b)
{
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    for (uint32_t id = e->start[lo]; id < e->start[lo + 1]; ++id)
        if (e->hi[id] == hi) return id;
    return REPAIR_NONE;
}

static uint32_t uf_find(uint32_t* parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Components: triangles joined across edges of exactly two triangles. Each
 * gets its own copies of its vertices, so pieces that touched at a vertex or
 * along a non-manifold edge share nothing afterwards. Components come in the
 * order of their first triangle, triangles and vertices in input order of
 * first use. */
rtcd_error repair_split(repair_state* s)
{
    repair_edges e;
    memset(&e, 0, sizeof e);
    uint32_t nt = s->nt, nv = s->nv;
    uint32_t* parent = rtcd_alloc(((size_t)nt + 1) * sizeof *parent); /* later ncomp + 1 cursors */
    uint32_t* label = rtcd_alloc((size_t)nt * sizeof *label + 1);
    uint32_t* newid = rtcd_alloc((size_t)nv * sizeof *newid + 1);
    uint32_t* seen = rtcd_alloc((size_t)nv * sizeof *seen + 1);
    uint32_t* order = NULL;
    rtcd_error err = RTCD_OK;
    if (!parent || !label || !newid || !seen) goto oom;
    if ((err = repair_edges_build(&e, s->tri, nt, nv)) != RTCD_OK) goto done;
    for (uint32_t t = 0; t < nt; ++t) parent[t] = t;
    for (uint32_t id = 0; id < e.count; ++id) {
        if (e.uses[id] != 2) continue;
        uint32_t a = uf_find(parent, e.corners[2 * (size_t)id] / 3);
        uint32_t b = uf_find(parent, e.corners[2 * (size_t)id + 1] / 3);
        if (a != b) parent[a > b ? a : b] = a < b ? a : b; /* the lower root stays */
    }
    repair_edges_free(&e);
    uint32_t ncomp = 0, alive = 0;
    int split = (s->def.flags & RTCD_REPAIR_SPLIT) != 0;
    for (uint32_t t = 0; t < nt; ++t) label[t] = REPAIR_NONE;
    for (uint32_t t = 0; t < nt; ++t) {
        if (repair_removed(s, t)) continue;
        ++alive;
        uint32_t r = split ? uf_find(parent, t) : 0;
        if (label[r] == REPAIR_NONE) label[r] = ncomp++; /* roots are their lowest triangle: seen first */
        label[t] = label[r];
    }
    /* Triangles grouped by component (stable), in `order`. */
    s->comp_vstart = rtcd_calloc((size_t)ncomp + 1, sizeof *s->comp_vstart);
    order = rtcd_alloc((size_t)alive * sizeof *order + 1);
    s->tri2_cap = (size_t)alive + 16;
    s->tri2 = rtcd_alloc(3 * s->tri2_cap * sizeof *s->tri2);
    s->tsrc = rtcd_alloc(s->tri2_cap * sizeof *s->tsrc);
    s->tcomp = rtcd_alloc(s->tri2_cap * sizeof *s->tcomp);
    s->vsrc = rtcd_alloc(3 * (size_t)alive * sizeof *s->vsrc + 1);
    if (!s->comp_vstart || !order || !s->tri2 || !s->tsrc || !s->tcomp || !s->vsrc) goto oom;
    uint32_t* cursor = parent; /* union-find done: reuse as per-component cursors */
    memset(cursor, 0, ((size_t)ncomp + 1) * sizeof *cursor);
    for (uint32_t t = 0; t < nt; ++t)
        if (!repair_removed(s, t)) cursor[label[t] + 1]++;
    for (uint32_t c = 0; c < ncomp; ++c) cursor[c + 1] += cursor[c];
    for (uint32_t t = 0; t < nt; ++t)
        if (!repair_removed(s, t)) order[cursor[label[t]]++] = t;
    for (uint32_t v = 0; v < nv; ++v) seen[v] = REPAIR_NONE;
    uint32_t nv2 = 0;
    for (uint32_t i = 0; i < alive; ++i) {
        uint32_t t = order[i], c = label[t];
        if (i > 0 && c != label[order[i - 1]]) s->comp_vstart[c] = nv2; /* every component is non-empty */
        for (int j = 0; j < 3; ++j) {
            uint32_t v = s->tri[3 * (size_t)t + j];
            if (seen[v] != c) {
                seen[v] = c;
                newid[v] = nv2;
                s->vsrc[nv2++] = v;
            }
            s->tri2[3 * (size_t)i + j] = newid[v];
        }
        s->tsrc[i] = t;
        s->tcomp[i] = c;
    }
    s->comp_vstart[ncomp] = nv2;
    s->ncomp = ncomp;
    s->nv2 = nv2;
    s->nt2 = alive;
    if (split && ncomp > 1) s->report.split_components = ncomp - 1;
    goto done;
oom:
    err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to split %u triangles into components", nt);
done:
    repair_edges_free(&e);
    rtcd_free(parent);
    rtcd_free(label);
    rtcd_free(newid);
    rtcd_free(seen);
    rtcd_free(order);
    return err;
}

/* Whether the edge at corner k runs from its lower to its higher endpoint,
 * with the triangle's pending flip applied. */
static int corner_forward(const repair_state* s, uint32_t k)
{
    uint32_t a = s->tri2[k], b = s->tri2[next_corner(k)];
    return (a < b) ^ s->flip[k / 3];
}

/* Breadth-first over edges of exactly two triangles from `seed`: neighbours
 * take the winding that runs the shared edge the other way. queue receives
 * the piece; returns its size, *closed whether every edge has two triangles
 * and the winding came out consistent. */
static uint32_t orient_piece(repair_state* s, uint32_t seed, uint8_t* seen, uint32_t* queue, int* closed)
{
    const repair_edges* e = &s->edges;
    uint32_t head = 0, tail = 0;
    queue[tail++] = seed;
    seen[seed] = 1;
    *closed = 1;
    while (head < tail) {
        uint32_t t = queue[head++];
        for (uint32_t k = 3 * t; k < 3 * t + 3; ++k) {
            uint32_t id = e->corner_edge[k];
            uint32_t other = e->uses[id] != 2 ? k : e->corners[2 * (size_t)id] == k ? e->corners[2 * (size_t)id + 1]
                                                                                        : e->corners[2 * (size_t)id];
            if (other / 3 == t) { /* open, non-manifold, or the same triangle twice */
                *closed = 0;
                continue;
            }
            uint32_t u = other / 3;
            if (!seen[u]) {
                s->flip[u] = (uint8_t)(((s->tri2[other] < s->tri2[next_corner(other)]) ^ !corner_forward(s, k)));
                seen[u] = 1;
                queue[tail++] = u;
            } else if (corner_forward(s, other) == corner_forward(s, k)) {
                *closed = 0; /* non-orientable: no winding satisfies every edge */
            }
        }
    }
    return tail;
}

static double piece_volume(const repair_state* s, const uint32_t* piece, uint32_t n)
{
    const float* r = repair_pos2(s, s->tri2[3 * (size_t)piece[0]]);
    double volume = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t t = piece[i];
        double a[3][3];
        for (int c = 0; c < 3; ++c) {
            const float* p = repair_pos2(s, s->tri2[3 * (size_t)t + c]);
            for (int k = 0; k < 3; ++k) a[c][k] = (double)p[k] - r[k];
        }
        double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                     a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
        volume += s->flip[t] ? -det : det;
    }
    return volume;
}

rtcd_error repair_orient(repair_state* s)
{
    rtcd_error err = RTCD_OK;
    uint8_t* seen = NULL;
    uint32_t* queue = NULL;
    if (!s->edges_valid) {
        if ((err = repair_edges_build(&s->edges, s->tri2, s->nt2, s->nv2)) != RTCD_OK) return err;
        s->edges_valid = 1;
    }
    s->flip = rtcd_calloc((size_t)s->nt2 + 1, 1);
    s->comp_flags = rtcd_calloc((size_t)s->ncomp + 1, 1);
    if (!s->flip || !s->comp_flags) goto oom;
    const repair_edges* e = &s->edges;
    if (s->def.flags & RTCD_REPAIR_ORIENT) {
        seen = rtcd_calloc((size_t)s->nt2 + 1, 1);
        queue = rtcd_alloc((size_t)s->nt2 * sizeof *queue + 1);
        if (!seen || !queue) goto oom;
        for (uint32_t t = 0; t < s->nt2; ++t) {
            if (seen[t]) continue;
            int closed;
            uint32_t n = orient_piece(s, t, seen, queue, &closed), flipped = 0;
            for (uint32_t i = 0; i < n; ++i) flipped += s->flip[queue[i]];
            /* Closed: outward. Open: no inside to point away from; keep the
             * winding most of the piece came with. */
            int reverse = closed ? piece_volume(s, queue, n) < 0.0 : 2 * flipped > n;
            if (reverse)
                for (uint32_t i = 0; i < n; ++i) s->flip[queue[i]] ^= 1;
        }
        for (uint32_t t = 0; t < s->nt2; ++t)
            if (s->flip[t] && s->tsrc[t] != REPAIR_NONE)
                repair_note(&s->report.flipped_triangles, &s->report.first_flipped_triangle, s->tsrc[t]);
    }
    for (uint32_t id = 0; id < e->count; ++id) {
        uint32_t k0 = e->corners[2 * (size_t)id];
        uint8_t* flags = &s->comp_flags[s->tcomp[k0 / 3]];
        if (e->uses[id] == 1) {
            *flags |= REPAIR_COMP_OPEN;
        } else if (e->uses[id] > 2) {
            *flags |= REPAIR_COMP_NONMANIFOLD;
            s->report.nonmanifold_edges++;
        } else {
            uint32_t k1 = e->corners[2 * (size_t)id + 1];
            if (k0 / 3 == k1 / 3 || corner_forward(s, k0) == corner_forward(s, k1))
                *flags |= REPAIR_COMP_INCONSISTENT;
        }
    }
    for (uint32_t c = 0; c < s->ncomp; ++c) s->report.open_components += (s->comp_flags[c] & REPAIR_COMP_OPEN) != 0;
    goto done;
oom:
    err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_repair: no memory to orient %u triangles", s->nt2);
done:
    rtcd_free(seen);
    rtcd_free(queue);
    return err;
}
