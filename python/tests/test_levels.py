"""Our solvers beside MuJoCo's at the same relative natural-map residual
(`experiments/peers/levels.py`, both studies) at CI size: its ruler is the shared ruler on our
problem, its projection is onto the cone, the problem it builds for MuJoCo is the one MuJoCo's
solvers solve (Newton's answer meets it), and the small runs' records hold what they say."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")
import contactlab  # noqa: E402

PEERS = Path(__file__).resolve().parents[2] / "experiments" / "peers"
sys.path.insert(0, str(PEERS))
import fresh_clutter  # noqa: E402
import levels  # noqa: E402


def test_the_projection_lands_in_the_cone_and_keeps_what_is_there():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 3))
    mu = rng.uniform(0.1, 1.5, size=200)
    p = levels.cone_project(x, mu)
    assert np.all(mu * p[:, 0] >= np.linalg.norm(p[:, 1:], axis=1) - 1e-12)
    assert np.allclose(levels.cone_project(p, mu), p, atol=1e-12)
    # The projection is the nearest point: x - p is normal to the cone at p (orthogonal to p).
    assert np.allclose(np.einsum("ij,ij->i", x - p, p), 0.0, atol=1e-12)


def test_on_our_problem_the_ruler_is_the_shared_natural_map():
    p = contactlab.read(str(fresh_clutter.T.DATA + "/global/clutter_n8_seed7_step0250_nc19.json"))
    local = p.to_local()
    W, q, mu = np.asarray(local.W), np.asarray(local.q), np.asarray(local.mu)
    s = contactlab.solve(local, "coulomb", "pgs", tol=1e-300, max_iter=7)
    ours = levels.natural_map_norm(np.asarray(s.r), W, q, mu, True)
    # The shared ruler divides by 1 + |q|.
    assert ours / (1.0 + np.linalg.norm(q)) == pytest.approx(s.residual, rel=1e-10)


def test_mujocos_newton_answer_meets_the_problem_built_for_its_pgs():
    (state,) = fresh_clutter.repository_states(["clutter_n8_seed7_step0250_nc19"])
    sides = levels.Sides(state)
    try:
        assert sides.newton_residual < 1e-6, sides.newton_residual
        # Capped PGS solves move the residual down from 1 at zero.
        _, after_one = sides.mujoco(1)
        _, after_many = sides.mujoco(200)
        assert after_many < after_one < 1.0
        assert sides.mujoco_condition >= 1.0 and sides.ours_condition >= 1.0
    finally:
        sides.restore()


def test_the_small_run_finds_each_sides_iterations_and_times_them(tmp_path):
    out = tmp_path / "pgs.json"
    subprocess.run([sys.executable, str(PEERS / "levels.py"), "--small", "--rounds", "2",
                    "--out", str(out)], check=True)
    result = json.loads(out.read_text())
    assert result["levels"] == levels.SMALL_LEVELS and result["rounds"] == 2
    records = result["records"]
    assert len(records) == len(levels.SMALL_PROBLEMS) * len(levels.SMALL_LEVELS)
    for r in records:
        assert r["rows"] == 3 * r["contacts"] and r["dofs"] > 0
        for side, k in (("mujoco", "mujoco_iterations"), ("ours", "ours_sweeps"),
                        ("ours_nncg", "ours_nncg_sweeps")):
            if r[k] is None:
                assert r[f"{side}_residual"] > r["level"]
            else:
                assert 1 <= r[k] <= result["max_sweeps"] and r[f"{side}_residual"] <= r["level"]
        if r["ratio"] is not None:
            assert np.isclose(r["ratio"], r["ours_seconds"] / r["mujoco_seconds"])
        if r["ratio_nncg"] is not None:
            assert np.isclose(r["ratio_nncg"], r["ours_nncg_seconds"] / r["mujoco_seconds"])
    # The step both sides reach at the coarse level, in more iterations at the finer one.
    coarse, fine = records[0], records[1]
    assert coarse["ratio"] is not None
    assert coarse["ours_sweeps"] <= fine["ours_sweeps"]
    assert coarse["mujoco_iterations"] <= fine["mujoco_iterations"]
    # NNCG combines the same sweeps: it reaches both levels on this step too.
    assert coarse["ratio_nncg"] is not None and fine["ours_nncg_sweeps"] is not None


def test_a_capped_todorov_solve_stops_at_its_cap_and_moves_the_residual_down():
    (state,) = fresh_clutter.repository_states(["clutter_n8_seed7_step0250_nc19"])
    sides = levels.Sides(state, "newton")
    try:
        _, one = sides.todorov(1)
        _, many = sides.todorov(50)
        assert many < one < 1.0
        # On MuJoCo's problem: its `A + R` (positive definite, as MuJoCo's `R` makes it) and `b`.
        W = np.asarray(sides.soft.W)
        assert np.allclose(W, sides.AR, rtol=0, atol=1e-12 * np.abs(W).max())
        assert np.allclose(np.asarray(sides.soft.q), sides.b)
        assert np.linalg.eigvalsh(W)[0] > 0.0
        _, soft_one = sides.todorov_soft(1)
        _, soft_many = sides.todorov_soft(50)
        assert soft_many < soft_one < 1.0 and soft_many < 1e-6
        # MuJoCo's Newton, capped at one iteration and at its cap, from the same zero.
        _, mj_one = sides.mujoco(1)
        _, mj_many = sides.mujoco(100)
        assert mj_many <= mj_one < 1.0 and mj_many < 1e-6
    finally:
        sides.restore()


def test_the_small_newton_run_finds_each_sides_iterations_and_times_them(tmp_path):
    out = tmp_path / "newton.json"
    subprocess.run([sys.executable, str(PEERS / "levels.py"), "--study", "newton", "--small",
                    "--rounds", "2", "--out", str(out)], check=True)
    result = json.loads(out.read_text())
    assert result["study"] == "newton" and result["max_sweeps"] == levels.MAX_NEWTON
    records = result["records"]
    assert len(records) == len(levels.SMALL_PROBLEMS) * len(levels.SMALL_LEVELS)
    for r in records:
        assert "ours_sweeps" not in r and "ratio_nncg" not in r
        for side, k in (("mujoco", "mujoco_iterations"), ("ours", "ours_iterations"),
                        ("ours_soft", "ours_soft_iterations")):
            if r[k] is None:
                assert r[f"{side}_residual"] > r["level"]
            else:
                assert 1 <= r[k] <= levels.MAX_NEWTON and r[f"{side}_residual"] <= r["level"]
        for ours, ratio in (("ours", "ratio"), ("ours_soft", "ratio_soft")):
            if r[ratio] is not None:
                assert np.isclose(r[ratio], r[f"{ours}_seconds"] / r["mujoco_seconds"])
    coarse, fine = records[0], records[1]
    # All three Newton-type sides reach this step's coarse and fine levels, the fine in as many
    # iterations or more.
    for ratio, k in (("ratio", "ours_iterations"), ("ratio_soft", "ours_soft_iterations")):
        assert coarse[ratio] is not None and fine[ratio] is not None
        assert coarse[k] <= fine[k]
    assert coarse["mujoco_iterations"] <= fine["mujoco_iterations"]
