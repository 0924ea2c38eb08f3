/* The installed C core used alone (rtcd::rtcd): a generated closed mesh,
 * validated into an rtcd mesh, and its volume. */
#include <rtcd/rtcd.h>

#include <stdio.h>

int main(void)
{
    rtcd_generated_mesh g;
    rtcd_error err = rtcd_generate_blob(RTCD_AVALANCHE_BLOB_VERTICES, 0.5f, 7u, &g);
    if (err != RTCD_OK) {
        fprintf(stderr, "rtcd_generate_blob: %s %s\n", rtcd_error_name(err), rtcd_last_error_message());
        return 1;
    }
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = g.vertices;
    def.vertex_count = g.vertex_count;
    def.indices = g.indices;
    def.triangle_count = g.triangle_count;
    rtcd_mesh* mesh = NULL;
    err = rtcd_mesh_create(&def, &mesh);
    rtcd_generated_free(&g);
    if (err != RTCD_OK) {
        fprintf(stderr, "rtcd_mesh_create: %s %s\n", rtcd_error_name(err), rtcd_last_error_message());
        return 1;
    }
    rtcd_mass_properties mp = rtcd_mesh_mass_properties(mesh);
    printf("rtcd core: mesh of %u vertices, %u triangles, volume %.4f\n", rtcd_mesh_vertex_count(mesh),
           rtcd_mesh_triangle_count(mesh), mp.volume);
    rtcd_mesh_release(mesh);
    return mp.volume > 0 ? 0 : 1;
}
