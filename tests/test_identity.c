/* A mesh created at a released mesh's address is another mesh (issue 27):
 * a pair state, the batch's pairs on both backends and the OpenCL mesh
 * registry tell the two apart by the mesh's id. The reuse of the address is
 * forced through rtcd's allocator hook. The Bullet plugin's shape cache:
 * test_identity_plugin.cpp. */
#include "test_util.h"

#include "mesh/mesh_internal.h" /* BVH node counts: the device's size limit below */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- an allocator that hands released blocks back ---- */

/* rtcd's allocator in these tests keeps every released block and gives it
 * to the next allocation of its size, the earliest released first. After
 * pool_reuse_from_now() and one mesh's release the pool holds that mesh's
 * blocks alone, and the mesh created next takes them role by role (its
 * struct, its vertices, ...), as a program's allocator may at any time. */
#define POOL_MAX 8192
#define POOL_HEADER 64 /* keeps rtcd's 64-byte alignment; holds the size */

static struct {
    char* block[POOL_MAX];
    size_t size[POOL_MAX];
    int count;
    pthread_mutex_t lock;
} g_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void* pool_alloc(size_t size, size_t alignment, void* user)
{
    (void)alignment; /* at most 64: the header keeps it */
    (void)user;
    pthread_mutex_lock(&g_pool.lock);
    for (int i = 0; i < g_pool.count; ++i) {
        if (g_pool.size[i] != size) continue;
        char* p = g_pool.block[i];
        memmove(g_pool.block + i, g_pool.block + i + 1, (size_t)(g_pool.count - i - 1) * sizeof *g_pool.block);
        memmove(g_pool.size + i, g_pool.size + i + 1, (size_t)(g_pool.count - i - 1) * sizeof *g_pool.size);
        g_pool.count--;
        pthread_mutex_unlock(&g_pool.lock);
        return p;
    }
    pthread_mutex_unlock(&g_pool.lock);
    char* base = aligned_alloc(64, POOL_HEADER + (size + 63) / 64 * 64);
    if (!base) return NULL;
    memcpy(base, &size, sizeof size);
    return base + POOL_HEADER;
}

static void pool_free(void* memory, void* user)
{
    (void)user;
    if (!memory) return;
    char* p = memory;
    size_t size;
    memcpy(&size, p - POOL_HEADER, sizeof size);
    pthread_mutex_lock(&g_pool.lock);
    if (g_pool.count < POOL_MAX) {
        g_pool.block[g_pool.count] = p;
        g_pool.size[g_pool.count++] = size;
        p = NULL;
    }
    pthread_mutex_unlock(&g_pool.lock);
    if (p) free(p - POOL_HEADER);
}

/* The blocks released so far go back to the system: from now on the pool
 * holds what is released next. */
static void pool_reuse_from_now(void)
{
    for (int i = 0; i < g_pool.count; ++i) free(g_pool.block[i] - POOL_HEADER);
    g_pool.count = 0;
}

/* Everything made under the pool must be released before this. */
static void pool_install(void) { rtcd_set_allocator(pool_alloc, pool_free, NULL); }
static void pool_remove(void)
{
    rtcd_set_allocator(NULL, NULL, NULL);
    pool_reuse_from_now();
}

/* ---- meshes from arrays made before the pool ---- */

typedef struct arrays {
    float* v;
    uint32_t* idx;
    uint32_t nv, nt;
} arrays;

static arrays blob_arrays(uint32_t vertices, float radius, uint64_t seed)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(vertices, radius, seed, &g), RTCD_OK);
    arrays a = {malloc(12 * (size_t)g.vertex_count), malloc(12 * (size_t)g.triangle_count), g.vertex_count,
                g.triangle_count};
    assert_non_null(a.v);
    assert_non_null(a.idx);
    memcpy(a.v, g.vertices, 12 * (size_t)a.nv);
    memcpy(a.idx, g.indices, 12 * (size_t)a.nt);
    rtcd_generated_free(&g);
    return a;
}

static void arrays_free(arrays* a)
{
    free(a->v);
    free(a->idx);
}

/* leaf: the BVH leaf size (0: the default). */
static rtcd_mesh* mesh_of(const arrays* a, uint32_t leaf, const char* name)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = a->v;
    def.vertex_count = a->nv;
    def.indices = a->idx;
    def.triangle_count = a->nt;
    def.bvh_leaf_size = leaf;
    def.name = name;
    rtcd_mesh* m = NULL;
    assert_int_equal(rtcd_mesh_create(&def, &m), RTCD_OK);
    return m;
}

/* Releases m and makes the next mesh from `next` at its address (asserted:
 * the test is about that case); returns it. */
static rtcd_mesh* remake_in_place(rtcd_mesh* m, const arrays* next, uint32_t leaf, const char* name)
{
    const void* where = m;
    uint64_t id = rtcd_mesh_id(m);
    pool_reuse_from_now();
    rtcd_mesh_release(m);
    rtcd_mesh* n = mesh_of(next, leaf, name);
    assert_ptr_equal(n, where);
    assert_true(rtcd_mesh_id(n) != id && rtcd_mesh_id(n) != 0);
    return n;
}

static rtcd_transform at_x(float x)
{
    rtcd_transform t = rtcd_transform_identity();
    t.translation[0] = x;
    return t;
}

/* ---- comparing calls ---- */

typedef struct call {
    rtcd_pair_result result;
    rtcd_ray_hit* rays;
} call;

/* One pair (key 7: a at the origin, b at x) through batch. */
static void run(rtcd_batch* batch, const rtcd_mesh* a, const rtcd_mesh* b, float x, call* out)
{
    rtcd_pair_desc p;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.b = b;
    p.pose_a = at_x(0.0f);
    p.pose_b = at_x(x);
    p.key = 7;
    out->rays = realloc(out->rays, (rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(b)) * sizeof *out->rays);
    assert_non_null(out->rays);
    assert_int_equal(rtcd_batch_collide(batch, &p, 1, &out->result, out->rays), RTCD_OK);
    qsort(out->rays, out->result.colliding_rays, sizeof *out->rays, test_by_ray);
}

static void same_call(const char* where, const call* want, const call* got, int exact)
{
    test_same_result(where, &want->result, &got->result, exact);
    test_same_rays(where, want->rays, got->rays, want->result.colliding_rays);
}

static rtcd_narrowphase_def def_of(rtcd_backend backend, rtcd_algorithm algorithm)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = backend;
    def.threads = 1;
    def.iterative.algorithm = algorithm;
    return def;
}

static rtcd_batch* batch_of(const rtcd_narrowphase_def* def)
{
    rtcd_batch* b = NULL;
    assert_int_equal(rtcd_batch_create(def, &b), RTCD_OK);
    assert_int_equal(rtcd_batch_backend(b), def->backend);
    return b;
}

/* Blob radius 0.5 at the origin, the other at x = 0.8 + 1 mm per call:
 * they overlap, and move little enough for the kept rays to walk. */
static float step_x(int call_index) { return 0.8f + 0.001f * (float)call_index; }

/* ---- the pair state ---- */

static void collide(const rtcd_narrowphase_def* def, rtcd_pair_state* s, const rtcd_mesh* a, const rtcd_mesh* b,
                    float x, rtcd_ray_hit* rays, uint32_t* n, rtcd_narrowphase_stats* st)
{
    rtcd_transform pa = at_x(0.0f), pb = at_x(x);
    uint32_t room = rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(b);
    assert_int_equal(rtcd_collide_iterative(def, s, a, &pa, b, &pb, rays, room, n, st), RTCD_OK);
    qsort(rays, *n, sizeof *rays, test_by_ray);
}

/* A state whose mesh was released and another made at its address (fewer
 * vertices and triangles than the kept rays name) resets: the same rays,
 * stats and parameters as a fresh state's, call after call. */
static void test_pair_state_resets(void** unused)
{
    (void)unused;
    arrays big = blob_arrays(642, 0.5f, 1), small = blob_arrays(42, 0.5f, 2), other = blob_arrays(162, 0.5f, 3);
    const rtcd_algorithm algorithms[] = {RTCD_ALGORITHM_ITERATIVE, RTCD_ALGORITHM_PREDICTIVE};
    rtcd_ray_hit* got = malloc((642 + 162) * sizeof *got);
    rtcd_ray_hit* want = malloc((642 + 162) * sizeof *want);
    for (int k = 0; k < 2; ++k) {
        pool_install();
        rtcd_narrowphase_def def = def_of(RTCD_BACKEND_CPU, algorithms[k]);
        rtcd_mesh* a = mesh_of(&big, 0, "big");
        rtcd_mesh* b = mesh_of(&other, 0, "other");
        rtcd_pair_state *old = NULL, *fresh = NULL;
        assert_int_equal(rtcd_pair_state_create(&old), RTCD_OK);
        uint32_t n = 0, m = 0;
        rtcd_narrowphase_stats st, sw;
        for (int c = 0; c < 3; ++c) collide(&def, old, a, b, step_x(c), got, &n, &st);
        assert_int_equal(st.standard_pass, 0); /* the state holds rays of the big mesh, walked */
        assert_true(st.walked_rays > 0);

        a = remake_in_place(a, &small, 0, "small");
        assert_int_equal(rtcd_pair_state_create(&fresh), RTCD_OK);
        for (int c = 3; c < 6; ++c) {
            collide(&def, old, a, b, step_x(c), got, &n, &st);
            collide(&def, fresh, a, b, step_x(c), want, &m, &sw);
            if (c == 3) assert_int_equal(st.standard_pass, 1);
            assert_memory_equal(&st, &sw, sizeof st);
            assert_int_equal(n, m);
            test_same_rays("old state on the new mesh", want, got, m);
            rtcd_iterative_params po = rtcd_pair_state_params(old), pf = rtcd_pair_state_params(fresh);
            assert_memory_equal(&po, &pf, sizeof po);
        }
        print_message("algorithm %d: %u rays on the new mesh, as a fresh state's\n", (int)algorithms[k], n);
        rtcd_pair_state_release(old);
        rtcd_pair_state_release(fresh);
        rtcd_mesh_release(a);
        rtcd_mesh_release(b);
        pool_remove();
    }
    free(got);
    free(want);
    arrays_free(&big);
    arrays_free(&small);
    arrays_free(&other);
}

/* ---- the batch ---- */

/* Key 7 runs a with b for three calls (the last walks its kept rays), then
 * a is released and `next` made (remake: at its address, asserted; else
 * wherever the allocator puts it); then key 7 runs the new mesh, three calls
 * against `reference` (a fresh batch). Returns the new mesh. */
static rtcd_mesh* replace_under_key(rtcd_batch* batch, rtcd_mesh* a, rtcd_mesh* b, const arrays* next, uint32_t leaf,
                                    int remake, const rtcd_narrowphase_def* reference, int exact, uint32_t on_cpu)
{
    call got = {0}, want = {0};
    for (int c = 0; c < 3; ++c) run(batch, a, b, step_x(c), &got);
    assert_int_equal(got.result.standard_pass, 0);
    assert_int_equal(rtcd_batch_last_stats(batch).cpu_fallback_pairs, on_cpu);
    const void* where = a;
    if (remake) {
        a = remake_in_place(a, next, leaf, "next");
    } else {
        pool_reuse_from_now();
        rtcd_mesh_release(a);
        a = mesh_of(next, leaf, "next");
        /* The batch still holds the old mesh: its address is not free. */
        assert_true((const void*)a != where);
    }
    rtcd_batch* ref = batch_of(reference);
    for (int c = 3; c < 6; ++c) {
        run(batch, a, b, step_x(c), &got);
        run(ref, a, b, step_x(c), &want);
        if (c == 3) assert_int_equal(got.result.standard_pass, 1);
        same_call("the key's new mesh", &want, &got, exact);
    }
    rtcd_batch_release(ref);
    free(got.rays);
    free(want.rays);
    return a;
}

/* ---- meshes the devices refused ---- */

static int g_refusals;
static void count_refusals(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level == RTCD_LOG_WARNING && strstr(message, "does not fit on device")) g_refusals++;
}

static size_t node_bytes(const rtcd_mesh* m) { return (size_t)m->bvh.node_count * sizeof(rtcd_bvh_node); }

/* An OpenCL batch on devices that fail every buffer past `limit` bytes
 * (the backend's test hook), refusals counted. */
static rtcd_batch* limited_batch(size_t limit)
{
    char text[32];
    snprintf(text, sizeof text, "%zu", limit);
    setenv("RTCD_CL_FAIL_BUFFER_BYTES", text, 1);
    rtcd_narrowphase_def def = def_of(RTCD_BACKEND_OPENCL, RTCD_ALGORITHM_PREDICTIVE);
    rtcd_batch* batch = batch_of(&def);
    unsetenv("RTCD_CL_FAIL_BUFFER_BYTES");
    g_refusals = 0;
    rtcd_set_log(count_refusals, NULL);
    return batch;
}

/* ---- a key's mesh replaced, on each backend ---- */

typedef struct key_case {
    rtcd_backend backend;
    size_t limit;              /* OpenCL devices' buffer limit (limited_batch; 0: none) */
    uint32_t vertices[3];      /* the old mesh, the new one, the other mesh of the pair */
    uint32_t leaf;             /* BVH leaf size of all three (0: the default) */
    int same_address;          /* the new mesh takes the old one's address (else the batch holds it) */
    uint32_t on_cpu;           /* pairs the OpenCL batch runs on the CPU reference */
} key_case;

/* replace_under_key on a batch of k's backend, against a fresh CPU
 * reference batch: bit for bit where both run the CPU reference. */
static void run_key_case(const key_case* k, uint64_t seed)
{
    arrays olda = blob_arrays(k->vertices[0], 0.5f, seed), newa = blob_arrays(k->vertices[1], 0.5f, seed + 1),
           other = blob_arrays(k->vertices[2], 0.5f, seed + 2);
    pool_install();
    rtcd_mesh* a = mesh_of(&olda, k->leaf, "old");
    rtcd_mesh* b = mesh_of(&other, k->leaf, "other");
    rtcd_narrowphase_def def = def_of(k->backend, RTCD_ALGORITHM_PREDICTIVE);
    rtcd_narrowphase_def cpu = def_of(RTCD_BACKEND_CPU, RTCD_ALGORITHM_PREDICTIVE);
    if (k->limit) /* 64 bytes of BVH nodes a triangle (leaf 1): the other mesh fits, the old and new not */
        assert_true(node_bytes(b) < k->limit && RTCD_NEAR_BYTES < k->limit && node_bytes(a) > k->limit &&
                    64 * (size_t)newa.nt > k->limit);
    rtcd_batch* batch = k->limit ? limited_batch(k->limit) : batch_of(&def);
    int exact = k->backend == RTCD_BACKEND_CPU || k->on_cpu;
    a = replace_under_key(batch, a, b, &newa, k->leaf, k->same_address, &cpu, exact, k->on_cpu);
    assert_int_equal(rtcd_batch_last_stats(batch).cpu_fallback_pairs, k->on_cpu);
    if (k->limit) assert_int_equal(g_refusals, 2); /* each refused on its own account */
    rtcd_set_log(NULL, NULL);
    rtcd_batch_release(batch);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
    pool_remove();
    arrays_free(&olda);
    arrays_free(&newa);
    arrays_free(&other);
}

/* CPU reference: a key whose mesh was replaced at the same address gets a
 * standard pass, and the results of a fresh batch. */
static void test_cpu_batch_key(void** unused)
{
    (void)unused;
    key_case k = {RTCD_BACKEND_CPU, 0, {642, 42, 162}, 0, 1, 0};
    run_key_case(&k, 4);
}

/* OpenCL: the registry holds the meshes it put on the devices, so a mesh the
 * caller released keeps its address while the batch lives; the key's new
 * mesh gets its own geometry on the device: the CPU reference's results. */
static void test_opencl_registry(void** unused)
{
    (void)unused;
    if (!test_opencl_available()) skip();
    key_case k = {RTCD_BACKEND_OPENCL, 0, {642, 42, 162}, 0, 0, 0};
    run_key_case(&k, 7);
}

/* A refused mesh, whose pairs run on the CPU reference with their states,
 * is released and another refused one made at its address: the key's state
 * resets there too, and the new mesh is refused on its own account. */
static void test_refused_replaced_by_refused(void** unused)
{
    (void)unused;
    if (!test_opencl_available()) skip();
    key_case k = {RTCD_BACKEND_OPENCL, 65536, {2000, 1000, 50}, 1, 1, 1};
    run_key_case(&k, 10);
}

/* A refused mesh is released and one that fits made at its address from the
 * same vertices (the same counts, even the same vertex array: what the
 * refused list once went by), only with larger BVH leaves: it goes to the
 * device and gets the CPU reference's results there. */
static void test_refused_replaced_by_fitting(void** unused)
{
    (void)unused;
    if (!test_opencl_available()) skip();
    arrays big = blob_arrays(2000, 0.5f, 13), small = blob_arrays(50, 0.5f, 14);
    rtcd_mesh* probe = mesh_of(&big, RTCD_BVH_MAX_LEAF_SIZE, "probe"); /* before the pool: its node count */
    size_t coarse = node_bytes(probe);
    rtcd_mesh_release(probe);
    pool_install();
    rtcd_mesh* a = mesh_of(&big, 1, "big");
    rtcd_mesh* b = mesh_of(&small, 1, "small");
    /* The BVH nodes and triangle corners are the largest buffers. */
    size_t corners = 9 * sizeof(float) * ((size_t)big.nt + small.nt);
    size_t limit = (coarse + node_bytes(b) > corners ? coarse + node_bytes(b) : corners) + 4096;
    assert_true(node_bytes(a) > limit);
    rtcd_batch* batch = limited_batch(limit);
    rtcd_narrowphase_def cpu = def_of(RTCD_BACKEND_CPU, RTCD_ALGORITHM_PREDICTIVE);
    call got = {0}, want = {0};
    for (int c = 0; c < 2; ++c) run(batch, a, b, step_x(c), &got);
    assert_int_equal(rtcd_batch_last_stats(batch).cpu_fallback_pairs, 1);
    assert_int_equal(g_refusals, 1);
    const float* vertices = rtcd_mesh_vertices(a);
    a = remake_in_place(a, &big, RTCD_BVH_MAX_LEAF_SIZE, "big again");
    assert_ptr_equal(rtcd_mesh_vertices(a), vertices);
    rtcd_batch* ref = batch_of(&cpu);
    for (int c = 2; c < 5; ++c) {
        run(batch, a, b, step_x(c), &got);
        run(ref, a, b, step_x(c), &want);
        assert_int_equal(rtcd_batch_last_stats(batch).cpu_fallback_pairs, 0);
        same_call("the fitting mesh on the device", &want, &got, 0);
    }
    assert_int_equal(g_refusals, 1);
    rtcd_set_log(NULL, NULL);
    rtcd_batch_release(ref);
    rtcd_batch_release(batch);
    free(got.rays);
    free(want.rays);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
    pool_remove();
    arrays_free(&big);
    arrays_free(&small);
}

/* Ids: distinct for every mesh made, kept by a deformation, 0 for NULL. */
static void test_ids(void** unused)
{
    (void)unused;
    arrays s = blob_arrays(42, 0.5f, 15);
    rtcd_mesh* a = mesh_of(&s, 0, "a");
    rtcd_mesh* b = mesh_of(&s, 0, "b");
    uint64_t ia = rtcd_mesh_id(a);
    assert_true(ia != 0 && rtcd_mesh_id(b) != 0 && ia != rtcd_mesh_id(b));
    for (uint32_t i = 0; i < 3 * s.nv; ++i) s.v[i] *= 1.01f;
    assert_int_equal(rtcd_mesh_update_vertices(a, s.v, 0), RTCD_OK);
    assert_int_equal(rtcd_mesh_version(a), 1);
    assert_true(rtcd_mesh_id(a) == ia);
    assert_true(rtcd_mesh_id(NULL) == 0);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
    arrays_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_pair_state_resets),
        cmocka_unit_test(test_cpu_batch_key),
        cmocka_unit_test(test_opencl_registry),
        cmocka_unit_test(test_refused_replaced_by_refused),
        cmocka_unit_test(test_refused_replaced_by_fitting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
