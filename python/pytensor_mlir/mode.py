"""The MLIR modes, registered with PyTensor: one per IREE runtime driver."""

from pytensor.compile.mode import Mode, register_mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery

from pytensor_mlir.linker import MLIRLinker


def mlir_mode(driver="local-sync", device=None):
    """A mode that runs on `device` (an ordinal or a path; None: the default one) of the
    IREE driver `driver`. fast_run's rewrites (fusion into Composite included), less what
    MLIRLinker declares incompatible; the linker adds those exclusions itself."""
    return Mode(MLIRLinker(driver=driver, device=device), RewriteDatabaseQuery(include=["fast_run"]))


# The host CPU (llvm-cpu), on the calling thread: the cheapest calls.
MLIR = mlir_mode("local-sync")
# The host CPU on IREE's task system (a worker per core): large kernels (matmuls, big
# reductions) split across the cores, at about 60 us more per call.
MLIR_THREADS = mlir_mode("local-task")
# The default Vulkan device (vulkan-spirv, targeted at the device's reported features).
MLIR_VULKAN = mlir_mode("vulkan")
# The default CUDA device (PTX for its compute capability); needs a build with `cuda`.
MLIR_CUDA = mlir_mode("cuda")
# The default Metal device (metal-spirv, float32 only); needs a macOS build.
MLIR_METAL = mlir_mode("metal")

register_mode("MLIR", MLIR)
register_mode("MLIR_THREADS", MLIR_THREADS)
register_mode("MLIR_VULKAN", MLIR_VULKAN)
register_mode("MLIR_CUDA", MLIR_CUDA)
register_mode("MLIR_METAL", MLIR_METAL)
