/* The avalanche's narrow phase on each backend, side by side in one run,
 * all through rtcd_batch with the same def but for where it runs: the CPU
 * reference on one thread and on --threads (default: every core), OpenCL on
 * one device and on two. Poses come from a real 512-blob avalanche (Bullet
 * through rtcd, CPU) at several moments; each backend then runs exactly the
 * same pair batches, and their reduced contacts are compared bit for bit.
 * On a machine without GPUs, PoCL provides the devices: unless already set,
 * POCL_DEVICES="pthread pthread" and POCL_MAX_PTHREAD_COUNT=1 (one thread
 * per device), except for a sub-device spec (--devices 0:0/2), which splits
 * PoCL's one device.
 * Usage: bench_backends [--objects N] [--steps N] [--repetitions R] [--devices "spec"]
 *                       [--algorithm standard|iterative|predictive] [--threads N] */
#include "demo_common.h"
#include "scene_util.h"

#include <rtcd/rtcd_batch.h>
#include <rtcd/rtcd_world.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum { CPU_ONE, CPU_ALL, CL_ONE, CL_TWO, RUNS };
static const char* const run_names[RUNS] = {"cpu_1_thread", "cpu_threads", "opencl_1_device", "opencl_2_devices"};

/* The same pairs through one batch: ms, and 1 when a call failed. */
static double run(rtcd_batch* b, const rtcd_pair_desc* pairs, uint32_t n, rtcd_pair_result* res, int* failed)
{
    double t = demo_now_ms();
    if (rtcd_batch_collide(b, pairs, n, res, NULL) != RTCD_OK) *failed = 1;
    return demo_now_ms() - t;
}

/* JSON-safe device name ("" when there is none). */
static void json_name(const char* in, char* out, size_t cap)
{
    size_t j = 0;
    for (; in && in[j] && j + 1 < cap; ++j)
        out[j] = (in[j] == '"' || in[j] == '\\' || (unsigned char)in[j] < 0x20) ? '_' : in[j];
    out[j] = '\0';
}

int main(int argc, char** argv)
{
    uint32_t objects = 512, steps = 400, reps = 5, threads = 0;
    const char* spec = "all";
    int algorithm_opt = RTCD_ALGORITHM_PREDICTIVE;
    static const demo_cli_choice algorithms[] = {{"standard", RTCD_ALGORITHM_STANDARD},
                                                 {"iterative", RTCD_ALGORITHM_ITERATIVE},
                                                 {"predictive", RTCD_ALGORITHM_PREDICTIVE},
                                                 {NULL, 0}};
    const demo_cli_option opts[] = {
        {.name = "--objects", .type = DEMO_CLI_U32, .target = &objects, .meta = "N", .min = 2, .max = 2048,
         .help = "avalanche blobs (default 512)"},
        {.name = "--steps", .type = DEMO_CLI_U32, .target = &steps, .meta = "N", .min = 100, .max = 100000000u,
         .help = "avalanche steps; poses every 50 from step 100 (default 400)"},
        {.name = "--repetitions", .type = DEMO_CLI_U32, .target = &reps, .meta = "R", .min = 1, .max = 64,
         .help = "timed runs per snapshot, median (default 5)"},
        {.name = "--devices", .type = DEMO_CLI_STRING, .target = &spec, .meta = "SPEC",
         .help = "OpenCL devices: gpu|all|0:0,0:1... (default all)"},
        {.name = "--algorithm", .type = DEMO_CLI_ENUM, .target = &algorithm_opt, .choices = algorithms,
         .help = "the algorithm every backend runs (default predictive)"},
        {.name = "--threads", .type = DEMO_CLI_U32, .target = &threads, .meta = "N", .max = 1024,
         .help = "CPU reference threads of the threaded run and of the avalanche that makes the poses (default 0: all cores)"},
    };
    demo_cli cli = {argv[0], "The avalanche's narrow phase on the CPU reference, one OpenCL device and two; JSON.",
                    opts, sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    rtcd_algorithm algorithm = (rtcd_algorithm)algorithm_opt;
    if (!strchr(spec, '/')) {
        setenv("POCL_DEVICES", "pthread pthread", 0);
        setenv("POCL_MAX_PTHREAD_COUNT", "1", 0);
    }

    /* The avalanche on the CPU reference provides the poses. */
    demo_options wo;
    demo_default_options(DEMO_AVALANCHE, &wo);
    wo.backend = RTCD_BACKEND_CPU;
    wo.threads = threads;
    rtcd_world_def wd;
    demo_world_def(&wo, &wd);
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
    rtcd_narrowphase_def defs[RUNS];
    rtcd_batch* batches[RUNS] = {NULL};
    for (int k = 0; k < RUNS; ++k) {
        defs[k] = rtcd_default_narrowphase_def();
        defs[k].iterative.algorithm = algorithm;
        defs[k].backend = k <= CPU_ALL ? RTCD_BACKEND_CPU : RTCD_BACKEND_OPENCL;
        defs[k].threads = k == CPU_ONE ? 1 : threads;
        defs[k].devices = spec;
        defs[k].max_devices = k == CL_ONE ? 1 : 2;
        if (rtcd_batch_create(&defs[k], &batches[k]) != RTCD_OK) {
            fprintf(stderr, "bench_backends: %s: %s\n", run_names[k], rtcd_last_error_message());
            return 1;
        }
    }
    rtcd_transform* poses = malloc(objects * sizeof *poses);
    rtcd_pair_desc* pairs = malloc((size_t)objects * objects / 2 * sizeof *pairs);
    rtcd_pair_result* res[RUNS];
    for (int k = 0; k < RUNS; ++k) res[k] = malloc((size_t)objects * objects / 2 * sizeof *res[k]);
    if (!poses || !pairs || !res[0] || !res[1] || !res[2] || !res[3]) {
        fprintf(stderr, "bench_backends: out of memory\n");
        return 1;
    }
    double sum[RUNS] = {0};
    uint32_t snapshots = 0, pair_total = 0;
    int mismatch = 0, failed = 0;
    for (uint32_t step = 1; step <= steps; ++step) {
        rtcd_world_step(world);
        if (step < 100 || step % 50 != 0) continue;
        for (uint32_t b = 0; b < objects; ++b) rtcd_world_get_pose(world, b, &poses[b]);
        uint32_t n = scene_overlapping_pairs(body, poses, objects, pairs);
        double t[RUNS][64];
        for (uint32_t r = 0; r < reps; ++r) /* interleaved, so the runs share the machine's noise */
            for (int k = 0; k < RUNS; ++k) t[k][r] = run(batches[k], pairs, n, res[k], &failed);
        /* Same contacts, bit for bit, on every backend (same pair states: every run saw the same calls). */
        for (int k = 1; k < RUNS; ++k)
            for (uint32_t i = 0; i < n; ++i)
                mismatch |= res[k][i].contact_count != res[0][i].contact_count ||
                            memcmp(res[k][i].contacts, res[0][i].contacts,
                                   res[0][i].contact_count * sizeof res[0][i].contacts[0]) != 0;
        for (int k = 0; k < RUNS; ++k) sum[k] += median(t[k], (int)reps);
        pair_total += n;
        snapshots++;
    }
    if (failed) fprintf(stderr, "bench_backends: a narrow-phase call failed: %s\n", rtcd_last_error_message());
    /* "devices": what the two-device run actually used (PoCL or a machine
     * with one device may give fewer than two); their names follow. */
    uint32_t used1 = rtcd_batch_device_count(batches[CL_ONE]), used2 = rtcd_batch_device_count(batches[CL_TWO]);
    double mean[RUNS];
    for (int k = 0; k < RUNS; ++k) mean[k] = snapshots ? sum[k] / snapshots : 0.0;
    printf("{\"benchmark\":\"avalanche_narrowphase_backends\",\"algorithm\":\"%s\",\"objects\":%u,\"threads\":%u,"
           "\"snapshots\":%u,\"pairs_mean\":%.0f,\"repetitions\":%u",
           rtcd_algorithm_name(algorithm), objects, rtcd_batch_thread_count(batches[CPU_ALL]), snapshots,
           snapshots ? (double)pair_total / snapshots : 0.0, reps);
    for (int k = 0; k < RUNS; ++k) printf(",\"%s_ms\":%.3f", run_names[k], mean[k]);
    printf(",\"devices\":%u,\"opencl_1_devices\":%u,\"device_names\":[", used2, used1);
    for (uint32_t d = 0; d < used2; ++d) {
        char name[160];
        json_name(rtcd_batch_device_name(batches[CL_TWO], d), name, sizeof name);
        printf("%s\"%s\"", d ? "," : "", name);
    }
    printf("],\"threads_over_1_thread_speedup\":%.3f,\"two_over_one_device_speedup\":%.3f,"
           "\"opencl_1_over_cpu_1_speedup\":%.3f,\"contacts_equal\":%s}\n",
           mean[CPU_ALL] > 0 ? mean[CPU_ONE] / mean[CPU_ALL] : 0.0, mean[CL_TWO] > 0 ? mean[CL_ONE] / mean[CL_TWO] : 0.0,
           mean[CL_ONE] > 0 ? mean[CPU_ONE] / mean[CL_ONE] : 0.0, mismatch ? "false" : "true");
    free(poses);
    free(pairs);
    for (int k = 0; k < RUNS; ++k) {
        free(res[k]);
        rtcd_batch_release(batches[k]);
    }
    rtcd_shape_release(shape);
    rtcd_mesh_release(mesh);
    rtcd_world_destroy(world);
    return mismatch || failed;
}
