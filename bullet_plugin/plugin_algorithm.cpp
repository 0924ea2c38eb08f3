// The per-pair work: the CPU reference batch and the algorithm that copies a
// pair's reduced contacts into its persistent manifold.
#include "plugin_internal.h"

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btTransformUtil.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

uint32_t rtcdPluginState::allocSlot()
{
    uint32_t s;
    if (!free_slots.empty()) {
        s = free_slots.back();
        free_slots.pop_back();
    } else {
        s = static_cast<uint32_t>(slots.size());
        slots.push_back(rtcdPairSlot());
    }
    slots[s] = rtcdPairSlot();
    slots[s].in_use = true;
    slots[s].serial = next_serial++;
    slots[s].stamp = UINT32_MAX;
    return s;
}

void rtcdPluginState::freeSlot(uint32_t s)
{
    slots[s].in_use = false;
    free_slots.push_back(s);
}

rtcdPluginState::~rtcdPluginState() { rtcd_batch_release(narrowphase); }

rtcd_error rtcdPluginState::open(const rtcd_narrowphase_def& wanted)
{
    rtcd_error err = rtcd_narrowphase_def_validate(&wanted);
    if (err != RTCD_OK) return err;
    rtcd_batch* batch = nullptr;
    err = rtcd_batch_create(&wanted, &batch);
    rtcd_narrowphase_def used = wanted;
    if (err != RTCD_OK && err != RTCD_ERROR_OUT_OF_MEMORY) {
        // The backend asked for cannot be had (no device, kernels that do not
        // build, a build without OpenCL): the CPU reference, with a notice.
        std::string line = std::string("rtcd: no usable ") + rtcd_backend_name(wanted.backend) +
                           " backend, using the CPU reference (" + rtcd_error_name(err) + ": " +
                           rtcd_last_error_message() + ")";
        // A build log can be long: the notice keeps its first line, the full log stays in rtcd_last_error_message.
        size_t cut = line.find('\n');
        if (cut != std::string::npos) line = line.substr(0, cut) + " ...)";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        used.backend = RTCD_BACKEND_CPU;
        err = rtcd_batch_create(&used, &batch);
    }
    if (err != RTCD_OK) return err;
    rtcd_batch_release(narrowphase);
    narrowphase = batch;
    def = rtcd_batch_def(batch);
    return RTCD_OK;
}


void rtcdPluginState::checkPair(const rtcd_mesh* a, const rtcd_transform& pa, const rtcd_mesh* b,
                                const rtcd_transform& pb, const rtcd_ray_hit* tested, uint32_t count)
{
    uint32_t cap = rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(b), n = 0;
    if (check_rays.size() < cap) check_rays.resize(cap);
    rtcd_ray_agreement agreement;
    // Lengths within a micrometre per metre of body size count as the same ray.
    float lo[3], hi[3];
    rtcd_mesh_bounds(a, lo, hi);
    float tolerance = 1e-4f * std::max(hi[0] - lo[0], std::max(hi[1] - lo[1], hi[2] - lo[2]));
    if (rtcd_collide_standard(&def, a, &pa, b, &pb, check_rays.data(), cap, &n, nullptr) != RTCD_OK ||
        rtcd_compare_rays(check_rays.data(), n, tested, count, tolerance, &agreement) != RTCD_OK) {
        rtcd_log_message(RTCD_LOG_WARNING, rtcd_last_error_message());
        return;
    }
    stats.check_rays += agreement.compared;
    stats.check_incorrect += agreement.incorrect;
    stats.check_ray_length += agreement.reference_length;
}

// The plane of a btStaticPlaneShape in world space: normal and offset.
static void world_plane(const btCollisionObject* plane_obj, const btTransform& pt, float out[4])
{
    const btStaticPlaneShape* plane = static_cast<const btStaticPlaneShape*>(plane_obj->getCollisionShape());
    btVector3 n = pt.getBasis() * plane->getPlaneNormal();
    btScalar d = n.dot(pt * (plane->getPlaneNormal() * plane->getPlaneConstant()));
    for (int k = 0; k < 3; ++k) out[k] = static_cast<float>(n[k]);
    out[3] = static_cast<float>(d);
}

// Largest distance of a mesh point from its body's origin.
static float meshReach(const rtcd_mesh* mesh)
{
    float lo[3], hi[3], r2 = 0.0f;
    rtcd_mesh_bounds(mesh, lo, hi);
    for (int k = 0; k < 3; ++k) {
        float c = std::max(std::fabs(lo[k]), std::fabs(hi[k]));
        r2 += c * c;
    }
    return std::sqrt(r2);
}

static btVector3 linearVelocity(const btCollisionObject* obj)
{
    const btRigidBody* body = btRigidBody::upcast(obj);
    return body ? body->getLinearVelocity() : btVector3(0, 0, 0);
}

static btScalar angularSpeed(const btCollisionObject* obj)
{
    const btRigidBody* body = btRigidBody::upcast(obj);
    return body ? body->getAngularVelocity().length() : btScalar(0);
}

// The body's pose one step back along its present velocities: with the
// present pose, where each of its points is heading.
static btTransform poseBackBullet(const btCollisionObject* obj, btScalar dt)
{
    const btRigidBody* body = btRigidBody::upcast(obj);
    if (!body) return obj->getWorldTransform();
    btTransform back;
    btTransformUtil::integrateTransform(obj->getWorldTransform(), -body->getLinearVelocity(),
                                        -body->getAngularVelocity(), dt, back);
    return back;
}

static rtcd_transform poseBack(const btCollisionObject* obj, btScalar dt)
{
    return rtcdFromBullet(poseBackBullet(obj, dt));
}

// One side of an entry one step back: the object's, or a compound child's
// (the object's back pose times the child's place in it).
rtcd_transform rtcdPluginState::backOfSide(const btCollisionObject* obj, const btCollisionShape* shape,
                                           const btTransform& pose)
{
    if (shape == obj->getCollisionShape()) return backOf(obj);
    return rtcdFromBullet(poseBackBullet(obj, time_step) * (obj->getWorldTransform().inverse() * pose));
}

const rtcd_transform& rtcdPluginState::backOf(const btCollisionObject* obj)
{
    // Once per body and step (a body is in many pairs), by its index in the world.
    int index = obj->getWorldArrayIndex();
    if (index < 0) {
        back_scratch = poseBack(obj, time_step);
        return back_scratch;
    }
    size_t k = static_cast<size_t>(index);
    if (k >= back_poses.size()) {
        back_poses.resize(k + 1);
        back_stamps.resize(k + 1, 0);
    }
    if (back_stamps[k] != stamp) {
        back_poses[k] = poseBack(obj, time_step);
        back_stamps[k] = stamp;
    }
    return back_poses[k];
}

// How far a mesh placed at `pose` reaches from its object's centre of
// rotation (a compound's child sits away from it).
static float sideReach(const btCollisionObject* obj, const rtcd_mesh* mesh, const btTransform& pose)
{
    return meshReach(mesh) + static_cast<float>((pose.getOrigin() - obj->getWorldTransform().getOrigin()).length());
}

float rtcdPluginState::pairMotion(const btCollisionObject* a, float reach_a, const btCollisionObject* b,
                                  float reach_b) const
{
    // Relative translation, plus each body's turn times its reach.
    btScalar speed = (linearVelocity(a) - (b ? linearVelocity(b) : btVector3(0, 0, 0))).length() +
                     angularSpeed(a) * reach_a + (b ? angularSpeed(b) * reach_b : btScalar(0));
    return static_cast<float>(speed * time_step);
}

void rtcdPluginState::computePair(const rtcdBatchEntry& e)
{
    rtcdPairSlot& slot = slots[e.slot];
    uint32_t kept = slot.count; // out of memory: the pair keeps its contacts, as in runBatch
    slot.count = 0;
    slot.stamp = stamp;
    stats.pairs_owned++;
    if (e.kind == RTCD_PAIR_MESH_PLANE) {
        const btCollisionObject* mesh_obj = e.plane_is_a ? e.b : e.a;
        const btCollisionObject* plane_obj = e.plane_is_a ? e.a : e.b;
        const btTransform& mesh_pose = e.plane_is_a ? e.pose_b : e.pose_a;
        const rtcd_mesh* mesh = meshOf(e.plane_is_a ? e.shape_b : e.shape_a);
        if (!mesh) return;
        slot.computedWith(mesh, nullptr);
        float plane[4];
        world_plane(plane_obj, e.plane_is_a ? e.pose_a : e.pose_b, plane);
        rtcd_transform pose = rtcdFromBullet(mesh_pose);
        // Speculative points only while the body moves towards the plane: a
        // body resting on it keeps the penetrating points it always had
        // (measured: points within the margin above the plane changed from
        // step to step and cost the manifold its warm start).
        btVector3 pn(plane[0], plane[1], plane[2]);
        bool closing = linearVelocity(mesh_obj).dot(pn) * time_step < -def.speculative_margin;
        float reach = def.speculative && closing
                          ? def.speculative_margin + pairMotion(mesh_obj, sideReach(mesh_obj, mesh, mesh_pose), nullptr, 0)
                          : 0.0f;
        rtcd_error err = rtcd_collide_plane(mesh, &pose, plane, e.plane_is_a, reach,
                                            def.speculative ? def.speculative_margin : 0.0f, slot.contacts, &slot.count);
        if (err == RTCD_ERROR_OUT_OF_MEMORY) {
            // Counted, so the step reports it (rtcd_world_step: RTCD_ERROR_OUT_OF_MEMORY).
            stats.out_of_memory++;
            slot.count = kept;
            return;
        }
        if (err != RTCD_OK) rtcd_log_message(RTCD_LOG_WARNING, rtcd_last_error_message());
        if (slot.count == 0) stats.pairs_culled++;
        return;
    }
    // A lone pair has no place in the batch (its key would make every other
    // pair forget its state): the standard algorithm.
    const rtcd_mesh* ma = meshOf(e.shape_a);
    const rtcd_mesh* mb = meshOf(e.shape_b);
    if (!ma || !mb) return;
    slot.computedWith(ma, mb);
    uint32_t cap = rtcd_mesh_vertex_count(ma) + rtcd_mesh_vertex_count(mb), n = 0;
    if (rays.size() < cap) rays.resize(cap);
    if (contacts.size() < cap) contacts.resize(cap);
    rtcd_transform pa = rtcdFromBullet(e.pose_a);
    rtcd_transform pb = rtcdFromBullet(e.pose_b);
    rtcd_narrowphase_stats st;
    rtcd_error err = rtcd_collide_standard(&def, ma, &pa, mb, &pb, rays.data(), cap, &n, &st);
    if (err == RTCD_ERROR_OUT_OF_MEMORY) {
        // Its scratch: counted, so the step reports it; the pair keeps its contacts.
        stats.out_of_memory++;
        slot.count = kept;
        return;
    }
    if (err != RTCD_OK) {
        // A non-finite pose: the pair gets no contacts, and says why.
        rtcd_log_message(RTCD_LOG_WARNING, rtcd_last_error_message());
        return;
    }
    stats.standard_pairs++;
    stats.pairs_culled += st.culled;
    stats.rays_cast += st.rays_cast;
    stats.colliding_rays += st.colliding_rays;
    for (uint32_t i = 0; i < n; ++i) {
        contacts[i] = rtcd_contact_from_ray(&rays[i], def.contact_normal);
        stats.ray_length += rays[i].length;
    }
    slot.count = rtcd_reduce_contacts(contacts.data(), n, slot.contacts);
}

const rtcd_mesh* rtcdPluginState::meshOf(const btCollisionShape* shape)
{
    // One lookup, as every pair of every step asks; a GImpact shape is also
    // looked at for a deformation, once a step.
    bool oom = false;
    const rtcd_mesh* m = meshes.current(shape, stamp, &oom);
    if (oom) stats.out_of_memory++;
    return m;
}

void rtcdPluginState::gatherChildren(btDispatcher* dispatcher)
{
    for (uint32_t k : child_slots) {
        const rtcdPairSlot& slot = slots[k];
        // As the pair cache's pairs: none while both bodies sleep.
        if (!dispatcher->needsCollision(slot.obj[0], slot.obj[1])) continue;
        const btCollisionShape* shape[2];
        btTransform pose[2];
        bool ok = true;
        for (int i = 0; i < 2 && ok; ++i) {
            const btCollisionObject* obj = slot.obj[i];
            shape[i] = obj->getCollisionShape();
            pose[i] = obj->getWorldTransform();
            if (slot.child[i] < 0) continue;
            const btCompoundShape* c = static_cast<const btCompoundShape*>(shape[i]);
            ok = slot.child[i] < c->getNumChildShapes();
            if (!ok) break;
            shape[i] = c->getChildShape(slot.child[i]);
            pose[i] = pose[i] * c->getChildTransform(slot.child[i]);
        }
        if (!ok) continue;
        rtcdBatchEntry e = {k, slot.kind, slot.plane_is_a, slot.obj[0], slot.obj[1], shape[0], shape[1], pose[0], pose[1]};
        batch.push_back(e);
    }
}

void rtcdPluginState::runBatch()
{
    // Mesh-plane pairs are a loop over vertices: the CPU does them here, the
    // mesh-mesh pairs go to the backend as one batch.
    descs.clear();
    desc_slot.clear();
    for (const rtcdBatchEntry& e : batch) {
        if (e.kind == RTCD_PAIR_MESH_PLANE) {
            computePair(e);
            continue;
        }
        rtcd_pair_desc d;
        d.a = meshOf(e.shape_a);
        d.b = meshOf(e.shape_b);
        if (!d.a || !d.b) continue;
        slots[e.slot].computedWith(d.a, d.b);
        d.pose_a = rtcdFromBullet(e.pose_a);
        d.pose_b = rtcdFromBullet(e.pose_b);
        d.key = slots[e.slot].serial;
        // The speculative contacts' reach.
        d.motion = pairMotion(e.a, sideReach(e.a, d.a, e.pose_a), e.b, sideReach(e.b, d.b, e.pose_b));
        d.has_back = 1;
        d.back_a = backOfSide(e.a, e.shape_a, e.pose_a);
        d.back_b = backOfSide(e.b, e.shape_b, e.pose_b);
        descs.push_back(d);
        desc_slot.push_back(e.slot);
    }
    results.resize(descs.size());
    // The checking mode asks the backend for every colliding ray.
    size_t ray_total = 0;
    if (check)
        for (const rtcd_pair_desc& d : descs) ray_total += rtcd_mesh_vertex_count(d.a) + rtcd_mesh_vertex_count(d.b);
    if (rays.size() < ray_total) rays.resize(ray_total);
    uint32_t n = static_cast<uint32_t>(descs.size());
    auto start = std::chrono::steady_clock::now();
    rtcd_error err = narrowphase ? rtcd_batch_collide(narrowphase, descs.data(), n, results.data(),
                                                      check ? rays.data() : nullptr)
                                 : RTCD_ERROR_INTERNAL;
    if (err != RTCD_OK && err != RTCD_ERROR_OUT_OF_MEMORY && narrowphase &&
        rtcd_batch_backend(narrowphase) == RTCD_BACKEND_OPENCL) {
        // A device failed mid-run: say so once and finish on the CPU reference.
        std::string line = std::string("rtcd: OpenCL batch failed (") + rtcd_last_error_message() +
                           "); switching to the CPU reference backend";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        rtcd_narrowphase_def cpu = def;
        cpu.backend = RTCD_BACKEND_CPU;
        if (open(cpu) == RTCD_OK)
            err = rtcd_batch_collide(narrowphase, descs.data(), n, results.data(), check ? rays.data() : nullptr);
    }
    stats.batch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (err != RTCD_OK) {
        // No result this step (out of memory, or a backend that failed
        // twice): every pair keeps the contacts it had, as if its bodies
        // had not moved, and the step says so.
        std::string line = std::string("rtcd: narrow phase failed this step (") + rtcd_error_name(err) + ": " +
                           rtcd_last_error_message() + "); the pairs keep their previous contacts";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        if (err == RTCD_ERROR_OUT_OF_MEMORY) stats.out_of_memory++;
        else stats.faults++;
        for (uint32_t k : desc_slot) slots[k].stamp = stamp;
        return;
    }
    rtcd_batch_stats bs = rtcd_batch_last_stats(narrowphase);
    stats.batch = bs;
    stats.standard_ms += bs.standard_ms;
    stats.iterative_ms += bs.iterative_ms;
    size_t ray_offset = 0;
    for (size_t i = 0; i < descs.size(); ++i) {
        rtcdPairSlot& slot = slots[desc_slot[i]];
        const rtcd_pair_result& r = results[i];
        (r.standard_pass ? stats.standard_pairs : stats.iterative_pairs)++;
        stats.predictive_rays += r.predictive_rays;
        stats.walk_steps += r.walk_steps;
        stats.kept_rays += r.kept_rays + r.kept_predictions;
        stats.ray_length += r.ray_length;
        if (check) {
            const rtcd_pair_desc& d = descs[i];
            checkPair(d.a, d.pose_a, d.b, d.pose_b, rays.data() + ray_offset, r.colliding_rays);
            ray_offset += rtcd_mesh_vertex_count(d.a) + rtcd_mesh_vertex_count(d.b);
        }
        slot.stamp = stamp;
        slot.count = r.contact_count;
        for (uint32_t c = 0; c < r.contact_count; ++c) slot.contacts[c] = r.contacts[c];
        stats.pairs_owned++;
        stats.pairs_culled += r.standard_pass && r.rays_cast == 0; // no candidate, or the separation test
        stats.rays_cast += r.rays_cast;
        stats.colliding_rays += r.colliding_rays;
    }
}

rtcdCollisionAlgorithm::rtcdCollisionAlgorithm(const btCollisionAlgorithmConstructionInfo& ci,
                                               rtcdPluginState* state, rtcdPairKind kind, bool plane_is_a,
                                               const btCollisionObjectWrapper* w0, const btCollisionObjectWrapper* w1)
    : btCollisionAlgorithm(ci), m_state(state), m_manifold(nullptr), m_slot(state->allocSlot()),
      m_kind(static_cast<uint8_t>(kind)), m_plane_is_a(plane_is_a ? 1 : 0)
{
    m_state->algorithms.insert(this);
    // A compound's child (one level: the wrapper's parent is the object's
    // own) joins the step's batch through its slot.
    rtcdPairSlot& slot = m_state->slots[m_slot];
    slot.kind = m_kind;
    slot.plane_is_a = m_plane_is_a;
    const btCollisionObjectWrapper* w[2] = {w0, w1};
    bool child = false;
    for (int k = 0; k < 2; ++k) {
        slot.obj[k] = w[k]->getCollisionObject();
        slot.child[k] = -1;
        if (w[k]->getCollisionShape() == slot.obj[k]->getCollisionShape()) continue;
        bool direct = w[k]->m_parent && !w[k]->m_parent->m_parent &&
                      w[k]->m_parent->getCollisionShape() == slot.obj[k]->getCollisionShape() &&
                      slot.obj[k]->getCollisionShape()->isCompound();
        slot.child[k] = direct ? w[k]->m_index : -2; // -2: deeper than one level, computed alone
        child = true;
    }
    if (child && slot.child[0] != -2 && slot.child[1] != -2) m_state->child_slots.push_back(m_slot);
}

rtcdCollisionAlgorithm::~rtcdCollisionAlgorithm()
{
    if (m_manifold) m_dispatcher->releaseManifold(m_manifold);
    m_state->algorithms.erase(this);
    auto& cs = m_state->child_slots;
    for (size_t i = 0; i < cs.size(); ++i)
        if (cs[i] == m_slot) {
            cs.erase(cs.begin() + static_cast<std::ptrdiff_t>(i));
            break;
        }
    m_state->freeSlot(m_slot);
}

// btManifoldResult::addContactPoint without its distance limit: a point of
// a speculative contact, matched against the cached ones within the
// manifold's (default) breaking threshold, with Bullet's combined material.
static void addSpeculativePoint(btManifoldResult& result, const btVector3& normal_on_b, const btVector3& point_on_b,
                                btScalar distance)
{
    btPersistentManifold* m = result.getPersistentManifold();
    const btCollisionObject* o0 = result.getBody0Internal();
    const btCollisionObject* o1 = result.getBody1Internal();
    bool swapped = m->getBody0() != o0;
    btVector3 point_a = point_on_b + normal_on_b * distance;
    const btTransform& t_a = (swapped ? o1 : o0)->getWorldTransform();
    const btTransform& t_b = (swapped ? o0 : o1)->getWorldTransform();
    btManifoldPoint pt(t_a.invXform(point_a), t_b.invXform(point_on_b), normal_on_b, distance);
    pt.m_positionWorldOnA = point_a;
    pt.m_positionWorldOnB = point_on_b;
    pt.m_combinedFriction = btManifoldResult::calculateCombinedFriction(o0, o1);
    pt.m_combinedRestitution = btManifoldResult::calculateCombinedRestitution(o0, o1);
    pt.m_combinedRollingFriction = btManifoldResult::calculateCombinedRollingFriction(o0, o1);
    pt.m_combinedSpinningFriction = btManifoldResult::calculateCombinedSpinningFriction(o0, o1);
    int index = m->getCacheEntry(pt);
    if (index >= 0)
        m->replaceContactPoint(pt, index);
    else
        m->addManifoldPoint(pt);
}

void rtcdCollisionAlgorithm::processCollision(const btCollisionObjectWrapper* body0,
                                              const btCollisionObjectWrapper* body1, const btDispatcherInfo& info,
                                              btManifoldResult* result)
{
    (void)info;
    if (!m_manifold) m_manifold = m_dispatcher->getNewManifold(body0->getCollisionObject(), body1->getCollisionObject());
    result->setPersistentManifold(m_manifold);
    rtcdPairSlot& slot = m_state->slots[m_slot];
    if (slot.stamp != m_state->stamp) {
        // Not part of this step's batch (a caller outside dispatchAllCollisionPairs): compute it alone.
        rtcdBatchEntry e = rtcdEntryOf(m_slot, m_kind, m_plane_is_a, body0, body1);
        m_state->computePair(e);
    }
    // Speculative contacts (depth < 0) may lie farther apart than Bullet's
    // contact breaking threshold, which addContactPoint would refuse, and the
    // same threshold is the radius within which a new point replaces a cached
    // one: raised to the gap, every speculative point of the step would merge
    // into one. So points are matched with the default threshold, those past
    // it added here (addSpeculativePoint), and the threshold raised to the
    // largest gap only afterwards, for the refresh.
    // A mesh that deformed (or was rebuilt) since the last pass: cached
    // points that this pass's contacts do not match again are gone with the
    // old shape (refreshContactPoints only follows rigid motion); matched
    // ones keep their warm start (clearing them all left deforming piles
    // jittering: more standard passes, deeper contacts).
    bool changed = false;
    for (int k = 0; k < 2; ++k) {
        changed |= slot.mesh[k] != m_mesh[k] || slot.version[k] != m_version[k];
        m_mesh[k] = slot.mesh[k];
        m_version[k] = slot.version[k];
    }
    const int stale = 1 << 30; // not a Bullet flag; a matched point is overwritten without it
    if (changed)
        for (int i = 0; i < m_manifold->getNumContacts(); ++i) m_manifold->getContactPoint(i).m_contactPointFlags |= stale;
    m_manifold->setContactBreakingThreshold(gContactBreakingThreshold);
    btScalar gap = 0;
    for (uint32_t i = 0; i < slot.count; ++i) {
        const rtcd_contact& c = slot.contacts[i];
        btVector3 normal(c.normal_on_b[0], c.normal_on_b[1], c.normal_on_b[2]);
        btVector3 point(c.point_on_b[0], c.point_on_b[1], c.point_on_b[2]);
        btScalar distance = -c.depth;
        gap = std::max(gap, distance);
        if (distance > gContactBreakingThreshold)
            addSpeculativePoint(*result, normal, point, distance);
        else
            result->addContactPoint(normal, point, distance);
    }
    if (changed)
        for (int i = m_manifold->getNumContacts() - 1; i >= 0; --i)
            if (m_manifold->getContactPoint(i).m_contactPointFlags & stale) m_manifold->removeContactPoint(i);
    m_manifold->setContactBreakingThreshold(std::max(gContactBreakingThreshold, gap * btScalar(1.01)));
    // Drops cached points that moved apart; the ones matched above keep their warm start.
    result->refreshContactPoints();
    m_state->stats.contacts += static_cast<uint32_t>(m_manifold->getNumContacts());
}
