/* Hooks (allocator, log, assert, error callback), error messages, transforms. */
#include "hooks.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void* default_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    return aligned_alloc(alignment, rounded ? rounded : alignment);
}

static void default_free(void* memory, void* user)
{
    (void)user;
    free(memory);
}

static void default_log(rtcd_log_level level, const char* message, void* user)
{
    (void)user;
    if (level == RTCD_LOG_INFO) return;
    fprintf(stderr, "rtcd %s: %s\n", level == RTCD_LOG_ERROR ? "error" : "warning", message);
}

static int default_assert(const char* condition, const char* file, int line)
{
    fprintf(stderr, "rtcd assertion failed: %s (%s:%d)\n", condition, file, line);
    abort();
}

static rtcd_alloc_fn* g_alloc = default_alloc;
static rtcd_free_fn* g_free = default_free;
static void* g_alloc_user;
static rtcd_log_fn* g_log = default_log;
static void* g_log_user;
static rtcd_error_fn* g_error_fn;
static void* g_error_user;
static rtcd_assert_fn* g_assert = default_assert;

static _Thread_local char t_last_error[8192]; /* room for a kernel build log */

void rtcd_set_allocator(rtcd_alloc_fn* alloc, rtcd_free_fn* free_fn, void* user)
{
    int custom = alloc && free_fn;
    g_alloc = custom ? alloc : default_alloc;
    g_free = custom ? free_fn : default_free;
    g_alloc_user = custom ? user : NULL;
}

void rtcd_set_log(rtcd_log_fn* log, void* user)
{
    g_log = log ? log : default_log;
    g_log_user = log ? user : NULL;
}

void rtcd_set_error_callback(rtcd_error_fn* callback, void* user)
{
    g_error_fn = callback;
    g_error_user = user;
}

void rtcd_set_assert(rtcd_assert_fn* assert_fn) { g_assert = assert_fn ? assert_fn : default_assert; }

void* rtcd_alloc(size_t size) { return g_alloc(size, 64, g_alloc_user); }

void* rtcd_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    void* p = rtcd_alloc(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

void rtcd_free(void* memory)
{
    if (memory) g_free(memory, g_alloc_user);
}

int rtcd_grow(void** p, size_t* cap, size_t need, size_t size)
{
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void* q = rtcd_alloc(c * size);
    if (!q) return 0;
    if (*p) memcpy(q, *p, *cap * size);
    rtcd_free(*p);
    *p = q;
    *cap = c;
    return 1;
}

char* rtcd_strdup(const char* s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char* c = rtcd_alloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

void rtcd_log(rtcd_log_level level, const char* format, ...)
{
    char buffer[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    g_log(level, buffer, g_log_user);
}

rtcd_error rtcd_fail(rtcd_error code, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(t_last_error, sizeof t_last_error, format, args);
    va_end(args);
    if (g_error_fn) g_error_fn(code, t_last_error, g_error_user);
    return code;
}

rtcd_error rtcd_report_error(rtcd_error code, const char* message)
{
    return rtcd_fail(code, "%s", message ? message : "");
}

void rtcd_log_message(rtcd_log_level level, const char* message) { rtcd_log(level, "%s", message ? message : ""); }

int rtcd_assert_failed(const char* condition, const char* file, int line) { return g_assert(condition, file, line); }

const char* rtcd_last_error_message(void) { return t_last_error; }

const char* rtcd_error_name(rtcd_error code)
{
    switch (code) {
    case RTCD_OK: return "RTCD_OK";
    case RTCD_ERROR_INVALID_ARGUMENT: return "RTCD_ERROR_INVALID_ARGUMENT";
    case RTCD_ERROR_OUT_OF_MEMORY: return "RTCD_ERROR_OUT_OF_MEMORY";
    case RTCD_ERROR_BUFFER_TOO_SMALL: return "RTCD_ERROR_BUFFER_TOO_SMALL";
    case RTCD_ERROR_UNSUPPORTED: return "RTCD_ERROR_UNSUPPORTED";
    case RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE: return "RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE";
    case RTCD_ERROR_MESH_NONFINITE_VERTEX: return "RTCD_ERROR_MESH_NONFINITE_VERTEX";
    case RTCD_ERROR_MESH_DEGENERATE_TRIANGLE: return "RTCD_ERROR_MESH_DEGENERATE_TRIANGLE";
    case RTCD_ERROR_MESH_OPEN_EDGE: return "RTCD_ERROR_MESH_OPEN_EDGE";
    case RTCD_ERROR_MESH_NONMANIFOLD_EDGE: return "RTCD_ERROR_MESH_NONMANIFOLD_EDGE";
    case RTCD_ERROR_MESH_INCONSISTENT_ORIENTATION: return "RTCD_ERROR_MESH_INCONSISTENT_ORIENTATION";
    case RTCD_ERROR_MESH_INSIDE_OUT: return "RTCD_ERROR_MESH_INSIDE_OUT";
    case RTCD_ERROR_MESH_TOO_LARGE: return "RTCD_ERROR_MESH_TOO_LARGE";
    case RTCD_ERROR_MESH_OUT_OF_RANGE: return "RTCD_ERROR_MESH_OUT_OF_RANGE";
    case RTCD_ERROR_NO_DEVICE: return "RTCD_ERROR_NO_DEVICE";
    case RTCD_ERROR_KERNEL_BUILD: return "RTCD_ERROR_KERNEL_BUILD";
    case RTCD_ERROR_DEVICE: return "RTCD_ERROR_DEVICE";
    case RTCD_ERROR_INTERNAL: return "RTCD_ERROR_INTERNAL";
    }
    return "RTCD_ERROR_UNKNOWN";
}

rtcd_transform rtcd_transform_identity(void)
{
    rtcd_transform t = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
    return t;
}

rtcd_transform rtcd_transform_from_quat(const float q_in[4], const float translation[3])
{
    rtcd_transform t = rtcd_transform_identity();
    for (int i = 0; i < 3; ++i) t.translation[i] = translation ? translation[i] : 0.0f;
    if (!q_in) {
        rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                  "rtcd_transform_from_quat: NULL quaternion (the identity rotation used)");
        return t;
    }
    double x = q_in[0], y = q_in[1], z = q_in[2], w = q_in[3];
    if (!isfinite(x) || !isfinite(y) || !isfinite(z) || !isfinite(w)) {
        rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                  "rtcd_transform_from_quat: quaternion (%g, %g, %g, %g) is not finite (the identity rotation used)", x,
                  y, z, w);
        return t;
    }
    double n = sqrt(x * x + y * y + z * z + w * w);
    if (!(n > 0.0)) return t; /* zero: no rotation */
    x /= n, y /= n, z /= n, w /= n;
    t.rotation[0] = (float)(1 - 2 * (y * y + z * z));
    t.rotation[1] = (float)(2 * (x * y - z * w));
    t.rotation[2] = (float)(2 * (x * z + y * w));
    t.rotation[3] = (float)(2 * (x * y + z * w));
    t.rotation[4] = (float)(1 - 2 * (x * x + z * z));
    t.rotation[5] = (float)(2 * (y * z - x * w));
    t.rotation[6] = (float)(2 * (x * z - y * w));
    t.rotation[7] = (float)(2 * (y * z + x * w));
    t.rotation[8] = (float)(1 - 2 * (x * x + y * y));
    return t;
}
