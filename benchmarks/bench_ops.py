#!/usr/bin/env python
"""Tensor-op benchmark (issue 4, item 8): mode="MLIR" and "MLIR_THREADS" against NUMBA, JAX and numpy.

Rows: a sum over 1e7 float64, a softmax over 1000x1000, a gather ``x[idx]`` and a
scatter-add ``inc_subtensor(x[idx], v)`` of 1e6 indices, 1024x1024 float64 and float32
matmuls, a batched matmul 64x128x128 (float64); elementwise ``x * 2`` and ``exp(x)`` on 1e6
float64, and a 1000x1000 float64 summed over axis 0 and over axis 1. Each peer's result is checked against
numpy's before it is timed. Times are medians over repeats, the peers of a row timed
round-robin (bench_cpu's helpers), so load that comes and goes hits them alike.

    python benchmarks/bench_ops.py            # the issue's sizes
    python benchmarks/bench_ops.py --quick    # smoke run: smaller sizes, fewer repeats

A script, not a test: it asserts correctness but never fails on speed.
"""

import os
import sys
import time

import numpy as np
import pytensor
import pytensor.tensor as pt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cpu import bench_options, bench_peers, fmt_ratio, jax_callable, print_notes, print_run_header, print_times_and_ratios, time_round_robin  # noqa: E402

import pytensor_mlir  # noqa: E402,F401  (registers mode "MLIR")

# Targets from the issue, reported (not enforced) after the table.
TARGET_VS_NUMBA = 1.0
TARGET_MATMUL_VS_NUMPY = 2.0


def softmax_np(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def scatter_add_np(x, idx, v):
    out = x.copy()
    np.add.at(out, idx, v)
    return out


def rows(quick):
    """(label, size, inputs, output graph, values, numpy callable, rtol)."""
    rng = np.random.default_rng(0)
    n_sum = 10**5 if quick else 10**7
    n_sm = 100 if quick else 1000
    n_idx = 10**4 if quick else 10**6
    n_mm = 128 if quick else 1024
    # As many rows as indices: scattered all over a target as large as the index list.
    n_rows_scatter = n_idx
    b, m = (8, 32) if quick else (64, 128)

    out = []
    x = pt.dvector("x")
    out.append(("sum", f"{n_sum:.0e} f64", [x], x.sum(), [rng.standard_normal(n_sum)], np.sum, 1e-9))
    X = pt.dmatrix("X")
    out.append(("softmax", f"{n_sm}x{n_sm} f64", [X], pt.special.softmax(X, axis=-1),
                [rng.standard_normal((n_sm, n_sm))], softmax_np, 1e-12))
    idx = pt.lvector("idx")
    out.append(("gather x[idx]", f"{n_idx:.0e} idx, x {n_idx:.0e}", [x, idx], x[idx],
                [rng.standard_normal(n_idx), rng.integers(0, n_idx, n_idx)], lambda a, i: a[i], 0))
    v = pt.dvector("v")
    out.append(("scatter-add", f"{n_idx:.0e} idx, x {n_rows_scatter}", [x, idx, v], pt.inc_subtensor(x[idx], v),
                [rng.standard_normal(n_rows_scatter), rng.integers(0, n_rows_scatter, n_idx), rng.standard_normal(n_idx)],
                scatter_add_np, 1e-9))
    for dtype, rtol in (("float64", 1e-10), ("float32", 1e-4)):
        A, B = pt.matrix("A", dtype=dtype), pt.matrix("B", dtype=dtype)
        vals = [rng.standard_normal((n_mm, n_mm)).astype(dtype) for _ in range(2)]
        out.append((f"matmul f{dtype[5:]}", f"{n_mm}x{n_mm}", [A, B], pt.dot(A, B), vals, np.matmul, rtol))
    T, U = pt.dtensor3("T"), pt.dtensor3("U")
    out.append(("batched matmul", f"{b}x{m}x{m} f64", [T, U], pt.matmul(T, U),
                [rng.standard_normal((b, m, m)), rng.standard_normal((b, m, m))], np.matmul, 1e-10))
    n_ew = 10**4 if quick else 10**6
    ew = rng.standard_normal(n_ew)
    out.append(("x * 2", f"{n_ew:.0e} f64", [x], x * 2, [ew], lambda a: a * 2, 0))
    out.append(("exp(x)", f"{n_ew:.0e} f64", [x], pt.exp(x), [ew], np.exp, 1e-15))
    for axis in (0, 1):
        out.append((f"sum axis {axis}", f"{n_sm}x{n_sm} f64", [X], X.sum(axis=axis), [rng.standard_normal((n_sm, n_sm))],
                    lambda a, axis=axis: a.sum(axis=axis), 1e-12))
    return out


def ratio(a, b):
    return None if a is None or b is None else a / b


def main():
    opts, repeats, min_time = bench_options(__doc__, "smoke run: smaller sizes, fewer repeats")
    peers, notes = bench_peers("numpy")
    # The threaded CPU mode (local-task: a worker per core) beside the default one.
    peers.insert(1, "MLIR_THREADS")
    print_run_header(opts, repeats)

    results = []
    t_start = time.perf_counter()
    for label, size, inputs, output, vals, np_fn, rtol in rows(opts.quick):
        fns = {}
        compile_s = {}
        want = np_fn(*vals)
        for peer in peers:
            # Each peer gets inputs of its own, so no peer can see another's writes.
            own = [a.copy() for a in vals]
            if peer == "numpy":
                fns[peer] = lambda np_fn=np_fn, own=own: np_fn(*own)
                continue
            t0 = time.perf_counter()
            try:
                f = pytensor.function(inputs, output, mode=peer)
            except Exception as e:  # a peer that cannot compile a row is n/a there, not the end of the run
                notes.append(f"{label}: {peer} failed to compile ({type(e).__name__}: {str(e).splitlines()[0][:160]})")
                continue
            compile_s[peer] = time.perf_counter() - t0
            call = jax_callable(f) if peer == "JAX" else f
            fns[peer] = lambda call=call, own=own: call(*own)
        for peer, fn in fns.items():
            np.testing.assert_allclose(np.asarray(fn()), want, rtol=rtol, atol=rtol, err_msg=f"{label}: {peer} vs numpy")
        times = dict.fromkeys(peers) | time_round_robin(fns, min_time, repeats)
        print(f"  {label}: timed (compile s: " + ", ".join(f"{p} {c:.1f}" for p, c in compile_s.items()) + ")",
              flush=True)
        results.append((label, size, times))

    print_times_and_ratios(results, peers, "op", "Per-call time (the pytensor Function call; numpy: the same computation in numpy)")
    print()
    print("Targets (from the issue)" + ("  [--quick: sizes differ from the issue's]" if opts.quick else ""))
    for label, size, t in results:
        for mode in ("MLIR", "MLIR_THREADS"):
            r = ratio(t[mode], t["NUMBA"])
            if r is None:
                print(f"  {label} ({size}), {mode}: n/a")
                continue
            line = f"  {label} ({size}): {mode} / NUMBA {fmt_ratio(r)} -> {'MET' if r <= TARGET_VS_NUMBA else 'NOT MET'}"
            if "matmul" in label:
                rn = ratio(t[mode], t["numpy"])
                line += (f"; {mode} / numpy {fmt_ratio(rn)} (within {TARGET_MATMUL_VS_NUMPY}x: "
                         f"{'MET' if rn <= TARGET_MATMUL_VS_NUMPY else 'NOT MET'})")
            print(line)
    notes.append("MLIR runs on IREE's local-sync driver (one thread), MLIR_THREADS on local-task (a worker per core); numpy's matmul and NUMBA's dot call "
                 "OpenBLAS with its own threads.")
    print_notes(notes, t_start)


if __name__ == "__main__":
    main()
