//! Seeded random boxed-LCP test problems for the paper's Tables 1-2.
//!
//! The paper only says "random symmetric positive definite systems of increasing problem
//! size", sizes 12 to 384, 100 cases each. Two families are offered:
//!
//! * [`RandomProblemParams::Delassus`] (the default), shaped like a contact problem:
//!   `W = B B' + eps I` with `B` an `n x m` matrix (`m = ceil(dof_ratio * n)` "generalized
//!   velocities", `dof_ratio = 1` by default) of independent entries, uniform with mean 0 and
//!   variance `1/m`, so that `diag(W) ~ 1 + eps` as for a Delassus matrix `H' M^-1 H` of unit
//!   masses and unit-norm contact rows. The spectrum of `B B'` spreads over `[0, 4]`
//!   (Marchenko-Pastur), with eigenvalues near 0 like the nearly dependent contacts of real
//!   scenes; `eps = 1e-2` bounds the condition number near 400. Per contact: `q_n` uniform in
//!   `(0, 1]` (separating) with probability `separating_fraction = 0.25`, else uniform in
//!   `[-1, 0)` (approaching); `q_t1, q_t2` uniform in `[-1, 1]`; `mu` uniform in
//!   `[0.1, 1.0]`.
//! * [`RandomProblemParams::OpenTissue`]: the generator of the OpenTissue library that the
//!   authors' group published alongside the method (its `fast_generate_PD` and the random
//!   test of its non-smooth Newton): `A = R'R + diag(d)` with `R` and `d` uniform in `[0, 1]`,
//!   `b = -r` with `r` uniform in `[0, 1]` (every contact approaching), one `mu` for all
//!   contacts (OpenTissue's test uses 1). Its entries are all positive, so `A` has one
//!   eigenvalue near `n^2 / 4` and is far worse conditioned than the Delassus family.
//!
//! `W` is symmetric to the last bit (only the lower triangle is computed) and the result is a
//! validated [`LocalProblem`].

use contactlab_core::drivers::kit::dot;
use contactlab_core::{CoreError, LocalProblem, Matrix, ProblemError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The problem sizes (`3 x contacts`) of the paper's Tables 1-2.
pub const PAPER_SIZES: [usize; 6] = [12, 24, 48, 96, 192, 384];

/// Which family of random problems, and its parameters (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub enum RandomProblemParams {
    /// `W = B B' + eps I`, a mix of separating and approaching contacts, `mu` per contact.
    Delassus {
        /// Columns of `B` per row of `W` (`m = ceil(dof_ratio * n)`).
        dof_ratio: f64,
        /// `eps`, added to the diagonal.
        regularization: f64,
        /// Probability that a contact's `q_n` is positive (separating).
        separating_fraction: f64,
        /// Smallest friction coefficient.
        mu_min: f64,
        /// Largest friction coefficient.
        mu_max: f64,
    },
    /// OpenTissue's `A = R'R + diag(d)`, `b = -r`, all entries of `R, d, r` uniform in `[0, 1]`.
    OpenTissue {
        /// The friction coefficient of every contact.
        mu: f64,
    },
}

impl Default for RandomProblemParams {
    /// The Delassus family with the defaults of the module documentation.
    fn default() -> Self {
        RandomProblemParams::Delassus {
            dof_ratio: 1.0,
            regularization: 1e-2,
            separating_fraction: 0.25,
            mu_min: 0.1,
            mu_max: 1.0,
        }
    }
}

impl RandomProblemParams {
    /// The OpenTissue family with `mu = 1`, as in OpenTissue's own random test.
    pub fn opentissue() -> Self {
        RandomProblemParams::OpenTissue { mu: 1.0 }
    }

    /// Errors when a parameter is out of its range.
    fn check(&self) -> Result<(), CoreError> {
        match *self {
            RandomProblemParams::Delassus {
                dof_ratio,
                regularization,
                separating_fraction,
                mu_min,
                mu_max,
            } => {
                if !(dof_ratio > 0.0 && dof_ratio.is_finite()) {
                    return Err(bad("dof_ratio", "positive", dof_ratio.to_string()));
                }
                if !(regularization >= 0.0 && regularization.is_finite()) {
                    return Err(bad(
                        "regularization",
                        "nonnegative",
                        regularization.to_string(),
                    ));
                }
                if !(0.0..=1.0).contains(&separating_fraction) {
                    return Err(bad(
                        "separating_fraction",
                        "in [0, 1]",
                        separating_fraction.to_string(),
                    ));
                }
                if !(mu_min >= 0.0 && mu_max >= mu_min && mu_max.is_finite()) {
                    return Err(bad(
                        "mu_min, mu_max",
                        "0 <= mu_min <= mu_max < inf",
                        format!("{mu_min}, {mu_max}"),
                    ));
                }
            }
            RandomProblemParams::OpenTissue { mu } => {
                if !(mu >= 0.0 && mu.is_finite()) {
                    return Err(bad("mu", "finite and nonnegative", mu.to_string()));
                }
            }
        }
        Ok(())
    }
}

/// A shape error of the generator's parameter `field`.
fn bad(field: &str, expected: &str, found: String) -> CoreError {
    CoreError::Problem(ProblemError::Shape {
        field: field.to_string(),
        expected: expected.to_string(),
        found,
    })
}

/// A seeded random local problem of `size = 3 x contacts` rows (ChaCha8 from `seed`).
///
/// Errors when `size` is not a positive multiple of 3 or a parameter is out of range.
pub fn random_boxed_lcp(
    size: usize,
    seed: u64,
    params: &RandomProblemParams,
) -> Result<LocalProblem, CoreError> {
    let contacts = size / 3;
    if contacts == 0 || 3 * contacts != size {
        return Err(bad(
            "size",
            "a positive multiple of 3 (3 rows per contact)",
            size.to_string(),
        ));
    }
    params.check()?;
    let (n, nc) = (size, contacts);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // W is drawn first, then q and mu: the order of the draws is the problems' identity.
    let (w, q, mu) = match *params {
        RandomProblemParams::Delassus {
            dof_ratio,
            regularization,
            separating_fraction,
            mu_min,
            mu_max,
        } => {
            let w = delassus_w(n, dof_ratio, regularization, &mut rng);
            let (q, mu) = mixed_contacts(nc, separating_fraction, (mu_min, mu_max), &mut rng);
            (w, q, mu)
        }
        RandomProblemParams::OpenTissue { mu } => {
            let w = opentissue_w(n, &mut rng);
            let q = (0..n).map(|_| -rng.random_range(0.0..1.0)).collect();
            (w, q, vec![mu; nc])
        }
    };
    let w = Matrix::from_row_major("W", n, n, &w)?;
    Ok(LocalProblem::new(w, q, mu)?)
}

/// `W = B B' + eps I` (row-major, `n x n`) with `B` of `m = ceil(dof_ratio n)` columns,
/// uniform entries of variance `1/m`.
fn delassus_w(n: usize, dof_ratio: f64, regularization: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let m = ((dof_ratio * n as f64).ceil() as usize).max(1);
    // Uniform on [-h, h] has variance h^2 / 3; h = sqrt(3 / m) gives variance 1/m.
    let h = (3.0 / m as f64).sqrt();
    let b: Vec<f64> = (0..n * m).map(|_| rng.random_range(-h..=h)).collect();
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let v = dot(&b[i * m..(i + 1) * m], &b[j * m..(j + 1) * m])
                + if i == j { regularization } else { 0.0 };
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
    }
    w
}

/// The Delassus family's `q` and `mu` for `nc` contacts: each separating with probability
/// `separating_fraction` (`q_n` in `(0, 1]`, else in `[-1, 0)`), `q_t` uniform in `[-1, 1]`,
/// `mu` uniform in `[mu_min, mu_max]`.
fn mixed_contacts(
    nc: usize,
    separating_fraction: f64,
    (mu_min, mu_max): (f64, f64),
    rng: &mut ChaCha8Rng,
) -> (Vec<f64>, Vec<f64>) {
    let mut q = vec![0.0; 3 * nc];
    let mut mu = vec![0.0; nc];
    for c in 0..nc {
        let separating = rng.random_bool(separating_fraction);
        q[3 * c] = if separating {
            1.0 - rng.random_range(0.0..1.0)
        } else {
            -1.0 + rng.random_range(0.0..1.0)
        };
        q[3 * c + 1] = rng.random_range(-1.0..=1.0);
        q[3 * c + 2] = rng.random_range(-1.0..=1.0);
        mu[c] = if mu_max > mu_min {
            rng.random_range(mu_min..=mu_max)
        } else {
            mu_min
        };
    }
    (q, mu)
}

/// OpenTissue's `A = R'R + diag(d)` (row-major, `n x n`), `R` and `d` uniform in `[0, 1]`.
fn opentissue_w(n: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    // R stored column by column: A_ij = (R'R)_ij = sum_k R_ki R_kj = col_i . col_j.
    let r: Vec<f64> = (0..n * n).map(|_| rng.random_range(0.0..1.0)).collect();
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let v = dot(&r[i * n..(i + 1) * n], &r[j * n..(j + 1) * n]);
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
    }
    for i in 0..n {
        w[i * n + i] += rng.random_range(0.0..1.0);
    }
    w
}
