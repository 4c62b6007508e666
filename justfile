# contactlab: `just` lists the recipes.
set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# The whole test suite, exactly what CI runs: unit, property and end-to-end tests, doc tests
# (including the compile_fail check that mismatched formulation/driver pairs do not compile),
# then every notebook executed headless.
# Prints the wall time of each stage (CI reads them). With CONTACTLAB_FREE_DISK set (CI sets it),
# the debug executables the Rust and Python tests ran are deleted before the notebooks build
# theirs (a few GB; the libraries stay, so a rerun only links again).
test:
    #!/usr/bin/env bash
    set -euo pipefail
    start=$SECONDS
    just test-rust
    echo "stage test-rust: $((SECONDS - start)) s"
    start=$SECONDS
    just test-python
    echo "stage test-python: $((SECONDS - start)) s"
    if [ -n "${CONTACTLAB_FREE_DISK:-}" ]; then
        deps="${CARGO_TARGET_DIR:-$PWD/target}/debug/deps"
        find "$deps" -maxdepth 1 -type f -perm -u+x ! -name '*.so' -delete
        echo "debug executables deleted: $(du -sh "${CARGO_TARGET_DIR:-$PWD/target}" | cut -f1) left in target"
    fi
    start=$SECONDS
    just notebook
    echo "stage notebook tools (evcxr, Jupyter): $((SECONDS - start)) s"
    just notebook-check

# The Rust tests only (fast: no Jupyter needed). The fidelity study's test runs MuJoCo's side of
# every scene at CI size, so Python's mujoco is installed when missing (seconds: a wheel).
test-rust:
    python3 -c "import mujoco, numpy" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check mujoco numpy
    cargo test --doc --workspace -j2
    cargo nextest run --workspace -j2 --no-fail-fast

# The Python package: build and install it as `pip install ./python` does, but with the dev
# profile (MATURIN_PEP517_ARGS), which reuses the debug build the Rust tests just made instead of
# a cold release build of the whole tree; then run its pytest suite against the command line's
# answers (the debug `contactlab`, rebuilt here if missing). Installs NumPy, polars, pytest,
# scipy and mujoco when missing, and the robot models' packages (dm_control, gymnasium-robotics)
# whose models the MuJoCo bridge's tests load.
test-python:
    #!/usr/bin/env bash
    set -euo pipefail
    python3 -c "import numpy, polars, pytest, scipy, mujoco" 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check numpy polars pytest scipy mujoco
    python3 -c "import dm_control, gymnasium_robotics" 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check dm-control gymnasium-robotics
    start=$SECONDS
    MATURIN_PEP517_ARGS="--profile dev" python3 -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python
    echo "python package built and installed in $((SECONDS - start)) s"
    cargo build -j2 -q -p contactlab-experiments --bin contactlab
    target="${CARGO_TARGET_DIR:-$PWD/target}"
    CONTACTLAB_CLI="$target/debug/contactlab" python3 -m pytest python/tests -q -rs

# Reproduce a paper: config -> data -> report, in release mode. `just reproduce --list` names them.
# Refused when tracked files outside reports/ have uncommitted changes (the report's provenance
# would name a commit without the code behind its numbers); `just reproduce <paper> --allow-dirty`
# runs anyway and the report says it came from a dirty tree. The peers (MuJoCo, Drake) are run by
# Python: CONTACTLAB_NO_PEERS=1 skips them, CONTACTLAB_PEERS_WITHOUT=pydrake (a comma list of
# modules) plays a machine without those modules, e.g. `CONTACTLAB_PEERS_WITHOUT=pydrake just
# reproduce fidelity`. A failing report leaves reports/<paper>/ as it was.
reproduce *ARGS:
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- reproduce {{ARGS}}

# Solve one problem file, e.g. `just solve data/problems/Rover4396.hdf5 --formulation natural-map --optimizer lm`.
solve FILE *ARGS:
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- solve {{FILE}} {{ARGS}}

# Name the formulations, optimizers and papers available.
list *ARGS:
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- list {{ARGS}}

# Every formulation beside MuJoCo's constraint solver on the MuJoCo problem set, and whole steps
# beside MuJoCo's and Drake's: `reproduce peers` (release, about 14 min) runs the configs of
# experiments/configs/peers/ and writes reports/peers/. MuJoCo's side needs Python's mujoco
# (installed here if missing; without it the report says MuJoCo was not measured).
peers *ARGS:
    python3 -c "import mujoco" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check mujoco numpy
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- reproduce peers {{ARGS}}

# Criterion timings of every paper's driver and a generic one on the same problems (release;
# a few minutes). Extra arguments go to criterion, e.g. `just bench -- solve/balls15`.
bench *ARGS:
    cargo bench -j2 -p contactlab-lab --bench solvers {{ARGS}}

# Open the notebooks in Jupyter with evcxr's compile directory kept between kernels
# (target/evcxr-lab): a notebook reopened on an unchanged workspace starts in seconds, not minutes.
notebooks: notebook
    env -u CARGO_INCREMENTAL XDG_CACHE_HOME="${XDG_CACHE_HOME:-$PWD/target/evcxr-cache}" EVCXR_TMPDIR="${EVCXR_TMPDIR:-$PWD/target/evcxr-lab}" jupyter notebook experiments/notebooks/

# Install the evcxr Jupyter kernel and Jupyter itself, with matplotlib for the Python notebook
# (once per machine; evcxr builds in 6-11 min).
notebook:
    command -v evcxr_jupyter >/dev/null || cargo install evcxr_jupyter --locked
    python3 -m pip install --quiet --disable-pip-version-check jupyter nbconvert nbclient ipykernel matplotlib
    evcxr_jupyter --install
    @echo "kernel installed: run 'jupyter notebook experiments/notebooks/' (or jupyter lab)"

# evcxr caches the compiled dependencies (`:cache`) under target/evcxr-cache, and the kernels this
# recipe starts one after another share one scratch crate (EVCXR_TMPDIR, evcxr's compile
# directory, kept between kernels): the workspace's own crates, which `:cache` never caches,
# compile once for all the notebooks instead of once per kernel. Never point two kernels that run
# at the same time at one EVCXR_TMPDIR (evcxr writes its crate's sources there unlocked).
# Execute every notebook headless (experiments/notebooks/execute.py), printing each one's wall time
# and its :dep cell's; a failing or panicking cell fails the recipe.
notebook-check: notebook
    #!/usr/bin/env bash
    set -euo pipefail
    # evcxr rebuilds its scratch crate cell after cell with incremental compilation (its own
    # profile asks for it); CARGO_INCREMENTAL=0, which CI sets for the Rust tests, overrides that
    # and a cell's library then fails to load (`dlsym failed`, measured on castro2022's third cell).
    unset CARGO_INCREMENTAL
    export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$PWD/target/evcxr-cache}"
    export EVCXR_TMPDIR="${EVCXR_TMPDIR:-$PWD/target/evcxr-check}"
    total=$SECONDS
    python3 experiments/notebooks/execute.py --output-dir target/notebooks experiments/notebooks/*.ipynb
    echo "stage notebooks: $((SECONDS - total)) s"
    echo "notebooks: $(ls experiments/notebooks/*.ipynb | wc -l) passed, 0 failed"

# Re-execute notebooks in place so their committed outputs (tables, plots) are current:
# `just notebook-update` for all, or name some.
notebook-update *NOTEBOOKS: notebook
    #!/usr/bin/env bash
    set -euo pipefail
    unset CARGO_INCREMENTAL # evcxr needs it (see notebook-check)
    export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$PWD/target/evcxr-cache}"
    export EVCXR_TMPDIR="${EVCXR_TMPDIR:-$PWD/target/evcxr-check}"
    nbs="{{NOTEBOOKS}}"
    [ -n "$nbs" ] || nbs="$(ls experiments/notebooks/*.ipynb)"
    python3 experiments/notebooks/execute.py --inplace $nbs

# Lints: formatting and clippy with warnings as errors.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -j2 -- -D warnings

# Needs nightly and cargo-fuzz (installed if missing); not part of `just test` or CI. Seeds come
# from data/ and experiments/configs/; crashes land in fuzz/artifacts/<target>/; FUZZ_TARGET_DIR
# overrides the nightly build's target dir (default target/fuzz). fuzz/README.md: the targets.
# Fuzz every reader of user input, SECS seconds per target (default 300): `just fuzz 60 [TARGET...]`.
fuzz SECS="300" *TARGETS:
    #!/usr/bin/env bash
    set -euo pipefail
    if ! rustup toolchain list | grep -q '^nightly'; then
        echo "just fuzz needs a nightly toolchain (cargo-fuzz uses -Z flags): rustup toolchain install nightly" >&2
        exit 1
    fi
    if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
        echo "cargo-fuzz is missing: cargo install cargo-fuzz --locked"
        cargo install cargo-fuzz --locked
    fi
    targets="{{TARGETS}}"
    [ -n "$targets" ] || targets="$(cargo +nightly fuzz list)"
    # Seeds: the shipped problems (small JSON only: libFuzzer's input size follows the largest
    # seed), every experiment config, and a few command lines (arguments separated by NUL).
    mkdir -p fuzz/corpus/{json_problem,fclib_hdf5,toml_config,cli_args}
    find data/problems data/mujoco/global -name '*.json' -size -32k -exec cp {} fuzz/corpus/json_problem/ \;
    cp data/problems/*.hdf5 fuzz/corpus/fclib_hdf5/
    for f in experiments/configs/*/*.toml; do cp "$f" "fuzz/corpus/toml_config/$(basename "$(dirname "$f")")_$(basename "$f")"; done
    args() { f="fuzz/corpus/cli_args/$1"; shift; printf '%s\0' "$@" | head -c -1 > "$f"; }
    args solve_tol solve data/problems/Rover4396.hdf5 --tol 1e-8 --max-iter 100
    args solve_mlcp solve x.json --formulation mlcp-fb --optimizer lm --n-f 6 --theta0-deg 15 --time-limit 2.5
    args solve_ncp solve x.json --formulation implicit-ncp --optimizer todorov --restarts 3 -O edge_aware=false --rel-tol 1e-3
    args solve_sap solve x.json --formulation sap --optimizer newton-merit -F sigma=1e-3 -O 'max_ls=[1, 2]'
    args run_shard run experiments/configs/todorov2010/table1.toml --shard 2/7
    failed=""
    for t in $targets; do
        echo "== fuzz $t for {{SECS}} s"
        dict=(); [ -f "fuzz/dicts/$t.dict" ] && dict=("-dict=fuzz/dicts/$t.dict")
        # No sanitizer: the code is safe Rust, and an ASan build of polars costs more than it
        # finds. -rss_limit_mb catches allocation blow-ups, -timeout hangs (10 s per input).
        cargo +nightly fuzz run -s none --codegen-units 16 \
            --target-dir "${FUZZ_TARGET_DIR:-$PWD/target/fuzz}" "$t" -- \
            -max_total_time={{SECS}} -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 \
            -print_final_stats=1 "${dict[@]}" || failed="$failed $t"
    done
    if [ -n "$failed" ]; then
        echo "fuzz: failed:$failed (inputs in fuzz/artifacts/<target>/; reproduce with cargo +nightly fuzz run -s none <target> <file>)" >&2
        exit 1
    fi
    echo "fuzz: no crash in:" $targets
