"""Dense linear algebra (lower/linalg.rs): Cholesky, SolveTriangular, CholeskySolve, Solve,
Det, SLogDet, MatrixInverse, LUFactor and PivotToPermutations, compared with the C backend
(whose `perform` calls LAPACK through scipy and numpy) on the same inputs: several sizes
through one compiled function, both dtypes, the triangle each routine reads, the failures
PyTensor turns into NaN, the errors it raises, and gradients (a multivariate normal's
log-density, a determinant, an inverse, a solve)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.linalg import lu_factor
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.subtensor import AdvancedSubtensor
from pytensor.tensor.linalg.decomposition.lu import PivotToPermutations, pivot_to_permutation

import pytensor_mlir
from conftest import C, MLIR, assert_same, check, compile_both, raises_like

FLOATS = ["float64", "float32"]
SIZES = [1, 2, 5, 17]


def tol(dtype):
    """LAPACK sums in another order (blocked) than ours: a few ulps of the condition."""
    return dict(rtol=2e-3, atol=2e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)


def spd(rng, n, dtype="float64"):
    g = rng.normal(size=(n, n))
    return (g @ g.T + n * np.eye(n)).astype(dtype)


def general(rng, n, dtype="float64"):
    return (rng.normal(size=(n, n)) + 2 * np.eye(n)).astype(dtype)


def run_sizes(inputs, outputs, make_values, dtype, sizes=SIZES):
    """One compile per mode, every size through it, each output compared."""
    before = pytensor_mlir.compiler_invocations()
    f, ref = compile_both(inputs, outputs)
    for n in sizes:
        values = make_values(n)
        kept = [np.copy(v) for v in values]
        got, want = f(*values), ref(*values)
        # The loops update their tensor in place: never the caller's arrays.
        for v, k in zip(values, kept):
            np.testing.assert_array_equal(v, k, err_msg=f"an input was written at n={n}")
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, err_msg=f"output {i} at n={n}", **tol(dtype))
    assert pytensor_mlir.compiler_invocations() == before + 1


@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky_both_triangles(dtype):
    a = pt.matrix("a", dtype=dtype)
    rng = np.random.default_rng(0)
    # Garbage in the triangle a routine does not read: potrf ignores it, and so must we.
    def values(n):
        m = spd(rng, n, dtype)
        return [m + np.triu(rng.normal(size=(n, n)), 1).astype(dtype)]

    run_sizes([a], [pt.linalg.cholesky(a), pt.linalg.cholesky(a.T, lower=False)], values, dtype)


def test_factorizations_and_substitutions_are_single_inline_dispatches_on_the_cpu():
    """On the CPU, Cholesky, the triangular solves, the LU elimination, QR's reflectors and
    Q, the symmetric eigensolver and the SVD's Jacobi sweeps are each one dispatch of
    scalar loops (lower/dense_kernels/),
    compiled for the inline execution model with LLVM's SLP vectorizer; sizes around the
    eight-column chunks of their inner products and row updates, pivoting rows included."""
    a, b, g = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("g")
    rng = np.random.default_rng(11)
    outs = [
        pt.linalg.cholesky(a),
        pt.linalg.cholesky(a, lower=False),
        pt.linalg.solve_triangular(a, b, lower=True),
        pt.linalg.solve_triangular(a, b, lower=False, trans=1),
        pt.linalg.cho_solve((pt.linalg.cholesky(a), True), b),
        pt.linalg.solve(g, b),
        pt.linalg.det(g),
        pt.linalg.inv(g),
        *lu_factor(g),
        *pt.linalg.qr(g),
        pt.linalg.eigvalsh(a, None),
        pt.linalg.svd(g, compute_uv=False),
    ]
    f, ref = compile_both([a, b, g], outs)
    linker = f.maker.linker
    assert "flow.dispatch.workgroups" in linker.mlir and "scf.for" in linker.mlir
    assert "--iree-execution-model=inline-dynamic" in linker.compiled.flags
    assert "--iree-llvmcpu-slp-vectorization=true" in linker.compiled.flags
    for n, k in [(1, 1), (7, 3), (8, 1), (9, 2), (16, 1), (64, 5), (101, 4)]:
        values = [spd(rng, n), rng.normal(size=(n, k)), rng.normal(size=(n, n))]
        for i, (got, want) in enumerate(zip(f(*values), ref(*values))):
            assert_same(got, want, err_msg=f"output {i} at n={n}", rtol=1e-8, atol=1e-10)


def test_cholesky_failures_give_nan_like_the_c_backend():
    a = pt.dmatrix("a")
    f, ref = compile_both([a], pt.linalg.cholesky(a))
    rng = np.random.default_rng(1)
    m = spd(rng, 4)
    not_pd = m.copy()
    not_pd[2, 2] = -1.0
    with_nan = m.copy()
    with_nan[3, 0] = np.nan
    for v in [not_pd, with_nan, np.zeros((3, 3)), np.zeros((0, 0)), np.array([[4.0]])]:
        assert_same(f(v), ref(v), err_msg=repr(v))
    assert np.isnan(f(not_pd)).all()


def test_non_square_raises_value_error():
    a = pt.dmatrix("a")
    b = pt.dvector("b")
    for out in [pt.linalg.cholesky(a), pt.linalg.det(a), pt.linalg.slogdet(a)[1], pt.linalg.inv(a)]:
        f, ref = compile_both([a], out)
        for v in [np.ones((2, 3)), np.ones((3, 2))]:
            # The C backend's exception class (ValueError; LinAlgError from inv).
            with pytest.raises(ValueError) as want:
                ref(v)
            with pytest.raises(want.type):
                f(v)
    for solve in [pt.linalg.solve(a, b), pt.linalg.solve_triangular(a, b, lower=True), pt.linalg.cho_solve((a, True), b)]:
        f, ref = compile_both([a, b], solve)
        for vals in [(np.eye(3), np.ones(2)), (np.ones((3, 2)), np.ones(3))]:
            with pytest.raises(ValueError):
                ref(*vals)
            with pytest.raises(ValueError):
                f(*vals)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("b_ndim", [1, 2])
def test_solve_triangular_every_form(dtype, b_ndim):
    a = pt.matrix("a", dtype=dtype)
    b = pt.tensor("b", dtype=dtype, shape=(None,) * b_ndim)
    rng = np.random.default_rng(2)
    outs = [
        pt.linalg.solve_triangular(a, b, lower=True),
        pt.linalg.solve_triangular(a, b, lower=False),
        pt.linalg.solve_triangular(a, b, lower=True, trans=1),
        pt.linalg.solve_triangular(a, b, lower=False, unit_diagonal=True),
    ]

    def values(n):
        rhs = rng.normal(size=(n,) if b_ndim == 1 else (n, 3)).astype(dtype)
        return [general(rng, n, dtype), rhs]

    run_sizes([a, b], outs, values, dtype)


def test_solve_triangular_singular_gives_nan_and_mixed_dtypes():
    a = pt.dmatrix("a")
    b = pt.fvector("b")
    ai = pt.lmatrix("ai")
    rng = np.random.default_rng(3)
    m = np.tril(general(rng, 4))
    singular = m.copy()
    singular[1, 1] = 0.0
    rhs = rng.normal(size=4).astype("float32")
    check([a, b], pt.linalg.solve_triangular(a, b, lower=True), [singular, rhs])
    check([a, b], pt.linalg.solve_triangular(a, b, lower=True, unit_diagonal=True), [singular, rhs], rtol=1e-12)
    check([ai, b], pt.linalg.solve_triangular(ai, b, lower=True), [np.array([[2, 0], [1, 4]]), rhs[:2]], rtol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cho_solve_and_solve(dtype):
    a = pt.matrix("a", dtype=dtype)
    c = pt.matrix("c", dtype=dtype)
    b = pt.matrix("b", dtype=dtype)
    rng = np.random.default_rng(4)
    outs = [
        pt.linalg.cho_solve((c, True), b),
        pt.linalg.cho_solve((c.T, False), b),
        pt.linalg.solve(a, b),
        pt.linalg.solve(a, b, assume_a="sym"),
        pt.linalg.solve(a, b, assume_a="pos", lower=True),
        pt.linalg.solve(a.T, b, assume_a="pos", lower=False),
    ]

    def values(n):
        m = spd(rng, n, dtype)
        # Garbage above a's diagonal: "gen" solves the matrix as it is, the symmetric and
        # positive definite solves read its lower triangle only (a.T's upper one).
        a_value = m + np.triu(rng.normal(size=(n, n)), 1).astype(dtype)
        return [a_value, np.linalg.cholesky(m).astype(dtype), rng.normal(size=(n, 2)).astype(dtype)]

    run_sizes([a, c, b], outs, values, dtype)


def test_solve_failures_give_nan():
    a = pt.dmatrix("a")
    b = pt.dvector("b")
    rng = np.random.default_rng(5)
    rhs = rng.normal(size=4)
    not_pd = spd(rng, 4)
    not_pd[0, 0] = -5.0
    # PyTensor's perform returns np.full(a.shape, nan) for a vector b; the result's type is
    # a vector, which is what we return (NaN of b's shape).
    for out, m in [(pt.linalg.solve(a, b), np.zeros((4, 4))), (pt.linalg.solve(a, b, assume_a="pos"), not_pd)]:
        got = pytensor.function([a, b], out, mode=MLIR)(m, rhs)
        assert got.shape == (4,) and np.isnan(got).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_det_slogdet_inverse(dtype):
    a = pt.matrix("a", dtype=dtype)
    rng = np.random.default_rng(6)
    sign, logdet = pt.linalg.slogdet(a)
    run_sizes([a], [pt.linalg.det(a), sign, logdet, pt.linalg.inv(a)], lambda n: [rng.normal(size=(n, n)).astype(dtype)], dtype)


def test_det_slogdet_of_singular_and_empty_matrices():
    a = pt.dmatrix("a")
    sign, logdet = pt.linalg.slogdet(a)
    f, ref = compile_both([a], [pt.linalg.det(a), sign, logdet])
    rng = np.random.default_rng(7)
    rank_two = rng.normal(size=(3, 2)) @ rng.normal(size=(2, 3))
    rank_two[:, 2] = rank_two[:, 0] + rank_two[:, 1]
    # Exact zero pivots after swaps and negative pivots: numpy's det is +0 there.
    equal_rows = [np.array([[-1.0, 2.0], [-1.0, 2.0]]), np.array([[1.0, 2.0, 3.0], [-4.0, 5.0, 6.0], [-4.0, 5.0, 6.0]])]
    for v in [np.zeros((3, 3)), np.zeros((0, 0)), np.array([[0.0, 1.0], [1.0, 0.0]]), np.diag([-1.0, 2.0, -3.0]), *equal_rows]:
        for g, w in zip(f(v), ref(v)):
            assert_same(g, w, rtol=1e-12, atol=1e-300, err_msg=repr(v))


def test_inverse_of_a_singular_matrix_raises_linalg_error():
    a = pt.dmatrix("a")
    f, ref = compile_both([a], pt.linalg.inv(a))
    for v in [np.zeros((3, 3)), np.ones((2, 2))]:
        with pytest.raises(np.linalg.LinAlgError):
            ref(v)
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            f(v)
    assert_same(f(np.eye(3) * 2), ref(np.eye(3) * 2))


def test_lu_factor_and_permutations():
    a = pt.dmatrix("a")
    lu, piv = lu_factor(a)
    outs = [lu, piv, pivot_to_permutation(piv, inverse=True), pivot_to_permutation(piv, inverse=False)]
    rng = np.random.default_rng(8)
    run_sizes([a], outs, lambda n: [rng.normal(size=(n, n))], "float64")
    f, ref = compile_both([a], outs)
    for v in [np.zeros((3, 3)), np.zeros((0, 0))]:
        for g, w in zip(f(v), ref(v)):
            assert_same(g, w, err_msg=repr(v))


@pytest.mark.parametrize("inverse", [True, False])
def test_pivots_to_permutations_of_any_pivots(inverse):
    """PivotToPermutations (lower/pivots.rs on the CPU) of pivots no LUFactor gave: any
    in [0, n), negative ones (which index from the end, as numpy's perform does), of
    int32 and int64, batched through Blockwise (every batch in one dispatch); a pivot out
    of bounds raises IndexError like the C backend (numpy's perform) and writes nothing."""
    rng = np.random.default_rng(14)
    for dtype in ["int32", "int64"]:
        p, pb = pt.vector("p", dtype=dtype), pt.tensor("pb", dtype=dtype, shape=(None, None, None))
        outs = [pivot_to_permutation(p, inverse=inverse), Blockwise(PivotToPermutations(inverse=inverse))(pb)]
        f, ref = compile_both([p, pb], outs)
        assert any(type(n.op).__name__ == "Blockwise" for n in f.maker.fgraph.toposort())
        for n in [0, 1, 2, 7]:
            pv = rng.integers(-n, n, size=n).astype(dtype) if n else np.zeros(0, dtype)
            pbv = rng.integers(-n, n, size=(2, 3, n)).astype(dtype) if n else np.zeros((2, 3, 0), dtype)
            got, want = f(pv, pbv), ref(pv, pbv)
            assert_same(got[0], want[0], err_msg=f"n={n} {dtype}")
            assert_same(got[1], want[1], err_msg=f"batched n={n} {dtype}")
        for bad in [np.array([0, 3, 1], dtype), np.array([0, -4, 1], dtype)]:
            with pytest.raises(IndexError):
                ref(bad, bad[None, None])
            with pytest.raises(IndexError, match="PivotToPermutations"):
                f(bad, np.zeros((1, 1, 3), dtype))
            with pytest.raises(IndexError, match="PivotToPermutations"):
                f(np.zeros(3, dtype), bad[None, None])


def test_solves_with_one_matrix_share_its_factor_on_the_inline_model():
    """Two solves with one matrix: PyTensor factors it once (LUFactor, PivotToPermutations
    and gathers of b); with the pivots' permutation one dispatch (no loop of the host
    program) the function runs on IREE's inline model."""
    a, y, z = pt.dmatrix("a"), pt.dvector("y"), pt.dvector("z")
    outs = [pt.linalg.solve(a, y), pt.linalg.solve(a, z)]
    f, ref = compile_both([a, y, z], outs)
    assert "PivotToPermutations" in {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    assert "--iree-execution-model=inline-dynamic" in f.maker.linker.compiled.flags
    rng = np.random.default_rng(15)
    for n in [1, 4, 9]:
        values = [rng.normal(size=(n, n)) + n * np.eye(n), rng.normal(size=n), rng.normal(size=n)]
        for g, w in zip(f(*values), ref(*values)):
            assert_same(g, w, rtol=1e-10, atol=1e-12, err_msg=f"n={n}")


def test_batched_solves_with_one_matrix_and_lu_factor_are_one_dispatch():
    """The same over a batch: Blockwise{LUFactor} (stacked, each matrix's LU NaN where it
    is singular, as the core op gives it alone), Blockwise{PivotToPermutations} and the
    gathers of b (our rewrite `blockwise_gather`: one AdvancedSubtensor), with vector and
    matrix right-hand sides over two batch dims, no loop of the host program; a right-hand side
    whose batch dim broadcasts (static 1) gathers from its one row."""
    a, y, ym = pt.dtensor4("a"), pt.dtensor3("y"), pt.dtensor4("ym")
    a1, y1 = pt.dtensor4("a1"), pt.tensor("y1", dtype="float64", shape=(None, 1, None))
    outs = [pt.linalg.solve(a, y, b_ndim=1), pt.linalg.solve(a, ym, b_ndim=2), *lu_factor(a)]
    outs += [pt.linalg.solve(a1, y1, b_ndim=1), pt.linalg.solve(a1, 2 * y1, b_ndim=1)]
    f, ref = compile_both([a, y, ym, a1, y1], outs)
    ops = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    # A loop of the host program over the batch starts from a barrier (Context::loop_start).
    assert "AdvancedSubtensor" in ops and "util.optimization_barrier" not in f.maker.linker.compiled.mlir, ops
    rng = np.random.default_rng(16)
    for batch, n in [((2, 3), 4), ((1, 2), 1), ((2, 1), 7), ((0, 2), 3), ((2, 2), 0)]:
        m = rng.normal(size=(*batch, n, n)) + n * np.eye(n)
        if m.size and n > 1:
            m[-1, -1, 1] = m[-1, -1, 0]  # a singular matrix: its LU NaN
        values = [m, rng.normal(size=(*batch, n)), rng.normal(size=(*batch, n, 2))]
        values += [m[:, :1], rng.normal(size=(batch[0], 1, n))]
        got = f(*values)
        if 0 in batch:
            assert [r.shape for r in got[:4]] == [values[1].shape, values[2].shape, m.shape, (*batch, n)]
            continue
        want = ref(*values)
        if m.size and n > 1:
            assert np.isnan(got[2][-1, -1]).all() and not np.isnan(got[2][:, :-1]).any()
            for r in got[:2] + want[:2]:
                r[-1, -1] = 0  # the singular system's solutions: inf or NaN, as elimination leaves them
        for i, (r, w) in enumerate(zip(got[:4], want[:4])):
            assert_same(r, w, rtol=1e-10, atol=1e-12, err_msg=f"output {i} at {batch}, n={n}")
        for r, w in zip(got[4:], want[4:]):
            assert_same(r, w, rtol=1e-10, atol=1e-12, err_msg=f"broadcast b at {batch}, n={n}")


def test_blockwise_gather_of_integer_indices_only():
    """`blockwise_gather` turns x[b][idx[b]] for every batch b into one gather, like C's
    Blockwise loop; a boolean mask per batch (a result size known only at run time) is
    refused by name, not read as positions."""
    x, i, m = pt.dmatrix("x"), pt.lmatrix("i"), pt.tensor("m", dtype="bool", shape=(None, None))
    gather = Blockwise(AdvancedSubtensor([0]), signature="(a),(b)->(c)")
    f, ref = compile_both([x, i], gather(x, i))
    assert "Blockwise" not in {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    xv = np.arange(12.0).reshape(3, 4)
    for iv in [np.array([[2, 0], [1, 1], [-1, 3]]), np.zeros((3, 0), "int64")]:
        assert_same(f(xv, iv), ref(xv, iv))
    with pytest.raises(IndexError):
        f(xv, np.array([[4], [0], [0]]))
    with pytest.raises(NotImplementedError, match="boolean mask"):
        pytensor.function([x, m], gather(x, m), mode=MLIR)


def test_several_factorizations_in_one_function():
    """Independent loops in one function (two factorizations of different shapes, both
    triangles of one matrix): what IREE 3.13 miscompiled before the loops' barriers."""
    a = pt.dmatrix("a")
    b = pt.dmatrix("b")
    rng = np.random.default_rng(9)
    m = spd(rng, 5)
    outs = [pt.linalg.inv(a), pt.linalg.det(a), pt.linalg.solve(a + 1, b), pt.linalg.cholesky(a),
            pt.linalg.cholesky(a, lower=False)]  # fmt: skip
    check([a, b], outs, [m, rng.normal(size=(5, 3))], rtol=1e-9, atol=1e-12)


def test_gradients_like_the_c_backend():
    a = pt.dmatrix("a")
    x = pt.dvector("x")
    rng = np.random.default_rng(10)
    chol = pt.linalg.cholesky(a)
    z = pt.linalg.solve_triangular(chol, x, lower=True)
    mvn = -0.5 * pt.sum(z**2) - pt.sum(pt.log(pt.diag(chol)))
    cost = mvn + pt.linalg.det(a) + pt.sum(pt.linalg.inv(a)) + pt.linalg.slogdet(a)[1] + pt.sum(pt.linalg.solve(a, x) ** 2)
    check([a, x], [cost, *pytensor.grad(cost, [a, x])], [spd(rng, 4), rng.normal(size=4)], rtol=1e-8, atol=1e-10)


def test_batched_through_blockwise():
    """`Blockwise` of the core ops (lower/blockwise.rs: a loop over the batch elements):
    batch dims of any number, a broadcast batch dim (static 1), an empty batch, several
    outputs (LUFactor, SLogDet), every batch size through one compiled function."""
    a = pt.tensor3("a")
    a1 = pt.tensor("a1", shape=(1, None, None))
    b = pt.matrix("b")
    rng = np.random.default_rng(12)
    lu, piv = lu_factor(a)
    sign, logdet = pt.linalg.slogdet(a)
    outs = [pt.linalg.cholesky(a), pt.linalg.det(a), sign, logdet, lu, piv, pt.linalg.solve(a, b, b_ndim=1),
            pt.linalg.solve_triangular(a, b, lower=True, b_ndim=1), pt.linalg.solve(a1, b, b_ndim=1)]  # fmt: skip
    f, ref = compile_both([a, a1, b], outs)
    for batch in [3, 1]:
        g = rng.normal(size=(batch, 4, 4))
        m = g @ g.transpose(0, 2, 1) + 4 * np.eye(4)
        values = [m, m[:1], rng.normal(size=(batch, 4))]
        for i, (got, want) in enumerate(zip(f(*values), ref(*values))):
            assert_same(got, want, rtol=1e-9, atol=1e-12, err_msg=f"output {i}, batch {batch}")
    # An empty batch: PyTensor's own perform raises NotImplementedError ("vectorize with
    # zero size"); the results are empty, of the core shapes.
    empty = f(np.zeros((0, 4, 4)), spd(rng, 4)[None], np.zeros((0, 4)))
    shapes = [(0, 4, 4), (0,), (0,), (0,), (0, 4, 4), (0, 4), (0, 4), (0, 4), (0, 4)]
    assert [e.shape for e in empty] == shapes
    a4 = pt.tensor4("a4")
    check([a4], pt.linalg.det(a4), [rng.normal(size=(2, 3, 5, 5))], rtol=1e-9, atol=1e-12)


def test_batched_cholesky_and_triangular_solves_are_one_dispatch_on_the_cpu():
    """Blockwise{Cholesky} and Blockwise{SolveTriangular} without broadcast batch dims run
    every matrix of the batch in one dispatch (stacked), so the graph stays on the inline
    model: two batch dims, both triangles, unit diagonals, vector and matrix right-hand
    sides, and the failures per matrix (one matrix not positive definite, one singular:
    NaN there only, as the C backend's loop gives)."""
    a, y, ym = pt.dtensor4("a"), pt.dtensor3("y"), pt.dtensor4("ym")
    outs = [
        pt.linalg.cholesky(a),
        pt.linalg.cholesky(a, lower=False),
        pt.linalg.solve_triangular(a, y, lower=True, b_ndim=1),
        pt.linalg.solve_triangular(a, ym, lower=False, b_ndim=2),
        pt.linalg.solve_triangular(a, ym, lower=True, unit_diagonal=True, b_ndim=2),
    ]
    f, ref = compile_both([a, y, ym], outs)
    assert "--iree-execution-model=inline-dynamic" in f.maker.linker.compiled.flags
    rng = np.random.default_rng(21)
    for n in [1, 5, 9]:
        g = rng.normal(size=(2, 3, n, n))
        m = g @ g.transpose(0, 1, 3, 2) + n * np.eye(n)
        m[0, 1] = -np.eye(n)  # not positive definite
        m[1, 2, n - 1, n - 1] = 0.0  # singular (and not positive definite)
        values = [m, rng.normal(size=(2, 3, n)), rng.normal(size=(2, 3, n, 2))]
        for i, (got, want) in enumerate(zip(f(*values), ref(*values))):
            assert_same(got, want, rtol=1e-9, atol=1e-11, err_msg=f"output {i} at n={n}")


def test_gradient_of_a_scan_over_cholesky_and_triangular_solves():
    """The gradient of a Scan whose steps factor and solve (a time-varying covariance):
    its inner graph holds Blockwise{ARange}s without batch dims and a tril mask sized by
    x.shape[-2:] (a slice of known dims stays known), which must meet the matrix they
    mask; it was refused ("needs a dim computed from run-time values")."""
    a, x0 = pt.dmatrix("a"), pt.dvector("x0")

    def step(x, a):
        factor = pt.linalg.cholesky(a + pt.outer(x, x))
        return pt.linalg.solve_triangular(factor, x, lower=True)

    xs = pytensor.scan(step, outputs_info=[x0], non_sequences=[a], n_steps=5, return_updates=False)
    cost = (xs[-1] ** 2).sum()
    f, ref = compile_both([a, x0], [xs, *pytensor.grad(cost, [a, x0])])
    rng = np.random.default_rng(23)
    for n in [1, 4, 9]:
        m = rng.normal(size=(n, n))
        values = [m @ m.T + n * np.eye(n), rng.normal(size=n)]
        for i, (got, want) in enumerate(zip(f(*values), ref(*values))):
            assert_same(got, want, rtol=1e-9, atol=1e-11, err_msg=f"output {i} at n={n}")


def test_blockwise_without_batch_dims_is_its_core_op():
    """A Blockwise with no batch dims (vectorizing a Scan's inner graph for its gradient
    leaves such Blockwise{ARange}s, which PyTensor's local_useless_unbatched_blockwise does
    not reach there) lowers as its core op, not as a loop of one step over a batch (whose
    loop_start barrier would send the graph to the full HAL): here a Cholesky kept as a
    Blockwise by excluding that rewrite."""
    from pytensor.tensor.linalg import Cholesky

    a = pt.dmatrix("a")
    keep = dict(mode=MLIR.excluding("local_useless_unbatched_blockwise"), reference=C.excluding("local_useless_unbatched_blockwise"))
    f = check([a], [Blockwise(Cholesky())(a) * 2], [spd(np.random.default_rng(5), 6)], rtol=1e-10, atol=1e-12, **keep)
    assert any("Blockwise{Cholesky" in str(n.op) for n in f.maker.fgraph.apply_nodes), "the Blockwise was rewritten away"
    assert "--iree-execution-model=inline-dynamic" in f.maker.linker.compiled.flags


@pytest.mark.parametrize("stacked", [True, False], ids=["stacked", "loop"])
def test_batched_inverse_and_its_check(stacked):
    """A batched inverse raises LinAlgError where any element is singular, as the C
    backend does; the gradient of a batched slogdet (which holds a batched inverse)
    matches. Stacked (lower/batched_linalg.rs: one reduction over the U's diagonals), and
    in a batch loop, which a batch dim that broadcasts keeps (lower/blockwise.rs: a loop of
    its own ors each element's flag)."""
    a = pt.tensor3("a") if stacked else pt.tensor("a", shape=(1, None, None))
    rng = np.random.default_rng(13)
    g = rng.normal(size=(3 if stacked else 1, 4, 4))
    cost = pt.linalg.slogdet(a)[1].sum()
    f, ref = compile_both([a], [pt.linalg.inv(a), pytensor.grad(cost, a)])
    for got, want in zip(f(g), ref(g)):
        assert_same(got, want, rtol=1e-9, atol=1e-12)
    g[-1] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        ref(g)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        f(g)


def test_batched_solves_determinants_and_inverses_are_one_dispatch_on_the_cpu():
    """Blockwise{Solve} ("gen"), {CholeskySolve}, {Det} and {MatrixInverse} without
    broadcast batch dims run the batch's matrices stacked in one dispatch
    (lower/batched_linalg.rs), so the graph stays on the inline model: two batch dims,
    vector and matrix right-hand sides, sizes around the eight-column chunks of the row
    updates, a singular matrix in the batch (its solution NaN, its determinant 0, as the C
    backend's loop gives), empty batches and 0 x 0 matrices, float32 and integer input."""
    a, y, ym, c = pt.dtensor4("a"), pt.dtensor3("y"), pt.dtensor4("ym"), pt.dtensor4("c")
    # One function each: PyTensor rewrites several solves with one matrix into a shared
    # LUFactor, whose Blockwise still loops.
    outs = [
        ([a, y], pt.linalg.solve(a, y, b_ndim=1)),
        ([a, ym], pt.linalg.solve(a, ym, b_ndim=2)),
        ([c, ym], pt.linalg.cho_solve((c, True), ym, b_ndim=2)),
        ([c, y], pt.linalg.cho_solve((c, False), y, b_ndim=1)),
        ([a], pt.linalg.det(a)),
        ([a], pt.linalg.inv(a)),
    ]
    compiled = []
    for inputs, out in outs:
        f, ref = compile_both(inputs, out)
        assert "--iree-execution-model=inline-dynamic" in f.maker.linker.compiled.flags, str(out.owner.op)
        compiled.append((inputs, f, ref))
    rng = np.random.default_rng(22)
    for batch, n in [((2, 3), 1), ((2, 3), 5), ((1, 2), 9), ((3, 1), 17), ((0, 2), 3), ((2, 2), 0)]:
        m = rng.normal(size=(*batch, n, n)) + n * np.eye(n)
        factor = np.tril(rng.normal(size=(*batch, n, n))) + 2 * n * np.eye(n)
        factor = np.where(rng.random(size=(*batch, 1, 1)) < 0.5, factor, np.swapaxes(factor, -1, -2))
        singular = m.copy()
        if m.size and n > 1:
            singular[0, 0, 1] = singular[0, 0, 0]  # two equal rows
        values = {"a": singular, "y": rng.normal(size=(*batch, n)), "ym": rng.normal(size=(*batch, n, 2)), "c": factor}
        for i, (inputs, f, ref) in enumerate(compiled):
            clean = [m if v.name == "a" else values[v.name] for v in inputs]
            # The inverse of a singular matrix raises (test_batched_inverse_and_its_check).
            args = clean if i == len(compiled) - 1 else [values[v.name] for v in inputs]
            got = f(*args)
            if 0 in batch:
                # PyTensor's Blockwise.perform refuses an empty batch (NotImplementedError).
                shape = batch if i == 4 else args[-1].shape
                assert got.shape == shape and got.dtype == np.float64, (i, got.shape)
                continue
            if i < 2 and n > 1:
                # The singular system's solution is NaN, in b's shape (PyTensor's perform
                # gives an n x n NaN array there whatever b's shape, which breaks its
                # Blockwise): the others as C's on the matrices without it.
                assert np.isnan(got[0, 0]).all() and not np.isnan(got[1:]).any() and not np.isnan(got[0, 1:]).any()
                want = ref(*clean)
                got[0, 0] = want[0, 0]
            else:
                want = ref(*args)
            assert_same(got, want, rtol=1e-9, atol=1e-11, err_msg=f"output {i} at {batch}, n={n}")
    # float32 stays float32; integer input is converted as the core op converts it.
    af, yf = pt.tensor3("af", dtype="float32"), pt.matrix("yf", dtype="float32")
    ai = pt.tensor3("ai", dtype="int64")
    check([af, yf, ai], [pt.linalg.solve(af, yf, b_ndim=1), pt.linalg.det(af), pt.linalg.det(ai), pt.linalg.inv(ai)],
          [rng.normal(size=(4, 6, 6)).astype("float32") + 3 * np.eye(6, dtype="float32"), rng.normal(size=(4, 6)).astype("float32"),
           rng.integers(-3, 4, size=(4, 3, 3)) + 5 * np.eye(3, dtype="int64")], rtol=2e-4, atol=1e-5)


def test_batched_core_whose_output_size_is_computed():
    """A `Blockwise` core whose output dims are not its inputs' (`Blockwise{AllocDiag}`,
    n + |offset| from the input's n; now AllocDiag's own rule over the batch, which sizes
    it from the input's dims). The gradient of a batched determinant holds one (it was
    refused by name)."""
    a = pt.tensor3("a")
    v = pt.matrix("v")
    rng = np.random.default_rng(14)
    cost = pt.linalg.det(a).sum()
    diag = pt.vectorize(lambda x: pt.diag(x, k=1), signature="(n)->(m,m)")(v)
    f, ref = compile_both([a, v], [pytensor.grad(cost, a), diag])
    assert any("AllocDiag" in str(n.op) for n in f.maker.fgraph.apply_nodes), "no Blockwise{AllocDiag} left"
    for batch, n in [(3, 4), (1, 2), (2, 1)]:
        values = [rng.normal(size=(batch, n, n)) + 2 * np.eye(n), rng.normal(size=(batch, n))]
        for got, want in zip(f(*values), ref(*values)):
            assert_same(got, want, rtol=1e-9, atol=1e-12)


def test_kronecker_products_and_the_direct_discrete_lyapunov_solve():
    """kron's (m0 m1, n0 n1) dims, spelled inside its inner graph as elements of Shape
    vectors, are known before the call: kron(A, B) + C with C an input checks there (a
    mismatch raises as C's backend raises), and solve_discrete_lyapunov(method="direct"),
    eye(n^2) - kron(A, A), compiles and matches C."""
    a, bm, c = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
    f, ref = compile_both([a, bm, c], pt.linalg.kron(a, bm) + c)
    rng = np.random.default_rng(5)
    for (m0, n0), (m1, n1) in [((2, 3), (3, 2)), ((1, 1), (4, 1)), ((0, 2), (3, 3))]:
        args = [rng.normal(size=(m0, n0)), rng.normal(size=(m1, n1)), rng.normal(size=(m0 * m1, n0 * n1))]
        assert_same(f(*args), ref(*args))
    with pytest.raises(Exception) as want:
        ref(np.ones((2, 3)), np.ones((3, 2)), np.ones((6, 5)))
    with pytest.raises(want.type):
        f(np.ones((2, 3)), np.ones((3, 2)), np.ones((6, 5)))

    q = pt.dmatrix("q")
    f, ref = compile_both([a, q], pt.linalg.solve_discrete_lyapunov(a, q, method="direct"))
    for n in [1, 3, 6]:
        av = 0.4 * rng.normal(size=(n, n)) / np.sqrt(n)
        qv = rng.normal(size=(n, n))
        qv = qv @ qv.T
        assert_same(f(av, qv), ref(av, qv), rtol=1e-10, atol=1e-12)


def test_sylvester_and_lyapunov_solves():
    """SolveSylvester (its own rule; on the CPU Schur forms and TRSYL, scipy's route) vs C: solve_sylvester with m != n, solve_continuous_lyapunov and the
    bilinear solve_discrete_lyapunov, float32, a stack through Blockwise, the gradient;
    errors as C's for a matrix that is not square or a C of another shape; NaN for NaN
    input as C."""
    a, bm, q = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("q")
    rng = np.random.default_rng(8)

    def rel_close(got, want, rtol):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=rtol * max(1.0, np.abs(want).max(initial=0)))

    # The three in one function (their Schur and TRSYL kernels compile once): each call
    # passes one solve's inputs and 1 x 1 ones to the others.
    a_c, q_c, a_d, q_d = (pt.dmatrix(n) for n in ["a_c", "q_c", "a_d", "q_d"])
    outs = [pt.linalg.solve_sylvester(a, bm, q), pt.linalg.solve_continuous_lyapunov(a_c, q_c)]
    outs.append(pt.linalg.solve_discrete_lyapunov(a_d, q_d, method="bilinear"))
    f, ref = compile_both([a, bm, q, a_c, q_c, a_d, q_d], outs)
    eye = np.eye(1)
    fill_syl, fill_cont, fill_disc = [-eye, -eye, eye], [-eye, eye], [0.5 * eye, eye]
    syl = [lambda *v, g=g: g(*v, *fill_cont, *fill_disc)[0] for g in (f, ref)]
    cont = [lambda *v, g=g: g(*fill_syl, *v, *fill_disc)[1] for g in (f, ref)]
    disc = [lambda *v, g=g: g(*fill_syl, *fill_cont, *v)[2] for g in (f, ref)]
    for m, n in [(1, 1), (3, 2), (2, 5), (7, 7)]:
        av, bv = rng.normal(size=(m, m)), rng.normal(size=(n, n))
        args = [av, bv, rng.normal(size=(m, n))]
        rel_close(syl[0](*args), syl[1](*args), 1e-11)
        stable = av - (np.abs(np.linalg.eigvals(av).real).max() + 1) * np.eye(m)
        qv = rng.normal(size=(m, m))
        rel_close(cont[0](stable, qv @ qv.T), cont[1](stable, qv @ qv.T), 1e-11)
        contracting = 0.5 * av / max(1.0, np.abs(np.linalg.eigvals(av)).max())
        rel_close(disc[0](contracting, qv @ qv.T), disc[1](contracting, qv @ qv.T), 1e-11)
    f, ref = syl
    # A not square: scipy.linalg.solve_sylvester raises ValueError, and so do we; PyTensor
    # raises LAPACK's _flapack.error (not a ValueError) when its inner graph runs in C.
    with pytest.raises(Exception):
        ref(np.ones((2, 3)), np.eye(2), np.ones((2, 2)))
    with pytest.raises(ValueError, match="square"):
        f(np.ones((2, 3)), np.eye(2), np.ones((2, 2)))
    for args in [[np.array([[np.nan]]), np.eye(1), np.ones((1, 1))], [np.eye(2), np.array([[np.nan]]), np.ones((2, 1))]]:
        got, want = f(*args), ref(*args)
        assert np.isnan(want).all() and np.isnan(got).all()
    raises_like(f, ref, [np.eye(2), np.eye(3), np.ones((3, 2))])

    af, bf, qf = pt.fmatrix("af"), pt.fmatrix("bf"), pt.fmatrix("qf")
    f, ref = compile_both([af, bf, qf], pt.linalg.solve_sylvester(af, bf, qf))
    args = [rng.normal(size=(4, 4)).astype("float32"), rng.normal(size=(3, 3)).astype("float32"), rng.normal(size=(4, 3)).astype("float32")]
    rel_close(f(*args), ref(*args), 1e-4)

    a3, b3, q3 = pt.tensor3("a3"), pt.tensor3("b3"), pt.tensor3("q3")
    x = pt.linalg.solve_sylvester(a3, b3, q3)
    cost = (x**2).sum()
    f, ref = compile_both([a3, b3, q3], [x, *pt.grad(cost, [a3, b3, q3])])
    args = [rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 2, 2)), rng.normal(size=(2, 3, 2))]
    for got, want in zip(f(*args), ref(*args)):
        rel_close(got, want, 1e-9)
