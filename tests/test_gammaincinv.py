"""The inverses of the regularized incomplete gamma functions, gammaincinv(a, p) and
gammainccinv(a, q) (lower/scalar_math/incomplete_gamma_inv.rs).

PyTensor's Ops have no C code: the C backend runs their Python implementation, scipy's
gammaincinv and gammainccinv, so "the C backend" below is scipy on the same points.

- accuracy: against mpmath (a root found at 256 bits, benchmarks/accuracy_cases.py) on a
  log-uniform in [1e-2, 1e3] and p uniform, in both tails down to 1e-300 and within 1e-16
  of 1: never a larger max error than the C backend's; where the C backend is within
  8 ULP, ours within 40 in float64 (see below) and within 1 ULP in float32 (computed in
  float64 and rounded once).
- special values and bad input: exactly as the C backend (nan for a < 0, a nan, a
  probability outside [0, 1]; the ends 0 and inf).
- the gradient PyTensor builds (from the forward function, exp, gamma and pow) against the
  C backend.
- huge a (1e8 to 1e15), where Temme's expansion serves the forward functions and the
  inverses (here so that it shares the inverses' compiled function with the accuracy test).
"""

import functools
import os
import sys

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from conftest import C, MLIR, assert_same, compile_both
from test_elemwise import scalar_ops
from ulp import exact, ulp_errors

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from accuracy_cases import BY_NAME, points  # noqa: E402

MAX_ULP = 8.0
# Where the C backend is within 8 ULP, float64 results may miss by the forward function's
# error (incomplete_gamma.rs: 8.7 ULP max on the accuracy report's points; it was 48 below
# a = 10 near x = a and 25.5 at Q(0.671, 1.31) before the prefactor's exponent was carried
# in two doubles and the continued fraction evaluated backward) times the root's
# condition, and for a < 0.1 by the 1/a-amplified rounding of log p (the root of a tail
# like x^a): 21 ULP (gammaincinv(0.029, 0.36)). The C backend's max on the same points is
# 2,900 ULP (gammaincinv(0.001, 0.5)).
MAX_ULP_WHERE_C_IS_ACCURATE = {"float32": 1.0, "float64": 40.0}


@functools.cache
def inverses(dtype):
    """gammaincinv and gammainccinv of two vectors, with the MLIR and C modes (compiled once
    for the tests that use them)."""
    a, p = pt.vector("a", dtype=dtype), pt.vector("p", dtype=dtype)
    return compile_both([a, p], [BY_NAME[n].pytensor(a, p) for n in ["gammaincinv", "gammainccinv"]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gammaincinv_and_gammainccinv_accuracy(dtype):
    names = ["gammaincinv", "gammainccinv"]
    cases = [BY_NAME[n] for n in names]
    rng = np.random.default_rng(11)
    f, ref = inverses(dtype)
    assert {"GammaIncInv", "GammaIncCInv"} <= scalar_ops(f)
    v = points(cases[0], dtype, 300, rng)
    with np.errstate(all="ignore"):
        got, c_got = f(*v), ref(*v)
    report = []
    for c, g, cg in zip(cases, got, c_got):
        want = exact(c.mpmath, *v)
        errors, c_errors = ulp_errors(g, want, dtype), ulp_errors(cg, want, dtype)
        bad = (c_errors <= MAX_ULP) & (errors > MAX_ULP_WHERE_C_IS_ACCURATE[dtype])
        if bad.any():
            i = int(np.argmax(np.where(bad, errors, -1)))
            report.append(f"{c.name}: {errors[i]:.3g} ULP at {tuple(v[:, i])!r} (got {g[i]!r}, want {float(want[i])!r}; C {c_errors[i]:.3g})")
        if errors.max() > max(MAX_ULP, c_errors.max()):
            i = int(np.argmax(errors))
            report.append(f"{c.name}: max {errors[i]:.3g} ULP at {tuple(v[:, i])!r}, C backend's max {c_errors.max():.3g}")
    assert not report, "\n".join(report)


def test_gammaincinv_special_values_like_the_c_backend():
    """Every pair of special and plain arguments, float64 and float32, and integer a (int8:
    float32 results), against the C backend (scipy), except where scipy's answers are
    artifacts of its code and ours nan: at a = 0 scipy gives nan for most p in (0, 1) but
    0 for some near the ends, and at a = 1e-300 0 for p outside [0, 1]."""
    nan, inf = np.nan, np.inf
    a_vals = np.array([0.0, -1.0, 1.0, 2.5, 1e-300, 0.01, 150.0, inf, -inf, nan])
    p_vals = np.array([0.0, 1.0, 0.5, -0.1, 1.1, nan, 1e-300, 1 - 2**-53, 2**-53, inf, -inf])
    av, pv = (g.ravel() for g in np.meshgrid(a_vals, p_vals))
    a, p = pt.dvector("a"), pt.dvector("p")
    a32, p32 = pt.fvector("a32"), pt.fvector("p32")
    ai = pt.bvector("ai")
    # (Each inverse is a loop nest that costs seconds to compile: four outputs.)
    outs = [pt.gammaincinv(a, p), pt.gammainccinv(a, p), pt.gammaincinv(a32, p32), pt.gammainccinv(ai, p32)]
    f, ref = compile_both([a, p, a32, p32, ai], outs)
    ints = np.resize(np.array([0, 1, 2, 5, 100, -3], dtype="int8"), av.shape)
    vals = [av, pv, av.astype("float32"), pv.astype("float32"), ints]
    with np.errstate(all="ignore"):
        got, want = f(*vals), ref(*vals)
    assert [g.dtype for g in got] == [np.float64] * 2 + [np.float32] * 2
    a_all = [av, av, av.astype("float32"), ints]
    p_all = [pv, pv] + [pv.astype("float32")] * 2
    with np.errstate(invalid="ignore"):
        artifacts = [((x == 0) & (y > 0) & (y < 1)) | (y < 0) | (y > 1) for x, y in zip(a_all, p_all)]
    want = [np.where(m, np.nan, w).astype(w.dtype) for m, w in zip(artifacts, want)]
    # Finite results to the accuracy above (tails included): rtol 1e-13 (1e-6 in float32).
    for name, g, w in zip(["inv64", "cinv64", "inv32", "cinv_int8"], got, want):
        assert_same(g, w, rtol=1e-13 if g.dtype == np.float64 else 1e-6, err_msg=name)


def test_gammaincinv_gradient_like_the_c_backend():
    """d/dp gammaincinv(k, p) and d/dq gammainccinv(k, q): PyTensor's formula (exp, gamma,
    pow and the inverse itself), compiled in MLIR mode, against the C backend."""
    k, p = pt.dvector("k"), pt.dvector("p")
    cost = (pt.gammaincinv(k, p) + 2.0 * pt.gammainccinv(k, p)).sum()
    (g,) = pytensor.grad(cost, [p])
    f, ref = compile_both([k, p], g)
    assert "GammaIncInv" in scalar_ops(f)
    kv = np.array([0.5, 1.0, 2.5, 7.0, 30.0, 120.0, 0.05])
    pv = np.array([0.3, 0.5, 0.01, 0.9, 0.999, 1e-8, 0.6])
    assert_same(f(kv, pv), ref(kv, pv), rtol=1e-11)



def test_staged_kernels_broadcast_and_agree_with_the_fused_form():
    """A bare Elemwise of an inverse is two kernels (scalar_math::Stage: the second reads
    the first's values through tensor.extract at its own index); fused into a Composite
    with other ops it is one kernel running both stages. Both against the C backend with
    broadcasting inputs (a row of a, a matrix of p), and 0-d inputs (no index at all)."""
    a, p = pt.row("a", dtype="float64"), pt.dmatrix("p")
    f, ref = compile_both([a, p], [pt.gammaincinv(a, p)])
    assert f.maker.linker.mlir.count("tensor.extract") >= 5, "the stages' hand-over"
    fused_out = [pt.exp(-pt.gammaincinv(a, p)) * 2.0]
    fused, fused_ref = compile_both([a, p], fused_out)
    assert "Composite" in scalar_ops(fused)
    rng = np.random.default_rng(5)
    av = 10.0 ** rng.uniform(-2, 3, (1, 7))
    pv = np.concatenate([rng.uniform(0, 1, (4, 7)), 10.0 ** rng.uniform(-300, -1, (2, 7)), np.full((1, 7), 0.5)])
    pv[0, :3] = [0.0, 1.0, np.nan]
    for got, want in zip(f(av, pv), ref(av, pv)):
        assert_same(got, want, rtol=1e-11)
    for got, want in zip(fused(av, pv), fused_ref(av, pv)):
        assert_same(got, want, rtol=1e-11)
    got_bare = f(av, pv)
    got_fused = fused(av, pv)
    assert_same(got_fused[0], np.exp(-got_bare[0]) * 2.0, rtol=1e-15)
    s, q = pt.dscalar("s"), pt.dscalar("q")
    g, g_ref = compile_both([s, q], pt.gammainccinv(s, q))
    for sv, qv in [(3.5, 0.25), (0.02, 1e-200), (-1.0, 0.5)]:
        assert_same(g(sv, qv), g_ref(sv, qv), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_incomplete_gamma_huge_a(dtype):
    """gammainc, gammaincc and their inverses for a from 1e8 to 1e15 near x = a, where the
    series and the continued fraction ran into their iteration cap (nan) and Temme's
    expansion now serves. P and Q like the Ops' Python implementation (scipy, whose own
    asymptotic series serves these points: |x - a| / a < 4.5 / sqrt(a)) to rtol 1e-12
    (1e-5 in float32), and at the region's edges (x = 0.34 a and 2.2 a, the loops again,
    P or Q underflows). The inverses bracket their root: P (or Q) at x (1 -+ 4 eps)
    straddles the probability (scipy's inverses are off there: gammaincinv(1e9, 1e-10) =
    999803124.5 where P is 2.4e-10, by Temme's expansion in mpmath too)."""
    import pytensor
    from pytensor.compile.mode import Mode

    a = np.array([1e8, 1e8, 1e9, 1e12, 1e12, 1e15, 1e9, 1e9, 1e9, 1e9])
    x = a * np.array([1 + 1e-4, 1 - 1e-4, 1.0, 1 + 1e-6, 1 - 2e-6, 1 + 1e-7, 0.34, 0.36, 2.1, 2.2])
    y = np.array([0.3, 0.7, 1e-5, 0.5, 0.999, 0.01, 1e-10, 0.8, 0.2, 0.6])
    av, xv, yv = (v.astype(dtype) for v in (a, x, y))
    A, X = (pt.vector(n, dtype=dtype) for n in "ax")
    forward = [pt.gammainc(A, X), pt.gammaincc(A, X)]
    f = pytensor.function([A, X], forward, mode=MLIR)
    ref = pytensor.function([A, X], forward, mode=Mode(linker="py", optimizer="fast_run"))
    rtol = 1e-12 if dtype == "float64" else 1e-5
    for name, g, w in zip(["gammainc", "gammaincc"], f(av, xv), ref(av, xv)):
        assert np.isfinite(w).all(), name
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-300, err_msg=name)
    x_p, x_q = inverses(dtype)[0](av, yv)
    assert np.isfinite(x_p).all() and np.isfinite(x_q).all()
    eps = 4 * np.finfo(dtype).eps
    for root, upper in ((x_p, False), (x_q, True)):
        lo, hi = f(av, (root * (1 - eps)).astype(dtype)), f(av, (root * (1 + eps)).astype(dtype))
        below, above = (lo[1], hi[1]) if upper else (lo[0], hi[0])
        if upper:
            assert ((above <= yv) & (yv <= below)).all(), (root, below, above, yv)
        else:
            assert ((below <= yv) & (yv <= above)).all(), (root, below, above, yv)
