#!/usr/bin/env python
"""Accuracy report: max and mean error in ULP against mpmath, per function and dtype, for
mode="MLIR" and for PyTensor's C backend on the same points.

    python benchmarks/accuracy.py                 # every function in accuracy_cases.CASES
    python benchmarks/accuracy.py --quick         # fewer points (CI)
    python benchmarks/accuracy.py expm1 log1p     # some functions only
    python benchmarks/accuracy.py --mode MLIR_VULKAN --dtype float32   # another device
    python benchmarks/accuracy.py --jax           # PyTensor's JAX backend as a column too

The functions, their exact values and their domains are the table in
`benchmarks/accuracy_cases.py` (trigonometric arguments past the accuracy bound, 1e15 in
float64 and 1e5 in float32, are left out); errors are measured by `tests/ulp.py`. Each dtype compiles
one function per mode holding every selected case, so the run costs two compiles per
dtype plus mpmath's time (about 30 us a point). A script, not a test: it never fails;
the accuracy tests (tests/test_scalar_math.py, ...) assert the goals.
"""

import argparse
import os
import sys
import time

import numpy as np
import pytensor
import pytensor.tensor as pt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import pytensor_mlir  # noqa: E402,F401  (registers mode "MLIR")
from accuracy_cases import CASES, points, within_bound  # noqa: E402
from ulp import exact, ulp_errors  # noqa: E402

MODES = {"MLIR": "MLIR", "C": "CVM"}
DTYPES = ["float32", "float64"]


def jax_result(args, output, values, case):
    """One case under PyTensor's JAX backend (one function per case: JAX lacks some, and
    one it cannot compile must not take the others with it); None where it cannot."""
    try:
        f = pytensor.function(args, output, mode="JAX")
        with np.errstate(all="ignore"):
            return np.asarray(f(*(values if case.arity > 1 else [values])))
    except Exception:  # noqa: BLE001  (NotImplementedError, or jax's own errors)
        return None


def measure(cases, dtype, n, seed=0, modes=MODES):
    """{case name: {mode: (errors, points)}} for `dtype`."""
    rng = np.random.default_rng(seed)
    args = [[pt.vector(f"{c.name}{j}", dtype=dtype) for j in range(c.arity)] for c in cases]
    outputs = [c.pytensor(*a) for c, a in zip(cases, args)]
    values = [points(c, dtype, n, rng) for c in cases]
    # Points past a case's bound (trig arguments beyond 1e15) are left out of the table.
    values = [v[..., within_bound(c, dtype, v)] for c, v in zip(cases, values)]
    inputs = [x for a in args for x in a]
    flat = [row for c, v in zip(cases, values) for row in (v if c.arity > 1 else [v])]
    results = {}
    for mode_name, mode in modes.items():
        if mode_name == "JAX":
            results[mode_name] = [jax_result(a, o, v, c) for a, o, v, c in zip(args, outputs, values, cases)]
            continue
        f = pytensor.function(inputs, outputs, mode=mode)
        with np.errstate(all="ignore"):
            got = f(*flat)
        results[mode_name] = got if isinstance(got, list) else [got]
    table = {}
    for i, c in enumerate(cases):
        v = values[i] if c.arity > 1 else [values[i]]
        want = exact(c.mpmath, *v)
        floor = c.floor(*np.asarray(v, dtype=np.float64)) if c.floor else None
        table[c.name] = {m: None if results[m][i] is None else ulp_errors(results[m][i], want, dtype, floor) for m in modes}
        table[c.name]["points"] = np.stack(v, axis=-1) if c.arity > 1 else values[i]
        # Where neither an argument nor the exact result is subnormal: JAX (XLA) flushes
        # subnormals to zero, which alone puts its max error in the millions of ULP.
        tiny = np.finfo(dtype).tiny
        with np.errstate(invalid="ignore"):
            normal = [~((np.abs(np.asarray(a, dtype=np.float64)) < tiny) & (a != 0)) for a in [*v, want]]
        table[c.name]["normal"] = np.logical_and.reduce(normal)
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("functions", nargs="*", help="names from accuracy_cases.CASES (default: all)")
    parser.add_argument("--quick", action="store_true", help="300 points per function instead of 5000")
    parser.add_argument("-n", type=int, default=None, help="points per function")
    parser.add_argument("--mode", default="MLIR", help="the MLIR mode to measure (MLIR, MLIR_VULKAN, ...)")
    parser.add_argument("--dtype", choices=DTYPES, action="append", help="only this dtype (repeatable)")
    parser.add_argument("--jax", action="store_true", help="a column for PyTensor's JAX backend too (n/a where it has no such function)")
    args = parser.parse_args(argv)
    modes = {"MLIR": args.mode, "C": "CVM"}
    if args.jax:
        import jax

        jax.config.update("jax_enable_x64", True)
        modes["JAX"] = "JAX"
    n = args.n or (300 if args.quick else 5000)
    cases = [c for c in CASES if not args.functions or c.name in args.functions]
    unknown = set(args.functions) - {c.name for c in CASES}
    if unknown:
        parser.error(f"unknown functions: {sorted(unknown)}")
    start = time.time()
    print(f"ULP error against mpmath, about {n} points per function and dtype; MLIR is mode {args.mode} (pytensor {pytensor.__version__})\n")
    extra = ["JAX max", "JAX mean", "JAX max, no subnormals"] if args.jax else []
    header = ["function", "dtype", "MLIR max", "MLIR mean", "C max", "C mean", *extra, "MLIR worst at"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for dtype in args.dtype or DTYPES:
        # GPU devices take fewer buffers per dispatch (lavapipe: 128 bytes of push
        # constants): one function per case there.
        groups = [cases] if args.mode == "MLIR" else [[c] for c in cases]
        table = {}
        for group in groups:
            table.update(measure(group, dtype, n, modes=modes))
        for c in cases:
            row = table[c.name]
            mlir, cb = row["MLIR"], row["C"]
            worst = row["points"][int(np.argmax(mlir))]
            worst = tuple(float(w) for w in worst) if np.ndim(worst) else worst
            cells = [c.name, dtype, f"{mlir.max():.3g}", f"{mlir.mean():.3g}", f"{cb.max():.3g}", f"{cb.mean():.3g}"]
            if args.jax:
                jx = row["JAX"]
                cells += ["n/a"] * 3 if jx is None else [f"{jx.max():.3g}", f"{jx.mean():.3g}", f"{jx[row['normal']].max():.3g}"]
            print("| " + " | ".join([*cells, repr(worst)]) + " |", flush=True)
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
