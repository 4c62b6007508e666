"""Problems from NumPy, scipy.sparse and files: fields back as NumPy, validation as the CLI's."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import contactlab
from conftest import DATA


def two_contacts():
    rng = np.random.default_rng(3)
    J = rng.normal(size=(6, 5))
    W = J @ J.T + 0.1 * np.eye(6)
    q = np.array([-1.0, 0.3, -0.2, -0.5, -0.4, 0.1])
    mu = np.array([0.5, 0.9])
    return W, q, mu


def test_a_local_problem_gives_its_fields_back():
    W, q, mu = two_contacts()
    p = contactlab.LocalProblem(W, q, mu)
    assert p.num_contacts == 2
    np.testing.assert_array_equal(p.W, W)
    np.testing.assert_array_equal(p.q, q)
    np.testing.assert_array_equal(p.mu, mu)
    assert p.to_local() is p


def test_a_sparse_w_is_the_same_problem():
    W, q, mu = two_contacts()
    dense = contactlab.solve(contactlab.LocalProblem(W, q, mu), tol=1e-12)
    sparse = contactlab.solve(contactlab.LocalProblem(sp.csr_matrix(W), q, mu), tol=1e-12)
    assert dense.status == sparse.status == "converged"
    np.testing.assert_allclose(sparse.r, dense.r, rtol=1e-9, atol=1e-12)


def test_a_generalized_problem_and_its_contact_space_form():
    rng = np.random.default_rng(5)
    n, nc = 7, 2
    A = rng.normal(size=(n, n))
    M = A @ A.T + n * np.eye(n)
    H = rng.normal(size=(n, 3 * nc))
    f = rng.normal(size=n)
    w = rng.normal(size=3 * nc)
    mu = np.array([0.3, 0.7])
    g = contactlab.GeneralizedProblem(M, sp.csc_matrix(H), f, w, mu)
    assert (g.num_dofs, g.num_contacts) == (n, nc)
    np.testing.assert_array_equal(g.M, M)
    np.testing.assert_array_equal(g.H, H)
    local = g.to_local()
    W = H.T @ np.linalg.solve(M, H)
    q = H.T @ np.linalg.solve(M, f) + w
    np.testing.assert_allclose(local.W, W, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(local.q, q, rtol=1e-10, atol=1e-12)
    s = contactlab.solve(g, tol=1e-10)
    assert s.status == "converged"
    # v solves M v = H r + f, and u = H' v + w.
    np.testing.assert_allclose(M @ s.v, H @ s.r + f, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(H.T @ s.v + w, s.u, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize(
    "change, exc, words",
    [
        (lambda W, q, mu: (W[:5, :5], q, mu), ValueError, ["`W`", "wrong shape"]),
        (lambda W, q, mu: (W, q[:4], mu), ValueError, ["`q`", "wrong shape"]),
        (lambda W, q, mu: (W, q.reshape(2, 3), mu), ValueError, ["`q`", "1-D"]),
        (lambda W, q, mu: (W[0], q, mu), ValueError, ["`W`", "2-D"]),
        (lambda W, q, mu: (W, np.where(np.arange(6) == 2, math.nan, q), mu), ValueError, ["`q`", "entry 2", "not finite"]),
        (lambda W, q, mu: (W, q, np.array([0.5, -0.1])), ValueError, ["`mu`", "contact 1", "negative friction"]),
        (lambda W, q, mu: (W + np.triu(np.ones((6, 6)), 1), q, mu), ValueError, ["`W`", "not symmetric"]),
        (lambda W, q, mu: (-W, q, mu), ValueError, ["`W`", "semidefinite"]),
        (lambda W, q, mu: ("W", q, mu), TypeError, ["`W`", "str"]),
    ],
)
def test_bad_local_input_names_the_field(change, exc, words):
    W, q, mu = change(*two_contacts())
    with pytest.raises(exc) as e:
        contactlab.LocalProblem(W, q, mu)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_bad_generalized_input_names_the_field():
    M, H = np.eye(4), np.zeros((4, 3))
    with pytest.raises(ValueError, match="field `H`: wrong shape"):
        contactlab.GeneralizedProblem(M, np.zeros((3, 3)), np.zeros(4), np.zeros(3), [0.5])
    with pytest.raises(ValueError, match="field `f`: wrong shape"):
        contactlab.GeneralizedProblem(M, H, np.zeros(3), np.zeros(3), [0.5])
    with pytest.raises(ValueError, match="field `M`: not positive definite"):
        contactlab.GeneralizedProblem(-M, H, np.zeros(4), np.zeros(3), [0.5])
    with pytest.raises(ValueError, match="field `mu`"):
        contactlab.GeneralizedProblem(M, H, np.zeros(4), np.zeros(3), [math.nan])


def test_read_gives_fclib_json_and_npy_problems(tmp_path):
    rover = contactlab.read(DATA / "problems" / "Rover4396.hdf5")
    assert isinstance(rover, contactlab.LocalProblem) and rover.num_contacts > 0
    g = contactlab.read(DATA / "mujoco" / "global" / "clutter_n8_seed7_step0100_nc20.json")
    assert isinstance(g, contactlab.GeneralizedProblem) and g.num_contacts == 20
    for k in ("W", "q", "mu"):
        np.save(tmp_path / f"{k}.npy", getattr(rover, k))
    again = contactlab.read(tmp_path)
    np.testing.assert_array_equal(again.W, rover.W)
    np.testing.assert_array_equal(again.q, rover.q)


def test_read_names_the_file_that_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="nope.json"):
        contactlab.read(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"W": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "q": [0, 0, 0], "mu": [-1]}')
    with pytest.raises(ValueError, match="bad.json.*negative friction"):
        contactlab.read(bad)


def test_a_local_problem_of_constraint_blocks_and_its_errors():
    import numpy as np

    W = np.diag([2.0, 1.0, 1.0, 1.0, 1.0])
    q = np.array([-1.0, -1.0, 2.0, 0.0, 0.5])
    blocks = [{"kind": "limit"}, {"kind": "contact", "mu": [0.5, 0.5]}, {"kind": "friction_loss", "f_max": 0.2}]
    p = contactlab.LocalProblem(W, q, constraints=blocks)
    assert p.kinds == ["limit", "contact", "friction_loss"]
    assert p.constraints == blocks
    s = contactlab.solve(p, "coulomb", "pgs", tol=1e-12)
    assert s.status == "converged"
    np.testing.assert_allclose(s.r, [0.5, 1.0, -0.5, 0.0, -0.2], atol=1e-12)
    with pytest.raises(Exception, match="sap\\+clarabel does not take limit: it takes coulomb \\(`clarabel`: "):
        contactlab.solve(p, "sap", "clarabel")
    assert contactlab.solve(p, "sap", "newton-merit", tol=1e-10).status == "converged"
    # The ruler on an answer from elsewhere, every row by its block's terms.
    assert contactlab.evaluate(p, s.r)["natural_map"] < 1e-12
    assert contactlab.evaluate(p, [0.5, 1.0, -0.5, 0.0, -0.3])["cone_violation"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="5 entries"):
        contactlab.evaluate(p, [0.5, 1.0, -0.5])
    kinds = {(r["formulation"], r["optimizer"]): r["kinds"] for r in contactlab.pairs()}
    assert kinds[("coulomb", "pgs")] == ["coulomb", "contact", "equality", "limit", "friction_loss"]
    assert kinds[("coulomb", "admm")] == kinds[("coulomb", "pgs")]
    assert kinds[("coulomb", "bisection-sor")] == kinds[("coulomb", "pgs")]  # condim 4, 6 refused at its start
    assert kinds[("min-map", "newton")] == kinds[("implicit-ncp", "todorov")] == kinds[("coulomb", "pgs")]
    assert kinds[("sap", "newton-merit")] == kinds[("coulomb", "pgs")]
    refuses = {(r["formulation"], r["optimizer"]): r["refuses"] for r in contactlab.pairs()}
    assert refuses[("sap", "newton-merit")] == {}
    assert set(refuses[("sap", "clarabel")]) == {"contact", "equality", "limit", "friction_loss"}
    assert refuses[("sap", "clarabel")]["limit"].startswith("`clarabel`: the conic programs")
    with pytest.raises(ValueError, match="not both"):
        contactlab.LocalProblem(W, q, mu=[0.5], constraints=blocks)
    with pytest.raises(ValueError, match="constraints"):
        contactlab.LocalProblem(W, q, constraints=[{"kind": "spring"}])
    with pytest.raises(ValueError, match="f_max"):
        contactlab.LocalProblem(W, q, constraints=blocks[:2] + [{"kind": "friction_loss", "f_max": -1.0}])


def test_a_generalized_problem_of_constraint_blocks_carries_its_step():
    import numpy as np

    # Two bodies of two dofs; rows: a limit on dof 0, a condim-3 contact on dofs 1-3, a
    # friction loss on dof 2.
    M = np.diag([2.0, 1.0, 1.0, 1.0])
    H = np.zeros((4, 5))
    H[0, 0], H[1, 1], H[2, 2], H[3, 3], H[2, 4] = 1.0, 1.0, 1.0, 1.0, 1.0
    f = np.array([-2.0, -1.0, 2.0, 0.0])
    blocks = [{"kind": "limit"}, {"kind": "contact", "mu": [0.5, 0.3]}, {"kind": "friction_loss", "f_max": 0.2}]
    t = np.array([0.1, 0.2, 0.0, 0.0, 0.0])
    p = contactlab.GeneralizedProblem(
        M, H, f, np.zeros(5), constraints=blocks, phi0=[-0.01, -0.02, 0, 0, 0], dt=0.01, target=t
    )
    assert p.kinds == ["limit", "contact", "friction_loss"] and p.dt == 0.01
    assert p.constraints == blocks
    local = p.to_local()
    np.testing.assert_allclose(local.W, H.T @ np.linalg.solve(M, H), atol=1e-15)
    np.testing.assert_allclose(local.q, H.T @ np.linalg.solve(M, f) - t, atol=1e-15)
    with pytest.raises(ValueError, match="phi0"):
        contactlab.GeneralizedProblem(M, H, f, np.zeros(5), constraints=blocks, phi0=[0.0])
    with pytest.raises(ValueError, match="target"):
        contactlab.GeneralizedProblem(M, H, f, np.zeros(5), constraints=blocks, target=[np.nan] * 5)
