// The step's narrow phase for rtcd's pairs: each body's motion once, the
// mesh-mesh descriptors and the mesh-plane pairs on the batch's workers, the
// batch, and its results into the pairs' slots.
#include "plugin_internal.h"

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btTransformUtil.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <string>

static double msSince(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The plane of a btStaticPlaneShape in world space: normal and offset.
void rtcdWorldPlane(const btCollisionShape* shape, const btTransform& pt, float out[4])
{
    const btStaticPlaneShape* plane = static_cast<const btStaticPlaneShape*>(shape);
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

// The body's pose one step back along its velocities: with the present
// pose, where each of its points is heading.
static btTransform poseBack(const btCollisionObject* obj, const btVector3& lin, const btVector3& ang, btScalar dt)
{
    const btTransform& pose = obj->getWorldTransform();
    // A still object other than a rigid body keeps its pose bit for bit
    // (a rigid body's goes through the integration, as it always has:
    // the same results as before links and kinematic objects moved).
    if (!btRigidBody::upcast(obj) && lin.isZero() && ang.isZero()) return pose;
    btTransform back;
    btTransformUtil::integrateTransform(pose, -lin, -ang, dt, back);
    return back;
}

void rtcdPluginState::fillRecord(rtcdBodyRecord& r, const btCollisionObject* obj) const
{
    // The step follows objects Bullet gives no velocity (plugin_motion.cpp);
    // a query uses what its step found.
    if (!in_query) rtcdTrack(r, obj, steps, time_step);
    btVector3 lin, ang;
    rtcdObjectVelocity(obj, &r, steps, lin, ang);
    r.pose = rtcdFromBullet(obj->getWorldTransform());
    r.back = rtcdFromBullet(poseBack(obj, lin, ang, time_step));
    r.lin = lin;
    r.ang = ang.length();
    bool mesh = r.mesh_stamp == stamp && r.mesh;
    r.reach = mesh ? meshReach(r.mesh) : 0.0f;
    r.mesh_id = mesh ? rtcd_mesh_id(r.mesh) : 0;
    r.mesh_version = mesh ? rtcd_mesh_version(r.mesh) : 0;
    r.speed = r.lin.length();
    r.turn = r.ang * r.reach;
}

const rtcdBodyRecord* rtcdPluginState::recordAt(int index) const
{
    if (index < 0 || static_cast<size_t>(index) >= bodies.size()) return nullptr;
    const rtcdBodyRecord& r = bodies[static_cast<size_t>(index)];
    return r.stamp == stamp && r.mesh_stamp == stamp && r.mesh ? &r : nullptr;
}

rtcdSide rtcdPluginState::sideOf(const btCollisionObject* obj, const btCollisionShape* shape, const btTransform& pose,
                                 const rtcd_mesh* mesh) const
{
    rtcdSide s;
    int index = obj->getWorldArrayIndex();
    if (shape == obj->getCollisionShape() && index >= 0 && static_cast<size_t>(index) < bodies.size() &&
        bodies[static_cast<size_t>(index)].stamp == stamp) {
        const rtcdBodyRecord& r = bodies[static_cast<size_t>(index)];
        s.pose = r.pose;
        s.back = r.back;
        s.lin = r.lin;
        s.ang = r.ang;
        s.reach = mesh ? r.reach : 0.0f;
        s.mesh_id = mesh ? r.mesh_id : 0;
        s.mesh_version = mesh ? r.mesh_version : 0;
        return s;
    }
    // A compound's child, or an object outside any world: computed for the
    // pair, the same way (the child's place in its object carried along).
    const rtcdBodyRecord* record = index >= 0 && static_cast<size_t>(index) < bodies.size()
                                       ? &bodies[static_cast<size_t>(index)]
                                       : nullptr;
    btVector3 lin, ang;
    rtcdObjectVelocity(obj, record, steps, lin, ang);
    btTransform back = poseBack(obj, lin, ang, time_step);
    s.pose = rtcdFromBullet(pose);
    if (shape == obj->getCollisionShape()) s.back = rtcdFromBullet(back);
    else s.back = rtcdFromBullet(back * (obj->getWorldTransform().inverse() * pose));
    s.lin = lin;
    s.ang = ang.length();
    s.mesh_id = mesh ? rtcd_mesh_id(mesh) : 0;
    s.mesh_version = mesh ? rtcd_mesh_version(mesh) : 0;
    s.reach = mesh ? meshReach(mesh) + static_cast<float>((pose.getOrigin() - obj->getWorldTransform().getOrigin()).length())
                   : 0.0f;
    return s;
}

// How fast two bodies may close in the step's solve: their relative speed,
// or either's own speed, should the solver stop the other (a body falling
// with another lands on the pile first; measured on the avalanche, a pair
// falling side by side 4 cm apart closed 10 cm in that step and went 6 cm
// into each other with no contact between them: docs/contacts.md).
static btScalar closingSpeed(const btVector3& a, const btVector3& b, btScalar a_speed, btScalar b_speed)
{
    return std::max((a - b).length(), std::max(a_speed, b_speed));
}

// How far the points of side a may move relative to b (NULL: the static
// world) over one step: closingSpeed's translation, plus each side's turn
// times its reach.
static float pairMotion(const rtcdSide& a, const rtcdSide* b, btScalar dt)
{
    btVector3 b_lin = b ? b->lin : btVector3(0, 0, 0);
    btScalar speed = closingSpeed(a.lin, b_lin, a.lin.length(), b_lin.length()) + a.ang * a.reach +
                     (b ? b->ang * b->reach : btScalar(0));
    return static_cast<float>(speed * dt);
}

void rtcdPluginState::describe(uint32_t i, uint32_t entry, std::atomic<uint32_t>& next_body)
{
    // The slot itself is not read here (a cache miss a pair): its key from
    // slot_serial, its meshes noted with the results.
    const rtcdBatchEntry& e = batch[entry];
    rtcd_body_pair& q = pair_bodies[i];
    q.key = slot_serial[e.slot];
    const rtcdBodyRecord* ra = recordAt(e.body[0]);
    const rtcdBodyRecord* rb = recordAt(e.body[1]);
    if (ra && rb && ra->mesh == e.mesh[0] && rb->mesh == e.mesh[1]) { // two bodies' own meshes (most pairs)
        q.a = ra->call_body;
        q.b = rb->call_body;
        // pairMotion's sum, term for term (the bodies' speeds and turns
        // from their records)
        btScalar speed = closingSpeed(ra->lin, rb->lin, ra->speed, rb->speed) + ra->turn + rb->turn;
        q.motion = static_cast<float>(speed * time_step);
        return;
    }
    // A compound's child (or an object outside the world): both sides as
    // bodies of this pair alone. Where they go in the table does not
    // change a result.
    rtcdSide sa = sideOf(e.a, e.shape_a, *e.pose_a, e.mesh[0]), sb = sideOf(e.b, e.shape_b, *e.pose_b, e.mesh[1]);
    uint32_t at = next_body.fetch_add(2, std::memory_order_relaxed);
    body_descs[at] = rtcd_body_desc{e.mesh[0], sa.pose, 1, sa.back};
    body_descs[at + 1] = rtcd_body_desc{e.mesh[1], sb.pose, 1, sb.back};
    q.a = at;
    q.b = at + 1;
    q.motion = pairMotion(sa, &sb, time_step); // the speculative contacts' reach
}

void rtcdPluginState::prefetchSides(const uint32_t* entries, uint32_t i, uint32_t end, bool slot) const
{
    if (i + 3 * k_prefetch < end) rtcdPrefetch(&batch[entries[i + 3 * k_prefetch]].a);
    if (i + 2 * k_prefetch < end) {
        const rtcdBatchEntry& f = batch[entries[i + 2 * k_prefetch]];
        rtcdPrefetch(f.a);
        rtcdPrefetch(f.b);
        if (slot) rtcdPrefetch(&slots[f.slot]);
    }
    if (i + k_prefetch < end) {
        const rtcdBatchEntry& f = batch[entries[i + k_prefetch]];
        for (const btCollisionObject* o : {f.a, f.b}) {
            int index = o->getWorldArrayIndex();
            if (index < 0 || static_cast<size_t>(index) >= bodies.size()) continue;
            const char* r = reinterpret_cast<const char*>(&bodies[static_cast<size_t>(index)]);
            for (size_t at = 0; at < offsetof(rtcdBodyRecord, track_obj); at += 64) rtcdPrefetch(r + at);
        }
    }
}

bool rtcdPluginState::planePair(const rtcdBatchEntry& e, const rtcd_mesh* mesh, const rtcdSide& side,
                                rtcdWorkerStats& ws, bool skip_idle)
{
    ws.pairs_owned++;
    const btCollisionObject* plane_obj = e.plane_is_a ? e.a : e.b;
    float plane[4];
    rtcdWorldPlane(plane_obj->getCollisionShape(), *(e.plane_is_a ? e.pose_a : e.pose_b), plane);
    // Speculative points only while the body moves towards the plane: a
    // body resting on it keeps the penetrating points it always had
    // (measured: points within the margin above the plane changed from
    // step to step and cost the manifold its warm start).
    btVector3 pn(plane[0], plane[1], plane[2]);
    const btVector3& lin = side.lin; // the body's (rtcdObjectVelocity)
    bool closing = lin.dot(pn) * time_step < -def.speculative_margin;
    // Otherwise the points within twice the skin (those the solver holds at
    // the skin's gap) and the body's motion (a body toppling onto the plane
    // about the points it rests on).
    float motion = pairMotion(side, nullptr, time_step);
    float reach = !def.speculative ? 0.0f
                  : closing        ? def.speculative_margin + motion
                                   : 2.0f * rtcdContactSkin(def) + motion;
    // A body whose every point lies farther above the plane than the reach
    // (its centre's height less its mesh's reach, with room for rounding)
    // has no contact: the vertex loop is skipped (most of a pile's bodies).
    float centre = plane[0] * side.pose.translation[0] + plane[1] * side.pose.translation[1] +
                   plane[2] * side.pose.translation[2] - plane[3];
    bool culled = side.reach > 0.0f && centre - side.reach * (1.0f + 1e-4f) - 1e-6f > std::max(reach, 0.0f);
    ws.pairs_culled += culled;
    if (culled && skip_idle && idleDone(e)) return false;
    rtcdPairSlot& slot = slots[e.slot];
    uint32_t kept = slot.count; // out of memory: the pair keeps its contacts, as in runBatch
    slot.count = 0;
    slot.stamp = stamp;
    slot.err = RTCD_OK;
    slot.computedWith(side.mesh_id, side.mesh_version, 0, 0);
    if (!culled) {
        rtcd_error err = rtcd_collide_plane(mesh, &side.pose, plane, e.plane_is_a, reach,
                                            def.speculative ? def.speculative_margin : 0.0f, slot.contacts, &slot.count);
        if (err == RTCD_ERROR_OUT_OF_MEMORY) {
            // Counted, so the step reports it (rtcd_world_step: RTCD_ERROR_OUT_OF_MEMORY).
            ws.out_of_memory++;
            slot.count = kept;
        } else {
            slot.err = err; // logged by the thread that drives the step
            ws.plane_errors += err != RTCD_OK;
            if (slot.count == 0) ws.pairs_culled++;
        }
    }
    noteLive(e.slot);
    return true;
}

void rtcdPluginState::gatherChildren(btDispatcher* dispatcher)
{
    // Room for every child pose first: the entries point into it.
    child_poses.resize(2 * child_slots.size());
    size_t used = 0;
    for (uint32_t k : child_slots) {
        const rtcdPairSlot& slot = slots[k];
        // As the pair cache's pairs: none while both bodies sleep; only
        // this dispatch's scope's (a query's children stay out of the step).
        if (slot.scope != scope || !dispatcher->needsCollision(slot.obj[0], slot.obj[1])) continue;
        const btCollisionShape* shape[2];
        const btTransform* pose[2];
        bool ok = true;
        for (int i = 0; i < 2 && ok; ++i) {
            const btCollisionObject* obj = slot.obj[i];
            shape[i] = obj->getCollisionShape();
            pose[i] = &obj->getWorldTransform();
            if (slot.child[i] < 0) continue;
            const btCompoundShape* c = static_cast<const btCompoundShape*>(shape[i]);
            ok = slot.child[i] < c->getNumChildShapes();
            if (!ok) break;
            shape[i] = c->getChildShape(slot.child[i]);
            child_poses[used] = obj->getWorldTransform() * c->getChildTransform(slot.child[i]);
            pose[i] = &child_poses[used++];
        }
        if (!ok) continue;
        rtcdBatchEntry e = {k,       slot.kind, slot.plane_is_a, slot.obj[0], slot.obj[1], shape[0], shape[1],
                            pose[0], pose[1],   {nullptr, nullptr}, -1};
        batch.push_back(e);
    }
}

void rtcdPluginState::runBatch()
{
    auto start = std::chrono::steady_clock::now();
    // The step's deformed GImpact shapes first, all at once on the batch's
    // workers (rtcd_mesh_update_vertices_many); then each body's mesh and
    // motion once, and every pair its place and descriptor (plugin_gather.cpp).
    prepareEntries();
    const uint32_t n = static_cast<uint32_t>(desc_entry.size());
    stats.gather_ms += msSince(start);
    // Mesh-plane pairs are a loop over vertices: here, on the same workers.
    auto plane_start = std::chrono::steady_clock::now();
    parallelFor(static_cast<uint32_t>(plane_entries.size()), 32, 128, [this](uint32_t begin, uint32_t end, uint32_t worker) {
        for (uint32_t i = begin; i < end; ++i) {
            // Entry, object, record and slot: cold after the batch, in no
            // order the loop follows; asked for ahead (prefetchSides).
            prefetchSides(plane_entries.data(), i, end);
            const rtcdBatchEntry& e = batch[plane_entries[i]];
            const rtcd_mesh* mesh = e.mesh[e.plane_is_a];
            const btCollisionObject* obj = e.plane_is_a ? e.b : e.a;
            rtcdSide side = sideOf(obj, e.plane_is_a ? e.shape_b : e.shape_a, *(e.plane_is_a ? e.pose_b : e.pose_a), mesh);
            if (planePair(e, mesh, side, worker_stats[worker], parallel_writeback) && parallel_writeback)
                entry_flag[plane_entries[i]] = flagEntry(e, slots[e.slot]);
        }
    });
    uint32_t plane_errors = 0;
    for (const rtcdWorkerStats& ws : worker_stats) {
        stats.pairs_owned += ws.pairs_owned;
        stats.pairs_culled += ws.pairs_culled;
        stats.out_of_memory += ws.out_of_memory;
        plane_errors += ws.plane_errors;
    }
    // The pairs' slots are read again only when one has an error to log.
    for (uint32_t k = 0; plane_errors && k < plane_entries.size(); ++k) {
        rtcd_error err = slots[batch[plane_entries[k]].slot].err;
        if (err != RTCD_OK && err != RTCD_ERROR_OUT_OF_MEMORY) {
            std::string line = std::string("rtcd: mesh-plane pair: ") + rtcd_error_name(err);
            rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        }
    }
    stats.plane_ms += msSince(plane_start);
    results.resize(n);
    // The checking mode asks the backend for every colliding ray.
    size_t ray_total = 0;
    if (check)
        for (uint32_t i = 0; i < n; ++i) ray_total += pairRays(i);
    if (rays.size() < ray_total) rays.resize(ray_total);
    auto batch_start = std::chrono::steady_clock::now();
    auto collide = [this, n]() {
        return rtcd_batch_collide_bodies(narrowphase, body_descs.data(), body_count, pair_bodies.data(), n,
                                         results.data(), check ? rays.data() : nullptr);
    };
    rtcd_error err = narrowphase ? collide() : RTCD_ERROR_INTERNAL;
    if (err != RTCD_OK && err != RTCD_ERROR_OUT_OF_MEMORY && narrowphase &&
        rtcd_batch_backend(narrowphase) == RTCD_BACKEND_OPENCL) {
        // A device failed mid-run: say so once and finish on the CPU reference.
        std::string line = std::string("rtcd: OpenCL batch failed (") + rtcd_last_error_message() +
                           "); switching to the CPU reference backend";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        rtcd_narrowphase_def cpu = def;
        cpu.backend = RTCD_BACKEND_CPU;
        if (open(cpu) == RTCD_OK)
            err = collide();
    }
    stats.batch_ms = msSince(batch_start);
    auto copy_start = std::chrono::steady_clock::now();
    if (err != RTCD_OK) {
        // No result this step (out of memory, or a backend that failed
        // twice): every pair keeps the contacts it had, as if its bodies
        // had not moved, and the step says so.
        std::string line = std::string("rtcd: narrow phase failed this step (") + rtcd_error_name(err) + ": " +
                           rtcd_last_error_message() + "); the pairs keep their previous contacts";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        if (err == RTCD_ERROR_OUT_OF_MEMORY) stats.out_of_memory++;
        else stats.faults++;
        for (uint32_t i = 0; i < n; ++i) {
            const rtcdBatchEntry& e = batch[desc_entry[i]];
            rtcdPairSlot& slot = slots[e.slot];
            slot.stamp = stamp;
            slot.computedWith(e.mesh[0], e.mesh[1]);
            if (parallel_writeback) entry_flag[desc_entry[i]] = flagEntry(e, slot);
        }
        return;
    }
    rtcd_batch_stats bs = rtcd_batch_last_stats(narrowphase);
    stats.batch = bs;
    stats.standard_ms += bs.standard_ms;
    stats.iterative_ms += bs.iterative_ms;
    // Each pair's contacts into its slot (one slot per pair: any worker), and
    // the step's figures from the results alone, per block and summed in
    // block order (ray_length is a floating sum: the same for any split).
    uint32_t blocks = blocksOf(n);
    block_stats.assign(blocks, rtcd_step_stats());
    // A pair whose slot holds nothing and whose result is empty is done
    // without reading its slot (idleDone).
    const bool skip_idle = parallel_writeback;
    forBlocks(n, k_block_parallel_warm, [this, skip_idle](uint32_t b, uint32_t begin, uint32_t end, uint32_t) {
        rtcd_step_stats& t = block_stats[b];
        for (uint32_t i = begin; i < end; ++i) {
            // The slots lie in no order the loop follows: each a miss, asked
            // for a few pairs ahead so that the misses overlap (the idle
            // ones' not at all). The results were written by the batch's
            // threads (another core's cache): every line of one, well ahead.
            if (i + 4 * k_prefetch < end) rtcdPrefetch(&batch[desc_entry[i + 4 * k_prefetch]].slot);
            if (i + 2 * k_prefetch < end) {
                const char* r = reinterpret_cast<const char*>(&results[i + 2 * k_prefetch]);
                for (size_t at = 0; at < sizeof(rtcd_pair_result); at += 64) rtcdPrefetch(r + at);
                rtcdPrefetch(r + sizeof(rtcd_pair_result) - 1);
            }
            if (i + k_prefetch < end) {
                uint32_t s = batch[desc_entry[i + k_prefetch]].slot;
                if (!skip_idle || slot_live[s] || results[i + k_prefetch].contact_count) rtcdPrefetch(&slots[s]);
            }
            const uint32_t entry = desc_entry[i];
            const rtcdBatchEntry& e = batch[entry];
            const rtcd_pair_result& r = results[i];
            bool done = skip_idle && !r.contact_count && idleDone(e); // its entry_flag stays 0
            if (!done) {
                rtcdPairSlot& slot = slots[e.slot];
                slot.stamp = stamp;
                slot.count = r.contact_count;
                slot.computedWith(e.mesh[0], e.mesh[1]);
                for (uint32_t c = 0; c < r.contact_count; ++c) slot.contacts[c] = r.contacts[c];
                if (parallel_writeback) entry_flag[entry] = flagEntry(e, slot);
                noteLive(e.slot);
            }
            (r.standard_pass ? t.standard_pairs : t.iterative_pairs)++;
            t.predictive_rays += r.predictive_rays;
            t.walk_steps += r.walk_steps;
            t.kept_rays += r.kept_rays + r.kept_predictions;
            t.ray_length += r.ray_length;
            t.pairs_culled += r.standard_pass && r.rays_cast == 0; // no candidate, or the separation test
            t.rays_cast += r.rays_cast;
            t.colliding_rays += r.colliding_rays;
        }
    });
    for (const rtcd_step_stats& t : block_stats) {
        stats.standard_pairs += t.standard_pairs;
        stats.iterative_pairs += t.iterative_pairs;
        stats.predictive_rays += t.predictive_rays;
        stats.walk_steps += t.walk_steps;
        stats.kept_rays += t.kept_rays;
        stats.ray_length += t.ray_length;
        stats.pairs_culled += t.pairs_culled;
        stats.rays_cast += t.rays_cast;
        stats.colliding_rays += t.colliding_rays;
    }
    stats.pairs_owned += n;
    if (check) { // the checking mode's comparison, in pair order
        size_t ray_offset = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const rtcd_body_desc& a = body_descs[pair_bodies[i].a];
            const rtcd_body_desc& b = body_descs[pair_bodies[i].b];
            checkPair(a.mesh, a.pose, b.mesh, b.pose, rays.data() + ray_offset, results[i].colliding_rays);
            ray_offset += pairRays(i);
        }
    }
    stats.writeback_ms += msSince(copy_start);
}
