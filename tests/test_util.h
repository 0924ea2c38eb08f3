/* Helpers shared by the CMocka tests. */
#ifndef RTCD_TEST_UTIL_H
#define RTCD_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <rtcd/rtcd.h>

/* splitmix64-based deterministic generator. */
typedef struct test_rng {
    uint64_t state;
} test_rng;

uint64_t test_rng_next(test_rng* rng);
double test_rng_uniform(test_rng* rng);                    /* [0, 1) */
double test_rng_range(test_rng* rng, double lo, double hi);
void test_rng_unit_vector(test_rng* rng, float out[3]);
rtcd_transform test_random_pose(test_rng* rng, float max_translation);

/* Creates a mesh from generated arrays and frees the arrays; fails the test on error. */
rtcd_mesh* test_mesh_from_generated(rtcd_generated_mesh* g, const char* name);
rtcd_mesh* test_make_blob(uint32_t vertex_count, float radius, uint64_t seed);
rtcd_mesh* test_make_uv_sphere(uint32_t rings, uint32_t segments, float radius);
rtcd_mesh* test_make_box(float hx, float hy, float hz, uint32_t subdivisions);

#define assert_float_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (double)(tol))

#endif
