"""Prints the split constants of crates/core/src/lower/scalar_math/exp_log.rs.

Each constant c is written hi + lo: hi is c rounded to the float type (or to fewer bits,
where a product with a small integer must be exact), lo the float nearest c - hi. Computed
with mpmath at 200 bits; run `python scripts/exp_log_constants.py` to check them.
"""

import mpmath
import numpy as np

mpmath.mp.prec = 200


def split(c, dtype, hi_bits=None):
    """(hi, lo) for `c` in `dtype`; `hi_bits` keeps only that many significant bits in hi."""
    if hi_bits is None:
        hi = dtype(float(c))
    else:
        m, e = mpmath.frexp(c)  # c = m * 2**e, 0.5 <= |m| < 1
        hi = dtype(float(mpmath.ldexp(mpmath.floor(mpmath.ldexp(m, hi_bits)), e - hi_bits)))
    lo = dtype(float(c - mpmath.mpf(float(hi))))
    return hi, lo


CONSTANTS = {
    # (value, significant bits of hi in f64, in f32): None keeps the full width.
    "LN2": (mpmath.log(2), None, None),
    "INV_LN2": (1 / mpmath.log(2), None, None),
    "INV_LN10": (1 / mpmath.log(10), None, None),
    # log10(2) times an exponent |e| < 2**11 (f64) or 2**8 (f32) must be exact.
    "LOG10_2": (mpmath.log10(2), 53 - 11, 24 - 8),
    # pow's log (log_reduced_double) and gamma's Stirling formula (gamma.rs).
    "TWO_THIRDS": (mpmath.mpf(2) / 3, None, None),
    "HALF_LOG_TWO_PI": (mpmath.log(2 * mpmath.pi) / 2, None, None),
}

for name, (c, bits64, bits32) in CONSTANTS.items():
    for dtype, bits in ((np.float64, bits64), (np.float32, bits32)):
        hi, lo = split(c, dtype, bits)
        print(f"{name} {np.dtype(dtype).name}: hi = {float(hi)!r}, lo = {float(lo)!r}")
