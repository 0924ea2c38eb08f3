// A ghost object's queries between steps (btKinematicCharacterController
// runs up to five a step over its btPairCachingGhostObject's pair cache)
// leave the world's step as it was: the same incremental pair-steps, the
// same step statistics and the same poses as without the queries; through
// GImpact (btCollisionDispatcher) for reference and through rtcd.
#include <rtcd/rtcd_bullet.h>
#include <rtcd/rtcd_generate.h>

#include <BulletCollision/CollisionDispatch/btGhostObject.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletDynamics/Dynamics/btActionInterface.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "bullet_world.hpp"
#include "gimpact_mesh.hpp"
#include "test_check.hpp"

using MeshData = GImpactMesh;

// Queries the ghost's pair cache five times, moving the ghost a little
// between them, and reads its manifolds: what recoverFromPenetration does.
struct GhostQueries : btActionInterface {
    btPairCachingGhostObject* ghost;
    bool on;
    int points = 0; // manifold points the queries saw
    GhostQueries(btPairCachingGhostObject* g, bool enabled) : ghost(g), on(enabled) {}
    void updateAction(btCollisionWorld* world, btScalar) override
    {
        if (!on) return;
        btTransform t = ghost->getWorldTransform();
        for (int q = 0; q < 5; ++q) {
            world->getDispatcher()->dispatchAllCollisionPairs(ghost->getOverlappingPairCache(), world->getDispatchInfo(),
                                                              world->getDispatcher());
            btHashedOverlappingPairCache* cache = ghost->getOverlappingPairCache();
            for (int i = 0; i < cache->getNumOverlappingPairs(); ++i) {
                btBroadphasePair& pair = cache->getOverlappingPairArray()[i];
                btManifoldArray manifolds;
                if (pair.m_algorithm) pair.m_algorithm->getAllContactManifolds(manifolds);
                for (int m = 0; m < manifolds.size(); ++m) points += manifolds[m]->getNumContacts();
            }
            t.getOrigin() += btVector3(0.002f, 0.001f, 0.0f);
            ghost->setWorldTransform(t);
        }
    }
    void debugDraw(btIDebugDraw*) override {}
};

struct StepFigures {
    uint32_t standard = 0, iterative = 0, owned = 0, contacts = 0;
    bool stats_equal = true; // every step's integer figures (filled when comparing)
};

struct Run {
    std::vector<rtcd_step_stats> stats; // rtcd: each step's lastStepStats
    uint64_t checksum = 0;
    StepFigures sum;
    int query_points = 0;
    rtcd_step_stats last_query{};
};

static uint64_t fnv(uint64_t h, const void* p, size_t n)
{
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

// Blobs dropped apart on GImpact tiles (each its own island) and a ghost
// (a GImpact blob, no contact response) swept across them by the program.
static Run run_scene(bool use_rtcd, bool queries, int steps)
{
    BulletWorld w(use_rtcd);
    btDiscreteDynamicsWorld& world = w.world;
    btGhostPairCallback ghost_callback;
    w.broadphase.getOverlappingPairCache()->setInternalGhostPairCallback(&ghost_callback);

    rtcd_generated_mesh g;
    MeshData ground, blob, ghost_mesh;
    // A tile under each blob: a pair's kept rays last while its motion
    // stays small at the meshes' reach, and a turning blob on one wide
    // ground would move the ground's far corners too much.
    const float half[3] = {0.8f, 0.8f, 0.25f};
    rtcd_generate_box(half, 2, &g);
    ground.take(g);
    rtcd_generated_free(&g);
    rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 7, &g);
    blob.take(g);
    rtcd_generated_free(&g);
    rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.9f, 11, &g);
    ghost_mesh.take(g);
    rtcd_generated_free(&g);

    auto add = [&](btCollisionShape* shape, const btTransform& at, float mass) { return w.add(shape, at, mass); };
    std::vector<btRigidBody*> blobs;
    for (int i = 0; i < 12; ++i) {
        float x = -4.5f + 1.8f * static_cast<float>(i % 6), y = i < 6 ? -3.0f : 3.0f;
        add(ground.shape.get(), btTransform(btQuaternion::getIdentity(), btVector3(x, y, -0.25f)), 0.0f);
        btQuaternion turn(btVector3(0.3f, 1.0f, 0.2f).normalized(), 0.4f * static_cast<float>(i));
        btRigidBody* b = add(blob.shape.get(), btTransform(turn, btVector3(x, y, 0.56f + 0.01f * static_cast<float>(i))), 1.0f);
        blobs.push_back(b);
    }

    btPairCachingGhostObject ghost;
    ghost.setCollisionShape(ghost_mesh.shape.get());
    ghost.setCollisionFlags(ghost.getCollisionFlags() | btCollisionObject::CF_NO_CONTACT_RESPONSE);
    ghost.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(-4.5f, 3.0f, 0.6f)));
    world.addCollisionObject(&ghost, btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
    GhostQueries action(&ghost, queries);
    world.addAction(&action);

    Run r;
    rtcdCollisionDispatcher* rd = w.rtcd;
    for (int s = 0; s < steps; ++s) {
        // The program places the ghost each step (the queries moved it).
        ghost.setWorldTransform(
            btTransform(btQuaternion::getIdentity(), btVector3(-4.5f + 0.02f * static_cast<float>(s), 3.0f, 0.6f)));
        world.stepSimulation(1.0f / 60.0f, 0);
        if (rd) {
            rtcd_step_stats st = rd->lastStepStats();
            r.stats.push_back(st);
            r.sum.standard += st.standard_pairs;
            r.sum.iterative += st.iterative_pairs;
            r.sum.owned += st.pairs_owned;
            r.sum.contacts += st.contacts;
        }
    }
    if (rd) r.last_query = rd->lastQueryStats();
    r.query_points = action.points;
    uint64_t h = 1469598103934665603ull;
    for (btRigidBody* b : blobs) {
        const btTransform& t = b->getWorldTransform();
        float v[12];
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) v[3 * i + j] = static_cast<float>(t.getBasis()[i][j]);
            v[9 + i] = static_cast<float>(t.getOrigin()[i]);
        }
        h = fnv(h, v, sizeof v);
    }
    r.checksum = h;
    world.removeAction(&action);
    world.removeCollisionObject(&ghost);
    w.clear(); // before the meshes go
    return r;
}

// Every integer figure of the step (the timings aside).
static bool same_counts(const rtcd_step_stats& a, const rtcd_step_stats& b)
{
    return a.broadphase_pairs == b.broadphase_pairs && a.pairs_owned == b.pairs_owned &&
           a.pairs_culled == b.pairs_culled && a.rays_cast == b.rays_cast && a.colliding_rays == b.colliding_rays &&
           a.contacts == b.contacts && a.standard_pairs == b.standard_pairs && a.iterative_pairs == b.iterative_pairs &&
           a.predictive_rays == b.predictive_rays && a.walk_steps == b.walk_steps && a.kept_rays == b.kept_rays &&
           a.ray_length == b.ray_length && a.out_of_memory == b.out_of_memory && a.faults == b.faults &&
           a.batch.state_resets == b.batch.state_resets && a.manifolds == b.manifolds &&
           a.manifolds_created == b.manifolds_created && a.manifolds_released == b.manifolds_released;
}

static void test_ghost_queries_leave_the_step()
{
    const int steps = 90;
    Run gi_plain = run_scene(false, false, steps), gi_query = run_scene(false, true, steps);
    Run rt_plain = run_scene(true, false, steps), rt_query = run_scene(true, true, steps);
    std::printf("GImpact: checksum %016llx without queries, %016llx with (query points %d)\n",
                (unsigned long long)gi_plain.checksum, (unsigned long long)gi_query.checksum, gi_query.query_points);
    std::printf("rtcd: checksum %016llx without queries, %016llx with (query points %d)\n",
                (unsigned long long)rt_plain.checksum, (unsigned long long)rt_query.checksum, rt_query.query_points);
    std::printf("rtcd pair-steps: %u standard / %u iterative without queries, %u / %u with; last query: %u pairs, "
                "%u standard, %u iterative\n",
                rt_plain.sum.standard, rt_plain.sum.iterative, rt_query.sum.standard, rt_query.sum.iterative,
                rt_query.last_query.pairs_owned, rt_query.last_query.standard_pairs, rt_query.last_query.iterative_pairs);
    // The reference: GImpact keeps no state, so the queries leave its step alone.
    CHECK(gi_plain.checksum == gi_query.checksum);
    CHECK(gi_query.query_points > 0);
    // The queries ran and found the ghost's contacts through rtcd.
    CHECK(rt_query.query_points > 0);
    CHECK(rt_query.last_query.pairs_owned > 0);
    CHECK(rt_plain.last_query.pairs_owned == 0);
    // The step is the step: the same incremental pair-steps, figures and poses.
    CHECK(rt_plain.sum.iterative > rt_plain.sum.standard); // the scene keeps its pairs: most pair-steps walk kept rays
    CHECK(rt_query.sum.iterative == rt_plain.sum.iterative);
    CHECK(rt_query.sum.standard == rt_plain.sum.standard);
    CHECK(rt_query.checksum == rt_plain.checksum);
    bool equal = rt_plain.stats.size() == rt_query.stats.size();
    for (size_t i = 0; equal && i < rt_plain.stats.size(); ++i) equal = same_counts(rt_plain.stats[i], rt_query.stats[i]);
    CHECK(equal);
}

// A pair cache of the program's own (not a ghost's) is the step unless
// setStepPairCache names the world's: then it is a query, its figures in
// lastQueryStats and the step's left as they were.
static void test_named_step_cache()
{
    for (int named = 0; named < 2; ++named) {
        BulletWorld w(true, 0.0f);
        rtcdCollisionDispatcher& dispatcher = *w.rtcd;
        btDiscreteDynamicsWorld& world = w.world;
        rtcd_generated_mesh g;
        MeshData blob;
        rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 7, &g);
        blob.take(g);
        rtcd_generated_free(&g);
        btRigidBody a(btRigidBody::btRigidBodyConstructionInfo(0, nullptr, blob.shape.get()));
        btRigidBody b(btRigidBody::btRigidBodyConstructionInfo(0, nullptr, blob.shape.get()));
        a.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0, 0, 0)));
        b.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0.9f, 0, 0))); // overlapping
        // Two static bodies: no pair in the world's cache.
        world.addRigidBody(&a);
        world.addRigidBody(&b);
        if (named) dispatcher.setStepPairCache(world.getPairCache());
        world.stepSimulation(1.0f / 60.0f, 0);
        rtcd_step_stats step = dispatcher.lastStepStats();
        // The program's cache takes the pair Bullet's filter keeps out of the world's (static with static).
        struct AcceptAll : btOverlapFilterCallback {
            bool needBroadphaseCollision(btBroadphaseProxy*, btBroadphaseProxy*) const override { return true; }
        } accept_all;
        btHashedOverlappingPairCache own;
        own.setOverlapFilterCallback(&accept_all);
        own.addOverlappingPair(a.getBroadphaseHandle(), b.getBroadphaseHandle());
        CHECK(own.getNumOverlappingPairs() == 1);
        // Static bodies need no collision in Bullet's eyes: awake for the query.
        a.setActivationState(DISABLE_DEACTIVATION);
        dispatcher.dispatchAllCollisionPairs(&own, world.getDispatchInfo(), &dispatcher);
        rtcd_step_stats after = dispatcher.lastStepStats(), query = dispatcher.lastQueryStats();
        std::printf("own pair cache, step cache %s: step pairs %u -> %u, query pairs %u, contacts %u\n",
                    named ? "named" : "not named", step.pairs_owned, after.pairs_owned, query.pairs_owned,
                    query.contacts);
        CHECK(step.pairs_owned == 0);
        if (named) {
            CHECK(query.pairs_owned == 1 && query.contacts > 0);
            CHECK(same_counts(after, step));
        } else {
            CHECK(query.pairs_owned == 0);
            CHECK(after.pairs_owned == 1 && after.contacts > 0);
        }
        own.cleanOverlappingPair(*own.getOverlappingPairArrayPtr(), &dispatcher);
        own.removeOverlappingPair(a.getBroadphaseHandle(), b.getBroadphaseHandle(), &dispatcher);
        world.removeRigidBody(&b);
        world.removeRigidBody(&a);
    }
}

int main() { return rtcd_run_tests({test_ghost_queries_leave_the_step, test_named_step_cache}); }
