/* A run's batch profiles (rtcd_batch_stats: host planning, devices, host
 * finishing) summed call by call and printed as per-call means, the same
 * JSON object for the scene demos and bench_backends. */
#ifndef RTCD_BATCH_PROFILE_H
#define RTCD_BATCH_PROFILE_H

#include <rtcd/rtcd_batch.h>

#include <stdio.h>

typedef struct batch_profile {
    uint32_t calls;
    double ms, plan_ms, run_ms, finish_ms, upload_ms, device_ms, download_ms, fallback_ms, reduce_ms;
    double fallback_pairs, upload_bytes, download_bytes;
    double segments; /* OpenCL: the runs of pairs each call went to the devices in */
} batch_profile;

void batch_profile_add(batch_profile* p, const rtcd_batch_stats* s);
/* {"calls":N,"ms":..,"plan_ms":..,...}: means per call (no newline). */
void batch_profile_print_json(FILE* f, const batch_profile* p);
/* The CSV columns of one call, and their header (no separators at the ends). */
extern const char batch_profile_csv_header[];
void batch_profile_print_csv(FILE* f, const rtcd_batch_stats* s);

#endif
