/* Private to rtcd_import: rtcd's own readers of the formats whose assimp 5.2
 * loaders hang, crash or take corrupt data (PLY, OFF, glTF 2.0 and GLB;
 * tests/fuzz/README.md lists what assimp does with them). Each reads the
 * whole of `data` into the soup (soup.h), in time and memory proportional to
 * `size`, and returns 1, or 0 with the soup's error and message set:
 * RTCD_ERROR_INVALID_ARGUMENT for corrupt or truncated data (an index beyond
 * the vertices included), RTCD_ERROR_MESH_TOO_LARGE beyond the limits,
 * RTCD_ERROR_OUT_OF_MEMORY. */
#ifndef RTCD_IMPORT_READERS_H
#define RTCD_IMPORT_READERS_H

#include "soup.h"

typedef enum import_format { FORMAT_ASSIMP, FORMAT_PLY, FORMAT_OFF, FORMAT_GLTF, FORMAT_GLB } import_format;

/* Which reader takes the data: by its content first (a PLY or OFF header, a
 * GLB magic, a glTF's JSON), else by the lower-case extension `ext`, else
 * assimp. Content wins, so that data of these formats never reaches assimp
 * under another name. `assimp_ext`: assimp has a loader for `ext`; when it
 * has none, assimp would guess from the content, and anything naming a glTF
 * "asset" is taken here instead. */
import_format rtcd_import_sniff(const unsigned char* head, size_t head_size, const char* ext, int assimp_ext);

int rtcd_read_ply(const unsigned char* data, size_t size, import_soup* soup);
int rtcd_read_off(const unsigned char* data, size_t size, import_soup* soup);
/* glTF 2.0 JSON (gltf) or binary (glb). `dir`: the folder of the file with
 * its '/', for buffers in files beside it (at most max_bytes of them in all,
 * 0: no limit); NULL from memory (embedded data only). */
int rtcd_read_gltf(const unsigned char* data, size_t size, int binary, const char* dir, uint64_t max_bytes,
                   import_soup* soup);

#endif
