/* Bounded text scanning (text_scan.h). */
#include "text_scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Spaces of the C locale, without isspace's locale and sign questions. */
static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int scan_token(text_scan* s, const unsigned char** token, size_t* length)
{
    while (s->p < s->end && is_space(*s->p)) ++s->p;
    if (s->p >= s->end) return 0;
    *token = s->p;
    while (s->p < s->end && !is_space(*s->p)) ++s->p;
    *length = (size_t)(s->p - *token);
    return 1;
}

int scan_line(text_scan* s, const unsigned char** line, size_t* length)
{
    if (s->p >= s->end) return 0;
    const unsigned char* start = s->p;
    const unsigned char* nl = memchr(start, '\n', (size_t)(s->end - start));
    const unsigned char* stop = nl ? nl : s->end;
    s->p = nl ? nl + 1 : s->end;
    if (stop > start && stop[-1] == '\r') --stop;
    *line = start;
    *length = (size_t)(stop - start);
    return 1;
}

int token_is(const unsigned char* token, size_t length, const char* word)
{
    return length == strlen(word) && memcmp(token, word, length) == 0;
}

/* A NUL-terminated copy for strtod/strtoll; numbers longer than this are not numbers. */
static int copy_token(const unsigned char* token, size_t length, char out[64])
{
    if (length == 0 || length >= 64) return 0;
    memcpy(out, token, length);
    out[length] = '\0';
    return 1;
}

int parse_double(const unsigned char* token, size_t length, double* value)
{
    char text[64], *end;
    if (!copy_token(token, length, text)) return 0;
    *value = strtod(text, &end);
    return end == text + length;
}

int parse_int(const unsigned char* token, size_t length, int64_t* value)
{
    char text[64], *end;
    if (!copy_token(token, length, text)) return 0;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end != text + length || errno == ERANGE) return 0;
    *value = v;
    return 1;
}
