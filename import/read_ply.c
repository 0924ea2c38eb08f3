/* PLY reader (readers.h): ASCII and binary (little- and big-endian) files;
 * the vertex element's x, y and z and the face element's vertex_indices (or
 * vertex_index) list; every other element and property is read past.
 *
 * Bounds: the header's counts are never trusted for memory (what is kept
 * grows with what is read, and every element read consumes at least one
 * byte of the data, every list item too), so time and memory stay
 * proportional to the file's size whatever it claims. */
#include "readers.h"
#include "text_scan.h"

#include <stdlib.h>
#include <string.h>

#define PLY_MAX_ELEMENTS 64
#define PLY_MAX_PROPERTIES 64

typedef enum ply_type { T_NONE, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_F32, T_F64 } ply_type;
typedef enum ply_format { ASCII, LITTLE, BIG } ply_format;
enum { ROLE_NONE = -1, ROLE_X = 0, ROLE_Y = 1, ROLE_Z = 2, ROLE_INDICES = 3 };
enum { KIND_OTHER, KIND_VERTEX, KIND_FACE };

typedef struct ply_property {
    ply_type type;       /* the scalar's, or a list's items' */
    ply_type count_type; /* T_NONE: not a list */
    int role;
} ply_property;

typedef struct ply_element {
    uint64_t count;
    int kind;
    uint32_t property_count;
    ply_property properties[PLY_MAX_PROPERTIES];
} ply_element;

typedef struct ply_reader {
    text_scan body;
    ply_format format;
    import_soup* soup;
    uint32_t element_count;
    ply_element elements[PLY_MAX_ELEMENTS];
    /* the faces, kept until every vertex is read (a face element may come first) */
    uint32_t* corners;
    uint64_t corner_count, corner_capacity;
    uint32_t* sizes;
    uint64_t face_count, face_capacity;
} ply_reader;

static const struct {
    const char* name;
    ply_type type;
} TYPES[] = {{"char", T_I8},   {"uchar", T_U8},   {"short", T_I16},  {"ushort", T_U16}, {"int", T_I32},
             {"uint", T_U32},  {"float", T_F32},  {"double", T_F64}, {"int8", T_I8},    {"uint8", T_U8},
             {"int16", T_I16}, {"uint16", T_U16}, {"int32", T_I32},  {"uint32", T_U32}, {"float32", T_F32},
             {"float64", T_F64}};

static const unsigned TYPE_SIZE[] = {0, 1, 1, 2, 2, 4, 4, 4, 8};

static ply_type type_named(const unsigned char* tok, size_t len)
{
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; ++i)
        if (token_is(tok, len, TYPES[i].name)) return TYPES[i].type;
    return T_NONE;
}

static int is_integer(ply_type t) { return t != T_F32 && t != T_F64 && t != T_NONE; }

static int fail(ply_reader* r, const char* what)
{
    return soup_fail(r->soup, RTCD_ERROR_INVALID_ARGUMENT, "corrupt PLY: %s", what);
}

/* ---- header ---- */

static int header_property(ply_reader* r, text_scan* line)
{
    if (r->element_count == 0) return fail(r, "a property before any element");
    ply_element* e = &r->elements[r->element_count - 1];
    if (e->property_count == PLY_MAX_PROPERTIES) return fail(r, "more than 64 properties in one element");
    ply_property* p = &e->properties[e->property_count++];
    const unsigned char* tok;
    size_t len;
    p->count_type = T_NONE;
    p->role = ROLE_NONE;
    if (!scan_token(line, &tok, &len)) return fail(r, "a property without a type");
    if (token_is(tok, len, "list")) {
        if (!scan_token(line, &tok, &len) || !is_integer(p->count_type = type_named(tok, len)))
            return fail(r, "a list whose count is not of an integer type");
        if (!scan_token(line, &tok, &len)) return fail(r, "a list without an item type");
    }
    if ((p->type = type_named(tok, len)) == T_NONE) return fail(r, "a property of an unknown type");
    if (!scan_token(line, &tok, &len)) return fail(r, "a property without a name");
    if (p->count_type != T_NONE) {
        if (e->kind == KIND_FACE && (token_is(tok, len, "vertex_indices") || token_is(tok, len, "vertex_index"))) {
            if (!is_integer(p->type)) return fail(r, "vertex indices of a floating-point type");
            p->role = ROLE_INDICES;
        }
    } else if (e->kind == KIND_VERTEX && len == 1 && tok[0] >= 'x' && tok[0] <= 'z') {
        p->role = ROLE_X + (tok[0] - 'x');
    }
    return 1;
}

static int header_element(ply_reader* r, text_scan* line)
{
    const unsigned char *name, *tok;
    size_t name_len, len;
    int64_t count;
    if (r->element_count == PLY_MAX_ELEMENTS) return fail(r, "more than 64 elements");
    if (!scan_token(line, &name, &name_len) || !scan_token(line, &tok, &len) || !parse_int(tok, len, &count) ||
        count < 0)
        return fail(r, "an element line without a name and a count");
    ply_element* e = &r->elements[r->element_count++];
    e->count = (uint64_t)count;
    e->property_count = 0;
    e->kind = token_is(name, name_len, "vertex") ? KIND_VERTEX : token_is(name, name_len, "face") ? KIND_FACE
                                                                                                : KIND_OTHER;
    for (uint32_t i = 0; i + 1 < r->element_count; ++i)
        if (e->kind != KIND_OTHER && r->elements[i].kind == e->kind) return fail(r, "two vertex or face elements");
    return 1;
}

static int read_header(ply_reader* r, const unsigned char* data, size_t size)
{
    text_scan s = {data, data + size};
    const unsigned char *line, *tok;
    size_t line_len, len;
    int format_seen = 0;
    text_scan first = s;
    if (!scan_line(&s, &line, &line_len) || !scan_token(&first, &tok, &len) || !token_is(tok, len, "ply"))
        return fail(r, "no 'ply' line");
    while (scan_line(&s, &line, &line_len)) {
        text_scan words = {line, line + line_len};
        if (!scan_token(&words, &tok, &len) || token_is(tok, len, "comment") || token_is(tok, len, "obj_info"))
            continue;
        if (token_is(tok, len, "end_header")) {
            if (!format_seen) return fail(r, "no format line");
            r->body = s;
            return 1;
        }
        if (token_is(tok, len, "format")) {
            if (!scan_token(&words, &tok, &len)) return fail(r, "an empty format line");
            if (token_is(tok, len, "ascii")) r->format = ASCII;
            else if (token_is(tok, len, "binary_little_endian")) r->format = LITTLE;
            else if (token_is(tok, len, "binary_big_endian")) r->format = BIG;
            else return fail(r, "an unknown format");
            format_seen = 1;
        } else if (token_is(tok, len, "element")) {
            if (!header_element(r, &words)) return 0;
        } else if (token_is(tok, len, "property")) {
            if (!header_property(r, &words)) return 0;
        } /* else a line of no known kind (some writers leave out "comment"): skipped */
    }
    return fail(r, "the header never ends (no end_header)");
}

/* ---- body ---- */

/* One value; integers exactly (as int64), every type as a double too. */
static int read_value(ply_reader* r, ply_type type, int64_t* integer, double* real)
{
    text_scan* b = &r->body;
    if (r->format == ASCII) {
        const unsigned char* tok;
        size_t len;
        if (!scan_token(b, &tok, &len)) return fail(r, "the data ends before the header's elements do");
        if (is_integer(type)) {
            if (!parse_int(tok, len, integer)) return fail(r, "a value that is not an integer");
            *real = (double)*integer;
        } else if (!parse_double(tok, len, real)) {
            return fail(r, "a value that is not a number");
        }
        return 1;
    }
    unsigned n = TYPE_SIZE[type];
    if ((size_t)(b->end - b->p) < n) return fail(r, "the data ends before the header's elements do");
    unsigned char raw[8];
    for (unsigned k = 0; k < n; ++k) raw[k] = b->p[r->format == LITTLE ? k : n - 1 - k];
    b->p += n;
    uint64_t u = 0;
    for (unsigned k = 0; k < n; ++k) u |= (uint64_t)raw[k] << (8 * k);
    switch (type) {
    case T_I8: *integer = (int8_t)u; break;
    case T_I16: *integer = (int16_t)u; break;
    case T_I32: *integer = (int32_t)u; break;
    case T_F32: {
        float f;
        uint32_t u32 = (uint32_t)u;
        memcpy(&f, &u32, 4);
        *real = f;
        return 1;
    }
    case T_F64: memcpy(real, &u, 8); return 1;
    default: *integer = (int64_t)u; break; /* unsigned types */
    }
    *real = (double)*integer;
    return 1;
}

static int push_corner(ply_reader* r, uint32_t corner)
{
    if (r->corner_count == r->corner_capacity) {
        uint64_t cap = r->corner_capacity ? 2 * r->corner_capacity : 256;
        uint32_t* p = realloc(r->corners, (size_t)cap * sizeof *p);
        if (!p) return soup_fail(r->soup, RTCD_ERROR_OUT_OF_MEMORY, "PLY: no memory for the faces");
        r->corners = p;
        r->corner_capacity = cap;
    }
    r->corners[r->corner_count++] = corner;
    return 1;
}

static int push_face(ply_reader* r, uint32_t size)
{
    if (r->face_count == r->face_capacity) {
        uint64_t cap = r->face_capacity ? 2 * r->face_capacity : 64;
        uint32_t* p = realloc(r->sizes, (size_t)cap * sizeof *p);
        if (!p) return soup_fail(r->soup, RTCD_ERROR_OUT_OF_MEMORY, "PLY: no memory for the faces");
        r->sizes = p;
        r->face_capacity = cap;
    }
    r->sizes[r->face_count++] = size;
    return 1;
}

/* One list: kept as a face when it holds the vertex indices, else read past. */
static int read_list(ply_reader* r, const ply_property* p)
{
    int64_t count, index;
    double real;
    if (!read_value(r, p->count_type, &count, &real)) return 0;
    if (count < 0 || count > UINT32_MAX) return fail(r, "a list with a negative or huge count");
    for (int64_t k = 0; k < count; ++k) {
        if (!read_value(r, p->type, &index, &real)) return 0;
        if (p->role != ROLE_INDICES) continue;
        if (index < 0 || index > UINT32_MAX)
            return soup_fail(r->soup, RTCD_ERROR_INVALID_ARGUMENT, "corrupt PLY: face %llu names vertex %lld",
                             (unsigned long long)r->face_count, (long long)index);
        if (!push_corner(r, (uint32_t)index)) return 0;
    }
    return p->role == ROLE_INDICES ? push_face(r, (uint32_t)count) : 1;
}

static int read_element(ply_reader* r, const ply_element* e)
{
    if (e->property_count == 0) return 1; /* nothing stored per element, whatever the count */
    /* Every element takes at least a byte (binary) or a byte and a separator (ASCII). */
    if (e->count > (uint64_t)(r->body.end - r->body.p)) return fail(r, "the data ends before the header's elements do");
    if (e->kind == KIND_VERTEX && !soup_reserve(r->soup, e->count, 0)) return 0;
    for (uint64_t i = 0; i < e->count; ++i) {
        double xyz[3] = {0, 0, 0}, real;
        int64_t integer;
        for (uint32_t k = 0; k < e->property_count; ++k) {
            const ply_property* p = &e->properties[k];
            if (p->count_type != T_NONE) {
                if (!read_list(r, p)) return 0;
            } else {
                if (!read_value(r, p->type, &integer, &real)) return 0;
                if (p->role >= ROLE_X && p->role <= ROLE_Z) xyz[p->role] = real;
            }
        }
        if (e->kind == KIND_VERTEX && !soup_vertex(r->soup, NULL, xyz[0], xyz[1], xyz[2])) return 0;
    }
    return 1;
}

static int read_ply(ply_reader* r, const unsigned char* data, size_t size)
{
    if (!read_header(r, data, size)) return 0;
    const ply_element* vertex = NULL;
    for (uint32_t i = 0; i < r->element_count; ++i)
        if (r->elements[i].kind == KIND_VERTEX) vertex = &r->elements[i];
    if (vertex) {
        int roles = 0;
        for (uint32_t k = 0; k < vertex->property_count; ++k)
            if (vertex->properties[k].role >= 0) roles |= 1 << vertex->properties[k].role;
        if (roles != 7 && vertex->count > 0) return fail(r, "the vertex element lacks x, y or z");
    }
    for (uint32_t i = 0; i < r->element_count; ++i)
        if (!read_element(r, &r->elements[i])) return 0;
    /* Every vertex is read: the faces, checked against them. */
    uint32_t vertices = r->soup->vertex_count;
    uint64_t at = 0;
    for (uint64_t f = 0; f < r->face_count; ++f) {
        const uint32_t* corners = r->sizes[f] ? r->corners + at : NULL; /* no arithmetic on NULL */
        if (!soup_face(r->soup, 0, vertices, corners, r->sizes[f], 0)) return 0;
        at += r->sizes[f];
    }
    return 1;
}

int rtcd_read_ply(const unsigned char* data, size_t size, import_soup* soup)
{
    ply_reader* r = calloc(1, sizeof *r);
    if (!r) return soup_fail(soup, RTCD_ERROR_OUT_OF_MEMORY, "PLY: no memory for the reader");
    r->soup = soup;
    int ok = read_ply(r, data, size);
    free(r->corners);
    free(r->sizes);
    free(r);
    return ok;
}
