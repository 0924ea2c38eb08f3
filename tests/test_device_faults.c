/* The OpenCL backend survives a device allocation failure (issue 12,
 * finding 6). The meshes share concatenated buffers on the device; a mesh
 * that would make one larger than the device's largest allocation
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE: clCreateBuffer answers
 * CL_INVALID_BUFFER_SIZE) used to leave the backend failing every later
 * call, even for a 96-triangle pair. Now that mesh stays on the CPU
 * reference, which runs its pairs in the same rtcd_batch_collide call with
 * the CPU backend's results bit for bit; the other pairs stay on the device
 * and give the CPU's results too; later calls work; one warning names the
 * mesh and the error.
 *
 * PoCL with POCL_MEMORY_LIMIT=1 (set below, before any OpenCL call) is a
 * device of 1 GiB whose largest buffer is 256 MiB. The big meshes are boxes
 * with one triangle per BVH leaf: 2 T - 1 nodes of 32 bytes, so 4.3 M
 * triangles pass 256 MiB in the concatenated BVH nodes (about 15 s to make
 * here). Skipped, with a message, without an OpenCL device or on a device
 * whose largest buffer would need more than 6 M triangles. */
#include "test_util.h"

#include "cl_backend.h"
#include "mesh/mesh_internal.h"

#include <rtcd/rtcd_batch.h>
#include <rtcd/rtcd_generate.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TRIANGLES 6000000u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the log hook: every warning, kept ---- */

#define MAX_WARNINGS 32

typedef struct warnings {
    int count;
    char text[MAX_WARNINGS][1024];
} warnings;

static warnings g_warnings;

static void capture_log(rtcd_log_level level, const char* message, void* user)
{
    warnings* w = user;
    if (level != RTCD_LOG_WARNING) return;
    if (w->count < MAX_WARNINGS) snprintf(w->text[w->count], sizeof w->text[0], "%s", message);
    w->count++;
}

/* Warnings naming `name` (between quotes, as the notice does). */
static int notices_naming(const char* name, const char** last)
{
    char quoted[128];
    snprintf(quoted, sizeof quoted, "'%s'", name);
    int n = 0;
    for (int i = 0; i < g_warnings.count && i < MAX_WARNINGS; ++i)
        if (strstr(g_warnings.text[i], quoted)) {
            n++;
            if (last) *last = g_warnings.text[i];
        }
    return n;
}

/* ---- the device ---- */

static rtcd_narrowphase_def opencl_def(void)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def(); /* the predictive algorithm: states matter */
    def.backend = RTCD_BACKEND_OPENCL;
    def.max_devices = 1;
    return def;
}

/* The device's largest buffer; 0 (and a message) when there is no device. */
static uint64_t device_max_alloc(void)
{
    rtcd_narrowphase_def def = opencl_def();
    rtcd_opencl* cl = NULL;
    rtcd_error err = rtcd_opencl_create(&def, NULL, &cl);
    if (err != RTCD_OK) {
        print_message("notice: no OpenCL device (%s: %s): skipped\n", rtcd_error_name(err), rtcd_last_error_message());
        return 0;
    }
    uint64_t max_alloc = rtcd_opencl_device_max_alloc(cl, 0);
    print_message("device %s: CL_DEVICE_MAX_MEM_ALLOC_SIZE %.1f MiB\n", rtcd_opencl_device_name(cl, 0),
                  (double)max_alloc / 1048576.0);
    rtcd_opencl_destroy(cl);
    return max_alloc;
}

/* Box subdivisions s (12 s^2 triangles) whose BVH nodes, one triangle per
 * leaf, take at least `bytes`; 0 (and a message) past MAX_TRIANGLES. */
static uint32_t subdivisions_for(uint64_t bytes)
{
    uint64_t triangles = bytes / 64 + 1;
    uint32_t s = (uint32_t)ceil(sqrt((double)triangles / 12.0));
    if (12ull * s * s > MAX_TRIANGLES) {
        print_message("notice: the device's largest buffer needs a mesh of more than %u triangles: skipped\n",
                      MAX_TRIANGLES);
        return 0;
    }
    return s;
}

static size_t node_bytes(const rtcd_mesh* m) { return (size_t)m->bvh.node_count * sizeof(rtcd_bvh_node); }

/* From generated arrays (freed), one triangle per BVH leaf. */
static rtcd_mesh* make_leaf1(rtcd_generated_mesh g, const char* name)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = g.vertices;
    def.vertex_count = g.vertex_count;
    def.indices = g.indices;
    def.triangle_count = g.triangle_count;
    def.bvh_leaf_size = 1;
    def.name = name;
    rtcd_mesh* m = NULL;
    rtcd_error err = rtcd_mesh_create(&def, &m);
    rtcd_generated_free(&g);
    if (err != RTCD_OK) fail_msg("%s: %s: %s", name, rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(m->bvh.node_count, 2 * rtcd_mesh_triangle_count(m) - 1);
    return m;
}

/* A box of half extent `half`, subdivided, one triangle per BVH leaf. */
static rtcd_mesh* make_big_box(uint32_t s, float half, const char* name)
{
    double t0 = now_s();
    rtcd_generated_mesh g;
    float h[3] = {half, half, half};
    assert_int_equal(rtcd_generate_box(h, s, &g), RTCD_OK);
    rtcd_mesh* m = make_leaf1(g, name);
    print_message("%s: %u triangles, BVH nodes %.1f MiB, made in %.1f s\n", name, rtcd_mesh_triangle_count(m),
                  (double)node_bytes(m) / 1048576.0, now_s() - t0);
    return m;
}

/* A 96-triangle blob. */
static rtcd_mesh* make_small(uint64_t seed)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(50, 0.3f, seed, &g), RTCD_OK);
    char name[32];
    snprintf(name, sizeof name, "small_%llu", (unsigned long long)seed);
    rtcd_mesh* m = test_mesh_from_generated(&g, name);
    assert_int_equal(rtcd_mesh_triangle_count(m), 96);
    return m;
}

static rtcd_transform pose(float x, float y, float z, float angle)
{
    rtcd_transform t;
    memset(&t, 0, sizeof t);
    float c = cosf(angle), s = sinf(angle);
    t.rotation[0] = c;
    t.rotation[1] = -s;
    t.rotation[3] = s;
    t.rotation[4] = c;
    t.rotation[8] = 1.0f;
    t.translation[0] = x;
    t.translation[1] = y;
    t.translation[2] = z;
    return t;
}

static rtcd_pair_desc pair(const rtcd_mesh* a, rtcd_transform pa, const rtcd_mesh* b, rtcd_transform pb, uint64_t key)
{
    rtcd_pair_desc p;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.b = b;
    p.pose_a = pa;
    p.pose_b = pb;
    p.key = key;
    return p;
}

/* ---- comparing with the CPU reference ---- */

static char g_where[256]; /* what is being compared, for failure messages */

/* The OpenCL batch and the CPU reference batch, called alike. */
typedef struct both {
    rtcd_batch *cl, *cpu;
    rtcd_pair_result *res, *want;
    rtcd_ray_hit *rays, *want_rays;
    size_t room;
} both;

static void both_open(both* b, size_t room)
{
    memset(b, 0, sizeof *b);
    rtcd_narrowphase_def def = opencl_def();
    rtcd_error err = rtcd_batch_create(&def, &b->cl);
    if (err != RTCD_OK) fail_msg("OpenCL batch: %s: %s", rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(rtcd_batch_backend(b->cl), RTCD_BACKEND_OPENCL);
    def.backend = RTCD_BACKEND_CPU;
    def.threads = 1;
    assert_int_equal(rtcd_batch_create(&def, &b->cpu), RTCD_OK);
    b->res = calloc(8, sizeof *b->res);
    b->want = calloc(8, sizeof *b->want);
    b->rays = calloc(room, sizeof *b->rays);
    b->want_rays = calloc(room, sizeof *b->want_rays);
    b->room = room;
    assert_true(b->res && b->want && b->rays && b->want_rays);
}

static void both_close(both* b)
{
    rtcd_batch_release(b->cl);
    rtcd_batch_release(b->cpu);
    free(b->res);
    free(b->want);
    free(b->rays);
    free(b->want_rays);
}

/* One call on both: every pair's result and rays equal; on_cpu: which
 * pairs the OpenCL batch must have run on the CPU (a bit per pair). The
 * reference gets `ref` (the same pairs, perhaps under other keys). */
static void both_call(both* b, const char* label, const rtcd_pair_desc* pairs, const rtcd_pair_desc* ref, uint32_t n,
                      uint32_t on_cpu)
{
    assert_true(n <= 8);
    size_t room = 0;
    for (uint32_t i = 0; i < n; ++i)
        room += rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b);
    assert_true(room <= b->room);
    rtcd_error err = rtcd_batch_collide(b->cl, pairs, n, b->res, b->rays);
    if (err != RTCD_OK) fail_msg("%s: OpenCL batch: %s: %s", label, rtcd_error_name(err), rtcd_last_error_message());
    rtcd_batch_stats st = rtcd_batch_last_stats(b->cl);
    assert_int_equal(rtcd_batch_collide(b->cpu, ref ? ref : pairs, n, b->want, b->want_rays), RTCD_OK);
    uint32_t cpu_count = 0, colliding = 0;
    size_t offset = 0;
    for (uint32_t i = 0; i < n; ++i) {
        int cpu = (on_cpu >> i) & 1u;
        cpu_count += (uint32_t)cpu;
        snprintf(g_where, sizeof g_where, "%s, pair %u (%s with %s, key %llu, %s)", label, i,
                 rtcd_mesh_name(pairs[i].a), rtcd_mesh_name(pairs[i].b), (unsigned long long)pairs[i].key,
                 cpu ? "on the CPU" : "on the device");
        test_same_result(g_where, &b->want[i], &b->res[i], cpu);
        uint32_t nr = b->want[i].colliding_rays;
        qsort(b->rays + offset, nr, sizeof *b->rays, test_by_ray);
        qsort(b->want_rays + offset, nr, sizeof *b->want_rays, test_by_ray);
        test_same_rays(g_where, b->want_rays + offset, b->rays + offset, nr);
        offset += rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b);
        colliding += nr;
        print_message("  pair %u: %u colliding rays, %u contacts, %s pass\n", i, nr, b->want[i].contact_count,
                      b->want[i].standard_pass ? "standard" : "iterative");
    }
    /* The device ran the others. */
    assert_int_equal(st.cpu_fallback_pairs, cpu_count);
    assert_int_equal(st.pairs_per_device[0], n - cpu_count);
    print_message("%s: %u pair(s), %u on the CPU, %u colliding rays, %.1f ms\n", label, n, cpu_count, colliding,
                  st.ms);
}

/* ---- a mesh larger than the device's largest buffer ---- */

static void test_big_mesh_stays_on_cpu(void** state)
{
    (void)state;
    uint64_t max_alloc = device_max_alloc();
    if (!max_alloc) skip();
    uint32_t s = subdivisions_for(max_alloc + max_alloc / 32);
    if (!s) skip();
    rtcd_mesh* big = make_big_box(s, 1.0f, "device_faults_big");
    assert_true(node_bytes(big) > max_alloc);
    rtcd_mesh *s1 = make_small(1), *s2 = make_small(2), *s3 = make_small(3);
    size_t room = 4 * (size_t)rtcd_mesh_vertex_count(big);
    memset(&g_warnings, 0, sizeof g_warnings);
    rtcd_set_log(capture_log, &g_warnings);
    both b;
    both_open(&b, room);

    /* The big pair and a 96-triangle pair in one call: both answer. */
    rtcd_pair_desc p[2], ref[2];
    char label[64];
    for (int call = 0; call < 3; ++call) {
        float dx = 0.01f * (float)call;
        p[0] = pair(big, pose(0, 0, 0, 0), s1, pose(0.2f + dx, 0.1f, 1.12f, 0.1f * (float)call), 1);
        p[1] = pair(s2, pose(dx, 0, 0, 0), s3, pose(0.35f, 0.05f, 0, 0.05f * (float)call), 2);
        snprintf(label, sizeof label, "big and small, call %d", call);
        both_call(&b, label, p, NULL, 2, 0x1u);
    }
    assert_true(b.want[0].colliding_rays > 0 && b.want[1].colliding_rays > 0);
    const char* notice = NULL;
    assert_int_equal(notices_naming("device_faults_big", &notice), 1);
    print_message("notice: %s\n", notice);
    assert_non_null(strstr(notice, "CL_INVALID_BUFFER_SIZE"));

    /* Later calls: small pairs only, on the device. */
    for (int call = 0; call < 3; ++call) {
        float dx = 0.01f * (float)call;
        p[0] = pair(s1, pose(0, 0, 0, 0), s2, pose(0.3f + dx, 0, 0.1f, 0), 3);
        p[1] = pair(s2, pose(dx, 0, 0, 0), s3, pose(0.35f, 0.05f, 0, 0.05f * (float)call), 2);
        snprintf(label, sizeof label, "small only, call %d", call);
        both_call(&b, label, p, NULL, 2, 0u);
    }

    /* A key that moves between the CPU and the device forgets its state, as
     * a new key would: the reference sees a new key each time it moves. */
    p[0] = pair(big, pose(0, 0, 0, 0), s1, pose(0.2f, 0.1f, 1.12f, 0), 7);
    p[1] = pair(s2, pose(0, 0, 0, 0), s3, pose(0.35f, 0.05f, 0, 0), 2);
    both_call(&b, "key 7 on the CPU", p, NULL, 2, 0x1u);
    both_call(&b, "key 7 on the CPU again", p, NULL, 2, 0x1u);
    assert_int_equal(b.res[0].standard_pass, 0); /* it kept its state there */
    for (int call = 0; call < 2; ++call) {
        p[0] = pair(s1, pose(0, 0, 0, 0), s3, pose(0.3f + 0.01f * (float)call, 0, 0, 0), 7);
        memcpy(ref, p, sizeof ref);
        ref[0].key = 70;
        both_call(&b, call ? "key 7 on the device again" : "key 7 moved to the device", p, ref, 2, 0u);
        assert_int_equal(b.res[0].standard_pass, call == 0);
    }
    p[0] = pair(big, pose(0, 0, 0, 0), s1, pose(0.21f, 0.1f, 1.12f, 0), 7);
    memcpy(ref, p, sizeof ref);
    ref[0].key = 71;
    both_call(&b, "key 7 back on the CPU", p, ref, 2, 0x1u);
    assert_int_equal(b.res[0].standard_pass, 1);

    /* Still one notice for the big mesh, and none for the others. */
    assert_int_equal(notices_naming("device_faults_big", NULL), 1);
    assert_int_equal(g_warnings.count, 1);
    both_close(&b);
    rtcd_set_log(NULL, NULL);
    rtcd_mesh_release(big);
    rtcd_mesh_release(s1);
    rtcd_mesh_release(s2);
    rtcd_mesh_release(s3);
}

/* ---- meshes that fit alone, not together ---- */

/* Where a small blob touches a big box's corner: few of the box's dense
 * vertices near it, so the pair fits the device's on-chip stores (past
 * them the device hands a pair to the CPU or resets its state, which
 * this test does not look at). */
#define CORNER 1.16f

static void test_growth_refuses_the_mesh_that_made_it_fail(void** state)
{
    (void)state;
    uint64_t max_alloc = device_max_alloc();
    if (!max_alloc) skip();
    /* 62 % and 42 % of the largest buffer in BVH nodes. */
    uint32_t s_first = subdivisions_for(max_alloc / 100 * 62), s_second = subdivisions_for(max_alloc / 100 * 42);
    if (!s_first || !s_second) skip();
    rtcd_mesh* first = make_big_box(s_first, 1.0f, "device_faults_first");
    rtcd_mesh* second = make_big_box(s_second, 1.0f, "device_faults_second");
    assert_true(node_bytes(first) + 64 * 1024 < max_alloc && node_bytes(second) < max_alloc);
    assert_true(node_bytes(first) + node_bytes(second) > max_alloc);
    rtcd_mesh *s1 = make_small(11), *s2 = make_small(12);
    size_t room = 4 * (size_t)rtcd_mesh_vertex_count(first) + 4 * (size_t)rtcd_mesh_vertex_count(second);
    memset(&g_warnings, 0, sizeof g_warnings);
    rtcd_set_log(capture_log, &g_warnings);
    both b;
    both_open(&b, room);

    /* All new in one call: the first fits, the second makes the nodes'
     * buffer too large and stays on the CPU, the small ones fit beside. */
    rtcd_pair_desc p[3];
    char label[64];
    for (int call = 0; call < 2; ++call) {
        float dx = 0.01f * (float)call;
        p[0] = pair(first, pose(0, 0, 0, 0), s1, pose(CORNER + dx, CORNER, CORNER, 0), 1);
        p[1] = pair(second, pose(0, 0, 0, 0), s2, pose(-0.2f, 0.1f - dx, 1.12f, 0), 2);
        p[2] = pair(s1, pose(0, 0, 0, 0), s2, pose(0.3f + dx, 0, 0.1f, 0), 3);
        snprintf(label, sizeof label, "two medium meshes, call %d", call);
        both_call(&b, label, p, NULL, 3, 0x2u);
    }
    const char* notice = NULL;
    assert_int_equal(notices_naming("device_faults_second", &notice), 1);
    print_message("notice: %s\n", notice);
    assert_non_null(strstr(notice, "CL_INVALID_BUFFER_SIZE"));
    assert_int_equal(notices_naming("device_faults_first", NULL), 0);
    assert_int_equal(g_warnings.count, 1);

    /* Later: the first mesh's pair and a small one, on the device. */
    p[0] = pair(first, pose(0, 0, 0, 0), s1, pose(CORNER + 0.015f, CORNER, CORNER, 0), 1);
    p[1] = pair(s1, pose(0, 0, 0, 0), s2, pose(0.32f, 0, 0.1f, 0), 3);
    both_call(&b, "the first mesh later", p, NULL, 2, 0u);
    both_close(&b);
    rtcd_set_log(NULL, NULL);
    rtcd_mesh_release(first);
    rtcd_mesh_release(second);
    rtcd_mesh_release(s1);
    rtcd_mesh_release(s2);
}

/* ---- a device out of memory (the test hook), found by uploads ---- */

static rtcd_mesh* make_blob_leaf1(uint32_t vertices, uint64_t seed, const char* name)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(vertices, 0.3f, seed, &g), RTCD_OK);
    return make_leaf1(g, name);
}

/* A device that refuses the memory without a size limit to explain it
 * (CL_MEM_OBJECT_ALLOCATION_FAILURE, as a GPU whose memory is full): the
 * backend finds the mesh that made it fail by uploading runs of the call's
 * new meshes. RTCD_CL_FAIL_BUFFER_BYTES makes PoCL such a device for
 * buffers past a few hundred kilobytes: small meshes, quick. */
static void test_out_of_memory_found_by_uploads(void** state)
{
    (void)state;
    if (!device_max_alloc()) skip();
    rtcd_mesh* a = make_blob_leaf1(500, 21, "oom_a");
    rtcd_mesh* b = make_blob_leaf1(500, 22, "oom_b");
    rtcd_mesh* c = make_blob_leaf1(2000, 23, "oom_c");
    rtcd_mesh* d = make_blob_leaf1(200, 24, "oom_d");
    rtcd_mesh* e = make_blob_leaf1(200, 25, "oom_e");
    rtcd_mesh* f = make_blob_leaf1(2000, 26, "oom_f");
    /* The nodes are the largest buffer (64 bytes a triangle): a, b, d and
     * e fit together, a, b and c do not. */
    size_t limit = node_bytes(a) + node_bytes(b) + node_bytes(d) + node_bytes(e) + 4096;
    assert_true(node_bytes(a) + node_bytes(b) + node_bytes(c) > limit);
    char text[32];
    snprintf(text, sizeof text, "%zu", limit);
    setenv("RTCD_CL_FAIL_BUFFER_BYTES", text, 1);
    memset(&g_warnings, 0, sizeof g_warnings);
    rtcd_set_log(capture_log, &g_warnings);
    both bb;
    both_open(&bb, 20000);
    unsetenv("RTCD_CL_FAIL_BUFFER_BYTES");

    rtcd_pair_desc p[3];
    for (int call = 0; call < 2; ++call) {
        float dx = 0.01f * (float)call;
        p[0] = pair(a, pose(0, 0, 0, 0), b, pose(0.35f + dx, 0, 0, 0), 1);
        p[1] = pair(c, pose(0, 0, 0, 0), d, pose(0, 0.35f, dx, 0), 2);
        p[2] = pair(e, pose(0, 0, 0, 0), a, pose(0, dx, 0.35f, 0), 3);
        both_call(&bb, call ? "c refused, again" : "c refused", p, NULL, 3, 0x2u);
    }
    const char* notice = NULL;
    assert_int_equal(notices_naming("oom_c", &notice), 1);
    print_message("notice: %s\n", notice);
    assert_non_null(strstr(notice, "CL_MEM_OBJECT_ALLOCATION_FAILURE"));
    assert_int_equal(g_warnings.count, 1);

    /* A later call's new mesh that does not fit beside those there. */
    p[0] = pair(a, pose(0, 0, 0, 0), b, pose(0.37f, 0, 0, 0), 1);
    p[1] = pair(f, pose(0, 0, 0, 0), b, pose(0.3f, 0.1f, 0, 0), 4);
    both_call(&bb, "f refused", p, NULL, 2, 0x2u);
    assert_int_equal(notices_naming("oom_f", NULL), 1);
    p[1] = pair(e, pose(0, 0, 0, 0), a, pose(0, 0.02f, 0.35f, 0), 3);
    both_call(&bb, "a, b, e on the device", p, NULL, 2, 0u);
    assert_int_equal(g_warnings.count, 2);
    both_close(&bb);
    rtcd_set_log(NULL, NULL);
    rtcd_mesh* all[] = {a, b, c, d, e, f};
    for (int i = 0; i < 6; ++i) rtcd_mesh_release(all[i]);
}

int main(void)
{
    /* PoCL reads it once, at the process's first OpenCL call. */
    setenv("POCL_MEMORY_LIMIT", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_mesh_stays_on_cpu),
        cmocka_unit_test(test_growth_refuses_the_mesh_that_made_it_fail),
        cmocka_unit_test(test_out_of_memory_found_by_uploads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
