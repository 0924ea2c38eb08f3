/* Private to rtcd_import: plausibility of the element counts that a file's
 * header claims, checked before assimp sees the file. assimp trusts these
 * counts and reserves memory for them (a 300-byte OFF claiming 3.5e12
 * vertices takes 15 GB and a minute), so an absurd or truncated header is
 * refused here, from the first bytes and the file's size. */
#ifndef RTCD_IMPORT_HEADER_CHECK_H
#define RTCD_IMPORT_HEADER_CHECK_H

#include <rtcd/rtcd_common.h>

#include <stddef.h>
#include <stdint.h>

/* rtcd meshes hold at most 2^26 triangles (and vertices); a triangle soup of
 * that many triangles has three times as many vertices. */
#define RTCD_IMPORT_MAX_TRIANGLES (1u << 26)
#define RTCD_IMPORT_MAX_VERTICES (3u << 26)

/* head: the first head_size bytes of the data (all of it when it is short),
 * total_size: the whole size, ext: the lower-case extension without the dot
 * ("" when unknown). Formats are recognised by their content (OFF, PLY) or by
 * the extension (binary STL, which has no magic). Returns RTCD_OK (also for
 * formats it does not know), RTCD_ERROR_MESH_TOO_LARGE (counts beyond
 * rtcd's limits) or RTCD_ERROR_INVALID_ARGUMENT (counts the data cannot
 * hold: truncated or corrupt), with a message in `message`. */
rtcd_error rtcd_import_check_header(const unsigned char* head, size_t head_size, uint64_t total_size,
                                    const char* ext, char* message, size_t message_size);

#endif
