"""Run the benchmark scenes in MuJoCo (3 configs) and Drake (SAP) and write results/*.json + a
markdown table.  Usage:  python3 bench.py [--quick] [--only balls|clutter|sphere] [--no-drake]"""
import argparse, json, os, sys, time, math
import numpy as np
import scenes as S

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")  # default of --out


def stats(ts):
    a = np.asarray(ts, float)
    if a.size == 0:
        return {}
    return {"median_ms": float(np.median(a) * 1e3), "p95_ms": float(np.percentile(a, 95) * 1e3),
            "mean_ms": float(a.mean() * 1e3)}


# --------------------------------------------------------------------------- MuJoCo
def mj_start(scene, cfg):
    """The model and data of `scene` at the first timed step (settled and launched)."""
    import mujoco
    m, d = S.mj_build(scene, cfg)
    if scene.get("settle"):
        d.qvel[:] = 0
        for _ in range(scene["settle"]):
            mujoco.mj_step(m, d)
        d.time = 0.0
        mujoco.mj_forward(m, d)
        S.mj_set_velocities(m, d, [(l["v"], l["w"]) for l in scene["launch"]])
    return m, d


def mj_stages(scene, cfg):
    """The same steps again, each made of mj_step's stages called one by one and timed apart
    (mjData.timer stays empty without a timer callback, and a Python callback would distort a
    step of a tenth of a millisecond): collision (mj_collision, run a second time on a copy of
    the data mj_fwdPosition just made, which gives the same contacts), the rest of
    mj_fwdPosition (kinematics, M and its factor, the constraints and islands) with
    mj_fwdVelocity, mj_fwdActuation and mj_fwdAcceleration (the smooth dynamics: together
    "build"), mj_fwdConstraint ("solve") and mj_Euler ("integrate"). Sensors and energy, which
    mj_step would also evaluate, are absent from these scenes. Medians over the steps, in ms,
    and the medians of the per-step sums, whole and after collision (five Python calls where
    mj_step is one)."""
    import mujoco
    m, d = mj_start(scene, cfg)
    # mj_collision clears the arena that holds the constraints mj_fwdPosition made, so its
    # second run is timed on a copy of the data (made untimed), not on the stepped data.
    probe = mujoco.MjData(m)
    pc = time.perf_counter
    parts = {"collision": [], "build": [], "solve": [], "integrate": [], "total": [],
             "after_collision": []}
    for _ in range(scene["nsteps"]):
        t0 = pc(); mujoco.mj_fwdPosition(m, d); t1 = pc()
        mujoco.mj_copyData(probe, m, d)
        t2 = pc(); mujoco.mj_collision(m, probe); collision = pc() - t2
        t2 = pc()
        mujoco.mj_fwdVelocity(m, d); mujoco.mj_fwdActuation(m, d); mujoco.mj_fwdAcceleration(m, d); t3 = pc()
        mujoco.mj_fwdConstraint(m, d); t4 = pc()
        mujoco.mj_Euler(m, d); t5 = pc()
        parts["collision"].append(collision)
        parts["build"].append((t1 - t0) - collision + (t3 - t2))
        parts["solve"].append(t4 - t3)
        parts["integrate"].append(t5 - t4)
        parts["total"].append((t1 - t0) + (t5 - t2))
        parts["after_collision"].append((t1 - t0) + (t5 - t2) - collision)
    return {k + "_median_ms": float(np.median(v) * 1e3) for k, v in parts.items()}


def run_mujoco(scene, cfg, stages=False):
    import mujoco
    m, d = mj_start(scene, cfg)
    ts, niter, niter_max, ncon, pen, traj = [], [], [], [], [], []
    for k in range(scene["nsteps"]):
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        ts.append(time.perf_counter() - t0)
        ni = d.solver_niter[:max(d.nisland, 1)]
        niter.append(int(ni.sum())); niter_max.append(int(ni.max()))
        ncon.append(int(d.ncon))
        pen.append(float(max(0.0, -d.contact.dist[:d.ncon].min())) if d.ncon else 0.0)
        if scene["name"] == "sphere_on_plane":
            traj.append([d.time, d.qvel[0], d.qvel[4], d.qpos[2]])  # w_y (body frame == world here only about y-axis approx)
    ke = 0.0
    for i in range(1, m.nbody):
        adr = m.jnt_dofadr[m.body_jntadr[i]]
        v = d.qvel[adr:adr + 3]; w = d.qvel[adr + 3:adr + 6]
        ke += 0.5 * m.body_mass[i] * v @ v + 0.5 * (m.body_inertia[i] * w * w).sum()
    res = {"engine": "mujoco " + mujoco.__version__, "config": cfg, "step": stats(ts),
           "solver_niter_sum": {"median": float(np.median(niter)), "p95": float(np.percentile(niter, 95)),
                                "max": int(max(niter)), "mean": float(np.mean(niter))},
           "solver_niter_max_island": {"median": float(np.median(niter_max)), "max": int(max(niter_max))},
           "ncon": {"median": float(np.median(ncon)), "max": int(max(ncon)), "mean": float(np.mean(ncon))},
           "max_penetration_m": float(max(pen)), "final_penetration_m": float(np.max(pen[-max(1, len(pen) // 20):])),
           "final_KE": float(ke)}
    if traj:
        res.update(analyse_roll(scene, np.array(traj), np.array(ncon)))
    if stages:
        res["stages"] = mj_stages(scene, cfg)
    return res


def analyse_roll(scene, traj, ncon):
    """traj rows: t, v_x, w_y, z.  slip = v_x - r w_y."""
    r = 1.0
    t, vx, wy = traj[:, 0], traj[:, 1], traj[:, 2]
    slip = vx - r * wy
    thr = 1e-3 * 2.0
    idx = np.where(np.abs(slip) < thr)[0]
    t_roll = float(t[idx[0]]) if idx.size else float("nan")
    a = scene["analytic"]
    return {"t_roll": t_roll, "t_roll_analytic": a["t_roll"], "t_roll_err": t_roll - a["t_roll"],
            "vx_final": float(vx[-1]), "vx_final_err": float(vx[-1] - a["vx_final"]),
            "wy_final": float(wy[-1]), "slip_final": float(slip[-1]),
            # convex (Anitescu-type) relaxation artifact: sliding produces a separating normal velocity
            # ~ mu*|slip|, so the sphere hops; report max centre height above its settled height and
            # the fraction of sliding-phase steps that actually had a contact.
            "max_lift_m": float(traj[:, 3].max() - traj[0, 3]) if traj.shape[1] > 3 else None,
            "contact_frac_sliding": float(np.mean(ncon[:max(1, int(a["t_roll"] / scene["h"]))] > 0))}


# --------------------------------------------------------------------------- Drake
def run_drake(scene, contact="point", paper_params=False):
    """paper_params: Castro et al.'s clutter parameters (k = 1e12, tau_d = h) instead of Drake's defaults."""
    import pydrake
    kw = dict(stiffness=1e12, relaxation_time=scene["h"]) if paper_params else {}
    sim, plant, pctx, bodies = S.drake_build(scene, contact=contact, **kw)
    h = scene["h"]
    port = plant.get_contact_results_output_port()
    # Advance to half-step targets so every AdvanceTo call crosses exactly one periodic
    # discrete update (avoids float round-off making a call do 0 or 2 steps).
    kstep = 0
    if scene.get("settle"):
        for k in range(scene["settle"]):
            kstep += 1; sim.AdvanceTo((kstep + 0.5) * h)
        from pydrake.all import SpatialVelocity
        for body, l in zip(bodies, scene["launch"]):
            plant.SetFreeBodySpatialVelocity(pctx, body, SpatialVelocity(np.array(l["w"], float), np.array(l["v"], float)))
    ts, ncon, pen, traj = [], [], [], []
    k0 = kstep
    for k in range(scene["nsteps"]):
        kstep += 1
        t0 = time.perf_counter()
        sim.AdvanceTo((kstep + 0.5) * h)
        ts.append(time.perf_counter() - t0)
        cr = port.Eval(pctx)  # sampled port: contacts of the step just taken
        n = cr.num_point_pair_contacts()
        pd = [cr.point_pair_contact_info(i).point_pair().depth for i in range(n)]
        nh = cr.num_hydroelastic_contacts()
        for i in range(nh):  # hydroelastic: count quadrature points (= SAP constraints), no depth
            n += cr.hydroelastic_contact_info(i).contact_surface().num_faces()
        ncon.append(n)
        pen.append(max(pd, default=0.0))
        if scene["name"] == "sphere_on_plane":
            V = plant.EvalBodySpatialVelocityInWorld(pctx, bodies[0])
            traj.append([(kstep - k0) * h, V.translational()[0], V.rotational()[1],
                         plant.EvalBodyPoseInWorld(pctx, bodies[0]).translation()[2]])
    ke = float(plant.CalcKineticEnergy(pctx))
    from importlib.metadata import version
    res = {"engine": "drake " + version("drake"),
           "config": "drake_sap_" + contact + ("_k1e12_taud_h" if paper_params else ""), "step": stats(ts),
           "solver_niter_sum": None,
           "ncon": {"median": float(np.median(ncon)), "max": int(max(ncon)), "mean": float(np.mean(ncon))},
           "max_penetration_m": float(max(pen)), "final_penetration_m": float(np.max(pen[-max(1, len(pen) // 20):])),
           "final_KE": ke}
    if traj:
        res.update(analyse_roll(scene, np.array(traj), np.array(ncon)))
    return res


def scene_list(which, quick, nclutter=(8, 20, 40, 80)):
    out = []
    if which in (None, "sphere"):
        out.append(S.sphere_on_plane())
    if which in (None, "balls"):
        for n in (5, 10, 15):
            for mu in (0.1, 0.5, 1.0, 2.0):
                out.append(S.balls_in_box(n, mu, seed=n))
    if which in (None, "clutter"):
        for n in ((40,) if quick else nclutter):
            out.append(S.clutter(n, T=(2.0 if quick else 10.0)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tag", default=None, help="output name results/bench_<tag>.json")
    ap.add_argument("--nclutter", default="8,20,40,80")
    ap.add_argument("--only", default=None)
    ap.add_argument("--no-drake", action="store_true")
    ap.add_argument("--drake-contact", default="point", help="comma list of point,hydro")
    ap.add_argument("--configs", default="mj_newton_elliptic,mj_newton_pyramidal,mj_default")
    ap.add_argument("--out", default=OUT, help="folder of results/bench_<tag>.json")
    ap.add_argument("--stages", action="store_true",
                    help="also time mj_step's stages one by one on the same steps (mj_stages)")
    ap.add_argument("--drake-paper-params", action="store_true",
                    help="Drake with Castro et al.'s clutter parameters: k = 1e12, tau_d = h")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    allres = []
    for sc in scene_list(a.only, a.quick, [int(x) for x in a.nclutter.split(",")]):
        for cfg in [c for c in a.configs.split(",") if c]:
            t0 = time.time()
            r = run_mujoco(sc, cfg, stages=a.stages)
            r["scene"] = sc["name"]; r["nbodies"] = len(sc["bodies"]); r["h"] = sc["h"]; r["nsteps"] = sc["nsteps"]
            r["total_wall_s"] = time.time() - t0
            allres.append(r); print(json.dumps(r), flush=True)
        for dc in ([] if a.no_drake else a.drake_contact.split(",")):
            t0 = time.time()
            try:
                r = run_drake(sc, dc, paper_params=a.drake_paper_params)
            except Exception as e:  # report and continue
                r = {"config": "drake_sap_" + dc, "error": repr(e)}
            r["scene"] = sc["name"]; r["nbodies"] = len(sc["bodies"]); r["h"] = sc["h"]; r["nsteps"] = sc["nsteps"]
            r["total_wall_s"] = time.time() - t0
            allres.append(r); print(json.dumps(r), flush=True)
    tag = a.tag or a.only or "all"
    with open(os.path.join(a.out, f"bench_{tag}.json"), "w") as f:
        json.dump(allres, f, indent=1)


if __name__ == "__main__":
    main()
