// The C API over Bullet (rtcd_world.h): a btDiscreteDynamicsWorld whose
// concave meshes go through rtcd, Bullet's GImpact algorithm or convex hulls.
#include "plugin_convex.h"
#include "world_internal.h"

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

namespace {

rtcd_error fail(rtcd_error code, const std::string& message) { return rtcd_report_error(code, message.c_str()); }

// Is x finite and within [lo, hi]? Otherwise the error names the argument,
// its value and the range. The arguments are floats, compared with the
// bounds as floats: the bound a user writes (1e-6f) is in the range.
rtcd_error check_range(const char* fn, const char* what, float x, float lo, float hi)
{
    if (std::isfinite(x) && x >= lo && x <= hi) return RTCD_OK;
    char line[256];
    std::snprintf(line, sizeof line, "%s: %s is %g, not within [%g, %g]", fn, what, double(x), double(lo), double(hi));
    return fail(RTCD_ERROR_INVALID_ARGUMENT, line);
}

// The world's range of validity (docs/validity.md): where Bullet
// and rtcd's float pipeline give the right answers.
const float k_max_coordinate = RTCD_WORLD_MAX_COORDINATE;
const float k_max_speed = RTCD_WORLD_MAX_SPEED;
const float k_min_mass = RTCD_WORLD_MIN_MASS, k_max_mass = RTCD_WORLD_MAX_MASS;

// A pose rtcd and Bullet can use: finite, a rotation (orthonormal, right
// handed, within 1e-3), a translation within the range of validity.
rtcd_error check_pose(const char* fn, const rtcd_transform* pose)
{
    for (int i = 0; i < 12; ++i)
        if (!std::isfinite(i < 9 ? pose->rotation[i] : pose->translation[i - 9]))
            return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": pose is not finite");
    const float* r = pose->rotation;
    double worst = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double d = 0; // (R R^T)_ij
            for (int k = 0; k < 3; ++k) d += double(r[3 * i + k]) * r[3 * j + k];
            worst = std::max(worst, std::fabs(d - (i == j ? 1.0 : 0.0)));
        }
    double det = r[0] * (double(r[4]) * r[8] - double(r[5]) * r[7]) - r[1] * (double(r[3]) * r[8] - double(r[5]) * r[6]) +
                 r[2] * (double(r[3]) * r[7] - double(r[4]) * r[6]);
    if (worst > 1e-3 || det < 0)
        return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": pose's rotation is not a rotation (R R^T - I up to " +
                                                     std::to_string(worst) + ", det " + std::to_string(det) + ")");
    for (int k = 0; k < 3; ++k) {
        rtcd_error err = check_range(fn, "pose translation", pose->translation[k], -k_max_coordinate, k_max_coordinate);
        if (err != RTCD_OK) return err;
    }
    return RTCD_OK;
}

// Every field of a world def, each error naming it. Enums are read as
// integers: a value outside the enum is not one to load as the enum.
rtcd_error check_world_def(const rtcd_world_def* d)
{
    const char* fn = "rtcd_world_create";
    int kind;
    std::memcpy(&kind, &d->narrowphase_kind, sizeof kind);
    if (kind < RTCD_NARROWPHASE_RTCD || kind > RTCD_NARROWPHASE_HULL)
        return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": narrowphase_kind " + std::to_string(kind) +
                                                     " is not rtcd (0), gimpact (1) or hull (2)");
    if (d->solver_iterations < 1 || d->solver_iterations > RTCD_WORLD_MAX_SOLVER_ITERATIONS)
        return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": solver_iterations is " +
                                                     std::to_string(d->solver_iterations) + ", not within [1, " +
                                                     std::to_string(RTCD_WORLD_MAX_SOLVER_ITERATIONS) + "]");
    const float g = RTCD_WORLD_MAX_GRAVITY;
    const struct {
        const char* what;
        float value, lo, hi;
    } fields[] = {
        {"gravity[0]", d->gravity[0], -g, g},
        {"gravity[1]", d->gravity[1], -g, g},
        {"gravity[2]", d->gravity[2], -g, g},
        {"time_step", d->time_step, RTCD_WORLD_MIN_TIME_STEP, RTCD_WORLD_MAX_TIME_STEP},
        {"linear_damping", d->linear_damping, 0.0f, 1.0f},
        {"angular_damping", d->angular_damping, 0.0f, 1.0f},
        {"friction", d->friction, 0.0f, RTCD_WORLD_MAX_FRICTION},
        {"restitution", d->restitution, 0.0f, 1.0f},
        {"rolling_friction", d->rolling_friction, 0.0f, RTCD_WORLD_MAX_FRICTION},
    };
    for (const auto& f : fields) {
        rtcd_error err = check_range(fn, f.what, f.value, f.lo, f.hi);
        if (err != RTCD_OK) return err;
    }
    return rtcd_narrowphase_def_validate(&d->narrowphase);
}

} // namespace

extern "C" {

rtcd_world_def rtcd_default_world_def(void)
{
    rtcd_world_def def;
    std::memset(&def, 0, sizeof def);
    def.gravity[2] = -9.81f;
    def.time_step = 1.0f / 60.0f;
    def.solver_iterations = 10;
    def.narrowphase_kind = RTCD_NARROWPHASE_RTCD;
    def.narrowphase = rtcd_default_narrowphase_def();
    def.friction = 0.6f;
    def.restitution = 0.0f;
    def.rolling_friction = 0.02f;
    return def;
}

rtcd_error rtcd_world_create(const rtcd_world_def* def, rtcd_world** out)
{
    if (out) *out = nullptr;
    if (!def || !out) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_create: NULL argument");
    rtcd_error err = check_world_def(def);
    if (err != RTCD_OK) return err;
    rtcd_world* w = new (std::nothrow) rtcd_world();
    if (!w) return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_create: out of memory");
    try {
        w->def = *def;
        w->config = new btDefaultCollisionConfiguration();
        if (def->narrowphase_kind == RTCD_NARROWPHASE_RTCD) {
            w->rtcd_dispatcher = new rtcdCollisionDispatcher(w->config, &def->narrowphase);
            w->rtcd_dispatcher->setCheck(def->check != 0);
            w->dispatcher = w->rtcd_dispatcher;
        } else {
            w->timed_dispatcher = new TimedDispatcher(w->config);
            w->dispatcher = w->timed_dispatcher;
            btGImpactCollisionAlgorithm::registerAlgorithm(w->dispatcher);
        }
        w->broadphase = new btDbvtBroadphase();
        w->solver = new TimedSolver();
        w->dynamics = new btDiscreteDynamicsWorld(w->dispatcher, w->broadphase, w->solver, w->config);
        w->dynamics->setGravity(btVector3(def->gravity[0], def->gravity[1], def->gravity[2]));
        btContactSolverInfo& si = w->dynamics->getSolverInfo();
        si.m_numIterations = def->solver_iterations;
        // Deep contacts: split impulse corrects penetration by position only,
        // so an object pushed out of a deep overlap gains no velocity from it.
        si.m_splitImpulse = 1;
        si.m_splitImpulsePenetrationThreshold = -0.02f;
        si.m_erp2 = 0.8f;
    } catch (const std::bad_alloc&) {
        rtcd_world_release(w);
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_create: out of memory building the Bullet world");
    }
    *out = w;
    return RTCD_OK;
}

static void shape_free(rtcd_shape* s)
{
    if (s->world) { // a shape may outlive its world
        std::vector<rtcd_shape*>& all = s->world->shapes;
        all.erase(std::remove(all.begin(), all.end(), s), all.end());
    }
    for (rtcd_shape_piece& p : s->pieces) {
        delete p.shape;
        delete p.iface;
    }
    delete s->bt_shape;
    delete s->mesh_interface;
    rtcd_mesh_release(s->body_mesh);
    delete s;
}

// A new shape into its world's list (shapes may outlive it); false (the
// shape freed) when out of memory.
static bool register_shape(rtcd_world* w, rtcd_shape* s)
{
    s->world = w;
    try {
        w->shapes.push_back(s);
        return true;
    } catch (const std::bad_alloc&) {
        s->world = nullptr;
        shape_free(s);
        return false;
    }
}

void rtcd_world_retain(rtcd_world* w)
{
    if (w) w->refcount++;
}

void rtcd_world_release(rtcd_world* w)
{
    if (!w || --w->refcount > 0) return;
    for (btRigidBody* b : w->bodies) {
        if (w->dynamics) w->dynamics->removeRigidBody(b);
        delete b->getMotionState();
        delete b;
    }
    for (btRigidBody* b : w->planes) {
        if (w->dynamics) w->dynamics->removeRigidBody(b);
        delete b;
    }
    for (btCollisionShape* s : w->plane_shapes) delete s;
    for (rtcd_static_mesh* m : w->static_meshes) {
        if (w->dynamics) w->dynamics->removeRigidBody(m->body);
        delete m->body;
        delete m->shape;
        delete m->mesh_interface;
        rtcd_mesh_release(m->mesh);
        delete m;
    }
    for (rtcd_shape* s : w->body_shapes) rtcd_shape_release(s);
    for (rtcd_shape* s : w->shapes) s->world = nullptr; // the user's still: they outlive the world
    delete w->dynamics;
    delete w->solver;
    delete w->broadphase;
    delete w->dispatcher;
    delete w->config;
    delete w;
}

// The principal frame of a body of these mass properties (unit density):
// centre of mass at the origin, axes along the principal axes of inertia
// (Bullet's bodies need a diagonal inertia tensor). Fills the shape's com,
// frame and unit inertia; returns the rotation (body to mesh axes).
static btMatrix3x3 principal_frame(rtcd_shape* s, const rtcd_mass_properties& mp)
{
    btMatrix3x3 inertia(mp.inertia[0], mp.inertia[1], mp.inertia[2], mp.inertia[3], mp.inertia[4], mp.inertia[5],
                        mp.inertia[6], mp.inertia[7], mp.inertia[8]);
    btMatrix3x3 rot; // rot * inertia * rot^T is diagonal after diagonalize
    rot.setIdentity();
    btMatrix3x3 diag = inertia;
    diag.diagonalize(rot, btScalar(1e-9), 32);
    // diagonalize leaves diag = rot^T-rotated tensor and rot with eigenvectors as columns.
    for (int k = 0; k < 3; ++k) s->com[k] = static_cast<float>(mp.center_of_mass[k]);
    double volume = mp.volume;
    s->unit_inertia = btVector3(diag[0][0] / volume, diag[1][1] / volume, diag[2][2] / volume);
    // Body coordinates: b = rot^T (m - com); the frame maps body to mesh: m = rot b + com.
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) s->frame.rotation[3 * i + j] = static_cast<float>(rot[i][j]);
        s->frame.translation[i] = s->com[i];
    }
    return rot;
}

// Appends a mesh's vertices in the body frame to `out`.
static void to_body_frame(const rtcd_shape* s, const btMatrix3x3& rot, const rtcd_mesh* mesh, std::vector<float>& out)
{
    const float* v = rtcd_mesh_vertices(mesh);
    for (uint32_t i = 0; i < rtcd_mesh_vertex_count(mesh); ++i) {
        btVector3 m(v[3 * i] - s->com[0], v[3 * i + 1] - s->com[1], v[3 * i + 2] - s->com[2]);
        btVector3 b = rot.transpose() * m;
        for (int k = 0; k < 3; ++k) out.push_back(static_cast<float>(b[k]));
    }
}

// The shape's mesh in the body frame (s->vertices, s->indices): what collides.
static rtcd_error make_body_mesh(rtcd_shape* s, const char* name)
{
    rtcd_mesh_def def = rtcd_default_mesh_def();
    def.vertices = s->vertices.data();
    def.vertex_count = static_cast<uint32_t>(s->vertices.size() / 3);
    def.indices = reinterpret_cast<const uint32_t*>(s->indices.data());
    def.triangle_count = static_cast<uint32_t>(s->indices.size() / 3);
    def.name = name;
    return rtcd_mesh_create(&def, &s->body_mesh);
}

// Re-expresses the mesh in its principal frame.
static rtcd_error build_body_frame(rtcd_shape* s, const rtcd_mesh* mesh)
{
    btMatrix3x3 rot = principal_frame(s, rtcd_mesh_mass_properties(mesh));
    to_body_frame(s, rot, mesh, s->vertices);
    const uint32_t* idx = rtcd_mesh_indices(mesh);
    s->indices.assign(idx, idx + 3 * static_cast<size_t>(rtcd_mesh_triangle_count(mesh)));
    return make_body_mesh(s, rtcd_mesh_name(mesh));
}

// A GImpact mesh over vertex and index arrays that outlive it.
static btGImpactMeshShape* gimpact_over(std::vector<float>& v, std::vector<int>& idx, btTriangleIndexVertexArray** iface)
{
    *iface = new btTriangleIndexVertexArray(static_cast<int>(idx.size() / 3), idx.data(), 3 * sizeof(int),
                                            static_cast<int>(v.size() / 3), v.data(), 3 * sizeof(float));
    btGImpactMeshShape* g = new btGImpactMeshShape(*iface);
    g->setMargin(0.01f);
    g->updateBound();
    return g;
}

// The Bullet shape of a concave body: its hull for the hull mode, else a
// GImpact mesh (several pieces: a compound of GImpact meshes).
static void make_concave_bt_shape(rtcd_world* w, rtcd_shape* s)
{
    if (w->def.narrowphase_kind == RTCD_NARROWPHASE_HULL) {
        btConvexHullShape* hull =
            new btConvexHullShape(s->vertices.data(), static_cast<int>(s->vertices.size() / 3), 3 * sizeof(float));
        hull->optimizeConvexHull(); // keep only the hull's own vertices
        hull->setMargin(0.01f);
        s->bt_shape = hull;
    } else if (s->pieces.empty()) {
        s->bt_shape = gimpact_over(s->vertices, s->indices, &s->mesh_interface);
        // The narrow phase collides with the shape's own body mesh (the
        // same vertices), which rtcd_shape_set_vertices keeps up to date.
        if (w->rtcd_dispatcher && s->body_mesh) w->rtcd_dispatcher->useMesh(s->bt_shape, s->body_mesh);
    } else {
        btCompoundShape* c = new btCompoundShape();
        s->bt_shape = c;
        for (rtcd_shape_piece& p : s->pieces) {
            p.shape = gimpact_over(p.vertices, p.indices, &p.iface);
            c->addChildShape(btTransform::getIdentity(), p.shape);
        }
    }
}

rtcd_error rtcd_shape_create(rtcd_world* w, rtcd_mesh* mesh, rtcd_shape** out)
{
    if (out) *out = nullptr;
    if (!w || !mesh || !out) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create: NULL argument");
    if (rtcd_mesh_is_open_surface(mesh))
        return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create: an open surface has no inside to be a body "
                                                 "(rtcd_world_add_static_mesh takes it)");
    rtcd_shape* s = new (std::nothrow) rtcd_shape();
    if (!s) return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_shape_create: out of memory");
    s->refcount = 1;
    if (!register_shape(w, s)) return fail(RTCD_ERROR_OUT_OF_MEMORY, "out of memory for a new shape");
    rtcd_error err = build_body_frame(s, mesh);
    if (err != RTCD_OK) {
        shape_free(s);
        return err;
    }
    try {
        make_concave_bt_shape(w, s);
    } catch (const std::bad_alloc&) {
        shape_free(s);
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_shape_create: out of memory");
    }
    *out = s;
    return RTCD_OK;
}

rtcd_error rtcd_shape_create_compound(rtcd_world* w, rtcd_mesh* const* meshes, uint32_t count, rtcd_shape** out)
{
    if (out) *out = nullptr;
    if (!w || !meshes || !out) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create_compound: NULL argument");
    if (count < 1 || count > RTCD_COMPOUND_MAX_PIECES)
        return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create_compound: count is " + std::to_string(count) +
                                                     ", not within [1, " + std::to_string(RTCD_COMPOUND_MAX_PIECES) + "]");
    // The pieces' mass properties combined (unit density): volumes add, the
    // centre is their mean, inertias move to it by the parallel axis rule.
    rtcd_mass_properties all;
    std::memset(&all, 0, sizeof all);
    for (uint32_t i = 0; i < count; ++i) {
        if (!meshes[i] || rtcd_mesh_is_open_surface(meshes[i]))
            return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create_compound: piece " + std::to_string(i) +
                                                         " is NULL or an open surface");
        rtcd_mass_properties mp = rtcd_mesh_mass_properties(meshes[i]);
        all.volume += mp.volume;
        for (int k = 0; k < 3; ++k) all.center_of_mass[k] += mp.volume * mp.center_of_mass[k];
    }
    for (int k = 0; k < 3; ++k) all.center_of_mass[k] /= all.volume;
    for (uint32_t i = 0; i < count; ++i) {
        rtcd_mass_properties mp = rtcd_mesh_mass_properties(meshes[i]);
        double d[3], d2 = 0;
        for (int k = 0; k < 3; ++k) {
            d[k] = mp.center_of_mass[k] - all.center_of_mass[k];
            d2 += d[k] * d[k];
        }
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) all.inertia[3 * r + c] += mp.inertia[3 * r + c] + mp.volume * ((r == c ? d2 : 0.0) - d[r] * d[c]);
    }
    rtcd_shape* s = new (std::nothrow) rtcd_shape();
    if (!s) return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_shape_create_compound: out of memory");
    s->refcount = 1;
    if (!register_shape(w, s)) return fail(RTCD_ERROR_OUT_OF_MEMORY, "out of memory for a new shape");
    try {
        btMatrix3x3 rot = principal_frame(s, all);
        s->pieces.resize(count);
        for (uint32_t i = 0; i < count; ++i) {
            rtcd_shape_piece& p = s->pieces[i];
            uint32_t base = static_cast<uint32_t>(s->vertices.size() / 3);
            to_body_frame(s, rot, meshes[i], p.vertices);
            const uint32_t* idx = rtcd_mesh_indices(meshes[i]);
            p.indices.assign(idx, idx + 3 * static_cast<size_t>(rtcd_mesh_triangle_count(meshes[i])));
            s->vertices.insert(s->vertices.end(), p.vertices.begin(), p.vertices.end());
            for (int k : p.indices) s->indices.push_back(static_cast<int>(base) + k);
        }
        // All pieces in one mesh: the penetration measure's ruler.
        rtcd_error err = make_body_mesh(s, "compound");
        if (err != RTCD_OK) {
            shape_free(s);
            return err;
        }
        make_concave_bt_shape(w, s);
    } catch (const std::bad_alloc&) {
        shape_free(s);
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_shape_create_compound: out of memory");
    }
    *out = s;
    return RTCD_OK;
}

rtcd_convex_def rtcd_default_convex_def(void)
{
    rtcd_convex_def def;
    std::memset(&def, 0, sizeof def);
    def.kind = RTCD_CONVEX_BOX;
    def.half_extents[0] = def.half_extents[1] = def.half_extents[2] = 0.5f;
    def.margin = -1.0f;
    return def;
}

// A size of a convex def within [RTCD_CONVEX_MIN_SIZE, RTCD_CONVEX_MAX_SIZE];
// else false with *why naming it, its value and the range.
static bool convex_size_ok(const char* what, float x, std::string& why)
{
    if (x >= RTCD_CONVEX_MIN_SIZE && x <= RTCD_CONVEX_MAX_SIZE) return true; // false for NaN
    char line[160];
    std::snprintf(line, sizeof line, "%s is %g, not within [%g, %g] m", what, double(x), double(RTCD_CONVEX_MIN_SIZE),
                  double(RTCD_CONVEX_MAX_SIZE));
    why = line;
    return false;
}

// The margin: negative (Bullet's default) or within [0, RTCD_CONVEX_MAX_SIZE];
// a box and a cylinder hold theirs inside their sizes (Bullet's
// implicit shape less the margin), so at most their smallest size there.
static bool convex_margin_ok(const rtcd_convex_def& d, int kind, std::string& why)
{
    char line[200];
    if (!std::isfinite(d.margin) || d.margin > RTCD_CONVEX_MAX_SIZE) {
        std::snprintf(line, sizeof line, "margin is %g, not negative (the default) or within [0, %g] m",
                      double(d.margin), double(RTCD_CONVEX_MAX_SIZE));
        why = line;
        return false;
    }
    float inside = INFINITY;
    if (kind == RTCD_CONVEX_BOX) inside = std::min(d.half_extents[0], std::min(d.half_extents[1], d.half_extents[2]));
    if (kind == RTCD_CONVEX_CYLINDER) inside = std::min(d.radius, d.half_height);
    if (d.margin > inside) {
        std::snprintf(line, sizeof line, "margin is %g, above the smallest size %g m (a %s holds its margin inside)",
                      double(d.margin), double(inside), kind == RTCD_CONVEX_BOX ? "box" : "cylinder");
        why = line;
        return false;
    }
    return true;
}

// The Bullet shape a convex def describes, or NULL with *why.
static btConvexShape* convex_shape(const rtcd_convex_def& d, rtcd_shape* s, std::string& why)
{
    int kind; // read as an integer: a stray value is not one to load as the enum
    std::memcpy(&kind, &d.kind, sizeof kind);
    bool ok = true;
    switch (kind) {
    case RTCD_CONVEX_BOX:
        ok = convex_size_ok("half_extents[0]", d.half_extents[0], why) &&
             convex_size_ok("half_extents[1]", d.half_extents[1], why) &&
             convex_size_ok("half_extents[2]", d.half_extents[2], why);
        break;
    case RTCD_CONVEX_SPHERE: ok = convex_size_ok("radius", d.radius, why); break;
    case RTCD_CONVEX_CAPSULE:
    case RTCD_CONVEX_CYLINDER:
    case RTCD_CONVEX_CONE:
        ok = convex_size_ok("radius", d.radius, why) && convex_size_ok("half_height", d.half_height, why);
        break;
    case RTCD_CONVEX_HULL:
        if (!d.points || d.point_count < 4 || d.point_count > RTCD_CONVEX_MAX_POINTS) {
            why = "point_count is " + std::to_string(d.point_count) + ", not within [4, " +
                  std::to_string(RTCD_CONVEX_MAX_POINTS) + "] (or points is NULL)";
            return nullptr;
        }
        for (size_t i = 0; i < 3 * static_cast<size_t>(d.point_count); ++i)
            if (!std::isfinite(d.points[i])) {
                why = "hull point " + std::to_string(i / 3) + " is not finite";
                return nullptr;
            }
        break;
    default: why = "unknown kind " + std::to_string(kind); return nullptr;
    }
    if (!ok || !convex_margin_ok(d, kind, why)) return nullptr;
    switch (kind) {
    case RTCD_CONVEX_BOX: return new btBoxShape(btVector3(d.half_extents[0], d.half_extents[1], d.half_extents[2]));
    case RTCD_CONVEX_SPHERE: return new btSphereShape(d.radius);
    case RTCD_CONVEX_CAPSULE: return new btCapsuleShapeZ(d.radius, 2.0f * d.half_height);
    case RTCD_CONVEX_CYLINDER: return new btCylinderShapeZ(btVector3(d.radius, d.radius, d.half_height));
    case RTCD_CONVEX_CONE: return new btConeShapeZ(d.radius, 2.0f * d.half_height);
    default: break;
    }
    s->points.assign(d.points, d.points + 3 * static_cast<size_t>(d.point_count));
    btConvexHullShape* hull = new btConvexHullShape(s->points.data(), static_cast<int>(d.point_count), 3 * sizeof(float));
    hull->optimizeConvexHull();
    return hull;
}

// The whole body (Bullet's box of it, margin included) within the range of
// validity: at most RTCD_MESH_MAX_EXTENT along its longest axis, and its
// thinnest axis at least 1 / RTCD_CONVEX_MAX_ASPECT of that (thinner, the
// tessellation's rings make slivers); else *why.
static void check_convex_extent(const btConvexShape* shape, std::string& why)
{
    btVector3 lo, hi;
    shape->getAabb(btTransform::getIdentity(), lo, hi);
    double e[3] = {double(hi.x()) - lo.x(), double(hi.y()) - lo.y(), double(hi.z()) - lo.z()};
    double longest = std::max(e[0], std::max(e[1], e[2])), thinnest = std::min(e[0], std::min(e[1], e[2]));
    char line[200];
    if (!(longest <= RTCD_MESH_MAX_EXTENT))
        std::snprintf(line, sizeof line, "the shape is %g m long with its margin, above %g m (RTCD_MESH_MAX_EXTENT)",
                      longest, double(RTCD_MESH_MAX_EXTENT));
    else if (!(longest <= double(RTCD_CONVEX_MAX_ASPECT) * thinnest))
        std::snprintf(line, sizeof line, "the shape is %g m long and %g m thin, above %g times its thinnest "
                      "(RTCD_CONVEX_MAX_ASPECT)", longest, thinnest, double(RTCD_CONVEX_MAX_ASPECT));
    else if (!(longest >= RTCD_MESH_MIN_EXTENT))
        std::snprintf(line, sizeof line, "the shape is %g m long with its margin, below %g m (RTCD_MESH_MIN_EXTENT)",
                      longest, double(RTCD_MESH_MIN_EXTENT));
    else
        return;
    why = line;
}

rtcd_error rtcd_shape_create_convex(rtcd_world* w, const rtcd_convex_def* def, rtcd_shape** out)
{
    if (out) *out = nullptr;
    if (!w || !def || !out) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create_convex: NULL argument");
    rtcd_shape* s = new (std::nothrow) rtcd_shape();
    if (!s) return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_shape_create_convex: out of memory");
    s->refcount = 1;
    if (!register_shape(w, s)) return fail(RTCD_ERROR_OUT_OF_MEMORY, "out of memory for a new shape");
    s->frame = rtcd_transform_identity();
    std::string why;
    try {
        btConvexShape* shape = convex_shape(*def, s, why);
        if (shape) {
            s->bt_shape = shape; // freed with s from here on
            if (def->margin >= 0.0f && shape->getShapeType() != SPHERE_SHAPE_PROXYTYPE) shape->setMargin(def->margin);
            check_convex_extent(shape, why);
        }
        if (!why.empty()) {
            shape_free(s);
            return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create_convex: " + why);
        }
        btVector3 inertia;
        shape->calculateLocalInertia(1, inertia);
        s->unit_inertia = inertia;
        // The collision surface as a mesh: the penetration measure's ruler,
        // finer than the narrow phase's (plugin_meshes.cpp) so that its
        // facets' shortfall shows up as penetration rather than hides it.
        std::vector<float> v;
        std::vector<uint32_t> idx;
        if (!rtcdTessellateConvex(shape, 48, v, idx, why)) {
            shape_free(s);
            return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_shape_create_convex: " + why);
        }
        rtcd_mesh_def md = rtcd_default_mesh_def();
        md.vertices = v.data();
        md.vertex_count = static_cast<uint32_t>(v.size() / 3);
        md.indices = idx.data();
        md.triangle_count = static_cast<uint32_t>(idx.size() / 3);
        md.name = "convex shape";
        rtcd_error err = rtcd_mesh_create(&md, &s->body_mesh);
        if (err != RTCD_OK) {
            shape_free(s);
            return err;
        }
    } catch (const std::bad_alloc&) {
        shape_free(s);
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_shape_create_convex: out of memory");
    }
    *out = s;
    return RTCD_OK;
}

void rtcd_shape_retain(rtcd_shape* s)
{
    if (s) s->refcount++;
}

void rtcd_shape_release(rtcd_shape* s)
{
    if (s && --s->refcount == 0) shape_free(s);
}

void rtcd_shape_center_of_mass(const rtcd_shape* s, float com[3])
{
    if (!com) return; // nothing to write to
    for (int k = 0; k < 3; ++k) com[k] = s ? s->com[k] : 0.0f;
}

rtcd_error rtcd_shape_set_vertices(rtcd_shape* s, const float* vertices, size_t stride)
{
    static const char* fn = "rtcd_shape_set_vertices";
    if (!s || !vertices) return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": NULL argument");
    if (!s->body_mesh || !s->pieces.empty() || !s->mesh_interface || !rtcdIsGImpactMesh(s->bt_shape))
        return fail(RTCD_ERROR_UNSUPPORTED, std::string(fn) + ": only single-mesh shapes of the rtcd and GImpact "
                                                              "narrow phases deform (not compounds, convex shapes "
                                                              "or the hull mode)");
    if (stride == 0) stride = 3 * sizeof(float);
    if (stride < 3 * sizeof(float))
        return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": stride " + std::to_string(stride) +
                                                     " is below 12 bytes");
    // Into the body frame: b = R^T (m - com), R and com the shape's frame.
    const rtcd_transform& f = s->frame;
    size_t n = s->vertices.size() / 3;
    std::vector<float> body(3 * n);
    for (size_t i = 0; i < n; ++i) {
        const float* m = reinterpret_cast<const float*>(reinterpret_cast<const char*>(vertices) + stride * i);
        float d[3] = {m[0] - f.translation[0], m[1] - f.translation[1], m[2] - f.translation[2]};
        for (int k = 0; k < 3; ++k)
            body[3 * i + k] = f.rotation[k] * d[0] + f.rotation[3 + k] * d[1] + f.rotation[6 + k] * d[2];
    }
    // What Bullet needs, finite and in range, checked now; the body mesh
    // takes the vertices with the next step's updates (rtcd's narrow
    // phase: all of the step's at once, shape_update_due) or when asked for
    // (rtcd_shape_current_body_mesh), with the mesh's own checks then.
    for (size_t i = 0; i < body.size(); ++i)
        if (!(std::fabs(body[i]) <= RTCD_MESH_MAX_COORDINATE))
            return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": vertex " + std::to_string(i / 3) +
                                                         " is not finite or beyond the range of validity");
    s->body_stale = true;
    // Bullet's copy (GImpact collides with it, the broadphase boxes it).
    std::copy(body.begin(), body.end(), s->vertices.begin());
    btGImpactMeshShape* g = static_cast<btGImpactMeshShape*>(s->bt_shape);
    g->postUpdate();
    rtcd_world* w = s->world; // NULL once the world is gone
    // GImpact collides with its own box tree: refitted now. rtcd's narrow
    // phase gives Bullet the new box from its own update instead.
    if (!w || !w->rtcd_dispatcher) g->updateBound();
    for (size_t i = 0; w && i < w->bodies.size(); ++i)
        if (w->body_shapes[i] == s) w->bodies[i]->activate(true);
    return RTCD_OK;
}

// GImpact's local box, protected in btGImpactShapeInterface: set from rtcd's
// mesh when rtcd's narrow phase collides (the box Bullet's broadphase
// reads); the update flag postUpdate() raised stays, so GImpact refits its
// own box tree should anything of Bullet's ask for it (updateBound()).
struct rtcdGImpactBox : public btGImpactShapeInterface {
    static void set(btGImpactShapeInterface* g, const btVector3& lo, const btVector3& hi)
    {
        btAABB& box = g->*(&rtcdGImpactBox::m_localAABB);
        box.m_min = lo;
        box.m_max = hi;
    }
};

// The end of a shape's update with rtcd's narrow phase (err: the body
// mesh's): the broadphase box from the mesh (GImpact's rule: the
// triangles' box grown by the margin); a refused shape keeps its last one
// (Bullet's copy too), logged; out of memory: tried again next step.
static void shape_update_done(rtcd_shape* s, rtcd_error err)
{
    if (err == RTCD_ERROR_OUT_OF_MEMORY) {
        rtcd_log_message(RTCD_LOG_WARNING, "rtcd_shape_set_vertices: no memory for the update; tried again next step");
        return;
    }
    if (err != RTCD_OK) {
        std::string line = std::string("rtcd_shape_set_vertices: ") + rtcd_mesh_name(s->body_mesh) +
                           " refused its new vertices (" + rtcd_error_name(err) + "); it keeps its last shape";
        rtcd_log_message(RTCD_LOG_WARNING, line.c_str());
        const float* v = rtcd_mesh_vertices(s->body_mesh);
        std::copy(v, v + s->vertices.size(), s->vertices.begin());
    }
    s->body_stale = false;
    float lo[3], hi[3];
    rtcd_mesh_bounds(s->body_mesh, lo, hi);
    btScalar margin = s->bt_shape->getMargin();
    btVector3 grow(margin, margin, margin);
    rtcdGImpactBox::set(static_cast<btGImpactShapeInterface*>(s->bt_shape), btVector3(lo[0], lo[1], lo[2]) - grow,
                        btVector3(hi[0], hi[1], hi[2]) + grow);
}

// rtcd's narrow phase: the shapes given new vertices since the last step,
// updated together on the narrow phase's workers
// (rtcd_mesh_update_vertices_many) before Bullet boxes and collides them.
static void shape_update_due(rtcd_world* w)
{
    std::vector<rtcd_shape*> due;
    for (rtcd_shape* s : w->shapes)
        if (s->body_stale && s->body_mesh && s->pieces.empty()) due.push_back(s);
    if (due.empty()) return;
    std::vector<rtcd_mesh*> meshes(due.size());
    std::vector<const float*> vertices(due.size());
    for (size_t k = 0; k < due.size(); ++k) meshes[k] = due[k]->body_mesh, vertices[k] = due[k]->vertices.data();
    rtcd_task_system tasks = {};
    rtcd_batch* batch = w->rtcd_dispatcher->narrowphaseBatch();
    if (batch) {
        tasks.enqueue = [](rtcd_task_fn* task, uint32_t count, uint32_t min_range, void* ctx, void* user) -> void* {
            rtcd_batch_parallel_for(static_cast<rtcd_batch*>(user), count, min_range, task, ctx);
            return nullptr; // all of it ran: no handle, finish is not called
        };
        tasks.finish = [](void*, void*) {};
        tasks.user_context = batch;
        tasks.worker_count = rtcd_batch_worker_count(batch);
    }
    // A call that finds no memory for its own list leaves the codes as they
    // are: out of memory for every shape then (tried again next step).
    std::vector<rtcd_error> errors(due.size(), RTCD_ERROR_OUT_OF_MEMORY);
    rtcd_mesh_update_vertices_many(meshes.data(), vertices.data(), nullptr, static_cast<uint32_t>(due.size()),
                                   batch ? &tasks : nullptr, errors.data());
    for (size_t k = 0; k < due.size(); ++k) shape_update_done(due[k], errors[k]);
}

rtcd_transform rtcd_shape_frame(const rtcd_shape* s) { return s ? s->frame : rtcd_transform_identity(); }

const rtcd_mesh* rtcd_shape_current_body_mesh(const rtcd_shape* cs)
{
    if (!cs) return nullptr;
    rtcd_shape* s = const_cast<rtcd_shape*>(cs); // the cache of a const view
    if (s->body_stale) {
        rtcd_error err = rtcd_mesh_update_vertices(s->body_mesh, s->vertices.data(), 0);
        if (s->world && s->world->rtcd_dispatcher) shape_update_done(s, err);
        else if (err == RTCD_OK) s->body_stale = false;
        else rtcd_log_message(RTCD_LOG_WARNING, rtcd_last_error_message()); // the last shape rtcd could take
    }
    return s->body_mesh;
}

const rtcd_mesh* rtcd_shape_body_mesh(const rtcd_shape* s) { return rtcd_shape_current_body_mesh(s); }

rtcd_error rtcd_world_add_plane(rtcd_world* w, const float normal[3], float offset)
{
    if (!w || !normal) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_add_plane: NULL argument");
    btVector3 n(normal[0], normal[1], normal[2]);
    if (!(n.length() > 0) || !std::isfinite(n.length()))
        return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_add_plane: normal must be finite and non-zero");
    rtcd_error err = check_range("rtcd_world_add_plane", "offset", offset, -k_max_coordinate, k_max_coordinate);
    if (err != RTCD_OK) return err;
    try {
        btStaticPlaneShape* shape = new btStaticPlaneShape(n.normalized(), offset);
        btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, shape);
        info.m_friction = w->def.friction;
        info.m_restitution = w->def.restitution;
        info.m_rollingFriction = info.m_spinningFriction = w->def.rolling_friction;
        btRigidBody* body = new btRigidBody(info);
        w->plane_shapes.push_back(shape);
        w->planes.push_back(body);
        w->dynamics->addRigidBody(body);
    } catch (const std::bad_alloc&) {
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_add_plane: out of memory");
    }
    return RTCD_OK;
}

static btTransform to_bullet(const rtcd_transform& t)
{
    btMatrix3x3 r(t.rotation[0], t.rotation[1], t.rotation[2], t.rotation[3], t.rotation[4], t.rotation[5],
                  t.rotation[6], t.rotation[7], t.rotation[8]);
    return btTransform(r, btVector3(t.translation[0], t.translation[1], t.translation[2]));
}

rtcd_error rtcd_world_add_static_mesh(rtcd_world* w, rtcd_mesh* mesh, const rtcd_transform* pose)
{
    if (!w || !mesh || !pose) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_add_static_mesh: NULL argument");
    rtcd_error err = check_pose("rtcd_world_add_static_mesh", pose);
    if (err != RTCD_OK) return err;
    rtcd_static_mesh* m = new (std::nothrow) rtcd_static_mesh();
    if (!m) return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_add_static_mesh: out of memory");
    try {
        const float* v = rtcd_mesh_vertices(mesh);
        const uint32_t* idx = rtcd_mesh_indices(mesh);
        uint32_t nv = rtcd_mesh_vertex_count(mesh), nt = rtcd_mesh_triangle_count(mesh);
        m->vertices.assign(v, v + 3 * static_cast<size_t>(nv));
        m->indices.assign(idx, idx + 3 * static_cast<size_t>(nt));
        m->mesh_interface = new btTriangleIndexVertexArray(static_cast<int>(nt), m->indices.data(), 3 * sizeof(int),
                                                           static_cast<int>(nv), m->vertices.data(), 3 * sizeof(float));
        m->shape = new btBvhTriangleMeshShape(m->mesh_interface, true);
        btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, m->shape);
        info.m_startWorldTransform = to_bullet(*pose);
        info.m_friction = w->def.friction;
        info.m_restitution = w->def.restitution;
        info.m_rollingFriction = info.m_spinningFriction = w->def.rolling_friction;
        m->body = new btRigidBody(info);
        m->body->setUserIndex(-2 - static_cast<int>(w->static_meshes.size()));
        rtcd_mesh_retain(mesh);
        m->mesh = mesh;
        // rtcd collides with the user's mesh itself: the repair a Bullet
        // triangle soup needs (welding, sliver collapses) would give rtcd
        // another surface than Bullet's, e.g. a steep spike's flanks gone.
        if (w->rtcd_dispatcher) w->rtcd_dispatcher->useMesh(m->shape, mesh);
        w->static_meshes.push_back(m);
        w->dynamics->addRigidBody(m->body);
    } catch (const std::bad_alloc&) {
        delete m->body;
        delete m->shape;
        delete m->mesh_interface;
        if (m->mesh) {
            w->static_meshes.pop_back();
            rtcd_mesh_release(m->mesh);
        }
        delete m;
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_add_static_mesh: out of memory");
    }
    return RTCD_OK;
}

rtcd_error rtcd_world_add_body(rtcd_world* w, rtcd_shape* s, float mass, const rtcd_transform* pose,
                               uint32_t* body_index)
{
    if (!w || !s || !pose) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_add_body: NULL argument");
    if (s->world != w) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_add_body: shape belongs to another world");
    rtcd_error err = check_range("rtcd_world_add_body", "mass", mass, k_min_mass, k_max_mass);
    if (err == RTCD_OK) err = check_pose("rtcd_world_add_body", pose);
    if (err != RTCD_OK) return err;
    try {
        btDefaultMotionState* motion = new btDefaultMotionState(to_bullet(*pose));
        btRigidBody::btRigidBodyConstructionInfo info(mass, motion, s->bt_shape, s->unit_inertia * mass);
        info.m_friction = w->def.friction;
        info.m_restitution = w->def.restitution;
        info.m_linearDamping = w->def.linear_damping;
        info.m_angularDamping = w->def.angular_damping;
        info.m_rollingFriction = info.m_spinningFriction = w->def.rolling_friction;
        btRigidBody* body = new btRigidBody(info);
        body->setUserIndex(static_cast<int>(w->bodies.size())); // the measure maps objects back to shapes
        w->dynamics->addRigidBody(body);
        w->bodies.push_back(body);
        w->body_shapes.push_back(s);
        s->refcount++;
    } catch (const std::bad_alloc&) {
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_add_body: out of memory");
    }
    if (body_index) *body_index = static_cast<uint32_t>(w->bodies.size() - 1);
    return RTCD_OK;
}

uint32_t rtcd_world_body_count(const rtcd_world* w) { return w ? static_cast<uint32_t>(w->bodies.size()) : 0; }

static rtcd_error check_body(const rtcd_world* w, uint32_t body, const char* fn)
{
    if (!w) return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": NULL world");
    if (body >= w->bodies.size())
        return fail(RTCD_ERROR_INVALID_ARGUMENT, std::string(fn) + ": body " + std::to_string(body) +
                                                     " out of range (" + std::to_string(w->bodies.size()) + " bodies)");
    return RTCD_OK;
}

rtcd_error rtcd_world_set_velocity(rtcd_world* w, uint32_t body, const float linear[3], const float angular[3])
{
    rtcd_error err = check_body(w, body, "rtcd_world_set_velocity");
    if (err != RTCD_OK) return err;
    for (int k = 0; k < 3 && err == RTCD_OK; ++k) {
        if (linear) err = check_range("rtcd_world_set_velocity", "linear velocity", linear[k], -k_max_speed, k_max_speed);
        if (angular && err == RTCD_OK)
            err = check_range("rtcd_world_set_velocity", "angular velocity", angular[k], -k_max_speed, k_max_speed);
    }
    if (err != RTCD_OK) return err;
    btRigidBody* b = w->bodies[body];
    if (linear) b->setLinearVelocity(btVector3(linear[0], linear[1], linear[2]));
    if (angular) b->setAngularVelocity(btVector3(angular[0], angular[1], angular[2]));
    b->activate(true);
    return RTCD_OK;
}

rtcd_error rtcd_world_step(rtcd_world* w)
{
    if (!w) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_step: NULL world");
    auto start = std::chrono::steady_clock::now();
    try {
        w->stepped = true;
        w->solver->ms = 0;
        if (w->rtcd_dispatcher) shape_update_due(w);
        w->dynamics->stepSimulation(w->def.time_step, 1, w->def.time_step);
    } catch (const std::bad_alloc&) {
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_step: out of memory");
    }
    double step_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (w->rtcd_dispatcher) {
        w->stats = w->rtcd_dispatcher->lastStepStats();
    } else {
        w->stats = rtcd_step_stats();
        w->stats.broadphase_pairs = w->timed_dispatcher->pairs;
        w->stats.narrowphase_ms = w->timed_dispatcher->ms;
    }
    w->stats.step_ms = step_ms;
    w->stats.solver_ms = w->solver->ms;
    uint32_t contacts = 0;
    for (int i = 0; i < w->dispatcher->getNumManifolds(); ++i)
        contacts += static_cast<uint32_t>(w->dispatcher->getManifoldByIndexInternal(i)->getNumContacts());
    w->stats.contacts = contacts;
    w->stats.manifolds_total = static_cast<uint32_t>(w->dispatcher->getNumManifolds());
    // The step ran (pairs the failure touched kept their contacts); the
    // world is as usable as before once memory is back.
    if (w->stats.out_of_memory)
        return fail(RTCD_ERROR_OUT_OF_MEMORY, "rtcd_world_step: out of memory in the narrow phase (" +
                                                  std::to_string(w->stats.out_of_memory) +
                                                  " time(s)); the pairs concerned kept their previous contacts");
    return RTCD_OK;
}

rtcd_error rtcd_world_get_pose(const rtcd_world* w, uint32_t body, rtcd_transform* pose)
{
    rtcd_error err = check_body(w, body, "rtcd_world_get_pose");
    if (err != RTCD_OK) return err;
    if (!pose) return fail(RTCD_ERROR_INVALID_ARGUMENT, "rtcd_world_get_pose: NULL pose");
    *pose = rtcdFromBullet(w->bodies[body]->getWorldTransform());
    return RTCD_OK;
}

rtcd_error rtcd_world_get_velocity(const rtcd_world* w, uint32_t body, float linear[3], float angular[3])
{
    rtcd_error err = check_body(w, body, "rtcd_world_get_velocity");
    if (err != RTCD_OK) return err;
    const btRigidBody* b = w->bodies[body];
    for (int k = 0; k < 3; ++k) {
        if (linear) linear[k] = static_cast<float>(b->getLinearVelocity()[k]);
        if (angular) angular[k] = static_cast<float>(b->getAngularVelocity()[k]);
    }
    return RTCD_OK;
}

rtcd_step_stats rtcd_world_last_step_stats(const rtcd_world* w) { return w ? w->stats : rtcd_step_stats(); }

static rtcd_batch* world_batch(const rtcd_world* w)
{
    return w && w->rtcd_dispatcher ? w->rtcd_dispatcher->narrowphaseBatch() : nullptr;
}

rtcd_backend rtcd_world_backend(const rtcd_world* w)
{
    return world_batch(w) ? rtcd_batch_backend(world_batch(w)) : RTCD_BACKEND_CPU;
}

uint32_t rtcd_world_device_count(const rtcd_world* w) { return rtcd_batch_device_count(world_batch(w)); }
uint32_t rtcd_world_thread_count(const rtcd_world* w) { return rtcd_batch_thread_count(world_batch(w)); }

const char* rtcd_world_device_name(const rtcd_world* w, uint32_t device)
{
    return rtcd_batch_device_name(world_batch(w), device);
}

} // extern "C"
