/* rtcd_import against hostile files (issue 27): rtcd's own PLY, OFF and
 * glTF/GLB readers read good files of every variant to the right solid, never
 * hang or crash on bytes made to break them (random data after a valid
 * header, headers that never end, counts far beyond the data, cycles and
 * explosions of nodes), call every face index beyond the vertices corrupt
 * (RTCD_ERROR_INVALID_ARGUMENT) in every format, and triangulate huge faces
 * in linear time (convex) or refuse them within a bounded time. */
#include "test_util.h"

#include <rtcd/rtcd_import.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* [-1,1]^3, counter-clockwise from outside: volume 8. */
static const float cube_v[] = {-1, -1, -1, 1, -1, -1, 1, 1, -1, -1, 1, -1, -1, -1, 1, 1, -1, 1, 1, 1, 1, -1, 1, 1};
static const uint32_t cube_i[] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                  3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- a growing byte buffer ---- */

typedef struct bytes {
    unsigned char* p;
    size_t n, cap;
} bytes;

static void put(bytes* b, const void* data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = 2 * (b->n + n) + 256;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void puts_(bytes* b, const char* text) { put(b, text, strlen(text)); }

static void putf(bytes* b, const char* format, ...) __attribute__((format(printf, 2, 3)));
static void putf(bytes* b, const char* format, ...)
{
    char line[512];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    assert_true(n >= 0 && (size_t)n < sizeof line);
    put(b, line, (size_t)n);
}

/* A value of `size` bytes, little- or big-endian. */
static void put_value(bytes* b, const void* value, size_t size, int big)
{
    unsigned char raw[8];
    for (size_t k = 0; k < size; ++k) raw[k] = ((const unsigned char*)value)[big ? size - 1 - k : k];
    put(b, raw, size);
}

static void put_u32le(bytes* b, uint32_t v) { put_value(b, &v, 4, 0); }

/* ---- checks ---- */

static rtcd_imported* import(const void* data, size_t size, const char* hint, rtcd_error* err)
{
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = NULL;
    *err = rtcd_import_memory(&def, data, size, hint, &im);
    assert_non_null(im);
    /* The verdict and the code agree; a decline says why. */
    assert_int_equal(*err != RTCD_OK, rtcd_imported_status(im) == RTCD_IMPORT_DECLINED);
    if (*err != RTCD_OK) assert_true(strlen(rtcd_imported_error_message(im)) > 0);
    return im;
}

static void expect_volume(const bytes* b, const char* hint, double volume)
{
    rtcd_error err;
    rtcd_imported* im = import(b->p, b->n, hint, &err);
    if (err != RTCD_OK) print_error("%s: %s\n", hint, rtcd_imported_error_message(im));
    assert_int_equal(err, RTCD_OK);
    double total = 0;
    for (uint32_t i = 0; i < rtcd_imported_mesh_count(im); ++i)
        total += rtcd_mesh_mass_properties(rtcd_imported_mesh(im, i)).volume;
    assert_float_near(total, volume, 1e-4 * volume);
    rtcd_imported_release(im);
}

static void expect_error(const bytes* b, const char* hint, rtcd_error code, const char* mention)
{
    rtcd_error err;
    rtcd_imported* im = import(b->p, b->n, hint, &err);
    const char* message = rtcd_imported_error_message(im);
    if (err != code || (mention && !strstr(message, mention)))
        print_error("%s: got %s '%s', want %s mentioning '%s'\n", hint, rtcd_error_name(err), message,
                    rtcd_error_name(code), mention ? mention : "");
    assert_int_equal(err, code);
    if (mention) assert_non_null(strstr(message, mention));
    rtcd_imported_release(im);
}

/* ---- writers ---- */

/* The cube as PLY: ascii, binary_little_endian or binary_big_endian, with
 * properties and elements rtcd does not use (which it must read past). */
static void ply_cube(bytes* b, const char* format, int corrupt_index)
{
    int ascii = strcmp(format, "ascii") == 0, big = strcmp(format, "binary_big_endian") == 0;
    putf(b, "ply\nformat %s 1.0\ncomment made by test_import_hostile\n", format);
    puts_(b, "element vertex 8\nproperty float x\nproperty double y\nproperty uchar red\nproperty float z\n"
             "element material 2\nproperty list uchar float values\nproperty int id\n"
             "element face 12\nproperty list uchar int vertex_indices\nproperty list ushort short flags\n"
             "end_header\n");
    for (int i = 0; i < 8; ++i) {
        float x = cube_v[3 * i], z = cube_v[3 * i + 2];
        double y = cube_v[3 * i + 1];
        unsigned char red = (unsigned char)(30 * i);
        if (ascii) {
            putf(b, "%g %g %u %g\n", x, y, red, z);
        } else {
            put_value(b, &x, 4, big), put_value(b, &y, 8, big), put(b, &red, 1), put_value(b, &z, 4, big);
        }
    }
    for (int m = 0; m < 2; ++m) {
        unsigned char count = 2;
        float values[2] = {0.5f, 1.5f};
        int32_t id = m;
        if (ascii) {
            putf(b, "2 0.5 1.5 %d\n", m);
        } else {
            put(b, &count, 1), put_value(b, &values[0], 4, big), put_value(b, &values[1], 4, big);
            put_value(b, &id, 4, big);
        }
    }
    for (int t = 0; t < 12; ++t) {
        int32_t idx[3] = {(int32_t)cube_i[3 * t], (int32_t)cube_i[3 * t + 1], (int32_t)cube_i[3 * t + 2]};
        if (corrupt_index && t == 11) idx[2] = 9999;
        uint16_t flags_count = 1;
        int16_t flag = -7;
        if (ascii) {
            putf(b, "3 %d %d %d 1 -7\n", idx[0], idx[1], idx[2]);
        } else {
            unsigned char three = 3;
            put(b, &three, 1);
            for (int k = 0; k < 3; ++k) put_value(b, &idx[k], 4, big);
            put_value(b, &flags_count, 2, big), put_value(b, &flag, 2, big);
        }
    }
}

/* The cube as OFF with comments, the counts on the keyword's line, colours. */
static void off_cube(bytes* b, int corrupt_index)
{
    puts_(b, "# a cube\nCOFF 8 6 12\n\n");
    for (int i = 0; i < 8; ++i)
        putf(b, "%g %g %g 0.5 0.5 0.5 1 # vertex %d\n", cube_v[3 * i], cube_v[3 * i + 1], cube_v[3 * i + 2], i);
    static const uint32_t quads[] = {0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 3, 7, 6, 2, 0, 4, 7, 3, 1, 2, 6, 5};
    for (int q = 0; q < 6; ++q)
        putf(b, "4 %u %u %u %u 255 0 0\n", quads[4 * q], quads[4 * q + 1], quads[4 * q + 2],
             corrupt_index && q == 5 ? 9999u : quads[4 * q + 3]);
}

/* A GLB: the JSON chunk (padded with spaces) and a BIN chunk. */
static void glb(bytes* b, const char* json, const bytes* bin)
{
    size_t json_len = (strlen(json) + 3) & ~(size_t)3, bin_len = bin ? (bin->n + 3) & ~(size_t)3 : 0;
    puts_(b, "glTF");
    put_u32le(b, 2);
    put_u32le(b, (uint32_t)(12 + 8 + json_len + (bin ? 8 + bin_len : 0)));
    put_u32le(b, (uint32_t)json_len);
    put_u32le(b, 0x4E4F534A);
    puts_(b, json);
    for (size_t i = strlen(json); i < json_len; ++i) puts_(b, " ");
    if (bin) {
        put_u32le(b, (uint32_t)bin_len);
        put_u32le(b, 0x004E4942);
        put(b, bin->p, bin->n);
        for (size_t i = bin->n; i < bin_len; ++i) put(b, "", 1);
    }
}

/* The cube's BIN: 8 float positions (96 bytes), then 36 unsigned short indices (72 bytes). */
static void cube_bin(bytes* bin, uint16_t last_index)
{
    for (int i = 0; i < 24; ++i) put_value(bin, &cube_v[i], 4, 0);
    for (int i = 0; i < 36; ++i) {
        uint16_t v = i == 35 ? last_index : (uint16_t)cube_i[i];
        put_value(bin, &v, 2, 0);
    }
}

/* glTF JSON of one cube mesh placed by `nodes` (a JSON array) with `scene_nodes`. */
static void cube_json(char* out, size_t size, const char* nodes, const char* scene_nodes, const char* position_extra,
                      unsigned index_count)
{
    snprintf(out, size,
             "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":%s}],\"nodes\":%s,"
             "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1}]}],"
             "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":8,\"type\":\"VEC3\"%s},"
             "{\"bufferView\":1,\"componentType\":5123,\"count\":%u,\"type\":\"SCALAR\"}],"
             "\"bufferViews\":[{\"buffer\":0,\"byteLength\":96},{\"buffer\":0,\"byteOffset\":96,\"byteLength\":72}],"
             "\"buffers\":[{\"byteLength\":168}]}",
             scene_nodes, nodes, position_extra, index_count);
}

/* ---- good files of every variant ---- */

static void test_ply_variants_read(void** state)
{
    (void)state;
    static const char* const formats[] = {"ascii", "binary_little_endian", "binary_big_endian"};
    for (int f = 0; f < 3; ++f) {
        bytes b = {0};
        ply_cube(&b, formats[f], 0);
        expect_volume(&b, "ply", 8.0);
        expect_volume(&b, NULL, 8.0); /* found by its content */
        free(b.p);
    }
}

static void test_off_variants_read(void** state)
{
    (void)state;
    bytes b = {0};
    off_cube(&b, 0);
    expect_volume(&b, "off", 8.0);
    free(b.p);
    /* Counts on their own line, CRLF, no colours. */
    bytes c = {0};
    puts_(&c, "OFF\r\n# counts next\r\n8 12 0\r\n");
    for (int i = 0; i < 8; ++i) putf(&c, "%g %g %g\r\n", cube_v[3 * i], cube_v[3 * i + 1], cube_v[3 * i + 2]);
    for (int t = 0; t < 12; ++t) putf(&c, "3 %u %u %u\r\n", cube_i[3 * t], cube_i[3 * t + 1], cube_i[3 * t + 2]);
    expect_volume(&c, "off", 8.0);
    free(c.p);
}

static void test_glb_modes_and_nodes(void** state)
{
    (void)state;
    bytes bin = {0};
    cube_bin(&bin, (uint16_t)cube_i[35]);
    char json[2048];
    /* Two instances: one translated, one mirrored (scale -1 in x) and moved away. */
    cube_json(json, sizeof json, "[{\"mesh\":0,\"translation\":[0,5,0]},{\"mesh\":0,\"matrix\":[-1,0,0,0,0,1,0,0,0,0,1,0,9,0,0,1]}]",
              "[0,1]", "", 36);
    bytes b = {0};
    glb(&b, json, &bin);
    expect_volume(&b, "glb", 16.0);
    expect_volume(&b, NULL, 16.0);
    free(b.p);
    free(bin.p);
}

/* ---- class 3: corrupt indices are corrupt data in every reader ---- */

static void test_corrupt_indices_are_invalid(void** state)
{
    (void)state;
    static const char* const formats[] = {"ascii", "binary_little_endian", "binary_big_endian"};
    for (int f = 0; f < 3; ++f) {
        bytes b = {0};
        ply_cube(&b, formats[f], 1);
        expect_error(&b, "ply", RTCD_ERROR_INVALID_ARGUMENT, "9999");
        free(b.p);
    }
    bytes off = {0};
    off_cube(&off, 1);
    expect_error(&off, "off", RTCD_ERROR_INVALID_ARGUMENT, "9999");
    free(off.p);
    /* The case: a face naming vertex 9999 of 4. */
    bytes tetra = {0};
    puts_(&tetra, "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 9999\n");
    expect_error(&tetra, "off", RTCD_ERROR_INVALID_ARGUMENT, "9999");
    free(tetra.p);
    bytes negative = {0};
    puts_(&negative, "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 -1\n");
    expect_error(&negative, "off", RTCD_ERROR_INVALID_ARGUMENT, "-1");
    free(negative.p);
    bytes obj = {0};
    puts_(&obj, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 9999\n");
    expect_error(&obj, "obj", RTCD_ERROR_INVALID_ARGUMENT, "index");
    free(obj.p);
    bytes bin = {0}, b = {0};
    cube_bin(&bin, 9999);
    char json[2048];
    cube_json(json, sizeof json, "[{\"mesh\":0}]", "[0]", "", 36);
    glb(&b, json, &bin);
    expect_error(&b, "glb", RTCD_ERROR_INVALID_ARGUMENT, "9999");
    free(b.p);
    free(bin.p);
}

/* ---- class 2: no hang, no crash ---- */

/* Valid first lines, then random bytes: every import ends, with a verdict. */
static void test_random_bytes_after_valid_headers(void** state)
{
    (void)state;
    static const char* const heads[] = {
        "ply\nformat binary_little_endian 1.0\n",
        "ply\nformat binary_big_endian 1.0\nelement vertex 8\nproperty float x\nproperty float y\nproperty float z\n"
        "element face 12\nproperty list uchar int vertex_indices\nend_header\n",
        "ply\nformat binary_little_endian 1.0\nelement face 3\nproperty list uint uint vertex_indices\n"
        "element vertex 4\nproperty double x\nproperty double y\nproperty double z\nend_header\n",
        "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
        "element face 4\nproperty list uchar int vertex_indices\nend_header\n",
        "OFF\n", "OFF\n4 4 0\n", "COFF 8 12 0\n0 0 0\n",
        "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[",
        "glTF\x02\0\0\0",
    };
    static const char* const hints[] = {"ply", "ply", "ply", "ply", "off", "off", "off", "gltf", "glb"};
    test_rng rng = {2027};
    double slowest = 0;
    for (size_t h = 0; h < sizeof heads / sizeof heads[0]; ++h) {
        for (int trial = 0; trial < 60; ++trial) {
            bytes b = {0};
            put(&b, heads[h], strlen(heads[h]) + (h == 8 ? 0 : 0));
            if (h == 8) b.n = 8; /* the GLB magic and version hold NULs */
            size_t extra = (size_t)(test_rng_next(&rng) % 3000);
            for (size_t i = 0; i < extra; ++i) {
                unsigned char c = (unsigned char)test_rng_next(&rng);
                if (h >= 3 && h <= 6 && trial % 2) c = (unsigned char)"0123456789 -.\n#e"[c % 16]; /* text-like */
                put(&b, &c, 1);
            }
            rtcd_error err;
            double t0 = now_s();
            rtcd_imported_release(import(b.p, b.n, hints[h], &err));
            slowest = fmax(slowest, now_s() - t0);
            free(b.p);
        }
    }
    print_message("slowest random-tail import: %.1f ms\n", slowest * 1e3);
    assert_true(slowest < 2.0);
}

static void test_headers_that_never_end_or_lie(void** state)
{
    (void)state;
    bytes endless = {0};
    puts_(&endless, "ply\nformat binary_little_endian 1.0\n");
    for (int i = 0; i < 20000; ++i) puts_(&endless, "comment the header goes on\n");
    expect_error(&endless, "ply", RTCD_ERROR_INVALID_ARGUMENT, "end_header");
    free(endless.p);
    static const struct {
        const char* hint;
        const char* text;
        const char* mention;
    } cases[] = {
        /* An element of no properties claims 4e9 entries: nothing to read, no loop. */
        {"ply", "ply\nformat ascii 1.0\nelement junk 4000000000\nelement vertex 0\nproperty float x\nend_header\n", "no triangles"},
        {"ply", "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                "property float z\nelement face 1\nproperty list uint int vertex_indices\nend_header\n"
                "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\xff\xff\xff\xff", "ends"},
        {"ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\n0\n", "x, y or z"},
        {"ply", "ply\nformat utf8 1.0\nend_header\n", "format"},
        {"off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n1000000000 0 1 2\n", "fewer corners"},
        {"off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n", "ends before"},
        {"off", "4OFF\n3 1 0\n0 0 0 1\n1 0 0 1\n0 1 0 1\n3 0 1 2\n", "not three dimensions"},
        {"off", "OFF BINARY\n", "binary"},
        {"gltf", "{\"asset\":{\"version\":\"1.0\"}}", "glTF 2.0"},
        {"gltf", "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":4,\"uri\":\"../secret.bin\"}],"
                 "\"bufferViews\":[{\"buffer\":0,\"byteLength\":4}],\"accessors\":[{\"bufferView\":0,"
                 "\"componentType\":5126,\"count\":1,\"type\":\"VEC3\"}],\"meshes\":[{\"primitives\":"
                 "[{\"attributes\":{\"POSITION\":0}}]}]}", "from memory"},
        {"gltf", "{\"asset\":{\"version\":\"2.0\"},\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0}}]}],"
                 "\"accessors\":[{\"componentType\":5126,\"count\":3,\"type\":\"VEC3\",\"sparse\":{}}]}", "sparse"},
        {"gltf", "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"children\":[0]}]}", "cycle"},
        {"gltf", "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"mesh\":7}]} trailing", "after the document"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        bytes b = {0};
        /* Binary cases hold NULs: their length is the literal's. */
        size_t n = strlen(cases[i].text);
        if (i == 1) n = strlen(cases[i].text) + 40;
        put(&b, cases[i].text, n);
        expect_error(&b, cases[i].hint, RTCD_ERROR_INVALID_ARGUMENT, cases[i].mention);
        free(b.p);
    }
}

static void test_gltf_structure_attacks(void** state)
{
    (void)state;
    bytes bin = {0};
    cube_bin(&bin, (uint16_t)cube_i[35]);
    char json[4096];
    /* An accessor that claims more than its view holds. */
    cube_json(json, sizeof json, "[{\"mesh\":0}]", "[0]", "", 3600);
    bytes b = {0};
    glb(&b, json, &bin);
    expect_error(&b, "glb", RTCD_ERROR_INVALID_ARGUMENT, "beyond its buffer view");
    /* A GLB whose chunk claims 4 GB (assimp 5.2 allocates it). */
    b.p[12] = b.p[13] = b.p[14] = b.p[15] = 0xff;
    expect_error(&b, "glb", RTCD_ERROR_INVALID_ARGUMENT, "beyond the data");
    free(b.p);
    /* JSON nested 100 000 deep. */
    bytes deep = {0};
    for (int i = 0; i < 100000; ++i) puts_(&deep, "[");
    expect_error(&deep, "gltf", RTCD_ERROR_INVALID_ARGUMENT, "too deep");
    free(deep.p);
    /* Instancing that doubles at each of 24 levels: 2^24 cubes from 2 kB. */
    char nodes[2048];
    size_t at = 0;
    at += (size_t)snprintf(nodes + at, sizeof nodes - at, "[");
    for (int level = 0; level < 24; ++level)
        at += (size_t)snprintf(nodes + at, sizeof nodes - at, "{\"mesh\":0,\"children\":[%d,%d]},", level + 1, level + 1);
    snprintf(nodes + at, sizeof nodes - at, "{\"mesh\":0}]");
    cube_json(json, sizeof json, nodes, "[0]", "", 36);
    bytes many = {0};
    glb(&many, json, &bin);
    double t0 = now_s();
    expect_error(&many, "glb", RTCD_ERROR_MESH_TOO_LARGE, "proportion");
    print_message("instancing explosion refused in %.2f s\n", now_s() - t0);
    free(many.p);
    /* The same tree over a mesh of 50 primitives that make nothing: bounded by the walk's steps. */
    bytes empty = {0};
    puts_(&empty, "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":");
    puts_(&empty, nodes);
    puts_(&empty, ",\"meshes\":[{\"primitives\":[{\"attributes\":{}}");
    for (int i = 1; i < 50; ++i) puts_(&empty, ",{\"attributes\":{}}");
    puts_(&empty, "]}]}");
    t0 = now_s();
    expect_error(&empty, "gltf", RTCD_ERROR_INVALID_ARGUMENT, "too large");
    print_message("empty instancing explosion refused in %.2f s\n", now_s() - t0);
    free(empty.p);
    free(bin.p);
}

/* A buffer file that is a FIFO would block a reader for ever: refused unopened. */
static void test_gltf_buffer_files(void** state)
{
    (void)state;
    char dir[] = "/tmp/rtcd_test_hostile_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], fifo_path[256];
    snprintf(path, sizeof path, "%s/cube.gltf", dir);
    snprintf(fifo_path, sizeof fifo_path, "%s/pipe.bin", dir);
    bytes bin = {0};
    cube_bin(&bin, (uint16_t)cube_i[35]);
    char name[32];
    snprintf(name, sizeof name, "cube data.bin");
    char file[300];
    snprintf(file, sizeof file, "%s/%s", dir, name);
    FILE* f = fopen(file, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bin.p, 1, bin.n, f), bin.n);
    fclose(f);
    assert_int_equal(mkfifo(fifo_path, 0600), 0);
    static const char* const uris[] = {"cube%20data.bin", "pipe.bin"};
    for (int u = 0; u < 2; ++u) {
        char json[2048];
        cube_json(json, sizeof json, "[{\"mesh\":0}]", "[0]", "", 36);
        char* buffers = strstr(json, "\"buffers\":[{\"byteLength\":168}]");
        assert_non_null(buffers);
        snprintf(buffers, sizeof json - (size_t)(buffers - json), "\"buffers\":[{\"byteLength\":168,\"uri\":\"%s\"}]}",
                 uris[u]);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(json, f);
        fclose(f);
        rtcd_import_def def = rtcd_default_import_def();
        rtcd_imported* im = NULL;
        rtcd_error err = rtcd_import_file(&def, path, &im);
        assert_non_null(im);
        if (u == 0) {
            if (err != RTCD_OK) print_error("%s\n", rtcd_imported_error_message(im));
            assert_int_equal(err, RTCD_OK);
            assert_float_near(rtcd_mesh_mass_properties(rtcd_imported_mesh(im, 0)).volume, 8.0, 1e-4);
        } else {
            assert_int_equal(err, RTCD_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(rtcd_imported_error_message(im), "not a regular file"));
        }
        rtcd_imported_release(im);
    }
    unlink(path);
    unlink(file);
    unlink(fifo_path);
    rmdir(dir);
    free(bin.p);
}

/* ---- class 6b: huge faces ---- */

/* A pyramid (apex at height 1) over a quarter disc: the base is one face of
 * the centre and n - 1 corners on the unit arc, convex; `star` pulls every
 * other arc corner in to radius 0.5 (not convex). A full n-gon would not do:
 * any triangulation of it has ears thinner than float resolution. As OBJ,
 * or as ASCII PLY (`ply`). */
static void sector_pyramid(bytes* b, uint32_t n, int star, int ply)
{
    const double quarter = 1.57079632679489662;
    if (ply)
        putf(b, "ply\nformat ascii 1.0\nelement vertex %u\nproperty float x\nproperty float y\nproperty float z\n"
                "element face %u\nproperty list int int vertex_indices\nend_header\n", n + 1, n + 1);
    const char* v = ply ? "" : "v ";
    putf(b, "%s0 0 0\n", v);
    for (uint32_t i = 0; i + 1 < n; ++i) {
        double r = star && (i & 1) ? 0.5 : 1.0, a = quarter * i / (n - 2);
        putf(b, "%s%.9g %.9g 0\n", v, r * cos(a), r * sin(a));
    }
    putf(b, "%s0 0 1\n", v);
    /* The base, seen from below; then the sides. OBJ counts from 1, PLY from 0. */
    const uint32_t one = ply ? 0 : 1;
    putf(b, ply ? "%u" : "f", n);
    for (uint32_t i = n; i >= 1; --i) putf(b, " %u", i - 1 + one);
    puts_(b, "\n");
    for (uint32_t i = 0; i < n; ++i) putf(b, ply ? "3 %u %u %u\n" : "f %u %u %u\n", i + one, (i + 1) % n + one, n + one);
}

static void test_huge_convex_face_is_linear(void** state)
{
    (void)state;
    const uint32_t n = 100000;
    /* The case, timed: an OBJ (assimp keeps no shared vertices, so
     * the file is open as stored; no repair, to time the triangulation). */
    bytes b = {0};
    sector_pyramid(&b, n, 0, 0);
    rtcd_import_def def = rtcd_default_import_def();
    def.flags = RTCD_IMPORT_NO_REPAIR;
    rtcd_imported* im = NULL;
    double t0 = now_s();
    rtcd_error err = rtcd_import_memory(&def, b.p, b.n, "obj", &im);
    double seconds = now_s() - t0;
    print_message("OBJ with a face of %u corners: %.2f s\n", n, seconds);
    assert_int_equal(err, RTCD_ERROR_MESH_OPEN_EDGE);
    assert_int_equal(rtcd_imported_input_triangle_count(im), (n - 2) + n);
    assert_true(seconds < 10.0); /* assimp's triangulation took 16 s on the face alone */
    rtcd_imported_release(im);
    free(b.p);
    /* A smaller one with shared vertices: taken as stored, of the right volume. */
    const uint32_t m = 20000;
    bytes ply = {0};
    sector_pyramid(&ply, m, 0, 1);
    expect_volume(&ply, "ply", 0.5 * (m - 2) * sin(1.57079632679489662 / (m - 2)) / 3.0);
    free(ply.p);
}

static void test_huge_concave_face_is_refused_in_time(void** state)
{
    (void)state;
    bytes b = {0};
    sector_pyramid(&b, 100000, 1, 0);
    double t0 = now_s();
    expect_error(&b, "obj", RTCD_ERROR_MESH_TOO_LARGE, "not convex");
    double seconds = now_s() - t0;
    print_message("star of 100000 corners refused in %.2f s\n", seconds);
    assert_true(seconds < 10.0);
    free(b.p);
}

/* Small concave faces are ear-clipped correctly: an L-shaped prism. */
static void test_concave_faces_are_triangulated(void** state)
{
    (void)state;
    static const float L[6][2] = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}}; /* area 3, counter-clockwise */
    bytes b = {0};
    for (int z = 0; z < 2; ++z)
        for (int i = 0; i < 6; ++i) putf(&b, "v %g %g %d\n", L[i][0], L[i][1], 2 * z);
    puts_(&b, "f 6 5 4 3 2 1\nf 7 8 9 10 11 12\n"); /* bottom seen from below, top from above */
    for (int i = 0; i < 6; ++i) {
        int j = (i + 1) % 6;
        putf(&b, "f %d %d %d %d\n", i + 1, j + 1, j + 7, i + 7);
    }
    expect_volume(&b, "obj", 6.0);
    /* The same as PLY and OFF faces. */
    bytes off = {0};
    puts_(&off, "OFF\n12 8 0\n");
    for (int z = 0; z < 2; ++z)
        for (int i = 0; i < 6; ++i) putf(&off, "%g %g %d\n", L[i][0], L[i][1], 2 * z);
    puts_(&off, "6 5 4 3 2 1 0\n6 6 7 8 9 10 11\n");
    for (int i = 0; i < 6; ++i) putf(&off, "4 %d %d %d %d\n", i, (i + 1) % 6, (i + 1) % 6 + 6, i + 6);
    expect_volume(&off, "off", 6.0);
    free(off.p);
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ply_variants_read),
        cmocka_unit_test(test_off_variants_read),
        cmocka_unit_test(test_glb_modes_and_nodes),
        cmocka_unit_test(test_corrupt_indices_are_invalid),
        cmocka_unit_test(test_random_bytes_after_valid_headers),
        cmocka_unit_test(test_headers_that_never_end_or_lie),
        cmocka_unit_test(test_gltf_structure_attacks),
        cmocka_unit_test(test_gltf_buffer_files),
        cmocka_unit_test(test_huge_convex_face_is_linear),
        cmocka_unit_test(test_huge_concave_face_is_refused_in_time),
        cmocka_unit_test(test_concave_faces_are_triangulated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
