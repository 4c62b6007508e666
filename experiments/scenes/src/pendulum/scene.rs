//! The pendulum: its state, the chain's kinematics and dynamics (the planar closed forms, or
//! the `multibody` tree of the non-planar variant), its energies, and the scene as the runner
//! drives it (module doc of [`crate::pendulum`]).

use std::sync::Arc;

use contactlab_multibody::Model;
use nalgebra::{DMatrix, DVector, Vector3};

use super::chain::chain_model;
use super::config::PendulumConfig;
use crate::error::SceneError;
use crate::scene::{ContactStep, Scene};

/// The twelve-link pendulum: state and time stepping.
#[derive(Debug, Clone)]
pub struct Pendulum {
    /// The parameters. With a `hinge_skew` the chain's tree is built once, by
    /// [`Pendulum::new`]: later changes to the links (`n_links`, `link_length`,
    /// `sphere_radius`, `sphere_mass`, `gravity`, `hinge_skew`) do not reach it; the
    /// environment (pivot, floor, wall, contact law) may change.
    pub config: PendulumConfig,
    /// Hinge angles (relative, rad).
    pub q: DVector<f64>,
    /// Hinge rates (rad/s).
    pub qdot: DVector<f64>,
    /// Simulated time (s).
    pub time: f64,
    /// Contacts in the step just taken.
    pub last_contacts: usize,
    /// The chain's tree when its kinematics and dynamics come from the `multibody` crate
    /// (a non-zero `hinge_skew`); `None` for the planar closed forms.
    pub(super) spatial: Option<Arc<Model>>,
}

impl Pendulum {
    /// The paper's initial state for `config`: a straight chain at `initial_angle`, rotating
    /// rigidly at `initial_rate`; errors when it starts inside the floor or the wall.
    pub fn new(config: &PendulumConfig) -> Result<Pendulum, SceneError> {
        config.validate()?;
        let n = config.n_links;
        let mut q = DVector::zeros(n);
        let mut qdot = DVector::zeros(n);
        q[0] = config.initial_angle;
        qdot[0] = config.initial_rate;
        let spatial = if config.hinge_skew == 0.0 {
            None
        } else {
            Some(Arc::new(chain_model(config)?))
        };
        let p = Pendulum {
            config: config.clone(),
            q,
            qdot,
            time: 0.0,
            last_contacts: 0,
            spatial,
        };
        if let Some(c) = p.contacts().iter().find(|c| c.gap < 0.0) {
            return Err(SceneError::Param {
                key: "initial_angle",
                message: format!(
                    "the initial chain overlaps an obstacle ({:?}, gap {:.3} m); \
                     change initial_angle, pivot_height or wall_x",
                    c.key, c.gap
                ),
            });
        }
        Ok(p)
    }

    /// Number of links.
    pub fn n(&self) -> usize {
        self.config.n_links
    }

    /// The absolute link angles `phi_i = q_0 + .. + q_i` (of the planar chain; with a
    /// `hinge_skew` they are only the sums of the hinge angles).
    pub fn absolute_angles(&self) -> Vec<f64> {
        self.q
            .iter()
            .scan(0.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect()
    }

    /// The absolute link rates `phi_i'`.
    pub fn absolute_rates(&self) -> Vec<f64> {
        self.qdot
            .iter()
            .scan(0.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect()
    }

    /// The pivot `(0, 0, pivot_height)`.
    pub fn pivot(&self) -> Vector3<f64> {
        Vector3::new(0.0, 0.0, self.config.pivot_height)
    }

    /// Whether the chain's kinematics and dynamics come from its `multibody` tree (a non-zero
    /// `hinge_skew`) rather than the planar closed forms.
    pub fn is_spatial(&self) -> bool {
        self.spatial.is_some()
    }

    /// The sphere centre in its link's frame.
    pub(super) fn centre_in_link(&self) -> Vector3<f64> {
        Vector3::new(0.0, 0.0, -self.config.link_length)
    }

    /// The sphere centres `p_i`.
    pub fn sphere_positions(&self) -> Vec<Vector3<f64>> {
        if let Some(model) = &self.spatial {
            let (centre, pivot) = (self.centre_in_link(), self.pivot());
            return model
                .body_poses(&self.q)
                .iter()
                .map(|pose| pivot + pose.transform_point(&centre))
                .collect();
        }
        let l = self.config.link_length;
        let mut p = self.pivot();
        self.absolute_angles()
            .into_iter()
            .map(|phi| {
                p += l * Vector3::new(phi.sin(), 0.0, -phi.cos());
                p
            })
            .collect()
    }

    /// `J_i = dp_i/dq` per sphere: `jac[i][k] = L sum_{j=k}^{i} (cos phi_j, 0, sin phi_j)` for
    /// `k <= i`, zero for `k > i`.
    pub fn sphere_jacobians(&self) -> Vec<Vec<Vector3<f64>>> {
        let n = self.n();
        if let Some(model) = &self.spatial {
            let poses = model.body_poses(&self.q);
            let centre = self.centre_in_link();
            return (0..n)
                .map(|i| {
                    let j = model.point_jacobian_with_poses(&poses, i, &centre);
                    j.column_iter().map(|c| c.into_owned()).collect()
                })
                .collect();
        }
        let l = self.config.link_length;
        let du: Vec<Vector3<f64>> = self
            .absolute_angles()
            .iter()
            .map(|phi| l * Vector3::new(phi.cos(), 0.0, phi.sin()))
            .collect();
        (0..n)
            .map(|i| {
                let mut col = vec![Vector3::zeros(); n];
                let mut acc = Vector3::zeros();
                for k in (0..=i).rev() {
                    acc += du[k];
                    col[k] = acc;
                }
                col
            })
            .collect()
    }

    /// The sphere centres' velocities `J_i q'`.
    pub fn sphere_velocities(&self) -> Vec<Vector3<f64>> {
        self.sphere_jacobians()
            .iter()
            .map(|jac| jac.iter().zip(self.qdot.iter()).map(|(c, v)| c * *v).sum())
            .collect()
    }

    /// The mass matrix `M(q) = sum_i m J_i' J_i + I a_i a_i'` (symmetric positive definite).
    pub fn mass_matrix(&self) -> DMatrix<f64> {
        if let Some(model) = &self.spatial {
            return model.mass_matrix(&self.q);
        }
        let n = self.n();
        let (m, inertia) = (self.config.sphere_mass, self.config.inertia());
        let jac = self.sphere_jacobians();
        let mut out = DMatrix::zeros(n, n);
        for k in 0..n {
            for l in 0..=k {
                // Spheres i >= k (= max(k, l)) depend on both coordinates.
                let v: f64 = (k..n)
                    .map(|i| m * jac[i][k].dot(&jac[i][l]) + inertia)
                    .sum();
                out[(k, l)] = v;
                out[(l, k)] = v;
            }
        }
        out
    }

    /// The Coriolis and centrifugal forces `sum_i m J_i' (J_i' q')` (`M q'' + C = tau`).
    pub fn coriolis(&self) -> DVector<f64> {
        if let Some(model) = &self.spatial {
            return model.bias_forces(&self.q, &self.qdot) - model.gravity_forces(&self.q);
        }
        let n = self.n();
        let (m, l) = (self.config.sphere_mass, self.config.link_length);
        let jac = self.sphere_jacobians();
        let mut acc = Vector3::zeros();
        let centripetal: Vec<Vector3<f64>> = self
            .absolute_angles()
            .iter()
            .zip(self.absolute_rates())
            .map(|(phi, rate)| {
                acc -= l * rate * rate * Vector3::new(phi.sin(), 0.0, -phi.cos());
                acc
            })
            .collect();
        DVector::from_fn(n, |k, _| {
            (k..n).map(|i| m * jac[i][k].dot(&centripetal[i])).sum()
        })
    }

    /// The gravity forces `sum_i m g J_i' e_z` (the gradient of the potential energy).
    pub fn gravity_forces(&self) -> DVector<f64> {
        if let Some(model) = &self.spatial {
            return model.gravity_forces(&self.q);
        }
        let n = self.n();
        let mg = self.config.sphere_mass * self.config.gravity;
        let jac = self.sphere_jacobians();
        DVector::from_fn(n, |k, _| (k..n).map(|i| mg * jac[i][k].z).sum())
    }

    /// `C(q, q')`: Coriolis, centrifugal and gravity forces.
    pub fn bias_forces(&self) -> DVector<f64> {
        if let Some(model) = &self.spatial {
            return model.bias_forces(&self.q, &self.qdot);
        }
        self.coriolis() + self.gravity_forces()
    }

    /// `q' M q' / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.qdot.dot(&(self.mass_matrix() * &self.qdot))
    }

    /// `sum_i m g z_i`, heights from the origin (the floor's mid-plane).
    pub fn potential_energy(&self) -> f64 {
        let mg = self.config.sphere_mass * self.config.gravity;
        self.sphere_positions().iter().map(|p| mg * p.z).sum()
    }

    /// Kinetic plus potential energy.
    pub fn energy(&self) -> f64 {
        self.kinetic_energy() + self.potential_energy()
    }
}

impl Scene for Pendulum {
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    /// `rest_height`: the height of a sphere's centre resting on the floor,
    /// [`PendulumConfig::floor_top`] plus the sphere radius (m).
    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![(
            "rest_height",
            self.config.floor_top() + self.config.sphere_radius,
        )]
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        Pendulum::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        Pendulum::advance(self, step, r)
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let n = self.n();
        let last = self.sphere_positions()[n - 1];
        let last_vz = self.sphere_velocities()[n - 1].z;
        vec![
            ("last_z", last.z),
            ("last_vz", last_vz),
            ("last_y", last.y),
            ("energy", self.energy()),
            ("n_contacts", self.last_contacts as f64),
            ("max_overlap", self.max_overlap()),
        ]
    }
}
