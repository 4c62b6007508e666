"""MuJoCo's constraint-solver time on the project's MuJoCo problem set (data/mujoco/), solver
against solver: for each exported problem, rebuild its scene, replay MuJoCo to the exported step,
run the forward stages that precede the constraint solve, and time `mj_fwdConstraint` alone.

Usage:
  python3 solver_times.py [NAME ...] [--repeats N] [--out FILE] [--data DIR]
  python3 solver_times.py --check          # replay one small problem; exit 1 if it does not match

NAME: problem stems as in data/mujoco/index.json (default: all of them). JSON goes to stdout (or
--out); diagnostics go to stderr.

What is replayed (the way data/mujoco/ was exported): the scene of scenes.py with the problem's
n, mu and seed, built with the "mj_newton_elliptic" configuration and jacobian="dense",
velocities set after one mj_forward; then mj_step k times, where k is the step in the name (at
steps the export extracted a problem it first ran mj_forward, which does not change the state;
this script does the same). At step k the export's problem is the one mj_forward solves, so here:
mj_fwdPosition, mj_fwdVelocity, mj_fwdActuation, mj_fwdAcceleration (the model has no sensors,
no energy and no control callback, so this is mj_forward up to the constraint solve), a copy of
mjData is kept, and each timed repeat restores that copy with mj_copyData and times only
mj_fwdConstraint with time.perf_counter_ns.

Warm start: MuJoCo warm-starts mj_fwdConstraint from d.qacc_warmstart (the previous step's qacc,
saved by mj_step's integrator) when it beats qacc_smooth; the copy holds the run's own
qacc_warmstart, so every repeat is the solve the run did, with the run's warm start.

Two more timings of the same state, under `variants`: "dense_cold" (warm start disabled with
mjDSBL_WARMSTART, so MuJoCo starts from qacc_smooth) and "auto_warm" (the same qpos, qvel and
qacc_warmstart in the scene built with MuJoCo's default jacobian="auto", sparse from nv = 60, as
bench.py runs it). The export's dense Jacobian is not what MuJoCo would choose for the larger
scenes and costs it up to several times its sparse solve time. Two cold ones with that default
Jacobian: "auto_cold" (its `opt.tolerance` set by --cold-tolerance, the speed protocol's
reference) and "auto_cold_own" (the model's own tolerance: the solver-against-solver tables'
reference, since each of our solves there starts from zero too).
"""
import argparse
import gc
import json
import math
import os
import re
import sys
import time

import numpy as np
import mujoco

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenes as S  # noqa: E402

CONFIG = "mj_newton_elliptic"  # the export's MuJoCo configuration (scenes.MJ_CONFIGS)
JACOBIAN = "dense"             # the export built its models with a dense constraint Jacobian
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "data", "mujoco")
CHECK_PROBLEM = "balls_in_box_n5_mu1.0_seed105_step0060_nc6"
MATCH_TOL = 1e-9  # max |r - r_file| / max |r_file| for a replay to count as the exported state

NAME_RE = re.compile(r"^(?P<scene>balls_in_box|clutter)_n(?P<n>\d+)(?:_mu(?P<mu>[0-9.]+))?"
                     r"_seed(?P<seed>\d+)_step(?P<step>\d+)_nc(?P<nc>\d+)$")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- problems
def parse_name(name):
    mt = NAME_RE.match(name)
    if not mt:
        raise ValueError(f"cannot read scene, n, seed, step, nc from problem name {name!r}")
    g = mt.groupdict()
    p = {"problem": name, "scene": g["scene"], "bodies": int(g["n"]), "seed": int(g["seed"]),
         "step": int(g["step"]), "nc": int(g["nc"])}
    if g["scene"] == "balls_in_box":
        if g["mu"] is None:
            raise ValueError(f"{name}: balls_in_box names carry mu")
        p["mu"] = float(g["mu"])
        p["key"] = (p["scene"], p["bodies"], p["mu"], p["seed"])
    else:
        p["mu"] = None  # clutter's own mu (1.0); its name does not carry it
        p["key"] = (p["scene"], p["bodies"], None, p["seed"])
    return p


def make_scene(key):
    kind, n, mu, seed = key
    if kind == "balls_in_box":
        sc = S.balls_in_box(n, mu, seed=seed)
        want = f"balls_in_box_n{n}_mu{mu}"
    else:
        # clutter's duration T only sets nsteps, which the replay does not use
        sc = S.clutter(n, seed=seed)
        want = f"clutter_n{n}"
    assert sc["name"] == want, (sc["name"], want)
    return sc


# ----------------------------------------------------------------------------- one solve
def contact_rows(d):
    """efc rows of the contacts, contact by contact ([n, t1, t2] each), as the export ordered them."""
    nc = d.ncon
    if nc == 0:
        return np.zeros(0, int)
    return np.concatenate([np.arange(a, a + 3) for a in d.contact.efc_address[:nc]])


def structure_problems(m, d):
    """Reasons the state is not the kind of problem the export wrote (empty list if it is)."""
    out = []
    nc, nefc = d.ncon, d.nefc
    if nefc != 3 * nc:
        out.append(f"nefc = {nefc} is not 3 x ncon = {3 * nc}")
    if nc and not np.all(d.contact.dim[:nc] == 3):
        out.append("a contact with condim != 3")
    if nefc and not np.all(d.efc_type[:nefc] == mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC):
        out.append("a constraint row that is not an elliptic contact")
    return out


def solve_quantities(m, d, rows):
    """After mj_fwdConstraint: the export's quantities (dense; nv <= a few hundred here)."""
    nv, nefc = m.nv, d.nefc
    h = m.opt.timestep
    J = np.asarray(d.efc_J[:nefc * nv]).reshape(nefc, nv)[rows].copy()
    M = np.zeros((nv, nv))
    mujoco.mj_fullM(m, d, M)
    v0 = d.qvel.copy()
    W = J @ np.linalg.solve(M, J.T)
    W = 0.5 * (W + W.T)
    return {"J": J, "W": W, "vfree": J @ (v0 + h * d.qacc_smooth),
            "r": h * d.efc_force[:nefc][rows], "R": d.efc_R[:nefc][rows].copy(),
            "vref": J @ v0 + h * d.efc_aref[:nefc][rows],
            "mu": d.contact.friction[:d.ncon, 0].copy(), "phi": d.contact.dist[:d.ncon].copy()}


def accuracy(Q, u_next):
    """MuJoCo's own accuracy at this solve, in the export's terms (its `checks`).

    u_next: contact velocities J v after MuJoCo's step. MuJoCo's problem is
    min_{r in K} 1/2 r'(W + R) r + r'(v_free - v_ref), K = {mu r_n >= |r_t|}; at its optimum
    y = (W + R) r + v_free - v_ref lies in the dual cone {y_n >= mu |y_t|} with r.y = 0 per contact.
    """
    r = Q["r"].reshape(-1, 3)
    if r.size == 0:
        return {}
    rn, rt = r[:, 0], np.linalg.norm(r[:, 1:], axis=1)
    cone = np.maximum(0.0, rt - Q["mu"] * rn)
    pred = Q["W"] @ Q["r"] + Q["vfree"]
    y = ((Q["W"] + np.diag(Q["R"])) @ Q["r"] + Q["vfree"] - Q["vref"]).reshape(-1, 3)
    dual = np.maximum(0.0, Q["mu"] * np.linalg.norm(y[:, 1:], axis=1) - y[:, 0])
    scale = max(1e-12, np.linalg.norm(u_next), np.linalg.norm(Q["vfree"]))
    return {"min_lambda_n": float(rn.min()),
            "max_cone_violation_abs": float(cone.max()),
            "max_cone_violation_rel": float((cone / np.maximum(rn, 1e-300)).max()),
            "frac_sliding": float(np.mean(rt > 0.999 * Q["mu"] * rn)),
            "rel_residual_v_eq_Wf_plus_vfree": float(np.linalg.norm(pred - u_next) / scale),
            "abs_residual_inf": float(np.abs(pred - u_next).max()),
            "mj_kkt_dual_cone_viol": float(dual.max()),
            "mj_kkt_complementarity": float(np.abs((r * y).sum(1)).max()),
            "v_free_minus_v_ref_inf": float(np.abs(Q["vfree"] - Q["vref"]).max())}


def solver_stats(d):
    """Iterations and the last iteration's scaled improvement and gradient, per island."""
    nis = max(1, d.nisland)
    niter = [int(x) for x in d.solver_niter[:min(nis, mujoco.mjNISLAND)]]
    last = []
    for i, k in enumerate(niter):
        if k == 0:
            last.append(None)  # converged at the warm start, no iteration
            continue
        st = d.solver[i * mujoco.mjNSOLVER + min(k, mujoco.mjNSOLVER) - 1]
        last.append({"improvement": float(st.improvement), "gradient": float(st.gradient)})
    return {"niter": niter, "last": last}


# ----------------------------------------------------------------------------- replay
def snapshot_before_solve(m, d):
    """Run mj_forward's stages up to the constraint solve on d (the model has no sensors, energy or
    control callback, so this is mj_forward without its last stage); return a copy of d."""
    mujoco.mj_fwdPosition(m, d)
    mujoco.mj_fwdVelocity(m, d)
    mujoco.mj_fwdActuation(m, d)
    mujoco.mj_fwdAcceleration(m, d)
    pre = mujoco.MjData(m)
    mujoco.mj_copyData(pre, m, d)
    return pre


def variant(m, pre, cold=False, tolerance=None):
    """One way of timing the solve: a model, the pre-solve data, a work copy, the reference result;
    `tolerance` replaces the model's `opt.tolerance` for this variant's solves."""
    w = mujoco.MjData(m)
    mujoco.mj_copyData(w, m, pre)
    with settings(m, cold, tolerance):
        mujoco.mj_fwdConstraint(m, w)
    return {"model": m, "pre": pre, "work": w, "cold": cold, "tolerance": tolerance,
            "efc_force": w.efc_force[:w.nefc].copy(),
            "niter": int(w.solver_niter[:max(1, w.nisland)].sum()),
            "r": m.opt.timestep * w.efc_force[:w.nefc][contact_rows(w)], "ncon": int(w.ncon)}


class settings:
    """A variant's solver settings inside the block, restored after it (set outside any timed
    region): `cold` disables MuJoCo's warm start (mjDSBL_WARMSTART), `tolerance` (unless None)
    replaces `opt.tolerance`."""

    def __init__(self, m, cold=False, tolerance=None):
        self.m, self.cold, self.tolerance = m, cold, tolerance

    def __enter__(self):
        o = self.m.opt
        self.old = (o.disableflags, o.tolerance)
        if self.cold:
            o.disableflags = o.disableflags | mujoco.mjtDisableBit.mjDSBL_WARMSTART
        if self.tolerance is not None:
            o.tolerance = self.tolerance

    def __exit__(self, *exc):
        self.m.opt.disableflags, self.m.opt.tolerance = self.old


def auto_model(sc):
    """The scene built with MuJoCo's default Jacobian choice (`jacobian="auto"`: sparse from
    nv = 60), as bench.py runs it."""
    return mujoco.MjModel.from_xml_string(S.to_mjcf(sc, CONFIG, jacobian="auto"))


def same_state(m_auto, d):
    """A new `MjData` of `m_auto` in `d`'s state: time, positions, velocities, warm start."""
    d_auto = mujoco.MjData(m_auto)
    d_auto.time = d.time
    d_auto.qpos[:] = d.qpos
    d_auto.qvel[:] = d.qvel
    d_auto.qacc_warmstart[:] = d.qacc_warmstart
    return d_auto


def replay_scene(key, probs, exported_steps, cold_tolerance):
    """Replay one scene run to each of probs' steps; return {name: record} with the pre-solve data."""
    sc = make_scene(key)
    m, d = S.mj_build(sc, CONFIG, jacobian=JACOBIAN)
    m_auto = auto_model(sc)  # for the "auto" variants
    targets = {p["step"]: p for p in probs}
    out = {}
    for k in range(max(targets) + 1):
        if k not in targets:
            if k in exported_steps:
                mujoco.mj_forward(m, d)  # the export's extraction at that step; no effect on the state
            mujoco.mj_step(m, d)
            continue
        p = targets[k]
        d_auto = same_state(m_auto, d)
        pre = snapshot_before_solve(m, d)
        mujoco.mj_fwdConstraint(m, d)
        rows = contact_rows(d)
        problems = structure_problems(m, d)
        Q = solve_quantities(m, d, rows) if not problems else None
        rec = {"model": m, "ncon": int(d.ncon), "nefc": int(d.nefc), "nisland": int(d.nisland),
               "dofs": int(m.nv), "stats": solver_stats(d), "Q": Q, "structure": problems,
               "variants": {"dense_warm": variant(m, pre),
                            "dense_cold": variant(m, pre, cold=True),
                            "auto_warm": variant(m_auto, snapshot_before_solve(m_auto, d_auto)),
                            "auto_cold": variant(m_auto, snapshot_before_solve(m_auto, d_auto),
                                                 cold=True, tolerance=cold_tolerance),
                            "auto_cold_own": variant(m_auto, snapshot_before_solve(m_auto, d_auto),
                                                     cold=True)},
               "auto_sparse": bool(mujoco.mj_isSparse(m_auto))}
        rec["variants"]["dense_warm"]["efc_force_run"] = d.efc_force[:d.nefc].copy()
        mujoco.mj_step(m, d)  # reruns mj_forward on the same state (same solve), then integrates
        if Q is not None:
            rec["checks"] = accuracy(Q, Q["J"] @ d.qvel)
        out[p["problem"]] = rec
    return out


def compare(p, rec, data_dir):
    """Does the replayed state hold the exported problem? Fills replay_matches and its reasons."""
    reasons = list(rec["structure"])
    res = {"max_rel_diff_r": None, "max_abs_diff_phi": None, "stored_iterations": None}
    if rec["ncon"] != p["nc"]:
        reasons.append(f"replay has {rec['ncon']} contacts, the file {p['nc']}")
    path = os.path.join(data_dir, "mujoco", p["problem"] + ".json")
    try:
        with open(path) as f:
            ans = json.load(f)
    except OSError as e:
        reasons.append(f"no stored answer: {e}")
        ans = None
    if ans is not None:
        res["stored_iterations"] = ans.get("solver_iterations")
        res["stored_checks"] = ans.get("checks")
        if ans.get("step") != p["step"]:
            reasons.append(f"stored answer is for step {ans.get('step')}")
        Q = rec["Q"]
        r_file = np.asarray(ans["r"], float)
        if Q is not None and Q["r"].shape == r_file.shape:
            den = max(np.abs(r_file).max(), 1e-300) if r_file.size else 1.0
            res["max_rel_diff_r"] = float(np.abs(Q["r"] - r_file).max() / den) if r_file.size else 0.0
            phi = np.asarray(ans["phi"], float)
            res["max_abs_diff_phi"] = float(np.abs(Q["phi"] - phi).max()) if phi.size else 0.0
            if res["max_rel_diff_r"] > MATCH_TOL:
                reasons.append(f"r differs from the file by {res['max_rel_diff_r']:.3g} (relative)")
        elif Q is not None:
            reasons.append(f"r has {Q['r'].size} entries, the file {r_file.size}")
    res["replay_matches"] = not reasons
    res["replay_problems"] = reasons
    return res


# ----------------------------------------------------------------------------- timing
def call_overhead_ns(repeats):
    """Median time of mj_fwdConstraint on an empty model: the floor of one timed call from Python."""
    m = mujoco.MjModel.from_xml_string("<mujoco/>")
    d = mujoco.MjData(m)
    ts = []
    for _ in range(max(repeats, 200)):
        t0 = time.perf_counter_ns()
        mujoco.mj_fwdConstraint(m, d)
        ts.append(time.perf_counter_ns() - t0)
    return float(np.median(ts))


def time_solves(recs, repeats, seed=0):
    """Per problem and variant, `repeats` timed mj_fwdConstraint calls, each on a fresh copy of the
    pre-solve data. All (problem, variant) pairs are interleaved, in a new random order each round."""
    jobs = [(n, v) for n in recs for v in recs[n]["variants"]]
    times = {j: [] for j in jobs}
    same = {j: True for j in jobs}
    rng = np.random.default_rng(seed)
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for i in rng.permutation(len(jobs)):
                V = recs[jobs[i][0]]["variants"][jobs[i][1]]
                m, w = V["model"], V["work"]
                mujoco.mj_copyData(w, m, V["pre"])
                with settings(m, V["cold"], V["tolerance"]):
                    t0 = time.perf_counter_ns()
                    mujoco.mj_fwdConstraint(m, w)
                    t1 = time.perf_counter_ns()
                times[jobs[i]].append(t1 - t0)
                if not np.array_equal(w.efc_force[:w.nefc], V["efc_force"]):
                    same[jobs[i]] = False
    finally:
        if gc_was:
            gc.enable()
    return times, same


# ----------------------------------------------------------------------------- main
def finite(x):
    """JSON has no NaN or infinity: non-finite floats become null."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def solver_name(m):
    solver = {mujoco.mjtSolver.mjSOL_NEWTON: "Newton", mujoco.mjtSolver.mjSOL_CG: "CG",
              mujoco.mjtSolver.mjSOL_PGS: "PGS"}.get(mujoco.mjtSolver(m.opt.solver), str(m.opt.solver))
    cone = {mujoco.mjtCone.mjCONE_ELLIPTIC: "elliptic", mujoco.mjtCone.mjCONE_PYRAMIDAL: "pyramidal"}.get(
        mujoco.mjtCone(m.opt.cone), str(m.opt.cone))
    return f"{solver}, {cone} cones"


def run(names, repeats, data_dir, index_names, cold_tolerance=None):
    probs = [parse_name(n) for n in names]
    exported = {}
    for n in index_names:
        try:
            q = parse_name(n)
        except ValueError:
            continue
        exported.setdefault(q["key"], set()).add(q["step"])
    groups = {}
    for p in probs:
        groups.setdefault(p["key"], []).append(p)
    recs = {}
    t0 = time.perf_counter()
    for key, ps in groups.items():
        t1 = time.perf_counter()
        recs.update(replay_scene(key, ps, exported.get(key, set()), cold_tolerance))
        log(f"replayed {key[0]} n={key[1]} seed={key[3]} to step {max(p['step'] for p in ps)} "
            f"in {time.perf_counter() - t1:.2f} s")
    log(f"replays: {time.perf_counter() - t0:.2f} s")
    overhead = call_overhead_ns(repeats)
    t0 = time.perf_counter()
    times, same = time_solves(recs, repeats)
    nvar = len(next(iter(recs.values()))["variants"])
    log(f"timing ({repeats} repeats x {len(recs)} problems x {nvar} variants): "
        f"{time.perf_counter() - t0:.2f} s")

    m0 = recs[probs[0]["problem"]]["model"]
    rows = []
    for p in probs:
        name = p["problem"]
        rec = recs[name]
        cmp = compare(p, rec, data_dir)
        main_v = rec["variants"]["dense_warm"]
        ts = np.asarray(times[(name, "dense_warm")], float) * 1e-9
        row = {"problem": name, "scene": p["scene"], "bodies": p["bodies"],
               "mu": p["mu"] if p["mu"] is not None else float(rec["model"].geom_friction[0, 0]),
               "seed": p["seed"], "step": p["step"], "contacts": rec["ncon"], "contacts_file": p["nc"],
               "dofs": rec["dofs"], "nefc": rec["nefc"], "islands": rec["nisland"],
               "mujoco_constraint_seconds_median": float(np.median(ts)),
               "mujoco_constraint_seconds_min": float(ts.min()),
               "mujoco_constraint_seconds_p90": float(np.percentile(ts, 90)),
               "repeats": int(ts.size),
               "mujoco_iterations": int(sum(rec["stats"]["niter"])),
               "mujoco_iterations_per_island": rec["stats"]["niter"],
               "solver_last_iteration_per_island": rec["stats"]["last"],
               "timed_solves_reproduce": bool(same[(name, "dense_warm")]) and np.array_equal(
                   main_v["efc_force"], main_v["efc_force_run"]),
               "replay_matches": cmp["replay_matches"], "replay_problems": cmp["replay_problems"],
               "max_rel_diff_r": cmp["max_rel_diff_r"], "max_abs_diff_phi": cmp["max_abs_diff_phi"],
               "stored_iterations": cmp["stored_iterations"],
               "accuracy": rec.get("checks"), "accuracy_stored": cmp.get("stored_checks"),
               "variants": {}}
        for vname, V in rec["variants"].items():
            if vname == "dense_warm":
                continue
            tv = np.asarray(times[(name, vname)], float) * 1e-9
            r0 = main_v["r"]
            rel = (float(np.abs(V["r"] - r0).max() / max(np.abs(r0).max(), 1e-300))
                   if V["r"].shape == r0.shape and r0.size else None)
            row["variants"][vname] = {
                "jacobian": ("sparse" if rec["auto_sparse"] else "dense") if vname.startswith("auto") else "dense",
                "warm_start": not V["cold"], "contacts": V["ncon"],
                "tolerance": float(V["tolerance"] if V["tolerance"] is not None else rec["model"].opt.tolerance),
                "seconds_median": float(np.median(tv)), "seconds_min": float(tv.min()),
                "iterations": V["niter"], "max_rel_diff_r_vs_dense_warm": rel,
                "timed_solves_reproduce": bool(same[(name, vname)])}
        rows.append(row)
        va = row["variants"]
        log(f"{name:46s} nc {rec['ncon']:4d}  median {row['mujoco_constraint_seconds_median'] * 1e6:8.1f} us"
            f" it {row['mujoco_iterations']:3d} | cold {va['dense_cold']['seconds_median'] * 1e6:8.1f} us"
            f" it {va['dense_cold']['iterations']:3d} | auto({va['auto_warm']['jacobian']})"
            f" {va['auto_warm']['seconds_median'] * 1e6:8.1f} us it {va['auto_warm']['iterations']:3d}"
            f" | auto cold {va['auto_cold']['seconds_median'] * 1e6:8.1f} us it {va['auto_cold']['iterations']:3d}"
            f" | replay {'ok' if row['replay_matches'] else 'MISMATCH'} (rel.diff r {row['max_rel_diff_r']})")
    o = m0.opt
    return {
        "mujoco_version": mujoco.__version__,
        "config": CONFIG,
        "jacobian": JACOBIAN,
        "solver": solver_name(m0),
        "tolerance": float(o.tolerance),
        "ls_tolerance": float(o.ls_tolerance),
        "max_iterations": int(o.iterations),
        "noslip_iterations": int(o.noslip_iterations),
        "warmstart_enabled": not (o.disableflags & mujoco.mjtDisableBit.mjDSBL_WARMSTART),
        "islands_enabled": not (o.disableflags & mujoco.mjtDisableBit.mjDSBL_ISLAND),
        "tolerance_meaning": (
            "MuJoCo's Newton solver stops (per island) when the cost improvement of an iteration or "
            "the gradient norm, both scaled by 1/trace(M) of the island, falls below `tolerance` "
            "(or its Newton decrement does); a bound on a scaled cost, not on a physical quantity. "
            "The physical accuracy it reached is each problem's `accuracy` (the export's checks: "
            "`mj_kkt_dual_cone_viol` and `abs_residual_inf` in m/s, `mj_kkt_complementarity` in N s m/s)"),
        "warm_start": (
            "each timed solve starts from a copy of the replayed state before mj_fwdConstraint, whose "
            "qacc_warmstart is the previous step's qacc as the run left it; MuJoCo uses it when its "
            "cost beats qacc_smooth's, so every repeat is the run's own warm-started solve"),
        "timer": "time.perf_counter_ns around the mj_fwdConstraint call alone, single thread; "
                 "the copy that restores the state is outside the timed region",
        "call_overhead_seconds_median": overhead * 1e-9,
        "variants": {
            "dense_cold": "the same solve with MuJoCo's warm start disabled (mjDSBL_WARMSTART): starts "
                          "from qacc_smooth, as a solver without the previous step's answer would",
            "auto_warm": "the same state (qpos, qvel, qacc_warmstart) in the same scene built with "
                         "MuJoCo's default jacobian=\"auto\" (sparse from nv = 60, as bench.py runs it), "
                         "warm-started; a different but equivalent factorisation, so r agrees with "
                         "the export's to the solver's tolerance, not bitwise",
            "auto_cold": "auto_warm with the warm start disabled (mjDSBL_WARMSTART) and opt.tolerance "
                         "set to the run's --cold-tolerance: the reference of the speed protocol "
                         "(each timed solve starts fresh, MuJoCo's default Jacobian, the shared "
                         "tolerance in each solver's own stopping test)",
            "auto_cold_own": "auto_warm with the warm start disabled (mjDSBL_WARMSTART) at the "
                             "model's own opt.tolerance: MuJoCo's solve as a user runs it, from "
                             "scratch as each of ours starts; the reference of the "
                             "solver-against-solver tables"},
        "replay_match_tolerance": MATCH_TOL,
        "problems": rows,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="problem stems (default: all of index.json)")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    ap.add_argument("--data", default=DATA, help="the data/mujoco folder")
    ap.add_argument("--check", action="store_true",
                    help=f"replay {CHECK_PROBLEM} only; exit 1 if the replay does not match the file")
    ap.add_argument("--cold-tolerance", type=float, default=None,
                    help="opt.tolerance of the auto_cold variant (default: the model's own, 1e-8)")
    a = ap.parse_args()
    if a.repeats < 1:
        ap.error("--repeats must be at least 1")
    with open(os.path.join(a.data, "index.json")) as f:
        index_names = [e["name"] for e in json.load(f)]
    if a.check:
        res = run([CHECK_PROBLEM], min(a.repeats, 5), a.data, index_names)
        row = res["problems"][0]
        ok = row["replay_matches"] and row["timed_solves_reproduce"]
        print(json.dumps(finite({"check": "ok" if ok else "failed", "problem": row["problem"],
                          "contacts": row["contacts"], "contacts_file": row["contacts_file"],
                          "max_rel_diff_r": row["max_rel_diff_r"],
                          "timed_solves_reproduce": row["timed_solves_reproduce"],
                          "replay_problems": row["replay_problems"]}), indent=1))
        log("check: " + ("replay matches the exported problem" if ok else "REPLAY DOES NOT MATCH"))
        sys.exit(0 if ok else 1)
    names = a.names or index_names
    res = run(names, a.repeats, a.data, index_names, a.cold_tolerance)
    txt = json.dumps(finite(res), indent=1, allow_nan=False)
    if a.out:
        with open(a.out, "w") as f:
            f.write(txt + "\n")
    else:
        print(txt)
    bad = [r["problem"] for r in res["problems"] if not r["replay_matches"]]
    if bad:
        log(f"replay does not reproduce the exported state for: {', '.join(bad)}")


if __name__ == "__main__":
    main()
