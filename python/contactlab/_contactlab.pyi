"""Type stubs of the extension module `contactlab._contactlab` (the Rust lab's API)."""

from os import PathLike
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

_Matrix = npt.ArrayLike | Any  # a NumPy array or a scipy.sparse matrix or array
_Vector = npt.ArrayLike

BUILD_COMMIT: str
"""The commit the extension was built from (`-dirty` when tracked files differed from it,
`unknown` outside a git checkout): studies refuse an install built from other code."""

BUILD_PROFILE: str
"""`"release"` or `"debug"`: how the extension was compiled (timings of a debug build are not
a solver's speed)."""

class SolverError(RuntimeError):
    """A failure inside the library (a factorization, the solver's machinery, an internal
    error): not bad input."""

class LocalProblem:
    """A contact-space problem `u = W r + q`: Coulomb contacts normal first `[n, t1, t2]`, or
    any constraint blocks (`constraints`)."""

    def __init__(
        self,
        W: _Matrix,
        q: _Vector,
        mu: _Vector | None = None,
        check_psd: bool = True,
        constraints: list[dict[str, object]] | None = None,
    ) -> None:
        """`mu` (one coefficient per Coulomb contact) or `constraints` (blocks in row order,
        e.g. `{"kind": "limit"}`, `{"kind": "contact", "mu": [0.8, 0.8, 0.01]}`), one of the
        two. Validated as a problem file is (`ValueError` naming the field); `W` is checked
        positive semidefinite unless `check_psd` is false."""
    @property
    def W(self) -> npt.NDArray[np.float64]:
        """`W` as a dense array."""
    @property
    def q(self) -> npt.NDArray[np.float64]:
        """The free velocity `q`."""
    @property
    def mu(self) -> npt.NDArray[np.float64]:
        """Friction coefficients, one per contact (NaN for a block that is not a contact)."""
    @property
    def kinds(self) -> list[str]:
        """The kind of each constraint block, in row order."""
    @property
    def constraints(self) -> list[dict[str, Any]]:
        """The constraint blocks in row order, as a problem file's `constraints` list."""
    @property
    def num_contacts(self) -> int:
        """Number of contacts (of constraint blocks, for a problem of other kinds)."""
    def to_local(self) -> LocalProblem:
        """The problem itself (already in contact space)."""

class GeneralizedProblem:
    """A generalized-space problem `M v = H r + f`, `u = H' v + w` (FCLib's global form)."""

    def __init__(
        self,
        M: _Matrix,
        H: _Matrix,
        f: _Vector,
        w: _Vector,
        mu: _Vector | None = None,
        *,
        constraints: list[dict[str, Any]] | None = None,
        phi0: _Vector | None = None,
        dt: float | None = None,
        target: _Vector | None = None,
    ) -> None:
        """Validated as a problem file is (`ValueError` naming the field); `phi0` and `target`
        one per row, `dt` the time step (SAP's own model)."""
    @property
    def kinds(self) -> list[str]:
        """The kind of each constraint block, in row order."""
    @property
    def constraints(self) -> list[dict[str, Any]]:
        """The constraint blocks in row order, as a problem file's `constraints` list."""
    @property
    def target(self) -> npt.NDArray[np.float64]:
        """Each row's rigid target velocity (zeros when none was given)."""
    @property
    def phi0(self) -> npt.NDArray[np.float64]:
        """Each row's position error (SAP's own model; zeros when none was given)."""
    @property
    def dt(self) -> float | None:
        """The time step, when given."""
    @property
    def M(self) -> npt.NDArray[np.float64]:
        """The mass matrix, dense."""
    @property
    def H(self) -> npt.NDArray[np.float64]:
        """`H = J'`, dense."""
    @property
    def f(self) -> npt.NDArray[np.float64]:
        """The generalized free impulse."""
    @property
    def w(self) -> npt.NDArray[np.float64]:
        """The contact-velocity offset."""
    @property
    def mu(self) -> npt.NDArray[np.float64]:
        """Friction coefficients, one per contact."""
    @property
    def num_contacts(self) -> int:
        """Number of contacts."""
    @property
    def num_dofs(self) -> int:
        """Number of generalized velocities."""
    def to_local(self) -> LocalProblem:
        """`W = H' M^-1 H`, `q = H' M^-1 f + w`: what contact-space formulations solve."""

class Solution:
    """The answer of one solve."""

    @property
    def status(self) -> str:
        """`converged` when the natural-map residual is at most `tol`, else why it stopped."""
    @property
    def solver_status(self) -> str:
        """The status the driver itself reported."""
    @property
    def r(self) -> npt.NDArray[np.float64]:
        """Impulses, normal first per contact."""
    @property
    def u(self) -> npt.NDArray[np.float64]:
        """Contact velocities `u = W r + q`."""
    @property
    def v(self) -> npt.NDArray[np.float64] | None:
        """Generalized velocities of a generalized problem (`None` for a local one)."""
    @property
    def warm(self) -> npt.NDArray[np.float64]:
        """One number per row to warm-start the next solve from (`solve(..., warm=s.warm)`)."""
    @property
    def iterations(self) -> int:
        """Iterations the driver performed."""
    @property
    def seconds(self) -> float:
        """Wall-clock seconds of the solve (the shared ruler excluded)."""
    @property
    def metrics(self) -> dict[str, float]:
        """`natural_map`, `cone_violation`, `dual_cone_violation`, `complementarity_gap`."""
    def contactbench(self, dt: float) -> dict[str, float]:
        """ContactBench's figures on the forces `r / dt`: `primal`, `dual`, `complementarity`, `signorini`, `dissipation` (each the largest over the contacts)."""
    @property
    def residual(self) -> float:
        """The natural-map residual."""
    @property
    def counters(self) -> dict[str, int]:
        """The driver's and the formulation's counters."""
    @property
    def diagnostics(self) -> dict[str, float]:
        """The formulation's own accuracy figures."""
    @property
    def non_unique(self) -> bool:
        """Whether the impulses are not unique at the answer (the derivatives are then the minimum-norm ones)."""
    def regimes(self, margin: float = 1e-6) -> list[str]:
        """Each block's regime: `separating`, `sticking`, `sliding`, or `degenerate` within `margin` of a kink."""
    def jvp(self, direction: dict[str, npt.ArrayLike]) -> dict[str, npt.NDArray[np.float64]]:
        """Forward mode: a change of fields (`q`, `W`, `mu`; generalized: `f`, `w`, `M`, `H`, `mu`, `phi0`) to `{"r", "u"}` (and `"v"`)."""
    def vjp(self, cotangent: dict[str, npt.ArrayLike]) -> dict[str, npt.NDArray[np.float64]]:
        """Reverse mode: cotangents of `r`, `u` (and `v`) to the gradient for every field, each in its shape."""
    def jacobian(self, wrt: str, of: str = "r") -> npt.NDArray[np.float64]:
        """The dense Jacobian of `of` with respect to `wrt`, shape `(len(of),) + shape(wrt)`."""
    @property
    def model(self) -> str:
        """The friction model solved."""
    @property
    def formulation(self) -> str:
        """The formulation's name."""
    @property
    def optimizer(self) -> str:
        """The optimizer's name."""
    @property
    def options(self) -> dict[str, Any]:
        """The formulation's options, defaults filled in."""
    @property
    def optimizer_options(self) -> dict[str, Any]:
        """The optimizer's options, defaults filled in."""
    @property
    def trace(self) -> pl.DataFrame:
        """The per-iteration trace, built on first access."""

def read(path: str | PathLike[str], check_psd: bool = True) -> LocalProblem | GeneralizedProblem:
    """A problem file: FCLib HDF5, JSON, or a folder of `.npy` files."""

def solve(
    problem: LocalProblem | GeneralizedProblem,
    formulation: str = "coulomb",
    optimizer: str = "pgs",
    tol: float = 1e-8,
    max_iter: int | None = None,
    time_limit: float | None = None,
    **options: Any,
) -> Solution:
    """One solve, as `contactlab solve` does it; options go to the plugin that has them.
    `warm=` a previous solution's `warm` (one number per row, NaN where none) starts from it."""

def solve_all(
    problem: LocalProblem | GeneralizedProblem,
    tol: float = 1e-8,
    max_iter: int | None = None,
    time_limit: float | None = 10.0,
) -> pl.DataFrame:
    """Every compatible pair on `problem`, one row per pair."""

def evaluate(
    problem: LocalProblem | GeneralizedProblem, r: _Vector, dt: float | None = None
) -> dict[str, float]:
    """The shared metrics of impulses `r` on `problem` (the ruler every solve is judged by);
    with a time step `dt`, also ContactBench's five figures on the forces `r / dt`
    (`contactbench_primal`, `contactbench_dual`, `contactbench_complementarity`,
    `contactbench_signorini`, `contactbench_dissipation`; `ValueError` unless dt > 0)."""

def pairs() -> list[dict[str, Any]]:
    """Every (formulation, optimizer) with its model, the constraint kinds it takes and those it
    refuses (kind to reason), and why the others cannot run."""

def run(config: str | PathLike[str], root: str | PathLike[str] | None = None) -> pl.DataFrame:
    """Runs a TOML config as `contactlab run` does and returns its rows."""
