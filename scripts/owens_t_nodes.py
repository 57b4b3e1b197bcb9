"""Quadrature nodes and weights for Owen's T function
(crates/core/src/lower/scalar_math/owens_t.rs), printed as Rust constants.

- Gauss-Legendre with 2N points on [-1, 1], of which the N positive nodes t_i and their
  weights are kept (the integrand is even in t): G = a int_0^1 exp(-s^2 t^2 / 2) /
  (1 + a^2 t^2) dt ~ a sum_i w_i f(t_i).
- Gauss-Legendre with M points on [-1, 1], all of them, mapped onto [1, a] for 1 < a <= 2:
  int_1^a e^(-h^2 x^2 / 2) / (1 + x^2) dx, what T(h, a) adds to T(h, 1).
- Gauss-Laguerre with n points (weight e^-v on [0, inf)): L = int_0^inf e^-v phi(v) dv.

numpy's nodes are a start; each is refined by Newton's method on the orthogonal polynomial
with mpmath at 50 digits, and the weights come from the classical formulas
(Legendre: 2 / ((1 - t^2) P'_2N(t)^2); Laguerre: v / ((n + 1)^2 L_{n+1}(v)^2)). The script
checks that the weights sum to the integral of the weight function (2 and 1). The weights
are printed divided by 2 pi, the factor in front of T's integral, so that it costs no
rounding of its own.

Usage: python scripts/owens_t_nodes.py [N] [n] [M]     # defaults: the sizes owens_t.rs uses
"""

import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 50


def legendre_half(n_half):
    nodes, weights = legendre(2 * n_half)
    return nodes[n_half:], weights[n_half:]


def legendre(m):
    start, _ = np.polynomial.legendre.leggauss(m)
    nodes, weights = [], []
    for t0 in start:
        t = mp.mpf(t0)
        for _ in range(100):
            step = mp.legendre(m, t) / mp.diff(lambda x: mp.legendre(m, x), t)
            t -= step
            if abs(step) < mp.mpf(10) ** -45:
                break
        d = mp.diff(lambda x: mp.legendre(m, x), t)
        nodes.append(t)
        weights.append(2 / ((1 - t * t) * d * d))
    assert abs(sum(weights) - 2) < mp.mpf(10) ** -40
    return nodes, weights


def laguerre(n):
    start, _ = np.polynomial.laguerre.laggauss(n)
    nodes, weights = [], []
    for v0 in start:
        v = mp.mpf(v0)
        for _ in range(100):
            step = mp.laguerre(n, 0, v) / mp.diff(lambda x: mp.laguerre(n, 0, x), v)
            v -= step
            if abs(step) < abs(v) * mp.mpf(10) ** -45:
                break
        nodes.append(v)
        weights.append(v / ((n + 1) ** 2 * mp.laguerre(n + 1, 0, v) ** 2))
    assert abs(sum(weights) - 1) < mp.mpf(10) ** -40
    return nodes, weights


def rust(name, values, doc):
    print(f"/// {doc}")
    print(f"const {name}: [f64; {len(values)}] = [")
    for v in values:
        print(f"    {float(v)!r},")
    print("];")


def main():
    n_half = int(sys.argv[1]) if len(sys.argv) > 1 else 13
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    m = int(sys.argv[3]) if len(sys.argv) > 3 else 13
    t, w = legendre_half(n_half)
    v, u = laguerre(n)
    tau, omega = legendre(m)
    rust("LEGENDRE_T", t, f"Gauss-Legendre: the {n_half} positive nodes of the {2 * n_half}-point rule on [-1, 1].")
    rust("LEGENDRE_W", [x / (2 * mp.pi) for x in w], "Their weights divided by 2 pi (T's factor).")
    rust("SHORT_T", tau, f"Gauss-Legendre: the {m} nodes of the {m}-point rule on [-1, 1] (for [1, a]).")
    rust("SHORT_W", [x / (2 * mp.pi) for x in omega], "Their weights divided by 2 pi.")
    rust("LAGUERRE_V", v, f"Gauss-Laguerre: the {n} nodes.")
    rust("LAGUERRE_W", [x / (2 * mp.pi) for x in u], "Their weights divided by 2 pi.")


if __name__ == "__main__":
    main()
