"""Results that do not depend on what earlier calls left in memory. IREE's allocator hands a
call the buffers an earlier call freed, unwritten: a kernel that reads an element of its
result before writing it (the bidiagonal singular-value kernel did, past W's columns) is
right on the first call of a process and wrong on later ones, depending on the sizes
called before. With `PYTENSOR_MLIR_POISON_UNWRITTEN=1` the kernels' results start as NaN
instead: each graph here compiled that way must give the bits it gives compiled plainly,
and the C backend's values where those are unique (not where signs of vectors are free).
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import pytensor_mlir
from pytensor.tensor.linalg import lu, lu_factor, qr, qz, schur

from conftest import C, MLIR


def square(n, batch=()):
    rng = np.random.default_rng(n)
    return rng.normal(size=batch + (n, n))


def spd(n, batch=()):
    a = square(n, batch)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def sym(n, batch=()):
    a = square(n, batch)
    return a + np.swapaxes(a, -1, -2)


M, T, T2, F = pt.dmatrix("m"), pt.dtensor3("t"), pt.dtensor3("t2"), pt.fmatrix("f")
N, K = pt.dmatrix("n"), pt.dmatrix("k")
I = pt.lvector("i")


def rows_of(n):
    return np.array([0, n - 1, 2, 0, n // 2], dtype="int64")

# (name, inputs, outputs, makers of the inputs at size n, whether the C backend's values are
# the same up to rounding: not where signs or orders of vectors are free).
CASES = [
    ("svd values", [M], [pt.linalg.svd(M, compute_uv=False)], [lambda n: square(n)[:, : n - 2]], True),
    ("svd values wide", [M], [pt.linalg.svd(M, compute_uv=False)], [lambda n: square(n)[: n - 3]], True),
    ("svd values batched", [T], [pt.linalg.svd(T, compute_uv=False)], [lambda n: square(n, (3,))], True),
    ("svd values float32", [F], [pt.linalg.svd(F, compute_uv=False)], [lambda n: square(n)[:, : n - 2].astype("float32")], True),
    ("svd", [M], list(pt.linalg.svd(M)), [lambda n: square(n)[:, : n - 2]], False),
    ("eigvalsh", [M], [pt.linalg.eigvalsh(M, None)], [sym], True),
    ("eigh", [M], list(pt.linalg.eigh(M)), [sym], False),
    ("eigh batched", [T], list(pt.linalg.eigh(T)), [lambda n: sym(n, (2,))], False),
    ("qr", [M], list(qr(M)), [lambda n: square(n)[:, : n - 2]], False),
    ("qr batched", [T], list(qr(T)), [lambda n: square(n, (2,))], False),
    ("qr pivoted", [M], list(qr(M, mode="economic", pivoting=True)), [lambda n: square(n)[: n - 3]], True),
    ("cholesky", [M], [pt.linalg.cholesky(M)], [spd], True),
    ("cholesky batched", [T], [pt.linalg.cholesky(T)], [lambda n: spd(n, (3,))], True),
    ("solve batched", [T, T2], [pt.linalg.solve(T, T2)], [lambda n: square(n, (3,)), lambda n: square(n + 1, (3,))[:, :n, :2]], True),
    ("solve", [M, N], [pt.linalg.solve(M, N)], [square, lambda n: square(n + 1)[:n, :3]], True),
    ("solve pos", [M, N], [pt.linalg.solve(M, N, assume_a="pos")], [spd, lambda n: square(n + 1)[:n, :3]], True),
    ("solve sym", [M, N], [pt.linalg.solve(M, N, assume_a="sym")], [sym, lambda n: square(n + 1)[:n, :3]], True),
    ("solve_triangular", [M, N], [pt.linalg.solve_triangular(M, N, lower=True)], [lambda n: np.tril(square(n)) + n * np.eye(n), lambda n: square(n + 1)[:n, :3]], True),
    ("inv", [M], [pt.linalg.inv(M)], [square], True),
    ("det and slogdet", [M], [pt.linalg.det(M), *pt.linalg.slogdet(M)], [square], True),
    ("lu", [M], list(lu(M)), [square], True),
    ("lu with p_indices", [M], list(lu(M, p_indices=True)), [square], True),
    ("inc_subtensor of rows", [M, N, I], [pt.inc_subtensor(M[I], N)], [square, lambda n: square(n + 1)[:5, :n], rows_of], True),
    ("set_subtensor of rows", [M, N, I], [pt.set_subtensor(M[I], N)], [square, lambda n: square(n + 1)[:5, :n], rows_of], True),
    ("row sums beside a kernel", [M], [pt.linalg.cholesky(M), M.sum(axis=-1)], [spd], True),
    ("lu_factor", [M], list(lu_factor(M)), [square], True),
    ("schur", [M], list(schur(M)), [square], False),
    ("schur batched", [T], list(schur(T)), [lambda n: square(n, (2,))], False),
    ("qz", [M, N], list(qz(M, N)), [square, lambda n: square(n + 1)[:n, :n]], False),
    ("solve_sylvester", [M, N, K], [pt.linalg.solve_sylvester(M, N, K)], [square, lambda n: square(n + 1)[:n, :n] + 2 * n * np.eye(n), lambda n: square(n + 2)[:n, :n]], True),
    ("solve_discrete_lyapunov", [M, N], [pt.linalg.solve_discrete_lyapunov(M, N)], [lambda n: square(n) / (2 * n), lambda n: spd(n + 1)[:n, :n]], True),
    ("expm", [M], [pt.linalg.expm(M)], [lambda n: square(n) / n], True),
    ("pinv", [M], [pt.linalg.pinv(M)], [lambda n: square(n)[:, : n - 2]], True),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_kernels_write_before_they_read(case, monkeypatch):
    name, inputs, outputs, makers, unique = case
    f = pytensor.function(inputs, outputs, mode=MLIR)
    monkeypatch.setenv("PYTENSOR_MLIR_POISON_UNWRITTEN", "1")
    poisoned = pytensor.function(inputs, outputs, mode=MLIR)
    assert pytensor_mlir.get_mlir(poisoned) != pytensor_mlir.get_mlir(f), "the switch changed nothing"
    ref = pytensor.function(inputs, outputs, mode=C) if unique else None
    for n in (7, 12):
        args = [make(n) for make in makers]
        got = poisoned(*args)
        for g, plain in zip(got, f(*args)):
            np.testing.assert_array_equal(g, plain, err_msg=f"{name} at n={n}: read an element before writing it")
        if ref is not None:
            for g, want in zip(got, ref(*args)):
                tol = 1e-9 if g.dtype == np.float64 else 1e-5
                np.testing.assert_allclose(g, want, rtol=tol, atol=tol * 1e-3, err_msg=f"{name} at n={n}")
