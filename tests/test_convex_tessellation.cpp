// rtcdTessellateConvex (bullet_plugin/plugin_convex.h): every Bullet convex
// shape it takes becomes a mesh rtcd accepts, whose vertices lie on the exact
// collision surface (analytic distance, or Bullet's support for hulls), whose
// volume is the analytic one within the chordal bound, and whose support in
// 200 random directions is within that bound of Bullet's own
// localGetSupportingVertex (the independent reference). Shapes it cannot take
// are declined with a reason.
#include "plugin_convex.h"

#include <rtcd/rtcd_mesh.h>

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCapsuleShape.h>
#include <BulletCollision/CollisionShapes/btCompoundShape.h>
#include <BulletCollision/CollisionShapes/btConeShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btConvexPointCloudShape.h>
#include <BulletCollision/CollisionShapes/btConvexTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btCylinderShape.h>
#include <BulletCollision/CollisionShapes/btEmptyShape.h>
#include <BulletCollision/CollisionShapes/btMultiSphereShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/CollisionShapes/btStaticPlaneShape.h>
#include <BulletCollision/CollisionShapes/btTetrahedronShape.h>
#include <BulletCollision/CollisionShapes/btTriangleMesh.h>
#include <BulletCollision/CollisionShapes/btTriangleShape.h>
#include <BulletCollision/CollisionShapes/btUniformScalingShape.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "test_check.hpp"

#define CHECK_MSG(c, ...)                                                                                              \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #c);                                \
            std::fprintf(stderr, __VA_ARGS__);                                                                         \
            std::fprintf(stderr, "\n");                                                                                \
            ++g_failures;                                                                                              \
        }                                                                                                              \
    } while (0)

static const double kPi = 3.14159265358979323846;

struct D3 {
    double x, y, z;
    double operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
};
static D3 sub(D3 a, D3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
static double dot(D3 a, D3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static double len(D3 a) { return std::sqrt(dot(a, a)); }
static D3 bt(const btVector3& v) { return {v.x(), v.y(), v.z()}; }

// Steiner: the volume of a convex body with volume V, area A and integrated
// mean curvature M grown by m; its area is the derivative.
static double steinerVolume(double V, double A, double M, double m)
{
    return V + A * m + M * m * m + 4.0 / 3.0 * kPi * m * m * m;
}
static double steinerArea(double A, double M, double m) { return A + 2.0 * M * m + 4.0 * kPi * m * m; }

// Signed distance in 2D to a convex polygon (counter-clockwise).
static double polygonDistance(const std::vector<std::pair<double, double>>& poly, double px, double py)
{
    double outside = 0.0, best = 1e300, inside = -1e300;
    bool out = false;
    for (size_t i = 0; i < poly.size(); ++i) {
        auto a = poly[i], b = poly[(i + 1) % poly.size()];
        double ex = b.first - a.first, ey = b.second - a.second, l2 = ex * ex + ey * ey;
        double t = std::max(0.0, std::min(1.0, ((px - a.first) * ex + (py - a.second) * ey) / l2));
        double dx = px - a.first - t * ex, dy = py - a.second - t * ey;
        best = std::min(best, std::sqrt(dx * dx + dy * dy));
        double side = ((px - a.first) * ey - (py - a.second) * ex) / std::sqrt(l2); // > 0 outside
        if (side > 0) out = true;
        inside = std::max(inside, side);
    }
    outside = best;
    return out ? outside : inside;
}

// What the exact surface is, from the test's side.
struct Expect {
    double volume = 0;     // analytic volume inside the surface
    double volumeLo = 0;   // least volume the mesh may have (inscribed, chordal bound)
    double size = 1;       // length scale of the 1e-5 relative tolerances
    double deficit = 0;    // bound on h_surface(n) - h_mesh(n) >= 0
    std::function<double(D3)> distance; // |distance| of a point from the surface (exact on it)
    const char* name = "";
};

struct Measured {
    size_t triangles = 0;
    double volumeError = 0;  // relative
    double vertexError = 0;  // relative to size
    double maxDeficit = 0;   // absolute
};

static const btConvexShape* asConvex(const btCollisionShape* s) { return static_cast<const btConvexShape*>(s); }

// Tessellates, builds the rtcd mesh and checks it against `e` and against
// Bullet's localGetSupportingVertex of the shape.
static Measured check_shape(const btCollisionShape* shape, int resolution, const Expect& e,
                            const std::function<double(D3)>& bulletSupport = nullptr)
{
    Measured r;
    std::vector<float> v;
    std::vector<uint32_t> idx;
    std::string why;
    bool ok = rtcdTessellateConvex(shape, resolution, v, idx, why);
    CHECK_MSG(ok, "%s: declined: %s", e.name, why.c_str());
    if (!ok) return r;
    CHECK(why.empty());
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v.data();
    def.vertex_count = (uint32_t)(v.size() / 3);
    def.indices = idx.data();
    def.triangle_count = (uint32_t)(idx.size() / 3);
    def.name = e.name;
    rtcd_mesh* mesh = nullptr;
    rtcd_error err = rtcd_mesh_create(&def, &mesh);
    CHECK_MSG(err == RTCD_OK, "%s: rtcd_mesh_create: %s", e.name, rtcd_last_error_message());
    if (err != RTCD_OK) return r;
    r.triangles = def.triangle_count;
    const double tol = 1e-5 * e.size;

    // Volume: inscribed, so at most the exact one, at least the chordal bound below it.
    double volume = rtcd_mesh_mass_properties(mesh).volume;
    CHECK(volume > 0);
    if (e.volume > 0) {
        r.volumeError = (e.volume - volume) / e.volume;
        CHECK_MSG(volume <= e.volume * (1 + 1e-5) && volume >= e.volumeLo * (1 - 1e-5),
                  "%s: volume %.9g, exact %.9g, least allowed %.9g", e.name, volume, e.volume, e.volumeLo);
    }

    // Every vertex on the surface.
    for (uint32_t i = 0; i < def.vertex_count; ++i) {
        D3 p = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
        double d = std::fabs(e.distance(p));
        r.vertexError = std::max(r.vertexError, d / e.size);
    }
    CHECK_MSG(r.vertexError <= 1e-5, "%s: a vertex lies %.3g (relative) off the surface", e.name, r.vertexError);

    // Support in 200 random directions against Bullet's.
    std::mt19937 rng(12345);
    std::normal_distribution<double> gauss;
    double worstLow = 0.0;
    for (int k = 0; k < 200; ++k) {
        D3 n = {gauss(rng), gauss(rng), gauss(rng)};
        double l = len(n);
        n = {n.x / l, n.y / l, n.z / l};
        double hMesh = -1e300;
        for (uint32_t i = 0; i < def.vertex_count; ++i)
            hMesh = std::max(hMesh, dot(n, {v[3 * i], v[3 * i + 1], v[3 * i + 2]}));
        double hBullet = bulletSupport
                             ? bulletSupport(n)
                             : dot(n, bt(asConvex(shape)->localGetSupportingVertex(btVector3(
                                          (btScalar)n.x, (btScalar)n.y, (btScalar)n.z))));
        double deficit = hBullet - hMesh;
        r.maxDeficit = std::max(r.maxDeficit, deficit);
        worstLow = std::min(worstLow, deficit);
    }
    CHECK_MSG(worstLow >= -tol, "%s: the mesh stands %.3g out of Bullet's support", e.name, -worstLow);
    CHECK_MSG(r.maxDeficit <= e.deficit + tol, "%s: support deficit %.4g above the bound %.4g", e.name, r.maxDeficit,
              e.deficit);
    rtcd_mesh_release(mesh);
    char volumeText[64] = "volume not known";
    if (e.volume > 0)
        std::snprintf(volumeText, sizeof volumeText, "volume short %.3f%% (bound %.3f%%)", std::fabs(100 * r.volumeError),
                      100 * (e.volume - e.volumeLo) / e.volume);
    std::printf("  %-27s res %3d: %5zu triangles, %s, vertex off %.0e, support deficit %.2e (bound %.2e)\n", e.name,
                resolution, r.triangles, volumeText, r.vertexError, r.maxDeficit, e.deficit);
    return r;
}

// Chordal bound of a lathe whose surface reaches `rmax` from its axis.
static double latheDeficit(double rmax, int resolution) { return 2.0 * rmax * (1.0 - std::cos(kPi / resolution)); }

// Coordinates along the up axis and distance from it.
static void axial(D3 p, int up, double& y, double& r)
{
    y = p[up];
    double a = p[(up + 1) % 3], b = p[(up + 2) % 3];
    r = std::sqrt(a * a + b * b);
}

// ---- lathe shapes ----

static void sphere_case(double radius, double scale, double margin, int resolution)
{
    btSphereShape s((btScalar)radius);
    if (scale != 1.0) s.setLocalScaling(btVector3((btScalar)scale, (btScalar)scale, (btScalar)scale));
    if (margin >= 0) s.setMargin((btScalar)margin); // no effect: the radius is the margin
    const double R = radius * scale;
    CHECK(std::fabs(s.getMargin() - R) < 1e-6 * R);
    Expect e;
    e.name = "sphere";
    e.size = R;
    e.volume = 4.0 / 3.0 * kPi * R * R * R;
    e.deficit = latheDeficit(R, resolution);
    e.volumeLo = e.volume - e.deficit * 4.0 * kPi * R * R;
    e.distance = [R](D3 p) { return len(p) - R; };
    Measured m = check_shape(&s, resolution, e);
    if (resolution == 32 && scale == 1.0) CHECK(m.triangles >= 800 && m.triangles <= 1200);
}

static void capsule_case(int up, double radius, double height, const btVector3& scaling, int resolution)
{
    std::unique_ptr<btCapsuleShape> s(up == 0   ? new btCapsuleShapeX((btScalar)radius, (btScalar)height)
                                      : up == 1 ? new btCapsuleShape((btScalar)radius, (btScalar)height)
                                                : new btCapsuleShapeZ((btScalar)radius, (btScalar)height));
    s->setLocalScaling(scaling);
    s->setMargin(0.3f); // ignored by Bullet: the radius is the margin
    const double R = radius * scaling[(up + 2) % 3], hh = 0.5 * height * scaling[up];
    CHECK(std::fabs(s->getRadius() - R) < 1e-6 && std::fabs(s->getHalfHeight() - hh) < 1e-6);
    Expect e;
    e.name = up == 0 ? "capsule X" : (up == 1 ? "capsule Y" : "capsule Z");
    e.size = R + hh;
    e.volume = kPi * R * R * 2.0 * hh + 4.0 / 3.0 * kPi * R * R * R;
    e.deficit = latheDeficit(R, resolution);
    e.volumeLo = e.volume - e.deficit * (4.0 * kPi * R * R + 2.0 * kPi * R * 2.0 * hh);
    e.distance = [=](D3 p) {
        double y, r;
        axial(p, up, y, r);
        double dy = std::max(0.0, std::fabs(y) - hh);
        return std::sqrt(r * r + dy * dy) - R;
    };
    check_shape(s.get(), resolution, e);
}

static void cylinder_case(int up, const btVector3& halfExtents, const btVector3& scaling, double margin,
                          int resolution)
{
    std::unique_ptr<btCylinderShape> s(up == 0   ? new btCylinderShapeX(halfExtents)
                                       : up == 1 ? new btCylinderShape(halfExtents)
                                                 : new btCylinderShapeZ(halfExtents));
    s->setLocalScaling(scaling);
    if (margin >= 0) s->setMargin((btScalar)margin);
    const double m = s->getMargin();
    // Outer size: the half extents times the scaling, the margin inside them.
    const int radial = up == 0 ? 1 : 0;
    const double R = halfExtents[radial] * scaling[radial], H = halfExtents[up] * scaling[up];
    CHECK(std::fabs(s->getHalfExtentsWithMargin()[radial] - R) < 1e-5 && std::fabs(s->getHalfExtentsWithMargin()[up] - H) < 1e-5);
    const double r = R - m, h = H - m; // the core
    Expect e;
    e.name = up == 0 ? "cylinder X" : (up == 1 ? "cylinder Y" : "cylinder Z");
    e.size = std::max(R, H);
    // Core cylinder (radius r, height 2h): M = lateral (pi 2h) + two rims (pi r (pi / 2) each).
    const double V = kPi * r * r * 2 * h, A = 2 * kPi * r * r + 2 * kPi * r * 2 * h, M = kPi * 2 * h + kPi * kPi * r;
    e.volume = steinerVolume(V, A, M, m);
    e.deficit = latheDeficit(R, resolution);
    e.volumeLo = e.volume - e.deficit * steinerArea(A, M, m);
    e.distance = [=](D3 p) {
        double y, rr;
        axial(p, up, y, rr);
        double qr = rr - r, qy = std::fabs(y) - h;
        double outside = std::sqrt(std::max(qr, 0.0) * std::max(qr, 0.0) + std::max(qy, 0.0) * std::max(qy, 0.0));
        return outside + std::min(std::max(qr, qy), 0.0) - m;
    };
    check_shape(s.get(), resolution, e);
}

static void cone_case(int up, double radius, double height, const btVector3& scaling, double margin,
                      int resolution)
{
    std::unique_ptr<btConeShape> s(up == 0   ? new btConeShapeX((btScalar)radius, (btScalar)height)
                                   : up == 1 ? new btConeShape((btScalar)radius, (btScalar)height)
                                             : new btConeShapeZ((btScalar)radius, (btScalar)height));
    s->setLocalScaling(scaling);
    if (margin >= 0) s->setMargin((btScalar)margin);
    const double m = s->getMargin();
    // Bullet: the height scales with the up axis, the radius with the mean of the other two.
    const double R = radius * 0.5 * (scaling[(up + 1) % 3] + scaling[(up + 2) % 3]), h = height * scaling[up];
    CHECK(std::fabs(s->getRadius() - R) < 1e-5 && std::fabs(s->getHeight() - h) < 1e-5);
    Expect e;
    e.name = up == 0 ? "cone X" : (up == 1 ? "cone Y" : "cone Z");
    e.size = std::max(R, 0.5 * h) + m;
    const double L = std::hypot(R, h);
    // Core: V = pi R^2 h / 3, A = base + lateral, M = lateral (pi h) + rim (pi R times its exterior angle).
    const double V = kPi * R * R * h / 3, A = kPi * R * R + kPi * R * L, M = kPi * h + kPi * R * std::acos(-R / L);
    e.volume = steinerVolume(V, A, M, m);
    e.deficit = latheDeficit(R + m, resolution);
    e.volumeLo = e.volume - e.deficit * steinerArea(A, M, m);
    std::vector<std::pair<double, double>> tri = {{-R, -0.5 * h}, {R, -0.5 * h}, {0.0, 0.5 * h}};
    e.distance = [=](D3 p) {
        double y, r;
        axial(p, up, y, r);
        return polygonDistance(tri, r, y) - m;
    };
    check_shape(s.get(), resolution, e);
}

// The hull of spheres (c1, r1), (c2, r2), neither inside the other.
static void two_sphere_case(D3 c1, double r1, D3 c2, double r2, double scale, int resolution)
{
    btVector3 pos[2] = {btVector3((btScalar)c1.x, (btScalar)c1.y, (btScalar)c1.z),
                        btVector3((btScalar)c2.x, (btScalar)c2.y, (btScalar)c2.z)};
    btScalar rad[2] = {(btScalar)r1, (btScalar)r2};
    btMultiSphereShape s(pos, rad, 2);
    s.setLocalScaling(btVector3((btScalar)scale, (btScalar)scale, (btScalar)scale));
    s.setMargin(0.1f); // cancels out in Bullet's support: the radii are the surface
    c1 = {c1.x * scale, c1.y * scale, c1.z * scale};
    c2 = {c2.x * scale, c2.y * scale, c2.z * scale};
    r1 *= scale;
    r2 *= scale;
    const double d = len(sub(c2, c1)), k = (r1 - r2) / d, ck = std::sqrt(1 - k * k);
    D3 a = {(c2.x - c1.x) / d, (c2.y - c1.y) / d, (c2.z - c1.z) / d};
    Expect e;
    e.name = "multi-sphere (2)";
    e.size = d + r1 + r2;
    // Cap of sphere 1 below the tangent circle, frustum, cap of sphere 2.
    const double y1 = r1 * k, y2 = d + r2 * k, z0 = r2 * k, ra = r1 * ck, rb = r2 * ck;
    e.volume = kPi * (r1 * r1 * (y1 + r1) - (y1 * y1 * y1 + r1 * r1 * r1) / 3) +
               kPi * (y2 - y1) * (ra * ra + ra * rb + rb * rb) / 3 +
               kPi * (r2 * r2 * (r2 - z0) - (r2 * r2 * r2 - z0 * z0 * z0) / 3);
    const double area = 2 * kPi * r1 * r1 * (1 + k) + 2 * kPi * r2 * r2 * (1 - k) + kPi * (ra + rb) * d * ck;
    e.deficit = latheDeficit(std::max(r1, r2), resolution);
    e.volumeLo = e.volume - e.deficit * area;
    e.distance = [=](D3 p) {
        D3 q = sub(p, c1);
        double y = dot(q, a), r = std::sqrt(std::max(0.0, dot(q, q) - y * y));
        // Tangent line: normal (ck, k) in (r, y); along its direction (-k, ck)
        // its ends (the tangent points) lie at t = 0 and t = d ck.
        double t = -r * k + y * ck;
        if (t < 0) return std::sqrt(r * r + y * y) - r1;
        if (t > d * ck) return std::sqrt(r * r + (y - d) * (y - d)) - r2;
        return r * ck + y * k - r1;
    };
    check_shape(&s, resolution, e);
}

// ---- box ----

static void box_case(const btVector3& half, const btVector3& scaling, double margin, int resolution)
{
    btBoxShape s(half);
    s.setLocalScaling(scaling);
    if (margin >= 0) s.setMargin((btScalar)margin);
    const double m = s.getMargin();
    const D3 h = {half.x() * scaling.x(), half.y() * scaling.y(), half.z() * scaling.z()};
    CHECK(std::fabs(s.getHalfExtentsWithMargin().x() - h.x) < 1e-5);
    Expect e;
    e.name = "box";
    e.size = std::max(h.x, std::max(h.y, h.z));
    e.volume = e.volumeLo = 8 * h.x * h.y * h.z;
    e.deficit = 0; // localGetSupportingVertex is the sharp box
    e.distance = [h](D3 p) {
        return std::max(std::fabs(p.x) - h.x, std::max(std::fabs(p.y) - h.y, std::fabs(p.z) - h.z));
    };
    check_shape(&s, resolution, e);
    // GJK's box (support without margin plus the margin) is rounded: the
    // mesh stands at most (sqrt(3) - 1) margin out of it.
    double worst = 0;
    std::vector<float> v;
    std::vector<uint32_t> idx;
    std::string why;
    CHECK(rtcdTessellateConvex(&s, resolution, v, idx, why));
    std::mt19937 rng(7);
    std::normal_distribution<double> gauss;
    for (int k = 0; k < 200; ++k) {
        btVector3 n((btScalar)gauss(rng), (btScalar)gauss(rng), (btScalar)gauss(rng));
        n.normalize();
        double hRound = dot(bt(n), bt(s.localGetSupportingVertexWithoutMargin(n))) + m;
        double hMesh = -1e300;
        for (size_t i = 0; i < v.size() / 3; ++i) hMesh = std::max(hMesh, dot(bt(n), {v[3 * i], v[3 * i + 1], v[3 * i + 2]}));
        CHECK(hMesh >= hRound - 1e-5 * e.size);
        worst = std::max(worst, hMesh - hRound);
    }
    CHECK_MSG(worst <= (std::sqrt(3.0) - 1) * m + 1e-5 * e.size, "box: %.4g out of the rounded box, margin %.4g", worst,
              m);
}

// ---- hulls ----

// A hull grown by margin m: every mesh vertex p is some point v of `points`
// pushed out by m along u, and Bullet's support along u reaches p exactly.
static std::function<double(D3)> hullDistance(const btConvexShape* shape, std::vector<D3> points, double m)
{
    return [=](D3 p) {
        size_t best = 0;
        double bestD = 1e300;
        for (size_t i = 0; i < points.size(); ++i) {
            double d = len(sub(p, points[i]));
            if (d < bestD) {
                bestD = d;
                best = i;
            }
        }
        double off = bestD - m; // distance to the nearest point, less the margin
        if (m <= 0) return off;
        D3 u = sub(p, points[best]);
        u = {u.x / bestD, u.y / bestD, u.z / bestD};
        double h = dot(u, bt(shape->localGetSupportingVertex(btVector3((btScalar)u.x, (btScalar)u.y, (btScalar)u.z))));
        return std::max(std::fabs(off), std::fabs(h - dot(u, p)));
    };
}

// The hull path's bound: rho (1 - cos(pi / min(S, 256))), rho half the
// diagonal of the points' bounding box plus the margin (no deficit without one).
static double hullDeficit(const std::vector<D3>& points, double m, int resolution)
{
    if (m <= 0) return 0.0;
    D3 lo = points[0], hi = points[0];
    for (const D3& p : points) {
        lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
        hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    }
    const double rho = 0.5 * len(sub(hi, lo)) + m;
    return rho * (1.0 - std::cos(kPi / std::min(resolution, 256)));
}

static std::vector<D3> boxCorners(D3 h)
{
    std::vector<D3> c;
    for (int i = 0; i < 8; ++i) c.push_back({(i & 1) ? h.x : -h.x, (i & 2) ? h.y : -h.y, (i & 4) ? h.z : -h.z});
    return c;
}

// Box hulls: a btConvexHullShape of the corners plus interior and repeated
// points, and a btConvexTriangleMeshShape of the box's twelve triangles.
static void box_hull_case(bool triangleMesh, D3 h0, const btVector3& scaling, double margin, int resolution = 32)
{
    std::unique_ptr<btTriangleMesh> tm;
    std::unique_ptr<btConvexShape> shape;
    std::vector<D3> corners = boxCorners(h0);
    if (triangleMesh) {
        tm.reset(new btTriangleMesh());
        const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
        auto P = [&](int i) { return btVector3((btScalar)corners[i].x, (btScalar)corners[i].y, (btScalar)corners[i].z); };
        for (auto& f : faces) {
            tm->addTriangle(P(f[0]), P(f[1]), P(f[2]));
            tm->addTriangle(P(f[0]), P(f[2]), P(f[3]));
        }
        shape.reset(new btConvexTriangleMeshShape(tm.get()));
    } else {
        btConvexHullShape* hull = new btConvexHullShape();
        for (const D3& c : corners) hull->addPoint(btVector3((btScalar)c.x, (btScalar)c.y, (btScalar)c.z), false);
        hull->addPoint(btVector3(0, 0, 0), false);
        hull->addPoint(btVector3((btScalar)(0.5 * h0.x), (btScalar)(-0.3 * h0.y), (btScalar)(0.2 * h0.z)), false);
        hull->addPoint(btVector3((btScalar)h0.x, (btScalar)h0.y, (btScalar)h0.z), false); // repeated corner
        hull->addPoint(btVector3((btScalar)h0.x, 0, 0), false);                           // on a face
        hull->recalcLocalAabb();
        shape.reset(hull);
    }
    shape->setLocalScaling(scaling);
    if (margin >= 0) shape->setMargin((btScalar)margin);
    const double m = shape->getMargin();
    const D3 h = {h0.x * scaling.x(), h0.y * scaling.y(), h0.z * scaling.z()};
    Expect e;
    e.name = triangleMesh ? "convex triangle mesh (box)" : "convex hull (box)";
    e.size = std::max(h.x, std::max(h.y, h.z)) + m;
    const double V = 8 * h.x * h.y * h.z, A = 8 * (h.x * h.y + h.y * h.z + h.z * h.x),
                 M = 2 * kPi * (h.x + h.y + h.z);
    e.volume = steinerVolume(V, A, M, m);
    e.deficit = hullDeficit(boxCorners(h), m, resolution);
    e.volumeLo = e.volume - e.deficit * steinerArea(A, M, m);
    e.distance = hullDistance(shape.get(), boxCorners(h), m);
    check_shape(shape.get(), resolution, e);
}

// A regular tetrahedron as a point cloud (uniformly scaled) and as a btBU_Simplex1to4.
static void tetra_case(bool simplex, double t, double scale, double margin)
{
    btVector3 pts[4] = {btVector3(1, 1, 1), btVector3(1, -1, -1), btVector3(-1, 1, -1), btVector3(-1, -1, 1)};
    for (auto& p : pts) p *= (btScalar)t;
    std::unique_ptr<btConvexShape> shape;
    if (simplex) {
        shape.reset(new btBU_Simplex1to4(pts[0], pts[1], pts[2], pts[3]));
        scale = 1.0; // its vertices ignore the local scaling, as does its support
    } else {
        btVector3 sc((btScalar)scale, (btScalar)scale, (btScalar)scale);
        shape.reset(new btConvexPointCloudShape(pts, 4, sc));
    }
    if (margin >= 0) shape->setMargin((btScalar)margin);
    const double m = shape->getMargin(), tt = t * scale, s = 2 * std::sqrt(2.0) * tt;
    std::vector<D3> corners;
    for (auto& p : pts) corners.push_back({p.x() * scale, p.y() * scale, p.z() * scale});
    Expect e;
    e.name = simplex ? "simplex (tetrahedron)" : "point cloud (tetrahedron)";
    e.size = std::sqrt(3.0) * tt + m;
    const double V = s * s * s / (6 * std::sqrt(2.0)), A = std::sqrt(3.0) * s * s,
                 M = 0.5 * 6 * s * (kPi - std::acos(1.0 / 3.0));
    e.volume = steinerVolume(V, A, M, m);
    e.deficit = hullDeficit(corners, m, 32);
    e.volumeLo = e.volume - e.deficit * steinerArea(A, M, m);
    e.distance = hullDistance(shape.get(), corners, m);
    check_shape(shape.get(), 32, e);
    shape.reset(); // the point cloud reads pts: gone before them
}

// A random cloud: validity, vertices on the grown hull, support within the margin.
static void cloud_case(int count, D3 stretch, double margin, unsigned seed, int resolution = 32)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> gauss;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    btConvexHullShape hull;
    std::vector<D3> points;
    for (int i = 0; i < count; ++i) {
        D3 p = {gauss(rng), gauss(rng), gauss(rng)};
        double l = len(p) / std::cbrt(0.3 + 0.7 * unit(rng)); // some inside, many on the sphere
        p = {p.x / l * stretch.x, p.y / l * stretch.y, p.z / l * stretch.z};
        hull.addPoint(btVector3((btScalar)p.x, (btScalar)p.y, (btScalar)p.z), false);
        points.push_back({(float)p.x, (float)p.y, (float)p.z});
    }
    hull.recalcLocalAabb();
    hull.setMargin((btScalar)margin);
    Expect e;
    e.name = "convex hull (random cloud)";
    e.size = std::max(stretch.x, std::max(stretch.y, stretch.z)) + margin;
    e.volume = 0; // not known: the mesh's validity, its vertices and its support only
    e.deficit = hullDeficit(points, margin, resolution);
    e.distance = hullDistance(&hull, points, margin);
    check_shape(&hull, resolution, e);
}

// ---- the rest ----

static void uniform_scaling_case()
{
    btConeShape cone(0.4f, 1.2f);
    cone.setMargin(0.05f);
    btUniformScalingShape s(&cone, 1.7f);
    const double f = 1.7, R = 0.4 * f, h = 1.2 * f, m = 0.05 * f, L = std::hypot(R, h);
    Expect e;
    e.name = "uniform scaling (cone)";
    e.size = std::max(R, 0.5 * h) + m;
    const double V = kPi * R * R * h / 3, A = kPi * R * R + kPi * R * L, M = kPi * h + kPi * R * std::acos(-R / L);
    e.volume = steinerVolume(V, A, M, m);
    e.deficit = latheDeficit(R + m, 32);
    e.volumeLo = e.volume - e.deficit * steinerArea(A, M, m);
    std::vector<std::pair<double, double>> tri = {{-R, -0.5 * h}, {R, -0.5 * h}, {0.0, 0.5 * h}};
    e.distance = [=](D3 p) { return polygonDistance(tri, std::hypot(p.x, p.z), p.y) - m; };
    check_shape(&s, 32, e);
}

static void expect_declined(const btCollisionShape* shape, int resolution, const char* what)
{
    std::vector<float> v = {1.0f};
    std::vector<uint32_t> idx = {1u};
    std::string why;
    bool ok = rtcdTessellateConvex(shape, resolution, v, idx, why);
    CHECK_MSG(!ok, "%s was tessellated", what);
    CHECK_MSG(!why.empty(), "%s: no reason given", what);
    CHECK(v.empty() && idx.empty());
    std::printf("  declined %-28s: %s\n", what, why.c_str());
}

static void test_lathes()
{
    for (int res : {8, 32, 64}) {
        sphere_case(0.5, 1.0, -1, res);
        cone_case(1, 0.5, 1.5, btVector3(1, 1, 1), -1, res);
    }
    sphere_case(0.5, 2.0, 0.2, 32);
    for (int up = 0; up < 3; ++up) {
        capsule_case(up, 0.3, 1.0, btVector3(1, 1, 1), 32);
        capsule_case(up, 0.3, 1.0, btVector3(2, 2, 2), 32);
        capsule_case(up, 0.25, 0.8, btVector3(1.5f, 0.7f, 2.0f), 32);
        cylinder_case(up, btVector3(0.5f, 0.7f, 0.5f), btVector3(1, 1, 1), -1, 32); // default margin 0.04
        cylinder_case(up, btVector3(0.5f, 0.7f, 0.5f), btVector3(1, 1, 1), 0.0, 32);
        cylinder_case(up, btVector3(0.5f, 0.7f, 0.5f), btVector3(1, 1, 1), 0.2, 32);
        cylinder_case(up, btVector3(0.6f, 0.6f, 0.6f), btVector3(1.5f, 0.8f, 1.2f), 0.1, 32);
        cone_case(up, 0.5, 1.5, btVector3(1, 1, 1), -1, 32);
        cone_case(up, 0.5, 1.5, btVector3(1, 1, 1), 0.0, 32);
        cone_case(up, 0.5, 1.5, btVector3(1, 1, 1), 0.1, 32);
        cone_case(up, 0.5, 1.5, btVector3(1.2f, 2.0f, 0.8f), 0.05, 32);
    }
    cylinder_case(1, btVector3(1.0f, 0.05f, 1.0f), btVector3(1, 1, 1), 0.05, 32); // a disk: no flat side
    capsule_case(1, 0.05, 4.0, btVector3(1, 1, 1), 32);                            // long and thin
}

static void test_multi_sphere()
{
    two_sphere_case({0, 0, 0}, 0.3, {0.5, 0.4, -0.2}, 0.3, 1.0, 32);
    two_sphere_case({0.1, -0.2, 0.3}, 0.5, {-0.4, 0.6, 0.1}, 0.2, 1.0, 32);
    two_sphere_case({0.1, -0.2, 0.3}, 0.2, {-0.4, 0.6, 0.1}, 0.5, 1.5, 32);
    two_sphere_case({0, 0, 0}, 0.4, {0, 0, 1}, 0.1, 1.0, 16);
    // One sphere, or one inside another: the sphere.
    btVector3 pos[3] = {btVector3(0.2f, 0.1f, 0), btVector3(0.25f, 0.1f, 0), btVector3(1, 0, 0)};
    btScalar rad[3] = {0.5f, 0.2f, 0.3f};
    for (int n : {1, 2}) {
        btMultiSphereShape s(pos, rad, n);
        Expect e;
        e.name = "multi-sphere (1)";
        e.size = 0.5;
        e.volume = 4.0 / 3.0 * kPi * 0.125;
        e.deficit = latheDeficit(0.5, 32);
        e.volumeLo = e.volume - e.deficit * kPi;
        e.distance = [](D3 p) { return len(sub(p, {0.2f, 0.1f, 0})) - 0.5f; };
        check_shape(&s, 32, e);
    }
    btVector3 apart[3] = {btVector3(0, 0, 0), btVector3(1, 0, 0), btVector3(0, 1, 0)};
    btMultiSphereShape three(apart, rad, 3);
    expect_declined(&three, 32, "multi-sphere of 3");
    btMultiSphereShape stretched(pos + 1, rad + 1, 2);
    stretched.setLocalScaling(btVector3(1, 2, 1));
    expect_declined(&stretched, 32, "multi-sphere, scaled (1,2,1)");
}

static void test_boxes()
{
    box_case(btVector3(0.5f, 0.3f, 0.8f), btVector3(1, 1, 1), -1, 32); // default margin 0.04
    box_case(btVector3(0.5f, 0.3f, 0.8f), btVector3(1, 1, 1), 0.0, 32);
    box_case(btVector3(0.5f, 0.3f, 0.8f), btVector3(1, 1, 1), 0.2, 32);
    box_case(btVector3(1.0f, 1.0f, 1.0f), btVector3(1.5f, 0.5f, 2.0f), 0.1, 32);
    box_case(btVector3(1.0f, 0.02f, 1.0f), btVector3(1, 1, 1), 0.01, 8); // a plate
    // Cube at resolution 32: 8 segments per edge, 6 * 64 * 2 triangles.
    btBoxShape cube(btVector3(1, 1, 1));
    std::vector<float> v;
    std::vector<uint32_t> idx;
    std::string why;
    CHECK(rtcdTessellateConvex(&cube, 32, v, idx, why));
    CHECK(idx.size() / 3 == 768 && v.size() / 3 == 6 * 81 - 12 * 9 + 8);
}

static void test_hulls()
{
    for (double margin : {-1.0, 0.0, 0.1}) {
        box_hull_case(false, {0.5, 0.3, 0.8}, btVector3(1, 1, 1), margin);
        box_hull_case(true, {0.5, 0.3, 0.8}, btVector3(1, 1, 1), margin);
        tetra_case(false, 0.5, 1.0, margin);
        tetra_case(true, 0.5, 1.0, margin);
    }
    box_hull_case(false, {0.5, 0.3, 0.8}, btVector3(1.5f, 0.7f, 2.0f), 0.05);
    box_hull_case(true, {0.5, 0.3, 0.8}, btVector3(1.5f, 0.7f, 2.0f), 0.05);
    tetra_case(false, 0.5, 1.8, 0.05);
    box_hull_case(false, {0.5, 0.3, 0.8}, btVector3(1, 1, 1), 0.1, 8);
    box_hull_case(false, {0.5, 0.3, 0.8}, btVector3(1, 1, 1), 0.1, 64);
    cloud_case(300, {1.0, 1.0, 1.0}, 0.05, 1);
    cloud_case(300, {1.0, 1.0, 1.0}, 0.3, 4, 16);
    cloud_case(200, {2.0, 0.5, 0.3}, 0.04, 2);
    cloud_case(60, {0.3, 0.3, 0.3}, 0.0, 3);
}

static void test_declined()
{
    btEmptyShape empty;
    btStaticPlaneShape plane(btVector3(0, 1, 0), 0);
    btCompoundShape compound;
    btTriangleShape triangle(btVector3(0, 0, 0), btVector3(1, 0, 0), btVector3(0, 1, 0));
    btConvexHullShape flat;
    for (int i = 0; i < 6; ++i) flat.addPoint(btVector3(std::cos(i * 1.0f), std::sin(i * 1.0f), 0.5f));
    btSphereShape sphere(1);
    expect_declined(nullptr, 32, "no shape");
    expect_declined(&empty, 32, "btEmptyShape");
    expect_declined(&plane, 32, "btStaticPlaneShape");
    expect_declined(&compound, 32, "btCompoundShape");
    expect_declined(&triangle, 32, "btTriangleShape (flat)");
    expect_declined(&flat, 32, "coplanar hull");
    expect_declined(&sphere, 4, "resolution 4");
}

int main() { return rtcd_run_tests({test_lathes, test_multi_sphere, test_boxes, test_hulls, uniform_scaling_case,
                         test_declined}); }
