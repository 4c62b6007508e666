"""Robot models people simulate with MuJoCo, loaded unchanged from their packages (dm_control:
Apache-2.0; gymnasium-robotics: MIT, with the Fetch and Shadow notes of its `assets/LICENSE.md`),
switched to elliptic cones and stepped to a state with contacts."""

import importlib
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")


def _dm_control(name, **kwargs):
    pytest.importorskip("dm_control")
    from dm_control.suite import common

    module = importlib.import_module(f"dm_control.suite.{name}")
    if hasattr(module, "make_model"):
        made = module.make_model(**kwargs)
        xml, assets = made if isinstance(made, tuple) else (made, common.ASSETS)
    else:
        xml, assets = common.read_model(f"{name}.xml"), common.ASSETS
    return mujoco.MjModel.from_xml_string(xml, assets)


def _gymnasium_robotics(path):
    gr = pytest.importorskip("gymnasium_robotics")
    root = os.path.join(os.path.dirname(gr.__file__), "envs", "assets")
    return mujoco.MjModel.from_xml_path(os.path.join(root, path))


#: Each family's model, built as its package builds it.
MODELS = {
    "manipulator": lambda: _dm_control("manipulator", use_peg=False, insert=False),
    "stacker": lambda: _dm_control("stacker", n_boxes=4),
    "humanoid": lambda: _dm_control("humanoid"),
    "quadruped": lambda: _dm_control(
        "quadruped", floor_size=10, terrain=False, rangefinders=False, walls_and_ball=False
    ),
    "cheetah": lambda: _dm_control("cheetah"),
    "shadow_hand": lambda: _gymnasium_robotics("hand/manipulate_block.xml"),
    "adroit": lambda: _gymnasium_robotics("adroit_hand/adroit_relocate.xml"),
    "fetch": lambda: _gymnasium_robotics("fetch/pick_and_place.xml"),
    "kitchen": lambda: _gymnasium_robotics("kitchen_franka/kitchen_assets/kitchen_env_model.xml"),
}


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
