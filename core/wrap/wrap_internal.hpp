// Shared by the wrap's C API (core/wrap/wrap.cpp, in librtcd) and its OpenVDB
// module (core/wrap/wrap_vdb.cpp, librtcd_wrap_vdb.so, loaded on first use).
#ifndef RTCD_WRAP_INTERNAL_HPP
#define RTCD_WRAP_INTERNAL_HPP

#include <rtcd/rtcd_wrap.h>

#include <cstdarg>
#include <cstdio>
#include <vector>

struct rtcd_wrapped {
    unsigned refcount;
    rtcd_wrap_report report;
    std::vector<float> vertices;
    std::vector<uint32_t> indices;
};

// A formatted message to rtcd's error report (rtcd_report_error); returns code.
inline rtcd_error rtcd_wrap_fail(rtcd_error code, const char* format, ...) __attribute__((format(printf, 2, 3)));
inline rtcd_error rtcd_wrap_fail(rtcd_error code, const char* format, ...)
{
    char msg[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(msg, sizeof msg, format, args);
    va_end(args);
    return rtcd_report_error(code, msg);
}

// The module's one entry point, arguments checked by rtcd_wrap.
#define RTCD_WRAP_MODULE_ENTRY "rtcd_wrap_vdb_entry"
typedef rtcd_error (*rtcd_wrap_module_entry)(const rtcd_wrap_def* def, const float* vertices, uint32_t vertex_count,
                                              size_t vertex_stride, const uint32_t* indices, uint32_t triangle_count,
                                              rtcd_wrapped** out);

#endif
