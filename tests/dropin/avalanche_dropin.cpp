// Benchmark: a plain GImpact avalanche (side x side x side dimpled balls,
// btGImpactMeshShape, dropped onto a plane) run twice in one process, with
// Bullet's btCollisionDispatcher and with rtcdCollisionDispatcher, the
// drop-in's two-line change. Prints one JSON object: per run the manifolds
// in the dispatcher at the sampled step and on average, contacts, the step,
// the dispatch (narrow phase) and the rest of the step (broadphase, islands,
// solver), medians over the steps, and rtcd over GImpact.
//   avalanche_dropin [--side N] [--steps N] [--sample N] [--threads N]
#include <btBulletDynamicsCommon.h>
#include <rtcd/rtcd_bullet.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using Clock = std::chrono::steady_clock;

// The drop-in's dimpled ball (rtcd_bullet_dropin.cpp): 290 vertices, 576 triangles.
static void make_mesh(std::vector<float>& v, std::vector<int>& idx)
{
    const int rings = 12, segments = 24;
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
    const int south = 1 + rings * segments, last = 1 + (rings - 1) * segments;
    for (int s = 0; s < segments; ++s) {
        int n = (s + 1) % segments;
        idx.insert(idx.end(), {0, 1 + s, 1 + n});
        idx.insert(idx.end(), {south, last + n, last + s});
    }
    for (int i = 0; i + 1 < rings; ++i)
        for (int s = 0; s < segments; ++s) {
            int a = 1 + i * segments + s, b = 1 + i * segments + (s + 1) % segments;
            idx.insert(idx.end(), {a, a + segments, b + segments, a, b + segments, b});
        }
}

// The dispatcher, timed: what Bullet's step spends in the narrow phase.
template <class Base> struct Timed : Base {
    template <class... A> explicit Timed(A... a) : Base(a...) {}
    void dispatchAllCollisionPairs(btOverlappingPairCache* c, const btDispatcherInfo& i, btDispatcher* d) override
    {
        auto t = Clock::now();
        Base::dispatchAllCollisionPairs(c, i, d);
        ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    }
    double ms = 0;
};

struct Run {
    int manifolds_sampled = 0, contacts_sampled = 0;
    double manifolds_mean = 0, contacts_mean = 0;
    double step_median = 0, dispatch_median = 0, rest_median = 0, rest_mean = 0;
    float lowest = 0;
};

static double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <class D> static Run run(int side, int steps, int sample, uint32_t threads)
{
    std::vector<float> vertices;
    std::vector<int> indices;
    make_mesh(vertices, indices);
    btDefaultCollisionConfiguration config;
    D* dispatcher;
    if constexpr (std::is_same<D, Timed<rtcdCollisionDispatcher>>::value) {
        rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
        def.backend = RTCD_BACKEND_CPU;
        def.threads = threads;
        dispatcher = new D(&config, &def);
    } else {
        dispatcher = new D(&config);
    }
    btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, 0, -9.81f));
    btStaticPlaneShape ground_shape(btVector3(0, 0, 1), 0);
    btRigidBody ground(0, nullptr, &ground_shape);
    world.addRigidBody(&ground);
    btTriangleIndexVertexArray mesh(static_cast<int>(indices.size() / 3), indices.data(), 3 * sizeof(int),
                                    static_cast<int>(vertices.size() / 3), vertices.data(), 3 * sizeof(float));
    btGImpactMeshShape shape(&mesh);
    shape.updateBound();
    btVector3 inertia;
    shape.calculateLocalInertia(1, inertia);
    std::vector<btRigidBody*> bodies;
    std::vector<btDefaultMotionState*> motions;
    for (int i = 0; i < side * side * side; ++i) {
        int x = i % side, y = (i / side) % side, z = i / (side * side);
        btTransform pose(btQuaternion(btVector3(1, 1 + 0.1f * x, 0.5f * y).normalized(), 0.37f * i),
                         btVector3(1.1f * (x - 0.5f * side) + 0.05f * (z % 2), 1.1f * (y - 0.5f * side), 0.7f + 1.1f * z));
        motions.push_back(new btDefaultMotionState(pose));
        btRigidBody::btRigidBodyConstructionInfo info(1, motions.back(), &shape, inertia);
        info.m_friction = 0.6f;
        info.m_rollingFriction = 0.05f;
        info.m_spinningFriction = 0.05f;
        bodies.push_back(new btRigidBody(info));
        world.addRigidBody(bodies.back());
    }
    Run r;
    std::vector<double> step_ms, dispatch_ms, rest_ms;
    for (int s = 0; s < steps; ++s) {
        auto t = Clock::now();
        world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
        step_ms.push_back(ms);
        dispatch_ms.push_back(dispatcher->ms);
        rest_ms.push_back(ms - dispatcher->ms);
        int contacts = 0, manifolds = dispatcher->getNumManifolds();
        for (int i = 0; i < manifolds; ++i) contacts += dispatcher->getManifoldByIndexInternal(i)->getNumContacts();
        r.manifolds_mean += manifolds / double(steps);
        r.contacts_mean += contacts / double(steps);
        r.rest_mean += (ms - dispatcher->ms) / steps;
        if (s + 1 == sample) {
            r.manifolds_sampled = manifolds;
            r.contacts_sampled = contacts;
        }
    }
    r.step_median = median(step_ms);
    r.dispatch_median = median(dispatch_ms);
    r.rest_median = median(rest_ms);
    r.lowest = 1e9f;
    for (btRigidBody* b : bodies) r.lowest = std::min(r.lowest, static_cast<float>(b->getCenterOfMassPosition().z()));
    for (btRigidBody* b : bodies) {
        world.removeRigidBody(b);
        delete b;
    }
    for (btDefaultMotionState* m : motions) delete m;
    world.removeRigidBody(&ground);
    delete dispatcher;
    return r;
}

static void print(const char* name, const Run& r)
{
    std::printf("\"%s\":{\"manifolds_at_sample\":%d,\"contacts_at_sample\":%d,\"manifolds_mean\":%.1f,\"contacts_mean\":%.1f,"
                "\"step_ms_median\":%.3f,\"dispatch_ms_median\":%.3f,\"step_minus_dispatch_ms_median\":%.3f,"
                "\"step_minus_dispatch_ms_mean\":%.3f,\"lowest_z\":%.3f}",
                name, r.manifolds_sampled, r.contacts_sampled, r.manifolds_mean, r.contacts_mean, r.step_median,
                r.dispatch_median, r.rest_median, r.rest_mean, r.lowest);
}

int main(int argc, char** argv)
{
    int side = 8, steps = 180, sample = 180;
    uint32_t threads = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--side") && v > 0 && v <= 32) side = v;
        else if (!std::strcmp(argv[i], "--steps") && v > 0) steps = v;
        else if (!std::strcmp(argv[i], "--sample") && v > 0) sample = v;
        else if (!std::strcmp(argv[i], "--threads") && v >= 0) threads = static_cast<uint32_t>(v);
        else {
            std::fprintf(stderr, "usage: %s [--side N (1..32)] [--steps N] [--sample N] [--threads N]\n", argv[0]);
            return 2;
        }
    }
    if (sample > steps) sample = steps;
    Run rtcd = run<Timed<rtcdCollisionDispatcher>>(side, steps, sample, threads);
    Run gimpact = run<Timed<btCollisionDispatcher>>(side, steps, sample, threads);
    std::printf("{\"benchmark\":\"avalanche_dropin\",\"bodies\":%d,\"steps\":%d,\"sample_step\":%d,\"threads\":%u,",
                side * side * side, steps, sample, threads);
    print("rtcd", rtcd);
    std::printf(",");
    print("gimpact", gimpact);
    std::printf(",\"manifolds_ratio_at_sample\":%.3f,\"manifolds_mean_ratio\":%.3f,\"step_minus_dispatch_median_ratio\":%.3f}\n",
                gimpact.manifolds_sampled ? double(rtcd.manifolds_sampled) / gimpact.manifolds_sampled : 0.0,
                gimpact.manifolds_mean > 0 ? rtcd.manifolds_mean / gimpact.manifolds_mean : 0.0,
                gimpact.rest_median > 0 ? rtcd.rest_median / gimpact.rest_median : 0.0);
    return 0;
}
