#!/usr/bin/env python
"""Throughput of every scalar function of the accuracy table (benchmarks/accuracy_cases.py)
and the basic ones, on 1e6 elements of float64 and float32, under mode="MLIR" against NUMBA,
JAX (when importable) and numpy (PyTensor's Python linker, whose Elemwise calls the numpy
or scipy ufunc), all measured in one run.

Inputs are random points of each function's domain (accuracy_cases.points, so ranges like
the accuracy report's: tiny, huge and ordinary magnitudes). Every peer's result is compared
with numpy's (nan where nan) before it is timed, loosely (rtol 1e-3: a speed table, the
accuracy report is accuracy.py), so a broken kernel cannot win. Timings are medians of
round-robin repeats (bench_cpu.py's helpers).

    python benchmarks/bench_scalar.py                 # every function, both dtypes
    python benchmarks/bench_scalar.py -k exp -n 100000
    python benchmarks/bench_scalar.py -k =gamma        # that function only
    python benchmarks/bench_scalar.py -k =exp,=log,sin # several
"""

import argparse
import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
from accuracy_cases import CASES, points
from bench_cpu import HAVE_JAX, fmt_ratio, fmt_time, jax_callable, print_table, time_round_robin
from pytensor.compile.mode import Mode

import pytensor_mlir  # noqa: F401  (registers the MLIR modes)

warnings.filterwarnings("ignore")

# Besides the accuracy table's rows (exp, log, sqrt and pow among them): a constant power,
# the common case of pow in model graphs. (name, graph, domain sampler).
BASIC = [
    ("x**2.5", lambda x: x**2.5, lambda rng, n: rng.uniform(0, 100, n)),
]


def inputs_for(dtype, n, rng, only):
    """(name, graph, one array of n points per argument) for each function."""
    def wanted(name):
        return not only or any(name == k[1:] if k.startswith("=") else k in name for k in only.split(","))

    for name, graph, sample in BASIC:
        if wanted(name):
            yield name, graph, [sample(rng, n).astype(dtype)]
    for case in CASES:
        if not wanted(case.name):
            continue
        v = np.asarray(points(case, dtype, n, rng), dtype=dtype)
        if case.arity == 1:
            yield case.name, case.pytensor, [rng.permutation(np.resize(v, n))]
        else:
            # (arity, m) points: n of its columns, drawn at random.
            columns = rng.integers(0, v.shape[1], n)
            yield case.name, case.pytensor, [np.ascontiguousarray(row[columns]) for row in v]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="elements per call")
    parser.add_argument("-k", default="", help="only functions whose name contains this (=NAME: that name only; several, comma-separated)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    peers = {"MLIR": "MLIR", "NUMBA": "NUMBA", "numpy": Mode(linker="py", optimizer="fast_run")}
    if HAVE_JAX:
        peers["JAX"] = "JAX"
    rng = np.random.default_rng(0)
    table = []
    for dtype in ("float64", "float32"):
        for name, graph, values in inputs_for(dtype, args.n, rng, args.k):
            xs = [pt.vector(f"x{k}", dtype=dtype) for k in range(len(values))]
            out = graph(*xs)
            calls = {}
            for peer, mode in peers.items():
                try:
                    f = pytensor.function(xs, out, mode=mode)
                except (NotImplementedError, AttributeError):
                    if peer in ("MLIR", "numpy"):
                        raise
                    continue  # that peer cannot compile it (JAX: no tfp, no jax j0): "n/a"
                calls[peer] = jax_callable(f) if peer == "JAX" else f
            want = np.asarray(calls["numpy"](*values))
            # A peer (ours included) that does not agree with numpy/scipy is timed and marked
            # "!" (e.g. Bessel j0 near its far zeros, accurate only absolutely; JAX's log2):
            # accuracy.py says by how much.
            differs = set()
            # Compared where numpy/scipy's result is finite (with an absolute floor of 100 eps
            # for results near a zero): its infinities are not always
            # right (scipy's gammaln of a subnormal x is inf; the C backend and ours give
            # -log x), and special values are the accuracy report's business.
            finite = np.isfinite(want)
            for peer, call in calls.items():
                got = np.asarray(call(*values))
                try:
                    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-3, atol=100 * np.finfo(dtype).eps, err_msg=f"{peer} {name} {dtype}")
                except AssertionError:
                    differs.add(peer)
            times = time_round_robin({p: (lambda c=c: c(*values)) for p, c in calls.items()}, 0.05, args.repeats)
            def cell(p):
                return fmt_time(times[p]) + ("!" if p in differs else "") if p in times else "n/a"

            def ratio(p):
                return fmt_ratio(times["MLIR"] / times[p]) if p in times else "n/a"

            row = [f"{name} {dtype}", *(cell(p) for p in peers)]
            row += [ratio("NUMBA")]
            row += [ratio("JAX")] if HAVE_JAX else []
            table.append(row)
            print(f"  {name} {dtype}: timed", flush=True)
    header = ["function", *peers, "MLIR/NUMBA"] + (["MLIR/JAX"] if HAVE_JAX else [])
    print(f"\n{args.n} elements per call; medians of {args.repeats} round-robin repeats;")
    print("! : that peer's results differ from numpy/scipy's (rtol 1e-3, atol 100 eps, where theirs are finite)\n")
    print_table(header, table)


if __name__ == "__main__":
    main()
