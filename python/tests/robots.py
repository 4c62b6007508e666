"""Robot models people simulate with MuJoCo, loaded unchanged from their packages (dm_control:
Apache-2.0; gymnasium-robotics: MIT, with the Fetch and Shadow notes of its `assets/LICENSE.md`),
switched to elliptic cones and stepped to a state with contacts."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")


#: The exporter of `data/mujoco_robots/` (`python/scripts/export_mujoco_robots.py`) holds the
#: models' loaders; the tests share them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import export_mujoco_robots as exporter  # noqa: E402


def _skipping(name):
    """The loader of `name`, skipping the test when its package is missing."""

    def load():
        pytest.importorskip(exporter.PACKAGES[name])
        return exporter.MODELS[name]()

    return load


#: Each family's model, built as its package builds it.
MODELS = {name: _skipping(name) for name in exporter.MODELS}


def state(name, seconds=1.0):
    """The model `name` with elliptic cones, from its first keyframe (or its initial state)
    after `seconds` of MuJoCo's own steps without control, then `mj_forward`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = MODELS[name]()
    m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    for _ in range(int(seconds / m.opt.timestep)):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    return m, d


def jacobian(m, d):
    """`efc_J` as a dense array, expanded by hand from either layout."""
    nefc, nv = d.nefc, m.nv
    if mujoco.mj_isSparse(m):
        J = np.zeros((nefc, nv))
        for i in range(nefc):
            a, n = d.efc_J_rowadr[i], d.efc_J_rownnz[i]
            for k in range(a, a + n):
                J[i, d.efc_J_colind[k]] += d.efc_J[k]
        return J
    return np.asarray(d.efc_J[: nefc * nv]).reshape(nefc, nv).copy()
