// A plain Bullet program with btGImpactMeshShape bodies: eight concave
// "dimpled balls" (a UV sphere pushed in around its six axes) fall on a plane
// and on each other; after 5 s at 60 Hz it prints where they came to rest.
//
// Two files, one program: plain_bullet.cpp is the plain Bullet version,
// rtcd_bullet_dropin.cpp the same with two lines changed (the include of
// <rtcd/rtcd_bullet.h> and the dispatcher's class): the drop-in. The block
// under #ifdef RTCD_BULLET_H is in both and only compiles with rtcd's header;
// it reads rtcd's statistics so the tests can see that rtcd processed the pairs.
#include <btBulletDynamicsCommon.h>
#include <rtcd/rtcd_bullet.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

// Closed, outward-wound, concave, no degenerate triangle: a UV sphere of
// radius 0.5 with a dimple around each of the six axis directions
// (radius 0.375 at the dimple's centre).
static void make_mesh(std::vector<float>& v, std::vector<int>& idx)
{
    const int rings = 12, segments = 24; // 290 vertices, 576 triangles
    const float pi = 3.14159265f;
    auto push = [&v](float x, float y, float z) {
        float m = std::max({std::fabs(x), std::fabs(y), std::fabs(z)});
        float r = 0.5f * (1.0f - 0.25f * std::pow(m, 8.0f));
        v.insert(v.end(), {r * x, r * y, r * z});
    };
    push(0, 0, 1);
    for (int i = 1; i <= rings; ++i) {
        float th = pi * i / (rings + 1);
        for (int s = 0; s < segments; ++s) {
            float ph = 2 * pi * s / segments;
            push(std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th));
        }
    }
    push(0, 0, -1);
    const int south = 1 + rings * segments;
    const int last = 1 + (rings - 1) * segments;
    for (int s = 0; s < segments; ++s) {
        int n = (s + 1) % segments;
        idx.insert(idx.end(), {0, 1 + s, 1 + n});
        idx.insert(idx.end(), {south, last + n, last + s});
    }
    for (int i = 0; i + 1 < rings; ++i)
        for (int s = 0; s < segments; ++s) {
            int a = 1 + i * segments + s, b = 1 + i * segments + (s + 1) % segments;
            int c = a + segments, d = b + segments;
            idx.insert(idx.end(), {a, c, d, a, d, b});
        }
}

int main()
{
    btDefaultCollisionConfiguration* config = new btDefaultCollisionConfiguration();
    btCollisionDispatcher* dispatcher = new rtcdCollisionDispatcher(config);
    btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher);
    btBroadphaseInterface* broadphase = new btDbvtBroadphase();
    btSequentialImpulseConstraintSolver* solver = new btSequentialImpulseConstraintSolver();
    btDiscreteDynamicsWorld* world = new btDiscreteDynamicsWorld(dispatcher, broadphase, solver, config);
    world->setGravity(btVector3(0, 0, -9.81f));

    btCollisionShape* ground_shape = new btStaticPlaneShape(btVector3(0, 0, 1), 0);
    btRigidBody* ground = new btRigidBody(0, nullptr, ground_shape);
    world->addRigidBody(ground);

    std::vector<float> vertices;
    std::vector<int> indices;
    make_mesh(vertices, indices);
    btTriangleIndexVertexArray* mesh = new btTriangleIndexVertexArray(
        static_cast<int>(indices.size() / 3), indices.data(), 3 * sizeof(int),
        static_cast<int>(vertices.size() / 3), vertices.data(), 3 * sizeof(float));
    btGImpactMeshShape* shape = new btGImpactMeshShape(mesh);
    shape->updateBound();
    const btScalar mass = 1;
    btVector3 inertia(0, 0, 0);
    shape->calculateLocalInertia(mass, inertia);

    // Two layers of four: the upper layer lands on the lower one.
    std::vector<btRigidBody*> bodies;
    for (int i = 0; i < 8; ++i) {
        float x = (i % 2 ? 0.55f : -0.55f) + (i < 4 ? 0.0f : 0.3f);
        float y = (i % 4 < 2 ? 0.55f : -0.55f) + (i < 4 ? 0.0f : 0.2f);
        float z = i < 4 ? 0.7f : 2.2f;
        btTransform pose(btQuaternion(btVector3(1, 1, 0).normalized(), 0.4f * i), btVector3(x, y, z));
        btRigidBody::btRigidBodyConstructionInfo info(mass, new btDefaultMotionState(pose), shape, inertia);
        info.m_friction = 0.6f;
        info.m_rollingFriction = 0.05f; // round bodies otherwise roll on forever
        info.m_spinningFriction = 0.05f;
        bodies.push_back(new btRigidBody(info));
        world->addRigidBody(bodies.back());
    }

    unsigned long long pairs_owned = 0, rays_cast = 0, colliding_rays = 0;
    for (int step = 0; step < 300; ++step) {
        world->stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
#ifdef RTCD_BULLET_H // only with rtcd's header: its statistics of the step
        rtcd_step_stats stats = static_cast<rtcdCollisionDispatcher*>(dispatcher)->lastStepStats();
        pairs_owned += stats.pairs_owned;
        rays_cast += stats.rays_cast;
        colliding_rays += stats.colliding_rays;
#endif
    }

    float lowest = 1e9f, highest = -1e9f, fastest = 0;
    for (size_t i = 0; i < bodies.size(); ++i) {
        btVector3 p = bodies[i]->getCenterOfMassPosition();
        float speed = static_cast<float>(bodies[i]->getLinearVelocity().length());
        std::printf("body %zu at (%.3f, %.3f, %.3f), speed %.3f\n", i, p.x(), p.y(), p.z(), speed);
        lowest = std::min(lowest, static_cast<float>(p.z()));
        highest = std::max(highest, static_cast<float>(p.z()));
        fastest = std::max(fastest, std::isfinite(speed) ? speed : 1e9f);
    }
    std::printf("lowest body at z %.3f, highest at z %.3f, fastest %.3f m/s\n", lowest, highest, fastest);
    std::printf("rtcd pairs owned: %llu, rays cast: %llu, colliding rays: %llu\n", pairs_owned, rays_cast,
                colliding_rays);
    // Nothing sank into or fell through the ground, nothing flew off, all at rest.
    bool resting = lowest > 0.3f && highest < 2.5f && fastest < 0.5f;
    std::printf("%s\n", resting ? "bodies at rest above the ground" : "BODIES NOT AT REST ABOVE THE GROUND");

    for (btRigidBody* b : bodies) {
        world->removeRigidBody(b);
        delete b->getMotionState();
        delete b;
    }
    world->removeRigidBody(ground);
    delete ground;
    delete ground_shape;
    delete shape;
    delete mesh;
    delete world;
    delete solver;
    delete broadphase;
    delete dispatcher;
    delete config;
    return resting ? 0 : 1;
}
