"""Ops whose output size depends on the data: `Nonzero` (lower/nonzero.rs), boolean-mask
indexing (rewritten to it in pytensor_mlir.rewrites) and `Unique` (lower/unique.rs),
compared with the C backend on the same inputs: every rank, the dtypes whose zeros differ
(NaN counts, -0.0 does not), empty and all-zero inputs, masks in each position of an
index, set and inc through a mask, a gradient, a mask of the wrong shape (numpy's
IndexError), and every optional output of `unique` with NaNs and repeats."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import pytensor_mlir
from conftest import assert_same, compile_both


def nonzero_graph(x):
    return [*pt.nonzero(x), pt.nonzero_values(x), pt.flatnonzero(x)]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
def test_nonzero_of_every_rank(dtype):
    rng = np.random.default_rng(0)
    for ndim in (1, 2, 3):
        x = pt.tensor("x", dtype=dtype, shape=(None,) * ndim)
        f, ref = compile_both([x], nonzero_graph(x))
        shapes = [(5,) * ndim, (0,) + (3,) * (ndim - 1), (1,) * ndim, (7, 4, 3)[:ndim]]
        for shape in shapes:
            v = (rng.normal(size=shape) * (rng.random(shape) < 0.4)).astype(dtype)
            if dtype.startswith("float") and v.size:
                v.flat[0] = np.nan
                v.flat[-1] = -0.0
            for values in (v, np.zeros(shape, dtype)):
                got, want = f(values), ref(values)
                for i, (g, w) in enumerate(zip(got, want)):
                    assert_same(g, w, err_msg=f"output {i} of {dtype} {shape}")


def mask_cases():
    x, m = pt.dvector("x"), pt.dmatrix("m")
    b = pt.vector("b", dtype="bool")
    vec = np.array([1.0, -2.0, np.nan, 3.0, -0.0, -4.0])
    mat = np.array([[1.0, -2.0, 4.0], [-3.0, 0.0, 5.0]])
    return [
        ([x], x[x > 0], [vec]),
        ([m], m[m > 0], [mat]),
        ([m], m[:, m[0] > 0], [mat]),
        ([m], m[m[:, 0] > 0], [mat]),
        ([m], m[m[:, 0] < 0, 1:], [mat]),
        ([x], pt.set_subtensor(x[x < 0], 0.0), [vec]),
        ([x], pt.inc_subtensor(x[x < 0], 10.0), [vec]),
        ([m], pt.inc_subtensor(m[m > 1], 1.5), [mat]),
        ([x, b], x[b], [vec, np.array([True, False, True, False, False, True])]),
        ([x, b], x[b], [vec, np.zeros(6, bool)]),
    ]


@pytest.mark.parametrize("case", range(10))
def test_boolean_mask_indexing(case):
    inputs, out, values = mask_cases()[case]
    f, ref = compile_both(inputs, out)
    assert not any(type(n.op).__name__ == "AdvancedSubtensor" and n.inputs[1].dtype == "bool" for n in f.maker.fgraph.apply_nodes)
    assert_same(f(*values), ref(*values))


def test_mask_of_the_wrong_shape_raises_index_error_like_numpy():
    x = pt.dvector("x")
    b = pt.vector("b", dtype="bool")
    f = pytensor.function([x, b], x[b], mode=pytensor_mlir.MLIR)
    vals = [np.arange(3.0), np.array([True, False])]
    with pytest.raises(IndexError):
        vals[0][vals[1]]
    with pytest.raises(IndexError, match="boolean index did not match"):
        f(*vals)
    assert_same(f(np.arange(3.0), np.array([False, True, True])), np.array([1.0, 2.0]))


def test_gradient_through_a_mask():
    x = pt.dvector("x")
    cost = (x[x > 0] ** 2).sum() + pt.exp(x[x < 0]).sum()
    f, ref = compile_both([x], [cost, pytensor.grad(cost, x)])
    v = np.array([1.0, -2.0, 0.5, 0.0, -1.0])
    for g, w in zip(f(v), ref(v)):
        assert_same(g, w)


def test_two_arrays_through_one_mask():
    """`x[m] * y[m]`: PyTensor gives y's mask a shape check of its own, so the graph holds
    two Nonzeros of one mask; their counts are one length (no check needed). Masks that
    differ give lengths no check before the call can compare: refused by name."""
    x, y = pt.dvector("x"), pt.dvector("y")
    f, ref = compile_both([x, y], [x[x > 0] * y[x > 0], (x[x > 0] * y[x > 0]).sum()])
    rng = np.random.default_rng(3)
    for n in [0, 1, 7]:
        vals = [rng.normal(size=n), rng.normal(size=n)]
        for g, w in zip(f(*vals), ref(*vals)):
            assert_same(g, w, err_msg=str(n))
    # y shorter than the mask: numpy's IndexError, from y's own check.
    with pytest.raises(IndexError):
        ref(np.arange(3.0), np.arange(2.0))
    with pytest.raises(IndexError, match="boolean index did not match"):
        f(np.arange(3.0), np.arange(2.0))
    with pytest.raises(NotImplementedError, match="computed from run-time values"):
        pytensor.function([x, y], x[x > 0] * y[y > 0], mode=pytensor_mlir.MLIR)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "bool"])
def test_unique_with_every_optional_output(dtype):
    rng = np.random.default_rng(1)
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    outs = [
        *pt.unique(x, return_index=True, return_inverse=True, return_counts=True),
        pt.unique(x),
        *pt.unique(x[:1], return_counts=True),
        pt.unique(x, return_inverse=True)[1],
    ]
    f, ref = compile_both([x], outs)
    cases = [rng.integers(0, 4, size=(5, 7)), np.zeros((0, 3)), np.ones((1, 1)), rng.integers(0, 100, size=(40, 30))]
    if dtype.startswith("float"):
        special = np.array([[3.0, np.nan, 1.0, -0.0], [np.nan, 1.0, 0.0, np.inf]])
        cases.append(special)
    for v in cases:
        v = v.astype(dtype)
        got, want = f(v), ref(v)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, err_msg=f"output {i} of {dtype} {v.shape}")
