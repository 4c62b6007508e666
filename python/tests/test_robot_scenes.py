"""The robot study's scenes (`experiments/peers/robot_scenes.py`) load offline, start where they
say and step: a few MuJoCo steps per scene, fast (the grasp finders' one second each included)."""

import sys
from pathlib import Path

import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("dm_control")
pytest.importorskip("gymnasium_robotics")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "peers"))
import robot_scenes as rs  # noqa: E402


@pytest.mark.parametrize("name", list(rs.SCENES))
def test_a_scene_steps_without_nan_in_the_pair_configuration(name):
    scene = rs.SCENES[name]
    m, _ = scene.model("pair")
    assert m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and m.opt.noslip_iterations == 0
    rows, summary = rs.run(scene, duration=10 * m.opt.timestep, config="pair")
    assert len(rows) == 10 and not summary["nan"]
    assert summary["nv"] == m.nv and summary["step_us_median"] > 0


@pytest.mark.parametrize("name", [n for n, s in rs.SCENES.items() if s.grid])
def test_a_hold_scene_starts_grasped_and_measures_slip_in_the_hand(name):
    scene = rs.SCENES[name]
    m, d = scene.model("default")
    obj = m.body(scene.obj).id
    touching = {int(m.geom_bodyid[g]) for pair in d.contact.geom[:d.ncon] for g in pair}
    assert obj in touching
    _, summary = rs.run(scene, duration=5 * m.opt.timestep, config="best")
    assert {"slip_um_s", "slip_final_mm", "rotation_deg"} <= set(summary)


def test_a_stepper_returning_statistics_has_them_kept_as_rows():
    def stepper(m, d):
        mujoco.mj_step(m, d)
        return {"status": "ok", "iterations": 3}

    rows, _ = rs.run(rs.SCENES["stacker_tower"], stepper, duration=0.005, config="pair")
    assert all(r["status"] == "ok" and r["iterations"] == 3 and r["seconds"] > 0 for r in rows)


def test_the_best_configuration_sets_the_stiffest_time_constant_on_every_geom():
    m, _ = rs.SCENES["jaco_grasp"].model("best")
    assert (m.geom_solref[:, 0] == 2 * m.opt.timestep).all()
    assert m.opt.impratio == 10.0 and m.opt.noslip_iterations == 10
    m, _ = rs.SCENES["jaco_grasp"].model("pyramidal-impratio1-noslip0")
    assert m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and m.opt.impratio == 1.0
