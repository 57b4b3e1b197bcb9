#!/usr/bin/env bash
# Sets up what is missing (scripts/bootstrap.sh), then runs the spike's matrix in MLIR mode.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python examples/demo.py
