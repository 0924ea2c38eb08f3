#include "deviation.h"

#include "scene_util.h"

#include <math.h>
#include <stdlib.h>

scene_deviation_def scene_default_deviation_def(void)
{
    scene_deviation_def def = {400, 20, 0.25f, 1};
    return def;
}

rtcd_mesh* scene_deviation_mesh(int which, const char** name)
{
    rtcd_generated_mesh g;
    rtcd_error err;
    const char* label;
    if (which == 0) {
        err = rtcd_generate_uv_sphere(4, 17, 0.5f, &g);
        label = "sphere70";
    } else if (which == 1) {
        err = rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1, &g);
        label = "avalanche_blob";
    } else {
        err = rtcd_generate_blob(rtcd_spawner_mesh_vertices(3), 0.5f, 4, &g);
        label = "spawner_mesh3";
    }
    if (name) *name = label;
    if (err != RTCD_OK) return NULL;
    rtcd_mesh* mesh = NULL;
    scene_mesh_from_generated(&g, label, &mesh);
    return mesh;
}

rtcd_error scene_run_deviation(const rtcd_mesh* object, const scene_deviation_def* def, scene_deviation_result* out)
{
    /* The plane: top face (z = 0) of a box far larger than the object, with
     * corners only, so none of its vertices reaches the object. */
    rtcd_generated_mesh g;
    float half[3] = {50.0f, 50.0f, 25.0f};
    rtcd_error err = rtcd_generate_box(half, 1, &g);
    if (err != RTCD_OK) return err;
    rtcd_mesh* ground = NULL;
    if ((err = scene_mesh_from_generated(&g, "ground", &ground)) != RTCD_OK) return err;

    uint32_t cap = rtcd_mesh_vertex_count(object) + rtcd_mesh_vertex_count(ground);
    rtcd_ray_hit* rays = malloc(cap * sizeof *rays);
    if (!rays) {
        rtcd_mesh_release(ground);
        return RTCD_ERROR_OUT_OF_MEMORY;
    }
    rtcd_transform ground_pose = rtcd_transform_identity();
    ground_pose.translation[2] = -half[2];
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    double sum[3] = {0, 0, 0};
    uint32_t configs = 0;
    uint64_t total_rays = 0;
    uint64_t rng = def->seed;
    const float* v = rtcd_mesh_vertices(object);
    uint32_t nv = rtcd_mesh_vertex_count(object);
    for (uint32_t o = 0; o < def->orientations && err == RTCD_OK; ++o) {
        rtcd_transform pose = scene_random_pose(&rng, 0, 0, 0);
        float zmin = INFINITY, zmax = -INFINITY;
        for (uint32_t i = 0; i < nv; ++i) {
            const float* p = v + 3 * i;
            float z = pose.rotation[6] * p[0] + pose.rotation[7] * p[1] + pose.rotation[8] * p[2];
            zmin = fminf(zmin, z);
            zmax = fmaxf(zmax, z);
        }
        for (uint32_t d = 0; d < def->depths; ++d) {
            float depth = def->max_depth_fraction * (zmax - zmin) * (float)(d + 1) / (float)def->depths;
            pose.translation[2] = -depth - zmin; /* lowest vertex `depth` below the plane */
            uint32_t n = 0;
            err = rtcd_collide_standard(&nd, object, &pose, ground, &ground_pose, rays, cap, &n, NULL);
            if (err != RTCD_OK) break;
            if (n == 0) continue;
            ++configs;
            total_rays += n;
            for (int mode = 0; mode < 3; ++mode) {
                double f[3] = {0, 0, 0};
                for (uint32_t i = 0; i < n; ++i) {
                    rtcd_contact c = rtcd_contact_from_ray(&rays[i], (rtcd_contact_normal)mode);
                    for (int k = 0; k < 3; ++k) f[k] += (double)c.normal_on_b[k] * c.depth;
                }
                sum[mode] += fabs(f[2]) > 0 ? sqrt(f[0] * f[0] + f[1] * f[1]) / fabs(f[2]) : 0.0;
            }
        }
    }
    free(rays);
    rtcd_mesh_release(ground);
    if (err != RTCD_OK) return err;
    for (int mode = 0; mode < 3; ++mode) out->deviation_pct[mode] = configs ? 100.0 * sum[mode] / configs : 0.0;
    out->configurations = configs;
    out->colliding_rays = total_rays;
    return RTCD_OK;
}
