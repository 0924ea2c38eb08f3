/* The avalanche's narrow phase on each backend, side by side in one run.
 * The default avalanche (demo_scene_create, Bullet through rtcd on the CPU)
 * is simulated once and every step's poses are recorded; then the recorded
 * steps are replayed, in order, through four batches that differ only in
 * where they run: the CPU reference on one thread and on --threads (default:
 * every core), OpenCL on one device and on two (--devices selects them; a
 * sub-device spec such as 0:0/2 splits one device). Each step the four run
 * the same pairs in a rotating order, so they share the machine's noise;
 * their reduced contacts are compared bit for bit every step (same calls,
 * same pair states). JSON: per run the mean and median ms per step, over all
 * steps and over the resting phase, the ratios, and each run's profile
 * (rtcd_batch_stats means per call: planning, devices, finishing).
 * Without --devices the two OpenCL runs take one and two of the first
 * device's sub-devices, split one per core ("0:0/N", N the cores online):
 * on PoCL's CPU device, one core each, like the CPU reference's one thread.
 * (Two "pthread" devices of one thread each share PoCL's one worker and run
 * one after the other: 0.97-0.99x for two against one, PoCL 3.1.) A first
 * device that does not split so (a GPU) leaves the default at all devices.
 * Usage: bench_backends [--objects N] [--steps N] [--devices SPEC] [--threads N]
 *                       [--algorithm standard|iterative|predictive] [--skip-opencl] */
#include "demo_common.h"
#include "scene_util.h"

#include <rtcd/rtcd_batch.h>
#include <rtcd/rtcd_world.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CPU_ONE, CPU_ALL, CL_ONE, CL_TWO, RUNS };
static const char* const run_names[RUNS] = {"cpu_1_thread", "cpu_threads", "opencl_1_device", "opencl_2_devices"};

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : (x > y);
}

static double median(const double* v, uint32_t n)
{
    if (!n) return 0.0;
    double* c = malloc(n * sizeof *c);
    if (!c) return 0.0;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static double mean(const double* v, uint32_t n)
{
    double s = 0.0;
    for (uint32_t i = 0; i < n; ++i) s += v[i];
    return n ? s / n : 0.0;
}

/* JSON-safe device name ("" when there is none). */
static void json_name(const char* in, char* out, size_t cap)
{
    size_t j = 0;
    for (; in && in[j] && j + 1 < cap; ++j)
        out[j] = (in[j] == '"' || in[j] == '\\' || (unsigned char)in[j] < 0x20) ? '_' : in[j];
    out[j] = '\0';
}

/* CPU time of the whole process (every thread: the CPU reference's workers,
 * PoCL's device threads), in ms. Beside the wall time: on a machine shared
 * with other work, waiting for a core inflates the wall time but not this;
 * with one worker thread the two runs' CPU times compare like for like. */
static double process_cpu_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0.0;
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* The first pair whose contacts differ, or n when all agree. */
static uint32_t first_difference(const rtcd_pair_result* x, const rtcd_pair_result* y, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i)
        if (x[i].contact_count != y[i].contact_count ||
            memcmp(x[i].contacts, y[i].contacts, x[i].contact_count * sizeof x[i].contacts[0]) != 0)
            return i;
    return n;
}

static void print_contacts(const char* run, const rtcd_pair_result* r)
{
    for (uint32_t c = 0; c < r->contact_count; ++c) {
        const rtcd_contact* k = &r->contacts[c];
        fprintf(stderr, "  %s: feature %08x depth %.9g point %.9g %.9g %.9g normal %.9g %.9g %.9g\n", run, k->feature,
                k->depth, k->point_on_b[0], k->point_on_b[1], k->point_on_b[2], k->normal_on_b[0], k->normal_on_b[1],
                k->normal_on_b[2]);
    }
}

/* What a reader needs to replay a disagreement: the step, the pair and both
 * sides' counts and contacts (stderr; the JSON line says contacts_equal). */
static void report_difference(uint32_t step, const rtcd_pair_desc* pair, int run, const rtcd_pair_result* x,
                              const rtcd_pair_result* y)
{
    fprintf(stderr,
            "bench_backends: step %u, pair key %#llx: %s and %s differ: contacts %u/%u, standard pass %u/%u, "
            "crossing contacts %u/%u, colliding rays %u/%u\n",
            step, (unsigned long long)pair->key, run_names[CPU_ONE], run_names[run], x->contact_count, y->contact_count,
            x->standard_pass, y->standard_pass, x->crossing_contacts, y->crossing_contacts, x->colliding_rays,
            y->colliding_rays);
    print_contacts(run_names[CPU_ONE], x);
    print_contacts(run_names[run], y);
}

int main(int argc, char** argv)
{
    demo_options wo;
    demo_default_options(DEMO_AVALANCHE, &wo);
    uint32_t threads = 0;
    int skip_opencl = 0;
    static const char default_spec[] = "all";
    const char* spec = default_spec;
    int algorithm_opt = RTCD_ALGORITHM_PREDICTIVE;
    static const demo_cli_choice algorithms[] = {{"standard", RTCD_ALGORITHM_STANDARD},
                                                 {"iterative", RTCD_ALGORITHM_ITERATIVE},
                                                 {"predictive", RTCD_ALGORITHM_PREDICTIVE},
                                                 {NULL, 0}};
    const demo_cli_option opts[] = {
        {.name = "--objects", .type = DEMO_CLI_U32, .target = &wo.objects, .meta = "N", .min = 2, .max = 4096,
         .help = "avalanche blobs (default 512)"},
        {.name = "--steps", .type = DEMO_CLI_U32, .target = &wo.steps, .meta = "N", .min = 1, .max = 100000,
         .help = "avalanche steps recorded and replayed (default 600)"},
        {.name = "--devices", .type = DEMO_CLI_STRING, .target = &spec, .meta = "SPEC",
         .help = "OpenCL devices of the two OpenCL runs: gpu|all|P:D,...|P:D/N (default 0:0 split one per core, "
                 "else all)"},
        {.name = "--algorithm", .type = DEMO_CLI_ENUM, .target = &algorithm_opt, .choices = algorithms,
         .help = "the algorithm every run uses (default predictive)"},
        {.name = "--threads", .type = DEMO_CLI_U32, .target = &threads, .meta = "N", .max = 1024,
         .help = "CPU reference threads of the threaded run (default 0: all cores)"},
        {.name = "--skip-opencl", .type = DEMO_CLI_FLAG, .target = &skip_opencl,
         .help = "only the two CPU runs (machines without OpenCL)"},
    };
    demo_cli cli = {argv[0], "The avalanche's narrow phase on the CPU reference (1 and N threads) and OpenCL (1 and 2 "
                             "devices), replaying the same recorded steps; JSON.",
                    opts, sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    rtcd_algorithm algorithm = (rtcd_algorithm)algorithm_opt;
    /* The default: the first device split one per core (see the top). */
    char split[32];
    int split_default = spec == default_spec;
    if (split_default) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(split, sizeof split, "0:0/%ld", cores > 2 ? cores : 2L);
        spec = split;
    }
    int runs = skip_opencl ? CL_ONE : RUNS;

    /* The avalanche on the CPU reference: every step's poses. */
    wo.backend = RTCD_BACKEND_CPU;
    wo.algorithm = algorithm;
    wo.threads = threads;
    demo_scene scene;
    if (demo_scene_create(&wo, &scene) != RTCD_OK) {
        fprintf(stderr, "bench_backends: %s\n", rtcd_last_error_message());
        demo_scene_destroy(&scene);
        return 1;
    }
    uint32_t bodies = rtcd_world_body_count(scene.world), steps = wo.steps;
    rtcd_transform* poses = malloc((size_t)steps * bodies * sizeof *poses);
    if (!poses) {
        fprintf(stderr, "bench_backends: out of memory for %u steps of poses\n", steps);
        return 1;
    }
    for (uint32_t s = 0; s < steps; ++s) {
        if (rtcd_world_step(scene.world) != RTCD_OK) {
            fprintf(stderr, "bench_backends: step %u: %s\n", s, rtcd_last_error_message());
            return 1;
        }
        for (uint32_t b = 0; b < bodies; ++b) rtcd_world_get_pose(scene.world, b, &poses[(size_t)s * bodies + b]);
    }
    const rtcd_mesh* body = rtcd_shape_body_mesh(scene.shapes[0]);

    rtcd_batch* batches[RUNS] = {NULL};
    for (int k = 0; k < runs; ++k) {
        rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
        def.iterative.algorithm = algorithm;
        def.backend = k <= CPU_ALL ? RTCD_BACKEND_CPU : RTCD_BACKEND_OPENCL;
        def.threads = k == CPU_ONE ? 1 : threads;
        def.devices = spec;
        def.max_devices = k == CL_ONE ? 1 : 2;
        rtcd_error made = rtcd_batch_create(&def, &batches[k]);
        if (made != RTCD_OK && k == CL_ONE && split_default) {
            fprintf(stderr, "bench_backends: %s: %s; all devices instead\n", spec, rtcd_last_error_message());
            spec = def.devices = default_spec;
            made = rtcd_batch_create(&def, &batches[k]);
        }
        if (made != RTCD_OK) {
            fprintf(stderr, "bench_backends: %s: %s\n", run_names[k], rtcd_last_error_message());
            return 1;
        }
    }
    size_t max_pairs = (size_t)bodies * (bodies - 1) / 2;
    rtcd_pair_desc* pairs = malloc(max_pairs * sizeof *pairs);
    rtcd_pair_result* res[RUNS] = {NULL};
    double* ms[RUNS] = {NULL};
    double* cpu_ms[RUNS] = {NULL}; /* the process's CPU time per call */
    int oom = !pairs;
    for (int k = 0; k < runs; ++k) {
        res[k] = malloc(max_pairs * sizeof *res[k]);
        ms[k] = malloc(steps * sizeof *ms[k]);
        cpu_ms[k] = malloc(steps * sizeof *cpu_ms[k]);
        oom |= !res[k] || !ms[k] || !cpu_ms[k];
    }
    if (oom) {
        fprintf(stderr, "bench_backends: out of memory\n");
        return 1;
    }
    uint64_t pair_total = 0;
    int mismatch = 0, failed = 0;
    batch_profile profile[RUNS];
    uint64_t rays[RUNS] = {0}, standard[RUNS] = {0}; /* rays cast and standard passes, all steps */
    memset(profile, 0, sizeof profile);
    for (uint32_t s = 0; s < steps; ++s) {
        uint32_t n = scene_overlapping_pairs(body, poses + (size_t)s * bodies, bodies, pairs);
        pair_total += n;
        for (int r = 0; r < runs; ++r) {
            int k = (int)((s + (uint32_t)r) % (uint32_t)runs); /* rotating order */
            double t = demo_now_ms(), c = process_cpu_ms();
            if (rtcd_batch_collide(batches[k], pairs, n, res[k], NULL) != RTCD_OK) {
                if (!failed) fprintf(stderr, "bench_backends: %s: %s\n", run_names[k], rtcd_last_error_message());
                failed = 1;
            }
            ms[k][s] = demo_now_ms() - t;
            cpu_ms[k][s] = process_cpu_ms() - c;
            rtcd_batch_stats st = rtcd_batch_last_stats(batches[k]);
            batch_profile_add(&profile[k], &st);
            for (uint32_t i = 0; i < n; ++i) {
                rays[k] += res[k][i].rays_cast;
                standard[k] += res[k][i].standard_pass;
            }
        }
        for (int k = 1; k < runs; ++k) {
            uint32_t i = first_difference(res[0], res[k], n);
            if (i < n && !mismatch) report_difference(s, &pairs[i], k, &res[0][i], &res[k][i]);
            mismatch |= i < n;
        }
    }
    uint32_t rest = steps < DEMO_RESTING_STEPS ? steps : DEMO_RESTING_STEPS;
    double m[RUNS] = {0}, rm[RUNS] = {0};
    printf("{\"benchmark\":\"avalanche_narrowphase_backends\",\"algorithm\":\"%s\",\"objects\":%u,\"steps\":%u,"
           "\"resting_steps\":%u,\"pairs_mean\":%.0f,\"threads\":%u",
           rtcd_algorithm_name(algorithm), bodies, steps, rest, steps ? (double)pair_total / steps : 0.0,
           rtcd_batch_thread_count(batches[CPU_ALL]));
    for (int k = 0; k < runs; ++k) {
        m[k] = mean(ms[k], steps);
        rm[k] = mean(ms[k] + (steps - rest), rest);
        printf(",\"%s_ms_mean\":%.3f,\"%s_ms_median\":%.3f,\"%s_ms_resting\":%.3f,", run_names[k], m[k], run_names[k],
               median(ms[k], steps), run_names[k], rm[k]);
        printf("\"%s_cpu_ms_median\":%.3f,\"%s_profile\":", run_names[k], median(cpu_ms[k], steps), run_names[k]);
        batch_profile_print_json(stdout, &profile[k]);
        printf(",\"%s_rays_per_step\":%.0f,\"%s_standard_passes_per_step\":%.1f", run_names[k],
               steps ? (double)rays[k] / steps : 0.0, run_names[k], steps ? (double)standard[k] / steps : 0.0);
    }
    printf(",\"threads_over_1_thread_speedup\":%.3f,\"threads_over_1_thread_speedup_resting\":%.3f",
           m[CPU_ALL] > 0 ? m[CPU_ONE] / m[CPU_ALL] : 0.0, rm[CPU_ALL] > 0 ? rm[CPU_ONE] / rm[CPU_ALL] : 0.0);
    if (runs == RUNS) {
        uint32_t used1 = rtcd_batch_device_count(batches[CL_ONE]), used2 = rtcd_batch_device_count(batches[CL_TWO]);
        printf(",\"devices\":%u,\"opencl_1_devices\":%u,\"device_names\":[", used2, used1);
        for (uint32_t d = 0; d < used2; ++d) {
            char name[160];
            json_name(rtcd_batch_device_name(batches[CL_TWO], d), name, sizeof name);
            printf("%s\"%s\"", d ? "," : "", name);
        }
        printf("],\"two_over_one_device_speedup\":%.3f,\"opencl_1_over_cpu_1_speedup\":%.3f",
               m[CL_TWO] > 0 ? m[CL_ONE] / m[CL_TWO] : 0.0, m[CL_ONE] > 0 ? m[CPU_ONE] / m[CL_ONE] : 0.0);
        /* The acceptance ratio of the GPU issue: medians, OpenCL over the CPU reference, one thread each. */
        double cm = median(ms[CPU_ONE], steps), om = median(ms[CL_ONE], steps);
        double ccm = median(cpu_ms[CPU_ONE], steps), ocm = median(cpu_ms[CL_ONE], steps);
        printf(",\"opencl_1_over_cpu_1_median_ratio\":%.3f,\"opencl_1_over_cpu_1_cpu_time_median_ratio\":%.3f",
               cm > 0 ? om / cm : 0.0, ccm > 0 ? ocm / ccm : 0.0);
    }
    printf(",\"contacts_equal\":%s}\n", mismatch ? "false" : "true");
    free(poses);
    free(pairs);
    for (int k = 0; k < runs; ++k) {
        free(res[k]);
        free(ms[k]);
        free(cpu_ms[k]);
        rtcd_batch_release(batches[k]);
    }
    demo_scene_destroy(&scene);
    return mismatch || failed;
}
