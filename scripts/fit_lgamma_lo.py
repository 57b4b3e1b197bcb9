"""Low parts of the first coefficients of gamma.rs's LGAMMA_NEAR1 and LGAMMA_NEAR2, for
lgamma's upward recurrence on the negative axis (gamma.rs, `lgamma_shifted`), which
evaluates the last Horner steps of t P(t) in two doubles.

The float64 coefficients (read from gamma.rs) carry their rounding, about 1e-16 of P: the
low parts are a least-squares fit, on Chebyshev nodes in |t| <= 1/2 and relative to P, of
the difference between lgamma(base + t) / t (mpmath, 60 digits) and P with those float64
coefficients, by a polynomial of degree STEPS - 1. Prints the residual left and the Rust
constants.

Usage: python scripts/fit_lgamma_lo.py
"""

import os
import re

import mpmath as mp
import numpy as np

mp.mp.dps = 60
STEPS = 8
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "crates", "core", "src", "lower", "scalar_math", "gamma.rs")


def coefficients(name):
    text = open(SRC).read()
    body = re.search(rf"const {name}: \[f64; \d+\] = \[(.*?)\];", text, re.S).group(1)
    return [float(v) for v in body.replace("\n", "").split(",") if v.strip()]


def fit(name, base):
    hi = [mp.mpf(c) for c in coefficients(name)]
    nodes = [mp.cos(mp.pi * (i + 0.5) / 400) / 2 for i in range(400)]
    f = [mp.loggamma(base + t) / t for t in nodes]
    p = [mp.polyval(hi[::-1], t) for t in nodes]
    rhs = np.array([float((fi - pi) / fi) for fi, pi in zip(f, p)])
    a = np.array([[float(t**k / fi) for k in range(STEPS)] for t, fi in zip(nodes, f)])
    lo, *_ = np.linalg.lstsq(a, rhs, rcond=None)
    left = max(abs(float((fi - pi - mp.polyval([mp.mpf(v) for v in lo[::-1]], t)) / fi)) for t, fi, pi in zip(nodes, f, p))
    before = float(max(abs(r) for r in rhs))
    print(f"/// {name}_LO: relative error of P {before:.3g} with the float64 coefficients, {left:.3g} with these low parts.")
    print(f"const {name}_LO: [f64; {STEPS}] = [")
    for v in lo:
        print(f"    {float(v)!r},")
    print("];")


fit("LGAMMA_NEAR1", 1)
fit("LGAMMA_NEAR2", 2)
