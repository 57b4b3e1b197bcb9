"""The functions whose accuracy `benchmarks/accuracy.py` reports and the accuracy tests check.

One `Case` per function: its PyTensor graph, its exact value as an mpmath function (real
valued: nan wherever the function is undefined), and its domain as pieces to sample
points from. A family adds rows by appending to `CASES`; `points()` turns a case into
sample points for a dtype (random points from each piece, the dtype's edge values, and
the case's own edges).
"""

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


HUGE = 1e308  # clamped to each dtype's largest finite value

CASES = [
    # The exponential and logarithm family (crates/core/src/lower/scalar_math/exp_log.rs).
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
]  # fmt: skip

BY_NAME = {c.name: c for c in CASES}


def dtype_edges(dtype):
    """Values where every function is most likely to go wrong, in `dtype`."""
    f = np.finfo(dtype)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, f.eps, f.tiny, -f.tiny, f.smallest_subnormal,
            -f.smallest_subnormal, f.max, -f.max, np.inf, -np.inf, np.nan]  # fmt: skip
    return np.array(vals, dtype=dtype)


def points(case, dtype, n, rng):
    """About `n` points for `case` in `dtype`: random points from each piece of its domain,
    then the dtype's edge values and the case's own edges."""
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
        return np.concatenate(parts).astype(dtype)
