"""The functions whose accuracy `benchmarks/accuracy.py` reports and the accuracy tests check.

One `Case` per function: its PyTensor graph, its exact value as an mpmath function (real
valued: nan wherever the function is undefined), and its domain as pieces to sample
points from. A family adds rows by appending to `CASES`; `points()` turns a case into
sample points for a dtype (random points from each piece, the dtype's edge values, and
the case's own edges). A function of two arguments (arctan2) has `arity=2`: its points
are an array of shape (2, n), and its edges pairs.
"""

import functools
from dataclasses import dataclass, field
from typing import Callable

import mpmath
import numpy as np
import pytensor.tensor as pt


@dataclass(frozen=True)
class Piece:
    """Where to draw points: `kind` "uniform" (in [lo, hi]) or "log" (magnitudes
    log-uniform in [lo, hi] with `sign` +1, -1 or 0 for both signs), shifted by
    `center` (e.g. 1 + tiny offsets). `only` limits the piece to one dtype. Bounds beyond a
    dtype's range are clamped to it."""

    kind: str
    lo: float
    hi: float
    sign: int = 0
    center: float = 0.0
    only: str | None = None


def uniform(lo, hi, only=None):
    return Piece("uniform", lo, hi, only=only)


def log(lo, hi, sign=0, center=0.0, only=None):
    return Piece("log", lo, hi, sign, center, only)


@dataclass(frozen=True)
class Case:
    name: str
    pytensor: Callable  # tensor -> tensor
    mpmath: Callable  # mpf -> mpf (nan where undefined)
    domain: tuple  # of Piece
    edges: tuple = field(default=())  # extra points for this function (poles, cut points)
    # {dtype: B}: the accuracy goal covers |x| <= B only (the trigonometric functions'
    # argument reduction); beyond it results need only be finite and in range.
    bound: dict = field(default_factory=dict)
    arity: int = 1
    # Points left out (compared as bits, so -0.0 drops only -0.0): where the exact value's
    # sign cannot be told from an mpf, as gamma(-0.0) = -inf; tests check those bit for bit.
    drop: tuple = field(default=())
    # (dtype, n, rng) -> array (arity, n): the points of a function whose arguments are
    # not independent (betainc's x in [0, 1], often near the mean a / (a + b)).
    sampler: Callable | None = None
    # (*args as float64 arrays) -> array: errors in ULPs of max(|exact|, floor) instead of
    # |exact|, an absolute error where a function oscillates (jv near its zeros).
    floor: Callable | None = None


def within_bound(case, dtype, values):
    """A mask of the points (of `points()`) the accuracy goal covers: all but finite
    arguments beyond the case's bound for `dtype`."""
    values = np.asarray(values)
    keep = np.ones(values.shape[-1], dtype=bool)
    b = case.bound.get(np.dtype(dtype).name)
    if b is not None:
        v = values.astype(np.float64)
        with np.errstate(invalid="ignore"):
            beyond = np.isfinite(v) & (np.abs(v) > b)
        keep &= ~(beyond if beyond.ndim == 1 else beyond.any(axis=0))
    return keep


def real(fn):
    """`fn` as a real function: nan where mpmath gives a complex value or raises."""

    def wrapped(*args):
        try:
            r = fn(*args)
        except (ValueError, ZeroDivisionError):
            return mpmath.mpf("nan")
        if isinstance(r, mpmath.mpc):
            return r.real if r.imag == 0 else mpmath.mpf("nan")
        return r

    return wrapped


def _log1mexp(x):
    # log1p(-e^x) where e^x is small, log(-expm1(x)) where x is: neither rounds 1 - e^x
    # at the working precision (x = -1e-300 needs it to a thousand digits otherwise).
    if x > 0:
        return mpmath.mpf("nan")
    if x < -0.5:
        return mpmath.log1p(-mpmath.exp(x))
    return mpmath.log(-mpmath.expm1(x))


def _softplus(x):
    return x + mpmath.log1p(mpmath.exp(-x)) if x > 0 else mpmath.log1p(mpmath.exp(x))


def _sigmoid(x):
    return 1 / (1 + mpmath.exp(-x))


def _atan2(y, x):
    # nan with nan (mpmath: atan2(inf, nan) is pi/2); C99 where both are infinite
    # (mpmath: nan): an odd multiple of pi/4.
    if mpmath.isnan(y) or mpmath.isnan(x):
        return mpmath.mpf("nan")
    if mpmath.isinf(y) and mpmath.isinf(x):
        return mpmath.sign(y) * (mpmath.pi / 4 if x > 0 else 3 * mpmath.pi / 4)
    return mpmath.atan2(y, x)


def _multiples(step, near, count=4):
    """Floats at and next to k * step for a few integers k near `near` / step (the
    arguments closest to the zeros and poles of sin, cos, tan): in float64, and rounded
    once more to float32 where the float64 value is below 1e6."""
    k0 = round(near / step)
    out = []
    for k in range(k0 - count, k0 + 1):
        v = float(mpmath.mpf(k) * step)
        out += [v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf), -v]
        if abs(v) < 1e6:
            w = float(np.float32(v))
            out += [w, float(np.nextafter(np.float32(w), np.float32(np.inf)))]
    return tuple(out)


# Trigonometric edges: multiples of pi/2 and pi/4 near 1, 1e5 and 1e15, and the
# hardest double to reduce below 2^53 that we know of plus a few round huge numbers (past
# the bound, which the accuracy goal leaves out).
_TRIG_EDGES = (
    _multiples(mpmath.pi / 2, 1e15) + _multiples(mpmath.pi / 4, 1e15) + _multiples(mpmath.pi / 2, 1e5)
    + _multiples(mpmath.pi / 4, 1e5) + _multiples(mpmath.pi / 2, 10.0) + _multiples(mpmath.pi / 4, 3.0)
    + (1e15, -1e15, 1e5, 1e16, 1e22, 1e300, 6381956970095103.0 * 2.0**797)
)  # fmt: skip
_TRIG_BOUND = {"float64": 1e15, "float32": 1e5}
_TRIG_DOMAIN = (log(1e-320, 1e15, only="float64"), log(1e-45, 1e5, only="float32"), uniform(-10, 10),
                uniform(-1e5, 1e5, only="float32"))  # fmt: skip
# -0.0 is left out (mpmath has no signed zeros; the C backend tests cover it).
_ATAN2_SPECIALS = (0.0, 1.0, -1.0, 5e-324, -5e-324, 1e-310, 1e308, -1e308, np.inf, -np.inf, np.nan, 2.0, -3.0)
_ATAN2_EDGES = tuple((a, b) for a in _ATAN2_SPECIALS for b in _ATAN2_SPECIALS)
def _is_pole(x):
    """x is 0, a negative integer or -inf: a pole of the gamma family."""
    return x <= 0 and (mpmath.isinf(x) or x == mpmath.floor(x))


def _erf(x):
    # mpmath's erf and erfc fail past about 1e150 (their series test overflows a float).
    return mpmath.sign(x) if abs(x) > 1e4 else mpmath.erf(x)


def _erfc(x):
    if abs(x) > 1e4:
        return mpmath.mpf(0) if x > 0 else mpmath.mpf(2)
    return mpmath.erfc(x)


def _erfcx(x):
    if x > 1e8:  # the asymptotic series, without exp(x^2) of a huge x
        return 1 / (x * mpmath.sqrt(mpmath.pi)) * (1 - 1 / (2 * x * x) + 3 / (4 * x**4))
    if x < -1e4:
        return mpmath.inf
    return mpmath.exp(x * x) * mpmath.erfc(x)


def _erfcinv(q):
    """erfcinv(q), by Newton's method on log erfc below 1/2 (erfinv(1 - q) would round
    1 - q at the working precision for tiny q)."""
    if not 0 <= q <= 2:
        return mpmath.mpf("nan")
    if q >= 0.5:
        return mpmath.erfinv(1 - q)  # exact: 1 - q has fewer bits than the precision
    if q == 0:
        return mpmath.inf
    log_q = mpmath.log(q)
    x = mpmath.sqrt(-log_q)
    for _ in range(200):
        step = (mpmath.log(mpmath.erfc(x)) - log_q) / (-2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x * x) / mpmath.erfc(x))
        x -= step
        if abs(step) < mpmath.mpf(2) ** (-mpmath.mp.prec + 8) * x:
            break
    return x


def _gammaln(x):
    # +inf at the poles and -inf, as C's lgamma.
    if mpmath.isinf(x) or _is_pole(x):
        return mpmath.inf
    return mpmath.loggamma(x).real


def _gamma(x):
    # nan at the negative integers and -inf, as C's tgamma (+-0 give +-inf: dropped here).
    if _is_pole(x):
        return mpmath.mpf("nan") if x != 0 else mpmath.inf
    if mpmath.isinf(x):
        return mpmath.inf
    return mpmath.gamma(x)


def _psi(x):
    # +inf at the poles and -inf, as PyTensor's C `_psi`.
    if _is_pole(x):
        return mpmath.inf
    return mpmath.digamma(x)


def _trigamma(x):
    # +inf at the poles and -inf, as scipy's polygamma(1, x).
    if _is_pole(x):
        return mpmath.inf
    if mpmath.isinf(x):
        return mpmath.mpf(0)
    return mpmath.psi(1, x)


def _besseli(n):
    def f(x):
        # Past 1e4 I0 and I1 overflow every dtype (mpmath would still compute them).
        if abs(x) > 1e4:
            return mpmath.inf if n == 0 or x > 0 else -mpmath.inf
        return mpmath.besseli(n, x)

    return f


def _besselj(n):
    def f(x):
        if mpmath.isinf(x):
            return mpmath.mpf(0)
        return mpmath.besselj(n, x)

    return f


# The first zeros of J0 and J1 (as float64) and X = 5, where bessel.rs switches formulas.
_J_EDGES = (2.404825557695773, 5.520078110286311, 8.653727912911013, 11.791534439014281, 3.8317059702075125,
            7.015586669815619, 10.173468135062722, 5.0, 4.999999999999999, 5.000000000000001, 1e15, -1e15)  # fmt: skip
_J_DOMAIN = (log(1e-320, 1e15, only="float64"), log(1e-45, 1e5, only="float32"), uniform(-30, 30), uniform(-1000, 1000))


def _polygamma(n):
    """polygamma(n, x) with scipy's special values: (-1)^(n+1) inf at the poles and -inf,
    0 at inf (n >= 2)."""

    def fn(x):
        sign = -1 if n % 2 == 0 else 1
        if _is_pole(x):
            return sign * mpmath.inf
        if mpmath.isinf(x):
            return mpmath.mpf(0)
        return mpmath.psi(n, x)

    return fn


def _incomplete_gamma_special(a, x, unregularized):
    """The special values of the incomplete gamma functions (lower_P, upper_Q) as PyTensor's
    C code gives them (nan for a <= 0, x < 0 (x <= 0 unregularized), nan inputs), with the
    limits at infinite arguments; None where the function is regular."""
    nan = mpmath.mpf("nan")
    if mpmath.isnan(a) or mpmath.isnan(x) or a <= 0 or x < 0 or (unregularized and x == 0):
        return nan, nan
    if mpmath.isinf(a) and mpmath.isinf(x):
        return nan, nan
    if unregularized:
        if mpmath.isinf(x):
            return mpmath.gamma(a), mpmath.mpf(0)
        if mpmath.isinf(a):
            # The integral of t^(a-1) e^-t over [0, x] tends to 0 up to x = 1, to inf past it.
            return (mpmath.mpf(0) if x <= 1 else mpmath.inf), mpmath.inf
        return None
    if x == 0 or mpmath.isinf(a):
        return mpmath.mpf(0), mpmath.mpf(1)
    if mpmath.isinf(x):
        return mpmath.mpf(1), mpmath.mpf(0)
    return None


def _gammainc(a, x):
    s = _incomplete_gamma_special(a, x, False)
    if s is not None:
        return s[0]
    if x < a / 2 or a < 1e4:
        return mpmath.gammainc(a, 0, x, regularized=True)
    with mpmath.extraprec(256):  # mpmath's lower series is slow there; 1 - Q is exact enough
        return 1 - mpmath.gammainc(a, x, mpmath.inf, regularized=True)


def _gammaincc(a, x):
    s = _incomplete_gamma_special(a, x, False)
    # Gamma(a, x) / Gamma(a): mpmath's regularized form is slow for tiny a.
    return s[1] if s is not None else mpmath.gammainc(a, x, mpmath.inf) / mpmath.gamma(a)


def _gammal(a, x):
    s = _incomplete_gamma_special(a, x, True)
    return s[0] if s is not None else mpmath.gammainc(a, 0, x)


def _gammau(a, x):
    s = _incomplete_gamma_special(a, x, True)
    return s[1] if s is not None else mpmath.gammainc(a, x, mpmath.inf)


# Incomplete gamma: (a, x) pairs, each argument drawn from the domain independently (tails
# included), plus special pairs. The goal covers arguments up to 1e7: past about 1e8 with
# x near a the series and continued fraction do not converge within their cap and the
# result is nan (incomplete_gamma.rs).
_IGAMMA_DOMAIN = (log(1e-3, 1e4, +1), uniform(0, 40), log(1e-300, 1e-3, +1))
_IGAMMA_EDGES = ((1.0, 1.0), (0.5, 0.0), (1.0, np.inf), (np.inf, 1.0), (np.inf, np.inf), (0.0, 1.0), (-1.0, 1.0),
                 (1.0, -1.0), (1e-300, 1.0), (5.0, 5.0), (30.0, 29.0), (1000.0, 1000.0), (1.0, 1.1), (2.0, 1.1),
                 (0.1, 1.1), (0.1, 1.1000001), (10.0, 9.99), (9.99, 10.0), (1e4, 1.01e4), (np.nan, 1.0), (1.0, np.nan))
_IGAMMA_BOUND = {"float64": 1e7, "float32": 1e7}

HUGE = 1e308  # clamped to each dtype's largest finite value
PSI_ROOT = 1.4616321449683622

CASES = [
    # The exponential and logarithm family (crates/core/src/lower/scalar_math/exp_log.rs).
    Case("exp", pt.exp, real(mpmath.exp), (log(1e-320, 750), uniform(-2, 2), uniform(-750, 720), uniform(-110, 95, only="float32")),
         edges=(709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411, -745.1332191019412,
                88.72283, 88.72284, -87.33655, -103.97208, 1e-300)),
    Case("log", pt.log, real(mpmath.log), (log(1e-320, HUGE, +1), log(1e-18, 0.5, 0, center=1.0), uniform(0, 4)),
         edges=(1.0, 2.0, 0.5, 2.718281828459045, 0.7071067811865476, 1.4142135623730951, -1.0)),
    Case("sqrt", pt.sqrt, real(mpmath.sqrt), (log(1e-320, HUGE, +1), uniform(0, 4)), edges=(4.0, 2.0, -1.0, 1e-310)),
    Case("log1p", pt.log1p, real(mpmath.log1p),
         (log(1e-320, HUGE, +1), log(1e-320, 1, -1), log(1e-18, 1, +1, center=-1.0), uniform(-1, 4)),
         edges=(-1.0, -0.5, 1.0)),
    Case("expm1", pt.expm1, real(mpmath.expm1), (log(1e-320, 720), uniform(-2, 2), uniform(-800, 800)), edges=(709.78, 88.72, -745.2)),
    Case("log2", pt.log2, real(lambda x: mpmath.log(x, 2)), (log(1e-320, HUGE, +1), log(1e-18, 0.5, 0, center=1.0), uniform(0, 4)),
         edges=(1.0, 2.0, 0.5, 1024.0, -1.0)),
    Case("log10", pt.log10, real(mpmath.log10), (log(1e-320, HUGE, +1), log(1e-18, 0.5, 0, center=1.0), uniform(0, 20)),
         edges=(1.0, 10.0, 1000.0, 1e22, 0.1, -1.0)),
    Case("exp2", pt.exp2, real(lambda x: mpmath.power(2, x)), (log(1e-320, 1100), uniform(-1100, 1100), uniform(-160, 160, only="float32")),
         edges=(1023.9999, -1074.0, -1074.5, 127.99, -149.0, -149.5, 3.0, 0.5)),
    Case("sinh", pt.sinh, real(mpmath.sinh), (log(1e-320, 720), uniform(-3, 3), uniform(-100, 100, only="float32")),
         edges=(710.47, 89.41, 22.0, 12.0, 1.0)),
    Case("cosh", pt.cosh, real(mpmath.cosh), (log(1e-320, 720), uniform(-3, 3), uniform(-100, 100, only="float32")),
         edges=(710.47, 89.41, 22.0, 12.0, 0.3465)),
    Case("tanh", pt.tanh, real(mpmath.tanh), (log(1e-320, 40), uniform(-3, 3)), edges=(22.0, 10.0, 19.06, 9.01, 1.0)),
    Case("arcsinh", pt.arcsinh, real(mpmath.asinh), (log(1e-320, HUGE), uniform(-4, 4)), edges=(2.0, 268435456.0, 4096.0)),
    Case("arccosh", pt.arccosh, real(mpmath.acosh), (log(1e-18, HUGE, +1, center=1.0), uniform(1, 4), log(1e-3, 1, -1, center=1.0)),
         edges=(1.0, 2.0, 268435456.0, 4096.0, 0.0)),
    Case("arctanh", pt.arctanh, real(mpmath.atanh), (log(1e-320, 1), log(1e-18, 1, -1, center=1.0), log(1e-18, 1, +1, center=-1.0), uniform(-1, 1)),
         edges=(0.5, -0.5, 1.0, -1.0, 1.5)),
    Case("sigmoid", pt.sigmoid, real(_sigmoid), (log(1e-320, 800), uniform(-40, 40), uniform(-110, 20, only="float32")), edges=(-745.0, -103.0, 36.0, 17.0)),
    Case("softplus", pt.softplus, real(_softplus), (log(1e-320, 800), uniform(-40, 40), uniform(-110, 20, only="float32")),
         edges=(-37.0, 18.0, 33.3, -745.0, -103.0)),
    Case("log1mexp", pt.log1mexp, real(_log1mexp), (log(1e-320, 800, -1), uniform(-3, 0)), edges=(-0.6931471805599453, -1e-300, 1.0)),
    # The trigonometric family (crates/core/src/lower/scalar_math/trig.rs).
    Case("sin", pt.sin, real(mpmath.sin), _TRIG_DOMAIN, edges=_TRIG_EDGES, bound=_TRIG_BOUND),
    Case("cos", pt.cos, real(mpmath.cos), _TRIG_DOMAIN, edges=_TRIG_EDGES, bound=_TRIG_BOUND),
    Case("tan", pt.tan, real(mpmath.tan), _TRIG_DOMAIN, edges=_TRIG_EDGES, bound=_TRIG_BOUND),
    Case("arcsin", pt.arcsin, real(mpmath.asin), (log(1e-320, 1), log(1e-18, 1, -1, center=1.0), log(1e-18, 1, +1, center=-1.0), uniform(-1, 1)),
         edges=(1.0, -1.0, 0.5, -0.5, 0.7071067811865476, 0.9999999999999999, 1.0000000000000002, -1.0000001, 2.0)),
    Case("arccos", pt.arccos, real(mpmath.acos), (log(1e-320, 1), log(1e-18, 1, -1, center=1.0), log(1e-18, 1, +1, center=-1.0), uniform(-1, 1)),
         edges=(1.0, -1.0, 0.5, -0.5, 0.7071067811865476, 0.9999999999999999, -0.9999999999999999, 1.0000000000000002, -2.0)),
    Case("arctan", pt.arctan, real(mpmath.atan), (log(1e-320, HUGE), uniform(-4, 4)),
         edges=(0.41421356237309503, -0.41421356237309503, 2.414213562373095, 1.0, -1.0, 1e16, 1e-8)),
    Case("arctan2", pt.arctan2, real(_atan2), (log(1e-320, HUGE), uniform(-4, 4), log(1e-3, 1e3)),
         edges=_ATAN2_EDGES, arity=2),
    # Special functions (crates/core/src/lower/scalar_math/erf.rs and gamma.rs).
    Case("erf", pt.erf, real(_erf), (log(1e-320, 10), uniform(-6, 6)), edges=(0.5, -0.5, 0.49999999999999994, 5.9, 6.0, 3.9)),
    Case("erfc", pt.erfc, real(_erfc), (log(1e-320, 30), uniform(-6, 28), uniform(26, 27.3), uniform(8, 10.5, only="float32")),
         edges=(0.5, -0.5, 0.49999999999999994, 26.55, 27.2, 27.3, 10.05, -6.0)),
    Case("erfcx", pt.erfcx, real(_erfcx), (log(1e-320, HUGE, +1), uniform(-27, 40), log(1e-3, 30, -1), uniform(-9.5, 0, only="float32")),
         edges=(-26.6, -26.62, -26.64, -27.0, -9.38, -9.4, 1e8, 2e8, 4.0, 0.5)),
    Case("erfinv", pt.erfinv, real(mpmath.erfinv), (uniform(-1, 1), log(1e-320, 1), log(1e-17, 0.5, -1, center=1.0), log(1e-17, 0.5, +1, center=-1.0)),
         edges=(0.5, -0.5, 0.5000000000000001, 1.0, -1.0, 1.5, 0.9999999999999999)),
    Case("erfcinv", pt.erfcinv, real(_erfcinv), (uniform(0, 2), log(1e-320, 0.5, +1), log(1e-17, 0.5, -1, center=2.0), log(1e-17, 0.5, 0, center=1.0)),
         edges=(0.5, 1.5, 1.0, 0.0, 2.0, 2.5, -1.0, 1e-300, 5e-324, 1.9999999999999998)),
    Case("gammaln", pt.gammaln, real(_gammaln),
         (log(1e-320, HUGE, +1), uniform(0, 12), uniform(-30, 0), log(1e-18, 0.5, 0, center=1.0), log(1e-18, 0.5, 0, center=2.0)),
         edges=(1.0, 2.0, 1.5, 2.5, 10.0, -1.0, -2.5, 2.5e305, 2.6e305, 4e36, 1e-300)),
    Case("gamma", pt.gamma, real(_gamma), (log(1e-320, 200, +1), uniform(0, 172), uniform(-190, 0), uniform(-5, 5), uniform(-40, 36, only="float32")),
         edges=(171.62, 171.7, -170.5, -171.5, -184.3, -0.5, 1.0, 2.0, 35.04, 35.1, -3e-39), drop=(-0.0,)),
    Case("psi", pt.psi, real(_psi),
         (log(1e-320, HUGE, +1), uniform(0, 12), uniform(-20, 0), log(1e-18, 0.3, 0, center=PSI_ROOT)),
         edges=(PSI_ROOT, 1.0, 2.0, 3.0, 10.0, -0.5, -1.5, 1e-300, -1e-300)),
    Case("tri_gamma", pt.tri_gamma, real(_trigamma), (log(1e-320, HUGE, +1), uniform(0, 12), uniform(-20, 0)),
         edges=(1.0, 2.0, 10.0, -0.5, -1.5, 1e-160, -1e-160)),
    # Bessel functions (crates/core/src/lower/scalar_math/bessel.rs).
    Case("i0", pt.i0, real(_besseli(0)), (log(1e-320, 800), uniform(-10, 10), uniform(-720, 720), uniform(-95, 95, only="float32")),
         edges=(7.75, 7.749999999999999, 700.0, 700.0000000000001, 713.98, 714.0, 88.0, 91.9, 92.0)),
    Case("i1", pt.i1, real(_besseli(1)), (log(1e-320, 800), uniform(-10, 10), uniform(-720, 720), uniform(-95, 95, only="float32")),
         edges=(7.75, 7.749999999999999, 700.0, 700.0000000000001, 713.98, 714.0, -714.0, 88.0, 91.9, 92.0)),
    # Past 1e15 (1e5 in float32) the angle is not reduced accurately (as sin and cos).
    Case("j0", pt.j0, real(_besselj(0)), _J_DOMAIN, edges=_J_EDGES, bound=_TRIG_BOUND),
    Case("j1", pt.j1, real(_besselj(1)), _J_DOMAIN, edges=_J_EDGES, bound=_TRIG_BOUND),
    # polygamma of orders 2 and 5 (crates/core/src/lower/scalar_math/polygamma.rs).
    Case("polygamma2", lambda x: pt.polygamma(2, x), real(_polygamma(2)), (log(1e-320, HUGE, +1), uniform(0, 30), uniform(-10, 0)),
         edges=(1.0, 2.0, 24.0, 25.0, -0.5, -1.5, 1e-100, -1e-100)),
    Case("polygamma5", lambda x: pt.polygamma(5, x), real(_polygamma(5)), (log(1e-320, HUGE, +1), uniform(0, 30), uniform(-10, 0)),
         edges=(1.0, 2.0, 27.0, 28.0, -0.5, -1.5, 1e-60, -1e-60)),
    # Incomplete gamma (crates/core/src/lower/scalar_math/incomplete_gamma.rs).
    Case("gammainc", pt.gammainc, real(_gammainc), _IGAMMA_DOMAIN, edges=_IGAMMA_EDGES, bound=_IGAMMA_BOUND, arity=2),
    Case("gammaincc", pt.gammaincc, real(_gammaincc), _IGAMMA_DOMAIN, edges=_IGAMMA_EDGES, bound=_IGAMMA_BOUND, arity=2),
    Case("gammal", pt.gammal, real(_gammal), _IGAMMA_DOMAIN, edges=_IGAMMA_EDGES, bound=_IGAMMA_BOUND, arity=2),
    Case("gammau", pt.gammau, real(_gammau), _IGAMMA_DOMAIN, edges=_IGAMMA_EDGES, bound=_IGAMMA_BOUND, arity=2),
]  # fmt: skip



def _newton_in_log(fn, log_t, u, lo, hi):
    """The root of g(u) = log_t in (lo, hi) at the working precision, where fn(u) gives
    (g(u), g'(u)) for an increasing g: Newton's method from `u` (a float's estimate),
    bisecting whenever a step leaves the bracket; it stops at a relative step of 2^-100
    (the comparisons need 60 bits; mpmath's functions are not exact to the last of 256)."""
    for _ in range(300):
        v, d = fn(u)
        if v == log_t:
            return u
        if v > log_t:
            hi = u
        else:
            lo = u
        nxt = u - (v - log_t) / d if mpmath.isfinite(v) and mpmath.isfinite(d) and d > 0 else None
        if nxt is None or not lo < nxt < hi:
            nxt = (lo + hi) / 2
        if abs(nxt - u) <= max(abs(u), 1) * mpmath.mpf(2) ** -100:
            return nxt
        u = nxt
    return mpmath.mpf("nan")


def _gammaincinv_both(a, y, upper):
    """x with P(a, x) = y (`upper`: Q(a, x) = y), by Newton on the log of the smaller tail
    against u = log x at the working precision, from scipy's float64 estimate (a start
    only), with scipy's special values (nan for a < 0, nan inputs, y outside [0, 1]; the
    ends 0 and inf)."""
    import scipy.special as sp

    if mpmath.isnan(a) or mpmath.isnan(y) or a < 0 or not 0 <= y <= 1:
        return mpmath.mpf("nan")
    if y == 0 or y == 1:
        return mpmath.inf if (y == 1) != upper else mpmath.mpf(0)
    if a == 0 or mpmath.isinf(a):
        return mpmath.mpf("nan")
    p, q = (1 - y, y) if upper else (y, 1 - y)
    use_q = q < p
    t = q if use_q else p
    start = float((sp.gammainccinv if upper else sp.gammaincinv)(float(a), float(y)))
    if np.isfinite(start) and start > 0:
        u0 = mpmath.log(start)
    else:  # the lower tail's leading term, P ~ x^a / Gamma(1 + a)
        u0 = (mpmath.log(p) + mpmath.loggamma(1 + a)) / a
    log_gamma_a = mpmath.loggamma(a)

    def fn(u):
        # (log P, x P'/P), or (-log Q, -x Q'/Q): increasing in u = log x.
        x = mpmath.exp(u)
        if use_q:
            r = mpmath.gammainc(a, x, mpmath.inf, regularized=True)
        else:
            r = mpmath.gammainc(a, 0, x, regularized=True)
        if not r > 0:
            return (mpmath.inf if use_q else -mpmath.inf), mpmath.nan
        x_density = mpmath.exp(a * u - x - log_gamma_a)
        return (-mpmath.log(r) if use_q else mpmath.log(r)), x_density / r

    log_t = -mpmath.log(t) if use_q else mpmath.log(t)
    return mpmath.exp(_newton_in_log(fn, log_t, u0, mpmath.mpf(-1e6), mpmath.mpf(1000)))


def _gammaincinv(a, p):
    return _gammaincinv_both(a, p, False)


def _gammainccinv(a, q):
    return _gammaincinv_both(a, q, True)


def _gammaincinv_points(dtype, n, rng):
    """(a, p): a log-uniform in [1e-2, 1e3], p uniform in [0, 1], log-uniform down to
    1e-300 (1e-38 in float32) and 1 minus that, half each."""
    tiny = 1e-300 if np.dtype(dtype) == np.float64 else 1e-38
    k = n // 4
    a = 10.0 ** rng.uniform(-2, 3, n)
    p = rng.uniform(0, 1, n)
    p[k : 2 * k] = 10.0 ** rng.uniform(np.log10(tiny), 0, k)
    p[2 * k : 3 * k] = 1 - 10.0 ** rng.uniform(-16 if np.dtype(dtype) == np.float64 else -7, 0, k)
    return np.stack([a, p])


_GAMMAINCINV_EDGES = (1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.5, 0.5, 1e-3, 0.5, 5.0, 1e-300, 5.0, 0.999999, 100.0, 0.5,
                      0.0, 0.5, -1.0, 0.5, 1.0, -0.1, 1.0, 1.1, np.nan, 0.5, 1.0, np.nan, np.inf, 0.5, 1e3, 1e-10)
CASES += [
    Case("gammaincinv", pt.gammaincinv, real(_gammaincinv), (), arity=2, sampler=_gammaincinv_points, edges=_GAMMAINCINV_EDGES),
    Case("gammainccinv", pt.gammainccinv, real(_gammainccinv), (), arity=2, sampler=_gammaincinv_points, edges=_GAMMAINCINV_EDGES),
]  # fmt: skip

def _betainc(a, b, x):
    if not (a > 0 and b > 0 and 0 <= x <= 1) or mpmath.isinf(a) or mpmath.isinf(b):
        return mpmath.mpf("nan")
    try:
        return mpmath.betainc(a, b, 0, x, regularized=True)
    except ValueError:
        # Far out in the upper tail (e.g. (1851, 2527, 0.798)) mpmath's series gives up
        # ("hypsum() failed to converge"); the complement converges there.
        return 1 - mpmath.betainc(b, a, 0, 1 - mpmath.mpf(x), regularized=True)


def _betainc_points(dtype, n, rng):
    """(a, b, x): a and b log-uniform in [1e-3, 3e3] (a quarter of them integers, as in the
    Binomial CDF), x uniform in [0, 1], near the mean a / (a + b) (where the continued
    fraction is slowest and swaps) or log-uniform down to 1e-30."""
    k = n // 4
    # (mpmath's betainc gives up, nan, at a = b = 1e4.)
    a = 10.0 ** rng.uniform(-3, 3.5, n)
    b = 10.0 ** rng.uniform(-3, 3.5, n)
    a[:k] = np.ceil(a[:k])
    b[:k] = np.ceil(b[:k])
    x = rng.uniform(0, 1, n)
    mean = a / (a + b)
    x[k : 2 * k] = np.clip(mean[k : 2 * k] * (1 + rng.normal(0, 0.1, k)), 0, 1)
    x[2 * k : 3 * k] = 10.0 ** rng.uniform(-30, 0, k)
    return np.stack([a, b, x])


CASES.append(
    Case("betainc", pt.betainc, real(_betainc), (), arity=3, sampler=_betainc_points,
         edges=(1.0, 1.0, 0.5, 2.0, 3.0, 0.0, 2.0, 3.0, 1.0, 0.5, 0.5, 0.5, 1e-3, 1e-3, 0.999, 5.0, 0.5, 0.9999,
                1e3, 1e3, 0.5, 1e3, 1e3, 0.49, 3.5, 0.5, 0.875, 1e-300, 1.0, 0.5))
)  # fmt: skip


def _betaincinv(a, b, y):
    """x with I_x(a, b) = y, by Newton on log I_x(a, b) = log y against u = log x (past
    y = 1/2 with a root past 1/2 on the reflected I_z(b, a) = 1 - y, z = 1 - x) at the working precision, from
    scipy's float64 estimate (a start only); scipy's special values."""
    import scipy.special as sp

    if mpmath.isnan(a) or mpmath.isnan(b) or mpmath.isnan(y) or a <= 0 or b <= 0 or not 0 <= y <= 1:
        return mpmath.mpf("nan")
    if y == 0 or y == 1:
        return mpmath.mpf(y)
    if mpmath.isinf(a) or mpmath.isinf(b):
        return mpmath.mpf("nan") if mpmath.isinf(a) and mpmath.isinf(b) else mpmath.mpf(1 if mpmath.isinf(a) else 0)
    start = float(sp.betaincinv(float(a), float(b), float(y)))
    # Reflected only where the root is past 1/2 (by scipy's estimate): a tiny root x as
    # 1 - z needs z to more digits than the working precision has (betaincinv(0.0105, 256,
    # 0.52) = 2.19e-30 came out 0.5% off that way).
    reflect = y > 0.5 and not start < 0.5
    p, q, t = (b, a, 1 - y) if reflect else (a, b, y)
    start = 1 - start if reflect else start
    log_beta = mpmath.log(mpmath.beta(p, q))
    if 0 < start < 1:
        u0 = mpmath.log(start)
    else:  # the lower tail's leading term, I ~ x^p / (p B)
        u0 = min((mpmath.log(t) + mpmath.log(p) + log_beta) / p, mpmath.mpf(-1e-3))

    def fn(u):
        x = mpmath.exp(u)
        if not x < 1:
            return mpmath.inf, mpmath.nan
        r = mpmath.betainc(p, q, 0, x, regularized=True)
        if not r > 0:
            return -mpmath.inf, mpmath.nan
        x_density = mpmath.exp(p * u + (q - 1) * mpmath.log1p(-x) - log_beta)
        return mpmath.log(r), x_density / r

    z = mpmath.exp(_newton_in_log(fn, mpmath.log(t), u0, mpmath.mpf(-1e6), mpmath.mpf(0)))
    return 1 - z if reflect else z


def _betaincinv_points(dtype, n, rng):
    """(a, b, y): a and b log-uniform in [1e-2, 1e3] (a quarter of them integers), y uniform
    in [0, 1], log-uniform down to 1e-300 (1e-38 in float32) and 1 minus that."""
    tiny = 1e-300 if np.dtype(dtype) == np.float64 else 1e-38
    k = n // 4
    a = 10.0 ** rng.uniform(-2, 3, n)
    b = 10.0 ** rng.uniform(-2, 3, n)
    a[:k] = np.ceil(a[:k])
    b[:k] = np.ceil(b[:k])
    y = rng.uniform(0, 1, n)
    y[k : 2 * k] = 10.0 ** rng.uniform(np.log10(tiny), 0, k)
    y[2 * k : 3 * k] = 1 - 10.0 ** rng.uniform(-16 if np.dtype(dtype) == np.float64 else -7, 0, k)
    return np.stack([a, b, y])


CASES.append(
    Case("betaincinv", pt.betaincinv, real(_betaincinv), (), arity=3, sampler=_betaincinv_points,
         edges=(1.0, 1.0, 0.5, 2.0, 3.0, 0.0, 2.0, 3.0, 1.0, 0.5, 0.5, 0.5, 1e-3, 1e-3, 0.999, 5.0, 0.5, 1e-300,
                1e3, 1e3, 0.5, 1e3, 1e3, 0.49, 0.1, 100.0, 0.9999, 100.0, 0.1, 1e-10, 1.0, 1e-300, 1e-300))
)  # fmt: skip


def _owens_t(h, a):
    """Owen's T by quadrature at 30 digits of an integral with a positive integrand of
    size 1 (mpmath's error test is absolute): a <= 1 and s = a h < 1: x = a t on [0, 1];
    h >= 1: x = u / h, T = e^(-h^2/2) / (2 pi h) int_0^s e^(-u^2/2) / (1 + u^2/h^2) du
    (cut at u = 64, split where the Gaussian falls); otherwise (h < 1, a large) x = tan t,
    T = 1/(2 pi) int_0^atan(a) exp(-h^2 / (2 cos^2 t)) dt, split where the integrand falls
    near pi/2. scipy's special values (T(h, +-inf) = +-erfc(|h|/sqrt2)/4)."""
    if mpmath.isnan(h) or mpmath.isnan(a):
        return mpmath.mpf("nan")
    sign = -1 if a < 0 else 1
    h, a = abs(h), abs(a)
    with mpmath.workdps(30):
        if a == 0 or mpmath.isinf(h):
            r = mpmath.mpf(0)
        elif mpmath.isinf(a):
            r = mpmath.erfc(h / mpmath.sqrt(2)) / 4
        elif h == 0:
            r = mpmath.atan(a) / (2 * mpmath.pi)
        elif a <= 1 and h * a < 1:
            s = h * a
            g = mpmath.quad(lambda t: mpmath.exp(-((s * t) ** 2) / 2) / (1 + (a * t) ** 2), [0, 1])
            r = mpmath.exp(-h * h / 2) * a * g / (2 * mpmath.pi)
        elif h >= 1:
            top = min(h * a, 64)
            cuts = [0] + [p for p in (1, 2, 4, 8, 16, 32) if p < top] + [top]
            g = mpmath.quad(lambda u: mpmath.exp(-u * u / 2) / (1 + (u / h) ** 2), cuts)
            r = mpmath.exp(-h * h / 2) * g / (2 * mpmath.pi * h)
        else:
            top = mpmath.atan(a)
            cuts = sorted(mpmath.pi / 2 - c * h for c in (64, 16, 4, 1))
            cuts = [0] + [p for p in cuts if 0 < p < top] + [top]
            r = mpmath.quad(lambda t: mpmath.exp(-((h / mpmath.cos(t)) ** 2) / 2), cuts) / (2 * mpmath.pi)
    return sign * r


def _owens_t_points(dtype, n, rng):
    """(h, a), signs random: a quarter with h in [-6, 6] and a in [-1.5, 1.5]; a quarter with
    a h near 3 (owens_t.rs's switch between its rules), a log-uniform in [1e-2, 1e2]; half
    with |h| log-uniform up to where T underflows (40, 14 in float32) and |a| in [1e-3, 1e3]."""
    top = 40.0 if np.dtype(dtype) == np.float64 else 14.0
    k = n // 4
    h = 10.0 ** rng.uniform(-3, np.log10(top), n)
    a = 10.0 ** rng.uniform(-3, 3, n)
    h[:k] = rng.uniform(0, 6, k)
    a[:k] = rng.uniform(0, 1.5, k)
    a[k : 2 * k] = 10.0 ** rng.uniform(-2, 2, k)
    h[k : 2 * k] = 3 / a[k : 2 * k] * (1 + rng.normal(0, 0.05, k))
    h *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
    a *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return np.stack([h, a])


CASES.append(
    Case("owens_t", pt.owens_t, _owens_t, (), arity=2, sampler=_owens_t_points,
         edges=(0.0, 1.0, 1.0, 0.0, 0.0, -2.0, 1.0, 1.0, 5.0, 5.0, 3.0, 1.0, 1.0, 3.0, 3.0, 3.0, 37.0, 1.0,
                13.0, 1.0, 1.0, 1e300, 1e-300, 1e300, 2.0, 1e-300, 0.5, 1e3, 1e3, 0.5, 1e-3, 1e-3, -1.0, -2.0,
                np.inf, 1.0, -np.inf, -1.0, 1.0, np.inf, 0.0, -np.inf, 1.0, -0.0, np.nan, 1.0, 1.0, np.nan))
)  # fmt: skip
def _pow(x, y):
    """x ** y as C99's pow: 1 where y is 0 or x is 1 (nan too); a negative base to an
    integer power signed by the power's parity, to a non-integer power nan (mpmath: complex)."""
    if y == 0 or x == 1:
        return mpmath.mpf(1)
    if mpmath.isnan(x) or mpmath.isnan(y):
        return mpmath.mpf("nan")
    if x == 0:
        return mpmath.mpf(0) if y > 0 else mpmath.inf
    if x < 0:
        if mpmath.isinf(y):
            return mpmath.mpf(1) if x == -1 else mpmath.power(-x, y)
        if y != mpmath.floor(y):
            return mpmath.mpf("nan")
        r = mpmath.power(-x, y)
        return -r if y % 2 == 1 else r
    return mpmath.power(x, y)


def _pow_points(dtype, n, rng):
    """(x, y): a quarter with x log-uniform over the whole positive range and y such that
    y log x is uniform over the results' range, subnormals included (-745..709, -104..88 in
    float32); a quarter with x near 1 (1 +- 1e-18..0.5) and |y| log-uniform up to 1e5 (x ** y
    of a large power: the error is |y| times log's); a quarter negative bases with integer
    powers in [-60, 60]; a quarter both log-uniform and independent (signs random: overflow,
    underflow, nan of a negative base)."""
    f64 = np.dtype(dtype) == np.float64
    lo, hi = (1e-320, 1.7e308) if f64 else (1e-45, 3.4e38)
    top, bottom = (709.0, -745.0) if f64 else (88.0, -103.0)
    k = n // 4
    x = 10.0 ** rng.uniform(np.log10(lo), np.log10(hi), n)
    y = rng.uniform(bottom, top, n) / np.log(x)
    x[k : 2 * k] = 1 + np.where(rng.random(k) < 0.5, -1, 1) * 10.0 ** rng.uniform(-18 if f64 else -9, np.log10(0.5), k)
    y[k : 2 * k] = np.where(rng.random(k) < 0.5, -1, 1) * 10.0 ** rng.uniform(0, 5, k)
    x[2 * k : 3 * k] = -(10.0 ** rng.uniform(-5, 5, k))
    y[2 * k : 3 * k] = rng.integers(-60, 61, k)
    x[3 * k :] = np.where(rng.random(n - 3 * k) < 0.5, -1, 1) * 10.0 ** rng.uniform(-10, 10, n - 3 * k)
    y[3 * k :] = np.where(rng.random(n - 3 * k) < 0.5, -1, 1) * 10.0 ** rng.uniform(-3, 3, n - 3 * k)
    return np.stack([x, y])


CASES.append(
    Case("pow", lambda x, y: x**y, _pow, (), arity=2, sampler=_pow_points,
         edges=(0.0, 0.0, 0.0, 2.0, 0.0, -2.0, 2.0, 0.5, 2.0, -1074.0, 2.0, 1024.0, 2.0, 1023.0, -2.0, 3.0, -2.0, -3.0,
                -1.0, np.inf, 0.5, np.inf, 2.0, -np.inf, np.inf, -1.0, -np.inf, 3.0, -np.inf, 2.0, np.nan, 0.0,
                1.0, np.nan, np.nan, 1.0, -8.0, 1.0 / 3.0, 5e-324, 0.5, 5e-324, -0.5, 1e-300, 1.001, 10.0, 308.0,
                10.0, -323.0, 1.0000001, 7.1e9, 0.9999999, -7.4e9))
)  # fmt: skip


def _real_order_limit(v, x):
    """The values ive and jv share where mpmath has none (None elsewhere): nan for a nan
    argument, v = -inf, x < 0 with a non-integer v, and both infinite; 0 at x = +-inf and at
    v = +inf; at x = 0, 1 for v = 0, 0 for v > 0 or an integer v, else +-inf by the sign of
    1/Gamma(1 + v)."""
    integer = mpmath.isfinite(v) and v == mpmath.floor(v)
    both_inf = mpmath.isinf(v) and mpmath.isinf(x)
    if mpmath.isnan(v) or mpmath.isnan(x) or v == -mpmath.inf or (x < 0 and not integer) or both_inf:
        return mpmath.mpf("nan")
    if mpmath.isinf(x) or v == mpmath.inf:
        return mpmath.mpf(0)
    if x == 0:
        if v == 0:
            return mpmath.mpf(1)
        if v > 0 or integer:
            return mpmath.mpf(0)
        return mpmath.inf if int(mpmath.floor(v)) % 2 else -mpmath.inf
    return None


def _bessel_ik_debye(v, x, sign, terms=40):
    """exp(-x) I_v(x) (sign +1) or exp(x) K_v(x) (sign -1) for v >= 1000, x > 0 by Debye's
    expansions (DLMF 10.41.3, 10.41.4) at 60 digits, or None where `terms` terms do not reach
    1e-35: mpmath's besseli and besselk do not converge in reach for large v and x."""
    with mpmath.workdps(60):
        v, x = mpmath.mpf(v), mpmath.mpf(x)
        w = mpmath.sqrt(x * x + v * v)
        p = v / w
        total, last = 0, None
        for k in range(terms):
            t = sign**k * sum(mpmath.mpf(c.numerator) / c.denominator * p**j for j, c in enumerate(_debye_u(k)) if c) / v**k
            total += t
            if last is not None and abs(t) > abs(last):
                return None
            last = t
            if k > 2 and abs(t) < mpmath.mpf(10) ** -35:
                break
        else:
            return None
        e = w + v * mpmath.log(x / (v + w)) - x  # v eta - x
        if sign > 0:
            return mpmath.exp(e) / mpmath.sqrt(2 * mpmath.pi * w) * total
        return mpmath.exp(-e) * mpmath.sqrt(mpmath.pi / (2 * w)) * total


def _ive(v, x):
    """exp(-|x|) I_v(x), with the limits our Ive gives where mpmath has none: 0 at x = +-inf
    and at v = +inf (nan where both are infinite), +-inf at x = 0 for negative non-integer v
    (the sign of 1/Gamma(1 + v))."""
    limit = _real_order_limit(v, x)
    if limit is not None:
        return limit
    integer = v == mpmath.floor(v)
    if abs(v) >= 1000 and x > 0:  # I_-v = I_v + (2/pi) sin(v pi) K_v
        i = _bessel_ik_debye(abs(v), x, 1)
        k = _bessel_ik_debye(abs(v), x, -1) if v < 0 and not integer else 0
        if i is not None and k is not None:
            with mpmath.workdps(60):
                return i + 2 / mpmath.pi * mpmath.sin(-v * mpmath.pi) * k * mpmath.exp(-2 * x)
    if integer:  # (mpmath's I of a negative integer order or argument is complex-typed)
        return (-1) ** int(v) * mpmath.besseli(abs(v), abs(x)) * mpmath.exp(-abs(x)) if x < 0 else mpmath.besseli(abs(v), x) * mpmath.exp(-x)
    return mpmath.besseli(v, x) * mpmath.exp(-x)


def _kve(v, x):
    """exp(x) K_v(x), with the limits our Kve gives: inf at x = 0 and for infinite v, 0 at
    x = +inf."""
    if mpmath.isnan(v) or mpmath.isnan(x) or x < 0 or (mpmath.isinf(v) and mpmath.isinf(x)):
        return mpmath.mpf("nan")
    if x == 0 or mpmath.isinf(v):
        return mpmath.inf
    if mpmath.isinf(x):
        return mpmath.mpf(0)
    if abs(v) >= 1000:
        r = _bessel_ik_debye(abs(v), x, -1)
        if r is not None:
            return r
    return mpmath.besselk(v, x) * mpmath.exp(x)


def _bessel_real_points(dtype, n, rng):
    """(v, x): v uniform in [-4, 4], integers in [-30, 30], log-uniform in [1e-3, 200] and
    uniform in [-60, 60], a quarter each; x log-uniform in [1e-8, 1e4] and, for a quarter,
    down to 1e-300 (1e-37 in float32); the integer orders' x of either sign."""
    k = n // 4
    v = rng.uniform(-60, 60, n)
    v[:k] = rng.uniform(-4, 4, k)
    v[k : 2 * k] = rng.integers(-30, 31, k)
    v[2 * k : 3 * k] = 10.0 ** rng.uniform(-3, np.log10(200), k)
    x = 10.0 ** rng.uniform(-8, 4, n)
    tiny = -300 if np.dtype(dtype) == np.float64 else -37
    x[::4] = 10.0 ** rng.uniform(tiny, -8, len(x[::4]))
    x[k : 2 * k] *= np.where(rng.random(k) < 0.5, -1.0, 1.0)
    return np.stack([v, x])


_BESSEL_REAL_EDGES = (0.0, 0.0, 1.0, 0.0, -0.5, 0.0, -1.5, 0.0, -2.0, 0.0, 0.5, 1e-300, 0.0, np.inf, 2.5, np.inf,
                      3.0, -np.inf, np.nan, 1.0, 1.0, np.nan, np.inf, 1.0, -np.inf, 1.0, 3.0, -2.0, 2.5, -2.0,
                      0.5, 1e5, 0.0, 2.0, 0.0, 1.9999999999999998, 0.3, 32.0, 5.5, 30.25, 5.5, 30.5, 0.5, 1.0,
                      -0.5, 1.0, 100.0, 1e4, 1e3, 1e3, 0.25, 1e300, 7.0, 1e-10, -7.0, 1e-10)
CASES += [
    Case("ive", pt.ive, real(_ive), (), arity=2, sampler=_bessel_real_points, edges=_BESSEL_REAL_EDGES),
    Case("kve", pt.kve, real(_kve), (), arity=2, sampler=_bessel_real_points, edges=_BESSEL_REAL_EDGES),
]  # fmt: skip


def _debye_u(k, _u=[[1]]):
    """The coefficients of Debye's polynomial u_k(p) (DLMF 10.41.11), exact fractions."""
    from fractions import Fraction

    while len(_u) <= k:
        a, nxt = _u[-1], [Fraction(0)] * (len(_u[-1]) + 3)
        for j, c in enumerate(a):
            nxt[j + 1] += Fraction(c) * j / 2 + Fraction(c) / (8 * (j + 1))
            nxt[j + 3] -= Fraction(c) * j / 2 + 5 * Fraction(c) / (8 * (j + 3))
        _u.append(nxt)
    return _u[k]


def _besselj_debye(v, x, terms=40, y=False):
    """J_v(x) (Y_v(x) with `y`) for 0 < v, x by Debye's expansions (DLMF 10.19.3 below the
    turning point, 10.19.6 above it) at 60 digits, or None where `terms` terms do not reach
    1e-35: mpmath's besselj sums the power series, which does not converge in reach for
    large v and x (nor does bessely)."""
    with mpmath.workdps(60):
        v, x = mpmath.mpf(v), mpmath.mpf(x)
        if x == v:
            return None
        osc = x > v
        p = mpmath.cot(mpmath.asec(x / v)) if osc else mpmath.coth(mpmath.acosh(v / x))
        pk = 1j * p if osc else p
        sums, last = [0, 0], None
        for k in range(terms):
            t = sum(mpmath.mpf(c.numerator) / c.denominator * pk**j for j, c in enumerate(_debye_u(k)) if c) / v**k
            sums[k % 2] += t
            if last is not None and abs(t) > abs(last):
                return None  # (the asymptotic series turned before converging)
            last = t
            if k > 2 and abs(t) < mpmath.mpf(10) ** -35:
                break
        else:
            return None
        if osc:
            b = mpmath.asec(x / v)
            xi = v * (mpmath.tan(b) - b) - mpmath.pi / 4
            amplitude = mpmath.sqrt(2 / (mpmath.pi * v * mpmath.tan(b)))
            if y:
                return mpmath.re(amplitude * (mpmath.sin(xi) * sums[0] + 1j * mpmath.cos(xi) * sums[1]))
            return mpmath.re(amplitude * (mpmath.cos(xi) * sums[0] - 1j * mpmath.sin(xi) * sums[1]))
        a = mpmath.acosh(v / x)
        if y:
            return -mpmath.exp(v * (a - mpmath.tanh(a))) / mpmath.sqrt(mpmath.pi * v * mpmath.tanh(a) / 2) * (sums[0] - sums[1])
        return mpmath.exp(v * (mpmath.tanh(a) - a)) / mpmath.sqrt(2 * mpmath.pi * v * mpmath.tanh(a)) * (sums[0] + sums[1])


@functools.lru_cache(maxsize=None)
def _besselj_miller(x, frac, kmax):
    """(J_frac+k(x) for k = 0..kmax) at 40 digits, 0 < frac <= 1, 0 < x, by Miller's
    algorithm: the downward recurrence J_k-1 = 2k/x J_k - J_k+1 from an order far past
    max(x, kmax) (where J is smaller than the digits carried) to frac, scaled by the sum
    (x/2)^nu = sum_k (nu + 2k) Gamma(nu + k) / k! J_nu+2k(x), nu = frac (DLMF 10.23.15;
    J_0 + 2 sum J_2k = 1 for nu = 1 -> 0). A reference for the transition region |x - v| <
    24 v^(1/3) of large orders, where Debye's expansions (`_besselj_debye`) do not converge
    and mpmath's besselj does not either; x steps and more, so seconds for x ~ 1e5."""
    with mpmath.workdps(40):
        x, nu = mpmath.mpf(x), mpmath.mpf(frac)
        top = int(max(kmax, float(x)) + 80 * float(x) ** (1 / 3) + 200)
        big = mpmath.mpf(10) ** 200
        weight = [mpmath.gamma(nu)]  # Gamma(nu + k) / k!
        for k in range(1, top // 2 + 2):
            weight.append(weight[-1] * (nu + k - 1) / k)
        above, here, norm, values = mpmath.mpf(0), mpmath.mpf(10) ** -300, mpmath.mpf(0), [None] * (kmax + 1)
        for k in range(top, 0, -1):
            above, here = here, 2 * (nu + k) / x * here - above
            if k - 1 <= kmax:
                values[k - 1] = here
            if (k - 1) % 2 == 0:
                norm += (nu + k - 1) * weight[(k - 1) // 2] * here
            if abs(here) > big:
                above, here, norm = above / big, here / big, norm / big
                values = [None if a is None else a / big for a in values]
        scale = (x / 2) ** nu / norm
        return tuple(a * scale for a in values)


def _bessely_upward(v, x):
    """Y_v(x) at 60 digits for large v in Debye's transition region |x - v| < ~24 v^(1/3)
    (where their expansions do not converge): Debye's Y (`_besselj_debye`) at v - m and v -
    m + 1 before it on the oscillatory side, m = ceil(v - x + 30 x^(1/3)), then the upward
    recurrence Y_k+1 = 2k/x Y_k - Y_k-1 (stable for Y) to v. None where Debye's do not
    converge there."""
    with mpmath.workdps(60):
        v, x = mpmath.mpf(v), mpmath.mpf(x)
        m = int(mpmath.ceil(v - x + 30 * mpmath.cbrt(x)))
        start = v - m
        below, here = _besselj_debye(start, x, y=True), _besselj_debye(start + 1, x, y=True)
        if below is None or here is None:
            return None
        for j in range(1, m):
            below, here = here, 2 * (start + j) / x * here - below
        return here


def _jv(v, x):
    """J_v(x), with the limits our Jv gives where mpmath has none: 0 at x = +-inf (nan for
    x = -inf and a non-integer v) and at v = +inf, nan at v = -inf (J_-v has no limit),
    +-inf at x = 0 for negative non-integer v (the sign of 1/Gamma(1 + v)). Orders and
    arguments past 1000 by Debye's expansions where they converge (`_besselj_debye`; for
    negative non-integer orders J's and Y's)."""
    limit = _real_order_limit(v, x)
    if limit is not None:
        return limit
    integer = v == mpmath.floor(v)
    if abs(v) >= 1000 and abs(x) >= 1000 and (v > 0 or integer):
        r = _besselj_debye(abs(v), abs(x))
        if r is not None:
            return (-1) ** (int(v) * (x < 0) + int(v) * (v < 0)) * r if integer else r
    if v <= -1000 and x >= 1000 and not integer:  # J_v = cos(v pi) J_-v + sin(v pi) Y_-v
        j, y = _besselj_debye(-v, x), _besselj_debye(-v, x, y=True)
        if j is not None and y is not None:
            with mpmath.workdps(60):
                return mpmath.cospi(v) * j + mpmath.sinpi(v) * y
    if integer:  # (-1)^v J_|v|(|x|) for either sign (mpmath's is complex-typed there)
        return (-1) ** (int(v) * (x < 0) + int(v) * (v < 0)) * mpmath.besselj(abs(v), abs(x))
    return mpmath.besselj(v, x)


def _jv_floor(v, x):
    """Where J oscillates (|x| > |v|), errors in ULPs of sqrt(2 / (pi |x|)), below its
    amplitude there: an absolute error near the zeros. For negative non-integer orders
    also in ULPs of the reflection's term sin(v pi) Y_-v(x) (J_v = cos(v pi) J_-v + sin(v
    pi) Y_-v cancels at J_v's zeros, which lie below |v| too)."""
    import scipy.special

    with np.errstate(all="ignore"):
        a = np.abs(x)
        floor = np.where(np.isfinite(a) & (a > np.abs(v)), np.sqrt(2 / (np.pi * a)), 0.0)
        reflected = (v < 0) & (v != np.floor(v)) & np.isfinite(v) & np.isfinite(a) & (a > 0)
        term = np.abs(np.sin(np.pi * v) * scipy.special.yv(-v, a))
        return np.where(reflected & np.isfinite(term), np.maximum(floor, term), floor)


# Large orders (Debye's expansions; nan in the transition region past order 1e5).
_JV_EDGES = (5e3, 2e5, 1e4, 2e5, 5e4, 2e5, 1e5, 2e5, 3e5, 3.1e5, 1e6, 1.2e6, 1e3, 2e5, 1e6, 9e5, 2e6, 1e7, -1e6, 1.2e6,
             1e6, -1.2e6)  # fmt: skip
CASES.append(Case("jv", pt.jv, real(_jv), (), arity=2, sampler=_bessel_real_points, edges=_BESSEL_REAL_EDGES + _JV_EDGES, floor=_jv_floor,
                  bound=_TRIG_BOUND))  # (past 1e15 the angle as sin and cos)
BY_NAME = {c.name: c for c in CASES}


def dtype_edges(dtype):
    """Values where every function is most likely to go wrong, in `dtype`."""
    f = np.finfo(dtype)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, f.eps, f.tiny, -f.tiny, f.smallest_subnormal,
            -f.smallest_subnormal, f.max, -f.max, np.inf, -np.inf, np.nan]  # fmt: skip
    return np.array(vals, dtype=dtype)


def points(case, dtype, n, rng):
    """About `n` points for `case` in `dtype`: random points from each piece of its domain,
    then the dtype's edge values and the case's own edges. For a case of two arguments,
    shape (2, about n): each argument drawn so, independently, then the edge pairs."""
    if case.sampler is not None:
        edges = np.array(case.edges, dtype=np.float64).reshape(-1, case.arity).T
        with np.errstate(over="ignore", under="ignore"):
            return np.concatenate([case.sampler(dtype, n, rng), edges], axis=1).astype(dtype)
    if case.arity == 2:
        edges = np.array(case.edges, dtype=np.float64).T
        plain = Case(case.name, case.pytensor, case.mpmath, case.domain, bound=case.bound)
        cols = [points(plain, dtype, n, rng) for _ in range(2)]
        # -0.0 becomes 0.0: mpmath has no signed zeros (atan2(0, -0.0) is pi in C).
        cols = [rng.permutation(c) for c in cols]
        with np.errstate(over="ignore", under="ignore"):
            v = np.concatenate([np.stack(cols), edges.astype(dtype)], axis=1)
        return np.where(v == 0, np.zeros_like(v), v)
    dtype = np.dtype(dtype)
    info = np.finfo(dtype)
    pieces = [p for p in case.domain if p.only in (None, dtype.name)]
    each = max(1, n // max(1, len(pieces)))
    parts = []
    for p in pieces:
        lo = max(p.lo, float(info.smallest_subnormal)) if p.kind == "log" else max(p.lo, -float(info.max))
        hi = min(p.hi, float(info.max))
        if p.kind == "uniform":
            v = rng.uniform(lo, hi, each)
        else:
            v = 10.0 ** rng.uniform(np.log10(lo), np.log10(hi), each)
            signs = np.where(rng.random(each) < 0.5, -1.0, 1.0) if p.sign == 0 else float(p.sign)
            v = p.center + signs * v
        parts.append(v)
    parts.append(dtype_edges(dtype).astype(np.float64))
    parts.append(np.array(case.edges, dtype=np.float64))
    with np.errstate(over="ignore"):
        v = np.concatenate(parts).astype(dtype)
    for d in case.drop:
        d = np.array(d, dtype=dtype)
        v = v[v.view(f"u{dtype.itemsize}") != d.view(f"u{dtype.itemsize}")]
    return v


def _hyp2f1(a, b, c, z):
    """mpmath's hyp2f1 with scipy's special values where the sampler reaches them: inf
    where c is a non-positive integer not preceded by the end of a polynomial (a or b a
    non-positive integer at or above c: a = b = c = -2 is (1 - z)^2)."""
    if any(mpmath.isnan(v) for v in (a, b, c, z)):
        return mpmath.mpf("nan")
    if z == 0:
        return mpmath.mpf(1)
    if c <= 0 and c == mpmath.floor(c):
        ends = any(v <= 0 and v == mpmath.floor(v) and v >= c for v in (a, b))
        if not ends:
            return mpmath.inf
    return mpmath.hyp2f1(a, b, c, z)


def _hyp2f1_points(dtype, n, rng):
    """(a, b, c, z): a, b uniform in [-3, 10], c in (0.05, 20], z in (-1, 1), in ten
    groups: a an integer (a polynomial where a <= 0); c in (0.05, 1); c - a - b an integer
    in [-3, 3] (a, b multiples of 1/8) with z = 1 - 10^-[0.3, 8]; b - a an integer (Pfaff's
    c - a' - b' for z < 0) with z = -10^[0, 4]; z = 1 - 10^-[0, 8]; z = -10^[0, 6]; the
    rest z uniform in (-1, 1)."""
    k = n // 10
    a = rng.uniform(-3, 10, n)
    b = rng.uniform(-3, 10, n)
    c = rng.uniform(0.05, 20, n)
    z = rng.uniform(-1, 1, n)
    a[:k] = np.round(a[:k])
    c[k : 2 * k] = rng.uniform(0.05, 1, k)
    g = slice(2 * k, 4 * k)
    a[g] = np.round(a[g] * 8) / 8
    b[g] = np.round(b[g] * 8) / 8
    c[2 * k : 3 * k] = a[2 * k : 3 * k] + b[2 * k : 3 * k] + rng.integers(-3, 4, k)
    z[2 * k : 3 * k] = 1 - 10 ** rng.uniform(-8, -0.3, k)
    b[3 * k : 4 * k] = a[3 * k : 4 * k] + rng.integers(-2, 3, k)
    z[3 * k : 4 * k] = -(10 ** rng.uniform(0, 4, k))
    z[4 * k : 5 * k] = 1 - 10 ** rng.uniform(-8, 0, k)
    z[5 * k : 6 * k] = -(10 ** rng.uniform(0, 6, k))
    if np.dtype(dtype) == np.float32:
        z[2 * k : 3 * k] = 1 - 10 ** rng.uniform(-7, -0.3, k)
        z[4 * k : 5 * k] = 1 - 10 ** rng.uniform(-7, 0, k)
    return np.stack([a, b, c, z])


CASES.append(
    Case("hyp2f1", pt.hyp2f1, real(_hyp2f1), (), arity=4, sampler=_hyp2f1_points,
         edges=(1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0, -1.0, 0.5, 0.5, 1.5, -1e8, 1.0, 1.0, 2.0, -1e6, 2.0, 3.0, 6.0, 0.99999,
                -20.0, 2.0, 3.0, 0.9, -3.0, 2.0, 3.0, -7.0, 1.5, 2.5, 0.5, -3.0, 0.25, 0.5, 1.75, 0.999, 1.0, 1.0, 1.0, 0.5))
)  # fmt: skip
BY_NAME = {c.name: c for c in CASES}
