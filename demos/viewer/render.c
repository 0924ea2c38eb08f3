/* The drawing code the window and the off-screen renderer share: camera,
 * lights, the ground, every body's mesh at its pose, contact points. */
#include "viewer_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int viewer_gl_load(viewer_gl* gl, viewer_gl_proc (*loader)(const char* name), char* msg, size_t msg_size)
{
    /* Casts between function pointer types: each entry point has the type it is called with. */
#define VIEWER_GL_LOAD(ret, name, args)                                                                              \
    gl->name = (ret(*) args)loader("gl" #name);                                                                     \
    if (!gl->name) {                                                                                                 \
        snprintf(msg, msg_size, "OpenGL function gl%s not available", #name);                                       \
        return -1;                                                                                                   \
    }
    VIEWER_GL_FUNCS(VIEWER_GL_LOAD)
#undef VIEWER_GL_LOAD
    return 0;
}

void viewer_camera_init(viewer_camera* cam, const viewer_def* def)
{
    memcpy(cam->target, def->target, sizeof cam->target);
    cam->yaw = -2.2f; /* from the south-west: the spawner's circle and the avalanche's cube in three-quarter view */
    cam->pitch = 0.44f;
    cam->fov_y = 0.7f;
    float r = def->radius > 0.1f ? def->radius : 5.0f;
    cam->distance = 1.1f * r / sinf(0.5f * cam->fov_y);
}

int viewer_scene_init(viewer_scene* s, const viewer_def* def)
{
    memset(s, 0, sizeof *s);
    float r = def->radius > 0.1f ? def->radius : 5.0f;
    s->plane = def->plane;
    s->plane_extent = 3.0f * r;
    s->contact_length = 0.04f * r < 0.25f ? 0.04f * r : 0.25f;
    uint32_t nv = def->ground_vertex_count, nt = def->ground_triangle_count;
    if (!def->ground_vertices || !def->ground_indices || !nv || !nt) return 0;
    s->ground_vertices = malloc(3 * sizeof(float) * nv);
    s->ground_normals = calloc(3 * (size_t)nv, sizeof(float));
    s->ground_indices = malloc(3 * sizeof(uint32_t) * nt);
    if (!s->ground_vertices || !s->ground_normals || !s->ground_indices) return -1;
    memcpy(s->ground_vertices, def->ground_vertices, 3 * sizeof(float) * nv);
    memcpy(s->ground_indices, def->ground_indices, 3 * sizeof(uint32_t) * nt);
    s->ground_vertex_count = nv;
    s->ground_triangle_count = nt;
    /* smooth normals: the area-weighted face normals around each vertex */
    const float* v = s->ground_vertices;
    for (uint32_t t = 0; t < nt; ++t) {
        const uint32_t* i = &s->ground_indices[3 * t];
        if (i[0] >= nv || i[1] >= nv || i[2] >= nv) return -1;
        float e1[3], e2[3];
        for (int k = 0; k < 3; ++k) {
            e1[k] = v[3 * i[1] + k] - v[3 * i[0] + k];
            e2[k] = v[3 * i[2] + k] - v[3 * i[0] + k];
        }
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k) s->ground_normals[3 * i[c] + k] += n[k];
    }
    for (uint32_t j = 0; j < nv; ++j) {
        float* n = &s->ground_normals[3 * j];
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (len > 0) n[0] /= len, n[1] /= len, n[2] /= len;
    }
    return 0;
}

void viewer_scene_free(viewer_scene* s)
{
    free(s->ground_vertices);
    free(s->ground_normals);
    free(s->ground_indices);
    free(s->contacts);
    memset(s, 0, sizeof *s);
}

/* Saturated colours, far from the grey ground and the pale background (the
 * frames test finds the bodies by their saturation). Seven, so that the
 * avalanche's rows of eight do not repeat a column's colour. */
static const float palette[7][3] = {{0.92f, 0.45f, 0.15f}, {0.20f, 0.50f, 0.90f}, {0.30f, 0.72f, 0.30f},
                                    {0.88f, 0.25f, 0.45f}, {0.95f, 0.78f, 0.15f}, {0.55f, 0.35f, 0.85f},
                                    {0.10f, 0.70f, 0.72f}};

/* Column-major look-at (no GLU): eye from the camera's angles. */
static void view_matrix(const viewer_camera* c, float m[16])
{
    float cp = cosf(c->pitch), sp = sinf(c->pitch), cy = cosf(c->yaw), sy = sinf(c->yaw);
    float f[3] = {-cp * cy, -cp * sy, -sp};                 /* forward, unit */
    float eye[3] = {c->target[0] - c->distance * f[0], c->target[1] - c->distance * f[1],
                    c->target[2] - c->distance * f[2]};
    float sl = sqrtf(f[0] * f[0] + f[1] * f[1]);            /* side = forward x z, unit */
    float s[3] = {f[1] / sl, -f[0] / sl, 0.0f};
    float u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
    float r[16] = {s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0, 0, 0, 0, 1};
    for (int k = 0; k < 3; ++k) r[12 + k] = -(r[k] * eye[0] + r[4 + k] * eye[1] + r[8 + k] * eye[2]);
    memcpy(m, r, sizeof r);
}

static void projection_matrix(const viewer_camera* c, float aspect, float m[16])
{
    float n = 0.02f * c->distance, f = 20.0f * c->distance;
    float t = 1.0f / tanf(0.5f * c->fov_y);
    float p[16] = {t / aspect, 0, 0, 0, 0, t, 0, 0, 0, 0, (f + n) / (n - f), -1, 0, 0, 2 * f * n / (n - f), 0};
    memcpy(m, p, sizeof p);
}

static void draw_ground(const viewer_gl* gl, const viewer_scene* s)
{
    if (s->plane) {
        /* a checkerboard of about 20 cells a side: depth and motion cues */
        float e = s->plane_extent, cell = e / 10.0f > 1.0f ? ceilf(e / 10.0f) : 1.0f;
        int n = (int)ceilf(e / cell);
        static const float a[3] = {0.74f, 0.74f, 0.72f}, b[3] = {0.64f, 0.64f, 0.63f};
        gl->Begin(GL_QUADS);
        gl->Normal3f(0, 0, 1);
        for (int i = -n; i < n; ++i)
            for (int j = -n; j < n; ++j) {
                gl->Color3fv((i + j) & 1 ? a : b);
                float x = (float)i * cell, y = (float)j * cell;
                gl->Vertex3f(x, y, 0);
                gl->Vertex3f(x + cell, y, 0);
                gl->Vertex3f(x + cell, y + cell, 0);
                gl->Vertex3f(x, y + cell, 0);
            }
        gl->End();
    }
    if (s->ground_triangle_count) {
        static const float grey[3] = {0.68f, 0.67f, 0.64f};
        gl->Color3fv(grey);
        gl->VertexPointer(3, GL_FLOAT, 0, s->ground_vertices);
        gl->NormalPointer(GL_FLOAT, 0, s->ground_normals);
        gl->DrawElements(GL_TRIANGLES, (GLsizei)(3 * s->ground_triangle_count), GL_UNSIGNED_INT, s->ground_indices);
    }
}

static void draw_bodies(const viewer_gl* gl, const rtcd_world* world)
{
    uint32_t n = rtcd_world_body_count(world);
    for (uint32_t b = 0; b < n; ++b) {
        rtcd_transform t;
        const rtcd_shape* shape = rtcd_world_body_shape(world, b);
        /* the body mesh as it is now (deforming shapes update it when asked) */
        const rtcd_mesh* mesh = shape ? rtcd_shape_body_mesh(shape) : NULL;
        if (!mesh || rtcd_world_get_pose(world, b, &t) != RTCD_OK) continue;
        const float* R = t.rotation; /* row-major; OpenGL wants columns */
        float m[16] = {R[0], R[3], R[6], 0, R[1], R[4], R[7], 0, R[2], R[5], R[8], 0,
                       t.translation[0], t.translation[1], t.translation[2], 1};
        gl->Color3fv(palette[b % 7]);
        gl->PushMatrix();
        gl->MultMatrixf(m);
        gl->VertexPointer(3, GL_FLOAT, 0, rtcd_mesh_vertices(mesh));
        gl->NormalPointer(GL_FLOAT, 0, rtcd_mesh_vertex_normals(mesh));
        gl->DrawElements(GL_TRIANGLES, (GLsizei)(3 * rtcd_mesh_triangle_count(mesh)), GL_UNSIGNED_INT,
                         rtcd_mesh_indices(mesh));
        gl->PopMatrix();
    }
}

/* Contact points (red) and their normals (yellow), over everything. */
static void draw_contacts(const viewer_gl* gl, viewer_scene* s, const rtcd_world* world)
{
    uint32_t n = rtcd_world_get_contacts(world, NULL, 0);
    if (n > s->contact_capacity) {
        rtcd_world_contact* c = realloc(s->contacts, sizeof *c * n);
        if (!c) return; /* a frame without contacts rather than no frame */
        s->contacts = c;
        s->contact_capacity = n;
    }
    n = rtcd_world_get_contacts(world, s->contacts, s->contact_capacity);
    static const float red[3] = {0.9f, 0.05f, 0.05f}, yellow[3] = {1.0f, 0.9f, 0.1f};
    gl->Disable(GL_LIGHTING);
    gl->Disable(GL_DEPTH_TEST);
    gl->LineWidth(1.5f);
    gl->Color3fv(yellow);
    gl->Begin(GL_LINES);
    for (uint32_t i = 0; i < n; ++i) {
        const rtcd_world_contact* c = &s->contacts[i];
        gl->Vertex3f(c->position[0], c->position[1], c->position[2]);
        gl->Vertex3f(c->position[0] + s->contact_length * c->normal[0], c->position[1] + s->contact_length * c->normal[1],
                     c->position[2] + s->contact_length * c->normal[2]);
    }
    gl->End();
    gl->PointSize(4.0f);
    gl->Color3fv(red);
    gl->Begin(GL_POINTS);
    for (uint32_t i = 0; i < n; ++i) gl->Vertex3f(s->contacts[i].position[0], s->contacts[i].position[1], s->contacts[i].position[2]);
    gl->End();
    gl->Enable(GL_DEPTH_TEST);
    gl->Enable(GL_LIGHTING);
}

void viewer_draw(const viewer_gl* gl, viewer_scene* s, const viewer_camera* cam, const rtcd_world* world,
                 int show_contacts, int width, int height)
{
    float m[16];
    gl->Viewport(0, 0, width, height);
    gl->ClearColor(0.88f, 0.90f, 0.93f, 1.0f);
    gl->Clear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    gl->Enable(GL_DEPTH_TEST);
    gl->DepthFunc(GL_LEQUAL);
    gl->Enable(GL_CULL_FACE); /* closed meshes, counter-clockwise outside: back faces never show */
    gl->ShadeModel(GL_SMOOTH);
    gl->MatrixMode(GL_PROJECTION);
    projection_matrix(cam, height > 0 ? (float)width / (float)height : 1.0f, m);
    gl->LoadMatrixf(m);
    gl->MatrixMode(GL_MODELVIEW);
    view_matrix(cam, m);
    gl->LoadMatrixf(m);
    /* two directional lights fixed in the world (set after the view matrix):
     * a key light from above and a dim fill from the other side */
    static const float key_dir[4] = {-0.35f, -0.45f, 0.82f, 0.0f}, fill_dir[4] = {0.5f, 0.6f, 0.2f, 0.0f};
    static const float key[4] = {0.75f, 0.75f, 0.72f, 1}, fill[4] = {0.25f, 0.25f, 0.28f, 1};
    static const float spec[4] = {0.25f, 0.25f, 0.25f, 1}, ambient[4] = {0.28f, 0.28f, 0.30f, 1}, none[4] = {0, 0, 0, 1};
    gl->Enable(GL_LIGHTING);
    gl->Enable(GL_LIGHT0);
    gl->Enable(GL_LIGHT1);
    gl->Lightfv(GL_LIGHT0, GL_POSITION, key_dir);
    gl->Lightfv(GL_LIGHT0, GL_DIFFUSE, key);
    gl->Lightfv(GL_LIGHT0, GL_SPECULAR, spec);
    gl->Lightfv(GL_LIGHT1, GL_POSITION, fill_dir);
    gl->Lightfv(GL_LIGHT1, GL_DIFFUSE, fill);
    gl->Lightfv(GL_LIGHT1, GL_SPECULAR, none);
    gl->LightModelfv(GL_LIGHT_MODEL_AMBIENT, ambient);
    gl->Enable(GL_COLOR_MATERIAL);
    gl->ColorMaterial(GL_FRONT, GL_AMBIENT_AND_DIFFUSE);
    gl->Materialfv(GL_FRONT, GL_SPECULAR, spec);
    gl->Materialf(GL_FRONT, GL_SHININESS, 24.0f);
    gl->EnableClientState(GL_VERTEX_ARRAY);
    gl->EnableClientState(GL_NORMAL_ARRAY);
    draw_ground(gl, s);
    draw_bodies(gl, world);
    gl->DisableClientState(GL_NORMAL_ARRAY);
    gl->DisableClientState(GL_VERTEX_ARRAY);
    if (show_contacts) draw_contacts(gl, s, world);
}
