"""Fit the polynomial of our float32 tanh below its switch to the exponential
(crates/core/src/lower/scalar_math/exp_log.rs `tanh_f32`):

  tanh(x) ~ x + x^3 P(x^2)    on 0 <= x <= 0.55

P is fitted by iteratively reweighted least squares (Lawson's algorithm, which tends to
the minimax polynomial) on Chebyshev nodes in u = x^2, the residual weighted to be the
error relative to tanh(x) (what an ULP measures). The coefficients are rounded to float32
and the maximum relative error of the rounded polynomial measured on a fine grid against
mpmath (the approximation error alone), also in units of 2^-23 (a float32 ULP of 1).

Usage: python scripts/fit_tanh_f32.py [--degree N]
"""

import argparse

import mpmath as mp
import numpy as np

mp.mp.dps = 40
SWITCH = 0.55


def g(u):
    """(tanh(x) - x) / x^3 at u = x^2."""
    if u == 0:
        return -mp.mpf(1) / 3
    x = mp.sqrt(u)
    return (mp.tanh(x) - x) / x**3


def fit(degree, nodes=400, rounds=60):
    k = np.arange(nodes)
    us = (np.cos(np.pi * (k + 0.5) / nodes)[::-1] + 1) / 2 * SWITCH**2
    gs = np.array([float(g(mp.mpf(u))) for u in us])
    xs = np.sqrt(us)
    ts = np.tanh(xs)
    scale = np.where(xs > 0, xs**3 / np.maximum(ts, 1e-300), 0.0) + 1e-30
    a = np.vander(us, degree + 1, increasing=True)
    w = np.ones(nodes)
    for _ in range(rounds):
        sw = np.sqrt(w) * scale
        c, *_ = np.linalg.lstsq(a * sw[:, None], gs * sw, rcond=None)
        err = np.abs((a @ c - gs) * scale)
        w = w * err
        w /= w.sum()
    return c


def max_error(coefficients, points=3000):
    worst = mp.mpf(0)
    for x in np.linspace(1e-4, SWITCH, points):
        x = mp.mpf(float(x))
        u = x * x
        p = mp.mpf(0)
        for c in reversed(coefficients):
            p = p * u + mp.mpf(c)
        worst = max(worst, abs((x + x**3 * p) / mp.tanh(x) - 1))
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--degree", type=int, default=4)
    args = parser.parse_args()
    c = [float(np.float32(v)) for v in fit(args.degree)]
    print("P:", ", ".join(repr(v) for v in c))
    print(f"max relative error {float(max_error(c)):.3g} = {float(max_error(c) / mp.mpf(2) ** -23):.3g} ulp(1)")


if __name__ == "__main__":
    main()
