/* The avalanche and spawner scenes (JVRC 2013) and the mixed scene (mixed.h)
 * on the C API over Bullet, and the run loop the demo programs share:
 * per-step statistics, CSV, progress bar. The options (demo_options.h), the
 * scenes (demo_scene.h) and the JSON summary (demo_report.h) have files of
 * their own; this header brings them all. Tests build the same scenes
 * through here. */
#ifndef RTCD_DEMO_COMMON_H
#define RTCD_DEMO_COMMON_H

#include "demo_options.h"
#include "demo_report.h"
#include "demo_scene.h"

#include <stdio.h>

/* Runs one scene (o->compare is ignored) and fills *r; returns 0, or the
 * process exit code on a failure (r->steps then says how far it got). */
int demo_run_scene(const demo_options* opt, demo_summary* r);

/* Runs the whole scene as the programs do; returns the process exit code. */
int demo_run(const demo_options* opt);

#endif
