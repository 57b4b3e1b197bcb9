#!/usr/bin/env python
"""Scan benchmark: mode="MLIR" against NUMBA, JAX and PyTensor's C backend, on loops as
PyMC models write them.

Rows: a linear recurrence x_t = a x_{t-1} + s_t over 1000 steps of 100-vectors (the whole
trace); a scalar AR(1) log-density over 1000 steps and its gradient (a Scan with mit_mot
buffers); an RNN h_t = tanh(W h_{t-1} + u_t) over 200 steps of 64 units and its gradient;
a while loop (`until`): x = cos(x) on 100 lanes until it stops moving (about 150 steps).
Every peer's result is checked against the C backend's before it is timed. Times are
medians over repeats, the peers of a row timed round-robin (bench_cpu's helpers).

    python benchmarks/bench_scan.py            # the sizes above
    python benchmarks/bench_scan.py --quick    # smoke run: fewer steps, fewer repeats

A script, not a test: it asserts correctness but never fails on speed.
"""

import os
import sys

import numpy as np
import pytensor
import pytensor.tensor as pt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cpu import run_graph_bench  # noqa: E402

import pytensor_mlir  # noqa: E402,F401  (registers mode "MLIR")


def scan(*args, **kwargs):
    return pytensor.scan(*args, return_updates=False, **kwargs)


def rows(quick):
    """(label, size, inputs, outputs, values)."""
    rng = np.random.default_rng(0)
    steps = 100 if quick else 1000
    out = []

    s, x0, a = pt.dmatrix("s"), pt.dvector("x0"), pt.dscalar("a")
    xs = scan(lambda s_t, x, a: a * x + s_t, sequences=[s], outputs_info=[x0], non_sequences=[a])
    out.append(("recurrence", f"{steps} x 100 f64", [s, x0, a], xs, [rng.standard_normal((steps, 100)), rng.standard_normal(100), np.float64(0.9)]))

    y, rho, sigma = pt.dvector("y"), pt.dscalar("rho"), pt.dscalar("sigma")
    mu = scan(lambda y_prev, rho: rho * y_prev, sequences=[y[:-1]], non_sequences=[rho])
    logp = (-0.5 * ((y[1:] - mu) / sigma) ** 2 - pt.log(sigma)).sum()
    ys = np.cumsum(rng.standard_normal(steps)) * 0.1
    vals = [ys, np.float64(0.7), np.float64(1.3)]
    out.append(("AR(1) logp", f"{steps} steps f64", [y, rho, sigma], logp, vals))
    out.append(("AR(1) logp grad", f"{steps} steps f64", [y, rho, sigma], pytensor.grad(logp, [rho, sigma]), vals))

    n_rnn = 20 if quick else 200
    u, w = pt.dmatrix("u"), pt.dmatrix("w")
    hs = scan(lambda u_t, h, w: pt.tanh(pt.dot(w, h) + u_t), sequences=[u], outputs_info=[pt.zeros_like(u[0])], non_sequences=[w])
    cost = (hs**2).sum()
    vals = [rng.standard_normal((n_rnn, 64)), rng.standard_normal((64, 64)) / 8]
    out.append(("RNN", f"{n_rnn} x 64 f64", [u, w], cost, vals))
    out.append(("RNN grad", f"{n_rnn} x 64 f64", [u, w], pytensor.grad(cost, [w]), vals))

    # A while loop: fixed-point iteration x = cos(x) on 100 lanes until every lane moved
    # less than 1e-12 (about 150 steps), at most `steps`; the whole trace kept.
    from pytensor.scan.utils import until

    z0 = pt.dvector("z0")
    zs = scan(lambda z: (pt.cos(z), until(pt.max(abs(pt.cos(z) - z)) < 1e-12)), outputs_info=[z0], n_steps=steps)
    out.append(("while (until)", f"<= {steps} x 100 f64", [z0], [zs[-1], zs.shape[0]], [rng.uniform(0, 1, 100)]))
    return out


def main():
    run_graph_bench(__doc__, "smoke run: fewer steps, fewer repeats", rows)


if __name__ == "__main__":
    main()
