// A cloth (btSoftBodyHelpers::CreatePatch in a btSoftRigidDynamicsWorld with
// btSoftBodyRigidBodyCollisionConfiguration) dropped on a GImpact box,
// through Bullet alone and through rtcd's dispatcher. rtcd takes no soft
// body pair: the configuration's soft body-concave algorithm must stay in
// place, and the cloth land and stay as it does without rtcd.
#include <rtcd/rtcd_bullet.h>

#include <BulletCollision/CollisionDispatch/btEmptyCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <typeinfo>
#include <vector>

#include "test_check.hpp"

static const float k_half[3] = {1.0f, 1.0f, 0.25f}; // the box's half extents; its top at centre + 0.25

enum Setup {
    BULLET,          // btCollisionDispatcher, no GImpact registration (the configuration's algorithms)
    BULLET_GIMPACT,  // + btGImpactCollisionAlgorithm::registerAlgorithm: overwrites the soft body-concave entries
    BULLET_RESTORED, // + the soft body entries registered again afterwards (a program that knows)
    RTCD,            // rtcdCollisionDispatcher, nothing else
    RTCD_GIMPACT     // rtcdCollisionDispatcher + registerAlgorithm (the program's own call, as BULLET_GIMPACT)
};
static const char* const k_names[] = {"Bullet", "Bullet+GImpact", "Bullet+GImpact+soft entries", "rtcd",
                                      "rtcd+GImpact"};

struct Outcome {
    float lowest;   // the cloth's lowest node height after 3 s
    float mean;     // its nodes' mean height
    float box_top;  // the box's top face height then
};

// Held by the box: no node more than 10 cm into it (Bullet's soft-rigid
// contacts let a crumpled cloth's nodes sink a few centimetres), the cloth
// on average within 15 cm above its top. Fallen through, it is metres below.
static bool on_box(const Outcome& o)
{
    return o.lowest > o.box_top - 0.1f && o.mean > o.box_top && o.mean < o.box_top + 0.15f;
}

// The cloth falls 0.5 m onto the box (static, or dynamic on a ground plane).
static Outcome drop_cloth(Setup setup, bool dynamic_box)
{
    btSoftBodyRigidBodyCollisionConfiguration config;
    std::unique_ptr<btCollisionDispatcher> dispatcher(setup >= RTCD ? new rtcdCollisionDispatcher(&config)
                                                                     : new btCollisionDispatcher(&config));
    if (setup == BULLET_GIMPACT || setup == BULLET_RESTORED || setup == RTCD_GIMPACT)
        btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher.get());
    if (setup == BULLET_RESTORED)
        for (int k = 0; k < 2; ++k) {
            int t0 = k ? GIMPACT_SHAPE_PROXYTYPE : SOFTBODY_SHAPE_PROXYTYPE;
            int t1 = k ? SOFTBODY_SHAPE_PROXYTYPE : GIMPACT_SHAPE_PROXYTYPE;
            dispatcher->registerCollisionCreateFunc(t0, t1, config.getCollisionAlgorithmCreateFunc(t0, t1));
        }
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btSoftRigidDynamicsWorld world(dispatcher.get(), &broadphase, &solver, &config);
    world.setGravity(btVector3(0, 0, -9.81f));
    btSoftBodyWorldInfo& info = world.getWorldInfo();
    info.m_broadphase = &broadphase;
    info.m_dispatcher = dispatcher.get();
    info.m_gravity = world.getGravity();
    info.m_sparsesdf.Initialize();

    rtcd_generated_mesh g;
    rtcd_generate_box(k_half, 4, &g);
    std::vector<float> vertices(g.vertices, g.vertices + 3 * g.vertex_count);
    std::vector<int> indices(g.indices, g.indices + 3 * g.triangle_count);
    rtcd_generated_free(&g);
    btTriangleIndexVertexArray array(static_cast<int>(indices.size() / 3), indices.data(), 3 * sizeof(int),
                                     static_cast<int>(vertices.size() / 3), vertices.data(), 3 * sizeof(float));
    btGImpactMeshShape box_shape(&array);
    box_shape.updateBound();
    btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
    btRigidBody ground(0, nullptr, &plane);
    if (dynamic_box) world.addRigidBody(&ground);
    float mass = dynamic_box ? 5.0f : 0.0f;
    btVector3 inertia(0, 0, 0);
    if (dynamic_box) box_shape.calculateLocalInertia(mass, inertia);
    btDefaultMotionState motion(btTransform(btQuaternion::getIdentity(), btVector3(0, 0, k_half[2])));
    btRigidBody box(mass, &motion, &box_shape, inertia);
    world.addRigidBody(&box);

    const float h = 1.0f, s = 0.6f; // the cloth: 1.2 m square, well inside the box's 2 m top
    btSoftBody* cloth = btSoftBodyHelpers::CreatePatch(info, btVector3(-s, -s, h), btVector3(s, -s, h),
                                                        btVector3(-s, s, h), btVector3(s, s, h), 9, 9, 0, true);
    cloth->getCollisionShape()->setMargin(0.02f);
    cloth->setTotalMass(0.5f);
    world.addSoftBody(cloth);
    for (int i = 0; i < 180; ++i) world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
    Outcome out;
    out.lowest = 1e9f;
    out.mean = 0;
    for (int n = 0; n < cloth->m_nodes.size(); ++n) {
        out.lowest = std::min(out.lowest, static_cast<float>(cloth->m_nodes[n].m_x.z()));
        out.mean += static_cast<float>(cloth->m_nodes[n].m_x.z()) / static_cast<float>(cloth->m_nodes.size());
    }
    out.box_top = static_cast<float>(box.getWorldTransform().getOrigin().z()) + k_half[2];
    world.removeSoftBody(cloth);
    delete cloth;
    world.removeRigidBody(&box);
    if (dynamic_box) world.removeRigidBody(&ground);
    return out;
}

// On a static box: rtcd leaves the soft body-concave algorithm in place,
// and the cloth ends where it does without rtcd (the same algorithm on the
// same pairs: the same heights). GImpact's registerAlgorithm, called by the
// program, overwrites it with or without rtcd: the cloth falls through both
// ways (the program's own call; docs/dropin.md says what to do).
static void test_cloth_on_static_box()
{
    Outcome o[5];
    for (int k = 0; k < 5; ++k) {
        o[k] = drop_cloth(static_cast<Setup>(k), false);
        std::printf("static box, %-28s: cloth's nodes lowest %.5f, mean %.5f; box top %.3f\n", k_names[k], o[k].lowest,
                    o[k].mean, o[k].box_top);
    }
    CHECK(on_box(o[BULLET]));
    CHECK(on_box(o[RTCD]));
    // Nothing of rtcd's in the cloth's pairs: the same numbers.
    CHECK(o[RTCD].lowest == o[BULLET].lowest && o[RTCD].mean == o[BULLET].mean);
    CHECK(o[BULLET_RESTORED].lowest == o[BULLET].lowest);
    CHECK(o[BULLET_GIMPACT].lowest < 0); // fell through
    CHECK(o[RTCD_GIMPACT].lowest == o[BULLET_GIMPACT].lowest);
}

// On a dynamic box resting on a ground plane: without rtcd the program
// needs GImpact's algorithm for the box and the soft body entries back;
// with rtcd, nothing (the box-plane pair is rtcd's). The cloth stays on the
// box either way, its mean height above the box's top within a centimetre
// (the cloth crumples differently on a box that moves differently: its
// lowest node is no fair comparison there).
static void test_cloth_on_dynamic_box()
{
    Outcome bullet = drop_cloth(BULLET_RESTORED, true);
    Outcome rtcd = drop_cloth(RTCD, true);
    std::printf("dynamic box, Bullet+GImpact+soft entries: cloth's nodes lowest %.5f, mean %.5f; box top %.4f\n",
                bullet.lowest, bullet.mean, bullet.box_top);
    std::printf("dynamic box, rtcd: cloth's nodes lowest %.5f, mean %.5f; box top %.4f\n", rtcd.lowest, rtcd.mean,
                rtcd.box_top);
    // The box rests on the ground (GImpact's 1 cm margin shows), the cloth on the box.
    CHECK(bullet.box_top > 2 * k_half[2] - 0.02f && bullet.box_top < 2 * k_half[2] + 0.02f);
    CHECK(rtcd.box_top > 2 * k_half[2] - 0.02f && rtcd.box_top < 2 * k_half[2] + 0.02f);
    CHECK(on_box(bullet));
    CHECK(on_box(rtcd));
    CHECK(std::fabs((rtcd.mean - rtcd.box_top) - (bullet.mean - bullet.box_top)) < 0.01f);
}

// The dispatcher's contact table against its configuration, pairing by
// pairing: every pairing as the configuration set it, but GImpact pairings
// the configuration has no algorithm for (its empty one), which get
// GImpact's (for the pairs rtcd declines). rtcd's own pairs are chosen in
// findAlgorithm, before the table.
struct TablePeek : rtcdCollisionDispatcher {
    using rtcdCollisionDispatcher::rtcdCollisionDispatcher;
    btCollisionAlgorithmCreateFunc* contact(int a, int b) const { return m_doubleDispatchContactPoints[a][b]; }
    btCollisionAlgorithmCreateFunc* closest(int a, int b) const { return m_doubleDispatchClosestPoints[a][b]; }
};

static void test_pairings_left_to_the_configuration()
{
    btSoftBodyRigidBodyCollisionConfiguration config;
    TablePeek dispatcher(&config);
    int same = 0, gimpact = 0, wrong = 0;
    for (int a = 0; a < MAX_BROADPHASE_COLLISION_TYPES; ++a)
        for (int b = 0; b < MAX_BROADPHASE_COLLISION_TYPES; ++b) {
            btCollisionAlgorithmCreateFunc* want = config.getCollisionAlgorithmCreateFunc(a, b);
            btCollisionAlgorithmCreateFunc* got = dispatcher.contact(a, b);
            bool empty = typeid(*want) == typeid(btEmptyAlgorithm::CreateFunc);
            bool is_gimpact = typeid(*got) == typeid(btGImpactCollisionAlgorithm::CreateFunc);
            bool gimpact_pairing = a == GIMPACT_SHAPE_PROXYTYPE || b == GIMPACT_SHAPE_PROXYTYPE;
            if (got == want && !(gimpact_pairing && empty)) ++same;
            else if (gimpact_pairing && empty && is_gimpact) ++gimpact;
            else ++wrong;
            if (dispatcher.closest(a, b) != config.getClosestPointsAlgorithmCreateFunc(a, b)) ++wrong;
        }
    std::printf("contact table: %d pairings as configured, %d GImpact's (empty in the configuration), %d otherwise\n",
                same, gimpact, wrong);
    CHECK(wrong == 0);
    CHECK(gimpact >= 2 * 8 - 1); // GImpact against the concave types at least (both orders)
    CHECK(dispatcher.contact(SOFTBODY_SHAPE_PROXYTYPE, GIMPACT_SHAPE_PROXYTYPE) ==
          config.getCollisionAlgorithmCreateFunc(SOFTBODY_SHAPE_PROXYTYPE, GIMPACT_SHAPE_PROXYTYPE));
}

int main()
{
    return rtcd_run_tests({test_pairings_left_to_the_configuration, test_cloth_on_static_box, test_cloth_on_dynamic_box});
}
