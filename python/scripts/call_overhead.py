"""The Python package's overhead over the solve itself: on the fifteen MuJoCo problems of
`data/mujoco/global/` (PGS, problems read and their `W` formed before the timed calls), the
median over five rounds of Python's wall time around `contactlab.solve` minus the solve's own
`solution.seconds`, beside the median solve.

A measurement, not a test (the guide forbids timed assertions): run it with the build you want
to know about (`contactlab.BUILD_PROFILE` is printed; `pip install ./python` is the release
build, `just test` installs the debug one).

Usage: python3 python/scripts/call_overhead.py [--rounds N]
"""
import argparse
import statistics
import time
from pathlib import Path

import contactlab

DATA = Path(__file__).resolve().parents[2] / "data"


def measure(rounds):
    """`(median overhead, median solve, solves)` in seconds."""
    problems = [contactlab.read(f) for f in sorted((DATA / "mujoco" / "global").glob("*.json"))]
    for p in problems:  # form each W once: later solves reuse it, as a sweep would
        contactlab.solve(p)
    overhead, seconds = [], []
    for _ in range(rounds):
        for p in problems:
            start = time.perf_counter()
            s = contactlab.solve(p)
            wall = time.perf_counter() - start
            overhead.append(wall - s.seconds)
            seconds.append(s.seconds)
    return statistics.median(overhead), statistics.median(seconds), len(seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    over, solve, n = measure(a.rounds)
    print(f"build {contactlab.BUILD_PROFILE}: {n} solves, median overhead {over * 1e6:.1f} us, "
          f"median solve {solve * 1e6:.1f} us ({100 * over / solve:.1f}%)")


if __name__ == "__main__":
    main()
