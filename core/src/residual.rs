//! The least-squares residual traits: `F: R^n -> R^m`, merit `psi(x) = |F(x)|^2 / 2`.
//!
//! Every Gauss-Newton-type driver (Gauss-Newton with line search, Levenberg-Marquardt, dogleg,
//! trust region) runs any [`Residual`]. Non-smooth formulations (Todorov's implicit NCP,
//! Erleben's min-map, Fischer-Burmeister) return *an element of the generalized (Clarke or
//! B-) Jacobian* from [`Residual::jacobian`]. Drivers that exploit the kinks ask for
//! [`NonSmoothResidual`] (Todorov's edge-aware LM-dogleg runs on any implementor); Erleben
//! and Ortiz's Newton asks for [`BDerivative`]; the projected LM of Kanzow and Petra asks for
//! a feasible set through [`ProjectedResidual`].
//!
//! The traits are object safe and implemented for references and boxes, so a driver generic
//! over `R: Residual + ?Sized` runs a concrete formulation (compile-time pairing, the notebook
//! DSL) and a `&dyn Residual` (the command line's registry) alike.

use faer::{Mat, MatMut};

use crate::dense::{self, SquareSolution, SquareSolve};

/// A residual map `F: R^n -> R^m` whose zeros are the solutions sought.
pub trait Residual {
    /// `n`, the number of unknowns.
    fn num_unknowns(&self) -> usize;

    /// `m`, the number of residual components.
    fn num_residuals(&self) -> usize;

    /// Writes `F(x)` into `out` (length `m`).
    fn residual(&self, x: &[f64], out: &mut [f64]);

    /// Writes an element of the generalized Jacobian of `F` at `x` into `out` (`m x n`),
    /// overwriting every entry. On a kink, any element is allowed; drivers that care use
    /// [`NonSmoothResidual::jacobian_along`].
    fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>);

    /// The measure a driver's `stop_tol` bounds at `x`, given `f = F(x)`: `|F(x)|_2` by
    /// default. A formulation whose residual is a rescaled form of the shared ruler
    /// ([`crate::metrics`]) returns the ruler itself, so that a driver's `converged` and the
    /// ruler's acceptance are one test ([`crate::plugin::judge`]).
    fn stop_measure(&self, _x: &[f64], f: &[f64]) -> f64 {
        dense::norm2(f)
    }
}

/// An edge of a piecewise-smooth residual that a point lies on: a surface in the unknowns of
/// one block `start .. start + normal.len()` (one contact, say) across which the Jacobian's
/// columns of that block jump (Todorov 2010, section III-C: the plane `x_n = b` and the cone).
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// First unknown of the block.
    pub start: usize,
    /// Unit normal of the edge in the block's unknowns, pointing into the edge's first side
    /// (the `d` of Todorov's eq. 25).
    pub normal: Vec<f64>,
    /// Whether the edge is curved, so that a step in its tangent space leaves it and
    /// [`NonSmoothResidual::project_onto_edge`] must bring the point back (Todorov's cone).
    pub curved: bool,
    /// The formulation's own tag (e.g. the contact index), handed back to its hooks.
    pub tag: usize,
}

impl Edge {
    /// The unknowns of the edge's block.
    pub fn columns(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.normal.len()
    }

    /// The normal as a direction in all `n` unknowns, scaled by `sign`.
    pub fn direction(&self, n: usize, sign: f64) -> Vec<f64> {
        let mut d = vec![0.0; n];
        for (k, v) in self.normal.iter().enumerate() {
            d[self.start + k] = sign * v;
        }
        d
    }
}

/// How a driver linearises at a point that lies on edges: the block's Jacobian columns are
/// `plus * J(+d) + minus * J(-d)`, the one-sided Jacobians entered along the edge normal `d`
/// and against it (Todorov's eq. 26 mixes them; taking one side is `plus = 1, minus = 0` or
/// the reverse).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeMix {
    /// Index of the edge in the list [`NonSmoothResidual::edges_at`] gave.
    pub edge: usize,
    /// Weight of the Jacobian entered along `+d`.
    pub plus: f64,
    /// Weight of the Jacobian entered along `-d`.
    pub minus: f64,
}

/// The Gauss-Newton normal equations of a linearisation: `J'J` and the gradient `g = J'F`.
#[derive(Debug, Clone)]
pub struct NormalEquations {
    /// `J'J` (`n x n`).
    pub jtj: Mat<f64>,
    /// `J'F` (length `n`).
    pub gradient: Vec<f64>,
}

impl Default for NormalEquations {
    /// Empty (`0 x 0`): the storage [`NonSmoothResidual::normal_equations_into`] fills.
    fn default() -> Self {
        NormalEquations {
            jtj: Mat::new(),
            gradient: Vec::new(),
        }
    }
}

/// [`NonSmoothResidual::slopes_through`] from two one-sided directional derivatives.
pub fn slopes_by_derivatives<R: NonSmoothResidual + ?Sized>(
    r: &R,
    x: &[f64],
    f: &[f64],
    d: &[f64],
) -> (f64, f64) {
    let mut jd = vec![0.0; r.num_residuals()];
    r.derivative_along(x, d, &mut jd);
    let after = dense::dot(f, &jd);
    let back: Vec<f64> = d.iter().map(|v| -v).collect();
    r.derivative_along(x, &back, &mut jd);
    (-dense::dot(f, &jd), after)
}

/// The hooks a non-smooth driver needs: where the kinks are along a segment, which Jacobian to
/// take on a kink, and (optionally) the edges a point lies on. Every hook but the first two has
/// a default built on them, so a formulation written in a notebook implements two methods; the
/// papers' formulations override the defaults with their structure (Todorov's `J'J` in
/// O(n^2), say).
pub trait NonSmoothResidual: Residual {
    /// Appends to `out` the parameters `t` in `(0, 1]`, in ascending order, at which the
    /// segment `x + t dx` crosses a kink of `F` (an edge where the Jacobian jumps).
    fn kinks_on_segment(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>);

    /// Writes the Jacobian of the smooth piece entered when leaving `x` along `dx`, i.e. the
    /// limit of `J(x + eps dx)` as `eps -> 0+` (Todorov 2010, eqs. 25-26).
    fn jacobian_along(&self, x: &[f64], dx: &[f64], out: MatMut<'_, f64>);

    /// The one-sided directional derivative `F'(x; dx) = J_along(x, dx) dx` into `out`
    /// (length `m`). The default forms `J_along`.
    fn derivative_along(&self, x: &[f64], dx: &[f64], out: &mut [f64]) {
        let mut j = Mat::zeros(self.num_residuals(), self.num_unknowns());
        self.jacobian_along(x, dx, j.as_mut());
        let v = dense::mat_vec(j.as_ref(), dx);
        out.copy_from_slice(&v);
    }

    /// The slopes of `t -> |F(x + t d)|^2 / 2` at `t = 0` from before and after `x`,
    /// `(f' J(-d) d, f' J(+d) d)` with `f = F(x)`: what a line search along `d` needs at each
    /// kink it cuts its segment at. The default takes two [`Self::derivative_along`]s
    /// ([`slopes_by_derivatives`]).
    fn slopes_through(&self, x: &[f64], f: &[f64], d: &[f64]) -> (f64, f64) {
        slopes_by_derivatives(self, x, f, d)
    }

    /// Appends the edges `x` lies on. The default declares none: a driver then treats every
    /// point as smooth and finds the kinks only along segments.
    fn edges_at(&self, _x: &[f64], _out: &mut Vec<Edge>) {}

    /// Moves `x` back onto a curved `edge` after a step in its tangent space. Default: nothing
    /// (flat edges).
    fn project_onto_edge(&self, _edge: &Edge, _x: &mut [f64]) {}

    /// For each edge, the one-sided slopes `(F' J(+d) d, -F' J(-d) d)` of the merit
    /// `|F|^2 / 2` at `x` with residual `f` (Todorov's `delta_1`, `delta_2` of eq. 25; a
    /// negative one is a descent side). The default uses [`Self::derivative_along`].
    fn edge_slopes(&self, x: &[f64], f: &[f64], edges: &[Edge], out: &mut Vec<(f64, f64)>) {
        let (n, m) = (self.num_unknowns(), self.num_residuals());
        let mut jd = vec![0.0; m];
        for e in edges {
            self.derivative_along(x, &e.direction(n, 1.0), &mut jd);
            let d1 = dense::dot(f, &jd);
            self.derivative_along(x, &e.direction(n, -1.0), &mut jd);
            let d2 = dense::dot(f, &jd);
            out.push((d1, d2));
        }
    }

    /// The normal equations of the Jacobian at `x` (residual `f`) whose columns on the
    /// `edges` named in `mixes` are mixed as [`EdgeMix`] says. The default forms `J` densely
    /// from [`Residual::jacobian`] and [`Self::jacobian_along`].
    fn normal_equations(
        &self,
        x: &[f64],
        f: &[f64],
        edges: &[Edge],
        mixes: &[EdgeMix],
    ) -> NormalEquations {
        let (n, m) = (self.num_unknowns(), self.num_residuals());
        let mut j = Mat::zeros(m, n);
        self.jacobian(x, j.as_mut());
        let (mut jp, mut jm) = (Mat::zeros(m, n), Mat::zeros(m, n));
        for mix in mixes {
            let e = &edges[mix.edge];
            self.jacobian_along(x, &e.direction(n, 1.0), jp.as_mut());
            self.jacobian_along(x, &e.direction(n, -1.0), jm.as_mut());
            for c in e.columns() {
                for r in 0..m {
                    j[(r, c)] = mix.plus * jp[(r, c)] + mix.minus * jm[(r, c)];
                }
            }
        }
        NormalEquations {
            jtj: dense::gram(j.as_ref()),
            gradient: dense::mat_t_vec(j.as_ref(), f),
        }
    }

    /// [`Self::normal_equations`] written into `out`, whose storage a residual may reuse (as
    /// `Clone::clone_from` reuses a value's): a driver that linearises every iteration keeps
    /// one `out` so that an `n x n` `J'J` is not allocated, zeroed and page-faulted in each time.
    /// The default assigns the owned result.
    fn normal_equations_into(
        &self,
        x: &[f64],
        f: &[f64],
        edges: &[Edge],
        mixes: &[EdgeMix],
        out: &mut NormalEquations,
    ) {
        *out = self.normal_equations(x, f, edges, mixes);
    }
}

/// A Newton direction `dx` solving `J dx = -F`, with `J dx` (for the line search's slope) and
/// how the system was solved.
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonDirection {
    /// `dx`.
    pub dx: Vec<f64>,
    /// `J dx`.
    pub j_dx: Vec<f64>,
    /// Size of the system solved (smaller than `n` after a reduction).
    pub system_size: usize,
    /// Whether the truncated SVD was used.
    pub used_svd: bool,
    /// Numerical rank of the system solved.
    pub rank: usize,
}

/// One Newton linearisation at a point: the merit gradient `J'F` and the direction (`None`
/// when no finite one comes out).
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonSystem {
    /// `J'F`.
    pub gradient: Vec<f64>,
    /// The Newton direction.
    pub direction: Option<NewtonDirection>,
}

/// A residual whose [`NonSmoothResidual::jacobian_along`] is its B-derivative (Qi 1993:
/// `J_along(x, d) d = F'(x; d)`) and whose Newton equation `J dx = -F` is square: what Erleben
/// and Ortiz's non-smooth Newton needs. The defaults form the dense Jacobian; the min-map
/// overrides them with the paper's Schur reduction and its pyramid Gauss-Seidel warm start.
pub trait BDerivative: NonSmoothResidual {
    /// The gradient `J'F` and the Newton direction of `J(x) dx = -F(x)` (`f` is `F(x)`),
    /// solved as `how` says; `reduced` asks for the formulation's own reduced system where it
    /// has one (the min-map's Schur complement), `false` for the full one.
    fn newton_system(
        &self,
        x: &[f64],
        f: &[f64],
        how: &SquareSolve,
        _reduced: bool,
    ) -> NewtonSystem {
        let mut jac = Mat::zeros(self.num_residuals(), self.num_unknowns());
        self.jacobian(x, jac.as_mut());
        dense_newton_system(jac.as_ref(), f, how)
    }

    /// One warm-start sweep on `x` (Erleben and Ortiz's projected Gauss-Seidel); `false` when
    /// the formulation has none (the driver then starts Newton at once).
    fn warm_start_sweep(&self, _x: &mut [f64]) -> bool {
        false
    }
}

/// The Newton system of a dense square Jacobian `jac` at a point with residual `f`.
pub fn dense_newton_system(
    jac: faer::MatRef<'_, f64>,
    f: &[f64],
    how: &SquareSolve,
) -> NewtonSystem {
    let rhs: Vec<f64> = f.iter().map(|v| -v).collect();
    let jt = jac.transpose().to_owned();
    let direction =
        dense::solve_square_transposed(&jt, &rhs, how).map(|s: SquareSolution| NewtonDirection {
            j_dx: dense::mat_vec(jac, &s.z),
            system_size: rhs.len(),
            used_svd: s.used_svd,
            rank: s.rank,
            dx: s.z,
        });
    NewtonSystem {
        gradient: dense::mat_t_vec(jac, f),
        direction,
    }
}

/// A residual whose unknowns are restricted to a closed convex set `X`
/// (Kanzow and Petra's constrained equations `F(x) = 0, x in X`).
pub trait ProjectedResidual: Residual {
    /// Replaces `x` by its Euclidean projection onto `X`.
    fn project(&self, x: &mut [f64]);
}

/// Forwards every method of a residual trait through a pointer type.
macro_rules! forward {
    ($($ptr:ty),*) => {$(
        impl<R: Residual + ?Sized> Residual for $ptr {
            fn num_unknowns(&self) -> usize { (**self).num_unknowns() }
            fn num_residuals(&self) -> usize { (**self).num_residuals() }
            fn residual(&self, x: &[f64], out: &mut [f64]) { (**self).residual(x, out) }
            fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>) { (**self).jacobian(x, out) }
            fn stop_measure(&self, x: &[f64], f: &[f64]) -> f64 { (**self).stop_measure(x, f) }
        }
        impl<R: NonSmoothResidual + ?Sized> NonSmoothResidual for $ptr {
            fn kinks_on_segment(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
                (**self).kinks_on_segment(x, dx, out)
            }
            fn jacobian_along(&self, x: &[f64], dx: &[f64], out: MatMut<'_, f64>) {
                (**self).jacobian_along(x, dx, out)
            }
            fn derivative_along(&self, x: &[f64], dx: &[f64], out: &mut [f64]) {
                (**self).derivative_along(x, dx, out)
            }
            fn slopes_through(&self, x: &[f64], f: &[f64], d: &[f64]) -> (f64, f64) {
                (**self).slopes_through(x, f, d)
            }
            fn edges_at(&self, x: &[f64], out: &mut Vec<Edge>) { (**self).edges_at(x, out) }
            fn project_onto_edge(&self, edge: &Edge, x: &mut [f64]) {
                (**self).project_onto_edge(edge, x)
            }
            fn edge_slopes(&self, x: &[f64], f: &[f64], edges: &[Edge], out: &mut Vec<(f64, f64)>) {
                (**self).edge_slopes(x, f, edges, out)
            }
            fn normal_equations(&self, x: &[f64], f: &[f64], edges: &[Edge], mixes: &[EdgeMix]) -> NormalEquations {
                (**self).normal_equations(x, f, edges, mixes)
            }
            fn normal_equations_into(&self, x: &[f64], f: &[f64], edges: &[Edge], mixes: &[EdgeMix], out: &mut NormalEquations) {
                (**self).normal_equations_into(x, f, edges, mixes, out)
            }
        }
        impl<R: BDerivative + ?Sized> BDerivative for $ptr {
            fn newton_system(&self, x: &[f64], f: &[f64], how: &SquareSolve, reduced: bool) -> NewtonSystem {
                (**self).newton_system(x, f, how, reduced)
            }
            fn warm_start_sweep(&self, x: &mut [f64]) -> bool { (**self).warm_start_sweep(x) }
        }
        impl<R: ProjectedResidual + ?Sized> ProjectedResidual for $ptr {
            fn project(&self, x: &mut [f64]) { (**self).project(x) }
        }
    )*};
}

forward!(&R, Box<R>);

#[cfg(test)]
mod tests {
    use super::*;

    /// `F(x) = (|x_0|, x_1 - 1)`: a kink at `x_0 = 0`, declared as an edge.
    struct Abs;
    impl Residual for Abs {
        fn num_unknowns(&self) -> usize {
            2
        }
        fn num_residuals(&self) -> usize {
            2
        }
        fn residual(&self, x: &[f64], out: &mut [f64]) {
            out[0] = x[0].abs();
            out[1] = x[1] - 1.0;
        }
        fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>) {
            self.jacobian_along(x, &[1.0, 0.0], out)
        }
    }
    impl NonSmoothResidual for Abs {
        fn kinks_on_segment(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
            if dx[0] != 0.0 {
                let t = -x[0] / dx[0];
                if t > 0.0 && t <= 1.0 {
                    out.push(t);
                }
            }
        }
        fn jacobian_along(&self, x: &[f64], dx: &[f64], mut out: MatMut<'_, f64>) {
            let s = if x[0] != 0.0 {
                x[0].signum()
            } else if dx[0] < 0.0 {
                -1.0
            } else {
                1.0
            };
            out[(0, 0)] = s;
            out[(0, 1)] = 0.0;
            out[(1, 0)] = 0.0;
            out[(1, 1)] = 1.0;
        }
        fn edges_at(&self, x: &[f64], out: &mut Vec<Edge>) {
            if x[0] == 0.0 {
                out.push(Edge {
                    start: 0,
                    normal: vec![1.0],
                    curved: false,
                    tag: 0,
                });
            }
        }
    }

    #[test]
    fn the_default_hooks_agree_with_the_one_sided_jacobians() {
        let x = [0.0, 3.0];
        let f = [0.0, 2.0];
        let mut d = [0.0; 2];
        Abs.derivative_along(&x, &[-2.0, 1.0], &mut d);
        assert_eq!(d, [2.0, 1.0], "|x_0| grows both ways");
        let mut edges = Vec::new();
        Abs.edges_at(&x, &mut edges);
        assert_eq!(edges.len(), 1);
        let mut slopes = Vec::new();
        Abs.edge_slopes(&x, &f, &edges, &mut slopes);
        assert_eq!(slopes, vec![(0.0, 0.0)]);
        // Mixed columns: plus J(+d) + minus J(-d) = 0.25 - 0.75 on the edge's column.
        let ne = (&Abs as &dyn NonSmoothResidual).normal_equations(
            &x,
            &f,
            &edges,
            &[EdgeMix {
                edge: 0,
                plus: 0.25,
                minus: 0.75,
            }],
        );
        assert!((ne.jtj[(0, 0)] - 0.25).abs() < 1e-15 && ne.jtj[(1, 1)] == 1.0);
        assert_eq!(ne.gradient, vec![0.0, 2.0]);
        let mut into = NormalEquations::default();
        let mixes = [EdgeMix {
            edge: 0,
            plus: 0.25,
            minus: 0.75,
        }];
        (&Abs as &dyn NonSmoothResidual).normal_equations_into(&x, &f, &edges, &mixes, &mut into);
        assert_eq!((into.jtj, into.gradient), (ne.jtj, ne.gradient));
    }
}
