"""IfElse: an scf.if choosing between the branches' values, evaluated lazily as PyTensor's
VM does (the branch not taken computes and raises nothing), against the C backend."""

import re

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.ifelse import IfElse, ifelse
from pytensor.raise_op import Assert

from conftest import C, MLIR, assert_same, check, compile_both, raises_like


def _ifelse_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, IfElse)]


def _run_both(f, ref, values):
    got, want = f(*values), ref(*values)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, err_msg=f"output {k} on {values!r}")


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_condition_from_data_takes_both_branches(dtype):
    # The condition is the data itself: nonzero is true, NaN too (Python's bool), -0.0 false.
    c = pt.scalar("c", dtype=dtype)
    x, y = pt.vector("x"), pt.vector("y")
    out = ifelse(c, pt.exp(x) * 2, pt.sin(y) - x)
    f, ref = compile_both([c, x, y], [out])
    assert _ifelse_nodes(f) and _ifelse_nodes(ref)
    xv, yv = np.array([0.5, -1.0, np.inf]), np.array([2.0, np.nan, -0.0])
    conds = {"float64": [1.5, 0.0, -0.0, np.nan, -np.inf], "int32": [3, 0, -1], "bool": [True, False]}[dtype]
    for cv in conds:
        _run_both(f, ref, [np.asarray(cv, dtype=dtype), xv, yv])


def test_comparison_condition_and_float32():
    n = pt.lscalar("n")
    x = pt.vector("x", dtype="float32")
    out = ifelse(pt.lt(n, x.shape[0]), x * np.float32(3), pt.cumsum(x))
    f, ref = compile_both([n, x], [out])
    xv = np.array([1.0, -2.5, 1e-40, np.nan], dtype="float32")
    for nv in [0, 3, 4, 10]:
        _run_both(f, ref, [np.int64(nv), xv])


def test_branches_of_different_shapes():
    # Static shapes that differ (3 against 5): the result's dim is dynamic; run-time
    # shapes that differ between the branches too (a slice of x, all of y).
    c = pt.bscalar("c")
    a, b = pt.tensor("a", shape=(3,)), pt.tensor("b", shape=(5,))
    x, y = pt.matrix("x"), pt.matrix("y")
    outs = [ifelse(c, a, b), ifelse(c, x[1:], y.T), ifelse(c, x.sum(axis=0), y.sum(axis=1))]
    f, ref = compile_both([c, a, b, x, y], outs)
    assert f.maker.fgraph.outputs[0].type.shape == (None,)
    av, bv = np.arange(3.0), -np.arange(5.0)
    xv, yv = np.arange(12.0).reshape(4, 3), np.arange(10.0).reshape(2, 5)
    for cv in [1, 0]:
        _run_both(f, ref, [np.int8(cv), av, bv, xv, yv])
    # Empty operands.
    for cv in [1, 0]:
        _run_both(f, ref, [np.int8(cv), av, bv, np.zeros((1, 0)), np.zeros((0, 2))])


def test_untaken_branch_that_would_raise_is_not_run():
    c = pt.dscalar("c")
    x = pt.vector("x")
    i = pt.lscalar("i")
    out = ifelse(c > 0, x[i] * 2, x.sum())
    f, ref = compile_both([c, x, i], out)
    xv = np.arange(4.0)
    for cv, iv in [(1.0, 2), (1.0, -4), (-1.0, 2), (-1.0, 10), (-1.0, -5), (np.nan, 10)]:
        assert_same(f(cv, xv, iv), ref(cv, xv, iv), err_msg=f"c={cv}, i={iv}")
    # The branch taken raises as the C backend does.
    got, want = raises_like(f, ref, [1.0, xv, 10])
    assert type(got) is type(want) is IndexError


def test_untaken_assert_and_index_array_do_not_raise():
    # An Assert and an out-of-bounds gather in the else branch, run only where taken.
    c = pt.iscalar("c")
    x = pt.vector("x")
    idx = pt.lvector("idx")
    checked = Assert("x must be positive")(x, pt.all(x > 0))
    out = ifelse(c, x + 1, pt.log(checked)[idx])
    f, ref = compile_both([c, x, idx], out)
    for cv, xv, iv in [(1, [-1.0, 2.0], [5]), (0, [1.0, 2.0], [1, 0, 1]), (1, [3.0], [-9])]:
        values = [np.int32(cv), np.array(xv), np.array(iv, dtype="int64")]
        assert_same(f(*values), ref(*values), err_msg=f"{values!r}")
    # Where the else branch is taken, its Assert and its gather raise as in the C backend.
    got, want = raises_like(f, ref, [np.int32(0), np.array([-1.0, 2.0]), np.array([0])])
    assert type(got) is type(want) is AssertionError and str(got) == str(want) == "x must be positive"
    got, want = raises_like(f, ref, [np.int32(0), np.array([1.0, 2.0]), np.array([2])])
    assert type(got) is type(want) is IndexError


def test_several_outputs_of_several_dtypes():
    c = pt.dscalar("c")
    x = pt.vector("x")
    n = pt.lvector("n")
    then = [x * 2, n + 1, x > 0, pt.as_tensor(np.float64(1.5))]
    other = [x[::-1], n * n, pt.isnan(x), x.sum()]
    outs = ifelse(c, then, other)
    assert len(outs) == 4
    f, ref = compile_both([c, x, n], outs)
    assert any(len(node.outputs) > 1 for node in _ifelse_nodes(f))
    xv, nv = np.array([1.0, np.nan, -3.0]), np.array([2, -7], dtype="int64")
    for cv in [2.0, 0.0]:
        _run_both(f, ref, [cv, xv, nv])


def test_shared_values_and_nested_ifelse():
    # A value used by both branches of one IfElse and by another, and an IfElse inside a
    # branch of another (lowered inside that branch).
    c, d = pt.dscalar("c"), pt.dscalar("d")
    x, y = pt.vector("x"), pt.vector("y")
    shared = pt.exp(x)
    a = ifelse(c > 0, shared + 1, y)
    b = ifelse(c > 0, x * y, shared)
    nested = ifelse(c > 0, ifelse(d > 0, pt.sqrt(x), x ** 2), pt.sort(y))
    f, ref = compile_both([c, d, x, y], [a, b, nested])
    nodes = _ifelse_nodes(f)
    assert any(i.owner in nodes for n in nodes for i in n.inputs[1:]), "no IfElse nested in another's branch"
    xv, yv = np.array([4.0, -1.0]), np.array([0.5, -2.0])
    for cv in [1.0, -1.0]:
        for dv in [1.0, -1.0]:
            _run_both(f, ref, [cv, dv, xv, yv])


def test_gradient_through_ifelse():
    c = pt.dscalar("c")
    x, y = pt.vector("x"), pt.vector("y")
    out = ifelse(c > 0, (x ** 2 * y).sum(), (pt.sin(x) / y).sum())
    grads = pytensor.grad(out, [x, y, c])
    f, ref = compile_both([c, x, y], [out, *grads])
    xv, yv = np.array([0.5, -1.5, 2.0]), np.array([3.0, 0.25, -1.0])
    for cv in [1.0, -1.0]:
        _run_both(f, ref, [cv, xv, yv])


def test_ifelse_in_a_scan_step():
    x = pt.vector("x")
    t = pt.dscalar("t")

    def step(v, acc):
        return ifelse(v > t, acc + v, acc * 0.5)

    out = pytensor.scan(step, sequences=[x], outputs_info=[pt.as_tensor(np.float64(1.0))], return_updates=False)
    f = check([x, t], out, [np.array([1.0, 3.0, -2.0, 5.0]), np.float64(0.5)])
    assert any(type(n.op).__name__ == "Scan" for n in f.maker.fgraph.toposort())


def test_branch_shapes_follow_the_rewrites_graph():
    # An output of the IfElse used further on: its dims come from both branches (equal
    # here: both are x's length), so the addition with x needs no run-time dim.
    c = pt.dscalar("c")
    x = pt.vector("x")
    out = ifelse(c > 0, x * 2, pt.exp(x)) + x
    check([c, x], out, [np.float64(1.0), np.array([0.5, 1.0])])
    check([c, x], out, [np.float64(0.0), np.array([0.5, 1.0])])


def test_mlir_holds_the_untaken_work_inside_the_branch():
    # The lazy structure itself: the gather and the sum (the row kernel's dispatch on the
    # CPU) are written inside the scf.if.
    c = pt.dscalar("c")
    x = pt.vector("x")
    i = pt.lscalar("i")
    f = pytensor.function([c, x, i], ifelse(c > 0, x[i], x.sum()), mode=MLIR)
    text = f.maker.linker.mlir
    at = re.search(r"scf\.if %\w+ -> \(tensor<", text)
    assert at, text
    before, inside = text[: at.start()], text[at.start() :]
    for work in ["tensor.extract %arg1[", "flow.dispatch.workgroups"]:
        assert work not in before and work in inside, (work, text)
    assert_same(f(1.0, np.arange(5.0), 3), np.float64(3.0))
    assert_same(f(-1.0, np.arange(5.0), 3), np.float64(10.0))


def test_an_op_refused_in_a_branch_is_named():
    # Refused at compile time like anywhere else, the message naming the Op in the branch
    # (Unique along an axis: its rule refuses that form).
    c = pt.dscalar("c")
    a = pt.dmatrix("a")
    out = ifelse(c > 0, pt.unique(a, axis=0).sum(axis=0), a.sum(axis=0))
    with pytest.raises(NotImplementedError, match="then branch, Unique.*axis"):
        pytensor.function([c, a], out, mode=MLIR)
