"""The contactlab extension a study runs: which build it is and whether it was built from the
tree's code (the robot and gradients studies refuse a stale one: an install outlives the code it
was built from); and where a study's result goes."""

import json
from pathlib import Path


def write_result(out, path):
    """A study's result as indented JSON into `path` (standard output when None), floats for
    NumPy's numbers."""
    text = json.dumps(out, indent=1, default=float)
    if path:
        Path(path).write_text(text + "\n")
    else:
        print(text)


def _extension(name):
    """One of the contactlab extension's build facts: `BUILD_PROFILE` (`release`, `debug`) or
    `BUILD_COMMIT` (the commit it was built from); `absent` without the package, `unknown` when
    the build does not say."""
    try:
        import contactlab
    except ImportError:
        return "absent"
    return getattr(contactlab, name, "unknown")


#: What `pip install ./python` builds and installs: the Rust crates the extension links and the
#: Python package around it. An extension built at another commit is stale only if one of
#: these differs between the two commits.
EXTENSION_SOURCES = [
    "Cargo.toml", "Cargo.lock", "core", "formulations", "multibody", "experiments/scenes",
    "experiments/runs", "experiments/lab", "python/src", "python/Cargo.toml", "python/build.rs",
    "python/contactlab",
]


def stale_extension(built, head, changed):
    """Why an extension built from commit `built` cannot speak for the tree at `head`, or None.
    `changed` lists the `EXTENSION_SOURCES` files that differ between the two commits. An
    install outlives the code it was built from (`pip install ./python` copies it into
    site-packages), so a study run after a change to that code would otherwise measure the old
    code under the new commit's name. `unknown` on either side (a build or a run outside a git
    checkout) cannot be checked and passes."""
    if "unknown" in (built, head) or built == "absent":
        return None
    if built.endswith("-dirty"):
        return (f"the installed contactlab extension was built from uncommitted changes on "
                f"{built[:-6][:10]}; commit, then reinstall it (pip install ./python)")
    if built != head and changed:
        return (f"the installed contactlab extension was built from commit {built[:10]}, the "
                f"tree is at {head[:10]} and {', '.join(changed[:3])}"
                f"{' and more' if len(changed) > 3 else ''} changed since; reinstall it "
                f"(pip install ./python)")
    return None


def not_release(profile, small):
    """Why a study cannot time solves through an extension built with `profile`, or None. A
    debug build (what `just test` installs) sweeps tens of times slower than a release one, so
    its solves meet the studies' time limits and their times say nothing of the solvers.
    `small` (a study's CI version, which times nothing it reports) runs with any build;
    `unknown` or `absent` cannot be checked and pass."""
    if small or profile in ("release", "unknown", "absent"):
        return None
    return (f"the installed contactlab extension is a {profile} build; the study times its "
            f"solves and needs a release build (pip install ./python)")


def timing_extension(script, allow_stale, small):
    """The installed extension a timing study may use: `(commit, profile, stale)`, where
    `stale` is why it is stale when `allow_stale` lets it pass (else ""). Exits naming `script`
    when the package is missing, stale (unless `allow_stale`) or, but for `small`, not a
    release build."""
    import importlib.util
    import sys

    if importlib.util.find_spec("contactlab") is None:
        sys.exit(f"{script}: the contactlab package is not installed (pip install ./python)")
    built, head = _extension("BUILD_COMMIT"), _head()
    stale = stale_extension(built, head, _changed(built, head))
    if stale and not allow_stale:
        sys.exit(f"{script}: {stale} (or pass --allow-stale-extension)")
    profile = _extension("BUILD_PROFILE")
    slow = not_release(profile, small)
    if slow:
        sys.exit(f"{script}: {slow}")
    return built, profile, stale or ""


def _git(*args):
    """`git args` in the repository: its stripped output, or None when it fails."""
    import subprocess

    try:
        out = subprocess.run(["git", *args], cwd=Path(__file__).resolve().parents[2],
                             capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def _changed(built, head):
    """The extension's sources that differ between commits `built` and `head` (a placeholder
    when git cannot compare them: `stale_extension` reads it only for two real commits)."""
    out = _git("diff", "--name-only", built, head, "--", *EXTENSION_SOURCES)
    return ["(a commit this repository does not have)"] if out is None else out.split()


def _head():
    """The repository's commit (`git rev-parse HEAD`), or `unknown`."""
    return _git("rev-parse", "HEAD") or "unknown"
