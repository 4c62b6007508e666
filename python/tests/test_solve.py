"""Solves by name: the command line's answers bit for bit, options, errors, tables, the GIL."""

import threading
import time

import numpy as np
import polars as pl
import pytest

import contactlab
from conftest import DATA, balls_xml, run_cli, save_npy, settled

LOCAL_PAIRS = [
    ("coulomb", "pgs"),
    ("implicit-ncp", "todorov"),
    ("natural-map", "lm"),
    ("min-map", "newton"),
]


def assert_same_bits(solution, answer):
    """`r`, `u`, status and iterations exactly as the command line printed them."""
    assert solution.status == answer["status"]
    assert solution.solver_status == answer["solver_status"]
    assert solution.iterations == answer["iterations"]
    for k in ("r", "u"):
        ours = getattr(solution, k)
        theirs = np.asarray(answer[k], dtype=float)
        assert ours.shape == theirs.shape
        assert np.array_equal(ours.view(np.uint64), theirs.view(np.uint64)), k


def numpy_problem():
    rng = np.random.default_rng(11)
    nc = 4
    J = rng.normal(size=(3 * nc, 9))
    W = J @ J.T + 1e-3 * np.eye(3 * nc)
    q = rng.normal(size=3 * nc)
    q[0::3] = -np.abs(q[0::3]) - 0.2
    return contactlab.LocalProblem(W, q, np.full(nc, 0.6))


@pytest.mark.parametrize("formulation, optimizer", LOCAL_PAIRS)
def test_a_numpy_problem_gets_the_command_lines_answer(cli, tmp_path, formulation, optimizer):
    p = numpy_problem()
    folder = save_npy(tmp_path / "p", p)
    s = contactlab.solve(p, formulation, optimizer, tol=1e-10, max_iter=200)
    assert_same_bits(s, run_cli(cli, folder, formulation, optimizer, 1e-10, 200))


@pytest.mark.parametrize("formulation, optimizer", LOCAL_PAIRS)
def test_an_fclib_file_gets_the_command_lines_answer(cli, formulation, optimizer):
    path = DATA / "problems" / "BoxesStack1-i100000-32.hdf5"
    s = contactlab.solve(contactlab.read(path), formulation, optimizer, tol=1e-8, max_iter=100)
    assert_same_bits(s, run_cli(cli, path, formulation, optimizer, 1e-8, 100))


@pytest.mark.parametrize("formulation, optimizer", LOCAL_PAIRS + [("sap", "newton-merit")])
def test_a_live_mujoco_state_gets_the_command_lines_answer(cli, tmp_path, formulation, optimizer):
    m, d = settled(balls_xml(8), steps=40)
    live = contactlab.mujoco.problem(m, d)
    assert live.num_contacts >= 8
    # The file's problem: the rigid one, targets in the offset (SAP's phi0 and dt are not
    # part of the format), solved the same from Python and from the command line.
    p = contactlab.GeneralizedProblem(live.M, live.H, live.f, live.w - live.target, live.mu)
    folder = save_npy(tmp_path / "mj", p)
    s = contactlab.solve(p, formulation, optimizer, tol=1e-8, max_iter=100)
    answer = run_cli(cli, folder, formulation, optimizer, 1e-8, 100)
    assert_same_bits(s, answer)
    np.testing.assert_allclose(s.v, answer["v"], rtol=1e-12, atol=1e-14)


def test_a_solution_carries_metrics_counters_options_and_its_trace():
    s = contactlab.solve(numpy_problem(), "implicit-ncp", "todorov", tol=1e-10, restarts=2)
    assert s.status == "converged"
    assert s.metrics["natural_map"] == s.residual <= 1e-10
    assert set(s.metrics) == {"natural_map", "cone_violation", "dual_cone_violation", "complementarity_gap"}
    assert s.options["restarts"] == 2
    assert s.model == "coulomb_cone"
    assert s.seconds > 0 and s.iterations > 0
    assert all(isinstance(v, int) for v in s.counters.values())
    t = s.trace
    assert isinstance(t, pl.DataFrame)
    assert t.height >= 1 and {"iter", "merit", "step_kind", "seconds"} <= set(t.columns)
    assert t["merit"].dtype == pl.Float64
    assert s.trace is t  # built once
    pgs = contactlab.solve(numpy_problem(), tol=1e-10)
    assert pgs.counters["sticking_contacts"] + pgs.counters["slipping_contacts"] + pgs.counters["opening_contacts"] == 4


def test_unknown_names_and_options_are_value_errors_naming_them():
    p = numpy_problem()
    with pytest.raises(ValueError, match="unknown formulation `nope`"):
        contactlab.solve(p, "nope", "pgs")
    with pytest.raises(ValueError, match="unknown optimizer `nope`"):
        contactlab.solve(p, "coulomb", "nope")
    with pytest.raises(ValueError, match="cannot be run by optimizer `pgs`"):
        contactlab.solve(p, "implicit-ncp", "pgs")
    with pytest.raises(ValueError, match="unknown option `theta0_deg`.*restarts"):
        contactlab.solve(p, "implicit-ncp", "todorov", theta0_deg=30)
    with pytest.raises(ValueError, match="restarts"):
        contactlab.solve(p, "implicit-ncp", "todorov", restarts="many")
    with pytest.raises(ValueError, match="tol must be a positive number"):
        contactlab.solve(p, tol=-1.0)
    with pytest.raises(ValueError, match="time_limit"):
        contactlab.solve(p, time_limit=0.0)
    with pytest.raises(TypeError, match="LocalProblem or contactlab.GeneralizedProblem"):
        contactlab.solve(np.eye(3))


def test_solver_error_is_a_runtime_error():
    assert issubclass(contactlab.SolverError, RuntimeError)
    assert not issubclass(contactlab.SolverError, ValueError)


def test_a_time_limit_stops_a_solve_with_status_timeout():
    # A limit of a microsecond expires during the set-up whatever the machine and the build
    # (50 ms, tried first, let a release build on a fast machine reach stagnation first).
    m, d = settled(balls_xml(30), steps=40)
    p = contactlab.mujoco.problem(m, d)
    s = contactlab.solve(p, "sap", "lbfgs", tol=1e-300, max_iter=10**9, time_limit=1e-6)
    assert s.status == "timeout"
    assert s.seconds < 1.0


def test_pairs_name_every_pair_and_why_the_others_cannot_run():
    ps = contactlab.pairs()
    names = {(p["formulation"], p["optimizer"]) for p in ps}
    assert ("coulomb", "pgs") in names and ("sap", "newton-merit") in names
    ok = [p for p in ps if p["compatible"]]
    assert all(p["reason"] == "" for p in ok)
    bad = next(p for p in ps if (p["formulation"], p["optimizer"]) == ("implicit-ncp", "pgs"))
    assert not bad["compatible"] and "pgs" in bad["reason"]


def test_solve_all_runs_every_compatible_pair():
    p = contactlab.read(DATA / "mujoco" / "global" / "balls_in_box_n5_mu1.0_seed105_step0060_nc6.json")
    df = contactlab.solve_all(p, tol=1e-8, time_limit=5.0)
    assert isinstance(df, pl.DataFrame)
    compatible = [(q["formulation"], q["optimizer"]) for q in contactlab.pairs() if q["compatible"]]
    assert list(zip(df["formulation"], df["optimizer"])) == compatible
    pgs = df.filter((pl.col("formulation") == "coulomb") & (pl.col("optimizer") == "pgs"))
    assert pgs["status"][0] == "converged" and pgs["residual"][0] <= 1e-8
    # The same numbers as a solve of that pair on its own.
    one = contactlab.solve(p, "coulomb", "pgs", tol=1e-8)
    assert pgs["iterations"][0] == one.iterations and pgs["residual"][0] == one.residual


def test_the_gil_is_released_during_a_solve():
    m, d = settled(balls_xml(30), steps=40)
    p = contactlab.mujoco.problem(m, d)
    ticks = []
    t = threading.Thread(
        target=lambda: contactlab.solve(p, "sap", "lbfgs", tol=1e-300, max_iter=10**9, time_limit=0.3)
    )
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    # Python ran beside the solve: many ticks while it lasted.
    assert len(ticks) > 20, len(ticks)


def test_evaluate_is_the_ruler_a_solve_is_judged_by():
    p = numpy_problem()
    s = contactlab.solve(p, "implicit-ncp", "todorov", tol=1e-10)
    ours = contactlab.evaluate(p, s.r)
    assert ours.keys() == s.metrics.keys()
    for k, v in s.metrics.items():
        assert ours[k] == pytest.approx(v, rel=1e-9, abs=1e-15), k
    with pytest.raises(ValueError, match="field `r`: wrong shape"):
        contactlab.evaluate(p, s.r[:-1])


def test_evaluate_with_dt_gives_the_solutions_contactbench_figures():
    """`evaluate(p, r, dt=...)` adds ContactBench's five figures, those of
    `Solution.contactbench(dt)`; without dt they are absent; dt = 0 is refused."""
    p = numpy_problem()
    names = ("primal", "dual", "complementarity", "signorini", "dissipation")
    # A rough answer: figures that are not all zero, so equality says something.
    for s in (contactlab.solve(p, "implicit-ncp", "todorov", tol=1e-10),
              contactlab.solve(p, "coulomb", "pgs", tol=1e-2, max_iter=3)):
        ours = contactlab.evaluate(p, s.r, dt=0.01)
        theirs = s.contactbench(0.01)
        for k in names:
            assert ours[f"contactbench_{k}"] == pytest.approx(theirs[k], rel=1e-12, abs=1e-15), k
        assert not any(k.startswith("contactbench_") for k in contactlab.evaluate(p, s.r))
    assert max(theirs.values()) > 0
    with pytest.raises(ValueError, match="dt"):
        contactlab.evaluate(p, s.r, dt=0.0)


def test_contactbench_figures_vanish_at_an_answer_and_read_forces():
    """ContactBench's figures of a converged answer are zero to the tolerance's order; on a
    perturbed answer they are positive, and scale as forces (`r / dt`)."""
    p = numpy_problem()
    s = contactlab.solve(p, "natural-map", "gauss-newton", tol=1e-12, max_iter=200)
    assert s.status == "converged"
    f = s.contactbench(dt=0.01)
    assert set(f) == {"primal", "dual", "complementarity", "signorini", "dissipation"}
    assert max(f.values()) <= 1e-8, f
    rough = contactlab.solve(p, "coulomb", "pgs", tol=1e-2, max_iter=3)
    a, b = rough.contactbench(dt=0.01), rough.contactbench(dt=0.02)
    assert a["primal"] >= 0 and a["complementarity"] > 0
    assert abs(a["complementarity"] - 2 * b["complementarity"]) <= 1e-12 * a["complementarity"]
    with pytest.raises(ValueError, match="dt"):
        s.contactbench(dt=0.0)


def test_a_loose_grasp_step_has_rigid_answers_with_different_motions():
    """The pinch grasp's plate slipping in a loose grip (`consistency_grasp.toml`, the natural
    map's dogleg run at dt 1e-4, step 2050, dumped by `contactlab dump`): eight contacts on one
    rigid plate leave the Delassus matrix rank-deficient, and Todorov's driver and the natural
    map's dogleg both meet a tight tolerance with contact velocities far apart. The rigid
    Coulomb problem there has more than one answer with a different motion, which is why a
    solver's trajectory can branch from one time step to the next (the fidelity study's
    `consistency_grasp` findings)."""
    p = contactlab.read(DATA / "problems" / "indeterminate" / "grasp_loose.json")
    W = 0.5 * (p.W + p.W.T)
    eig = np.linalg.eigvalsh(W)
    assert p.num_contacts == 8
    assert (eig > 1e-10 * eig.max()).sum() < W.shape[0] // 2
    todorov = contactlab.solve(p, "implicit-ncp", "todorov", tol=1e-10, max_iter=500)
    dogleg = contactlab.solve(p, "natural-map", "dogleg", tol=1e-10, max_iter=500)
    for s in (todorov, dogleg):
        assert s.status == "converged" and s.residual <= 1e-10, (s.status, s.residual)
    gap = np.linalg.norm(dogleg.u - todorov.u) / np.linalg.norm(todorov.u)
    assert gap > 0.1, gap
