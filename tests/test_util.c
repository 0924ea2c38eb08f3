#include "test_util.h"

#include "scene_util.h"

#include <math.h>
#include <stdio.h>

uint64_t test_rng_next(test_rng* rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double test_rng_uniform(test_rng* rng) { return (double)(test_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0); }

double test_rng_range(test_rng* rng, double lo, double hi) { return lo + (hi - lo) * test_rng_uniform(rng); }

void test_rng_unit_vector(test_rng* rng, float out[3])
{
    double z = test_rng_range(rng, -1.0, 1.0), phi = test_rng_range(rng, 0.0, 2.0 * M_PI);
    double r = sqrt(1.0 - z * z);
    out[0] = (float)(r * cos(phi));
    out[1] = (float)(r * sin(phi));
    out[2] = (float)z;
}

rtcd_transform test_random_pose(test_rng* rng, float max_translation)
{
    /* The scenes' rotation (same generator, same draws), then the translation. */
    rtcd_transform pose = scene_random_pose(&rng->state, 0.0f, 0.0f, 0.0f);
    for (int i = 0; i < 3; ++i) pose.translation[i] = (float)test_rng_range(rng, -max_translation, max_translation);
    return pose;
}

rtcd_mesh* test_mesh_from_generated(rtcd_generated_mesh* g, const char* name)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = g->vertices;
    def.vertex_count = g->vertex_count;
    def.indices = g->indices;
    def.triangle_count = g->triangle_count;
    def.name = name;
    rtcd_mesh* mesh = NULL;
    rtcd_error err = rtcd_mesh_create(&def, &mesh);
    if (err != RTCD_OK) fprintf(stderr, "%s: %s: %s\n", name, rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    rtcd_generated_free(g);
    return mesh;
}

rtcd_mesh* test_make_blob(uint32_t vertex_count, float radius, uint64_t seed)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(vertex_count, radius, seed, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "blob");
}

rtcd_mesh* test_make_uv_sphere(uint32_t rings, uint32_t segments, float radius)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_uv_sphere(rings, segments, radius, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "uv_sphere");
}

rtcd_mesh* test_make_box(float hx, float hy, float hz, uint32_t subdivisions)
{
    rtcd_generated_mesh g;
    float h[3] = {hx, hy, hz};
    assert_int_equal(rtcd_generate_box(h, subdivisions, &g), RTCD_OK);
    return test_mesh_from_generated(&g, "box");
}
