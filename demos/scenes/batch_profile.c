#include "batch_profile.h"

void batch_profile_add(batch_profile* p, const rtcd_batch_stats* s)
{
    p->calls++;
    p->ms += s->ms;
    p->plan_ms += s->plan_ms;
    p->run_ms += s->run_ms;
    p->finish_ms += s->finish_ms;
    p->upload_ms += s->upload_ms;
    p->device_ms += s->device_ms;
    p->download_ms += s->download_ms;
    p->fallback_ms += s->fallback_ms;
    p->reduce_ms += s->reduce_ms;
    p->fallback_pairs += s->cpu_fallback_pairs;
    p->upload_bytes += (double)s->upload_bytes;
    p->download_bytes += (double)s->download_bytes;
    p->segments += s->segments;
}

void batch_profile_print_json(FILE* f, const batch_profile* p)
{
    double n = p->calls ? p->calls : 1;
    fprintf(f,
            "{\"calls\":%u,\"ms\":%.4f,\"plan_ms\":%.4f,\"run_ms\":%.4f,\"finish_ms\":%.4f,\"upload_ms\":%.4f,"
            "\"device_ms\":%.4f,\"download_ms\":%.4f,\"fallback_ms\":%.4f,\"reduce_ms\":%.4f,\"fallback_pairs\":%.1f,"
            "\"upload_bytes\":%.0f,\"download_bytes\":%.0f,\"segments\":%.2f}",
            p->calls, p->ms / n, p->plan_ms / n, p->run_ms / n, p->finish_ms / n, p->upload_ms / n, p->device_ms / n,
            p->download_ms / n, p->fallback_ms / n, p->reduce_ms / n, p->fallback_pairs / n, p->upload_bytes / n,
            p->download_bytes / n, p->segments / n);
}

const char batch_profile_csv_header[] = "batch_plan_ms,batch_run_ms,batch_finish_ms,batch_upload_ms,batch_device_ms,"
                                        "batch_download_ms,batch_fallback_ms,batch_reduce_ms,batch_fallback_pairs";

void batch_profile_print_csv(FILE* f, const rtcd_batch_stats* s)
{
    fprintf(f, "%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%u", s->plan_ms, s->run_ms, s->finish_ms, s->upload_ms,
            s->device_ms, s->download_ms, s->fallback_ms, s->reduce_ms, s->cpu_fallback_pairs);
}
