/* What persists between calls: which device owns each pair (by key), and for
 * the iterative algorithms the pair's track (host) and kept rays (a slot in
 * its device's state buffer, two ping-pong halves). */
#include "cl_internal.h"

#include <string.h>

#define SLOT_BYTES ((size_t)2 * RTCD_CL_STATE_ENTRIES * 2 * sizeof(cl_uint))

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

static int give_back_slot(cl_device_state* d, uint32_t slot)
{
    if (!rtcd_grow((void**)&d->free_slots, &d->free_cap, d->free_count + 1, sizeof *d->free_slots)) return 0;
    d->free_slots[d->free_count++] = slot;
    return 1;
}

void rtcd_cl_new_info(cl_pair_info* info)
{
    if (info->seen) return;
    info->slot = RTCD_CL_NO_SLOT;
    info->device = 0xff;
    info->seen = 1;
}

rtcd_error rtcd_cl_give_back_slot(rtcd_opencl* cl, cl_pair_info* info)
{
    if (info->slot == RTCD_CL_NO_SLOT) return RTCD_OK;
    if (!give_back_slot(&cl->devices[info->device], info->slot))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the free state slots");
    info->slot = RTCD_CL_NO_SLOT;
    return RTCD_OK;
}

/* A pair this call did not see gives its slot back and leaves the map. */
static int drop_unseen(void* value, int claimed, void* ctx)
{
    rtcd_opencl* cl = ctx;
    if (claimed) return 0;
    rtcd_error e = rtcd_cl_give_back_slot(cl, value);
    if (e != RTCD_OK) cl->drop_error = e;
    return 1;
}

rtcd_error rtcd_cl_assign_pairs(rtcd_opencl* cl, const rtcd_pair_desc* pairs, uint32_t n, uint32_t* info_of)
{
    if (!rtcd_key_map_begin(&cl->map, n, sizeof(cl_pair_info)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the pair map");
    /* A key that appears twice gets RTCD_KEY_MAP_REPEATED (RTCD_CL_NO_SLOT)
     * for its later copies, which run without state. New entries are
     * zeroed: rtcd_cl_new_info makes them pairs with no slot nor device. */
    _Static_assert(RTCD_KEY_MAP_REPEATED == RTCD_CL_NO_SLOT, "a repeated key's copy has no state");
    if (n) rtcd_key_map_claim_all(&cl->map, &pairs[0].key, sizeof *pairs, n, info_of);
    cl->drop_error = RTCD_OK;
    rtcd_key_map_end(&cl->map, drop_unseen, cl);
    return cl->drop_error;
}

rtcd_error rtcd_cl_take_slot(cl_device_state* d, cl_pair_info* info)
{
    if (info->slot != RTCD_CL_NO_SLOT) return RTCD_OK;
    if (d->free_count) {
        info->slot = d->free_slots[--d->free_count];
    } else {
        if (d->slots_used == d->state_slots) {
            uint32_t slots = d->state_slots ? 2 * d->state_slots : 64;
            cl_int err;
            cl_mem grown = clCreateBuffer(d->context, CL_MEM_READ_WRITE, slots * SLOT_BYTES, NULL, &err);
            RTCD_CL_CHECK(err, "clCreateBuffer(pair state)");
            if (d->state) {
                /* In-order queue: the copy lands before this call's kernel. */
                err = clEnqueueCopyBuffer(d->queue, d->state, grown, 0, 0, d->state_slots * SLOT_BYTES, 0, NULL, NULL);
                if (err != CL_SUCCESS) {
                    clReleaseMemObject(grown);
                    RTCD_CL_CHECK(err, "clEnqueueCopyBuffer(pair state)");
                }
                RTCD_CL_CHECK(clReleaseMemObject(d->state), "clReleaseMemObject(pair state)");
            }
            d->state = grown;
            d->state_slots = slots;
        }
        info->slot = d->slots_used++;
    }
    /* A fresh slot holds nothing yet (the caller planned a standard pass). */
    info->entries = 0;
    info->half = 0;
    return RTCD_OK;
}
