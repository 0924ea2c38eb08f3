/* The default thread pool and rtcd_parallel_for. */
#include "task.h"

#include "hooks.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Chunks per thread: pair costs vary 100x, so hand out small pieces and let
 * fast threads take more; a chunk still costs only one atomic add. */
#define RTCD_CHUNKS_PER_THREAD 256u

/* How long an idle worker, and a caller waiting for its workers, poll
 * before sleeping on the condition variable. A step runs a dozen parallel
 * loops a few microseconds apart; a futex wake-up costs 10-50 us a loop
 * (more with every thread woken), polling a few. Past this the thread
 * sleeps, so a pool between steps costs nothing. */
#define RTCD_SPIN_NS 50000

typedef struct rtcd_worker_arg {
    rtcd_thread_pool* pool;
    uint32_t index;
} rtcd_worker_arg;

struct rtcd_thread_pool {
    pthread_mutex_t mutex;
    pthread_cond_t wake;  /* a new task or quit */
    pthread_cond_t idle;  /* the last active worker left the task */
    pthread_t* threads;
    rtcd_worker_arg* args;
    uint32_t started;     /* worker threads running; worker_count = started + 1 */

    /* The task, written under the mutex by enqueue while no worker holds it.
     * generation, active and quit change under the mutex only; they are
     * atomic so that polling threads may read them without it (a hint: a
     * decision is taken again under the mutex). */
    _Atomic uint64_t generation;
    rtcd_task_fn* fn;
    void* ctx;
    uint32_t count, chunk;
    _Atomic uint32_t active; /* workers inside the task */
    atomic_int quit;

    /* 64 bits: each thread may overshoot count by one chunk. */
    _Atomic uint64_t next;
    atomic_int busy;      /* between enqueue and finish */
};

uint32_t rtcd_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > (long)RTCD_MAX_WORKERS ? RTCD_MAX_WORKERS : (uint32_t)n;
}

/* Takes chunks until none are left. */
static void run_chunks(rtcd_thread_pool* pool, rtcd_task_fn* fn, void* ctx, uint32_t count, uint32_t chunk,
                       uint32_t worker)
{
    for (;;) {
        uint64_t begin = atomic_fetch_add_explicit(&pool->next, chunk, memory_order_relaxed);
        if (begin >= count) return;
        uint64_t end = begin + chunk < count ? begin + chunk : count;
        fn((uint32_t)begin, (uint32_t)end, worker, ctx);
    }
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Polls until done(pool, arg) or RTCD_SPIN_NS pass; 1 if done. After the
 * first few microseconds it yields between polls: with more threads than
 * cores (tests side by side, an OpenCL CPU device) the thread it waits for
 * may need this core. */
static int spin_until(int (*done)(const rtcd_thread_pool*, uint64_t), const rtcd_thread_pool* pool, uint64_t arg)
{
    int64_t start = now_ns(), waited = 0;
    for (uint32_t i = 1;; ++i) {
        if (done(pool, arg)) return 1;
        if (waited > RTCD_SPIN_NS / 16) sched_yield();
        else cpu_relax();
        if ((i & 15u) == 0 && (waited = now_ns() - start) > RTCD_SPIN_NS) return done(pool, arg);
    }
}

static int new_task_or_quit(const rtcd_thread_pool* pool, uint64_t seen)
{
    return atomic_load_explicit(&pool->generation, memory_order_acquire) != seen ||
           atomic_load_explicit(&pool->quit, memory_order_relaxed);
}

static int workers_left(const rtcd_thread_pool* pool, uint64_t unused)
{
    (void)unused;
    return atomic_load_explicit(&pool->active, memory_order_acquire) == 0;
}

static void* worker_main(void* arg)
{
    rtcd_worker_arg* a = (rtcd_worker_arg*)arg;
    rtcd_thread_pool* pool = a->pool;
    uint64_t seen = 0;
    int polled = 0; /* polled since the last task: the next idle turn sleeps */
    pthread_mutex_lock(&pool->mutex);
    while (!pool->quit) {
        /* A worker that wakes after the others drained the task does not join
         * it: finish only waits for workers that hold the task, so a slow
         * wake-up never delays the step and never sees a later task's range
         * with this one's fields. */
        if (pool->generation != seen) {
            seen = pool->generation;
            if (atomic_load_explicit(&pool->next, memory_order_relaxed) < pool->count) {
                rtcd_task_fn* fn = pool->fn;
                void* ctx = pool->ctx;
                uint32_t count = pool->count, chunk = pool->chunk;
                pool->active++;
                pthread_mutex_unlock(&pool->mutex);
                run_chunks(pool, fn, ctx, count, chunk, a->index);
                pthread_mutex_lock(&pool->mutex);
                if (atomic_fetch_sub(&pool->active, 1) == 1) pthread_cond_signal(&pool->idle);
            }
            polled = 0;
            continue;
        }
        if (!polled) {
            /* Poll without the mutex first; whatever it sees is checked again under it. */
            polled = 1;
            pthread_mutex_unlock(&pool->mutex);
            spin_until(new_task_or_quit, pool, seen);
            pthread_mutex_lock(&pool->mutex);
            continue;
        }
        polled = 0;
        pthread_cond_wait(&pool->wake, &pool->mutex);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

static void* pool_enqueue(rtcd_task_fn* task, uint32_t item_count, uint32_t min_range, void* task_context,
                          void* user_context)
{
    rtcd_thread_pool* pool = (rtcd_thread_pool*)user_context;
    uint32_t workers = pool->started + 1;
    uint32_t chunk = item_count / (workers * RTCD_CHUNKS_PER_THREAD);
    if (chunk < min_range) chunk = min_range;
    if (chunk < 1) chunk = 1;
    /* One chunk or no helpers: waking threads would only cost time. */
    if (pool->started == 0 || item_count <= chunk) {
        if (item_count > 0) task(0, item_count, 0, task_context);
        return NULL;
    }
    if (atomic_exchange(&pool->busy, 1)) {
        /* Nested or concurrent use; worker 0 may now be shared, a caller's bug. */
        RTCD_ASSERT(!"rtcd_thread_pool: one task at a time");
        task(0, item_count, 0, task_context);
        return NULL;
    }
    pthread_mutex_lock(&pool->mutex);
    pool->fn = task;
    pool->ctx = task_context;
    pool->count = item_count;
    pool->chunk = chunk;
    atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
    return pool;
}

static void pool_finish(void* user_task, void* user_context)
{
    (void)user_context;
    rtcd_thread_pool* pool = (rtcd_thread_pool*)user_task;
    /* The caller works as worker 0 instead of waiting idle. Reading the task
     * without the mutex is fine: only this thread writes it. */
    run_chunks(pool, pool->fn, pool->ctx, pool->count, pool->chunk, 0);
    /* Workers that hold a chunk finish within microseconds: poll before
     * sleeping. The count is read again under the mutex, where a worker
     * joins the task, so none can join after this returns. */
    spin_until(workers_left, pool, 0);
    pthread_mutex_lock(&pool->mutex);
    while (atomic_load(&pool->active) > 0) pthread_cond_wait(&pool->idle, &pool->mutex);
    pthread_mutex_unlock(&pool->mutex);
    atomic_store(&pool->busy, 0);
}

rtcd_error rtcd_thread_pool_create(uint32_t threads, rtcd_thread_pool** out)
{
    if (!out) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_thread_pool_create: out is NULL");
    *out = NULL;
    if (threads < 1 || threads > RTCD_MAX_WORKERS)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_thread_pool_create: %u threads (1 to %u)", threads,
                         RTCD_MAX_WORKERS);
    rtcd_thread_pool* pool = (rtcd_thread_pool*)rtcd_calloc(1, sizeof *pool);
    if (!pool) return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_thread_pool_create: pool");
    uint32_t helpers = threads - 1;
    if (helpers > 0) {
        pool->threads = (pthread_t*)rtcd_calloc(helpers, sizeof *pool->threads);
        pool->args = (rtcd_worker_arg*)rtcd_calloc(helpers, sizeof *pool->args);
        if (!pool->threads || !pool->args) {
            rtcd_free(pool->threads);
            rtcd_free(pool->args);
            rtcd_free(pool);
            return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_thread_pool_create: %u threads", threads);
        }
    }
    if (pthread_mutex_init(&pool->mutex, NULL) != 0) goto sync_failed;
    if (pthread_cond_init(&pool->wake, NULL) != 0) {
        pthread_mutex_destroy(&pool->mutex);
        goto sync_failed;
    }
    if (pthread_cond_init(&pool->idle, NULL) != 0) {
        pthread_cond_destroy(&pool->wake);
        pthread_mutex_destroy(&pool->mutex);
        goto sync_failed;
    }
    atomic_init(&pool->next, 0);
    atomic_init(&pool->busy, 0);
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->active, 0u);
    atomic_init(&pool->quit, 0);
    for (uint32_t i = 0; i < helpers; ++i) {
        pool->args[i].pool = pool;
        pool->args[i].index = i + 1;
        int rc = pthread_create(&pool->threads[i], NULL, worker_main, &pool->args[i]);
        if (rc != 0) {
            /* Fewer threads is slower, not wrong. */
            rtcd_log(RTCD_LOG_WARNING, "rtcd thread pool: thread %u of %u not created (%s); using %u", i + 1,
                     threads, strerror(rc), i + 1);
            break;
        }
        pool->started++;
    }
    *out = pool;
    return RTCD_OK;

sync_failed:
    rtcd_free(pool->threads);
    rtcd_free(pool->args);
    rtcd_free(pool);
    return rtcd_fail(RTCD_ERROR_INTERNAL, "rtcd_thread_pool_create: mutex or condition variable not created");
}

void rtcd_thread_pool_destroy(rtcd_thread_pool* pool)
{
    if (!pool) return;
    if (atomic_load(&pool->busy)) pool_finish(pool, pool);
    pthread_mutex_lock(&pool->mutex);
    atomic_store(&pool->quit, 1);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
    for (uint32_t i = 0; i < pool->started; ++i) pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->idle);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->mutex);
    rtcd_free(pool->threads);
    rtcd_free(pool->args);
    rtcd_free(pool);
}

rtcd_task_system rtcd_thread_pool_system(rtcd_thread_pool* pool)
{
    rtcd_task_system ts;
    memset(&ts, 0, sizeof ts);
    ts.worker_count = 1;
    if (!pool) return ts; /* no enqueue: rtcd_parallel_for runs inline */
    ts.enqueue = pool_enqueue;
    ts.finish = pool_finish;
    ts.user_context = pool;
    ts.worker_count = pool->started + 1;
    return ts;
}

void rtcd_parallel_for(const rtcd_task_system* ts, uint32_t count, uint32_t min_range, rtcd_task_fn* fn, void* ctx)
{
    if (count == 0 || !fn) return;
    if (min_range < 1) min_range = 1;
    if (!ts || !ts->enqueue) {
        fn(0, count, 0, ctx);
        return;
    }
    void* task = ts->enqueue(fn, count, min_range, ctx, ts->user_context);
    if (task && ts->finish) ts->finish(task, ts->user_context);
}
