//! The regularized incomplete beta function I_x(a, b) (PyTensor's `BetaInc`, behind
//! PyMC's Beta, Binomial and StudentT CDFs).
//!
//! Written once for both float types, as gamma.rs (f32 is computed in f64 and rounded once
//! where the target has f64 math; Vulkan and Metal run the same code in f32). The approach
//! (the textbook one, e.g. DLMF 8.17.22 and Numerical Recipes' `betai`):
//!
//! - I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 1 / (1 + d1 / (1 + d2 / (1 + ...))) with
//!   d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)), d(2m) = m(b-m) x / ((a+2m-1)(a+2m)),
//!   evaluated by Lentz's method in an `scf.while` until a step changes it by less than
//!   an ulp. It converges quickly for x < (a+1)/(a+b+2); beyond, the symmetry
//!   I_x(a, b) = 1 - I_(1-x)(b, a) swaps the arguments.
//! - The power term z^p w^q / B(p, q) (z the continued fraction's variable, w = 1 - z) is
//!   where accuracy is lost to cancellation for large p, q (lgamma(p + q) - lgamma(p) -
//!   lgamma(q) cancels to about eps * p log p). So three forms, by size:
//!   both p, q >= 10: Stirling's formula for the three gammas, which leaves
//!   sqrt(x0 q / 2pi) exp(p log1pmx(u) + q log1pmx(v) + mu(p+q) - mu(p) - mu(q)) with
//!   x0 = p / (p+q), u = (z - x0) / x0, v = -(z - x0) / y0 and log1pmx(u) = log(1+u) - u
//!   (both terms negative: no cancellation); one of them small (s < 10 <= l): Stirling for
//!   gamma(s + l) / gamma(l) only, exp(s log((s+l) z_s) + l log z_l + (l - 1/2)
//!   log1p(s/l) - s + mu(s+l) - mu(l)) / gamma(s); both < 10: exp(p log z + q log w)
//!   gamma(p+q) / gamma(p) / gamma(q) with our gamma (accurate to a few ulps).
//!   log x and log(1 - x) are taken as log(x) and log1p(-x), so the powers of a factor near
//!   1 keep their accuracy. What is left is the exponential's: an error of about
//!   eps |exponent|, i.e. tens of ulps where the result is far below 1e-10 (PyTensor's C
//!   code uses pow() there, accurate for a + b < 171).
//! - Known limitation: near the mean with a + b large, each odd step of the fraction
//!   computes 1 + d(2m+1) h' with the two terms cancelling to about 1 / (a + b) of their
//!   size, so rounding costs up to about (a + b) / 12 ulps (150 at a + b = 1800); an asymptotic
//!   expansion in a + b (Temme's) would be needed there. PyTensor's C code loses more on
//!   the same points (its lgamma form past a + b = 171).
//! - Known limitation: the power series (b x <= 1, x <= 0.99) computes its terms by a
//!   recurrence whose rounding grows with the term's index: about 1 / (1 - x) ulps
//!   (50 at x = 0.986), where scipy stays within 8.
//! - For a, b < 10 the power term adds the errors of three gamma evaluations and an
//!   exponential: up to about 12 ulps measured (scipy: within 8).
//!
//! Special values follow PyTensor's C code (`incbet.c`): nan where a <= 0, b <= 0, x
//! outside [0, 1] or any argument nan (and a or b infinite); 0 at x = 0 and 1 at x = 1.
//! Where I_x is within an ulp of 1 we return the rounded value 1 (the C code returns
//! 1 - 2^-53 there).

use super::{exp_log, gamma, F};
use crate::mlir::{Arith, Block, CmpF, ScalarType, Value};

/// Lentz's tiny value, which stands in for a zero denominator (per type: f64, f32).
const TINY: (f64, f64) = (1e-300, 1e-30);
/// The continued fraction stops when a step changes it by less than this (per type).
const TOLERANCE: (f64, f64) = (1.1102230246251565e-16, 5.960464477539063e-8);
/// The most steps: the fraction needs about sqrt(max(a, b)) of them near the mean.
const MAX_STEPS: f64 = 10000.0;
/// The power series is used for b x <= 1 up to this x (about 4000 terms at most).
const SERIES_BELOW: f64 = 0.99;
/// The power term switches to Stirling's formula for arguments from here.
const STIRLING_FROM: f64 = 10.0;

fn and(f: &mut F, a: &Value, c: &Value) -> Value {
    f.b.arith(Arith::AndI, a, c)
}

fn or(f: &mut F, a: &Value, c: &Value) -> Value {
    f.b.arith(Arith::OrI, a, c)
}

/// log(1 + u) - u for |u| < 1/2: with s = u / (2 + u), log(1 + u) = 2 atanh(s) =
/// 2 (s + s^3/3 + s^5/5 + ...) and 2s - u = -u s, so it is -u s + 2 s^3 (1/3 + s^2/5 + ...);
/// |s| <= 1/3 there, so 20 terms of the (exact, Taylor) series reach 1e-19.
fn log1pmx_small(f: &mut F, u: &Value) -> Value {
    let two = f.c(2.0);
    let den = f.add(&two, u);
    let s = f.div(u, &den);
    let s2 = f.mul(&s, &s);
    let coeffs: Vec<f64> = (0..20).map(|k| 1.0 / (2 * k + 3) as f64).collect();
    let p = f.poly(&s2, &coeffs, &coeffs[..9]);
    let s3 = f.mul(&s2, &s);
    let two_s3 = f.mul(&two, &s3);
    let tail = f.mul(&two_s3, &p);
    let us = f.mul(u, &s);
    f.sub(&tail, &us)
}

/// log(1 + u) - u, given also log(1 + u) computed from the factor's own logarithm (for
/// |u| >= 1/2, where nothing cancels).
fn log1pmx(f: &mut F, u: &Value, log_ratio: &Value) -> Value {
    let small = log1pmx_small(f, u);
    let big = f.sub(log_ratio, u);
    let au = f.abs(u);
    let half = f.c(0.5);
    let is_small = f.cmp(CmpF::Olt, &au, &half);
    f.sel(&is_small, &small, &big)
}

/// z^p w^q / B(p, q) for p, q > 0, z in (0, 1), w = 1 - z (log_z, log_w their logarithms).
/// `num` is z (p + q) - p (see `offset_from_mean`).
#[allow(clippy::too_many_arguments)]
fn power_term(f: &mut F, p: &Value, q: &Value, z: &Value, w: &Value, log_z: &Value, log_w: &Value, num: &Value) -> Value {
    let half = f.c(0.5);
    let from = f.c(STIRLING_FROM);
    let s = f.add(p, q);
    let mu_s = gamma::stirling_correction(f, &s);
    let mu_p = gamma::stirling_correction(f, p);
    let mu_q = gamma::stirling_correction(f, q);
    // Both >= 10. u = (z - x0) / x0 = (z (p + q) - p) / p and v = (w - y0) / y0 =
    // -(z (p + q) - p) / q: z - x0 itself would cancel near the mean (x0 rounded),
    // costing thousands of ulps in q v.
    let x0 = f.div(p, &s);
    let y0 = f.div(q, &s);
    let u = f.div(num, p);
    let minus_num = f.neg(num);
    let v = f.div(&minus_num, q);
    let log_x0 = f.log(&x0);
    let log_y0 = f.log(&y0);
    let ru = f.sub(log_z, &log_x0);
    let rv = f.sub(log_w, &log_y0);
    let lu = log1pmx(f, &u, &ru);
    let lv = log1pmx(f, &v, &rv);
    let mu = f.sub(&mu_s, &mu_p);
    let mu = f.sub(&mu, &mu_q);
    let e = f.fma(q, &lv, &mu);
    let e = f.fma(p, &lu, &e);
    let inv_two_pi = f.c(1.0 / (2.0 * std::f64::consts::PI));
    let r = f.mul(&x0, q);
    let r = f.mul(&r, &inv_two_pi);
    let lead = f.sqrt(&r);
    let ex = f.exp(&e);
    let both_big = f.mul(&lead, &ex);
    // One small (sm < 10 <= lg).
    let p_small = f.cmp(CmpF::Olt, p, q);
    let sm = f.sel(&p_small, p, q);
    let lg = f.sel(&p_small, q, p);
    let z_sm = f.sel(&p_small, z, w);
    let log_z_lg = f.sel(&p_small, log_w, log_z);
    let mu_lg = f.sel(&p_small, &mu_q, &mu_p);
    let sz = f.mul(&s, &z_sm);
    let log_sz = f.log(&sz);
    let ratio = f.div(&sm, &lg);
    let l1p = exp_log::log1p(f.b, &ratio);
    let lg_half = f.sub(&lg, &half);
    let mu = f.sub(&mu_s, &mu_lg);
    let e = f.sub(&mu, &sm);
    let e = f.fma(&lg_half, &l1p, &e);
    let e = f.fma(&lg, &log_z_lg, &e);
    let e = f.fma(&sm, &log_sz, &e);
    let ex = f.exp(&e);
    let gamma_sm = gamma::gamma(f.b, &sm);
    let one_small = f.div(&ex, &gamma_sm);
    // Both < 10.
    let e = f.mul(q, log_w);
    let e = f.fma(p, log_z, &e);
    let ex = f.exp(&e);
    let g_s = gamma::gamma(f.b, &s);
    let g_p = gamma::gamma(f.b, p);
    let g_q = gamma::gamma(f.b, q);
    let g = f.div(&g_s, &g_p);
    let g = f.div(&g, &g_q);
    let both_small = f.mul(&ex, &g);
    let p_big = f.cmp(CmpF::Oge, p, &from);
    let q_big = f.cmp(CmpF::Oge, q, &from);
    let big = and(f, &p_big, &q_big);
    let any_big = or(f, &p_big, &q_big);
    let r = f.sel(&any_big, &one_small, &both_small);
    f.sel(&big, &both_big, &r)
}

/// 1 / (1 + d1 / (1 + d2 / ...)) of I_z(p, q) by Lentz's method, two terms a step.
/// `num` is z (p + q) - p (see `offset_from_mean`).
/// `z_lo` is the rounding error of z (z + z_lo is 1 - x exactly when swapped): every term
/// is multiplied by z + z_lo, since near the mean each half ulp of z costs hundreds.
#[allow(clippy::too_many_arguments)]
fn continued_fraction(f: &mut F, p: &Value, q: &Value, z: &Value, z_lo: &Value, num: &Value, skip: &Value) -> Value {
    let ty = f.ty;
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let tiny = f.k(TINY);
    let s = f.add(p, q);
    let p1 = f.add(p, &one);
    // d = 1 / (1 - (p+q) z / (p+1)) = (p+1) / (1 - num), c = 1, h = d. Near the swap
    // point (a+1)/(a+b+2) the denominator cancels and h grows as large as its inverse:
    // every ulp of (p+q) z would cost hundreds in the result.
    let den = f.sub(&one, num);
    let d = fix_tiny(f, &den, &tiny);
    let d = f.div(&p1, &d);
    // `skip` lanes start converged (the last step 1) and stop at once.
    let start = f.sel(skip, &one, &zero);
    let inits = [one.clone(), d.clone(), one.clone(), d, start];
    let (p, q, z, z_lo, s) = (p.clone(), q.clone(), z.clone(), z_lo.clone(), s);
    let done = f.b.scf_while(
        &inits,
        |c, v| {
            let mut g = F { b: c, ty };
            let one = g.c(1.0);
            let change = g.sub(&v[4], &one);
            let change = g.abs(&change);
            let tol = g.k(TOLERANCE);
            let go_on = g.cmp(CmpF::Oge, &change, &tol);
            let max = g.c(MAX_STEPS);
            let more = g.cmp(CmpF::Ole, &v[0], &max);
            and(&mut g, &go_on, &more)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (m, h, c, d) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let tiny = g.k(TINY);
            let m2 = g.add(m, m);
            let pm2 = g.add(&p, &m2);
            // Even term: m (q - m) z / ((p + 2m - 1)(p + 2m)).
            let qm = g.sub(&q, m);
            let num = g.mul(m, &qm);
            let num = times_z(&mut g, &num, &z, &z_lo);
            let pm2m1 = g.sub(&pm2, &one);
            let den = g.mul(&pm2m1, &pm2);
            let aa = g.div(&num, &den);
            let (c, d, step) = lentz_step(&mut g, &aa, c, d, &tiny);
            let h = g.mul(h, &step);
            // Odd term: -(p + m)(p + q + m) z / ((p + 2m)(p + 2m + 1)).
            let pm = g.add(&p, m);
            let sm = g.add(&s, m);
            let num = g.mul(&pm, &sm);
            let num = times_z(&mut g, &num, &z, &z_lo);
            let num = g.neg(&num);
            let pm2p1 = g.add(&pm2, &one);
            let den = g.mul(&pm2, &pm2p1);
            let aa = g.div(&num, &den);
            let (c, d, step) = lentz_step(&mut g, &aa, &c, &d, &tiny);
            let h = g.mul(&h, &step);
            let m = g.add(m, &one);
            vec![m, h, c, d, step]
        },
    );
    done[1].clone()
}

/// v (z + z_lo), rounded once.
fn times_z(f: &mut F, v: &Value, z: &Value, z_lo: &Value) -> Value {
    let low = f.mul(v, z_lo);
    f.fma(v, z, &low)
}

fn fix_tiny(f: &mut F, v: &Value, tiny: &Value) -> Value {
    let a = f.abs(v);
    let small = f.cmp(CmpF::Olt, &a, tiny);
    f.sel(&small, tiny, v)
}

/// One term `aa` of Lentz's method: (c, d, the factor of h).
fn lentz_step(f: &mut F, aa: &Value, c: &Value, d: &Value, tiny: &Value) -> (Value, Value, Value) {
    let one = f.c(1.0);
    let d = f.fma(aa, d, &one);
    let d = fix_tiny(f, &d, tiny);
    let d = f.div(&one, &d);
    let ac = f.div(aa, c);
    let c = f.add(&one, &ac);
    let c = fix_tiny(f, &c, tiny);
    let step = f.mul(&d, &c);
    (c, d, step)
}

/// sum_(n >= 0) (1-b)(2-b)...(n-b) x^n / (n! (a + n)), the power series of
/// B_x(a, b) / x^a (DLMF 8.17.8 with 8.17.7), in an `scf.while` until a term is below an
/// ulp of the sum; `skip` lanes stop at once.
fn power_series(f: &mut F, a: &Value, b: &Value, x: &Value, skip: &Value) -> Value {
    let ty = f.ty;
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let first = f.div(&one, a);
    let one_minus_b = f.sub(&one, b);
    let t1 = f.mul(&one_minus_b, x);
    let t1 = f.sel(skip, &zero, &t1);
    let (a, b, x) = (a.clone(), b.clone(), x.clone());
    let a2 = a.clone();
    // The sum is compensated (Neumaier's, by TwoSum): up to thousands of terms near x = 1.
    let done = f.b.scf_while(
        &[one.clone(), t1, first, zero.clone()],
        |c, v| {
            let mut g = F { b: c, ty };
            let (n, t, sum) = (&v[0], &v[1], &v[2]);
            let an = g.add(&a2, n);
            let term = g.div(t, &an);
            let term = g.abs(&term);
            let tol = g.k(TOLERANCE);
            let limit = g.mul(sum, &tol);
            let go_on = g.cmp(CmpF::Ogt, &term, &limit);
            let max = g.c(MAX_STEPS);
            let more = g.cmp(CmpF::Ole, n, &max);
            and(&mut g, &go_on, &more)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (n, t, sum, err) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let an = g.add(&a, n);
            let term = g.div(t, &an);
            let (sum, e) = g.two_sum(sum, &term);
            let err = g.add(err, &e);
            let n1 = g.add(n, &one);
            let nb = g.sub(&n1, &b);
            let r = g.div(&nb, &n1);
            let r = g.mul(&r, &x);
            let t = g.mul(t, &r);
            vec![n1, t, sum, err]
        },
    );
    f.add(&done[2], &done[3])
}

/// z (p + q) - p for z = x (`swapped` false: p = a, q = b) or z = 1 - x (true: p = b,
/// q = a), which is -(x (p + q) - q) there, both from x itself (not the rounded 1 - x,
/// whose half ulp costs hundreds where the density is large) and the exact sum p + q,
/// with FMAs: the relative offset of z from the mean p / (p + q), times p + q.
fn offset_from_mean(f: &mut F, p: &Value, q: &Value, x: &Value, swapped: &Value) -> Value {
    let (s, s_lo) = f.two_sum(p, q);
    let minus_p = f.neg(p);
    let minus_q = f.neg(q);
    let c = f.sel(swapped, &minus_q, &minus_p);
    let n = f.fma(x, &s, &c);
    let n = f.fma(x, &s_lo, &n);
    let minus_n = f.neg(&n);
    f.sel(swapped, &minus_n, &n)
}

/// (I_x(a, b), x^a (1-x)^b / B(a, b)) without the special values: for a, b > 0 finite
/// and 0 < x < 1.
///
/// Where b x <= 1 and x <= 0.99 the power series (every term positive for b <= 1),
/// otherwise the continued fraction, on the swapped arguments past (a+1)/(a+b+2). The
/// series keeps small b accurate: there the swap's 1 - I_(1-x)(b, a) cancels (I near 1).
fn betainc_core(f: &mut F, a: &Value, b: &Value, x: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let two = f.c(2.0);
    let xc = f.sub(&one, x);
    let a1 = f.add(a, &one);
    let s = f.add(a, b);
    let s2 = f.add(&s, &two);
    let cut = f.div(&a1, &s2);
    let bx = f.mul(b, x);
    let small_bx = f.cmp(CmpF::Ole, &bx, &one);
    let series_cut = f.c(SERIES_BELOW);
    let x_ok = f.cmp(CmpF::Ole, x, &series_cut);
    let series = and(f, &small_bx, &x_ok);
    let past = f.cmp(CmpF::Ogt, x, &cut);
    let true_ = f.b.constant_int(1, ScalarType::I1);
    let not_series = f.b.arith(Arith::XOrI, &series, &true_);
    let swap = and(f, &past, &not_series);
    let p = f.sel(&swap, b, a);
    let q = f.sel(&swap, a, b);
    let z = f.sel(&swap, &xc, x);
    let w = f.sel(&swap, x, &xc);
    let log_x = f.log(x);
    let minus_x = f.neg(x);
    let log_xc = exp_log::log1p(f.b, &minus_x);
    let log_z = f.sel(&swap, &log_xc, &log_x);
    let log_w = f.sel(&swap, &log_x, &log_xc);
    let num = offset_from_mean(f, &p, &q, x, &swap);
    let pre = power_term(f, &p, &q, &z, &w, &log_z, &log_w, &num);
    // 1 - z is exact (z >= 1/2), and so is (1 - z) - x: the error of z = 1 - x.
    let zero = f.c(0.0);
    let omz = f.sub(&one, &z);
    let z_err = f.sub(&omz, x);
    let z_lo = f.sel(&swap, &z_err, &zero);
    let h = continued_fraction(f, &p, &q, &z, &z_lo, &num, &series);
    let i = f.mul(&pre, &h);
    let i = f.div(&i, &p);
    let rest = f.sub(&one, &i);
    let r = f.sel(&swap, &rest, &i);
    // The series: x^a / B(a, b) = pre / (1-x)^b (b |log(1-x)| <= 5 there).
    let sum = power_series(f, a, b, x, &not_series);
    let bl = f.mul(b, &log_xc);
    let minus_bl = f.neg(&bl);
    let undo = f.exp(&minus_bl);
    let i = f.mul(&pre, &undo);
    let i = f.mul(&i, &sum);
    // The power term is symmetric in (a, x) <-> (b, 1 - x): swapped or not, it is x^a (1-x)^b / B.
    (f.sel(&series, &i, &r), pre)
}

pub fn betainc(blk: &mut Block, a: &Value, b: &Value, x: &Value) -> Value {
    let mut f = F::new(blk, x);
    let f = &mut f;
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let inf = f.c(f64::INFINITY);
    // The core on safe arguments (every lane computes it; the special values replace it).
    let valid_a = f.cmp(CmpF::Ogt, a, &zero);
    let finite_a = f.cmp(CmpF::Olt, a, &inf);
    let valid_b = f.cmp(CmpF::Ogt, b, &zero);
    let finite_b = f.cmp(CmpF::Olt, b, &inf);
    let x_low = f.cmp(CmpF::Oge, x, &zero);
    let x_high = f.cmp(CmpF::Ole, x, &one);
    let mut valid = valid_a.clone();
    for c in [&finite_a, &valid_b, &finite_b, &x_low, &x_high] {
        valid = and(f, &valid, c);
    }
    let half = f.c(0.5);
    let inner_x = f.cmp(CmpF::Ogt, x, &zero);
    let below_one = f.cmp(CmpF::Olt, x, &one);
    let inner_x = and(f, &inner_x, &below_one);
    let safe = and(f, &valid, &inner_x);
    let sa = f.sel(&safe, a, &one);
    let sb = f.sel(&safe, b, &one);
    let sx = f.sel(&safe, x, &half);
    let (r, _) = betainc_core(f, &sa, &sb, &sx);
    let at_zero = f.cmp(CmpF::Oeq, x, &zero);
    let r = f.sel(&at_zero, &zero, &r);
    let at_one = f.cmp(CmpF::Oeq, x, &one);
    let r = f.sel(&at_one, &one, &r);
    let nan = f.c(f64::NAN);
    f.sel(&valid, &r, &nan)
}

// ---------------------------------------------------------------------------------------
// betaincinv: NOT WIRED (BetaIncInv stays refused by name). Newton on log I from the
// guess below, bracketed, reflecting to 1 - x past y = 1/2; it passes float32 but in
// float64 some roots near 1 of the reflected equation (a < 1 < b, y near 1) stop
// 1e-9 off (the bracket's halving is too slow there within INVERSE_STEPS). Kept for the
// next attempt; see the report of the betainc branch.

/// The starting point of betaincinv's iteration for y <= 1/2 (Abramowitz and Stegun
/// 26.5.22 for p, q >= 1: a normal approximation mapped through a / (a + b e^(2w)); below
/// that the leading terms x^p / (p B) and (1-x)^q / (q B) of the two tails, with B
/// approximated so that they add up to one).
fn inverse_guess(f: &mut F, p: &Value, q: &Value, y: &Value) -> Value {
    let one = f.c(1.0);
    let two = f.c(2.0);
    // Normal approximation: t = sqrt(-2 log y), z = t - (2.30753 + 0.27061 t) /
    // (1 + 0.99229 t + 0.04481 t^2) (A&S 26.2.22), the normal quantile of 1 - y.
    let ly = f.log(y);
    let m2 = f.c(-2.0);
    let t2 = f.mul(&m2, &ly);
    let t = f.sqrt(&t2);
    let c0 = f.c(2.30753);
    let c1 = f.c(0.27061);
    let num = f.fma(&c1, &t, &c0);
    let d1 = f.c(0.99229);
    let d2 = f.c(0.04481);
    let den = f.fma(&d2, &t, &d1);
    let den = f.fma(&den, &t, &one);
    let r = f.div(&num, &den);
    let zq = f.sub(&t, &r); // minus the lower quantile (the upper one of 1 - y)
    let three = f.c(3.0);
    let six = f.c(6.0);
    let zz = f.mul(&zq, &zq);
    let lam = f.sub(&zz, &three);
    let lam = f.div(&lam, &six);
    let tp = f.mul(&two, p);
    let tp = f.sub(&tp, &one);
    let ip = f.div(&one, &tp);
    let tq = f.mul(&two, q);
    let tq = f.sub(&tq, &one);
    let iq = f.div(&one, &tq);
    let sum = f.add(&ip, &iq);
    let h = f.div(&two, &sum);
    let lh = f.add(&lam, &h);
    let root = f.sqrt(&lh);
    let w1 = f.mul(&zq, &root);
    let w1 = f.div(&w1, &h);
    let diff = f.sub(&iq, &ip);
    let five_sixths = f.c(5.0 / 6.0);
    let two_thirds = f.c(2.0 / 3.0);
    let th = f.div(&two_thirds, &h);
    let k = f.add(&lam, &five_sixths);
    let k = f.sub(&k, &th);
    let w2 = f.mul(&diff, &k);
    let w = f.sub(&w1, &w2);
    let w2x = f.mul(&two, &w);
    let e = f.exp(&w2x);
    let qe = f.mul(q, &e);
    let den = f.add(p, &qe);
    let normal = f.div(p, &den);
    // Tails.
    let s = f.add(p, q);
    let lp = f.div(p, &s);
    let lq = f.div(q, &s);
    let llp = f.log(&lp);
    let llq = f.log(&lq);
    let ep = f.mul(p, &llp);
    let ep = f.exp(&ep);
    let tl = f.div(&ep, p);
    let eq = f.mul(q, &llq);
    let eq = f.exp(&eq);
    let tu = f.div(&eq, q);
    let wsum = f.add(&tl, &tu);
    let ratio = f.div(&tl, &wsum);
    let low_tail = f.cmp(CmpF::Olt, y, &ratio);
    let ip = f.div(&one, p);
    let iq = f.div(&one, q);
    let a1 = f.mul(p, &wsum);
    let a1 = f.mul(&a1, y);
    let la1 = f.log(&a1);
    let la1 = f.mul(&la1, &ip);
    let x_low = f.exp(&la1);
    let ymc = f.sub(&one, y);
    let b1 = f.mul(q, &wsum);
    let b1 = f.mul(&b1, &ymc);
    let lb1 = f.log(&b1);
    let lb1 = f.mul(&lb1, &iq);
    let eb = f.exp(&lb1);
    let x_high = f.sub(&one, &eb);
    let tails = f.sel(&low_tail, &x_low, &x_high);
    let p_big = f.cmp(CmpF::Oge, p, &one);
    let q_big = f.cmp(CmpF::Oge, q, &one);
    let both = and(f, &p_big, &q_big);
    let g = f.sel(&both, &normal, &tails);
    // Inside (0, 1), or the middle when the formulas fail.
    let zero = f.c(0.0);
    let inside = f.cmp(CmpF::Ogt, &g, &zero);
    let below = f.cmp(CmpF::Olt, &g, &one);
    let inside = and(f, &inside, &below);
    let half = f.c(0.5);
    f.sel(&inside, &g, &half)
}

/// The most Newton steps of betaincinv (each a betainc); they converge in a few.
const INVERSE_STEPS: f64 = 40.0;

/// x with I_x(p, q) = y for p, q > 0 finite and 0 < y < 1: Newton's method (on log I) from
/// `inverse_guess`, kept inside the bracket [lo, hi] the signs of I_x - y narrow (a step
/// leaving it halves the bracket instead), until a step is below an ulp of x.
fn inverse_lower(f: &mut F, p: &Value, q: &Value, y: &Value) -> Value {
    let ty = f.ty;
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let x0 = inverse_guess(f, p, q, y);
    let (p, q, y) = (p.clone(), q.clone(), y.clone());
    // State: step count, x, lo, hi, last step's relative size.
    let done = f.b.scf_while(
        &[zero.clone(), x0, zero.clone(), one.clone(), one.clone()],
        |c, v| {
            let mut g = F { b: c, ty };
            // Four ulps: closer, the rounding of I_x - y decides the steps.
            let tol = g.k((4.0 * TOLERANCE.0, 4.0 * TOLERANCE.1));
            let go_on = g.cmp(CmpF::Ogt, &v[4], &tol);
            let max = g.c(INVERSE_STEPS);
            let more = g.cmp(CmpF::Olt, &v[0], &max);
            and(&mut g, &go_on, &more)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (n, x, lo, hi) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let half = g.c(0.5);
            let (i, pre) = betainc_core(&mut g, &p, &q, x);
            let err = g.sub(&i, &y);
            let zero = g.c(0.0);
            let above = g.cmp(CmpF::Ogt, &err, &zero);
            let hi = g.sel(&above, x, hi);
            let lo = g.sel(&above, lo, x);
            // Newton on log I: x - log(I / y) I / I'(x), I' = x^(p-1) (1-x)^(q-1) / B =
            // pre / (x (1-x)); in the tails log I is nearly linear in log x, where
            // Newton on I itself creeps (y down to 1e-300). I = 0 (underflow) gives nan:
            // out of the bracket below.
            let xc = g.sub(&one, x);
            let xx = g.mul(x, &xc);
            let rel_err = g.div(&err, &y);
            let log_ratio = exp_log::log1p(g.b, &rel_err);
            let ratio = g.div(&i, &pre);
            let ratio = g.mul(&ratio, &log_ratio);
            let step = g.mul(&ratio, &xx);
            let next = g.sub(x, &step);
            let in_lo = g.cmp(CmpF::Ogt, &next, &lo);
            let in_hi = g.cmp(CmpF::Olt, &next, &hi);
            let inside = and(&mut g, &in_lo, &in_hi);
            // Out of the bracket: its midpoint, or its geometric-like midpoint near 0
            // (a tenth of hi, when lo is 0), so tiny roots are reached in few steps.
            let mid = g.add(&lo, &hi);
            let mid = g.mul(&mid, &half);
            let lo_zero = g.cmp(CmpF::Oeq, &lo, &zero);
            let tenth = g.c(0.1);
            let low_mid = g.mul(&hi, &tenth);
            let mid = g.sel(&lo_zero, &low_mid, &mid);
            let next = g.sel(&inside, &next, &mid);
            let change = g.sub(&next, x);
            let change = g.abs(&change);
            let rel = g.div(&change, &next);
            // Exactly at the root (err 0): done.
            let exact = g.cmp(CmpF::Oeq, &err, &zero);
            let rel = g.sel(&exact, &zero, &rel);
            let next = g.sel(&exact, x, &next);
            let n = g.add(n, &one);
            vec![n, next, lo, hi, rel]
        },
    );
    done[1].clone()
}


/// The inverse of betainc in x (PyTensor's `BetaIncInv`, which runs scipy's
/// `betaincinv`; its special values are scipy's): nan where a <= 0, b <= 0, y outside
/// [0, 1] or anything nan (and a or b infinite); 0 at y = 0, 1 at y = 1.
pub fn betaincinv(blk: &mut Block, a: &Value, b: &Value, y: &Value) -> Value {
    let mut f = F::new(blk, y);
    let f = &mut f;
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let inf = f.c(f64::INFINITY);
    let mut valid = f.cmp(CmpF::Ogt, a, &zero);
    for (v, p, c) in [(a, CmpF::Olt, &inf), (b, CmpF::Ogt, &zero), (b, CmpF::Olt, &inf), (y, CmpF::Oge, &zero), (y, CmpF::Ole, &one)] {
        let t = f.cmp(p, v, c);
        valid = and(f, &valid, &t);
    }
    let inner = f.cmp(CmpF::Ogt, y, &zero);
    let below = f.cmp(CmpF::Olt, y, &one);
    let inner = and(f, &inner, &below);
    let safe = and(f, &valid, &inner);
    let sa = f.sel(&safe, a, &one);
    let sb = f.sel(&safe, b, &one);
    let sy = f.sel(&safe, y, &half);
    // Past y = 1/2, solve I_(1-x)(b, a) = 1 - y (exact) for 1 - x where the root is past
    // 1/2 too (y > I_(1/2)(a, b)) or y > 0.9 (I near 1 is only accurate absolutely: the
    // complement is the better equation). Otherwise directly: a small root keeps its
    // relative accuracy (1 - (1 - x) would not), and 1 - y of a tiny y would lose y.
    let (i_half, _) = betainc_core(f, &sa, &sb, &half);
    let past_root = f.cmp(CmpF::Ogt, &sy, &i_half);
    let near_one = f.c(0.9);
    let near_one = f.cmp(CmpF::Ogt, &sy, &near_one);
    let past_root = or(f, &past_root, &near_one);
    let past_half = f.cmp(CmpF::Ogt, &sy, &half);
    let upper = and(f, &past_root, &past_half);
    let p = f.sel(&upper, &sb, &sa);
    let q = f.sel(&upper, &sa, &sb);
    let yc = f.sub(&one, &sy);
    let t = f.sel(&upper, &yc, &sy);
    let x = inverse_lower(f, &p, &q, &t);
    let xc = f.sub(&one, &x);
    let r = f.sel(&upper, &xc, &x);
    let at_zero = f.cmp(CmpF::Oeq, y, &zero);
    let r = f.sel(&at_zero, &zero, &r);
    let at_one = f.cmp(CmpF::Oeq, y, &one);
    let r = f.sel(&at_one, &one, &r);
    let nan = f.c(f64::NAN);
    f.sel(&valid, &r, &nan)
}
