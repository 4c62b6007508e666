"""Executes notebooks headless and prints how long each took and how long its first cell took.

The first cell of every notebook is the `:dep` cell: evcxr compiles the workspace's crates
there, so its time is what a researcher waits for when a notebook opens. Used by
`just notebook-check` and `just notebook-update`:

    python3 experiments/notebooks/execute.py [--inplace | --output-dir DIR] NOTEBOOK...

A cell that fails fails the run; so does a cell whose output shows a Rust panic (evcxr prints a
panic inside a cell as output instead of failing the cell).
"""

import argparse
import os
import sys
import time

import nbformat
from nbclient import NotebookClient


class TimedClient(NotebookClient):
    """A client that records each cell's wall time."""

    def __init__(self, nb, **kw):
        super().__init__(nb, **kw)
        self.cell_seconds = []

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        start = time.monotonic()
        out = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        if cell.cell_type == "code":
            self.cell_seconds.append(time.monotonic() - start)
        return out


def panicked(nb):
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
            if "panicked at" in text:
                return text.strip().splitlines()[0]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="+")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--inplace", action="store_true", help="write outputs into the notebook")
    where.add_argument("--output-dir", help="write the executed notebooks here")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    args = ap.parse_args()
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        client = TimedClient(nb, timeout=args.timeout, kernel_name=nb.metadata.get("kernelspec", {}).get("name", "rust"),
                             resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
        start = time.monotonic()
        print(f"executing {path}", flush=True)
        client.execute()
        total = time.monotonic() - start
        out = path if args.inplace else os.path.join(args.output_dir, os.path.basename(path))
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
        nbformat.write(nb, out)
        bad = panicked(nb)
        if bad:
            sys.exit(f"a cell of {path} panicked: {bad}")
        first = client.cell_seconds[0] if client.cell_seconds else float("nan")
        print(f"  {path}: {total:.0f} s (first cell, the :dep cell: {first:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
