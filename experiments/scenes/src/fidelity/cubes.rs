//! Free cubes on corner spheres, what the stack, the tower and the pile share: a cube's state,
//! the problem of their contacts in generalized velocities `[v_0, omega_0, v_1, omega_1, ...]`
//! (world frame; a uniform cube's inertia `m a^2 / 6` is isotropic, so `A` is diagonal and no
//! gyroscopic term arises), the free motion under gravity and the step after the impulses
//! (symplectic Euler in impulses, as [`super`]).

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::ProblemError;
use faer::sparse::Triplet;
use nalgebra::{Matrix3x6, UnitQuaternion, Vector3};

use super::Fidelity;
use crate::assemble::{Assembly, Gap};
use crate::error::SceneError;
use crate::scene::{Contact, ContactStep};

/// One cube.
#[derive(Debug, Clone)]
pub struct Cube {
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass (world).
    pub p: Vector3<f64>,
    /// Orientation (body to world).
    pub q: UnitQuaternion<f64>,
    /// Velocity of the centre.
    pub v: Vector3<f64>,
    /// Angular velocity (world).
    pub w: Vector3<f64>,
    /// Where the centre started.
    pub start: Vector3<f64>,
}

impl Cube {
    /// A cube of `mass` at rest at `p` with orientation `q`.
    pub fn at_rest(mass: f64, p: Vector3<f64>, q: UnitQuaternion<f64>) -> Cube {
        Cube {
            mass,
            p,
            q,
            v: Vector3::zeros(),
            w: Vector3::zeros(),
            start: p,
        }
    }

    /// The moment of inertia `m a^2 / 6` of a uniform cube of side `a`.
    pub fn inertia(&self, side: f64) -> f64 {
        self.mass * side * side / 6.0
    }
}

/// A contact found between cubes or against an obstacle: its key, frame and gap, its friction,
/// and per cube it touches the cube, the sign of its rows and the point's arm from the centre.
pub(super) struct Found {
    pub contact: Contact,
    pub mu: f64,
    pub bodies: Vec<(usize, f64, Vector3<f64>)>,
}

/// The generalized problem of `found` on `cubes` of side `side` (rigid contacts, the gaps as
/// `gap` says).
pub(super) fn problem(
    cubes: &[Cube],
    side: f64,
    found: &[Found],
    free: &[f64],
    (dt, gap): (f64, Gap),
) -> Result<GeneralizedProblem, SceneError> {
    let nv = 6 * cubes.len();
    let mut a = Vec::with_capacity(nv);
    for (body, c) in cubes.iter().enumerate() {
        for k in 0..6 {
            let value = if k < 3 { c.mass } else { c.inertia(side) };
            a.push(Triplet::new(6 * body + k, 6 * body + k, value));
        }
    }
    let mut jt = Vec::with_capacity(36 * found.len());
    for (ci, f) in found.iter().enumerate() {
        for &(body, sign, arm) in &f.bodies {
            let block: Matrix3x6<f64> = Fidelity::contact_jacobian(&f.contact.frame, &arm);
            for r in 0..3 {
                for col in 0..6 {
                    jt.push(Triplet::new(
                        3 * ci + r,
                        6 * body + col,
                        sign * block[(r, col)],
                    ));
                }
            }
        }
    }
    let velocity = (cubes.iter())
        .flat_map(|c| [c.v.x, c.v.y, c.v.z, c.w.x, c.w.y, c.w.z])
        .collect();
    // The cubes are separate trees of `A` (block diagonal by cube).
    Assembly {
        nv,
        a,
        j: jt,
        contacts: found.iter().map(|f| (f.contact.gap, f.mu)).collect(),
        free: free.to_vec(),
        velocity,
        tree_of: (0..nv).map(|k| k / 6).collect(),
        dt,
        gap,
    }
    .problem()
}

/// The velocities after gravity `g` (m/s^2, along `-z`) over `dt`.
pub(super) fn free_velocity(cubes: &[Cube], g: f64, dt: f64) -> Vec<f64> {
    (cubes.iter())
        .flat_map(|c| {
            let v = c.v - Vector3::new(0.0, 0.0, g * dt);
            [v.x, v.y, v.z, c.w.x, c.w.y, c.w.z]
        })
        .collect()
}

/// Applies the impulses `r` of `step` (its own `J`): `v = v* + A^-1 J' r`, then `x += dt v`,
/// `q = exp(dt omega) q`.
pub(super) fn advance(
    cubes: &mut [Cube],
    side: f64,
    dt: f64,
    step: &ContactStep,
    r: &[f64],
) -> Result<(), SceneError> {
    step.check_impulses(r, Some(6 * cubes.len()))?;
    let mut vel = step.free.clone();
    if let Some(g) = step.problem.generalized() {
        let (cols, rows, vals) = (
            g.j.symbolic().col_ptr(),
            g.j.symbolic().row_idx(),
            g.j.val(),
        );
        for (c, v) in vel.iter_mut().enumerate() {
            let cube = &cubes[c / 6];
            let inv = if c % 6 < 3 {
                1.0 / cube.mass
            } else {
                1.0 / cube.inertia(side)
            };
            let jt_r: f64 = (cols[c]..cols[c + 1]).map(|k| vals[k] * r[rows[k]]).sum();
            *v += inv * jt_r;
        }
    } else if !r.is_empty() {
        return Err(SceneError::Problem(ProblemError::Shape {
            field: "step".into(),
            expected: "this scene's generalized problem".into(),
            found: "a contact-space problem".into(),
        }));
    }
    for (body, cube) in cubes.iter_mut().enumerate() {
        let s = &vel[6 * body..6 * body + 6];
        cube.v = Vector3::new(s[0], s[1], s[2]);
        cube.w = Vector3::new(s[3], s[4], s[5]);
        cube.p += dt * cube.v;
        cube.q = UnitQuaternion::from_scaled_axis(dt * cube.w) * cube.q;
        if !(cube.p.iter().all(|x| x.is_finite()) && s.iter().all(|x| x.is_finite())) {
            return Err(SceneError::NonFinite("state"));
        }
    }
    Ok(())
}
