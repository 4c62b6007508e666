"""Our solvers beside MuJoCo's on the same clutter states, each judged by the natural-map
residual of the problem it solves, relative to that residual at zero (issue 45: "PGS within 5x
MuJoCo's solver=PGS, and Todorov's driver within 5x MuJoCo's Newton, at the same natural-map
residual on the same clutter steps"). Two studies, `--study`:
- `pgs`: our projected Gauss-Seidel (plain, and combined by NNCG) beside MuJoCo's `solver=PGS`;
- `newton`: Todorov's driver on the implicit NCP (Todorov 2010, the paper's Gauss-Newton with
  its dogleg and edge-aware line search) beside MuJoCo's `solver=Newton`, on our rigid problem
  and on MuJoCo's regularised one.

Usage:
  python3 levels.py [--study pgs|newton] [--rounds 7] [--fresh] [--small] [--out FILE]

The states are the five stored clutter steps of 80 or more contacts replayed to their state
(`fresh_clutter.repository_states`; with `--fresh`, also `fresh_clutter`'s fresh states). Each
side solves its own problem from zero:
- ours, the rigid Coulomb problem `(W, q, mu)` in contact space (`W` formed before the clock
  starts, as MuJoCo forms its `efc_AR` in `mj_fwdPosition` for PGS), by `contactlab.solve`:
  `("coulomb", "pgs")`, sweeps of the natural-map local solve with De Saxce's velocity, and the
  same with the nonsmooth nonlinear conjugate gradient on (`nncg=True`: Silcowitz, Niebe and
  Erleben 2010), off by default as the papers' PGS has it; or `("implicit-ncp", "todorov")`,
  the paper's defaults (no restarts);
- in the Newton study, also Todorov's driver on MuJoCo's problem (`ours_soft`): the local
  problem `(A + R, b, mu)` with MuJoCo's `A + R` and `b` below, under Coulomb's law as on ours
  (De Saxce's velocity: a sliding contact keeps `v_n = 0`, where MuJoCo's convex problem lets it
  lift off by `mu |v_t|`). A rigid `W` with more contact rows than velocities is singular, and
  the paper's Gauss-Newton can stop at a local minimum of its merit there ("this can only occur
  when J(x) is singular", section V-A); `R` makes the matrix positive definite as MuJoCo's solvers
  have it, so this side says what of the gap is the problem and what the method. (Scaling `b`
  by the step to impulse units changes neither the driver's iterates, up to the same scaling,
  nor the relative ruler.)
- MuJoCo's, its soft dual `min 1/2 f'(A + R) f + f' b` over the elliptic cones
  `mu f_n >= |f_t|` (`A = J M^-1 J'`, `R = efc_R`, `b = J qacc_smooth - aref = efc_b`), by
  `mj_fwdConstraint` with the study's `opt.solver`, warm start disabled. (Newton solves the
  same problem in its primal form, over accelerations.)

The ruler: per contact `F_a(x) = x_a - P_K(x_a - y_a)` with `y = W r + q` plus De Saxce's
`mu |y_t| e_n` on ours, `y = (A + R) f + b` on MuJoCo's (a convex program: no De Saxce term),
`y = (A + R) f + b` plus De Saxce's term on `ours_soft`;
`rho(x) = |F(x)| / |F(0)|`, the residual relative to the common cold start. For each level
`L` of `LEVELS` and each side, the fewest iterations `k_L` (sweeps or Newton iterations;
MuJoCo's `opt.iterations`, a cap per island as ours is) whose answer meets `rho <= L`: doubling
from 1 up to the study's cap, then halving the bracket to within 2%. A side that does not meet
`L` within the cap did not reach it (MuJoCo's elliptic PGS updates a contact's normal and
friction one after the other and can stop short of its optimum, where its Newton solver does
not; Todorov's driver can stop at a local minimum of its merit). The time at a level is that
of a solve capped at `k_L` (ours: `max_iter = k_L`; MuJoCo: `opt.iterations = k_L`,
`opt.tolerance = 0`), median over `--rounds` rounds, the sides interleaved as in
`fresh_clutter.py` (each timed solve after an untimed one of the same solve).

The script refuses an extension built from other code than the tree's and, but for `--small`,
one that is not a release build.

Output (JSON, `records`): one record per problem and level: each side's `k_L` (or none: the
study's iterations columns, `mujoco_iterations`, `ours_sweeps`, `ours_nncg_sweeps`,
`ours_iterations`, `ours_soft_iterations`), median time, reached residual (the best seen when it
did not reach the level), our times over MuJoCo's where both reached it (`ratio`, `ratio_nncg`,
`ratio_soft`), and the two
problems' conditioning, which bears on how many iterations a method needs: `mujoco_condition`
= `lambda_max / lambda_min` of `A + R` (positive definite: `R` bounds it), `ours_condition` the
same of `W` over its range (a rigid `W` with more contact rows than velocities is singular);
and `mujoco_newton_residual`, the same ruler on MuJoCo's Newton solver's answer to the same
problem (cold, `opt.tolerance` 1e-10), which says whether a side that stops short stops short
of an optimum that exists.
"""
import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np
import mujoco

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fresh_clutter as F  # noqa: E402
import solver_times as T  # noqa: E402
from extension import timing_extension, write_result  # noqa: E402

#: The relative natural-map residuals each side is asked to reach.
LEVELS = [1e-3, 1e-4, 1e-5, 1e-6]
#: The most iterations (sweeps) either side of the PGS study is given to reach a level.
MAX_SWEEPS = 8192
#: The same for the Newton study: Todorov's driver converges within tens of iterations where it
#: converges (the peers run's median on these steps is within its 500).
MAX_NEWTON = 512
#: The CI version: one stored step and two levels.
SMALL_PROBLEMS = ["clutter_n40_seed7_step0400_nc110"]
SMALL_LEVELS = [1e-2, 1e-3]
#: The stopping tolerance handed to our PGS so that only `max_iter` stops it.
NO_STOP = 1e-300
#: MuJoCo's Newton solver's tolerance for the reference optimum of its problem.
NEWTON_TOL = 1e-10
#: Fresh states need this many contacts (`fresh_clutter.py`'s default).
MIN_CONTACTS = 80
SEED = 0


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cone_project(x, mu):
    """Rows `(n, t1, t2)` of `x` projected on `{mu n >= |t|}` (Euclidean), row by row."""
    n, t = x[:, 0], x[:, 1:]
    tn = np.linalg.norm(t, axis=1)
    out = np.zeros_like(x)
    inside = tn <= mu * n
    out[inside] = x[inside]
    side = ~inside & (mu * tn > -n)
    a = (n[side] + mu[side] * tn[side]) / (1.0 + mu[side] ** 2)
    out[side, 0] = a
    out[side, 1:] = (mu[side] * a / tn[side])[:, None] * t[side]
    return out


def condition(A, singular):
    """`lambda_max / lambda_min` of `A`'s symmetric part; with `singular`, over the eigenvalues
    above `1e-10 lambda_max` (a rigid `W` with more rows than the bodies have velocities is
    singular, and Gauss-Seidel works on its range)."""
    e = np.linalg.eigvalsh(0.5 * (A + A.T))
    low = e[e > 1e-10 * e[-1]][0] if singular else e[0]
    return float(e[-1] / low)


def natural_map_norm(x, W, q, mu, de_saxce):
    """`|F(x)|`, `F_a = x_a - P_K(x_a - y_a)`, `y = W x + q` (plus `mu |y_t| e_n` if
    `de_saxce`)."""
    y = (W @ x + q).reshape(-1, 3)
    if de_saxce:
        y[:, 0] += mu * np.linalg.norm(y[:, 1:], axis=1)
    xb = x.reshape(-1, 3)
    return float(np.linalg.norm(xb - cone_project(xb - y, mu)))


class Sides:
    """One state's two problems and their capped solves, MuJoCo's by `solver` (`"pgs"` or
    `"newton"`)."""

    def __init__(self, state, solver="pgs"):
        import contactlab

        self.name, self.set, self.contacts = state.name, state.set, state.contacts
        local = state.problem.to_local()
        self.ours = local
        self.W, self.q, self.mu = np.asarray(local.W), np.asarray(local.q), np.asarray(local.mu)
        self.our0 = natural_map_norm(np.zeros_like(self.q), self.W, self.q, self.mu, True)
        m = state.model
        self.model = m
        w = mujoco.MjData(m)
        mujoco.mj_copyData(w, m, state.pre)
        self.old_solver = m.opt.solver
        self.solver = MUJOCO_SOLVERS[solver]
        m.opt.solver = self.solver
        # The pre-solve stages again: mj_fwdPosition forms efc_AR only for PGS.
        self.pre = T.snapshot_before_solve(m, w)
        self.work = w
        nefc = w.nefc
        if nefc != 3 * w.ncon or any(int(c) != 3 for c in w.contact.dim[:w.ncon]):
            raise ValueError(f"{self.name}: expected condim-3 contacts only")
        J = np.zeros((nefc, m.nv))
        if mujoco.mj_isSparse(m):
            mujoco.mju_sparse2dense(J, w.efc_J, w.efc_J_rownnz, w.efc_J_rowadr, w.efc_J_colind)
        else:
            J[:] = w.efc_J.reshape(nefc, m.nv)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, w, M)
        self.AR = J @ np.linalg.solve(M, J.T) + np.diag(w.efc_R[:nefc])
        mujoco.mj_fwdConstraint(m, w)  # efc_b is formed inside the solve
        self.b = w.efc_b[:nefc].copy()
        self.mu_mj = np.array([w.contact[i].friction[0] for i in range(w.ncon)])
        self.mj0 = natural_map_norm(np.zeros(nefc), self.AR, self.b, self.mu_mj, False)
        # MuJoCo's problem as a local one for our solvers, in the Newton study that solves it
        # (symmetrised: `J M^-1 J'` formed in floating point is symmetric only to round-off;
        # the problem's build checks `W`'s definiteness, work the PGS study need not do).
        if solver == "newton":
            self.soft = contactlab.LocalProblem(0.5 * (self.AR + self.AR.T), self.b, self.mu_mj)
            self.soft0 = natural_map_norm(np.zeros(nefc), self.AR, self.b, self.mu_mj, True)
        self.nefc = nefc
        self.contactlab = contactlab
        self.rows, self.dofs = int(nefc), int(m.nv)
        self.ours_condition = condition(self.W, singular=True)
        self.mujoco_condition = condition(self.AR, singular=False)
        self.newton_residual = self.mujoco_newton()

    def restore(self):
        self.model.opt.solver = self.old_solver

    def mujoco(self, k):
        """MuJoCo's solver capped at `k` iterations from zero: (seconds, relative residual)."""
        m, w = self.model, self.work
        mujoco.mj_copyData(w, m, self.pre)
        old = m.opt.iterations
        m.opt.iterations = k
        with T.settings(m, cold=True, tolerance=0.0):
            t0 = time.perf_counter_ns()
            mujoco.mj_fwdConstraint(m, w)
            t1 = time.perf_counter_ns()
        m.opt.iterations = old
        f = w.efc_force[:self.nefc].copy()
        return (t1 - t0) * 1e-9, natural_map_norm(f, self.AR, self.b, self.mu_mj, False) / self.mj0

    def mujoco_newton(self):
        """The relative residual of MuJoCo's Newton solver on the same problem (cold,
        `opt.tolerance` `NEWTON_TOL`): the optimum PGS is after."""
        m, w = self.model, self.work
        mujoco.mj_copyData(w, m, self.pre)
        m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
        try:
            with T.settings(m, cold=True, tolerance=NEWTON_TOL):
                mujoco.mj_fwdConstraint(m, w)
        finally:
            m.opt.solver = self.solver
        f = w.efc_force[:self.nefc].copy()
        return natural_map_norm(f, self.AR, self.b, self.mu_mj, False) / self.mj0

    def our(self, k, nncg=False):
        """Our PGS capped at `k` sweeps from zero (with NNCG if `nncg`): (seconds, relative
        residual)."""
        s = self.contactlab.solve(self.ours, "coulomb", "pgs", tol=NO_STOP, max_iter=k,
                                  nncg=nncg)
        r = np.asarray(s.r)
        return float(s.seconds), natural_map_norm(r, self.W, self.q, self.mu, True) / self.our0

    def ours_nncg(self, k):
        """`Sides.our` with NNCG."""
        return self.our(k, nncg=True)

    def todorov(self, k):
        """Todorov's driver on the implicit NCP capped at `k` iterations from zero (the
        paper's defaults): (seconds, relative residual)."""
        s = self.contactlab.solve(self.ours, "implicit-ncp", "todorov", tol=NO_STOP,
                                  max_iter=k)
        r = np.asarray(s.r)
        return float(s.seconds), natural_map_norm(r, self.W, self.q, self.mu, True) / self.our0

    def todorov_soft(self, k):
        """`Sides.todorov` on MuJoCo's problem `(A + R, b, mu)` under Coulomb's law (see the
        module docs): (seconds, relative residual)."""
        s = self.contactlab.solve(self.soft, "implicit-ncp", "todorov", tol=NO_STOP,
                                  max_iter=k)
        r = np.asarray(s.r)
        return (float(s.seconds),
                natural_map_norm(r, self.AR, self.b, self.mu_mj, True) / self.soft0)


#: MuJoCo's solver of each study.
MUJOCO_SOLVERS = {"pgs": mujoco.mjtSolver.mjSOL_PGS, "newton": mujoco.mjtSolver.mjSOL_NEWTON}

#: Each study's sides: record prefix, the iterations' column, and the capped solve of a
#: `Sides`; MuJoCo's first.
STUDIES = {
    "pgs": [("mujoco", "mujoco_iterations", Sides.mujoco),
            ("ours", "ours_sweeps", Sides.our),
            ("ours_nncg", "ours_nncg_sweeps", Sides.ours_nncg)],
    "newton": [("mujoco", "mujoco_iterations", Sides.mujoco),
               ("ours", "ours_iterations", Sides.todorov),
               ("ours_soft", "ours_soft_iterations", Sides.todorov_soft)],
}
#: Each study's cap on the iterations.
CAPS = {"pgs": MAX_SWEEPS, "newton": MAX_NEWTON}


def fewest(run, level, cap, seen=None):
    """The fewest iterations `k <= cap` whose solve meets `level` (see the module docs), with
    its residual; `(None, best residual seen)` if none does. `seen` (iterations to residual)
    keeps the residuals of earlier calls on the same side: the solves are deterministic, and the
    doubling repeats them level after level."""
    seen = {} if seen is None else seen

    def residual(k):
        if k not in seen:
            seen[k] = run(k)[1]
        return seen[k]

    k, lo, best = 1, 0, np.inf
    while True:
        res = residual(k)
        best = min(best, res)
        if res <= level:
            break
        if k >= cap:
            return None, best
        lo, k = k, min(2 * k, cap)
    hi, at = k, res
    while hi - lo > max(1, hi // 50):
        mid = (lo + hi) // 2
        res = residual(mid)
        if res <= level:
            hi, at = mid, res
        else:
            lo = mid
    return hi, at


def time_interleaved(jobs, rounds, study):
    """Per job `(sides, {side: k})`, each side's capped solve's median over the rounds, the
    sides interleaved (see the module docs)."""
    rng = np.random.default_rng(SEED)
    solve = {name: run for name, _, run in study}
    times = [{name: [] for name in ks} for _, ks in jobs]
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for i in rng.permutation(len(jobs)):
                s, ks = jobs[i]
                for name, k in ks.items():
                    solve[name](s, k)
                    times[i][name].append(solve[name](s, k)[0])
    finally:
        if gc_was:
            gc.enable()
    return [{name: statistics.median(v) for name, v in t.items()} for t in times]


def measure(sides, levels, rounds, cap, study):
    """Every (problem, level) record of `study` (one of `STUDIES`)."""
    records, jobs = [], []
    for s in sides:
        seen = {name: {} for name, _, _ in study}
        for level in levels:
            rec = {"set": s.set, "problem": s.name, "contacts": s.contacts, "level": level,
                   "rows": s.rows, "dofs": s.dofs, "ours_condition": s.ours_condition,
                   "mujoco_condition": s.mujoco_condition,
                   "mujoco_newton_residual": s.newton_residual}
            ks = {}
            for name, column, run in study:
                k, res = fewest(lambda k: run(s, k), level, cap, seen[name])
                rec.update({column: k, f"{name}_residual": res, f"{name}_seconds": None})
                if k is not None:
                    ks[name] = k
            for name, _, _ in study[1:]:
                rec[ratio_column(name)] = None
            records.append(rec)
            if "mujoco" in ks and len(ks) > 1:
                jobs.append((s, ks, rec))
            log(f"{s.name:44s} L {level:g}: " + ", ".join(
                f"{name} {rec[column]} ({rec[name + '_residual']:.1e})"
                for name, column, _ in study))
    medians = time_interleaved([j[:2] for j in jobs], rounds, study)
    for (_, ks, rec), t in zip(jobs, medians):
        for name, seconds in t.items():
            rec[f"{name}_seconds"] = seconds
            if name != "mujoco":
                rec[ratio_column(name)] = seconds / t["mujoco"]
    return records


def ratio_column(side):
    """The column of `side`'s time over MuJoCo's: `ratio` for ours, `ratio_<side>` else."""
    return "ratio" if side == "ours" else f"ratio_{side.removeprefix('ours_')}"


def main():
    """Parse the command line, build the states, measure, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", choices=sorted(STUDIES), default="pgs")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--fresh", action="store_true", help="also fresh_clutter.py's fresh states")
    ap.add_argument("--small", action="store_true",
                    help="the CI version: one small stored step, two levels")
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    ap.add_argument("--allow-stale-extension", action="store_true",
                    help="time an extension built from other code than the tree's")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    built, profile, stale = timing_extension("levels.py", a.allow_stale_extension, a.small)
    states = F.repository_states(SMALL_PROBLEMS if a.small else F.REPOSITORY)
    if a.fresh and not a.small:
        states = F.fresh_states(F.SCENES, MIN_CONTACTS) + states
    sides = [Sides(s, a.study) for s in states]
    levels = SMALL_LEVELS if a.small else LEVELS
    cap = CAPS[a.study]
    try:
        records = measure(sides, levels, a.rounds, cap, STUDIES[a.study])
    finally:
        for s in sides:
            s.restore()
    out = {"mujoco_version": mujoco.__version__, "contactlab_build": profile,
           "contactlab_commit": built, "contactlab_stale": stale,
           "study": a.study, "rounds": a.rounds, "levels": levels, "max_sweeps": cap,
           "records": [T.finite(r) for r in records]}
    write_result(out, a.out)


if __name__ == "__main__":
    main()
