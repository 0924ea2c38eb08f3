/* Strict JSON to a flat array of values (json.h). */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char* text;
    size_t length, at;
    json_doc* doc;
    uint32_t stack[JSON_MAX_DEPTH]; /* the open containers */
    uint32_t depth;
    char* error;
    size_t error_size;
} parser;

static int fail(parser* p, const char* what)
{
    snprintf(p->error, p->error_size, "not JSON: %s at byte %zu", what, p->at);
    return 0;
}

static void skip_space(parser* p)
{
    while (p->at < p->length && strchr(" \t\r\n", p->text[p->at]) && p->text[p->at]) ++p->at;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static uint32_t add_value(parser* p, json_type type, size_t start, size_t length)
{
    json_value* v = &p->doc->values[p->doc->value_count];
    v->type = type;
    v->start = (uint32_t)start;
    v->length = (uint32_t)length;
    v->count = 0;
    v->span = 1;
    if (p->depth) ++p->doc->values[p->stack[p->depth - 1]].count;
    return p->doc->value_count++;
}

static int parse_string(parser* p, json_type type)
{
    size_t start = ++p->at; /* past the quote */
    while (p->at < p->length && p->text[p->at] != '"') {
        unsigned char c = (unsigned char)p->text[p->at];
        if (c < 0x20) return fail(p, "a control character in a string");
        if (c == '\\') {
            if (++p->at >= p->length) break;
            char e = p->text[p->at];
            if (e == 'u') {
                for (int k = 1; k <= 4; ++k)
                    if (p->at + k >= p->length || !is_hex(p->text[p->at + k])) return fail(p, "a bad \\u escape");
                p->at += 4;
            } else if (!strchr("\"\\/bfnrt", e) || !e) {
                return fail(p, "a bad escape");
            }
        }
        ++p->at;
    }
    if (p->at >= p->length) return fail(p, "an unterminated string");
    add_value(p, type, start, p->at - start);
    ++p->at;
    return 1;
}

static int parse_number(parser* p)
{
    size_t start = p->at;
    const char* t = p->text;
    if (p->at < p->length && t[p->at] == '-') ++p->at;
    if (p->at >= p->length || !is_digit(t[p->at])) return fail(p, "a bad number");
    if (t[p->at] == '0') ++p->at;
    else while (p->at < p->length && is_digit(t[p->at])) ++p->at;
    if (p->at < p->length && t[p->at] == '.') {
        if (++p->at >= p->length || !is_digit(t[p->at])) return fail(p, "a bad fraction");
        while (p->at < p->length && is_digit(t[p->at])) ++p->at;
    }
    if (p->at < p->length && (t[p->at] == 'e' || t[p->at] == 'E')) {
        ++p->at;
        if (p->at < p->length && (t[p->at] == '+' || t[p->at] == '-')) ++p->at;
        if (p->at >= p->length || !is_digit(t[p->at])) return fail(p, "a bad exponent");
        while (p->at < p->length && is_digit(t[p->at])) ++p->at;
    }
    add_value(p, JSON_NUMBER, start, p->at - start);
    return 1;
}

static int parse_word(parser* p, const char* word, json_type type)
{
    size_t n = strlen(word);
    if (p->length - p->at < n || memcmp(p->text + p->at, word, n) != 0) return fail(p, "an unexpected character");
    add_value(p, type, p->at, n);
    p->at += n;
    return 1;
}

/* One value where a value is expected: a scalar, or the opening of a container. */
static int parse_value(parser* p)
{
    skip_space(p);
    if (p->at >= p->length) return fail(p, "a missing value");
    char c = p->text[p->at];
    if (c == '{' || c == '[') {
        if (p->depth == JSON_MAX_DEPTH) return fail(p, "nesting too deep");
        uint32_t index = add_value(p, c == '{' ? JSON_OBJECT : JSON_ARRAY, p->at, 1);
        p->stack[p->depth++] = index;
        ++p->at;
        return 1;
    }
    if (c == '"') return parse_string(p, JSON_STRING);
    if (c == '-' || is_digit(c)) return parse_number(p);
    if (c == 't') return parse_word(p, "true", JSON_TRUE);
    if (c == 'f') return parse_word(p, "false", JSON_FALSE);
    if (c == 'n') return parse_word(p, "null", JSON_NULL);
    return fail(p, "an unexpected character");
}

static void close_container(parser* p)
{
    uint32_t index = p->stack[--p->depth];
    p->doc->values[index].span = p->doc->value_count - index;
}

/* After a value: a separator, a closing bracket, or (in an object) a key and colon next. */
static int parse_document(parser* p)
{
    if (!parse_value(p)) return 0;
    while (p->depth) {
        json_value* open = &p->doc->values[p->stack[p->depth - 1]];
        int object = open->type == JSON_OBJECT;
        /* values[...] just opened: its first member; else after a member: ',' or the closing bracket. */
        int fresh = p->stack[p->depth - 1] == p->doc->value_count - 1;
        skip_space(p);
        if (p->at >= p->length) return fail(p, "an unclosed container");
        char c = p->text[p->at];
        if (c == (object ? '}' : ']')) {
            ++p->at;
            close_container(p);
            continue;
        }
        if (!fresh) {
            if (c != ',') return fail(p, "a missing comma");
            ++p->at;
        }
        if (object) {
            skip_space(p);
            if (p->at >= p->length || p->text[p->at] != '"') return fail(p, "a missing key");
            if (!parse_string(p, JSON_STRING)) return 0;
            --open->count; /* key and value are one member */
            skip_space(p);
            if (p->at >= p->length || p->text[p->at] != ':') return fail(p, "a missing colon");
            ++p->at;
            if (!parse_value(p)) return 0;
        } else if (!parse_value(p)) {
            return 0;
        }
    }
    skip_space(p);
    return p->at == p->length ? 1 : fail(p, "text after the document");
}

int json_parse(json_doc* doc, const char* text, size_t length, char* error, size_t error_size)
{
    memset(doc, 0, sizeof *doc);
    if (length >= UINT32_MAX) {
        snprintf(error, error_size, "JSON of %zu bytes is beyond 4 GiB", length);
        return 0;
    }
    doc->text = text;
    doc->values = malloc((length + 1) * sizeof *doc->values); /* a value takes a byte at least */
    if (!doc->values) {
        snprintf(error, error_size, "no memory for %zu bytes of JSON", length);
        return 0;
    }
    parser p = {text, length, 0, doc, {0}, 0, error, error_size};
    if (parse_document(&p)) return 1;
    json_free(doc);
    return 0;
}

void json_free(json_doc* doc)
{
    free(doc->values);
    doc->values = NULL;
    doc->value_count = 0;
}

uint32_t json_member(const json_doc* doc, uint32_t object, const char* key)
{
    if (object == JSON_NONE || doc->values[object].type != JSON_OBJECT) return JSON_NONE;
    size_t n = strlen(key);
    uint32_t at = object + 1;
    for (uint32_t m = 0; m < doc->values[object].count; ++m) {
        const json_value* k = &doc->values[at];
        if (k->length == n && memcmp(doc->text + k->start, key, n) == 0) return at + 1;
        at += 1 + doc->values[at + 1].span;
    }
    return JSON_NONE;
}

uint32_t json_item(const json_doc* doc, uint32_t array, uint32_t index)
{
    if (array == JSON_NONE || doc->values[array].type != JSON_ARRAY || index >= doc->values[array].count)
        return JSON_NONE;
    uint32_t at = array + 1;
    for (uint32_t i = 0; i < index; ++i) at += doc->values[at].span;
    return at;
}

int json_items(const json_doc* doc, uint32_t array, uint32_t* out, uint32_t count)
{
    if (array == JSON_NONE || doc->values[array].type != JSON_ARRAY) return 0;
    uint32_t at = array + 1;
    for (uint32_t i = 0; i < count && i < doc->values[array].count; ++i) {
        out[i] = at;
        at += doc->values[at].span;
    }
    return 1;
}

uint32_t json_count(const json_doc* doc, uint32_t value, json_type type)
{
    return value != JSON_NONE && doc->values[value].type == type ? doc->values[value].count : 0;
}

int json_number(const json_doc* doc, uint32_t value, double* out)
{
    if (value == JSON_NONE) return 1;
    const json_value* v = &doc->values[value];
    if (v->type != JSON_NUMBER) return 0;
    char text[64];
    if (v->length >= sizeof text) return 0;
    memcpy(text, doc->text + v->start, v->length);
    text[v->length] = '\0';
    *out = strtod(text, NULL);
    return 1;
}

int json_uint(const json_doc* doc, uint32_t value, uint64_t max, uint64_t* out)
{
    double d = (double)*out;
    if (!json_number(doc, value, &d)) return 0;
    if (!(d >= 0 && d <= (double)max) || d != floor(d)) return 0;
    *out = (uint64_t)d;
    return 1;
}

int json_string_is(const json_doc* doc, uint32_t value, const char* text)
{
    if (value == JSON_NONE || doc->values[value].type != JSON_STRING) return 0;
    size_t n = strlen(text);
    return doc->values[value].length == n && memcmp(doc->text + doc->values[value].start, text, n) == 0;
}
