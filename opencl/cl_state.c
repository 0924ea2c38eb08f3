/* What persists between calls: which device owns each pair (by key), and for
 * the iterative algorithms the pair's track (host: a pool of states the key
 * map points into, each planned where it lies) and kept rays (device).
 * A device's kept rays live in two arenas: a call walks the pairs' rays in
 * the one the last call wrote and writes its own into the other, each pair
 * at an offset the host gives it, room for as many rays as its pass can
 * keep (its items, at most RTCD_CL_STATE_ENTRIES). So the device memory
 * follows the pairs' passes, not a fixed slot per pair, and nothing is
 * freed or copied when pairs come and go. */
#include "cl_internal.h"

#include <stdatomic.h>

#include <string.h>

void rtcd_cl_reset_track(cl_pair_info* info)
{
    memset(&info->track, 0, sizeof info->track);
    info->entries = 0;
}

void rtcd_cl_reset_tracks(rtcd_opencl* cl)
{
    uint32_t high = atomic_load(&cl->info_high);
    for (uint32_t i = 0; i < high; ++i) rtcd_cl_reset_track(&cl->infos[i]);
}

/* A key the call did not see leaves the map, its state's index back to the pool. */
static int drop_unseen(void* value, int claimed, void* ctx)
{
    if (claimed) return 0;
    rtcd_opencl* cl = ctx;
    uint32_t at = *(const uint32_t*)value;
    if (at) cl->info_free[atomic_fetch_add_explicit(&cl->info_free_count, 1u, memory_order_relaxed)] = at - 1u;
    return 1;
}

rtcd_error rtcd_cl_assign_pairs(rtcd_opencl* cl, const rtcd_body_pair* pairs, uint32_t n, uint32_t* info_of)
{
    if (!rtcd_key_map_begin(&cl->map, n, sizeof(uint32_t)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the pair map");
    /* A key that appears twice gets RTCD_KEY_MAP_REPEATED (RTCD_CL_NO_SLOT)
     * for its later copies, which run without state. */
    _Static_assert(RTCD_KEY_MAP_REPEATED == RTCD_CL_NO_SLOT, "a repeated key's copy has no state");
    if (n) rtcd_key_map_claim_all(&cl->map, &cl->tasks, &pairs[0].key, sizeof *pairs, n, info_of);
    rtcd_key_map_end(&cl->map, &cl->tasks, drop_unseen, cl);
    return RTCD_OK;
}

rtcd_error rtcd_cl_reserve_infos(rtcd_opencl* cl, uint32_t n)
{
    /* Every index handed out is in use or in info_free, and the states in
     * use are at most the call's n pairs: the pool never needs more than
     * the larger of n and what it handed out. */
    uint32_t high = atomic_load(&cl->info_high);
    size_t need = n > high ? n : high;
    if (!rtcd_grow((void**)&cl->infos, &cl->info_cap, need + 1, sizeof *cl->infos) ||
        !rtcd_grow((void**)&cl->info_free, &cl->info_free_cap, need + 1, sizeof *cl->info_free))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for %u pair states", n);
    return RTCD_OK;
}

/* An index for a new key: one given back, else the next never used. Only
 * takers run while the pool is planned from (the map gave its indices back
 * before), so a compare-and-swap on the count is enough. */
static uint32_t new_info(rtcd_opencl* cl)
{
    uint32_t c = atomic_load_explicit(&cl->info_free_count, memory_order_relaxed);
    while (c && !atomic_compare_exchange_weak_explicit(&cl->info_free_count, &c, c - 1u, memory_order_relaxed,
                                                       memory_order_relaxed)) {
    }
    return c ? cl->info_free[c - 1u] : atomic_fetch_add_explicit(&cl->info_high, 1u, memory_order_relaxed);
}

cl_pair_info* rtcd_cl_take_info(rtcd_opencl* cl, uint32_t i)
{
    uint32_t s = cl->call.info_of[i];
    if (s == RTCD_CL_NO_SLOT) {
        cl->call.info_at[i] = RTCD_CL_NO_SLOT;
        return NULL;
    }
    uint32_t* at = rtcd_key_map_value(&cl->map, s);
    if (!*at) { /* a new key: no device, nothing kept */
        uint32_t k = new_info(cl);
        memset(&cl->infos[k], 0, sizeof cl->infos[k]);
        cl->infos[k].device = 0xff;
        *at = k + 1u;
    }
    cl->call.info_at[i] = *at - 1u;
    return &cl->infos[*at - 1u];
}

void rtcd_cl_prefetch_info(const rtcd_opencl* cl, uint32_t i, int stage)
{
    uint32_t s = cl->call.info_of[i];
    if (s == RTCD_CL_NO_SLOT) return;
    const uint32_t* at = rtcd_key_map_value(&cl->map, s);
    if (stage == 0) {
        __builtin_prefetch(at);
        return;
    }
    /* For writing: planning updates the state in place, and a store that
     * misses stalls the loads behind it that read a store just made (the
     * poses' and motion's, built on the stack), however far from it. */
    if (*at) rtcd_prefetch_write(&cl->infos[*at - 1u], sizeof(cl_pair_info));
    /* Its result: written here when its pass finds nothing (PASS_EMPTY). */
    rtcd_prefetch_write(&cl->call.results[i], sizeof(rtcd_pair_result));
}

rtcd_error rtcd_cl_arena_reserve(cl_device_state* d, size_t entries, size_t kept)
{
    uint32_t out = d->arena_in ^ 1u;
    size_t bytes = (entries ? entries : 1) * 2 * sizeof(cl_uint);
    if (bytes <= d->arena_bytes[out] && d->arena[out]) return RTCD_OK;
    size_t cap = d->arena_bytes[out] ? d->arena_bytes[out] : 65536;
    while (cap < bytes) cap *= 2;
    if (!kept && d->arena[out]) { /* nothing to keep: the old one goes first (less memory at once) */
        clReleaseMemObject(d->arena[out]);
        d->arena[out] = NULL;
        d->arena_bytes[out] = 0;
    }
    cl_int err;
    cl_mem grown = clCreateBuffer(d->context, CL_MEM_READ_WRITE, cap, NULL, &err);
    RTCD_CL_CHECK(err, "clCreateBuffer(kept rays)");
    /* What the call's earlier segments wrote, copied behind their kernels
     * on the in-order queue; the old buffer goes once they are done. */
    if (kept && d->arena[out]) {
        err = clEnqueueCopyBuffer(d->queue, d->arena[out], grown, 0, 0, kept * 2 * sizeof(cl_uint), 0, NULL, NULL);
        if (err != CL_SUCCESS) clReleaseMemObject(grown);
        RTCD_CL_CHECK(err, "clEnqueueCopyBuffer(kept rays)");
    }
    if (d->arena[out]) clReleaseMemObject(d->arena[out]);
    d->arena[out] = grown;
    d->arena_bytes[out] = cap;
    return RTCD_OK;
}
