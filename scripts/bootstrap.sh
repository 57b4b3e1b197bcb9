#!/usr/bin/env bash
# Sets up everything the demo, tests and benchmarks need, on a fresh Debian machine of
# this project's kind: system packages (apt, only when missing), the project virtualenv
# in .venv, and the Rust build of the extension installed into it. Idempotent: a second
# run only rebuilds what changed.
#
#   scripts/bootstrap.sh            # runtime + test dependencies
#   scripts/bootstrap.sh --bench    # also the peers the benchmarks compare against
set -euo pipefail
cd "$(dirname "$0")/.."

want_bench=0
[[ "${1:-}" == "--bench" ]] && want_bench=1

# bindgen (eerie-sys) needs libclang; IREE's runtime build needs a C compiler.
# lavapipe (mesa-vulkan-drivers) is the Vulkan device the GPU-mode tests run on.
need=()
for pkg in clang libclang-dev mesa-vulkan-drivers libvulkan1; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if ((${#need[@]})); then
  echo "bootstrap: apt-get install ${need[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate

stamp=.venv/.bootstrap-deps
deps_hash=$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -c1-16)-$want_bench
if [[ ! -f $stamp || $(cat "$stamp") != "$deps_hash" ]]; then
  python -m pip install -q --upgrade pip
  # cmake >= 3.26 for IREE's runtime (Debian 12 ships 3.25); maturin builds the wheel.
  python -m pip install -q "cmake>=3.26" "maturin>=1.5,<2"
  python -m pip install -q "pytensor==3.0.7" "numpy" "iree-base-compiler==3.13.0" "pytest" "pytest-xdist" "scipy" "mpmath"
  if ((want_bench)); then
    python -m pip install -q "iree-base-runtime==3.13.0" "jax[cpu]" || \
      echo "bootstrap: some benchmark peers could not be installed; their rows will be skipped"
  fi
  echo "$deps_hash" > "$stamp"
fi

# IREE's CUDA driver is built in when its build-time headers can be had from PyPI (see
# scripts/cuda_deps.sh); without them the build goes on with the CPU and Vulkan drivers only.
features=()
if scripts/cuda_deps.sh .cache/cuda-deps; then
  export IREE_CUDA_DEPS_DIR=$PWD/.cache/cuda-deps
  features=(--features cuda)
else
  echo "bootstrap: CUDA headers unavailable; building without the CUDA runtime driver"
fi

# The Rust build: the extension module, installed into .venv in place (incremental).
maturin develop --release --quiet "${features[@]}"
