"""The rigid rows' drift targets made consistent (`contactlab.mujoco.consistent_targets`): the
corrected rows' targets become those of one least-squares correction velocity, and on the
falling humanoid's feet this is what lets the rigid pairs converge."""

import numpy as np
import pytest

import contactlab
from contactlab import mujoco as cm
from contactlab._mujoco_problem import _corrected_rows

from robots import state

mujoco = pytest.importorskip("mujoco")


def _redundant_jacobian(rng):
    """Twelve rows over six velocities, rank four: three rows repeated with a mix of them."""
    base = rng.standard_normal((4, 6))
    mix = rng.standard_normal((8, 4))
    return np.vstack([base, mix @ base])


def test_corrected_targets_are_one_motions_and_the_rest_unchanged():
    """The corrected rows' new targets are `J_c dv` for one `dv` (in the range of `J_c`), the
    change is orthogonal to that range (the least one), a second projection changes nothing,
    targets already consistent are kept, and the other rows keep theirs to the bit."""
    rng = np.random.default_rng(7)
    J = _redundant_jacobian(rng)
    t = rng.standard_normal(12)
    corrected = np.ones(12, dtype=bool)
    corrected[[2, 9]] = False
    out = cm.consistent_targets(J, t, corrected)
    Jc = J[corrected]
    dv, *_ = np.linalg.lstsq(Jc, out[corrected], rcond=None)
    assert np.allclose(Jc @ dv, out[corrected], atol=1e-12)
    assert np.allclose(Jc.T @ (t[corrected] - out[corrected]), 0.0, atol=1e-12)
    assert np.array_equal(out[~corrected], t[~corrected])
    assert np.allclose(cm.consistent_targets(J, out, corrected), out, atol=1e-12)
    reachable = J @ rng.standard_normal(6)
    assert np.allclose(cm.consistent_targets(J, reachable, corrected), reachable, atol=1e-12)
    assert np.linalg.norm(out[corrected] - t[corrected]) > 0.1


def test_corrected_rows_are_equalities_and_penetrating_limits_and_contacts():
    """Equality rows and every row of a limit or contact in penetration take part;
    speculative contacts and friction loss keep their own targets."""
    groups = [
        {"kind": "equality", "rows": (0, 3), "phi": [0.1, 0.0, 0.0]},
        {"kind": "friction_loss", "rows": (3, 4), "phi": [0.0]},
        {"kind": "contact", "rows": (4, 7), "phi": [-1e-3, 0.0, 0.0]},
        {"kind": "contact", "rows": (7, 10), "phi": [2e-3, 0.0, 0.0]},
        {"kind": "limit", "rows": (10, 11), "phi": [-1e-4]},
    ]
    want = [True] * 3 + [False] + [True] * 3 + [False] * 3 + [True]
    assert _corrected_rows(groups).tolist() == want


@pytest.mark.parametrize("seconds", [0.3, 0.5])
def test_consistent_targets_let_the_rigid_pairs_converge_on_the_humanoids_feet(seconds):
    """The humanoid lying on its redundant capsule contacts: with each row's own target the
    motion that removes the penetrations would slide the contacts, so no velocity meets every
    target and Levenberg-Marquardt, PGS and ADMM all stop far above the tolerance (500
    iterations); with the targets made consistent all three converge, and the targets moved
    by far less than their size."""
    m, d = state("humanoid", seconds)
    rows = cm.problem(m, d, targets="rows")
    consistent = cm.problem(m, d, targets="consistent")
    moved = np.linalg.norm(np.asarray(consistent.target) - np.asarray(rows.target))
    assert 0.0 < moved < 1e-2 * np.linalg.norm(rows.target)
    for formulation, optimizer in (("natural-map", "lm"), ("coulomb", "pgs"), ("coulomb", "admm")):
        before = contactlab.solve(rows, formulation, optimizer, tol=1e-8)
        after = contactlab.solve(consistent, formulation, optimizer, tol=1e-8)
        assert before.residual > 1e-7, (optimizer, before.status, before.residual)
        assert after.status == "converged", (optimizer, after.status, after.residual)


def test_step_solves_consistent_targets_by_default_and_refuses_unknown():
    """`step` forms the consistent targets unless told `targets="rows"`; an unknown choice is a
    `ValueError` naming it."""
    m, d = state("humanoid", 0.5)
    copy = mujoco.MjData(m)
    mujoco.mj_copyData(copy, m, d)
    assert cm.step(m, d, "natural-map", "lm").status == "converged"
    assert cm.step(m, copy, "natural-map", "lm", targets="rows").status != "converged"
    with pytest.raises(ValueError, match="targets"):
        cm.problem(m, d, targets="projected")
