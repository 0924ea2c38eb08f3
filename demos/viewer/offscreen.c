/* PNG frames with no display: OSMesa renders the shared drawing code into a
 * buffer in memory, at twice the frame's size in each direction, averaged
 * down 2x2 (OSMesa has no multisampling; edges would stair-step). */
#include "viewer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VIEWER_HAVE_OSMESA
#include <GL/osmesa.h>

#define SUPERSAMPLE 2

struct viewer_offscreen {
    OSMesaContext ctx;
    viewer_gl gl;
    uint32_t width, height;        /* the frames' */
    uint8_t* buffer;               /* RGBA, SUPERSAMPLE times larger each way, bottom row first */
    uint8_t* rgb;                  /* the frame, top row first */
};

static viewer_gl_proc osmesa_loader(const char* name) { return (viewer_gl_proc)OSMesaGetProcAddress(name); }

int viewer_offscreen_open(const viewer_def* def, viewer_offscreen** out, char* msg, size_t msg_size)
{
    *out = NULL;
    if (msg_size) msg[0] = '\0';
    viewer_offscreen* o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    o->width = def->width;
    o->height = def->height;
    size_t big = (size_t)def->width * SUPERSAMPLE * def->height * SUPERSAMPLE;
    o->buffer = malloc(4 * big);
    o->rgb = malloc(3 * (size_t)def->width * def->height);
    o->ctx = OSMesaCreateContextExt(OSMESA_RGBA, 24, 0, 0, NULL);
    if (!o->buffer || !o->rgb || !o->ctx) {
        snprintf(msg, msg_size, "cannot create an off-screen OpenGL context (OSMesa)%s", o->ctx ? ": out of memory" : "");
        viewer_offscreen_close(o);
        return -1;
    }
    if (!OSMesaMakeCurrent(o->ctx, o->buffer, GL_UNSIGNED_BYTE, (GLsizei)(def->width * SUPERSAMPLE),
                           (GLsizei)(def->height * SUPERSAMPLE)) ||
        viewer_gl_load(&o->gl, osmesa_loader, msg, msg_size) != 0) {
        if (!msg[0]) snprintf(msg, msg_size, "cannot make the OSMesa context current");
        viewer_offscreen_close(o);
        return -1;
    }
    *out = o;
    return 0;
}

int viewer_offscreen_frame(viewer_offscreen* o, viewer_scene* s, const viewer_camera* cam, const rtcd_world* world,
                           int show_contacts, const char* path, char* msg, size_t msg_size)
{
    uint32_t bw = o->width * SUPERSAMPLE, bh = o->height * SUPERSAMPLE;
    /* current again: a window's context may have been made current since */
    if (!OSMesaMakeCurrent(o->ctx, o->buffer, GL_UNSIGNED_BYTE, (GLsizei)bw, (GLsizei)bh)) {
        snprintf(msg, msg_size, "cannot make the OSMesa context current");
        return -1;
    }
    viewer_draw(&o->gl, s, cam, world, show_contacts, (int)bw, (int)bh);
    o->gl.Finish();
    /* 2x2 box filter, flipped: OSMesa's first row is the bottom one */
    for (uint32_t y = 0; y < o->height; ++y) {
        uint8_t* dst = o->rgb + 3 * (size_t)o->width * y;
        for (uint32_t x = 0; x < o->width; ++x)
            for (int c = 0; c < 3; ++c) {
                unsigned sum = 0;
                for (int j = 0; j < SUPERSAMPLE; ++j) {
                    const uint8_t* row = o->buffer + 4 * (size_t)bw * ((o->height - 1 - y) * SUPERSAMPLE + (uint32_t)j);
                    for (int i = 0; i < SUPERSAMPLE; ++i) sum += row[4 * (x * SUPERSAMPLE + (uint32_t)i) + (uint32_t)c];
                }
                dst[3 * x + (uint32_t)c] = (uint8_t)((sum + SUPERSAMPLE * SUPERSAMPLE / 2) / (SUPERSAMPLE * SUPERSAMPLE));
            }
    }
    return viewer_write_png(path, o->rgb, o->width, o->height, msg, msg_size);
}

void viewer_offscreen_close(viewer_offscreen* o)
{
    if (!o) return;
    if (o->ctx) {
        OSMesaMakeCurrent(NULL, NULL, GL_UNSIGNED_BYTE, 0, 0); /* releases the buffer's framebuffer */
        OSMesaDestroyContext(o->ctx);
    }
    free(o->buffer);
    free(o->rgb);
    free(o);
}

#else /* built without OSMesa */

int viewer_offscreen_open(const viewer_def* def, viewer_offscreen** out, char* msg, size_t msg_size)
{
    (void)def;
    *out = NULL;
    snprintf(msg, msg_size, "--frames: this build has no off-screen renderer (OSMesa and libpng were not found at "
                            "configure time; Debian: libosmesa6-dev libpng-dev)");
    return -1;
}

int viewer_offscreen_frame(viewer_offscreen* o, viewer_scene* s, const viewer_camera* cam, const rtcd_world* world,
                           int show_contacts, const char* path, char* msg, size_t msg_size)
{
    (void)o, (void)s, (void)cam, (void)world, (void)show_contacts, (void)path;
    snprintf(msg, msg_size, "no off-screen renderer");
    return -1;
}

void viewer_offscreen_close(viewer_offscreen* o) { (void)o; }

#endif
