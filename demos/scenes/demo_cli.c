#include "demo_cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double demo_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static const char* prog_name(const demo_cli* cli)
{
    return cli->prog ? cli->prog : "demo";
}

/* Prints "a|b|c"; returns the characters printed. */
static int print_choices(FILE* f, const demo_cli_choice* c)
{
    int n = 0;
    for (int k = 0; c && c[k].name; ++k) n += fprintf(f, "%s%s", k ? "|" : "", c[k].name);
    return n;
}

void demo_cli_usage(const demo_cli* cli, FILE* f)
{
    fprintf(f, "usage: %s [options]\n", prog_name(cli));
    if (cli->summary) fprintf(f, "%s\n", cli->summary);
    for (size_t i = 0; i < cli->count; ++i) {
        const demo_cli_option* o = &cli->options[i];
        int width = fprintf(f, "  %s", o->name);
        if (o->type == DEMO_CLI_ENUM) width += fprintf(f, " ") + print_choices(f, o->choices);
        else if (o->type != DEMO_CLI_FLAG) {
            width += fprintf(f, " %s", o->meta ? o->meta : "VALUE");
        }
        if (o->help) {
            if (width < 34) fprintf(f, "%*s", 34 - width, "");
            else fprintf(f, "\n%34s", "");
            fprintf(f, "%s", o->help);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "  --help                          this text\n");
}

int demo_cli_exit_code(int parse_rc)
{
    return parse_rc == DEMO_CLI_HELP ? 0 : (parse_rc ? DEMO_CLI_BAD : 0);
}

int demo_cli_fail(const demo_cli* cli, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog_name(cli));
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    demo_cli_usage(cli, stderr);
    return DEMO_CLI_BAD;
}

/* Plain decimal digits only (strtoull alone would take signs and spaces). */
static int parse_whole(const char* v, uint64_t* out)
{
    if (!v[0]) return 0;
    for (const char* p = v; *p; ++p)
        if (*p < '0' || *p > '9') return 0;
    errno = 0;
    char* end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end) return 0;
    *out = x;
    return 1;
}

/* Stores v into o's target; reports and returns 0 when v is not valid. */
static int set_value(const demo_cli* cli, const demo_cli_option* o, const char* v)
{
    switch (o->type) {
    case DEMO_CLI_U32:
    case DEMO_CLI_U64: {
        uint64_t top = o->type == DEMO_CLI_U32 ? UINT32_MAX : UINT64_MAX;
        uint64_t max = o->max && o->max < top ? o->max : top;
        uint64_t x = 0;
        if (!parse_whole(v, &x)) {
            demo_cli_fail(cli, "%s: '%s' is not a whole number (decimal digits, %llu..%llu)", o->name, v,
                          (unsigned long long)o->min, (unsigned long long)max);
            return 0;
        }
        if (x < o->min || x > max) {
            demo_cli_fail(cli, "%s: %s is out of range (%llu..%llu)", o->name, v, (unsigned long long)o->min,
                          (unsigned long long)max);
            return 0;
        }
        if (o->type == DEMO_CLI_U32) *(uint32_t*)o->target = (uint32_t)x;
        else *(uint64_t*)o->target = x;
        return 1;
    }
    case DEMO_CLI_FLOAT: {
        char* end = NULL;
        errno = 0;
        double x = v[0] ? strtod(v, &end) : 0.0;
        if (!v[0] || *end || errno == ERANGE || !isfinite(x) || !isfinite((float)x)) {
            demo_cli_fail(cli, "%s: '%s' is not a finite number", o->name, v);
            return 0;
        }
        int ranged = o->fmin != 0.0 || o->fmax != 0.0;
        if (ranged && (x < o->fmin || x > o->fmax)) {
            demo_cli_fail(cli, "%s: %s is out of range (%g..%g)", o->name, v, o->fmin, o->fmax);
            return 0;
        }
        *(float*)o->target = (float)x;
        return 1;
    }
    case DEMO_CLI_STRING:
        *(const char**)o->target = v;
        return 1;
    case DEMO_CLI_LIST: {
        demo_cli_list* list = o->target;
        if (list->count == DEMO_CLI_LIST_MAX) {
            demo_cli_fail(cli, "%s: given more than %d times", o->name, DEMO_CLI_LIST_MAX);
            return 0;
        }
        list->items[list->count++] = v;
        return 1;
    }
    case DEMO_CLI_ENUM:
        for (int k = 0; o->choices && o->choices[k].name; ++k)
            if (!strcmp(v, o->choices[k].name)) {
                *(int*)o->target = o->choices[k].value;
                return 1;
            }
        fprintf(stderr, "%s: %s: '%s' is not one of ", prog_name(cli), o->name, v);
        print_choices(stderr, o->choices);
        fprintf(stderr, "\n");
        demo_cli_usage(cli, stderr);
        return 0;
    case DEMO_CLI_FLAG:
        break;
    }
    return 0;
}

int demo_cli_parse(const demo_cli* cli, int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            demo_cli_usage(cli, stdout);
            return DEMO_CLI_HELP;
        }
        /* "--name=value" or "--name" */
        const char* eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const demo_cli_option* o = NULL;
        for (size_t k = 0; k < cli->count && !o; ++k)
            if (strlen(cli->options[k].name) == len && !strncmp(cli->options[k].name, a, len)) o = &cli->options[k];
        if (!o) {
            if (strncmp(a, "-", 1)) return demo_cli_fail(cli, "unexpected argument '%s'", a);
            return demo_cli_fail(cli, "unknown option '%.*s'", (int)len, a);
        }
        if (o->type == DEMO_CLI_FLAG) {
            if (eq) return demo_cli_fail(cli, "%s takes no value", o->name);
            *(int*)o->target = 1;
        } else {
            const char* v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) {
                if (o->type == DEMO_CLI_ENUM) {
                    fprintf(stderr, "%s: %s needs a value: ", prog_name(cli), o->name);
                    print_choices(stderr, o->choices);
                    fprintf(stderr, "\n");
                    demo_cli_usage(cli, stderr);
                    return DEMO_CLI_BAD;
                }
                return demo_cli_fail(cli, "%s needs a value (%s)", o->name, o->meta ? o->meta : "VALUE");
            }
            if (!set_value(cli, o, v)) return DEMO_CLI_BAD;
        }
        if (o->seen) *o->seen = 1;
    }
    return DEMO_CLI_OK;
}
