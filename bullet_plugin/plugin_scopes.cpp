// Query scopes: a dispatch over a pair cache other than the world's (a
// ghost object's query, as btKinematicCharacterController runs up to five a
// step) runs its pairs in a batch of its own, so the step's batch keeps its
// pairs' kept rays and lastStepStats() keeps the step's figures.
#include "plugin_internal.h"

#include <BulletCollision/CollisionDispatch/btGhostObject.h>

#include <string>

// World steps a query scope is kept without a query (its ghost gone, or
// out of every pair): then its batch and pair states are freed.
static const uint32_t k_scope_idle_steps = 64;

// Is the cache a btPairCachingGhostObject's own? Every pair of a ghost's
// cache holds the ghost (btPairCachingGhostObject::addOverlappingObjectInternal),
// so the first pair tells.
static bool ghostCache(const btOverlappingPairCache* cache, const btBroadphasePair& pair)
{
    for (const btBroadphaseProxy* proxy : {pair.m_pProxy0, pair.m_pProxy1}) {
        const btCollisionObject* obj = static_cast<const btCollisionObject*>(proxy->m_clientObject);
        if (!obj || obj->getInternalType() != btCollisionObject::CO_GHOST_OBJECT) continue;
        const btPairCachingGhostObject* ghost = dynamic_cast<const btPairCachingGhostObject*>(obj);
        if (ghost && const_cast<btPairCachingGhostObject*>(ghost)->getOverlappingPairCache() == cache) return true;
    }
    return false;
}

bool rtcdPluginState::isQuery(const btOverlappingPairCache* cache, const btBroadphasePair* pairs, int n) const
{
    if (step_cache) return cache != step_cache;
    if (n > 0) return ghostCache(cache, pairs[0]);
    // An empty cache: a query unless it is the one the steps ran over (or
    // none has run yet); either way there is nothing to batch.
    return learned_cache && cache != learned_cache;
}

rtcd_batch* rtcdPluginState::queryBatch(const btOverlappingPairCache* cache)
{
    QueryScope& q = query_scopes[cache];
    q.last_step = steps;
    if (q.batch) return q.batch;
    // A query holds a few pairs (a character's neighbours): the CPU
    // reference on the calling thread, whatever the step's backend (the
    // backends' results are the same bit for bit), without a second pool
    // of threads or device context per ghost; an engine's task system, when
    // the def names one, is used as the step's batch uses it.
    rtcd_narrowphase_def qdef = def;
    qdef.backend = RTCD_BACKEND_CPU;
    qdef.devices = nullptr;
    qdef.threads = 1;
    if (rtcd_batch_create(&qdef, &q.batch) != RTCD_OK) {
        std::string line = std::string("rtcd: no batch for a query (") + rtcd_last_error_message() +
                           "); its pairs keep their previous contacts";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        q.batch = nullptr;
    }
    return q.batch;
}

void rtcdPluginState::closeIdleScopes()
{
    for (auto it = query_scopes.begin(); it != query_scopes.end();) {
        if (steps - it->second.last_step > k_scope_idle_steps) {
            rtcd_batch_release(it->second.batch);
            it = query_scopes.erase(it);
        } else {
            ++it;
        }
    }
}

void rtcdPluginState::closeScopes()
{
    for (auto& q : query_scopes) rtcd_batch_release(q.second.batch);
    query_scopes.clear();
}

void rtcdCollisionDispatcher::setStepPairCache(btOverlappingPairCache* cache) { m_state->step_cache = cache; }

rtcd_step_stats rtcdCollisionDispatcher::lastQueryStats() const { return m_state->query_stats; }
