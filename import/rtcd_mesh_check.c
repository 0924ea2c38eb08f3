/* rtcd_mesh_check FILE...: would rtcd take these model files, and after
 * which repairs? One JSON line per file (rtcd_import_file's verdict), then
 * with --summary one JSON object of totals.
 *
 * Each file is read in a child process (unless --no-isolate), so a crash or
 * a hang inside the loader is that file's verdict ("declined",
 * RTCD_ERROR_INTERNAL) and the run goes on. Exit code 0 when every file got
 * its line (declined ones included), 2 on a usage error. */
#include "tool_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE* to)
{
    fprintf(to,
            "usage: rtcd_mesh_check [options] FILE...\n"
            "  --summary          print a final JSON object: totals, declined files by error\n"
            "  --no-repair        take the files as stored or decline them (RTCD_IMPORT_NO_REPAIR)\n"
            "  --scale S          multiply every coordinate by S (> 0)\n"
            "  --timeout S        seconds per file before it is declined (default 60, 0: none)\n"
            "  --max-memory-mb M  address space per file (default 4096, 0: none)\n"
            "  --no-isolate       read the files in this process (a loader crash ends the run)\n"
            "  --wrap MODE        off|auto|always: what repair cannot close is declined, wrapped (auto,\n"
            "                     the default, where the build has the wrap), or every file is wrapped\n"
            "One JSON line per file: file, status (accepted|repaired|wrapped|declined), error (RTCD_ERROR_*\n"
            "or null), message, stored_error, components, meshes, vertices, triangles, dropped_primitives,\n"
            "mesh_triangles, repair_ran, repairs {counts}, repair_summary, scraps, scrap_area_share,\n"
            "wrap (null or {resolution, voxel_size, offset, triangles_in, triangles_out, distance,\n"
            "distance_share: of the bounding box diagonal, ...}), ms.\n");
}

typedef struct check_job {
    const rtcd_import_def* def;
    const char* file;
} check_job;

/* The child's output: "<status> <error name>\n" for the summary, then the line. */
static void check_one(void* arg, tool_buffer* out)
{
    const check_job* job = arg;
    rtcd_imported* im = NULL;
    double t0 = tool_now_ms();
    rtcd_error err = rtcd_import_file(job->def, job->file, &im);
    double ms = tool_now_ms() - t0;
    if (!im) { /* bad arguments or no memory: no handle to describe */
        tool_buffer_printf(out, "2 %s\n", rtcd_error_name(err));
        tool_buffer b = {0};
        tool_describe_failure(&b, job->file, rtcd_last_error_message());
        tool_buffer_printf(out, "%s", b.data ? b.data : "");
        tool_buffer_free(&b);
        return;
    }
    rtcd_import_status status = rtcd_imported_status(im);
    tool_buffer_printf(out, "%d %s\n", (int)status, rtcd_error_name(rtcd_imported_error(im)));
    tool_describe_import(out, job->file, im, ms);
    rtcd_imported_release(im);
}

typedef struct reason_count {
    char name[64];
    unsigned count;
} reason_count;

static int parse_number(const char* s, double* out)
{
    char* end;
    *out = strtod(s, &end);
    return end != s && *end == '\0';
}

int main(int argc, char** argv)
{
    rtcd_import_def def = rtcd_default_import_def();
    tool_limits limits = {1, 60, 4096ull << 20};
    int summary = 0;
    int first_file = argc;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        double v;
        if (strcmp(a, "--") == 0) {
            first_file = i + 1;
            break;
        } else if (strcmp(a, "--summary") == 0) {
            summary = 1;
        } else if (strcmp(a, "--no-repair") == 0) {
            def.flags |= RTCD_IMPORT_NO_REPAIR;
        } else if (strcmp(a, "--wrap") == 0) {
            const char* m = i + 1 < argc ? argv[++i] : "";
            if (strcmp(m, "off") == 0) def.wrap = RTCD_WRAP_OFF;
            else if (strcmp(m, "auto") == 0) def.wrap = RTCD_WRAP_AUTO;
            else if (strcmp(m, "always") == 0) def.wrap = RTCD_WRAP_ALWAYS;
            else {
                fprintf(stderr, "rtcd_mesh_check: --wrap needs off, auto or always\n");
                return 2;
            }
            if (def.wrap != RTCD_WRAP_OFF && !rtcd_wrap_available())
                fprintf(stderr, "rtcd_mesh_check: wrap not available in this build (OpenVDB): files are declined as with --wrap off\n");
        } else if (strcmp(a, "--no-isolate") == 0) {
            limits.isolate = 0;
        } else if ((strcmp(a, "--scale") == 0 || strcmp(a, "--timeout") == 0 || strcmp(a, "--max-memory-mb") == 0)) {
            if (i + 1 >= argc || !parse_number(argv[i + 1], &v) || v < 0 || v > 1e9 ||
                (strcmp(a, "--scale") == 0 && !(v > 0))) {
                fprintf(stderr, "rtcd_mesh_check: %s needs a %s number\n", a,
                        strcmp(a, "--scale") == 0 ? "positive" : "non-negative");
                return 2;
            }
            ++i;
            if (strcmp(a, "--scale") == 0) def.scale = (float)v;
            else if (strcmp(a, "--timeout") == 0) limits.timeout_s = (unsigned)v;
            else limits.memory_bytes = (uint64_t)v << 20;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "rtcd_mesh_check: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else {
            first_file = i;
            break;
        }
    }
    if (first_file >= argc) {
        usage(stderr);
        return 2;
    }

    unsigned totals[4] = {0, 0, 0, 0};
    reason_count* reasons = NULL;
    size_t reason_n = 0;
    tool_buffer out = {0};
    char detail[256];
    for (int i = first_file; i < argc; ++i) {
        check_job job = {&def, argv[i]};
        tool_outcome outcome = tool_run(&limits, check_one, &job, &out, detail, sizeof detail);
        int status = RTCD_IMPORT_DECLINED;
        char reason[64] = "RTCD_ERROR_INTERNAL";
        const char* line = NULL;
        if (outcome == TOOL_FINISHED && out.data && sscanf(out.data, "%d %63s", &status, reason) == 2 &&
            (line = strchr(out.data, '\n')) != NULL && status >= 0 && status <= 3) {
            ++line;
        } else {
            if (outcome == TOOL_FINISHED) snprintf(detail, sizeof detail, "the import gave no verdict");
            status = RTCD_IMPORT_DECLINED;
            snprintf(reason, sizeof reason, "%s", rtcd_error_name(RTCD_ERROR_INTERNAL));
            tool_buffer_free(&out);
            tool_describe_failure(&out, argv[i], detail);
            line = out.data;
        }
        printf("%s\n", line ? line : "");
        fflush(stdout);
        ++totals[status];
        if (status == RTCD_IMPORT_DECLINED) {
            size_t k = 0;
            while (k < reason_n && strcmp(reasons[k].name, reason) != 0) ++k;
            if (k == reason_n) {
                reason_count* grown = realloc(reasons, (reason_n + 1) * sizeof *reasons);
                if (grown) {
                    reasons = grown;
                    snprintf(reasons[reason_n].name, sizeof reasons[reason_n].name, "%s", reason);
                    reasons[reason_n++].count = 0;
                }
            }
            if (k < reason_n) ++reasons[k].count;
        }
    }
    if (summary) {
        tool_buffer s = {0};
        tool_buffer_printf(&s, "{\"summary\":{\"files\":%d,\"accepted\":%u,\"repaired\":%u,\"wrapped\":%u,\"declined\":%u,"
                               "\"declined_by_error\":{", argc - first_file, totals[0], totals[1], totals[3], totals[2]);
        for (size_t k = 0; k < reason_n; ++k) {
            if (k) tool_buffer_printf(&s, ",");
            tool_buffer_json_string(&s, reasons[k].name);
            tool_buffer_printf(&s, ":%u", reasons[k].count);
        }
        tool_buffer_printf(&s, "}}}");
        printf("%s\n", s.data ? s.data : "");
        tool_buffer_free(&s);
    }
    tool_buffer_free(&out);
    free(reasons);
    return 0;
}
