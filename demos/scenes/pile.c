#include "pile.h"

#include "scene_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct world_box {
    float lo[3], hi[3];
    uint32_t body;
} world_box;

static int by_lo_x(const void* a, const void* b)
{
    const world_box* x = a;
    const world_box* y = b;
    return x->lo[0] < y->lo[0] ? -1 : (x->lo[0] > y->lo[0] ? 1 : (int)x->body - (int)y->body);
}

/* Sort and sweep on x over the bodies' world boxes. */
static rtcd_error find_pairs(scene_pile* p)
{
    float lo[3], hi[3];
    rtcd_mesh_bounds(p->mesh, lo, hi);
    world_box* boxes = malloc(p->count * sizeof *boxes);
    if (!boxes) return RTCD_ERROR_OUT_OF_MEMORY;
    for (uint32_t b = 0; b < p->count; ++b) {
        const rtcd_transform* t = &p->poses[b];
        for (int k = 0; k < 3; ++k) {
            float c = t->translation[k], e = 0.0f;
            for (int j = 0; j < 3; ++j) {
                c += t->rotation[3 * k + j] * 0.5f * (lo[j] + hi[j]);
                e += fabsf(t->rotation[3 * k + j]) * 0.5f * (hi[j] - lo[j]);
            }
            boxes[b].lo[k] = c - e;
            boxes[b].hi[k] = c + e;
        }
        boxes[b].body = b;
    }
    qsort(boxes, p->count, sizeof *boxes, by_lo_x);
    uint32_t cap = 16 * p->count + 16;
    p->pairs = malloc(cap * sizeof *p->pairs);
    if (!p->pairs) {
        free(boxes);
        return RTCD_ERROR_OUT_OF_MEMORY;
    }
    p->pair_count = 0;
    for (uint32_t i = 0; i < p->count; ++i) {
        for (uint32_t j = i + 1; j < p->count && boxes[j].lo[0] <= boxes[i].hi[0]; ++j) {
            if (boxes[j].lo[1] > boxes[i].hi[1] || boxes[j].hi[1] < boxes[i].lo[1] ||
                boxes[j].lo[2] > boxes[i].hi[2] || boxes[j].hi[2] < boxes[i].lo[2])
                continue;
            if (p->pair_count == cap) {
                cap *= 2;
                void* grown = realloc(p->pairs, cap * sizeof *p->pairs);
                if (!grown) {
                    free(boxes);
                    return RTCD_ERROR_OUT_OF_MEMORY;
                }
                p->pairs = grown;
            }
            uint32_t a = boxes[i].body, b = boxes[j].body;
            p->pairs[p->pair_count][0] = a < b ? a : b;
            p->pairs[p->pair_count][1] = a < b ? b : a;
            p->pair_count++;
        }
    }
    free(boxes);
    return RTCD_OK;
}

rtcd_error scene_pile_create(uint32_t count, float spacing, uint64_t seed, scene_pile* out)
{
    memset(out, 0, sizeof *out);
    if (count == 0 || !(spacing > 0.0f)) return RTCD_ERROR_INVALID_ARGUMENT;
    rtcd_generated_mesh g;
    const float radius = 0.5f;
    rtcd_error err = rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, radius, seed, &g);
    if (err != RTCD_OK) return err;
    if ((err = scene_mesh_from_generated(&g, "avalanche_blob", &out->mesh)) != RTCD_OK) return err;
    out->count = count;
    out->poses = malloc(count * sizeof *out->poses);
    if (!out->poses) {
        scene_pile_destroy(out);
        return RTCD_ERROR_OUT_OF_MEMORY;
    }
    uint32_t side = (uint32_t)ceil(cbrt((double)count));
    float step = spacing * 2.0f * radius;
    uint64_t rng = seed;
    for (uint32_t b = 0; b < count; ++b) {
        rtcd_transform pose = scene_random_pose(&rng, 0, 0, 0);
        float t[3] = {(float)(b % side), (float)((b / side) % side), (float)(b / (side * side))};
        for (int k = 0; k < 3; ++k) t[k] = t[k] * step + (float)(scene_rng_uniform(&rng) - 0.5) * 0.1f * step;
        for (int k = 0; k < 3; ++k) pose.translation[k] = t[k];
        out->poses[b] = pose;
    }
    err = find_pairs(out);
    if (err != RTCD_OK) scene_pile_destroy(out);
    return err;
}

void scene_pile_destroy(scene_pile* p)
{
    rtcd_mesh_release(p->mesh);
    free(p->poses);
    free(p->pairs);
    memset(p, 0, sizeof *p);
}
