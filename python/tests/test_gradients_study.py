"""The gradients study's runner (`experiments/peers/gradients.py`) at CI size: on MuJoCo's first
exported steps the natural map's and SAP's derivatives agree with central differences of their
solves at the step the runner picks, reverse mode is forward mode's adjoint, the first-order
pairs' derivatives come within the bar of the Newton-type pair's, and the runner's direction
keeps what it must (a symmetric `W` or `M`, `mu` only where there is friction)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import contactlab

PEERS = Path(__file__).resolve().parents[2] / "experiments" / "peers"
sys.path.insert(0, str(PEERS))
import gradients  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def first_steps(count=2):
    """MuJoCo's first exported steps, as the study reads them."""
    return gradients.problems("mujoco", small=True)[:count]


def test_derivatives_agree_with_the_differences_of_the_solve():
    rng = np.random.default_rng(43)
    for name, p in first_steps():
        rec = gradients.study(p, name, "mujoco", rng)
        assert rec["status"] == "converged" and rec["non_unique"] == 0.0, rec
        assert rec["fd"] == "consistent", rec
        assert rec["derivative_error"] <= 1e-6, (name, rec["derivative_error"])
        assert rec["adjoint_gap"] <= 1e-10
        for key in ("pgs", "admm"):
            fo = rec["first_order_pairs"][key]
            assert fo["status"] == "converged"
            assert fo["gap"] <= 100 * max(fo["residual"], 1e-12), (key, fo)
        sap = gradients.sap_study(p, name, "mujoco", rng)
        assert sap["status"] == "converged" and sap["fields"] == "f,w,mu", sap
        assert sap["fd"] == "consistent" and sap["derivative_error"] <= 1e-6, (name, sap.get("derivative_error"))


def test_the_direction_is_symmetric_where_the_data_are_and_frictionless_rows_stay():
    _, p = first_steps(1)[0]
    d = gradients.direction(p, np.random.default_rng(1), True)
    assert set(d) == {"f", "w", "M", "H", "mu"}
    np.testing.assert_allclose(d["M"], d["M"].T, rtol=0, atol=0)
    H = gradients.dense(p.H)
    assert np.all(d["H"][H == 0] == 0)
    local = contactlab.LocalProblem(np.eye(6), -np.ones(6), constraints=[
        {"kind": "contact", "mu": [0.5, 0.5]}, {"kind": "limit"}, {"kind": "limit"},
        {"kind": "limit"}])
    d = gradients.direction(local, np.random.default_rng(2), True)
    assert d["mu"][0] != 0 and np.all(d["mu"][1:] == 0)
    # Where the impulses are not unique only `q` within `W`'s range and `mu` move.
    d = gradients.direction(local, np.random.default_rng(2), False)
    assert np.all(d["W"] == 0)


def test_a_rollouts_chain_rule_is_the_derivative_of_the_rollout_and_identifies_friction():
    """The sliding box (`rollout.py`): over a horizon before the stop the chain rule through the
    steps' derivatives agrees with central differences of the whole rollout in `mu`, `v0` and
    the applied force; the closed form `dx/dv0 = t` holds; Gauss-Newton with it recovers `mu`
    and `v0` from a short noisy trajectory started half again off."""
    pytest.importorskip("mujoco")
    import rollout

    theta = (0.5, 1.0, 0.2)
    steps = 60
    _, chain = rollout.rollout(theta, steps)
    fd = rollout.rollout_differences(theta, steps)
    assert np.max(np.abs(chain[-1] - fd[-1]) / np.abs(fd[-1])) <= 1e-6, (chain[-1], fd[-1])
    assert abs(chain[-1, 1] - steps * rollout.DT) <= 1e-9
    y = rollout.noisy_samples(rollout.TRUE, 300, 1e-4, seed=3)
    fitted, _, _ = rollout.identify(y, rollout.GUESS)
    assert abs(fitted[0] - rollout.TRUE[0]) <= 0.01 * rollout.TRUE[0], fitted
    assert abs(fitted[1] - rollout.TRUE[1]) <= 0.01 * rollout.TRUE[1], fitted
