"""`contactlab.mujoco.step`: one MuJoCo step with the constraint solve done by a pair.

The plumbing adds nothing of its own: with MuJoCo's own answer written back the step is
`mj_step` to the bit, and with only its forces it is within MuJoCo's own residual. The pair's
answer is the velocity the step keeps (in the step's metric), warm starts follow MuJoCo's
renumbered contacts, and a model the study never saw (dm_control's cheetah) steps unchanged.
"""

import numpy as np
import pytest

import contactlab
from contactlab import mujoco as cm
from contactlab._mujoco_step import _rotated

from robots import state

mujoco = pytest.importorskip("mujoco")


def _copy(m, d):
    out = mujoco.MjData(m)
    mujoco.mj_copyData(out, m, d)
    return out


def _integrator(m, name):
    m.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{name.upper()}")
    return m


def _state_fields(d):
    return {
        "qpos": d.qpos,
        "qvel": d.qvel,
        "act": d.act,
        "qacc": d.qacc,
        "qacc_warmstart": d.qacc_warmstart,
        "sensordata": d.sensordata,
        "efc_force": d.efc_force[: d.nefc],
    }


def _relative(a, b):
    scale = max(1.0, float(np.max(np.abs(b)))) if np.size(b) else 1.0
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / scale if np.size(b) else 0.0


@pytest.mark.parametrize("name", ["humanoid", "adroit"])
@pytest.mark.parametrize("integrator", ["euler", "implicitfast"])
def test_mujoco_answer_written_back_is_mj_step(name, integrator):
    """With MuJoCo's own `efc_force` and `qacc` written back, `forward_smooth` + `integrate`
    leave `data` where `mj_step` does, to 1e-14 relative in every field."""
    m, d = state(name, 0.5)
    _integrator(m, integrator)
    reference = _copy(m, d)
    mujoco.mj_step(m, reference)
    ours = _copy(m, d)
    ours.sensordata[:] = np.nan  # every sensor must be recomputed by the step itself
    cm.forward_smooth(m, ours)
    mujoco.mj_fwdConstraint(m, ours)
    assert ours.nefc > 10
    cm.integrate(m, ours, ours.efc_force[: ours.nefc].copy(), ours.qacc.copy())
    want = _state_fields(reference)
    for key, value in _state_fields(ours).items():
        assert _relative(value, want[key]) <= 1e-14, key
    assert ours.time == reference.time


@pytest.mark.parametrize("name", ["humanoid", "adroit"])
@pytest.mark.parametrize("integrator", ["euler", "implicitfast"])
def test_mujoco_forces_alone_within_its_own_residual(name, integrator):
    """With only `efc_force` substituted (`qacc` solved from it), the acceleration differs
    from MuJoCo's by at most 10 times MuJoCo's own `|M (qacc - qacc_smooth) - J' efc_force|`."""
    m, d = state(name, 0.5)
    _integrator(m, integrator)
    reference = _copy(m, d)
    mujoco.mj_forward(m, reference)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, reference, M)
    J = cm.jacobian(m, reference)
    force = reference.efc_force[: reference.nefc].copy()
    own = np.linalg.norm(M @ (reference.qacc - reference.qacc_smooth) - J.T @ force)
    ours = _copy(m, d)
    cm.forward_smooth(m, ours)
    cm.integrate(m, ours, force)
    gap = np.linalg.norm(M @ (ours.qacc - reference.qacc))
    assert own > 0.0
    assert gap <= 10.0 * own


def test_step_keeps_the_pairs_velocity_in_the_step_metric():
    """Under Euler with joint damping, `metric="step"` keeps the pair's `v` as the new velocity
    (the damping is inside the problem); `metric="mujoco"` solves in `M` and the integrator's
    damping then moves the velocity off the pair's."""
    m, d = state("humanoid", 0.5)
    assert np.any(m.dof_damping > 0.0)
    kept = {}
    for metric in ("step", "mujoco"):
        data = _copy(m, d)
        result = cm.step(m, data, "sap", "newton-merit", metric=metric, tol=1e-10)
        assert result.status == "converged"
        kept[metric] = np.linalg.norm(data.qvel - result.solution.v) / np.linalg.norm(data.qvel)
    assert kept["step"] <= 1e-10
    assert kept["mujoco"] >= 1e-4


@pytest.mark.parametrize("pair", [("sap", "newton-merit"), ("coulomb", "pgs")])
def test_cheetah_steps_200_times_unchanged(pair):
    """A model the study never used: dm_control's cheetah (cone switched to elliptic), 200
    steps with SAP and with PGS from its initial state, warm-started: every step accepted by
    the pair's ruler, the feet resting on the floor (over the last 20 steps no geom pair deeper
    than 5 mm; the deepest, 1.3 cm at the first impact, is the free fall of one 10 ms step,
    the same for MuJoCo) and the state finite."""
    m, d = state("cheetah", 0.0)
    table = cm.rollout(
        m, d, 200, *pair, record=lambda m, d: {"depth": float(np.min(d.contact.dist, initial=0.0))}
    )
    deepest = table["depth"][-20:].min()
    assert table.height == 200
    assert (table["status"] == "converged").all()
    assert table["contacts"].max() >= 2
    assert table["warm_rows"].sum() >= 0.9 * table["rows"].sum()
    assert deepest > -5e-3
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))


def test_rigid_pairs_agree_and_mujoco_rollout_is_mj_step():
    """PGS and ADMM solve the same rigid problem, so 100 cheetah steps end in the same state;
    `rollout` without a pair is `mj_step`, to the bit."""
    finals = []
    for pair in [("coulomb", "pgs"), ("coulomb", "admm")]:
        m, d = state("cheetah", 0.0)
        cm.rollout(m, d, 100, *pair, tol=1e-10)
        finals.append(d.qpos.copy())
    assert np.max(np.abs(finals[0] - finals[1])) <= 1e-6
    m, d = state("cheetah", 0.0)
    reference = _copy(m, d)
    table = cm.rollout(m, d, 50)
    for _ in range(50):
        mujoco.mj_step(m, reference)
    assert np.array_equal(d.qpos, reference.qpos)
    assert (table["status"] == "mujoco").all() and table["iterations"].sum() > 0


def test_warm_start_follows_renumbered_contacts():
    """Warm-started PGS needs fewer sweeps over 60 cheetah steps than cold, and the rows it
    starts warm are most of them."""
    sweeps = {}
    for warm in (True, False):
        m, d = state("cheetah", 0.5)
        table = cm.rollout(m, d, 60, "coulomb", "pgs", warm=warm)
        sweeps[warm] = int(table["iterations"].sum())
        if warm:
            assert table["warm_rows"][1:].sum() >= 0.8 * table["rows"][1:].sum()
        else:
            assert table["warm_rows"].sum() == 0
    assert sweeps[True] < sweeps[False]


def test_rotated_warm_state_keeps_the_world_vectors():
    """Carrying a contact's warm state to a turned frame keeps its tangent and rolling vectors
    in the world, and the normal and torsional numbers."""
    rng = np.random.default_rng(3)
    old = np.linalg.qr(rng.standard_normal((3, 3)))[0].T
    turn = np.array([[1, 0, 0], [0, np.cos(0.4), -np.sin(0.4)], [0, np.sin(0.4), np.cos(0.4)]])
    new = (old.T @ turn).T
    state6 = rng.standard_normal(6)
    out = _rotated(state6, old, new)
    assert out[0] == state6[0] and out[3] == state6[3]
    for a in (1, 4):
        before = state6[a] * old[1] + state6[a + 1] * old[2]
        after = out[a] * new[1] + out[a + 1] * new[2]
        assert np.allclose(before, after, atol=1e-14)


def test_bad_input_is_refused_naming_it():
    """RK4, the wrong number of forces and non-finite forces are refused with the cause, and
    `data` is not advanced."""
    m, d = state("cheetah", 0.5)
    rk4 = _integrator(m, "rk4")
    with pytest.raises(ValueError, match="RK4"):
        cm.step(rk4, _copy(m, d), "coulomb", "pgs")
    _integrator(m, "euler")
    data = _copy(m, d)
    cm.forward_smooth(m, data)
    t = data.time
    with pytest.raises(ValueError, match="forces for"):
        cm.integrate(m, data, np.zeros(data.nefc + 1))
    with pytest.raises(ValueError, match="not finite"):
        cm.integrate(m, data, np.full(data.nefc, np.nan))
    assert data.time == t
    with pytest.raises(ValueError, match="metric"):
        cm.step(m, _copy(m, d), "coulomb", "pgs", metric="euclid")


def test_solve_warm_vector_is_checked_and_used():
    """`solve(..., warm=s.warm)` restarts from a previous answer (no more iterations than
    cold), and a warm vector of the wrong length is a `ValueError` naming the rows."""
    m, d = state("cheetah", 0.5)
    p = cm.problem(m, d)
    cold = contactlab.solve(p, "coulomb", "pgs", tol=1e-10)
    again = contactlab.solve(p, "coulomb", "pgs", tol=1e-10, warm=cold.warm)
    assert cold.status == again.status == "converged"
    assert again.iterations <= 2 and cold.iterations > 2
    with pytest.raises(ValueError, match="rows"):
        contactlab.solve(p, "coulomb", "pgs", warm=np.zeros(p.H.shape[1] + 1))


def test_mujoco_reset_after_a_wild_answer_is_reported(monkeypatch):
    """An answer whose acceleration MuJoCo rejects (`mj_checkAcc` resets `data`) is reported
    as `reset_by_mujoco`, not as the pair's status."""
    import contactlab._mujoco_step as stepping

    real = stepping.solve

    class Wild:
        def __init__(self, s):
            self.status, self.warm, self.r = s.status, s.warm, np.full(s.r.size, 1e30)

    monkeypatch.setattr(stepping, "solve", lambda *a, **k: Wild(real(*a, **k)))
    m, d = state("cheetah", 0.5)
    result = cm.step(m, d, "coulomb", "pgs")
    assert result.reset and result.status == "reset_by_mujoco"
    assert d.time == pytest.approx(m.opt.timestep)  # one step from MuJoCo's reset state


def test_beside_mujoco_times_the_same_state_and_changes_nothing():
    """`beside_mujoco=True` times MuJoCo's `mj_fwdConstraint` warm and cold and the pair from
    zero on the step's own state, and the step keeps exactly what it would have kept without
    them (MuJoCo's outputs it overwrites are the ones the write-back replaces)."""
    m, d = state("humanoid", 0.5)
    plain, timed = _copy(m, d), _copy(m, d)
    first = [cm.step(m, x, "coulomb", "pgs") for x in (plain, timed)]
    kept = cm.step(m, plain, "coulomb", "pgs", warm=first[0])
    result = cm.step(m, timed, "coulomb", "pgs", warm=first[1], beside_mujoco=True)
    for field in ("qpos", "qvel", "qacc", "efc_force"):
        assert np.array_equal(getattr(plain, field), getattr(timed, field)), field
    assert np.array_equal(kept.solution.r, result.solution.r)
    b = result.beside
    assert b["mujoco_warm_s"] > 0.0 and b["mujoco_cold_s"] > 0.0 and b["cold_s"] > 0.0
    assert b["mujoco_cold_iterations"] >= 1 and b["cold_iterations"] >= result.solution.iterations
    assert b["cold_status"] == "converged"
    assert kept.beside == {} and first[1].beside == {}
    assert m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_WARMSTART == 0
