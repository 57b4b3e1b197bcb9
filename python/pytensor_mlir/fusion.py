"""Keeps every IREE dispatch within what IREE's runtime accepts.

IREE compiles each group of elementwise ops it fuses into one dispatch, which reads and
writes every buffer through a binding of its own and gets the dynamic sizes as push
constants; its CPU runtime refuses a dispatch of more than 32 bindings ("too many
bindings") or 64 push constants, at every call, after compiling fine. PyTensor fuses
elementwise graphs into one `Composite` of up to 1024 operands (a model's log-density that
adds up 40 terms is one), and IREE fuses chains of elementwise nodes on its own.

So, after PyTensor's fusion, two rewrites bound the operands a dispatch can gather:

- `split_wide_elemwise`: an `Elemwise` beyond the bounds below (bindings, dynamic sizes)
  is cut into several, each within them, computing the same scalar graph in the same
  order (a variadic add or mul of many terms is regrouped as a left fold, the order
  PyTensor's C code adds them in);
- `bound_fused_operands`: where IREE would fuse a node with its elementwise producers into
  one dispatch of too many operands, the producers' results pass through a
  `FusionBarrier`, which the core lowers to `util.optimization_barrier`: IREE keeps the
  two sides in separate dispatches.
"""

from dataclasses import dataclass

from pytensor.graph.basic import Apply, Constant
from pytensor.graph.features import ReplaceValidate
from pytensor.graph.op import Op
from pytensor.graph.rewriting.basic import GraphRewriter
from pytensor.graph.traversal import io_toposort
from pytensor.scalar.basic import Add, Composite, Mul
from pytensor.tensor.elemwise import Elemwise

@dataclass(frozen=True)
class Bounds:
    """What one dispatch may take: buffers (bindings) and dynamic sizes (each two 32-bit
    push constants)."""

    bindings: int
    sizes: int

    def hold(self, operands):
        """Whether a dispatch reading and writing these tensors is within the bounds."""
        operands = [v for v in operands if _binds(v)]
        return len(operands) <= self.bindings and sum(map(_sizes, operands)) <= self.sizes

    def hold_node(self, node):
        return self.hold(list(dict.fromkeys(node.inputs)) + node.outputs)


# IREE's CPU runtime: 32 bindings (its inline loader), 64 push constants. The margins are
# for what IREE fuses besides elementwise ops (broadcasts, a reduction the result feeds)
# and the constants it passes besides the operands' sizes.
CPU = Bounds(bindings=24, sizes=24)
# GPUs: Vulkan guarantees 128 bytes of push constants (32 constants; lavapipe and many
# GPUs have no more) and lavapipe allows 32 storage buffers per shader stage.
GPU = Bounds(bindings=24, sizes=12)


class FusionBarrier(Op):
    """Its input, unchanged; the MLIR core keeps IREE from fusing across it."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, shapes):
        return shapes

    def L_op(self, inputs, outputs, output_grads):
        return output_grads


fusion_barrier = FusionBarrier()


def _binds(var):
    """Whether a dispatch operand takes a binding: everything but a one-element constant,
    which IREE folds into the dispatch's code."""
    return not (isinstance(var, Constant) and var.data.size == 1)


def _sizes(var):
    """The sizes IREE passes a dispatch for this operand: measured, every dim of a tensor
    with a dynamic one (a (1, ?) operand costs two), none for a static tensor."""
    return var.type.ndim if _binds(var) and None in var.type.shape else 0


def _scalar_graph(node):
    """(inputs, outputs) of the scalar graph an Elemwise node computes."""
    op = node.op.scalar_op
    if isinstance(op, Composite):
        return list(op.fgraph.inputs), list(op.fgraph.outputs)
    inputs = [i.type.to_scalar_type()() for i in node.inputs]
    return inputs, op.make_node(*inputs).outputs


def _left_folds(inputs, outputs, width):
    """The scalar graph with every variadic add and mul of more than `width` terms
    regrouped as a left fold of chunks (((x1 + ... + xw) + ... + x2w) + ...), the order of
    the terms kept. None if another op has more inputs than `width`."""
    # Plain nodes: a Composite's own graph is frozen (its nodes are interned, and cloning
    # one with new inputs gives another frozen node, not one a new graph can own).
    new = dict(zip(inputs, inputs))
    for apply in io_toposort(inputs, outputs):
        args = [new.get(i, i) for i in apply.inputs]
        if len(args) <= width:
            outs = apply.op.make_node(*args).outputs
        elif isinstance(apply.op, (Add, Mul)):
            acc = apply.op(*args[:width])
            for k in range(width, len(args), width - 1):
                acc = apply.op(acc, *args[k : k + width - 1])
            outs = [acc]
        else:
            return None
        new.update(zip(apply.outputs, outs))
    return [new[o] for o in outputs]


def _groups(inputs, outputs, tensor_of, bounds):
    """The scalar graph's nodes in groups, each a dispatch within bounds (reading its
    outside inputs, writing the values used outside it; `tensor_of` gives the tensor a
    scalar value stands for): greedy over a depth-first order from the outputs, so a
    subtree's nodes stay together and a group hands few values on."""
    order, seen = [], set()

    def visit(var):
        apply = var.owner
        if apply is None or apply in seen:
            return
        seen.add(apply)
        for i in apply.inputs:
            visit(i)
        order.append(apply)

    for o in outputs:
        visit(o)
    clients = {}
    for apply in order:
        for i in apply.inputs:
            clients.setdefault(i, set()).add(apply)
    final = set(outputs)

    def fits(group):
        made = {o for a in group for o in a.outputs}
        reads = {i for a in group for i in a.inputs if i not in made and (i.owner is not None or i in inputs)}
        writes = {o for o in made if o in final or clients.get(o, set()) - group}
        return bounds.hold([tensor_of(v) for v in reads | writes])

    groups = [[]]
    for apply in order:
        if groups[-1] and not fits(set(groups[-1]) | {apply}):
            groups.append([])
        groups[-1].append(apply)
    return groups, clients


def split_node(node, bounds):
    """Elemwise nodes computing `node`'s outputs, each within `bounds`, with a
    FusionBarrier on every value one hands to another; None where it cannot be split."""
    s_inputs, s_outputs = _scalar_graph(node)
    by_input = dict(zip(s_inputs, node.inputs))
    # A value computed inside stands for a tensor of the node's output shape (at most).
    widest = max(node.outputs, key=_sizes)
    # A chunk of a sum, with its result, in a third of the bindings and half the sizes:
    # room left in its group for the next chunk's first terms.
    per_term = max([_sizes(widest), *map(_sizes, node.inputs)]) or 1
    width = min(bounds.bindings // 3, bounds.sizes // (2 * per_term))
    folded = _left_folds(s_inputs, s_outputs, max(2, width))
    if folded is None or any(o.owner is None for o in folded):
        return None
    groups, clients = _groups(s_inputs, folded, lambda v: by_input.get(v, widest), bounds)
    alone = [g[0] for g in groups if len(g) == 1]
    if not all(bounds.hold([by_input.get(i, widest) for i in a.inputs if i.owner is not None or i in by_input] + [widest]) for a in alone):
        return None
    final = set(folded)
    computed = {}  # a scalar value written by a group: the tensor it became
    handed = dict(by_input)  # the tensors the groups read: inputs, results behind a barrier

    def outer(var):
        if var not in handed:
            handed[var] = fusion_barrier(computed[var])
        return handed[var]

    for group in groups:
        members = set(group)
        made = {o for a in group for o in a.outputs}
        reads = []
        for a in group:
            for i in a.inputs:
                if i not in made and i not in reads and (i.owner is not None or i in by_input):
                    reads.append(i)
        writes = [o for a in group for o in a.outputs if o in final or clients.get(o, set()) - members]
        fresh = [r.type() for r in reads]
        inner = dict(zip(reads, fresh))
        for a in group:  # in topological order
            inner.update(zip(a.outputs, a.op.make_node(*[inner.get(i, i) for i in a.inputs]).outputs))
        results = Elemwise(Composite(fresh, [inner[w] for w in writes]))(*[outer(r) for r in reads], return_list=True)
        computed.update(zip(writes, results))
    replacements = []
    for old, s in zip(node.outputs, folded):
        new = computed[s]
        if new.type != old.type:
            try:
                new = old.type.filter_variable(new, allow_convert=True)
            except TypeError:
                return None
        replacements.append(new)
    return replacements


class _Bounded(GraphRewriter):
    """A whole-graph rewrite for dispatches within `bounds`."""

    def __init__(self, bounds):
        super().__init__()
        self.bounds = bounds

    def add_requirements(self, fgraph):
        fgraph.attach_feature(ReplaceValidate())


class SplitWideElemwise(_Bounded):
    """Splits every Elemwise that is not within `bounds` (see the module's note)."""

    def apply(self, fgraph):
        for node in list(fgraph.toposort()):
            if node in fgraph.apply_nodes and isinstance(node.op, Elemwise) and not self.bounds.hold_node(node):
                new = split_node(node, self.bounds)
                if new is not None:
                    fgraph.replace_all_validate(list(zip(node.outputs, new)), reason="split_wide_elemwise")


class BoundFusedOperands(_Bounded):
    """Puts a FusionBarrier between an Elemwise node and the elementwise producers IREE
    would fuse with it, where together they would not be within bounds.

    IREE fuses a producer into its consumer when the consumer is the producer's only
    user; such a chain reads the leaves below it and writes the consumer's results.
    Counted in topological order, so a barrier placed below is seen above.
    """

    def apply(self, fgraph):
        leaves = {}  # an Elemwise output fused into its only client: what that chain reads

        def reads(var):
            return leaves.get(var, {var})

        for node in list(fgraph.toposort()):
            if node not in fgraph.apply_nodes or not isinstance(node.op, Elemwise):
                continue
            gathered = set().union(*(reads(i) for i in node.inputs))
            if not self.bounds.hold([*gathered, *node.outputs]):
                fused = [i for i in dict.fromkeys(node.inputs) if i in leaves]
                fgraph.replace_all_validate([(i, fusion_barrier(i)) for i in fused], reason="bound_fused_operands")
                gathered = set(node.inputs)
            for out in node.outputs:
                if len(fgraph.clients[out]) == 1 and out not in fgraph.outputs:
                    leaves[out] = gathered


def tag(driver):
    """The tag of the rewrites bounding dispatches for IREE runtime driver `driver`
    (MLIRLinker requires it)."""
    return "mlir_cpu_dispatches" if driver.startswith("local") else "mlir_gpu_dispatches"


def register(optdb):
    """Both pairs of rewrites, each under its tag, right after PyTensor's elemwise fusion
    (position 49) and before the inplace rewrites."""
    for bounds, driver in [(CPU, "local"), (GPU, "vulkan")]:
        name = tag(driver)
        optdb.register(f"{name}_split", SplitWideElemwise(bounds), name, position=49.2)
        optdb.register(f"{name}_barriers", BoundFusedOperands(bounds), name, position=49.25)
