/* Private to rtcd_import: bounded scanning of text formats (PLY's header and
 * ASCII body, OFF). Nothing here reads past `end` or needs a terminating
 * NUL; every call advances, so loops over them end. */
#ifndef RTCD_IMPORT_TEXT_SCAN_H
#define RTCD_IMPORT_TEXT_SCAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct text_scan {
    const unsigned char* p;
    const unsigned char* end;
} text_scan;

/* The next run of non-space bytes, skipping spaces and newlines; 0 at the end. */
int scan_token(text_scan* s, const unsigned char** token, size_t* length);
/* The next line without its "\n" or "\r\n"; 0 at the end. */
int scan_line(text_scan* s, const unsigned char** line, size_t* length);
int token_is(const unsigned char* token, size_t length, const char* word);
/* Whole-token numbers (1 on success): a double (finite or not), a decimal
 * integer with an optional sign that fits int64. */
int parse_double(const unsigned char* token, size_t length, double* value);
int parse_int(const unsigned char* token, size_t length, int64_t* value);

#endif
