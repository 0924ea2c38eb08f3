/* Private to rtcd: mass properties of a triangle list (core/mesh/mass.c). */
#ifndef RTCD_CORE_MASS_H
#define RTCD_CORE_MASS_H

#include <rtcd/rtcd.h>

/* Mass properties of a closed surface (core/mesh/mass.c). */
rtcd_mass_properties rtcd_compute_mass_properties(const float* vertices, const uint32_t* indices,
                                                  uint32_t triangle_count);
/* Its volume alone, the same value, at a fraction of the cost. */
double rtcd_compute_volume(const float* vertices, const uint32_t* indices, uint32_t triangle_count);

#endif
