#!/usr/bin/env bash
# Assembles what IREE's CUDA runtime driver needs at build time, without NVIDIA's servers:
# the CUDA headers and libdevice, taken from three PyPI wheels (the only registry this
# kind of machine reaches). IREE's CMake reads the folder from IREE_CUDA_DEPS_DIR
# (../shared/FACTS.md, "CUDA runtime driver without network"). Nothing here is needed at
# run time: the driver loads libcuda.so when a CUDA device is asked for, and fails cleanly
# where there is none.
#
#   scripts/cuda_deps.sh DIR      # fills DIR/include and DIR/nvvm/libdevice; exit 1 on failure
set -euo pipefail
dir=${1:?usage: scripts/cuda_deps.sh DIR}
[[ -f $dir/nvvm/libdevice/libdevice.10.bc && -f $dir/include/cuda.h ]] && exit 0

python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Headers of the runtime and nvcc, cub/thrust (cccl), and nvcc's libdevice; 12.9 is what
# IREE 3.13 was measured with.
"$python" -m pip download -q --no-deps --only-binary=:all: -d "$work/wheels" \
  "nvidia-cuda-runtime-cu12==12.9.*" "nvidia-cuda-nvcc-cu12==12.9.*" "nvidia-cuda-cccl-cu12==12.9.*"
for wheel in "$work"/wheels/*.whl; do
  "$python" -m zipfile -e "$wheel" "$work/unpacked"
done
rm -rf "$dir.partial"
mkdir -p "$dir.partial/include" "$dir.partial/nvvm"
for part in cuda_runtime cuda_nvcc cuda_cccl; do
  cp -r "$work/unpacked/nvidia/$part/include/." "$dir.partial/include/"
done
cp -r "$work/unpacked/nvidia/cuda_nvcc/nvvm/libdevice" "$dir.partial/nvvm/"
rm -rf "$dir"
mv "$dir.partial" "$dir"
