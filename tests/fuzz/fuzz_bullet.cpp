// libFuzzer target: the Bullet plugin (rtcdCollisionDispatcher) with a
// hostile triangle mesh. The mesh (degenerate, open, non-manifold,
// inside-out, tiny or huge, as the input makes it) is a dynamic GImpact
// shape, under a local scaling (zero and negative included), beside a
// generated blob, a box and a static BVH triangle mesh made of the same
// triangles, over a ground plane; the world steps while the input deforms
// the mesh (refreshShape, or GImpact's postUpdate alone), rescales it, moves
// and velocities bodies, takes one out and puts it back, and changes the
// narrow phase's def. Poses, velocities and vertices stay finite: Bullet's
// own code is not rtcd's to fuzz.
//
// Input: an 8-byte header, the vertices and triangles, then operations to
// the end (each followed by one step; at most RTCD_FUZZ_MAX_STEPS):
//
//   off size  header
//    0   1    def bits: 0-1 algorithm (3: out of range), 2 speculative,
//             3 edge crossings, 4 deep contacts, 5 the wrap on (else off)
//    1   1    vertices 4 + b % 61
//    2   1    triangles 1 + b % 96
//    3   1    coordinate unit: b % 7 picks 1e-4, 0.01, 0.1, 0.5, 1, 5, 1e3 m
//    4   3    local scaling, three int8 / 32
//    7   1    reserved
//   then vertices as three int8 each (x unit / 127), triangles as three
//   bytes each (mod the vertex count), then operations:
//    op % 8: 0 a step; 1 move vertex (byte) to three int8, then refreshShape;
//    2 the same with postUpdate only; 3 body (byte % 4) to a pose (three
//    int8 x 5 cm, a quaternion of four int8) with velocities (three int8 x
//    0.1 m/s); 4 the mesh's body out of the world, or back in; 5 local
//    scaling to three int8 / 32, then refreshShape; 6 a new def (the
//    header's first byte again); 7 check mode on or off.
//
// Findings: crashes, sanitizer reports (in rtcd's code: Bullet's is not
// instrumented), hangs, runaway memory, and one property: every contact
// point of a manifold rtcd made (both shapes rtcd's, or one rtcd's and the
// other the plane or the box) is finite with a unit normal.
#include <rtcd/rtcd_bullet.h>
#include <rtcd/rtcd_generate.h>
#include <rtcd/rtcd_wrap.h>

#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "bullet_world.hpp"

#define RTCD_FUZZ_MAX_STEPS 40

namespace {

void quiet_log(rtcd_log_level, const char*, void*) {}

struct Reader {
    const uint8_t* p;
    size_t left;
    uint8_t u8()
    {
        if (!left) return 0;
        --left;
        return *p++;
    }
    float i8(float unit) { return static_cast<float>(static_cast<int8_t>(u8())) * unit; }
};

struct Blob {
    std::vector<float> vertices;
    std::vector<int> indices;
};

const Blob& blob()
{
    static Blob b;
    if (b.vertices.empty()) {
        rtcd_generated_mesh g;
        if (rtcd_generate_blob(64, 0.4f, 3, &g) != RTCD_OK) std::abort(); // a harness bug, not a finding
        b.vertices.assign(g.vertices, g.vertices + 3 * g.vertex_count);
        b.indices.assign(g.indices, g.indices + 3 * g.triangle_count);
        rtcd_generated_free(&g);
    }
    return b;
}

rtcd_narrowphase_def def_of(uint8_t bits)
{
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_CPU;
    def.threads = 1;
    def.iterative.algorithm = static_cast<rtcd_algorithm>(bits & 3u);
    def.speculative = (bits >> 2) & 1;
    def.edge_crossings = (bits >> 3) & 1;
    def.deep_contacts = (bits >> 4) & 1;
    return def;
}

// The property: rtcd's manifolds hold finite points and unit normals.
void check_manifolds(rtcdCollisionDispatcher* d)
{
    for (int i = 0; i < d->getNumManifolds(); ++i) {
        const btPersistentManifold* m = d->getManifoldByIndexInternal(i);
        const btCollisionShape* s0 = static_cast<const btCollisionObject*>(m->getBody0())->getCollisionShape();
        const btCollisionShape* s1 = static_cast<const btCollisionObject*>(m->getBody1())->getCollisionShape();
        auto rtcd_side = [&](const btCollisionShape* s) {
            return d->meshForShape(s) != nullptr || s->getShapeType() == STATIC_PLANE_PROXYTYPE ||
                   s->getShapeType() == BOX_SHAPE_PROXYTYPE;
        };
        if (!(d->meshForShape(s0) || d->meshForShape(s1)) || !rtcd_side(s0) || !rtcd_side(s1)) continue;
        for (int c = 0; c < m->getNumContacts(); ++c) {
            const btManifoldPoint& p = m->getContactPoint(c);
            const btVector3 &a = p.getPositionWorldOnA(), &b = p.getPositionWorldOnB(), &n = p.m_normalWorldOnB;
            for (int k = 0; k < 3; ++k)
                if (!std::isfinite(a[k]) || !std::isfinite(b[k]) || !std::isfinite(n[k])) std::abort();
            if (!std::isfinite(p.getDistance()) || std::fabs(n.length2() - 1) > 1e-3f) std::abort();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static bool initialised;
    if (!initialised) {
        rtcd_set_log(quiet_log, nullptr);
        initialised = true;
    }
    if (size < 8) return 0;
    Reader r{data, size};
    uint8_t bits = r.u8();
    int n = 4 + r.u8() % 61, t = 1 + r.u8() % 96;
    static const float units[7] = {1e-4f, 0.01f, 0.1f, 0.5f, 1.0f, 5.0f, 1e3f};
    float unit = units[r.u8() % 7] / 127.0f;
    btVector3 scaling(r.i8(1.0f / 32), r.i8(1.0f / 32), r.i8(1.0f / 32));
    r.u8();
    std::vector<float> vertices(3 * static_cast<size_t>(n));
    for (float& v : vertices) v = r.i8(unit);
    std::vector<int> indices(3 * static_cast<size_t>(t));
    for (int& i : indices) i = r.u8() % n;
    Blob other = blob();
    rtcd_set_dropin_wrap((bits >> 5) & 1 ? RTCD_WRAP_AUTO : RTCD_WRAP_OFF);

    rtcd_narrowphase_def def = def_of(bits);
    if (rtcd_narrowphase_def_validate(&def) != RTCD_OK) def = def_of(0x1e); // a refused def: the default's settings
    {
        BulletWorld w(true, -9.81f, &def);
        btTriangleIndexVertexArray array(t, indices.data(), 3 * sizeof(int), n, vertices.data(), 3 * sizeof(float));
        btTriangleIndexVertexArray blob_array(static_cast<int>(other.indices.size() / 3), other.indices.data(),
                                              3 * sizeof(int), static_cast<int>(other.vertices.size() / 3),
                                              other.vertices.data(), 3 * sizeof(float));
        btGImpactMeshShape shape(&array), blob_shape(&blob_array);
        shape.setLocalScaling(scaling);
        shape.updateBound();
        blob_shape.updateBound();
        btBvhTriangleMeshShape terrain(&array, true);
        btBoxShape box(btVector3(0.3f, 0.2f, 0.1f));
        btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
        w.addStatic(&plane);
        // Inertia of a unit box for every dynamic body: the hostile shape's own may be anything.
        auto dynamic = [&](btCollisionShape* s, const btVector3& at) {
            w.motions.emplace_back(new btDefaultMotionState(btTransform(btQuaternion::getIdentity(), at)));
            w.bodies.emplace_back(new btRigidBody(1, w.motions.back().get(), s, btVector3(0.2f, 0.2f, 0.2f)));
            w.world.addRigidBody(w.bodies.back().get());
            return w.bodies.back().get();
        };
        btRigidBody* bodies[4] = {dynamic(&shape, btVector3(0, 0, 1)), dynamic(&blob_shape, btVector3(0.3f, 0, 1.6f)),
                                  dynamic(&box, btVector3(-0.3f, 0, 0.6f)), nullptr};
        w.bodies.emplace_back(new btRigidBody(0, nullptr, &terrain));
        bodies[3] = w.bodies.back().get();
        w.world.addRigidBody(bodies[3]);
        bool mesh_in = true, check = false;
        for (int step = 0; step < RTCD_FUZZ_MAX_STEPS && r.left; ++step) {
            uint8_t op = r.u8();
            switch (op % 8) {
            case 1:
            case 2: {
                int v = r.u8() % n;
                for (int k = 0; k < 3; ++k) vertices[3 * static_cast<size_t>(v) + k] = r.i8(unit);
                if (op % 8 == 1) w.rtcd->refreshShape(&shape);
                else shape.postUpdate();
                break;
            }
            case 3: {
                btRigidBody* b = bodies[r.u8() % 4];
                btVector3 at(r.i8(0.05f), r.i8(0.05f), r.i8(0.05f));
                btQuaternion q(r.i8(1.0f / 127), r.i8(1.0f / 127), r.i8(1.0f / 127), r.i8(1.0f / 127));
                if (q.length2() < 1e-6f) q = btQuaternion::getIdentity();
                b->setWorldTransform(btTransform(q.normalized(), at));
                if (b->getInvMass() > 0) {
                    b->setLinearVelocity(btVector3(r.i8(0.1f), r.i8(0.1f), r.i8(0.1f)));
                    b->activate(true);
                }
                break;
            }
            case 4:
                if (mesh_in) w.world.removeRigidBody(bodies[0]);
                else w.world.addRigidBody(bodies[0]);
                mesh_in = !mesh_in;
                break;
            case 5:
                shape.setLocalScaling(btVector3(r.i8(1.0f / 32), r.i8(1.0f / 32), r.i8(1.0f / 32)));
                w.rtcd->refreshShape(&shape);
                break;
            case 6: {
                rtcd_narrowphase_def next = def_of(r.u8());
                w.rtcd->setNarrowphaseDef(next); // a refused def leaves the old one
                break;
            }
            case 7:
                check = !check;
                w.rtcd->setCheck(check);
                break;
            default: break;
            }
            w.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
            check_manifolds(w.rtcd);
        }
        if (!mesh_in) w.world.addRigidBody(bodies[0]); // clear() takes every body out
        w.clear();
    }
    rtcd_set_dropin_wrap(RTCD_WRAP_AUTO);
    return 0;
}
