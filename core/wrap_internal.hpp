// Shared by the wrap's C API (core/wrap.cpp, in librtcd) and its OpenVDB
// module (core/wrap_vdb.cpp, librtcd_wrap_vdb.so, loaded on first use).
#ifndef RTCD_WRAP_INTERNAL_HPP
#define RTCD_WRAP_INTERNAL_HPP

#include <rtcd/rtcd_wrap.h>

#include <vector>

struct rtcd_wrapped {
    unsigned refcount;
    rtcd_wrap_report report;
    std::vector<float> vertices;
    std::vector<uint32_t> indices;
};

// The module's one entry point, arguments checked by rtcd_wrap.
#define RTCD_WRAP_MODULE_ENTRY "rtcd_wrap_vdb_entry"
typedef rtcd_error (*rtcd_wrap_module_entry)(const rtcd_wrap_def* def, const float* vertices, uint32_t vertex_count,
                                              size_t vertex_stride, const uint32_t* indices, uint32_t triangle_count,
                                              rtcd_wrapped** out);

#endif
