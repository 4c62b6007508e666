"""MuJoCo's side of the fidelity ladder (`experiments/peers/ladder.py`) at CI size: MuJoCo's own
tolerance x iteration rungs on sampled steps of its own trajectory, each answer judged by the
shared ruler and ContactBench's figures through `contactlab.evaluate`."""

import sys
import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")
contactlab = pytest.importorskip("contactlab")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "peers"))
import ladder  # noqa: E402


def test_the_sample_is_the_rust_ladders_spread():
    """Index for index the Rust ladder's `spread` (its unit test's values)."""
    c = list(range(10, 110))
    assert ladder.spread(c, 5) == [10, 35, 60, 84, 109]
    assert ladder.spread(c[:3], 5) == [10, 11, 12]
    assert ladder.spread(c, 1) == [10]


def test_mujocos_rungs_on_the_sliding_cube_are_judged_by_the_ruler():
    """Three steps of the sliding cube at MuJoCo's defaults, two tolerances x two caps x cold and
    warm: every rung finds the cube's four contacts, converges within the larger cap, and
    MuJoCo's soft answer keeps a ruler residual well above round-off at every rung (its
    distance from the rigid answer, not an unfinished solve), while its forces stay in the cone
    (ContactBench's primal figure)."""
    args = types.SimpleNamespace(samples=3, tols=[1e-4, 1e-8], caps=[10, 200])
    scene = ladder.scenes()["sliding_cube"]
    records = ladder.ladder("sliding_cube", scene, "elliptic-impratio1-noslip0", args, contactlab)
    assert len(records) == 3 * 2 * 2 * 2
    assert {r["start_from"] for r in records} == {"cold", "warm"}
    assert {(r["contacts"], r["rows"]) for r in records} == {(4, 12)}
    assert all(r["ruler"] == "contactlab" for r in records)
    assert all(r["converged"] for r in records if r["cap"] == 200)
    residual = np.array([r["residual"] for r in records])
    assert np.all(residual > 1e-4) and np.all(residual < 1.0), residual
    assert max(r["primal"] for r in records) < 1e-9
    # The same step at every rung: its residual moves with the tolerance by little.
    for step in {r["step"] for r in records}:
        mine = [r["residual"] for r in records if r["step"] == step]
        assert max(mine) - min(mine) <= 1e-2 * max(mine), mine


def test_without_the_ruler_the_rows_keep_times_and_say_so():
    """`--without-ruler` (a machine without `contactlab`): null residuals, `ruler` missing."""
    args = types.SimpleNamespace(samples=1, tols=[1e-8], caps=[200])
    scene = ladder.scenes()["stack"]
    records = ladder.ladder("stack", scene, ladder.fidelity.MJ_BEST, args, None)
    assert len(records) == 2
    for r in records:
        assert r["ruler"] == "missing" and r["residual"] is None and r["seconds"] > 0.0
