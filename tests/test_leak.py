"""Nothing leaks per call (the spike's blocker 2): resident memory stays flat over many
calls once warm."""

import gc

import numpy as np
import pytensor
import pytensor.tensor as pt
from conftest import MLIR

from pytensor_mlir import _core


def rss_bytes():
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    import os

    return pages * os.sysconf("SC_PAGE_SIZE")


def grown_over(call, warmup, calls):
    for _ in range(warmup):
        call()
    gc.collect()
    before = rss_bytes()
    for _ in range(calls):
        call()
    gc.collect()
    return rss_bytes() - before


def test_small_calls_do_not_leak():
    x = pt.vector("x")
    y = pt.vector("y")
    f = pytensor.function([x, y], [x + y * 2, pt.exp(x)], mode=MLIR)
    a, b = np.arange(10.0), np.ones(10)
    grown = grown_over(lambda: f(a, b), warmup=1_000, calls=100_000)
    assert grown < 5 * 2**20, f"RSS grew {grown / 2**20:.2f} MiB over 100,000 calls"


def test_large_calls_do_not_leak():
    x = pt.vector("x")
    y = pt.vector("y", dtype="float32")
    f = pytensor.function([x, y], pt.exp(x) * y, mode=MLIR)
    # One input aligned (imported in place), one misaligned (copied): both paths. A
    # float32 slice 4 bytes past numpy's 16-byte alignment is less aligned than the
    # compiled code assumes (8 bytes), so it is copied.
    a = f(np.zeros(1_000_000), np.ones(1_000_000, dtype="float32"))
    b = np.ones(1_000_001, dtype="float32")[1:]
    assert b.ctypes.data % 8 == 4
    copies = _core.input_copies()
    grown = grown_over(lambda: f(a, b), warmup=50, calls=2_000)
    assert _core.input_copies() > copies
    assert grown < 5 * 2**20, f"RSS grew {grown / 2**20:.2f} MiB over 2,000 calls of 1e6 elements"


def test_failing_calls_do_not_leak():
    x = pt.vector("x", dtype="int64")
    f = pytensor.function([x], x // x, mode=MLIR)
    a = np.array([1, 0] * 50)

    def call():
        try:
            f(a)
        except ZeroDivisionError:
            pass
        else:
            raise AssertionError("division by zero did not raise")

    grown = grown_over(call, warmup=500, calls=20_000)
    assert grown < 5 * 2**20, f"RSS grew {grown / 2**20:.2f} MiB over 20,000 failing calls"
