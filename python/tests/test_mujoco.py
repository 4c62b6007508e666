"""MuJoCo's contact problem: W and the free velocity against an independent computation,
sparse and dense Jacobians, MuJoCo's own regularised answer, and what is refused."""

import numpy as np
import pytest
import mujoco

import contactlab
from conftest import balls_xml, settled
from robots import jacobian


def targets(m, d):
    """Each row's rigid target (the position part of MuJoCo's reference, `blocks`)."""
    return np.concatenate([b["target"] for b in contactlab.mujoco.blocks(m, d)])


def independent(m, d):
    """`W = J M^-1 J'` and `q = J (qvel + h qacc_smooth) - t` from MuJoCo's arrays, with NumPy,
    expanding a sparse `efc_J` by hand (`robots.jacobian`)."""
    nv = m.nv
    J = jacobian(m, d)
    M = np.zeros((nv, nv))
    mujoco.mj_fullM(m, d, M)
    W = J @ np.linalg.solve(M, J.T)
    q = J @ (d.qvel + m.opt.timestep * d.qacc_smooth) - targets(m, d)
    return W, q


def rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("n, jacobian, sparse", [(14, "auto", True), (8, "dense", False)])
def test_w_and_the_free_velocity_match_an_independent_computation(n, jacobian, sparse):
    m, d = settled(balls_xml(n, jacobian=jacobian), steps=60)
    assert bool(mujoco.mj_isSparse(m)) == sparse
    if sparse:
        assert m.nv > 60
    assert d.ncon >= n  # every ball on the floor or on another
    p = contactlab.mujoco.problem(m, d)
    assert p.num_contacts == d.ncon and p.num_dofs == m.nv
    local = p.to_local()
    W, q = independent(m, d)
    assert rel(local.W, W) <= 1e-10
    assert rel(local.q, q) <= 1e-10
    np.testing.assert_array_equal(local.mu, [0.6] * d.ncon)


def test_mujocos_answer_and_regularisation_come_in_the_same_row_order():
    m, d = settled(balls_xml(8), steps=60)
    mj = contactlab.mujoco.impulses(m, d)
    p = contactlab.mujoco.problem(m, d)
    n = 3 * p.num_contacts
    assert mj["r"].shape == mj["R"].shape == mj["v_ref"].shape == (n,)
    np.testing.assert_array_equal(mj["r"], m.opt.timestep * d.efc_force[:n])
    assert np.all(mj["R"] > 0)
    # MuJoCo's impulses lie in the friction cones and push (normal first).
    r = mj["r"].reshape(-1, 3)
    assert np.all(r[:, 0] >= 0)
    assert np.all(np.linalg.norm(r[:, 1:], axis=1) <= 0.6 * r[:, 0] * (1 + 1e-6) + 1e-12)
    # They nearly solve MuJoCo's regularised problem: y = (W + R) r + q - v_ref is in the
    # dual cone and complementary to r, to the accuracy of MuJoCo's solver.
    local = p.to_local()
    # MuJoCo's free velocity has no rigid target: add back the one `q` carries.
    y = (local.W + np.diag(mj["R"])) @ mj["r"] + local.q + targets(m, d) - mj["v_ref"]
    gap = np.abs((y.reshape(-1, 3) * r).sum(axis=1)).max()
    assert gap <= 1e-6 * max(1.0, np.abs(y).max() * np.abs(r).max())


def test_the_rigid_solution_differs_from_mujocos_regularised_one():
    m, d = settled(balls_xml(8), steps=60)
    s = contactlab.solve(contactlab.mujoco.problem(m, d), tol=1e-10)
    assert s.status == "converged"
    assert np.abs(s.r - contactlab.mujoco.impulses(m, d)["r"]).max() > 0


def test_pyramidal_cones_are_refused_with_how_to_switch():
    m, d = settled(balls_xml(4, cone="pyramidal"), steps=5)
    with pytest.raises(ValueError, match="pyramidal.*mjCONE_ELLIPTIC"):
        contactlab.mujoco.problem(m, d)


@pytest.mark.parametrize(
    "extra, kind",
    [
        (
            '<body pos="1.5 0 0.5"><joint type="hinge" range="-10 10" limited="true"/>'
            '<geom type="capsule" size="0.05 0.2" contype="0" conaffinity="0"/></body>',
            "limit",
        ),
        (
            '<body pos="1.5 0 0.5"><joint type="hinge" frictionloss="1"/>'
            '<geom type="capsule" size="0.05 0.2" contype="0" conaffinity="0"/></body>',
            "friction_loss",
        ),
        (None, "contact (condim 4)"),
    ],
)
def test_limits_friction_loss_and_condim_4_are_rows_of_the_problem(extra, kind):
    xml = balls_xml(3).replace('condim="3"', 'condim="4"') if extra is None else balls_xml(2, extra=extra)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    if "range" in xml:
        d.qpos[-1] = 1.0  # beyond the 10 degree limit: the limit is active
    for _ in range(5):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    p = contactlab.mujoco.problem(m, d)
    assert kind in contactlab.mujoco.kinds(m, d)
    assert kind.split(" ")[0] in p.kinds and p.dt == m.opt.timestep
    # Its local form is local_problem's, row for row.
    local, direct = p.to_local(), contactlab.mujoco.local_problem(m, d)
    assert rel(local.W, direct.W) <= 1e-10 and rel(local.q, direct.q) <= 1e-10
    assert local.constraints == direct.constraints


def test_a_damped_model_under_euler_is_solved_in_the_steps_metric():
    # MuJoCo integrates joint damping implicitly (eulerdamp): the step's impulses act in
    # M + h D, and the free velocity is the one MuJoCo's step reaches without constraints.
    xml = balls_xml(
        2,
        extra='<body pos="1.5 0 0.5"><joint type="hinge" damping="3"/>'
        '<geom type="capsule" size="0.05 0.2" contype="0" conaffinity="0"/></body>',
    )
    m, d = settled(xml, steps=60)
    d.qvel[-1] = 2.0  # the damped hinge moves
    mujoco.mj_forward(m, d)
    p = contactlab.mujoco.problem(m, d)
    J = np.asarray(contactlab.mujoco.jacobian(m, d))
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    h = m.opt.timestep
    Mhat = M + h * np.diag(m.dof_damping)
    v_star = d.qvel + h * np.linalg.solve(Mhat, d.qfrc_smooth)
    local = p.to_local()
    assert rel(local.W, J @ np.linalg.solve(Mhat, J.T)) <= 1e-10
    assert rel(local.q, J @ v_star - targets(m, d)) <= 1e-10
    # The damping matters: in M alone the free velocity is another.
    assert abs(v_star[-1] - (d.qvel[-1] + h * d.qacc_smooth[-1])) > 1e-3
    np.testing.assert_allclose(contactlab.mujoco.metric(m, d)[1], v_star, rtol=1e-12, atol=1e-15)


def test_anisotropic_friction_is_read_row_by_row_not_as_its_first_coefficient():
    # An explicit <pair> can give a contact two sliding coefficients: each row keeps its own.
    m, d = settled(balls_xml(3), steps=60)
    d.contact[0].friction[1] = 0.3
    first = [b for b in contactlab.mujoco.blocks(m, d) if b["kind"] == "contact"][0]
    assert first["mu"] == [0.6, 0.3]
    p = contactlab.mujoco.problem(m, d)
    assert p.constraints[0] == {"kind": "contact", "mu": [0.6, 0.3]}
    assert p.to_local().constraints[0]["mu"] == [0.6, 0.3]


def test_mujoco_is_imported_only_when_used():
    import subprocess
    import sys

    code = "import sys, contactlab; assert 'mujoco' not in sys.modules; contactlab.mujoco; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
