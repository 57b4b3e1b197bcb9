"""Rounding, tests, the exp/log family and the trigonometric family of scalar ops (issue 3).

Two kinds of tests:

- semantics: every op against PyTensor's C backend, per input dtype, on the dtype's edge
  values (+-0, +-inf, nan, the smallest subnormal, the largest finite, integer extremes)
  and moderate random values; one compiled function per dtype holds every op.
- accuracy: each exp/log function against mpmath (tests/ulp.py) on random points over its
  whole domain plus edge cases (the table in benchmarks/accuracy_cases.py), max error at
  most 4 ULP in float32 and float64 (trigonometric arguments up to 1e15 in float64 and
  1e5 in float32; past that only finite and in range).
"""

import os
import sys

import numpy as np
import pytensor.tensor as pt
import pytensor.tensor.math as ptm
import pytest

from conftest import C, MLIR, assert_all_same, assert_same, compile_both, vulkan_devices
from test_elemwise import edges, scalar_ops
from ulp import exact, ulp_errors

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from accuracy_cases import BY_NAME, points, within_bound  # noqa: E402

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
DTYPES = ["bool", *INTS, *FLOATS]

# Float functions (`upgrade_to_float`: integers and bools give float32 or float64).
FLOAT_FUNCTIONS = {
    "ceil": pt.ceil,
    "floor": pt.floor,
    "trunc": pt.trunc,
    "reciprocal": pt.reciprocal,
    "deg2rad": pt.deg2rad,
    "rad2deg": pt.rad2deg,
    "log1p": pt.log1p,
    "expm1": pt.expm1,
    "log2": pt.log2,
    "log10": pt.log10,
    "exp2": pt.exp2,
    "sinh": pt.sinh,
    "cosh": pt.cosh,
    "tanh": pt.tanh,
    "arcsinh": pt.arcsinh,
    "arccosh": pt.arccosh,
    "arctanh": pt.arctanh,
    "sigmoid": pt.sigmoid,
    "softplus": pt.softplus,
    "log1mexp": pt.log1mexp,
}
# PyTensor's C code for these takes float inputs only: on integers the C backend runs the
# Python implementation, which computes int8 in float16. The reference there is the C
# code on the input cast to the output dtype (what PyTensor's types say the op means).
C_FLOAT_ONLY = {"sigmoid", "softplus", "log1mexp"}

EXPECTED_OPS = {
    "IsNan", "IsInf", "Clip", "Sign", "Ceil", "Floor", "Trunc", "RoundHalfToEven", "RoundHalfAwayFromZero",
    "Reciprocal", "Deg2Rad", "Rad2Deg", "Log1p", "Expm1", "Log2", "Log10", "Exp2", "Sinh", "Cosh", "Tanh",
    "ArcSinh", "ArcCosh", "ArcTanh", "Sigmoid", "Softplus", "Log1mexp", "Maximum", "Minimum",
}  # fmt: skip


def values(dtype, rng, n_random=48):
    """Edge values of `dtype`, halves (rounding ties) and moderate random values (within
    +-30, where the C backend's own formulas are accurate: its float32 sigmoid is 0 below
    about -88, where the true value is subnormal; that range is in the accuracy tests)."""
    e = edges(dtype)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        ties = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 4503599627370497.0, 8388609.0, 0.3, -0.3])
        rand = rng.standard_normal(n_random) * 10.0 ** rng.uniform(-6, 1.4, n_random)
        return np.concatenate([e, ties, rand, [0.999, -0.999, 1.001, 30.0, -30.0]]).astype(dt)
    return e


def semantics_graph(dtype, rng):
    """Inputs, named outputs, values and reference outputs: every op of this file on `dtype`."""
    xv = values(dtype, rng)
    n = len(xv)
    x = pt.vector("x", dtype=dtype)
    lo, hi = pt.vector("lo", dtype=dtype), pt.vector("hi", dtype=dtype)
    ev = edges(dtype)
    lov, hiv = rng.choice(ev, n), rng.choice(ev, n)
    inputs, vals = [x, lo, hi], [xv, lov, hiv]
    out = {
        # The Elemwise ops themselves: pt.isnan of an integer is an Alloc of False.
        "isnan": ptm.isnan_(x),
        "isinf": ptm.isinf_(x),
        "clip": pt.clip(x, lo, hi),
        "maximum": pt.maximum(x, lo),
        "minimum": pt.minimum(x, lo),
    }
    if dtype in ("int64", "uint64"):
        # C's maximum/minimum pass 64-bit integers through double (see test_elemwise):
        # values up to 2**53 there.
        lim = np.array(2**53, dtype=dtype)
        mv = np.clip(xv, -lim if dtype == "int64" else 0, lim).astype(dtype)
        m = pt.vector("m", dtype=dtype)
        inputs.append(m)
        vals.append(mv)
        out["maximum"] = pt.maximum(m, lo)
        out["minimum"] = pt.minimum(m, lo)
        # ... and the bounds too.
        lov[:] = np.clip(lov, -lim if dtype == "int64" else 0, lim)
    if dtype != "bool":
        out["sign"] = pt.sign(x)
    if dtype in FLOATS:
        out["round_half_to_even"] = pt.round(x, mode="half_to_even")
        out["round_half_away_from_zero"] = pt.round(x, mode="half_away_from_zero")
    reference = dict(out)
    for name, fn in FLOAT_FUNCTIONS.items():
        src = x
        if name == "trunc" and dtype in ("int32", "int64"):
            # C's trunc is `x >= 0 ? floor(x) : -floor(-x)`: -MIN overflows (undefined).
            src = pt.vector("t", dtype=dtype)
            inputs.append(src)
            vals.append(np.where(xv == np.iinfo(dtype).min, xv + 1, xv))
        if name == "sigmoid":
            # C's float32 sigmoid, 1 / (1 + expf(-x)), is 0 from x = -88 on (expf overflows)
            # where the true value is a subnormal, down to -103: left to the accuracy tests.
            src = pt.vector("s", dtype=dtype)
            inputs.append(src)
            vals.append(np.where((xv < -80) & (xv > -1000), -80, xv).astype(dtype))
        out[name] = fn(src)
        reference[name] = out[name]
        if name in C_FLOAT_ONLY and dtype not in FLOATS:
            reference[name] = fn(pt.cast(src, out[name].dtype))
    return inputs, out, reference, vals


@pytest.mark.parametrize("dtype", DTYPES)
def test_semantics_like_the_c_backend(dtype):
    import pytensor

    rng = np.random.default_rng(DTYPES.index(dtype))
    inputs, out, reference, vals = semantics_graph(dtype, rng)
    names = list(out)
    f = pytensor.function(inputs, [out[k] for k in names], mode=MLIR, on_unused_input="ignore")
    ref = pytensor.function(inputs, [reference[k] for k in names], mode=C, on_unused_input="ignore")
    with np.errstate(all="ignore"):
        assert_all_same(names, f(*vals), ref(*vals))
    ops = scalar_ops(f)
    want_ops = EXPECTED_OPS - ({"Sign"} if dtype == "bool" else set())
    want_ops -= set() if dtype in FLOATS else {"RoundHalfToEven", "RoundHalfAwayFromZero"}
    assert want_ops <= ops, want_ops - ops


def test_unfused_float64_like_the_c_backend():
    """The same ops as single Elemwise nodes (no Composite) on float64."""
    import pytensor

    rng = np.random.default_rng(99)
    inputs, out, reference, vals = semantics_graph("float64", rng)
    names = list(out)
    f = pytensor.function(inputs, [out[k] for k in names], mode=MLIR.excluding("fusion"), on_unused_input="ignore")
    ref = pytensor.function(inputs, [reference[k] for k in names], mode=C, on_unused_input="ignore")
    with np.errstate(all="ignore"):
        assert_all_same(names, f(*vals), ref(*vals))
    assert "Composite" not in scalar_ops(f)


def test_special_values_exactly():
    """Signed zeros, infinities and nan of each function, bit for bit against the C
    backend (assert_same compares signs of zeros and infinities)."""
    x = pt.vector("x", dtype="float64")
    names = list(FLOAT_FUNCTIONS)
    f, ref = compile_both([x], [FLOAT_FUNCTIONS[k](x) for k in names])
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324])
    with np.errstate(all="ignore"):
        for name, g, w in zip(names, f(v), ref(v)):
            np.testing.assert_array_equal(np.signbit(g[~np.isnan(w)]), np.signbit(w[~np.isnan(w)]), err_msg=name)
            np.testing.assert_array_equal(g, w, err_msg=name)


def test_sign_and_rounding_of_bool_are_refused_like_pytensor():
    b = pt.vector("b", dtype="bool")
    with pytest.raises(TypeError):
        pt.sign(b)
    i = pt.vector("i", dtype="int32")
    with pytest.raises(TypeError):
        pt.round(i, mode="half_to_even")


# ---------------------------------------------------------------------------------------
# Accuracy against mpmath

EXP_LOG = ["exp", "log", "sqrt", "pow", "log1p", "expm1", "log2", "log10", "exp2", "sinh", "cosh", "tanh", "arcsinh",
           "arccosh", "arctanh", "sigmoid", "softplus", "log1mexp"]  # fmt: skip
MAX_ULP = 4.0


def run_cases(names, dtype, rng, n=1500):
    """The accuracy cases `names` on n of their domain points each, in one MLIR function:
    (cases, points per case, results per case)."""
    import pytensor

    cases = [BY_NAME[k] for k in names]
    args = [[pt.vector(f"{c.name}{j}", dtype=dtype) for j in range(c.arity)] for c in cases]
    f = pytensor.function([x for a in args for x in a], [c.pytensor(*a) for c, a in zip(cases, args)], mode=MLIR)
    vals = [points(c, dtype, n, rng) for c in cases]
    with np.errstate(all="ignore"):
        got = f(*[row for c, v in zip(cases, vals) for row in (v if c.arity > 1 else [v])])
    return cases, vals, got


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_log_accuracy(dtype):
    """Every exp/log function (pow too: x ** y with y log x over the whole range of
    results, x near 1 with |y| to 1e5, negative bases) within 4 ULP of mpmath over its
    whole domain."""
    cases, vals, got = run_cases(EXP_LOG, dtype, np.random.default_rng(7))
    report = []
    for c, v, g in zip(cases, vals, got):
        v = v if c.arity > 1 else [v]
        errors = ulp_errors(g, exact(c.mpmath, *v), dtype)
        i = int(np.argmax(errors))
        if errors[i] > MAX_ULP:
            report.append(f"{c.name}: {errors[i]:.3g} ULP at {tuple(a[i] for a in v)!r} (got {g[i]!r})")
    assert not report, "\n".join(report)


def float32_ulp_distance(a, b):
    """|a - b| in float32 steps (bit patterns on one line through zero; +-0 are 0 apart)."""
    def line(v):
        i = np.asarray(v, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return np.abs(line(a) - line(b))


def test_float32_exp_and_log_special_values():
    """Our float32 exp and log (exp_log_f32.rs, computed in f32 on the CPU): subnormal
    results and arguments kept as expf/logf keep them, the overflow and underflow
    thresholds, +-0, +-inf and nan; within 1 ULP of mpmath and within one float32 step of
    the C backend's, with the same special values."""
    import mpmath
    import pytensor

    def log_or_special(t):
        if t > 0:
            return mpmath.log(t)
        return mpmath.mpf("-inf") if t == 0 else mpmath.mpf("nan")

    rng = np.random.default_rng(11)
    tiny = np.float32(2.0**-149)
    exp_x = np.concatenate([
        [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, 1e-30, -1e-30,
         -100.0, -87.33654, -87.33655, -88.0, -95.0, -103.27893, -103.2789, -103.97, -103.972, -104.0, -150.0,
         88.72283, 88.72284, 88.7229, 89.0, 100.0, 1.0, -1.0, 0.3465736, -0.3465736],
        rng.uniform(-104, 89, 300), rng.uniform(-1, 1, 100)]).astype(np.float32)  # fmt: skip
    subnormals = np.float32(2.0**-126) * rng.uniform(0, 1, 100).astype(np.float32)
    log_x = np.concatenate([
        [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -tiny, tiny, 1e-42, 1e-40, 1.1754942e-38, 1.1754944e-38,
         1.0, 0.99999994, 1.0000001, 0.70710677, 0.7071068, 1.4142135, 1.4142137, 2.0, 0.5, 3.4028235e38],
        subnormals, 10.0 ** rng.uniform(-38, 38, 300)]).astype(np.float32)  # fmt: skip
    x = pt.vector("x", dtype="float32")
    y = pt.vector("y", dtype="float32")
    mlir, c = compile_both([x, y], [pt.exp(x), pt.log(y)], mode=MLIR)
    with np.errstate(all="ignore"):
        got, want = mlir(exp_x, log_x), c(exp_x, log_x)
    report = []
    for name, v, g, w, fn in zip(["exp", "log"], [exp_x, log_x], got, want, [mpmath.exp, log_or_special]):
        assert g.dtype == np.float32
        errors = ulp_errors(g, exact(fn, v), "float32")
        i = int(np.argmax(errors))
        if errors[i] > 1:
            report.append(f"{name}: {errors[i]:.3g} ULP at {v[i]!r} (got {g[i]!r})")
        same_special = (np.isnan(g) == np.isnan(w)) & (np.signbit(g) == np.signbit(w)) | np.isnan(w)
        steps = np.where(np.isnan(w), 0, float32_ulp_distance(g, w))
        bad = ~same_special | (steps > 1)
        if bad.any():
            i = np.flatnonzero(bad)[:5]
            report.append(f"{name} vs C at {v[i]!r}: {g[i]!r} vs {w[i]!r}")
    # The subnormal results really are subnormal (not flushed): exp(-100) = 3.72e-44.
    assert got[0][9] == np.float32(float(mpmath.exp(-100))) and 0 < got[0][9] < np.float32(2.0**-126)
    assert got[1][7] < -103.2  # log(2^-149) = -103.28, not log(2^-126)
    assert not report, "\n".join(report)


TRIG = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_trig_accuracy(dtype):
    """Every trigonometric function within 4 ULP of mpmath over its whole domain (arctan2:
    random pairs in every quadrant, every pair of signed zeros, infinities, nan, tiny and
    huge values); sin, cos, tan up to the bound (1e15, 1e5 in float32), and past it, up
    to the largest float, finite and (sin, cos) within [-1, 1]."""
    cases, vals, got = run_cases(TRIG, dtype, np.random.default_rng(11))
    report = []
    for c, v, g in zip(cases, vals, got):
        keep = within_bound(c, dtype, v)
        if not keep.all():
            past = g[~keep]
            ok = np.isfinite(past) & ((np.abs(past) <= 1) if c.name in ("sin", "cos") else True)
            if not ok.all():
                report.append(f"{c.name}: {past[~ok][:3]!r} past the bound at {v[~keep][~ok][:3]!r}")
        v, g = v[..., keep], g[keep]
        rows = v if c.arity > 1 else [v]
        errors = ulp_errors(g, exact(c.mpmath, *rows), dtype)
        i = int(np.argmax(errors))
        if errors[i] > MAX_ULP:
            at = tuple(r[i] for r in rows)
            report.append(f"{c.name}: {errors[i]:.3g} ULP at {at!r} (got {g[i]!r})")
    assert not report, "\n".join(report)


TRIG_FUNCTIONS = {"sin": pt.sin, "cos": pt.cos, "tan": pt.tan, "arcsin": pt.arcsin, "arccos": pt.arccos, "arctan": pt.arctan}


@pytest.mark.parametrize("dtype", DTYPES)
def test_trig_like_the_c_backend(dtype):
    """The trigonometric functions against the C backend per input dtype (integers and
    bools give float32 or float64, as PyTensor says), arctan2 on pairs of the dtype's edge
    values and on mixed dtypes; arguments of sin, cos, tan within the accuracy bound."""
    import pytensor

    rng = np.random.default_rng(3 + DTYPES.index(dtype))
    xv = values(dtype, rng)
    if dtype in ("int64", "uint64"):
        xv = xv[np.abs(xv.astype(np.float64)) <= 1e15]
    if dtype in FLOATS:
        xv = xv[~(np.isfinite(xv) & (np.abs(xv) > 1e15))]
        xv = np.concatenate([xv, np.array([1e5, -1e5, 1e15, 12345.678, 1 - 1e-7, -(1 - 1e-7)], dtype=dtype)])
    x = pt.vector("x", dtype=dtype)
    y = pt.vector("y", dtype=dtype)
    z = pt.vector("z", dtype="float32")
    yv = rng.permutation(xv)
    zv = rng.standard_normal(len(xv)).astype("float32")
    names = [*TRIG_FUNCTIONS, "arctan2", "arctan2_mixed"]
    outs = [fn(x) for fn in TRIG_FUNCTIONS.values()] + [pt.arctan2(y, x), pt.arctan2(x, z)]
    f, ref = compile_both([x, y, z], outs)
    with np.errstate(all="ignore"):
        got, want = f(xv, yv, zv), ref(xv, yv, zv)
    failures = []
    for name, g, w in zip(names, got, want):
        try:
            # Both within an ULP or two of the exact value (C's libm, ours): 2 ULP apart.
            assert_same(g, w, rtol=3e-7 if g.dtype == np.float32 else 5e-16, atol=1e-300, err_msg=name)
        except AssertionError as e:
            failures.append(str(e).strip())
    assert not failures, "\n\n".join(failures)
    assert {"Sin", "Cos", "Tan", "ArcSin", "ArcCos", "ArcTan", "ArcTan2"} <= scalar_ops(f)


def test_trig_special_values_exactly():
    """Signed zeros, infinities, nan and subnormals (and for arcsin, arccos, arctan the
    ends of their domains and just past them), bit for bit against the C backend; arctan2
    on every pair of signed zeros, infinities, nan and finite values of both signs (every
    quadrant and axis)."""
    x = pt.vector("x", dtype="float64")
    names = list(TRIG_FUNCTIONS)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324]
    ends = [1.0, -1.0, 1.0000000000000002, -1.0000000000000002, 2.0, -1e300]
    f, ref = compile_both([x], [TRIG_FUNCTIONS[k](x) for k in names])
    for v in (np.array(special), np.array(special + ends)):
        with np.errstate(all="ignore"):
            got, want = f(v), ref(v)
        for name, g, w in zip(names, got, want):
            if len(v) > len(special) and name in ("sin", "cos", "tan"):
                continue  # sin(1) and the like: rounded, not special (the accuracy tests)
            np.testing.assert_array_equal(np.signbit(g[~np.isnan(w)]), np.signbit(w[~np.isnan(w)]), err_msg=name)
            np.testing.assert_array_equal(g, w, err_msg=f"{name} at {v}")
    pairs = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.0, -1.0, 1e308, -1e308]
    yv, xv = (np.array(a) for a in zip(*[(a, b) for a in pairs for b in pairs]))
    y = pt.vector("y", dtype="float64")
    f, ref = compile_both([y, x], pt.arctan2(y, x))
    with np.errstate(all="ignore"):
        g, w = f(yv, xv), ref(yv, xv)
    bad = ~((g == w) | (np.isnan(g) & np.isnan(w))) | (np.signbit(g) != np.signbit(w)) & ~np.isnan(w)
    assert not bad.any(), f"arctan2 at y={yv[bad]}, x={xv[bad]}: {g[bad]} != {w[bad]}"


def test_trig_compiles_for_metal_and_cuda():
    """The f32 formulation (Metal) and the widened one (CUDA) compile; no device here to
    run them on."""
    import pytensor_mlir

    x = pt.vector("x", dtype="float32")
    y = pt.vector("y", dtype="float32")
    outs = [fn(x) for fn in TRIG_FUNCTIONS.values()] + [pt.arctan2(y, x)]
    assert b"kernel void" in pytensor_mlir.compile_only([x, y], outs, "metal").vmfb
    assert b".target sm_80" in pytensor_mlir.compile_only([x, y], outs, "cuda:sm_80").vmfb


# ---------------------------------------------------------------------------------------
# The float32 formulation (no f64 math): Vulkan


VULKAN_DEVICES, WHY_NO_VULKAN = vulkan_devices()
needs_vulkan = pytest.mark.skipif(
    not VULKAN_DEVICES,
    reason=f"no Vulkan device ({WHY_NO_VULKAN or 'none listed'}); install mesa-vulkan-drivers and libvulkan1",
)


@needs_vulkan
def test_float32_formulation_on_vulkan():
    """On Vulkan f32 math stays f32 (the f32 versions of exp_log.rs, on the device's exp
    and log, and of trig.rs, on the device's fma, division and sqrt): results within 1e-4 relative of the CPU mode's on values whose results are
    normal numbers (lavapipe's exp is documented within 68 ULP, and it flushes subnormal
    results). Four ops per function: lavapipe takes 128 bytes of push constants a dispatch."""
    import pytensor

    fs = dict(FLOAT_FUNCTIONS)
    fs.update(
        round_half_to_even=lambda x: pt.round(x, mode="half_to_even"),
        round_half_away_from_zero=lambda x: pt.round(x, mode="half_away_from_zero"),
        sign=pt.sign,
        isnan=ptm.isnan_,
        isinf=ptm.isinf_,
        **TRIG_FUNCTIONS,
        arctan2=lambda x: pt.arctan2(x, 0.75 - x),
    )
    rng = np.random.default_rng(5)
    v = np.concatenate(
        [[0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30,
          3.1415927, 1.5707964, -4.712389, 1e4, 98765.43, -54321.5, 0.99999994, -0.7],
         rng.standard_normal(40) * 10.0 ** rng.uniform(-5, 1.3, 40)]
    ).astype("float32")  # fmt: skip
    x = pt.vector("x", dtype="float32")
    names = list(fs)
    cpu = pytensor.function([x], [fs[k](x) for k in names], mode=MLIR)
    with np.errstate(all="ignore"):
        want = dict(zip(names, cpu(v)))
    failures = []
    for i in range(0, len(names), 4):
        chunk = names[i : i + 4]
        f = pytensor.function([x], [fs[k](x) for k in chunk], mode="MLIR_VULKAN")
        with np.errstate(all="ignore"):
            for name, g in zip(chunk, f(v)):
                try:
                    assert_same(g, want[name], rtol=1e-4, atol=1e-30, err_msg=name)
                except AssertionError as e:
                    failures.append(str(e).strip())
    assert not failures, "\n\n".join(failures)


# ---------------------------------------------------------------------------------------
# Special functions (erf.rs, gamma.rs)

SPECIAL = {
    "erf": pt.erf,
    "erfc": pt.erfc,
    "erfcx": pt.erfcx,
    "erfinv": pt.erfinv,
    "erfcinv": pt.erfcinv,
    "gamma": pt.gamma,
    "gammaln": pt.gammaln,
    "psi": pt.psi,
    "tri_gamma": pt.tri_gamma,
}
SPECIAL_OPS = {"Erf", "Erfc", "Erfcx", "Erfinv", "Erfcinv", "Gamma", "GammaLn", "Psi", "TriGamma"}
# The reference of each: PyTensor's C code where it has one and it computes the function
# (C's erf, erfc, lgamma, tgamma, the Faddeeva package's erfcx); its Python implementation
# (scipy) where it has none (erfinv, erfcinv), where the C code is an approximation to about
# 1e-9 (psi, whose special values are the C code's: +inf at 0, the negative integers and
# -inf), or where it is not the function (tri_gamma: 0 for every x <= 0). On integers the C
# backend runs the Python implementation in the input's precision (float16 for int8); the
# reference there is the op on the input cast to the output dtype, as for C_FLOAT_ONLY.
SPECIAL_PY_REFERENCE = {"erfinv", "erfcinv", "psi", "tri_gamma"}


def special_graph(dtype, rng):
    """Inputs, named outputs, reference outputs (a graph for mode C and one for the Python
    linker) and values: every special function on `dtype`."""
    from pytensor.scalar.math import psi as scalar_psi  # noqa: F401  (the op the graph holds)

    xv = values(dtype, rng)
    x = pt.vector("x", dtype=dtype)
    inputs, vals = [x], [xv]
    if np.dtype(dtype).kind == "f":
        # The inverses' domains, their ends and beyond.
        u = pt.vector("u", dtype=dtype)
        uv = np.concatenate([rng.uniform(-1, 1, 40), [1.0, -1.0, 0.5, -0.5, 0.0, -0.0, 0.999999, -0.999999, 1e-30, 2.0, np.nan]])
        inputs.append(u)
        vals.append(uv.astype(dtype))
    else:
        u = x
    out, c_ref, py_ref = {}, {}, {}
    for name, fn in SPECIAL.items():
        src = u if name == "erfinv" else (u + 1 if name == "erfcinv" and u is not x else x)
        out[name] = fn(src)
        cast = pt.cast(src, out[name].dtype)
        if name in SPECIAL_PY_REFERENCE:
            r = fn(cast)
            if name == "psi":
                pole = pt.le(cast, 0) & pt.eq(pt.floor(cast), cast)
                r = pt.switch(pole, np.array(np.inf, dtype=out[name].dtype), r)
            py_ref[name] = r
        else:
            c_ref[name] = fn(cast)
    return inputs, out, c_ref, py_ref, vals


@pytest.mark.parametrize("dtype", DTYPES)
def test_special_functions_like_the_reference(dtype):
    """Every special function against its reference (see SPECIAL_PY_REFERENCE), per input
    dtype, on the dtype's edge values and moderate random values: output dtypes
    (`upgrade_to_float`), special values (signed zeros, infinities, nan, poles) and values
    (rtol 1e-13 in float64, 1e-6 in float32)."""
    import pytensor
    from pytensor.compile.mode import Mode

    rng = np.random.default_rng(11 + DTYPES.index(dtype))
    inputs, out, c_ref, py_ref, vals = special_graph(dtype, rng)
    names = list(out)
    f = pytensor.function(inputs, [out[k] for k in names], mode=MLIR, on_unused_input="ignore")
    ref_c = pytensor.function(inputs, list(c_ref.values()), mode=C, on_unused_input="ignore")
    ref_py = pytensor.function(inputs, list(py_ref.values()), mode=Mode(linker="py", optimizer="fast_run"), on_unused_input="ignore")
    with np.errstate(all="ignore"):
        got = dict(zip(names, f(*vals)))
        want = dict(zip(c_ref, ref_c(*vals)))
        want.update(zip(py_ref, ref_py(*vals)))
    for k in ("erfinv", "erfcinv"):
        # scipy's erfinv(-0.0) is +0.0 and its erfcinv(1.0) -0.0; ours keep the odd
        # symmetry (erfinv(-0.0) = -0.0, as erf(-0.0); erfcinv(1.0) = +0.0): zeros compared
        # without their signs here.
        got[k], want[k] = got[k] + 0, want[k] + 0
    assert_all_same(names, [got[k] for k in names], [want[k] for k in names])
    assert SPECIAL_OPS <= scalar_ops(f), SPECIAL_OPS - scalar_ops(f)


def test_special_functions_unfused_and_special_values():
    """The same ops as single Elemwise nodes on float64, on the special values, bit for bit
    (signs of zeros and infinities) against the reference."""
    import pytensor
    from pytensor.compile.mode import Mode

    x = pt.vector("x", dtype="float64")
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.0, -1.0, 2.0, -2.0, 0.5, 1e-300, -1e-300,
                  171.7, -171.5, -190.5, 26.7, -26.7, 27.5, 1e308, -1e308])  # fmt: skip
    mode = MLIR.excluding("fusion")
    for name, fn in SPECIAL.items():
        f = pytensor.function([x], fn(x), mode=mode)
        assert "Composite" not in scalar_ops(f)
        if name in SPECIAL_PY_REFERENCE:
            r = fn(x)
            if name == "psi":
                r = pt.switch(pt.le(x, 0) & pt.eq(pt.floor(x), x), np.inf, r)
            ref = pytensor.function([x], r, mode=Mode(linker="py", optimizer="fast_run"))
        else:
            ref = pytensor.function([x], fn(x), mode=C)
        with np.errstate(all="ignore"):
            g, w = f(v), ref(v)
        if name == "erfcinv":
            # scipy's erfcinv of a subnormal is inf (it is about 27.2; test_special_accuracy
            # checks ours against mpmath there).
            w = np.where((v > 0) & (v < 1e-307), g, w)
        if name in ("erfinv", "erfcinv"):
            # scipy's erfinv(-0.0) is +0.0 and its erfcinv(1.0) -0.0; ours keep the odd
            # symmetry (erfinv(-0.0) = -0.0, as erf(-0.0)): zeros compared without signs.
            assert_same(g + 0, w + 0, err_msg=name)
        else:
            assert_same(g, w, err_msg=name)
            np.testing.assert_array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]), err_msg=name)



SPECIAL_MAX_ULP = 8.0


def scipy_errors(case, v, want, dtype):
    """The ULP error of scipy's float64 function on `v` (rounded to `dtype`)."""
    import scipy.special as sp

    fn = {"tri_gamma": lambda x: sp.polygamma(1, x)}.get(case.name) or getattr(
        sp, {"gammaln": "gammaln", "psi": "psi"}.get(case.name, case.name)
    )
    with np.errstate(all="ignore"):
        r = np.asarray(fn(v.astype("float64"))).astype(dtype)
    return ulp_errors(r, want, dtype)


def measured(cases, dtype, n, rng, keep=None):
    """Runs `cases` (accuracy_cases.Case) at `n` points each through the MLIR mode and the
    C backend (one function each); yields per case: the points, our results, mpmath's,
    our and the reference's ULP errors, and where we miss SPECIAL_MAX_ULP where scipy
    meets it. `keep(case, dtype, points)` selects points first."""
    inputs = [pt.vector(c.name, dtype=dtype) for c in cases]
    outputs = [c.pytensor(x) for c, x in zip(cases, inputs)]
    f, ref = compile_both(inputs, outputs)
    vals = [points(c, dtype, n, rng) for c in cases]
    if keep is not None:
        vals = [v[keep(c, dtype, v)] for c, v in zip(cases, vals)]
    with np.errstate(all="ignore"):
        got, c_got = f(*vals), ref(*vals)
    for c, v, g, cg in zip(cases, vals, got, c_got):
        want = exact(c.mpmath, v)
        errors = ulp_errors(g, want, dtype)
        scipy_ok = scipy_errors(c, v, want, dtype) <= SPECIAL_MAX_ULP
        yield c, v, g, want, errors, ulp_errors(cg, want, dtype), scipy_ok & (errors > SPECIAL_MAX_ULP)


def misses(c, v, g, errors, c_errors, bad, errors_for_max):
    """What an accuracy test reports for one case: the worst point where we miss
    SPECIAL_MAX_ULP and scipy does not (`bad`), and a max error (`errors_for_max`) above both
    that goal and the reference's max."""
    out = []
    if bad.any():
        i = int(np.argmax(np.where(bad, errors, -1)))
        out.append(f"{c.name}: {errors[i]:.3g} ULP at {v[i]!r} (got {g[i]!r}; scipy within {SPECIAL_MAX_ULP})")
    if errors_for_max.max() > max(SPECIAL_MAX_ULP, c_errors.max()):
        i = int(np.argmax(errors_for_max))
        out.append(f"{c.name}: max {errors[i]:.3g} ULP at {v[i]!r} (got {g[i]!r}), reference's max {c_errors.max():.3g}")
    return out


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_accuracy(dtype):
    """Each special function against mpmath on its whole domain (benchmarks/accuracy_cases.py):
    within 8 ULP wherever scipy is, and never a larger max error than the C backend's on the
    same points (gammaln's negative axis included: test_gammaln_negative_axis)."""
    report = []
    for c, v, g, want, errors, c_errors, bad in measured([BY_NAME[k] for k in SPECIAL], dtype, 1200, np.random.default_rng(17)):
        errors_for_max = errors
        report += misses(c, v, g, errors, c_errors, bad, errors_for_max)
    assert not report, "\n".join(report)


def negative_axis_points():
    """float64 points on lgamma's hard stretch of the negative axis: dense on (-20, -1), the
    six zeros of lgamma in (-5, -2) (mpmath) and points 1e-12 ... 1e-2 either side, and
    -n +- 1e-10, -n + 1e-3 (n = 1 .. 24, where the zeros lie within 1/n! of -n)."""
    import mpmath

    zeros = [float(mpmath.findroot(lambda t: mpmath.log(abs(mpmath.gamma(t))), z0))
             for z0 in (-2.457, -2.747, -3.143, -3.955, -4.039, -4.9959)]  # fmt: skip
    near = [z + s * 10.0**-k for z in zeros for k in range(2, 13, 2) for s in (-1, 1)]
    n = np.arange(1, 25, dtype=np.float64)
    p = np.concatenate([np.linspace(-20, -1, 1901)[1:-1] + 1e-4, zeros, near, -n + 1e-10, -n - 1e-10, -n + 1e-3])
    return p[p != np.floor(p)]


def test_gammaln_negative_axis():
    """gammaln on the negative axis (gamma.rs: the upward recurrence in two doubles on
    (-20, -1)): within 4 ULP of mpmath wherever |lgamma| >= 1e-3, never a larger max error
    there than the C backend's (glibc), and within 1e-18 absolute next to lgamma's zeros
    (where the reflection it replaced was 2e-16 off)."""
    import mpmath
    import pytensor

    mpmath.mp.prec = 120
    v = negative_axis_points()
    x = pt.dvector("x")
    got = pytensor.function([x], pt.gammaln(x), mode=MLIR)(v)
    c_got = pytensor.function([x], pt.gammaln(x), mode=C)(v)
    want = exact(lambda t: mpmath.log(abs(mpmath.gamma(t))), v)
    errors, c_errors = ulp_errors(got, want, "float64"), ulp_errors(c_got, want, "float64")
    absolute = np.array([abs(float(mpmath.mpf(float(g)) - w)) for g, w in zip(got, want)])
    away = np.abs(np.array([float(w) for w in want])) >= 1e-3
    i = int(np.argmax(np.where(away, errors, -1)))
    assert errors[i] <= 4 and errors[i] <= max(c_errors[away].max(), 0.5), (v[i], errors[i], c_errors[away].max())
    j = int(np.argmax(np.where(away, -1, absolute)))
    assert absolute[j] <= 1e-18, (v[j], absolute[j])


def psi_errors(v):
    """psi in float64 on `v` by the MLIR and C modes: (ours, mpmath's at 120 bits, our ULP
    errors, C's)."""
    import mpmath
    import pytensor

    mpmath.mp.prec = 120
    x = pt.dvector("x")
    got = pytensor.function([x], pt.psi(x), mode=MLIR)(v)
    c_got = pytensor.function([x], pt.psi(x), mode=C)(v)
    want = exact(mpmath.digamma, v)
    return got, want, ulp_errors(got, want, "float64"), ulp_errors(c_got, want, "float64")


def test_psi_negative_axis():
    """psi on (-20, -1) (gamma.rs: the upward recurrence, its sum to twice the precision):
    within 16 ULP of mpmath where |psi| >= 1e-2 and within 1e-16 absolute next to psi's
    zeros (psi(x + m)'s own rounding is what is left: measured 12.5 ULP and 9e-18; the
    reflection it replaced was 236 ULP and 5e-16 on such points), and never a larger max
    error than the C backend's."""
    import mpmath

    v = negative_axis_points()
    got, want, errors, c_errors = psi_errors(v)
    absolute = np.array([abs(float(mpmath.mpf(float(g)) - w)) for g, w in zip(got, want)])
    away = np.abs(np.array([float(w) for w in want])) >= 1e-2
    i = int(np.argmax(np.where(away, errors, -1)))
    assert errors[i] <= 16 and errors.max() <= c_errors.max(), (v[i], errors[i], c_errors.max())
    j = int(np.argmax(np.where(away, -1, absolute)))
    assert absolute[j] <= 1e-16, (v[j], absolute[j])


def first_negative_root_points():
    """float64 points around psi's root x1 = -0.50408... on (-1, 0): the doubles next to it,
    x1 +- 10^-k (k = 1 .. 15) and a grid over |x - x1| <= 0.2 (the fit's edge at 1/8 inside)."""
    x1 = -0.5040830082644554
    near = [np.nextafter(x1, -1), x1, np.nextafter(x1, 0)] + [x1 + s * 10.0**-k for k in range(1, 16) for s in (-1, 1)]
    return np.concatenate([near, x1 + np.linspace(-0.2, 0.2, 401)])


def test_psi_first_negative_root():
    """psi next to its root on (-1, 0) (gamma.rs: a fit (x - x1) P(x + 1/2), x1 in two doubles,
    where the reflection's terms cancel: it was 2.8e14 ULP at the root and 7e3 ULP at
    x1 + 1e-5, the C backend's series about the root 4-9): within 4 ULP of mpmath and never a
    larger max error than the C backend's."""
    v = first_negative_root_points()
    _, _, errors, c_errors = psi_errors(v)
    i = int(np.argmax(errors))
    assert errors[i] <= min(4, max(c_errors.max(), 0.5)), (v[i], errors[i], c_errors.max())


def test_polygamma_negative_axis():
    """polygamma(2, x) and polygamma(5, x) for -10.5 < x < 0 (polygamma.rs: the terms of
    Hurwitz's zeta to twice the precision, summed by TwoSum): within 4 ULP of mpmath, even
    next to the zeros of polygamma(2) between the poles (where the terms on either side of
    a pole cancel), and never a larger max error than scipy's."""
    import mpmath
    import pytensor
    import scipy.special as sp

    mpmath.mp.prec = 120
    v = negative_axis_points()
    v = np.concatenate([v[v > -10.5], -np.arange(1, 11) + 0.5, -np.arange(1, 11) + 0.502])
    x = pt.dvector("x")
    f = pytensor.function([x], [pt.polygamma(2, x), pt.polygamma(5, x)], mode=MLIR)
    report = []
    for order, g in zip((2, 5), f(v)):
        want = exact(lambda t: mpmath.polygamma(order, t), v)
        errors = ulp_errors(g, want, "float64")
        s_errors = ulp_errors(sp.polygamma(order, v), want, "float64")
        i = int(np.argmax(errors))
        if errors[i] > min(4, max(s_errors.max(), 0.5)):
            report.append(f"polygamma({order}): {errors[i]:.3g} ULP at {v[i]!r}, scipy's max {s_errors.max():.3g}")
    assert not report, "\n".join(report)


@needs_vulkan
def test_special_functions_float32_formulation_on_vulkan():
    """On Vulkan the special functions run in f32 on the device's exp and log: within 1e-4
    relative of the CPU mode's (f64-computed) results on values whose results are normal
    numbers (lavapipe flushes subnormals), special values, poles, psi's positive root and
    domain ends included, away from the negative zeros of gammaln and psi (where an f32
    reflection has only absolute accuracy). One function per op: lavapipe takes 128 bytes of push constants a
    dispatch."""
    import pytensor

    rng = np.random.default_rng(23)
    ends = [0.0, -0.0, np.inf, -np.inf, np.nan]
    x_values = np.concatenate([ends, [0.5, -0.5, 0.49999997, 1.0, -1.0, 3.0, 8.9, -8.9, -9.3, 1e-30, -1e-30, 1e4],
                               rng.uniform(-9, 9, 60), rng.standard_normal(20) * 1e-3])  # fmt: skip
    y_values = np.concatenate([ends, [1.0, -1.0, 0.5, -0.5, 0.9999999, -0.9999999, 2.0, 1e-30], rng.uniform(-1, 1, 60)])
    q_values = np.concatenate([ends, [1.0, 2.0, 0.5, 1.5, 1e-30, 1e-20, 1.9999999, 2.5, -1.0], rng.uniform(0, 2, 60),
                               10.0 ** rng.uniform(-37, 0, 20)])  # fmt: skip
    g_values = np.concatenate([ends, [1.0, 2.0, -1.0, -2.0, 0.5, 1.5, 2.5, 1.4616321, 10.0, 30.0, 34.5, 1e-30, -1e-30,
                                      -0.5, -1.5, -3.5, -20.5, 1e30, 3e36], rng.uniform(0, 30, 40),
                               -np.abs(rng.uniform(0, 1, 20)) - rng.integers(0, 20, 20)])  # fmt: skip
    # Away from the negative zeros (gammaln: about -2.46, -2.75, -3.14, -3.96, ...; psi: one
    # in each (-n - 1, -n)), where either result is only accurate in absolute terms.
    with np.errstate(invalid="ignore"):
        g_safe = g_values[(g_values > 0) | ~np.isfinite(g_values) | (np.abs(g_values - np.round(g_values)) == 0.5)]
    inputs = {"erf": x_values, "erfc": x_values, "erfcx": x_values, "erfinv": y_values, "erfcinv": q_values,
              "gamma": g_values, "gammaln": g_safe, "tri_gamma": g_values,
              # psi's first negative zero is kept by its fit around the root, in f32 too.
              "psi": np.concatenate([g_safe, first_negative_root_points()[3:-401:3]])}  # fmt: skip
    x = pt.vector("x", dtype="float32")
    failures = []
    for name, v in inputs.items():
        v = v.astype("float32")
        cpu = pytensor.function([x], SPECIAL[name](x), mode=MLIR)
        gpu = pytensor.function([x], SPECIAL[name](x), mode="MLIR_VULKAN")
        with np.errstate(all="ignore"):
            want, got = cpu(v), gpu(v)
        try:
            assert_same(got + 0, want + 0, rtol=1e-4, atol=1e-30, err_msg=name)
        except AssertionError as e:
            failures.append(str(e).strip())
    assert not failures, "\n\n".join(failures)


# ---------------------------------------------------------------------------------------
# Bessel functions (bessel.rs)

BESSEL = {"i0": pt.i0, "i1": pt.i1, "j0": pt.j0, "j1": pt.j1}
BESSEL_OPS = {"I0", "I1", "J0", "J1"}


def bessel_reference_fixes(name, x, want):
    """`want` (PyTensor's result on `x`) where it is not the function, replaced by it: scipy's
    i0 and i1 are nan at +-inf (the limits are +inf, and -inf for i1 at -inf) and overflow
    from 709.78 on (exp(x) alone; I0 and I1 do from 713.99: mpmath's value there). Zeros
    of the odd functions keep x's sign (scipy's i1(-0.0) is +0.0)."""
    import mpmath

    want = want.copy()
    x = np.asarray(x).astype(want.dtype)
    if name in ("i0", "i1"):
        odd = name == "i1"
        want[np.isinf(x)] = np.where(odd & (x[np.isinf(x)] < 0), -np.inf, np.inf)
        window = np.isfinite(x) & (np.abs(x) > 709.7) & (np.abs(x) < 714)
        want[window] = [float(mpmath.besseli(int(odd), mpmath.mpf(float(v)))) for v in x[window]]
    if name == "i1":
        want[want == 0] = np.copysign(0.0, x[want == 0])
    if name == "j1":
        # C's j1 of a tiny x is x/2 rounded to even; the true value is just below x/2:
        # of a tie (an odd subnormal x) the smaller neighbour.
        tiny = np.abs(x) < 1e-300
        want[tiny] = np.copysign([float(mpmath.besselj(1, mpmath.mpf(float(v)))) for v in x[tiny]], x[tiny])
    return want


def test_bessel_like_the_reference():
    """The Bessel functions on every input kind at once (float32, float64, int8 and int64
    inputs: `upgrade_to_float` output dtypes) against PyTensor's C mode on the same inputs
    (C's j0 and j1; I0 and I1 have no C code: scipy, see bessel_reference_fixes), special
    values bit for bit (signs of zeros, infinities, nan, overflow), other values to rtol
    1e-13 (float64) or 1e-6 (float32), j0 and j1 also to atol 1e-15 (1e-7) near their zeros,
    and up to 1e15, their accuracy bound."""
    rng = np.random.default_rng(29)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.5e-323, 1e-300, -1e-300, 1.0, -1.0]
    i_specials = [7.75, -7.75, 7.749999999999999, 88.0, 91.9, 92.0, 700.0, 713.98, -713.98, 714.0, -714.0, 1e308, -1e308]
    j_specials = [5.0, -5.0, 4.999999999999999, 2.404825557695773, 3.8317059702075125, 5.520078110286311,
                  -7.015586669815619, 8.653727912911013, 1e15, -1e15, 1e6, 12345.678]  # fmt: skip
    xs = {}
    for kind, extra, wide in (("i", i_specials, 720), ("j", j_specials, 1000)):
        x = np.concatenate([specials, extra, rng.uniform(-20, 20, 40), rng.uniform(-wide, wide, 20)])
        with np.errstate(over="ignore"):
            x32 = np.concatenate([specials, extra, [1e-45, -1e-45, 3e-45], rng.uniform(-20, 20, 40),
                                  rng.uniform(-95, 95, 20)]).astype("float32")  # fmt: skip
        xs[f"{kind}64"], xs[f"{kind}32"] = x, x32
    xs["int8"] = np.array([0, 1, -1, 2, 5, 7, -8, 100, -128, 127], dtype="int8")
    xs["int64"] = np.array([0, 1, -1, 8, 30, -50, 713, 714, 10**15], dtype="int64")
    inputs = {k: pt.vector(k, dtype=str(v.dtype)) for k, v in xs.items()}
    names, outputs, args = [], [], []
    for k, x in inputs.items():
        for name, fn in BESSEL.items():
            if k[0] in "ij" and k[0] != name[0]:
                continue
            names.append(f"{name}({k})")
            outputs.append(fn(x))
            args.append((name, xs[k]))
    f, ref = compile_both(list(inputs.values()), outputs)
    with np.errstate(all="ignore"):
        got, want = f(*xs.values()), ref(*xs.values())
    want = [bessel_reference_fixes(name, v, w) for (name, v), w in zip(args, want)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype
        if g.dtype == np.float32:
            # float32 is computed in f64 and rounded once: i1 of a float32 subnormal x is
            # x/2 exactly in f64 (x^3/16 is far below its ulp), a tie in float32 that rounds
            # to even where the true value, just above, rounds up: one subnormal apart.
            one_off = (np.abs(w) < np.finfo("float32").tiny) & (np.abs(g - w) <= np.finfo("float32").smallest_subnormal)
            got[i] = np.where(one_off, w, g)
    i_only = [k for k, n in enumerate(names) if n[0] == "i"]
    assert_all_same([names[k] for k in i_only], [got[k] for k in i_only], [want[k] for k in i_only])
    for k, n in enumerate(names):
        if n[0] == "j":
            f32 = got[k].dtype == np.float32
            assert_same(got[k], want[k], rtol=1e-6 if f32 else 1e-13, atol=1e-7 if f32 else 1e-15, err_msg=n)
    for name, g, w in zip(names, got, want):
        np.testing.assert_array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]), err_msg=name)
    assert BESSEL_OPS <= scalar_ops(f), BESSEL_OPS - scalar_ops(f)


@pytest.mark.parametrize("dtype", FLOATS)
def test_bessel_accuracy(dtype):
    """Each Bessel function against mpmath (benchmarks/accuracy_cases.py): within 8 ULP
    wherever scipy is, and never a larger max error than PyTensor's own mode (scipy, or
    C's libm for j0 and j1) on the same points."""

    report = []
    # Past their bound (j0, j1: the angle's reduction, as sin and cos) left out.
    cases = [BY_NAME[k] for k in BESSEL]
    for c, v, g, want, errors, c_errors, bad in measured(cases, dtype, 1000, np.random.default_rng(31), within_bound):
        report += misses(c, v, g, errors, c_errors, bad, errors)
    assert not report, "\n".join(report)


@needs_vulkan
def test_bessel_float32_formulation_on_vulkan():
    """On Vulkan the Bessel functions run in f32 on the device's exp: within 1e-5 relative
    of the CPU mode's (f64-computed) results, or 1e-6 absolute for j0 and j1 (near their
    zeros the f32 angle is only that accurate past 5, and below 5 lavapipe loses the
    split zeros' low parts: j1 at its first zero in float32 came out 0), on normal results (lavapipe flushes
    subnormals), special values, the switch points, overflow and the zeros included. One
    function per op: lavapipe takes 128 bytes of push constants a dispatch."""
    import pytensor

    rng = np.random.default_rng(37)
    ends = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-30, -1e-30]
    i_values = np.concatenate([ends, [7.75, 7.7499995, -7.75, 88.0, 88.1, 91.9, 92.0, -92.0], rng.uniform(-20, 20, 40),
                               rng.uniform(-95, 95, 20)])  # fmt: skip
    j_values = np.concatenate([ends, [5.0, 4.9999995, -5.0, 2.4048255, 3.831706, 5.520078, 7.0155869, 8.653728, 1e4,
                                      -3e4, 1e5], rng.uniform(-30, 30, 60), rng.uniform(-1000, 1000, 20)])  # fmt: skip
    x = pt.vector("x", dtype="float32")
    y = pt.vector("y", dtype="float32")
    vals = {"i": i_values.astype("float32"), "j": j_values.astype("float32")}
    cpu = pytensor.function([x, y], [fn(x if name[0] == "i" else y) for name, fn in BESSEL.items()], mode=MLIR)
    with np.errstate(all="ignore"):
        wants = cpu(vals["i"], vals["j"])
    failures = []
    for (name, fn), want in zip(BESSEL.items(), wants):
        v = vals[name[0]]
        gpu = pytensor.function([x], fn(x), mode="MLIR_VULKAN")
        with np.errstate(all="ignore"):
            got = gpu(v)
        try:
            assert_same(got + 0, want + 0, rtol=1e-5, atol=1e-6 if name[0] == "j" else 1e-30, err_msg=name)
        except AssertionError as e:
            failures.append(str(e).strip())
    assert not failures, "\n\n".join(failures)
# Incomplete gamma (crates/core/src/lower/scalar_math/incomplete_gamma.rs).
INCOMPLETE_GAMMA = {"gammainc": pt.gammainc, "gammaincc": pt.gammaincc, "gammal": pt.gammal, "gammau": pt.gammau}
INCOMPLETE_GAMMA_OPS = {"GammaInc", "GammaIncC", "GammaL", "GammaU"}
# float64 P and Q by Temme's expansion: measured max 3.3 ULP (400 points, a in [20, 1e4],
# x in [0.3 a, 2.4 a]; before it, 21.7 ULP on the same points).
TEMME_ULP = 4.0


def incomplete_gamma_pairs(rng):
    """(a, x): every pair of special values (0, -0, -1, +-inf, nan) and plain ones, then moderate pairs (a in [0.05, 50], x within a factor 10 of a), small x
    (where Q has its own series) and pairs near x = a. Subnormal arguments are in the
    accuracy test (scipy's P(5e-324, 1) is 0, not 1)."""
    special = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan])
    plain = np.array([1.0, 0.5, 2.0, 1.1, 10.0, 30.0, 1e-30])
    both = np.concatenate([special, plain])
    a_grid, x_grid = np.meshgrid(both, both)
    a_grid, x_grid = a_grid.ravel(), x_grid.ravel()
    a = 10.0 ** rng.uniform(np.log10(0.05), np.log10(50), 160)
    x = a * 10.0 ** rng.uniform(-1, 1, 160)
    a_small = 10.0 ** rng.uniform(-3, 1, 40)
    x_small = rng.uniform(0, 1.1, 40)
    a_near = 10.0 ** rng.uniform(0, 3, 40)
    x_near = a_near * (1 + rng.uniform(-0.1, 0.1, 40))
    a_all = np.concatenate([a_grid, a, a_small, a_near])
    x_all = np.concatenate([x_grid, x, x_small, x_near])
    return a_all, x_all


@pytest.mark.parametrize("dtype", FLOATS)
def test_incomplete_gamma_like_the_reference(dtype):
    """gammainc, gammaincc, gammal, gammau: on pairs with a special argument exactly like
    PyTensor's C code (pytensor/scalar/c_code/gamma.c) except where its formula breaks down,
    where ours gives the mathematical value (below); elsewhere like the Ops' Python
    implementation (scipy) to rtol 1e-10 (1e-6 in float32): the C code is not accurate
    there (its P is 0.78 at a = 1e-30, x = 1; its upper gamma, a continued fraction for every
    x, is nan or negative for x < a; test_incomplete_gamma_accuracy compares both against
    mpmath). The deliberate differences from C: a nan gives nan (C: P(nan, 0) = 0, P(nan,
    inf) = 1, P(inf, nan) = 0); gammal(a, inf) = Gamma(a) and gammau(a, inf) = 0 (C: nan); gammal(inf, x) =
    0 up to x = 1, inf past it, and gammau(inf, x) = inf (C: nan or 0); and from scipy:
    gammau(a, x) for a below 2^-1024, where scipy's Q Gamma(a) is 0 inf, is E1(x)."""
    import pytensor
    import scipy.special as sp
    from pytensor.compile.mode import Mode

    rng = np.random.default_rng(31)
    av, xv = (v.astype(dtype) for v in incomplete_gamma_pairs(rng))
    a, x = pt.vector("a", dtype=dtype), pt.vector("x", dtype=dtype)
    outs = [fn(a, x) for fn in INCOMPLETE_GAMMA.values()]
    f = pytensor.function([a, x], outs, mode=MLIR)
    ref_c = pytensor.function([a, x], outs, mode=C)
    ref_py = pytensor.function([a, x], outs, mode=Mode(linker="py", optimizer="fast_run"))
    assert INCOMPLETE_GAMMA_OPS <= scalar_ops(f), INCOMPLETE_GAMMA_OPS - scalar_ops(f)
    with np.errstate(all="ignore"):
        got, want_c, want_py = f(av, xv), ref_c(av, xv), ref_py(av, xv)
    a64, x64 = av.astype("float64"), xv.astype("float64")
    is_special = ~np.isfinite(a64) | ~np.isfinite(x64) | (a64 <= 0) | (x64 <= 0)
    positive = (a64 > 0) & (x64 > 0)
    a_inf, x_inf = np.isposinf(a64), np.isposinf(x64)
    with np.errstate(all="ignore"):
        mathematical = {
            "gammainc": (np.isnan(a64) | np.isnan(x64), np.nan),
            "gammaincc": (np.isnan(a64) | np.isnan(x64), np.nan),
            "gammal": (positive & (a_inf ^ x_inf), np.where(a_inf, np.where(x64 > 1, np.inf, 0.0), sp.gamma(a64))),
            # Below 2^-1024 Gamma(a) overflows (scipy: Q Gamma(a) = nan); Gamma(a, x) is E1(x).
            "gammau": (positive & ((a_inf ^ x_inf) | (a64 < 1e-300)), np.where(a_inf, np.inf, np.where(x_inf, 0.0, sp.exp1(x64)))),
        }
    rtol = 1e-10 if dtype == "float64" else 1e-6
    for name, g, wc, wp in zip(INCOMPLETE_GAMMA, got, want_c, want_py):
        where, value = mathematical[name]
        w = np.where(where, np.asarray(value, dtype=dtype), np.where(is_special, wc, wp))
        assert g.dtype == w.dtype == np.dtype(dtype), name
        assert_same(g, w, rtol=rtol, atol=0, err_msg=name)
        np.testing.assert_array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]), err_msg=name)


def incomplete_gamma_hard_pairs(rng, n=10):
    """(a, x) where the prefactor x^a e^-x / Gamma(a) has a large exponent (a rounded
    exponent cost up to |exponent| eps there) or the continued fraction is long: `n`
    points per region, and the worst points measured before the exponent was carried in
    two doubles (286 to 1050 ULP)."""
    def logu(lo, hi):
        return np.exp(rng.uniform(np.log(lo), np.log(hi), n))

    a_big = logu(10, 5000)
    regions = [
        (logu(50, 300), logu(0.01, 2)),  # large a, small x: exponent to -700
        (a_big, a_big * rng.uniform(1 / 3, 3, n)),  # a phi by its series (a/3 <= x <= 3a)
        (logu(10, 1600), logu(10, 1600) * rng.uniform(0.05, 0.33, n)),  # a phi from logarithms
        (rng.uniform(10, 60, n), rng.uniform(200, 700, n)),  # large x
        (rng.uniform(0.5, 9.9, n), logu(1e-300, 1e-100)),  # a < 10, x tiny
        (logu(1e-16, 1e-3), rng.uniform(100, 700, n)),  # a tiny, x large
        (logu(1e-300, 1.0), rng.uniform(1.1, 3.0, n)),  # the longest continued fractions
        (rng.uniform(1, 10, n), rng.uniform(1, 10, n)),  # a < 10 near x = a
    ]
    worst = np.array([(117.97, 0.4), (27.75, 589.4), (1.2575, 1.0e-177), (2.3e-15, 479.1), (583.2035382430856, 3.4155437219540152),
                      (269.0532960207669, 9.436418098831604), (15.7009665375516, 713.0638742371408), (6.683725097335795, 568.4464996214683),
                      (9.99, 10.0), (0.3, 1.2), (6.264412512127689e-162, 1.137233900116268)]).T  # fmt: skip
    a = np.concatenate([r[0] for r in regions] + [worst[0]])
    x = np.concatenate([r[1] for r in regions] + [worst[1]])
    return np.stack([a, x])


def incomplete_gamma_temme_pairs(rng, n=12):
    """(a, x) where P and Q come from Temme's expansion (a >= 20, x from 0.35 a to
    2.15 a): `n` points over the region, `n` within 5% of x = a for a in [1000, 8000] (where
    the series' rounding reached 27 ULP before), and the region's corners."""
    a = np.exp(rng.uniform(np.log(20), np.log(3000), n))
    a_big = np.exp(rng.uniform(np.log(1000), np.log(8000), n))
    corners = np.array([(20.0, 7.0), (20.0, 42.0), (20.0, 20.0), (8249.0, 8175.0), (1000.0, 350.0), (1000.0, 2100.0)]).T
    a_all = np.concatenate([a, a_big, corners[0]])
    x_all = np.concatenate([a * rng.uniform(0.35, 2.1, n), a_big * rng.uniform(0.95, 1.05, n), corners[1]])
    return np.stack([a_all, x_all])


@pytest.mark.parametrize("dtype", FLOATS)
def test_incomplete_gamma_accuracy(dtype):
    """The incomplete gamma functions against mpmath on their accuracy points
    (benchmarks/accuracy_cases.py: a and x drawn independently, tails included) and, in
    float64, on `incomplete_gamma_hard_pairs`: never a larger max error than the C
    backend's or scipy's on the same points; float32 (computed in float64) within 1 ULP;
    float64 within 8 ULP wherever scipy is, and within 12 ULP everywhere but for a >= 1000
    with x within 10% of a in gammal and gammau (the series' ~9 sqrt(a) terms each round:
    26.8 ULP measured at a = 8249, x = 8175; scipy 132 there), where 40; gammainc and
    gammaincc within TEMME_ULP where Temme's expansion serves (`incomplete_gamma_temme_pairs`,
    both dtypes). On accuracy.py's 5000 float64 points the max was 8.7 ULP (gammal(30.3,
    25.5))."""
    import pytensor
    import scipy.special as sp

    rng = np.random.default_rng(37)
    cases = [BY_NAME[k] for k in INCOMPLETE_GAMMA]
    args = [[pt.vector(f"{c.name}{j}", dtype=dtype) for j in range(2)] for c in cases]
    outs = [c.pytensor(*xs) for c, xs in zip(cases, args)]
    inputs = [v for xs in args for v in xs]
    f = pytensor.function(inputs, outs, mode=MLIR)
    ref = pytensor.function(inputs, outs, mode=C)
    vals = [points(c, dtype, 80, rng) for c in cases]
    if dtype == "float64":
        hard = incomplete_gamma_hard_pairs(rng)
        vals = [np.concatenate([v, hard], axis=1) for v in vals]
    temme = incomplete_gamma_temme_pairs(rng).astype(dtype)
    vals = [np.concatenate([v, temme], axis=1) for v in vals]
    vals = [v[:, within_bound(c, dtype, v)] for c, v in zip(cases, vals)]
    flat = [row for v in vals for row in v]
    with np.errstate(all="ignore"):
        got, c_got = f(*flat), ref(*flat)
    scipy_fn = {
        "gammainc": sp.gammainc,
        "gammaincc": sp.gammaincc,
        "gammal": lambda a, x: sp.gammainc(a, x) * sp.gamma(a),
        "gammau": lambda a, x: sp.gammaincc(a, x) * sp.gamma(a),
    }
    report = []
    for c, v, g, cg in zip(cases, vals, got, c_got):
        want = exact(c.mpmath, *v)
        errors = ulp_errors(g, want, dtype)
        c_errors = ulp_errors(cg, want, dtype)
        with np.errstate(all="ignore"):
            s = scipy_fn[c.name](*(row.astype("float64") for row in v)).astype(dtype)
        s_errors = ulp_errors(s, want, dtype)
        if errors.max() > max(c_errors.max(), s_errors.max(), 0.5):
            i = int(np.argmax(errors))
            report.append(f"{c.name}: max {errors[i]:.3g} ULP at {tuple(v[:, i])} (got {g[i]!r}); C {c_errors.max():.3g}, scipy {s_errors.max():.3g}")
        if dtype == "float32":
            bound = np.full(errors.shape, 1.0)
        else:
            a, x = v.astype("float64")
            with np.errstate(invalid="ignore"):
                long_series = (a >= 1000) & (np.abs(x - a) <= 0.1 * a)
                in_temme = (a >= 20) & (x >= 0.35 * a) & (x <= 2.15 * a)
            bound = np.where(long_series, 40.0, np.where(s_errors <= 8, 8.0, 12.0))
            if c.name in ("gammainc", "gammaincc"):
                bound = np.where(in_temme, TEMME_ULP, np.where(s_errors <= 8, 8.0, 12.0))
        bad = errors > bound
        if bad.any():
            i = int(np.argmax(np.where(bad, errors - bound, -np.inf)))
            report.append(f"{c.name}: {errors[i]:.3g} ULP at {tuple(v[:, i])} (got {g[i]!r}, want {want[i]}), bound {bound[i]:.3g}, scipy {s_errors[i]:.3g}")
    assert not report, "\n".join(report)


@pytest.mark.parametrize("dtype", FLOATS)
def test_incomplete_gamma_fixed_depths(dtype):
    """gammainc and gammaincc at the edges of their fixed-length sums (incomplete_gamma.rs,
    `p_series_fixed` and `q_fraction_fixed`, straight-line code). Against mpmath, within
    8 ULP in float64 and 1 ULP in float32 (computed in float64): the deepest continued
    fractions (x just above 1.1, a tiny or just below x) and the longest series (a just
    below 20, where Temme's expansion starts, x just below a). Like the Ops' Python
    implementation (scipy) to rtol 1e-12 (mpmath takes minutes there): a around
    SERIES_HUGE_A (1e20) with x up to 0.34 a, and huge x (1e17 to 1e300, a up to x / 2.2)
    in the fraction, where P or Q underflows: 0 or 1, never nan."""
    import pytensor
    from pytensor.compile.mode import Mode

    above_1_1 = float(np.nextafter(1.1, 2.0))
    deep = [(a, x) for x in (above_1_1, 1.2, 1.5, 2.0) for a in (1e-300, 1e-20, 1e-3, 0.3, 0.999, 1.0999)]
    deep += [(a, a * r) for a in (19.999999, 19.99, 15.5, 9.75) for r in (0.999999, 0.99, 0.9)]
    huge = [(a, a * r) for a in (1e18, 1e19, 9.9e19, 1e20, 1.01e20, 1e40, 1e100) for r in (1e-21, 0.1, 0.34)]
    huge += [(a, x) for x in (1e17, 1e40, 1e160, 1e300) for a in (0.5, 5.0, 19.5, x / 2.2)]
    a, x = pt.vector("a", dtype=dtype), pt.vector("x", dtype=dtype)
    outs = [pt.gammainc(a, x), pt.gammaincc(a, x)]
    f = pytensor.function([a, x], outs, mode=MLIR)
    ref = pytensor.function([a, x], outs, mode=Mode(linker="py", optimizer="fast_run"))
    tiny, top = float(np.finfo(dtype).tiny), float(np.finfo(dtype).max)
    representable = [(p, q) for p, q in deep + huge if tiny < p < top and q < top]
    deep, huge = ([pq for pq in group if pq in representable] for group in (deep, huge))
    av, xv = (np.array(v, dtype=dtype) for v in zip(*deep))
    bound = 8.0 if dtype == "float64" else 1.0
    report = []
    for name, g in zip(["gammainc", "gammaincc"], f(av, xv)):
        want = exact(BY_NAME[name].mpmath, av, xv)
        errors = ulp_errors(g, want, dtype)
        for i in np.flatnonzero(~(errors <= bound)):
            report.append(f"{name}{(float(av[i]), float(xv[i]))}: {errors[i]:.3g} ULP (got {g[i]!r}, want {want[i]!r})")
    assert not report, "\n".join(report)
    av, xv = (np.array(v, dtype=dtype) for v in zip(*huge))
    with np.errstate(all="ignore"):
        got, want = f(av, xv), ref(av, xv)
    for name, g, w in zip(["gammainc", "gammaincc"], got, want):
        assert np.isfinite(w).all(), name
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, err_msg=name)


# polygamma (crates/core/src/lower/scalar_math/polygamma.rs).
@pytest.mark.parametrize("dtype", FLOATS)
def test_polygamma_like_scipy(dtype):
    """polygamma(n, x) for orders 0 to 12 per element against the Op's implementation (scipy,
    the py linker; the Op has no C code): special values exactly (poles, +-inf, nan,
    negative orders), positive x to rtol 1e-11 (1e-6 in float32); negative x, where the
    values between the poles cross zero and both are accurate only in absolute terms, to
    1e-9 of the larger of the two sums' sizes (n! sum |x + k|^-(n+1) bounds them)."""
    import pytensor
    import scipy.special as sp
    from pytensor.compile.mode import Mode

    rng = np.random.default_rng(41)
    specials = np.array([0.0, -0.0, -1.0, -2.0, -np.inf, np.inf, np.nan, 1e-30, -1e-30, 1.0, 2.0])
    x_pos = np.concatenate([10.0 ** rng.uniform(-3, 2, 80), rng.uniform(0, 40, 40)])
    x_neg = -rng.uniform(0, 8, 40)
    orders = np.arange(-1, 13)
    nv = np.concatenate([np.repeat(orders, len(specials)), rng.integers(0, 13, 120), rng.integers(0, 9, 40)])
    xv = np.concatenate([np.tile(specials, len(orders)), x_pos, x_neg]).astype(dtype)
    n_int = "int64" if dtype == "float64" else "int32"
    n, x = pt.vector("n", dtype=n_int), pt.vector("x", dtype=dtype)
    out = pt.polygamma(n, x)
    f = pytensor.function([n, x], out, mode=MLIR)
    ref = pytensor.function([n, x], out, mode=Mode(linker="py", optimizer="fast_run"))
    assert "PolyGamma" in scalar_ops(f)
    nv = nv.astype(n_int)
    with np.errstate(all="ignore"):
        got, want = f(nv, xv), ref(nv, xv)
        x64 = xv.astype("float64")
        scale = np.array([sp.gamma(k + 1.0) * sum(abs(v + j) ** -(k + 1.0) for j in range(60)) if v < 0 else 0.0
                          for k, v in zip(nv, x64)])  # fmt: skip
    assert got.dtype == want.dtype == np.dtype(dtype)
    special = ~np.isfinite(x64) | ((x64 <= 0) & (np.floor(x64) == x64)) | (nv < 0)
    assert_same(got[special], want[special], err_msg="special values")
    np.testing.assert_array_equal(np.signbit(got[special]), np.signbit(want[special]))
    pos = ~special & ((x64 > 0) | (x64 > -1e-6))
    assert_same(got[pos], want[pos], rtol=1e-11 if dtype == "float64" else 1e-6, err_msg="x > 0")
    neg = ~special & (x64 <= -1e-6)
    tol = 1e-9 if dtype == "float64" else 1e-5
    err = np.abs(got[neg].astype("float64") - want[neg]) / np.maximum(scale[neg], np.abs(want[neg]))
    assert (err <= tol).all(), (np.max(err), nv[neg][np.argmax(err)], x64[neg][np.argmax(err)])


@pytest.mark.parametrize("dtype", FLOATS)
def test_polygamma_accuracy(dtype):
    """polygamma of orders 2 and 5 against mpmath (benchmarks/accuracy_cases.py): for x > 0
    within 8 ULP wherever scipy is, and never a larger max error there than scipy's."""
    import pytensor
    import scipy.special as sp

    rng = np.random.default_rng(43)
    cases = [BY_NAME["polygamma2"], BY_NAME["polygamma5"]]
    inputs = [pt.vector(c.name, dtype=dtype) for c in cases]
    f = pytensor.function(inputs, [c.pytensor(x) for c, x in zip(cases, inputs)], mode=MLIR)
    vals = [points(c, dtype, 200, rng) for c in cases]
    with np.errstate(all="ignore"):
        got = f(*vals)
    report = []
    for c, v, g, order in zip(cases, vals, got, (2, 5)):
        keep = ~(v < 0)  # negative x: absolute accuracy only (test_polygamma_like_scipy)
        v, g = v[keep], g[keep]
        want = exact(c.mpmath, v)
        errors = ulp_errors(g, want, dtype)
        with np.errstate(all="ignore"):
            s_errors = ulp_errors(sp.polygamma(order, v.astype("float64")).astype(dtype), want, dtype)
        bad = (s_errors <= SPECIAL_MAX_ULP) & (errors > SPECIAL_MAX_ULP)
        if bad.any():
            i = int(np.argmax(np.where(bad, errors, -1)))
            report.append(f"{c.name}: {errors[i]:.3g} ULP at {v[i]!r} (got {g[i]!r}, want {want[i]})")
        if errors.max() > max(SPECIAL_MAX_ULP, s_errors.max()):
            report.append(f"{c.name}: max {errors.max():.3g} ULP, scipy's {s_errors.max():.3g}")
    assert not report, "\n".join(report)
