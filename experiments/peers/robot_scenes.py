"""Robot scenes of issue 42's robot study, stepped by MuJoCo (and later by our pairs through a
stepper with `mujoco.mj_step`'s signature), with per-step rows and per-run metrics.

Usage:
  python3 robot_scenes.py [--scenes a,b] [--configs default,best] [--small] [--out FILE.json]
  python3 robot_scenes.py --check   # every scene's CI version with MuJoCo "default"; exit 1 if a
                                    # scene fails to load or produces NaN

Every model is loaded offline from the installed pip packages dm_control and gymnasium_robotics
(as python/scripts/export_mujoco_robots.py does) and its cone switched to elliptic
(`model.opt.cone`) in every configuration but the pyramidal ones of the grid. The scenes and the
question each asks:
  * jaco_grasp: does the Kinova Jaco hand (dm_control/third_party/kinova/jaco_hand.xml, fixed in
    the world, fingers pointing up) hold a vertical 0.2 kg cylinder against gravity by friction
    alone for 10 s? Actuators added with MjSpec as dm_control's jaco_hand.py adds them: velocity
    servos kv 10, ctrl in [-5, 5] rad/s, force in [-1, 1] N m; closing at 5 rad/s so a blocked
    finger squeezes with its saturated 1 N m (a constant grip, the hand's own mechanism).
  * adroit_grasp: does the Adroit hand (gymnasium_robotics adroit_hand/adroit_relocate.xml) hold
    its ball in a palm-down power grasp with `noslip_iterations` 0 (the shipped 20 hides slip)?
    The ball (0.18 kg) starts 1 mm under the palm box, 5 cm towards the fingers; the finger
    servos (kp 1 N m/rad) ramp to ADROIT_CLOSE; noslip 0 is the scene's base in every
    configuration (so "default" is the shipped model, elliptic, noslip 0).
  * fetch_pinch: does Fetch (pick_and_place.xml, the mocap weld drives the arm) keep its 2 kg block
    in a two-finger pinch while lifting it? Setup as gymnasium_robotics' fetch_env.py and
    pick_and_place.py do it: initial qpos (slides 0.405, 0.48, 0), weld relpose reset, gripper
    quat (1, 0, 1, 0), its 200 setup steps; then (still gravity off, before the closing second)
    250 steps moving the grip site 1.5 cm above the centre of the block, which rests on the
    table right under it; gripper closed by its position servos (ctrl 0, kp 30000: fetch_env's
    action -1).
  * manipulator_pinch: does dm_control's manipulator (bring_ball variant), hand pointing down and
    the ball at its `grasp` site at (x, z) = (0.25, 0.15) m by IK, keep the ball pinched while
    lifting it? The lift is joint-space, J^+ (0, 10 cm, 0) at the start. Arm joints held by a PD
    law with gravity compensation through its torque motors (clipped to their ranges), grasp
    tendon motor at +1 (closing).
  * humanoid_fall, humanoid_cmu_fall: dm_control humanoid.xml / humanoid_CMU.xml from the initial
    pose (qpos0), no control, 3 s (down in about 1 s): impacts, contacts, joint limits, condim-1
    self-contacts (humanoid.xml only); energy.
  * quadruped: dm_control quadruped (walk variant), upright at the lowest height without
    contact: 2 s standing (servos hold the initial pose; the issue's 10 s shortened to keep the
    run at 10 s),
    then an open-loop trot: each leg's lift and extend targets t0 + 0.3 sin(2 pi t + phase_leg)
    (extend a quarter period behind lift so the foot loops), yaw held; trot phases 0 for front
    left and back right, pi for front right and back left, 1 Hz; targets clipped to the ctrl
    ranges. Foot slip, base drift (the gait is open loop: it mostly trots in place).
  * stacker_tower: dm_control stacker with four boxes stacked at x = 0.25 (planar), the arm held
    upright by PD: tower drift over 10 s.
Grasp and pinch scenes: the grasp is found with MuJoCo at its best settings (solref (2 dt, 1) on
every geom and explicit pair, impratio 10, noslip 10, elliptic) with gravity off for 1 s while
the fingers close (arm around the object), that state (qpos, qvel, act, ctrl, mocap) is kept in
the process, and every run starts from it with gravity on; pinch scenes then lift the hand 10 cm
along a cosine profile over 2 s and hold. Slip is measured relative to the hand: the object's
position in the hand body's frame; `slip_um_s` is the speed of its least-squares line from
SETTLE_S = 0.5 s (2.5 s in the pinch scenes: after the lift) to the end (the grasps chatter by
up to half a millimetre from step to step, so two end points would measure the chatter),
`slip_jitter_mm` the largest distance from that line, `slip_final_mm` the displacement of its
mean over the last 0.1 s from the start, `rotation_deg` the angle of its rotation in the hand's
frame.

Other metrics, per run (Recorder.summary): penetration_max_m, the largest -dist over contacts
(`data.contact.dist`); limit_violation_max (rad or m), the largest excess of a limited hinge or
slide joint over its range; equality_violation_max, the largest |efc_pos| of equality rows
(MuJoCo's rows of the step, before integration, so one step behind); energy_initial_J,
energy_final_J and energy_gain_max_J (largest rise above the start) from mjENBL_ENERGY
(potential + kinetic); drift_m, the largest end-to-start displacement of the scene's drift bodies
(humanoid torso/root, quadruped torso, the four boxes); foot_slip_mm_s, the mean horizontal speed
of the quadruped's toe geoms while they touch something; contacts_median / contacts_max and
constraint_kinds (equality, limit, friction_loss, contact condim k). Contacts' condim: Jaco
fingers 4 (the cylinder is given condim 4 too; palm 3, so every hand-cylinder contact is 4);
Adroit ball 4 (finger-finger contacts 1); Fetch fingers 4 (block-table 3); manipulator, stacker,
quadruped 3; humanoid 3 with the floor and 1 between its limbs; CMU humanoid 3. The Jaco cylinder
(radius 2 cm, half-height 4 cm) takes the hand file's contact parameters (solref 0.01, solimp
0.99 0.999 0.001) and its centre is 1 cm above the grip site so it is clear of the palm.

MuJoCo configurations (`MJ_CONFIGS`): "default" (the model as shipped, elliptic), "best" (as
fidelity.py's MJ_BEST), and the creep-versus-settings grid of google-deepmind/mujoco#3328 (cone x
impratio x noslip, the model's own solref), named like fidelity.py's MJ_CONFIGS. For the four
hold scenes "default" equals "elliptic-impratio1-noslip0" (each ships impratio 1). "pair" is
what our pairs get: the model's own solref/solimp, noslip 0, elliptic. ContactBench (Le Lidec
et al., T-RO 2024) asks the same questions on re-implemented models; these are MuJoCo's own.
"""
import argparse
import importlib
import json
import math
import os
import statistics
import sys
import time
import warnings

import numpy as np

import mujoco

CLOSE_S = 1.0        # gravity-off closing time of the grasp finder (s)
LIFT_M, LIFT_S = 0.10, 2.0  # pinch lift: height (m) and time (s), cosine profile
SETTLE_S = 0.5       # creep rates are taken after this, after the lift in pinch scenes (or
                     # after a quarter of a short run)

MJ_CONFIGS = {
    # name: (cone, impratio, noslip_iterations, time constant); None: as shipped.
    "default": ("elliptic", None, None, None),
    "best": ("elliptic", 10.0, 10, "2dt"),
    "pair": ("elliptic", None, 0, None),
}
for _cone in ("elliptic", "pyramidal"):
    for _imp in (1, 10):
        for _ns in (0, 10):
            MJ_CONFIGS[f"{_cone}-impratio{_imp}-noslip{_ns}"] = (_cone, float(_imp), _ns, None)
GRID = [k for k in MJ_CONFIGS if "impratio" in k]
MJ_BEST = "best"


# ----------------------------------------------------------------------------- loading
def quiet(f, *a, **k):
    """Call f with MuJoCo's deprecation warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


def dm_xml(name, **kwargs):
    """A dm_control suite model's (xml, assets), built as its task module builds it."""
    from dm_control.suite import common
    module = importlib.import_module(f"dm_control.suite.{name}")
    if hasattr(module, "make_model"):
        made = module.make_model(**kwargs)
        return made if isinstance(made, tuple) else (made, common.ASSETS)
    return common.read_model(f"{name}.xml"), common.ASSETS


def dm_model(name, **kwargs):
    """A dm_control suite model."""
    xml, assets = dm_xml(name, **kwargs)
    return quiet(mujoco.MjModel.from_xml_string, xml, assets)


def gr_path(rel):
    """Path of a gymnasium_robotics asset."""
    import gymnasium_robotics as gr
    return os.path.join(os.path.dirname(gr.__file__), "envs", "assets", rel)


def jaco_model():
    """The Jaco hand with a 0.2 kg vertical cylinder and dm_control's velocity servos (MjSpec)."""
    import dm_control
    root = os.path.dirname(dm_control.__file__)
    path = os.path.join(root, "third_party", "kinova", "jaco_hand.xml")
    spec = mujoco.MjSpec.from_file(path)
    for j in ("finger_1", "finger_2", "finger_3"):
        a = spec.add_actuator(name=j, target=j, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        a.set_to_velocity(kv=10.0)
        a.ctrllimited, a.ctrlrange = True, [-5.0, 5.0]
        a.forcelimited, a.forcerange = True, [-1.0, 1.0]
    body = spec.worldbody.add_body(name="cylinder", pos=[0.0, 0.0, 0.2])
    body.add_freejoint(name="cylinder")
    body.add_geom(name="cylinder", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.02, 0.04, 0],
                  mass=0.2, condim=4, solref=[0.01, 1], solimp=[0.99, 0.999, 0.001, 0.5, 2])
    return spec.compile()


def apply_config(m, config, base=None):
    """Set a MuJoCo configuration of MJ_CONFIGS on model m in place (base: scene overrides)."""
    for k, v in (base or {}).items():
        setattr(m.opt, k, v)
    cone, imp, noslip, tc = MJ_CONFIGS[config]
    m.opt.cone = getattr(mujoco.mjtCone, f"mjCONE_{cone.upper()}")
    if imp is not None:
        m.opt.impratio = imp
    if noslip is not None:
        m.opt.noslip_iterations = noslip
    if tc == "2dt":
        m.geom_solref[:] = (2 * m.opt.timestep, 1.0)
        if m.npair:
            m.pair_solref[:] = (2 * m.opt.timestep, 1.0)
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    return m


# ----------------------------------------------------------------------------- state
STATE_FIELDS = ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat")


def snapshot(d):
    """A copy of the fields that define a scene's start state."""
    return {k: getattr(d, k).copy() for k in STATE_FIELDS}


def restore(m, d, s):
    """Set a snapshot into d and run mj_forward."""
    for k, v in s.items():
        getattr(d, k)[:] = v
    d.time = 0.0
    mujoco.mj_forward(m, d)


def smooth_step(t, t1):
    """Cosine ramp from 0 at t = 0 to 1 at t = t1."""
    s = min(max(t / t1, 0.0), 1.0)
    return 0.5 - 0.5 * math.cos(math.pi * s)


# ----------------------------------------------------------------------------- recorder
KIND_NAMES = {int(mujoco.mjtConstraint.mjCNSTR_EQUALITY): "equality",
              int(mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF): "friction_loss",
              int(mujoco.mjtConstraint.mjCNSTR_FRICTION_TENDON): "friction_loss",
              int(mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT): "limit",
              int(mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON): "limit"}
LIMITED = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


def limited_joints(m):
    """qpos addresses and ranges of the limited hinge and slide joints."""
    j = [i for i in range(m.njnt) if m.jnt_limited[i] and int(m.jnt_type[i]) in LIMITED]
    return np.array([m.jnt_qposadr[i] for i in j], dtype=int), m.jnt_range[j].reshape(-1, 2)


def constraint_kinds(d):
    """The constraint kinds of d's rows, contacts by condim."""
    kinds = {KIND_NAMES[int(t)] for t in d.efc_type[:d.nefc] if int(t) in KIND_NAMES}
    c = d.contact
    kinds |= {f"contact condim {int(k)}" for k, a in zip(c.dim[:d.ncon], c.efc_address[:d.ncon])
              if a >= 0}
    return kinds


def rel_pose(d, hand, obj):
    """The object's position and rotation in the hand body's frame."""
    Rh = d.xmat[hand].reshape(3, 3)
    return Rh.T @ (d.xpos[obj] - d.xpos[hand]), Rh.T @ d.xmat[obj].reshape(3, 3)


def rot_deg(R):
    """The angle of a rotation matrix (degrees)."""
    return math.degrees(math.acos(min(1.0, max(-1.0, (np.trace(R) - 1.0) / 2.0))))


class Recorder:
    """Per-step samples of a scene's run and their per-run metrics."""

    def __init__(self, scene, m):
        """Resolve the scene's bodies and the model's limited joints."""
        self.scene, self.dt = scene, m.opt.timestep
        self.hand = m.body(scene.hand).id if scene.hand else None
        self.obj = m.body(scene.obj).id if scene.obj else None
        self.drift = [m.body(b).id for b in scene.drift_bodies]
        self.feet = {m.geom(g).id: m.geom(g).bodyid[0] for g in scene.feet}
        self.lim_adr, self.lim_rng = limited_joints(m)
        self.eq_rows = int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        keys = ("ncon", "pen", "lim", "eq", "energy", "p", "R", "x", "foot", "nan")
        self.s = {k: [] for k in keys}
        self.kinds = set()

    def record(self, m, d):
        """Sample d after a step."""
        s, n = self.s, d.ncon
        s["nan"].append(not (np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all()))
        s["ncon"].append(n)
        s["pen"].append(max(0.0, -float(d.contact.dist[:n].min())) if n else 0.0)
        q = d.qpos[self.lim_adr]
        over = np.maximum(self.lim_rng[:, 0] - q, q - self.lim_rng[:, 1])
        s["lim"].append(float(np.maximum(over, 0.0).max(initial=0.0)))
        eq = d.efc_type[:d.nefc] == self.eq_rows
        s["eq"].append(float(np.abs(d.efc_pos[:d.nefc][eq]).max(initial=0.0)))
        s["energy"].append(float(d.energy.sum()))
        self.kinds |= constraint_kinds(d)
        if self.hand is not None:
            p, R = rel_pose(d, self.hand, self.obj)
            s["p"].append(p)
            s["R"].append(R)
        if self.drift:
            s["x"].append(d.xpos[self.drift].copy())
        if self.feet:
            s["foot"].append(self.foot_slip(m, d))

    def foot_slip(self, m, d):
        """Horizontal speeds of the feet touching the floor this step."""
        out, v = [], np.zeros(6)
        touching = {int(g) for pair in d.contact.geom[:d.ncon] for g in pair} & set(self.feet)
        for g in touching:
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_GEOM, g, v, 0)
            out.append(float(np.linalg.norm(v[3:5])))
        return out

    def settle_index(self):
        """The sample after which creep is measured."""
        n = len(self.s["ncon"])
        return min(int(round(self.scene.settle_s / self.dt)), n // 4)

    def summary(self):
        """Per-run metrics (units in the names)."""
        s = self.s
        out = {"steps": len(s["ncon"]), "nan": bool(any(s["nan"])),
               "contacts_median": float(np.median(s["ncon"])) if s["ncon"] else 0.0,
               "contacts_max": int(max(s["ncon"], default=0)),
               "constraint_kinds": sorted(self.kinds),
               "penetration_max_m": float(max(s["pen"], default=0.0)),
               "limit_violation_max": float(max(s["lim"], default=0.0)),
               "equality_violation_max": float(max(s["eq"], default=0.0))}
        if s["energy"]:
            e = np.asarray(s["energy"])
            out.update(energy_initial_J=float(e[0]), energy_final_J=float(e[-1]),
                       energy_gain_max_J=float((e - e[0]).max()))
        if s["p"]:
            out.update(self.slip())
        if s["x"]:
            x = np.asarray(s["x"])
            out["drift_m"] = float(np.linalg.norm(x[-1] - x[0], axis=-1).max())
            out["drift_max_m"] = float(np.linalg.norm(x - x[0], axis=-1).max())
        if self.feet:
            f = [v for row in s["foot"] for v in row]
            out["foot_slip_mm_s"] = float(np.mean(f) * 1e3) if f else None
        return out

    def slip(self):
        """Object creep relative to the hand: fitted rate after settling, displacement, rotation."""
        P, R, k = np.asarray(self.s["p"]), self.s["R"], self.settle_index()
        t = np.arange(len(P) - k) * self.dt
        if len(t) > 1:
            A = np.vstack([t, np.ones_like(t)]).T
            fit, *_ = np.linalg.lstsq(A, P[k:], rcond=None)
            rate, jitter = np.linalg.norm(fit[0]), np.linalg.norm(P[k:] - A @ fit, axis=1).max()
        else:
            rate = jitter = float("nan")
        tail = P[-max(1, int(round(0.1 / self.dt))):].mean(axis=0)
        return {"slip_um_s": float(rate * 1e6), "slip_jitter_mm": float(jitter * 1e3),
                "slip_final_mm": float(np.linalg.norm(tail - P[0]) * 1e3),
                "slip_max_mm": float(np.linalg.norm(P - P[0], axis=1).max() * 1e3),
                "rotation_deg": rot_deg(R[-1] @ R[0].T)}


# ----------------------------------------------------------------------------- scenes
class Scene:
    """A robot scene: its model, start state, control and recorder (see the module docstring)."""
    name = question = ""
    duration, ci_duration = 10.0, 0.2
    hand = obj = None
    drift_bodies, feet = (), ()
    opt_base = {}          # scene overrides of the shipped options, in every configuration
    settle_s = SETTLE_S    # creep rates are taken after this
    grid = False           # run the mujoco#3328 grid on this scene
    _cache = {}

    def load(self):
        """The model as shipped (before the configuration)."""
        raise NotImplementedError

    def init(self, m, d):
        """Put d in the scene's initial state (default: the model's qpos0)."""
        mujoco.mj_forward(m, d)

    def control(self, m, d, t):
        """Set ctrl / mocap before the step at time t (default: nothing)."""

    def start_state(self):
        """The scene's start state, computed once per process."""
        if self.name not in Scene._cache:
            m = self.load()
            apply_config(m, "default", self.opt_base)
            d = mujoco.MjData(m)
            self.init(m, d)
            Scene._cache[self.name] = snapshot(d)
        return Scene._cache[self.name]

    def model(self, config):
        """(model, data) in a MuJoCo configuration (or "pair") at the scene's start state."""
        state = self.start_state()
        m = apply_config(self.load(), config, self.opt_base)
        d = mujoco.MjData(m)
        restore(m, d, state)
        return m, d

    def recorder(self, m):
        """A fresh recorder for one run."""
        return Recorder(self, m)


class HoldScene(Scene):
    """A grasp or pinch: the grasp found at MuJoCo's best with gravity off, then gravity on."""
    grid = True
    duration = 10.0

    def place(self, m, d):
        """Put the hand and object in place before the fingers close (gravity off)."""
        mujoco.mj_forward(m, d)

    def start_state(self):
        """The closed grasp after CLOSE_S s at MuJoCo's best, gravity off, computed once."""
        if self.name not in Scene._cache:
            m = apply_config(self.load(), "best", self.opt_base)
            gravity = m.opt.gravity.copy()
            m.opt.gravity[:] = 0.0
            d = mujoco.MjData(m)
            self.place(m, d)
            for k in range(int(round(CLOSE_S / m.opt.timestep))):
                self.control(m, d, -CLOSE_S + k * m.opt.timestep)
                mujoco.mj_step(m, d)
            m.opt.gravity[:] = gravity
            self.grasped(m, d)
            Scene._cache[self.name] = snapshot(d)
        return Scene._cache[self.name]

    def grasped(self, m, d):
        """Hook after the grasp is found (pinch scenes plan their lift here)."""


class JacoGrasp(HoldScene):
    """Kinova Jaco hand closed on a vertical 0.2 kg cylinder."""
    name, question = "jaco_grasp", "Does the Jaco hand hold a 0.2 kg cylinder by friction for 10 s?"
    hand, obj = "hand", "cylinder"

    def load(self):
        """The hand with its cylinder and servos."""
        return jaco_model()

    def place(self, m, d):
        """Cylinder axis vertical through the grip site, its bottom clear of the palm."""
        mujoco.mj_forward(m, d)
        adr = m.jnt_qposadr[m.joint("cylinder").id]
        d.qpos[adr:adr + 3] = d.site("gripsite").xpos + np.array([0.0, 0.0, JACO_LIFT])
        d.qpos[adr + 3:adr + 7] = (1.0, 0.0, 0.0, 0.0)
        mujoco.mj_forward(m, d)

    def control(self, m, d, t):
        """Velocity servos closing at 5 rad/s: a blocked finger pushes with its saturated 1 N m."""
        d.ctrl[:3] = 5.0


JACO_LIFT = 0.01  # cylinder centre above the grip site (m)


class AdroitGrasp(HoldScene):
    """Adroit hand closed on its ball in a palm-down power grasp, noslip 0."""
    name = "adroit_grasp"
    question = "Does the Adroit hand hold its ball against gravity without noslip?"
    hand, obj = "palm", "Object"
    opt_base = {"noslip_iterations": 0}

    def load(self):
        """adroit_relocate.xml as shipped."""
        return quiet(mujoco.MjModel.from_xml_path, gr_path("adroit_hand/adroit_relocate.xml"))

    def place(self, m, d):
        """Arm servos hold the initial pose; the ball just under the palm, towards the fingers."""
        mujoco.mj_forward(m, d)
        palm = m.geom("C_palm0").id
        below = m.geom_size[palm, 1] + m.geom("sphere").size[0] + 1e-3
        c = d.geom_xpos[palm] + np.array([0.0, ADROIT_FORWARD, -below])
        obj = [m.jnt_qposadr[m.joint(f"OBJT{a}").id] for a in "xyz"]
        d.qpos[obj] = c - m.body("Object").pos
        mujoco.mj_forward(m, d)

    def control(self, m, d, t):
        """Arm held; finger servos ramp over the closing second to ADROIT_CLOSE, then hold."""
        s = smooth_step(t + CLOSE_S, 0.8 * CLOSE_S)
        for name, target in ADROIT_CLOSE.items():
            d.ctrl[m.actuator(name).id] = s * target


ADROIT_FORWARD = 0.05  # ball centre ahead of the palm box centre, towards the fingers (m)
# Closed targets (rad) of the finger servos: every flexion joint to 1.6 (its upper range), the
# thumb opposed (THJ4 1, THJ3 1.3, THJ0 -0.5); spread and wrist at 0.
ADROIT_CLOSE = {f"A_{f}J{j}": 1.6 for f in ("FF", "MF", "RF", "LF") for j in (2, 1, 0)}
ADROIT_CLOSE.update({"A_THJ4": 1.0, "A_THJ3": 1.3, "A_THJ1": 0.5, "A_THJ0": -0.5})


class FetchPinch(HoldScene):
    """Fetch pick_and_place: the block pinched by the two fingers, lifted by the mocap weld."""
    name = "fetch_pinch"
    question = "Does Fetch keep its 2 kg block in a two-finger pinch while lifting it 10 cm?"
    hand, obj = "robot0:gripper_link", "object0"
    settle_s = LIFT_S + SETTLE_S

    def load(self):
        """The model with fetch_env's reset_mocap_welds applied (identity weld relpose)."""
        m = quiet(mujoco.MjModel.from_xml_path, gr_path("fetch/pick_and_place.xml"))
        m.eq_data[0, 3:10] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        return m

    def place(self, m, d):
        """fetch_env.py's setup, then the grip site moved onto the block (gravity off)."""
        # The torso lift joint starts at its lower limit: qpos0's 0.0065 is outside its range.
        for j, v in (("robot0:slide0", 0.405), ("robot0:slide1", 0.48), ("robot0:slide2", 0.0),
                     ("robot0:torso_lift_joint", 0.0386)):
            d.qpos[m.jnt_qposadr[m.joint(j).id]] = v
        mujoco.mj_forward(m, d)
        d.mocap_pos[0] = d.site("robot0:grip").xpos + (-0.498, 0.005, -0.431 + 0.2)
        d.mocap_quat[0] = np.array([1.0, 0.0, 1.0, 0.0]) / math.sqrt(2.0)
        self.steps(m, d, 200, FETCH_OPEN)  # fetch_env: 10 x 20 substeps
        block = np.array([d.site("robot0:grip").xpos[0], d.site("robot0:grip").xpos[1], 0.425])
        d.mocap_pos[0] += block + (0.0, 0.0, FETCH_ABOVE) - d.site("robot0:grip").xpos
        self.steps(m, d, 250, FETCH_OPEN)
        adr = m.jnt_qposadr[m.joint("object0:joint").id]
        d.qpos[adr:adr + 7] = (*block, 1.0, 0.0, 0.0, 0.0)
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)

    @staticmethod
    def steps(m, d, n, grip):
        """n steps with the gripper servos at grip."""
        for _ in range(n):
            d.ctrl[:] = grip
            mujoco.mj_step(m, d)

    def grasped(self, m, d):
        """The mocap height the lift starts from."""
        self.z0 = float(d.mocap_pos[0, 2])

    def control(self, m, d, t):
        """Gripper servos closed (ctrl 0, as fetch_env's action -1); the mocap lifts after t = 0."""
        d.ctrl[:] = 0.0
        if t >= 0.0:
            d.mocap_pos[0, 2] = self.start_mocap_z() + LIFT_M * smooth_step(t, LIFT_S)

    def start_mocap_z(self):
        """The mocap height of the start state."""
        return float(self.start_state()["mocap_pos"][0, 2])


FETCH_OPEN = 0.05    # gripper servo target when open (the finger joints' upper range, m)
FETCH_ABOVE = 0.015  # grip site above the block centre (m): the finger boxes clear the table


ARM = ("arm_root", "arm_shoulder", "arm_elbow", "arm_wrist")  # dm_control's planar arm
ARM_KP, ARM_KD = np.array([60.0, 40.0, 20.0, 10.0]), np.array([6.0, 4.0, 2.0, 1.0])


def arm_dofs(m):
    """dof addresses of the planar arm's joints."""
    return np.array([m.jnt_dofadr[m.joint(n).id] for n in ARM])


def arm_hold(m, d, target):
    """PD on the arm joints with gravity compensation (qfrc_bias) through the motors, clipped."""
    a = arm_dofs(m)
    tau = ARM_KP * (target - d.qpos[a]) - ARM_KD * d.qvel[a] + d.qfrc_bias[a]
    for k, n in enumerate(("root", "shoulder", "elbow", "wrist")):
        i = m.actuator(n).id
        d.ctrl[i] = np.clip(tau[k] / m.actuator_gear[i, 0], -1.0, 1.0)


def arm_jacobian(m, d):
    """Rows x, z of the grasp site and the hand's pitch over the arm dofs."""
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    jp, jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mujoco.mj_jacSite(m, d, jp, jr, m.site("grasp").id)
    a = arm_dofs(m)
    return np.vstack([jp[0, a], jp[2, a], -jr[1, a]])


def arm_ik(m, d, x, z, guess=(0.5, 1.0, 1.0, 0.5)):
    """Arm angles putting the grasp site at (x, z) with the hand pointing down (Gauss-Newton)."""
    a, h, s = arm_dofs(m), m.body("hand").id, m.site("grasp").id
    d.qpos[a] = guess
    for _ in range(100):
        J = arm_jacobian(m, d)
        zax = d.xmat[h].reshape(3, 3)[:, 2]
        e = np.array([d.site_xpos[s][0] - x, d.site_xpos[s][2] - z, math.atan2(zax[0], -zax[2])])
        d.qpos[a] -= np.linalg.lstsq(J, e, rcond=None)[0]
    d.qpos[a] = (d.qpos[a] + np.pi) % (2 * np.pi) - np.pi
    return d.qpos[a].copy()


class ManipulatorPinch(HoldScene):
    """dm_control manipulator (bring_ball): hand down, the ball pinched at its grasp site."""
    name = "manipulator_pinch"
    question = "Does dm_control's manipulator keep the ball pinched while lifting it 10 cm?"
    hand, obj = "hand", "ball"
    settle_s = LIFT_S + SETTLE_S
    site_xz = (0.25, 0.15)

    def load(self):
        """manipulator.xml as dm_control's bring_ball builds it."""
        return dm_model("manipulator", use_peg=False, insert=False)

    def place(self, m, d):
        """Arm by IK (hand down, grasp site at site_xz), the ball at the grasp site."""
        self._hold = arm_ik(m, d, *self.site_xz)
        mujoco.mj_forward(m, d)
        p = d.site("grasp").xpos
        for j, v in (("ball_x", p[0]), ("ball_z", p[2])):
            d.qpos[m.jnt_qposadr[m.joint(j).id]] = v
        mujoco.mj_forward(m, d)

    def plan(self, m, d):
        """(start arm angles, joint-space lift): the lift is J^+ (0, LIFT_M, 0) at the start."""
        st = self.start_state()
        q0 = st["qpos"][[m.jnt_qposadr[m.joint(n).id] for n in ARM]]
        dd = mujoco.MjData(m)
        dd.qpos[:] = st["qpos"]
        return q0, np.linalg.pinv(arm_jacobian(m, dd)) @ np.array([0.0, LIFT_M, 0.0])

    def control(self, m, d, t):
        """Grasp tendon motor at +1 (closing); arm held at the placed pose, lifted after t = 0."""
        d.ctrl[m.actuator("grasp").id] = MANIP_GRASP
        if t < 0.0:
            arm_hold(m, d, self._hold)
            return
        if getattr(self, "_plan_m", None) is not m:
            self._plan_m, self._plan = m, self.plan(m, d)
        q0, dq = self._plan
        arm_hold(m, d, q0 + smooth_step(t, LIFT_S) * dq)


MANIP_GRASP = 1.0  # the grasp tendon motor's control while pinching


class HumanoidFall(Scene):
    """dm_control humanoid from its initial pose, no control: it falls."""
    name = "humanoid_fall"
    question = "Falling humanoid, no control: energy, penetration, joint limits, self-contacts?"
    xml = "humanoid"
    duration, ci_duration = 3.0, 0.5   # down by about 1 s; the CI version reaches the floor
    drift_bodies = ("torso",)

    def load(self):
        """The humanoid model as shipped."""
        return dm_model(self.xml)


class HumanoidCMUFall(HumanoidFall):
    """dm_control humanoid_CMU from its initial pose, no control."""
    name = "humanoid_cmu_fall"
    question = "Falling CMU humanoid (56 hinges), no control: energy, penetration, joint limits?"
    xml = "humanoid_CMU"
    drift_bodies = ("root",)


LEGS = ("front_left", "front_right", "back_right", "back_left")
TROT = {"front_left": 0.0, "back_right": 0.0, "front_right": math.pi, "back_left": math.pi}
STAND_S, GAIT_AMP, GAIT_HZ = 2.0, 0.3, 1.0


class Quadruped(Scene):
    """dm_control quadruped (walk variant): standing, then an open-loop trot."""
    name = "quadruped"
    question = "Quadruped standing 2 s then trotting open loop: foot slip and base drift?"
    duration = 10.0
    drift_bodies = ("torso",)
    feet = tuple(f"toe_{leg}" for leg in LEGS)

    def load(self):
        """quadruped.xml as dm_control's walk task builds it."""
        return dm_model("quadruped", floor_size=10, terrain=False, rangefinders=False,
                        walls_and_ball=False)

    def init(self, m, d):
        """Upright at the lowest height without contact (1 mm steps up); servos at its lengths."""
        z = 0.0
        while True:
            d.qpos[2] = z
            mujoco.mj_forward(m, d)
            if d.ncon == 0:
                break
            z += 1e-3
        d.ctrl[:] = d.actuator_length
        d.act[:] = d.ctrl

    def control(self, m, d, t):
        """Hold the start lengths; after STAND_S each leg's lift and extend targets oscillate."""
        c0 = self.start_state()["ctrl"]
        d.ctrl[:] = c0
        if t < STAND_S:
            return
        w = 2 * math.pi * GAIT_HZ * (t - STAND_S)
        for leg, ph in TROT.items():
            for act, lag in (("lift", 0.0), ("extend", -math.pi / 2)):
                i = m.actuator(f"{act}_{leg}").id
                d.ctrl[i] = c0[i] + GAIT_AMP * math.sin(w + ph + lag)
        lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
        np.clip(d.ctrl, lo, hi, out=d.ctrl)


class StackerTower(Scene):
    """dm_control stacker with four boxes stacked at x = 0.25, the arm held upright."""
    name = "stacker_tower"
    question = "Does a four-box planar tower stand still for 10 s (drift)?"
    drift_bodies = ("box0", "box1", "box2", "box3")
    tower_x = 0.25

    def load(self):
        """stacker.xml with four boxes."""
        return dm_model("stacker", n_boxes=4)

    def init(self, m, d):
        """Boxes touching, one on the other, from the floor up; arm at qpos0 (upright)."""
        for k in range(4):
            h = m.geom(f"box{k}").size[2]
            d.qpos[m.jnt_qposadr[m.joint(f"box{k}_x").id]] = self.tower_x
            d.qpos[m.jnt_qposadr[m.joint(f"box{k}_z").id]] = h * (2 * k + 1)
        mujoco.mj_forward(m, d)

    def control(self, m, d, t):
        """The arm held at qpos0 by PD with gravity compensation; grasp motor 0."""
        arm_hold(m, d, np.zeros(4))


SCENES = {s.name: s for s in (JacoGrasp(), AdroitGrasp(), FetchPinch(), ManipulatorPinch(),
                               HumanoidFall(), HumanoidCMUFall(), Quadruped(), StackerTower())}


# ----------------------------------------------------------------------------- driver
def run(scene, stepper=mujoco.mj_step, duration=None, config="default"):
    """Step a scene with stepper(model, data) (its dict, if any, kept per row): (rows, summary)."""
    m, d = scene.model(config)
    rec, dt = scene.recorder(m), m.opt.timestep
    n = int(round((scene.duration if duration is None else duration) / dt))
    rows = []
    for k in range(n):
        scene.control(m, d, k * dt)
        t0 = time.perf_counter()
        out = stepper(m, d)
        sec = time.perf_counter() - t0
        rec.record(m, d)
        row = {"t": (k + 1) * dt, "seconds": sec, "ncon": int(d.ncon), "nefc": int(d.nefc)}
        if stepper is mujoco.mj_step:
            row["mj_iterations"] = int(d.solver_niter[:max(1, d.nisland)].sum())
        if isinstance(out, dict):
            row.update(out)
        rows.append(row)
    return rows, summarize(scene, config, m, rows, rec.summary())


def summarize(scene, config, m, rows, out):
    """The run's summary: the recorder's metrics with the scene, configuration and step times."""
    sec = [r["seconds"] for r in rows]
    out.update(scene=scene.name, config=config, duration_s=len(rows) * m.opt.timestep,
               dt=m.opt.timestep, nv=int(m.nv),
               cone="pyramidal" if m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL else "elliptic",
               impratio=float(m.opt.impratio), noslip_iterations=int(m.opt.noslip_iterations),
               step_us_median=statistics.median(sec) * 1e6 if sec else None,
               step_us_mean=float(np.mean(sec)) * 1e6 if sec else None)
    if rows and "mj_iterations" in rows[0]:
        out["mj_iterations_mean"] = float(np.mean([r["mj_iterations"] for r in rows]))
    return out


def configs_for(scene, names):
    """The configurations asked for that apply to a scene ("grid": mujoco#3328's, hold scenes)."""
    out = []
    for n in names:
        if n == "grid":
            out += GRID if scene.grid else []
        elif n in MJ_CONFIGS:
            out.append(n)
        else:
            raise SystemExit(f"unknown configuration {n!r}; known: {list(MJ_CONFIGS)} or grid")
    return list(dict.fromkeys(out))


def check():
    """Every scene's CI version with MuJoCo "default": 1 if any fails to load or goes NaN."""
    bad = 0
    for name, sc in SCENES.items():
        try:
            rows, s = run(sc, duration=sc.ci_duration, config="default")
            ok = not s["nan"] and len(rows) > 0
            msg = (f"{len(rows)} steps, {s['contacts_median']:.0f} contacts, "
                   f"kinds {s['constraint_kinds']}")
        except Exception as e:  # a scene that fails to load fails the check
            ok, msg = False, f"{type(e).__name__}: {e}"
        bad += not ok
        print(f"{name:20s} {'ok' if ok else 'FAIL'} {msg}", file=sys.stderr)
    return 1 if bad else 0


def run_all(names, configs, small, keep_rows):
    """One record per (scene, configuration): the run's summary (and rows if asked)."""
    records = []
    for name in names:
        sc = SCENES[name]
        for cfg in configs_for(sc, configs):
            w0 = time.perf_counter()
            rows, s = run(sc, duration=sc.ci_duration if small else sc.duration, config=cfg)
            s.update(wall_s=time.perf_counter() - w0, question=sc.question)
            if keep_rows:
                s["rows"] = rows
            records.append(s)
            print(f"{name:20s} {cfg:30s} {s['wall_s']:7.1f} s", file=sys.stderr, flush=True)
    return records


def main():
    """Parse the command line, run the scenes in the configurations, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma list of scenes")
    ap.add_argument("--configs", default="default,best", help="comma list; 'grid': mujoco#3328's")
    ap.add_argument("--small", action="store_true", help="CI durations")
    ap.add_argument("--rows", action="store_true", help="keep the per-step rows in the JSON")
    ap.add_argument("--out", default=None, help="JSON file (default: stdout)")
    ap.add_argument("--check", action="store_true", help="CI versions with MuJoCo default")
    a = ap.parse_args()
    if a.check:
        sys.exit(check())
    records = run_all(a.scenes.split(","), a.configs.split(","), a.small, a.rows)
    out = {"mujoco_version": mujoco.__version__, "small": a.small, "records": records}
    text = json.dumps(out, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
