"""The contact problem of a MuJoCo state (:mod:`contactlab.mujoco`'s problem side): MuJoCo's
Jacobian, the metric the problem is formed in, and the problem in generalized and contact-space
form, with MuJoCo's own answer beside it."""

from __future__ import annotations

import numpy as np

from ._contactlab import GeneralizedProblem, LocalProblem
from ._mujoco_metric import metric as _metric
from ._mujoco_rows import blocks


def _mj():
    try:
        import mujoco
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "contactlab.mujoco needs MuJoCo's Python bindings: pip install mujoco"
        ) from e
    return mujoco


def _check(model, data):
    """Refuses pyramidal cones, with how to switch (the rows are the pyramid's edges, a
    different friction law)."""
    mj = _mj()
    if model.opt.cone != mj.mjtCone.mjCONE_ELLIPTIC and data.ncon > 0:
        raise ValueError(
            "MuJoCo model: pyramidal friction cones (opt.cone = pyramidal); contactlab takes "
            "elliptic cones only: set model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC (or "
            '<option cone="elliptic"/>) and call mj_forward again'
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


def _constraints(groups) -> list:
    """The blocks as the problem types take them (``constraints=``)."""
    rows = []
    for b in groups:
        if b["kind"] == "equality":
            rows.append({"kind": "equality", "rows": b["rows"][1] - b["rows"][0]})
        elif b["kind"] == "friction_loss":
            rows.append({"kind": "friction_loss", "f_max": b["f_max"]})
        elif b["kind"] == "contact":
            rows.append({"kind": "contact", "mu": b["mu"]})
        else:
            rows.append({"kind": b["kind"]})
    return rows


def _phi0(groups) -> np.ndarray:
    """One position error per row (SAP's ``phi0``): ``efc_pos - efc_margin`` on equality,
    limit and contact normal rows, 0 on frictional and friction-loss rows."""
    out = []
    for b in groups:
        phi = list(b["phi"])
        if b["kind"] == "contact":
            phi = phi[:1] + [0.0] * (len(phi) - 1)
        elif b["kind"] == "friction_loss":
            phi = [0.0] * len(phi)
        out.extend(phi)
    return np.asarray(out, dtype=float)


#: Singular values of the corrected rows' ``J`` below this fraction of the largest are taken
#: as zero by :func:`consistent_targets`: exact redundancy (coplanar contacts of one rigid
#: face, a capsule's two contacts) leaves them at round-off (1e-16 relative), while nearly
#: parallel but distinct rows (a curved surface) keep theirs well above it and their targets.
RANK_RTOL = 1e-10


def consistent_targets(J: np.ndarray, t: np.ndarray, corrected: np.ndarray) -> np.ndarray:
    """The targets ``t`` with those of the ``corrected`` rows (a boolean mask) replaced by
    ``J_c dv``, the rows' velocities under the least-squares correction velocity
    ``dv = argmin |J_c dv - t_c|`` (the orthogonal projection of ``t_c`` onto the range of
    ``J_c``, singular values below ``RANK_RTOL`` of the largest taken as zero); the other rows
    keep theirs.

    Why: each row's target (the position part of MuJoCo's reference) corrects that row's own
    error, with frictional rows asking for no sliding. On redundant rows (the contacts of a
    tilted capsule foot: twelve rows, six degrees of freedom) the motion that removes the
    penetrations also slides the contact points, so no velocity meets every target: the rigid
    answer must then choose which contacts open or slide, on a singular ``W``, where
    Newton-type drivers stop at local minima of their merit and PGS crawls (measured on the
    falling humanoid's feet: targets 5.6e-5 outside the range of ``J`` in 0.3 made
    Levenberg-Marquardt stagnate at a residual of 2.5e-5 and PGS need over 1e5 sweeps;
    projected, they converge in 4 and 276 sweeps). With the projection the correction is one
    motion ``dv``, and friction acts on the velocity relative to it: it holds the contact
    still in the body's own motion and does not resist the correction, as a separate
    position projection (post-stabilization) would not either."""
    out = np.array(t, dtype=float)
    if not np.any(corrected) or not np.any(out[corrected]):
        return out
    U, s, _ = np.linalg.svd(J[corrected], full_matrices=False)
    if s[0] == 0.0:
        out[corrected] = 0.0
        return out
    U = U[:, s > RANK_RTOL * s[0]]
    out[corrected] = U @ (U.T @ out[corrected])
    return out


def _corrected_rows(groups) -> np.ndarray:
    """The rows that take part in the correction: every equality row, and every row (normal
    and frictional) of each limit and contact in penetration (``phi <= 0``). Speculative
    contacts (``phi > 0``: their target bounds the approach, it corrects nothing) and friction
    loss keep their own targets."""
    mask = []
    for b in groups:
        n = b["rows"][1] - b["rows"][0]
        if b["kind"] == "equality":
            mask += [True] * n
        elif b["kind"] in ("limit", "contact"):
            mask += [bool(b["phi"][0] <= 0.0)] * n
        else:
            mask += [False] * n
    return np.asarray(mask, dtype=bool)


def _targets(groups, targets: str, dense_jacobian) -> np.ndarray:
    """Each row's rigid target, as the rows give them (``"rows"``) or with the corrections
    made consistent (``"consistent"``, :func:`consistent_targets`); ``dense_jacobian()`` gives
    the caller's ``J`` dense, asked for only when the targets are made consistent."""
    t = np.concatenate([np.asarray(b["target"], dtype=float) for b in groups] or [np.zeros(0)])
    if targets == "rows":
        return t
    if targets != "consistent":
        raise ValueError(f'targets: expected "rows" or "consistent", got {targets!r}')
    return consistent_targets(dense_jacobian(), t, _corrected_rows(groups))


def problem(
    model, data, metric: str = "step", groups=None, targets: str = "rows"
) -> GeneralizedProblem:
    """Every row MuJoCo has at ``data`` (after ``mj_forward``) as a
    :class:`contactlab.GeneralizedProblem` of constraint blocks (:func:`blocks`), rows in
    MuJoCo's order: the integrator's metric ``Mhat`` and free velocity ``v*`` (:func:`metric`),
    ``H = J'`` (sparse when MuJoCo's Jacobian is), ``f = Mhat v*``, ``w = 0``, each row's rigid
    target ``t`` (``to_local()`` is :func:`local_problem`: ``q = J v* - t``), and for SAP's own
    model the time step and each row's position error ``phi0`` (:func:`blocks`' ``phi`` on
    equality, limit and contact normal rows). ``metric="mujoco"`` forms it in ``M`` with MuJoCo's
    ``v* = qvel + h qacc_smooth`` instead (:func:`solve_metric`). ``groups`` takes
    :func:`blocks` of this very state when the caller has it. ``targets="rows"`` keeps each
    row's own target (MuJoCo's, as exported); ``"consistent"`` projects them onto the range of
    ``J`` (:func:`consistent_targets`, what :func:`contactlab.mujoco.step` solves by default).
    Refuses (``ValueError`` naming the cause) pyramidal cones, with how to switch, and RK4."""
    _check(model, data)
    if groups is None:
        groups = blocks(model, data)
    Mhat, v_star = solve_metric(model, data, metric)
    H = _sparse_jacobian_t(model, data)
    t = _targets(groups, targets, lambda: (H.toarray() if hasattr(H, "toarray") else H).T)
    return GeneralizedProblem(
        Mhat,
        H,
        Mhat @ v_star,
        np.zeros(t.size),
        constraints=_constraints(groups),
        phi0=_phi0(groups),
        dt=float(model.opt.timestep),
        target=t,
    )


def solve_metric(model, data, metric: str = "step"):
    """``(Mhat, v_star)`` the constraint problem is formed in: ``"step"`` the integrator's metric
    (:func:`metric`: ``M + h D`` under Euler with joint damping), whose impulses hold their
    complementarity on the velocity the step keeps; ``"mujoco"`` MuJoCo's own, ``M`` and
    ``v* = qvel + h qacc_smooth``, the integrator then applying the damping after the solve.
    The two differ only under Euler with joint damping."""
    if metric == "step":
        Mhat, v_star, _ = _metric(model, data)
        return Mhat, v_star
    if metric != "mujoco":
        raise ValueError(f'metric: expected "step" or "mujoco", got {metric!r}')
    _metric(model, data)  # refuses RK4 and the terms it does not form, as for "step"
    mj = _mj()
    nv = int(model.nv)
    M = np.zeros((nv, nv))
    mj.mj_fullM(model, data, M)
    h = float(model.opt.timestep)
    return M, np.asarray(data.qvel, dtype=float) + h * np.asarray(data.qacc_smooth, dtype=float)


def local_problem(model, data, targets: str = "rows") -> LocalProblem:
    """Every row MuJoCo has at ``data`` (after ``mj_forward``) as a contact-space
    :class:`contactlab.LocalProblem` of constraint blocks (:func:`blocks`): ``W = J Mhat^-1 J'``
    in the integrator's metric (:func:`metric`), ``q = J v* - t`` with each row's target ``t``
    (``targets`` as for :func:`problem`), rows in MuJoCo's order. Pyramidal cones and RK4 are
    refused, naming the cause."""
    groups = blocks(model, data)
    Mhat, v_star, _ = _metric(model, data)
    J = jacobian(model, data)
    W = J @ np.linalg.solve(Mhat, J.T)
    W = 0.5 * (W + W.T)
    t = _targets(groups, targets, lambda: J)
    q = J @ v_star - t
    return LocalProblem(W, q, constraints=_constraints(groups), check_psd=False)


def impulses(model, data) -> dict:
    """MuJoCo's own answer at ``data`` (after ``mj_forward``) and the regularisation it
    solves with, one number per row in MuJoCo's order: ``r = h * efc_force``, its
    regulariser ``R`` (``efc_R``) and reference velocity ``v_ref = J qvel + h * efc_aref``,
    so that MuJoCo's problem ``min 1/2 r'(W + diag(R)) r + r'(q - v_ref)`` over the cones can
    be formed beside the rigid one (its impulses do not solve the rigid problem). Refuses
    pyramidal cones."""
    _check(model, data)
    nefc = int(data.nefc)
    h = model.opt.timestep
    J = jacobian(model, data)
    return {
        "r": h * np.asarray(data.efc_force[:nefc]).copy(),
        "R": np.asarray(data.efc_R[:nefc]).copy(),
        "v_ref": J @ np.asarray(data.qvel) + h * np.asarray(data.efc_aref[:nefc]),
    }
