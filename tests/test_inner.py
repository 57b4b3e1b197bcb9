"""OpFromGraph lowered through its inner graph: the inner graph's inputs bound to the
node's values, nested OpFromGraphs, constants inside, checks inside, and gradients."""

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.compile.builders import OpFromGraph
from pytensor.raise_op import Assert

from conftest import MLIR, assert_same, check, compile_both, raises_like

# The MLIR modes inline every OpFromGraph before the rewrites run
# (pytensor_mlir.rewrites); without that rewrite the node reaches the lowering rule.
NOT_INLINED = MLIR.excluding("mlir_inline_plain_op_from_graph")


def ops_of(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.toposort()}


def test_op_from_graph():
    a, b = pt.matrix("a"), pt.matrix("b")
    # pt.dot, not `@`: the inner graph is lowered as built, and `@` builds Blockwise(Dot).
    ofg = OpFromGraph([a, b], [pt.dot(a, b) + 1, (a * b).sum(axis=0)])
    x, y = pt.matrix("x"), pt.matrix("y")
    outs = ofg(x, y)
    f, ref = compile_both([x, y], [outs[0] * 2, outs[1]], mode=NOT_INLINED)
    assert "OpFromGraph" in ops_of(f)
    assert "OpFromGraph" not in ops_of(pytensor.function([x, y], [outs[0] * 2, outs[1]], mode=MLIR))
    for shape in [(3, 3), (0, 0), (2, 2)]:
        xv, yv = np.arange(np.prod(shape), dtype="float64").reshape(shape), np.ones(shape)
        for g, w in zip(f(xv, yv), ref(xv, yv)):
            assert_same(g, w)
    # The inner graph's shape rules hold: a mismatch raises like the C backend.
    raises_like(f, ref, [np.ones((2, 3)), np.ones((2, 3))])


def test_nested_with_constants_and_checks():
    v = pt.vector("v")
    inner = OpFromGraph([v], [Assert("inner check")(v, pt.all(v > 0)) * np.array([1.0, 2.0, 3.0])])
    w = pt.vector("w")
    outer = OpFromGraph([w], [inner(w).sum() + inner(w * 2)])
    x = pt.vector("x")
    f, ref = compile_both([x], outer(x), mode=NOT_INLINED)
    assert "OpFromGraph" in ops_of(f)
    assert_same(f(np.array([1.0, 2.0, 3.0])), ref(np.array([1.0, 2.0, 3.0])))
    got, want = raises_like(f, ref, [np.array([1.0, -2.0, 3.0])])
    assert str(got) == str(want) == "inner check"


def test_gradient_through_op_from_graph():
    a = pt.vector("a")
    ofg = OpFromGraph([a], [pt.exp(a) * a])
    x = pt.vector("x")
    cost = ofg(x).sum()
    for mode in (MLIR, NOT_INLINED):
        check([x], [cost, pytensor.grad(cost, x)], [np.array([0.1, -0.5, 2.0])], mode=mode)


def test_unsupported_inner_op_is_named():
    import pytest

    a = pt.matrix("a")
    ofg = OpFromGraph([a], [pt.unique(a, axis=0)])  # unique rows: refused by name
    x = pt.matrix("x")
    with pytest.raises(NotImplementedError, match="Unique"):
        pytensor.function([x], ofg(x), mode=NOT_INLINED)
    with pytest.raises(NotImplementedError, match="Unique"):
        pytensor.function([x], ofg(x), mode="MLIR")


def test_einsum():
    # Einsum is an OpFromGraph subclass; fast_run rewrites this one to Dot first.
    a, b = pt.matrix("a"), pt.matrix("b")
    check([a, b], pt.einsum("ij,jk->ik", a, b), [np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2)])
