// The per-pair work: the CPU reference batch and the algorithm that copies a
// pair's reduced contacts into its persistent manifold.
#include "plugin_internal.h"

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btTransformUtil.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>
#include <string>

void rtcdAlgorithmTable::grow()
{
    std::vector<const void*> keys;
    std::vector<uint32_t> slots;
    keys.swap(m_keys);
    slots.swap(m_slots);
    size_t cap = keys.empty() ? 64 : 2 * keys.size();
    m_keys.assign(cap, nullptr);
    m_slots.assign(cap, UINT32_MAX);
    m_count = 0;
    for (size_t i = 0; i < keys.size(); ++i)
        if (keys[i]) insert(keys[i], slots[i]);
}

void rtcdAlgorithmTable::insert(const void* key, uint32_t slot)
{
    if (2 * (m_count + 1) > m_keys.size()) grow(); // at most half full: short probes
    size_t mask = m_keys.size() - 1, i = hash(key) & mask;
    while (m_keys[i] && m_keys[i] != key) i = (i + 1) & mask;
    if (!m_keys[i]) m_count++;
    m_keys[i] = key;
    m_slots[i] = slot;
}

void rtcdAlgorithmTable::erase(const void* key)
{
    if (m_keys.empty()) return;
    size_t mask = m_keys.size() - 1, i = hash(key) & mask;
    while (m_keys[i] != key) {
        if (!m_keys[i]) return;
        i = (i + 1) & mask;
    }
    // Backward shift: entries after the hole that would not be found past it move into it.
    for (size_t j = (i + 1) & mask; m_keys[j]; j = (j + 1) & mask) {
        size_t home = hash(m_keys[j]) & mask;
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        m_keys[i] = m_keys[j];
        m_slots[i] = m_slots[j];
        i = j;
    }
    m_keys[i] = nullptr;
    m_slots[i] = UINT32_MAX;
    m_count--;
}

uint32_t rtcdPluginState::allocSlot()
{
    uint32_t s;
    if (!free_slots.empty()) {
        s = free_slots.back();
        free_slots.pop_back();
    } else {
        if (slots.size() >= 0x3fffffffu) throw std::bad_alloc(); // the algorithm table packs a slot in 30 bits
        s = static_cast<uint32_t>(slots.size());
        slots.push_back(rtcdPairSlot());
    }
    slots[s] = rtcdPairSlot();
    slots[s].in_use = true;
    slots[s].serial = next_serial++;
    if (slot_serial.size() <= s) slot_serial.resize(s + 1);
    slot_serial[s] = slots[s].serial;
    if (slot_live.size() <= s) slot_live.resize(s + 1);
    slot_live[s] = 1;
    slots[s].stamp = UINT32_MAX;
    slots[s].written = UINT32_MAX;
    return s;
}

void rtcdPluginState::freeSlot(uint32_t s)
{
    slots[s].in_use = false;
    free_slots.push_back(s);
}

rtcdPluginState::~rtcdPluginState()
{
    closeScopes();
    rtcd_batch_release(narrowphase);
}

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

void rtcdPluginState::computePair(const rtcdBatchEntry& e)
{
    rtcdPairSlot& slot = slots[e.slot];
    uint32_t kept = slot.count; // out of memory: the pair keeps its contacts, as in runBatch
    slot.count = 0;
    slot.stamp = stamp;
    slot_live[e.slot] = 1;
    stats.pairs_owned++;
    if (e.kind == RTCD_PAIR_MESH_PLANE) {
        const btCollisionObject* mesh_obj = e.plane_is_a ? e.b : e.a;
        const btCollisionShape* mesh_shape = e.plane_is_a ? e.shape_b : e.shape_a;
        const rtcd_mesh* mesh = meshOf(mesh_shape);
        if (!mesh) return;
        stats.pairs_owned--; // planePair counts it
        rtcdWorkerStats ws;
        planePair(e, mesh, sideOf(mesh_obj, mesh_shape, *(e.plane_is_a ? e.pose_b : e.pose_a), mesh), ws, false);
        stats.pairs_owned += ws.pairs_owned;
        stats.pairs_culled += ws.pairs_culled;
        stats.out_of_memory += ws.out_of_memory;
        if (slot.err != RTCD_OK && slot.err != RTCD_ERROR_OUT_OF_MEMORY)
            rtcd_log_message(RTCD_LOG_WARNING, rtcd_last_error_message());
        if (ws.out_of_memory) slot.count = kept;
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
    rtcd_transform pa = rtcdFromBullet(*e.pose_a);
    rtcd_transform pb = rtcdFromBullet(*e.pose_b);
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

rtcdCollisionAlgorithm::rtcdCollisionAlgorithm(const btCollisionAlgorithmConstructionInfo& ci,
                                               rtcdPluginState* state, rtcdPairKind kind, bool plane_is_a,
                                               const btCollisionObjectWrapper* w0, const btCollisionObjectWrapper* w1)
    : btCollisionAlgorithm(ci), m_state(state), m_slot(state->allocSlot()),
      m_kind(static_cast<uint8_t>(kind)), m_plane_is_a(plane_is_a ? 1 : 0)
{
    // The table holds the pair's kind with its slot: the step's walk over
    // the pair cache reads no slot (slots stay far below 2^30).
    m_state->algorithms.insert(this, m_slot | static_cast<uint32_t>(m_kind) << 30 |
                                         static_cast<uint32_t>(m_plane_is_a) << 31);
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
    slot.scope = m_state->scope; // gathered only by dispatches of the same scope
    if (child && slot.child[0] != -2 && slot.child[1] != -2) m_state->child_slots.push_back(m_slot);
}

rtcdCollisionAlgorithm::~rtcdCollisionAlgorithm()
{
    m_state->releaseManifold(m_state->slots[m_slot]);
    m_state->algorithms.erase(this);
    auto& cs = m_state->child_slots;
    for (size_t i = 0; i < cs.size(); ++i)
        if (cs[i] == m_slot) {
            cs.erase(cs.begin() + static_cast<std::ptrdiff_t>(i));
            break;
        }
    m_state->freeSlot(m_slot);
}

void rtcdCollisionAlgorithm::processCollision(const btCollisionObjectWrapper* body0,
                                              const btCollisionObjectWrapper* body1, const btDispatcherInfo& info,
                                              btManifoldResult* result)
{
    (void)info;
    rtcdPairSlot& slot = m_state->slots[m_slot];
    result->setPersistentManifold(slot.manifold);
    if (slot.written == m_state->stamp) return; // the step's write-back did it (rtcdPluginState::writeBack)
    if (slot.stamp != m_state->stamp) {
        // Not part of this step's batch (a caller outside dispatchAllCollisionPairs): compute it alone.
        rtcdBatchEntry e = rtcdEntryOf(m_slot, m_kind, m_plane_is_a, body0, body1);
        m_state->computePair(e);
    }
    // The serial path (a near callback of the program's own, contact
    // callbacks, or a lone pair): the same write, here.
    if (!m_state->dispatcher) m_state->dispatcher = m_dispatcher;
    m_state->openManifold(slot, body0->getCollisionObject(), body1->getCollisionObject());
    result->setPersistentManifold(slot.manifold);
    if (!slot.manifold) return;
    rtcdWorkerStats ws;
    m_state->writeSlot(slot, *result, ws);
    m_state->stats.contacts += ws.contacts;
    m_state->maybeRelease(slot);
}
