// Private to the Bullet plugin: closed triangle meshes of Bullet's convex
// shapes, so that rtcd can take pairs of a concave mesh and a convex shape.
#ifndef RTCD_PLUGIN_CONVEX_H
#define RTCD_PLUGIN_CONVEX_H

#include <cstdint>
#include <string>
#include <vector>

class btCollisionShape;

// Tessellates a Bullet convex shape's collision surface (what Bullet collides
// with, margin included) into a closed outward mesh in the shape's local frame.
// `resolution`: about how many segments a full circle gets (>= 8). False with
// `why` for shapes it cannot tessellate.
//
// On success `vertices` holds xyz per vertex and `indices` three per triangle,
// counter-clockwise seen from outside; the mesh is closed, 2-manifold and
// passes rtcd_mesh_create (a tessellation with a triangle rtcd would take for
// degenerate is declined instead). Every vertex lies on the collision surface (up to
// float rounding), so the mesh is inscribed in it. Per shape (S = resolution):
//
// - btSphereShape, btCapsuleShape(X/Z), btCylinderShape(X/Z), btConeShape(X/Z),
//   btMultiSphereShape with one or two spheres: a lathe (the exact profile
//   revolved in S steps around the up axis, a pole at each end). The profile
//   is the shape's core profile grown by its margin: the cylinder's rims are
//   rounded with the margin (its margin lies inside its half extents, as
//   Bullet's support mapping has it) and the cone is grown by its margin
//   outside radius and height (its rim and apex become arcs). Support deficit
//   (how far the mesh falls short of the surface in any direction):
//       0 <= h_shape(n) - h_mesh(n) <= 2 R (1 - cos(pi / S)),
//   R the largest distance of the surface from the axis (the profile's arcs
//   are cut so that their chordal error is at most R (1 - cos(pi / S)), the
//   revolution adds the same). Volume deficit <= that bound times the area.
//   Profile points closer than 1e-5 of the size to their neighbour, or so
//   near the axis that their ring would make slivers, are left out (only
//   with margins or dimensions far below the shape's size). Sphere at S=32:
//   960 triangles, 1.6 % short in volume.
// - btBoxShape: the sharp box of getHalfExtentsWithMargin(), each face a grid
//   (edges about size / (S / 4), at least 2 per face), welded. Bullet's box
//   margin lies inside the half extents; localGetSupportingVertex is this
//   sharp box, while GJK (support without margin plus the margin) sees the
//   corners and edges rounded with the margin: the mesh stands out of that
//   rounded box by at most (sqrt(3) - 1) margin at a corner.
// - btConvexHullShape, btConvexPointCloudShape, btConvexTriangleMeshShape,
//   btBU_Simplex1to4 and any other polyhedral convex shape: the convex hull
//   Q of its points (btConvexHullComputer), faces triangulated. With a margin
//   m Bullet collides with Q grown by m (faces pushed out, edges and vertices
//   rounded). The mesh approximates that: the hull of points on the grown
//   surface, each hull vertex v moved by m along its angle-weighted vertex
//   normal and, where v's normal cone is wide enough for that one point to
//   fall short by more than the tolerance (sharp corners, large margins),
//   also along a grid of directions over the cone, its corners (the normals
//   of the faces at v) included: there the faces come out at their exact
//   offset and edges and corners rounded in steps. Support deficit at most
//   rho (1 - cos(pi / S')), rho half the diagonal of the points' bounding box
//   plus m, S' = min(S, 256); no deficit without a margin.
// - btUniformScalingShape: its child's mesh, scaled.
// Declined (false, `why` says why): every other shape (concave, compound,
// plane, empty, 2D), flat hulls, multi-spheres with three or more spheres or a
// non-uniform scaling, non-positive dimensions, a resolution outside
// [8, 4096].
bool rtcdTessellateConvex(const btCollisionShape* shape, int resolution, std::vector<float>& vertices,
                          std::vector<uint32_t>& indices, std::string& why);

#endif
