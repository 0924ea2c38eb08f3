/* A run's summary as JSON: the figures every demo program and benchmark
 * prints (demo_summary). */
#include "demo_report.h"

#include "demo_options.h"

#include <string.h>

/* 100 * incorrect / compared over the run; < 0 when there is nothing to report. */
double demo_incorrect_pct(const demo_summary* r)
{
    return r->check && r->check_rays ? 100.0 * (double)r->check_incorrect / (double)r->check_rays : -1.0;
}

void demo_print_summary_json(FILE* f, const demo_summary* r)
{
    int rtcd = !strcmp(r->narrowphase, "rtcd");
    fprintf(f,
            "{\"scene\":\"%s\",\"narrowphase\":\"%s\",\"backend\":\"%s\",\"devices\":%u,\"device\":\"%s\",\"threads\":%u,"
            "\"objects\":%u,\"steps\":%u,\"pose_checksum\":\"%016llx\",",
            r->scene, r->narrowphase, r->backend, r->devices, r->device, r->threads, r->objects, r->steps,
            (unsigned long long)r->pose_checksum);
    /* the algorithm and its parameters only mean something for rtcd's narrow phase */
    if (rtcd)
        fprintf(f, "\"algorithm\":\"%s\",\"params\":\"%s\",\"traversal\":\"%s\",\"contact_normal\":\"%s\",",
                rtcd_algorithm_name(r->algorithm), r->adaptive ? "adaptive" : "fixed", demo_traversal_name(r->traversal),
                demo_contact_normal_name(r->contact_normal));
    else fprintf(f, "\"algorithm\":null,\"params\":null,\"traversal\":null,\"contact_normal\":null,");
    fprintf(f, "\"check\":%s,", r->check ? "true" : "false");
    /* rtcd's contact processing, as the world's def had it */
    if (rtcd)
        fprintf(f, "\"speculative\":%s,\"speculative_margin\":%.6g,\"edge_crossings\":%s,\"deep_contacts\":%s,",
                r->speculative ? "true" : "false", (double)r->speculative_margin, r->edge_crossings ? "true" : "false",
                r->deep_contacts ? "true" : "false");
    else fprintf(f, "\"speculative\":null,\"speculative_margin\":null,\"edge_crossings\":null,\"deep_contacts\":null,");
    fprintf(f,
            "\"ms_per_step_mean\":%.3f,\"ms_per_step_p95\":%.3f,\"first_step_ms\":%.3f,\"narrowphase_ms_mean\":%.3f,"
            "\"narrowphase_ms_median\":%.3f,\"narrowphase_ms_resting\":%.3f,\"batch_ms_mean\":%.3f,"
            "\"batch_ms_resting\":%.3f,\"resting_steps\":%u,\"pairs_max\":%u,"
            "\"contacts_mean\":%.1f,\"penetration_max\":%.5f,\"penetration_sum_mean\":%.5f,"
            "\"penetration_sampled_every\":%u,\"triangles_total\":%llu,\"rays_cast_mean\":%.1f,"
            "\"colliding_rays_mean\":%.1f,",
            r->mean, r->p95, r->first_ms, r->np_mean, r->np_median, r->np_resting, r->batch_mean, r->batch_resting,
            r->resting_steps, r->pairs_max,
            r->contacts_mean, r->pen_max, r->pen_sum_mean, r->penetration_every, (unsigned long long)r->triangles_total,
            r->rays_mean, r->colliding_mean);
    double pct = demo_incorrect_pct(r);
    if (pct >= 0) fprintf(f, "\"incorrect_rays_pct\":%.4f,", pct);
    else fprintf(f, "\"incorrect_rays_pct\":null,");
    fprintf(f,
            "\"check_rays\":%llu,\"check_incorrect\":%llu,\"cumulative_ray_length\":%.6f,"
            "\"cumulative_ray_length_source\":\"%s\",\"own_ray_length_total\":%.6f,",
            (unsigned long long)r->check_rays, (unsigned long long)r->check_incorrect,
            r->check ? r->check_ray_length_total : r->ray_length_total, r->check ? "standard" : "own",
            r->ray_length_total);
    fprintf(f,
            "\"standard_ms_total\":%.3f,\"iterative_ms_total\":%.3f,\"standard_pair_steps\":%llu,"
            "\"iterative_pair_steps\":%llu,\"predictive_rays\":%llu,\"walk_steps\":%llu,\"kept_rays\":%llu,",
            r->standard_ms_total, r->iterative_ms_total, (unsigned long long)r->standard_pair_steps,
            (unsigned long long)r->iterative_pair_steps, (unsigned long long)r->predictive_rays,
            (unsigned long long)r->walk_steps, (unsigned long long)r->kept_rays);
    fprintf(f,
            "\"ms_per_step_median\":%.3f,\"active_steps\":%u,\"ms_per_step_mean_active\":%.3f,"
            "\"narrowphase_ms_mean_active\":%.3f,\"penetration_mean\":%.6f,\"user_meshes\":%u,\"deforming\":%u,"
            "\"deform_ms_mean\":%.4f,",
            r->step_median, r->active_steps, r->step_mean_active, r->np_mean_active, r->pen_mean, r->user_meshes,
            r->deforming, r->deform_ms_mean);
    /* rtcd's share of deform_ms by part (the rest: the world's copy, GImpact's refit of its box tree, the
     * deformation itself); the other narrow phases update rtcd's meshes only when asked (not timed) */
    if (rtcd && r->deforming) {
        double sum = 0.0;
        fprintf(f, "\"deform_ms_parts\":{");
        for (int p = 0; p < RTCD_DEFORM_PARTS; ++p) {
            fprintf(f, "%s\"%s\":%.4f", p ? "," : "", rtcd_mesh_deform_part_name(p), r->deform_parts_ms[p]);
            sum += r->deform_parts_ms[p];
        }
        fprintf(f, ",\"rtcd_update\":%.4f},", sum);
    }
    /* the mesh-mesh batch's profile, means per call (rtcd_batch_stats) */
    if (rtcd) {
        fprintf(f, "\"batch_profile\":");
        batch_profile_print_json(f, &r->profile);
        fprintf(f, ",");
    }
    if (!strcmp(r->scene, "mixed")) {
        /* bodies per kind; tunnelled: bodies that were ever below the terrain by more than their size */
        fprintf(f, "\"kinds\":{");
        for (int k = 0; k < MIXED_KIND_COUNT; ++k)
            fprintf(f, "%s\"%s\":%u", k ? "," : "", mixed_kind_name((mixed_kind)k), r->kind_counts[k]);
        fprintf(f, "},\"terrain_triangles\":%u,\"tunnelled\":%u,\"off_terrain\":%u,\"min_height\":%.5f,",
                r->terrain_triangles, r->tunnelled, r->off_terrain, (double)r->min_height);
    }
    /* the narrow phase in parts, the manifolds, and the rest of the step (Bullet's solver and all) */
    fprintf(f,
            "\"narrowphase_parts\":{\"gather_ms_mean\":%.4f,\"plane_ms_mean\":%.4f,\"writeback_ms_mean\":%.4f,"
            "\"dispatch_ms_mean\":%.4f,\"pairs_owned_mean\":%.1f,\"narrowphase_minus_batch_us_per_pair\":%.4f},"
            "\"manifolds_mean\":%.1f,\"manifolds_total_mean\":%.1f,\"manifolds_total_last\":%u,\"manifolds_created\":%llu,"
            "\"manifolds_released\":%llu,\"step_minus_narrowphase_ms_mean\":%.4f,\"step_minus_narrowphase_ms_median\":%.4f,"
            "\"solver_ms_mean\":%.4f,",
            r->parts.gather, r->parts.plane, r->parts.writeback, r->parts.dispatch, r->parts.pairs_owned,
            r->parts.pairs_owned > 0 ? 1e3 * (r->np_mean - r->batch_mean) / r->parts.pairs_owned : 0.0,
            r->parts.manifolds, r->parts.manifolds_total, r->parts.manifolds_total_last,
            (unsigned long long)r->parts.created, (unsigned long long)r->parts.released, r->parts.rest_mean,
            r->parts.rest_median, r->parts.solver);
    /* penetration over time, then nan_detected last (the tests match the object's end) */
    fprintf(f, "\"penetration_window_steps\":%u,\"penetration_windows_truncated\":%s,\"penetration_windows\":",
            DEMO_PENETRATION_WINDOW, r->pen_windows_truncated ? "true" : "false");
    demo_print_penetration_windows_json(f, r);
    fprintf(f, ",\"nan_detected\":%d}", r->nan);
}

void demo_print_penetration_windows_json(FILE* f, const demo_summary* r)
{
    fprintf(f, "[");
    for (uint32_t w = 0; w < r->pen_window_count; ++w) {
        const demo_penetration_window* pw = &r->pen_windows[w];
        fprintf(f, "%s{\"first\":%u,\"last\":%u,\"samples\":%u,", w ? "," : "", pw->first, pw->last, pw->samples);
        if (pw->samples) fprintf(f, "\"max\":%.5f,\"mean_sum\":%.5f}", (double)pw->max, pw->mean_sum);
        else fprintf(f, "\"max\":null,\"mean_sum\":null}");
    }
    fprintf(f, "]");
}
