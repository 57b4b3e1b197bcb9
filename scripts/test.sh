#!/usr/bin/env bash
# Sets up what is missing (scripts/bootstrap.sh), then runs the Rust tests and pytest.
# Extra arguments go to pytest (e.g. scripts/test.sh -k dot).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# shellcheck disable=SC1091
source .venv/bin/activate
# The Rust crates' own tests; the PyO3 crate is tested through pytest.
cargo test --release -p pytensor-mlir-core -p pytensor-mlir-iree
# One pytest worker per core (pytest-xdist): a test's time is mostly IREE compiling its
# graph on one thread, so the suite scales with the cores; a file's tests stay on one worker.
python -m pytest tests -q --durations=30 -n auto --dist loadfile "$@"
