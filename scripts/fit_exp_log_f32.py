"""Fit the polynomials of our float32 exponential and logarithm
(crates/core/src/lower/scalar_math/exp_log_f32.rs) and print the split constants of
their argument reductions.

  exp: e^r ~ 1 + r + r^2 * P(r)              on |r| <= ln2/2 (plus a margin for k's rounding)
  log: log((1+s)/(1-s)) = 2 atanh(s) ~ 2s + s * z * Q(z), z = s^2,
       s = g / (2 + g), g = m - 1, m in [sqrt(1/2), sqrt(2)]

P and Q are fitted by weighted least squares on Chebyshev nodes (close to the minimax
polynomial), the weights making the residual the error relative to the function's
value (what an ULP measures). The coefficients are then rounded to float32 and the
maximum relative error of the rounded polynomial is measured on a fine grid (mpmath,
so it is the approximation error alone, without float32 evaluation), in float32 ULPs
of 1 (2^-23) for comparison.

Usage: python scripts/fit_exp_log_f32.py [--exp-degree N] [--log-degree N]
"""

import argparse

import mpmath as mp
import numpy as np

mp.mp.dps = 50

# |r| reaches ln2/2 plus the rounding of k = round(x / ln2) and of r itself.
EXP_BOUND = mp.log(2) / 2 * (1 + mp.mpf(2) ** -10)
S_MAX = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)


def exp_target(r):
    """(P's exact value at r, weight turning P's residual into e^r's relative error)."""
    return (mp.exp(r) - 1 - r) / r**2, r**2 / mp.exp(r)


def log_target(s):
    """(Q's exact value at z = s^2, weight turning Q's residual into the logarithm's
    relative error: log m = 2 atanh(s), and s z Q's error over 2 atanh(s))."""
    z = s * s
    return (2 * mp.atanh(s) - 2 * s) / (s * z), s * z / (2 * mp.atanh(s))


def nodes(lo, hi, n):
    return [lo + (hi - lo) * (1 + mp.cos(mp.pi * (k + mp.mpf(0.5)) / n)) / 2 for k in range(n)]


def fit(points, target, variable, degree):
    rows, rhs = [], []
    for x in points:
        value, weight = target(x)
        t = variable(x)
        rows.append([weight * t**j for j in range(degree + 1)])
        rhs.append(weight * value)
    coeffs, _ = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))
    return [float(np.float32(float(coeffs[j]))) for j in range(degree + 1)]


def horner(coeffs, t):
    p = mp.mpf(0)
    for c in reversed(coeffs):
        p = p * t + mp.mpf(c)
    return p


def max_error(points, target, variable, coeffs):
    worst = mp.mpf(0)
    for x in points:
        if x == 0:
            continue
        value, weight = target(x)
        worst = max(worst, abs(weight * (horner(coeffs, variable(x)) - value)))
    return worst


def split(c, hi_bits):
    """c as hi + lo in float32, hi with `hi_bits` significant bits (so that hi times an
    integer of 24 - hi_bits bits is exact), lo the float32 nearest the rest."""
    e = mp.floor(mp.log(abs(c), 2))
    scale = mp.mpf(2) ** (hi_bits - 1 - e)
    hi = mp.nint(c * scale) / scale
    lo = float(np.float32(float(c - hi)))
    return float(hi), lo


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--exp-degree", type=int, default=4)
    p.add_argument("--log-degree", type=int, default=2)
    a = p.parse_args()
    ulp = mp.mpf(2) ** -23
    sym = [x for x in nodes(-EXP_BOUND, EXP_BOUND, 160) if x != 0]
    exp_c = fit(sym, exp_target, lambda r: r, a.exp_degree)
    grid = [-EXP_BOUND + 2 * EXP_BOUND * k / 4000 for k in range(4001)]
    err = max_error(grid, exp_target, lambda r: r, exp_c)
    print(f"exp P (degree {a.exp_degree}): {exp_c}")
    print(f"  max relative error {mp.nstr(err, 3)} = {mp.nstr(err / ulp, 3)} ulp(1)")
    log_nodes = [x for x in nodes(0, S_MAX, 120) if x > 0]
    log_c = fit(log_nodes, log_target, lambda s: s * s, a.log_degree)
    grid = [S_MAX * k / 4000 for k in range(1, 4001)] + [-S_MAX * k / 4000 for k in range(1, 4001)]
    err = max_error(grid, log_target, lambda s: s * s, log_c)
    print(f"log Q (degree {a.log_degree}): {log_c}")
    print(f"  max relative error {mp.nstr(err, 3)} = {mp.nstr(err / ulp, 3)} ulp(1)")
    print("ln2 split (16-bit hi):", split(mp.log(2), 16))
    print("1/ln2 (float32):", float(np.float32(float(1 / mp.log(2)))))


if __name__ == "__main__":
    main()
