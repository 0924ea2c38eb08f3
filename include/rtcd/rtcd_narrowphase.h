/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* The standard ray-traced narrow phase (Hermann et al. 2008) for one pair of
 * closed meshes, contact generation (re-projection, JVRC 2013 section 3.2)
 * and contact reduction. This is the CPU reference every backend matches. */
#ifndef RTCD_NARROWPHASE_H
#define RTCD_NARROWPHASE_H

#include "rtcd_common.h"
#include "rtcd_query.h"
#include "rtcd_task.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rtcd_contact_normal {
    RTCD_CONTACT_REPROJECTED = 0,   /* normal of the hit triangle, depth = ray . normal */
    RTCD_CONTACT_RAY = 1,           /* raw ray direction, depth = ray length */
    RTCD_CONTACT_RAY_WEIGHTED = 2   /* raw ray direction, depth = length * cos(alpha) (Hermann) */
} rtcd_contact_normal;

typedef enum rtcd_algorithm {
    RTCD_ALGORITHM_STANDARD = 0,   /* Hermann et al.: every step from scratch */
    RTCD_ALGORITHM_ITERATIVE = 1,  /* IRTCD: kept colliding rays walk between standard passes */
    RTCD_ALGORITHM_PREDICTIVE = 2  /* IRTCD + predictive rays (the default) */
} rtcd_algorithm;

/* The paper's parameters for one pair, in metres (body frames share units). */
typedef struct rtcd_iterative_params {
    float displacement_threshold;  /* relative displacement that triggers a standard pass */
    float distance_extension;      /* predictive candidates: vertices this close to the other mesh; > threshold */
    float culling_distance;        /* predictive rays stop here: confidence * threshold */
    uint32_t max_iterations;       /* triangles one walk may test */
} rtcd_iterative_params;

/* The algorithm (rtcd_iterative.h). */
typedef struct rtcd_iterative_def {
    rtcd_algorithm algorithm;      /* default RTCD_ALGORITHM_PREDICTIVE */
    /* 1 (default): every pair derives its parameters at each standard pass
     * from its relative motion per step and the meshes' mean edge length
     * (rtcd_adaptive_params); 0: `fixed` for every pair. */
    int adaptive;
    rtcd_iterative_params fixed;   /* default 0.02 m, 0.04 m, 0.03 m, 8 */
    float confidence;              /* cullingDist = confidence * threshold, >= 1; default 1.5 */
} rtcd_iterative_def;

RTCD_API rtcd_iterative_def rtcd_default_iterative_def(void);

/* Where a batch of pairs runs (rtcd_batch.h). */
typedef enum rtcd_backend {
    /* An OpenCL GPU when there is one (or the devices `devices` /
     * RTCD_DEVICES name), else the CPU reference on `threads` threads:
     * on a CPU, PoCL runs the same code on the same cores and adds kernel
     * builds (see the README's figures). One INFO log line says which. */
    RTCD_BACKEND_AUTO = 0,
    RTCD_BACKEND_CPU = 1,          /* the CPU reference; never touches OpenCL */
    RTCD_BACKEND_OPENCL = 2        /* the OpenCL devices `devices` selects; fails when there are none */
} rtcd_backend;

/* Every setting of rtcd's narrow phase, in one place: the world
 * (rtcd_world_def.narrowphase), the drop-in dispatcher and both backends
 * take this def. Start from rtcd_default_narrowphase_def(). */
typedef struct rtcd_narrowphase_def {
    /* How a pair is computed (the same on every backend). */
    rtcd_traversal traversal;       /* default RTCD_TRAVERSAL_BVH */
    rtcd_contact_normal contact_normal; /* default RTCD_CONTACT_REPROJECTED */
    /* Skip ray casting when the two surfaces provably do not touch (no
     * triangle pair intersects and neither mesh contains the other). The
     * result is the same either way; default 1. */
    int cull_separated;
    rtcd_iterative_def iterative;   /* the algorithm and its parameters */
    /* Contact processing (the README's "Contacts"), the same on every backend. */
    /* 1 (default): with the predictive algorithm, a vertex outside the other
     * mesh but within speculative_margin + the pair's motion over one step
     * (rtcd_pair_desc.motion, else its motion over the last call) of the
     * surface its predictive ray found becomes a contact with a positive
     * distance (depth < 0); with the iterative algorithm, one within
     * speculative_margin alone (it casts no motion rays). Bullet's solver
     * treats it as speculative: the bodies may close the gap and no more.
     * 0: only penetrating contacts, the papers' behaviour. */
    int speculative;
    float speculative_margin;       /* metres, within [0, 1000]; default 0.005 */
    /* 1 (default): surfaces that cross with no vertex of either inside the
     * other (an edge through a face) get contacts from rays cast along the
     * edges of each mesh near the other (edge-edge normal and depth). */
    int edge_crossings;
    /* 1 (default): when every inward ray of a direction crosses its own body
     * first (Hermann et al. Figure 9) or one mesh lies inside the other, the
     * vertices inside get contacts towards the other mesh's nearest surface
     * instead of none. Pairs that have a colliding ray are unchanged. */
    int deep_contacts;
    /* Where batches run. */
    rtcd_backend backend;           /* default AUTO */
    /* OpenCL devices: "gpu" (every GPU), "all", "cpu" (none), or a comma
     * list of platform:device ("0:0,0:1"); "P:D/N" splits device D of
     * platform P into N equal sub-devices, each with its own context and
     * queue. NULL: the RTCD_DEVICES environment variable, else every GPU,
     * and with none the CPU OpenCL devices. Not owned; read at creation. */
    const char* devices;
    uint32_t max_devices;           /* use the first K selected devices (K within [0, 16]); 0: all */
    /* CPU reference: threads of rtcd's own pool, within [0,
     * RTCD_MAX_WORKERS]; 0 (default): one per core. Results are
     * bit-identical whatever the count. */
    uint32_t threads;
    /* An engine's own scheduler (Box2D style): when tasks.enqueue is set the
     * CPU reference runs its pairs through it instead of rtcd's pool. */
    rtcd_task_system tasks;
} rtcd_narrowphase_def;

RTCD_API rtcd_narrowphase_def rtcd_default_narrowphase_def(void);

/* RTCD_OK, or RTCD_ERROR_INVALID_ARGUMENT with a message naming the first
 * field out of range and its value (every function that takes a def calls
 * it first). Enum fields are read as integers and checked before anything
 * else, so any value (7, -1, 99) is refused, never used. */
RTCD_API rtcd_error rtcd_narrowphase_def_validate(const rtcd_narrowphase_def* def);

/* Short lower-case names ("standard", "iterative", "predictive"; "auto",
 * "cpu", "opencl"). */
RTCD_API const char* rtcd_algorithm_name(rtcd_algorithm algorithm);
RTCD_API const char* rtcd_backend_name(rtcd_backend backend);

/* One colliding ray, in world space. The casting mesh is A for
 * direction 0 (A's vertex inside B) and B for direction 1. */
typedef struct rtcd_ray_hit {
    uint32_t direction;     /* 0: A into B, 1: B into A */
    uint32_t vertex;        /* vertex of the casting mesh */
    uint32_t triangle;      /* hit triangle of the other mesh */
    float origin[3];        /* the vertex */
    float ray_dir[3];       /* unit, minus the casting mesh's vertex normal */
    float point[3];         /* where the ray exits the other mesh */
    float normal[3];        /* outward unit normal of the hit triangle */
    float length;           /* |point - origin| */
} rtcd_ray_hit;

typedef struct rtcd_narrowphase_stats {
    uint32_t candidate_vertices;  /* vertices that may lie inside the other mesh (occupancy grid), both directions */
    uint32_t rays_cast;           /* first-hit queries, self tests included */
    uint32_t colliding_rays;
    uint32_t culled;              /* 1 when the separation test skipped ray casting */
    /* The iterative algorithms (rtcd_iterative.h); standard_pass is 1 for rtcd_collide_standard. */
    uint32_t standard_pass;       /* 1: the standard algorithm ran; 0: the kept rays were walked */
    uint32_t predictive_rays;     /* opposite rays cast by a standard pass of the predictive algorithm */
    uint32_t walked_rays;         /* kept rays relaunched by an iterative pass */
    uint32_t walk_steps;          /* ray/triangle tests of those walks */
    uint32_t kept_rays;           /* colliding rays kept for the next step */
    uint32_t kept_predictions;    /* predictive rays kept for the next step */
    uint32_t crossing_contacts;   /* edge-crossing and deep-vertex contacts (no colliding ray in the pair) */
} rtcd_narrowphase_stats;

/* Both directions of the standard algorithm. `rays` must hold at least
 * vertex_count(a) + vertex_count(b) entries (RTCD_ERROR_BUFFER_TOO_SMALL
 * otherwise); *ray_count receives how many were written. Rays come out in
 * (direction, vertex) order. stats may be NULL. A def that
 * rtcd_narrowphase_def_validate refuses is refused the same way. */
RTCD_API rtcd_error rtcd_collide_standard(const rtcd_narrowphase_def* def,
                                          const rtcd_mesh* a, const rtcd_transform* pose_a,
                                          const rtcd_mesh* b, const rtcd_transform* pose_b,
                                          rtcd_ray_hit* rays, uint32_t ray_capacity,
                                          uint32_t* ray_count, rtcd_narrowphase_stats* stats);

/* A contact in Bullet's convention: the point lies on B, the normal points
 * from B to A, and A moves by normal * depth to separate (depth >= 0 means
 * penetration; Bullet's addContactPoint takes -depth). */
typedef struct rtcd_contact {
    float point_on_b[3];
    float normal_on_b[3];
    float depth;
    uint32_t feature;       /* direction << 31 | vertex: stable id across steps */
} rtcd_contact;

/* The contact of one colliding ray. A NULL ray, a mode outside
 * rtcd_contact_normal or a ray with a non-finite origin, direction, normal
 * or length reports RTCD_ERROR_INVALID_ARGUMENT (message, error callback)
 * and gives a contact with a NaN depth (point and normal zero), which
 * rtcd_reduce_contacts drops. */
RTCD_API rtcd_contact rtcd_contact_from_ray(const rtcd_ray_hit* ray, rtcd_contact_normal mode);

#define RTCD_MAX_MANIFOLD_POINTS 4

/* Keeps at most 4 contacts: the deepest, then the farthest from it, then those
 * that span the largest area. Scores within 1 % of the best count as tied and
 * go to the lowest feature id, so the result never depends on input order and
 * stays put under rounding noise (Bullet matches points across steps).
 * Contacts with a non-finite number (NaN depth, Inf coordinate) are dropped
 * first, and reported as RTCD_ERROR_INVALID_ARGUMENT (message, error
 * callback; the call still returns the others'); any finite input is fine,
 * however large (spreads that overflow float tie as the largest). Returns
 * min(4, finite contacts). More than 256 contacts need scratch memory; out
 * of it, RTCD_ERROR_OUT_OF_MEMORY is reported and the contacts are reduced
 * 256 at a time (each time with the points kept so far): the deepest point
 * is the same, the other three may differ, none is lost. */
RTCD_API uint32_t rtcd_reduce_contacts(const rtcd_contact* contacts, uint32_t count,
                                       rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS]);

/* A mesh (at pose) against a static plane: the points p with
 * dot(plane[0..2], p) = plane[3] in world space, plane[0..2] a unit normal
 * pointing out of the solid side. Every vertex below the plane is a contact
 * at its depth, and every vertex less than `speculative` metres above it a
 * speculative one (its height as a negative depth; 0: none), reduced as
 * rtcd_reduce_contacts but for `touch` (rtcd_narrowphase_def.speculative_margin):
 * after the deepest point, points within touch of touching (or of the
 * nearest gap) come first; plane_is_a says which body of the pair the
 * plane is (Bullet's A/B convention of rtcd_contact). */
RTCD_API rtcd_error rtcd_collide_plane(const rtcd_mesh* mesh, const rtcd_transform* pose, const float plane[4],
                                       int plane_is_a, float speculative, float touch,
                                       rtcd_contact out[RTCD_MAX_MANIFOLD_POINTS], uint32_t* count);

#ifdef __cplusplus
}
#endif
#endif
