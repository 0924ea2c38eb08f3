/* The task system hook and the default thread pool (core/batch/task.c). */
#include "test_util.h"

#include "batch/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const uint32_t k_threads[] = {1, 2, 4, 8};
static const uint32_t k_counts[] = {0, 1, 7, 1000, 100000};

/* Records every call: visits per item, the worker that ran it, bad ranges. */
typedef struct visit_ctx {
    uint8_t* visits;
    uint8_t* worker;
    uint32_t count, min_range, worker_count;
    _Atomic uint32_t bad_ranges;
} visit_ctx;

static void visit_task(uint32_t begin, uint32_t end, uint32_t worker, void* context)
{
    visit_ctx* c = (visit_ctx*)context;
    /* At least min_range items, except the range that ends the task. */
    if (begin >= end || end > c->count || (end - begin < c->min_range && end != c->count) ||
        worker >= c->worker_count)
        c->bad_ranges++;
    for (uint32_t i = begin; i < end && i < c->count; ++i) {
        c->visits[i]++;
        c->worker[i] = (uint8_t)worker;
    }
}

static void check_visits(const rtcd_task_system* ts, uint32_t count, uint32_t min_range)
{
    visit_ctx c;
    memset(&c, 0, sizeof c);
    c.visits = (uint8_t*)calloc(count + 1, 1);
    c.worker = (uint8_t*)calloc(count + 1, 1);
    assert_non_null(c.visits);
    assert_non_null(c.worker);
    c.count = count;
    c.min_range = min_range;
    c.worker_count = ts->worker_count;
    rtcd_parallel_for(ts, count, min_range, visit_task, &c);
    assert_int_equal(c.bad_ranges, 0);
    for (uint32_t i = 0; i < count; ++i) {
        assert_int_equal(c.visits[i], 1);
        assert_true(c.worker[i] < ts->worker_count);
    }
    free(c.visits);
    free(c.worker);
}

static void test_every_item_once(void** state)
{
    (void)state;
    const uint32_t min_ranges[] = {1, 3, 64, 5000};
    for (size_t t = 0; t < sizeof k_threads / sizeof k_threads[0]; ++t) {
        rtcd_thread_pool* pool = NULL;
        assert_int_equal(rtcd_thread_pool_create(k_threads[t], &pool), RTCD_OK);
        assert_non_null(pool);
        rtcd_task_system ts = rtcd_thread_pool_system(pool);
        assert_non_null(ts.enqueue);
        assert_non_null(ts.finish);
        assert_true(ts.worker_count >= 1 && ts.worker_count <= k_threads[t]);
        for (size_t n = 0; n < sizeof k_counts / sizeof k_counts[0]; ++n)
            for (size_t m = 0; m < sizeof min_ranges / sizeof min_ranges[0]; ++m)
                check_visits(&ts, k_counts[n], min_ranges[m]);
        check_visits(&ts, 1000, 0); /* 0 reads as 1 */
        rtcd_thread_pool_destroy(pool);
    }
    rtcd_thread_pool_destroy(NULL);
}

/* No task system, or one without enqueue: inline, worker 0. */
static void test_inline_without_system(void** state)
{
    (void)state;
    rtcd_task_system none;
    memset(&none, 0, sizeof none);
    none.worker_count = 1;
    check_visits(&none, 1000, 1);
    rtcd_task_system from_null = rtcd_thread_pool_system(NULL);
    assert_null(from_null.enqueue);
    assert_int_equal(from_null.worker_count, 1);
    check_visits(&from_null, 7, 1);

    visit_ctx c;
    memset(&c, 0, sizeof c);
    uint8_t visits[5] = {0}, worker[5] = {0};
    c.visits = visits;
    c.worker = worker;
    c.count = 5;
    c.min_range = 1;
    c.worker_count = 1;
    rtcd_parallel_for(NULL, 5, 1, visit_task, &c);
    for (int i = 0; i < 5; ++i) assert_int_equal(visits[i], 1);
    rtcd_parallel_for(NULL, 5, 1, NULL, &c); /* no function: nothing */
}

typedef struct sum_ctx {
    const uint32_t* values;
    uint64_t* partial; /* one per worker: no sharing between workers */
} sum_ctx;

static void sum_task(uint32_t begin, uint32_t end, uint32_t worker, void* context)
{
    sum_ctx* c = (sum_ctx*)context;
    uint64_t s = 0;
    for (uint32_t i = begin; i < end; ++i) s += c->values[i];
    c->partial[worker] += s;
}

/* A step's worth of tasks again and again on one pool, as the narrow phase
 * does: no state leaks from one task into the next. */
static void test_repeated_enqueue(void** state)
{
    (void)state;
    enum { N = 5000 };
    uint32_t* values = (uint32_t*)malloc(N * sizeof *values);
    assert_non_null(values);
    uint64_t expected = 0;
    for (uint32_t i = 0; i < N; ++i) expected += values[i] = i * 2654435761u >> 7;
    for (size_t t = 0; t < sizeof k_threads / sizeof k_threads[0]; ++t) {
        rtcd_thread_pool* pool = NULL;
        assert_int_equal(rtcd_thread_pool_create(k_threads[t], &pool), RTCD_OK);
        rtcd_task_system ts = rtcd_thread_pool_system(pool);
        uint64_t partial[8];
        sum_ctx c = {values, partial};
        for (int k = 0; k < 1000; ++k) {
            memset(partial, 0, sizeof partial);
            uint32_t count = k % 10 == 9 ? (uint32_t)(k % 97) : N; /* some small tasks between */
            rtcd_parallel_for(&ts, count, 4, sum_task, &c);
            uint64_t want = 0, got = 0;
            for (uint32_t i = 0; i < count; ++i) want += values[i];
            for (uint32_t w = 0; w < ts.worker_count; ++w) got += partial[w];
            assert_true(got == (count == N ? expected : want));
        }
        /* Enqueue without finish: destroy waits for the task. */
        memset(partial, 0, sizeof partial);
        void* task = ts.enqueue(sum_task, N, 1, &c, ts.user_context);
        rtcd_thread_pool_destroy(pool);
        (void)task;
        uint64_t got = 0;
        for (uint32_t w = 0; w < 8; ++w) got += partial[w];
        assert_true(got == expected);
    }
    free(values);
}

/* A user scheduler that runs everything inside enqueue. */
typedef struct inline_system {
    int enqueues, finishes;
} inline_system;

static void* inline_enqueue(rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* task_context, void* user)
{
    (void)min_range;
    ((inline_system*)user)->enqueues++;
    task(0, count, 0, task_context);
    return NULL;
}

static void inline_finish(void* task, void* user)
{
    (void)task;
    ((inline_system*)user)->finishes++;
}

/* A user scheduler that returns a handle and runs the work in finish, in
 * ranges of min_range on two pretend workers. */
typedef struct deferred_task {
    rtcd_task_fn* fn;
    void* ctx;
    uint32_t count, min_range;
} deferred_task;

typedef struct deferred_system {
    deferred_task slot;
    int enqueues, finishes, wrong_handle;
} deferred_system;

static void* deferred_enqueue(rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* task_context,
                              void* user)
{
    deferred_system* s = (deferred_system*)user;
    s->enqueues++;
    s->slot.fn = task;
    s->slot.ctx = task_context;
    s->slot.count = count;
    s->slot.min_range = min_range;
    return &s->slot;
}

static void deferred_finish(void* handle, void* user)
{
    deferred_system* s = (deferred_system*)user;
    s->finishes++;
    if (handle != &s->slot) s->wrong_handle++;
    deferred_task* t = (deferred_task*)handle;
    uint32_t worker = 0;
    for (uint32_t b = 0; b < t->count; b += t->min_range, worker ^= 1u) {
        uint32_t e = t->count - b < t->min_range ? t->count : b + t->min_range;
        t->fn(b, e, worker, t->ctx);
    }
}

static void test_user_task_system(void** state)
{
    (void)state;
    inline_system is = {0, 0};
    rtcd_task_system ts = {inline_enqueue, inline_finish, &is, 1};
    check_visits(&ts, 1000, 16);
    check_visits(&ts, 0, 16); /* nothing to do: the scheduler is not called */
    assert_int_equal(is.enqueues, 1);
    assert_int_equal(is.finishes, 0); /* NULL handle: no finish */

    deferred_system ds;
    memset(&ds, 0, sizeof ds);
    rtcd_task_system dts = {deferred_enqueue, deferred_finish, &ds, 2};
    check_visits(&dts, 1000, 16);
    check_visits(&dts, 7, 3);
    check_visits(&dts, 100000, 1);
    assert_int_equal(ds.enqueues, 3);
    assert_int_equal(ds.finishes, 3);
    assert_int_equal(ds.wrong_handle, 0);
    assert_int_equal(ds.slot.min_range, 1);
}

static void test_invalid_thread_counts(void** state)
{
    (void)state;
    const uint32_t bad[] = {0, 1025, 100000, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        rtcd_thread_pool* pool = (rtcd_thread_pool*)&pool; /* any non-NULL */
        assert_int_equal(rtcd_thread_pool_create(bad[i], &pool), RTCD_ERROR_INVALID_ARGUMENT);
        assert_null(pool);
        assert_true(strlen(rtcd_last_error_message()) > 0);
    }
    assert_int_equal(rtcd_thread_pool_create(2, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_thread_pool* pool = NULL;
    assert_int_equal(rtcd_thread_pool_create(1, &pool), RTCD_OK);
    assert_int_equal(rtcd_thread_pool_system(pool).worker_count, 1);
    rtcd_thread_pool_destroy(pool);
    assert_true(rtcd_cpu_count() >= 1);
}

/* Items of very different cost, each output to its own slot: the results
 * are bit-identical whatever the pool size. */
static void uneven_task(uint32_t begin, uint32_t end, uint32_t worker, void* context)
{
    (void)worker;
    float* out = (float*)context;
    for (uint32_t i = begin; i < end; ++i) {
        uint32_t iterations = 1 + (i * 2654435761u >> 20) % 200;
        float x = (float)i * 0.001f;
        for (uint32_t k = 0; k < iterations; ++k) x = x * 0.999f + 0.5f / (1.0f + x * x);
        out[i] = x;
    }
}

static void test_deterministic_results(void** state)
{
    (void)state;
    enum { N = 20000 };
    float* reference = (float*)malloc(N * sizeof(float));
    float* out = (float*)malloc(N * sizeof(float));
    assert_non_null(reference);
    assert_non_null(out);
    rtcd_parallel_for(NULL, N, 1, uneven_task, reference);
    const uint32_t threads[] = {1, 2, 3, 4, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; ++t) {
        rtcd_thread_pool* pool = NULL;
        assert_int_equal(rtcd_thread_pool_create(threads[t], &pool), RTCD_OK);
        rtcd_task_system ts = rtcd_thread_pool_system(pool);
        for (uint32_t min_range = 1; min_range <= 256; min_range *= 16) {
            memset(out, 0xff, N * sizeof(float));
            rtcd_parallel_for(&ts, N, min_range, uneven_task, out);
            assert_memory_equal(out, reference, N * sizeof(float));
        }
        rtcd_thread_pool_destroy(pool);
    }
    free(reference);
    free(out);
}

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* Workers poll for a while after a task, then sleep (task.c, RTCD_SPIN_NS):
 * a task that comes while they poll, one that comes after they sleep, and a
 * pool destroyed while they poll all run every item once and return. */
static void test_poll_then_sleep(void **state)
{
    (void)state;
    const long gaps_us[] = {0, 5, 30, 200, 3000};
    for (size_t t = 1; t < sizeof k_threads / sizeof k_threads[0]; ++t) {
        rtcd_thread_pool* pool = NULL;
        assert_int_equal(rtcd_thread_pool_create(k_threads[t], &pool), RTCD_OK);
        rtcd_task_system ts = rtcd_thread_pool_system(pool);
        for (size_t g = 0; g < sizeof gaps_us / sizeof gaps_us[0]; ++g)
            for (int repeat = 0; repeat < 4; ++repeat) {
                check_visits(&ts, 1000, 1);
                sleep_us(gaps_us[g]);
            }
        check_visits(&ts, 1000, 1);
        rtcd_thread_pool_destroy(pool); /* its workers are polling */
    }
}

/* test_task --bench: the pool's cost per parallel loop (a few items each,
 * the step's shape), back to back and after a serial gap; medians over
 * rounds, JSON on stdout. Compare libraries with LD_LIBRARY_PATH. */
static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static void spin_us(double us)
{
    for (double start = now_us(); now_us() - start < us;)
        ;
}

static void touch_task(uint32_t begin, uint32_t end, uint32_t worker, void* context)
{
    (void)worker;
    volatile uint32_t* sink = (volatile uint32_t*)context;
    for (uint32_t i = begin; i < end; ++i) sink[i & 63u] += i;
}

static int by_value(const void* x, const void* y)
{
    double a = *(const double*)x, b = *(const double*)y;
    return (a > b) - (a < b);
}

static int bench(uint32_t threads)
{
    enum { ROUNDS = 15, LOOPS = 400 };
    const double gaps_us[] = {0, 20, 100, 1000};
    rtcd_thread_pool* pool = NULL;
    if (rtcd_thread_pool_create(threads, &pool) != RTCD_OK) return 1;
    rtcd_task_system ts = rtcd_thread_pool_system(pool);
    uint32_t sink[64] = {0};
    printf("{\"threads\":%u,\"loop_us_median\":{", ts.worker_count);
    for (size_t g = 0; g < sizeof gaps_us / sizeof gaps_us[0]; ++g) {
        double rounds[ROUNDS];
        for (int r = 0; r < ROUNDS; ++r) {
            double start = now_us();
            for (int k = 0; k < LOOPS; ++k) {
                rtcd_parallel_for(&ts, 4 * ts.worker_count, 1, touch_task, sink);
                spin_us(gaps_us[g]);
            }
            rounds[r] = (now_us() - start) / LOOPS - gaps_us[g];
        }
        qsort(rounds, ROUNDS, sizeof rounds[0], by_value);
        printf("%s\"gap_%.0f_us\":%.3f", g ? "," : "", gaps_us[g], rounds[ROUNDS / 2]);
    }
    printf("}}\n");
    rtcd_thread_pool_destroy(pool);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) return bench(argc > 2 ? (uint32_t)atoi(argv[2]) : rtcd_cpu_count());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_item_once),
        cmocka_unit_test(test_inline_without_system),
        cmocka_unit_test(test_repeated_enqueue),
        cmocka_unit_test(test_user_task_system),
        cmocka_unit_test(test_invalid_thread_counts),
        cmocka_unit_test(test_deterministic_results),
        cmocka_unit_test(test_poll_then_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
