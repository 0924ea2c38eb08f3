/* The scenes: the avalanche's cube of blobs, the spawner's circling source
 * and the mixed scene (mixed.c) in a world built from the demo options. */
#include "demo_scene.h"

#include "scene_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_RADIUS 0.5f

/* Why demo_scene_create failed, where rtcd's own message would not say
 * (a --mesh file); "" otherwise. */
static char scene_error[512];

const char* demo_scene_error(void) { return scene_error; }

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
demo_avalanche_cube demo_avalanche_cube_of(uint32_t objects, float bounding_radius)
{
    demo_avalanche_cube c;
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
    const demo_avalanche_cube c = demo_avalanche_cube_of(o->objects, s->bounding_radius);
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
