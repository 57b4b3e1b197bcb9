//! The modified Bessel functions of real order, exponentially scaled as PyTensor's (and
//! scipy's) `ive(v, x) = exp(-|x|) I_v(x)` and `kve(v, x) = exp(x) K_v(x)`.
//!
//! ## The method (Temme 1975; Thompson and Barnett 1986; as described in Numerical Recipes'
//! `bessik`, written here in our own code)
//!
//! For an order n >= 0 and 0 < x < inf, with n = nl + mu, nl = floor(n + 1/2), |mu| <= 1/2:
//!
//! - K_mu and K_mu+1: below x = 1/2 Temme's series (its Gamma1 and Gamma2 from the Taylor
//!   series of 1/Gamma(1 + z), `scripts/bessel_real_constants.py`; (2/x)^mu, cosh and sinh
//!   of sigma = mu ln(2/x) from a logarithm carried in two floats, so that tiny x, where
//!   sigma reaches 370, loses nothing to its rounding); up to 20 the ratio K_mu+1 / K_mu
//!   from CF2 (Thompson and Barnett's form, evaluated from its tail) and I_mu, I_mu+1 from
//!   their series, through the Wronskian (`k_mid`); from 20 on Hankel's expansions of
//!   K_mu and K_mu+1 (Steed's summation of CF2, tried there first, collected 5 ULP at
//!   x = 14). K_n by the upward recurrence K_j+1 = 2j/x K_j + K_j-1 (stable for K), in
//!   two floats, stopped where it overflows (K_n does too).
//! - I: the continued fraction CF1 for r = I_n+1 / I_n (from its tail, see `i_ratio`) and
//!   the Wronskian I_n (K_n+1 + r K_n) = 1/x, which gives exp(-x) I_n from the scaled K's.
//!   Where K_n+1 overflows: the downward recurrence of the ratios r_j-1 = x / (2j + x r_j)
//!   to r_mu, the Wronskian at mu, and I_n = I_mu times the product of the ratios (as the
//!   exponential of a sum of logarithms in two floats). Below x = 1e-8 (1e-4 in f32) I_mu
//!   is its series' first two terms, (x/2)^mu / Gamma(1 + mu) (1 + x^2 / (4 (1 + mu))):
//!   K_mu+1 may overflow there.
//! - Large x (x >= 32 and x >= n^2): Hankel's expansions, summed to the working precision
//!   (the terms decrease from the first while x >= n^2): sqrt(2 pi x) ive = sum (-1)^k
//!   a_k / x^k and sqrt(2x/pi) kve = sum a_k / x^k, a_k = prod_{j<=k} (4n^2 - (2j-1)^2) /
//!   (8 j). (The other exponential of I's expansion, exp(-2x), is below 1e-27 there.)
//! - ive of v >= 0 or an integer v (no reflection, so no K) below x = 2: I's power
//!   series with a fixed number of terms, straight-line (`ive_series`), in f64 code.
//! - kve of |v| >= 15 below x = 1, |v| >= 5 below 3e-3 and |v| >= 2 below 1e-8: I_-v's
//!   series (K_v's leading part; I_v's is below 4e-18 of it there), straight-line
//!   (`kve_series`), in f64 code.
//!
//! The loops (CF1, Temme, CF2, Hankel's sums, the recurrences) are `scf.while` loops with
//! an iteration cap (1e5, 1e4 in f32): CF1 takes about sqrt(n^2 + 50 x) - n steps and the recurrences nl, so
//! orders up to 1e5 (1e4) work, and outside the Hankel region (x < n^2) x up to about 2e8
//! (2e6). From order DEBYE_N on (3200, 500 in f32), which covers every lane past the caps,
//! Debye's uniform expansions instead (bessel_debye.rs `debye_ik`): straight-line, and
//! more accurate than the long loops there. With I, K runs scaled by 2^-64 so that the reflection term of
//! I_-n stays finite where K_n alone overflows (ive(-37.01, 1.2e-7) = -5.03e306).
//!
//! ## Special values and negative arguments (as scipy where scipy gives the function)
//!
//! - K_-v = K_v; I_-v = I_v + (2/pi) sin(v pi) K_v (I_-n = I_n for an integer n).
//! - x < 0: I of an integer order has parity (-1)^v; of any other order, and K, nan.
//! - x = 0: ive(0, 0) = 1, ive(v, 0) = 0 for v > 0 or a negative integer, +-inf for other
//!   negative v (the sign of 1/Gamma(1 + v): scipy gives nan); kve(v, 0) = inf.
//! - x = +-inf: 0 (scipy: nan; the limit of exp(-x) I_v(x) and exp(x) K_v(x) is 0), signed
//!   by the parity for x = -inf; huge finite x likewise (scipy: nan from about 1e10 on).
//! - v = +inf: ive = 0, kve = inf for 0 < x < inf; v = -inf: ive nan (I_-v oscillates).
//!   scipy gives nan for both. A nan argument gives nan (scipy's kve(nan, 0) is inf).

use super::bessel_debye::debye_ik;
use super::erf::poly;
use super::exp_log::{cosh, exp_double, log_dd, log_double, sinh, LN2_HI, LN2_LO};
use super::gamma::{gamma1p_below_10, gamma_stirling};
use super::trig;
use super::beta::branch;
use super::{run_stages, PerType, Stage, F};
use crate::mlir::{Arith, Block, CmpF, ScalarType, Value};

/// 1/Gamma(1 + z) = sum c[k] z^k, k < 22 (scripts/bessel_real_constants.py).
const RGAMMA1P: [f64; 22] = [
    1.0,
    0.5772156649015329,
    -0.6558780715202539,
    -0.04200263503409524,
    0.16653861138229148,
    -0.04219773455554433,
    -0.009621971527876973,
    0.0072189432466631,
    -0.0011651675918590652,
    -0.00021524167411495098,
    0.0001280502823881162,
    -2.013485478078824e-05,
    -1.2504934821426706e-06,
    1.133027231981696e-06,
    -2.056338416977607e-07,
    6.116095104481416e-09,
    5.002007644469223e-09,
    -1.18127457048702e-09,
    1.0434267116911005e-10,
    7.782263439905071e-12,
    -3.696805618642206e-12,
    5.100370287454476e-13,
];

/// The unit roundoff per type: the loops stop once a term changes the sum by less.
const EPS: PerType = (1.1102230246251565e-16, 5.960464477539063e-08);
/// The loops' iteration cap per type.
const MAX_ITER: PerType = (100000.0, 10000.0);
/// Temme's series below TEMME_X, CF2's ratio with I's series (`k_mid`) up to HANKEL_MU_X,
/// Hankel's expansions of K_mu and K_mu+1 from it (at x = 20 the smallest term, about
/// e^-2x, is 4e-18).
const TEMME_X: f64 = 0.5;
const HANKEL_MU_X: f64 = 20.0;
/// CF2's tail (`k_mid`) is evaluated this many steps per division.
const CF2_BLOCK: usize = 8;
/// Hankel's expansions from x >= max(HANKEL_X, n^2).
const HANKEL_X: f64 = 32.0;
/// Debye's expansions from this order on (`ik_general`): their exponent's plain form (x <
/// 2 v) must be past the exponential's range there, e^-0.245 v.
const DEBYE_N: PerType = (3200.0, 500.0);
/// Hankel's expansions stop after this many terms (at x = 20, n = 0, about 32 reach 1e-17).
const HANKEL_TERMS: f64 = 64.0;
/// Where K is not wanted (ive of v >= 0 or an integer v), I_n by its power series below
/// I_SERIES_X, I_SERIES_TERMS terms: (x^2/4)^k / (k! (n + 1)_k) <= 1 / (k!)^2 < 5e-18
/// from k = 12 on there.
const I_SERIES_X: f64 = 2.0;
const I_SERIES_TERMS: usize = 12;
/// kve by the series of I_-n (at most K_SERIES_TERMS terms) where I_n's part,
/// relatively (x/2)^2n pi / (|sin n pi| Gamma(n) Gamma(n + 1)), is below 4e-18 even an
/// ulp from an integer: (n, x) with n >= K_SERIES[i].0 and x < K_SERIES[i].1 for some i.
const K_SERIES: [(f64, f64); 3] = [(15.0, 1.0), (5.0, 3e-3), (2.0, 1e-8)];
const K_SERIES_TERMS: usize = 10;
/// Below this x, I_mu is its series' first two terms.
const TINY_X: PerType = (1e-8, 1e-4);
/// The product of the ratios is kept above 2^-SCALE (LOW) by multiplying by 2^SCALE (UP).
const SCALE: PerType = (600.0, 60.0);
const LOW: PerType = (2.409919865102884e-181, 8.673617379884035e-19);
const UP: PerType = (4.149515568880993e+180, 1.152921504606847e+18);
/// With I, K runs scaled by this (2^-64, 2^-16 in f32) and its inverse: I_-n's reflection
/// term (2/pi) sin(n pi) K_n stays finite where K_n alone overflows and the term does not.
const K_SCALE: PerType = (5.421010862427522e-20, 1.52587890625e-05);
const K_UNSCALE: PerType = (1.8446744073709552e+19, 65536.0);
/// 1/sqrt(2 pi) and sqrt(pi/2).
const INV_SQRT_2PI: f64 = 0.3989422804014327;
const SQRT_PI_2: f64 = 1.2533141373155003;




/// ive(n, x) and kve(n, x) for 0 <= n < inf, 0 < x < inf (other lanes get stand-ins), and
/// whether every loop finished before its cap.
struct Ik {
    i: Value,
    /// kve(n, x), times K_SCALE when I is wanted too.
    k: Value,
    ok: Value,
}

/// (Gamma1(mu), Gamma2(mu)) of Temme's series: the odd part of 1/Gamma(1 + z) over -z,
/// and its even part.
pub(super) fn temme_gammas(f: &mut F, mu: &Value) -> (Value, Value) {
    let odd: Vec<f64> = RGAMMA1P.iter().skip(1).step_by(2).map(|c| -c).collect();
    let even: Vec<f64> = RGAMMA1P.iter().step_by(2).copied().collect();
    let mu2 = f.mul(mu, mu);
    let g1 = poly(f, &odd, &mu2);
    let g2 = poly(f, &even, &mu2);
    (g1, g2)
}

/// sigma = mu ln(2/x) to about twice the precision, as (hi, lo), and ln(2/x) rounded.
pub(super) fn sigma(f: &mut F, mu: &Value, x: &Value) -> (Value, Value, Value) {
    let (l_hi, l_lo) = log_dd(f, x);
    let ln2_hi = f.k(LN2_HI);
    let ln2_lo = f.k(LN2_LO);
    let minus_l = f.neg(&l_hi);
    let (d_hi, d_e) = f.two_sum(&ln2_hi, &minus_l);
    let d_low = f.sub(&ln2_lo, &l_lo);
    let d_low = f.add(&d_e, &d_low);
    let (d_hi, d_lo) = f.fast_two_sum(&d_hi, &d_low);
    let (s_hi, s_e) = f.two_prod(mu, &d_hi);
    let s_low = f.fma(mu, &d_lo, &s_e);
    let (s_hi, s_lo) = f.fast_two_sum(&s_hi, &s_low);
    (s_hi, s_lo, d_hi)
}

/// exp(x) K_mu(x) and exp(x) K_mu+1(x) by Temme's series, 0 < x < 1/2, |mu| <= 1/2; and
/// whether it converged.
/// Lanes where `active` is false stop the loop after one step.
fn k_temme(f: &mut F, mu: &Value, x: &Value, active: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let (g1, g2) = temme_gammas(f, mu);
    let mu_g1 = f.mul(mu, &g1);
    let gampl = f.sub(&g2, &mu_g1); // 1/Gamma(1 + mu)
    let gammi = f.add(&g2, &mu_g1); // 1/Gamma(1 - mu)
    let (s_hi, s_lo, d) = sigma(f, mu, x);
    // cosh and sinh of s_hi + s_lo to first order in s_lo.
    let ch = cosh(f.b, &s_hi);
    let sh = sinh(f.b, &s_hi);
    let ch = f.fma(&sh, &s_lo, &ch);
    let sh_full = f.fma(&ch, &s_lo, &sh);
    // sinh(sigma)/sigma * ln(2/x) = sinh(sigma)/mu (ln(2/x) at mu = 0).
    let mu_zero = f.cmp(CmpF::Oeq, mu, &zero);
    let mu_safe = f.sel(&mu_zero, &one, mu);
    let sh_mu = f.div(&sh_full, &mu_safe);
    let sh_mu = f.sel(&mu_zero, &d, &sh_mu);
    // mu pi / sin(mu pi).
    let pi = f.c(std::f64::consts::PI);
    let pimu = f.mul(&pi, mu);
    let s = trig::sin(f.b, &pimu);
    let s_safe = f.sel(&mu_zero, &one, &s);
    let fact = f.div(&pimu, &s_safe);
    let fact = f.sel(&mu_zero, &one, &fact);
    let a = f.mul(&g1, &ch);
    let ff = f.fma(&g2, &sh_mu, &a);
    let ff = f.mul(&fact, &ff);
    // (2/x)^mu = exp(sigma) to first order in s_lo, and its reciprocal.
    let e = f.exp(&s_hi);
    let e = f.fma(&e, &s_lo, &e);
    let minus_s = f.neg(&s_hi);
    let e_inv = f.exp(&minus_s);
    let minus_lo = f.neg(&s_lo);
    let e_inv = f.fma(&e_inv, &minus_lo, &e_inv);
    let p = f.mul(&half, &e);
    let p = f.div(&p, &gampl);
    let q = f.mul(&half, &e_inv);
    let q = f.div(&q, &gammi);
    let x2 = f.mul(x, &half);
    let dd = f.mul(&x2, &x2);
    let dd = f.sel(active, &dd, &zero);
    let ty = f.ty;
    let mu_in = mu.clone();
    let big = f.c(1.0);
    let done = f.b.scf_while(
        &[zero.clone(), ff.clone(), p.clone(), q, one.clone(), ff, p, big],
        |c, v| {
            let mut g = F { b: c, ty };
            let (i, sum, del) = (&v[0], &v[5], &v[7]);
            let eps = g.k(EPS);
            let limit = g.k(MAX_ITER);
            let asum = g.abs(sum);
            let small = g.mul(&asum, &eps);
            let adel = g.abs(del);
            let going = g.cmp(CmpF::Oge, &adel, &small);
            let under = g.cmp(CmpF::Olt, i, &limit);
            g.and(&going, &under)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (i, ff, p, q, c, sum, sum1) = (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]);
            let one = g.c(1.0);
            let i = g.add(i, &one);
            let mu2 = g.mul(&mu_in, &mu_in);
            let ii = g.mul(&i, &i);
            let den = g.sub(&ii, &mu2);
            let pq = g.add(p, q);
            let num = g.fma(&i, ff, &pq);
            let ff = g.div(&num, &den);
            let r = g.div(&dd, &i);
            let c = g.mul(c, &r);
            let im = g.sub(&i, &mu_in);
            let p = g.div(p, &im);
            let ip = g.add(&i, &mu_in);
            let q = g.div(q, &ip);
            let del = g.mul(&c, &ff);
            let sum = g.add(sum, &del);
            let iff = g.mul(&i, &ff);
            let h = g.sub(&p, &iff);
            let del1 = g.mul(&c, &h);
            let sum1 = g.add(sum1, &del1);
            vec![i, ff, p, q, c, sum, sum1, del]
        },
    );
    let limit = f.k(MAX_ITER);
    let ok = f.cmp(CmpF::Olt, &done[0], &limit);
    let ex = f.exp(x);
    let k0 = f.mul(&done[5], &ex);
    let two = f.c(2.0);
    let s1 = f.mul(&done[6], &two);
    let k1 = f.div(&s1, x);
    let k1 = f.mul(&k1, &ex);
    (k0, k1, ok)
}

/// exp(x) K_mu(x) and exp(x) K_mu+1(x) for 1/2 <= x < 20, |mu| <= 1/2, from the Wronskian
/// I_mu K_mu+1 + I_mu+1 K_mu = 1/x: K_mu = 1 / (x (I_mu rho + I_mu+1)), every term positive,
/// with rho = K_mu+1 / K_mu by CF2's continued fraction evaluated from its tail (depth
/// 40 + 120/sqrt(x); half of it gave the same results) and I_mu, I_mu+1 by their power
/// series (positive terms). Near x = 2 Temme's series cancels (25 to 50 ULP in a float64
/// model) and Steed's summation of CF2 collects rounding over 80 to 100 steps (9 to 13
/// ULP); this stays within 6.
/// Lanes where `active` is false skip both loops (their results are not used).
fn k_mid(f: &mut F, mu: &Value, x: &Value, active: &Value) -> (Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let two = f.c(2.0);
    let root = f.sqrt(x);
    let c1 = f.c(120.0);
    let depth = f.div(&c1, &root);
    let c0 = f.c(40.0);
    let depth = f.add(&depth, &c0);
    let depth = f.floor(&depth);
    // Deeper to a whole number of blocks: depth - 1 steps, a multiple of CF2_BLOCK.
    let block = f.c(CF2_BLOCK as f64);
    let rounding = f.c(CF2_BLOCK as f64 - 2.0);
    let steps_up = f.add(&depth, &rounding);
    let blocks = f.div(&steps_up, &block);
    let blocks = f.floor(&blocks);
    let depth = f.fma(&blocks, &block, &one);
    let depth = f.sel(active, &depth, &one);
    let ty = f.ty;
    let (mu_in, x_in) = (mu.clone(), x.clone());
    // t_i-1 = a_i / (b_i + t_i), a_i = mu^2 - (i - 1/2)^2, b_i = 2 (x + i), down to i = 2,
    // CF2_BLOCK steps at a time as t = p / q: (p, q) <- (a_i q, b_i q + p) from (t, 1), one
    // division a block. A division each step made the loop a chain of divisions, most of
    // kve's time between x = 1/2 and 20 (2.4x scipy's there). Over a block q grows by at
    // most (2 (20 + 210))^8 = 2^71 (p by the last a_i more), within float32's range.
    let tail = f.b.scf_while(
        &[depth, zero.clone()],
        |c, v| {
            let mut g = F { b: c, ty };
            let one = g.c(1.0);
            g.cmp(CmpF::Ogt, &v[0], &one)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (mut i, mut p) = (v[0].clone(), v[1].clone());
            let one = g.c(1.0);
            let half = g.c(0.5);
            let two = g.c(2.0);
            let mut q = one.clone();
            for _ in 0..CF2_BLOCK {
                let ih = g.sub(&i, &half);
                let lo = g.sub(&mu_in, &ih);
                let hi = g.add(&mu_in, &ih);
                let a = g.mul(&lo, &hi);
                let xi = g.add(&x_in, &i);
                let b = g.mul(&two, &xi);
                let next_p = g.mul(&a, &q);
                q = g.fma(&b, &q, &p);
                p = next_p;
                i = g.sub(&i, &one);
            }
            let t = g.div(&p, &q);
            vec![i, t]
        },
    );
    let xp1 = f.add(x, &one);
    let b1 = f.mul(&two, &xp1);
    let den = f.add(&b1, &tail[1]);
    let h = f.div(&one, &den);
    let quarter = f.c(0.25);
    let mu2 = f.mul(mu, mu);
    let a1 = f.sub(&quarter, &mu2);
    // rho = (mu + x + 1/2 - a1 h) / x.
    let rho = f.add(mu, x);
    let rho = f.add(&rho, &half);
    let ah = f.mul(&a1, &h);
    let rho = f.sub(&rho, &ah);
    let rho = f.div(&rho, x);
    // I_mu = (x/2)^mu / Gamma(1 + mu) s0 and I_mu+1 = (x/2)^(mu+1) / Gamma(2 + mu) s1, with
    // s_nu = sum_k (x^2/4)^k / (k! (nu+1)_k).
    let z = f.mul(x, x);
    let quarter = f.c(0.25);
    let z = f.mul(&z, &quarter);
    let z = f.sel(active, &z, &zero);
    let mu1 = f.add(mu, &one);
    let mu_in = mu.clone();
    let sums = f.b.scf_while(
        &[zero.clone(), one.clone(), one.clone(), one.clone(), one.clone()],
        |c, v| {
            let mut g = F { b: c, ty };
            let eps = g.k(EPS);
            let small = g.mul(&v[2], &eps);
            g.cmp(CmpF::Ogt, &v[1], &small)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (k, t0, s0, t1, s1) = (&v[0], &v[1], &v[2], &v[3], &v[4]);
            let one = g.c(1.0);
            let k = g.add(k, &one);
            // z / (k (mu + k)): two divisions a term, not three (as many roundings).
            let n0 = g.add(&mu_in, &k);
            let d0 = g.mul(&k, &n0);
            let r0 = g.div(&z, &d0);
            let t0 = g.mul(t0, &r0);
            let s0 = g.add(s0, &t0);
            let n1 = g.add(&n0, &one);
            let d1 = g.mul(&k, &n1);
            let r1 = g.div(&z, &d1);
            let t1 = g.mul(t1, &r1);
            let s1 = g.add(s1, &t1);
            vec![k, t0, s0, t1, s1]
        },
    );
    let (g1, g2) = temme_gammas(f, mu);
    let mu_g1 = f.mul(mu, &g1);
    let gampl = f.sub(&g2, &mu_g1);
    let (s_hi, s_lo, _) = sigma(f, mu, x);
    let minus_s = f.neg(&s_hi);
    let e_inv = f.exp(&minus_s);
    let minus_lo = f.neg(&s_lo);
    let e_inv = f.fma(&e_inv, &minus_lo, &e_inv);
    let lead = f.mul(&e_inv, &gampl);
    let i0 = f.mul(&lead, &sums[2]);
    let x2 = f.mul(x, &half);
    let lead1 = f.mul(&lead, &x2);
    let lead1 = f.div(&lead1, &mu1);
    let i1 = f.mul(&lead1, &sums[4]);
    let den = f.fma(&i0, &rho, &i1);
    let den = f.mul(&den, x);
    let ex = f.exp(x);
    let k0 = f.div(&ex, &den);
    let k1 = f.mul(&k0, &rho);
    (k0, k1)
}

/// r = I_n+1(x) / I_n(x), the continued fraction CF1 evaluated from its tail: the
/// downward recurrence r_k-1 = x / (2k + x r_k) from r = 0 at k = n + m. Where x > k the
/// ratios are near 1 and an error at k = n + m shrinks by about (I_n+m / I_n)^2, about
/// exp(-((n+m)^2 - n^2) / x) for large x; m = floor(sqrt(n^2 + 50 x) - n) + 16 makes that below
/// e^-50 (checked against mpmath at 3,000 points up to x = 1e5: 5 ULP at most, the
/// rounding of the steps themselves). Unlike Lentz's forward evaluation, whose product
/// of about x factors collects their rounding (13 ULP seen), this recurrence damps it.
/// Also whether m is within the iteration cap.
/// Lanes where `active` is false skip the loop.
fn i_ratio(f: &mut F, n: &Value, x: &Value, active: &Value) -> (Value, Value) {
    let zero = f.c(0.0);
    let fifty = f.c(50.0);
    let extra = f.c(16.0);
    let nn = f.mul(n, n);
    let t = f.mul(&fifty, x);
    let s = f.add(&nn, &t);
    let s = f.sqrt(&s);
    let s = f.add(&s, n);
    let m = f.div(&t, &s);
    let m = f.floor(&m);
    let m = f.add(&m, &extra);
    let limit = f.k(MAX_ITER);
    let ok = f.cmp(CmpF::Olt, &m, &limit);
    let m = f.sel(&ok, &m, &extra);
    let m = f.sel(active, &m, &zero);
    let (r, _, _) = ratios_down(f, n, &m, x, &zero, false);
    (r, ok)
}

/// The ratios r_j = I_j+1 / I_j from r at j = base + steps down to r at base: r_j-1 =
/// x q_j, q_j = 1 / (2j + x r_j) (no 2j / x to overflow at subnormal x); with `product`,
/// also the product of the q's, I_base+steps / I_base = x^steps prod q, as (p, count),
/// p 2^-count (kept in range by powers of two; each q is at least 1/(2j + 2j), so p q
/// never underflows).
fn ratios_down(f: &mut F, base: &Value, steps: &Value, x: &Value, r: &Value, product: bool) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let ty = f.ty;
    let (base_in, x_in) = (base.clone(), x.clone());
    let done = f.b.scf_while(
        &[steps.clone(), r.clone(), one, zero],
        |c, v| {
            let mut g = F { b: c, ty };
            let zero = g.c(0.0);
            g.cmp(CmpF::Ogt, &v[0], &zero)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (j, r, p, count) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let two = g.c(2.0);
            let nu = g.add(&base_in, j);
            let nu2 = g.mul(&two, &nu);
            let den = g.fma(&x_in, r, &nu2);
            let q = g.div(&one, &den);
            let r = g.mul(&x_in, &q);
            let j = g.sub(j, &one);
            if !product {
                return vec![j, r, p.clone(), count.clone()];
            }
            let p = g.mul(p, &q);
            // Keep p in range: times 2^SCALE below 2^-SCALE.
            let scale = g.k(SCALE);
            let up_factor = g.k(UP);
            let up = g.mul(&p, &up_factor);
            let low = g.k(LOW);
            let is_low = g.cmp(CmpF::Olt, &p, &low);
            let p = g.sel(&is_low, &up, &p);
            let more = g.add(count, &scale);
            let count = g.sel(&is_low, &more, count);
            vec![j, r, p, count]
        },
    );
    (done[1].clone(), done[2].clone(), done[3].clone())
}

/// Hankel's sums (sqrt(2 pi x) ive, sqrt(2x/pi) kve) for x >= 20, x >= n^2; and whether
/// they reached the working precision within HANKEL_TERMS.
fn hankel(f: &mut F, n: &Value, x: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let ty = f.ty;
    let (n_in, x_in) = (n.clone(), x.clone());
    // (k, t, sum_i, sum_k)
    let done = f.b.scf_while(
        &[zero, one.clone(), one.clone(), one],
        |c, v| {
            let mut g = F { b: c, ty };
            let (k, t, si) = (&v[0], &v[1], &v[2]);
            let eps = g.k(EPS);
            let limit = g.c(HANKEL_TERMS);
            let at = g.abs(t);
            let asi = g.abs(si);
            let small = g.mul(&asi, &eps);
            let going = g.cmp(CmpF::Ogt, &at, &small);
            let under = g.cmp(CmpF::Olt, k, &limit);
            g.and(&going, &under)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (k, t, si, sk) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let two = g.c(2.0);
            let eight = g.c(8.0);
            let k = g.add(k, &one);
            // (4n^2 - (2k-1)^2) as (2n - (2k-1)) (2n + (2k-1)): exact zeros at half-integers.
            let minus_one = g.c(-1.0);
            let odd = g.fma(&two, &k, &minus_one);
            let n2 = g.mul(&two, &n_in);
            let lo = g.sub(&n2, &odd);
            let hi = g.add(&n2, &odd);
            let num = g.mul(&lo, &hi);
            let k8 = g.mul(&eight, &k);
            let den = g.mul(&k8, &x_in);
            let ratio = g.div(&num, &den);
            let t = g.mul(t, &ratio);
            let sk = g.add(sk, &t);
            let minus_t = g.neg(&t);
            // (-1)^k t: k odd subtracts.
            let half = g.c(0.5);
            let hk = g.mul(&k, &half);
            let fl = g.floor(&hk);
            let even = g.cmp(CmpF::Oeq, &fl, &hk);
            let signed = g.sel(&even, &t, &minus_t);
            let si = g.add(si, &signed);
            vec![k, t, si, sk]
        },
    );
    let limit = f.c(HANKEL_TERMS);
    let ok = f.cmp(CmpF::Olt, &done[0], &limit);
    (done[2].clone(), done[3].clone(), ok)
}

/// exp(-x) I_n(x) for 0 <= n < inf, 0 < x < I_SERIES_X, as straight-line code: the
/// power series (x/2)^n / Gamma(n + 1) sum_k (x^2/4)^k / (k! (n + 1)_k), nested from its
/// last term (all positive), times exp(n ln(x/2) - x) with the exponent in two floats
/// (`sigma`; up to 745 in size at tiny x) and 1/Gamma(n + 1): `gamma1p_below_10` below
/// 10, else 1/Gamma(n) (Stirling's formula to twice the precision) / n (Gamma(n + 1) at
/// the rounded n + 1 would be 20 ULP off). This replaces, for those lanes, K's upward
/// recurrence, CF1 and the ratios down to mu (about 2 nl + 16 loop steps); an order past
/// the loops' cap is no trouble here (I underflows to 0). f64 code (Stirling's
/// exponential is): float32 runs in f64 on the CPU; targets without f64 math (Vulkan)
/// keep the recurrences.
fn ive_series(f: &mut F, n: &Value, x: &Value) -> Value {
    let one = f.c(1.0);
    let quarter = f.c(0.25);
    let xx = f.mul(x, x);
    let z = f.mul(&xx, &quarter);
    let mut s = one.clone();
    for k in (1..=I_SERIES_TERMS).rev() {
        let kk = f.c(k as f64);
        let nk = f.add(n, &kk);
        let den = f.mul(&nk, &kk);
        let t = f.div(&z, &den);
        s = f.fma(&t, &s, &one);
    }
    // exp(n (ln x - ln 2) - x), ln x to twice the precision (`log_dd` rounds log of the
    // mantissa: times n = 66 that was 17 ULP).
    let (l_hi, l_lo) = log_double(&mut *f.b, x);
    let minus_ln2 = f.c(-LN2_HI.0);
    let (d_hi, d_err) = f.two_sum(&l_hi, &minus_ln2);
    let ln2_lo = f.c(LN2_LO.0);
    let d_lo = f.sub(&l_lo, &ln2_lo);
    let d_lo = f.add(&d_err, &d_lo);
    let (d_hi, d_lo) = f.fast_two_sum(&d_hi, &d_lo);
    let (e_hi, e_err) = f.two_prod(n, &d_hi);
    let e_lo = f.fma(n, &d_lo, &e_err);
    let minus_x = f.neg(x);
    let (e_hi, e_err2) = f.two_sum(&e_hi, &minus_x);
    let e_lo = f.add(&e_lo, &e_err2);
    let (e_hi, e_lo) = f.fast_two_sum(&e_hi, &e_lo);
    let p = exp_double(&mut *f.b, &e_hi, &e_lo);
    // 1/Gamma(n + 1).
    let ten = f.c(10.0);
    let big = f.cmp(CmpF::Oge, n, &ten);
    let n_small = f.sel(&big, &one, n);
    let g_small = gamma1p_below_10(f, &n_small);
    let inv_small = f.div(&one, &g_small);
    let n_big = f.sel(&big, n, &ten);
    let (_, down) = gamma_stirling(f, &n_big);
    let inv_big = f.div(&down, &n_big);
    let inv = f.sel(&big, &inv_big, &inv_small);
    let ps = f.mul(&p, &s);
    f.mul(&ps, &inv)
}

/// exp(x) K_n(x) in the K_SERIES region, as straight-line code: K_n = (pi / (2 sin n
/// pi)) (I_-n - I_n), and I_-n's series times pi / (sin(n pi) Gamma(1 - n)) = Gamma(n)
/// gives Gamma(n)/2 (2/x)^n sum_k (-x^2/4)^k / (k! (n-1) (n-2) ... (n-k)), alternating,
/// the terms with k <= n - 1 (every factor n - j at least 1; the first one left out is of
/// I_n's part's size there, below 4e-18; from n >= 15, x < 1 the 10th term is below
/// 1e-30); at an integer n the sum is the finite part of K_n's expansion and the
/// logarithmic part is of I_n's size, left out too. exp(n (ln 2 - ln x) + x) with the exponent in two floats, Gamma(n) by
/// Stirling's formula to twice the precision: this replaces Temme's series and K's
/// upward recurrence (nl two-float steps). Overflow (of Gamma(n) or of the
/// exponential, both at least 1 here) is the result's own. f64 code.
fn kve_series(f: &mut F, n: &Value, x: &Value) -> Value {
    let one = f.c(1.0);
    let half = f.c(0.5);
    let quarter = f.c(0.25);
    let xx = f.mul(x, x);
    let z = f.mul(&xx, &quarter);
    let mut s = one.clone();
    let zero = f.c(0.0);
    for k in (1..=K_SERIES_TERMS).rev() {
        let kk = f.c(k as f64);
        let nk = f.sub(n, &kk);
        let den = f.mul(&nk, &kk);
        let t = f.div(&z, &den);
        let minus_t = f.neg(&t);
        let used = f.cmp(CmpF::Oge, &nk, &one);
        let minus_t = f.sel(&used, &minus_t, &zero);
        s = f.fma(&minus_t, &s, &one);
    }
    // exp(n (ln 2 - ln x) + x).
    let (l_hi, l_lo) = log_double(&mut *f.b, x);
    let minus_l = f.neg(&l_hi);
    let ln2 = f.c(LN2_HI.0);
    let (d_hi, d_err) = f.two_sum(&ln2, &minus_l);
    let ln2_lo = f.c(LN2_LO.0);
    let d_lo = f.sub(&ln2_lo, &l_lo);
    let d_lo = f.add(&d_err, &d_lo);
    let (d_hi, d_lo) = f.fast_two_sum(&d_hi, &d_lo);
    let (e_hi, e_err) = f.two_prod(n, &d_hi);
    let e_lo = f.fma(n, &d_lo, &e_err);
    let (e_hi, e_err2) = f.two_sum(&e_hi, x);
    let e_lo = f.add(&e_lo, &e_err2);
    let (e_hi, e_lo) = f.fast_two_sum(&e_hi, &e_lo);
    let p = exp_double(&mut *f.b, &e_hi, &e_lo);
    // Gamma(n): below 10 Gamma(1 + (n - 1)) (n - 1 exact for n >= 2), else Stirling's.
    let ten = f.c(10.0);
    let big = f.cmp(CmpF::Oge, n, &ten);
    let two = f.c(2.0);
    let n_small = f.sel(&big, &two, n);
    let n_small = f.sub(&n_small, &one);
    let g_small = gamma1p_below_10(f, &n_small);
    let n_big = f.sel(&big, n, &ten);
    let (g_big, _) = gamma_stirling(f, &n_big);
    let gamma_n = f.sel(&big, &g_big, &g_small);
    let g = f.mul(&gamma_n, &half);
    let g = f.mul(&g, &s);
    f.mul(&g, &p)
}

/// ive(n, x) and kve(n, x) for 0 <= n < inf and 0 < x < inf (`want_i`: I too; without it
/// `i` is a stand-in).
///
/// The regions are `scf.if` branches, not selects over every region's result: the loops
/// already keep IREE from vectorizing this kernel, so each element runs as scalar code,
/// and with branches it runs only its own region's code (with selects a Hankel lane paid
/// for Temme's series, the Wronskian's logarithms and the rest too: ive(2.5, 3000) took
/// 1.0 us against scipy's 0.15).
fn ik(f: &mut F, n: &Value, x: &Value, want_i: bool, i_only: Option<&Value>) -> Ik {
    // Hankel's region, x >= max(32, n^2).
    let hx = f.c(HANKEL_X);
    let n2 = f.mul(n, n);
    let bound = f.b.arith(Arith::MaximumF, &hx, &n2);
    let in_hankel = f.cmp(CmpF::Oge, x, &bound);
    let ty = f.ty;
    let types = [ty, ty, ScalarType::I1];
    let out = f.b.scf_if(
        &in_hankel,
        &types,
        |b| {
            let r = ik_hankel(&mut F { b, ty }, n, x, want_i);
            vec![r.i, r.k, r.ok]
        },
        |b| {
            let f = &mut F { b, ty };
            // Lanes that want I alone, below I_SERIES_X: I's power series (K is a stand-in);
            // kve from order K_SERIES_N below K_SERIES_X: I_-n's series (`kve_series`).
            // f64 code, so not where f32 has no f64 math.
            let series = match i_only {
                Some(lanes) if f.f64() => {
                    let s_x = f.c(I_SERIES_X);
                    let small = f.cmp(CmpF::Olt, x, &s_x);
                    f.and(&small, lanes)
                }
                None if f.f64() && !want_i => kve_series_lanes(f, n, x),
                _ => {
                    let r = ik_general(f, n, x, want_i);
                    return vec![r.i, r.k, r.ok];
                }
            };
            f.b.scf_if(
                &series,
                &types,
                |b| {
                    let f = &mut F { b, ty };
                    let zero = f.c(0.0);
                    let yes = f.b.constant_int(1, ScalarType::I1);
                    if want_i {
                        vec![ive_series(f, n, x), zero, yes]
                    } else {
                        vec![zero, kve_series(f, n, x), yes]
                    }
                },
                |b| {
                    let r = ik_general(&mut F { b, ty }, n, x, want_i);
                    vec![r.i, r.k, r.ok]
                },
            )
        },
    );
    Ik { i: out[0].clone(), k: out[1].clone(), ok: out[2].clone() }
}

/// `ik` outside Hankel's region and the power series' lanes: Debye's expansions
/// (bessel_debye.rs) from order DEBYE_N on, else the recurrences. The loops pass their cap
/// from order 1e5 on, or where CF1's depth, about sqrt(n^2 + 50 x) - n, does (n > 14,000
/// outside Hankel's region; 1e4 and 1400 in f32), nan there before; and on the way to it
/// they lose accuracy (ive(39305.1, 2.833e8) 10.2 ULP, Debye's 0.7) and time (n steps).
fn ik_general(f: &mut F, n: &Value, x: &Value, want_i: bool) -> Ik {
    let from = f.k(DEBYE_N);
    let debye = f.cmp(CmpF::Oge, n, &from);
    let ty = f.ty;
    let out = f.b.scf_if(
        &debye,
        &[ty, ty, ScalarType::I1],
        |b| {
            let f = &mut F { b, ty };
            // K_SCALE as a shift of K's exponent.
            let k_shift = if !want_i { 0.0 } else if f.f64() { K_SCALE.0.ln() } else { K_SCALE.1.ln() };
            let (i, k) = debye_ik(f, n, x, k_shift);
            vec![i, k, f.b.constant_int(1, ScalarType::I1)]
        },
        |b| {
            let r = ik_recurrences(&mut F { b, ty }, n, x, want_i);
            vec![r.i, r.k, r.ok]
        },
    );
    Ik { i: out[0].clone(), k: out[1].clone(), ok: out[2].clone() }
}

/// Where kve's value is I_-n's series (`kve_series`): below K_SERIES' bounds of x for
/// orders from theirs.
fn kve_series_lanes(f: &mut F, n: &Value, x: &Value) -> Value {
    let mut series = f.b.constant_int(0, ScalarType::I1);
    for (order, below) in K_SERIES {
        let s_x = f.c(below);
        let small = f.cmp(CmpF::Olt, x, &s_x);
        let s_n = f.c(order);
        let large = f.cmp(CmpF::Oge, n, &s_n);
        let here = f.and(&small, &large);
        series = f.or(&series, &here);
    }
    series
}

/// `ik` in Hankel's region, x >= max(32, n^2).
fn ik_hankel(f: &mut F, n: &Value, x: &Value, want_i: bool) -> Ik {
    let (si, sk, ok) = hankel(f, n, x);
    let root = f.sqrt(x);
    let ci = f.c(INV_SQRT_2PI);
    let ck = f.c(SQRT_PI_2);
    let i = f.mul(&si, &ci);
    let i = f.div(&i, &root);
    let k = f.mul(&sk, &ck);
    let k = f.div(&k, &root);
    let k = if want_i {
        let k_scale = f.k(K_SCALE);
        f.mul(&k, &k_scale)
    } else {
        k
    };
    let i = if want_i { i } else { f.c(0.0) };
    Ik { i, k, ok }
}

/// exp(x) K_mu(x) and exp(x) K_mu+1(x), |mu| <= 1/2, 0 < x < inf: Temme below 1/2,
/// `k_mid` up to 20, Hankel's from 20, each in its own branch; and whether the loops
/// finished.
fn k_mu(f: &mut F, mu: &Value, x: &Value) -> (Value, Value, Value) {
    let ty = f.ty;
    let types = [ty, ty, ScalarType::I1];
    let t_x = f.c(TEMME_X);
    let is_temme = f.cmp(CmpF::Olt, x, &t_x);
    let out = f.b.scf_if(
        &is_temme,
        &types,
        |b| {
            let mut g = F { b, ty };
            let active = g.b.constant_int(1, ScalarType::I1);
            let (k0, k1, ok) = k_temme(&mut g, mu, x, &active);
            vec![k0, k1, ok]
        },
        |b| {
            let mut g = F { b, ty };
            let s_x = g.c(HANKEL_MU_X);
            let is_hankel_mu = g.cmp(CmpF::Oge, x, &s_x);
            g.b.scf_if(
                &is_hankel_mu,
                &types,
                |b| {
                    let mut g = F { b, ty };
                    let one = g.c(1.0);
                    let ck = g.c(SQRT_PI_2);
                    let (_, sk0, ok0) = hankel(&mut g, mu, x);
                    let mu1 = g.add(mu, &one);
                    let (_, sk1, ok1) = hankel(&mut g, &mu1, x);
                    let ok = g.and(&ok0, &ok1);
                    let root = g.sqrt(x);
                    let k0 = g.mul(&sk0, &ck);
                    let k0 = g.div(&k0, &root);
                    let k1 = g.mul(&sk1, &ck);
                    let k1 = g.div(&k1, &root);
                    vec![k0, k1, ok]
                },
                |b| {
                    let mut g = F { b, ty };
                    let active = g.b.constant_int(1, ScalarType::I1);
                    let (k0, k1) = k_mid(&mut g, mu, x, &active);
                    vec![k0, k1, active]
                },
            )
        },
    );
    (out[0].clone(), out[1].clone(), out[2].clone())
}

/// `ik` outside Hankel's region: K_mu, K_mu+1 (`k_mu`), K upward to K_n, and I from CF1
/// and the Wronskian (see the module comment).
fn ik_recurrences(f: &mut F, n: &Value, x: &Value, want_i: bool) -> Ik {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    // n = nl + mu; nl past the cap is left to the nan of `ok`.
    let limit = f.k(MAX_ITER);
    let nh = f.add(n, &half);
    let nl = f.floor(&nh);
    let too_many = f.cmp(CmpF::Ogt, &nl, &limit);
    let nl = f.sel(&too_many, &zero, &nl);
    let n_r = f.sel(&too_many, &zero, n);
    let x_r = x.clone();
    let mu = f.sub(&n_r, &nl);
    let (k0, k1, mu_ok) = k_mu(f, &mu, &x_r);
    let k_scale = if want_i { f.k(K_SCALE) } else { one.clone() };
    let k0_s = f.mul(&k0, &k_scale);
    let k1_s = f.mul(&k1, &k_scale);
    // Upward to K_n, stopping where it overflows; in two floats (each step's roundings
    // would otherwise add up: kve(33.8, 0.345), 34 steps, was 8 ULP off).
    let ty = f.ty;
    let (mu_in, x_in, nl_in) = (mu.clone(), x_r.clone(), nl.clone());
    // 1/x once: the steps' two divisions by x were most of a step's time (the chain
    // through K does not wait on them, but they queued on the divider).
    let inv_x = f.div(&one, &x_r);
    let up = f.b.scf_while(
        &[zero.clone(), k0_s, zero.clone(), k1_s, zero.clone()],
        |c, v| {
            let mut g = F { b: c, ty };
            let inf = g.c(f64::INFINITY);
            let (j, b) = (&v[0], &v[3]);
            let going = g.cmp(CmpF::Olt, j, &nl_in);
            let finite = g.cmp(CmpF::Olt, b, &inf);
            g.and(&going, &finite)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (j, a_hi, a_lo, b_hi, b_lo) = (&v[0], &v[1], &v[2], &v[3], &v[4]);
            let one = g.c(1.0);
            let two = g.c(2.0);
            let zero = g.c(0.0);
            let inf = g.c(f64::INFINITY);
            let j = g.add(j, &one);
            let nu = g.add(&mu_in, &j);
            let nu2 = g.mul(&two, &nu);
            // c = 2 nu / x as c_hi + c_lo: c_hi need not be the rounded quotient, the
            // remainder (exact, an fma) times 1/x corrects it to about 2^-105 relative.
            let c_hi = g.mul(&nu2, &inv_x);
            let minus_c = g.neg(&c_hi);
            let rem = g.fma(&minus_c, &x_in, &nu2);
            let c_lo = g.mul(&rem, &inv_x);
            // c b + a.
            let (p, pe) = g.two_prod(&c_hi, b_hi);
            let pe = g.fma(&c_hi, b_lo, &pe);
            let pe = g.fma(&c_lo, b_hi, &pe);
            let (s, se) = g.two_sum(&p, a_hi);
            let low = g.add(&pe, a_lo);
            let se = g.add(&se, &low);
            let (n_hi, n_lo) = g.fast_two_sum(&s, &se);
            // Past overflow (or 2 nu / x itself infinite at subnormal x): inf.
            let finite = g.cmp(CmpF::Olt, &n_hi, &inf);
            let n_hi = g.sel(&finite, &n_hi, &inf);
            let n_lo = g.sel(&finite, &n_lo, &zero);
            vec![j, b_hi.clone(), b_lo.clone(), n_hi, n_lo]
        },
    );
    let inf = f.c(f64::INFINITY);
    let reached = f.cmp(CmpF::Oge, &up[0], &nl);
    let k_n = f.add(&up[1], &up[2]);
    let k = f.sel(&reached, &k_n, &inf);
    let not_too_many = f.not(&too_many);
    let mut ok = f.and(&mu_ok, &not_too_many);
    let i = if want_i {
        let active = f.b.constant_int(1, ScalarType::I1);
        let (r, r_ok) = i_ratio(f, &n_r, &x_r, &active);
        ok = f.and(&ok, &r_ok);
        // Where K_n+1 is finite, the Wronskian at n itself: the upward recurrence of K
        // keeps its accuracy over many steps, the product of nl ratios does not (2e-15 at
        // ive(100, 1000), against 2e-16 so). Only the other lanes run the ratios down
        // to mu (nl steps) and their product's logarithms.
        let den_n = f.fma(&r, &up[1], &up[3]);
        let den_lo = f.fma(&r, &up[2], &up[4]);
        let den_n = f.add(&den_n, &den_lo);
        let den_n = f.mul(&den_n, &x_r);
        let finite = f.cmp(CmpF::Olt, &den_n, &inf);
        let tiny = f.k(TINY_X);
        let is_tiny = f.cmp(CmpF::Olt, &x_r, &tiny);
        let not_tiny = f.not(&is_tiny);
        let use_w = f.and(&finite, &reached);
        let use_w = f.and(&use_w, &not_tiny);
        f.b.scf_if(
            &use_w,
            &[ty],
            |b| vec![F { b, ty }.div(&k_scale, &den_n)],
            |b| {
                let f = &mut F { b, ty };
                let one = f.c(1.0);
                let (r_mu, p, count) = ratios_down(f, &mu, &nl, &x_r, &r, true);
                // exp(-x) I_mu = 1 / (x (K_mu+1 + r_mu K_mu)), or the series' start for tiny x.
                let den = f.fma(&r_mu, &k0, &k1);
                let den = f.mul(&den, &x_r);
                let i_mu = f.div(&one, &den);
                let (g1, g2) = temme_gammas(f, &mu);
                let mu_g1 = f.mul(&mu, &g1);
                let gampl = f.sub(&g2, &mu_g1);
                let (s_hi, s_lo, _) = sigma(f, &mu, &x_r);
                let minus_s = f.neg(&s_hi);
                let e_inv = f.exp(&minus_s);
                let minus_lo = f.neg(&s_lo);
                let e_inv = f.fma(&e_inv, &minus_lo, &e_inv);
                let xx = f.mul(&x_r, &x_r);
                let mu1 = f.add(&mu, &one);
                let four = f.c(4.0);
                let den = f.mul(&four, &mu1);
                let corr = f.div(&xx, &den);
                let lead = f.mul(&e_inv, &gampl);
                let series = f.fma(&lead, &corr, &lead);
                let mx = f.neg(&x_r);
                let emx = f.exp(&mx);
                let series = f.mul(&series, &emx);
                let tiny = f.k(TINY_X);
                let is_tiny = f.cmp(CmpF::Olt, &x_r, &tiny);
                let i_mu = f.sel(&is_tiny, &series, &i_mu);
                // I_n = I_mu p 2^-count x^nl, as exp of the sum of the logarithms in two floats:
                // x^nl alone underflows long before the result does (ive(1.76, 3e-174) = 3.6e-307).
                let (a_hi, a_lo) = log_dd(f, &i_mu);
                let (b_hi, b_lo) = log_dd(f, &p);
                let (lx_hi, lx_lo) = log_dd(f, &x_r);
                let (c_hi, c_e) = f.two_prod(&nl, &lx_hi);
                let c_lo = f.fma(&nl, &lx_lo, &c_e);
                let minus_count = f.neg(&count);
                let (d_hi, d_lo) = f.mul_split(&minus_count, LN2_HI, LN2_LO);
                let (s_hi, s_lo) = dd_add(f, (&a_hi, &a_lo), (&b_hi, &b_lo));
                let (s_hi, s_lo) = dd_add(f, (&s_hi, &s_lo), (&c_hi, &c_lo));
                let (s_hi, s_lo) = dd_add(f, (&s_hi, &s_lo), (&d_hi, &d_lo));
                let e = f.exp(&s_hi);
                let i_n = f.fma(&e, &s_lo, &e);
                vec![i_n]
            },
        )
        .remove(0)
    } else {
        zero.clone()
    };
    Ik { i, k, ok }
}

/// a + b for numbers in two floats (hi, lo), to about twice the precision.
pub(super) fn dd_add(f: &mut F, a: (&Value, &Value), b: (&Value, &Value)) -> (Value, Value) {
    let (s, e) = f.two_sum(a.0, b.0);
    let lo = f.add(a.1, b.1);
    let e = f.add(&e, &lo);
    f.fast_two_sum(&s, &e)
}

/// Whether `v` is an integer (false for nan and infinities).
pub(super) fn is_integer(f: &mut F, v: &Value) -> Value {
    let fl = f.floor(v);
    let inf = f.c(f64::INFINITY);
    let a = f.abs(v);
    let finite = f.cmp(CmpF::Olt, &a, &inf);
    let same = f.cmp(CmpF::Oeq, &fl, v);
    f.and(&same, &finite)
}

/// Whether the integer-valued `v` is odd.
pub(super) fn is_odd(f: &mut F, v: &Value) -> Value {
    let half = f.c(0.5);
    let h = f.mul(v, &half);
    let fl = f.floor(&h);
    f.cmp(CmpF::Une, &fl, &h)
}

/// sin(n pi) for 0 <= n < inf: (-1)^nl sin(mu pi), n = nl + mu, so 0 at the integers.
pub(super) fn sin_pi(f: &mut F, n: &Value) -> Value {
    sin_cos_pi(f, n).0
}

/// (sin(n pi), cos(n pi)) for 0 <= n < inf: (-1)^nl (sin(mu pi), cos(mu pi)), n = nl + mu,
/// |mu| <= 1/2, so sin is 0 at the integers and cos at the half-integers.
pub(super) fn sin_cos_pi(f: &mut F, n: &Value) -> (Value, Value) {
    let half = f.c(0.5);
    let nh = f.add(n, &half);
    let nl = f.floor(&nh);
    let mu = f.sub(n, &nl);
    let pi = f.c(std::f64::consts::PI);
    let pimu = f.mul(&pi, &mu);
    let s = trig::sin(f.b, &pimu);
    let c = trig::cos(f.b, &pimu);
    let odd = is_odd(f, &nl);
    let minus_s = f.neg(&s);
    let minus_c = f.neg(&c);
    (f.sel(&odd, &minus_s, &s), f.sel(&odd, &minus_c, &c))
}

/// The lanes where the order `n` = |v| is finite and the argument `y` positive and
/// finite, where the algorithms run, and (n, y) there, (0, 1) elsewhere (a point every
/// algorithm takes without a long loop; the callers set those lanes' values).
/// Returns (regular, n finite, y finite, n_r, y_r).
pub(super) fn regular_lanes(f: &mut F, n: &Value, y: &Value) -> (Value, Value, Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let inf = f.c(f64::INFINITY);
    let n_fin = f.cmp(CmpF::Olt, n, &inf);
    let y_pos = f.cmp(CmpF::Ogt, y, &zero);
    let y_fin = f.cmp(CmpF::Olt, y, &inf);
    let regular = f.and(&n_fin, &y_pos);
    let regular = f.and(&regular, &y_fin);
    let n_r = f.sel(&regular, n, &zero);
    let y_r = f.sel(&regular, y, &one);
    (regular, n_fin, y_fin, n_r, y_r)
}

/// What J_v and I_v of real orders share about their arguments: |v| and |x|, the lanes
/// their algorithms run on (see [`regular_lanes`]), and whether a negative order is
/// reflected (a non-integer one: J_-n = (-1)^n J_n and I_-n = I_n need no reflection).
pub(super) struct RealOrder {
    pub regular: Value,
    regular_n: Value,
    a_fin: Value,
    pub n_r: Value,
    pub a_r: Value,
    v_int: Value,
    pub negative_v: Value,
    not_int: Value,
    pub use_reflection: Value,
}

impl RealOrder {
    pub(super) fn new(f: &mut F, v: &Value, x: &Value) -> Self {
        let zero = f.c(0.0);
        let n = f.abs(v);
        let a = f.abs(x);
        let (regular, regular_n, a_fin, n_r, a_r) = regular_lanes(f, &n, &a);
        let v_int = is_integer(f, v);
        let negative_v = f.cmp(CmpF::Olt, v, &zero);
        let not_int = f.not(&v_int);
        let use_reflection = f.and(&negative_v, &not_int);
        RealOrder { regular, regular_n, a_fin, n_r, a_r, v_int, negative_v, not_int, use_reflection }
    }

    /// `r` (valid where `ok`) with the values at the arguments the algorithms do not
    /// take: x = 0, infinite x or v, negative x (the sign (-1)^v for an integer v,
    /// flipped once more where `flip` holds; nan for other orders), nan.
    pub(super) fn special_values(&self, f: &mut F, v: &Value, x: &Value, r: &Value, ok: &Value, flip: Option<&Value>) -> Value {
        let (zero, one) = (f.c(0.0), f.c(1.0));
        let (inf, nan) = (f.c(f64::INFINITY), f.c(f64::NAN));
        let ok = f.and(ok, &self.regular);
        let r = f.sel(&ok, r, &nan);
        // x = 0: 1 at v = 0; 0 for v > 0 or an integer; else +-inf by the sign of
        // 1/Gamma(1 + v) (+ where floor(v) is odd).
        let v_zero = f.cmp(CmpF::Oeq, v, &zero);
        let fl = f.floor(v);
        let fl_odd = is_odd(f, &fl);
        let minus_inf = f.c(f64::NEG_INFINITY);
        let pole = f.sel(&fl_odd, &inf, &minus_inf);
        let at_zero = f.sel(&self.use_reflection, &pole, &zero);
        let at_zero = f.sel(&v_zero, &one, &at_zero);
        let x_zero = f.cmp(CmpF::Oeq, x, &zero);
        let r = f.sel(&x_zero, &at_zero, &r);
        // x = +-inf (v finite) and v = +inf (x finite): 0.
        let x_inf = f.not(&self.a_fin);
        let x_inf = f.and(&x_inf, &self.regular_n);
        let v_inf = f.cmp(CmpF::Oeq, v, &inf);
        let v_inf = f.and(&v_inf, &self.a_fin);
        let to_zero = f.or(&x_inf, &v_inf);
        let r = f.sel(&to_zero, &zero, &r);
        // x < 0 with an integer order: (-1)^v.
        let x_neg = f.cmp(CmpF::Olt, x, &zero);
        let odd = is_odd(f, v);
        let odd = f.and(&odd, &self.v_int);
        let flips = match flip {
            Some(c) => f.b.arith(Arith::XOrI, &x_neg, c),
            None => x_neg.clone(),
        };
        let flip = f.and(&flips, &odd);
        let minus_r = f.neg(&r);
        let r = f.sel(&flip, &minus_r, &r);
        // x < 0 with a non-integer order, and v = -inf: nan (so too nan arguments).
        let bad_x = f.and(&x_neg, &self.not_int);
        let v_minus_inf = f.cmp(CmpF::Oeq, v, &minus_inf);
        let bad = f.or(&bad_x, &v_minus_inf);
        let r = f.sel(&bad, &nan, &r);
        let r = f.keep_nan(v, &r);
        f.keep_nan(x, &r)
    }
}

/// Stage one of ive (vector code): the value where I's power series serves (`ik`'s
/// series lanes: regular arguments, |x| < I_SERIES_X, no reflection; f64 code), and 1
/// there, 0 elsewhere. Most of the benchmark's points (about 58%) are such lanes, which as
/// scalar code in `ik`'s branch ran the series one element at a time.
fn ive_where_series(b: &mut Block, args: &[Value], _: &[Value]) -> Vec<Value> {
    series_stage(b, args, |f, v, x| {
        let o = RealOrder::new(f, v, x);
        let s_x = f.c(I_SERIES_X);
        let small = f.cmp(CmpF::Olt, &o.a_r, &s_x);
        let i_only = f.not(&o.use_reflection);
        let served = f.and(&small, &i_only);
        let served = f.and(&served, &o.regular);
        let series = ive_series(f, &o.n_r, &o.a_r);
        let yes = f.b.constant_int(1, ScalarType::I1);
        (o.special_values(f, v, x, &series, &yes, None), served)
    })
}

/// A first stage of the arguments (v, x): `body`'s (value, where it serves), as the
/// value and 1 or 0; f64 code only (elsewhere it serves no lane).
fn series_stage(b: &mut Block, args: &[Value], body: impl FnOnce(&mut F, &Value, &Value) -> (Value, Value)) -> Vec<Value> {
    let mut f = F::new(b, &args[1]);
    let f = &mut f;
    let zero = f.c(0.0);
    if !f.f64() {
        return vec![zero.clone(), zero];
    }
    let (r, served) = body(f, &args[0], &args[1]);
    let one = f.c(1.0);
    let flag = f.sel(&served, &one, &zero);
    vec![r, flag]
}

/// Stage two of ive (scalar code): the other lanes.
fn ive_elsewhere(b: &mut Block, args: &[Value], carried: &[Value]) -> Vec<Value> {
    vec![unless_served(b, args, carried, ive_unstaged)]
}

/// Stage one's value (`carried`: the value, 1 where it serves) or `whole` of the arguments
/// (v, x), as an `scf.if`: the lanes stage one served skip it.
fn unless_served(b: &mut Block, args: &[Value], carried: &[Value], whole: fn(&mut Block, &Value, &Value) -> Value) -> Value {
    let ty = args[1].scalar();
    let mut f = F { b, ty };
    let half = f.c(0.5);
    let served = f.cmp(CmpF::Ogt, &carried[1], &half);
    let (v, x) = (args[0].clone(), args[1].clone());
    branch(&mut f, &served, |_| carried[0].clone(), |g| whole(g.b, &v, &x))
}

/// ive in two stages (`Stage`).
pub const IVE: [Stage; 2] = [Stage { yields: 2, run: ive_where_series }, Stage { yields: 1, run: ive_elsewhere }];

/// `ive(v, x) = exp(-|x|) I_v(x)`.
pub fn ive(b: &mut Block, v: &Value, x: &Value) -> Value {
    run_stages(b, &IVE, &[v.clone(), x.clone()])
}

/// ive in one kernel.
fn ive_unstaged(b: &mut Block, v: &Value, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let two = f.c(2.0);
    let o = RealOrder::new(f, v, x);
    // (Only the reflection needs K.)
    let i_only = f.not(&o.use_reflection);
    let parts = ik(f, &o.n_r, &o.a_r, true, Some(&i_only));
    // I_-n = I_n + (2/pi) sin(n pi) K_n: in scaled terms, + (2/pi) sin(n pi) kve e^-2x.
    let s = sin_pi(f, &o.n_r);
    let c = f.c(2.0 / std::f64::consts::PI);
    let cs = f.mul(&c, &s);
    let minus_2a = f.mul(&o.a_r, &two);
    let minus_2a = f.neg(&minus_2a);
    let e = f.exp(&minus_2a);
    let ke = f.mul(&parts.k, &e);
    let term = f.mul(&cs, &ke);
    let unscale = f.k(K_UNSCALE);
    let reflected = f.fma(&term, &unscale, &parts.i);
    let r = f.sel(&o.use_reflection, &reflected, &parts.i);
    o.special_values(f, v, x, &r, &parts.ok, None)
}

/// Stage one of kve (vector code): the value where I_-n's series serves (`ik`'s kve
/// series lanes: regular arguments below K_SERIES' bounds; f64 code), and 1 there, 0
/// elsewhere.
fn kve_where_series(b: &mut Block, args: &[Value], _: &[Value]) -> Vec<Value> {
    series_stage(b, args, |f, v, x| {
        let n = f.abs(v);
        let (regular, _, _, n_r, x_r) = regular_lanes(f, &n, x);
        let served = kve_series_lanes(f, &n_r, &x_r);
        let served = f.and(&served, &regular);
        (kve_series(f, &n_r, &x_r), served)
    })
}

/// Stage two of kve (scalar code): the other lanes.
fn kve_elsewhere(b: &mut Block, args: &[Value], carried: &[Value]) -> Vec<Value> {
    vec![unless_served(b, args, carried, kve_unstaged)]
}

/// kve in two stages (`Stage`).
pub const KVE: [Stage; 2] = [Stage { yields: 2, run: kve_where_series }, Stage { yields: 1, run: kve_elsewhere }];

/// `kve(v, x) = exp(x) K_v(x)`.
pub fn kve(b: &mut Block, v: &Value, x: &Value) -> Value {
    run_stages(b, &KVE, &[v.clone(), x.clone()])
}

/// kve in one kernel.
fn kve_unstaged(b: &mut Block, v: &Value, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let zero = f.c(0.0);
    let inf = f.c(f64::INFINITY);
    let nan = f.c(f64::NAN);
    let n = f.abs(v);
    let (regular, regular_n, x_fin, n_r, x_r) = regular_lanes(f, &n, x);
    let parts = ik(f, &n_r, &x_r, false, None);
    let ok = f.and(&parts.ok, &regular);
    let r = f.sel(&ok, &parts.k, &nan);
    // x = +inf: 0 for a finite order; v = +-inf: inf for 0 < x < inf; x = 0: inf.
    let x_inf = f.cmp(CmpF::Oeq, x, &inf);
    let to_zero = f.and(&x_inf, &regular_n);
    let r = f.sel(&to_zero, &zero, &r);
    let n_inf = f.not(&regular_n);
    let to_inf = f.and(&n_inf, &x_fin);
    let x_zero = f.cmp(CmpF::Oeq, x, &zero);
    let to_inf = f.or(&to_inf, &x_zero);
    let r = f.sel(&to_inf, &inf, &r);
    // x < 0 (and nan arguments): nan.
    let x_neg = f.cmp(CmpF::Olt, x, &zero);
    let r = f.sel(&x_neg, &nan, &r);
    let r = f.keep_nan(v, &r);
    f.keep_nan(x, &r)
}
