"""The derivative of a trajectory by the chain rule through each step's sensitivities, and the
identification of a sliding box's friction coefficient and initial velocity from a noisy
trajectory with it (issue 43's rollouts and its application).

The scene: a 10 cm box of 1 kg sliding on a plane in MuJoCo (elliptic cones, `condim` 3, 1 ms
steps, Euler), started at `v0` along x, with an applied force `F` along x; each step's
constraint solve is done by a pair through `contactlab.mujoco.step` (the step's metric: the
pair's generalized velocities are the step's). The parameters `theta = (mu, v0, F)`.

**The chain.** Step `k` solves the problem `(M, H, f_k, w_k, mu)` with `f_k = M v_k + h tau_k`
(`tau_k` the step's smooth forces, the applied force among them) and keeps its answer's
velocities `v_{k+1}`; the box's x moves by `x_{k+1} = x_k + h v_{k+1,x}`. So

`dv_{k+1} = jvp({"f": M dv_k + h dtau, "mu": dmu})["v"]`, `dx_{k+1} = dx_k + h dv_{k+1,x}`,

with `dv_0 = e_x dv0`, `dtau = e_x dF` and `dmu` one per contact. A step without a contact
keeps `dv_{k+1} = dv_k`. **What the chain neglects**: the dependence of `M`, `H` (the contact
Jacobian and frames), the smooth forces and the rows' drift targets `w` on the configuration
and the velocity. For a box sliding flat they are constant (it neither turns nor tips), so the
chain is exact up to the solves' accuracy; on a scene that rotates the neglected terms would
show as a gap to the finite differences, which `rollout_gradient`'s caller should measure as
the test does. At the stop the box's x is differentiable (its velocity is zero there), so the
chain holds across it; the impulses are not unique (four corner contacts), and the chain uses
only `v`, which is.
"""

import numpy as np

XML = """<mujoco><option timestep="{dt}" cone="elliptic"/>
<worldbody><geom type="plane" size="50 50 0.1" friction="{mu} 0 0"/>
<body name="box" pos="0 0 0.05"><freejoint/>
<geom type="box" size="0.05 0.05 0.05" condim="3" friction="{mu} 0 0" mass="1"/></body>
</worldbody></mujoco>"""

#: The pair that steps the box: the natural map with Gauss-Newton, to the ruler's `TOL`.
PAIR = ("natural-map", "gauss-newton")
TOL = 1e-12
#: The step and the sampling: 1 kHz.
DT = 1e-3
#: The parameters' names, in `theta`'s order.
PARAMETERS = ("mu", "v0", "F")


def scene(mu):
    """The box's model and data, at rest on the plane (the box's bottom face on it)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(XML.format(mu=repr(float(mu)), dt=DT))
    return model, mujoco.MjData(model)


def rollout(theta, steps, gradient=True):
    """The box's x after each of `steps` steps from `theta = (mu, v0, F)`, and (with
    `gradient`) its derivative with respect to `theta` by the chain rule: `(x, dx)`, `x` of
    shape `(steps,)`, `dx` of `(steps, 3)`."""
    import mujoco

    import contactlab.mujoco as cm

    mu, v0, force = (float(t) for t in theta)
    model, data = scene(mu)
    data.qvel[0] = v0
    data.xfrc_applied[1, 0] = force
    nv = model.nv
    mujoco.mj_forward(model, data)
    mass = np.zeros((nv, nv))
    mujoco.mj_fullM(model, data, mass)
    # Columns: d/dmu, d/dv0, d/dF; dtau per unit F is e_x.
    dv = np.zeros((nv, 3))
    dv[0, 1] = 1.0
    dtau = np.zeros((nv, 3))
    dtau[0, 2] = 1.0
    dx = np.zeros(3)
    xs, dxs = np.zeros(steps), np.zeros((steps, 3))
    for k in range(steps):
        res = cm.step(model, data, *PAIR, tol=TOL)
        if res.status != "converged":
            raise RuntimeError(f"step {k}: the pair's solve is {res.status}")
        if gradient and res.solution is not None:
            s = res.solution
            blocks = len(s.regimes())
            new = np.zeros((nv, 3))
            for j in range(3):
                direction = {"f": mass @ dv[:, j] + DT * dtau[:, j]}
                if j == 0:
                    direction["mu"] = np.ones(blocks)
                new[:, j] = s.jvp(direction)["v"]
            dv = new
        elif gradient:
            dv = dv + DT * np.linalg.solve(mass, dtau)
        dx = dx + DT * dv[0]
        xs[k], dxs[k] = data.qpos[0], dx
    return xs, dxs


def rollout_differences(theta, steps, h=1e-6, columns=(0, 1, 2)):
    """Central differences of the rollout's x with respect to the parameters `columns` (step
    `h` relative to the parameter, absolute for a zero one): `(steps, 3)`, zero elsewhere."""
    out = np.zeros((steps, 3))
    for j in columns:
        step = h * max(abs(theta[j]), 1.0)
        plus, minus = np.array(theta, float), np.array(theta, float)
        plus[j] += step
        minus[j] -= step
        out[:, j] = (rollout(plus, steps, False)[0] - rollout(minus, steps, False)[0]) / (2 * step)
    return out


def stop_step(theta):
    """The step at which the box stops sliding in closed form: `v0 / ((mu g - F/m) dt)`."""
    mu, v0, force = theta
    return int(v0 / ((mu * 9.81 - force) * DT))


def identify(samples, guess, fit=(0, 1), iterations=20, jacobian="chain"):
    """Gauss-Newton on the least-squares misfit `sum_k (x_k(theta) - samples_k)^2` over the
    parameters `fit` (indices into `theta`), the others held at `guess`, the Jacobian the
    rollout's chain rule (`jacobian="chain"`) or its central differences (`"differences"`: two
    rollouts per parameter), each step halved until the misfit falls; stops when a step moves
    no parameter by more than `1e-10` of itself or no halving lowers the misfit (the noise's
    floor): `(theta, misfit, iterations)`."""
    fit = list(fit)

    def evaluate(theta):
        if jacobian == "chain":
            return rollout(theta, len(samples))
        x, _ = rollout(theta, len(samples), False)
        return x, rollout_differences(theta, len(samples), columns=fit)

    theta = np.array(guess, float)
    x, dx = evaluate(theta)
    cost = float(np.sum((x - samples) ** 2))
    for it in range(iterations):
        step = np.linalg.lstsq(dx[:, fit], -(x - samples), rcond=None)[0]
        scale = 1.0
        while scale > 1e-4:
            trial = theta.copy()
            trial[fit] += scale * step
            tx, tdx = evaluate(trial)
            tcost = float(np.sum((tx - samples) ** 2))
            if tcost < cost:
                break
            scale /= 2
        else:
            return theta, cost, it
        small = np.max(np.abs(scale * step) / np.maximum(np.abs(theta[fit]), 1e-12)) < 1e-10
        theta, x, dx, cost = trial, tx, tdx, tcost
        if small:
            return theta, cost, it + 1
    return theta, cost, iterations


#: The identification's setting (the issue's): the true box, 1 s of samples at 1 kHz, 1 mm
#: of Gaussian noise, 20 noise seeds, the initial guess 50% off; the fit by central
#: differences, ten times the rollouts, on the first `FD_SEEDS`.
TRUE = (0.5, 1.0, 0.0)
SAMPLES = 1000
SIGMA = 1e-3
SEEDS = 20
GUESS = (0.75, 1.5, 0.0)
FD_SEEDS = 5


def study(seeds=SEEDS, samples=SAMPLES, fd_seeds=FD_SEEDS):
    """The rollout check and the identification, as the gradients study records them: the
    chain rule's largest relative gap to central differences of the rollout over the horizons
    ending at least 20 steps before the stop (each parameter), and per seed the fit's relative
    errors in `mu` and `v0`, its iterations and seconds, by the chain rule and (on the first
    `fd_seeds`) by central differences, and their summary (`summary`)."""
    import time

    horizon = stop_step(TRUE) - 20
    x, dx = rollout(TRUE, horizon)
    fd = rollout_differences(TRUE, horizon)
    scale = np.maximum(np.abs(fd), 1e-12)
    out = {
        "rollout_horizon": horizon,
        "rollout_gap": float(np.max(np.abs(dx - fd)[5:] / scale[5:])),
        "identify_seeds": seeds,
        "identify_samples": samples,
        "identify_sigma": SIGMA,
        "fits": [],
    }
    for seed in range(seeds):
        y = noisy_samples(TRUE, samples, SIGMA, seed)
        fit = {"seed": seed}
        ways = ["chain"] + (["differences"] if fd_seeds is None or seed < fd_seeds else [])
        for way in ways:
            t0 = time.perf_counter()
            theta, cost, its = identify(y, GUESS, jacobian=way)
            fit[way] = {
                "mu_error": abs(theta[0] - TRUE[0]) / TRUE[0],
                "v0_error": abs(theta[1] - TRUE[1]) / TRUE[1],
                "iterations": its,
                "seconds": time.perf_counter() - t0,
            }
        out["fits"].append(fit)
    out.update(summary(out["fits"]))
    return out


def summary(fits):
    """The fits' medians and extremes, flat (the study's run-wide columns)."""
    chain = [f["chain"] for f in fits]
    both = [f for f in fits if "differences" in f]

    def med(xs):
        return float(np.median(xs)) if xs else float("nan")

    return {
        "identify_mu_error_median": med([c["mu_error"] for c in chain]),
        "identify_mu_error_max": float(max(c["mu_error"] for c in chain)),
        "identify_v0_error_median": med([c["v0_error"] for c in chain]),
        "identify_iterations_median": med([c["iterations"] for c in chain]),
        "identify_seconds_chain_median": med([c["seconds"] for c in chain]),
        "identify_fd_seeds": len(both),
        "identify_seconds_fd_median": med([f["differences"]["seconds"] for f in both]),
        "identify_chain_fd_mu_gap_max": float(max(
            (abs(f["chain"]["mu_error"] - f["differences"]["mu_error"]) for f in both),
            default=float("nan"))),
    }


def noisy_samples(theta, steps, sigma, seed):
    """The true trajectory's x with Gaussian noise of standard deviation `sigma`."""
    x, _ = rollout(theta, steps, False)
    return x + np.random.default_rng(seed).normal(0.0, sigma, size=steps)
