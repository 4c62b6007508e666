//! Convex problems in the conic form interior-point solvers take:
//! `min x'Px/2 + q'x` subject to `A x + s = b`, `s` in a product of zero, nonnegative and
//! second-order cones (Clarabel's form; Goulart and Chen 2024, eq. 1).
//!
//! A formulation that can state its problem this way (SAP's primal, Castro et al. eq. 19)
//! implements [`ConicProgram`]; the `clarabel` driver then solves it, so an interior-point
//! method runs on exactly the problem a first-order or Newton driver solves in its own form.

use faer::sparse::SparseColMat;

use crate::error::CoreError;

/// One cone of the product, by dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cone {
    /// `s = 0` (equalities).
    Zero(usize),
    /// `s >= 0` componentwise.
    Nonnegative(usize),
    /// `|s[1..]| <= s[0]` (the axis first).
    SecondOrder(usize),
}

impl Cone {
    /// The number of rows it takes.
    pub fn dim(&self) -> usize {
        match *self {
            Cone::Zero(n) | Cone::Nonnegative(n) | Cone::SecondOrder(n) => n,
        }
    }
}

/// The data of `min x'Px/2 + q'x  s.t.  A x + s = b, s in K`.
#[derive(Debug, Clone)]
pub struct ConicData {
    /// `P`, symmetric positive semidefinite, upper triangle only.
    pub p: SparseColMat<usize, f64>,
    /// `q`.
    pub q: Vec<f64>,
    /// `A` (rows: constraints, columns: unknowns).
    pub a: SparseColMat<usize, f64>,
    /// `b`.
    pub b: Vec<f64>,
    /// `K`, cone by cone in row order.
    pub cones: Vec<Cone>,
}

impl ConicData {
    /// Checks that the shapes agree and the entries are finite; the error names the field.
    pub fn validate(&self) -> Result<(), CoreError> {
        let n = self.q.len();
        let m = self.b.len();
        let shape = |field: &str, expected: String, found: String| {
            Err(CoreError::Problem(crate::error::ProblemError::Shape {
                field: field.to_string(),
                expected,
                found,
            }))
        };
        if (self.p.nrows(), self.p.ncols()) != (n, n) {
            return shape(
                "P",
                format!("{n} x {n}"),
                format!("{} x {}", self.p.nrows(), self.p.ncols()),
            );
        }
        if (self.a.nrows(), self.a.ncols()) != (m, n) {
            return shape(
                "A",
                format!("{m} x {n}"),
                format!("{} x {}", self.a.nrows(), self.a.ncols()),
            );
        }
        let rows: usize = self.cones.iter().map(Cone::dim).sum();
        if rows != m {
            return shape("cones", format!("{m} rows"), format!("{rows} rows"));
        }
        let finite = |field: &str, v: &[f64]| match v.iter().position(|x| !x.is_finite()) {
            Some(index) => Err(CoreError::Problem(crate::error::ProblemError::NonFinite {
                field: field.to_string(),
                index,
                value: v[index],
            })),
            None => Ok(()),
        };
        finite("P", self.p.val())?;
        finite("q", &self.q)?;
        finite("A", self.a.val())?;
        finite("b", &self.b)
    }
}

/// A problem that can be stated as a [`ConicData`] program.
pub trait ConicProgram {
    /// The program.
    fn conic_program(&self) -> Result<ConicData, CoreError>;

    /// The solution a conic driver returns, from the program's primal solution `x`: the
    /// formulation's unknowns, followed by any further primal variables the formulation reads
    /// (SAP keeps eq. 19's `sigma`, the interior point's own impulses).
    fn unknowns_from_conic(&self, x: &[f64]) -> Vec<f64>;
}

/// Forwards [`ConicProgram`] through references, so a driver generic over
/// `C: ConicProgram + ?Sized` takes `&dyn ConicProgram` too.
impl<C: ConicProgram + ?Sized> ConicProgram for &C {
    fn conic_program(&self) -> Result<ConicData, CoreError> {
        (**self).conic_program()
    }
    fn unknowns_from_conic(&self, x: &[f64]) -> Vec<f64> {
        (**self).unknowns_from_conic(x)
    }
}
