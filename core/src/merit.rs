//! The convex merit trait: a cost `l(x)` with gradient, Hessian (or any SPD weighting matrix
//! that plays its role) and cheap derivatives along a line.
//!
//! SAP (Castro et al., eq. 19) is the canonical implementor: its line search needs
//! `dl/dalpha` and `d2l/dalpha2` along the Newton direction without forming the Hessian.

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
        }
    )*};
}

forward!(&M, Box<M>);
