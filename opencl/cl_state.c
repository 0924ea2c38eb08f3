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

static cl_pair_info* info_at(const rtcd_key_map* m, uint32_t slot) { return rtcd_key_map_value(m, slot); }

void rtcd_cl_reset_track(cl_pair_info* info)
{
    memset(&info->track, 0, sizeof info->track);
    info->entries = 0;
}

void rtcd_cl_reset_tracks(rtcd_opencl* cl)
{
    for (uint32_t s = 0; s < cl->map.cap; ++s)
        if (rtcd_key_map_in_use(&cl->map, s)) rtcd_cl_reset_track(info_at(&cl->map, s));
}

void rtcd_cl_new_info(cl_pair_info* info)
{
    if (info->seen) return;
    info->device = 0xff;
    info->seen = 1;
}

static int drop_unseen(void* value, int claimed, void* ctx)
{
    (void)value;
    (void)ctx;
    return !claimed;
}

rtcd_error rtcd_cl_assign_pairs(rtcd_opencl* cl, const rtcd_pair_desc* pairs, uint32_t n, uint32_t* info_of)
{
    if (!rtcd_key_map_begin(&cl->map, n, sizeof(cl_pair_info)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the pair map");
    /* A key that appears twice gets RTCD_KEY_MAP_REPEATED (RTCD_CL_NO_SLOT)
     * for its later copies, which run without state. New entries are
     * zeroed: rtcd_cl_new_info makes them pairs with no device yet. */
    _Static_assert(RTCD_KEY_MAP_REPEATED == RTCD_CL_NO_SLOT, "a repeated key's copy has no state");
    if (n) rtcd_key_map_claim_all(&cl->map, &pairs[0].key, sizeof *pairs, n, info_of);
    rtcd_key_map_end(&cl->map, drop_unseen, NULL);
    return RTCD_OK;
}

rtcd_error rtcd_cl_arena_reserve(cl_device_state* d, size_t entries)
{
    uint32_t out = d->arena_in ^ 1u;
    size_t bytes = (entries ? entries : 1) * 2 * sizeof(cl_uint);
    if (bytes <= d->arena_bytes[out] && d->arena[out]) return RTCD_OK;
    size_t cap = d->arena_bytes[out] ? d->arena_bytes[out] : 65536;
    while (cap < bytes) cap *= 2;
    if (d->arena[out]) clReleaseMemObject(d->arena[out]);
    d->arena[out] = NULL;
    d->arena_bytes[out] = 0;
    cl_int err;
    d->arena[out] = clCreateBuffer(d->context, CL_MEM_READ_WRITE, cap, NULL, &err);
    RTCD_CL_CHECK(err, "clCreateBuffer(kept rays)");
    d->arena_bytes[out] = cap;
    return RTCD_OK;
}
