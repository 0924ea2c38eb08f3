// Batch getters of the C API over Bullet (rtcd_world.h): every body's pose or
// velocity in one call, so that bindings (numpy arrays) and renderers do not
// pay a foreign call per body. Each entry is what the per-body getter gives.
#include "world_internal.h"

#include <cstdio>

namespace {

// The range [first, first + count) of the world's bodies, and a place to
// write it. Checked in 64 bits: first + count may not wrap.
rtcd_error check_range(const rtcd_world* w, uint32_t first, uint32_t count, const void* out, const char* fn)
{
    char line[256];
    if (!w) {
        std::snprintf(line, sizeof line, "%s: NULL world", fn);
        return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, line);
    }
    if (count == 0) return RTCD_OK; // an empty range anywhere: nothing to write
    if (!out) {
        std::snprintf(line, sizeof line, "%s: NULL out for %u bodies", fn, count);
        return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, line);
    }
    const uint64_t bodies = w->bodies.size();
    if (uint64_t(first) + count > bodies) {
        std::snprintf(line, sizeof line, "%s: bodies %u..%llu out of range (%llu bodies)", fn, first,
                      (unsigned long long)(uint64_t(first) + count - 1), (unsigned long long)bodies);
        return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, line);
    }
    return RTCD_OK;
}

} // namespace

extern "C" {

rtcd_error rtcd_world_get_transforms(const rtcd_world* w, uint32_t first, uint32_t count, rtcd_transform* out)
{
    rtcd_error err = check_range(w, first, count, out, "rtcd_world_get_transforms");
    for (uint32_t i = 0; err == RTCD_OK && i < count; ++i) err = rtcd_world_get_pose(w, first + i, &out[i]);
    return err;
}

rtcd_error rtcd_world_get_poses(const rtcd_world* w, uint32_t first, uint32_t count, float* out)
{
    rtcd_error err = check_range(w, first, count, out, "rtcd_world_get_poses");
    if (err != RTCD_OK) return err;
    for (uint32_t i = 0; i < count; ++i) {
        const btTransform& t = w->bodies[first + i]->getWorldTransform();
        // the translation exactly as rtcd_world_get_pose converts it
        const rtcd_transform r = rtcdFromBullet(t);
        const btQuaternion q = t.getRotation();
        // q and -q are the same rotation: one sign, so equal poses give equal arrays
        const float sign = q.getW() < 0 ? -1.0f : 1.0f;
        float* o = out + 7 * size_t(i);
        for (int k = 0; k < 3; ++k) o[k] = r.translation[k];
        o[3] = sign * static_cast<float>(q.getX());
        o[4] = sign * static_cast<float>(q.getY());
        o[5] = sign * static_cast<float>(q.getZ());
        o[6] = sign * static_cast<float>(q.getW());
    }
    return RTCD_OK;
}

rtcd_error rtcd_world_get_velocities(const rtcd_world* w, uint32_t first, uint32_t count, float* out)
{
    rtcd_error err = check_range(w, first, count, out, "rtcd_world_get_velocities");
    for (uint32_t i = 0; err == RTCD_OK && i < count; ++i) {
        float* o = out + 6 * size_t(i);
        err = rtcd_world_get_velocity(w, first + i, o, o + 3);
    }
    return err;
}

} // extern "C"
