/* First-hit queries on one mesh: the BVH walk and the brute-force reference. */
#include "mesh/mesh_layout.h"

#include <math.h>

int rtcd_mesh_first_hit(const rtcd_mesh* mesh, const rtcd_ray* ray, rtcd_traversal traversal, rtcd_hit* hit)
{
    if (!mesh || !ray || !hit) return 0;
    rtcd_v3 org = v3_load(ray->origin), dir = v3_load(ray->direction);
    rtcd_tri_hit h;
    if (traversal == RTCD_TRAVERSAL_BRUTE_FORCE) {
        h = brute_first_hit(mesh->vertices, mesh->indices, mesh->triangle_count, org, dir, ray->tmin, ray->tmax,
                            ray->skip_vertex);
    } else {
        rtcd_bvh_view view = rtcd_mesh_bvh_view(mesh);
        h = traversal == RTCD_TRAVERSAL_BVH_STACKLESS
                ? bvh_first_hit_stackless(&view, org, dir, ray->tmin, ray->tmax, ray->skip_vertex)
                : (mesh->bvh.nodes4 ? rtcd_bvh4_first_hit(&mesh->bvh, &view, org, dir, ray->tmin, ray->tmax, ray->skip_vertex)
                                    : bvh_first_hit(&view, org, dir, ray->tmin, ray->tmax, ray->skip_vertex));
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
