"""The gradients study: the derivative of each pair's answer to its problem's data, against
central finite differences of the whole solve, and what it costs, on the repository's problem
sets (issue 43).

Per problem of each set (FCLib's files in `data/problems/`, MuJoCo's exported steps in
`data/mujoco/global/`, the robot states in `data/mujoco_robots/global/`):

* the Newton-type pair (`natural-map` with `gauss-newton`, then `lm` started by ADMM where it
  does not reach the tolerance) solves to `TOL`; its answer's forward-mode derivative along one seeded random
  direction of every field of the problem at once (contact space: `q`, `W`, `mu`; generalized:
  `f`, `w`, `M`, `H`, `mu`; each field's direction scaled to the field's own size, matrices
  perturbed symmetrically where symmetric) is compared with central differences of the solve
  (the relative error in `r`, and `v` for a generalized problem; where the impulses are not
  unique, in `v`, or `u` in contact space: `checked`). The step `h` is chosen
  per problem from `H_LADDER` (in those scaled units): the one whose differences agree best
  with those at `h / 10`; where even those disagree by more than `FD_CONSISTENT` the problem
  has a regime change within the step (a kink): it is counted apart, not as a check;
* the answer's regime per block (`Solution.regimes(margin=10 h s)`, `s` the scale of the
  projection's argument `z = r - rho y` and of its change along the direction: `z_scale`), and
  whether the impulses are unique (`Solution.non_unique`): a non-unique answer's derivative is
  the minimum-norm one, so it is checked on `u` and `v` only;
* the adjoint identity `<cotangent, jvp> = <vjp, direction>` on the same direction;
* timings: the solve, the factorization (the first derivative asked for), one `vjp` after it,
  the dense Jacobian of `r` with respect to `q` (or `f`), and the cost of central differences of
  the same gradient (`2 n` solves, `n` the field's size, estimated from the solve's median time
  over `REPEATS`);
* SAP (its own optimality, `R` frozen) on the generalized problems of Coulomb contacts, along
  `SAP_FIELDS`, the friction pyramid's min-map Newton (differentiated through the min-map) and
  Hwangbo's bisection-SOR (maximum dissipation, through its fixed point's conditions) on every
  problem, and Mylapilli and Jain's FB MLCP (its pyramid of four directions, through its own
  equations) on the problems of at most `MLCP_MAX_ROWS` rows, along every field, each against
  central differences of its own solve;
* the first-order pairs on the same model (PGS with NNCG, ADMM) solve to `FIRST_ORDER_TOL`; the
  derivative at their answer is compared with the Newton-type pair's (the relative gap beside
  their residual: the issue's bar is within 100 times their residual);
* the sliding box's trajectory differentiated by the chain rule through its steps'
  derivatives, against central differences of the whole rollout, and its friction coefficient
  and initial velocity identified from a noisy trajectory with it (`rollout.py`);
* on each robot state, MuJoCo's `mjd_transitionFD` (the step's derivative with respect to state
  and control by finite differences: context, it does not differentiate `mu` or `W`) is timed
  on the same state beside ours.

Needs the contactlab package (a release build of the tree's commit: the run records it) and
numpy; mujoco, dm_control and gymnasium_robotics for the robot timings (without them those
columns are empty and the run says why).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from extension import timing_extension, write_result  # noqa: E402

#: The Newton-type pair's tolerance on the shared ruler (the issue's "solved to 1e-12").
TOL = 1e-12
#: The first-order pairs' tolerance.
FIRST_ORDER_TOL = 1e-8
#: The central-difference steps tried, in units of each field's own size: the step of a
#: problem is the one whose differences agree best with those at a tenth of it (truncation
#: error falls with the step, rounding error grows as it shrinks; the best-agreeing pair sits
#: between).
H_LADDER = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8]
#: Where even the best-agreeing pair of steps differs by more than this, relative, a regime
#: boundary lies inside the step (a kink), and the problem is counted apart.
FD_CONSISTENT = 1e-3
#: Timed repeats of the solve and of a `vjp` (medians).
REPEATS = 5
#: Problems larger than this many rows are left out (the dense factorization is `O(m^3)` and the
#: finite differences `2` solves each; the study's question is accuracy, the speed tables say
#: where the cost goes).
MAX_ROWS = 400
#: The Newton-type pairs, in the order they are tried.
NEWTON = [("natural-map", "gauss-newton", {}), ("natural-map", "lm", {"admm_start_tol": 1e-6})]
#: SAP (Castro et al.) with its Newton driver: differentiated through its own optimality
#: condition, on the generalized problems of Coulomb contacts (its sparse path).
SAP = ("sap", "newton-merit", {})
#: The friction pyramid (Erleben and Ortiz) with the min-map's Newton: differentiated through the
#: min-map, on every problem.
PYRAMID = ("min-map", "newton", {})
#: Hwangbo et al.'s bisection-SOR (maximum dissipation), differentiated through the conditions
#: of its fixed point, on every problem its contacts allow (three rows, one coefficient). No
#: Newton-type pair solves this model, so its own solve is differenced; its single-contact
#: tolerance is set below the study's and its sweep budget kept to what a study can wait for.
DISSIPATION = ("coulomb", "bisection-sor", {"local_tol": 1e-15, "max_iterations": 20000})
#: Mylapilli and Jain's Fischer-Burmeister MLCP (a pyramid of `n_f = 4` directions at fixed
#: angles) with its projected LM: differentiated through its own equations at its unknowns, on
#: problems of at most `MLCP_MAX_ROWS` rows (its Jacobian is dense over `n_f + 2` unknowns a
#: contact, and its LM's iterations many).
MLCP = ("mlcp-fb", "plm", {})
MLCP_MAX_ROWS = 60
#: The statuses that count as an answer, by pair (default: `converged`). The min-map ends
#: `inaccurate` where contacts slide (it met the pyramid's own test; the Coulomb ruler measures the
#: pyramid's gap to the cone), and the bisection-SOR where a sliding contact's normal and
#: tangential rows are coupled (the ruler measures maximum dissipation's gap to Coulomb's law).
SOLVED = {"min-map+newton": ("converged", "inaccurate"),
          "mlcp-fb+plm": ("converged", "inaccurate"),
          "coulomb+bisection-sor": ("converged", "inaccurate")}
#: The pairs whose answer must also meet the driver's own stop at the tolerance: the
#: bisection-SOR's model is not the Coulomb ruler's, so a ruler below the tolerance does not say
#: its sweeps reached their own (the sum of the contacts' violations of maximum dissipation).
OWN_MEASURE = {"coulomb+bisection-sor"}
#: The fields SAP's check moves: those that leave its regularisation `R` and `v^` (eqs.
#: 29-30: from `M`, `H`, `phi0`, `dt`) as they were, so that the differences of the whole
#: solve and the derivative (which holds `R` frozen) answer the same question; the Rust tests
#: check `M` and `H` with `R` frozen on both sides.
SAP_FIELDS = ("f", "w", "mu")
#: The first-order pairs on the Coulomb cone.
FIRST_ORDER = [("coulomb", "pgs", {"nncg": True}), ("coulomb", "admm", {})]
#: The budgets.
NEWTON_ITER, FIRST_ORDER_ITER = 500, 20000

SETS = {
    "fclib": ("data/problems", "*.hdf5"),
    "mujoco": ("data/mujoco/global", "*.json"),
    "robots": ("data/mujoco_robots/global", "*.json"),
}


def fields_of(p):
    """The problem's data by field name, as `jvp` names them."""
    if hasattr(p, "W"):
        return {"q": p.q, "W": p.W, "mu": p.mu}
    return {"f": p.f, "w": p.w, "M": p.M, "H": p.H, "mu": p.mu}


def dense(a):
    """A dense copy of a NumPy or scipy.sparse array."""
    return a.toarray() if hasattr(a, "toarray") else np.asarray(a, dtype=float)


def direction(p, rng, unique):
    """A random change of the fields at their own scale: a vector's entries normal with the
    vector's rms; `H`'s stored entries each moved in proportion (its sparsity kept); `W` and
    `M` moved by the congruence `E A + A E'` (`E` normal, `1 / sqrt(n)` a row), the first-order
    change of `(I + t E) A (I + t E)'`, so that a positive (semi)definite matrix stays so;
    `mu` only where a block has a friction coefficient. Where the impulses are not unique
    (`W` singular) only the changes that keep the problem's rank and solvability move: `q`
    within `W`'s range (`W x`), or `f`, and `mu`; an arbitrary `q`, `w`, `W` or `H` makes
    the redundant rows independent or the problem unsolvable, a jump, not a derivative."""
    out = {}
    for k, v in fields_of(p).items():
        v = dense(v)
        if not unique and k in ("W", "M", "H", "w"):
            out[k] = np.zeros_like(v)
        elif not unique and k == "q":
            w = dense(p.W)
            x = w @ rng.normal(size=v.shape)
            out[k] = x * float(np.sqrt(np.mean(v ** 2)) / max(np.sqrt(np.mean(x ** 2)), 1e-300))
        elif k in ("W", "M"):
            # Symmetrized: a file's `W` may be asymmetric in its last digits, and the
            # derivative is with respect to a symmetric matrix.
            e = rng.normal(size=v.shape) / np.sqrt(v.shape[0])
            c = e @ v + v @ e.T
            out[k] = 0.5 * (c + c.T)
        elif k == "H":
            out[k] = v * rng.normal(size=v.shape)
        else:
            scale = float(np.sqrt(np.mean(v[np.isfinite(v)] ** 2))) if v.size else 0.0
            d = rng.normal(size=v.shape) * (scale if scale > 0 else 1.0)
            out[k] = np.where(np.isfinite(v) & (v > 0), d, 0.0) if k == "mu" else d
    return out


def shifted_constraints(p, dmu, t):
    """`p`'s constraint blocks with each contact's `mu` moved by `t dmu` the way the
    derivative reads it: the two tangential coefficients together, in proportion."""
    out = []
    for block, d in zip(p.constraints, dmu):
        block = dict(block)
        mu = list(block.get("mu", []))
        if block["kind"] == "contact" and mu and mu[0] != 0.0:
            ratio = mu[1] / mu[0]
            mu[0] += t * d
            mu[1] += t * d * ratio
            block["mu"] = mu
        out.append(block)
    return out


def moved(p, d, t):
    """`p` with every field moved by `t d` (its rows' targets, position errors and time step
    kept)."""
    import contactlab

    f = {k: dense(v) for k, v in fields_of(p).items()}
    rows = {"constraints": shifted_constraints(p, d["mu"], t)}
    if "W" in f:
        return contactlab.LocalProblem(f["W"] + t * d["W"], f["q"] + t * d["q"], check_psd=False,
                                       **rows)
    rows.update(target=dense(p.target), phi0=dense(p.phi0))
    if p.dt is not None:
        rows["dt"] = p.dt
    return contactlab.GeneralizedProblem(f["M"] + t * d["M"], f["H"] + t * d["H"],
                                         f["f"] + t * d["f"], f["w"] + t * d["w"], **rows)


def solve(p, pair, tol, max_iter, warm=None):
    """One solve of `pair`, or None where the pair refuses the problem."""
    import contactlab

    f, o, opts = pair
    extra = {} if warm is None else {"warm": warm}
    try:
        return contactlab.solve(p, f, o, tol=tol, max_iter=max_iter, **opts, **extra)
    except (ValueError, contactlab.SolverError):
        return None


def newton(p):
    """The first Newton-type pair that converges to `TOL`, with its solution (or the last
    pair's unconverged solution)."""
    last = None
    for pair in NEWTON:
        s = solve(p, pair, TOL, NEWTON_ITER)
        if s is not None and s.status == "converged":
            return pair, s
        last = (pair, s)
    return last


def outputs(s):
    """The answer's outputs: `r`, `u`, and `v` when generalized."""
    out = {"r": np.asarray(s.r), "u": np.asarray(s.u)}
    if s.v is not None:
        out["v"] = np.asarray(s.v)
    return out


def checked(s):
    """The outputs the derivative is judged on: the impulses `r` (and `v`) where they are
    unique; where they are not, the velocities `v` (generalized) or `u` (contact space), which
    are. (`u` is `W r + q`: where `r` is checked it adds nothing, and where a contact sticks its
    `u` and the derivative are zero, so a relative error of it measures rounding.)"""
    if s.non_unique:
        return ["v"] if s.v is not None else ["u"]
    return ["r", "v"] if s.v is not None else ["r"]


def central(p, d, s, h, pairs=None):
    """Central differences of the outputs along `d` with step `h`, each end re-solved warm from
    `s` by the first of `pairs` (the Newton-type ones by default) that converges (None where a
    moved problem is refused or none converges)."""
    ends = []
    for t in (h, -h):
        try:
            q = moved(p, d, t)
        except ValueError:
            return None
        m = None
        for pair in pairs or NEWTON:
            m = solve(q, pair, TOL, NEWTON_ITER, warm=s.warm)
            if solved(m, pair):
                break
        if not solved(m, pair):
            return None
        ends.append(outputs(m))
    return {k: (ends[0][k] - ends[1][k]) / (2 * h) for k in ends[0]}


def solved(s, pair):
    """Whether `s`, a solve of `pair`, is an answer (`SOLVED`; for `OWN_MEASURE`'s pairs, also
    by the driver's own measure)."""
    label = f"{pair[0]}+{pair[1]}"
    if s is None or s.status not in SOLVED.get(label, ("converged",)):
        return False
    return label not in OWN_MEASURE or s.solver_status == "converged"


def best_step(p, d, s, pairs=None):
    """`(h, differences at h, agreement)`: over `H_LADDER`, the step whose central differences
    agree best (relative, the worst checked output) with those at the next, smaller step;
    `(None, None, inf)` where fewer than two steps could be differenced."""
    diffs = [(h, central(p, d, s, h, pairs)) for h in H_LADDER]
    best = (None, None, float("inf"))
    for (h, a), (_, b) in zip(diffs, diffs[1:]):
        if a is None or b is None:
            continue
        agreement = max(rel(b[k], a[k]) for k in checked(s))
        if agreement < best[2]:
            best = (h, a, agreement)
    return best


def z_scale(p, s, t):
    """The scale of the projection's argument `z = r - rho y` and of its change along the
    direction (`t`, forward mode's): the largest of `|r|_inf`, `|dr|_inf` and `|u|_inf`,
    `|q|_inf`, `|du|_inf` over the mean of `W`'s diagonal (`rho` is about its inverse). A step
    `h` moves `z` by about `h` times this, so `10 h` times it is the margin within which a
    kink is met: where the answer itself is near zero (contacts touching with no force) the
    direction's change is what counts."""
    local = p if hasattr(p, "W") else p.to_local()
    w = dense(local.W)
    diag = float(np.mean(np.diag(w))) if w.size else 1.0
    top = lambda x: float(np.max(np.abs(x))) if len(x) else 0.0
    velocity = max(top(s.u), top(local.q), top(t["u"])) / diag if diag > 0 else 0.0
    return max(top(s.r), top(t["r"]), velocity, 1e-300)


def rel(a, b):
    """`|a - b|_inf / |b|_inf` (with `|b|_inf` floored at `1e-12`)."""
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-12)) if b.size else 0.0


def median_seconds(fn, repeats=REPEATS):
    """The median wall time of `fn()` over `repeats` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def timings(p, pair, first_field):
    """Wall times from Python, medians: the solve's call, the factorization's (the first
    derivative asked of a fresh solution, over as many fresh solutions), one `vjp`'s after it,
    and the dense Jacobian of `r` with respect to `first_field` (once)."""
    solve_s = median_seconds(lambda: solve(p, pair, TOL, NEWTON_ITER))

    def factored_fresh():
        """A fresh solution, and the seconds its first derivative's factorization took."""
        s = solve(p, pair, TOL, NEWTON_ITER)
        t0 = time.perf_counter()
        s.non_unique
        return s, time.perf_counter() - t0

    runs = [factored_fresh() for _ in range(REPEATS)]
    fresh, factor_s = runs[-1][0], float(np.median([t for _, t in runs]))
    cot = {"r": np.ones(len(fresh.r))}
    vjp_s = median_seconds(lambda: fresh.vjp(cot))
    jac_s = median_seconds(lambda: fresh.jacobian(first_field, of="r"), repeats=1)
    n = len(dense(fields_of(p)[first_field]).ravel())
    return {
        "solve_s": solve_s,
        "factor_s": factor_s,
        "vjp_s": vjp_s,
        "jacobian_s": jac_s,
        "fd_gradient_s": 2 * n * solve_s,
        "field_size": n,
    }


def adjoint_gap(s, d):
    """`|<c, jvp(d)> - <vjp(c), d>|` relative, for a seeded cotangent `c` of every output."""
    rng = np.random.default_rng(1)
    t = s.jvp(d)
    cot = {k: rng.normal(size=len(v)) for k, v in t.items()}
    g = s.vjp(cot)
    left = sum(float(cot[k] @ t[k]) for k in t)
    right = sum(float(np.sum(g[k] * d[k])) for k in d)
    return abs(left - right) / max(abs(left), 1.0)


def regime_counts(s, margin):
    """How many blocks of each regime the answer has (`blocks_<regime>`)."""
    counts = {f"blocks_{k}": 0 for k in ("separating", "sticking", "sliding", "degenerate")}
    for r in s.regimes(margin=margin):
        counts[f"blocks_{r}"] += 1
    return counts


def first_order(p, s_newton, d, t_newton):
    """Each first-order pair's answer and the gap of its derivative to the Newton-type pair's:
    `gap` on the outputs the derivative is judged on (`checked`), `gap_r` and `gap_u` apart."""
    rows = {}
    for pair in FIRST_ORDER:
        s = solve(p, pair, FIRST_ORDER_TOL, FIRST_ORDER_ITER)
        row = {"status": None if s is None else s.status}
        if s is not None and s.status == "converged":
            t = s.jvp(d)
            row.update(residual=s.residual,
                       gap=max(rel(t[k], t_newton[k]) for k in checked(s_newton)),
                       gap_r=rel(t["r"], t_newton["r"]),
                       gap_u=rel(t["u"], t_newton["u"]),
                       answer_gap_r=rel(np.asarray(s.r), np.asarray(s_newton.r)))
        rows[pair[1]] = row
    return rows


def study(p, name, set_name, rng):
    """The natural map's record of one problem (its first-order pairs' nested)."""
    rec = {"problem_set": set_name, "problem": name, "derivative": "natural-map"}
    pair, s = newton(p)
    rec["solved_by"] = f"{pair[0]}+{pair[1]}"
    rec["status"] = "refused" if s is None else s.status
    if s is None or s.status != "converged":
        return floats(rec)
    rec.update(rows=len(s.r), dofs=None if s.v is None else len(s.v), residual=s.residual,
               iterations=s.iterations)
    if not factored(s, rec):
        return floats(rec)
    d = direction(p, rng, not s.non_unique)
    t = check_and_time(p, s, d, rec, NEWTON, pair)
    rec["first_order_pairs"] = first_order(p, s, d, t)
    return floats(rec)


def sap_study(p, name, set_name, rng):
    """SAP's record on a generalized problem of Coulomb contacts (None on any other): its
    answer's derivative along `SAP_FIELDS`, checked against central differences of SAP's own
    solve."""
    if hasattr(p, "W") or any(b["kind"] != "contact" or len(b.get("mu", [])) != 2
                              for b in p.constraints):
        return None
    rec, s = solved_record(p, name, set_name, "sap", SAP)
    if s is None:
        return floats(rec)
    d = direction(p, rng, True)
    d = {k: (v if k in SAP_FIELDS else np.zeros_like(v)) for k, v in d.items()}
    check_and_time(p, s, d, rec, [SAP], SAP)
    return floats(rec)


def own_study(p, name, set_name, rng, derivative, pair):
    """The record of `derivative`, whose answers `pair` solves (the friction pyramid's min-map
    Newton, the FB MLCP's projected LM, the bisection-SOR for maximum dissipation): the answer
    differentiated through that model's own equations, checked against central differences of
    the same solve along every field."""
    rec, s = solved_record(p, name, set_name, derivative, pair)
    if s is None:
        return floats(rec)
    check_and_time(p, s, direction(p, rng, not s.non_unique), rec, [pair], pair)
    return floats(rec)


def mlcp_study(p, name, set_name, rng):
    """The FB MLCP's record (`own_study`), None above `MLCP_MAX_ROWS` rows."""
    rows = p.W.shape[0] if hasattr(p, "W") else p.H.shape[1]
    if rows > MLCP_MAX_ROWS:
        return None
    return own_study(p, name, set_name, rng, "fb-pyramid", MLCP)


def solved_record(p, name, set_name, derivative, pair):
    """`(record, solution)` of `pair`'s solve of `p` for the `derivative` named: the solution
    None where the pair refused, did not answer (`solved`) or its derivatives could not be
    factored, the record saying which."""
    rec = {"problem_set": set_name, "problem": name, "derivative": derivative,
           "solved_by": f"{pair[0]}+{pair[1]}"}
    s = solve(p, pair, TOL, NEWTON_ITER)
    rec["status"] = "refused" if s is None else ("converged" if solved(s, pair) else s.status)
    if rec["status"] != "converged":
        return rec, None
    rec.update(rows=len(s.r), dofs=None if s.v is None else len(s.v), residual=s.residual,
               iterations=s.iterations)
    return (rec, s) if factored(s, rec) else (rec, None)


def factored(s, rec):
    """Whether the solution's derivatives could be factored (`non_unique` into `rec`); where
    not, the reason as the record's `refused`."""
    import contactlab

    try:
        rec["non_unique"] = s.non_unique
    except (ValueError, contactlab.SolverError) as e:
        rec["refused"] = str(e)
        return False
    return True


def check_and_time(p, s, d, rec, pairs, pair):
    """Into `rec`: the fields `d` moves, the derivative along `d` against the best central
    differences of `pairs`' solves, the adjoint identity, the regimes and the timings of
    `pair`; the derivative returned."""
    rec["fields"] = ",".join(k for k, v in d.items() if np.any(v != 0))
    t = s.jvp(d)
    rec["adjoint_gap"] = adjoint_gap(s, d)
    h, fd, agreement = best_step(p, d, s, pairs)
    rec["fd"] = "failed" if fd is None else ("consistent" if agreement <= FD_CONSISTENT else "kink")
    if fd is not None:
        rec.update(h=h, fd_agreement=agreement)
        for k in fd:
            rec[f"error_{k}"] = rel(t[k], fd[k])
        rec["derivative_error"] = max(rec[f"error_{k}"] for k in checked(s))
    margin = 10 * (h if fd is not None else H_LADDER[2]) * z_scale(p, s, t)
    rec.update(regime_counts(s, margin))
    rec.update(timings(p, pair, "q" if "q" in d else "f"))
    return t


def floats(rec):
    """Every number of a record as a float (counts and flags too), nested records alike, so the
    report reads one type per column."""
    out = {}
    for k, v in rec.items():
        if isinstance(v, dict):
            out[k] = floats(v)
        elif isinstance(v, (bool, int, np.integer, np.bool_)) and not isinstance(v, str):
            out[k] = float(v)
        else:
            out[k] = v
    return out


def problems(set_name, small):
    """The set's problem files, at most `MAX_ROWS` rows (CI's `--small`: the first three)."""
    import contactlab

    folder, pattern = SETS[set_name]
    out = []
    for path in sorted((ROOT / folder).glob(pattern)):
        try:
            p = contactlab.read(str(path), check_psd=False)
        except (ValueError, OSError):
            continue
        if 3 * len(p.mu) > MAX_ROWS or (hasattr(p, "num_dofs") and p.num_dofs > 4 * MAX_ROWS):
            continue
        out.append((path.stem, p))
    return out[:3] if small else out


def mujoco_fd_seconds(name):
    """The median seconds of MuJoCo's `mjd_transitionFD` (centered) on the robot state `name`
    (`<model>_t<ms>ms`), or None without MuJoCo's packages."""
    try:
        import mujoco
        from export_mujoco_robots import state
    except ImportError:
        return None
    model, ms = name.rsplit("_t", 1)
    seed = 0 if model == "shadow" else None
    m, d = state(model, int(ms[:-2]) / 1000.0, seed)
    nx, nu = 2 * m.nv + m.na, m.nu
    A, B = np.zeros((nx, nx)), np.zeros((nx, nu))
    return median_seconds(lambda: mujoco.mjd_transitionFD(m, d, 1e-6, 1, A, B, None, None))


def main():
    """Parse the command line, run every set, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--small", action="store_true", help="three problems per set (CI)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--allow-stale-extension", action="store_true")
    ap.add_argument("--no-rollout", action="store_true",
                    help="leave out the sliding box's rollout gradient and identification")
    a = ap.parse_args()
    try:
        import contactlab  # noqa: F401
    except ImportError:
        out = {"skipped": "the contactlab package is not installed (pip install ./python)",
               "records": []}
        write_result(out, a.out)
        return
    built, profile, stale = timing_extension("gradients.py", a.allow_stale_extension, a.small)
    rng = np.random.default_rng(43)
    # Maximum dissipation's directions come from their own generator, so that adding its
    # records left every other derivative's directions (and numbers) as they were.
    dissipation_rng = np.random.default_rng(4343)
    mlcp_rng = np.random.default_rng(4344)
    records = []
    for set_name in a.sets.split(","):
        for name, p in problems(set_name, a.small):
            rec = study(p, name, set_name, rng)
            if set_name == "robots" and rec.get("status") == "converged":
                rec["mujoco_transition_fd_s"] = mujoco_fd_seconds(name)
            records.append(rec)
            sap = sap_study(p, name, set_name, rng)
            others = (sap, own_study(p, name, set_name, rng, "pyramid", PYRAMID),
                      own_study(p, name, set_name, dissipation_rng, "dissipation", DISSIPATION),
                      mlcp_study(p, name, set_name, mlcp_rng))
            for other in others:
                if other is not None:
                    records.append(other)
                    print(f"  {other['derivative']}: {other.get('status')} fd={other.get('fd')} "
                          f"error={other.get('derivative_error')}", file=sys.stderr)
            print(f"{set_name} {name}: {rec.get('status')} fd={rec.get('fd')} "
                  f"error={rec.get('derivative_error')} vjp={rec.get('vjp_s')} "
                  f"solve={rec.get('solve_s')}", file=sys.stderr)
    rolled = {}
    if not a.no_rollout:
        import rollout

        rolled = rollout.study(seeds=2 if a.small else rollout.SEEDS)
        rolled.pop("fits")
        print(f"rollout: {rolled}", file=sys.stderr)
    out = {
        **rolled,
        "contactlab_build": profile,
        "contactlab_commit": built,
        "contactlab_stale": stale,
        "small": a.small,
        "tol": TOL,
        "first_order_tol": FIRST_ORDER_TOL,
        "h_ladder_max": max(H_LADDER),
        "h_ladder_min": min(H_LADDER),
        "fd_consistent": FD_CONSISTENT,
        "max_rows": MAX_ROWS,
        "mlcp_max_rows": MLCP_MAX_ROWS,
        "records": records,
    }
    write_result(out, a.out)


if __name__ == "__main__":
    main()
