# contactlab: `just` lists the recipes.
set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# The whole test suite, exactly what CI runs: unit, property and end-to-end tests, doc tests
# (including the compile_fail check that mismatched formulation/driver pairs do not compile),
# then every notebook executed headless.
test: test-rust notebook-check

# The Rust tests only (fast: no Jupyter needed).
test-rust:
    cargo test --doc --workspace -j2
    cargo nextest run --workspace -j2 --no-fail-fast

# Reproduce a paper: config -> data -> report, in release mode. `just reproduce --list` names them.
reproduce *ARGS:
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- reproduce {{ARGS}}

# Solve one problem file, e.g. `just solve data/problems/Rover4396.hdf5 --formulation natural-map --optimizer lm`.
solve FILE *ARGS:
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- solve {{FILE}} {{ARGS}}

# Name the formulations, optimizers and papers available.
list *ARGS:
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- list {{ARGS}}

# Every formulation beside MuJoCo's constraint solver on the MuJoCo problem set, in one run
# (release, about 10 min): writes reports/peers/. Needs Python's mujoco (installed here if missing).
peers *ARGS:
    python3 -c "import mujoco" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check mujoco numpy
    cargo run --release -j2 -q -p contactlab-experiments --bin contactlab -- peers {{ARGS}}

# Criterion timings of every paper's driver and a generic one on the same problems (release;
# a few minutes). Extra arguments go to criterion, e.g. `just bench -- solve/balls15`.
bench *ARGS:
    cargo bench -j2 -p contactlab-experiments --bench solvers {{ARGS}}

# Install the evcxr Jupyter kernel and Jupyter itself (once per machine; evcxr builds in 6-11 min).
notebook:
    command -v evcxr_jupyter >/dev/null || cargo install evcxr_jupyter --locked
    python3 -m pip install --quiet --disable-pip-version-check jupyter nbconvert nbclient ipykernel
    evcxr_jupyter --install
    @echo "kernel installed: run 'jupyter notebook experiments/notebooks/' (or jupyter lab)"

# Execute every notebook headless; a failing cell fails the recipe. Sets the kernel up first.
notebook-check: notebook
    mkdir -p target/notebooks
    n=0; for nb in experiments/notebooks/*.ipynb; do \
        echo "executing $nb"; \
        XDG_CACHE_HOME="${XDG_CACHE_HOME:-$PWD/target/evcxr-cache}" \
        jupyter nbconvert --to notebook --execute "$nb" \
            --ExecutePreprocessor.timeout=1800 --output-dir target/notebooks; \
        n=$((n + 1)); \
    done; echo "notebooks: $n passed, 0 failed"

# Lints: formatting and clippy with warnings as errors.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -j2 -- -D warnings
