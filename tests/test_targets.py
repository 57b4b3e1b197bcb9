"""Compile-only checks of the GPU targets, on any machine: CUDA (PTX for sm_80 and sm_90
embedded), Metal (MSL source embedded, float32 only) and Vulkan targets without optional
features. Dtypes a target cannot compute are refused by name before the compiler runs."""

import numpy as np
import pytensor.tensor as pt
import pytest

import pytensor_mlir


def op_set_graph(dtype):
    """The CPU backend's op set in one graph (elementwise, Composite, DimShuffle, Dot)."""
    x = pt.vector("x", dtype=dtype)
    y = pt.vector("y", dtype=dtype)
    m = pt.matrix("m", dtype=dtype)
    outputs = [
        pt.exp(x) * y + pt.sqrt(pt.abs(x)) - pt.log(y * y + 2),
        x / y,
        x**y,
        pt.maximum(x, y),
        pt.switch(x < y, -x, pt.sqr(y)),
        pt.cast(x, "int32") // 3,
        pt.dot(m, x),
        pt.dot(m.T, m),
        m * x.dimshuffle("x", 0),
    ]
    return [x, y, m], outputs


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_embeds_ptx_for_the_arch(arch, dtype):
    inputs, outputs = op_set_graph(dtype)
    compiled = pytensor_mlir.compile_only(inputs, outputs, f"cuda:{arch}")
    assert f".target {arch}".encode() in compiled.vmfb
    assert "--iree-hal-target-device=cuda" in compiled.flags
    assert "--iree-input-demote-f64-to-f32=false" in compiled.flags
    if dtype == "float64":
        assert b".f64" in compiled.vmfb  # double-precision PTX, not demoted


def test_cuda_integers():
    x = pt.vector("x", dtype="int64")
    y = pt.vector("y", dtype="int8")
    compiled = pytensor_mlir.compile_only([x, y], [x * 3 + y, x // 7, y % 5], "cuda:sm_80")
    assert b".target sm_80" in compiled.vmfb


def test_metal_embeds_msl_source_for_float32():
    inputs, outputs = op_set_graph("float32")
    compiled = pytensor_mlir.compile_only(inputs, outputs, "metal")
    assert b"#include <metal_stdlib>" in compiled.vmfb and b"kernel void" in compiled.vmfb
    assert "--iree-metal-compile-to-metallib=false" in compiled.flags


def test_metal_integers_compile():
    x = pt.vector("x", dtype="int64")
    y = pt.vector("y", dtype="uint8")
    compiled = pytensor_mlir.compile_only([x, y], [x * 3 + y, y // 3], "metal")
    assert b"kernel void" in compiled.vmfb


@pytest.mark.parametrize("target", ["metal", "vulkan"])
def test_float64_is_refused_before_compiling(target):
    """Metal has no double; the baseline Vulkan target stands in for a device without
    shaderFloat64. Either refuses by name, and the compiler never runs."""
    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float32")
    before = pytensor_mlir.compiler_invocations()
    with pytest.raises(pytensor_mlir.UnsupportedDtypeError) as e:
        pytensor_mlir.compile_only([x, y], pt.exp(x) * y, target)
    message = str(e.value)
    assert "float64 (input x)" in message and "nothing was compiled" in message, message
    assert ("shaderFloat64" if target == "vulkan" else "Metal has no 64-bit floating-point type") in message
    assert "float32" not in message.split("Unsupported dtypes:")[1]
    assert pytensor_mlir.compiler_invocations() == before


def test_float64_made_inside_a_float32_graph_is_refused():
    x = pt.vector("x", dtype="float32")
    with pytest.raises(pytensor_mlir.UnsupportedDtypeError, match="float64"):
        pytensor_mlir.compile_only([x], pt.cast(pt.cast(x, "float64") * 2, "float32"), "metal")


def test_vulkan_integers_refused_without_the_device_features():
    x = pt.vector("x", dtype="int64")
    y = pt.vector("y", dtype="int8")
    z = pt.vector("z", dtype="uint16")
    with pytest.raises(pytensor_mlir.UnsupportedDtypeError) as e:
        pytensor_mlir.compile_only([x, y, z], [x + y, z * 2], "vulkan")
    message = str(e.value)
    assert "shaderInt64" in message and "shaderInt8" in message and "shaderInt16" in message, message


def test_vulkan_baseline_compiles_float32_and_int32():
    inputs, outputs = op_set_graph("float32")
    compiled = pytensor_mlir.compile_only(inputs, outputs, "vulkan")
    assert "hal.device.targets" in compiled.mlir
    assert "compute = fp32|int32," in compiled.mlir


def test_vulkan_with_float64_compiles_float64():
    x = pt.vector("x", dtype="float64")
    compiled = pytensor_mlir.compile_only([x], x * 2 + 1, "vulkan+float64")
    assert "fp64" in compiled.mlir


def test_unknown_target_is_a_value_error():
    x = pt.vector("x")
    with pytest.raises(ValueError, match="unknown target"):
        pytensor_mlir.compile_only([x], x * 2, "rocm")


def test_gpu_modes_are_registered():
    from pytensor.compile.mode import get_mode

    for name, driver in [("MLIR_VULKAN", "vulkan"), ("MLIR_CUDA", "cuda"), ("MLIR_METAL", "metal")]:
        assert get_mode(name).linker.driver == driver
    assert np.all(get_mode("MLIR").linker.driver == "local-sync")


@pytest.mark.parametrize("target", ["cuda:sm_80", "metal"])
def test_random_draws_compile(target):
    # Philox (32-bit integer multiplies into 64 bits) and the transforms, rejection loops
    # included, in float32 (Metal has no float64; CUDA gets the integer-count draws too).
    rng = pt.random.shared_rng(np.random.default_rng(0))
    scale = pt.scalar("scale", dtype="float32")
    rng2, x = rng.normal(0.0, scale, size=(10,), dtype="float32")
    _, g = pt.random.gamma(pt.constant(np.float32(0.5)), scale=scale, size=(10,), rng=rng2, dtype="float32", return_next_rng=True)
    outputs = [x, g]
    if target.startswith("cuda"):
        outputs.append(pt.random.poisson(3.5, size=(10,), rng=rng2, return_next_rng=True)[1])
    compiled = pytensor_mlir.compile_only([scale], outputs, target)
    assert compiled.vmfb


def test_pivoted_qr_is_refused_for_gpu_targets_by_name():
    """QR's column pivoting is the CPU's kernel only (a loop of dispatches on GPUs would
    need its pivot search and swaps as host-loop steps): refused at compile time."""
    a = pt.matrix("a", dtype="float32")
    with pytest.raises(NotImplementedError, match="pivoting=True.*CPU only"):
        pytensor_mlir.compile_only([a], pt.linalg.qr(a, pivoting=True), "vulkan")
