//! The Bessel function of the first kind of real order, PyTensor's (and scipy's) `jv(v, x)`.
//!
//! ## The method (Temme 1975, Steed's CF2 as in Barnett et al. 1974, as Numerical Recipes'
//! `bessjy` describes them; written here in our own code)
//!
//! For an order n >= 0 and 0 < x < inf, n = nl + mu, nl = floor(n + 1/2), |mu| <= 1/2:
//!
//! - Hankel's region, x >= max(32, n^2 / 6): J_n = sqrt(2/(pi x)) (P cos chi - Q sin chi) and
//!   Y_n = sqrt(2/(pi x)) (P sin chi + Q cos chi), chi = x - (n/2 + 1/4) pi, P and Q the
//!   even and odd terms of sum a_k (i/x)^k, a_k = prod_{j<=k} (4n^2 - (2j-1)^2) / (8j)
//!   (about (n^2 / 2x)^k / k!: at most 3^k / k!, the sum's cancellation costs at most 6 ULP
//!   in a float64 model, against 6000 ULP for the recurrences at x = n^2 / 4, n = 300:
//!   their rounding grows with the number of steps, about x, where J oscillates). cos chi
//!   and sin chi from cos x and sin x (trig.rs's reduction) and the phase's cos and sin of
//!   pi t, t = n/2 + 1/4 mod 2: near the zeros the error is absolute, about an ulp of the
//!   amplitude. The expansion holds for negative orders as they are (the phase with -n).
//! - Else, below x = 1e-8 (1e-4 in f32): J_n = (x/2)^n / Gamma(n + 1) (1 - x^2 / (4 (n +
//!   1))), and J_-n likewise (`j_tiny`), as the exponential of a sum of logarithms in two floats: (x/2)^n as exp(-n
//!   ln(2/x)), 1/Gamma(n + 1) as 1/Gamma(1 + mu) (Temme's gamma series) times the product
//!   of 1/(mu + j), j = 1..nl, kept in range by powers of two. (The ratios J_j / J_j-1 =
//!   x / (2j) to a relative x^2 there.)
//! - Else: the ratio r = J_n+1 / J_n by the continued fraction CF1, evaluated from its tail
//!   in two floats (`cf1`; the sign of J_n from the signs of the ratios);
//!   from u_n = 1, u_n+1 = r the downward recurrence u_j-1 = 2j/x u_j - u_j+1 (stable for
//!   J; in two floats) to u_mu, u_mu+1, kept in range by powers of two. Then J_mu's true
//!   scale: below x = 1 from J_mu's own series; else from the Wronskian J Y' - J' Y =
//!   2/(pi x), below x = 2 with Y_mu and Y_mu+1 from Temme's series,
//!   from 2 on with p + iq = (J' + iY') / (J + iY) from Steed's complex continued fraction
//!   CF2, where J_mu = sign sqrt(W q / (q^2 + (p - f)^2)), f = J'_mu / J_mu (written without
//!   dividing by u_mu, so no trouble at J_mu's zeros). J_n = J_mu / u_mu times the powers
//!   of two.
//! - Where the bound |J_n(x)| <= (x/2)^n / Gamma(n + 1) <= (e x / (2n))^n underflows: 0
//!   (no loop runs for those: jv(1e6, 5) = 0).
//!
//! The loops are `scf.while` loops with an iteration cap (1e5, 1e4 in f32): CF1 takes
//! about max(x - n, 0) + 8 x^(1/3) + 20 steps and the recurrence nl, so outside Hankel's
//! region (x < n^2 / 6) they serve x - n below 0.9 times the cap and orders up to it. Past
//! that, Debye's expansions (bessel_debye.rs, straight-line); in their transition region
//! |x - n| < about 24 n^(1/3) (for n past the cap) Debye's at the order x + 25 x^(1/3) just
//! past it, and CF1 and the downward recurrence back to n (`debye_or_shifted`: about 50
//! n^(1/3) steps, so up to n ~ 8e9; nan past that, never a wrong value). Y_n (for J_-n)
//! by Debye's outside the transition region, in it by Debye's just before it on the
//! oscillatory side and the upward recurrence (stable for Y) to n.
//!
//! ## Negative orders and special values (as scipy, except where it has no value)
//!
//! - J_-n = cos(n pi) J_n - sin(n pi) Y_n, Y_n by the upward recurrence Y_j+1 = 2j/x Y_j -
//!   Y_j-1 from Y_mu and Y_mu+1 (stable for Y; scaled by 2^-64, -inf once it overflows
//!   even so); Hankel's region and tiny x give J_-n directly; past the loops' cap, Debye's Y_n
//!   (`debye_or_shifted`); an integer n gives (-1)^n J_n.
//! - x < 0: an integer order gives (-1)^v J_v(|x|), any other nan.
//! - x = 0: jv(0, 0) = 1, 0 for v > 0 and the negative integers, +-inf for the other
//!   negative orders (the sign of 1/Gamma(1 + v), as scipy).
//! - x = +-inf: 0 (scipy: nan; the limit; nan for x = -inf and a non-integer order).
//!   v = +inf: 0 for finite x (as scipy); v = -inf: nan (scipy 0: J_-v has no limit).
//!   A nan argument gives nan.

use super::bessel_debye::{debye_jy, debye_reaches};
use super::bessel_real::{dd_add, sigma, sin_cos_pi, temme_gammas, RealOrder};
use super::exp_log::{cosh, log_dd, sinh, LN2_HI, LN2_LO};
use super::trig;
use super::{PerType, F};
use crate::mlir::{Arith, Block, CmpF, ScalarType, Value};

/// The unit roundoff per type: the loops stop once a term changes the sum by less.
const EPS: PerType = (1.1102230246251565e-16, 5.960464477539063e-08);
/// The loops' iteration cap per type.
const MAX_ITER: PerType = (100000.0, 10000.0);
/// Temme's series for Y below TEMME_X, Steed's CF2 from it.
const TEMME_X: f64 = 2.0;
/// J_mu by its power series below SERIES_X (SERIES_TERMS terms: (x^2/4)^k / (k! (mu + 1)_k)
/// is below 1e-19 from k = 10 on there).
const SERIES_X: f64 = 1.0;
const SERIES_TERMS: usize = 12;
/// Hankel's expansions from x >= max(HANKEL_X, n^2 / 6), at most HANKEL_TERMS terms (the
/// terms near (n^2 / 2x)^k / k! there: about 30 reach 1e-17).
const HANKEL_X: f64 = 32.0;
const HANKEL_TERMS: f64 = 64.0;
/// Debye's expansions (bessel_debye.rs) where x - n passes DEBYE_FROM times the cap (CF1's
/// depth is about x - n + 13 x^(1/3) there) or the order the cap itself.
const DEBYE_FROM: f64 = 0.9;
/// In Debye's transition region their order is moved to x + SHIFT x^(1/3), where p^3 / v is
/// at most 2.9e-3 for x past 9e3 (their bound 3e-3; see `debye_or_shifted`).
const SHIFT: f64 = 25.0;
/// Below this x, J_n is its series' first two terms.
const TINY_X: PerType = (1e-8, 1e-4);
/// A stand-in for a zero denominator in Lentz's and Steed's evaluations.
const FPMIN: PerType = (1e-300, 1e-30);
/// The recurrences are kept below 2^SCALE (UP) by multiplying by 2^-SCALE (LOW); a count
/// of UNDER_COUNT such steps or more means that J_n underflows (|J_mu| < 2^512, 2^76 in
/// f32).
const SCALE: PerType = (600.0, 40.0);
const UP: PerType = (4.149515568880993e+180, 1099511627776.0);
const LOW: PerType = (2.409919865102884e-181, 9.094947017729282e-13);
const UNDER_COUNT: PerType = (3.0, 6.0);
/// Y runs scaled by Y_SCALE (2^-64, 2^-16 in f32) and its inverse: the reflection term
/// sin(n pi) Y_n of J_-n stays finite where Y_n alone overflows and the term does not
/// (jv(-47.98, 1.24e-5) = -3.78e307).
const Y_SCALE: PerType = (5.421010862427522e-20, 1.52587890625e-05);
const Y_UNSCALE: PerType = (1.8446744073709552e+19, 65536.0);
/// n (1 + ln(x / (2n))) below this: the bound (e x / (2n))^n underflows.
const UNDER_LOG: PerType = (-760.0, -115.0);
/// 2/pi, sqrt(2/pi).
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;
const SQRT_2_OVER_PI: f64 = 0.7978845608028654;

/// `F` on a loop's block (the closures get the block, not `F`).
macro_rules! g {
    ($b:expr, $ty:expr) => {
        F { b: $b, ty: $ty }
    };
}

/// acosh(q) = ln(q + sqrt(q^2 - 1)), q >= 1 (the decay rate of J's ratios past the
/// turning point, and d/dv of Debye's exponent).
fn acosh_of(f: &mut F, q: &Value) -> Value {
    let one = f.c(1.0);
    let qq = f.mul(q, q);
    let qq = f.sub(&qq, &one);
    let root = f.sqrt(&qq);
    let l = f.add(q, &root);
    f.log(&l)
}

/// 2k / x as (c_hi, c_lo) for k = k_hi + k_lo (k_lo None: k_hi alone), the recurrences'
/// coefficient in two floats.
fn twice_over(g: &mut F, k_hi: &Value, k_lo: Option<&Value>, x: &Value) -> (Value, Value) {
    let two = g.c(2.0);
    let k2 = g.mul(&two, k_hi);
    let c_hi = g.div(&k2, x);
    let minus_c = g.neg(&c_hi);
    let rem = g.fma(&minus_c, x, &k2);
    let rem = match k_lo {
        Some(lo) => g.fma(&two, lo, &rem),
        None => rem,
    };
    (c_hi, g.div(&rem, x))
}

/// (r, r_lo, sign, ok): r = J_n+1 / J_n (in two floats) by CF1 evaluated from its tail,
/// the sign of J_n, and whether the depth is within the cap. The ratios r_k-1 = J_k /
/// J_k-1 = 1 / (2k/x - r_k) from r = 0 at k = n + m down to k = n + 1, in two floats:
/// where x > k they oscillate and each step's rounding stays (in a float64 model Lentz's
/// forward evaluation left r 1e-14 off at jv(74.5, 153.8), 40 ULP in J; as much came from
/// rounding k = n + j, so that too is kept in two floats). Past the turning point x an
/// error at the start shrinks like J / Y, by 1e-17 over x to x + 8 x^(1/3), and by
/// exp(-2 acosh(k/x)) a step past that; so m = s + 20 / acosh(s/x) + 10 - n, s = max(n,
/// x + 8 x^(1/3)) (20 steps past s alone left jv(1e4, 9000) 2.7e-9 off). J_k > 0 at the
/// start, so the sign of J_n is that of the product of the ratios. Lanes where `active`
/// is false skip the loop.
fn cf1(f: &mut F, n: &Value, x: &Value, active: &Value) -> (Value, Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let third = f.c(1.0 / 3.0);
    let lx = f.log(x);
    let lx = f.mul(&lx, &third);
    let cbrt = f.exp(&lx);
    let eight = f.c(8.0);
    let start = f.fma(&eight, &cbrt, x);
    let start = f.b.arith(Arith::MaximumF, &start, n);
    // From there on the ratios are below exp(-L), L = acosh(start / x), and the error
    // shrinks by exp(-2L) a step: 20 / L steps more, and 10.
    let q = f.div(&start, x);
    let l = acosh_of(f, &q);
    let twenty = f.c(20.0);
    let d = f.div(&twenty, &l);
    let ten = f.c(10.0);
    let d = f.add(&d, &ten);
    let top = f.add(&start, &d);
    let m = f.sub(&top, n);
    let m = f.floor(&m);
    let limit = f.k(MAX_ITER);
    let ok = f.cmp(CmpF::Olt, &m, &limit);
    let m = f.sel(&ok, &m, &twenty);
    let m = f.sel(active, &m, &zero);
    let ty = f.ty;
    let (n_in, x_in) = (n.clone(), x.clone());
    // (j, r_hi, r_lo, sign): r at k = n + j.
    let done = f.b.scf_while(
        &[m, zero.clone(), zero.clone(), one.clone()],
        |c, v| {
            let mut g = g!(c, ty);
            let zero = g.c(0.0);
            g.cmp(CmpF::Ogt, &v[0], &zero)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (j, r_hi, r_lo, s) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let zero = g.c(0.0);
            // k = n + j exactly, as k_hi + k_lo: k rounded changes the order by up to an
            // ulp of k, which the oscillating ratios carried (1e-14 in r at jv(74.5, 153.8)).
            let (k_hi, k_lo) = g.two_sum(&n_in, j);
            let (c_hi, c_lo) = twice_over(&mut g, &k_hi, Some(&k_lo), &x_in);
            // d = c - r.
            let minus_r = g.neg(r_hi);
            let (d_hi, d_e) = g.two_sum(&c_hi, &minus_r);
            let low = g.sub(&c_lo, r_lo);
            let low = g.add(&d_e, &low);
            let (d_hi, d_lo) = g.fast_two_sum(&d_hi, &low);
            // r = 1 / d: r_lo = (1 - r_hi d_hi - r_hi d_lo) / d_hi.
            let q = g.div(&one, &d_hi);
            let minus_q = g.neg(&q);
            let e = g.fma(&minus_q, &d_hi, &one);
            let e = g.fma(&minus_q, &d_lo, &e);
            let q_lo = g.div(&e, &d_hi);
            // (A zero d, at a zero of J_k-1: r infinite, the next step's r 0.)
            let finite = g.cmp(CmpF::Oeq, &q_lo, &q_lo);
            let q_lo = g.sel(&finite, &q_lo, &zero);
            let negative = g.cmp(CmpF::Olt, &q, &zero);
            let minus_s = g.neg(s);
            let s = g.sel(&negative, &minus_s, s);
            let j = g.sub(j, &one);
            vec![j, q, q_lo, s]
        },
    );
    // (The sign counts the ratios r_n .. r_n+m-1: J_n relative to J_n+m > 0.)
    (done[1].clone(), done[2].clone(), done[3].clone(), ok)
}

/// (Y_mu, Y_mu+1, ok) by Temme's series, 0 < x < 2, |mu| <= 1/2. Lanes where `active` is
/// false stop after one step.
fn y_temme(f: &mut F, mu: &Value, x: &Value, active: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let pi = f.c(std::f64::consts::PI);
    let (g1, g2) = temme_gammas(f, mu);
    let mu_g1 = f.mul(mu, &g1);
    let gampl = f.sub(&g2, &mu_g1); // 1/Gamma(1 + mu)
    let gammi = f.add(&g2, &mu_g1); // 1/Gamma(1 - mu)
    let (s_hi, s_lo, d) = sigma(f, mu, x);
    let ch = cosh(f.b, &s_hi);
    let sh = sinh(f.b, &s_hi);
    let ch = f.fma(&sh, &s_lo, &ch);
    let sh_full = f.fma(&ch, &s_lo, &sh);
    // sinh(sigma)/sigma ln(2/x) = sinh(sigma)/mu (ln(2/x) at mu = 0).
    let mu_zero = f.cmp(CmpF::Oeq, mu, &zero);
    let mu_safe = f.sel(&mu_zero, &one, mu);
    let sh_mu = f.div(&sh_full, &mu_safe);
    let sh_mu = f.sel(&mu_zero, &d, &sh_mu);
    // mu pi / sin(mu pi), 1 at mu = 0.
    let pimu = f.mul(&pi, mu);
    let s = trig::sin(f.b, &pimu);
    let s_safe = f.sel(&mu_zero, &one, &s);
    let fact = f.div(&pimu, &s_safe);
    let fact = f.sel(&mu_zero, &one, &fact);
    let a = f.mul(&g1, &ch);
    let ff = f.fma(&g2, &sh_mu, &a);
    let c2pi = f.c(TWO_OVER_PI);
    let ff = f.mul(&fact, &ff);
    let ff = f.mul(&c2pi, &ff);
    // (2/x)^mu and its reciprocal, to first order in s_lo.
    let e = f.exp(&s_hi);
    let e = f.fma(&e, &s_lo, &e);
    let minus_s = f.neg(&s_hi);
    let e_inv = f.exp(&minus_s);
    let minus_lo = f.neg(&s_lo);
    let e_inv = f.fma(&e_inv, &minus_lo, &e_inv);
    let pg = f.mul(&gampl, &pi);
    let p = f.div(&e, &pg);
    let qg = f.mul(&gammi, &pi);
    let q = f.div(&e_inv, &qg);
    // r = pi sin(h)^2 / h, h = pi mu / 2 (0 at mu = 0).
    let h = f.mul(&pimu, &half);
    let sin_h = trig::sin(f.b, &h);
    let h_safe = f.sel(&mu_zero, &one, &h);
    let sinc = f.div(&sin_h, &h_safe);
    let sinc = f.sel(&mu_zero, &one, &sinc);
    let r = f.mul(&pi, &sin_h);
    let r = f.mul(&r, &sinc);
    let x2 = f.mul(x, &half);
    let dd = f.mul(&x2, &x2);
    let dd = f.neg(&dd);
    let dd = f.sel(active, &dd, &zero);
    let sum = f.fma(&r, &q, &ff);
    let big = f.c(1.0);
    let ty = f.ty;
    let (mu_in, r_in) = (mu.clone(), r);
    // (i, ff, p, q, c, sum, sum1, del)
    let done = f.b.scf_while(
        &[zero.clone(), ff, p.clone(), q, one.clone(), sum, p, big],
        |c, v| {
            let mut g = g!(c, ty);
            let (i, sum, del) = (&v[0], &v[5], &v[7]);
            let one = g.c(1.0);
            let eps = g.k(EPS);
            let limit = g.k(MAX_ITER);
            let asum = g.abs(sum);
            let asum = g.add(&asum, &one);
            let small = g.mul(&asum, &eps);
            let adel = g.abs(del);
            let going = g.cmp(CmpF::Oge, &adel, &small);
            let under = g.cmp(CmpF::Olt, i, &limit);
            g.and(&going, &under)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (i, ff, p, q, c, sum, sum1) = (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]);
            let one = g.c(1.0);
            let i = g.add(i, &one);
            let mu2 = g.mul(&mu_in, &mu_in);
            let ii = g.mul(&i, &i);
            let den = g.sub(&ii, &mu2);
            let pq = g.add(p, q);
            let num = g.fma(&i, ff, &pq);
            let ff = g.div(&num, &den);
            let ratio = g.div(&dd, &i);
            let c = g.mul(c, &ratio);
            let im = g.sub(&i, &mu_in);
            let p = g.div(p, &im);
            let ip = g.add(&i, &mu_in);
            let q = g.div(q, &ip);
            let t = g.fma(&r_in, &q, &ff);
            let del = g.mul(&c, &t);
            let sum = g.add(sum, &del);
            let cp = g.mul(&c, &p);
            let idel = g.mul(&i, &del);
            let del1 = g.sub(&cp, &idel);
            let sum1 = g.add(sum1, &del1);
            vec![i, ff, p, q, c, sum, sum1, del]
        },
    );
    let limit = f.k(MAX_ITER);
    let ok = f.cmp(CmpF::Olt, &done[0], &limit);
    let y0 = f.neg(&done[5]);
    let two = f.c(2.0);
    let s1 = f.mul(&done[6], &two);
    let s1 = f.div(&s1, x);
    let y1 = f.neg(&s1);
    (y0, y1, ok)
}

/// (p, q, ok): p + iq = (J'_mu + iY'_mu) / (J_mu + iY_mu) by Steed's evaluation of CF2
/// (Lentz's method on complex numbers), x >= 2, |mu| <= 1/2. Lanes where `active` is
/// false stop after the first step.
fn steed(f: &mut F, mu: &Value, x: &Value, active: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let quarter = f.c(0.25);
    let minus_half = f.c(-0.5);
    // The first step by hand: a = 1/4 - mu^2, p + iq = (-1/(2x) + i) (c d).
    let mu2 = f.mul(mu, mu);
    let a = f.sub(&quarter, &mu2);
    let p = f.div(&minus_half, x);
    let q = one.clone();
    let br = f.mul(&two, x);
    let bi = two.clone();
    let pp = f.mul(&p, &p);
    let pq2 = f.add(&pp, &one);
    let ax = f.div(&a, x);
    let fact = f.div(&ax, &pq2);
    let cr = f.fma(&q, &fact, &br);
    let ci = f.fma(&p, &fact, &bi);
    let brr = f.mul(&br, &br);
    let bii = f.mul(&bi, &bi);
    let den = f.add(&brr, &bii);
    let dr = f.div(&br, &den);
    let di = f.div(&bi, &den);
    let di = f.neg(&di);
    let (dlr, dli) = cmul(f, &cr, &ci, &dr, &di);
    let (p, q) = cmul(f, &p, &q, &dlr, &dli);
    let dlr = f.sel(active, &dlr, &one);
    let dli = f.sel(active, &dli, &zero);
    let ty = f.ty;
    let x_in = x.clone();
    // (i, a, bi, dr, di, cr, ci, p, q, dlr, dli)
    let done = f.b.scf_while(
        &[one.clone(), a, bi, dr, di, cr, ci, p, q, dlr, dli],
        |c, v| {
            let mut g = g!(c, ty);
            let one = g.c(1.0);
            let eps = g.k(EPS);
            let limit = g.k(MAX_ITER);
            let d = g.sub(&v[9], &one);
            let d = g.abs(&d);
            let e = g.abs(&v[10]);
            let d = g.add(&d, &e);
            let going = g.cmp(CmpF::Oge, &d, &eps);
            let under = g.cmp(CmpF::Olt, &v[0], &limit);
            g.and(&going, &under)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (i, a, bi, dr, di, cr, ci, p, q) = (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]);
            let one = g.c(1.0);
            let two = g.c(2.0);
            let tiny = g.k(FPMIN);
            let br = g.mul(&two, &x_in);
            let i = g.add(i, &one);
            // a_i = a_i-1 + 2 (i - 1), b_i = 2x + 2i i.
            let im = g.sub(&i, &one);
            let a = g.fma(&two, &im, a);
            let bi = g.add(bi, &two);
            let dr = g.fma(&a, dr, &br);
            let di = g.fma(&a, di, &bi);
            let ad = g.abs(&dr);
            let ai = g.abs(&di);
            let s = g.add(&ad, &ai);
            let small = g.cmp(CmpF::Olt, &s, &tiny);
            let dr = g.sel(&small, &tiny, &dr);
            let crr = g.mul(cr, cr);
            let cii = g.mul(ci, ci);
            let cc = g.add(&crr, &cii);
            let fact = g.div(&a, &cc);
            let cr = g.fma(cr, &fact, &br);
            let cif = g.mul(ci, &fact);
            let ci = g.sub(&bi, &cif);
            let ac = g.abs(&cr);
            let aci = g.abs(&ci);
            let s = g.add(&ac, &aci);
            let small = g.cmp(CmpF::Olt, &s, &tiny);
            let cr = g.sel(&small, &tiny, &cr);
            let drr = g.mul(&dr, &dr);
            let dii = g.mul(&di, &di);
            let den = g.add(&drr, &dii);
            let dr = g.div(&dr, &den);
            let di = g.div(&di, &den);
            let di = g.neg(&di);
            let (dlr, dli) = cmul(&mut g, &cr, &ci, &dr, &di);
            let (p, q) = cmul(&mut g, p, q, &dlr, &dli);
            vec![i, a, bi, dr, di, cr, ci, p, q, dlr, dli]
        },
    );
    let limit = f.k(MAX_ITER);
    let ok = f.cmp(CmpF::Olt, &done[0], &limit);
    (done[7].clone(), done[8].clone(), ok)
}

/// (a + ib)(c + id).
fn cmul(f: &mut F, a: &Value, b: &Value, c: &Value, d: &Value) -> (Value, Value) {
    let bd = f.mul(b, d);
    let minus = f.neg(&bd);
    let re = f.fma(a, c, &minus);
    let bc = f.mul(b, c);
    let im = f.fma(a, d, &bc);
    (re, im)
}

/// (cos chi, sin chi) for chi = x - pi t, t = order/2 + 1/4 reduced mod 2 (the phase of
/// Hankel's and Debye's large-argument forms), from exactly reduced sin and cos of x and of
/// pi t.
pub(super) fn hankel_phase(f: &mut F, order: &Value, x: &Value) -> (Value, Value) {
    let half = f.c(0.5);
    let quarter = f.c(0.25);
    let two = f.c(2.0);
    let t = f.fma(order, &half, &quarter);
    let th = f.mul(&t, &half);
    let th = f.floor(&th);
    let minus = f.neg(&two);
    let t = f.fma(&th, &minus, &t);
    let pi = f.c(std::f64::consts::PI);
    let pt = f.mul(&pi, &t);
    let cp = trig::cos(f.b, &pt);
    let sp = trig::sin(f.b, &pt);
    let cx = trig::cos(f.b, x);
    let sx = trig::sin(f.b, x);
    let cx_cp = f.mul(&cx, &cp);
    let cos_chi = f.fma(&sx, &sp, &cx_cp);
    let cx_sp = f.mul(&cx, &sp);
    let minus = f.neg(&cx_sp);
    let sin_chi = f.fma(&sx, &cp, &minus);
    (cos_chi, sin_chi)
}

/// Hankel's (J_n, Y_n, ok) for x >= 32, x >= n^2 / 6 (see the module comment).
/// `order` (n or -n) sets the phase: the expansion holds for negative orders as they are,
/// which saves the reflection's cancellation.
fn hankel(f: &mut F, n: &Value, order: &Value, x: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let ty = f.ty;
    let (n_in, x_in) = (n.clone(), x.clone());
    // (k, t, P, Q)
    let done = f.b.scf_while(
        &[zero.clone(), one.clone(), one.clone(), zero.clone()],
        |c, v| {
            let mut g = g!(c, ty);
            let (k, t, p) = (&v[0], &v[1], &v[2]);
            let eps = g.k(EPS);
            let limit = g.c(HANKEL_TERMS);
            let at = g.abs(t);
            let ap = g.abs(p);
            let small = g.mul(&ap, &eps);
            let going = g.cmp(CmpF::Ogt, &at, &small);
            let under = g.cmp(CmpF::Olt, k, &limit);
            g.and(&going, &under)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (k, t, p, q) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let two = g.c(2.0);
            let eight = g.c(8.0);
            let quarter = g.c(0.25);
            let four = g.c(4.0);
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
            // i^k: + for k mod 4 in {0, 1}, - for {2, 3}; odd k go to Q, even to P.
            let kq = g.mul(&k, &quarter);
            let kq = g.floor(&kq);
            let m4 = g.mul(&kq, &four);
            let m4 = g.sub(&k, &m4);
            let one_half = g.c(1.5);
            let plus = g.cmp(CmpF::Olt, &m4, &one_half);
            let minus_t = g.neg(&t);
            let signed = g.sel(&plus, &t, &minus_t);
            let half = g.c(0.5);
            let kh = g.mul(&k, &half);
            let kh_fl = g.floor(&kh);
            let even = g.cmp(CmpF::Oeq, &kh_fl, &kh);
            let p_new = g.add(p, &signed);
            let q_new = g.add(q, &signed);
            let p = g.sel(&even, &p_new, p);
            let q = g.sel(&even, q, &q_new);
            vec![k, t, p, q]
        },
    );
    let limit = f.c(HANKEL_TERMS);
    let ok = f.cmp(CmpF::Olt, &done[0], &limit);
    let (p, q) = (done[2].clone(), done[3].clone());
    let (cos_chi, sin_chi) = hankel_phase(f, order, x);
    let c = f.c(SQRT_2_OVER_PI);
    let root = f.sqrt(x);
    let amp = f.div(&c, &root);
    let q_sin = f.mul(&q, &sin_chi);
    let minus = f.neg(&q_sin);
    let j = f.fma(&p, &cos_chi, &minus);
    let j = f.mul(&amp, &j);
    let q_cos = f.mul(&q, &cos_chi);
    let y = f.fma(&p, &sin_chi, &q_cos);
    let y = f.mul(&amp, &y);
    (j, y, ok)
}

/// J_n(x) and J_-n(x) for x below TINY_X, 0 <= n, as their series' first two terms,
/// (x/2)^+-n (1/Gamma(1 +- n) - x^2/4 / Gamma(2 +- n)) (module comment). 1/Gamma(1 + n) =
/// 1/Gamma(1 + mu) prod_{j=1..nl} 1/(mu + j) and 1/Gamma(1 - n) = 1/Gamma(1 - mu)
/// prod_{j=1..nl} (j - n); 1/Gamma(2 - n) without the factor 1 - n (which vanishes near
/// n = 1: the second term is then the whole value).
fn j_tiny(f: &mut F, n: &Value, mu: &Value, nl: &Value, x: &Value, active: &Value, negative: bool) -> Value {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let steps = if negative { f.sub(nl, &one) } else { nl.clone() };
    let steps = f.sel(active, &steps, &zero);
    let ty = f.ty;
    let (mu_in, n_in) = (mu.clone(), n.clone());
    // The product from j = steps (nl) down to 1 (to 2 for -n, shifted by one), as p 2^-count.
    let done = f.b.scf_while(
        &[steps, one.clone(), zero.clone()],
        |c, v| {
            let mut g = g!(c, ty);
            let zero = g.c(0.0);
            g.cmp(CmpF::Ogt, &v[0], &zero)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (j, p, count) = (&v[0], &v[1], &v[2]);
            let one = g.c(1.0);
            let p = if negative {
                let j1 = g.add(j, &one);
                let factor = g.sub(&j1, &n_in);
                g.mul(p, &factor)
            } else {
                let nu = g.add(&mu_in, j);
                g.div(p, &nu)
            };
            let low = g.k(LOW);
            let up = g.k(UP);
            let scale = g.k(SCALE);
            let ap = g.abs(&p);
            let is_low = g.cmp(CmpF::Olt, &ap, &low);
            let is_high = g.cmp(CmpF::Ogt, &ap, &up);
            let p_up = g.mul(&p, &up);
            let p_low = g.mul(&p, &low);
            let p = g.sel(&is_low, &p_up, &p);
            let p = g.sel(&is_high, &p_low, &p);
            let more = g.add(count, &scale);
            let less = g.sub(count, &scale);
            let count = g.sel(&is_low, &more, count);
            let count = g.sel(&is_high, &less, &count);
            let j = g.sub(j, &one);
            vec![j, p, count]
        },
    );
    let (g1, g2) = temme_gammas(f, mu);
    let mu_g1 = f.mul(mu, &g1);
    let quarter = f.c(0.25);
    let xx = f.mul(x, x);
    let xx4 = f.mul(&xx, &quarter);
    // lead = 1/Gamma(1 +- n) - x^2/4 / Gamma(2 +- n), times 2^count.
    let lead = if negative {
        let gammi = f.add(&g2, &mu_g1); // 1/Gamma(1 - mu)
        let q = f.mul(&done[1], &gammi);
        let one_n = f.sub(&one, n);
        let nl_zero = f.cmp(CmpF::Oeq, nl, &zero);
        // nl = 0: A = 1/Gamma(1 - mu), A1 = A / (1 - mu); else A = (1 - n) q, A1 = q.
        let a = f.mul(&one_n, &q);
        let a = f.sel(&nl_zero, &gammi, &a);
        let a1 = f.div(&gammi, &one_n);
        let a1 = f.sel(&nl_zero, &a1, &q);
        let minus_xx4 = f.neg(&xx4);
        f.fma(&minus_xx4, &a1, &a)
    } else {
        let gampl = f.sub(&g2, &mu_g1); // 1/Gamma(1 + mu)
        let a = f.mul(&gampl, &done[1]);
        let n1 = f.add(n, &one);
        let corr = f.div(&xx4, &n1);
        let minus_a = f.neg(&a);
        f.fma(&minus_a, &corr, &a)
    };
    let abs_lead = f.abs(&lead);
    let (a_hi, a_lo) = log_dd(f, &abs_lead);
    let (s_hi, s_lo, _) = sigma(f, n, x);
    let (s_hi, s_lo) = if negative { (s_hi, s_lo) } else { (f.neg(&s_hi), f.neg(&s_lo)) };
    let minus_count = f.neg(&done[2]);
    let (c_hi, c_lo) = f.mul_split(&minus_count, LN2_HI, LN2_LO);
    let (t_hi, t_lo) = dd_add(f, (&a_hi, &a_lo), (&s_hi, &s_lo));
    let (t_hi, t_lo) = dd_add(f, (&t_hi, &t_lo), (&c_hi, &c_lo));
    let e = f.exp(&t_hi);
    let r = f.fma(&e, &t_lo, &e);
    // (inf + inf t_lo is nan for a negative t_lo.)
    let inf = f.c(f64::INFINITY);
    let overflow = f.cmp(CmpF::Oeq, &e, &inf);
    let r = f.sel(&overflow, &e, &r);
    f.copysign(&r, &lead)
}

/// (J_n, Y_n Y_SCALE, ok, J_-n, direct) for 0 <= n < inf, 0 < x < inf; Y_n only where
/// `want_y` (else a stand-in), J_-n where `want_y` and x is tiny or in Hankel's region
/// (`direct`; else a stand-in, and there J_n is not computed either).
///
/// The regions are `scf.if` branches, not selects over every region's result: the loops
/// keep IREE from vectorizing this kernel, so each element runs as scalar code, and with
/// branches it runs only its own region's code.
fn jy(f: &mut F, n: &Value, x: &Value, want_y: &Value) -> (Value, Value, Value, Value, Value) {
    let hx = f.c(HANKEL_X);
    let n2 = f.mul(n, n);
    let sixth = f.c(1.0 / 6.0);
    let n2 = f.mul(&n2, &sixth);
    let bound = f.b.arith(Arith::MaximumF, &hx, &n2);
    let in_hankel = f.cmp(CmpF::Oge, x, &bound);
    let ty = f.ty;
    let types = [ty, ty, ScalarType::I1, ty, ScalarType::I1];
    let out = f.b.scf_if(
        &in_hankel,
        &types,
        |b| {
            let f = &mut g!(b, ty);
            let minus_n = f.neg(n);
            let order = f.sel(want_y, &minus_n, n);
            let (j_h, y_h, h_ok) = hankel(f, n, &order, x);
            let y_scale = f.k(Y_SCALE);
            let y_h = f.mul(&y_h, &y_scale);
            vec![j_h.clone(), y_h, h_ok, j_h, want_y.clone()]
        },
        |b| {
            let f = &mut g!(b, ty);
            let zero = f.c(0.0);
            let one = f.c(1.0);
            let two = f.c(2.0);
            // Where the bound (e x / (2n))^n underflows (x < n): 0, no loops.
            let e = f.c(std::f64::consts::E);
            let ex = f.mul(&e, x);
            let n_pos = f.cmp(CmpF::Ogt, n, &zero);
            let n_safe = f.sel(&n_pos, n, &one);
            let two_n = f.mul(&two, &n_safe);
            let ratio = f.div(&ex, &two_n);
            let l = f.log(&ratio);
            let l = f.mul(&l, &n_safe);
            let under_log = f.k(UNDER_LOG);
            let under = f.cmp(CmpF::Olt, &l, &under_log);
            let x_lt_n = f.cmp(CmpF::Olt, x, &n_safe);
            let under = f.and(&under, &x_lt_n);
            let not_y = f.not(want_y);
            let under = f.and(&under, &not_y);
            f.b.scf_if(
                &under,
                &types,
                |b| {
                    let f = &mut g!(b, ty);
                    let zero = f.c(0.0);
                    let yes = f.b.constant_int(1, ScalarType::I1);
                    let no = f.b.constant_int(0, ScalarType::I1);
                    vec![zero.clone(), zero.clone(), yes, zero, no]
                },
                |b| {
                    // Where the loops would pass their cap (order or x - n past DEBYE_FROM
                    // times it), Debye's expansions (J and, for J_-n, Y).
                    let f = &mut g!(b, ty);
                    let cap = f.k(MAX_ITER);
                    let from = f.c(DEBYE_FROM);
                    let near_cap = f.mul(&cap, &from);
                    let half = f.c(0.5);
                    let nh = f.add(n, &half);
                    let nl = f.floor(&nh);
                    let deep = f.cmp(CmpF::Ogt, &nl, &cap);
                    let gap = f.sub(x, n);
                    let long = f.cmp(CmpF::Ogt, &gap, &near_cap);
                    let debye = f.or(&deep, &long);
                    f.b.scf_if(
                        &debye,
                        &types,
                        |b| {
                            let f = &mut g!(b, ty);
                            let (j, y, ok) = debye_or_shifted(f, n, x, want_y);
                            let no = f.b.constant_int(0, ScalarType::I1);
                            vec![j.clone(), y, ok, j, no]
                        },
                        |b| {
                            let (j, y, ok, j_neg, direct) = jy_recurrences(&mut g!(b, ty), n, x, want_y);
                            vec![j, y, ok, j_neg, direct]
                        },
                    )
                },
            )
        },
    );
    (out[0].clone(), out[1].clone(), out[2].clone(), out[3].clone(), out[4].clone())
}

/// (J_n, ok) where the loops cannot reach: Debye's expansions at (n, x), and in their
/// transition region |x - n| < about 24 n^(1/3) (where they do not converge) at the order
/// n' = n + N just past it, N = ceil(x + SHIFT x^(1/3) - n), then CF1 at n' (a few x^(1/3)
/// steps there) and the downward recurrence N steps back to n (stable for J; about 50
/// n^(1/3) steps, within the cap up to n ~ 8e9: past that `ok` is false, nan). J_n' is some
/// e^-125 of J_n in size, far from underflow. n + N rounds where it crosses a power of two:
/// the rounding e is put back to first order, J_n'+e = J_n' (1 - e acosh(n'/x)) (d/dv of
/// Debye's exponent -v (atanh t - t) is -atanh t = -acosh(v/x)).
///
/// Y_n (for J_-n, where `want_y`) in the region: Debye's Y at n'' = n - M and n'' + 1, M =
/// ceil(n - x + SHIFT x^(1/3)), just before the region on its oscillatory side (n'' exact:
/// n's spacing or finer), then the upward recurrence Y_k+1 = 2k/x Y_k - Y_k-1 (stable for
/// Y) M - 1 steps to n, in two floats. Those lanes evaluate Debye's expansions three times
/// (a loop around one copy of their code). Returns (J_n, Y_n Y_SCALE, ok).
fn debye_or_shifted(f: &mut F, n: &Value, x: &Value, want_y: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let reaches = debye_reaches(f, n, x);
    let trans = f.not(&reaches);
    let third = f.c(1.0 / 3.0);
    let lx = f.log(x);
    let lx = f.mul(&lx, &third);
    let cbrt = f.exp(&lx);
    let shift = f.c(SHIFT);
    let target = f.fma(&shift, &cbrt, x);
    let gap = f.sub(n, &target);
    let steps = f.floor(&gap);
    let steps = f.neg(&steps);
    let steps = f.b.arith(Arith::MaximumF, &steps, &one);
    let steps = f.sel(&trans, &steps, &zero);
    let cap = f.k(MAX_ITER);
    let within = f.cmp(CmpF::Olt, &steps, &cap);
    let steps = f.sel(&within, &steps, &zero);
    let (n2, e) = f.two_sum(n, &steps);
    let y_trans = f.and(want_y, &trans);
    let minus_shift = f.c(-SHIFT);
    let below = f.fma(&minus_shift, &cbrt, x);
    let back = f.sub(&below, n);
    let back = f.floor(&back);
    let back = f.neg(&back);
    let two = f.c(2.0);
    let back = f.b.arith(Arith::MaximumF, &back, &two);
    let back = f.sel(&y_trans, &back, &zero);
    let within_y = f.cmp(CmpF::Olt, &back, &cap);
    let back = f.sel(&within_y, &back, &zero);
    let n3 = f.sub(n, &back);
    let n3_next = f.add(&n3, &one);
    // Debye's expansions at n2 (J), and where Y is wanted in the region at n3 and n3 + 1.
    let three = f.c(3.0);
    let evaluations = f.sel(&y_trans, &three, &one);
    let yes = f.b.constant_int(1, ScalarType::I1);
    let ty = f.ty;
    let (n2_in, n3_in, n3_next_in, x_in) = (n2.clone(), n3.clone(), n3_next.clone(), x.clone());
    let evaluated = f.b.scf_while(
        &[zero.clone(), zero.clone(), zero.clone(), zero.clone(), zero.clone(), yes],
        |c, v| {
            let mut g = g!(c, ty);
            g.cmp(CmpF::Olt, &v[0], &evaluations)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (zero, one) = (g.c(0.0), g.c(1.0));
            let first = g.cmp(CmpF::Oeq, &v[0], &zero);
            let second = g.cmp(CmpF::Oeq, &v[0], &one);
            let later = g.sel(&second, &n3_in, &n3_next_in);
            let order = g.sel(&first, &n2_in, &later);
            let (j, y, ok) = debye_jy(&mut g, &order, &x_in);
            let not_first = g.not(&first);
            let not_second = g.not(&second);
            let third = g.and(&not_first, &not_second);
            let j = g.sel(&first, &j, &v[1]);
            let y_n = g.sel(&first, &y, &v[2]);
            let y_a = g.sel(&second, &y, &v[3]);
            let y_b = g.sel(&third, &y, &v[4]);
            let ok = g.and(&ok, &v[5]);
            let i = g.add(&v[0], &one);
            vec![i, j, y_n, y_a, y_b, ok]
        },
    );
    let (j2, y, ok) = (evaluated[1].clone(), evaluated[2].clone(), evaluated[5].clone());
    let minus_one = f.c(-1.0);
    let up_steps = f.add(&back, &minus_one);
    let up_steps = f.sel(&y_trans, &up_steps, &zero);
    let (y_hi, y_lo, _, _, y_count) = recur_down(f, n, (true, true), &up_steps, x, (&evaluated[4], &zero), (&evaluated[3], &zero));
    let y_up = f.add(&y_hi, &y_lo);
    let scale = f.k(SCALE);
    let k = f.mul(&y_count, &scale);
    let y_up = f.ldexp(&y_up, &k);
    let y = f.sel(&y_trans, &y_up, &y);
    let ok = f.and(&ok, &within_y);
    let q = f.div(&n2, x);
    let l = acosh_of(f, &q);
    let minus_e = f.neg(&e);
    let fix = f.fma(&minus_e, &l, &one);
    let fix = f.sel(&trans, &fix, &one);
    let (r, r_lo, _, cf_ok) = cf1(f, &n2, x, &trans);
    let (u_hi, u_lo, _, _, count) = recur_down(f, n, (true, false), &steps, x, (&one, &zero), (&r, &r_lo));
    let u = f.add(&u_hi, &u_lo);
    let scale = f.k(SCALE);
    let k = f.mul(&count, &scale);
    let u = f.ldexp(&u, &k);
    let j = f.mul(&j2, &fix);
    let j = f.mul(&j, &u);
    let not_trans = f.not(&trans);
    let cf_ok = f.or(&cf_ok, &not_trans);
    let ok = f.and(&ok, &cf_ok);
    let ok = f.and(&ok, &within);
    (j, y, ok)
}

/// `jy` outside Hankel's region where J_n does not underflow: below TINY_X the series'
/// first terms (`j_tiny`), else CF1, the downward recurrence and J_mu's scale.
fn jy_recurrences(f: &mut F, n: &Value, x: &Value, want_y: &Value) -> (Value, Value, Value, Value, Value) {
    let zero = f.c(0.0);
    let half = f.c(0.5);
    // n = nl + mu; nl past the cap is left to the nan of `ok`.
    let limit = f.k(MAX_ITER);
    let nh = f.add(n, &half);
    let nl = f.floor(&nh);
    let too_many = f.cmp(CmpF::Ogt, &nl, &limit);
    let nl = f.sel(&too_many, &zero, &nl);
    let n_r = f.sel(&too_many, &zero, n);
    let mu = f.sub(&n_r, &nl);
    let not_too_many = f.not(&too_many);
    let tiny = f.k(TINY_X);
    let is_tiny = f.cmp(CmpF::Olt, x, &tiny);
    let ty = f.ty;
    let types = [ty, ty, ScalarType::I1, ty, ScalarType::I1];
    let out = f.b.scf_if(
        &is_tiny,
        &types,
        |b| {
            let f = &mut g!(b, ty);
            let yes = f.b.constant_int(1, ScalarType::I1);
            let j_t = j_tiny(f, &n_r, &mu, &nl, x, &yes, false);
            let j_t_neg = j_tiny(f, &n_r, &mu, &nl, x, want_y, true);
            let zero = f.c(0.0);
            vec![j_t, zero, not_too_many.clone(), j_t_neg, want_y.clone()]
        },
        |b| {
            let f = &mut g!(b, ty);
            let (j, y, ok) = jy_regular(f, &mu, &nl, &n_r, x, want_y);
            let ok = f.and(&ok, &not_too_many);
            let no = f.b.constant_int(0, ScalarType::I1);
            vec![j.clone(), y, ok, j, no]
        },
    );
    (out[0].clone(), out[1].clone(), out[2].clone(), out[3].clone(), out[4].clone())
}

/// (J_n, Y_n Y_SCALE, ok) for n = nl + mu, TINY_X <= x < inf (outside Hankel's region):
/// CF1, the recurrence down to mu, J_mu's scale (series, Temme's Y's or Steed's CF2, each
/// in its own branch) and Y upward where `want_y`.
fn jy_regular(f: &mut F, mu: &Value, nl: &Value, n_r: &Value, x_r: &Value, want_y: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let inf = f.c(f64::INFINITY);
    let (mu, nl, x_r) = (mu.clone(), nl.clone(), x_r.clone());
    let regular = f.b.constant_int(1, ScalarType::I1);
    let (r, r_lo, sign, cf_ok) = cf1(f, n_r, &x_r, &regular);
    // Downward from u_n = 1, u_n+1 = r to u_mu, u_mu+1, in range by powers of two.
    let (u_hi, u_lo, u1_hi, u1_lo, count) = recur_down(f, &mu, (false, false), &nl, &x_r, (&one, &zero), (&r, &r_lo));
    let u = f.add(&u_hi, &u_lo);
    let u1 = f.add(&u1_hi, &u1_lo);
    // u' = mu/x u - u_mu+1; both divided by m = max(|u|, |u'|).
    let mu_x = f.div(&mu, &x_r);
    let minus = f.neg(&u1);
    let up = f.fma(&mu_x, &u, &minus);
    let au = f.abs(&u);
    let aup = f.abs(&up);
    let m = f.b.arith(Arith::MaximumF, &au, &aup);
    let un = f.div(&u, &m);
    let upn = f.div(&up, &m);
    let pi = f.c(std::f64::consts::PI);
    let pix = f.mul(&pi, &x_r);
    let w = f.div(&two, &pix);
    let t_x = f.c(TEMME_X);
    let is_temme = f.cmp(CmpF::Olt, &x_r, &t_x);
    let ty = f.ty;
    let scaled = f.b.scf_if(
        &is_temme,
        &[ty, ty, ty, ScalarType::I1],
        |b| {
            let f = &mut g!(b, ty);
            // Below 2: Y's from Temme's series, J_mu / u = W / (u Y' - u' Y).
            let x_t = x_r.clone();
            let (y0_t, y1_t, t_ok) = y_temme(f, &mu, &x_t, &regular);
            let minus = f.neg(&y1_t);
            let yp_t = f.fma(&mu_x, &y0_t, &minus);
            let upy = f.mul(&upn, &y0_t);
            let minus = f.neg(&upy);
            let den_t = f.fma(&un, &yp_t, &minus);
            let sc_t = f.div(&w, &den_t);
            // Below SERIES_X, J_mu / u from J_mu's own series instead (the Wronskian with Temme's
            // Y's lost up to 2e5 ULP between x = 1e-8 and 1e-6, orders near half-integers).
            let series_x = f.c(SERIES_X);
            let is_series = f.cmp(CmpF::Olt, &x_r, &series_x);
            let j_mu = j_mu_series(f, &mu, &x_t);
            let sc_series = f.div(&j_mu, &un);
            let sc_t = f.sel(&is_series, &sc_series, &sc_t);
            vec![sc_t, y0_t, y1_t, t_ok]
        },
        |b| {
            let f = &mut g!(b, ty);
            // From 2: CF2's p + iq; J_mu / u = sign sqrt(W q / ((q u)^2 + (p u - u')^2)).
            let (p, q, s_ok) = steed(f, &mu, &x_r, &regular);
            let minus = f.neg(&upn);
            let pu = f.fma(&p, &un, &minus);
            let qu = f.mul(&q, &un);
            let pu2 = f.mul(&pu, &pu);
            let den_s = f.fma(&qu, &qu, &pu2);
            let wq = f.mul(&w, &q);
            let sc_s = f.div(&wq, &den_s);
            let sc_s = f.sqrt(&sc_s);
            let sc_s = f.mul(&sc_s, &sign);
            // Y_mu = (J_mu / u) (p u - u') / q; Y'_mu = p Y_mu + q J_mu.
            let y0_s = f.mul(&sc_s, &pu);
            let y0_s = f.div(&y0_s, &q);
            let j_mu_s = f.mul(&sc_s, &un);
            let qj = f.mul(&q, &j_mu_s);
            let yp_s = f.fma(&p, &y0_s, &qj);
            let minus = f.neg(&yp_s);
            let y1_s = f.fma(&mu_x, &y0_s, &minus);
            vec![sc_s, y0_s, y1_s, s_ok]
        },
    );
    let (sc, y0, y1) = (scaled[0].clone(), scaled[1].clone(), scaled[2].clone());
    let ok = f.and(&scaled[3], &cf_ok);
    // J_n = (J_mu / u) / m 2^-(SCALE count); 0 once count reaches UNDER_COUNT.
    let j_n = f.div(&sc, &m);
    let scale = f.k(SCALE);
    let k = f.mul(&count, &scale);
    let k = f.neg(&k);
    let under_count = f.k(UNDER_COUNT);
    let gone = f.cmp(CmpF::Oge, &count, &under_count);
    let k = f.sel(&gone, &zero, &k);
    let j_n = f.ldexp(&j_n, &k);
    let j_n = f.sel(&gone, &zero, &j_n);
    // Y_n upward (only where wanted), stopping once it overflows.
    let need = f.and(want_y, &regular);
    let minus_one = f.c(-1.0);
    let y_steps = f.add(&nl, &minus_one);
    let y_steps = f.sel(&need, &y_steps, &zero);
    let (mu_in, x_in) = (mu.clone(), x_r.clone());
    let y_scale = f.k(Y_SCALE);
    let y0 = f.mul(&y0, &y_scale);
    let y1 = f.mul(&y1, &y_scale);
    let upy = f.b.scf_while(
        &[zero.clone(), y0.clone(), y1],
        |c, v| {
            let mut g = g!(c, ty);
            let going = g.cmp(CmpF::Olt, &v[0], &y_steps);
            let inf = g.c(f64::INFINITY);
            let a = g.abs(&v[2]);
            let finite = g.cmp(CmpF::Olt, &a, &inf);
            g.and(&going, &finite)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (j, a, b) = (&v[0], &v[1], &v[2]);
            let one = g.c(1.0);
            let two = g.c(2.0);
            let j = g.add(j, &one);
            let nu = g.add(&mu_in, &j);
            let nu2 = g.mul(&two, &nu);
            let c = g.div(&nu2, &x_in);
            let minus = g.neg(a);
            let next = g.fma(&c, b, &minus);
            vec![j, b.clone(), next]
        },
    );
    let a = f.abs(&upy[2]);
    let overflowed = f.cmp(CmpF::Oeq, &a, &inf);
    let minus_inf = f.c(f64::NEG_INFINITY);
    let nl_zero = f.cmp(CmpF::Oeq, &nl, &zero);
    let y_n = f.sel(&nl_zero, &upy[1], &upy[2]);
    let y_n = f.sel(&overflowed, &minus_inf, &y_n);
    (j_n, y_n, ok)
}

/// The downward recurrence u_k-1 = 2k/x u_k - u_k+1 (stable for J) from u_o+s = a, u_o+s+1
/// = b over `steps` = s steps to (u_o, u_o+1), as (u_o hi, lo, u_o+1 hi, lo, count): in
/// two floats (each step's rounding would otherwise add up where the values grow:
/// jv(22, 2.57), 22 steps, was 14 ULP off), kept below 2^SCALE by `count` factors
/// 2^-SCALE. `split_order`: the orders o + j in two floats (o is not small; else o + j is
/// exact, o = mu). `upward`: the orders o - j instead, the same steps then being Y's
/// upward recurrence u_k+1 = 2k/x u_k - u_k-1 from u_o-s = b, u_o-s+1 = a to u_o (first).
fn recur_down(
    f: &mut F,
    origin: &Value,
    (split_order, upward): (bool, bool),
    steps: &Value,
    x: &Value,
    a: (&Value, &Value),
    b: (&Value, &Value),
) -> (Value, Value, Value, Value, Value) {
    let zero = f.c(0.0);
    let ty = f.ty;
    let (o_in, x_in) = (origin.clone(), x.clone());
    let down = f.b.scf_while(
        &[steps.clone(), a.0.clone(), a.1.clone(), b.0.clone(), b.1.clone(), zero],
        |c, v| {
            let mut g = g!(c, ty);
            let zero = g.c(0.0);
            g.cmp(CmpF::Ogt, &v[0], &zero)
        },
        |l, v| {
            let mut g = g!(l, ty);
            let (j, a_hi, a_lo, b_hi, b_lo, count) = (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
            let one = g.c(1.0);
            // c = 2 nu / x as c_hi + c_lo, nu = o + j.
            let (c_hi, c_lo) = if split_order {
                let j = if upward { g.neg(j) } else { j.clone() };
                let (nu, nu_lo) = g.two_sum(&o_in, &j);
                twice_over(&mut g, &nu, Some(&nu_lo), &x_in)
            } else {
                let nu = g.add(&o_in, j);
                twice_over(&mut g, &nu, None, &x_in)
            };
            // c a - b.
            let (p, pe) = g.two_prod(&c_hi, a_hi);
            let pe = g.fma(&c_hi, a_lo, &pe);
            let pe = g.fma(&c_lo, a_hi, &pe);
            let minus_b = g.neg(b_hi);
            let (s, se) = g.two_sum(&p, &minus_b);
            let low = g.sub(&pe, b_lo);
            let se = g.add(&se, &low);
            let (n_hi, n_lo) = g.fast_two_sum(&s, &se);
            let up = g.k(UP);
            let low = g.k(LOW);
            let abs = g.abs(&n_hi);
            let big = g.cmp(CmpF::Ogt, &abs, &up);
            let mut out = vec![];
            for (value, keep) in [(&n_hi, &n_hi), (&n_lo, &n_lo), (a_hi, a_hi), (a_lo, a_lo)] {
                let scaled = g.mul(value, &low);
                out.push(g.sel(&big, &scaled, keep));
            }
            let more = g.add(count, &one);
            let count = g.sel(&big, &more, count);
            let j = g.sub(j, &one);
            vec![j, out[0].clone(), out[1].clone(), out[2].clone(), out[3].clone(), count]
        },
    );
    (down[1].clone(), down[2].clone(), down[3].clone(), down[4].clone(), down[5].clone())
}

/// J_mu(x) = (x/2)^mu / Gamma(1 + mu) sum_k (-x^2/4)^k / (k! (mu + 1)_k), |mu| <= 1/2,
/// 0 < x < SERIES_X: the sum nested from its last term, (x/2)^mu from mu ln(2/x) in two floats.
fn j_mu_series(f: &mut F, mu: &Value, x: &Value) -> Value {
    let one = f.c(1.0);
    let quarter = f.c(0.25);
    let xx = f.mul(x, x);
    let z = f.mul(&xx, &quarter);
    let mut s = one.clone();
    for k in (1..=SERIES_TERMS).rev() {
        let kk = f.c(k as f64);
        let mk = f.add(mu, &kk);
        let den = f.mul(&mk, &kk);
        let t = f.div(&z, &den);
        let minus_t = f.neg(&t);
        s = f.fma(&minus_t, &s, &one);
    }
    let (g1, g2) = temme_gammas(f, mu);
    let mu_g1 = f.mul(mu, &g1);
    let gampl = f.sub(&g2, &mu_g1);
    let (s_hi, s_lo, _) = sigma(f, mu, x);
    let minus_s = f.neg(&s_hi);
    let e_inv = f.exp(&minus_s);
    let minus_lo = f.neg(&s_lo);
    let e_inv = f.fma(&e_inv, &minus_lo, &e_inv);
    let lead = f.mul(&e_inv, &gampl);
    f.mul(&lead, &s)
}

/// `jv(v, x)`, the Bessel function of the first kind of real order v.
pub fn jv(b: &mut Block, v: &Value, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let o = RealOrder::new(f, v, x);
    let want_y = f.and(&o.use_reflection, &o.regular);
    let (j, y, ok, j_neg_tiny, tiny_neg) = jy(f, &o.n_r, &o.a_r, &want_y);
    // J_-n = cos(n pi) J_n - sin(n pi) Y_n.
    let (s, c) = sin_cos_pi(f, &o.n_r);
    let sy = f.mul(&s, &y);
    let unscale = f.k(Y_UNSCALE);
    let sy = f.mul(&sy, &unscale);
    let minus = f.neg(&sy);
    let reflected = f.fma(&c, &j, &minus);
    // (Below TINY_X and in Hankel's region, J_-n directly.)
    let reflected = f.sel(&tiny_neg, &j_neg_tiny, &reflected);
    let r = f.sel(&o.use_reflection, &reflected, &j);
    // Integer orders: (-1)^v for x < 0 and for v < 0 (the two together cancel).
    o.special_values(f, v, x, &r, &ok, Some(&o.negative_v))
}
