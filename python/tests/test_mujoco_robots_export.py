"""The robot set `data/mujoco_robots/` against the state it was exported from: reading a file
back gives the same `W` and free velocity as `contactlab.mujoco.problem(...).to_local()` on the
exporter's state, every row in MuJoCo's order, and MuJoCo's answer beside it is MuJoCo's."""

import json

import numpy as np
import pytest

import contactlab
from conftest import DATA
from robots import exporter, mujoco

SET = DATA / "mujoco_robots"
INDEX = json.loads((SET / "index.json").read_text())


def _relative(a, b):
    """`max |a - b| / max |b|` (absolute where `b` is zero)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1.0e-300)) if b.size else 0.0


@pytest.mark.parametrize("entry", INDEX, ids=[e["name"] for e in INDEX])
def test_a_file_read_back_is_the_problem_of_its_state(entry):
    pytest.importorskip(entry["package"])
    m, d = exporter.state(entry["model"], entry["seconds"], entry["control_seed"])
    assert exporter.problem_name(entry["model"], entry["seconds"], entry["control_seed"]) == entry[
        "name"
    ]
    want = contactlab.mujoco.problem(m, d).to_local()
    read = contactlab.read(SET / "global" / f"{entry['name']}.json")
    assert isinstance(read, contactlab.GeneralizedProblem)
    got = read.to_local()
    assert got.constraints == want.constraints
    assert read.num_dofs == entry["dofs"] == m.nv
    assert _relative(got.W, want.W) <= 1e-10
    # The rigid targets ride in `w`: the free velocity q = J v* - t is the bridge's.
    assert _relative(got.q, want.q) <= 1e-10
    assert got.q.size == entry["rows"] == d.nefc


@pytest.mark.parametrize("entry", INDEX, ids=[e["name"] for e in INDEX])
def test_mujocos_answer_beside_a_file_is_mujocos_at_its_state(entry):
    pytest.importorskip(entry["package"])
    m, d = exporter.state(entry["model"], entry["seconds"], entry["control_seed"])
    side = json.loads((SET / "mujoco" / f"{entry['name']}.json").read_text())
    mj = contactlab.mujoco.impulses(m, d)
    assert _relative(side["r"], mj["r"]) <= 1e-10
    assert _relative(side["regulariser_R"], mj["R"]) <= 1e-10
    assert len(side["row_kinds"]) == d.nefc
    # MuJoCo's step lands where the exported problem says its impulses take it, and the
    # velocities beside the file are that step's, relative to the rigid targets.
    assert side["checks"]["abs_residual_inf"] <= 1e-12
    J = contactlab.mujoco.jacobian(m, d)
    target = contactlab.mujoco.problem(m, d).target
    mujoco.mj_step(m, d)
    assert _relative(side["u"], J @ d.qvel - target) <= 1e-10


def test_the_set_has_every_kind_mujocos_robots_show():
    rows = set()
    for e in INDEX:
        rows |= set(e["rows_by_kind"])
    assert {
        "equality",
        "limit",
        "friction_loss",
        "contact (condim 1)",
        "contact (condim 3)",
        "contact (condim 4)",
    } <= rows
