/* bench_import: rtcd_import_file over a corpus of model files (default: the
 * assimp-testmodels folder), every file whose extension assimp reads, twice:
 * as stored only (RTCD_IMPORT_NO_REPAIR) and with the repair. Prints one JSON
 * object: counts per status, declines by error and by stage, the declined
 * files with their reasons, and the time per file (median, max).
 *
 *   bench_import [--dir D] [--max-files N] [--timeout S] [--no-isolate]
 *
 * Each file runs in a child process (tool_util.h) unless --no-isolate: a
 * loader crash or hang is that file's decline (RTCD_ERROR_INTERNAL, stage
 * "crash"), the benchmark goes on. */
#include "tool_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef RTCD_ASSIMP_MODELS_DIR
#define RTCD_ASSIMP_MODELS_DIR "/usr/share/assimp/models"
#endif
#define MAX_DEPTH 32

typedef struct file_list {
    char** paths;
    size_t count, cap;
} file_list;

static int has_supported_extension(const char* path)
{
    const char* base = strrchr(path, '/');
    const char* dot = strrchr(base ? base : path, '.');
    return dot && rtcd_import_extension_supported(dot);
}

static void list_add(file_list* l, const char* path)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        char** p = realloc(l->paths, cap * sizeof *p);
        if (!p) return;
        l->paths = p;
        l->cap = cap;
    }
    char* copy = strdup(path);
    if (copy) l->paths[l->count++] = copy;
}

/* Regular files under dir, symbolic links not followed (no loops). */
static void walk(file_list* l, const char* dir, int depth)
{
    if (depth > MAX_DEPTH) return;
    DIR* d = opendir(dir);
    if (!d) return;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char* path = malloc(n);
        if (!path) continue;
        snprintf(path, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) walk(l, path, depth + 1);
            else if (S_ISREG(st.st_mode) && has_supported_extension(path)) list_add(l, path);
        }
        free(path);
    }
    closedir(d);
}

static int compare_paths(const void* a, const void* b)
{
    return strcmp(*(char* const*)a, *(char* const*)b);
}

static int compare_doubles(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* One verdict of one file. */
typedef struct verdict {
    int status;          /* rtcd_import_status */
    char error[48];      /* RTCD_ERROR_* name */
    char stage[16];      /* where a decline happened: load, no_triangles, repair, component, crash */
    double ms;           /* < 0: no time (crash) */
    char* message;       /* JSON string (escaped, with quotes), owned */
    char stored_error[48];
} verdict;

static const char* decline_stage(const rtcd_imported* im, int no_repair)
{
    if (rtcd_imported_status(im) != RTCD_IMPORT_DECLINED) return "-";
    if (rtcd_imported_input_triangle_count(im) == 0)
        return strstr(rtcd_imported_error_message(im), "no triangles in the scene") ? "no_triangles" : "load";
    if (no_repair) return "as_stored";
    return rtcd_imported_repair_report(im) ? "component" : "repair";
}

typedef struct bench_job {
    const char* file;
} bench_job;

/* Child output, one line per run: "<status> <error> <ms> <stage> <stored error>" then the
 * message as a JSON string on its own line. */
static void bench_one(void* arg, tool_buffer* out)
{
    const bench_job* job = arg;
    for (int run = 0; run < 2; ++run) {
        rtcd_import_def def = rtcd_default_import_def();
        if (run == 0) def.flags |= RTCD_IMPORT_NO_REPAIR;
        rtcd_imported* im = NULL;
        double t0 = tool_now_ms();
        rtcd_error err = rtcd_import_file(&def, job->file, &im);
        double ms = tool_now_ms() - t0;
        if (!im) {
            tool_buffer_printf(out, "2 %s %.4f load -\n", rtcd_error_name(err), ms);
            tool_buffer_json_string(out, rtcd_last_error_message());
        } else {
            rtcd_error stored = rtcd_imported_stored_error(im);
            tool_buffer_printf(out, "%d %s %.4f %s %s\n", (int)rtcd_imported_status(im),
                               rtcd_error_name(rtcd_imported_error(im)), ms, decline_stage(im, run == 0),
                               stored != RTCD_OK ? rtcd_error_name(stored) : "-");
            tool_buffer_json_string(out, rtcd_imported_error_message(im));
        }
        tool_buffer_printf(out, "\n");
        rtcd_imported_release(im);
    }
}

/* Reads the child's two runs; 0 when the output is not what bench_one writes. */
static int parse_runs(const char* text, verdict v[2])
{
    for (int run = 0; run < 2; ++run) {
        if (!text) return 0;
        if (sscanf(text, "%d %47s %lf %15s %47s", &v[run].status, v[run].error, &v[run].ms, v[run].stage,
                   v[run].stored_error) != 5 ||
            v[run].status < 0 || v[run].status > 3)
            return 0;
        const char* msg = strchr(text, '\n');
        if (!msg) return 0;
        ++msg;
        const char* end = strchr(msg, '\n');
        if (!end) return 0;
        v[run].message = strndup(msg, (size_t)(end - msg));
        text = end + 1;
    }
    return 1;
}

typedef struct tally {
    unsigned status[4];
    char (*reasons)[48];
    unsigned* reason_counts;
    size_t reason_n;
    char (*stages)[48];
    unsigned* stage_counts;
    size_t stage_n;
    double* ms;
    size_t ms_n;
    double max_ms;
    const char* slowest;
} tally;

/* Adds `name` to a list of (name, count) pairs of fixed-size names. */
static void count_name(char (**names)[48], unsigned** counts, size_t* n, const char* name)
{
    for (size_t k = 0; k < *n; ++k)
        if (strcmp((*names)[k], name) == 0) {
            ++(*counts)[k];
            return;
        }
    char(*nn)[48] = realloc(*names, (*n + 1) * sizeof **names);
    if (!nn) return;
    *names = nn;
    unsigned* nc = realloc(*counts, (*n + 1) * sizeof **counts);
    if (!nc) return;
    *counts = nc;
    snprintf((*names)[*n], sizeof (*names)[*n], "%s", name);
    (*counts)[(*n)++] = 1;
}

static void tally_add(tally* t, const verdict* v, const char* file, size_t capacity)
{
    ++t->status[v->status];
    if (v->status == RTCD_IMPORT_DECLINED) {
        count_name(&t->reasons, &t->reason_counts, &t->reason_n, v->error);
        count_name(&t->stages, &t->stage_counts, &t->stage_n, v->stage);
    }
    if (v->ms >= 0) {
        if (!t->ms) t->ms = malloc(capacity * sizeof *t->ms);
        if (t->ms) t->ms[t->ms_n++] = v->ms;
        if (v->ms > t->max_ms) {
            t->max_ms = v->ms;
            t->slowest = file;
        }
    }
}

static void tally_print(tool_buffer* b, tally* t, const char* dir)
{
    double median = 0;
    if (t->ms_n) {
        qsort(t->ms, t->ms_n, sizeof *t->ms, compare_doubles);
        median = t->ms_n % 2 ? t->ms[t->ms_n / 2] : 0.5 * (t->ms[t->ms_n / 2 - 1] + t->ms[t->ms_n / 2]);
    }
    tool_buffer_printf(b, "{\"accepted\":%u,\"repaired\":%u,\"wrapped\":%u,\"declined\":%u,\"declined_by_reason\":{",
                       t->status[0], t->status[1], t->status[3], t->status[2]);
    for (size_t k = 0; k < t->reason_n; ++k)
        tool_buffer_printf(b, "%s\"%s\":%u", k ? "," : "", t->reasons[k], t->reason_counts[k]);
    tool_buffer_printf(b, "},\"declined_by_stage\":{");
    for (size_t k = 0; k < t->stage_n; ++k)
        tool_buffer_printf(b, "%s\"%s\":%u", k ? "," : "", t->stages[k], t->stage_counts[k]);
    tool_buffer_printf(b, "},\"ms_median\":%.3f,\"ms_max\":%.3f,\"slowest_file\":", median, t->max_ms);
    tool_buffer_json_string(b, t->slowest ? t->slowest + strlen(dir) + 1 : NULL);
    tool_buffer_printf(b, "}");
}

static void tally_free(tally* t)
{
    free(t->reasons);
    free(t->reason_counts);
    free(t->stages);
    free(t->stage_counts);
    free(t->ms);
}

int main(int argc, char** argv)
{
    const char* dir = RTCD_ASSIMP_MODELS_DIR;
    size_t max_files = 0;
    tool_limits limits = {1, 60, 4096ull << 20};
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (strcmp(a, "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(a, "--max-files") == 0 && i + 1 < argc) {
            max_files = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
            limits.timeout_s = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--no-isolate") == 0) {
            limits.isolate = 0;
        } else {
            fprintf(stderr, "usage: bench_import [--dir D] [--max-files N] [--timeout S] [--no-isolate]\n");
            return 2;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "bench_import: '%s' is not a directory (install assimp-testmodels or pass --dir)\n", dir);
        return 2;
    }
    /* Without a trailing slash, so file names print relative to it. */
    char* root = strdup(dir);
    if (!root) return 1;
    for (size_t n = strlen(root); n > 1 && root[n - 1] == '/'; --n) root[n - 1] = '\0';

    file_list files = {0};
    walk(&files, root, 0);
    qsort(files.paths, files.count, sizeof *files.paths, compare_paths);
    if (max_files && files.count > max_files) {
        for (size_t i = max_files; i < files.count; ++i) free(files.paths[i]);
        files.count = max_files;
    }

    double t_start = tool_now_ms();
    tally tallies[2];
    memset(tallies, 0, sizeof tallies);
    tool_buffer declined = {0}, repaired = {0}, out = {0};
    size_t declined_n = 0, repaired_n = 0;
    char detail[256];
    for (size_t i = 0; i < files.count; ++i) {
        const char* file = files.paths[i];
        const char* rel = file + strlen(root) + 1;
        bench_job job = {file};
        verdict v[2];
        memset(v, 0, sizeof v);
        tool_outcome outcome = tool_run(&limits, bench_one, &job, &out, detail, sizeof detail);
        if (outcome != TOOL_FINISHED || !parse_runs(out.data, v)) {
            if (outcome == TOOL_FINISHED) snprintf(detail, sizeof detail, "the import gave no verdict");
            for (int r = 0; r < 2; ++r) {
                free(v[r].message);
                v[r].status = RTCD_IMPORT_DECLINED;
                snprintf(v[r].error, sizeof v[r].error, "%s", rtcd_error_name(RTCD_ERROR_INTERNAL));
                snprintf(v[r].stage, sizeof v[r].stage, "crash");
                v[r].ms = -1;
                tool_buffer m = {0};
                tool_buffer_json_string(&m, detail);
                v[r].message = m.data;
            }
        }
        for (int r = 0; r < 2; ++r) tally_add(&tallies[r], &v[r], file, files.count);
        if (v[1].status == RTCD_IMPORT_DECLINED) {
            tool_buffer_printf(&declined, "%s{\"file\":", declined_n++ ? "," : "");
            tool_buffer_json_string(&declined, rel);
            tool_buffer_printf(&declined, ",\"error\":\"%s\",\"stage\":\"%s\",\"message\":%s}", v[1].error,
                               v[1].stage, v[1].message ? v[1].message : "\"\"");
        } else if (v[1].status == RTCD_IMPORT_REPAIRED) {
            tool_buffer_printf(&repaired, "%s{\"file\":", repaired_n++ ? "," : "");
            tool_buffer_json_string(&repaired, rel);
            tool_buffer_printf(&repaired, ",\"stored_error\":\"%s\"}", v[1].stored_error);
        }
        for (int r = 0; r < 2; ++r) free(v[r].message);
    }
    double total_s = (tool_now_ms() - t_start) * 1e-3;

    tool_buffer b = {0};
    tool_buffer_printf(&b, "{\"dir\":");
    tool_buffer_json_string(&b, root);
    tool_buffer_printf(&b, ",\"files\":%zu,\"isolated\":%s,\"timeout_s\":%u,\"as_stored\":", files.count,
                       limits.isolate ? "true" : "false", limits.timeout_s);
    tally_print(&b, &tallies[0], root);
    tool_buffer_printf(&b, ",\"with_repair\":");
    tally_print(&b, &tallies[1], root);
    tool_buffer_printf(&b, ",\"declined\":[%s],\"repaired\":[%s],\"total_s\":%.3f}", declined.data ? declined.data : "",
                       repaired.data ? repaired.data : "", total_s);
    printf("%s\n", b.data ? b.data : "{}");

    tool_buffer_free(&b);
    tool_buffer_free(&declined);
    tool_buffer_free(&repaired);
    tool_buffer_free(&out);
    for (int r = 0; r < 2; ++r) tally_free(&tallies[r]);
    for (size_t i = 0; i < files.count; ++i) free(files.paths[i]);
    free(files.paths);
    free(root);
    return 0;
}
