// Read-only views of a world for viewers (the demos' --view and --frames):
// which shape a body has, and the contact points Bullet holds after a step.
// Nothing here changes the world.
#include "world_internal.h"

const rtcd_shape* rtcd_world_body_shape(const rtcd_world* w, uint32_t body)
{
    if (!w || body >= w->body_shapes.size()) return nullptr;
    return w->body_shapes[body];
}

// The body index of a collision object: static meshes have -2 - k and the
// planes Bullet's default -1; both are reported as -1.
static int32_t body_index(const btCollisionObject* o)
{
    int idx = o ? o->getUserIndex() : -1;
    return idx >= 0 ? static_cast<int32_t>(idx) : -1;
}

uint32_t rtcd_world_get_contacts(const rtcd_world* w, rtcd_world_contact* out, uint32_t capacity)
{
    if (!w || !w->dispatcher) return 0;
    uint32_t n = 0;
    for (int i = 0; i < w->dispatcher->getNumManifolds(); ++i) {
        const btPersistentManifold* m = w->dispatcher->getManifoldByIndexInternal(i);
        for (int k = 0; k < m->getNumContacts(); ++k, ++n) {
            if (!out || n >= capacity) continue; // keep counting: the caller learns the size it needs
            const btManifoldPoint& p = m->getContactPoint(k);
            rtcd_world_contact* c = &out[n];
            for (int a = 0; a < 3; ++a) {
                c->position[a] = static_cast<float>(p.getPositionWorldOnB()[a]);
                c->normal[a] = static_cast<float>(p.m_normalWorldOnB[a]);
            }
            c->distance = static_cast<float>(p.getDistance());
            c->body_a = body_index(m->getBody0());
            c->body_b = body_index(m->getBody1());
        }
    }
    return n;
}
