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

#define BLOB_RADIUS 0.5f
#define DEMO_HZ 60.0f

/* Why demo_scene_create failed, where rtcd's own message would not say
 * (a --mesh file); "" otherwise. */
static char scene_error[512];

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

uint64_t demo_pose_checksum(const rtcd_world* w)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */
    for (uint32_t b = 0; w && b < rtcd_world_body_count(w); ++b) {
        rtcd_transform t;
        memset(&t, 0, sizeof t);
        rtcd_world_get_pose(w, b, &t);
        unsigned char bytes[12 * sizeof(float)];
        memcpy(bytes, t.rotation, sizeof t.rotation);
        memcpy(bytes + sizeof t.rotation, t.translation, sizeof t.translation);
        for (size_t k = 0; k < sizeof bytes; ++k) {
            h ^= bytes[k];
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

void demo_warm_up(int backend, uint32_t devices, uint32_t threads, uint64_t seed)
{
    demo_options probe;
    demo_default_options(DEMO_AVALANCHE, &probe);
    probe.objects = 8;
    probe.seed = seed;
    probe.backend = (rtcd_backend)backend;
    probe.devices = devices;
    probe.threads = threads;
    demo_scene ps;
    if (demo_scene_create(&probe, &ps) == RTCD_OK)
        for (uint32_t step = 0; step < 40; ++step)
            if (rtcd_world_step(ps.world) != RTCD_OK) break;
    demo_scene_destroy(&ps);
}

float demo_shape_bounding_radius(const rtcd_shape* shape)
{
    const rtcd_mesh* m = rtcd_shape_body_mesh(shape);
    const float* v = rtcd_mesh_vertices(m);
    float r2 = 0.0f;
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(m); ++i) {
        float d2 = v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2];
        r2 = d2 > r2 ? d2 : r2;
    }
    return sqrtf(r2);
}

static rtcd_error make_shape(demo_scene* s, uint32_t vertices, uint64_t seed, uint32_t slot)
{
    rtcd_generated_mesh g;
    rtcd_error err = rtcd_generate_blob(vertices, BLOB_RADIUS, seed, &g);
    if (err != RTCD_OK) return err;
    rtcd_mesh* mesh = NULL;
    if ((err = scene_mesh_from_generated(&g, "blob", &mesh)) != RTCD_OK) return err;
    err = rtcd_shape_create(s->world, mesh, &s->shapes[slot]);
    s->shape_triangles[slot] = rtcd_mesh_triangle_count(mesh);
    rtcd_mesh_release(mesh);
    return err;
}

/* The scene's shapes: the user's meshes when given, else the generated ones. */
static rtcd_error make_shapes(demo_scene* s, const demo_options* o, const user_meshes* um)
{
    s->shape_count = um->count ? um->file_count : (o->scene == DEMO_AVALANCHE ? 1 : RTCD_SPAWNER_MESH_COUNT);
    s->shapes = calloc(s->shape_count, sizeof *s->shapes);
    s->shape_triangles = calloc(s->shape_count, sizeof *s->shape_triangles);
    if (!s->shapes || !s->shape_triangles) return RTCD_ERROR_OUT_OF_MEMORY;
    for (uint32_t k = 0; k < s->shape_count; ++k) {
        rtcd_error err;
        if (um->count) {
            err = user_meshes_shape(s->world, um, k, &s->shapes[k], &s->shape_triangles[k]);
        } else {
            uint32_t nv = o->scene == DEMO_AVALANCHE ? RTCD_AVALANCHE_BLOB_VERTICES : rtcd_spawner_mesh_vertices(k);
            err = make_shape(s, nv, o->seed + k, k);
        }
        if (err != RTCD_OK) return err;
    }
    return RTCD_OK;
}

/* The avalanche's cube of blobs: side^3 places (the last layer partly
 * filled), lowest layer z0 up (1 m, or more for large meshes), spacing the
 * bounding diameter plus 2 cm so that no two blobs touch at the start
 * whatever the seed (1.29 m for the default seed). */
typedef struct avalanche_cube {
    uint32_t side;
    float spacing, z0;
} avalanche_cube;

static avalanche_cube avalanche_cube_of(uint32_t objects, float bounding_radius)
{
    avalanche_cube c;
    c.side = 1;
    while ((uint64_t)c.side * c.side * c.side < objects) ++c.side;
    c.spacing = 2.0f * bounding_radius + 0.02f;
    c.z0 = fmaxf(1.0f, bounding_radius + 0.1f);
    return c;
}

rtcd_error demo_scene_create(const demo_options* o, demo_scene* s)
{
    memset(s, 0, sizeof *s);
    s->kind = o->scene;
    s->rng = o->seed;
    s->deforming_wanted = o->scene == DEMO_MIXED ? 0 : o->deforming;
    scene_error[0] = '\0';
    /* the user's meshes first: a file that cannot be used fails before any work */
    user_meshes um;
    rtcd_error err = user_meshes_load(o->meshes.items, o->meshes.count, o->mesh_scale, &um, scene_error,
                                      sizeof scene_error);
    if (err != RTCD_OK) return err;
    s->user_meshes = um.count;
    rtcd_world_def def;
    demo_world_def(o, &def);
    if ((err = rtcd_world_create(&def, &s->world)) != RTCD_OK) {
        user_meshes_free(&um);
        return err;
    }
    if (o->scene == DEMO_MIXED) {
        /* the terrain and the bodies; no ground plane */
        mixed_def md = {o->objects, o->seed, &um};
        err = mixed_scene_create(s->world, &md, &s->mixed);
        user_meshes_free(&um);
        s->triangles_total = s->mixed.triangles_total;
        s->bounding_radius = s->mixed.max_size;
        return err;
    }
    float up[3] = {0, 0, 1};
    if ((err = rtcd_world_add_plane(s->world, up, 0.0f)) == RTCD_OK) err = make_shapes(s, o, &um);
    user_meshes_free(&um); /* the shapes hold the meshes */
    if (err != RTCD_OK) return err;
    for (uint32_t k = 0; k < s->shape_count; ++k) {
        float r = demo_shape_bounding_radius(s->shapes[k]);
        s->bounding_radius = r > s->bounding_radius ? r : s->bounding_radius;
    }
    if (o->scene != DEMO_AVALANCHE) return RTCD_OK;
    /* Seeded orientations; the user's meshes, when given, take the places
     * in turn. */
    const avalanche_cube c = avalanche_cube_of(o->objects, s->bounding_radius);
    for (uint32_t b = 0; b < o->objects; ++b) {
        float x = ((float)(b % c.side) - 0.5f * (float)(c.side - 1)) * c.spacing;
        float y = ((float)(b / c.side % c.side) - 0.5f * (float)(c.side - 1)) * c.spacing;
        float z = c.z0 + (float)(b / (c.side * c.side)) * c.spacing;
        rtcd_transform pose = scene_random_pose(&s->rng, x, y, z);
        uint32_t k = b % s->shape_count;
        rtcd_shape* shape = s->shapes[k];
        if (b < o->deforming &&
            (err = demo_deformer_add(&s->deform, s->world, s->shapes[k], (float)(b * 2.399963), &shape)) != RTCD_OK)
            return err;
        if ((err = rtcd_world_add_body(s->world, shape, 1.0f, &pose, NULL)) != RTCD_OK) return err;
        s->triangles_total += s->shape_triangles[k];
    }
    return RTCD_OK;
}

rtcd_error demo_scene_update(demo_scene* s, uint32_t step)
{
    if (s->kind != DEMO_SPAWNER || step % DEMO_SPAWN_EVERY != 0) return RTCD_OK;
    /* The source circles 6 m up at 3 m radius and drops one object at rest
     * every 0.1 s. Consecutive drops must not overlap: in 0.1 s the previous
     * object falls only 5 cm, so the source itself has to move a bounding
     * diameter (1.35 m) between drops, 13 drops a turn, one turn every 1.3 s.
     * (A slower source, one turn every 10 s, puts each new object 19 cm from
     * the one before: deep overlaps that the solver pushes apart violently.)
     * An object dropped one turn earlier has fallen 8 m by then: landed. */
    uint32_t n = s->spawned;
    double angle = 2.0 * M_PI * (double)(n % DEMO_SPAWN_PER_TURN) / DEMO_SPAWN_PER_TURN;
    uint32_t k = n % s->shape_count; /* the four meshes (or the user's) in equal numbers */
    rtcd_transform pose = scene_random_pose(&s->rng, (float)(DEMO_SPAWN_RADIUS * cos(angle)),
                                            (float)(DEMO_SPAWN_RADIUS * sin(angle)), DEMO_SPAWN_HEIGHT);
    rtcd_shape* shape = s->shapes[k];
    rtcd_error err = RTCD_OK;
    if (n < s->deforming_wanted) err = demo_deformer_add(&s->deform, s->world, s->shapes[k], (float)(n * 2.399963), &shape);
    if (err == RTCD_OK) err = rtcd_world_add_body(s->world, shape, 1.0f, &pose, NULL);
    if (err == RTCD_OK) {
        s->spawned++;
        s->triangles_total += s->shape_triangles[k];
    }
    return err;
}

void demo_scene_destroy(demo_scene* s)
{
    for (uint32_t k = 0; s->shapes && k < s->shape_count; ++k) rtcd_shape_release(s->shapes[k]);
    demo_deformer_free(&s->deform);
    free(s->shapes);
    free(s->shape_triangles);
    mixed_scene_destroy(&s->mixed);
    rtcd_world_release(s->world);
    memset(s, 0, sizeof *s);
}

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
    if (scene_error[0]) fprintf(stderr, "rtcd demo: %s\n", scene_error);
    else fprintf(stderr, "rtcd demo: %s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    return 1;
}

static const char* narrowphase_name(rtcd_narrowphase_kind k)
{
    return k == RTCD_NARROWPHASE_GIMPACT ? "gimpact" : (k == RTCD_NARROWPHASE_HULL ? "hull" : "rtcd");
}


/* 100 * incorrect / compared over the run; < 0 when there is nothing to report. */
static double incorrect_pct(const demo_summary* r)
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
    double pct = incorrect_pct(r);
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
            "\"manifolds_released\":%llu,\"step_minus_narrowphase_ms_mean\":%.4f,\"step_minus_narrowphase_ms_median\":%.4f,",
            r->parts.gather, r->parts.plane, r->parts.writeback, r->parts.dispatch, r->parts.pairs_owned,
            r->parts.pairs_owned > 0 ? 1e3 * (r->np_mean - r->batch_mean) / r->parts.pairs_owned : 0.0,
            r->parts.manifolds, r->parts.manifolds_total, r->parts.manifolds_total_last,
            (unsigned long long)r->parts.created, (unsigned long long)r->parts.released, r->parts.rest_mean,
            r->parts.rest_median);
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
        const avalanche_cube c = avalanche_cube_of(o->objects, s->bounding_radius);
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
            double pct = incorrect_pct(&r);
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
           "\"manifolds_ratio_vs_gimpact\":%.3f,",
           r[1].parts.rest_mean > 0 ? r[0].parts.rest_mean / r[1].parts.rest_mean : 0.0,
           r[1].parts.rest_median > 0 ? r[0].parts.rest_median / r[1].parts.rest_median : 0.0,
           r[1].parts.manifolds_total > 0 ? r[0].parts.manifolds_total / r[1].parts.manifolds_total : 0.0);
        /* Deforming bodies: the step plus the vertex updates before it, as a program pays them. */
    double own = r[0].mean + r[0].deform_ms_mean, theirs = r[1].mean + r[1].deform_ms_mean;
    printf("\"step_with_deformation_speedup_vs_gimpact\":%.3f,\"penetration_max_ratio_vs_gimpact\":%.3f}\n",
           own > 0 ? theirs / own : 0.0, r[1].pen_max > 0 ? r[0].pen_max / r[1].pen_max : 0.0);
    return rc;
}
