"""The robot study's runner (`experiments/peers/robots.py`) at CI size: MuJoCo and pairs step
the same scene, every pair's record carries the shared ruler's verdicts and its step beside
`mj_step`, and a pair that does not take a scene's constraints is recorded as refused, naming
why."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("mujoco")
pytest.importorskip("dm_control")
pytest.importorskip("gymnasium_robotics")

PEERS = Path(__file__).resolve().parents[2] / "experiments" / "peers"
sys.path.insert(0, str(PEERS))
# Loaded under its own name: `robots` is also this folder's helper module (robots.py).
_spec = importlib.util.spec_from_file_location("robot_study", PEERS / "robots.py")
robots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(robots)


def test_a_scene_is_stepped_by_mujoco_and_by_pairs_side_by_side():
    """The humanoid's fall, 0.6 s: MuJoCo's default, then SAP and PGS, then SAP and ADMM in
    MuJoCo's metric, then PGS and ADMM at their papers' defaults. SAP's own optimality holds on every
    step; the ruler's verdicts add up;
    each pair's step has `mj_step`'s beside it; the humanoid reaches the floor, with contacts
    and warm starts."""
    groups = [("core", [("sap", "newton-merit"), ("coulomb", "pgs")], None)]
    records = robots.run_scene("humanoid_fall", ["default"], groups, lambda scene: 0.6)
    assert [r["engine"] for r in records] == ["mujoco"] + ["contactlab"] * 6
    mj, sap, pgs = records[:3]
    # The humanoid is one of the scenes stepped in MuJoCo's metric too, beside the step's.
    assert [(r["optimizer"], r["config"]) for r in records[3:]] == [
        ("newton-merit", "pair-metric-mujoco"),
        ("admm", "pair-metric-mujoco"),
        ("pgs", "pair"),
        ("admm", "pair"),
    ]
    assert records[3]["accepted_fraction"] == 1.0
    groups = [None, "core", "core", "metric", "metric", "defaults", "defaults"]
    assert [r.get("group") for r in records] == groups
    assert mj["steps"] == sap["steps"] == pgs["steps"] == 120
    assert sap["accepted_fraction"] == 1.0 and sap["resets"] == 0
    for r in (sap, pgs):
        assert r["steps_with_rows"] > 0 and r["contacts_max"] > 0
        assert sum(r["statuses"].values()) == r["steps_with_rows"]
        assert r["failed_steps"] == r["steps_with_rows"] - r["statuses"].get("converged", 0)
        assert r["step_ratio_to_mj_step"] == pytest.approx(
            r["step_us_median"] / mj["step_us_median"]
        )
        assert r["warm_fraction"] > 0.5
        assert r["penetration_max_m"] < 0.05


def test_a_pair_that_refuses_the_scene_is_recorded_with_why():
    """Hwangbo's bisection takes 3-row contacts only: on the Jaco hand (condim 4) it is
    recorded as refused, with the constraint it refused."""
    groups = [("papers", [("coulomb", "bisection-sor")], None)]
    records = robots.run_scene("jaco_grasp", [], groups, lambda scene: 0.01)
    (r,) = [r for r in records if r.get("optimizer") == "bisection-sor"]
    assert "condim 4" in r["refused"] and r["group"] == "papers"
    # Every scene also steps PGS and ADMM at their papers' defaults (DEFAULT_PAIRS).
    for optimizer in ("pgs", "admm"):
        (run,) = [r for r in records if r.get("optimizer") == optimizer]
        assert run["config"] == "pair" and "refused" not in run
        assert run["group"] == "defaults"


def test_pair_groups_name_the_pairs_and_their_lengths():
    """`--pairs papers` runs the core pairs for the scene's duration and each paper's own for
    the papers' duration; `none` runs no pair; `all` adds the other pairs, none twice."""
    groups = robots.pair_groups("papers", 1.5, 0.5)
    assert groups[0] == ("core", robots.CORE, None)
    assert groups[1] == ("papers", robots.PAPERS, 1.5)
    assert robots.pair_groups("none", 1.0, 1.0) == []
    assert robots.pair_groups("sap+lbfgs", 1.0, 1.0) == [("custom", [("sap", "lbfgs")], None)]
    # The core natural map carries its ADMM start; the plain one is a paper's pair.
    assert ("natural-map", "plm", {"admm_start_tol": robots.ADMM_START_TOL}) in robots.CORE
    assert ("natural-map", "plm") in robots.PAPERS
    # The core ADMM is equilibrated at a constant rho and the core PGS combines its sweeps by
    # NNCG; the paper's defaults of both run beside them.
    assert ("coulomb", "admm", robots.ADMM_OPTIONS) in robots.CORE
    assert ("coulomb", "pgs", {"nncg": True, "nncg_restart": 1.5}) in robots.CORE
    assert robots.DEFAULT_PAIRS == [("coulomb", "pgs"), ("coulomb", "admm")]


def test_a_stale_extension_is_refused_with_the_commits_named():
    """An extension built from uncommitted changes, or at another commit with the extension's
    sources changed since, cannot speak for the tree: the runner names the commits and the
    files; another commit with the same sources passes; `unknown` cannot be checked."""
    head, other = "a" * 40, "b" * 40
    assert robots.stale_extension(head, head, []) is None
    assert robots.stale_extension(other, head, []) is None
    why = robots.stale_extension(other, head, ["core/src/lib.rs"])
    assert "bbbbbbbbbb" in why and "aaaaaaaaaa" in why and "core/src/lib.rs" in why
    assert "uncommitted" in robots.stale_extension(head + "-dirty", head, [])
    assert robots.stale_extension("unknown", head, ["x"]) is None
    assert robots.stale_extension(head, "unknown", ["x"]) is None
    assert robots.stale_extension("absent", head, ["x"]) is None


def test_the_installed_extension_names_its_commit():
    """`contactlab.BUILD_COMMIT` is a 40-digit hash (with `-dirty` when built from changes) or
    `unknown`."""
    import re

    import contactlab

    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", contactlab.BUILD_COMMIT)


def test_a_debug_extension_is_refused_where_the_study_times_its_solves():
    assert robots.not_release("release", small=False) is None
    # CI's versions time nothing they report: any build runs them.
    assert robots.not_release("debug", small=True) is None
    why = robots.not_release("debug", small=False)
    assert "debug build" in why and "release build" in why
    # A build that does not say cannot be checked.
    assert robots.not_release("unknown", small=False) is None
