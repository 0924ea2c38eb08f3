// Deforming btGImpactMeshShapes in the drop-in (issue 13, acceptance 4): a
// Bullet program rewrites a shape's vertices and calls postUpdate(),
// GImpact's own convention, and the next narrow phase collides with the
// new shape, as Bullet's GImpact algorithm does in the same program.
#include <rtcd/rtcd_bullet.h>
#include <rtcd/rtcd_world.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "test_check.hpp"

struct Blob {
    std::vector<float> rest, vertices;
    std::vector<int> indices;
};

static Blob make_blob(uint64_t seed)
{
    rtcd_generated_mesh g;
    rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, seed, &g);
    Blob b;
    b.rest.assign(g.vertices, g.vertices + 3 * g.vertex_count);
    b.vertices = b.rest;
    b.indices.assign(g.indices, g.indices + 3 * g.triangle_count);
    rtcd_generated_free(&g);
    return b;
}

// Scales the blob's vertices about its origin, in place (the arrays Bullet reads).
static void scale(Blob& b, float s)
{
    for (size_t i = 0; i < b.vertices.size(); ++i) b.vertices[i] = s * b.rest[i];
}

// A world with rtcd's dispatcher or Bullet's own (GImpact), no gravity: a
// static deforming blob A at the origin and a resting blob B 1.1 m along x,
// their boxes (with Bullet's margins) overlapping, their surfaces apart.
struct Scene {
    btDefaultCollisionConfiguration config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    rtcdCollisionDispatcher* rtcd = nullptr;
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    std::unique_ptr<btDiscreteDynamicsWorld> world;
    Blob a, b;
    std::unique_ptr<btTriangleIndexVertexArray> array_a, array_b;
    std::unique_ptr<btTriangleMesh> soup_a;
    std::unique_ptr<btGImpactMeshShape> shape_a, shape_b;
    std::unique_ptr<btDefaultMotionState> motion_a, motion_b;
    std::unique_ptr<btRigidBody> body_a, body_b;

    Scene(bool with_rtcd, bool soup) : a(make_blob(3)), b(make_blob(5))
    {
        if (with_rtcd) {
            rtcd = new rtcdCollisionDispatcher(&config);
            dispatcher.reset(rtcd);
        } else {
            dispatcher.reset(new btCollisionDispatcher(&config));
        }
        btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher.get());
        world.reset(new btDiscreteDynamicsWorld(dispatcher.get(), &broadphase, &solver, &config));
        world->setGravity(btVector3(0, 0, 0));
        if (soup) {
            rebuild_soup();
            shape_a.reset(new btGImpactMeshShape(soup_a.get()));
        } else {
            array_a.reset(new btTriangleIndexVertexArray(static_cast<int>(a.indices.size() / 3), a.indices.data(),
                                                         3 * sizeof(int), static_cast<int>(a.vertices.size() / 3),
                                                         a.vertices.data(), 3 * sizeof(float)));
            shape_a.reset(new btGImpactMeshShape(array_a.get()));
        }
        array_b.reset(new btTriangleIndexVertexArray(static_cast<int>(b.indices.size() / 3), b.indices.data(),
                                                     3 * sizeof(int), static_cast<int>(b.vertices.size() / 3),
                                                     b.vertices.data(), 3 * sizeof(float)));
        shape_b.reset(new btGImpactMeshShape(array_b.get()));
        shape_a->updateBound();
        shape_b->updateBound();
        btTransform at_a = btTransform::getIdentity(), at_b = btTransform::getIdentity();
        at_b.setOrigin(btVector3(1.1f, 0, 0));
        motion_a.reset(new btDefaultMotionState(at_a));
        motion_b.reset(new btDefaultMotionState(at_b));
        body_a.reset(new btRigidBody(0, motion_a.get(), shape_a.get()));
        btVector3 inertia;
        shape_b->calculateLocalInertia(1, inertia);
        body_b.reset(new btRigidBody(1, motion_b.get(), shape_b.get(), inertia));
        world->addRigidBody(body_a.get());
        world->addRigidBody(body_b.get());
    }
    ~Scene()
    {
        world->removeRigidBody(body_b.get());
        world->removeRigidBody(body_a.get());
    }
    // btTriangleMesh's default: a soup, three fresh vertices per triangle.
    void rebuild_soup()
    {
        if (!soup_a) soup_a.reset(new btTriangleMesh());
        else soup_a.reset(new btTriangleMesh()); // rewritten below through its own arrays
        for (size_t t = 0; t < a.indices.size(); t += 3) {
            btVector3 p[3];
            for (int c = 0; c < 3; ++c) {
                const float* v = &a.vertices[3 * a.indices[t + c]];
                p[c] = btVector3(v[0], v[1], v[2]);
            }
            soup_a->addTriangle(p[0], p[1], p[2]);
        }
    }
    // The soup's vertices rewritten in place (its own arrays), from a.vertices.
    void rewrite_soup()
    {
        unsigned char* base;
        int n, stride, faces, istride;
        PHY_ScalarType type, itype;
        unsigned char* ibase;
        soup_a->getLockedVertexIndexBase(&base, n, type, stride, &ibase, istride, faces, itype, 0);
        for (int f = 0; f < faces; ++f) {
            const int* tri = reinterpret_cast<const int*>(ibase + static_cast<size_t>(f) * istride);
            for (int c = 0; c < 3; ++c) {
                float* v = reinterpret_cast<float*>(base + static_cast<size_t>(tri[c]) * stride);
                const float* src = &a.vertices[3 * a.indices[3 * f + c]];
                v[0] = src[0], v[1] = src[1], v[2] = src[2];
            }
        }
        soup_a->unLockVertexBase(0);
    }
    // One narrow phase; the deepest point between A and B (0: none).
    float deepest()
    {
        world->performDiscreteCollisionDetection();
        float depth = 0;
        for (int i = 0; i < dispatcher->getNumManifolds(); ++i) {
            btPersistentManifold* m = dispatcher->getManifoldByIndexInternal(i);
            for (int k = 0; k < m->getNumContacts(); ++k) depth = std::fmax(depth, -m->getContactPoint(k).getDistance());
        }
        return depth;
    }
};

// Blobs of radius 0.5 (+-noise): A, grown by 1.35, reaches into B.
static void post_update(bool soup, bool also_update_bound)
{
    Scene rt(true, soup), gi(false, soup);
    Scene* both[2] = {&rt, &gi};
    float before[2], grown[2], back[2];
    for (int k = 0; k < 2; ++k) before[k] = both[k]->deepest();
    const rtcd_mesh* m = rt.rtcd->meshForShape(rt.shape_a.get()); // built: the pair exists
    CHECK(m != nullptr);
    // Grown by 1.35: A reaches about 0.68 m towards B, whose near side is at about 0.6.
    for (int k = 0; k < 2; ++k) {
        Scene& s = *both[k];
        scale(s.a, 1.35f);
        if (soup) s.rewrite_soup();
        s.shape_a->postUpdate();
        if (also_update_bound) s.shape_a->updateBound();
        grown[k] = s.deepest();
    }
    // Indexed: updated in place (the same mesh, a new version). A soup was
    // repaired when built, so it is rebuilt: `m` is gone, ask again.
    const rtcd_mesh* now = rt.rtcd->meshForShape(rt.shape_a.get());
    CHECK(now != nullptr);
    if (!soup) CHECK(now == m);
    uint64_t version = now ? rtcd_mesh_version(now) : 0;
    // Back to its size: apart again.
    for (int k = 0; k < 2; ++k) {
        Scene& s = *both[k];
        scale(s.a, 1.0f);
        if (soup) s.rewrite_soup();
        s.shape_a->postUpdate();
        if (also_update_bound) s.shape_a->updateBound();
        back[k] = s.deepest();
    }

    std::printf("%s, postUpdate()%s: deepest point before %.4f, grown %.4f (GImpact %.4f), back %.4f (GImpact %.4f); "
                "mesh version %llu\n",
                soup ? "soup" : "indexed", also_update_bound ? " and updateBound()" : "", before[0], grown[0], grown[1],
                back[0], back[1], static_cast<unsigned long long>(version));
    CHECK(before[0] == 0 && before[1] < 0.01f); // apart (GImpact: within its margins)
    CHECK(grown[0] > 0.02f);                        // rtcd sees the grown shape on the next narrow phase
    CHECK(grown[1] > 0.5f * grown[0]);             // as GImpact does
    CHECK(back[0] == 0 && back[1] < 0.01f);     // apart again: the old points went with the old shape
    if (!soup) CHECK(version == 1);                  // updated in place: the same mesh, a new version
}

static void test_indexed_post_update() { post_update(false, false); }
static void test_indexed_post_update_and_update_bound() { post_update(false, true); }
static void test_soup_post_update() { post_update(true, false); }

// A deformation that keeps the box and is not flagged goes unseen (the
// documented limit); refreshShape says so, and the next pass sees it.
static void test_refresh_shape()
{
    Scene rt(true, false);
    rt.deepest();
    const rtcd_mesh* m = rt.rtcd->meshForShape(rt.shape_a.get());
    CHECK(m != nullptr);
    if (!m) return;
    // Pull one vertex inside the blob a little: the box stays.
    size_t inner = 0;
    float best = 1e9f;
    for (size_t i = 0; i < rt.a.vertices.size() / 3; ++i) {
        float x = rt.a.vertices[3 * i], y = rt.a.vertices[3 * i + 1], z = rt.a.vertices[3 * i + 2];
        float d = std::fabs(x) + std::fabs(y) + std::fabs(z - 0.3f); // a vertex near the top, off every box face
        if (d < best) best = d, inner = i;
    }
    for (int k = 0; k < 3; ++k) rt.a.vertices[3 * inner + k] *= 0.95f;
    rt.deepest();
    CHECK(rtcd_mesh_vertices(m)[3 * inner + 2] == rt.a.rest[3 * inner + 2]); // unseen
    rt.rtcd->refreshShape(rt.shape_a.get());
    rt.deepest();
    CHECK(rt.rtcd->meshForShape(rt.shape_a.get()) == m);
    CHECK(rtcd_mesh_vertices(m)[3 * inner + 2] == rt.a.vertices[3 * inner + 2]); // seen
    std::printf("refreshShape: vertex %zu moved to %.4f in the rtcd mesh (version %llu)\n", inner,
                rtcd_mesh_vertices(m)[3 * inner + 2], static_cast<unsigned long long>(rtcd_mesh_version(m)));
}

// The C world with rtcd's narrow phase: rtcd_shape_set_vertices checks what
// Bullet needs at once and leaves the mesh's update to the next step, which
// updates every shape given new vertices together; a shape the mesh's own
// checks refuse keeps its last one (no error from the step).
static void extent(const rtcd_mesh* m, float out[3])
{
    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    for (int k = 0; k < 3; ++k) out[k] = hi[k] - lo[k];
}

static void test_world_updates_at_step()
{
    rtcd_world_def def = rtcd_default_world_def();
    def.narrowphase.backend = RTCD_BACKEND_CPU;
    rtcd_world* w = nullptr;
    CHECK(rtcd_world_create(&def, &w) == RTCD_OK);
    if (!w) return;
    Blob blobs[2] = {make_blob(3), make_blob(5)};
    rtcd_shape* shapes[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k) {
        rtcd_mesh_def md = rtcd_default_mesh_def();
        md.vertices = blobs[k].rest.data();
        md.vertex_count = static_cast<uint32_t>(blobs[k].rest.size() / 3);
        md.indices = reinterpret_cast<const uint32_t*>(blobs[k].indices.data());
        md.triangle_count = static_cast<uint32_t>(blobs[k].indices.size() / 3);
        rtcd_mesh* m = nullptr;
        CHECK(rtcd_mesh_create(&md, &m) == RTCD_OK);
        CHECK(rtcd_shape_create(w, m, &shapes[k]) == RTCD_OK);
        rtcd_mesh_release(m);
        rtcd_transform pose = rtcd_transform_identity();
        pose.translation[0] = 2.0f * static_cast<float>(k);
        CHECK(rtcd_world_add_body(w, shapes[k], 1.0f, &pose, nullptr) == RTCD_OK);
    }
    CHECK(rtcd_world_step(w) == RTCD_OK);
    float rest[2][3];
    for (int k = 0; k < 2; ++k) extent(rtcd_shape_body_mesh(shapes[k]), rest[k]);
    for (int step = 1; step <= 3; ++step) {
        float s = 1.0f + 0.05f * static_cast<float>(step);
        uint64_t before[2];
        for (int k = 0; k < 2; ++k) {
            scale(blobs[k], s);
            before[k] = rtcd_mesh_version(rtcd_shape_body_mesh(shapes[k])) + 1; // asking flushes: before setting
        }
        for (int k = 0; k < 2; ++k) CHECK(rtcd_shape_set_vertices(shapes[k], blobs[k].vertices.data(), 0) == RTCD_OK);
        CHECK(rtcd_world_step(w) == RTCD_OK);
        for (int k = 0; k < 2; ++k) {
            const rtcd_mesh* m = rtcd_shape_body_mesh(shapes[k]);
            CHECK(rtcd_mesh_version(m) == before[k]);
            float e[3];
            extent(m, e);
            for (int a = 0; a < 3; ++a) CHECK(std::fabs(e[a] / rest[k][a] - s) < 1e-4f); // the new shape
        }
    }
    // A triangle squashed to a point: finite and in range (taken by the call), refused by the
    // mesh's checks at the step; the shape keeps its last one.
    const rtcd_mesh* m0 = rtcd_shape_body_mesh(shapes[0]);
    uint64_t version = rtcd_mesh_version(m0);
    std::vector<float> flat = blobs[0].vertices;
    for (int c = 1; c < 3; ++c) // triangle 0's corners on one point: zero area
        for (int a = 0; a < 3; ++a) flat[3 * blobs[0].indices[c] + a] = flat[3 * blobs[0].indices[0] + a];
    CHECK(rtcd_shape_set_vertices(shapes[0], flat.data(), 0) == RTCD_OK);
    CHECK(rtcd_world_step(w) == RTCD_OK);
    CHECK(rtcd_mesh_version(rtcd_shape_body_mesh(shapes[0])) == version);
    float e[3];
    extent(rtcd_shape_body_mesh(shapes[0]), e);
    for (int a = 0; a < 3; ++a) CHECK(std::fabs(e[a] / rest[0][a] - 1.15f) < 1e-4f); // the last shape
    // What Bullet needs is checked at once.
    flat[7] = NAN;
    CHECK(rtcd_shape_set_vertices(shapes[0], flat.data(), 0) == RTCD_ERROR_INVALID_ARGUMENT);
    for (int k = 0; k < 2; ++k) rtcd_shape_release(shapes[k]);
    rtcd_world_release(w);
}

// `test_deform_dropin --bench`: one update of the same mesh by rtcd
// (rtcd_mesh_update_vertices) and by GImpact (postUpdate + updateBound, its
// box tree refitted), side by side in this process, for blobs of about 1k,
// 10k and 100k triangles moving as the avalanche's deforming bodies do (a
// pulse and a twist of 12 % at 1 Hz, 60 updates a second); medians, with
// rtcd's update split by part (rtcd_mesh_deform_stats). One JSON object.
static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median_of(std::vector<double> x)
{
    std::sort(x.begin(), x.end());
    size_t n = x.size();
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int bench()
{
    const uint32_t sizes[3] = {RTCD_AVALANCHE_BLOB_VERTICES, 5002, 50002};
    const int updates[3] = {600, 120, 30};
    std::printf("{\"benchmark\":\"deform_update_vs_gimpact\",\"motion\":\"pulse and twist, 12 %%, 1 Hz, 60 updates/s\","
                "\"sizes\":[");
    for (int si = 0; si < 3; ++si) {
        rtcd_generated_mesh g;
        if (rtcd_generate_blob(sizes[si], 0.5f, 7, &g) != RTCD_OK) return 1;
        std::vector<float> rest(g.vertices, g.vertices + 3 * g.vertex_count), v = rest;
        std::vector<int> idx(g.indices, g.indices + 3 * g.triangle_count);
        uint32_t nv = g.vertex_count, nt = g.triangle_count;
        rtcd_mesh_def def = rtcd_default_mesh_def();
        def.vertices = g.vertices;
        def.vertex_count = nv;
        def.indices = g.indices;
        def.triangle_count = nt;
        def.name = "blob";
        rtcd_mesh* m = nullptr;
        if (rtcd_mesh_create(&def, &m) != RTCD_OK) return 1;
        rtcd_generated_free(&g);
        btTriangleIndexVertexArray array(static_cast<int>(nt), idx.data(), 3 * sizeof(int), static_cast<int>(nv),
                                         v.data(), 3 * sizeof(float));
        btGImpactMeshShape shape(&array);
        shape.updateBound();
        std::vector<double> ours, theirs;
        std::vector<double> parts[RTCD_DEFORM_PARTS];
        float r = 0.5f;
        for (int u = 1; u <= updates[si]; ++u) {
            double w = 2.0 * M_PI * u / 60.0, sc = 1.0 + 0.12 * std::sin(w), tw = 0.12 * std::cos(w) / r;
            for (uint32_t i = 0; i < nv; ++i) {
                double x = rest[3 * i], y = rest[3 * i + 1], z = rest[3 * i + 2], a = tw * z;
                v[3 * i] = static_cast<float>(sc * (std::cos(a) * x - std::sin(a) * y));
                v[3 * i + 1] = static_cast<float>(sc * (std::sin(a) * x + std::cos(a) * y));
                v[3 * i + 2] = static_cast<float>(sc * z);
            }
            rtcd_mesh_deform_stats before = rtcd_mesh_get_deform_stats(m);
            double t0 = now_us();
            shape.postUpdate();
            shape.updateBound();
            double t1 = now_us();
            if (rtcd_mesh_update_vertices(m, v.data(), 0) != RTCD_OK) return 1;
            double t2 = now_us();
            theirs.push_back(t1 - t0);
            ours.push_back(t2 - t1);
            rtcd_mesh_deform_stats after = rtcd_mesh_get_deform_stats(m);
            for (int p = 0; p < RTCD_DEFORM_PARTS; ++p) parts[p].push_back(1000.0 * (after.part_ms[p] - before.part_ms[p]));
        }
        rtcd_mesh_deform_stats st = rtcd_mesh_get_deform_stats(m);
        double mo = median_of(ours), mt = median_of(theirs);
        double mean_o = 0.0;
        for (double x : ours) mean_o += x / ours.size();
        std::printf("%s{\"triangles\":%u,\"updates\":%d,\"rtcd_us_median\":%.2f,\"rtcd_us_mean\":%.2f,"
                    "\"gimpact_us_median\":%.2f,\"rtcd_over_gimpact\":%.3f,\"rtcd_us_per_1k_triangles\":%.2f,"
                    "\"gimpact_us_per_1k_triangles\":%.2f,\"grid_rebuilds\":%llu,\"bvh_rebuilds\":%llu,\"parts_us_mean\":{",
                    si ? "," : "", nt, updates[si], mo, mean_o, mt, mo / mt, mo * 1000.0 / nt, mt * 1000.0 / nt,
                    static_cast<unsigned long long>(st.grid_rebuilds), static_cast<unsigned long long>(st.rebuilds));
        for (int p = 0; p < RTCD_DEFORM_PARTS; ++p)
            std::printf("%s\"%s\":%.2f", p ? "," : "", rtcd_mesh_deform_part_name(p), 1000.0 * st.part_ms[p] / updates[si]);
        std::printf("},\"parts_us_median\":{");
        for (int p = 0; p < RTCD_DEFORM_PARTS; ++p)
            std::printf("%s\"%s\":%.2f", p ? "," : "", rtcd_mesh_deform_part_name(p), median_of(parts[p]));
        std::printf("}}");
        rtcd_mesh_release(m);
    }
    std::printf("]}\n");
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) return bench();
    return rtcd_run_tests({test_indexed_post_update, test_indexed_post_update_and_update_bound, test_soup_post_update,
                           test_refresh_shape, test_world_updates_at_step});
}
