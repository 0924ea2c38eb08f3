/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* rtcd — ray-traced collision detection for concave meshes.
 *
 * What every rtcd header needs (programs include <rtcd/rtcd.h>): error
 * codes, user hooks (allocator, log, assert, error callback), rigid
 * transforms. Every public symbol starts with rtcd_ / RTCD_.
 *
 * Threading: functions on distinct objects may run on different threads; a mesh
 * is immutable after creation and may be read by any number of threads. The
 * hooks are process-global: set them before creating objects. */
#ifndef RTCD_COMMON_H
#define RTCD_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(RTCD_BUILD_SHARED)
#define RTCD_API __declspec(dllexport)
#elif defined(__GNUC__)
#define RTCD_API __attribute__((visibility("default")))
#else
#define RTCD_API
#endif

#define RTCD_VERSION_MAJOR 0
#define RTCD_VERSION_MINOR 1
#define RTCD_VERSION_PATCH 0

/* Every failure has its own code; rtcd_last_error_message() gives the details
 * (for meshes: the first offending element). */
typedef enum rtcd_error {
    RTCD_OK = 0,
    RTCD_ERROR_INVALID_ARGUMENT = 1,    /* NULL pointer, zero count, bad enum... */
    RTCD_ERROR_OUT_OF_MEMORY = 2,
    RTCD_ERROR_BUFFER_TOO_SMALL = 3,    /* output capacity below what the call needs */
    RTCD_ERROR_UNSUPPORTED = 4,         /* a feature or backend this build or machine lacks */
    RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE = 10,
    RTCD_ERROR_MESH_NONFINITE_VERTEX = 11, /* NaN or Inf coordinate */
    RTCD_ERROR_MESH_DEGENERATE_TRIANGLE = 12, /* zero area, repeated index */
    RTCD_ERROR_MESH_OPEN_EDGE = 13,     /* edge used by one triangle only */
    RTCD_ERROR_MESH_NONMANIFOLD_EDGE = 14, /* edge used by more than two triangles */
    RTCD_ERROR_MESH_INCONSISTENT_ORIENTATION = 15, /* neighbours wind the shared edge the same way */
    RTCD_ERROR_MESH_INSIDE_OUT = 16,    /* negative volume; see RTCD_MESH_FLIP_INSIDE_OUT */
    RTCD_ERROR_MESH_TOO_LARGE = 17,     /* more elements than the index format holds */
    RTCD_ERROR_MESH_OUT_OF_RANGE = 18,  /* size or coordinates outside the range of validity (rtcd_mesh.h) */
    RTCD_ERROR_NO_DEVICE = 20,          /* no OpenCL platform or no device matching the selection */
    RTCD_ERROR_KERNEL_BUILD = 21,       /* the OpenCL program did not build; the message holds the build log */
    RTCD_ERROR_DEVICE = 22,             /* an OpenCL call failed; the message names the call and the code */
    RTCD_ERROR_INTERNAL = 99
} rtcd_error;

/* Short constant name of a code, e.g. "RTCD_ERROR_MESH_OPEN_EDGE". Never NULL. */
RTCD_API const char* rtcd_error_name(rtcd_error code);

/* Message of the last failing rtcd call on this thread ("" when none).
 * Valid until the next failing call on the same thread. */
RTCD_API const char* rtcd_last_error_message(void);

/* ---- hooks (Box2D style: replace before use, NULL restores the default) ---- */

/* alignment is a power of two <= 64; return NULL on failure (rtcd reports
 * RTCD_ERROR_OUT_OF_MEMORY, it never aborts on a failed allocation). */
typedef void* rtcd_alloc_fn(size_t size, size_t alignment, void* user);
typedef void rtcd_free_fn(void* memory, void* user);
RTCD_API void rtcd_set_allocator(rtcd_alloc_fn* alloc, rtcd_free_fn* free_fn, void* user);

typedef enum rtcd_log_level { RTCD_LOG_ERROR = 0, RTCD_LOG_WARNING = 1, RTCD_LOG_INFO = 2 } rtcd_log_level;
/* Default: warnings and errors to stderr, info dropped. */
typedef void rtcd_log_fn(rtcd_log_level level, const char* message, void* user);
RTCD_API void rtcd_set_log(rtcd_log_fn* log, void* user);

/* Called on every error before the failing function returns its code. */
typedef void rtcd_error_fn(rtcd_error code, const char* message, void* user);
RTCD_API void rtcd_set_error_callback(rtcd_error_fn* callback, void* user);

/* Internal invariant violations (bugs, not bad input). Default: print and abort.
 * Return non-zero from the hook to continue anyway. */
typedef int rtcd_assert_fn(const char* condition, const char* file, int line);
RTCD_API void rtcd_set_assert(rtcd_assert_fn* assert_fn);

/* For rtcd's own modules (the Bullet plugin) and language bindings: record an
 * error (message for rtcd_last_error_message, error callback) and return
 * `code`; write a line through the log hook. */
RTCD_API rtcd_error rtcd_report_error(rtcd_error code, const char* message);
RTCD_API void rtcd_log_message(rtcd_log_level level, const char* message);

/* ---- rigid transform ---- */

/* world = rotation * local + translation; rotation is row-major 3x3 and
 * orthonormal (what btTransform's basis holds). */
typedef struct rtcd_transform {
    float rotation[9];
    float translation[3];
} rtcd_transform;

RTCD_API rtcd_transform rtcd_transform_identity(void);
/* Unit quaternion (x, y, z, w) plus translation. The quaternion is normalised;
 * a zero one is no rotation. A NULL translation is zero. A NULL or
 * non-finite quaternion gives the identity rotation (at the translation) and
 * reports RTCD_ERROR_INVALID_ARGUMENT (message, error callback). */
RTCD_API rtcd_transform rtcd_transform_from_quat(const float quat_xyzw[4], const float translation[3]);

#ifdef __cplusplus
}
#endif

#endif
