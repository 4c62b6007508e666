"""Exports states of the robot models people simulate with MuJoCo as contact problems of every
constraint kind, with MuJoCo's own answer beside each (``data/mujoco_robots/``).

Usage (from the repository root; needs ``mujoco``, ``dm_control``, ``gymnasium_robotics`` and
the ``contactlab`` Python package)::

    python3 python/scripts/export_mujoco_robots.py [OUTDIR]     # default data/mujoco_robots

Each state: a model loaded unchanged from its package (:data:`MODELS`), switched to elliptic
cones, from its first keyframe (else its initial state) stepped by MuJoCo for ``seconds``
without control, or with a fixed control drawn once from a seeded generator where the kinds
need it (:data:`PLAN`), then ``mj_forward``. It writes

- ``OUTDIR/global/<name>.json``: the step's problem in the project's JSON format
  (``core/src/io/json.rs``), every row MuJoCo has in MuJoCo's order:
  ``{"kind": "global", "description", "M", "H", "f", "w", "constraints"}`` with
  ``contactlab.mujoco.problem``'s ``M = Mhat`` (the integrator's metric), ``H = J'``,
  ``f = Mhat v*`` and ``w = -t`` (each row's rigid target ``t``, which the format keeps in the
  offset), one block per constraint;
- ``OUTDIR/mujoco/<name>.json``: MuJoCo's answer to the same step (:func:`answer`), the same
  fields as ``data/mujoco/mujoco/`` plus the rows' kinds and velocities relative to the targets;
- ``OUTDIR/index.json``: one entry per problem (model, package, time, rows by kind, dofs).

The output is deterministic: MuJoCo's step is, the controls come from seeded generators, and
numbers are written in Python's shortest round-trip form.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

import mujoco

#: The package each model comes from, and its licence.
PACKAGES = {
    "manipulator": "dm_control",
    "stacker": "dm_control",
    "humanoid": "dm_control",
    "quadruped": "dm_control",
    "cheetah": "dm_control",
    "shadow_hand": "gymnasium_robotics",
    "adroit": "gymnasium_robotics",
    "fetch": "gymnasium_robotics",
    "kitchen": "gymnasium_robotics",
}


def _dm_control(name, **kwargs):
    """A dm_control suite model, built as its task module builds it."""
    from dm_control.suite import common

    module = importlib.import_module(f"dm_control.suite.{name}")
    if hasattr(module, "make_model"):
        made = module.make_model(**kwargs)
        xml, assets = made if isinstance(made, tuple) else (made, common.ASSETS)
    else:
        xml, assets = common.read_model(f"{name}.xml"), common.ASSETS
    return mujoco.MjModel.from_xml_string(xml, assets)


def _gymnasium_robotics(path):
    """A gymnasium-robotics model, from its asset file."""
    import gymnasium_robotics as gr

    root = os.path.join(os.path.dirname(gr.__file__), "envs", "assets")
    return mujoco.MjModel.from_xml_path(os.path.join(root, path))


#: Each model, built as its package builds it.
MODELS = {
    "manipulator": lambda: _dm_control("manipulator", use_peg=False, insert=False),
    "stacker": lambda: _dm_control("stacker", n_boxes=4),
    "humanoid": lambda: _dm_control("humanoid"),
    "quadruped": lambda: _dm_control(
        "quadruped", floor_size=10, terrain=False, rangefinders=False, walls_and_ball=False
    ),
    "cheetah": lambda: _dm_control("cheetah"),
    "shadow_hand": lambda: _gymnasium_robotics("hand/manipulate_block.xml"),
    "adroit": lambda: _gymnasium_robotics("adroit_hand/adroit_relocate.xml"),
    "fetch": lambda: _gymnasium_robotics("fetch/pick_and_place.xml"),
    "kitchen": lambda: _gymnasium_robotics("kitchen_franka/kitchen_assets/kitchen_env_model.xml"),
}

#: The states exported: (model, seconds, control seed or None). Every model at 0.5 s and 1.5 s
#: without control, except the Shadow hand, whose finger-finger contact pairs (its only
#: frictionless, condim-1 contacts) touch only when the fingers are driven: a fixed control
#: drawn once from seed 0.
PLAN = [
    (name, seconds, 0 if name == "shadow_hand" else None)
    for name in MODELS
    for seconds in (0.5, 1.5)
]


def load(name):
    """The model ``name`` with elliptic cones (MuJoCo's warnings about deprecated attributes
    silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = MODELS[name]()
    m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    return m


def control(m, seed):
    """A fixed control drawn once from ``seed``: uniform in each actuator's control range
    (``[-1, 1]`` where it has none)."""
    rng = np.random.default_rng(seed)
    lo = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 1], 1.0)
    return lo + (hi - lo) * rng.random(m.nu)


def steps_of(m, seconds):
    """MuJoCo's steps in ``seconds``."""
    return int(round(seconds / m.opt.timestep))


def state(name, seconds, seed=None):
    """``(model, data)``: the model from its first keyframe (else its initial state) after
    ``seconds`` of MuJoCo's steps, under the fixed control of ``seed`` (none without), then
    ``mj_forward``."""
    m = load(name)
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    if seed is not None:
        d.ctrl[:] = control(m, seed)
    for _ in range(steps_of(m, seconds)):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    return m, d


def problem_name(name, seconds, seed):
    """The file stem of a state: ``cheetah_t0500ms``, ``shadow_hand_ctrl0_t1500ms``."""
    ctrl = "" if seed is None else f"_ctrl{seed}"
    return f"{name}{ctrl}_t{int(round(1000 * seconds)):04d}ms"


def _triplets(A):
    """A matrix as the format's sparse triplets (its nonzeros, row-major)."""
    rows, cols = np.nonzero(A)
    return {
        "rows": int(A.shape[0]),
        "cols": int(A.shape[1]),
        "triplets": [[int(i), int(j), float(A[i, j])] for i, j in zip(rows, cols)],
    }


def _floats(v):
    return [float(x) for x in np.asarray(v, dtype=float)]


def problem_json(m, d, description, targets="rows"):
    """The step's global problem as the format's object (see the module documentation), each
    row's own target (``targets`` as ``contactlab.mujoco.problem`` takes it)."""
    import contactlab

    P = contactlab.mujoco.problem(m, d, targets=targets)
    H = np.asarray(P.H.todense() if hasattr(P.H, "todense") else P.H, dtype=float)
    return {
        "kind": "global",
        "description": description,
        "M": [_floats(row) for row in np.asarray(P.M)],
        "H": _triplets(H),
        "f": _floats(P.f),
        # The rigid target rides in the offset: u = H' v + w, w = -t (0.0 - 0.0 is +0.0).
        "w": _floats(np.asarray(P.w) - np.asarray(P.target)),
        "constraints": P.constraints,
    }


def _row_kinds(blocks):
    """Each row's kind: ``equality``, ``limit``, ``friction_loss`` or ``contact (condim k)``."""
    out = []
    for b in blocks:
        a, e = b["rows"]
        label = b["kind"]
        if label == "contact":
            label = f"contact (condim {e - a})"
        out.extend([label] * (e - a))
    return out


def _mujoco_gradient(m, d, r):
    """The gradient of MuJoCo's own (soft) problem in impulses at ``r``,
    ``g = (W_M + diag(R)) r + J v*_M - v_ref``, in the metric ``M`` its constraint solver uses
    (``qacc_smooth``) whatever the integrator."""
    import contactlab

    J = contactlab.mujoco.jacobian(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    mj = contactlab.mujoco.impulses(m, d)
    h = float(m.opt.timestep)
    v_star = np.asarray(d.qvel) + h * np.asarray(d.qacc_smooth)
    return J @ (v_star + np.linalg.solve(M, J.T @ r)) + mj["R"] * r - mj["v_ref"]


def _block_kkt(b, r, g):
    """``(primal, dual, complementarity)`` of one block of MuJoCo's problem, a convex problem
    over the blocks' sets: ``r`` in the set, the gradient ``g`` in its dual cone (zero for an
    equality, the box's normal cone for a friction loss), ``r . g = 0``. A contact's cone is
    MuJoCo's elliptic one, ``r_n >= |r_f / mu|``, dual ``g_n >= |mu g_f|``."""
    kind = b["kind"]
    if kind == "equality":
        return 0.0, float(np.abs(g).max()), 0.0
    if kind == "friction_loss":
        f = b["f_max"]
        nat = r - np.clip(r - g, -f, f)
        return float(max(0.0, np.abs(r).max() - f)), float(np.abs(nat).max()), 0.0
    if kind == "limit" or len(r) == 1:
        return float(max(0.0, -r[0])), float(max(0.0, -g[0])), float(abs(r[0] * g[0]))
    mu = np.asarray(b["mu"], dtype=float)
    primal = max(0.0, float(np.linalg.norm(r[1:] / mu)) - r[0])
    dual = max(0.0, float(np.linalg.norm(mu * g[1:])) - g[0])
    return primal, dual, float(abs(r @ g))


def mujoco_kkt(m, d, blocks, r):
    """MuJoCo's own accuracy on its own problem: the largest primal, dual and complementarity
    violations over the blocks (:func:`_block_kkt`)."""
    g = _mujoco_gradient(m, d, r)
    worst = np.zeros(3)
    for b in blocks:
        a, e = b["rows"]
        worst = np.maximum(worst, _block_kkt(b, r[a:e], g[a:e]))
    return {
        "mj_kkt_primal_violation": float(worst[0]),
        "mj_kkt_dual_violation": float(worst[1]),
        "mj_kkt_complementarity": float(worst[2]),
    }


def answer(m, d, step_after):
    """MuJoCo's answer at the state ``(m, d)`` (after ``mj_forward``), with ``step_after`` a
    callable that takes MuJoCo's step and returns the new ``qvel``. Per row in MuJoCo's order:
    impulses ``r = h efc_force``, the regulariser ``R`` and reference velocity ``v_ref`` of its
    soft model, the rows' velocities after its step ``u_after_step = J v+`` and relative to the
    rigid targets ``u = J v+ - t`` (the rigid problem's ``u = W r + q``), ``phi``, ``target``,
    each row's kind; the solver's iterations; and ``checks``: how well the exported problem
    predicts MuJoCo's step (``abs_residual_inf``, ``rel_residual_v_eq_Wf_plus_vfree``) and
    MuJoCo's accuracy on its own soft problem (``mj_kkt_*``, :func:`mujoco_kkt`)."""
    import contactlab

    P = contactlab.mujoco.problem(m, d)
    local = P.to_local()
    blocks = contactlab.mujoco.blocks(m, d)
    mj = contactlab.mujoco.impulses(m, d)
    J = contactlab.mujoco.jacobian(m, d)
    t = np.asarray(P.target)
    r = mj["r"]
    nisland = max(1, int(d.nisland))
    iterations = int(np.asarray(d.solver_niter[:nisland]).sum())
    own = mujoco_kkt(m, d, blocks, r)
    predicted = np.asarray(local.W) @ r + np.asarray(local.q)
    v_next = step_after()
    u_after = J @ v_next
    u = u_after - t
    scale = max(1e-12, np.linalg.norm(u), np.linalg.norm(local.q))
    checks = {
        "abs_residual_inf": float(np.abs(predicted - u).max()) if r.size else 0.0,
        "rel_residual_v_eq_Wf_plus_vfree": float(np.linalg.norm(predicted - u) / scale),
    }
    checks.update(own)
    return {
        "r": _floats(r),
        "u": _floats(u),
        "u_after_step": _floats(u_after),
        "regulariser_R": _floats(mj["R"]),
        "v_ref": _floats(mj["v_ref"]),
        "phi": _floats(np.asarray(d.efc_pos[: d.nefc]) - np.asarray(d.efc_margin[: d.nefc])),
        "target": _floats(t),
        "row_kinds": _row_kinds(blocks),
        "solver_iterations": iterations,
        "checks": checks,
    }


def _counts(blocks):
    """Blocks and rows per kind (contacts by condim)."""
    by_blocks, by_rows = {}, {}
    for b in blocks:
        a, e = b["rows"]
        label = b["kind"] if b["kind"] != "contact" else f"contact (condim {e - a})"
        by_blocks[label] = by_blocks.get(label, 0) + 1
        by_rows[label] = by_rows.get(label, 0) + e - a
    return dict(sorted(by_blocks.items())), dict(sorted(by_rows.items()))


def export_one(name, seconds, seed):
    """The problem, MuJoCo's answer and the index entry of one state."""
    import contactlab

    m, d = state(name, seconds, seed)
    stem = problem_name(name, seconds, seed)
    ctrl = "no control" if seed is None else f"a fixed control drawn from seed {seed}"
    description = (
        f"{name} ({PACKAGES[name]}) after {seconds} s ({steps_of(m, seconds)} steps of "
        f"{m.opt.timestep} s) from its first keyframe or initial state, {ctrl}, elliptic cones; "
        f"MuJoCo {mujoco.__version__}"
    )
    prob = problem_json(m, d, description)
    blocks = contactlab.mujoco.blocks(m, d)

    def step_after():
        mujoco.mj_step(m, d)
        return np.asarray(d.qvel).copy()

    h = float(m.opt.timestep)
    _, _, integrator = contactlab.mujoco.metric(m, d)
    mj = {
        "engine": f"mujoco {mujoco.__version__}",
        "model": name,
        "package": PACKAGES[name],
        "seconds": seconds,
        "steps": steps_of(m, seconds),
        "control_seed": seed,
        "h": h,
        "integrator": integrator,
    }
    mj.update(answer(m, d, step_after))
    blocks_by_kind, rows_by_kind = _counts(blocks)
    entry = {
        "name": stem,
        "model": name,
        "package": PACKAGES[name],
        "seconds": seconds,
        "control_seed": seed,
        "dofs": int(m.nv),
        "rows": len(mj["r"]),
        "blocks_by_kind": blocks_by_kind,
        "rows_by_kind": rows_by_kind,
        "mujoco_iterations": mj["solver_iterations"],
        "mujoco_kkt_dual_violation": mj["checks"]["mj_kkt_dual_violation"],
    }
    return stem, prob, mj, entry


def _write(path, obj, indent=None):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, separators=None if indent else (",", ":"))
        f.write("\n")


def main(out):
    """Writes every state of :data:`PLAN` under ``out``."""
    out = Path(out)
    for sub in ("global", "mujoco"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    index = []
    for name, seconds, seed in PLAN:
        stem, prob, mj, entry = export_one(name, seconds, seed)
        _write(out / "global" / f"{stem}.json", prob)
        _write(out / "mujoco" / f"{stem}.json", mj)
        index.append(entry)
        print(stem, entry["rows_by_kind"], flush=True)
    _write(out / "index.json", index, indent=1)


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[2]
    main(sys.argv[1] if len(sys.argv) > 1 else root / "data" / "mujoco_robots")
