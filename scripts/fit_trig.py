"""Fit the polynomial coefficients of our trigonometric kernels (crates/core/src/lower/scalar_math/trig.rs).

Each kernel is odd or even, so it is written as a polynomial in t = x*x:
  sin(x) ~ x + x^3 * S(t)          on |x| <= pi/4
  cos(x) ~ 1 - t/2 + t^2 * C(t)    on |x| <= pi/4
  atan(x) ~ x + x^3 * A(t)         on |x| <= tan(pi/8) (after the 1/x and (x-1)/(x+1) reductions)
The coefficients of S, C, A are found by weighted least squares on Chebyshev nodes, the
weights chosen so that the residual is the RELATIVE error of the function (what ULP measures).
Least squares on Chebyshev nodes lands close to the minimax (Remez) polynomial; the script
prints the max relative error measured on a fine grid so the choice of degree can be checked.

The split constants of the argument reduction (pi/2 as a sum of four floats, 2/pi, pi/4, pi/2
and pi as hi + lo) are printed by `--constants` (mpmath at 400 bits).

Usage: python scripts/fit_trig.py [--dtype float64|float32] [--constants]
"""

import argparse

import mpmath as mp

mp.mp.dps = 60

# (name, function, interval bound in x, prefix degree handled exactly, degree of the fitted part)
KERNELS = {
    "float64": [("sin", "sin", mp.pi / 4, 5), ("cos", "cos", mp.pi / 4, 5), ("atan", "atan", mp.tan(mp.pi / 8), 11)],
    "float32": [("sin", "sin", mp.pi / 4, 2), ("cos", "cos", mp.pi / 4, 2), ("atan", "atan", mp.tan(mp.pi / 8), 4)],
}


def target(name, x):
    """(value of the fitted part P(t) at t=x*x, weight making its residual a relative error of f)."""
    t = x * x
    if name == "sin":
        return (mp.sin(x) - x) / x**3, x**2 / mp.sin(x) * x
    if name == "cos":
        return (mp.cos(x) - 1 + t / 2) / t**2, t**2 / mp.cos(x)
    if name == "atan":
        return (mp.atan(x) - x) / x**3, x**3 / mp.atan(x)
    raise ValueError(name)


def fit(name, bound, degree, nodes=120):
    xs = [bound * (1 + mp.cos(mp.pi * (k + mp.mpf(0.5)) / nodes)) / 2 for k in range(nodes)]
    xs = [x for x in xs if x > 0]
    rows, rhs = [], []
    for x in xs:
        value, weight = target(name, x)
        t = x * x
        rows.append([weight * t**j for j in range(degree + 1)])
        rhs.append(weight * value)
    coeffs, _ = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))
    return [coeffs[j] for j in range(degree + 1)]


def evaluate(name, coeffs, x):
    t = x * x
    p = mp.mpf(0)
    for c in reversed(coeffs):
        p = p * t + c
    if name == "sin":
        return x + x**3 * p
    if name == "cos":
        return 1 - t / 2 + t**2 * p
    return x + x**3 * p


def split(c, dtype, parts):
    """`c` as `parts` floats of `dtype`, each the one nearest what the previous ones leave out."""
    import numpy as np

    out = []
    with mp.workprec(400):
        rest = mp.mpf(c)
        for _ in range(parts):
            v = dtype(float(rest)) if dtype is np.float64 else np.float32(float(rest))
            out.append(float(v))
            rest -= mp.mpf(float(v))
    return out


def constants():
    import numpy as np

    with mp.workprec(400):
        table = {"PIO2": (mp.pi / 2, 4), "TWO_OVER_PI": (2 / mp.pi, 2), "PIO4": (mp.pi / 4, 2),
                 "PI": (mp.pi, 2)}  # fmt: skip
        for name, (c, parts) in table.items():
            for dtype in (np.float64, np.float32):
                print(f"{name} {np.dtype(dtype).name}: {[repr(v) for v in split(c, dtype, parts)]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="float64", choices=sorted(KERNELS))
    parser.add_argument("--constants", action="store_true", help="print the split constants and stop")
    args = parser.parse_args()
    if args.constants:
        constants()
        return
    for name, fn, bound, degree in KERNELS[args.dtype]:
        coeffs = fit(name, bound, degree)
        exact = getattr(mp, fn)
        grid = [bound * (k + 1) / 2000 for k in range(2000)]
        err = max(abs(evaluate(name, coeffs, x) / exact(x) - 1) for x in grid)
        print(f"// {name} ({args.dtype}): degree {degree} in t = x*x on |x| <= {mp.nstr(bound, 17)}; "
              f"max relative error {mp.nstr(err, 3)}")
        print(f"const {name.upper()}_{args.dtype.upper()}: [f64; {degree + 1}] = [")
        for c in coeffs:
            print(f"    {mp.nstr(c, 20, min_fixed=0, max_fixed=0)},")
        print("];")


if __name__ == "__main__":
    main()
