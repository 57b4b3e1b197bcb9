#!/usr/bin/env python
"""GPU-mode benchmark: the CPU benchmark's rows on a GPU mode (MLIR_VULKAN by default:
lavapipe on a machine without a GPU; MLIR_CUDA where there is a CUDA device) beside
mode="MLIR" on the CPU and NUMBA, all measured in one run.

Rows (float32 unless --dtype float64):
  - ``x + y*2`` at 10 elements: the fixed cost of a call (upload, dispatch, read back);
  - ``-x`` at 1e6 elements: next to no arithmetic, so on the GPU mode this is the cost of
    moving 4 MB (8 MB in float64) in and out; the table breaks out the transfer time
    (this row's time less the 10-element call) and the bandwidth it implies;
  - ``exp(x)*y + z`` at 1e6 elements;
  - a 512x512 dot.
Every result is checked against NUMBA's before it is timed. Timings are medians of
round-robin repeats (bench_cpu.py's timing helpers), so machine noise hits all columns.

    python benchmarks/bench_gpu.py                    # MLIR_VULKAN vs MLIR vs NUMBA
    python benchmarks/bench_gpu.py --mode MLIR_CUDA
    python benchmarks/bench_gpu.py --quick            # smoke run
"""

import argparse
import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
from bench_cpu import fmt_ratio, fmt_time, print_table, time_round_robin

import pytensor_mlir

warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")


def rows(dtype, quick):
    n_big = 100_000 if quick else 1_000_000
    n_dot = 128 if quick else 512
    rng = np.random.default_rng(0)
    x, y, z = (pt.vector(n, dtype=dtype) for n in "xyz")
    a, b = pt.matrix("a", dtype=dtype), pt.matrix("b", dtype=dtype)

    def vec(n):
        return rng.uniform(-1, 1, n).astype(dtype)

    return [
        ("x + y*2, 10", [x, y], x + y * 2, [vec(10), vec(10)]),
        (f"-x, {n_big:.0e} (transfer)", [x], -x, [vec(n_big)]),
        (f"exp(x)*y + z, {n_big:.0e}", [x, y, z], pt.exp(x) * y + z, [vec(n_big), vec(n_big), vec(n_big)]),
        (f"dot {n_dot}x{n_dot}", [a, b], pt.dot(a, b), [vec(n_dot * n_dot).reshape(n_dot, n_dot), vec(n_dot * n_dot).reshape(n_dot, n_dot)]),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", default="MLIR_VULKAN", help="the GPU mode (MLIR_VULKAN, MLIR_CUDA)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--quick", action="store_true", help="smoke run: smaller sizes, fewer repeats")
    args = parser.parse_args()
    gpu = args.mode
    peers = [gpu, "MLIR", "NUMBA"]
    repeats = 3 if args.quick else 7
    min_time = 0.02 if args.quick else 0.1
    rtol = 1e-4 if args.dtype == "float32" else 1e-10

    table, times_by_row = [], {}
    device = None
    for label, inputs, output, values in rows(args.dtype, args.quick):
        fns = {peer: pytensor.function(inputs, output, mode=peer) for peer in peers}
        device = device or pytensor_mlir.device_description(fns[gpu])
        ref = fns["NUMBA"](*values)
        for peer in (gpu, "MLIR"):
            np.testing.assert_allclose(fns[peer](*values), ref, rtol=rtol, atol=rtol, err_msg=f"{peer}: {label}")
        times = time_round_robin({peer: (lambda f=fns[peer]: f(*values)) for peer in peers}, min_time, repeats)
        times_by_row[label] = times
        table.append([label, *(fmt_time(times[p]) for p in peers), fmt_ratio(times[gpu] / times["MLIR"]), fmt_ratio(times[gpu] / times["NUMBA"])])
        print(f"  {label}: timed", flush=True)

    print(f"\n{gpu} on {device}; {args.dtype}; medians of {repeats} round-robin repeats\n")
    print_table(["row", *peers, f"{gpu}/MLIR", f"{gpu}/NUMBA"], table)

    small, transfer = list(times_by_row.values())[:2]
    n_bytes = 2 * rows(args.dtype, args.quick)[1][3][0].nbytes  # in and out
    print("\nTransfer broken out (the -x row less the 10-element call):")
    for peer in (gpu, "MLIR"):
        moved = transfer[peer] - small[peer]
        rate = n_bytes / moved / 1e9 if moved > 0 else float("nan")
        print(f"  {peer}: fixed cost per call {fmt_time(small[peer])}, {n_bytes / 1e6:.0f} MB in+out {fmt_time(moved)} ({rate:.1f} GB/s)")


if __name__ == "__main__":
    main()
