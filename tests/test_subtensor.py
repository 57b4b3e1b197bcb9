"""Indexing against the C backend: Subtensor (constant and symbolic bounds, negative
steps, integer indices, clamped slices), IncSubtensor (inc and set), AdvancedSubtensor1
and AdvancedIncSubtensor1 (repeated indices, set), on several shapes (empty included) and
dtypes; indices out of bounds raise IndexError, bad value shapes ValueError; gradients."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from conftest import C, MLIR, assert_all_same, assert_same, check, compile_both, raises_like


def run_both(inputs, outputs, cases, **kwargs):
    f, ref = compile_both(inputs, outputs, **kwargs)
    for values in cases:
        for i, (g, w) in enumerate(zip(f(*values), ref(*values))):
            assert_same(g, w, err_msg=f"output {i} on {[np.shape(v) for v in values]}")
    return f, ref


def op_types(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) * 10).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_subtensor_constant_bounds(dtype):
    x = pt.matrix("x", dtype=dtype)
    outputs = [
        x[1:],
        x[:-1],
        x[::-1],
        x[::-2, 1::2],
        x[-100:100, 5:1:-1],  # clamped like numpy
        x[1],
        x[-1, 2:],
        x[:, 0],
        x[2:1],  # empty
        x[3::-3],
    ]
    cases = [[values(s, dtype)] for s in [(4, 5), (2, 3), (7, 1)]]
    f, ref = run_both([x], outputs, cases)
    assert "Subtensor" in op_types(f)
    for bad in [values((0, 5), dtype), values((4, 0), dtype)]:
        got, _ = raises_like(f, ref, [bad])
        assert isinstance(got, IndexError)


def test_subtensor_symbolic_bounds():
    x = pt.tensor3("x")
    a = pt.scalar("a", dtype="int64")
    b = pt.scalar("b", dtype="int32")
    s = pt.scalar("s", dtype="int64")
    k = pt.scalar("k", dtype="int16")
    outputs = [x[a:b], x[a:b:s, ::s], x[:, k], x[k, a:, ::-1], x[::s].sum(axis=0), x[a:] * 2]
    v = values((5, 4, 3), "float64")
    cases = [
        [v, 1, np.int32(4), 2, np.int16(0)],
        [v, -2, np.int32(-1), -1, np.int16(-1)],
        [v, 0, np.int32(100), 3, np.int16(3)],
        [v, -7, np.int32(2), -2, np.int16(-4)],
        [values((3, 2, 0), "float64"), 2, np.int32(0), 1, np.int16(1)],
    ]
    f, ref = run_both([x, a, b, s, k], outputs, cases)
    assert "Subtensor" in op_types(f)
    for bad_k in [4, -5]:
        got, _ = raises_like(f, ref, [v, 0, np.int32(1), 1, np.int16(bad_k)])
        assert isinstance(got, IndexError)
    got, _ = raises_like(f, ref, [v, 0, np.int32(1), 0, np.int16(0)])  # step 0
    assert isinstance(got, ValueError)


def test_slices_meet_in_elemwise():
    # x[1:] - x[:-1]: derived dims checked equal before the call, one function for all shapes.
    x = pt.vector("x")
    y = pt.vector("y")
    outputs = [x[1:] - x[:-1], x[2:] + y[::2]]
    # len(x[2:]) == n - 2 == len(y[::2]) for len(y) in (2n - 5, 2n - 4)
    cases = [[values((n,), "float64"), values((m,), "float64")] for n, m in [(5, 5), (5, 6), (6, 8), (2, 0)]]
    f, ref = run_both([x, y], outputs, cases)
    got, _ = raises_like(f, ref, [values((5,), "float64"), values((2,), "float64")])
    assert isinstance(got, ValueError)


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_inc_subtensor(dtype):
    x = pt.matrix("x", dtype=dtype)
    v = pt.vector("v", dtype=dtype)
    i = pt.scalar("i", dtype="int64")
    outputs = [
        pt.inc_subtensor(x[1], v),
        pt.set_subtensor(x[:, 1:3], 5),
        pt.inc_subtensor(x[i, ::2], v[:2]),
        pt.set_subtensor(x[::-1, i], v[:3]),
        pt.inc_subtensor(x[1:, :], v),  # broadcast over rows
    ]
    f, ref = run_both([x, v, i], outputs, [[values((3, 4), dtype), values((4,), dtype, 1), k] for k in [0, -1, 2]])
    assert "IncSubtensor" in op_types(f)
    got, _ = raises_like(f, ref, [values((3, 4), dtype), values((4,), dtype), 3])
    assert isinstance(got, IndexError)
    got, _ = raises_like(f, ref, [values((3, 4), dtype), values((5,), dtype), 0])
    assert isinstance(got, ValueError)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16"])
def test_advanced_subtensor1(dtype):
    x = pt.matrix("x", dtype=dtype)
    v = pt.vector("v", dtype=dtype)
    idx = pt.vector("idx", dtype="int64")
    j = pt.vector("j", dtype="int32")
    outputs = [x[idx], v[idx], x[j][:, 1:], v[j] * 2]
    cases = [
        [values((4, 3), dtype), values((5,), dtype), np.array([0, 3, -1, 2, 2]), np.array([1, -4], dtype="int32")],
        [values((1, 2), dtype), values((4,), dtype), np.array([], dtype="int64"), np.array([0, 0, 0], dtype="int32")],
        [values((4, 0), dtype), values((5,), dtype), np.array([-4]), np.array([3], dtype="int32")],
    ]
    f, ref = run_both([x, v, idx, j], outputs, cases)
    assert "AdvancedSubtensor1" in op_types(f)
    for bad_idx, bad_j in [([4], [0]), ([-5], [0]), ([0], [4]), ([0], [-5])]:
        got, _ = raises_like(f, ref, [values((4, 3), dtype), values((4,), dtype), np.array(bad_idx), np.array(bad_j, dtype="int32")])
        assert isinstance(got, IndexError)
    got, _ = raises_like(f, ref, [values((0, 3), dtype), values((0,), dtype), np.array([0]), np.array([], dtype="int32")])
    assert isinstance(got, IndexError)


def test_gather_with_static_empty_and_run_time_rows_like_c():
    # The gather reads row 0 for an index out of bounds (no branch, so IREE vectorizes
    # it) and a fill stands in where axis 0 is empty: rows static (3), static 0 and
    # known only at run time (0 included), indices of static and run-time length, special
    # values read through, and a consumer fused after the gather.
    xs = pt.tensor("xs", shape=(3, 2), dtype="float64")
    x0 = pt.tensor("x0", shape=(0, 2), dtype="float64")
    x = pt.matrix("x", dtype="float64")
    i3 = pt.tensor("i3", shape=(3,), dtype="int64")
    i = pt.vector("i", dtype="int64")
    specials = np.array([[np.nan, -0.0], [np.inf, -np.inf], [0.0, 5e-324]])
    outputs = [xs[i], x0[i[:0]], x[i3] * 2 + 1, x[i]]
    good = [
        [specials, values((0, 2), "float64"), values((4, 2), "float64"), np.array([0, -1, 3]), np.array([2, -3, 1, 1])],
        [specials, values((0, 2), "float64"), values((3, 2), "float64"), np.array([-3, 2, 0]), np.array([], dtype="int64")],
    ]
    f, ref = run_both([xs, x0, x, i3, i], outputs, good)
    assert "AdvancedSubtensor1" in op_types(f)
    bad = [
        [specials, values((0, 2), "float64"), values((4, 2), "float64"), np.array([0, 1, 2]), np.array([3])],  # xs[3]
        [specials, values((0, 2), "float64"), values((0, 2), "float64"), np.array([0, 0, 0]), np.array([], dtype="int64")],  # no rows
        [specials, values((0, 2), "float64"), values((4, 2), "float64"), np.array([0, 4, 0]), np.array([0])],  # x[4]
        [specials, values((0, 2), "float64"), values((4, 2), "float64"), np.array([0, 0, -5]), np.array([0])],  # x[-5]
    ]
    for case in bad:
        got, _ = raises_like(f, ref, case)
        assert isinstance(got, IndexError)
    # Empty axis 0 at run time with empty indices: an empty result, nothing read.
    g, gref = compile_both([x, i], x[i])
    for rows, idx in [((0, 2), []), ((0, 0), []), ((2, 0), [1, -2])]:
        assert_same(g(values(rows, "float64"), np.array(idx, dtype="int64")), gref(values(rows, "float64"), np.array(idx, dtype="int64")))
    got, _ = raises_like(g, gref, [values((0, 2), "float64"), np.array([0, 0])])
    assert isinstance(got, IndexError)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_advanced_inc_subtensor1(dtype):
    x = pt.matrix("x", dtype=dtype)
    y = pt.matrix("y", dtype=dtype)
    r = pt.vector("r", dtype=dtype)
    idx = pt.vector("idx", dtype="int64")
    outputs = [
        pt.inc_subtensor(x[idx], y),  # repeated indices accumulate
        pt.set_subtensor(x[idx], y),  # the last of repeated indices wins
        pt.inc_subtensor(x[idx], r),  # r broadcast over the indexed rows
        pt.set_subtensor(x[idx], 7),
        pt.inc_subtensor(x[:, 0][idx], y[:, 0]),
    ]
    cases = [
        [values((4, 3), dtype), values((5, 3), dtype, 1), values((3,), dtype, 2), np.array([0, 3, -1, 0, 0])],
        [values((2, 3), dtype), values((0, 3), dtype), values((3,), dtype, 2), np.array([], dtype="int64")],
    ]
    f, ref = run_both([x, y, r, idx], outputs, cases)
    assert "AdvancedIncSubtensor1" in op_types(f)
    got, _ = raises_like(f, ref, [values((4, 3), dtype), values((2, 3), dtype), values((3,), dtype), np.array([0, 4])])
    assert isinstance(got, IndexError)
    got, _ = raises_like(f, ref, [values((4, 3), dtype), values((2, 3), dtype), values((3,), dtype), np.array([0, 1, 2])])
    assert isinstance(got, ValueError)


def test_row_updates_in_index_order_like_c():
    """On the CPU, AdvancedIncSubtensor1 and AdvancedSetSubtensor1 are one kernel that
    copies x and then updates its rows index by index (row_updates.rs): repeated indices
    accumulate in order (inc) or the last wins (set), bool rows are or-ed, updates of
    another dtype or broadcast along a dim are converted first; rows of 3-d tensors,
    narrow unsigned indices, a statically shaped x, and empty or row-less cases."""
    rng = np.random.default_rng(5)
    xv, iv, yv = pt.dvector("xv"), pt.lvector("iv"), pt.dvector("yv")
    n, k = 1000, 5000
    check([xv, iv, yv], [pt.inc_subtensor(xv[iv], yv), pt.set_subtensor(xv[iv], yv)],
          [rng.normal(size=n), rng.integers(-n, n, size=k), rng.normal(size=k)])

    xb, yb, ib = pt.vector("xb", dtype="bool"), pt.vector("yb", dtype="bool"), pt.vector("ib", dtype="uint8")
    check([xb, yb, ib], [pt.inc_subtensor(xb[ib], yb), pt.set_subtensor(xb[ib], yb)],
          [rng.random(7) < 0.3, rng.random(9) < 0.5, rng.integers(0, 7, size=9).astype("uint8")])

    x3, y3, i3 = pt.tensor3("x3", dtype="float32"), pt.tensor3("y3", dtype="float32"), pt.vector("i3", dtype="uint8")
    check([x3, y3, i3], [pt.inc_subtensor(x3[i3], y3), pt.set_subtensor(x3[i3], y3)],
          [values((4, 3, 2), "float32"), values((6, 3, 2), "float32", 1), np.array([3, 0, 3, 1, 3, 2], dtype="uint8")])

    xm, yi, yc, im = pt.dmatrix("xm"), pt.matrix("yi", dtype="int32"), pt.tensor("yc", shape=(None, 1)), pt.lvector("im")
    outs = [pt.inc_subtensor(xm[im], yi), pt.inc_subtensor(xm[im], yc), pt.set_subtensor(xm[im], yc)]
    f = check([xm, yi, yc, im], outs, [values((4, 3), "float64"), values((5, 3), "int32", 2), values((5, 1), "float64", 3), np.array([-1, 0, -1, 2, 0])])
    assert "AdvancedIncSubtensor1" in op_types(f)
    ref = pytensor.function([xm, yi, yc, im], outs, mode=C)
    for case in [[values((0, 3), "float64"), values((0, 3), "int32"), values((0, 1), "float64"), np.array([], dtype="int64")],
                 [values((3, 0), "float64"), values((2, 0), "int32"), values((2, 1), "float64"), np.array([2, -3])]]:
        for g, w in zip(f(*case), ref(*case)):
            assert_same(g, w)
    # Out of bounds, against the py linker: the C backend ignores an index out of bounds
    # where the updates are cast or broadcast first (x[[1, -5]] of 4 rows) and crashes
    # writing row 0 of a row-less x (PyTensor 3.0.7).
    py = pytensor.function([xm, yi, yc, im], outs, mode=Mode(linker="py", optimizer="fast_run"))
    for bad in [[values((0, 3), "float64"), values((1, 3), "int32"), values((1, 1), "float64"), np.array([0])],
                [values((4, 3), "float64"), values((2, 3), "int32"), values((2, 1), "float64"), np.array([1, -5])]]:
        with pytest.raises(IndexError, match="out of bounds"):
            f(*bad)
        with pytest.raises((IndexError, ValueError)):
            py(*bad)

    xs, ys, js = pt.tensor("xs", shape=(6,)), pt.dvector("ys"), pt.lvector("js")
    check([xs, ys, js], [pt.inc_subtensor(xs[js], ys)], [values((6,), "float64"), values((3,), "float64", 4), np.array([5, 5, -6])])
    xt, xp, yt, yp = pt.tensor("xt", shape=(4, 3)), pt.tensor("xp", shape=(4, None)), pt.dmatrix("yt"), pt.tensor("yp", shape=(None, 2))
    check([xt, xp, yt, yp, js], [pt.inc_subtensor(xt[js], yt), pt.set_subtensor(xt[js], yt), pt.inc_subtensor(xp[js], yp)],
          [values((4, 3), "float64"), values((4, 2), "float64", 5), values((3, 3), "float64", 6), values((3, 2), "float64", 7), np.array([0, 3, -4])])


def test_one_function_serves_several_shapes():
    x = pt.matrix("x")
    idx = pt.vector("idx", dtype="int64")
    outputs = [x[1:, ::-1], x[idx], pt.inc_subtensor(x[idx], 1.0), pt.set_subtensor(x[1:], 0.0)]
    f, ref = compile_both([x, idx], outputs)
    import pytensor_mlir

    before = pytensor_mlir.compiler_invocations()
    for shape, ids in [((3, 2), [0, 2]), ((6, 5), [5, -6, 1]), ((1, 0), [0])]:
        v = values(shape, "float64")
        for g, w in zip(f(v, np.array(ids)), ref(v, np.array(ids))):
            assert_same(g, w)
    assert pytensor_mlir.compiler_invocations() == before


def test_gradient_of_subtensor():
    x = pt.matrix("x")
    i = pt.scalar("i", dtype="int64")
    cost = (x[1:, ::-1] ** 2).sum() + x[i, 1:3].sum() * x[0, 0] + pt.exp(x[::2]).sum()
    f, _ = run_both([x, i], [cost, pytensor.grad(cost, x)], [[values((4, 3), "float64") / 10, k] for k in [0, -2]])
    assert "IncSubtensor" in op_types(f)


def test_gradient_of_advanced_subtensor1():
    x = pt.matrix("x")
    idx = pt.vector("idx", dtype="int64")
    cost = (x[idx] ** 2 * pt.arange(3)).sum()
    f, _ = run_both([x, idx], [cost, pytensor.grad(cost, x)], [[values((4, 3), "float64") / 10, np.array([0, 3, 0, -1])]])
    assert "AdvancedIncSubtensor1" in op_types(f)


def test_gather_of_a_gather():
    # Compiles since the gather reads without a branch: with an scf.if around its read,
    # IREE 3.13 failed on a gather reading it ("memref.alloca op stack allocation size
    # overflows 64 bits").
    x = pt.matrix("x")
    j = pt.vector("j", dtype="int32")
    f, ref = compile_both([x, j], [x[j][:, 0], x[j][::-1]])
    v, ids = values((3, 4), "float64"), np.array([0, 2], dtype="int32")
    for g, w in zip(f(v, ids), ref(v, ids)):
        assert_same(g, w)


def test_run_time_dims_that_must_match_are_refused():
    # A reshape to a shape vector given at run time has dims no check before the call can
    # know; adding it to y would need them equal to y's, so the graph is refused.
    x = pt.matrix("x")
    y = pt.vector("y")
    s = pt.vector("s", dtype="int64")
    with pytest.raises(NotImplementedError, match="computed from run-time values"):
        pytensor.function([x, y, s], x.reshape(s, ndim=1) + y, mode=MLIR)


def test_unsigned_indices():
    x = pt.vector("x")
    u = pt.vector("u", dtype="uint64")
    b = pt.vector("b", dtype="uint8")
    # 2**64 - 1 is read as intp -1 by numpy and the C backend, so it wraps.
    good = [values((5,), "float64"), np.array([4, 0, 2**64 - 1], dtype="uint64"), np.array([1, 4], dtype="uint8")]
    f, ref = run_both([x, u, b], [x[u], x[b]], [good])
    for bad_u, bad_b in [([0], [255]), ([5], [0]), ([2**63], [0])]:
        got, _ = raises_like(f, ref, [values((5,), "float64"), np.array(bad_u, dtype="uint64"), np.array(bad_b, dtype="uint8")])
        assert isinstance(got, IndexError)


@pytest.mark.parametrize(
    "build",
    [
        lambda x, i, v: pt.inc_subtensor(x[i], v),
        lambda x, i, v: pt.set_subtensor(x[i], v),
        lambda x, i, v: pt.inc_subtensor(x[1:4], v),
        lambda x, i, v: pt.set_subtensor(x[::2][:3], v),
    ],
    ids=["inc_advanced", "set_advanced", "inc_basic", "set_basic"],
)
def test_inputs_passed_in_place_are_never_written(build):
    # A 64-byte aligned array (a compiled function's own result) reaches IREE without a
    # copy; IREE 3.13 updates an operation's destination in place where it is a function
    # argument (iree-org/iree#16168), so a scatter onto x must not see x's own bytes.
    x, v = pt.vector("x"), pt.vector("v")
    i = pt.lvector("i")
    make = pytensor.function([x], x * 1.5, mode=MLIR)
    xv = make(np.arange(8.0))
    assert xv.ctypes.data % 64 == 0
    kept = xv.copy()
    f, ref = compile_both([x, i, v], build(x, i, v), on_unused_input="ignore")
    args = [np.array([1, 6, 6]), np.array([10.0, 20.0, 30.0])]
    assert_same(f(xv, *args), ref(kept, *args))
    assert_same(xv, kept)


# ---- indexing by several integer arrays (AdvancedSubtensor, AdvancedIncSubtensor) ----

RNG = np.random.default_rng(11)


@pytest.mark.parametrize(
    "build, shape, index_values",
    [
        (lambda x, i, j: x[i, j], (5, 4), ([0, 4, -1, 2, 2], [3, 0, 1, -4, 3])),
        (lambda x, i, j: x[i[:, None], j], (5, 4), ([0, 4, -1], [3, 0, 1, -4])),  # broadcast to 3x4
        (lambda x, i, j: x[i, j], (5, 4, 3), ([1, 1, 0], [2, 3, 0])),  # a trailing full axis
        (lambda x, i, j: x[i, :, j], (5, 4, 3), ([1, 4, 0], [2, 0, -1])),  # not adjacent: B first
        (lambda x, i, j: x[:, i, j], (2, 5, 4), ([1, 4, 0, 0], [2, 0, -1, 3])),
        (lambda x, i, j: x[i, 1], (5, 4), ([0, 4, -2], [0])),  # a scalar index among arrays
        (lambda x, i, j: x[i, j], (0, 4), ([], [])),  # empty
    ],
    ids=["pairs", "broadcast", "trailing", "apart", "inner", "scalar", "empty"],
)
@pytest.mark.parametrize("index_dtype", ["int64", "int32", "uint8"])
def test_advanced_subtensor_like_c(build, shape, index_values, index_dtype):
    x = pt.tensor("x", shape=(None,) * len(shape))
    i, j = pt.vector("i", dtype=index_dtype), pt.vector("j", dtype=index_dtype)
    out = build(x, i, j)
    iv, jv = (np.array(v).astype("int64") for v in index_values)
    if index_dtype == "uint8":
        iv, jv = iv % np.array(shape[:2]).min(initial=1), jv % 2
    check([x, i, j], out, [RNG.normal(size=shape), iv.astype(index_dtype), jv.astype(index_dtype)], on_unused_input="ignore")


def test_advanced_subtensor_out_of_bounds_and_broadcast_mismatch_raise_index_error():
    x = pt.matrix("x")
    i, j = pt.lvector("i"), pt.lvector("j")
    f, ref = compile_both([x, i, j], x[i, j])
    xv = RNG.normal(size=(3, 4))
    for iv, jv in [([0, 3], [0, 0]), ([0, 1], [0, -5]), ([0, 1, 2], [0, 1])]:
        got, want = raises_like(f, ref, [xv, np.array(iv), np.array(jv)])
        assert isinstance(got, IndexError)


@pytest.mark.parametrize("shape", [(5, 4), (5, 4, 3)])
def test_advanced_inc_subtensor_accumulates_repeated_positions_like_c(shape):
    x = pt.tensor("x", shape=(None,) * len(shape))
    y = pt.tensor("y", shape=(None,) * (len(shape) - 1))
    i, j = pt.lvector("i"), pt.lvector("j")
    iv, jv = np.array([0, 4, 4, -1, 2, 4]), np.array([3, 0, 0, 1, -4, 0])
    yv = RNG.normal(size=(6,) + shape[2:])
    check([x, y, i, j], pt.inc_subtensor(x[i, j], y), [RNG.normal(size=shape), yv, iv, jv])
    # y broadcast along the indices (one rank less)
    check([x, y, i, j], pt.inc_subtensor(x[i, j], y[0]), [RNG.normal(size=shape), yv, iv, jv])
    f, ref = compile_both([x, y, i, j], pt.inc_subtensor(x[i, j], y))
    raises_like(f, ref, [RNG.normal(size=shape), yv, iv, np.array([3, 0, 0, 1, -4, 4])])


def test_gradient_through_advanced_indexing_like_c():
    x = pt.matrix("x")
    i, j = pt.lvector("i"), pt.lvector("j")
    cost = (pt.exp(x[i, j]) * pt.arange(5)).sum()
    check([x, i, j], pytensor.grad(cost, x), [RNG.normal(size=(4, 3)), np.array([0, 3, 3, 1, 0]), np.array([2, 0, 0, 1, 2])])


def test_advanced_inc_and_set_through_arrays_and_slices_like_c():
    # One graph: set and inc through arrays anywhere among full and bounded slices,
    # repeated positions (inc accumulates; set leaves the last write, as numpy), values
    # broadcast, bounded (constant, symbolic, negative-step) slices in gathers.
    x, y = pt.tensor3("x"), pt.matrix("y")
    i, j = pt.lvector("i"), pt.lvector("j")
    s = pt.lscalar("s")
    outs = [
        pt.set_subtensor(x[i, j], y),
        pt.set_subtensor(x[i, j], 7.0),
        pt.inc_subtensor(x[i, :, j], y[:, 0][:, None]),
        pt.set_subtensor(x[i, :, j], y[:, 0][:, None]),
        pt.set_subtensor(x[:, i, j], y[:, 0]),
        pt.inc_subtensor(x[:, i, j], y[:, 1]),
        pt.inc_subtensor(x[i[:, None], j[:3]], y[:, 0][:, None, None]),
        pt.set_subtensor(x[i, 1:4:2], y[:, :2, None]),
        pt.inc_subtensor(x[i, s:], y[0, 0]),
        pt.inc_subtensor(x[i, ::-2, j], y[:, 1][:, None]),
        x[i, 1:4:2],
        x[1:, i],
        x[::-1, i, ::2],
        x[i, s:, j],
        x[s::-1, i, j],
    ]
    f, ref = compile_both([x, y, i, j, s], outs)
    types = op_types(f)
    assert {"AdvancedIncSubtensor", "AdvancedSubtensor"} <= types, types
    iv, jv = np.array([0, 4, 4, -1, 2, 4]), np.array([2, 0, 0, 1, -3, 0])
    for xs, sv in [((5, 5, 3), 1), ((5, 5, 3), -2), ((5, 7, 3), 9)]:
        args = [RNG.normal(size=xs), RNG.normal(size=(6, 3)), iv, jv, np.array(sv)]
        assert_all_same([f"output {k}" for k in range(len(outs))], f(*args), ref(*args))


def test_advanced_inc_and_set_bad_input_raise_like_c():
    x, y = pt.tensor3("x"), pt.vector("y")
    i, j = pt.lvector("i"), pt.lvector("j")
    s = pt.lscalar("s")
    xv, yv = RNG.normal(size=(5, 4, 3)), RNG.normal(size=3)
    for out, bad, kind in [
        (pt.set_subtensor(x[i, j], y), [np.array([0, 5, 1]), np.array([0, 0, 0]), np.array(1)], IndexError),
        (pt.inc_subtensor(x[:, i, j], y), [np.array([0, 1, 1]), np.array([0, -4, 0]), np.array(1)], IndexError),
        (pt.set_subtensor(x[i, :, j], y), [np.array([0, 1]), np.array([0, 1]), np.array(1)], ValueError),
        (x[i, ::s], [np.array([0, 1]), np.array([0, 1]), np.array(0)], ValueError),
    ]:
        f, ref = compile_both([x, y, i, j, s], out, on_unused_input="ignore")
        got, _ = raises_like(f, ref, [xv, yv, *bad])
        assert isinstance(got, kind), (out, got)
    # An empty indexed axis: every index is out of bounds, nothing is written.
    f, ref = compile_both([x, y, i, j], pt.set_subtensor(x[i, j], y[0]), on_unused_input="ignore")
    assert_same(f(np.zeros((0, 4, 3)), yv, np.array([], "int64"), np.array([], "int64")), ref(np.zeros((0, 4, 3)), yv, np.array([], "int64"), np.array([], "int64")))
    raises_like(f, ref, [np.zeros((0, 4, 3)), yv, np.array([0]), np.array([0])])


def test_advanced_inc_and_set_broadcast_a_run_time_one_like_c():
    # numpy, which the C backend calls for AdvancedIncSubtensor, broadcasts a value's dim
    # that is 1 at run time though PyTensor types it as not broadcastable (its
    # AdvancedIncSubtensor1 refuses that with ValueError, and so does ours); other lengths
    # that differ from the region's raise ValueError.
    x, y, w, v = pt.matrix("x"), pt.matrix("y"), pt.matrix("w"), pt.vector("v")
    i, j = pt.lvector("i"), pt.lvector("j")
    outs = [pt.inc_subtensor(x[i, j], v), pt.set_subtensor(x[i, j], v), pt.inc_subtensor(x[i, 1:], y), pt.set_subtensor(x[1:, i], w)]
    f, ref = compile_both([x, y, w, v, i, j], outs)
    assert "AdvancedIncSubtensor" in op_types(f)
    xv, iv, jv = RNG.normal(size=(4, 3)), np.array([0, 2, 2, -1]), np.array([2, 0, 0, 1])
    none = np.array([], "int64")
    for ys, ws, vs, ijv in [((1, 1), (1, 4), 1, (iv, jv)), ((4, 1), (3, 1), 4, (iv, jv)), ((1, 2), (1, 1), 1, (iv, jv)), ((4, 2), (3, 4), 4, (iv, jv)), ((1, 1), (1, 1), 1, (none, none))]:
        args = [xv, RNG.normal(size=ys), RNG.normal(size=ws), RNG.normal(size=vs), *ijv]
        assert_all_same([f"output {k} with {ys}, {ws}, {vs}" for k in range(len(outs))], f(*args), ref(*args))
    for ys, ws, vs in [((2, 2), (3, 4), 4), ((4, 2), (3, 2), 4), ((4, 2), (3, 4), 3)]:
        args = [xv, RNG.normal(size=ys), RNG.normal(size=ws), RNG.normal(size=vs), iv, jv]
        got, _ = raises_like(f, ref, args)
        assert isinstance(got, ValueError), (ys, ws, vs, got)


def test_index_arrays_of_run_time_length_one_broadcast_like_c():
    # numpy broadcasts an index array whose length is 1 at run time against the others
    # (x[[1], [0, 2, 3]]), though PyTensor types no dim of them broadcastable; in gathers,
    # increments, assignments and the gradient. Lengths that do not broadcast raise
    # IndexError before the call, as numpy and the C backend do.
    x, x3, v = pt.matrix("x"), pt.tensor3("x3"), pt.vector("v")
    i, j = pt.lvector("i"), pt.lvector("j")
    outs = [
        x[i, j],
        x[i[:, None], j],
        x3[i, :, j],
        x3[i[:, None], 1:, j],
        pt.inc_subtensor(x[i, j], v),
        pt.set_subtensor(x[i, j], v),
        pt.inc_subtensor(x3[i, :, j], v[:, None]),
        pytensor.grad((pt.exp(x[i, j]) * x[i, j] ** 2).sum(), x),
    ]
    f, ref = compile_both([x, x3, v, i, j], outs)
    assert {"AdvancedSubtensor", "AdvancedIncSubtensor"} <= op_types(f), op_types(f)
    xv, x3v = RNG.normal(size=(4, 5)), RNG.normal(size=(4, 3, 5))
    for iv, jv in [([1], [0, 2, 3]), ([0, -1, 2, 2], [4]), ([3], [-5]), ([1], []), ([], [2]), ([2, 0, 1], [1, 1, 3])]:
        n = max(len(iv), len(jv)) if min(len(iv), len(jv)) else 0
        args = [xv, x3v, RNG.normal(size=n), np.array(iv, "int64"), np.array(jv, "int64")]
        assert_all_same([f"output {k} with {iv}, {jv}" for k in range(len(outs))], f(*args), ref(*args))
    # A value of length 1 broadcasts too; other lengths raise ValueError.
    args = [xv, x3v, RNG.normal(size=1), np.array([1], "int64"), np.array([0, 2, 3], "int64")]
    assert_all_same([f"output {k}, a value of length 1" for k in range(len(outs))], f(*args), ref(*args))
    got, _ = raises_like(f, ref, [xv, x3v, RNG.normal(size=2), np.array([1], "int64"), np.array([0, 2, 3], "int64")])
    assert isinstance(got, ValueError), got
    for iv, jv in [([0, 1], [0, 2, 3]), ([0, 1, 2], []), ([5], [0, 1])]:
        got, _ = raises_like(f, ref, [xv, x3v, RNG.normal(size=1), np.array(iv, "int64"), np.array(jv, "int64")])
        assert isinstance(got, IndexError), (iv, jv, got)


def test_gradient_through_set_and_sliced_advanced_indexing_like_c():
    x, y = pt.matrix("x"), pt.vector("y")
    i, j = pt.lvector("i"), pt.lvector("j")
    z = pt.set_subtensor(x[i, j], pt.exp(y))
    cost = (z**2).sum() + (pt.sin(x[i, 1:3]) * pt.arange(2)).sum()
    check(
        [x, y, i, j],
        pytensor.grad(cost, [x, y]),
        [RNG.normal(size=(4, 3)), RNG.normal(size=5), np.array([0, 3, 3, 1, 0]), np.array([2, 0, 0, 1, 2])],
    )


@pytest.mark.parametrize(
    "build",
    [
        # The update's length must equal the mask's count, known only in the kernel.
        lambda x, i, j: pt.inc_subtensor(x[x > 0], pt.cast(i, "float64")),
    ],
    ids=["update_through_a_boolean_mask"],
)
def test_advanced_indexing_we_cannot_do_is_refused_by_name(build):
    x = pt.matrix("x")
    i, j = pt.lvector("i"), pt.lvector("j")
    with pytest.raises(NotImplementedError, match="Advanced"):
        pytensor.function([x, i, j], build(x, i, j), mode=MLIR, on_unused_input="ignore")


def test_permute_row_elements_like_c():
    # Rows of x reordered by the rows of y (broadcast), or by their inverse (a scatter).
    from pytensor.tensor.basic import permute_row_elements as permute

    x, y, v = pt.matrix("x"), pt.lmatrix("y"), pt.lvector("v")
    outs = [permute(x, v), permute(x, y), permute(x, v, inverse=True), permute(x, y, inverse=True), permute(x[0], y)]
    cost = (permute(x, y) * x).sum() + (permute(x, v, inverse=True) ** 2).sum()
    outs.append(pytensor.grad(cost, x))
    f, ref = compile_both([x, y, v], outs)
    assert "PermuteRowElements" in op_types(f)
    for shape in [(3, 4), (2, 1), (2, 0)]:
        xv = RNG.normal(size=shape)
        yv = np.stack([RNG.permutation(shape[1]) for _ in range(shape[0])]).reshape(shape)
        vv = RNG.permutation(shape[1]) - shape[1] * (np.arange(shape[1]) % 2)  # some negative
        assert_all_same([f"output {k}" for k in range(len(outs))], f(xv, yv, vv), ref(xv, yv, vv))
    xv, yv = RNG.normal(size=(3, 4)), np.zeros((3, 4), "int64")
    for vv in [[0, 1, 2, 4], [0, -5, 1, 2]]:
        got, _ = raises_like(f, ref, [xv, yv, np.array(vv)])
        assert isinstance(got, IndexError)
    got, _ = raises_like(f, ref, [xv, np.zeros((2, 4), "int64"), np.arange(4)])
    assert isinstance(got, ValueError)


def test_gather_check_sees_every_position_of_long_index_vectors():
    # The bounds check is folded into the gather (a flag per index, ORed after): one bad
    # index anywhere in a vector longer than any tile (first, middle, the ragged tail)
    # raises, in either of two gathers of one function, as the C backend does.
    x = pt.matrix("x", dtype="float64")
    v = pt.tensor("v", shape=(5,), dtype="float64")
    i = pt.vector("i", dtype="int64")
    j = pt.vector("j", dtype="int32")
    f, ref = compile_both([x, v, i, j], [x[i], v[j]])
    n = 1003
    rng = np.random.default_rng(1)
    good_i = rng.integers(-4, 4, n)
    good_j = rng.integers(-5, 5, n).astype("int32")
    args = [values((4, 2), "float64"), np.array([np.nan, -0.0, np.inf, -np.inf, 5e-324]), good_i, good_j]
    for g, w in zip(f(*args), ref(*args)):
        assert_same(g, w)
    for pos in [0, 517, n - 1]:
        for bad in [4, -5, np.iinfo("int64").min]:
            bi = good_i.copy()
            bi[pos] = bad
            got, _ = raises_like(f, ref, [args[0], args[1], bi, good_j])
            assert isinstance(got, IndexError)
        for bad in [5, -6, np.iinfo("int32").max]:
            bj = good_j.copy()
            bj[pos] = bad
            got, _ = raises_like(f, ref, [args[0], args[1], good_i, bj])
            assert isinstance(got, IndexError)


def test_scatter_check_sees_every_position_of_long_index_vectors():
    # The scatters check their indices in the pass that wraps them (a flag per index,
    # ORed after): one bad index anywhere in a long vector raises for the increment and
    # the assignment, and so does any index into an x without rows, as the C backend does.
    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float64")
    i = pt.vector("i", dtype="int64")
    j = pt.vector("j", dtype="int32")
    f, ref = compile_both([x, y, i, j], [pt.inc_subtensor(x[i], y), pt.set_subtensor(x[j], y)])
    n = 1003
    rng = np.random.default_rng(2)
    good_i = rng.integers(-6, 6, n)
    good_j = rng.integers(-6, 6, n).astype("int32")
    xv = np.array([np.nan, -0.0, np.inf, -np.inf, 5e-324, 1.0])
    yv = values((n,), "float64")
    for g, w in zip(f(xv, yv, good_i, good_j), ref(xv, yv, good_i, good_j)):
        assert_same(g, w)
    for pos in [0, 517, n - 1]:
        for bad in [6, -7, np.iinfo("int64").min]:
            bi = good_i.copy()
            bi[pos] = bad
            got, _ = raises_like(f, ref, [xv, yv, bi, good_j])
            assert isinstance(got, IndexError)
        for bad in [6, -7, np.iinfo("int32").max]:
            bj = good_j.copy()
            bj[pos] = bad
            got, _ = raises_like(f, ref, [xv, yv, good_i, bj])
            assert isinstance(got, IndexError)
    for bi, bj in [([0], [0]), ([-1], [0])]:
        got, _ = raises_like(f, ref, [np.array([]), yv[:1], np.array(bi), np.array(bj, dtype="int32")])
        assert isinstance(got, IndexError)
    g, gref = compile_both([x, y, i], pt.inc_subtensor(x[i], y))
    got, _ = raises_like(g, gref, [np.array([]), yv[:2], np.array([0, -1])])
    assert isinstance(got, IndexError)
    empty = [np.array([]), np.array([]), np.array([], dtype="int64"), np.array([], dtype="int32")]
    for g, w in zip(f(*empty), ref(*empty)):
        assert_same(g, w)


@pytest.mark.parametrize("index_dtype", ["int8", "uint16", "int32", "int64"])
def test_increments_into_a_slice_of_an_input(index_dtype):
    """`inc_subtensor(m[1:][i], y)` and friends scatter into a view of an input: IREE 3.13
    failed to compile that ("stack allocation size overflows 64 bits") for every index
    dtype, one and several index arrays, inc and set; compared with the C backend,
    repeated indices included."""
    m = pt.dmatrix("m")
    i = pt.vector("i", dtype=index_dtype)
    j = pt.vector("j", dtype=index_dtype)
    s = pt.dscalar("s")
    outs = [
        pt.inc_subtensor(m[1:][i], s),
        pt.set_subtensor(m[1:][i], s),
        pt.inc_subtensor(m[::2][i], m[0]),
        pt.inc_subtensor(m[1:][i, j], s),
        pt.set_subtensor(m[:, 1:][i, j], s),
    ]
    rng = np.random.default_rng(21)
    values = [rng.normal(size=(5, 3)), np.array([0, 2, 2, 1], dtype=index_dtype), np.array([1, 0, 1, 1], dtype=index_dtype), 2.5]
    check([m, i, j, s], outs, values)


def test_slice_to_another_inputs_length():
    """`x[:y.shape[0]]` (as a Scan's gradient slices its buffers) has the lesser of the two
    lengths, a dim checked before the call: it meets y elementwise where x is long enough,
    and raises ValueError as the C backend does where it is not."""
    x = pt.dvector("x")
    y = pt.dvector("y")
    out = x[: y.shape[0]] * y
    f, ref = compile_both([x, y], out)
    for n, m in [(5, 3), (4, 4), (6, 0)]:
        values = [np.arange(n, dtype="float64") - 1.5, np.linspace(-1, 2, m)]
        assert_same(f(*values), ref(*values))
    got, want = raises_like(f, ref, [np.arange(2.0), np.ones(3)])
    assert isinstance(got, ValueError)
