// bench_wrap_pile: a pile of bodies whose meshes the repair declines (issue
// 24, point 5), run twice in one process on the same soups: through rtcd's
// drop-in (rtcdCollisionDispatcher: each soup wrapped into its envelope) and
// through plain Bullet (GImpact on the soups as they are). Five models, 8
// bodies each: an open box (a 12-edge hole), a draped cloth (a sheet), a
// robot link (a tube without caps, two 16-edge holes), a floor tile (one
// quad), an open bowl (a hemisphere). Prints one JSON object: per world the
// step time (total and median), the deepest penetration any manifold point
// reached (after the settling of the first 30 steps), the bodies' final
// heights, NaN count, rtcd's owned pairs, and the ratios (whole run; after
// the first step, which holds the wraps; of the median steps).
//
//   bench_wrap_pile [--steps N]
#include <rtcd/rtcd_bullet.h>
#include <rtcd/rtcd_wrap.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bullet_world.hpp"

namespace {

struct Soup {
    const char* name;
    std::vector<float> v;
    std::vector<int> i;
    void quad(const float a[3], const float b[3], const float c[3], const float d[3])
    {
        int base = static_cast<int>(v.size() / 3);
        for (const float* p : {a, b, c, d}) v.insert(v.end(), p, p + 3);
        i.insert(i.end(), {base, base + 1, base + 2, base, base + 2, base + 3});
    }
};

// A grid of n x n quads over f(u, w), u and w in [0, 1].
template <class F> void grid(Soup& s, int n, F f)
{
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
            float p[4][3];
            f(float(a) / n, float(b) / n, p[0]);
            f(float(a + 1) / n, float(b) / n, p[1]);
            f(float(a + 1) / n, float(b + 1) / n, p[2]);
            f(float(a) / n, float(b + 1) / n, p[3]);
            s.quad(p[0], p[1], p[2], p[3]);
        }
}

std::vector<Soup> models()
{
    std::vector<Soup> m(5);
    const float L = 0.5f, pi = 3.14159265f;
    m[0].name = "open box";
    grid(m[0], 3, [&](float u, float w, float* p) { p[0] = w * L; p[1] = u * L; p[2] = 0; });
    grid(m[0], 3, [&](float u, float w, float* p) { p[0] = u * L; p[1] = 0; p[2] = w * L; });
    grid(m[0], 3, [&](float u, float w, float* p) { p[0] = L; p[1] = u * L; p[2] = w * L; });
    grid(m[0], 3, [&](float u, float w, float* p) { p[0] = L - u * L; p[1] = L; p[2] = w * L; });
    grid(m[0], 3, [&](float u, float w, float* p) { p[0] = 0; p[1] = L - u * L; p[2] = w * L; });
    m[1].name = "cloth";
    grid(m[1], 16, [&](float u, float w, float* p) {
        p[0] = u * 0.8f;
        p[1] = w * 0.8f;
        p[2] = 0.06f * std::sin(2 * pi * u) * std::sin(pi * w);
    });
    m[2].name = "robot link";
    grid(m[2], 16, [&](float u, float w, float* p) {
        p[0] = 0.12f * std::cos(2 * pi * u);
        p[1] = 0.12f * std::sin(2 * pi * u);
        p[2] = w * 0.6f;
    });
    m[3].name = "floor tile";
    {
        const float a[3] = {0, 0, 0}, b[3] = {0.5f, 0, 0}, c[3] = {0.5f, 0.5f, 0}, d[3] = {0, 0.5f, 0};
        m[3].quad(a, b, c, d);
    }
    m[4].name = "open bowl";
    grid(m[4], 12, [&](float u, float w, float* p) {
        float th = 2 * pi * u, ph = 0.5f * pi * (1 + w);
        p[0] = 0.3f * std::sin(ph) * std::cos(th);
        p[1] = 0.3f * std::sin(ph) * std::sin(th);
        p[2] = 0.3f * std::cos(ph);
    });
    return m;
}

struct Result {
    double total_ms = 0, first_ms = 0, median_ms = 0, max_penetration = 0, mean_z = 0, min_z = 1e30;
    unsigned nan = 0, owned_max = 0, wrapped = 0;
};

Result run(bool with_rtcd, std::vector<Soup>& soups, int steps)
{
    BulletWorld w(with_rtcd);
    btDiscreteDynamicsWorld& world = w.world;
    std::vector<std::unique_ptr<btTriangleIndexVertexArray>> arrays;
    std::vector<std::unique_ptr<btCollisionShape>> shapes;
    std::vector<std::unique_ptr<btRigidBody>>& bodies = w.bodies;
    shapes.emplace_back(new btStaticPlaneShape(btVector3(0, 0, 1), 0));
    w.addStatic(shapes.back().get());
    for (Soup& s : soups) {
        arrays.emplace_back(new btTriangleIndexVertexArray(static_cast<int>(s.i.size() / 3), s.i.data(), 3 * sizeof(int),
                                                           static_cast<int>(s.v.size() / 3), s.v.data(),
                                                           3 * sizeof(float)));
        btGImpactMeshShape* shape = new btGImpactMeshShape(arrays.back().get());
        shape->updateBound();
        shapes.emplace_back(shape);
    }
    // 8 of each model, in layers of 10 on a 1 m grid, a little turned.
    for (int k = 0; k < 40; ++k) {
        btTransform t(btQuaternion(btVector3(1, 1, 0).normalized(), 0.3f * k),
                      btVector3(float(k % 5) * 1.0f - 2.0f, float((k / 5) % 2) * 1.0f, 0.5f + 0.9f * float(k / 10)));
        w.add(shapes[1 + k % 5].get(), t, 1);
    }
    Result r;
    std::vector<double> ms;
    for (int s = 0; s < steps; ++s) {
        auto t0 = std::chrono::steady_clock::now();
        world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        if (with_rtcd)
            r.owned_max = std::max(r.owned_max, w.rtcd->lastStepStats().pairs_owned);
        if (s < 30) continue; // the drop itself
        for (int m = 0; m < w.dispatcher->getNumManifolds(); ++m) {
            const btPersistentManifold* pm = w.dispatcher->getManifoldByIndexInternal(m);
            for (int c = 0; c < pm->getNumContacts(); ++c)
                r.max_penetration = std::max(r.max_penetration, double(-pm->getContactPoint(c).getDistance()));
        }
    }
    for (size_t b = 1; b < bodies.size(); ++b) {
        btVector3 o = bodies[b]->getWorldTransform().getOrigin();
        if (!std::isfinite(o.x()) || !std::isfinite(o.y()) || !std::isfinite(o.z())) {
            ++r.nan;
            continue;
        }
        r.mean_z += o.z() / double(bodies.size() - 1);
        r.min_z = std::min(r.min_z, double(o.z()));
    }
    if (with_rtcd)
        for (size_t s = 1; s <= soups.size(); ++s)
            r.wrapped += w.rtcd->meshForShape(shapes[s].get()) != nullptr;
    for (double x : ms) r.total_ms += x;
    r.first_ms = ms[0]; // the wraps (rtcd) or GImpact's trees are built here
    std::sort(ms.begin(), ms.end());
    r.median_ms = ms[ms.size() / 2];
    w.clear(); // before the shapes go
    return r;
}

void print(const char* name, const Result& r, bool last)
{
    std::printf("\"%s\":{\"total_ms\":%.1f,\"first_step_ms\":%.1f,\"median_step_ms\":%.3f,\"max_penetration\":%.5f,\"mean_z\":%.4f,"
                "\"min_z\":%.4f,\"nan_bodies\":%u,\"pairs_owned_max\":%u,\"models_owned\":%u}%s",
                name, r.total_ms, r.first_ms, r.median_ms, r.max_penetration, r.mean_z, r.min_z, r.nan, r.owned_max, r.wrapped,
                last ? "" : ",");
}

} // namespace

int main(int argc, char** argv)
{
    int steps = 300;
    for (int a = 1; a < argc; ++a)
        if (!std::strcmp(argv[a], "--steps") && a + 1 < argc) steps = std::max(31, std::atoi(argv[++a]));
    std::vector<Soup> soups = models();
    if (!rtcd_wrap_available()) {
        std::printf("{\"wrap_available\":false}\n");
        return 0;
    }
    Result g = run(false, soups, steps);
    Result w = run(true, soups, steps);
    std::printf("{\"wrap_available\":true,\"bodies\":40,\"steps\":%d,", steps);
    print("gimpact", g, false);
    print("rtcd_wrapped", w, false);
    std::printf("\"step_speedup\":%.3f,\"step_speedup_after_first\":%.3f,\"median_step_speedup\":%.3f,"
                "\"penetration_ratio\":%.3f,\"rtcd_faster\":%s,\"penetration_no_worse\":%s,"
                "\"no_nan\":%s}\n",
                g.total_ms / w.total_ms, (g.total_ms - g.first_ms) / (w.total_ms - w.first_ms),
                g.median_ms / w.median_ms, g.max_penetration > 0 ? w.max_penetration / g.max_penetration : 0.0,
                w.total_ms < g.total_ms ? "true" : "false", w.max_penetration <= g.max_penetration ? "true" : "false",
                g.nan + w.nan == 0 ? "true" : "false");
    return 0;
}
