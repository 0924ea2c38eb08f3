/* Prints the deviation table (JVRC 2013 Table 1) for rtcd's three contact
 * normal modes on the sphere, the avalanche blob and the largest spawner mesh.
 * Usage: deviation [--orientations N] [--depths N] [--json] */
#include "demo_cli.h"
#include "deviation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv)
{
    scene_deviation_def def = scene_default_deviation_def();
    int json = 0;
    const demo_cli_option opts[] = {
        {.name = "--orientations", .type = DEMO_CLI_U32, .target = &def.orientations, .meta = "N", .min = 1,
         .max = 100000000u, .help = "random orientations per mesh"},
        {.name = "--depths", .type = DEMO_CLI_U32, .target = &def.depths, .meta = "N", .min = 1, .max = 100000000u,
         .help = "penetration depths per orientation"},
        {.name = "--json", .type = DEMO_CLI_FLAG, .target = &json, .help = "one JSON object instead of the table"},
    };
    demo_cli cli = {argv[0], "JVRC 2013 Table 1: deviation of the net penalty force per contact normal mode.", opts,
                    sizeof opts / sizeof *opts};
    int prc = demo_cli_parse(&cli, argc, argv);
    if (prc) return demo_cli_exit_code(prc);
    scene_deviation_result res[SCENE_DEVIATION_MESHES];
    const char* names[SCENE_DEVIATION_MESHES];
    uint32_t verts[SCENE_DEVIATION_MESHES];
    for (int m = 0; m < SCENE_DEVIATION_MESHES; ++m) {
        rtcd_mesh* mesh = scene_deviation_mesh(m, &names[m]);
        if (!mesh) {
            fprintf(stderr, "deviation: cannot build %s: %s\n", names[m], rtcd_last_error_message());
            return 1;
        }
        verts[m] = rtcd_mesh_vertex_count(mesh);
        rtcd_error err = scene_run_deviation(mesh, &def, &res[m]);
        rtcd_mesh_release(mesh);
        if (err != RTCD_OK) {
            fprintf(stderr, "deviation: %s: %s\n", rtcd_error_name(err), rtcd_last_error_message());
            return 1;
        }
    }
    if (json) {
        printf("{\"benchmark\":\"deviation\",\"orientations\":%u,\"depths\":%u,\"meshes\":[", def.orientations,
               def.depths);
        for (int m = 0; m < SCENE_DEVIATION_MESHES; ++m)
            printf("%s{\"mesh\":\"%s\",\"vertices\":%u,\"configurations\":%u,\"raw_pct\":%.4f,\"weighted_pct\":%.4f,"
                   "\"reprojected_pct\":%.6f}",
                   m ? "," : "", names[m], verts[m], res[m].configurations, res[m].deviation_pct[RTCD_CONTACT_RAY],
                   res[m].deviation_pct[RTCD_CONTACT_RAY_WEIGHTED], res[m].deviation_pct[RTCD_CONTACT_REPROJECTED]);
        printf("]}\n");
        return 0;
    }
    printf("Average deviation of the net penalty force, percent (%u orientations x %u depths)\n", def.orientations,
           def.depths);
    printf("%-22s", "technique");
    for (int m = 0; m < SCENE_DEVIATION_MESHES; ++m) printf("%16s", names[m]);
    printf("\n%-22s", "vertices");
    for (int m = 0; m < SCENE_DEVIATION_MESHES; ++m) printf("%16u", verts[m]);
    static const struct { const char* label; rtcd_contact_normal mode; } rows[] = {
        {"standard (raw rays)", RTCD_CONTACT_RAY},
        {"weighted [HFR08]", RTCD_CONTACT_RAY_WEIGHTED},
        {"re-projection", RTCD_CONTACT_REPROJECTED},
    };
    for (int r = 0; r < 3; ++r) {
        printf("\n%-22s", rows[r].label);
        for (int m = 0; m < SCENE_DEVIATION_MESHES; ++m) printf("%16.4f", res[m].deviation_pct[rows[r].mode]);
    }
    printf("\n");
    return 0;
}
