/* Private to rtcd: every core module's private header, for the modules
 * (and tests) that use several. Each module's own: hooks.h (allocator, log,
 * errors), mesh_internal.h (the mesh and what is built with it),
 * pair_internal.h (one pair's passes), key_map.h, task.h, backend.h. */
#ifndef RTCD_CORE_INTERNAL_H
#define RTCD_CORE_INTERNAL_H

#include "hooks.h"
#include "mesh/mesh_internal.h"
#include "narrowphase/pair_internal.h"

#endif
