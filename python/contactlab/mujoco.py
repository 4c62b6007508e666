"""The contact problem of a MuJoCo state, in the project's convention (normal first).

After ``mujoco.mj_forward(model, data)``, the step's constraint impulses ``r = h * efc_force``
(``h`` the time step) act in the integrator's metric ``Mhat`` (:func:`metric`: ``M``, or
``M + h D`` under Euler with joint damping, ``M + h D + h^2 K`` under the discrete integrator):
``Mhat v = J' r + Mhat v*`` with row velocities ``u = J v``.

:func:`blocks` groups every row MuJoCo has (equality, friction loss, limit, contact of condim
1, 3, 4 or 6, per-row friction) into the project's constraint blocks with their parameters and
target velocities. :func:`problem` gives every row as a :class:`contactlab.GeneralizedProblem`
(FCLib's global form with ``M = Mhat``, ``H = J'``, ``f = Mhat v*``, ``w = 0``, the blocks, the
rigid targets ``t`` and, for SAP's own model, ``phi0`` and ``dt``), whose ``to_local()`` is
:func:`local_problem`: ``W = J Mhat^-1 J'`` and ``q = J v* - t``. Pyramidal cones are refused
(with how to switch), as is the RK4 integrator; each formulation says which kinds it takes
(``contactlab.pairs()``).

MuJoCo itself solves a regularised problem, ``min 1/2 r'(W + R) r + r'(q - v_ref)`` over the
cones; :func:`impulses` gives its answer with its ``R`` and ``v_ref`` so that the comparison
is fair (MuJoCo's impulses do not solve the rigid problem). The ``mujoco`` package is
imported only when these functions are called.
"""

from __future__ import annotations

from ._mujoco_metric import metric
from ._mujoco_problem import (
    consistent_targets,
    impulses,
    jacobian,
    local_problem,
    problem,
    solve_metric,
)
from ._mujoco_rows import blocks, kinds
from ._mujoco_step import StepResult, forward_smooth, integrate, mujoco_solves, rollout, step

__all__ = [
    "problem",
    "local_problem",
    "consistent_targets",
    "impulses",
    "jacobian",
    "metric",
    "solve_metric",
    "blocks",
    "kinds",
    "forward_smooth",
    "integrate",
    "mujoco_solves",
    "step",
    "StepResult",
    "rollout",
]
