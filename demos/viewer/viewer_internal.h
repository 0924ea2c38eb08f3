/* Private to the viewer: the OpenGL entry points it uses, the camera and the
 * drawing code that the window and the off-screen renderer share. */
#ifndef RTCD_VIEWER_INTERNAL_H
#define RTCD_VIEWER_INTERNAL_H

#include "viewer.h"

#include <GL/gl.h>

/* Fixed-function OpenGL 1.1, every function through a pointer the context's
 * loader gave (glfwGetProcAddress, OSMesaGetProcAddress): a program linked
 * with OSMesa and a window's libGL must not call one through the other's
 * exported symbols. */
#define VIEWER_GL_FUNCS(X)                                                                                           \
    X(void, Viewport, (GLint, GLint, GLsizei, GLsizei))                                                              \
    X(void, ClearColor, (GLclampf, GLclampf, GLclampf, GLclampf))                                                   \
    X(void, Clear, (GLbitfield))                                                                                     \
    X(void, Enable, (GLenum))                                                                                        \
    X(void, Disable, (GLenum))                                                                                       \
    X(void, MatrixMode, (GLenum))                                                                                    \
    X(void, LoadMatrixf, (const GLfloat*))                                                                           \
    X(void, PushMatrix, (void))                                                                                      \
    X(void, PopMatrix, (void))                                                                                       \
    X(void, MultMatrixf, (const GLfloat*))                                                                           \
    X(void, Lightfv, (GLenum, GLenum, const GLfloat*))                                                               \
    X(void, LightModelfv, (GLenum, const GLfloat*))                                                                  \
    X(void, Materialfv, (GLenum, GLenum, const GLfloat*))                                                            \
    X(void, Materialf, (GLenum, GLenum, GLfloat))                                                                    \
    X(void, ColorMaterial, (GLenum, GLenum))                                                                         \
    X(void, Color3fv, (const GLfloat*))                                                                              \
    X(void, Begin, (GLenum))                                                                                         \
    X(void, End, (void))                                                                                             \
    X(void, Vertex3f, (GLfloat, GLfloat, GLfloat))                                                                   \
    X(void, Normal3f, (GLfloat, GLfloat, GLfloat))                                                                   \
    X(void, EnableClientState, (GLenum))                                                                             \
    X(void, DisableClientState, (GLenum))                                                                            \
    X(void, VertexPointer, (GLint, GLenum, GLsizei, const GLvoid*))                                                  \
    X(void, NormalPointer, (GLenum, GLsizei, const GLvoid*))                                                         \
    X(void, DrawElements, (GLenum, GLsizei, GLenum, const GLvoid*))                                                  \
    X(void, PointSize, (GLfloat))                                                                                    \
    X(void, LineWidth, (GLfloat))                                                                                    \
    X(void, ShadeModel, (GLenum))                                                                                    \
    X(void, DepthFunc, (GLenum))                                                                                     \
    X(void, PixelStorei, (GLenum, GLint))                                                                            \
    X(void, ReadPixels, (GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, GLvoid*))                                   \
    X(void, Finish, (void))                                                                                          \
    X(const GLubyte*, GetString, (GLenum))

typedef struct viewer_gl {
#define VIEWER_GL_MEMBER(ret, name, args) ret(*name) args;
    VIEWER_GL_FUNCS(VIEWER_GL_MEMBER)
#undef VIEWER_GL_MEMBER
} viewer_gl;

typedef void (*viewer_gl_proc)(void);
/* Fills gl from the loader; returns 0, or -1 naming the first missing function in msg. */
int viewer_gl_load(viewer_gl* gl, viewer_gl_proc (*loader)(const char* name), char* msg, size_t msg_size);

/* An orbit camera around a target, z up. */
typedef struct viewer_camera {
    float target[3];
    float yaw, pitch;              /* radians: yaw about z from +x, pitch above the horizon */
    float distance;
    float fov_y;                   /* radians */
} viewer_camera;

/* The camera def asks for: from the south-west, 25 degrees up, the sphere in view. */
void viewer_camera_init(viewer_camera* cam, const viewer_def* def);

/* What every frame draws besides the bodies; contact scratch space. */
typedef struct viewer_scene {
    int plane;
    float plane_extent;            /* half the side of the drawn square */
    float* ground_vertices;        /* owned copy */
    float* ground_normals;         /* per vertex */
    uint32_t* ground_indices;
    uint32_t ground_vertex_count, ground_triangle_count;
    rtcd_world_contact* contacts;  /* grown as needed */
    uint32_t contact_capacity;
    float contact_length;          /* drawn normals' length, metres */
} viewer_scene;

int viewer_scene_init(viewer_scene* s, const viewer_def* def);
void viewer_scene_free(viewer_scene* s);

/* Draws the world into the current context's viewport of width x height. */
void viewer_draw(const viewer_gl* gl, viewer_scene* s, const viewer_camera* cam, const rtcd_world* world,
                 int show_contacts, int width, int height);

/* ---- the window (window.c) and the off-screen renderer (offscreen.c) ---- */
typedef struct viewer_window viewer_window;
typedef struct viewer_offscreen viewer_offscreen;

/* Window input the viewer loop acts on. */
typedef struct viewer_input {
    int paused, step_once, quit, toggle_contacts, reset_camera;
} viewer_input;

int viewer_window_open(const viewer_def* def, viewer_window** out, char* msg, size_t msg_size);
/* Draws and presents; applies camera keys to cam. */
void viewer_window_draw(viewer_window* w, viewer_scene* s, viewer_camera* cam, const rtcd_world* world,
                        int show_contacts, const char* title);
/* Polls (wait != 0: sleeps until an event) and accumulates into *in. */
void viewer_window_events(viewer_window* w, viewer_camera* cam, viewer_input* in, int wait);
void viewer_window_close(viewer_window* w);

int viewer_offscreen_open(const viewer_def* def, viewer_offscreen** out, char* msg, size_t msg_size);
/* Renders and writes dir/frame_%05u.png. */
int viewer_offscreen_frame(viewer_offscreen* o, viewer_scene* s, const viewer_camera* cam, const rtcd_world* world,
                           int show_contacts, const char* path, char* msg, size_t msg_size);
void viewer_offscreen_close(viewer_offscreen* o);

#endif
