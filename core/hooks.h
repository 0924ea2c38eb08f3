/* Private to rtcd: the allocator, log, assert and error hooks behind the
 * public setters (core/core.c), and the conversion every module needs. */
#ifndef RTCD_CORE_HOOKS_H
#define RTCD_CORE_HOOKS_H

#include <rtcd/rtcd.h>

#include "shared/geom.h"

#include <stddef.h>
#include <string.h>

#if defined(__GNUC__)
#define RTCD_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define RTCD_PRINTF(fmt, args)
#endif

void* rtcd_alloc(size_t size);          /* 64-byte aligned, NULL on failure */
void* rtcd_calloc(size_t count, size_t size); /* zeroed, overflow-checked */
void rtcd_free(void* memory);
/* Grows *p (keeping its contents) to hold `need` elements of `size` bytes;
 * *cap in elements, doubled from 64. 0 on no memory (*p unchanged). */
int rtcd_grow(void** p, size_t* cap, size_t need, size_t size);
char* rtcd_strdup(const char* s);       /* through rtcd_alloc; NULL for NULL or on failure */

/* Records the message for rtcd_last_error_message, calls the user's error
 * callback and returns `code`, so call sites read `return rtcd_fail(...)`. */
rtcd_error rtcd_fail(rtcd_error code, const char* format, ...) RTCD_PRINTF(2, 3);
void rtcd_log(rtcd_log_level level, const char* format, ...) RTCD_PRINTF(2, 3);
int rtcd_assert_failed(const char* condition, const char* file, int line);

#define RTCD_ASSERT(c) ((c) ? (void)0 : (void)rtcd_assert_failed(#c, __FILE__, __LINE__))

/* Every 64-byte line of an object asked for ahead of its use, to read or
 * to write (a store that misses holds up the loads behind it). */
static inline void rtcd_prefetch_read(const void* p, size_t bytes)
{
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch((const char*)p + b, 0);
}
static inline void rtcd_prefetch_write(const void* p, size_t bytes)
{
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch((const char*)p + b, 1);
}

/* One copy of the whole: the same layout. Field by field, the compiler
 * copied it in pieces of 16, 4, 8 and 4 bytes that the next 16-byte reads
 * could not forward from (a store-forwarding stall per pose: a third of
 * run_pair's own samples at 8192 blobs). */
_Static_assert(sizeof(rtcd_xform) == sizeof(rtcd_transform) &&
                   offsetof(rtcd_xform, t) == offsetof(rtcd_transform, translation),
               "rtcd_xform is rtcd_transform's layout");
static inline rtcd_xform rtcd_to_xform(const rtcd_transform* t)
{
    rtcd_xform x;
    memcpy(&x, t, sizeof x);
    return x;
}

#endif
