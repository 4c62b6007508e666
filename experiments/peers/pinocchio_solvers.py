"""Pinocchio's contact solvers (ADMM and PGS, Pinocchio 4.1: `pip install pin`) on the problem
sets of a `kind = "problems"` config, judged by this project's natural-map residual.

Usage:
  python3 pinocchio_solvers.py --config experiments/configs/peers/pinocchio.toml [--root DIR]
                               [--repeats 5] [--tol 1e-6] [--out FILE] [NAME ...]
  python3 pinocchio_solvers.py --check     # one sliding contact against its closed form

The problems are those of the config's `[[sets]]` (`files` and `dirs`), so our own solvers (the
config itself, run by `contactlab run`) and Pinocchio's see the same ones; NAME restricts them to
file stems. Each is read as this project reads it (FCLib HDF5 `/fclib_local` or `/fclib_global`
through h5py, or the project's JSON), a global problem turned into contact space as
`GlobalProblem::to_local` does (`W = H' M^-1 H` symmetrized, `q = H' M^-1 f + w`), and handed
to Pinocchio as a `DelassusOperatorDense(W)` with one `PointContactConstraintModel` per contact
(friction `mu`); Pinocchio's cones put the normal last, so each contact's rows are turned from
`[n, t1, t2]` to `[t1, t2, n]` and its answers back.

Pinocchio's stopping tests are not our error measure, so every solver runs over a ladder of its
own tolerances (all four of `absolute_*_tol` and `relative_*_tol` set to the rung), at most
`--max-iter` iterations, from the loosest rung up to the first whose answer meets `--tol` (or
that runs out of iterations: a tighter rung only costs more), and each answer is judged by our natural-map residual
`|r - P_K(r - (u + mu |u_t| e_n))| / (1 + |q|)` (core/src/metrics.rs). Per (problem, solver,
rung): the median wall time over `--repeats` cold solves (one when a solve takes over 0.2 s) (a new solver, result and Delassus
operator each time; the Delassus operator is built outside the timed call, its factorization is
inside it), Pinocchio's own elapsed time, iterations, its `converged` flag and our residual. Per
(problem, solver), a summary row (`row = "to_tol"`; the rungs have `row = "rung"`): `seconds_to_tol`, the time of the cheapest rung whose answer
meets `--tol` (null when none does).

Solvers: `pinocchio-admm` (Pinocchio's defaults: OSQP's rho rule), `pinocchio-admm-spectral`
(`admm_update_rule = SPECTRAL`, the paper's rule with its defaults) and `pinocchio-pgs`.

Without pinocchio (or h5py for FCLib files) the script exits with status 1 and says why on its
last line of standard error; the `engines` run then records that reason in its `skipped` column.
"""
import argparse
import gc
import json
import math
import os
import statistics
import sys
import time

import numpy as np

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LADDER = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12]
SOLVERS = ["pinocchio-admm", "pinocchio-admm-spectral", "pinocchio-pgs"]
SLOW_SECONDS = 0.2  # a solve slower than this is not repeated


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def fail(why):
    log(why)
    sys.exit(1)


# ----------------------------------------------------------------------------- problems
def sparse_json(m):
    if isinstance(m, dict):
        a = np.zeros((m["rows"], m["cols"]))
        for i, j, v in m["triplets"]:
            a[int(i), int(j)] += v
        return a
    return np.asarray(m, dtype=float)


def sparse_hdf5(g):
    """A CSparse group (`m`, `n`, `nz`, `p`, `i`, `x`): compressed rows (nz = -2), compressed
    columns (nz = -1) or nz triplets with `i` the row and `p` the column (core/src/io/fclib.rs)."""
    m, n = int(np.ravel(g["m"][()])[0]), int(np.ravel(g["n"][()])[0])
    nz = int(np.ravel(g["nz"][()])[0])
    p, i, x = np.ravel(g["p"][()]), np.ravel(g["i"][()]), np.ravel(g["x"][()])
    a = np.zeros((m, n))
    if nz == -1:
        for c in range(n):
            for k in range(p[c], p[c + 1]):
                a[i[k], c] += x[k]
    elif nz == -2:
        for r in range(m):
            for k in range(p[r], p[r + 1]):
                a[r, i[k]] += x[k]
    else:
        for k in range(nz):
            a[i[k], p[k]] += x[k]
    return a


def to_local(M, H, f, w, mu):
    x = np.linalg.solve(M, np.column_stack([H, f]))
    y = H.T @ x
    m = H.shape[1]
    W = 0.5 * (y[:, :m] + y[:, :m].T)
    return W, y[:, m] + w, mu


def read_problem(path):
    """`(W, q, mu)` of a problem file, normal first per contact."""
    if path.endswith(".json"):
        d = json.load(open(path))
        if d.get("kind") == "global" or "M" in d:
            return to_local(sparse_json(d["M"]), sparse_json(d["H"]), np.asarray(d["f"], float),
                            np.asarray(d["w"], float), np.asarray(d["mu"], float))
        return sparse_json(d["W"]), np.asarray(d["q"], float), np.asarray(d["mu"], float)
    try:
        import h5py
    except ImportError:
        fail("h5py is not importable (FCLib files need it): `pip install h5py`")
    with h5py.File(path, "r") as h:
        if "fclib_local" in h:
            g = h["fclib_local"]
            return (sparse_hdf5(g["W"]), np.ravel(g["vectors"]["q"][()]).astype(float),
                    np.ravel(g["vectors"]["mu"][()]).astype(float))
        if "fclib_global" in h:
            g = h["fclib_global"]
            v = g["vectors"]
            return to_local(sparse_hdf5(g["M"]), sparse_hdf5(g["H"]), np.ravel(v["f"][()]),
                            np.ravel(v["w"][()]), np.ravel(v["mu"][()]))
    raise ValueError(f"{path}: no /fclib_local or /fclib_global group")


def config_problems(config, root):
    """`(set name, path)` for every file of the config's sets, in the config's order."""
    if tomllib is None:
        fail("Python 3.11 or newer is needed to read the config (tomllib)")
    cfg = tomllib.load(open(config, "rb"))
    out = []
    for s in cfg.get("sets", []):
        paths = [os.path.join(root, f) for f in s.get("files", [])]
        for d in s.get("dirs", []):
            full = os.path.join(root, d)
            paths += sorted(os.path.join(full, f) for f in os.listdir(full)
                            if f.endswith((".hdf5", ".h5", ".json")))
        out += [(s["name"], p) for p in paths]
    return out


# ----------------------------------------------------------------------------- the ruler
def project(mu, z):
    """core/src/cone.rs `project`: the Euclidean projection onto K_mu, normal first."""
    zn, t = z[0], math.sqrt(z[1] * z[1] + z[2] * z[2])
    if zn >= 0.0 and t <= mu * zn:
        return z
    if mu * t <= -zn or t == 0.0:
        return np.zeros(3)
    pn = (zn + mu * t) / (1.0 + mu * mu)
    s = mu * pn / t
    return np.array([pn, s * z[1], s * z[2]])


def natural_map(W, q, mu, r):
    """core/src/metrics.rs: |r - P_K(r - (u + mu |u_t| e_n))| / (1 + |q|), u = W r + q."""
    u = W @ r + q
    total = 0.0
    for a, m in enumerate(mu):
        ra, ua = r[3 * a:3 * a + 3], u[3 * a:3 * a + 3]
        uh = ua.copy()
        uh[0] += m * math.sqrt(ua[1] ** 2 + ua[2] ** 2)
        d = ra - project(m, ra - uh)
        total += float(d @ d)
    return math.sqrt(total) / (1.0 + float(np.linalg.norm(q)))


# ----------------------------------------------------------------------------- Pinocchio
def normal_last(nc):
    """The permutation taking normal-first rows to Pinocchio's `[t1, t2, n]`."""
    return np.array([3 * a + k for a in range(nc) for k in (1, 2, 0)], dtype=int)


class Pinocchio:
    def __init__(self):
        import pinocchio as pin
        self.pin = pin
        self.model = pin.Model()

    def constraints(self, mu):
        pin = self.pin
        models = pin.StdVec_ConstraintModel()
        for m in mu:
            c = pin.PointContactConstraintModel(self.model, 0)
            c.setFriction(float(m))
            models.append(pin.ConstraintModel(c))
        datas = pin.StdVec_ConstraintData()
        for c in models:
            datas.append(c.createData())
        return models, datas

    def solve(self, solver, Wp, qp, mu, tol, max_iter):
        """One cold solve; `(impulses normal-last, iterations, converged, wall s, own s)`."""
        pin = self.pin
        n = len(qp)
        models, datas = self.constraints(mu)
        if solver == "pinocchio-pgs":
            s, st, res = pin.PGSConstraintSolver(n), pin.PGSSolverSettings(), pin.PGSSolverResult()
        else:
            s, st, res = pin.ADMMConstraintSolver(n), pin.ADMMSolverSettings(), pin.ADMMSolverResult()
            if solver == "pinocchio-admm-spectral":
                st.admm_update_rule = pin.ADMMUpdateRule.SPECTRAL
        st.absolute_feasibility_tol = tol
        st.absolute_complementarity_tol = tol
        st.relative_feasibility_tol = tol
        st.relative_complementarity_tol = tol
        st.max_iterations = max_iter
        st.measure_timings = True
        delassus = pin.DelassusOperatorDense(Wp)
        t0 = time.perf_counter_ns()
        converged = s.solve(delassus, qp, models, datas, st, res)
        wall = (time.perf_counter_ns() - t0) * 1e-9
        return (np.asarray(res.retrieveConstraintImpulses()), int(res.iterations), bool(converged),
                wall, float(s.getElapsedTime()) * 1e-6)


def run_problem(pino, set_name, path, ladder, repeats, tol, max_iter):
    W, q, mu = read_problem(path)
    nc = len(mu)
    perm = normal_last(nc)
    Wp = np.ascontiguousarray(W[np.ix_(perm, perm)])
    qp = np.ascontiguousarray(q[perm])
    name = os.path.splitext(os.path.basename(path))[0]
    rows = []
    for solver in SOLVERS:
        for rung in ladder:
            walls, owns = [], []
            for _ in range(repeats):
                rp, iters, conv, wall, own = pino.solve(solver, Wp, qp, mu, rung, max_iter)
                walls.append(wall)
                owns.append(own)
                if wall > SLOW_SECONDS:
                    break
            r = np.empty(3 * nc)
            r[perm] = rp
            res = natural_map(W, q, mu, r) if np.all(np.isfinite(r)) else float("nan")
            rows.append({"set": set_name, "problem": name, "file": os.path.relpath(path, ROOT),
                         "contacts": nc, "solver": solver, "rung": rung, "iterations": iters,
                         "converged_own": conv, "residual": res,
                         "seconds": statistics.median(walls), "seconds_min": min(walls),
                         "own_seconds": statistics.median(owns), "repeats": len(walls)})
            # A tighter rung only costs more: stop at the first that reaches `tol`, and after
            # one that ran out of iterations (the tighter ones would too).
            if res <= tol or not conv:
                break
    summary = []
    for solver in SOLVERS:
        ok = [r for r in rows if r["solver"] == solver and r["residual"] <= tol]
        best = min(ok, key=lambda r: r["seconds"]) if ok else None
        summary.append({"set": set_name, "problem": name, "contacts": nc, "solver": solver,
                        "tol": tol, "seconds_to_tol": best["seconds"] if best else None,
                        "rung_to_tol": best["rung"] if best else None,
                        "iterations_to_tol": best["iterations"] if best else None,
                        "best_residual": min((r["residual"] for r in rows
                                              if r["solver"] == solver), default=None)})
    return rows, summary


def check(pino):
    """A sliding contact: W = diag(1, 2, 2), q = (-1, 3, 4), mu = 0.5; r = (1, -0.3, -0.4)."""
    W = np.diag([1.0, 2.0, 2.0])
    q = np.array([-1.0, 3.0, 4.0])
    mu = np.array([0.5])
    perm = normal_last(1)
    for solver in SOLVERS:
        rp, _, _, _, _ = pino.solve(solver, W[np.ix_(perm, perm)], q[perm], mu, 1e-10, 10000)
        r = np.empty(3)
        r[perm] = rp
        res = natural_map(W, q, mu, r)
        if not (np.abs(r - [1.0, -0.3, -0.4]).max() < 1e-6 and res < 1e-8):
            fail(f"{solver}: r = {r}, residual {res}")
        log(f"{solver}: r = {r}, residual {res:.1e}")


def finite(record):
    """JSON has no NaN: non-finite numbers become null."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in record.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--config", default=os.path.join(ROOT, "experiments/configs/peers/pinocchio.toml"))
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=10000)
    ap.add_argument("--out")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    try:
        pino = Pinocchio()
    except ImportError as e:
        fail(f"pinocchio is not importable ({e}): `pip install pin`")
    if a.check:
        check(pino)
        return
    problems = config_problems(a.config, a.root)
    if a.names:
        problems = [(s, p) for s, p in problems
                    if os.path.splitext(os.path.basename(p))[0] in a.names]
    gc.disable()
    rungs, summary = [], []
    for set_name, path in problems:
        log(f"{set_name}: {os.path.basename(path)}")
        r, s = run_problem(pino, set_name, path, LADDER, a.repeats, a.tol, a.max_iter)
        rungs += r
        summary += s
    gc.enable()
    import pinocchio
    records = [dict(r, row="to_tol") for r in summary] + [dict(r, row="rung") for r in rungs]
    out = {"pinocchio_version": pinocchio.__version__, "tol": a.tol, "max_iter": a.max_iter,
           "ladder": LADDER, "records": [finite(r) for r in records]}
    text = json.dumps(out, indent=1, allow_nan=False)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
