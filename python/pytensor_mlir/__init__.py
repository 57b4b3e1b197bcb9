"""pytensor-mlir: an MLIR backend for PyTensor, compiled and run by IREE from a Rust core.

``import pytensor_mlir`` registers ``mode="MLIR"``.
"""

from pytensor_mlir import _core
from pytensor_mlir.linker import MLIRLinker
from pytensor_mlir.mode import MLIR


def compiler_invocations():
    """How many times this process has run the IREE compiler (cache hits excluded)."""
    return _core.compiler_invocations()


def get_mlir(fn):
    """The MLIR text of a function compiled with an MLIR mode."""
    return fn.maker.linker.mlir


__all__ = ["MLIR", "MLIRLinker", "compiler_invocations", "get_mlir"]
