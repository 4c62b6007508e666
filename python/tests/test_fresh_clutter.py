"""The fresh-clutter speed study (`experiments/peers/fresh_clutter.py`) at CI size: the problem it
builds from a replayed MuJoCo state is the stored export of that state, the states it samples
have the contacts it asks for, and each record holds both sides' timings of the same problem
with SAP converged."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")
PEERS = Path(__file__).resolve().parents[2] / "experiments" / "peers"
sys.path.insert(0, str(PEERS))
import fresh_clutter  # noqa: E402


def test_a_replayed_state_builds_the_stored_problem():
    (state,) = fresh_clutter.repository_states(["clutter_n8_seed7_step0250_nc19"])
    assert state.contacts == 19
    assert state.replay_rel_diff <= 1e-10, state.replay_rel_diff


def test_the_sampled_states_have_the_contacts_asked_for():
    states = fresh_clutter.fresh_states([(8, 0.5, 11)], min_contacts=10)
    assert states, "no state of the 8-body clutter with 10 contacts"
    assert len(states) <= fresh_clutter.PER_SCENE
    for s in states:
        assert s.contacts >= 10 and s.set == "fresh"
        assert f"_nc{s.contacts}" in s.name and "_mu0.5_seed11_" in s.name
        assert s.step >= fresh_clutter.FIRST_STEP


def test_the_small_run_times_both_sides_of_each_problem(tmp_path):
    out = tmp_path / "fresh.json"
    subprocess.run([sys.executable, str(PEERS / "fresh_clutter.py"), "--small", "--rounds", "2",
                    "--min-contacts", "20", "--out", str(out)], check=True)
    result = json.loads(out.read_text())
    assert result["rounds"] == 2 and result["rel_tol"] == fresh_clutter.REL_TOL
    records = result["records"]
    assert records
    for r in records:
        assert r["set"] == "fresh" and r["contacts"] >= 20 and r["rounds"] == 2
        assert r["sap_status"] == "converged", r
        assert r["mujoco_seconds"] > 0 and r["sap_seconds"] > 0
        assert r["mujoco_iterations"] > 0 and r["sap_iterations"] >= r["sap_newton_steps"] > 0
        assert np.isclose(r["ratio"], r["sap_seconds"] / r["mujoco_seconds"])
        # The untimed iterations: MuJoCo's path is the same up to its stop, so a tighter
        # tolerance stops no earlier; SAP converges at every sigma on these small steps.
        assert r["mujoco_iterations_tight"] >= r["mujoco_iterations"]
        for sigma in fresh_clutter.SIGMAS:
            assert r[f"sap_iterations_sigma_{sigma:g}"] > 0
    assert result["tight_tol"] < result["rel_tol"] and result["sigmas"] == fresh_clutter.SIGMAS
