/* First-hit ray throughput: rtcd's BVH walks against Intel Embree 3, single thread,
 * on the narrow phase's real rays (a caster blob's vertices inside the target
 * blob's box, cast along minus their vertex normals, in the target's frame).
 * Prints one JSON object on stdout; notes go to stderr.
 * Usage: bench_rays [--rays N] [--repetitions R] [--seed S] */
#include <rtcd/rtcd.h>

#include "demo_cli.h"
#include "scene_util.h"

#include <embree3/rtcore.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ray_set {
    float* org; /* 3 per ray, in B's frame */
    float* dir; /* 3 per ray, unit */
    uint32_t count;
} ray_set;

/* The scenes' generator (same draws), scaled to [lo, hi). */
static double rng_uniform(uint64_t* s, double lo, double hi) { return lo + (hi - lo) * scene_rng_uniform(s); }

/* Uniform random rotation (Shoemake's quaternion), row-major. */
static void random_rotation(uint64_t* s, double r[9])
{
    const double two_pi = 6.283185307179586;
    double u1 = rng_uniform(s, 0, 1), u2 = rng_uniform(s, 0, two_pi), u3 = rng_uniform(s, 0, two_pi);
    double a = sqrt(1 - u1), b = sqrt(u1);
    double x = a * sin(u2), y = a * cos(u2), z = b * sin(u3), w = b * cos(u3);
    r[0] = 1 - 2 * (y * y + z * z), r[1] = 2 * (x * y - z * w), r[2] = 2 * (x * z + y * w);
    r[3] = 2 * (x * y + z * w), r[4] = 1 - 2 * (x * x + z * z), r[5] = 2 * (y * z - x * w);
    r[6] = 2 * (x * z - y * w), r[7] = 2 * (y * z + x * w), r[8] = 1 - 2 * (x * x + y * y);
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static rtcd_mesh* make_blob(uint64_t seed, const char* name)
{
    rtcd_generated_mesh g;
    rtcd_error err = rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, seed, &g);
    if (err != RTCD_OK) {
        fprintf(stderr, "bench_rays: generate %s: %s: %s\n", name, rtcd_error_name(err), rtcd_last_error_message());
        return NULL;
    }
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = g.vertices;
    def.vertex_count = g.vertex_count;
    def.indices = g.indices;
    def.triangle_count = g.triangle_count;
    def.name = name;
    rtcd_mesh* m = NULL;
    err = rtcd_mesh_create(&def, &m);
    rtcd_generated_free(&g);
    if (err != RTCD_OK)
        fprintf(stderr, "bench_rays: mesh %s: %s: %s\n", name, rtcd_error_name(err), rtcd_last_error_message());
    return m;
}

/* Random poses of A around B (centre distance uniform in [0.3, 1.5] radii) until
 * `want` rays: every A vertex inside B's box casts along minus its normal. */
static void make_rays(const rtcd_mesh* a, const rtcd_mesh* b, uint64_t seed, ray_set* rs, uint32_t want,
                      uint32_t* poses)
{
    uint64_t s = seed ^ 0x5eed0fba11ull;
    float lo[3], hi[3];
    rtcd_mesh_bounds(b, lo, hi);
    const float* av = rtcd_mesh_vertices(a);
    const float* an = rtcd_mesh_vertex_normals(a);
    uint32_t nv = rtcd_mesh_vertex_count(a);
    rs->count = 0;
    *poses = 0;
    while (rs->count < want) {
        double r[9], t[3];
        random_rotation(&s, r);
        double dz = rng_uniform(&s, -1, 1), ph = rng_uniform(&s, 0, 6.283185307179586), rr = sqrt(1 - dz * dz);
        double dist = rng_uniform(&s, 0.3, 1.5); /* blob radius is 1 */
        t[0] = dist * rr * cos(ph), t[1] = dist * rr * sin(ph), t[2] = dist * dz;
        ++*poses;
        for (uint32_t i = 0; i < nv && rs->count < want; ++i) {
            const float* p = av + 3 * i;
            const float* n = an + 3 * i;
            if (n[0] == 0.0f && n[1] == 0.0f && n[2] == 0.0f) continue; /* unreferenced vertex */
            float q[3], d[3];
            for (int k = 0; k < 3; ++k) {
                q[k] = (float)(r[3 * k] * p[0] + r[3 * k + 1] * p[1] + r[3 * k + 2] * p[2] + t[k]);
                d[k] = (float)-(r[3 * k] * n[0] + r[3 * k + 1] * n[1] + r[3 * k + 2] * n[2]);
            }
            if (q[0] < lo[0] || q[1] < lo[1] || q[2] < lo[2] || q[0] > hi[0] || q[1] > hi[1] || q[2] > hi[2])
                continue;
            memcpy(rs->org + 3 * rs->count, q, sizeof q);
            memcpy(rs->dir + 3 * rs->count, d, sizeof d);
            rs->count++;
        }
    }
}

/* ---- Embree ---- */

static int g_embree_errors = 0;

static void embree_error(void* user, enum RTCError code, const char* str)
{
    (void)user;
    ++g_embree_errors;
    fprintf(stderr, "bench_rays: embree error %d: %s\n", (int)code, str ? str : "");
}

/* Checks the device's error state after every call (the callback also counts). */
static int embree_ok(RTCDevice dev, const char* what)
{
    enum RTCError e = rtcGetDeviceError(dev);
    if (e == RTC_ERROR_NONE && g_embree_errors == 0) return 1;
    fprintf(stderr, "bench_rays: embree failed at %s (code %d)\n", what, (int)e);
    return 0;
}

static RTCScene embree_scene(RTCDevice dev, const rtcd_mesh* m)
{
    uint32_t nv = rtcd_mesh_vertex_count(m), nt = rtcd_mesh_triangle_count(m);
    RTCScene scene = rtcNewScene(dev);
    if (!embree_ok(dev, "rtcNewScene")) return NULL;
    RTCGeometry geom = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
    if (!embree_ok(dev, "rtcNewGeometry")) return NULL;
    /* Embree-owned buffers carry the padding its SIMD vertex loads need. */
    float* vb = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), nv);
    unsigned* ib = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), nt);
    if (!embree_ok(dev, "rtcSetNewGeometryBuffer") || !vb || !ib) return NULL;
    memcpy(vb, rtcd_mesh_vertices(m), (size_t)nv * 3 * sizeof(float));
    memcpy(ib, rtcd_mesh_indices(m), (size_t)nt * 3 * sizeof(unsigned));
    rtcSetGeometryBuildQuality(geom, RTC_BUILD_QUALITY_HIGH);
    rtcCommitGeometry(geom);
    unsigned id = rtcAttachGeometry(scene, geom);
    rtcReleaseGeometry(geom);
    rtcSetSceneBuildQuality(scene, RTC_BUILD_QUALITY_HIGH);
    rtcCommitScene(scene);
    if (!embree_ok(dev, "scene commit") || id != 0) return NULL;
    return scene;
}

static inline int embree_hit(RTCScene scene, struct RTCIntersectContext* ctx, const float* o, const float* d,
                             struct RTCRayHit* rh)
{
    rh->ray.org_x = o[0], rh->ray.org_y = o[1], rh->ray.org_z = o[2];
    rh->ray.dir_x = d[0], rh->ray.dir_y = d[1], rh->ray.dir_z = d[2];
    rh->ray.tnear = 0.0f;
    rh->ray.tfar = INFINITY;
    rh->ray.time = 0.0f;
    rh->ray.mask = 0xffffffffu;
    rh->ray.id = 0;
    rh->ray.flags = 0;
    rh->hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh->hit.primID = RTC_INVALID_GEOMETRY_ID;
    rh->hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scene, ctx, rh);
    return rh->hit.geomID != RTC_INVALID_GEOMETRY_ID;
}

static inline void rtcd_ray_of(const ray_set* rs, uint32_t i, rtcd_ray* r)
{
    memcpy(r->origin, rs->org + 3 * i, sizeof r->origin);
    memcpy(r->direction, rs->dir + 3 * i, sizeof r->direction);
    r->tmin = 0.0f;
    r->tmax = INFINITY;
    r->skip_vertex = RTCD_NO_VERTEX;
}

/* One timed pass; the checksum keeps the work observable. */
static double time_rtcd(const rtcd_mesh* m, const ray_set* rs, rtcd_traversal tr, double* sink)
{
    double sum = 0.0, t0 = demo_now_ms();
    for (uint32_t i = 0; i < rs->count; ++i) {
        rtcd_ray r;
        rtcd_hit h;
        rtcd_ray_of(rs, i, &r);
        if (rtcd_mesh_first_hit(m, &r, tr, &h)) sum += h.t;
    }
    double dt = (demo_now_ms() - t0) * 1e-3;
    *sink += sum;
    return dt;
}

static double time_embree(RTCScene scene, const ray_set* rs, double* sink)
{
    double sum = 0.0, t0 = demo_now_ms();
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    for (uint32_t i = 0; i < rs->count; ++i) {
        struct RTCRayHit rh;
        if (embree_hit(scene, &ctx, rs->org + 3 * i, rs->dir + 3 * i, &rh)) sum += rh.ray.tfar;
    }
    double dt = (demo_now_ms() - t0) * 1e-3;
    *sink += sum;
    return dt;
}

int main(int argc, char** argv)
{
    uint32_t want = 1000000, reps = 7;
    uint64_t seed = 1;
    const demo_cli_option opts[] = {
        {.name = "--rays", .type = DEMO_CLI_U32, .target = &want, .meta = "N", .min = 1, .max = 1u << 30,
         .help = "rays to cast (default 1000000)"},
        {.name = "--repetitions", .type = DEMO_CLI_U32, .target = &reps, .meta = "R", .min = 1, .max = 1000,
         .help = "timed passes, median (default 7)"},
        {.name = "--seed", .type = DEMO_CLI_U64, .target = &seed, .meta = "S", .help = "meshes and rays (default 1)"},
    };
    demo_cli cli = {argv[0], "First-hit rays/s, rtcd's BVH walks vs Embree 3, one thread; JSON on stdout.", opts,
                    sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    rtcd_mesh* b = make_blob(seed, "avalanche_blob");
    rtcd_mesh* a = make_blob(seed + 1, "caster_blob");
    if (!a || !b) return 1;
    uint32_t ntri = rtcd_mesh_triangle_count(b);

    ray_set rs;
    rs.org = malloc((size_t)want * 3 * sizeof(float));
    rs.dir = malloc((size_t)want * 3 * sizeof(float));
    if (!rs.org || !rs.dir) {
        fprintf(stderr, "bench_rays: out of memory for %u rays\n", want);
        return 1;
    }
    uint32_t poses = 0;
    make_rays(a, b, seed, &rs, want, &poses);
    fprintf(stderr, "bench_rays: %u rays from %u poses (%.1f per pose), %u triangles\n", rs.count, poses,
            (double)rs.count / poses, ntri);

    RTCDevice dev = rtcNewDevice("threads=1");
    if (!dev) {
        fprintf(stderr, "bench_rays: rtcNewDevice failed (code %d)\n", (int)rtcGetDeviceError(NULL));
        return 1;
    }
    rtcSetDeviceErrorFunction(dev, embree_error, NULL);
    RTCScene scene = embree_scene(dev, b);
    if (!scene) return 1;

    /* Verification pass (untimed): rtcd BVH is the reference. */
    uint32_t hits = 0, disagree = 0, miss_mismatch = 0, tri_mismatch = 0, same_tri_t = 0, stackless_diff = 0;
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    for (uint32_t i = 0; i < rs.count; ++i) {
        rtcd_ray r;
        rtcd_hit h, hs;
        rtcd_ray_of(&rs, i, &r);
        int hr = rtcd_mesh_first_hit(b, &r, RTCD_TRAVERSAL_BVH, &h);
        int hsl = rtcd_mesh_first_hit(b, &r, RTCD_TRAVERSAL_BVH_STACKLESS, &hs);
        hits += (uint32_t)hr;
        if (hsl != hr || (hr && (hs.triangle != h.triangle || hs.t != h.t))) ++stackless_diff;
        struct RTCRayHit rh;
        int he = embree_hit(scene, &ctx, rs.org + 3 * i, rs.dir + 3 * i, &rh);
        /* Relative t tolerance, absolute (1e-4 radii) below t = 1. */
        float tol = 1e-4f * fmaxf(1.0f, fmaxf(fabsf(h.t), fabsf(rh.ray.tfar)));
        int bad = 0;
        if (he != hr) {
            ++miss_mismatch;
            bad = 1;
        } else if (hr && rh.hit.primID != h.triangle) {
            if (fabsf(rh.ray.tfar - h.t) > tol) {
                ++tri_mismatch;
                bad = 1;
            }
        } else if (hr && fabsf(rh.ray.tfar - h.t) > tol) {
            ++same_tri_t; /* same triangle, different t: reported, not counted */
        }
        if (bad && ++disagree <= 3)
            fprintf(stderr, "bench_rays: disagreement at ray %u: rtcd %s tri %u t %.7g, embree %s tri %u t %.7g\n", i,
                    hr ? "hit" : "miss", h.triangle, (double)h.t, he ? "hit" : "miss", rh.hit.primID,
                    (double)rh.ray.tfar);
    }
    if (!embree_ok(dev, "verification pass")) return 1;
    fprintf(stderr,
            "bench_rays: hit fraction %.4f; embree disagreements %u (hit/miss %u, other triangle at other t %u); "
            "same triangle with t off %u; stackless vs stack walk differences %u\n",
            (double)hits / rs.count, disagree, miss_mismatch, tri_mismatch, same_tri_t, stackless_diff);

    /* Timed repetitions, the three walks interleaved (rotating the order) so
     * that machine noise is shared. */
    double* tb = malloc(reps * sizeof(double));
    double* ts = malloc(reps * sizeof(double));
    double* te = malloc(reps * sizeof(double));
    if (!tb || !ts || !te) return 1;
    double sink = 0.0;
    for (uint32_t k = 0; k < reps; ++k) {
        for (uint32_t j = 0; j < 3; ++j) {
            switch ((j + k) % 3) {
            case 0: tb[k] = time_rtcd(b, &rs, RTCD_TRAVERSAL_BVH, &sink); break;
            case 1: ts[k] = time_rtcd(b, &rs, RTCD_TRAVERSAL_BVH_STACKLESS, &sink); break;
            default: te[k] = time_embree(scene, &rs, &sink); break;
            }
        }
        fprintf(stderr, "bench_rays: rep %u: bvh %.4f s, stackless %.4f s, embree %.4f s\n", k, tb[k], ts[k], te[k]);
    }
    if (!embree_ok(dev, "timed passes")) return 1;
    double rb = rs.count / median(tb, (int)reps), rsl = rs.count / median(ts, (int)reps);
    double re = rs.count / median(te, (int)reps);
    fprintf(stderr, "bench_rays: checksum %.6g\n", sink);

    printf("{\"benchmark\":\"first_hit_rays\",\"mesh\":\"avalanche_blob\",\"triangles\":%u,\"rays\":%u,"
           "\"repetitions\":%u,\"threads\":1,\"rtcd_bvh_rays_per_s\":%.0f,\"rtcd_stackless_rays_per_s\":%.0f,"
           "\"embree_rays_per_s\":%.0f,\"embree_over_rtcd\":%.3f,\"hit_fraction\":%.6f,\"disagreements\":%u}\n",
           ntri, rs.count, reps, rb, rsl, re, re / rb, (double)hits / rs.count, disagree);

    rtcReleaseScene(scene);
    rtcReleaseDevice(dev);
    rtcd_mesh_release(a);
    rtcd_mesh_release(b);
    free(rs.org), free(rs.dir), free(tb), free(ts), free(te);
    /* More than 0.1 % disagreement means one of the two answers is wrong. */
    if ((double)disagree > 1e-3 * rs.count) {
        fprintf(stderr, "bench_rays: FAIL: %u of %u rays disagree (> 0.1 %%)\n", disagree, rs.count);
        return 1;
    }
    return 0;
}
