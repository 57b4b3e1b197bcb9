"""CheckAndRaise and Assert: the value passes through, a false condition raises the Op's
exception class with its message, as the C backend does."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.raise_op import Assert, CheckAndRaise

from conftest import C, MLIR, assert_same, check, compile_both, raises_like


class ModelError(Exception):
    """An exception class of the user's own (module level, so importable by name)."""


def _ops(f):
    return [type(n.op).__name__ for n in f.maker.fgraph.toposort()]


@pytest.mark.parametrize(
    "op",
    [Assert("x must be positive"), CheckAndRaise(ValueError, "negative entries"), CheckAndRaise(ModelError, 'a "quoted"\nmessage')],
    ids=["Assert", "ValueError", "own class"],
)
def test_raises_the_ops_exception_with_its_message(op):
    x = pt.vector("x")
    out = op(x, pt.all(x > 0)) * 2
    f, ref = compile_both([x], out)
    # The check survives the MLIR mode's rewrites, as it does the C backend's.
    assert type(op).__name__ in _ops(f) and type(op).__name__ in _ops(ref)
    good = np.array([1.0, 2.0, 3.0])
    assert_same(f(good), ref(good))
    got, want = raises_like(f, ref, [np.array([1.0, -2.0, 3.0])])
    assert type(got) is type(want) is op.exc_type
    assert str(got) == str(want) == op.msg


def test_several_conditions_and_a_scalar_value():
    x = pt.dscalar("x")
    n = pt.lscalar("n")
    out = Assert("bounds")(x, x > 0, pt.lt(n, 5), pt.neq(n, 2))
    f, ref = compile_both([x, n], out)
    assert_same(f(1.5, 3), ref(1.5, 3))
    for bad in [(-1.0, 3), (1.0, 7), (1.0, 2)]:
        got, want = raises_like(f, ref, list(bad))
        assert str(got) == str(want) == "bounds"


def test_float_condition_and_empty_input():
    x = pt.vector("x")
    out = CheckAndRaise(IndexError, "empty or not")(x, (x.shape[0] + 1) * 0.5)
    check([x], out, [np.zeros(0)])
    check([x], out, [np.arange(3.0)])


def test_shape_assert_from_user_graph():
    # A typical user check: two vectors of the same length, checked at run time.
    x, y = pt.vector("x"), pt.vector("y")
    out = Assert("lengths differ")(x, pt.eq(x.shape[0], y.shape[0])) + 1
    f, ref = compile_both([x, y], out)
    assert_same(f(np.ones(3), np.ones(3)), ref(np.ones(3), np.ones(3)))
    got, want = raises_like(f, ref, [np.ones(3), np.ones(4)])
    assert str(got) == str(want)


def test_gradient_through_assert():
    x = pt.vector("x")
    cost = (Assert("positive")(x, pt.all(x > 0)) ** 2).sum()
    g = pytensor.grad(cost, x)
    check([x], [cost, g], [np.array([0.5, 1.5, 2.0])])
