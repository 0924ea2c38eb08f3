// A plain Bullet program with btGImpactMeshShape bodies: eight concave
// "stars" (a sphere with six dents) fall on a plane and on each other.
// rtcd_bullet_dropin.cpp is this file with two lines changed.
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

// Closed, outward-wound, concave: a UV sphere pushed in around the six axes.
static void make_mesh(std::vector<float>& v, std::vector<int>& idx)
{
    const int rings = 12, segments = 24;
    const float pi = 3.14159265f;
    v.insert(v.end(), {0, 0, 0.5f});
    for (int r = 1; r <= rings; ++r) {
        float th = pi * r / (rings + 1);
        for (int s = 0; s < segments; ++s) {
            float ph = 2 * pi * s / segments;
            float x = std::sin(th) * std::cos(ph), y = std::sin(th) * std::sin(ph), z = std::cos(th);
            float dent = 1.0f - 0.25f * std::pow(std::max({std::fabs(x), std::fabs(y), std::fabs(z)}), 8.0f);
            v.insert(v.end(), {0.5f * dent * x, 0.5f * dent * y, 0.5f * dent * z});
        }
    }
    v.insert(v.end(), {0, 0, -0.5f * 0.75f});
    v[2] *= 0.75f; // the poles are dented too
    const int south = 1 + rings * segments;
    for (int s = 0; s < segments; ++s) {
        int a = 1 + s, b = 1 + (s + 1) % segments;
        idx.insert(idx.end(), {0, a, b});
        int c = 1 + (rings - 1) * segments + s, d = 1 + (rings - 1) * segments + (s + 1) % segments;
        idx.insert(idx.end(), {south, d, c});
    }
    for (int r = 0; r + 1 < rings; ++r)
        for (int s = 0; s < segments; ++s) {
            int a = 1 + r * segments + s, b = 1 + r * segments + (s + 1) % segments;
            int c = a + segments, d = b + segments;
            idx.insert(idx.end(), {a, c, d, a, d, b});
        }
}

int main()
{
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher* dispatcher = new btCollisionDispatcher(&config);
    btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, 0, -9.81f));

    btStaticPlaneShape ground_shape(btVector3(0, 0, 1), 0);
    btRigidBody ground(0, nullptr, &ground_shape);
    world.addRigidBody(&ground);

    std::vector<float> vertices;
    std::vector<int> indices;
    make_mesh(vertices, indices);
    btTriangleIndexVertexArray mesh(static_cast<int>(indices.size() / 3), indices.data(), 3 * sizeof(int),
                                    static_cast<int>(vertices.size() / 3), vertices.data(), 3 * sizeof(float));
    btGImpactMeshShape shape(&mesh);
    shape.updateBound();
    btVector3 inertia;
    shape.calculateLocalInertia(1, inertia);
    std::vector<btDefaultMotionState*> motions;
    std::vector<btRigidBody*> bodies;
    for (int i = 0; i < 8; ++i) {
        btTransform t(btQuaternion(btVector3(1, 1, 0).normalized(), 0.3f * i), btVector3(0.2f * (i % 2), 0.1f * (i % 3), 0.6f + 0.9f * i));
        motions.push_back(new btDefaultMotionState(t));
        bodies.push_back(new btRigidBody(1, motions.back(), &shape, inertia));
        world.addRigidBody(bodies.back());
    }

    unsigned owned = 0;
    for (int step = 0; step < 180; ++step) {
        world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
#ifdef RTCD_BULLET_H // only when rtcd's header is included: its statistics
        owned = std::max(owned, static_cast<rtcdCollisionDispatcher*>(dispatcher)->lastStepStats().pairs_owned);
#endif
    }
    float lowest = 1e9f, highest = -1e9f;
    for (btRigidBody* b : bodies) {
        lowest = std::min(lowest, static_cast<float>(b->getWorldTransform().getOrigin().z()));
        highest = std::max(highest, static_cast<float>(b->getWorldTransform().getOrigin().z()));
    }
    std::printf("lowest body at z %.3f, highest at z %.3f\n", lowest, highest);
    std::printf("rtcd pairs owned: %u\n", owned);
    for (btRigidBody* b : bodies) {
        world.removeRigidBody(b);
        delete b;
    }
    for (btDefaultMotionState* m : motions) delete m;
    world.removeRigidBody(&ground);
    delete dispatcher;
    return lowest > 0.1f ? 0 : 1; // nothing fell through the ground
}
