/* Private to the import tools (rtcd_mesh_check, bench_import): a growing text
 * buffer with JSON strings, and a job run in a child process so that a
 * crash, a hang or a runaway allocation inside assimp costs one file's
 * verdict, not the whole run. POSIX (fork, pipes, rlimits). */
#ifndef RTCD_IMPORT_TOOL_UTIL_H
#define RTCD_IMPORT_TOOL_UTIL_H

#include <rtcd/rtcd_import.h>

#include <stddef.h>
#include <stdint.h>

typedef struct tool_buffer {
    char* data;   /* NUL-terminated, owned; NULL until the first write */
    size_t size;
    size_t cap;
} tool_buffer;

void tool_buffer_free(tool_buffer* b);
void tool_buffer_printf(tool_buffer* b, const char* format, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string with its quotes (control characters escaped, invalid
 * UTF-8 bytes replaced by U+FFFD); NULL gives null. */
void tool_buffer_json_string(tool_buffer* b, const char* s);

typedef struct tool_limits {
    int isolate;            /* 0: run the job in this process */
    unsigned timeout_s;     /* per job; 0: none */
    uint64_t memory_bytes;  /* address space of the child; 0: none (also ignored under AddressSanitizer) */
} tool_limits;

typedef enum tool_outcome {
    TOOL_FINISHED = 0,      /* the job returned; its output is in the buffer */
    TOOL_CRASHED = 1,       /* killed by a signal or exited early: `detail` says which */
    TOOL_TIMED_OUT = 2,
    TOOL_NO_CHILD = 3       /* fork or pipe failed: `detail` says why */
} tool_outcome;

typedef void tool_job_fn(void* arg, tool_buffer* out);

/* Runs job(arg, out), in a child process when limits->isolate; `out` gets
 * what the job wrote (emptied first), `detail` a line on a failure. */
tool_outcome tool_run(const tool_limits* limits, tool_job_fn* job, void* arg, tool_buffer* out, char* detail,
                      size_t detail_size);

/* The one JSON line rtcd_mesh_check prints for a file (without newline).
 * `ms`: the import's time. */
void tool_describe_import(tool_buffer* b, const char* file, const rtcd_imported* imported, double ms);
/* The same shape for a file with no verdict (crash, timeout): declined with
 * RTCD_ERROR_INTERNAL and `message`. */
void tool_describe_failure(tool_buffer* b, const char* file, const char* message);

double tool_now_ms(void);

#endif
