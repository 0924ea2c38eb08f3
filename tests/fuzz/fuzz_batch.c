/* libFuzzer target: the stateful narrow phase, the path the Bullet plugin
 * drives. Four meshes (a deformable blob, a rigid blob, a subdivided box and
 * an open terrain patch, as made for every input: remade after one that
 * updated them), one CPU batch and one pair state go through a sequence of operations read from the input: batch
 * calls in both forms (pair keys that come, stay and go, duplicate keys,
 * motions and back poses), vertex updates (one mesh or several at once,
 * shapes refused or taken), rtcd_collide_iterative, def changes and state
 * resets, with poses from quaternions, raw quaternions or raw matrices.
 *
 * Input (little-endian): an 8-byte header, then operations to the end (at
 * most RTCD_FUZZ_MAX_OPS); a value past the end reads as 0.
 *
 *   off size  header
 *    0   1    def bits: 0-1 algorithm (3: out of range), 2 adaptive,
 *             3 speculative, 4 edge crossings, 5 deep contacts, 6 brute
 *             force traversal, 7 separation cull
 *    1   1    def bits: 0-1 contact normal (3: out of range), 2 two threads
 *    2   4    speculative margin (float)
 *    6   1    confidence 1 + b / 32
 *    7   1    fixed threshold (b + 1) * 2 mm (extension x2, culling x1.5)
 *
 *   op byte: bits 0-2 the operation, 3-5 a count or a mesh, 6-7 options
 *    0 rtcd_batch_collide: 1 + count pairs, each: byte (bits 0-1 mesh a,
 *      2-3 mesh b, 4 back poses, 5-7 key), pose a, pose b, motion byte
 *      (255: a float follows), back a and back b; option 6: rays too
 *    1 rtcd_batch_collide_bodies: 1 + (count & 3) bodies, each: byte (bits
 *      0-2 mesh, 4-7 a NULL mesh; bit 3 a back pose), pose, back; then a
 *      byte, 1 + (b & 7) pairs, each: body a, body b (mod bodies + 1: one
 *      past the end is refused), key byte, motion byte
 *    2 update mesh (count & 3): mode byte (0 scale and twist: two int8,
 *      1 one vertex to three floats, 2 shift: three int8, 3 the same on two
 *      meshes in one rtcd_mesh_update_vertices_many; option 6: the same
 *      mesh twice, refused)
 *    3 rtcd_collide_iterative: byte (meshes a, b), pose a, pose b; option
 *      6: a ray buffer one short (refused)
 *    4 rtcd_batch_set_def: the header's 8 bytes again, then three floats
 *      (the fixed threshold, extension, culling) and a byte (iterations)
 *    5 rtcd_pair_state_reset
 *    6 point queries on mesh (count & 3): three int8 (x 1 cm)
 *    7 an empty call, and a NULL pair list with a count (refused)
 *
 *   pose: mode byte % 3: 0 a quaternion of four int8 and a translation of
 *   three int8 (x 1 cm); 1 quaternion and translation as 7 floats; 2 the
 *   rotation matrix and translation as 12 floats.
 *
 * Findings: crashes, sanitizer reports, hangs, runaway memory, and two
 * properties (silent garbage) of a call that returns RTCD_OK: at most
 * RTCD_MAX_MANIFOLD_POINTS contacts a pair; a pair whose poses are
 * rotations (orthonormal within 1e-3) with translations within 1e4 m gets
 * contacts with finite points and depths and unit normals, and one with a
 * non-finite pose none (rtcd_batch.h). */
#include <rtcd/rtcd.h>
#include <rtcd/rtcd_batch.h>
#include <rtcd/rtcd_generate.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER = 8, MESHES = 4, MAX_PAIRS = 8, MAX_BODIES = 4 };
#define RTCD_FUZZ_MAX_OPS 48

static void quiet_log(rtcd_log_level level, const char* message, void* user)
{
    (void)level;
    (void)message;
    (void)user;
}

typedef struct reader {
    const uint8_t* p;
    size_t left;
} reader;

static uint8_t rd_u8(reader* r)
{
    if (!r->left) return 0;
    r->left--;
    return *r->p++;
}

static float rd_f32(reader* r)
{
    uint32_t u = 0;
    for (int k = 0; k < 4; ++k) u |= (uint32_t)rd_u8(r) << (8 * k);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float rd_i8(reader* r, float unit) { return (float)(int8_t)rd_u8(r) * unit; }

/* What the properties know of a pose. */
enum { POSE_NONFINITE = -1, POSE_ODD = 0, POSE_SANE = 1 };

/* A pose, and what it is: a rotation with a translation within 1e4 m
 * (POSE_SANE, the contacts' precondition), a non-finite one (its pairs get
 * no contacts) or neither. */
static rtcd_transform rd_pose(reader* r, int* sane)
{
    rtcd_transform x;
    uint8_t mode = rd_u8(r) % 3u;
    if (mode == 2) {
        for (int k = 0; k < 9; ++k) x.rotation[k] = rd_f32(r);
        for (int k = 0; k < 3; ++k) x.translation[k] = rd_f32(r);
    } else {
        float q[4], t[3];
        for (int k = 0; k < 4; ++k) q[k] = mode ? rd_f32(r) : rd_i8(r, 1.0f / 127.0f);
        for (int k = 0; k < 3; ++k) t[k] = mode ? rd_f32(r) : rd_i8(r, 0.01f);
        x = rtcd_transform_from_quat(q, t);
    }
    int ok = 1, finite = 1;
    for (int k = 0; k < 9; ++k) finite &= isfinite(x.rotation[k]) != 0;
    for (int k = 0; k < 3; ++k) finite &= isfinite(x.translation[k]) != 0;
    for (int i = 0; i < 3; ++i) {
        ok &= isfinite(x.translation[i]) && fabsf(x.translation[i]) < 1e4f;
        for (int j = 0; j < 3; ++j) {
            double d = 0.0;
            for (int k = 0; k < 3; ++k) d += (double)x.rotation[3 * i + k] * x.rotation[3 * j + k];
            ok &= fabs(d - (i == j)) < 1e-3;
        }
    }
    *sane = !finite ? POSE_NONFINITE : ok ? POSE_SANE : POSE_ODD;
    return x;
}

static void check_results(const rtcd_pair_result* results, uint32_t count, const int* sane)
{
    for (uint32_t i = 0; i < count; ++i) {
        if (results[i].contact_count > RTCD_MAX_MANIFOLD_POINTS) abort();
        if (sane[i] == POSE_NONFINITE && (results[i].contact_count || results[i].colliding_rays)) abort();
        if (sane[i] != POSE_SANE) continue;
        for (uint32_t c = 0; c < results[i].contact_count; ++c) {
            const rtcd_contact* k = &results[i].contacts[c];
            double n2 = 0.0;
            for (int j = 0; j < 3; ++j) {
                if (!isfinite(k->point_on_b[j]) || !isfinite(k->normal_on_b[j])) abort();
                n2 += (double)k->normal_on_b[j] * k->normal_on_b[j];
            }
            if (!isfinite(k->depth) || fabs(n2 - 1.0) > 1e-3) abort();
        }
    }
}

static rtcd_narrowphase_def rd_def(reader* r)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    uint8_t a = rd_u8(r), b = rd_u8(r);
    def.backend = RTCD_BACKEND_CPU;
    def.iterative.algorithm = (rtcd_algorithm)(a & 3u);
    def.iterative.adaptive = (a >> 2) & 1;
    def.speculative = (a >> 3) & 1;
    def.edge_crossings = (a >> 4) & 1;
    def.deep_contacts = (a >> 5) & 1;
    def.traversal = (a >> 6) & 1 ? RTCD_TRAVERSAL_BRUTE_FORCE : RTCD_TRAVERSAL_BVH;
    def.cull_separated = (a >> 7) & 1;
    def.contact_normal = (rtcd_contact_normal)(b & 3u);
    def.threads = 1u + ((b >> 2) & 1u);
    def.speculative_margin = rd_f32(r);
    def.iterative.confidence = 1.0f + (float)rd_u8(r) / 32.0f;
    float threshold = (float)(rd_u8(r) + 1) * 0.002f;
    def.iterative.fixed.displacement_threshold = threshold;
    def.iterative.fixed.distance_extension = 2.0f * threshold;
    def.iterative.fixed.culling_distance = 1.5f * threshold;
    return def;
}

/* The shapes, generated once; the meshes are made from them per input. */
typedef struct shape {
    float* vertices;
    uint32_t* indices;
    uint32_t vertex_count, triangle_count, flags;
} shape;

static shape g_shapes[MESHES];

static void make_shapes(void)
{
    rtcd_generated_mesh g;
    const float half[3] = {0.5f, 0.3f, 0.4f};
    if (rtcd_generate_blob(64, 0.5f, 1, &g) != RTCD_OK) abort(); /* a harness bug, not a finding */
    g_shapes[0] = (shape){g.vertices, g.indices, g.vertex_count, g.triangle_count, RTCD_MESH_DEFORMABLE};
    if (rtcd_generate_blob(64, 0.4f, 2, &g) != RTCD_OK) abort();
    g_shapes[1] = (shape){g.vertices, g.indices, g.vertex_count, g.triangle_count, 0};
    if (rtcd_generate_box(half, 2, &g) != RTCD_OK) abort();
    g_shapes[2] = (shape){g.vertices, g.indices, g.vertex_count, g.triangle_count, 0};
    /* A 5 x 5 terrain patch over [-1, 1]^2, bumpy, facing +z. */
    enum { N = 5 };
    static float tv[3 * N * N];
    static uint32_t ti[6 * (N - 1) * (N - 1)];
    uint32_t t = 0;
    for (int y = 0; y < N; ++y)
        for (int x = 0; x < N; ++x) {
            float* v = tv + 3 * (y * N + x);
            v[0] = -1.0f + 0.5f * (float)x, v[1] = -1.0f + 0.5f * (float)y, v[2] = 0.05f * (float)((x * 7 + y * 3) % 5);
            if (x + 1 < N && y + 1 < N) {
                uint32_t i = (uint32_t)(y * N + x);
                uint32_t quad[6] = {i, i + 1, i + N + 1, i, i + N + 1, i + N};
                memcpy(ti + t, quad, sizeof quad);
                t += 6;
            }
        }
    g_shapes[3] = (shape){tv, ti, N * N, t / 3, RTCD_MESH_OPEN_SURFACE};
}

static rtcd_mesh* make_mesh(const shape* s)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = s->vertices;
    def.vertex_count = s->vertex_count;
    def.indices = s->indices;
    def.triangle_count = s->triangle_count;
    def.flags = s->flags;
    def.name = "fuzz";
    rtcd_mesh* m = NULL;
    if (rtcd_mesh_create(&def, &m) != RTCD_OK) abort();
    return m;
}

static volatile double g_sink;

/* New vertices for mesh m in `out` (vertex_count triples). */
static void deform(const rtcd_mesh* m, uint8_t mode, reader* r, float* out)
{
    uint32_t n = rtcd_mesh_vertex_count(m);
    const float* v = rtcd_mesh_vertices(m);
    memcpy(out, v, 3 * (size_t)n * sizeof(float));
    if (mode == 1) {
        uint32_t i = rd_u8(r) % n;
        for (int k = 0; k < 3; ++k) out[3 * i + k] = rd_f32(r);
    } else if (mode == 2) {
        float d[3] = {rd_i8(r, 0.01f), rd_i8(r, 0.01f), rd_i8(r, 0.01f)};
        for (uint32_t i = 0; i < 3 * n; ++i) out[i] += d[i % 3];
    } else {
        float s = 1.0f + rd_i8(r, 1.0f / 256.0f), turn = rd_i8(r, 0.01f);
        for (uint32_t i = 0; i < n; ++i) {
            float a = turn * v[3 * i + 2], c = cosf(a), sn = sinf(a);
            out[3 * i] = s * (c * v[3 * i] - sn * v[3 * i + 1]);
            out[3 * i + 1] = s * (sn * v[3 * i] + c * v[3 * i + 1]);
            out[3 * i + 2] = s * v[3 * i + 2];
        }
    }
}

/* The meshes, made once and again after an input that updated them (so
 * every input starts from the same shapes; making them is most of an
 * input's time otherwise: the near grid's exact distances). */
static rtcd_mesh* g_meshes[MESHES];
static int g_touched[MESHES] = {1, 1, 1, 1};

static void op_update(rtcd_mesh** meshes, uint8_t op, reader* r, float* scratch[2])
{
    uint32_t k = (op >> 3) & 3u;
    uint8_t mode = rd_u8(r) % 4u;
    g_touched[k] = 1;
    if (mode < 3) {
        deform(meshes[k], mode, r, scratch[0]);
        g_sink += rtcd_mesh_update_vertices(meshes[k], scratch[0], 0);
        return;
    }
    uint32_t other = (op >> 6) & 1 ? k : (k + 1) & 3u; /* the same mesh twice is refused */
    g_touched[other] = 1;
    uint8_t sub = rd_u8(r) % 3u;
    deform(meshes[k], sub, r, scratch[0]);
    deform(meshes[other], sub, r, scratch[1]);
    rtcd_mesh* both[2] = {meshes[k], meshes[other]};
    const float* vs[2] = {scratch[0], scratch[1]};
    rtcd_error errors[2];
    g_sink += rtcd_mesh_update_vertices_many(both, vs, NULL, 2, NULL, errors);
}

static void op_pairs(rtcd_batch* batch, rtcd_mesh** meshes, uint8_t op, reader* r, rtcd_ray_hit* rays)
{
    rtcd_pair_desc pairs[MAX_PAIRS];
    rtcd_pair_result results[MAX_PAIRS];
    int sane[MAX_PAIRS];
    uint32_t n = 1u + ((op >> 3) & 7u);
    for (uint32_t i = 0; i < n; ++i) {
        uint8_t b = rd_u8(r);
        rtcd_pair_desc* d = &pairs[i];
        memset(d, 0, sizeof *d);
        d->a = meshes[b & 3u];
        d->b = meshes[(b >> 2) & 3u];
        d->key = b >> 5;
        int sa, sb, unused;
        d->pose_a = rd_pose(r, &sa);
        d->pose_b = rd_pose(r, &sb);
        uint8_t m = rd_u8(r);
        d->motion = m == 255 ? rd_f32(r) : (float)m * 0.002f;
        d->has_back = (b >> 4) & 1;
        if (d->has_back) {
            d->back_a = rd_pose(r, &unused);
            d->back_b = rd_pose(r, &unused);
        }
        sane[i] = sa == POSE_NONFINITE || sb == POSE_NONFINITE ? POSE_NONFINITE : sa && sb;
    }
    if (rtcd_batch_collide(batch, pairs, n, results, (op >> 6) & 1 ? rays : NULL) == RTCD_OK)
        check_results(results, n, sane);
}

static void op_bodies(rtcd_batch* batch, rtcd_mesh** meshes, uint8_t op, reader* r, rtcd_ray_hit* rays)
{
    rtcd_body_desc bodies[MAX_BODIES];
    int body_sane[MAX_BODIES];
    uint32_t nb = 1u + ((op >> 3) & 3u);
    for (uint32_t i = 0; i < nb; ++i) {
        uint8_t b = rd_u8(r);
        memset(&bodies[i], 0, sizeof bodies[i]);
        bodies[i].mesh = (b & 7u) < MESHES ? meshes[b & 7u] : NULL;
        bodies[i].pose = rd_pose(r, &body_sane[i]);
        bodies[i].has_back = (b >> 3) & 1;
        int unused;
        if (bodies[i].has_back) bodies[i].back = rd_pose(r, &unused);
    }
    rtcd_body_pair pairs[MAX_PAIRS];
    rtcd_pair_result results[MAX_PAIRS];
    int sane[MAX_PAIRS];
    uint32_t np = 1u + (rd_u8(r) & 7u);
    for (uint32_t i = 0; i < np; ++i) {
        pairs[i].a = rd_u8(r) % (nb + 1u);
        pairs[i].b = rd_u8(r) % (nb + 1u);
        pairs[i].key = rd_u8(r);
        pairs[i].motion = (float)rd_u8(r) * 0.002f;
        int sa = pairs[i].a < nb ? body_sane[pairs[i].a] : POSE_ODD, sb = pairs[i].b < nb ? body_sane[pairs[i].b] : POSE_ODD;
        sane[i] = sa == POSE_NONFINITE || sb == POSE_NONFINITE ? POSE_NONFINITE : sa && sb;
    }
    if (rtcd_batch_collide_bodies(batch, bodies, nb, pairs, np, results, (op >> 6) & 1 ? rays : NULL) == RTCD_OK)
        check_results(results, np, sane);
}

static void op_iterative(const rtcd_narrowphase_def* def, rtcd_pair_state* state, rtcd_mesh** meshes, uint8_t op,
                         reader* r, rtcd_ray_hit* rays)
{
    uint8_t b = rd_u8(r);
    const rtcd_mesh* a = meshes[b & 3u];
    const rtcd_mesh* m = meshes[(b >> 2) & 3u];
    int sa, sb;
    rtcd_transform pa = rd_pose(r, &sa), pb = rd_pose(r, &sb);
    uint32_t cap = rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(m) - ((op >> 6) & 1);
    uint32_t count = 0;
    rtcd_narrowphase_stats stats;
    if (rtcd_collide_iterative(def, state, a, &pa, m, &pb, rays, cap, &count, &stats) == RTCD_OK) {
        if (count > cap) abort();
        g_sink += count + stats.rays_cast;
    }
}

static void op_query(rtcd_mesh** meshes, uint8_t op, reader* r)
{
    const rtcd_mesh* m = meshes[(op >> 3) & 3u];
    float p[3] = {rd_i8(r, 0.01f), rd_i8(r, 0.01f), rd_i8(r, 0.01f)}, closest[3];
    uint32_t tri = 0;
    g_sink += rtcd_mesh_contains_point(m, p) + rtcd_mesh_closest_point(m, p, closest, &tri);
    rtcd_ray ray;
    memcpy(ray.origin, p, sizeof ray.origin);
    ray.direction[0] = -p[0], ray.direction[1] = -p[1], ray.direction[2] = 1.0f - p[2];
    ray.tmin = 0.0f;
    ray.tmax = 4.0f;
    ray.skip_vertex = RTCD_NO_VERTEX;
    rtcd_hit hit;
    g_sink += rtcd_mesh_first_hit(m, &ray, RTCD_TRAVERSAL_BVH, &hit);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static int initialised;
    if (!initialised) {
        rtcd_set_log(quiet_log, NULL);
        make_shapes();
        initialised = 1;
    }
    if (size < HEADER) return 0;
    reader r = {data, size};
    rtcd_narrowphase_def def = rd_def(&r);
    rtcd_batch* batch = NULL;
    if (rtcd_batch_create(&def, &batch) != RTCD_OK) {
        def = rtcd_default_narrowphase_def(); /* a refused def: the sequence runs on the default */
        def.backend = RTCD_BACKEND_CPU;
        def.threads = 1;
        if (rtcd_batch_create(&def, &batch) != RTCD_OK) abort();
    }
    rtcd_mesh** meshes = g_meshes;
    uint32_t most = 0;
    for (int k = 0; k < MESHES; ++k) {
        if (g_touched[k]) {
            rtcd_mesh_release(meshes[k]);
            meshes[k] = make_mesh(&g_shapes[k]);
            g_touched[k] = 0;
        }
        uint32_t n = rtcd_mesh_vertex_count(meshes[k]);
        most = n > most ? n : most;
    }
    rtcd_pair_state* state = NULL;
    if (rtcd_pair_state_create(&state) != RTCD_OK) abort();
    /* Room for the rays of MAX_PAIRS pairs of the largest meshes. */
    rtcd_ray_hit* rays = malloc(2 * (size_t)most * MAX_PAIRS * sizeof *rays);
    float* scratch[2] = {malloc(3 * (size_t)most * sizeof(float)), malloc(3 * (size_t)most * sizeof(float))};
    if (!rays || !scratch[0] || !scratch[1]) abort();
    for (int ops = 0; ops < RTCD_FUZZ_MAX_OPS && r.left; ++ops) {
        uint8_t op = rd_u8(&r);
        switch (op & 7u) {
        case 0: op_pairs(batch, meshes, op, &r, rays); break;
        case 1: op_bodies(batch, meshes, op, &r, rays); break;
        case 2: op_update(meshes, op, &r, scratch); break;
        case 3: op_iterative(&def, state, meshes, op, &r, rays); break;
        case 4: {
            rtcd_narrowphase_def next = rd_def(&r);
            next.iterative.fixed.displacement_threshold = rd_f32(&r);
            next.iterative.fixed.distance_extension = rd_f32(&r);
            next.iterative.fixed.culling_distance = rd_f32(&r);
            next.iterative.fixed.max_iterations = rd_u8(&r);
            if (rtcd_batch_set_def(batch, &next) == RTCD_OK) def = next;
            break;
        }
        case 5: rtcd_pair_state_reset(state); break;
        case 6: op_query(meshes, op, &r); break;
        default: {
            rtcd_pair_result none[1];
            g_sink += rtcd_batch_collide(batch, NULL, 0, none, NULL);
            g_sink += rtcd_batch_collide(batch, NULL, 1u + (op >> 3), none, NULL);
            break;
        }
        }
    }
    free(scratch[0]);
    free(scratch[1]);
    free(rays);
    rtcd_pair_state_release(state);
    rtcd_batch_release(batch);
    return 0;
}
