"""BlockDiagonal (pt.linalg.block_diag): its matrices on the diagonal of a zero matrix,
against the C backend (whose perform is scipy's block_diag), and its gradient."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.linalg import block_diag

from conftest import C, MLIR, assert_same, check, compile_both


def _op_names(f):
    return [type(getattr(n.op, "core_op", n.op)).__name__ for n in f.maker.fgraph.toposort()]


def test_matrices_of_run_time_shapes():
    a, b, c = pt.matrix("a"), pt.matrix("b"), pt.matrix("c")
    out = block_diag(a, b, c)
    f = check(
        [a, b, c],
        out,
        [np.arange(6.0).reshape(2, 3), np.array([[np.nan, -np.inf], [-0.0, 1e-310]]), np.ones((1, 4))],
    )
    assert "BlockDiagonal" in _op_names(f)
    # Empty blocks: rows without columns, columns without rows, a 0x0 block.
    f, ref = compile_both([a, b, c], out)
    for shapes in [[(2, 0), (0, 3), (1, 1)], [(0, 0), (2, 2), (0, 0)]]:
        values = [np.full(s, 1.0 + k) for k, s in enumerate(shapes)]
        assert_same(f(*values), ref(*values), err_msg=f"{shapes}")


def test_static_shapes_and_two_blocks():
    a = pt.tensor("a", shape=(2, 2))
    b = pt.tensor("b", shape=(3, 1))
    out = block_diag(a, b)
    assert out.type.shape == (5, 3)
    check([a, b], out * 2, [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0], [6.0], [7.0]])])


@pytest.mark.parametrize(
    "dtypes",
    [("int32", "float32"), ("int64", "float32"), ("bool", "int8"), ("float32", "float64"), ("uint8", "int8")],
)
def test_dtype_upcast_as_pytensor(dtypes):
    a = pt.matrix("a", dtype=dtypes[0])
    b = pt.matrix("b", dtype=dtypes[1])
    out = block_diag(a, b)
    assert out.dtype == np.promote_types(*dtypes)
    av = (np.arange(4).reshape(2, 2) % 2).astype(dtypes[0])
    bv = np.array([[1, 0, 1]]).astype(dtypes[1])
    if dtypes == ("uint8", "int8"):
        av, bv = np.array([[200, 7]], dtype="uint8"), np.array([[-3], [100]], dtype="int8")
    check([a, b], out, [av, bv])


def test_batched_blockwise():
    a = pt.tensor3("a")
    b = pt.tensor3("b")
    out = block_diag(a, b)
    rng = np.random.default_rng(0)
    f = check([a, b], out, [rng.normal(size=(3, 2, 2)), rng.normal(size=(3, 1, 3))])
    assert "Blockwise" in [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    # A batch dim of static size 1 broadcasts.
    c = pt.tensor("c", shape=(1, None, None))
    check([a, c], block_diag(a, c), [rng.normal(size=(4, 2, 1)), rng.normal(size=(1, 2, 2))])


def test_gradient():
    a, b = pt.matrix("a"), pt.matrix("b")
    w = pt.matrix("w")
    cost = (block_diag(a, b) * w).sum() + (block_diag(a, b) ** 2).sum()
    grads = pytensor.grad(cost, [a, b])
    rng = np.random.default_rng(1)
    av, bv = rng.normal(size=(2, 3)), rng.normal(size=(2, 2))
    wv = rng.normal(size=(4, 5))
    check([a, b, w], grads, [av, bv, wv])
