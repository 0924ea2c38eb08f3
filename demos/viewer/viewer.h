/* The demos' viewer: a world drawn after each step, in a window (--view:
 * GLFW and OpenGL) and/or as PNG frames rendered off-screen with no display
 * (--frames DIR: OSMesa and libpng). One drawing code for both: legacy
 * fixed-function OpenGL, whose entry points are fetched from the context's
 * own loader (gl_api.h), so the window's libGL and OSMesa never mix.
 *
 * A static library for the demo programs only: nothing of it is linked into
 * librtcd or librtcd_bullet. What it sees of a world goes through the public
 * read-only getters (rtcd_world_get_pose, rtcd_world_body_shape,
 * rtcd_world_get_contacts).
 *
 *   viewer* v;
 *   if (viewer_open(&def, &v, msg, sizeof msg)) { fprintf(stderr, "%s\n", msg); ... }
 *   for (step...) { rtcd_world_step(w); if (viewer_frame(v, w, step, msg, sizeof msg) != VIEWER_CONTINUE) break; }
 *   viewer_close(v);
 */
#ifndef RTCD_VIEWER_H
#define RTCD_VIEWER_H

#include <rtcd/rtcd_world.h>

#include <stddef.h>
#include <stdint.h>

#define VIEWER_DEFAULT_WIDTH 640u
#define VIEWER_DEFAULT_HEIGHT 480u

typedef struct viewer viewer;

typedef struct viewer_def {
    int window;                    /* open a window (--view) */
    const char* frames_dir;        /* write frame_00000.png ... there (--frames); NULL: none */
    uint32_t width, height;        /* frames' size and the window's first size (0: 640x480) */
    int show_contacts;             /* contact points and normals drawn from the start ('c' toggles) */
    const char* title;             /* the window's title, e.g. "rtcd avalanche" */
    /* The camera looks at `target` from a distance that fits a sphere of
     * `radius` metres around it. */
    float target[3];
    float radius;
    int plane;                     /* draw the ground plane z = 0 */
    /* A static mesh drawn in grey (the mixed scene's terrain); copied. */
    const float* ground_vertices;  /* xyz per vertex */
    uint32_t ground_vertex_count;
    const uint32_t* ground_indices;/* 3 per triangle, counter-clockwise seen from above */
    uint32_t ground_triangle_count;
} viewer_def;

/* Opens what def asks for (the frames' folder is created when missing).
 * Returns 0, or -1 with a one-line reason in msg (no display, no GLFW or
 * OSMesa in this build, a folder that cannot be written). */
int viewer_open(const viewer_def* def, viewer** out, char* msg, size_t msg_size);

#define VIEWER_CONTINUE 0
#define VIEWER_QUIT 1   /* the window was closed or Esc pressed */
#define VIEWER_ERROR 2  /* a frame could not be written: reason in msg */

/* After step `step`: draws the world, writes its frame, shows it and handles
 * the window's keys (paused, it waits here until a key resumes or steps). */
int viewer_frame(viewer* v, const rtcd_world* world, uint32_t step, char* msg, size_t msg_size);

void viewer_close(viewer* v); /* NULL is fine */

/* Writes an 8-bit RGB image (rows top to bottom, 3 bytes a pixel) as PNG.
 * Returns 0, or -1 with the reason in msg. */
int viewer_write_png(const char* path, const uint8_t* rgb, uint32_t width, uint32_t height, char* msg,
                     size_t msg_size);

#endif
