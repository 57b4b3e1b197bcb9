//! The exponential and logarithm family: expm1, log1p, exp2, log2, log10, the hyperbolic
//! functions and their inverses, sigmoid, softplus, log1mexp.
//!
//! Everything here is built on IREE's `math.exp` and `math.log`, which are within 0.5 ULP
//! in f64 (measured: 0.5008 ULP max on 3,000 points each near 1, among tiny and huge
//! magnitudes, and over the whole range), plus formulas that do not lose what those two
//! get right: Kahan's expm1 and log1p (the rounding error of `exp(x)` or `1 + x` cancels
//! between numerator and denominator), fdlibm-style choices of formula per range for the
//! hyperbolic functions, and exact scaling by powers of two. IREE's own expm1, log1p, sinh,
//! asinh, acosh and atanh are thousands of ULP off in f64 (../shared/FACTS.md).
//!
//! Each function works on its argument's float type, f32 or f64, with IREE's exp and log of
//! that type. On llvm-cpu (and CUDA) `scalar.rs` calls the f64 versions for f32 data and
//! rounds once, which makes them nearly correctly rounded; the f32 versions are what
//! Vulkan and Metal get (whose f32 exp and log are the device's: lavapipe's exp is within
//! 68 ULP, so nothing built on it is better there). Split constants (hi + lo) come from
//! `scripts/exp_log_constants.py` (mpmath at 200 bits).

use super::{PerType, F};
use crate::mlir::{Arith, Block, Cast, CmpF, MathUnary, ScalarType, Value};

pub(super) const LN2_HI: PerType = (std::f64::consts::LN_2, std::f32::consts::LN_2 as f64);
pub(super) const LN2_LO: PerType = (2.3190468138462996e-17, -1.9046542121259336e-09);
const INV_LN2_HI: PerType = (std::f64::consts::LOG2_E, std::f32::consts::LOG2_E as f64);
const INV_LN2_LO: PerType = (2.0355273740931033e-17, 1.925963033500011e-08);
const INV_LN10_HI: PerType = (std::f64::consts::LOG10_E, std::f32::consts::LOG10_E as f64);
const INV_LN10_LO: PerType = (1.098319650216765e-17, -1.0103049952192578e-08);
/// log10(2) with hi cut to 42 (f64) or 16 (f32) bits, so that `e * hi` is exact for any
/// binary exponent `e` of the type.
#[allow(clippy::approx_constant)] // cut short on purpose
const LOG10_2_HI: PerType = (0.30102999566395283, 0.301025390625);
const LOG10_2_LO: PerType = (2.8363394551044964e-14, 4.605039066518657e-06);

/// log(u), relative to itself also for u near 1. In f64 that is IREE's `math.log` (0.5 ULP
/// measured, near 1 too). In f32 (the Vulkan and Metal path) the device's log may be
/// accurate only in absolute terms (lavapipe's log(1 + 4.5e-5) was 4e-4 off relatively):
/// within 1/4 of 1 it is 2 atanh(s) = 2s(1 + s^2/3 + s^4/5 + s^6/7 + s^8/9) with
/// s = (u - 1)/(u + 1), |s| <= 1/7, whose next term is below f32's rounding.
fn log_near_one(f: &mut F, u: &Value) -> Value {
    let l = f.log(u);
    if f.f64() {
        return l;
    }
    let one = f.c(1.0);
    let d = f.sub(u, &one);
    let e = f.add(u, &one);
    let s = f.div(&d, &e);
    let p = f.mul(&s, &s);
    let mut poly = f.c(1.0 / 9.0);
    for c in [1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0, 1.0] {
        let k = f.c(c);
        poly = f.fma(&poly, &p, &k);
    }
    let two_s = f.add(&s, &s);
    let series = f.mul(&two_s, &poly);
    let ad = f.abs(&d);
    let quarter = f.c(0.25);
    let near = f.cmp(CmpF::Olt, &ad, &quarter);
    f.sel(&near, &series, &l)
}

/// expm1(x) = e^x - 1. With x = k ln2 + r (k = round(x / ln2), r to twice the precision,
/// |r| <= ln2/2), expm1(x) = 2^k expm1(r) + (2^k - 1): the power of two is exact, 2^k - 1
/// too (k <= 52, or 23 in f32), so the sum rounds once. expm1(r) itself is
/// (u - 1) + u (r - log u) with u = exp(r): u - 1 is exact (u in [0.7, 1.42]) and r - log u,
/// exact too (Sterbenz), is the rounding error of u seen through log, added back to first
/// order; u == 1 means expm1(r) rounds to r. Below 1e-18 (1e-9) expm1(x) rounds to x. Past 36 (15 in f32)
/// expm1 and exp round alike (and overflow alike); below -40 (-18) expm1 rounds to -1.
pub fn expm1(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    expm1_in(&mut f, x)
}

fn expm1_in(f: &mut F, x: &Value) -> Value {
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let minus_one = f.c(-1.0);
    // Reduction (x is clamped so k stays small; the clamped range is decided below).
    let limit = f.t(40.0, 18.0);
    let minus_limit = f.neg(&limit);
    let above = f.cmp(CmpF::Ogt, x, &limit);
    let xc = f.sel(&above, &limit, x);
    let below = f.cmp(CmpF::Olt, &xc, &minus_limit);
    let xc = f.sel(&below, &minus_limit, &xc);
    let inv_ln2 = f.k(INV_LN2_HI);
    let half = f.c(0.5);
    let k = f.fma(&xc, &inv_ln2, &half);
    let k = f.b.math(MathUnary::Floor, &k);
    let k_nan = f.cmp(CmpF::Uno, &k, &k);
    let k = f.sel(&k_nan, &zero, &k);
    let minus_k = f.neg(&k);
    let ln2_hi = f.k(LN2_HI);
    let ln2_lo = f.k(LN2_LO);
    // r = x - k ln2 as r_hi + r_lo: k * ln2_hi's product is exact in the FMA, and the
    // sum's rounding error is recovered by Fast2Sum.
    let t = f.fma(&minus_k, &ln2_hi, &xc);
    let klo = f.mul(&minus_k, &ln2_lo);
    let r_hi = f.add(&t, &klo);
    let back = f.sub(&r_hi, &t);
    let r_lo = f.sub(&klo, &back);
    // expm1(r_hi + r_lo).
    let u = f.exp(&r_hi);
    let um1 = f.sub(&u, &one);
    let log_u = log_near_one(f, &u);
    let c = f.sub(&r_hi, &log_u);
    let c = f.add(&c, &r_lo);
    let em = f.fma(&u, &c, &um1);
    let u_is_one = f.cmp(CmpF::Oeq, &u, &one);
    let em = f.sel(&u_is_one, &r_hi, &em);
    // 2^k expm1(r) + (2^k - 1); k == 0 is em itself (keeps -0.0).
    let scaled = f.ldexp(&em, &k);
    let p = f.ldexp(&one, &k);
    let pm1 = f.sub(&p, &one);
    let r = f.add(&scaled, &pm1);
    let k_zero = f.cmp(CmpF::Oeq, &k, &zero);
    let r = f.sel(&k_zero, &em, &r);
    let big = f.t(36.0, 15.0);
    let large = f.cmp(CmpF::Ogt, x, &big);
    let ex = f.exp(x);
    let r = f.sel(&large, &ex, &r);
    let small = f.cmp(CmpF::Olt, x, &minus_limit);
    let r = f.sel(&small, &minus_one, &r);
    // Tiny x: x itself, with its sign (r_hi's zero takes k*ln2_lo's sign, which in f32 is
    // negative).
    let a = f.abs(x);
    let tiny_limit = f.t(1e-18, 1e-9);
    let tiny = f.cmp(CmpF::Olt, &a, &tiny_limit);
    let r = f.sel(&tiny, x, &r);
    f.keep_nan(x, &r)
}

/// log1p(x) = log(1 + x): with u = 1 + x rounded and c = (1 + x) - u its rounding error
/// (exact, by TwoSum), log(1 + x) = log(u + c) = log(u) + c/u (the next term, c^2/2u^2,
/// is below 2^-106 relatively): log's error plus one rounding, where Kahan's
/// log(u) * x / (u - 1) has three. u == 1: log1p rounds to x (-0.0 kept); +inf and -1 (where
/// c/u is nan) are set apart; x < -1 gives nan through `log`.
pub fn log1p(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    log1p_in(&mut f, x)
}

fn log1p_in(f: &mut F, x: &Value) -> Value {
    let one = f.c(1.0);
    let minus_one = f.c(-1.0);
    let inf = f.c(f64::INFINITY);
    let minus_inf = f.c(f64::NEG_INFINITY);
    let u = f.add(&one, x);
    // TwoSum(1, x): c = (1 - (u - bb)) + (x - bb) with bb = u - 1.
    let bb = f.sub(&u, &one);
    let a_part = f.sub(&u, &bb);
    let a_err = f.sub(&one, &a_part);
    let b_err = f.sub(x, &bb);
    let c = f.add(&a_err, &b_err);
    let log_u = log_near_one(f, &u);
    let correction = f.div(&c, &u);
    let r = f.add(&log_u, &correction);
    let u_is_one = f.cmp(CmpF::Oeq, &u, &one);
    let r = f.sel(&u_is_one, x, &r);
    let x_inf = f.cmp(CmpF::Oeq, x, &inf);
    let r = f.sel(&x_inf, &inf, &r);
    let x_minus_one = f.cmp(CmpF::Oeq, x, &minus_one);
    f.sel(&x_minus_one, &minus_inf, &r)
}

/// x = m * 2^e with m in [sqrt(1/2), sqrt(2)), for a positive finite x (subnormals too):
/// (m, e as a float). Other x give garbage, to be replaced by the caller.
fn split_exponent(f: &mut F, x: &Value) -> (Value, Value) {
    let (ity, fraction_bits, bias, pre_bits, min_normal) = if f.f64() {
        (ScalarType::I64, 52i64, 1023i64, 54, f64::MIN_POSITIVE)
    } else {
        (ScalarType::I32, 23, 127, 25, f32::MIN_POSITIVE as f64)
    };
    // Subnormals are scaled into the normal range first, exactly.
    let tiny = f.c(min_normal);
    let is_subnormal = f.cmp(CmpF::Olt, x, &tiny);
    let scale = f.c((pre_bits as f64).exp2());
    let scaled = f.mul(x, &scale);
    let xs = f.sel(&is_subnormal, &scaled, x);
    let pre = f.c(-(pre_bits as f64));
    let zero = f.c(0.0);
    let e_adjust = f.sel(&is_subnormal, &pre, &zero);
    let bits = f.b.cast(Cast::Bitcast, &xs, ity);
    let width = f.b.constant_int(fraction_bits, ity);
    let biased = f.b.shrui(&bits, &width);
    let fraction_mask = f.b.constant_int((1i64 << fraction_bits) - 1, ity);
    let fraction = f.b.arith(Arith::AndI, &bits, &fraction_mask);
    let one_bits = f.b.constant_int(bias << fraction_bits, ity);
    let m_bits = f.b.arith(Arith::OrI, &fraction, &one_bits);
    let m = f.b.cast(Cast::Bitcast, &m_bits, f.ty);
    let bias_i = f.b.constant_int(bias, ity);
    let e = f.b.arith(Arith::SubI, &biased, &bias_i);
    let e = f.b.cast(Cast::SIToFP, &e, f.ty);
    let e = f.add(&e, &e_adjust);
    // m in [1, 2): halve the upper part, so that log(m) is small either way.
    let sqrt2 = f.c(std::f64::consts::SQRT_2);
    let upper = f.cmp(CmpF::Ogt, &m, &sqrt2);
    let half = f.c(0.5);
    let one = f.c(1.0);
    let m_half = f.mul(&m, &half);
    let m = f.sel(&upper, &m_half, &m);
    let e_up = f.add(&e, &one);
    let e = f.sel(&upper, &e_up, &e);
    (m, e)
}

/// log(x) for a positive finite x to about twice the working precision, as (hi, lo):
/// e ln2 (split, so the product is carried exactly) plus log(m), |log m| <= 0.35, whose
/// rounding is the only error: about 3e-17 absolute in f64, whatever the size of log x.
pub(super) fn log_dd(f: &mut F, x: &Value) -> (Value, Value) {
    let (m, e) = split_exponent(f, x);
    let (p, p_lo) = f.mul_split(&e, LN2_HI, LN2_LO);
    let lm = f.log(&m);
    let (hi, lo) = f.two_sum(&p, &lm);
    let lo = f.add(&lo, &p_lo);
    f.fast_two_sum(&hi, &lo)
}

/// The special values of a logarithm: -inf at +-0, nan below 0 (and at nan), +inf at +inf.
fn log_specials(f: &mut F, x: &Value, r: &Value) -> Value {
    let zero = f.c(0.0);
    let inf = f.c(f64::INFINITY);
    let minus_inf = f.c(f64::NEG_INFINITY);
    let nan = f.c(f64::NAN);
    let is_inf = f.cmp(CmpF::Oeq, x, &inf);
    let r = f.sel(&is_inf, &inf, r);
    let is_zero = f.cmp(CmpF::Oeq, x, &zero);
    let r = f.sel(&is_zero, &minus_inf, &r);
    let non_negative = f.cmp(CmpF::Oge, x, &zero);
    f.sel(&non_negative, &r, &nan)
}

/// log2(x) = e + log(m) / ln 2 for x = m * 2^e: exact at powers of two (log(1) = 0), and
/// the product with 1/ln2 carried to twice the precision, so the error is log(m)'s.
pub fn log2(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let (m, e) = split_exponent(&mut f, x);
    let l = log_near_one(&mut f, &m);
    let (p, p_low) = f.mul_split(&l, INV_LN2_HI, INV_LN2_LO);
    // |e| >= 1 > |p| or e == 0: Fast2Sum's condition holds.
    let s = f.add(&e, &p);
    let back = f.sub(&s, &e);
    let t = f.sub(&p, &back);
    let low = f.add(&t, &p_low);
    let r = f.add(&s, &low);
    log_specials(&mut f, x, &r)
}

/// log10(x) = e * log10(2) + log(m) / ln 10 for x = m * 2^e, e * log10(2) split so that
/// its high part is exact, the rest carried in a low part and added once.
pub fn log10(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let (m, e) = split_exponent(&mut f, x);
    let l = log_near_one(&mut f, &m);
    let (p, p_low) = f.mul_split(&l, INV_LN10_HI, INV_LN10_LO);
    let hi = f.k(LOG10_2_HI);
    let lo = f.k(LOG10_2_LO);
    let a = f.mul(&e, &hi);
    let a_low = f.mul(&e, &lo);
    // |a| >= log10(2) > |p| (|log m| <= ln2/2) or a == 0: Fast2Sum.
    let s = f.add(&a, &p);
    let back = f.sub(&s, &a);
    let t = f.sub(&p, &back);
    let low = f.add(&a_low, &p_low);
    let low = f.add(&t, &low);
    let r = f.add(&s, &low);
    log_specials(&mut f, x, &r)
}

/// exp2(x) = 2^k * exp(r * ln2) with k = round(x) and r = x - k exact (|r| <= 1/2): the
/// product r * ln2 to twice the precision, its low part applied as exp(p)(1 + low); the
/// power of two exactly (so integer x give exact powers). x is clamped first (past the
/// clamp the result is inf or 0 anyway); nan stays nan.
pub fn exp2(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let limit = f.t(1100.0, 160.0);
    let minus_limit = f.neg(&limit);
    let above = f.cmp(CmpF::Ogt, x, &limit);
    let xc = f.sel(&above, &limit, x);
    let below = f.cmp(CmpF::Olt, &xc, &minus_limit);
    let xc = f.sel(&below, &minus_limit, &xc);
    let half = f.c(0.5);
    let shifted = f.add(&xc, &half);
    let k = f.b.math(MathUnary::Floor, &shifted);
    let zero = f.c(0.0);
    let k_nan = f.cmp(CmpF::Uno, &k, &k);
    let k = f.sel(&k_nan, &zero, &k);
    let r = f.sub(&xc, &k);
    let (p, low) = f.mul_split(&r, LN2_HI, LN2_LO);
    let e = f.exp(&p);
    let e = f.fma(&e, &low, &e);
    let r = f.ldexp(&e, &k);
    f.keep_nan(x, &r)
}

/// sinh, as fdlibm: with t = expm1(|x|), sinh = (2t - t^2/(t+1)) / 2 below 1 and
/// (t + t/(t+1)) / 2 above (e^-|x| = 1/(t+1)); past 22 (12 in f32) e^-|x| no longer shows
/// and sinh = e^|x| / 2, as h * (h / 2) with h = e^(|x|/2) so it overflows only where
/// sinh does. The sign is x's (-0.0 kept).
pub fn sinh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let two = f.c(2.0);
    let t = expm1_in(&mut f, &a);
    let t1 = f.add(&t, &one);
    let tt = f.mul(&t, &t);
    let q = f.div(&tt, &t1);
    let two_t = f.mul(&two, &t);
    let small = f.sub(&two_t, &q);
    let small = f.mul(&small, &half);
    let q2 = f.div(&t, &t1);
    let mid = f.add(&t, &q2);
    let mid = f.mul(&mid, &half);
    let large = exp_half_squared(&mut f, &a);
    let below_one = f.cmp(CmpF::Olt, &a, &one);
    let r = f.sel(&below_one, &small, &mid);
    let limit = f.t(22.0, 12.0);
    let beyond = f.cmp(CmpF::Oge, &a, &limit);
    let r = f.sel(&beyond, &large, &r);
    let r = f.keep_nan(x, &r);
    f.copysign(&r, x)
}

/// e^a / 2 for a >= 0, as h * (h / 2) with h = e^(a/2): finite wherever the result is.
fn exp_half_squared(f: &mut F, a: &Value) -> Value {
    let half = f.c(0.5);
    let a_half = f.mul(a, &half);
    let h = f.exp(&a_half);
    let h_half = f.mul(&h, &half);
    f.mul(&h_half, &h)
}

/// cosh, as fdlibm: 1 + t^2 / (2(1+t)) with t = expm1(|x|) below ln2/2 (where the sum
/// of exponentials would lose the small part), e/2 + 1/(2e) with e = e^|x| up to 22 (12 in
/// f32), e^|x| / 2 past that.
pub fn cosh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let t = expm1_in(&mut f, &a);
    let w = f.add(&one, &t);
    let ww = f.add(&w, &w);
    let tt = f.mul(&t, &t);
    let q = f.div(&tt, &ww);
    let small = f.add(&one, &q);
    let e = f.exp(&a);
    let e_half = f.mul(&half, &e);
    let inv = f.div(&half, &e);
    let mid = f.add(&e_half, &inv);
    let large = exp_half_squared(&mut f, &a);
    let small_limit = f.c(0.5 * std::f64::consts::LN_2);
    let is_small = f.cmp(CmpF::Olt, &a, &small_limit);
    let r = f.sel(&is_small, &small, &mid);
    let limit = f.t(22.0, 12.0);
    let beyond = f.cmp(CmpF::Oge, &a, &limit);
    let r = f.sel(&beyond, &large, &r);
    f.keep_nan(x, &r)
}

/// tanh, as fdlibm: -t/(t+2) with t = expm1(-2|x|) below 1, 1 - 2/(t+2) with
/// t = expm1(2|x|) up to 22 (10 in f32), past which tanh rounds to 1. Sign of x.
pub fn tanh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let two_a = f.add(&a, &a);
    let minus_two_a = f.neg(&two_a);
    let t = expm1_in(&mut f, &minus_two_a);
    let t2 = f.add(&t, &two);
    let minus_t = f.neg(&t);
    let small = f.div(&minus_t, &t2);
    let u = expm1_in(&mut f, &two_a);
    let u2 = f.add(&u, &two);
    let q = f.div(&two, &u2);
    let mid = f.sub(&one, &q);
    let below_one = f.cmp(CmpF::Olt, &a, &one);
    let r = f.sel(&below_one, &small, &mid);
    let limit = f.t(22.0, 10.0);
    let beyond = f.cmp(CmpF::Oge, &a, &limit);
    let r = f.sel(&beyond, &one, &r);
    let r = f.keep_nan(x, &r);
    f.copysign(&r, x)
}

/// log(a) + ln2 = log(2a) without overflow, for a past 2^28 (2^12 in f32), where
/// asinh(a) and acosh(a) equal log(2a) to the last bit.
fn log_twice(f: &mut F, a: &Value) -> Value {
    let l = f.log(a);
    let ln2 = f.c(std::f64::consts::LN_2);
    f.add(&l, &ln2)
}

/// asinh, as fdlibm: log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) up to 2,
/// log(2|x| + 1 / (|x| + sqrt(x^2 + 1))) up to 2^28 (2^12 in f32), log(|x|) + ln2 past.
/// Sign of x.
pub fn asinh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let t = f.mul(&a, &a);
    let s = f.add(&one, &t);
    let s = f.sqrt(&s);
    let d = f.add(&one, &s);
    let q = f.div(&t, &d);
    let arg = f.add(&a, &q);
    let small = log1p_in(&mut f, &arg);
    let s2 = f.add(&t, &one);
    let s2 = f.sqrt(&s2);
    let d2 = f.add(&s2, &a);
    let inv = f.div(&one, &d2);
    let two_a = f.mul(&two, &a);
    let arg2 = f.add(&two_a, &inv);
    let mid = f.log(&arg2);
    let huge = log_twice(&mut f, &a);
    let above_two = f.cmp(CmpF::Ogt, &a, &two);
    let r = f.sel(&above_two, &mid, &small);
    let limit = f.t(268435456.0, 4096.0);
    let beyond = f.cmp(CmpF::Ogt, &a, &limit);
    let r = f.sel(&beyond, &huge, &r);
    f.copysign(&r, x)
}

/// acosh, as fdlibm: log1p(t + sqrt(2t + t^2)) with t = x - 1 (exact) up to 2,
/// log(2x - 1 / (x + sqrt(x^2 - 1))) up to 2^28 (2^12 in f32), log(x) + ln2 past; nan below 1
/// (through sqrt of a negative number).
pub fn acosh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let t = f.sub(x, &one);
    let two_t = f.add(&t, &t);
    let tt = f.mul(&t, &t);
    let inner = f.add(&two_t, &tt);
    let root = f.sqrt(&inner);
    let arg = f.add(&t, &root);
    let small = log1p_in(&mut f, &arg);
    let xx = f.mul(x, x);
    let xx1 = f.sub(&xx, &one);
    let s = f.sqrt(&xx1);
    let d = f.add(x, &s);
    let inv = f.div(&one, &d);
    let two_x = f.mul(&two, x);
    let arg2 = f.sub(&two_x, &inv);
    let mid = f.log(&arg2);
    let huge = log_twice(&mut f, x);
    let above_two = f.cmp(CmpF::Ogt, x, &two);
    let r = f.sel(&above_two, &mid, &small);
    let limit = f.t(268435456.0, 4096.0);
    let beyond = f.cmp(CmpF::Ogt, x, &limit);
    let r = f.sel(&beyond, &huge, &r);
    // Below 1 (-inf too): nan, whatever a branch made of it.
    let nan = f.c(f64::NAN);
    let below = f.cmp(CmpF::Olt, x, &one);
    f.sel(&below, &nan, &r)
}

/// atanh, as fdlibm: log1p(2a + 2a * a / (1 - a)) / 2 below 1/2 and
/// log1p(2a / (1 - a)) / 2 above (1 - a exact there), a = |x|; +-inf at +-1, nan past.
pub fn atanh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let two_a = f.add(&a, &a);
    let one_minus = f.sub(&one, &a);
    let p = f.mul(&two_a, &a);
    let q = f.div(&p, &one_minus);
    let arg = f.add(&two_a, &q);
    let small = log1p_in(&mut f, &arg);
    let arg2 = f.div(&two_a, &one_minus);
    let large = log1p_in(&mut f, &arg2);
    let below_half = f.cmp(CmpF::Olt, &a, &half);
    let r = f.sel(&below_half, &small, &large);
    let r = f.mul(&r, &half);
    // Past 1: nan (log1p of a number below -1 already is; +inf's quotient is not).
    let nan = f.c(f64::NAN);
    let beyond = f.cmp(CmpF::Ogt, &a, &one);
    let r = f.sel(&beyond, &nan, &r);
    f.copysign(&r, x)
}

/// sigmoid = 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) in (0, 1]: no
/// overflow (C's `1 / (1 + exp(-x))` gives 0 below -709 where sigmoid is subnormal).
pub fn sigmoid(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let minus_a = f.neg(&a);
    let e = f.exp(&minus_a);
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let d = f.add(&one, &e);
    let pos = f.div(&one, &d);
    let neg = f.div(&e, &d);
    let non_negative = f.cmp(CmpF::Oge, x, &zero);
    let r = f.sel(&non_negative, &pos, &neg);
    f.keep_nan(x, &r)
}

/// softplus = log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow, and for large x
/// the small term is added once to x.
pub fn softplus(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let minus_a = f.neg(&a);
    let e = f.exp(&minus_a);
    let l = log1p_in(&mut f, &e);
    let zero = f.c(0.0);
    let positive = f.cmp(CmpF::Ogt, x, &zero);
    let base = f.sel(&positive, x, &zero);
    let r = f.add(&base, &l);
    f.keep_nan(x, &r)
}

/// log1mexp = log(1 - e^x), as Maechler (2012): log1p(-exp(x)) below -ln2,
/// log(-expm1(x)) above; -inf at 0 (and -0.0), nan above 0.
pub fn log1mexp(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let e = f.exp(x);
    let minus_e = f.neg(&e);
    let low = log1p_in(&mut f, &minus_e);
    let m = expm1_in(&mut f, x);
    let minus_m = f.neg(&m);
    let high = f.log(&minus_m);
    let cut = f.c(-std::f64::consts::LN_2);
    let below = f.cmp(CmpF::Olt, x, &cut);
    f.sel(&below, &low, &high)
}
