/* What one run of a scene measured (demo_summary) and its JSON. */
#ifndef RTCD_DEMO_REPORT_H
#define RTCD_DEMO_REPORT_H

#include "batch_profile.h"
#include "mixed.h"

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_world.h>

#include <stdio.h>

/* Steps of the resting phase: the last 5 s of simulated time at 60 Hz. */
#define DEMO_RESTING_STEPS 300u

/* Penetration over time: the samples (every penetration_every steps) grouped
 * by windows of DEMO_PENETRATION_WINDOW steps (window w: steps 100 w ..
 * 100 w + 99, the last one cut at the run's end). A run longer than
 * DEMO_PENETRATION_WINDOWS_MAX windows keeps the first ones only
 * (demo_summary.pen_windows_truncated). */
#define DEMO_PENETRATION_WINDOW 100u
#define DEMO_PENETRATION_WINDOWS_MAX 256u

typedef struct demo_penetration_window {
    uint32_t first, last;         /* steps (0-based, inclusive) */
    uint32_t samples;             /* penetration samples taken in the window (0: max and mean_sum mean nothing) */
    float max;                    /* deepest penetration of any sample in the window */
    double mean_sum;              /* mean over the window's samples of the per-sample penetration sum */
} demo_penetration_window;

/* What one run of a scene measured (the JSON summary's figures). */
typedef struct demo_summary {
    const char* scene;
    const char* narrowphase;
    const char* backend;          /* as resolved: "cpu" or "opencl" */
    char device[160];             /* first device's name ("" on the CPU reference) */
    uint32_t devices;             /* OpenCL devices the world uses (rtcd_world_device_count; 0 on the CPU reference) */
    uint32_t threads;             /* CPU reference threads actually used (0: OpenCL, GImpact or hulls) */
    uint64_t pose_checksum;       /* demo_pose_checksum of the final poses */
    rtcd_algorithm algorithm;
    rtcd_traversal traversal;
    rtcd_contact_normal contact_normal;
    int adaptive, check;
    int speculative, edge_crossings, deep_contacts; /* as the world's def had them */
    float speculative_margin;
    uint32_t objects, steps, pairs_max, penetration_every;
    double mean, p95, first_ms, np_mean, contacts_mean, pen_sum_mean, rays_mean, colliding_mean;
    double batch_mean, batch_resting; /* rtcd's mesh-mesh batch alone (rtcd_step_stats.batch_ms): mean, last steps */
    batch_profile profile;        /* the batch's profile over the run (rtcd_step_stats.batch) */
    double np_median;             /* narrow-phase ms, median over the run */
    double np_resting;            /* narrow-phase ms, mean over the last min(steps, DEMO_RESTING_STEPS) steps */
    uint32_t resting_steps;
    double standard_ms_total, iterative_ms_total;
    uint64_t standard_pair_steps, iterative_pair_steps; /* sums of standard_pairs / iterative_pairs */
    uint64_t predictive_rays, walk_steps, kept_rays;    /* sums over the run */
    uint64_t check_rays, check_incorrect;               /* sums over the run (check mode) */
    double ray_length_total;      /* sum of the algorithm's own colliding ray lengths */
    double check_ray_length_total;/* sum of the standard algorithm's (check mode) */
    float pen_max;
    demo_penetration_window pen_windows[DEMO_PENETRATION_WINDOWS_MAX];
    uint32_t pen_window_count;    /* ceil(steps / 100), at most DEMO_PENETRATION_WINDOWS_MAX; 0 without samples */
    int pen_windows_truncated;    /* the run had more windows than were kept */
    uint64_t triangles_total;
    int nan;
    double step_median;           /* step ms, median over the run */
    /* Steps after which some body still moved (Bullet zeroes the velocities
     * of sleeping bodies; once every body sleeps a step costs next to
     * nothing), and the step and narrow-phase ms means over those steps. */
    uint32_t active_steps;
    double step_mean_active, np_mean_active;
    double pen_mean;              /* mean depth of the penetrating vertices, over every sample */
    uint32_t user_meshes;         /* shapes from --mesh files */
    uint32_t deforming;           /* deforming bodies at the end */
    double deform_ms_mean;        /* per step, in rtcd_shape_set_vertices (outside the step's timing) */
    /* The narrow phase in parts and the manifolds, means per step
     * (rtcd_step_stats; the parts are rtcd's only), and what is left of the
     * step besides the narrow phase (Bullet's broadphase, islands, solver). */
    struct {
        double gather, plane, writeback, dispatch, pairs_owned, manifolds, manifolds_total;
        double solver; /* Bullet's constraint solver (rtcd_step_stats.solver_ms), any narrow phase */
        uint64_t created, released;
        uint32_t manifolds_total_last;
        double rest_mean, rest_median; /* step_ms - narrowphase_ms */
    } parts;
    double deform_parts_ms[RTCD_DEFORM_PARTS]; /* per step, rtcd's updates by part (rtcd narrow phase only) */
    /* DEMO_MIXED only (mixed_scene after the run's last step) */
    uint32_t kind_counts[MIXED_KIND_COUNT];
    uint32_t terrain_triangles;
    uint32_t tunnelled, off_terrain;
    float min_height;
} demo_summary;

/* 100 * incorrect / compared rays over the run (check mode); < 0 when there
 * is nothing to report. */
double demo_incorrect_pct(const demo_summary* r);

/* The summary as one JSON object (no newline). */
void demo_print_summary_json(FILE* f, const demo_summary* r);

/* The penetration windows as a JSON array (no newline):
 * [{"first":0,"last":99,"samples":20,"max":0.01234,"mean_sum":0.56789},...];
 * max and mean_sum are null in a window without samples. */
void demo_print_penetration_windows_json(FILE* f, const demo_summary* r);

#endif
