// Closed triangle meshes of Bullet's convex shapes (see plugin_convex.h).
// Everything is computed in double and rounded to float at the end.
#include "plugin_convex.h"

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCapsuleShape.h>
#include <BulletCollision/CollisionShapes/btConeShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btConvexPointCloudShape.h>
#include <BulletCollision/CollisionShapes/btConvexTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btCylinderShape.h>
#include <BulletCollision/CollisionShapes/btMultiSphereShape.h>
#include <BulletCollision/CollisionShapes/btPolyhedralConvexShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/CollisionShapes/btStridingMeshInterface.h>
#include <BulletCollision/CollisionShapes/btTriangleCallback.h>
#include <BulletCollision/CollisionShapes/btUniformScalingShape.h>
#include <LinearMath/btConvexHullComputer.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace {

const double kPi = 3.14159265358979323846;

struct D3 {
    double x, y, z;
};
inline D3 operator+(D3 a, D3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline D3 operator-(D3 a, D3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline D3 operator*(double s, D3 a) { return {s * a.x, s * a.y, s * a.z}; }
inline double dot(D3 a, D3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline D3 cross(D3 a, D3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
inline double length(D3 a) { return std::sqrt(dot(a, a)); }
inline D3 normalized(D3 a)
{
    double l = length(a);
    return l > 0.0 ? (1.0 / l) * a : D3{0.0, 0.0, 0.0};
}
inline D3 fromBt(const btVector3& v) { return {(double)v.x(), (double)v.y(), (double)v.z()}; }
inline D3 axisVector(int axis) { return {axis == 0 ? 1.0 : 0.0, axis == 1 ? 1.0 : 0.0, axis == 2 ? 1.0 : 0.0}; }
inline bool finitePositive(double v) { return std::isfinite(v) && v > 0.0; }

// Segments for a run of `amount` when one segment may cover `step`: at least
// one, and an exact multiple is not rounded up by rounding noise.
int segmentsFor(double amount, double step)
{
    if (!(step > 0.0)) return 1;
    double n = std::ceil(amount / step - 1e-6);
    return n < 1.0 ? 1 : (int)std::min(n, 1e6);
}

struct MeshOut {
    std::vector<D3> v;
    std::vector<uint32_t> t;
    uint32_t add(D3 p)
    {
        v.push_back(p);
        return (uint32_t)(v.size() - 1);
    }
    void tri(uint32_t a, uint32_t b, uint32_t c)
    {
        t.push_back(a);
        t.push_back(b);
        t.push_back(c);
    }
};

// ---- lathe: a profile revolved around an axis ----

struct P2 {
    double r, y;
};

// The core profile in the (r, y) half plane, from the bottom of the axis
// (r = 0) counter-clockwise to its top (r = 0): corners q[i], each grown by
// its own radius rho[i]; edge i runs from q[i] to q[i+1] with outward unit
// normal edgeNormal[i] (given, so that an edge may have zero length, as the
// sphere's). The surface is the corners' disks joined by the edges pushed out
// along their normals: a polygon grown by a constant margin, or the hull of
// two disks (their common tangent as the edge).
struct CoreProfile {
    std::vector<P2> q;
    std::vector<double> rho;
    std::vector<P2> edgeNormal;
};

// An orthonormal frame with cross(u, w) == a: the ring angle turns from u to
// w, counter-clockwise seen from +a, so that the lathe's triangles come out
// counter-clockwise seen from outside.
struct LatheFrame {
    D3 origin, u, w, a;
};

LatheFrame axisFrame(int up)
{
    return {{0.0, 0.0, 0.0}, axisVector((up + 1) % 3), axisVector((up + 2) % 3), axisVector(up)};
}

bool buildLathe(const CoreProfile& core, const LatheFrame& frame, int segments, MeshOut& out, std::string& why)
{
    const size_t k = core.q.size() - 1;
    // Largest distance from the axis: the corners' arcs reach r + rho where
    // their normal turns through the horizontal.
    double rmax = 0.0, ylo = core.q[0].y - core.rho[0], yhi = core.q[k].y + core.rho[k];
    auto arcAngles = [&](size_t i, double& a0, double& a1) {
        P2 nin = i == 0 ? P2{0.0, -1.0} : core.edgeNormal[i - 1];
        P2 nout = i == k ? P2{0.0, 1.0} : core.edgeNormal[i];
        a0 = std::atan2(nin.y, nin.r);
        a1 = std::atan2(nout.y, nout.r);
    };
    for (size_t i = 0; i <= k; ++i) {
        double a0, a1;
        arcAngles(i, a0, a1);
        double c = (a0 <= 0.0 && a1 >= 0.0) ? 1.0 : std::max(std::cos(a0), std::cos(a1));
        rmax = std::max(rmax, core.q[i].r + core.rho[i] * c);
    }
    if (!finitePositive(rmax) || !finitePositive(yhi - ylo)) {
        why = "the shape has no volume (zero radius or height)";
        return false;
    }
    const double size = std::max(2.0 * rmax, yhi - ylo);
    // Around the axis a chord falls short by rmax (1 - cos(pi/S)); the
    // profile's arcs get the same chordal tolerance.
    const double tol = rmax * (1.0 - std::cos(kPi / segments));
    // Profile segments about as long as a ring's edge at rmax, but no more
    // than about S of them along the shape's size (long thin shapes).
    const double step = std::max(2.0 * kPi * rmax / segments, size / segments);

    std::vector<P2> pts;
    pts.push_back({0.0, ylo});
    for (size_t i = 0; i <= k; ++i) {
        double a0, a1;
        arcAngles(i, a0, a1);
        const double rho = core.rho[i], theta = a1 - a0;
        if (theta < -1e-12) {
            why = "internal: the profile is not convex";
            return false;
        }
        if (rho > 0.0 && theta > 1e-12) {
            double half = tol >= 2.0 * rho ? kPi : std::acos(1.0 - tol / rho);
            int n = std::max(segmentsFor(theta, 2.0 * half), segmentsFor(rho * theta, step));
            for (int s = 1; s <= n; ++s) {
                double ang = a0 + theta * s / n;
                pts.push_back({core.q[i].r + rho * std::cos(ang), core.q[i].y + rho * std::sin(ang)});
            }
        }
        if (i < k) {
            P2 n = core.edgeNormal[i];
            P2 p0 = {core.q[i].r + core.rho[i] * n.r, core.q[i].y + core.rho[i] * n.y};
            P2 p1 = {core.q[i + 1].r + core.rho[i + 1] * n.r, core.q[i + 1].y + core.rho[i + 1] * n.y};
            double len = std::hypot(p1.r - p0.r, p1.y - p0.y);
            if (len > 0.0) {
                int m = segmentsFor(len, step);
                for (int s = 1; s <= m; ++s) {
                    double f = (double)s / m;
                    pts.push_back({p0.r + f * (p1.r - p0.r), p0.y + f * (p1.y - p0.y)});
                }
            }
        }
    }
    // The poles exactly on the axis. Points crowding their neighbour (arcs of
    // a margin far below the shape's size) are dropped, and so are points so
    // near the axis that their ring's edges are hair-thin next to the profile
    // segments at them (slivers); every point kept lies on the surface.
    const double minGap = 1e-5 * size;
    std::vector<P2> prof;
    prof.push_back({0.0, ylo});
    for (size_t i = 1; i + 1 < pts.size(); ++i) {
        const P2& p = pts[i];
        if (std::hypot(p.r - prof.back().r, p.y - prof.back().y) < minGap) continue;
        prof.push_back(p);
    }
    while (prof.size() > 1 && std::hypot(prof.back().r, prof.back().y - yhi) < minGap) prof.pop_back();
    prof.push_back({0.0, yhi});
    const double ringEdge = 2.0 * std::sin(kPi / segments);
    for (bool dropped = true; dropped;) {
        dropped = false;
        for (size_t i = 1; i + 1 < prof.size(); ++i) {
            double before = std::hypot(prof[i].r - prof[i - 1].r, prof[i].y - prof[i - 1].y);
            double after = std::hypot(prof[i + 1].r - prof[i].r, prof[i + 1].y - prof[i].y);
            if (prof[i].r * ringEdge < 1e-5 * std::max(before, after)) {
                prof.erase(prof.begin() + (long)i);
                dropped = true;
                break;
            }
        }
    }
    if (prof.size() < 3) {
        why = "the shape is too thin to tessellate";
        return false;
    }

    const uint32_t S = (uint32_t)segments;
    const size_t rings = prof.size() - 2;
    std::vector<double> cs(S), sn(S);
    for (uint32_t j = 0; j < S; ++j) {
        cs[j] = std::cos(2.0 * kPi * j / S);
        sn[j] = std::sin(2.0 * kPi * j / S);
    }
    auto point = [&](double r, double y, uint32_t j) {
        return frame.origin + (r * cs[j]) * frame.u + (r * sn[j]) * frame.w + y * frame.a;
    };
    const uint32_t bottom = out.add(frame.origin + prof[0].y * frame.a);
    const uint32_t first = (uint32_t)out.v.size();
    for (size_t i = 0; i < rings; ++i)
        for (uint32_t j = 0; j < S; ++j) out.add(point(prof[i + 1].r, prof[i + 1].y, j));
    const uint32_t top = out.add(frame.origin + prof.back().y * frame.a);
    auto ring = [&](size_t i, uint32_t j) { return first + (uint32_t)i * S + j % S; };
    for (uint32_t j = 0; j < S; ++j) out.tri(bottom, ring(0, j + 1), ring(0, j));
    for (size_t i = 0; i + 1 < rings; ++i) {
        for (uint32_t j = 0; j < S; ++j) {
            // Quad a (lower ring, j), b (lower, j+1), c (upper, j+1), d (upper, j).
            uint32_t a = ring(i, j), b = ring(i, j + 1), c = ring(i + 1, j + 1), d = ring(i + 1, j);
            out.tri(a, b, c);
            out.tri(a, c, d);
        }
    }
    for (uint32_t j = 0; j < S; ++j) out.tri(ring(rings - 1, j), ring(rings - 1, j + 1), top);
    return true;
}

// A capsule: the segment from -halfHeight to +halfHeight on the axis, grown
// by radius (halfHeight 0: a sphere).
CoreProfile segmentProfile(double halfHeight, double radius)
{
    CoreProfile c;
    c.q = {{0.0, -halfHeight}, {0.0, halfHeight}};
    c.rho = {radius, radius};
    c.edgeNormal = {{1.0, 0.0}};
    return c;
}

// ---- box ----

bool buildBox(D3 h, int resolution, MeshOut& out, std::string& why)
{
    if (!finitePositive(h.x) || !finitePositive(h.y) || !finitePositive(h.z)) {
        why = "the box has a non-positive half extent";
        return false;
    }
    const double half[3] = {h.x, h.y, h.z};
    const double size = 2.0 * std::max(h.x, std::max(h.y, h.z));
    const double step = size / (resolution / 4.0);
    int n[3];
    for (int a = 0; a < 3; ++a) n[a] = std::max(2, segmentsFor(2.0 * half[a], step));
    // Vertices keyed by their lattice coordinates: shared along edges and corners.
    std::map<std::tuple<int, int, int>, uint32_t> lattice;
    auto vertex = [&](int i, int j, int k) {
        auto key = std::make_tuple(i, j, k);
        auto it = lattice.find(key);
        if (it != lattice.end()) return it->second;
        int c[3] = {i, j, k};
        double p[3];
        for (int a = 0; a < 3; ++a)
            p[a] = c[a] == n[a] ? half[a] : (c[a] == 0 ? -half[a] : -half[a] + 2.0 * half[a] * c[a] / n[a]);
        uint32_t id = out.add({p[0], p[1], p[2]});
        lattice.emplace(key, id);
        return id;
    };
    for (int a = 0; a < 3; ++a) {
        const int u = (a + 1) % 3, w = (a + 2) % 3; // e_u x e_w == e_a
        for (int side = 0; side < 2; ++side) {
            for (int i = 0; i < n[u]; ++i) {
                for (int j = 0; j < n[w]; ++j) {
                    uint32_t q[4];
                    const int du[4] = {0, 1, 1, 0}, dw[4] = {0, 0, 1, 1};
                    for (int c = 0; c < 4; ++c) {
                        int l[3];
                        l[a] = side ? n[a] : 0;
                        l[u] = i + du[c];
                        l[w] = j + dw[c];
                        q[c] = vertex(l[0], l[1], l[2]);
                    }
                    if (side) { // +a face: (u, w) counter-clockwise
                        out.tri(q[0], q[1], q[2]);
                        out.tri(q[0], q[2], q[3]);
                    } else {
                        out.tri(q[0], q[2], q[1]);
                        out.tri(q[0], q[3], q[2]);
                    }
                }
            }
        }
    }
    return true;
}

// ---- convex hull of points, grown by a margin ----

struct PointCollector : public btInternalTriangleIndexCallback {
    std::vector<D3>* points;
    void internalProcessTriangleIndex(btVector3* triangle, int, int) override
    {
        for (int c = 0; c < 3; ++c) points->push_back(fromBt(triangle[c]));
    }
};

// A convex hull: its vertices (indices into the points it was computed
// from) and its faces as loops of those vertices, counter-clockwise seen from
// outside, with unit outward normals.
struct Hull {
    std::vector<int> point;
    std::vector<std::vector<int>> faces;
    std::vector<D3> normals;
};

bool computeHull(const std::vector<D3>& pts, Hull& h, std::string& why)
{
    std::vector<double> coords;
    coords.reserve(pts.size() * 3);
    double extent = 0.0;
    for (const D3& p : pts) {
        coords.insert(coords.end(), {p.x, p.y, p.z});
        extent = std::max(extent, std::max(std::fabs(p.x), std::max(std::fabs(p.y), std::fabs(p.z))));
    }
    btConvexHullComputer hull;
    hull.compute(coords.data(), 3 * (int)sizeof(double), (int)pts.size(), 0.0, 0.0);
    const int nv = hull.vertices.size(), nf = hull.faces.size();
    if (nv < 4 || nf < 4 || hull.original_vertex_index.size() != nv) {
        why = "the shape's points are coplanar: its hull is flat";
        return false;
    }
    h.point.resize(nv);
    for (int i = 0; i < nv; ++i) h.point[i] = hull.original_vertex_index[i];
    h.faces.assign(nf, {});
    for (int f = 0; f < nf; ++f) {
        const btConvexHullComputer::Edge* e0 = &hull.edges[hull.faces[f]];
        const btConvexHullComputer::Edge* e = e0;
        do {
            h.faces[f].push_back(e->getTargetVertex());
            e = e->getNextEdgeOfFace();
            if (h.faces[f].size() > (size_t)nv) {
                why = "internal: a hull face does not close";
                return false;
            }
        } while (e != e0);
        if (h.faces[f].size() < 3) {
            why = "the shape's hull has a degenerate face";
            return false;
        }
    }
    // Normals (Newell) at the input's double coordinates; the loops flipped
    // if the hull computer handed them the other way round.
    auto at = [&](int v) { return pts[h.point[v]]; };
    h.normals.assign(nf, D3{0.0, 0.0, 0.0});
    double volume6 = 0.0;
    for (int f = 0; f < nf; ++f) {
        const std::vector<int>& loop = h.faces[f];
        for (size_t i = 0; i < loop.size(); ++i)
            h.normals[f] = h.normals[f] + cross(at(loop[i]), at(loop[(i + 1) % loop.size()]));
        for (size_t i = 1; i + 1 < loop.size(); ++i) volume6 += dot(at(loop[0]), cross(at(loop[i]), at(loop[i + 1])));
    }
    if (!(std::fabs(volume6) > 1e-12 * std::pow(std::max(extent, 1e-300), 3.0))) {
        why = "the shape's hull has no volume";
        return false;
    }
    if (volume6 < 0.0) {
        for (auto& loop : h.faces) std::reverse(loop.begin(), loop.end());
        for (auto& n : h.normals) n = -1.0 * n;
    }
    for (auto& n : h.normals) n = normalized(n);
    return true;
}

double smallestAngle(D3 a, D3 b, D3 c)
{
    D3 p[3] = {a, b, c};
    double worst = kPi;
    for (int i = 0; i < 3; ++i) {
        D3 e1 = normalized(p[(i + 1) % 3] - p[i]), e2 = normalized(p[(i + 2) % 3] - p[i]);
        worst = std::min(worst, std::acos(std::max(-1.0, std::min(1.0, dot(e1, e2)))));
    }
    return worst;
}

// The hull's vertices and its faces triangulated, each by cutting off, again
// and again, the ear whose smallest angle is largest (no slivers from nearly
// straight corners).
void emitHull(const std::vector<D3>& pts, const Hull& h, MeshOut& out)
{
    const uint32_t base = (uint32_t)out.v.size();
    for (int p : h.point) out.add(pts[p]);
    for (std::vector<int> loop : h.faces) {
        while (loop.size() > 3) {
            const size_t m = loop.size();
            size_t best = 0;
            double bestAngle = -1.0;
            for (size_t i = 0; i < m; ++i) {
                double a = smallestAngle(out.v[base + loop[(i + m - 1) % m]], out.v[base + loop[i]],
                                         out.v[base + loop[(i + 1) % m]]);
                if (a > bestAngle) {
                    bestAngle = a;
                    best = i;
                }
            }
            out.tri(base + loop[(best + m - 1) % m], base + loop[best], base + loop[(best + 1) % m]);
            loop.erase(loop.begin() + (long)best);
        }
        out.tri(base + loop[0], base + loop[1], base + loop[2]);
    }
}

inline double angleBetween(D3 u, D3 w) { return std::atan2(length(cross(u, w)), dot(u, w)); }

// Directions covering the spherical triangle (c, a, b) (sides less than
// half a turn), c first: the triangle is cut in two at the middle of its
// longest side until no side is longer than 1.6 `spread` (angles); every
// direction of it then lies within about `spread` of a corner of its piece
// (a small triangle's points lie within its longest side / sqrt(3) of a
// corner). Corners shared by pieces come out more than once (welded later).
// A safety stop at 200000 directions.
void sphericalGrid(D3 c, D3 a, D3 b, double spread, std::vector<D3>& out)
{
    const double target = 1.6 * spread;
    out.clear();
    out.push_back(c);
    out.push_back(a);
    out.push_back(b);
    struct Tri {
        D3 p[3];
    };
    std::vector<Tri> stack = {{{c, a, b}}};
    while (!stack.empty()) {
        Tri t = stack.back();
        stack.pop_back();
        int longest = 0;
        double side = -1.0;
        for (int e = 0; e < 3; ++e) {
            double l = angleBetween(t.p[e], t.p[(e + 1) % 3]);
            if (l > side) {
                side = l;
                longest = e;
            }
        }
        if (side <= target || out.size() > 200000) continue;
        const D3 u = t.p[longest], w = t.p[(longest + 1) % 3], o = t.p[(longest + 2) % 3];
        const D3 mid = normalized(u + w);
        out.push_back(mid);
        stack.push_back({{u, mid, o}});
        stack.push_back({{mid, w, o}});
    }
}

// The hull Q of `input` grown by `margin` (what Bullet collides with: the
// support of Q plus margin times the direction). Its surface: for every
// vertex v of Q, v + margin * d for d in v's normal cone (the directions in
// which v is Q's support; bounded by the normals of the faces at v). The mesh
// is the convex hull of such points, so every vertex lies on the grown
// surface: per vertex the point along its angle-weighted normal (the centre
// of its cone) and, where the cone is so wide that this one point would fall
// short by more than the tolerance, a grid over the cone (triangles from the
// centre to each pair of neighbouring corners, the face normals, halved
// until fine enough). A direction within angle d of a
// sample of its cone falls short by at most margin (1 - cos d): the samples
// are dense enough to keep that within tol = rho (1 - cos(pi / S)), rho the
// half diagonal of the points' bounding box plus the margin, S the resolution
// (at most 256 here).
bool buildHull(const std::vector<D3>& input, double margin, int resolution, MeshOut& out, std::string& why)
{
    if (input.size() < 4) {
        why = "the shape has fewer than 4 points: its hull is flat";
        return false;
    }
    if (!(margin >= 0.0) || !std::isfinite(margin)) {
        why = "the shape's margin is negative or not finite";
        return false;
    }
    D3 lo = input[0], hi = input[0];
    for (const D3& p : input) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
            why = "the shape has a non-finite point";
            return false;
        }
        lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
        hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    }
    Hull core;
    if (!computeHull(input, core, why)) return false;
    if (margin == 0.0) {
        emitHull(input, core, out);
        return true;
    }
    const int nv = (int)core.point.size();
    auto at = [&](int v) { return input[core.point[v]]; };
    // Faces at each vertex, and angle-weighted vertex normals (a positive
    // combination of those faces' normals: inside the cone).
    std::vector<std::vector<int>> facesAt(nv);
    std::vector<D3> vn(nv, D3{0.0, 0.0, 0.0});
    for (size_t f = 0; f < core.faces.size(); ++f) {
        const std::vector<int>& loop = core.faces[f];
        const size_t m = loop.size();
        for (size_t i = 0; i < m; ++i) {
            D3 p = at(loop[i]);
            D3 e1 = normalized(at(loop[(i + 1) % m]) - p), e2 = normalized(at(loop[(i + m - 1) % m]) - p);
            double angle = std::acos(std::max(-1.0, std::min(1.0, dot(e1, e2))));
            vn[loop[i]] = vn[loop[i]] + angle * core.normals[f];
            facesAt[loop[i]].push_back((int)f);
        }
    }
    const int S = std::min(resolution, 256);
    const double rho = 0.5 * length(hi - lo) + margin;
    const double tol = rho * (1.0 - std::cos(kPi / S));
    // Largest angle a sample may leave to any direction of its cone.
    const double spread = tol >= 2.0 * margin ? kPi : std::acos(1.0 - tol / margin);

    std::vector<D3> samples;
    for (int v = 0; v < nv; ++v) {
        const D3 c = normalized(vn[v]);
        samples.push_back(at(v) + margin * c);
        double widest = 0.0;
        for (int f : facesAt[v]) widest = std::max(widest, std::acos(std::max(-1.0, std::min(1.0, dot(c, core.normals[f])))));
        if (margin * (1.0 - std::cos(widest)) <= tol) continue;
        // The cone's corners in order around the centre.
        D3 t1 = normalized(cross(c, std::fabs(c.x) < 0.6 ? D3{1.0, 0.0, 0.0} : D3{0.0, 1.0, 0.0}));
        D3 t2 = cross(c, t1);
        std::vector<std::pair<double, D3>> corners;
        for (int f : facesAt[v]) {
            D3 n = core.normals[f];
            corners.push_back({std::atan2(dot(n, t2), dot(n, t1)), n});
        }
        std::sort(corners.begin(), corners.end(), [](const std::pair<double, D3>& a, const std::pair<double, D3>& b) {
            return a.first < b.first;
        });
        for (size_t i = 0; i < corners.size(); ++i) {
            const D3 a = corners[i].second, b = corners[(i + 1) % corners.size()].second;
            std::vector<D3> grid;
            sphericalGrid(c, a, b, spread, grid);
            for (size_t g = 1; g < grid.size(); ++g) samples.push_back(at(v) + margin * grid[g]); // [0]: c
        }
    }
    // Points closer than a hair are one point (all lie on the surface).
    const double weld = 1e-6 * rho;
    std::map<std::tuple<long long, long long, long long>, std::vector<int>> grid;
    std::vector<D3> kept;
    for (const D3& p : samples) {
        // Cells counted from the bounding box (within a few million of it).
        long long gx = (long long)std::floor((p.x - lo.x) / weld), gy = (long long)std::floor((p.y - lo.y) / weld),
                  gz = (long long)std::floor((p.z - lo.z) / weld);
        bool dup = false;
        for (long long dx = -1; dx <= 1 && !dup; ++dx)
            for (long long dy = -1; dy <= 1 && !dup; ++dy)
                for (long long dz = -1; dz <= 1 && !dup; ++dz) {
                    auto it = grid.find(std::make_tuple(gx + dx, gy + dy, gz + dz));
                    if (it == grid.end()) continue;
                    for (int j : it->second)
                        if (length(kept[j] - p) < weld) dup = true;
                }
        if (dup) continue;
        grid[std::make_tuple(gx, gy, gz)].push_back((int)kept.size());
        kept.push_back(p);
    }
    Hull grown;
    if (!computeHull(kept, grown, why)) return false;
    emitHull(kept, grown, out);
    return true;
}

bool polyhedralPoints(const btCollisionShape* shape, std::vector<D3>& points, std::string& why)
{
    switch (shape->getShapeType()) {
    case CONVEX_HULL_SHAPE_PROXYTYPE: {
        const btConvexHullShape* s = static_cast<const btConvexHullShape*>(shape);
        for (int i = 0; i < s->getNumPoints(); ++i) points.push_back(fromBt(s->getScaledPoint(i)));
        return true;
    }
    case CONVEX_POINT_CLOUD_SHAPE_PROXYTYPE: {
        const btConvexPointCloudShape* s = static_cast<const btConvexPointCloudShape*>(shape);
        for (int i = 0; i < s->getNumPoints(); ++i) points.push_back(fromBt(s->getScaledPoint(i)));
        return true;
    }
    case CONVEX_TRIANGLEMESH_SHAPE_PROXYTYPE: {
        // Its support mapping walks the triangles of the striding mesh, which
        // applies the mesh's scaling (the shape's local scaling).
        const btStridingMeshInterface* mesh = static_cast<const btConvexTriangleMeshShape*>(shape)->getMeshInterface();
        if (!mesh) {
            why = "the convex triangle mesh shape has no mesh";
            return false;
        }
        PointCollector collect;
        collect.points = &points;
        const btScalar big = BT_LARGE_FLOAT;
        mesh->InternalProcessAllTriangles(&collect, btVector3(-big, -big, -big), btVector3(big, big, big));
        return true;
    }
    default: {
        // Any other polyhedral shape: its vertices, as its support mapping
        // (btPolyhedralConvexShape's) sees them.
        const btPolyhedralConvexShape* s = static_cast<const btPolyhedralConvexShape*>(shape);
        for (int i = 0; i < s->getNumVertices(); ++i) {
            btVector3 v;
            s->getVertex(i, v);
            points.push_back(fromBt(v));
        }
        return true;
    }
    }
}

bool tessellate(const btCollisionShape* shape, int resolution, MeshOut& out, std::string& why)
{
    switch (shape->getShapeType()) {
    case BOX_SHAPE_PROXYTYPE: {
        // Bullet keeps the box's margin inside its half extents. Its
        // localGetSupportingVertex is the sharp box of
        // getHalfExtentsWithMargin(); GJK, which adds the margin to the
        // support without margin, actually rounds the edges and corners with
        // the margin. The mesh is the sharp box (at most (sqrt(3) - 1) margin
        // proud of the rounded one, at the corners).
        const btBoxShape* box = static_cast<const btBoxShape*>(shape);
        return buildBox(fromBt(box->getHalfExtentsWithMargin()), resolution, out, why);
    }
    case SPHERE_SHAPE_PROXYTYPE: {
        // getRadius() includes the scaling (x only, as Bullet has it); the
        // whole radius is the margin.
        double r = static_cast<const btSphereShape*>(shape)->getRadius();
        if (!finitePositive(r)) {
            why = "the sphere's radius is not positive";
            return false;
        }
        return buildLathe(segmentProfile(0.0, r), axisFrame(1), resolution, out, why);
    }
    case CAPSULE_SHAPE_PROXYTYPE: {
        // Radius and half height include the scaling; the radius is the margin.
        const btCapsuleShape* c = static_cast<const btCapsuleShape*>(shape);
        double r = c->getRadius(), hh = c->getHalfHeight();
        if (!finitePositive(r) || !(hh >= 0.0) || !std::isfinite(hh)) {
            why = "the capsule's radius or half height is not positive";
            return false;
        }
        return buildLathe(segmentProfile(hh, r), axisFrame(c->getUpAxis()), resolution, out, why);
    }
    case CYLINDER_SHAPE_PROXYTYPE: {
        // The margin lies inside the half extents: Bullet's surface is the
        // cylinder of the half extents without margin grown by the margin, so
        // of the outer size getHalfExtentsWithMargin() with rims rounded with
        // the margin. Radius: the half extent Bullet's support reads (x, or y
        // for btCylinderShapeX).
        const btCylinderShape* c = static_cast<const btCylinderShape*>(shape);
        const int up = c->getUpAxis();
        const int radial = up == 0 ? 1 : 0;
        const btVector3 core = c->getHalfExtentsWithoutMargin();
        const double m = c->getMargin(), r = core[radial], hh = core[up];
        if (!(m >= 0.0) || !(r >= 0.0) || !(hh >= 0.0) || !std::isfinite(r + hh + m) || !(r + m > 0.0) ||
            !(hh + m > 0.0)) {
            why = "the cylinder's margin exceeds its half extents (or a dimension is not positive)";
            return false;
        }
        CoreProfile p;
        p.q = {{0.0, -hh}, {r, -hh}, {r, hh}, {0.0, hh}};
        p.rho = {m, m, m, m};
        p.edgeNormal = {{0.0, -1.0}, {1.0, 0.0}, {0.0, 1.0}};
        if (r == 0.0) { // a capsule
            p = segmentProfile(hh, m);
        } else if (hh == 0.0) { // a disk grown by the margin
            p.q = {{0.0, 0.0}, {r, 0.0}, {0.0, 0.0}};
            p.rho = {m, m, m};
            p.edgeNormal = {{0.0, -1.0}, {0.0, 1.0}};
        }
        return buildLathe(p, axisFrame(up), resolution, out, why);
    }
    case CONE_SHAPE_PROXYTYPE: {
        // getRadius()/getHeight() include the scaling (the radius takes the
        // mean of the two radial scalings). Bullet adds the margin outside:
        // the cone grown by the margin, rim and apex rounded.
        const btConeShape* c = static_cast<const btConeShape*>(shape);
        const double r = c->getRadius(), h = c->getHeight(), m = c->getMargin();
        if (!finitePositive(r) || !finitePositive(h) || !(m >= 0.0) || !std::isfinite(m)) {
            why = "the cone's radius or height is not positive";
            return false;
        }
        const double slant = std::hypot(r, h);
        CoreProfile p;
        p.q = {{0.0, -0.5 * h}, {r, -0.5 * h}, {0.0, 0.5 * h}};
        p.rho = {m, m, m};
        p.edgeNormal = {{0.0, -1.0}, {h / slant, r / slant}};
        return buildLathe(p, axisFrame(c->getConeUpIndex()), resolution, out, why);
    }
    case MULTI_SPHERE_SHAPE_PROXYTYPE: {
        // Bullet's support: max over spheres of center * scaling +
        // dir * scaling * radius (its margin cancels out): spheres only for a
        // uniform scaling.
        const btMultiSphereShape* ms = static_cast<const btMultiSphereShape*>(shape);
        const btVector3 sc = ms->getLocalScaling();
        const double s = sc.x();
        if (!finitePositive(s) || std::fabs(sc.y() - s) > 1e-6 * s || std::fabs(sc.z() - s) > 1e-6 * s) {
            why = "multi-sphere with a non-uniform or non-positive scaling: Bullet's support mapping is not a hull "
                  "of spheres then";
            return false;
        }
        // Spheres inside another sphere do not show.
        std::vector<std::pair<D3, double>> spheres;
        const int count = ms->getSphereCount();
        for (int i = 0; i < count; ++i) {
            D3 c = s * fromBt(ms->getSpherePosition(i));
            double r = s * ms->getSphereRadius(i);
            if (!finitePositive(r) || !std::isfinite(c.x + c.y + c.z)) {
                why = "multi-sphere with a non-positive radius";
                return false;
            }
            spheres.push_back({c, r});
        }
        std::vector<std::pair<D3, double>> shown;
        for (size_t i = 0; i < spheres.size(); ++i) {
            bool hidden = false;
            for (size_t j = 0; j < spheres.size() && !hidden; ++j) {
                if (i == j) continue;
                double d = length(spheres[i].first - spheres[j].first);
                double ri = spheres[i].second, rj = spheres[j].second;
                // Inside j (ties: the first of equal spheres stays).
                if (d + ri < rj || (d + ri <= rj && (ri < rj || j < i))) hidden = true;
            }
            if (!hidden) shown.push_back(spheres[i]);
        }
        if (shown.empty()) {
            why = "multi-sphere without spheres";
            return false;
        }
        if (shown.size() > 2) {
            why = "multi-sphere with three or more spheres: the hull of spheres (planar and conical patches) is not "
                  "tessellated";
            return false;
        }
        if (shown.size() == 1) {
            LatheFrame f = axisFrame(1);
            f.origin = shown[0].first;
            return buildLathe(segmentProfile(0.0, shown[0].second), f, resolution, out, why);
        }
        // Two spheres: the hull of two disks revolved about the line of centres.
        const D3 c1 = shown[0].first, c2 = shown[1].first;
        const double r1 = shown[0].second, r2 = shown[1].second, d = length(c2 - c1);
        LatheFrame f;
        f.origin = c1;
        f.a = (1.0 / d) * (c2 - c1);
        D3 helper = std::fabs(f.a.x) < 0.6 ? D3{1.0, 0.0, 0.0} : D3{0.0, 1.0, 0.0};
        f.u = normalized(cross(helper, f.a));
        f.w = cross(f.a, f.u);
        const double k = (r1 - r2) / d; // |k| < 1: neither sphere holds the other
        CoreProfile p;
        p.q = {{0.0, 0.0}, {0.0, d}};
        p.rho = {r1, r2};
        p.edgeNormal = {{std::sqrt(std::max(0.0, 1.0 - k * k)), k}};
        return buildLathe(p, f, resolution, out, why);
    }
    case UNIFORM_SCALING_SHAPE_PROXYTYPE: {
        const btUniformScalingShape* us = static_cast<const btUniformScalingShape*>(shape);
        const double f = us->getUniformScalingFactor();
        if (!finitePositive(f) || !us->getChildShape()) {
            why = "uniform scaling shape with a non-positive factor or no child";
            return false;
        }
        if (!tessellate(us->getChildShape(), resolution, out, why)) return false;
        for (D3& v : out.v) v = f * v;
        return true;
    }
    default:
        break;
    }
    if (shape->isPolyhedral()) {
        std::vector<D3> points;
        if (!polyhedralPoints(shape, points, why)) return false;
        const double margin = static_cast<const btConvexInternalShape*>(shape)->getMargin();
        return buildHull(points, margin, resolution, out, why);
    }
    why = std::string("shape type ") + shape->getName() + " (" + std::to_string(shape->getShapeType()) +
          ") is not a convex shape rtcd can tessellate";
    return false;
}

} // namespace

bool rtcdTessellateConvex(const btCollisionShape* shape, int resolution, std::vector<float>& vertices,
                          std::vector<uint32_t>& indices, std::string& why)
{
    vertices.clear();
    indices.clear();
    why.clear();
    if (!shape) {
        why = "no shape";
        return false;
    }
    if (resolution < 8 || resolution > 4096) {
        why = "resolution " + std::to_string(resolution) + " outside [8, 4096]";
        return false;
    }
    MeshOut out;
    if (!tessellate(shape, resolution, out, why)) return false;
    if (out.v.size() >= (size_t)std::numeric_limits<uint32_t>::max()) {
        why = "the mesh would have too many vertices";
        return false;
    }
    vertices.reserve(out.v.size() * 3);
    for (const D3& p : out.v) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
            vertices.clear();
            why = "the shape gives non-finite coordinates";
            return false;
        }
        vertices.insert(vertices.end(), {(float)p.x, (float)p.y, (float)p.z});
    }
    // What rtcd_mesh_create will check on the rounded coordinates: no
    // triangle of zero area (with a safety factor on its threshold).
    for (size_t t = 0; t < out.t.size(); t += 3) {
        const float* p[3] = {&vertices[3 * out.t[t]], &vertices[3 * out.t[t + 1]], &vertices[3 * out.t[t + 2]]};
        D3 a = {p[0][0], p[0][1], p[0][2]}, b = {p[1][0], p[1][1], p[1][2]}, c = {p[2][0], p[2][1], p[2][2]};
        double longest = std::max(dot(b - a, b - a), std::max(dot(c - a, c - a), dot(c - b, c - b)));
        if (!(length(cross(b - a, c - a)) > 2e-6 * longest)) {
            vertices.clear();
            why = "internal: the tessellation has a sliver triangle (a margin or dimension far below the shape's size?)";
            return false;
        }
    }
    indices = std::move(out.t);
    return true;
}
