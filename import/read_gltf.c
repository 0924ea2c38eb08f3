/* glTF 2.0 reader (readers.h): JSON (.gltf) or binary (.glb). What it takes:
 * the triangles of every mesh primitive (modes 4, 5 and 6; points and lines
 * are dropped and counted) under the node transforms of the default scene
 * (matrix or translation, rotation, scale), their POSITION (float VEC3) and
 * indices (unsigned byte, short or int) through accessors, buffer views and
 * buffers (the GLB's BIN chunk, base64 data URIs, or files beside a .gltf
 * read from a file). Declined with a message: glTF 1.0, sparse accessors,
 * compressed or quantized geometry that the file requires (Draco, meshopt,
 * KHR_mesh_quantization in extensionsRequired; where only used, the plain
 * accessors that the file must then carry are read).
 *
 * Bounds: the JSON takes one parser value per byte at most; every range an
 * accessor names is checked against its view and buffer before it is read;
 * meshes and nodes are parsed once however often instanced; node graphs are
 * walked to GLTF_MAX_DEPTH deep and GLTF_MAX_STEPS node visits and primitive
 * instances, and what instancing makes is bounded by the soup's budget. */
#include "json.h"
#include "readers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GLTF_MAX_DEPTH 256u
#define GLTF_MAX_STEPS (1u << 21) /* node visits and primitive instances */
#define GLB_JSON 0x4E4F534Au
#define GLB_BIN 0x004E4942u

typedef struct gltf_buffer {
    const unsigned char* data; /* NULL until loaded */
    unsigned char* owned;
    uint64_t length;
} gltf_buffer;

typedef struct accessor {
    const unsigned char* data; /* NULL: every element is zero (no buffer view) */
    uint64_t stride, count;
    uint64_t component_type;
} accessor;

typedef struct gltf {
    json_doc doc;
    import_soup* soup;
    const char* dir;
    uint64_t max_bytes, external_bytes;
    const unsigned char* bin; /* the GLB's BIN chunk */
    uint64_t bin_length;
    uint32_t *buffers, *views, *accessors, *meshes, *nodes; /* the values of each array's items */
    uint32_t buffer_count, view_count, accessor_count, mesh_count, node_count;
    gltf_buffer* loaded;
    struct mesh_cache* mesh_cache; /* meshes_count, parsed on first use */
    struct node_cache* node_cache; /* node_count, the same */
    uint32_t steps, instances;
} gltf;

static int fail(gltf* g, const char* what) { return soup_fail(g->soup, RTCD_ERROR_INVALID_ARGUMENT, "corrupt glTF: %s", what); }

static uint32_t le32(const unsigned char* p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The items of the top-level array `key` (absent: none). */
static int table(gltf* g, const char* key, uint32_t** items, uint32_t* count)
{
    uint32_t array = json_member(&g->doc, 0, key);
    if (array != JSON_NONE && g->doc.values[array].type != JSON_ARRAY) return fail(g, "a top-level entry that is not an array");
    *count = json_count(&g->doc, array, JSON_ARRAY);
    *items = malloc(((size_t)*count + 1) * sizeof **items);
    if (!*items) return soup_fail(g->soup, RTCD_ERROR_OUT_OF_MEMORY, "glTF: no memory for its tables");
    json_items(&g->doc, array, *items, *count);
    return 1;
}

/* An index into a table of table_size, from member `key` of `object`; JSON_NONE when absent. */
static int reference(gltf* g, uint32_t object, const char* key, uint32_t table_size, uint32_t* out)
{
    uint32_t v = json_member(&g->doc, object, key);
    *out = JSON_NONE;
    if (v == JSON_NONE) return 1;
    uint64_t index = 0;
    if (!json_uint(&g->doc, v, UINT32_MAX, &index) || index >= table_size) return fail(g, "an index out of range");
    *out = (uint32_t)index;
    return 1;
}

/* ---- buffers ---- */

static int base64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static int decode_base64(gltf* g, const unsigned char* text, size_t n, gltf_buffer* b)
{
    while (n && text[n - 1] == '=') --n;
    b->owned = malloc(n * 3 / 4 + 1);
    if (!b->owned) return soup_fail(g->soup, RTCD_ERROR_OUT_OF_MEMORY, "glTF: no memory for a buffer");
    uint64_t out = 0;
    uint32_t bits = 0, held = 0;
    for (size_t i = 0; i < n; ++i) {
        int v = base64_value(text[i]);
        if (v < 0) return fail(g, "a data URI that is not base64");
        bits = bits << 6 | (uint32_t)v;
        held += 6;
        if (held >= 8) {
            held -= 8;
            b->owned[out++] = (unsigned char)(bits >> held);
            bits &= (1u << held) - 1;
        }
    }
    b->data = b->owned;
    if (out < b->length) return fail(g, "a data URI shorter than its buffer's byteLength");
    return 1;
}

static int hex_value(unsigned char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

/* A buffer in a file beside the .gltf: a relative path, percent-decoded. */
static int read_external(gltf* g, const unsigned char* uri, size_t n, gltf_buffer* b)
{
    if (!g->dir) return fail(g, "a buffer in another file, which cannot be found from memory");
    size_t dir_len = strlen(g->dir);
    char* path = malloc(dir_len + n + 2);
    if (!path) return soup_fail(g->soup, RTCD_ERROR_OUT_OF_MEMORY, "glTF: no memory for a buffer's path");
    memcpy(path, g->dir, dir_len);
    size_t at = dir_len;
    for (size_t i = 0; i < n; ++i) {
        int c = uri[i];
        if (c == '%' && i + 2 < n && hex_value(uri[i + 1]) >= 0 && hex_value(uri[i + 2]) >= 0) {
            c = hex_value(uri[i + 1]) * 16 + hex_value(uri[i + 2]);
            i += 2;
        }
        path[at++] = (char)c;
        if (c == '\0' || c == '\\') break;
    }
    path[at] = '\0';
    const char* rel = path + dir_len;
    int ok = 0;
    struct stat st;
    FILE* f = NULL;
    if (at != dir_len + strlen(rel) || rel[0] == '/' || strstr(rel, "..") || strchr(rel, ':'))
        fail(g, "a buffer URI that is absolute, climbs folders or is not a file name");
    else if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) /* a FIFO would block */
        fail(g, "a buffer file that is missing or not a regular file");
    else if ((uint64_t)st.st_size < b->length)
        fail(g, "a buffer file shorter than its byteLength");
    else if (g->max_bytes && (g->external_bytes += b->length) > g->max_bytes)
        soup_fail(g->soup, RTCD_ERROR_MESH_TOO_LARGE, "glTF: its buffer files exceed max_file_bytes");
    else if (!(b->owned = malloc(b->length + 1)))
        soup_fail(g->soup, RTCD_ERROR_OUT_OF_MEMORY, "glTF: no memory for a buffer of %llu bytes", (unsigned long long)b->length);
    else if (!(f = fopen(path, "rb")) || fread(b->owned, 1, b->length, f) != b->length)
        fail(g, "a buffer file that cannot be read");
    else
        ok = 1;
    if (f) fclose(f);
    free(path);
    b->data = b->owned;
    return ok;
}

static int load_buffer(gltf* g, uint32_t index, gltf_buffer** out)
{
    gltf_buffer* b = &g->loaded[index];
    *out = b;
    if (b->data) return 1;
    uint32_t buffer = g->buffers[index];
    uint64_t length = 0;
    if (!json_uint(&g->doc, json_member(&g->doc, buffer, "byteLength"), UINT32_MAX, &length))
        return fail(g, "a buffer without a byteLength");
    b->length = length;
    uint32_t uri = json_member(&g->doc, buffer, "uri");
    if (uri == JSON_NONE) {
        if (index != 0 || !g->bin || g->bin_length < length) return fail(g, "a buffer without data");
        b->data = g->bin;
        return 1;
    }
    if (g->doc.values[uri].type != JSON_STRING) return fail(g, "a buffer URI that is not a string");
    const unsigned char* text = (const unsigned char*)g->doc.text + g->doc.values[uri].start;
    size_t n = g->doc.values[uri].length;
    if (n >= 5 && memcmp(text, "data:", 5) == 0) {
        const unsigned char* comma = memchr(text, ',', n);
        if (!comma || comma - text < 12 || memcmp(comma - 7, ";base64", 7) != 0) return fail(g, "a data URI that is not base64");
        return decode_base64(g, comma + 1, n - (size_t)(comma + 1 - text), b);
    }
    return read_external(g, text, n, b);
}

/* ---- accessors ---- */

static unsigned component_bytes(uint64_t type)
{
    switch (type) {
    case 5120: case 5121: return 1;
    case 5122: case 5123: return 2;
    case 5125: case 5126: return 4;
    }
    return 0;
}

/* Accessor `index`, which must be of `type` ("VEC3", "SCALAR"), its whole range checked. */
static int get_accessor(gltf* g, uint32_t index, const char* type, unsigned components, accessor* a)
{
    uint32_t acc = g->accessors[index], view_index;
    uint64_t offset = 0;
    memset(a, 0, sizeof *a);
    if (!json_string_is(&g->doc, json_member(&g->doc, acc, "type"), type)) return fail(g, "an accessor of the wrong type");
    if (json_member(&g->doc, acc, "sparse") != JSON_NONE)
        return soup_fail(g->soup, RTCD_ERROR_INVALID_ARGUMENT, "glTF: sparse accessors are not read");
    if (!json_uint(&g->doc, json_member(&g->doc, acc, "componentType"), UINT32_MAX, &a->component_type) ||
        !component_bytes(a->component_type) ||
        !json_uint(&g->doc, json_member(&g->doc, acc, "count"), UINT32_MAX, &a->count) ||
        !json_uint(&g->doc, json_member(&g->doc, acc, "byteOffset"), UINT32_MAX, &offset) ||
        !reference(g, acc, "bufferView", g->view_count, &view_index))
        return fail(g, "an accessor without a valid componentType, count, byteOffset or bufferView");
    uint64_t element = (uint64_t)component_bytes(a->component_type) * components;
    if (view_index == JSON_NONE) return 1; /* zeros */
    uint32_t view = g->views[view_index], buffer_index;
    uint64_t view_offset = 0, view_length = 0;
    a->stride = element;
    if (!reference(g, view, "buffer", g->buffer_count, &buffer_index) || buffer_index == JSON_NONE ||
        !json_uint(&g->doc, json_member(&g->doc, view, "byteOffset"), UINT32_MAX, &view_offset) ||
        !json_uint(&g->doc, json_member(&g->doc, view, "byteLength"), UINT32_MAX, &view_length) ||
        !json_uint(&g->doc, json_member(&g->doc, view, "byteStride"), 252, &a->stride) || a->stride < element)
        return fail(g, "a buffer view without a valid buffer, byteOffset, byteLength or byteStride");
    gltf_buffer* b;
    if (!load_buffer(g, buffer_index, &b)) return 0;
    if (view_offset + view_length > b->length) return fail(g, "a buffer view beyond its buffer");
    if (a->count == 0) return 1; /* nothing to read: no pointer into (or past) the view */
    if (offset + a->stride * (a->count - 1) + element > view_length) return fail(g, "an accessor beyond its buffer view");
    a->data = b->data + view_offset + offset;
    return 1;
}

static double read_float(const accessor* a, uint64_t i, int k)
{
    if (!a->data) return 0.0;
    uint32_t u = le32(a->data + a->stride * i + 4 * (unsigned)k);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t read_index(const accessor* a, uint64_t i)
{
    if (!a->data) return 0;
    const unsigned char* p = a->data + a->stride * i;
    switch (a->component_type) {
    case 5121: return p[0];
    case 5123: return p[0] | (uint32_t)p[1] << 8;
    default: return le32(p);
    }
}

/* ---- meshes and nodes, each parsed once (instances reuse them) ---- */

typedef struct primitive {
    uint64_t mode;
    int has_position, has_indices;
    accessor position, indices;
} primitive;

typedef struct mesh_cache {
    int parsed;
    uint32_t count;
    primitive* primitives;
} mesh_cache;

typedef struct node_cache {
    int parsed;
    affine local;
    uint32_t mesh;     /* JSON_NONE: none */
    uint32_t children; /* the JSON array, JSON_NONE: none */
} node_cache;

static int parse_primitive(gltf* g, uint32_t value, primitive* p)
{
    uint32_t position, indices;
    uint32_t attributes = json_member(&g->doc, value, "attributes");
    p->mode = 4;
    if (!json_uint(&g->doc, json_member(&g->doc, value, "mode"), 6, &p->mode) ||
        !reference(g, attributes, "POSITION", g->accessor_count, &position) ||
        !reference(g, value, "indices", g->accessor_count, &indices))
        return fail(g, "a primitive with a bad mode, POSITION or indices");
    p->has_position = position != JSON_NONE;
    p->has_indices = indices != JSON_NONE;
    if (!p->has_position) return 1; /* nothing to place */
    if (!get_accessor(g, position, "VEC3", 3, &p->position)) return 0;
    if (p->position.component_type != 5126)
        return soup_fail(g->soup, RTCD_ERROR_INVALID_ARGUMENT, "glTF: POSITION of a type other than float is not read");
    if (p->has_indices) {
        if (!get_accessor(g, indices, "SCALAR", 1, &p->indices)) return 0;
        uint64_t t = p->indices.component_type;
        if (t != 5121 && t != 5123 && t != 5125) return fail(g, "indices of a type other than unsigned byte, short or int");
    }
    return 1;
}

static int add_primitive(gltf* g, const primitive* p, const affine* xf, int mirror)
{
    if (!p->has_position) return 1;
    const accessor* pos = &p->position;
    uint64_t n = p->has_indices ? p->indices.count : pos->count;
    if (p->mode < 4) { /* points, lines, line loop, line strip */
        g->soup->dropped += p->mode == 1 ? n / 2 : p->mode == 3 ? (n ? n - 1 : 0) : n;
        return 1;
    }
    uint32_t base = g->soup->vertex_count;
    if (!soup_reserve(g->soup, pos->count, n)) return 0;
    for (uint64_t i = 0; i < pos->count; ++i)
        if (!soup_vertex(g->soup, xf, read_float(pos, i, 0), read_float(pos, i, 1), read_float(pos, i, 2))) return 0;
    uint64_t triangles = p->mode == 4 ? n / 3 : n >= 3 ? n - 2 : 0;
    for (uint64_t t = 0; t < triangles; ++t) {
        uint64_t k[3];
        if (p->mode == 4) k[0] = 3 * t, k[1] = 3 * t + 1, k[2] = 3 * t + 2;
        else if (p->mode == 5) k[0] = t + (t & 1), k[1] = t + 1 - (t & 1), k[2] = t + 2; /* strips alternate */
        else k[0] = 0, k[1] = t + 1, k[2] = t + 2;
        uint32_t tri[3];
        for (int c = 0; c < 3; ++c) tri[c] = p->has_indices ? read_index(&p->indices, k[c]) : (uint32_t)k[c];
        if (!soup_face(g->soup, base, (uint32_t)pos->count, tri, 3, mirror)) return 0;
    }
    return 1;
}

/* One step of the walk: a node visit or a primitive instance; bounded, so
 * that instances of meshes that make nothing cannot take unbounded time. */
static int step(gltf* g)
{
    return ++g->steps <= GLTF_MAX_STEPS ? 1 : fail(g, "a node hierarchy too deep or too large (a cycle?)");
}

static int add_mesh(gltf* g, uint32_t index, const affine* xf)
{
    mesh_cache* m = &g->mesh_cache[index];
    if (!m->parsed) {
        uint32_t primitives = json_member(&g->doc, g->meshes[index], "primitives");
        m->count = json_count(&g->doc, primitives, JSON_ARRAY);
        m->primitives = calloc((size_t)m->count + 1, sizeof *m->primitives);
        if (!m->primitives) return soup_fail(g->soup, RTCD_ERROR_OUT_OF_MEMORY, "glTF: no memory for a mesh");
        m->parsed = 1;
        for (uint32_t i = 0, at = primitives + 1; i < m->count; ++i, at += g->doc.values[at].span)
            if (!parse_primitive(g, at, &m->primitives[i])) return 0;
    }
    int mirror = affine_det(xf) < 0.0;
    ++g->instances;
    for (uint32_t i = 0; i < m->count; ++i)
        if (!step(g) || !add_primitive(g, &m->primitives[i], xf, mirror)) return 0;
    return 1;
}

/* A node's own transform: its matrix (column-major), or T * R * S. */
static int node_transform(gltf* g, uint32_t node, affine* out)
{
    *out = affine_identity();
    double m[16];
    uint32_t matrix = json_member(&g->doc, node, "matrix");
    if (matrix != JSON_NONE) {
        if (json_count(&g->doc, matrix, JSON_ARRAY) != 16) return fail(g, "a matrix of other than 16 numbers");
        for (uint32_t i = 0, at = matrix + 1; i < 16; ++i, ++at)
            if (!json_number(&g->doc, at, &m[i])) return fail(g, "a matrix of other than 16 numbers");
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c) out->m[4 * r + c] = m[4 * c + r];
        return 1;
    }
    static const char* const keys[3] = {"translation", "rotation", "scale"};
    double trs[3][4] = {{0, 0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1, 0}};
    for (int k = 0; k < 3; ++k) {
        uint32_t v = json_member(&g->doc, node, keys[k]);
        if (v == JSON_NONE) continue;
        uint32_t size = k == 1 ? 4 : 3;
        if (json_count(&g->doc, v, JSON_ARRAY) != size) return fail(g, "a translation, rotation or scale of the wrong size");
        for (uint32_t i = 0; i < size; ++i)
            if (!json_number(&g->doc, v + 1 + i, &trs[k][i])) return fail(g, "a translation, rotation or scale of the wrong size");
    }
    double x = trs[1][0], y = trs[1][1], z = trs[1][2], w = trs[1][3];
    double len = sqrt(x * x + y * y + z * z + w * w);
    if (len > 0) x /= len, y /= len, z /= len, w /= len;
    const double rot[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                           2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                           2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) out->m[4 * r + c] = rot[3 * r + c] * trs[2][c];
        out->m[4 * r + 3] = trs[0][r];
    }
    return 1;
}

static int walk_node(gltf* g, uint32_t index, const affine* parent, unsigned depth)
{
    if (depth > GLTF_MAX_DEPTH || !step(g)) return fail(g, "a node hierarchy too deep or too large (a cycle?)");
    node_cache* n = &g->node_cache[index];
    if (!n->parsed) {
        uint32_t node = g->nodes[index];
        if (!node_transform(g, node, &n->local) || !reference(g, node, "mesh", g->mesh_count, &n->mesh)) return 0;
        n->children = json_member(&g->doc, node, "children");
        n->parsed = 1;
    }
    affine world = affine_mul(parent, &n->local);
    if (n->mesh != JSON_NONE && !add_mesh(g, n->mesh, &world)) return 0;
    uint32_t count = json_count(&g->doc, n->children, JSON_ARRAY);
    for (uint32_t i = 0, at = n->children + 1; i < count; ++i, at += g->doc.values[at].span) {
        uint64_t child = 0;
        if (!json_uint(&g->doc, at, g->node_count ? g->node_count - 1 : 0, &child) || !g->node_count)
            return fail(g, "a child index out of range");
        if (!walk_node(g, (uint32_t)child, &world, depth + 1)) return 0;
    }
    return 1;
}

/* The default scene's nodes; when no node places a mesh, every mesh as stored. */
static int walk_scene(gltf* g)
{
    uint32_t scenes = json_member(&g->doc, 0, "scenes"), scene_index;
    if (!reference(g, 0, "scene", json_count(&g->doc, scenes, JSON_ARRAY), &scene_index)) return 0;
    uint32_t scene = json_item(&g->doc, scenes, scene_index == JSON_NONE ? 0 : scene_index);
    uint32_t roots = json_member(&g->doc, scene, "nodes");
    uint32_t count = json_count(&g->doc, roots, JSON_ARRAY);
    affine identity = affine_identity();
    for (uint32_t i = 0, at = roots + 1; i < count; ++i, at += g->doc.values[at].span) {
        uint64_t root = 0;
        if (!json_uint(&g->doc, at, g->node_count ? g->node_count - 1 : 0, &root) || !g->node_count)
            return fail(g, "a scene's node index out of range");
        if (!walk_node(g, (uint32_t)root, &identity, 0)) return 0;
    }
    for (uint32_t m = 0; g->instances == 0 && m < g->mesh_count; ++m)
        if (!add_mesh(g, m, &identity)) return 0;
    return 1;
}

/* ---- the document ---- */

static int check_asset(gltf* g)
{
    uint32_t version = json_member(&g->doc, json_member(&g->doc, 0, "asset"), "version");
    if (version == JSON_NONE || g->doc.values[version].type != JSON_STRING) return fail(g, "no asset version");
    const json_value* v = &g->doc.values[version];
    if (v->length < 1 || g->doc.text[v->start] != '2')
        return soup_fail(g->soup, RTCD_ERROR_INVALID_ARGUMENT, "glTF %.*s is not read (rtcd reads glTF 2.0)",
                         (int)(v->length < 16 ? v->length : 16), g->doc.text + v->start);
    static const char* const unread[] = {"KHR_draco_mesh_compression", "KHR_mesh_quantization", "EXT_meshopt_compression"};
    uint32_t required = json_member(&g->doc, 0, "extensionsRequired");
    uint32_t count = json_count(&g->doc, required, JSON_ARRAY);
    for (uint32_t i = 0, at = required + 1; i < count; ++i, at += g->doc.values[at].span)
        for (size_t k = 0; k < sizeof unread / sizeof unread[0]; ++k)
            if (json_string_is(&g->doc, at, unread[k]))
                return soup_fail(g->soup, RTCD_ERROR_INVALID_ARGUMENT, "glTF: extension %s is not read", unread[k]);
    return 1;
}

static int read_gltf(gltf* g, const unsigned char* data, size_t size, int binary)
{
    const unsigned char* json = data;
    size_t json_size = size;
    if (binary) {
        if (size < 20 || memcmp(data, "glTF", 4) != 0) return fail(g, "a GLB without its 20-byte header");
        if (le32(data + 4) != 2)
            return soup_fail(g->soup, RTCD_ERROR_INVALID_ARGUMENT, "GLB version %u is not read (rtcd reads glTF 2.0)", le32(data + 4));
        uint64_t length = le32(data + 8), json_length = le32(data + 12);
        if (length > size || length < 20 || json_length > length - 20 || le32(data + 16) != GLB_JSON)
            return fail(g, "GLB chunk lengths beyond the data");
        json = data + 20;
        json_size = json_length;
        uint64_t at = 20 + ((json_length + 3) & ~3ull);
        if (at + 8 <= length && le32(data + at + 4) == GLB_BIN) {
            g->bin_length = le32(data + at);
            if (g->bin_length > length - at - 8) return fail(g, "GLB chunk lengths beyond the data");
            g->bin = data + at + 8;
        }
    } else if (size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        json += 3;
        json_size -= 3;
    }
    char error[128];
    if (!json_parse(&g->doc, (const char*)json, json_size, error, sizeof error))
        return soup_fail(g->soup, RTCD_ERROR_INVALID_ARGUMENT, "corrupt glTF: %s", error);
    if (g->doc.values[0].type != JSON_OBJECT) return fail(g, "the document is not an object");
    if (!check_asset(g) || !table(g, "buffers", &g->buffers, &g->buffer_count) ||
        !table(g, "bufferViews", &g->views, &g->view_count) ||
        !table(g, "accessors", &g->accessors, &g->accessor_count) ||
        !table(g, "meshes", &g->meshes, &g->mesh_count) || !table(g, "nodes", &g->nodes, &g->node_count))
        return 0;
    g->loaded = calloc((size_t)g->buffer_count + 1, sizeof *g->loaded);
    g->mesh_cache = calloc((size_t)g->mesh_count + 1, sizeof *g->mesh_cache);
    g->node_cache = calloc((size_t)g->node_count + 1, sizeof *g->node_cache);
    if (!g->loaded || !g->mesh_cache || !g->node_cache)
        return soup_fail(g->soup, RTCD_ERROR_OUT_OF_MEMORY, "glTF: no memory for its tables");
    return walk_scene(g);
}

int rtcd_read_gltf(const unsigned char* data, size_t size, int binary, const char* dir, uint64_t max_bytes,
                   import_soup* soup)
{
    gltf g;
    memset(&g, 0, sizeof g);
    g.soup = soup;
    g.dir = dir;
    g.max_bytes = max_bytes;
    int ok = read_gltf(&g, data, size, binary);
    if (g.loaded)
        for (uint32_t i = 0; i < g.buffer_count; ++i) free(g.loaded[i].owned);
    free(g.loaded);
    if (g.mesh_cache)
        for (uint32_t i = 0; i < g.mesh_count; ++i) free(g.mesh_cache[i].primitives);
    free(g.mesh_cache);
    free(g.node_cache);
    free(g.buffers);
    free(g.views);
    free(g.accessors);
    free(g.meshes);
    free(g.nodes);
    json_free(&g.doc);
    return ok;
}
