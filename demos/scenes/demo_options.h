/* The demo programs' options (what each flag sets, the defaults per scene)
 * and the one mapping from them to a world definition. */
#ifndef RTCD_DEMO_OPTIONS_H
#define RTCD_DEMO_OPTIONS_H

#include "demo_cli.h"

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_world.h>

/* The demos' simulation rate (steps per simulated second). */
#define DEMO_HZ 60.0f

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

#endif
