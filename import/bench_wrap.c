/* bench_wrap: the watertight wrap's time and triangle counts (rtcd_wrap.h).
 * Prints one JSON object:
 *   soup_100k   a 100 000-triangle soup (a sphere of radius 1 as separate
 *               triangles) wrapped at the default resolution, on one thread
 *               (max_threads 1) and on TBB's default, median of --runs; the
 *               target is at most 1000 ms on one core;
 *   corpus      every file of --dir (default: assimp-testmodels) imported
 *               with the wrap ALWAYS (the whole file wrapped): wrap time
 *               (median, p90, max), triangles in and out, the largest
 *               distance as a share of the diagonal, the files the wrap
 *               could not take with their reasons.
 *
 *   bench_wrap [--dir D] [--max-files N] [--runs R] [--no-corpus]
 * In this process (no child per file): the corpus is the one test_import
 * reads in-process too. */
#include <rtcd/rtcd_import.h>

#include "tool_util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef RTCD_ASSIMP_MODELS_DIR
#define RTCD_ASSIMP_MODELS_DIR "/usr/share/assimp/models"
#endif

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double quantile(double* v, size_t n, double q)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)floor(q * (double)(n - 1) + 0.5);
    return v[i];
}

/* A sphere of radius 1 in nu x nv cells, two separate triangles each (no shared vertex). */
static void sphere_soup(int nu, int nv, float** vout, uint32_t** iout, uint32_t* nt)
{
    *nt = (uint32_t)(2 * nu * nv);
    float* v = malloc(sizeof(float) * 9 * *nt);
    uint32_t* idx = malloc(sizeof(uint32_t) * 3 * *nt);
    if (!v || !idx) {
        fprintf(stderr, "bench_wrap: out of memory\n");
        exit(1);
    }
    uint32_t k = 0;
    for (int a = 0; a < nu; ++a)
        for (int b = 0; b < nv; ++b) {
            double p[4][3];
            for (int q = 0; q < 4; ++q) {
                double th = 2 * M_PI * (a + (q & 1)) / nu, ph = M_PI * (b + (q >> 1)) / nv;
                p[q][0] = sin(ph) * cos(th);
                p[q][1] = sin(ph) * sin(th);
                p[q][2] = cos(ph);
            }
            static const int tri[2][3] = {{0, 1, 3}, {0, 3, 2}};
            for (int s = 0; s < 2; ++s, ++k)
                for (int c = 0; c < 3; ++c) {
                    for (int d = 0; d < 3; ++d) v[3 * (3 * k + c) + d] = (float)p[tri[s][c]][d];
                    idx[3 * k + c] = 3 * k + c;
                }
        }
    *vout = v;
    *iout = idx;
}

static void bench_soup(tool_buffer* out, int runs)
{
    float* v;
    uint32_t* idx;
    uint32_t nt;
    sphere_soup(250, 200, &v, &idx, &nt);
    tool_buffer_printf(out, "\"soup_100k\":{\"triangles_in\":%u", nt);
    for (int threads = 1; threads >= 0; --threads) {
        rtcd_wrap_def def = rtcd_default_wrap_def();
        def.max_threads = (uint32_t)threads;
        double ms[32], dist_ms[32];
        rtcd_wrap_report last;
        memset(&last, 0, sizeof last);
        int n = 0;
        for (int r = 0; r < runs && r < 32; ++r) {
            rtcd_wrapped* w = NULL;
            if (rtcd_wrap(&def, v, 3 * nt, 0, idx, nt, &w) != RTCD_OK) {
                fprintf(stderr, "bench_wrap: %s\n", rtcd_last_error_message());
                break;
            }
            last = *rtcd_wrapped_report(w);
            ms[n] = last.ms;
            dist_ms[n++] = last.ms_distance;
            rtcd_wrapped_release(w);
        }
        double med = quantile(ms, (size_t)n, 0.5);
        tool_buffer_printf(out,
                           ",\"%s\":{\"runs\":%d,\"ms_median\":%.1f,\"ms_distance_median\":%.1f,\"triangles_out\":%u,"
                           "\"resolution\":%.6g,\"distance\":%.5f,\"distance_share\":%.5f%s",
                           threads ? "one_thread" : "default_threads", n, med, quantile(dist_ms, (size_t)n, 0.5),
                           last.output_triangles, (double)last.resolution, last.distance,
                           last.diagonal > 0 ? last.distance / last.diagonal : 0, threads ? "" : "}");
        if (threads) tool_buffer_printf(out, ",\"target_ms\":1000,\"met\":%s}", n && med <= 1000 ? "true" : "false");
    }
    tool_buffer_printf(out, "}");
    free(v);
    free(idx);
}

typedef struct corpus {
    double *ms, *share;
    size_t n, cap, files, no_triangles;
    uint64_t tris_in, tris_out;
    double worst_share;
    char worst[1024];
    tool_buffer failures;
    unsigned failed;
} corpus;

static void corpus_file(corpus* c, const char* path)
{
    rtcd_import_def def = rtcd_default_import_def();
    def.wrap = RTCD_WRAP_ALWAYS;
    rtcd_imported* im = NULL;
    rtcd_import_file(&def, path, &im);
    if (!im) return;
    ++c->files;
    const rtcd_wrap_report* r = rtcd_imported_wrap_report(im);
    if (r) {
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 256;
            c->ms = realloc(c->ms, c->cap * sizeof *c->ms);
            c->share = realloc(c->share, c->cap * sizeof *c->share);
            if (!c->ms || !c->share) exit(1);
        }
        c->ms[c->n] = r->ms;
        c->share[c->n++] = r->distance / r->diagonal;
        c->tris_in += r->input_triangles;
        c->tris_out += r->output_triangles;
        if (r->distance / r->diagonal > c->worst_share) {
            c->worst_share = r->distance / r->diagonal;
            snprintf(c->worst, sizeof c->worst, "%s", path);
        }
    } else if (rtcd_imported_input_triangle_count(im) == 0) {
        ++c->no_triangles;
    } else {
        tool_buffer_printf(&c->failures, "%s{\"file\":", c->failed++ ? "," : "");
        tool_buffer_json_string(&c->failures, path);
        tool_buffer_printf(&c->failures, ",\"message\":");
        tool_buffer_json_string(&c->failures, rtcd_imported_error_message(im));
        tool_buffer_printf(&c->failures, "}");
    }
    rtcd_imported_release(im);
}

static int by_name(const struct dirent** a, const struct dirent** b) { return strcmp((*a)->d_name, (*b)->d_name); }

static void walk(corpus* c, const char* dir, int depth, size_t max_files)
{
    struct dirent** e = NULL;
    int n = depth > 32 ? -1 : scandir(dir, &e, NULL, by_name);
    for (int i = 0; i < n; ++i) {
        char path[1024];
        struct stat st;
        const char* dot = strrchr(e[i]->d_name, '.');
        if (strcmp(e[i]->d_name, ".") && strcmp(e[i]->d_name, "..") &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, e[i]->d_name) < sizeof path && lstat(path, &st) == 0 &&
            (!max_files || c->files < max_files)) {
            if (S_ISDIR(st.st_mode)) walk(c, path, depth + 1, max_files);
            else if (S_ISREG(st.st_mode) && dot && rtcd_import_extension_supported(dot)) corpus_file(c, path);
        }
        free(e[i]);
    }
    free(e);
}

int main(int argc, char** argv)
{
    const char* dir = RTCD_ASSIMP_MODELS_DIR;
    size_t max_files = 0;
    int runs = 5, do_corpus = 1;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--max-files") == 0 && i + 1 < argc) max_files = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-corpus") == 0) do_corpus = 0;
        else {
            fprintf(stderr, "usage: bench_wrap [--dir D] [--max-files N] [--runs R] [--no-corpus]\n");
            return 2;
        }
    }
    if (!rtcd_wrap_available()) {
        printf("{\"wrap_available\":false}\n");
        return 0;
    }
    if (runs < 1) runs = 1;
    tool_buffer out = {0};
    tool_buffer_printf(&out, "{\"wrap_available\":true,");
    bench_soup(&out, runs);
    if (do_corpus) {
        corpus c;
        memset(&c, 0, sizeof c);
        double t0 = tool_now_ms();
        walk(&c, dir, 0, max_files);
        double total_s = (tool_now_ms() - t0) * 1e-3;
        double* ms_copy = malloc((c.n ? c.n : 1) * sizeof *ms_copy);
        if (!ms_copy) return 1;
        memcpy(ms_copy, c.ms, c.n * sizeof *ms_copy);
        tool_buffer_printf(&out, ",\"corpus\":{\"dir\":");
        tool_buffer_json_string(&out, dir);
        tool_buffer_printf(&out,
                           ",\"files\":%zu,\"no_triangles\":%zu,\"wrapped\":%zu,\"not_wrapped\":%u,\"ms_median\":%.1f,"
                           "\"ms_p90\":%.1f,\"ms_max\":%.1f,\"triangles_in\":%llu,\"triangles_out\":%llu,"
                           "\"distance_share_median\":%.5f,\"distance_share_max\":%.5f,\"worst\":",
                           c.files, c.no_triangles, c.n, c.failed, quantile(ms_copy, c.n, 0.5),
                           quantile(ms_copy, c.n, 0.9), quantile(ms_copy, c.n, 1.0), (unsigned long long)c.tris_in,
                           (unsigned long long)c.tris_out, quantile(c.share, c.n, 0.5), c.worst_share);
        tool_buffer_json_string(&out, c.worst);
        tool_buffer_printf(&out, ",\"seconds\":%.1f,\"not_wrapped_files\":[%s]}", total_s,
                           c.failures.data ? c.failures.data : "");
        free(ms_copy);
        free(c.ms);
        free(c.share);
        tool_buffer_free(&c.failures);
    }
    tool_buffer_printf(&out, "}");
    printf("%s\n", out.data);
    tool_buffer_free(&out);
    return 0;
}
