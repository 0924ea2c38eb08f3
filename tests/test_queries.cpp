// Bullet's collision queries and collision-only worlds, each through GImpact
// (btCollisionDispatcher + btGImpactCollisionAlgorithm::registerAlgorithm)
// and through rtcd's dispatcher: contactTest / contactPairTest on two sphere
// meshes (analytic depth), the threshold semantics, a query leaving the
// world's pair state alone, a btCollisionWorld without dynamics, and a
// compound with a GImpact child at rest.
#include <rtcd/rtcd_bullet.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "bullet_world.hpp"
#include "gimpact_mesh.hpp"
#include "test_check.hpp"

static const float k_radius = 0.5f;

// A UV sphere of radius k_radius as a GImpact mesh (its arrays kept alive by the caller).
struct SphereMesh : GImpactMesh {
    SphereMesh()
    {
        rtcd_generated_mesh g;
        rtcd_generate_uv_sphere(24, 48, k_radius, &g);
        take(g);
        rtcd_generated_free(&g);
    }
};

static btTransform at(float x, float y, float z)
{
    return btTransform(btQuaternion::getIdentity(), btVector3(x, y, z));
}

// A collision-only world (no dynamics) with either dispatcher.
struct CollisionScene {
    btDefaultCollisionConfiguration config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    rtcdCollisionDispatcher* rtcd = nullptr;
    btDbvtBroadphase broadphase;
    std::unique_ptr<btCollisionWorld> world;
    std::vector<std::unique_ptr<btCollisionObject>> objects;
    explicit CollisionScene(bool use_rtcd)
    {
        if (use_rtcd) dispatcher.reset(rtcd = new rtcdCollisionDispatcher(&config));
        else dispatcher.reset(new btCollisionDispatcher(&config));
        // The usual GImpact set-up, which the drop-in keeps.
        btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher.get());
        world.reset(new btCollisionWorld(dispatcher.get(), &broadphase, &config));
    }
    ~CollisionScene()
    {
        for (auto& o : objects) world->removeCollisionObject(o.get());
    }
    btCollisionObject* add(btCollisionShape* shape, const btTransform& t)
    {
        objects.emplace_back(new btCollisionObject());
        objects.back()->setCollisionShape(shape);
        objects.back()->setWorldTransform(t);
        world->addCollisionObject(objects.back().get());
        return objects.back().get();
    }
};

// Collects what a query reports; normals turned to push `self` (body A of the query).
struct Collect : btCollisionWorld::ContactResultCallback {
    const btCollisionObject* self;
    int count = 0;
    float deepest = -1e30f, farthest = -1e30f; // largest penetration, largest distance
    btVector3 normal{0, 0, 0};                  // the deepest point's, pushing self
    explicit Collect(const btCollisionObject* o, float threshold = 0) : self(o)
    {
        m_closestDistanceThreshold = threshold;
    }
    btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper* w0, int, int,
                             const btCollisionObjectWrapper*, int, int) override
    {
        ++count;
        float depth = static_cast<float>(-cp.getDistance());
        farthest = std::max(farthest, static_cast<float>(cp.getDistance()));
        if (depth > deepest) {
            deepest = depth;
            normal = w0->getCollisionObject() == self ? cp.m_normalWorldOnB : -cp.m_normalWorldOnB;
        }
        return 0;
    }
};

static const char* name(bool use_rtcd) { return use_rtcd ? "rtcd" : "GImpact"; }

// Two sphere meshes overlapping by 0.2 (analytic depth; the inscribed
// polyhedra a little less), then apart, then 3 mm apart (inside rtcd's 5 mm
// speculative margin). GImpact registers no closest-points algorithm, so
// Bullet reports nothing for it: asserted, as it is what a GImpact program
// gets today.
static void test_contact_queries()
{
    const float overlap = 0.2f;
    for (int use = 0; use < 2; ++use) {
        CollisionScene s(use != 0);
        SphereMesh ma, mb;
        btCollisionObject* a = s.add(ma.shape.get(), at(0, 0, 0));
        btCollisionObject* b = s.add(mb.shape.get(), at(2 * k_radius - overlap, 0.01f, 0.02f));
        Collect pair(a), single(a);
        s.world->contactPairTest(a, b, pair);
        s.world->contactTest(a, single);
        std::printf("%-7s overlapping: contactPairTest %d points (deepest %.4f, analytic %.4f, normal %.3f %.3f %.3f), "
                    "contactTest %d points (deepest %.4f)\n",
                    name(use), pair.count, pair.count ? pair.deepest : 0.0f, overlap, pair.normal.x(), pair.normal.y(),
                    pair.normal.z(), single.count, single.count ? single.deepest : 0.0f);
        if (use) {
            CHECK(pair.count >= 1 && single.count >= 1);
            CHECK(std::fabs(pair.deepest - overlap) <= 0.1f * overlap);
            CHECK(std::fabs(single.deepest - overlap) <= 0.1f * overlap);
            CHECK(pair.normal.x() < -0.95f); // pushes a away from b (b lies along +x)
            CHECK(pair.farthest <= 0);        // contacts only at the default threshold
        } else {
            CHECK(pair.count == 0 && single.count == 0);
        }
        // Apart: nothing, through both.
        b->setWorldTransform(at(2 * k_radius + 0.2f, 0, 0));
        s.world->updateAabbs();
        Collect apart(a), apart_single(a);
        s.world->contactPairTest(a, b, apart);
        s.world->contactTest(a, apart_single);
        CHECK(apart.count == 0 && apart_single.count == 0);
        // 3 mm apart: no contact at the default threshold; with a 1 cm
        // threshold rtcd may report the gap (its speculative points), never
        // farther than asked.
        b->setWorldTransform(at(2 * k_radius + 0.003f, 0, 0));
        s.world->updateAabbs();
        Collect near0(a), near_single(a), near1(a, 0.01f);
        s.world->contactPairTest(a, b, near0);
        s.world->contactTest(a, near_single);
        s.world->contactPairTest(a, b, near1);
        std::printf("%-7s 3 mm apart: %d points at threshold 0, %d at threshold 0.01 (largest distance %.4f)\n",
                    name(use), near0.count, near1.count, near1.count ? near1.farthest : 0.0f);
        CHECK(near0.count == 0 && near_single.count == 0);
        if (near1.count) CHECK(near1.farthest >= 0.0029f && near1.farthest <= 0.01f);
        if (use) CHECK(near1.count >= 1);
    }
}

// The query's deepest point and normal against the world's own contacts
// for the same poses, and the world's pair state untouched by queries: the
// pair keeps walking its kept rays (iterative passes) step after step, and
// the step's figures stay the step's.
static void test_query_matches_world_and_leaves_it_alone()
{
    for (int with_queries = 0; with_queries < 2; ++with_queries) {
        CollisionScene s(true);
        SphereMesh ma, mb, mc;
        btCollisionObject* a = s.add(ma.shape.get(), at(0, 0, 0));
        btCollisionObject* b = s.add(mb.shape.get(), at(0.85f, 0.05f, 0.1f));
        btCollisionObject* c = s.add(mc.shape.get(), at(-0.9f, 0, 0.05f));
        uint32_t iterative = 0, standard = 0, manifolds = 0;
        for (int step = 0; step < 20; ++step) {
            s.world->performDiscreteCollisionDetection();
            rtcd_step_stats st = s.rtcd->lastStepStats();
            iterative += st.iterative_pairs;
            standard += st.standard_pairs;
            manifolds = static_cast<uint32_t>(s.dispatcher->getNumManifolds());
            if (!with_queries) continue;
            Collect q(a), q2(c, 0.01f);
            s.world->contactPairTest(a, b, q);
            s.world->contactTest(c, q2);
            rtcd_step_stats after = s.rtcd->lastStepStats();
            CHECK(after.pairs_owned == st.pairs_owned && after.contacts == st.contacts &&
                  after.iterative_pairs == st.iterative_pairs && after.manifolds == st.manifolds);
            CHECK(s.dispatcher->getNumManifolds() == static_cast<int>(manifolds));
            // The world's deepest point between a and b.
            float world_deepest = 0;
            btVector3 world_normal(0, 0, 0);
            for (int i = 0; i < s.dispatcher->getNumManifolds(); ++i) {
                btPersistentManifold* m = s.dispatcher->getManifoldByIndexInternal(i);
                bool ab = (m->getBody0() == a && m->getBody1() == b) || (m->getBody0() == b && m->getBody1() == a);
                if (!ab) continue;
                for (int k = 0; k < m->getNumContacts(); ++k) {
                    const btManifoldPoint& p = m->getContactPoint(k);
                    if (-p.getDistance() > world_deepest) {
                        world_deepest = static_cast<float>(-p.getDistance());
                        world_normal = m->getBody0() == a ? p.m_normalWorldOnB : -p.m_normalWorldOnB;
                    }
                }
            }
            if (step == 0)
                std::printf("query deepest %.5f normal (%.3f %.3f %.3f); world deepest %.5f normal (%.3f %.3f %.3f)\n",
                            q.deepest, q.normal.x(), q.normal.y(), q.normal.z(), world_deepest, world_normal.x(),
                            world_normal.y(), world_normal.z());
            CHECK(q.count >= 1 && q2.count >= 1);
            CHECK(std::fabs(q.deepest - world_deepest) <= 0.02f * world_deepest);
            CHECK(q.normal.dot(world_normal) > 0.99f);
        }
        std::printf("%s queries: %u iterative and %u standard pair-steps over 20 steps, %u manifolds\n",
                    with_queries ? "with" : "without", iterative, standard, manifolds);
        // Two pairs, one standard pass each, then kept rays walked every step.
        CHECK(standard == 2 && iterative == 38);
        CHECK(manifolds == 2);
    }
}

// A btCollisionWorld without dynamics: performDiscreteCollisionDetection
// fills the manifolds through both dispatchers; rtcd's depth is the analytic one.
static void test_collision_world_only()
{
    for (int use = 0; use < 2; ++use) {
        CollisionScene s(use != 0);
        SphereMesh ma, mb;
        btCollisionObject* a = s.add(ma.shape.get(), at(0, 0, 0));
        s.add(mb.shape.get(), at(0.9f, 0.02f, 0));
        s.world->performDiscreteCollisionDetection();
        int points = 0;
        float deepest = 0;
        for (int i = 0; i < s.dispatcher->getNumManifolds(); ++i) {
            btPersistentManifold* m = s.dispatcher->getManifoldByIndexInternal(i);
            if (m->getBody0() != a && m->getBody1() != a) continue;
            points += m->getNumContacts();
            for (int k = 0; k < m->getNumContacts(); ++k)
                deepest = std::max(deepest, static_cast<float>(-m->getContactPoint(k).getDistance()));
        }
        std::printf("%-7s collision world: %d points, deepest %.4f (analytic 0.1)\n", name(use), points, deepest);
        CHECK(points >= 1);
        if (use) {
            CHECK(std::fabs(deepest - 0.1f) <= 0.01f);
            CHECK(s.rtcd->lastStepStats().pairs_owned == 1);
        }
    }
}

// A compound whose child is a GImpact sphere mesh drops on a plane and
// rests on it through both dispatchers.
static void test_compound_child_rests()
{
    for (int use = 0; use < 2; ++use) {
        BulletWorld w(use != 0);
        btDiscreteDynamicsWorld& world = w.world;
        btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
        btRigidBody ground(0, nullptr, &plane);
        world.addRigidBody(&ground);
        SphereMesh m;
        btCompoundShape compound;
        // Off the body's origin, above its centre of mass: it stays upright.
        compound.addChildShape(at(0, 0, 0.3f), m.shape.get());
        btVector3 inertia;
        compound.calculateLocalInertia(1, inertia);
        btDefaultMotionState motion(at(0, 0, 1.0f));
        btRigidBody body(1, &motion, &compound, inertia);
        world.addRigidBody(&body);
        float lowest = 1e9f;
        for (int i = 0; i < 180; ++i) {
            world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
            // The sphere's centre, where the child sits in the world.
            float zc = static_cast<float>((body.getWorldTransform() * compound.getChildTransform(0)).getOrigin().z());
            if (i >= 120) lowest = std::min(lowest, zc);
        }
        float z = static_cast<float>((body.getWorldTransform() * compound.getChildTransform(0)).getOrigin().z());
        std::printf("%-7s compound with a GImpact child: sphere centre at z %.4f after 3 s (lowest %.4f in the last second, "
                    "sphere radius %.2f)\n",
                    name(use), z, lowest, k_radius);
        // Resting on the plane: its centre within 3 cm of one radius up, and still.
        CHECK(std::fabs(z - k_radius) < 0.03f && std::fabs(lowest - k_radius) < 0.03f);
        CHECK(body.getLinearVelocity().length() < 0.05f);
        world.removeRigidBody(&body);
        world.removeRigidBody(&ground);
    }
}

// The same compound on a GImpact ground mesh: its child's pair is mesh-mesh
// (rtcd's batch takes the child's pose as a body of that pair alone).
static void test_compound_child_rests_on_mesh()
{
    for (int use = 0; use < 2; ++use) {
        BulletWorld w(use != 0);
        rtcd_generated_mesh g;
        const float half[3] = {2.0f, 2.0f, 0.25f};
        rtcd_generate_box(half, 4, &g);
        GImpactMesh ground(g);
        btRigidBody* floor = w.add(ground.shape.get(), at(0, 0, -0.25f), 0); // top at z = 0
        SphereMesh m;
        btCompoundShape compound;
        compound.addChildShape(at(0, 0, 0.3f), m.shape.get());
        btRigidBody* body = w.add(&compound, at(0.1f, -0.2f, 0.9f), 1);
        float lowest = 1e9f;
        uint32_t owned = 0;
        for (int i = 0; i < 180; ++i) {
            w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
            float zc = static_cast<float>((body->getWorldTransform() * compound.getChildTransform(0)).getOrigin().z());
            if (i >= 120) lowest = std::min(lowest, zc);
            if (w.rtcd) owned = std::max(owned, w.rtcd->lastStepStats().pairs_owned);
        }
        float z = static_cast<float>((body->getWorldTransform() * compound.getChildTransform(0)).getOrigin().z());
        std::printf("%-7s compound child on a GImpact ground: sphere centre at z %.4f (lowest %.4f in the last second), "
                    "%u pair(s) owned by rtcd at most, speed %.4f m/s\n",
                    name(use), z, lowest, owned, static_cast<float>(body->getLinearVelocity().length()));
        CHECK(std::fabs(z - k_radius) < 0.03f && std::fabs(lowest - k_radius) < 0.03f);
        // rtcd's comes to rest; GImpact's rocks on (about 0.4 m/s after 3 s).
        if (use) CHECK(body->getLinearVelocity().length() < 0.05f);
        if (use) CHECK(owned >= 1); // the child's pair went through rtcd
        w.clear(); // before the shapes go
        (void)floor;
    }
}

// A sphere mesh against a plane (rtcd's mesh-plane pairs: every vertex
// within the threshold, exactly), and a compound with a GImpact sphere
// child against a sphere mesh (Bullet's compound algorithm asks the
// dispatcher for each child's algorithm).
static void test_plane_and_compound_queries()
{
    for (int use = 0; use < 2; ++use) {
        CollisionScene s(use != 0);
        SphereMesh ma, mb;
        btStaticPlaneShape plane_shape(btVector3(0, 0, 1), 0);
        btCollisionObject* plane = s.add(&plane_shape, at(0, 0, 0));
        btCollisionObject* a = s.add(ma.shape.get(), at(0, 0, k_radius - 0.05f)); // 5 cm into the plane
        Collect sunk(a);
        s.world->contactPairTest(a, plane, sunk);
        a->setWorldTransform(at(0, 0, k_radius + 0.003f)); // 3 mm above it
        s.world->updateAabbs();
        Collect above0(a), above1(a, 0.01f);
        s.world->contactPairTest(a, plane, above0);
        s.world->contactPairTest(a, plane, above1);
        std::printf("%-7s sphere mesh and plane: %d points 5 cm in (deepest %.4f); 3 mm above: %d at threshold 0, %d at "
                    "0.01 (largest distance %.4f)\n",
                    name(use), sunk.count, sunk.count ? sunk.deepest : 0.0f, above0.count, above1.count,
                    above1.count ? above1.farthest : 0.0f);
        CHECK(above0.count == 0);
        if (use) {
            CHECK(sunk.count >= 1 && std::fabs(sunk.deepest - 0.05f) <= 0.005f);
            CHECK(sunk.normal.z() > 0.999f);
            CHECK(above1.count >= 1 && above1.farthest >= 0.003f && above1.farthest <= 0.01f);
        } else {
            CHECK(sunk.count == 0 && above1.count == 0); // no closest-points algorithm for GImpact against a plane
        }
        // The compound's child overlaps the other sphere by 0.15.
        s.world->removeCollisionObject(plane);
        a->setWorldTransform(at(0, 0, 0));
        btCompoundShape compound;
        compound.addChildShape(at(0.5f, 0, 0), mb.shape.get());
        btCollisionObject* c = s.add(&compound, at(2 * k_radius - 0.15f - 0.5f, 0, 0));
        s.world->performDiscreteCollisionDetection();
        rtcd_step_stats before = use ? s.rtcd->lastStepStats() : rtcd_step_stats();
        int manifolds = s.dispatcher->getNumManifolds();
        Collect child(a), child_far(a, 0.01f);
        s.world->contactPairTest(a, c, child);
        s.world->contactPairTest(a, c, child_far); // Bullet's compound algorithm asks for closest points then
        std::printf("%-7s compound child: %d points (deepest %.4f, analytic 0.15, normal %.3f %.3f %.3f); %d at "
                    "threshold 0.01\n",
                    name(use), child.count, child.count ? child.deepest : 0.0f, child.normal.x(), child.normal.y(),
                    child.normal.z(), child_far.count);
        CHECK(s.dispatcher->getNumManifolds() == manifolds);
        if (use) {
            CHECK(child.count >= 1 && std::fabs(child.deepest - 0.15f) <= 0.015f);
            CHECK(child.normal.x() < -0.95f);
            CHECK(child_far.count >= 1 && std::fabs(child_far.deepest - child.deepest) < 1e-6f);
            // The query ran beside the step, not in it.
            rtcd_step_stats after = s.rtcd->lastStepStats();
            CHECK(after.pairs_owned == before.pairs_owned && after.standard_pairs == before.standard_pairs &&
                  after.contacts == before.contacts && after.manifolds_created == before.manifolds_created);
        }
    }
}

int main()
{
    return rtcd_run_tests({test_contact_queries, test_query_matches_world_and_leaves_it_alone, test_collision_world_only,
                           test_plane_and_compound_queries, test_compound_child_rests,
                           test_compound_child_rests_on_mesh});
}
