/* The mixed scene (scenes/mixed.h: blobs, boxes, spheres, capsules, a convex
 * hull, cylinders, cones and the user's meshes on a one-sided terrain)
 * through rtcd and through Bullet's GImpact algorithm in the same run: the
 * same seed, objects and steps, each in its own world, through the demos'
 * run loop (demo_run_scene).
 *
 * Per run: step and narrow-phase ms (median and mean; and the mean over the
 * active steps, those before every body sleeps: a step of sleeping bodies
 * costs next to nothing whatever the narrow phase), penetration measured
 * independently of the narrow phase every K steps (max, mean depth of the
 * penetrating vertices, mean per-sample sum), bodies that passed through the
 * terrain (tunnelled), non-finite poses. The targets:
 *
 *   step_speedup_vs_gimpact: GImpact's mean step ms / rtcd's >= 5 (the
 *                            whole run's cost; the median, which sleeping
 *                            steps pull down, is among the ratios);
 *   lower_max_penetration:   rtcd's max penetration < GImpact's.
 *
 * Output: one JSON object on stdout; one progress line per run on stderr.
 * The exit code is 0 when both runs finished with finite poses, whatever the
 * targets.
 *
 * Usage: bench_mixed [--quick] [--objects N] [--steps N] [--seed N]
 *                    [--penetration-every K] [--backend auto|cpu|opencl]
 *                    [--devices N] [--threads N] [--mesh FILE]... [--mesh-scale S] */
#include "demo_common.h"

#include <stdio.h>
#include <string.h>

#define TARGET_STEP_SPEEDUP 5.0 /* GImpact median step ms / rtcd's */

enum { RUN_RTCD = 0, RUN_GIMPACT = 1, RUN_COUNT = 2 };

static const char* const run_key[RUN_COUNT] = {"rtcd", "gimpact"};

static double ratio(double num, double den)
{
    return den > 0 ? num / den : -1.0;
}

static void json_ratio(const char* key, double v, int valid)
{
    if (valid && v >= 0) printf("\"%s\":%.4f", key, v);
    else printf("\"%s\":null", key);
}

static void print_run_json(const demo_summary* r, int rc)
{
    int rtcd = !strcmp(r->narrowphase, "rtcd");
    printf("{\"narrowphase\":\"%s\",\"backend\":\"%s\",\"devices\":%u,\"device\":\"%s\",\"threads\":%u,", r->narrowphase,
           rtcd ? r->backend : "none", r->devices, r->device, r->threads);
    if (rtcd) printf("\"algorithm\":\"%s\",", rtcd_algorithm_name(r->algorithm));
    else printf("\"algorithm\":null,");
    printf("\"objects\":%u,\"steps\":%u,\"pose_checksum\":\"%016llx\",\"pairs_max\":%u,\"contacts_mean\":%.1f,"
           "\"narrowphase_ms_median\":%.4f,\"narrowphase_ms_mean\":%.4f,\"step_ms_median\":%.4f,\"step_ms_mean\":%.4f,"
           "\"step_ms_p95\":%.4f,\"first_step_ms\":%.3f,\"active_steps\":%u,\"step_ms_mean_active\":%.4f,"
           "\"narrowphase_ms_mean_active\":%.4f,\"penetration_sampled_every\":%u,\"penetration_max\":%.5f,"
           "\"penetration_mean\":%.6f,\"penetration_sum_mean\":%.5f,\"tunnelled\":%u,\"off_terrain\":%u,"
           "\"min_height\":%.5f,\"penetration_windows\":",
           r->objects, r->steps, (unsigned long long)r->pose_checksum, r->pairs_max, r->contacts_mean, r->np_median,
           r->np_mean, r->step_median, r->mean, r->p95, r->first_ms, r->active_steps, r->step_mean_active,
           r->np_mean_active, r->penetration_every, (double)r->pen_max,
           r->pen_mean, r->pen_sum_mean, r->tunnelled, r->off_terrain, (double)r->min_height);
    demo_print_penetration_windows_json(stdout, r);
    printf(",\"nan_detected\":%d,\"exit_code\":%d}", r->nan, rc);
}

int main(int argc, char** argv)
{
    int quick = 0, json = 0, backend = RTCD_BACKEND_AUTO;
    uint32_t objects = 0, steps = 0, devices = 0, threads = 0, pen_every = 10;
    int objects_set = 0, steps_set = 0;
    uint64_t seed = 1;
    demo_cli_list meshes;
    memset(&meshes, 0, sizeof meshes);
    float mesh_scale = 0.0f;
    static const demo_cli_choice backend_choices[] = {
        {"auto", RTCD_BACKEND_AUTO}, {"cpu", RTCD_BACKEND_CPU}, {"opencl", RTCD_BACKEND_OPENCL}, {NULL, 0}};
    const demo_cli_option opts[] = {
        {.name = "--quick", .type = DEMO_CLI_FLAG, .target = &quick, .help = "a smoke run: 24 objects, 120 steps"},
        {.name = "--objects", .type = DEMO_CLI_U32, .target = &objects, .meta = "N", .min = 1, .max = 1u << 20,
         .seen = &objects_set, .help = "bodies (default 64; 24 with --quick)"},
        {.name = "--steps", .type = DEMO_CLI_U32, .target = &steps, .meta = "N", .min = 1, .max = 100000000u,
         .seen = &steps_set, .help = "60 Hz steps (default 600; 120 with --quick)"},
        {.name = "--seed", .type = DEMO_CLI_U64, .target = &seed, .meta = "N", .help = "default 1"},
        {.name = "--penetration-every", .type = DEMO_CLI_U32, .target = &pen_every, .meta = "K", .min = 1,
         .max = 100000000u, .help = "measure penetration every K steps (default 10)"},
        {.name = "--backend", .type = DEMO_CLI_ENUM, .target = &backend, .choices = backend_choices,
         .help = "rtcd's backend (default auto)"},
        {.name = "--devices", .type = DEMO_CLI_U32, .target = &devices, .meta = "N", .max = 1024,
         .help = "OpenCL devices at most (default 0: all selected)"},
        {.name = "--threads", .type = DEMO_CLI_U32, .target = &threads, .meta = "N", .max = 1024,
         .help = "CPU worker threads (default 0: all cores)"},
        {.name = "--mesh", .type = DEMO_CLI_LIST, .target = &meshes, .meta = "FILE",
         .help = "model file (repeatable): each file a shape (several pieces: a compound), in the concave slots in turn with the blob"},
        {.name = "--mesh-scale", .type = DEMO_CLI_FLOAT, .target = &mesh_scale, .meta = "S", .fmin = 0.0, .fmax = 1e6,
         .help = "--mesh coordinates times S (default 0: each file fit to the blob's size, 0.5 m)"},
        {.name = "--json", .type = DEMO_CLI_FLAG, .target = &json, .help = "one JSON object on stdout (the default)"},
    };
    demo_cli cli = {argv[0],
                    "The mixed scene through rtcd and GImpact in one run: step and narrow-phase timings, penetration, "
                    "tunnelling.",
                    opts, sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    if (!objects_set) objects = quick ? 24 : 64;
    if (!steps_set) steps = quick ? 120 : 600;

    if (backend != RTCD_BACKEND_CPU) demo_warm_up(backend, devices, threads, seed);

    demo_summary runs[RUN_COUNT];
    int rcs[RUN_COUNT];
    int rc = 0;
    double t_start = demo_now_ms();
    for (int k = 0; k < RUN_COUNT; ++k) {
        demo_options o;
        demo_default_options(DEMO_MIXED, &o);
        o.objects = objects;
        o.steps = steps;
        o.seed = seed;
        o.backend = (rtcd_backend)backend;
        o.devices = devices;
        o.threads = threads;
        o.penetration_every = pen_every;
        o.meshes = meshes;
        o.mesh_scale = mesh_scale;
        o.quiet = 1;
        o.narrowphase = k == RUN_GIMPACT ? RTCD_NARROWPHASE_GIMPACT : RTCD_NARROWPHASE_RTCD;
        double t0 = demo_now_ms();
        rcs[k] = demo_run_scene(&o, &runs[k]);
        const demo_summary* r = &runs[k];
        if (rcs[k] && !r->steps) return rcs[k]; /* the scene could not be built (a --mesh file): said on stderr */
        fprintf(stderr,
                "bench_mixed: %s: %u steps, step %.3f ms median (%.3f mean), narrow phase %.3f ms median, "
                "max penetration %.4f m, %u tunnelled (%.1f s)%s\n",
                r->narrowphase, r->steps, r->step_median, r->mean, r->np_median, (double)r->pen_max, r->tunnelled,
                (demo_now_ms() - t0) / 1e3, !rcs[k] && !r->nan ? "" : " FAILED");
        rc |= rcs[k] || r->nan || !r->steps;
    }
    (void)json; /* JSON is the only output */

    const demo_summary* rt = &runs[RUN_RTCD];
    const demo_summary* gi = &runs[RUN_GIMPACT];
    int valid = !rcs[RUN_RTCD] && !rcs[RUN_GIMPACT] && !rt->nan && !gi->nan;
    double speedup = ratio(gi->mean, rt->mean);
    printf("{\"benchmark\":\"bench_mixed\",\"quick\":%s,\"seed\":%llu,\"objects\":%u,\"steps\":%u,"
           "\"penetration_every\":%u,\"backend_requested\":\"%s\",\"threads\":%u,\"user_meshes\":%u,"
           "\"terrain_triangles\":%u,\"triangles_total\":%llu,\"kinds\":{",
           quick ? "true" : "false", (unsigned long long)seed, objects, steps, pen_every,
           backend == RTCD_BACKEND_CPU ? "cpu" : (backend == RTCD_BACKEND_OPENCL ? "opencl" : "auto"), threads,
           rt->user_meshes, rt->terrain_triangles, (unsigned long long)rt->triangles_total);
    for (int k = 0; k < MIXED_KIND_COUNT; ++k)
        printf("%s\"%s\":%u", k ? "," : "", mixed_kind_name((mixed_kind)k), rt->kind_counts[k]);
    printf("},\"runs\":{");
    for (int k = 0; k < RUN_COUNT; ++k) {
        printf("%s\"%s\":", k ? "," : "", run_key[k]);
        print_run_json(&runs[k], rcs[k]);
    }
    printf("},\"ratios\":{");
    json_ratio("step_ms_median_gimpact_over_rtcd", ratio(gi->step_median, rt->step_median), valid);
    printf(",");
    json_ratio("step_ms_mean_gimpact_over_rtcd", speedup, valid);
    printf(",");
    json_ratio("step_ms_mean_active_gimpact_over_rtcd", ratio(gi->step_mean_active, rt->step_mean_active), valid);
    printf(",");
    json_ratio("narrowphase_ms_median_gimpact_over_rtcd", ratio(gi->np_median, rt->np_median), valid);
    printf(",");
    json_ratio("narrowphase_ms_mean_gimpact_over_rtcd", ratio(gi->np_mean, rt->np_mean), valid);
    printf(",");
    json_ratio("penetration_max_rtcd_over_gimpact", ratio(rt->pen_max, gi->pen_max), valid);
    printf("},\"targets\":{\"step_speedup_vs_gimpact\":{");
    json_ratio("value", speedup, valid);
    printf(",\"measure\":\"mean step ms over the run, gimpact / rtcd\",\"target\":%.1f,\"met\":%s},", TARGET_STEP_SPEEDUP,
           valid ? (speedup >= TARGET_STEP_SPEEDUP ? "true" : "false") : "null");
    printf("\"lower_max_penetration\":{\"rtcd\":%.5f,\"gimpact\":%.5f,\"met\":%s}},", (double)rt->pen_max,
           (double)gi->pen_max, valid ? (rt->pen_max < gi->pen_max ? "true" : "false") : "null");
    printf("\"tunnelled\":{\"rtcd\":%u,\"gimpact\":%u},\"nan_detected\":{\"rtcd\":%d,\"gimpact\":%d},", rt->tunnelled,
           gi->tunnelled, rt->nan, gi->nan);
    printf("\"wall_s\":%.1f,\"exit_code\":%d}\n", (demo_now_ms() - t_start) / 1e3, rc ? 1 : 0);
    fflush(stdout);
    return rc ? 1 : 0;
}
