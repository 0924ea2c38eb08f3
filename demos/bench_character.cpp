// bench_character: a btKinematicCharacterController walking over a GImpact
// terrain among GImpact bodies (issue 28, acceptance 2). The controller
// queries its btPairCachingGhostObject's pair cache up to five times a step
// (recoverFromPenetration); through rtcd those queries run in a batch of
// their own (query scopes), so the world's batch keeps its pairs' kept rays.
//
// Five worlds from the same scene, stepped in turn in one process (each
// phase's in a rotating order) so they share the machine's noise: rtcd without the character, with it, and with
// its ghost walked along the same lane by the program (no controller, so
// no queries: the character's own pairs in the world's batch without its
// queries); Bullet's GImpact without and with the character. Per world the medians over the measured
// steps (after the settling ones) of: rtcd's batch (lastStepStats().batch_ms,
// the world's step only), the step's wall time, and less the controller's
// updateAction (its queries and sweeps, timed apart), and rtcd's standard
// and iterative pair-steps. The target: rtcd's batch median with the character
// at most 1.2 x without it.
//
// Output: one JSON object on stdout.
//
//   bench_character [--bodies N] [--settle N] [--steps N] [--threads N] [--no-gimpact] [--quick]
//
// --threads: the CPU reference's threads for the step's batch (0, the
// default: every core, as the drop-in's default def).
#include <rtcd/rtcd_bullet.h>
#include <rtcd/rtcd_generate.h>

#include <BulletCollision/CollisionDispatch/btGhostObject.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletDynamics/Character/btKinematicCharacterController.h>
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

#include "gimpact_mesh.hpp"

namespace {

const double k_target = 1.2; // rtcd batch median with the character / without

double now_ms()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

float terrain_height(float x, float y) { return 0.3f * std::sin(0.3f * x) * std::cos(0.25f * y); }

using Mesh = GImpactMesh;

// The controller, its updateAction timed.
struct TimedController : btKinematicCharacterController {
    double ms = 0.0;
    TimedController(btPairCachingGhostObject* g, btConvexShape* s, btScalar step_height, const btVector3& up)
        : btKinematicCharacterController(g, s, step_height, up)
    {
    }
    void updateAction(btCollisionWorld* world, btScalar dt) override
    {
        double t = now_ms();
        btKinematicCharacterController::updateAction(world, dt);
        ms += now_ms() - t;
    }
};

struct World {
    bool rtcd, character;
    bool scripted; // the ghost walked by the program, no controller: the character's own pairs without its queries
    btVector3 walk;
    btDefaultCollisionConfiguration config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    btDbvtBroadphase broadphase;
    btGhostPairCallback ghost_callback;
    btSequentialImpulseConstraintSolver solver;
    std::unique_ptr<btDiscreteDynamicsWorld> world;
    std::vector<std::unique_ptr<btRigidBody>> bodies;
    std::unique_ptr<btPairCachingGhostObject> ghost;
    std::unique_ptr<btCapsuleShapeZ> capsule;
    std::unique_ptr<TimedController> controller;
    // per measured step
    std::vector<double> batch_ms, step_ms, controller_ms, query_batch_ms, rest_ms; // rest: the step less the controller
    uint64_t standard = 0, iterative = 0, culled = 0, query_pairs = 0;

    World(bool use_rtcd, bool with_character, bool script, std::vector<Mesh>& terrain, Mesh& blob, int count,
          uint32_t threads)
        : rtcd(use_rtcd), character(with_character || script), scripted(script)
    {
        rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
        def.threads = threads;
        dispatcher.reset(use_rtcd ? new rtcdCollisionDispatcher(&config, &def) : new btCollisionDispatcher(&config));
        btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher.get());
        broadphase.getOverlappingPairCache()->setInternalGhostPairCallback(&ghost_callback);
        world.reset(new btDiscreteDynamicsWorld(dispatcher.get(), &broadphase, &solver, &config));
        world->setGravity(btVector3(0, 0, -9.81f));
        for (Mesh& tile : terrain) {
            btRigidBody::btRigidBodyConstructionInfo ground(0, nullptr, tile.shape.get());
            bodies.emplace_back(new btRigidBody(ground));
            world->addRigidBody(bodies.back().get());
        }
        btVector3 inertia;
        blob.shape->calculateLocalInertia(1.0f, inertia);
        // A grid of 20 columns, 1.6 m apart, leaving a lane along y = 0.
        for (int k = 0; k < count; ++k) {
            int col = k % 20, row = k / 20;
            float x = -15.2f + 1.6f * static_cast<float>(col);
            float y = (row % 2 ? 1.0f : -1.0f) * (1.4f + 1.6f * static_cast<float>(row / 2));
            btQuaternion turn(btVector3(0.3f, 1.0f, 0.2f).normalized(), 0.7f * static_cast<float>(k));
            btRigidBody::btRigidBodyConstructionInfo info(1.0f, nullptr, blob.shape.get(), inertia);
            info.m_startWorldTransform = btTransform(turn, btVector3(x, y, terrain_height(x, y) + 0.55f));
            bodies.emplace_back(new btRigidBody(info));
            // Awake throughout: every pair runs every step in both worlds
            // (asleep, the world without the character would have none).
            bodies.back()->setActivationState(DISABLE_DEACTIVATION);
            // Rolling friction and damping, as games set them: lumpy bodies
            // come to rest on the slopes instead of rolling downhill.
            bodies.back()->setRollingFriction(0.05f);
            bodies.back()->setSpinningFriction(0.05f);
            bodies.back()->setDamping(0.05f, 0.3f);
            world->addRigidBody(bodies.back().get());
        }
        if (!character) return;
        capsule.reset(new btCapsuleShapeZ(0.35f, 1.0f));
        ghost.reset(new btPairCachingGhostObject());
        walk = btVector3(-16.0f, 0.3f, terrain_height(-16.0f, 0.3f) + 0.9f);
        ghost->setWorldTransform(btTransform(btQuaternion::getIdentity(), walk));
        ghost->setCollisionShape(capsule.get());
        ghost->setCollisionFlags(btCollisionObject::CF_CHARACTER_OBJECT);
        world->addCollisionObject(ghost.get(), btBroadphaseProxy::CharacterFilter,
                                  btBroadphaseProxy::StaticFilter | btBroadphaseProxy::DefaultFilter);
        if (scripted) return;
        controller.reset(new TimedController(ghost.get(), capsule.get(), 0.35f, btVector3(0, 0, 1)));
        controller->setGravity(btVector3(0, 0, -9.81f * 3));
        world->addAction(controller.get());
    }
    ~World()
    {
        if (controller) world->removeAction(controller.get());
        if (ghost) world->removeCollisionObject(ghost.get());
        for (auto& b : bodies) world->removeRigidBody(b.get());
    }
    void step(int s, bool measure)
    {
        if (character) {
            // Walks along the lane and back, 3 m/s, weaving into the rows.
            float phase = static_cast<float>(s) / 60.0f;
            float dir = std::fmod(phase, 20.0f) < 10.0f ? 1.0f : -1.0f;
            btVector3 d(0.05f * dir, 0.03f * std::sin(phase * 1.3f), 0);
            if (controller) {
                controller->setWalkDirection(d);
                controller->ms = 0.0;
            } else { // the same walk, through whatever is in the way, standing on the hills
                walk += d;
                walk.setZ(terrain_height(walk.x(), walk.y()) + 0.86f);
                ghost->setWorldTransform(btTransform(btQuaternion::getIdentity(), walk));
            }
        }
        double t = now_ms();
        world->stepSimulation(1.0f / 60.0f, 0);
        double wall = now_ms() - t;
        if (!measure) return;
        step_ms.push_back(wall);
        rest_ms.push_back(wall - (controller ? controller->ms : 0.0));
        if (controller) controller_ms.push_back(controller->ms);
        if (rtcd) {
            rtcdCollisionDispatcher* d = static_cast<rtcdCollisionDispatcher*>(dispatcher.get());
            rtcd_step_stats st = d->lastStepStats();
            batch_ms.push_back(st.batch_ms);
            standard += st.standard_pairs;
            iterative += st.iterative_pairs;
            culled += st.pairs_culled;
#ifndef RTCD_BENCH_BEFORE_SCOPES // a build against a library from before lastQueryStats (baselines)
            if (controller) {
                rtcd_step_stats q = d->lastQueryStats();
                query_batch_ms.push_back(q.batch_ms);
                query_pairs += q.pairs_owned;
            }
#endif
        }
    }
    void json(FILE* f, int measured) const
    {
        std::fprintf(f, "{\"narrowphase\":\"%s\",\"character\":\"%s\",\"step_ms_median\":%.4f",
                     rtcd ? "rtcd" : "gimpact", !character ? "none" : scripted ? "ghost_walked_by_program" : "controller",
                     median(step_ms));
        std::fprintf(f, ",\"step_less_controller_ms_median\":%.4f", median(rest_ms));
        if (rtcd)
            std::fprintf(f,
                         ",\"batch_ms_median\":%.4f,\"standard_pairs_per_step\":%.2f,\"iterative_pairs_per_step\":%.2f,"
                         "\"culled_pairs_per_step\":%.2f",
                         median(batch_ms), static_cast<double>(standard) / measured,
                         static_cast<double>(iterative) / measured, static_cast<double>(culled) / measured);
        if (controller) {
            // Its sweeps cost milliseconds in some steps and little in others: the mean too.
            double sum = 0.0;
            for (double v : controller_ms) sum += v;
            std::fprintf(f, ",\"controller_ms_median\":%.4f,\"controller_ms_mean\":%.4f", median(controller_ms),
                         controller_ms.empty() ? 0.0 : sum / static_cast<double>(controller_ms.size()));
        }
        if (rtcd && controller)
            std::fprintf(f, ",\"last_query_batch_ms_median\":%.4f,\"last_query_pairs_per_step\":%.2f",
                         median(query_batch_ms), static_cast<double>(query_pairs) / measured);
        if (character) {
            btVector3 p = ghost->getWorldTransform().getOrigin();
            std::fprintf(f, ",\"character_end\":[%.3f,%.3f,%.3f]", p.x(), p.y(), p.z());
        }
        std::fprintf(f, "}");
    }
};

} // namespace

int main(int argc, char** argv)
{
    int bodies = 200, settle = 120, steps = 240, threads = 0;
    bool gimpact = true;
    for (int a = 1; a < argc; ++a) {
        std::string o = argv[a];
        auto next = [&](int& out) {
            if (a + 1 >= argc) {
                std::fprintf(stderr, "bench_character: %s needs a value\n", o.c_str());
                std::exit(2);
            }
            out = std::atoi(argv[++a]);
        };
        if (o == "--bodies") next(bodies);
        else if (o == "--settle") next(settle);
        else if (o == "--steps") next(steps);
        else if (o == "--threads") next(threads);
        else if (o == "--no-gimpact") gimpact = false;
        else if (o == "--quick") {
            bodies = 20;
            settle = 5;
            steps = 10;
        } else {
            std::fprintf(stderr, "usage: bench_character [--bodies N] [--settle N] [--steps N] [--threads N] [--no-gimpact] "
                                 "[--quick]\n");
            return 2;
        }
    }
    if (bodies < 0 || bodies > 2000 || settle < 0 || steps < 1 || threads < 0 || threads > 256) {
        std::fprintf(stderr, "bench_character: --bodies 0..2000, --settle >= 0, --steps >= 1, --threads 0..256\n");
        return 2;
    }
    // The terrain: 10 x 10 closed GImpact tiles of 4 x 4 m, their tops
    // 8 x 8 cells raised to gentle hills. Tiles, not one 40 m mesh: rtcd
    // bounds a pair's motion by each mesh's reach (rtcd_relative_displacement),
    // so on one wide mesh every slightly turning body would run a standard
    // pass each step; 0.4 m blobs.
    std::vector<Mesh> terrain(100);
    Mesh blob;
    rtcd_generated_mesh g;
    const float half[3] = {2.0f, 2.0f, 0.5f};
    for (int t = 0; t < 100; ++t) {
        float cx = -18.0f + 4.0f * static_cast<float>(t % 10), cy = -18.0f + 4.0f * static_cast<float>(t / 10);
        if (rtcd_generate_box(half, 8, &g) != RTCD_OK) return 1;
        Mesh& m = terrain[static_cast<size_t>(t)];
        m.copy(g);
        rtcd_generated_free(&g);
        for (size_t k = 0; k < m.vertices.size(); k += 3) {
            m.vertices[k] += cx;
            m.vertices[k + 1] += cy;
            float& z = m.vertices[k + 2];
            z = z > 0.0f ? terrain_height(m.vertices[k], m.vertices[k + 1]) : -1.0f; // top at the hills, bottom at -1 m
        }
        m.finish();
    }
    if (rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.4f, 3, &g) != RTCD_OK) return 1;
    blob.take(g);
    rtcd_generated_free(&g);

    std::vector<std::unique_ptr<World>> worlds;
    worlds.emplace_back(new World(true, false, false, terrain, blob, bodies, static_cast<uint32_t>(threads)));
    worlds.emplace_back(new World(true, true, false, terrain, blob, bodies, static_cast<uint32_t>(threads)));
    worlds.emplace_back(new World(true, false, true, terrain, blob, bodies, static_cast<uint32_t>(threads)));
    if (gimpact) {
        worlds.emplace_back(new World(false, false, false, terrain, blob, bodies, static_cast<uint32_t>(threads)));
        worlds.emplace_back(new World(false, true, false, terrain, blob, bodies, static_cast<uint32_t>(threads)));
    }
    // rtcd's three worlds first, then GImpact's two (whose steps, ten
    // times longer, would flush the caches between rtcd's): each phase's
    // worlds in turn, the order rotating every step, so that each world
    // meets the machine's noise in every position.
    for (size_t first = 0, end = 3; first < worlds.size(); first = end, end = worlds.size()) {
        size_t n = end - first;
        for (int s = 0; s < settle + steps; ++s)
            for (size_t k = 0; k < n; ++k) worlds[first + (k + static_cast<size_t>(s)) % n]->step(s, s >= settle);
    }
    double without = median(worlds[0]->batch_ms), with = median(worlds[1]->batch_ms),
           ghost = median(worlds[2]->batch_ms);
    double ratio = without > 0 ? with / without : 0.0, ghost_ratio = ghost > 0 ? with / ghost : 0.0;
    std::printf("{\"bench\":\"character\",\"bodies\":%d,\"settle_steps\":%d,\"steps\":%d,\"threads\":%d,\"worlds\":[",
                bodies, settle, steps, threads);
    for (size_t k = 0; k < worlds.size(); ++k) {
        if (k) std::printf(",");
        worlds[k]->json(stdout, steps);
    }
    std::printf("],\"rtcd_batch_ratio\":%.4f,\"rtcd_batch_ratio_vs_walked_ghost\":%.4f,\"target_ratio\":%.2f,"
                "\"target_met\":%s}\n",
                ratio, ghost_ratio, k_target, ratio <= k_target ? "true" : "false");
    return 0;
}
