/* Header counts against rtcd's limits and the data's size (header_check.h). */
#include "header_check.h"
#include "readers.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* A count larger than any real file holds: parsing stops growing here, so an
 * absurd count cannot overflow the products below. */
#define COUNT_CAP (1ull << 40)
/* Counts are refused when they need more than twice the data (plus some
 * slack: a last line without its separator): that catches absurd headers,
 * which is the point, and leaves a file short by a few bytes to assimp,
 * which reads what is there (the corpus' pond.0.ply lacks 69 bytes). */
#define SLACK 64u
static int cannot_hold(uint64_t need, uint64_t have) { return need > 2 * have + SLACK; }

typedef struct cursor {
    const unsigned char* p;
    const unsigned char* end;
} cursor;

static void skip_space(cursor* c)
{
    while (c->p < c->end && isspace(*c->p)) ++c->p;
}

/* Next whitespace-separated token (skipping '#' comments to the end of the
 * line when `comments`); 0 when none is left. */
static int next_token(cursor* c, int comments, const unsigned char** tok, size_t* len)
{
    for (;;) {
        skip_space(c);
        if (c->p >= c->end) return 0;
        if (comments && *c->p == '#') {
            while (c->p < c->end && *c->p != '\n') ++c->p;
            continue;
        }
        break;
    }
    *tok = c->p;
    while (c->p < c->end && !isspace(*c->p)) ++c->p;
    *len = (size_t)(c->p - *tok);
    return 1;
}

/* Decimal count, capped at COUNT_CAP; 0 when the token is not a number. */
static int parse_count(const unsigned char* tok, size_t len, uint64_t* value)
{
    if (len == 0) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; ++i) {
        if (!isdigit(tok[i])) return 0;
        if (v < COUNT_CAP) v = v * 10 + (uint64_t)(tok[i] - '0');
    }
    *value = v < COUNT_CAP ? v : COUNT_CAP;
    return 1;
}

static int token_is(const unsigned char* tok, size_t len, const char* word)
{
    return len == strlen(word) && memcmp(tok, word, len) == 0;
}

static rtcd_error too_large(char* msg, size_t n, const char* format, const char* what, uint64_t count,
                            uint64_t limit)
{
    snprintf(msg, n, format, what, (unsigned long long)count, (unsigned long long)limit);
    return RTCD_ERROR_MESH_TOO_LARGE;
}

/* OFF: "[ST][C][N][4][n]OFF" then vertex, face and edge counts, '#' comments. */
static rtcd_error check_off(const unsigned char* head, size_t head_size, uint64_t total, char* msg, size_t n)
{
    cursor c = {head, head + head_size};
    const unsigned char* tok;
    size_t len;
    if (!next_token(&c, 1, &tok, &len) || len < 3 || len > 8 || memcmp(tok + len - 3, "OFF", 3) != 0) return RTCD_OK;
    for (size_t i = 0; i + 3 < len; ++i)
        if (!strchr("STCN4n", tok[i])) return RTCD_OK;
    if (len >= 4 && tok[len - 4] == 'n' && !next_token(&c, 1, &tok, &len))
        return RTCD_OK; /* nOFF: the dimension comes before the counts */
    uint64_t counts[2];
    for (int i = 0; i < 2; ++i) {
        /* "OFF BINARY" and anything else unexpected: not ours to judge. */
        if (!next_token(&c, 1, &tok, &len) || !parse_count(tok, len, &counts[i])) return RTCD_OK;
    }
    if (counts[0] > RTCD_IMPORT_MAX_VERTICES)
        return too_large(msg, n, "%s header claims %llu vertices, beyond rtcd's limit of %llu", "OFF", counts[0],
                         RTCD_IMPORT_MAX_VERTICES);
    if (counts[1] > RTCD_IMPORT_MAX_TRIANGLES)
        return too_large(msg, n, "%s header claims %llu faces, beyond rtcd's limit of %llu", "OFF", counts[1],
                         RTCD_IMPORT_MAX_TRIANGLES);
    /* A vertex is at least "0 0 0\n", a face at least "0\n". */
    uint64_t need = counts[0] * 6 + counts[1] * 2;
    if (cannot_hold(need, total)) {
        snprintf(msg, n,
                 "truncated or corrupt OFF: the header claims %llu vertices and %llu faces (at least %llu bytes), "
                 "the data has %llu bytes",
                 (unsigned long long)counts[0], (unsigned long long)counts[1], (unsigned long long)need,
                 (unsigned long long)total);
        return RTCD_ERROR_INVALID_ARGUMENT;
    }
    return RTCD_OK;
}

/* Bytes of one binary PLY scalar type; 0 for an unknown name. */
static unsigned ply_type_size(const unsigned char* tok, size_t len)
{
    static const struct {
        const char* name;
        unsigned size;
    } types[] = {{"char", 1},   {"uchar", 1},   {"int8", 1},   {"uint8", 1},   {"short", 2},   {"ushort", 2},
                 {"int16", 2},  {"uint16", 2},  {"int", 4},    {"uint", 4},    {"int32", 4},   {"uint32", 4},
                 {"float", 4},  {"float32", 4}, {"double", 8}, {"float64", 8}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (token_is(tok, len, types[i].name)) return types[i].size;
    return 0;
}

/* PLY: "ply", "format ascii|binary_*", elements with their properties, end_header. */
static rtcd_error check_ply(const unsigned char* head, size_t head_size, uint64_t total, char* msg, size_t n)
{
    if (head_size < 4 || memcmp(head, "ply", 3) != 0 || !isspace(head[3])) return RTCD_OK;
    cursor c = {head + 3, head + head_size};
    const unsigned char* tok;
    size_t len;
    int ascii = -1;
    uint64_t need = 0;           /* bytes the body needs at least */
    uint64_t count = 0;          /* of the current element */
    uint64_t element_bytes = 0;  /* at least, per element */
    int in_element = 0;
    while (next_token(&c, 0, &tok, &len)) {
        if (token_is(tok, len, "comment") || token_is(tok, len, "obj_info")) {
            while (c.p < c.end && *c.p != '\n') ++c.p;
        } else if (token_is(tok, len, "format")) {
            if (!next_token(&c, 0, &tok, &len)) return RTCD_OK;
            ascii = token_is(tok, len, "ascii");
            while (c.p < c.end && *c.p != '\n') ++c.p; /* the version */
        } else if (token_is(tok, len, "element")) {
            if (ascii < 0) return RTCD_OK;
            need += count * element_bytes;
            const unsigned char* name;
            size_t name_len;
            if (!next_token(&c, 0, &name, &name_len) || !next_token(&c, 0, &tok, &len) ||
                !parse_count(tok, len, &count))
                return RTCD_OK;
            int is_vertex = token_is(name, name_len, "vertex"), is_face = token_is(name, name_len, "face");
            uint64_t limit = is_vertex ? RTCD_IMPORT_MAX_VERTICES
                                       : is_face ? RTCD_IMPORT_MAX_TRIANGLES : (uint64_t)UINT32_MAX;
            if (count > limit) {
                snprintf(msg, n, "PLY header claims %llu elements '%.*s', beyond rtcd's limit of %llu",
                         (unsigned long long)count, (int)(name_len < 32 ? name_len : 32), (const char*)name,
                         (unsigned long long)limit);
                return RTCD_ERROR_MESH_TOO_LARGE;
            }
            element_bytes = 0;
            in_element = 1;
        } else if (token_is(tok, len, "property")) {
            if (!in_element || !next_token(&c, 0, &tok, &len)) return RTCD_OK;
            unsigned size;
            if (token_is(tok, len, "list")) {
                /* the count's type, then the item type and the name: at least an empty list */
                if (!next_token(&c, 0, &tok, &len)) return RTCD_OK;
                size = ply_type_size(tok, len);
                if (!next_token(&c, 0, &tok, &len)) return RTCD_OK;
            } else {
                size = ply_type_size(tok, len);
            }
            if (!size) return RTCD_OK; /* a type we do not know: let assimp judge */
            element_bytes += ascii ? 2 : size;  /* ascii: a digit and a separator at least */
            while (c.p < c.end && *c.p != '\n') ++c.p; /* the property's name */
        } else if (token_is(tok, len, "end_header")) {
            need += count * element_bytes;
            while (c.p < c.end && *c.p != '\n') ++c.p;
            if (c.p < c.end) ++c.p;
            uint64_t body = total - (uint64_t)(c.p - head);
            if (cannot_hold(need, body)) {
                snprintf(msg, n,
                         "truncated or corrupt PLY: the header's elements need at least %llu bytes, the data "
                         "has %llu after the header",
                         (unsigned long long)need, (unsigned long long)body);
                return RTCD_ERROR_INVALID_ARGUMENT;
            }
            return RTCD_OK;
        } else {
            return RTCD_OK; /* not a header we understand */
        }
    }
    return RTCD_OK; /* header longer than `head`: assimp's turn */
}

/* Binary STL: 80 bytes of header, a little-endian triangle count, 50 bytes
 * per triangle. No magic: an ASCII STL starts with "solid" (some binary ones
 * do too, their size then matches the count exactly). */
static rtcd_error check_stl(const unsigned char* head, size_t head_size, uint64_t total, char* msg, size_t n)
{
    size_t i = 0;
    while (i < head_size && isspace(head[i])) ++i;
    int solid = head_size - i >= 5 && memcmp(head + i, "solid", 5) == 0;
    if (total < 84 || head_size < 84) {
        if (solid) return RTCD_OK;
        snprintf(msg, n, "not an STL: %llu bytes do not start with 'solid' and are too short for a binary STL "
                         "(84 bytes of header)", (unsigned long long)total);
        return RTCD_ERROR_INVALID_ARGUMENT;
    }
    uint64_t count = (uint64_t)head[80] | (uint64_t)head[81] << 8 | (uint64_t)head[82] << 16 | (uint64_t)head[83] << 24;
    uint64_t need = 84 + 50 * count;
    if (need == total || solid) return RTCD_OK;
    if (count > RTCD_IMPORT_MAX_TRIANGLES)
        return too_large(msg, n, "%s header claims %llu triangles, beyond rtcd's limit of %llu", "binary STL", count,
                         RTCD_IMPORT_MAX_TRIANGLES);
    snprintf(msg, n,
             "%s binary STL: the header claims %llu triangles (%llu bytes), the data has %llu bytes",
             need > total ? "truncated" : "corrupt", (unsigned long long)count, (unsigned long long)need,
             (unsigned long long)total);
    return RTCD_ERROR_INVALID_ARGUMENT;
}

rtcd_error rtcd_import_check_header(const unsigned char* head, size_t head_size, uint64_t total_size,
                                    const char* ext, char* message, size_t message_size)
{
    message[0] = '\0';
    rtcd_error err = check_off(head, head_size, total_size, message, message_size);
    if (err == RTCD_OK) err = check_ply(head, head_size, total_size, message, message_size);
    if (err == RTCD_OK && ext && strcmp(ext, "stl") == 0)
        err = check_stl(head, head_size, total_size, message, message_size);
    return err;
}

/* ---- which reader ---- */

static int starts_with_nocase(const unsigned char* p, size_t n, const char* word)
{
    size_t len = strlen(word);
    if (n < len) return 0;
    for (size_t i = 0; i < len; ++i)
        if (tolower(p[i]) != word[i]) return 0;
    return 1;
}

/* The first token (after '#' comments) is an OFF keyword: [ST][C][N][4][n]OFF. */
static int looks_like_off(const unsigned char* head, size_t size)
{
    cursor c = {head, head + size};
    const unsigned char* tok;
    size_t len;
    if (!next_token(&c, 1, &tok, &len) || len < 3 || len > 8 || memcmp(tok + len - 3, "OFF", 3) != 0) return 0;
    for (size_t i = 0; i + 3 < len; ++i)
        if (!strchr("STCN4n", tok[i])) return 0;
    return 1;
}

/* The head names an "asset", as every glTF does; `json`: and starts as a
 * JSON object. */
static int looks_like_gltf(const unsigned char* head, size_t size, int json)
{
    size_t i = 0;
    if (size >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < size && isspace(head[i])) ++i;
    if (json && (i >= size || head[i] != '{')) return 0;
    for (; i + 7 <= size; ++i)
        if (memcmp(head + i, "\"asset\"", 7) == 0) return 1;
    return 0;
}

import_format rtcd_import_sniff(const unsigned char* head, size_t head_size, const char* ext, int assimp_ext)
{
    /* assimp 5.2 takes any data starting "ply" or "off" (any case) for its PLY or OFF loader. */
    if (starts_with_nocase(head, head_size, "ply")) return FORMAT_PLY;
    if (starts_with_nocase(head, head_size, "off") || looks_like_off(head, head_size)) return FORMAT_OFF;
    if (head_size >= 4 && memcmp(head, "glTF", 4) == 0) return FORMAT_GLB;
    if (looks_like_gltf(head, head_size, 1)) return FORMAT_GLTF;
    if (ext && strcmp(ext, "ply") == 0) return FORMAT_PLY;
    if (ext && strcmp(ext, "off") == 0) return FORMAT_OFF;
    if (ext && strcmp(ext, "glb") == 0) return FORMAT_GLB;
    if (ext && strcmp(ext, "gltf") == 0) return FORMAT_GLTF;
    /* Left to assimp's detection by content, its glTF loader would parse it. */
    if (!assimp_ext && looks_like_gltf(head, head_size, 0)) return FORMAT_GLTF;
    return FORMAT_ASSIMP;
}
