"""SAP's Newton beside MuJoCo's Newton on clutter states the repository never stored, timed
interleaved in one process (issue 45's fresh problems and one protocol).

Usage:
  python3 fresh_clutter.py [--rounds 20] [--min-contacts 80] [--small] [--out FILE]

The problems:
- `fresh`: the clutter scene of `scenes.py` (spheres and cubes dropped in four columns into an
  open box, Castro et al. 2022 Sec. VI-C) at sizes, friction coefficients and seeds the export
  of `data/mujoco/` did not use (`SCENES`; the stored clutter is seed 7, friction 1), stepped by
  MuJoCo (Newton, elliptic cones, the export's `mj_newton_elliptic` configuration). Every
  `STRIDE`-th step from `FIRST_STEP` with at least `--min-contacts` contacts is a problem, at
  most `PER_SCENE` of them a scene.
- `repository`: the five stored steps with 80 or more contacts (`speed.toml`'s
  `mujoco_clutter_80plus`), replayed to the same state as `solver_times.py` replays them; the
  problem is the stored file, and `replay_rel_diff` says how far the replayed state's problem
  is from it (contact-space `W` and `q`, relative).

Each state is the problem MuJoCo's `mj_fwdConstraint` solves: `M v = J' r + M v*`, `u = J v`,
`v* = v + h qacc_smooth` (`data/mujoco/README.md`'s export: `H = J'`, `f = M v*`, `w = 0`), built
from the dense-Jacobian model as the export was, handed to `contactlab.solve` as a
`GeneralizedProblem` (SAP at its defaults: its regularisation from the Delassus estimate).

The protocol (`reports/peers/`' speed protocol, timed interleaved): per round, the problems in a
new seeded order; per problem, MuJoCo's `mj_fwdConstraint` with its default Jacobian
(`jacobian="auto"`), warm start disabled (`mjDSBL_WARMSTART`) and `opt.tolerance` = `REL_TOL`,
then SAP's Newton from zero (`tol` 1e-14, eq. 26's `rel_tol` = `REL_TOL`, the build inside the
time: `Solution.seconds`). Each timed solve follows an untimed one of the same solver on the same
problem, so both meet their own code in cache; garbage collection is off while timing. One
MuJoCo solve and one of ours alternate, so a change in the machine's load moves both sides.

The script refuses an extension built from other code than the tree's (an install outlives the
code it was built from) and, but for `--small`, one that is not a release build.

What sets the iterations (untimed, after the rounds): per problem, MuJoCo's iterations with
`opt.tolerance` = `TIGHT_TOL` (whether its count is low because its own stop is loose) and SAP's
with its friction regularisation `sigma` (eq. 30, the paper's 1e-3) at each of `SIGMAS`, the
stopping rule unchanged (whether its count is set by how stiff its stiction is). These answers
are other models' and are not timed or compared with MuJoCo's.

Output (JSON, `records`): one record per problem with both sides' median times over the rounds,
iterations (SAP's summed over its islands, as MuJoCo's are), SAP's status, the ratio of the
medians, and the untimed iterations above (`mujoco_iterations_tight`,
`sap_iterations_sigma_<sigma>`, None where SAP did not converge).
"""
import argparse
import gc
import math
import os
import statistics
import sys
import time

import numpy as np
import mujoco

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenes as S  # noqa: E402
import solver_times as T  # noqa: E402
from extension import timing_extension, write_result  # noqa: E402

#: The fresh scenes `(bodies, friction, seed)`: sizes and friction the export did not store,
#: seeds other than its 7.
SCENES = [(n, mu, seed) for n in (40, 60, 80) for mu in (0.5, 1.0) for seed in (11, 12)]
#: The CI version's scenes.
SMALL_SCENES = [(20, 0.5, 11)]
FIRST_STEP = 100   # the drop has reached the floor (h = 0.01 s)
STRIDE = 100       # steps between sampled states of one run
LAST_STEP = 600
PER_SCENE = 3
REL_TOL = 1e-6     # eq. 26's relative tolerance and MuJoCo's opt.tolerance (speed.toml)
TIGHT_TOL = 1e-10  # MuJoCo's opt.tolerance for its iterations at a tighter stop (untimed)
SIGMAS = [1e-4, 1e-2]  # SAP's sigma beside the paper's 1e-3 (untimed iterations)
SIGMA_MAX_ITER = 500   # their Newton steps (a stiffer stiction takes more)
ABS_TOL = 1e-14    # eq. 26's absolute tolerance (Drake's default)
MAX_ITER = 100
TIME_LIMIT = 2.0
SEED = 0           # the rounds' order
REPOSITORY = ["clutter_n40_seed7_step0090_nc83", "clutter_n40_seed7_step0400_nc110",
              "clutter_n40_seed7_step0599_nc110", "clutter_n80_seed7_step0120_nc146",
              "clutter_n80_seed7_step0180_nc206"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def problem_of(m, d):
    """The state's problem (after `mj_fwdConstraint` on the dense-Jacobian model `m`): the
    contacts' rows `[n, t1, t2]` as the export ordered them, `H = J'`, `f = M v*`, `w = 0`."""
    import contactlab

    Q = T.solve_quantities(m, d, T.contact_rows(d))
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    f = M @ (d.qvel + m.opt.timestep * d.qacc_smooth)
    return contactlab.GeneralizedProblem(M, Q["J"].T.copy(), f, np.zeros(Q["J"].shape[0]),
                                         Q["mu"])


class State:
    """One problem: MuJoCo's pre-solve data on the default-Jacobian model, and ours."""

    def __init__(self, name, set_name, scene, step, m_auto, d_auto, problem):
        self.name, self.set, self.scene, self.step = name, set_name, scene, step
        self.model = m_auto
        self.pre = T.snapshot_before_solve(m_auto, d_auto)
        self.work = mujoco.MjData(m_auto)
        self.problem = problem
        self.contacts = problem.num_contacts
        self.replay_rel_diff = None


def fresh_states(scenes, min_contacts):
    """The sampled states of the fresh scenes (see the module documentation)."""
    out = []
    for n, mu, seed in scenes:
        sc = S.clutter(n, mu=mu, seed=seed)
        m, d = S.mj_build(sc, T.CONFIG, jacobian=T.JACOBIAN)
        m_auto = T.auto_model(sc)
        taken = 0
        for k in range(LAST_STEP + 1):
            if k >= FIRST_STEP and (k - FIRST_STEP) % STRIDE == 0 and taken < PER_SCENE:
                T.snapshot_before_solve(m, d)
                mujoco.mj_fwdConstraint(m, d)
                if d.ncon >= min_contacts and not T.structure_problems(m, d):
                    name = f"clutter_n{n}_mu{mu:g}_seed{seed}_step{k:04d}_nc{d.ncon}"
                    out.append(State(name, "fresh", sc["name"], k, m_auto,
                                     T.same_state(m_auto, d), problem_of(m, d)))
                    taken += 1
            mujoco.mj_step(m, d)
        log(f"fresh clutter n={n} mu={mu:g} seed={seed}: {taken} states")
    return out


def repository_states(names):
    """The stored steps, replayed to their state; the problem read from its file."""
    import contactlab

    out = []
    for name in names:
        p = T.parse_name(name)
        sc = T.make_scene(p["key"])
        m, d = S.mj_build(sc, T.CONFIG, jacobian=T.JACOBIAN)
        for _ in range(p["step"]):
            mujoco.mj_step(m, d)
        T.snapshot_before_solve(m, d)
        mujoco.mj_fwdConstraint(m, d)
        stored = contactlab.read(os.path.join(T.DATA, "global", name + ".json"))
        m_auto = T.auto_model(sc)
        s = State(name, "repository", sc["name"], p["step"], m_auto, T.same_state(m_auto, d),
                  stored)
        s.replay_rel_diff = local_rel_diff(problem_of(m, d), stored)
        out.append(s)
    return out


def local_rel_diff(a, b):
    """The largest difference of two problems' contact-space `W` and `q`, relative to `b`'s."""
    la, lb = a.to_local(), b.to_local()
    if la.W.shape != lb.W.shape:
        return math.inf
    return max(float(np.abs(la.W - lb.W).max() / np.abs(lb.W).max()),
               float(np.abs(la.q - lb.q).max() / max(np.abs(lb.q).max(), 1e-300)))


def mujoco_solve(s, tolerance=REL_TOL):
    """One cold `mj_fwdConstraint` on a fresh copy of the state: (seconds, iterations)."""
    mujoco.mj_copyData(s.work, s.model, s.pre)
    with T.settings(s.model, cold=True, tolerance=tolerance):
        t0 = time.perf_counter_ns()
        mujoco.mj_fwdConstraint(s.model, s.work)
        t1 = time.perf_counter_ns()
    return (t1 - t0) * 1e-9, int(s.work.solver_niter[:max(1, s.work.nisland)].sum())


def sap_solve(s, max_iter=MAX_ITER, **options):
    """One SAP solve from zero, the build inside its `seconds` (`options`: SAP's `sigma`)."""
    import contactlab

    return contactlab.solve(s.problem, "sap", "newton-merit", tol=ABS_TOL, rel_tol=REL_TOL,
                            max_iter=max_iter, time_limit=TIME_LIMIT, **options)


def island_iterations(sol):
    """A SAP solve's Newton steps summed over its islands."""
    return int(sol.counters.get("island_iterations", sol.iterations))


def what_sets_the_iterations(s):
    """Untimed: MuJoCo's iterations at `TIGHT_TOL` and SAP's at each of `SIGMAS`, the same
    stopping rules otherwise (see the module documentation)."""
    out = {"mujoco_iterations_tight": mujoco_solve(s, TIGHT_TOL)[1]}
    for sigma in SIGMAS:
        sol = sap_solve(s, max_iter=SIGMA_MAX_ITER, sigma=sigma)
        out[f"sap_iterations_sigma_{sigma:g}"] = (
            island_iterations(sol) if sol.status == "converged" else None)
    return out


def time_interleaved(states, rounds):
    """Per state, both sides' timed solves, alternating (see the module documentation)."""
    rng = np.random.default_rng(SEED)
    times = {s.name: {"mujoco": [], "sap": []} for s in states}
    last = {}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for i in rng.permutation(len(states)):
                s = states[i]
                mujoco_solve(s)
                mj_s, mj_it = mujoco_solve(s)
                sap_solve(s)
                sol = sap_solve(s)
                times[s.name]["mujoco"].append(mj_s)
                times[s.name]["sap"].append(float(sol.seconds))
                last[s.name] = (mj_it, sol)
    finally:
        if gc_was:
            gc.enable()
    return times, last


def record(s, times, last):
    """The state's record from its timings and its last round's iterations and answer."""
    mj_it, sol = last
    mj, ours = statistics.median(times["mujoco"]), statistics.median(times["sap"])
    return {"set": s.set, "problem": s.name, "scene": s.scene, "step": s.step,
            "contacts": s.contacts, "dofs": int(s.model.nv), "rounds": len(times["sap"]),
            "mujoco_seconds": mj, "mujoco_iterations": mj_it,
            "sap_seconds": ours, "sap_status": sol.status,
            "sap_iterations": island_iterations(sol),
            "sap_newton_steps": int(sol.iterations), "replay_rel_diff": s.replay_rel_diff,
            "ratio": ours / mj}


def main():
    """Parse the command line, build the states, time them, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--min-contacts", type=int, default=80)
    ap.add_argument("--small", action="store_true",
                    help="the CI version: one small scene, no repository steps")
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    ap.add_argument("--allow-stale-extension", action="store_true",
                    help="time an extension built from other code than the tree's")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    built, profile, stale = timing_extension("fresh_clutter.py", a.allow_stale_extension, a.small)
    states = fresh_states(SMALL_SCENES if a.small else SCENES, a.min_contacts)
    if not a.small:
        states += repository_states(REPOSITORY)
    times, last = time_interleaved(states, a.rounds)
    records = [record(s, times[s.name], last[s.name]) | what_sets_the_iterations(s)
               for s in states]
    for r in records:
        log(f"{r['problem']:44s} nc {r['contacts']:4d} MuJoCo {r['mujoco_seconds'] * 1e3:7.3f} ms "
            f"({r['mujoco_iterations']:3d} it)  SAP {r['sap_seconds'] * 1e3:7.3f} ms "
            f"({r['sap_iterations']:3d} it, {r['sap_status']})  ratio {r['ratio']:.2f}")
    out = {"mujoco_version": mujoco.__version__, "contactlab_build": profile,
           "contactlab_commit": built, "contactlab_stale": stale,
           "rel_tol": REL_TOL, "abs_tol": ABS_TOL, "tight_tol": TIGHT_TOL, "sigmas": SIGMAS,
           "rounds": a.rounds,
           "min_contacts": a.min_contacts, "scenes": [list(x) for x in SCENES],
           "records": [T.finite(r) for r in records]}
    write_result(out, a.out)


if __name__ == "__main__":
    main()
