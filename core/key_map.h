/* Private to rtcd: what a backend keeps per pair between calls, by the
 * pair's key (open addressing; each call builds the next map from the keys
 * present, so vanished pairs drop out). Shared by the CPU and OpenCL
 * backends. */
#ifndef RTCD_CORE_KEY_MAP_H
#define RTCD_CORE_KEY_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct rtcd_key_map {
    uint64_t* keys;
    uint8_t* used;         /* 0 empty, 1 in use, 2 removed (probed past, reclaimed when rebuilt) */
    unsigned char* values; /* value_size bytes per slot */
    size_t value_size;
    uint32_t cap;          /* a power of two, 0 before the first init */
} rtcd_key_map;

/* Room for `entries` keys (at most half full). 0 on no memory (the map is
 * freed then). */
int rtcd_key_map_init(rtcd_key_map* m, uint32_t entries, size_t value_size);
void rtcd_key_map_free(rtcd_key_map* m);

/* The slot holding key, or the free slot where it would go (check used[]).
 * The map must be initialised (cap > 0). */
static inline uint32_t rtcd_key_map_slot(const rtcd_key_map* m, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    uint32_t i = (uint32_t)(h >> 32) & (m->cap - 1);
    while (m->used[i] && !(m->used[i] == 1 && m->keys[i] == key)) i = (i + 1) & (m->cap - 1);
    return i;
}

/* The slot of key in m when present, else UINT32_MAX (also for an empty map). */
static inline uint32_t rtcd_key_map_find(const rtcd_key_map* m, uint64_t key)
{
    if (!m->cap) return UINT32_MAX;
    uint32_t s = rtcd_key_map_slot(m, key);
    return m->used[s] == 1 ? s : UINT32_MAX;
}

static inline void* rtcd_key_map_value(const rtcd_key_map* m, uint32_t slot)
{
    return m->values + (size_t)slot * m->value_size;
}

#endif
