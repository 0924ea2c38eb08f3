// Gathering the step's pairs on the batch's workers, in fixed blocks (the
// same split for any thread count): the pair cache walk, which makes each
// rtcd pair's entry at the pair's index and claims its bodies; each body's
// mesh and record; the lists and descriptors. Serial only what Bullet and
// the mesh cache do not allow in parallel: algorithms for the pairs that
// start, and the mesh lookups the cache has not made yet this step.
#include "plugin_internal.h"

#include <algorithm>

// A pair's code after the walk: an rtcd algorithm's packed slot, or these
// (a packed slot never has all 30 slot bits set: allocSlot stops below).
static const uint32_t k_skip = UINT32_MAX;   // not rtcd's, or no collision this step
static const uint32_t k_new = 0x3fffffffu;   // no algorithm yet: made serially

// Block offsets from per-block counts; returns the total.
static uint32_t prefix(std::vector<uint32_t>& counts)
{
    uint32_t total = 0;
    for (uint32_t& c : counts) {
        uint32_t n = c;
        c = total;
        total += n;
    }
    return total;
}

// Does side k of the entry need a mesh (every side but a plane)?
static bool meshSide(const rtcdBatchEntry& e, int k)
{
    return e.kind != RTCD_PAIR_MESH_PLANE || (k == 0) != (e.plane_is_a != 0);
}

// The world index of a side that is its object's own shape in a world (it
// has a body record), or -1 (a compound's child, an object in no world).
static int bodyIndex(const rtcdBatchEntry& e, int k)
{
    const btCollisionObject* obj = k ? e.b : e.a;
    const btCollisionShape* shape = k ? e.shape_b : e.shape_a;
    return shape == obj->getCollisionShape() ? obj->getWorldArrayIndex() : -1;
}

// Asks for what the walk reads of an object: its shape, world index and
// activation state (needsCollision), and the collide-with check; the
// fields are protected, their places taken through a derived class.
struct rtcdObjectFields : btCollisionObject {
    static void prefetch(const void* obj)
    {
        const btCollisionObject* o = static_cast<const btCollisionObject*>(obj);
        rtcdPrefetch(&(o->*(&rtcdObjectFields::m_collisionShape)));
        rtcdPrefetch(&(o->*(&rtcdObjectFields::m_activationState1)));
        rtcdPrefetch(&(o->*(&rtcdObjectFields::m_checkCollideWith)));
    }
};

void rtcdPluginState::gatherPairs(btCollisionDispatcher* d, btBroadphasePair* pairs, int n)
{
    uint32_t count = static_cast<uint32_t>(n);
    pair_code.resize(count);
    // One entry per pair, at the pair's index: an rtcd pair's entry is made
    // where the walk has its objects in the cache, and no pass moves it
    // (the pairs that are not rtcd's leave holes, pair_code k_skip, which
    // every pass over the entries steps over).
    batch.resize(count); // not cleared first: the entries left from the last step are overwritten, not zeroed
    pair_entries = count;
    uint32_t blocks = blocksOf(count);
    block_b.assign(blocks, 0); // pairs without an algorithm
    // The step's claims start here: each worker's bits on whole cache lines of its own.
    uint32_t workers = rtcd_batch_worker_count(narrowphase);
    claim_stride = ((seen_size + 63) / 64 + 7) / 8 * 8 + 8;
    claim_bits.assign(workers * claim_stride, 0);
    overflow.assign(workers, 0);
    pair_segments = blocks;
    seg_begin.resize(blocks);
    for (uint32_t b = 0; b < blocks; ++b) seg_begin[b] = b * k_block;
    seg_desc.assign(blocks, 0);
    seg_plane.assign(blocks, 0);
    std::atomic<uint32_t> lone{0};
    // Pair i's entry, its sides' world indices and their bodies claimed;
    // counts its block's lists and its lone sides.
    auto place = [&](uint32_t i, uint32_t packed, const btCollisionObject* o0, const btCollisionObject* o1,
                     uint32_t worker, uint32_t& entries, uint32_t& planes, uint32_t& lone_sides_here) {
        rtcdBatchEntry& e = batch[i];
        e = {packed & 0x3fffffffu,
             static_cast<uint8_t>(packed >> 30 & 1u),
             static_cast<uint8_t>(packed >> 31),
             o0,
             o1,
             o0->getCollisionShape(),
             o1->getCollisionShape(),
             &o0->getWorldTransform(),
             &o1->getWorldTransform(),
             {nullptr, nullptr},
             static_cast<int>(i)};
        entries++;
        planes += e.kind == RTCD_PAIR_MESH_PLANE;
        for (int k = 0; k < 2; ++k) {
            if (!meshSide(e, k)) continue;
            const btCollisionObject* obj = k ? o1 : o0;
            int index = obj->getWorldArrayIndex(); // its own shape: bodyIndex
            e.body[k] = index;
            if (index < 0) lone_sides_here++;
            else if (static_cast<size_t>(index) >= seen_size) overflow[worker] = 1;
            else claimBody(obj, static_cast<size_t>(index), worker);
        }
    };
    // Parallel: which pairs collide and whose algorithm is rtcd's (Bullet's
    // near callback asks needsCollision from many threads too,
    // btCollisionDispatcherMt), and their entries.
    forBlocks(count, k_block_parallel, [&](uint32_t b, uint32_t begin, uint32_t end, uint32_t worker) {
        uint32_t entries = 0, planes = 0, fresh = 0, mine = 0;
        for (uint32_t i = begin; i < end; ++i) {
            // The pairs' proxies, their objects and the algorithms' table
            // (read at a pair's hash) lie in no order the walk follows:
            // asked for ahead, the proxies first, then what they point to.
            if (i + 2 * k_prefetch < end) {
                rtcdPrefetch(pairs[i + 2 * k_prefetch].m_pProxy0);
                rtcdPrefetch(pairs[i + 2 * k_prefetch].m_pProxy1);
            }
            if (i + k_prefetch < end) {
                const btBroadphasePair& f = pairs[i + k_prefetch];
                algorithms.prefetch(f.m_algorithm);
                rtcdObjectFields::prefetch(f.m_pProxy0->m_clientObject);
                rtcdObjectFields::prefetch(f.m_pProxy1->m_clientObject);
            }
            const btBroadphasePair& pair = pairs[i];
            const btCollisionObject* o0 = static_cast<const btCollisionObject*>(pair.m_pProxy0->m_clientObject);
            const btCollisionObject* o1 = static_cast<const btCollisionObject*>(pair.m_pProxy1->m_clientObject);
            uint32_t code = k_skip;
            if (d->needsCollision(o0, o1)) {
                if (!pair.m_algorithm) {
                    code = k_new;
                    fresh++;
                } else {
                    code = algorithms.find(pair.m_algorithm);
                }
            } else if (parallel_writeback) {
                written_pairs[i] = 1; // Bullet's default near callback does nothing for it either
            }
            pair_code[i] = code;
            if (code != k_skip && code != k_new) place(i, code, o0, o1, worker, entries, planes, mine);
        }
        seg_desc[b] = entries - planes;
        seg_plane[b] = planes;
        block_b[b] = fresh;
        if (mine) lone.fetch_add(mine, std::memory_order_relaxed);
    });
    // Serial, in pair order: the algorithms of the pairs that start, made
    // the way Bullet's near callback would (the dispatcher's pool, the
    // mesh cache, the slots), and their entries (claims as worker 0's).
    uint32_t mine = 0;
    take_memo_on = true; // off again on every way out (findAlgorithm may throw)
    struct MemoOff {
        bool& on;
        ~MemoOff() { on = false; }
    } memo_off{take_memo_on};
    take_memo[0] = take_memo[1] = {nullptr, false};
    for (uint32_t b = 0; b < blocks; ++b) {
        if (!block_b[b]) continue;
        uint32_t entries = 0, planes = 0;
        for (uint32_t i = b * k_block, end = std::min(count, i + k_block); i < end; ++i) {
            if (pair_code[i] != k_new) continue;
            btBroadphasePair& pair = pairs[i];
            const btCollisionObject* o0 = static_cast<const btCollisionObject*>(pair.m_pProxy0->m_clientObject);
            const btCollisionObject* o1 = static_cast<const btCollisionObject*>(pair.m_pProxy1->m_clientObject);
            btCollisionObjectWrapper w0(nullptr, o0->getCollisionShape(), o0, o0->getWorldTransform(), -1, -1);
            btCollisionObjectWrapper w1(nullptr, o1->getCollisionShape(), o1, o1->getWorldTransform(), -1, -1);
            pair.m_algorithm = d->findAlgorithm(&w0, &w1, nullptr, BT_CONTACT_POINT_ALGORITHMS);
            uint32_t code = pair.m_algorithm ? algorithms.find(pair.m_algorithm) : k_skip;
            pair_code[i] = code;
            if (code != k_skip) place(i, code, o0, o1, 0, entries, planes, mine);
        }
        seg_desc[b] += entries - planes;
        seg_plane[b] += planes;
    }
    lone_sides = lone.load() + mine;
}

// Is batch entry i an entry (not a hole left by a pair that is not rtcd's)?
static bool isEntry(const std::vector<uint32_t>& pair_code, uint32_t pair_entries, uint32_t i)
{
    return i >= pair_entries || pair_code[i] != k_skip;
}

void rtcdPluginState::claimBody(const btCollisionObject* obj, size_t index, uint32_t worker)
{
    uint64_t& word = claim_bits[worker * claim_stride + index / 64];
    uint64_t bit = uint64_t(1) << (index & 63);
    if (word & bit) return;
    word |= bit;
    // Written only when another object took the index: the lines stay
    // shared by the workers (a stamp written per body each step made every
    // worker's next read of its line a miss).
    if (index_obj[index].load(std::memory_order_relaxed) != obj) index_obj[index].store(obj, std::memory_order_relaxed);
}

void rtcdPluginState::prepareEntries()
{
    uint32_t count = static_cast<uint32_t>(batch.size());
    uint32_t workers = rtcd_batch_worker_count(narrowphase);
    uint32_t blocks = blocksOf(count);
    // The compounds' children (after the pair cache's entries): their
    // sides' body records, and the bodies claimed, as gatherPairs did for
    // the others.
    std::atomic<uint32_t> lone{lone_sides};
    uint32_t children = count - pair_entries;
    uint32_t segments = pair_segments + blocksOf(children);
    seg_begin.resize(segments + 1);
    seg_desc.resize(segments);
    seg_plane.resize(segments);
    for (uint32_t c = pair_segments; c < segments; ++c) seg_begin[c] = pair_entries + (c - pair_segments) * k_block;
    seg_begin[segments] = count;
    forBlocks(children, k_block_parallel, [&](uint32_t b, uint32_t begin, uint32_t end, uint32_t worker) {
        uint32_t mine = 0, planes = 0;
        for (uint32_t i = pair_entries + begin; i < pair_entries + end; ++i) {
            rtcdBatchEntry& e = batch[i];
            planes += e.kind == RTCD_PAIR_MESH_PLANE;
            for (int k = 0; k < 2; ++k) {
                int index = meshSide(e, k) ? bodyIndex(e, k) : -1;
                e.body[k] = index;
                if (!meshSide(e, k)) continue;
                if (index < 0) mine++;
                else if (static_cast<size_t>(index) >= seen_size) overflow[worker] = 1;
                else claimBody(k ? e.b : e.a, static_cast<size_t>(index), worker);
            }
        }
        seg_desc[pair_segments + b] = end - begin - planes;
        seg_plane[pair_segments + b] = planes;
        if (mine) lone.fetch_add(mine, std::memory_order_relaxed);
    });
    lone_sides = lone.load();
    // New bodies in the world: the records and bits grow, and every claim
    // is made again, serially.
    if (std::find(overflow.begin(), overflow.end(), 1) != overflow.end()) {
        for (uint32_t i = 0; i < count; ++i)
            for (int index : batch[i].body)
                if (isEntry(pair_code, pair_entries, i) && index >= 0) growBodies(static_cast<size_t>(index) + 1);
        claim_stride = ((seen_size + 63) / 64 + 7) / 8 * 8 + 8;
        claim_bits.assign(workers * claim_stride, 0);
        for (uint32_t i = 0; i < count; ++i)
            for (int k = 0; k < 2; ++k)
                if (isEntry(pair_code, pair_entries, i) && batch[i].body[k] >= 0)
                    claimBody(k ? batch[i].b : batch[i].a, static_cast<size_t>(batch[i].body[k]), 0);
    }
    // Serial: the step's bodies in world order (the same for any split),
    // the deformed shapes among theirs and the lone sides', their meshes.
    body_list.clear();
    for (size_t w = 0; w < (seen_size + 63) / 64; ++w) {
        uint64_t bits = 0;
        for (uint32_t k = 0; k < workers; ++k) bits |= claim_bits[k * claim_stride + w];
        for (size_t at = w * 64; bits; bits >>= 1, ++at)
            if (bits & 1) body_list.push_back(index_obj[at].load(std::memory_order_relaxed));
    }
    deform_shapes.clear();
    for (const btCollisionObject* obj : body_list) deform_shapes.push_back(obj->getCollisionShape());
    // The lone sides (rare: compounds' children, objects in no world).
    for (uint32_t i = 0; lone_sides && i < count; ++i)
        for (int k = 0; k < 2; ++k)
            if (isEntry(pair_code, pair_entries, i) && meshSide(batch[i], k) && batch[i].body[k] < 0)
                deform_shapes.push_back(k ? batch[i].shape_b : batch[i].shape_a);
    rtcd_task_system tasks = batchTasks();
    stats.out_of_memory += meshes.updateDeformed(deform_shapes.data(), deform_shapes.size(), stamp, &tasks);
    // Parallel: each body's mesh where the cache has it for this step
    // (peek reads only); the others serially, in world order, as before.
    uint32_t listed = static_cast<uint32_t>(body_list.size());
    body_pending.resize(listed);
    std::atomic<uint32_t> pending{0};
    parallelFor(listed, 512, 4096, [this, &pending](uint32_t begin, uint32_t end, uint32_t) {
        uint32_t mine = 0;
        for (uint32_t i = begin; i < end; ++i) {
            const btCollisionObject* obj = body_list[i];
            rtcdBodyRecord& r = bodies[static_cast<size_t>(obj->getWorldArrayIndex())];
            const rtcd_mesh* mesh = nullptr;
            body_pending[i] = !meshes.peek(obj->getCollisionShape(), stamp, &mesh);
            mine += body_pending[i];
            r.stamp = stamp;
            r.mesh = mesh;
            r.mesh_stamp = stamp;
        }
        if (mine) pending.fetch_add(mine, std::memory_order_relaxed);
    });
    for (uint32_t i = 0; pending.load(std::memory_order_relaxed) && i < listed; ++i)
        if (body_pending[i]) bodies[static_cast<size_t>(body_list[i]->getWorldArrayIndex())].mesh = meshOf(body_list[i]->getCollisionShape());
    for (uint32_t i = 0; lone_sides && i < count; ++i)
        for (int k = 0; k < 2; ++k)
            if (isEntry(pair_code, pair_entries, i) && meshSide(batch[i], k) && batch[i].body[k] < 0)
                batch[i].mesh[k] = meshOf(k ? batch[i].shape_b : batch[i].shape_a);
    // Parallel: each body's motion once (its record) and its place in the
    // batch's bodies, from 256 bodies: the worker is awake from the walk
    // (2 cores, 512 blobs: 0.068 -> 0.040 ms, and the descriptors after it
    // 0.077 -> 0.055 ms). Other loops run on the workers only when long
    // enough to gain (a worker descheduled with a range in hand stalls the
    // step; parallelFor lowers the thresholds on machines with more cores).
    if (body_descs.size() < listed) body_descs.resize(listed);
    std::atomic<uint32_t> meshless{0};
    parallelFor(listed, 64, 256, [this, &meshless](uint32_t begin, uint32_t end, uint32_t) {
        uint32_t mine = 0;
        for (uint32_t i = begin; i < end; ++i) {
            rtcdBodyRecord& r = bodies[static_cast<size_t>(body_list[i]->getWorldArrayIndex())];
            fillRecord(r, body_list[i]);
            r.call_body = i;
            rtcd_body_desc& d = body_descs[i];
            d.mesh = r.mesh_stamp == stamp ? r.mesh : nullptr; // none: no pair names it
            d.pose = r.pose;
            d.has_back = 1;
            d.back = r.back;
            mine += !r.mesh;
        }
        if (mine) meshless.fetch_add(mine, std::memory_order_relaxed);
    });
    entry_flag.assign(count, 0); // the write-back's work, set with each result (flagEntry)
    worker_stats.assign(workers, rtcdWorkerStats());
    std::atomic<uint32_t> next_body{listed};
    if (!lone_sides && !meshless.load()) {
        // Every side has its body's mesh: each mesh-mesh entry is a
        // descriptor and each mesh-plane entry a plane pair, as counted per
        // segment; one pass makes both lists and the descriptors, each
        // segment at its offsets (the same lists for any split).
        uint32_t n = prefix(seg_desc), planes = prefix(seg_plane);
        desc_entry.resize(n);
        plane_entries.resize(planes);
        pair_bodies.resize(n);
        if (body_descs.size() < listed + 2 * static_cast<size_t>(n)) body_descs.resize(listed + 2 * static_cast<size_t>(n));
        parallelFor(segments, 1, blocksOf(k_block_parallel), [&](uint32_t s0, uint32_t s1, uint32_t) {
            for (uint32_t g = s0; g < s1; ++g) {
                uint32_t od = seg_desc[g], op = seg_plane[g], end = seg_begin[g + 1];
                for (uint32_t i = seg_begin[g]; i < end; ++i) {
                    // Asked for ahead: the records and the key (the entries
                    // themselves are read in order).
                    if (i + k_prefetch < end && isEntry(pair_code, pair_entries, i + k_prefetch)) {
                        const rtcdBatchEntry& f = batch[i + k_prefetch];
                        rtcdPrefetch(&slot_serial[f.slot]);
                        for (int index : f.body)
                            if (index >= 0) {
                                const char* r = reinterpret_cast<const char*>(&bodies[static_cast<size_t>(index)]);
                                for (size_t at = 0; at < offsetof(rtcdBodyRecord, track_obj); at += 64) rtcdPrefetch(r + at);
                            }
                    }
                    if (!isEntry(pair_code, pair_entries, i)) continue;
                    rtcdBatchEntry& e = batch[i];
                    for (int k = 0; k < 2; ++k)
                        if (e.body[k] >= 0) e.mesh[k] = bodies[static_cast<size_t>(e.body[k])].mesh;
                    if (e.kind == RTCD_PAIR_MESH_PLANE) {
                        plane_entries[op++] = i;
                    } else {
                        desc_entry[od] = i;
                        describe(od++, i, next_body);
                    }
                }
            }
        });
        body_count = next_body.load();
        return;
    }
    // Else: each entry's meshes from its bodies' records, and which list it
    // joins (mesh-mesh descriptors, mesh-plane pairs), then the lists, then
    // the descriptors.
    entry_kind.resize(count);
    block_a.assign(blocks, 0); // descriptors
    block_b.assign(blocks, 0); // mesh-plane pairs
    forBlocks(count, k_block_parallel, [&](uint32_t b, uint32_t begin, uint32_t end, uint32_t worker) {
        uint32_t nd = 0, np = 0;
        for (uint32_t i = begin; i < end; ++i) {
            entry_kind[i] = 0; // in no list
            if (!isEntry(pair_code, pair_entries, i)) continue;
            rtcdBatchEntry& e = batch[i];
            for (int k = 0; k < 2; ++k)
                if (e.body[k] >= 0) e.mesh[k] = bodies[static_cast<size_t>(e.body[k])].mesh;
            uint8_t kind = 0;
            if (e.kind == RTCD_PAIR_MESH_PLANE) {
                if (e.mesh[e.plane_is_a]) {
                    kind = 2;
                    np++;
                } else { // no mesh yet (out of memory): no contacts this step
                    slots[e.slot].count = 0;
                    slots[e.slot].stamp = stamp;
                    if (parallel_writeback) entry_flag[i] = flagEntry(e, slots[e.slot]);
                    worker_stats[worker].pairs_owned++;
                }
            } else if (e.mesh[0] && e.mesh[1]) { // else computed alone when Bullet asks (its mesh may come back)
                kind = 1;
                nd++;
            }
            entry_kind[i] = kind;
        }
        block_a[b] = nd;
        block_b[b] = np;
    });
    uint32_t n = prefix(block_a);
    desc_entry.resize(n);
    plane_entries.resize(prefix(block_b));
    forBlocks(count, k_block_parallel, [&](uint32_t b, uint32_t begin, uint32_t end, uint32_t) {
        uint32_t od = block_a[b], op = block_b[b];
        for (uint32_t i = begin; i < end; ++i) {
            if (entry_kind[i] == 1) desc_entry[od++] = i;
            else if (entry_kind[i] == 2) plane_entries[op++] = i;
        }
    });
    // At most two sides of a pair are not a body's own mesh.
    if (body_descs.size() < listed + 2 * static_cast<size_t>(n)) body_descs.resize(listed + 2 * static_cast<size_t>(n));
    pair_bodies.resize(n);
    parallelFor(n, 256, k_block_parallel, [this, &next_body](uint32_t begin, uint32_t end, uint32_t) {
        for (uint32_t i = begin; i < end; ++i) {
            prefetchSides(desc_entry.data(), i, end, false);
            describe(i, desc_entry[i], next_body);
        }
    });
    body_count = next_body.load();
}

void rtcdPluginState::growBodies(size_t size)
{
    if (size <= seen_size) return;
    size_t cap = std::max(size, 2 * seen_size);
    if (cap > bodies.size()) bodies.resize(cap); // every claimable index has a record
    std::unique_ptr<std::atomic<const btCollisionObject*>[]> grown(new std::atomic<const btCollisionObject*>[cap]);
    for (size_t k = 0; k < cap; ++k)
        grown[k].store(k < seen_size ? index_obj[k].load(std::memory_order_relaxed) : nullptr, std::memory_order_relaxed);
    index_obj.swap(grown);
    seen_size = cap;
}
