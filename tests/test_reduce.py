"""Reductions against the C backend: CAReduce and its subclasses with every axis form and
dtype, empty reductions, nan, Argmax/argmin, Softmax/LogSoftmax, what PyTensor builds for
mean/var/std/logsumexp, and gradients through each. Each function carries several
outputs, since the C backend compiles every function with g++."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from conftest import MLIR, C, assert_same, compile_both, raises_like
from pytensor.compile.mode import Mode

from pytensor.tensor.math import ProdWithoutZeros
from pytensor.tensor.special import log_softmax, softmax

import pytensor_mlir


def run_both(inputs, outputs, cases, rtol=None, reference=C, atol=0.0):
    """Compiles once per mode and compares every output on every case."""
    f, ref = compile_both(inputs, outputs, reference=reference)
    for values in cases:
        got, want = f(*values), ref(*values)
        for i, (g, w) in enumerate(zip(got, want)):
            shapes = [np.shape(v) for v in values]
            assert_same(g, w, rtol=rtol, atol=atol, err_msg=f"output {i} on input shapes {shapes}")
    return f


def op_types(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}


SHAPES = [(2, 3, 4), (1, 5, 2), (0, 3, 4), (2, 0, 4), (3, 4, 0)]


def sample(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        return rng.normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -4), min(info.max, 5), size=shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "int64", "uint8", "bool"])
def test_sum_and_prod(dtype):
    x = pt.tensor3("x", dtype=dtype)
    outputs = [
        x.sum(),
        x.sum(axis=0),
        x.sum(axis=-1),
        x.sum(axis=(0, 2)),
        x.sum(axis=(-3, -2, -1)),
        x.prod(axis=1),
        x.prod(),
    ]
    rng = np.random.default_rng(1)
    f = run_both([x], outputs, [[sample(dtype, s, rng)] for s in SHAPES])
    assert {"Sum", "Prod"} <= op_types(f)


def test_integer_sums_wrap_like_the_c_backend():
    # The accumulator is int64/uint64 (PyTensor's acc_dtype); an explicit narrow dtype wraps.
    x = pt.vector("x", dtype="int8")
    u = pt.vector("u", dtype="uint64")
    outputs = [x.sum(), x.sum(dtype="int8"), x.prod(dtype="int16"), u.sum(), u.prod()]
    big = np.array([2**63, 2**63 + 5, 7], dtype="uint64")
    run_both([x, u], outputs, [[np.full(300, 100, dtype="int8"), big], [np.array([-128, -1], dtype="int8"), big[:0]]])


def test_dtype_and_acc_dtype_props():
    x = pt.matrix("x", dtype="float32")
    i = pt.matrix("i", dtype="int32")
    outputs = [
        x.sum(axis=1, dtype="float64"),
        x.sum(acc_dtype="float32"),
        x.sum(axis=0, dtype="float32", acc_dtype="float64"),
        i.sum(axis=0, dtype="float64"),
        i.prod(dtype="float32"),
    ]
    rng = np.random.default_rng(2)
    x_big = (rng.normal(size=(300, 7)) * 1e3).astype("float32")
    run_both([x, i], outputs, [[x_big, rng.integers(-3, 4, size=(5, 3)).astype("int32")]], rtol=2e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint32", "bool"])
def test_max_and_min(dtype):
    x = pt.matrix("x", dtype=dtype)
    outputs = [x.max(), x.max(axis=0), x.min(axis=-1), x.min(axis=(0, 1)), pt.max(x, axis=1), pt.min(x)]
    rng = np.random.default_rng(3)
    f = run_both([x], outputs, [[sample(dtype, s, rng)] for s in [(3, 4), (1, 1), (5, 2)]])
    # PyTensor builds the min of unsigned integers as a max of their complement.
    assert {"Max", "Min"} <= op_types(f) or ((dtype.startswith("uint") or dtype == "bool") and "Max" in op_types(f))


def test_max_and_min_of_zero_size_axes_raise_value_error():
    # The C backend's Max and Min refuse any reduced axis of size 0, even for an empty
    # result, and reduce a zero-size kept axis to an empty result; a plain CAReduce with
    # maximum gives its identity instead. Which shapes raise is the C backend's answer.
    from pytensor.scalar import maximum, minimum
    from pytensor.tensor.elemwise import CAReduce

    x = pt.matrix("x")
    i = pt.matrix("i", dtype="int16")
    for out in [x.max(axis=0), x.min(), i.max(axis=1), i.min(axis=(0, 1))]:
        f, ref = compile_both([x, i], out, on_unused_input="ignore")
        raised = 0
        for shape in [(2, 3), (0, 3), (3, 0), (0, 0)]:
            values = [np.zeros(shape), np.zeros(shape, "int16")]
            try:
                want = ref(*values)
            except ValueError:
                with pytest.raises(ValueError, match="zero-size"):
                    f(*values)
                raised += 1
                continue
            assert_same(f(*values), want, err_msg=f"shape {shape}")
        # Every reduction has a zero-size reduced axis in two or three of the shapes.
        assert raised >= 2
    # Its identity is the input dtype's extreme, also where it accumulates in a wider dtype
    # (int16 and bool in int64).
    b = pt.matrix("b", dtype="bool")
    outputs = [CAReduce(maximum, axis=(0,))(x), CAReduce(minimum, axis=None)(i), CAReduce(maximum, axis=(1,))(b)]
    assert outputs[1].owner.op.acc_dtype == "int64"
    cases = [[np.zeros((0, 3)), np.zeros((2, 0), "int16"), np.zeros((2, 0), bool)], [np.ones((2, 2)), np.ones((1, 1), "int16"), np.ones((1, 2), bool)]]
    run_both([x, i, b], outputs, cases)


def test_max_min_extremes_of_integers():
    # The C backend's integer max and min go through a double (its
    # `y > x ? y : (x >= y ? x : nan(""))` has type double), so it rounds int64 and uint64
    # values past 2**53: the max of [2**63 - 1] comes back as -2**63. For those dtypes the
    # reference is the py linker, numpy's maximum and minimum.
    py = Mode(linker="py", optimizer="fast_run")
    for dtype in ["int8", "uint8", "int64", "uint64"]:
        info = np.iinfo(dtype)
        x = pt.vector("x", dtype=dtype)
        values = np.array([info.min, info.max, 0, info.max - 1, info.min + 1], dtype=dtype)
        cases = [[values], [values[:1]], [values[1:2]], [values[::-1]], [values[3:]]]
        f = run_both([x], [x.max(), x.min()], cases, reference=py if dtype.endswith("64") else C)
        for (v,) in cases:
            assert f(v) == [v.max(), v.min()], (dtype, v)


def test_float_max_min_propagate_nan_and_keep_infinities():
    x = pt.matrix("x")
    nan, inf = np.nan, np.inf
    values = np.array([[1.0, nan, 3.0], [-inf, 2.0, inf], [nan, nan, nan], [-0.0, 0.0, -1.0]])
    # Of equal values the C backend keeps the first it meets, so a max or min of zeros has
    # the first zero's sign, also in long rows (vector loops and their peeled remainder).
    rng = np.random.default_rng(5)
    long = -1.0 - rng.random((3, 700))
    long[0, [10, 300]] = [-0.0, 0.0]
    long[1, [200, 690]] = [0.0, -0.0]
    long[2, [100, 650]] = [0.0, nan]
    cases = [[values], [values[1:2]], [values[3:]], [values[:, ::-1]], [long], [-long], [long[:, ::-1]]]
    run_both([x], [x.max(axis=1), x.min(axis=1), x.max(axis=0), x.min(), x.max()], cases)


def test_max_min_over_leading_axes_as_one_kernel_over_columns():
    # On the CPU a max or min over leading axes is the column kernel (lower/column_folds.rs):
    # each column's elements folded in order, eight rows at a time as a balanced tree of the
    # C backend's step, so of -0.0 and +0.0 the first stays, also across the groups of eight
    # rows and in the rows after the last group; nan anywhere in a column gives nan;
    # infinities; column counts around 8 and 16; rank 3 with two leading axes; float32;
    # integers (the 64-bit ones against the py linker: C's go through a double).
    nan, inf = np.nan, np.inf
    x = pt.matrix("x")
    t = pt.tensor3("t", dtype="float32")
    rows, cols = 21, 35
    v = -1.0 - np.random.default_rng(15).random((rows, cols))
    for col, (r1, z1, r2, z2) in enumerate([(3, -0.0, 12, 0.0), (9, 0.0, 10, -0.0), (1, -0.0, 2, 0.0), (17, 0.0, 20, -0.0),
                                            (0, 0.0, 16, -0.0), (7, -0.0, 8, 0.0)]):
        v[r1, col], v[r2, col] = z1, z2
    v[5, 20], v[18, 21], v[0, 22] = nan, nan, nan
    v[4, 23], v[19, 24], v[:, 25] = inf, -inf, -inf
    cases = [[v, v[:18, :30].astype("float32").reshape(3, 6, 30)], [-v, -v[:16, :17].astype("float32").reshape(2, 8, 17)],
             [v[::-1], v[:1, :1].astype("float32").reshape(1, 1, 1)], [v[:7, :9], v[:9, :16].astype("float32").reshape(9, 1, 16)]]
    f = run_both([x, t], [x.max(axis=0), x.min(axis=0), t.max(axis=(0, 1)), t.min(axis=0)], cases)
    assert "flow.dispatch.workgroups" in pytensor_mlir.get_mlir(f)
    py = Mode(linker="py", optimizer="fast_run")
    rng = np.random.default_rng(16)
    for dtype in ["int8", "uint8", "int32", "int64", "uint64"]:
        info = np.iinfo(dtype)
        i = pt.matrix("i", dtype=dtype)
        w = rng.integers(info.min, info.max, size=(19, 33), dtype=dtype, endpoint=True)
        w[3, :4] = [info.min, info.max, info.max, info.min]
        run_both([i], [i.max(axis=0), i.min(axis=0)], [[w], [w[:8, :16]], [w[:1]]], reference=py if dtype.endswith("64") else C)


def test_max_min_along_the_last_axis_as_one_kernel_over_rows():
    # On the CPU a max or min along the last axis, or over all axes, is the row kernel
    # (lower/row_folds.rs): sixteen partial results, so where the result is a zero the
    # kernel finds the row's first zero, whose sign the C backend keeps. Zeros of both signs
    # in different lanes, in the same lane, in the remainder past the lanes; a row of zeros;
    # nan beside a zero; float32; a whole 3-D max; integers against C or the py linker.
    nan = np.nan
    x = pt.matrix("x")
    t = pt.tensor3("t", dtype="float32")
    w = -1.0 - np.random.default_rng(17).random((7, 37))
    w[0, [3, 20]] = [0.0, -0.0]
    w[1, [5, 21]] = [-0.0, 0.0]
    w[2, [33, 36]] = [0.0, -0.0]
    w[3, :] = 0.0
    w[3, 0] = -0.0
    w[4, [10, 11]] = [nan, 0.0]
    w[5, [0, 1]] = [-0.0, 0.0]
    # The later zero in an earlier lane (16 is lane 0): only the scan for the first zero
    # gives C's +0.0 here.
    w[6, [2, 16]] = [0.0, -0.0]
    cases = [[w, w[1:, :36].astype("float32").reshape(2, 3, 36)], [-w, -w[:4, :32].astype("float32").reshape(2, 2, 32)],
             [w[:, ::-1], w[:1, :1].astype("float32").reshape(1, 1, 1)], [w[:, :9], w[:, 30:].astype("float32").reshape(7, 1, 7)]]
    outputs = [x.max(axis=1), x.min(axis=-1), x.max(), x.min(), t.max(axis=2), t.min(axis=-1), t.max()]
    f = run_both([x, t], outputs, cases)
    assert "flow.dispatch.workgroups" in pytensor_mlir.get_mlir(f)
    py = Mode(linker="py", optimizer="fast_run")
    rng = np.random.default_rng(18)
    for dtype in ["int8", "uint16", "int64"]:
        info = np.iinfo(dtype)
        i = pt.matrix("i", dtype=dtype)
        v = rng.integers(info.min, info.max, size=(5, 35), dtype=dtype, endpoint=True)
        v[2, 30:34] = [info.min, info.max, info.max, info.min]
        run_both([i], [i.max(axis=1), i.min(axis=1), i.max(), i.min()], [[v], [v[:, :16]], [v[:1, :1]]], reference=py if dtype.endswith("64") else C)


def test_all_and_any():
    b = pt.tensor3("b", dtype="bool")
    i = pt.matrix("i", dtype="int32")
    outputs = [b.all(), b.any(), b.all(axis=0), b.any(axis=(1, 2)), b.all(axis=-1), i.all(axis=1), i.any(axis=0), pt.any(i)]
    rng = np.random.default_rng(4)
    cases = []
    for s in [(2, 3, 4), (3, 1, 2), (0, 2, 2), (2, 0, 3)]:
        cases.append([rng.random(s) < 0.7, rng.integers(0, 2, size=s[1:]).astype("int32")])
    cases.append([np.ones((2, 2, 2), bool), np.zeros((0, 3), "int32")])
    f = run_both([b, i], outputs, cases)
    assert {"All", "Any"} <= op_types(f)


def test_prod_without_zeros():
    x = pt.matrix("x")
    i = pt.matrix("i", dtype="int64")
    outputs = [ProdWithoutZeros(axis=(1,))(x), ProdWithoutZeros(axis=None)(x), ProdWithoutZeros(axis=(0,))(i)]
    values = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1.5, -2.0, 4.0]])
    ints = np.array([[0, 2], [3, 0], [0, 0]])
    f = run_both([x, i], outputs, [[values, ints], [values[:0], ints[:0]]])
    assert "ProdWithoutZeros" in op_types(f)


def test_careduce_with_every_scalar_op():
    from pytensor.scalar import add, maximum, mul
    from pytensor.tensor.elemwise import CAReduce

    x = pt.matrix("x")
    outputs = [CAReduce(add, axis=(0,))(x), CAReduce(mul, axis=None)(x), CAReduce(maximum, axis=(1,))(x)]
    values = np.arange(12.0).reshape(3, 4) / 7
    run_both([x], outputs, [[values], [values[:0]]])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "uint16", "bool"])
def test_argmax_and_argmin(dtype):
    x = pt.tensor3("x", dtype=dtype)
    outputs = [
        pt.argmax(x),
        pt.argmax(x, axis=0),
        pt.argmax(x, axis=-1),
        pt.argmax(x, axis=(0, 2)),
        pt.argmin(x, axis=1),
        pt.argmin(x),
    ]
    rng = np.random.default_rng(5)
    cases = [[sample(dtype, s, rng)] for s in [(2, 3, 4), (3, 1, 2), (1, 1, 1)]]
    # Ties: the first index wins, whatever order the kernel visits them in.
    cases.append([np.ones((3, 4, 5), dtype=dtype)])
    f = run_both([x], outputs, cases)
    assert "Argmax" in op_types(f)


def test_argmax_nan_and_infinities_like_numpy():
    x = pt.matrix("x")
    nan, inf = np.nan, np.inf
    values = np.array(
        [[1.0, nan, 3.0, nan], [-inf, -inf, -inf, -inf], [2.0, inf, inf, 1.0], [nan, 1.0, 2.0, 3.0], [0.0, -0.0, 0.0, -1.0]]
    )
    outputs = [pt.argmax(x, axis=1), pt.argmin(x, axis=1), pt.argmax(x), pt.argmax(x, axis=0), pt.argmin(x, axis=0)]
    f, ref = compile_both([x], outputs)
    for v in [values, values[1:3], values[2:]]:
        for g, w in zip(f(v), ref(v)):
            assert_same(g, w)
    np.testing.assert_array_equal(f(values)[0], np.argmax(values, axis=1))


def test_argmax_along_the_last_axis_as_row_kernels():
    # On the CPU an argmax along the last axis or over all axes is two row kernels
    # (lower/row_folds.rs): each row's max (nan where it has one), then its first element
    # equal to it. Long rows (past the kernel's 16 lanes and its remainder), ties of the max
    # in different lanes (the first index wins), -0.0 and +0.0, nan first or late, rows of
    # -inf and of inf, float32, rank 3, argmin, integers and bools.
    nan, inf = np.nan, np.inf
    x = pt.matrix("x")
    t = pt.tensor3("t", dtype="float32")
    rng = np.random.default_rng(19)
    v = rng.standard_normal((8, 41))
    v[0, [30, 2, 17]] = 5.0
    v[1, [33, 40]] = [nan, nan]
    v[2, 0] = nan
    v[3, :] = -inf
    v[4, :] = inf
    v[5] = -1.0 - rng.random(41)
    v[5, [19, 3]] = [-0.0, 0.0]
    v[6, 40] = 9.0
    outputs = [pt.argmax(x, axis=1), pt.argmin(x, axis=-1), pt.argmax(x), pt.argmin(x), pt.argmax(t, axis=2), pt.argmax(t)]
    cases = [[v, v[:6, :40].astype("float32").reshape(2, 3, 40)], [-v, v[1:3].astype("float32").reshape(1, 2, 41)],
             [v[:, ::-1], v[:1, :1].astype("float32").reshape(1, 1, 1)], [rng.standard_normal((3, 1000)), rng.standard_normal((2, 2, 17)).astype("float32")]]
    f = run_both([x, t], outputs, cases)
    assert "flow.dispatch.workgroups" in pytensor_mlir.get_mlir(f)
    for dtype in ["int8", "uint16", "int64", "bool"]:
        i = pt.matrix("i", dtype=dtype)
        w = sample(dtype, (4, 37), rng)
        w[1, :] = w[1, 0]
        run_both([i], [pt.argmax(i, axis=1), pt.argmin(i, axis=1), pt.argmax(i)], [[w], [w[:, 20:]], [w[:1, :1]]])


def test_argmax_over_leading_axes_as_column_kernels():
    # On the CPU an argmax over leading axes is the column kernel's maxima (nan where a
    # column has one), then one pass over x in memory order for each column's first row
    # equal to its max (lower/column_folds.rs `first_row_of`): ties in different rows (the
    # first wins), -0.0 and +0.0, nan first or late, columns of -inf and of inf, column
    # counts past 16 and in the remainder, float32 rank 3 over two axes, argmin, integers
    # and bools.
    nan, inf = np.nan, np.inf
    x = pt.matrix("x")
    t = pt.tensor3("t", dtype="float32")
    rng = np.random.default_rng(20)
    v = rng.standard_normal((23, 37))
    v[[20, 2, 11], 0] = 5.0
    v[[9, 22], 1] = [nan, nan]
    v[0, 2] = nan
    v[:, 3] = -inf
    v[:, 4] = inf
    v[:, 5] = -1.0 - rng.random(23)
    v[[19, 3], 5] = [-0.0, 0.0]
    v[22, 36] = 9.0
    outputs = [pt.argmax(x, axis=0), pt.argmin(x, axis=0), pt.argmax(t, axis=(0, 1)), pt.argmin(t, axis=0)]
    cases = [[v, v[:22, :35].astype("float32").reshape(2, 11, 35)], [-v, v[:, :17].astype("float32").reshape(23, 1, 17)],
             [v[::-1], v[:1, :1].astype("float32").reshape(1, 1, 1)], [rng.standard_normal((1000, 3)), rng.standard_normal((2, 2, 40)).astype("float32")]]
    f = run_both([x, t], outputs, cases)
    assert "flow.dispatch.workgroups" in pytensor_mlir.get_mlir(f)
    for dtype in ["int8", "uint16", "int64", "bool"]:
        i = pt.matrix("i", dtype=dtype)
        w = sample(dtype, (37, 19), rng)
        w[:, 1] = w[0, 1]
        run_both([i], [pt.argmax(i, axis=0), pt.argmin(i, axis=0)], [[w], [w[20:]], [w[:1, :1]]])


def test_argmax_of_an_empty_sequence_raises_value_error():
    x = pt.matrix("x")
    f, ref = compile_both([x], [pt.argmax(x, axis=0), pt.argmax(x)])
    for shape in [(0, 3), (3, 0)]:
        raises_like(f, ref, [np.zeros(shape)])
    # Nothing to compute: an empty result, no error.
    f1, ref1 = compile_both([x], pt.argmax(x, axis=1))
    assert_same(f1(np.zeros((0, 3))), ref1(np.zeros((0, 3))))
    with pytest.raises(ValueError, match="argmax of an empty sequence"):
        f1(np.zeros((3, 0)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_softmax_and_log_softmax(dtype):
    x = pt.tensor3("x", dtype=dtype)
    outputs = [softmax(x, axis=-1), softmax(x, axis=0), softmax(x, axis=None), log_softmax(x, axis=1), log_softmax(x, axis=None)]
    rng = np.random.default_rng(6)
    cases = [[(rng.normal(size=s) * 3).astype(dtype)] for s in [(2, 3, 4), (1, 1, 5)]]
    # Large values: stable only with the max subtracted.
    cases.append([np.array([[[1000.0, 999.0, -1000.0]], [[-np.inf, 0.0, 5.0]]], dtype=dtype)])
    f = run_both([x], outputs, cases)
    assert {"Softmax", "LogSoftmax"} <= op_types(f)
    # An empty input: every output is empty, of x's shape. The C backend raises there (its
    # max over an empty axis has no identity), as numpy's max would; there is no value
    # the max could change, so we return the empty results.
    empty = np.zeros((0, 3, 2), dtype=dtype)
    for i, got in enumerate(f(empty)):
        assert_same(got, empty, err_msg=f"output {i}")
    with pytest.raises(ValueError, match="zero-size"):
        pytensor.function([x], outputs, mode=C)(empty)


def test_mean_var_std_as_pytensor_builds_them():
    x = pt.matrix("x")
    y = pt.matrix("y", dtype="float32")
    outputs = [x.mean(), x.mean(axis=0), x.var(axis=1), x.std(), y.mean(axis=-1), y.var(), pt.max(x, axis=0) - x.mean()]
    rng = np.random.default_rng(7)
    run_both([x, y], outputs, [[rng.normal(size=(4, 5)), rng.normal(size=(3, 6)).astype("float32")]], rtol=1e-5)


def test_logsumexp():
    x = pt.matrix("x")
    outputs = [pt.logsumexp(x, axis=1), pt.logsumexp(x)]
    rng = np.random.default_rng(8)
    run_both([x], outputs, [[rng.normal(size=(3, 4)) * 10], [np.array([[1000.0, 1000.0], [-np.inf, 0.0]])]])


def test_gradients_through_reductions():
    x = pt.matrix("x")
    cost = (
        (x**2).sum()
        + x.max(axis=0).sum()
        + x.min()
        + pt.prod(x, axis=1).sum()
        + x.mean()
        + (softmax(x, axis=1) * x).sum()
        + log_softmax(x, axis=0)[0].sum()
    )
    rng = np.random.default_rng(9)
    values = rng.normal(size=(3, 4))
    run_both([x], [cost, pytensor.grad(cost, x)], [[values], [values[:1]]])


def test_reduction_over_a_rank_zero_input():
    s = pt.scalar("s")
    run_both([s], [s.sum(), s.max(), pt.argmax(s)], [[np.array(2.5)]])


def test_one_compile_serves_every_shape():
    x = pt.matrix("x")
    f = pytensor.function([x], [x.sum(axis=0), pt.argmax(x, axis=1)], mode=MLIR)
    before = pytensor_mlir.compiler_invocations()
    # (0, 4): no rows; argmax over an empty row would raise, in numpy too.
    for shape in [(2, 3), (5, 1), (0, 4)]:
        v = np.arange(np.prod(shape), dtype=float).reshape(shape)
        s, a = f(v)
        np.testing.assert_array_equal(s, v.sum(axis=0))
        np.testing.assert_array_equal(a, np.argmax(v, axis=1))
    assert pytensor_mlir.compiler_invocations() == before


def test_long_folds_over_trailing_axes():
    # Long folds over trailing axes, whose vector loops IREE peels (lengths around multiples
    # of the vector width and far beyond), kept dims, several trailing axes, static extents,
    # every fold. (Empty folds: the tests above.)
    x = pt.matrix("x")
    t = pt.tensor3("t")
    i = pt.matrix("i", dtype="int8")
    u = pt.matrix("u", dtype="uint32")
    b = pt.matrix("b", dtype="bool")
    s = pt.tensor("s", shape=(3, 300), dtype="float64")
    outputs = [
        x.sum(), x.sum(axis=1), x.prod(axis=-1), x.max(axis=1), x.min(), ProdWithoutZeros(axis=(1,))(x),
        t.sum(axis=(1, 2)), t.max(axis=(1, 2)), i.sum(axis=1), i.prod(), u.max(axis=1), u.min(axis=1),
        b.all(axis=1), b.any(axis=1), s.sum(axis=1), s.max(), softmax(x, axis=-1), pt.logsumexp(x, axis=1),
    ]
    rng = np.random.default_rng(9)
    cases = []
    for n in [1, 127, 128, 129, 300, 1000]:
        v = 1.0 + rng.standard_normal((3, n)) / n  # products stay finite
        v[1, ::7] = 0.0  # zeros for ProdWithoutZeros (row 1), and for max/min ties
        cases.append([
            v, rng.standard_normal((2, 3, n // 3 + 1)), rng.integers(-3, 4, size=(2, n)).astype("int8"),
            rng.integers(0, 2**32, size=(2, n), dtype="uint64").astype("uint32"), rng.random((2, n)) < 0.99,
            rng.standard_normal((3, 300)),
        ])
    f, ref = compile_both([x, t, i, u, b, s], outputs)
    for values in cases:
        got, want = f(*values), ref(*values)
        names = [f"output {k} at shapes {[np.shape(v) for v in values]}" for k in range(len(outputs))]
        # Vectorized float sums round differently from the C backend's sequential ones.
        for name, g, w in zip(names, got, want):
            assert_same(g, w, rtol=1e-12 if g.dtype == np.float64 else None, err_msg=name)


def test_float_sums_over_leading_or_trailing_axes():
    # On the CPU float sums over leading axes accumulated in float64 are the column kernel
    # (lower/column_folds.rs), those accumulated in float32 a contraction with a vector of
    # ones (lower/reduce.rs `sum_as_contraction`): several kept axes (reshaped back), static
    # and dynamic extents around the contraction's cut-off of 16, float32 accumulated in
    # float64, nan and infinities, empty axes; a middle axis takes the plain fold; trailing
    # axes and all axes the row kernel (`fold_of_rows`).
    x = pt.tensor4("x")
    h = pt.tensor3("h", dtype="float32")
    s = pt.tensor("s", shape=(3, 15, 16), dtype="float64")
    outputs = [
        x.sum(), x.sum(axis=0), x.sum(axis=(0, 1)), x.sum(axis=(0, 1, 2)), x.sum(axis=3), x.sum(axis=(2, 3)),
        x.sum(axis=(1, 2, 3)), x.sum(axis=1), x.mean(axis=(0, 1)),
        h.sum(axis=2), h.sum(axis=0), pt.sum(h, axis=(1, 2), acc_dtype="float64"), pt.sum(h, dtype="float64"),
        s.sum(axis=2), s.sum(axis=(1, 2)), s.sum(axis=0), s.sum(axis=(0, 1)),
        pt.sum(h, axis=(0, 1), acc_dtype="float32"),
    ]
    rng = np.random.default_rng(11)
    cases = []
    for shape in [(2, 3, 4, 50), (1, 1, 1, 1), (40, 2, 3, 1), (0, 3, 2, 5), (2, 3, 4, 0), (3, 17, 2, 16)]:
        v = rng.standard_normal(shape)
        if v.size > 8:
            v.flat[3] = np.nan
            v.flat[5] = np.inf
            v.flat[7] = -np.inf
        cases.append([v, rng.standard_normal(shape[1:]).astype("float32"), rng.standard_normal((3, 15, 16))])
    # The order of the additions differs from the C backend's sequential one.
    f = run_both([x, h, s], outputs, cases, rtol=1e-12)
    mlir = pytensor_mlir.get_mlir(f)
    assert mlir.count("linalg.vecmat") == 1
    assert "linalg.matvec" not in mlir and "linalg.dot" not in mlir


def test_float_sums_over_leading_axes_as_one_kernel_over_columns():
    # On the CPU a float sum over leading axes accumulated in float64 is one sequential
    # kernel (lower/column_folds.rs: the rows eight at a time, then one by one, added into the
    # column sums sixteen columns a step, then eight, then one by one): column counts on
    # both sides of 8 and 16 and far beyond, row counts on both sides of 8 and 16, rank 2 to 4 with
    # one to three leading axes summed, float32 summed in float64, a static shape, the mean
    # and a sum of an elementwise result, nan and infinities, no rows and no columns.
    x = pt.matrix("x")
    t = pt.tensor4("t")
    h = pt.tensor3("h", dtype="float32")
    s = pt.tensor("s", shape=(37, 3), dtype="float64")
    outputs = [x.sum(axis=0), (pt.exp(x) * 2.0).sum(axis=0), x.mean(axis=0), t.sum(axis=0), t.sum(axis=(0, 1)),
               t.sum(axis=(0, 1, 2)), h.sum(axis=0), pt.sum(h, axis=(0, 1), dtype="float64"), s.sum(axis=0)]
    rng = np.random.default_rng(14)
    cases = []
    for rows, cols in [(5, 0), (5, 1), (5, 7), (5, 8), (5, 9), (5, 15), (5, 16), (5, 17), (5, 23), (5, 24), (5, 25),
                       (5, 31), (5, 32), (5, 33), (5, 40), (5, 1000), (1, 17), (7, 17), (8, 17), (9, 17), (16, 33), (17, 33),
                       (1000, 3), (0, 5)]:
        v = rng.standard_normal((rows, cols))
        if rows * cols > 3:
            v.flat[2] = np.nan
            v.flat[rows * cols // 2] = np.inf
            v.flat[rows * cols - 1] = -np.inf
        cases.append([v, rng.standard_normal((rows, 2, 3, cols)), rng.standard_normal((rows, 3, cols)).astype("float32"),
                      rng.standard_normal((37, 3))])
    # The order of the additions differs from the C backend's sequential one (where the
    # terms of a few rows cancel, relatively more than 1e-12 of their small sum).
    f = run_both([x, t, h, s], outputs, cases, rtol=1e-12, atol=1e-14)
    mlir = pytensor_mlir.get_mlir(f)
    assert "flow.dispatch.workgroups" in mlir
    assert "linalg.vecmat" not in mlir


def test_float_sums_along_the_last_axis_as_one_kernel_over_rows():
    # On the CPU a float sum along the last axis alone is one sequential kernel over the
    # rows (lower/row_folds.rs: sixteen partial sums, then eight, then one by one): row
    # lengths on both sides of 8 and 16 and far beyond, rank 2 to 4, float32 rows summed in
    # float64, a static shape, nan and infinities, no rows and empty rows.
    x = pt.matrix("x")
    t = pt.tensor4("t")
    h = pt.tensor3("h", dtype="float32")
    s = pt.tensor("s", shape=(3, 37), dtype="float64")
    outputs = [x.sum(axis=1), x.sum(axis=-1) * 2.0, x.mean(axis=1), t.sum(axis=3), h.sum(axis=2),
               pt.sum(h, axis=-1, acc_dtype="float64"), s.sum(axis=1)]
    rng = np.random.default_rng(12)
    cases = []
    for n in [0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 1000]:
        v = rng.standard_normal((5, n))
        if n > 3:
            v[1, 2] = np.nan
            v[2, 3] = np.inf
            v[3, n - 1] = -np.inf
        cases.append([v, rng.standard_normal((2, 3, 2, n)), rng.standard_normal((4, 3, n)).astype("float32"), rng.standard_normal((3, 37))])
    cases.append([np.zeros((0, 5)), np.zeros((2, 0, 3, 4)), np.zeros((0, 3, 9), dtype="float32"), rng.standard_normal((3, 37))])
    # The order of the additions differs from the C backend's sequential one.
    f = run_both([x, t, h, s], outputs, cases, rtol=1e-12)
    assert "flow.dispatch.workgroups" in pytensor_mlir.get_mlir(f)


def test_whole_float_sums_as_one_row_of_the_kernel():
    # On the CPU a float sum over all axes is the row kernel over one row of every element
    # (lower/reduce.rs `fold_of_rows`): lengths on both sides of 8 and 16 and far beyond,
    # rank 1 to 3, float32 summed in float64 (and cast back, or kept in float64), the mean,
    # a sum of an elementwise result, nan and infinities, empty inputs.
    x, t = pt.dvector("x"), pt.dtensor3("t")
    h = pt.vector("h", dtype="float32")
    outputs = [x.sum(), x.mean(), (pt.exp(x) * 2.0).sum(), t.sum(), h.sum(), pt.sum(h, dtype="float64")]
    rng = np.random.default_rng(13)
    cases = []
    for n in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1000, 100003]:
        v = rng.standard_normal(n)
        cases.append([v, rng.standard_normal((2, n, 3)), rng.standard_normal(n).astype("float32")])
        if n > 20:
            w = v.copy()
            w[3], w[n - 1] = np.nan, np.inf
            cases.append([w, np.full((1, n, 1), np.inf), np.r_[-np.inf, np.ones(n - 1)].astype("float32")])
    # The order of the additions differs from the C backend's sequential one.
    f = run_both([x, t, h], outputs, cases, rtol=1e-11)
    assert "flow.dispatch.workgroups" in pytensor_mlir.get_mlir(f)
    assert "linalg.dot" not in pytensor_mlir.get_mlir(f)


def test_several_vector_sums_in_one_function():
    # Several whole-vector sums, each its own result, static lengths on either side of a
    # multiple of 16 and dynamic ones. A rewrite of the 1-D sum as a vecmat over rows of 16
    # (tried for issue 4's sum row) gave the dot's result the vecmat's first partial here
    # (IREE 3.13 placed a result and another kernel's output in overlapping memory), while
    # a single sum per function was right: each sum must be its own.
    a = pt.tensor("a", shape=(32,), dtype="float64")
    c = pt.tensor("c", shape=(33,), dtype="float64")
    run_both([a, c], [a.sum(), c.sum()], [[np.arange(32.0), np.arange(33.0)], [np.r_[np.inf, np.ones(31)], np.r_[np.ones(32), np.nan]]])
    d, e, g = pt.dvector("d"), pt.dvector("e"), pt.dvector("g")
    rng = np.random.default_rng(5)
    cases = [[rng.standard_normal(nd), rng.standard_normal(ne), rng.standard_normal(ng)] for nd, ne, ng in [(32, 33, 48), (48, 33, 16), (0, 16, 1), (160, 1, 17)]]
    run_both([d, e, g], [d.sum(), e.sum(), g.sum(), (d * 2).sum()], cases, rtol=1e-12)
