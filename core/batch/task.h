/* Private to rtcd: the default thread pool behind rtcd_task_system and the
 * parallel-for every parallel loop of the core goes through. */
#ifndef RTCD_CORE_TASK_H
#define RTCD_CORE_TASK_H

#include <rtcd/rtcd.h>
#include <rtcd/rtcd_task.h>

#include <stdatomic.h>

/* The symbols below are exported for tests only. */

/* Online cores (sysconf), at least 1. */
RTCD_API uint32_t rtcd_cpu_count(void);

/* A fixed set of worker threads that sleep on a condition variable between
 * tasks. One task at a time: one thread drives the pool (enqueue, then
 * finish on that same thread, which works as worker 0 meanwhile); a task
 * must not enqueue on its own pool. Enqueue is cheap enough to call every
 * step (a mutex, a broadcast, no allocation). */
typedef struct rtcd_thread_pool rtcd_thread_pool;

/* threads 1..RTCD_MAX_WORKERS: threads - 1 worker threads plus the calling
 * thread. If the system refuses a thread the pool keeps the ones it got and
 * logs a warning (worker_count says how many). *out is NULL on failure. */
RTCD_API rtcd_error rtcd_thread_pool_create(uint32_t threads, rtcd_thread_pool** out);
/* Finishes a task still in flight, joins the workers. NULL is fine. */
RTCD_API void rtcd_thread_pool_destroy(rtcd_thread_pool* pool);
/* enqueue/finish over the pool; worker_count = the threads it really has.
 * Valid while the pool lives. */
RTCD_API rtcd_task_system rtcd_thread_pool_system(rtcd_thread_pool* pool);

/* Runs fn over [0, count) through ts and waits: enqueue then finish, or fn
 * on the calling thread (worker 0) when ts is NULL or has no enqueue. */
RTCD_API void rtcd_parallel_for(const rtcd_task_system* ts, uint32_t count, uint32_t min_range, rtcd_task_fn* fn,
                                void* ctx);

/* *at = min(*at, v), for the parallel loops' reductions (the first index
 * of something, whichever worker finds it). */
static inline void rtcd_atomic_min_u32(_Atomic uint32_t* at, uint32_t v)
{
    for (uint32_t c = atomic_load_explicit(at, memory_order_relaxed);
         v < c && !atomic_compare_exchange_weak_explicit(at, &c, v, memory_order_relaxed, memory_order_relaxed);)
        ;
}

#endif
