"""The robot study's runs: every scene of `robot_scenes.py` stepped by MuJoCo (its configurations)
and by our (formulation, optimizer) pairs through `contactlab.mujoco.step`, one JSON record per
(scene, engine, configuration or pair) with the scene's metrics and the step statistics.

Usage:
  python3 robots.py [--scenes a,b] [--configs default,best,grid]
                    [--pairs none|core|papers|all|f+o,...] [--small] [--max-duration S]
                    [--papers-duration S] [--all-pairs-duration S] [--out FILE.json]

Our pairs run on the scene's "pair" configuration (elliptic cones, noslip 0, the model's own
solref and solimp, whose position part is the rigid pairs' drift target, made consistent over
redundant rows: `contactlab.mujoco.step`'s default `targets="consistent"`; SAP corrects with
its own `phi0`), each solve warm-started from the previous step's answer (`contactlab.mujoco.step`'s
matching of renumbered contacts), to the natural-map tolerance `TOL` (SAP to its own
optimality) within the iteration budget `BUDGET` and the time limit `TIME_LIMIT`, in the step's metric (`metric="step"`: M + h D under Euler with damping, so the
kept velocity is the pair's). `CORE` pairs (one per paper, and the generic natural map with
projected Levenberg-Marquardt from an ADMM start, PGS and ADMM) run each scene for its duration
(at most `--max-duration`);
`PAPERS` pairs (each other paper's own) for `--papers-duration` seconds, the first part of each
scene; `--pairs all` adds every other compatible pair for `--all-pairs-duration` seconds. On
`METRIC_SCENES`, `METRIC_PAIRS` step again in MuJoCo's metric (`metric="mujoco"`, config
`pair-metric-mujoco`) for the scene's duration; `DEFAULT_PAIRS` (the pairs whose core run is at
other settings than their paper's, at the paper's: PGS and ADMM, config `pair`) likewise. MuJoCo's
default configuration is stepped in the same process right before each scene's pairs, so that
every step time has its `mj_step` beside it, measured on the same machine in the same minute.

Each pair's record names its group (`core`, `papers`, `all`, `metric`, `defaults`, `custom`). Per step
(kept as summary statistics): the ruler's status, iterations, the Rust solve's seconds,
the whole step's seconds and its parts (MuJoCo's forward stages, forming the problem in Python,
the call, the write-back with the integrator), and whether MuJoCo reset the state.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robot_scenes as rs  # noqa: E402
from extension import (  # noqa: E402,F401
    _changed, _extension, _head, not_release, stale_extension, write_result)

#: The pairs that step every scene for its whole duration: SAP (Castro et al.), the natural map
#: with a Newton-type driver, PGS and ADMM. The natural map's driver is the projected
#: Levenberg-Marquardt of Kanzow and Petra (its solutions lie in the product of the impulse sets,
#: the problem that driver is made for, and its non-monotone line search steps over the map's
#: kinks); the regular LM of Mylapilli and Jain, with its smooth lambda schedule, cycles between
#: a rejected step across a kink and an accepted step too short to matter, and stops as
#: `stagnated` on most hand steps (it stays in `PAPERS` to show it). The natural map starts
#: where ADMM first reads `ADMM_START_TOL` on the ruler (the formulation's `admm_start_tol`, as
#: Erleben and Ortiz start Newton with Gauss-Seidel sweeps): on the hands' grasps, whose rows
#: outnumber the hand's degrees of freedom, projected LM from the previous answer alone crawls by
#: projected-gradient steps (it stays in `PAPERS` to show it).
ADMM_START_TOL = 1e-4
#: ADMM's core settings: each block of `W` equilibrated to a unit mean diagonal (one factor per
#: block, so each set keeps its shape: `core/src/cone_scaling.rs`) and `rho` held at its
#: spectral start. The paper's defaults (`eta = 1e-6` and the spectral start and update, in the
#: problem's own units) are not scale-free: on Adroit, whose `W` has a diagonal over four
#: decades (friction loss on light finger joints beside the ball's contacts), its `rho` moved
#: hundreds of times a solve and 25% of the steps ended their budget far from the tolerance;
#: equilibrated, the update still crawled on the grasp's first steps, at a constant `rho` it did
#: not. The paper's defaults run too (`DEFAULT_PAIRS`).
ADMM_OPTIONS = {"equilibrate": True, "rho_update": "constant"}
#: PGS's core settings: successive sweeps combined by the nonsmooth nonlinear conjugate gradient
#: of Silcowitz, Niebe and Erleben (2010; `core/src/drivers/nncg.rs`), restarted when a sweep's
#: squared step exceeds the last one's by half (`nncg_restart = 1.5`; the paper restarts on any
#: rise). On a grasp, whose rows outnumber the hand's degrees of freedom, plain sweeps drift
#: along the grasp's internal forces at a nearly constant step; on the lying CMU humanoid they
#: ended their budget or the time limit on 3% of the steps. At the paper's restart the drift's
#: steps, equal up to rounding, restarted the combination on about every other sweep (the Jaco
#: 95.0% accepted, run `a11b0e9`); at 1.5 the direction builds up along the drift and a jump of
#: the step still restarts it. Plain PGS runs too (`DEFAULT_PAIRS`).
PGS_OPTIONS = {"nncg": True, "nncg_restart": 1.5}
CORE = [
    ("sap", "newton-merit"),
    ("natural-map", "plm", {"admm_start_tol": ADMM_START_TOL}),
    ("coulomb", "pgs", PGS_OPTIONS),
    ("coulomb", "admm", ADMM_OPTIONS),
]
#: Each other paper's own pair (Todorov's driver, Erleben's min-map Newton, Mylapilli and Jain's
#: projected LM on the FB MLCP and their regular LM on the natural map, Hwangbo's bisection), for
#: `--papers-duration` seconds.
PAPERS = [
    ("implicit-ncp", "todorov"),
    ("min-map", "newton"),
    ("mlcp-fb", "plm"),
    ("natural-map", "lm"),
    ("natural-map", "plm"),
    ("coulomb", "bisection-sor"),
]
#: The pairs that also step `METRIC_SCENES` in MuJoCo's metric (`metric="mujoco"`: `M`, the
#: integrator damping their answer afterwards) beside the step's (the default), so that the
#: study shows what the choice does on a damped robot.
METRIC_PAIRS = [
    ("sap", "newton-merit", {"metric": "mujoco"}),
    ("coulomb", "admm", {"metric": "mujoco"}),
]
METRIC_SCENES = ("humanoid_fall",)
#: The core pairs that run at other settings than their paper's, again at the paper's own
#: defaults, every scene for its duration: plain PGS, and ADMM with the spectral `rho` in the
#: problem's units. (The natural map without its ADMM start is a papers' pair.)
DEFAULT_PAIRS = [("coulomb", "pgs"), ("coulomb", "admm")]
TOL = 1e-8          # the shared ruler's acceptance (natural-map residual)
TARGETS = "consistent"  # the rigid rows' drift targets (`contactlab.mujoco.consistent_targets`)
#: Every `SPEED_EVERY`-th step with rows is also solved by MuJoCo (`mj_fwdConstraint`, warm and
#: cold) and by the pair from zero, on the same state, interleaved within the step
#: (`contactlab.mujoco.step(..., beside_mujoco=True)`): the solve-against-solve timings.
SPEED_EVERY = 10
TIME_LIMIT = 0.5    # per solve (s): a safety net; a solve that reaches it is counted as failed
#: Iteration budgets by optimizer: the first-order sweeps get Siconos' CI budget for its NSGS
#: and ADMM (10 000), since on the hands' singular `W` they approach the tolerance linearly and
#: slowly; every other driver the library's default (`contactlab.solve`'s 500), which a
#: Newton-type driver that has not converged within it does not beat by iterating longer.
BUDGET = {"pgs": 10_000, "admm": 10_000}


def every_pair():
    """Every compatible pair that takes every constraint kind (`contactlab.pairs()`)."""
    import contactlab

    return [
        (p["formulation"], p["optimizer"])
        for p in contactlab.pairs()
        if p["compatible"] and not p["refuses"]
    ]


def pair_stepper(formulation, optimizer, **options):
    """`stepper(model, data)` for `robot_scenes.run`: one `contactlab.mujoco.step`, warm from
    the previous one, returning the step's statistics."""
    from contactlab import mujoco as cm

    previous, count = [None], [0]
    options.setdefault("targets", TARGETS)

    def stepper(m, d):
        count[0] += 1
        r = cm.step(m, d, formulation, optimizer, warm=previous[0], tol=TOL,
                    max_iter=BUDGET.get(optimizer), time_limit=TIME_LIMIT,
                    beside_mujoco=count[0] % SPEED_EVERY == 0, **options)
        previous[0] = r
        s = r.solution
        rust = 0.0 if s is None else float(s.seconds)
        return {
            **_beside(r.beside, rust),
            "status": r.status,
            "iterations": 0 if s is None else int(s.iterations),
            "admm_start_iterations": (None if s is None
                                      else s.counters.get("admm_start_iterations")),
            "solve_s": rust,
            "residual": 0.0 if s is None else float(s.residual),
            "forward_s": r.seconds_forward,
            "problem_s": r.seconds_problem,
            "call_s": r.seconds_solve - rust,
            "integrate_s": r.seconds_integrate,
            "warm_rows": r.warm_rows,
            "rows": r.rows,
            "reset": bool(r.reset),
        }

    return stepper


def _beside(beside, warm_s):
    """A sampled step's solve-against-solve timings (see `SPEED_EVERY`), or nothing."""
    if "cold_s" not in beside:
        return {}
    return {
        "mj_solve_warm_s": beside["mujoco_warm_s"],
        "mj_solve_cold_s": beside["mujoco_cold_s"],
        "mj_iterations_cold": beside["mujoco_cold_iterations"],
        "solve_warm_s": warm_s,
        "solve_cold_s": beside["cold_s"],
        "iterations_cold": beside["cold_iterations"],
        "ratio_warm": warm_s / beside["mujoco_warm_s"],
        "ratio_cold": beside["cold_s"] / beside["mujoco_cold_s"],
    }


def _median(rows, key, scale=1.0):
    """The median of one per-step statistic over the steps that have it (None without)."""
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) * scale if values else None


def step_statistics(rows):
    """The per-run summary of a pair's per-step statistics."""
    solved = [r for r in rows if r.get("rows", 0) > 0]
    status = [r["status"] for r in solved]
    out = {
        "steps": len(rows),
        "steps_with_rows": len(solved),
        "accepted_fraction": (sum(s == "converged" for s in status) / len(status)) if status else 1.0,
        "failed_steps": sum(s != "converged" for s in status),
        "resets": sum(bool(r.get("reset")) for r in rows),
        "statuses": {s: status.count(s) for s in sorted(set(status))},
        "iterations_median": _median(solved, "iterations"),
        "iterations_max": max((r["iterations"] for r in solved), default=0),
        "admm_start_iterations_median": _median(solved, "admm_start_iterations"),
        "residual_median": _median(solved, "residual"),
        "residual_max": max((r["residual"] for r in solved), default=0.0),
        "solve_us_median": _median(solved, "solve_s", 1e6),
        "forward_us_median": _median(rows, "forward_s", 1e6),
        "problem_us_median": _median(solved, "problem_s", 1e6),
        "call_us_median": _median(solved, "call_s", 1e6),
        "integrate_us_median": _median(rows, "integrate_s", 1e6),
        "warm_fraction": (sum(r["warm_rows"] for r in solved[1:])
                          / max(1, sum(r["rows"] for r in solved[1:]))),
        "speed_steps": sum("ratio_cold" in r for r in solved),
        "mj_solve_warm_us_median": _median(solved, "mj_solve_warm_s", 1e6),
        "mj_solve_cold_us_median": _median(solved, "mj_solve_cold_s", 1e6),
        "mj_iterations_cold_median": _median(solved, "mj_iterations_cold"),
        "solve_warm_us_sampled_median": _median(solved, "solve_warm_s", 1e6),
        "solve_cold_us_median": _median(solved, "solve_cold_s", 1e6),
        "iterations_cold_median": _median(solved, "iterations_cold"),
        "solve_ratio_warm_median": _median(solved, "ratio_warm"),
        "solve_ratio_cold_median": _median(solved, "ratio_cold"),
    }
    return out


#: The scene's measures, which describe the scene only while MuJoCo has not reset its state.
SCENE_MEASURES = ("slip_", "rotation", "penetration", "limit_violation", "equality_violation",
                  "drift", "foot_slip", "energy_")


def void_after_reset(record):
    """Blanks the scene's measures of a run in which MuJoCo reset the state (an answer whose
    acceleration `mj_checkAcc` rejected): after the reset the run no longer is the scene."""
    for key in list(record):
        if key.startswith(SCENE_MEASURES):
            record[key] = None
    record["measures_void"] = "MuJoCo reset the state after a pair's answer"


def run_mujoco(scene, config, duration):
    """One MuJoCo run of a scene in a configuration: its record."""
    w = time.perf_counter()
    rows, s = rs.run(scene, duration=duration, config=config)
    s.update(engine="mujoco", formulation="", optimizer="", wall_s=time.perf_counter() - w,
             question=scene.question)
    return s


def run_pair(scene, pair, duration, mj_step_us, group="custom"):
    """One run of a scene by a pair: its record, with the time per step against `mj_step`'s
    (MuJoCo's default configuration, measured just before in the same process) and the group
    (`core`, `papers`, `all`, `metric`, `defaults`, `custom`) it ran in."""
    import contactlab

    options = pair[2] if len(pair) > 2 else {}
    config = "pair" + "".join(f"-{k}-{v}" for k, v in options.items())
    w = time.perf_counter()
    try:
        rows, s = rs.run(scene, pair_stepper(*pair[:2], **options), duration=duration,
                         config="pair")
    except (contactlab.SolverError, ValueError) as e:
        if "refuses" not in str(e) and "does not take" not in str(e):
            raise
        return {"scene": scene.name, "engine": "contactlab", "formulation": pair[0],
                "optimizer": pair[1], "config": config, "group": group, "refused": str(e),
                "wall_s": time.perf_counter() - w, "question": scene.question}
    s.update(step_statistics(rows))
    if s["resets"]:
        void_after_reset(s)
    s.update(engine="contactlab", formulation=pair[0], optimizer=pair[1], config=config,
             group=group, wall_s=time.perf_counter() - w, question=scene.question,
             mj_step_us_median=mj_step_us,
             step_ratio_to_mj_step=(s["step_us_median"] / mj_step_us) if mj_step_us else None)
    return s


def run_scene(name, configs, groups, duration):
    """Every record of one scene: MuJoCo's configurations, then each group of pairs (its name,
    its pairs and the seconds they run), MuJoCo's default stepped again before a group that runs a
    different length, so that each pair's step time has `mj_step`'s of the same length beside it."""
    scene = rs.SCENES[name]
    full = duration(scene)
    records = [run_mujoco(scene, c, full) for c in rs.configs_for(scene, configs)]
    reference = {full: next((r for r in records if r["config"] == "default"), None)}
    if groups and name in METRIC_SCENES:
        groups = [*groups, ("metric", METRIC_PAIRS, None)]
    if groups:
        groups = [*groups, ("defaults", DEFAULT_PAIRS, None)]
    for group, pairs, seconds in groups:
        length = full if seconds is None else min(seconds, full)
        if pairs and length not in reference:
            short = run_mujoco(scene, "default", length)
            short["config"] = f"default-{length:g}s"
            records.append(short)
            reference[length] = short
        mj = reference[length]
        for pair in pairs:
            records.append(run_pair(scene, pair, length, mj and mj["step_us_median"], group))
            _progress(records[-1])
    return records


def _progress(r):
    what = "refused" if "refused" in r else f"accepted {r.get('accepted_fraction', 1):.3f}"
    print(f"{r['scene']:20s} {r['formulation']}+{r['optimizer']:16s} {what} "
          f"{r['wall_s']:7.1f} s", file=sys.stderr, flush=True)


def pair_groups(text, papers_s, all_s):
    """The groups of pairs `--pairs` names, each `(name, pairs, seconds)` with how long its
    pairs run (None: the scene's duration): `none`; `core`; `papers` (core, then each paper's
    pair for `papers_s`); `all` (those, then every other compatible pair for `all_s`); or a
    comma list of `formulation+optimizer` (group `custom`) run for the scene's duration."""
    if text == "none":
        return []
    if text not in ("core", "papers", "all"):
        return [("custom", [tuple(p.split("+", 1)) for p in text.split(",") if p], None)]
    groups = [("core", list(CORE), None)]
    if text in ("papers", "all"):
        groups.append(("papers", list(PAPERS), papers_s))
    if text == "all":
        named = {p[:2] for p in CORE + PAPERS}
        groups.append(("all", [p for p in every_pair() if p not in named], all_s))
    return groups


def main():
    """Parse the command line, run every scene, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default=",".join(rs.SCENES))
    ap.add_argument("--configs", default="default,best,grid")
    ap.add_argument("--pairs", default="papers", help="none, core, papers, all or f+o,...")
    ap.add_argument("--small", action="store_true", help="each scene's CI duration")
    ap.add_argument("--max-duration", type=float, default=None, help="cap on a scene's duration")
    ap.add_argument("--papers-duration", type=float, default=1.0)
    ap.add_argument("--all-pairs-duration", type=float, default=0.5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--allow-stale-extension", action="store_true",
                    help="run the pairs with an extension built from other code than the tree")
    a = ap.parse_args()
    groups = pair_groups(a.pairs, a.papers_duration, a.all_pairs_duration)
    built, head = _extension("BUILD_COMMIT"), _head()
    stale = stale_extension(built, head, _changed(built, head)) if groups else None
    if stale and not a.allow_stale_extension:
        sys.exit(f"robots.py: {stale} (or pass --allow-stale-extension)")
    slow = not_release(_extension("BUILD_PROFILE"), a.small) if groups else None
    if slow:
        sys.exit(f"robots.py: {slow}")

    def duration(scene):
        full = scene.ci_duration if a.small else scene.duration
        return full if a.max_duration is None else min(full, a.max_duration)

    records = []
    for name in a.scenes.split(","):
        records += run_scene(name, a.configs.split(","), groups, duration)
    out = {
        "mujoco_version": mujoco.__version__,
        "contactlab_build": _extension("BUILD_PROFILE"),
        "contactlab_commit": built,
        "contactlab_stale": stale or "",
        "small": a.small,
        "tol": TOL,
        "targets": TARGETS,
        "time_limit_s": TIME_LIMIT,
        "first_order_budget": BUDGET["pgs"],
        "admm_start_tol": ADMM_START_TOL,
        "max_duration_s": a.max_duration,
        "papers_duration_s": a.papers_duration,
        "records": records,
    }
    write_result(out, a.out)


if __name__ == "__main__":
    main()
