/* What persists between calls: which device owns each pair (by key), and for
 * the iterative algorithms the pair's track (host) and kept rays (device).
 * A device's kept rays live in two arenas: a call walks the pairs' rays in
 * the one the last call wrote and writes its own into the other, each pair
 * at an offset the host gives it, room for as many rays as its pass can
 * keep (its items, at most RTCD_CL_STATE_ENTRIES). So the device memory
 * follows the pairs' passes, not a fixed slot per pair, and nothing is
 * freed or copied when pairs come and go. */
#include "cl_internal.h"

#include <string.h>

void rtcd_cl_reset_track(cl_pair_info* info)
{
    memset(&info->track, 0, sizeof info->track);
    info->entries = 0;
}

void rtcd_cl_reset_tracks(rtcd_opencl* cl)
{
    for (uint32_t i = 0; i < cl->info_count; ++i) rtcd_cl_reset_track(&cl->infos[cl->info_in][i]);
}

static int drop_unseen(void* value, int claimed, void* ctx)
{
    (void)value;
    (void)ctx;
    return !claimed;
}

rtcd_error rtcd_cl_assign_pairs(rtcd_opencl* cl, const rtcd_body_pair* pairs, uint32_t n, uint32_t* info_of)
{
    if (!rtcd_key_map_begin(&cl->map, n, sizeof(uint32_t)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the pair map");
    /* A key that appears twice gets RTCD_KEY_MAP_REPEATED (RTCD_CL_NO_SLOT)
     * for its later copies, which run without state. */
    _Static_assert(RTCD_KEY_MAP_REPEATED == RTCD_CL_NO_SLOT, "a repeated key's copy has no state");
    if (n) rtcd_key_map_claim_all(&cl->map, &cl->tasks, &pairs[0].key, sizeof *pairs, n, info_of);
    rtcd_key_map_end(&cl->map, &cl->tasks, drop_unseen, NULL);
    return RTCD_OK;
}

rtcd_error rtcd_cl_reserve_infos(rtcd_opencl* cl, uint32_t n)
{
    uint32_t out = cl->info_in ^ 1u;
    if (!rtcd_grow((void**)&cl->infos[out], &cl->infos_cap[out], (size_t)n + 1, sizeof(cl_pair_info)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for %u pair states", n);
    return RTCD_OK;
}

void rtcd_cl_gather_info(rtcd_opencl* cl, uint32_t i)
{
    uint32_t s = cl->call.info_of[i];
    if (s == RTCD_CL_NO_SLOT) return;
    uint32_t* at = rtcd_key_map_value(&cl->map, s);
    cl_pair_info* to = &cl->infos[cl->info_in ^ 1u][i];
    if (*at) {
        *to = cl->infos[cl->info_in][*at - 1u];
    } else { /* a new key: no device, nothing kept */
        memset(to, 0, sizeof *to);
        to->device = 0xff;
    }
    *at = i + 1u;
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
    /* Where it goes too, for writing: a store that misses stalls the
     * loads behind it that read a store just made (the poses' and
     * motion's, built on the stack), however far from it. */
    rtcd_prefetch_write(&cl->infos[cl->info_in ^ 1u][i], sizeof(cl_pair_info));
    /* Its result: written here when its pass finds nothing (PASS_EMPTY). */
    rtcd_prefetch_write(&cl->call.results[i], sizeof(rtcd_pair_result));
    if (*at) rtcd_prefetch_read(&cl->infos[cl->info_in][*at - 1u], sizeof(cl_pair_info));
}

void rtcd_cl_flip_infos(rtcd_opencl* cl, uint32_t n)
{
    cl->info_in ^= 1u;
    cl->info_count = n;
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
