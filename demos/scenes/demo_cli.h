/* The one command-line parser and the one clock of every demo and benchmark.
 *
 * A program describes its options in a table (name, type, target, range or
 * choices, help line) and calls demo_cli_parse once:
 *
 *   static const demo_cli_choice backends[] = {{"cpu", 0}, {"opencl", 1}, {NULL, 0}};
 *   demo_cli_option opts[] = {
 *       {.name = "--steps", .type = DEMO_CLI_U32, .target = &steps, .meta = "N", .min = 1, .max = 1000},
 *       {.name = "--backend", .type = DEMO_CLI_ENUM, .target = &backend, .choices = backends},
 *       {.name = "--json", .type = DEMO_CLI_FLAG, .target = &json, .help = "one-line JSON summary"},
 *   };
 *   demo_cli cli = {argv[0], "what the program does", opts, sizeof opts / sizeof *opts};
 *   int rc = demo_cli_parse(&cli, argc, argv);
 *   if (rc) return demo_cli_exit_code(rc);
 *
 * Values follow their option as the next argument or after '=' ("--steps 40",
 * "--steps=40"); the last occurrence wins, except for a list option, which
 * collects them all in order. Whole numbers are plain decimal digits (no
 * sign, no spaces), checked against [min, max]; floats must be finite and in
 * [fmin, fmax]; enum values must be one of the choices. Any error prints
 * one line naming the option and what was wrong, then the usage, on stderr.
 * --help / -h prints the usage on stdout. */
#ifndef RTCD_DEMO_CLI_H
#define RTCD_DEMO_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum demo_cli_type {
    DEMO_CLI_FLAG = 0, /* no value: *(int*)target = 1 */
    DEMO_CLI_U32,      /* *(uint32_t*)target, in [min, max] (max 0: UINT32_MAX) */
    DEMO_CLI_U64,      /* *(uint64_t*)target, in [min, max] (max 0: UINT64_MAX) */
    DEMO_CLI_FLOAT,    /* *(float*)target, finite, in [fmin, fmax] (both 0: any finite value) */
    DEMO_CLI_STRING,   /* *(const char**)target = the argument itself */
    DEMO_CLI_ENUM,     /* *(int*)target = value of the matching choice */
    DEMO_CLI_LIST      /* repeatable: appended to *(demo_cli_list*)target (at most DEMO_CLI_LIST_MAX) */
} demo_cli_type;

/* The values of a repeatable option, in the order given. */
#define DEMO_CLI_LIST_MAX 32
typedef struct demo_cli_list {
    const char* items[DEMO_CLI_LIST_MAX]; /* the arguments themselves */
    uint32_t count;
} demo_cli_list;

typedef struct demo_cli_choice {
    const char* name;  /* NULL ends the list */
    int value;
} demo_cli_choice;

typedef struct demo_cli_option {
    const char* name;               /* with its dashes: "--steps" */
    demo_cli_type type;
    void* target;
    const char* meta;               /* the value's placeholder in the usage ("N"); enums list their choices */
    const char* help;               /* one line for the usage, or NULL */
    uint64_t min, max;              /* DEMO_CLI_U32 / DEMO_CLI_U64 */
    double fmin, fmax;              /* DEMO_CLI_FLOAT */
    const demo_cli_choice* choices; /* DEMO_CLI_ENUM */
    int* seen;                      /* optional: set to 1 when the option is given */
} demo_cli_option;

typedef struct demo_cli {
    const char* prog;               /* argv[0] */
    const char* summary;            /* one line under the usage, or NULL */
    const demo_cli_option* options;
    size_t count;
} demo_cli;

#define DEMO_CLI_OK 0
#define DEMO_CLI_HELP (-1) /* --help was given and printed: exit 0 */
#define DEMO_CLI_BAD 2     /* bad option or value: reported, exit 2 */

/* Parses argv[1..argc) into the options' targets; returns DEMO_CLI_OK,
 * DEMO_CLI_HELP or DEMO_CLI_BAD. Targets of options not given keep their values. */
int demo_cli_parse(const demo_cli* cli, int argc, char** argv);

/* The process exit code for a parse result that is not DEMO_CLI_OK. */
int demo_cli_exit_code(int parse_rc);

/* The usage text: one line per option with its placeholder and help. */
void demo_cli_usage(const demo_cli* cli, FILE* f);

/* Reports a constraint between options that the table cannot express, as a
 * bad value is reported ("prog: message" and the usage on stderr); returns
 * DEMO_CLI_BAD. */
int demo_cli_fail(const demo_cli* cli, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Milliseconds on CLOCK_MONOTONIC (an arbitrary origin: use differences). */
double demo_now_ms(void);

#endif
