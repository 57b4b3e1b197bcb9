"""Fit the polynomial coefficients of our special functions
(crates/core/src/lower/scalar_math/erf.rs and gamma.rs), and print them as Rust constants.

Every kernel is a polynomial fitted by weighted least squares on Chebyshev nodes (as
scripts/fit_trig.py), the weights chosen so that the residual is the RELATIVE error of the
value the kernel feeds (what ULP measures). The fits are made with mpmath at 50 digits; the
script then rounds the coefficients to float64, evaluates the polynomial by Horner's rule in
float64 (numpy, as the generated code does with FMAs) on a fine grid, and prints the max
relative error against mpmath, so the degree can be checked against float64's 1.1e-16.

Kernels (x the function's argument):
  ERF_SMALL       erf(x) = x * P(x^2)                   |x| <= 0.5
  ERFCX           (1 + 2x) erfcx(x) = P(y)               x >= 0, y = (x - K)/(x + K) in [-1, 1)
                  (the variable of Shepherd & Laframboise, Math. Comp. 36 (1981), 249-253)
  LGAMMA_NEAR1    lgamma(1 + t) = t * P(t)               |t| <= 0.5 (the root at 1 kept exact)
  LGAMMA_NEAR2    lgamma(2 + t) = t * P(t)               |t| <= 0.5 (the root at 2)
  LGAMMA_TAIL     lgamma(a) - (a - 1/2) log a + a - log(2 pi)/2 = P(1/a^2) / a,   a >= 10
  PSI_NEAR_ROOT   psi(x) = (x - x0) * P(x - 3/2)         1 <= x <= 2, x0 = 1.4616... (psi's root)
  PSI_NEG_ROOT    psi(x) = (x - x1) * P(x + 1/2)         |x + 1/2| <= 1/8, x1 = -0.5040... (psi's first
                  negative root, where the reflection cancels)
  PSI_2_3         psi(x) = P(x - 5/2)                    2 <= x <= 3
  PSI_TAIL        log a - 1/(2a) - psi(a) = P(1/a^2) / a^2,                      a >= 10
  TRIGAMMA_TAIL   psi1(a) - 1/a - 1/(2a^2) = P(1/a^2) / a^3,                     a >= 10
  GAMMA_1_2       gamma(1 + t) = P(t - 1/2)              0 <= t <= 1
  SINPI           sin(pi r) = r * P(r^2)                 |r| <= 1/4
  COSPI           cos(pi r) = P(r^2)                     |r| <= 1/4
  ERFINV_SMALL    erfinv(y) = y * P(y^2)                 |y| <= 1/2
  ERFCINV_START   erfcinv(q) ~ s * P(1/s), s = sqrt(-log q)   0 < q <= 1/2 (a starting value
                  only, refined by one Halley step on log erfc: within 2e-7 is enough)

Usage: python scripts/fit_special.py            # every kernel, as Rust constants
"""

import mpmath as mp
import numpy as np

mp.mp.dps = 50

ERFCX_K = mp.mpf(4)
PSI_ROOT = mp.findroot(mp.digamma, mp.mpf("1.4616321449683623"))
PSI_NEG_ROOT = mp.findroot(mp.digamma, mp.mpf("-0.5040830082644554"))


def cheb_nodes(lo, hi, n):
    return [lo + (hi - lo) * (1 + mp.cos(mp.pi * (k + mp.mpf(0.5)) / n)) / 2 for k in range(n)]


def lstsq(var, target, nodes, degree):
    """Coefficients c of P(v) = sum c_j v^j minimizing sum ((P(var(p)) - value) / scale)^2
    over the nodes p, where target(p) = (value, scale)."""
    rows, rhs = [], []
    for p in nodes:
        v = var(p)
        value, scale = target(p)
        rows.append([v**j / scale for j in range(degree + 1)])
        rhs.append(value / scale)
    coeffs, _ = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))
    return [coeffs[j] for j in range(degree + 1)]


def horner64(coeffs, v):
    c = np.array([float(x) for x in coeffs])
    p = np.full_like(v, c[-1])
    for k in c[-2::-1]:
        p = p * v + k
    return p


# name: (degree, parameter interval [lo, hi], var(p) in mpmath, var in numpy,
#        fitted function of p -> (value of P, scale = the size P's error is measured against),
#        the full function for checking: (numpy value from P(v) and p, exact mpmath value))
def kernels():
    k = ERFCX_K
    ks = float(k)
    x0 = PSI_ROOT
    x1 = PSI_NEG_ROOT

    def erfcx(x):
        return mp.exp(x * x) * mp.erfc(x)

    def lgamma(x):
        return mp.loggamma(x)

    def lg_tail(a):
        return lgamma(a) - (a - mp.mpf(0.5)) * mp.log(a) + a - mp.log(2 * mp.pi) / 2

    def psi_tail(a):
        return mp.log(a) - 1 / (2 * a) - mp.digamma(a)

    def tri_tail(a):
        return mp.psi(1, a) - 1 / a - 1 / (2 * a * a)

    return {
        # erf(x)/x in t = x^2.
        "ERF_SMALL": (10, (mp.mpf(0), mp.mpf(0.5)), lambda x: x * x, lambda x: x * x,
                      lambda x: (mp.erf(x) / x if x else 2 / mp.sqrt(mp.pi),) * 2,
                      lambda P, x: x * P, lambda x: mp.erf(x)),
        # The parameter is y itself; x = K (1 + y) / (1 - y).
        "ERFCX": (30, (mp.mpf(-1), mp.mpf(1)), lambda y: y, lambda y: y,
                  lambda y: ((1 + 2 * (k * (1 + y) / (1 - y))) * erfcx(k * (1 + y) / (1 - y)),) * 2
                  if y < 1 else (2 / mp.sqrt(mp.pi),) * 2,
                  None, None),
        "LGAMMA_NEAR1": (30, (mp.mpf(-0.5), mp.mpf(0.5)), lambda t: t, lambda t: t,
                         lambda t: (lgamma(1 + t) / t if t else -mp.euler,) * 2,
                         lambda P, t: t * P, lambda t: lgamma(1 + t)),
        "LGAMMA_NEAR2": (18, (mp.mpf(-0.5), mp.mpf(0.5)), lambda t: t, lambda t: t,
                         lambda t: (lgamma(2 + t) / t if t else 1 - mp.euler,) * 2,
                         lambda P, t: t * P, lambda t: lgamma(2 + t)),
        # The parameter is a; P in 1/a^2 gives a * tail.
        "LGAMMA_TAIL": (6, (mp.mpf(10), mp.mpf(10) ** 9), lambda a: 1 / (a * a), lambda a: 1 / (a * a),
                        lambda a: (a * lg_tail(a),) * 2, lambda P, a: P / a, lg_tail),
        "PSI_NEAR_ROOT": (21, (mp.mpf(1), mp.mpf(2)), lambda x: x - mp.mpf(1.5), lambda x: x - 1.5,
                          lambda x: (mp.digamma(x) / (x - x0) if x != x0 else mp.psi(1, x0),) * 2,
                          None, None),
        "PSI_NEG_ROOT": (19, (mp.mpf(-0.625), mp.mpf(-0.375)), lambda x: x + mp.mpf(0.5), lambda x: x + 0.5,
                         lambda x: (mp.digamma(x) / (x - x1) if x != x1 else mp.psi(1, x1),) * 2,
                         None, None),
        "PSI_2_3": (16, (mp.mpf(2), mp.mpf(3)), lambda x: x - mp.mpf(2.5), lambda x: x - 2.5,
                    lambda x: (mp.digamma(x),) * 2, lambda P, x: P, mp.digamma),
        "PSI_TAIL": (6, (mp.mpf(10), mp.mpf(10) ** 9), lambda a: 1 / (a * a), lambda a: 1 / (a * a),
                     lambda a: (a * a * psi_tail(a),) * 2, lambda P, a: P / (a * a), psi_tail),
        "TRIGAMMA_TAIL": (6, (mp.mpf(10), mp.mpf(10) ** 9), lambda a: 1 / (a * a), lambda a: 1 / (a * a),
                          lambda a: (a**3 * tri_tail(a),) * 2, lambda P, a: P / a**3, tri_tail),
        "GAMMA_1_2": (22, (mp.mpf(0), mp.mpf(1)), lambda t: t - mp.mpf(0.5), lambda t: t - 0.5,
                      lambda t: (mp.gamma(1 + t),) * 2, lambda P, t: P, lambda t: mp.gamma(1 + t)),
        "SINPI": (7, (mp.mpf(0), mp.mpf(0.25)), lambda r: r * r, lambda r: r * r,
                  lambda r: (mp.sin(mp.pi * r) / r if r else mp.pi,) * 2,
                  lambda P, r: r * P, lambda r: mp.sin(mp.pi * r)),
        "COSPI": (7, (mp.mpf(0), mp.mpf(0.25)), lambda r: r * r, lambda r: r * r,
                  lambda r: (mp.cos(mp.pi * r),) * 2, lambda P, r: P, lambda r: mp.cos(mp.pi * r)),
        "ERFINV_SMALL": (14, (mp.mpf(0), mp.mpf(0.5)), lambda y: y * y, lambda y: y * y,
                         lambda y: (mp.erfinv(y) / y if y else mp.sqrt(mp.pi) / 2,) * 2,
                         lambda P, y: y * P, mp.erfinv),
        # The parameter is s = sqrt(-log q) in [sqrt(log 2), sqrt(745)].
        "ERFCINV_START": (16, (mp.sqrt(mp.log(2)), mp.sqrt(mp.mpf(745))), lambda s: 1 / s, lambda s: 1 / s,
                          lambda s: (mp.erfinv(1 - mp.exp(-s * s)) / s if s < 5 else erfcinv_big(s) / s,) * 2,
                          lambda P, s: s * P, lambda s: mp.erfinv(1 - mp.exp(-s * s)) if s < 5 else erfcinv_big(s)),
    }  # fmt: skip


def erfcinv_big(s):
    """erfcinv(exp(-s^2)) for large s, by Newton's method on log erfc (mpmath's erfinv
    cannot take 1 - tiny)."""
    q_log = -s * s
    x = s
    for _ in range(100):
        g = mp.log(mp.erfc(x)) - q_log
        dg = -2 / mp.sqrt(mp.pi) * mp.exp(-x * x) / mp.erfc(x)
        step = g / dg
        x -= step
        if abs(step) < mp.mpf(10) ** -40 * x:
            break
    return x


def check(name, spec, coeffs, n=2000):
    degree, (lo, hi), var, var64, target, full64, exact = spec
    if name in ("LGAMMA_TAIL", "PSI_TAIL", "TRIGAMMA_TAIL"):
        grid = [mp.mpf(10) ** (1 + 8 * mp.mpf(i) / n) for i in range(n + 1)]
    else:
        grid = [lo + (hi - lo) * mp.mpf(i) / n for i in range(n + 1)]
    grid = [p for p in grid if p != 1 or name != "ERFCX"]
    worst = fit = 0.0
    for p in grid:
        v64 = var64(float(p))
        P = float(horner64(coeffs, np.array([v64]))[0])
        want = target(p)[0]
        if want == 0:
            continue
        worst = max(worst, float(abs((mp.mpf(P) - want) / want)))
        Pm = mp.polyval(coeffs[::-1], var(p))
        fit = max(fit, float(abs((Pm - want) / want)))
    return worst, fit


def rust(name, coeffs, degree, err, note):
    print(f"/// {note}: degree {degree}; max relative error of P: {err[1]:.2e} (exact arithmetic), "
          f"{err[0]:.2e} (float64 coefficients and Horner).")
    print(f"const {name}: [f64; {degree + 1}] = [")
    for c in coeffs:
        print(f"    {float(c)!r},")
    print("];")


def main():
    import sys

    only = sys.argv[1:]
    specs = kernels()
    for name, spec in specs.items():
        if only and name not in only:
            continue
        degree, (lo, hi), var, var64, target, *_ = spec
        if name in ("LGAMMA_TAIL", "PSI_TAIL", "TRIGAMMA_TAIL"):
            # Nodes in t = 1/a^2 on [0, 1/100]: a = 1/sqrt(t).
            ts = cheb_nodes(mp.mpf(0), 1 / lo**2, 3 * degree + 40)
            nodes = [1 / mp.sqrt(t) for t in ts if t > 0]
        elif name == "ERFCINV_START":
            vs = cheb_nodes(1 / hi, 1 / lo, 3 * degree + 40)
            nodes = [1 / v for v in vs]
        else:
            nodes = cheb_nodes(lo, hi, 3 * degree + 60)
        coeffs = lstsq(var, target, nodes, degree)
        err = check(name, spec, coeffs)
        rust(name, coeffs, degree, err, name)
    for name, root in (("PSI_ROOT", PSI_ROOT), ("PSI_NEG_ROOT", PSI_NEG_ROOT)):
        print(f"// {name} = {mp.nstr(root, 40)}: hi {float(root)!r} lo {float(root - mp.mpf(float(root)))!r}")
        hi32 = float(np.float32(float(root)))
        print(f"// float32 split: hi {hi32!r} lo {float(root - mp.mpf(hi32))!r}")


if __name__ == "__main__":
    main()
