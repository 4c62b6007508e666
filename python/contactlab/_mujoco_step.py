"""One MuJoCo step with the constraint solve done by a contactlab pair, and a loop of them.

:func:`step` does what ``mujoco.mj_step`` does (``mj_checkPos``, ``mj_checkVel``, ``mj_forward``,
``mj_checkAcc``, then the model's integrator) with one change: where ``mj_forward`` calls MuJoCo's
constraint solver (``mj_fwdConstraint``), the step's problem is formed by the bridge
(:func:`contactlab.mujoco.problem`) and solved by a (formulation, optimizer) pair. Its answer is
written back as MuJoCo's would be, ``efc_force = r / h``, ``qfrc_constraint = J' efc_force`` and
``qacc`` with ``M qacc = qfrc_smooth + qfrc_constraint``; then the acceleration-stage sensors are
recomputed and MuJoCo's own integrator advances the state (``mj_Euler``, or ``mj_implicit`` for
``implicit`` and ``implicitfast``; RK4 and ``discrete`` are refused: the first is four
evaluations a step, not one problem, the second solves constraints and integration as one).
``data`` afterwards is what ``mj_step`` would leave with the pair's answer in place of MuJoCo's.
Two stages are split out for those who bring their own solver: :func:`forward_smooth` (everything
``mj_step`` does before the constraint solve) and :func:`integrate` (everything after it).

Left out, on purpose: MuJoCo's noslip pass (it post-processes MuJoCo's own answer, so it has no
meaning for another solver's), the ``mjcb_control`` callback (set controls before the call), and
``mjENBL_FWDINV``'s comparison of forward and inverse dynamics. ``solver_niter`` and the other
``solver_*`` statistics are zeroed: the step's own statistics are in its :class:`StepResult`.

**Which metric the pair solves in.** ``metric="step"`` (the default) forms the problem in the
integrator's metric: under Euler with joint damping ``Mhat = M + h D`` and
``v* = qvel + h Mhat^-1 qfrc_smooth``. MuJoCo's Euler integrates ``(M + h D) qacc' = qfrc_smooth +
qfrc_constraint``, so the velocity the step keeps is exactly the pair's ``v`` and the pair's
complementarity holds on it. ``metric="mujoco"`` solves in ``M`` with ``v* = qvel + h
qacc_smooth`` as MuJoCo's own solver does, and the integrator then applies the damping to the
answer: the kept velocity is not the pair's. The two coincide without damping; under
``implicit`` and ``implicitfast`` both are ``M`` (the integrator's ``M - h qDeriv`` is not
formed), so there the kept velocity is never exactly the pair's.

**Drift.** The bridge's rows carry their targets: SAP corrects the position error ``phi0`` its
own way (``v_hat``, Castro et al. eq. 17, with ``dt``); every other formulation gets the same
target velocity per row, the position part of MuJoCo's reference (``contactlab.mujoco``'s
module documentation), so equality and penetration drift are corrected alike for every rigid
pair. By default (``targets="consistent"``) the targets of the rows that correct an error
(equality rows, limits and contacts in penetration) are first projected onto the range of
their Jacobian (:func:`contactlab.mujoco.consistent_targets`): on redundant rows, the four
contacts of a foot, each row's own correction asks for a motion no body can make, and the
rigid problem then turns into a choice of which contacts to open, on which the Newton-type
drivers and PGS fail most steps. ``targets="rows"`` keeps each row's own.

**Warm starts.** MuJoCo renumbers and re-frames its contacts every step. A warm start
(``warm=`` the previous :class:`StepResult`) matches each constraint of this step to one of the
last: equality, limit and friction-loss rows by MuJoCo's ``(efc_type, efc_id)``; contacts by
geom pair and, among the previous step's contacts of that pair not yet taken, the nearest
contact point. A matched contact's warm state (normal, two tangent, then torsional and two
rolling numbers) is carried over with its tangent and rolling pairs rotated from the old
contact frame into the new one (their vector in the world projected on the new tangents).
Unmatched rows start from the formulation's own start (``NaN`` in the warm vector), and
:attr:`StepResult.warm_rows` says how many rows were warm.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ._contactlab import Solution, evaluate, solve
from ._mujoco_metric import integrator
from ._mujoco_problem import problem
from ._mujoco_rows import blocks


def _mj():
    import mujoco

    return mujoco


def _refuse_integrator(model):
    """The integrators :func:`step` cannot stand in for, refused by name."""
    name = integrator(model)
    if name not in ("euler", "implicit", "implicitfast"):
        raise ValueError(
            f"MuJoCo model: integrator {name}: contactlab.mujoco.step takes euler, implicit and "
            "implicitfast (RK4 takes four evaluations a step; discrete solves the constraints "
            "and the integration as one)"
        )


def forward_smooth(model, data) -> None:
    """Everything ``mj_step`` does before MuJoCo's constraint solve: ``mj_checkPos``,
    ``mj_checkVel``, then ``mj_forward``'s position, velocity, actuation and acceleration stages
    with their sensors and energy (``mj_forward`` without ``mj_fwdConstraint`` and
    ``mj_sensorAcc``). Leaves the constraint rows (``efc_*``), ``qfrc_smooth`` and
    ``qacc_smooth`` of the step in ``data``."""
    mj = _mj()
    mj.mj_checkPos(model, data)
    mj.mj_checkVel(model, data)
    energy = bool(int(model.opt.enableflags) & int(mj.mjtEnableBit.mjENBL_ENERGY))
    mj.mj_fwdPosition(model, data)
    mj.mj_sensorPos(model, data)
    if energy:
        mj.mj_energyPos(model, data)
    else:
        data.energy[:] = 0.0
    mj.mj_fwdVelocity(model, data)
    mj.mj_sensorVel(model, data)
    if energy:
        mj.mj_energyVel(model, data)
    mj.mj_fwdActuation(model, data)
    mj.mj_fwdAcceleration(model, data)


def integrate(model, data, efc_force, qacc=None) -> None:
    """Everything ``mj_step`` does after MuJoCo's constraint solve, with ``efc_force`` (one
    force per row, MuJoCo's units: impulse over ``h``) in place of MuJoCo's: writes
    ``efc_force``, ``qfrc_constraint = J' efc_force`` and ``qacc`` (given, or solved from
    ``M qacc = qfrc_smooth + qfrc_constraint``), recomputes the acceleration-stage sensors,
    calls ``mj_checkAcc`` and the model's integrator. Call after :func:`forward_smooth`.
    Refuses non-finite forces and a force vector of the wrong length, leaving ``data``
    untouched."""
    mj = _mj()
    _refuse_integrator(model)
    nefc, nv = int(data.nefc), int(model.nv)
    f = np.asarray(efc_force, dtype=float).reshape(-1)
    if f.size != nefc:
        raise ValueError(f"efc_force: {f.size} forces for {nefc} constraint rows")
    if not np.all(np.isfinite(f)):
        raise ValueError("efc_force: not finite (the solve's answer has NaN or infinity)")
    data.efc_force[:nefc] = f
    data.qfrc_constraint[:] = 0.0
    if nefc:
        mj.mj_mulJacTVec(model, data, data.qfrc_constraint, data.efc_force[:nefc])
        mj.mj_mulJacVec(model, data, data.efc_b[:nefc], data.qacc_smooth)
        data.efc_b[:nefc] -= data.efc_aref[:nefc]
    if qacc is not None:
        data.qacc[:] = np.asarray(qacc, dtype=float).reshape(nv)
    elif nefc:
        rhs = np.asarray(data.qfrc_smooth + data.qfrc_constraint, dtype=float)
        out = np.zeros(nv)
        mj.mj_solveM(model, data, out.reshape(1, nv), rhs.reshape(1, nv))
        data.qacc[:] = out
    else:
        data.qacc[:] = data.qacc_smooth
    data.solver_niter[:] = 0
    data.flg_rnepost = 0
    mj.mj_sensorAcc(model, data)
    mj.mj_checkAcc(model, data)
    if integrator(model) == "euler":
        mj.mj_Euler(model, data)
    else:
        mj.mj_implicit(model, data)


@dataclass
class _Memory:
    """A step's constraints as the next step's warm start takes them: contacts by geom pair
    (each with its point, frame and warm state), every other constraint by ``(type, id)``."""

    contacts: dict = field(default_factory=dict)
    others: dict = field(default_factory=dict)


def _contact_arrays(data):
    """Every contact's geom pair, point and frame (rows: normal, tangent 1, tangent 2)."""
    n = int(data.ncon)
    return (
        np.asarray(data.contact.geom[:n]),
        np.asarray(data.contact.pos[:n], dtype=float),
        np.asarray(data.contact.frame[:n], dtype=float).reshape(n, 3, 3),
    )


def _remembered(data, groups, warm_state) -> _Memory:
    """The step's constraints with their warm states (contacts with point and frame)."""
    memory = _Memory()
    geom, pos, frame = _contact_arrays(data)
    warm_state = np.asarray(warm_state, dtype=float)
    for b in groups:
        a, e = b["rows"]
        if b["kind"] == "contact":
            c = b["id"]
            key = (int(geom[c, 0]), int(geom[c, 1]))
            memory.contacts.setdefault(key, []).append((pos[c], frame[c], warm_state[a:e]))
        else:
            memory.others.setdefault((b["mujoco_type"], b["id"]), []).append(warm_state[a:e])
    return memory


def _rotated(state, old_frame, new_frame) -> np.ndarray:
    """A contact's warm state carried from one contact frame to another: the tangent pair
    (rows 1-2) and the rolling pair (rows 4-5) rotated as world vectors; normal and torsion kept."""
    out = state.copy()
    turn = new_frame[1:3] @ old_frame[1:3].T
    for a in (1, 4):
        if state.size >= a + 2:
            out[a : a + 2] = turn @ state[a : a + 2]
    return out


def _warm_vector(data, groups, previous: _Memory) -> tuple:
    """The warm vector of this step from the previous step's constraints (see the module
    documentation), and how many rows were warm."""
    rows = groups[-1]["rows"][1] if groups else 0
    warm = np.full(rows, np.nan)
    geom, pos, frame = _contact_arrays(data)
    others = {k: list(v) for k, v in previous.others.items()}
    contacts: dict = {}
    for b in groups:
        a, e = b["rows"]
        if b["kind"] == "contact":
            c = b["id"]
            contacts.setdefault((int(geom[c, 0]), int(geom[c, 1])), []).append((c, a, e))
            continue
        taken = others.get((b["mujoco_type"], b["id"]))
        if taken and taken[0].size == e - a:
            warm[a:e] = taken.pop(0)
    for key, new in contacts.items():
        old = previous.contacts.get(key)
        if old:
            _match_pair(warm, new, old, pos, frame)
    return warm, int(np.count_nonzero(np.isfinite(warm)))


def _match_pair(warm, new, old, pos, frame) -> None:
    """Fills ``warm`` for one geom pair's contacts ``new`` (``(contact, first row, end row)``)
    from the previous step's ``old`` (``(point, frame, state)``): each in turn takes the
    nearest old contact not yet taken."""
    old_pos = np.array([o[0] for o in old])
    new_pos = pos[[c for c, _, _ in new]]
    gap = ((new_pos[:, None, :] - old_pos[None, :, :]) ** 2).sum(axis=2)
    for i, (c, a, e) in enumerate(new):
        j = int(np.argmin(gap[i]))
        if not np.isfinite(gap[i, j]):
            return
        gap[:, j] = np.inf
        _, old_frame, state = old[j]
        if state.size == e - a:
            warm[a:e] = _rotated(state, old_frame, frame[c])


@dataclass
class StepResult:
    """What one :func:`step` did: the pair's solve and where the step's time went."""

    #: The pair's answer (``status``, ``r``, ``u``, ``v``, ``metrics``, ``iterations``, ...).
    solution: Solution | None
    #: Constraint rows and contacts of the step.
    rows: int
    contacts: int
    #: Rows started from the previous step's answer (0 without a warm start).
    warm_rows: int
    #: Seconds: MuJoCo's stages before the solve, forming the problem, the pair's call (the
    #: Rust solve plus the call from Python), and the write-back with the integrator.
    seconds_forward: float
    seconds_problem: float
    seconds_solve: float
    seconds_integrate: float
    #: Whether MuJoCo reset ``data`` after the pair's answer (``mj_checkAcc``: an
    #: acceleration beyond ``mjMAXVAL`` or not finite); the state is then MuJoCo's reset one.
    reset: bool = False
    #: The constraints as the next step's warm start takes them.
    memory: _Memory = field(default_factory=_Memory, repr=False)
    #: With ``beside_mujoco=True``: the same state's solves timed beside the kept one
    #: (:func:`mujoco_solves`), else empty.
    beside: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        """The shared ruler's status of the pair's answer (``converged`` without rows), or
        ``reset_by_mujoco`` when MuJoCo reset the state after it (:attr:`reset`)."""
        if self.reset:
            return "reset_by_mujoco"
        return self.solution.status if self.solution is not None else "converged"

    @property
    def seconds(self) -> float:
        """The whole step's wall time."""
        return self.seconds_forward + self.seconds_problem + self.seconds_solve + self.seconds_integrate


def _timed_mujoco_solve(mj, model, data, cold: bool) -> tuple:
    """MuJoCo's own constraint solve (``mj_fwdConstraint``) of the state at hand, timed:
    ``(seconds, iterations summed over islands)``; ``cold`` disables its warm start
    (``mjDSBL_WARMSTART``: from ``qacc_smooth``), else it starts from ``qacc_warmstart``, the
    previous step's acceleration, as ``mj_step`` does."""
    flags = model.opt.disableflags
    if cold:
        model.opt.disableflags = flags | int(mj.mjtDisableBit.mjDSBL_WARMSTART)
    try:
        t0 = time.perf_counter()
        mj.mj_fwdConstraint(model, data)
        seconds = time.perf_counter() - t0
    finally:
        model.opt.disableflags = flags
    iterations = int(np.sum(data.solver_niter[: max(1, int(data.nisland))]))
    return seconds, iterations


def mujoco_solves(model, data) -> dict:
    """MuJoCo's constraint solve of the state ``data`` holds after :func:`forward_smooth`,
    warm and cold, timed one after the other, twice, the second of each kept (the speed
    protocol's interleaving: the pair's solves of the same state follow in the same step).
    Overwrites MuJoCo's solver outputs (``efc_force``, ``qacc``, ``qfrc_constraint``,
    ``solver_*``), which :func:`integrate` replaces; the problem's inputs (``efc_J``,
    ``efc_pos``, ``efc_aref``, ``qacc_smooth``) are untouched."""
    mj = _mj()
    # Each twice, keeping the second: the first call of the pair pays for the caches the
    # forward stages left cold, which would bias whichever start is timed first.
    for _ in range(2):
        warm_s, warm_it = _timed_mujoco_solve(mj, model, data, cold=False)
        cold_s, cold_it = _timed_mujoco_solve(mj, model, data, cold=True)
    return {
        "mujoco_warm_s": warm_s,
        "mujoco_warm_iterations": warm_it,
        "mujoco_cold_s": cold_s,
        "mujoco_cold_iterations": cold_it,
    }


def step(
    model,
    data,
    formulation: str,
    optimizer: str,
    *,
    metric: str = "step",
    targets: str = "consistent",
    warm: StepResult | None = None,
    tol: float = 1e-8,
    max_iter: int | None = None,
    time_limit: float | None = None,
    beside_mujoco: bool = False,
    **options,
) -> StepResult:
    """One MuJoCo step of ``data`` with the constraint solve done by ``formulation`` and
    ``optimizer`` (see the module documentation): ``data`` is left where ``mj_step`` would
    leave it with the pair's answer in place of MuJoCo's. ``metric`` (``"step"`` or
    ``"mujoco"``) says which metric the pair solves in, ``targets`` (``"consistent"`` or
    ``"rows"``) which drift targets the rigid rows get (:func:`contactlab.mujoco.problem`; SAP
    corrects with its own ``phi0`` either way), ``warm`` a previous step's result to
    warm-start from, ``tol``, ``max_iter``, ``time_limit`` and ``options`` go to
    :func:`contactlab.solve`. With ``beside_mujoco`` the same state is also solved by MuJoCo
    (``mj_fwdConstraint``, warm and cold: :func:`mujoco_solves`) and, when ``warm`` is given,
    by the pair from zero, each timed into :attr:`StepResult.beside` (``cold_s``,
    ``cold_iterations``, ``cold_status`` for the pair's), outside the step's own seconds; the
    kept answer is the warm one. Refuses pyramidal cones, RK4 and ``discrete``, and an answer
    that is not finite (``ValueError``, ``data`` then holds the step's forward stages only)."""
    _refuse_integrator(model)
    clock = time.perf_counter
    t0 = clock()
    forward_smooth(model, data)
    forward_s = clock() - t0
    nefc = int(data.nefc)
    beside = mujoco_solves(model, data) if beside_mujoco and nefc > 0 else {}
    t1 = clock()
    if nefc == 0:
        integrate(model, data, np.zeros(0))
        return StepResult(None, 0, 0, 0, forward_s, 0.0, 0.0, clock() - t1)
    groups = blocks(model, data)
    p = problem(model, data, metric=metric, groups=groups, targets=targets)
    extra, warm_rows = {}, 0
    if warm is not None:
        extra["warm"], warm_rows = _warm_vector(data, groups, warm.memory)
    t2 = clock()
    s = solve(
        p, formulation, optimizer, tol=tol, max_iter=max_iter, time_limit=time_limit,
        **options, **extra,
    )
    solve_s = clock() - t2
    if beside and warm is not None:
        cold = solve(p, formulation, optimizer, tol=tol, max_iter=max_iter,
                     time_limit=time_limit, **options)
        beside.update(cold_s=float(cold.seconds), cold_iterations=int(cold.iterations),
                      cold_status=cold.status)
    t3 = clock()
    memory = _remembered(data, groups, s.warm)
    resets = _resets(data)
    integrate(model, data, s.r / float(model.opt.timestep))
    contacts = sum(1 for b in groups if b["kind"] == "contact")
    return StepResult(
        s, nefc, contacts, warm_rows, forward_s, t2 - t1, solve_s, clock() - t3,
        reset=_resets(data) > resets, memory=memory, beside=beside,
    )


def _resets(data) -> int:
    """How many times MuJoCo has reset ``data`` for a bad position, velocity or acceleration
    (``mj_checkPos``, ``mj_checkVel``, ``mj_checkAcc``: a value beyond ``mjMAXVAL`` or NaN)."""
    mj = _mj()
    bad = (mj.mjtWarning.mjWARN_BADQPOS, mj.mjtWarning.mjWARN_BADQVEL, mj.mjtWarning.mjWARN_BADQACC)
    return sum(int(data.warning[int(w)].number) for w in bad)


def _mujoco_row(model, data, ruler: bool) -> dict:
    """One ``mj_step`` timed, with MuJoCo's statistics (and the shared ruler's residual of its
    answer when ``ruler``, formed before the step and not timed)."""
    mj = _mj()
    residual = np.nan
    if ruler:
        probe = mj.MjData(model)
        mj.mj_copyData(probe, model, data)
        mj.mj_forward(model, probe)
        if int(probe.nefc) and model.opt.cone == mj.mjtCone.mjCONE_ELLIPTIC:
            r = float(model.opt.timestep) * np.asarray(probe.efc_force[: int(probe.nefc)])
            residual = evaluate(problem(model, probe), r)["natural_map"]
    t0 = time.perf_counter()
    mj.mj_step(model, data)
    seconds = time.perf_counter() - t0
    n = max(1, int(data.nisland))
    return {
        "status": "mujoco",
        "iterations": int(np.sum(data.solver_niter[:n])),
        "seconds": seconds,
        "seconds_solve": np.nan,
        "residual": residual,
        "rows": int(data.nefc),
        "contacts": int(data.ncon),
        "warm_rows": 0,
    }


def _pair_row(result: StepResult) -> dict:
    """A :class:`StepResult` as one row of :func:`rollout`'s table."""
    s = result.solution
    return {
        "status": result.status,
        "iterations": 0 if s is None else int(s.iterations),
        "seconds": result.seconds,
        "seconds_solve": 0.0 if s is None else float(s.seconds),
        "residual": 0.0 if s is None else float(s.residual),
        "rows": result.rows,
        "contacts": result.contacts,
        "warm_rows": result.warm_rows,
    }


def rollout(
    model,
    data,
    steps: int,
    formulation: str | None = None,
    optimizer: str | None = None,
    *,
    control=None,
    record=None,
    warm: bool = True,
    ruler: bool = False,
    **options,
):
    """Steps ``data`` ``steps`` times and returns a polars DataFrame of one row per step:
    ``step``, ``time`` (after the step), ``status``, ``iterations``, ``seconds`` (the whole
    step), ``seconds_solve`` (the pair's solve in Rust; NaN for MuJoCo), ``residual`` (the shared
    ruler's natural-map residual), ``rows``, ``contacts``, ``warm_rows``, and the columns
    ``record(model, data)`` returns after each step. With ``formulation=None`` MuJoCo's own
    ``mj_step`` steps (``status`` ``"mujoco"``, its iterations summed over islands, its residual
    by the ruler only with ``ruler=True``, formed from a copy and not timed); otherwise
    :func:`step` with the pair, warm-started from the previous step unless ``warm=False``, and
    ``options`` (``metric``, ``tol``, ...) passed on. ``control(model, data)`` runs before each
    step (set ``ctrl``, ``mocap_pos``, ...)."""
    import polars as pl

    rows, previous = [], None
    for k in range(steps):
        if control is not None:
            control(model, data)
        if formulation is None:
            row = _mujoco_row(model, data, ruler)
        else:
            result = step(model, data, formulation, optimizer, warm=previous, **options)
            previous = result if warm else None
            row = _pair_row(result)
        row = {"step": k, "time": float(data.time), **row}
        if record is not None:
            row.update(record(model, data))
        rows.append(row)
    return pl.DataFrame(rows)
