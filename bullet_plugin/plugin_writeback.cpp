// The step's contacts into Bullet's manifolds. A pair holds a manifold only
// while it has contacts, as Bullet's own algorithms do: Bullet's island
// builder and solver walk every manifold. Manifolds are opened and released
// serially (Bullet's pool and manifold array), in the step's pair order, and
// filled in parallel, each by one worker, so the result is the same for any
// thread count.
#include "plugin_internal.h"

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <chrono>

// Steps a pair keeps an empty manifold after its last contact: a pair that
// touches again at once keeps its manifold instead of a new one each time.
// World steps (rtcdPluginState::steps): a ghost's queries between two steps
// do not age the world's manifolds.
static const uint32_t k_idle_steps = 3;

void rtcdPluginState::openManifold(rtcdPairSlot& slot, const btCollisionObject* o0, const btCollisionObject* o1)
{
    if (slot.manifold || slot.count == 0) return;
    slot.manifold = dispatcher->getNewManifold(o0, o1);
    slot_live[static_cast<size_t>(&slot - slots.data())] = 1;
    slot.last_contact = steps;
    manifolds_held++;
    slot.query_manifold = in_query;
    query_manifolds_held += in_query;
    stats.manifolds_created++;
}

void rtcdPluginState::releaseManifold(rtcdPairSlot& slot)
{
    if (!slot.manifold) return;
    dispatcher->releaseManifold(slot.manifold);
    slot.manifold = nullptr;
    manifolds_held--;
    query_manifolds_held -= slot.query_manifold;
}

void rtcdPluginState::maybeRelease(rtcdPairSlot& slot)
{
    if (!slot.manifold || slot.manifold->getNumContacts() > 0 || steps - slot.last_contact < k_idle_steps) return;
    releaseManifold(slot);
    stats.manifolds_released++;
}

// The shape identifiers a btManifoldResult was given (protected fields):
// Bullet's addContactPoint stores them in each point.
struct rtcdResultIds : btManifoldResult {
    static void get(const btManifoldResult& r, int out[4])
    {
        out[0] = r.*(&rtcdResultIds::m_partId0);
        out[1] = r.*(&rtcdResultIds::m_partId1);
        out[2] = r.*(&rtcdResultIds::m_index0);
        out[3] = r.*(&rtcdResultIds::m_index1);
    }
};

// Marks a manifold point written in this step (not a Bullet flag).
static const int k_fresh = 1 << 29;

// btPersistentManifold::getCacheEntry over the points cached before this
// step only: the nearest within the manifold's breaking threshold, by the
// A-side anchor, the first of equals.
static int cachedEntry(const btPersistentManifold* m, const btManifoldPoint& pt)
{
    btScalar shortest = m->getContactBreakingThreshold() * m->getContactBreakingThreshold();
    int nearest = -1;
    for (int i = 0; i < m->getNumContacts(); ++i) {
        const btManifoldPoint& q = m->getContactPoint(i);
        if (q.m_contactPointFlags & k_fresh) continue;
        btVector3 d = q.m_localPointA - pt.m_localPointA;
        btScalar dist = d.dot(d);
        if (dist < shortest) shortest = dist, nearest = i;
    }
    return nearest;
}

// One contact into the manifold, matched only against the points cached
// before this step (a step's points lie closer together than the breaking
// threshold and would replace each other), each at most once: the point it
// lands on is marked fresh. Bullet's btManifoldResult::addContactPoint,
// its work done once (it matched the point a second time), and for a
// speculative point (past the breaking threshold, which addContactPoint
// refuses) the point itself with Bullet's default combined material, as
// before. A full manifold without a match gives up its shallowest point
// from before this step (addManifoldPoint's own choice could evict one of
// this step's).
static void putPoint(btManifoldResult& result, const btTransform& t_a, const btTransform& t_b,
                     const btVector3& normal, const btVector3& point, btScalar distance)
{
    btPersistentManifold* m = result.getPersistentManifold();
    const btCollisionObject* o0 = result.getBody0Internal();
    const btCollisionObject* o1 = result.getBody1Internal();
    btVector3 point_a = point + normal * distance;
    btManifoldPoint pt(t_a.invXform(point_a), t_b.invXform(point), normal, distance);
    pt.m_positionWorldOnA = point_a;
    pt.m_positionWorldOnB = point;
    int index = cachedEntry(m, pt);
    if (index < 0 && m->getNumContacts() == MANIFOLD_CACHE_SIZE) {
        int worst = -1;
        for (int i = 0; i < m->getNumContacts(); ++i) {
            const btManifoldPoint& q = m->getContactPoint(i);
            if (!(q.m_contactPointFlags & k_fresh) && (worst < 0 || q.getDistance() > m->getContactPoint(worst).getDistance()))
                worst = i;
        }
        if (worst >= 0) m->removeContactPoint(worst);
    }
    bool started = m->getNumContacts() == 0;
    bool speculative = distance > m->getContactBreakingThreshold();
    bool swapped = m->getBody0() != o0;
    int flags = o0->getCollisionFlags() | o1->getCollisionFlags();
    if (speculative) {
        pt.m_combinedFriction = btManifoldResult::calculateCombinedFriction(o0, o1);
        pt.m_combinedRestitution = btManifoldResult::calculateCombinedRestitution(o0, o1);
        pt.m_combinedRollingFriction = btManifoldResult::calculateCombinedRollingFriction(o0, o1);
        pt.m_combinedSpinningFriction = btManifoldResult::calculateCombinedSpinningFriction(o0, o1);
    } else {
        pt.m_combinedFriction = gCalculateCombinedFrictionCallback(o0, o1);
        pt.m_combinedRestitution = gCalculateCombinedRestitutionCallback(o0, o1);
        pt.m_combinedRollingFriction = gCalculateCombinedRollingFrictionCallback(o0, o1);
        pt.m_combinedSpinningFriction = gCalculateCombinedSpinningFrictionCallback(o0, o1);
        if (flags & btCollisionObject::CF_HAS_CONTACT_STIFFNESS_DAMPING) {
            pt.m_combinedContactDamping1 = gCalculateCombinedContactDampingCallback(o0, o1);
            pt.m_combinedContactStiffness1 = gCalculateCombinedContactStiffnessCallback(o0, o1);
            pt.m_contactPointFlags |= BT_CONTACT_FLAG_CONTACT_STIFFNESS_DAMPING;
        }
        if (flags & btCollisionObject::CF_HAS_FRICTION_ANCHOR) pt.m_contactPointFlags |= BT_CONTACT_FLAG_FRICTION_ANCHOR;
        btPlaneSpace1(pt.m_normalWorldOnB, pt.m_lateralFrictionDir1, pt.m_lateralFrictionDir2);
        int ids[4];
        rtcdResultIds::get(result, ids);
        pt.m_partId0 = ids[swapped ? 1 : 0];
        pt.m_partId1 = ids[swapped ? 0 : 1];
        pt.m_index0 = ids[swapped ? 3 : 2];
        pt.m_index1 = ids[swapped ? 2 : 3];
    }
    if (index >= 0)
        m->replaceContactPoint(pt, index);
    else
        index = m->addManifoldPoint(pt);
    if (index < m->getNumContacts()) m->getContactPoint(index).m_contactPointFlags |= k_fresh;
    if (speculative) return;
    if (gContactAddedCallback && (flags & btCollisionObject::CF_CUSTOM_MATERIAL_CALLBACK)) {
        const btCollisionObjectWrapper* w0 = swapped ? result.getBody1Wrap() : result.getBody0Wrap();
        const btCollisionObjectWrapper* w1 = swapped ? result.getBody0Wrap() : result.getBody1Wrap();
        (*gContactAddedCallback)(m->getContactPoint(index), w0, pt.m_partId0, pt.m_index0, w1, pt.m_partId1, pt.m_index1);
    }
    if (gContactStartedCallback && started) gContactStartedCallback(m);
}

// A body's velocity field as Bullet's solver starts from it: its own
// velocities plus what the step's external forces (gravity) add before the
// first iteration (btSequentialImpulseConstraintSolver's external impulse).
struct rtcdPointMotion {
    btVector3 lin, ang, centre;
    btVector3 at(const btVector3& p) const { return lin + ang.cross(p - centre); }
};

// Whether a speculative point (distance > 0, after the skin) may become
// active in this step's solve. Bullet's solver lets a point at distance d
// close at d/dt before it pushes: a point whose bodies cannot close the gap
// in the step only costs solver rows (a contact row, its friction row and,
// with rolling friction, three torsional rows, set up and visited every
// iteration). The velocities are the solver's start; the other contacts'
// impulses change them in the solve, hence 1.5 times the closing speed, a
// quarter of the relative speed (a body sliding or spinning turns onto its
// points) and 1 mm, which keeps the points a pile rests on at the skin's
// gap. Measured on the avalanche, seeds 1-4 (docs/dropin.md): of the
// points the older bound (2x, 1.5 mm) kept beyond this one, 0.6 % took an
// impulse in the solve, and they were 8 % of all points. The closing speed
// is the larger of the relative one and either body's own towards the
// other, should the solver stop the other (the narrow phase's reach,
// closingSpeed in plugin_step.cpp).
static bool mayClose(const rtcdPointMotion& a, const rtcdPointMotion& b, const btVector3& point_a,
                     const btVector3& point_b, const btVector3& normal_on_b, btScalar distance, btScalar dt)
{
    if (distance <= 0) return true;
    btVector3 va = a.at(point_a), vb = b.at(point_b), rel = va - vb;
    btScalar closing = std::max(std::max(-rel.dot(normal_on_b), btScalar(0)),
                                std::max(-va.dot(normal_on_b), vb.dot(normal_on_b)));
    return distance <= (btScalar(1.5) * closing + btScalar(0.25) * rel.length()) * dt + btScalar(0.001);
}

// Rolling and spinning friction once per manifold. Bullet 3.24's solver
// gives every point of a manifold three torsional rows when the bodies have
// rolling friction (Bullet 2.x gave them to one point), each limited by its
// own point's normal impulse; they act on the bodies' relative rotation
// alone, about the normal and two axes across it, which a manifold's points
// share. So once the manifold's load is known, one point carries them with
// the friction of all: the point that pushed hardest in the last solve, its
// friction scaled by the manifold's total impulse over its own, so that its
// limit is the sum of the points' while the load stays where it was. A
// manifold without impulses yet (a first touch, or points found anew) keeps
// Bullet's rows on every point: what stops a body's spin as it lands.
// Measured on the avalanche (docs/dropin.md): the solver about 14 % lighter,
// penetration the same within the seeds' spread; the same bodies spin and
// roll to a stop in Bullet's own steps (test_plugin_manifolds). Bodies with
// a custom material callback keep Bullet's points as the callback left them.
static void shareTorsionalFriction(btPersistentManifold* m, const btCollisionObject* o0, const btCollisionObject* o1)
{
    int n = m->getNumContacts();
    if (n == 0 || ((o0->getCollisionFlags() | o1->getCollisionFlags()) & btCollisionObject::CF_CUSTOM_MATERIAL_CALLBACK))
        return;
    btScalar rolling = btManifoldResult::calculateCombinedRollingFriction(o0, o1);
    btScalar spinning = btManifoldResult::calculateCombinedSpinningFriction(o0, o1);
    if (rolling == 0 && spinning == 0) return;
    int carrier = 0;
    btScalar total = 0, own = m->getContactPoint(0).m_appliedImpulse;
    for (int i = 0; i < n; ++i) {
        btScalar impulse = m->getContactPoint(i).m_appliedImpulse;
        total += impulse;
        if (impulse > own) carrier = i, own = impulse;
    }
    for (int i = 0; i < n; ++i) {
        btManifoldPoint& q = m->getContactPoint(i);
        btScalar share = !(own > 0) ? btScalar(1) : i == carrier ? total / own : btScalar(0);
        q.m_combinedRollingFriction = share * rolling;
        q.m_combinedSpinningFriction = share * spinning;
    }
}

static rtcdPointMotion pointMotion(const btCollisionObject* obj, const rtcdBodyRecord* record, uint32_t step, btScalar dt)
{
    rtcdPointMotion m;
    rtcdObjectVelocity(obj, record, step, m.lin, m.ang);
    m.centre = obj->getWorldTransform().getOrigin();
    if (const btRigidBody* body = btRigidBody::upcast(obj))
        if (!body->isStaticOrKinematicObject()) m.lin += body->getTotalForce() * body->getInvMass() * dt;
    return m;
}

void rtcdPluginState::writeSlot(rtcdPairSlot& slot, btManifoldResult& result, rtcdWorkerStats& ws)
{
    btPersistentManifold* manifold = slot.manifold;
    result.setPersistentManifold(manifold);
    // Speculative contacts (depth < 0) may lie farther apart than Bullet's
    // contact breaking threshold, which addContactPoint would refuse, and the
    // same threshold is the radius within which a new point replaces a cached
    // one: raised to the gap, every speculative point of the step would merge
    // into one. So points are matched with the default threshold, those past
    // it added by putPoint, and the threshold raised to the
    // largest gap only afterwards, for the refresh.
    // A mesh that deformed (or was rebuilt) since the last pass: cached
    // points that this pass's contacts do not match again are gone with the
    // old shape (refreshContactPoints only follows rigid motion); matched
    // ones keep their warm start (clearing them all left deforming piles
    // jittering: more standard passes, deeper contacts).
    bool changed = false;
    for (int k = 0; k < 2; ++k) {
        changed |= slot.mesh[k] != slot.seen_mesh[k] || slot.version[k] != slot.seen_version[k];
        slot.seen_mesh[k] = slot.mesh[k];
        slot.seen_version[k] = slot.version[k];
    }
    const int stale = 1 << 30; // not a Bullet flag; a matched point is overwritten without it
    if (changed)
        for (int i = 0; i < manifold->getNumContacts(); ++i) manifold->getContactPoint(i).m_contactPointFlags |= stale;
    manifold->setContactBreakingThreshold(gContactBreakingThreshold);
    btScalar gap = 0;
    // Bullet replaces the cached point nearest a new one within the breaking
    // threshold (2 cm), this step's points included, and a resting patch's
    // points lie 0.5-1.7 cm apart: a step's points would merge into each
    // other and the solver lose some (demos/rest_why: the deepest resting
    // vertices were in rtcd's points and missing from the manifold). So a
    // new point is matched only against the points cached before this step,
    // each at most once (putPoint: a point written this step is marked
    // fresh until all are in). rtcd reduces deepest first, and the deepest
    // picks its match first.
    const btTransform& t_a = manifold->getBody0()->getWorldTransform();
    const btTransform& t_b = manifold->getBody1()->getWorldTransform();
    const btScalar skin = rtcdContactSkin(def);
    const btCollisionObject* o0 = result.getBody0Internal();
    const btCollisionObject* o1 = result.getBody1Internal();
    auto recordAt = [this](const btCollisionObject* o) -> const rtcdBodyRecord* {
        int index = o->getWorldArrayIndex();
        return index >= 0 && static_cast<size_t>(index) < bodies.size() ? &bodies[static_cast<size_t>(index)] : nullptr;
    };
    const rtcdPointMotion m0 = pointMotion(o0, recordAt(o0), steps, time_step);
    const rtcdPointMotion m1 = pointMotion(o1, recordAt(o1), steps, time_step);
    for (uint32_t n = 0; n < slot.count; ++n) {
        const rtcd_contact& c = slot.contacts[n];
        btVector3 normal(c.normal_on_b[0], c.normal_on_b[1], c.normal_on_b[2]);
        btVector3 point(c.point_on_b[0], c.point_on_b[1], c.point_on_b[2]);
        btScalar distance = -c.depth - skin;
        // Only with the skin (speculative contacts: the predictive and iterative algorithms).
        if (skin > 0 && !mayClose(m0, m1, point + normal * distance, point, normal, distance, time_step)) continue;
        gap = std::max(gap, distance);
        putPoint(result, t_a, t_b, normal, point, distance);
    }
    for (int i = 0; i < manifold->getNumContacts(); ++i) manifold->getContactPoint(i).m_contactPointFlags &= ~k_fresh;
    if (changed)
        for (int i = manifold->getNumContacts() - 1; i >= 0; --i)
            if (manifold->getContactPoint(i).m_contactPointFlags & stale) manifold->removeContactPoint(i);
    manifold->setContactBreakingThreshold(std::max(gContactBreakingThreshold, gap * btScalar(1.01)));
    // Drops cached points that moved apart; the ones matched above keep their warm start.
    result.refreshContactPoints();
    // Cached points the refresh kept, the same way.
    if (skin > 0) {
        bool swapped = manifold->getBody0() != o0;
        const rtcdPointMotion& ma = swapped ? m1 : m0;
        const rtcdPointMotion& mb = swapped ? m0 : m1;
        for (int i = manifold->getNumContacts() - 1; i >= 0; --i) {
            const btManifoldPoint& q = manifold->getContactPoint(i);
            if (!mayClose(ma, mb, q.m_positionWorldOnA, q.m_positionWorldOnB, q.m_normalWorldOnB, q.getDistance(), time_step))
                manifold->removeContactPoint(i);
        }
    }
    shareTorsionalFriction(manifold, o0, o1);
    ws.contacts += static_cast<uint32_t>(manifold->getNumContacts());
    if (slot.count || manifold->getNumContacts()) slot.last_contact = steps;
    slot.written = stamp;
}

uint8_t rtcdPluginState::flagEntry(const rtcdBatchEntry& e, rtcdPairSlot& slot)
{
    if (slot.manifold) return 3;
    if (slot.count) return 1;
    // No contacts, no manifold: done (the near callback skips it).
    slot.written = stamp;
    if (e.pair_index >= 0) written_pairs[static_cast<size_t>(e.pair_index)] = 1;
    return 0;
}

void rtcdPluginState::writeBack()
{
    auto start = std::chrono::steady_clock::now();
    // Each entry's work was found where its result went into its slot
    // (flagEntry: runBatch, the mesh-plane pairs), so this pass reads no
    // slot of a pair without a manifold (most of a pile's): 1 a manifold to
    // open (serially: Bullet's pool and manifold array), 3 a manifold to
    // write; after the write, 2 one to release (serially). An entry without
    // a result this step stays 0: Bullet's dispatch computes it alone.
    uint32_t count = static_cast<uint32_t>(batch.size());
    // Serial, in pair order: manifolds for the pairs that start touching,
    // and the list of the entries whose manifold is written.
    // The list without a branch per entry (a fraction of them, in no
    // pattern), then the openings along it.
    write_list.resize(count);
    uint32_t listed = 0;
    for (uint32_t i = 0; i < count; ++i) {
        write_list[listed] = i;
        listed += entry_flag[i] != 0;
    }
    write_list.resize(listed);
    for (uint32_t i : write_list)
        if (entry_flag[i] == 1) {
            openManifold(slots[batch[i].slot], batch[i].a, batch[i].b);
            entry_flag[i] = 3;
        }
    // Parallel: each manifold filled by one worker, and whether it goes
    // back. Parallel from as many entries as the other loops (the list is
    // a fraction of them).
    uint32_t writes = static_cast<uint32_t>(write_list.size());
    uint32_t blocks = blocksOf(writes);
    block_b.assign(blocks, 0); // to release
    worker_stats.assign(rtcd_batch_worker_count(narrowphase), rtcdWorkerStats());
    uint32_t min_parallel = count >= k_block_parallel_warm ? 0 : writes + k_block;
    forBlocks(writes, min_parallel, [this](uint32_t b, uint32_t begin, uint32_t end, uint32_t worker) {
        uint32_t releases = 0;
        for (uint32_t k = begin; k < end; ++k) {
            // The manifolds, their slots and entries lie in no order the
            // loop follows, and nothing of them is in the cache after the
            // batch: asked for ahead, the entry first, then its slot and
            // objects, then the manifold (its pointer in the slot).
            if (k + 3 * k_prefetch < end) rtcdPrefetch(&batch[write_list[k + 3 * k_prefetch]].slot);
            if (k + 2 * k_prefetch < end) {
                const rtcdBatchEntry& f = batch[write_list[k + 2 * k_prefetch]];
                const char* line = reinterpret_cast<const char*>(&slots[f.slot]);
                for (size_t at = 0; at < sizeof(rtcdPairSlot); at += 64) rtcdPrefetch(line + at);
                // The objects' transforms and world indices (their first 256 bytes in Bullet 3.x).
                for (const btCollisionObject* o : {f.a, f.b})
                    for (size_t at = 0; at < 256; at += 64) rtcdPrefetch(reinterpret_cast<const char*>(o) + at);
            }
            if (k + k_prefetch < end) {
                const char* m = reinterpret_cast<const char*>(slots[batch[write_list[k + k_prefetch]].slot].manifold);
                for (size_t at = 0; at < sizeof(btPersistentManifold); at += 64) rtcdPrefetch(m + at);
            }
            uint32_t i = write_list[k];
            const rtcdBatchEntry& e = batch[i];
            rtcdPairSlot& slot = slots[e.slot];
            // As Bullet's near callback and compound algorithm would pass them.
            btCollisionObjectWrapper w0(nullptr, e.shape_a, e.a, *e.pose_a, -1, slot.child[0] >= 0 ? slot.child[0] : -1);
            btCollisionObjectWrapper w1(nullptr, e.shape_b, e.b, *e.pose_b, -1, slot.child[1] >= 0 ? slot.child[1] : -1);
            btManifoldResult result(&w0, &w1);
            if (slot.child[0] >= 0) result.setShapeIdentifiersA(-1, slot.child[0]);
            if (slot.child[1] >= 0) result.setShapeIdentifiersB(-1, slot.child[1]);
            writeSlot(slot, result, worker_stats[worker]);
            if (e.pair_index >= 0) written_pairs[static_cast<size_t>(e.pair_index)] = 1;
            bool release = slot.manifold->getNumContacts() == 0 && steps - slot.last_contact >= k_idle_steps;
            entry_flag[i] = release ? 2 : 0;
            releases += release;
        }
        block_b[b] = releases;
    });
    for (const rtcdWorkerStats& ws : worker_stats) stats.contacts += ws.contacts;
    // Serial, in pair order: manifolds of pairs without contacts for a while
    // go back to Bullet's pool (maybeRelease's test, made above).
    for (uint32_t b = 0; b < blocks; ++b) {
        if (!block_b[b]) continue;
        for (uint32_t k = b * k_block, end = std::min(writes, k + k_block); k < end; ++k)
            if (entry_flag[write_list[k]] == 2) {
                releaseManifold(slots[batch[write_list[k]].slot]);
                stats.manifolds_released++;
            }
    }
    stats.writeback_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
