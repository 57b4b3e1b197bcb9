"""SortOp, ArgSortOp and SearchsortedOp against the C backend: axes, NaN ordering,
stability, empty inputs, bad input, and gradients."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from conftest import assert_same, check, compile_both, raises_like


def ops_of(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.toposort()}


# One dtype per comparison the sort emits (float with NaN last, signed, unsigned, bool):
# float32 and int64 take the same paths as float64 and int16. Each sort compiles for
# seconds: the other axes are tested once, in float64, below.
@pytest.mark.parametrize("dtype", ["float64", "int16", "uint32", "bool"])
def test_sort_and_stable_argsort(dtype):
    m = pt.matrix("m", dtype=dtype)
    check_sorts(m, [pt.sort(m), pt.argsort(m, kind="stable")])


def test_sorts_along_other_axes():
    m = pt.matrix("m")
    check_sorts(m, [pt.sort(m, axis=0), pt.sort(m, axis=None), pt.argsort(m, axis=0, kind="mergesort")])


def check_sorts(m, outs):
    f, ref = compile_both([m], outs)
    assert {"SortOp", "ArgSortOp"} <= ops_of(f)
    rng = np.random.default_rng(1)
    for shape in [(3, 7), (1, 1), (0, 4), (4, 0), (5, 40)]:
        # Few distinct values: many ties, which a stable argsort orders by index.
        x = rng.integers(0, 4, size=shape).astype(m.dtype)
        for i, (g, w) in enumerate(zip(f(x), ref(x))):
            assert_same(g, w, err_msg=f"{shape} output {i}")


def test_nan_sorts_last_and_ties_stay_in_order():
    x = pt.vector("x")
    values = np.array([3.0, np.nan, -0.0, 1.0, np.nan, 0.0, -np.inf, 1.0, np.inf])
    # kind="stable" for the values too: numpy's default sort may put 0.0 before -0.0.
    check([x], [pt.sort(x, kind="stable"), pt.argsort(x, kind="stable")], [values])


def test_quicksort_argsort_gives_an_order_numpy_accepts():
    # numpy's quicksort is not stable: compare the sorted values through the indices.
    x = pt.vector("x")
    f = pytensor.function([x], pt.argsort(x), mode="MLIR")
    v = np.random.default_rng(2).integers(0, 3, size=50).astype("float64")
    idx = f(v)
    assert idx.dtype == np.int64 and sorted(idx.tolist()) == list(range(50))
    assert_same(v[idx], np.sort(v))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    x, v = pt.vector("x"), pt.matrix("v")
    f, ref = compile_both([x, v], pt.searchsorted(x, v, side=side))
    assert "SearchsortedOp" in ops_of(f)
    a = np.array([-1.0, 0.0, 0.0, 2.5, 3.0, 3.0, 3.0, np.inf, np.nan])
    q = np.array([[-2.0, -1.0, 0.0, 1.0], [3.0, 4.0, np.inf, np.nan]])
    for xs, vs in [(a, q), (np.zeros(0), q), (a, np.zeros((0, 3))), (np.array([1.0]), q)]:
        assert_same(f(xs, vs), ref(xs, vs))


def test_searchsorted_with_sorter_and_bad_sorters():
    x, v, s = pt.lvector("x"), pt.lvector("v"), pt.lvector("s")
    f, ref = compile_both([x, v, s], pt.searchsorted(x, v, sorter=s))
    a = np.array([5, 1, 3, 3, 9])
    q = np.array([0, 1, 3, 4, 9, 10])
    assert_same(f(a, q, np.argsort(a, kind="stable")), ref(a, q, np.argsort(a, kind="stable")))
    raises_like(f, ref, [a, q, np.array([0, 1, 2, 3, 5])])
    raises_like(f, ref, [a, q, np.array([0, 1, 2])])


def test_gradient_of_sort():
    x = pt.vector("x")
    cost = (pt.sort(x) * pt.arange(1.0, 6.0)).sum()
    check([x], [cost, pytensor.grad(cost, x)], [np.array([0.3, -1.0, 2.0, 0.1, 0.7])])


def test_static_lengths():
    # A static sorted length unrolls only the passes it needs (1, 2, 8 and 9 elements).
    for n in [1, 2, 8, 9]:
        m = pt.tensor("m", shape=(3, n), dtype="float64")
        x = np.random.default_rng(n).integers(0, 3, size=(3, n)).astype("float64")
        check([m], [pt.sort(m, kind="stable"), pt.argsort(m, kind="stable"), pt.argsort(m, axis=0, kind="stable")], [x])
