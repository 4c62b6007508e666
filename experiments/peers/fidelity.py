"""MuJoCo and Drake on the physical-fidelity scenes: scenes with an analytic answer
(a sliding cube that stops, a dragged cube that breaks away, cubes on slopes and pressed against
a wall, a rolling sphere, a cube and a sphere dropped onto the plane, a light cube under a heavy
one at rest over a sweep of mass ratios, a tower of 5 and 10 cubes at rest, a pile of 20
cubes dropped into a box, the dragged cube over a sweep of time steps), run in both engines and
compared with the exact motion (the pile's: no overlap, and at rest no kinetic energy).

Usage:
  python3 fidelity.py [--out FILE] [--only SCENE[,SCENE]] [--engines mujoco,drake] [--small]
  python3 fidelity.py --check     # sliding cube, MuJoCo default elliptic config; exit 1 if the
                                  # stop time is not within 15% of the exact 0.2548 s

Scene conventions (stated once here; every function below follows them):
  * A scene is a plain dict (see `scene_specs`): body ("cube" or "sphere"), mu, dt, settle_s,
    duration_s, gravity_settle and gravity (m/s^2, scene frame), force0 and force_rate (N: the
    applied force is force0 + force_rate * t from t = 0 on), v0 (m/s, set at t = 0), the
    analytic answer and the kind of metrics to compute.
  * Scene frame: the contact surface is always the plane z = 0 with its normal +z, and "downhill"
    is +x. A slope is made by tilting gravity, not the plane: g = (g sin th, 0, -g cos th). The
    wall of `wall_press` is that same plane: the 20 N press is along -z and gravity (the wall's
    "down") along +x, with no other surface. So z is always the normal coordinate and x the
    downhill one, in every record and trajectory.
  * Gravity is applied as a body force m g at the centre of mass, with the engines' own gravity
    set to zero. Why: the scene settles for settle_s at rest under gravity_settle (only the
    component normal to the plane, plus the press of wall_press), and the tangential part is
    switched on at t = 0 together with any applied force and v0, so the normal load does not
    jump at t = 0 and a 30 degree slope does not slide while settling. The load switched on at
    t = 0 makes a short elastic transient (the contacts' tangential compliance), so hold scenes
    also report the creep after t = 1 s.
  * Contact parameters are the engines' defaults: MuJoCo's solref/solimp as its model reports
    them; Drake's point stiffness and dissipation come from SceneGraph's default proximity
    properties (the geometries only set friction), reported under `drake_defaults` together
    with the stiffness measured from the settled cube.
  * The cube (side a = 0.2 m, 1 kg, inertia m a^2 / 6) collides only through eight spheres of
    radius r = a/50 at its corners, centres at (+-(a/2 - r), +-(a/2 - r), +-(a/2 - r)), so their
    surfaces reach the cube's face planes (Le Lidec et al.'s ContactBench cube); its box geometry
    does not collide. Four spheres touch the plane. The rolling sphere is one sphere geometry.
  * t = 0 is the end of settling; metrics use the centre of mass position p and linear velocity v
    in the scene frame, sampled after every step. Stop time: first t with |v| <= 1 mm/s,
    breakaway: first t with |v| >= 1 mm/s, both interpolated linearly between steps.
  * The stack (`stack`, one record per mass ratio, the ratio in `param`): two such cubes, the
    bottom one of mass 1/sqrt(ratio) on the plane, the top one of mass sqrt(ratio) on it, corner
    sphere on corner sphere, mu 0.9 against the floor and 0.95 between the cubes (MuJoCo: the
    floor's `priority` makes its friction win; Drake combines two frictions as 2 a b / (a + b),
    so the floor carries 0.855 to give 0.9 with the cube's 0.95). No settling: both start from
    our pose, touching and at rest, for 100 steps; drift is each centre's distance from where it
    was at t = 0, penetration the largest overlap of a corner sphere with the floor or with a
    sphere of the other cube.
  * The drops (`drop_cube`, `drop_sphere`): the cube or the sphere, mu 0.5, no settling, starts
    at rest and flat with its lowest point DROP_HEIGHT = 0.1 m above the plane and falls under
    gravity (0, 0, -g) for 0.5 s. With gap = z - (the height at which it just touches), the
    touch is the first sample with gap < 1 um (exact sqrt(2 h / g)); the bounce the largest gap
    after it; the penetration the largest -gap, the rest penetration the last one; the contact
    time from the touch to the last sample with |v_z| > 1 mm/s (0 if none after the touch).
    Restitution is 0 everywhere: exact bounce, contact time and penetrations are 0.
  * The tower (`tower`, one record per cube count in TOWER_COUNTS, the count in `param`): the
    stack generalized to N cubes of 1 kg, cube k's centre at (k + 1/2) a, each cube's spheres on
    the top face (a box) of the cube below, 5 s. Every cube's spheres collide with the floor and
    cube k's with cube k-1's box; nothing else collides. Drift is the largest of any centre (and
    the bottom's and the top's), collapse the stack's test on every adjacent pair, penetration
    the largest overlap with the floor or with the face below while the tower stood.
  * The pinch grasp (`pinch_grasp`): two fingers on slide/prismatic joints along y, each pushed
    towards the other by the grip force (a `motor` in MuJoCo, an applied generalized force in
    Drake), each pad four spheres of radius 2 mm at (+-0.01, +-0.005) m; a 0.1 kg plate (box
    0.25 x 0.02 x 0.05 m, centre of mass 0.1 m off the grip along x) between them; mu 1; the grip
    16 N for 4.5 s then 1 N for 1.5 s, period 6 s; dt 5 ms; engine gravity on. Settled 0.5 s
    at the secure grip, then 12 s. Metrics: the plate's pitch about the grip axis gained over the
    first secure phase (exact 0), the largest pitch gained in the first loose phase (it swings
    down and back), and the median over the first
    secure phase of the largest contact slip speed (the sphere's velocity relative to the plate's
    point under it, tangential part), in um/s.
  * The pile (`pile`, one record per cube count in PILE_COUNTS, the count in `param`): the Rust
    scene `experiments/scenes/src/fidelity/pile.rs`. Cubes of side 0.1 m, 1 kg, on the corner
    spheres above, each also carrying its box (a x a x a), which only the other cubes' spheres
    touch: a sphere touches another cube's box and the five planes of a box open at the top
    (the floor z = 0, walls x = +-L/2, y = +-L/2, L = 0.5 m, normals inwards); no sphere-sphere,
    box-box or box-plane pair (MuJoCo: collision bits; Drake: collision filters). mu 0.5
    everywhere, dt 1 ms, 2 s, no settle; gravity (0, 0, -g) is the body force m g at every
    cube's centre, engine gravity zero, as above. The starting poses are `pile.rs`'s `layout`
    to the bit (`pile_layout`: a checkerboard of slots level by level, a jitter and a turn from
    the sequences frac(k c)) written straight into the engines' positions, every cube at rest
    and clear of everything by more than 1 mm. Measured after every step from the poses and
    velocities, as `pile.rs` does: the penetration (the largest overlap of a sphere with
    another cube's box, the sphere's centre clamped to the box, or with a plane; largest over
    the run and last), the total kinetic energy (isotropic inertia m a^2 / 6; last, and largest
    over the last 0.5 s: is the pile at rest?), the cubes whose centre left the box at the end.
    The exact answer: no penetration, no kinetic energy, none escaped. MuJoCo solves each
    constraint island on its own: a step's iterations are the largest island's. --small: the
    20-cube pile for 0.3 s (the cubes are still falling).
  * The consistency sweep (`consistency`, one record per time step): the dragged cube at dt from
    1e-4 to 1e-1 s, each settled 0.5 s at its own dt; the error is the integral over the second
    of |x - x_exact| with x_exact = (10/3)(t - t0)^3 after t0 (trapezoids over the samples).
  * The grasp's consistency sweep (`consistency_grasp`, one record per time step but the
    first): the pinch grasp over one period of a faster square wave (CONSISTENCY_GRASP: 0.4 s,
    secure for its first half), each settled at its own dt, at CONSISTENCY_GRASP_DTS, the
    first each configuration's reference; the error is `int |p - p_ref| dt` of the plate's
    centre of mass (`path_distance`). MuJoCo in each configuration, Drake at its defaults and
    near-rigid (`Sweep.drake`). --small: the reference at 1 ms, then 2 and 5 ms.
  * The pile's consistency sweep (`consistency_pile`, as the grasp's): the 20-cube pile over
    its first 0.5 s (CONSISTENCY_PILE: every level's first impact) at CONSISTENCY_PILE_DTS; the
    error is that of the pile's centre of mass (the mean cube centre: which cube lands where is
    chaotic, the pile's mass is not), over the run and before a cube first came within 1 mm of
    another in the reference run (the cubes meet only the container). MuJoCo only (a Drake step
    of the pile takes 1.1 ms). --small: as the grasp's.
"""
import argparse
import json
import math
import statistics
import sys
import time

import numpy as np

G = 9.81
A = 0.2            # cube side (m)
M_CUBE = 1.0       # cube mass (kg)
R_CORNER = A / 50  # corner sphere radius (m)
R_BALL = 0.05      # rolling sphere radius (m)
M_BALL = 0.1       # rolling sphere mass (kg)
DT = 1e-3
SETTLE_S = 0.5
V_THR = 1e-3       # stop / breakaway speed threshold (m/s)
TRAJ_EVERY = 10    # trajectory samples: every 10 steps
DROP_HEIGHT = 0.1  # drops: the lowest point's height above the plane at t = 0 (m)
TOUCH = 1e-6       # drops: touching once the lowest point is below this height (m)

MJ_CONFIGS = {
    # name: (cone, impratio, noslip_iterations, time constant); solver Newton and everything else
    # MuJoCo's default. Time constant None: MuJoCo's default solref (0.02, 1); "2dt": solref
    # (2 dt, 1), the stiffest MuJoCo allows (`refsafe` clamps a smaller one to 2 dt), named
    # `tc2dt` in the configuration's name. solimp is MuJoCo's default in every configuration.
    "elliptic-impratio1-noslip0": ("elliptic", 1.0, 0, None),
    "elliptic-impratio1-noslip10": ("elliptic", 1.0, 10, None),
    "elliptic-impratio10-noslip0": ("elliptic", 10.0, 0, None),
    "elliptic-impratio10-noslip10": ("elliptic", 10.0, 10, None),
    "pyramidal-impratio1-noslip0": ("pyramidal", 1.0, 0, None),
    "pyramidal-impratio1-noslip10": ("pyramidal", 1.0, 10, None),
    "elliptic-tc2dt-impratio10-noslip10": ("elliptic", 10.0, 10, "2dt"),
}
# MuJoCo at its best on these scenes: the stiffest time constant, impratio 10, noslip.
MJ_BEST = "elliptic-tc2dt-impratio10-noslip10"
# name: (discrete approximation, point stiffness per geometry N/m, SAP relaxation time). None:
# SceneGraph's default proximity properties (point stiffness 1e6 N/m, Hunt-Crossley dissipation
# 50 s/m, relaxation time 0.1 s). Near-rigid: Castro et al.'s clutter parameters (bench.py's
# --drake-paper-params), k = 1e12 N/m and tau_d = dt; TAMSI, similar and lagged keep the
# default Hunt-Crossley dissipation (they do not use the relaxation time).
DRAKE_CONFIGS = {
    "sap": ("sap", None, None),
    "tamsi": ("tamsi", None, None),
    "similar": ("similar", None, None),
    "lagged": ("lagged", None, None),
    "sap-k1e12-taudt": ("sap", 1e12, "dt"),
    "tamsi-k1e12": ("tamsi", 1e12, None),
    "similar-k1e12": ("similar", 1e12, None),
    "lagged-k1e12": ("lagged", 1e12, None),
}
SMALL_CONFIGS = {"mujoco": ["elliptic-impratio1-noslip0", MJ_BEST], "drake": ["sap", "sap-k1e12-taudt"]}


# ----------------------------------------------------------------------------- scenes
def slope_gravity(deg):
    """Gravity tilted by `deg` about y, so the plane z = 0 is an incline going down along +x."""
    th = math.radians(deg)
    return [G * math.sin(th), 0.0, -G * math.cos(th)], [0.0, 0.0, -G * math.cos(th)]


def scene_specs():
    """All fidelity scenes as plain dicts (conventions in the module docstring), by name."""
    base = dict(body="cube", dt=DT, settle_s=SETTLE_S, force0=[0.0, 0.0, 0.0],
                force_rate=[0.0, 0.0, 0.0], v0=[0.0, 0.0, 0.0],
                gravity_settle=[0.0, 0.0, -G], gravity=[0.0, 0.0, -G])
    out = {}
    mu = 0.4
    t_stop = 1.0 / (mu * G)
    # Symplectic Euler's exact discrete distance: v0^2 / (2 mu g) - v0 dt / 2 (x += dt v_{k+1}).
    slide = {"stop_time_s": t_stop, "stop_distance_m": 0.5 * t_stop,
             "stop_distance_discrete_m": 0.5 * t_stop - 0.5 * DT}
    out["sliding_cube"] = dict(base, mu=mu, duration_s=0.6, v0=[1.0, 0.0, 0.0], kind="slide",
                               analytic=dict(slide))
    d = 1.0 / math.sqrt(2.0)
    out["sliding_cube_diagonal"] = dict(base, mu=mu, duration_s=0.6, v0=[d, d, 0.0], kind="slide",
                                        analytic=dict(slide))
    t0 = mu * M_CUBE * G / 20.0
    out["dragged_cube"] = dict(base, mu=mu, duration_s=1.0, force_rate=[20.0, 0.0, 0.0],
                               kind="drag",
                               analytic={"breakaway_t0_s": t0,
                                         # where v = 10 (t - t0)^2 reaches the 1 mm/s threshold
                                         "breakaway_time_s": t0 + math.sqrt(V_THR / 10.0),
                                         "v_0_5s": 10.0 * (0.5 - t0) ** 2,
                                         "v_1_0s": 10.0 * (1.0 - t0) ** 2})
    for deg, dur, kind in ((15, 10.0, "hold"), (30, 10.0, "accel")):
        g, gs = slope_gravity(deg)
        mu = 0.5
        an = ({"creep_mm": 0.0} if kind == "hold" else
              {"acceleration_mps2": G * (math.sin(math.radians(deg)) - mu * math.cos(math.radians(deg)))})
        out[f"slope_{deg}"] = dict(base, mu=mu, duration_s=dur, gravity=g, gravity_settle=gs,
                                   kind=kind, slope_deg=deg, analytic=an)
    out["wall_press"] = dict(base, mu=1.0, duration_s=10.0, gravity_settle=[0.0, 0.0, 0.0],
                             gravity=[G, 0.0, 0.0], force0=[0.0, 0.0, -20.0], kind="hold",
                             analytic={"creep_mm": 0.0})
    g, gs = slope_gravity(15)
    out["rolling_sphere"] = dict(base, body="sphere", mu=1.0, duration_s=1.0, gravity=g,
                                 gravity_settle=gs, kind="accel", slope_deg=15,
                                 analytic={"acceleration_mps2": 5.0 / 7.0 * G * math.sin(math.radians(15))})
    for body in ("cube", "sphere"):
        out[f"drop_{body}"] = dict(base, body=body, mu=0.5, settle_s=0.0, duration_s=0.5,
                                   drop_height=DROP_HEIGHT, kind="drop", analytic=drop_analytic())
    for name, s in out.items():
        s["name"] = name
    return out


def drop_analytic():
    """The exact drop: free fall to the touch at sqrt(2 h / g), then (restitution 0, rigid)
    no bounce, no penetration and no time in contact before rest."""
    return {"touch_time_s": math.sqrt(2.0 * DROP_HEIGHT / G), "bounce_height_mm": 0.0,
            "contact_time_s": 0.0, "penetration_max_mm": 0.0, "rest_penetration_mm": 0.0}


STACK_RATIOS = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]
TOWER_COUNTS = [5, 10]
STACK_MU_FLOOR, STACK_MU_CUBES = 0.9, 0.95
CONSISTENCY_DTS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]


GRASP = dict(mass=0.1, mu=1.0, offset=0.1, b=0.01, c=0.005, w=0.01, r_pad=0.002, m_finger=0.1,
             length=0.25, height=0.05, high=16.0, low=1.0, period=6.0, duty=0.75)


def grasp_spec(duration=12.0):
    """The pinch grasp as a scene dict (constants in GRASP)."""
    return dict(name="pinch_grasp", body="grasp", dt=5e-3, settle_s=SETTLE_S,
                duration_s=duration, mu=GRASP["mu"], kind="grasp",
                analytic={"secure_pitch_deg": 0.0, "secure_slip_um_s": 0.0})


def grasp_force(t, period=None, duty=None):
    """The grip force at time t (t = 0 at the end of settling, which is secure), the square
    wave's period and duty GRASP's unless given."""
    period = GRASP["period"] if period is None else period
    duty = GRASP["duty"] if duty is None else duty
    return GRASP["high"] if (t / period) % 1.0 < duty else GRASP["low"]


#: The grasp's time-step sweep (`consistency_grasp.toml`'s): one period of a faster square
#: wave, secure then loose, at these steps, the first each configuration's own reference.
CONSISTENCY_GRASP = dict(period=0.4, duty=0.5, duration=0.4)
CONSISTENCY_GRASP_DTS = [1e-5, 1e-4, 1e-3, 5e-3]


def consistency_grasp_spec(dt):
    """The grasp's consistency run at time step dt (record name `consistency_grasp`)."""
    return dict(grasp_spec(CONSISTENCY_GRASP["duration"]), name="consistency_grasp", dt=dt,
                period=CONSISTENCY_GRASP["period"], duty=CONSISTENCY_GRASP["duty"],
                analytic={"consistency_error_m_s": 0.0})


#: The pile's time-step sweep (`consistency_pile.toml`'s): the 20-cube pile over its first
#: 0.5 s (every level's first impact), the first step each configuration's own reference.
CONSISTENCY_PILE = dict(count=20, duration=0.5)
CONSISTENCY_PILE_DTS = [1e-5, 1e-4, 1e-3, 5e-3]


def consistency_pile_spec(dt):
    """The pile's consistency run at time step dt (record name `consistency_pile`)."""
    return dict(pile_spec(CONSISTENCY_PILE["count"], CONSISTENCY_PILE["duration"]),
                name="consistency_pile", dt=dt, analytic={"consistency_error_m_s": 0.0})


def path_distance(T, P, T_ref, P_ref):
    """ContactBench's consistency `int |p - p_ref| dt` (m s): the distance of each sample of
    the path (T, P) from the reference path (linear between its samples), times the step that
    ends there (the project's ruler for it, the report's `PathRun::distance_integral`)."""
    T, P, T_ref, P_ref = map(np.asarray, (T, P, T_ref, P_ref))
    ref = np.stack([np.interp(T, T_ref, P_ref[:, i]) for i in range(3)], axis=1)
    return float(np.sum(np.linalg.norm(P - ref, axis=1) * np.diff(np.concatenate([[0.0], T]))))


def grasp_pads():
    """Pad sphere offsets (x, z) on each finger."""
    b, c = GRASP["b"], GRASP["c"]
    return [(b, c), (b, -c), (-b, c), (-b, -c)]


def plate_inertia():
    """Diagonal inertia of the plate box about its centre."""
    g = GRASP
    l, t, h, m = g["length"], 2 * g["w"], g["height"], g["mass"]
    return [m / 12 * (t * t + h * h), m / 12 * (l * l + h * h), m / 12 * (l * l + t * t)]


def grasp_slip(R, x, v, w, fingers_y, fingers_v):
    """Largest tangential speed of a pad sphere relative to the plate point under it."""
    g = GRASP
    best = 0.0
    for k, side in enumerate((1.0, -1.0)):
        n = R @ np.array([0.0, side, 0.0])
        for (px, pz) in grasp_pads():
            s = np.array([px, fingers_y[k], pz])
            p = s - g["r_pad"] * n
            rel = np.array([0.0, fingers_v[k], 0.0]) - (v + np.cross(w, p - x))
            tang = rel - rel.dot(n) * n
            best = max(best, float(np.linalg.norm(tang)))
    return best


def grasp_metrics(T, pitch, slip, secure):
    """Pitch gained over the first secure phase, the largest pitch gained in the first loose
    phase (the plate swings down and back), median secure slip (um/s)."""
    T, pitch, slip, secure = map(np.asarray, (T, pitch, slip, secure))
    # The pitch as a continuous angle: a plate swinging past 180 degrees must not jump by 360.
    pitch = np.degrees(np.unwrap(np.radians(pitch)))
    end = GRASP["duty"] * GRASP["period"]

    def at(t):
        k = np.nonzero(T <= t + 1e-9)[0]
        return float(pitch[k[-1]]) if k.size else 0.0
    held = secure & (T <= end + 1e-9)
    loose = (T > end + 1e-9) & (T <= GRASP["period"] + 1e-9)
    return {"secure_pitch_deg": at(end) - at(0.0),
            # how far the plate swings down in the loose phase (it swings back: the largest gain)
            "loose_pitch_deg": (float(pitch[loose].max()) - at(end)) if loose.any() else None,
            "secure_slip_um_s": float(np.median(slip[held]) * 1e6) if held.any() else None}


def pitch_of(R):
    """The plate's rotation about the grip axis (degrees; positive when its far end drops)."""
    a = R @ np.array([1.0, 0.0, 0.0])
    return math.degrees(math.atan2(-a[2], a[0]))


def grasp_mjcf(scene, config):
    """MJCF of the grasp: two slide-joint fingers with motors, the free plate, engine gravity."""
    g = GRASP
    fr = f'friction="{g["mu"]} 0.005 0.0001"'
    y0 = g["w"] + g["r_pad"]
    ix, iy, iz = plate_inertia()
    out = ['<mujoco model="pinch_grasp">', mj_option(scene, config, (0.0, 0.0, -G)), '<worldbody>']
    for k, side in enumerate((1.0, -1.0)):
        out.append(f'<body name="finger{k}" pos="0 {side * y0} 0">'
                   f'<joint name="slide{k}" type="slide" axis="0 1 0"/>'
                   f'<inertial pos="0 0 0" mass="{g["m_finger"]}" diaginertia="1e-5 1e-5 1e-5"/>')
        for j, (px, pz) in enumerate(grasp_pads()):
            out.append(f'<geom name="pad{k}_{j}" type="sphere" size="{g["r_pad"]}" '
                       f'pos="{px} 0 {pz}" {fr}/>')
        out.append('</body>')
    out.append(f'<body name="plate" pos="{g["offset"]} 0 0"><freejoint/>'
               f'<inertial pos="0 0 0" mass="{g["mass"]}" diaginertia="{ix} {iy} {iz}"/>'
               f'<geom name="plate" type="box" size="{g["length"] / 2} {g["w"]} {g["height"] / 2}" '
               f'{fr}/></body>')
    out += ['</worldbody>', '<contact><exclude body1="finger0" body2="finger1"/></contact>',
            '<actuator><motor joint="slide0" gear="1"/><motor joint="slide1" gear="1"/></actuator>',
            '</mujoco>']
    return "\n".join(out)


def run_mujoco_grasp(scene, config):
    """Settle the grasp at the secure grip, then run it in one MuJoCo config."""
    import mujoco
    m = mujoco.MjModel.from_xml_string(grasp_mjcf(scene, config))
    d = mujoco.MjData(m)
    pid = m.body("plate").id
    dt = scene["dt"]
    qa = [m.jnt_qposadr[m.joint(f"slide{k}").id] for k in range(2)]
    va = [m.jnt_dofadr[m.joint(f"slide{k}").id] for k in range(2)]
    y0 = GRASP["w"] + GRASP["r_pad"]

    def grip(f):
        d.ctrl[0], d.ctrl[1] = -f, f

    for _ in range(int(round(scene["settle_s"] / dt))):
        grip(GRASP["high"])
        mujoco.mj_step(m, d)
    T, pitch, slip, secure, times, niter = [], [], [], [], [], []
    vel = np.zeros(6)
    P = []
    for k in range(int(round(scene["duration_s"] / dt))):
        f = grasp_force(k * dt, scene.get("period"), scene.get("duty"))
        grip(f)
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        times.append(time.perf_counter() - t0)
        niter.append(int(d.solver_niter[0]))
        R = d.xmat[pid].reshape(3, 3)
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, pid, vel, 0)
        fy = [y0 + d.qpos[qa[0]], -y0 + d.qpos[qa[1]]]
        fv = [d.qvel[va[0]], d.qvel[va[1]]]
        T.append((k + 1) * dt)
        pitch.append(pitch_of(R))
        slip.append(grasp_slip(R, d.xpos[pid].copy(), vel[3:].copy(), vel[:3].copy(), fy, fv))
        secure.append(f == GRASP["high"])
        P.append(d.xipos[pid].copy())
    it = np.asarray(niter)
    out = grasp_metrics(T, pitch, slip, secure)
    out.update({"T": T, "P": np.asarray(P)})
    out.update({"step_times": times, "converged_fraction": float(np.mean(it < m.opt.iterations)),
                "iterations_per_step_mean": float(it.mean()),
                "iterations_per_step_max": int(it.max())})
    return out


def run_drake_grasp(scene, config):
    """Settle the grasp at the secure grip, then run it in one Drake config."""
    from pydrake.all import (Box, DiagramBuilder, PrismaticJoint, RigidTransform,
                             RotationalInertia, Simulator, SpatialInertia, Sphere, UnitInertia)
    g = GRASP
    builder = DiagramBuilder()
    plant, _ = drake_plant(builder, scene, config)
    props = drake_props(scene, config, g["mu"])
    y0 = g["w"] + g["r_pad"]
    joints = []
    for k, side in enumerate((1.0, -1.0)):
        f = plant.AddRigidBody(f"finger{k}", SpatialInertia(g["m_finger"], [0, 0, 0],
                                                            UnitInertia(1e-4, 1e-4, 1e-4)))
        for j, (px, pz) in enumerate(grasp_pads()):
            plant.RegisterCollisionGeometry(f, RigidTransform([px, 0.0, pz]), Sphere(g["r_pad"]),
                                            f"pad{k}_{j}", props)
        joints.append(plant.AddJoint(PrismaticJoint(
            f"slide{k}", plant.world_frame(), f.body_frame(), [0.0, 1.0, 0.0])))
    ix, iy, iz = plate_inertia()
    plate = plant.AddRigidBody("plate", SpatialInertia.MakeFromCentralInertia(
        g["mass"], [0, 0, 0], RotationalInertia(ix, iy, iz)))
    plant.RegisterCollisionGeometry(plate, RigidTransform(),
                                    Box(g["length"], 2 * g["w"], g["height"]), "plate", props)
    plant.Finalize()
    sim = Simulator(builder.Build())
    ctx = sim.get_mutable_context()
    pctx = plant.GetMyMutableContextFromRoot(ctx)
    for jt, side in zip(joints, (1.0, -1.0)):
        jt.set_translation(pctx, side * y0)
    plant.SetFreeBodyPose(pctx, plate, RigidTransform([g["offset"], 0.0, 0.0]))
    port = plant.get_applied_generalized_force_input_port()

    def grip(f):
        tau = np.zeros(plant.num_velocities())
        tau[joints[0].velocity_start()] = -f
        tau[joints[1].velocity_start()] = f
        port.FixValue(pctx, tau)

    sim.Initialize()
    dt, step = scene["dt"], 0
    for _ in range(int(round(scene["settle_s"] / dt))):
        grip(g["high"])
        step += 1
        sim.AdvanceTo((step - 0.5) * dt)
    T, P, pitch, slip, secure, times = [], [], [], [], [], []
    for k in range(int(round(scene["duration_s"] / dt))):
        f = grasp_force(k * dt, scene.get("period"), scene.get("duty"))
        grip(f)
        step += 1
        t0 = time.perf_counter()
        sim.AdvanceTo((step - 0.5) * dt)
        times.append(time.perf_counter() - t0)
        X = plant.EvalBodyPoseInWorld(pctx, plate)
        V = plant.EvalBodySpatialVelocityInWorld(pctx, plate)
        R = X.rotation().matrix()
        fy = [jt.get_translation(pctx) for jt in joints]
        fv = [jt.get_translation_rate(pctx) for jt in joints]
        T.append((k + 1) * dt)
        P.append(X.translation().copy())
        pitch.append(pitch_of(R))
        slip.append(grasp_slip(R, X.translation(), V.translational(), V.rotational(), fy, fv))
        secure.append(f == g["high"])
    out = grasp_metrics(T, pitch, slip, secure)
    out.update({"T": T, "P": np.asarray(P), "step_times": times, "converged_fraction": None})
    return out


STACK_RESTING = {"stack": "spheres", "stack_face": "face"}


def stack_spec(ratio, steps=100, name="stack"):
    """The stack at one mass ratio (top over bottom), as a scene dict: `stack` corner sphere on
    corner sphere (a knife-edge balance), `stack_face` the top cube's spheres on the bottom
    cube's face. No settle: every engine starts from our pose, touching and at rest."""
    return dict(name=name, body="stack", dt=DT, settle_s=0.0, duration_s=steps * DT,
                mass_ratio=ratio, masses=[1.0 / math.sqrt(ratio), math.sqrt(ratio)],
                mu=STACK_MU_FLOOR, mu_cubes=STACK_MU_CUBES, kind="stack",
                resting=STACK_RESTING[name], analytic={"drift_mm": 0.0, "collapsed": 0})


def tower_spec(count, duration=5.0):
    """The tower of `count` 1 kg cubes, each standing on the face of the one below, as a scene
    dict: the stack's code with N masses (same start: touching, at rest, no settle)."""
    return dict(name="tower", body="stack", dt=DT, settle_s=0.0, duration_s=duration,
                count=count, masses=[M_CUBE] * count, mu=STACK_MU_FLOOR,
                mu_cubes=STACK_MU_CUBES, kind="stack", resting="face",
                analytic={"drift_mm": 0.0, "collapsed": 0})


def consistency_spec(dt):
    """The dragged cube at time step dt, as a scene dict (record name `consistency`)."""
    return dict(scene_specs()["dragged_cube"], name="consistency", dt=dt, kind="consistency",
                analytic={"consistency_error_m_s": 0.0})


# The pile's constants, `pile.rs`'s defaults (its `PileConfig`).
PILE = dict(side=0.1, mass=1.0, mu=0.5, container=0.5, first_level=0.15, level_spacing=0.18)
PILE_R = PILE["side"] / 50  # the corner spheres' radius a / 50 (m)
PILE_MARGIN = 1e-3  # `pile.rs`'s contact margin (m): a sphere this near a box touches it
PILE_COUNTS = [20]  # `pile.toml` says why not 50 as well
PILE_REST_S = 0.5  # the pile's rest: the largest kinetic energy over the run's last 0.5 s
# `pile.rs`'s irrational constants c of frac(k c): jitter x, y; axis height, azimuth; angle.
PILE_SEQ = (0.4142135623730951, 0.7320508075688772, 0.7548776662466927, 0.5698402909980532,
            0.6180339887498949)


def pile_spec(count, duration=2.0):
    """The pile of `count` cubes as a scene dict (no settle: the cubes start at rest in the
    air from `pile_layout`)."""
    return dict(name="pile", body="pile", dt=DT, settle_s=0.0, duration_s=duration,
                count=count, mu=PILE["mu"], kind="pile",
                analytic={"penetration_max_mm": 0.0, "kinetic_energy_end_J": 0.0, "escaped": 0})


def pile_sequence(k, c):
    """frac(k c): `pile.rs`'s `sequence`, the same bits (for k >= 0, x % 1.0 is x - trunc(x))."""
    return (k * c) % 1.0


def pile_slot(k):
    """Cube k's column (ix, iy) and level: level l holds the columns of a 3 x 3 grid with
    ix + iy + l even, iy the outer loop (`pile.rs`'s order), five then four."""
    level, left = 0, k
    while True:
        columns = [(ix, iy) for iy in range(3) for ix in range(3) if (ix + iy + level) % 2 == 0]
        if left < len(columns):
            return columns[left], level
        left -= len(columns)
        level += 1


def pile_layout(k):
    """Cube k's starting centre and quaternion (w, x, y, z): `pile.rs`'s `layout`, operation
    for operation in the same order (no fused multiply-add on either side, libm's sin, cos
    and sqrt), so the same bits. The rotation is nalgebra's `from_scaled_axis(angle axis)`,
    which is the quaternion exponential of angle axis / 2: (cos n, v sin n / n), n = |v|."""
    (ix, iy), level = pile_slot(k)
    a, cj = PILE["side"], PILE_SEQ
    spread = 0.3 * PILE["container"]
    jitter = lambda c: 0.1 * a * (2.0 * pile_sequence(k, c) - 1.0)  # noqa: E731
    centre = [spread * (ix - 1.0) + jitter(cj[0]), spread * (iy - 1.0) + jitter(cj[1]),
              PILE["first_level"] + PILE["level_spacing"] * level]
    height = 2.0 * pile_sequence(k, cj[2]) - 1.0
    azimuth = 2.0 * math.pi * pile_sequence(k, cj[3])
    ring = math.sqrt(1.0 - height * height)
    axis = (ring * math.cos(azimuth), ring * math.sin(azimuth), height)
    angle = math.pi * (2.0 * pile_sequence(k, cj[4]) - 1.0)
    v = [angle * x / 2.0 for x in axis]
    nn = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    if nn <= sys.float_info.epsilon ** 2:
        return centre, [1.0, 0.0, 0.0, 0.0]
    n = math.sqrt(nn)
    s = 1.0 * math.sin(n) / n
    return centre, [1.0 * math.cos(n), v[0] * s, v[1] * s, v[2] * s]


def pile_corners():
    """The pile cube's eight corner sphere centres in its frame (8 x 3), +-(a/2 - r)."""
    h = PILE["side"] / 2 - PILE_R
    return np.array([(sx * h, sy * h, sz * h)
                     for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def body_mass(scene):
    """Mass of the scene's one dynamic body (kg)."""
    return M_CUBE if scene["body"] == "cube" else M_BALL


def initial_height(scene):
    """Height of the centre of mass when the body just touches the plane (no penetration)."""
    return A / 2 if scene["body"] == "cube" else R_BALL


def start_height(scene):
    """Height of the centre of mass at the start: touching, or DROP_HEIGHT above for a drop."""
    return initial_height(scene) + scene.get("drop_height", 0.0)


def corner_centres():
    """Centres of the eight corner spheres in the cube's frame."""
    c = A / 2 - R_CORNER
    return [(sx * c, sy * c, sz * c) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]


def applied_force(scene, t, settling):
    """Force on the centre of mass (N, scene frame) over the step starting at t: gravity as a
    body force plus the scene's force. The ramp is taken at the step's midpoint, whose impulse
    over the step equals the exact integral of the linear ramp."""
    m = body_mass(scene)
    if settling:
        return m * np.asarray(scene["gravity_settle"]) + np.asarray(scene["force0"])
    tm = t + 0.5 * scene["dt"]
    return (m * np.asarray(scene["gravity"]) + np.asarray(scene["force0"])
            + tm * np.asarray(scene["force_rate"]))


# ----------------------------------------------------------------------------- MuJoCo
# The MuJoCo runs of the one-body scenes, the stacks and the pile take an optional
# `before_step(m, d, k)`, called before the run's step k (k = 0 at t = 0) with everything the
# step reads already set (applied forces included) and outside the step's timing: the hook
# `ladder.py` records MuJoCo's trajectory through (`mujoco.mj_getState`), so the ladder replays
# the very steps these runs take. It must not change `d`.
def mj_option(scene, config, gravity=(0.0, 0.0, 0.0)):
    """The <option> of a configuration (Newton, its cone, impratio and noslip) and, for a
    time constant other than MuJoCo's default, a <default> giving every geom solref (2 dt, 1)."""
    cone, impratio, noslip, tc = MJ_CONFIGS[config]
    g = " ".join(str(x) for x in gravity)
    out = (f'<option timestep="{scene["dt"]}" gravity="{g}" solver="Newton" cone="{cone}" '
           f'impratio="{impratio}" noslip_iterations="{noslip}"/>')
    if tc == "2dt":
        out += f'<default><geom solref="{2 * scene["dt"]} 1"/></default>'
    return out


def mj_contact_params(m):
    """solref and solimp as the compiled model has them on its first geom (every geom shares
    them in every configuration here)."""
    return {"solref": [float(x) for x in m.geom_solref[0]],
            "solimp": [float(x) for x in m.geom_solimp[0]]}


def mjcf(scene, config):
    """MJCF of a scene: plane z = 0, one free body, zero built-in gravity (applied as a force),
    Newton solver, the configuration's cone, impratio, noslip and time constant."""
    mu = scene["mu"]
    # condim 3 (MuJoCo's default): sliding friction only, no torsional or rolling friction.
    fr = f'friction="{mu} 0.005 0.0001"'
    out = ['<mujoco model="{}">'.format(scene["name"]), mj_option(scene, config),
           '<worldbody>', f'<geom name="plane" type="plane" size="0 0 1" {fr}/>',
           f'<body name="body" pos="0 0 {start_height(scene)}"><freejoint/>']
    if scene["body"] == "cube":
        i = M_CUBE * A * A / 6.0
        out.append(f'<inertial pos="0 0 0" mass="{M_CUBE}" diaginertia="{i} {i} {i}"/>')
        # the box is visual only: contype = conaffinity = 0 keeps it out of collision
        out.append(f'<geom type="box" size="{A / 2} {A / 2} {A / 2}" contype="0" conaffinity="0"/>')
        for k, c in enumerate(corner_centres()):
            out.append(f'<geom name="corner{k}" type="sphere" size="{R_CORNER}" '
                       f'pos="{c[0]} {c[1]} {c[2]}" {fr}/>')
    else:
        i = 0.4 * M_BALL * R_BALL ** 2
        out.append(f'<inertial pos="0 0 0" mass="{M_BALL}" diaginertia="{i} {i} {i}"/>')
        out.append(f'<geom name="ball" type="sphere" size="{R_BALL}" {fr}/>')
    out += ['</body>', '</worldbody>', '</mujoco>']
    return "\n".join(out)


GAP_SCALE = 1e-3  # m: the position-level Signorini product is over m g dt times 1 mm
SLIDING = 1e-6    # m/s: a contact slides when its tangential speed exceeds this


class ContactStats:
    """Per-step contact measures, accumulated over a run, from each contact's normal impulse
    `lambda_n` (force times dt), its friction impulse `lambda_t`, its gap (positive apart) and
    its post-step velocity `(v_n, v_t)`; every engine's run reports the same four:

    * `signorini_max`: max `|lambda_n (v_n + max(gap, 0) / dt)|` over `m g dt` times 1 m/s
      (velocity level; a contact apart at the step's start may close its gap within the step);
    * `gap_lambda_max`: max `max(gap + dt v_n, 0) lambda_n` over `m g dt` times 1 mm (position
      level: a contact that pushes and is still apart at the step's end);
    * `normal_work_J`: the sum over the run of `lambda_n v_n` (J), the work the normal impulses
      do at the velocity they leave (zero under exact complementarity);
    * `friction_ratio_max`: over sliding contacts (`|v_t| > 1e-6 m/s`), max
      `|lambda_t| / (mu lambda_n)` (Coulomb's law: 1).

    It also keeps, per step, whether any contact was active (for the lift while in contact)."""

    def __init__(self, weight, dt, mu):
        self.scale = weight * dt
        self.dt = dt
        self.mu = mu
        self.signorini = self.gap_lambda = self.work = self.ratio = 0.0
        self.in_contact = []

    def step(self, contacts):
        """contacts: (lambda_n, |lambda_t|, gap, v_n, |v_t|) of each contact of one step."""
        for ln, lt, gap, vn, vt in contacts:
            self.signorini = max(self.signorini, abs(ln * (vn + max(gap, 0.0) / self.dt)) / self.scale)
            left = max(gap + self.dt * vn, 0.0)  # the gap the step leaves
            self.gap_lambda = max(self.gap_lambda, left * ln / (self.scale * GAP_SCALE))
            self.work += ln * vn
            if vt > SLIDING and ln > 0.0:
                self.ratio = max(self.ratio, lt / (self.mu * ln))
        self.in_contact.append(any(ln > 0.0 for ln, *_ in contacts))

    def result(self):
        """The run's four measures."""
        return {"signorini_max": self.signorini, "gap_lambda_max": self.gap_lambda,
                "normal_work_J": self.work, "friction_ratio_max": self.ratio}


def mujoco_contacts(m, d, bid):
    """(lambda_n, |lambda_t|, gap, v_n, |v_t|) of each contact of MuJoCo's last step: after
    mj_step, d.contact, d.xipos and d.xmat are those of the step's start (the contact
    Jacobian's configuration) and d.qvel is the new velocity, the pairing of our own measure."""
    import mujoco
    v = d.qvel[0:3]
    # freejoint: angular velocity in the body frame; world = xmat times it.
    w = d.xmat[bid].reshape(3, 3) @ d.qvel[3:6]
    f6 = np.zeros(6)
    out = []
    for i in range(d.ncon):
        c = d.contact[i]
        mujoco.mj_contactForce(m, d, i, f6)
        n = c.frame[:3]  # from geom1 to geom2
        vp = v + np.cross(w, c.pos - d.xipos[bid])
        # The body's point moving along n separates when the body is geom2, closes when geom1.
        vn = vp @ n if m.geom_bodyid[c.geom2] == bid else -(vp @ n)
        vt = np.linalg.norm(vp - (vp @ n) * n)
        dt = m.opt.timestep
        out.append((f6[0] * dt, float(np.linalg.norm(f6[1:3])) * dt, float(c.dist), vn, vt))
    return out


def mujoco_friction_damping(m, d, u):
    """The rate `d b` at which MuJoCo's soft friction damps a slip along the unit vector `u`
    near zero slip, from its last step: unsaturated, the friction rows solve
    `J a = (1 - D) J a0 + D a_ref` with `D = A (A + R)^-1` and `a_ref = -b v` (MuJoCo's
    documentation, "Soft constraints"), so along the slip mode `e` (each friction row's tangent
    direction dotted with `u`) the slip decays at `d b` with `d = A_e / (A_e + R_e)`,
    `A_e = e'Ae / e'e` from `A = J M^-1 J'` (all four corners slip together, so `d` is the
    mode's, not one row's impedance `efc_KBIP[:, 2]`), `R_e = e'Re / e'e` from `efc_R`, and
    `b = efc_KBIP[:, 1]`. Elliptic cones only (their rows after each contact's first are its
    friction); None without friction rows."""
    import mujoco
    if m.opt.cone != mujoco.mjtCone.mjCONE_ELLIPTIC or d.nefc == 0:
        return None
    nv, ne = m.nv, d.nefc
    if mujoco.mj_isSparse(m):
        J = np.zeros((ne, nv))
        mujoco.mju_sparse2dense(J, d.efc_J, d.efc_J_rownnz, d.efc_J_rowadr, d.efc_J_colind)
    else:
        J = d.efc_J[:ne * nv].reshape(ne, nv).copy()
    e, b = np.zeros(ne), []
    for i in range(d.ncon):
        c = d.contact[i]
        for r in range(1, c.dim):
            e[c.efc_address + r] = c.frame[3 * r:3 * r + 3] @ u
            b.append(d.efc_KBIP[c.efc_address + r, 1])
    if not b or not e.any():
        return None
    x = np.zeros((1, nv))
    mujoco.mj_solveM(m, d, x, (e @ J)[None, :].copy())
    a_e = float((J @ x[0]) @ e) / (e @ e)
    r_e = float(e @ (d.efc_R[:ne] * e)) / (e @ e)
    return a_e / (a_e + r_e) * float(np.median(b))


def run_mujoco(scene, config, before_step=None):
    """Settle, then run one scene in one MuJoCo config; returns the samples and solver stats.
    `before_step(m, d, k)`, when given, is called before step k of the run (k = 0 at t = 0,
    after settling) with the step's inputs set (see the MuJoCo section's comment)."""
    import mujoco
    m = mujoco.MjModel.from_xml_string(mjcf(scene, config))
    d = mujoco.MjData(m)
    bid = m.body("body").id
    dt = scene["dt"]
    for k in range(int(round(scene["settle_s"] / dt))):
        d.xfrc_applied[bid, :3] = applied_force(scene, k * dt, True)
        mujoco.mj_step(m, d)
    d.qvel[:3] += np.asarray(scene["v0"])  # freejoint qvel[:3]: world linear velocity of the CoM
    n = int(round(scene["duration_s"] / dt))
    P, V, times, niter = [d.qpos[:3].copy()], [d.qvel[:3].copy()], [], []
    stats = ContactStats(body_mass(scene) * G, dt, scene["mu"])
    damping = []
    for k in range(n):
        d.xfrc_applied[bid, :3] = applied_force(scene, k * dt, False)
        if before_step:
            before_step(m, d, k)
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        times.append(time.perf_counter() - t0)
        niter.append(int(d.solver_niter[0]))  # one body, so one constraint island
        P.append(d.qpos[:3].copy())
        V.append(d.qvel[:3].copy())
        stats.step(mujoco_contacts(m, d, bid))
        damping.append(mujoco_friction_damping(m, d, slip_direction(scene)))
    it = np.asarray(niter)
    out = {"P": np.array(P), "V": np.array(V), "step_times": times, "damping": damping,
           "in_contact": stats.in_contact, **stats.result(), **mj_contact_params(m),
           "converged_fraction": float(np.mean(it < m.opt.iterations)),
           "iterations_per_step_mean": float(it.mean()),
           "iterations_per_step_max": int(it.max())}
    return out


def stack_bits(scene, b):
    """MuJoCo collision bits (contype, conaffinity) of cube b's spheres and of its box (None:
    no box). Resting "face": the floor is (0, 1); cube b's spheres (1 | 1 << b, 0) collide with
    the floor and with the box of cube b - 1 only, whose (0, 1 << b) meets no sphere of another
    cube, no box and not the floor (MuJoCo pairs two geoms when `contype1 & conaffinity2` or
    `contype2 & conaffinity1`). The top cube carries no box. "spheres": MuJoCo's default bits
    (every sphere with every other and the floor), no box."""
    if scene["resting"] != "face":
        return (1, 1), None
    box = (0, 1 << (b + 1)) if b + 1 < len(scene["masses"]) else None
    return (1 | (1 << b), 0), box


def stack_mjcf(scene, config):
    """MJCF of the stack or tower: free cubes on corner spheres, cube k's centre at
    (k + 1/2) a, zero built-in gravity; the floor's priority makes its friction (0.9) win
    against the spheres' and boxes' (0.95, used between the cubes). Resting "face": each
    cube's spheres stand on the box of the cube below (`stack_bits`); "spheres": every sphere
    collides with every other and the floor."""
    i = lambda m: m * A * A / 6.0  # noqa: E731
    fr = lambda mu: f'friction="{mu} 0.005 0.0001"'  # noqa: E731
    bits = lambda cc: f' contype="{cc[0]}" conaffinity="{cc[1]}"'  # noqa: E731
    face = scene["resting"] == "face"
    floor_bits = bits((0, 1)) if face else ""
    out = [f'<mujoco model="{scene["name"]}">', mj_option(scene, config), '<worldbody>',
           f'<geom name="plane" type="plane" size="0 0 1" priority="1"{floor_bits} '
           f'{fr(scene["mu"])}/>']
    for b, m in enumerate(scene["masses"]):
        out.append(f'<body name="cube{b}" pos="0 0 {(b + 0.5) * A}"><freejoint/>')
        out.append(f'<inertial pos="0 0 0" mass="{m}" diaginertia="{i(m)} {i(m)} {i(m)}"/>')
        sph, box = stack_bits(scene, b)
        sb = bits(sph) if face else ""
        for k, c in enumerate(corner_centres()):
            out.append(f'<geom name="c{b}_{k}" type="sphere" size="{R_CORNER}" '
                       f'pos="{c[0]} {c[1]} {c[2]}" {fr(scene["mu_cubes"])}{sb}/>')
        if box is not None:
            out.append(f'<geom name="face{b}" type="box" size="{A / 2} {A / 2} {A / 2}"'
                       f'{bits(box)} {fr(scene["mu_cubes"])}/>')
        out.append('</body>')
    out += ['</worldbody>', '</mujoco>']
    return "\n".join(out)


def stack_penetration(scene, spheres, X):
    """Largest overlap (m) of a corner sphere with the floor or of cube k's spheres with cube
    k-1: a sphere of it ("spheres") or its top face ("face", in cube k-1's frame, over the
    face's square). spheres: per cube, its sphere centres (8 x 3); X: per cube, (centre, R)."""
    floor = R_CORNER - min(s[:, 2].min() for s in spheres)
    pair = 0.0
    for k in range(1, len(spheres)):
        if scene["resting"] == "face":
            x, R = X[k - 1]
            local = (spheres[k] - x) @ R  # rows: R' (c - x)
            on = (np.abs(local[:, 0]) <= A / 2) & (np.abs(local[:, 1]) <= A / 2)
            if on.any():
                pair = max(pair, float((A / 2 + R_CORNER - local[on, 2]).max()))
        else:
            d = np.linalg.norm(spheres[k][:, None, :] - spheres[k - 1][None, :, :], axis=2)
            pair = max(pair, 2 * R_CORNER - d.min())
    return max(0.0, floor, pair)


def run_mujoco_stack(scene, config, before_step=None):
    """Run the stack or tower in one MuJoCo config from the same pose as ours (touching, at
    rest, no settle); centres, penetration, stats. `before_step`: as `run_mujoco`'s."""
    import mujoco
    m = mujoco.MjModel.from_xml_string(stack_mjcf(scene, config))
    d = mujoco.MjData(m)
    n = len(scene["masses"])
    bids = [m.body(f"cube{b}").id for b in range(n)]
    gids = [[m.geom(f"c{b}_{k}").id for k in range(8)] for b in range(n)]
    dt = scene["dt"]

    def push_gravity():
        for b, bid in enumerate(bids):
            d.xfrc_applied[bid, :3] = [0.0, 0.0, -G * scene["masses"][b]]

    def penetration():
        return stack_penetration(scene, [d.geom_xpos[g] for g in gids],
                                 [(d.xpos[bid], d.xmat[bid].reshape(3, 3)) for bid in bids])

    mujoco.mj_forward(m, d)
    centres = lambda: np.array([d.xpos[bid].copy() for bid in bids])  # noqa: E731
    C, pen, times, niter = [centres()], [], [], []
    for k in range(int(round(scene["duration_s"] / dt))):
        push_gravity()
        if before_step:
            before_step(m, d, k)
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        times.append(time.perf_counter() - t0)
        niter.append(int(d.solver_niter[0]))
        mujoco.mj_kinematics(m, d)  # poses of the new state (mj_step leaves the step's start)
        C.append(centres())
        pen.append(penetration())
    it = np.asarray(niter)
    out = {"C": np.array(C), "penetration": pen, "step_times": times,
           "converged_fraction": float(np.mean(it < m.opt.iterations)),
           "iterations_per_step_mean": float(it.mean()),
           "iterations_per_step_max": int(it.max())}
    out.update(mj_contact_params(m))
    return out


def pile_planes():
    """The container's five planes as (normal, point): the floor, then the walls at x = -+L/2,
    y = -+L/2, each normal into the box (`pile.rs`'s `planes`)."""
    h = 0.5 * PILE["container"]
    return [((0.0, 0.0, 1.0), (0.0, 0.0, 0.0)), ((1.0, 0.0, 0.0), (-h, 0.0, 0.0)),
            ((-1.0, 0.0, 0.0), (h, 0.0, 0.0)), ((0.0, 1.0, 0.0), (0.0, -h, 0.0)),
            ((0.0, -1.0, 0.0), (0.0, h, 0.0))]


def pile_mjcf(scene, config):
    """MJCF of the pile: the five planes (a plane's z axis is its normal), `count` free cubes
    at the origin (`run_mujoco_pile` sets the poses), zero built-in gravity. Collision bits:
    spheres (1, 0), boxes and planes (0, 1), so a sphere meets a box or a plane and nothing
    else meets (pairs when `contype1 & conaffinity2` or `contype2 & conaffinity1`; a body's own
    geoms never meet)."""
    a, m = PILE["side"], PILE["mass"]
    i = m * a * a / 6.0
    fr = f'friction="{scene["mu"]} 0.005 0.0001"'
    vec = lambda x: " ".join(repr(float(c)) for c in x)  # noqa: E731
    out = [f'<mujoco model="{scene["name"]}">', mj_option(scene, config), '<worldbody>']
    for k, (n, p) in enumerate(pile_planes()):
        out.append(f'<geom name="plane{k}" type="plane" size="0 0 1" pos="{vec(p)}" '
                   f'zaxis="{vec(n)}" contype="0" conaffinity="1" {fr}/>')
    for b in range(scene["count"]):
        out.append(f'<body name="cube{b}"><freejoint/>'
                   f'<inertial pos="0 0 0" mass="{m}" diaginertia="{i} {i} {i}"/>'
                   f'<geom name="box{b}" type="box" size="{a / 2} {a / 2} {a / 2}" '
                   f'contype="0" conaffinity="1" {fr}/>')
        for k, c in enumerate(pile_corners()):
            out.append(f'<geom name="c{b}_{k}" type="sphere" size="{PILE_R}" pos="{vec(c)}" '
                       f'contype="1" conaffinity="0" {fr}/>')
        out.append('</body>')
    out += ['</worldbody>', '</mujoco>']
    return "\n".join(out)


def mj_iterations(d):
    """The solver's iterations over the last step: with several constraint islands (MuJoCo
    solves each on its own; d.solver_niter holds the first mjNISLAND of them) the largest, so
    a step converged when every island did; `solver_niter[0]` without islands."""
    k = min(int(d.nisland), len(d.solver_niter))
    return int(d.solver_niter[:k].max()) if k > 1 else int(d.solver_niter[0])


def run_mujoco_pile(scene, config, before_step=None):
    """Run the pile in one MuJoCo config from `pile_layout`'s poses (written into qpos to the
    bit; MuJoCo normalizes the quaternions as it steps), gravity as xfrc_applied; the measures
    after every step (`PileMeasures`). `before_step`: as `run_mujoco`'s."""
    import mujoco
    m = mujoco.MjModel.from_xml_string(pile_mjcf(scene, config))
    d = mujoco.MjData(m)
    n = scene["count"]
    bids = np.array([m.body(f"cube{b}").id for b in range(n)])
    qa = m.jnt_qposadr[m.body_jntadr[bids]][:, None]
    va = m.jnt_dofadr[m.body_jntadr[bids]][:, None]
    for b in range(n):
        p, q = pile_layout(b)
        d.qpos[qa[b, 0]:qa[b, 0] + 7] = p + q  # freejoint: position, then quaternion (w, x, y, z)
    d.xfrc_applied[bids, 2] = -G * PILE["mass"]  # MuJoCo never clears xfrc_applied

    def state():
        """Centres, quaternions (w, x, y, z), world linear and body-frame angular velocities
        (the kinetic energy of an isotropic inertia takes |omega| in any frame)."""
        return (d.qpos[qa + np.arange(3)], d.qpos[qa + np.arange(3, 7)],
                d.qvel[va + np.arange(3)], d.qvel[va + np.arange(3, 6)])

    meas = PileMeasures(scene, *state())
    times, niter, islands = [], [], 0
    for k in range(int(round(scene["duration_s"] / scene["dt"]))):
        if before_step:
            before_step(m, d, k)
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        times.append(time.perf_counter() - t0)
        niter.append(mj_iterations(d))
        islands = max(islands, int(d.nisland))
        meas.step(*state())
    it = np.asarray(niter)
    out = {"measures": meas, "step_times": times, "islands_max": islands,
           "converged_fraction": float(np.mean(it < m.opt.iterations)),
           "iterations_per_step_mean": float(it.mean()),
           "iterations_per_step_max": int(it.max())}
    out.update(mj_contact_params(m))
    return out


def mujoco_defaults():
    """MuJoCo's default contact parameters and solver options as this MuJoCo reports them."""
    import mujoco
    m = mujoco.MjModel.from_xml_string('<mujoco><worldbody><geom type="plane" size="1 1 1"/>'
                                       '</worldbody></mujoco>')
    return {"solref": m.geom_solref[0].tolist(), "solimp": m.geom_solimp[0].tolist(),
            "iterations": int(m.opt.iterations), "tolerance": float(m.opt.tolerance),
            "noslip_tolerance": float(m.opt.noslip_tolerance), "integrator": "Euler",
            "solver": "Newton"}


# ----------------------------------------------------------------------------- Drake
DRAKE_APPROX = {"sap": "kSap", "tamsi": "kTamsi", "similar": "kSimilar", "lagged": "kLagged"}


def drake_com_force(body, f):
    """Drake's applied force `f` (N, world frame) at `body`'s origin, its centre of mass."""
    from pydrake.all import ExternallyAppliedSpatialForce, SpatialForce
    e = ExternallyAppliedSpatialForce()
    e.body_index = body.index()
    e.p_BoBq_B = np.zeros(3)
    e.F_Bq_W = SpatialForce(np.zeros(3), np.asarray(f, float))
    return e


def drake_plant(builder, scene, config):
    """A discrete MultibodyPlant at the scene's dt with point contact and the configuration's
    discrete approximation; returns (plant, scene_graph)."""
    from pydrake.all import AddMultibodyPlantSceneGraph, ContactModel, DiscreteContactApproximation
    plant, sg = AddMultibodyPlantSceneGraph(builder, time_step=scene["dt"])
    plant.set_contact_model(ContactModel.kPoint)
    approx = DRAKE_APPROX[DRAKE_CONFIGS[config][0]]
    plant.set_discrete_contact_approximation(getattr(DiscreteContactApproximation, approx))
    return plant, sg


def drake_props(scene, config, mu):
    """Proximity properties of one geometry: friction mu (static = dynamic) and, in a
    near-rigid configuration, its point stiffness and SAP relaxation time (everything unset
    takes SceneGraph's defaults)."""
    from pydrake.all import CoulombFriction, ProximityProperties
    from pydrake.geometry import AddContactMaterial
    _, k, tau = DRAKE_CONFIGS[config]
    p = ProximityProperties()
    AddContactMaterial(friction=CoulombFriction(mu, mu), point_stiffness=k, properties=p)
    if tau == "dt":
        p.AddProperty("material", "relaxation_time", scene["dt"])
    return p


def drake_build(scene, config):
    """Drake diagram of a scene: discrete MultibodyPlant at dt, point contact, the
    configuration's discrete approximation and contact parameters, zero plant gravity. Every
    geometry's `margin` proximity property is left unset."""
    from pydrake.all import (DiagramBuilder, HalfSpace, RigidTransform, Simulator,
                             SpatialInertia, Sphere, UnitInertia)
    builder = DiagramBuilder()
    plant, _ = drake_plant(builder, scene, config)
    plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, 0.0])

    def props():
        return drake_props(scene, config, scene["mu"])

    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(), "plane", props())
    if scene["body"] == "cube":
        body = plant.AddRigidBody("body", SpatialInertia(M_CUBE, [0, 0, 0], UnitInertia.SolidBox(A, A, A)))
        for k, c in enumerate(corner_centres()):
            plant.RegisterCollisionGeometry(body, RigidTransform(list(c)), Sphere(R_CORNER),
                                            f"corner{k}", props())
    else:
        body = plant.AddRigidBody("body", SpatialInertia(M_BALL, [0, 0, 0], UnitInertia.SolidSphere(R_BALL)))
        plant.RegisterCollisionGeometry(body, RigidTransform(), Sphere(R_BALL), "ball", props())
    plant.Finalize()
    diagram = builder.Build()
    sim = Simulator(diagram)
    ctx = sim.get_mutable_context()
    pctx = plant.GetMyMutableContextFromRoot(ctx)
    plant.SetFreeBodyPose(pctx, body, RigidTransform([0.0, 0.0, start_height(scene)]))
    return sim, plant, pctx, body


def run_drake(scene, config):
    """Settle, then run one scene in one Drake config; returns the samples (and stats)."""
    from pydrake.all import SpatialVelocity
    sim, plant, pctx, body = drake_build(scene, config)
    port = plant.get_applied_spatial_force_input_port()
    dt = scene["dt"]

    def set_force(f):
        """Fix the plant's applied-force input to force f at the centre of mass."""
        port.FixValue(pctx, [drake_com_force(body, f)])

    def pv():
        """Centre of mass position and linear velocity (world = scene frame)."""
        q, v = plant.GetPositions(pctx), plant.GetVelocities(pctx)
        return q[4:7].copy(), v[3:6].copy()  # quaternion floating joint: q = [quat, p], v = [w, v]

    sim.Initialize()
    step = 0
    # Every AdvanceTo target lies half a step past an update time, so each call performs exactly
    # one discrete update whatever the round-off in k * dt.
    for k in range(int(round(scene["settle_s"] / dt))):
        set_force(applied_force(scene, k * dt, True))
        step += 1
        sim.AdvanceTo((step - 0.5) * dt)
    V_WB = plant.EvalBodySpatialVelocityInWorld(pctx, body)
    plant.SetFreeBodySpatialVelocity(pctx, body, SpatialVelocity(
        V_WB.rotational(), V_WB.translational() + np.asarray(scene["v0"])))
    p, v = pv()
    P, V, times = [p], [v], []
    stats = ContactStats(body_mass(scene) * G, dt, scene["mu"])
    results = plant.get_contact_results_output_port()
    for k in range(int(round(scene["duration_s"] / dt))):
        set_force(applied_force(scene, k * dt, False))
        step += 1
        t0 = time.perf_counter()
        sim.AdvanceTo((step - 0.5) * dt)
        times.append(time.perf_counter() - t0)
        p, v = pv()
        P.append(p)
        V.append(v)
        stats.step(drake_contacts(results.Eval(pctx), dt))
    # pydrake exposes no solver statistics; a discrete update that fails raises instead.
    return {"P": np.array(P), "V": np.array(V), "step_times": times, "converged_fraction": None,
            "in_contact": stats.in_contact, **stats.result()}


def drake_contacts(contacts, dt):
    """(lambda_n, |lambda_t|, gap, v_n, |v_t|) of each point contact of Drake's last discrete
    update: the force along and across the pair's normal times dt, minus the penetration depth
    as the gap, the separation and slip speeds (Drake reports the step's contact results with
    the velocities the update produced). The force is the one on body B, and the normal
    `nhat_BA_W` points from B into A, so the push on B is along minus it."""
    out = []
    for i in range(contacts.num_point_pair_contacts()):
        info = contacts.point_pair_contact_info(i)
        n = info.point_pair().nhat_BA_W
        f = info.contact_force()
        along = f @ n
        ft = float(np.linalg.norm(f - along * n))
        out.append((-along * dt, ft * dt, -info.point_pair().depth, info.separation_speed(),
                    info.slip_speed()))
    return out


def drake_stack_filters(sg, floor, spheres, boxes):
    """Resting "face" in Drake: exclude every sphere-sphere pair, every box-box and box-floor
    pair, and cube j's spheres from every box but cube j-1's, so each cube's spheres touch the
    floor and the face below only (boxes[j]: cube j's box id, None for the top cube)."""
    from pydrake.all import CollisionFilterDeclaration, GeometrySet
    f = sg.collision_filter_manager()
    every = [g for s in spheres for g in s]
    solid = [g for g in boxes if g is not None]
    f.Apply(CollisionFilterDeclaration().ExcludeWithin(GeometrySet(every)))
    f.Apply(CollisionFilterDeclaration().ExcludeWithin(GeometrySet(solid + [floor])))
    for j, s in enumerate(spheres):
        other = [g for i, g in enumerate(boxes) if g is not None and i != j - 1]
        if other:
            f.Apply(CollisionFilterDeclaration().ExcludeBetween(GeometrySet(s), GeometrySet(other)))


def run_drake_stack(scene, config):
    """Run the stack or tower in one Drake config from the same pose as ours (touching, at
    rest, no settle); centres and penetration. Resting "face": every cube but the top one also
    carries its box, touched by the spheres of the cube above only (`drake_stack_filters`)."""
    from pydrake.all import (Box, DiagramBuilder, HalfSpace, RigidTransform, Simulator,
                             SpatialInertia, Sphere, UnitInertia)
    builder = DiagramBuilder()
    plant, sg = drake_plant(builder, scene, config)
    plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, 0.0])
    # Drake combines two frictions as 2 a b / (a + b): this floor value gives mu_floor with the
    # cubes'.
    mc = scene["mu_cubes"]
    mf = scene["mu"] * mc / (2 * mc - scene["mu"])
    floor = plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(),
                                            "plane", drake_props(scene, config, mf))
    n = len(scene["masses"])
    face = scene["resting"] == "face"
    bodies, spheres, boxes = [], [], []
    for b, m in enumerate(scene["masses"]):
        body = plant.AddRigidBody(f"cube{b}", SpatialInertia(m, [0, 0, 0], UnitInertia.SolidBox(A, A, A)))
        spheres.append([plant.RegisterCollisionGeometry(body, RigidTransform(list(c)), Sphere(R_CORNER),
                                                        f"c{b}_{k}", drake_props(scene, config, mc))
                        for k, c in enumerate(corner_centres())])
        boxes.append(plant.RegisterCollisionGeometry(body, RigidTransform(), Box(A, A, A), f"face{b}",
                                                     drake_props(scene, config, mc))
                     if face and b + 1 < n else None)
        bodies.append(body)
    plant.Finalize()
    if face:
        drake_stack_filters(sg, floor, spheres, boxes)
    sim = Simulator(builder.Build())
    ctx = sim.get_mutable_context()
    pctx = plant.GetMyMutableContextFromRoot(ctx)
    for b, body in enumerate(bodies):
        plant.SetFreeBodyPose(pctx, body, RigidTransform([0.0, 0.0, (b + 0.5) * A]))
    forces = [drake_com_force(b, [0.0, 0.0, -G * m]) for b, m in zip(bodies, scene["masses"])]
    plant.get_applied_spatial_force_input_port().FixValue(pctx, forces)
    corners = np.array(corner_centres())

    def state():
        X = [plant.EvalBodyPoseInWorld(pctx, b) for b in bodies]
        sph = [np.array([x.multiply(c) for c in corners]) for x in X]
        return (np.array([x.translation() for x in X]),
                stack_penetration(scene, sph, [(x.translation(), x.rotation().matrix()) for x in X]))

    sim.Initialize()
    dt, step = scene["dt"], 0
    c, _ = state()
    C, pen, times = [c], [], []
    for _ in range(int(round(scene["duration_s"] / dt))):
        step += 1
        t0 = time.perf_counter()
        sim.AdvanceTo((step - 0.5) * dt)
        times.append(time.perf_counter() - t0)
        c, p = state()
        C.append(c)
        pen.append(p)
    return {"C": np.array(C), "penetration": pen, "step_times": times,
            "converged_fraction": None}


def drake_pile_filters(sg, planes, spheres, boxes):
    """The pile's pairs in Drake: exclude every sphere-sphere pair and every pair among boxes
    and planes, so a sphere meets the planes and the other cubes' boxes (SceneGraph already
    excludes the geometries of one body)."""
    from pydrake.all import CollisionFilterDeclaration, GeometrySet
    f = sg.collision_filter_manager()
    f.Apply(CollisionFilterDeclaration().ExcludeWithin(GeometrySet(spheres)))
    f.Apply(CollisionFilterDeclaration().ExcludeWithin(GeometrySet(boxes + planes)))


def run_drake_pile(scene, config):
    """Run the pile in one Drake config from `pile_layout`'s poses (written into the free
    bodies' positions to the bit), gravity as applied spatial forces at the centres; the
    measures after every step (`PileMeasures`)."""
    from pydrake.all import (Box, DiagramBuilder, HalfSpace, RigidTransform, Simulator,
                             SpatialInertia, Sphere, UnitInertia)
    a, mass = PILE["side"], PILE["mass"]
    builder = DiagramBuilder()
    plant, sg = drake_plant(builder, scene, config)
    plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, 0.0])

    def props():
        return drake_props(scene, config, scene["mu"])

    planes = [plant.RegisterCollisionGeometry(plant.world_body(), HalfSpace.MakePose(n, p),
                                              HalfSpace(), f"plane{k}", props())
              for k, (n, p) in enumerate(pile_planes())]
    bodies, spheres, boxes = [], [], []
    for b in range(scene["count"]):
        body = plant.AddRigidBody(f"cube{b}", SpatialInertia(mass, [0, 0, 0],
                                                            UnitInertia.SolidBox(a, a, a)))
        spheres += [plant.RegisterCollisionGeometry(body, RigidTransform(c), Sphere(PILE_R),
                                                    f"c{b}_{k}", props())
                    for k, c in enumerate(pile_corners())]
        boxes.append(plant.RegisterCollisionGeometry(body, RigidTransform(), Box(a, a, a),
                                                     f"box{b}", props()))
        bodies.append(body)
    plant.Finalize()
    drake_pile_filters(sg, planes, spheres, boxes)
    sim = Simulator(builder.Build())
    pctx = plant.GetMyMutableContextFromRoot(sim.get_mutable_context())
    qs = np.array([b.floating_positions_start() for b in bodies])[:, None]
    vs = np.array([b.floating_velocities_start_in_v() for b in bodies])[:, None]
    q0 = plant.GetPositions(pctx)
    for b in range(len(bodies)):
        p, q = pile_layout(b)
        q0[qs[b, 0]:qs[b, 0] + 7] = q + p  # quaternion floating joint: (w, x, y, z), then position
    plant.SetPositions(pctx, q0)
    forces = [drake_com_force(b, [0.0, 0.0, -G * mass]) for b in bodies]
    plant.get_applied_spatial_force_input_port().FixValue(pctx, forces)

    def state():
        """Centres, quaternions (w, x, y, z), linear and angular velocities in the world
        (v = [omega, v] per body)."""
        q, v = plant.GetPositions(pctx), plant.GetVelocities(pctx)
        return (q[qs + np.arange(4, 7)], q[qs + np.arange(4)], v[vs + np.arange(3, 6)],
                v[vs + np.arange(3)])

    sim.Initialize()
    meas = PileMeasures(scene, *state())
    dt, times = scene["dt"], []
    for step in range(1, int(round(scene["duration_s"] / dt)) + 1):
        t0 = time.perf_counter()
        sim.AdvanceTo((step - 0.5) * dt)  # half a step past an update: exactly one update
        times.append(time.perf_counter() - t0)
        meas.step(*state())
    return {"measures": meas, "step_times": times, "converged_fraction": None}


def drake_defaults():
    """Drake's default contact parameters as used here: SceneGraph's default proximity properties
    (point_stiffness per geometry, Hunt-Crossley dissipation for TAMSI/similar/lagged, SAP's
    relaxation_time), which fill in what the geometries leave unset, plus the combined normal
    stiffness measured on the settled cube (TAMSI, whose static penetration is force/stiffness):
    load per contact / depth. MultibodyPlant's own penetration-allowance estimate (still
    reported by get_contact_penalty_method_time_scale) is not what these contacts use."""
    from importlib.metadata import version
    from pydrake.all import MultibodyPlantConfig
    from pydrake.geometry import SceneGraphConfig
    dp = SceneGraphConfig().default_proximity_properties
    cfg = MultibodyPlantConfig()
    out = {"drake_version": version("drake"), "contact_model": "point",
           "default_contact_model": cfg.contact_model,
           "default_discrete_contact_approximation": cfg.discrete_contact_approximation,
           "stiction_tolerance_mps": cfg.stiction_tolerance,
           "point_stiffness_per_geometry_N_per_m": dp.point_stiffness,
           "combined_point_stiffness_N_per_m": dp.point_stiffness / 2,  # two equal geometries in series
           "hunt_crossley_dissipation_s_per_m": dp.hunt_crossley_dissipation,
           "relaxation_time_s": dp.relaxation_time}
    spec = dict(scene_specs()["sliding_cube"], duration_s=0.0)
    r = run_drake(spec, "tamsi")
    depth = initial_height(spec) - r["P"][0, 2]
    out["measured_combined_stiffness_N_per_m"] = body_mass(spec) * G / 4 / depth  # 4 contacts
    return out


# ----------------------------------------------------------------------------- metrics
def crossing(t, s, thr, below):
    """First time the speed s crosses thr (downward if below, else upward) after t[0], linearly
    interpolated between samples; None if it never does."""
    hit = (s <= thr) if below else (s >= thr)
    idx = np.nonzero(hit[1:])[0]
    if idx.size == 0:
        return None
    k = int(idx[0]) + 1
    if s[k] == s[k - 1]:
        return float(t[k])
    return float(t[k - 1] + (s[k - 1] - thr) / (s[k - 1] - s[k]) * (t[k] - t[k - 1]))


def interp_rows(t, X, tq):
    """Rows of X linearly interpolated at time tq."""
    return np.array([np.interp(tq, t, X[:, j]) for j in range(X.shape[1])])


def drop_metrics(scene, P, V):
    """A drop's metrics from the samples P, V (rows at t = k dt from t = 0), with the gap the
    lowest point's height (a flat cube does not tilt): the touch (first gap < TOUCH, None if
    never), the bounce (mm; the largest gap after the touch: how high the impact throws the
    body back), the largest and the final penetration (mm), and the contact time (s) from the
    touch to the last sample with |v_z| > V_THR, the time the impact takes to bring the body
    to rest (0 for a model that stops it at the touch). Without a touch: bounce and contact
    time None."""
    t = np.arange(len(P)) * scene["dt"]
    gap = P[:, 2] - initial_height(scene)
    out = {"penetration_max_mm": float(max(0.0, -gap.min()) * 1e3),
           "rest_penetration_mm": float(max(0.0, -gap[-1]) * 1e3)}
    hit = np.nonzero(gap < TOUCH)[0]
    if hit.size == 0:
        return dict(out, touch_time_s=None, bounce_height_mm=None, contact_time_s=None)
    k0 = int(hit[0])
    after = gap[k0 + 1:]
    moving = np.nonzero(np.abs(V[k0:, 2]) > V_THR)[0]
    k1 = k0 + int(moving[-1]) if moving.size else k0
    return dict(out, touch_time_s=float(t[k0]),
                bounce_height_mm=float(max(0.0, after.max()) * 1e3) if after.size else 0.0,
                contact_time_s=float(t[k1] - t[k0]))


def metrics(scene, P, V):
    """Scene metrics from the samples P, V (rows at t = 0, dt, ..., the first one at t = 0).
    Speed is the tangential speed |(v_x, v_y)| (z is the normal in every scene), for every
    engine, and stop and breakaway times are interpolated linearly between samples. A drop
    has its own (`drop_metrics`): the lift and settled penetration measured from the first
    sample mean nothing for a body that starts in the air."""
    if scene["kind"] == "drop":
        return drop_metrics(scene, P, V)
    t = np.arange(len(P)) * scene["dt"]
    s = np.linalg.norm(V[:, :2], axis=1)
    D = P - P[0]
    an = scene["analytic"]
    out = {"max_lift_mm": float(max(0.0, (P[1:, 2] - P[0, 2]).max()) * 1e3),
           "settled_penetration_mm": float((initial_height(scene) - P[0, 2]) * 1e3),
           "final_speed_mps": float(s[-1])}
    kind = scene["kind"]
    if kind == "slide":
        u = np.asarray(scene["v0"]) / np.linalg.norm(scene["v0"])
        perp = np.array([-u[1], u[0], 0.0])
        ts = crossing(t, s, V_THR, below=True)
        out["stop_time_s"] = ts
        out["stop_time_rel_error"] = None if ts is None else ts / an["stop_time_s"] - 1
        dh = D[:, :2]
        out["stop_distance_m"] = (None if ts is None else
                                  float(np.linalg.norm(interp_rows(t, dh, ts))))
        out["final_distance_m"] = float(np.linalg.norm(dh[-1]))
        out["lateral_drift_mm"] = float(D[-1] @ perp * 1e3)
        out["lateral_drift_max_mm"] = float(np.abs(D @ perp).max() * 1e3)
        ang = math.atan2(D[-1] @ perp, D[-1] @ u)
        out["direction_error_deg"] = math.degrees(ang)
        # translational kinetic energy against 0.5 m (1 - mu g t)^2 while it should slide
        te = an["stop_time_s"]
        w = t <= te
        ke = 0.5 * M_CUBE * s[w] ** 2
        ke_exact = 0.5 * M_CUBE * (1 - scene["mu"] * G * t[w]) ** 2
        out["ke_max_abs_error_J"] = float(np.abs(ke - ke_exact).max())
    elif kind == "drag":
        tb = crossing(t, s, V_THR, below=False)
        out["breakaway_time_s"] = tb
        out["breakaway_time_error_s"] = None if tb is None else tb - an["breakaway_time_s"]
        for tq, key in ((0.5, "0_5s"), (1.0, "1_0s")):
            k = int(round(tq / scene["dt"]))
            if k < len(t):
                out[f"velocity_error_{key}"] = float(V[k, 0] - an[f"v_{key}"])
                out[f"velocity_rel_error_{key}"] = float(V[k, 0] / an[f"v_{key}"] - 1)
            else:
                out[f"velocity_error_{key}"] = None
                out[f"velocity_rel_error_{key}"] = None
    elif kind == "hold":
        out["creep_mm"] = float(np.linalg.norm(D[-1, :2]) * 1e3)
        out["creep_rate_mm_per_s"] = out["creep_mm"] / t[-1]
        k1 = int(round(1.0 / scene["dt"]))
        out["creep_after_1s_mm"] = (float(np.linalg.norm(P[-1, :2] - P[k1, :2]) * 1e3)
                                    if k1 < len(P) - 1 else None)
        out["breakaway_time_s"] = crossing(t, s, V_THR, below=False)
    elif kind == "accel":
        tb = crossing(t, s, V_THR, below=False)
        out["breakaway_time_s"] = tb
        w = t >= (tb if tb is not None else t[-1] + 1)
        if w.sum() >= 3:
            a = float(np.polyfit(t[w], V[w, 0], 1)[0])  # least-squares slope of v_x(t)
            out["acceleration_mps2"] = a
            out["acceleration_error"] = a / an["acceleration_mps2"] - 1
        else:
            out["acceleration_mps2"] = None
            out["acceleration_error"] = None
    return out


def lift_over_estimate(scene, P, V, in_contact, tau_d):
    """Median, over the steps in contact sliding faster than 1 cm/s, of the lift above the
    first sample over Castro et al.'s estimate `(dt + tau_d) mu |v_t|` (sec. V-A)."""
    s = np.linalg.norm(V[1:, :2], axis=1)
    lift = P[1:, 2] - P[0, 2]
    k = np.asarray(in_contact, bool) & (s > 1e-2)
    if not k.any():
        return None
    return float(np.median(lift[k] / ((scene["dt"] + tau_d) * scene["mu"] * s[k])))


def slip_direction(scene):
    """The unit direction a scene's body slides along (its launch or drag, else +x)."""
    v = np.asarray(scene["v0"], float) + np.asarray(scene["force_rate"], float)
    n = np.linalg.norm(v)
    return v / n if n > 0 else np.array([1.0, 0.0, 0.0])


def stop_lag_prediction(scene, V, damping):
    """MuJoCo's late stop from its soft friction: near zero slip friction is a damper of rate
    `r = d b` (`mujoco_friction_damping`), so it saturates only above `v* = mu g / r` and below
    it the speed decays by `1 - r dt` a step (Euler: the damping acts on the step's starting
    velocity). It reaches the 1 mm/s threshold `ln(v* / 1 mm/s) / -ln(1 - r dt)` steps after
    v*, where the exact motion stops `v* / (mu g) = 1 / r` after it: the lag is the difference.
    `r` is the median over the steps sliding slower than 0.1 m/s (the tail the lag comes from)."""
    s = np.linalg.norm(V[1:, :2], axis=1)
    db = [x for x, v in zip(damping, s) if x is not None and V_THR < v < 0.1]
    if not db:
        return {}
    rate, dt = float(np.median(db)), scene["dt"]
    v_star = scene["mu"] * G / rate
    if v_star <= V_THR or rate * dt >= 1.0:
        # The damper kills the slip within a step (or friction saturates down to the
        # threshold): the stop is the exact one, to a step.
        return {"friction_damping_rate_per_s": rate, "stop_lag_predicted_s": 0.0}
    steps = math.log(v_star / V_THR) / -math.log(1.0 - rate * dt)
    return {"friction_damping_rate_per_s": rate,
            "stop_lag_predicted_s": steps * dt - 1.0 / rate}


def peer_model_checks(scene, engine, config, r, rec):
    """What each peer's model predicts and the run can check: Drake SAP's lift over Castro et
    al.'s estimate (tau_d: the configuration's relaxation time, SceneGraph's default 0.1 s
    otherwise); MuJoCo's stop lag on the sliding scenes against its soft-friction prediction."""
    out = {}
    if engine == "drake" and DRAKE_CONFIGS[config][0] == "sap" and scene["kind"] in ("slide", "accel"):
        tau = scene["dt"] if DRAKE_CONFIGS[config][2] == "dt" else 0.1
        out["lift_over_estimate"] = lift_over_estimate(scene, r["P"], r["V"], r["in_contact"], tau)
        out["relaxation_time_s"] = tau
    if engine == "mujoco" and scene["kind"] == "slide" and rec.get("stop_time_s") is not None:
        out["stop_lag_s"] = rec["stop_time_s"] - scene["analytic"]["stop_time_s"]
        out.update(stop_lag_prediction(scene, r["V"], r["damping"]))
    return out


def consistency_error(scene, P):
    """Integral over the run of |x - x_exact| (m s), trapezoids over the samples, with the
    dragged cube's exact x = (10/3)(t - t0)^3 after t0 (F = 20 t N, m = 1 kg)."""
    t = np.arange(len(P)) * scene["dt"]
    t0 = scene["analytic"]["breakaway_t0_s"] if "breakaway_t0_s" in scene["analytic"] else \
        scene["mu"] * M_CUBE * G / 20.0
    exact = np.where(t > t0, 20.0 / (6.0 * M_CUBE) * np.clip(t - t0, 0, None) ** 3, 0.0)
    err = np.abs(P[:, 0] - P[0, 0] - exact)
    return float(np.sum(0.5 * (err[1:] + err[:-1]) * np.diff(t)))


def pair_collapse(lo, hi):
    """Why the cube centred at `hi` no longer stands on the one at `lo` (None while it does):
    more than a corner radius off it horizontally ("off"), below it ("below"), or the cubes
    overlapping by more than a corner sphere's diameter, `a - (z_hi - z_lo) > 2 r`, so the
    spheres have passed through (or into) the cube below ("through"). Less is penetration."""
    if hi[2] < lo[2]:
        return "below"
    if A - (hi[2] - lo[2]) > 2 * R_CORNER:
        return "through"
    if np.linalg.norm(hi[:2] - lo[:2]) > R_CORNER:
        return "off"
    return None


def stack_collapse(C):
    """Per sample, why the stack has collapsed (None while it stands): `pair_collapse` of the
    lowest adjacent pair (k-1, k) that fails, so any failing pair collapses the stack."""
    out = []
    for c in C:
        why = (pair_collapse(c[k - 1], c[k]) for k in range(1, len(c)))
        out.append(next((w for w in why if w is not None), None))
    return out


def stack_metrics(scene, C, pen):
    """Drift of each centre from t = 0 (mm, the largest over the run: of any cube, the bottom
    one, the top one), whether and when the stack collapsed (`stack_collapse`), and the
    penetration (mm) while it stood: after a collapse the overlap is not a penetration."""
    drift = np.linalg.norm(C - C[0], axis=2)  # samples x bodies
    why = stack_collapse(C)
    k = next((i for i, w in enumerate(why) if w is not None), None)
    standing = pen if k is None else pen[:max(k - 1, 0)]  # pen[i] is sample i + 1
    return {"drift_bottom_mm": float(drift[:, 0].max() * 1e3),
            "drift_top_mm": float(drift[:, -1].max() * 1e3),
            "drift_mm": float(drift.max() * 1e3),
            "collapsed": 0 if k is None else 1,
            "collapse_time_s": None if k is None else k * scene["dt"],
            "collapse_reason": None if k is None else why[k],
            "penetration_max_mm": float(max(standing) * 1e3) if standing else None}


def quat_matrices(quat):
    """Rotation matrices (N x 3 x 3) of the quaternions (N x 4, w x y z), normalized first."""
    w, x, y, z = (quat / np.linalg.norm(quat, axis=1, keepdims=True)).T
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                     2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                     2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
                    axis=1).reshape(-1, 3, 3)


def pile_gap(P, quat):
    """The smallest gap (m, negative: the largest overlap) of any corner sphere with a plane
    or with another cube's box (`pile_gaps`)."""
    return min(pile_gaps(P, quat))


def pile_gaps(P, quat):
    """The smallest gaps (m, negative: the largest overlap) of any corner sphere with a plane
    (its signed distance minus r) and with another cube's box, as `pile.rs`'s `against_box`:
    the sphere's centre in the box's frame clamped to the box; outside, the distance to the
    clamped point minus r; inside, minus (r + the distance to the nearest face). All spheres
    against all boxes at once: each coordinate an N x 8 N array (boxes x spheres; numpy
    reduces over a short last axis slowly). P: centres (N x 3), quat: (N x 4, w x y z)."""
    R = quat_matrices(quat)
    half, n = 0.5 * PILE["side"], len(P)
    S = (P[:, None, :] + pile_corners() @ R.transpose(0, 2, 1)).reshape(-1, 3)
    wall = 0.5 * PILE["container"] - np.abs(S[:, :2])
    plane = min(S[:, 2].min(), wall.min()) - PILE_R
    D = [S[None, :, k] - P[:, k, None] for k in range(3)]
    L = [D[0] * R[:, 0, k, None] + D[1] * R[:, 1, k, None] + D[2] * R[:, 2, k, None]
         for k in range(3)]  # (R_j' (s - p_j))_k at (j, s)
    d = [x - np.clip(x, -half, half) for x in L]
    out = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    # inside: minus the nearest face's distance
    inside = np.maximum(np.maximum(np.abs(L[0]), np.abs(L[1])), np.abs(L[2])) - half
    gap = np.where(out > 0.0, out, inside) - PILE_R
    gap[np.repeat(np.arange(n), 8), np.arange(8 * n)] = np.inf  # a cube's own box
    return float(plane), float(gap.min())


class PileMeasures:
    """The pile's measures after every step, from the cubes' centres P, quaternions quat
    (w x y z), linear velocities V and angular velocities W (N x 3 or 4 each): the
    penetration (`pile_gap`, 0 without overlap), the total kinetic energy (m |v|^2 / 2 +
    I |omega|^2 / 2, I = m a^2 / 6), the pile's centre of mass (the mean centre: the
    consistency sweep's path), when a corner sphere first came within PILE_MARGIN of another
    cube's box (`stacked`, s; `pile.rs`'s `cube_contacts`), and the last state; the start's
    smallest gap."""

    def __init__(self, scene, P, quat, V, W):
        self.dt = scene["dt"]
        self.start_gap = pile_gap(P, quat)
        self.penetration, self.energy, self.com = [], [], []
        self.stacked = None
        self.last = (P, quat, V, W)

    def step(self, P, quat, V, W):
        """Measure one step's state (arrays of our own: the engines' buffers are indexed out)."""
        m, a = PILE["mass"], PILE["side"]
        container, cubes = pile_gaps(P, quat)
        self.penetration.append(max(0.0, -min(container, cubes)))
        self.com.append(P.mean(axis=0))  # every cube of one mass
        if self.stacked is None and cubes < PILE_MARGIN:
            self.stacked = len(self.com) * self.dt
        self.energy.append(float(0.5 * m * (V * V).sum() + 0.5 * (m * a * a / 6.0) * (W * W).sum()))
        self.last = (P, quat, V, W)


def pile_metrics(scene, meas):
    """The pile's metrics (`PileMeasures`'s samples at t = dt, 2 dt, ...): the largest and the
    final penetration (mm), the final kinetic energy and its largest over the last 0.5 s (J:
    at rest?), the cubes whose centre left the box (|x| or |y| > L/2 or z < 0) at the end, the
    highest centre and the fastest centre at the end, and the start's smallest gap (mm; the
    layout clears everything by more than 1 mm)."""
    pen, ke = np.asarray(meas.penetration), np.asarray(meas.energy)
    t = np.arange(1, len(ke) + 1) * meas.dt
    P, _, V, _ = meas.last
    half = 0.5 * PILE["container"]
    out = (np.abs(P[:, 0]) > half) | (np.abs(P[:, 1]) > half) | (P[:, 2] < 0.0)
    return {"penetration_max_mm": float(pen.max() * 1e3),
            "penetration_end_mm": float(pen[-1] * 1e3),
            "kinetic_energy_end_J": float(ke[-1]),
            "kinetic_energy_max_last_0_5s_J": float(ke[t >= t[-1] - PILE_REST_S - 1e-9].max()),
            "escaped": int(out.sum()), "height_end_m": float(P[:, 2].max()),
            "speed_max_end_mps": float(np.linalg.norm(V, axis=1).max()),
            "start_gap_min_mm": meas.start_gap * 1e3}


def trajectory(scene, P, V):
    """Every TRAJ_EVERY-th sample as lists t, x, y, z, speed (6 significant digits)."""
    idx = np.arange(0, len(P), TRAJ_EVERY)
    r = lambda a: [float(f"{x:.6g}") for x in a]  # noqa: E731
    return {"t": r(idx * scene["dt"]), "x": r(P[idx, 0]), "y": r(P[idx, 1]), "z": r(P[idx, 2]),
            "speed": r(np.linalg.norm(V[idx], axis=1))}


# ----------------------------------------------------------------------------- driver
def run_one(scene, engine, config):
    """One record: run, compute the metrics; any exception becomes the record's `error`."""
    rec = {"scene": scene["name"], "engine": engine, "config": config, "dt": scene["dt"],
           "duration_s": scene["duration_s"], "settle_s": scene["settle_s"], "mu": scene["mu"],
           "analytic": scene["analytic"]}
    if "mass_ratio" in scene:
        rec["param"] = scene["mass_ratio"]
    elif "count" in scene:
        rec["param"] = scene["count"]
    w0 = time.perf_counter()
    try:
        if scene["kind"] == "grasp":
            r = (run_mujoco_grasp(scene, config) if engine == "mujoco"
                 else run_drake_grasp(scene, config))
            rec.update({k: r[k] for k in ("secure_pitch_deg", "loose_pitch_deg",
                                          "secure_slip_um_s")})
        elif scene["kind"] == "pile":
            r = (run_mujoco_pile(scene, config) if engine == "mujoco"
                 else run_drake_pile(scene, config))
            rec.update(pile_metrics(scene, r["measures"]))
        elif scene["kind"] == "stack":
            r = (run_mujoco_stack(scene, config) if engine == "mujoco"
                 else run_drake_stack(scene, config))
            rec.update(stack_metrics(scene, r["C"], r["penetration"]))
        else:
            r = run_mujoco(scene, config) if engine == "mujoco" else run_drake(scene, config)
            if scene["kind"] == "consistency":
                rec["consistency_error_m_s"] = consistency_error(scene, r["P"])
                rec["breakaway_time_s"] = crossing(np.arange(len(r["P"])) * scene["dt"],
                                                   np.linalg.norm(r["V"], axis=1), V_THR,
                                                   below=False)
            else:
                rec.update(metrics(scene, r["P"], r["V"]))
                rec["trajectory"] = trajectory(scene, r["P"], r["V"])
                rec.update(peer_model_checks(scene, engine, config, r, rec))
        # The solver statistics every engine run reports (MuJoCo's iterations only).
        for k in ("converged_fraction", "iterations_per_step_mean", "iterations_per_step_max",
                  "islands_max",
                  "signorini_max", "gap_lambda_max", "normal_work_J", "friction_ratio_max",
                  "solref", "solimp"):
            if k in r:
                rec[k] = r[k]
        rec["seconds_per_step_median"] = statistics.median(r["step_times"])
    except Exception as e:  # one failing engine/config must not stop the others
        rec["error"] = f"{type(e).__name__}: {e}"
    rec["wall_s"] = time.perf_counter() - w0
    return rec


def run_consistency_sweep(name, sweep, engine, config, dts):
    """A time-step sweep in one configuration of `engine`: the scene `name` at each of `dts`
    (its spec `sweep.spec(dt)`), the first the reference; one record per later step with its
    `consistency_error_m_s`, the path `sweep.path(spec, engine, config) -> (run, T, P)` against
    the reference's (`path_distance`), and where the reference's run has a `stacked` time (the
    pile), `consistency_error_before_stacking_m_s`, the same up to that time, and that time."""
    base = {"scene": name, "engine": engine, "config": config,
            "analytic": {"consistency_error_m_s": 0.0}}
    paths, out, stacked = {}, [], None
    for dt in dts:
        sc = sweep.spec(dt)
        rec = dict(base, dt=dt, duration_s=sc["duration_s"], settle_s=sc["settle_s"],
                   mu=sc["mu"])
        w0 = time.perf_counter()
        try:
            r, T, P = sweep.path(sc, engine, config)
            paths[dt] = (T, P)
            if dt == dts[0]:
                stacked = r.get("stacked")
            rec.update({k: r[k] for k in ("converged_fraction", "iterations_per_step_mean",
                                          "iterations_per_step_max") if r.get(k) is not None})
            rec["seconds_per_step_median"] = statistics.median(r["step_times"])
        except Exception as e:  # noqa: BLE001 - recorded, as run_one does
            rec["error"] = f"{type(e).__name__}: {e}"
        rec["wall_s"] = time.perf_counter() - w0
        if dt != dts[0] or "error" in rec:
            out.append(rec)
    if dts[0] in paths:
        T_ref, P_ref = paths[dts[0]]
        for rec in out:
            if rec["dt"] in paths:
                T, P = paths[rec["dt"]]
                rec["consistency_error_m_s"] = path_distance(T, P, T_ref, P_ref)
                if stacked is not None:
                    # Before a cube first touched a cube in the reference (`pile.rs`'s rule).
                    k = np.asarray(T) <= stacked
                    rec["consistency_error_before_stacking_m_s"] = path_distance(
                        np.asarray(T)[k], np.asarray(P)[k], T_ref, P_ref)
                    rec["reference_stacked_s"] = stacked
    return out


def grasp_path(scene, engine, config):
    """The grasp's run in `engine` and its plate's centre-of-mass path."""
    r = run_mujoco_grasp(scene, config) if engine == "mujoco" else run_drake_grasp(scene, config)
    return r, r["T"], r["P"]


def pile_path(scene, engine, config):
    """The pile's run in `engine` (with `stacked`, when a cube first touched a cube) and its
    centre-of-mass path (after each step)."""
    r = run_mujoco_pile(scene, config) if engine == "mujoco" else run_drake_pile(scene, config)
    r["stacked"] = r["measures"].stacked
    com = r["measures"].com
    return r, (np.arange(len(com)) + 1) * scene["dt"], np.asarray(com)


class Sweep:
    """A consistency sweep: the scene's spec at a time step, its path in an engine, its time
    steps (full and --small), and the Drake configurations that run it (MuJoCo runs each of
    its own)."""

    def __init__(self, spec, path, dts, small_dts, drake):
        self.spec, self.path, self.dts, self.small_dts, self.drake = (
            spec, path, dts, small_dts, drake)

    def configs(self, engine, small):
        """The configurations of `engine` that run this sweep."""
        return [c for c in configs_for(engine, small) if engine == "mujoco" or c in self.drake]


#: The consistency sweeps by record name. Drake runs the grasp's at its defaults and
#: near-rigid (its reference at 1e-5 s: 90 000 steps with the settling, 14-29 s a
#: configuration measured at 1e-4 s, where its eight would take four minutes); the pile's not
#: at all (1.1 ms a step: a minute a configuration for the reference alone).
CONSISTENCY_SWEEPS = {
    "consistency_grasp": Sweep(consistency_grasp_spec, grasp_path, CONSISTENCY_GRASP_DTS,
                               [1e-3, 2e-3, 5e-3], ["sap", "sap-k1e12-taudt"]),
    "consistency_pile": Sweep(consistency_pile_spec, pile_path, CONSISTENCY_PILE_DTS,
                              [1e-3, 2e-3, 5e-3], []),
}


def configs_for(engine, small):
    """Configurations run for one engine (one of each in --small mode)."""
    if small:
        return SMALL_CONFIGS[engine]
    return list(MJ_CONFIGS) if engine == "mujoco" else DRAKE_CONFIGS


def check():
    """Smoke test: sliding cube, MuJoCo elliptic impratio 1 without noslip; 0 if the stop time is
    within 15% of the exact one."""
    sc = scene_specs()["sliding_cube"]
    rec = run_one(sc, "mujoco", "elliptic-impratio1-noslip0")
    ts, exact = rec.get("stop_time_s"), sc["analytic"]["stop_time_s"]
    ok = ts is not None and abs(ts / exact - 1) <= 0.15
    print(f"sliding_cube mujoco elliptic-impratio1-noslip0: stop_time_s = {ts} "
          f"(exact {exact:.4f}) {'ok' if ok else 'FAIL'} {rec.get('error', '')}", file=sys.stderr)
    return 0 if ok else 1


def write_json(out, path):
    """`out` as indented JSON to the file `path`, or to standard output when it is None."""
    text = json.dumps(out, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


def main():
    """Parse the command line, run the selected scenes/engines/configs, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None, help="JSON file (default: stdout)")
    ap.add_argument("--only", default=None, help="comma list of scenes")
    ap.add_argument("--engines", default="mujoco,drake")
    ap.add_argument("--small", action="store_true", help="CI size: 0.3 s runs, one config per engine")
    ap.add_argument("--check", action="store_true", help="MuJoCo sliding-cube smoke test")
    a = ap.parse_args()
    if a.check:
        sys.exit(check())
    specs = scene_specs()
    known = list(specs) + ["pinch_grasp", "stack", "stack_face", "tower", "pile", "consistency",
                           *CONSISTENCY_SWEEPS]
    names = a.only.split(",") if a.only else known
    bad = [n for n in names if n not in known]
    if bad:
        ap.error(f"unknown scene(s) {bad}; known: {known}")
    engines = [e for e in a.engines.split(",") if e]
    w0 = time.perf_counter()
    records = []
    for n in names:
        if n in CONSISTENCY_SWEEPS:
            # Their records compare runs with each other: a sweep per configuration. CI size: the
            # reference at 1 ms, then 2 and 5 ms.
            sweep = CONSISTENCY_SWEEPS[n]
            dts = sweep.small_dts if a.small else sweep.dts
            for eng in engines:
                for cfg in sweep.configs(eng, a.small):
                    for rec in run_consistency_sweep(n, sweep, eng, cfg, dts):
                        records.append(rec)
                        print(f"{n:22s} {eng:6s} {cfg:30s} dt {rec['dt']:<7g} "
                              f"{rec['wall_s']:6.2f} s {rec.get('error', '')}", file=sys.stderr,
                              flush=True)
            continue
        if n in STACK_RESTING:
            runs = [stack_spec(r, name=n) for r in ([1e3] if a.small else STACK_RATIOS)]
        elif n == "tower":
            # CI size: the 5-cube tower only (its duration capped below like the others).
            runs = [tower_spec(c) for c in (TOWER_COUNTS[:1] if a.small else TOWER_COUNTS)]
        elif n == "pile":
            # CI size: the 20-cube pile only (0.3 s, as the others below).
            runs = [pile_spec(c) for c in (PILE_COUNTS[:1] if a.small else PILE_COUNTS)]
        elif n == "pinch_grasp":
            # CI size: 7 s covers the first secure and loose phases.
            runs = [grasp_spec(7.0 if a.small else 12.0)]
        elif n == "consistency":
            runs = [consistency_spec(dt) for dt in ([1e-2, 1e-1] if a.small else CONSISTENCY_DTS)]
        else:
            runs = [dict(specs[n])]
        for sc in runs:
            if a.small and n not in ("stack", "stack_face", "pinch_grasp"):
                sc["duration_s"] = min(sc["duration_s"], 0.3)
            for eng in engines:
                for cfg in configs_for(eng, a.small):
                    rec = run_one(sc, eng, cfg)
                    records.append(rec)
                    print(f"{n:22s} {eng:6s} {cfg:30s} dt {sc['dt']:<7g} "
                          f"{sc.get('mass_ratio', sc.get('count', ''))!s:8s} {rec['wall_s']:6.2f} s "
                          f"{rec.get('error', '')}", file=sys.stderr, flush=True)
    out = {"small": a.small, "dt": DT, "settle_s": SETTLE_S, "speed_threshold_mps": V_THR,
           "gravity_mode": "body force m g at the CoM, engine gravity zero; slopes tilt gravity",
           "total_wall_s": None, "records": records}
    if "mujoco" in engines:
        import mujoco
        md = mujoco_defaults()
        out["mujoco_version"] = mujoco.__version__
        out["mujoco_solref"] = md["solref"]
        out["mujoco_solimp"] = md["solimp"]
        out["mujoco_defaults"] = md
    if "drake" in engines:
        dd = drake_defaults()
        out["drake_version"] = dd["drake_version"]
        out["drake_defaults"] = dd
    out["total_wall_s"] = time.perf_counter() - w0
    write_json(out, a.out)


if __name__ == "__main__":
    main()
