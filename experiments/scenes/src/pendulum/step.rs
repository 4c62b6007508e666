//! The time stepping: the contact problem of a step and the impulses applied to move the
//! chain.

use contactlab_core::{LocalProblem, Matrix};
use faer::Mat;
use nalgebra::DVector;

use super::contacts::normal_shift;
use super::scene::Pendulum;
use crate::error::SceneError;
use crate::scene::ContactStep;

impl Pendulum {
    /// The Cholesky factor of `M(q)`.
    fn cholesky(&self) -> Result<nalgebra::Cholesky<f64, nalgebra::Dyn>, SceneError> {
        self.mass_matrix()
            .cholesky()
            .ok_or(SceneError::NonFinite("mass matrix (no Cholesky factor)"))
    }

    /// The free velocity `c = q' - h M^-1 C(q, q')`.
    pub fn free_velocity(&self) -> Result<DVector<f64>, SceneError> {
        let chol = self.cholesky()?;
        Ok(&self.qdot - self.config.h * chol.solve(&self.bias_forces()))
    }

    /// This step's contact problem: `W = J M^-1 J'` (as `Y'Y`, symmetric PSD), `q = J c`
    /// plus the normal bias.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let contacts = self.contacts();
        let nc = contacts.len();
        let chol = self.cholesky()?;
        let free = &self.qdot - self.config.h * chol.solve(&self.bias_forces());
        let j = self.stacked_jacobian(&contacts);
        let y = chol
            .l()
            .solve_lower_triangular(&j.transpose())
            .ok_or(SceneError::NonFinite("mass matrix (singular factor)"))?;
        let yy = y.transpose() * &y;
        let w = Mat::<f64>::from_fn(
            3 * nc,
            3 * nc,
            |r, c| if r >= c { yy[(r, c)] } else { yy[(c, r)] },
        );
        let mut q: Vec<f64> = (&j * &free).iter().copied().collect();
        let v_minus = &j * &self.qdot;
        for (ci, c) in contacts.iter().enumerate() {
            q[3 * ci] += normal_shift(
                c.gap,
                v_minus[3 * ci],
                q[3 * ci],
                self.config.restitution_at(v_minus[3 * ci]),
                self.config.h,
            );
        }
        let problem = LocalProblem::new(Matrix::Dense(w), q, vec![self.config.mu; nc])?;
        Ok(ContactStep {
            contacts,
            problem: problem.into(),
            free: free.iter().copied().collect(),
        })
    }

    /// Applies the impulses `r` (normal first, the step's frames) and moves the chain:
    /// `q' = c + M^-1 J' r`, `q += h q'`.
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let nc = step.contacts.len();
        let n = self.n();
        step.check_impulses(r, Some(n))?;
        let mut qdot = DVector::from_column_slice(&step.free);
        if nc > 0 {
            let j = self.stacked_jacobian(&step.contacts);
            let p = j.transpose() * DVector::from_column_slice(r);
            qdot += self.cholesky()?.solve(&p);
        }
        self.step_to(qdot, nc)
    }

    /// A step without contacts (gravity and the chain's own dynamics only).
    pub fn advance_free(&mut self) -> Result<(), SceneError> {
        let qdot = self.free_velocity()?;
        self.step_to(qdot, 0)
    }

    fn step_to(&mut self, qdot: DVector<f64>, contacts: usize) -> Result<(), SceneError> {
        if qdot.iter().any(|v| !v.is_finite()) {
            return Err(SceneError::NonFinite("hinge rates"));
        }
        self.q += self.config.h * &qdot;
        self.qdot = qdot;
        self.time += self.config.h;
        self.last_contacts = contacts;
        Ok(())
    }
}
