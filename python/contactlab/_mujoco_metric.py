"""The metric a MuJoCo step's constraint impulses act in, and the free velocity, per integrator.

A step of MuJoCo advances the velocity by ``Mhat (v - qvel) = h (qfrc_smooth + J' f)`` up to
terms its integrator treats implicitly. Which matrix ``Mhat`` that is decides the contact
problem's ``W = J Mhat^-1 J'`` and ``v* = qvel + h Mhat^-1 qfrc_smooth'``:

- ``euler``: MuJoCo solves its constraints in ``M`` and then, with ``eulerdamp`` on (the default)
  and joint damping ``D``, integrates ``(M + h D) qacc = qfrc_smooth + qfrc_constraint``. The step's
  metric is ``M + h D`` and ``v* = qvel + h (M + h D)^-1 qfrc_smooth``: the impulses of this
  problem hold their complementarity on the velocity the step keeps. Without damping (or with
  ``eulerdamp`` disabled) it is ``M``.
- ``implicitfast`` and ``implicit``: ``M``, as MuJoCo's constraint solver uses; MuJoCo then
  integrates with ``M - h qDeriv`` (the velocity derivative of the smooth forces), which this
  problem does not include.
- ``discrete`` (MuJoCo 3.13 and later): the constraint solve and the implicit update are one, in
  ``M + h D + h^2 K`` with ``K`` the joint stiffness, and the spring's implicit part on the right:
  ``v* = qvel + h Mhat^-1 (qfrc_smooth - h K qvel)``. (Checked against MuJoCo's ``efc_AR`` and its
  ``qacc_smooth`` with the PGS solver; with the Newton solver MuJoCo's ``qacc_smooth`` is not this
  quantity, and it is not used.)
- ``RK4``: refused; its step is four evaluations, not one constraint problem.

``D`` and ``K`` are the joints' own (``dof_damping``, ``jnt_stiffness``); a model whose
actuators or tendons add velocity or position terms that an implicit integrator treats
implicitly is refused by :func:`metric` where its metric would differ.
"""

from __future__ import annotations

import numpy as np


def _mj():
    import mujoco

    return mujoco


def _names():
    mj = _mj()
    return {
        int(mj.mjtIntegrator.mjINT_EULER): "euler",
        int(mj.mjtIntegrator.mjINT_RK4): "rk4",
        int(mj.mjtIntegrator.mjINT_IMPLICIT): "implicit",
        int(mj.mjtIntegrator.mjINT_IMPLICITFAST): "implicitfast",
        int(getattr(mj.mjtIntegrator, "mjINT_DISCRETE", -1)): "discrete",
    }


def integrator(model) -> str:
    """The model's integrator by name: ``euler``, ``rk4``, ``implicit``, ``implicitfast`` or
    ``discrete``."""
    return _names().get(int(model.opt.integrator), f"integrator {int(model.opt.integrator)}")


def joint_stiffness(model) -> np.ndarray:
    """The diagonal ``K`` of the joints' stiffness per dof (hinge and slide joints; a ball or
    free joint's stiffness is refused by :func:`metric` under ``discrete``)."""
    mj = _mj()
    k = np.zeros(int(model.nv))
    for j in range(int(model.njnt)):
        if model.jnt_stiffness[j] == 0.0:
            continue
        kind = int(model.jnt_type[j])
        if kind in (int(mj.mjtJoint.mjJNT_HINGE), int(mj.mjtJoint.mjJNT_SLIDE)):
            k[int(model.jnt_dofadr[j])] = float(model.jnt_stiffness[j])
        else:
            raise ValueError(
                f"MuJoCo model: joint {j} is a ball or free joint with stiffness, whose implicit "
                "part under the discrete integrator contactlab does not form"
            )
    return k


def _implicit_tendons(model):
    if np.any(np.asarray(model.tendon_damping) != 0.0) or np.any(
        np.asarray(model.tendon_stiffness) != 0.0
    ):
        raise ValueError(
            "MuJoCo model: tendon damping or stiffness, which the integrator treats implicitly "
            "beside the joints' (contactlab forms the joints' D and K only)"
        )


def _implicit_actuators(model):
    mj = _mj()
    affine = int(mj.mjtBias.mjBIAS_AFFINE)
    for i in range(int(model.nu)):
        if int(model.actuator_biastype[i]) == affine and np.any(
            np.asarray(model.actuator_biasprm[i, 1:3]) != 0.0
        ):
            raise ValueError(
                f"MuJoCo model: actuator {i} has a position or velocity gain (affine bias), "
                "which the discrete integrator treats implicitly beside the joints' (contactlab "
                "forms the joints' D and K only)"
            )


def _polynomial_damping(model):
    """Refuses the damping Euler treats implicitly beside ``dof_damping`` (MuJoCo 4's damping
    polynomials and actuator damping), whose ``Mhat`` contactlab does not form."""
    for field in ("dof_dampingpoly", "actuator_damping", "actuator_dampingpoly"):
        values = np.asarray(getattr(model, field, np.zeros(0)))
        if np.any(values != 0.0):
            raise ValueError(
                f"MuJoCo model: {field} is set, damping the Euler integrator treats implicitly "
                "beside dof_damping (contactlab forms M + h diag(dof_damping) only)"
            )


def metric(model, data):
    """``(Mhat, v_star, name)`` of the state ``data`` (after ``mj_forward``): the metric the
    step's constraint impulses act in, the free velocity, and the integrator's name (see the
    module documentation). Refuses RK4 and implicit terms it does not form, naming them."""
    mj = _mj()
    name = integrator(model)
    if name == "rk4":
        raise ValueError(
            "MuJoCo model: the RK4 integrator takes four evaluations a step, not one constraint "
            "problem: use euler, implicitfast or discrete"
        )
    nv, h = int(model.nv), float(model.opt.timestep)
    M = np.zeros((nv, nv))
    mj.mj_fullM(model, data, M)
    qvel = np.asarray(data.qvel, dtype=float)
    smooth = np.asarray(data.qfrc_smooth, dtype=float)
    damping = np.asarray(model.dof_damping, dtype=float)
    if name == "euler":
        off = int(model.opt.disableflags)
        eulerdamp = not off & (
            int(mj.mjtDisableBit.mjDSBL_EULERDAMP) | int(mj.mjtDisableBit.mjDSBL_DAMPER)
        )
        if eulerdamp:
            _polynomial_damping(model)
        if eulerdamp and np.any(damping != 0.0):
            _implicit_tendons(model)
            Mhat = M + h * np.diag(damping)
            return Mhat, qvel + h * np.linalg.solve(Mhat, smooth), name
        return M, qvel + h * np.asarray(data.qacc_smooth, dtype=float), name
    if name == "discrete":
        _implicit_tendons(model)
        _implicit_actuators(model)
        K = joint_stiffness(model)
        Mhat = M + h * np.diag(damping) + h * h * np.diag(K)
        return Mhat, qvel + h * np.linalg.solve(Mhat, smooth - h * K * qvel), name
    return M, qvel + h * np.asarray(data.qacc_smooth, dtype=float), name
