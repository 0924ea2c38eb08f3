/* The per-pair map of the backends (key_map.h). */
#include "key_map.h"

#include "hooks.h"

#include <stdatomic.h>

#include <string.h>

void rtcd_key_map_free(rtcd_key_map* m)
{
    rtcd_free(m->slots);
    rtcd_free(m->values);
    rtcd_free(m->piece_new);
    uint32_t call = m->call;
    memset(m, 0, sizeof *m);
    m->call = call; /* a later call still tells its claims from old ones */
}

/* Room for `keys` more: a rebuild without the removed entries when the map
 * would pass half full. */
static int reserve(rtcd_key_map* m, uint32_t keys, size_t value_size)
{
    if (m->cap && m->value_size == value_size && 2 * ((uint64_t)m->live + m->removed + keys) < m->cap) return 1;
    uint32_t cap = 64;
    while (cap < 2 * ((uint64_t)m->live + keys) + 2) cap *= 2;
    rtcd_key_map next;
    memset(&next, 0, sizeof next);
    next.cap = cap;
    next.value_size = value_size;
    next.call = m->call;
    next.slots = rtcd_calloc(cap, sizeof *next.slots);
    next.values = rtcd_alloc(cap * value_size);
    if (!next.slots || !next.values) {
        rtcd_key_map_free(&next);
        return 0;
    }
    for (uint32_t s = 0; s < m->cap; ++s) {
        if (m->slots[s].used != 1) continue;
        uint32_t t = rtcd_key_map_slot(&next, m->slots[s].key);
        next.slots[t] = m->slots[s];
        memcpy(rtcd_key_map_value(&next, t), rtcd_key_map_value(m, s), value_size);
        next.live++;
    }
    next.piece_new = m->piece_new, next.piece_cap = m->piece_cap;
    m->piece_new = NULL;
    rtcd_key_map_free(m);
    *m = next;
    return 1;
}

/* Pairs per piece of claim_all's parallel pass: a claim costs a cache miss or two. */
#define CLAIM_RANGE 512u

int rtcd_key_map_begin(rtcd_key_map* m, uint32_t keys, size_t value_size)
{
    /* claim_all's count of new keys per piece first: a failure leaves the map as it was. */
    if (!rtcd_grow((void**)&m->piece_new, &m->piece_cap, (size_t)keys / CLAIM_RANGE + 2, sizeof *m->piece_new))
        return 0;
    if (!reserve(m, keys, value_size)) return 0;
    m->call++; /* this call's claims: calls[] == call */
    return 1;
}

uint32_t rtcd_key_map_claim(rtcd_key_map* m, uint64_t key)
{
    uint32_t s = rtcd_key_map_slot(m, key);
    rtcd_key_slot* e = &m->slots[s];
    if (e->used != 1) {
        e->used = 1;
        e->key = key;
        memset(rtcd_key_map_value(m, s), 0, m->value_size);
        m->live++;
    } else if (e->call == m->call) {
        return RTCD_KEY_MAP_REPEATED;
    }
    e->call = m->call;
    return s;
}

/* How far ahead a claim loop fetches: enough misses in flight to hide a
 * memory round trip behind the claims between. */
#define CLAIM_AHEAD 16u

static uint64_t key_at(const unsigned char* keys, size_t stride, uint32_t i)
{
    uint64_t key;
    memcpy(&key, keys + (size_t)i * stride, sizeof key);
    return key;
}

/* Pieces of the end's parallel pass. */
#define END_RANGE 4096u

/* slot_of[i] while claiming: the key is not in the map yet. */
#define KEY_NEW 0xfffffffeu

typedef struct claim_job {
    rtcd_key_map* m;
    const unsigned char* keys;
    size_t stride;
    uint32_t n;
    uint32_t* slot_of;
    uint32_t* piece_new; /* per CLAIM_RANGE piece: its new keys (NULL: not counted) */
    _Atomic uint32_t repeats; /* an entry found twice: the serial pass settles who claimed it */
} claim_job;

/* Keys already in the map take their slot, the others are left for the
 * serial pass (counted per piece, so that it visits only pieces that have
 * some): nothing is inserted here, so every probe reads a table that does
 * not change under it. */
static void find_range(uint32_t first_piece, uint32_t last_piece, uint32_t worker, void* ctx)
{
    (void)worker;
    claim_job* job = ctx;
    rtcd_key_map* m = job->m;
    uint32_t call = m->call;
    for (uint32_t p = first_piece; p < last_piece; ++p) {
        uint32_t end = (p + 1) * CLAIM_RANGE < job->n ? (p + 1) * CLAIM_RANGE : job->n, fresh = 0;
        for (uint32_t i = p * CLAIM_RANGE; i < end; ++i) {
            if (i + CLAIM_AHEAD < end)
                __builtin_prefetch(&m->slots[rtcd_key_map_home(m, key_at(job->keys, job->stride, i + CLAIM_AHEAD))], 1);
            uint32_t s = rtcd_key_map_slot(m, key_at(job->keys, job->stride, i));
            if (m->slots[s].used != 1) {
                job->slot_of[i] = KEY_NEW;
                fresh++;
                continue;
            }
            job->slot_of[i] = s;
            if (__atomic_exchange_n(&m->slots[s].call, call, __ATOMIC_RELAXED) == call)
                atomic_fetch_add_explicit(&job->repeats, 1u, memory_order_relaxed);
        }
        if (job->piece_new) job->piece_new[p] = fresh;
    }
}

void rtcd_key_map_claim_all(rtcd_key_map* m, const rtcd_task_system* ts, const void* keys, size_t stride, uint32_t n,
                            uint32_t* slot_of)
{
    uint32_t pieces = (n + CLAIM_RANGE - 1) / CLAIM_RANGE;
    claim_job job = {.m = m, .keys = keys, .stride = stride, .n = n, .slot_of = slot_of};
    atomic_init(&job.repeats, 0u);
    /* rtcd_key_map_begin made room for the counts; past its `keys` every
     * pair is looked at below (slower, the same claims). */
    if (m->piece_cap > pieces) job.piece_new = m->piece_new;
    rtcd_parallel_for(ts, pieces, 1, find_range, &job);
    if (atomic_load(&job.repeats)) {
        /* A key given twice (rare): its first copy in call order claims it.
         * A fresh call number forgets the marks of the parallel pass. */
        m->call++;
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t s = slot_of[i];
            if (s == KEY_NEW) continue;
            if (m->slots[s].call == m->call) slot_of[i] = RTCD_KEY_MAP_REPEATED;
            else m->slots[s].call = m->call;
        }
    }
    /* New keys in call order, as single claims would place them: the
     * pieces that have some (most calls bring few new pairs). */
    for (uint32_t p = 0; p < pieces; ++p) {
        if (job.piece_new && !job.piece_new[p]) continue;
        uint32_t end = (p + 1) * CLAIM_RANGE < n ? (p + 1) * CLAIM_RANGE : n;
        for (uint32_t i = p * CLAIM_RANGE; i < end; ++i)
            if (slot_of[i] == KEY_NEW) slot_of[i] = rtcd_key_map_claim(m, key_at(keys, stride, i));
    }
}

typedef struct end_job {
    rtcd_key_map* m;
    int (*drop)(void* value, int claimed, void* ctx);
    void* ctx;
    _Atomic uint32_t removed;
} end_job;

static void end_range(uint32_t begin, uint32_t end, uint32_t worker, void* ctx)
{
    (void)worker;
    end_job* job = ctx;
    rtcd_key_map* m = job->m;
    uint32_t removed = 0;
    for (uint32_t s = begin; s < end; ++s) {
        rtcd_key_slot* e = &m->slots[s];
        if (e->used != 1 || !job->drop(rtcd_key_map_value(m, s), e->call == m->call, job->ctx)) continue;
        e->used = 2;
        removed++;
    }
    if (removed) atomic_fetch_add_explicit(&job->removed, removed, memory_order_relaxed);
}

void rtcd_key_map_end(rtcd_key_map* m, const rtcd_task_system* ts, int (*drop)(void* value, int claimed, void* ctx),
                      void* ctx)
{
    end_job job = {.m = m, .drop = drop, .ctx = ctx};
    atomic_init(&job.removed, 0u);
    rtcd_parallel_for(ts, m->cap, END_RANGE, end_range, &job);
    uint32_t removed = atomic_load(&job.removed);
    m->live -= removed;
    m->removed += removed;
}
