//! Dynamics: the recursive Newton-Euler algorithm (Featherstone sec. 5.3, Table 5.1), the
//! composite rigid body algorithm (sec. 6.2, Table 6.2), forward dynamics through `M` and `h`
//! (sec. 6.1, eq. 6.1-6.2), energy and momentum (sec. 2.13, eq. 2.66-2.67 and ch. 6 exercises).

use crate::model::Model;
use crate::spatial::{Force, Motion, SpatialInertia};
use nalgebra::{DMatrix, DVector, Vector3};
use thiserror::Error;

/// Why forward dynamics failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DynamicsError {
    /// `M(q)` could not be factored (it is positive definite for any valid model; this means
    /// non-finite inputs or extreme conditioning).
    #[error("the mass matrix is not positive definite (non-finite state or extreme conditioning)")]
    MassMatrixNotPositiveDefinite,
}

impl Model {
    /// Inverse dynamics by the recursive Newton-Euler algorithm (Featherstone Table 5.1):
    /// the generalized forces `tau = M(q) a + h(q, v)` that produce accelerations `a`, with
    /// gravity included by accelerating the base by `-g` (sec. 5.3). All in body coordinates:
    /// `v_i = i_X_l v_l + S_i qd_i`, `a_i = i_X_l a_l + S_i qdd_i + v_i x S_i qd_i`,
    /// `f_i = I_i a_i + v_i x* I_i v_i`, then `tau_i = S_i' f_i` and `f_l += l_X_i^* f_i` from
    /// the leaves in.
    ///
    /// # Panics
    /// If `q`, `v` or `a` has the wrong length.
    pub fn rnea(&self, q: &DVector<f64>, v: &DVector<f64>, a: &DVector<f64>) -> DVector<f64> {
        self.rnea_with_gravity(q, v, a, &self.gravity)
    }

    /// [`Model::rnea`] under the given gravity instead of the model's.
    pub fn rnea_with_gravity(
        &self,
        q: &DVector<f64>,
        v: &DVector<f64>,
        a: &DVector<f64>,
        gravity: &Vector3<f64>,
    ) -> DVector<f64> {
        assert_eq!(v.len(), self.nv(), "v has the wrong length");
        assert_eq!(a.len(), self.nv(), "a has the wrong length");
        let parent = self.parent_poses(q);
        let n = self.num_bodies();
        let a_world = Motion::new(Vector3::zeros(), -gravity);
        let mut vel: Vec<Motion> = Vec::with_capacity(n);
        let mut acc: Vec<Motion> = Vec::with_capacity(n);
        let mut f: Vec<Force> = Vec::with_capacity(n);
        for (i, b) in self.bodies().iter().enumerate() {
            let r = b.v_offset..b.v_offset + b.joint.nv();
            let vj = b.joint.velocity(&v.as_slice()[r.clone()]);
            let aj = b.joint.velocity(&a.as_slice()[r]);
            let (vp, ap) = match b.parent {
                Some(p) => (vel[p], acc[p]),
                None => (Motion::zero(), a_world),
            };
            let vi = parent[i].inv_act_motion(&vp) + vj;
            // Joint subspaces are constant in body coordinates, so c_J = 0 (Table 4.1).
            let ai = parent[i].inv_act_motion(&ap) + aj + vi.cross_motion(&vj);
            f.push(b.inertia.mul_motion(&ai) + vi.cross_force(&b.inertia.mul_motion(&vi)));
            vel.push(vi);
            acc.push(ai);
        }
        let mut tau = DVector::zeros(self.nv());
        for i in (0..n).rev() {
            let b = &self.bodies()[i];
            let nv = b.joint.nv();
            b.joint
                .project_force(&f[i], &mut tau.as_mut_slice()[b.v_offset..b.v_offset + nv]);
            if let Some(p) = b.parent {
                let fp = parent[i].act_force(&f[i]);
                f[p] += fp;
            }
        }
        tau
    }

    /// The bias forces `h(q, v)` (Coriolis, centrifugal and gravity): RNEA with `a = 0`.
    pub fn bias_forces(&self, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
        self.rnea(q, v, &DVector::zeros(self.nv()))
    }

    /// The gravity forces `g(q)`: RNEA with `v = a = 0`.
    pub fn gravity_forces(&self, q: &DVector<f64>) -> DVector<f64> {
        let z = DVector::zeros(self.nv());
        self.rnea(q, &z, &z)
    }

    /// The joint-space inertia matrix `M(q)` by the composite rigid body algorithm
    /// (Featherstone Table 6.2): composite inertias `I^c_l += l_X_i^* I^c_i i_X_l` from the
    /// leaves in, then `F = I^c_i S_i`, `M_ii = S_i' F`, and `M_ij = S_j' (j_X_i^* F)` up the
    /// path to the world. The full symmetric matrix is filled.
    pub fn mass_matrix(&self, q: &DVector<f64>) -> DMatrix<f64> {
        let parent = self.parent_poses(q);
        let bodies = self.bodies();
        let mut composite: Vec<SpatialInertia> = bodies.iter().map(|b| b.inertia).collect();
        for i in (0..bodies.len()).rev() {
            if let Some(p) = bodies[i].parent {
                let c = composite[i].transformed(&parent[i]);
                composite[p] += c;
            }
        }
        let mut m = DMatrix::zeros(self.nv(), self.nv());
        for (i, b) in bodies.iter().enumerate() {
            for ci in 0..b.joint.nv() {
                let row = b.v_offset + ci;
                let mut force = composite[i].mul_motion(&b.joint.motion_subspace(ci));
                for cj in 0..b.joint.nv() {
                    m[(row, b.v_offset + cj)] = b.joint.motion_subspace(cj).dot(&force);
                }
                let mut j = i;
                while let Some(p) = bodies[j].parent {
                    force = parent[j].act_force(&force);
                    j = p;
                    let bj = &bodies[j];
                    for cj in 0..bj.joint.nv() {
                        let x = bj.joint.motion_subspace(cj).dot(&force);
                        m[(row, bj.v_offset + cj)] = x;
                        m[(bj.v_offset + cj, row)] = x;
                    }
                }
            }
        }
        m
    }

    /// Forward dynamics `a = M(q)^-1 (tau - h(q, v))` with a dense Cholesky factorisation
    /// (Featherstone sec. 6.1; fine for the small trees here, nv ~ 20).
    pub fn forward_dynamics(
        &self,
        q: &DVector<f64>,
        v: &DVector<f64>,
        tau: &DVector<f64>,
    ) -> Result<DVector<f64>, DynamicsError> {
        assert_eq!(tau.len(), self.nv(), "tau has the wrong length");
        let m = self.mass_matrix(q);
        let rhs = tau - self.bias_forces(q, v);
        let chol = m
            .cholesky()
            .ok_or(DynamicsError::MassMatrixNotPositiveDefinite)?;
        let a = chol.solve(&rhs);
        if a.iter().all(|x| x.is_finite()) {
            Ok(a)
        } else {
            Err(DynamicsError::MassMatrixNotPositiveDefinite)
        }
    }

    /// One semi-implicit (symplectic) Euler step under `tau` without contact:
    /// `v' = v + dt a(q, v)`, `q' = q ⊕ v' dt` ([`Model::integrate`]).
    pub fn step(
        &self,
        q: &DVector<f64>,
        v: &DVector<f64>,
        tau: &DVector<f64>,
        dt: f64,
    ) -> Result<(DVector<f64>, DVector<f64>), DynamicsError> {
        let a = self.forward_dynamics(q, v, tau)?;
        let v_next = v + a * dt;
        let q_next = self.integrate(q, &v_next, dt);
        Ok((q_next, v_next))
    }

    /// Kinetic energy `sum_i 1/2 v_i . I_i v_i` over the bodies (equal to `1/2 v' M v`).
    pub fn kinetic_energy(&self, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
        let k = self.forward_kinematics(q, v);
        self.bodies()
            .iter()
            .zip(&k.velocities)
            .map(|(b, vi)| 0.5 * vi.dot(&b.inertia.mul_motion(vi)))
            .sum()
    }

    /// Potential energy of gravity, `-sum_i m_i g . c_i` (zero at the world origin).
    pub fn potential_energy(&self, q: &DVector<f64>) -> f64 {
        -self.total_mass() * self.gravity.dot(&self.center_of_mass(q))
    }

    /// Total mechanical energy, kinetic plus potential.
    pub fn total_energy(&self, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
        self.kinetic_energy(q, v) + self.potential_energy(q)
    }

    /// The spatial momentum of the whole tree in world coordinates, about the world origin:
    /// `sum_i 0_X_i^* I_i v_i` (angular momentum about the origin, linear momentum).
    pub fn momentum(&self, q: &DVector<f64>, v: &DVector<f64>) -> Force {
        let k = self.forward_kinematics(q, v);
        self.bodies()
            .iter()
            .zip(k.poses.iter().zip(&k.velocities))
            .fold(Force::zero(), |acc, (b, (t, vi))| {
                acc + t.act_force(&b.inertia.mul_motion(vi))
            })
    }
}
