"""Type stubs of the package `contactlab`."""

from . import mujoco as mujoco
from ._contactlab import (
    BUILD_COMMIT as BUILD_COMMIT,
    BUILD_PROFILE as BUILD_PROFILE,
    GeneralizedProblem as GeneralizedProblem,
    LocalProblem as LocalProblem,
    Solution as Solution,
    SolverError as SolverError,
    evaluate as evaluate,
    pairs as pairs,
    read as read,
    run as run,
    solve as solve,
    solve_all as solve_all,
)
