#!/usr/bin/env python
"""Prints the constants of crates/core/src/lower/scalar_math/bessel_real.rs: the Taylor
coefficients of 1/Gamma(1 + z) at z = 0 (Temme's Gamma1 and Gamma2 are its odd and even
parts), to the degree where a term at |z| = 1/2 falls below 1e-19."""

import mpmath

mpmath.mp.prec = 200
coeffs = mpmath.taylor(lambda z: mpmath.rgamma(1 + z), 0, 40)
n = max(k for k, c in enumerate(coeffs) if abs(c) * mpmath.mpf(0.5) ** k > 1e-19) + 1
print(f"/// 1/Gamma(1 + z) = sum c[k] z^k, k < {n} (scripts/bessel_real_constants.py).")
print(f"const RGAMMA1P: [f64; {n}] = [")
for c in coeffs[:n]:
    print(f"    {float(c)!r},")
print("];")
