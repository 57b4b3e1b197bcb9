"""LU (lower/linalg.rs) and QR (lower/qr.rs), compared with the C backend, whose `perform`
calls scipy's lu and LAPACK's geqrf/orgqr, on the same inputs: every output form and mode,
square, wide and tall matrices, ill-conditioned and singular ones, NaN and infinities, both
float dtypes and integer input, batches through Blockwise, and gradients. Each function is
compiled once and run on many matrices (dims are dynamic)."""

import functools

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.linalg
from pytensor.tensor.linalg import lu, qr
from scipy.linalg import hilbert

from conftest import C, MLIR, assert_same, compile_both

QR_MODES = ["full", "economic", "r", "raw"]


@functools.cache
def lu_functions():
    """(MLIR, C) functions of every LU output form of one float64 matrix."""
    a = pt.dmatrix("a")
    return compile_both([a], [*lu(a), *lu(a, p_indices=True), *lu(a, permute_l=True)])


@functools.cache
def qr_functions(dtype="float64"):
    """(MLIR, C) functions of every QR mode of one matrix."""
    a = pt.matrix("a", dtype=dtype)
    outs = []
    for mode in QR_MODES:
        o = qr(a, mode=mode)
        outs.extend(o if isinstance(o, (list, tuple)) else [o])
    return compile_both([a], outs)


def compare(f, ref, value, rtol, atol, what):
    got, want = f(value), ref(value)
    assert len(got) == len(want)
    for i, (g, w, out) in enumerate(zip(got, want, f.maker.fgraph.outputs)):
        if w.dtype == np.int64 and out.type.dtype == "int32":
            # LU's p_indices: the C backend hands on scipy's int64 array although the
            # output's type is int32, which is what we return.
            assert g.dtype == np.int32
            w = w.astype(np.int32)
        assert_same(g, w, rtol=rtol, atol=atol, err_msg=f"{what}: output {i}")


def test_lu_every_form_like_scipy():
    """P, L, U; p, L, U; P L, U: random, wide, tall, exactly singular and empty matrices."""
    f, ref = lu_functions()
    rng = np.random.default_rng(0)
    dup = rng.normal(size=(4, 4))
    dup[2] = dup[0]
    values = {
        "random 1x1": rng.normal(size=(1, 1)),
        "random 6x6": rng.normal(size=(6, 6)),
        "wide 3x5": rng.normal(size=(3, 5)),
        "tall 5x3": rng.normal(size=(5, 3)),
        "zeros": np.zeros((3, 3)),
        "zero first column": np.array([[0.0, 1.0], [0.0, 2.0]]),
        "ones": np.ones((3, 3)),
        "repeated row": dup,
        "integers with ties": np.array([[1.0, 2.0, 3.0], [-3.0, 1.0, 0.0], [3.0, 0.0, 5.0]]),
        "signed zeros": np.array([[-0.0, 0.0], [0.0, -0.0]]),
        "empty 0x0": np.zeros((0, 0)),
        "empty 0x3": np.zeros((0, 3)),
    }
    for what, v in values.items():
        compare(f, ref, v, 1e-12, 1e-14, what)
    # scipy returns P of shape (0, 0) for an m x 0 matrix (its quick return for empty
    # input); the permutation of m rows is the m x m identity.
    p, l, u, *_ = f(np.zeros((3, 0)))
    assert_same(p, np.eye(3))
    assert l.shape == (3, 0) and u.shape == (0, 0)


def test_lu_ill_conditioned():
    """Hilbert matrices (condition 1e7 to 1e10): LAPACK's blocked getrf sums in another
    order, and the rounding grows with the condition (1.3e-10 relative in one entry of
    L for n = 7, measured)."""
    f, ref = lu_functions()
    for n in [5, 7]:
        compare(f, ref, hilbert(n), 1e-8, 1e-12, f"hilbert({n})")


def test_lu_nan_and_infinity_raise_value_error():
    f, ref = lu_functions()
    for bad in [np.nan, np.inf, -np.inf]:
        v = np.eye(3)
        v[1, 2] = bad
        with pytest.raises(ValueError, match="infs or NaNs"):
            ref(v)
        with pytest.raises(ValueError, match="infs or NaNs"):
            f(v)


def test_lu_dtypes():
    """float32, and integers converted as LAPACK's wrappers convert them (int64 to
    float64, int16 to float32)."""
    x = pt.fmatrix("x")
    i = pt.lmatrix("i")
    s = pt.matrix("s", dtype="int16")
    outs = [*lu(x), *lu(i, p_indices=True), *lu(s, permute_l=True)]
    f, ref = compile_both([x, i, s], outs)
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(5, 5)).astype("float32"), rng.integers(-5, 5, size=(4, 4)), rng.integers(-5, 5, size=(3, 3)).astype("int16")]
    got, want = f(*values), ref(*values)
    for k, (g, w) in enumerate(zip(got, want)):
        rtol, atol = (1e-12, 1e-14) if g.dtype == np.float64 else (1e-5, 1e-6)
        assert_same(g, w, rtol=rtol, atol=atol, err_msg=f"output {k}")


def test_qr_every_mode_like_lapack():
    """Q and R with LAPACK's signs (beta = -sign(alpha) |column|; a column already zero
    below the diagonal left as it is, its sign too), signed zeros included: square, wide,
    tall, exactly rank-deficient matrices (LAPACK's exact zeros reproduced, so the later
    reflectors agree), huge and tiny scales (the norm scaled as dnrm2 scales it)."""
    f, ref = qr_functions()
    rng = np.random.default_rng(2)
    col = rng.normal(size=(5, 1))
    zero_column = rng.normal(size=(4, 3))
    zero_column[:, 1] = 0.0
    values = {
        "random 1x1": rng.normal(size=(1, 1)),
        "random 5x5": rng.normal(size=(5, 5)),
        "wide 3x6": rng.normal(size=(3, 6)),
        "tall 7x4": rng.normal(size=(7, 4)),
        "column 5x1": col,
        "row 1x5": col.T,
        "ones 4x3": np.ones((4, 3)),
        "ones 3x5": np.ones((3, 5)),
        "equal columns": np.tile(col, (1, 3)),
        "multiple rows": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]]),
        "zero column": zero_column,
        "zero below the diagonal": np.triu(rng.normal(size=(4, 4))),
        "signed zeros": np.array([[-0.0, 1.0], [0.0, 3.0], [0.0, 1.0]]),
        "zeros": np.zeros((3, 2)),
        "huge": 1e200 * rng.normal(size=(4, 3)),
        "tiny": 1e-200 * rng.normal(size=(3, 4)),
        "huge pair": np.array([[1e300, 1.0], [1e300, 2.0]]),
    }
    # Exactly rank-deficient: after the first reflector LAPACK's trailing columns are
    # rounding noise or exact zeros depending on the CPU's kernels (on this project's Zen 5
    # machines ours and OpenBLAS's agreed bit for bit; on Zen 4 OpenBLAS leaves 1e-17
    # noise that its later reflectors then act on), so Q's later columns and the raw
    # reflectors are not a contract there: R equal, Q orthonormal with Q R = A and its
    # first column LAPACK's, the raw form's R part equal.
    rank_deficient = {"ones 4x3", "ones 3x5", "equal columns", "multiple rows"}
    for what, v in values.items():
        atol = 1e-14 * np.abs(v).max()
        if what not in rank_deficient:
            compare(f, ref, v, 1e-12, atol, what)
            continue
        # full (Q, R), economic (Q, R), r (R), raw (H, tau, R)
        (q, r, qe, re, ro, h, tau, rr), (wq, wr, wqe, wre, wro, wh, wtau, wrr) = f(v), ref(v)
        for g, w in [(r, wr), (re, wre), (ro, wro), (rr, wrr), (np.triu(h), np.triu(wh))]:
            assert_same(g, w, rtol=1e-12, atol=atol, err_msg=what)
        for g, w, upper in [(q, wq, r), (qe, wqe, re)]:
            assert g.shape == w.shape and g.dtype == w.dtype, what
            np.testing.assert_allclose(g.T @ g, np.eye(g.shape[1]), atol=1e-14, err_msg=what)
            np.testing.assert_allclose(g @ upper, v, atol=1e-13 * np.abs(v).max(), err_msg=what)
            np.testing.assert_allclose(g[:, 0], w[:, 0], rtol=1e-12, atol=1e-15, err_msg=what)
        assert tau.shape == wtau.shape and np.isclose(tau[0], wtau[0], rtol=1e-12), what


def test_qr_nan_and_infinity_like_lapack():
    """NaN and infinities go where LAPACK puts them (its reflector leaves rows past the
    last nonzero of v, and columns past the last nonzero, as they are)."""
    f, ref = qr_functions()
    for v in [[[np.inf, 1.0], [2.0, 3.0]], [[1.0, np.nan], [2.0, 3.0]], [[np.nan, 1.0], [2.0, 3.0]],
              [[1.0, 2.0, 3.0], [-np.inf, 0.0, 1.0], [0.0, 0.0, 2.0]]]:  # fmt: skip
        compare(f, ref, np.array(v), 1e-12, 1e-14, repr(v))


def test_qr_ill_conditioned_and_rank_deficient():
    """Hilbert(6) (condition 1.5e7) within the rounding that condition allows (1.7e-12
    relative in Q, measured). For a random rank-deficient matrix the columns of Q past the
    rank span what rounding noise leaves, which differs between any two orders of
    summation: compared are R's first `rank` rows, Q's first `rank` columns, Q R = A and
    Q's orthonormality."""
    f, ref = qr_functions()
    compare(f, ref, hilbert(6), 1e-9, 1e-12, "hilbert(6)")
    rng = np.random.default_rng(3)
    for m, n, rank in [(6, 5, 2), (4, 6, 3)]:
        v = rng.normal(size=(m, rank)) @ rng.normal(size=(rank, n))
        (q, r, *_), (q_want, r_want, *_) = f(v), ref(v)
        np.testing.assert_allclose(r[:rank], r_want[:rank], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(q[:, :rank], q_want[:, :rank], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(q @ r, v, atol=1e-12)
        np.testing.assert_allclose(q.T @ q, np.eye(m), atol=1e-12)
        assert np.abs(r[rank:]).max() < 1e-12


def test_qr_of_subnormal_matrices():
    """A matrix of subnormal numbers (about 44 bits each): the reflector's 1 / (alpha -
    beta) would overflow, so x is lifted by a power of two first (NaN in R and Q before),
    in both routes (qr.rs `householder`). R and Q as LAPACK's to the data's precision."""
    f, ref = qr_functions()
    rng = np.random.default_rng(8)
    for shape in [(4, 3), (3, 5), (9, 9)]:
        a = rng.normal(size=shape) * 1e-310
        (q, r, *_), (q_want, r_want, *_) = f(a), ref(a)
        np.testing.assert_allclose(r, r_want, rtol=0, atol=1e-11 * np.abs(r_want).max())
        np.testing.assert_allclose(q, q_want, rtol=0, atol=1e-11)
        np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-12)


def test_qr_float32_and_integer_input():
    """float32 (an exactly rank-deficient float32 matrix is not compared: OpenBLAS's
    float32 kernels round its noise otherwise than the plain order of operations, which
    ours follows, so the later reflectors differ; measured on ones((4, 3)))."""
    f, ref = qr_functions("float32")
    rng = np.random.default_rng(4)
    for v in [rng.normal(size=(5, 3)), rng.normal(size=(3, 5)), rng.normal(size=(4, 4))]:
        compare(f, ref, v.astype("float32"), 1e-5, 1e-6, repr(v.shape))
    f, ref = qr_functions("int64")
    compare(f, ref, rng.integers(-4, 4, size=(4, 3)), 1e-12, 1e-14, "int64")


@functools.cache
def pivoted_qr_functions(dtype="float64"):
    """(MLIR, C) functions of every QR mode with pivoting=True (geqp3) of one matrix."""
    a = pt.matrix("a", dtype=dtype)
    outs = []
    for mode in QR_MODES:
        outs.extend(qr(a, mode=mode, pivoting=True))
    return compile_both([a], outs)


def test_pivoted_qr_every_mode_like_lapack():
    """QR with column pivoting (geqp3) in every mode, P's indices int32 and equal to
    LAPACK's: square, wide, tall, a column, a row, columns of very different norms (the
    pivots then far from the identity), a zero column, huge and tiny scales, a 140 x 140
    matrix (LAPACK's blocked dlaqps: the same pivots, its norms downdated in another
    order), float32."""
    f, ref = pivoted_qr_functions()
    rng = np.random.default_rng(12)
    zero_column = rng.normal(size=(5, 4))
    zero_column[:, 0] = 0.0
    values = {
        "random 1x1": rng.normal(size=(1, 1)),
        "random 5x5": rng.normal(size=(5, 5)),
        "wide 3x6": rng.normal(size=(3, 6)),
        "tall 7x4": rng.normal(size=(7, 4)),
        "column 5x1": rng.normal(size=(5, 1)),
        "row 1x5": rng.normal(size=(1, 5)),
        "scaled columns": rng.normal(size=(6, 6)) * np.logspace(-3, 3, 6),
        "zero column": zero_column,
        "huge": 1e200 * rng.normal(size=(4, 3)),
        "tiny": 1e-200 * rng.normal(size=(3, 4)),
        "140x140": rng.normal(size=(140, 140)),
    }
    for what, v in values.items():
        got = f(v)
        for p in (got[2], got[5], got[7], got[11]):
            assert p.dtype == np.int32, what
        compare(f, ref, v, 1e-11, 1e-13 * np.abs(v).max(), what)
    g, g_ref = pivoted_qr_functions("float32")
    for v in [rng.normal(size=(5, 3)), rng.normal(size=(3, 5)), rng.normal(size=(6, 6)) * np.logspace(-2, 2, 6)]:
        compare(g, g_ref, v.astype("float32"), 1e-4, 1e-5 * np.abs(v).max(), repr(v.shape))


def test_pivoted_qr_rank_deficient():
    """Rank-deficient matrices, where pivoting is for: |R|'s diagonal non-increasing, zero
    (to rounding) past the rank, A P = Q R, Q orthonormal; R's first `rank` rows, Q's
    first `rank` columns and the first `rank` pivots LAPACK's (past the rank the remaining
    norms are rounding noise, whose order any two summations may give otherwise). The
    norms' downdating loses everything there, so they are computed again (dlaqp2)."""
    f, ref = pivoted_qr_functions()
    rng = np.random.default_rng(13)
    for m, n, rank in [(8, 6, 3), (5, 9, 2), (7, 7, 4)]:
        v = (rng.normal(size=(m, rank)) * [1e3, 1.0, 1e-3, 1e-1][:rank]) @ rng.normal(size=(rank, n))
        (q, r, p), (q_want, r_want, p_want) = f(v)[:3], ref(v)[:3]
        np.testing.assert_array_equal(p[:rank], p_want[:rank])
        assert sorted(p) == list(range(n))
        # R's first rows against a's columns in their own order (past the rank, P's
        # order is the noise's).
        np.testing.assert_allclose(r[:rank, np.argsort(p)], r_want[:rank, np.argsort(p_want)], rtol=1e-9, atol=1e-12 * np.abs(v).max())
        # The scales (1e3 .. 1e-3) make the last of those columns ill-conditioned: 2.5e-11
        # apart, measured.
        np.testing.assert_allclose(q[:, :rank], q_want[:, :rank], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(q @ r, v[:, p], atol=1e-12 * np.abs(v).max())
        np.testing.assert_allclose(q.T @ q, np.eye(m), atol=1e-12)
        diagonal = np.abs(np.diag(r))
        assert np.all(diagonal[:-1] >= diagonal[1:] * (1 - 1e-12)), diagonal
        assert np.abs(r[rank:]).max() < 1e-12 * np.abs(v).max()


def test_pivoted_qr_empty_and_nan():
    """An empty matrix: Q, R and P of scipy.linalg.qr's shapes and values (the C backend's
    geqp3 call raises on 0 rows: its workspace query answers 0, below geqp3's minimum n).
    A NaN column: P, R and Q where LAPACK puts them (idamax never prefers a NaN norm to a
    number before it)."""
    f, ref = pivoted_qr_functions()
    for shape in [(0, 3), (3, 0), (0, 0)]:
        got = f(np.zeros(shape))
        q, r, p = scipy.linalg.qr(np.zeros(shape), pivoting=True)
        assert [x.shape for x in got[:3]] == [q.shape, r.shape, p.shape], shape
        np.testing.assert_array_equal(got[0], q)
        np.testing.assert_array_equal(got[2], p)
    v = np.array([[1.0, 2.0, 0.5], [np.nan, 1.0, 2.0], [3.0, 0.0, 1.0]])
    compare(f, ref, v, 1e-12, 1e-14, "nan")


def test_pivoted_qr_stacks_through_blockwise():
    """Blockwise{QR(pivoting=True)} over two batch dims: one dispatch a kernel, one
    workgroup a matrix, no loop of the host program; each matrix's Q, R and P LAPACK's;
    empty batches and matrices."""
    a = pt.dtensor4("a")
    f, ref = compile_both([a], [*qr(a, pivoting=True), *qr(a, mode="economic", pivoting=True), *qr(a, mode="r", pivoting=True)])
    assert "util.optimization_barrier" not in f.maker.linker.compiled.mlir
    rng = np.random.default_rng(14)
    for shape in [(2, 3, 4, 4), (1, 2, 5, 3), (2, 1, 3, 5), (1, 1, 1, 1)]:
        compare(f, ref, rng.normal(size=shape) * np.logspace(-2, 2, shape[-1]), 1e-11, 1e-12, repr(shape))
    for shape in [(0, 2, 3, 4), (2, 2, 3, 0)]:
        m, n = shape[-2:]
        k = min(m, n)
        want = [(m, m), (m, n), (n,), (m, k), (k, n), (n,), (m, n), (n,)]
        got = f(np.zeros(shape))
        assert [r.shape for r in got] == [shape[:2] + w for w in want]
        for p in got[2::3][:2] + [got[7]]:
            np.testing.assert_array_equal(p, np.broadcast_to(np.arange(n, dtype=np.int32), shape[:2] + (n,)))


def test_batched_through_blockwise():
    """Stacks of matrices (Blockwise{LU}, Blockwise{QR}): one compiled function for every
    batch size and core shape. A stack of non-square matrices for LU, whose signature is
    (m,m), raises ValueError before the call (the C backend's perform returns scipy's
    rectangular factors, of other shapes than the signature's)."""
    a = pt.tensor3("a")
    outs = [*lu(a), lu(a, p_indices=True)[0], *qr(a), *qr(a, mode="economic"), qr(a, mode="r")]
    f, ref = compile_both([a], outs)
    rng = np.random.default_rng(5)
    for shape in [(3, 4, 4), (1, 2, 2), (2, 1, 1)]:
        compare(f, ref, rng.normal(size=shape), 1e-12, 1e-14, repr(shape))
    g, g_ref = compile_both([a], outs[4:])
    for shape in [(2, 5, 3), (3, 2, 4)]:
        compare(g, g_ref, rng.normal(size=shape), 1e-12, 1e-14, repr(shape))
    with pytest.raises(ValueError):
        f(rng.normal(size=(2, 4, 3)))
    # QR's raw mode: its signature says H is (n, m), its perform returns (m, n) (the C
    # backend's Blockwise stacks those); square matrices agree, others raise ValueError.
    h, g_ref = compile_both([a], qr(a, mode="raw"))
    compare(h, g_ref, rng.normal(size=(2, 3, 3)), 1e-12, 1e-14, "raw")
    with pytest.raises(ValueError):
        h(rng.normal(size=(2, 5, 3)))


def test_qr_stacks_are_one_dispatch_one_workgroup_a_matrix():
    """Blockwise{QR} in modes full, economic and r over two batch dims on the CPU: one
    dispatch a kernel, one workgroup a matrix, no loop of the host program; each matrix's
    factors LAPACK's (signs included), square, tall and wide; empty batches and matrices."""
    a = pt.dtensor4("a")
    outs = [*qr(a), *qr(a, mode="economic"), qr(a, mode="r")]
    f, ref = compile_both([a], outs)
    assert "util.optimization_barrier" not in f.maker.linker.compiled.mlir
    rng = np.random.default_rng(8)
    for shape in [(2, 3, 5, 5), (1, 2, 7, 4), (2, 1, 4, 7), (1, 1, 1, 1)]:
        m = rng.normal(size=shape)
        m[0, 0, :, 0] = 0.0  # a zero column: its reflector is the identity (tau = 0)
        compare(f, ref, m, 1e-12, 1e-14, repr(shape))
    for shape in [(0, 2, 3, 4), (2, 2, 0, 3), (2, 1, 3, 0)]:
        m, n = shape[-2:]
        k = min(m, n)
        want = [(m, m), (m, n), (m, k), (k, n), (m, n)]
        assert [r.shape for r in f(np.zeros(shape))] == [shape[:2] + w for w in want]


def test_gradients_like_the_c_backend():
    """pytensor.grad through each LU form (PyTensor's L_op: triangular solves; permute_l
    recomputes the factors) and QR's modes, on matrices of static shapes (with unknown
    shapes QR's gradient holds an IfElse over m >= n, which is not lowered)."""
    a = pt.dmatrix("a")
    tall = pt.matrix("tall", shape=(5, 3), dtype="float64")
    wide = pt.matrix("wide", shape=(3, 5), dtype="float64")
    square = pt.matrix("square", shape=(4, 4), dtype="float64")
    p, l, u = lu(a)
    _, l2, u2 = lu(a, p_indices=True)
    pl, u3 = lu(a, permute_l=True)
    lu_cost = (l**2).sum() + (1.5 * u).sum() + (2 * l2).sum() + (u2**2).sum() + (3 * pl).sum() + u3.sum()
    weights = np.arange(1.0, 6.0)
    qr_cost = 0
    for x in [tall, wide, square]:
        q_e, r_e = qr(x, mode="economic")
        qr_cost = qr_cost + (2 * q_e).sum() + (r_e**2).sum() + (qr(x, mode="r") ** 2 * weights[: x.type.shape[1]]).sum()
    for x in [wide, square]:
        q_f, r_f = qr(x, mode="full")
        qr_cost = qr_cost + (q_f**3).sum() + r_f.sum()
    inputs = [a, tall, wide, square]
    grads = pytensor.grad(lu_cost, a), *pytensor.grad(qr_cost, [tall, wide, square])
    f, ref = compile_both(inputs, list(grads))
    rng = np.random.default_rng(6)
    values = [rng.normal(size=(4, 4)), rng.normal(size=(5, 3)), rng.normal(size=(3, 5)), rng.normal(size=(4, 4))]
    for i, (g, w) in enumerate(zip(f(*values), ref(*values))):
        assert_same(g, w, rtol=1e-9, atol=1e-11, err_msg=f"gradient {i}")

