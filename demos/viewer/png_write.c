/* PNG files through libpng: the frames (--frames) and nothing else. */
#include "viewer.h"

#include <stdio.h>

#ifdef VIEWER_HAVE_PNG
#include <png.h>
#include <setjmp.h>

int viewer_write_png(const char* path, const uint8_t* rgb, uint32_t width, uint32_t height, char* msg,
                     size_t msg_size)
{
    FILE* f = fopen(path, "wb");
    if (!f) {
        snprintf(msg, msg_size, "cannot write %s", path);
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    /* volatile: read after longjmp back here */
    volatile int ok = png && info;
    if (ok && setjmp(png_jmpbuf(png)) == 0) {
        png_init_io(png, f);
        png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        png_set_compression_level(png, 6);
        png_write_info(png, info);
        for (uint32_t y = 0; y < height; ++y) png_write_row(png, (png_const_bytep)(rgb + 3 * (size_t)width * y));
        png_write_end(png, NULL);
    } else {
        ok = 0;
    }
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    /* fclose's result too: a full disk shows up there */
    if (fclose(f) != 0) ok = 0;
    if (!ok) snprintf(msg, msg_size, "cannot write %s (libpng)", path);
    return ok ? 0 : -1;
}

#else

int viewer_write_png(const char* path, const uint8_t* rgb, uint32_t width, uint32_t height, char* msg,
                     size_t msg_size)
{
    (void)rgb, (void)width, (void)height;
    snprintf(msg, msg_size, "cannot write %s: built without libpng", path);
    return -1;
}

#endif
