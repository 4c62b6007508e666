"""The package's overhead over the solve itself, on the MuJoCo problem set of data/."""

import statistics
import time

import contactlab
from conftest import DATA


def test_the_python_call_costs_little_beyond_the_solve():
    problems = [contactlab.read(f) for f in sorted((DATA / "mujoco" / "global").glob("*.json"))]
    assert len(problems) == 15
    for p in problems:  # form each W once: later solves reuse it, as a sweep would
        contactlab.solve(p)
    overhead, seconds = [], []
    for _ in range(5):
        for p in problems:
            start = time.perf_counter()
            s = contactlab.solve(p)
            wall = time.perf_counter() - start
            overhead.append(wall - s.seconds)
            seconds.append(s.seconds)
    over, solve = statistics.median(overhead), statistics.median(seconds)
    print(f"median overhead {over * 1e6:.1f} us, median solve {solve * 1e6:.1f} us")
    assert over <= max(0.05 * solve, 20e-6), (over, solve)
