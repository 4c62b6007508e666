"""contactlab: contact solvers for NumPy, polars and MuJoCo users.

A thin layer over the Rust workspace's lab (the same library the ``contactlab`` command
line calls): problems from NumPy arrays, ``scipy.sparse`` matrices or problem files, every
(formulation, optimizer) pair of the registry by name, answers as NumPy arrays and tables
as polars DataFrames.

>>> import numpy as np, contactlab
>>> p = contactlab.LocalProblem(np.eye(3), np.array([-1.0, 0.5, 0.0]), np.array([0.8]))
>>> s = contactlab.solve(p, "coulomb", "pgs", tol=1e-10)
>>> s.status
'converged'

``contactlab.mujoco.problem(model, data)`` gives the contact problem of a MuJoCo state.
"""

from ._contactlab import (
    BUILD_COMMIT,
    BUILD_PROFILE,
    GeneralizedProblem,
    LocalProblem,
    Solution,
    SolverError,
    evaluate,
    pairs,
    read,
    run,
    solve,
    solve_all,
)
# The submodule imports MuJoCo's bindings only when one of its functions is called.
from . import mujoco

__all__ = [
    "BUILD_COMMIT",
    "BUILD_PROFILE",
    "GeneralizedProblem",
    "LocalProblem",
    "Solution",
    "SolverError",
    "evaluate",
    "pairs",
    "read",
    "run",
    "solve",
    "solve_all",
    "mujoco",
]

