/* Mesh repair: each repair on a mesh damaged in a known way, checked against
 * what the damage implies (counts from the generator's arrays, volumes of the
 * undamaged mesh, rtcd_mesh_create accepting the result), plus argument
 * checks, out-of-memory at every allocation, and determinism. */
#include "test_util.h"

#include <rtcd/rtcd_repair.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_V 453u

/* A triangle list the tests own (malloc), damaged step by step. */
typedef struct tmesh {
    float* v;
    uint32_t* i;
    uint32_t nv, nt;
} tmesh;

static tmesh tmesh_from(const rtcd_generated_mesh* g)
{
    tmesh m = {malloc(3 * sizeof(float) * g->vertex_count), malloc(3 * sizeof(uint32_t) * g->triangle_count),
               g->vertex_count, g->triangle_count};
    assert_non_null(m.v);
    assert_non_null(m.i);
    memcpy(m.v, g->vertices, 3 * sizeof(float) * m.nv);
    memcpy(m.i, g->indices, 3 * sizeof(uint32_t) * m.nt);
    return m;
}

static void tmesh_free(tmesh* m)
{
    free(m->v);
    free(m->i);
    memset(m, 0, sizeof *m);
}

static uint32_t add_vertex(tmesh* m, const double p[3])
{
    m->v = realloc(m->v, 3 * sizeof(float) * (m->nv + 1));
    assert_non_null(m->v);
    for (int k = 0; k < 3; ++k) m->v[3 * m->nv + k] = (float)p[k];
    return m->nv++;
}

static void add_triangle(tmesh* m, uint32_t a, uint32_t b, uint32_t c)
{
    m->i = realloc(m->i, 3 * sizeof(uint32_t) * (m->nt + 1));
    assert_non_null(m->i);
    m->i[3 * m->nt] = a, m->i[3 * m->nt + 1] = b, m->i[3 * m->nt + 2] = c;
    m->nt++;
}

static void remove_triangle(tmesh* m, uint32_t t)
{
    memmove(m->i + 3 * t, m->i + 3 * (t + 1), 3 * sizeof(uint32_t) * (m->nt - t - 1));
    m->nt--;
}

static void flip_triangle(tmesh* m, uint32_t t)
{
    uint32_t x = m->i[3 * t + 1];
    m->i[3 * t + 1] = m->i[3 * t + 2];
    m->i[3 * t + 2] = x;
}

/* Every triangle with its own three vertices: a triangle soup. */
static tmesh soup_of(const tmesh* m)
{
    tmesh s = {malloc(9 * sizeof(float) * m->nt), malloc(3 * sizeof(uint32_t) * m->nt), 3 * m->nt, m->nt};
    assert_non_null(s.v);
    assert_non_null(s.i);
    for (uint32_t c = 0; c < 3 * m->nt; ++c) {
        memcpy(s.v + 3 * c, m->v + 3 * m->i[c], 3 * sizeof(float));
        s.i[c] = c;
    }
    return s;
}

/* Appends `other` moved by `offset` (its own vertices). */
static void append_moved(tmesh* m, const tmesh* other, const double offset[3])
{
    uint32_t base = m->nv;
    for (uint32_t v = 0; v < other->nv; ++v) {
        double p[3];
        for (int k = 0; k < 3; ++k) p[k] = (double)other->v[3 * v + k] + offset[k];
        add_vertex(m, p);
    }
    for (uint32_t t = 0; t < other->nt; ++t)
        add_triangle(m, base + other->i[3 * t], base + other->i[3 * t + 1], base + other->i[3 * t + 2]);
}

static tmesh make_blob(uint64_t seed)
{
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(BLOB_V, 1.0f, seed, &g), RTCD_OK);
    tmesh m = tmesh_from(&g);
    rtcd_generated_free(&g);
    return m;
}

static tmesh make_box(float half, uint32_t subdivisions)
{
    rtcd_generated_mesh g;
    float h[3] = {half, half, half};
    assert_int_equal(rtcd_generate_box(h, subdivisions, &g), RTCD_OK);
    tmesh m = tmesh_from(&g);
    rtcd_generated_free(&g);
    return m;
}

static rtcd_repaired* repair_with(const rtcd_repair_def* def, const tmesh* m)
{
    rtcd_repaired* r = NULL;
    rtcd_error err = rtcd_repair(def, m->v, m->nv, 0, m->i, m->nt, &r);
    if (err != RTCD_OK) fprintf(stderr, "%s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    assert_non_null(r);
    return r;
}

static rtcd_repaired* repair(const tmesh* m)
{
    rtcd_repair_def def = rtcd_default_repair_def();
    return repair_with(&def, m);
}

static rtcd_error mesh_of(const float* v, uint32_t nv, const uint32_t* idx, uint32_t nt, rtcd_mesh** out)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v, def.vertex_count = nv, def.indices = idx, def.triangle_count = nt;
    def.name = "repaired";
    return rtcd_mesh_create(&def, out);
}

/* Volume of an intact input, by rtcd_mesh_create. */
static double volume_of(const tmesh* m)
{
    rtcd_mesh* mesh = NULL;
    assert_int_equal(mesh_of(m->v, m->nv, m->i, m->nt, &mesh), RTCD_OK);
    double volume = rtcd_mesh_mass_properties(mesh).volume;
    rtcd_mesh_release(mesh);
    return volume;
}

/* Component c must be closed and accepted by rtcd_mesh_create; its volume. */
static double accepted_volume(const rtcd_repaired* r, uint32_t c)
{
    const float* v;
    const uint32_t* idx;
    uint32_t nv, nt;
    assert_int_equal(rtcd_repaired_component(r, c, &v, &nv, &idx, &nt), RTCD_OK);
    assert_true(rtcd_repaired_component_closed(r, c));
    rtcd_mesh* mesh = NULL;
    rtcd_error err = mesh_of(v, nv, idx, nt, &mesh);
    if (err != RTCD_OK) fprintf(stderr, "component %u: %s\n", c, rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    double volume = rtcd_mesh_mass_properties(mesh).volume;
    rtcd_mesh_release(mesh);
    return volume;
}

static void assert_rel_near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want))) print_error("got %.9g, want %.9g (rel %g)\n", got, want, rel);
    assert_true(fabs(got - want) <= rel * fabs(want));
}

/* ---- weld ---- */

/* Soup of a blob: one closed component with exactly the blob's vertices and
 * triangles; every soup vertex but the first copy of each blob vertex welds. */
static void test_blob_soup(void** state)
{
    (void)state;
    tmesh blob = make_blob(11), soup = soup_of(&blob);
    uint32_t first_copy = UINT32_MAX; /* first soup vertex whose blob vertex came before */
    for (uint32_t c = 1; c < 3 * blob.nt && first_copy == UINT32_MAX; ++c)
        for (uint32_t d = 0; d < c; ++d)
            if (blob.i[d] == blob.i[c]) {
                first_copy = c;
                break;
            }
    rtcd_repaired* r = repair(&soup);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    assert_int_equal(rep->welded_vertices, 3 * blob.nt - blob.nv);
    assert_int_equal(rep->first_welded_vertex, first_copy);
    assert_int_equal(rep->degenerate_triangles + rep->duplicate_triangles + rep->sliver_triangles, 0);
    assert_int_equal(rep->filled_holes + rep->flipped_triangles + rep->open_components + rep->nonmanifold_edges, 0);
    uint32_t nv, nt;
    assert_int_equal(rtcd_repaired_component(r, 0, NULL, &nv, NULL, &nt), RTCD_OK);
    assert_int_equal(nv, blob.nv);
    assert_int_equal(nt, blob.nt);
    assert_rel_near(accepted_volume(r, 0), volume_of(&blob), 1e-9);
    assert_non_null(strstr(rtcd_repaired_summary(r), "welded"));
    /* Deterministic: a second run gives the same arrays. */
    rtcd_repaired* again = repair(&soup);
    const float *v1, *v2;
    const uint32_t *i1, *i2;
    uint32_t nv2, nt2;
    assert_int_equal(rtcd_repaired_merged(r, &v1, &nv, &i1, &nt), RTCD_OK);
    assert_int_equal(rtcd_repaired_merged(again, &v2, &nv2, &i2, &nt2), RTCD_OK);
    assert_int_equal(nv, nv2);
    assert_int_equal(nt, nt2);
    assert_memory_equal(v1, v2, 3 * sizeof(float) * nv);
    assert_memory_equal(i1, i2, 3 * sizeof(uint32_t) * nt);
    rtcd_repaired_release(again);
    rtcd_repaired_release(r);
    tmesh_free(&soup);
    tmesh_free(&blob);
}

/* An already clean mesh: nothing to do, and the summary says nothing. */
static void test_clean_mesh_untouched(void** state)
{
    (void)state;
    tmesh blob = make_blob(5);
    rtcd_repaired* r = repair(&blob);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rep->input_vertices, blob.nv);
    assert_int_equal(rep->input_triangles, blob.nt);
    assert_int_equal(rep->welded_vertices, 0);
    assert_int_equal(rep->first_welded_vertex, UINT32_MAX);
    assert_int_equal(rep->first_flipped_triangle, UINT32_MAX);
    assert_string_equal(rtcd_repaired_summary(r), "");
    assert_rel_near(accepted_volume(r, 0), volume_of(&blob), 1e-9);
    rtcd_repaired_release(r);
    tmesh_free(&blob);
}

/* -0 and +0 weld exactly (weld_tolerance 0). */
static void test_signed_zero_welds(void** state)
{
    (void)state;
    tmesh box = make_box(1.0f, 1), soup = soup_of(&box);
    /* Box corners have no zero coordinate: shift so some become 0, then
     * give every other copy a negative zero. */
    uint32_t negated = 0;
    for (uint32_t c = 0; c < soup.nv; ++c)
        for (int k = 0; k < 3; ++k) {
            soup.v[3 * c + k] -= 1.0f; /* -2 or 0 */
            if (soup.v[3 * c + k] == 0.0f && c % 2) soup.v[3 * c + k] = -0.0f, negated++;
        }
    assert_true(negated > 0);
    rtcd_repair_def def = rtcd_default_repair_def();
    def.weld_tolerance = 0.0f;
    rtcd_repaired* r = repair_with(&def, &soup);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    assert_int_equal(rtcd_repaired_report(r)->welded_vertices, soup.nv - box.nv);
    assert_rel_near(accepted_volume(r, 0), 8.0, 1e-6);
    rtcd_repaired_release(r);
    tmesh_free(&soup);
    tmesh_free(&box);
}

/* Copies jittered well inside the tolerance weld; copies of one vertex
 * jittered far beyond it stay apart and leave the fan around it open. */
static void test_tolerance_weld(void** state)
{
    (void)state;
    tmesh blob = make_blob(3), soup = soup_of(&blob);
    test_rng rng = {42};
    for (uint32_t i = 0; i < 3 * soup.nv; ++i) soup.v[i] += (float)test_rng_range(&rng, -1e-7, 1e-7);
    rtcd_repaired* r = repair(&soup);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    assert_int_equal(rtcd_repaired_report(r)->welded_vertices, 3 * blob.nt - blob.nv);
    assert_rel_near(accepted_volume(r, 0), volume_of(&blob), 1e-4);
    rtcd_repaired_release(r);

    /* The blob vertex of most triangles: its copies jittered by 1e-2. */
    uint32_t* valence = calloc(blob.nv, sizeof *valence);
    assert_non_null(valence);
    uint32_t p = 0;
    for (uint32_t c = 0; c < 3 * blob.nt; ++c)
        if (++valence[blob.i[c]] > valence[p]) p = blob.i[c];
    tmesh far = soup_of(&blob);
    for (uint32_t c = 0; c < 3 * blob.nt; ++c)
        if (blob.i[c] == p)
            for (int k = 0; k < 3; ++k) far.v[3 * c + k] += (float)test_rng_range(&rng, -1e-2, 1e-2);
    rtcd_repair_def def = rtcd_default_repair_def();
    def.max_hole_edges = 2 * valence[p] - 1; /* the open fan's rim has 2 * valence edges */
    r = repair_with(&def, &far);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    assert_int_equal(rep->welded_vertices, 3 * blob.nt - blob.nv - (valence[p] - 1));
    assert_int_equal(rep->open_components, 1);
    assert_int_equal(rep->filled_holes, 0);
    assert_false(rtcd_repaired_component_closed(r, 0));
    assert_non_null(strstr(rtcd_repaired_summary(r), "1 component still open"));
    rtcd_repaired_release(r);
    free(valence);
    tmesh_free(&far);
    tmesh_free(&soup);
    tmesh_free(&blob);
}

/* ---- slivers ---- */

/* Replaces triangle t = (a, b, c) by (a, b, m), (b, c, m), (c, a, m) with m
 * inside it at `where` = (weights of a, b, c): closed still, new slivers. */
static void split_triangle(tmesh* m, uint32_t t, const double where[3])
{
    uint32_t a = m->i[3 * t], b = m->i[3 * t + 1], c = m->i[3 * t + 2];
    double p[3];
    for (int k = 0; k < 3; ++k)
        p[k] = where[0] * m->v[3 * a + k] + where[1] * m->v[3 * b + k] + where[2] * m->v[3 * c + k];
    uint32_t mid = add_vertex(m, p);
    m->i[3 * t + 2] = mid;
    add_triangle(m, b, c, mid);
    add_triangle(m, c, a, mid);
}

/* The smallest altitude over the longest edge among the triangles. */
static double worst_quality(const float* v, const uint32_t* idx, uint32_t nt)
{
    double worst = INFINITY;
    for (uint32_t t = 0; t < nt; ++t) {
        double p[3][3], cr[3], longest = 0.0;
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k) p[c][k] = v[3 * idx[3 * t + c] + k];
        for (int c = 0; c < 3; ++c) {
            double l = 0.0;
            for (int k = 0; k < 3; ++k) l += (p[(c + 1) % 3][k] - p[c][k]) * (p[(c + 1) % 3][k] - p[c][k]);
            longest = fmax(longest, l);
        }
        for (int k = 0; k < 3; ++k) {
            int i = (k + 1) % 3, j = (k + 2) % 3;
            cr[k] = (p[1][i] - p[0][i]) * (p[2][j] - p[0][j]) - (p[1][j] - p[0][j]) * (p[2][i] - p[0][i]);
        }
        worst = fmin(worst, sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]) / longest);
    }
    return worst;
}

/* extra: how many more triangles than the intact box the result may keep
 * (a flip keeps the split's two, a collapse removes them). */
static void check_sliver_repair(const double where[3], uint32_t extra)
{
    tmesh box = make_box(1.0f, 2);
    double volume = volume_of(&box);
    tmesh damaged = make_box(1.0f, 2);
    split_triangle(&damaged, 0, where);
    rtcd_repair_def def = rtcd_default_repair_def();
    assert_true(worst_quality(damaged.v, damaged.i, damaged.nt) < def.sliver_ratio); /* the damage is real */
    rtcd_repaired* r = repair(&damaged);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_true(rep->sliver_triangles >= 1);
    /* The slivers are triangle 0 (rewritten in place) or the two appended. */
    assert_true(rep->first_sliver_triangle == 0 || rep->first_sliver_triangle >= box.nt);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    uint32_t nt;
    assert_int_equal(rtcd_repaired_component(r, 0, NULL, NULL, NULL, &nt), RTCD_OK);
    assert_true(nt <= box.nt + extra);
    assert_rel_near(accepted_volume(r, 0), volume, 1e-4);
    const float* v;
    const uint32_t* idx;
    assert_int_equal(rtcd_repaired_component(r, 0, &v, NULL, &idx, NULL), RTCD_OK);
    assert_true(worst_quality(v, idx, nt) >= def.sliver_ratio); /* no sliver left */
    assert_non_null(strstr(rtcd_repaired_summary(r), "sliver"));
    rtcd_repaired_release(r);
    tmesh_free(&damaged);
    tmesh_free(&box);
}

/* A cap: a vertex 1e-5 of the way from the midpoint of edge ab towards c. */
static void test_sliver_cap(void** state)
{
    (void)state;
    const double e = 1e-5, where[3] = {0.5 * (1 - e), 0.5 * (1 - e), e};
    check_sliver_repair(where, 2);
}

/* A needle: a vertex 2e-4 of the way from a into the triangle (beyond the
 * weld tolerance, which would merge it into a otherwise). */
static void test_sliver_needle(void** state)
{
    (void)state;
    const double e = 2e-4, where[3] = {1 - 2 * e, e, e};
    check_sliver_repair(where, 0);
}

/* Exactly collinear: a vertex on edge ab splitting triangle (a, b, c) gives a
 * zero-area (a, b, m) whose removal would open the box; it is flipped away. */
static void test_zero_area_cap_keeps_closed(void** state)
{
    (void)state;
    const double where[3] = {0.5, 0.5, 0.0};
    check_sliver_repair(where, 2);
}

/* ---- duplicates ---- */

static void test_duplicate_face(void** state)
{
    (void)state;
    tmesh blob = make_blob(7);
    uint32_t nt = blob.nt;
    add_triangle(&blob, blob.i[3 * 5 + 1], blob.i[3 * 5 + 2], blob.i[3 * 5]); /* rotated copy of 5 */
    rtcd_repaired* r = repair(&blob);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rep->duplicate_triangles, 1);
    assert_int_equal(rep->first_duplicate_triangle, nt);
    uint32_t out_nt;
    assert_int_equal(rtcd_repaired_component(r, 0, NULL, NULL, NULL, &out_nt), RTCD_OK);
    assert_int_equal(out_nt, nt);
    blob.nt = nt;
    assert_rel_near(accepted_volume(r, 0), volume_of(&blob), 1e-9);
    rtcd_repaired_release(r);
    tmesh_free(&blob);
}

/* Two unit cubes sharing the face x = 0.5, each with its own copy of it: the
 * two copies face opposite ways, both go, one 2 x 1 x 1 box is left. */
static void test_glued_cubes(void** state)
{
    (void)state;
    tmesh a = make_box(0.5f, 1), both = make_box(0.5f, 1);
    const double offset[3] = {1.0, 0.0, 0.0};
    append_moved(&both, &a, offset);
    uint32_t on_wall = 0, first_wall = UINT32_MAX; /* triangles in the plane x = 0.5 */
    for (uint32_t t = 0; t < both.nt; ++t) {
        int all = 1;
        for (int c = 0; c < 3; ++c) all &= both.v[3 * both.i[3 * t + c]] == 0.5f;
        if (all && on_wall++ == 0) first_wall = t;
    }
    assert_true(on_wall > 0);
    rtcd_repaired* r = repair(&both);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rep->duplicate_triangles, on_wall);
    assert_int_equal(rep->first_duplicate_triangle, first_wall);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    assert_int_equal(rep->split_components, 0);
    assert_rel_near(accepted_volume(r, 0), 2.0, 1e-6);
    assert_non_null(strstr(rtcd_repaired_summary(r), "duplicate"));
    rtcd_repaired_release(r);
    tmesh_free(&both);
    tmesh_free(&a);
}

/* ---- split ---- */

static void check_touching_cubes(const double offset[3])
{
    tmesh a = make_box(0.5f, 1), both = make_box(0.5f, 1);
    append_moved(&both, &a, offset);
    rtcd_repaired* r = repair(&both);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rtcd_repaired_component_count(r), 2);
    assert_int_equal(rep->split_components, 1);
    assert_int_equal(rep->nonmanifold_edges, 0);
    assert_int_equal(rep->open_components, 0);
    for (uint32_t c = 0; c < 2; ++c) {
        uint32_t nv, nt;
        assert_int_equal(rtcd_repaired_component(r, c, NULL, &nv, NULL, &nt), RTCD_OK);
        assert_int_equal(nv, a.nv);
        assert_int_equal(nt, a.nt);
        assert_rel_near(accepted_volume(r, c), 1.0, 1e-6);
    }
    /* Merged: two closed pieces in one mesh, which rtcd_mesh_create takes. */
    const float* v;
    const uint32_t* idx;
    uint32_t nv, nt;
    assert_int_equal(rtcd_repaired_merged(r, &v, &nv, &idx, &nt), RTCD_OK);
    assert_int_equal(nv, 2 * a.nv);
    assert_int_equal(nt, 2 * a.nt);
    rtcd_mesh* mesh = NULL;
    assert_int_equal(mesh_of(v, nv, idx, nt, &mesh), RTCD_OK);
    assert_rel_near(rtcd_mesh_mass_properties(mesh).volume, 2.0, 1e-6);
    rtcd_mesh_release(mesh);
    rtcd_repaired_release(r);
    tmesh_free(&both);
    tmesh_free(&a);
}

static void test_cubes_touching_along_edge(void** state)
{
    (void)state;
    const double offset[3] = {1.0, 1.0, 0.0};
    check_touching_cubes(offset);
    /* Without the split the shared edge stays non-manifold. */
    tmesh a = make_box(0.5f, 1), both = make_box(0.5f, 1);
    append_moved(&both, &a, offset);
    rtcd_repair_def def = rtcd_default_repair_def();
    def.flags &= ~(uint32_t)RTCD_REPAIR_SPLIT;
    rtcd_repaired* r = repair_with(&def, &both);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    assert_int_equal(rtcd_repaired_report(r)->nonmanifold_edges, 1);
    assert_false(rtcd_repaired_component_closed(r, 0));
    rtcd_repaired_release(r);
    tmesh_free(&both);
    tmesh_free(&a);
}

static void test_cubes_touching_at_vertex(void** state)
{
    (void)state;
    const double offset[3] = {1.0, 1.0, 1.0};
    check_touching_cubes(offset);
}

/* ---- holes ---- */

static void test_small_hole_filled(void** state)
{
    (void)state;
    tmesh blob = make_blob(9);
    double volume = volume_of(&blob);
    const uint32_t t = 7;
    uint32_t lowest = blob.i[3 * t];
    for (int c = 1; c < 3; ++c)
        if (blob.i[3 * t + c] < lowest) lowest = blob.i[3 * t + c];
    remove_triangle(&blob, t);
    rtcd_repaired* r = repair(&blob);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rep->filled_holes, 1);
    assert_int_equal(rep->first_hole_edge_vertex, lowest);
    assert_int_equal(rep->open_components, 0);
    assert_rel_near(accepted_volume(r, 0), volume, 1e-9); /* the same triangle came back */
    assert_non_null(strstr(rtcd_repaired_summary(r), "filled 1 hole"));
    rtcd_repaired_release(r);
    tmesh_free(&blob);
}

/* Two holes touching at a vertex: two 3-edge loops through it, both filled. */
static void test_holes_touching_at_vertex(void** state)
{
    (void)state;
    tmesh blob = make_blob(9);
    double volume = volume_of(&blob);
    /* Two triangles at vertex 0 that share no edge. */
    uint32_t first = UINT32_MAX, second = UINT32_MAX;
    for (uint32_t t = 0; t < blob.nt && second == UINT32_MAX; ++t) {
        const uint32_t* c = blob.i + 3 * t;
        if (c[0] != 0 && c[1] != 0 && c[2] != 0) continue;
        if (first == UINT32_MAX) {
            first = t;
            continue;
        }
        int common = 0;
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) common += c[j] == blob.i[3 * first + k];
        if (common == 1) second = t;
    }
    assert_true(second != UINT32_MAX);
    remove_triangle(&blob, second); /* second > first: first keeps its index */
    remove_triangle(&blob, first);
    rtcd_repaired* r = repair(&blob);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rep->filled_holes, 2);
    assert_int_equal(rep->first_hole_edge_vertex, 0);
    assert_rel_near(accepted_volume(r, 0), volume, 1e-9);
    rtcd_repaired_release(r);
    tmesh_free(&blob);
}

/* The rim of an open sheet is no hole (its fill would fold back onto the
 * sheet); a tetrahedron missing a face is one. */
static void test_sheet_rim_not_filled(void** state)
{
    (void)state;
    static const float v[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    static const uint32_t sheet[] = {0, 1, 2, 0, 2, 3};
    rtcd_repair_def def = rtcd_default_repair_def();
    rtcd_repaired* r = NULL;
    assert_int_equal(rtcd_repair(&def, v, 4, 0, sheet, 2, &r), RTCD_OK);
    assert_int_equal(rtcd_repaired_report(r)->filled_holes, 0);
    assert_int_equal(rtcd_repaired_report(r)->open_components, 1);
    rtcd_repaired_release(r);
    static const float tv[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    static const uint32_t three_faces[] = {0, 2, 1, 0, 1, 3, 0, 3, 2}; /* (1, 2, 3) missing */
    assert_int_equal(rtcd_repair(&def, tv, 4, 0, three_faces, 3, &r), RTCD_OK);
    assert_int_equal(rtcd_repaired_report(r)->filled_holes, 1);
    assert_int_equal(rtcd_repaired_report(r)->first_hole_edge_vertex, 1);
    assert_true(rtcd_repaired_component_closed(r, 0));
    assert_rel_near(accepted_volume(r, 0), 1.0 / 6.0, 1e-6);
    rtcd_repaired_release(r);
}

/* 20 triangles around one point removed: a rim far longer than 8 edges. */
static void test_large_hole_left_open(void** state)
{
    (void)state;
    tmesh blob = make_blob(9);
    const float* centre = blob.v; /* vertex 0 */
    for (int removed = 0; removed < 20; ++removed) {
        uint32_t best = 0;
        double best_d = INFINITY;
        for (uint32_t t = 0; t < blob.nt; ++t) {
            double d = 0.0;
            for (int k = 0; k < 3; ++k) {
                double c = (blob.v[3 * blob.i[3 * t] + k] + blob.v[3 * blob.i[3 * t + 1] + k] +
                            blob.v[3 * blob.i[3 * t + 2] + k]) / 3.0;
                d += (c - centre[k]) * (c - centre[k]);
            }
            if (d < best_d) best_d = d, best = t;
        }
        remove_triangle(&blob, best);
    }
    rtcd_repaired* r = repair(&blob);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    assert_int_equal(rep->filled_holes, 0);
    assert_int_equal(rep->open_components, 1);
    assert_false(rtcd_repaired_component_closed(r, 0));
    const float* v;
    const uint32_t* idx;
    uint32_t nv, nt;
    assert_int_equal(rtcd_repaired_component(r, 0, &v, &nv, &idx, &nt), RTCD_OK);
    assert_int_equal(nt, blob.nt);
    rtcd_mesh* mesh = (rtcd_mesh*)0x1;
    assert_int_equal(mesh_of(v, nv, idx, nt, &mesh), RTCD_ERROR_MESH_OPEN_EDGE);
    rtcd_repaired_release(r);
    tmesh_free(&blob);
}

/* ---- orientation ---- */

static void test_flipped_triangles(void** state)
{
    (void)state;
    tmesh blob = make_blob(13);
    double volume = volume_of(&blob);
    const uint32_t flipped[] = {0, 17, 230, 401, 899};
    for (size_t k = 0; k < sizeof flipped / sizeof *flipped; ++k) flip_triangle(&blob, flipped[k]);
    rtcd_repaired* r = repair(&blob);
    const rtcd_repair_report* rep = rtcd_repaired_report(r);
    assert_int_equal(rep->flipped_triangles, sizeof flipped / sizeof *flipped);
    assert_int_equal(rep->first_flipped_triangle, flipped[0]);
    assert_rel_near(accepted_volume(r, 0), volume, 1e-9);
    rtcd_repaired_release(r);

    /* Inside out: every triangle flipped back. */
    for (uint32_t t = 0; t < blob.nt; ++t) flip_triangle(&blob, t);
    for (size_t k = 0; k < sizeof flipped / sizeof *flipped; ++k) flip_triangle(&blob, flipped[k]);
    r = repair(&blob);
    assert_int_equal(rtcd_repaired_report(r)->flipped_triangles, blob.nt);
    assert_rel_near(accepted_volume(r, 0), volume, 1e-9);
    rtcd_repaired_release(r);
    tmesh_free(&blob);
}

/* ---- arguments ---- */

static void expect_error(const rtcd_repair_def* def, const float* v, uint32_t nv, size_t stride,
                         const uint32_t* idx, uint32_t nt, rtcd_error code, const char* must_mention)
{
    rtcd_repaired* r = (rtcd_repaired*)0x1;
    rtcd_error err = rtcd_repair(def, v, nv, stride, idx, nt, &r);
    if (err != code || !strstr(rtcd_last_error_message(), must_mention))
        print_error("got %s: '%s', want %s mentioning '%s'\n", rtcd_error_name(err), rtcd_last_error_message(),
                    rtcd_error_name(code), must_mention);
    assert_int_equal(err, code);
    assert_null(r);
    assert_non_null(strstr(rtcd_last_error_message(), must_mention));
}

static void test_bad_arguments(void** state)
{
    (void)state;
    tmesh box = make_box(1.0f, 1);
    rtcd_repair_def def = rtcd_default_repair_def();
    const float* v = box.v;
    const uint32_t* idx = box.i;
    uint32_t nv = box.nv, nt = box.nt;
    assert_int_equal(rtcd_repair(&def, v, nv, 0, idx, nt, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    expect_error(NULL, v, nv, 0, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "def");
    expect_error(&def, NULL, nv, 0, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "vertices");
    expect_error(&def, v, nv, 0, NULL, nt, RTCD_ERROR_INVALID_ARGUMENT, "indices");
    expect_error(&def, v, 0, 0, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "vertex_count");
    expect_error(&def, v, nv, 0, idx, 0, RTCD_ERROR_INVALID_ARGUMENT, "triangle_count");
    expect_error(&def, v, nv, 8, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "vertex_stride");
    rtcd_repair_def bad = def;
    bad.flags = RTCD_REPAIR_ALL | 0x100u;
    expect_error(&bad, v, nv, 0, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "flags");
    bad = def;
    bad.weld_tolerance = -1e-3f;
    expect_error(&bad, v, nv, 0, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "weld_tolerance");
    bad.weld_tolerance = NAN;
    expect_error(&bad, v, nv, 0, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "weld_tolerance");
    bad = def;
    bad.sliver_ratio = NAN;
    expect_error(&bad, v, nv, 0, idx, nt, RTCD_ERROR_INVALID_ARGUMENT, "sliver_ratio");
    /* Sizes beyond what can be addressed, refused before anything is read. */
    expect_error(&def, v, UINT32_MAX, SIZE_MAX / 1024, idx, nt, RTCD_ERROR_MESH_TOO_LARGE, "vertices");
    expect_error(&def, v, nv, 0, idx, UINT32_MAX, RTCD_ERROR_MESH_TOO_LARGE, "triangles");

    tmesh bad_mesh = make_box(1.0f, 1);
    bad_mesh.i[3 * 5 + 1] = bad_mesh.nv;
    expect_error(&def, bad_mesh.v, bad_mesh.nv, 0, bad_mesh.i, bad_mesh.nt, RTCD_ERROR_MESH_INDEX_OUT_OF_RANGE,
                 "triangle 5");
    bad_mesh.i[3 * 5 + 1] = box.i[3 * 5 + 1];
    bad_mesh.v[3 * 4 + 2] = NAN;
    expect_error(&def, bad_mesh.v, bad_mesh.nv, 0, bad_mesh.i, bad_mesh.nt, RTCD_ERROR_MESH_NONFINITE_VERTEX,
                 "vertex 4");
    bad_mesh.v[3 * 4 + 2] = 1.0f;
    bad_mesh.v[3 * 6] = -INFINITY;
    expect_error(&def, bad_mesh.v, bad_mesh.nv, 0, bad_mesh.i, bad_mesh.nt, RTCD_ERROR_MESH_NONFINITE_VERTEX,
                 "vertex 6");
    /* Accessors on bad handles and indices. */
    assert_int_equal(rtcd_repaired_component(NULL, 0, NULL, NULL, NULL, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_repaired_merged(NULL, NULL, NULL, NULL, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    rtcd_repaired* r = repair(&box);
    assert_int_equal(rtcd_repaired_component(r, 1, NULL, NULL, NULL, NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(rtcd_last_error_message(), "component 1"));
    assert_false(rtcd_repaired_component_closed(r, 1));
    assert_null(rtcd_repaired_report(NULL));
    assert_int_equal(rtcd_repaired_component_count(NULL), 0);
    rtcd_repaired_release(r);
    rtcd_repaired_release(NULL);
    tmesh_free(&bad_mesh);
    tmesh_free(&box);
}

/* Stride: vertices inside a larger record are read in place. */
static void test_vertex_stride(void** state)
{
    (void)state;
    tmesh box = make_box(1.0f, 1);
    float* wide = calloc(5 * (size_t)box.nv, sizeof *wide);
    assert_non_null(wide);
    for (uint32_t v = 0; v < box.nv; ++v) memcpy(wide + 5 * v, box.v + 3 * v, 3 * sizeof(float));
    rtcd_repair_def def = rtcd_default_repair_def();
    rtcd_repaired* r = NULL;
    assert_int_equal(rtcd_repair(&def, wide, box.nv, 5 * sizeof(float), box.i, box.nt, &r), RTCD_OK);
    assert_rel_near(accepted_volume(r, 0), 8.0, 1e-6);
    rtcd_repaired_release(r);
    free(wide);
    tmesh_free(&box);
}

/* ---- allocation failure, reference counting ---- */


/* A soup with every kind of damage, so every step allocates. */
static tmesh every_damage(void)
{
    tmesh m = make_box(1.0f, 2);
    const double cap[3] = {0.5 * (1 - 1e-5), 0.5 * (1 - 1e-5), 1e-5};
    split_triangle(&m, 0, cap);                         /* a sliver on the -x face */
    flip_triangle(&m, 26);                              /* +y face */
    add_triangle(&m, m.i[3 * 30], m.i[3 * 30 + 1], m.i[3 * 30 + 2]); /* a duplicate */
    add_triangle(&m, m.i[3 * 31], m.i[3 * 31], m.i[3 * 31 + 1]);     /* a repeated index */
    remove_triangle(&m, 12);                            /* a hole in the +x face */
    tmesh other = make_box(0.5f, 1);
    const double offset[3] = {1.5, 1.5, 1.5};           /* touches the box at its corner */
    append_moved(&m, &other, offset);
    tmesh_free(&other);
    tmesh s = soup_of(&m);
    tmesh_free(&m);
    return s;
}

static void test_out_of_memory_everywhere(void** state)
{
    (void)state;
    tmesh m = every_damage();
    rtcd_repaired* reference = repair(&m);
    const rtcd_repair_report* want = rtcd_repaired_report(reference);
    assert_true(want->welded_vertices > 0 && want->sliver_triangles > 0 && want->duplicate_triangles > 0);
    assert_true(want->degenerate_triangles > 0 && want->split_components > 0 && want->filled_holes > 0);
    assert_true(want->flipped_triangles > 0);
    for (uint32_t c = 0; c < rtcd_repaired_component_count(reference); ++c) (void)accepted_volume(reference, c);
    test_failing_allocator_install();
    rtcd_repair_def def = rtcd_default_repair_def();
    int saw_ok = 0, failures = 0;
    for (int fail_at = 0; fail_at < 4000 && !saw_ok; ++fail_at) {
        test_fail_after(fail_at);
        rtcd_repaired* r = (rtcd_repaired*)0x1;
        rtcd_error err = rtcd_repair(&def, m.v, m.nv, 0, m.i, m.nt, &r);
        if (err == RTCD_OK) {
            saw_ok = 1;
            assert_memory_equal(rtcd_repaired_report(r), want, sizeof *want);
            rtcd_repaired_release(r);
        } else {
            assert_int_equal(err, RTCD_ERROR_OUT_OF_MEMORY);
            assert_null(r);
            ++failures;
        }
        assert_int_equal(test_live_allocations(), 0); /* nothing leaks on any path */
    }
    rtcd_set_allocator(NULL, NULL, NULL);
    assert_true(saw_ok);
    assert_true(failures > 10);
    rtcd_repaired_release(reference);
    tmesh_free(&m);
}

static void test_retain_release(void** state)
{
    (void)state;
    tmesh box = make_box(1.0f, 1);
    test_failing_allocator_install();
    test_fail_after(-1);
    rtcd_repaired* r = repair(&box);
    rtcd_repaired_retain(r);
    rtcd_repaired_release(r);
    assert_true(test_live_allocations() > 0); /* still alive */
    assert_int_equal(rtcd_repaired_component_count(r), 1);
    rtcd_repaired_release(r);
    assert_int_equal(test_live_allocations(), 0);
    rtcd_set_allocator(NULL, NULL, NULL);
    tmesh_free(&box);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_soup),
        cmocka_unit_test(test_clean_mesh_untouched),
        cmocka_unit_test(test_signed_zero_welds),
        cmocka_unit_test(test_tolerance_weld),
        cmocka_unit_test(test_sliver_cap),
        cmocka_unit_test(test_sliver_needle),
        cmocka_unit_test(test_zero_area_cap_keeps_closed),
        cmocka_unit_test(test_duplicate_face),
        cmocka_unit_test(test_glued_cubes),
        cmocka_unit_test(test_cubes_touching_along_edge),
        cmocka_unit_test(test_cubes_touching_at_vertex),
        cmocka_unit_test(test_small_hole_filled),
        cmocka_unit_test(test_holes_touching_at_vertex),
        cmocka_unit_test(test_sheet_rim_not_filled),
        cmocka_unit_test(test_large_hole_left_open),
        cmocka_unit_test(test_flipped_triangles),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_vertex_stride),
        cmocka_unit_test(test_out_of_memory_everywhere),
        cmocka_unit_test(test_retain_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
