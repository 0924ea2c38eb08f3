/* The allocation-failure sweep (issue 12): a small create-step-destroy
 * scenario of the C world API run again and again with rtcd's allocator
 * failing its n-th allocation, for n = 0, 1, 2, ... until n passes the
 * scenario's last allocation; on the CPU reference and on the OpenCL
 * backend (PoCL here). Two ways to fail:
 *   - only the n-th allocation: later calls succeed, so the world must
 *     recover (the steps after a failed one return RTCD_OK again);
 *   - the n-th and every later one: nothing can be had any more, yet every
 *     call must still answer and the release must free everything.
 *
 * The scenario: two generated meshes (a blob, a slab; generator and
 * rtcd_mesh_create), a world (narrowphase backend CPU or OPENCL, one
 * thread), a plane, a mesh shape of the blob, a convex hull shape
 * (rtcd_shape_create_convex), a compound of the slab
 * (rtcd_shape_create_compound), the slab as a static mesh, five bodies
 * placed so that mesh-plane, mesh-mesh, mesh-convex, mesh-static surface
 * and compound-child pairs exist from the first step, three steps, one
 * rtcd_world_measure_penetration, then every release. On OpenCL the slab
 * and what uses it (compound, static mesh, the body on it) are left out
 * unless RTCD_SWEEP_FULL is set: every run builds the device's kernels
 * (PoCL: 35 ms, 60 ms under ASan) and the full sweep there takes ~25 s
 * alone; the pairs they add run through the same code on the CPU half.
 * Every allocation index of the scenario is swept on each backend.
 *
 * What is accepted of every call:
 *   - RTCD_OK when none of rtcd's allocations failed inside it;
 *   - RTCD_ERROR_OUT_OF_MEMORY when one did (a create leaves *out NULL);
 *     a step that returns it has out_of_memory >= 1 in its statistics, and
 *     when only the n-th allocation fails the next step returns RTCD_OK;
 *   - RTCD_OK although an allocation failed inside it only for the
 *     documented fallbacks to the CPU reference, each after its logged
 *     notice: rtcd_world_create asked for OPENCL that ends on the CPU
 *     reference ("no usable opencl backend, using the CPU reference";
 *     rtcd_world_def: "A backend that cannot be had ... gives the CPU
 *     reference and a one-line notice"), or a step whose OpenCL batch
 *     failed otherwise than for memory ("switching to the CPU reference
 *     backend"). Out of memory itself is no reason to fall back: the
 *     plugin reports it. None of these fallbacks happens in the sweep today
 *     (every OpenCL path reports OUT_OF_MEMORY); the count is printed.
 * Anything else fails the test: another error code, OUT_OF_MEMORY where no
 * allocation failed in the call, OK where one failed with no fallback to
 * show for it, a non-finite or flying pose. After the releases every
 * allocation made through the allocator has been freed (the test allocator
 * counts them), and the sanitizer build stays silent.
 *
 * Not covered: Bullet's own allocations (btAlignedAlloc) and C++ new in the
 * world and plugin code (bullet_plugin/) do not go through
 * rtcd_set_allocator; the sweep covers rtcd's allocator only (meshes,
 * repairs, batches, the CPU and OpenCL backends).
 *
 * To debug: RTCD_SWEEP_N=n runs that n alone (break on sweep_refused),
 * RTCD_SWEEP_TRACE=1 prints where the plain run's allocations happen. */
#include "test_util.h"
#include "scene_util.h"

#include <rtcd/rtcd_generate.h>
#include <rtcd/rtcd_world.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the failing, counting allocator ---- */

typedef enum fail_mode { FAIL_ONLY_NTH = 0, FAIL_FROM_NTH = 1 } fail_mode;

/* Atomic: the backends may allocate from worker threads (the scenario asks
 * for one thread, so the order, and n, stay deterministic). */
static atomic_long g_calls;   /* allocation calls since the scenario began */
static atomic_long g_live;    /* allocations not yet freed */
static atomic_long g_failed;  /* allocations refused */
static long g_fail_at = -1;   /* < 0: none fails */
static fail_mode g_mode;

/* Where a refusal happens: a breakpoint for a debugger (with
 * RTCD_SWEEP_N, below, to run one n). */
#if defined(__GNUC__)
#define SWEEP_NOINLINE __attribute__((noinline))
#else
#define SWEEP_NOINLINE
#endif
volatile long g_refused_index;
SWEEP_NOINLINE void sweep_refused(long index);
SWEEP_NOINLINE void sweep_refused(long index) { g_refused_index = index; }

static void* sweep_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    long index = atomic_fetch_add(&g_calls, 1);
    if (g_fail_at >= 0 && (index == g_fail_at || (g_mode == FAIL_FROM_NTH && index > g_fail_at))) {
        atomic_fetch_add(&g_failed, 1);
        sweep_refused(index);
        return NULL;
    }
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    atomic_fetch_add(&g_live, 1);
    return p;
}

static void sweep_free(void* p, void* user)
{
    (void)user;
    if (!p) return;
    atomic_fetch_sub(&g_live, 1);
    free(p);
}

/* The log: counted, not printed (thousands of runs), the fallback notices
 * noted (rtcd_world_create's, and the step's when a device fails). */
static int g_fallback_notices;
static int g_switch_notices;
static char g_last_warning[512];

static void sweep_log(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level == RTCD_LOG_INFO) return;
    if (strstr(message, "backend, using the CPU reference")) g_fallback_notices++;
    if (strstr(message, "switching to the CPU reference backend")) g_switch_notices++;
    snprintf(g_last_warning, sizeof g_last_warning, "%s", message);
}

/* ---- one run of the scenario ---- */

typedef struct sweep_run {
    rtcd_backend backend;
    int full;               /* with the static mesh and the compound */
    long n;                 /* the allocation that fails (< 0: none) */
    fail_mode mode;
    int fell_back;          /* the OpenCL world ended on the CPU reference */
    uint32_t steps_failed;  /* steps that returned RTCD_ERROR_OUT_OF_MEMORY */
    uint32_t pairs_owned;   /* the most pairs rtcd owned in a step */
    uint32_t bodies;
} sweep_run;

static const char* mode_name(fail_mode m) { return m == FAIL_ONLY_NTH ? "only" : "from"; }

/* Judges one call's answer (see the header); 1: it succeeded, go on with
 * what it made; 0: out of memory, skip what needs it. */
static int accept(sweep_run* r, const char* what, rtcd_error err, long failed_in_call)
{
    if (r->n < 0 && getenv("RTCD_SWEEP_TRACE")) /* where the plain run's allocations happen */
        print_message("  %s: %s, %ld allocations so far\n", rtcd_backend_name(r->backend), what, atomic_load(&g_calls));
    if (err == RTCD_OK && failed_in_call == 0) return 1;
    if (err == RTCD_ERROR_OUT_OF_MEMORY && failed_in_call > 0) return 0;
    if (err == RTCD_OK)
        fail_msg("%s backend, allocation %ld failed (%s on): %s returned RTCD_OK although %ld allocation(s) failed in it "
                 "(last warning: '%s')",
                 rtcd_backend_name(r->backend), r->n, mode_name(r->mode), what, failed_in_call, g_last_warning);
    else
        fail_msg("%s backend, allocation %ld failed (%s on): %s returned %s ('%s') with %ld allocation(s) failed in it",
                 rtcd_backend_name(r->backend), r->n, mode_name(r->mode), what, rtcd_error_name(err),
                 rtcd_last_error_message(), failed_in_call);
    return 0;
}

/* CALL(r, what, expr): expr judged by accept with the failures inside it
 * (the comma orders the mark before expr). */
static long g_mark;
static void mark(void) { g_mark = atomic_load(&g_failed); }
static long failed_since_mark(void) { return atomic_load(&g_failed) - g_mark; }
static int accept_marked(sweep_run* r, const char* what, rtcd_error err)
{
    return accept(r, what, err, failed_since_mark());
}
#define CALL(r, what, expr) (mark(), accept_marked((r), (what), (expr)))

/* A mesh from generated arrays (both go through the allocator); gen_err:
 * the generator's answer, called after mark(). */
static rtcd_mesh* make_mesh(sweep_run* r, rtcd_error gen_err, rtcd_generated_mesh* g, const float offset[3],
                            const char* name)
{
    if (!accept_marked(r, "rtcd_generate_*", gen_err)) {
        assert_null(g->vertices);
        assert_null(g->indices);
        return NULL;
    }
    for (uint32_t i = 0; offset && i < g->vertex_count; ++i)
        for (int k = 0; k < 3; ++k) g->vertices[3 * i + k] += offset[k];
    rtcd_mesh* mesh = (rtcd_mesh*)0x1;
    int ok = CALL(r, "rtcd_mesh_create", scene_mesh_from_generated(g, name, &mesh)); /* frees g */
    if (!ok) assert_null(mesh);
    return ok ? mesh : NULL;
}

static rtcd_mesh* make_blob(sweep_run* r, uint32_t vertices, float radius, uint64_t seed)
{
    rtcd_generated_mesh g;
    memset(&g, 0, sizeof g);
    mark();
    rtcd_error err = rtcd_generate_blob(vertices, radius, seed, &g);
    return make_mesh(r, err, &g, NULL, "blob");
}

static rtcd_mesh* make_box(sweep_run* r, float hx, float hy, float hz, const float offset[3])
{
    rtcd_generated_mesh g;
    memset(&g, 0, sizeof g);
    const float h[3] = {hx, hy, hz};
    mark();
    rtcd_error err = rtcd_generate_box(h, 1, &g);
    return make_mesh(r, err, &g, offset, "box");
}

/* A shape, NULL when it could not be made. */
static rtcd_shape* checked_shape(sweep_run* r, const char* what, rtcd_error err, long failed_in_call, rtcd_shape* s)
{
    int ok = accept(r, what, err, failed_in_call);
    if (!ok) assert_null(s);
    return ok ? s : NULL;
}

#define SHAPE(r, what, expr, out)                                                                                    \
    do {                                                                                                             \
        out = (rtcd_shape*)0x1; /* a failed create must set it to NULL */                                        \
        mark();                                                                                                      \
        rtcd_error err_ = (expr);                                                                                    \
        out = checked_shape((r), (what), err_, failed_since_mark(), out);                                            \
    } while (0)

static void add_body(sweep_run* r, rtcd_world* w, rtcd_shape* s, float x, float y, float z)
{
    if (!s) return;
    rtcd_transform pose = rtcd_transform_identity();
    pose.translation[0] = x;
    pose.translation[1] = y;
    pose.translation[2] = z;
    uint32_t index = UINT32_MAX;
    if (CALL(r, "rtcd_world_add_body", rtcd_world_add_body(w, s, 1.0f, &pose, &index))) {
        assert_int_equal(index, r->bodies);
        r->bodies++;
    }
}

enum { k_steps = 3 };

static void scenario(sweep_run* r)
{
    /* The meshes first: they need no world. Every mesh costs a fixed grid
     * of closest-point queries (the near grid) and its share of
     * allocations to sweep: two meshes, each used twice, cover every path. */
    rtcd_mesh* blob = make_blob(r, 24, 0.4f, 3);
    const float at_origin[3] = {0, 0, 0};
    rtcd_mesh* slab = r->full ? make_box(r, 0.6f, 0.6f, 0.1f, at_origin) : NULL;

    rtcd_world_def def = rtcd_default_world_def();
    def.narrowphase.backend = r->backend;
    def.narrowphase.threads = 1;
    rtcd_world* w = (rtcd_world*)0x1;
    int notices = g_fallback_notices;
    long before = atomic_load(&g_failed);
    rtcd_error err = rtcd_world_create(&def, &w);
    long failed = atomic_load(&g_failed) - before;
    if (err == RTCD_OK && r->backend == RTCD_BACKEND_OPENCL && rtcd_world_backend(w) != RTCD_BACKEND_OPENCL) {
        /* The documented fallback: the CPU reference, after its notice. */
        if (g_fallback_notices == notices)
            fail_msg("allocation %ld (%s on): the OpenCL world fell back to the CPU reference without a notice", r->n,
                     mode_name(r->mode));
        if (!failed) fail_msg("the OpenCL world fell back to the CPU reference with no allocation failed");
        r->fell_back = 1;
        failed = 0;
    }
    if (!accept(r, "rtcd_world_create", err, failed)) {
        assert_null(w);
        rtcd_mesh_release(slab);
        rtcd_mesh_release(blob);
        return;
    }
    const float up[3] = {0, 0, 1};
    CALL(r, "rtcd_world_add_plane", rtcd_world_add_plane(w, up, 0.0f));

    rtcd_shape *blob_shape = NULL, *hull = NULL, *compound = NULL;
    if (blob) SHAPE(r, "rtcd_shape_create", rtcd_shape_create(w, blob, &blob_shape), blob_shape);
    /* A hull without margin: few facets (a sphere's fine tessellations,
     * meshes of a thousand vertices, made each run several times dearer
     * for no allocation of their own). */
    static const float corners[8 * 3] = {-0.2f, -0.2f, -0.2f, 0.2f, -0.2f, -0.2f, -0.2f, 0.2f, -0.2f,
                                         0.2f,  0.2f,  -0.2f, -0.2f, -0.2f, 0.2f, 0.2f, -0.2f, 0.2f,
                                         -0.2f, 0.2f,  0.2f,  0.2f,  0.2f,  0.2f};
    rtcd_convex_def cdef = rtcd_default_convex_def();
    cdef.kind = RTCD_CONVEX_HULL;
    cdef.points = corners;
    cdef.point_count = 8;
    cdef.margin = 0.0f;
    SHAPE(r, "rtcd_shape_create_convex", rtcd_shape_create_convex(w, &cdef, &hull), hull);
    if (slab) {
        /* One piece: still a btCompoundShape whose child pairs rtcd takes. */
        SHAPE(r, "rtcd_shape_create_compound", rtcd_shape_create_compound(w, &slab, 1, &compound), compound);
        rtcd_transform pose = rtcd_transform_identity();
        pose.translation[0] = 2.5f;
        pose.translation[2] = 0.1f;
        CALL(r, "rtcd_world_add_static_mesh", rtcd_world_add_static_mesh(w, slab, &pose));
    }
    /* Bounding boxes overlapping from the start, so every kind of pair is
     * in the first step; the surfaces about touching, so the measure has
     * little to measure. */
    add_body(r, w, blob_shape, 0.0f, 0.0f, 0.4f);  /* on the plane */
    add_body(r, w, blob_shape, 0.0f, 0.0f, 1.2f);  /* onto the first */
    if (slab) add_body(r, w, blob_shape, 2.5f, 0.0f, 0.6f); /* onto the static slab */
    add_body(r, w, hull, 0.58f, 0.0f, 0.2f);       /* beside the first blob */
    add_body(r, w, compound, -0.95f, 0.0f, 0.1f);  /* a slab on the plane beside it */

    int step_failed_before = 0;
    for (int i = 0; i < k_steps; ++i) {
        before = atomic_load(&g_failed);
        err = rtcd_world_step(w);
        failed = atomic_load(&g_failed) - before;
        rtcd_step_stats st = rtcd_world_last_step_stats(w);
        if (err == RTCD_ERROR_OUT_OF_MEMORY) {
            r->steps_failed++;
            if (st.out_of_memory < 1) fail_msg("a step returned out of memory with no out_of_memory in its statistics");
        }
        if (st.pairs_owned > r->pairs_owned) r->pairs_owned = st.pairs_owned;
        /* Only the n-th failed: the step after a failed one is whole again. */
        if (r->mode == FAIL_ONLY_NTH && step_failed_before) assert_int_equal(err, RTCD_OK);
        if (r->backend == RTCD_BACKEND_OPENCL && !r->fell_back && rtcd_world_backend(w) != RTCD_BACKEND_OPENCL) {
            /* The documented fallback of a step: a batch that failed
             * otherwise than for memory moves the world to the CPU
             * reference, with its notice. */
            if (!g_switch_notices)
                fail_msg("allocation %ld (%s on): the OpenCL world moved to the CPU reference without a notice", r->n,
                         mode_name(r->mode));
            r->fell_back = 1;
            if (err == RTCD_OK) failed = 0;
        }
        accept(r, "rtcd_world_step", err, failed);
        step_failed_before = err != RTCD_OK;
    }
    rtcd_penetration pen;
    if (CALL(r, "rtcd_world_measure_penetration", rtcd_world_measure_penetration(w, &pen)))
        assert_true(isfinite(pen.max) && isfinite(pen.sum));
    for (uint32_t b = 0; b < r->bodies; ++b) {
        rtcd_transform p;
        assert_int_equal(rtcd_world_get_pose(w, b, &p), RTCD_OK);
        for (int k = 0; k < 3; ++k) assert_true(isfinite(p.translation[k]) && fabsf(p.translation[k]) < 10.0f);
    }

    rtcd_shape_release(compound);
    rtcd_shape_release(hull);
    rtcd_shape_release(blob_shape);
    rtcd_mesh_release(slab);
    rtcd_mesh_release(blob);
    rtcd_world_release(w);
}

/* Runs the scenario with allocation n failing; returns how many
 * allocations it asked for, *failed how many were refused. */
static long run_once(sweep_run* r, long* failed)
{
    atomic_store(&g_calls, 0);
    atomic_store(&g_live, 0);
    atomic_store(&g_failed, 0);
    g_fail_at = r->n;
    g_mode = r->mode;
    g_fallback_notices = g_switch_notices = 0;
    rtcd_set_allocator(sweep_alloc, sweep_free, NULL);
    rtcd_set_log(sweep_log, NULL);
    scenario(r);
    rtcd_set_allocator(NULL, NULL, NULL);
    rtcd_set_log(NULL, NULL);
    g_fail_at = -1;
    long live = atomic_load(&g_live);
    if (live != 0)
        fail_msg("%s backend, allocation %ld failed (%s on): %ld allocation(s) not freed after the releases",
                 rtcd_backend_name(r->backend), r->n, mode_name(r->mode), live);
    *failed = atomic_load(&g_failed);
    return atomic_load(&g_calls);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sweep(rtcd_backend backend, int full)
{
    sweep_run base = {backend, full, -1, FAIL_ONLY_NTH, 0, 0, 0, 0};
    long failed = 0;
    long total = run_once(&base, &failed);
    assert_int_equal(failed, 0);
    assert_int_equal(base.steps_failed, 0);
    if (backend == RTCD_BACKEND_OPENCL) assert_false(base.fell_back); /* the OpenCL backend itself is swept */
    /* mesh-plane, mesh-mesh, mesh-convex; surface and compound children when full */
    assert_int_equal(base.bodies, full ? 5 : 3);
    assert_true(base.pairs_owned >= (full ? 6u : 3u));
    /* RTCD_SWEEP_N=n: that n alone, to debug one failure. */
    const char* one = getenv("RTCD_SWEEP_N");
    for (int m = 0; m < 2; ++m) {
        fail_mode mode = (fail_mode)m;
        long n = one ? atol(one) : 0, reported_steps = 0, fallbacks = 0;
        double start = seconds();
        for (;; ++n) {
            sweep_run r = {backend, full, n, mode, 0, 0, 0, 0};
            run_once(&r, &failed);
            reported_steps += r.steps_failed;
            fallbacks += r.fell_back;
            if (!failed) break; /* n passed the scenario's last allocation */
            if (one) return;
        }
        /* Failing a later allocation changes nothing before it: the sweep
         * reached every allocation of the plain run. */
        assert_true(n >= total);
        print_message("%s backend, failing %s allocation n: %ld allocations swept (the scenario makes %ld), "
                      "%ld step(s) reported out of memory, %ld fallback(s) to the CPU reference, %.1f s\n",
                      rtcd_backend_name(backend), mode == FAIL_ONLY_NTH ? "only" : "every one from", n, total,
                      reported_steps, fallbacks, seconds() - start);
    }
}

static void test_sweep_cpu(void** state)
{
    (void)state;
    sweep(RTCD_BACKEND_CPU, 1);
}

static void test_sweep_opencl(void** state)
{
    (void)state;
    if (!test_opencl_available()) {
        print_message("notice: no OpenCL backend here: the OpenCL half of the allocation sweep is skipped\n");
        skip();
    }
    sweep(RTCD_BACKEND_OPENCL, getenv("RTCD_SWEEP_FULL") != NULL);
}

/* A failed check leaves the scenario half-way: rtcd's hooks back to their
 * defaults before the next test. */
static int restore_hooks(void** state)
{
    (void)state;
    g_fail_at = -1;
    rtcd_set_allocator(NULL, NULL, NULL);
    rtcd_set_log(NULL, NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sweep_cpu, restore_hooks),
        cmocka_unit_test_teardown(test_sweep_opencl, restore_hooks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
