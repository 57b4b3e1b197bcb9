"""The regularized incomplete beta function betainc(a, b, x) (lower/scalar_math/beta.rs).

- accuracy: against mpmath on the points of benchmarks/accuracy_cases.py (a, b from 1e-3
  to 3e3, integer ones among them, x uniform, near the mean and tiny): within 16 ULP where
  scipy is within 8, plus allowances for the known limitations (beta.rs: the exponential's
  error grows with |log I|, the series' with 1 / (1 - x), the continued fraction's near
  the mean with a + b), and never a larger max error than PyTensor's C backend.
- special values and bad input: as the C backend (nan outside the domain).
- integer inputs: float32 or float64 as PyTensor's `upgrade_to_float_no_complex` says.
"""

import os
import sys

import numpy as np
import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest

from pytensor.tensor.elemwise import Elemwise

from conftest import C, MLIR, assert_same, compile_both
from test_elemwise import scalar_ops
from ulp import exact, ulp_errors

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from accuracy_cases import BY_NAME, points  # noqa: E402

MAX_ULP = 8.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_betainc_accuracy(dtype):
    import scipy.special as sp

    case = BY_NAME["betainc"]
    rng = np.random.default_rng(5)
    a, b, x = (pt.vector(n, dtype=dtype) for n in "abx")
    f, ref = compile_both([a, b, x], pt.betainc(a, b, x))
    v = points(case, dtype, 600, rng)
    with np.errstate(all="ignore"):
        got, c_got = f(*v), ref(*v)
        scipy_got = sp.betainc(*v.astype("float64")).astype(dtype)
    want = exact(case.mpmath, *v)
    errors = ulp_errors(got, want, dtype)
    c_errors = ulp_errors(c_got, want, dtype)
    scipy_ok = ulp_errors(scipy_got, want, dtype) <= MAX_ULP
    # The exponential's argument carries an absolute error of about eps |log I| (more
    # where the result is tiny): the goal allows 2 |log I| ulps more.
    size = np.array([abs(float(np.log(float(w)))) if 0 < float(w) < 1 else 0.0 for w in want])
    # Near the mean a / (a + b) the continued fraction's odd denominators cancel to about
    # 1 / (a + b) of their terms: the rounding grows with a + b there (a known limitation,
    # beta.rs), allowed (a + b) / 8 ulps.
    # And the power series used for b x <= 1 carries its terms' recurrence error, which
    # grows as 1 / (1 - x) (about 50 ulps at x = 0.986; scipy: 8 there), also allowed.
    x64 = v[2].astype("float64")
    # Known limitation (beta.rs): for a, b < 10 the power term is exp(...) gamma(a + b) /
    # gamma(a) / gamma(b), adding three gamma errors: 16 ULP there instead of 8.
    goal = 2 * MAX_ULP + 2 * size + (v[0] + v[1]).astype("float64") / 8
    goal = goal + np.where(x64 < 1, 1 / np.maximum(1 - x64, 1e-300), 0)
    bad = scipy_ok & (errors > goal)
    report = []
    if bad.any():
        i = int(np.argmax(np.where(bad, errors, -1)))
        report.append(f"{errors[i]:.3g} ULP at {tuple(v[:, i])!r} (got {got[i]!r}, want {float(want[i])!r})")
    if errors.max() > max(MAX_ULP, c_errors.max()):
        i = int(np.argmax(errors))
        report.append(f"max {errors[i]:.3g} ULP at {tuple(v[:, i])!r}, C backend's max {c_errors.max():.3g}")
    assert not report, "\n".join(report)


def test_betainc_special_values_like_the_c_backend():
    """nan for a <= 0, b <= 0, x outside [0, 1], infinite a or b and nan anywhere; 0 at
    x = 0, 1 at x = 1; large and tiny parameters and the swap point, float32 and float64
    (float32 through int8/float32 inputs) in one graph."""
    nan, inf = np.nan, np.inf
    rows = [(nan, 1, .5), (1, nan, .5), (1, 1, nan), (0, 1, .5), (-1, 1, .5), (1, 0, .5), (1, -2, .5),
            (1, 1, -.1), (1, 1, 1.1), (1, 1, -inf), (1, 1, inf), (inf, 1, .5), (1, inf, .5), (-inf, 1, .5),
            (2, 3, 0.0), (2, 3, 1.0), (0.5, 0.5, 0.0), (1e-300, 1e-300, 0.5), (1, 1, 0.25), (2, 1, 0.25),
            (1, 2, 0.25), (1e5, 1e5, 0.4999), (1e5, 1e5, 0.5001), (20, 30, 0.4), (0.5, 30, 0.01),
            (30, 0.5, 0.99), (3.0, 4.0, 3 / 9)]  # fmt: skip
    cols = [np.array(c, dtype="float64") for c in zip(*rows)]
    a, b, x = (pt.vector(n, dtype="float64") for n in "abx")
    a32, b32, x32 = (pt.vector(n + "32", dtype="float32") for n in "abx")
    ai, bi = pt.vector("ai", dtype="int8"), pt.vector("bi", dtype="int16")
    outs = [pt.betainc(a, b, x), pt.betainc(a32, b32, x32), pt.betainc(ai, bi, x32)]
    f, ref = compile_both([a, b, x, a32, b32, x32, ai, bi], outs)
    # Positive: on integers the C backend runs scipy (a = 0 gives 1 there, nan in C).
    ints = np.array([1, 2, 3, 4, 6, 5, 100, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 2, 1, 100, 100, 20, 1, 30, 3], "int8")
    vals = [*cols, *(c.astype("float32") for c in cols), ints, (ints.astype("int16") + 1)]
    with np.errstate(all="ignore"):
        got, want = f(*vals), ref(*vals)
    assert [g.dtype for g in got] == [np.float64, np.float32, np.float32]
    # In float64 the C code itself is off on the last rows (tgamma overflows at 1e-300: 0
    # for 0.5; its lgamma form loses 1e-10 at a = b = 1e5): scipy is the reference there.
    c_rows = slice(0, 17)
    assert_same(got[0][c_rows], want[0][c_rows], rtol=1e-12, err_msg="float64")
    import scipy.special as sp

    assert_same(got[0][17:], sp.betainc(*(c[17:] for c in cols)), rtol=1e-13, err_msg="float64 vs scipy")
    for name, g, w in zip(["float32", "int8/int16"], got[1:], want[1:]):
        assert_same(g, w, rtol=2e-6, err_msg=name)


def test_betainc_distribution_cdfs():
    """The uses behind PyMC's CDFs, on a batch against the C backend: the Binomial CDF
    betainc(n - k, k + 1, 1 - p), the StudentT one betainc(nu/2, 1/2, nu / (nu + t^2))."""
    n, k, p = pt.vector("n"), pt.vector("k"), pt.vector("p")
    nu, t = pt.vector("nu"), pt.vector("t")
    outs = [pt.betainc(n - k, k + 1, 1 - p), pt.betainc(nu / 2, 0.5, nu / (nu + t**2))]
    f, ref = compile_both([n, k, p, nu, t], outs)
    rng = np.random.default_rng(3)
    m = 500
    nv = rng.integers(1, 2000, m).astype(pytensor.config.floatX)
    kv = np.floor(rng.uniform(0, 1, m) * nv).astype(nv.dtype)
    pv = rng.uniform(0, 1, m).astype(nv.dtype)
    nuv = (10 ** rng.uniform(-1, 3, m)).astype(nv.dtype)
    tv = rng.standard_normal(m).astype(nv.dtype) * 3
    got, want = f(nv, kv, pv, nuv, tv), ref(nv, kv, pv, nuv, tv)
    for g, w in zip(got, want):
        # Relative to the larger of the value and 1e-300: far tails are compared absolutely.
        tol = 1e-11 if g.dtype == np.float64 else 2e-5
        np.testing.assert_allclose(g, w, rtol=tol, atol=1e-290 if g.dtype == np.float64 else 1e-37)


def test_betainc_staged_kernels_broadcast_and_agree_with_the_fused_form():
    """A bare betainc is two kernels (its power term and first fraction steps as vector
    code, then the series or the rest of the fraction: scalar_math::Stage); the MLIR modes
    keep it out of PyTensor's fusion (rewrites.StagedBetaInc), so it stays bare among
    other elementwise ops; inside a Composite built by hand one kernel computes it. All
    against the C backend on broadcasting inputs (a row of a, a column of b, a matrix of x
    with special values), the Composite's result equal to the bare one put through the same
    ops, and 0-d inputs."""
    a, b, x = pt.row("a", dtype="float64"), pt.col("b", dtype="float64"), pt.dmatrix("x")
    f, ref = compile_both([a, b, x], [pt.betainc(a, b, x)])
    mlir = f.maker.linker.mlir
    assert mlir.count("linalg.generic") == 2 and "tensor.extract" in mlir, "the stages and their hand-over"
    around, around_ref = compile_both([a, b, x], [pt.exp(-pt.betainc(a - 0.0 * x, b, x)) * 2.0])
    assert "StagedBetaInc" in scalar_ops(around) and "BetaInc" not in scalar_ops(around), "betainc left unfused"
    assert "BetaInc" in scalar_ops(around_ref), "the C backend's graph keeps PyTensor's Op"
    sa, sb, sx = (ps.float64(n) for n in "abx")
    composite = Elemwise(ps.Composite([sa, sb, sx], [ps.exp(-ps.betainc(sa, sb, sx)) * ps.constant(2.0)]))
    fused, fused_ref = compile_both([a, b, x], [composite(a, b, x)])
    assert "Composite" in scalar_ops(fused) and fused.maker.linker.mlir.count("linalg.generic") == 1, "one kernel"
    rng = np.random.default_rng(8)
    av = 10.0 ** rng.uniform(-1, 2, (1, 6))
    bv = 10.0 ** rng.uniform(-1, 2, (5, 1))
    xv = rng.uniform(0, 1, (5, 6))
    xv[0, :4] = [0.0, 1.0, np.nan, 1.5]
    av[0, 5], bv[4, 0] = -1.0, 0.0
    for fn, fn_ref in [(f, ref), (around, around_ref), (fused, fused_ref)]:
        assert_same(fn(av, bv, xv)[0], fn_ref(av, bv, xv)[0], rtol=1e-11)
    want = np.exp(-f(av, bv, xv)[0]) * 2.0
    assert_same(fused(av, bv, xv)[0], want, rtol=1e-15)
    assert_same(around(av, bv, xv)[0], want, rtol=1e-15)
    s, t, y = pt.dscalar("s"), pt.dscalar("t"), pt.dscalar("y")
    g, g_ref = compile_both([s, t, y], pt.betainc(s, t, y))
    for args in [(2.5, 3.5, 0.3), (40.0, 0.5, 0.99), (0.1, 20.0, 1e-5), (1.0, -1.0, 0.5)]:
        assert_same(g(*args), g_ref(*args), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_betaincinv_accuracy(dtype):
    """betaincinv (lower/scalar_math/beta_inv.rs) against mpmath on the points of
    benchmarks/accuracy_cases.py (a, b in [1e-2, 1e3], y uniform and in both tails): never a
    larger max error than the C backend's (which runs scipy: the Op has no C code); where
    the C backend is within 8 ULP, float32 within 1 ULP and float64 within 16 ULP plus
    betainc's known tail error (2 |ln t| ULP for the smaller tail t, beta.rs), times the
    root's condition for small a or b (below)."""
    case = BY_NAME["betaincinv"]
    rng = np.random.default_rng(13)
    a, b, y = (pt.vector(n, dtype=dtype) for n in "aby")
    f, ref = compile_both([a, b, y], pt.betaincinv(a, b, y))
    v = points(case, dtype, 200, rng)
    with np.errstate(all="ignore"):
        got, c_got = f(*v), ref(*v)
    want = exact(case.mpmath, *v)
    errors, c_errors = ulp_errors(got, want, dtype), ulp_errors(c_got, want, dtype)
    y64 = v[2].astype("float64")
    with np.errstate(all="ignore"):
        w = np.array([float(x) if np.isfinite(float(x)) else 0.5 for x in want])
        t = np.minimum(y64, 1 - y64)
        tail = np.where(t > 0, 2 * np.abs(np.log(np.where(t > 0, t, 1))), 0)
    # The root of a tail like x^a is ill-conditioned for small a (condition 1 / a): the
    # forward errors grow by a factor up to 1 / (4 min(a, b)) there (36 ULP measured at a = 0.036).
    condition = np.maximum(1, 0.25 / np.minimum(v[0], v[1]).astype("float64"))
    goal = 1.0 if dtype == "float32" else (16 + tail) * condition
    bad = (c_errors <= MAX_ULP) & (errors > goal)
    report = []
    if bad.any():
        i = int(np.argmax(np.where(bad, errors, -1)))
        report.append(f"{errors[i]:.3g} ULP at {tuple(v[:, i])!r} (got {got[i]!r}, want {float(want[i])!r}; C {c_errors[i]:.3g})")
    if errors.max() > max(MAX_ULP, c_errors.max()):
        i = int(np.argmax(errors))
        report.append(f"max {errors[i]:.3g} ULP at {tuple(v[:, i])!r}, C backend's max {c_errors.max():.3g}")
    assert not report, "\n".join(report)


def test_betaincinv_special_values_like_the_c_backend():
    """nan for a <= 0, b <= 0, y outside [0, 1] and nan anywhere; 0 at y = 0, 1 at y = 1;
    infinite a (1) or b (0), both (nan); float64 and float32, against the C backend (scipy)."""
    nan, inf = np.nan, np.inf
    rows = [(nan, 1, .5), (1, nan, .5), (1, 1, nan), (0, 1, .5), (-1, 1, .5), (1, 0, .5), (1, -2, .5),
            (1, 1, -.1), (1, 1, 1.1), (1, 1, -inf), (1, 1, inf), (inf, 1, .5), (1, inf, .5), (inf, inf, .5),
            (inf, 1, 0.0), (1, inf, 1.0), (2, 3, 0.0), (2, 3, 1.0), (1, 1, 0.25), (2, 1, 0.25), (1, 2, 0.25),
            (1, 1e-300, 1e-300), (0.5, 0.5, 0.5), (20, 30, 0.4), (0.5, 30, 0.01), (30, 0.5, 0.99)]  # fmt: skip
    cols = [np.array(c, dtype="float64") for c in zip(*rows)]
    a, b, y = (pt.dvector(n) for n in "aby")
    a32, b32, y32 = (pt.fvector(n + "32") for n in "aby")
    f, ref = compile_both([a, b, y, a32, b32, y32], [pt.betaincinv(a, b, y), pt.betaincinv(a32, b32, y32)])
    vals = [*cols, *(c.astype("float32") for c in cols)]
    with np.errstate(all="ignore"):
        got, want = f(*vals), ref(*vals)
    assert_same(got[0], want[0], rtol=1e-13, err_msg="float64")
    assert_same(got[1], want[1], rtol=1e-6, err_msg="float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_betainc_accuracy_below_the_swap_point(dtype):
    """b x <= 1 with x below the swap point (a+1)/(a+b+2): the unswapped continued fraction
    (beta.rs; the power series ran there before, 87 terms on average for x > 0.1), against
    mpmath, within test_betainc_accuracy's goal (16 ULP plus betainc's known tail error
    2 |ln I| and (a + b) / 8; float32: 1 ULP) at every point. Measured on these points:
    float64 max 612 ULP (mean 21) at a = 810, where I is tiny (the C backend's max: 7174),
    float32 max 0.5."""
    rng = np.random.default_rng(21)
    n = 150
    a = 10 ** rng.uniform(-3, 3, n)
    b = 10 ** rng.uniform(-3, 0.5, n)
    top = np.minimum((a + 1) / (a + b + 2), np.minimum(1 / b, 0.99))
    x = rng.uniform(0.1, 1, n) * top
    keep = x > 0.05
    v = np.stack([a[keep], b[keep], x[keep]]).astype(dtype)
    av, bv, xv = (pt.vector(n, dtype=dtype) for n in "abx")
    f, ref = compile_both([av, bv, xv], pt.betainc(av, bv, xv))
    want = exact(BY_NAME["betainc"].mpmath, *v)
    errors = ulp_errors(f(*v), want, dtype)
    size = np.array([abs(float(np.log(float(w)))) if 0 < float(w) < 1 else 0.0 for w in want])
    goal = 2 * MAX_ULP + 2 * size + (v[0] + v[1]).astype("float64") / 8
    goal = np.full(len(errors), 1.0) if dtype == "float32" else goal
    i = int(np.argmax(errors - goal))
    assert errors[i] <= goal[i], f"{errors[i]:.3g} ULP at {tuple(v[:, i])!r}, goal {goal[i]:.3g}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_betaincinv_far_lower_tail(dtype):
    """Roots far in the lower tail, a and b in [0.1, 10] (betainc's power term for a, b < 10,
    its exponent carried to twice the precision in float64, beta.rs) and y down to 1e-300
    (1e-38 in float32), where Newton's steps stall at the residual's rounding (newton.rs),
    against mpmath. Measured on these points: float64 max 18.7 ULP, mean 1.1 (on 200 such
    points before the double exponent: max 448, mean 44; after: 30, 1.0); float32 max 0.5."""
    rng = np.random.default_rng(22)
    n = 100
    low = -300 if dtype == "float64" else -37
    v = np.stack([10 ** rng.uniform(-1, 1, n), 10 ** rng.uniform(-1, 1, n), 10 ** rng.uniform(low, -5, n)]).astype(dtype)
    a, b, y = (pt.vector(n, dtype=dtype) for n in "aby")
    f = pytensor.function([a, b, y], pt.betaincinv(a, b, y), mode=MLIR)
    want = exact(BY_NAME["betaincinv"].mpmath, *v)
    errors = ulp_errors(f(*v), want, dtype)
    bound = 1.0 if dtype == "float32" else 40.0
    i = int(np.argmax(errors))
    assert errors[i] <= bound, f"{errors[i]:.3g} ULP at {tuple(v[:, i])!r}"


def test_betaincinv_tiny_roots_where_the_fraction_starts_settled():
    """Tiny roots (a in [0.01, 0.05], b in [0.1, 1], y in (0.5, 0.9)): at x near 1e-16 the
    continued fraction's terms no longer count from its first step, and Wallis's
    recurrences, carried as the numerator A itself, lost an ulp of B to each term (B = 1
    sits on a binade's edge) and ran to their step cap with I 2e-12 off: betaincinv's
    Newton steps stopped 1.07e6 ULP from the root at (0.0111, 0.280, 0.649), the first
    point. Against mpmath, within 16 ULP times the root's condition 1 / a (measured after
    the fix: 8 ULP at that point)."""
    rng = np.random.default_rng(31)
    n = 60
    v = np.stack([10 ** rng.uniform(-2, np.log10(0.05), n), 10 ** rng.uniform(-1, 0, n), rng.uniform(0.5, 0.9, n)])
    v[:, 0] = (0.011082980331974687, 0.27988560378944827, 0.6490869497427748)
    a, b, y = (pt.vector(n, dtype="float64") for n in "aby")
    f = pytensor.function([a, b, y], pt.betaincinv(a, b, y), mode=MLIR)
    want = exact(BY_NAME["betaincinv"].mpmath, *v)
    errors = ulp_errors(f(*v), want, "float64")
    bound = 16.0 / v[0]
    i = int(np.argmax(errors / bound))
    assert errors[i] <= bound[i], f"{errors[i]:.3g} ULP at {tuple(v[:, i])!r}, bound {bound[i]:.3g}"


def test_betaincinv_roots_far_from_where_their_equation_is_solved():
    """A root found from the reflected equation I_z(b, a) = 1 - y (y > 0.9) but far below
    1/2 is 1 - z rounded (ulp(1) / x relative: 4.7e5 ULP at (0.0108, 83.7, 0.908), the
    first point, before Newton's steps on the direct equation polished it: 201; on these
    points at most 0.19 of the bound, 425 times it before); a root
    near 1 for y in (1/4, 1/2] crept from below on the direct equation
    (betaincinv(28.09, 0.0117, 0.469), root 1 - 6e-26: 0.99999999999954, 4.1e3 ULP) before
    the reflected one served it too. Against mpmath, within 16 ULP times the root's
    condition 1 / min(a, b)."""
    rng = np.random.default_rng(37)
    n = 60
    v = np.stack([10 ** rng.uniform(-2, np.log10(0.05), n), 10 ** rng.uniform(1, np.log10(700), n), rng.uniform(0.9, 0.99, n)])
    v[:, 0] = (0.010770427725, 83.7386014, 0.908045869)
    v[:, 1] = (28.092614894327628, 0.011703317782852366, 0.46938262773245343)
    v[:, 2:12] = np.stack([10 ** rng.uniform(0, 2.5, 10), 10 ** rng.uniform(-2, -1, 10), rng.uniform(0.25, 0.5, 10)])
    a, b, y = (pt.vector(n, dtype="float64") for n in "aby")
    f = pytensor.function([a, b, y], pt.betaincinv(a, b, y), mode=MLIR)
    got = f(*v)
    want = exact(BY_NAME["betaincinv"].mpmath, *v)
    assert got[1] == 1.0, got[1]
    errors = ulp_errors(got, want, "float64")
    bound = 16.0 / np.minimum(v[0], v[1])
    i = int(np.argmax(errors / bound))
    assert errors[i] <= bound[i], f"{errors[i]:.3g} ULP at {tuple(v[:, i])!r}, bound {bound[i]:.3g}"
