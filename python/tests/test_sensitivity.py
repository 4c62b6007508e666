"""Derivatives of an answer to its problem's data (`Solution.jvp`, `vjp`, `jacobian`,
`regimes`, `non_unique`): against central differences of the solve, in contact space and
generalized, the adjoint identity, the Jacobian's rows and columns, refusals."""

import numpy as np
import pytest

import contactlab
from test_solve import numpy_problem


def problem(q_shift=0.0, w_shift=0.0, mu_shift=0.0):
    """`test_solve`'s four Coulomb contacts on a positive definite `W`, moved by `q_shift`,
    `w_shift` and `mu_shift`."""
    base = numpy_problem()
    return contactlab.LocalProblem(base.W + w_shift, base.q + q_shift, base.mu + mu_shift)


def generalized(df=0.0, dw=0.0, dM=0.0, dH=0.0, dmu=0.0):
    """Three Coulomb contacts on twelve velocities (`W = H' M^-1 H` regular), moved."""
    rng = np.random.default_rng(5)
    nv, nc = 12, 3
    a = rng.normal(size=(nv, nv))
    M = a @ a.T / nv + 0.5 * np.eye(nv)
    H = rng.normal(size=(nv, 3 * nc))
    f = rng.normal(size=nv)
    w = rng.uniform(-0.5, 0.2, size=3 * nc)
    mu = np.array([0.4, 0.7, 0.9])
    return contactlab.GeneralizedProblem(M + dM, H + dH, f + df, w + dw, mu + dmu)


def solve(p, warm=None):
    extra = {} if warm is None else {"warm": warm}
    s = contactlab.solve(p, "natural-map", "gauss-newton", tol=1e-13, max_iter=200, **extra)
    assert s.status == "converged", s
    return s


def test_forward_mode_is_the_derivative_of_the_solve():
    """`jvp` along a change of `q`, `W` and `mu` agrees with central differences of the solve
    (step 1e-6) to 1e-6 relative, at an answer away from every regime's boundary."""
    s = solve(problem())
    assert not s.non_unique
    assert "degenerate" not in s.regimes(margin=1e-5)
    rng = np.random.default_rng(7)
    n = len(s.r)
    dq = rng.normal(size=n)
    a = rng.normal(size=(n, n))
    dW = 0.05 * (a + a.T)
    dmu = 0.1 * rng.normal(size=4)
    d = s.jvp({"q": dq, "W": dW, "mu": dmu})
    h = 1e-6
    plus = solve(problem(h * dq, h * dW, h * dmu), warm=s.warm)
    minus = solve(problem(-h * dq, -h * dW, -h * dmu), warm=s.warm)
    for k in ("r", "u"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(d[k] - fd)) <= 1e-6 * max(np.max(np.abs(fd)), 1e-3), k


def test_reverse_mode_is_the_adjoint_of_forward_mode():
    """`<r_bar, dr> + <u_bar, du> = <q_bar, dq> + <W_bar, dW> + <mu_bar, dmu>`, `W_bar`
    symmetric."""
    s = solve(problem())
    rng = np.random.default_rng(8)
    n = len(s.r)
    dq, rb, ub = rng.normal(size=(3, n))
    a = rng.normal(size=(n, n))
    dW = a + a.T
    dmu = rng.normal(size=4)
    d = s.jvp({"q": dq, "W": dW, "mu": dmu})
    g = s.vjp({"r": rb, "u": ub})
    assert g["W"].shape == (n, n) and np.allclose(g["W"], g["W"].T)
    left = rb @ d["r"] + ub @ d["u"]
    right = g["q"] @ dq + np.sum(g["W"] * dW) + g["mu"] @ dmu
    assert abs(left - right) <= 1e-10 * max(abs(left), 1.0)
    # A field left out is a zero direction.
    assert np.allclose(s.jvp({"q": dq})["r"], s.jvp({"q": dq, "W": np.zeros((n, n))})["r"])


def test_what_cannot_be_differentiated_is_refused_with_the_reason():
    """A solve that did not converge, a pyramid turned with each contact's slip (another model
    than the derivative states), a field or an output the answer does not have."""
    p = problem()
    unconverged = contactlab.solve(p, "natural-map", "gauss-newton", tol=1e-13, max_iter=1)
    with pytest.raises(ValueError, match="converged solve"):
        unconverged.jvp({"q": np.zeros(12)})
    fb = contactlab.solve(p, "mlcp-fb", "plm", tol=1e-10, align_with_slip=True)
    with pytest.raises(contactlab.SolverError, match="another model"):
        fb.vjp({"r": np.zeros(12)})
    s = solve(p)
    with pytest.raises(ValueError, match="no field `M`"):
        s.jvp({"M": np.zeros((4, 4))})
    with pytest.raises(ValueError, match="no output `v`"):
        s.jacobian("q", of="v")
    with pytest.raises(ValueError, match="`dq` has 3 entries"):
        s.jvp({"q": np.zeros(3)})


def test_a_generalized_answer_is_differentiated_in_f_w_M_H_and_mu():
    """`jvp` along `f`, `w`, `M` (symmetric), `H` and `mu` at once agrees with central
    differences of the solve in `r` and `v` (step 1e-6, 1e-6 relative); `vjp` is its adjoint
    with `M_bar` symmetric and `H_bar` in `H`'s shape."""
    s = solve(generalized())
    assert not s.non_unique and "degenerate" not in s.regimes(margin=1e-5)
    rng = np.random.default_rng(9)
    nv, m = 12, 9
    a = rng.normal(size=(nv, nv))
    d = {
        "f": rng.normal(size=nv),
        "w": rng.normal(size=m),
        "M": 0.05 * (a + a.T),
        "H": 0.1 * rng.normal(size=(nv, m)),
        "mu": 0.1 * rng.normal(size=3),
    }
    t = s.jvp(d)
    assert set(t) == {"r", "u", "v"}
    h = 1e-6
    plus, minus = (solve(generalized(**{"d" + f: k * d[f] for f in d}), warm=s.warm) for k in (h, -h))
    for k in ("r", "v"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(t[k] - fd)) <= 1e-6 * max(np.max(np.abs(fd)), 1e-3), k
    rb, vb = rng.normal(size=m), rng.normal(size=nv)
    g = s.vjp({"r": rb, "v": vb})
    assert g["H"].shape == (nv, m) and np.allclose(g["M"], g["M"].T)
    left = rb @ t["r"] + vb @ t["v"]
    right = sum(np.sum(g[k] * d[k]) for k in d)
    assert abs(left - right) <= 1e-10 * max(abs(left), 1.0)


def test_the_jacobian_is_forward_mode_column_by_column():
    """`jacobian(wrt, of)` has shape `(len(of),) + shape(wrt)`; contracted with a direction it
    is `jvp` along that direction."""
    s = solve(generalized())
    rng = np.random.default_rng(10)
    for wrt, shape in (("f", (12,)), ("mu", (3,)), ("H", (12, 9))):
        direction = rng.normal(size=shape)
        for of in ("r", "u", "v"):
            jac = s.jacobian(wrt, of=of)
            assert jac.shape == (len(getattr(s, of)),) + shape
            along = np.tensordot(jac, direction, axes=len(shape))
            np.testing.assert_allclose(along, s.jvp({wrt: direction})[of], rtol=1e-10, atol=1e-12)


def solve_sap(p, warm=None):
    extra = {} if warm is None else {"warm": warm}
    s = contactlab.solve(p, "sap", "newton-merit", tol=1e-13, max_iter=200, **extra)
    assert s.status == "converged", s
    return s


def test_saps_answer_is_differentiated_through_its_own_optimality():
    """SAP's derivative (its Hessian, `R` and `v^` frozen) along `f`, `w` and `mu` agrees with
    central differences of SAP's solve; those data leave SAP's regularisation as it was (eqs.
    29-30 read `M` and `H`, not `f`, `w` or `mu`), so the differences freeze nothing; its
    impulses are unique and its regions named."""
    s = solve_sap(generalized())
    assert not s.non_unique
    assert set(s.regimes()) <= {"separating", "sticking", "sliding"}
    rng = np.random.default_rng(12)
    d = {"f": rng.normal(size=12), "w": rng.normal(size=9), "mu": 0.1 * rng.normal(size=3)}
    t = s.jvp(d)
    h = 1e-6
    plus, minus = (solve_sap(generalized(**{"d" + f: k * d[f] for f in d}), warm=s.warm) for k in (h, -h))
    for k in ("r", "v"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(t[k] - fd)) <= 1e-5 * max(np.max(np.abs(fd)), 1e-3), k
    g = s.vjp({"v": np.ones(12)})
    assert g["M"].shape == (12, 12) and set(g) == {"f", "w", "M", "H", "mu", "phi0",
                                                      "stiffness", "tau_d", "dt"}


def test_saps_answer_to_a_contact_space_problem_goes_through_its_generalized_form():
    """On a contact-space problem SAP solves `A = W^-1`, `J = I`, `v* = q`: its derivative along
    `q` and `mu` (data its regularisation does not read) agrees with central differences of SAP's
    solve, and its fields are the contact-space ones."""
    s = solve_sap(problem())
    assert not s.non_unique
    rng = np.random.default_rng(13)
    d = {"q": rng.normal(size=12), "mu": 0.1 * rng.normal(size=4)}
    t = s.jvp(d)
    h = 1e-6
    plus, minus = (solve_sap(problem(q_shift=k * d["q"], mu_shift=k * d["mu"]), warm=s.warm) for k in (h, -h))
    for k in ("r", "u"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(t[k] - fd)) <= 1e-5 * max(np.max(np.abs(fd)), 1e-3), k
    g = s.vjp({"u": np.ones(12)})
    assert set(g) == {"q", "W", "mu"} and g["W"].shape == (12, 12)


def test_the_pyramids_answer_is_differentiated_through_the_min_map():
    """The min-map's answer (the friction pyramid) along `q` and `mu` agrees with central
    differences of its solve, where no row changes piece within the step."""
    def solve_pyramid(p, warm=None):
        extra = {} if warm is None else {"warm": warm}
        s = contactlab.solve(p, "min-map", "newton", tol=1e-13, max_iter=200, **extra)
        # The pyramid solved; where contacts slide the Coulomb ruler also measures the pyramid's
        # gap to the cone, and the status says `inaccurate`.
        assert s.status in ("converged", "inaccurate"), s
        return s

    s = solve_pyramid(problem())
    assert "degenerate" not in s.regimes(margin=1e-5)
    rng = np.random.default_rng(14)
    d = {"q": rng.normal(size=12), "mu": 0.1 * rng.normal(size=4)}
    t = s.jvp(d)
    h = 1e-6
    plus, minus = (solve_pyramid(problem(q_shift=k * d["q"], mu_shift=k * d["mu"]), warm=s.warm)
                   for k in (h, -h))
    for k in ("r", "u"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(t[k] - fd)) <= 1e-6 * max(np.max(np.abs(fd)), 1e-3), k


def test_the_bisections_answer_is_differentiated_through_maximum_dissipation():
    """Hwangbo's bisection-SOR answers the maximum-dissipation model: its derivative along `q`,
    `W` and `mu` (generalized: `M` and `H` too, which its sliding contacts read directly through
    their block of `W`) agrees with central differences of its own solve, and the answer says
    which model it is of."""
    def solve_bisection(p, warm=None):
        extra = {} if warm is None else {"warm": warm}
        s = contactlab.solve(p, "coulomb", "bisection-sor", tol=1e-13, local_tol=1e-15, **extra)
        # Where a sliding contact's rows are coupled, the Coulomb ruler also measures maximum
        # dissipation's gap to Coulomb's law, and the status says `inaccurate`.
        assert s.status in ("converged", "inaccurate"), s
        return s

    rng = np.random.default_rng(16)
    for make, fields in ((problem, ("q_shift", "w_shift", "mu_shift")),
                         (generalized, ("df", "dw", "dM", "dH", "dmu"))):
        s = solve_bisection(make())
        assert s.model == "maximum_dissipation"
        assert "sliding" in s.regimes(margin=1e-6), s.regimes(margin=1e-6)
        base = make()
        shapes = {k: np.shape(getattr(base, n)) for k, n in zip(
            fields, ("q", "W", "mu") if make is problem else ("f", "w", "M", "H", "mu"))}
        d = {k: 0.1 * rng.normal(size=shape) for k, shape in shapes.items()}
        for k in ("w_shift", "dM"):
            if k in d:
                d[k] = d[k] + d[k].T
        names = dict(q_shift="q", w_shift="W", mu_shift="mu", df="f", dw="w", dM="M", dH="H",
                     dmu="mu")
        t = s.jvp({names[k]: v for k, v in d.items()})
        h = 1e-6
        plus, minus = (solve_bisection(make(**{k: c * v for k, v in d.items()}), warm=s.warm)
                       for c in (h, -h))
        for k in ("r", "u"):
            fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
            assert np.max(np.abs(t[k] - fd)) <= 1e-6 * max(np.max(np.abs(fd)), 1e-3), (make, k)


def test_the_fb_mlcps_answer_is_differentiated_through_its_own_equations():
    """Mylapilli and Jain's MLCP (six directions per contact) answers its own pyramid: its
    derivative along `q` and `mu` agrees with central differences of its solve in the impulses
    where they are unique."""
    def solve_fb(p, warm=None):
        extra = {} if warm is None else {"warm": warm}
        s = contactlab.solve(p, "mlcp-fb", "plm", tol=1e-13, max_iter=300, n_f=6,
                             theta0_deg=10.0, **extra)
        # The pyramid solved; where contacts slide the Coulomb ruler also measures the pyramid's
        # gap to the cone, and the status says `inaccurate`.
        assert s.status in ("converged", "inaccurate"), s
        return s

    s = solve_fb(problem())
    assert "degenerate" not in s.regimes(margin=1e-6), s.regimes(margin=1e-6)
    rng = np.random.default_rng(18)
    d = {"q": rng.normal(size=12), "mu": 0.1 * rng.normal(size=4)}
    t = s.jvp(d)
    h = 1e-6
    plus, minus = (solve_fb(problem(q_shift=k * d["q"], mu_shift=k * d["mu"]), warm=s.warm)
                   for k in (h, -h))
    for k in (("r", "u") if not s.non_unique else ("u",)):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(t[k] - fd)) <= 1e-6 * max(np.max(np.abs(fd)), 1e-3), k


def test_saps_answer_moves_with_the_position_errors_through_its_bias():
    """With a time step, SAP's bias `v^_n = -phi0 / (dt + tau_d)` reads each contact's position
    error: the derivative along `phi0` (on the normal rows) agrees with central differences of
    SAP's solve (its regularisation does not read `phi0`), and the natural map's answer does not
    move with it."""
    def stepped(dphi0=0.0):
        base = generalized()
        phi0 = np.tile([-1e-3, 0.0, 0.0], 3) + dphi0
        return contactlab.GeneralizedProblem(np.asarray(base.M), np.asarray(base.H),
                                             np.asarray(base.f), np.asarray(base.w),
                                             np.asarray(base.mu), phi0=phi0, dt=0.01)

    s = solve_sap(stepped())
    d = np.zeros(9)
    d[::3] = np.random.default_rng(15).normal(size=3) * 1e-3
    t = s.jvp({"phi0": d})
    h = 1e-6
    plus, minus = (solve_sap(stepped(k * d), warm=s.warm) for k in (h, -h))
    for k in ("r", "v"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(t[k] - fd)) <= 1e-5 * max(np.max(np.abs(fd)), 1e-3), k
    assert np.max(np.abs(t["r"])) > 0
    g = s.vjp({"r": np.ones(9)})
    assert g["phi0"].shape == (9,) and np.all(g["phi0"][1::3] == 0)
    assert abs(g["phi0"] @ d - np.ones(9) @ t["r"]) <= 1e-9 * max(abs(np.ones(9) @ t["r"]), 1.0)
    assert np.all(solve(stepped()).jvp({"phi0": d})["r"] == 0)


def test_saps_answer_moves_with_its_compliance():
    """SAP's regularisation (eq. 29) reads each contact's stiffness and dissipation time scale
    and the time step where its compliant term wins, and its bias reads `tau_d` and `dt`: the
    derivative along them agrees with central differences of SAP's whole solve (they do not
    move the Delassus estimate), reverse mode is its adjoint, and the rigid natural map does not
    move with them."""
    def stepped(dk=0.0, dtau=0.0, ddt=0.0):
        base = generalized()
        phi0 = np.tile([-1e-3, 0.0, 0.0], 3)
        return contactlab.GeneralizedProblem(
            np.asarray(base.M), np.asarray(base.H), np.asarray(base.f), np.asarray(base.w),
            np.asarray(base.mu), phi0=phi0, dt=0.01 + ddt,
            stiffness=np.array([20.0, 50.0, 30.0]) + dk, tau_d=np.array([0.02, 0.005, 0.01]) + dtau)

    s = solve_sap(stepped())
    rng = np.random.default_rng(17)
    d = {"stiffness": 5.0 * rng.normal(size=3), "tau_d": 1e-3 * rng.normal(size=3),
         "dt": np.array([1e-3])}
    t = s.jvp(d)
    h = 1e-5
    plus, minus = (solve_sap(stepped(k * d["stiffness"], k * d["tau_d"], k * d["dt"][0]),
                             warm=s.warm) for k in (h, -h))
    for k in ("r", "v"):
        fd = (getattr(plus, k) - getattr(minus, k)) / (2 * h)
        assert np.max(np.abs(fd)) > 1e-6, k
        assert np.max(np.abs(t[k] - fd)) <= 1e-5 * max(np.max(np.abs(fd)), 1e-3), k
    g = s.vjp({"r": np.ones(9)})
    assert g["stiffness"].shape == (3,) and g["dt"].shape == (1,)
    right = sum(float(g[k] @ d[k]) for k in d)
    assert abs(right - np.ones(9) @ t["r"]) <= 1e-9 * max(abs(right), 1.0)
    assert np.all(solve(stepped()).jvp(d)["r"] == 0)
    with pytest.raises(ValueError, match="`ddt` has 2 entries"):
        s.jvp({"dt": np.zeros(2)})
    with pytest.raises(ValueError, match="field `tau_d`: entry 1 is -0.995, expected finite"):
        stepped(dtau=np.array([0.0, -1.0, 0.0]))
    with pytest.raises(ValueError, match="field `stiffness`: 2 entries, expected 3"):
        contactlab.GeneralizedProblem(np.eye(12), generalized().H, np.zeros(12), np.zeros(9),
                                      np.ones(3), stiffness=np.ones(2))
