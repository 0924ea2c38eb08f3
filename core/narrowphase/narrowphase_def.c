/* The narrow phase's defs (rtcd_narrowphase.h): their defaults, the names
 * of their enums and the validation every entry point runs. The defaults of
 * the iterative def live here too, beside the def that holds it, so that
 * neither pass (narrowphase.c, iterative.c) needs the other for them. */
#include "hooks.h"

#include <rtcd/rtcd_narrowphase.h>

#include <math.h>
#include <string.h>

rtcd_iterative_def rtcd_default_iterative_def(void)
{
    rtcd_iterative_def def;
    memset(&def, 0, sizeof def);
    def.algorithm = RTCD_ALGORITHM_PREDICTIVE;
    def.adaptive = 1;
    def.confidence = 1.5f;
    /* Fixed constants for metre-sized bodies with centimetre edges (the
     * scenes' blobs: about 9 cm edges). */
    def.fixed.displacement_threshold = 0.02f;
    def.fixed.distance_extension = 0.04f;
    def.fixed.culling_distance = 0.03f;
    def.fixed.max_iterations = 8;
    return def;
}

rtcd_narrowphase_def rtcd_default_narrowphase_def(void)
{
    rtcd_narrowphase_def def;
    memset(&def, 0, sizeof def);
    def.traversal = RTCD_TRAVERSAL_BVH;
    def.contact_normal = RTCD_CONTACT_REPROJECTED;
    def.cull_separated = 1;
    def.iterative = rtcd_default_iterative_def();
    def.speculative = 1;
    def.speculative_margin = 0.005f;
    def.edge_crossings = 1;
    def.deep_contacts = 1;
    def.backend = RTCD_BACKEND_AUTO;
    return def;
}

/* An enum field of a def, read as an integer (a value outside the enum may
 * come in: a cast, a C++ caller, memory not set): RTCD_OK within [0, max],
 * else a message naming the field and the value. */
static rtcd_error check_enum(const char* fn, const char* field, int value, int max, const char* names)
{
    if (value >= 0 && value <= max) return RTCD_OK;
    return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: unknown %s %d (valid: %s)", fn, field, value, names);
}

rtcd_error rtcd_narrowphase_def_validate(const rtcd_narrowphase_def* def)
{
    const char* fn = "rtcd_narrowphase_def";
    if (!def) return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: NULL def", fn);
    /* Every enum first: nothing below reads one. */
    rtcd_error err = check_enum(fn, "traversal", (int)def->traversal, RTCD_TRAVERSAL_BVH_STACKLESS,
                                "0 BVH, 1 brute force, 2 stackless BVH");
    if (err == RTCD_OK)
        err = check_enum(fn, "contact_normal", (int)def->contact_normal, RTCD_CONTACT_RAY_WEIGHTED,
                         "0 reprojected, 1 ray, 2 ray weighted");
    if (err == RTCD_OK)
        err = check_enum(fn, "iterative.algorithm", (int)def->iterative.algorithm, RTCD_ALGORITHM_PREDICTIVE,
                         "0 standard, 1 iterative, 2 predictive");
    if (err == RTCD_OK)
        err = check_enum(fn, "backend", (int)def->backend, RTCD_BACKEND_OPENCL, "0 auto, 1 cpu, 2 opencl");
    if (err != RTCD_OK) return err;
    const rtcd_iterative_def* it = &def->iterative;
    const rtcd_iterative_params* fx = &it->fixed;
    if (!(it->confidence >= 1.0f) || !isfinite(it->confidence))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: iterative.confidence must be finite and >= 1 (got %g)", fn,
                         (double)it->confidence);
    if (!it->adaptive && !(fx->displacement_threshold > 0.0f && fx->distance_extension > fx->displacement_threshold &&
                           fx->culling_distance >= 0.0f && isfinite(fx->distance_extension) &&
                           isfinite(fx->culling_distance) && fx->max_iterations >= 1))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT,
                         "%s: iterative.fixed needs displacement_threshold > 0, distance_extension > threshold, "
                         "culling_distance >= 0 (all finite) and max_iterations >= 1",
                         fn);
    if (!(def->speculative_margin >= 0.0f) || !(def->speculative_margin <= 1e3f))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: speculative_margin is %g, not within [0, 1000] m",
                         fn, (double)def->speculative_margin);
    if (def->threads > RTCD_MAX_WORKERS)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: threads %u is not within [0, %u]", fn, def->threads,
                         RTCD_MAX_WORKERS);
    if (def->max_devices > 16)
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: max_devices %u is not within [0, 16]", fn, def->max_devices);
    if ((def->tasks.enqueue != NULL) != (def->tasks.finish != NULL))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: tasks needs both enqueue and finish", fn);
    if (def->tasks.enqueue && (def->tasks.worker_count < 1 || def->tasks.worker_count > RTCD_MAX_WORKERS))
        return rtcd_fail(RTCD_ERROR_INVALID_ARGUMENT, "%s: tasks.worker_count %u is not within [1, %u]", fn,
                         def->tasks.worker_count, RTCD_MAX_WORKERS);
    return RTCD_OK;
}

const char* rtcd_algorithm_name(rtcd_algorithm algorithm)
{
    switch (algorithm) {
    case RTCD_ALGORITHM_STANDARD: return "standard";
    case RTCD_ALGORITHM_ITERATIVE: return "iterative";
    case RTCD_ALGORITHM_PREDICTIVE: return "predictive";
    }
    return "unknown";
}

const char* rtcd_backend_name(rtcd_backend backend)
{
    switch (backend) {
    case RTCD_BACKEND_AUTO: return "auto";
    case RTCD_BACKEND_CPU: return "cpu";
    case RTCD_BACKEND_OPENCL: return "opencl";
    }
    return "unknown";
}
