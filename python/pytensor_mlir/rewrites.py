"""Rewrites only the MLIR modes run: registered in PyTensor's optdb under the tag
``"mlir"`` alone, which MLIRLinker requires (so every Mode with an MLIRLinker runs them)
and no other linker does."""

import numpy as np
import pytensor.tensor as pt
from pytensor.compile import optdb
from pytensor.compile.builders import OpFromGraph
from pytensor.graph.basic import Constant
from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter
from pytensor.scan.op import Scan
from pytensor.tensor.basic import Choose
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.type import discrete_dtypes
from pytensor.tensor.einsum import Einsum
from pytensor.tensor.pad import Pad
from pytensor.tensor.rewriting.ofg import inline_ofg_node
from pytensor.tensor.shape import Shape, Shape_i
from pytensor.typed_list.basic import MakeList
from pytensor.graph.rewriting.basic import copy_stack_trace
from pytensor.raise_op import CheckAndRaise
from pytensor.scalar.math import BetaInc
from pytensor.tensor.elemwise import Elemwise
from pytensor.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, indices_from_subtensor
from pytensor.tensor.variable import TensorVariable

from pytensor_mlir import export, fusion

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


@node_rewriter([OpFromGraph])
def inline_plain_op_from_graph(fgraph, node):
    """Inlines every plain `OpFromGraph` (PyTensor inlines only those built with
    `inline=True`).

    Gradients of some Ops are plain `OpFromGraph`s that PyTensor keeps (an einsum's
    gradient, for one). Lowered as a node, its inner graph would miss the `fast_run`
    rewrites the rest of the graph gets (shape arithmetic folded into dims checkable before
    the call, `Blockwise` turned into `Dot`), and be refused; inlined before the rewrites
    run, it is optimized with the rest. Subclasses are left to PyTensor: its symbolic Ops
    (`Softmax`, `XLogY`, `AllocDiag`, ...) are kept whole on purpose, to be rewritten into
    dedicated Ops or inlined late, after rewrites that are unsafe on their inner graphs
    (PyTensor's note on `XLogY`); they reach the `OpFromGraph` lowering rule, or a rule of
    their own, whole.
    """
    if type(node.op) is not OpFromGraph:
        return None
    forward = export.pullback_of(node)
    if isinstance(forward, Pad) and forward.pad_mode == "edge":
        # Kept whole for the core's rule (lower/pad.rs): PyTensor 3.0.7's pullback graph for
        # edge increments a region by a value of another length (a wrong gradient for any
        # width above 1, which the C backend computes silently).
        return None
    if any(isinstance(n.op, Scan) for n in node.op.fgraph.apply_nodes):
        # Scan is not lowered: kept whole, the node can still reach a rule by what it is
        # the pullback of (`pad`'s reflect and symmetric modes, see export.pullback_of).
        return None
    return inline_ofg_node(node)


# Right after PyTensor's own inlining of inline=True OpFromGraphs (position -0.01), before
# canonicalization.
optdb.register("mlir_inline_plain_op_from_graph", dfs_rewriter(inline_plain_op_from_graph), TAG, position=-0.009)


@node_rewriter([Shape])
def shape_of_reflecting_pad(fgraph, node):
    """`x.shape + pad_width.sum(-1)` for the shape of a `pad` in mode reflect or
    symmetric, which the core lowers by a rule of its own.

    PyTensor infers an `OpFromGraph`'s output shape from its inner graph, which for these
    modes holds a `Scan`: a graph that uses the shape (`arange(y.shape[1])`) would get the
    `Scan` back, and be refused. Run before PyTensor's shape rewrites take the shape from
    there.
    """
    (y,) = node.inputs
    pad = y.owner
    if pad is None or type(pad.op).__name__ != "Pad" or getattr(pad.op, "pad_mode", None) not in ("reflect", "symmetric"):
        return None
    x, widths = pad.inputs[:2]
    if isinstance(widths, Constant):
        # Known widths: x.shape[k] + constant, dims the core checks before the call.
        widths = np.broadcast_to(widths.data, (x.ndim, 2)).sum(axis=1).tolist()
    else:
        widths = pt.broadcast_to(widths, (x.ndim, 2)).sum(axis=1)
    dims = [x.shape[k] + widths[k] for k in range(x.ndim)]
    return [pt.cast(pt.stack(dims) if dims else pt.zeros((0,), "int64"), node.outputs[0].dtype)]


# Right after the plain OpFromGraphs are inlined, before any rewrite that brings in shape
# inference (the scan rewrites at 0.05, ShapeOpt at 0.1).
optdb.register("mlir_shape_of_reflecting_pad", dfs_rewriter(shape_of_reflecting_pad), TAG, position=-0.008)


@node_rewriter([Choose])
def choose_of_a_list(fgraph, node):
    """`choose(a, stack(broadcast_arrays(*choices)))` for a `choose` whose choices are a
    Python list (PyTensor makes it a `TypedList`, which the core does not lower).

    numpy's `choose` turns the list into one array: the choices stacked, then broadcast
    with `a` by the tensor form of the Op. PyTensor types the list form's output with
    `a`'s dimensions only; choices of more dimensions than `a` (where numpy's result would
    have more) are left alone (and refused).
    """
    a, choices = node.inputs
    if choices.owner is None or not isinstance(choices.owner.op, MakeList):
        return None
    items = choices.owner.inputs
    if not items or items[0].ndim > a.ndim:
        return None
    # MakeList holds items of one type. Their lengths may still differ at run time: the
    # stack raises ValueError there, by PyTensor's rule that only a dim of static length 1
    # broadcasts (numpy's choose would broadcast a length-1 choice).
    stacked = pt.stack(items)
    out = node.op(a, stacked)
    return [node.outputs[0].type.filter_variable(out, allow_convert=True)]


optdb["specialize"].register("mlir_choose_of_a_list", choose_of_a_list, TAG)


@node_rewriter([AdvancedSubtensor, AdvancedIncSubtensor])
def boolean_index_to_nonzero(fgraph, node):
    """`x[mask]` as `x[mask.nonzero()]`, numpy's definition of boolean indexing, so that
    the core lowers it through `Nonzero` and integer-array indexing (the result's length
    is a count the kernel computes).

    PyTensor's own `bool_idx_to_nonzero` does this for the Numba backend but drops
    numpy's check that the mask's shape equals the dims it indexes (tagged shape_unsafe:
    a short mask would select silently); here each mask is checked first and a mismatch
    raises `IndexError` as numpy does.
    """
    if isinstance(node.op, AdvancedSubtensor):
        x, *idxs = node.inputs
    else:
        x, y, *idxs = node.inputs
    idxs = indices_from_subtensor(idxs, node.op.idx_list)
    if not any(isinstance(i, TensorVariable) and i.dtype == "bool" for i in idxs):
        return None
    new_idxs, axis = [], 0
    for idx in idxs:
        if isinstance(idx, TensorVariable) and idx.dtype == "bool":
            dims = x.shape[axis : axis + idx.ndim]
            same = pt.all(pt.eq(pt.stack(list(idx.shape)), dims)) if idx.ndim else pt.constant(True)
            message = "boolean index did not match indexed array along the dims it indexes"
            idx = CheckAndRaise(IndexError, message)(idx, same)
            new_idxs.extend(idx.nonzero())
            axis += idx.ndim
        else:
            new_idxs.append(idx)
            axis += 1
    if isinstance(node.op, AdvancedSubtensor):
        new_out = x[tuple(new_idxs)]
    elif node.op.set_instead_of_inc:
        new_out = pt.set_subtensor(x[tuple(new_idxs)], y)
    else:
        new_out = pt.inc_subtensor(x[tuple(new_idxs)], y)
    return [copy_stack_trace(node.outputs[0], new_out)]


optdb["specialize"].register("mlir_boolean_index_to_nonzero", boolean_index_to_nonzero, TAG)


@node_rewriter([Blockwise])
def blockwise_gather(fgraph, node):
    """`Blockwise{AdvancedSubtensor}` of one integer array on the first core axis
    (x[b][idx[b]] for every batch b: what `lu_solve` builds to permute each right-hand
    side) as one `AdvancedSubtensor`, x[arange(B_1), ..., arange(B_k), idx] with the
    aranges shaped to broadcast against idx (a batch dim x broadcasts is indexed by 0): a
    single gather where the Blockwise was a loop of the host program over the batch (two
    solves with each of 100 5 x 5 matrices: 0.81 ms, NUMBA 85 us). Out-of-bounds indices
    raise IndexError as before; batch dims that do not broadcast raise IndexError where
    Blockwise raises ValueError."""
    core = node.op.core_op
    if not isinstance(core, AdvancedSubtensor) or tuple(core.idx_list) != (0,) or len(node.inputs) != 2:
        return None
    x, idx = node.inputs
    # Integer indices only: a boolean mask among integer arrays would mean its nonzero
    # positions, not a mask per batch.
    if idx.type.dtype not in discrete_dtypes or idx.type.dtype == "bool":
        return None
    x_core, idx_core = len(node.op.inputs_sig[0]), len(node.op.inputs_sig[1])
    batch = x.type.ndim - x_core
    if batch < 1 or idx.type.ndim - idx_core != batch or x_core < 1:
        return None
    ranges = []
    for k in range(batch):
        if x.type.broadcastable[k]:
            ranges.append(pt.zeros((1,) * (batch + idx_core), dtype="int64"))
        else:
            # The arange is computed from a shape, so the core compiles such graphs for
            # IREE's full HAL (`Lowered::constant_tensors`), not its inline model.
            pattern = ["x"] * (batch + idx_core)
            pattern[k] = 0
            ranges.append(pt.arange(Shape_i(k)(x), dtype="int64").dimshuffle(pattern))
    out = x[(*ranges, idx)]
    if out.type.ndim != node.outputs[0].type.ndim or out.type.dtype != node.outputs[0].type.dtype:
        return None
    copy_stack_trace(node.outputs[0], out)
    return [out]


# After PyTensor's specialize (position 2), where lu_solve's gathers appear.
optdb.register("mlir_blockwise_gather", dfs_rewriter(blockwise_gather), TAG, position=2.01)


class StagedBetaInc(BetaInc):
    """PyTensor's `BetaInc`, which its elementwise fusion leaves alone (fusion takes only
    scalar ops with C code), so it stays a bare `Elemwise`: the core computes that in two
    kernels, the first (its power term and first continued-fraction steps) as vector code
    (`scalar_math::Stage`), where a fused `Composite` is one kernel of scalar code (its
    loops). bench_scalar's points, 1e5 float64: exp(betainc(a, b, x)) 26.5 ms fused, 16 ms
    as its own kernels (NUMBA 21.7). Exported as `BetaInc`."""

    exported_as = "BetaInc"

    def supports_c_code(self, inputs, outputs):
        return False


@node_rewriter([Elemwise])
def unfused_betainc(fgraph, node):
    """`Elemwise(BetaInc)` as `Elemwise(StagedBetaInc)`, before PyTensor's fusion."""
    op = node.op.scalar_op
    if type(op) is not BetaInc:
        return None
    staged = StagedBetaInc(op.output_types_preference, name=op.name)
    new = Elemwise(staged)(*node.inputs, return_list=True)
    return [copy_stack_trace(node.outputs[0], new[0])]


# Before PyTensor's elemwise fusion (position 49).
optdb.register("mlir_unfused_betainc", dfs_rewriter(unfused_betainc), TAG, position=48.9)


# Dispatches within IREE's runtime limits (see pytensor_mlir.fusion), under tags of
# their own: MLIRLinker requires its target's.
fusion.register(optdb)
