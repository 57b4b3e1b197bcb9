"""The generic exporter: a FunctionGraph as plain data for the Rust core.

It writes what every Op has (its class name and ``__props__``), variable types and constant
bytes, and knows nothing of what any Op means (one exception: a ScalarLoop's kind, see
`export_op`): the Rust core decides what it can lower.
"""

import dataclasses
import math

import numpy as np
from pytensor.compile.builders import OpFromGraph
from pytensor.graph.basic import Constant, equal_computations
try:  # PyTensor >= 3: Composite and other inner graphs are FrozenFunctionGraphs
    from pytensor.graph.fg import AbstractFunctionGraph as _Graph
except ImportError:
    from pytensor.graph.fg import FunctionGraph as _Graph
from pytensor.graph.op import HasInnerGraph, Op
from pytensor.graph.type import Type
from pytensor.scalar.basic import ScalarType
from pytensor.scalar.loop import ScalarLoop
from pytensor.tensor.random.type import RandomGeneratorType
from pytensor.tensor.type import TensorType
from pytensor.tensor.type_other import NoneTypeT

from pytensor_mlir.random import key_of


def export_type(t):
    if isinstance(t, NoneTypeT):
        return {"kind": "none"}
    if isinstance(t, TensorType):
        return {"kind": "tensor", "dtype": t.dtype, "shape": list(t.shape)}
    if isinstance(t, ScalarType):
        return {"kind": "scalar", "dtype": t.dtype}
    if isinstance(t, RandomGeneratorType):
        # Passed in and out as its key's words (pytensor_mlir.random).
        return {"kind": "rng"}
    return {"kind": "other", "repr": repr(t)}


def _constant_hex(c):
    # Little-endian C order, one byte per bool: what the Rust core reads back bit-exactly.
    data = np.asarray(c.data)
    return np.ascontiguousarray(data.astype(data.dtype.newbyteorder("<"), copy=False)).tobytes().hex()


def export_value(x):
    """A prop's value as JSON, with tagged objects for Ops, graphs and types."""
    if isinstance(x, Op):
        return {"$op": export_op(x)}
    if isinstance(x, _Graph):
        return {"$graph": export_fgraph(x)}
    if isinstance(x, Type):
        return {"$type": export_type(x)}
    if isinstance(x, np.generic):
        x = x.item()
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else {"$repr": repr(x)}
    if isinstance(x, (tuple, list)):
        return [export_value(v) for v in x]
    if isinstance(x, type):
        # A class (CheckAndRaise's exc_type): by the name that imports it.
        return {"$class": f"{x.__module__}.{x.__qualname__}"}
    if isinstance(x, slice):
        return {"$slice": [export_value(x.start), export_value(x.stop), export_value(x.step)]}
    if _is_record(x):
        # A record of plain fields (a Scan's ScanInfo): its fields by name.
        return {"$fields": {f.name: export_value(getattr(x, f.name)) for f in dataclasses.fields(x)}}
    return {"$repr": repr(x)}


def _is_record(v):
    return dataclasses.is_dataclass(v) and not isinstance(v, type)


def export_op(op):
    props = {name: export_value(getattr(op, name)) for name in getattr(op, "__props__", ())}
    inner = getattr(op, "fgraph", None) if isinstance(op, HasInnerGraph) else None
    if isinstance(inner, _Graph) and "fgraph" not in props:
        # An inner graph that is not a prop (OpFromGraph's): the graph, and the class's
        # bases, so the core can tell how the node's inputs map to the graph's.
        props["$inner_graph"] = export_value(inner)
        props["$mro"] = [c.__name__ for c in type(op).__mro__ if c is not object]
        # OpFromGraph subclasses keep what they mean in plain attributes, not props (Pad's
        # pad_mode and reflect_type), and a Scan in its ScanInfo record: the simple ones,
        # so a rule can lower the Op by its meaning.
        props["$attrs"] = {
            k: export_value(v)
            for k, v in vars(op).items()
            if not k.startswith("_")
            and k not in props
            and (v is None or isinstance(v, (bool, int, str)) or _is_record(v))
        }
    if isinstance(op, ScalarLoop):
        # Whether the inner graph's last output is an `until` flag: derived from the
        # constructor's arguments, not a prop, and not recoverable from the graph alone.
        props["$is_while"] = bool(op.is_while)
    # An Op of this package standing in for PyTensor's (rewrites.StagedBetaInc) goes by
    # the name of the one it stands for.
    return {"type": getattr(op, "exported_as", type(op).__name__), "props": props}


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:  # an empty cell
        return None


def pullback_of(node):
    """The `OpFromGraph` whose pullback `node`'s op (a plain `OpFromGraph`) is, else None.

    PyTensor builds an `OpFromGraph`'s gradient as another, plain one, applied to the
    forward node's inputs, outputs and output gradients, and caches it on the forward Op
    (`_lop_op_cache`, a wrapper function that holds it in its closure). The forward Op is
    found among the owners of the node's inputs.
    """
    if type(node.op) is not OpFromGraph:
        return None
    for inp in node.inputs:
        forward = inp.owner.op if inp.owner is not None else None
        cache = getattr(forward, "_lop_op_cache", None) if isinstance(forward, OpFromGraph) else None
        for entry in (cache or {}).values():
            cells = [_cell(c) for c in getattr(entry, "__closure__", None) or ()]
            if any(_same_graph(op, node.op) for op in [entry, *cells] if isinstance(op, OpFromGraph)):
                return forward
    return None


def _same_graph(a, b):
    # Compiling clones Ops with inner graphs (a shallow copy sharing `_lop_op_cache`, the
    # inner graph cloned): the cached pullback and the node's are equal, not identical.
    return a is b or (
        len(a.inner_inputs) == len(b.inner_inputs)
        and equal_computations(a.inner_outputs, b.inner_outputs, a.inner_inputs, b.inner_inputs)
    )


def export_node_op(node):
    exported = export_op(node.op)
    forward = pullback_of(node)
    if forward is not None:
        # So a rule can lower the gradient of an Op it lowers by meaning (Pad's reflect).
        exported["props"]["$pullback_of"] = export_op(forward)
    return exported


def export_fgraph(fgraph):
    variables = []
    index = {}

    def var(v):
        if v not in index:
            index[v] = len(variables)
            entry = {"type": export_type(v.type), "name": v.name}
            if isinstance(v, Constant) and isinstance(v.type, RandomGeneratorType):
                entry["constant"] = key_of(v.data).tobytes().hex()
            elif isinstance(v, Constant) and not isinstance(v.type, NoneTypeT):
                entry["constant"] = _constant_hex(v)
            variables.append(entry)
        return index[v]

    inputs = [var(i) for i in fgraph.inputs]
    nodes = [
        {
            "op": export_node_op(node),
            "inputs": [var(i) for i in node.inputs],
            "outputs": [var(o) for o in node.outputs],
        }
        for node in fgraph.toposort()
    ]
    outputs = [var(o) for o in fgraph.outputs]
    return {"variables": variables, "inputs": inputs, "outputs": outputs, "nodes": nodes}
