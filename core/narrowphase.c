/* The standard ray-traced narrow phase (Hermann et al. 2008), both directions.
 * A vertex of the casting mesh that lies inside the other mesh's box casts a
 * ray along its inward normal; the ray collides when its first hit on the
 * other mesh exits that mesh and the casting mesh's own surface is not hit
 * before it (which would put the hit point outside the casting mesh). */
#include "core_internal.h"

#include <math.h>
#include <string.h>

#define RTCD_CULL_MIN_CANDIDATES 128 /* see rtcd_collide_standard */

rtcd_narrowphase_def rtcd_default_narrowphase_def(void)
{
    rtcd_narrowphase_def def;
    memset(&def, 0, sizeof def);
    def.traversal = RTCD_TRAVERSAL_BVH;
    def.contact_normal = RTCD_CONTACT_REPROJECTED;
    def.cull_separated = 1;
    return def;
}

static rtcd_tri_hit first_hit(const rtcd_mesh* m, rtcd_traversal traversal, rtcd_v3 org, rtcd_v3 dir, float tmax,
                              uint32_t skip_vertex)
{
    rtcd_ray ray = {{org.x, org.y, org.z}, {dir.x, dir.y, dir.z}, 0.0f, tmax, skip_vertex};
    rtcd_hit h;
    rtcd_tri_hit out = {RTCD_INVALID, tmax, 0.0f, 0.0f};
    if (rtcd_mesh_first_hit(m, &ray, traversal, &h)) {
        out.tri = h.triangle;
        out.t = h.t;
        out.u = h.u;
        out.v = h.v;
    }
    return out;
}

/* Is the casting mesh's own surface hit strictly before t_other? */
static int self_hit_before(const rtcd_mesh* m, rtcd_traversal traversal, rtcd_v3 org, rtcd_v3 dir, float t_other,
                           uint32_t vertex)
{
    if (traversal == RTCD_TRAVERSAL_BRUTE_FORCE) {
        rtcd_tri_hit h = first_hit(m, traversal, org, dir, t_other, vertex);
        return h.tri != RTCD_INVALID && h.t < t_other;
    }
    rtcd_bvh_view view = rtcd_mesh_bvh_view(m);
    return bvh_any_hit(&view, org, dir, 0.0f, t_other, vertex);
}

typedef struct ray_sink {
    rtcd_ray_hit* rays;
    uint32_t capacity, count;
    rtcd_narrowphase_stats stats;
    rtcd_keep* keep; /* NULL: the plain standard algorithm */
} ray_sink;

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

void rtcd_emit_ray(rtcd_ray_hit* r, uint32_t direction, uint32_t vertex, const rtcd_mesh* caster,
                   const rtcd_xform* caster_pose, const rtcd_mesh* target, const rtcd_xform* target_pose, rtcd_v3 p,
                   rtcd_v3 dir, uint32_t tri, float t)
{
    rtcd_v3 origin = xf_point(caster_pose, mesh_vertex(caster, vertex));
    rtcd_v3 wdir = xf_rotate(caster_pose, v3_neg(v3_load(caster->vertex_normals + 3 * vertex)));
    rtcd_v3 point = xf_point(target_pose, v3_add(p, v3_scale(dir, t)));
    rtcd_v3 wn = xf_rotate(target_pose, v3_load(target->triangle_normals + 3 * tri));
    r->direction = direction;
    r->vertex = vertex;
    r->triangle = tri;
    r->origin[0] = origin.x, r->origin[1] = origin.y, r->origin[2] = origin.z;
    r->ray_dir[0] = wdir.x, r->ray_dir[1] = wdir.y, r->ray_dir[2] = wdir.z;
    r->point[0] = point.x, r->point[1] = point.y, r->point[2] = point.z;
    r->normal[0] = wn.x, r->normal[1] = wn.y, r->normal[2] = wn.z;
    r->length = t;
}

/* The meshes' local boxes as oriented boxes: disjoint ones cannot touch. */
static int boxes_overlap(const rtcd_mesh* a, const rtcd_mesh* b, const rtcd_xform* b_in_a, float extension)
{
    rtcd_v3 ca = v3_scale(v3_add(v3_load(a->lo), v3_load(a->hi)), 0.5f), ha = v3_sub(v3_load(a->hi), ca);
    rtcd_v3 cb = v3_scale(v3_add(v3_load(b->lo), v3_load(b->hi)), 0.5f), hb = v3_sub(v3_load(b->hi), cb);
    float pad = 1e-5f * (v3_length(ha) + v3_length(hb)) + extension;
    return obb_overlap(ca, ha, cb, hb, b_in_a, pad);
}

/* Vertices of `caster` in a solid cell of `target`: the only ones that can
 * collide (a vertex outside the target's closed surface never does). Stops
 * once `list` is full; returns how many it found (capacity + 1 when it stopped). */
/* A candidate: may be inside the target, or (predictive) near it. */
static int is_candidate(const rtcd_mesh* target, rtcd_v3 p, const rtcd_keep* keep)
{
    if (rtcd_mesh_may_contain(target, p)) return 1;
    return keep && keep->predictive && rtcd_mesh_may_be_near(target, p, keep->extension);
}

/* Marks the candidates of `caster` in `bits` (one bit per vertex, zeroed
 * by the caller), skipping whole vertex clusters far from the target's
 * box; returns how many. */
static uint32_t mark_candidates(const rtcd_mesh* caster, const rtcd_xform* caster_pose, const rtcd_mesh* target,
                                const rtcd_xform* target_pose, const rtcd_keep* keep, uint64_t* bits)
{
    rtcd_xform to_target = xf_relative(target_pose, caster_pose);
    float reach = keep && keep->predictive ? keep->extension : 0.0f;
    uint32_t n = 0;
    for (uint32_t c = 0; c < caster->cluster_count; ++c) {
        const rtcd_vertex_cluster* cl = &caster->clusters[c];
        if (!rtcd_ball_near_grid(target, xf_point(&to_target, v3_load(cl->centre)), cl->radius, reach)) continue;
        for (uint32_t j = cl->first; j < cl->first + cl->count; ++j) {
            uint32_t i = caster->cluster_vertices[j];
            if (!is_candidate(target, xf_point(&to_target, mesh_vertex(caster, i)), keep)) continue;
            bits[i >> 6] |= 1ull << (i & 63);
            n++;
        }
    }
    return n;
}

/* The standard ray of one vertex (p, dir in the target's frame): 1 when it
 * collides, with its hit. */
static int cast_normal(const rtcd_narrowphase_def* def, const rtcd_mesh* caster, const rtcd_mesh* target, uint32_t i,
                       rtcd_v3 p, rtcd_v3 dir, rtcd_v3 dir_local, ray_sink* sink, rtcd_tri_hit* out)
{
    sink->stats.rays_cast++;
    rtcd_tri_hit hit = first_hit(target, def->traversal, p, dir, RTCD_FLT_MAX, RTCD_INVALID);
    if (hit.tri == RTCD_INVALID) return 0;
    rtcd_v3 hit_normal = v3_load(target->triangle_normals + 3 * hit.tri);
    if (!(v3_dot(dir, hit_normal) > 0.0f)) return 0; /* enters the target: vertex is outside */
    sink->stats.rays_cast++;
    if (self_hit_before(caster, def->traversal, mesh_vertex(caster, i), dir_local, hit.t, i)) return 0;
    *out = hit;
    return 1;
}

/* Rays from `caster`'s vertices into `target` (poses are world transforms):
 * the vertices marked in `bits`, in vertex order, or every vertex when bits
 * is NULL. With a keep (the iterative algorithms' standard pass) colliding
 * rays are kept, and for the predictive one a vertex that does not collide
 * casts the opposite ray up to the culling distance and keeps the triangle
 * it enters. */
static void cast_direction(const rtcd_narrowphase_def* def, uint32_t direction, const rtcd_mesh* caster,
                           const rtcd_xform* caster_pose, const rtcd_mesh* target, const rtcd_xform* target_pose,
                           const uint64_t* bits, ray_sink* sink)
{
    rtcd_xform to_target = xf_relative(target_pose, caster_pose);
    rtcd_keep* keep = sink->keep;
    /* The caster's frame in the target's one call earlier, for the motion rays. */
    rtcd_xform before;
    if (keep && keep->before) before = direction ? *keep->before : xf_inverse(keep->before);
    for (uint32_t i = 0; i < caster->vertex_count; ++i) {
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
        rtcd_v3 n = v3_load(caster->vertex_normals + 3 * i);
        if (n.x == 0.0f && n.y == 0.0f && n.z == 0.0f) continue; /* unreferenced vertex */
        rtcd_v3 p = xf_point(&to_target, mesh_vertex(caster, i));
        int inside = rtcd_mesh_may_contain(target, p);
        /* A marked vertex passed is_candidate on this same point already. */
        if (!bits && !inside && !is_candidate(target, p, keep)) continue;
        sink->stats.candidate_vertices++;
        rtcd_v3 dir_local = v3_neg(n);
        rtcd_v3 dir = xf_rotate(&to_target, dir_local);
        uint32_t feature = direction << 31 | i;
        rtcd_tri_hit hit;
        if (inside && cast_normal(def, caster, target, i, p, dir, dir_local, sink, &hit)) {
            sink->stats.colliding_rays++;
            if (keep) keep_entry(keep, feature, hit.tri);
            if (sink->count >= sink->capacity) continue; /* caller sized it; counted for the error */
            rtcd_emit_ray(&sink->rays[sink->count++], direction, i, caster, caster_pose, target, target_pose, p, dir,
                          hit.tri, hit.t);
            continue;
        }
        if (!keep || !keep->predictive) continue;
        sink->stats.predictive_rays++;
        rtcd_v3 back = v3_neg(dir);
        rtcd_tri_hit ph = first_hit(target, def->traversal, p, back, RTCD_PREDICT_REACH * keep->culling, RTCD_INVALID);
        if (ph.tri != RTCD_INVALID) {
            float cosn = v3_dot(back, v3_load(target->triangle_normals + 3 * ph.tri));
            /* it must enter the target, and the vertex be within the culling distance */
            if (cosn < 0.0f && prediction_within(ph.t, -cosn, keep->culling)) {
                keep_entry(keep, feature, ph.tri | RTCD_ENTRY_PREDICTION);
                continue;
            }
        }
        if (!keep->before) continue;
        rtcd_v3 motion = v3_sub(p, xf_point(&before, mesh_vertex(caster, i)));
        float travel = v3_length(motion);
        if (!(travel > 0.0f)) continue;
        sink->stats.predictive_rays++;
        rtcd_v3 md = v3_scale(motion, 1.0f / travel);
        rtcd_tri_hit mh = first_hit(target, def->traversal, p, md, keep->culling, RTCD_INVALID);
        if (mh.tri != RTCD_INVALID && v3_dot(md, v3_load(target->triangle_normals + 3 * mh.tri)) < 0.0f)
            keep_entry(keep, feature, mh.tri | RTCD_ENTRY_PREDICTION);
    }
}

/* No triangle pair crosses and neither mesh holds the other: no vertex of
 * either lies inside the other, so no ray can collide. */
static int provably_separated(const rtcd_mesh* a, const rtcd_xform* pa, const rtcd_mesh* b, const rtcd_xform* pb)
{
    rtcd_xform b_in_a = xf_relative(pa, pb);
    if (rtcd_surfaces_intersect(a, b, &b_in_a)) return 0;
    rtcd_xform a_in_b = xf_relative(pb, pa);
    rtcd_v3 pa0 = xf_point(&a_in_b, mesh_vertex(a, a->indices[0]));
    rtcd_v3 pb0 = xf_point(&b_in_a, mesh_vertex(b, b->indices[0]));
    float qa[3] = {pa0.x, pa0.y, pa0.z}, qb[3] = {pb0.x, pb0.y, pb0.z};
    return !rtcd_mesh_contains_point(b, qa) && !rtcd_mesh_contains_point(a, qb);
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

void rtcd_standard_pass(const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_xform* pa, const rtcd_mesh* b,
                        const rtcd_xform* pb, rtcd_ray_hit* rays, uint32_t ray_capacity, uint32_t* ray_count,
                        rtcd_narrowphase_stats* stats, rtcd_keep* keep)
{
    ray_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.rays = rays;
    sink.capacity = ray_capacity;
    sink.keep = keep;
    sink.stats.standard_pass = 1;
    int predictive = keep && keep->predictive;
    /* Candidates come from the occupancy grid, which already drops every
     * vertex certainly outside the other mesh (or, predictive, farther than
     * the extension from it). The exact separation test costs about as much
     * as a hundred rays on the avalanche blobs (measured: below that it
     * slowed the 512-blob avalanche from 26 to 46 ms per step), so it only
     * runs where many candidates remain, and never for the predictive pass,
     * whose candidates may lie outside. Neither changes the result. The
     * candidates are marked once, so the rays need no second test of every
     * vertex. */
    rtcd_xform b_in_a = xf_relative(pa, pb);
    /* One bit per vertex: on the stack for the usual meshes, else allocated
     * (and without memory, every vertex is swept: same result, slower). */
    enum { STACK_WORDS = 128 };
    uint64_t stack_bits[2 * STACK_WORDS];
    uint32_t wa = (a->vertex_count + 63) / 64, wb = (b->vertex_count + 63) / 64;
    uint64_t* bits = wa + wb <= 2 * STACK_WORDS ? stack_bits : rtcd_alloc((size_t)(wa + wb) * sizeof *bits);
    uint32_t na = 0, nb = 0;
    int overlap = boxes_overlap(a, b, &b_in_a, predictive ? keep->extension : 0.0f);
    if (overlap && bits) {
        memset(bits, 0, (size_t)(wa + wb) * sizeof *bits);
        na = mark_candidates(a, pa, b, pb, keep, bits);
        nb = mark_candidates(b, pb, a, pa, keep, bits + wa);
    } else if (overlap) {
        na = a->vertex_count;
        nb = b->vertex_count;
    }
    int many = na + nb > RTCD_CULL_MIN_CANDIDATES;
    if (na + nb == 0 || (def->cull_separated && many && !predictive && provably_separated(a, pa, b, pb))) {
        sink.stats.culled = 1;
    } else {
        cast_direction(def, 0, a, pa, b, pb, bits, &sink);
        cast_direction(def, 1, b, pb, a, pa, bits ? bits + wa : NULL, &sink);
    }
    if (bits != stack_bits) rtcd_free(bits);
    *ray_count = sink.count;
    *stats = sink.stats;
}

rtcd_error rtcd_collide_standard(const rtcd_narrowphase_def* def, const rtcd_mesh* a, const rtcd_transform* pose_a,
                                 const rtcd_mesh* b, const rtcd_transform* pose_b, rtcd_ray_hit* rays,
                                 uint32_t ray_capacity, uint32_t* ray_count, rtcd_narrowphase_stats* stats)
{
    if (ray_count) *ray_count = 0;
    if (stats) memset(stats, 0, sizeof *stats);
    if (!def) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_collide_standard: NULL argument");
    rtcd_error err = rtcd_check_pair_args("rtcd_collide_standard", a, pose_a, b, pose_b, rays, ray_capacity, ray_count);
    if (err != RTCD_OK) return err;
    rtcd_xform pa = rtcd_to_xform(pose_a), pb = rtcd_to_xform(pose_b);
    rtcd_narrowphase_stats st;
    rtcd_standard_pass(def, a, &pa, b, &pb, rays, ray_capacity, ray_count, &st, NULL);
    if (stats) *stats = st;
    return RTCD_OK;
}
