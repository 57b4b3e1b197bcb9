"""Tridiagonal systems (lower/tridiagonal.rs): LUFactorTridiagonal (LAPACK's gttrf),
SolveLUFactorTridiagonal (gttrs, both transposes) and Solve(assume_a="tridiagonal"),
compared with the C backend (whose perform calls scipy's LAPACK) on the same inputs:
several sizes through one compiled function, matrices whose pivoting swaps rows and ones
whose does not, both dtypes, a batch through Blockwise, gradients (PyTensor builds them from
the factors and a transposed solve), a singular matrix and bad input."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.linalg import tridiagonal_lu_factor, tridiagonal_lu_solve

import pytensor_mlir
from conftest import C, MLIR, assert_same, compile_both

FLOATS = ["float64", "float32"]


def tol(dtype):
    return dict(rtol=2e-3, atol=2e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)


def tridiagonal(rng, n, swaps, dtype="float64"):
    """A random tridiagonal matrix; `swaps`: its subdiagonal dominates its diagonal, so gttrf
    swaps rows at most steps (else the diagonal dominates and it swaps none)."""
    d = rng.normal(size=n) + (0.0 if swaps else 4.0 * np.sign(rng.normal(size=n)))
    lower = rng.normal(size=n - 1) * (10.0 if swaps else 1.0)
    upper = rng.normal(size=n - 1)
    return (np.diag(d) + np.diag(lower, -1) + np.diag(upper, 1)).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_factor_and_both_solves_like_lapack(dtype):
    """gttrf's five outputs (the pivots exactly) and gttrs's A x = B and A^T x = B, n from 3
    (scipy's gttrf wrapper refuses n < 3: its du2 would be empty or shorter) to 40, one compile."""
    a = pt.matrix("a", dtype=dtype)
    rhs = pt.matrix("rhs", dtype=dtype)
    factors = tridiagonal_lu_factor(a)
    outputs = [*factors, tridiagonal_lu_solve(factors, rhs, b_ndim=2), tridiagonal_lu_solve(factors, rhs, b_ndim=2, transposed=True)]
    before = pytensor_mlir.compiler_invocations()
    f, ref = compile_both([a, rhs], outputs)
    rng = np.random.default_rng(0)
    swapped = 0
    for n in [3, 4, 9, 40]:
        for swaps in [False, True]:
            values = [tridiagonal(rng, n, swaps, dtype), rng.normal(size=(n, 3)).astype(dtype)]
            got, want = f(*values), ref(*values)
            for i, (g, w) in enumerate(zip(got, want)):
                assert_same(g, w, err_msg=f"output {i} at n={n}, swaps={swaps}", **tol(dtype))
            swapped += int((want[4] != np.arange(1, n + 1)).sum())
    assert swapped > 20, "the matrices never made gttrf swap rows"
    assert pytensor_mlir.compiler_invocations() == before + 1


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("b_ndim", [1, 2])
def test_solve_assume_tridiagonal(dtype, b_ndim):
    a = pt.matrix("a", dtype=dtype)
    rhs = pt.tensor("rhs", dtype=dtype, shape=(None,) * b_ndim)
    x = pt.linalg.solve(a, rhs, assume_a="tridiagonal", b_ndim=b_ndim)
    f, ref = compile_both([a, rhs], x)
    rng = np.random.default_rng(1)
    for n in [1, 2, 7, 30]:
        for swaps in [False, True]:
            values = [tridiagonal(rng, n, swaps, dtype), rng.normal(size=(n,) + (2,) * (b_ndim - 1)).astype(dtype)]
            assert_same(f(*values), ref(*values), err_msg=f"n={n}, swaps={swaps}", **tol(dtype))


def test_only_the_three_diagonals_are_read():
    """scipy's tridiagonal solve reads the three diagonals only: what lies outside is
    ignored (checked against C, and against the dense solve of the tridiagonal part)."""
    a = pt.dmatrix("a")
    rhs = pt.dvector("rhs")
    f, ref = compile_both([a, rhs], pt.linalg.solve(a, rhs, assume_a="tridiagonal"))
    rng = np.random.default_rng(2)
    band = tridiagonal(rng, 6, True)
    full = band + np.triu(rng.normal(size=(6, 6)), 2) + np.tril(rng.normal(size=(6, 6)), -2)
    b = rng.normal(size=6)
    assert_same(f(full, b), ref(full, b), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(f(full, b), np.linalg.solve(band, b), rtol=1e-9)


def test_gradients_through_the_factors():
    """PyTensor's gradient of a tridiagonal solve factors A once (LUFactorTridiagonal) and
    solves with it twice, once transposed."""
    a = pt.dmatrix("a")
    rhs = pt.dvector("rhs")
    x = pt.linalg.solve(a, rhs, assume_a="tridiagonal")
    cost = (x**2).sum() + x[0] * x[-1]
    grads = pytensor.grad(cost, [a, rhs])
    f, ref = compile_both([a, rhs], [cost, *grads])
    ops = {type(getattr(n.op, "core_op", n.op)).__name__ for n in f.maker.fgraph.apply_nodes}
    assert {"LUFactorTridiagonal", "SolveLUFactorTridiagonal"} <= ops, ops
    rng = np.random.default_rng(3)
    for swaps in [False, True]:
        values = [tridiagonal(rng, 8, swaps), rng.normal(size=8)]
        for i, (g, w) in enumerate(zip(f(*values), ref(*values))):
            assert_same(g, w, err_msg=f"output {i}, swaps={swaps}", rtol=1e-8, atol=1e-10)


def test_batched_through_blockwise():
    a = pt.tensor3("a")
    rhs = pt.matrix("rhs")
    factors = tridiagonal_lu_factor(a)
    outputs = [*factors, pt.linalg.solve(a, rhs[..., None], assume_a="tridiagonal", b_ndim=2)]
    f, ref = compile_both([a, rhs], outputs)
    rng = np.random.default_rng(4)
    stack = np.stack([tridiagonal(rng, 5, k % 2 == 1) for k in range(4)])
    values = [stack, rng.normal(size=(4, 5))]
    for i, (g, w) in enumerate(zip(f(*values), ref(*values))):
        assert_same(g, w, err_msg=f"output {i}", rtol=1e-9, atol=1e-11)


def test_singular_matrix_gives_nan_like_the_c_backend():
    """A pivot exactly 0 (scipy raises LinAlgError, PyTensor's perform returns NaN)."""
    a = pt.dmatrix("a")
    rhs = pt.dvector("rhs")
    f = pytensor.function([a, rhs], pt.linalg.solve(a, rhs, assume_a="tridiagonal"), mode=MLIR)
    singular = np.diag([1.0, 0.0, 2.0]) + np.diag([0.0, 0.0], -1) + np.diag([1.0, 1.0], 1)
    got = f(singular, np.ones(3))
    assert got.shape == (3,) and np.isnan(got).all()
    with pytest.raises(np.linalg.LinAlgError):
        __import__("scipy.linalg").linalg.solve(singular, np.ones(3), assume_a="tridiagonal")
    # A NaN on the diagonal is no exact zero: it spreads as LAPACK's arithmetic spreads it.
    nan_diag = np.diag([1.0, np.nan, 2.0]) + np.diag([0.5, 0.5], -1) + np.diag([1.0, 1.0], 1)
    ref = pytensor.function([a, rhs], pt.linalg.solve(a, rhs, assume_a="tridiagonal"), mode=C)
    assert_same(f(nan_diag, np.ones(3)), ref(nan_diag, np.ones(3)))


def test_bad_input():
    """Shapes that do not fit raise before the call, as errors the C backend raises too."""
    a = pt.dmatrix("a")
    rhs = pt.dvector("rhs")
    f = pytensor.function([a, rhs], pt.linalg.solve(a, rhs, assume_a="tridiagonal"), mode=MLIR)
    with pytest.raises(ValueError):
        f(np.eye(3), np.ones(4))
    with pytest.raises(ValueError):
        f(np.ones((3, 4)), np.ones(3))
    # The factorization's diagonals in lengths that do not fit (scipy's gttrf refuses them).
    dl, d, du = pt.dvector("dl"), pt.dvector("d"), pt.dvector("du")
    from pytensor.tensor.linalg.solvers.tridiagonal import LUFactorTridiagonal

    outs = LUFactorTridiagonal()(dl, d, du)
    g, ref = compile_both([dl, d, du], outs)
    with pytest.raises(ValueError):
        g(np.ones(2), np.ones(5), np.ones(2))
    with pytest.raises(ValueError):
        g(np.ones(2), np.ones(3), np.ones(1))
    good = [np.ones(2), np.full(3, 3.0), np.ones(2)]
    for i, (x, w) in enumerate(zip(g(*good), ref(*good))):
        assert_same(x, w, err_msg=f"output {i}")
