"""Fit the polynomial coefficients of our modified Bessel functions I0 and I1
(crates/core/src/lower/scalar_math/bessel.rs), and print them as Rust constants.

The same method as scripts/fit_special.py (whose helpers this imports): weighted least
squares on Chebyshev nodes with mpmath at 50 digits, the residual measured relative to the
kernel's value; then the coefficients are rounded to float64 and the polynomial evaluated
by Horner's rule in float64 on a fine grid against mpmath.

Kernels (x >= 0 the argument, A = 7.75 the switch point):
  I0_SMALL   I0(x) = P(t),              t = x^2/4, 0 <= x <= A
  I1_SMALL   I1(x) = (x/2) P(t),        t = x^2/4, 0 <= x <= A
  I0_LARGE   sqrt(x) exp(-x) I0(x) = P(w),         w = A/x, x >= A
  I1_LARGE   sqrt(x) exp(-x) I1(x) = P(w),         w = A/x, x >= A

  J0_SMALL   J0(x) = (x - z1)(x - z2) P(u),  u = 2x/X - 1, 0 <= x <= X = 5
  J1_SMALL   J1(x) = x (x - z1) P(u)         (z1, z2: the first positive zeros)
  J0_MOD, J0_PHASE, J1_MOD, J1_PHASE: for x >= X, sqrt(pi x/2) (J_n(x) + i Y_n(x)) =
             MOD(v) exp(i (x - (2n+1) pi/4 + w PHASE(v))),  w = X/x, v = w^2

The large kernels' functions of w are smooth on [0, 1/A] (their asymptotic series is
Hankel's, divergent but the functions are not: a polynomial of modest degree fits them).

Usage: python scripts/fit_bessel.py [NAME ...]
"""

import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_special import cheb_nodes, horner64, lstsq  # noqa: E402

mp.mp.dps = 50
A = mp.mpf("7.75")
X = mp.mpf(5)


def kernels():
    def large(n):
        def target(w):
            if w == 0:
                return (1 / mp.sqrt(2 * mp.pi),) * 2
            x = A / w
            return (mp.sqrt(x) * mp.exp(-x) * mp.besseli(n, x),) * 2

        return target

    def j_small(n):
        # J0(x) = (x - z1)(x - z2) P(u), J1(x) = x (x - z1) P(u): z1, z2 the first positive
        # zeros (z2 = 5.52 of J0 lies just past X, but left in, P would nearly vanish at X).
        z1 = mp.besseljzero(n, 1)
        z2 = mp.besseljzero(0, 2)

        def target(u):
            x = (u + 1) * X / 2
            if n == 0:
                return (mp.besselj(0, x) / ((x - z1) * (x - z2)),) * 2
            return ((mp.besselj(1, x) / x if x else mp.mpf(0.5)) / (x - z1),) * 2

        return target

    def hankel(n, part):
        # sqrt(pi x / 2) (J_n + i Y_n) = M exp(i (chi + alpha)), chi = x - (2n + 1) pi / 4:
        # the modulus M = MOD(v) and the phase alpha = w PHASE(v), w = X/x, v = w^2.
        def target(v):
            if v == 0:
                return ((mp.mpf(1) if part == "M" else (4 * n * n - 1) / (8 * X)),) * 2
            w = mp.sqrt(v)
            x = X / w
            chi = x - (2 * n + 1) * mp.pi / 4
            h = mp.sqrt(mp.pi * x / 2) * (mp.besselj(n, x) + 1j * mp.bessely(n, x)) * mp.exp(-1j * chi)
            return ((abs(h) if part == "M" else mp.arg(h) / w),) * 2

        return target

    return {
        # J0 and J1 below X in u = 2x/X - 1 (see j_small), past X by modulus and phase.
        "J0_SMALL": (18, (mp.mpf(-1), mp.mpf(1)), j_small(0)),
        "J1_SMALL": (18, (mp.mpf(-1), mp.mpf(1)), j_small(1)),
        "J0_MOD": (20, (mp.mpf(0), mp.mpf(1)), hankel(0, "M")),
        "J0_PHASE": (20, (mp.mpf(0), mp.mpf(1)), hankel(0, "P")),
        "J1_MOD": (20, (mp.mpf(0), mp.mpf(1)), hankel(1, "M")),
        "J1_PHASE": (20, (mp.mpf(0), mp.mpf(1)), hankel(1, "P")),
        # name: (degree, interval of the variable v, target(v) -> (value, scale))
        "I0_SMALL": (int(os.environ.get("DEG_SMALL", 14)), (mp.mpf(0), A * A / 4), lambda t: (mp.besseli(0, 2 * mp.sqrt(t)),) * 2),
        "I1_SMALL": (int(os.environ.get("DEG_SMALL", 14)), (mp.mpf(0), A * A / 4),
                     lambda t: ((mp.besseli(1, 2 * mp.sqrt(t)) / mp.sqrt(t)) if t else mp.mpf(1),) * 2),
        "I0_LARGE": (int(os.environ.get("DEG_LARGE", 22)), (mp.mpf(0), mp.mpf(1)), large(0)),
        "I1_LARGE": (int(os.environ.get("DEG_LARGE", 22)), (mp.mpf(0), mp.mpf(1)), large(1)),
    }  # fmt: skip


def check(spec, coeffs, n=3000):
    """Max relative error of P: (float64 coefficients and Horner, exact arithmetic)."""
    _, (lo, hi), target = spec
    worst = fit = 0.0
    for i in range(n + 1):
        v = lo + (hi - lo) * mp.mpf(i) / n
        want = target(v)[0]
        p64 = float(horner64(coeffs, np.array([float(v)]))[0])
        worst = max(worst, float(abs((mp.mpf(p64) - want) / want)))
        fit = max(fit, float(abs((mp.polyval(coeffs[::-1], v) - want) / want)))
    return worst, fit


def main():
    only = sys.argv[1:]
    for name, spec in kernels().items():
        if only and name not in only:
            continue
        degree, (lo, hi), target = spec
        coeffs = lstsq(lambda v: v, target, cheb_nodes(lo, hi, 3 * degree + 60), degree)
        worst, fit = check(spec, coeffs)
        print(f"/// {name}: degree {degree}; max relative error of P: {fit:.2e} (exact arithmetic), "
              f"{worst:.2e} (float64 coefficients and Horner).")
        print(f"const {name}: [f64; {degree + 1}] = [")
        for c in coeffs:
            print(f"    {float(c)!r},")
        print("];")


if __name__ == "__main__":
    main()
