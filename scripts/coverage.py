#!/usr/bin/env python
"""Which Op types PyTensor's JAX and Numba backends register, and which of them our core
lowers, with counts. Prints a Markdown table (the README's is this script's output).

The backends' registries are their funcify dispatchers' (`jax_funcify.registry`,
`numba_funcify.registry`). A backend whose package is not importable here (JAX is an
optional dependency) is read from its dispatch sources instead: every
`<x>_funcify.register(Class)` call, each class resolved through the module's imports.
What the core lowers comes from the core itself (`_core.lowered_op_names()`: the names its
IR parser accepts, tensor Ops and the scalar Ops inside `Elemwise`/`Composite`).

Usage: python scripts/coverage.py [--markdown]
"""

import ast
import importlib
import importlib.util
import pathlib
import sys
import warnings

# This file's name shadows the `coverage` package that numba looks for: keep its folder
# off the import path.
sys.path = [p for p in sys.path if pathlib.Path(p or ".").resolve() != pathlib.Path(__file__).resolve().parent]

import pytensor
from pytensor.compile.builders import OpFromGraph
from pytensor.graph.op import Op
from pytensor.scalar.basic import ScalarOp

from pytensor_mlir import _core


def imported_registry(backend):
    """The dispatcher's registry, or None if the backend cannot be imported here."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(f"pytensor.link.{backend}.dispatch")
    except Exception as e:
        print(f"{backend}: not importable here ({type(e).__name__}: {e})", file=sys.stderr)
        return None
    return set(getattr(module, f"{backend}_funcify").registry)


def _resolve(module_name, tree, name):
    """The class `name` as the dispatch module `module_name` imports it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    base = node.module if node.level == 0 else importlib.util.resolve_name("." * node.level + node.module, module_name.rpartition(".")[0])
                    try:
                        return getattr(importlib.import_module(base), alias.name)
                    except Exception:
                        return None
    return None


def source_registry(backend):
    """The classes registered by the backend's dispatch sources, read without importing them."""
    root = pathlib.Path(pytensor.__file__).parent / "link" / backend / "dispatch"
    found = set()
    for path in root.rglob("*.py"):
        module_name = "pytensor." + ".".join(path.relative_to(pathlib.Path(pytensor.__file__).parent).with_suffix("").parts)
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register"):
                continue
            owner = node.func.value
            if not (isinstance(owner, ast.Name) and owner.id.endswith("_funcify")):
                continue
            for arg in node.args:
                name = arg.id if isinstance(arg, ast.Name) else arg.attr if isinstance(arg, ast.Attribute) else None
                cls = name and _resolve(module_name, tree, name)
                if cls is None and name:
                    cls = name  # unresolved: kept by name
                if cls is not None:
                    found.add(cls)
    return found


def registry(backend):
    reg = imported_registry(backend)
    how = "imported"
    if reg is None:
        reg, how = source_registry(backend), "read from its sources (not importable here)"
    ops = {c for c in reg if isinstance(c, str) or (isinstance(c, type) and issubclass(c, Op) and c is not Op)}
    return ops, how


def name_of(c):
    return c if isinstance(c, str) else c.__name__


# Ops lowered for some of their forms only: what the table adds to their `yes` (the rest is
# refused at compile time, by name).
PARTIAL = {
    "QR": "pivoting on the CPU",
    "Schur": "real form; CPU",
    "QZ": "real form, no eigenvalue outputs; CPU",
    "TRSYL": "CPU",
    "RandomVariable": "35 distributions, see Limits; our own streams",
}


def main():
    tensor_names, scalar_names = _core.lowered_op_names()
    lowered = set(tensor_names) | set(scalar_names)
    regs = {b: registry(b) for b in ("jax", "numba")}
    by_name = {}
    for backend, (ops, _) in regs.items():
        for c in ops:
            by_name.setdefault(name_of(c), [c, set()])[1].add(backend)

    def status(c):
        name = name_of(c)
        if name in lowered:
            return "yes"
        if isinstance(c, type) and issubclass(c, OpFromGraph):
            return "inner graph"
        return "no"

    rows = sorted(by_name.items(), key=lambda kv: kv[0].lower())
    print("MLIR: `yes` lowered by a rule (in parentheses: the forms it is limited to); `inner graph`: an OpFromGraph subclass, lowered through its inner graph when every Op inside lowers; `no`: refused at compile time.")
    print()
    print("| Op | kind | JAX | Numba | MLIR |")
    print("|---|---|---|---|---|")
    for name, (c, backends) in rows:
        kind = "scalar" if isinstance(c, type) and issubclass(c, ScalarOp) else "tensor"
        shown = f"{status(c)} ({PARTIAL[name]})" if status(c) == "yes" and name in PARTIAL else status(c)
        print(f"| `{name}` | {kind} | {'x' if 'jax' in backends else ''} | {'x' if 'numba' in backends else ''} | {shown} |")
    print()
    def counts(names):
        st = [status(by_name[n][0]) for n in names]
        return f"the MLIR core lowers {st.count('yes')} of them, and {st.count('inner graph')} more are OpFromGraph subclasses it lowers through their inner graph where the Ops inside lower"

    for backend, (ops, how) in regs.items():
        names = {name_of(c) for c in ops}
        print(f"- {backend}: {len(names)} Op types registered ({how}); {counts(names)}")
    union = set(by_name)
    print(f"- either backend: {len(union)} Op types; {counts(union)}")
    print(f"- the MLIR core's own list: {len(tensor_names)} tensor Op names, {len(scalar_names)} scalar Op names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
