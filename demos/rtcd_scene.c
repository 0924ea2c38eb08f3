/* Runs rtcd's standard narrow phase (CPU reference) over every overlapping
 * pair of a generated pile of avalanche blobs and prints a one-line JSON
 * summary. This is the README's first command until the Bullet demos land.
 * Usage: rtcd_scene [--objects N] [--spacing S] [--seed N] [--brute-force] [--no-cull] */
#include "pile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int main(int argc, char** argv)
{
    uint32_t objects = 512;
    float spacing = 0.85f;
    uint64_t seed = 1;
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--objects") && i + 1 < argc) objects = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--spacing") && i + 1 < argc) spacing = strtof(argv[++i], NULL);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--brute-force")) nd.traversal = RTCD_TRAVERSAL_BRUTE_FORCE;
        else if (!strcmp(argv[i], "--no-cull")) nd.cull_separated = 0;
        else {
            fprintf(stderr, "usage: %s [--objects N] [--spacing S] [--seed N] [--brute-force] [--no-cull]\n", argv[0]);
            return 2;
        }
    }
    scene_pile pile;
    rtcd_error err = scene_pile_create(objects, spacing, seed, &pile);
    if (err != RTCD_OK) {
        fprintf(stderr, "rtcd_scene: cannot build the pile: %s %s\n", rtcd_error_name(err), rtcd_last_error_message());
        return 1;
    }
    uint32_t cap = 2 * rtcd_mesh_vertex_count(pile.mesh);
    rtcd_ray_hit* rays = malloc(cap * sizeof *rays);
    rtcd_contact* contacts = malloc(cap * sizeof *contacts);
    if (!rays || !contacts) {
        fprintf(stderr, "rtcd_scene: out of memory\n");
        return 1;
    }
    uint64_t candidates = 0, cast = 0, colliding = 0, manifold_points = 0;
    uint32_t culled = 0, touching = 0;
    double start = now_ms();
    for (uint32_t p = 0; p < pile.pair_count; ++p) {
        uint32_t a = pile.pairs[p][0], b = pile.pairs[p][1], n = 0;
        rtcd_narrowphase_stats st;
        err = rtcd_collide_standard(&nd, pile.mesh, &pile.poses[a], pile.mesh, &pile.poses[b], rays, cap, &n, &st);
        if (err != RTCD_OK) {
            fprintf(stderr, "rtcd_scene: pair %u/%u: %s\n", a, b, rtcd_last_error_message());
            return 1;
        }
        for (uint32_t i = 0; i < n; ++i) contacts[i] = rtcd_contact_from_ray(&rays[i], nd.contact_normal);
        rtcd_contact reduced[RTCD_MAX_MANIFOLD_POINTS];
        manifold_points += rtcd_reduce_contacts(contacts, n, reduced);
        candidates += st.candidate_vertices;
        cast += st.rays_cast;
        colliding += st.colliding_rays;
        culled += st.culled;
        touching += n > 0;
    }
    double ms = now_ms() - start;
    printf("{\"scene\":\"pile\",\"backend\":\"cpu\",\"objects\":%u,\"triangles_per_object\":%u,\"pairs\":%u,"
           "\"pairs_culled\":%u,\"pairs_with_contacts\":%u,\"candidate_vertices\":%llu,\"rays_cast\":%llu,"
           "\"colliding_rays\":%llu,\"manifold_points\":%llu,\"narrowphase_ms\":%.3f}\n",
           objects, rtcd_mesh_triangle_count(pile.mesh), pile.pair_count, culled, touching,
           (unsigned long long)candidates, (unsigned long long)cast, (unsigned long long)colliding,
           (unsigned long long)manifold_points, ms);
    free(rays);
    free(contacts);
    scene_pile_destroy(&pile);
    return 0;
}
