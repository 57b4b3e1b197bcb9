"""The MLIR modes, registered with PyTensor."""

from pytensor.compile.mode import Mode, register_mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery

from pytensor_mlir.linker import MLIRLinker


def _mode(driver):
    # fast_run's rewrites (fusion into Composite included), less what MLIRLinker declares
    # incompatible; the linker adds those exclusions itself.
    return Mode(MLIRLinker(driver=driver), RewriteDatabaseQuery(include=["fast_run"]))


MLIR = _mode("local-sync")

register_mode("MLIR", MLIR)
