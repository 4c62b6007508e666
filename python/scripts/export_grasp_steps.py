"""Exports one step of each grasp scene of the robot study (``experiments/peers/robot_scenes.py``:
the Kinova Jaco hand closed on a cylinder, the Adroit hand on its ball) as a contact problem
(``data/mujoco_robots/grasp/``): hands whose condim-4 contacts have a torsional coefficient far
below the sliding one (the Jaco's 0.005 against 1), the thin cones of ``core/src/cone_scaling.rs``.

Usage (from the repository root; needs ``mujoco``, ``dm_control``, ``gymnasium_robotics`` and
the ``contactlab`` Python package)::

    python3 python/scripts/export_grasp_steps.py [OUTDIR]     # default data/mujoco_robots/grasp

Each state: the scene's ``pair`` configuration (elliptic cones, noslip 0) from its recorded
grasp, stepped under the scene's control for :data:`SECONDS` by ``contactlab.mujoco.step`` with
SAP (which holds both grasps, so that the contacts stick, as the rigid pairs meet them in the
study; MuJoCo's own soft step lets the object slide), then ``mj_forward``; the problem is ``contactlab.mujoco.problem(..., targets="consistent")``, the one
``contactlab.mujoco.step`` solves, written in the project's JSON format as
``export_mujoco_robots.py`` writes it (``w = -t``). Deterministic, as MuJoCo's step is.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mujoco

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "peers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: The scenes and how long MuJoCo steps each before the export.
SECONDS = {"jaco_grasp": 0.4, "adroit_grasp": 0.4}


def export(name, seconds):
    """``(stem, problem)`` of one scene after ``seconds``."""
    import contactlab
    import robot_scenes as rs
    from export_mujoco_robots import problem_json

    scene = rs.SCENES[name]
    m, d = scene.model("pair")
    dt = m.opt.timestep
    steps = int(round(seconds / dt))
    previous = None
    for k in range(steps):
        scene.control(m, d, k * dt)
        previous = contactlab.mujoco.step(m, d, "sap", "newton-merit", warm=previous, tol=1e-8)
    scene.control(m, d, steps * dt)
    mujoco.mj_forward(m, d)
    description = (
        f"{name} of the robot study (experiments/peers/robot_scenes.py), pair configuration "
        f"(elliptic cones, noslip 0), {seconds} s ({steps} steps of {dt} s) stepped with SAP "
        f"from the recorded grasp, consistent drift targets; MuJoCo {mujoco.__version__}"
    )
    prob = problem_json(m, d, description, targets="consistent")
    return f"{name}_t{int(round(1000 * seconds)):04d}ms", prob


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, seconds in SECONDS.items():
        stem, prob = export(name, seconds)
        with open(out / f"{stem}.json", "w") as f:
            json.dump(prob, f, separators=(",", ":"))
            f.write("\n")
        print(stem, len(prob["w"]), "rows", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ROOT / "data" / "mujoco_robots" / "grasp")
