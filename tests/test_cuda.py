"""MLIR_CUDA with IREE's CUDA runtime driver (built in by scripts/bootstrap.sh from PyPI's
CUDA headers).

On a machine without an NVIDIA driver the first test checks that asking for the mode fails
cleanly, with an exception that says why; every other test needs a CUDA device and is
skipped, with the reason, only where there is none. They compare with the C backend like
the CPU tests do: float32 and float64 (CUDA devices have both), integers, reductions,
indexing errors, dynamic shapes, subnormals, threads, leaks."""


import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from conftest import assert_same, check, compile_both, raises_like, run_in_threads
from test_leak import grown_over

import pytensor_mlir


def cuda_devices():
    """(the CUDA devices this machine lists, None) or ([], why there are none)."""
    try:
        return pytensor_mlir.available_devices("cuda"), None
    except pytensor_mlir.IreeRuntimeError as e:
        return [], str(e).splitlines()[0]


DEVICES, WHY_NONE = cuda_devices()
needs_device = pytest.mark.skipif(not DEVICES, reason=f"no CUDA device ({WHY_NONE or 'the CUDA driver lists none'})")
CUDA = pytensor_mlir.MLIR_CUDA


def ccheck(inputs, outputs, values, **kwargs):
    return check(inputs, outputs, values, mode=CUDA, **kwargs)


@pytest.mark.skipif(bool(DEVICES), reason="this machine has a CUDA device; the tests below cover it")
def test_without_a_device_the_mode_fails_cleanly():
    # The driver is built in (the error names CUDA's driver library, not an unknown
    # driver), and compiling a function for it raises instead of crashing.
    assert "libcuda" in WHY_NONE, WHY_NONE
    x = pt.vector("x")
    with pytest.raises(pytensor_mlir.IreeRuntimeError, match="(?i)cuda"):
        pytensor.function([x], x * 2, mode="MLIR_CUDA")


@needs_device
def test_mode_reports_its_device():
    x = pt.vector("x", dtype="float32")
    f = pytensor.function([x], x * 2, mode="MLIR_CUDA")
    name, path = DEVICES[0]
    description = pytensor_mlir.device_description(f)
    assert description.startswith("cuda: ") and name in description, description
    assert "--iree-hal-target-device=cuda" in pytensor_mlir.get_flags(f)
    assert_same(f(np.arange(5, dtype="float32")), np.arange(5, dtype="float32") * 2)


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_elemwise(dtype):
    x, y, z = (pt.vector(n, dtype=dtype) for n in "xyz")
    rng = np.random.default_rng(0)
    values = [rng.uniform(-3, 3, 1000).astype(dtype) for _ in range(3)]
    values[1] = np.abs(values[1]) + 0.1
    outputs = [pt.exp(x) * y + z, pt.log(y) - pt.sqrt(y) / (x * x + 1), pt.maximum(x, z), pt.switch(x > z, x, y)]
    tol = 1e-5 if dtype == "float32" else 1e-12
    ccheck([x, y, z], outputs, values, rtol=tol, atol=tol)


@needs_device
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32"])
def test_integer_ops(dtype):
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    a = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    b = rng.integers(1, min(info.max, 1000), 64, dtype=dtype)
    ccheck([x, y], [x + y, x * y, x // y, x % y, x > y], [a, b])
    # C's maximum of int64 goes through double (2**53 and up round); numpy's is exact.
    f = pytensor.function([x, y], pt.maximum(x, y), mode=CUDA)
    assert_same(f(a, b), np.maximum(a, b))


@needs_device
def test_integer_division_by_zero_raises_like_c():
    x, y = pt.vector("x", dtype="int32"), pt.vector("y", dtype="int32")
    f, ref = compile_both([x, y], x // y, mode=CUDA)
    raises_like(f, ref, [np.arange(4, dtype="int32"), np.array([1, 0, 2, 3], dtype="int32")])


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reductions_dot_and_softmax(dtype):
    a, b = pt.matrix("a", dtype=dtype), pt.matrix("b", dtype=dtype)
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(37, 23)).astype(dtype), rng.normal(size=(23, 11)).astype(dtype)]
    outputs = [a.sum(), a.max(axis=0), a.argmax(axis=1), pt.dot(a, b), pt.special.softmax(a, axis=-1)]
    ccheck([a, b], outputs, values, rtol=1e-4 if dtype == "float32" else 1e-11)


@needs_device
def test_indexing_and_index_errors():
    x = pt.matrix("x")
    i = pt.lvector("i")
    rng = np.random.default_rng(3)
    xv = rng.normal(size=(6, 4))
    ccheck([x, i], [x[i], pt.inc_subtensor(x[i], 1.0), x[1:-1:2, ::-1]], [xv, np.array([0, 5, 5, -1])])
    f, ref = compile_both([x, i], x[i], mode=CUDA)
    raises_like(f, ref, [xv, np.array([0, 6])])


@needs_device
def test_one_compile_serves_every_length_and_shapes_are_checked():
    x, y = pt.vector("x"), pt.vector("y")
    f, ref = compile_both([x, y], x * y + 1, mode=CUDA)
    for n in (3, 5, 0, 100_000):
        v = np.linspace(-1, 1, n)
        assert_same(f(v, v), ref(v, v))
    raises_like(f, ref, [np.ones(3), np.ones(4)])


@needs_device
@pytest.mark.parametrize("dtype, tiny", [("float32", 1.17549435e-38), ("float64", 2.2250738585072014e-308)])
def test_subnormals(dtype, tiny):
    # What the device does with subnormals is what the README's table reports; this test
    # fails if it differs from the C backend (then the table and this test change together).
    x = pt.vector("x", dtype=dtype)
    ccheck([x], [x * np.asarray(0.5, dtype=dtype)], [np.array([tiny, -tiny], dtype=dtype)], rtol=0)


@needs_device
def test_threads():
    x = pt.vector("x")
    f, ref = compile_both([x], pt.exp(x) * 2, mode=CUDA)
    values = [np.linspace(-1, 1, 1000 + k) for k in range(8)]
    results = [None] * len(values)

    def run(k):
        for _ in range(20):
            results[k] = f(values[k])

    errors = run_in_threads(run, len(values))
    assert not errors, errors
    for k, v in enumerate(values):
        assert_same(results[k], ref(v))


@needs_device
def test_no_leak_small_calls():
    x = pt.vector("x", dtype="float32")
    f = pytensor.function([x], x + 1, mode=CUDA)
    v = np.ones(10, dtype="float32")
    assert grown_over(lambda: f(v), warmup=1_000, calls=10_000) < 5 * 2**20
