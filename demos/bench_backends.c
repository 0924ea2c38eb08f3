/* The avalanche's narrow phase on each backend, side by side in one run:
 * the CPU reference (single thread), OpenCL on one device and on two.
 * Poses come from a real 512-blob avalanche (Bullet through rtcd, CPU) at
 * several moments; each backend then runs exactly the same pair batches.
 * On a machine without GPUs, PoCL provides the devices: unless already set,
 * POCL_DEVICES="pthread pthread" and POCL_MAX_PTHREAD_COUNT=1 are set here
 * (one thread per device), before the first OpenCL call.
 * Usage: bench_backends [--objects N] [--steps N] [--repetitions R] [--devices "spec"] */
#include "scene_util.h"

#include <rtcd/rtcd_opencl.h>
#include <rtcd/rtcd_world.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : (x > y);
}

static double median(double* v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double run_cpu(const rtcd_pair_desc* pairs, uint32_t n, rtcd_ray_hit* rays, rtcd_contact* contacts, uint64_t* out_contacts)
{
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    double t0 = now_ms();
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t cap = rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b), m = 0;
        rtcd_collide_standard(&nd, pairs[i].a, &pairs[i].pose_a, pairs[i].b, &pairs[i].pose_b, rays, cap, &m, NULL);
        for (uint32_t k = 0; k < m; ++k) contacts[k] = rtcd_contact_from_ray(&rays[k], nd.contact_normal);
        rtcd_contact reduced[4];
        total += rtcd_reduce_contacts(contacts, m, reduced);
    }
    *out_contacts = total;
    return now_ms() - t0;
}

int main(int argc, char** argv)
{
    uint32_t objects = 512, steps = 400, reps = 5;
    const char* spec = "all";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--objects") && i + 1 < argc) objects = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repetitions") && i + 1 < argc) reps = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc) spec = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--objects N] [--steps N] [--repetitions R] [--devices spec]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 64 || objects < 2 || steps < 100) {
        fprintf(stderr, "bench_backends: need objects >= 2, steps >= 100, 1 <= repetitions <= 64\n");
        return 2;
    }
    setenv("POCL_DEVICES", "pthread pthread", 0);
    setenv("POCL_MAX_PTHREAD_COUNT", "1", 0);

    /* The avalanche on the CPU reference provides the poses. */
    rtcd_world_def wd = rtcd_default_world_def();
    wd.backend = RTCD_BACKEND_CPU;
    rtcd_world* world = NULL;
    rtcd_generated_mesh g;
    rtcd_mesh* mesh = NULL;
    rtcd_shape* shape = NULL;
    float up[3] = {0, 0, 1};
    if (rtcd_world_create(&wd, &world) || rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 1, &g) ||
        scene_mesh_from_generated(&g, "avalanche_blob", &mesh) || rtcd_shape_create(world, mesh, &shape) ||
        rtcd_world_add_plane(world, up, 0.0f)) {
        fprintf(stderr, "bench_backends: %s\n", rtcd_last_error_message());
        return 1;
    }
    uint64_t rng = 1;
    uint32_t side = (uint32_t)ceil(cbrt((double)objects));
    for (uint32_t b = 0; b < objects; ++b) {
        rtcd_transform p = scene_random_pose(&rng, ((float)(b % side) - 0.5f * side) * 1.2f,
                                             ((float)(b / side % side) - 0.5f * side) * 1.2f, 1.0f + (float)(b / (side * side)) * 1.2f);
        rtcd_world_add_body(world, shape, 1.0f, &p, NULL);
    }
    const rtcd_mesh* body = rtcd_shape_body_mesh(shape);
    rtcd_opencl_def d1 = rtcd_default_opencl_def(), d2 = rtcd_default_opencl_def();
    d1.devices = d2.devices = spec;
    d1.max_devices = 1;
    d2.max_devices = 2;
    rtcd_opencl *one = NULL, *two = NULL;
    if (rtcd_opencl_create(&d1, &one) != RTCD_OK || rtcd_opencl_create(&d2, &two) != RTCD_OK) {
        fprintf(stderr, "bench_backends: OpenCL: %s\n", rtcd_last_error_message());
        return 1;
    }
    rtcd_transform* poses = malloc(objects * sizeof *poses);
    rtcd_pair_desc* pairs = malloc((size_t)objects * objects / 2 * sizeof *pairs);
    rtcd_pair_result* res = malloc((size_t)objects * objects / 2 * sizeof *res);
    rtcd_ray_hit* rays = malloc(2 * RTCD_AVALANCHE_BLOB_VERTICES * sizeof *rays);
    rtcd_contact* contacts = malloc(2 * RTCD_AVALANCHE_BLOB_VERTICES * sizeof *contacts);
    double cpu_sum = 0, one_sum = 0, two_sum = 0;
    uint32_t snapshots = 0, pair_total = 0;
    int mismatch = 0;
    for (uint32_t step = 1; step <= steps; ++step) {
        rtcd_world_step(world);
        if (step < 100 || step % 50 != 0) continue;
        for (uint32_t b = 0; b < objects; ++b) rtcd_world_get_pose(world, b, &poses[b]);
        uint32_t n = scene_overlapping_pairs(body, poses, objects, pairs);
        double tc[64], t1[64], t2[64];
        uint64_t cpu_contacts = 0;
        for (uint32_t r = 0; r < reps; ++r) {
            /* interleaved, so the three share the machine's noise */
            tc[r] = run_cpu(pairs, n, rays, contacts, &cpu_contacts);
            double t = now_ms();
            rtcd_opencl_collide(one, pairs, n, res, NULL);
            t1[r] = now_ms() - t;
            t = now_ms();
            rtcd_opencl_collide(two, pairs, n, res, NULL);
            t2[r] = now_ms() - t;
        }
        uint64_t dev_contacts = 0;
        for (uint32_t i = 0; i < n; ++i) dev_contacts += res[i].contact_count;
        mismatch |= dev_contacts != cpu_contacts;
        cpu_sum += median(tc, (int)reps);
        one_sum += median(t1, (int)reps);
        two_sum += median(t2, (int)reps);
        pair_total += n;
        snapshots++;
    }
    printf("{\"benchmark\":\"avalanche_narrowphase_backends\",\"objects\":%u,\"snapshots\":%u,\"pairs_mean\":%.0f,"
           "\"repetitions\":%u,\"cpu_reference_ms\":%.3f,\"opencl_1_device_ms\":%.3f,\"opencl_2_devices_ms\":%.3f,"
           "\"devices\":[\"%s\",\"%s\"],\"two_over_one_speedup\":%.3f,\"opencl_1_over_cpu_speedup\":%.3f,"
           "\"contacts_equal\":%s}\n",
           objects, snapshots, (double)pair_total / snapshots, reps, cpu_sum / snapshots, one_sum / snapshots,
           two_sum / snapshots, rtcd_opencl_device_name(two, 0), rtcd_opencl_device_name(two, 1), one_sum / two_sum,
           cpu_sum / one_sum, mismatch ? "false" : "true");
    free(poses);
    free(pairs);
    free(res);
    free(rays);
    free(contacts);
    rtcd_opencl_destroy(one);
    rtcd_opencl_destroy(two);
    rtcd_shape_release(shape);
    rtcd_mesh_release(mesh);
    rtcd_world_destroy(world);
    return mismatch;
}
