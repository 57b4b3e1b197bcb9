"""Elemwise scalar ops in the MLIR mode give the results of PyTensor's C backend.

To keep the suite fast, each test compiles *one* function whose outputs are every op that
PyTensor defines for a dtype (or a pair of dtypes), and compares every output. Each such
test runs twice: with PyTensor's fusion (the ops become one multi-output `Composite`) and
without it (one `Elemwise` node per op). Inputs are deterministic and cover each dtype's
edge values; values whose result is undefined in C (or in numpy) are left out, and each
place that does so says why.
"""

import itertools

import numpy as np
import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.graph.traversal import graph_inputs
from pytensor.tensor.elemwise import Elemwise

from pytensor_mlir._core import IreeRuntimeError
from conftest import C, MLIR, assert_all_same, assert_same, check, compile_both, raises_like

SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTS = SIGNED + UNSIGNED
FLOATS = ["float32", "float64"]
DTYPES = ["bool", *INTS, *FLOATS]

# PyTensor's rewrites delete `identity(x)` and turn `second(x, y)` into an Alloc, so with the
# default rewrites neither op would ever reach a backend here. These graphs keep them.
KEEP_OPS = (
    "local_useless_elemwise",
    "remove_tensor_copy",
    "local_useless_fill",
    "local_second_to_alloc",
    "topological_second_sink",
)

# (name, MLIR mode, C mode): fused, the ops become Composites; unfused, one Elemwise each
# on our side. The reference is the fused C function in both: its results are the same,
# and unfused it compiles one C module per Elemwise node (a cold C cache took 26 minutes).
VARIANTS = {
    "fused": (MLIR.excluding(*KEEP_OPS), C.excluding(*KEEP_OPS)),
    "unfused": (MLIR.excluding("fusion", *KEEP_OPS), C.excluding(*KEEP_OPS)),
}

# PyTensor's Python implementation (numpy's ufuncs): the reference where the C backend's
# result is undefined (test_where_c_is_undefined), or computed in C's own operand types
# instead of PyTensor's output dtype (test_mixed_dtypes_against_numpy).
NUMPY = Mode(linker="py", optimizer="fast_run").excluding("fusion", *KEEP_OPS)


# ---------------------------------------------------------------------------------------
# Inputs


def edges(dtype):
    """The values of `dtype` where ops are most likely to go wrong."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        candidates = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 7, 100, -1, -2, -3, -7, -100]
        return np.array(sorted({c for c in candidates if info.min <= c <= info.max}), dtype=dt)
    f = np.finfo(dt)
    return np.array(
        [
            0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0, -3.0, 7.25, -7.0, 100.0, -1e3,
            f.tiny, -f.tiny, f.smallest_subnormal, -f.smallest_subnormal, f.eps,
            f.max, -f.max, np.inf, -np.inf, np.nan,
        ],
        dtype=dt,
    )  # fmt: skip


def random(dtype, n, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        wide = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
        small = rng.integers(max(info.min, -50), min(info.max, 50), size=n, endpoint=True).astype(dt)
        return np.where(rng.random(n) < 0.5, wide, small)
    return (rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)).astype(dt)


def pairs(a, b, rng, n_random=64):
    """Every pair of edge values of `a` and `b`, then random pairs."""
    ea, eb = edges(a), edges(b)
    x = np.concatenate([np.repeat(ea, len(eb)), random(a, n_random, rng)]).astype(a)
    y = np.concatenate([np.tile(eb, len(ea)), random(b, n_random, rng)]).astype(b)
    return x, y


def nonzero(v):
    """`v` with its zeros made ones: divisors for integer division, which raises on zero
    (tested apart, in test_integer_division_by_zero)."""
    return np.where(v == 0, np.ones_like(v), v)


def without_min(v):
    """int32/int64 values with MIN made MIN + 1 (C's // and % negate their operands)."""
    if v.dtype in (np.int32, np.int64):
        lo = np.iinfo(v.dtype).min
        return np.where(v == lo, v + 1, v)
    return v


def clip_to_double(v):
    """Integers clipped to +-2**53, where float64 holds every integer."""
    return np.clip(v, -(2**53) if v.dtype.kind == "i" else 0, 2**53).astype(v.dtype)


def int_pow_cases(base, exp, out, n):
    """Integer `base ** exp` pairs whose result C's `pow` gets exactly: C computes integer
    pow in double and casts, so a result outside `out` (a float-to-int cast of an
    out-of-range value, undefined in C), `0 ** negative` (inf cast to an int, undefined)
    and results beyond 2**53 (double rounding, where numpy is exact) are left out."""
    bi, ei, oi = (np.iinfo(d) if d != "bool" else None for d in (base, exp, out))

    def fits(v, info):
        return v in (0, 1) if info is None else info.min <= v <= info.max

    bases = [b for b in (-3, -2, -1, 0, 1, 2, 3, 7, 10) if fits(b, bi)]
    exps = [e for e in (-3, -2, -1, 0, 1, 2, 3, 4, 5, 9, 14, 15, 19, 30, 31, 62, 63) if fits(e, ei)]
    cases = []
    for b, e in itertools.product(bases, exps):
        if e < 0:
            if b == 0:
                continue
            r = int(float(b) ** e)  # C truncates toward zero
        else:
            r = b**e
        if fits(r, oi) and abs(r) <= 2**53:
            cases.append((b, e))
    x, y = np.array(cases).T
    return np.resize(x.astype(base), n), np.resize(y.astype(exp), n)


def float_to_int_source(src, dst, n, rng):
    """Floats of `src` whose cast to the integer `dst` is defined in C: the value truncated
    toward zero fits `dst` (so no nan, no inf, nothing out of range)."""
    info = np.iinfo(dst)
    lo, hi = float(info.min), float(info.max)
    # Stay clear of the ends, where rounding to `src` could leave the range.
    span = np.where(rng.random(n) < 0.5, rng.uniform(lo * 0.99, hi * 0.99, n), rng.uniform(max(lo, -300), min(hi, 300), n))
    fixed = [0.0, -0.0, 0.5, 0.99, 1.0, 1.5, 2.5, 127.9, 100.25]
    if info.min < 0:
        fixed += [-0.5, -0.99, -1.0, -1.5, -2.5, -127.9, -128.0]
    else:
        fixed += [-0.5, -0.99]  # truncate to 0, which fits: defined
    return np.resize(np.concatenate([fixed, span]).astype(src), n)


# ---------------------------------------------------------------------------------------
# Checking


def scalar_ops(fn):
    """Class names of the scalar ops in a compiled function, Composites' insides included."""
    names = set()

    def walk(ops):
        for op in ops:
            names.add(type(op).__name__)
            if isinstance(op, ps.Composite):
                walk(node.op for node in op.fgraph.toposort())

    walk(node.op.scalar_op for node in fn.maker.fgraph.toposort() if isinstance(node.op, Elemwise))
    return names


def check_named(inputs, outputs, values, mode, reference, **kwargs):
    """`check` with named outputs (a dict), so that a failure says which op failed."""
    names = list(outputs)
    f, ref = compile_both(inputs, [outputs[k] for k in names], mode=mode, reference=reference, **kwargs)
    got, want = f(*values), ref(*values)
    assert_all_same(names, got, want)
    return f


def expected_ops(outputs):
    """The scalar op classes the uncompiled `outputs` use (each Elemwise of the graph)."""
    return {type(v.owner.op.scalar_op).__name__ for v in outputs.values() if isinstance(v.owner.op, Elemwise)}


# ---------------------------------------------------------------------------------------
# One dtype: every op at once


def one_dtype_graph(dtype, rng):
    """Inputs, named outputs and values: every scalar op PyTensor defines on `dtype`."""
    kind = np.dtype(dtype).kind
    xv, yv = pairs(dtype, dtype, rng)
    n = len(xv)
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    c = pt.vector("c", dtype="bool")
    inputs, values = [x, y, c], [xv, yv, rng.random(n) < 0.5]
    out = {
        "add": x + y,
        "mul": x * y,
        "true_div": x / y,
        "abs": abs(x),
        "lt": pt.lt(x, y),
        "gt": pt.gt(x, y),
        "le": pt.le(x, y),
        "ge": pt.ge(x, y),
        "eq": pt.eq(x, y),
        "neq": pt.neq(x, y),
        "switch": pt.switch(c, x, y),
        "switch_on_value": pt.switch(x, y, x),  # a condition that is not bool: nonzero (nan too)
        "sqr": pt.sqr(x),
        "sqrt": pt.sqrt(x),
        "exp": pt.exp(x),
        "log": pt.log(x),
        "identity": pt.tensor_copy(x),
        "second": pt.second(x, y),
    }
    if dtype in ("int64", "uint64"):
        # C's maximum and minimum are `y > x ? y : (x >= y ? x : nan(""))`: the `nan` makes
        # the expression a double, so 64-bit integers pass through double. Past 2**53 that
        # rounds, and past the type's range the cast back is undefined: values up to 2**53
        # here, the full range against numpy in test_where_c_is_undefined.
        mx, my = pt.vector("mx", dtype=dtype), pt.vector("my", dtype=dtype)
        inputs += [mx, my]
        values += [clip_to_double(xv), clip_to_double(yv)]
    else:
        mx, my = x, y
    out["maximum"] = pt.maximum(mx, my)
    out["minimum"] = pt.minimum(mx, my)
    if dtype != "bool":  # PyTensor has no sub or neg of bools
        out["sub"] = x - y
        out["neg"] = -x
    if kind == "f":
        # Float division and mod by zero give inf or nan, and negative zeros and infinities
        # are all defined: the edge pairs go in unchanged.
        out["int_div"] = x // y
        out["mod"] = x % y
        out["pow"] = x**y
    else:
        xd, d = pt.vector("xd", dtype=dtype), pt.vector("d", dtype=dtype)
        inputs += [xd, d]
        xdv, dv = xv, nonzero(yv)
        if dtype in ("int32", "int64"):
            # C's int_div and mod negate their operands (`(-x) / y`, `x % (-y)`) and -MIN
            # overflows: undefined in C, where g++ even folds `(-x) / (-y)` into `x / y`
            # and MIN // -1 kills the process with SIGFPE. MIN as either operand is tested
            # against numpy in test_where_c_is_undefined. (int8 and int16 are computed in
            # C's `int`, where nothing overflows: they keep MIN.)
            xdv, dv = without_min(xv), without_min(dv)
        values += [xdv, dv]
        out["int_div"] = xd // d
        out["mod"] = xd % d
        out["and"] = x & y
        out["or"] = x | y
        out["xor"] = x ^ y
        out["invert"] = ~x
        if dtype == "bool":
            out["pow"] = x**y
        else:
            pb, pe = pt.vector("pb", dtype=dtype), pt.vector("pe", dtype=dtype)
            inputs += [pb, pe]
            values += list(int_pow_cases(dtype, dtype, dtype, n))
            out["pow"] = pb**pe
    for to in DTYPES:
        if to == dtype:
            continue
        if kind == "f" and to in INTS:
            # A float cast to an int is undefined in C where the truncated value does not
            # fit (nan, inf, out of range): a source of in-range values per target.
            s = pt.vector(f"to_{to}", dtype=dtype)
            inputs.append(s)
            values.append(float_to_int_source(dtype, to, n, rng))
            out[f"cast_{to}"] = pt.cast(s, to)
        else:
            # Int to int wraps (two's complement), int to float rounds, float64 to float32
            # overflows to inf (IEEE 754, C's Annex F), anything to bool is `!= 0` (nan too).
            out[f"cast_{to}"] = pt.cast(x, to)
    return inputs, out, values


EXPECTED_OPS = {
    "Add", "Sub", "Mul", "TrueDiv", "IntDiv", "Mod", "Neg", "Abs", "Pow", "Maximum", "Minimum",
    "LT", "GT", "LE", "GE", "EQ", "NEQ", "AND", "OR", "XOR", "Invert", "Switch", "Sqr", "Sqrt",
    "Exp", "Log", "Cast", "Identity", "Second",
}  # fmt: skip


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_ops_one_dtype(dtype, variant):
    mode, reference = VARIANTS[variant]
    rng = np.random.default_rng(DTYPES.index(dtype))
    inputs, out, values = one_dtype_graph(dtype, rng)
    f = check_named(inputs, out, values, mode, reference)
    # Every op of the graph reached the MLIR backend: none was rewritten away.
    ops = scalar_ops(f)
    assert expected_ops(out) <= ops, expected_ops(out) - ops
    assert ("Composite" in ops) == (variant == "fused")


def test_all_ops_are_covered():
    """Across the dtypes, the one-dtype graphs use every scalar op this file is about."""
    seen = set()
    for dtype in DTYPES:
        _, out, _ = one_dtype_graph(dtype, np.random.default_rng(0))
        seen |= expected_ops(out)
    assert seen == EXPECTED_OPS


# ---------------------------------------------------------------------------------------
# Two dtypes: promotion


def two_dtype_graph(a, b, rng, xv=None, yv=None, ops=None):
    """Named outputs of every binary op PyTensor defines on an `a` and a `b`, both ways."""
    if xv is None:
        xv, yv = pairs(a, b, rng)
    n = len(xv)
    x, y = pt.vector("x", dtype=a), pt.vector("y", dtype=b)
    c = pt.vector("c", dtype="bool")
    inputs, values = [x, y, c], [xv, yv, rng.random(n) < 0.5]
    out = {}
    if pt.maximum(x, y).dtype in ("int64", "uint64"):
        # Through double in C: see one_dtype_graph.
        mx, my = pt.vector("mx", dtype=a), pt.vector("my", dtype=b)
        inputs += [mx, my]
        values += [clip_to_double(xv), clip_to_double(yv)]
    else:
        mx, my = x, y
    extremes = {"x": mx, "y": my}
    for (p, pn), (q, qn) in [((x, "x"), (y, "y")), ((y, "y"), (x, "x"))]:
        pv = xv if pn == "x" else yv
        qv = yv if qn == "y" else xv
        if pn == "x":
            # Commutative, the same C expression either way: one way only.
            out["x+y"] = x + y
            out["x*y"] = x * y
            out["x==y"] = pt.eq(x, y)
            out["x!=y"] = pt.neq(x, y)
            if pt.add(x, y).dtype not in FLOATS and ((a == "bool") == (b == "bool")):
                # PyTensor's bitwise ops take integers, or bools only.
                out["x&y"] = x & y
                out["x|y"] = x | y
                out["x^y"] = x ^ y
        out[f"{pn}/{qn}"] = p / q
        # Not commutative on floats: of 0.0 and -0.0, C's max and min return the first.
        out[f"max({pn},{qn})"] = pt.maximum(extremes[pn], extremes[qn])
        out[f"min({pn},{qn})"] = pt.minimum(extremes[pn], extremes[qn])
        out[f"{pn}<{qn}"] = pt.lt(p, q)
        out[f"{pn}>={qn}"] = pt.ge(p, q)
        out[f"switch(c,{pn},{qn})"] = pt.switch(c, p, q)
        if (p.dtype, q.dtype) != ("bool", "bool"):
            out[f"{pn}-{qn}"] = p - q
        # C negates either operand of // and % (see one_dtype_graph): no int32/int64 MIN.
        dp = p
        if p.dtype in ("int32", "int64"):
            dp = pt.vector(f"dividend_{pn}", dtype=p.dtype)
            inputs.append(dp)
            values.append(without_min(pv))
        if q.dtype in INTS or q.dtype == "bool":
            # An integer divisor: zeros raise (tested apart).
            dq = pt.vector(f"divisor_{qn}", dtype=q.dtype)
            inputs.append(dq)
            values.append(nonzero(without_min(qv)))
        else:
            dq = q
        out[f"{pn}//{qn}"] = dp // dq
        out[f"{pn}%{qn}"] = dp % dq
        out_dtype = (p + q).dtype
        if out_dtype in INTS:
            pb, pe = pt.vector(f"base_{pn}", dtype=p.dtype), pt.vector(f"exp_{qn}", dtype=q.dtype)
            inputs += [pb, pe]
            values += list(int_pow_cases(p.dtype, q.dtype, (p**q).dtype, n))
            out[f"{pn}**{qn}"] = pb**pe
        else:
            out[f"{pn}**{qn}"] = p**q
    out["second(x,y)"] = pt.second(x, y)
    out["second(y,x)"] = pt.second(y, x)
    if ops is not None:
        out = {k: v for k, v in out.items() if ops(k)}
        used = set(graph_inputs(list(out.values())))
        inputs, values = zip(*[(i, v) for i, v in zip(inputs, values) if i in used])
    return list(inputs), out, list(values)


# Pairs where C computes in the output dtype, as PyTensor's types say (C's integer
# promotions widen both operands, or the wider operand already is the output dtype).
PAIRS = [
    ("bool", "int8"),
    ("bool", "float32"),
    ("int8", "uint8"),
    ("uint8", "int32"),
    ("uint32", "int64"),
    ("int8", "float32"),
    ("uint16", "float64"),
    ("float32", "float64"),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_mixed_dtypes(a, b, variant):
    mode, reference = VARIANTS[variant]
    rng = np.random.default_rng(100 + PAIRS.index((a, b)))
    inputs, out, values = two_dtype_graph(a, b, rng)
    check_named(inputs, out, values, mode, reference)


# The C backend evaluates `x + y` and friends in the operands' C types under C's usual
# arithmetic conversions, not in PyTensor's output dtype. Where those differ, so do its
# results from PyTensor's own (numpy's) semantics, which this backend follows:
# - int32 with uint32 (output int64), int64 with uint64 (output float64): C converts the
#   signed operand to unsigned, so `-5 + 1` is 2**32 - 4 (or 2**64 - 4) and `-1 < 5` is false;
# - int32 with float32 (output float64): C computes in float32, so `3 + 0.1` is 3.0999999.
# Against C, these pairs get values for which both agree: non-negative and small (sub,
# which wraps in unsigned C arithmetic when x < y, left out) or float32-exact; against
# PyTensor's Python implementation (numpy), every value.
def small_nonnegative_pairs(a, b, rng):
    e = np.array([0, 1, 2, 3, 7, 100, 255, 1000, 2**15 - 1])
    x = np.concatenate([np.repeat(e, len(e)), rng.integers(0, 2**15, 64)])
    y = np.concatenate([np.tile(e, len(e)), rng.integers(0, 2**15, 64)])
    return x.astype(a), y.astype(b)


def float32_exact_pairs(a, b, rng):
    """Small integers and dyadic fractions: sums, products, quotients by powers of two exact
    in float32. Quotients by other values are not, so only powers of two divide."""
    ints = np.array([0, 1, -1, 2, -3, 7, 100, -1000, 2**20])
    floats = np.array([0.0, -0.0, 0.5, -0.25, 1.0, 2.0, -4.0, 8.0, np.inf, -np.inf, np.nan])
    x = np.repeat(ints, len(floats))
    y = np.tile(floats, len(ints))
    return x.astype(a), y.astype(b)


UNSIGNED_ARITH_OPS = ("+", "*", "/", "//", "%", "**", "max", "min", "<", ">=", "==", "!=", "switch", "second", "&", "|", "^")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("a,b", [("int32", "uint32"), ("uint64", "int64")], ids=["int32-uint32", "uint64-int64"])
def test_mixed_signedness_same_width(a, b, variant):
    mode, reference = VARIANTS[variant]
    rng = np.random.default_rng(7)
    xv, yv = small_nonnegative_pairs(a, b, rng)
    inputs, out, values = two_dtype_graph(a, b, rng, xv, yv, ops=lambda k: any(o in k for o in UNSIGNED_ARITH_OPS))
    assert not any("-" in k for k in out)
    check_named(inputs, out, values, mode, reference)


@pytest.mark.parametrize("variant", VARIANTS)
def test_int32_float32(variant):
    mode, reference = VARIANTS[variant]
    rng = np.random.default_rng(8)
    xv, yv = float32_exact_pairs("int32", "float32", rng)
    # x / y and x // y divide by powers of two, exact in float32; y / x and y // x are not.
    # (pow and fmod take doubles in C: y % x and both pows are computed in float64 there.)
    inputs, out, values = two_dtype_graph("int32", "float32", rng, xv, yv, ops=lambda k: not k.startswith("y/"))
    check_named(inputs, out, values, mode, reference)


@pytest.mark.parametrize(
    "a,b", [("int32", "uint32"), ("uint64", "int64"), ("int32", "float32")], ids=["int32-uint32", "uint64-int64", "int32-float32"]
)
def test_mixed_dtypes_against_numpy(a, b):
    rng = np.random.default_rng(9)
    if "float32" in (a, b):
        xv, yv = pairs(a, b, rng)
    else:
        # Edge values, both signs; |v| < 2**53 so that float64 holds every value and
        # every result exactly, where numpy's int64-with-uint64 arithmetic is float64.
        e = np.array([0, 1, -1, 2, -3, 7, -100, 2**31 - 1, -(2**31), 2**32 - 1, 2**40, -(2**40)])
        ra, rb = np.iinfo(a), np.iinfo(b)
        ea, eb = e[(e >= ra.min) & (e <= ra.max)], e[(e >= rb.min) & (e <= rb.max)]
        xv = np.concatenate([np.repeat(ea, len(eb)), rng.integers(max(ra.min, -(2**20)), min(ra.max, 2**20), 64)])
        yv = np.concatenate([np.tile(eb, len(ea)), rng.integers(max(rb.min, -(2**20)), min(rb.max, 2**20), 64)])
        xv, yv = xv.astype(a), yv.astype(b)
    # Left out: pow (numpy refuses negative integer exponents); on float outputs `//`,
    # `%`, maximum and minimum, where C's conventions differ from numpy's and this backend
    # follows C (tested against C above): inf // 3 is inf in C, nan in numpy; -2.0 % 1.0
    # is +0.0 in C, and max(0.0, -0.0) the first operand; and for int64 with uint64 the
    # products, which pass 2**53 where float64 rounding, not promotion, would decide.
    left_out = ["**"]
    if pt.add(pt.scalar(dtype=a), pt.scalar(dtype=b)).dtype in FLOATS:
        left_out += ["//", "%", "max", "min"]
    if "uint64" in (a, b):
        left_out += ["*"]
    inputs, out, values = two_dtype_graph(a, b, rng, xv, yv, ops=lambda k: not any(o in k for o in left_out))
    check_named(inputs, out, values, MLIR.excluding(*KEEP_OPS), NUMPY)


@pytest.mark.parametrize("variant", VARIANTS)
def test_where_c_is_undefined(variant):
    """Where the C backend's result is undefined or lossy, PyTensor's Python implementation
    (numpy) decides, and this backend follows it:
    - `//` and `%` with MIN as either operand of int32/int64 (C negates it), MIN // -1
      (SIGFPE in C) included: MIN // -1 wraps to MIN, MIN % -1 is 0;
    - maximum/minimum of int64/uint64 beyond 2**53 (C goes through double): exact;
    - integer pow beyond 2**53 or beyond the dtype (C casts a double): exact, wrapping.
    """
    mode = VARIANTS[variant][0]
    inputs, out, values = [], {}, []

    def vector(name, dtype, v):
        var = pt.vector(name, dtype=dtype)
        inputs.append(var)
        values.append(np.array(v, dtype=dtype))
        return var

    for dt in SIGNED:
        lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
        xs = [lo, lo, lo, lo, lo, lo, lo, lo, 7, -7, lo + 1, hi, 0]
        ys = [-1, 1, 2, -2, 7, lo, lo + 1, hi, lo, lo, -1, lo, lo]
        x, y = vector(f"x_{dt}", dt, xs), vector(f"y_{dt}", dt, ys)
        out[f"{dt} //"] = x // y
        out[f"{dt} %"] = x % y
    for dt in ("int64", "uint64"):
        e = edges(dt)
        x, y = vector(f"mx_{dt}", dt, np.repeat(e, len(e))), vector(f"my_{dt}", dt, np.tile(e, len(e)))
        out[f"{dt} maximum"] = pt.maximum(x, y)
        out[f"{dt} minimum"] = pt.minimum(x, y)
    for dt in INTS:
        bits = np.iinfo(dt).bits
        cases = [(3, 39), (7, 22), (2, bits - 1), (3, bits), (10, bits // 3 + 1), (5, 2 * bits), (2, bits)]
        if dt in SIGNED:
            cases += [(-3, 39), (-2, bits - 1), (-7, bits // 2 + 1), (-1, 2 * bits + 1)]
        cases = [(bb, e) for bb, e in cases if e <= np.iinfo(dt).max]
        base, exp = zip(*cases)
        x, y = vector(f"base_{dt}", dt, base), vector(f"exp_{dt}", dt, exp)
        out[f"{dt} **"] = x**y
    f = check_named(inputs, out, values, mode, NUMPY)
    assert {"IntDiv", "Mod", "Maximum", "Minimum", "Pow"} <= scalar_ops(f)


# ---------------------------------------------------------------------------------------
# Ranks, broadcasting, empty arrays

SHAPES = {
    0: [()],
    1: [(7,), (0,)],
    2: [(3, 4), (0, 4), (3, 0), (1, 1)],
    3: [(2, 3, 4), (2, 0, 4)],
    4: [(2, 1, 3, 2), (0, 2, 2, 2), (2, 3, 2, 0)],
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("rank", sorted(SHAPES))
def test_ranks_and_empty(rank, variant):
    """One function per rank, run on several shapes (empty ones too): the shapes are
    dynamic, except that `row` broadcasts along its first axis (static size 1)."""
    mode, reference = VARIANTS[variant]
    rng = np.random.default_rng(rank)
    xf = pt.tensor("xf", dtype="float64", shape=(None,) * rank)
    row = pt.tensor("row", dtype="float32", shape=(1,) * min(rank, 1) + (None,) * max(rank - 1, 0))
    xi = pt.tensor("xi", dtype="int32", shape=(None,) * rank)
    b = pt.tensor("b", dtype="bool", shape=(None,) * rank)
    out = {
        "xf+row": xf + row,
        "expression": pt.exp(-abs(xf)) * row - pt.sqrt(row * row) / (1 + xf**2),
        "switch": pt.switch(b, xi, row),
        "int consts": (xi // 3) % 5 + 2 * xi,
        "cmp": (xi < xf) | b,
        "cast": pt.cast(row, "bool"),
        "max": pt.maximum(xi, -7),
        "neg": pt.neg(row),
    }
    f, ref = compile_both([xf, row, xi, b], list(out.values()), mode=mode, reference=reference)
    for shape in SHAPES[rank]:
        row_shape = (1,) * min(rank, 1) + shape[1:]
        values = [
            rng.standard_normal(shape),
            rng.standard_normal(row_shape).astype("float32"),
            rng.integers(-100, 100, shape).astype("int32"),
            rng.random(shape) < 0.5,
        ]
        for name, g, w in zip(out, f(*values), ref(*values)):
            assert_same(g, w, err_msg=f"{name} at {shape}")


# ---------------------------------------------------------------------------------------
# Composite: deeper fused expressions


def test_composite_expressions():
    """Fusion makes one Composite with several outputs of several ops each, sharing
    intermediate results, holding constants and mixing dtypes inside."""
    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float32")
    i = pt.vector("i", dtype="int16")
    u = pt.vector("u", dtype="uint8")
    b = pt.vector("b", dtype="bool")
    shared = (x + y) * pt.exp(-x)
    outs = [
        shared / (1 + y**2),
        pt.switch(x > 0, pt.log(x), x // 3) - shared,
        (i * u + 7) % 13 - (i // 4),
        pt.cast(pt.maximum(i, u) ^ 0x55, "uint16") | pt.cast(~b, "uint16"),
        pt.switch(b & (i > 0), pt.sqr(i - u), -abs(i)),
        pt.minimum(x, y) * 2.5 + pt.sqrt(abs(y)),
    ]
    rng = np.random.default_rng(11)
    n = 300
    values = [
        np.concatenate([edges("float64"), rng.standard_normal(n) * 10]),
        np.concatenate([np.resize(edges("float32"), 25), rng.standard_normal(n).astype("float32")]),
        np.concatenate([np.resize(edges("int16"), 25), rng.integers(-3000, 3000, n)]).astype("int16"),
        np.concatenate([np.resize(edges("uint8"), 25), rng.integers(0, 256, n)]).astype("uint8"),
        np.concatenate([np.resize([False, True], 25), rng.random(n) < 0.5]),
    ]
    f = check([x, y, i, u, b], outs, values)
    composites = [
        node for node in f.maker.fgraph.toposort() if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, ps.Composite)
    ]
    assert composites and max(len(node.outputs) for node in composites) >= 2
    assert max(len(node.op.scalar_op.fgraph.apply_nodes) for node in composites) >= 10


def test_composite_with_many_inputs():
    # More operands than an IREE dispatch takes (32 bindings): pytensor_mlir.fusion splits
    # the Composite (tests/test_fusion.py has the rest).
    xs = [pt.vector(f"x{i}") for i in range(33)]
    out = xs[0]
    for i, x in enumerate(xs[1:]):
        out = out * x + float(i)
    check(xs, [out], [np.full(3, 1.0 + i / 100) for i in range(33)])


# ---------------------------------------------------------------------------------------
# Run-time errors


@pytest.mark.parametrize("variant", VARIANTS)
def test_integer_division_by_zero(variant):
    """Integer `//` and `%` by zero raise ZeroDivisionError, as in C; one function holds a
    `//` and a `%` of several dtypes, and each call puts one zero in one divisor."""
    mode, reference = VARIANTS[variant]
    dtypes = ["bool", "int8", "uint16", "int32", "int64", "uint64"]
    inputs, outputs, nz = [], [], []
    for dt in dtypes:
        x, dx, mx = (pt.vector(f"{n}_{dt}", dtype=dt) for n in ("x", "div", "mod"))
        inputs += [x, dx, mx]
        outputs += [x // dx, x % mx]
        if dt == "int32" and variant == "fused":
            # Enough outputs of one Composite that it is split in several (past IREE's
            # bindings per dispatch, see pytensor_mlir.fusion): every part's error flags
            # still come back.
            outputs += [x // dx + k for k in range(1, 27)]
        x_values = np.array([7, 0, 5, 1, 2], dtype=dt) if dt != "bool" else np.array([1, 0, 1, 1, 0], dtype=bool)
        divisors = np.array([3, 1, 1, 2, 2], dtype=dt) if dt != "bool" else np.ones(5, dtype=bool)
        nz += [x_values, divisors, divisors]
    f, ref = compile_both(inputs, outputs, mode=mode, reference=reference)
    if variant == "fused":
        sizes = [len(n.outputs) for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise)]
        assert sum(sizes) > 25 and max(sizes) < 25
    # Without zeros, both compute (and agree).
    for k, (g, w) in enumerate(zip(f(*nz), ref(*nz))):
        assert_same(g, w, err_msg=f"output {k}")
    for k in range(len(inputs)):
        if k % 3 == 0:
            continue
        values = [v.copy() for v in nz]
        values[k][2] = 0  # one zero in one divisor
        got, want = raises_like(f, ref, values)
        assert isinstance(got, ZeroDivisionError), (inputs[k].name, got)
    # Empty arrays hold no zero: nothing raises.
    empty = [v[:0] for v in nz]
    for g, w in zip(f(*empty), ref(*empty)):
        assert_same(g, w)


def test_float_division_by_zero_does_not_raise():
    """Float `//`, `%` and `/` by zero give inf and nan (no error), in Elemwise and Composite."""
    x, y = pt.vector("x"), pt.vector("y")
    xv = np.array([1.0, -1.0, 0.0, -0.0, np.inf, np.nan, 5.5])
    yv = np.array([0.0, -0.0, 0.0, -0.0, 0.0, 0.0, -0.0])
    for mode, reference in VARIANTS.values():
        check([x, y], [x // y, x % y, x / y], [xv, yv], mode=mode, reference=reference)
