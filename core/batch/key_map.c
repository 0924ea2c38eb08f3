/* The per-pair map of the backends (key_map.h). */
#include "key_map.h"

#include "hooks.h"

#include <string.h>

void rtcd_key_map_free(rtcd_key_map* m)
{
    rtcd_free(m->slots);
    rtcd_free(m->values);
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
    rtcd_key_map_free(m);
    *m = next;
    return 1;
}

int rtcd_key_map_begin(rtcd_key_map* m, uint32_t keys, size_t value_size)
{
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

/* How far ahead claim_all fetches: enough misses in flight to hide a
 * memory round trip behind the claims between. */
#define CLAIM_AHEAD 16u

void rtcd_key_map_claim_all(rtcd_key_map* m, const void* keys, size_t stride, uint32_t n, uint32_t* slot_of)
{
    const unsigned char* k = keys;
    for (uint32_t i = 0; i < n; ++i) {
        if (i + CLAIM_AHEAD < n) {
            uint64_t ahead;
            memcpy(&ahead, k + (size_t)(i + CLAIM_AHEAD) * stride, sizeof ahead);
            __builtin_prefetch(&m->slots[rtcd_key_map_home(m, ahead)], 1);
        }
        uint64_t key;
        memcpy(&key, k + (size_t)i * stride, sizeof key);
        slot_of[i] = rtcd_key_map_claim(m, key);
    }
}

void rtcd_key_map_end(rtcd_key_map* m, int (*drop)(void* value, int claimed, void* ctx), void* ctx)
{
    for (uint32_t s = 0; s < m->cap; ++s) {
        rtcd_key_slot* e = &m->slots[s];
        if (e->used != 1 || !drop(rtcd_key_map_value(m, s), e->call == m->call, ctx)) continue;
        e->used = 2;
        m->live--;
        m->removed++;
    }
}
