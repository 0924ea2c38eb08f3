// Velocities of every kind of moving collision object: speculative
// contacts, motion bounds and back poses need them, and Bullet keeps them
// only in btRigidBody (a multibody link's are its multibody's, a kinematic
// or plain object's are nowhere).
#include "plugin_internal.h"

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <LinearMath/btTransformUtil.h>

#include <vector>

// A link's (or the base's, link -1) velocities in the world at its frame's
// origin, the collider's origin: Bullet's own tree walk from the base's
// velocities and the joints' (btMultiBody::compTreeLinkVelocities).
static void linkVelocity(const btMultiBody* mb, int link, btVector3& lin, btVector3& ang)
{
    if (link < 0 || link >= mb->getNumLinks()) {
        lin = mb->getBaseVel();
        ang = mb->getBaseOmega();
        return;
    }
    // Per thread: records are filled on the batch's workers.
    thread_local std::vector<btVector3> omega, vel;
    size_t n = static_cast<size_t>(mb->getNumLinks()) + 1;
    if (omega.size() < n) {
        omega.resize(n);
        vel.resize(n);
    }
    mb->compTreeLinkVelocities(omega.data(), vel.data());
    ang = mb->localDirToWorld(link, omega[static_cast<size_t>(link) + 1]);
    lin = mb->localDirToWorld(link, vel[static_cast<size_t>(link) + 1]);
}

void rtcdObjectVelocity(const btCollisionObject* obj, const rtcdBodyRecord* record, uint32_t step, btVector3& lin,
                        btVector3& ang)
{
    lin.setZero();
    ang.setZero();
    if (const btRigidBody* body = btRigidBody::upcast(obj)) {
        // A dynamic body's own; a kinematic one's as saveKinematicState
        // computed them from its transforms (btDiscreteDynamicsWorld, each
        // step, for awake kinematic bodies: the interpolation transform is
        // then the world transform). Otherwise (a collision world, or a
        // body moved since) Bullet's are stale: the track below.
        bool saved = body->isKinematicObject() && body->getInterpolationWorldTransform() == body->getWorldTransform();
        if (!body->isStaticOrKinematicObject() || saved) {
            lin = body->getLinearVelocity();
            ang = body->getAngularVelocity();
            return;
        }
    } else if (const btMultiBodyLinkCollider* link = btMultiBodyLinkCollider::upcast(obj)) {
        if (link->m_multiBody) {
            linkVelocity(link->m_multiBody, link->m_link, lin, ang);
            return;
        }
    }
    if (record && record->track_obj == obj && record->track_step == step) {
        lin = record->track_lin;
        ang = record->track_ang;
    }
}

void rtcdTrack(rtcdBodyRecord& r, const btCollisionObject* obj, uint32_t step, btScalar dt)
{
    if (r.track_step == step && r.track_obj == obj) return; // this step's already
    const btTransform& now = obj->getWorldTransform();
    if (r.track_obj == obj && r.track_step + 1 == step && dt > 0) {
        btTransformUtil::calculateVelocity(r.track_pose, now, dt, r.track_lin, r.track_ang);
    } else { // a new track: still until the next step shows a move
        r.track_lin.setZero();
        r.track_ang.setZero();
    }
    r.track_obj = obj;
    r.track_step = step;
    r.track_pose = now;
}
