// Private to the C API over Bullet: the world and shape layouts.
#ifndef RTCD_WORLD_INTERNAL_H
#define RTCD_WORLD_INTERNAL_H

#include "plugin_internal.h"

#include <btBulletDynamicsCommon.h>

#include <chrono>
#include <vector>

// Times Bullet's own dispatch for the gimpact and hull modes, so every mode
// reports its narrow phase the same way.
class TimedDispatcher : public btCollisionDispatcher
{
public:
    explicit TimedDispatcher(btCollisionConfiguration* c) : btCollisionDispatcher(c) {}
    void dispatchAllCollisionPairs(btOverlappingPairCache* cache, const btDispatcherInfo& info,
                                   btDispatcher* d) override
    {
        auto start = std::chrono::steady_clock::now();
        pairs = static_cast<uint32_t>(cache->getNumOverlappingPairs());
        btCollisionDispatcher::dispatchAllCollisionPairs(cache, info, d);
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    double ms = 0;
    uint32_t pairs = 0;
};

// Bullet's solver, timed: solveGroup is where the step's contacts and
// joints become rows and are iterated (setup, iterations, write-back), so
// its sum is the part of the step that follows the contact count.
class TimedSolver : public btSequentialImpulseConstraintSolver
{
public:
    btScalar solveGroup(btCollisionObject** bodies, int num_bodies, btPersistentManifold** manifolds,
                        int num_manifolds, btTypedConstraint** constraints, int num_constraints,
                        const btContactSolverInfo& info, btIDebugDraw* draw, btDispatcher* dispatcher) override
    {
        auto start = std::chrono::steady_clock::now();
        btScalar r = btSequentialImpulseConstraintSolver::solveGroup(bodies, num_bodies, manifolds, num_manifolds,
                                                                     constraints, num_constraints, info, draw,
                                                                     dispatcher);
        ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return r;
    }
    double ms = 0; // this step's (rtcd_world_step resets it)
};

// One piece of a compound shape: a GImpact child over its own arrays.
struct rtcd_shape_piece {
    std::vector<float> vertices;     // body frame
    std::vector<int> indices;
    btTriangleIndexVertexArray* iface = nullptr;
    btGImpactMeshShape* shape = nullptr;
};

struct rtcd_shape {
    int refcount;
    rtcd_world* world;
    rtcd_mesh* body_mesh;            // vertices in the body (principal) frame
    bool body_stale = false;         // `vertices` deformed, body_mesh not yet (see rtcd_shape_current_body_mesh)
    rtcd_transform frame;            // body frame in mesh coordinates
    float com[3];
    btVector3 unit_inertia;          // principal moments for unit mass
    std::vector<float> vertices;     // body frame, what Bullet reads
    std::vector<int> indices;
    btTriangleIndexVertexArray* mesh_interface;
    btCollisionShape* bt_shape;
    std::vector<float> points;       // a convex hull's points (Bullet keeps its own copy; kept for the record)
    std::vector<rtcd_shape_piece> pieces; // a compound's (rtcd_shape_create_compound); empty otherwise
};

// The shape's body mesh as its vertices are now: without rtcd's narrow
// phase (GImpact, hulls) a deformation reaches it only when asked for (the
// penetration measure, rtcd_shape_body_mesh), so GImpact runs pay only
// GImpact's own update. NULL for none.
extern "C" const rtcd_mesh* rtcd_shape_current_body_mesh(const rtcd_shape* shape);

// A static triangle mesh in the world (rtcd_world_add_static_mesh).
struct rtcd_static_mesh {
    rtcd_mesh* mesh;                 // retained: the penetration measure's surface
    std::vector<float> vertices;
    std::vector<int> indices;
    btTriangleIndexVertexArray* mesh_interface;
    btBvhTriangleMeshShape* shape;
    btRigidBody* body;
};

struct rtcd_world {
    int refcount = 1;
    rtcd_world_def def;
    btDefaultCollisionConfiguration* config;
    btCollisionDispatcher* dispatcher;
    rtcdCollisionDispatcher* rtcd_dispatcher; // NULL unless narrowphase is rtcd
    TimedDispatcher* timed_dispatcher;        // NULL when narrowphase is rtcd
    btDbvtBroadphase* broadphase;
    TimedSolver* solver;
    btDiscreteDynamicsWorld* dynamics;
    std::vector<btRigidBody*> bodies;
    std::vector<rtcd_shape*> body_shapes;
    std::vector<btCollisionShape*> plane_shapes;
    std::vector<btRigidBody*> planes;
    std::vector<rtcd_static_mesh*> static_meshes; // user index -2 - k on their bodies
    rtcd_step_stats stats;
    bool stepped = false; // the broadphase's pairs exist (the penetration measure reads them)
    std::vector<rtcd_shape*> shapes;              // every live shape made for it (not retained)
};

#endif
