/* OFF reader (readers.h): "[ST][C][N]OFF", the vertex and face counts (on
 * the keyword's line or the next), one vertex a line (x y z, then whatever
 * normal, colour or texture fields its prefix announces: ignored), one face
 * a line ("n i0 .. in-1", then an optional colour: ignored). '#' starts a
 * comment anywhere; blank lines are skipped. 4OFF, nOFF (other dimensions)
 * and "OFF BINARY" are declined. Line-based, so each line is read once:
 * time and memory proportional to the file's size. */
#include "readers.h"
#include "text_scan.h"

#include <stdlib.h>
#include <string.h>

typedef struct off_reader {
    text_scan text;
    import_soup* soup;
    uint64_t line_number;
    uint32_t* corners;
    size_t corner_capacity;
} off_reader;

static int fail(off_reader* r, const char* what)
{
    return soup_fail(r->soup, RTCD_ERROR_INVALID_ARGUMENT, "corrupt OFF: %s (line %llu)", what,
                     (unsigned long long)r->line_number);
}

/* The next line with something on it, its comment cut off; 0 at the end. */
static int content_line(off_reader* r, text_scan* words)
{
    const unsigned char* line;
    size_t len;
    while (scan_line(&r->text, &line, &len)) {
        ++r->line_number;
        const unsigned char* hash = memchr(line, '#', len);
        words->p = line;
        words->end = hash ? hash : line + len;
        text_scan probe = *words;
        const unsigned char* tok;
        size_t tok_len;
        if (scan_token(&probe, &tok, &tok_len)) return 1;
    }
    return 0;
}

static int count_token(off_reader* r, text_scan* words, int64_t* value, uint64_t limit)
{
    const unsigned char* tok;
    size_t len;
    if (!scan_token(words, &tok, &len) || !parse_int(tok, len, value) || *value < 0)
        return fail(r, "the header's vertex and face counts are missing or negative");
    if ((uint64_t)*value > limit)
        return soup_fail(r->soup, RTCD_ERROR_MESH_TOO_LARGE, "OFF header claims %lld elements, beyond rtcd's limit of %llu",
                         (long long)*value, (unsigned long long)limit);
    return 1;
}

static int read_header(off_reader* r, int64_t* vertices, int64_t* faces)
{
    text_scan words;
    const unsigned char* tok;
    size_t len;
    if (!content_line(r, &words) || !scan_token(&words, &tok, &len) || len < 3 || len > 8 ||
        memcmp(tok + len - 3, "OFF", 3) != 0)
        return fail(r, "no OFF keyword");
    for (size_t i = 0; i + 3 < len; ++i) {
        if (tok[i] == '4' || tok[i] == 'n')
            return soup_fail(r->soup, RTCD_ERROR_INVALID_ARGUMENT, "OFF: %.*s (not three dimensions) is not read",
                             (int)len, (const char*)tok);
        if (!strchr("STCN", tok[i])) return fail(r, "an unknown OFF keyword");
    }
    text_scan rest = words; /* the counts: on this line or the next */
    if (scan_token(&rest, &tok, &len)) {
        if (token_is(tok, len, "BINARY"))
            return soup_fail(r->soup, RTCD_ERROR_INVALID_ARGUMENT, "OFF: binary OFF is not read");
    } else if (!content_line(r, &words)) {
        return fail(r, "no counts");
    }
    return count_token(r, &words, vertices, RTCD_IMPORT_MAX_VERTICES) &&
           count_token(r, &words, faces, RTCD_IMPORT_MAX_TRIANGLES);
}

static int read_face(off_reader* r, uint32_t vertices)
{
    text_scan words;
    const unsigned char* tok;
    size_t len;
    int64_t n, index;
    if (!content_line(r, &words)) return fail(r, "the data ends before the header's faces do");
    if (!scan_token(&words, &tok, &len) || !parse_int(tok, len, &n) || n < 1)
        return fail(r, "a face without a corner count");
    /* Each corner takes two bytes of the line at least: no allocation for a count the line cannot hold. */
    if ((uint64_t)n > (uint64_t)(words.end - words.p) / 2) return fail(r, "a face with fewer corners than it announces");
    if ((size_t)n > r->corner_capacity) {
        uint32_t* p = realloc(r->corners, (size_t)n * sizeof *p);
        if (!p) return soup_fail(r->soup, RTCD_ERROR_OUT_OF_MEMORY, "OFF: no memory for a face of %lld corners", (long long)n);
        r->corners = p;
        r->corner_capacity = (size_t)n;
    }
    for (int64_t k = 0; k < n; ++k) {
        if (!scan_token(&words, &tok, &len)) return fail(r, "a face with fewer corners than it announces");
        if (!parse_int(tok, len, &index)) return fail(r, "a face corner that is not an integer");
        if (index < 0 || index >= (int64_t)vertices)
            return soup_fail(r->soup, RTCD_ERROR_INVALID_ARGUMENT,
                             "corrupt OFF: face on line %llu names vertex %lld, there are %u",
                             (unsigned long long)r->line_number, (long long)index, vertices);
        r->corners[k] = (uint32_t)index;
    }
    return soup_face(r->soup, 0, vertices, r->corners, (uint32_t)n, 0);
}

static int read_off(off_reader* r)
{
    int64_t vertices, faces;
    if (!read_header(r, &vertices, &faces)) return 0;
    /* A vertex line is at least "0 0 0\n", a face line "1 0\n": counts beyond that are refused. */
    uint64_t left = (uint64_t)(r->text.end - r->text.p);
    if ((uint64_t)vertices > left / 6 + 1 || (uint64_t)faces > left / 4 + 1)
        return fail(r, "the header counts more vertices or faces than the data can hold");
    if (!soup_reserve(r->soup, (uint64_t)vertices, (uint64_t)faces)) return 0;
    for (int64_t i = 0; i < vertices; ++i) {
        text_scan words;
        const unsigned char* tok;
        size_t len;
        double xyz[3];
        if (!content_line(r, &words)) return fail(r, "the data ends before the header's vertices do");
        for (int k = 0; k < 3; ++k)
            if (!scan_token(&words, &tok, &len) || !parse_double(tok, len, &xyz[k]))
                return fail(r, "a vertex line without three numbers");
        if (!soup_vertex(r->soup, NULL, xyz[0], xyz[1], xyz[2])) return 0;
    }
    for (int64_t f = 0; f < faces; ++f)
        if (!read_face(r, (uint32_t)vertices)) return 0;
    return 1;
}

int rtcd_read_off(const unsigned char* data, size_t size, import_soup* soup)
{
    off_reader r = {{data, data + size}, soup, 0, NULL, 0};
    int ok = read_off(&r);
    free(r.corners);
    return ok;
}
