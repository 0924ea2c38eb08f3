/* A Bullet dynamics world as the C++ tests and benchmarks build it by hand:
 * the default configuration, rtcd's dispatcher (the two-line drop-in) or
 * Bullet's own, GImpact's algorithm registered after it as GImpact programs
 * do, a dbvt broadphase and the sequential impulse solver. Rigid bodies made
 * by add() are owned here and taken out of the world before it goes; shapes
 * stay the caller's. Worlds of other kinds (multibody, soft body) build
 * their own. */
#ifndef RTCD_SCENES_BULLET_WORLD_HPP
#define RTCD_SCENES_BULLET_WORLD_HPP

#include <rtcd/rtcd_bullet.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <btBulletDynamicsCommon.h>

#include <memory>
#include <vector>

struct BulletWorld {
    btDefaultCollisionConfiguration config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    rtcdCollisionDispatcher* rtcd; // the dispatcher when it is rtcd's, else nullptr
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world;
    std::vector<std::unique_ptr<btMotionState>> motions;
    std::vector<std::unique_ptr<btRigidBody>> bodies;

    // def: rtcd's narrow phase settings (nullptr: its defaults); unused with Bullet's dispatcher.
    // pair_cache: the broadphase's (nullptr: its own); the caller's, which must outlive the world.
    explicit BulletWorld(bool use_rtcd, float gravity_z = -9.81f, const rtcd_narrowphase_def* def = nullptr,
                         btOverlappingPairCache* pair_cache = nullptr)
        : dispatcher(use_rtcd ? new rtcdCollisionDispatcher(&config, def) : new btCollisionDispatcher(&config)),
          rtcd(use_rtcd ? static_cast<rtcdCollisionDispatcher*>(dispatcher.get()) : nullptr),
          broadphase(pair_cache),
          world(dispatcher.get(), &broadphase, &solver, &config)
    {
        btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher.get());
        world.setGravity(btVector3(0, 0, gravity_z));
    }
    ~BulletWorld() { clear(); }
    BulletWorld(const BulletWorld&) = delete;
    BulletWorld& operator=(const BulletWorld&) = delete;

    // A rigid body of shape at a pose (mass 0: static), owned by the world.
    btRigidBody* add(btCollisionShape* shape, const btTransform& at, float mass)
    {
        btVector3 inertia(0, 0, 0);
        if (mass > 0) shape->calculateLocalInertia(mass, inertia);
        motions.emplace_back(new btDefaultMotionState(at));
        bodies.emplace_back(new btRigidBody(mass, motions.back().get(), shape, inertia));
        world.addRigidBody(bodies.back().get());
        return bodies.back().get();
    }
    // A static body without a motion state (a ground plane, a fixed mesh).
    btRigidBody* addStatic(btCollisionShape* shape)
    {
        bodies.emplace_back(new btRigidBody(0, nullptr, shape));
        world.addRigidBody(bodies.back().get());
        return bodies.back().get();
    }
    // Takes every body out and frees it: a derived world that owns shapes
    // calls this in its destructor, before its shapes go.
    void clear()
    {
        for (auto& b : bodies) world.removeRigidBody(b.get());
        bodies.clear();
        motions.clear();
    }
    // Takes body out of the world and frees it.
    void remove(btRigidBody* body)
    {
        world.removeRigidBody(body);
        for (size_t i = 0; i < bodies.size(); ++i)
            if (bodies[i].get() == body) bodies.erase(bodies.begin() + static_cast<std::ptrdiff_t>(i));
    }
};

#endif
