/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* Task system hook (Box2D v3 style): rtcd splits parallel work (the CPU
 * narrow phase over a batch of mesh pairs) into item ranges and hands them
 * to the engine's scheduler through two callbacks, so it never competes
 * with the engine for cores. With no callbacks rtcd uses its own pool.
 *
 * Results never depend on how the items were split or on which worker ran
 * them: rtcd writes each item's output to a slot of its own and only uses
 * the worker index to pick per-worker scratch memory.
 *
 * Ownership: rtcd owns task_context and keeps it alive until finish returns;
 * the user owns user_context and whatever enqueue returns. */
#ifndef RTCD_TASK_H
#define RTCD_TASK_H

/* Only <stdint.h>, not rtcd.h: rtcd.h pulls this header in through
 * rtcd_narrowphase.h, so including rtcd.h first would use the types below
 * before they are defined when a program includes this header first. */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most workers a task system may report (rtcd_thread_pool's threads
 * too): rtcd_narrowphase_def_validate refuses a larger worker_count. */
#define RTCD_MAX_WORKERS 1024u

/* Runs items [begin, end) on worker `worker` (< the system's worker_count).
 * Two calls that run at the same time must be given different worker
 * indices: rtcd keeps scratch memory per worker index, made when the index
 * first runs (memory follows the threads that run, not worker_count). An
 * index at or above worker_count is not run: the call that enqueued it
 * fails with RTCD_ERROR_INVALID_ARGUMENT. Called from any thread. */
typedef void rtcd_task_fn(uint32_t begin, uint32_t end, uint32_t worker, void* task_context);

/* Starts `task` over items [0, item_count), split into ranges of at least
 * min_range items (the last may be shorter), every item exactly once. May
 * run everything at once on the calling thread and return NULL; otherwise
 * returns a handle that rtcd passes to finish. Called from the thread that
 * drives rtcd (the one stepping the world). */
typedef void* rtcd_enqueue_task_fn(rtcd_task_fn* task, uint32_t item_count, uint32_t min_range, void* task_context,
                                   void* user_context);

/* Waits until every range of a task enqueue returned has run, on the thread
 * that enqueued it; the user may free the handle then. Not called for NULL. */
typedef void rtcd_finish_task_fn(void* user_task, void* user_context);

typedef struct rtcd_task_system {
    rtcd_enqueue_task_fn* enqueue; /* NULL: rtcd's own pool */
    rtcd_finish_task_fn* finish;   /* required with enqueue */
    void* user_context;            /* passed back to both callbacks, owned by the user */
    /* Workers the engine's scheduler may use at once, 1..RTCD_MAX_WORKERS:
     * every worker index rtcd receives is below it. */
    uint32_t worker_count;
} rtcd_task_system;

#ifdef __cplusplus
}
#endif

#endif
