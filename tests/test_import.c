/* rtcd_import (include/rtcd/rtcd_import.h): files written here (OBJ, STL,
 * PLY, glTF) give the expected verdict, meshes and report; bad data of every
 * kind gives a clean error; and over assimp's own test corpus nothing that is
 * closed after the repair is declined. */
#include "test_util.h"

#include <rtcd/rtcd_import.h>
#include <rtcd/rtcd_world.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RTCD_ASSIMP_MODELS_DIR
#define RTCD_ASSIMP_MODELS_DIR "/usr/share/assimp/models"
#endif

static char g_dir[64]; /* this run's scratch folder */

static const char* scratch(const char* name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    return path;
}

static void write_bytes(const char* name, const void* data, size_t size)
{
    FILE* f = fopen(scratch(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* ---- shapes ---- */

/* [-1,1]^3, counter-clockwise from outside. */
static const float cube_v[] = {-1, -1, -1, 1, -1, -1, 1, 1, -1, -1, 1, -1, -1, -1, 1, 1, -1, 1, 1, 1, 1, -1, 1, 1};
static const uint32_t cube_i[] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                  3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};
/* The same faces as quads (OBJ), 0-based. */
static const uint32_t cube_quads[] = {0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 3, 7, 6, 2, 0, 4, 7, 3, 1, 2, 6, 5};

/* Triangle soup OBJ: three fresh vertices per triangle. */
static void write_obj_soup(const char* name, const float* v, const uint32_t* idx, uint32_t triangles)
{
    FILE* f = fopen(scratch(name), "w");
    assert_non_null(f);
    for (uint32_t t = 0; t < triangles; ++t)
        for (int k = 0; k < 3; ++k) {
            const float* p = v + 3 * idx[3 * t + k];
            fprintf(f, "v %.9g %.9g %.9g\n", p[0], p[1], p[2]);
        }
    for (uint32_t t = 0; t < triangles; ++t) fprintf(f, "f %u %u %u\n", 3 * t + 1, 3 * t + 2, 3 * t + 3);
    assert_int_equal(fclose(f), 0);
}

/* ASCII PLY, indexed (assimp keeps a PLY's vertex sharing, an OBJ's not). */
static void write_ply(const char* name, const float* v, uint32_t nv, const uint32_t* idx, uint32_t nt, int flip)
{
    FILE* f = fopen(scratch(name), "w");
    assert_non_null(f);
    fprintf(f, "ply\nformat ascii 1.0\nelement vertex %u\nproperty float x\nproperty float y\nproperty float z\n"
               "element face %u\nproperty list uchar int vertex_indices\nend_header\n", nv, nt);
    for (uint32_t i = 0; i < nv; ++i) fprintf(f, "%.9g %.9g %.9g\n", v[3 * i], v[3 * i + 1], v[3 * i + 2]);
    for (uint32_t t = 0; t < nt; ++t)
        fprintf(f, "3 %u %u %u\n", idx[3 * t], idx[3 * t + (flip ? 2 : 1)], idx[3 * t + (flip ? 1 : 2)]);
    assert_int_equal(fclose(f), 0);
}

static void put_u32(unsigned char* p, uint32_t x)
{
    for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(x >> (8 * i));
}

static void put_f32(unsigned char* p, float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    put_u32(p, u);
}

/* Binary STL of the cube (little-endian whatever the host): 84 + 50 * 12 bytes. */
static size_t cube_binary_stl(unsigned char* out)
{
    memset(out, 0, 84);
    memcpy(out, "rtcd test cube", 14); /* not "solid": that starts an ASCII STL */
    put_u32(out + 80, 12);
    for (uint32_t t = 0; t < 12; ++t) {
        unsigned char* rec = out + 84 + 50 * t;
        memset(rec, 0, 50);
        for (int k = 0; k < 3; ++k)
            for (int c = 0; c < 3; ++c) put_f32(rec + 12 + 12 * k + 4 * c, cube_v[3 * cube_i[3 * t + k] + c]);
    }
    return 84 + 50 * 12;
}

/* ---- checks ---- */

static rtcd_imported* import_ok(const char* name, const rtcd_import_def* def)
{
    rtcd_imported* im = NULL;
    rtcd_error err = rtcd_import_file(def, scratch(name), &im);
    if (err != RTCD_OK) print_error("%s: %s: %s\n", name, rtcd_error_name(err), rtcd_last_error_message());
    assert_int_equal(err, RTCD_OK);
    assert_non_null(im);
    assert_int_not_equal(rtcd_imported_status(im), RTCD_IMPORT_DECLINED);
    assert_int_equal(rtcd_imported_error(im), RTCD_OK);
    assert_string_equal(rtcd_imported_error_message(im), "");
    return im;
}

/* A declined import: the code, a handle with the reason, the same reason as
 * the thread's last error, no mesh. */
static rtcd_imported* expect_declined(rtcd_error err, rtcd_imported* im, rtcd_error code, const char* mention)
{
    if (err != code || (mention && !strstr(rtcd_imported_error_message(im), mention)))
        print_error("got %s '%s', want %s mentioning '%s'\n", rtcd_error_name(err),
                    im ? rtcd_imported_error_message(im) : rtcd_last_error_message(), rtcd_error_name(code),
                    mention ? mention : "");
    assert_int_equal(err, code);
    assert_non_null(im);
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_DECLINED);
    assert_int_equal(rtcd_imported_error(im), code);
    assert_true(strlen(rtcd_imported_error_message(im)) > 0);
    assert_string_equal(rtcd_last_error_message(), rtcd_imported_error_message(im));
    if (mention) assert_non_null(strstr(rtcd_imported_error_message(im), mention));
    assert_int_equal(rtcd_imported_mesh_count(im), 0);
    assert_null(rtcd_imported_mesh(im, 0));
    return im;
}

static rtcd_imported* declined_file(const char* path, rtcd_error code, const char* mention)
{
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = NULL;
    rtcd_error err = rtcd_import_file(&def, path, &im);
    return expect_declined(err, im, code, mention);
}

static double volume_of(const rtcd_mesh* m) { return rtcd_mesh_mass_properties(m).volume; }

/* ---- good files ---- */

static void test_blob_soup_obj_is_repaired(void** state)
{
    (void)state;
    rtcd_generated_mesh g;
    assert_int_equal(rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 1.0f, 7, &g), RTCD_OK);
    write_obj_soup("blob.obj", g.vertices, g.indices, g.triangle_count);
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = import_ok("blob.obj", &def);
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_REPAIRED);
    assert_int_equal(rtcd_imported_stored_error(im), RTCD_ERROR_MESH_OPEN_EDGE); /* a soup has no shared edge */
    assert_int_equal(rtcd_imported_input_triangle_count(im), g.triangle_count);
    assert_int_equal(rtcd_imported_input_vertex_count(im), 3 * g.triangle_count);
    assert_int_equal(rtcd_imported_mesh_count(im), 1);
    assert_int_equal(rtcd_imported_component_count(im), 1);
    const rtcd_mesh* m = rtcd_imported_mesh(im, 0);
    assert_int_equal(rtcd_mesh_vertex_count(m), g.vertex_count);
    assert_int_equal(rtcd_mesh_triangle_count(m), g.triangle_count);
    const rtcd_repair_report* r = rtcd_imported_repair_report(im);
    assert_non_null(r);
    assert_int_equal(r->welded_vertices, 3 * g.triangle_count - g.vertex_count);
    assert_int_equal(r->open_components, 0);
    assert_int_equal(r->flipped_triangles, 0);
    assert_true(strlen(rtcd_imported_repair_summary(im)) > 0);
    rtcd_mesh* original = test_mesh_from_generated(&g, "blob");
    assert_float_near(volume_of(m), volume_of(original), 1e-5 * fabs(volume_of(original)));
    rtcd_mesh_release(original);
    rtcd_imported_release(im);
}

static void check_cube(rtcd_imported* im, double volume)
{
    assert_int_equal(rtcd_imported_mesh_count(im), 1);
    const rtcd_mesh* m = rtcd_imported_mesh(im, 0);
    assert_int_equal(rtcd_mesh_vertex_count(m), 8);
    assert_int_equal(rtcd_mesh_triangle_count(m), 12);
    assert_float_near(volume_of(m), volume, 1e-5 * volume);
}

static void test_cube_stl_binary_and_ascii(void** state)
{
    (void)state;
    unsigned char stl[84 + 50 * 12];
    size_t size = cube_binary_stl(stl);
    write_bytes("cube_binary.stl", stl, size);
    FILE* f = fopen(scratch("cube_ascii.stl"), "w");
    assert_non_null(f);
    fprintf(f, "solid cube\n");
    for (int t = 0; t < 12; ++t) {
        fprintf(f, " facet normal 0 0 0\n  outer loop\n");
        for (int k = 0; k < 3; ++k) {
            const float* p = cube_v + 3 * cube_i[3 * t + k];
            fprintf(f, "   vertex %g %g %g\n", p[0], p[1], p[2]);
        }
        fprintf(f, "  endloop\n endfacet\n");
    }
    fprintf(f, "endsolid cube\n");
    assert_int_equal(fclose(f), 0);

    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = import_ok("cube_binary.stl", &def);
    check_cube(im, 8.0);
    rtcd_imported_release(im);
    im = import_ok("cube_ascii.stl", &def);
    check_cube(im, 8.0);
    rtcd_imported_release(im);

    /* From memory, scaled by 0.5: the unit cube. */
    def.scale = 0.5f;
    assert_int_equal(rtcd_import_memory(&def, stl, size, "stl", &im), RTCD_OK);
    check_cube(im, 1.0);
    float lo[3], hi[3];
    rtcd_mesh_bounds(rtcd_imported_mesh(im, 0), lo, hi);
    assert_float_near(lo[0], -0.5, 1e-6);
    assert_float_near(hi[2], 0.5, 1e-6);
    rtcd_imported_release(im);
}

static void test_indexed_ply_accepted_as_stored(void** state)
{
    (void)state;
    write_ply("cube.ply", cube_v, 8, cube_i, 12, 0);
    rtcd_import_def def = rtcd_default_import_def();
    def.flags = RTCD_IMPORT_NO_REPAIR;
    rtcd_imported* im = import_ok("cube.ply", &def);
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_ACCEPTED);
    assert_int_equal(rtcd_imported_stored_error(im), RTCD_OK);
    assert_null(rtcd_imported_repair_report(im));
    assert_string_equal(rtcd_imported_repair_summary(im), "");
    assert_int_equal(rtcd_imported_component_count(im), 1);
    check_cube(im, 8.0);
    /* The mesh outlives the handle when retained. */
    rtcd_mesh* kept = rtcd_imported_mesh(im, 0);
    rtcd_mesh_retain(kept);
    rtcd_imported_retain(im);
    rtcd_imported_release(im);
    rtcd_imported_release(im);
    assert_int_equal(rtcd_mesh_triangle_count(kept), 12);
    rtcd_mesh_release(kept);
}

static void test_no_repair_declines_a_soup(void** state)
{
    (void)state;
    write_obj_soup("cube_soup.obj", cube_v, cube_i, 12);
    rtcd_import_def def = rtcd_default_import_def();
    def.flags = RTCD_IMPORT_NO_REPAIR;
    rtcd_imported* im = NULL;
    rtcd_error err = rtcd_import_file(&def, scratch("cube_soup.obj"), &im);
    expect_declined(err, im, RTCD_ERROR_MESH_OPEN_EDGE, "cube_soup.obj");
    assert_int_equal(rtcd_imported_stored_error(im), RTCD_ERROR_MESH_OPEN_EDGE);
    assert_null(rtcd_imported_repair_report(im));
    assert_int_equal(rtcd_imported_input_triangle_count(im), 12);
    rtcd_imported_release(im);
}

static void test_inside_out_is_flipped_by_the_repair(void** state)
{
    (void)state;
    write_ply("inside_out.ply", cube_v, 8, cube_i, 12, 1);
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = import_ok("inside_out.ply", &def);
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_REPAIRED);
    assert_int_equal(rtcd_imported_stored_error(im), RTCD_ERROR_MESH_INSIDE_OUT);
    assert_int_equal(rtcd_imported_repair_report(im)->flipped_triangles, 12);
    check_cube(im, 8.0);
    rtcd_imported_release(im);
    /* With RTCD_MESH_FLIP_INSIDE_OUT rtcd_mesh_create flips it: taken as stored. */
    def.mesh_flags = RTCD_MESH_FLIP_INSIDE_OUT;
    im = import_ok("inside_out.ply", &def);
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_ACCEPTED);
    check_cube(im, 8.0);
    rtcd_imported_release(im);
}

/* A = [0,1]^3, B = [1,2]x[1,2]x[0,1]: they share the edge x = y = 1, which
 * four faces use. B's corners 0 and 4 are A's 2 and 6. */
static void write_two_cubes(void)
{
    FILE* f = fopen(scratch("two_cubes.obj"), "w");
    assert_non_null(f);
    for (int i = 0; i < 8; ++i)
        fprintf(f, "v %g %g %g\n", (cube_v[3 * i] + 1) / 2, (cube_v[3 * i + 1] + 1) / 2, (cube_v[3 * i + 2] + 1) / 2);
    uint32_t b_index[8];
    uint32_t next = 8;
    for (int i = 0; i < 8; ++i) {
        if (i == 0 || i == 4) {
            b_index[i] = i == 0 ? 2 : 6;
            continue;
        }
        b_index[i] = next++;
        fprintf(f, "v %g %g %g\n", (cube_v[3 * i] + 1) / 2 + 1, (cube_v[3 * i + 1] + 1) / 2 + 1,
                (cube_v[3 * i + 2] + 1) / 2);
    }
    for (int q = 0; q < 6; ++q) {
        const uint32_t* c = cube_quads + 4 * q;
        fprintf(f, "f %u %u %u %u\n", c[0] + 1, c[1] + 1, c[2] + 1, c[3] + 1);
        fprintf(f, "f %u %u %u %u\n", b_index[c[0]] + 1, b_index[c[1]] + 1, b_index[c[2]] + 1, b_index[c[3]] + 1);
    }
    assert_int_equal(fclose(f), 0);
}

static void test_two_cubes_sharing_an_edge(void** state)
{
    (void)state;
    write_two_cubes();
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = import_ok("two_cubes.obj", &def);
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_REPAIRED);
    assert_int_equal(rtcd_imported_input_triangle_count(im), 24); /* the quads triangulated */
    assert_int_equal(rtcd_imported_mesh_count(im), 2);
    assert_int_equal(rtcd_imported_component_count(im), 2);
    const rtcd_repair_report* r = rtcd_imported_repair_report(im);
    assert_int_equal(r->split_components, 1);
    assert_int_equal(r->open_components, 0);
    assert_int_equal(r->nonmanifold_edges, 0);
    for (uint32_t i = 0; i < 2; ++i) {
        const rtcd_mesh* m = rtcd_imported_mesh(im, i);
        assert_int_equal(rtcd_mesh_triangle_count(m), 12);
        assert_float_near(volume_of(m), 1.0, 1e-6);
    }
    assert_null(rtcd_imported_mesh(im, 2));
    rtcd_imported_release(im);
}

/* The two pieces as one compound body (rtcd_shape_create_compound) in a
 * world through rtcd: it falls on the plane and rests on its 1 m high
 * bottom, each piece's pair with the plane rtcd's; a blob dropped on it
 * stays on top. */
static void test_touching_pieces_collide(void** state)
{
    (void)state;
    write_two_cubes();
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = import_ok("two_cubes.obj", &def);
    rtcd_mesh* pieces[2] = {rtcd_imported_mesh(im, 0), rtcd_imported_mesh(im, 1)};
    rtcd_world_def wd = rtcd_default_world_def();
    wd.narrowphase.backend = RTCD_BACKEND_CPU;
    rtcd_world* w = NULL;
    assert_int_equal(rtcd_world_create(&wd, &w), RTCD_OK);
    const float up[3] = {0, 0, 1};
    assert_int_equal(rtcd_world_add_plane(w, up, 0), RTCD_OK);
    rtcd_shape* compound = NULL;
    assert_int_equal(rtcd_shape_create_compound(w, pieces, 2, &compound), RTCD_OK);
    rtcd_imported_release(im); /* the shape keeps what it needs */
    float com[3];
    rtcd_shape_center_of_mass(compound, com);
    assert_float_near(com[2], 0.5, 1e-4); /* two unit cubes side by side */
    rtcd_mesh* blob_mesh = test_make_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.3f, 4);
    rtcd_shape* blob = NULL;
    assert_int_equal(rtcd_shape_create(w, blob_mesh, &blob), RTCD_OK);
    rtcd_transform pose = rtcd_transform_identity();
    pose.translation[2] = 0.8f; /* the body frame's origin is the centre of mass */
    uint32_t body = 0, top = 0;
    assert_int_equal(rtcd_world_add_body(w, compound, 2.0f, &pose, &body), RTCD_OK);
    /* Above cube A's centre (0.5, 0.5, 0.5 in the file): b = R^T (m - com). */
    rtcd_transform frame = rtcd_shape_frame(compound);
    for (int k = 0; k < 2; ++k) {
        float b = 0;
        for (int j = 0; j < 3; ++j) b += frame.rotation[3 * j + k] * (0.5f - frame.translation[j]);
        pose.translation[k] = b;
    }
    pose.translation[2] = 2.5f;
    assert_int_equal(rtcd_world_add_body(w, blob, 0.5f, &pose, &top), RTCD_OK);
    uint32_t owned = 0;
    for (int i = 0; i < 240; ++i) {
        assert_int_equal(rtcd_world_step(w), RTCD_OK);
        rtcd_step_stats st = rtcd_world_last_step_stats(w);
        if (st.pairs_owned > owned) owned = st.pairs_owned;
    }
    rtcd_transform p, q;
    assert_int_equal(rtcd_world_get_pose(w, body, &p), RTCD_OK);
    assert_int_equal(rtcd_world_get_pose(w, top, &q), RTCD_OK);
    rtcd_penetration pen;
    assert_int_equal(rtcd_world_measure_penetration(w, &pen), RTCD_OK);
    print_message("compound at z %.4f, blob at z %.4f, up to %u rtcd pairs a step, penetration max %.4f\n",
                  (double)p.translation[2], (double)q.translation[2], owned, (double)pen.max);
    assert_true(owned >= 3);                      /* both pieces on the plane, and the blob on a piece */
    assert_float_near(p.translation[2], 0.5, 0.03); /* resting on its bottom */
    assert_true(q.translation[2] > 1.1f);         /* on top of the cube, not through it */
    assert_true(pen.max < 0.03f);
    rtcd_shape_release(blob);
    rtcd_shape_release(compound);
    rtcd_mesh_release(blob_mesh);
    rtcd_world_release(w);
}

static void test_open_plane_is_declined(void** state)
{
    (void)state;
    /* 3 x 3 quads: a boundary of 12 edges, beyond the hole filler's 8. */
    FILE* f = fopen(scratch("plane.obj"), "w");
    assert_non_null(f);
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 4; ++i) fprintf(f, "v %d %d 0\n", i, j);
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            int a = 4 * j + i + 1;
            fprintf(f, "f %d %d %d %d\n", a, a + 1, a + 5, a + 4);
        }
    assert_int_equal(fclose(f), 0);
    /* Wrap off (or not built in): declined, saying so. */
    rtcd_import_def def = rtcd_default_import_def();
    def.wrap = RTCD_WRAP_OFF;
    rtcd_imported* im = NULL;
    rtcd_error err = rtcd_import_file(&def, scratch("plane.obj"), &im);
    im = expect_declined(err, im, RTCD_ERROR_MESH_OPEN_EDGE, "wrap off");
    assert_non_null(strstr(rtcd_imported_error_message(im), "flat open sheet"));
    assert_int_equal(rtcd_imported_input_triangle_count(im), 18);
    const rtcd_repair_report* r = rtcd_imported_repair_report(im);
    assert_non_null(r);
    assert_int_equal(r->open_components, 1);
    assert_int_equal(rtcd_imported_component_count(im), 1);
    rtcd_imported_release(im);
    /* Default (AUTO): wrapped into a shell 2r thick around the 3 x 3 sheet
     * (Steiner: 2 A r + (pi/2) P r^2 + (4/3) pi r^3), or declined saying the wrap is missing. */
    if (!rtcd_wrap_available()) {
        im = declined_file(scratch("plane.obj"), RTCD_ERROR_MESH_OPEN_EDGE, "wrap not available");
        rtcd_imported_release(im);
        return;
    }
    def = rtcd_default_import_def();
    im = import_ok("plane.obj", &def);
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_WRAPPED);
    assert_int_equal(rtcd_imported_mesh_count(im), 1);
    assert_string_equal(rtcd_mesh_name(rtcd_imported_mesh(im, 0)), "plane.obj#wrap");
    const rtcd_wrap_report* w = rtcd_imported_wrap_report(im);
    assert_non_null(w);
    double o = w->offset, h = w->voxel_size;
    double v_ref = 2 * 9 * o + M_PI / 2 * 12 * o * o + 4.0 / 3 * M_PI * o * o * o;
    assert_true(fabs(volume_of(rtcd_imported_mesh(im, 0)) - v_ref) <= 2 * 9 * 0.15 * h);
    assert_true(fabs(w->distance - o) <= 0.75 * h);
    assert_int_equal(w->input_triangles, 18);
    assert_int_equal(rtcd_imported_dropped_scrap_count(im), 0); /* wrapped, not dropped */
    rtcd_imported_release(im);
}

/* A closed cube with a flat quad and a lone triangle beside it: the two
 * scraps are dropped and counted with their share of the area (1.5 of 7.5),
 * whatever the wrap mode; the cube is taken. */
static void test_scraps_are_dropped(void** state)
{
    (void)state;
    FILE* f = fopen(scratch("scraps.obj"), "w");
    assert_non_null(f);
    for (int i = 0; i < 8; ++i) fprintf(f, "v %g %g %g\n", cube_v[3 * i], cube_v[3 * i + 1], cube_v[3 * i + 2]);
    for (int t = 0; t < 12; ++t) fprintf(f, "f %u %u %u\n", cube_i[3 * t] + 1, cube_i[3 * t + 1] + 1, cube_i[3 * t + 2] + 1);
    fprintf(f, "v 5 0 0\nv 6 0 0\nv 6 1 0\nv 5 1 0\nf 9 10 11 12\n");
    fprintf(f, "v 8 0 0\nv 9 0 0\nv 8 1 0\nf 13 14 15\n");
    assert_int_equal(fclose(f), 0);
    for (int mode = RTCD_WRAP_OFF; mode <= RTCD_WRAP_AUTO; ++mode) {
        rtcd_import_def def = rtcd_default_import_def();
        def.wrap = (rtcd_wrap_mode)mode;
        rtcd_imported* im = import_ok("scraps.obj", &def);
        assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_REPAIRED);
        assert_int_equal(rtcd_imported_mesh_count(im), 1);
        assert_int_equal(rtcd_imported_component_count(im), 3);
        assert_int_equal(rtcd_imported_dropped_scrap_count(im), 2);
        double cube_area = 0; /* the test's cube: its own area */
        for (int t = 0; t < 12; ++t) {
            const float *a = cube_v + 3 * cube_i[3 * t], *b = cube_v + 3 * cube_i[3 * t + 1], *c = cube_v + 3 * cube_i[3 * t + 2];
            double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
            cube_area += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        }
        assert_true(fabs(rtcd_imported_dropped_scrap_area_share(im) - 1.5 / (cube_area + 1.5)) < 1e-6);
        assert_null(rtcd_imported_wrap_report(im));
        rtcd_imported_release(im);
    }
}

static void test_points_and_lines_are_dropped(void** state)
{
    (void)state;
    FILE* f = fopen(scratch("cube_lines.obj"), "w");
    assert_non_null(f);
    for (int i = 0; i < 8; ++i) fprintf(f, "v %g %g %g\n", cube_v[3 * i], cube_v[3 * i + 1], cube_v[3 * i + 2]);
    for (int t = 0; t < 12; ++t) fprintf(f, "f %u %u %u\n", cube_i[3 * t] + 1, cube_i[3 * t + 1] + 1, cube_i[3 * t + 2] + 1);
    fprintf(f, "l 1 7\np 3\n");
    assert_int_equal(fclose(f), 0);
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = import_ok("cube_lines.obj", &def);
    assert_int_equal(rtcd_imported_dropped_primitive_count(im), 2);
    assert_int_equal(rtcd_imported_input_triangle_count(im), 12);
    check_cube(im, 8.0);
    rtcd_imported_release(im);
}

/* Standard base64 for the glTF's embedded buffer. */
static void base64(const unsigned char* in, size_t n, char* out)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = digits[v >> 18 & 63];
        out[o++] = digits[v >> 12 & 63];
        out[o++] = i + 1 < n ? digits[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? digits[v & 63] : '=';
    }
    out[o] = '\0';
}

static void test_gltf_node_transforms_are_baked(void** state)
{
    (void)state;
    /* One cube mesh, two nodes: a mirroring one (scale -2 in x, then +5 in x)
     * and a translated one (+10 in y). Mirroring reverses the winding; the
     * import must turn it back or the file would not be taken as stored. */
    unsigned char buffer[8 * 12 + 36 * 2];
    for (int i = 0; i < 24; ++i) put_f32(buffer + 4 * i, cube_v[i]);
    for (int i = 0; i < 36; ++i) {
        buffer[96 + 2 * i] = (unsigned char)cube_i[i];
        buffer[96 + 2 * i + 1] = 0;
    }
    char b64[4 * sizeof buffer / 3 + 8];
    base64(buffer, sizeof buffer, b64);
    FILE* f = fopen(scratch("nodes.gltf"), "w");
    assert_non_null(f);
    fprintf(f,
            "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,1]}],"
            "\"nodes\":[{\"mesh\":0,\"translation\":[5,0,0],\"scale\":[-2,1,1]},{\"mesh\":0,\"translation\":[0,10,0]}],"
            "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1}]}],"
            "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":8,\"type\":\"VEC3\","
            "\"min\":[-1,-1,-1],\"max\":[1,1,1]},"
            "{\"bufferView\":1,\"componentType\":5123,\"count\":36,\"type\":\"SCALAR\"}],"
            "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":96},"
            "{\"buffer\":0,\"byteOffset\":96,\"byteLength\":72}],"
            "\"buffers\":[{\"byteLength\":%zu,\"uri\":\"data:application/octet-stream;base64,%s\"}]}\n",
            sizeof buffer, b64);
    assert_int_equal(fclose(f), 0);

    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = import_ok("nodes.gltf", &def);
    if (rtcd_imported_status(im) != RTCD_IMPORT_ACCEPTED)
        print_error("as stored: %s\n", rtcd_imported_stored_error_message(im));
    assert_int_equal(rtcd_imported_status(im), RTCD_IMPORT_ACCEPTED);
    assert_int_equal(rtcd_imported_input_triangle_count(im), 24);
    assert_int_equal(rtcd_imported_mesh_count(im), 1);
    const rtcd_mesh* m = rtcd_imported_mesh(im, 0);
    assert_float_near(volume_of(m), 16.0 + 8.0, 1e-4);
    float lo[3], hi[3];
    rtcd_mesh_bounds(m, lo, hi);
    assert_float_near(lo[0], -1.0, 1e-5);
    assert_float_near(hi[0], 7.0, 1e-5);
    assert_float_near(hi[1], 11.0, 1e-5);
    rtcd_imported_release(im);
}

/* ---- bad input ---- */

static void test_bad_arguments(void** state)
{
    (void)state;
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = (rtcd_imported*)0x1;
    assert_int_equal(rtcd_import_file(NULL, "x.obj", &im), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(im);
    im = (rtcd_imported*)0x1;
    assert_int_equal(rtcd_import_file(&def, NULL, &im), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(im);
    assert_int_equal(rtcd_import_file(&def, "x.obj", NULL), RTCD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rtcd_import_memory(&def, NULL, 4, "obj", &im), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(im);
    const float scales[] = {0.0f, -1.0f, NAN, INFINITY};
    for (int i = 0; i < 4; ++i) {
        rtcd_import_def bad = def;
        bad.scale = scales[i];
        im = (rtcd_imported*)0x1;
        assert_int_equal(rtcd_import_file(&bad, "x.obj", &im), RTCD_ERROR_INVALID_ARGUMENT);
        assert_null(im);
        assert_non_null(strstr(rtcd_last_error_message(), "scale"));
    }
    rtcd_import_def bad = def;
    bad.flags = 0x80;
    assert_int_equal(rtcd_import_file(&bad, "x.obj", &im), RTCD_ERROR_INVALID_ARGUMENT);
    bad = def;
    bad.repair.flags = 0x100;
    assert_int_equal(rtcd_import_file(&bad, "x.obj", &im), RTCD_ERROR_INVALID_ARGUMENT);
    assert_null(im);
    /* Accessors take NULL. */
    assert_int_equal(rtcd_imported_status(NULL), RTCD_IMPORT_DECLINED);
    assert_int_equal(rtcd_imported_mesh_count(NULL), 0);
    assert_null(rtcd_imported_repair_report(NULL));
    rtcd_imported_release(NULL);
    assert_string_equal(rtcd_import_status_name(RTCD_IMPORT_REPAIRED), "repaired");
    assert_true(rtcd_import_extension_supported("obj"));
    assert_true(rtcd_import_extension_supported(".STL"));
    assert_false(rtcd_import_extension_supported("png"));
    assert_false(rtcd_import_extension_supported(NULL));
}

static void test_missing_directory_empty_fifo(void** state)
{
    (void)state;
    rtcd_imported_release(declined_file(scratch("missing.obj"), RTCD_ERROR_INVALID_ARGUMENT, "No such file"));
    rtcd_imported_release(declined_file(g_dir, RTCD_ERROR_INVALID_ARGUMENT, "directory"));
    write_bytes("empty.obj", "", 0);
    rtcd_imported_release(declined_file(scratch("empty.obj"), RTCD_ERROR_INVALID_ARGUMENT, "empty"));
    assert_int_equal(mkfifo(scratch("pipe.obj"), 0600), 0);
    rtcd_imported_release(declined_file(scratch("pipe.obj"), RTCD_ERROR_INVALID_ARGUMENT, "not a regular file"));
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = NULL;
    rtcd_error err = rtcd_import_memory(&def, "", 0, "obj", &im);
    rtcd_imported_release(expect_declined(err, im, RTCD_ERROR_INVALID_ARGUMENT, "size 0"));
    def.max_file_bytes = 16;
    write_bytes("big.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 32);
    err = rtcd_import_file(&def, scratch("big.obj"), &im);
    rtcd_imported_release(expect_declined(err, im, RTCD_ERROR_MESH_TOO_LARGE, "max_file_bytes"));
}

static void test_truncated_and_huge_stl(void** state)
{
    (void)state;
    unsigned char stl[84 + 50 * 12];
    cube_binary_stl(stl);
    write_bytes("truncated.stl", stl, 84 + 50 * 5 + 20);
    rtcd_imported_release(declined_file(scratch("truncated.stl"), RTCD_ERROR_INVALID_ARGUMENT, "truncated"));
    /* A header claiming 2^31 triangles over one triangle of data. */
    put_u32(stl + 80, 1u << 31);
    write_bytes("huge.stl", stl, 84 + 50);
    rtcd_imported_release(declined_file(scratch("huge.stl"), RTCD_ERROR_MESH_TOO_LARGE, "2147483648"));
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = NULL;
    rtcd_error err = rtcd_import_memory(&def, stl, 84 + 50, "STL", &im);
    rtcd_imported_release(expect_declined(err, im, RTCD_ERROR_MESH_TOO_LARGE, "2147483648"));
}

static void test_huge_and_truncated_text_headers(void** state)
{
    (void)state;
    /* assimp would reserve memory for these counts (tens of GB) before noticing. */
    static const struct {
        const char* hint;
        const char* text;
        rtcd_error code;
    } cases[] = {
        {"off", "OFF\n2000000000 1000000000 0\n0 0 0\n", RTCD_ERROR_MESH_TOO_LARGE},
        {"off", "OFF\n# comment\n5000 8000 0\n0 0 0\n1 0 0\n", RTCD_ERROR_INVALID_ARGUMENT},
        {"ply", "ply\nformat ascii 1.0\nelement vertex 2000000000\nproperty float x\nproperty float y\n"
                "property float z\nend_header\n0 0 0\n", RTCD_ERROR_MESH_TOO_LARGE},
        {"ply", "ply\nformat binary_little_endian 1.0\nelement vertex 100000\nproperty float x\n"
                "property float y\nproperty float z\nelement face 10\nproperty list uchar int vertex_indices\n"
                "end_header\n0000000000000000", RTCD_ERROR_INVALID_ARGUMENT},
    };
    rtcd_import_def def = rtcd_default_import_def();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        rtcd_imported* im = NULL;
        rtcd_error err = rtcd_import_memory(&def, cases[i].text, strlen(cases[i].text), cases[i].hint, &im);
        rtcd_imported_release(expect_declined(err, im, cases[i].code, NULL));
    }
}

static void test_garbage_bytes(void** state)
{
    (void)state;
    static const char* const extensions[] = {"stl", "obj", "ply", "off", "3ds", "glb", "gltf", "fbx", "dae", "x",
                                             "lwo", "ms3d", "md2", "blend", "ase", "smd"};
    test_rng rng = {12345};
    unsigned char bytes[4096];
    for (size_t i = 0; i < sizeof bytes; ++i) bytes[i] = (unsigned char)test_rng_next(&rng);
    rtcd_import_def def = rtcd_default_import_def();
    for (size_t e = 0; e < sizeof extensions / sizeof extensions[0]; ++e) {
        char name[32];
        snprintf(name, sizeof name, "garbage.%s", extensions[e]);
        write_bytes(name, bytes, sizeof bytes);
        rtcd_imported* im = NULL;
        rtcd_error err = rtcd_import_file(&def, scratch(name), &im);
        assert_non_null(im);
        if (err == RTCD_OK) print_error("%s: garbage taken as %s\n", name, rtcd_import_status_name(rtcd_imported_status(im)));
        expect_declined(err, im, rtcd_imported_error(im), NULL);
        assert_int_not_equal(err, RTCD_OK);
        rtcd_imported_release(im);
        /* The same bytes from memory. */
        err = rtcd_import_memory(&def, bytes, sizeof bytes, extensions[e], &im);
        expect_declined(err, im, rtcd_imported_error(im), NULL);
        assert_int_not_equal(err, RTCD_OK);
        rtcd_imported_release(im);
    }
}

/* ---- the real-world corpus ---- */

typedef struct corpus {
    unsigned files, accepted, repaired, declined, wrapped, closed, failures, scraps;
    double worst_share;
    char worst[1024];
    double slowest_ms;
    char slowest[1024];
} corpus;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Distance from p to triangle abc: the plane's when p projects inside,
 * else the nearest of the three edges (independent of the library's code). */
static double seg_d2(const double* p, const double* a, const double* b)
{
    double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    double l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    double t = l2 > 0 ? (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double d[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

static double tri_dist(const double* p, const float* v, const uint32_t* t)
{
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; ++k) {
        a[k] = v[3 * (size_t)t[0] + k];
        b[k] = v[3 * (size_t)t[1] + k];
        c[k] = v[3 * (size_t)t[2] + k];
    }
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    double nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    if (nn > 0) {
        double ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
        double s = (ap[0] * n[0] + ap[1] * n[1] + ap[2] * n[2]) / nn;
        double q[3] = {p[0] - s * n[0], p[1] - s * n[1], p[2] - s * n[2]};
        /* inside when q is on the inner side of each edge */
        const double* P[3] = {a, b, c};
        int inside = 1;
        for (int e = 0; e < 3 && inside; ++e) {
            const double *x = P[e], *y = P[(e + 1) % 3];
            double ex[3] = {y[0] - x[0], y[1] - x[1], y[2] - x[2]}, xq[3] = {q[0] - x[0], q[1] - x[1], q[2] - x[2]};
            double cr[3] = {ex[1] * xq[2] - ex[2] * xq[1], ex[2] * xq[0] - ex[0] * xq[2], ex[0] * xq[1] - ex[1] * xq[0]};
            inside = cr[0] * n[0] + cr[1] * n[1] + cr[2] * n[2] >= 0;
        }
        if (inside) return fabs(s) * sqrt(nn);
    }
    double d = seg_d2(p, a, b), e = seg_d2(p, b, c), f = seg_d2(p, c, a);
    return sqrt(d < e ? (d < f ? d : f) : (e < f ? e : f));
}

/* 48 points on A (every k-th vertex, then random points in random
 * triangles, xorshift), each with its brute-force distance to all of B:
 * the smallest and the largest. */
static void brute_side(const float* va, uint32_t nva, const uint32_t* ia, uint32_t nta, const float* vb,
                       const uint32_t* ib, uint32_t ntb, double* lo, double* hi)
{
    uint64_t x = 88172645463325252ull;
    *lo = INFINITY;
    *hi = 0;
    for (int s = 0; s < 48; ++s) {
        double p[3];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const uint32_t* t = ia + 3 * (size_t)(x % nta);
        if (s < 16) {
            for (int k = 0; k < 3; ++k) p[k] = va[3 * (size_t)t[s % 3] + k];
        } else {
            double u = (double)((x >> 20) & 0xffff) / 65535.0, w = (double)((x >> 40) & 0xffff) / 65535.0;
            if (u + w > 1) u = 1 - u, w = 1 - w;
            for (int k = 0; k < 3; ++k)
                p[k] = va[3 * (size_t)t[0] + k] + u * (va[3 * (size_t)t[1] + k] - va[3 * (size_t)t[0] + k]) +
                       w * (va[3 * (size_t)t[2] + k] - va[3 * (size_t)t[0] + k]);
        }
        double best = INFINITY;
        for (uint32_t j = 0; j < ntb; ++j) {
            double d = tri_dist(p, vb, ib + 3 * (size_t)j);
            if (d < best) best = d;
        }
        if (best < *lo) *lo = best;
        if (best > *hi) *hi = best;
    }
    (void)nva;
}

/* A WRAPPED file: the envelope (the last mesh) passes rtcd_mesh_create with
 * no flags, and an independent brute-force sampling agrees with the report:
 * every envelope point at most r + 1.5 h from the input (the level r of the
 * distance, found to a fraction of a voxel h; adaptive polygons cut corners:
 * up to 1.23 h measured over the corpus), neither side farther than the
 * reported distance + h/2, and the report's values in range: out->in at
 * most r + 1.5 h, the larger at least r - h/4 (one-sided, the input can come
 * closer than r to the envelope where adaptive polygons cut across a
 * sheet's rounded rim or a thin tube).
 * Returns the failures. */
static unsigned check_wrapped(const char* path, const rtcd_imported* im, double* share)
{
    const rtcd_wrap_report* r = rtcd_imported_wrap_report(im);
    const rtcd_mesh* env = rtcd_imported_mesh(im, rtcd_imported_mesh_count(im) - 1);
    const float *wv = NULL, *ev = rtcd_mesh_vertices(env);
    const uint32_t *wi = NULL, *ei = rtcd_mesh_indices(env);
    uint32_t wnv = 0, wnt = 0, ent = rtcd_mesh_triangle_count(env);
    if (!r || rtcd_imported_wrap_input(im, &wv, &wnv, &wi, &wnt) != RTCD_OK || wnt == 0) {
        print_error("%s: WRAPPED without a report or input\n", path);
        return 1;
    }
    rtcd_mesh_def md = rtcd_default_mesh_def();
    md.vertices = ev;
    md.vertex_count = rtcd_mesh_vertex_count(env);
    md.indices = ei;
    md.triangle_count = ent;
    rtcd_mesh* m = NULL;
    unsigned failures = 0;
    if (rtcd_mesh_create(&md, &m) != RTCD_OK) {
        print_error("%s: the envelope is refused with no flags: %s\n", path, rtcd_last_error_message());
        ++failures;
    }
    rtcd_mesh_release(m);
    double in_lo, in_hi, out_lo, out_hi, h = r->voxel_size, o = r->offset;
    brute_side(wv, wnv, wi, wnt, ev, ei, ent, &in_lo, &in_hi);
    brute_side(ev, rtcd_mesh_vertex_count(env), ei, ent, wv, wi, wnt, &out_lo, &out_hi);
    if (out_hi > o + 1.5 * h || in_hi > r->distance + 0.5 * h || out_hi > r->distance + 0.5 * h ||
        r->distance_out_in > o + 1.5 * h || r->distance < o - 0.25 * h) {
        print_error("%s: distances off: r %g h %g reported %g (in->out %g, out->in %g); sampled in->out %g..%g, "
                    "out->in %g..%g\n", path, o, h, r->distance, r->distance_in_out, r->distance_out_in, in_lo, in_hi,
                    out_lo, out_hi);
        ++failures;
    }
    *share = r->distance / r->diagonal;
    return failures;
}

static void corpus_file(corpus* c, const char* path)
{
    rtcd_import_def def = rtcd_default_import_def();
    rtcd_imported* im = NULL;
    double t0 = now_ms();
    rtcd_error err = rtcd_import_file(&def, path, &im);
    double ms = now_ms() - t0;
    if (ms > c->slowest_ms) {
        c->slowest_ms = ms;
        snprintf(c->slowest, sizeof c->slowest, "%s", path);
    }
    ++c->files;
    if (!im) {
        print_error("%s: no handle (%s: %s)\n", path, rtcd_error_name(err), rtcd_last_error_message());
        ++c->failures;
        return;
    }
    rtcd_import_status status = rtcd_imported_status(im);
    c->accepted += status == RTCD_IMPORT_ACCEPTED;
    c->repaired += status == RTCD_IMPORT_REPAIRED;
    c->declined += status == RTCD_IMPORT_DECLINED;
    c->wrapped += status == RTCD_IMPORT_WRAPPED;
    c->scraps += rtcd_imported_dropped_scrap_count(im);
    /* Every file with a triangle is taken: only bad input (non-finite or
     * out-of-limit data) is declined, and only without the wrap. */
    if (status == RTCD_IMPORT_DECLINED && rtcd_imported_input_triangle_count(im) > 0 && rtcd_wrap_available() &&
        err != RTCD_ERROR_MESH_NONFINITE_VERTEX && err != RTCD_ERROR_MESH_TOO_LARGE) {
        print_error("%s: holds %u triangles but declined: %s: %s\n", path, rtcd_imported_input_triangle_count(im),
                    rtcd_error_name(err), rtcd_imported_error_message(im));
        ++c->failures;
    }
    if (status == RTCD_IMPORT_WRAPPED) {
        double share = 0;
        c->failures += check_wrapped(path, im, &share);
        if (share > c->worst_share) {
            c->worst_share = share;
            snprintf(c->worst, sizeof c->worst, "%s", path);
        }
    }
    if ((status == RTCD_IMPORT_DECLINED) != (err != RTCD_OK)) {
        print_error("%s: returned %s with status %s\n", path, rtcd_error_name(err), rtcd_import_status_name(status));
        ++c->failures;
    }
    if (status == RTCD_IMPORT_DECLINED && rtcd_imported_error_message(im)[0] == '\0') {
        print_error("%s: declined (%s) without a reason\n", path, rtcd_error_name(err));
        ++c->failures;
    }
    /* Closed after the repair, with something left: must be taken. */
    const rtcd_repair_report* r = rtcd_imported_repair_report(im);
    if (r && r->open_components == 0 && r->nonmanifold_edges == 0 && rtcd_imported_component_count(im) > 0) {
        ++c->closed;
        if (status == RTCD_IMPORT_DECLINED) {
            print_error("%s: closed after the repair but declined: %s: %s\n", path, rtcd_error_name(err),
                        rtcd_imported_error_message(im));
            ++c->failures;
        }
    }
    rtcd_imported_release(im);
}

static void corpus_walk(corpus* c, const char* dir, int depth)
{
    DIR* d = opendir(dir);
    if (!d || depth > 32) {
        if (d) closedir(d);
        return;
    }
    /* Sorted, so a failure report reads the same on every run. */
    struct dirent** entries = NULL;
    int n = scandir(dir, &entries, NULL, alphasort);
    closedir(d);
    for (int i = 0; i < n; ++i) {
        const char* name = entries[i]->d_name;
        char path[1024];
        struct stat st;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path && lstat(path, &st) == 0) {
            const char* dot = strrchr(name, '.');
            if (S_ISDIR(st.st_mode)) corpus_walk(c, path, depth + 1);
            else if (S_ISREG(st.st_mode) && dot && rtcd_import_extension_supported(dot)) corpus_file(c, path);
        }
        free(entries[i]);
    }
    free(entries);
}

static void test_corpus_closed_files_are_taken(void** state)
{
    (void)state;
    struct stat st;
    if (stat(RTCD_ASSIMP_MODELS_DIR, &st) != 0 || !S_ISDIR(st.st_mode)) {
        print_message("skipped: no corpus at %s (Debian package assimp-testmodels)\n", RTCD_ASSIMP_MODELS_DIR);
        skip();
    }
    corpus c;
    memset(&c, 0, sizeof c);
    double t0 = now_ms();
    corpus_walk(&c, RTCD_ASSIMP_MODELS_DIR, 0);
    print_message("corpus %s: %u files, %u accepted, %u repaired, %u wrapped, %u declined; %u closed after repair; "
                  "%u scraps dropped; largest wrap distance %.3f of the diagonal (%s); %.1f s (slowest %.0f ms: %s)\n",
                  RTCD_ASSIMP_MODELS_DIR, c.files, c.accepted, c.repaired, c.wrapped, c.declined, c.closed, c.scraps,
                  c.worst_share, c.worst, (now_ms() - t0) * 1e-3, c.slowest_ms, c.slowest);
    assert_true(c.files > 0);
    assert_int_equal(c.failures, 0);
}

/* ---- scratch folder ---- */

static int setup(void** state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/rtcd_test_import_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void** state)
{
    (void)state;
    DIR* d = opendir(g_dir);
    if (d) {
        struct dirent* e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlink(scratch(e->d_name));
        closedir(d);
    }
    rmdir(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_soup_obj_is_repaired),
        cmocka_unit_test(test_cube_stl_binary_and_ascii),
        cmocka_unit_test(test_indexed_ply_accepted_as_stored),
        cmocka_unit_test(test_no_repair_declines_a_soup),
        cmocka_unit_test(test_inside_out_is_flipped_by_the_repair),
        cmocka_unit_test(test_two_cubes_sharing_an_edge),
        cmocka_unit_test(test_touching_pieces_collide),
        cmocka_unit_test(test_open_plane_is_declined),
        cmocka_unit_test(test_scraps_are_dropped),
        cmocka_unit_test(test_points_and_lines_are_dropped),
        cmocka_unit_test(test_gltf_node_transforms_are_baked),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_missing_directory_empty_fifo),
        cmocka_unit_test(test_truncated_and_huge_stl),
        cmocka_unit_test(test_huge_and_truncated_text_headers),
        cmocka_unit_test(test_garbage_bytes),
        cmocka_unit_test(test_corpus_closed_files_are_taken),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
