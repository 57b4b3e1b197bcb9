"""Dims computed from small integer arguments (`x[:n]`, `arange(n)`, `zeros(s)`,
`reshape(x, s)` with `n`, `s` function inputs) are checked before the call, so graphs that
need them equal to other dims compile (they were refused as run-time dims) and a mismatch
raises what the C backend raises."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from conftest import MLIR, assert_same, compile_both, raises_like


def run_or_raise_like(f, ref, values, err_msg):
    """Both give the same result, or both raise the same exception type."""
    try:
        want = ref(*values)
    except Exception:  # noqa: BLE001 - compared with ours below
        raises_like(f, ref, values)
        return "raised"
    for g, w in zip(f(*values), want):
        assert_same(g, w, err_msg=err_msg)
    return "ran"


def test_slices_by_integer_arguments():
    x, y = pt.vector("x"), pt.vector("y")
    n, m = pt.lscalar("n"), pt.scalar("m", dtype="uint8")
    f, ref = compile_both([x, y, n, m], [x[:n] * y[-n:] + x[m : m + n].sum(), x[n : 2 * n] + y[: m - 1]])
    rng = np.random.default_rng(0)
    outcomes = set()
    for length in [0, 1, 6]:
        xv, yv = rng.normal(size=length), rng.normal(size=length)
        for nv in [-7, -2, 0, 1, 3, 6, 9]:
            for mv in [0, 1, 4, 200]:
                values = [xv, yv, np.int64(nv), np.uint8(mv)]
                try:
                    want = ref(*values)
                except Exception:  # noqa: BLE001
                    raises_like(f, ref, values)
                    outcomes.add("raised")
                    continue
                for g, w in zip(f(*values), want):
                    assert_same(g, w, err_msg=f"{length} {nv} {mv}")
                outcomes.add("ran")
    # Both kinds of case were met: lengths that agree and lengths that do not.
    assert outcomes == {"ran", "raised"}


def test_arange_and_alloc_by_integer_arguments():
    x, y = pt.vector("x"), pt.vector("y")
    n, start, step = pt.lscalar("n"), pt.iscalar("start"), pt.lscalar("step")
    # arange's length is ceil((n - start) / step); y's slice floor of it: equal or not.
    f, ref = compile_both([x, y, n, start, step], [pt.arange(n) * x + pt.zeros(n), pt.arange(start, n, step) + y[: (n - start) // step]])
    outcomes = []
    for nv, sv, stv, length in [(4, 0, 1, 4), (4, 0, 2, 4), (5, 1, 2, 5), (5, 0, 2, 5), (4, 0, 1, 3), (0, 0, 1, 0), (-2, 0, 1, 0), (6, 9, -1, 6)]:
        values = [np.arange(float(length)), np.linspace(0, 1, 9), np.int64(nv), np.int32(sv), np.int64(stv)]
        outcomes.append(run_or_raise_like(f, ref, values, f"{nv} {sv} {stv} {length}"))
    assert "ran" in outcomes and "raised" in outcomes, outcomes


def test_shape_vectors_as_arguments():
    x, v = pt.matrix("x"), pt.vector("v")
    s = pt.tensor("s", dtype="int64", shape=(2,))
    f, ref = compile_both([x, v, s], [v.reshape(s) * x, pt.zeros(s) + x])
    rng = np.random.default_rng(1)
    outcomes = []
    for shape, size, sv in [((2, 3), 6, (2, 3)), ((2, 3), 6, (-1, 3)), ((2, 3), 6, (2, -1)), ((3, 2), 6, (2, 3)), ((2, 3), 5, (2, -1)), ((0, 3), 0, (0, 3)), ((0, 3), 0, (0, -1)), ((2, 3), 6, (-1, -1)), ((2, 3), 6, (-2, -3))]:
        values = [rng.normal(size=shape), rng.normal(size=size), np.array(sv, dtype="int64")]
        outcomes.append(run_or_raise_like(f, ref, values, f"{shape} {size} {sv}"))
    assert "ran" in outcomes and "raised" in outcomes, outcomes


def test_a_shape_vector_of_unknown_length_is_still_refused():
    # Its values are not read before the call (only integer inputs of a few elements of
    # static shape are): a dim that must equal y's is refused at compile time.
    x, y = pt.matrix("x"), pt.vector("y")
    s = pt.vector("s", dtype="int64")
    with pytest.raises(NotImplementedError, match="computed from run-time values"):
        pytensor.function([x, y, s], x.reshape(s, ndim=1) + y, mode=MLIR)
