"""Derivatives of an answer to its problem's data (`Solution.jvp`, `vjp`, `regimes`,
`non_unique`): against central differences of the solve, the adjoint identity, refusals."""

import numpy as np
import pytest

import contactlab
from test_solve import numpy_problem


def problem(q_shift=0.0, w_shift=0.0):
    """`test_solve`'s four Coulomb contacts on a positive definite `W`, moved by `q_shift` and
    `w_shift`."""
    base = numpy_problem()
    return contactlab.LocalProblem(base.W + w_shift, base.q + q_shift, base.mu)


def solve(p, warm=None):
    extra = {} if warm is None else {"warm": warm}
    s = contactlab.solve(p, "natural-map", "gauss-newton", tol=1e-13, max_iter=200, **extra)
    assert s.status == "converged", s
    return s


def test_forward_mode_is_the_derivative_of_the_solve():
    """`jvp` along a change of `q` and of `W` agrees with central differences of the solve
    (step 1e-6) to 1e-6 relative, at an answer away from every regime's boundary."""
    s = solve(problem())
    assert not s.non_unique
    assert "degenerate" not in s.regimes(margin=1e-5)
    rng = np.random.default_rng(7)
    n = len(s.r)
    dq = rng.normal(size=n)
    a = rng.normal(size=(n, n))
    dW = 0.05 * (a + a.T)
    d = s.jvp({"q": dq, "W": dW})
    h = 1e-6
    plus = solve(problem(h * dq, h * dW), warm=s.warm)
    minus = solve(problem(-h * dq, -h * dW), warm=s.warm)
    for k in ("r", "u"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(d[k] - fd)) <= 1e-6 * max(np.max(np.abs(fd)), 1e-3), k


def test_reverse_mode_is_the_adjoint_of_forward_mode():
    """`<r_bar, dr> + <u_bar, du> = <q_bar, dq> + <W_bar, dW>`, `W_bar` symmetric."""
    s = solve(problem())
    rng = np.random.default_rng(8)
    n = len(s.r)
    dq, rb, ub = rng.normal(size=(3, n))
    a = rng.normal(size=(n, n))
    dW = a + a.T
    d = s.jvp({"q": dq, "W": dW})
    g = s.vjp({"r": rb, "u": ub})
    assert g["W"].shape == (n, n) and np.allclose(g["W"], g["W"].T)
    left = rb @ d["r"] + ub @ d["u"]
    right = g["q"] @ dq + np.sum(g["W"] * dW)
    assert abs(left - right) <= 1e-10 * max(abs(left), 1.0)
    # A field left out is a zero direction.
    assert np.allclose(s.jvp({"q": dq})["r"], s.jvp({"q": dq, "W": np.zeros((n, n))})["r"])


def test_what_cannot_be_differentiated_is_refused_with_the_reason():
    """A solve that did not converge, a model other than the Coulomb cone, a field the
    derivatives do not have."""
    p = problem()
    unconverged = contactlab.solve(p, "natural-map", "gauss-newton", tol=1e-13, max_iter=1)
    with pytest.raises(ValueError, match="converged solve"):
        unconverged.jvp({"q": np.zeros(12)})
    sap = contactlab.solve(p, "sap", "newton-merit")
    with pytest.raises(contactlab.SolverError, match="Coulomb cone"):
        sap.vjp({"r": np.zeros(12)})
    s = solve(p)
    with pytest.raises(ValueError, match="no field `mu`"):
        s.jvp({"mu": np.zeros(4)})
    with pytest.raises(ValueError, match="`dq` has 3 entries"):
        s.jvp({"q": np.zeros(3)})
