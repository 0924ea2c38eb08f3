// Builds rtcd meshes from Bullet shapes: GImpact meshes (triangle soups
// welded and repaired), convex shapes (tessellated), static triangle meshes
// and heightfields (open one-sided surfaces).
#include "plugin_convex.h"
#include "plugin_internal.h"

#include <BulletCollision/CollisionShapes/btConvexPointCloudShape.h>
#include <BulletCollision/CollisionShapes/btConvexTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btHeightfieldTerrainShape.h>
#include <BulletCollision/CollisionShapes/btMultiSphereShape.h>
#include <BulletCollision/CollisionShapes/btScaledBvhTriangleMeshShape.h>
#include <rtcd/rtcd_repair.h>
#include <rtcd/rtcd_wrap.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

// Segments of a full circle in the tessellation of round convex shapes:
// vertices on the surface, facets within 2 (1 - cos(pi / 24)) = 1.7 % of the
// radius inside it (a 0.5 m sphere: 8.5 mm at most, 2 mm on average). 32
// segments halve that and cost the mixed scene 12 % more time per step.
static const int k_convex_resolution = 24;

rtcdShapeRole rtcdRoleOf(const btCollisionShape* s)
{
    if (rtcdIsGImpactMesh(s)) return RTCD_ROLE_MESH;
    switch (s->getShapeType()) {
    case STATIC_PLANE_PROXYTYPE: return RTCD_ROLE_PLANE;
    case TRIANGLE_MESH_SHAPE_PROXYTYPE:
    case SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE:
    case TERRAIN_SHAPE_PROXYTYPE: return RTCD_ROLE_SURFACE;
    case COMPOUND_SHAPE_PROXYTYPE: return RTCD_ROLE_COMPOUND;
    case BOX_SHAPE_PROXYTYPE:
    case SPHERE_SHAPE_PROXYTYPE:
    case CAPSULE_SHAPE_PROXYTYPE:
    case CYLINDER_SHAPE_PROXYTYPE:
    case CONE_SHAPE_PROXYTYPE:
    case CONVEX_HULL_SHAPE_PROXYTYPE:
    case CONVEX_POINT_CLOUD_SHAPE_PROXYTYPE:
    case CONVEX_TRIANGLEMESH_SHAPE_PROXYTYPE:
    case MULTI_SPHERE_SHAPE_PROXYTYPE: return RTCD_ROLE_CONVEX;
    default: return RTCD_ROLE_NONE;
    }
}

const char* rtcdRoleName(rtcdShapeRole role)
{
    switch (role) {
    case RTCD_ROLE_MESH: return "btGImpactMeshShape";
    case RTCD_ROLE_CONVEX: return "convex shape";
    case RTCD_ROLE_SURFACE: return "static triangle surface";
    case RTCD_ROLE_PLANE: return "btStaticPlaneShape";
    case RTCD_ROLE_COMPOUND: return "btCompoundShape";
    case RTCD_ROLE_NONE: break;
    }
    return "shape";
}

rtcdMeshCache::~rtcdMeshCache()
{
    for (auto& kv : m_entries) rtcd_mesh_release(kv.second.mesh);
}

const rtcd_mesh* rtcdMeshCache::find(const btCollisionShape* shape) const
{
    auto it = m_entries.find(shape);
    return it == m_entries.end() ? nullptr : it->second.mesh;
}

// The scale GImpact collides with: each part's primitive manager holds it
// (the interface's scaling at construction, then setLocalScaling's).
static btVector3 part_scaling(const btGImpactMeshShape* shape, int part)
{
    return part < shape->getMeshPartCount() ? shape->getMeshPart(part)->getLocalScaling()
                                            : shape->getMeshInterface()->getScaling();
}

// Reads every subpart (float or double vertices; 32-, 16- or 8-bit indices),
// applies the part's scaling and merges them into one indexed mesh.
static bool read_striding_mesh(const btStridingMeshInterface* iface, const std::function<btVector3(int)>& scaling,
                               std::vector<float>& vertices, std::vector<uint32_t>& indices, std::string& why)
{
    for (int part = 0; part < iface->getNumSubParts(); ++part) {
        btVector3 scale = scaling(part);
        const unsigned char* vbase;
        int nverts, vstride, nfaces, istride;
        PHY_ScalarType vtype, itype;
        const unsigned char* ibase;
        iface->getLockedReadOnlyVertexIndexBase(&vbase, nverts, vtype, vstride, &ibase, istride, nfaces, itype, part);
        uint32_t base = static_cast<uint32_t>(vertices.size() / 3);
        bool ok = true;
        for (int v = 0; v < nverts && ok; ++v) {
            const unsigned char* p = vbase + static_cast<size_t>(v) * vstride;
            for (int k = 0; k < 3; ++k) {
                double x;
                if (vtype == PHY_FLOAT) x = reinterpret_cast<const float*>(p)[k];
                else if (vtype == PHY_DOUBLE) x = reinterpret_cast<const double*>(p)[k];
                else {
                    why = "vertex type is neither float nor double";
                    ok = false;
                    break;
                }
                vertices.push_back(static_cast<float>(x * scale[k]));
            }
        }
        for (int f = 0; f < nfaces && ok; ++f) {
            const unsigned char* p = ibase + static_cast<size_t>(f) * istride;
            for (int c = 0; c < 3; ++c) {
                uint32_t i;
                if (itype == PHY_INTEGER) i = static_cast<uint32_t>(reinterpret_cast<const int*>(p)[c]);
                else if (itype == PHY_SHORT) i = reinterpret_cast<const unsigned short*>(p)[c];
                else if (itype == PHY_UCHAR) i = p[c];
                else {
                    why = "index type is not int, short or uchar";
                    ok = false;
                    break;
                }
                if (i >= static_cast<uint32_t>(nverts)) {
                    why = "subpart " + std::to_string(part) + " face " + std::to_string(f) + " indexes vertex " +
                          std::to_string(i) + " of " + std::to_string(nverts);
                    ok = false;
                    break;
                }
                indices.push_back(base + i);
            }
        }
        iface->unLockReadOnlyVertexBase(part);
        if (!ok) return false;
    }
    return true;
}

// Every triangle of a heightfield, three fresh vertices each (welded later).
struct rtcdTriangleSoup : public btTriangleCallback {
    std::vector<float>* vertices;
    std::vector<uint32_t>* indices;
    void processTriangle(btVector3* t, int, int) override
    {
        for (int c = 0; c < 3; ++c) {
            indices->push_back(static_cast<uint32_t>(vertices->size() / 3));
            for (int k = 0; k < 3; ++k) vertices->push_back(static_cast<float>(t[c][k]));
        }
    }
};

// The triangles a shape collides with, in its local frame.
static bool read_triangles(const btCollisionShape* shape, rtcdShapeRole role, std::vector<float>& vertices,
                           std::vector<uint32_t>& indices, std::string& why)
{
    if (role == RTCD_ROLE_MESH) {
        const btGImpactMeshShape* g = static_cast<const btGImpactMeshShape*>(shape);
        return read_striding_mesh(g->getMeshInterface(), [g](int part) { return part_scaling(g, part); }, vertices,
                                  indices, why);
    }
    if (role == RTCD_ROLE_CONVEX) return rtcdTessellateConvex(shape, k_convex_resolution, vertices, indices, why);
    switch (shape->getShapeType()) {
    case TRIANGLE_MESH_SHAPE_PROXYTYPE: {
        const btStridingMeshInterface* iface = static_cast<const btTriangleMeshShape*>(shape)->getMeshInterface();
        return read_striding_mesh(iface, [iface](int) { return iface->getScaling(); }, vertices, indices, why);
    }
    case SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE: {
        const btScaledBvhTriangleMeshShape* s = static_cast<const btScaledBvhTriangleMeshShape*>(shape);
        const btStridingMeshInterface* iface = s->getChildShape()->getMeshInterface();
        btVector3 scale = s->getLocalScaling();
        return read_striding_mesh(iface, [iface, scale](int) { return iface->getScaling() * scale; }, vertices,
                                  indices, why);
    }
    case TERRAIN_SHAPE_PROXYTYPE: {
        const btHeightfieldTerrainShape* h = static_cast<const btHeightfieldTerrainShape*>(shape);
        rtcdTriangleSoup soup;
        soup.vertices = &vertices;
        soup.indices = &indices;
        btVector3 lo, hi;
        h->getAabb(btTransform::getIdentity(), lo, hi);
        h->processAllTriangles(&soup, lo - btVector3(1, 1, 1), hi + btVector3(1, 1, 1));
        if (indices.empty()) why = "the heightfield has no triangles";
        return !indices.empty();
    }
    default: why = std::string("not a shape rtcd takes (Bullet shape type ") + std::to_string(shape->getShapeType()) + ")";
    }
    return false;
}

// Faces of an open surface wind the way most of them did: the repair may
// have turned the whole surface; a heightfield faces up its up axis.
static void face_surface(const btCollisionShape* shape, std::vector<float>& v, std::vector<uint32_t>& idx)
{
    btVector3 up(0, 0, 0);
    if (shape->getShapeType() == TERRAIN_SHAPE_PROXYTYPE)
        up[static_cast<const btHeightfieldTerrainShape*>(shape)->getUpAxis()] = 1;
    else
        return;
    double sum = 0;
    for (size_t t = 0; t + 2 < idx.size(); t += 3) {
        btVector3 p[3];
        for (int c = 0; c < 3; ++c) p[c] = btVector3(v[3 * idx[t + c]], v[3 * idx[t + c] + 1], v[3 * idx[t + c] + 2]);
        sum += (p[1] - p[0]).cross(p[2] - p[0]).dot(up);
    }
    if (sum < 0)
        for (size_t t = 0; t + 2 < idx.size(); t += 3) std::swap(idx[t + 1], idx[t + 2]);
}

static rtcd_error make_mesh(const std::vector<float>& v, const std::vector<uint32_t>& idx, uint32_t flags,
                            const char* name, rtcd_mesh** out)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = v.data();
    def.vertex_count = static_cast<uint32_t>(v.size() / 3);
    def.indices = idx.data();
    def.triangle_count = static_cast<uint32_t>(idx.size() / 3);
    def.flags = flags;
    def.name = name;
    return rtcd_mesh_create(&def, out);
}

// A GImpact soup the repair declined, wrapped (rtcd_wrap.h) where the wrap
// is built in and not turned off: the envelope, and in `repairs` what the
// INFO line says of it; nullptr (why unchanged) otherwise.
static rtcd_mesh* wrap_soup(const std::vector<float>& v, const std::vector<uint32_t>& idx, const char* name,
                            std::string& why, std::string& repairs, rtcd_error* code)
{
    if (rtcd_dropin_wrap() == RTCD_WRAP_OFF || !rtcd_wrap_available()) {
        why += rtcd_wrap_available() ? "; wrap off" : "; wrap not available";
        return nullptr;
    }
    // A coarser, fully adaptive envelope than the import's: rtcd's cost
    // follows the envelope's vertices. bench_wrap_pile (40 declined soups,
    // same run): at 1/128 and 0.2 rtcd took 5.8 times GImpact's time; at
    // 1/64 and 1.0 it is 1.4 times faster, deepest penetration 0.09 against
    // GImpact's 0.31.
    rtcd_wrap_def wdef = rtcd_default_wrap_def();
    wdef.voxel_size = 1.0f / 64.0f;
    wdef.adaptivity = 1.0f;
    rtcd_wrapped* w = nullptr;
    rtcd_error err = rtcd_wrap(&wdef, v.data(), static_cast<uint32_t>(v.size() / 3), 0, idx.data(),
                               static_cast<uint32_t>(idx.size() / 3), &w);
    rtcd_mesh* mesh = nullptr;
    if (err == RTCD_OK) {
        const float* wv;
        const uint32_t* wi;
        uint32_t nv, nt;
        rtcd_wrapped_mesh(w, &wv, &nv, &wi, &nt);
        err = make_mesh(std::vector<float>(wv, wv + 3 * static_cast<size_t>(nv)),
                        std::vector<uint32_t>(wi, wi + 3 * static_cast<size_t>(nt)), 0, name, &mesh);
    }
    if (err != RTCD_OK) {
        why += std::string("; wrap failed: ") + rtcd_last_error_message();
        if (err == RTCD_ERROR_OUT_OF_MEMORY) *code = err;
    } else {
        const rtcd_wrap_report* r = rtcd_wrapped_report(w);
        char line[256];
        std::snprintf(line, sizeof line,
                      "wrapped (%s): %u -> %u triangles, voxel %g, distance %g (%.2f%% of the diagonal)",
                      why.c_str(), r->input_triangles, r->output_triangles, static_cast<double>(r->voxel_size),
                      r->distance, 100.0 * r->distance / r->diagonal);
        repairs = repairs.empty() ? std::string(line) : repairs + "; " + line;
        *code = RTCD_OK;
    }
    rtcd_wrapped_release(w);
    return mesh;
}

// The mesh as given; else welded and repaired (rtcd_repair.h): the pieces
// merged into one mesh when every one is closed (a surface: as it is).
static rtcd_mesh* build_mesh(const btCollisionShape* shape, rtcdShapeRole role, const char* name, std::string& why,
                             std::string& repairs, rtcd_error* code, bool* as_given)
{
    *code = RTCD_OK;
    *as_given = false;
    std::vector<float> vertices;
    std::vector<uint32_t> indices;
    if (!read_triangles(shape, role, vertices, indices, why)) return nullptr;
    if (indices.empty()) {
        why = "the shape has no triangles";
        return nullptr;
    }
    uint32_t flags = role == RTCD_ROLE_SURFACE ? static_cast<uint32_t>(RTCD_MESH_OPEN_SURFACE) : 0u;
    rtcd_mesh* mesh = nullptr;
    if (role != RTCD_ROLE_SURFACE) {
        rtcd_error err = make_mesh(vertices, indices, flags, name, &mesh);
        *as_given = err == RTCD_OK;
        if (err == RTCD_OK) return mesh;
        *code = err;
        why = std::string(rtcd_error_name(err)) + ": " + rtcd_last_error_message();
        if (err == RTCD_ERROR_OUT_OF_MEMORY) return nullptr;
        if (role == RTCD_ROLE_CONVEX) return nullptr; // a tessellation is closed or wrong: no repair
    }
    rtcd_repair_def rdef = rtcd_default_repair_def();
    // A surface may stay open, and its slivers are no defect (steep terrain:
    // a spike's flanks): collapsing them would give rtcd another surface
    // than Bullet's, and bodies would sink into what rtcd removed.
    if (role == RTCD_ROLE_SURFACE) rdef.flags &= ~(RTCD_REPAIR_SPLIT | RTCD_REPAIR_HOLES | RTCD_REPAIR_SLIVERS);
    rtcd_repaired* repaired = nullptr;
    rtcd_error err = rtcd_repair(&rdef, vertices.data(), static_cast<uint32_t>(vertices.size() / 3), 0, indices.data(),
                                 static_cast<uint32_t>(indices.size() / 3), &repaired);
    if (err != RTCD_OK) {
        *code = err;
        why = std::string(rtcd_error_name(err)) + ": " + rtcd_last_error_message();
        return nullptr;
    }
    repairs = rtcd_repaired_summary(repaired);
    const rtcd_repair_report* report = rtcd_repaired_report(repaired);
    const float* rv;
    const uint32_t* ri;
    uint32_t nv = 0, nt = 0;
    if (role != RTCD_ROLE_SURFACE && report->open_components) {
        why = "RTCD_ERROR_MESH_OPEN_EDGE: " + std::to_string(report->open_components) +
              " piece(s) still open after the repairs (" + repairs + ")";
    } else if (rtcd_repaired_merged(repaired, &rv, &nv, &ri, &nt) == RTCD_OK) {
        std::vector<float> v(rv, rv + 3 * static_cast<size_t>(nv));
        std::vector<uint32_t> idx(ri, ri + 3 * static_cast<size_t>(nt));
        if (role == RTCD_ROLE_SURFACE) face_surface(shape, v, idx);
        err = make_mesh(v, idx, flags, name, &mesh);
        *code = err;
        if (err != RTCD_OK) why = std::string(rtcd_error_name(err)) + ": " + rtcd_last_error_message() + " (after: " + repairs + ")";
    }
    rtcd_repaired_release(repaired);
    // What the repair could not close: the watertight envelope instead of GImpact.
    if (!mesh && role == RTCD_ROLE_MESH && *code != RTCD_ERROR_OUT_OF_MEMORY)
        mesh = wrap_soup(vertices, indices, name, why, repairs, code);
    return mesh;
}

// ---- what a shape's mesh is built from ----
//
// Bullet shapes carry no id and tell nobody of their deletion, so a shape
// deleted and another made at its address is told apart by what the mesh is
// built from: the type, scaling and margin (Entry), and geometry_of's hash:
//  - primitives (box, sphere, capsule, cylinder, cone): every dimension and
//    the up axis; hulls and multi-spheres: their points and radii by value;
//    point clouds: the array's address, count and values;
//  - triangle meshes (GImpact, BVH, convex, scaled): the mesh interface's
//    address and each part's vertex and index arrays (address, count, type,
//    stride); static surfaces and heightfields their local box too;
//  - heightfields: the height data's address, grid size and up axis.
// Not seen: a triangle mesh or heightfield made at the old one's address
// over the same arrays (same addresses and counts) holding other values. For
// a GImpact shape that is a deformation and followed as one (its update
// flag, its box, refreshShape, rtcd_bullet.h); a static surface rewritten in
// place with the same box is not (Bullet's own BVH over it would be stale
// too): give it a new shape.

namespace {
// FNV-1a over the bytes of each value added.
struct rtcdHash {
    uint64_t h = 1469598103934665603ull;
    template <class T> void add(const T& v)
    {
        const unsigned char* p = reinterpret_cast<const unsigned char*>(&v);
        for (size_t i = 0; i < sizeof v; ++i) h = (h ^ p[i]) * 1099511628211ull;
    }
    void add(const btVector3& v) // x, y, z: the fourth float may be anything
    {
        for (int k = 0; k < 3; ++k) add(v[k]);
    }
};

// The heightfield's grid size, protected in btHeightfieldTerrainShape.
struct rtcdHeightfieldGrid : public btHeightfieldTerrainShape {
    static int width(const btHeightfieldTerrainShape* s) { return s->*(&rtcdHeightfieldGrid::m_heightStickWidth); }
    static int length(const btHeightfieldTerrainShape* s) { return s->*(&rtcdHeightfieldGrid::m_heightStickLength); }
};
} // namespace

static void hash_interface(rtcdHash& h, const btStridingMeshInterface* iface)
{
    h.add(static_cast<const void*>(iface));
    h.add(iface->getNumSubParts());
    for (int part = 0; part < iface->getNumSubParts(); ++part) {
        const unsigned char *vbase, *ibase;
        int nverts, vstride, nfaces, istride;
        PHY_ScalarType vtype, itype;
        iface->getLockedReadOnlyVertexIndexBase(&vbase, nverts, vtype, vstride, &ibase, istride, nfaces, itype, part);
        h.add(static_cast<const void*>(vbase));
        h.add(nverts);
        h.add(vtype);
        h.add(vstride);
        h.add(static_cast<const void*>(ibase));
        h.add(nfaces);
        h.add(itype);
        h.add(istride);
        iface->unLockReadOnlyVertexBase(part);
    }
}

static void hash_points(rtcdHash& h, const btVector3* points, int count)
{
    h.add(count);
    for (int i = 0; i < count; ++i) h.add(points[i]);
}

static uint64_t geometry_of(const btCollisionShape* shape, rtcdShapeRole role)
{
    rtcdHash h;
    if (role == RTCD_ROLE_MESH) {
        // Not its box, which moves with a deformation (deformed()).
        const btGImpactMeshShape* g = static_cast<const btGImpactMeshShape*>(shape);
        hash_interface(h, g->getMeshInterface());
        h.add(g->getMeshPartCount());
        return h.h;
    }
    btVector3 lo, hi;
    shape->getAabb(btTransform::getIdentity(), lo, hi);
    h.add(lo);
    h.add(hi);
    switch (shape->getShapeType()) {
    case TRIANGLE_MESH_SHAPE_PROXYTYPE:
        hash_interface(h, static_cast<const btTriangleMeshShape*>(shape)->getMeshInterface());
        break;
    case SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE: {
        const btBvhTriangleMeshShape* child = static_cast<const btScaledBvhTriangleMeshShape*>(shape)->getChildShape();
        h.add(static_cast<const void*>(child));
        hash_interface(h, child->getMeshInterface());
        break;
    }
    case TERRAIN_SHAPE_PROXYTYPE: {
        const btHeightfieldTerrainShape* t = static_cast<const btHeightfieldTerrainShape*>(shape);
        h.add(static_cast<const void*>(t->getHeightfieldRawData()));
        h.add(rtcdHeightfieldGrid::width(t));
        h.add(rtcdHeightfieldGrid::length(t));
        h.add(t->getUpAxis());
        break;
    }
    case CAPSULE_SHAPE_PROXYTYPE: h.add(static_cast<const btCapsuleShape*>(shape)->getUpAxis()); break;
    case CYLINDER_SHAPE_PROXYTYPE: h.add(static_cast<const btCylinderShape*>(shape)->getUpAxis()); break;
    case CONE_SHAPE_PROXYTYPE: {
        const btConeShape* c = static_cast<const btConeShape*>(shape);
        h.add(c->getConeUpIndex());
        h.add(c->getRadius());
        h.add(c->getHeight());
        break;
    }
    case CONVEX_HULL_SHAPE_PROXYTYPE: {
        const btConvexHullShape* c = static_cast<const btConvexHullShape*>(shape);
        hash_points(h, c->getUnscaledPoints(), c->getNumPoints());
        break;
    }
    case CONVEX_POINT_CLOUD_SHAPE_PROXYTYPE: {
        const btConvexPointCloudShape* c = static_cast<const btConvexPointCloudShape*>(shape);
        h.add(static_cast<const void*>(c->getUnscaledPoints()));
        hash_points(h, c->getUnscaledPoints(), c->getNumPoints());
        break;
    }
    case MULTI_SPHERE_SHAPE_PROXYTYPE: {
        const btMultiSphereShape* m = static_cast<const btMultiSphereShape*>(shape);
        h.add(m->getSphereCount());
        for (int i = 0; i < m->getSphereCount(); ++i) {
            h.add(m->getSpherePosition(i));
            h.add(m->getSphereRadius(i));
        }
        break;
    }
    case CONVEX_TRIANGLEMESH_SHAPE_PROXYTYPE:
        hash_interface(h, static_cast<const btConvexTriangleMeshShape*>(shape)->getMeshInterface());
        break;
    default: break;
    }
    // Box half extents, sphere radius, capsule radius and half height...
    if (role == RTCD_ROLE_CONVEX) h.add(static_cast<const btConvexInternalShape*>(shape)->getImplicitShapeDimensions());
    return h.h;
}

// The entry's record of what its mesh was built from (Entry).
static const void* source_of(const btCollisionShape* shape, rtcdShapeRole role)
{
    return role == RTCD_ROLE_MESH ? static_cast<const void*>(static_cast<const btGImpactMeshShape*>(shape)->getMeshInterface())
                                  : static_cast<const void*>(shape);
}

static btVector3 scaling_of(const btCollisionShape* shape, rtcdShapeRole role)
{
    return role == RTCD_ROLE_MESH ? part_scaling(static_cast<const btGImpactMeshShape*>(shape), 0)
                                  : shape->getLocalScaling();
}

void rtcdMeshCache::Entry::record(const btCollisionShape* shape, rtcdShapeRole role)
{
    source = source_of(shape, role);
    scaling = scaling_of(shape, role);
    margin = role == RTCD_ROLE_CONVEX ? shape->getMargin() : btScalar(0);
    type = shape->getShapeType();
    geometry = geometry_of(shape, role);
}

bool rtcdMeshCache::Entry::sameKind(const Entry& o) const
{
    return type == o.type && scaling == o.scaling && margin == o.margin;
}

bool rtcdMeshCache::Entry::matches(const Entry& o) const
{
    return sameKind(o) && source == o.source && geometry == o.geometry;
}

const rtcd_mesh* rtcdMeshCache::meshFor(const btCollisionShape* shape, bool* out_of_memory)
{
    if (out_of_memory) *out_of_memory = false;
    rtcdShapeRole role = rtcdRoleOf(shape);
    rtcd_mesh* stale = nullptr;
    // Released on every way out, after the new mesh was made.
    struct Release {
        rtcd_mesh** m;
        ~Release() { rtcd_mesh_release(*m); }
    } release_stale{&stale};
    Entry entry;
    entry.record(shape, role);
    auto it = m_entries.find(shape);
    if (it != m_entries.end()) {
        Entry& e = it->second;
        if (e.matches(entry)) return e.mesh;
        // Not the shape it was built from any more. A GImpact shape of the
        // same kind over other arrays may hold the same triangles (update
        // reads them: in place when they are); anything else is rebuilt
        // below, the old mesh held meanwhile.
        if (e.mesh && !e.external && role == RTCD_ROLE_MESH && e.sameKind(entry)) return update(shape, e, out_of_memory);
        stale = e.mesh;
        m_entries.erase(it);
    }
    if (role == RTCD_ROLE_MESH) shape->getAabb(btTransform::getIdentity(), entry.box_lo, entry.box_hi);
    char name[96];
    std::snprintf(name, sizeof name, "%s %p", rtcdRoleName(role), static_cast<const void*>(shape));
    std::string why, repairs;
    rtcd_error code = RTCD_OK;
    if (role == RTCD_ROLE_MESH || role == RTCD_ROLE_CONVEX || role == RTCD_ROLE_SURFACE)
        entry.mesh = build_mesh(shape, role, name, why, repairs, &code, &entry.as_given);
    else
        why = "not a mesh, convex or static surface shape";
    if (code == RTCD_ERROR_OUT_OF_MEMORY) {
        // Not a verdict on the shape: tried again on its next use.
        std::string line = std::string("rtcd: out of memory building the mesh of ") + name + "; tried again next step";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        if (out_of_memory) *out_of_memory = true;
        return nullptr;
    }
    if (!entry.mesh && role != RTCD_ROLE_PLANE && role != RTCD_ROLE_COMPOUND) {
        std::string line = std::string("rtcd declines ") + name + " (" + why + "); its pairs stay with Bullet";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
    } else if (entry.mesh && !repairs.empty()) {
        std::string line = std::string("rtcd repaired ") + name + ": " + repairs;
        rtcd_log_message(RTCD_LOG_INFO, line.c_str());
    }
    m_entries.emplace(shape, entry);
    return entry.mesh;
}

// GImpact's update flag, protected in btGImpactShapeInterface: postUpdate()
// sets it, updateBound() clears it.
struct rtcdGImpactFlag : public btGImpactShapeInterface {
    static bool raised(const btGImpactShapeInterface* s) { return s->*(&rtcdGImpactFlag::m_needs_update); }
};

// Has the GImpact shape of entry e changed since rtcd read it?
bool rtcdMeshCache::deformed(const btCollisionShape* shape, Entry& e)
{
    btGImpactMeshShape* g = const_cast<btGImpactMeshShape*>(static_cast<const btGImpactMeshShape*>(shape));
    bool flagged = e.dirty || rtcdGImpactFlag::raised(g);
    for (int i = 0; i < g->getMeshPartCount() && !flagged; ++i) flagged = rtcdGImpactFlag::raised(g->getMeshPart(i));
    // What GImpact's own algorithm would do with a flagged shape: refit its
    // boxes (Bullet's broadphase then sees the new box next step).
    if (flagged) g->updateBound();
    btVector3 lo, hi;
    g->getAabb(btTransform::getIdentity(), lo, hi);
    return flagged || lo != e.box_lo || hi != e.box_hi;
}

bool rtcdMeshCache::readInPlace(const btCollisionShape* shape, const Entry& e, std::vector<float>& v)
{
    std::vector<uint32_t> idx;
    std::string why;
    return e.as_given && read_triangles(shape, RTCD_ROLE_MESH, v, idx, why) &&
           v.size() == 3 * static_cast<size_t>(rtcd_mesh_vertex_count(e.mesh)) &&
           idx.size() == 3 * static_cast<size_t>(rtcd_mesh_triangle_count(e.mesh)) &&
           std::equal(idx.begin(), idx.end(), rtcd_mesh_indices(e.mesh));
}

bool rtcdMeshCache::tookInPlace(const btCollisionShape* shape, Entry& e, rtcd_error err, bool* out_of_memory)
{
    // A shape rtcd_mesh_create would refuse (a triangle squashed flat): not
    // taken; rebuilt through the repair, as a new shape would be.
    if (err != RTCD_OK && err != RTCD_ERROR_OUT_OF_MEMORY) return false;
    // Out of memory: the old shape this step, tried again on the next.
    e.dirty = err != RTCD_OK;
    if (err != RTCD_OK && out_of_memory) *out_of_memory = true;
    if (err == RTCD_OK) {
        shape->getAabb(btTransform::getIdentity(), e.box_lo, e.box_hi);
        e.record(shape, RTCD_ROLE_MESH); // other arrays, the same triangles
    }
    return true;
}

const rtcd_mesh* rtcdMeshCache::rebuild(const btCollisionShape* shape, Entry& e, bool* out_of_memory)
{
    // The old mesh is held until the new one exists (the pair states tell
    // meshes apart by id as well, so this is no longer needed for them).
    rtcd_mesh* old = e.mesh;
    m_entries.erase(shape);
    const rtcd_mesh* fresh = meshFor(shape, out_of_memory);
    rtcd_mesh_release(old);
    return fresh;
}

// Reads a deformed GImpact shape again: in place when the mesh holds the
// shape's vertices as given and the triangles are the same, else rebuilt.
const rtcd_mesh* rtcdMeshCache::update(const btCollisionShape* shape, Entry& e, bool* out_of_memory)
{
    std::vector<float> v;
    if (readInPlace(shape, e, v) && tookInPlace(shape, e, rtcd_mesh_update_vertices(e.mesh, v.data(), 0), out_of_memory))
        return e.mesh;
    return rebuild(shape, e, out_of_memory);
}

uint32_t rtcdMeshCache::updateDeformed(const btCollisionShape* const* shapes, size_t count, uint32_t stamp,
                                       const rtcd_task_system* tasks)
{
    struct Queued {
        const btCollisionShape* shape;
        Entry* entry;
        std::vector<float> v;
    };
    std::vector<Queued> queued;
    uint32_t oom_count = 0;
    for (size_t i = 0; i < count; ++i) {
        const btCollisionShape* shape = shapes[i];
        auto it = m_entries.find(shape);
        // What current() would look at this step and find deformed; the
        // checked stamp makes each shape's first appearance the only one.
        if (it == m_entries.end() || it->second.checked == stamp || it->second.external || !it->second.mesh ||
            rtcdRoleOf(shape) != RTCD_ROLE_MESH)
            continue;
        Entry now;
        now.record(shape, RTCD_ROLE_MESH);
        if (!it->second.matches(now)) continue; // a new shape at the address: current() builds it
        Entry& e = it->second;
        e.checked = stamp;
        if (!deformed(shape, e)) continue;
        Queued q{shape, &e, {}};
        if (readInPlace(shape, e, q.v)) {
            queued.push_back(std::move(q));
            continue;
        }
        bool oom = false;
        rebuild(shape, e, &oom); // the entry is replaced (or gone, out of memory)
        auto again = m_entries.find(shape);
        if (again != m_entries.end()) again->second.checked = stamp;
        oom_count += oom;
    }
    if (queued.empty()) return oom_count;
    std::vector<rtcd_mesh*> meshes(queued.size());
    std::vector<const float*> vertices(queued.size());
    // A call that finds no memory for its own list leaves the codes as they
    // are: out of memory for every mesh then (the old shapes this step).
    std::vector<rtcd_error> errors(queued.size(), RTCD_ERROR_OUT_OF_MEMORY);
    for (size_t k = 0; k < queued.size(); ++k) meshes[k] = queued[k].entry->mesh, vertices[k] = queued[k].v.data();
    // Distinct meshes (one entry per shape, each its own mesh); a refused
    // shape fails its own update only (errors[k]).
    rtcd_mesh_update_vertices_many(meshes.data(), vertices.data(), nullptr, static_cast<uint32_t>(queued.size()),
                                   tasks, errors.data());
    for (size_t k = 0; k < queued.size(); ++k) {
        bool oom = false;
        Queued& q = queued[k];
        if (!tookInPlace(q.shape, *q.entry, errors[k], &oom)) {
            rebuild(q.shape, *q.entry, &oom);
            auto again = m_entries.find(q.shape);
            if (again != m_entries.end()) again->second.checked = stamp;
        }
        oom_count += oom;
    }
    return oom_count;
}

bool rtcdMeshCache::peek(const btCollisionShape* shape, uint32_t stamp, const rtcd_mesh** mesh) const
{
    auto it = m_entries.find(shape);
    if (it == m_entries.end() || (it->second.checked != stamp && !it->second.external)) return false;
    *mesh = it->second.mesh; // current()'s first return
    return true;
}

const rtcd_mesh* rtcdMeshCache::current(const btCollisionShape* shape, uint32_t stamp, bool* out_of_memory)
{
    if (out_of_memory) *out_of_memory = false;
    auto it = m_entries.find(shape);
    if (it != m_entries.end() && (it->second.checked == stamp || it->second.external)) return it->second.mesh;
    rtcdShapeRole role = rtcdRoleOf(shape);
    Entry now;
    now.record(shape, role);
    const rtcd_mesh* m = nullptr;
    if (it == m_entries.end() || !it->second.matches(now)) {
        m = meshFor(shape, out_of_memory); // new here, or not what the mesh was built from
    } else {
        Entry& e = it->second;
        m = e.mesh && role == RTCD_ROLE_MESH && deformed(shape, e) ? update(shape, e, out_of_memory) : e.mesh;
    }
    it = m_entries.find(shape); // update and meshFor may have replaced the entry
    if (it != m_entries.end()) it->second.checked = stamp;
    return m;
}

void rtcdMeshCache::refresh(const btCollisionShape* shape)
{
    auto it = m_entries.find(shape);
    if (it != m_entries.end()) it->second.dirty = true;
}

void rtcdMeshCache::use(const btCollisionShape* shape, rtcd_mesh* mesh)
{
    auto it = m_entries.find(shape);
    if (it != m_entries.end()) {
        rtcd_mesh_release(it->second.mesh);
        m_entries.erase(it);
    }
    Entry e;
    e.record(shape, rtcdRoleOf(shape)); // a GImpact mesh, or a static surface (rtcd_world_add_static_mesh)
    e.mesh = mesh;
    e.as_given = true;
    e.external = true;
    m_entries.emplace(shape, e);
    rtcd_mesh_retain(mesh); // after the map took it: a throwing emplace holds nothing
}

// rtcd_batch_parallel_for runs the whole range and waits: enqueue does all
// of the task and returns no handle, so finish is never called.
static void* batch_enqueue(rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* task_context, void* user)
{
    rtcd_batch_parallel_for(static_cast<rtcd_batch*>(user), count, min_range, task, task_context);
    return nullptr;
}

static void batch_finish(void*, void*) {}

rtcd_task_system rtcdPluginState::batchTasks()
{
    rtcd_task_system ts = {};
    if (!narrowphase) return ts; // rtcd's own pool (no batch yet: nothing to update either)
    ts.enqueue = batch_enqueue;
    ts.finish = batch_finish;
    ts.user_context = narrowphase;
    ts.worker_count = rtcd_batch_worker_count(narrowphase);
    return ts;
}
