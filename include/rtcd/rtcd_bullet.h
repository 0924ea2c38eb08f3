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
 * GImpact algorithm. */
#ifndef RTCD_BULLET_H
#define RTCD_BULLET_H

#include <btBulletCollisionCommon.h>

#include "rtcd.h"
#include "rtcd_opencl.h"
#include "rtcd_world.h"

struct rtcdPluginState; /* private */

class RTCD_API rtcdCollisionDispatcher : public btCollisionDispatcher
{
public:
    /* Registers rtcd's algorithm (and Bullet's GImpact algorithm for the pairs
     * rtcd declines) for the shape types above. Construct before any pair exists. */
    /* backend AUTO (the default) runs the batch on OpenCL devices when there
     * are any (see rtcd_opencl_def, RTCD_DEVICES), else on the CPU reference
     * after a one-line notice; CPU never touches OpenCL. `opencl`, when
     * given, also sets the algorithm (iterative), traversal and contact
     * normal of the CPU reference, so both backends compute the same. */
    explicit rtcdCollisionDispatcher(btCollisionConfiguration* configuration, rtcd_backend backend = RTCD_BACKEND_AUTO,
                                     const rtcd_opencl_def* opencl = nullptr);
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

    /* The narrow-phase algorithm (default: predictive, adaptive). Pairs keep
     * their state; a change of algorithm resets every pair. */
    void setIterativeDef(const rtcd_iterative_def& def);
    rtcd_iterative_def iterativeDef() const;
    /* Checking mode: see rtcd_world_def.check. */
    void setCheck(bool check);

    /* Statistics of the last dispatchAllCollisionPairs. */
    rtcd_step_stats lastStepStats() const;

    /* The rtcd mesh built for a shape (NULL when rtcd declined it or has not
     * seen it yet). Owned by the dispatcher. */
    const rtcd_mesh* meshForShape(const btCollisionShape* shape) const;

    /* NULL when the batch runs on the CPU reference. */
    rtcd_opencl* openclBackend() const;

    rtcdPluginState* state() { return m_state; }

private:
    rtcdPluginState* m_state;
};

#endif
