"""pytensor-mlir: an MLIR backend for PyTensor, compiled and run by IREE from a Rust core.

``import pytensor_mlir`` registers ``mode="MLIR"``; ``pytensor_mlir.MLIR`` is the same
``Mode`` object, for ``pytensor.config.mode`` or ``pytensor.function(..., mode=...)``.
"""

from pytensor_mlir import _core
from pytensor_mlir.linker import MLIRLinker
from pytensor_mlir.mode import MLIR


def compiler_invocations():
    """How many times this process has run the IREE compiler (disk-cache hits excluded)."""
    return _core.compiler_invocations()


def get_mlir(fn):
    """The MLIR text of a PyTensor function compiled with an MLIR mode."""
    return fn.maker.linker.compiled.mlir


def get_flags(fn):
    """The IREE compiler flags a PyTensor function compiled with an MLIR mode was built with."""
    return fn.maker.linker.compiled.flags


__all__ = ["MLIR", "MLIRLinker", "compiler_invocations", "get_flags", "get_mlir"]
