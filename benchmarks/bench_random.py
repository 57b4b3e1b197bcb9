#!/usr/bin/env python
"""RandomVariable benchmark: draws in mode="MLIR" (Philox in the kernel) against NUMBA,
JAX (where importable) and the C backend (CVM: numpy's Generator, deep-copied per call), and numpy's own
Generator called directly.

Each row is a function ``f() -> draws`` of a shared Generator updated every call (what
PyMC's forward sampling compiles). The streams differ between backends, so results are
not compared element by element: each peer's draws are checked to have the mean and
standard deviation of the distribution (to 5 standard errors) before it is timed. Times
are medians over repeats, the peers of a row timed round-robin.

    python benchmarks/bench_random.py            # 1e6 draws, and a 10-draw call
    python benchmarks/bench_random.py --quick    # smoke run

A script, not a test: it checks the draws but never fails on speed.
"""

import os
import sys
import time
import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cpu import HAVE_JAX, bench_options, print_notes, print_times_and_ratios, time_round_robin  # noqa: E402

import pytensor_mlir  # noqa: E402,F401  (registers mode "MLIR")

ptr = pt.random


def rows(quick):
    """(label, size, builder(rng, n) -> (next_rng, draws), numpy(rng, n), mean, sd)."""
    n = 10**4 if quick else 10**6
    return [
        ("normal", n, lambda r: r.normal(1.0, 2.0, size=(n,)), lambda g: g.normal(1.0, 2.0, n), 1.0, 2.0),
        ("uniform f32", n, lambda r: r.uniform(0.0, 1.0, size=(n,), dtype="float32"),
         lambda g: g.random(n, dtype=np.float32), 0.5, 12 ** -0.5),
        ("gamma(2.5)", n, lambda r: r.gamma(2.5, scale=1.0, size=(n,)), lambda g: g.gamma(2.5, 1.0, n), 2.5, 2.5 ** 0.5),
        ("poisson(3.5)", n, lambda r: r.poisson(3.5, size=(n,)), lambda g: g.poisson(3.5, n), 3.5, 3.5 ** 0.5),
        ("normal, small call", 10, lambda r: r.normal(1.0, 2.0, size=(10,)), lambda g: g.normal(1.0, 2.0, 10), None, None),
    ]


def check_moments(label, draws, mean, sd):
    if mean is None:
        return
    draws = np.asarray(draws, dtype=np.float64)
    se = sd / np.sqrt(draws.size)
    assert abs(draws.mean() - mean) < 5 * se, f"{label}: mean {draws.mean()} vs {mean}"
    assert abs(draws.std() - sd) < 5 * sd * np.sqrt(2.0 / draws.size) * 2, f"{label}: sd {draws.std()} vs {sd}"


def main():
    opts, repeats, min_time = bench_options(__doc__, "small sizes, few repeats")
    t_start = time.time()
    peers = ["MLIR", "NUMBA", *(["JAX"] if HAVE_JAX else []), "CVM", "numpy"]
    results = []
    notes = []
    for label, size, build, direct, mean, sd in rows(opts.quick):
        fns = {}
        for mode in peers[:-1]:
            rng = ptr.shared_rng(np.random.default_rng(0))
            next_rng, x = build(rng)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fns[mode] = pytensor.function([], x, mode=mode, updates={rng: next_rng})
            except Exception as e:  # a peer that cannot compile the row is left out of it
                notes.append(f"{label}: {mode} failed to compile: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
        gen = np.random.default_rng(0)
        fns["numpy"] = lambda gen=gen, direct=direct: direct(gen)
        for mode, fn in fns.items():
            check_moments(f"{label} ({mode})", fn(), mean, sd)
        times = time_round_robin(fns, min_time, repeats)
        results.append((label, f"{size:.0e}" if size >= 1000 else str(size), {p: times.get(p) for p in peers}))
    print_times_and_ratios(results, peers, "draws", "Seconds per call (median), a shared Generator updated every call")
    print_notes(notes, t_start)


if __name__ == "__main__":
    main()
