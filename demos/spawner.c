/* The spawner of the JVRC 2013 paper: a source circling 6 m up drops one
 * object every 0.1 s, the four spawner meshes (902, 2130, 3456, 3458
 * triangles) in equal numbers; 60 Hz, 3000 steps, 500 objects at the end. */
#include "demo_common.h"

int main(int argc, char** argv)
{
    demo_options opt;
    int rc = demo_parse_options(DEMO_SPAWNER, argc, argv, &opt);
    return rc ? demo_cli_exit_code(rc) : demo_run(&opt);
}
