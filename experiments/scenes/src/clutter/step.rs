//! One step: the contact problem in generalized velocities at the current state, and the
//! impulses applied to move the bodies (module doc of [`crate::clutter`]).

use std::sync::OnceLock;

use contactlab_core::generalized::sparse_transpose_mul_add;
use contactlab_core::{ContactModel, GeneralizedProblem, ProblemError};
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use nalgebra::{UnitQuaternion, Vector3};

use super::contacts::ClutterContact;
use super::scene::{Clutter, LastStep};
use crate::error::SceneError;
use crate::scene::{Contact, ContactStep};

impl Clutter {
    /// This step's problem in generalized velocities (module doc): `A = M(q0)`, `J` at `q0`,
    /// `v*`, each contact's model, `dt`, `v0`, one tree per body.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let cfg = &self.config;
        let nv = 6 * self.bodies.len();
        let contacts = self.contacts();
        let nc = contacts.len();
        let (v_star, v0) = self.free_motion();
        let tau_d = cfg.tau_d();
        let problem = GeneralizedProblem {
            a: self.mass_matrix(),
            j: self.jacobian(contacts),
            v_star: v_star.clone(),
            b: vec![0.0; 3 * nc],
            contacts: contacts
                .iter()
                .map(|c| ContactModel {
                    mu: cfg.mu,
                    phi0: c.phi0,
                    stiffness: cfg.stiffness,
                    dissipation: tau_d,
                })
                .collect(),
            others: Vec::new(),
            target: Vec::new(),
            dt: Some(cfg.dt),
            v0: Some(v0),
            tree_of: (0..nv).map(|k| k / 6).collect(),
        };
        check_finite(&problem)?;
        Ok(ContactStep {
            contacts: contacts
                .iter()
                .map(|c| Contact {
                    key: c.key,
                    frame: c.frame,
                    gap: c.phi0,
                })
                .collect(),
            problem: problem.into(),
            free: v_star,
        })
    }

    /// The free motion `v*` and the velocities `v0` at the start of the step, body by body
    /// (`[v, omega]`, module doc).
    fn free_motion(&self) -> (Vec<f64>, Vec<f64>) {
        let cfg = &self.config;
        let nv = 6 * self.bodies.len();
        let mut v_star = Vec::with_capacity(nv);
        let mut v0 = Vec::with_capacity(nv);
        for b in &self.bodies {
            let [vs, ws] = b.free_velocity(cfg.dt, cfg.gravity);
            v_star.extend(vs.iter().chain(ws.iter()));
            v0.extend(b.v.iter().chain(b.w.iter()));
        }
        (v_star, v0)
    }

    /// `A = M(q0)`, block diagonal by body: `diag(m I3, R I_body R')`.
    fn mass_matrix(&self) -> SparseColMat<usize, f64> {
        let n = self.bodies.len();
        let nv = 6 * n;
        // Column by column (CSC, rows sorted): per body three mass columns, then the three
        // columns of the rotated inertia with all nine entries, zeros included, so the
        // pattern never changes.
        let mut a_ptr = Vec::with_capacity(nv + 1);
        let mut a_rows = Vec::with_capacity(12 * n);
        let mut a_vals = Vec::with_capacity(12 * n);
        for (i, b) in self.bodies.iter().enumerate() {
            let o = 6 * i;
            for k in 0..3 {
                a_ptr.push(a_rows.len());
                a_rows.push(o + k);
                a_vals.push(b.mass);
            }
            let iw = b.world_inertia();
            for c in 0..3 {
                a_ptr.push(a_rows.len());
                for r in 0..3 {
                    a_rows.push(o + 3 + r);
                    a_vals.push(iw[(r, c)]);
                }
            }
        }
        a_ptr.push(a_rows.len());
        csc(nv, nv, a_ptr, a_rows, a_vals)
    }

    /// The contact Jacobian `J` at `q0`, three rows per contact.
    fn jacobian(&self, contacts: &[ClutterContact]) -> SparseColMat<usize, f64> {
        let n = self.bodies.len();
        let nv = 6 * n;
        // Column by column: each body's contacts in contact order (so rows are sorted), three
        // rows each in each of the body's six columns. Counted first, then filled in place.
        let mut count = vec![0usize; n];
        for c in contacts {
            count[c.a] += 1;
            if let Some(b) = c.b {
                count[b] += 1;
            }
        }
        let mut j_ptr = Vec::with_capacity(nv + 1);
        j_ptr.push(0);
        for &k in &count {
            for _ in 0..6 {
                j_ptr.push(j_ptr[j_ptr.len() - 1] + 3 * k);
            }
        }
        let nnz = j_ptr[nv];
        let (mut j_rows, mut j_vals) = (vec![0; nnz], vec![0.0; nnz]);
        // The next free entry of each body's first column; its other columns follow at strides
        // of `3 count`.
        let mut next: Vec<usize> = (0..n).map(|i| j_ptr[6 * i]).collect();
        for (ci, c) in contacts.iter().enumerate() {
            let sides = std::iter::once((c.a, 1.0)).chain(c.b.map(|b| (b, -1.0)));
            for (body, sign) in sides {
                let block = self.jacobian_block(c, body, sign);
                for (m, column) in block.iter().enumerate() {
                    let at = next[body] + m * 3 * count[body];
                    j_rows[at..at + 3].copy_from_slice(&[3 * ci, 3 * ci + 1, 3 * ci + 2]);
                    j_vals[at..at + 3].copy_from_slice(column);
                }
                next[body] += 3;
            }
        }
        csc(3 * contacts.len(), nv, j_ptr, j_rows, j_vals)
    }

    /// The block of `J` of contact `c` on `body`'s six columns, column by column (three rows
    /// each): for each direction `d` of the frame, `sign d` on the linear velocity and
    /// `sign (p - x) x d` on the angular one (module doc).
    fn jacobian_block(&self, c: &ClutterContact, body: usize, sign: f64) -> [[f64; 3]; 6] {
        let r = c.point - self.bodies[body].x;
        let mut out = [[0.0; 3]; 6];
        for (k, row) in c.frame.row_iter().enumerate() {
            let d: Vector3<f64> = row.transpose();
            let ang = r.cross(&d);
            for (m, column) in out.iter_mut().enumerate() {
                column[k] = sign * if m < 3 { d[m] } else { ang[m - 3] };
            }
        }
        out
    }

    /// Applies the impulses `r` (normal first per contact, the step's frames):
    /// `v = v* + A^-1 J' r` body by body, moves the bodies (module doc), and finds the new
    /// state's contacts, so that a caller timing `contact_step` and `advance` (the runner's
    /// `scene_seconds`) counts collision detection too.
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        self.move_bodies(step, r)?;
        self.contacts();
        Ok(())
    }

    /// [`Clutter::advance`] without the detection of the new state's contacts.
    pub(super) fn move_bodies(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let n = self.bodies.len();
        let nc = step.contacts.len();
        step.check_impulses(r, Some(6 * n))?;
        let mut v = step.free.clone();
        let mut jr = vec![0.0; 6 * n];
        let g = step.problem.generalized();
        if nc > 0 {
            let Some(g) = g else {
                return Err(SceneError::Problem(ProblemError::Shape {
                    field: "step".into(),
                    expected: "a problem in generalized velocities (from this scene)".into(),
                    found: "a contact-space problem".into(),
                }));
            };
            if g.j.nrows() != 3 * nc || g.j.ncols() != 6 * n {
                return Err(SceneError::Impulses {
                    expected: 6 * n,
                    found: g.j.ncols(),
                });
            }
            sparse_transpose_mul_add(&g.j, r, &mut jr);
        }
        for (i, b) in self.bodies.iter_mut().enumerate() {
            let o = 6 * i;
            let lin = Vector3::new(jr[o], jr[o + 1], jr[o + 2]) / b.mass;
            let ang = b.world_inertia_inverse() * Vector3::new(jr[o + 3], jr[o + 4], jr[o + 5]);
            b.v = Vector3::new(v[o], v[o + 1], v[o + 2]) + lin;
            b.w = Vector3::new(v[o + 3], v[o + 4], v[o + 5]) + ang;
            v[o..o + 3].copy_from_slice(b.v.as_slice());
            v[o + 3..o + 6].copy_from_slice(b.w.as_slice());
            if !(b.v.iter().chain(b.w.iter()).all(|c| c.is_finite())) {
                return Err(SceneError::NonFinite("velocities"));
            }
        }
        // The slip is read after the step ([`Clutter::mean_slip`]) from the step's contacts, its
        // normal impulses and where the bodies were.
        let contacts = std::mem::take(&mut self.contacts)
            .into_inner()
            .map(|(found, _)| found)
            .filter(|found| found.len() == nc)
            .unwrap_or_default();
        let normal = if contacts.is_empty() {
            Vec::new()
        } else {
            r.iter().step_by(3).copied().collect()
        };
        let x = self.bodies.iter().map(|b| b.x).collect();
        self.last = LastStep {
            contacts,
            normal,
            x,
        };
        let dt = self.config.dt;
        for b in &mut self.bodies {
            b.x += dt * b.v;
            b.q = UnitQuaternion::new_normalize(
                (UnitQuaternion::from_scaled_axis(dt * b.w) * b.q).into_inner(),
            );
        }
        self.time += dt;
        self.contacts = OnceLock::new();
        Ok(())
    }
}

/// A sparse matrix from its compressed columns, valid by construction (sorted rows, one
/// pointer per column): `new_checked` asserts it.
fn csc(
    rows: usize,
    cols: usize,
    ptr: Vec<usize>,
    idx: Vec<usize>,
    vals: Vec<f64>,
) -> SparseColMat<usize, f64> {
    SparseColMat::new(
        SymbolicSparseColMat::new_checked(rows, cols, ptr, None, idx),
        vals,
    )
}

/// Refuses a step problem with a non-finite entry in `A`, `J`, `v*` or a `phi0`.
fn check_finite(problem: &GeneralizedProblem) -> Result<(), SceneError> {
    // Shapes, symmetry and the block structure hold by construction (and are tested against
    // `GeneralizedProblem::validate`); what a diverging simulation could break is finiteness,
    // checked here in O(nnz) (the full validation's symmetry check hashes every entry of `A`,
    // a few percent of a step).
    for (field, values) in [
        ("A", problem.a.val()),
        ("J", problem.j.val()),
        ("v*", &problem.v_star[..]),
    ] {
        // Counted first (a branch-free pass the compiler vectorizes), searched only when
        // something is wrong.
        if values.iter().filter(|v| !v.is_finite()).count() == 0 {
            continue;
        }
        if let Some((index, value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(SceneError::Problem(ProblemError::NonFinite {
                field: field.into(),
                index,
                value: *value,
            }));
        }
    }
    if let Some((i, c)) = problem
        .contacts
        .iter()
        .enumerate()
        .find(|(_, c)| !c.phi0.is_finite())
    {
        return Err(SceneError::Problem(ProblemError::NonFinite {
            field: "phi0".into(),
            index: i,
            value: c.phi0,
        }));
    }
    Ok(())
}
