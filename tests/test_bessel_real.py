"""The modified Bessel functions of real order, ive(v, x) and kve(v, x)
(lower/scalar_math/bessel_real.rs), and the Bessel function of the first kind of real
order, jv(v, x) (lower/scalar_math/bessel_jv.rs; its tests at the end, the same kinds).

PyTensor's Ive and Kve have no C code: the C backend runs their Python implementation,
scipy's ive and kve, so "the C backend" below is scipy on the same points.

- values: every pair of special and plain arguments in float64, float32 and integer
  dtypes against the C backend, except where scipy gives nan and the function has a
  value (x = +-inf and huge x, v = inf, negative non-integer v at x = 0: there the
  reference is mpmath, `accuracy_cases._ive` and `_kve`) and scipy's kve(nan, 0) = inf
  (ours nan: a nan argument gives nan).
- accuracy: against mpmath (benchmarks/accuracy_cases.py) on random orders in [-60, 200]
  and x log-uniform down to 1e-300: never a larger max error than the C backend's, and
  within the bound below wherever the C backend is within 8 ULP.
- past the loops' caps (orders beyond 1e5 outside Hankel's region, and for ive of v >= 0
  or an integer v also outside its power series' region x < 2, for kve outside x < 1
  with v >= 15): nan, never a wrong value.
- the gradient in x PyTensor builds (ive and kve of v +- 1) against the C backend.
- on Vulkan (lavapipe) the float32 formulation (no float64 math) against the CPU mode.
"""

import os
import sys

import mpmath
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from conftest import assert_same, compile_both, vulkan_devices
from test_elemwise import scalar_ops
from ulp import exact, ulp_errors

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from accuracy_cases import BY_NAME, points  # noqa: E402

MAX_ULP = 8.0
# float32 is computed in float64 and rounded once.
MAX_ULP_WHERE_C_IS_ACCURATE = {"float32": 1.0, "float64": 8.0}

NAN, INF = np.nan, np.inf
V_VALUES = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 0.5, -0.5, 1.5, -1.5, -2.3, 2.3, 0.25, 30.0, 100.5, -40.7,
                     1e-300, INF, -INF, NAN])  # fmt: skip
X_VALUES = np.array([0.0, -0.0, 1.0, -1.0, -2.5, 2.0, 1.9999999999999998, 32.0, 1e-300, 5e-324, 1e-8, 0.1, 700.0,
                     1e4, 1e10, 1e300, INF, -INF, NAN])  # fmt: skip


def reference_fixes(name, v, x, want):
    """`want` (the C backend's, scipy's) with mpmath's value where scipy gives nan and the
    function has one, and at subnormal x (scipy's ive(0.5, 5e-324) is 0: the function is
    1.8e-162); nan where an argument is nan (scipy's kve(nan, 0) = inf); I's parity
    (-1)^v on the zeros at x = -inf (mpmath has no signed zero)."""
    fn = BY_NAME[name].mpmath
    want = want.copy()
    with np.errstate(invalid="ignore"):
        fill = np.isnan(want) | ((x != 0) & (np.abs(x) < np.finfo(want.dtype).tiny))
    for i in np.flatnonzero(fill):
        want[i] = float(exact(fn, [v[i]], [x[i]])[0])
    want[np.isnan(v) | np.isnan(x)] = np.nan
    if name == "ive":
        with np.errstate(invalid="ignore"):
            odd = np.isfinite(v) & (np.mod(v, 2) == 1)
        want[fill & (want == 0) & (x < 0) & odd] = -0.0
    return want


def typed_inputs():
    """The symbolic inputs of the *_like_the_c_backend tests: (v, x) in float64 and
    float32, int8 and int64 orders, int64 x."""
    return (pt.dvector("v64"), pt.dvector("x64"), pt.fvector("v32"), pt.fvector("x32"), pt.bvector("vi8"),
            pt.lvector("vi64"), pt.lvector("xi64"))  # fmt: skip


def input_values(vv, xv):
    """Values for `typed_inputs` from the float64 grid (vv, xv): its float32 rounding, and
    small integer orders and arguments of the grid's length."""
    ints = np.resize(np.array([0, 1, -1, 2, -3, 5, 30, -7], dtype="int8"), vv.shape)
    xints = np.resize(np.array([0, 1, -1, 2, -2, 5, 40, 1000, 3], dtype="int64"), vv.shape)
    with np.errstate(over="ignore", under="ignore"):
        return [vv, xv, vv.astype("float32"), xv.astype("float32"), ints, ints.astype("int64"), xints]


def test_ive_and_kve_like_the_c_backend():
    """Every pair of V_VALUES and X_VALUES, in float64, float32, and integer orders (int8
    with float32 x, int64 with int64 x: PyTensor's output dtypes), against the C backend:
    special values exactly (nan, infinities, zeros), finite values to rtol 1e-12 (1e-6 in
    float32)."""
    vv, xv = (g.ravel() for g in np.meshgrid(V_VALUES, X_VALUES))
    v64, x64, v32, x32, vi8, vi64, xi64 = typed_inputs()
    outs = [pt.ive(v64, x64), pt.kve(v64, x64), pt.ive(v32, x32), pt.kve(v32, x32), pt.ive(vi8, x32),
            pt.kve(vi8, x32), pt.ive(vi64, xi64), pt.kve(vi64, xi64)]  # fmt: skip
    f, ref = compile_both([v64, x64, v32, x32, vi8, vi64, xi64], outs)
    assert {"Ive", "Kve"} <= scalar_ops(f)
    vals = input_values(vv, xv)
    ints, xints = vals[4], vals[6]
    with np.errstate(all="ignore"):
        got, want = f(*vals), ref(*vals)
    assert [g.dtype for g in got] == [np.float64] * 2 + [np.float32] * 4 + [np.float64] * 2
    args = [(vals[0], vals[1]), (vals[0], vals[1]), (vals[2], vals[3]), (vals[2], vals[3]), (ints, vals[3]),
            (ints, vals[3]), (vals[5], xints), (vals[5], xints)]  # fmt: skip
    failures = []
    for k, (g, w, (v, x)) in enumerate(zip(got, want, args)):
        name = "ive" if k % 2 == 0 else "kve"
        w = reference_fixes(name, v.astype(g.dtype), x.astype(g.dtype), w).astype(g.dtype)
        try:
            assert_same(g, w, rtol=1e-6 if g.dtype == np.float32 else 1e-12, err_msg=f"output {k} ({name})")
        except AssertionError as e:
            failures.append(str(e).strip())
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ive_and_kve_accuracy(dtype):
    cases = [BY_NAME["ive"], BY_NAME["kve"]]
    rng = np.random.default_rng(41)
    v, x = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    f, ref = compile_both([v, x], [c.pytensor(v, x) for c in cases])
    vals = points(cases[0], dtype, 250, rng)
    with np.errstate(all="ignore"):
        got, c_got = f(*vals), ref(*vals)
    report = []
    for c, g, cg in zip(cases, got, c_got):
        want = exact(c.mpmath, *vals)
        errors, c_errors = ulp_errors(g, want, dtype), ulp_errors(cg, want, dtype)
        bad = (c_errors <= MAX_ULP) & (errors > MAX_ULP_WHERE_C_IS_ACCURATE[dtype])
        if bad.any():
            i = int(np.argmax(np.where(bad, errors, -1)))
            report.append(f"{c.name}: {errors[i]:.3g} ULP at {tuple(vals[:, i])!r} (got {g[i]!r}, want {float(want[i])!r}; C {c_errors[i]:.3g})")
        if errors.max() > max(MAX_ULP, c_errors.max()):
            i = int(np.argmax(errors))
            report.append(f"{c.name}: max {errors[i]:.3g} ULP at {tuple(vals[:, i])!r}, C backend's max {c_errors.max():.3g}")
    assert not report, "\n".join(report)


def test_ive_and_kve_large_arguments():
    """Hankel's region (x >= max(32, v^2)) up to huge x, and large orders: against mpmath
    to 8 ULP. Order 2e5 at x = 10 (outside Hankel's region, nl past the loops' cap: nan
    before Debye's expansions) is I's underflow to 0 and K's overflow to inf."""
    v = np.array([0.0, 0.5, 3.3, 100.0, 1000.0, 5.5, 0.0, 250.0, 800.0, 2e5, 2e5, -7.25])
    x = np.array([1e300, 1e15, 1e8, 1e4, 1e6, 31.99, 32.0, 62400.0, 3e4, 10.0, 1e11, 1e12])
    vv, xx = pt.dvector("v"), pt.dvector("x")
    f = pytensor.function([vv, xx], [pt.ive(vv, xx), pt.kve(vv, xx)], mode="MLIR")
    got_i, got_k = f(v, x)
    for name, got in (("ive", got_i), ("kve", got_k)):
        want = exact(BY_NAME[name].mpmath, v, x)
        errors = ulp_errors(got, want, "float64")
        assert errors.max() <= MAX_ULP, (name, errors, v[np.argmax(errors)], x[np.argmax(errors)])
    assert got_i[9] == 0.0 and got_k[9] == np.inf


def grid_errors(op, name, v, x, dtype):
    """`op` in the MLIR mode on the grid of orders `v` by arguments `x`: (the function,
    the grid's orders and arguments, the results, their ULP errors against mpmath)."""
    vv, xx = (a.ravel().astype(dtype) for a in np.meshgrid(v, x))
    a, b = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    f = pytensor.function([a, b], op(a, b), mode="MLIR")
    with np.errstate(under="ignore", over="ignore"):
        got = f(vv, xx)
    return f, vv, xx, got, ulp_errors(got, exact(BY_NAME[name].mpmath, vv, xx), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ive_power_series_region(dtype):
    """ive of v >= 0 or an integer v below x = 2 is I's power series, straight-line
    (`ive_series`): against mpmath on a grid of orders (around 10, where 1/Gamma(n + 1)
    switches from the product to Stirling's, up to 200) and x from the smallest subnormal
    to just below 2: within 3 ULP in float64 (measured 1.96) and 1 in float32 (computed in
    float64; 0.49). Orders past the loops' cap give 0 there (I underflows), not nan."""
    v = np.array([0.0, 0.3, 1.0, 2.5, 7.0, 9.99, 9.999999999999998, 10.0, 10.5, 15.7, 33.3, 66.47, 107.3, 170.5,
                  199.9, -3.0, -30.0])  # fmt: skip
    x = np.array([5e-324, 1e-300, 3e-170, 1e-100, 1e-20, 1e-8, 1.1e-8, 1e-3, 0.022, 0.5, 1.0, 1.5, 1.9999999999999998])
    f, vv, xx, got, errors = grid_errors(pt.ive, "ive", v, x, dtype)
    i = int(np.argmax(errors))
    assert errors.max() <= {"float32": 1.0, "float64": 3.0}[dtype], (errors[i], vv[i], xx[i], got[i])
    big = f(np.array([2e5, 1e30], dtype=dtype), np.array([1.0, 1.5], dtype=dtype))
    assert (big == 0).all(), big


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kve_series_region(dtype):
    """kve of |v| >= 15 below x = 1, >= 5 below 3e-3 and >= 2 below 1e-8 is I_-v's series,
    straight-line (`kve_series`): against mpmath on a grid of orders (each threshold and
    an ulp above, integers and orders near them, up to overflow) and x from the smallest
    subnormal to just below 1 (inside and outside the regions): within 3 ULP in float64
    (measured 1.54 inside, 4.23 outside, at kve(2.0000000000000004, 0.7): Temme's series
    and the recurrence, so 5 is asserted) and 1 in float32 (computed in float64; 0.50),
    overflowing to inf where the function does."""
    v = np.array([2.0, 2.0000000000000004, 2.5, 3.0, 4.999999, 5.0, 7.3, 9.999999999999998, 10.0, 12.0, 14.5, 15.0,
                  15.000000000000002, 15.3, 16.0, 19.5, 20.0, 29.999999999, 30.0, 44.7, 60.0, 99.9, 150.0, 170.6,
                  -15.0, -37.25])  # fmt: skip
    x = np.array([5e-324, 1e-300, 1e-100, 1e-20, 9.99e-9, 1e-8, 2.9e-3, 1e-3, 0.05, 0.3, 0.7, 0.99,
                  0.9999999999999999])  # fmt: skip
    f, vv, xx, got, errors = grid_errors(pt.kve, "kve", v, x, dtype)
    n, a = np.abs(vv.astype(np.float64)), xx.astype(np.float64)
    inside = ((n >= 15) & (a < 1)) | ((n >= 5) & (a < 3e-3)) | ((n >= 2) & (a < 1e-8))
    for where, bound in ((inside, {"float32": 1.0, "float64": 3.0}[dtype]), (~inside, {"float32": 1.0, "float64": 5.0}[dtype])):
        i = int(np.argmax(np.where(where, errors, -1)))
        assert errors[where].max() <= bound, (errors[i], vv[i], xx[i], got[i])
    assert np.isinf(got).any() and np.isfinite(got).any()


def test_ive_and_kve_gradient_like_the_c_backend():
    """d/dx of ive and kve: PyTensor's pullbacks (ive of v - 1, v, v + 1 and the sign of
    x; kve of v - 1 and the output), compiled in MLIR mode, against the C backend; and of
    ive alone at negative x for integer orders (I's parity; kve is nan there)."""
    v, x = pt.dvector("v"), pt.dvector("x")
    cost = (pt.ive(v, x) + 3.0 * pt.kve(v, x)).sum()
    (g,) = pytensor.grad(cost, [x])
    (gi,) = pytensor.grad(pt.ive(v, x).sum(), [x])
    f, ref = compile_both([v, x], [g, gi])
    assert {"Ive", "Kve"} <= scalar_ops(f)
    vv = np.array([0.0, 1.0, 0.5, 2.3, -1.5, 10.0, 0.25, 40.0, 3.0, 0.0, 1.0, 2.0, 5.0])
    xv = np.array([1.0, 0.1, 3.0, 25.0, 0.7, 50.0, 1e-3, 2000.0, 7.5, -1.0, -0.3, -4.0, -12.0])
    with np.errstate(invalid="ignore"):
        got, want = f(vv, xv), ref(vv, xv)
    assert np.isnan(want[0][9:]).all()
    assert_same(got[0], want[0], rtol=1e-11, err_msg="d/dx (ive + 3 kve)")
    assert_same(got[1], want[1], rtol=1e-11, err_msg="d/dx ive")


VULKAN_DEVICES, WHY_NO_VULKAN = vulkan_devices()


@pytest.mark.skipif(not VULKAN_DEVICES, reason=f"no Vulkan device ({WHY_NO_VULKAN or 'none listed'})")
def test_ive_and_kve_float32_formulation_on_vulkan():
    """On Vulkan ive and kve run in float32 (thresholds, caps and scales per type): within
    1e-5 relative of the CPU mode's (float64-computed) results where those are normal
    numbers (lavapipe flushes subnormals), special values the same. One function per op:
    lavapipe takes 128 bytes of push constants a dispatch."""
    rng = np.random.default_rng(43)
    specials_v = np.array([0.0, 1.0, -1.0, 0.5, -0.5, -1.5, 2.0, 3.0, np.inf, -np.inf, np.nan, 0.0, 1.0])
    specials_x = np.array([0.0, 0.0, -2.0, 0.0, 1.0, 0.0, np.inf, -np.inf, 1.0, 1.0, 1.0, np.nan, 1e30])
    v = np.concatenate([specials_v, rng.uniform(-5, 5, 40), rng.integers(-20, 20, 20), rng.uniform(0, 60, 20)])
    x = np.concatenate([specials_x, 10 ** rng.uniform(-3, 2, 40), rng.uniform(-20, 20, 20), 10 ** rng.uniform(-6, 3, 20)])
    v, x = v.astype("float32"), x.astype("float32")
    a, b = pt.fvector("v"), pt.fvector("x")
    failures = []
    for name, fn in (("ive", pt.ive), ("kve", pt.kve)):
        cpu = pytensor.function([a, b], fn(a, b), mode="MLIR")
        gpu = pytensor.function([a, b], fn(a, b), mode="MLIR_VULKAN")
        with np.errstate(all="ignore"):
            want, got = cpu(v, x), gpu(v, x)
        normal = ~np.isfinite(want) | (want == 0) | (np.abs(want) >= np.finfo("float32").tiny)
        try:
            assert_same(got[normal] + 0, want[normal] + 0, rtol=1e-5, err_msg=name)
        except AssertionError as e:
            failures.append(str(e).strip())
    assert not failures, "\n\n".join(failures)


# Jv (lower/scalar_math/bessel_jv.rs). PyTensor's Jv has no C code either: its C backend
# runs scipy's jv.
JV_V_VALUES = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 0.5, -0.5, 1.5, -1.5, -2.3, 2.3, 0.25, 30.0, 100.5, -40.7,
                        1e-300, 1e5, INF, -INF, NAN])  # fmt: skip
JV_X_VALUES = np.array([0.0, -0.0, 1.0, -1.0, -2.5, 2.0, 1.9999999999999998, 0.9999999999999999, 32.0, 1e-300,
                        5e-324, 1e-8, 0.1, 700.0, 1e4, 1e10, INF, -INF, NAN])  # fmt: skip


def jv_reference(v, x, want):
    """`want` (scipy's jv) with mpmath's value where scipy gives nan and the function has
    one (x = +-inf: 0, the limit), at subnormal x, and nan at v = -inf (scipy: 0; J_-v
    has no limit) and for nan arguments."""
    want = reference_fixes("jv", v, x, np.where(v == -INF, NAN, want))
    # (-1)^v for integer orders, per x < 0 and per v < 0, on the zeros at x = -inf.
    with np.errstate(invalid="ignore"):
        odd = np.isfinite(v) & (np.mod(v, 2) == 1)
    want[(want == 0) & np.isinf(x) & odd & ((x < 0) != (v < 0))] = -0.0
    return want


def test_jv_like_the_c_backend():
    """Every pair of JV_V_VALUES and JV_X_VALUES in float64 and float32, and integer
    orders (int8 with float32 x, int64 with int64 x: PyTensor's output dtypes float32 and
    float64), against the C backend (scipy): special values exactly (nan, infinities,
    zeros), finite values to rtol 1e-12 (1e-6 in float32) or, where J oscillates, to an
    absolute 1e-15 (1e-7) of sqrt(2 / (pi |x|))."""
    vv, xv = (g.ravel() for g in np.meshgrid(JV_V_VALUES, JV_X_VALUES))
    v64, x64, v32, x32, vi8, vi64, xi64 = typed_inputs()
    outs = [pt.jv(v64, x64), pt.jv(v32, x32), pt.jv(vi8, x32), pt.jv(vi64, xi64)]
    f, ref = compile_both([v64, x64, v32, x32, vi8, vi64, xi64], outs)
    assert "Jv" in scalar_ops(f)
    vals = input_values(vv, xv)
    ints, xints = vals[4], vals[6]
    with np.errstate(all="ignore"):
        got, want = f(*vals), ref(*vals)
    assert [g.dtype for g in got] == [np.float64, np.float32, np.float32, np.float64]
    args = [(vals[0], vals[1]), (vals[2], vals[3]), (ints, vals[3]), (vals[5], xints)]
    failures = []
    for k, (g, w, (v, x)) in enumerate(zip(got, want, args)):
        v, x = v.astype(g.dtype), x.astype(g.dtype)
        w = jv_reference(v, x, w).astype(g.dtype)
        with np.errstate(all="ignore"):
            amplitude = np.where(np.abs(x) > np.abs(v), np.sqrt(2 / (np.pi * np.abs(x))), 0.0)
            close = np.isfinite(w) & np.isfinite(g) & (np.abs(g - w) <= (1e-7 if g.dtype == np.float32 else 1e-15) * amplitude)
        try:
            assert_same(np.where(close, w, g), w, rtol=1e-6 if g.dtype == np.float32 else 1e-12, err_msg=f"output {k}")
        except AssertionError as e:
            failures.append(str(e).strip())
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jv_accuracy(dtype):
    """Against mpmath (benchmarks/accuracy_cases.py's jv: random orders in [-60, 200], x
    log-uniform down to 1e-300, integer orders with x of either sign; errors absolute near
    the zeros, Case.floor): never a larger max error than the C backend's, and within the
    bound wherever the C backend is within 8 ULP."""
    case = BY_NAME["jv"]
    rng = np.random.default_rng(47)
    v, x = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    f, ref = compile_both([v, x], [case.pytensor(v, x)])
    vals = points(case, dtype, 400, rng)
    with np.errstate(all="ignore"):
        (got,), (c_got,) = f(*vals), ref(*vals)
    want = exact(case.mpmath, *vals)
    floor = case.floor(*vals.astype(np.float64))
    errors, c_errors = ulp_errors(got, want, dtype, floor), ulp_errors(c_got, want, dtype, floor)
    bad = (c_errors <= MAX_ULP) & (errors > MAX_ULP_WHERE_C_IS_ACCURATE[dtype])
    i = int(np.argmax(np.where(bad, errors, -1)))
    assert not bad.any(), f"{errors[i]:.3g} ULP at {tuple(vals[:, i])!r} (got {got[i]!r}, want {float(want[i])!r}; C {c_errors[i]:.3g})"
    i = int(np.argmax(errors))
    assert errors.max() <= max(MAX_ULP, c_errors.max()), f"max {errors[i]:.3g} ULP at {tuple(vals[:, i])!r}, C's max {c_errors.max():.3g}"


def test_jv_large_arguments():
    """Hankel's region (x >= max(32, v^2 / 6)), its edge, long recurrences and large orders
    against mpmath (absolute near the zeros); past the iteration cap Debye's expansion;
    where the bound (e x / 2v)^v underflows, 0 without any loop."""
    case = BY_NAME["jv"]
    # (1e4, 9000): CF1's tail just past n, where the ratios fall slowly (20 steps there
    # left 2.7e-9); (3000, 2950), (500, 600): long recurrences through the turning point.
    v = np.array([0.0, 0.5, 3.3, 100.0, 1000.0, 250.0, 5.5, 40.0, 40.0, 1000.0, -7.25, -30.5, 1e4, 3000.0, 500.0,
                  2e5, 1e6])  # fmt: skip
    x = np.array([1e14, 1e8, 1e6, 1e4, 1e6, 10417.0, 31.99, 266.0, 267.0, 1000.0, 1e5, 80.0, 9000.0, 2950.0, 600.0,
                  1e6, 5.0])  # fmt: skip
    vv, xx = pt.dvector("v"), pt.dvector("x")
    f = pytensor.function([vv, xx], pt.jv(vv, xx), mode="MLIR")
    got = f(v, x)
    k = 15
    want = exact(case.mpmath, v[:k], x[:k])
    errors = ulp_errors(got[:k], want, "float64", case.floor(v[:k], x[:k]))
    assert errors.max() <= MAX_ULP, (errors, v[np.argmax(errors)], x[np.argmax(errors)])
    # Order 2e5 at x = 1e6: x < v^2 / 6 and CF1 would take 1e6 steps, past the cap:
    # Debye's expansion (test_jv_large_orders).
    errors = ulp_errors(got[15:16], exact(case.mpmath, v[15:16], x[15:16]), "float64", case.floor(v[15:16], x[15:16]))
    assert errors.max() <= MAX_ULP, errors
    assert got[16] == 0.0


def test_jv_debye_reference_matches_mpmath():
    """accuracy_cases.py's reference for large orders (Debye's expansions in mpmath)
    against mpmath's besselj (its power series at 40 digits) where that converges."""
    from accuracy_cases import _besselj_debye

    for v, x in [(1000, 2e5), (300, 1500), (500, 300), (200, 3000), (2000, 1000)]:
        with mpmath.workdps(40):
            want = mpmath.besselj(v, x)
        got = _besselj_debye(v, x)
        assert got is not None and abs(got - want) <= 1e-30 * abs(want), (v, x, got, want)


def jv_large_order_points(rng, n):
    """(v, x): orders log-uniform in [1e3, 1e7], x from v/2 to 10 v, within 10% of v
    outside the transition region, and up to 1e4 v (x <= 1e7); every third x < v."""
    v = 10.0 ** rng.uniform(3, 7, n)
    r = 10.0 ** rng.uniform(-0.3, 1, n)
    r[::3] = 1 + np.where(rng.random(len(r[::3])) < 0.5, -1, 1) * 10.0 ** rng.uniform(-1.5, -1, len(r[::3]))
    r[1::3] = 10.0 ** rng.uniform(0, 4, len(r[1::3]))
    return np.round(v * 8) / 8, np.minimum(v * r, 1e7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jv_large_orders(dtype):
    """Debye's expansions (bessel_debye.rs), where the loops pass their cap (nan before),
    against mpmath (accuracy_cases' Debye reference; absolute errors near the zeros as
    Case.floor): within 8 ULP on random points and the issue's cases (jv(5e3, 2e5) ...
    jv(1e6, 1.2e6), integer orders of either sign). Points in the transition region past
    order 1e5 (|x - v| < ~24 v^(1/3)), where that reference does not converge, are only
    checked to be finite here: test_jv_transition_region checks their values."""
    case = BY_NAME["jv"]
    v, x = jv_large_order_points(np.random.default_rng(5), 60)
    edges = np.array([5e3, 2e5, 1e4, 2e5, 5e4, 2e5, 1e5, 2e5, 3e5, 3.1e5, 1e6, 1.2e6, 1e6, 9e5, -1e6, 1.2e6, -999999.0,
                      1.2e6, 1e6, -1.2e6, 2e6, 1e7, 2e5, 2e5, 1e6, 1000500.0, 5e5, 499700.0]).reshape(-1, 2).T  # fmt: skip
    v, x = np.concatenate([v, edges[0]]).astype(dtype), np.concatenate([x, edges[1]]).astype(dtype)
    a, b = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    f = pytensor.function([a, b], pt.jv(a, b), mode="MLIR")
    with np.errstate(under="ignore"):
        got = f(v, x)
    v64, x64 = v.astype(np.float64), x.astype(np.float64)
    av, ax = np.abs(v64), np.abs(x64)
    w = np.sqrt(np.abs(ax - av) * (ax + av))
    with np.errstate(divide="ignore"):
        transition = (av >= 1e4) & ((av / w) ** 3 / av > 3e-3)
    assert transition.sum() >= 3 and np.isfinite(got[transition]).all()
    keep = ~transition
    assert keep.sum() > 50
    want = exact(case.mpmath, v[keep], x[keep])
    errors = ulp_errors(got[keep], want, dtype, case.floor(v64[keep], x64[keep]))
    i = int(np.argmax(errors))
    assert errors.max() <= MAX_ULP, f"{errors[i]:.3g} ULP at ({v[keep][i]!r}, {x[keep][i]!r}): {got[keep][i]!r}, want {float(want[i])!r}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jv_negative_orders_past_the_cap(dtype):
    """J_-v = cos(v pi) J_v - sin(v pi) Y_v where the loops pass their cap (order past 1e5,
    or x - v past 9e4), with Debye's Y (bessel_debye.rs; nan there before): within 8 ULP of
    mpmath's Debye J and Y (accuracy_cases._jv), above the turning point, below it (where
    J_-v grows past the largest float: +-inf, the sign of -sin(v pi) Y_v) and for x far past
    small orders; in the transition region (|x - v| < ~24 v^(1/3)) the Wronskian-type
    identity DLMF 10.5.2."""
    case = BY_NAME["jv"]
    rng = np.random.default_rng(11)
    n = 12
    big = np.floor(10.0 ** rng.uniform(5.05, 6.3, 3 * n)) + 0.125  # (k + 1/8 exact in float32 too)
    small = np.floor(10.0 ** rng.uniform(3, 4.7, n)) + 0.375
    # Below the turning point, x = v sqrt(1 - t^2): J_-v ~ e^(v t^3 / 3) is finite in float64
    # for the first half (v t^3 from 400 to 1800), past the largest float for the rest.
    t = np.concatenate([(rng.uniform(400, 1800, n // 2) / big[n : n + n // 2]) ** (1 / 3), rng.uniform(0.3, 0.45, n - n // 2)])
    x = np.concatenate([big[:n] * 10.0 ** rng.uniform(0.02, 1, n), big[n : 2 * n] * np.sqrt(1 - t**2),
                        big[2 * n :] * rng.uniform(0.9995, 0.9999, n), small + rng.uniform(9.5e4, 1e6, n)])  # fmt: skip
    v = -np.concatenate([big, small])
    v, x = v.astype(dtype), x.astype(dtype)
    a, b = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    f = pytensor.function([a, b], pt.jv(a, b), mode="MLIR")
    with np.errstate(all="ignore"):
        got = f(v, x)
    v64, x64 = v.astype(np.float64), x.astype(np.float64)
    w = np.sqrt(np.abs(x64 + v64) * (x64 - v64))
    transition = (-v64 / w) ** 3 / -v64 > 3e-3
    assert transition[2 * n : 3 * n].all() and not transition[: 2 * n].any() and not transition[3 * n :].any()
    # In the transition region (Y from Debye's before it and the upward recurrence; values
    # against Miller's J in test_jv_transition_region): DLMF 10.5.2's J_v+1 J_-v + J_v J_-v-1
    # = -2 sin(v pi) / (pi x), with J_v+-1 of the same code.
    vt, xt = -v[transition], x[transition]
    with np.errstate(all="ignore"):
        terms = [f(vt + 1, xt) * got[transition], f(vt, xt) * f(-(vt + 1), xt)]
    sides = np.abs(terms[0].astype(float)) + np.abs(terms[1].astype(float))
    identity = terms[0].astype(float) + terms[1].astype(float) + 2 * np.sin(np.pi * (vt.astype(float) % 2)) / (np.pi * xt.astype(float))
    assert np.isfinite(got[transition]).all()
    assert np.abs(identity).max() <= 16 * np.finfo(dtype).eps * sides.max(), np.abs(identity / sides).max()
    keep = ~transition
    assert (v64 != np.floor(v64)).all()
    want = exact(case.mpmath, v[keep], x[keep])
    errors = ulp_errors(got[keep], want, dtype, case.floor(v64[keep], x64[keep]))
    i = int(np.argmax(errors))
    assert errors.max() <= MAX_ULP, f"{errors[i]:.3g} ULP at ({v[keep][i]!r}, {x[keep][i]!r}): {got[keep][i]!r}, want {float(want[i])!r}"
    if dtype == "float64":
        assert np.isfinite(got[n : n + n // 2]).all() and np.isinf(got[n + n // 2 : 2 * n]).all()


def miller_reference(v, x):
    """J_v(x) for v >= 1 by Miller's algorithm in mpmath (accuracy_cases._besselj_miller),
    one recurrence per (x, fractional part of v) shared by its orders."""
    from accuracy_cases import _besselj_miller

    points = []
    for a, b in zip(np.asarray(v, np.float64), np.asarray(x, np.float64)):
        k = int(np.ceil(a)) - 1
        points.append((float(b), mpmath.mpf(float(a)) - k, k))  # (the fraction exact: (0, 1])
    top = {}
    for b, frac, k in points:
        top[b, frac] = max(k, top.get((b, frac), 0))
    return np.array([_besselj_miller(b, frac, top[b, frac])[k] for b, frac, k in points], dtype=object)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jv_transition_region(dtype):
    """Orders past the loops' cap (1e5) with |x - v| < ~24 v^(1/3), where Debye's expansions
    do not converge (nan before): Debye's at an order just past the region and the downward
    recurrence back (`debye_or_shifted`), against Miller's algorithm in mpmath, within 8 ULP
    (where J oscillates, v < x, ULPs of sqrt(2 / (pi x)) as Case.floor); orders v + N that
    round past a power of two (131071.1 at x near 2^17, float64: the rounding put back); the
    integer orders' sign for v < 0 and x < 0 ((-1)^v J_|v|(|x|)); negative non-integer orders
    (J_-v needs Y_v: Debye's before the region and the upward recurrence). scipy (the C backend's
    jv) is 1e4 to 1e5 ULP off on these points (jvref.py in the issue notes)."""
    case = BY_NAME["jv"]
    x0 = 120000.0
    t = np.arange(-30.0, 31.0, 5.0) * x0 ** (1 / 3)
    orders = [np.floor(x0 + t), np.floor(x0 + t) + 0.375]
    if dtype == "float64":
        orders.append(131071.1 - np.arange(0.0, 4.0))
    v = np.concatenate(orders).astype(dtype)
    x = np.concatenate([np.full(len(o), 131060.0 if o[0] > 131000 else x0) for o in orders]).astype(dtype)
    a, b = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    f = pytensor.function([a, b], pt.jv(a, b), mode="MLIR")
    got = f(v, x)
    want = miller_reference(v, x)
    v64, x64 = v.astype(np.float64), x.astype(np.float64)
    errors = ulp_errors(got, want, dtype, case.floor(v64, x64))
    i = int(np.argmax(errors))
    assert errors.max() <= MAX_ULP, f"{errors[i]:.3g} ULP at ({v[i]!r}, {x[i]!r}): {got[i]!r}, want {float(want[i])!r}"
    # Integer orders of either sign: (-1)^v J_|v|(|x|).
    ints = v == np.floor(v)
    sign = np.where(np.floor(v[ints]) % 2 == 0, 1.0, -1.0).astype(dtype)
    np.testing.assert_array_equal(f(-v[ints], x[ints]), sign * got[ints])
    np.testing.assert_array_equal(f(v[ints], -x[ints]), sign * got[ints])
    np.testing.assert_array_equal(f(-v[ints], -x[ints]), got[ints])
    # Negative non-integer orders: J_-v = cos(v pi) J_v - sin(v pi) Y_v, Y_v against Debye's
    # before the region and the upward recurrence in mpmath (accuracy_cases._bessely_upward).
    from accuracy_cases import _bessely_upward

    neg = f(-v[~ints], x[~ints])
    v_n, x_n = v64[~ints], x64[~ints]
    inside = (v_n / np.sqrt(np.abs(x_n - v_n) * (x_n + v_n))) ** 3 / v_n > 3e-3
    assert inside.sum() >= 7
    with mpmath.workdps(60):
        want_neg = [mpmath.cospi(a) * j - mpmath.sinpi(a) * _bessely_upward(a, b) for a, b, j in zip(v_n[inside], x_n[inside], want[~ints][inside])]
    errors = ulp_errors(neg[inside], want_neg, dtype, case.floor(-v_n[inside], x_n[inside]))
    i = int(np.argmax(errors))
    assert errors.max() <= MAX_ULP, f"{errors[i]:.3g} ULP at ({-v_n[inside][i]!r}, {x_n[inside][i]!r}): {neg[inside][i]!r}, want {float(want_neg[i])!r}"


def test_ive_kve_debye_reference_matches_mpmath():
    """accuracy_cases.py's reference for ive and kve of large orders (Debye's expansions in
    mpmath): I against mpmath's besseli where that converges, K through the Wronskian
    ive_v kve_v+1 + ive_v+1 kve_v = 1/x (mpmath's besselk does not converge there)."""
    from accuracy_cases import _bessel_ik_debye

    for v, x in [(500.3, 2000.0), (400.7, 900.0), (1000.3, 5e4), (350.5, 3000.0)]:
        i = _bessel_ik_debye(v, x, 1)
        with mpmath.workdps(40):
            want = mpmath.besseli(v, x) * mpmath.exp(-x)
        assert i is not None and abs(i - want) <= 1e-30 * abs(want), (v, x, i, want)
        i1, k, k1 = _bessel_ik_debye(v + 1, x, 1), _bessel_ik_debye(v, x, -1), _bessel_ik_debye(v + 1, x, -1)
        with mpmath.workdps(60):
            assert abs((i * k1 + i1 * k) * x - 1) <= 1e-30, (v, x)


def ik_large_order_points(rng, n):
    """(v, x): orders past the loops' cap (1e5 to 1e7) with x up to v^2 (Hankel's region
    from there), orders 1.5e4 to 1e5 with x from 2e8 to v^2 (CF1's depth past the cap), and
    negative orders (I's reflection through K)."""
    v1 = 10.0 ** rng.uniform(5, 7, n)
    x1 = v1**2 * 10.0 ** rng.uniform(-4, -0.01, n) / 10.0 ** rng.uniform(0, 1, n)
    v2 = 10.0 ** rng.uniform(np.log10(1.5e4), 5, n)
    x2 = 10.0 ** rng.uniform(np.log10(2.1e8), np.log10(v2**2 * 0.99), n)
    v3 = -(10.0 ** rng.uniform(5, 6, n))
    x3 = v3**2 * 10.0 ** rng.uniform(-3, -0.01, n)
    return np.concatenate([v1, v2, v3]), np.concatenate([x1, x2, x3])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ive_kve_large_orders(dtype):
    """Debye's expansions (bessel_debye.rs `debye_ik`) where the loops would pass their cap
    (nan before): within MAX_ULP of mpmath (accuracy_cases' Debye reference) on random points
    (measured: float64 2 ULP, float32 0.5), where scipy, the C backend, is nan at about half
    of them and up to 7e5 ULP off at the rest."""
    v, x = ik_large_order_points(np.random.default_rng(7), 15)
    v, x = v.astype(dtype), x.astype(dtype)
    a, b = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    f, ref = compile_both([a, b], [pt.ive(a, b), pt.kve(a, b)])
    with np.errstate(all="ignore"):
        got, c_got = f(v, x), ref(v, x)
    for name, g, c in zip(("ive", "kve"), got, c_got):
        want = exact(BY_NAME[name].mpmath, v, x)
        errors, c_errors = ulp_errors(g, want, dtype), ulp_errors(c, want, dtype)
        i = int(np.argmax(errors))
        assert errors.max() <= MAX_ULP, f"{name} {errors[i]:.3g} ULP at ({v[i]!r}, {x[i]!r}): {g[i]!r}, want {float(want[i])!r}"
        if dtype == "float64":
            assert c_errors.max() > errors.max(), (name, c_errors.max())


def test_jv_gradient_like_the_c_backend():
    """d/dx jv: PyTensor's pullback (jv(v - 1, x) - jv(v + 1, x)) / 2, compiled in MLIR
    mode, against the C backend, at positive x and at negative x for integer orders."""
    v, x = pt.dvector("v"), pt.dvector("x")
    (g,) = pytensor.grad((pt.jv(v, x) * 3.0).sum(), [x])
    f, ref = compile_both([v, x], [g])
    assert "Jv" in scalar_ops(f)
    vv = np.array([0.0, 1.0, 0.5, 2.3, -1.5, 10.0, 0.25, 40.0, 3.0, 0.0, 1.0, 2.0, 5.0, -3.0])
    xv = np.array([1.0, 0.1, 3.0, 25.0, 0.7, 50.0, 1e-3, 2000.0, 7.5, -1.0, -0.3, -4.0, -12.0, -2.0])
    with np.errstate(invalid="ignore"):
        (got,), (want,) = f(vv, xv), ref(vv, xv)
    assert np.isfinite(want).all()
    assert_same(got, want, rtol=1e-11, err_msg="d/dx 3 jv")


@pytest.mark.skipif(not VULKAN_DEVICES, reason=f"no Vulkan device ({WHY_NO_VULKAN or 'none listed'})")
def test_jv_float32_formulation_on_vulkan():
    """On Vulkan jv runs in float32 (thresholds, caps and scales per type): within 1e-5 of
    the CPU mode's (float64-computed) results, relative or, where J oscillates, of
    sqrt(2 / (pi |x|)), on normal results (lavapipe flushes subnormals); special values
    the same."""
    rng = np.random.default_rng(53)
    specials_v = np.array([0.0, 1.0, -1.0, 0.5, -0.5, -1.5, 2.0, 3.0, INF, -INF, NAN, 0.0, 1.0, 2.5])
    specials_x = np.array([0.0, 0.0, -2.0, 0.0, 1.0, 0.0, INF, -INF, 1.0, 1.0, 1.0, NAN, 1e30, -1.0])
    v = np.concatenate([specials_v, rng.uniform(-5, 5, 40), rng.integers(-20, 20, 20), rng.uniform(0, 60, 20)])
    x = np.concatenate([specials_x, 10 ** rng.uniform(-3, 2, 40), rng.uniform(-20, 20, 20), 10 ** rng.uniform(-6, 3, 20)])
    v, x = v.astype("float32"), x.astype("float32")
    a, b = pt.fvector("v"), pt.fvector("x")
    cpu = pytensor.function([a, b], pt.jv(a, b), mode="MLIR")
    gpu = pytensor.function([a, b], pt.jv(a, b), mode="MLIR_VULKAN")
    with np.errstate(all="ignore"):
        want, got = cpu(v, x), gpu(v, x)
        amplitude = np.where(np.abs(x) > np.abs(v), np.sqrt(2 / (np.pi * np.abs(x))), 0.0).astype("float32")
        close = np.isfinite(want) & (np.abs(got - want) <= 1e-5 * amplitude)
    normal = ~np.isfinite(want) | (want == 0) | (np.abs(want) >= np.finfo("float32").tiny)
    assert_same(np.where(close, want, got)[normal] + 0, want[normal] + 0, rtol=1e-5, err_msg="jv")
