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
        if (cl->map.used[s]) rtcd_cl_reset_track(info_at(&cl->map, s));
}

static int give_back_slot(cl_device_state* d, uint32_t slot)
{
    if (!rtcd_cl_grow((void**)&d->free_slots, &d->free_cap, d->free_count + 1, sizeof *d->free_slots)) return 0;
    d->free_slots[d->free_count++] = slot;
    return 1;
}

rtcd_error rtcd_cl_assign_pairs(rtcd_opencl* cl, const rtcd_pair_desc* pairs, uint32_t n, uint32_t* info_of,
                                uint8_t* device_of)
{
    rtcd_key_map next;
    if (!rtcd_key_map_init(&next, n, sizeof(cl_pair_info)))
        return rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the pair map");
    uint32_t load[RTCD_CL_MAX_DEVICES] = {0};
    /* Persisting pairs first: they keep their device and state. */
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t s = rtcd_key_map_slot(&next, pairs[i].key);
        if (next.used[s]) {
            info_of[i] = RTCD_CL_NO_SLOT; /* the key appears twice: the copy runs without state */
            continue;
        }
        next.used[s] = 1;
        next.keys[s] = pairs[i].key;
        info_of[i] = s;
        cl_pair_info* info = info_at(&next, s);
        uint32_t old = rtcd_key_map_find(&cl->map, pairs[i].key);
        if (old != UINT32_MAX) {
            *info = *info_at(&cl->map, old);
            load[info->device]++;
        } else {
            memset(info, 0, sizeof *info);
            info->slot = RTCD_CL_NO_SLOT;
            info->device = 0xff;
        }
    }
    /* New pairs to the least loaded device; duplicates follow their first copy. */
    for (uint32_t i = 0; i < n; ++i) {
        cl_pair_info* info =
            info_at(&next, info_of[i] != RTCD_CL_NO_SLOT ? info_of[i] : rtcd_key_map_slot(&next, pairs[i].key));
        if (info->device == 0xff) {
            uint32_t best = 0;
            for (uint32_t d = 1; d < cl->device_count; ++d)
                if (load[d] < load[best]) best = d;
            info->device = (uint8_t)best;
            load[best]++;
        } else if (info_of[i] == RTCD_CL_NO_SLOT) {
            load[info->device]++;
        }
        device_of[i] = info->device;
    }
    /* Vanished pairs give their slots back. */
    rtcd_error err = RTCD_OK;
    for (uint32_t s = 0; s < cl->map.cap; ++s) {
        if (!cl->map.used[s]) continue;
        const cl_pair_info* gone = info_at(&cl->map, s);
        if (gone->slot == RTCD_CL_NO_SLOT || rtcd_key_map_find(&next, cl->map.keys[s]) != UINT32_MAX) continue;
        if (!give_back_slot(&cl->devices[gone->device], gone->slot) && err == RTCD_OK)
            err = rtcd_fail(RTCD_ERROR_OUT_OF_MEMORY, "OpenCL: no memory for the free state slots");
    }
    rtcd_key_map_free(&cl->map);
    cl->map = next;
    for (uint32_t d = 0; d < cl->device_count && d < 16; ++d) cl->stats.pairs_per_device[d] = load[d];
    return err;
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
    /* A fresh slot holds nothing yet: the pair starts with a standard pass. */
    rtcd_cl_reset_track(info);
    info->half = 0;
    return RTCD_OK;
}
