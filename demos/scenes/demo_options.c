/* The demo programs' options: their defaults per scene, the command line
 * (demo_cli.h) and THE mapping from options to a world definition. */
#include "demo_options.h"

#include <stdlib.h>
#include <string.h>

const char* demo_traversal_name(rtcd_traversal t)
{
    return t == RTCD_TRAVERSAL_BRUTE_FORCE ? "brute-force" : (t == RTCD_TRAVERSAL_BVH_STACKLESS ? "bvh-stackless" : "bvh");
}

const char* demo_contact_normal_name(rtcd_contact_normal n)
{
    return n == RTCD_CONTACT_RAY ? "ray" : (n == RTCD_CONTACT_RAY_WEIGHTED ? "weighted" : "reprojected");
}

void demo_default_options(demo_scene_kind scene, demo_options* o)
{
    memset(o, 0, sizeof *o);
    o->scene = scene;
    o->objects = scene == DEMO_MIXED ? 128 : 512;
    o->steps = scene == DEMO_SPAWNER ? 3000 : 600;
    o->seed = 1;
    o->penetration_every = 10;
    o->algorithm = RTCD_ALGORITHM_PREDICTIVE;
    o->adaptive = 1;
    /* rtcd's contact processing: what rtcd_default_narrowphase_def has */
    o->speculative = 1;
    o->speculative_margin = rtcd_default_narrowphase_def().speculative_margin;
    o->edge_crossings = 1;
    o->deep_contacts = 1;
    o->frame_width = 640;
    o->frame_height = 480;
}

static const demo_cli_choice narrowphase_choices[] = {
    {"rtcd", RTCD_NARROWPHASE_RTCD}, {"gimpact", RTCD_NARROWPHASE_GIMPACT}, {"hull", RTCD_NARROWPHASE_HULL},
    {"all", -1}, {NULL, 0}};
static const demo_cli_choice backend_choices[] = {
    {"auto", RTCD_BACKEND_AUTO}, {"cpu", RTCD_BACKEND_CPU}, {"opencl", RTCD_BACKEND_OPENCL}, {NULL, 0}};
static const demo_cli_choice algorithm_choices[] = {{"standard", RTCD_ALGORITHM_STANDARD},
                                                    {"iterative", RTCD_ALGORITHM_ITERATIVE},
                                                    {"predictive", RTCD_ALGORITHM_PREDICTIVE},
                                                    {NULL, 0}};
static const demo_cli_choice params_choices[] = {{"adaptive", 1}, {"fixed", 0}, {NULL, 0}};
static const demo_cli_choice on_off_choices[] = {{"on", 1}, {"off", 0}, {NULL, 0}};
static const demo_cli_choice traversal_choices[] = {
    {"bvh", RTCD_TRAVERSAL_BVH}, {"brute-force", RTCD_TRAVERSAL_BRUTE_FORCE}, {NULL, 0}};
static const demo_cli_choice contact_normal_choices[] = {{"reprojected", RTCD_CONTACT_REPROJECTED},
                                                         {"ray", RTCD_CONTACT_RAY},
                                                         {"weighted", RTCD_CONTACT_RAY_WEIGHTED},
                                                         {NULL, 0}};

int demo_parse_options(demo_scene_kind scene, int argc, char** argv, demo_options* o)
{
    demo_default_options(scene, o);
    /* enum options go through ints (the parser's enum target) */
    int narrowphase = (int)o->narrowphase, backend = (int)o->backend, algorithm = (int)o->algorithm;
    int traversal = (int)o->traversal, contact_normal = (int)o->contact_normal;
    const char* frame_size = NULL;
    const char* mesh_help =
        scene == DEMO_AVALANCHE ? "model file (repeatable) for the bodies, not the blob: each file a shape (several "
                                  "pieces: a compound), the bodies take them in turn"
        : scene == DEMO_SPAWNER ? "model file (repeatable) for the drops, not the four meshes: each file a shape (several pieces: a "
                                  "compound), the drops take them in turn"
                                : "model file (repeatable): each file a shape (several pieces: a compound), in the "
                                  "concave slots in turn with the blob";
    const demo_cli_option all[] = {
        {.name = "--objects", .type = DEMO_CLI_U32, .target = &o->objects, .meta = "N", .min = 1, .max = 1u << 20,
         .help = scene == DEMO_MIXED ? "bodies (default 128)" : "bodies (default 512)"},
        {.name = "--steps", .type = DEMO_CLI_U32, .target = &o->steps, .meta = "N", .max = 100000000u,
         .help = scene == DEMO_SPAWNER ? "60 Hz steps (default 3000)" : "60 Hz steps (default 600)"},
        {.name = "--seed", .type = DEMO_CLI_U64, .target = &o->seed, .meta = "N", .help = "meshes and poses (default 1)"},
        {.name = "--narrowphase", .type = DEMO_CLI_ENUM, .target = &narrowphase, .choices = narrowphase_choices,
         .help = "all: the three one after the other, one JSON"},
        {.name = "--backend", .type = DEMO_CLI_ENUM, .target = &backend, .choices = backend_choices,
         .help = "rtcd's backend (default auto)"},
        {.name = "--devices", .type = DEMO_CLI_U32, .target = &o->devices, .meta = "N", .max = 1024,
         .help = "OpenCL devices at most (default 0: all selected)"},
        {.name = "--threads", .type = DEMO_CLI_U32, .target = &o->threads, .meta = "N", .max = 1024,
         .help = "CPU worker threads (default 0: all cores)"},
        {.name = "--algorithm", .type = DEMO_CLI_ENUM, .target = &algorithm, .choices = algorithm_choices,
         .help = "rtcd's algorithm (default predictive)"},
        {.name = "--params", .type = DEMO_CLI_ENUM, .target = &o->adaptive, .choices = params_choices,
         .help = "per-pair parameters (default adaptive)"},
        {.name = "--check", .type = DEMO_CLI_FLAG, .target = &o->check,
         .help = "also run the standard algorithm every step (checking mode)"},
        {.name = "--traversal", .type = DEMO_CLI_ENUM, .target = &traversal, .choices = traversal_choices,
         .help = "ray traversal (default bvh)"},
        {.name = "--contact-normal", .type = DEMO_CLI_ENUM, .target = &contact_normal,
         .choices = contact_normal_choices, .help = "contact normals (default reprojected)"},
        {.name = "--speculative", .type = DEMO_CLI_ENUM, .target = &o->speculative, .choices = on_off_choices,
         .help = "speculative contacts, predictive algorithm (default on)"},
        {.name = "--speculative-margin", .type = DEMO_CLI_FLOAT, .target = &o->speculative_margin, .meta = "M",
         .fmin = 0.0f, .fmax = 1.0f, .help = "speculative contacts' margin in metres (default 0.005)"},
        {.name = "--edge-crossings", .type = DEMO_CLI_ENUM, .target = &o->edge_crossings, .choices = on_off_choices,
         .help = "contacts of surfaces crossing edge through face (default on)"},
        {.name = "--deep-contacts", .type = DEMO_CLI_ENUM, .target = &o->deep_contacts, .choices = on_off_choices,
         .help = "contacts of deep or enclosed vertices (default on)"},
        {.name = "--csv", .type = DEMO_CLI_STRING, .target = &o->csv_path, .meta = "FILE", .help = "one row per step"},
        {.name = "--json", .type = DEMO_CLI_FLAG, .target = &o->json, .help = "one-line JSON summary on stdout"},
        {.name = "--penetration-every", .type = DEMO_CLI_U32, .target = &o->penetration_every, .meta = "K",
         .help = "measure penetration every K steps (default 10; 0: never)"},
        {.name = "--view", .type = DEMO_CLI_FLAG, .target = &o->view,
         .help = "a window: space pauses, n steps, c contacts, WASD/arrows/mouse camera, Esc quits"},
        {.name = "--frames", .type = DEMO_CLI_STRING, .target = &o->frames_dir, .meta = "DIR",
         .help = "one PNG a step, DIR/frame_00000.png ..., rendered off-screen (no display needed)"},
        {.name = "--frame-size", .type = DEMO_CLI_STRING, .target = &frame_size, .meta = "WxH",
         .help = "the frames' and the window's size in pixels (default 640x480)"},
        {.name = "--contacts", .type = DEMO_CLI_FLAG, .target = &o->show_contacts,
         .help = "draw contact points and normals (--view, --frames)"},
        {.name = "--mesh", .type = DEMO_CLI_LIST, .target = &o->meshes, .meta = "FILE", .help = mesh_help},
        {.name = "--mesh-scale", .type = DEMO_CLI_FLOAT, .target = &o->mesh_scale, .meta = "S", .fmin = 0.0,
         .fmax = 1e6, .help = "--mesh coordinates times S (default 0: each file fit to the blob's size, 0.5 m)"},
        {.name = "--deforming", .type = DEMO_CLI_U32, .target = &o->deforming, .meta = "K", .max = 1u << 20,
         .help = scene == DEMO_SPAWNER ? "the first K drops pulse and twist at 1 Hz, each its own shape (default 0)"
                                       : "K bodies pulse and twist at 1 Hz, each its own shape (default 0)"},
    };
    /* the spawner has no --objects; the mixed scene no --deforming */
    const demo_cli_option* table = scene != DEMO_SPAWNER ? all : all + 1;
    size_t table_size = sizeof all / sizeof *all - (size_t)(table - all) - (scene == DEMO_MIXED ? 1u : 0u);
    demo_cli cli = {argv[0],
                    scene == DEMO_AVALANCHE ? "The JVRC 2013 avalanche: blobs falling on a plane."
                    : scene == DEMO_SPAWNER ? "The JVRC 2013 spawner: objects dropped from a circling source."
                                            : "The mixed scene: blobs, boxes, spheres, capsules, a convex hull, "
                                              "cylinders and cones dropped on a one-sided terrain.",
                    table, table_size};
    int rc = demo_cli_parse(&cli, argc, argv);
    if (rc) return rc;
    if (frame_size) {
        char extra;
        if (sscanf(frame_size, "%ux%u%c", &o->frame_width, &o->frame_height, &extra) != 2 || o->frame_width < 64 ||
            o->frame_height < 64 || o->frame_width > 4096 || o->frame_height > 4096)
            return demo_cli_fail(&cli, "--frame-size: '%s' is not WxH with W and H in [64, 4096]", frame_size);
    }
    if ((o->view || o->frames_dir) && narrowphase < 0)
        return demo_cli_fail(&cli, "--view and --frames show one run: not with --narrowphase all");
    o->compare = narrowphase < 0;
    o->narrowphase = narrowphase < 0 ? RTCD_NARROWPHASE_RTCD : (rtcd_narrowphase_kind)narrowphase;
    o->backend = (rtcd_backend)backend;
    o->algorithm = (rtcd_algorithm)algorithm;
    o->traversal = (rtcd_traversal)traversal;
    o->contact_normal = (rtcd_contact_normal)contact_normal;
    return DEMO_CLI_OK;
}

void demo_world_def(const demo_options* o, rtcd_world_def* def)
{
    *def = rtcd_default_world_def();
    def->time_step = 1.0f / DEMO_HZ;
    def->narrowphase_kind = o->narrowphase;
    rtcd_narrowphase_def* nd = &def->narrowphase;
    nd->backend = o->backend;
    nd->max_devices = o->devices;
    nd->threads = o->threads;
    nd->traversal = o->traversal;
    nd->contact_normal = o->contact_normal;
    nd->iterative.algorithm = o->algorithm;
    nd->iterative.adaptive = o->adaptive;
    nd->speculative = o->speculative;
    nd->speculative_margin = o->speculative_margin;
    nd->edge_crossings = o->edge_crossings;
    nd->deep_contacts = o->deep_contacts;
    def->check = o->check;
}
