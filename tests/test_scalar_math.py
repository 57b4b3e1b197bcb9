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

EXP_LOG = ["log1p", "expm1", "log2", "log10", "exp2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
           "sigmoid", "softplus", "log1mexp"]  # fmt: skip
MAX_ULP = 4.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_log_accuracy(dtype):
    """Every exp/log function within 4 ULP of mpmath over its whole domain."""
    import pytensor

    rng = np.random.default_rng(7)
    cases = [BY_NAME[k] for k in EXP_LOG]
    inputs = [pt.vector(c.name, dtype=dtype) for c in cases]
    f = pytensor.function(inputs, [c.pytensor(x) for c, x in zip(cases, inputs)], mode=MLIR)
    vals = [points(c, dtype, 1500, rng) for c in cases]
    with np.errstate(all="ignore"):
        got = f(*vals)
    report = []
    for c, v, g in zip(cases, vals, got):
        errors = ulp_errors(g, exact(c.mpmath, v), dtype)
        i = int(np.argmax(errors))
        if errors[i] > MAX_ULP:
            report.append(f"{c.name}: {errors[i]:.3g} ULP at {v[i]!r} (got {g[i]!r})")
    assert not report, "\n".join(report)


TRIG = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_trig_accuracy(dtype):
    """Every trigonometric function within 4 ULP of mpmath over its whole domain (arctan2:
    random pairs in every quadrant, every pair of signed zeros, infinities, nan, tiny and
    huge values); sin, cos, tan up to the bound (1e15, 1e5 in float32), and past it, up
    to the largest float, finite and (sin, cos) within [-1, 1]."""
    import pytensor

    rng = np.random.default_rng(11)
    cases = [BY_NAME[k] for k in TRIG]
    args = [[pt.vector(f"{c.name}{j}", dtype=dtype) for j in range(c.arity)] for c in cases]
    f = pytensor.function([x for a in args for x in a], [c.pytensor(*a) for c, a in zip(cases, args)], mode=MLIR)
    vals = [points(c, dtype, 1500, rng) for c in cases]
    with np.errstate(all="ignore"):
        got = f(*[row for c, v in zip(cases, vals) for row in (v if c.arity > 1 else [v])])
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


@pytest.mark.skipif(
    not VULKAN_DEVICES,
    reason=f"no Vulkan device ({WHY_NO_VULKAN or 'none listed'}); install mesa-vulkan-drivers and libvulkan1",
)
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
