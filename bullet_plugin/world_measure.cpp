// Penetration measured independently of the collision algorithm, with the
// core's exact point-in-mesh test and closest-point distance, so rtcd,
// GImpact and hulls are judged by the same ruler.
#include "world_internal.h"

#include <cmath>

namespace {

struct Accumulator {
    rtcd_penetration p = {0.0f, 0.0, 0};
    void add(float depth)
    {
        p.max = std::fmax(p.max, depth);
        p.sum += depth;
        p.vertices_inside++;
    }
};

// Vertices of `a` inside `b` (both placed by their body transforms).
void mesh_into_mesh(const rtcd_mesh* a, const btTransform& ta, const rtcd_mesh* b, const btTransform& tb,
                    Accumulator& acc)
{
    btTransform a_in_b = tb.inverseTimes(ta);
    float lo[3], hi[3];
    rtcd_mesh_bounds(b, lo, hi);
    const float* v = rtcd_mesh_vertices(a);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(a); ++i) {
        btVector3 p = a_in_b * btVector3(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
        float q[3] = {static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2])};
        if (q[0] < lo[0] || q[1] < lo[1] || q[2] < lo[2] || q[0] > hi[0] || q[1] > hi[1] || q[2] > hi[2]) continue;
        if (!rtcd_mesh_contains_point(b, q)) continue;
        acc.add(rtcd_mesh_closest_point(b, q, nullptr, nullptr));
    }
}

// The mesh's box in world space (the box of its box's corners).
void world_box(const rtcd_mesh* m, const btTransform& t, btVector3& lo, btVector3& hi)
{
    float a[3], b[3];
    rtcd_mesh_bounds(m, a, b);
    lo = btVector3(BT_LARGE_FLOAT, BT_LARGE_FLOAT, BT_LARGE_FLOAT);
    hi = -lo;
    for (int k = 0; k < 8; ++k) {
        btVector3 c = t * btVector3(k & 1 ? b[0] : a[0], k & 2 ? b[1] : a[1], k & 4 ? b[2] : a[2]);
        lo.setMin(c);
        hi.setMax(c);
    }
}

// Bodies created at one pose: their vertices lie on each other's surfaces,
// at depth 0, and the point-in-mesh test of a point on a surface is slow
// (its rays tie). When the meshes' box centres coincide (within 1e-4 of
// the larger box diagonal, as the narrow phase's deep vertices), every
// vertex of both counts as inside, as deep as the boxes are into each
// other along the world axis that parts them soonest.
bool coincident(const rtcd_mesh* a, const btTransform& ta, const rtcd_mesh* b, const btTransform& tb,
                Accumulator& acc)
{
    btVector3 lo_a, hi_a, lo_b, hi_b;
    world_box(a, ta, lo_a, hi_a);
    world_box(b, tb, lo_b, hi_b);
    btScalar diag = std::fmax((hi_a - lo_a).length(), (hi_b - lo_b).length());
    if (!(((lo_a + hi_a) - (lo_b + hi_b)).length() * btScalar(0.5) <= btScalar(1e-4) * diag)) return false;
    btScalar depth = BT_LARGE_FLOAT;
    for (int k = 0; k < 3; ++k) depth = std::fmin(depth, std::fmin(hi_a[k] - lo_b[k], hi_b[k] - lo_a[k]));
    uint32_t n = rtcd_mesh_vertex_count(a) + rtcd_mesh_vertex_count(b);
    for (uint32_t i = 0; i < n; ++i) acc.add(static_cast<float>(depth));
    return true;
}

void mesh_into_plane(const rtcd_mesh* a, const btTransform& ta, const btCollisionObject* plane_obj, Accumulator& acc)
{
    const btStaticPlaneShape* plane = static_cast<const btStaticPlaneShape*>(plane_obj->getCollisionShape());
    const btTransform& pt = plane_obj->getWorldTransform();
    btVector3 n = pt.getBasis() * plane->getPlaneNormal();
    btScalar d = n.dot(pt * (plane->getPlaneNormal() * plane->getPlaneConstant()));
    const float* v = rtcd_mesh_vertices(a);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(a); ++i) {
        btScalar dist = n.dot(ta * btVector3(v[3 * i], v[3 * i + 1], v[3 * i + 2])) - d;
        if (dist < 0) acc.add(static_cast<float>(-dist));
    }
}

} // namespace

extern "C" rtcd_error rtcd_world_measure_penetration(const rtcd_world* w, rtcd_penetration* out)
{
    if (!w || !out) return rtcd_report_error(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_measure_penetration: NULL argument");
    Accumulator acc;
    if (!w->stepped) {
        // Before the first step the broadphase has no pairs yet: the bodies as created.
        w->dynamics->updateAabbs();
        w->dynamics->computeOverlappingPairs();
    }
    btOverlappingPairCache* cache = w->dynamics->getPairCache();
    int n = cache->getNumOverlappingPairs();
    btBroadphasePair* pairs = n ? cache->getOverlappingPairArrayPtr() : nullptr;
    for (int i = 0; i < n; ++i) {
        const btCollisionObject* o[2] = {static_cast<const btCollisionObject*>(pairs[i].m_pProxy0->m_clientObject),
                                         static_cast<const btCollisionObject*>(pairs[i].m_pProxy1->m_clientObject)};
        const rtcd_mesh* m[2] = {nullptr, nullptr};
        for (int k = 0; k < 2; ++k) {
            int idx = o[k]->getUserIndex();
            if (idx >= 0 && static_cast<size_t>(idx) < w->bodies.size() && w->bodies[idx] == o[k])
                m[k] = rtcd_shape_current_body_mesh(w->body_shapes[idx]);
            size_t s = static_cast<size_t>(-2 - idx);
            if (idx <= -2 && s < w->static_meshes.size() && w->static_meshes[s]->body == o[k])
                m[k] = w->static_meshes[s]->mesh; // a static surface: what lies behind it is inside
        }
        if (m[0] && m[1]) {
            if (coincident(m[0], o[0]->getWorldTransform(), m[1], o[1]->getWorldTransform(), acc)) continue;
            mesh_into_mesh(m[0], o[0]->getWorldTransform(), m[1], o[1]->getWorldTransform(), acc);
            mesh_into_mesh(m[1], o[1]->getWorldTransform(), m[0], o[0]->getWorldTransform(), acc);
        } else {
            for (int k = 0; k < 2; ++k)
                if (m[k] && !m[1 - k] && o[1 - k]->getCollisionShape()->getShapeType() == STATIC_PLANE_PROXYTYPE)
                    mesh_into_plane(m[k], o[k]->getWorldTransform(), o[1 - k], acc);
        }
    }
    *out = acc.p;
    return RTCD_OK;
}
