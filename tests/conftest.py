"""Shared helpers: the MLIR mode against PyTensor's own C backend, on the same inputs."""

import os
import tempfile
import threading

# A cache of our own, so that tests counting compiler invocations start from nothing and
# nothing a previous run compiled decides a result. Set before any compile, and anew in
# every pytest-xdist worker (a worker inherits the controller's environment): a graph that
# another worker cached would otherwise load from disk where a test counts a compile.
os.environ["PYTENSOR_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="pytensor-mlir-test-cache-")

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import get_mode

import pytensor_mlir

MLIR = pytensor_mlir.MLIR
# PyTensor's C backend (cvm linker, fast_run rewrites): the reference for every result.
C = get_mode("CVM")
# PyTensor 3's default mode is Numba's, and the C backend compiles in it the inner graphs it
# runs as functions: OpFromGraph's (Pad, solve_sylvester, solve_discrete_are, ...) and the
# Scans inside them. On an empty compile cache (every fresh CI machine) Numba took minutes a
# graph (test_pad: 380 of its 494 s); with this the reference is the C backend all through.
pytensor.config.mode = "CVM"


def vulkan_devices():
    """(the Vulkan devices this machine lists, None) or ([], why there are none)."""
    try:
        return pytensor_mlir.available_devices("vulkan"), None
    except pytensor_mlir.IreeRuntimeError as e:
        return [], str(e).splitlines()[0]


def compile_both(inputs, outputs, mode=MLIR, reference=C, **kwargs):
    """The same graph compiled with the MLIR mode and with the reference mode."""
    return (
        pytensor.function(inputs, outputs, mode=mode, **kwargs),
        pytensor.function(inputs, outputs, mode=reference, **kwargs),
    )


def assert_same(got, want, rtol=None, atol=0.0, err_msg=""):
    """Equal dtype and shape, and equal values: bit-for-bit for integers and bools,
    allclose for floats (nan where nan, infinities and signed zeros compared too)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{err_msg}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{err_msg}: shape {got.shape} != {want.shape}"
    if got.dtype.kind == "f":
        if rtol is None:
            rtol = 1e-6 if got.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=err_msg)
        # assert_allclose treats inf == inf; require the same sign of infinities and zeros.
        same_inf = np.isinf(got) == np.isinf(want)
        assert same_inf.all(), f"{err_msg}: infinities differ"
        zeros = (got == 0) & (want == 0)
        assert (np.signbit(got[zeros]) == np.signbit(want[zeros])).all(), f"{err_msg}: signed zeros differ"
    else:
        np.testing.assert_array_equal(got, want, err_msg=err_msg)


def assert_all_same(names, got, want):
    """`assert_same` on every named output before failing, so one run names every output
    that differs."""
    failures = []
    for name, g, w in zip(names, got, want):
        try:
            assert_same(g, w, err_msg=name)
        except AssertionError as e:
            failures.append(str(e).strip())
    assert not failures, f"{len(failures)} of {len(names)} outputs differ:\n\n" + "\n\n".join(failures)


def check(inputs, outputs, values, mode=MLIR, reference=C, rtol=None, atol=0.0, **kwargs):
    """Compiles with both modes, runs on `values`, and compares every output."""
    f, ref = compile_both(inputs, outputs, mode=mode, reference=reference, **kwargs)
    got, want = f(*values), ref(*values)
    if not isinstance(outputs, (list, tuple)):
        got, want = [got], [want]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")
    return f


def raises_like(f, ref, values):
    """Both functions raise the same exception type on `values`; returns both exceptions."""
    with pytest.raises(Exception) as want:
        ref(*values)
    with pytest.raises(want.type) as got:
        f(*values)
    return got.value, want.value


def scalar_op_names(f):
    """The scalar ops of f's Elemwise nodes, those inside Composites included."""
    names = set()
    for node in f.maker.fgraph.apply_nodes:
        op = getattr(node.op, "scalar_op", None)
        names.add(type(op).__name__)
        if type(op).__name__ == "Composite":
            names |= {type(n.op).__name__ for n in op.fgraph.apply_nodes}
    return names


def run_in_threads(work, count):
    """`work(i)` for i in range(count), each in a thread of its own, all at once; the
    exceptions they raised (an assertion failing in a thread is otherwise only printed)."""
    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as e:  # noqa: BLE001 - returned to the caller
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


# The smallest normal number and half of it (a subnormal), per float dtype.
SUBNORMAL_CASES = [("float32", 1.17549435e-38, 5.877472e-39), ("float64", 2.2250738585072014e-308, 1.1125369292536007e-308)]


def assert_subnormals_kept(mode, dtype, tiny, half, where="the mode"):
    """x * y in `mode` keeps a subnormal result (not flushed to zero) and reads subnormal
    inputs as they are (no denormals-are-zero)."""
    x = pt.vector("x", dtype=dtype)
    y = pt.vector("y", dtype=dtype)
    f = pytensor.function([x, y], x * y, mode=mode)
    got = f(np.array([tiny, 1.0], dtype=dtype), np.array([0.5, 0.5], dtype=dtype))
    assert got[0] == np.array(half, dtype=dtype) and got[0] != 0, f"{got[0]!r}: {where} flushed a {dtype} subnormal result"
    got = f(np.array([half, half], dtype=dtype), np.array([2.0, 1.0], dtype=dtype))
    assert got[0] == np.array(tiny, dtype=dtype) and got[1] == np.array(half, dtype=dtype), f"{got!r}: {where} read a {dtype} subnormal input as zero"
