//! How each block that is not an equality writes its impulse on the MLCP's unknowns: the
//! columns of its `D_(b)` (eq. 15, `r_b = D_(b) beta_(b)`) and its slip rate `sigma_b` with the
//! row `E-` gives it (eq. 17). The Coulomb contact is the paper's; every other kind extends it
//! (see the module doc of [`super`] for the choices and why).

use contactlab_core::Constraint;

use super::directions::Directions;
use super::system::OtherBlock;

/// A block's slip rate `sigma_b` and its complementarity row `f_sigma = c_n F_n - sum_j beta_j
/// + bound` (eq. 17-18: `c_n = mu`, `bound = 0` on the paper's contact).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sigma {
    /// Its index in `z`.
    pub index: usize,
    /// `c_n`, the coefficient of the block's first column `F_n` (`None`: no normal column, a
    /// friction loss).
    pub normal: Option<f64>,
    /// The constant of the row (`f_max` of a friction loss, else 0).
    pub bound: f64,
}

/// One block's `D_(b)` and slip rate.
#[derive(Debug, Clone)]
pub(crate) struct Pyramid {
    /// The block's rows among the non-equality rows.
    pub rows: std::ops::Range<usize>,
    /// Its first unknown in `z`.
    pub start: usize,
    /// The columns of `D_(b)`, each `rows.len()` long, concatenated.
    pub cols: Vec<f64>,
    /// The first friction column (0 for a friction loss, 1 after a contact's `F_n`); none when
    /// it equals the number of columns.
    pub first_friction: usize,
    /// The first row a friction column can be non-zero in (after a contact's normal row).
    pub first_friction_row: usize,
    /// The slip rate, for blocks with friction columns.
    pub sigma: Option<Sigma>,
    /// The contact's index in the [`Directions`] (contacts only).
    pub contact: Option<usize>,
    /// The block.
    pub constraint: Constraint,
}

impl Pyramid {
    /// Rows of the block.
    pub fn dim(&self) -> usize {
        self.rows.len()
    }

    /// Number of columns of `D_(b)` (unknowns in `beta_`).
    pub fn num_cols(&self) -> usize {
        self.cols.len() / self.dim()
    }

    /// Column `k` of `D_(b)`.
    pub fn col(&self, k: usize) -> &[f64] {
        let d = self.dim();
        &self.cols[k * d..(k + 1) * d]
    }

    /// The block's impulse `r_b = D_(b) beta_(b)` (eq. 19) into `out`.
    pub fn impulse_into(&self, beta: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (k, &b) in beta.iter().enumerate() {
            for (o, &c) in out.iter_mut().zip(self.col(k)) {
                *o += c * b;
            }
        }
    }

    /// `-d_j' u` of friction column `j` (zero normal entries skipped).
    pub fn negative_slip(&self, k: usize, u: &[f64]) -> f64 {
        let col = self.col(k);
        let from = self.first_friction_row;
        let mut s = col[from] * u[from];
        for a in from + 1..col.len() {
            s += col[a] * u[a];
        }
        -s
    }
}

/// The unit vector `(0, .., 1, .., 0)` of `d` rows with the 1 at `at`, times `scale`.
fn axis(d: usize, at: usize, scale: f64) -> Vec<f64> {
    let mut v = vec![0.0; d];
    v[at] = scale;
    v
}

/// A contact's columns: `e_n`, then the polygon of the [`Directions`] in the `(t1, t2)` rows
/// (unit on the Coulomb contact; `(mu_1 cos, mu_2 sin)` otherwise, on the ellipse), then
/// `+- mu_k e_k` for each torsional and rolling row with `mu_k > 0`. Returns the columns and
/// `c_n` (`mu` on the Coulomb contact, 1 once the directions carry the coefficients).
fn contact_columns(mu: &[f64], dirs: &Directions, contact: usize) -> (Vec<f64>, f64) {
    let d = 1 + mu.len();
    let mut cols = axis(d, 0, 1.0);
    if mu.is_empty() {
        return (cols, 0.0);
    }
    let coulomb = mu[0] == mu[1] && mu.len() == 2;
    let (s1, s2) = if coulomb { (1.0, 1.0) } else { (mu[0], mu[1]) };
    if coulomb || s1 > 0.0 || s2 > 0.0 {
        for j in 0..dirs.n_f() {
            let (c, s) = dirs.direction(contact, j);
            let mut v = vec![0.0; d];
            v[1] = s1 * c;
            v[2] = s2 * s;
            cols.extend(v);
        }
    }
    for (k, &m) in mu.iter().enumerate().skip(2) {
        if m > 0.0 {
            cols.extend(axis(d, 1 + k, m));
            cols.extend(axis(d, 1 + k, -m));
        }
    }
    (cols, if coulomb { mu[0] } else { 1.0 })
}

/// Every non-equality block's pyramid, `z`'s layout after `n_b` equality rows: the `beta_`
/// of every block in order, then the `sigma` of every block that has one, in order.
pub(crate) fn layout(blocks: &[OtherBlock], dirs: &Directions, n_b: usize) -> Vec<Pyramid> {
    let mut next = n_b;
    let mut contact = 0;
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        let (cols, first, normal, bound, index) = match &b.constraint {
            Constraint::Contact { mu } => {
                let (cols, cn) = contact_columns(mu, dirs, contact);
                contact += 1;
                (cols, 1, Some(cn), 0.0, Some(contact - 1))
            }
            Constraint::FrictionLoss { f_max } => (vec![1.0, -1.0], 0, None, *f_max, None),
            // A limit: one complementarity row, the normal's.
            _ => (vec![1.0], 1, None, 0.0, None),
        };
        let d = b.rows.len();
        let k = cols.len() / d;
        let sigma = (first < k).then_some(Sigma {
            index: 0,
            normal,
            bound,
        });
        out.push(Pyramid {
            rows: b.rows.clone(),
            start: next,
            cols,
            first_friction: first,
            first_friction_row: if first == 0 { 0 } else { 1 },
            sigma,
            contact: index,
            constraint: b.constraint.clone(),
        });
        next += k;
    }
    for p in out.iter_mut() {
        if let Some(s) = p.sigma.as_mut() {
            s.index = next;
            next += 1;
        }
    }
    out
}

/// The number of contact blocks, the entries [`Directions`] must have.
pub(crate) fn num_contacts(blocks: &[OtherBlock]) -> usize {
    blocks
        .iter()
        .filter(|b| matches!(b.constraint, Constraint::Contact { .. }))
        .count()
}
