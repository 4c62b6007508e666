//! The convex merit trait: a cost `l(x)` with gradient, Hessian (or any SPD weighting matrix
//! that plays its role) and cheap derivatives along a line.
//!
//! SAP (Castro et al., eq. 24) is the canonical implementor: its line search needs
//! `dl/dalpha` and `d2l/dalpha2` along the Newton direction without forming the Hessian
//! (section IV-C), its Hessian `A + J'GJ` is sparse (section IV-D), one evaluation of its
//! per-contact projections gives value, gradient and Hessian together, and it stops on a
//! relative, unit-aware measure (eq. 26). The trait's optional methods carry those; a merit
//! written in a notebook implements the four required ones and gets dense defaults.

use std::ops::Range;

use faer::sparse::SparseColMat;
use faer::{Mat, MatMut};

/// Value and first two derivatives of `alpha -> l(x + alpha dx)` at one `alpha`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinePoint {
    /// `l(x + alpha dx)`.
    pub value: f64,
    /// `d l / d alpha`.
    pub slope: f64,
    /// `d^2 l / d alpha^2`.
    pub curvature: f64,
}

/// The Hessian (or the SPD weighting matrix used in its place) of a [`MeritEval`].
#[derive(Debug, Clone)]
pub enum MeritHessian {
    /// Dense, `n x n`.
    Dense(Mat<f64>),
    /// Sparse, symmetric, both triangles stored (drivers factor its lower triangle). Its
    /// pattern should not change from one evaluation to the next while the problem is the
    /// same, so that a symbolic factorization can be reused.
    Sparse(SparseColMat<usize, f64>),
}

impl MeritHessian {
    /// `merit`'s Hessian at `x`, formed dense by [`Merit::hessian`]: what a merit without a
    /// sparse layout of its own hands a driver that asked for one.
    pub fn dense_of<M: Merit + ?Sized>(merit: &M, x: &[f64]) -> MeritHessian {
        let n = merit.dim();
        let mut h = Mat::zeros(n, n);
        merit.hessian(x, h.as_mut());
        MeritHessian::Dense(h)
    }
}

/// One evaluation of a merit: value, gradient and, when asked, Hessian.
#[derive(Debug, Clone)]
pub struct MeritEval {
    /// `l(x)`.
    pub value: f64,
    /// `grad l(x)`.
    pub gradient: Vec<f64>,
    /// The Hessian, when it was asked for.
    pub hessian: Option<MeritHessian>,
}

/// What [`Merit::newton_direction`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnNewton {
    /// The merit has no factorization of its own: the driver forms the Hessian with
    /// [`Merit::evaluate`] and factors it.
    NotProvided,
    /// `d` holds the Newton direction; `analysed` says whether this call also made the
    /// factorization's symbolic analysis (counted by the driver).
    Solved {
        /// This call made the symbolic analysis.
        analysed: bool,
    },
    /// The Hessian is not positive definite to working precision.
    NotPositiveDefinite,
}

/// How far a point is from optimality, in the merit's own units: a driver stops when
/// `residual <= tol + rel_tol * scale` (Castro et al., eq. 26, `eps_a + eps_r max(...)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Optimality {
    /// The optimality residual (`|grad l|` by default; SAP: `|D grad l|`).
    pub residual: f64,
    /// The scale a relative tolerance multiplies (0 by default; SAP: `max(|D p|, |D j_c|)`).
    pub scale: f64,
}

impl Optimality {
    /// Whether the point meets `residual <= tol + rel_tol * scale`.
    pub fn met(&self, tol: f64, rel_tol: f64) -> bool {
        self.residual <= tol + rel_tol * self.scale
    }
}

/// A convex (or at least twice differentiable) cost to be minimized.
pub trait Merit {
    /// Number of unknowns.
    fn dim(&self) -> usize;

    /// `l(x)`.
    fn value(&self, x: &[f64]) -> f64;

    /// Writes `grad l(x)` into `g`.
    fn gradient(&self, x: &[f64], g: &mut [f64]);

    /// Writes the Hessian (or the SPD weighting matrix used in its place) into `h`,
    /// overwriting every entry.
    fn hessian(&self, x: &[f64], h: MatMut<'_, f64>);

    /// Value, gradient and (with `hessian`) the Hessian at `x` in one evaluation. The default
    /// calls [`Merit::value`], [`Merit::gradient`] and [`Merit::hessian`] (dense); merits with
    /// shared work or a sparse Hessian override it.
    fn evaluate(&self, x: &[f64], hessian: bool) -> MeritEval {
        let n = self.dim();
        let mut g = vec![0.0; n];
        self.gradient(x, &mut g);
        let h = hessian.then(|| MeritHessian::dense_of(self, x));
        MeritEval {
            value: self.value(x),
            gradient: g,
            hessian: h,
        }
    }

    /// The optimality measure at `x` with gradient `g` (default: `|g|`, no relative scale).
    fn optimality(&self, _x: &[f64], g: &[f64]) -> Optimality {
        Optimality {
            residual: g.iter().map(|v| v * v).sum::<f64>().sqrt(),
            scale: 0.0,
        }
    }

    /// Solves the Newton system `H(x) d = -g` with the merit's own factorization, for merits
    /// whose Hessian has a structure a general sparse Cholesky does not see (SAP's kinematic
    /// tree blocks). `g` is the gradient at `x`. The default leaves the system to the driver.
    fn newton_direction(&self, _x: &[f64], _g: &[f64], _d: &mut [f64]) -> OwnNewton {
        OwnNewton::NotProvided
    }

    /// The groups of unknowns the merit separates over, `l(x) = sum_k l_k(x_k)` with `x_k` the
    /// unknowns `groups()[k]` (consecutive ranges, in order, covering `0..dim()`): a contact
    /// problem's islands, whose Newton systems and lines do not interact. Empty (the default):
    /// the merit is not known to separate.
    fn groups(&self) -> &[Range<usize>] {
        &[]
    }

    /// `l_k` along `alpha -> x_k + alpha dx_k` for group `k` of [`Merit::groups`] (`x` and
    /// `dx` whole). The default moves only group `k` along the whole merit's line: its value
    /// is `l_k` plus the other groups' constant terms, which no line search decision sees.
    fn along_group(&self, k: usize, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        let range = self.groups().get(k).cloned().unwrap_or(0..dx.len());
        let dk: Vec<f64> = (0..dx.len())
            .map(|i| if range.contains(&i) { dx[i] } else { 0.0 })
            .collect();
        self.along_line(x, &dk, alpha)
    }

    /// `l_k(x_k)` of group `k` plus any constant (the default: [`Merit::along_group`] at
    /// `alpha = 0`, whose constant the line search shares).
    fn group_value(&self, k: usize, x: &[f64], dx: &[f64]) -> f64 {
        self.along_group(k, x, dx, 0.0).value
    }

    /// The optimality residual of each group, `residuals[k]`, whose squares sum to the square
    /// of [`Merit::optimality`]'s residual (default: `|g_k|`).
    fn group_residuals(&self, _x: &[f64], g: &[f64], residuals: &mut [f64]) {
        for (r, range) in residuals.iter_mut().zip(self.groups()) {
            *r = g[range.clone()].iter().map(|v| v * v).sum::<f64>().sqrt();
        }
    }

    /// [`Merit::newton_direction`] on the groups `active` marks only, the others' entries of
    /// `d` left at zero: the Hessian of a separable merit is block diagonal by group, so an
    /// active group's direction is the one the whole system gives. The default solves the
    /// whole system and zeroes the inactive groups.
    fn group_newton_direction(
        &self,
        x: &[f64],
        g: &[f64],
        active: &[bool],
        d: &mut [f64],
    ) -> OwnNewton {
        let own = self.newton_direction(x, g, d);
        for (range, _) in self.groups().iter().zip(active).filter(|(_, &a)| !a) {
            d[range.clone()].iter_mut().for_each(|v| *v = 0.0);
        }
        own
    }

    /// `l`, `dl/dalpha` and `d2l/dalpha2` of `alpha -> l(x + alpha dx)`.
    ///
    /// The default forms the gradient and Hessian at the trial point; formulations with a
    /// cheaper expression (SAP's eq. 38) override it.
    fn along_line(&self, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        let n = self.dim();
        let xa: Vec<f64> = x.iter().zip(dx).map(|(xi, di)| xi + alpha * di).collect();
        let mut g = vec![0.0; n];
        self.gradient(&xa, &mut g);
        let mut h = Mat::<f64>::zeros(n, n);
        self.hessian(&xa, h.as_mut());
        let slope = g.iter().zip(dx).map(|(a, b)| a * b).sum();
        let mut curvature = 0.0;
        for j in 0..n {
            let mut hd = 0.0;
            for i in 0..n {
                hd += h[(j, i)] * dx[i];
            }
            curvature += dx[j] * hd;
        }
        LinePoint {
            value: self.value(&xa),
            slope,
            curvature,
        }
    }
}

/// Forwards [`Merit`] through a pointer type, so drivers generic over `M: Merit + ?Sized` take
/// `&dyn Merit` too.
macro_rules! forward {
    ($($ptr:ty),*) => {$(
        impl<M: Merit + ?Sized> Merit for $ptr {
            fn dim(&self) -> usize { (**self).dim() }
            fn value(&self, x: &[f64]) -> f64 { (**self).value(x) }
            fn gradient(&self, x: &[f64], g: &mut [f64]) { (**self).gradient(x, g) }
            fn hessian(&self, x: &[f64], h: MatMut<'_, f64>) { (**self).hessian(x, h) }
            fn along_line(&self, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
                (**self).along_line(x, dx, alpha)
            }
            fn evaluate(&self, x: &[f64], hessian: bool) -> MeritEval {
                (**self).evaluate(x, hessian)
            }
            fn newton_direction(&self, x: &[f64], g: &[f64], d: &mut [f64]) -> OwnNewton {
                (**self).newton_direction(x, g, d)
            }
            fn optimality(&self, x: &[f64], g: &[f64]) -> Optimality {
                (**self).optimality(x, g)
            }
            fn groups(&self) -> &[Range<usize>] { (**self).groups() }
            fn along_group(&self, k: usize, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
                (**self).along_group(k, x, dx, alpha)
            }
            fn group_value(&self, k: usize, x: &[f64], dx: &[f64]) -> f64 {
                (**self).group_value(k, x, dx)
            }
            fn group_residuals(&self, x: &[f64], g: &[f64], residuals: &mut [f64]) {
                (**self).group_residuals(x, g, residuals)
            }
            fn group_newton_direction(
                &self,
                x: &[f64],
                g: &[f64],
                active: &[bool],
                d: &mut [f64],
            ) -> OwnNewton {
                (**self).group_newton_direction(x, g, active, d)
            }
        }
    )*};
}

forward!(&M, Box<M>);
