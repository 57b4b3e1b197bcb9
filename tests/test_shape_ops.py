"""Shape ops against the C backend: Shape, Shape_i, SpecifyShape (constant and run-time
dims, mismatches raising AssertionError), MakeVector, TensorFromScalar/ScalarFromTensor,
Alloc, AllocEmpty, Reshape, Join, Split (bad sizes raising ValueError), and gradients
through them."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from conftest import MLIR, assert_same, compile_both, raises_like

from pytensor.tensor.basic import MakeVector, ScalarFromTensor, TensorFromScalar
from pytensor.tensor.shape import Shape_i


def run_both(inputs, outputs, cases, **kwargs):
    f, ref = compile_both(inputs, outputs, **kwargs)
    for values in cases:
        for i, (g, w) in enumerate(zip(f(*values), ref(*values))):
            assert_same(g, w, err_msg=f"output {i} on {[np.shape(v) for v in values]}")
    return f


def op_types(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}


def test_shape_and_shape_i():
    x = pt.tensor3("x")
    s = pt.scalar("s")
    # Rewrites would fold a bare shape into Shape_i; keep both Ops as outputs.
    outputs = [pt.shape(x), Shape_i(0)(x), Shape_i(2)(x), pt.shape(s), x.shape[1] * 2 + x.shape[2]]
    values = [[np.zeros((2, 3, 4)), np.array(1.0)], [np.zeros((0, 1, 5)), np.array(2.0)]]
    f = run_both([x, s], outputs, values)
    assert "Shape_i" in op_types(f)
    # The rewrites fold a bare Shape into MakeVector of Shape_i; without them it stays.
    mode = MLIR.excluding("fast_run").including("minimum_compile")
    f = run_both([x, s], outputs[:1] + outputs[3:4], values, mode=mode)
    assert "Shape" in op_types(f)


def test_make_vector_of_mixed_dtypes():
    a = pt.scalar("a", dtype="int32")
    b = pt.scalar("b", dtype="float64")
    c = pt.scalar("c", dtype="bool")
    outputs = [
        MakeVector("float64")(a, b),
        MakeVector("int64")(a, a),
        MakeVector("int32")(c, a),
        MakeVector("bool")(c, c),
        pt.stack([b, b * 2]),
    ]
    f = run_both([a, b, c], outputs, [[np.int32(3), 2.5, np.bool_(True)], [np.int32(-7), -0.0, np.bool_(False)]])
    assert "MakeVector" in op_types(f)


def test_tensor_from_scalar_and_back():
    x = pt.scalar("x")
    i = pt.scalar("i", dtype="int16")
    # Without rewrites, so that the pair is not folded away.
    outputs = [TensorFromScalar()(ScalarFromTensor()(x + 1)) * 3, TensorFromScalar()(ScalarFromTensor()(i))]
    mode = MLIR.excluding("fast_run").including("minimum_compile")
    f = pytensor.function([x, i], outputs, mode=mode)
    assert {"TensorFromScalar", "ScalarFromTensor"} <= op_types(f)
    got = f(np.array(1.5), np.int16(-3))
    assert_same(got[0], np.array(7.5))
    assert_same(got[1], np.array(-3, dtype="int16"))


def test_specify_shape_with_constant_dims():
    x = pt.matrix("x")
    y = pt.specify_shape(x, (2, 3))
    f, ref = compile_both([x], [y * 2, y.sum(axis=0)])
    v = np.arange(6.0).reshape(2, 3)
    for g, w in zip(f(v), ref(v)):
        assert_same(g, w)
    assert "tensor<2x3xf64>" in pytensor_mlir_get_mlir(f)
    for bad in [np.zeros((3, 2)), np.zeros((2, 4)), np.zeros((0, 3))]:
        got, want = raises_like(f, ref, [bad])
        assert isinstance(got, AssertionError)
        assert "SpecifyShape" in str(got)


def test_specify_shape_with_run_time_dims():
    x = pt.matrix("x")
    n = pt.scalar("n", dtype="int64")
    m = pt.scalar("m", dtype="int32")
    y = pt.specify_shape(x, (n, m))
    f, ref = compile_both([x, n, m], [y * 2])
    v = np.ones((2, 3))
    assert_same(f(v, 2, np.int32(3))[0], ref(v, 2, np.int32(3))[0])
    for args in [(v, 3, np.int32(3)), (v, 2, np.int32(4)), (v, -1, np.int32(3))]:
        got, _ = raises_like(f, ref, list(args))
        assert isinstance(got, AssertionError)


def test_specify_shape_with_free_dims():
    x = pt.tensor3("x")
    n = pt.scalar("n", dtype="int64")
    y = pt.specify_shape(x, (None, 2, n))
    f, ref = compile_both([x, n], [y + 1, y.sum(axis=1)])
    assert "SpecifyShape" in op_types(f)
    for v, k in [(np.ones((3, 2, 4)), 4), (np.ones((0, 2, 1)), 1)]:
        for g, w in zip(f(v, k), ref(v, k)):
            assert_same(g, w)
    for v, k in [(np.ones((3, 3, 4)), 4), (np.ones((3, 2, 4)), 5)]:
        got, _ = raises_like(f, ref, [v, k])
        assert isinstance(got, AssertionError)


def test_gradient_through_shape_ops():
    x = pt.matrix("x")
    y = pt.specify_shape(x, (2, 3))
    cost = (y**2).sum() * x.shape[0] + pt.stack([x.sum(), x.max()]).prod()
    run_both([x], [cost, pytensor.grad(cost, x)], [[np.arange(6.0).reshape(2, 3) / 5]])


def test_alloc():
    v = pt.vector("v")
    w = pt.vector("w", dtype="int32")
    n = pt.scalar("n", dtype="int32")
    m = pt.scalar("m", dtype="int64")
    outputs = [
        pt.alloc(v, n, v.shape[0]),  # the value's dim, named by Shape_i
        pt.alloc(v, m, 2, v.shape[0]) * 2,
        pt.alloc(np.float32(1.5), n, m),  # both dims from run-time values
        pt.alloc(w, n, m),  # w's dim must equal m: checked in the kernel
        pt.alloc(w[0], 3),  # a static shape
    ]
    f = run_both(
        [v, w, n, m],
        outputs,
        [
            [np.arange(3.0), np.arange(4, dtype="int32"), np.int32(2), 4],
            [np.zeros(0), np.array([7, 8], dtype="int32"), np.int32(0), 2],
            [np.arange(1.0), np.array([-1], dtype="int32"), np.int32(5), 1],
        ],
    )
    assert "Alloc" in op_types(f)
    # One compiled function for every shape; a value dim that differs from the shape.
    got, _ = raises_like(f, f_c(f, [v, w, n, m], outputs), [np.arange(3.0), np.arange(4, dtype="int32"), np.int32(2), 3])
    assert isinstance(got, ValueError)


def f_c(_f, inputs, outputs):
    from conftest import C

    return pytensor.function(inputs, outputs, mode=C)


def test_alloc_negative_run_time_dim():
    # The C backend raises MemoryError ("alloc failed"); numpy's ValueError is the one
    # given here, as PyTensor's Python implementation (the py linker) gives it.
    n = pt.scalar("n", dtype="int64")
    py = pytensor.compile.mode.Mode(linker="py", optimizer="fast_run")
    f, ref = compile_both([n], [pt.alloc(np.float64(0.0), n, 2)], reference=py)
    assert_same(f(3)[0], ref(3)[0])
    got, _ = raises_like(f, ref, [-1])
    assert isinstance(got, ValueError)


def test_alloc_empty():
    from pytensor.tensor.basic import AllocEmpty

    n = pt.scalar("n", dtype="int64")
    outs = [AllocEmpty("float32")(n, 3), AllocEmpty("int16")(n)]
    f = pytensor.function([n], outs, mode=MLIR)
    for k in [0, 4]:
        a, b = f(k)
        assert a.shape == (k, 3) and a.dtype == np.float32
        assert b.shape == (k,) and b.dtype == np.int16


def test_reshape():
    x = pt.tensor3("x")
    y = pt.matrix("y", dtype="int32")
    outputs = [
        x.reshape((-1,)),
        x.reshape((x.shape[0], -1)),
        x.reshape((x.shape[2], x.shape[0] * x.shape[1])),
        x.reshape((2, -1, 2)),
        y.reshape((-1, 2)) + 1,
        y.flatten(),
        x.reshape((x.shape[1], x.shape[0], x.shape[2])) + x.dimshuffle(1, 0, 2),
    ]
    f = run_both(
        [x, y],
        outputs,
        [
            [np.arange(24.0).reshape(2, 3, 4), np.arange(6, dtype="int32").reshape(3, 2)],
            [np.arange(8.0).reshape(1, 2, 4), np.arange(4, dtype="int32").reshape(1, 4)],
        ],
    )
    assert "Reshape" in op_types(f)
    # 30 elements into (2, -1, 2), then 6 int32s into (-1, 2) from 7
    for values in [
        [np.zeros((3, 5, 2)), np.zeros((3, 2), dtype="int32")],
        [np.arange(24.0).reshape(2, 3, 4), np.zeros((7, 1), dtype="int32")],
    ]:
        got, _ = raises_like(f, f_c(f, [x, y], outputs), values)
        assert isinstance(got, ValueError)


def test_reshape_to_a_run_time_shape():
    x = pt.matrix("x")
    s = pt.vector("s", dtype="int64")
    outputs = [x.reshape(s, ndim=2), pt.exp(x.reshape(s, ndim=2)).sum(axis=0)]
    f, ref = compile_both([x, s], outputs)
    v = np.arange(12.0).reshape(3, 4) / 10
    for shape in [[6, 2], [-1, 3], [12, -1], [1, 12]]:
        for g, w in zip(f(v, np.array(shape)), ref(v, np.array(shape))):
            assert_same(g, w)
    assert_same(f(np.zeros((0, 3)), np.array([0, 5]))[0], ref(np.zeros((0, 3)), np.array([0, 5]))[0])
    for shape in [[5, 2], [-1, 5], [-1, -1], [-2, -6]]:
        got, _ = raises_like(f, ref, [v, np.array(shape)])
        assert isinstance(got, ValueError)


def test_reshape_keeps_the_known_entries_of_a_run_time_shape():
    # (t.shape[0], s): the first dim stays t's, so c (of t's length) meets it with a check
    # before the call; a wrong s raises in the kernel and empties only the unknown dim.
    t, s, c = pt.tensor3("t"), pt.lscalar("s"), pt.vector("c")
    f, ref = compile_both([t, s, c], [t.reshape((t.shape[0], s)) * c[:, None], t.reshape((t.shape[0], s, 1)).sum(axis=1)])
    assert "Reshape" in op_types(f)
    v = np.arange(12.0).reshape(3, 2, 2)
    for args in [[v, np.array(4), np.arange(3.0)], [np.ones((0, 2, 2)), np.array(7), np.ones(0)], [np.ones((2, 0, 2)), np.array(0), np.ones(2)]]:
        for g, w in zip(f(*args), ref(*args)):
            assert_same(g, w)
    for args in [[v, np.array(3), np.arange(3.0)], [v, np.array(4), np.arange(2.0)]]:
        got, _ = raises_like(f, ref, args)
        assert isinstance(got, ValueError)


def test_reshape_to_0d_and_back():
    # Without rewrites, which would turn these into DimShuffles.
    x = pt.vector("x")
    mode = MLIR.excluding("fast_run").including("minimum_compile")
    f, ref = compile_both([x], [x.reshape(()), x.reshape(()).reshape((1, 1))], mode=mode)
    assert "Reshape" in op_types(f)
    for g, w in zip(f(np.array([2.5])), ref(np.array([2.5]))):
        assert_same(g, w)
    got, _ = raises_like(f, ref, [np.array([1.0, 2.0])])
    assert isinstance(got, ValueError)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_join(dtype):
    a = pt.matrix("a", dtype=dtype)
    b = pt.matrix("b", dtype=dtype)
    c = pt.matrix("c", dtype="int8")
    outputs = [pt.join(0, a, b), pt.join(1, a, b, a), pt.join(-1, a, c), pt.concatenate([a, a[1:]])]
    rng = np.random.default_rng(0)

    def m(r, k, dt=dtype):
        return (rng.normal(size=(r, k)) * 10).astype(dt)

    f = run_both([a, b, c], outputs, [[m(2, 3), m(2, 3), m(2, 1, "int8")], [m(0, 2), m(0, 2), m(0, 0, "int8")], [m(1, 0), m(1, 0), m(1, 4, "int8")]])
    assert "Join" in op_types(f)
    for values in [[m(2, 3), m(2, 4), m(2, 1, "int8")], [m(2, 3), m(3, 3), m(2, 1, "int8")], [m(2, 3), m(2, 3), m(3, 1, "int8")]]:
        got, _ = raises_like(f, f_c(f, [a, b, c], outputs), values)
        assert isinstance(got, ValueError)


def test_split():
    x = pt.matrix("x")
    s = pt.vector("s", dtype="int32")
    n = pt.scalar("n", dtype="int64")
    outputs = [
        *pt.split(x, s, n_splits=3, axis=1),  # run-time sizes
        *pt.split(x, [1, n], n_splits=2, axis=0),  # one constant, one run-time
        *pt.split(x, [x.shape[0] - 1, 1], n_splits=2, axis=0),
    ]
    f = run_both(
        [x, s, n],
        outputs,
        [
            [np.arange(12.0).reshape(3, 4), np.array([1, 0, 3], dtype="int32"), 2],
            [np.arange(5.0).reshape(1, 5), np.array([2, 2, 1], dtype="int32"), 0],
        ],
    )
    assert "Split" in op_types(f)
    ref = f_c(f, [x, s, n], outputs)
    v = np.arange(12.0).reshape(3, 4)
    for values in [[v, np.array([1, 1, 1], dtype="int32"), 2], [v, np.array([5, -1, 0], dtype="int32"), 2], [v, np.array([1, 1, 2], dtype="int32"), 3]]:
        got, _ = raises_like(f, ref, values)
        assert isinstance(got, ValueError)


def test_gradients_through_construction():
    x = pt.matrix("x")
    v = pt.vector("v")
    j = pt.join(0, x, x * 2)
    a, b = pt.split(v, [2, 2], n_splits=2)
    cost = (j**2).sum() + (pt.alloc(v, 3, v.shape[0]) * x[0, 0]).sum() + (x.reshape((-1,)) ** 3).sum() + (a.sum() * b).sum()
    f = run_both([x, v], [cost, *pytensor.grad(cost, [x, v])], [[np.arange(6.0).reshape(2, 3) / 5, np.arange(4.0) / 3]])
    assert {"Join", "Reshape"} <= op_types(f)


def pytensor_mlir_get_mlir(f):
    import pytensor_mlir

    return pytensor_mlir.get_mlir(f)
