#!/usr/bin/env bash
# Sets up what is missing (scripts/bootstrap.sh), then runs the Rust tests and pytest.
# Extra arguments go to pytest (e.g. scripts/test.sh -k dot).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# shellcheck disable=SC1091
source .venv/bin/activate
# The Rust crates' own tests; the PyO3 crate is tested through pytest. With the runtime's
# features the extension was built with (bootstrap.sh: CUDA where its headers are there),
# so that cargo reuses that build of IREE's runtime instead of making a second one.
features=()
if [[ -f .cache/cuda-deps/include/cuda.h ]]; then
  export IREE_CUDA_DEPS_DIR=$PWD/.cache/cuda-deps
  features=(--features pytensor-mlir-iree/cuda)
fi
cargo test --release "${features[@]}" -p pytensor-mlir-core -p pytensor-mlir-iree
# One pytest worker per core (pytest-xdist): a test's time is mostly IREE compiling its
# graph on one thread, so the suite scales with the cores; a file's tests stay on one worker.
# test_vulkan.py then runs alone: its lavapipe device (a software GPU on the same cores)
# was lost once (VK_ERROR_DEVICE_LOST, then every later call in that worker failed) while
# another worker compiled beside it, and never in the serial runs.
# pytest's exit status 5 (no test collected: a -k that selects none in one part) is no
# failure.
pytest_part() { python -m pytest "$@" || { rc=$?; [[ $rc -eq 5 ]] || exit "$rc"; }; }
pytest_part tests -q --durations=30 -n auto --dist loadfile --ignore=tests/test_vulkan.py "$@"
pytest_part tests/test_vulkan.py -q --durations=10 "$@"
