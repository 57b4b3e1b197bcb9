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
python -m pytest tests -q --durations=30 "$@"
