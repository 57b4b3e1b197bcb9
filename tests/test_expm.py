"""Expm (pt.linalg.expm): scaling and squaring with the degree-13 Padé approximant, against
the C backend (scipy's expm, Al-Mohy and Higham 2009): equal to rounding."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.linalg import expm

from conftest import C, MLIR, assert_same, compile_both, raises_like


def _close(got, want, rtol):
    # Relative to the result's largest entry: the error of expm scales with ||A||.
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = np.max(np.abs(want)) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


@pytest.fixture(scope="module")
def expm_f64():
    a = pt.matrix("a")
    return compile_both([a], expm(a))


@pytest.mark.parametrize("norm", [0.0, 1e-8, 0.3, 5.0, 30.0])
@pytest.mark.parametrize("n", [1, 3, 8])
def test_random_matrices_of_several_norms(expm_f64, n, norm):
    # Norms below theta_13 (no squaring) and above (up to 8 squarings).
    f, ref = expm_f64
    assert [type(node.op).__name__ for node in f.maker.fgraph.toposort()] == ["Expm"]
    rng = np.random.default_rng(n)
    a = rng.normal(size=(n, n))
    a *= norm / max(np.abs(a).sum(axis=0).max(), 1e-300)
    _close(f(a), ref(a), rtol=1e-12)


def test_structured_matrices(expm_f64):
    f, ref = expm_f64
    cases = [
        np.diag([1.0, -2.0, 0.5, 10.0]),
        np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]),  # nilpotent
        np.array([[0.0, -np.pi], [np.pi, 0.0]]),  # a rotation by pi
        np.array([[-50.0, 49.0], [49.0, -50.0]]),  # stiff
        np.zeros((0, 0)),
        np.array([[700.0]]),
    ]
    for a in cases:
        _close(f(a), ref(a), rtol=1e-12)


def test_nan_and_not_square(expm_f64):
    f, ref = expm_f64
    a = np.array([[np.nan, 1.0], [0.0, 1.0]])
    got, want = f(a), ref(a)
    # Where scipy gives NaN so do we (and NaN everywhere: the known difference).
    assert np.isnan(got[np.isnan(want)]).all() and np.isnan(got).all()
    got, want = raises_like(f, ref, [np.ones((2, 3))])
    assert type(got) is type(want) is np.linalg.LinAlgError


def test_float32():
    a = pt.matrix("a", dtype="float32")
    f, ref = compile_both([a], expm(a))
    av = np.array([[0.5, -1.0], [2.0, 0.25]], dtype="float32")
    got, want = f(av), ref(av)
    assert got.dtype == want.dtype == np.float32
    _close(got, want, rtol=2e-6)


def test_batched():
    a = pt.tensor3("a")
    f, ref = compile_both([a], expm(a))
    rng = np.random.default_rng(5)
    av = rng.normal(size=(3, 4, 4)) * 2
    _close(f(av), ref(av), rtol=1e-12)


def test_gradient():
    a = pt.matrix("a")
    w = pt.matrix("w")
    g = pytensor.grad((expm(a) * w).sum(), a)
    f, ref = compile_both([a, w], g)
    rng = np.random.default_rng(7)
    for scale in [0.1, 4.0]:
        av, wv = rng.normal(size=(3, 3)) * scale, rng.normal(size=(3, 3))
        _close(f(av, wv), ref(av, wv), rtol=1e-11)
