/* Private to rtcd: what a backend keeps per pair between calls, by the
 * pair's key (open addressing, kept across calls). Each call claims its
 * pairs' entries in call order (a new key gets a zeroed one; a key claimed
 * twice in a call is reported, so its later copies run without state) and
 * ends by removing the entries it did not claim. Shared by the CPU and
 * OpenCL backends. */
#ifndef RTCD_CORE_KEY_MAP_H
#define RTCD_CORE_KEY_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "task.h"

#define RTCD_KEY_MAP_REPEATED 0xffffffffu

/* The functions below are exported for tests only (test_key_map). */

/* One slot's bookkeeping, together so that a probe reads one cache line. */
typedef struct rtcd_key_slot {
    uint64_t key;
    uint32_t call;         /* the call that last claimed it */
    uint32_t used;         /* 0 empty, 1 in use, 2 removed (probed past, reclaimed when rebuilt) */
} rtcd_key_slot;

typedef struct rtcd_key_map {
    rtcd_key_slot* slots;
    unsigned char* values; /* value_size bytes per slot */
    size_t value_size;
    uint32_t cap;          /* a power of two, 0 before the first call */
    uint32_t live, removed, call;
    uint32_t* piece_new;   /* rtcd_key_map_claim_all's scratch: new keys per piece of its pairs */
    size_t piece_cap;
} rtcd_key_map;

static inline uint32_t rtcd_key_map_home(const rtcd_key_map* m, uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (m->cap - 1);
}

/* The slot holding key, or the free slot where it would go (check
 * slots[].used). The map must have room (cap > 0). */
static inline uint32_t rtcd_key_map_slot(const rtcd_key_map* m, uint64_t key)
{
    uint32_t i = rtcd_key_map_home(m, key);
    while (m->slots[i].used && !(m->slots[i].used == 1 && m->slots[i].key == key)) i = (i + 1) & (m->cap - 1);
    return i;
}

static inline int rtcd_key_map_in_use(const rtcd_key_map* m, uint32_t slot) { return m->slots[slot].used == 1; }

static inline void* rtcd_key_map_value(const rtcd_key_map* m, uint32_t slot)
{
    return m->values + (size_t)slot * m->value_size;
}

/* Starts a call of at most `keys` pairs (values of value_size bytes):
 * rebuilds without the removed entries when the map would pass half full.
 * 0 on no memory (the map is unchanged, the call not started). A call that
 * fails before rtcd_key_map_end only leaves its claims looking old. */
RTCD_API int rtcd_key_map_begin(rtcd_key_map* m, uint32_t keys, size_t value_size);

/* Claims key for this call: its slot (a new entry's value is zeroed), or
 * RTCD_KEY_MAP_REPEATED when this call claimed it already. */
RTCD_API uint32_t rtcd_key_map_claim(rtcd_key_map* m, uint64_t key);
/* Claims keys[i] (stride bytes apart, e.g. inside rtcd_pair_desc) for
 * i < n into slot_of[i], as n calls of rtcd_key_map_claim in order would:
 * keys already in the map are found on ts's workers (NULL: this thread),
 * new keys are inserted after, in call order, so the map and the slots are
 * the same for any number of workers. */
RTCD_API void rtcd_key_map_claim_all(rtcd_key_map* m, const rtcd_task_system* ts, const void* keys, size_t stride, uint32_t n,
                            uint32_t* slot_of);

/* Ends the call: each entry in use is offered to `drop` (claimed: whether
 * this call claimed it) and removed when drop returns 1. drop runs on ts's
 * workers (NULL: this thread), each entry once. */
RTCD_API void rtcd_key_map_end(rtcd_key_map* m, const rtcd_task_system* ts, int (*drop)(void* value, int claimed, void* ctx),
                      void* ctx);

/* Frees the map (the caller has dealt with the values). */
RTCD_API void rtcd_key_map_free(rtcd_key_map* m);

#endif
