/* libFuzzer target: mesh creation, queries on the created mesh, and the
 * repair with a mesh made of its merged output.
 *
 * The input (little-endian) is a fixed header, then vertices, then indices;
 * the counts are bounded by the bytes actually present:
 *
 *   off size  field
 *    0   1    mesh flags: bit 7 set passes the byte as it is (unknown
 *             flags), else only bits 0-2 (RTCD_MESH_FLIP_INSIDE_OUT,
 *             RTCD_MESH_OPEN_SURFACE, RTCD_MESH_DEFORMABLE)
 *    1   1    bvh_leaf_size, modulo 17 (16 is out of range)
 *    2   1    encoding: bit 0 vertices as int8 triples times `scale`
 *             (else float32 triples), bit 1 indices as uint8 (else
 *             uint32), bit 2 a vertex stride of 16 bytes (else 0: packed)
 *    3   1    repair flags (the byte as it is: bit 7 is an unknown flag)
 *    4   2    vertex count (clamped to the vertices the data holds)
 *    6   4    scale (float) for int8 vertices
 *   10   4    repair weld_tolerance (float)
 *   14   4    repair sliver_ratio (float)
 *   18   1    repair max_hole_edges
 *   19   1    reserved
 *   20  12    query point (3 floats)
 *   32  28    pose of the mesh against the fixed cube: quaternion xyzw, translation
 *   60        vertices, then indices (3 per triangle) to the end
 *
 * tests/fuzz/make_corpus.py writes seeds in this format. Only crashes,
 * sanitizer reports, hangs and runaway memory are findings: the harness
 * checks no geometric answer (bad meshes are refused with an error code,
 * which is the expected outcome for most inputs). */
#include <rtcd/rtcd.h>
#include <rtcd/rtcd_repair.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER = 60 };

static void quiet_log(rtcd_log_level level, const char* message, void* user)
{
    (void)level;
    (void)message;
    (void)user;
}

static uint16_t rd16(const uint8_t* p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t* p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static float rdf(const uint8_t* p)
{
    uint32_t u = rd32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The fixed partner: a unit cube centred on the origin, wound outward. */
static const rtcd_mesh* fixed_cube(void)
{
    static rtcd_mesh* cube;
    if (!cube) {
        static const float v[] = {-0.5f, -0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, -0.5f, -0.5f, 0.5f, -0.5f,
                                  -0.5f, -0.5f, 0.5f,  0.5f, -0.5f, 0.5f,  0.5f, 0.5f, 0.5f,  -0.5f, 0.5f, 0.5f};
        static const uint32_t t[] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                     1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};
        rtcd_mesh_def def = rtcd_default_mesh_def();
        def.vertices = v;
        def.vertex_count = 8;
        def.indices = t;
        def.triangle_count = 12;
        def.name = "fuzz cube";
        if (rtcd_mesh_create(&def, &cube) != RTCD_OK) abort(); /* a harness bug, not a finding */
    }
    return cube;
}

/* Sink for results, so that nothing is optimised away. */
static volatile double g_sink;

static void query_mesh(const rtcd_mesh* m, const float point[3], const rtcd_transform* pose)
{
    g_sink += rtcd_mesh_contains_point(m, point);
    float closest[3];
    uint32_t tri = 0;
    g_sink += rtcd_mesh_closest_point(m, point, closest, &tri);
    g_sink += closest[0] + (double)tri;

    rtcd_mass_properties mp = rtcd_mesh_mass_properties(m);
    g_sink += mp.volume + mp.inertia[0];

    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    /* A ray from the query point towards the middle of the box, every traversal. */
    rtcd_ray ray;
    memcpy(ray.origin, point, sizeof ray.origin);
    for (int k = 0; k < 3; ++k) ray.direction[k] = 0.5f * (lo[k] + hi[k]) - point[k];
    ray.tmin = 0.0f;
    ray.tmax = 4.0f;
    ray.skip_vertex = RTCD_NO_VERTEX;
    for (int tr = 0; tr < 3; ++tr) {
        rtcd_hit hit;
        g_sink += rtcd_mesh_first_hit(m, &ray, (rtcd_traversal)tr, &hit);
    }

    const rtcd_mesh* cube = fixed_cube();
    uint32_t cap = rtcd_mesh_vertex_count(m) + rtcd_mesh_vertex_count(cube);
    rtcd_ray_hit* rays = malloc((size_t)cap * sizeof *rays);
    if (!rays) return;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_CPU;
    def.threads = 1;
    rtcd_transform id = rtcd_transform_identity();
    uint32_t count = 0;
    rtcd_narrowphase_stats stats;
    if (rtcd_collide_standard(&def, m, pose, cube, &id, rays, cap, &count, &stats) == RTCD_OK) g_sink += count;
    if (rtcd_collide_standard(&def, cube, &id, m, pose, rays, cap, &count, &stats) == RTCD_OK) g_sink += count;
    free(rays);
}

static void create_and_query(const float* vertices, uint32_t vertex_count, size_t stride, const uint32_t* indices,
                             uint32_t triangle_count, uint32_t flags, uint32_t leaf, const float point[3],
                             const rtcd_transform* pose)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = vertices;
    def.vertex_count = vertex_count;
    def.vertex_stride = stride;
    def.indices = indices;
    def.triangle_count = triangle_count;
    def.flags = flags;
    def.bvh_leaf_size = leaf;
    def.name = "fuzz";
    rtcd_mesh* m = NULL;
    if (rtcd_mesh_create(&def, &m) != RTCD_OK) return;
    query_mesh(m, point, pose);
    /* Deformed (rtcd_mesh_update_vertices): scaled by 1 + point[0] and
     * sheared by point[1] along x per unit of z; a refused shape leaves the
     * mesh as it was, and either way it is queried again. */
    uint32_t n = rtcd_mesh_vertex_count(m);
    float* moved = malloc(3 * (size_t)n * sizeof(float));
    if (moved) {
        const float* v = rtcd_mesh_vertices(m);
        for (uint32_t i = 0; i < n; ++i) {
            moved[3 * i] = (1.0f + point[0]) * v[3 * i] + point[1] * v[3 * i + 2];
            moved[3 * i + 1] = (1.0f + point[0]) * v[3 * i + 1];
            moved[3 * i + 2] = (1.0f + point[0]) * v[3 * i + 2];
        }
        g_sink += (double)rtcd_mesh_update_vertices(m, moved, 0);
        free(moved);
        query_mesh(m, point, pose);
    }
    rtcd_mesh_release(m);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static int initialised;
    if (!initialised) {
        rtcd_set_log(quiet_log, NULL);
        initialised = 1;
    }
    if (size < HEADER) return 0;

    const uint32_t flags = (data[0] & 0x80) ? data[0] : (data[0] & 7u);
    const uint32_t leaf = data[1] % 17u;
    const int int8_vertices = data[2] & 1, u8_indices = (data[2] >> 1) & 1, padded = (data[2] >> 2) & 1;
    const float scale = rdf(data + 6);
    rtcd_repair_def rdef = rtcd_default_repair_def();
    rdef.flags = data[3];
    rdef.weld_tolerance = rdf(data + 10);
    rdef.sliver_ratio = rdf(data + 14);
    rdef.max_hole_edges = data[18];
    float point[3] = {rdf(data + 20), rdf(data + 24), rdf(data + 28)};
    float quat[4] = {rdf(data + 32), rdf(data + 36), rdf(data + 40), rdf(data + 44)};
    float trans[3] = {rdf(data + 48), rdf(data + 52), rdf(data + 56)};
    rtcd_transform pose = rtcd_transform_from_quat(quat, trans);

    const uint8_t* p = data + HEADER;
    size_t left = size - HEADER;
    const size_t vsize = int8_vertices ? 3 : 12;
    uint32_t vertex_count = rd16(data + 4);
    if ((size_t)vertex_count > left / vsize) vertex_count = (uint32_t)(left / vsize);
    const size_t floats_per_vertex = padded ? 4 : 3;
    /* Exact sizes (at least one element), so that ASan sees any read past the end. */
    float* vertices = malloc((vertex_count ? vertex_count : 1) * floats_per_vertex * sizeof(float));
    if (!vertices) return 0;
    for (uint32_t v = 0; v < vertex_count; ++v) {
        for (int k = 0; k < 3; ++k)
            vertices[v * floats_per_vertex + k] =
                int8_vertices ? (float)(int8_t)p[v * 3 + k] * scale : rdf(p + (size_t)v * 12 + 4 * k);
        if (padded) vertices[v * floats_per_vertex + 3] = NAN; /* never read: outside xyz */
    }
    p += vertex_count * vsize;
    left -= vertex_count * vsize;

    const size_t isize = u8_indices ? 1 : 4;
    const uint32_t triangle_count = (uint32_t)(left / (3 * isize));
    uint32_t* indices = malloc((triangle_count ? triangle_count : 1) * 3 * sizeof(uint32_t));
    if (!indices) {
        free(vertices);
        return 0;
    }
    for (uint32_t i = 0; i < 3 * triangle_count; ++i) indices[i] = u8_indices ? p[i] : rd32(p + 4 * (size_t)i);

    const size_t stride = padded ? 16 : 0;
    create_and_query(vertices, vertex_count, stride, indices, triangle_count, flags, leaf, point, &pose);

    rtcd_repaired* rep = NULL;
    if (rtcd_repair(&rdef, vertices, vertex_count, stride, indices, triangle_count, &rep) == RTCD_OK) {
        const rtcd_repair_report* report = rtcd_repaired_report(rep);
        g_sink += report->welded_vertices + strlen(rtcd_repaired_summary(rep));
        uint32_t components = rtcd_repaired_component_count(rep);
        for (uint32_t c = 0; c < components; ++c) {
            const float* cv;
            const uint32_t* ci;
            uint32_t cvc, ctc;
            if (rtcd_repaired_component(rep, c, &cv, &cvc, &ci, &ctc) == RTCD_OK)
                g_sink += cvc + ctc + rtcd_repaired_component_closed(rep, c);
        }
        const float* mv;
        const uint32_t* mi;
        uint32_t mvc, mtc;
        if (rtcd_repaired_merged(rep, &mv, &mvc, &mi, &mtc) == RTCD_OK)
            create_and_query(mv, mvc, 0, mi, mtc, flags, leaf, point, &pose);
        rtcd_repaired_release(rep);
    }
    free(indices);
    free(vertices);
    return 0;
}
