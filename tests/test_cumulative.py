"""CumOp (cumsum, cumprod) against the C backend: every axis, axis=None (flattened by
PyTensor), integer wrap-around in the input's dtype, empty inputs, and gradients."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from conftest import assert_same, check, compile_both


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8"])
@pytest.mark.parametrize("fn", [pt.cumsum, pt.cumprod], ids=["cumsum", "cumprod"])
def test_cumop_axes(fn, dtype):
    t = pt.tensor3("t", dtype=dtype)
    outs = [fn(t, axis=0), fn(t, axis=1), fn(t, axis=2), fn(t, axis=-1), fn(t)]
    f, ref = compile_both([t], outs)
    assert "CumOp" in {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    rng = np.random.default_rng(0)
    for shape in [(2, 3, 4), (1, 5, 1), (0, 3, 2), (3, 0, 2)]:
        x = (rng.uniform(-2, 3, size=shape) if dtype[0] == "f" else rng.integers(0, 7, size=shape)).astype(dtype)
        for i, (g, w) in enumerate(zip(f(x), ref(x))):
            assert_same(g, w, rtol=1e-5 if dtype == "float32" else 1e-13, err_msg=f"{shape} output {i}")


def test_integer_cumsum_wraps_like_the_c_backend():
    x = pt.vector("x", dtype="int8")
    check([x], [pt.cumsum(x), pt.cumprod(x)], [np.array([100, 100, 100, -128, 7], dtype="int8")])


def test_nan_and_inf_propagate():
    x = pt.vector("x")
    check([x], [pt.cumsum(x), pt.cumprod(x)], [np.array([1.0, np.inf, -np.inf, 2.0, np.nan, 3.0])])


def test_gradients():
    m = pt.matrix("m")
    for cost in [(pt.cumsum(m, axis=1) ** 2).sum(), (pt.cumprod(m, axis=0) * m).sum(), (pt.cumsum(m) ** 2).sum()]:
        check([m], [cost, pytensor.grad(cost, m)], [np.arange(1.0, 7.0).reshape(2, 3) / 5])
