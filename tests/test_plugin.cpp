// The Bullet plugin seen from a C++ Bullet program: pairs go through rtcd,
// a mesh rtcd cannot take is reported and stays with Bullet's algorithm, and
// manifolds persist across steps (the solver's warm start).
#include <rtcd/rtcd_bullet.h>
#include <rtcd/rtcd_wrap.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bullet_world.hpp"
#include "test_check.hpp"


static std::vector<std::string> g_log;
static void capture_log(rtcd_log_level level, const char* message, void*)
{
    if (level <= RTCD_LOG_WARNING) g_log.push_back(message);
}

struct MeshData {
    std::vector<float> vertices;
    std::vector<int> indices;
};

static MeshData blob(uint64_t seed, bool open)
{
    rtcd_generated_mesh g;
    rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, seed, &g);
    MeshData m;
    m.vertices.assign(g.vertices, g.vertices + 3 * g.vertex_count);
    // Open: the cap above z = 0.2 cut away, a hole far too large to fill.
    for (uint32_t t = 0; t < g.triangle_count; ++t) {
        float z = 0;
        for (int c = 0; c < 3; ++c) z += g.vertices[3 * g.indices[3 * t + c] + 2] / 3;
        if (open && z > 0.2f) continue;
        for (int c = 0; c < 3; ++c) m.indices.push_back(static_cast<int>(g.indices[3 * t + c]));
    }
    rtcd_generated_free(&g);
    return m;
}

// The drop-in world (bullet_world.hpp) on a ground plane.
struct World : BulletWorld {
    std::vector<std::unique_ptr<btTriangleIndexVertexArray>> arrays;
    std::vector<std::unique_ptr<btCollisionShape>> shapes;

    World() : BulletWorld(true)
    {
        shapes.emplace_back(new btStaticPlaneShape(btVector3(0, 0, 1), 0));
        addStatic(shapes.back().get());
    }
    ~World() { clear(); }
    // A body of a shape the caller owns (mass 0: static).
    btRigidBody* place(btCollisionShape* shape, btScalar mass, const btVector3& at)
    {
        return BulletWorld::add(shape, btTransform(btQuaternion::getIdentity(), at), mass);
    }
    void steps(int n)
    {
        for (int i = 0; i < n; ++i) world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
    }
    btRigidBody* add(MeshData& m, const btVector3& at)
    {
        arrays.emplace_back(new btTriangleIndexVertexArray(static_cast<int>(m.indices.size() / 3), m.indices.data(),
                                                           3 * sizeof(int), static_cast<int>(m.vertices.size() / 3),
                                                           m.vertices.data(), 3 * sizeof(float)));
        btGImpactMeshShape* shape = new btGImpactMeshShape(arrays.back().get());
        shape->updateBound();
        shapes.emplace_back(shape);
        return BulletWorld::add(shape, btTransform(btQuaternion::getIdentity(), at), 1);
    }
};

// A closed mesh and an open one side by side: the open one is declined with
// a warning naming it and the reason, and still lands on the plane through
// Bullet's GImpact algorithm; the closed one is rtcd's.
static void test_open_mesh_falls_back()
{
    g_log.clear();
    rtcd_set_log(capture_log, nullptr);
    rtcd_set_dropin_wrap(RTCD_WRAP_OFF); // the wrap would take it (test_open_cube_is_wrapped)
    MeshData closed = blob(1, false), open = blob(2, true);
    {
        World w;
        btRigidBody* a = w.add(closed, btVector3(0, 0, 1.0f));
        btRigidBody* b = w.add(open, btVector3(3.0f, 0, 1.0f));
        uint32_t owned_max = 0;
        for (int i = 0; i < 180; ++i) {
            w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
            owned_max = std::max(owned_max, w.rtcd->lastStepStats().pairs_owned);
        }
        CHECK(w.rtcd->meshForShape(a->getCollisionShape()) != nullptr);
        CHECK(w.rtcd->meshForShape(b->getCollisionShape()) == nullptr);
        CHECK(owned_max == 1); // the closed blob and the plane; not the open one
        int warnings = 0;
        for (const std::string& line : g_log)
            if (line.find("declines") != std::string::npos && line.find("OPEN_EDGE") != std::string::npos) ++warnings;
        CHECK(warnings == 1); // once per shape, not once per step
        float za = a->getWorldTransform().getOrigin().z(), zb = b->getWorldTransform().getOrigin().z();
        std::printf("closed blob rests at z %.3f, open blob (GImpact) at z %.3f\n", za, zb);
        CHECK(za > 0.2f && za < 0.9f);
        CHECK(zb > 0.2f && zb < 0.9f); // landed, not fallen through
    }
    rtcd_set_log(nullptr, nullptr);
    rtcd_set_dropin_wrap(RTCD_WRAP_AUTO);
    if (!g_log.empty()) std::printf("logged: %s\n", g_log[0].c_str());
}

static std::vector<std::string> g_all_log;
static void capture_all(rtcd_log_level, const char* message, void*) { g_all_log.push_back(message); }

// A unit cube without its top face (3 x 3 quads a face: a hole of 12 edges,
// beyond the repair's 8) dropped on the plane: with the wrap built in and on, rtcd
// owns its pairs through the envelope, with one INFO line naming the shape
// and the distance; with it off (or not built in) the pairs stay with
// GImpact and one warning says why.
static void test_open_cube_is_wrapped()
{
    // Five faces of 3 x 3 quads each, a soup (the repair welds it): a hole of 12 edges.
    MeshData soup;
    const float faces[5][9] = {{0, 0, 0, 0, 1, 0, 1, 0, 0},   // origin, u, v: bottom (-z)
                               {0, 0, 0, 1, 0, 0, 0, 0, 1},   // -y
                               {1, 0, 0, 0, 1, 0, 0, 0, 1},   // +x
                               {1, 1, 0, -1, 0, 0, 0, 0, 1},  // +y
                               {0, 1, 0, 0, -1, 0, 0, 0, 1}}; // -x
    for (const float* f : faces) {
        int base = static_cast<int>(soup.vertices.size() / 3);
        for (int j = 0; j <= 3; ++j)
            for (int i = 0; i <= 3; ++i)
                for (int k = 0; k < 3; ++k) soup.vertices.push_back(f[k] + (f[3 + k] * i + f[6 + k] * j) / 3.0f);
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i) {
                int a = base + 4 * j + i;
                soup.indices.insert(soup.indices.end(), {a, a + 1, a + 5, a, a + 5, a + 4});
            }
    }
    for (int mode = RTCD_WRAP_OFF; mode <= RTCD_WRAP_AUTO; ++mode) {
        rtcd_set_dropin_wrap(static_cast<rtcd_wrap_mode>(mode));
        bool wraps = mode == RTCD_WRAP_AUTO && rtcd_wrap_available();
        g_all_log.clear();
        rtcd_set_log(capture_all, nullptr);
        MeshData m = soup;
        {
            World w;
            btRigidBody* b = w.add(m, btVector3(0, 0, 1.0f));
            uint32_t owned_max = 0;
            for (int i = 0; i < 120; ++i) {
                w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
                owned_max = std::max(owned_max, w.rtcd->lastStepStats().pairs_owned);
            }
            const rtcd_mesh* mesh = w.rtcd->meshForShape(b->getCollisionShape());
            CHECK((mesh != nullptr) == wraps);
            CHECK(owned_max == (wraps ? 1u : 0u)); // the cube and the plane
            int info = 0, warnings = 0;
            for (const std::string& line : g_all_log) {
                info += line.find("wrapped") != std::string::npos && line.find("distance") != std::string::npos &&
                        line.find("btGImpactMeshShape") != std::string::npos;
                warnings += line.find("declines") != std::string::npos &&
                            line.find(rtcd_wrap_available() ? "wrap off" : "wrap not available") != std::string::npos;
            }
            CHECK(info == (wraps ? 1 : 0));
            CHECK(warnings == (wraps ? 0 : 1));
            float z = b->getWorldTransform().getOrigin().z();
            std::printf("open cube (%s) rests at z %.3f%s%s\n", wraps ? "wrapped" : "GImpact", z,
                        g_all_log.empty() ? "" : ": ", g_all_log.empty() ? "" : g_all_log.back().c_str());
            CHECK(z > -0.1f && z < 0.5f); // landed on its bottom face (origin at a bottom corner), not fallen through
        }
        rtcd_set_log(nullptr, nullptr);
    }
    rtcd_set_dropin_wrap(RTCD_WRAP_AUTO);
}

// A resting blob keeps its manifold points from step to step: Bullet's
// lifetime counter grows, which is what carries the warm start.
static void test_manifold_persists()
{
    MeshData m = blob(3, false);
    World w;
    w.add(m, btVector3(0, 0, 0.8f));
    for (int i = 0; i < 120; ++i) w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
    int max_lifetime = 0;
    for (int i = 0; i < w.rtcd->getNumManifolds(); ++i) {
        btPersistentManifold* pm = w.rtcd->getManifoldByIndexInternal(i);
        for (int c = 0; c < pm->getNumContacts(); ++c) max_lifetime = std::max(max_lifetime, pm->getContactPoint(c).getLifeTime());
    }
    std::printf("largest contact lifetime after 2 s: %d steps\n", max_lifetime);
    CHECK(max_lifetime > 30);
}

// Two blobs dropped onto each other: the mesh-mesh pair is rtcd's and casts rays.
static void test_mesh_pairs_are_batched()
{
    MeshData m1 = blob(4, false), m2 = blob(5, false);
    World w;
    w.add(m1, btVector3(0, 0, 0.6f));
    w.add(m2, btVector3(0.2f, 0, 1.8f));
    uint64_t rays = 0;
    uint32_t owned_max = 0;
    for (int i = 0; i < 90; ++i) {
        w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
        rays += w.rtcd->lastStepStats().colliding_rays;
        owned_max = std::max(owned_max, w.rtcd->lastStepStats().pairs_owned);
    }
    std::printf("colliding rays over 1.5 s: %llu, pairs owned at most %u\n", static_cast<unsigned long long>(rays), owned_max);
    CHECK(owned_max >= 2); // blob-blob and at least one blob-plane pair
    CHECK(rays > 0);
}

// A shape whose scaling changes is rebuilt the next time a pair needs it,
// instead of colliding with the mesh of its old size.
static void test_rescaled_shape_is_rebuilt()
{
    MeshData m = blob(6, false);
    World w;
    btRigidBody* body = w.add(m, btVector3(0, 0, 0.6f));
    for (int i = 0; i < 5; ++i) w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
    const rtcd_mesh* before = w.rtcd->meshForShape(body->getCollisionShape());
    CHECK(before != nullptr);
    float lo0[3], hi0[3];
    rtcd_mesh_bounds(before, lo0, hi0);
    w.world.removeRigidBody(body);
    body->getCollisionShape()->setLocalScaling(btVector3(2, 2, 2));
    static_cast<btGImpactMeshShape*>(body->getCollisionShape())->updateBound();
    w.world.addRigidBody(body); // a new pair with the plane: its algorithm asks for the mesh again
    for (int i = 0; i < 5; ++i) w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
    const rtcd_mesh* after = w.rtcd->meshForShape(body->getCollisionShape());
    CHECK(after != nullptr);
    if (!after) return;
    float lo1[3], hi1[3];
    rtcd_mesh_bounds(after, lo1, hi1);
    std::printf("mesh x extent %.3f before, %.3f after scaling by 2\n", hi0[0] - lo0[0], hi1[0] - lo1[0]);
    CHECK(std::fabs((hi1[0] - lo1[0]) - 2.0f * (hi0[0] - lo0[0])) < 1e-4f);
}

// ---- a shape deleted and another made at its address ----

// Storage where a Bullet object is made, destroyed and another made: an
// allocator giving a deleted shape's address to the next one, for certain.
template <class T> struct SameAddress {
    alignas(16) unsigned char bytes[sizeof(T)];
    T* obj = nullptr;
    template <class... A> T* make(A&&... args)
    {
        if (obj) obj->~T();
        obj = new (bytes) T(std::forward<A>(args)...);
        return obj;
    }
    ~SameAddress()
    {
        if (obj) obj->~T();
    }
};

static bool box_is(const rtcd_mesh* m, const btVector3& half)
{
    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    bool ok = m != nullptr;
    for (int k = 0; k < 3; ++k) ok = ok && std::fabs(hi[k] - half[k]) < 1e-4f && std::fabs(lo[k] + half[k]) < 1e-4f;
    std::printf("mesh box %.3f %.3f %.3f, the shape's %.3f %.3f %.3f\n", hi[0], hi[1], hi[2], half[0], half[1], half[2]);
    return ok;
}

// Bullet shapes carry no id: a box deleted and another of other dimensions
// made at its address is a new shape to rtcd (its mesh rebuilt), for a new
// body and under a body that keeps the address.
static void test_convex_remade_in_place()
{
    SameAddress<btBoxShape> box;
    MeshData m = blob(7, false);
    World w;
    w.add(m, btVector3(0, 0, 0.55f));
    // The same smallest half extent: the same margin (btBoxShape's safe margin).
    btVector3 half[3] = {btVector3(0.3f, 0.3f, 0.3f), btVector3(0.3f, 0.45f, 0.35f), btVector3(0.4f, 0.3f, 0.35f)};
    btRigidBody* body = w.place(box.make(half[0]), 0, btVector3(0.6f, 0, 0.3f));
    w.steps(2);
    const rtcd_mesh* first = w.rtcd->meshForShape(box.obj);
    CHECK(box_is(first, half[0]));
    uint64_t id = rtcd_mesh_id(first);
    // Deleted with its body; a new box and body at the same addresses.
    w.remove(body);
    const btCollisionShape* where = box.obj;
    body = w.place(box.make(half[1]), 0, btVector3(0.6f, 0, 0.3f));
    CHECK(box.obj == where);
    w.steps(2);
    const rtcd_mesh* second = w.rtcd->meshForShape(box.obj);
    CHECK(box_is(second, half[1]));
    CHECK(rtcd_mesh_id(second) != id);
    // Remade under the body (its pair lives on): seen within a step.
    box.make(half[2]);
    w.world.updateSingleAabb(body);
    w.steps(2);
    CHECK(box_is(w.rtcd->meshForShape(box.obj), half[2]));
    CHECK(w.rtcd->lastStepStats().pairs_owned >= 2); // the blob with the plane and with the box
}

static MeshData box_data(float half, uint32_t subdivisions)
{
    rtcd_generated_mesh g;
    const float h[3] = {half, half, half};
    rtcd_generate_box(h, subdivisions, &g);
    MeshData m;
    m.vertices.assign(g.vertices, g.vertices + 3 * g.vertex_count);
    m.indices.assign(g.indices, g.indices + 3 * g.triangle_count);
    rtcd_generated_free(&g);
    return m;
}

static btTriangleIndexVertexArray* interface_of(SameAddress<btTriangleIndexVertexArray>& at, MeshData& m)
{
    return at.make(static_cast<int>(m.indices.size() / 3), m.indices.data(), 3 * sizeof(int),
                   static_cast<int>(m.vertices.size() / 3), m.vertices.data(), 3 * sizeof(float));
}

// A GImpact shape and its mesh interface deleted, and others made at their
// addresses over another mesh with the same box (a finer box): rtcd builds
// the new mesh rather than keep the old one, which the box alone cannot tell.
static void test_gimpact_remade_in_place()
{
    SameAddress<btTriangleIndexVertexArray> iface;
    SameAddress<btGImpactMeshShape> shape;
    MeshData coarse = box_data(0.3f, 1), fine = box_data(0.3f, 3);
    World w;
    shape.make(interface_of(iface, coarse))->updateBound();
    btRigidBody* body = w.place(shape.obj, 1, btVector3(0, 0, 0.32f));
    w.steps(3);
    const rtcd_mesh* first = w.rtcd->meshForShape(shape.obj);
    CHECK(first && rtcd_mesh_vertex_count(first) == coarse.vertices.size() / 3);
    w.remove(body);
    const void* where[2] = {iface.obj, shape.obj};
    shape.make(interface_of(iface, fine))->updateBound();
    CHECK(where[0] == iface.obj && where[1] == shape.obj);
    w.place(shape.obj, 1, btVector3(0, 0, 0.32f));
    w.steps(3);
    const rtcd_mesh* second = w.rtcd->meshForShape(shape.obj);
    std::printf("GImpact remade in place: %u vertices, the new shape has %zu\n", rtcd_mesh_vertex_count(second),
                fine.vertices.size() / 3);
    CHECK(second && rtcd_mesh_vertex_count(second) == fine.vertices.size() / 3);
}

// A GImpact shape whose interface is pointed at another vertex array of the
// same triangles (double-buffered deformation) is followed in place: the same
// mesh, a new version, the new vertices.
static void test_gimpact_new_vertex_array()
{
    MeshData m = box_data(0.3f, 2);
    // The vertices off the corners 2 % inwards: the same box (which a
    // deformation check would see), other arrays.
    std::vector<float> moved = m.vertices;
    for (size_t i = 0; i < moved.size(); i += 3) {
        bool corner = true;
        for (int k = 0; k < 3; ++k) corner = corner && std::fabs(std::fabs(moved[i + k]) - 0.3f) < 1e-6f;
        for (int k = 0; k < 3 && !corner; ++k) moved[i + k] *= 0.98f;
    }
    World w;
    btRigidBody* body = w.add(m, btVector3(0, 0, 0.32f));
    btGImpactMeshShape* shape = static_cast<btGImpactMeshShape*>(body->getCollisionShape());
    w.steps(2);
    const rtcd_mesh* before = w.rtcd->meshForShape(shape);
    CHECK(before != nullptr);
    if (!before) return;
    uint64_t id = rtcd_mesh_id(before), version = rtcd_mesh_version(before);
    w.arrays.back()->getIndexedMeshArray()[0].m_vertexBase = reinterpret_cast<const unsigned char*>(moved.data());
    w.steps(1);
    const rtcd_mesh* after = w.rtcd->meshForShape(shape);
    CHECK(after == before && rtcd_mesh_id(after) == id);
    CHECK(rtcd_mesh_version(after) == version + 1);
    CHECK(after && std::equal(moved.begin(), moved.end(), rtcd_mesh_vertices(after)));
}

int main()
{
    return rtcd_run_tests({test_open_mesh_falls_back, test_open_cube_is_wrapped, test_manifold_persists, test_mesh_pairs_are_batched,
                           test_rescaled_shape_is_rebuilt, test_convex_remade_in_place, test_gimpact_remade_in_place,
                           test_gimpact_new_vertex_array});
}
