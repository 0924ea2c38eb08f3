/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* rtcd's C API over Bullet: a Bullet dynamics world whose concave-mesh pairs
 * go through rtcd's narrow phase (or, for comparison, Bullet's GImpact
 * algorithm or convex hulls). For C programs, the demos and bindings.
 *
 * Ownership: a world owns its bodies; shapes are reference counted and may be
 * shared by any number of bodies of one world (512 avalanche bodies share one
 * shape). Bodies are named by the index rtcd_world_add_body returns. */
#ifndef RTCD_WORLD_H
#define RTCD_WORLD_H

#include "rtcd_common.h"
#include "rtcd_mesh.h"
#include "rtcd_iterative.h"
#include "rtcd_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtcd_world rtcd_world;
typedef struct rtcd_shape rtcd_shape;

typedef enum rtcd_narrowphase_kind {
    RTCD_NARROWPHASE_RTCD = 0,     /* rtcd's ray-traced narrow phase */
    RTCD_NARROWPHASE_GIMPACT = 1,  /* Bullet's btGImpactCollisionAlgorithm on the same meshes */
    RTCD_NARROWPHASE_HULL = 2      /* each mesh replaced by its convex hull (btConvexHullShape) */
} rtcd_narrowphase_kind;

/* The world's range of validity: where Bullet and rtcd's float pipeline give
 * the right answers. A value outside its range (or not finite) is refused
 * with RTCD_ERROR_INVALID_ARGUMENT and a message naming the argument, its
 * value and the range; both ends of every range are valid values. */
#define RTCD_WORLD_MAX_GRAVITY 1e4f            /* m/s^2, per axis: [-1e4, 1e4] */
#define RTCD_WORLD_MIN_TIME_STEP 1e-6f         /* s: time_step within [1e-6, 1] */
#define RTCD_WORLD_MAX_TIME_STEP 1.0f
#define RTCD_WORLD_MAX_SOLVER_ITERATIONS 10000 /* solver_iterations within [1, 10000] */
#define RTCD_WORLD_MAX_FRICTION 1e3f           /* friction and rolling_friction within [0, 1000] */
#define RTCD_WORLD_MIN_MASS 1e-6f              /* kg: a body's mass within [1e-6, 1e9] */
#define RTCD_WORLD_MAX_MASS 1e9f
#define RTCD_WORLD_MAX_COORDINATE 1e5f         /* m: pose translations, plane offsets within [-1e5, 1e5] */
#define RTCD_WORLD_MAX_SPEED 1e4f              /* m/s and rad/s per axis: velocities within [-1e4, 1e4] */

typedef struct rtcd_world_def {
    float gravity[3];              /* default (0, 0, -9.81); each within [-1e4, 1e4] */
    float time_step;               /* fixed step in seconds, default 1/60; within [1e-6, 1] */
    int solver_iterations;         /* sequential impulse iterations, default 10; within [1, 10000] */
    rtcd_narrowphase_kind narrowphase_kind; /* default RTCD_NARROWPHASE_RTCD */
    /* rtcd's narrow phase: algorithm, traversal, contacts, backend, devices,
     * threads (rtcd_narrowphase.h). A backend that cannot be had (no OpenCL
     * device, kernels that do not build) gives the CPU reference and a
     * one-line notice. */
    rtcd_narrowphase_def narrowphase;
    float linear_damping, angular_damping; /* default 0, 0; each within [0, 1] */
    float friction, restitution;           /* default 0.6, 0; within [0, 1000] and [0, 1] */
    /* Bullet's rolling and spinning friction (a torque arm in metres). Rounded
     * concave rocks otherwise roll on forever over their many small facets.
     * Default 0.02, within [0, 1000]; applied the same way whatever the
     * narrow phase. */
    float rolling_friction;
    /* Checking mode: every step also runs the standard algorithm (CPU
     * reference) on the same poses and fills the check_* statistics. */
    int check;
} rtcd_world_def;

RTCD_API rtcd_world_def rtcd_default_world_def(void);

/* *out is NULL on failure. */
RTCD_API rtcd_error rtcd_world_create(const rtcd_world_def* def, rtcd_world** out);
/* Reference counted (create / retain / release, as every rtcd handle): the
 * last release destroys the world and its bodies. NULL is fine. */
RTCD_API void rtcd_world_retain(rtcd_world* world);
RTCD_API void rtcd_world_release(rtcd_world* world);

/* A dynamic concave shape from a closed mesh (retained by the shape). The
 * mesh is re-centred on its centre of mass for the body; the offset is
 * returned through rtcd_shape_center_of_mass. */
RTCD_API rtcd_error rtcd_shape_create(rtcd_world* world, rtcd_mesh* mesh, rtcd_shape** out);
RTCD_API void rtcd_shape_retain(rtcd_shape* shape);
RTCD_API void rtcd_shape_release(rtcd_shape* shape); /* the last release frees it; NULL is fine */
RTCD_API void rtcd_shape_center_of_mass(const rtcd_shape* shape, float com[3]);
/* Bodies live in the shape's principal frame (origin at the centre of mass,
 * axes along the principal axes of inertia): body = frame * mesh. */
RTCD_API rtcd_transform rtcd_shape_frame(const rtcd_shape* shape);
/* The mesh in the body frame (what collides), owned by the shape. */
RTCD_API const rtcd_mesh* rtcd_shape_body_mesh(const rtcd_shape* shape);

/* Deforming bodies: new positions for the shape's vertices (the mesh's
 * given to rtcd_shape_create, in the same order and frame; `stride` bytes
 * apart, 0: packed), read during the call, which checks that they are finite
 * and in range. The next step collides with the new shape, through rtcd and
 * through GImpact alike; sleeping bodies of the shape wake. With rtcd's
 * narrow phase the next step updates the body meshes of every shape given
 * vertices since the last, together on the narrow phase's workers
 * (rtcd_mesh_update_vertices_many, in place), and gives Bullet's
 * broadphase the box of the new mesh; a shape the mesh's checks refuse (a
 * triangle of zero area, inside out) keeps its last shape, with a warning
 * through rtcd's log (rtcd_shape_body_mesh updates the shape's mesh at
 * once, with the same rule). Every body of
 * the shape deforms with it: give each deforming body its own shape. The
 * body frame and the mass properties stay those the shape was created with.
 * Single-mesh shapes of the rtcd and GImpact narrow phases only:
 * RTCD_ERROR_UNSUPPORTED for compounds, convex shapes and the hull mode. */
RTCD_API rtcd_error rtcd_shape_set_vertices(rtcd_shape* shape, const float* vertices, size_t stride);

/* A dynamic concave body of several closed pieces (a convex decomposition,
 * a file's separate parts: rtcd_import gives one mesh each), a
 * btCompoundShape of GImpact meshes whose pairs rtcd takes piece by piece.
 * The pieces' mass properties combine (uniform density) and, as for
 * rtcd_shape_create, the body frame is the principal frame of the whole.
 * meshes: `count` closed meshes (count within [1, RTCD_COMPOUND_MAX_PIECES]),
 * read during the call only. */
#define RTCD_COMPOUND_MAX_PIECES 4096u
RTCD_API rtcd_error rtcd_shape_create_compound(rtcd_world* world, rtcd_mesh* const* meshes, uint32_t count,
                                               rtcd_shape** out);

/* Convex shapes (Bullet's own primitives in the world; rtcd ray traces their
 * pairs with concave bodies against a fine tessellation of the exact
 * surface, margin included). Round shapes stand along z.
 *
 * Range of validity, each refused with RTCD_ERROR_INVALID_ARGUMENT and a
 * message naming the value and the bound:
 * - every size of the kind (half_extents, radius, half_height) within
 *   [RTCD_CONVEX_MIN_SIZE, RTCD_CONVEX_MAX_SIZE] = [0.5 mm, 5 km];
 * - margin negative (Bullet's default) or within [0, 5 km]; a box and a
 *   cylinder hold their margin inside their sizes (Bullet's convention), so
 *   theirs is at most their smallest size;
 * - a hull: point_count within [4, RTCD_CONVEX_MAX_POINTS], every point finite;
 * - the whole body, margin included (a capsule is 2 (radius + half_height)
 *   long, a cone and a hull grow by their margin), spans at most
 *   RTCD_MESH_MAX_EXTENT (10 km) and at least RTCD_MESH_MIN_EXTENT along its
 *   longest axis, and its thinnest axis is at least 1 / RTCD_CONVEX_MAX_ASPECT
 *   of its longest (the tessellation's rings stay triangles rtcd_mesh_create
 *   takes: a 1 mm needle is at most 1 m long, a 10 km disc at least 10 m
 *   thick). */
#define RTCD_CONVEX_MIN_SIZE 5e-4f
#define RTCD_CONVEX_MAX_SIZE 5e3f
#define RTCD_CONVEX_MAX_ASPECT 1e3f
#define RTCD_CONVEX_MAX_POINTS 65536u
typedef enum rtcd_convex_kind {
    RTCD_CONVEX_BOX = 0,      /* half_extents */
    RTCD_CONVEX_SPHERE = 1,   /* radius */
    RTCD_CONVEX_CAPSULE = 2,  /* radius, half_height (of the straight part) */
    RTCD_CONVEX_CYLINDER = 3, /* radius, half_height */
    RTCD_CONVEX_CONE = 4,     /* radius (of the base), half_height (the height is twice it) */
    RTCD_CONVEX_HULL = 5      /* points: the hull of them, grown by the margin */
} rtcd_convex_kind;

typedef struct rtcd_convex_def {
    rtcd_convex_kind kind;
    float half_extents[3];
    float radius, half_height;
    const float* points;      /* xyz per point, caller-owned, copied */
    uint32_t point_count;
    float margin;             /* Bullet's collision margin; negative: Bullet's default (0.04 m, less for a small box or cylinder) */
} rtcd_convex_def;

RTCD_API rtcd_convex_def rtcd_default_convex_def(void); /* a unit box (half extents 0.5) */

/* A dynamic convex shape; its body frame is the shape's own (origin at the
 * centre, or at the points' origin for a hull). *out is NULL on failure. */
RTCD_API rtcd_error rtcd_shape_create_convex(rtcd_world* world, const rtcd_convex_def* def, rtcd_shape** out);

/* A static triangle mesh (a btBvhTriangleMeshShape in the world) at `pose`:
 * terrain, floors, buildings. Closed meshes and open one-sided surfaces
 * (RTCD_MESH_OPEN_SURFACE) alike; the world retains the mesh and rtcd's
 * narrow phase collides with it as it is (steep slopes included: a
 * heightfield's kilometre spikes on a 2 m grid). */
RTCD_API rtcd_error rtcd_world_add_static_mesh(rtcd_world* world, rtcd_mesh* mesh, const rtcd_transform* pose);

/* The static ground plane: points p with dot(normal, p) = offset; a finite
 * non-zero normal, offset within [-1e5, 1e5]. */
RTCD_API rtcd_error rtcd_world_add_plane(rtcd_world* world, const float normal[3], float offset);

/* A rigid body of the given mass (inertia from the mesh, density scaled to
 * the mass) at `pose` (the pose of the centre-of-mass frame). mass within
 * [1e-6, 1e9] kg; pose a finite rotation (R R^T = I within 1e-3, no mirror)
 * with its translation within [-1e5, 1e5] m per axis. Velocities
 * (rtcd_world_set_velocity) within [-1e4, 1e4] per axis. */
RTCD_API rtcd_error rtcd_world_add_body(rtcd_world* world, rtcd_shape* shape, float mass,
                                        const rtcd_transform* pose, uint32_t* body_index);
RTCD_API uint32_t rtcd_world_body_count(const rtcd_world* world);
RTCD_API rtcd_error rtcd_world_set_velocity(rtcd_world* world, uint32_t body, const float linear[3],
                                            const float angular[3]);

/* Advances one fixed time step. */
RTCD_API rtcd_error rtcd_world_step(rtcd_world* world);

RTCD_API rtcd_error rtcd_world_get_pose(const rtcd_world* world, uint32_t body, rtcd_transform* pose);
RTCD_API rtcd_error rtcd_world_get_velocity(const rtcd_world* world, uint32_t body, float linear[3],
                                            float angular[3]);

/* ---- batch getters (bindings, renderers, datasets): bodies first ..
 * first + count - 1 in one call, each entry what the per-body getter gives.
 * count 0 writes nothing and succeeds whatever first is (out may then be
 * NULL). A NULL world,
 * a NULL out with count > 0, or a range past rtcd_world_body_count is
 * RTCD_ERROR_INVALID_ARGUMENT with a message naming it; nothing is written
 * then. */
/* rtcd_transform per body: exactly rtcd_world_get_pose's. */
RTCD_API rtcd_error rtcd_world_get_transforms(const rtcd_world* world, uint32_t first, uint32_t count,
                                              rtcd_transform* out);
/* 7 floats per body: position x y z, then the rotation as a unit quaternion
 * x y z w with w >= 0 (Bullet's, from the same basis rtcd_world_get_pose
 * reads; rtcd_transform_from_quat turns it back). */
RTCD_API rtcd_error rtcd_world_get_poses(const rtcd_world* world, uint32_t first, uint32_t count, float* out);
/* 6 floats per body: linear velocity x y z (m/s), then angular x y z
 * (rad/s), exactly rtcd_world_get_velocity's. */
RTCD_API rtcd_error rtcd_world_get_velocities(const rtcd_world* world, uint32_t first, uint32_t count, float* out);

typedef struct rtcd_step_stats {
    uint32_t broadphase_pairs;     /* overlapping pairs in Bullet's pair cache */
    uint32_t pairs_owned;          /* pairs rtcd processed this step (with a mesh, convex, surface or plane partner) */
    uint32_t pairs_culled;         /* of those, skipped by the separation test */
    uint64_t rays_cast;
    uint64_t colliding_rays;
    uint32_t contacts;             /* manifold points handed to the solver */
    double narrowphase_ms;         /* rtcd's dispatch (batch + Bullet's per-pair manifold updates), or Bullet's for gimpact/hull */
    double batch_ms;               /* of that, the mesh-mesh batch itself (rtcd_batch_collide) */
    double step_ms;                /* the whole step, Bullet included (drop-in: from the previous dispatch to this one) */
    /* The iterative algorithms (rtcd_iterative.h); mesh-mesh pairs only. */
    uint32_t standard_pairs;       /* pairs that ran a standard pass */
    uint32_t iterative_pairs;      /* pairs whose kept rays were walked */
    uint64_t predictive_rays;      /* opposite rays cast by standard passes */
    uint64_t walk_steps;           /* ray/triangle tests of the walks */
    uint64_t kept_rays;            /* colliding + predictive rays kept for the next step */
    double standard_ms, iterative_ms; /* CPU reference: time in each kind of pass (0 on OpenCL) */
    double ray_length;             /* sum of this step's colliding ray lengths */
    /* Checking mode only (zero otherwise): the standard algorithm on the same poses. */
    uint64_t check_rays;           /* rays colliding in either result */
    uint64_t check_incorrect;      /* of those, rtcd_compare_rays' incorrect ones */
    double check_ray_length;       /* sum of the standard algorithm's colliding ray lengths */
    /* Faults met in the step. Each pair they touched kept its previous
     * contacts (none for a pair whose mesh is still to be built); the
     * world's step returns RTCD_ERROR_OUT_OF_MEMORY when out_of_memory > 0. */
    uint32_t out_of_memory;        /* allocation failures (mesh builds, the batch) */
    uint32_t faults;               /* other narrow-phase failures (a backend that failed on the CPU reference too) */
    /* The mesh-mesh batch's own profile (rtcd_batch_last_stats after the
     * step's batch call: host planning, devices, finishing; rtcd_batch.h). */
    rtcd_batch_stats batch;
    /* rtcd's narrow phase in parts (rtcd only; they add up to about
     * narrowphase_ms with batch_ms): */
    double gather_ms;              /* the pair cache walk, new pairs' algorithms, meshes, per-body poses, descriptors */
    double plane_ms;               /* mesh-plane pairs (CPU, vertices below the plane) */
    double writeback_ms;           /* contacts into manifolds: points added and refreshed, manifolds opened and released */
    double dispatch_ms;            /* Bullet's own dispatch after rtcd's: other algorithms, compound algorithms over rtcd's child pairs */
    /* Manifolds. rtcd's pairs hold one only while they have contacts (a
     * pair's own state stays in rtcd's batch): */
    uint32_t manifolds;            /* held by rtcd's pairs after the step */
    uint32_t manifolds_created;    /* opened this step */
    uint32_t manifolds_released;   /* released this step (the pair without contacts for a few steps) */
    uint32_t manifolds_total;      /* every manifold in the dispatcher, any algorithm (the world's step; GImpact too) */
    /* Bullet's constraint solver in the step (rtcd_world only, any narrow
     * phase; 0 in the drop-in, whose program owns the solver): contact
     * and joint rows set up, iterated and written back. */
    double solver_ms;
} rtcd_step_stats;

RTCD_API rtcd_step_stats rtcd_world_last_step_stats(const rtcd_world* world);
RTCD_API rtcd_backend rtcd_world_backend(const rtcd_world* world); /* CPU or OPENCL, as resolved */
RTCD_API uint32_t rtcd_world_device_count(const rtcd_world* world);  /* 0 on the CPU reference */
RTCD_API uint32_t rtcd_world_thread_count(const rtcd_world* world);  /* CPU reference threads; 0 on OpenCL */
RTCD_API const char* rtcd_world_device_name(const rtcd_world* world, uint32_t device);

/* Penetration measured independently of the collision algorithm: for every
 * pair of bodies whose boxes overlap, each vertex of one inside the other
 * (exact point-in-mesh test) contributes its distance to the other's surface;
 * vertices below the plane contribute their depth. Coincident bodies (box
 * centres within 1e-4 of the box diagonal: created at one pose) have every
 * vertex on the other's surface; each of their vertices counts as deep as
 * the boxes are into each other along the world axis that parts them
 * soonest. Before the first step, the pairs of the bodies as created. */
typedef struct rtcd_penetration {
    float max;
    double sum;
    uint32_t vertices_inside;
} rtcd_penetration;
RTCD_API rtcd_error rtcd_world_measure_penetration(const rtcd_world* world, rtcd_penetration* out);

/* ---- read-only views for viewers (the demos' --view and --frames;
 * bullet_plugin/world_view.cpp): nothing here changes the world. */
/* The shape body `body` was added with (not retained: it lives as long as the
 * world), whose rtcd_shape_body_mesh is what the body looks like; NULL for a
 * NULL world or an index out of range. */
RTCD_API const rtcd_shape* rtcd_world_body_shape(const rtcd_world* world, uint32_t body);

/* One point of the contact manifolds Bullet holds after the last step. */
typedef struct rtcd_world_contact {
    float position[3];      /* world coordinates, on body_b's surface (Bullet's positionWorldOnB) */
    float normal[3];        /* unit, world coordinates, pointing from body_b towards body_a */
    float distance;         /* signed separation along the normal: negative when the bodies overlap */
    int32_t body_a, body_b; /* body indices; -1 for a plane or a static mesh */
} rtcd_world_contact;
/* Copies the first min(total, capacity) points into out (NULL with capacity 0:
 * counts only) and returns the total; 0 for a NULL world. */
RTCD_API uint32_t rtcd_world_get_contacts(const rtcd_world* world, rtcd_world_contact* out, uint32_t capacity);

#ifdef __cplusplus
}
#endif
#endif
