/* The viewer the demos call after each step: the window, the frames, or
 * both from one camera; pause and single step for the window. */
#include "viewer_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct viewer {
    viewer_scene scene;
    viewer_camera cam, cam_start;
    viewer_window* window;
    viewer_offscreen* off;
    char* frames_dir;
    char title[128];
    int show_contacts, paused;
};

/* mkdir -p: each missing folder of the path in turn. */
static int make_dirs(const char* path, char* msg, size_t msg_size)
{
    size_t n = strlen(path);
    char* p = malloc(n + 1);
    if (!p) return -1;
    memcpy(p, path, n + 1);
    int rc = 0;
    for (size_t i = 1; i <= n && rc == 0; ++i) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && !(errno == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode))) {
            snprintf(msg, msg_size, "--frames: cannot create the folder %s: %s", p, strerror(errno));
            rc = -1;
        }
        p[i] = c;
    }
    free(p);
    return rc;
}

int viewer_open(const viewer_def* def_in, viewer** out, char* msg, size_t msg_size)
{
    *out = NULL;
    if (msg_size) msg[0] = '\0';
    viewer_def def = *def_in;
    if (!def.width || !def.height) def.width = VIEWER_DEFAULT_WIDTH, def.height = VIEWER_DEFAULT_HEIGHT;
    viewer* v = calloc(1, sizeof *v);
    if (!v || viewer_scene_init(&v->scene, &def) != 0) {
        snprintf(msg, msg_size, "out of memory (or a ground mesh index out of range)");
        viewer_close(v);
        return -1;
    }
    viewer_camera_init(&v->cam, &def);
    v->cam_start = v->cam;
    v->show_contacts = def.show_contacts;
    snprintf(v->title, sizeof v->title, "%s", def.title ? def.title : "rtcd");
    if (def.frames_dir) {
        size_t n = strlen(def.frames_dir) + 1;
        if ((v->frames_dir = malloc(n)) != NULL) memcpy(v->frames_dir, def.frames_dir, n);
        if (!v->frames_dir || make_dirs(def.frames_dir, msg, msg_size) != 0 ||
            viewer_offscreen_open(&def, &v->off, msg, msg_size) != 0) {
            viewer_close(v);
            return -1;
        }
    }
    if (def.window && viewer_window_open(&def, &v->window, msg, msg_size) != 0) {
        viewer_close(v);
        return -1;
    }
    *out = v;
    return 0;
}

/* Applies the window's one-shot keys; returns 1 when the run should end. */
static int apply_input(viewer* v, viewer_input* in)
{
    if (in->toggle_contacts) v->show_contacts = !v->show_contacts;
    if (in->reset_camera) v->cam = v->cam_start;
    in->toggle_contacts = in->reset_camera = 0;
    if (in->paused) v->paused = !v->paused; /* space */
    in->paused = 0;
    return in->quit;
}

static void show(viewer* v, const rtcd_world* world, uint32_t step)
{
    char title[256];
    snprintf(title, sizeof title, "%s - step %u%s", v->title, step,
             v->paused ? " (paused: space runs, n or right arrow steps, c contacts, esc quits)" : "");
    viewer_window_draw(v->window, &v->scene, &v->cam, world, v->show_contacts, title);
}

int viewer_frame(viewer* v, const rtcd_world* world, uint32_t step, char* msg, size_t msg_size)
{
    if (v->off) {
        size_t n = strlen(v->frames_dir) + 32;
        char* path = malloc(n);
        if (!path) {
            snprintf(msg, msg_size, "out of memory");
            return VIEWER_ERROR;
        }
        snprintf(path, n, "%s/frame_%05u.png", v->frames_dir, step);
        int rc = viewer_offscreen_frame(v->off, &v->scene, &v->cam, world, v->show_contacts, path, msg, msg_size);
        free(path);
        if (rc != 0) return VIEWER_ERROR;
    }
    if (!v->window) return VIEWER_CONTINUE;
    viewer_input in = {0};
    show(v, world, step);
    viewer_window_events(v->window, &v->cam, &in, 0);
    if (apply_input(v, &in)) return VIEWER_QUIT;
    if (in.step_once) v->paused = 1; /* n while running: stop here, then one step at a time */
    /* Paused: redraw (the camera may move) until a key runs or steps. */
    while (v->paused && !in.step_once) {
        show(v, world, step);
        viewer_window_events(v->window, &v->cam, &in, 1);
        if (apply_input(v, &in)) return VIEWER_QUIT;
    }
    return VIEWER_CONTINUE;
}

void viewer_close(viewer* v)
{
    if (!v) return;
    viewer_window_close(v->window);
    viewer_offscreen_close(v->off);
    viewer_scene_free(&v->scene);
    free(v->frames_dir);
    free(v);
}
