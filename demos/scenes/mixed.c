#include "mixed.h"

#include "scene_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIDE (MIXED_TERRAIN_QUADS + 1u)
#define CELL (MIXED_TERRAIN_SIZE / (float)MIXED_TERRAIN_QUADS)
#define HALF (0.5f * MIXED_TERRAIN_SIZE)
#define BLOB_RADIUS 0.5f
#define HULL_POINTS 14u
#define SLOTS 12u

const char* mixed_kind_name(mixed_kind k)
{
    static const char* const names[MIXED_KIND_COUNT] = {"blob", "box",      "sphere", "capsule",
                                                        "hull", "cylinder", "cone",   "user"};
    return (unsigned)k < MIXED_KIND_COUNT ? names[k] : "?";
}

/* The slots' kinds: a concave body every other slot. */
static const mixed_kind slot_kind[SLOTS] = {MIXED_BLOB, MIXED_BOX,  MIXED_BLOB, MIXED_SPHERE,   MIXED_BLOB, MIXED_CAPSULE,
                                            MIXED_BLOB, MIXED_HULL, MIXED_BLOB, MIXED_CYLINDER, MIXED_BLOB, MIXED_CONE};

static float smoothstep(float e0, float e1, float x)
{
    float t = (x - e0) / (e1 - e0);
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return t * t * (3.0f - 2.0f * t);
}

/* The smooth terrain the grid samples: hills of about 1 m (peak to valley)
 * on a shallow bowl, and a rim rising from 7.5 m out (a rounded square
 * distance, so that the corners rise as the sides do). */
static float terrain_function(float x, float y)
{
    float hills = 0.35f * sinf(0.55f * x + 0.4f) * cosf(0.5f * y - 0.3f) +
                  0.2f * cosf(0.9f * x - 0.7f * y + 1.1f) + 0.12f * sinf(1.3f * y + 0.5f * x);
    float d = sqrtf(sqrtf(x * x * x * x + y * y * y * y));
    float rim = smoothstep(7.5f, 11.5f, d);
    return hills * (1.0f - 0.6f * rim) + 0.012f * d * d + 2.5f * rim;
}

int mixed_terrain_arrays(const mixed_scene* s, float** vertices, uint32_t** indices)
{
    const uint32_t q = MIXED_TERRAIN_QUADS;
    float* v = malloc(3 * sizeof(float) * MIXED_TERRAIN_VERTICES);
    uint32_t* idx = malloc(3 * sizeof(uint32_t) * MIXED_TERRAIN_TRIANGLES);
    *vertices = NULL;
    *indices = NULL;
    if (!v || !idx) {
        free(v);
        free(idx);
        return 0;
    }
    for (uint32_t j = 0; j < SIDE; ++j)
        for (uint32_t i = 0; i < SIDE; ++i) {
            uint32_t k = j * SIDE + i;
            v[3 * k] = -HALF + (float)i * CELL;
            v[3 * k + 1] = -HALF + (float)j * CELL;
            v[3 * k + 2] = s->heights[k];
        }
    /* Two triangles a quad, counter-clockwise seen from above (fronts up),
     * split along the diagonal from (i, j) to (i + 1, j + 1). */
    uint32_t* t = idx;
    for (uint32_t j = 0; j < q; ++j)
        for (uint32_t i = 0; i < q; ++i) {
            uint32_t a = j * SIDE + i, b = a + 1, c = a + SIDE + 1, d = a + SIDE;
            t[0] = a, t[1] = b, t[2] = c;
            t[3] = a, t[4] = c, t[5] = d;
            t += 6;
        }
    *vertices = v;
    *indices = idx;
    return 1;
}

static rtcd_error make_terrain(rtcd_world* world, mixed_scene* s)
{
    for (uint32_t j = 0; j < SIDE; ++j)
        for (uint32_t i = 0; i < SIDE; ++i)
            s->heights[j * SIDE + i] = terrain_function(-HALF + (float)i * CELL, -HALF + (float)j * CELL);
    float* v;
    uint32_t* idx;
    if (!mixed_terrain_arrays(s, &v, &idx)) return RTCD_ERROR_OUT_OF_MEMORY;
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v;
    def.vertex_count = MIXED_TERRAIN_VERTICES;
    def.indices = idx;
    def.triangle_count = MIXED_TERRAIN_TRIANGLES;
    def.flags = RTCD_MESH_OPEN_SURFACE;
    def.name = "mixed_terrain";
    rtcd_mesh* mesh = NULL;
    rtcd_error err = rtcd_mesh_create(&def, &mesh);
    free(v);
    free(idx);
    if (err != RTCD_OK) return err;
    s->terrain_triangles = rtcd_mesh_triangle_count(mesh);
    rtcd_transform identity = rtcd_transform_identity();
    err = rtcd_world_add_static_mesh(world, mesh, &identity); /* the world retains the mesh */
    rtcd_mesh_release(mesh);
    return err;
}

float mixed_terrain_height(const mixed_scene* s, float x, float y)
{
    float gx = (x + HALF) / CELL, gy = (y + HALF) / CELL;
    const float top = (float)MIXED_TERRAIN_QUADS;
    gx = gx < 0.0f ? 0.0f : (gx > top ? top : gx);
    gy = gy < 0.0f ? 0.0f : (gy > top ? top : gy);
    uint32_t i = (uint32_t)gx, j = (uint32_t)gy;
    if (i >= MIXED_TERRAIN_QUADS) i = MIXED_TERRAIN_QUADS - 1;
    if (j >= MIXED_TERRAIN_QUADS) j = MIXED_TERRAIN_QUADS - 1;
    float u = gx - (float)i, w = gy - (float)j;
    const float* h = s->heights;
    float ha = h[j * SIDE + i], hb = h[j * SIDE + i + 1], hc = h[(j + 1) * SIDE + i + 1], hd = h[(j + 1) * SIDE + i];
    /* triangle (a, b, c) below the diagonal (u >= w), (a, c, d) above it */
    return u >= w ? ha + u * (hb - ha) + w * (hc - hb) : ha + w * (hd - ha) + u * (hc - hd);
}

/* A shape and its size (largest distance of its surface from its origin). */
typedef struct kind_shape {
    rtcd_shape* shape;
    float size;
    uint32_t triangles;
} kind_shape;


static rtcd_error concave_shape(rtcd_world* world, rtcd_mesh* mesh, kind_shape* out)
{
    rtcd_error err = rtcd_shape_create(world, mesh, &out->shape);
    if (err != RTCD_OK) return err;
    out->size = demo_shape_bounding_radius(out->shape);
    out->triangles = rtcd_mesh_triangle_count(mesh);
    return RTCD_OK;
}

/* A --mesh file's shape (a compound of its pieces where it has several). */
static rtcd_error user_shape(rtcd_world* world, const user_meshes* users, uint32_t file, kind_shape* out)
{
    rtcd_error err = user_meshes_shape(world, users, file, &out->shape, &out->triangles);
    if (err != RTCD_OK) return err;
    out->size = demo_shape_bounding_radius(out->shape);
    return RTCD_OK;
}

static rtcd_error blob_shape(rtcd_world* world, uint64_t seed, kind_shape* out)
{
    rtcd_generated_mesh g;
    rtcd_error err = rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, BLOB_RADIUS, seed, &g);
    if (err != RTCD_OK) return err;
    rtcd_mesh* mesh = NULL;
    if ((err = scene_mesh_from_generated(&g, "blob", &mesh)) != RTCD_OK) return err;
    err = concave_shape(world, mesh, out);
    rtcd_mesh_release(mesh);
    return err;
}

/* The convex kinds, sized like the blob (0.3 to 0.5 m from the centre). The
 * sizes add Bullet's default margin (0.04 m) for the shapes that grow by it. */
static rtcd_error convex_shape(rtcd_world* world, mixed_kind kind, uint64_t* rng, kind_shape* out)
{
    rtcd_convex_def def = rtcd_default_convex_def();
    const float margin = 0.04f;
    float points[3 * HULL_POINTS];
    switch (kind) {
    case MIXED_BOX:
        def.kind = RTCD_CONVEX_BOX;
        def.half_extents[0] = 0.35f, def.half_extents[1] = 0.25f, def.half_extents[2] = 0.18f;
        out->size = sqrtf(0.35f * 0.35f + 0.25f * 0.25f + 0.18f * 0.18f);
        break;
    case MIXED_SPHERE:
        def.kind = RTCD_CONVEX_SPHERE;
        def.radius = 0.3f;
        out->size = 0.3f;
        break;
    case MIXED_CAPSULE:
        def.kind = RTCD_CONVEX_CAPSULE;
        def.radius = 0.18f, def.half_height = 0.3f;
        out->size = 0.48f;
        break;
    case MIXED_CYLINDER:
        def.kind = RTCD_CONVEX_CYLINDER;
        def.radius = 0.28f, def.half_height = 0.25f;
        out->size = sqrtf(0.28f * 0.28f + 0.25f * 0.25f) + margin;
        break;
    case MIXED_CONE:
        def.kind = RTCD_CONVEX_CONE;
        def.radius = 0.3f, def.half_height = 0.3f;
        out->size = sqrtf(0.3f * 0.3f + 0.3f * 0.3f) + margin;
        break;
    case MIXED_HULL: {
        /* seeded points on an ellipsoid, pulled in a little at random */
        float r2 = 0.0f;
        for (uint32_t p = 0; p < HULL_POINTS; ++p) {
            double z = 2.0 * scene_rng_uniform(rng) - 1.0, a = 2.0 * M_PI * scene_rng_uniform(rng);
            double s = sqrt(1.0 - z * z), f = 0.8 + 0.2 * scene_rng_uniform(rng);
            float* q = &points[3 * p];
            q[0] = (float)(0.42 * f * s * cos(a));
            q[1] = (float)(0.32 * f * s * sin(a));
            q[2] = (float)(0.26 * f * z);
            float d2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
            r2 = d2 > r2 ? d2 : r2;
        }
        def.kind = RTCD_CONVEX_HULL;
        def.points = points;
        def.point_count = HULL_POINTS;
        out->size = sqrtf(r2) + margin;
        break;
    }
    default:
        return RTCD_ERROR_INVALID_ARGUMENT;
    }
    out->triangles = 0;
    return rtcd_shape_create_convex(world, &def, &out->shape);
}

static rtcd_error add_bodies(rtcd_world* world, const mixed_def* def, const kind_shape* shapes, uint32_t* which,
                             uint64_t* rng, mixed_scene* s);

rtcd_error mixed_scene_create(rtcd_world* world, const mixed_def* def, mixed_scene* s)
{
    memset(s, 0, sizeof *s);
    s->min_height = INFINITY;
    if (!world || !def) return RTCD_ERROR_INVALID_ARGUMENT;
    rtcd_error err = make_terrain(world, s);
    if (err != RTCD_OK) return err;
    uint64_t rng = def->seed;
    const uint32_t users = def->users ? def->users->file_count : 0, n = def->objects ? def->objects : 1;
    kind_shape* shapes = calloc(MIXED_USER + users, sizeof *shapes); /* the generated kinds, then the user's */
    uint32_t* which = malloc(n * sizeof *which);                      /* per body: its entry in shapes */
    s->body_kind = malloc(n);
    s->body_size = malloc(n * sizeof *s->body_size);
    s->below = calloc(n, 1);
    if (!shapes || !which || !s->body_kind || !s->body_size || !s->below) err = RTCD_ERROR_OUT_OF_MEMORY;
    if (err == RTCD_OK) err = blob_shape(world, def->seed, &shapes[MIXED_BLOB]);
    for (int k = MIXED_BOX; k < MIXED_USER && err == RTCD_OK; ++k)
        err = convex_shape(world, (mixed_kind)k, &rng, &shapes[k]);
    for (uint32_t u = 0; u < users && err == RTCD_OK; ++u)
        err = user_shape(world, def->users, u, &shapes[MIXED_USER + u]);
    if (err == RTCD_OK) err = add_bodies(world, def, shapes, which, &rng, s);
    /* the world's bodies hold their shapes */
    for (uint32_t k = 0; shapes && k < MIXED_USER + users; ++k) rtcd_shape_release(shapes[k].shape);
    free(shapes);
    free(which);
    return err;
}

static rtcd_error add_bodies(rtcd_world* world, const mixed_def* def, const kind_shape* shapes, uint32_t* which,
                             uint64_t* rng, mixed_scene* s)
{
    /* The bodies' kinds first (the grid's spacing is the largest size used). */
    const uint32_t users = def->users ? def->users->file_count : 0;
    uint32_t concave = 0;
    for (uint32_t b = 0; b < def->objects; ++b) {
        mixed_kind k = slot_kind[b % SLOTS];
        uint32_t w = (uint32_t)k;
        if (k == MIXED_BLOB) {
            /* the concave slots: the blob, then each user mesh, in turn */
            uint32_t m = concave++ % (1 + users);
            if (m) k = MIXED_USER, w = MIXED_USER + m - 1;
        }
        which[b] = w;
        s->body_kind[b] = (uint8_t)k;
        s->body_size[b] = shapes[w].size;
        s->max_size = shapes[w].size > s->max_size ? shapes[w].size : s->max_size;
    }
    /* Layers of side x side bodies over the bowl's floor, no two touching:
     * the grid step is the largest size's diameter plus a gap and room for a
     * seeded jitter of up to 0.1 m either way. */
    uint32_t side = (uint32_t)ceil(1.5 * cbrt((double)(def->objects ? def->objects : 1)));
    side = side < 2 ? 2 : (side > 8 ? 8 : side);
    const float jitter = 0.1f;
    const float spacing = 2.0f * s->max_size + 0.25f + 2.0f * jitter;
    const float extent = 0.5f * (float)(side - 1) * spacing + jitter;
    /* the lowest layer clears the highest terrain point under the grid */
    float top = -INFINITY;
    for (uint32_t j = 0; j < SIDE; ++j)
        for (uint32_t i = 0; i < SIDE; ++i) {
            float x = -HALF + (float)i * CELL, y = -HALF + (float)j * CELL;
            if (fabsf(x) <= extent + CELL && fabsf(y) <= extent + CELL)
                top = s->heights[j * SIDE + i] > top ? s->heights[j * SIDE + i] : top;
        }
    const float z0 = top + s->max_size + 0.3f;
    s->first_body = rtcd_world_body_count(world);
    for (uint32_t b = 0; b < def->objects; ++b) {
        float x = ((float)(b % side) - 0.5f * (float)(side - 1)) * spacing;
        float y = ((float)(b / side % side) - 0.5f * (float)(side - 1)) * spacing;
        float z = z0 + (float)(b / (side * side)) * spacing;
        x += (float)(2.0 * scene_rng_uniform(rng) - 1.0) * jitter;
        y += (float)(2.0 * scene_rng_uniform(rng) - 1.0) * jitter;
        rtcd_transform pose = scene_random_pose(rng, x, y, z);
        rtcd_error err = rtcd_world_add_body(world, shapes[which[b]].shape, 1.0f, &pose, NULL);
        if (err != RTCD_OK) return err;
        s->body_count++;
        s->kind_counts[s->body_kind[b]]++;
        s->kind_triangles[s->body_kind[b]] = shapes[which[b]].triangles;
        s->triangles_total += shapes[which[b]].triangles;
    }
    return RTCD_OK;
}

void mixed_scene_destroy(mixed_scene* s)
{
    free(s->body_kind);
    free(s->body_size);
    free(s->below);
    memset(s, 0, sizeof *s);
}

void mixed_scene_check(mixed_scene* s, const rtcd_world* world)
{
    uint32_t off = 0;
    for (uint32_t b = 0; b < s->body_count; ++b) {
        rtcd_transform t;
        if (rtcd_world_get_pose(world, s->first_body + b, &t) != RTCD_OK) continue;
        float x = t.translation[0], y = t.translation[1], z = t.translation[2];
        if (!(fabsf(x) <= HALF && fabsf(y) <= HALF)) off++;
        float above = z - mixed_terrain_height(s, x, y);
        if (!isfinite(above)) continue; /* the run loop reports non-finite poses */
        s->min_height = above < s->min_height ? above : s->min_height;
        if (above < -s->body_size[b] && !s->below[b]) {
            s->below[b] = 1;
            s->tunnelled++;
        }
    }
    s->off_terrain = off;
    s->checks++;
}
