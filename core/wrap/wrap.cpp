// The watertight wrap's C API (rtcd_wrap.h). The wrap itself (OpenVDB's
// unsigned distance field of the input, the level `offset` meshed, cavities
// removed, checked by rtcd_mesh_create) is core/wrap/wrap_vdb.cpp, built as a
// module beside librtcd and loaded on the first wrap: OpenVDB brings
// log4cplus, whose thread pool starts when it is loaded and whose exit
// handler then waits for it, so a program that forks and exits in the child
// would hang if librtcd linked it (test_multidevice did). A build without
// OpenVDB (RTCD_WITH_WRAP off or not found), or a module that does not load,
// has the same symbols and says "wrap not available".
//
// Why 1/128 of the diagonal by default: the envelope stands `offset` (one
// voxel) off the input, so the distance is about 0.8% of the diagonal (a
// 1 m robot link: 8 mm), the order of the contact slop a physics engine uses
// at that scale. Measured on a sphere soup of 100 000 triangles (bench_wrap,
// one thread): 1/32: 1 638 triangles, 3.1% of the diagonal; 1/64: 7 362,
// 1.6%; 1/128: 27 174, 0.78%, about 0.7 s; 1/256: 43 362, 0.61%, 3.2 times
// the time of 1/128. Coarser grids save little time (the field's cost
// follows the input's triangles) and double the distance per step; finer
// ones cost time for a distance that adaptive meshing no longer halves.
// The price is triangles: a flat quad gets ~17 600, an open unit box ~15 900
// (max_triangles bounds it).
#include <rtcd/rtcd_mesh.h>
#include <rtcd/rtcd_repair.h>
#include <rtcd/rtcd_wrap.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "wrap_internal.hpp"

#ifdef RTCD_WITH_WRAP
#include <dlfcn.h>
#include <mutex>
#include <string>
#endif

extern "C" {

rtcd_wrap_def rtcd_default_wrap_def(void)
{
    rtcd_wrap_def d;
    std::memset(&d, 0, sizeof d);
    d.voxel_size = 1.0f / 128.0f;
    d.offset = 1.0f;
    d.adaptivity = 0.2f;
    d.max_triangles = 100000;
    d.max_voxels = 1ull << 24;
    d.distance_samples = 5000;
    d.max_threads = 0;
    return d;
}

#ifdef RTCD_WITH_WRAP
static std::once_flag g_module_once;
static rtcd_wrap_module_entry g_module_entry;
static char g_module_error[512];

// librtcd_wrap_vdb.so from librtcd's own folder (build tree and install
// alike), else from the loader's search path.
static void load_module()
{
    const char* name = "librtcd_wrap_vdb.so";
    std::string path = name;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&rtcd_wrap_available), &info) && info.dli_fname) {
        std::string self = info.dli_fname;
        size_t slash = self.rfind('/');
        if (slash != std::string::npos) path = self.substr(0, slash + 1) + name;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h && path != name) h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        std::snprintf(g_module_error, sizeof g_module_error, "%s", e ? e : "dlopen failed");
        return;
    }
    // log4cplus (OpenVDB's logging) starts a thread pool when it loads and
    // its exit handler joins it: a child made by fork has no such threads
    // and would wait for ever in exit(). The pool only serves asynchronous
    // appenders, which OpenVDB does not use: stop it now.
    using shutdown_fn = void (*)();
    if (auto stop = reinterpret_cast<shutdown_fn>(dlsym(h, "_ZN9log4cplus18shutdownThreadPoolEv"))) stop();
    g_module_entry = reinterpret_cast<rtcd_wrap_module_entry>(dlsym(h, RTCD_WRAP_MODULE_ENTRY));
    if (!g_module_entry) std::snprintf(g_module_error, sizeof g_module_error, "%s has no %s", path.c_str(), RTCD_WRAP_MODULE_ENTRY);
}

static rtcd_wrap_module_entry module_entry()
{
    std::call_once(g_module_once, load_module);
    return g_module_entry;
}
#endif

int rtcd_wrap_available(void)
{
#ifdef RTCD_WITH_WRAP
    return module_entry() != nullptr;
#else
    return 0;
#endif
}

static int g_dropin_wrap = RTCD_WRAP_AUTO;

void rtcd_set_dropin_wrap(rtcd_wrap_mode mode)
{
    __atomic_store_n(&g_dropin_wrap, static_cast<int>(mode), __ATOMIC_RELAXED);
}

rtcd_wrap_mode rtcd_dropin_wrap(void)
{
    return static_cast<rtcd_wrap_mode>(__atomic_load_n(&g_dropin_wrap, __ATOMIC_RELAXED));
}

const char* rtcd_wrap_mode_name(rtcd_wrap_mode mode)
{
    switch (mode) {
    case RTCD_WRAP_OFF: return "off";
    case RTCD_WRAP_AUTO: return "auto";
    case RTCD_WRAP_ALWAYS: return "always";
    }
    return "off";
}

void rtcd_wrapped_retain(rtcd_wrapped* w)
{
    if (w) __atomic_add_fetch(&w->refcount, 1, __ATOMIC_RELAXED);
}

void rtcd_wrapped_release(rtcd_wrapped* w)
{
    if (w && __atomic_sub_fetch(&w->refcount, 1, __ATOMIC_ACQ_REL) == 0) delete w;
}

const rtcd_wrap_report* rtcd_wrapped_report(const rtcd_wrapped* w) { return w ? &w->report : nullptr; }

rtcd_error rtcd_wrapped_mesh(const rtcd_wrapped* w, const float** vertices, uint32_t* vertex_count,
                             const uint32_t** indices, uint32_t* triangle_count)
{
    if (!w) return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrapped_mesh: NULL handle");
    if (vertices) *vertices = w->vertices.data();
    if (vertex_count) *vertex_count = static_cast<uint32_t>(w->vertices.size() / 3);
    if (indices) *indices = w->indices.data();
    if (triangle_count) *triangle_count = static_cast<uint32_t>(w->indices.size() / 3);
    return RTCD_OK;
}

} // extern "C"

namespace {

rtcd_error check_args(const rtcd_wrap_def* def, const float* vertices, uint32_t nv, size_t stride,
                      const uint32_t* indices, uint32_t nt)
{
    if (!def || !vertices || !indices)
        return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: NULL definition, vertices, indices or output");
    if (nv == 0 || nt == 0) return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: no vertices or no triangles");
    if (stride != 0 && stride < 3 * sizeof(float))
        return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: vertex stride %zu below 12 bytes", stride);
    if (!(def->voxel_size > 0.0f && def->voxel_size <= 1.0f))
        return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: voxel_size %g must be in (0, 1]", (double)def->voxel_size);
    if (!(def->offset >= 0.75f && def->offset <= 16.0f))
        return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: offset %g voxels must be in [0.75, 16]", (double)def->offset);
    if (!(def->adaptivity >= 0.0f && def->adaptivity <= 1.0f))
        return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: adaptivity %g must be in [0, 1]", (double)def->adaptivity);
    if (def->max_triangles < 1000 || def->max_voxels == 0)
        return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: max_triangles below 1000 or max_voxels 0");
    for (size_t i = 0; i < 3 * static_cast<size_t>(nt); ++i)
        if (indices[i] >= nv)
            return rtcd_wrap_fail(RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE, "rtcd_wrap: triangle %zu refers to vertex %u of %u", i / 3,
                        indices[i], nv);
    const size_t step = stride ? stride : 3 * sizeof(float);
    for (uint32_t i = 0; i < nv; ++i) {
        const float* p = reinterpret_cast<const float*>(reinterpret_cast<const char*>(vertices) + i * step);
        if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2]))
            return rtcd_wrap_fail(RTCD_ERROR_MESH_NONFINITE_VERTEX, "rtcd_wrap: vertex %u is not finite", i);
    }
    return RTCD_OK;
}

} // namespace

extern "C" rtcd_error rtcd_wrap(const rtcd_wrap_def* def, const float* vertices, uint32_t vertex_count,
                                size_t vertex_stride, const uint32_t* indices, uint32_t triangle_count,
                                rtcd_wrapped** out)
{
    if (out) *out = nullptr;
    if (!out) return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: NULL output");
    rtcd_error err = check_args(def, vertices, vertex_count, vertex_stride, indices, triangle_count);
    if (err != RTCD_OK) return err;
#ifdef RTCD_WITH_WRAP
    rtcd_wrap_module_entry entry = module_entry();
    if (!entry)
        return rtcd_wrap_fail(RTCD_ERROR_UNSUPPORTED, "rtcd_wrap: wrap not available (its OpenVDB module did not load: %s)",
                    g_module_error);
    return entry(def, vertices, vertex_count, vertex_stride, indices, triangle_count, out);
#else
    return rtcd_wrap_fail(RTCD_ERROR_UNSUPPORTED, "rtcd_wrap: wrap not available (rtcd was built without OpenVDB: RTCD_WITH_WRAP)");
#endif
}
