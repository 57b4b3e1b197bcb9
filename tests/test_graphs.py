"""Whole functions: dynamic shapes, PyTensor's broadcasting rule, ranks, several and odd
outputs, DimShuffle and Dot, unsupported Ops, bad input."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from conftest import MLIR, assert_same, check, compile_both, raises_like

from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.scalar.basic import UnaryScalarOp, upgrade_to_float
from pytensor.tensor.elemwise import Elemwise

import pytensor_mlir


def test_one_compile_serves_every_length():
    x = pt.vector("x")
    y = pt.vector("y")
    before = pytensor_mlir.compiler_invocations()
    f, ref = compile_both([x, y], pt.exp(x) * y + 1)
    assert pytensor_mlir.compiler_invocations() == before + 1
    for n in (3, 5, 0):
        a, b = np.linspace(-1, 1, n), np.linspace(2, 3, n)
        assert_same(f(a, b), ref(a, b))
    assert pytensor_mlir.compiler_invocations() == before + 1


def test_static_dims_are_kept_static():
    x = pt.tensor("x", shape=(3, None))
    f = check([x], x * 2, [np.ones((3, 4))])
    assert "tensor<3x?xf64>" in pytensor_mlir.get_mlir(f)


@pytest.mark.parametrize("rank", [0, 1, 2, 3, 4])
def test_ranks(rank):
    x = pt.tensor("x", shape=(None,) * rank)
    y = pt.tensor("y", shape=(None,) * rank)
    shape = (2, 3, 1, 4)[:rank]
    rng = np.random.default_rng(rank)
    check([x, y], [x * y - x, pt.maximum(x, y)], [rng.normal(size=shape), rng.normal(size=shape)])


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_empty_arrays(shape):
    x = pt.tensor("x", shape=(None,) * len(shape))
    check([x], [x + 1, pt.exp(x)], [np.zeros(shape)])


def test_static_size_one_dims_broadcast():
    m = pt.matrix("m")
    row = pt.tensor("row", shape=(1, None))
    col = pt.tensor("col", shape=(None, 1))
    rng = np.random.default_rng(0)
    check([m, row, col], m + row * col, [rng.normal(size=(3, 4)), rng.normal(size=(1, 4)), rng.normal(size=(3, 1))])
    # A vector broadcasts against a matrix through DimShuffle's new axis.
    v = pt.vector("v")
    w = pt.vector("w")
    check([m, v, w], [m * v, m.T * w], [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=3)])


def test_runtime_shapes_that_do_not_fit_raise_value_error():
    m = pt.matrix("m")
    v = pt.vector("v")
    f, ref = compile_both([m, v], m + v)
    with pytest.raises(ValueError) as e:
        f(np.ones((2, 3)), np.ones(4))
    assert "m.shape[1]" in str(e.value) and "v.shape[0]" in str(e.value)
    # PyTensor's rule: a dim of size 1 at run time does not broadcast unless static.
    raises_like(f, ref, [np.ones((2, 3)), np.ones(1)])
    with pytest.raises(ValueError):
        f(np.ones((2, 3)), np.ones(1))


def test_shape_mismatch_deeper_in_the_graph():
    x = pt.vector("x")
    y = pt.vector("y")
    z = pt.vector("z")
    f = pytensor.function([x, y, z], pt.exp(x + y) * z, mode=MLIR)
    with pytest.raises(ValueError, match="z.shape"):
        f(np.ones(3), np.ones(3), np.ones(2))
    with pytest.raises(ValueError):
        f(np.ones(3), np.ones(2), np.ones(3))


def test_dimshuffle():
    x = pt.tensor("x", shape=(None, 1, None))
    rng = np.random.default_rng(1)
    a = rng.normal(size=(2, 1, 3))
    check([x], [x.dimshuffle(2, 0, "x"), x.dimshuffle("x", 0, 2, "x"), x.T], [a])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "shapes",
    [((3, 4), (4, 5)), ((3, 4), (4,)), ((4,), (4, 5)), ((4,), (4,)), ((0, 4), (4, 2)), ((3, 0), (0, 2))],
    ids=["mm", "mv", "vm", "vv", "empty-rows", "empty-inner"],
)
def test_dot(dtype, shapes):
    a = pt.tensor("a", dtype=dtype, shape=(None,) * len(shapes[0]))
    b = pt.tensor("b", dtype=dtype, shape=(None,) * len(shapes[1]))
    rng = np.random.default_rng(2)
    values = [rng.normal(size=s).astype(dtype) for s in shapes]
    check([a, b], pt.dot(a, b), values, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_dot_of_mixed_and_integer_dtypes():
    a = pt.matrix("a", dtype="int32")
    b = pt.matrix("b", dtype="float32")
    rng = np.random.default_rng(3)
    check([a, b], pt.dot(a, b), [rng.integers(-5, 5, size=(3, 4)).astype("int32"), rng.normal(size=(4, 2)).astype("float32")], rtol=1e-12)
    c = pt.matrix("c", dtype="int64")
    check([c], pt.dot(c, c.T), [rng.integers(-100, 100, size=(3, 4))])


def test_dot_inner_dims_must_agree():
    a = pt.matrix("a")
    b = pt.matrix("b")
    f = pytensor.function([a, b], pt.dot(a, b), mode=MLIR)
    with pytest.raises(ValueError, match="a.shape\\[1\\]"):
        f(np.ones((2, 3)), np.ones((4, 2)))


def test_several_outputs_and_odd_outputs():
    x = pt.vector("x")
    y = pt.vector("y")
    twice = x * y
    const = pt.as_tensor_variable(np.array([1.5, -0.0, np.inf]))
    f = check([x, y], [twice, x, twice, const, y + 1], [np.arange(3.0), np.ones(3)])
    a = np.arange(3.0)
    out = f(a, np.ones(3))
    assert not np.shares_memory(out[1], a)


def test_scalar_constant_only_output():
    x = pt.vector("x")
    check([x], [pt.constant(2.5), x.shape[0] * 0 + x], [np.ones(2)], on_unused_input="ignore")


INLINE = "--iree-execution-model=inline-dynamic"


def test_inline_execution_model_except_where_iree_loses_constants():
    """Graphs run with IREE's inline execution model on the CPU (the cheapest call), except
    where the compiler sees a multi-element tensor known at compile time, which IREE 3.13's
    inline model loses ("source_buffer is null" at run time): those use the full HAL. Both
    kinds must give the C backend's results."""
    x = pt.vector("x")
    m = pt.matrix("m")
    plain = check([x], [x * 2 + 1], [np.arange(4.0)])
    assert INLINE in pytensor_mlir.get_flags(plain)
    splat = check([x], [x + np.full(1, 3.0)], [np.arange(4.0)])
    assert INLINE in pytensor_mlir.get_flags(splat)
    big = np.linspace(-1.0, 1.0, 1000)
    for outputs, values in [
        ([x + big], [np.ones(1000)]),  # a large constant operand of a kernel
        ([pt.as_tensor_variable(big[:5]), x * 2], [np.ones(2)]),  # a constant output
        ([m.shape, m.sum()], [np.ones((2, 3))]),  # a shape vector
    ]:
        f = check([x if values[0].ndim == 1 else m], outputs, values)
        assert INLINE not in pytensor_mlir.get_flags(f), outputs


class Twice(Op):
    """An Op no backend but Python's knows: the MLIR mode must refuse it by name."""

    __props__ = ("factor",)

    def __init__(self, factor=2):
        self.factor = factor

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0] * self.factor


class Negated(Twice):
    __props__ = ()

    def __init__(self):
        super().__init__(-1)


class Halve(UnaryScalarOp):
    def impl(self, x):
        return x / 2


def test_unsupported_ops_are_all_listed_at_compile_time():
    m = pt.matrix("m")
    v = pt.vector("v")
    outputs = [Twice(3)(v), Negated()(m) + 1, Twice(3)(m), m + 1]
    with pytest.raises(NotImplementedError) as e:
        pytensor.function([m, v], outputs, mode=MLIR)
    message = str(e.value)
    assert "Twice{factor=3}" in message and "Negated" in message, message
    # Twice{factor=3} is one Op, listed once.
    assert message.count("Twice{factor=3}") == 1, message


def test_unsupported_scalar_op_is_named():
    x = pt.vector("x")
    halve = Elemwise(Halve(upgrade_to_float, name="halve"))
    with pytest.raises(NotImplementedError, match="Halve"):
        pytensor.function([x], pt.exp(halve(x) * 2) + 1, mode=MLIR)


def test_complex_graphs_are_rejected_clearly():
    z = pt.vector("z", dtype="complex128")
    with pytest.raises(NotImplementedError, match="complex128"):
        pytensor.function([z], z * 2, mode=MLIR)


@pytest.mark.parametrize(
    "bad",
    [
        np.ones((2, 2)),  # wrong rank
        np.array(["a", "b"]),  # strings
        np.ones(3, dtype="complex128"),  # would lose the imaginary part
        [1.0, "x"],
        None,
        np.ones(3, dtype="float64"),  # float64 into an int vector
    ],
    ids=["rank", "strings", "complex", "mixed-list", "none", "float-to-int"],
)
def test_bad_input_raises_what_pytensor_raises(bad):
    x = pt.vector("x", dtype="int32")
    f, ref = compile_both([x], x * 2)
    raises_like(f, ref, [bad])


def test_inputs_pytensor_accepts_are_accepted():
    x = pt.vector("x")
    f, ref = compile_both([x], x * 2)
    for value in ([1, 2, 3], np.arange(3, dtype="int8"), np.float32([1.5, 2.5]), (4.0,)):
        assert_same(f(value), ref(value))


def test_wrong_number_of_arguments():
    x = pt.vector("x")
    f, ref = compile_both([x], x * 2)
    raises_like(f, ref, [np.ones(2), np.ones(2)])
    raises_like(f, ref, [])
