"""MLIRLinker: PyTensor's JITLinker, handing the whole FunctionGraph to the Rust core."""

import json

from pytensor.link.basic import JITLinker

from pytensor_mlir import _core
from pytensor_mlir.export import export_fgraph


class MLIRLinker(JITLinker):
    """Compiles a FunctionGraph to one MLIR function, run by IREE in process."""

    required_rewrites = ("minimum_compile",)
    incompatible_rewrites = (
        # C-only Ops and the BLAS rewrites (Gemm, Gemv, Dot22Scalar...) that target them:
        # linalg's contractions already fuse and tile what BLAS would do.
        "cxx_only",
        "BlasOpt",
        # CAReduce fused into Elemwise only pays for the C backend's loops.
        "local_careduce_fusion",
        "scan_reduce_trace_prealloc",
        # The lowering is functional (tensors are values): destroy maps mean nothing here.
        "inplace",
    )

    def __init__(self, driver="local-sync", **kwargs):
        super().__init__(**kwargs)
        self.driver = driver
        self.compiled = None

    @property
    def mlir(self):
        """The MLIR text of the compiled function (None before compilation)."""
        return None if self.compiled is None else self.compiled.mlir

    def fgraph_convert(self, fgraph, input_storage, storage_map, **kwargs):
        from pytensor_mlir._compiler import compiler_library

        exported = json.dumps(export_fgraph(fgraph))
        self.compiled = _core.compile_graph(exported, self.driver, compiler_library())
        return self.compiled

    def jit_compile(self, fn):
        return fn

    def create_thunk_inputs(self, storage_map):
        return [storage_map[n] for n in self.fgraph.inputs]
