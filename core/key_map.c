/* The per-pair map of the backends (key_map.h). */
#include "key_map.h"

#include "hooks.h"

#include <string.h>

int rtcd_key_map_init(rtcd_key_map* m, uint32_t entries, size_t value_size)
{
    uint32_t cap = 64;
    while (cap < 2 * (uint64_t)entries + 2) cap *= 2;
    memset(m, 0, sizeof *m);
    m->cap = cap;
    m->value_size = value_size;
    m->keys = rtcd_alloc(cap * sizeof *m->keys);
    m->values = rtcd_alloc(cap * value_size);
    m->used = rtcd_calloc(cap, 1);
    if (m->keys && m->values && m->used) return 1;
    rtcd_key_map_free(m);
    return 0;
}

void rtcd_key_map_free(rtcd_key_map* m)
{
    rtcd_free(m->keys);
    rtcd_free(m->values);
    rtcd_free(m->used);
    memset(m, 0, sizeof *m);
}
