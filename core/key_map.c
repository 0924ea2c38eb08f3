/* The per-pair map of the backends (key_map.h). */
#include "key_map.h"

#include "hooks.h"

#include <string.h>

void rtcd_key_map_free(rtcd_key_map* m)
{
    rtcd_free(m->keys);
    rtcd_free(m->used);
    rtcd_free(m->calls);
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
    next.keys = rtcd_alloc(cap * sizeof *next.keys);
    next.calls = rtcd_alloc(cap * sizeof *next.calls);
    next.values = rtcd_alloc(cap * value_size);
    next.used = rtcd_calloc(cap, 1);
    if (!next.keys || !next.calls || !next.values || !next.used) {
        rtcd_key_map_free(&next);
        return 0;
    }
    for (uint32_t s = 0; s < m->cap; ++s) {
        if (m->used[s] != 1) continue;
        uint32_t t = rtcd_key_map_slot(&next, m->keys[s]);
        next.used[t] = 1;
        next.keys[t] = m->keys[s];
        next.calls[t] = m->calls[s];
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
    if (m->used[s] != 1) {
        m->used[s] = 1;
        m->keys[s] = key;
        m->calls[s] = m->call - 1; /* not this call's yet */
        memset(rtcd_key_map_value(m, s), 0, m->value_size);
        m->live++;
    } else if (m->calls[s] == m->call) {
        return RTCD_KEY_MAP_REPEATED;
    }
    m->calls[s] = m->call;
    return s;
}

void rtcd_key_map_end(rtcd_key_map* m, int (*drop)(void* value, int claimed, void* ctx), void* ctx)
{
    for (uint32_t s = 0; s < m->cap; ++s) {
        if (m->used[s] != 1 || !drop(rtcd_key_map_value(m, s), m->calls[s] == m->call, ctx)) continue;
        m->used[s] = 2;
        m->live--;
        m->removed++;
    }
}
