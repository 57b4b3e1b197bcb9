"""The runtime path: IEEE subnormals, FPU state, zero-copy and copied inputs, results that
own their memory, threads and the GIL."""

import ctypes
import threading

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from conftest import MLIR, SUBNORMAL_CASES, assert_same, assert_subnormals_kept, check, run_in_threads

from pytensor_mlir import _core


@pytest.mark.parametrize("dtype, tiny, half", SUBNORMAL_CASES)
def test_subnormal_results_are_kept(dtype, tiny, half):
    assert_subnormals_kept(MLIR, dtype, tiny, half)


def _mxcsr():
    """The calling thread's x86 MXCSR, read with stmxcsr through a tiny ctypes thunk."""
    import mmap

    code = bytes([0x0F, 0xAE, 0x1F, 0xC3])  # stmxcsr [rdi]; ret
    buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    fn = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint32))(addr)
    value = ctypes.c_uint32()
    fn(ctypes.byref(value))
    del fn
    return value.value


@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="reads the x86 MXCSR register")
def test_callers_fpu_state_is_unchanged_by_a_call():
    x = pt.vector("x")
    f = pytensor.function([x], x * 0.5, mode=MLIR)
    before = _mxcsr()
    f(np.array([2.2250738585072014e-308]))
    assert _mxcsr() == before


def test_aligned_contiguous_inputs_are_not_copied():
    x = pt.vector("x")
    y = pt.vector("y")
    f = pytensor.function([x, y], x + y, mode=MLIR)
    # Results of a compiled function are IREE's 64-byte aligned buffers: feeding them
    # back in takes the zero-copy path.
    a = f(np.arange(1000.0), np.ones(1000))
    b = f(np.ones(1000), np.ones(1000))
    assert a.ctypes.data % 64 == 0 and b.ctypes.data % 64 == 0
    before = _core.input_copies()
    out = f(a, b)
    assert _core.input_copies() == before
    assert_same(out, np.arange(1000.0) + 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a[::2],  # strided
        lambda a: a[::-1],  # negative stride
        lambda a: np.broadcast_to(a[:1], a.shape),  # zero stride
        lambda a: a[1:],  # contiguous but 8 bytes past the 64-byte boundary: copied
        lambda a: np.asfortranarray(np.stack([a, a + 1])).T.T[0],
    ],
    ids=["strided", "negative", "zero-stride", "offset", "fortran-row"],
)
def test_any_strides_give_correct_results(make):
    x = pt.vector("x")
    f = pytensor.function([x], x * 2 + 1, mode=MLIR)
    base = np.arange(17.0)
    a = make(base)
    assert_same(f(a), a * 2 + 1)


def test_matrix_strides():
    m = pt.matrix("m")
    v = pt.vector("v")
    values = np.arange(24.0).reshape(4, 6)
    check([m, v], m * v, [values.T, np.arange(4.0)])
    check([m, v], m * v, [values[::-1, ::2], np.arange(3.0)])


def test_results_do_not_alias_inputs_or_each_other():
    x = pt.vector("x")
    f = pytensor.function([x], [x, x * 1, pt.as_tensor_variable(np.arange(3.0))], mode=MLIR)
    a = np.arange(3.0)
    r0, r1, r2 = f(a)
    assert not np.shares_memory(r0, a) and not np.shares_memory(r1, a)
    r0[:] = -1
    r2[:] = -1
    assert_same(a, np.arange(3.0))
    # A constant output stays what it was on the next call.
    _, _, again = f(a)
    assert_same(again, np.arange(3.0))


def test_results_outlive_the_function():
    x = pt.vector("x")
    f = pytensor.function([x], pt.exp(x), mode=MLIR)
    out = f(np.zeros(1000))
    del f
    import gc

    gc.collect()
    assert_same(out, np.ones(1000))


def test_compiled_object_is_safe_from_many_threads():
    x = pt.vector("x")
    y = pt.vector("y")
    f = pytensor.function([x, y], pt.exp(x) * y + x, mode=MLIR)
    compiled = f.maker.linker.compiled

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            n = int(rng.integers(0, 300))
            a, b = rng.normal(size=n), rng.normal(size=n)
            (got,) = compiled(a, b)
            np.testing.assert_allclose(got, np.exp(a) * b + a, rtol=1e-12, atol=1e-12)

    errors = run_in_threads(work, 8)
    assert not errors, errors


def test_functions_of_one_graph_in_many_threads():
    x = pt.vector("x")
    out = pt.sqrt(x) + 1
    fns = [pytensor.function([x], out, mode=MLIR) for _ in range(4)]
    results = {}

    def work(i):
        a = np.arange(i * 100, dtype="float64")
        for _ in range(100):
            r = fns[i](a)
        results[i] = (a, r)

    errors = run_in_threads(work, 4)
    assert not errors, errors
    for a, r in results.values():
        assert_same(r, np.sqrt(a) + 1)


def test_gil_is_released_during_a_call():
    import sys
    import time

    x = pt.vector("x")
    # gammaln keeps the call long enough to measure (exp alone is vector code now, a few ms).
    f = pytensor.function([x], pt.exp(pt.sqrt(pt.exp(x) + 1) * 0.5) + pt.sqrt(x * x + 2) + pt.gammaln(x + 1), mode=MLIR)
    compiled = f.maker.linker.compiled
    a = np.random.default_rng(0).random(4_000_000)
    compiled(a)  # warm up
    stamps = []
    done = threading.Event()

    def spin():
        while not done.is_set():
            stamps.append(time.perf_counter())

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    t = threading.Thread(target=spin)
    t.start()
    try:
        while not stamps:
            time.sleep(0.001)
        t0 = time.perf_counter()
        compiled(a)
        t1 = time.perf_counter()
    finally:
        done.set()
        t.join()
        sys.setswitchinterval(old_interval)
    inside = [s for s in stamps if t0 < s < t1]
    # Holding the GIL, the other thread could run at most one switch interval (1 ms)
    # between the t0 stamp and the call; released, it runs through the whole call.
    covered = (inside[-1] - inside[0]) if len(inside) > 1 else 0.0
    assert t1 - t0 > 0.02, "the call is too short to tell"
    assert covered > 0.5 * (t1 - t0), f"other thread ran {covered:.4f} s of a {t1 - t0:.4f} s call"


def test_threaded_cpu_mode():
    """mode="MLIR_THREADS" (local-task, the full HAL) gives the C backend's results on
    work that its workers split: a matmul, reductions, an elementwise chain, a scatter-add;
    and its bad input raises as in mode="MLIR"."""
    import pytensor_mlir

    assert pytensor_mlir.MLIR_THREADS.linker.driver == "local-task"
    a, b, idx, v = pt.dmatrix("a"), pt.dmatrix("b"), pt.lvector("idx"), pt.dvector("v")
    outs = [a @ b, a.sum(axis=0), (pt.exp(a) * 2 - b).max(axis=1), pt.inc_subtensor(v[idx], 1.0)]
    f = pytensor.function([a, b, idx, v], outs, mode="MLIR_THREADS")
    ref = pytensor.function([a, b, idx, v], outs, mode="FAST_RUN")
    rng = np.random.default_rng(3)
    for n in [1, 7, 300]:
        args = [rng.normal(size=(n, n)), rng.normal(size=(n, n)), rng.integers(-n, n, 5 * n), rng.normal(size=n)]
        for got, want in zip(f(*args), ref(*args)):
            assert_same(got, want, rtol=1e-12, atol=1e-12 * n)
    with pytest.raises(IndexError):
        f(np.ones((2, 2)), np.ones((2, 2)), np.array([2]), np.ones(2))
