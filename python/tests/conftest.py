"""Shared fixtures: the repository's data, the command line to compare against, MuJoCo scenes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"


def _cli_candidates():
    env = os.environ.get("CONTACTLAB_CLI")
    if env:
        yield Path(env)
    targets = [os.environ.get("CARGO_TARGET_DIR"), str(REPO / "target")]
    for t in filter(None, targets):
        for profile in ("release", "debug"):
            yield Path(t) / profile / "contactlab"


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `contactlab` command line (`CONTACTLAB_CLI`, else the target directory's build,
    else built here): the answers the package must reproduce bit for bit."""
    for c in _cli_candidates():
        if c.is_file():
            return c
    cargo = shutil.which("cargo")
    assert cargo, "no contactlab binary and no cargo to build one: set CONTACTLAB_CLI"
    subprocess.run(
        [cargo, "build", "-j2", "-q", "-p", "contactlab-experiments", "--bin", "contactlab"],
        cwd=REPO,
        check=True,
    )
    for c in _cli_candidates():
        if c.is_file():
            return c
    raise AssertionError("cargo built contactlab but it is not where expected")


def run_cli(cli: Path, path: Path, formulation: str, optimizer: str, tol: float, max_iter: int):
    """`contactlab solve PATH --json` with a pair, as a dict."""
    out = subprocess.run(
        [
            str(cli), "solve", str(path), "--json",
            "--formulation", formulation, "--optimizer", optimizer,
            "--tol", repr(tol), "--max-iter", str(max_iter),
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def save_npy(folder: Path, problem) -> Path:
    """A problem as the `.npy` folder the command line reads."""
    folder.mkdir(parents=True, exist_ok=True)
    if hasattr(problem, "M"):
        # A file holds the rigid problem: its offset carries the targets (`w - t`); SAP's own
        # model (`phi0`, `dt`) is not part of the format.
        w = problem.w - problem.target
        fields = {"M": problem.M, "H": problem.H, "f": problem.f, "w": w, "mu": problem.mu}
    else:
        fields = {"W": problem.W, "q": problem.q, "mu": problem.mu}
    for k, v in fields.items():
        np.save(folder / f"{k}.npy", v)
    return folder


def balls_xml(n: int, jacobian: str = "auto", cone: str = "elliptic", extra: str = "") -> str:
    """`n` free spheres packed in layers in a walled box, elliptic cones, condim 3."""
    side = int(np.ceil(np.sqrt(n / 2)))
    bodies = []
    for i in range(n):
        layer, k = divmod(i, side * side)
        x, y = divmod(k, side)
        px = -0.19 * (side - 1) / 2 + 0.19 * x + 0.01 * layer
        py = -0.19 * (side - 1) / 2 + 0.19 * y
        pz = 0.1 + 0.19 * layer
        bodies.append(
            f'<body pos="{px:.3f} {py:.3f} {pz:.3f}"><freejoint/>'
            f'<geom type="sphere" size="0.1" mass="1"/></body>'
        )
    half = 0.1 * side + 0.05
    walls = "".join(
        f'<geom type="box" size="{sx} {sy} 0.5" pos="{px} {py} 0.5"/>'
        for sx, sy, px, py in [
            (0.02, half, half + 0.02, 0), (0.02, half, -half - 0.02, 0),
            (half, 0.02, 0, half + 0.02), (half, 0.02, 0, -half - 0.02),
        ]
    )
    return f"""
<mujoco>
  <option timestep="0.005" cone="{cone}" jacobian="{jacobian}"/>
  <default><geom condim="3" friction="0.6 0.005 0.0001"/></default>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    {walls}
    {''.join(bodies)}
    {extra}
  </worldbody>
</mujoco>"""


def settled(xml: str, steps: int = 60):
    """A model and its state after `steps` steps and `mj_forward`."""
    import mujoco
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for _ in range(steps):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    return m, d
