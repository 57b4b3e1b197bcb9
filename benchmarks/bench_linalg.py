#!/usr/bin/env python
"""Dense linear algebra benchmark: mode="MLIR" against NUMBA, JAX and PyTensor's C backend
(LAPACK through scipy), at the sizes PyMC models use and beyond.

Rows: a Cholesky factor; a multivariate normal's log-density as PyMC writes it (Cholesky,
a triangular solve, the log of the factor's diagonal), and over a batch of 100 covariances
with its gradient; a general solve (elimination with partial pivoting), also over a batch
of 100 systems; a determinant, also of a batch; QR's R; the eigenvalues of a symmetric
matrix, and its eigenvectors; singular values; a real Schur form's and a QZ form's
eigenvalues; a discrete algebraic Riccati equation (QZ sorted "iuc" of a 2n x 2n pencil,
as PyMC's state-space models' steady-state filters solve it); a tridiagonal solve (gttrf and gttrs: one
dispatch per recurrence, also at n = 1000). Every peer's result is checked against the C
backend's before it is timed. Times are medians over repeats, the peers of a row timed
round-robin (bench_cpu's helpers). IREE has no LAPACK: on the CPU each of ours is one
dispatch of scalar loops (lower/dense_kernels, see the README; eigenvalues by tridiagonal
reduction and QL, singular values by one-sided Jacobi sweeps; a batch's matrices stacked
in one dispatch); the tridiagonal solve's recurrences run in one dispatch each
(lower/tridiagonal.rs).

    python benchmarks/bench_linalg.py            # n = 5, 50, 200
    python benchmarks/bench_linalg.py --quick    # smoke run: n = 5, 50, fewer repeats

A script, not a test: it asserts correctness but never fails on speed.
"""

import os
import sys

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.tensor.linalg import qz, schur, solve_discrete_are

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cpu import run_graph_bench  # noqa: E402

import pytensor_mlir  # noqa: E402,F401  (registers mode "MLIR")


def spd(rng, n):
    """A well-conditioned symmetric positive definite n x n matrix."""
    a = rng.standard_normal((n, n))
    return a @ a.T / n + np.eye(n)


def tridiagonal(rng, n):
    """A tridiagonal matrix whose pivoting swaps rows at some steps."""
    return np.diag(rng.standard_normal(n)) + np.diag(rng.standard_normal(n - 1), 1) + np.diag(2 * rng.standard_normal(n - 1), -1)


def rows(quick):
    """(label, size, inputs, outputs, values)."""
    rng = np.random.default_rng(0)
    sizes = [5, 50] if quick else [5, 50, 200]
    A, x, mu = pt.dmatrix("A"), pt.dvector("x"), pt.dvector("mu")
    L = pt.linalg.cholesky(A)
    z = pt.linalg.solve_triangular(L, x - mu, lower=True)
    mvn_logp = -0.5 * (z @ z) - pt.log(pt.diag(L)).sum() - 0.5 * x.shape[0] * np.log(2 * np.pi)
    # The same log-density over a batch of 100 covariances (Blockwise{Cholesky} and
    # Blockwise{SolveTriangular}), and its gradient (Blockwise{AllocDiag} too).
    T, Y = pt.dtensor3("T"), pt.dmatrix("Y")
    LB = pt.linalg.cholesky(T)
    zb = pt.linalg.solve_triangular(LB, Y[..., None], lower=True)[..., 0]
    batched_logp = -0.5 * (zb**2).sum() - pt.log(pt.diagonal(LB, axis1=-2, axis2=-1)).sum()

    def batch_of_spd(n):
        return [np.stack([spd(rng, n) for _ in range(100)]), rng.standard_normal((100, n))]

    def batch_of_systems(n):
        return [rng.standard_normal((100, n, n)) + n**0.5 * np.eye(n), rng.standard_normal((100, n))]

    Bm, Q, R = pt.dmatrix("B"), pt.dmatrix("Q"), pt.dmatrix("R")

    def riccati(n):
        k = max(1, n // 2)
        return [rng.standard_normal((n, n)) / n**0.5, rng.standard_normal((n, k)), np.eye(n), np.eye(k)]

    # A QZ form's eigenvalues alpha / beta, sorted: what does not depend on the blocks'
    # order or the columns' signs. A symmetric and B positive definite: real eigenvalues,
    # so the diagonals' ratios are all of them (no 2 x 2 blocks).
    aa, bb, _, _ = qz(A, Bm)
    qz_ratios = pt.sort(pt.diagonal(aa) / pt.diagonal(bb))

    def symmetric_pencil(n):
        s, t = rng.standard_normal((n, n)), rng.standard_normal((n, n)) / (4 * n)
        return [s + s.T, np.eye(n) + t + t.T]

    # Eigenvectors' signs are arbitrary: their squares are compared (distinct eigenvalues).
    w, V = pt.linalg.eigh(A)

    graphs = [
        ("cholesky", [A], L, lambda n: [spd(rng, n)]),
        ("MvNormal logp", [A, x, mu], mvn_logp, lambda n: [spd(rng, n), rng.standard_normal(n), rng.standard_normal(n)]),
        ("batched MvNormal logp", [T, Y], batched_logp, batch_of_spd),
        ("its gradient", [T, Y], pytensor.grad(batched_logp, [T, Y]), batch_of_spd),
        ("solve", [A, x], pt.linalg.solve(A, x), lambda n: [rng.standard_normal((n, n)) + n**0.5 * np.eye(n), rng.standard_normal(n)]),
        ("det", [A], pt.linalg.det(A), lambda n: [rng.standard_normal((n, n)) / n**0.5 + np.eye(n)]),
        ("QR's R", [A], pt.linalg.qr(A, mode="r"), lambda n: [rng.standard_normal((n, n))]),
        ("batched solve", [T, Y], pt.linalg.solve(T, Y, b_ndim=1), batch_of_systems),
        ("batched det", [T], pt.linalg.det(T), lambda n: batch_of_systems(n)[:1]),
        ("eigvalsh", [A], pt.linalg.eigvalsh(A, None), lambda n: [spd(rng, n)]),
        ("eigh (w, V**2)", [A], [w, V**2], lambda n: [spd(rng, n)]),
        ("singular values", [A], pt.linalg.svd(A, compute_uv=False), lambda n: [rng.standard_normal((n, n))]),
        # T's diagonal, sorted: the one part of a real Schur form that does not depend on
        # the eigenvalues' order or the signs of Z's columns.
        ("schur (sorted diag T)", [A], pt.sort(pt.diagonal(schur(A)[0])), lambda n: [rng.standard_normal((n, n))]),
        ("qz (sorted alpha / beta)", [A, Bm], qz_ratios, symmetric_pencil),
        ("solve_discrete_are", [A, Bm, Q, R], solve_discrete_are(A, Bm, Q, R), riccati),
        ("tridiagonal solve", [A, x], pt.linalg.solve(A, x, assume_a="tridiagonal"), lambda n: [tridiagonal(rng, n), rng.standard_normal(n)]),
    ]
    out = []
    for label, inputs, output, values in graphs:
        if label.startswith("batched") or label == "its gradient":
            for n in sizes[:2]:
                out.append((label, f"100 x n = {n}", inputs, output, values(n)))
            continue
        if label == "solve_discrete_are":  # a 2n x 2n pencil: n = 5, 50
            for n in sizes[:2]:
                out.append((label, f"n = {n}", inputs, output, values(n)))
            continue
        for n in sizes + ([1000] if label == "tridiagonal solve" else []):
            out.append((label, f"n = {n}", inputs, output, values(n)))
    return out


def main():
    run_graph_bench(__doc__, "smoke run: n = 5, 50, fewer repeats", rows, rtol=1e-8, atol=1e-10,
                    notes_after=["C and NUMBA call LAPACK (OpenBLAS, with threads of its own); MLIR runs on one thread."])


if __name__ == "__main__":
    main()
