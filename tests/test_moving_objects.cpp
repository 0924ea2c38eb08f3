// Objects that move without being dynamic btRigidBodies get velocities in
// rtcd, hence speculative contacts, motion bounds and back poses: multibody
// links (their multibody's joint velocities), kinematic rigid bodies (the
// velocity Bullet saves from their transforms) and plain collision objects
// moved by the program (their transforms over the last step). Each scene
// runs through GImpact (btCollisionDispatcher) for reference and rtcd.
#include <rtcd/rtcd_bullet.h>
#include <rtcd/rtcd_generate.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "bullet_world.hpp"
#include "gimpact_mesh.hpp"
#include "test_check.hpp"

struct MeshData : GImpactMesh {
    using GImpactMesh::GImpactMesh;
    // The lowest vertex's height at a pose: how deep the mesh is below a
    // flat ground whose top is z = 0 (the deepest point of a polyhedron in
    // a half-space is a vertex).
    float lowest(const btTransform& t) const
    {
        float low = 1e30f;
        for (size_t i = 0; i < vertices.size(); i += 3)
            low = std::min(low, static_cast<float>((t * btVector3(vertices[i], vertices[i + 1], vertices[i + 2])).z()));
        return low;
    }
};

static MeshData blob_mesh()
{
    rtcd_generated_mesh g;
    rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 7, &g);
    return MeshData(g);
}

static MeshData ground_mesh()
{
    rtcd_generated_mesh g;
    const float half[3] = {1.5f, 1.5f, 0.25f};
    rtcd_generate_box(half, 4, &g);
    return MeshData(g);
}

// Does the object have a manifold point farther than 1 mm apart (a
// speculative contact) with anything?
static bool speculative(btDispatcher* d, const btCollisionObject* o)
{
    for (int i = 0; i < d->getNumManifolds(); ++i) {
        btPersistentManifold* m = d->getManifoldByIndexInternal(i);
        if (m->getBody0() != o && m->getBody1() != o) continue;
        for (int k = 0; k < m->getNumContacts(); ++k)
            if (m->getContactPoint(k).getDistance() > 0.001f) return true;
    }
    return false;
}

struct Landing {
    float depth[2] = {0, 0};       // deepest below the ground over the run, per body
    bool early[2] = {false, false}; // a speculative contact while the body was still above the ground
    float rest[2] = {0, 0};        // lowest vertex at the end (above -depth: it did not fall through)
};

// A btMultiBodyDynamicsWorld through rtcd's dispatcher or Bullet's, with a
// GImpact ground whose top is z = 0 and the blob mesh the bodies share.
struct GroundScene {
    btDefaultCollisionConfiguration config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    btDbvtBroadphase broadphase;
    btMultiBodyConstraintSolver solver;
    btMultiBodyDynamicsWorld world;
    MeshData ground, blob;
    btRigidBody floor;
    explicit GroundScene(bool use_rtcd)
        : dispatcher(use_rtcd ? new rtcdCollisionDispatcher(&config) : new btCollisionDispatcher(&config)),
          world(dispatcher.get(), &broadphase, &solver, &config), ground(ground_mesh()), blob(blob_mesh()),
          floor(btRigidBody::btRigidBodyConstructionInfo(0, nullptr, ground.shape.get()))
    {
        btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher.get());
        world.setGravity(btVector3(0, 0, -9.81f));
        floor.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0, 0, -0.25f)));
        world.addRigidBody(&floor);
    }
    ~GroundScene() { world.removeRigidBody(&floor); }
};

static const float k_speed = 5.0f; // m/s

// Starting heights of the lowest vertex above the ground: where a body
// meets the ground within its last step depends on it.
static const float k_starts[] = {0.15f, 0.2f, 0.25f, 0.27f, 0.3f, 0.36f};

// Two blobs 1.2 m apart land at 5 m/s on a GImpact ground: the base and one
// link (fixed joint, its frame turned a quarter about z) of a multibody in a
// btMultiBodyDynamicsWorld, or two rigid bodies.
static Landing land(bool use_rtcd, bool multibody, float k_start, int steps)
{
    GroundScene scene(use_rtcd);
    btMultiBodyDynamicsWorld& world = scene.world;
    const MeshData& blob = scene.blob;

    const float mass = 1.0f;
    btVector3 inertia;
    blob.shape->calculateLocalInertia(mass, inertia);
    btQuaternion quarter(btVector3(0, 0, 1), SIMD_HALF_PI);
    // The link's pose: 1.2 m along x, turned a quarter about z.
    btTransform poses[2] = {btTransform(btQuaternion::getIdentity(), btVector3(-0.6f, 0, 0)),
                            btTransform(quarter, btVector3(0.6f, 0, 0))};
    float lowest_start = std::min(blob.lowest(poses[0]), blob.lowest(poses[1]));
    float z = k_start - lowest_start;
    const btCollisionObject* objs[2];
    std::unique_ptr<btMultiBody> mb;
    std::vector<std::unique_ptr<btMultiBodyLinkCollider>> colliders;
    std::vector<std::unique_ptr<btRigidBody>> bodies;
    if (multibody) {
        mb.reset(new btMultiBody(1, mass, inertia, false, false));
        mb->setBasePos(btVector3(-0.6f, 0, z));
        mb->setWorldToBaseRot(btQuaternion::getIdentity());
        // Parent's centre to the joint 0.6 m along x; the joint to the link's centre 0.6 m along the turned x.
        mb->setupFixed(0, mass, inertia, -1, quarter.inverse(), btVector3(0.6f, 0, 0),
                       quatRotate(quarter.inverse(), btVector3(0.6f, 0, 0)));
        mb->finalizeMultiDof();
        mb->setBaseVel(btVector3(0, 0, -k_speed));
        world.addMultiBody(mb.get());
        btAlignedObjectArray<btQuaternion> q;
        btAlignedObjectArray<btVector3> m;
        mb->forwardKinematics(q, m);
        for (int link = -1; link < 1; ++link) {
            colliders.emplace_back(new btMultiBodyLinkCollider(mb.get(), link));
            btMultiBodyLinkCollider* c = colliders.back().get();
            c->setCollisionShape(blob.shape.get());
            btTransform t = poses[link + 1];
            t.getOrigin() += btVector3(0, 0, z);
            c->setWorldTransform(t);
            world.addCollisionObject(c, btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
            if (link < 0) mb->setBaseCollider(c);
            else mb->getLink(link).m_collider = c;
            objs[link + 1] = c;
        }
        mb->updateCollisionObjectWorldTransforms(q, m);
    } else {
        for (int i = 0; i < 2; ++i) {
            btTransform t = poses[i];
            t.getOrigin() += btVector3(0, 0, z);
            btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, blob.shape.get(), inertia);
            info.m_startWorldTransform = t;
            bodies.emplace_back(new btRigidBody(info));
            bodies.back()->setLinearVelocity(btVector3(0, 0, -k_speed));
            bodies.back()->setActivationState(DISABLE_DEACTIVATION);
            world.addRigidBody(bodies.back().get());
            objs[i] = bodies.back().get();
        }
    }
    Landing out;
    for (int s = 0; s < steps; ++s) {
        float before[2];
        for (int i = 0; i < 2; ++i) before[i] = blob.lowest(objs[i]->getWorldTransform());
        world.stepSimulation(1.0f / 60.0f, 0);
        for (int i = 0; i < 2; ++i) {
            // The step's contacts were found at the poses before it.
            if (before[i] > 0.001f && speculative(scene.dispatcher.get(), objs[i])) out.early[i] = true;
            out.depth[i] = std::max(out.depth[i], -blob.lowest(objs[i]->getWorldTransform()));
        }
    }
    for (int i = 0; i < 2; ++i) out.rest[i] = blob.lowest(objs[i]->getWorldTransform());
    if (multibody) {
        for (auto& c : colliders) world.removeCollisionObject(c.get());
        world.removeMultiBody(mb.get());
    }
    for (auto& b : bodies) world.removeRigidBody(b.get());
    return out;
}

// The deepest and whether every run had early contacts, over the starts.
static Landing worst(Landing (*run)(bool, bool, float, int), bool use_rtcd, bool multibody, int steps)
{
    Landing w;
    w.early[0] = w.early[1] = true;
    w.rest[0] = w.rest[1] = 1e30f;
    for (float start : k_starts) {
        Landing l = run(use_rtcd, multibody, start, steps);
        for (int i = 0; i < 2; ++i) {
            w.depth[i] = std::max(w.depth[i], l.depth[i]);
            w.early[i] = w.early[i] && l.early[i];
            w.rest[i] = std::min(w.rest[i], l.rest[i]);
        }
    }
    return w;
}

static void test_multibody_links_land_like_rigid_bodies()
{
    const int steps = 40;
    Landing gi = worst(land, false, true, steps), mb = worst(land, true, true, steps),
            rigid = worst(land, true, false, steps);
    for (int i = 0; i < 2; ++i) {
        std::printf("%s: deepest %.4f m (GImpact multibody), %.4f m (rtcd multibody), %.4f m (rtcd rigid); "
                    "speculative before touching: %d / %d / %d; lowest at the end %.4f / %.4f / %.4f\n",
                    i ? "link" : "base", gi.depth[i], mb.depth[i], rigid.depth[i], gi.early[i], mb.early[i],
                    rigid.early[i], gi.rest[i], mb.rest[i], rigid.rest[i]);
        // Both land (none falls through the ground).
        CHECK(gi.rest[i] > -0.2f && mb.rest[i] > -0.2f);
        // rtcd knows the links move: speculative contacts before they touch,
        // as for rigid bodies, and no deeper than them (a millimetre for the
        // solvers' differences); GImpact has no speculative contacts.
        CHECK(rigid.early[i]);
        CHECK(mb.early[i]);
        CHECK(!gi.early[i]);
        CHECK(mb.depth[i] <= rigid.depth[i] + 0.001f);
    }
}

// A link swinging down on a revolute joint (its centre 1 m from the axis, at
// 5 rad/s: 5 m/s down at the centre) onto a GImpact ground, its velocity all
// from the joint's; for reference a rigid body with the same velocities.
static Landing swing(bool use_rtcd, bool multibody, float k_start, int steps)
{
    GroundScene scene(use_rtcd);
    btMultiBodyDynamicsWorld& world = scene.world;
    const MeshData& blob = scene.blob;
    const float mass = 1.0f, omega = k_speed;
    btVector3 inertia;
    blob.shape->calculateLocalInertia(mass, inertia);
    float h = k_start - blob.lowest(btTransform::getIdentity());
    btTransform pose(btQuaternion::getIdentity(), btVector3(0, 0, h));
    std::unique_ptr<btMultiBody> mb;
    std::unique_ptr<btMultiBodyLinkCollider> collider;
    std::unique_ptr<btRigidBody> body;
    const btCollisionObject* obj;
    if (multibody) {
        mb.reset(new btMultiBody(1, mass, inertia, true, false));
        mb->setBasePos(btVector3(-1.0f, 0, h));
        mb->setWorldToBaseRot(btQuaternion::getIdentity());
        mb->setupRevolute(0, mass, inertia, -1, btQuaternion::getIdentity(), btVector3(0, 1, 0), btVector3(0, 0, 0),
                          btVector3(1.0f, 0, 0), true);
        mb->finalizeMultiDof();
        mb->setJointVel(0, omega);
        world.addMultiBody(mb.get());
        btAlignedObjectArray<btQuaternion> q;
        btAlignedObjectArray<btVector3> m;
        mb->forwardKinematics(q, m);
        collider.reset(new btMultiBodyLinkCollider(mb.get(), 0));
        collider->setCollisionShape(blob.shape.get());
        collider->setWorldTransform(pose);
        world.addCollisionObject(collider.get(), btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
        mb->getLink(0).m_collider = collider.get();
        mb->updateCollisionObjectWorldTransforms(q, m);
        obj = collider.get();
    } else {
        btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, blob.shape.get(), inertia);
        info.m_startWorldTransform = pose;
        body.reset(new btRigidBody(info));
        body->setLinearVelocity(btVector3(0, 0, -k_speed));
        body->setAngularVelocity(btVector3(0, omega, 0));
        body->setActivationState(DISABLE_DEACTIVATION);
        world.addRigidBody(body.get());
        obj = body.get();
    }
    Landing out;
    for (int s = 0; s < steps; ++s) {
        float before = blob.lowest(obj->getWorldTransform());
        world.stepSimulation(1.0f / 60.0f, 0);
        if (before > 0.001f && speculative(scene.dispatcher.get(), obj)) out.early[0] = true;
        out.depth[0] = std::max(out.depth[0], -blob.lowest(obj->getWorldTransform()));
    }
    out.rest[0] = blob.lowest(obj->getWorldTransform());
    if (multibody) {
        world.removeCollisionObject(collider.get());
        world.removeMultiBody(mb.get());
    } else {
        world.removeRigidBody(body.get());
    }
    return out;
}

static void test_swinging_link_from_joint_velocity()
{
    const int steps = 30;
    Landing gi = worst(swing, false, true, steps), mb = worst(swing, true, true, steps),
            rigid = worst(swing, true, false, steps);
    std::printf("swinging link: deepest %.4f m (GImpact multibody), %.4f m (rtcd multibody), %.4f m (rtcd rigid); "
                "speculative before touching: %d / %d / %d; lowest at the end %.4f / %.4f / %.4f\n",
                gi.depth[0], mb.depth[0], rigid.depth[0], gi.early[0], mb.early[0], rigid.early[0], gi.rest[0],
                mb.rest[0], rigid.rest[0]);
    CHECK(gi.rest[0] > -0.2f && mb.rest[0] > -0.2f); // it swung down onto the ground, not through it
    CHECK(mb.early[0] && rigid.early[0] && !gi.early[0]);
    // Pinned to its axis the link is held less well than the free body
    // (measured: 5 mm against 2 mm at worst), but its speculative contacts
    // keep it far shallower than GImpact's contacts (5 cm).
    CHECK(mb.depth[0] < 0.5f * gi.depth[0]);
}

struct Approach {
    bool early = false;   // a speculative contact while the spheres were apart
    float deepest = 0.0f; // how far the spheres' centres came within two radii
    bool pushed = false;  // the dynamic sphere moved
};

// A kinematic sphere moved by the program at 5 m/s at a dynamic one at rest
// (no gravity): a kinematic btRigidBody (Bullet saves its velocity from its
// transforms each step) or a plain btCollisionObject flagged kinematic
// (Bullet knows no velocity: rtcd follows its transforms), coming along a
// diagonal so that the pair is in the broadphase a few steps before they
// touch. UV spheres: the meshes' vertices lie on the spheres, so two apart
// by more than two radii do not touch.
static Approach approach(bool use_rtcd, bool rigid, int steps)
{
    BulletWorld w(use_rtcd, 0.0f);
    btDiscreteDynamicsWorld& world = w.world;
    const float r = 0.5f;
    rtcd_generated_mesh g;
    rtcd_generate_uv_sphere(16, 24, r, &g);
    MeshData sphere(g);
    btVector3 inertia;
    sphere.shape->calculateLocalInertia(1.0f, inertia);
    btRigidBody target(btRigidBody::btRigidBodyConstructionInfo(1.0f, nullptr, sphere.shape.get(), inertia));
    target.setActivationState(DISABLE_DEACTIVATION);
    world.addRigidBody(&target);
    btVector3 dir = btVector3(1, 1, 0).normalized(), start = -dir * 1.8f;
    btRigidBody kinematic_body(btRigidBody::btRigidBodyConstructionInfo(0.0f, nullptr, sphere.shape.get()));
    btCollisionObject plain;
    btCollisionObject* mover = rigid ? static_cast<btCollisionObject*>(&kinematic_body) : &plain;
    mover->setCollisionShape(sphere.shape.get());
    mover->setCollisionFlags(mover->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
    mover->setActivationState(DISABLE_DEACTIVATION);
    mover->setWorldTransform(btTransform(btQuaternion::getIdentity(), start));
    if (rigid) {
        kinematic_body.setInterpolationWorldTransform(mover->getWorldTransform());
        world.addRigidBody(&kinematic_body);
    } else {
        world.addCollisionObject(&plain, btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
    }
    Approach out;
    const float dt = 1.0f / 60.0f;
    for (int s = 1; s <= steps; ++s) {
        mover->setWorldTransform(btTransform(btQuaternion::getIdentity(), start + dir * (k_speed * dt * static_cast<float>(s))));
        float apart = (mover->getWorldTransform().getOrigin() - target.getWorldTransform().getOrigin()).length();
        world.stepSimulation(dt, 0);
        if (apart > 2 * r + 0.001f && speculative(w.dispatcher.get(), &target)) out.early = true;
        float after = (mover->getWorldTransform().getOrigin() - target.getWorldTransform().getOrigin()).length();
        out.deepest = std::max(out.deepest, 2 * r - after);
    }
    out.pushed = target.getWorldTransform().getOrigin().length() > 0.1f;
    if (rigid) world.removeRigidBody(&kinematic_body);
    else world.removeCollisionObject(&plain);
    world.removeRigidBody(&target);
    return out;
}

static void test_kinematic_objects_have_motion()
{
    const int steps = 30;
    for (int rigid = 1; rigid >= 0; --rigid) {
        Approach gi = approach(false, rigid != 0, steps), rt = approach(true, rigid != 0, steps);
        std::printf("%s: speculative before touching %d (GImpact) / %d (rtcd); deepest %.4f / %.4f m; pushed %d / %d\n",
                    rigid ? "kinematic btRigidBody" : "kinematic btCollisionObject", gi.early, rt.early, gi.deepest,
                    rt.deepest, gi.pushed, rt.pushed);
        CHECK(gi.pushed && rt.pushed);
        CHECK(!gi.early);
        CHECK(rt.early);
        // No deeper than GImpact's (whose margins, 4 cm a shape, push the
        // target before the meshes touch). A plain object is fixed to the
        // solver: the target is only pushed out of it, late either way.
        CHECK(rt.deepest <= gi.deepest + 0.001f);
    }
}

int main()
{
    return rtcd_run_tests({test_multibody_links_land_like_rigid_bodies, test_swinging_link_from_joint_velocity,
                           test_kinematic_objects_have_motion});
}
