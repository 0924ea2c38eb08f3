/* The four-at-a-time candidate test (shared/candidates4.h, SSE here as on
 * the CPU) against the shared per-vertex one it must equal
 * (pair_is_candidate), on random grids, poses and points, many of them on
 * or near the grid box's faces and the predictive extension's edge, in
 * groups of 1 to 4: as the CPU takes its clusters' vertices
 * (pair_candidates_of4, by id) and as the kernels take them
 * (pair_candidates4, consecutive). */
#include "test_util.h"

#include "shared/candidates4.h"

#include <math.h>
#include <string.h>

enum { POINTS = 4096 };

typedef struct fixture {
    unsigned char solid[RTCD_GRID_BYTES];
    unsigned char near[RTCD_NEAR_BYTES];
    rtcd_mesh_view view;
    rtcd_xform x, inv;
    float vertices[3 * POINTS];
    uint32_t ids[POINTS];
} fixture;

static void random_fixture(test_rng* rng, fixture* f)
{
    memset(&f->view, 0, sizeof f->view);
    for (int i = 0; i < RTCD_GRID_BYTES; ++i) f->solid[i] = (unsigned char)test_rng_next(rng);
    for (int i = 0; i < RTCD_NEAR_BYTES; ++i) f->near[i] = (unsigned char)(test_rng_next(rng) % 64);
    f->view.solid = f->solid;
    f->view.near = f->near;
    f->view.grid_lo = v3((float)test_rng_range(rng, -3, 1), (float)test_rng_range(rng, -3, 1), (float)test_rng_range(rng, -3, 1));
    f->view.grid_inv = v3((float)test_rng_range(rng, 2, 40), (float)test_rng_range(rng, 2, 40), (float)test_rng_range(rng, 2, 40));
    f->view.min_cell = 1.0f / rtcd_maxf(f->view.grid_inv.x, rtcd_maxf(f->view.grid_inv.y, f->view.grid_inv.z));
    rtcd_transform pose = test_random_pose(rng, 2.0f);
    memcpy(f->x.r, pose.rotation, sizeof f->x.r);
    memcpy(f->x.t, pose.translation, sizeof f->x.t);
    f->inv = xf_inverse(&f->x);
}

/* A caster vertex whose image lies at grid coordinates g, nudged by a few ulps. */
static void place(test_rng* rng, const fixture* f, const float g[3], float* out)
{
    rtcd_v3 p = v3(f->view.grid_lo.x + g[0] / f->view.grid_inv.x, f->view.grid_lo.y + g[1] / f->view.grid_inv.y,
                   f->view.grid_lo.z + g[2] / f->view.grid_inv.z);
    rtcd_v3 v = xf_point(&f->inv, p);
    float c[3] = {v.x, v.y, v.z};
    for (int k = 0; k < 3; ++k) {
        int ulps = (int)(test_rng_next(rng) % 9) - 4;
        out[k] = ulps > 0 ? nextafterf(c[k], INFINITY) : (ulps < 0 ? nextafterf(c[k], -INFINITY) : c[k]);
    }
}

static void random_points(test_rng* rng, fixture* f, float extension)
{
    const float n = (float)RTCD_GRID_N;
    float cell = 1.0f / f->view.grid_inv.x; /* the extension in x cells, roughly */
    for (uint32_t i = 0; i < POINTS; ++i) {
        float g[3];
        for (int k = 0; k < 3; ++k) g[k] = (float)test_rng_range(rng, -6, n + 6);
        switch (test_rng_next(rng) % 4) {
        case 0: break; /* anywhere */
        case 1: g[test_rng_next(rng) % 3] = test_rng_next(rng) & 1 ? 0.0f : n; break; /* on a face */
        case 2: { /* at the extension from a face */
            int k = (int)(test_rng_next(rng) % 3);
            float e = extension / cell;
            g[k] = test_rng_next(rng) & 1 ? -e : n + e;
            break;
        }
        default: /* just inside or outside a face */
            g[test_rng_next(rng) % 3] = (float)test_rng_range(rng, -1e-3, 1e-3) + (test_rng_next(rng) & 1 ? n : 0.0f);
        }
        place(rng, f, g, f->vertices + 3 * i);
        f->ids[i] = (uint32_t)(test_rng_next(rng) % POINTS);
    }
}

static void compare_all(const rtcd_pair_ctx* c, const fixture* f, long* mismatches, long* candidates)
{
    for (uint32_t j = 0; j + 4 <= POINTS; j += 4) {
        uint32_t count = 1 + j / 4 % 4;
        uint32_t got = pair_candidates_of4(c, &f->view, &f->x, f->vertices, f->ids + j, count);
        for (uint32_t k = 0; k < 4; ++k) {
            int want = k < count && pair_is_candidate(c, &f->view, xf_point(&f->x, v3_load(f->vertices + 3 * f->ids[j + k])));
            *candidates += want;
            *mismatches += want != (int)((got >> k) & 1u);
        }
        uint32_t got4 = pair_candidates4(c, &f->view, &f->x, f->vertices, j, count);
        for (uint32_t k = 0; k < 4; ++k) {
            int want = k < count && pair_is_candidate(c, &f->view, xf_point(&f->x, v3_load(f->vertices + 3 * (j + k))));
            *mismatches += want != (int)((got4 >> k) & 1u);
        }
    }
}

static void test_candidates_match_pair_is_candidate(void** state)
{
    (void)state;
    test_rng rng = {0x5eed2c8u};
    static fixture f;
    long mismatches = 0, candidates = 0, tested = 0;
    for (int round = 0; round < 200; ++round) {
        random_fixture(&rng, &f);
        rtcd_pair_ctx c;
        memset(&c, 0, sizeof c);
        c.predict_pass = (rtcd_u32)(round & 1);
        c.extension = c.predict_pass ? (float)test_rng_range(&rng, 0.001, 0.5) : 0.0f;
        random_points(&rng, &f, c.predict_pass ? c.extension : 0.05f);
        compare_all(&c, &f, &mismatches, &candidates);
        tested += POINTS / 4 * 10 / 4; /* 1 + 2 + 3 + 4 lanes per four groups */
    }
    assert_int_equal(mismatches, 0);
    /* Both answers occur often: the comparison is not all "no". */
    assert_true(candidates > tested / 20 && candidates < tested - tested / 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_candidates_match_pair_is_candidate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
