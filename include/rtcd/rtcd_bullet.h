/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* rtcd inside Bullet (C++). The drop-in for programs that use
 * btGImpactMeshShape for their dynamic concave bodies: include this header
 * and construct rtcdCollisionDispatcher where the program constructed
 * btCollisionDispatcher. Everything else stays as it was.
 *
 *   #include <rtcd/rtcd_bullet.h>
 *   btCollisionDispatcher* dispatcher = new rtcdCollisionDispatcher(config);
 *
 * Pairs rtcd takes: GImpact mesh vs GImpact mesh (ray traced, both
 * directions) and GImpact mesh vs btStaticPlaneShape (vertices below the
 * plane). Every other pair keeps Bullet's own algorithm. A mesh rtcd cannot
 * take (open, non-manifold, degenerate...) is reported once through rtcd's
 * log hook with the shape and the reason, and its pairs stay with Bullet's
 * GImpact algorithm.
 *
 * Speculative contacts and motion bounds follow each object's velocities:
 * a dynamic btRigidBody's own, a multibody link's from its multibody's
 * joint velocities, a kinematic btRigidBody's as Bullet saves them each
 * step (btDiscreteDynamicsWorld), any other object's (a kinematic or plain
 * btCollisionObject, a ghost) from its transforms over the last step once
 * it has been in one of rtcd's pairs for two steps (docs/dropin.md). */
#ifndef RTCD_BULLET_H
#define RTCD_BULLET_H

#include <btBulletCollisionCommon.h>

#include "rtcd.h"
#include "rtcd_batch.h"
#include "rtcd_world.h"

struct rtcdPluginState; /* private */

class RTCD_API rtcdCollisionDispatcher : public btCollisionDispatcher
{
public:
    /* Registers rtcd's algorithm (and Bullet's GImpact algorithm for the pairs
     * rtcd declines) for the shape types above. Construct before any pair
     * exists. `def` (NULL: rtcd_default_narrowphase_def()) is every setting
     * of the narrow phase: algorithm, traversal, contacts, backend, devices,
     * threads. A backend that cannot be had (no OpenCL device, kernels that
     * do not build) falls back to the CPU reference after a logged notice;
     * a def that does not validate is reported and the defaults are used.
     * Out of memory for the narrow phase (rtcd's allocator) throws
     * std::bad_alloc, as a failed new would. */
    explicit rtcdCollisionDispatcher(btCollisionConfiguration* configuration, const rtcd_narrowphase_def* def = nullptr);
    ~rtcdCollisionDispatcher() override;

    /* Gathers every pair rtcd owns, runs them as one batch, then lets Bullet
     * dispatch as usual; rtcd's algorithms only copy their batch results. */
    void dispatchAllCollisionPairs(btOverlappingPairCache* pairCache, const btDispatcherInfo& info,
                                   btDispatcher* dispatcher) override;

    /* Picks rtcd's algorithm for the pairs above (whatever was registered
     * afterwards), Bullet's table for everything else. */
    btCollisionAlgorithm* findAlgorithm(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                                        btPersistentManifold* sharedManifold,
                                        ebtDispatcherQueryType queryType) override;

    /* A new def (validated: RTCD_ERROR_INVALID_ARGUMENT leaves the old one).
     * Every pair forgets its state; a change of backend, devices or threads
     * reopens the backend. */
    rtcd_error setNarrowphaseDef(const rtcd_narrowphase_def& def);
    rtcd_narrowphase_def narrowphaseDef() const;
    /* Checking mode: see rtcd_world_def.check. */
    void setCheck(bool check);

    /* Statistics of the last step: the last dispatchAllCollisionPairs over
     * the world's pair cache (queries in between leave them as they are). */
    rtcd_step_stats lastStepStats() const;

    /* Queries: a dispatchAllCollisionPairs over any other pair cache, as a
     * btPairCachingGhostObject's (btKinematicCharacterController runs up to
     * five a step over its ghost's). A query's pairs run in a batch of
     * their own, one per pair cache, on the CPU reference on the calling
     * thread (or the def's task system), so they leave the step's pairs
     * their kept rays; lastQueryStats() gives the last query's figures.
     * The world's cache is told apart from a ghost's by its pairs (each
     * pair of a ghost's cache holds the ghost); setStepPairCache names it
     * instead (then every other cache is a query; NULL: the rule above). A
     * query's batch is freed after 64 steps without a query. */
    rtcd_step_stats lastQueryStats() const;
    void setStepPairCache(btOverlappingPairCache* cache);

    /* The rtcd mesh built for a shape (NULL when rtcd declined it or has not
     * seen it yet). Owned by the dispatcher. Shapes are known by address
     * and, Bullet shapes having no id, by what the mesh was built from,
     * looked at for each new pair and once per step: type, scaling, margin,
     * every dimension of a primitive, a hull's points, and for triangle
     * meshes and heightfields the mesh interface and its arrays (addresses,
     * counts, types). A shape deleted and another made at its address is
     * rebuilt unless all of that is the same; then it holds the same
     * triangles, or other values in the same arrays, which for a GImpact
     * shape is a deformation (below) and for a static triangle mesh or
     * heightfield goes unseen (give it a new shape). A GImpact shape over
     * other arrays of the same triangles is followed as a deformation. */
    const rtcd_mesh* meshForShape(const btCollisionShape* shape) const;

    /* Deforming btGImpactMeshShapes. A program that rewrites a shape's
     * vertices (same triangles) and calls the shape's postUpdate(), GImpact's
     * own convention, gets the new shape in the next step's narrow phase:
     * once per step rtcd looks at each GImpact shape of its pairs for
     * GImpact's update flag (which postUpdate() sets; rtcd then calls
     * updateBound() as GImpact's algorithm would) or a local box other than
     * the one it built from (postUpdate() and updateBound() both called).
     * The mesh is updated in place (rtcd_mesh_update_vertices: BVH refit,
     * kept rays and pair states survive) when rtcd took the vertices as
     * given, rebuilt when it had to repair them. A deformation that keeps
     * the box and was not flagged (no postUpdate()) goes unseen: say so
     * with refreshShape. Every body of a shared shape deforms with it. */
    void refreshShape(const btCollisionShape* shape);

    /* rtcd takes `mesh` (retained) as the collision mesh of the GImpact or
     * static triangle mesh `shape`, instead of building one from the
     * shape's arrays: for callers that keep an rtcd mesh of the same
     * vertices (the C world) and update it themselves
     * (rtcd_mesh_update_vertices). A static shape's mesh must be an open
     * surface or closed, in the shape's frame; it is taken as it is (no
     * weld, no repair). */
    void useMesh(const btCollisionShape* shape, rtcd_mesh* mesh);

    /* The batch the pairs run through (backend, devices, threads, timings). */
    rtcd_batch* narrowphaseBatch() const;

private:
    rtcdPluginState* m_state;
};

#endif
