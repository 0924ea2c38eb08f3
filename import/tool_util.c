/* Buffers, JSON and isolated jobs for the import tools (tool_util.h). */
#include "tool_util.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define TOOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOOL_ASAN 1
#endif
#endif

void tool_buffer_free(tool_buffer* b)
{
    free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

static int tool_buffer_reserve(tool_buffer* b, size_t extra)
{
    if (b->size + extra + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->size + extra + 1) cap *= 2;
    char* p = realloc(b->data, cap);
    if (!p) return 0; /* the output is cut short; the tools print what they have */
    b->data = p;
    b->cap = cap;
    return 1;
}

static void tool_buffer_append(tool_buffer* b, const char* s, size_t n)
{
    if (!tool_buffer_reserve(b, n)) return;
    memcpy(b->data + b->size, s, n);
    b->size += n;
    b->data[b->size] = '\0';
}

void tool_buffer_printf(tool_buffer* b, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n < 0 || !tool_buffer_reserve(b, (size_t)n)) return;
    va_start(args, format);
    vsnprintf(b->data + b->size, (size_t)n + 1, format, args);
    va_end(args);
    b->size += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid. */
static size_t utf8_length(const unsigned char* s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
    else return 0;
    unsigned cp = c & (0x7Fu >> n);
    for (size_t i = 1; i < n; ++i) {
        if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

void tool_buffer_json_string(tool_buffer* b, const char* s)
{
    if (!s) {
        tool_buffer_append(b, "null", 4);
        return;
    }
    tool_buffer_append(b, "\"", 1);
    const unsigned char* p = (const unsigned char*)s;
    while (*p) {
        size_t n = utf8_length(p);
        if (n == 0) {
            tool_buffer_append(b, "\\ufffd", 6);
            ++p;
        } else if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            tool_buffer_append(b, esc, 2);
            ++p;
        } else if (*p < 0x20) {
            tool_buffer_printf(b, "\\u%04x", *p);
            ++p;
        } else {
            tool_buffer_append(b, (const char*)p, n);
            p += n;
        }
    }
    tool_buffer_append(b, "\"", 1);
}

double tool_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void write_all(int fd, const char* data, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        data += n;
        size -= (size_t)n;
    }
}

tool_outcome tool_run(const tool_limits* limits, tool_job_fn* job, void* arg, tool_buffer* out, char* detail,
                      size_t detail_size)
{
    out->size = 0;
    if (out->data) out->data[0] = '\0';
    detail[0] = '\0';
    if (!limits->isolate) {
        job(arg, out);
        return TOOL_FINISHED;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(detail, detail_size, "pipe: %s", strerror(errno));
        return TOOL_NO_CHILD;
    }
    fflush(NULL); /* or the child would print our buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(detail, detail_size, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return TOOL_NO_CHILD;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(STDERR_FILENO, STDOUT_FILENO); /* a loader's chatter must not split the JSON lines */
        if (limits->timeout_s) alarm(limits->timeout_s); /* SIGALRM's default action ends the child */
#ifndef TOOL_ASAN /* AddressSanitizer reserves terabytes of address space up front */
        if (limits->memory_bytes) {
            struct rlimit rl = {(rlim_t)limits->memory_bytes, (rlim_t)limits->memory_bytes};
            setrlimit(RLIMIT_AS, &rl);
        }
#endif
        tool_buffer b = {0};
        job(arg, &b);
        write_all(fds[1], b.data, b.size);
        tool_buffer_free(&b);
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    char chunk[4096];
    for (;;) {
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        tool_buffer_append(out, chunk, (size_t)n);
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(detail, detail_size, "waitpid: %s", strerror(errno));
            return TOOL_NO_CHILD;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return TOOL_FINISHED;
    out->size = 0;
    if (out->data) out->data[0] = '\0';
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        snprintf(detail, detail_size, "no verdict within %u s (timed out)", limits->timeout_s);
        return TOOL_TIMED_OUT;
    }
    if (WIFSIGNALED(status))
        snprintf(detail, detail_size, "the import crashed: signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(detail, detail_size, "the import ended early with exit code %d", WEXITSTATUS(status));
    return TOOL_CRASHED;
}

static void describe_repairs(tool_buffer* b, const rtcd_repair_report* r)
{
    rtcd_repair_report zero;
    memset(&zero, 0, sizeof zero);
    if (!r) r = &zero;
    tool_buffer_printf(b,
                       "{\"welded_vertices\":%u,\"degenerate_triangles\":%u,\"sliver_triangles\":%u,"
                       "\"duplicate_triangles\":%u,\"split_components\":%u,\"filled_holes\":%u,"
                       "\"flipped_triangles\":%u,\"open_components\":%u,\"nonmanifold_edges\":%u}",
                       r->welded_vertices, r->degenerate_triangles, r->sliver_triangles, r->duplicate_triangles,
                       r->split_components, r->filled_holes, r->flipped_triangles, r->open_components,
                       r->nonmanifold_edges);
}

void tool_describe_import(tool_buffer* b, const char* file, const rtcd_imported* im, double ms)
{
    rtcd_import_status status = rtcd_imported_status(im);
    rtcd_error stored = rtcd_imported_stored_error(im);
    uint64_t mesh_triangles = 0;
    for (uint32_t i = 0; i < rtcd_imported_mesh_count(im); ++i)
        mesh_triangles += rtcd_mesh_triangle_count(rtcd_imported_mesh(im, i));
    tool_buffer_printf(b, "{\"file\":");
    tool_buffer_json_string(b, file);
    tool_buffer_printf(b, ",\"status\":\"%s\",\"error\":", rtcd_import_status_name(status));
    tool_buffer_json_string(b, status == RTCD_IMPORT_DECLINED ? rtcd_error_name(rtcd_imported_error(im)) : NULL);
    tool_buffer_printf(b, ",\"message\":");
    tool_buffer_json_string(b, rtcd_imported_error_message(im));
    tool_buffer_printf(b, ",\"stored_error\":");
    tool_buffer_json_string(b, stored != RTCD_OK ? rtcd_error_name(stored) : NULL);
    tool_buffer_printf(b,
                       ",\"components\":%u,\"meshes\":%u,\"vertices\":%u,\"triangles\":%u,\"dropped_primitives\":%u,"
                       "\"mesh_triangles\":%llu,\"repair_ran\":%s,\"repairs\":",
                       rtcd_imported_component_count(im), rtcd_imported_mesh_count(im),
                       rtcd_imported_input_vertex_count(im), rtcd_imported_input_triangle_count(im),
                       rtcd_imported_dropped_primitive_count(im), (unsigned long long)mesh_triangles,
                       rtcd_imported_repair_report(im) ? "true" : "false");
    describe_repairs(b, rtcd_imported_repair_report(im));
    tool_buffer_printf(b, ",\"repair_summary\":");
    tool_buffer_json_string(b, rtcd_imported_repair_summary(im));
    tool_buffer_printf(b, ",\"scraps\":%u,\"scrap_area_share\":%.6g,\"wrap\":", rtcd_imported_dropped_scrap_count(im),
                       rtcd_imported_dropped_scrap_area_share(im));
    const rtcd_wrap_report* w = rtcd_imported_wrap_report(im);
    if (w)
        tool_buffer_printf(b,
                           "{\"resolution\":%.6g,\"voxel_size\":%.6g,\"offset\":%.6g,\"triangles_in\":%u,"
                           "\"triangles_out\":%u,\"distance\":%.6g,\"distance_share\":%.6g,\"distance_in_out\":%.6g,"
                           "\"distance_out_in\":%.6g,\"removed_cavities\":%u,\"coarsened\":%u}",
                           (double)w->resolution, (double)w->voxel_size, (double)w->offset, w->input_triangles,
                           w->output_triangles, w->distance, w->diagonal > 0 ? w->distance / w->diagonal : 0,
                           w->distance_in_out, w->distance_out_in, w->removed_cavities, w->coarsened);
    else
        tool_buffer_printf(b, "null");
    tool_buffer_printf(b, ",\"ms\":%.3f}", ms);
}

void tool_describe_failure(tool_buffer* b, const char* file, const char* message)
{
    tool_buffer_printf(b, "{\"file\":");
    tool_buffer_json_string(b, file);
    tool_buffer_printf(b, ",\"status\":\"declined\",\"error\":\"%s\",\"message\":",
                       rtcd_error_name(RTCD_ERROR_INTERNAL));
    tool_buffer_json_string(b, message);
    tool_buffer_printf(b, ",\"stored_error\":null,\"components\":0,\"meshes\":0,\"vertices\":0,\"triangles\":0,"
                          "\"dropped_primitives\":0,\"mesh_triangles\":0,\"repair_ran\":false,\"repairs\":");
    describe_repairs(b, NULL);
    tool_buffer_printf(b, ",\"repair_summary\":\"\",\"scraps\":0,\"scrap_area_share\":0,\"wrap\":null,\"ms\":null}");
}
