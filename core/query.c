/* First-hit queries on one mesh: the BVH walk and the brute-force reference. */
#include "core_internal.h"

#include <math.h>

static rtcd_tri_hit brute_force_first_hit(const rtcd_mesh* m, rtcd_v3 org, rtcd_v3 dir, float tmin, float tmax,
                                          uint32_t skip_vertex)
{
    rtcd_tri_hit best = {RTCD_INVALID, tmax, 0.0f, 0.0f};
    for (uint32_t t = 0; t < m->triangle_count; ++t) {
        const uint32_t* tri = m->indices + 3 * t;
        float th, u, v;
        if (!ray_triangle(org, dir, mesh_vertex(m, tri[0]), mesh_vertex(m, tri[1]), mesh_vertex(m, tri[2]), tmin,
                          best.t, &th, &u, &v))
            continue;
        if (skip_vertex != RTCD_INVALID && tri_uses_vertex(m->indices, t, skip_vertex)) continue;
        if (hit_is_better(th, t, &best)) {
            best.tri = t;
            best.t = th;
            best.u = u;
            best.v = v;
        }
    }
    return best;
}

int rtcd_mesh_first_hit(const rtcd_mesh* mesh, const rtcd_ray* ray, rtcd_traversal traversal, rtcd_hit* hit)
{
    if (!mesh || !ray || !hit) return 0;
    rtcd_v3 org = v3_load(ray->origin), dir = v3_load(ray->direction);
    rtcd_tri_hit h;
    if (traversal == RTCD_TRAVERSAL_BRUTE_FORCE) {
        h = brute_force_first_hit(mesh, org, dir, ray->tmin, ray->tmax, ray->skip_vertex);
    } else {
        rtcd_bvh_view view = rtcd_mesh_bvh_view(mesh);
        h = traversal == RTCD_TRAVERSAL_BVH_STACKLESS
                ? bvh_first_hit_stackless(&view, org, dir, ray->tmin, ray->tmax, ray->skip_vertex)
                : bvh_first_hit(&view, org, dir, ray->tmin, ray->tmax, ray->skip_vertex);
    }
    hit->triangle = h.tri;
    hit->t = h.t;
    hit->u = h.u;
    hit->v = h.v;
    hit->exits = 0;
    if (h.tri == RTCD_INVALID) return 0;
    hit->exits = v3_dot(dir, v3_load(mesh->triangle_normals + 3 * h.tri)) > 0.0f;
    return 1;
}
