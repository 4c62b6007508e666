"""MuJoCo's side of the fidelity ladder (ContactBench's accuracy against time per solve, Le Lidec
et al., T-RO 2024, sec. VI; `experiments/configs/fidelity-ladder/`): MuJoCo's own
`opt.tolerance` x `opt.iterations` ladder, started cold and warm, on sampled steps of MuJoCo's
own trajectories of the ladder's three scenes, every answer judged by the project's ruler
(`contactlab.evaluate`: the natural-map residual of the rigid problem) and ContactBench's five
figures, as our pairs' rungs are (`experiments/runs/src/ladder.rs`).

Usage:
  python3 ladder.py [--out FILE] [--only SCENE[,SCENE]] [--samples N] [--tols 1e-4,1e-8]
                    [--caps 10,200] [--small] [--without-ruler]

Scenes (`fidelity.py`'s builders and conventions, its module docstring):
  * `sliding_cube`: the cube launched along x at 1 m/s on the plane, mu 0.4, settled 0.5 s as
    fidelity.py settles it, then its 0.6 s run (the steps from t = 0);
  * `stack`: `stack_spec(1000.0, name="stack_face")`, the top cube 1000 times heavier standing
    on the bottom one's face, 100 steps from rest;
  * `pile`: `pile_spec(20)`, 20 cubes dropped into the open box, 2 s.
Configurations: `elliptic-impratio1-noslip0` (MuJoCo's defaults with the elliptic cone) and
fidelity.py's MJ_BEST (solref (2 dt, 1), impratio 10, noslip 10). Pyramidal cones have no point:
the ruler's problem builder refuses them (their rows are the pyramid's edges, another law).

Protocol, per scene and configuration:
  1. The trajectory: the scene runs as fidelity.py runs it (the very function, through its
     `before_step` hook), at the model's own solver settings (MuJoCo's defaults,
     `opt.tolerance` 1e-8 and `opt.iterations` 100; fidelity.py sets neither), keeping before
     each step its full state, `mj_getState` with `mjSTATE_INTEGRATION` (positions,
     velocities, `qacc_warmstart`, time, applied forces, ...). Replaying one step from a kept
     state must give the next kept state bit for bit, or the run fails.
  2. The steps whose forward finds a contact (`d.ncon > 0`; MuJoCo's launched cube hops, so
     not all of its steps) are sampled as the Rust ladder's `spread` does: all of them when
     there are at most `samples`, else `samples` indices spread evenly, first and last
     included.
  3. Each rung on each sampled step: the state restored, `m.opt.tolerance` and
     `m.opt.iterations` set to the rung's tolerance and cap, the warm start disabled
     (`mjDSBL_WARMSTART`, cold: MuJoCo starts from the unconstrained acceleration
     `qacc_smooth`) or enabled (warm: MuJoCo starts from the kept `qacc_warmstart`, its own
     answer to the step before at the trajectory's settings, when that beats `qacc_smooth`: the
     start MuJoCo has in a run, not an answer at the ladder's tightest rung as our pairs' warm
     start), then one `mj_forward` builds everything and ONE further `mj_fwdConstraint` is
     timed alone (`time.perf_counter`, garbage collector off; the Python call's own overhead,
     about 0.3 us, is included): the same inputs, so the same deterministic solve (its answer
     is the forward's, bit for bit), noslip's pass included where the configuration has one. The
     model's options are restored after every rung; the model is built once.
  4. The answer `r = h efc_force` is judged on the rigid problem of the step
     (`contactlab.mujoco.local_problem`, built once per sampled step after its forward: it
     does not depend on the rung, and every rung must find the same contacts and rows, or the
     run fails) by `contactlab.evaluate(problem, r, dt=h)`: `residual` is its natural map,
     the five ContactBench figures its `contactbench_*` on the forces `r / h`.
     MuJoCo's tolerance is its own stop (a relative cost improvement and gradient scaled by the
     island's inertia), not our residual, and MuJoCo solves its soft problem, not the rigid
     one: the same number means different things on the two sides, and the ruler is what makes
     the rungs comparable; MuJoCo's answers keep a floor at any tolerance.

One record per (scene, config, step, rung): `scene_name`, `engine` ("mujoco"), `config`, `step`
(index from t = 0 in the trajectory), `time_step`, `start_from` ("cold"/"warm"), `tol`, `cap`,
`seconds` (the timed `mj_fwdConstraint`), `iterations` (summed over the constraint islands,
`d.solver_niter[:max(1, d.nisland)]`), `converged` (every island stopped before the cap),
`contacts` (`d.ncon`), `rows` (`d.nefc`), `residual`, `primal`, `dual`, `complementarity`,
`signorini`, `dissipation_gap`, `ruler` ("contactlab", or "missing" under `--without-ruler`,
which leaves the residual and the figures null: for a machine without `contactlab`). The JSON
is `{"mujoco_version": ..., "records": [...]}`.

--small (CI size): 5 samples, tolerances 1e-4 and 1e-8, caps 10 and 200, all three scenes (the
pile, its 2 s trajectory included, takes about 3 s). The full run (200 samples, 42 rungs) takes
well under a minute, most of it the pile's.
"""
import argparse
import gc
import os
import sys
import time

# One BLAS thread (before numpy loads): the ruler's dense algebra then neither spins threads
# beside MuJoCo's timed solves nor crawls on a busy machine (on 2 busy cores the pile's
# problems took five times longer threaded).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import mujoco  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402

CONFIGS = ["elliptic-impratio1-noslip0", fidelity.MJ_BEST]
TOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]
CAPS = [10, 50, 200]
STARTS = ["cold", "warm"]
SAMPLES = 200
SMALL = dict(samples=5, tols=[1e-4, 1e-8], caps=[10, 200],
             scenes=["sliding_cube", "stack", "pile"])
STATE = mujoco.mjtState.mjSTATE_INTEGRATION
FIGURES = {"primal": "contactbench_primal", "dual": "contactbench_dual",
           "complementarity": "contactbench_complementarity",
           "signorini": "contactbench_signorini", "dissipation_gap": "contactbench_dissipation"}


def scenes():
    """The ladder's scenes by name (fidelity.py's scene dicts)."""
    return {"sliding_cube": fidelity.scene_specs()["sliding_cube"],
            "stack": fidelity.stack_spec(1000.0, name="stack_face"),
            "pile": fidelity.pile_spec(20)}


def runner(scene):
    """fidelity.py's MuJoCo run of a scene (each takes the `before_step` hook)."""
    return {"cube": fidelity.run_mujoco, "stack": fidelity.run_mujoco_stack,
            "pile": fidelity.run_mujoco_pile}[scene["body"]]


def spread(candidates, samples):
    """`samples` of `candidates` spread evenly, first and last included (all of them when there
    are no more): the Rust ladder's `spread`, index for index."""
    n = len(candidates)
    if n <= samples:
        return list(candidates)
    if samples == 1:
        return [candidates[0]]
    return [candidates[(k * (n - 1) + (samples - 1) // 2) // (samples - 1)] for k in range(samples)]


def trajectory(scene, config):
    """MuJoCo's run of the scene at the model's own settings: the model and the state before
    each step of the run (step 0 at t = 0)."""
    states, model = [], []

    def keep(m, d, k):
        if not model:
            model.append(m)
        assert k == len(states)
        s = np.empty(mujoco.mj_stateSize(m, STATE))
        mujoco.mj_getState(m, d, s, STATE)
        states.append(s)

    runner(scene)(scene, config, before_step=keep)
    return model[0], states


def restore(m, d, state):
    """`d` at a kept state, forward run (everything the step's solve reads built)."""
    mujoco.mj_setState(m, d, state, STATE)
    mujoco.mj_forward(m, d)


def contact_steps(m, d, states):
    """The steps whose forward finds a contact."""
    out = []
    for k, s in enumerate(states):
        restore(m, d, s)
        if d.ncon > 0:
            out.append(k)
    return out


def check_replay(m, d, states, k):
    """One step replayed from the kept state k must give the kept state k + 1 bit for bit."""
    if k + 1 >= len(states):
        return
    mujoco.mj_setState(m, d, states[k], STATE)
    mujoco.mj_step(m, d)
    s = np.empty_like(states[k + 1])
    mujoco.mj_getState(m, d, s, STATE)
    if not np.array_equal(s, states[k + 1]):
        raise RuntimeError(f"step {k} replayed from its kept state does not give step {k + 1}'s "
                           f"(max difference {np.abs(s - states[k + 1]).max():.3g})")


def iterations(d, cap):
    """The solver's iterations summed over the constraint islands, and whether every island
    stopped before the cap."""
    n = max(1, min(int(d.nisland), len(d.solver_niter)))
    it = [int(x) for x in d.solver_niter[:n]]
    return sum(it), all(x < cap for x in it)


def solve_rung(m, d, state, start, tol, cap):
    """MuJoCo's solve of the kept state at one rung: the seconds of one `mj_fwdConstraint`
    after a forward at the rung's options (the options restored afterwards)."""
    opt = m.opt
    saved = (opt.tolerance, opt.iterations, opt.disableflags)
    warm = int(mujoco.mjtDisableBit.mjDSBL_WARMSTART)
    try:
        opt.tolerance, opt.iterations = tol, cap
        opt.disableflags = saved[2] | warm if start == "cold" else saved[2] & ~warm
        restore(m, d, state)
        t0 = time.perf_counter()
        mujoco.mj_fwdConstraint(m, d)
        return time.perf_counter() - t0
    finally:
        opt.tolerance, opt.iterations, opt.disableflags = saved


def rungs(tols, caps):
    """Every rung, `(start, tol, cap)`: starts, then tolerances, then caps (the Rust ladder's
    order)."""
    return [(s, t, c) for s in STARTS for t in tols for c in caps]


def ladder(name, scene, config, args, ruler):
    """Every record of one scene in one configuration."""
    m, states = trajectory(scene, config)
    d = mujoco.MjData(m)
    candidates = contact_steps(m, d, states)
    picked = spread(candidates, args.samples)
    if picked:
        check_replay(m, d, states, picked[0])
    h = float(m.opt.timestep)
    out = []
    gc.disable()
    try:
        for k in picked:
            restore(m, d, states[k])
            shape = (int(d.ncon), int(d.nefc))
            problem = ruler.mujoco.local_problem(m, d) if ruler else None
            for start, tol, cap in rungs(args.tols, args.caps):
                seconds = solve_rung(m, d, states[k], start, tol, cap)
                if (int(d.ncon), int(d.nefc)) != shape:
                    raise RuntimeError(f"{name} {config} step {k}: {d.ncon} contacts and {d.nefc} "
                                       f"rows at tol {tol:g} cap {cap}, {shape} at the "
                                       "trajectory's settings")
                it, converged = iterations(d, cap)
                rec = {"scene_name": name, "engine": "mujoco", "config": config, "step": k,
                       "time_step": h, "start_from": start, "tol": tol, "cap": cap,
                       "seconds": seconds, "iterations": it, "converged": converged,
                       "contacts": shape[0], "rows": shape[1]}
                if ruler:
                    r = h * np.asarray(d.efc_force[:shape[1]])
                    ev = ruler.evaluate(problem, r, dt=h)
                    rec["residual"] = float(ev["natural_map"])
                    rec.update({k2: float(ev[v]) for k2, v in FIGURES.items()})
                    rec["ruler"] = "contactlab"
                else:
                    # JSON null: the lab reads a column of numbers and nulls as floats.
                    rec["residual"] = None
                    rec.update({k2: None for k2 in FIGURES})
                    rec["ruler"] = "missing"
                out.append(rec)
    finally:
        gc.enable()
    print(f"{name:13s} {config:36s} {len(states):5d} steps, {len(candidates):5d} with contacts, "
          f"{len(picked)} sampled", file=sys.stderr, flush=True)
    return out


def floats(text):
    return [float(x) for x in text.split(",") if x]


def ints(text):
    return [int(x) for x in text.split(",") if x]


def main():
    """Parse the command line, run the ladder, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None, help="JSON file (default: stdout)")
    ap.add_argument("--only", default=None, help="comma list of scenes")
    ap.add_argument("--samples", type=int, default=None, help=f"steps per scene ({SAMPLES})")
    ap.add_argument("--tols", type=floats, default=None, help="comma list of tolerances")
    ap.add_argument("--caps", type=ints, default=None, help="comma list of iteration caps")
    ap.add_argument("--small", action="store_true",
                    help="CI size: 5 samples, tols 1e-4,1e-8, caps 10,200")
    ap.add_argument("--without-ruler", action="store_true",
                    help="contactlab missing: no residual or figures (null), ruler 'missing'")
    a = ap.parse_args()
    base = SMALL if a.small else dict(samples=SAMPLES, tols=TOLS, caps=CAPS, scenes=None)
    a.samples = a.samples if a.samples is not None else base["samples"]
    a.tols = a.tols or base["tols"]
    a.caps = a.caps or base["caps"]
    if a.samples < 1 or any(not t > 0 for t in a.tols) or any(c < 1 for c in a.caps):
        ap.error("samples and caps must be at least 1, tolerances positive")
    specs = scenes()
    names = a.only.split(",") if a.only else (base["scenes"] or list(specs))
    bad = [n for n in names if n not in specs]
    if bad:
        ap.error(f"unknown scene(s) {bad}; known: {list(specs)}")
    ruler = None
    if not a.without_ruler:
        import contactlab
        import contactlab.mujoco  # noqa: F401  (the submodule the ruler's problems come from)
        ruler = contactlab
    w0 = time.perf_counter()
    records = []
    for n in names:
        for cfg in CONFIGS:
            records += ladder(n, specs[n], cfg, a, ruler)
    print(f"{len(records)} records in {time.perf_counter() - w0:.1f} s", file=sys.stderr)
    fidelity.write_json({"mujoco_version": mujoco.__version__, "records": records}, a.out)


if __name__ == "__main__":
    main()
