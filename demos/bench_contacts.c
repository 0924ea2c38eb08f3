/* rtcd's contact processing (speculative contacts, edge crossings, deep
 * contacts) against Bullet's GImpact and convex hulls, side by side in one
 * run, on the paper's two scenes (JVRC 2013): the avalanche (512 blobs, 600
 * steps) and the spawner (1200 steps here). Every configuration runs in its
 * own world from the same seed, through the demos' scene code
 * (demo_run_scene):
 *
 *   rtcd (predictive, speculative contacts on), rtcd with speculative
 *   contacts off, Bullet's GImpact, convex hulls.
 *
 * Penetration is measured independently of the narrow phase every K steps
 * (default 5; 1 for exact maxima: a peak may last a step or two) and
 * reported over the run and per window of 100 steps. Per
 * scene the targets:
 *
 *   rtcd's max penetration <= 0.5 x GImpact's, over the run and over the
 *   impact (the first window, steps 0-99);
 *   rtcd's mean penetration sum <= GImpact's;
 *   rtcd's narrow phase (mean ms) <= 1.15 x rtcd's with speculative contacts off;
 *   GImpact's step ms / rtcd's >= 8 (avalanche), >= 5 (spawner).
 *
 * Output: one JSON object on stdout (--json, the default); --table prints
 * per scene a markdown table of the penetration per 100 steps, the timings
 * and the targets instead (with --json too, the JSON stays on stdout and the
 * tables go to stderr). One progress line per run on stderr. The exit code
 * is 0 when every run finished with finite poses, whatever the targets.
 *
 * Usage: bench_contacts [--quick] [--scenes avalanche|spawner|all] [--objects N]
 *                       [--avalanche-steps N] [--spawner-steps N] [--seed N]
 *                       [--penetration-every K] [--backend auto|cpu|opencl]
 *                       [--devices N] [--threads N] [--edge-crossings on|off]
 *                       [--deep-contacts on|off] [--json] [--table] */
#include "demo_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_PEN_MAX_RATIO 0.5      /* rtcd max penetration <= 0.5 x GImpact's */
#define TARGET_PEN_SUM_RATIO 1.0      /* rtcd mean penetration sum <= GImpact's */
#define TARGET_NP_OVERHEAD 1.15       /* rtcd narrow phase <= 1.15 x rtcd's without speculative contacts */
#define TARGET_SPEEDUP_AVALANCHE 8.0  /* GImpact step ms / rtcd step ms */
#define TARGET_SPEEDUP_SPAWNER 5.0

/* The configurations, in the order of the runs, the JSON and the table. */
enum { CFG_RTCD = 0, CFG_RTCD_NO_SPECULATIVE = 1, CFG_GIMPACT = 2, CFG_HULL = 3, CFG_COUNT = 4 };

static const char* const cfg_key[CFG_COUNT] = {"rtcd", "rtcd_speculative_off", "gimpact", "hull"};
static const char* const cfg_label[CFG_COUNT] = {"rtcd", "rtcd (speculative off)", "GImpact", "hulls"};

typedef struct bench_scene {
    demo_scene_kind kind;
    demo_summary runs[CFG_COUNT];
    int rc[CFG_COUNT];
} bench_scene;

static const char* scene_name(demo_scene_kind k)
{
    return k == DEMO_AVALANCHE ? "avalanche" : "spawner";
}

static double speedup_target(demo_scene_kind k)
{
    return k == DEMO_AVALANCHE ? TARGET_SPEEDUP_AVALANCHE : TARGET_SPEEDUP_SPAWNER;
}

/* A run counts when it finished with finite poses. */
static int run_ok(const bench_scene* s, int c)
{
    return !s->rc[c] && s->runs[c].steps && !s->runs[c].nan;
}

/* The four comparisons of a scene; valid is 0 when a run they need failed. */
typedef struct bench_targets {
    int valid_pen, valid_impact, valid_np, valid_speed;
    int pen_max_met, impact_met, pen_sum_met, np_met, speed_met;
    double pen_max_ratio, impact_ratio, pen_sum_ratio, np_ratio, speedup; /* < 0: undefined (a zero denominator) */
} bench_targets;

static double ratio(double num, double den)
{
    return den > 0 ? num / den : -1.0;
}

static bench_targets targets_of(const bench_scene* s)
{
    const demo_summary* r = &s->runs[CFG_RTCD];
    const demo_summary* off = &s->runs[CFG_RTCD_NO_SPECULATIVE];
    const demo_summary* g = &s->runs[CFG_GIMPACT];
    bench_targets t;
    memset(&t, 0, sizeof t);
    /* penetration is only compared when both runs measured it */
    t.valid_pen = run_ok(s, CFG_RTCD) && run_ok(s, CFG_GIMPACT) && r->penetration_every && g->penetration_every;
    t.valid_np = run_ok(s, CFG_RTCD) && run_ok(s, CFG_RTCD_NO_SPECULATIVE);
    t.valid_speed = run_ok(s, CFG_RTCD) && run_ok(s, CFG_GIMPACT);
    /* compared as products, so that a zero on either side still decides */
    t.pen_max_met = t.valid_pen && (double)r->pen_max <= TARGET_PEN_MAX_RATIO * (double)g->pen_max;
    t.pen_sum_met = t.valid_pen && r->pen_sum_mean <= TARGET_PEN_SUM_RATIO * g->pen_sum_mean;
    /* the impact: the first window's maxima */
    t.valid_impact = t.valid_pen && r->pen_window_count && g->pen_window_count && r->pen_windows[0].samples &&
                     g->pen_windows[0].samples;
    if (t.valid_impact) {
        t.impact_met = (double)r->pen_windows[0].max <= TARGET_PEN_MAX_RATIO * (double)g->pen_windows[0].max;
        t.impact_ratio = ratio(r->pen_windows[0].max, g->pen_windows[0].max);
    }
    t.np_met = t.valid_np && r->np_mean <= TARGET_NP_OVERHEAD * off->np_mean;
    t.speed_met = t.valid_speed && g->mean >= speedup_target(s->kind) * r->mean;
    t.pen_max_ratio = ratio(r->pen_max, g->pen_max);
    t.pen_sum_ratio = ratio(r->pen_sum_mean, g->pen_sum_mean);
    t.np_ratio = ratio(r->np_mean, off->np_mean);
    t.speedup = ratio(g->mean, r->mean);
    return t;
}

static void json_ratio(const char* key, double v, int valid)
{
    if (valid && v >= 0) printf("\"%s\":%.4f", key, v);
    else printf("\"%s\":null", key);
}

static void json_met(const char* key, int met, int valid)
{
    printf("\"%s\":%s", key, valid ? (met ? "true" : "false") : "null");
}

static void print_config_json(const bench_scene* s, int c)
{
    const demo_summary* r = &s->runs[c];
    int rtcd = c == CFG_RTCD || c == CFG_RTCD_NO_SPECULATIVE;
    printf("{\"config\":\"%s\",\"narrowphase\":\"%s\",", cfg_key[c], r->narrowphase);
    if (rtcd)
        printf("\"algorithm\":\"%s\",\"speculative\":%s,\"speculative_margin\":%.6g,\"edge_crossings\":%s,"
               "\"deep_contacts\":%s,",
               rtcd_algorithm_name(r->algorithm), r->speculative ? "true" : "false", (double)r->speculative_margin,
               r->edge_crossings ? "true" : "false", r->deep_contacts ? "true" : "false");
    else
        printf("\"algorithm\":null,\"speculative\":null,\"speculative_margin\":null,\"edge_crossings\":null,"
               "\"deep_contacts\":null,");
    printf("\"backend\":\"%s\",\"devices\":%u,\"device\":\"%s\",\"threads\":%u,\"objects\":%u,\"steps\":%u,"
           "\"pose_checksum\":\"%016llx\",\"pairs_max\":%u,\"contacts_mean\":%.1f,"
           "\"narrowphase_ms_mean\":%.4f,\"narrowphase_ms_median\":%.4f,\"ms_per_step_mean\":%.4f,"
           "\"ms_per_step_p95\":%.4f,\"first_step_ms\":%.3f,\"penetration_sampled_every\":%u,\"penetration_max\":%.5f,"
           "\"penetration_sum_mean\":%.5f,\"penetration_windows_truncated\":%s,\"penetration_windows\":",
           rtcd ? r->backend : "none", r->devices, r->device, r->threads, r->objects, r->steps,
           (unsigned long long)r->pose_checksum, r->pairs_max, r->contacts_mean, r->np_mean, r->np_median, r->mean,
           r->p95, r->first_ms, r->penetration_every, (double)r->pen_max, r->pen_sum_mean,
           r->pen_windows_truncated ? "true" : "false");
    demo_print_penetration_windows_json(stdout, r);
    printf(",\"nan_detected\":%d,\"exit_code\":%d}", r->nan, s->rc[c]);
}

static void print_scene_json(const bench_scene* s)
{
    printf("{\"scene\":\"%s\",\"runs\":[", scene_name(s->kind));
    for (int c = 0; c < CFG_COUNT; ++c) {
        if (c) printf(",");
        print_config_json(s, c);
    }
    bench_targets t = targets_of(s);
    printf("],\"ratios\":{");
    json_ratio("penetration_max_rtcd_over_gimpact", t.pen_max_ratio, t.valid_pen);
    printf(",");
    json_ratio("penetration_sum_mean_rtcd_over_gimpact", t.pen_sum_ratio, t.valid_pen);
    printf(",");
    json_ratio("impact_penetration_max_rtcd_over_gimpact", t.impact_ratio, t.valid_impact);
    printf(",");
    json_ratio("narrowphase_ms_rtcd_over_speculative_off", t.np_ratio, t.valid_np);
    printf(",");
    json_ratio("step_speedup_gimpact_over_rtcd", t.speedup, t.valid_speed);
    printf(",");
    json_ratio("step_speedup_hull_over_rtcd", ratio(s->runs[CFG_HULL].mean, s->runs[CFG_RTCD].mean),
               run_ok(s, CFG_RTCD) && run_ok(s, CFG_HULL));
    printf(",");
    json_ratio("penetration_max_rtcd_over_hull", ratio(s->runs[CFG_RTCD].pen_max, s->runs[CFG_HULL].pen_max),
               run_ok(s, CFG_RTCD) && run_ok(s, CFG_HULL));
    printf("},\"targets\":{\"penetration_max_vs_gimpact\":{\"at_most\":%.2f,", TARGET_PEN_MAX_RATIO);
    json_met("met", t.pen_max_met, t.valid_pen);
    printf("},\"impact_penetration_max_vs_gimpact\":{\"at_most\":%.2f,", TARGET_PEN_MAX_RATIO);
    json_met("met", t.impact_met, t.valid_impact);
    printf("},\"penetration_sum_mean_vs_gimpact\":{\"at_most\":%.2f,", TARGET_PEN_SUM_RATIO);
    json_met("met", t.pen_sum_met, t.valid_pen);
    printf("},\"narrowphase_ms_vs_speculative_off\":{\"at_most\":%.2f,", TARGET_NP_OVERHEAD);
    json_met("met", t.np_met, t.valid_np);
    printf("},\"step_speedup_vs_gimpact\":{\"at_least\":%.1f,", speedup_target(s->kind));
    json_met("met", t.speed_met, t.valid_speed);
    printf("}}}");
}

/* "0.01234 / 0.5678", or "-" where the run has no sample in the window. */
static void table_cell(FILE* f, const demo_summary* r, uint32_t w)
{
    if (w < r->pen_window_count && r->pen_windows[w].samples)
        fprintf(f, " %.4f / %.4f |", (double)r->pen_windows[w].max, r->pen_windows[w].mean_sum);
    else fprintf(f, " - |");
}

static const char* yes_no(int met, int valid)
{
    return valid ? (met ? "true" : "false") : "n/a";
}

static void print_scene_table(FILE* f, const bench_scene* s)
{
    const demo_summary* r = s->runs;
    fprintf(f, "\n%s: %u objects, %u steps, seed-equal worlds; penetration (m) sampled every %u steps%s\n\n",
            scene_name(s->kind), r[CFG_RTCD].objects, r[CFG_RTCD].steps, r[CFG_RTCD].penetration_every,
            r[CFG_RTCD].penetration_every > 1 ? " (maxima may miss peaks between samples: --penetration-every 1)" : "");
    fprintf(f, "| steps |");
    for (int c = 0; c < CFG_COUNT; ++c) fprintf(f, " %s max / mean sum |", cfg_label[c]);
    fprintf(f, "\n| --- |");
    for (int c = 0; c < CFG_COUNT; ++c) fprintf(f, " --- |");
    fprintf(f, "\n");
    uint32_t windows = 0;
    for (int c = 0; c < CFG_COUNT; ++c) windows = r[c].pen_window_count > windows ? r[c].pen_window_count : windows;
    for (uint32_t w = 0; w < windows; ++w) {
        /* the window's steps as the longest run has them */
        uint32_t first = w * DEMO_PENETRATION_WINDOW, last = first;
        for (int c = 0; c < CFG_COUNT; ++c)
            if (w < r[c].pen_window_count && r[c].pen_windows[w].last > last) last = r[c].pen_windows[w].last;
        fprintf(f, "| %u-%u |", first, last);
        for (int c = 0; c < CFG_COUNT; ++c) table_cell(f, &r[c], w);
        fprintf(f, "\n");
    }
    fprintf(f, "| whole run |");
    for (int c = 0; c < CFG_COUNT; ++c) fprintf(f, " %.4f / %.4f |", (double)r[c].pen_max, r[c].pen_sum_mean);
    fprintf(f, "\n\n| configuration | step ms mean | narrow phase ms mean | narrow phase ms median | contacts mean |"
               " max penetration | mean penetration sum | exit |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int c = 0; c < CFG_COUNT; ++c)
        fprintf(f, "| %s | %.3f | %.3f | %.3f | %.0f | %.4f | %.4f | %s |\n", cfg_label[c], r[c].mean, r[c].np_mean,
                r[c].np_median, r[c].contacts_mean, (double)r[c].pen_max, r[c].pen_sum_mean,
                run_ok(s, c) ? "ok" : "FAILED");
    bench_targets t = targets_of(s);
    fprintf(f, "\ntargets:\n");
    fprintf(f, "  rtcd max penetration <= %.2f x GImpact's: %.4f vs %.4f (ratio %.3f): %s\n", TARGET_PEN_MAX_RATIO,
            (double)r[CFG_RTCD].pen_max, (double)r[CFG_GIMPACT].pen_max, t.pen_max_ratio,
            yes_no(t.pen_max_met, t.valid_pen));
    if (t.valid_impact)
        fprintf(f, "  rtcd impact max (steps %u-%u) <= %.2f x GImpact's: %.4f vs %.4f (ratio %.3f): %s\n",
                r[CFG_RTCD].pen_windows[0].first, r[CFG_RTCD].pen_windows[0].last, TARGET_PEN_MAX_RATIO,
                (double)r[CFG_RTCD].pen_windows[0].max, (double)r[CFG_GIMPACT].pen_windows[0].max, t.impact_ratio,
                yes_no(t.impact_met, 1));
    else
        fprintf(f, "  rtcd impact max (first window) <= %.2f x GImpact's: n/a\n", TARGET_PEN_MAX_RATIO);
    fprintf(f, "  rtcd mean penetration sum <= GImpact's: %.4f vs %.4f (ratio %.3f): %s\n", r[CFG_RTCD].pen_sum_mean,
            r[CFG_GIMPACT].pen_sum_mean, t.pen_sum_ratio, yes_no(t.pen_sum_met, t.valid_pen));
    fprintf(f, "  rtcd narrow phase <= %.2f x rtcd's with speculative off: %.3f vs %.3f ms (ratio %.3f): %s\n",
            TARGET_NP_OVERHEAD, r[CFG_RTCD].np_mean, r[CFG_RTCD_NO_SPECULATIVE].np_mean, t.np_ratio,
            yes_no(t.np_met, t.valid_np));
    fprintf(f, "  GImpact step ms / rtcd step ms >= %.0f: %.3f / %.3f ms = %.2fx: %s\n", speedup_target(s->kind),
            r[CFG_GIMPACT].mean, r[CFG_RTCD].mean, t.speedup, yes_no(t.speed_met, t.valid_speed));
}

enum { SCENES_AVALANCHE = 1, SCENES_SPAWNER = 2, SCENES_ALL = 3 };

int main(int argc, char** argv)
{
    int quick = 0, json = 0, table = 0, scene_set = SCENES_ALL, backend = RTCD_BACKEND_AUTO;
    int edge_crossings = 1, deep_contacts = 1;
    uint32_t objects = 0, av_steps = 0, sp_steps = 0, devices = 0, threads = 0, pen_every = 5;
    int objects_set = 0, av_set = 0, sp_set = 0;
    uint64_t seed = 1;
    static const demo_cli_choice scene_choices[] = {
        {"avalanche", SCENES_AVALANCHE}, {"spawner", SCENES_SPAWNER}, {"all", SCENES_ALL}, {NULL, 0}};
    static const demo_cli_choice backend_choices[] = {
        {"auto", RTCD_BACKEND_AUTO}, {"cpu", RTCD_BACKEND_CPU}, {"opencl", RTCD_BACKEND_OPENCL}, {NULL, 0}};
    static const demo_cli_choice on_off[] = {{"on", 1}, {"off", 0}, {NULL, 0}};
    const demo_cli_option opts[] = {
        {.name = "--quick", .type = DEMO_CLI_FLAG, .target = &quick,
         .help = "27 blobs, 120 avalanche and 120 spawner steps"},
        {.name = "--scenes", .type = DEMO_CLI_ENUM, .target = &scene_set, .choices = scene_choices,
         .help = "scenes to run (default all)"},
        {.name = "--objects", .type = DEMO_CLI_U32, .target = &objects, .meta = "N", .min = 1, .max = 1u << 20,
         .seen = &objects_set, .help = "avalanche bodies (default 512; 27 with --quick)"},
        {.name = "--avalanche-steps", .type = DEMO_CLI_U32, .target = &av_steps, .meta = "N", .min = 1,
         .max = 100000000u, .seen = &av_set, .help = "default 600 (120 with --quick)"},
        {.name = "--spawner-steps", .type = DEMO_CLI_U32, .target = &sp_steps, .meta = "N", .min = 1,
         .max = 100000000u, .seen = &sp_set, .help = "default 1200 (120 with --quick)"},
        {.name = "--seed", .type = DEMO_CLI_U64, .target = &seed, .meta = "N", .help = "default 1"},
        {.name = "--penetration-every", .type = DEMO_CLI_U32, .target = &pen_every, .meta = "K", .min = 1,
         .max = 100000000u, .help = "measure penetration every K steps (default 5)"},
        {.name = "--backend", .type = DEMO_CLI_ENUM, .target = &backend, .choices = backend_choices,
         .help = "rtcd's backend (default auto)"},
        {.name = "--devices", .type = DEMO_CLI_U32, .target = &devices, .meta = "N", .max = 1024,
         .help = "OpenCL devices at most (default 0: all selected)"},
        {.name = "--threads", .type = DEMO_CLI_U32, .target = &threads, .meta = "N", .max = 1024,
         .help = "CPU worker threads (default 0: all cores)"},
        {.name = "--edge-crossings", .type = DEMO_CLI_ENUM, .target = &edge_crossings, .choices = on_off,
         .help = "both rtcd runs (default on)"},
        {.name = "--deep-contacts", .type = DEMO_CLI_ENUM, .target = &deep_contacts, .choices = on_off,
         .help = "both rtcd runs (default on)"},
        {.name = "--json", .type = DEMO_CLI_FLAG, .target = &json,
         .help = "one JSON object on stdout (the default)"},
        {.name = "--table", .type = DEMO_CLI_FLAG, .target = &table,
         .help = "tables per scene on stdout (on stderr with --json)"},
    };
    demo_cli cli = {argv[0],
                    "rtcd with and without speculative contacts vs GImpact vs convex hulls: penetration over time "
                    "and timings on the avalanche and the spawner.",
                    opts, sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    if (!table) json = 1;
    if (!objects_set) objects = quick ? 27 : 512;
    if (!av_set) av_steps = quick ? 120 : 600;
    if (!sp_set) sp_steps = quick ? 120 : 1200;

    bench_scene scenes[2];
    uint32_t n = 0;
    if (scene_set & SCENES_AVALANCHE) scenes[n++].kind = DEMO_AVALANCHE;
    if (scene_set & SCENES_SPAWNER) scenes[n++].kind = DEMO_SPAWNER;

    if (backend != RTCD_BACKEND_CPU) demo_warm_up(backend, devices, threads, seed);

    int rc = 0;
    double t_start = demo_now_ms();
    for (uint32_t i = 0; i < n; ++i) {
        bench_scene* s = &scenes[i];
        for (int c = 0; c < CFG_COUNT; ++c) {
            demo_options o;
            demo_default_options(s->kind, &o);
            o.seed = seed;
            o.objects = objects;
            o.steps = s->kind == DEMO_AVALANCHE ? av_steps : sp_steps;
            o.backend = (rtcd_backend)backend;
            o.devices = devices;
            o.threads = threads;
            o.penetration_every = pen_every;
            o.quiet = 1;
            o.narrowphase = c == CFG_GIMPACT ? RTCD_NARROWPHASE_GIMPACT
                            : c == CFG_HULL  ? RTCD_NARROWPHASE_HULL
                                             : RTCD_NARROWPHASE_RTCD;
            o.speculative = c != CFG_RTCD_NO_SPECULATIVE;
            o.edge_crossings = edge_crossings;
            o.deep_contacts = deep_contacts;
            double t0 = demo_now_ms();
            s->rc[c] = demo_run_scene(&o, &s->runs[c]);
            const demo_summary* r = &s->runs[c];
            fprintf(stderr,
                    "bench_contacts: %s %s: %u steps, step %.3f ms mean, narrow phase %.3f ms mean, "
                    "max penetration %.4f m, mean penetration sum %.4f m (%.1f s)%s\n",
                    r->scene, cfg_label[c], r->steps, r->mean, r->np_mean, (double)r->pen_max, r->pen_sum_mean,
                    (demo_now_ms() - t0) / 1e3, run_ok(s, c) ? "" : " FAILED");
            rc |= !run_ok(s, c);
        }
    }

    if (json) {
        printf("{\"benchmark\":\"bench_contacts\",\"quick\":%s,\"seed\":%llu,\"backend_requested\":\"%s\","
               "\"threads\":%u,\"penetration_every\":%u,\"penetration_window_steps\":%u,",
               quick ? "true" : "false", (unsigned long long)seed,
               backend == RTCD_BACKEND_CPU ? "cpu" : (backend == RTCD_BACKEND_OPENCL ? "opencl" : "auto"), threads,
               pen_every, DEMO_PENETRATION_WINDOW);
        printf("\"avalanche\":{\"objects\":%u,\"steps\":%u},\"spawner\":{\"steps\":%u},", objects, av_steps, sp_steps);
        printf("\"targets\":{\"penetration_max_ratio_vs_gimpact_at_most\":%.2f,"
               "\"penetration_sum_mean_ratio_vs_gimpact_at_most\":%.2f,"
               "\"narrowphase_ratio_vs_speculative_off_at_most\":%.2f,\"step_speedup_vs_gimpact_at_least\":"
               "{\"avalanche\":%.1f,\"spawner\":%.1f}},",
               TARGET_PEN_MAX_RATIO, TARGET_PEN_SUM_RATIO, TARGET_NP_OVERHEAD, TARGET_SPEEDUP_AVALANCHE,
               TARGET_SPEEDUP_SPAWNER);
        printf("\"scenes\":[");
        for (uint32_t i = 0; i < n; ++i) {
            if (i) printf(",");
            print_scene_json(&scenes[i]);
        }
        printf("],\"wall_s\":%.1f,\"exit_code\":%d}\n", (demo_now_ms() - t_start) / 1e3, rc ? 1 : 0);
        fflush(stdout);
    }
    if (table)
        for (uint32_t i = 0; i < n; ++i) print_scene_table(json ? stderr : stdout, &scenes[i]);
    return rc ? 1 : 0;
}
