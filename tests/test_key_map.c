/* The backends' per-pair map (core/batch/key_map.c): rtcd_key_map_claim_all
 * on any number of workers claims exactly what rtcd_key_map_claim, called for
 * each key in order on one thread, does (the same slots, repeated copies and
 * new entries), over calls where pairs persist, arrive, leave and repeat. */
#include "test_util.h"

#include "batch/key_map.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t k_threads[] = {1, 2, 4};

/* The end of a call: entries this call did not claim leave. */
static int drop_unclaimed(void* value, int claimed, void* ctx)
{
    (void)value;
    (void)ctx;
    return !claimed;
}

/* One call's keys: most of the last call's (in its order, so that pieces
 * keep their pairs), some dropped, a few new ones anywhere, a few repeated. */
static uint32_t next_keys(test_rng* rng, const uint64_t* last, uint32_t last_n, uint64_t* keys, uint32_t cap,
                          uint64_t* next_new, uint32_t fresh_every)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < last_n && n < cap; ++i) {
        if ((uint32_t)(test_rng_next(rng) >> 32) % 50 == 0) continue; /* leaves */
        if (fresh_every && (uint32_t)(test_rng_next(rng) >> 32) % fresh_every == 0 && n < cap) keys[n++] = (*next_new)++;
        if (n < cap) keys[n++] = last[i];
        if ((uint32_t)(test_rng_next(rng) >> 32) % 400 == 0 && n < cap) keys[n++] = last[i]; /* repeated at once */
    }
    /* A repeat far from its first copy, in another piece. */
    if (n > 2 && n < cap) {
        uint64_t again = keys[(uint32_t)(test_rng_next(rng) >> 32) % (n / 2)];
        keys[n++] = again;
    }
    while (n < cap / 2) keys[n++] = (*next_new)++;
    return n;
}

static void test_claim_all_matches_claims_in_order(void** state)
{
    (void)state;
    enum { CAP = 6000, CALLS = 24 };
    uint64_t* keys = malloc(CAP * sizeof *keys);
    uint64_t* last = malloc(CAP * sizeof *last);
    uint32_t* want = malloc(CAP * sizeof *want);
    uint32_t* got = malloc(CAP * sizeof *got);
    assert_non_null(keys);
    assert_non_null(last);
    assert_non_null(want);
    assert_non_null(got);
    for (size_t t = 0; t < sizeof k_threads / sizeof k_threads[0]; ++t) {
        rtcd_thread_pool* pool = NULL;
        assert_int_equal(rtcd_thread_pool_create(k_threads[t], &pool), RTCD_OK);
        rtcd_task_system ts = rtcd_thread_pool_system(pool);
        rtcd_key_map one, all;
        memset(&one, 0, sizeof one);
        memset(&all, 0, sizeof all);
        test_rng rng = {0x6b65796d6170ull + t};
        uint64_t next_new = 1;
        uint32_t last_n = 0, repeats = 0, news = 0;
        for (uint32_t call = 0; call < CALLS; ++call) {
            /* Calls with no new pair, with a few, and with many. */
            uint32_t fresh_every = call % 3 == 0 ? 0u : call % 3 == 1 ? 700u : 5u;
            uint32_t n = next_keys(&rng, last, last_n, keys, CAP, &next_new, fresh_every);
            assert_true(rtcd_key_map_begin(&one, n, sizeof(uint32_t)));
            assert_true(rtcd_key_map_begin(&all, n, sizeof(uint32_t)));
            for (uint32_t i = 0; i < n; ++i) {
                want[i] = rtcd_key_map_claim(&one, keys[i]);
                if (want[i] == RTCD_KEY_MAP_REPEATED) {
                    repeats++;
                } else {
                    uint32_t* value = rtcd_key_map_value(&one, want[i]);
                    news += *value == 0;
                    *value = call + 1; /* a new entry's value is zeroed */
                }
            }
            rtcd_key_map_claim_all(&all, &ts, keys, sizeof *keys, n, got);
            for (uint32_t i = 0; i < n; ++i) {
                assert_int_equal(got[i], want[i]);
                if (got[i] != RTCD_KEY_MAP_REPEATED) *(uint32_t*)rtcd_key_map_value(&all, got[i]) = call + 1;
            }
            rtcd_key_map_end(&one, NULL, drop_unclaimed, NULL);
            rtcd_key_map_end(&all, &ts, drop_unclaimed, NULL);
            assert_int_equal(all.cap, one.cap);
            assert_int_equal(all.live, one.live);
            for (uint32_t s = 0; s < one.cap; ++s) {
                assert_int_equal(all.slots[s].used, one.slots[s].used);
                if (one.slots[s].used == 1) assert_true(all.slots[s].key == one.slots[s].key);
            }
            memcpy(last, keys, n * sizeof *keys);
            last_n = n;
        }
        print_message("%u threads: %u repeated copies, %u new entries, %u keys\n", k_threads[t], repeats, news,
                      (unsigned)(next_new - 1));
        assert_true(repeats > 0 && news > 1000);
        rtcd_key_map_free(&one);
        rtcd_key_map_free(&all);
        rtcd_thread_pool_destroy(pool);
    }
    free(keys);
    free(last);
    free(want);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claim_all_matches_claims_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
