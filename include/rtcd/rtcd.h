/* SPDX-License-Identifier: Zlib. Copyright (c) 2026 the rtcd authors (LICENSE). */
/* rtcd — ray-traced collision detection for concave meshes.
 *
 * The core C API: error codes, hooks and transforms (rtcd_common.h), meshes,
 * queries, the narrow phase of one pair and generated meshes. The batch
 * (rtcd_batch.h), the iterative algorithms' pair state (rtcd_iterative.h),
 * the task system (rtcd_task.h) and Bullet (rtcd_world.h, rtcd_bullet.h)
 * have headers of their own. Every public symbol starts with rtcd_ / RTCD_. */
#ifndef RTCD_RTCD_H
#define RTCD_RTCD_H

#include "rtcd_common.h"
#include "rtcd_mesh.h"
#include "rtcd_query.h"
#include "rtcd_narrowphase.h"
#include "rtcd_generate.h"
#include "rtcd_repair.h"

#endif
