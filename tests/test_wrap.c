/* The watertight wrap (rtcd_wrap.h) on shapes whose envelope is known
 * analytically: the volume of {x : d(x, input) <= r} with cavities filled
 * (Steiner's formula for flat convex pieces, the exact sum of slabs, edge
 * tubes and corners for the open cube), and the two-sided distance (r, or
 * the depth of the input's inner parts below the envelope plus r). Every
 * result must pass rtcd_mesh_create with no flags. Plus argument checks:
 * NaN, bad indices, the voxel limit named in the message, and the build
 * without OpenVDB saying "wrap not available". */
#include "test_util.h"

#include <rtcd/rtcd_wrap.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct soup {
    float* v;
    uint32_t* i;
    uint32_t nv, nt, cap_v, cap_t;
} soup;

static uint32_t soup_vertex(soup* s, double x, double y, double z)
{
    if (s->nv == s->cap_v) {
        s->cap_v = s->cap_v ? 2 * s->cap_v : 256;
        s->v = realloc(s->v, 3 * sizeof(float) * s->cap_v);
        assert_non_null(s->v);
    }
    s->v[3 * s->nv] = (float)x;
    s->v[3 * s->nv + 1] = (float)y;
    s->v[3 * s->nv + 2] = (float)z;
    return s->nv++;
}

static void soup_tri(soup* s, uint32_t a, uint32_t b, uint32_t c)
{
    if (s->nt == s->cap_t) {
        s->cap_t = s->cap_t ? 2 * s->cap_t : 256;
        s->i = realloc(s->i, 3 * sizeof(uint32_t) * s->cap_t);
        assert_non_null(s->i);
    }
    s->i[3 * s->nt] = a;
    s->i[3 * s->nt + 1] = b;
    s->i[3 * s->nt + 2] = c;
    ++s->nt;
}

/* An n x n grid of quads from o spanning u and v (counter-clockwise seen
 * along u x v); cells with skip(i, j) set are left out (a hole). */
static void soup_grid(soup* s, const double o[3], const double u[3], const double v[3], int n,
                      int (*omit)(int, int))
{
    uint32_t base = s->nv;
    for (int j = 0; j <= n; ++j)
        for (int i = 0; i <= n; ++i)
            soup_vertex(s, o[0] + (u[0] * i + v[0] * j) / n, o[1] + (u[1] * i + v[1] * j) / n,
                        o[2] + (u[2] * i + v[2] * j) / n);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            if (omit && omit(i, j)) continue;
            uint32_t a = base + j * (n + 1) + i;
            soup_tri(s, a, a + 1, a + n + 2);
            soup_tri(s, a, a + n + 2, a + n + 1);
        }
}

/* The box [lo, hi] as six grids; face `open` (0..5, -1 none) gets skip. */
static void soup_box(soup* s, const double lo[3], const double hi[3], int n, int open, int (*omit)(int, int))
{
    double e[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    double X[3] = {e[0], 0, 0}, Y[3] = {0, e[1], 0}, Z[3] = {0, 0, e[2]};
    double mX[3] = {-e[0], 0, 0}, mY[3] = {0, -e[1], 0};
    double o_lo[3] = {lo[0], lo[1], lo[2]};
    double o_top[3] = {lo[0], lo[1], hi[2]}, o_x1[3] = {hi[0], lo[1], lo[2]}, o_y1[3] = {hi[0], hi[1], lo[2]};
    double o_x0[3] = {lo[0], hi[1], lo[2]};
    /* bottom (-z), top (+z), -y, +x, +y, -x */
    soup_grid(s, o_lo, Y, X, n, open == 0 ? omit : NULL);
    soup_grid(s, o_top, X, Y, n, open == 1 ? omit : NULL);
    soup_grid(s, o_lo, X, Z, n, open == 2 ? omit : NULL);
    soup_grid(s, o_x1, Y, Z, n, open == 3 ? omit : NULL);
    soup_grid(s, o_y1, mX, Z, n, open == 4 ? omit : NULL);
    soup_grid(s, o_x0, mY, Z, n, open == 5 ? omit : NULL);
}

static int skip_all(int i, int j) { return (void)i, (void)j, 1; }
/* 7 x 7 face without its central 5 x 5 cells: a hole of 20 edges. */
static int skip_centre5(int i, int j) { return i >= 1 && i <= 5 && j >= 1 && j <= 5; }

static void soup_free(soup* s)
{
    free(s->v);
    free(s->i);
    memset(s, 0, sizeof *s);
}

/* Wraps s with the defaults; checks the result is a valid mesh with no flags. */
static rtcd_wrapped* wrap_checked(const soup* s, rtcd_wrap_def def)
{
    rtcd_wrapped* w = NULL;
    rtcd_error err = rtcd_wrap(&def, s->v, s->nv, 0, s->i, s->nt, &w);
    if (err != RTCD_OK) fail_msg("rtcd_wrap: %s", rtcd_last_error_message());
    const float* v;
    const uint32_t* idx;
    uint32_t nv, nt;
    assert_int_equal(rtcd_wrapped_mesh(w, &v, &nv, &idx, &nt), RTCD_OK);
    rtcd_mesh_def md = rtcd_default_mesh_def();
    md.vertices = v;
    md.vertex_count = nv;
    md.indices = idx;
    md.triangle_count = nt;
    rtcd_mesh* m = NULL;
    err = rtcd_mesh_create(&md, &m);
    if (err != RTCD_OK) fail_msg("wrapped mesh refused: %s", rtcd_last_error_message());
    /* The mesh's own volume agrees with the report's. */
    rtcd_mass_properties mp = rtcd_mesh_mass_properties(m);
    const rtcd_wrap_report* r = rtcd_wrapped_report(w);
    assert_true(fabs(mp.volume - r->volume) <= 1e-3 * fabs(r->volume));
    assert_true(nt <= def.max_triangles);
    rtcd_mesh_release(m);
    return w;
}

/* Checks volume within tol_v of v_ref and distance within tol_d of d_ref.
 * The level is found to a fraction of a voxel h; at open rims and concave
 * edges the envelope stands up to r + 0.65 h off (measured), hence 0.75 h. */
static void expect(const char* what, const rtcd_wrap_report* r, double v_ref, double tol_v, double d_ref,
                   double tol_d)
{
    printf("%-16s voxel %.4f r %.4f tris %u->%u volume %.5f (ref %.5f, tol %.5f) distance %.4f (ref %.4f, "
           "tol %.4f) in->out %.4f out->in %.4f cavities %u\n",
           what, r->voxel_size, r->offset, r->input_triangles, r->output_triangles, r->volume, v_ref, tol_v,
           r->distance, d_ref, tol_d, r->distance_in_out, r->distance_out_in, r->removed_cavities);
    assert_true(fabs(r->volume - v_ref) <= tol_v);
    assert_true(fabs(r->distance - d_ref) <= tol_d);
}

#define WRAP_OR_SKIP()                                                                                           \
    do {                                                                                                        \
        if (!rtcd_wrap_available()) skip();                                                                     \
    } while (0)

/* A unit cube without its top face: a cup whose walls are 2r thick. Exact:
 * inside the cube, within r of the five faces; outside below the rim, the
 * convex cube's offset less its part above the top; above the rim, a tube
 * around the square loop (integral of the 2D band 8p + (pi-4)p^2, p^2 = r^2 - h^2). */
static void open_cube(void** state)
{
    (void)state;
    WRAP_OR_SKIP();
    soup s = {0};
    double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    soup_box(&s, lo, hi, 1, 1, skip_all);
    assert_int_equal(s.nt, 10);
    rtcd_wrapped* w = wrap_checked(&s, rtcd_default_wrap_def());
    const rtcd_wrap_report* r = rtcd_wrapped_report(w);
    double o = r->offset, h = r->voxel_size;
    double v_ref = (1 - (1 - 2 * o) * (1 - 2 * o) * (1 - o)) + (5 * o + 2 * M_PI * o * o + 2.0 / 3 * M_PI * o * o * o) +
                   (2 * M_PI * o * o + 2.0 / 3 * (M_PI - 4) * o * o * o);
    /* The level is found to a fraction of a voxel over both sides' 10 units of area. */
    expect("open cube", r, v_ref, 10 * 0.15 * h, o, 0.75 * h);
    rtcd_wrapped_release(w);
    soup_free(&s);
}

/* A 7 x 7 cube whose top lacks its central 5 x 5 cells (a hole of 20 edges,
 * far larger than the repair's 8): walls 2r thick around area A. */
static void cube_hole20(void** state)
{
    (void)state;
    WRAP_OR_SKIP();
    soup s = {0};
    double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    soup_box(&s, lo, hi, 7, 1, skip_centre5);
    double area = 6 - 25.0 / 49;
    rtcd_wrapped* w = wrap_checked(&s, rtcd_default_wrap_def());
    const rtcd_wrap_report* r = rtcd_wrapped_report(w);
    double o = r->offset, h = r->voxel_size;
    /* 2 r A plus edge and corner terms below 20 r^2. */
    expect("cube hole 20", r, 2 * o * area, 2 * area * 0.15 * h + 20 * o * o, o, 0.75 * h);
    rtcd_wrapped_release(w);
    soup_free(&s);
}

/* A flat convex piece of area A and perimeter P: Steiner's formula
 * V = 2 A r + (pi/2) P r^2 + (4/3) pi r^3, exactly. */
static void flat_piece(const char* what, int n)
{
    soup s = {0};
    double o0[3] = {0, 0, 0}, X[3] = {1, 0, 0}, Y[3] = {0, 1, 0};
    soup_grid(&s, o0, X, Y, n, NULL);
    rtcd_wrapped* w = wrap_checked(&s, rtcd_default_wrap_def());
    const rtcd_wrap_report* r = rtcd_wrapped_report(w);
    double o = r->offset, h = r->voxel_size;
    double v_ref = 2 * o + M_PI / 2 * 4 * o * o + 4.0 / 3 * M_PI * o * o * o;
    expect(what, r, v_ref, 2 * 0.15 * h, o, 0.75 * h);
    rtcd_wrapped_release(w);
    soup_free(&s);
}

static void single_quad(void** state)
{
    (void)state;
    WRAP_OR_SKIP();
    flat_piece("single quad", 1);
}

static void cloth_grid(void** state)
{
    (void)state;
    WRAP_OR_SKIP();
    flat_piece("cloth 40x40", 40);
}

/* Two closed boxes through each other: A = [0,1]^3, B = [0.5,1.5] x
 * [0.25,0.75]^2. The union holds 1.125 and has area 7; the envelope loses
 * the inner walls, whose deepest point, the centre of B's face x = 0.5, lies
 * 0.5 below the union's surface: the two-sided distance is 0.5 + r. */
static void interpenetrating_boxes(void** state)
{
    (void)state;
    WRAP_OR_SKIP();
    soup s = {0};
    double alo[3] = {0, 0, 0}, ahi[3] = {1, 1, 1}, blo[3] = {0.5, 0.25, 0.25}, bhi[3] = {1.5, 0.75, 0.75};
    soup_box(&s, alo, ahi, 4, -1, NULL);
    soup_box(&s, blo, bhi, 4, -1, NULL);
    rtcd_wrapped* w = wrap_checked(&s, rtcd_default_wrap_def());
    const rtcd_wrap_report* r = rtcd_wrapped_report(w);
    double o = r->offset, h = r->voxel_size;
    expect("two boxes", r, 1.125 + 7 * o, 7 * 0.15 * h + 20 * o * o, 0.5 + o, 0.75 * h);
    assert_true(r->distance_in_out > r->distance_out_in);
    rtcd_wrapped_release(w);
    soup_free(&s);
}

/* A hollow ball (two nested closed cubes, the inner one inside out) and a
 * cube floating in it: the envelope is the outer cube's alone. */
static void cavity_removed(void** state)
{
    (void)state;
    WRAP_OR_SKIP();
    soup s = {0};
    double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, ilo[3] = {0.2, 0.2, 0.2}, ihi[3] = {0.8, 0.8, 0.8};
    double flo[3] = {0.4, 0.4, 0.4}, fhi[3] = {0.6, 0.6, 0.6};
    soup_box(&s, lo, hi, 2, -1, NULL);
    uint32_t first = s.nt;
    soup_box(&s, ilo, ihi, 2, -1, NULL);
    for (uint32_t t = first; t < s.nt; ++t) { /* the cavity's wall faces inward */
        uint32_t k = s.i[3 * t + 1];
        s.i[3 * t + 1] = s.i[3 * t + 2];
        s.i[3 * t + 2] = k;
    }
    soup_box(&s, flo, fhi, 2, -1, NULL);
    rtcd_wrapped* w = wrap_checked(&s, rtcd_default_wrap_def());
    const rtcd_wrap_report* r = rtcd_wrapped_report(w);
    double o = r->offset, h = r->voxel_size;
    /* The shells around the three cubes bound 6 surfaces beside the outer
     * one: each shell's inner wall (3, negative volume) and the outer walls
     * of the inner and floating cubes' shells (2, nested). */
    assert_int_equal(r->removed_cavities, 5);
    /* The solid outer cube grown by r: Steiner 1 + 6r + 3 pi r^2 + 4/3 pi r^3. */
    double v_ref = 1 + 6 * o + 3 * M_PI * o * o + 4.0 / 3 * M_PI * o * o * o;
    /* The floating cube's farthest point from the outer surface: its corner (0.4, 0.4, 0.4) to the nearest face. */
    expect("cavity", r, v_ref, 6 * 0.15 * h, 0.4 + o, 0.75 * h);
    rtcd_wrapped_release(w);
    soup_free(&s);
}

/* Bad input: a clear error, nothing allocated, the limit named. */
static void bad_input(void** state)
{
    (void)state;
    soup s = {0};
    double o0[3] = {0, 0, 0}, X[3] = {1, 0, 0}, Y[3] = {0, 1, 0};
    soup_grid(&s, o0, X, Y, 2, NULL);
    rtcd_wrap_def def = rtcd_default_wrap_def();
    rtcd_wrapped* w = (rtcd_wrapped*)&s; /* must be set to NULL on failure */
    assert_int_equal(rtcd_wrap(NULL, s.v, s.nv, 0, s.i, s.nt, &w), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(w);
    assert_int_equal(rtcd_wrap(&def, s.v, s.nv, 0, s.i, 0, &w), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_wrap(&def, s.v, s.nv, 4, s.i, s.nt, &w), RTCD_ERROR_INVALID_ARGUMENT);
    s.i[4] = s.nv;
    assert_int_equal(rtcd_wrap(&def, s.v, s.nv, 0, s.i, s.nt, &w), RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE);
    s.i[4] = 1;
    s.v[7] = NAN;
    assert_int_equal(rtcd_wrap(&def, s.v, s.nv, 0, s.i, s.nt, &w), RTCD_ERROR_MESH_NONFINITE_VERTEX);
    assert_non_null(strstr(rtcd_last_error_message(), "vertex 2"));
    s.v[7] = 0;
    rtcd_wrap_def bad = def;
    bad.voxel_size = 0;
    assert_int_equal(rtcd_wrap(&bad, s.v, s.nv, 0, s.i, s.nt, &w), RTCD_ERROR_INVALID_ARGUMENT);
    bad = def;
    bad.offset = NAN;
    assert_int_equal(rtcd_wrap(&bad, s.v, s.nv, 0, s.i, s.nt, &w), RTCD_ERROR_INVALID_ARGUMENT);
    /* A fine grid beyond the voxel bound: refused before anything is allocated, the limit named. */
    bad = def;
    bad.voxel_size = 1e-4f;
    rtcd_error err = rtcd_wrap(&bad, s.v, s.nv, 0, s.i, s.nt, &w);
    if (rtcd_wrap_available()) {
        assert_int_equal(err, RTCD_ERROR_MESH_TOO_LARGE);
        assert_non_null(strstr(rtcd_last_error_message(), "max_voxels (16777216)"));
        /* Every vertex at one point. */
        for (uint32_t i = 0; i < 3 * s.nv; ++i) s.v[i] = 2.5f;
        assert_int_equal(rtcd_wrap(&def, s.v, s.nv, 0, s.i, s.nt, &w), RTCD_ERROR_INVALID_ARGUMENT);
    } else {
        assert_int_equal(err, RTCD_ERROR_UNSUPPORTED);
        assert_non_null(strstr(rtcd_last_error_message(), "wrap not available"));
    }
    assert_null(w);
    soup_free(&s);
}

/* Extreme scales: a clear error or a valid envelope, never a crash or a hang. */
static void extreme_scales(void** state)
{
    (void)state;
    const double scales[] = {1e-30, 1e-6, 1e6, 1e30};
    for (int k = 0; k < 4; ++k) {
        soup s = {0};
        double o0[3] = {0, 0, 0}, X[3] = {scales[k], 0, 0}, Y[3] = {0, scales[k], 0};
        soup_grid(&s, o0, X, Y, 2, NULL);
        /* and one far-off triangle: a box 1e3 x 1e-3 flat */
        uint32_t a = soup_vertex(&s, 1e3, 0, 0), b = soup_vertex(&s, 1e3, 1e-3, 0), c = soup_vertex(&s, 1e3, 0, 1e-3);
        soup_tri(&s, a, b, c);
        rtcd_wrap_def def = rtcd_default_wrap_def();
        rtcd_wrapped* w = NULL;
        rtcd_error err = rtcd_wrap(&def, s.v, s.nv, 0, s.i, s.nt, &w);
        print_message("scale %g: %s %s\n", scales[k], rtcd_error_name(err), err ? rtcd_last_error_message() : "");
        if (err == RTCD_OK) {
            const float* v;
            const uint32_t* idx;
            uint32_t nv, nt;
            rtcd_wrapped_mesh(w, &v, &nv, &idx, &nt);
            rtcd_mesh_def md = rtcd_default_mesh_def();
            md.vertices = v;
            md.vertex_count = nv;
            md.indices = idx;
            md.triangle_count = nt;
            rtcd_mesh* m = NULL;
            assert_int_equal(rtcd_mesh_create(&md, &m), RTCD_OK);
            rtcd_mesh_release(m);
        } else {
            assert_true(err == RTCD_ERROR_MESH_OUT_OF_RANGE || err == RTCD_ERROR_UNSUPPORTED);
            assert_null(w);
        }
        rtcd_wrapped_release(w);
        soup_free(&s);
    }
}

/* rtcd_sampled_distance against a brute-force reference: two parallel unit
 * squares d apart (exactly d both ways), and one square against a larger one
 * (the overhang's far corner: exactly sqrt(2) x 0.5 one way, 0 the other). */
static void sampled_distance(void** state)
{
    (void)state;
    soup a = {0}, b = {0};
    double o0[3] = {0, 0, 0}, o1[3] = {0, 0, 0.3}, X[3] = {1, 0, 0}, Y[3] = {0, 1, 0};
    soup_grid(&a, o0, X, Y, 3, NULL);
    soup_grid(&b, o1, X, Y, 5, NULL);
    double ab, ba;
    double d = rtcd_sampled_distance(a.v, a.nv, a.i, a.nt, b.v, b.nv, b.i, b.nt, 1000, &ab, &ba);
    assert_true(fabs(d - 0.3) < 1e-6 && fabs(ab - 0.3) < 1e-6 && fabs(ba - 0.3) < 1e-6);
    soup_free(&b);
    double o2[3] = {-0.5, -0.5, 0}, X2[3] = {1.5, 0, 0}, Y2[3] = {0, 1.5, 0};
    soup_grid(&b, o2, X2, Y2, 3, NULL);
    d = rtcd_sampled_distance(a.v, a.nv, a.i, a.nt, b.v, b.nv, b.i, b.nt, 1000, &ab, &ba);
    assert_true(fabs(ab) < 1e-6);
    assert_true(fabs(ba - sqrt(0.5)) < 1e-6); /* the corner (-0.5, -0.5) is a vertex */
    a.i[0] = a.nv;
    assert_true(rtcd_sampled_distance(a.v, a.nv, a.i, a.nt, b.v, b.nv, b.i, b.nt, 10, NULL, NULL) < 0);
    soup_free(&a);
    soup_free(&b);
}

/* A build with OpenVDB loads the wrap's module (librtcd_wrap_vdb.so beside
 * librtcd); without this the cases below would all be skipped. */
static void module_loads(void** state)
{
    (void)state;
#ifdef RTCD_EXPECT_WRAP
    assert_true(rtcd_wrap_available());
#else
    print_message("built without the wrap: it says 'wrap not available'\n");
    assert_false(rtcd_wrap_available());
#endif
}

/* A program that wrapped, then forks, and whose child leaves by exit():
 * the module's log4cplus once made that exit wait for ever for a thread
 * pool the child does not have (core/wrap.cpp stops the pool on load). */
static void fork_after_wrap(void** state)
{
    (void)state;
    if (!rtcd_wrap_available()) skip();
    soup s = {0};
    const double lo[3] = {0.0, 0.0, 0.0}, hi[3] = {1.0, 1.0, 1.0};
    soup_box(&s, lo, hi, 1, -1, NULL);
    rtcd_wrap_def def = rtcd_default_wrap_def();
    rtcd_wrapped* w = NULL;
    assert_int_equal(rtcd_wrap(&def, s.v, s.nv, 3 * sizeof(float), s.i, s.nt, &w), RTCD_OK);
    rtcd_wrapped_release(w);
    soup_free(&s);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) exit(0);
    int status = 0, done = 0;
    for (int k = 0; k < 200 && !done; ++k) { /* 20 s */
        done = waitpid(pid, &status, WNOHANG) == pid;
        if (!done) usleep(100000);
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("the forked child did not finish exit() in 20 s");
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(module_loads),
        cmocka_unit_test(open_cube),         cmocka_unit_test(cube_hole20),
        cmocka_unit_test(single_quad),       cmocka_unit_test(cloth_grid),
        cmocka_unit_test(interpenetrating_boxes), cmocka_unit_test(cavity_removed),
        cmocka_unit_test(bad_input),         cmocka_unit_test(sampled_distance),
        cmocka_unit_test(extreme_scales),    cmocka_unit_test(fork_after_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
