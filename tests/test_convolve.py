"""Convolve1d (pt.signal.convolve1d): numpy's convolve in modes full, valid and same
("same" is PyTensor's valid of a padded input), batched through Blockwise, and its
gradients (Convolve1d's of other modes), against the C backend and numpy."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.signal import convolve1d

from conftest import C, MLIR, assert_same, check, compile_both, raises_like

MODES = ["full", "valid", "same"]
# (in1, in2): in1 longer, the kernel longer, equal lengths, length 1.
LENGTHS = [(7, 3), (2, 5), (4, 4), (1, 3), (6, 1), (1, 1)]


def _has_convolve(f):
    return any("Convolve1d" in str(n.op) for n in f.maker.fgraph.toposort())


@pytest.mark.parametrize("mode", MODES)
def test_modes_and_lengths_match_c_and_numpy(mode):
    x, y = pt.vector("x"), pt.vector("y")
    f, ref = compile_both([x, y], convolve1d(x, y, mode=mode))
    assert _has_convolve(f)
    rng = np.random.default_rng(0)
    for n, k in LENGTHS:
        xv, yv = rng.normal(size=n), rng.normal(size=k)
        got = f(xv, yv)
        assert_same(got, ref(xv, yv), rtol=1e-12, atol=1e-14, err_msg=f"{mode} {n} {k}")
        # PyTensor's "same" has in1's length, numpy's the longer input's.
        if mode != "same" or n >= k:
            np.testing.assert_allclose(got, np.convolve(xv, yv, mode=mode), rtol=1e-12, atol=1e-14)
        # Small integers in floats: every sum is exact, so equal bit for bit.
        xi, yi = rng.integers(-4, 5, size=n).astype(float), rng.integers(-4, 5, size=k).astype(float)
        assert_same(f(xi, yi), ref(xi, yi), rtol=0, err_msg=f"{mode} {n} {k} integers")


@pytest.mark.parametrize("mode", ["full", "valid"])
def test_special_values(mode):
    # NaN and infinities propagate only into the outputs whose sums read them; -0.0 terms
    # sum to +0.0 as in numpy (its sums start at +0.0).
    x, y = pt.vector("x"), pt.vector("y")
    f, ref = compile_both([x, y], convolve1d(x, y, mode=mode))
    cases = [
        ([np.inf, 1.0, 2.0, 3.0, 4.0], [1.0, 2.0]),
        ([1.0, np.nan, 2.0, 0.0, 1.0], [1.0, -1.0]),
        ([-0.0, -0.0, -0.0], [1.0, 2.0]),
        ([-np.inf, 0.0, np.inf], [0.0, 1.0]),
        ([1e308, 1e308, -1e308], [2.0, 1.0]),
        ([5e-324, 1.0], [0.5, 3.0, 1.0]),
    ]
    for xv, yv in cases:
        xv, yv = np.array(xv), np.array(yv)
        assert_same(f(xv, yv), ref(xv, yv), err_msg=f"{xv} {yv}")


@pytest.mark.parametrize("dtypes", [("int32", "float32"), ("int8", "int8"), ("int16", "float64")])
def test_dtypes_upcast(dtypes):
    x = pt.vector("x", dtype=dtypes[0])
    y = pt.vector("y", dtype=dtypes[1])
    out = convolve1d(x, y, mode="full")
    f, ref = compile_both([x, y], out)
    # int8 sums wrap around as numpy's do.
    xv = np.array([100, -3, 7, 120, 1], dtype=dtypes[0])
    yv = np.array([3, -2, 5], dtype=dtypes[1])
    assert_same(f(xv, yv), ref(xv, yv))
    assert f(xv, yv).dtype == np.convolve(xv, yv).dtype


def test_empty_input_raises_value_error():
    x, y = pt.vector("x"), pt.vector("y")
    for mode in ["full", "valid"]:
        f, ref = compile_both([x, y], convolve1d(x, y, mode=mode))
        for xv, yv in [(np.zeros(0), np.ones(2)), (np.ones(3), np.zeros(0)), (np.zeros(0), np.zeros(0))]:
            got, want = raises_like(f, ref, [xv, yv])
            assert type(got) is type(want) is ValueError


def test_static_shapes():
    x = pt.tensor("x", shape=(6,))
    y = pt.tensor("y", shape=(4,))
    for mode, length in [("full", 9), ("valid", 3)]:
        out = convolve1d(x, y, mode=mode)
        f = check([x, y], out * 2, [np.arange(6.0), np.array([1.0, -1.0, 0.5, 2.0])])
        assert f(np.ones(6), np.ones(4)).shape == (length,)


@pytest.mark.parametrize("mode", MODES)
def test_batched(mode):
    x = pt.matrix("x")
    y = pt.vector("y")
    z = pt.matrix("z")
    rng = np.random.default_rng(2)
    f = check([x, y], convolve1d(x, y, mode=mode), [rng.normal(size=(3, 6)), rng.normal(size=4)], rtol=1e-12, atol=1e-14)
    assert any(type(n.op).__name__ == "Blockwise" for n in f.maker.fgraph.toposort())
    # Both batched, the kernel longer than the data.
    check([x, z], convolve1d(x, z, mode=mode), [rng.normal(size=(2, 3)), rng.normal(size=(2, 5))], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", MODES)
def test_gradients(mode):
    x, y = pt.vector("x"), pt.vector("y")
    w = pt.vector("w")
    out = convolve1d(x, y, mode=mode)
    cost = (out * pt.cos(out)).sum()
    grads = pytensor.grad(cost, [x, y])
    f, ref = compile_both([x, y], grads)
    rng = np.random.default_rng(3)
    for n, k in [(6, 3), (3, 6), (4, 4)]:
        xv, yv = rng.normal(size=n), rng.normal(size=k)
        for g, r in zip(f(xv, yv), ref(xv, yv)):
            assert_same(g, r, rtol=1e-11, atol=1e-13, err_msg=f"{mode} {n} {k}")


@pytest.mark.parametrize("mode", ["full", "valid"])
def test_output_used_with_other_tensors(mode):
    # The output's length is known from the inputs' (n + k - 1, |n - k| + 1), so an
    # elementwise op with another vector is checked before the call, not refused.
    x, y, z = pt.vector("x"), pt.vector("y"), pt.vector("z")
    out = convolve1d(x, y, mode=mode) * z
    f, ref = compile_both([x, y, z], out)
    xv, yv = np.arange(5.0), np.array([1.0, -2.0])
    length = {"full": 6, "valid": 4}[mode]
    zv = np.linspace(-1.0, 1.0, length)
    assert_same(f(xv, yv, zv), ref(xv, yv, zv))
    got, want = raises_like(f, ref, [xv, yv, np.ones(length + 1)])
    assert type(got) is type(want) is ValueError


@pytest.mark.parametrize("mode", MODES)
def test_gradients_used_with_their_inputs(mode):
    # A gradient's mode is computed from the lengths (k < n): its output's length is that
    # choice, checked before the call, so the gradient adds to the input (an update step).
    x, y = pt.vector("x"), pt.vector("y")
    gx, gy = pytensor.grad((convolve1d(x, y, mode=mode) ** 2).sum(), [x, y])
    f, ref = compile_both([x, y], [x - 0.1 * gx, y * gy])
    rng = np.random.default_rng(4)
    for n, k in [(6, 3), (3, 6), (4, 4)]:
        xv, yv = rng.normal(size=n), rng.normal(size=k)
        for g, r in zip(f(xv, yv), ref(xv, yv)):
            assert_same(g, r, rtol=1e-11, atol=1e-13, err_msg=f"{mode} {n} {k}")


def test_batched_gradient():
    # Mode full's gradient keeps constant modes: lowered. Valid's computes its mode per
    # batch from the lengths, which the batched form does not know: refused by name.
    x, y = pt.matrix("x"), pt.vector("y")
    grads = pytensor.grad((convolve1d(x, y, mode="full") ** 2).sum(), [x, y])
    check([x, y], grads, [np.arange(10.0).reshape(2, 5), np.array([1.0, -0.5, 2.0])])
    grads = pytensor.grad((convolve1d(x, y, mode="valid") ** 2).sum(), [x, y])
    with pytest.raises(NotImplementedError, match=r"Blockwise\{Convolve1d\}"):
        pytensor.function([x, y], grads, mode=MLIR)
