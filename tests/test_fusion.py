"""Elementwise graphs of more operands than one IREE dispatch takes (32 bindings, 64 push
constants): split by pytensor_mlir.fusion, results as the C backend's."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.elemwise import Elemwise

from conftest import C, MLIR, check
from pytensor_mlir.fusion import CPU, FusionBarrier


def all_within_bounds(f):
    return all(CPU.hold_node(n) for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise))


def barriers(f):
    return sum(isinstance(n.op, FusionBarrier) for n in f.maker.fgraph.apply_nodes)


@pytest.mark.parametrize("rank, n", [(0, 25), (1, 40), (2, 100)])
def test_a_sum_of_many_terms(rank, n):
    """x0 + exp(x1) + ... : PyTensor fuses it into one Composite of n inputs, a variadic
    add; the split keeps every Elemwise within the bounds."""
    xs = [pt.tensor(f"x{i}", shape=(None,) * rank, dtype="float64") for i in range(n)]
    out = xs[0] + pt.add(*[pt.exp(x) for x in xs[1:]])
    rng = np.random.default_rng(n + rank)
    f = check(xs, out, [rng.normal(size=(3,) * rank) for _ in xs], rtol=1e-14)
    assert all_within_bounds(f)
    assert barriers(f) >= 1


def test_the_split_adds_in_the_c_backends_order():
    """A plain sum of 60 inputs regrouped as a left fold: bit for bit the C backend's."""
    xs = [pt.dscalar(f"x{i}") for i in range(60)]
    out = pt.add(*xs)
    rng = np.random.default_rng(1)
    values = [np.float64(v) for v in rng.normal(size=60) * 10.0 ** rng.integers(-8, 8, 60)]
    f = pytensor.function(xs, out, mode=MLIR)
    ref = pytensor.function(xs, out, mode=C)
    assert f(*values) == ref(*values)
    # Not the same as a sum in another order: the test can tell.
    assert sum(sorted(values)) != ref(*values) or sum(values[::-1]) != ref(*values)


def test_broadcasting_operands():
    """Rows, columns, matrices and scalars among 36 operands."""
    shapes = [(1, None), (None, 1), (None, None), ()] * 9
    xs = [pt.tensor(f"x{i}", shape=s, dtype="float64") for i, s in enumerate(shapes)]
    out = xs[0]
    for i, x in enumerate(xs[1:]):
        out = out * 0.75 + pt.sin(x) * (i + 1)
    rng = np.random.default_rng(2)
    full = {(1, None): (1, 4), (None, 1): (3, 1), (None, None): (3, 4), (): ()}
    f = check(xs, out, [rng.normal(size=full[s]) for s in shapes], rtol=1e-13)
    assert all_within_bounds(f)


def test_many_outputs():
    """One Composite of 40 inputs and 39 outputs."""
    xs = [pt.dvector(f"x{i}") for i in range(40)]
    outs = [pt.exp(x) * xs[0] - x for x in xs[1:]]
    rng = np.random.default_rng(3)
    f = check(xs, outs, [rng.normal(size=5) for _ in xs], rtol=1e-14)
    assert all_within_bounds(f)


def test_unfused_chains_get_barriers():
    """Without PyTensor's fusion every op is its own Elemwise, and IREE would fuse the
    chain into one dispatch of 40 inputs: barriers cut it."""
    xs = [pt.dvector(f"x{i}") for i in range(40)]
    out = xs[0]
    for x in xs[1:]:
        out = out * 0.5 + pt.exp(x)
    rng = np.random.default_rng(4)
    f = check(xs, out, [rng.normal(size=3) for _ in xs], mode=MLIR.excluding("fusion"), rtol=1e-14)
    assert barriers(f) >= 1


def test_a_log_density_of_many_scalar_parameters_and_its_gradient():
    """The shape of a PyMC model's logp: 45 scalar parameters, one normal log-density
    each, summed; its gradient in every parameter."""
    thetas = [pt.dscalar(f"t{i}") for i in range(45)]
    data = pt.dvector("data")
    logp = pt.add(*[-0.5 * ((data - t) ** 2).sum() - 0.5 * t**2 for t in thetas])
    rng = np.random.default_rng(5)
    values = [np.float64(v) for v in rng.normal(size=45)] + [rng.normal(size=7)]
    check([*thetas, data], [logp, *pytensor.grad(logp, thetas)], values, rtol=1e-12)


def test_bad_input_still_raises():
    """Split graphs check their inputs as any other: a length mismatch is a ValueError."""
    xs = [pt.dvector(f"x{i}") for i in range(30)]
    f = pytensor.function(xs, pt.add(*[pt.exp(x) for x in xs]), mode=MLIR)
    values = [np.ones(3)] * 29 + [np.ones(4)]
    with pytest.raises(ValueError):
        f(*values)
