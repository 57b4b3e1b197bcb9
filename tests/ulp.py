"""Accuracy in units in the last place (ULP) against a high-precision mpmath reference.

The error of a result `got` (a float32 or float64) for an exact value `r` is
|got - r| / ulp(r), where ulp(r) is the spacing of the dtype's numbers in r's binade
(the smallest subnormal below the normal range). Special values must match exactly:
where r is nan the result must be nan, where r rounds past the largest finite number the
result must be the infinity of r's sign; any other mismatch counts as an infinite error.
"""

import mpmath
import numpy as np

# (significand bits including the implicit one, smallest normal exponent)
_FORMAT = {np.dtype("float32"): (24, -126), np.dtype("float64"): (53, -1022)}


def exact(fn, *args, prec=256):
    """`fn` (an mpmath function of mpf arguments) at each point of the numpy arrays `args`,
    evaluated with `prec` bits: a list of mpf (or nan/inf mpf where fn is undefined or
    infinite)."""
    out = []
    with mpmath.workprec(prec):
        for point in zip(*(np.asarray(a).ravel() for a in args)):
            try:
                out.append(mpmath.mpf(fn(*(mpmath.mpf(float(p)) for p in point))))
            except (ValueError, ZeroDivisionError):
                out.append(mpmath.mpf("nan"))
    return out


def ulp_of(r, dtype):
    """The spacing of `dtype`'s numbers in the binade of the finite mpf `r`."""
    bits, emin = _FORMAT[np.dtype(dtype)]
    if r == 0:
        return mpmath.ldexp(1, emin - bits + 1)
    _, e = mpmath.frexp(r)  # |r| = m * 2**e with 0.5 <= m < 1
    return mpmath.ldexp(1, max(int(e) - 1, emin) - bits + 1)


def ulp_errors(got, want, dtype, floor=None):
    """The ULP error of each of `got` (array of `dtype`) against `want` (list of mpf); with
    `floor` (an array), in ULPs of max(|want|, floor) (an absolute error below it)."""
    dtype = np.dtype(dtype)
    largest = mpmath.mpf(float(np.finfo(dtype).max))
    errors = np.empty(len(want))
    for i, (g, r) in enumerate(zip(np.asarray(got, dtype=dtype).ravel(), want)):
        g = float(g)
        if mpmath.isnan(r):
            errors[i] = 0.0 if np.isnan(g) else np.inf
        elif mpmath.isinf(r) or abs(r) >= largest + ulp_of(largest, dtype) / 2:
            errors[i] = 0.0 if np.isinf(g) and (g > 0) == (r > 0) else np.inf
        elif not np.isfinite(g):
            errors[i] = np.inf
        else:
            scale = r if floor is None else max(abs(r), mpmath.mpf(float(floor[i])))
            errors[i] = float(abs(mpmath.mpf(g) - r) / ulp_of(scale, dtype))
    return errors


def worst(got, want, args, dtype):
    """(max ULP error, the arguments where it occurs) for reporting in assertion messages."""
    errors = ulp_errors(got, want, dtype)
    i = int(np.argmax(errors))
    return errors[i], tuple(np.asarray(a).ravel()[i] for a in args)
