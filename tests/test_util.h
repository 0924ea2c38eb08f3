/* Helpers shared by the CMocka tests. */
#ifndef RTCD_TEST_UTIL_H
#define RTCD_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_iterative.h>
#include <rtcd/rtcd_batch.h>

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

/* Allocation-failure sweeps: test_failing_allocator_install() makes it
 * rtcd's allocator (rtcd_set_allocator(NULL, NULL, NULL) restores the
 * default); test_fail_after(n) lets the next n allocations through and
 * fails every later one (n < 0: none fails), and restarts the counts:
 * test_failed_allocations() (refused since), test_live_allocations()
 * (made less freed since: 0 when nothing made since leaked). */
void test_failing_allocator_install(void);
void test_fail_after(long n);
long test_failed_allocations(void);
long test_live_allocations(void);

/* rtcd_collide_iterative with def's algorithm replaced by idef (the tests
 * vary the algorithm and keep the rest). */
rtcd_error test_collide_iterative(const rtcd_narrowphase_def* def, const rtcd_iterative_def* idef,
                                  rtcd_pair_state* state, const rtcd_mesh* a, const rtcd_transform* pose_a,
                                  const rtcd_mesh* b, const rtcd_transform* pose_b, rtcd_ray_hit* rays,
                                  uint32_t ray_capacity, uint32_t* ray_count, rtcd_narrowphase_stats* stats);

/* Is the OpenCL backend usable here (this build, this machine)? Probed
 * once, the reason printed when it is not. */
int test_opencl_available(void);

/* A batch of `def` (its backend) whose OpenCL kernel is `kernel` ("serial",
 * "group"; NULL: the backend's choice) through the backend's test hook
 * RTCD_CL_KERNEL, restored afterwards; fails the test when it cannot be
 * made or falls back to another backend. */
rtcd_batch* test_create_batch(const rtcd_narrowphase_def* def, const char* kernel);

/* Comparing a backend's results with a reference's (`where` names what is
 * compared in failure messages). test_by_ray: qsort order of rays by
 * direction, then vertex. test_same_rays: `count` rays bit for bit.
 * test_same_contacts: the count and every contact bit for bit.
 * test_same_result: every counter and contact; exact (the CPU reference on
 * both sides) also the work counts rays_cast and predictive_rays, device and
 * ray_length bit for bit, else
 * ray_length within 1e-4 (a kernel may sum it in another order);
 * TEST_SAME_BACKEND (one backend on both sides): rays_cast and device bit
 * for bit, ray_length within 1e-4 (a GPU's work-group kernel sums it in the
 * order its kept rays landed, which differs from one batch to another). */
#define TEST_SAME_BACKEND 2
int test_by_ray(const void* a, const void* b);
void test_same_rays(const char* where, const rtcd_ray_hit* want, const rtcd_ray_hit* got, uint32_t count);
void test_same_contacts(const char* where, const rtcd_contact* want, uint32_t want_count, const rtcd_pair_result* got);
void test_same_result(const char* where, const rtcd_pair_result* want, const rtcd_pair_result* got, int exact);

/* t's rotation := exp(w) * rotation (Rodrigues): w is axis * angle. */
void test_rotate_by(rtcd_transform* t, const float w[3]);

#define assert_float_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (double)(tol))

#endif
