// Private to the Bullet plugin: the per-dispatcher state, the per-pair slots
// and the collision algorithm that copies batch results into manifolds.
#ifndef RTCD_PLUGIN_INTERNAL_H
#define RTCD_PLUGIN_INTERNAL_H

#include <rtcd/rtcd_bullet.h>

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// What a Bullet shape is to rtcd.
enum rtcdShapeRole {
    RTCD_ROLE_NONE = 0,
    RTCD_ROLE_MESH,     // btGImpactMeshShape: a dynamic concave mesh (welded and repaired as needed)
    RTCD_ROLE_CONVEX,   // box, sphere, capsule, cylinder, cone, convex hull...: tessellated
    RTCD_ROLE_SURFACE,  // btBvhTriangleMeshShape (scaled too), btHeightfieldTerrainShape: open one-sided surface
    RTCD_ROLE_PLANE,    // btStaticPlaneShape
    RTCD_ROLE_COMPOUND  // btCompoundShape: Bullet's compound algorithm, rtcd per child
};
rtcdShapeRole rtcdRoleOf(const btCollisionShape* shape);
const char* rtcdRoleName(rtcdShapeRole role);

// Meshes rtcd built from Bullet shapes, one per shape (shared by every body
// using it), or the reason it declined the shape.
class rtcdMeshCache
{
public:
    ~rtcdMeshCache();
    // NULL when rtcd cannot take the shape; the first refusal per shape is
    // logged with the reason. Out of memory is no refusal: nothing is kept,
    // *out_of_memory is set and the next call tries again.
    const rtcd_mesh* meshFor(const btCollisionShape* shape, bool* out_of_memory = nullptr);
    const rtcd_mesh* find(const btCollisionShape* shape) const;
    // The shape's mesh as of this step (`stamp`): a deformed GImpact shape
    // (its update flag, another local box, or refresh()) is read again once
    // per step, then the mesh updated in place or rebuilt (rtcd_bullet.h).
    const rtcd_mesh* current(const btCollisionShape* shape, uint32_t stamp, bool* out_of_memory);
    // What current() returns at `stamp` when it has nothing to do (the
    // shape was looked at this step, or its mesh is the caller's): true and
    // *mesh, else false. Reads only: any number of threads at once, while
    // nothing else runs on the cache.
    bool peek(const btCollisionShape* shape, uint32_t stamp, const rtcd_mesh** mesh) const;
    // The step's deformed GImpact shapes among `shapes` (repeats allowed),
    // updated together before the step's pairs read them: the in-place
    // updates in one rtcd_mesh_update_vertices_many over `tasks`, the
    // rebuilds one by one; current() then finds them done. Returns how many
    // ran out of memory (the old shape this step, tried again the next).
    uint32_t updateDeformed(const btCollisionShape* const* shapes, size_t count, uint32_t stamp,
                            const rtcd_task_system* tasks);
    void refresh(const btCollisionShape* shape);
    void use(const btCollisionShape* shape, rtcd_mesh* mesh);

private:
    struct Entry {
        rtcd_mesh* mesh = nullptr; // NULL: declined
        // What the mesh was built from, compared on a new pair and once a
        // step (Bullet shapes carry no id; geometry_of in plugin_meshes.cpp
        // says what it covers and what it cannot see): a shape freed and
        // another made at the same address, or a changed scaling or margin,
        // shows up here and is rebuilt.
        const void* source;
        btVector3 scaling;
        btScalar margin;
        int type;
        uint64_t geometry;
        // Deformation (GImpact shapes): the local box the mesh was read at,
        // whether its vertices are the shape's as given (in place updates),
        // the step it was last looked at, a refresh asked for, and a mesh
        // the caller keeps up to date itself (use()).
        btVector3 box_lo{0, 0, 0}, box_hi{0, 0, 0};
        bool as_given = false;
        uint32_t checked = 0;
        bool dirty = false;
        bool external = false;
        // Sets source to geometry from the shape as it is now.
        void record(const btCollisionShape* shape, rtcdShapeRole role);
        // The same type, scaling and margin (the arrays may differ).
        bool sameKind(const Entry& other) const;
        // What the mesh was built from, source to geometry, is the same.
        bool matches(const Entry& other) const;
    };
    bool deformed(const btCollisionShape* shape, Entry& e);
    const rtcd_mesh* update(const btCollisionShape* shape, Entry& e, bool* out_of_memory);
    // update()'s halves: the shape's vertices when the mesh can take them in
    // place (same triangles, taken as given), and the rebuild.
    bool readInPlace(const btCollisionShape* shape, const Entry& e, std::vector<float>& v);
    // err from the in-place update; false: refused, rebuild instead.
    bool tookInPlace(const btCollisionShape* shape, Entry& e, rtcd_error err, bool* out_of_memory);
    const rtcd_mesh* rebuild(const btCollisionShape* shape, Entry& e, bool* out_of_memory);
    std::unordered_map<const btCollisionShape*, Entry> m_entries;
};

// Asks for the cache line at p ahead of its use (loops over slots, which
// lie in no order the loops follow).
inline void rtcdPrefetch(const void* p)
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 1);
#else
    (void)p;
#endif
}
// How many items ahead a loop asks for an item's data (a multiple of it
// where one line's address is read from another: entry, then slot, then
// manifold).
static const uint32_t k_prefetch = 8;

// The live rtcd algorithms and their slots, looked up for every pair of the
// pair cache every step: open addressing over a power-of-two table (a
// node-based set cost a cache miss per pair, and reading the slot from the
// algorithm another).
class rtcdAlgorithmTable
{
public:
    void insert(const void* key, uint32_t slot);
    void erase(const void* key);
    // The value stored for an rtcd algorithm (its slot and kind); UINT32_MAX for any other.
    uint32_t find(const void* key) const
    {
        if (m_keys.empty()) return UINT32_MAX;
        size_t mask = m_keys.size() - 1;
        for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
            if (m_keys[i] == key) return m_slots[i];
            if (!m_keys[i]) return UINT32_MAX;
        }
    }

    // Asks for the table's line at the key's hash ahead of a find().
    void prefetch(const void* key) const
    {
        if (!m_keys.empty()) {
            size_t i = hash(key) & (m_keys.size() - 1);
            rtcdPrefetch(&m_keys[i]);
            rtcdPrefetch(&m_slots[i]);
        }
    }

private:
    static size_t hash(const void* key)
    {
        uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull;
        return static_cast<size_t>(h >> 24);
    }
    void grow();
    std::vector<const void*> m_keys; // NULL: empty
    std::vector<uint32_t> m_slots;
    size_t m_count = 0;
};

enum rtcdPairKind { RTCD_PAIR_MESH_MESH = 0, RTCD_PAIR_MESH_PLANE = 1 };

// Result of one pair for the current step, indexed by the algorithm's slot.
// The step reads and writes only the first 64 bytes of every pair's slot
// (its result's stamp and count, the write-back's marks, the manifold and
// the meshes it was computed with), one cache line as the slot is aligned
// to it: slots are visited in pair-cache order, which is not slot order, so
// each visit is a miss. The contacts come last, touched only by pairs that
// have some.
struct alignas(64) rtcdPairSlot {
    uint32_t stamp;  // step in which the contacts were computed
    uint32_t count;
    uint32_t written;      // step whose contacts went into the manifold (UINT32_MAX: none)
    uint32_t last_contact; // last step with contacts or manifold points
    uint8_t kind, plane_is_a;
    bool in_use;
    bool query_manifold;   // its manifold was opened by a query (counted in query_manifolds_held)
    rtcd_error err;        // a mesh-plane pair's error this step, logged after the parallel part
    // The manifold, held only while the pair has contacts (Bullet's island
    // builder and solver walk every manifold); the pair's own state (kept
    // rays) is the batch's, under `serial`, and outlives it.
    btPersistentManifold* manifold;
    // The meshes (ids, never reused, and versions) the contacts were
    // computed with, and those of the last write: a deformed or rebuilt
    // mesh's cached manifold points are dropped (writeSlot).
    uint64_t mesh[2];
    uint64_t version[2];
    // ---- end of the first cache line ----
    uint64_t serial; // unique per pair lifetime: the pair's key in the batch
    uint64_t seen_mesh[2], seen_version[2];
    // A compound's child pair (Bullet's compound algorithm made it): the
    // objects and each side's child index (-1: the object's own shape), so
    // the step's batch can run it with the others.
    const btCollisionObject* obj[2];
    int child[2];
    const void* scope; // the dispatch scope its compound algorithm ran in (NULL: the step; see query scopes)
    rtcd_contact contacts[RTCD_MAX_MANIFOLD_POINTS];
    void computedWith(uint64_t id_a, uint64_t version_a, uint64_t id_b, uint64_t version_b)
    {
        // Written only when they change: most pairs' slots stay clean in the cache.
        if (mesh[0] != id_a) mesh[0] = id_a;
        if (mesh[1] != id_b) mesh[1] = id_b;
        if (version[0] != version_a) version[0] = version_a;
        if (version[1] != version_b) version[1] = version_b;
    }
    void computedWith(const rtcd_mesh* a, const rtcd_mesh* b)
    {
        mesh[0] = rtcd_mesh_id(a);
        mesh[1] = rtcd_mesh_id(b);
        version[0] = a ? rtcd_mesh_version(a) : 0;
        version[1] = b ? rtcd_mesh_version(b) : 0;
    }
};

static_assert(offsetof(rtcdPairSlot, serial) == 64, "the step's fields fill the slot's first cache line");

struct rtcdBatchEntry {
    uint32_t slot;
    uint8_t kind;
    uint8_t plane_is_a; // mesh-plane pairs: body A is the plane
    const btCollisionObject* a;
    const btCollisionObject* b;
    // What collides: the objects' shapes and poses, or a compound's child
    // and its pose in the world.
    const btCollisionShape* shape_a;
    const btCollisionShape* shape_b;
    const btTransform* pose_a; // the object's transform, or the child's in child_poses (stable for the step)
    const btTransform* pose_b;
    const rtcd_mesh* mesh[2]; // looked up before the parallel part (the mesh cache is not thread-safe)
    int pair_index;           // in the pair cache's array; -1: a compound's child or a lone pair
    // The step's entries: each side that needs a mesh and is its object's
    // own shape, its object's world index (its body record), else -1; set
    // where the entry is made, so the later passes read no object.
    int body[2] = {-1, -1};
};

// One body's motion this step, computed once and shared by all its pairs.
struct rtcdBodyRecord {
    uint32_t stamp = 0;      // step of the fields below
    uint32_t mesh_stamp = 0; // step `mesh` was looked up
    const rtcd_mesh* mesh = nullptr;
    float reach = 0;         // how far the mesh reaches from the body's centre of rotation
    uint64_t mesh_id = 0, mesh_version = 0;
    rtcd_transform pose, back; // the pose, and the pose one step back along the velocities
    uint32_t call_body = 0;    // its place in the step's body_descs
    btVector3 lin{0, 0, 0};
    btScalar ang = 0;        // angular speed
    btScalar speed = 0;      // lin's length, and ang * reach: each pair's motion bound from these (describe)
    btScalar turn = 0;
    // ---- moving objects (issue 28 item 4): an object Bullet gives no
    // velocity (kinematic, plain collision objects, ghosts) is followed
    // from its transform at the last world steps (plugin_motion.cpp).
    const btCollisionObject* track_obj = nullptr; // whose track this is (world indices move)
    uint32_t track_step = 0;                      // the world step of track_pose
    btTransform track_pose;
    btVector3 track_lin{0, 0, 0}, track_ang{0, 0, 0}; // from the last two world steps' transforms
};

// An object's velocities as rtcd sees them (plugin_motion.cpp): a dynamic
// rigid body's own, a multibody link's from its multibody's joint
// velocities, a kinematic rigid body's as Bullet saved them
// (saveKinematicState), any other object's from its record's track (zero
// without one).
// `step` is the world step the record's track must be from.
void rtcdObjectVelocity(const btCollisionObject* obj, const rtcdBodyRecord* record, uint32_t step, btVector3& lin,
                        btVector3& ang);
// Updates a record's track with the object's transform at world step `step`
// (velocities from the last step's transform over dt when it has one).
void rtcdTrack(rtcdBodyRecord& r, const btCollisionObject* obj, uint32_t step, btScalar dt);

// One side of a pair as the narrow phase needs it: a body's record, or a
// compound child's (its place in the body) computed for the pair.
struct rtcdSide {
    rtcd_transform pose, back;
    uint64_t mesh_id, mesh_version; // the mesh's (0 without one)
    btVector3 lin;
    btScalar ang;
    float reach;
};

// The contact skin (issue 23): with speculative contacts on, every contact
// goes to Bullet this much deeper than rtcd measured it, so the solver
// rests the surfaces this far apart instead of leaving them up to 1-2 mm
// inside each other (what 10 solver iterations leave of a pile's weight;
// Bullet's own shapes keep such a gap with their collision margin). Well
// within the speculative margin, which finds the points in the gap; zero
// without speculative contacts, which the standard algorithm does not make
// (only penetrating points: a gap would make a resting body drop in and
// out of contact; the iterative algorithm's resting sum went 3.3 -> 4.9 m
// before it made them, within the margin).
inline float rtcdContactSkin(const rtcd_narrowphase_def& def)
{
    return def.speculative && def.iterative.algorithm != RTCD_ALGORITHM_STANDARD
               ? std::min(0.002f, 0.4f * def.speculative_margin)
               : 0.0f;
}

// What a worker adds to the step's statistics (summed in worker order:
// integer counts only, so the sums do not depend on the split).
struct rtcdWorkerStats {
    uint32_t pairs_owned = 0, pairs_culled = 0, contacts = 0;
    uint32_t out_of_memory = 0;
    uint32_t plane_errors = 0; // mesh-plane pairs with an error to log (slot.err)
    char pad[44];
};

// ---- closest-points queries (plugin_query.cpp) ----
// btCollisionWorld::contactTest and contactPairTest ask the dispatcher for a
// closest-points algorithm (BT_CLOSEST_POINT_ALGORITHMS): for rtcd's pairs,
// this one. It computes the pair alone, in a batch of its own (a fresh key
// each time), so a query never touches the step's pair state, slots or
// manifolds, and reports the contacts whose distance is within the
// result's m_closestPointDistanceThreshold (0: penetrating ones only).
struct rtcdPluginState;
struct rtcdQueryState; // the queries' batch and keys, made on the first query
class rtcdQueryAlgorithm : public btCollisionAlgorithm
{
public:
    rtcdQueryAlgorithm(const btCollisionAlgorithmConstructionInfo& ci, rtcdPluginState* state, rtcdPairKind kind,
                       bool plane_is_a)
        : btCollisionAlgorithm(ci), m_state(state), m_kind(static_cast<uint8_t>(kind)),
          m_plane_is_a(plane_is_a ? 1 : 0)
    {
    }
    void processCollision(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                          const btDispatcherInfo& info, btManifoldResult* result) override;
    btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                   btManifoldResult*) override
    {
        return btScalar(1);
    }
    void getAllContactManifolds(btManifoldArray&) override {} // holds none: its points go to the result

private:
    rtcdPluginState* m_state;
    uint8_t m_kind;
    uint8_t m_plane_is_a;
};
// A compound's closest-points algorithm is Bullet's, which asks the
// dispatcher for its children's contact algorithms: made and run inside a
// query scope, where findAlgorithm gives rtcd's children this query
// algorithm instead of the step's.
bool rtcdInQuery();
btCollisionAlgorithm* rtcdCompoundQuery(btCollisionDispatcher* dispatcher, const btCollisionObjectWrapper* body0,
                                        const btCollisionObjectWrapper* body1, btPersistentManifold* shared_manifold);
// ---- closest-points queries (end) ----

struct rtcdPluginState {
    rtcdMeshCache meshes;
    std::vector<rtcdPairSlot> slots;
    std::vector<uint32_t> free_slots;
    std::vector<uint64_t> slot_serial;    // slots[k].serial, packed: the descriptor loop reads no slot
    // 0 only where the slot is known to hold no contacts and no manifold
    // (set by the result copy, which then reads no slot of such a pair
    // whose result is empty: most of a pile's); 1 wherever that may have
    // changed (a new slot, a manifold opened, a pair computed alone).
    std::vector<uint8_t> slot_live;
    rtcdAlgorithmTable algorithms;        // live rtcd algorithms and their slots
    std::vector<btTransform> child_poses; // this step's compound children in the world
    std::vector<rtcdBatchEntry> batch;
    rtcd_narrowphase_def def;             // the one def; the batch holds a copy
    rtcd_batch* narrowphase = nullptr;    // the backend seam (CPU reference or OpenCL)
    btDispatcher* dispatcher = nullptr;   // the manifolds' pool
    bool check = false;                   // also run the standard algorithm and compare (rtcd_world_def.check)
    std::vector<rtcd_ray_hit> rays;       // scratch: the batch's rays in check mode, a lone pair's rays
    std::vector<rtcd_contact> contacts;   // scratch
    std::vector<rtcd_ray_hit> check_rays; // scratch for the checking mode
    rtcd_step_stats stats;
    uint32_t stamp = 0;
    uint32_t manifolds_held = 0;
    std::chrono::steady_clock::time_point last_dispatch; // start of the last dispatch (step_ms)
    btScalar time_step = btScalar(1) / 60; // this step's (btDispatcherInfo::m_timeStep): bounds the pairs' motion
    uint64_t next_serial = 1;
    // This step's mesh-mesh pairs in the batch's body form: a body's pose
    // once for all its pairs (body_descs: body_list's, then the sides that
    // are not a body's own mesh, a compound's children: body_count in all).
    std::vector<rtcd_body_desc> body_descs;
    std::vector<rtcd_body_pair> pair_bodies;
    uint32_t body_count = 0;
    std::vector<uint32_t> desc_entry;     // their entries in `batch`
    std::vector<uint32_t> plane_entries;  // this step's mesh-plane entries
    std::vector<rtcd_pair_result> results;
    std::vector<rtcdBodyRecord> bodies;   // by world index
    std::vector<const btCollisionObject*> body_list; // this step's bodies
    std::vector<rtcdWorkerStats> worker_stats;
    // This step's pair cache entries written before Bullet's dispatch: its
    // near callback skips them (rtcdCollisionDispatcher).
    std::vector<uint8_t> written_pairs;
    const btBroadphasePair* pair_base = nullptr;
    bool parallel_writeback = false;

    ~rtcdPluginState();

    // Opens the batch for `def` (falling back to the CPU reference, with a
    // logged notice, when the backend it asks for cannot be had).
    rtcd_error open(const rtcd_narrowphase_def& def);
    uint32_t allocSlot();
    std::vector<uint32_t> child_slots;   // slots of compound children's pairs
    void freeSlot(uint32_t slot);
    // A pair outside the step's batch (the standard algorithm, CPU
    // reference, or a mesh-plane pair) into its slot; adds to stats.
    void computePair(const rtcdBatchEntry& e);
    // Loops over `entries` (indices into batch), at item i of [.., end):
    // asks for what later items read (their entries, objects, body records
    // and, with `slot`, slots), each a few items before its use.
    void prefetchSides(const uint32_t* entries, uint32_t i, uint32_t end, bool slot = true) const;
    // A mesh-plane pair whose mesh is known, into its slot (any worker);
    // false when it was culled with an idle slot left unread (skip_idle:
    // the write-back's mode, idleDone).
    bool planePair(const rtcdBatchEntry& e, const rtcd_mesh* mesh, const rtcdSide& side, rtcdWorkerStats& ws,
                   bool skip_idle);
    // The step's batch: descriptors, mesh-plane pairs, the batch, results into slots.
    void runBatch();
    // The step's contacts into manifolds before Bullet's dispatch (parallel;
    // manifolds opened and released serially).
    void writeBack();
    // Write-back's work for an entry whose slot has just had this step's
    // result stored (the slot is in the cache there; with parallel_writeback
    // only): 3 a manifold to write, 1 one to open first, 0 none (a pair
    // without contacts or manifold is marked written here). Any worker.
    uint8_t flagEntry(const rtcdBatchEntry& e, rtcdPairSlot& slot);
    // Where a pass wrote slot s's count: whether the slot may hold
    // anything now (slot_live).
    void noteLive(uint32_t s) { slot_live[s] = slots[s].count || slots[s].manifold; }
    // A pair of the pair cache whose slot holds nothing (slot_live), with
    // nothing new for it: done without reading its slot (Bullet's dispatch
    // skips it). A compound's child (pair_index -1) is called by Bullet's
    // compound algorithm, which reads its slot: never done here.
    bool idleDone(const rtcdBatchEntry& e)
    {
        if (slot_live[e.slot] || e.pair_index < 0) return false;
        written_pairs[static_cast<size_t>(e.pair_index)] = 1;
        return true;
    }
    // One pair's contacts into its manifold (opened by the caller); any worker.
    void writeSlot(rtcdPairSlot& slot, btManifoldResult& result, rtcdWorkerStats& ws);
    // Opens a pair's manifold if it has contacts / releases it once it has had none for a while (serial).
    void openManifold(rtcdPairSlot& slot, const btCollisionObject* o0, const btCollisionObject* o1);
    void maybeRelease(rtcdPairSlot& slot);
    void releaseManifold(rtcdPairSlot& slot);
    // Each side of an entry (record or compound child).
    rtcdSide sideOf(const btCollisionObject* obj, const btCollisionShape* shape, const btTransform& pose,
                    const rtcd_mesh* mesh) const;
    void fillRecord(rtcdBodyRecord& r, const btCollisionObject* obj) const;
    // The record of an entry's side (rtcdBatchEntry::body) with its own
    // mesh this step (NULL: a compound's child, no record or no mesh).
    const rtcdBodyRecord* recordAt(int index) const;
    // pair_bodies[i] for batch entry `entry`: its bodies' records, or both
    // sides as bodies of this pair alone, at next_body (any worker).
    void describe(uint32_t i, uint32_t entry, std::atomic<uint32_t>& next_body);
    // Pair i's room for rays (both meshes' vertices: rtcd_batch_collide_bodies).
    size_t pairRays(uint32_t i) const
    {
        return static_cast<size_t>(rtcd_mesh_vertex_count(body_descs[pair_bodies[i].a].mesh)) +
               rtcd_mesh_vertex_count(body_descs[pair_bodies[i].b].mesh);
    }
    // Adds this step's pairs of compound children to `batch`.
    void gatherChildren(btDispatcher* dispatcher);
    // The shape's mesh (built on first use; a build that ran out of memory
    // is counted in stats.out_of_memory and tried again next time).
    const rtcd_mesh* meshOf(const btCollisionShape* shape);
    // Checking mode: the standard algorithm on the pair's poses against `rays`.
    void checkPair(const rtcd_mesh* a, const rtcd_transform& pa, const rtcd_mesh* b, const rtcd_transform& pb,
                   const rtcd_ray_hit* rays, uint32_t count);
    // fn(begin, end, worker) over [0, count) on the batch's workers, in
    // ranges of at least min_range; on the calling thread when count is
    // under min_parallel (measured on 2 cores; scaled by 2 / workers on
    // more), or parallel_min when set (tests).
    template <class F> void parallelFor(uint32_t count, uint32_t min_range, uint32_t min_parallel, F&& fn);
    // The batch's workers as a task system (rtcd_batch_parallel_for): the
    // step's mesh updates (rtcd_mesh_update_vertices_many) run on them.
    rtcd_task_system batchTasks();
    // fn(block, begin, end, worker) over [0, count) in blocks of k_block on
    // the workers (parallelFor's rules, min_parallel in items): the blocks do
    // not depend on the thread count, so per-block counts and offsets give
    // the same lists for any (plugin_gather.cpp).
    static const uint32_t k_block = 256;
    // Their min_parallel on 2 cores (the gather's blocks and its descriptor
    // loop): each loop is 0.05-0.2 ms at 6000 pairs, about what a pool
    // worker takes to wake. On the 512-blob avalanche (5 760 pairs), 2
    // threads, a quiet machine: gather 0.27-0.29 -> 0.24-0.27 ms a step with
    // the second worker, narrow phase - batch 0.134-0.144 -> 0.126-0.140 us
    // a pair (docs/dropin.md); with one core kept busy, no worse. An earlier
    // measurement under heavier load had these loops slower on two threads.
    // 2048 itself was not tuned: smaller calls were not measured.
    static const uint32_t k_block_parallel = 2048;
    // The loops right after the batch (its results, the write-back) and
    // the plane pass: the pool's workers are still polling then (task.c),
    // so a loop starts in about a microsecond and pays from far fewer
    // items (512-blob avalanche, 2 threads: narrow phase - batch 0.165 ->
    // 0.136 us a pair; the gather's loops, after Bullet's broadphase, start
    // with the worker asleep and keep k_block_parallel).
    static const uint32_t k_block_parallel_warm = 1024;
    static uint32_t blocksOf(uint32_t count) { return (count + k_block - 1) / k_block; }
    template <class F> void forBlocks(uint32_t count, uint32_t min_parallel, F&& fn);
    // ---- gathering on the workers (plugin_gather.cpp) ----
    // The pair cache's rtcd pairs into `batch` in pair order; algorithms made
    // serially for the pairs that have none.
    void gatherPairs(btCollisionDispatcher* d, btBroadphasePair* pairs, int n);
    // The step's bodies, deformed meshes, each entry's meshes, desc_entry and plane_entries.
    void prepareEntries();
    // Marks the body at world index `index` (below seen_size) as the step's
    // in the worker's own bits.
    void claimBody(const btCollisionObject* obj, size_t index, uint32_t worker);
    void growBodies(size_t size); // bodies and index_obj to at least size
    std::vector<uint32_t> pair_code;      // per pair cache entry: packed slot or a marker
    // The pair cache's pairs: batch[i] is pair i's entry, or a hole
    // (pair_code k_skip) where the pair is not rtcd's; the compounds'
    // children's entries follow.
    uint32_t pair_entries = 0;
    // rtcdTakes' answers for the last shapes, kept while the step's new
    // pairs are made (take_memo_on; plugin_dispatcher.cpp).
    struct TakeMemo {
        const btCollisionShape* shape;
        bool mesh;
    };
    TakeMemo take_memo[2] = {{nullptr, false}, {nullptr, false}};
    bool take_memo_on = false;
    // The entries in segments (a pair cache block's, then blocks of the
    // children's): first entry (then the end), mesh-mesh and mesh-plane
    // entries, counted where the entries are made; when every side has its
    // body's mesh, one pass over the segments makes the lists and the
    // descriptors.
    std::vector<uint32_t> seg_begin, seg_desc, seg_plane;
    uint32_t pair_segments = 0;
    uint32_t lone_sides = 0;              // of those, sides that need a mesh and have no body record
    std::vector<uint32_t> block_a, block_b; // per-block counts, then offsets
    std::vector<uint8_t> entry_kind;      // per entry (when some side has no mesh): 0 no list, 1 descriptor, 2 mesh-plane
    std::vector<uint8_t> entry_flag;      // per entry: write-back's work (flagEntry), set with the results
    std::vector<uint32_t> write_list;     // the step's entries whose manifold is written (writeBack)
    // The step's bodies, claimed without a write any other worker reads:
    // per worker a bit per world index (claim_stride words apart, whole
    // cache lines), OR-ed in world order afterwards (the same list for any
    // split, and no sort). index_obj: the object last seen at each world
    // index, written only when another object takes the index.
    std::vector<uint64_t> claim_bits;
    size_t claim_stride = 0;
    std::unique_ptr<std::atomic<const btCollisionObject*>[]> index_obj;
    size_t seen_size = 0;                 // world indices claim_bits and index_obj cover
    std::vector<uint8_t> overflow;        // per worker: a body past seen_size
    std::vector<uint8_t> body_pending;    // per listed body: its mesh looked up serially (not in the cache yet)
    std::vector<rtcd_step_stats> block_stats; // per block: the results' figures, summed in block order
    std::vector<const btCollisionShape*> deform_shapes; // the step's shapes, looked at for deformations
    // RTCD_PLUGIN_PARALLEL_MIN (environment, read once): every loop's
    // min_parallel, so that tests run the parallel path on small scenes.
    uint32_t parallel_min = UINT32_MAX; // UINT32_MAX: each loop's own
    std::shared_ptr<rtcdQueryState> queries; // closest-points queries (plugin_query.cpp)

    // ---- query scopes (issue 28 item 2; plugin_scopes.cpp) ----
    // A dispatch over the world's pair cache is the step; one over any
    // other pair cache (a btPairCachingGhostObject's own, as character
    // controllers query it, or any cache but the one setStepPairCache
    // named) is a query. A query's pairs run in a batch of their own, one
    // per pair cache, so the step's batch keeps every pair's state (a batch
    // forgets the keys missing from a call), and its figures go to
    // query_stats, leaving the step's in stats.
    struct QueryScope {
        rtcd_batch* batch = nullptr;
        uint32_t last_step = 0; // world step of its last query: closed after k_scope_idle_steps without one
    };
    std::unordered_map<const btOverlappingPairCache*, QueryScope> query_scopes;
    const btOverlappingPairCache* step_cache = nullptr;    // setStepPairCache (NULL: any cache but a ghost's)
    const btOverlappingPairCache* learned_cache = nullptr; // the last cache dispatched as the step
    rtcd_step_stats query_stats{};                        // the last query's figures
    uint32_t query_manifolds_held = 0; // of manifolds_held, opened by queries
    uint32_t steps = 0;              // world steps: the manifolds' idle clock and the objects' tracks
    bool in_query = false;           // this dispatch is a query
    const void* scope = nullptr;     // this dispatch's scope (NULL: the step), given to compound children's slots
    bool isQuery(const btOverlappingPairCache* cache, const btBroadphasePair* pairs, int n) const;
    // The scope's batch (opened on its first query: the CPU reference on
    // the calling thread, or the engine's tasks when the def has them);
    // NULL when it cannot be opened (logged; the query's pairs keep their contacts).
    rtcd_batch* queryBatch(const btOverlappingPairCache* cache);
    void closeIdleScopes(); // at each step
    void closeScopes();     // a new def, or the end
};

// The plane of a btStaticPlaneShape at `pose` in world space: unit normal and offset (plugin_step.cpp).
void rtcdWorldPlane(const btCollisionShape* shape, const btTransform& pose, float out[4]);

template <class F>
void rtcdPluginState::parallelFor(uint32_t count, uint32_t min_range, uint32_t min_parallel, F&& fn)
{
    uint32_t workers = rtcd_batch_worker_count(narrowphase);
    // Each loop's min_parallel was measured on 2 cores: with more workers
    // each takes a smaller share, so a shorter loop gains.
    if (workers > 2) min_parallel = std::max(2 * min_range, static_cast<uint32_t>(uint64_t(min_parallel) * 2 / workers));
    if (parallel_min != UINT32_MAX) min_parallel = parallel_min;
    if (count < min_parallel || workers < 2) {
        if (count) fn(0u, count, 0u);
        return;
    }
    struct Ctx {
        F* f;
    } ctx{&fn};
    rtcd_task_fn* tramp = [](uint32_t begin, uint32_t end, uint32_t worker, void* c) {
        (*static_cast<Ctx*>(c)->f)(begin, end, worker);
    };
    rtcd_batch_parallel_for(narrowphase, count, min_range, tramp, &ctx);
}

template <class F> void rtcdPluginState::forBlocks(uint32_t count, uint32_t min_parallel, F&& fn)
{
    uint32_t blocks = blocksOf(count);
    if (!blocks) return;
    parallelFor(blocks, 1, min_parallel == 0 ? 0 : blocksOf(min_parallel),
                [&fn, count](uint32_t b0, uint32_t b1, uint32_t worker) {
                    for (uint32_t b = b0; b < b1; ++b)
                        fn(b, b * k_block, std::min(count, (b + 1) * k_block), worker);
                });
}

// Small on purpose: the dispatcher's pool gives every algorithm a fixed-size
// slot, so the state lives in rtcdPluginState and this holds an index.
class rtcdCollisionAlgorithm : public btCollisionAlgorithm
{
public:
    rtcdCollisionAlgorithm(const btCollisionAlgorithmConstructionInfo& ci, rtcdPluginState* state,
                           rtcdPairKind kind, bool plane_is_a, const btCollisionObjectWrapper* w0,
                           const btCollisionObjectWrapper* w1);
    ~rtcdCollisionAlgorithm() override;

    void processCollision(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                          const btDispatcherInfo& info, btManifoldResult* result) override;
    btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                   btManifoldResult*) override
    {
        return btScalar(1);
    }
    void getAllContactManifolds(btManifoldArray& manifolds) override
    {
        btPersistentManifold* m = m_state->slots[m_slot].manifold;
        if (m) manifolds.push_back(m);
    }

    uint32_t slot() const { return m_slot; }
    rtcdPairKind kind() const { return static_cast<rtcdPairKind>(m_kind); }
    bool planeIsA() const { return m_plane_is_a != 0; }

private:
    rtcdPluginState* m_state;
    uint32_t m_slot;
    uint8_t m_kind;
    uint8_t m_plane_is_a;
};

// rtcd's view of a Bullet pose.
inline rtcd_transform rtcdFromBullet(const btTransform& t)
{
    rtcd_transform out;
    const btMatrix3x3& r = t.getBasis();
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) out.rotation[3 * i + j] = static_cast<float>(r[i][j]);
        out.translation[i] = static_cast<float>(t.getOrigin()[i]);
    }
    return out;
}

// A batch entry for a pair of wrappers (objects, or a compound's children).
inline rtcdBatchEntry rtcdEntryOf(uint32_t slot, uint8_t kind, uint8_t plane_is_a, const btCollisionObjectWrapper* w0,
                                  const btCollisionObjectWrapper* w1)
{
    return {slot, kind, plane_is_a, w0->getCollisionObject(), w1->getCollisionObject(), w0->getCollisionShape(),
            w1->getCollisionShape(), &w0->getWorldTransform(), &w1->getWorldTransform(), {nullptr, nullptr}, -1};
}

// Is this shape a GImpact triangle mesh (btGImpactMeshShape)?
inline bool rtcdIsGImpactMesh(const btCollisionShape* s)
{
    return s->getShapeType() == GIMPACT_SHAPE_PROXYTYPE &&
           static_cast<const btGImpactShapeInterface*>(s)->getGImpactShapeType() == CONST_GIMPACT_TRIMESH_SHAPE;
}

#endif
