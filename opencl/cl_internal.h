/* Private to the OpenCL backend. */
#ifndef RTCD_CL_INTERNAL_H
#define RTCD_CL_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_backend.h"

#include "narrowphase/pair_internal.h"
#include "batch/backend.h"
#include "batch/key_map.h"
#include "batch/task.h"
#include "kernels/cl_types.h"

#define RTCD_CL_MAX_DEVICES 16
/* Work-groups of the retry kernel (rtcd_collide_retry): it runs the few
 * pairs past the first kernel's on-chip store, each group every 128th. */
#define RTCD_CL_RETRY_GROUPS 128u
#define RTCD_CL_NO_SLOT 0xffffffffu
/* A call's pairs go to the devices in up to this many runs (segments),
 * each launched as soon as it is planned, so a GPU works on one while the
 * host plans the next (cl_plan.c). Pairs per run at least, by default: */
#define RTCD_CL_MAX_SEGMENTS 4u
#define RTCD_CL_SEGMENT_PAIRS 2048u

extern const char rtcd_kernel_source[];

/* A host array the device copies from or to (cl_pinned.c): data is a
 * mapped pinned buffer when `pinned` is set, else ordinary memory. */
typedef struct cl_host_array {
    cl_mem pinned;
    void* data;
    size_t cap; /* bytes */
} cl_host_array;

typedef struct cl_device_state {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_kernel retry_kernel; /* the group kernel's retry (rtcd_collide_retry); NULL with the serial kernel */
    int serial;           /* CPU device: one work item per pair (rtcd_collide_pairs_serial) */
    int on_host_cores;    /* a CPU device: its workers share the host's cores (no segments by default) */
    char name[256];
    cl_ulong max_alloc;   /* CL_DEVICE_MAX_MEM_ALLOC_SIZE (0: not known) */
    /* Test hook (RTCD_CL_FAIL_BUFFER_BYTES, read at creation; 0: none): a
     * mesh buffer larger than this fails as on a device out of memory
     * (CL_MEM_OBJECT_ALLOCATION_FAILURE), without asking the device. */
    size_t fail_bytes;
    /* every registered mesh, concatenated; rebuilt when the registry
     * changes. mesh_version: the registry version they hold (0: none; a
     * failed upload leaves none, and the next call uploads again). */
    cl_mem mesh_buffers[RTCD_CL_MESH_BUFFERS];
    uint32_t mesh_version;
    /* What went up (rtcd_opencl_upload_stats): whole copies of the
     * registry, deformed meshes rewritten in place, bytes of both. */
    uint64_t full_uploads, mesh_refreshes, upload_bytes;
    /* Kept rays of the pairs this device owns (iterative algorithms, two
     * entry words each; cl_state.c): a call walks arena[arena_in] and
     * writes arena[arena_in ^ 1], whose arena_used entries it handed out. */
    cl_mem arena[2];
    size_t arena_bytes[2];
    uint32_t arena_in;
    size_t arena_used;
    /* per call */
    cl_mem pairs, results, rays, retry, bodies;
    size_t pairs_cap, results_cap, rays_cap, retry_cap, bodies_cap;
    rtcd_cl_pair* host_pairs;      /* pinned_pairs.data */
    rtcd_cl_result* host_results;  /* pinned_results.data */
    float* host_bodies;            /* pinned_bodies.data: each body's pose, 12 floats (RTCD_KARG_BODIES) */
    cl_host_array pinned_pairs, pinned_results, pinned_bodies;
    rtcd_world_ray* host_rays;
    /* This call's commands, for the profile (NULL: not queued): records
     * and kernel per segment. */
    cl_event ev_upload[RTCD_CL_MAX_SEGMENTS], ev_kernel[RTCD_CL_MAX_SEGMENTS];
    cl_event ev_bodies, ev_retry, ev_download, ev_rays;
    size_t sent_bytes, got_bytes;
    /* batch_count: the call's pairs placed so far; slots from seg_begin
     * are the segment being planned. launched: its first segment went. */
    uint32_t batch_count, seg_begin;
    int launched;
    size_t rays_total;      /* room for the batch's colliding rays (when asked for) */
    uint64_t load;          /* the batch's estimated work (cl_plan.c) */
    double pace;            /* kernel ms per unit of estimated work, a moving average (0: not known yet) */
    size_t host_rays_cap;
} cl_device_state;

/* A mesh the devices could not take (cl_meshes.c): its pairs run on the CPU
 * reference. Known by address and id, not retained: a mesh the caller
 * released stays released (another at its address has another id; a
 * deformation keeps the id). */
typedef struct cl_refused_mesh {
    const rtcd_mesh* mesh;
    uint64_t id;
} cl_refused_mesh;

/* Growable host arrays of the concatenated meshes (one copy for all devices). */
typedef struct cl_mesh_registry {
    /* Retained while registered (their address cannot be reused meanwhile);
     * found by address and id all the same (rtcd_mesh.id). */
    const rtcd_mesh** meshes;
    uint64_t* ids;
    /* find_mesh's index (cl_meshes.c): mesh id -> entry, open addressing;
     * extended as entries are appended, rebuilt after entries were removed
     * (`cuts` counts the removals it has not seen). */
    uint64_t* index_ids;   /* 0: empty (ids start at 1) */
    uint32_t* index_at;
    uint32_t index_cap, index_count, index_cuts, cuts;
    rtcd_cl_mesh* table;
    uint64_t* versions;      /* the rtcd_mesh.version each entry copied (deforming meshes) */
    uint32_t count, cap;
    float *vertices, *vnormals, *tnormals, *tris;
    float* prev_vertices;    /* beside vertices: rtcd_mesh.prev_vertices (vertices before any update) */
    uint32_t *indices, *tri_ids;
    rtcd_bvh_node* nodes;
    rtcd_bvh4_node* nodes4;  /* each mesh's 4-wide copy of its BVH (none: node4_count 0) */
    uint8_t* grids;
    uint8_t* nears;          /* RTCD_GRID_N^3 bytes per mesh (rtcd_solid_grid.near) */
    uint32_t* neighbors;     /* 3 per triangle, mesh-local, beside indices */
    uint8_t* vertex_balls;   /* 1 per vertex, beside vertices: its ball among its entry's spheres */
    uint32_t* vertex_tris;   /* 1 per vertex, beside vertices: a triangle holding it (cl_fans.c) */
    uint32_t vertex_total, tri_total, node_total, node4_total;
    /* Names the content: a new value (from stamp, which only grows) on every
     * append; a rollback restores the value of the content it returns to. */
    uint32_t version, stamp;
    uint64_t reregistrations; /* deformed meshes whose sizes changed, registered again */
    cl_refused_mesh* refused;
    uint32_t refused_count, refused_cap;
    /* capacities, in elements */
    uint32_t cap_vertices, cap_vnormals, cap_tnormals, cap_tris, cap_indices, cap_tri_ids, cap_nodes, cap_grids,
        cap_table, cap_nears, cap_neighbors, cap_versions, cap_prev_vertices, cap_ids, cap_vertex_balls, cap_vertex_tris,
        cap_nodes4;
} cl_mesh_registry;

/* What the host keeps of a persisting pair: its device, and for the
 * iterative algorithms its track and where its kept rays are. */
typedef struct cl_pair_info {
    rtcd_pair_track track;
    uint32_t entries_at; /* its kept rays in its device's arena_in */
    uint32_t entries;    /* how many */
    uint8_t device;      /* 0xff: none yet */
    uint8_t second_phase; /* its last standard pass on a device had second-phase items (cl_plan.c) */
} cl_pair_info;

/* One call's view of its pairs, per pair i (cl_plan.c). */
#define RTCD_CL_OFF_DEVICE 0xffu /* device[i]: the pair runs on the CPU reference */
/* Pair i has a mesh the devices do not hold (where: cl_call.where). */
static inline int rtcd_cl_off_device(const uint32_t* where, uint32_t i)
{
    return where[2 * i] == RTCD_CL_NO_SLOT || where[2 * i + 1] == RTCD_CL_NO_SLOT;
}
typedef struct cl_call {
    const rtcd_call* request; /* the bodies and pairs (checked: core/batch/batch.c) */
    rtcd_pair_result* results;
    rtcd_ray_hit* rays;      /* NULL: not asked for */
    size_t* ray_offset;      /* where pair i's rays go in `rays` */
    uint32_t* info_of;       /* slot in the pair map (RTCD_CL_NO_SLOT: a repeated key, no state) */
    uint32_t* info_at;       /* its state in infos, once planned (RTCD_CL_NO_SLOT: none) */
    uint32_t* where;         /* registry index of pair i's meshes a and b (RTCD_CL_NO_SLOT: not on the devices) */
    uint32_t* body_where;    /* the same per body (rtcd_cl_place_meshes) */
    size_t body_cap;         /* bodies body_where holds */
    uint8_t* standard;       /* the planned pass: 1 standard */
    uint32_t* cost;          /* its estimated work (devices' load) */
    uint8_t* device;         /* its device, or RTCD_CL_OFF_DEVICE */
    uint32_t* pos;           /* its place in its device's batch */
    uint32_t* keep_room;     /* kept rays its pass may write (its items, at most RTCD_CL_STATE_ENTRIES) */
    uint32_t* overflow;      /* pairs the CPU redoes (their rays overflowed the device's store) */
    size_t cap;              /* pairs the arrays hold */
    rtcd_cl_pair* staged;    /* its device record in call order, before its place is known */
    size_t staged_cap;
    uint32_t segments;       /* the runs the call's pairs go in (rtcd_cl_plan_begin) */
    size_t ray_bound;        /* with several: room for every pair's rays (the caller's buffer) */
} cl_call;

struct rtcd_opencl {
    rtcd_narrowphase_def def;
    /* The host's share of a call (planning, finishing) runs on the def's
     * task system, else on `pool` (def.threads, or every core). */
    rtcd_thread_pool* pool;
    rtcd_task_system tasks;
    cl_call call;
    rtcd_call_scratch expanded; /* rtcd_opencl_collide's pairs in the body form */
    char* kernel_suffix;   /* test hook (rtcd_opencl_create), NULL: none */
    cl_device_state devices[RTCD_CL_MAX_DEVICES];
    uint32_t device_count;
    cl_mesh_registry registry;
    /* The pairs' states, kept across calls in one pool: the map takes a key
     * to 1 + its state's index in infos (0: a new key, given one when it is
     * planned), and a key the map drops gives its index back (info_free).
     * Planning and finishing read and write each state where it lies; a
     * call copies none (cl_state.c). */
    rtcd_key_map map;
    cl_pair_info* infos;
    uint32_t* info_free;             /* indices given back, info_free_count of them */
    size_t info_cap, info_free_cap;
    _Atomic uint32_t info_free_count; /* popped while planning, pushed while the map drops keys */
    _Atomic uint32_t info_high;       /* infos [0, info_high) have been handed out */
    rtcd_batch_stats stats;
    double place_ms;       /* the last call's rtcd_cl_place_meshes (deformed meshes, uploads) */
    /* Test and tuning hook RTCD_CL_SEGMENTS (read at creation): every call
     * in that many segments; 0: by the devices and the call's size. */
    uint32_t segments;
    struct cl_plan_job* plan; /* the call's planning, between rtcd_cl_plan_begin and _end */
    /* Pairs with a mesh the devices could not take (cl_meshes.c): the CPU
     * reference backend (core/batch/cpu_batch.c, made on first need) runs them
     * in the same call, with its own pair states; the arrays are its
     * compacted view of the call. cpu_pairs_last: the last call gave it
     * pairs (their states are forgotten when a call gives it none). */
    void* cpu;
    int cpu_pairs_last;
    rtcd_body_pair* cpu_pairs;
    rtcd_pair_result* cpu_results;
    uint32_t* cpu_index;   /* compacted -> caller's pair index */
    rtcd_ray_hit* cpu_rays;
    size_t cpu_pairs_cap, cpu_results_cap, cpu_index_cap, cpu_rays_cap;
};

/* cl_devices.c: picks the devices and builds the program on each. */
rtcd_error rtcd_cl_open_devices(rtcd_opencl* cl);
void rtcd_cl_close_devices(rtcd_opencl* cl);
const char* rtcd_cl_error_string(cl_int code);

/* cl_meshes.c */
/* Puts this call's meshes on every device. Registered meshes of the call
 * that deformed since they were copied (rtcd_mesh.version) are brought up
 * to date first: rewritten in place (host copy and their device ranges)
 * when their sizes held; registered again with the registry's entries after
 * them when a BVH rebuild changed their node count. Then where[i] gets the
 * registry index of body i's mesh, or RTCD_CL_NO_SLOT for a mesh the devices
 * could not take (its pairs run on the CPU reference). New meshes are appended and every device brought up to
 * date; when a device refuses the memory (an allocation-class OpenCL
 * error: CL_INVALID_BUFFER_SIZE, CL_MEM_OBJECT_ALLOCATION_FAILURE,
 * CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY) the registry rolls back to
 * where it was before the mesh that made it fail, that mesh is refused for
 * good with one logged warning naming it and the error, and the others of
 * the call are kept. Other OpenCL errors: RTCD_ERROR_DEVICE (the call's new
 * meshes rolled back); no host memory: RTCD_ERROR_OUT_OF_MEMORY. */
rtcd_error rtcd_cl_place_meshes(rtcd_opencl* cl, const rtcd_body_desc* bodies, uint32_t n, uint32_t* where);
/* Brings one device up to the registry (nothing when it is); RTCD_ERROR_DEVICE on failure. */
rtcd_error rtcd_cl_upload_meshes(cl_device_state* dev, const cl_mesh_registry* reg);
void rtcd_cl_registry_free(cl_mesh_registry* reg);

/* cl_plan.c: the host's share of a call, on cl->tasks. Before the launch:
 * every pair's ends looked up (call.where, from call.body_where), its pass
 * planned, its device, batch and arena positions chosen, its record written
 * (cl->call filled by the caller: request, info_of, body_where);
 * *off_pairs: the pairs with a mesh off the devices (call.device
 * RTCD_CL_OFF_DEVICE), for the CPU. After the wait: results and kept-ray
 * counts taken back, and the pairs whose rays overflowed the device redone
 * on the CPU. */
/* The planning comes in segments, consecutive runs of the call's pairs:
 * begin (n pairs, `segments` runs; with several, every device's arrays
 * are sized for the whole call first: n records, ray_bound rays), then
 * each segment in order (its pairs' slots on device d are
 * [d->seg_begin, d->batch_count)), then end (the states flipped). */
rtcd_error rtcd_cl_plan_begin(rtcd_opencl* cl, uint32_t n, uint32_t segments, size_t ray_bound);
rtcd_error rtcd_cl_plan_segment(rtcd_opencl* cl, uint32_t s);
void rtcd_cl_plan_end(rtcd_opencl* cl, uint32_t* off_pairs);
rtcd_error rtcd_cl_finish_call(rtcd_opencl* cl, uint32_t n);
/* After a call, each device's kernel time (kernel_ms[device]) against the
 * work the planning gave it: the pace its next plans assume. */
void rtcd_cl_learn_speeds(rtcd_opencl* cl, const double* kernel_ms);

/* cl_pinned.c: a host array of at least `bytes` (contents not kept). */
rtcd_error rtcd_cl_host_array(cl_device_state* d, cl_host_array* a, size_t bytes);
void rtcd_cl_host_array_free(cl_device_state* d, cl_host_array* a);

/* cl_spheres.c: an entry's longest edge and the balls of its vertices
 * (the second phase's cull), from the mesh's clusters. */
void rtcd_cl_entry_spheres(rtcd_cl_mesh* e, const rtcd_mesh* m, uint8_t* vertex_balls);

/* cl_fans.c: one triangle holding each vertex (RTCD_INVALID for none);
 * returns 1 when every vertex's triangles form one closed fan (the serial
 * kernel then walks fans in the second phase), 0 otherwise. */
int rtcd_cl_vertex_fans(const rtcd_mesh* m, uint32_t* vertex_tris);

/* cl_state.c: the pair map and the devices' kept-ray arenas. */
/* Claims this call's pairs in cl->map (kept across calls): info_of[i] is
 * pair i's slot in cl->map (RTCD_CL_NO_SLOT for a key seen earlier in the
 * batch: that copy runs without state). Keys the call did not see leave
 * the map, their states' indices back to the pool. */
rtcd_error rtcd_cl_assign_pairs(rtcd_opencl* cl, const rtcd_body_pair* pairs, uint32_t n, uint32_t* info_of);
/* Room in the pool for a call of n pairs (after rtcd_cl_assign_pairs, every
 * state in use is one of its pairs'). */
rtcd_error rtcd_cl_reserve_infos(rtcd_opencl* cl, uint32_t n);
/* Pair i's state (NULL: a repeated key's copy), a new key's made fresh
 * (no device, nothing kept); call.info_at[i] says where. Pairs are
 * independent: any number of workers. */
cl_pair_info* rtcd_cl_take_info(rtcd_opencl* cl, uint32_t i);
/* Fetches ahead what rtcd_cl_take_info(cl, i) reads, in two stages a few
 * pairs apart: 0 the map's entry, 1 the state it points to (both misses
 * on a large map) and pair i's result. */
void rtcd_cl_prefetch_info(const rtcd_opencl* cl, uint32_t i, int stage);
/* Room for `entries` kept rays in the arena this call writes; its first
 * `kept` entries (written by the call's earlier segments) are copied on
 * the device's queue when it grows. */
rtcd_error rtcd_cl_arena_reserve(cl_device_state* d, size_t entries, size_t kept);
/* Forget every pair's kept rays: next call runs a standard pass. */
void rtcd_cl_reset_tracks(rtcd_opencl* cl);
void rtcd_cl_reset_track(cl_pair_info* info);

#define RTCD_CL_CHECK(call, what)                                                                                  \
    do {                                                                                                           \
        cl_int rtcd_cl_status_ = (call);                                                                           \
        if (rtcd_cl_status_ != CL_SUCCESS)                                                                         \
            return rtcd_fail(RTCD_ERROR_DEVICE, "OpenCL %s failed: %s (%d)", what,                                 \
                             rtcd_cl_error_string(rtcd_cl_status_), (int)rtcd_cl_status_);                         \
    } while (0)

#endif
