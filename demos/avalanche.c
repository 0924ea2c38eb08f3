/* The avalanche of the JVRC 2013 paper: 512 concave blobs (453 vertices,
 * 902 triangles) fall on a plane, 60 Hz, 600 steps. Run it through rtcd,
 * Bullet's GImpact algorithm or convex hulls (--narrowphase) to compare. */
#include "demo_common.h"

int main(int argc, char** argv)
{
    demo_options opt;
    int rc = demo_parse_options(DEMO_AVALANCHE, argc, argv, &opt);
    return rc ? demo_cli_exit_code(rc) : demo_run(&opt);
}
