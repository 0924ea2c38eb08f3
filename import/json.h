/* Private to rtcd_import: a strict JSON parser for the glTF reader. The text
 * becomes a flat array of values in document order (a container is followed
 * by its contents; an object's member is its key, a string, then its value),
 * so that the values need one allocation, at most one per byte of text, and
 * walking them needs no recursion. Nesting deeper than JSON_MAX_DEPTH is
 * refused, as is anything that is not JSON (RFC 8259). */
#ifndef RTCD_IMPORT_JSON_H
#define RTCD_IMPORT_JSON_H

#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 64u
#define JSON_NONE UINT32_MAX /* "no such value" */

typedef enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value {
    json_type type;
    uint32_t start, length; /* the text of a number, or of a string without its quotes (escapes kept) */
    uint32_t count;         /* an array's items, an object's members */
    uint32_t span;          /* values from this one to its next sibling */
} json_value;

typedef struct json_doc {
    const char* text;
    json_value* values;
    uint32_t value_count;
} json_doc;

/* 1 on success; else 0 with `error` (at least 64 bytes) saying where. */
int json_parse(json_doc* doc, const char* text, size_t length, char* error, size_t error_size);
void json_free(json_doc* doc);

/* The member `key` of object `object`, JSON_NONE when absent (or not an object). */
uint32_t json_member(const json_doc* doc, uint32_t object, const char* key);
/* Item `index` of array `array`, in time linear in index; JSON_NONE when absent. */
uint32_t json_item(const json_doc* doc, uint32_t array, uint32_t index);
/* The items of an array, in order, into `out` (count entries); 0 when not an array. */
int json_items(const json_doc* doc, uint32_t array, uint32_t* out, uint32_t count);
uint32_t json_count(const json_doc* doc, uint32_t value, json_type type); /* 0 unless of that type */
/* A number (1 on success; also when the value is absent: *out keeps the default). */
int json_number(const json_doc* doc, uint32_t value, double* out);
/* A whole number in [0, max]; absent: *out keeps the default. */
int json_uint(const json_doc* doc, uint32_t value, uint64_t max, uint64_t* out);
int json_string_is(const json_doc* doc, uint32_t value, const char* text);

#endif
