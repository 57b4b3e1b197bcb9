"""MLIRLinker: PyTensor's JITLinker, handing the whole FunctionGraph to the Rust core."""

import json
from dataclasses import dataclass

from pytensor.link.basic import JITLinker
from pytensor.link.utils import raise_with_op

from pytensor.tensor.random.type import RandomGeneratorType

from pytensor_mlir import _core, fusion, random, rewrites
from pytensor_mlir.export import export_fgraph


class MLIRLinker(JITLinker):
    """Compiles a FunctionGraph to one MLIR function, run by IREE in process.

    ``driver`` is IREE's runtime driver ("local-sync", "local-task", "vulkan", "cuda",
    "metal"); the Rust core picks the compiler target that goes with it. ``device``
    selects one of the driver's devices: an ordinal (``0``, ``"1"``) or a driver-specific
    path (see :func:`pytensor_mlir.available_devices`); ``None`` takes the default one.
    """

    # pytensor_mlir.rewrites: rewrites for this backend alone, under a tag of their own.
    required_rewrites = ("minimum_compile", rewrites.TAG)
    incompatible_rewrites = (
        # C-only Ops and the BLAS rewrites (Gemm, Gemv, Dot22Scalar...) that target them:
        # linalg's contractions already fuse and tile what BLAS would do.
        "cxx_only",
        "BlasOpt",
        # CAReduce fused into Elemwise only pays for the C backend's loops.
        "local_careduce_fusion",
        # The lowering is functional (tensors are values): destroy maps mean nothing here.
        "inplace",
        # The late inlining of AllocDiag, XLogY and XLog1PY: AllocDiag has a lowering rule
        # of its own, while its inner graph is a set_subtensor through several index
        # arrays, which is not lowered; XLogY and XLog1PY are lowered whole through their
        # inner graphs (the OpFromGraph rule), out of reach of the rewrites PyTensor keeps
        # them from.
        "inline_ofg",
    )

    def __init__(self, driver="local-sync", device=None, **kwargs):
        super().__init__(**kwargs)
        # The rewrites that keep its dispatches within its runtime's bounds.
        self.required_rewrites = (*type(self).required_rewrites, fusion.tag(driver))
        self.driver = driver
        self.device = None if device is None else str(device)
        self.compiled = None

    @property
    def mlir(self):
        """The MLIR text of the compiled function (None before compilation)."""
        return None if self.compiled is None else self.compiled.mlir

    def fgraph_convert(self, fgraph, input_storage, storage_map, **kwargs):
        from pytensor_mlir._compiler import compiler_library

        exported = json.dumps(export_fgraph(fgraph))
        self.compiled = _core.compile_graph(exported, self.driver, compiler_library(), self.device)
        return self.compiled

    def jit_compile(self, fn):
        return fn

    def create_thunk_inputs(self, storage_map):
        return [storage_map[n] for n in self.fgraph.inputs]

    def create_jitable_thunk(self, compute_map, order, input_storage, output_storage, storage_map):
        """JITLinker's thunk, but with the storage cells read and written in Rust.

        The generic thunk unpacks the input cells into a call and stores each result back
        in Python (about a microsecond per call); ``run_cells`` does both on the Rust side,
        and the thunk returns the outputs so that ``Function`` need not collect them again.
        """
        thunks, output_nodes, jit_fn = super().create_jitable_thunk(
            compute_map, order, input_storage, output_storage, storage_map
        )
        [generic] = thunks
        run = getattr(jit_fn, "run_cells", None)
        if run is None or not generic.outputs:
            return thunks, output_nodes, jit_fn
        fgraph = self.fgraph
        run = _with_generators(run, fgraph)

        def thunk(run=run, inputs=generic.inputs, outputs=generic.outputs):
            try:
                return run(inputs, outputs)
            except Exception:
                if not output_nodes:
                    raise
                raise_with_op(fgraph, output_nodes[0], thunk)

        thunk.inputs = generic.inputs
        thunk.outputs = generic.outputs
        thunk.lazy = False
        return [thunk], output_nodes, jit_fn


def _with_generators(run, fgraph):
    """`run` (run_cells), with the graph's random generators passed as their keys' words
    and returned as new Generators (pytensor_mlir.random); `run` itself where it has none."""
    is_rng = [isinstance(v.type, RandomGeneratorType) for v in fgraph.inputs]
    out_rng = [k for k, v in enumerate(fgraph.outputs) if isinstance(v.type, RandomGeneratorType)]
    if not any(is_rng) and not out_rng:
        return run

    def run_with_generators(inputs, outputs):
        cells = [[random.key_of(c[0])] if r else c for c, r in zip(inputs, is_rng)]
        results = run(cells, outputs)
        for k in out_rng:
            results[k] = outputs[k][0] = random.generator_of(results[k])
        return results

    return run_with_generators


@dataclass(frozen=True)
class CompiledModule:
    """A graph compiled for a target without a device: nothing can run it here."""

    target: str
    vmfb: bytes
    mlir: str
    flags: list

    def __call__(self, *args):
        raise RuntimeError(f"compiled for target {self.target!r} only: there is no device to run it")


class CompileOnlyLinker(MLIRLinker):
    """Compiles for ``target`` ("cuda:sm_90", "metal", "vulkan", ...) with the MLIR modes'
    rewrites, without any device: for checking what a GPU target accepts on any machine."""

    def __init__(self, target, **kwargs):
        super().__init__(**kwargs)
        self.target = target
        self.required_rewrites = (*MLIRLinker.required_rewrites, fusion.tag("local" if target == "llvm-cpu" else target))

    def fgraph_convert(self, fgraph, input_storage, storage_map, **kwargs):
        from pytensor_mlir._compiler import compiler_library

        exported = json.dumps(export_fgraph(fgraph))
        vmfb, mlir, flags = _core.compile_for_target(exported, self.target, compiler_library())
        self.compiled = CompiledModule(self.target, bytes(vmfb), mlir, list(flags))
        return self.compiled
