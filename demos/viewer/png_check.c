/* The tests' PNG checker (libpng): files that are valid PNG images of at
 * least a given size and not blank, and for the demos' frames, a complete
 * numbered sequence in which the bodies show and that is not one picture
 * repeated.
 *
 *   png_check [--min-size WxH] [--bodies] FILE...
 *   png_check --frames DIR N [--min-size WxH] [--bodies]
 *
 * --frames: DIR holds exactly frame_00000.png .. frame_<N-1>.png, and the
 * last frame differs from the first in at least 0.5 % of its pixels.
 * --bodies: at least 1 % of each image's pixels are strongly coloured (the
 * viewer's body palette; its ground and background are greys).
 * Every image: at least 16 distinct colours and a luminance spread (standard
 * deviation) of at least 4 levels. Exit 0 when everything holds, else 1 with
 * the reason on stderr. */
#include <dirent.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct image {
    uint32_t w, h;
    uint8_t* rgb;
} image;

static int load(const char* path, image* im)
{
    png_image p;
    memset(&p, 0, sizeof p);
    p.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&p, path)) {
        fprintf(stderr, "png_check: %s: not a readable PNG (%s)\n", path, p.message);
        return -1;
    }
    p.format = PNG_FORMAT_RGB;
    im->w = p.width;
    im->h = p.height;
    im->rgb = malloc(PNG_IMAGE_SIZE(p));
    if (!im->rgb || !png_image_finish_read(&p, NULL, im->rgb, 0, NULL)) {
        fprintf(stderr, "png_check: %s: cannot decode (%s)\n", path, im->rgb ? p.message : "out of memory");
        png_image_free(&p);
        free(im->rgb);
        im->rgb = NULL;
        return -1;
    }
    return 0;
}

static int cmp_u32(const void* a, const void* b)
{
    uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
    return x < y ? -1 : (x > y);
}

/* Checks one image; prints its figures. */
static int check(const char* path, const image* im, uint32_t min_w, uint32_t min_h, int bodies)
{
    size_t n = (size_t)im->w * im->h;
    if (im->w < min_w || im->h < min_h) {
        fprintf(stderr, "png_check: %s: %ux%u, smaller than %ux%u\n", path, im->w, im->h, min_w, min_h);
        return -1;
    }
    uint32_t* colours = malloc(n * sizeof *colours);
    if (!colours) return -1;
    double sum = 0, sum2 = 0;
    size_t saturated = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = im->rgb + 3 * i;
        colours[i] = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        double y = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
        sum += y;
        sum2 += y * y;
        int hi = p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2]) : (p[1] > p[2] ? p[1] : p[2]);
        int lo = p[0] < p[1] ? (p[0] < p[2] ? p[0] : p[2]) : (p[1] < p[2] ? p[1] : p[2]);
        saturated += hi - lo >= 80;
    }
    qsort(colours, n, sizeof *colours, cmp_u32);
    size_t distinct = n ? 1 : 0;
    for (size_t i = 1; i < n; ++i) distinct += colours[i] != colours[i - 1];
    free(colours);
    double mean = n ? sum / (double)n : 0, sd = n ? sqrt(fmax(0.0, sum2 / (double)n - mean * mean)) : 0;
    double sat_pct = n ? 100.0 * (double)saturated / (double)n : 0;
    printf("%s: %ux%u, %zu colours, luminance %.1f +- %.1f, %.2f %% strongly coloured\n", path, im->w, im->h, distinct,
           mean, sd, sat_pct);
    if (distinct < 16 || sd < 4.0) {
        fprintf(stderr, "png_check: %s: blank (%zu colours, luminance deviation %.2f)\n", path, distinct, sd);
        return -1;
    }
    if (bodies && sat_pct < 1.0) {
        fprintf(stderr, "png_check: %s: no bodies drawn (%.3f %% strongly coloured pixels, want >= 1 %%)\n", path,
                sat_pct);
        return -1;
    }
    return 0;
}

/* Exactly frame_00000.png .. frame_<count-1>.png in dir: no more, no fewer. */
static int count_frames(const char* dir, unsigned count)
{
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "png_check: cannot open the folder %s\n", dir);
        return -1;
    }
    unsigned found = 0, bad = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        unsigned k;
        char tail[8];
        if (sscanf(e->d_name, "frame_%u.%7s", &k, tail) != 2) continue;
        if (strcmp(tail, "png") != 0 || k >= count) bad++;
        else found++;
    }
    closedir(d);
    if (found != count || bad) {
        fprintf(stderr, "png_check: %s: %u of frame_00000.png .. frame_%05u.png, %u other frame files\n", dir, found,
                count - 1, bad);
        return -1;
    }
    return 0;
}

int main(int argc, char** argv)
{
    uint32_t min_w = 1, min_h = 1;
    int bodies = 0;
    const char* frames_dir = NULL;
    unsigned frames = 0;
    int first_file = argc;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--min-size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ux%u", &min_w, &min_h) != 2) return fprintf(stderr, "png_check: bad --min-size\n"), 2;
        } else if (!strcmp(argv[i], "--bodies")) {
            bodies = 1;
        } else if (!strcmp(argv[i], "--frames") && i + 2 < argc) {
            frames_dir = argv[++i];
            frames = (unsigned)strtoul(argv[++i], NULL, 10);
        } else {
            first_file = i;
            break;
        }
    }
    int failed = 0;
    if (frames_dir) {
        if (frames == 0 || count_frames(frames_dir, frames) != 0) return 1;
        image first = {0, 0, NULL};
        for (unsigned k = 0; k < frames && !failed; ++k) {
            char path[4096];
            snprintf(path, sizeof path, "%s/frame_%05u.png", frames_dir, k);
            image im = {0, 0, NULL};
            failed = load(path, &im) != 0 || check(path, &im, min_w, min_h, bodies) != 0;
            if (!failed && k == 0) {
                first = im;
                continue;
            }
            if (!failed && k + 1 == frames) {
                /* the bodies moved: the last frame is not the first one again */
                size_t n = (size_t)im.w * im.h, differ = 0;
                if (im.w != first.w || im.h != first.h) differ = n;
                else
                    for (size_t i = 0; i < n; ++i) differ += memcmp(im.rgb + 3 * i, first.rgb + 3 * i, 3) != 0;
                printf("%s: %.2f %% of its pixels differ from frame_00000.png\n", path, n ? 100.0 * (double)differ / (double)n : 0);
                if (frames > 1 && differ * 200 < n) {
                    fprintf(stderr, "png_check: the frames are (nearly) all the same picture\n");
                    failed = 1;
                }
            }
            free(im.rgb);
        }
        free(first.rgb);
    } else {
        if (first_file >= argc) return fprintf(stderr, "png_check: no files\n"), 2;
        for (int i = first_file; i < argc; ++i) {
            image im = {0, 0, NULL};
            failed |= load(argv[i], &im) != 0 || check(argv[i], &im, min_w, min_h, bodies) != 0;
            free(im.rgb);
        }
    }
    if (!failed) printf("png_check: OK\n");
    return failed ? 1 : 0;
}
