/* A btGImpactMeshShape over its own copy of a mesh (a generated one, whose
 * vertices a program may move before finish()), for the C++ tests and
 * benchmarks that build Bullet worlds by hand. */
#ifndef RTCD_SCENES_GIMPACT_MESH_HPP
#define RTCD_SCENES_GIMPACT_MESH_HPP

#include <rtcd/rtcd_generate.h>

#include <BulletCollision/CollisionShapes/btTriangleIndexVertexArray.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <memory>
#include <vector>

struct GImpactMesh {
    std::vector<float> vertices;
    std::vector<int> indices;
    std::unique_ptr<btTriangleIndexVertexArray> array; // reads vertices and indices in place
    std::unique_ptr<btGImpactMeshShape> shape;

    GImpactMesh() = default;
    // Takes g (freed here) and makes the shape.
    explicit GImpactMesh(rtcd_generated_mesh g)
    {
        take(g);
        rtcd_generated_free(&g);
    }
    // g's vertices and indices (g stays the caller's).
    void copy(const rtcd_generated_mesh& g)
    {
        vertices.assign(g.vertices, g.vertices + 3 * g.vertex_count);
        indices.assign(g.indices, g.indices + 3 * g.triangle_count);
    }
    // The shape over the vertices and indices as they are now.
    void finish()
    {
        array.reset(new btTriangleIndexVertexArray(static_cast<int>(indices.size() / 3), indices.data(), 3 * sizeof(int),
                                                   static_cast<int>(vertices.size() / 3), vertices.data(),
                                                   3 * sizeof(float)));
        shape.reset(new btGImpactMeshShape(array.get()));
        shape->updateBound();
    }
    void take(const rtcd_generated_mesh& g)
    {
        copy(g);
        finish();
    }
};

#endif
