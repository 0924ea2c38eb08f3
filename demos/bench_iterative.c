/* The iterative and predictive algorithms against the standard one, side by
 * side in one run, on the paper's two scenes (JVRC 2013): the avalanche (512
 * blobs, 600 steps) and the spawner (3000 steps). Every configuration runs in
 * its own world from the same seed, through the demos' scene code:
 *
 *   algorithm {standard, iterative, predictive} x backend {CPU reference,
 *   OpenCL when present (as resolved by the world: PoCL on a machine without
 *   GPUs)}, adaptive parameters; and iterative, predictive with fixed
 *   parameters on the CPU reference.
 *
 * Timed runs never use checking mode (it adds the standard algorithm's cost).
 * With --check every configuration runs a second time in checking mode for the
 * incorrect-ray percentage and the cumulative ray length (the standard
 * algorithm's colliding rays on the poses the configuration produced, the
 * paper's interpenetration measure). Without --check the cumulative ray
 * length is the configuration's own rays ("source": "own") and no incorrect
 * rays are reported.
 *
 * Prints one JSON object on stdout; one progress line per run on stderr.
 * Usage: bench_iterative [--quick] [--check] [--backend cpu|opencl|all]
 *                        [--scenes avalanche|spawner|all] [--objects N]
 *                        [--avalanche-steps N] [--spawner-steps N] [--seed N] [--devices N]
 *                        [--threads N] [--traversal bvh|brute-force] */
#include "demo_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_RESTING_SPEEDUP 10.0   /* standard / predictive narrow phase, avalanche resting phase */
#define TARGET_INCORRECT_REDUCTION 80.0 /* percent fewer incorrect rays, predictive vs iterative */
#define TARGET_LENGTH_REDUCTION 40.0  /* percent less cumulative ray length, predictive vs iterative */

typedef struct bench_run {
    demo_scene_kind scene;
    rtcd_backend backend;         /* requested */
    rtcd_algorithm algorithm;
    int adaptive;
    int rc;
    demo_summary timed;           /* without checking mode */
    int has_check;
    demo_summary checked;         /* with checking mode (--check) */
} bench_run;

static void print_num(double v, int valid, const char* fmt)
{
    if (valid) printf(fmt, v);
    else printf("null");
}

static double incorrect_pct(const demo_summary* s)
{
    return s->check_rays ? 100.0 * (double)s->check_incorrect / (double)s->check_rays : 0.0;
}

/* Share of the pair-steps that walked their kept rays instead of a standard pass. */
static double iterative_share(const demo_summary* s)
{
    uint64_t all = s->iterative_pair_steps + s->standard_pair_steps;
    return all ? (double)s->iterative_pair_steps / (double)all : 0.0;
}

static const bench_run* find_run(const bench_run* runs, uint32_t n, demo_scene_kind scene, rtcd_backend backend,
                                 rtcd_algorithm algorithm, int adaptive)
{
    for (uint32_t i = 0; i < n; ++i)
        if (runs[i].scene == scene && runs[i].backend == backend && runs[i].algorithm == algorithm &&
            runs[i].adaptive == adaptive && runs[i].timed.steps)
            return &runs[i];
    return NULL;
}

static const char* backend_option(rtcd_backend b)
{
    return b == RTCD_BACKEND_OPENCL ? "opencl" : "cpu";
}

static void print_run(const bench_run* r)
{
    const demo_summary* t = &r->timed;
    printf("{\"algorithm\":\"%s\",\"params\":\"%s\",\"backend_requested\":\"%s\",\"backend\":\"%s\",\"devices\":%u,"
           "\"device\":\"%s\",\"threads\":%u,\"objects\":%u,\"steps\":%u,\"pose_checksum\":\"%016llx\",\"pairs_max\":%u,"
           "\"narrowphase_ms_mean\":%.4f,\"narrowphase_ms_median\":%.4f,\"narrowphase_ms_resting\":%.4f,"
           "\"resting_steps\":%u,\"ms_per_step_mean\":%.4f,\"first_step_ms\":%.3f,"
           "\"standard_ms_total\":%.3f,\"iterative_ms_total\":%.3f,\"standard_pair_steps\":%llu,"
           "\"iterative_pair_steps\":%llu,\"predictive_rays\":%llu,\"walk_steps\":%llu,\"kept_rays\":%llu,"
           "\"rays_cast_mean\":%.1f,\"colliding_rays_mean\":%.1f,\"own_ray_length_total\":%.6f,\"nan_detected\":%d,",
           rtcd_algorithm_name(r->algorithm), r->adaptive ? "adaptive" : "fixed", backend_option(r->backend), t->backend,
           t->devices, t->device, t->threads, t->objects, t->steps, (unsigned long long)t->pose_checksum, t->pairs_max, t->np_mean, t->np_median, t->np_resting,
           t->resting_steps, t->mean, t->first_ms, t->standard_ms_total, t->iterative_ms_total,
           (unsigned long long)t->standard_pair_steps, (unsigned long long)t->iterative_pair_steps,
           (unsigned long long)t->predictive_rays, (unsigned long long)t->walk_steps,
           (unsigned long long)t->kept_rays, t->rays_mean, t->colliding_mean, t->ray_length_total, t->nan);
    if (r->has_check) {
        const demo_summary* c = &r->checked;
        printf("\"checked\":{\"steps\":%u,\"pose_checksum\":\"%016llx\",\"check_rays\":%llu,\"check_incorrect\":%llu,"
               "\"incorrect_rays_pct\":",
               c->steps, (unsigned long long)c->pose_checksum, (unsigned long long)c->check_rays,
               (unsigned long long)c->check_incorrect);
        print_num(incorrect_pct(c), c->check_rays > 0, "%.4f");
        printf(",\"cumulative_ray_length\":%.6f,\"cumulative_ray_length_source\":\"standard\",\"nan_detected\":%d},",
               c->check_ray_length_total, c->nan);
        printf("\"incorrect_rays_pct\":");
        print_num(incorrect_pct(c), c->check_rays > 0, "%.4f");
        printf(",\"cumulative_ray_length\":%.6f,\"cumulative_ray_length_source\":\"standard\",", c->check_ray_length_total);
    } else {
        printf("\"checked\":null,\"incorrect_rays_pct\":null,\"cumulative_ray_length\":%.6f,"
               "\"cumulative_ray_length_source\":\"own\",",
               t->ray_length_total);
    }
    printf("\"exit_code\":%d}", r->rc);
}

/* Reduction in percent from `from` to `to` as "<prefix>_reduction_pct",
 * "<prefix>_target_pct", "<prefix>_met"; null when not valid or from is 0. */
static void print_reduction(const char* prefix, double from, double to, int valid, double target)
{
    int ok = valid && from > 0;
    double red = ok ? 100.0 * (from - to) / from : 0.0;
    printf(",\"%s_reduction_pct\":", prefix);
    print_num(red, ok, "%.2f");
    printf(",\"%s_target_pct\":%.0f,\"%s_met\":%s", prefix, target, prefix,
           ok ? (red >= target ? "true" : "false") : "null");
}

static void print_comparisons(const bench_run* runs, uint32_t n, demo_scene_kind scene, int check, int opencl)
{
    rtcd_backend backends[2] = {RTCD_BACKEND_CPU, RTCD_BACKEND_OPENCL};
    int first = 1;
    /* standard / predictive narrow-phase time (adaptive parameters), per backend */
    printf("\"speedup_standard_over_predictive\":[");
    for (int b = 0; b < 1 + opencl; ++b) {
        const bench_run* s = find_run(runs, n, scene, backends[b], RTCD_ALGORITHM_STANDARD, 1);
        const bench_run* p = find_run(runs, n, scene, backends[b], RTCD_ALGORITHM_PREDICTIVE, 1);
        const bench_run* it = find_run(runs, n, scene, backends[b], RTCD_ALGORITHM_ITERATIVE, 1);
        if (!s || !p) continue;
        if (!first) printf(",");
        first = 0;
        double rest = p->timed.np_resting > 0 ? s->timed.np_resting / p->timed.np_resting : 0.0;
        double mean = p->timed.np_mean > 0 ? s->timed.np_mean / p->timed.np_mean : 0.0;
        printf("{\"backend\":\"%s\",\"resting_steps\":%u,\"standard_ms_resting\":%.4f,\"predictive_ms_resting\":%.4f,"
               "\"ratio_resting\":",
               p->timed.backend, p->timed.resting_steps, s->timed.np_resting, p->timed.np_resting);
        print_num(rest, p->timed.np_resting > 0, "%.3f");
        printf(",\"ratio_mean\":");
        print_num(mean, p->timed.np_mean > 0, "%.3f");
        printf(",\"ratio_resting_iterative\":");
        print_num(it && it->timed.np_resting > 0 ? s->timed.np_resting / it->timed.np_resting : 0.0,
                  it && it->timed.np_resting > 0, "%.3f");
        /* the target is the avalanche's resting phase; the spawner never rests */
        if (scene == DEMO_AVALANCHE)
            printf(",\"target_ratio\":%.0f,\"met\":%s}", TARGET_RESTING_SPEEDUP,
                   p->timed.np_resting > 0 ? (rest >= TARGET_RESTING_SPEEDUP ? "true" : "false") : "null");
        else printf(",\"target_ratio\":null,\"met\":null}");
    }
    printf("]");
    /* iterative vs predictive: incorrect rays (check only) and cumulative ray length */
    printf(",\"predictive_vs_iterative\":[");
    first = 1;
    for (int b = 0; b < 1 + opencl; ++b) {
        for (int adaptive = 1; adaptive >= 0; --adaptive) {
            const bench_run* it = find_run(runs, n, scene, backends[b], RTCD_ALGORITHM_ITERATIVE, adaptive);
            const bench_run* p = find_run(runs, n, scene, backends[b], RTCD_ALGORITHM_PREDICTIVE, adaptive);
            if (!it || !p) continue;
            if (!first) printf(",");
            first = 0;
            int checked = check && it->has_check && p->has_check;
            printf("{\"backend\":\"%s\",\"params\":\"%s\"", p->timed.backend, adaptive ? "adaptive" : "fixed");
            if (checked) {
                int valid = it->checked.check_rays > 0 && p->checked.check_rays > 0;
                double ip = incorrect_pct(&it->checked), pp = incorrect_pct(&p->checked);
                printf(",\"incorrect_rays_pct_iterative\":");
                print_num(ip, valid, "%.4f");
                printf(",\"incorrect_rays_pct_predictive\":");
                print_num(pp, valid, "%.4f");
                print_reduction("incorrect_rays", ip, pp, valid, TARGET_INCORRECT_REDUCTION);
            } else {
                printf(",\"incorrect_rays_pct_iterative\":null,\"incorrect_rays_pct_predictive\":null");
                print_reduction("incorrect_rays", 0, 0, 0, TARGET_INCORRECT_REDUCTION);
            }
            double li = checked ? it->checked.check_ray_length_total : it->timed.ray_length_total;
            double lp = checked ? p->checked.check_ray_length_total : p->timed.ray_length_total;
            printf(",\"cumulative_ray_length_source\":\"%s\",\"cumulative_ray_length_iterative\":%.6f,"
                   "\"cumulative_ray_length_predictive\":%.6f",
                   checked ? "standard" : "own", li, lp);
            print_reduction("cumulative_ray_length", li, lp, 1, TARGET_LENGTH_REDUCTION);
            printf("}");
        }
    }
    printf("]");
    /* fixed vs adaptive parameters (CPU reference) */
    printf(",\"adaptive_vs_fixed\":[");
    first = 1;
    for (int a = 1; a < 3; ++a) {
        rtcd_algorithm alg = a == 1 ? RTCD_ALGORITHM_ITERATIVE : RTCD_ALGORITHM_PREDICTIVE;
        const bench_run* ad = find_run(runs, n, scene, RTCD_BACKEND_CPU, alg, 1);
        const bench_run* fx = find_run(runs, n, scene, RTCD_BACKEND_CPU, alg, 0);
        if (!ad || !fx) continue;
        if (!first) printf(",");
        first = 0;
        int checked = check && ad->has_check && fx->has_check;
        printf("{\"algorithm\":\"%s\",\"backend\":\"cpu\",\"adaptive_ms_mean\":%.4f,\"fixed_ms_mean\":%.4f,"
               "\"adaptive_ms_resting\":%.4f,\"fixed_ms_resting\":%.4f,\"adaptive_iterative_pair_share\":%.4f,"
               "\"fixed_iterative_pair_share\":%.4f,\"adaptive_incorrect_rays_pct\":",
               rtcd_algorithm_name(alg), ad->timed.np_mean, fx->timed.np_mean, ad->timed.np_resting,
               fx->timed.np_resting,
               iterative_share(&ad->timed), iterative_share(&fx->timed));
        print_num(checked ? incorrect_pct(&ad->checked) : 0.0, checked && ad->checked.check_rays > 0, "%.4f");
        printf(",\"fixed_incorrect_rays_pct\":");
        print_num(checked ? incorrect_pct(&fx->checked) : 0.0, checked && fx->checked.check_rays > 0, "%.4f");
        printf(",\"cumulative_ray_length_source\":\"%s\",\"adaptive_cumulative_ray_length\":%.6f,"
               "\"fixed_cumulative_ray_length\":%.6f}",
               checked ? "standard" : "own", checked ? ad->checked.check_ray_length_total : ad->timed.ray_length_total,
               checked ? fx->checked.check_ray_length_total : fx->timed.ray_length_total);
    }
    printf("]");
}

enum { BACKENDS_CPU = 1, BACKENDS_OPENCL = 2, BACKENDS_ALL = 3 };
enum { SCENES_AVALANCHE = 1, SCENES_SPAWNER = 2, SCENES_ALL = 3 };

int main(int argc, char** argv)
{
    int quick = 0, check = 0, backends = BACKENDS_ALL, scene_set = SCENES_ALL, traversal_opt = RTCD_TRAVERSAL_BVH;
    uint32_t objects = 0, av_steps = 0, sp_steps = 0, devices = 0, threads = 0;
    int objects_set = 0, av_set = 0, sp_set = 0;
    uint64_t seed = 1;
    static const demo_cli_choice backend_choices[] = {
        {"cpu", BACKENDS_CPU}, {"opencl", BACKENDS_OPENCL}, {"all", BACKENDS_ALL}, {NULL, 0}};
    static const demo_cli_choice scene_choices[] = {
        {"avalanche", SCENES_AVALANCHE}, {"spawner", SCENES_SPAWNER}, {"all", SCENES_ALL}, {NULL, 0}};
    static const demo_cli_choice traversal_choices[] = {
        {"bvh", RTCD_TRAVERSAL_BVH}, {"brute-force", RTCD_TRAVERSAL_BRUTE_FORCE}, {NULL, 0}};
    const demo_cli_option opts[] = {
        {.name = "--quick", .type = DEMO_CLI_FLAG, .target = &quick,
         .help = "64 blobs, 120 avalanche and 120 spawner steps"},
        {.name = "--check", .type = DEMO_CLI_FLAG, .target = &check,
         .help = "every configuration again in checking mode"},
        {.name = "--backend", .type = DEMO_CLI_ENUM, .target = &backends, .choices = backend_choices,
         .help = "backends to run (default all)"},
        {.name = "--scenes", .type = DEMO_CLI_ENUM, .target = &scene_set, .choices = scene_choices,
         .help = "scenes to run (default all)"},
        {.name = "--traversal", .type = DEMO_CLI_ENUM, .target = &traversal_opt, .choices = traversal_choices,
         .help = "ray traversal (default bvh)"},
        {.name = "--objects", .type = DEMO_CLI_U32, .target = &objects, .meta = "N", .min = 1, .max = 1u << 20,
         .seen = &objects_set, .help = "avalanche bodies (default 512; 64 with --quick)"},
        {.name = "--avalanche-steps", .type = DEMO_CLI_U32, .target = &av_steps, .meta = "N", .min = 1,
         .max = 100000000u, .seen = &av_set, .help = "default 600 (120 with --quick)"},
        {.name = "--spawner-steps", .type = DEMO_CLI_U32, .target = &sp_steps, .meta = "N", .min = 1,
         .max = 100000000u, .seen = &sp_set, .help = "default 3000 (120 with --quick)"},
        {.name = "--seed", .type = DEMO_CLI_U64, .target = &seed, .meta = "N", .help = "default 1"},
        {.name = "--devices", .type = DEMO_CLI_U32, .target = &devices, .meta = "N", .max = 1024,
         .help = "OpenCL devices at most (default 0: all selected)"},
        {.name = "--threads", .type = DEMO_CLI_U32, .target = &threads, .meta = "N", .max = 1024,
         .help = "CPU worker threads (default 0: all cores)"},
    };
    demo_cli cli = {argv[0], "Standard vs iterative vs predictive on the avalanche and the spawner; JSON on stdout.",
                    opts, sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    int want_cpu = (backends & BACKENDS_CPU) != 0, want_opencl = (backends & BACKENDS_OPENCL) != 0;
    int want_av = (scene_set & SCENES_AVALANCHE) != 0, want_sp = (scene_set & SCENES_SPAWNER) != 0;
    rtcd_traversal traversal = (rtcd_traversal)traversal_opt;
    if (!objects_set) objects = quick ? 64 : 512;
    if (!av_set) av_steps = quick ? 120 : 600;
    if (!sp_set) sp_steps = quick ? 120 : 3000;

    /* Which OpenCL backend the worlds resolve to, if any. The probe also
     * runs a few steps with contacts, so that the kernels' first build
     * (hundreds of ms on PoCL, cached afterwards) does not land in the first
     * timed OpenCL run. */
    int opencl = 0;
    char cl_device[160] = "";
    uint32_t cl_devices = 0;
    if (want_opencl) {
        demo_options probe;
        demo_default_options(DEMO_AVALANCHE, &probe);
        probe.objects = 8;
        probe.backend = RTCD_BACKEND_OPENCL;
        probe.devices = devices;
        probe.threads = threads;
        demo_scene s;
        if (demo_scene_create(&probe, &s) == RTCD_OK && rtcd_world_backend(s.world) == RTCD_BACKEND_OPENCL) {
            for (uint32_t step = 0; step < 40; ++step)
                if (rtcd_world_step(s.world) != RTCD_OK) break;
            opencl = 1;
            cl_devices = rtcd_world_device_count(s.world);
            const char* dn = cl_devices ? rtcd_world_device_name(s.world, 0) : "";
            size_t j = 0;
            for (; dn && dn[j] && j + 1 < sizeof cl_device; ++j)
                cl_device[j] = (dn[j] == '"' || dn[j] == '\\' || (unsigned char)dn[j] < 0x20) ? '_' : dn[j];
            cl_device[j] = '\0';
        }
        demo_scene_destroy(&s);
        if (!opencl) fprintf(stderr, "bench_iterative: no OpenCL backend resolved; CPU reference only\n");
    }
    if (!want_cpu && !opencl) {
        fprintf(stderr, "bench_iterative: --backend opencl but no OpenCL device could be used\n");
        return 1;
    }

    /* The configurations. */
    bench_run runs[2 * (6 + 2)];
    uint32_t n = 0;
    demo_scene_kind scenes[2] = {DEMO_AVALANCHE, DEMO_SPAWNER};
    rtcd_algorithm algs[3] = {RTCD_ALGORITHM_STANDARD, RTCD_ALGORITHM_ITERATIVE, RTCD_ALGORITHM_PREDICTIVE};
    for (int sc = 0; sc < 2; ++sc) {
        if ((sc == 0 && !want_av) || (sc == 1 && !want_sp)) continue;
        for (int b = 0; b < 2; ++b) {
            if ((b == 0 && !want_cpu) || (b == 1 && !opencl)) continue;
            for (int a = 0; a < 3; ++a) {
                memset(&runs[n], 0, sizeof runs[n]);
                runs[n].scene = scenes[sc];
                runs[n].backend = b ? RTCD_BACKEND_OPENCL : RTCD_BACKEND_CPU;
                runs[n].algorithm = algs[a];
                runs[n].adaptive = 1;
                n++;
            }
        }
        if (want_cpu)
            for (int a = 1; a < 3; ++a) {
                memset(&runs[n], 0, sizeof runs[n]);
                runs[n].scene = scenes[sc];
                runs[n].backend = RTCD_BACKEND_CPU;
                runs[n].algorithm = algs[a];
                runs[n].adaptive = 0;
                n++;
            }
    }

    int rc = 0;
    double t_start = demo_now_ms();
    for (uint32_t i = 0; i < n; ++i) {
        bench_run* r = &runs[i];
        demo_options o;
        demo_default_options(r->scene, &o);
        o.seed = seed;
        o.objects = objects;
        o.steps = r->scene == DEMO_AVALANCHE ? av_steps : sp_steps;
        o.backend = r->backend;
        o.devices = devices;
        o.threads = threads;
        o.algorithm = r->algorithm;
        o.adaptive = r->adaptive;
        o.traversal = traversal;
        o.penetration_every = 0; /* the exact penetration measure is not part of these timings */
        o.quiet = 1;
        for (int pass = 0; pass < 1 + check; ++pass) {
            o.check = pass;
            demo_summary* s = pass ? &r->checked : &r->timed;
            double t0 = demo_now_ms();
            int run_rc = demo_run_scene(&o, s);
            r->rc |= run_rc;
            if (pass) r->has_check = s->steps > 0;
            fprintf(stderr,
                    "bench_iterative: %s %s %s %s%s: %u steps, narrow phase %.3f ms mean, %.3f ms resting (%.1f s)%s\n",
                    s->scene, s->backend, rtcd_algorithm_name(r->algorithm), r->adaptive ? "adaptive" : "fixed",
                    pass ? " (check)" : "", s->steps, s->np_mean, s->np_resting, (demo_now_ms() - t0) / 1e3,
                    run_rc ? " FAILED" : "");
        }
        rc |= r->rc || r->timed.nan || (r->has_check && r->checked.nan);
    }

    printf("{\"benchmark\":\"bench_iterative\",\"quick\":%s,\"check\":%s,\"seed\":%llu,\"traversal\":\"%s\",\"threads\":%u,",
           quick ? "true" : "false", check ? "true" : "false", (unsigned long long)seed, demo_traversal_name(traversal),
           threads);
    printf("\"avalanche\":{\"objects\":%u,\"steps\":%u},\"spawner\":{\"steps\":%u},", objects, av_steps, sp_steps);
    printf("\"opencl\":{\"requested\":%s,\"present\":%s,\"devices\":%u,\"device\":\"%s\"},",
           want_opencl ? "true" : "false", opencl ? "true" : "false", cl_devices, cl_device);
    printf("\"targets\":{\"resting_speedup_standard_over_predictive\":%.0f,\"incorrect_rays_reduction_pct\":%.0f,"
           "\"cumulative_ray_length_reduction_pct\":%.0f},",
           TARGET_RESTING_SPEEDUP, TARGET_INCORRECT_REDUCTION, TARGET_LENGTH_REDUCTION);
    printf("\"scenes\":[");
    int first_scene = 1;
    for (int sc = 0; sc < 2; ++sc) {
        if ((sc == 0 && !want_av) || (sc == 1 && !want_sp)) continue;
        if (!first_scene) printf(",");
        first_scene = 0;
        printf("{\"scene\":\"%s\",\"runs\":[", sc == 0 ? "avalanche" : "spawner");
        int first = 1;
        for (uint32_t i = 0; i < n; ++i) {
            if (runs[i].scene != scenes[sc]) continue;
            if (!first) printf(",");
            first = 0;
            print_run(&runs[i]);
        }
        printf("],");
        print_comparisons(runs, n, scenes[sc], check, opencl);
        printf("}");
    }
    printf("],\"wall_s\":%.1f,\"exit_code\":%d}\n", (demo_now_ms() - t_start) / 1e3, rc ? 1 : 0);
    return rc ? 1 : 0;
}
