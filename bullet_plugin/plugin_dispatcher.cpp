// rtcdCollisionDispatcher: takes the concave-mesh pairs and runs them as one
// batch per step before Bullet's own dispatch.
#include "plugin_internal.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>
#include <typeinfo>

#include <BulletCollision/CollisionDispatch/btEmptyCollisionAlgorithm.h>

rtcdCollisionDispatcher::rtcdCollisionDispatcher(btCollisionConfiguration* configuration,
                                                 const rtcd_narrowphase_def* def)
    : btCollisionDispatcher(configuration), m_state(new rtcdPluginState())
{
    m_state->stats = rtcd_step_stats();
    m_state->dispatcher = this;
    if (const char* v = std::getenv("RTCD_PLUGIN_PARALLEL_MIN")) {
        char* end = nullptr;
        unsigned long n = std::strtoul(v, &end, 10);
        if (end != v && *end == '\0' && n < UINT32_MAX) m_state->parallel_min = static_cast<uint32_t>(n);
    }
    rtcd_narrowphase_def wanted = def ? *def : rtcd_default_narrowphase_def();
    rtcd_error err = m_state->open(wanted);
    if (err != RTCD_OK && err != RTCD_ERROR_OUT_OF_MEMORY) {
        // A def that does not validate (the error callback has its message):
        // the defaults, so the program still runs.
        std::string line = std::string("rtcd: ") + rtcd_last_error_message() + "; using the default narrow phase";
        rtcd_log_message(RTCD_LOG_ERROR, line.c_str());
        err = m_state->open(rtcd_default_narrowphase_def());
    }
    if (err == RTCD_ERROR_OUT_OF_MEMORY) {
        // Not a bad def: without its batch the dispatcher would drop every
        // pair's contacts, and the defaults are no answer to the caller's
        // def. Out of memory in a constructor is std::bad_alloc (the
        // destructor does not run: the state goes here).
        delete m_state;
        m_state = nullptr;
        throw std::bad_alloc();
    }
    // Bullet's GImpact algorithm for the GImpact pairs rtcd declines and the
    // configuration has no algorithm for (its empty one: GImpact against
    // GImpact, concave meshes, planes). Every other pairing stays as the
    // configuration set it: a soft body against a GImpact mesh keeps
    // btSoftRigidDynamicsWorld's soft-concave algorithm, a convex shape
    // rtcd declines Bullet's convex-concave one (btGImpactCollisionAlgorithm::
    // registerAlgorithm would overwrite them all).
    static btGImpactCollisionAlgorithm::CreateFunc gimpact;
    for (int i = 0; i < MAX_BROADPHASE_COLLISION_TYPES; ++i) {
        const int pairing[2][2] = {{GIMPACT_SHAPE_PROXYTYPE, i}, {i, GIMPACT_SHAPE_PROXYTYPE}};
        for (const auto& p : pairing) {
            btCollisionAlgorithmCreateFunc* f = configuration->getCollisionAlgorithmCreateFunc(p[0], p[1]);
            if (!f || typeid(*f) == typeid(btEmptyAlgorithm::CreateFunc))
                registerCollisionCreateFunc(p[0], p[1], &gimpact);
        }
    }
}

rtcdCollisionDispatcher::~rtcdCollisionDispatcher() { delete m_state; }

rtcd_step_stats rtcdCollisionDispatcher::lastStepStats() const { return m_state->stats; }

rtcd_error rtcdCollisionDispatcher::setNarrowphaseDef(const rtcd_narrowphase_def& def)
{
    rtcd_error err = rtcd_narrowphase_def_validate(&def);
    if (err != RTCD_OK) return err;
    m_state->closeScopes(); // the queries' batches reopen with the new def
    if (m_state->narrowphase) {
        err = rtcd_batch_set_def(m_state->narrowphase, &def);
        if (err == RTCD_OK) m_state->def = rtcd_batch_def(m_state->narrowphase);
        return err;
    }
    return m_state->open(def);
}

rtcd_narrowphase_def rtcdCollisionDispatcher::narrowphaseDef() const { return m_state->def; }

void rtcdCollisionDispatcher::setCheck(bool check) { m_state->check = check; }

rtcd_batch* rtcdCollisionDispatcher::narrowphaseBatch() const { return m_state->narrowphase; }

void rtcdCollisionDispatcher::refreshShape(const btCollisionShape* shape)
{
    if (shape) m_state->meshes.refresh(shape);
}

void rtcdCollisionDispatcher::useMesh(const btCollisionShape* shape, rtcd_mesh* mesh)
{
    rtcdShapeRole role = shape ? rtcdRoleOf(shape) : RTCD_ROLE_NONE;
    if (mesh && (role == RTCD_ROLE_MESH || role == RTCD_ROLE_SURFACE)) m_state->meshes.use(shape, mesh);
}

const rtcd_mesh* rtcdCollisionDispatcher::meshForShape(const btCollisionShape* shape) const
{
    return m_state->meshes.find(shape);
}

// Does the compound hold, directly, a concave mesh rtcd takes? A child
// whose mesh could not be built for want of memory counts (*out_of_memory
// set): the pair must not go to GImpact for its lifetime for that.
static bool holdsMesh(rtcdMeshCache& meshes, const btCollisionShape* s, bool* out_of_memory)
{
    if (rtcdRoleOf(s) != RTCD_ROLE_COMPOUND) return false;
    const btCompoundShape* c = static_cast<const btCompoundShape*>(s);
    for (int i = 0; i < c->getNumChildShapes(); ++i) {
        const btCollisionShape* child = c->getChildShape(i);
        if (rtcdRoleOf(child) != RTCD_ROLE_MESH) continue;
        bool oom = false;
        if (meshes.meshFor(child, &oom)) return true;
        if (oom) {
            *out_of_memory = true;
            return true;
        }
    }
    return false;
}

// Is the pair rtcd's, and which kind? A pair is rtcd's when one side is a
// concave mesh rtcd took and the other a mesh, a convex shape or a static
// surface it took, or a plane. A mesh that could not be built for want of
// memory counts as taken: the pair stays rtcd's and the mesh is built on a
// later step.
// Has rtcd a mesh for the shape (meshFor)? Inside the serial creation of a
// step's new pairs, a shape's answer is kept (the same within the loop:
// nothing else touches the cache there, and a shape that ran out of memory
// is asked again), so a pile of one shape hashes its arrays once, not
// twice a pair.
static bool hasMesh(rtcdPluginState& s, const btCollisionShape* shape, bool* out_of_memory)
{
    if (s.take_memo_on)
        for (const rtcdPluginState::TakeMemo& m : s.take_memo)
            if (m.shape == shape) {
                *out_of_memory = false;
                return m.mesh;
            }
    bool mesh = s.meshes.meshFor(shape, out_of_memory) != nullptr;
    if (s.take_memo_on && !*out_of_memory) {
        s.take_memo[1] = s.take_memo[0];
        s.take_memo[0] = {shape, mesh};
    }
    return mesh;
}

static bool rtcdTakes(rtcdPluginState& s, const btCollisionShape* s0, const btCollisionShape* s1, rtcdPairKind* kind,
                      bool* plane_is_a)
{
    rtcdShapeRole r0 = rtcdRoleOf(s0), r1 = rtcdRoleOf(s1);
    bool oom0 = false, oom1 = false, oom = false;
    bool mesh0 = r0 == RTCD_ROLE_MESH && (hasMesh(s, s0, &oom0) || oom0);
    bool mesh1 = r1 == RTCD_ROLE_MESH && (hasMesh(s, s1, &oom1) || oom1);
    if (!mesh0 && !mesh1) return false;
    rtcdShapeRole other = mesh0 ? r1 : r0;
    const btCollisionShape* os = mesh0 ? s1 : s0;
    bool plane = other == RTCD_ROLE_PLANE;
    bool takes = plane || ((other == RTCD_ROLE_MESH || other == RTCD_ROLE_CONVEX || other == RTCD_ROLE_SURFACE) &&
                           (hasMesh(s, os, &oom) || oom));
    if (oom0 || oom1 || oom) s.stats.out_of_memory++;
    *kind = plane ? RTCD_PAIR_MESH_PLANE : RTCD_PAIR_MESH_MESH;
    *plane_is_a = plane && !mesh0;
    return takes;
}

// Chosen here rather than through registerCollisionCreateFunc, so a program
// that calls btGImpactCollisionAlgorithm::registerAlgorithm after creating the
// dispatcher (the usual GImpact set-up) still gets rtcd. The same pairs get
// rtcd's closest-points algorithm (contactTest, contactPairTest).
btCollisionAlgorithm* rtcdCollisionDispatcher::findAlgorithm(const btCollisionObjectWrapper* body0,
                                                            const btCollisionObjectWrapper* body1,
                                                            btPersistentManifold* shared_manifold,
                                                            ebtDispatcherQueryType query)
{
    const btCollisionShape* s0 = body0->getCollisionShape();
    const btCollisionShape* s1 = body1->getCollisionShape();
    btCollisionAlgorithmConstructionInfo ci;
    ci.m_dispatcher1 = this;
    ci.m_manifold = shared_manifold;
    rtcdPairKind kind;
    bool plane_is_a;
    if (query == BT_CLOSEST_POINT_ALGORITHMS) {
        if (rtcdTakes(*m_state, s0, s1, &kind, &plane_is_a)) {
            void* mem = allocateCollisionAlgorithm(sizeof(rtcdQueryAlgorithm));
            return new (mem) rtcdQueryAlgorithm(ci, m_state, kind, plane_is_a);
        }
        if (s0->isCompound() || s1->isCompound()) return rtcdCompoundQuery(this, body0, body1, shared_manifold);
    }
    if (query == BT_CONTACT_POINT_ALGORITHMS) {
        if (rtcdTakes(*m_state, s0, s1, &kind, &plane_is_a)) {
            if (rtcdInQuery()) { // a compound's child inside a query
                void* mem = allocateCollisionAlgorithm(sizeof(rtcdQueryAlgorithm));
                return new (mem) rtcdQueryAlgorithm(ci, m_state, kind, plane_is_a);
            }
            void* mem = allocateCollisionAlgorithm(sizeof(rtcdCollisionAlgorithm));
            return new (mem) rtcdCollisionAlgorithm(ci, m_state, kind, plane_is_a, body0, body1);
        }
        // A compound of concave meshes: Bullet's compound algorithm (not
        // GImpact's, which would take its GImpact children itself), whose
        // children come back here.
        bool holds_oom = false;
        bool holds = holdsMesh(m_state->meshes, s0, &holds_oom) || holdsMesh(m_state->meshes, s1, &holds_oom);
        if (holds_oom) m_state->stats.out_of_memory++;
        if (holds) {
            btCollisionAlgorithmCreateFunc* f =
                m_collisionConfiguration->getCollisionAlgorithmCreateFunc(s0->getShapeType(), s1->getShapeType());
            if (f) return f->CreateCollisionAlgorithm(ci, body0, body1);
        }
    }
    return btCollisionDispatcher::findAlgorithm(body0, body1, shared_manifold, query);
}

// The state whose dispatch runs on this thread, for the near callback.
static thread_local rtcdPluginState* t_dispatching = nullptr;

// Bullet's near callback for every pair but those whose contacts the
// step's write-back already put in their manifolds.
static void skipWritten(btBroadphasePair& pair, btCollisionDispatcher& dispatcher, const btDispatcherInfo& info)
{
    const rtcdPluginState* s = t_dispatching;
    if (s && s->pair_base) {
        uintptr_t at = reinterpret_cast<uintptr_t>(&pair), base = reinterpret_cast<uintptr_t>(s->pair_base);
        size_t i = (at - base) / sizeof(btBroadphasePair);
        if (at >= base && i < s->written_pairs.size() && s->written_pairs[i]) return;
    }
    btCollisionDispatcher::defaultNearCallback(pair, dispatcher, info);
}

// Bullet's dispatch with skipWritten as the near callback; the program's
// callback back afterwards, whatever happens.
namespace {
struct NearCallbackSwap {
    btCollisionDispatcher* d;
    btNearCallback old;
    NearCallbackSwap(btCollisionDispatcher* dispatcher, rtcdPluginState* s) : d(dispatcher), old(d->getNearCallback())
    {
        t_dispatching = s;
        d->setNearCallback(skipWritten);
    }
    ~NearCallbackSwap()
    {
        d->setNearCallback(old);
        t_dispatching = nullptr;
    }
};
} // namespace

// A query's dispatch (plugin_scopes.cpp): its own batch and figures for
// its length, the step's back afterwards, whatever happens.
namespace {
struct QuerySwap {
    rtcdPluginState& s;
    bool query;
    rtcd_batch* step_batch;
    rtcd_step_stats step_stats;
    QuerySwap(rtcdPluginState& state, const btOverlappingPairCache* cache, bool is_query)
        : s(state), query(is_query), step_batch(state.narrowphase), step_stats(state.stats)
    {
        s.in_query = query;
        s.scope = query ? cache : nullptr;
        if (query) s.narrowphase = s.queryBatch(cache);
    }
    ~QuerySwap()
    {
        if (!query) return;
        s.query_stats = s.stats;
        s.stats = step_stats;
        s.narrowphase = step_batch;
        s.in_query = false;
        s.scope = nullptr;
    }
};
} // namespace

void rtcdCollisionDispatcher::dispatchAllCollisionPairs(btOverlappingPairCache* pair_cache,
                                                        const btDispatcherInfo& info, btDispatcher* dispatcher)
{
    auto start = std::chrono::steady_clock::now();
    rtcdPluginState& s = *m_state;
    int n = pair_cache->getNumOverlappingPairs();
    btBroadphasePair* pairs = n ? pair_cache->getOverlappingPairArrayPtr() : nullptr;
    QuerySwap swap_scope(s, pair_cache, s.isQuery(pair_cache, pairs, n));
    double step_ms = 0.0;
    if (!s.in_query) {
        // A whole step is what lies between two dispatches of the step: the
        // previous step ended where this one begins.
        step_ms = s.steps ? std::chrono::duration<double, std::milli>(start - s.last_dispatch).count() : 0.0;
        s.last_dispatch = start;
        s.steps++;
        s.learned_cache = pair_cache;
        s.closeIdleScopes();
    }
    s.stamp++;
    if (info.m_timeStep > 0) s.time_step = info.m_timeStep;
    s.stats = rtcd_step_stats();
    s.stats.step_ms = step_ms;
    s.dispatcher = this;
    // rtcd's pairs are written before Bullet's dispatch, in parallel, when
    // nothing of the program's can see the order: Bullet's own near
    // callback, no contact callbacks, discrete dispatch. Otherwise each
    // pair's algorithm writes its contacts when Bullet calls it.
    s.parallel_writeback = getNearCallback() == defaultNearCallback &&
                           info.m_dispatchFunc == btDispatcherInfo::DISPATCH_DISCRETE && !gContactAddedCallback &&
                           !gContactProcessedCallback && !gContactDestroyedCallback && !gContactStartedCallback &&
                           !gContactEndedCallback;
    s.stats.broadphase_pairs = static_cast<uint32_t>(n);
    s.pair_base = pairs;
    s.written_pairs.assign(static_cast<size_t>(n), 0);
    // The pair cache's rtcd pairs, on the batch's workers; algorithms for
    // the pairs that start made serially, the way Bullet's near callback
    // would (plugin_gather.cpp).
    s.gatherPairs(this, pairs, n);
    s.gatherChildren(this);
    s.stats.gather_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    s.runBatch();
    if (s.parallel_writeback) s.writeBack();
    auto bullet_start = std::chrono::steady_clock::now();
    if (s.parallel_writeback) {
        // Every pair done (rtcd's written, the others not colliding): Bullet's
        // own caches would only call the near callback for each, which
        // returns at once; a cache of another kind is walked as always.
        bool bullets_cache = typeid(*pair_cache) == typeid(btHashedOverlappingPairCache) ||
                             typeid(*pair_cache) == typeid(btSortedOverlappingPairCache);
        if (!bullets_cache || std::find(s.written_pairs.begin(), s.written_pairs.end(), 0) != s.written_pairs.end()) {
            NearCallbackSwap swap(this, &s);
            btCollisionDispatcher::dispatchAllCollisionPairs(pair_cache, info, dispatcher);
        }
    } else {
        btCollisionDispatcher::dispatchAllCollisionPairs(pair_cache, info, dispatcher);
    }
    s.pair_base = nullptr;
    auto end = std::chrono::steady_clock::now();
    s.stats.dispatch_ms = std::chrono::duration<double, std::milli>(end - bullet_start).count();
    // The scope's own: a query's manifolds are not the step's.
    s.stats.manifolds = s.in_query ? s.query_manifolds_held : s.manifolds_held - s.query_manifolds_held;
    s.stats.narrowphase_ms = std::chrono::duration<double, std::milli>(end - start).count();
}
