// Builds rtcd meshes from btGImpactMeshShape's striding mesh interface.
#include "plugin_internal.h"

#include <cstdio>
#include <string>

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
static bool read_striding_mesh(const btGImpactMeshShape* shape, std::vector<float>& vertices,
                               std::vector<uint32_t>& indices, std::string& why)
{
    const btStridingMeshInterface* iface = shape->getMeshInterface();
    for (int part = 0; part < iface->getNumSubParts(); ++part) {
        btVector3 scale = part_scaling(shape, part);
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
                indices.push_back(base + i);
            }
        }
        iface->unLockReadOnlyVertexBase(part);
        if (!ok) return false;
    }
    return true;
}

const rtcd_mesh* rtcdMeshCache::meshFor(const btCollisionShape* shape)
{
    const void* source = rtcdIsGImpactMesh(shape)
                             ? static_cast<const void*>(static_cast<const btGImpactMeshShape*>(shape)->getMeshInterface())
                             : nullptr;
    btVector3 scaling = source ? part_scaling(static_cast<const btGImpactMeshShape*>(shape), 0) : btVector3(1, 1, 1);
    auto it = m_entries.find(shape);
    if (it != m_entries.end()) {
        if (it->second.source == source && it->second.scaling == scaling) return it->second.mesh;
        rtcd_mesh_release(it->second.mesh); // not the shape it was built for any more
        m_entries.erase(it);
    }
    Entry entry = {nullptr, source, scaling};
    char name[64];
    std::snprintf(name, sizeof name, "btGImpactMeshShape %p", static_cast<const void*>(shape));
    std::string why;
    if (!rtcdIsGImpactMesh(shape)) {
        why = "not a btGImpactMeshShape";
    } else {
        const btGImpactMeshShape* gimpact = static_cast<const btGImpactMeshShape*>(shape);
        std::vector<float> vertices;
        std::vector<uint32_t> indices;
        if (read_striding_mesh(gimpact, vertices, indices, why)) {
            rtcd_mesh_def def = rtcd_default_mesh_def();
            def.vertices = vertices.data();
            def.vertex_count = static_cast<uint32_t>(vertices.size() / 3);
            def.indices = indices.data();
            def.triangle_count = static_cast<uint32_t>(indices.size() / 3);
            def.name = name;
            rtcd_error err = rtcd_mesh_create(&def, &entry.mesh);
            if (err != RTCD_OK) why = std::string(rtcd_error_name(err)) + ": " + rtcd_last_error_message();
        }
    }
    if (!entry.mesh) {
        std::string line = std::string("rtcd declines ") + name + " (" + why +
                           "); its pairs stay with Bullet's GImpact algorithm";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
    }
    m_entries.emplace(shape, entry);
    return entry.mesh;
}
