#!/usr/bin/env python
"""Coefficients of Temme's uniform asymptotic expansion of the incomplete gamma functions
(incomplete_gamma.rs, `temme`): Q(a, x) = erfc(eta sqrt(a/2)) / 2 + e^(-a eta^2/2) /
sqrt(2 pi a) sum_k c_k(eta) / a^k (DLMF 8.12.7-8.12.10), with eta^2 / 2 = lambda - 1 -
log(lambda), lambda = x / a, eta of the sign of lambda - 1. Each c_k is printed as its Taylor
series in eta, lowest degree first, cut where the dropped terms stay below the target for
|eta| <= ETA_MAX and a >= A_MIN; the series in 1/a is cut the same way.

The recurrence (DLMF 8.12.10): c_0 = 1/mu - 1/eta, c_k = c_(k-1)'(eta) / eta + (-1)^k g_k /
mu, mu = lambda - 1, g_k Stirling's coefficients of Gamma (DLMF 5.11.3). Computed here in
mpmath at 160 digits from mu's series in eta (the inverse of eta = mu sqrt(2 (mu - log(1 +
mu)) / mu^2), by Lagrange's formula); each step's pole terms must cancel (asserted).

    python scripts/incomplete_gamma_temme.py     # prints the Rust tables
"""

import textwrap

import mpmath as mp

mp.mp.dps = 160
ETA_MAX = 0.9  # must cover TEMME_X in incomplete_gamma.rs (x from 0.3472 a to 2.188 a)
A_MIN = 20.0  # must match TEMME_A
TARGETS = {"F64": 2.0**-62, "F32": 2.0**-32}
DEGREE = 80  # of the series computed (more than any table keeps)
MAX_K = 20


def series_coefficients(K, N):
    """[c_k's Taylor coefficients, N of them, for k < K] and the check of the cancelling poles."""
    M = N + 2 * K + 4

    def mul(p, q):
        r = [mp.mpf(0)] * M
        for i, pi in enumerate(p):
            if pi:
                for j in range(M - i):
                    r[i + j] += pi * q[j]
        return r

    def inverse(p):
        r = [mp.mpf(0)] * M
        r[0] = 1 / p[0]
        for n in range(1, M):
            r[n] = -sum(p[i] * r[n - i] for i in range(1, n + 1)) / p[0]
        return r

    # eta = mu h(mu), h = sqrt(2 g), g = (mu - log(1 + mu)) / mu^2 = sum (-1)^j mu^j / (j + 2).
    two_g = [mp.mpf(2 * (-1) ** j) / (j + 2) for j in range(M)]
    h = [mp.mpf(1)] + [mp.mpf(0)] * (M - 1)
    for n in range(1, M):
        h[n] = (two_g[n] - sum(h[i] * h[n - i] for i in range(1, n))) / 2
    # Lagrange: [eta^n] mu = [mu^(n-1)] h^-n / n.
    h_inv = inverse(h)
    mu = [mp.mpf(0)] * M
    power = [mp.mpf(1)] + [mp.mpf(0)] * (M - 1)
    for n in range(1, M):
        power = mul(power, h_inv)
        mu[n] = power[n - 1] / n
    u = inverse(mu[1:] + [mp.mpf(0)])  # 1/mu = u / eta
    # Stirling: Gamma(z) ~ sqrt(2 pi) z^(z - 1/2) e^-z sum g_k z^-k = exp(sum B_2j / (2j (2j-1) z^(2j-1))).
    log_series = [mp.mpf(0)] * M
    for j in range(1, M // 2 + 1):
        if 2 * j - 1 < M:
            log_series[2 * j - 1] = mp.bernoulli(2 * j) / (2 * j * (2 * j - 1))
    g = [mp.mpf(1)] + [mp.mpf(0)] * (M - 1)
    for n in range(1, M):
        g[n] = sum(k * log_series[k] * g[n - k] for k in range(1, n + 1)) / n
    c = [[u[n + 1] for n in range(M - 1)]]
    for k in range(1, K):
        prev = c[-1]
        pole = prev[1] + (-1) ** k * g[k] * u[0]
        assert abs(pole) < mp.mpf(10) ** -100, (k, pole)
        c.append([(n + 2) * prev[n + 2] + (-1) ** k * g[k] * u[n + 1] for n in range(len(prev) - 2)])
    return [ck[:N] for ck in c]


def tail(ck, n):
    return sum(abs(d) * mp.mpf(ETA_MAX) ** m for m, d in enumerate(ck) if m >= n)


def main():
    c = series_coefficients(MAX_K, DEGREE)
    for name, target in TARGETS.items():
        K = next(k for k in range(MAX_K) if tail(c[k], 0) / mp.mpf(A_MIN) ** k < target)
        rows = []
        for k in range(K):
            n = next(n for n in range(1, DEGREE) if tail(c[k], n) / mp.mpf(A_MIN) ** k < target / K)
            row = c[k][:n]
            while abs(row[-1]) < mp.mpf(10) ** -100:  # a zero coefficient (rounding noise)
                row = row[:-1]
            rows.append(row)
        total = sum(len(r) for r in rows)
        print(f"/// c_k(eta), k < {K}, for {name} ({total} coefficients; scripts/incomplete_gamma_temme.py).")
        print(f"const TEMME_{name}: [&[f64]; {K}] = [")
        for r in rows:
            body = textwrap.fill(", ".join(repr(float(d)) for d in r), 92, initial_indent=" " * 8, subsequent_indent=" " * 8)
            print("    &[\n" + body + ",\n    ],")
        print("];")


if __name__ == "__main__":
    main()
