"""Inputs that are C-contiguous but not 64-byte aligned (numpy's arrays are 16-byte
aligned, their slices only element-aligned): imported in place where the compiled code's
assumed alignment allows it (8 bytes on the CPU), copied otherwise; results equal the C
backend's either way, on both execution models (inline local-sync, full-HAL local-task)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from conftest import C, MLIR, assert_all_same

from pytensor_mlir import _core, mlir_mode

DRIVERS = {"local-sync": MLIR, "local-task": mlir_mode("local-task")}


def at_offset(values, offset):
    """A C-contiguous copy of `values` whose data starts `offset` bytes past a 64-byte
    boundary (a slice of an oversized byte buffer)."""
    values = np.asarray(values)
    raw = np.empty(values.nbytes + 128, dtype=np.uint8)
    start = -raw.ctypes.data % 64 + offset
    out = raw[start : start + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    assert out.ctypes.data % 64 == offset and out.flags.c_contiguous
    return out


@pytest.mark.parametrize("driver", DRIVERS)
def test_element_aligned_float64_inputs_are_imported(driver):
    x, y, v = pt.dvector("x"), pt.dvector("y"), pt.dvector("v")
    m, i = pt.dmatrix("m"), pt.lvector("i")
    names = ["elemwise", "sum", "row sums", "dot", "gather", "input out", "slice out", "matrix col max"]
    # exp(x) * y, not exp(x) * y + 1: near exp(x) y = -1 the sum cancels, and our exp is
    # not bit-equal to C's libm (1 ulp there was 1.6e-13 relative after the cancellation).
    outs = [pt.exp(x) * y, x.sum(), m.sum(axis=1), m.dot(v), x[i], x, m[1:], m.max(axis=0)]
    f = pytensor.function([x, y, m, v, i], outs, mode=DRIVERS[driver])
    ref = pytensor.function([x, y, m, v, i], outs, mode=C)
    rng = np.random.default_rng(0)
    # Sizes that leave remainders after any vector width, and a big one whose vector
    # loops run long enough to meet an aligned-only move if the code had one.
    for n, rows in [(37, 5), (100_003, 7)]:
        values = [rng.normal(size=n), rng.normal(size=n), rng.normal(size=(rows, 11)), rng.normal(size=11),
                  rng.integers(-n, n, size=2 * n + 1)]
        want = ref(*values)
        first = None
        for offset in [0, 8, 16, 24, 32, 48]:
            placed = [at_offset(a, offset) for a in values]
            copies = _core.input_copies()
            got = f(*placed)
            assert _core.input_copies() == copies, f"offset {offset}: an input was copied"
            assert_all_same([f"{name} at offset {offset}" for name in names], got, want)
            # The same code on the same values wherever they lie: bit-equal results.
            first = first or [np.copy(r) for r in got]
            for name, r, r0 in zip(names, got, first):
                np.testing.assert_array_equal(r, r0, err_msg=f"{name} at offset {offset} vs offset 0")
            # Results never alias the caller's (imported) arrays.
            for result in got:
                assert not any(np.shares_memory(result, a) for a in placed)


@pytest.mark.parametrize("driver", DRIVERS)
def test_less_aligned_small_elements_are_copied(driver):
    # float32 and int8 arrays are often only 4- or 1-byte aligned: less than the code
    # assumes, so they are copied, and still computed right.
    f32, i8, i16 = pt.fvector("f"), pt.bvector("b"), pt.wvector("w")
    names = ["f32 elemwise", "f32 sum", "i8 add", "i16 max", "i8 out"]
    outs = [f32 * 2 + 1, f32.sum(), i8 + i8[::-1], i16.max(), i8]
    f = pytensor.function([f32, i8, i16], outs, mode=DRIVERS[driver])
    ref = pytensor.function([f32, i8, i16], outs, mode=C)
    rng = np.random.default_rng(1)
    values = [rng.normal(size=1001).astype("float32"), rng.integers(-100, 100, 1001).astype("int8"),
              rng.integers(-3000, 3000, 1001).astype("int16")]
    want = ref(*values)
    for offset, copied in [(1, 2), (2, 2), (4, 2), (12, 2), (8, 0), (16, 0), (40, 0)]:
        placed = [at_offset(values[0], offset - offset % 4), at_offset(values[1], offset),
                  at_offset(values[2], offset - offset % 2)]
        copies = _core.input_copies()
        got = f(*placed)
        misaligned = sum(a.ctypes.data % 8 != 0 for a in placed)
        assert _core.input_copies() - copies == misaligned
        assert_all_same([f"{name} at offset {offset}" for name in names], got, want)


@pytest.mark.parametrize("driver", DRIVERS)
def test_graphs_that_write_an_input_leave_it_alone(driver):
    # Scatters onto an input are written in place by IREE, so these inputs are always
    # private copies, at any alignment.
    x, y, i = pt.dvector("x"), pt.dvector("y"), pt.lvector("i")
    names = ["inc_subtensor", "set_subtensor", "advanced inc", "sum"]
    outs = [pt.inc_subtensor(x[2:5], y[:3]), pt.set_subtensor(y[1:], 0.5), pt.inc_subtensor(x[i], 1.0), x.sum()]
    f = pytensor.function([x, y, i], outs, mode=DRIVERS[driver])
    ref = pytensor.function([x, y, i], outs, mode=C)
    rng = np.random.default_rng(2)
    values = [rng.normal(size=50), rng.normal(size=50), rng.integers(-50, 50, size=20)]
    want = ref(*values)
    for offset in [0, 8, 16, 24, 32, 48]:
        placed = [at_offset(a, offset) for a in values]
        got = f(*placed)
        assert_all_same([f"{name} at offset {offset}" for name in names], got, want)
        for a, b in zip(placed, values):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("driver", DRIVERS)
def test_only_the_inputs_written_are_copied(driver):
    # A scatter onto the input m (AdvancedIncSubtensor, two index arrays) copies m alone:
    # its indices and updates are imported as the caller's bytes. Where the destination is
    # not an input itself (m + 1) every input is copied, as before. Rows updated by one
    # index array (AdvancedIncSubtensor1) are a kernel that reads x and writes a buffer of
    # its own on the CPU: nothing is copied. The caller's arrays never change, also where
    # one array is given as both x and y.
    x, y, i = pt.dvector("x"), pt.dvector("y"), pt.lvector("i")
    m, j = pt.dmatrix("m"), pt.lvector("j")
    rng = np.random.default_rng(3)
    vector_values = [at_offset(rng.normal(size=50), 0), at_offset(rng.normal(size=20), 0), at_offset(rng.integers(-49, 49, size=20), 0)]
    matrix_values = [at_offset(rng.normal(size=(6, 7)), 0), at_offset(rng.normal(size=20), 0),
                     at_offset(rng.integers(-6, 6, size=20), 0), at_offset(rng.integers(-7, 7, size=20), 0)]
    cases = [
        ([x, y, i], vector_values, pt.inc_subtensor(x[i], y), 0),
        ([x, y, i], vector_values, pt.inc_subtensor((x + 1)[i], y), 0),
        ([m, y, i, j], matrix_values, pt.inc_subtensor(m[i, j], y), 1),
        ([m, y, i, j], matrix_values, pt.inc_subtensor((m + 1)[i, j], y), 4),
    ]
    for inputs, values, out, copies in cases:
        f = pytensor.function(inputs, out, mode=DRIVERS[driver])
        ref = pytensor.function(inputs, out, mode=C)
        kept = [a.copy() for a in values]
        before = _core.input_copies()
        got = f(*values)
        assert _core.input_copies() - before == copies
        assert_all_same(["scatter"], [got], [ref(*values)])
        for a, b in zip(values, kept):
            np.testing.assert_array_equal(a, b)
    f = pytensor.function([x, y, i], pt.inc_subtensor(x[i], y), mode=DRIVERS[driver])
    ref = pytensor.function([x, y, i], pt.inc_subtensor(x[i], y), mode=C)
    same = at_offset(rng.normal(size=20), 0)
    kept = same.copy()
    idx = at_offset(rng.integers(-20, 20, size=20), 0)
    assert_all_same(["scatter onto its own updates"], [f(same, same, idx)], [ref(kept, kept, idx)])
    np.testing.assert_array_equal(same, kept)
