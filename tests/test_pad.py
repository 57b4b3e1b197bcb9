"""pad(mode="reflect") and pad(mode="symmetric"), lowered by their meaning (PyTensor's
inner graph for them holds a Scan), and their gradients, against PyTensor's own graph and numpy.
PyTensor's graph for these modes runs on its Python linker (`PY`; the Scan inside runs its
inner graph in the C backend, conftest's default mode), except in the output-shape test (the
Python linker fails on its graph, a Scratchpad without ufunc).

PyTensor's own graph (what the C backend runs) differs from numpy.pad in three places, where
we follow numpy: reflect on an axis of length 1 (numpy repeats the element; C returns the
input unpadded, or raises ZeroDivisionError for a zero width), a negative width (numpy
raises ValueError; C crops) and an empty axis (numpy raises ValueError for a nonzero width;
C returns an empty result, or raises ZeroDivisionError for a zero width). There the
reference is numpy (for gradients: the adjoint of numpy's index map, `np.add.at`)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor.compile.mode import Mode

from conftest import MLIR, assert_same, compile_both

# PyTensor's Python linker: the reference for graphs whose pad holds a Scan.
PY = Mode(linker="py", optimizer="fast_run")


def ops_of(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.toposort()}


def numpy_grad(g, shape, widths, mode):
    """The gradient of sum(g * pad(x)) for x of `shape`: g summed onto each position
    numpy's pad reads from (the index map is numpy.pad of the positions themselves)."""
    maps = [np.pad(np.arange(n), w, mode=mode) for n, w in zip(shape, widths)]
    out = np.zeros(shape)
    np.add.at(out, np.ix_(*maps), g)
    return out


def c_agrees(shape, widths, mode):
    # C's graph is numpy's except on the cases the module docstring lists.
    return all(w[0] >= 0 and w[1] >= 0 and n > 0 and (mode == "symmetric" or n > 1) for n, w in zip(shape, widths))


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_runtime_widths(mode):
    """One function for every width: 0, smaller than the axis, past it (reflected
    repeatedly), on 1-d to 3-d inputs; several dtypes."""
    rng = np.random.default_rng(0)
    w = pt.lmatrix("w")
    for ndim, dtype, shapes in [
        (1, "float64", [(5,), (3,), (2,), (1,), (0,)]),
        (2, "int32", [(3, 4), (1, 2), (2, 1), (4, 0)]),
        (3, "float32", [(2, 3, 2), (1, 1, 3)]),
    ]:
        x = pt.tensor("x", dtype=dtype, shape=(None,) * ndim)
        f, ref = compile_both([x, w], pt.pad(x, w, mode=mode), reference=PY)
        assert "Pad" in ops_of(f) and "Scan" not in ops_of(f), ops_of(f)
        for shape in shapes:
            xv = (rng.normal(size=shape) * 10).astype(dtype)
            for widths in [((0, 0),) * ndim, ((1, 2),) * ndim, ((7, 3),) * ndim, ((0, 11),) * ndim, tuple((k, 2 * k + 1) for k in range(ndim))]:
                if 0 in shape and any(wi != (0, 0) for n, wi in zip(shape, widths) if n == 0):
                    continue  # the error cases: test_pad_bad_input
                wv = np.array(widths, dtype="int64")
                got = f(xv, wv)
                assert_same(got, np.pad(xv, widths, mode=mode), err_msg=f"{shape} {widths} vs numpy")
                if c_agrees(shape, widths, mode):
                    assert_same(got, ref(xv, wv), err_msg=f"{shape} {widths} vs PyTensor")


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_constant_widths(mode):
    """Widths known when compiling (a scalar, a pair, one pair per axis) give output dims
    checkable before the call; special float values are copied as they are."""
    x = pt.matrix("x")
    outputs = [pt.pad(x, 2, mode=mode), pt.pad(x, (1, 3), mode=mode), pt.pad(x, ((0, 5), (4, 0)), mode=mode)]
    f, ref = compile_both([x], outputs, reference=PY)
    xv = np.array([[np.nan, -0.0, np.inf], [1.5, -np.inf, 0.0]])
    for g, w, r in zip(f(xv), [2, (1, 3), ((0, 5), (4, 0))], ref(xv)):
        assert_same(g, np.pad(xv, w, mode=mode))
        assert_same(g, r)


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_bad_input(mode):
    """A negative width or a nonzero width on an empty axis raises ValueError, as numpy
    does (C's graph returns a result there); a zero width on an empty axis is fine."""
    x, w = pt.matrix("x"), pt.lvector("w")
    f = pytensor.function([x, w], pt.pad(x, w, mode=mode), mode=MLIR)
    for xv, wv in [(np.ones((3, 4)), [-1, 2]), (np.ones((0, 4)), [1, 0]), (np.ones((3, 0)), [0, 2])]:
        with pytest.raises(ValueError) as want:
            np.pad(xv, wv, mode=mode)
        with pytest.raises(ValueError) as got:
            f(xv, np.array(wv))
        assert str(want.value) in str(got.value)
    assert f(np.ones((0, 4)), np.array([0, 0])).shape == (0, 4)
    # pad_width that does not broadcast to (ndim, 2).
    w3 = pt.lvector("w3")
    g = pytensor.function([x, w3], pt.pad(x, w3, mode=mode), mode=MLIR)
    with pytest.raises(ValueError, match="broadcast"):
        g(np.ones((3, 4)), np.array([1, 2, 3]))


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_gradient(mode):
    """pytensor.grad through pad: PyTensor's pullback (a Scan's gradient) lowered as the
    adjoint of the gather, against PyTensor (its Python linker) and numpy's index map; run-time widths (output dims
    known only in the kernel, so the cost uses y alone) and constant ones."""
    rng = np.random.default_rng(1)
    x, w = pt.tensor3("x"), pt.lmatrix("w")
    y = pt.pad(x, w, mode=mode)
    gx = pytensor.grad((y ** 3 / 3 + pt.sin(y)).sum(), x)
    f, ref = compile_both([x, w], [y, gx], reference=PY)
    assert "Scan" not in ops_of(f), ops_of(f)
    for shape, widths in [
        ((3, 4, 2), ((1, 2), (0, 0), (3, 1))),
        ((2, 3, 3), ((5, 0), (7, 9), (2, 2))),
        ((1, 2, 3), ((2, 3), (1, 1), (0, 4))),
        ((3, 1, 2), ((0, 0), (4, 2), (1, 0))),
    ]:
        xv = rng.normal(size=shape)
        wv = np.array(widths, dtype="int64")
        got_y, got_g = f(xv, wv)
        assert_same(got_y, np.pad(xv, widths, mode=mode))
        assert_same(got_g, numpy_grad(got_y ** 2 + np.cos(got_y), shape, widths, mode), rtol=1e-12, err_msg=f"{shape} {widths}")
        if c_agrees(shape, widths, mode):
            assert_same(got_g, ref(xv, wv)[1], rtol=1e-12, err_msg=f"{shape} {widths} vs PyTensor")
    # Constant widths: the output's dims are known before the call, so another input of
    # that shape can weight it.
    m, weights = pt.matrix("m"), pt.matrix("weights")
    gm = pytensor.grad((pt.pad(m, ((2, 7), (0, 3)), mode=mode) * weights).sum(), m)
    f = pytensor.function([m, weights], gm, mode=MLIR)
    mv, wt = rng.normal(size=(3, 4)), rng.normal(size=(12, 7))
    assert_same(f(mv, wt), numpy_grad(wt, (3, 4), ((2, 7), (0, 3)), mode), rtol=1e-12)


def test_other_pad_modes_keep_their_inner_graph():
    """The other modes still go through the inner graph ("edge" in test_construct)."""
    x = pt.matrix("x")
    f, ref = compile_both([x], pt.pad(x, ((1, 2), (3, 0)), mode="constant", constant_values=-1.5))
    xv = np.arange(6.0).reshape(2, 3)
    assert_same(f(xv), ref(xv))


def test_pad_output_shape_used_in_the_graph():
    """`y.shape` of such a pad is x.shape plus the widths (a rewrite of the MLIR modes),
    not PyTensor's inference from the inner graph, which holds the Scan."""
    x, w = pt.matrix("x"), pt.lmatrix("w")
    outputs = []
    for mode in ["reflect", "symmetric"]:
        y, z = pt.pad(x, ((2, 5), (0, 3)), mode=mode), pt.pad(x, w, mode=mode)
        outputs += [(y * pt.arange(y.shape[1])).sum() + y.shape[0], z.shape, z.shape[1] * 2]
    f, ref = compile_both([x, w], outputs)
    assert "Scan" not in ops_of(f), ops_of(f)
    for xv, wv in [(np.arange(12.0).reshape(3, 4), [[2, 5], [0, 3]]), (np.ones((2, 2)), [[0, 0], [4, 1]])]:
        for i, (g, r) in enumerate(zip(f(xv, np.array(wv)), ref(xv, np.array(wv)))):
            assert_same(g, r, err_msg=f"output {i}")


def test_constant_and_edge_modes_by_one_gather():
    """constant (values a scalar, a pair, one pair per axis, run-time ones of another
    dtype) and edge: numpy's pad on 1-d to 3-d inputs, one function for every width,
    later axes' values over the corners, empty axes (constant fills them; edge raises
    ValueError as numpy, where C returns garbage); and against C where C agrees."""
    rng = np.random.default_rng(5)
    w = pt.lmatrix("w")
    c = pt.fmatrix("c")
    for ndim, dtype, shapes in [(1, "float64", [(4,), (1,), (0,)]), (2, "int32", [(3, 4), (1, 1), (0, 2)]), (3, "float32", [(2, 3, 2)])]:
        x = pt.tensor("x", dtype=dtype, shape=(None,) * ndim)
        outputs = [pt.pad(x, w, mode="constant", constant_values=pt.cast(c, dtype)), pt.pad(x, w, mode="constant"), pt.pad(x, w, mode="edge")]
        f, ref = compile_both([x, w, c], outputs)
        assert "Pad" in ops_of(f) and "IncSubtensor" not in ops_of(f), ops_of(f)
        fc, refc = compile_both([x, w, c], outputs[:2])
        for shape in shapes:
            xv = (rng.normal(size=shape) * 10).astype(dtype)
            cv = rng.integers(-9, 9, size=(ndim, 2)).astype("float32")
            for widths in [((0, 0),) * ndim, ((1, 2),) * ndim, ((3, 0),) * ndim, tuple((k, 2 * k + 1) for k in range(ndim))]:
                wv = np.array(widths, dtype="int64")
                want = [np.pad(xv, widths, mode="constant", constant_values=cv.astype(dtype)), np.pad(xv, widths, mode="constant")]
                if 0 in shape and any(wi != (0, 0) for n, wi in zip(shape, widths) if n == 0):
                    with pytest.raises(ValueError, match="can't extend empty axis"):
                        f(xv, wv, cv)
                    for g, wnt, r in zip(fc(xv, wv, cv), want, refc(xv, wv, cv)):
                        assert_same(g, wnt.astype(r.dtype), err_msg=f"{shape} {widths} constant")
                    continue
                want.append(np.pad(xv, widths, mode="edge"))
                got = f(xv, wv, cv)
                for i, (g, wnt, r) in enumerate(zip(got, want, ref(xv, wv, cv))):
                    # PyTensor pads into float64 zeros: an integer x gives float64.
                    assert_same(g, wnt.astype(r.dtype), err_msg=f"{shape} {widths} output {i} vs numpy")
                    assert_same(g, r, err_msg=f"{shape} {widths} output {i} vs C")


def test_constant_and_edge_static_widths_and_gradients():
    x = pt.matrix("x")
    outputs = [pt.pad(x, 2, mode="constant"), pt.pad(x, ((1, 0), (2, 3)), mode="constant", constant_values=((4, 6), (-1, 7))), pt.pad(x, (1, 3), mode="edge")]
    f, ref = compile_both([x], outputs)
    for xv in [np.array([[np.nan, -0.0, np.inf], [1.5, -np.inf, 0.0]]), np.arange(6.0).reshape(2, 3)]:
        for g, r in zip(f(xv), ref(xv)):
            assert_same(g, r)
    # The gradients (PyTensor's pullback graphs), one function each.
    for o in outputs[:2]:
        cost = (o * pt.arange(o.shape[1])).sum()
        f, ref = compile_both([x], pytensor.grad(cost, x))
        assert_same(f(xv), ref(xv))


def test_edge_gradient_is_the_adjoint_of_the_gather():
    """Our rule for the pullback (PyTensor 3.0.7's graph for it increments regions by
    values of other lengths: a wrong gradient from C for any width above 1)."""
    x, w, g = pt.matrix("x"), pt.lmatrix("w"), pt.matrix("g")
    y = pt.pad(x, w, mode="edge")
    f = pytensor.function([x, w, g], pytensor.grad(None, x, known_grads={y: g}), mode=MLIR)
    assert "Pad" in ops_of(f) and "IncSubtensor" not in ops_of(f), ops_of(f)
    rng = np.random.default_rng(7)
    for shape in [(3, 4), (1, 1), (2, 1)]:
        for widths in [((1, 3), (0, 1)), ((0, 0), (2, 2)), ((4, 1), (3, 0))]:
            padded = tuple(n + a + b for n, (a, b) in zip(shape, widths))
            gv = rng.normal(size=padded)
            assert_same(f(rng.normal(size=shape), np.array(widths), gv), numpy_grad(gv, shape, widths, "edge"), err_msg=f"{shape} {widths}")
    xs = pt.vector("xs")
    ys = pt.pad(xs, (1, 3), mode="edge")
    fs = pytensor.function([xs], pytensor.grad((ys * pt.arange(7)).sum(), xs), mode=MLIR)
    assert_same(fs(np.arange(3.0)), numpy_grad(np.arange(7.0), (3,), [(1, 3)], "edge"))
