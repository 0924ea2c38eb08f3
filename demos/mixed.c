/* The mixed scene (scenes/mixed.h): concave blobs, boxes, spheres, capsules,
 * a convex hull, cylinders, cones and the user's meshes (--mesh FILE) dropped
 * in layers on a one-sided terrain, 60 Hz, 600 steps. Run it through rtcd,
 * Bullet's GImpact algorithm or convex hulls (--narrowphase) to compare; the
 * summary counts the bodies per kind and those that passed through the
 * terrain ("tunnelled"). */
#include "demo_common.h"

int main(int argc, char** argv)
{
    demo_options opt;
    int rc = demo_parse_options(DEMO_MIXED, argc, argv, &opt);
    return rc ? demo_cli_exit_code(rc) : demo_run(&opt);
}
