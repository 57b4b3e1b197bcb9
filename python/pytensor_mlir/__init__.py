"""pytensor-mlir: an MLIR backend for PyTensor, compiled and run by IREE from a Rust core.

``import pytensor_mlir`` registers ``mode="MLIR"`` (the host CPU, on the calling thread),
``"MLIR_THREADS"`` (the host CPU on a worker per core) and the GPU modes
``"MLIR_VULKAN"``, ``"MLIR_CUDA"`` and ``"MLIR_METAL"``; ``pytensor_mlir.MLIR`` (and
``MLIR_VULKAN``, ...) are the same ``Mode`` objects, for ``pytensor.config.mode`` or
``pytensor.function(..., mode=...)``. ``mlir_mode(driver, device)`` makes one for a chosen
device.
"""

from pytensor_mlir import _core
from pytensor_mlir._core import IreeRuntimeError, UnsupportedDtypeError
from pytensor_mlir.linker import CompiledModule, CompileOnlyLinker, MLIRLinker
from pytensor_mlir.mode import MLIR, MLIR_CUDA, MLIR_METAL, MLIR_THREADS, MLIR_VULKAN, mlir_mode


def compiler_invocations():
    """How many times this process has run the IREE compiler (disk-cache hits excluded)."""
    return _core.compiler_invocations()


def get_mlir(fn):
    """The MLIR text of a PyTensor function compiled with an MLIR mode."""
    return fn.maker.linker.compiled.mlir


def get_flags(fn):
    """The IREE compiler flags a PyTensor function compiled with an MLIR mode was built with."""
    return fn.maker.linker.compiled.flags


def device_description(fn):
    """The device a PyTensor function compiled with an MLIR mode runs on: the driver, the
    device's name and path, e.g. ``"vulkan: llvmpipe (LLVM 15.0.6, 256 bits) [path ...]"``."""
    return fn.maker.linker.compiled.device


def available_devices(driver):
    """The devices IREE's `driver` ("vulkan", "cuda", ...) finds here, as (name, path)
    pairs in ordinal order. Raises IreeRuntimeError if this build or machine has no such
    driver (no Vulkan loader, no CUDA library, ...)."""
    return _core.available_devices(driver)


def compile_only(inputs, outputs, target, **kwargs):
    """Compiles a graph for `target` ("cuda:sm_80", "cuda:sm_90", "metal", "vulkan",
    "vulkan+float64", "llvm-cpu") with the MLIR modes' rewrites, without a device.
    Returns a CompiledModule (vmfb bytes, the MLIR and the flags)."""
    import pytensor
    from pytensor.compile.mode import Mode
    from pytensor.graph.rewriting.db import RewriteDatabaseQuery

    mode = Mode(CompileOnlyLinker(target), RewriteDatabaseQuery(include=["fast_run"]))
    return pytensor.function(inputs, outputs, mode=mode, **kwargs).maker.linker.compiled


__all__ = [
    "MLIR",
    "MLIR_CUDA",
    "MLIR_METAL",
    "MLIR_THREADS",
    "MLIR_VULKAN",
    "CompiledModule",
    "CompileOnlyLinker",
    "IreeRuntimeError",
    "MLIRLinker",
    "UnsupportedDtypeError",
    "available_devices",
    "compile_only",
    "compiler_invocations",
    "device_description",
    "get_flags",
    "get_mlir",
    "mlir_mode",
]
