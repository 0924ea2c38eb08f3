// The watertight wrap with OpenVDB (rtcd_wrap.h): the unsigned distance
// field of the input, the level `offset` meshed, cavities removed, checked by
// rtcd_mesh_create. Built as its own module (librtcd_wrap_vdb.so), loaded by
// core/wrap/wrap.cpp on the first wrap; it calls librtcd's public API only.
//
// Why 1/128 of the diagonal by default: see core/wrap/wrap.cpp.
#include "wrap_internal.hpp"

#include <rtcd/rtcd_mesh.h>
#include <rtcd/rtcd_repair.h>

#include <openvdb/openvdb.h>
#include <openvdb/tools/ChangeBackground.h>
#include <openvdb/tools/MeshToVolume.h>
#include <openvdb/tools/VolumeToMesh.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace {

// Union-find over the envelope's points: its closed pieces.
uint32_t find_root(std::vector<uint32_t>& parent, uint32_t a)
{
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
}

double signed_volume(const std::vector<openvdb::Vec3s>& p, const uint32_t* t)
{
    const openvdb::Vec3d a(p[t[0]]), b(p[t[1]]), c(p[t[2]]);
    return a.dot(b.cross(c)) / 6.0;
}

// Parity of crossings of a ray from q along a fixed skew direction with the
// triangles of one piece: odd means inside (the pieces are closed).
bool inside_piece(const std::vector<openvdb::Vec3s>& p, const std::vector<uint32_t>& tri,
                  const std::vector<uint32_t>& piece_tris, const openvdb::Vec3d& q)
{
    const openvdb::Vec3d dir(0.5773502691896258, 0.5773502691896257 + 1e-7, 0.5773502691896258 - 2e-7);
    unsigned crossings = 0;
    for (uint32_t t : piece_tris) {
        const openvdb::Vec3d a(p[tri[3 * t]]), b(p[tri[3 * t + 1]]), c(p[tri[3 * t + 2]]);
        const openvdb::Vec3d e1 = b - a, e2 = c - a, h = dir.cross(e2);
        const double det = e1.dot(h);
        if (std::fabs(det) < 1e-30) continue;
        const double f = 1.0 / det;
        const openvdb::Vec3d s = q - a;
        const double u = f * s.dot(h);
        if (u < 0.0 || u > 1.0) continue;
        const openvdb::Vec3d qq = s.cross(e1);
        const double v = f * dir.dot(qq);
        if (v < 0.0 || u + v > 1.0) continue;
        if (f * e2.dot(qq) > 0.0) ++crossings;
    }
    return crossings & 1u;
}

struct Piece {
    std::vector<uint32_t> tris;
    double volume = 0;
    openvdb::Vec3d lo{1e300}, hi{-1e300};
    bool keep = true;
};

// Drops the envelope's inner surfaces (negative volume: a cavity's wall seen
// from the solid) and pieces nested inside a larger kept one. Returns the count dropped.
uint32_t remove_cavities(const std::vector<openvdb::Vec3s>& p, std::vector<uint32_t>& tri)
{
    const uint32_t nt = static_cast<uint32_t>(tri.size() / 3);
    std::vector<uint32_t> parent(p.size());
    for (uint32_t i = 0; i < parent.size(); ++i) parent[i] = i;
    for (uint32_t t = 0; t < nt; ++t)
        for (int c = 1; c < 3; ++c) {
            uint32_t a = find_root(parent, tri[3 * t]), b = find_root(parent, tri[3 * t + c]);
            if (a != b) parent[std::max(a, b)] = std::min(a, b);
        }
    std::vector<uint32_t> piece_of(p.size(), UINT32_MAX);
    std::vector<Piece> pieces;
    for (uint32_t t = 0; t < nt; ++t) {
        uint32_t r = find_root(parent, tri[3 * t]);
        if (piece_of[r] == UINT32_MAX) {
            piece_of[r] = static_cast<uint32_t>(pieces.size());
            pieces.emplace_back();
        }
        Piece& pc = pieces[piece_of[r]];
        pc.tris.push_back(t);
        pc.volume += signed_volume(p, &tri[3 * t]);
        for (int c = 0; c < 3; ++c) {
            const openvdb::Vec3d q(p[tri[3 * t + c]]);
            pc.lo = openvdb::math::minComponent(pc.lo, q);
            pc.hi = openvdb::math::maxComponent(pc.hi, q);
        }
    }
    if (pieces.size() <= 1) return 0;
    std::vector<uint32_t> order(pieces.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return pieces[a].volume > pieces[b].volume; });
    uint32_t dropped = 0;
    for (size_t i = 0; i < order.size(); ++i) {
        Piece& pc = pieces[order[i]];
        if (pc.volume <= 0) {
            pc.keep = false;
            ++dropped;
            continue;
        }
        const openvdb::Vec3d q(p[tri[3 * pc.tris[0]]]);
        for (size_t j = 0; j < i && pc.keep; ++j) {
            const Piece& big = pieces[order[j]];
            if (!big.keep || big.lo.x() > pc.lo.x() || big.lo.y() > pc.lo.y() || big.lo.z() > pc.lo.z() ||
                big.hi.x() < pc.hi.x() || big.hi.y() < pc.hi.y() || big.hi.z() < pc.hi.z())
                continue;
            if (inside_piece(p, tri, big.tris, q)) {
                pc.keep = false;
                ++dropped;
            }
        }
    }
    std::vector<uint32_t> kept;
    kept.reserve(tri.size());
    for (uint32_t t = 0; t < nt; ++t)
        if (pieces[piece_of[find_root(parent, tri[3 * t])]].keep) kept.insert(kept.end(), &tri[3 * t], &tri[3 * t + 3]);
    tri.swap(kept);
    return dropped;
}

std::once_flag g_vdb_init;

// The envelope through rtcd_repair (no weld beyond exact duplicates): taken
// when it comes out as closed pieces.
rtcd_error second_chance(rtcd_wrapped& w)
{
    rtcd_repair_def def = rtcd_default_repair_def();
    def.weld_tolerance = 0;
    rtcd_repaired* r = nullptr;
    rtcd_error err = rtcd_repair(&def, w.vertices.data(), static_cast<uint32_t>(w.vertices.size() / 3), 0,
                                 w.indices.data(), static_cast<uint32_t>(w.indices.size() / 3), &r);
    if (err != RTCD_OK) return err;
    const float* v;
    const uint32_t* idx;
    uint32_t nv = 0, nt = 0;
    bool closed = rtcd_repaired_component_count(r) > 0;
    for (uint32_t c = 0; c < rtcd_repaired_component_count(r); ++c) closed = closed && rtcd_repaired_component_closed(r, c);
    err = closed ? rtcd_repaired_merged(r, &v, &nv, &idx, &nt) : RTCD_ERROR_MESH_OPEN_EDGE;
    if (err == RTCD_OK) {
        w.vertices.assign(v, v + 3 * static_cast<size_t>(nv));
        w.indices.assign(idx, idx + 3 * static_cast<size_t>(nt));
    }
    rtcd_repaired_release(r);
    return err;
}

rtcd_error wrap_vdb(const rtcd_wrap_def& def, const float* vertices, uint32_t nv, size_t stride,
                    const uint32_t* indices, uint32_t nt, rtcd_wrapped** out)
{
    using clock = std::chrono::steady_clock;
    const clock::time_point t0 = clock::now();
    std::call_once(g_vdb_init, [] { openvdb::initialize(); });
    const size_t step = stride ? stride : 3 * sizeof(float);
    auto vertex = [&](uint32_t i) {
        return reinterpret_cast<const float*>(reinterpret_cast<const char*>(vertices) + i * step);
    };
    // The box of the used vertices; coordinates are taken about its centre (float precision).
    openvdb::Vec3d lo(1e300), hi(-1e300);
    for (size_t i = 0; i < 3 * static_cast<size_t>(nt); ++i) {
        const float* v = vertex(indices[i]);
        const openvdb::Vec3d q(v[0], v[1], v[2]);
        lo = openvdb::math::minComponent(lo, q);
        hi = openvdb::math::maxComponent(hi, q);
    }
    const openvdb::Vec3d centre = 0.5 * (lo + hi), extent = hi - lo;
    const double diag = extent.length();
    if (!(diag > 0) || !std::isfinite(diag))
        return rtcd_wrap_fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_wrap: the triangles have no extent (every vertex at one point)");
    std::vector<openvdb::Vec3s> points(nv);
    for (uint32_t i = 0; i < nv; ++i) {
        const float* v = vertex(i);
        points[i] = openvdb::Vec3s(openvdb::Vec3d(v[0], v[1], v[2]) - centre);
    }
    std::vector<openvdb::Vec3I> tris(nt);
    for (uint32_t t = 0; t < nt; ++t) tris[t] = openvdb::Vec3I(indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]);
    const std::vector<openvdb::Vec4I> no_quads;

    double h = def.voxel_size * diag;
    const float band = def.offset + 1.0f; // voxels of field: the level meshed and one beyond
    {
        double count = 1;
        for (int a = 0; a < 3; ++a) count *= std::ceil(extent[a] / h) + 2.0 * band + 2.0;
        if (count > static_cast<double>(def.max_voxels))
            return rtcd_wrap_fail(RTCD_ERROR_MESH_TOO_LARGE,
                        "rtcd_wrap: voxel_size %g asks for %.0f voxels, above max_voxels (%llu)",
                        (double)def.voxel_size, count, static_cast<unsigned long long>(def.max_voxels));
    }
    std::unique_ptr<rtcd_wrapped> w(new rtcd_wrapped());
    w->refcount = 1;
    std::vector<openvdb::Vec3s> mp;
    std::vector<uint32_t> tri;
    uint32_t coarsened = 0;
    tbb::task_arena arena(def.max_threads ? static_cast<int>(def.max_threads) : tbb::task_arena::automatic);
    for (;; h *= 1.25, ++coarsened) {
        const double r = def.offset * h;
        std::vector<openvdb::Vec3I> mtris;
        std::vector<openvdb::Vec4I> mquads;
        mp.clear();
        arena.execute([&] {
            openvdb::math::Transform::Ptr xform = openvdb::math::Transform::createLinearTransform(h);
            openvdb::FloatGrid::Ptr grid =
                openvdb::tools::meshToUnsignedDistanceField<openvdb::FloatGrid>(*xform, points, tris, no_quads, band);
            // The shell: negative within r of the input, the level 0 meshed.
            const float shift = static_cast<float>(r);
            for (auto it = grid->beginValueOn(); it; ++it) it.setValue(*it - shift);
            openvdb::tools::changeBackground(grid->tree(), static_cast<float>(band * h - r));
            openvdb::tools::volumeToMesh(*grid, mp, mtris, mquads, 0.0, def.adaptivity);
        });
        tri.clear();
        tri.reserve(3 * (mtris.size() + 2 * mquads.size()));
        for (const auto& t : mtris) tri.insert(tri.end(), {t[0], t[1], t[2]});
        for (const auto& q : mquads) { // split along the shorter diagonal
            if ((mp[q[0]] - mp[q[2]]).lengthSqr() <= (mp[q[1]] - mp[q[3]]).lengthSqr())
                tri.insert(tri.end(), {q[0], q[1], q[2], q[0], q[2], q[3]});
            else
                tri.insert(tri.end(), {q[0], q[1], q[3], q[1], q[2], q[3]});
        }
        if (tri.size() / 3 <= def.max_triangles || coarsened >= 40) break;
    }
    if (tri.empty()) return rtcd_wrap_fail(RTCD_ERROR_INTERNAL, "rtcd_wrap: the envelope came out empty");
    // Outward: the outer surface encloses more than all inner ones together,
    // so the total volume has the outer surface's sign.
    double total = 0;
    for (size_t t = 0; t < tri.size(); t += 3) total += signed_volume(mp, &tri[t]);
    if (total < 0)
        for (size_t t = 0; t < tri.size(); t += 3) std::swap(tri[t + 1], tri[t + 2]);
    w->report.removed_cavities = remove_cavities(mp, tri);
    // Compact: only the points the kept triangles use, back about the input's origin.
    std::vector<uint32_t> remap(mp.size(), UINT32_MAX);
    w->indices.resize(tri.size());
    for (size_t i = 0; i < tri.size(); ++i) {
        uint32_t& m = remap[tri[i]];
        if (m == UINT32_MAX) {
            m = static_cast<uint32_t>(w->vertices.size() / 3);
            const openvdb::Vec3d q = openvdb::Vec3d(mp[tri[i]]) + centre;
            w->vertices.insert(w->vertices.end(), {static_cast<float>(q.x()), static_cast<float>(q.y()),
                                                   static_cast<float>(q.z())});
        }
        w->indices[i] = m;
    }

    rtcd_wrap_report& rep = w->report;
    rep.diagonal = static_cast<float>(diag);
    rep.voxel_size = static_cast<float>(h);
    rep.resolution = static_cast<float>(h / diag);
    rep.offset = static_cast<float>(def.offset * h);
    rep.input_triangles = nt;
    rep.output_triangles = static_cast<uint32_t>(w->indices.size() / 3);
    rep.output_vertices = static_cast<uint32_t>(w->vertices.size() / 3);
    rep.coarsened = coarsened;

    // What rtcd_mesh_create says of it (closed, manifold, outward) is the guarantee.
    rtcd_mesh_def md = rtcd_default_mesh_def();
    md.vertices = w->vertices.data();
    md.vertex_count = rep.output_vertices;
    md.indices = w->indices.data();
    md.triangle_count = rep.output_triangles;
    md.name = "wrap";
    rtcd_mesh* check = nullptr;
    rtcd_error err = rtcd_mesh_create(&md, &check);
    rtcd_mesh_release(check);
    if (err != RTCD_OK && err != RTCD_ERROR_OUT_OF_MEMORY && err != RTCD_ERROR_MESH_OUT_OF_RANGE) {
        // Adaptive meshing leaves the odd zero-area triangle (collinear
        // corners): the repair's degenerate and sliver steps take it out.
        err = second_chance(*w);
        if (err == RTCD_OK) {
            md.vertices = w->vertices.data();
            md.vertex_count = rep.output_vertices = static_cast<uint32_t>(w->vertices.size() / 3);
            md.indices = w->indices.data();
            md.triangle_count = rep.output_triangles = static_cast<uint32_t>(w->indices.size() / 3);
            err = rtcd_mesh_create(&md, &check);
            rtcd_mesh_release(check);
        }
    }
    // The volume, about the centre (float coordinates far from the origin).
    for (size_t t = 0; t < w->indices.size(); t += 3) {
        openvdb::Vec3d c[3];
        for (int k = 0; k < 3; ++k) {
            const float* q = &w->vertices[3 * static_cast<size_t>(w->indices[t + k])];
            c[k] = openvdb::Vec3d(q[0], q[1], q[2]) - centre;
        }
        rep.volume += c[0].dot(c[1].cross(c[2])) / 6.0;
    }
    if (err == RTCD_ERROR_MESH_OUT_OF_RANGE) // the input's scale, not the wrap's doing
        return rtcd_wrap_fail(err, "rtcd_wrap: the envelope is outside rtcd's range: %s", rtcd_last_error_message());
    if (err != RTCD_OK)
        return rtcd_wrap_fail(err == RTCD_ERROR_OUT_OF_MEMORY ? err : RTCD_ERROR_INTERNAL,
                    "rtcd_wrap: the envelope is not a valid mesh (%s)", rtcd_last_error_message());

    const clock::time_point t1 = clock::now();
    // The input as three floats a vertex for the distance.
    std::vector<float> in(3 * static_cast<size_t>(nv));
    for (uint32_t i = 0; i < nv; ++i) std::memcpy(&in[3 * static_cast<size_t>(i)], vertex(i), 3 * sizeof(float));
    const double d = rtcd_sampled_distance(in.data(), nv, indices, nt, w->vertices.data(), rep.output_vertices,
                                           w->indices.data(), rep.output_triangles, def.distance_samples,
                                           &rep.distance_in_out, &rep.distance_out_in);
    if (d < 0) return rtcd_wrap_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_wrap: out of memory measuring the distance");
    rep.distance = d;
    const clock::time_point t2 = clock::now();
    rep.ms = std::chrono::duration<double, std::milli>(t2 - t0).count();
    rep.ms_distance = std::chrono::duration<double, std::milli>(t2 - t1).count();
    *out = w.release();
    return RTCD_OK;
}

} // namespace

extern "C" __attribute__((visibility("default"))) rtcd_error rtcd_wrap_vdb_entry(const rtcd_wrap_def* def,
                                                                              const float* vertices,
                                                                              uint32_t vertex_count,
                                                                              size_t vertex_stride,
                                                                              const uint32_t* indices,
                                                                              uint32_t triangle_count,
                                                                              rtcd_wrapped** out)
{
    try {
        return wrap_vdb(*def, vertices, vertex_count, vertex_stride, indices, triangle_count, out);
    } catch (const std::bad_alloc&) {
        return rtcd_wrap_fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_wrap: out of memory");
    } catch (const std::exception& e) {
        return rtcd_wrap_fail(RTCD_ERROR_INTERNAL, "rtcd_wrap: OpenVDB failed: %s", e.what());
    }
}
