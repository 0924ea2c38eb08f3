/* The run loop the demo programs share: steps a scene, measures it per step
 * (CSV, penetration, the viewer) and fills the summary. */
#include "demo_common.h"

#include "scene_util.h"
#include "user_meshes.h"
#ifdef RTCD_HAVE_VIEWER
#include "viewer.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : (x > y);
}

static int poses_finite(const rtcd_world* w)
{
    for (uint32_t b = 0; b < rtcd_world_body_count(w); ++b) {
        rtcd_transform t;
        if (rtcd_world_get_pose(w, b, &t) != RTCD_OK) return 0;
        for (int k = 0; k < 12; ++k)
            if (!isfinite(k < 9 ? t.rotation[k] : t.translation[k - 9])) return 0;
    }
    return 1;
}


/* Some body has a non-zero velocity (sleeping bodies have none). */
static int any_awake(const rtcd_world* w)
{
    for (uint32_t b = 0; b < rtcd_world_body_count(w); ++b) {
        float v[3], a[3];
        if (rtcd_world_get_velocity(w, b, v, a) != RTCD_OK) continue;
        for (int k = 0; k < 3; ++k)
            if (v[k] != 0.0f || a[k] != 0.0f) return 1;
    }
    return 0;
}

static int fail_with(rtcd_error err)
{
    if (demo_scene_error()[0]) fprintf(stderr, "rtcd demo: %s\n", demo_scene_error());
    else fprintf(stderr, "rtcd demo: %s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    return 1;
}

static const char* narrowphase_name(rtcd_narrowphase_kind k)
{
    return k == RTCD_NARROWPHASE_GIMPACT ? "gimpact" : (k == RTCD_NARROWPHASE_HULL ? "hull" : "rtcd");
}

#ifdef RTCD_HAVE_VIEWER
/* The viewer for the scene, framed on where its bodies are: the avalanche's
 * cube of blobs, the spawner's circling source and its pile, the mixed
 * scene's terrain (drawn from its heights). NULL, with the reason on stderr,
 * when it cannot open (no display for --view, a folder --frames cannot make). */
static viewer* open_viewer(const demo_options* o, const demo_scene* s)
{
    viewer_def d;
    memset(&d, 0, sizeof d);
    d.window = o->view;
    d.frames_dir = o->frames_dir;
    d.width = o->frame_width;
    d.height = o->frame_height;
    d.show_contacts = o->show_contacts;
    d.title = o->scene == DEMO_AVALANCHE ? "rtcd avalanche" : (o->scene == DEMO_SPAWNER ? "rtcd spawner" : "rtcd mixed");
    d.plane = o->scene != DEMO_MIXED;
    float* gv = NULL;
    uint32_t* gi = NULL;
    if (o->scene == DEMO_AVALANCHE) {
        const demo_avalanche_cube c = demo_avalanche_cube_of(o->objects, s->bounding_radius);
        uint32_t layers = (o->objects + c.side * c.side - 1) / (c.side * c.side);
        float top = c.z0 + (float)(layers - 1) * c.spacing + s->bounding_radius;
        float half = 0.5f * (float)c.side * c.spacing;
        d.target[2] = 0.4f * top;
        d.radius = 0.95f * sqrtf(2.0f * half * half + 0.25f * top * top);
    } else if (o->scene == DEMO_SPAWNER) {
        d.target[2] = 0.4f * DEMO_SPAWN_HEIGHT;
        d.radius = (float)DEMO_SPAWN_RADIUS + 2.0f;
    } else {
        if (mixed_terrain_arrays(&s->mixed, &gv, &gi)) { /* no memory: no terrain drawn */
            d.ground_vertices = gv;
            d.ground_vertex_count = MIXED_TERRAIN_VERTICES;
            d.ground_indices = gi;
            d.ground_triangle_count = MIXED_TERRAIN_TRIANGLES;
        }
        d.target[2] = 1.0f;
        d.radius = 0.3f * MIXED_TERRAIN_SIZE;
    }
    viewer* v = NULL;
    char msg[512];
    if (viewer_open(&d, &v, msg, sizeof msg) != 0) fprintf(stderr, "rtcd demo: %s\n", msg);
    free(gv);
    free(gi);
    return v;
}
#endif

int demo_run_scene(const demo_options* o, demo_summary* r)
{
    memset(r, 0, sizeof *r);
    r->scene = o->scene == DEMO_AVALANCHE ? "avalanche" : (o->scene == DEMO_SPAWNER ? "spawner" : "mixed");
    r->narrowphase = narrowphase_name(o->narrowphase);
    r->backend = "none";
    r->algorithm = o->algorithm;
    r->traversal = o->traversal;
    r->contact_normal = o->contact_normal;
    r->adaptive = o->adaptive;
    r->check = o->check;
    {
        rtcd_world_def def; /* what demo_scene_create gives the world */
        demo_world_def(o, &def);
        r->speculative = def.narrowphase.speculative;
        r->speculative_margin = def.narrowphase.speculative_margin;
        r->edge_crossings = def.narrowphase.edge_crossings;
        r->deep_contacts = def.narrowphase.deep_contacts;
    }
    demo_scene s;
    rtcd_error err = demo_scene_create(o, &s);
    if (err != RTCD_OK) {
        int rc = fail_with(err);
        demo_scene_destroy(&s);
        return rc;
    }
    FILE* csv = NULL;
    if (o->csv_path) {
        csv = fopen(o->csv_path, "w");
        if (!csv) {
            fprintf(stderr, "rtcd demo: cannot write %s\n", o->csv_path);
            demo_scene_destroy(&s);
            return 1;
        }
        fprintf(csv, "step,time_s,bodies,broadphase_pairs,pairs_owned,pairs_culled,rays_cast,colliding_rays,contacts,"
                     "narrowphase_ms,step_ms,penetration_max,penetration_sum,standard_pairs,iterative_pairs,"
                     "predictive_rays,walk_steps,kept_rays,standard_ms,iterative_ms,ray_length,%s%s%s\n",
                batch_profile_csv_header, o->check ? ",check_rays,check_incorrect,check_ray_length" : "",
                ",batch_ms,gather_ms,plane_ms,writeback_ms,dispatch_ms,manifolds,manifolds_created,manifolds_released,"
                "manifolds_total");
    }
    int view_failed = 0;
#ifdef RTCD_HAVE_VIEWER
    viewer* view = NULL;
    if ((o->view || o->frames_dir) && (view = open_viewer(o, &s)) == NULL) view_failed = 1;
#else
    if (o->view || o->frames_dir) {
        fprintf(stderr, "rtcd demo: --view and --frames: this build has no viewer (GLFW, or OSMesa and libpng, "
                        "were not found at configure time; Debian: libglfw3-dev, libosmesa6-dev libpng-dev)\n");
        view_failed = 1;
    }
#endif
    if (view_failed) {
        if (csv) fclose(csv);
        demo_scene_destroy(&s);
        return 1;
    }
    uint32_t cap = o->steps ? o->steps : 1;
    double* step_ms = calloc(cap, sizeof *step_ms);
    double* np_ms = calloc(cap, sizeof *np_ms);
    double* rest_ms = calloc(cap, sizeof *rest_ms); /* NULL: no median of the rest, the run goes on */
    int progress = !o->quiet && isatty(STDERR_FILENO);
    double np_sum = 0, contacts_sum = 0, rays_sum = 0, colliding_sum = 0, pen_sum_sum = 0;
    uint32_t pairs_max = 0, pen_samples = 0, done = 0;
    float pen_max = 0;
    uint64_t pen_inside = 0;
    int nan = 0;
    for (uint32_t step = 0; step < o->steps && step_ms && np_ms; ++step) {
        if ((err = demo_scene_update(&s, step)) != RTCD_OK ||
            (err = demo_deformer_step(&s.deform, step, 1.0 / 60.0)) != RTCD_OK ||
            (err = rtcd_world_step(s.world)) != RTCD_OK)
            break;
        rtcd_step_stats st = rtcd_world_last_step_stats(s.world);
        step_ms[step] = st.step_ms;
        np_ms[step] = st.narrowphase_ms;
        if (rest_ms) rest_ms[step] = st.step_ms - st.narrowphase_ms;
        r->parts.gather += st.gather_ms;
        r->parts.plane += st.plane_ms;
        r->parts.writeback += st.writeback_ms;
        r->parts.dispatch += st.dispatch_ms;
        r->parts.solver += st.solver_ms;
        r->parts.pairs_owned += st.pairs_owned;
        r->parts.manifolds += st.manifolds;
        r->parts.manifolds_total += st.manifolds_total;
        r->parts.manifolds_total_last = st.manifolds_total;
        r->parts.created += st.manifolds_created;
        r->parts.released += st.manifolds_released;
        np_sum += st.narrowphase_ms;
        r->batch_mean += st.batch_ms;
        if (st.batch.ms > 0.0) batch_profile_add(&r->profile, &st.batch);
        if (step + DEMO_RESTING_STEPS >= o->steps) r->batch_resting += st.batch_ms;
        contacts_sum += st.contacts;
        rays_sum += (double)st.rays_cast;
        colliding_sum += (double)st.colliding_rays;
        pairs_max = st.broadphase_pairs > pairs_max ? st.broadphase_pairs : pairs_max;
        r->standard_ms_total += st.standard_ms;
        r->iterative_ms_total += st.iterative_ms;
        r->standard_pair_steps += st.standard_pairs;
        r->iterative_pair_steps += st.iterative_pairs;
        r->predictive_rays += st.predictive_rays;
        r->walk_steps += st.walk_steps;
        r->kept_rays += st.kept_rays;
        r->ray_length_total += st.ray_length;
        r->check_rays += st.check_rays;
        r->check_incorrect += st.check_incorrect;
        r->check_ray_length_total += st.check_ray_length;
        done = step + 1;
        if (!poses_finite(s.world)) {
            nan = 1;
            fprintf(stderr, "rtcd demo: non-finite pose at step %u\n", step);
            break;
        }
        if (o->scene == DEMO_MIXED) mixed_scene_check(&s.mixed, s.world);
        if (any_awake(s.world)) {
            r->active_steps++;
            r->step_mean_active += st.step_ms;
            r->np_mean_active += st.narrowphase_ms;
        }
        rtcd_penetration pen = {0, 0, 0};
        int measured = o->penetration_every && (step + 1) % o->penetration_every == 0;
        if (measured) {
            if ((err = rtcd_world_measure_penetration(s.world, &pen)) != RTCD_OK) break;
            pen_max = pen.max > pen_max ? pen.max : pen_max;
            pen_sum_sum += pen.sum;
            pen_samples++;
            pen_inside += pen.vertices_inside;
            uint32_t w = step / DEMO_PENETRATION_WINDOW;
            if (w < DEMO_PENETRATION_WINDOWS_MAX) {
                demo_penetration_window* pw = &r->pen_windows[w];
                pw->max = pen.max > pw->max ? pen.max : pw->max;
                pw->mean_sum += pen.sum; /* the window's sum of sums until the run ends */
                pw->samples++;
            }
        }
        if (csv) {
            fprintf(csv, "%u,%.4f,%u,%u,%u,%u,%llu,%llu,%u,%.4f,%.4f,", step, (step + 1) / DEMO_HZ,
                    rtcd_world_body_count(s.world), st.broadphase_pairs, st.pairs_owned, st.pairs_culled,
                    (unsigned long long)st.rays_cast, (unsigned long long)st.colliding_rays, st.contacts,
                    st.narrowphase_ms, st.step_ms);
            if (measured) fprintf(csv, "%.6f,%.6f,", pen.max, pen.sum);
            else fprintf(csv, ",,");
            fprintf(csv, "%u,%u,%llu,%llu,%llu,%.4f,%.4f,%.6f", st.standard_pairs, st.iterative_pairs,
                    (unsigned long long)st.predictive_rays, (unsigned long long)st.walk_steps,
                    (unsigned long long)st.kept_rays, st.standard_ms, st.iterative_ms, st.ray_length);
            fprintf(csv, ",");
            batch_profile_print_csv(csv, &st.batch);
            if (o->check)
                fprintf(csv, ",%llu,%llu,%.6f", (unsigned long long)st.check_rays,
                        (unsigned long long)st.check_incorrect, st.check_ray_length);
            fprintf(csv, ",%.4f,%.4f,%.4f,%.4f,%.4f,%u,%u,%u,%u\n", st.batch_ms, st.gather_ms, st.plane_ms, st.writeback_ms, st.dispatch_ms,
                    st.manifolds, st.manifolds_created, st.manifolds_released, st.manifolds_total);
        }
        if (progress && (step % 10 == 0 || step + 1 == o->steps)) {
            int width = 40, filled = (int)((step + 1) * (uint64_t)width / o->steps);
            fprintf(stderr, "\r[%.*s%*s] %u/%u steps, %.1f ms/step", filled, "########################################",
                    width - filled, "", step + 1, o->steps, st.step_ms);
        }
#ifdef RTCD_HAVE_VIEWER
        if (view) { /* outside the step's timing: the world measures its own step */
            char msg[512];
            int vr = viewer_frame(view, s.world, step, msg, sizeof msg);
            if (vr == VIEWER_ERROR) {
                fprintf(stderr, "\nrtcd demo: %s\n", msg);
                view_failed = 1;
            }
            if (vr != VIEWER_CONTINUE) break; /* closed, Esc, or a frame not written */
        }
#endif
    }
    if (progress) fprintf(stderr, "\n");
    if (csv) fclose(csv);
#ifdef RTCD_HAVE_VIEWER
    viewer_close(view);
#endif
    int rc = 0;
    if (!step_ms || !np_ms) rc = fail_with(RTCD_ERROR_OUT_OF_MEMORY);
    else if (err != RTCD_OK) rc = fail_with(err);
    else if (nan || view_failed) rc = 1;
    double mean = 0, p95 = 0;
    if (done) {
        r->first_ms = step_ms[0]; /* OpenCL kernel build and first uploads land here */
        for (uint32_t i = 0; i < done; ++i) mean += step_ms[i] / done;
        qsort(step_ms, done, sizeof *step_ms, cmp_double);
        p95 = step_ms[(uint32_t)(0.95 * (done - 1))];
        r->step_median = done % 2 ? step_ms[done / 2] : 0.5 * (step_ms[done / 2 - 1] + step_ms[done / 2]);
        /* the resting phase: the last 5 s of simulated time (all steps of a shorter run) */
        r->resting_steps = done < DEMO_RESTING_STEPS ? done : DEMO_RESTING_STEPS;
        for (uint32_t i = done - r->resting_steps; i < done; ++i) r->np_resting += np_ms[i] / r->resting_steps;
        qsort(np_ms, done, sizeof *np_ms, cmp_double);
        r->np_median = done % 2 ? np_ms[done / 2] : 0.5 * (np_ms[done / 2 - 1] + np_ms[done / 2]);
        if (rest_ms) {
            qsort(rest_ms, done, sizeof *rest_ms, cmp_double);
            r->parts.rest_median = done % 2 ? rest_ms[done / 2] : 0.5 * (rest_ms[done / 2 - 1] + rest_ms[done / 2]);
        }
    }
    double n = done ? done : 1;
    r->backend = rtcd_world_backend(s.world) == RTCD_BACKEND_OPENCL ? "opencl" : "cpu";
    r->devices = rtcd_world_device_count(s.world);
    r->threads = rtcd_world_thread_count(s.world); /* the count used: 0 on OpenCL or another narrow phase */
    /* JSON-safe copy of the first device's name */
    const char* dn = r->devices ? rtcd_world_device_name(s.world, 0) : "";
    if (!dn) dn = "";
    size_t j = 0;
    for (; dn[j] && j + 1 < sizeof r->device; ++j)
        r->device[j] = (dn[j] == '"' || dn[j] == '\\' || (unsigned char)dn[j] < 0x20) ? '_' : dn[j];
    r->device[j] = '\0';
    r->objects = rtcd_world_body_count(s.world);
    r->steps = done;
    r->mean = mean;
    r->p95 = p95;
    r->np_mean = np_sum / n;
    r->batch_mean /= n;
    r->parts.rest_mean = r->mean - np_sum / n;
    r->parts.gather /= n;
    r->parts.plane /= n;
    r->parts.writeback /= n;
    r->parts.dispatch /= n;
    r->parts.solver /= n;
    r->parts.pairs_owned /= n;
    r->parts.manifolds /= n;
    r->parts.manifolds_total /= n;
    r->batch_resting /= r->resting_steps ? r->resting_steps : 1;
    r->pairs_max = pairs_max;
    r->contacts_mean = contacts_sum / n;
    r->pen_max = pen_max;
    r->pen_sum_mean = pen_samples ? pen_sum_sum / pen_samples : 0.0;
    if (o->penetration_every && done) {
        uint32_t windows = (done + DEMO_PENETRATION_WINDOW - 1) / DEMO_PENETRATION_WINDOW;
        r->pen_windows_truncated = windows > DEMO_PENETRATION_WINDOWS_MAX;
        r->pen_window_count = r->pen_windows_truncated ? DEMO_PENETRATION_WINDOWS_MAX : windows;
        for (uint32_t w = 0; w < r->pen_window_count; ++w) {
            demo_penetration_window* pw = &r->pen_windows[w];
            pw->first = w * DEMO_PENETRATION_WINDOW;
            pw->last = pw->first + DEMO_PENETRATION_WINDOW - 1 < done - 1 ? pw->first + DEMO_PENETRATION_WINDOW - 1
                                                                          : done - 1;
            pw->mean_sum = pw->samples ? pw->mean_sum / pw->samples : 0.0;
        }
    }
    r->penetration_every = o->penetration_every;
    r->triangles_total = s.triangles_total;
    r->rays_mean = rays_sum / n;
    r->colliding_mean = colliding_sum / n;
    r->nan = nan;
    if (r->active_steps) {
        r->step_mean_active /= r->active_steps;
        r->np_mean_active /= r->active_steps;
    }
    r->pen_mean = pen_inside ? pen_sum_sum / (double)pen_inside : 0.0;
    r->user_meshes = s.user_meshes;
    r->deforming = s.deform.count;
    r->deform_ms_mean = s.deform.ms_total / n;
    demo_deformer_parts(&s.deform, r->deform_parts_ms);
    for (int p = 0; p < RTCD_DEFORM_PARTS; ++p) r->deform_parts_ms[p] /= n;
    if (o->scene == DEMO_MIXED) {
        memcpy(r->kind_counts, s.mixed.kind_counts, sizeof r->kind_counts);
        r->terrain_triangles = s.mixed.terrain_triangles;
        r->tunnelled = s.mixed.tunnelled;
        r->off_terrain = s.mixed.off_terrain;
        r->min_height = s.mixed.checks ? s.mixed.min_height : 0.0f;
    }
    r->pose_checksum = demo_pose_checksum(s.world);
    free(step_ms);
    free(np_ms);
    free(rest_ms);
    demo_scene_destroy(&s);
    return rc;
}

int demo_run(const demo_options* o)
{
    if (!o->compare) {
        demo_summary r;
        int rc = demo_run_scene(o, &r);
        if (rc && !r.steps) return rc; /* failed before the first step: nothing to summarise */
        if (o->json) {
            demo_print_summary_json(stdout, &r);
            printf("\n");
        } else {
            printf("%s through %s (%s backend, %u device(s) %s): %u objects, %llu triangles, %u steps\n", r.scene,
                   r.narrowphase, r.backend, r.devices, r.device, r.objects, (unsigned long long)r.triangles_total, r.steps);
            if (o->narrowphase == RTCD_NARROWPHASE_RTCD) {
                printf("  algorithm %s, %s parameters%s\n", rtcd_algorithm_name(r.algorithm),
                       r.adaptive ? "adaptive" : "fixed", r.check ? ", checked against the standard algorithm" : "");
                printf("  contacts: speculative %s (margin %g m), edge crossings %s, deep contacts %s\n",
                       r.speculative ? "on" : "off", (double)r.speculative_margin, r.edge_crossings ? "on" : "off",
                       r.deep_contacts ? "on" : "off");
            }
            printf("  step %.2f ms mean, %.2f ms p95; narrow phase %.2f ms mean, %.2f ms median, %.2f ms over the last %u steps;"
                   " up to %u pairs; %.0f contacts\n",
                   r.mean, r.p95, r.np_mean, r.np_median, r.np_resting, r.resting_steps, r.pairs_max, r.contacts_mean);
            printf("  pair-steps: %llu standard, %llu iterative; %.1f ms in standard passes, %.1f ms in iterative passes\n",
                   (unsigned long long)r.standard_pair_steps, (unsigned long long)r.iterative_pair_steps,
                   r.standard_ms_total, r.iterative_ms_total);
            double pct = demo_incorrect_pct(&r);
            if (r.check) {
                if (pct >= 0) printf("  incorrect rays %.3f %% of %llu;", pct, (unsigned long long)r.check_rays);
                else printf("  incorrect rays: none compared;");
                printf(" cumulative ray length (standard algorithm) %.3f m\n", r.check_ray_length_total);
            } else {
                printf("  cumulative ray length (own rays) %.3f m\n", r.ray_length_total);
            }
            printf("  penetration (every %u steps): max %.4f m, sum %.4f m mean\n", r.penetration_every, r.pen_max,
                   r.pen_sum_mean);
            if (o->scene == DEMO_MIXED) {
                printf("  kinds:");
                for (int k = 0; k < MIXED_KIND_COUNT; ++k)
                    printf("%s %u %s", k ? "," : "", r.kind_counts[k], mixed_kind_name((mixed_kind)k));
                printf("\n  terrain %u triangles: %u tunnelled, %u off the terrain, lowest body origin %.4f m above it\n",
                       r.terrain_triangles, r.tunnelled, r.off_terrain, (double)r.min_height);
            }
            if (r.user_meshes) printf("  %u mesh(es) from --mesh files\n", r.user_meshes);
            printf("  threads %u%s; final poses of %u bodies: pose_checksum %016llx\n", r.threads,
                   r.threads ? "" : " (all cores)", r.objects, (unsigned long long)r.pose_checksum);
        }
        return rc;
    }
    /* The same scene through the three narrow phases, one after the other in
     * one process, so the figures share the machine's state. */
    demo_summary r[3];
    rtcd_narrowphase_kind kinds[3] = {RTCD_NARROWPHASE_RTCD, RTCD_NARROWPHASE_GIMPACT, RTCD_NARROWPHASE_HULL};
    int rc = 0;
    /* Hulls do not deform (rtcd_shape_set_vertices): with --deforming, rtcd and GImpact only. */
    int runs = o->deforming && o->scene != DEMO_MIXED ? 2 : 3;
    for (int k = 0; k < runs; ++k) {
        demo_options one = *o;
        one.narrowphase = kinds[k];
        one.compare = 0;
        one.check = kinds[k] == RTCD_NARROWPHASE_RTCD ? o->check : 0; /* checking mode is rtcd's */
        rc |= demo_run_scene(&one, &r[k]);
    }
    printf("{\"benchmark\":\"%s_narrowphase_comparison\",\"runs\":[", r[0].scene);
    for (int k = 0; k < runs; ++k) {
        if (k) printf(",");
        demo_print_summary_json(stdout, &r[k]);
    }
    printf("],\"step_speedup_vs_gimpact\":%.3f,", r[0].mean > 0 ? r[1].mean / r[0].mean : 0.0);
    if (runs == 3)
        printf("\"step_speedup_vs_hull\":%.3f,\"penetration_max_ratio_vs_hull\":%.3f,",
               r[0].mean > 0 ? r[2].mean / r[0].mean : 0.0, r[2].pen_max > 0 ? r[0].pen_max / r[2].pen_max : 0.0);
    else
        printf("\"step_speedup_vs_hull\":null,\"penetration_max_ratio_vs_hull\":null,");
    /* Bullet's own part of the step (step - narrow phase) and the manifolds it walks, rtcd over GImpact */
    printf("\"step_minus_narrowphase_ratio_vs_gimpact\":%.3f,\"step_minus_narrowphase_median_ratio_vs_gimpact\":%.3f,"
           "\"solver_ratio_vs_gimpact\":%.3f,\"manifolds_ratio_vs_gimpact\":%.3f,",
           r[1].parts.rest_mean > 0 ? r[0].parts.rest_mean / r[1].parts.rest_mean : 0.0,
           r[1].parts.rest_median > 0 ? r[0].parts.rest_median / r[1].parts.rest_median : 0.0,
           r[1].parts.solver > 0 ? r[0].parts.solver / r[1].parts.solver : 0.0,
           r[1].parts.manifolds_total > 0 ? r[0].parts.manifolds_total / r[1].parts.manifolds_total : 0.0);
        /* Deforming bodies: the step plus the vertex updates before it, as a program pays them. */
    double own = r[0].mean + r[0].deform_ms_mean, theirs = r[1].mean + r[1].deform_ms_mean;
    printf("\"step_with_deformation_speedup_vs_gimpact\":%.3f,\"penetration_max_ratio_vs_gimpact\":%.3f}\n",
           own > 0 ? theirs / own : 0.0, r[1].pen_max > 0 ? r[0].pen_max / r[1].pen_max : 0.0);
    return rc;
}
