#include "scene_util.h"

#include <math.h>

uint64_t scene_rng_next(uint64_t* s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double scene_rng_uniform(uint64_t* s) { return (double)(scene_rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

rtcd_transform scene_random_pose(uint64_t* s, float x, float y, float z)
{
    double u1 = scene_rng_uniform(s), u2 = scene_rng_uniform(s), u3 = scene_rng_uniform(s);
    float q[4] = {(float)(sqrt(1 - u1) * sin(2 * M_PI * u2)), (float)(sqrt(1 - u1) * cos(2 * M_PI * u2)),
                  (float)(sqrt(u1) * sin(2 * M_PI * u3)), (float)(sqrt(u1) * cos(2 * M_PI * u3))};
    float t[3] = {x, y, z};
    return rtcd_transform_from_quat(q, t);
}

rtcd_error scene_mesh_from_generated(rtcd_generated_mesh* g, const char* name, rtcd_mesh** out)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = g->vertices;
    def.vertex_count = g->vertex_count;
    def.indices = g->indices;
    def.triangle_count = g->triangle_count;
    def.name = name;
    rtcd_error err = rtcd_mesh_create(&def, out);
    rtcd_generated_free(g);
    return err;
}

uint32_t scene_overlapping_pairs(const rtcd_mesh* mesh, const rtcd_transform* poses, uint32_t n, rtcd_pair_desc* out)
{
    float lo[3], hi[3], r = 0.0f;
    rtcd_mesh_bounds(mesh, lo, hi);
    for (int k = 0; k < 3; ++k) r = fmaxf(r, fmaxf(fabsf(lo[k]), fabsf(hi[k])));
    r *= sqrtf(3.0f); /* a sphere around the box corner farthest from the origin */
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = i + 1; j < n; ++j) {
            float d2 = 0.0f;
            for (int k = 0; k < 3; ++k) {
                float d = poses[i].translation[k] - poses[j].translation[k];
                d2 += d * d;
            }
            if (d2 > 4.0f * r * r) continue;
            out[count].a = mesh;
            out[count].b = mesh;
            out[count].pose_a = poses[i];
            out[count].pose_b = poses[j];
            out[count].key = ((uint64_t)i << 32) | j;
            count++;
        }
    return count;
}

void scene_pulse_twist(const float* rest, uint32_t n, double scale, double twist_per_metre, float* out)
{
    for (uint32_t i = 0; i < n; ++i) {
        double x = rest[3 * i], y = rest[3 * i + 1], z = rest[3 * i + 2];
        double a = twist_per_metre * z, c = cos(a), s = sin(a);
        out[3 * i] = (float)(scale * (c * x - s * y));
        out[3 * i + 1] = (float)(scale * (s * x + c * y));
        out[3 * i + 2] = (float)(scale * z);
    }
}
