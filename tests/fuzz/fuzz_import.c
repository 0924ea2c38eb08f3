/* libFuzzer target: the mesh import library (rtcd_import_memory) on
 * arbitrary file contents.
 *
 *   byte 0    the format hint: FUZZ_HINTS[byte % count]
 *   byte 1    bit 0 RTCD_IMPORT_NO_REPAIR, bit 1 RTCD_MESH_FLIP_INSIDE_OUT,
 *             bit 2 RTCD_MESH_OPEN_SURFACE (the def's mesh_flags)
 *   byte 2..  the file's bytes
 *
 * assimp's X and ASE loaders trust the element counts of the text and
 * reserve that much memory (rtcd_import.h says so): they are never hinted,
 * and inputs that carry their signatures are skipped, since assimp falls back
 * to detection by content when the hinted loader declines the data. PLY,
 * OFF, glTF and GLB are read by rtcd's own readers (import/read_*.c), OBJ
 * and STL by assimp; the formats fuzzed can be narrowed
 * (RTCD_FUZZ_IMPORT_FORMATS below; run_fuzzers.sh --import-formats). A
 * finding inside libassimp (not in import/ or core/) is assimp's, not rtcd's.
 *
 * tests/fuzz/make_corpus.py writes seeds in this format. */
#include <rtcd/rtcd.h>
#include <rtcd/rtcd_import.h>
#include <rtcd/rtcd_query.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Byte 0 indexes this table; the table never changes order, so that every
 * committed input keeps its meaning. */
static const char* const FUZZ_HINTS[] = {"obj", "stl", "ply", "off", "gltf", "glb"};
enum { HINT_COUNT = sizeof FUZZ_HINTS / sizeof FUZZ_HINTS[0] };
/* The formats fuzzed (others return at once): RTCD_FUZZ_IMPORT_FORMATS,
 * a comma list of FUZZ_HINTS names, or "all"; default FUZZ_DEFAULT_FORMATS. */
#define FUZZ_DEFAULT_FORMATS "all"
static int g_enabled[HINT_COUNT];

static void enable_formats(void)
{
    const char* list = getenv("RTCD_FUZZ_IMPORT_FORMATS");
    if (!list || !*list) list = FUZZ_DEFAULT_FORMATS;
    for (int i = 0; i < HINT_COUNT; ++i) {
        size_t n = strlen(FUZZ_HINTS[i]);
        int on = strcmp(list, "all") == 0;
        for (const char* p = list; !on && *p;) {
            const char* end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            on = len == n && strncmp(p, FUZZ_HINTS[i], n) == 0;
            p += len + (end ? 1 : 0);
        }
        g_enabled[i] = on;
    }
}

static void quiet_log(rtcd_log_level level, const char* message, void* user)
{
    (void)level;
    (void)message;
    (void)user;
}

/* Case-insensitive search for `needle` (lower case) in the data. */
static int contains(const uint8_t* data, size_t size, const char* needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= size; ++i) {
        size_t k = 0;
        while (k < n) {
            uint8_t c = data[i + k];
            if (c >= 'A' && c <= 'Z') c = (uint8_t)(c - 'A' + 'a');
            if (c != (uint8_t)needle[k]) break;
            ++k;
        }
        if (k == n) return 1;
    }
    return 0;
}

static volatile double g_sink;

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static int initialised;
    if (!initialised) {
        rtcd_set_log(quiet_log, NULL);
        enable_formats();
        initialised = 1;
    }
    if (size < 2 || !g_enabled[data[0] % HINT_COUNT]) return 0;
    const uint8_t* file = data + 2;
    size_t file_size = size - 2;
    /* Signatures of the excluded loaders (X: "xof ", ASE/ASC: "*3dsmax_asciiexport"). */
    if (contains(file, file_size, "xof ") || contains(file, file_size, "3dsmax_asciiexport")) return 0;

    rtcd_import_def def = rtcd_default_import_def();
    def.flags = (data[1] & 1u) ? RTCD_IMPORT_NO_REPAIR : 0u;
    def.mesh_flags = (data[1] >> 1) & 3u;
    rtcd_imported* imp = NULL;
    rtcd_error err = rtcd_import_memory(&def, file_size ? (const void*)file : (const void*)data, file_size,
                                        FUZZ_HINTS[data[0] % HINT_COUNT], &imp);
    g_sink += err;
    if (!imp) return 0;
    g_sink += rtcd_imported_status(imp) + strlen(rtcd_imported_error_message(imp)) +
              strlen(rtcd_imported_stored_error_message(imp)) + strlen(rtcd_imported_repair_summary(imp));
    g_sink += rtcd_imported_input_vertex_count(imp) + rtcd_imported_input_triangle_count(imp) +
              rtcd_imported_dropped_primitive_count(imp) + rtcd_imported_component_count(imp);
    const rtcd_repair_report* report = rtcd_imported_repair_report(imp);
    if (report) g_sink += report->input_triangles;
    uint32_t meshes = rtcd_imported_mesh_count(imp);
    for (uint32_t i = 0; i < meshes; ++i) {
        const rtcd_mesh* m = rtcd_imported_mesh(imp, i);
        float lo[3], hi[3];
        rtcd_mesh_bounds(m, lo, hi);
        float mid[3] = {0.5f * (lo[0] + hi[0]), 0.5f * (lo[1] + hi[1]), 0.5f * (lo[2] + hi[2])};
        g_sink += rtcd_mesh_contains_point(m, mid) + rtcd_mesh_mass_properties(m).volume;
        g_sink += strlen(rtcd_mesh_name(m));
    }
    rtcd_imported_release(imp);
    return 0;
}
