/* The avalanche and spawner scenes (JVRC 2013) and the mixed scene (mixed.h)
 * on the C API over Bullet, and the run loop the demo programs share:
 * options, per-step statistics, CSV, JSON summary, progress bar. Tests build
 * the same scenes through here. */
#ifndef RTCD_DEMO_COMMON_H
#define RTCD_DEMO_COMMON_H

#include "batch_profile.h"
#include "deform.h"
#include "demo_cli.h"
#include "mixed.h"

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_world.h>

#include <stdio.h>

typedef enum demo_scene_kind { DEMO_AVALANCHE = 0, DEMO_SPAWNER = 1, DEMO_MIXED = 2 } demo_scene_kind;

typedef struct demo_options {
    demo_scene_kind scene;
    uint32_t objects;             /* avalanche: bodies (default 512); mixed: bodies (default 128) */
    uint32_t steps;               /* default 600 (avalanche, mixed), 3000 (spawner) */
    uint64_t seed;
    rtcd_narrowphase_kind narrowphase;
    int compare;                  /* --narrowphase all: rtcd, gimpact and hull in one run, one JSON */
    rtcd_backend backend;
    uint32_t devices;             /* OpenCL devices at most (0: all selected) */
    const char* csv_path;         /* NULL: no CSV */
    int json;
    uint32_t penetration_every;   /* measure every K steps (default 10; 0: never) */
    rtcd_algorithm algorithm;     /* --algorithm (default predictive) -> rtcd_world_def.narrowphase.iterative.algorithm */
    int adaptive;                 /* --params adaptive (1, default) | fixed (0) -> rtcd_world_def.narrowphase.iterative.adaptive */
    int check;                    /* --check: rtcd_world_def.check = 1 (the standard algorithm on the same poses) */
    int quiet;                    /* no progress bar (benchmarks) */
    rtcd_traversal traversal;     /* --traversal bvh (default) | brute-force -> rtcd_world_def.narrowphase.traversal */
    rtcd_contact_normal contact_normal; /* --contact-normal reprojected (default) | ray | weighted */
    uint32_t threads;             /* --threads N: CPU worker threads (0, default: all cores) */
    /* rtcd's contact processing, each 1 (on, default) or 0 (off) ->
     * rtcd_world_def.narrowphase.speculative, .edge_crossings, .deep_contacts */
    int speculative;              /* --speculative on|off */
    float speculative_margin;     /* --speculative-margin M -> rtcd_world_def.narrowphase.speculative_margin */
    int edge_crossings;           /* --edge-crossings on|off */
    int deep_contacts;            /* --deep-contacts on|off */
    /* --mesh FILE (repeatable): the user's meshes (user_meshes.h), every
     * closed piece of every file a shape of its own. The avalanche's bodies
     * and the spawner's drops take them in turn in place of the generated
     * meshes; the mixed scene puts them in its concave slots, in turn with
     * the blob. */
    demo_cli_list meshes;
    float mesh_scale;             /* --mesh-scale S: coordinates times S; 0 (default): each piece fit to the blob's size */
    uint32_t deforming;           /* --deforming K: the first K bodies (drops) deform (deform.h); avalanche and spawner */
    /* The viewer (demos/viewer/viewer.h), drawn after every step: --view
     * opens a window, --frames DIR writes DIR/frame_00000.png ... off-screen
     * (no display needed), --frame-size WxH (default 640x480), --contacts
     * draws the contact points and normals from the start. */
    int view;
    const char* frames_dir;       /* NULL: no frames */
    uint32_t frame_width, frame_height;
    int show_contacts;
} demo_options;

/* Sets *o to the defaults of the scene's program (what demo_parse_options
 * starts from). */
void demo_default_options(demo_scene_kind scene, demo_options* o);

/* "standard", "iterative", "predictive" (the demos' option values). */
const char* demo_traversal_name(rtcd_traversal traversal);
const char* demo_contact_normal_name(rtcd_contact_normal normal);

/* Parses argv (demo_cli.h): returns DEMO_CLI_OK (0), DEMO_CLI_HELP (usage
 * printed; exit 0) or DEMO_CLI_BAD (2: message and usage on stderr). */
int demo_parse_options(demo_scene_kind scene, int argc, char** argv, demo_options* out);

/* THE mapping from demo options to the world definition: every program that
 * creates a world builds its definition here (starting from
 * rtcd_default_world_def), so a change of rtcd_world_def is adapted here only. */
void demo_world_def(const demo_options* o, rtcd_world_def* def);

/* FNV-1a 64 over the bytes, as stored, of every body's pose in body order
 * (rtcd_world_get_pose: rotation[9] then translation[3] floats): equal
 * checksums mean bit-identical final poses. Printed as 16 hex digits. */
uint64_t demo_pose_checksum(const rtcd_world* world);

typedef struct demo_scene {
    demo_scene_kind kind;
    rtcd_world* world;
    rtcd_shape** shapes;          /* shape_count; avalanche: shapes[0] (or the user's, in turn); mixed: none */
    uint32_t shape_count;
    uint32_t* shape_triangles;    /* shape_count */
    uint64_t triangles_total;     /* over all bodies */
    uint64_t rng;
    uint32_t spawned;             /* spawner: bodies added so far */
    float bounding_radius;        /* largest distance of a vertex from a body's origin, all shapes */
    uint32_t user_meshes;         /* meshes read from --mesh files (in use as shapes) */
    mixed_scene mixed;            /* DEMO_MIXED: the terrain, the bodies' kinds, the tunnelling check */
    uint32_t deforming_wanted;    /* --deforming */
    demo_deformer deform;         /* the deforming bodies' shapes */
} demo_scene;

/* The spawner's source: 10 Hz at 60 Hz, 13 drops a turn (see demo_scene_update). */
#define DEMO_SPAWN_EVERY 6u
#define DEMO_SPAWN_PER_TURN 13u
#define DEMO_SPAWN_RADIUS 3.0
#define DEMO_SPAWN_HEIGHT 6.0f

/* Largest distance of a vertex of the shape's body mesh from the body origin. */
float demo_shape_bounding_radius(const rtcd_shape* shape);

/* A few steps of a small avalanche on the backend a benchmark asks for, so
 * that the OpenCL kernels' first build (hundreds of ms, cached afterwards)
 * does not land in the first timed run. */
void demo_warm_up(int backend, uint32_t devices, uint32_t threads, uint64_t seed);

/* Builds the world and the scene's shapes; the avalanche's and the mixed
 * scene's bodies too. A --mesh file that cannot be used fails it with a line
 * on stderr naming the file and the reason. */
rtcd_error demo_scene_create(const demo_options* opt, demo_scene* out);
/* Per step before rtcd_world_step: the spawner adds a body every 0.1 s. */
rtcd_error demo_scene_update(demo_scene* scene, uint32_t step);
void demo_scene_destroy(demo_scene* scene);

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

/* Runs one scene (o->compare is ignored) and fills *r; returns 0, or the
 * process exit code on a failure (r->steps then says how far it got). */
int demo_run_scene(const demo_options* opt, demo_summary* r);

/* The summary as one JSON object (no newline). */
void demo_print_summary_json(FILE* f, const demo_summary* r);

/* The penetration windows as a JSON array (no newline):
 * [{"first":0,"last":99,"samples":20,"max":0.01234,"mean_sum":0.56789},...];
 * max and mean_sum are null in a window without samples. */
void demo_print_penetration_windows_json(FILE* f, const demo_summary* r);

/* Runs the whole scene as the programs do; returns the process exit code. */
int demo_run(const demo_options* opt);

#endif
