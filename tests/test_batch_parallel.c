/* rtcd_batch_parallel_for: the batch's workers for the work around a batch
 * call (the Bullet plugin's gathering and write-back). Every item exactly
 * once, worker indices below rtcd_batch_worker_count, on the CPU backend's
 * threads, through an engine's task system, and on OpenCL's own pool. */
#include "test_util.h"

#include <rtcd/rtcd_batch.h>

#include <stdlib.h>
#include <string.h>

typedef struct visit_ctx {
    uint8_t* visits;
    uint32_t count, workers;
    _Atomic uint32_t bad;
} visit_ctx;

static void visit(uint32_t begin, uint32_t end, uint32_t worker, void* context)
{
    visit_ctx* c = (visit_ctx*)context;
    if (begin >= end || end > c->count || worker >= c->workers) c->bad++;
    for (uint32_t i = begin; i < end && i < c->count; ++i) c->visits[i]++;
}

static void check_batch(rtcd_batch* b, uint32_t count)
{
    visit_ctx c;
    memset(&c, 0, sizeof c);
    c.visits = (uint8_t*)calloc(count + 1, 1);
    assert_non_null(c.visits);
    c.count = count;
    c.workers = rtcd_batch_worker_count(b);
    assert_true(c.workers >= 1);
    rtcd_batch_parallel_for(b, count, 16, visit, &c);
    assert_int_equal(c.bad, 0);
    for (uint32_t i = 0; i < count; ++i) assert_int_equal(c.visits[i], 1);
    free(c.visits);
}

static void test_cpu_threads(void** state)
{
    (void)state;
    const uint32_t threads[] = {1, 2, 4};
    for (size_t t = 0; t < 3; ++t) {
        rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
        def.backend = RTCD_BACKEND_CPU;
        def.threads = threads[t];
        rtcd_batch* b = NULL;
        assert_int_equal(rtcd_batch_create(&def, &b), RTCD_OK);
        /* The backend's own threads: as many workers as it has. */
        assert_int_equal(rtcd_batch_worker_count(b), rtcd_batch_thread_count(b));
        check_batch(b, 0);
        check_batch(b, 1);
        check_batch(b, 10000);
        rtcd_batch_release(b);
    }
    /* No batch: the calling thread. */
    assert_int_equal(rtcd_batch_worker_count(NULL), 1);
    check_batch(NULL, 100);
}

/* An engine's scheduler (here: runs everything inline as worker 2 of 3). */
typedef struct engine {
    uint32_t calls;
} engine;

static void* engine_enqueue(rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* task_context, void* user)
{
    (void)min_range;
    ((engine*)user)->calls++;
    task(0, count, 2, task_context);
    return NULL;
}

static void engine_finish(void* task, void* user)
{
    (void)task;
    (void)user;
}

static void test_engine_task_system(void** state)
{
    (void)state;
    engine e = {0};
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_CPU;
    def.tasks.enqueue = engine_enqueue;
    def.tasks.finish = engine_finish;
    def.tasks.user_context = &e;
    def.tasks.worker_count = 3;
    rtcd_batch* b = NULL;
    assert_int_equal(rtcd_batch_create(&def, &b), RTCD_OK);
    assert_int_equal(rtcd_batch_worker_count(b), 3);
    check_batch(b, 500);
    assert_true(e.calls >= 1); /* the engine ran it, not a pool of rtcd's */
    rtcd_batch_release(b);
}

/* OpenCL without an engine's task system: a pool of def.threads made on
 * first use (skipped where no OpenCL device opens). */
static void test_opencl_pool(void** state)
{
    (void)state;
    rtcd_narrowphase_def def = rtcd_default_narrowphase_def();
    def.backend = RTCD_BACKEND_OPENCL;
    def.threads = 3;
    rtcd_batch* b = NULL;
    if (rtcd_batch_create(&def, &b) != RTCD_OK) {
        print_message("no OpenCL device: skipped\n");
        return;
    }
    assert_true(rtcd_batch_worker_count(b) >= 1 && rtcd_batch_worker_count(b) <= 3);
    check_batch(b, 3000);
    check_batch(b, 7);
    /* A new def with other threads: the pool is made again for them. */
    def.threads = 2;
    assert_int_equal(rtcd_batch_set_def(b, &def), RTCD_OK);
    assert_true(rtcd_batch_worker_count(b) >= 1 && rtcd_batch_worker_count(b) <= 2);
    check_batch(b, 3000);
    rtcd_batch_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_threads),
        cmocka_unit_test(test_engine_task_system),
        cmocka_unit_test(test_opencl_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
