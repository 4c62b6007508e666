"""The contact problem of a MuJoCo state, in the project's convention (normal first).

After ``mujoco.mj_forward(model, data)``, MuJoCo's constraint solver faces, in impulses
``r = h * efc_force`` (``h`` the time step), the problem ``M v = J' r + M v*`` with
``v* = qvel + h * qacc_smooth`` and contact velocities ``u = J v``: FCLib's global form
with ``M`` (``mj_fullM``), ``H = J'`` (``efc_J``, dense or sparse), ``f = M v*``, ``w = 0``
and one friction coefficient per contact. :func:`problem` gives it as a
:class:`contactlab.GeneralizedProblem`, whose ``to_local()`` is ``W = J M^-1 J'`` and
``q = J v*``.

Only elliptic-cone contacts of ``condim`` 3 are the Coulomb problem the project solves, and
only where MuJoCo's solver metric is ``M``: any other constraint row (joint or tendon limits,
equality constraints, friction loss, frictionless or pyramidal contacts, condim 4 or 6),
joint damping under the Euler integrator (MuJoCo integrates it implicitly, so the step's
metric is ``M + h D``), and the implicit integrators with any velocity-dependent force are
refused with a ``ValueError`` naming the cause.

MuJoCo itself solves a regularised problem, ``min 1/2 r'(W + R) r + r'(q - v_ref)`` over the
cones; :func:`impulses` gives its answer with its ``R`` and ``v_ref`` so that the comparison
is fair (MuJoCo's impulses do not solve the rigid problem). The ``mujoco`` package is
imported only when these functions are called.
"""

from __future__ import annotations

import numpy as np

from ._contactlab import GeneralizedProblem

__all__ = ["problem", "impulses", "jacobian"]


def _mj():
    try:
        import mujoco
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "contactlab.mujoco needs MuJoCo's Python bindings: pip install mujoco"
        ) from e
    return mujoco


_KINDS = {
    "mjCNSTR_EQUALITY": "an equality constraint",
    "mjCNSTR_FRICTION_DOF": "joint friction loss",
    "mjCNSTR_FRICTION_TENDON": "tendon friction loss",
    "mjCNSTR_LIMIT_JOINT": "a joint limit",
    "mjCNSTR_LIMIT_TENDON": "a tendon limit",
    "mjCNSTR_CONTACT_FRICTIONLESS": "a frictionless contact (condim 1)",
    "mjCNSTR_CONTACT_PYRAMIDAL": "a pyramidal-cone contact (set <option cone=\"elliptic\"/>)",
}


def _check(model, data):
    """Refuses what is not the rigid Coulomb problem in the metric ``M``."""
    mj = _mj()
    nefc = int(data.nefc)
    if model.opt.cone != mj.mjtCone.mjCONE_ELLIPTIC and data.ncon > 0:
        raise ValueError(
            "MuJoCo model: pyramidal friction cones (opt.cone = pyramidal); contactlab takes "
            'elliptic cones only: set <option cone="elliptic"/>'
        )
    types = np.asarray(data.efc_type[:nefc])
    elliptic = int(mj.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC)
    for name, why in _KINDS.items():
        code = int(getattr(mj.mjtConstraint, name))
        hit = np.flatnonzero(types == code)
        if hit.size:
            raise ValueError(
                f"MuJoCo state: constraint row {int(hit[0])} is {why} "
                f"({hit.size} such rows); contactlab takes elliptic condim-3 contacts only"
            )
    unknown = np.flatnonzero(types != elliptic)
    if unknown.size:
        raise ValueError(
            f"MuJoCo state: constraint row {int(unknown[0])} has type {int(types[unknown[0]])}, "
            "not an elliptic contact"
        )
    for i in range(int(data.ncon)):
        c = data.contact[i]
        if int(c.efc_address) < 0:
            continue  # excluded (e.g. beyond its margin): no rows
        if int(c.dim) != 3:
            raise ValueError(
                f"MuJoCo state: contact {i} has condim {int(c.dim)}; contactlab takes condim 3 "
                "(normal and two tangential directions) only"
            )
    integrator = int(model.opt.integrator)
    damped = bool(np.any(np.asarray(model.dof_damping) != 0.0))
    if integrator == int(mj.mjtIntegrator.mjINT_EULER) and damped:
        disabled = int(model.opt.disableflags) & int(mj.mjtDisableBit.mjDSBL_EULERDAMP)
        if not disabled:
            raise ValueError(
                "MuJoCo model: joint damping under the Euler integrator, which MuJoCo integrates "
                "implicitly: the step's metric is M + h D, not M (remove the damping or disable "
                "eulerdamp)"
            )
    implicit = integrator in (
        int(mj.mjtIntegrator.mjINT_IMPLICIT),
        int(mj.mjtIntegrator.mjINT_IMPLICITFAST),
    )
    if implicit and (damped or model.nu > 0 or model.opt.viscosity > 0 or model.opt.density > 0):
        raise ValueError(
            "MuJoCo model: an implicit integrator with velocity-dependent forces (joint damping, "
            "actuators or fluid drag): the step's metric is not M"
        )


def jacobian(model, data) -> np.ndarray:
    """MuJoCo's constraint Jacobian ``efc_J`` as a dense ``nefc x nv`` array, from either of
    its layouts (dense, or compressed rows when ``mj_isSparse``)."""
    mj = _mj()
    nefc, nv = int(data.nefc), int(model.nv)
    if mj.mj_isSparse(model):
        J = np.zeros((nefc, nv))
        rownnz = np.asarray(data.efc_J_rownnz[:nefc])
        rowadr = np.asarray(data.efc_J_rowadr[:nefc])
        colind = np.asarray(data.efc_J_colind)
        values = np.asarray(data.efc_J)
        for i in range(nefc):
            a, n = int(rowadr[i]), int(rownnz[i])
            J[i, colind[a : a + n]] = values[a : a + n]
        return J
    return np.asarray(data.efc_J[: nefc * nv]).reshape(nefc, nv).copy()


def _sparse_jacobian_t(model, data):
    """``H = J'`` as ``scipy.sparse`` when scipy is installed and MuJoCo's Jacobian is
    sparse, else dense."""
    mj = _mj()
    if not mj.mj_isSparse(model):
        return jacobian(model, data).T
    try:
        import scipy.sparse as sp
    except ImportError:
        return jacobian(model, data).T
    nefc, nv = int(data.nefc), int(model.nv)
    rownnz = np.asarray(data.efc_J_rownnz[:nefc]).astype(np.int64)
    rowadr = np.asarray(data.efc_J_rowadr[:nefc]).astype(np.int64)
    colind = np.asarray(data.efc_J_colind)
    values = np.asarray(data.efc_J)
    idx = np.concatenate([np.arange(a, a + n) for a, n in zip(rowadr, rownnz)] or [np.zeros(0, int)])
    rows = np.repeat(np.arange(nefc), rownnz)
    J = sp.coo_matrix((values[idx], (rows, colind[idx])), shape=(nefc, nv))
    return J.T.tocsc()


def _mass(model, data) -> np.ndarray:
    mj = _mj()
    nv = int(model.nv)
    M = np.zeros((nv, nv))
    mj.mj_fullM(model, data, M)
    return M


def _friction(model, data) -> np.ndarray:
    """One friction coefficient per contact with constraint rows, in row order."""
    mus = []
    for i in range(int(data.ncon)):
        c = data.contact[i]
        if int(c.efc_address) >= 0:
            mus.append((int(c.efc_address), float(c.friction[0])))
    mus.sort()
    return np.array([m for _, m in mus], dtype=float)


def problem(model, data) -> GeneralizedProblem:
    """The contact problem of the state ``data`` (after ``mj_forward``) as a
    :class:`contactlab.GeneralizedProblem`: ``M`` from ``mj_fullM``, ``H = J'`` (sparse when
    MuJoCo's Jacobian is), ``f = M v*`` with ``v* = qvel + h qacc_smooth``, ``w = 0``, ``mu``
    per contact. Refuses (``ValueError`` naming the cause) any constraint row that is not an
    elliptic condim-3 contact, pyramidal cones, and a solver metric other than ``M``."""
    _check(model, data)
    M = _mass(model, data)
    v_star = np.asarray(data.qvel) + model.opt.timestep * np.asarray(data.qacc_smooth)
    H = _sparse_jacobian_t(model, data)
    mu = _friction(model, data)
    nc = mu.size
    return GeneralizedProblem(M, H, M @ v_star, np.zeros(3 * nc), mu)


def impulses(model, data) -> dict:
    """MuJoCo's own answer at ``data`` (after ``mj_forward``) and the regularisation it
    solves with, three numbers per contact in row order: ``r = h * efc_force``, its
    regulariser ``R`` (``efc_R``) and reference velocity ``v_ref = J qvel + h * efc_aref``,
    so that MuJoCo's problem ``min 1/2 r'(W + diag(R)) r + r'(q - v_ref)`` over the cones can
    be formed beside the rigid one (its impulses do not solve the rigid problem)."""
    _check(model, data)
    nefc = int(data.nefc)
    h = model.opt.timestep
    J = jacobian(model, data)
    return {
        "r": h * np.asarray(data.efc_force[:nefc]).copy(),
        "R": np.asarray(data.efc_R[:nefc]).copy(),
        "v_ref": J @ np.asarray(data.qvel) + h * np.asarray(data.efc_aref[:nefc]),
    }
