// Closest-points queries (btCollisionWorld::contactTest, contactPairTest)
// for rtcd's pairs: the pair alone, at the wrappers' poses, in a batch that
// belongs to the queries, so the step's batch never sees a query's key (it
// forgets every key missing from a call) and no slot or manifold of the
// world's changes.
#include "plugin_internal.h"

#include <algorithm>
#include <new>
#include <string>

struct rtcdQueryState {
    rtcd_batch* batch = nullptr;
    rtcd_narrowphase_def def;       // the def the batch has
    uint64_t next_key = 1;          // a fresh key per query: every query is a standard pass, nothing kept
    ~rtcdQueryState() { rtcd_batch_release(batch); }
};

// The settings that shape a pair's contacts (the rest say where batches run).
static bool sameContacts(const rtcd_narrowphase_def& a, const rtcd_narrowphase_def& b)
{
    const rtcd_iterative_def &ia = a.iterative, &ib = b.iterative;
    return a.traversal == b.traversal && a.contact_normal == b.contact_normal && a.cull_separated == b.cull_separated &&
           ia.algorithm == ib.algorithm && ia.adaptive == ib.adaptive && ia.confidence == ib.confidence &&
           ia.fixed.displacement_threshold == ib.fixed.displacement_threshold &&
           ia.fixed.distance_extension == ib.fixed.distance_extension &&
           ia.fixed.culling_distance == ib.fixed.culling_distance &&
           ia.fixed.max_iterations == ib.fixed.max_iterations && a.speculative == b.speculative &&
           a.speculative_margin == b.speculative_margin && a.edge_crossings == b.edge_crossings &&
           a.deep_contacts == b.deep_contacts;
}

// The queries' batch with the world's contact settings, on the calling
// thread (CPU reference, one thread: one pair per call; the backends' results
// are bit-identical). Speculative contacts only when the query asks for
// points at a positive distance: a contacts-only query reduces its
// penetrating points among themselves. NULL when none can be made.
static rtcd_batch* queryBatch(rtcdPluginState& s, bool speculative)
{
    if (!s.queries) s.queries = std::make_shared<rtcdQueryState>();
    rtcdQueryState& q = *s.queries;
    rtcd_narrowphase_def def = s.def;
    def.backend = RTCD_BACKEND_CPU;
    def.devices = nullptr;
    def.max_devices = 0;
    def.threads = 1;
    def.tasks = rtcd_task_system();
    if (!speculative) def.speculative = 0;
    if (q.batch && sameContacts(q.def, def)) return q.batch;
    rtcd_error err = q.batch ? rtcd_batch_set_def(q.batch, &def) : rtcd_batch_create(&def, &q.batch);
    if (err != RTCD_OK) {
        std::string line = std::string("rtcd: closest-points query: no batch (") + rtcd_error_name(err) + ": " +
                           rtcd_last_error_message() + "); the query reports no points";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        if (q.batch && err != RTCD_ERROR_OUT_OF_MEMORY) return q.batch; // keeps its old def
        return nullptr;
    }
    q.def = def;
    return q.batch;
}

// The shape's mesh as the step sees it; no statistic of the step changes.
static const rtcd_mesh* queryMesh(rtcdPluginState& s, const btCollisionShape* shape)
{
    bool oom = false;
    const rtcd_mesh* m = s.meshes.current(shape, s.stamp, &oom);
    if (!m && oom)
        rtcd_log_message(RTCD_LOG_WARNING, "rtcd: closest-points query: out of memory building a mesh; no points");
    return m;
}

void rtcdQueryAlgorithm::processCollision(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                                          const btDispatcherInfo&, btManifoldResult* result)
{
    rtcdPluginState& s = *m_state;
    // Bullet's closest-points algorithms report what lies within the
    // result's threshold (contactPairTest copies the callback's
    // m_closestDistanceThreshold there; contactTest leaves it 0).
    btScalar threshold = result->m_closestPointDistanceThreshold;
    if (!(threshold >= 0)) threshold = 0; // negative or NaN: contacts only
    rtcd_contact contacts[RTCD_MAX_MANIFOLD_POINTS];
    uint32_t count = 0;
    if (m_kind == RTCD_PAIR_MESH_PLANE) {
        const btCollisionObjectWrapper* mw = m_plane_is_a ? body1 : body0;
        const btCollisionObjectWrapper* pw = m_plane_is_a ? body0 : body1;
        const rtcd_mesh* mesh = queryMesh(s, mw->getCollisionShape());
        if (!mesh) return;
        float plane[4];
        rtcdWorldPlane(pw->getCollisionShape(), pw->getWorldTransform(), plane);
        rtcd_transform pose = rtcdFromBullet(mw->getWorldTransform());
        // Every vertex within the threshold above the plane is a point (exact: no margin to reach).
        float reach = std::min(static_cast<float>(threshold), 1e30f);
        rtcd_error err = rtcd_collide_plane(mesh, &pose, plane, m_plane_is_a, reach,
                                            s.def.speculative ? s.def.speculative_margin : 0.0f, contacts, &count);
        if (err != RTCD_OK) {
            rtcd_log_message(RTCD_LOG_WARNING, rtcd_last_error_message());
            // Out of memory still reduces the contacts (rtcd_reduce_contacts).
            if (err != RTCD_ERROR_OUT_OF_MEMORY) return;
        }
    } else {
        rtcd_pair_desc d = rtcd_pair_desc();
        d.a = queryMesh(s, body0->getCollisionShape());
        d.b = queryMesh(s, body1->getCollisionShape());
        if (!d.a || !d.b) return;
        rtcd_batch* batch = queryBatch(s, threshold > 0);
        if (!batch) return;
        d.pose_a = rtcdFromBullet(body0->getWorldTransform());
        d.pose_b = rtcdFromBullet(body1->getWorldTransform());
        d.key = s.queries->next_key++;
        d.motion = 0; // a query at rest: speculative points reach the margin, no farther
        d.has_back = 0;
        rtcd_pair_result r;
        rtcd_error err = rtcd_batch_collide(batch, &d, 1, &r, nullptr);
        if (err != RTCD_OK) {
            std::string line = std::string("rtcd: closest-points query failed (") + rtcd_error_name(err) + ": " +
                               rtcd_last_error_message() + "); no points";
            rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
            return;
        }
        count = r.contact_count;
        std::copy(r.contacts, r.contacts + count, contacts);
    }
    // btBridgedManifoldResult (the worlds' queries) reads the pair's order
    // from a manifold: one on the stack, outside the dispatcher's pool and
    // the world's manifold list, set only while the points go out.
    btPersistentManifold* previous = result->getPersistentManifold();
    btPersistentManifold manifold(body0->getCollisionObject(), body1->getCollisionObject(), 0,
                                  std::max(gContactBreakingThreshold, threshold),
                                  std::max(gContactBreakingThreshold, threshold));
    result->setPersistentManifold(&manifold);
    // Deepest last, as the step writes them (plugin_writeback.cpp): a
    // manifold that merges nearby points keeps the deepest.
    for (uint32_t n = count; n-- > 0;) {
        const rtcd_contact& c = contacts[n];
        btScalar distance = -c.depth;
        if (!(distance <= threshold)) continue;
        result->addContactPoint(btVector3(c.normal_on_b[0], c.normal_on_b[1], c.normal_on_b[2]),
                                btVector3(c.point_on_b[0], c.point_on_b[1], c.point_on_b[2]), distance);
    }
    result->setPersistentManifold(previous);
}

// How deep this thread is in a compound's query (nested compounds nest).
static thread_local int t_query_depth = 0;

bool rtcdInQuery() { return t_query_depth > 0; }

namespace {
struct QueryScope {
    QueryScope() { ++t_query_depth; }
    ~QueryScope() { --t_query_depth; }
};

// Bullet's algorithm for a compound query, run inside a query scope.
class QueryScopeAlgorithm : public btCollisionAlgorithm
{
public:
    QueryScopeAlgorithm(const btCollisionAlgorithmConstructionInfo& ci, btCollisionAlgorithm* inner)
        : btCollisionAlgorithm(ci), m_inner(inner)
    {
    }
    ~QueryScopeAlgorithm() override
    {
        QueryScope scope;
        m_inner->~btCollisionAlgorithm();
        m_dispatcher->freeCollisionAlgorithm(m_inner);
    }
    void processCollision(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                          const btDispatcherInfo& info, btManifoldResult* result) override
    {
        QueryScope scope;
        m_inner->processCollision(body0, body1, info, result);
    }
    btScalar calculateTimeOfImpact(btCollisionObject* o0, btCollisionObject* o1, const btDispatcherInfo& info,
                                   btManifoldResult* result) override
    {
        QueryScope scope;
        return m_inner->calculateTimeOfImpact(o0, o1, info, result);
    }
    void getAllContactManifolds(btManifoldArray& manifolds) override { m_inner->getAllContactManifolds(manifolds); }

private:
    btCollisionAlgorithm* m_inner;
};
} // namespace

btCollisionAlgorithm* rtcdCompoundQuery(btCollisionDispatcher* dispatcher, const btCollisionObjectWrapper* body0,
                                        const btCollisionObjectWrapper* body1, btPersistentManifold* shared_manifold)
{
    btCollisionAlgorithm* inner;
    {
        QueryScope scope; // Bullet's compound algorithm makes its children's algorithms as it is made
        inner = dispatcher->btCollisionDispatcher::findAlgorithm(body0, body1, shared_manifold,
                                                                 BT_CLOSEST_POINT_ALGORITHMS);
    }
    if (!inner) return nullptr;
    btCollisionAlgorithmConstructionInfo ci;
    ci.m_dispatcher1 = dispatcher;
    ci.m_manifold = shared_manifold;
    return new (dispatcher->allocateCollisionAlgorithm(sizeof(QueryScopeAlgorithm))) QueryScopeAlgorithm(ci, inner);
}
