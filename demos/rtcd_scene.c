/* Runs rtcd's standard narrow phase (CPU reference) over every overlapping
 * pair of a generated pile of avalanche blobs and prints a one-line JSON
 * summary. (The README's first command runs the avalanche demo now.)
 * Usage: rtcd_scene [--objects N] [--spacing S] [--seed N] [--brute-force] [--no-cull] */
#include "demo_cli.h"
#include "pile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv)
{
    uint32_t objects = 512;
    float spacing = 0.85f;
    uint64_t seed = 1;
    rtcd_narrowphase_def nd = rtcd_default_narrowphase_def();
    int brute_force = 0, no_cull = 0;
    const demo_cli_option opts[] = {
        {.name = "--objects", .type = DEMO_CLI_U32, .target = &objects, .meta = "N", .min = 1, .max = 1u << 20,
         .help = "blobs in the pile (default 512)"},
        {.name = "--spacing", .type = DEMO_CLI_FLOAT, .target = &spacing, .meta = "S", .fmin = 1e-3, .fmax = 1e3,
         .help = "grid step in blob diameters (default 0.85)"},
        {.name = "--seed", .type = DEMO_CLI_U64, .target = &seed, .meta = "N", .help = "default 1"},
        {.name = "--brute-force", .type = DEMO_CLI_FLAG, .target = &brute_force, .help = "every triangle per ray"},
        {.name = "--no-cull", .type = DEMO_CLI_FLAG, .target = &no_cull, .help = "no separation test per pair"},
    };
    demo_cli cli = {argv[0], "rtcd's standard narrow phase over a static pile of blobs; JSON on stdout.", opts,
                    sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    if (brute_force) nd.traversal = RTCD_TRAVERSAL_BRUTE_FORCE;
    if (no_cull) nd.cull_separated = 0;
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
    double start = demo_now_ms();
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
    double ms = demo_now_ms() - start;
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
