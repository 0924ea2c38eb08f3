/* The --view window: GLFW with a legacy OpenGL context (the fixed-function
 * drawing code shared with the off-screen frames), keys and mouse. */
#include "viewer_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VIEWER_HAVE_GLFW
#define GLFW_INCLUDE_NONE /* GL/gl.h came through viewer_internal.h */
#include <GLFW/glfw3.h>

struct viewer_window {
    GLFWwindow* win;
    viewer_gl gl;
    viewer_input pending;          /* keys since the last viewer_window_events */
    viewer_camera* cam;            /* the camera the callbacks move */
    double last_x, last_y;
    int dragging;
};

/* GLFW reports errors through a callback: the last one, for the message. */
static char glfw_error[256];
static void on_error(int code, const char* text)
{
    (void)code;
    snprintf(glfw_error, sizeof glfw_error, "%s", text ? text : "unknown error");
}

static void clamp_pitch(viewer_camera* c)
{
    if (c->pitch > 1.55f) c->pitch = 1.55f;
    if (c->pitch < -0.2f) c->pitch = -0.2f; /* just below the ground at most */
}

static void on_key(GLFWwindow* win, int key, int scancode, int action, int mods)
{
    (void)scancode, (void)mods;
    viewer_window* w = glfwGetWindowUserPointer(win);
    if (action == GLFW_RELEASE || !w) return;
    viewer_camera* c = w->cam;
    const float turn = 0.05f;
    switch (key) {
    case GLFW_KEY_ESCAPE:
    case GLFW_KEY_Q: w->pending.quit = 1; break;
    case GLFW_KEY_SPACE: if (action == GLFW_PRESS) w->pending.paused ^= 1; break;
    case GLFW_KEY_N:
    case GLFW_KEY_RIGHT: w->pending.step_once = 1; break;
    case GLFW_KEY_C: if (action == GLFW_PRESS) w->pending.toggle_contacts ^= 1; break;
    case GLFW_KEY_R: w->pending.reset_camera = 1; break;
    case GLFW_KEY_A:
    case GLFW_KEY_LEFT: c->yaw -= turn; break;
    case GLFW_KEY_D: c->yaw += turn; break;
    case GLFW_KEY_W: c->pitch += turn; clamp_pitch(c); break;
    case GLFW_KEY_S: c->pitch -= turn; clamp_pitch(c); break;
    case GLFW_KEY_UP:
    case GLFW_KEY_EQUAL: c->distance *= 0.95f; break;
    case GLFW_KEY_DOWN:
    case GLFW_KEY_MINUS: c->distance /= 0.95f; break;
    default: break;
    }
}

static void on_scroll(GLFWwindow* win, double dx, double dy)
{
    (void)dx;
    viewer_window* w = glfwGetWindowUserPointer(win);
    if (w) w->cam->distance *= powf(0.9f, (float)dy);
}

static void on_button(GLFWwindow* win, int button, int action, int mods)
{
    (void)mods;
    viewer_window* w = glfwGetWindowUserPointer(win);
    if (!w || button != GLFW_MOUSE_BUTTON_LEFT) return;
    w->dragging = action == GLFW_PRESS;
    glfwGetCursorPos(win, &w->last_x, &w->last_y);
}

static void on_cursor(GLFWwindow* win, double x, double y)
{
    viewer_window* w = glfwGetWindowUserPointer(win);
    if (!w || !w->dragging) return;
    w->cam->yaw -= 0.006f * (float)(x - w->last_x);
    w->cam->pitch += 0.006f * (float)(y - w->last_y);
    clamp_pitch(w->cam);
    w->last_x = x;
    w->last_y = y;
}

static viewer_gl_proc glfw_loader(const char* name) { return (viewer_gl_proc)glfwGetProcAddress(name); }

int viewer_window_open(const viewer_def* def, viewer_window** out, char* msg, size_t msg_size)
{
    *out = NULL;
    glfw_error[0] = '\0';
    glfwSetErrorCallback(on_error);
    if (!glfwInit()) {
        snprintf(msg, msg_size, "--view: cannot open a window, no display (%s); --frames DIR writes the frames "
                                "off-screen instead", glfw_error[0] ? glfw_error : "glfwInit failed");
        return -1;
    }
    viewer_window* w = calloc(1, sizeof *w);
    if (!w) {
        glfwTerminate();
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    /* OpenGL 2.1 at most: the compatibility context the fixed-function code needs */
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 2);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 1);
    glfwWindowHint(GLFW_SAMPLES, 4);
    w->win = glfwCreateWindow((int)def->width, (int)def->height, def->title ? def->title : "rtcd", NULL, NULL);
    if (!w->win) {
        snprintf(msg, msg_size, "--view: cannot create an OpenGL window (%s)", glfw_error[0] ? glfw_error : "unknown");
        free(w);
        glfwTerminate();
        return -1;
    }
    glfwMakeContextCurrent(w->win);
    glfwSwapInterval(1); /* at most the display's rate: about real time at 60 Hz */
    if (viewer_gl_load(&w->gl, glfw_loader, msg, msg_size) != 0) {
        viewer_window_close(w);
        return -1;
    }
    glfwSetWindowUserPointer(w->win, w);
    glfwSetKeyCallback(w->win, on_key);
    glfwSetScrollCallback(w->win, on_scroll);
    glfwSetMouseButtonCallback(w->win, on_button);
    glfwSetCursorPosCallback(w->win, on_cursor);
    *out = w;
    return 0;
}

void viewer_window_draw(viewer_window* w, viewer_scene* s, viewer_camera* cam, const rtcd_world* world,
                        int show_contacts, const char* title)
{
    int fw, fh;
    glfwMakeContextCurrent(w->win);
    glfwGetFramebufferSize(w->win, &fw, &fh); /* pixels, not screen units (high-DPI screens) */
    viewer_draw(&w->gl, s, cam, world, show_contacts, fw, fh);
    glfwSwapBuffers(w->win);
    if (title) glfwSetWindowTitle(w->win, title);
}

void viewer_window_events(viewer_window* w, viewer_camera* cam, viewer_input* in, int wait)
{
    w->cam = cam;
    w->pending = *in;
    if (wait) glfwWaitEventsTimeout(0.1);
    else glfwPollEvents();
    if (glfwWindowShouldClose(w->win)) w->pending.quit = 1;
    *in = w->pending;
}

void viewer_window_close(viewer_window* w)
{
    if (!w) return;
    if (w->win) glfwDestroyWindow(w->win);
    free(w);
    glfwTerminate();
}

#else /* built without GLFW */

int viewer_window_open(const viewer_def* def, viewer_window** out, char* msg, size_t msg_size)
{
    (void)def;
    *out = NULL;
    snprintf(msg, msg_size, "--view: this build has no window (GLFW was not found at configure time; Debian: "
                            "libglfw3-dev); --frames DIR writes the frames off-screen");
    return -1;
}

void viewer_window_draw(viewer_window* w, viewer_scene* s, viewer_camera* cam, const rtcd_world* world,
                        int show_contacts, const char* title)
{
    (void)w, (void)s, (void)cam, (void)world, (void)show_contacts, (void)title;
}

void viewer_window_events(viewer_window* w, viewer_camera* cam, viewer_input* in, int wait)
{
    (void)w, (void)cam, (void)wait;
    in->quit = 1;
}

void viewer_window_close(viewer_window* w) { (void)w; }

#endif
