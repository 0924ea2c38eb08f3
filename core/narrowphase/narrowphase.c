/* The standard ray-traced narrow phase (Hermann et al. 2008), both directions.
 * A vertex of the casting mesh that lies inside the other mesh's box casts a
 * ray along its inward normal; the ray collides when its first hit on the
 * other mesh exits that mesh and the casting mesh's own surface is not hit
 * before it (which would put the hit point outside the casting mesh). */
#include "pair_internal.h"

#include "shared/candidates4.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define RTCD_CULL_MIN_CANDIDATES 128 /* see rtcd_collide_standard */

void rtcd_pair_second_phase(const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_mesh* b,
                            int* edge_crossings, int* deep_contacts)
{
    int closed = !a->open_surface && !b->open_surface;
    *edge_crossings = closed && def->edge_crossings != 0;
    *deep_contacts = closed && def->deep_contacts != 0;
}

void rtcd_pair_ctx_init(rtcd_pair_ctx* c, const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_xform* pa,
                        const rtcd_mesh* b, const rtcd_xform* pb, rtcd_algorithm algorithm,
                        const rtcd_iterative_params* params, const rtcd_xform* before, uint32_t deformed,
                        float speculative)
{
    c->a = rtcd_mesh_view_of(a, def->traversal);
    c->b = rtcd_mesh_view_of(b, def->traversal);
    pair_ctx_init(c, pa, pb, (rtcd_u32)algorithm, def->traversal == RTCD_TRAVERSAL_BRUTE_FORCE,
                  params ? params->distance_extension : 0.0f, params ? params->culling_distance : 0.0f,
                  params ? params->max_iterations : 0u, before, deformed, speculative);
    int edges, deep;
    rtcd_pair_second_phase(def, a, b, &edges, &deep);
    c->edge_crossings = (rtcd_u32)edges;
    c->deep_contacts = (rtcd_u32)deep;
    c->margin = c->speculative > 0.0f ? def->speculative_margin : 0.0f;
}

_Static_assert(sizeof(rtcd_vertex_cluster) % sizeof(float) == 0 && offsetof(rtcd_vertex_cluster, radius) == 3 * sizeof(float),
               "rtcd_mesh_view_of: a cluster reads as a ball (centre, radius)");

/* The CPU's share of a standard pass: which vertices to try. The per-vertex
 * work itself is shared/pair.h's, as in the kernels. */
typedef struct pass_sink {
    rtcd_ray_rec* recs; /* room for one per vertex of both meshes */
    uint32_t count;     /* records: colliding rays and speculative contacts */
    uint32_t hits;      /* colliding rays */
    uint32_t crossings; /* second-phase records (crossing.h) */
    uint32_t predictions; /* predictive rays found (kept or not) */
    rtcd_pass_counts counts;
    rtcd_keep* keep;    /* NULL: the plain standard algorithm */
} pass_sink;

static void keep_entry(rtcd_keep* keep, uint32_t feature, uint32_t tri)
{
    if (keep->count >= keep->capacity) {
        keep->overflow = 1;
        return;
    }
    keep->entries[2 * keep->count] = feature;
    keep->entries[2 * keep->count + 1] = tri;
    keep->count++;
}

/* Marks the candidates of `caster` (pair_is_candidate) in `bits` (one bit
 * per vertex, zeroed by the caller), skipping whole vertex clusters that
 * pair_ball_may_hold turns down; returns how many. */
static uint32_t mark_candidates(const rtcd_pair_ctx* c, uint32_t direction, const rtcd_mesh* caster, uint64_t* bits)
{
    const rtcd_xform* to_target = direction ? &c->b_in_a : &c->a_in_b;
    const rtcd_mesh_view* tv = direction ? &c->a : &c->b;
    uint32_t n = 0;
    for (uint32_t k = 0; k < caster->cluster_count; ++k) {
        const rtcd_vertex_cluster* cl = &caster->clusters[k];
        if (!pair_ball_may_hold(c, direction, v3_load(cl->centre), cl->radius)) continue;
        /* Four at a time (shared/candidates4.h): pair_is_candidate's answers. */
        const uint32_t* ids = caster->cluster_vertices + cl->first;
        for (uint32_t j = 0; j < cl->count; j += 4) {
            uint32_t group = cl->count - j < 4 ? cl->count - j : 4;
            uint32_t found = pair_candidates_of4(c, tv, to_target, caster->vertices, ids + j, group);
            for (; found; found &= found - 1) {
                uint32_t i = ids[j + (uint32_t)__builtin_ctz(found)];
                bits[i >> 6] |= 1ull << (i & 63);
                n++;
            }
        }
    }
    return n;
}

/* Vertex items of one direction: those marked in `bits`, in vertex order,
 * or every vertex when bits is NULL. Colliding rays go to the sink; with a
 * keep (the iterative algorithms' standard pass) colliding and predictive
 * rays are kept, in the same order. */
static void cast_direction(const rtcd_pair_ctx* c, uint32_t direction, uint32_t vertex_count, const uint64_t* bits,
                           pass_sink* sink)
{
    for (uint32_t i = 0; i < vertex_count; ++i) {
        if (bits) {
            uint64_t word = bits[i >> 6] >> (i & 63);
            if (!word) {
                i |= 63; /* nothing more in this word */
                continue;
            }
            if (!(word & 1)) {
                i += (uint32_t)__builtin_ctzll(word) - 1; /* the loop's ++i lands on the next candidate */
                continue;
            }
        }
        rtcd_ray_rec rec;
        int what = pair_sweep_vertex(c, direction, i, &sink->counts, &rec);
        if (what == RTCD_WALK_LOST) continue;
        if (sink->keep) keep_entry(sink->keep, rec.feature, rec.tri);
        if (what == RTCD_WALK_HIT) {
            sink->recs[sink->count++] = rec;
            sink->hits++;
            continue;
        }
        sink->predictions++;
        if (pair_speculative(c, &rec, &sink->counts)) {
            sink->recs[sink->count++] = rec;
        }
    }
}

/* No triangle pair crosses and neither mesh holds the other: no vertex of
 * either lies inside the other, so no ray can collide. */
int rtcd_meshes_provably_apart(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* a_in_b,
                               const rtcd_xform* b_in_a)
{
    if (rtcd_surfaces_intersect(a, b, b_in_a)) return 0;
    rtcd_v3 pa0 = xf_point(a_in_b, mesh_vertex(a, a->indices[0]));
    rtcd_v3 pb0 = xf_point(b_in_a, mesh_vertex(b, b->indices[0]));
    float qa[3] = {pa0.x, pa0.y, pa0.z}, qb[3] = {pb0.x, pb0.y, pb0.z};
    return !rtcd_mesh_contains_point(b, qa) && !rtcd_mesh_contains_point(a, qb);
}

static int provably_separated(const rtcd_pair_ctx* c, const rtcd_mesh* a, const rtcd_mesh* b)
{
    return rtcd_meshes_provably_apart(a, b, &c->a_in_b, &c->b_in_a);
}

rtcd_error rtcd_check_pair_args(const char* fn, const rtcd_mesh* a, const rtcd_transform* pose_a, const rtcd_mesh* b,
                                const rtcd_transform* pose_b, const rtcd_ray_hit* rays, uint32_t ray_capacity,
                                const uint32_t* ray_count)
{
    if (!a || !b || !pose_a || !pose_b || !ray_count || (!rays && ray_capacity))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    uint64_t needed = (uint64_t)a->vertex_count + b->vertex_count;
    if (ray_capacity < needed)
        return rtcd_fail(RTCD_ERROR_BUFFER_TOO_SMALL, "%s: ray buffer holds %u, pair %s/%s needs %llu (sum of vertex counts)",
                         fn, ray_capacity, a->name, b->name, (unsigned long long)needed);
    for (int i = 0; i < 12; ++i) {
        float va = i < 9 ? pose_a->rotation[i] : pose_a->translation[i - 9];
        float vb = i < 9 ? pose_b->rotation[i] : pose_b->translation[i - 9];
        if (!isfinite(va) || !isfinite(vb))
            return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: pose of %s is not finite", fn,
                             !isfinite(va) ? a->name : b->name);
    }
    return RTCD_OK;
}

void rtcd_standard_pass(const rtcd_narrowphase_def* def, const rtcd_pair_ctx* c, const rtcd_mesh* a,
                        const rtcd_mesh* b, rtcd_ray_rec* recs, uint32_t* count, rtcd_narrowphase_stats* stats,
                        rtcd_keep* keep)
{
    pass_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.recs = recs;
    sink.keep = keep;
    /* Candidates come from the occupancy grid, which already drops every
     * vertex certainly outside the other mesh (or, predictive, farther than
     * the extension from it). The exact separation test costs about as much
     * as a hundred rays on the avalanche blobs (measured: below that it
     * slowed the 512-blob avalanche from 26 to 46 ms per step), so it only
     * runs where many candidates remain, and never for the predictive pass,
     * whose candidates may lie outside. Neither changes the result. The
     * candidates are marked once, so the rays need no second sweep of every
     * vertex. */
    /* One bit per vertex: on the stack for the usual meshes, else allocated
     * (and without memory, every vertex is swept: same result, slower). */
    enum { STACK_WORDS = 128 };
    uint64_t stack_bits[2 * STACK_WORDS];
    uint32_t wa = (a->vertex_count + 63) / 64, wb = (b->vertex_count + 63) / 64;
    uint64_t* bits = wa + wb <= 2 * STACK_WORDS ? stack_bits : rtcd_alloc((size_t)(wa + wb) * sizeof *bits);
    uint32_t na = 0, nb = 0;
    int overlap = pair_boxes_overlap(c);
    if (overlap && bits) {
        memset(bits, 0, (size_t)(wa + wb) * sizeof *bits);
        na = mark_candidates(c, 0, a, bits);
        nb = mark_candidates(c, 1, b, bits + wa);
    } else if (overlap) {
        na = a->vertex_count;
        nb = b->vertex_count;
    }
    memset(stats, 0, sizeof *stats);
    stats->standard_pass = 1;
    int many = na + nb > RTCD_CULL_MIN_CANDIDATES;
    /* The separation test's answer, -1 while it has not run. */
    int separated = def->cull_separated && many && !c->predict_pass ? provably_separated(c, a, b) : -1;
    if (na + nb == 0 || separated == 1) {
        stats->culled = 1;
    } else {
        cast_direction(c, 0, a->vertex_count, bits, &sink);
        cast_direction(c, 1, b->vertex_count, bits ? bits + wa : NULL, &sink);
    }
    /* Nothing found (no colliding ray, no prediction): edges that cross the
     * other surface and vertices whose rays all crossed their own body. A
     * pair with predictions has vertices near the other surface that follow
     * it; the second phase is for the pairs the vertices miss. Without a
     * crossing of the surfaces or one mesh inside the other there are none
     * (the kernels run the items and find nothing). */
    int second = overlap && pair_crossing_items(c) > 0 && sink.count == 0 && sink.predictions == 0 &&
                 separated != 1 && (pair_may_cross(c, 0) || pair_may_cross(c, 1));
    if (second && (separated == 0 || !provably_separated(c, a, b))) {
        rtcd_u32 items = pair_crossing_items(c);
        for (rtcd_u32 k = 0; k < items; ++k) {
            rtcd_ray_rec rec;
            if (pair_crossing_item(c, k, &sink.counts, &rec) != RTCD_WALK_HIT) continue;
            sink.recs[sink.count++] = rec;
            sink.crossings++;
        }
    }
    if (bits != stack_bits) rtcd_free(bits);
    stats->candidate_vertices = sink.counts.candidates;
    stats->rays_cast = sink.counts.rays;
    stats->predictive_rays = sink.counts.predictive_rays;
    stats->colliding_rays = sink.hits;
    stats->crossing_contacts = sink.crossings;
    *count = sink.count;
}

uint32_t rtcd_recs_to_rays(const rtcd_pair_ctx* c, const rtcd_ray_rec* recs, uint32_t count, rtcd_ray_hit* rays)
{
    _Static_assert(sizeof(rtcd_world_ray) == sizeof(rtcd_ray_hit), "rtcd_ray_hit is rtcd_world_ray's layout");
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; ++i) {
        if (!rec_is_ray(recs[i])) continue;
        rtcd_world_ray w = pair_world_ray(c, recs[i]);
        memcpy(&rays[n++], &w, sizeof w);
    }
    return n;
}

rtcd_error rtcd_collide_standard(const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_transform* pose_a,
                                 const rtcd_mesh* b, const rtcd_transform* pose_b, rtcd_ray_hit* rays,
                                 uint32_t ray_capacity, uint32_t* ray_count, rtcd_narrowphase_stats* stats)
{
    if (ray_count) *ray_count = 0;
    if (stats) memset(stats, 0, sizeof *stats);
    if (!def) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_collide_standard: NULL argument");
    rtcd_error err = rtcd_narrowphase_def_validate(def); /* its enums pick the traversal */
    if (err != RTCD_OK) return err;
    err = rtcd_check_pair_args("rtcd_collide_standard", a, pose_a, b, pose_b, rays, ray_capacity, ray_count);
    if (err != RTCD_OK) return err;
    rtcd_ray_rec* recs = rtcd_alloc((size_t)rtcd_pair_record_room(a, b) * sizeof *recs);
    if (!recs) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_collide_standard: out of memory");
    rtcd_xform pa = rtcd_to_xform(pose_a), pb = rtcd_to_xform(pose_b);
    rtcd_pair_ctx ctx;
    rtcd_pair_ctx_init(&ctx, def, a, &pa, b, &pb, RTCD_ALGORITHM_STANDARD, NULL, NULL, 0u, 0.0f);
    rtcd_narrowphase_stats st;
    rtcd_standard_pass(def, &ctx, a, b, recs, ray_count, &st, NULL);
    *ray_count = rtcd_recs_to_rays(&ctx, recs, *ray_count, rays);
    rtcd_free(recs);
    if (stats) *stats = st;
    return RTCD_OK;
}
