/* Where a resting pile's penetration comes from, vertex by vertex (issue 23).
 *
 * Runs the avalanche (or any demo scene's options) and, every K steps in a
 * window, measures each vertex inside another body with the exact ruler of
 * rtcd_world_measure_penetration (point-in-mesh, closest-point distance; the
 * plane by its height), then asks why it is there:
 *
 *   solver        Bullet's manifold holds a point at this vertex whose depth
 *                 and normal agree with the ruler (within --tol-depth and
 *                 25 degrees): the solver leaves it;
 *   shallow       a manifold point at this vertex, shallower than the ruler;
 *   normal_off    a manifold point at this vertex, pushing more than 25
 *                 degrees off the ruler's way out;
 *   rtcd_kept     no manifold point here, but rtcd's own contacts for the
 *                 pair (a fresh pass of the world's narrow-phase def on the
 *                 poses before the step, the motion from the step before)
 *                 hold it: lost between rtcd's 4 points and Bullet's
 *                 manifold;
 *   speculative_crowded
 *                 a standard pass has a colliding ray for it that agrees
 *                 with the ruler, and a reduction of the penetrating
 *                 contacts alone keeps it, but rtcd's reduction (with the
 *                 speculative points) does not;
 *   reduced_dropped  the ray agrees, and neither reduction keeps it;
 *   ray_wrong     no manifold point; the standard pass's ray for it is
 *                 shallower than the ruler on the same poses, or off;
 *   no_ray        no manifold point and no colliding ray for it (never a
 *                 candidate, or its ray hit its own body or nothing);
 *   was_outside_near / was_outside_far
 *                 no manifold point, and the vertex was outside when the
 *                 step's narrow phase ran (the poses before the step),
 *                 within the speculative margin of the surface / farther:
 *                 it came in while the solver moved the bodies.
 * The rays of the reduced / ray_wrong / no_ray classes are cast on the
 * poses before the step, those the narrow phase saw.
 *   plane_*       the same for vertices below the ground plane (solver /
 *                 missing).
 *
 * A manifold point matches a vertex when either of its ends (Bullet's point
 * on A or on B) lies within --tol-match of it. Output: one JSON object with
 * per class the vertices, the sum and the max of their depths, summed over
 * the samples, and the deepest vertices with their details.
 *
 * Usage: rest_why [demo options: --objects N --steps N --algorithm A ...]
 *                 [--from S] [--every K] [--tol-match M] [--tol-depth M] [--top N] */
#include "demo_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_SOLVER, C_SHALLOW, C_NORMAL_OFF, C_RTCD_KEPT, C_CROWDED, C_REDUCED_DROPPED, C_RAY_WRONG, C_NO_RAY,
       C_NEAR_MISSING, C_ENTERED, C_PLANE_SOLVER, C_PLANE_MISSING, C_COUNT };
static const char* const class_name[C_COUNT] = {"solver", "shallow", "normal_off", "rtcd_kept", "speculative_crowded", "reduced_dropped",
                                                "ray_wrong", "no_ray", "was_outside_near", "was_outside_far",
                                                "plane_solver", "plane_missing"};

typedef struct why_class {
    uint64_t vertices;
    double sum;
    float max;
} why_class;

typedef struct why_vertex {
    uint32_t step, body, vertex;
    int32_t other;     /* -1: the plane */
    float depth;       /* the ruler's */
    int cls;
    float contact_depth; /* the matched manifold point's or the ray's depth; NAN: none */
    float cos_normal;    /* its push . the ruler's way out */
    uint32_t manifold_points;
    uint32_t rtcd_points;  /* rtcd's contacts for the pair (0: not asked) */
    float rtcd_min_gap;    /* the least distance between two of them (Bullet merges points closer than 2 cm) */
    /* How far the vertex moved relative to the other body (its frame) in
     * the step before the narrow phase and in the sampled step, and the
     * pair's bound from the velocities as the step began (the plugin's
     * motion bound, without gravity's step); -1 for the plane / unknown. */
    float move_before, move_step, vel_bound;
} why_vertex;

#define TOP_MAX 64

typedef struct why_state {
    why_class cls[C_COUNT];
    why_vertex top[TOP_MAX];
    uint32_t top_n, top_cap;
    double ruler_sum;       /* our own sum, to check against rtcd_world_measure_penetration */
    double measured_sum;
    uint32_t samples;
    float tol_match, tol_depth;
    float near;             /* the speculative margin: a vertex this close may have a speculative contact */
    rtcd_narrowphase_def np;
    rtcd_ray_hit* rays;
    uint32_t ray_cap;
    rtcd_batch* batch;      /* rtcd's own contacts of a pair, fresh each time */
    uint64_t key;
    const rtcd_transform* back; /* the poses one step before `before` */
    uint32_t back_n;            /* bodies in back */
    const float* vel;           /* the velocities with `before` (6 a body), or NULL */
    float* reach;               /* each body's farthest vertex from its origin */
    float dt;
} why_state;

typedef struct v3f { float x, y, z; } v3f;
static v3f v3f_of(const float* p) { v3f r = {p[0], p[1], p[2]}; return r; }
static v3f xform(const rtcd_transform* t, v3f p)
{
    const float* r = t->rotation;
    v3f o = {r[0] * p.x + r[1] * p.y + r[2] * p.z + t->translation[0],
             r[3] * p.x + r[4] * p.y + r[5] * p.z + t->translation[1],
             r[6] * p.x + r[7] * p.y + r[8] * p.z + t->translation[2]};
    return o;
}
/* the inverse of xform */
static v3f untransform(const rtcd_transform* t, v3f p)
{
    const float* r = t->rotation;
    v3f d = {p.x - t->translation[0], p.y - t->translation[1], p.z - t->translation[2]};
    v3f o = {r[0] * d.x + r[3] * d.y + r[6] * d.z, r[1] * d.x + r[4] * d.y + r[7] * d.z,
             r[2] * d.x + r[5] * d.y + r[8] * d.z};
    return o;
}
static v3f rotate(const rtcd_transform* t, v3f p)
{
    const float* r = t->rotation;
    v3f o = {r[0] * p.x + r[1] * p.y + r[2] * p.z, r[3] * p.x + r[4] * p.y + r[5] * p.z,
             r[6] * p.x + r[7] * p.y + r[8] * p.z};
    return o;
}
static float dist3(v3f a, v3f b)
{
    float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    return sqrtf(dx * dx + dy * dy + dz * dz);
}
static float dot3(v3f a, v3f b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static void note(why_state* s, const why_vertex* v)
{
    why_class* c = &s->cls[v->cls];
    c->vertices++;
    c->sum += v->depth;
    c->max = fmaxf(c->max, v->depth);
    /* the deepest top_cap, kept sorted by depth, deepest first */
    uint32_t n = s->top_n;
    if (n == s->top_cap && v->depth <= s->top[n - 1].depth) return;
    uint32_t i = n < s->top_cap ? n++ : n - 1;
    while (i > 0 && s->top[i - 1].depth < v->depth) {
        s->top[i] = s->top[i - 1];
        --i;
    }
    s->top[i] = *v;
    s->top_n = n;
}

/* The manifold point nearest `p` (world) among the pair's points: either end. */
static const rtcd_world_contact* match_point(const rtcd_world_contact* c, uint32_t n, int32_t a, int32_t b, v3f p,
                                             float tol, uint32_t* pair_points)
{
    const rtcd_world_contact* best = NULL;
    float best_d = tol;
    *pair_points = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (!((c[i].body_a == a && c[i].body_b == b) || (c[i].body_a == b && c[i].body_b == a))) continue;
        (*pair_points)++;
        v3f on_b = v3f_of(c[i].position);
        v3f on_a = {on_b.x + c[i].normal[0] * c[i].distance, on_b.y + c[i].normal[1] * c[i].distance,
                    on_b.z + c[i].normal[2] * c[i].distance};
        float d = fminf(dist3(on_a, p), dist3(on_b, p));
        if (d <= best_d) {
            best_d = d;
            best = &c[i];
        }
    }
    return best;
}

/* The push the matched manifold point gives body `mover` (unit, world). */
static v3f push_of(const rtcd_world_contact* c, int32_t mover)
{
    float sgn = c->body_a == mover ? 1.0f : -1.0f;
    v3f n = {sgn * c->normal[0], sgn * c->normal[1], sgn * c->normal[2]};
    return n;
}

static float len3(v3f a) { return sqrtf(dot3(a, a)); }

/* The motion figures of vertex l (x's frame; pw after the step, world) of x
 * relative to y. */
static void vertex_motion(const why_state* s, uint32_t x, uint32_t y, v3f l, v3f pw, const rtcd_transform* bx,
                          const rtcd_transform* by, const rtcd_transform* px, const rtcd_transform* py, why_vertex* v)
{
    v3f was = untransform(by, xform(bx, l)), now = untransform(py, pw);
    v->move_step = dist3(was, now);
    if (s->back && x < s->back_n && y < s->back_n) {
        v3f older = untransform(&s->back[y], xform(&s->back[x], l));
        v->move_before = dist3(older, was);
    }
    (void)px;
    if (s->vel && s->reach) {
        const float* a = s->vel + 6 * x;
        const float* b = s->vel + 6 * y;
        v3f dl = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
        v->vel_bound = s->dt * (len3(dl) + len3(v3f_of(a + 3)) * s->reach[x] + len3(v3f_of(b + 3)) * s->reach[y]);
    }
}

/* Vertices of body x inside body y (both placed by their poses). */
static void pair_vertices(why_state* s, const rtcd_world* w, uint32_t step, uint32_t x, uint32_t y,
                          const rtcd_transform* before, const rtcd_world_contact* wc, uint32_t nwc)
{
    const rtcd_mesh* mx = rtcd_shape_body_mesh(rtcd_world_body_shape(w, x));
    const rtcd_mesh* my = rtcd_shape_body_mesh(rtcd_world_body_shape(w, y));
    rtcd_transform px, py;
    rtcd_world_get_pose(w, x, &px);
    rtcd_world_get_pose(w, y, &py);
    const rtcd_transform* bx = &before[x];
    const rtcd_transform* by = &before[y];
    float lo[3], hi[3];
    rtcd_mesh_bounds(my, lo, hi);
    const float* vx = rtcd_mesh_vertices(mx);
    uint32_t nv = rtcd_mesh_vertex_count(mx);
    int rays_done = 0, own_done = 0;
    rtcd_pair_result own;
    memset(&own, 0, sizeof own);
    uint32_t ray_count = 0;
    rtcd_contact reduced[RTCD_MAX_MANIFOLD_POINTS];
    uint32_t reduced_n = 0;
    for (uint32_t i = 0; i < nv; ++i) {
        v3f pw = xform(&px, v3f_of(vx + 3 * i));
        v3f q = untransform(&py, pw);
        float qa[3] = {q.x, q.y, q.z};
        if (q.x < lo[0] || q.y < lo[1] || q.z < lo[2] || q.x > hi[0] || q.y > hi[1] || q.z > hi[2]) continue;
        if (!rtcd_mesh_contains_point(my, qa)) continue;
        float cl[3];
        float depth = rtcd_mesh_closest_point(my, qa, cl, NULL);
        s->ruler_sum += depth;
        v3f out = rotate(&py, (v3f){(cl[0] - q.x) / fmaxf(depth, 1e-12f), (cl[1] - q.y) / fmaxf(depth, 1e-12f),
                                    (cl[2] - q.z) / fmaxf(depth, 1e-12f)});
        why_vertex v = {step, x, i, (int32_t)y, depth, C_NO_RAY, NAN, NAN, 0, 0, -1.0f, -1.0f, -1.0f, -1.0f};
        vertex_motion(s, x, y, v3f_of(vx + 3 * i), pw, bx, by, &px, &py, &v);
        const rtcd_world_contact* m = match_point(wc, nwc, (int32_t)x, (int32_t)y, pw, s->tol_match, &v.manifold_points);
        if (m) {
            v.contact_depth = -m->distance;
            v.cos_normal = dot3(push_of(m, (int32_t)x), out);
            v.cls = v.contact_depth < depth - s->tol_depth ? C_SHALLOW : v.cos_normal < 0.906f ? C_NORMAL_OFF : C_SOLVER;
            note(s, &v);
            continue;
        }
        /* No manifold point: where was the vertex when the narrow phase ran
         * (the poses before the step)? */
        v3f q0 = untransform(by, xform(bx, v3f_of(vx + 3 * i)));
        float q0a[3] = {q0.x, q0.y, q0.z};
        if (!rtcd_mesh_contains_point(my, q0a)) {
            float gap = rtcd_mesh_closest_point(my, q0a, NULL, NULL);
            v.contact_depth = -gap;
            v.cls = gap <= s->near ? C_NEAR_MISSING : C_ENTERED;
            note(s, &v);
            continue;
        }
        float depth0 = rtcd_mesh_closest_point(my, q0a, NULL, NULL); /* what the narrow phase could see */
        if (!rays_done) {
            rays_done = 1;
            uint32_t need = nv + rtcd_mesh_vertex_count(my);
            if (need > s->ray_cap) {
                free(s->rays);
                s->ray_cap = need;
                s->rays = (rtcd_ray_hit*)malloc(sizeof(rtcd_ray_hit) * need);
            }
            if (!s->rays || rtcd_collide_standard(&s->np, mx, bx, my, by, s->rays, s->ray_cap, &ray_count, NULL))
                ray_count = 0;
            rtcd_contact all[512];
            uint32_t n = 0;
            for (uint32_t r = 0; r < ray_count && n < 512; ++r)
                all[n++] = rtcd_contact_from_ray(&s->rays[r], s->np.contact_normal);
            reduced_n = rtcd_reduce_contacts(all, n, reduced);
        }
        const rtcd_ray_hit* ray = NULL;
        for (uint32_t r = 0; r < ray_count; ++r)
            if (s->rays[r].direction == 0 && s->rays[r].vertex == i) ray = &s->rays[r];
        if (ray) {
            rtcd_contact c = rtcd_contact_from_ray(ray, s->np.contact_normal);
            v.contact_depth = c.depth;
            v.cos_normal = dot3(v3f_of(c.normal_on_b), out); /* direction 0: A (x) moves along the normal */
            if (v.contact_depth < depth0 - s->tol_depth || v.cos_normal < 0.906f) v.cls = C_RAY_WRONG;
            else {
                if (!own_done) {
                    own_done = 1;
                    rtcd_pair_desc d;
                    memset(&d, 0, sizeof d);
                    d.a = mx, d.b = my, d.pose_a = *bx, d.pose_b = *by, d.key = ++s->key;
                    d.has_back = x < s->back_n && y < s->back_n;
                    if (d.has_back) d.back_a = s->back[x], d.back_b = s->back[y];
                    if (rtcd_batch_collide(s->batch, &d, 1, &own, NULL) != RTCD_OK) own.contact_count = 0;
                }
                int kept = 0, own_kept = 0;
                for (uint32_t k = 0; k < reduced_n; ++k) kept |= reduced[k].feature == i;
                for (uint32_t k = 0; k < own.contact_count; ++k) own_kept |= own.contacts[k].feature == i;
                v.rtcd_points = own.contact_count;
                v.rtcd_min_gap = -1.0f;
                for (uint32_t k = 0; k < own.contact_count; ++k)
                    for (uint32_t l = k + 1; l < own.contact_count; ++l) {
                        float g = dist3(v3f_of(own.contacts[k].point_on_b), v3f_of(own.contacts[l].point_on_b));
                        v.rtcd_min_gap = v.rtcd_min_gap < 0 ? g : fminf(v.rtcd_min_gap, g);
                    }
                v.cls = own_kept ? C_RTCD_KEPT : kept ? C_CROWDED : C_REDUCED_DROPPED;
            }
        }
        note(s, &v);
    }
}

static void plane_vertices(why_state* s, const rtcd_world* w, uint32_t step, uint32_t x, const rtcd_transform* before,
                           const rtcd_world_contact* wc, uint32_t nwc)
{
    const rtcd_mesh* mx = rtcd_shape_body_mesh(rtcd_world_body_shape(w, x));
    rtcd_transform px;
    rtcd_world_get_pose(w, x, &px);
    const float* vx = rtcd_mesh_vertices(mx);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(mx); ++i) {
        v3f pw = xform(&px, v3f_of(vx + 3 * i));
        if (pw.z >= 0) continue;
        s->ruler_sum += -pw.z;
        why_vertex v = {step, x, i, -1, -pw.z, C_PLANE_MISSING, NAN, NAN, 0, 0, -1.0f, -1.0f, -1.0f, -1.0f};
        /* Unmatched: contact_depth is the depth when the narrow phase ran
         * (negative: above); the motion figures are heights' changes. */
        v3f was = xform(&before[x], v3f_of(vx + 3 * i));
        v.contact_depth = -was.z;
        v.move_step = was.z - pw.z;
        if (s->back && x < s->back_n) v.move_before = xform(&s->back[x], v3f_of(vx + 3 * i)).z - was.z;
        if (s->vel && s->reach) v.vel_bound = s->dt * (fabsf(s->vel[6 * x + 2]) + len3(v3f_of(s->vel + 6 * x + 3)) * s->reach[x]);
        const rtcd_world_contact* m = match_point(wc, nwc, (int32_t)x, -1, pw, s->tol_match, &v.manifold_points);
        if (m) {
            v.contact_depth = -m->distance;
            v.cos_normal = push_of(m, (int32_t)x).z;
            v.cls = C_PLANE_SOLVER;
        }
        note(s, &v);
    }
}

static void sample(why_state* s, const demo_scene* sc, uint32_t step, const rtcd_transform* before)
{
    const rtcd_world* w = sc->world;
    uint32_t nwc = rtcd_world_get_contacts(w, NULL, 0);
    rtcd_world_contact* wc = (rtcd_world_contact*)malloc(sizeof(rtcd_world_contact) * (nwc ? nwc : 1));
    nwc = rtcd_world_get_contacts(w, wc, nwc);
    uint32_t nb = rtcd_world_body_count(w);
    float r2 = 2.0f * sc->bounding_radius;
    rtcd_transform* p = (rtcd_transform*)malloc(sizeof(rtcd_transform) * nb);
    for (uint32_t b = 0; b < nb; ++b) rtcd_world_get_pose(w, b, &p[b]);
    for (uint32_t a = 0; a < nb; ++a) {
        plane_vertices(s, w, step, a, before, wc, nwc);
        for (uint32_t b = a + 1; b < nb; ++b) {
            v3f ta = v3f_of(p[a].translation), tb = v3f_of(p[b].translation);
            if (dist3(ta, tb) > r2) continue;
            pair_vertices(s, w, step, a, b, before, wc, nwc);
            pair_vertices(s, w, step, b, a, before, wc, nwc);
        }
    }
    rtcd_penetration pen;
    if (rtcd_world_measure_penetration(w, &pen) == RTCD_OK) s->measured_sum += pen.sum;
    s->samples++;
    free(p);
    free(wc);
}

int main(int argc, char** argv)
{
    uint32_t from = 300, every = 30, top = 12;
    float tol_match = 1e-3f, tol_depth = 1e-3f;
    /* our own options first; the rest go to the demos' parser */
    char** rest = (char**)malloc(sizeof(char*) * (size_t)(argc + 1));
    int nrest = 0;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc; ++i) {
        if (i + 1 < argc && !strcmp(argv[i], "--from")) from = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--every")) every = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--top")) top = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--tol-match")) tol_match = (float)atof(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--tol-depth")) tol_depth = (float)atof(argv[++i]);
        else rest[nrest++] = argv[i];
    }
    demo_options o;
    int pr = demo_parse_options(DEMO_AVALANCHE, nrest, rest, &o);
    free(rest);
    if (pr) return pr == DEMO_CLI_HELP ? 0 : 2;
    if (!every) every = 1;
    o.quiet = 1;
    why_state s;
    memset(&s, 0, sizeof s);
    s.top_cap = top < 1 ? 1 : top > TOP_MAX ? TOP_MAX : top;
    s.tol_match = tol_match;
    s.tol_depth = tol_depth;
    s.near = o.speculative ? o.speculative_margin : 0.0f;
    rtcd_world_def wd;
    demo_world_def(&o, &wd);
    s.np = wd.narrowphase;
    s.np.backend = RTCD_BACKEND_CPU;
    demo_scene sc;
    rtcd_error err = demo_scene_create(&o, &sc);
    if (err != RTCD_OK) {
        fprintf(stderr, "rest_why: scene: %s\n", rtcd_error_name(err));
        return 1;
    }
    rtcd_transform *before = NULL, *back = NULL;
    float* vel = NULL;
    uint32_t before_n = 0;
    s.dt = wd.time_step;
    if ((err = rtcd_batch_create(&s.np, &s.batch)) != RTCD_OK) {
        fprintf(stderr, "rest_why: batch: %s\n", rtcd_error_name(err));
        return 1;
    }
    for (uint32_t step = 0; step < o.steps && err == RTCD_OK; ++step) {
        if ((err = demo_scene_update(&sc, step)) != RTCD_OK) break;
        int sampled = step >= from && (step + 1 - from) % every == 0;
        uint32_t nb = rtcd_world_body_count(sc.world);
        if (step + 1 >= from) {
            /* the poses the step's narrow phase sees, and those a step
             * earlier (the motion the narrow phase knows) */
            rtcd_transform* t = back;
            back = before;
            s.back_n = back ? before_n : nb; /* bodies added since have no back */
            before = (rtcd_transform*)realloc(t, sizeof(rtcd_transform) * (nb ? nb : 1));
            before_n = nb;
            for (uint32_t b = 0; b < nb; ++b) rtcd_world_get_pose(sc.world, b, &before[b]);
            s.back = back ? back : before;
        }
        if (sampled) {
            free(vel);
            vel = (float*)malloc(sizeof(float) * 6 * (nb ? nb : 1));
            if (vel && rtcd_world_get_velocities(sc.world, 0, nb, vel) != RTCD_OK) {
                free(vel);
                vel = NULL;
            }
            s.vel = vel;
            if (!s.reach) {
                s.reach = (float*)calloc(nb ? nb : 1, sizeof(float));
                for (uint32_t b = 0; b < nb && s.reach; ++b) {
                    const rtcd_mesh* m = rtcd_shape_body_mesh(rtcd_world_body_shape(sc.world, b));
                    const float* mv = m ? rtcd_mesh_vertices(m) : NULL;
                    for (uint32_t k = 0; mv && k < rtcd_mesh_vertex_count(m); ++k)
                        s.reach[b] = fmaxf(s.reach[b], len3(v3f_of(mv + 3 * k)));
                }
            }
        }
        if ((err = rtcd_world_step(sc.world)) != RTCD_OK) break;
        if (sampled) sample(&s, &sc, step, before);
    }
    free(before);
    free(back);
    free(vel);
    free(s.reach);
    rtcd_batch_release(s.batch);
    if (err != RTCD_OK) fprintf(stderr, "rest_why: step: %s\n", rtcd_error_name(err));
    printf("{\"scene\":\"%s\",\"algorithm\":\"%s\",\"objects\":%u,\"steps\":%u,\"from\":%u,\"every\":%u,\"samples\":%u,"
           "\"tol_match\":%g,\"tol_depth\":%g,\"ruler_sum_mean\":%.6f,\"measured_sum_mean\":%.6f,\"classes\":{",
           o.scene == DEMO_AVALANCHE ? "avalanche" : "spawner", rtcd_algorithm_name(o.algorithm), o.objects, o.steps,
           from, every, s.samples, tol_match, tol_depth, s.samples ? s.ruler_sum / s.samples : 0.0,
           s.samples ? s.measured_sum / s.samples : 0.0);
    for (int c = 0; c < C_COUNT; ++c)
        printf("%s\"%s\":{\"vertices\":%llu,\"sum_mean\":%.6f,\"max\":%.5f}", c ? "," : "", class_name[c],
               (unsigned long long)s.cls[c].vertices, s.samples ? s.cls[c].sum / s.samples : 0.0, s.cls[c].max);
    printf("},\"deepest\":[");
    for (uint32_t i = 0; i < s.top_n; ++i) {
        const why_vertex* v = &s.top[i];
        printf("%s{\"step\":%u,\"body\":%u,\"vertex\":%u,\"other\":%d,\"depth\":%.5f,\"class\":\"%s\","
               "\"contact_depth\":%.5f,\"cos_normal\":%.3f,\"pair_points\":%u,\"rtcd_points\":%u,\"rtcd_min_gap\":%.4f,"
               "\"move_before\":%.5f,\"move_step\":%.5f,\"vel_bound\":%.5f}",
               i ? "," : "", v->step, v->body, v->vertex, v->other, v->depth, class_name[v->cls],
               isnan(v->contact_depth) ? -1.0 : v->contact_depth, isnan(v->cos_normal) ? -2.0 : v->cos_normal,
               v->manifold_points, v->rtcd_points, v->rtcd_min_gap, v->move_before, v->move_step, v->vel_bound);
    }
    printf("]}\n");
    free(s.rays);
    demo_scene_destroy(&sc);
    return err == RTCD_OK ? 0 : 1;
}
