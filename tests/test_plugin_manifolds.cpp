// rtcd's pairs in Bullet hold a manifold only while they have contacts
// (Bullet's island builder and solver walk every manifold), and a pair's own
// state stays in rtcd's batch meanwhile: a pair that comes back into contact
// continues from its kept rays instead of starting over.
// What the manifolds hold for the solver: one point's rolling and spinning
// friction for all (plugin_writeback.cpp), which turns bodies as Bullet's
// rows on every point do.
#include <rtcd/rtcd_bullet.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>

#include "bullet_world.hpp"
#include "gimpact_mesh.hpp"
#include "test_check.hpp"

static rtcd_generated_mesh generated_blob(uint64_t seed)
{
    rtcd_generated_mesh g;
    rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, seed, &g);
    return g;
}

static rtcd_generated_mesh generated_box(float hx, float hy, float hz)
{
    const float half[3] = {hx, hy, hz};
    rtcd_generated_mesh g;
    rtcd_generate_box(half, 1, &g);
    return g;
}

// An avalanche blob as a GImpact mesh, with its box.
struct Blob : GImpactMesh {
    float lo[3], hi[3];
    explicit Blob(uint64_t seed) : GImpactMesh(generated_blob(seed))
    {
        for (int k = 0; k < 3; ++k) lo[k] = 1e9f, hi[k] = -1e9f;
        for (size_t i = 0; i < vertices.size(); ++i) {
            lo[i % 3] = std::min(lo[i % 3], vertices[i]);
            hi[i % 3] = std::max(hi[i % 3], vertices[i]);
        }
    }
};

// A box as a closed triangle mesh (one quad a face): four corners rest on
// a plane or a face at once.
struct BoxMesh : GImpactMesh {
    BoxMesh(float hx, float hy, float hz) : GImpactMesh(generated_box(hx, hy, hz)) {}
};

// The drop-in world (bullet_world.hpp) on a ground plane, on its own pair
// cache or the caller's; its bodies never sleep.
struct World : BulletWorld {
    btStaticPlaneShape ground{btVector3(0, 0, 1), 0};
    explicit World(bool use_rtcd = true, btOverlappingPairCache* pair_cache = nullptr)
        : BulletWorld(use_rtcd, -9.81f, nullptr, pair_cache)
    {
        addStatic(&ground);
    }
    ~World() { clear(); }
    btRigidBody* add(btCollisionShape* shape, btScalar mass, const btVector3& at)
    {
        btRigidBody* body = BulletWorld::add(shape, btTransform(btQuaternion::getIdentity(), at), mass);
        body->setActivationState(DISABLE_DEACTIVATION);
        return body;
    }
    rtcd_step_stats step()
    {
        world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
        return rtcd ? rtcd->lastStepStats() : rtcd_step_stats{};
    }
    // Manifolds between a and b, and the points they hold.
    int manifolds(const btCollisionObject* a, const btCollisionObject* b, int* points = nullptr)
    {
        int n = 0, p = 0;
        for (int i = 0; i < rtcd->getNumManifolds(); ++i) {
            const btPersistentManifold* m = rtcd->getManifoldByIndexInternal(i);
            if ((m->getBody0() == a && m->getBody1() == b) || (m->getBody0() == b && m->getBody1() == a)) {
                n++;
                p += m->getNumContacts();
            }
        }
        if (points) *points = p;
        return n;
    }
};

// A program's own near callback: rtcd's pairs then write their contacts when
// Bullet calls them, as the callback may decide (here: it counts them).
static int g_near_calls = 0;
static void countingNearCallback(btBroadphasePair& pair, btCollisionDispatcher& d, const btDispatcherInfo& info)
{
    g_near_calls++;
    btCollisionDispatcher::defaultNearCallback(pair, d, info);
}

// Pairs without contacts (two blobs high above the plane, whose box is the
// whole world, so both pairs are rtcd's every step) hold no manifold; once
// the blobs land, each pair with the plane holds one. With Bullet's near
// callback the contacts are written before its dispatch, with a program's
// own callback when Bullet calls each pair: the same behaviour.
static void no_contact_no_manifold(bool own_callback)
{
    Blob a(11), b(12);
    World w;
    g_near_calls = 0;
    if (own_callback) w.rtcd->setNearCallback(countingNearCallback);
    w.world.setGravity(btVector3(0, 0, 0));
    btRigidBody* ba = w.add(a.shape.get(), 1, btVector3(0, 0, 3));
    btRigidBody* bb = w.add(b.shape.get(), 1, btVector3(3, 0, 3));
    rtcd_step_stats st{};
    for (int i = 0; i < 10; ++i) st = w.step();
    std::printf("apart: %u pairs owned, %u manifolds held, %d in the dispatcher\n", st.pairs_owned, st.manifolds,
                w.rtcd->getNumManifolds());
    CHECK(st.pairs_owned == 2);
    CHECK(st.manifolds == 0 && w.rtcd->getNumManifolds() == 0);
    w.world.setGravity(btVector3(0, 0, -9.81f));
    uint32_t created = 0;
    for (int i = 0; i < 150; ++i) created += (st = w.step()).manifolds_created;
    std::printf("landed: %u pairs owned, %u manifolds held (%u created), %d in the dispatcher\n", st.pairs_owned,
                st.manifolds, created, w.rtcd->getNumManifolds());
    CHECK(st.manifolds == 2 && w.rtcd->getNumManifolds() == 2);
    CHECK(w.manifolds(ba, w.bodies[0].get()) == 1 && w.manifolds(bb, w.bodies[0].get()) == 1);
    CHECK(created >= 2);
    if (own_callback) {
        CHECK(g_near_calls >= 2 * 160); // every pair of every step went through it
        CHECK(w.rtcd->getNearCallback() == countingNearCallback);
    } else {
        CHECK(g_near_calls == 0);
        CHECK(w.rtcd->getNearCallback() == btCollisionDispatcher::defaultNearCallback); // put back after each step
    }
}

static void test_no_contact_no_manifold() { no_contact_no_manifold(false); }
static void test_no_contact_no_manifold_own_callback() { no_contact_no_manifold(true); }

// A blob slid against a fixed one, drawn back until their manifold is
// released, then slid against it again: the pair stays in the broadphase
// throughout, its state stays in rtcd without a manifold (iterative passes,
// kept rays), and the renewed contact is found by an iterative pass, not a
// standard one (which a forgotten pair would need).
static void test_contact_again_keeps_state()
{
    Blob a(21), b(22);
    World w;
    w.world.setGravity(btVector3(0, 0, 0));
    float gap = 0.03f;
    btRigidBody* fixed = w.add(a.shape.get(), 0, btVector3(0, 0, 3));
    btRigidBody* moving = w.add(b.shape.get(), 1, btVector3(a.hi[0] - b.lo[0] + gap, 0, 3));
    moving->setDamping(0, 0);
    uint32_t released = 0;
    auto slide = [&](float speed, int steps, bool until_contact, rtcd_step_stats* last) {
        for (int i = 0; i < steps; ++i) {
            moving->setLinearVelocity(btVector3(speed, 0, 0));
            moving->setAngularVelocity(btVector3(0, 0, 0));
            *last = w.step();
            released += last->manifolds_released;
            int points = 0;
            if (until_contact && w.manifolds(fixed, moving, &points) && points > 0) return i + 1;
        }
        return steps;
    };
    rtcd_step_stats st{};
    int first = slide(-0.05f, 400, true, &st);
    int points = 0;
    CHECK(w.manifolds(fixed, moving, &points) == 1 && points > 0);
    CHECK(released == 0);
    std::printf("first contact after %d steps: %d points\n", first, points);
    // Apart by more than Bullet's breaking threshold, then still.
    slide(0.05f, 40, false, &st);
    uint64_t kept = 0, iterative = 0, standard = 0;
    for (int i = 0; i < 20; ++i) {
        slide(0.0f, 1, false, &st);
        kept += st.kept_rays;
        iterative += st.iterative_pairs;
        standard += st.standard_pairs;
    }
    std::printf("apart: %u pairs owned, manifold between them %d, released %u; %llu iterative and %llu standard "
                "passes, %llu kept rays\n",
                st.pairs_owned, w.manifolds(fixed, moving), released, (unsigned long long)iterative,
                (unsigned long long)standard, (unsigned long long)kept);
    CHECK(st.pairs_owned == 2); // the pair (and the moving blob's with the plane): still rtcd's
    CHECK(w.manifolds(fixed, moving) == 0);
    CHECK(released == 1); // the pair's one manifold, once it had no point left
    CHECK(kept > 0 && iterative > 0);
    // Back into contact: the pair's kept rays find it.
    int again = 0, found_by_standard = -1;
    for (int i = 0; i < 400 && again == 0; ++i) {
        moving->setLinearVelocity(btVector3(-0.05f, 0, 0));
        moving->setAngularVelocity(btVector3(0, 0, 0));
        st = w.step();
        if (w.manifolds(fixed, moving, &points) && points > 0) {
            again = i + 1;
            found_by_standard = static_cast<int>(st.standard_pairs);
        }
    }
    std::printf("contact again after %d steps: %d points, found by %s pass\n", again, points,
                found_by_standard ? "a standard" : "an iterative");
    CHECK(again > 0 && points > 0);
    CHECK(found_by_standard == 0);
}

// Steps until a body resting on `base` (the ground plane, or a fixed box
// mesh) and set turning at 3 rad/s about `axis` (2: spinning about the
// vertical; 0: rolling, with the matching speed) turns at a tenth of that.
static int steps_to_stop(bool use_rtcd, btCollisionShape* shape, float bottom, btCollisionShape* base, int axis,
                         btScalar rolling)
{
    World w(use_rtcd);
    btRigidBody* ground = w.bodies[0].get();
    btRigidBody* under = base ? w.add(base, 0, btVector3(0, 0, 0.25f)) : ground;
    float floor = base ? 0.5f : 0.0f;
    btRigidBody* body = w.add(shape, 1, btVector3(0, 0, floor - bottom + 0.002f));
    for (btRigidBody* b : {ground, under, body}) {
        b->setFriction(0.05f);
        b->setRollingFriction(rolling);
        b->setSpinningFriction(rolling);
    }
    for (int i = 0; i < 60; ++i) w.step();
    btVector3 spin(0, 0, 0);
    spin[axis] = 3;
    body->setAngularVelocity(spin);
    btScalar height = body->getWorldTransform().getOrigin().z() - floor;
    body->setLinearVelocity(axis == 0 ? btVector3(0, -3 * height, 0) : btVector3(0, 0, 0));
    int i = 0;
    for (; i < 1200 && std::fabs(body->getAngularVelocity()[axis]) > 0.3f; ++i) w.step();
    return i;
}

// rtcd gives a manifold's rolling and spinning friction to one point, with
// the friction of all (plugin_writeback.cpp); Bullet's own algorithms give
// every point its rows. The same bodies, set turning on the same ground,
// stop within an eighth of GImpact's time: a box on its four corners (on
// the plane, and on a fixed box mesh: mesh-plane and mesh-mesh pairs) and a
// blob spinning and rolling. Without rolling friction each turns longer.
static void test_torsional_friction_like_bullet()
{
    Blob blob(31);
    BoxMesh box(0.4f, 0.3f, 0.2f), slab(2.0f, 2.0f, 0.25f);
    struct Case {
        const char* what;
        btCollisionShape* shape;
        float bottom;
        btCollisionShape* base;
        int axis;
    } cases[] = {{"box spinning on the plane", box.shape.get(), -0.2f, nullptr, 2},
                 {"box spinning on a box mesh", box.shape.get(), -0.2f, slab.shape.get(), 2},
                 {"blob spinning on the plane", blob.shape.get(), blob.lo[2], nullptr, 2},
                 {"blob rolling on the plane", blob.shape.get(), blob.lo[2], nullptr, 0}};
    for (const Case& c : cases) {
        int r = steps_to_stop(true, c.shape, c.bottom, c.base, c.axis, 0.5f);
        int g = steps_to_stop(false, c.shape, c.bottom, c.base, c.axis, 0.5f);
        int r0 = steps_to_stop(true, c.shape, c.bottom, c.base, c.axis, 0.0f);
        std::printf("%s: stops after %d steps with rtcd, %d with GImpact (%d without rolling friction)\n", c.what, r, g,
                    r0);
        CHECK(g > 0 && g < 1200);
        CHECK(std::abs(r - g) <= g / 8);
        CHECK(r0 > r);
    }
}

// A pair cache of the program's own kind (here: one that counts its walks).
struct CountingPairCache : btHashedOverlappingPairCache {
    int walks = 0;
    void processAllOverlappingPairs(btOverlapCallback* callback, btDispatcher* dispatcher,
                                    const btDispatcherInfo& info) override
    {
        walks++;
        btHashedOverlappingPairCache::processAllOverlappingPairs(callback, dispatcher, info);
    }
};

// Three blobs dropped onto each other and the plane (they knock each other
// aside and come to rest apart), in a world on Bullet's own pair cache or on
// a program's (CountingPairCache).
struct PileWorld : World {
    Blob a{41}, b{42}, c{43};
    explicit PileWorld(btOverlappingPairCache* pair_cache) : World(true, pair_cache)
    {
        add(a.shape.get(), 1, btVector3(0, 0, 0.6f));
        add(b.shape.get(), 1, btVector3(0.3f, 0.1f, 1.5f));
        add(c.shape.get(), 1, btVector3(-0.2f, 0.2f, 2.4f));
    }
    ~PileWorld() { clear(); } // the bodies out before the blobs go
};

// With Bullet's near callback, rtcd writes its pairs before Bullet's
// dispatch, and when every pair of Bullet's own pair cache is done it does
// not walk the cache again (each pair's near callback would return at
// once). The pile comes out the same bits as in a world whose cache is of
// the program's own kind, which rtcd walks as always (every step).
static void test_done_pairs_not_walked_again()
{
    // The broadphase does not free a cache it was given: this one outlives both worlds.
    std::unique_ptr<CountingPairCache> counting(new CountingPairCache);
    PileWorld own(nullptr), walked(counting.get());
    int steps = 240, apart = 0;
    for (int i = 0; i < steps; ++i) {
        own.step();
        walked.step();
        for (size_t k = 0; k < own.bodies.size(); ++k) {
            const btTransform& p = own.bodies[k]->getWorldTransform();
            const btTransform& q = walked.bodies[k]->getWorldTransform();
            apart += std::memcmp(&p, &q, sizeof p) != 0;
        }
    }
    int points = 0;
    for (int i = 0; i < own.rtcd->getNumManifolds(); ++i)
        points += own.rtcd->getManifoldByIndexInternal(i)->getNumContacts();
    for (size_t k = 1; k < own.bodies.size(); ++k) {
        const btVector3& o = own.bodies[k]->getWorldTransform().getOrigin();
        std::printf("blob %zu at (%.3f, %.3f, %.3f)\n", k, o.x(), o.y(), o.z());
    }
    std::printf("after %d steps: %d manifolds, %d points; poses apart in %d body steps; the program's cache walked %d "
                "times\n", steps, own.rtcd->getNumManifolds(), points, apart, counting->walks);
    CHECK(own.rtcd->getNumManifolds() >= 3 && points >= 3); // each blob rests on the plane
    CHECK(own.rtcd->getNumManifolds() == walked.rtcd->getNumManifolds());
    CHECK(apart == 0);
    CHECK(counting->walks >= steps);
    CHECK(own.bodies[3]->getWorldTransform().getOrigin().z() < 2.0f); // the top blob came down
}

int main()
{
    return rtcd_run_tests({test_no_contact_no_manifold, test_no_contact_no_manifold_own_callback,
                           test_contact_again_keeps_state, test_torsional_friction_like_bullet,
                           test_done_pairs_not_walked_again});
}
