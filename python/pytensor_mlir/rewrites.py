"""Rewrites only the MLIR modes run: registered in PyTensor's optdb under the tag
``"mlir"`` alone, which MLIRLinker requires (so every Mode with an MLIRLinker runs them)
and no other linker does."""

from pytensor.compile import optdb
from pytensor.graph.rewriting.basic import node_rewriter
from pytensor.tensor.einsum import Einsum
from pytensor.tensor.rewriting.ofg import inline_ofg_node

# The tag of this module's rewrites; in MLIRLinker.required_rewrites.
TAG = "mlir"


@node_rewriter([Einsum])
def inline_unoptimized_einsum(fgraph, node):
    """Inlines an `Einsum` whose contraction order PyTensor could not choose.

    PyTensor inlines an einsum's inner graph (`inline_optimized_einsum`) only once it has
    chosen a contraction path, which needs every operand's static shape; an einsum of
    three or more operands with a dynamic shape stays an `OpFromGraph`. Its inner graph
    is still a valid one (contracting left to right), made of the `Dot`, `BatchedDot`,
    reshapes and transposes this backend lowers, so the MLIR modes inline it too rather
    than leave an Op without a lowering.
    """
    if node.op.optimized:
        return None  # PyTensor's own rewrite inlines these
    return inline_ofg_node(node)


optdb["specialize"].register("mlir_inline_unoptimized_einsum", inline_unoptimized_einsum, TAG)
