/* The avalanche's narrow phase on each backend, side by side in one run:
 * the CPU reference (single thread), OpenCL on one device and on two.
 * Poses come from a real 512-blob avalanche (Bullet through rtcd, CPU) at
 * several moments; each backend then runs exactly the same pair batches.
 * On a machine without GPUs, PoCL provides the devices: unless already set,
 * POCL_DEVICES="pthread pthread" and POCL_MAX_PTHREAD_COUNT=1 are set here
 * (one thread per device), before the first OpenCL call.
 * Every backend runs the same algorithm (--algorithm, default predictive):
 * the CPU reference as rtcd_collide_standard, or rtcd_collide_iterative with
 * one rtcd_pair_state per pair key kept while the key keeps appearing, as the
 * OpenCL backend keeps its per-pair state; then rtcd_reduce_contacts.
 * Usage: bench_backends [--objects N] [--steps N] [--repetitions R] [--devices "spec"]
 *                       [--algorithm standard|iterative|predictive] [--threads N] */
#include "demo_common.h"
#include "scene_util.h"

#include <rtcd/rtcd_opencl.h>
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

/* The CPU reference's per-pair state, by pair key (i << 32 | j, i < j < objects):
 * a pair keeps its state while its key appears in consecutive calls, as on
 * the OpenCL backend; a pair that skipped a call starts over. */
typedef struct cpu_states {
    rtcd_pair_state** state; /* objects * objects, index i * objects + j */
    uint32_t* last_call;     /* the call that last saw the pair (0: never) */
    uint32_t objects, call;
} cpu_states;

static double run_cpu(const rtcd_narrowphase_def* nd, const rtcd_iterative_def* idef, cpu_states* cs,
                      const rtcd_pair_desc* pairs, uint32_t n, rtcd_ray_hit* rays, rtcd_contact* contacts,
                      uint64_t* out_contacts, int* failed)
{
    double t0 = demo_now_ms();
    uint64_t total = 0;
    cs->call++;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t cap = rtcd_mesh_vertex_count(pairs[i].a) + rtcd_mesh_vertex_count(pairs[i].b), m = 0;
        rtcd_error err;
        if (idef->algorithm == RTCD_ALGORITHM_STANDARD) {
            err = rtcd_collide_standard(nd, pairs[i].a, &pairs[i].pose_a, pairs[i].b, &pairs[i].pose_b, rays, cap, &m,
                                        NULL);
        } else {
            size_t k = (size_t)(pairs[i].key >> 32) * cs->objects + (uint32_t)pairs[i].key;
            if (!cs->state[k]) err = rtcd_pair_state_create(&cs->state[k]);
            else {
                if (cs->last_call[k] + 1 != cs->call) rtcd_pair_state_reset(cs->state[k]);
                err = RTCD_OK;
            }
            cs->last_call[k] = cs->call;
            if (err == RTCD_OK)
                err = rtcd_collide_iterative(nd, idef, cs->state[k], pairs[i].a, &pairs[i].pose_a, pairs[i].b,
                                             &pairs[i].pose_b, rays, cap, &m, NULL);
        }
        if (err != RTCD_OK) *failed = 1;
        for (uint32_t k = 0; k < m; ++k) contacts[k] = rtcd_contact_from_ray(&rays[k], nd->contact_normal);
        rtcd_contact reduced[RTCD_MAX_MANIFOLD_POINTS];
        total += rtcd_reduce_contacts(contacts, m, reduced);
    }
    *out_contacts = total;
    return demo_now_ms() - t0;
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
         .help = "worker threads of the avalanche that makes the poses (default 0: all cores)"},
    };
    demo_cli cli = {argv[0], "The avalanche's narrow phase on the CPU reference, one OpenCL device and two; JSON.",
                    opts, sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    rtcd_algorithm algorithm = (rtcd_algorithm)algorithm_opt;
    setenv("POCL_DEVICES", "pthread pthread", 0);
    setenv("POCL_MAX_PTHREAD_COUNT", "1", 0);

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
    rtcd_opencl_def d1 = rtcd_default_opencl_def(), d2 = rtcd_default_opencl_def();
    d1.devices = d2.devices = spec;
    d1.max_devices = 1;
    d2.max_devices = 2;
    d1.iterative.algorithm = d2.iterative.algorithm = algorithm;
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    nd.traversal = d1.traversal;
    nd.contact_normal = d1.contact_normal;
    cpu_states cs = {calloc((size_t)objects * objects, sizeof(rtcd_pair_state*)),
                     calloc((size_t)objects * objects, sizeof(uint32_t)), objects, 0};
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
    if (!poses || !pairs || !res || !rays || !contacts || !cs.state || !cs.last_call) {
        fprintf(stderr, "bench_backends: out of memory\n");
        return 1;
    }
    double cpu_sum = 0, one_sum = 0, two_sum = 0;
    uint32_t snapshots = 0, pair_total = 0;
    int mismatch = 0, failed = 0;
    for (uint32_t step = 1; step <= steps; ++step) {
        rtcd_world_step(world);
        if (step < 100 || step % 50 != 0) continue;
        for (uint32_t b = 0; b < objects; ++b) rtcd_world_get_pose(world, b, &poses[b]);
        uint32_t n = scene_overlapping_pairs(body, poses, objects, pairs);
        double tc[64], t1[64], t2[64];
        uint64_t cpu_contacts = 0;
        for (uint32_t r = 0; r < reps; ++r) {
            /* interleaved, so the three share the machine's noise */
            tc[r] = run_cpu(&nd, &d1.iterative, &cs, pairs, n, rays, contacts, &cpu_contacts, &failed);
            double t = demo_now_ms();
            failed |= rtcd_opencl_collide(one, pairs, n, res, NULL) != RTCD_OK;
            t1[r] = demo_now_ms() - t;
            t = demo_now_ms();
            failed |= rtcd_opencl_collide(two, pairs, n, res, NULL) != RTCD_OK;
            t2[r] = demo_now_ms() - t;
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
    if (failed) fprintf(stderr, "bench_backends: a narrow-phase call failed: %s\n", rtcd_last_error_message());
    /* "devices": what the two-device run actually used (PoCL or a machine
     * with one device may give fewer than two); their names follow. */
    uint32_t used1 = rtcd_opencl_device_count(one), used2 = rtcd_opencl_device_count(two);
    printf("{\"benchmark\":\"avalanche_narrowphase_backends\",\"algorithm\":\"%s\",\"objects\":%u,\"threads\":%u,"
           "\"snapshots\":%u,\"pairs_mean\":%.0f,\"repetitions\":%u,\"cpu_reference_ms\":%.3f,\"opencl_1_device_ms\":%.3f,"
           "\"opencl_2_devices_ms\":%.3f,\"devices\":%u,\"opencl_1_devices\":%u,\"device_names\":[",
           rtcd_algorithm_name(algorithm), objects, threads, snapshots, snapshots ? (double)pair_total / snapshots : 0.0,
           reps, snapshots ? cpu_sum / snapshots : 0.0, snapshots ? one_sum / snapshots : 0.0,
           snapshots ? two_sum / snapshots : 0.0, used2, used1);
    for (uint32_t d = 0; d < used2; ++d) {
        char name[160];
        json_name(rtcd_opencl_device_name(two, d), name, sizeof name);
        printf("%s\"%s\"", d ? "," : "", name);
    }
    printf("],\"two_over_one_speedup\":%.3f,\"opencl_1_over_cpu_speedup\":%.3f,\"contacts_equal\":%s}\n",
           two_sum > 0 ? one_sum / two_sum : 0.0, one_sum > 0 ? cpu_sum / one_sum : 0.0, mismatch ? "false" : "true");
    for (size_t k = 0; k < (size_t)objects * objects; ++k) rtcd_pair_state_destroy(cs.state[k]);
    free(cs.state);
    free(cs.last_call);
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
    return mismatch || failed;
}
