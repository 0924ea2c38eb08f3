/* Volume, centre of mass and inertia of a closed surface for unit density:
 * sum of signed tetrahedra (origin, triangle), each with the covariance of the
 * canonical tetrahedron mapped through its corner matrix. */
#include "mass.h"

#include <string.h>

/* Triangle t's corners less ref as the columns of a, and det(a): six times
 * the signed volume of the tetrahedron (ref, corners). Both sums below take
 * their terms from here, so the volumes they add are the same doubles. */
static double corner_matrix(const float* vertices, const uint32_t* indices, uint32_t t, const double ref[3],
                            double a[3][3])
{
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 3; ++k) a[k][c] = (double)vertices[3 * indices[3 * t + c] + k] - ref[k];
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

rtcd_mass_properties rtcd_compute_mass_properties(const float* vertices, const uint32_t* indices,
                                                  uint32_t triangle_count)
{
    /* Covariance of the tetrahedron (0, e_x, e_y, e_z) for unit density. */
    static const double canonical[3][3] = {
        {1.0 / 60.0, 1.0 / 120.0, 1.0 / 120.0},
        {1.0 / 120.0, 1.0 / 60.0, 1.0 / 120.0},
        {1.0 / 120.0, 1.0 / 120.0, 1.0 / 60.0},
    };
    rtcd_mass_properties out;
    memset(&out, 0, sizeof out);
    double cov[3][3] = {{0}};
    double first_moment[3] = {0, 0, 0};
    double volume = 0.0;
    /* Shift to the first vertex so far-off meshes keep their precision. */
    double ref[3] = {vertices[0], vertices[1], vertices[2]};
    for (uint32_t t = 0; t < triangle_count; ++t) {
        double a[3][3]; /* columns are the corners */
        double det = corner_matrix(vertices, indices, t, ref, a);
        volume += det / 6.0;
        for (int k = 0; k < 3; ++k) first_moment[k] += det / 24.0 * (a[k][0] + a[k][1] + a[k][2]);
        double ac[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                ac[i][j] = a[i][0] * canonical[0][j] + a[i][1] * canonical[1][j] + a[i][2] * canonical[2][j];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                cov[i][j] += det * (ac[i][0] * a[j][0] + ac[i][1] * a[j][1] + ac[i][2] * a[j][2]);
    }
    out.volume = volume;
    if (volume == 0.0) return out;
    double com[3];
    for (int k = 0; k < 3; ++k) com[k] = first_moment[k] / volume;
    /* Parallel axis: covariance about the centre of mass. */
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) cov[i][j] -= volume * com[i] * com[j];
    double trace = cov[0][0] + cov[1][1] + cov[2][2];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) out.inertia[3 * i + j] = (i == j ? trace : 0.0) - cov[i][j];
    for (int k = 0; k < 3; ++k) out.center_of_mass[k] = com[k] + ref[k];
    return out;
}

/* The volume sum of rtcd_compute_mass_properties, term for term: the same
 * double (an update's inside-out check, without the inertia). */
double rtcd_compute_volume(const float* vertices, const uint32_t* indices, uint32_t triangle_count)
{
    double volume = 0.0;
    double ref[3] = {vertices[0], vertices[1], vertices[2]};
    for (uint32_t t = 0; t < triangle_count; ++t) {
        double a[3][3];
        volume += corner_matrix(vertices, indices, t, ref, a) / 6.0;
    }
    return volume;
}
