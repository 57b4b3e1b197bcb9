//! The exponential and logarithm family: expm1, log1p, exp2, log2, log10, the hyperbolic
//! functions and their inverses, sigmoid, softplus, log1mexp.
//!
//! In f64 the exponential and the logarithm themselves are ours too (`exp_own`,
//! `log_own`, used through `F::exp`/`F::log`): IREE lowers f64 `math.exp` and `math.log`
//! on llvm-cpu to a scalar libm call per element (accurate, 0.5 ULP, but it keeps every
//! kernel around it unvectorized). Both are within 1 ULP: exp as 2^k (1 + expm1(r)) on a
//! Taylor kernel, log in fdlibm's arrangement with atanh's series. Around them, formulas
//! that do not lose what those get right: Kahan-style log1p (the rounding error of
//! `1 + x` added back), a Taylor expm1 with r + r^2/2 to twice the precision, fdlibm-style
//! choices of formula per range for the hyperbolic functions (each one expm1 or one log),
//! and exact scaling by powers of two. IREE's own expm1, log1p, sinh, asinh, acosh and
//! atanh are thousands of ULP off in f64 (../shared/FACTS.md).
//!
//! Each function works on its argument's float type, f32 or f64 (in f32 on our f32 exp
//! and log, exp_log_f32.rs). For f32 data `scalar.rs` calls the f64 versions and rounds
//! once on CUDA, and on llvm-cpu for the functions its `native_f32_op` leaves widened
//! (nearly correctly rounded); the f32 versions are what llvm-cpu's native functions,
//! Vulkan and Metal get. Split constants (hi + lo) come from
//! `scripts/exp_log_constants.py` (mpmath at 200 bits).

use super::{exp_log_f32, PerType, F};
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

/// log(u), relative to itself also for u near 1: `F::log`, ours in both types (`log_own`,
/// exp_log_f32.rs), each within 1 ULP, near 1 too. (Vulkan's and Metal's f32 log, which
/// the f32 path used before, was accurate only in absolute terms there: lavapipe's
/// log(1 + 4.5e-5) was 4e-4 off relatively.)
fn log_near_one(f: &mut F, u: &Value) -> Value {
    f.log(u)
}

/// 1/n! for n = 3..13 (f64) and 3..8 (f32): Taylor's series of expm1 past r + r^2/2. For
/// |r| <= ln2/2 the first term left out, r^14/14! (r^9/9!), is below 0.06 (0.01) of an ulp
/// of expm1(r).
const INV_FACTORIALS_64: [f64; 11] = [
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362880.0,
    1.0 / 3628800.0,
    1.0 / 39916800.0,
    1.0 / 479001600.0,
    1.0 / 6227020800.0,
];
const INV_FACTORIALS_32: [f64; 6] = [1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0];

/// expm1(x) = e^x - 1. With x = k ln2 + r (k = round(x / ln2), r to twice the precision,
/// |r| <= ln2/2), expm1(x) = 2^k expm1(r) + (2^k - 1): the power of two is exact, 2^k - 1
/// too (k <= 52, or 23 in f32), so the sum rounds once. expm1(r) is a polynomial
/// (`expm1_reduced`), no call to exp or log: the hyperbolic functions, each one expm1,
/// cost about one exp. Below 1e-18 (1e-9) expm1(x) rounds to x. Past 36 (15 in f32)
/// expm1 and exp round alike: 2^k (1 + expm1(r)), which overflows where exp does (x is
/// clamped at 710, 89 in f32, past the overflow); below -40 (-18) expm1 rounds to -1.
pub fn expm1(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    expm1_in(&mut f, x)
}

fn expm1_in(f: &mut F, x: &Value) -> Value {
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let minus_one = f.c(-1.0);
    // Reduction (x is clamped so k stays within ldexp's range; past the clamps the
    // result is -1 or inf anyway).
    let low_limit = f.t(-40.0, -18.0);
    let high_limit = f.t(710.0, 89.0);
    let above = f.cmp(CmpF::Ogt, x, &high_limit);
    let xc = f.sel(&above, &high_limit, x);
    let below = f.cmp(CmpF::Olt, &xc, &low_limit);
    let xc = f.sel(&below, &low_limit, &xc);
    // Tiny x (selected back below) computed on 0 in f32.
    let xc = f.tame_tiny(&xc, 1e-9).map_or(xc, |(v, _)| v);
    let (k, r_hi, r_lo) = reduce_ln2(f, &xc, None);
    let (s, lo) = expm1_reduced(f, &r_hi, &r_lo);
    let em = f.add(&s, &lo);
    // 2^k expm1(r) + (2^k - 1); k == 0 is em itself (keeps -0.0).
    let scaled = f.ldexp(&em, &k);
    let p = f.ldexp(&one, &k);
    let pm1 = f.sub(&p, &one);
    let r = f.add(&scaled, &pm1);
    let k_zero = f.cmp(CmpF::Oeq, &k, &zero);
    let r = f.sel(&k_zero, &em, &r);
    // Large x: e^x = 2^k (1 + expm1(r)). In f32 past 15, e^x is below 2^25, so the -1
    // still shows (4.6 ULP at 15.03 without it): 2^k (1 + expm1(r) - 2^-k), the sum carried
    // to twice the precision and rounded once (k >= 21 there, so 2^-k is far below an
    // ulp of 1).
    let big = f.t(36.0, 15.0);
    let large = f.cmp(CmpF::Ogt, x, &big);
    let e_r = if f.f64() {
        f.add(&one, &em)
    } else {
        let (h, h_lo) = f.fast_two_sum(&one, &s);
        let minus_k = f.neg(&k);
        let two_to_minus_k = f.ldexp(&one, &minus_k);
        let l = f.add(&h_lo, &lo);
        let l = f.sub(&l, &two_to_minus_k);
        f.add(&h, &l)
    };
    let ex = f.ldexp(&e_r, &k);
    let r = f.sel(&large, &ex, &r);
    let small = f.cmp(CmpF::Olt, x, &low_limit);
    let r = f.sel(&small, &minus_one, &r);
    // Tiny x: x itself, with its sign (r_hi's zero takes k*ln2_lo's sign, which in f32 is
    // negative).
    let a = f.abs(x);
    let tiny_limit = f.t(1e-18, 1e-9);
    let tiny = f.cmp(CmpF::Olt, &a, &tiny_limit);
    let r = f.sel(&tiny, x, &r);
    f.keep_nan(x, &r)
}

/// x (+ x_lo, a rounding error of x, where given) = k ln2 + r for a finite x: (k as a
/// float, r as r_hi + r_lo), k = round(x / ln2), |r| <= ln2/2 (nan x gives k = 0).
/// k * ln2_hi's product is exact in the FMA, and the sum's rounding error is recovered
/// by Fast2Sum.
fn reduce_ln2(f: &mut F, x: &Value, x_lo: Option<&Value>) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let inv_ln2 = f.k(INV_LN2_HI);
    let half = f.c(0.5);
    let k = f.fma(x, &inv_ln2, &half);
    let k = f.b.math(MathUnary::Floor, &k);
    let k_nan = f.cmp(CmpF::Uno, &k, &k);
    let k = f.sel(&k_nan, &zero, &k);
    let minus_k = f.neg(&k);
    let ln2_hi = f.k(LN2_HI);
    let ln2_lo = f.k(LN2_LO);
    let t = f.fma(&minus_k, &ln2_hi, x);
    let klo = match x_lo {
        Some(lo) => f.fma(&minus_k, &ln2_lo, lo),
        None => f.mul(&minus_k, &ln2_lo),
    };
    let r_hi = f.add(&t, &klo);
    let back = f.sub(&r_hi, &t);
    let r_lo = f.sub(&klo, &back);
    (k, r_hi, r_lo)
}

/// e^x in f64 as vector code (IREE lowers f64 `math.exp` on llvm-cpu to a scalar call
/// per element): e^x = 2^k e^r (`reduce_ln2`), e^r = 1 + expm1(r) with the 1 added to
/// twice the precision, so it rounds about once (then once more only where the result
/// is subnormal). x is clamped to [-746, 710], past which the result is 0 or inf.
pub(super) fn exp_own(f: &mut F, x: &Value) -> Value {
    exp_of_sum(f, x, None)
}

/// e^(p + p_lo) in f64, p_lo a rounding error of p (below an ulp of it): pow's
/// exponential, where p = y log|x| carries the product's and the logarithm's low parts.
/// p_lo enters the reduced argument, so a large p (up to 709) loses nothing of it.
pub fn exp_double(b: &mut Block, p: &Value, p_lo: &Value) -> Value {
    let mut f = F::new(b, p);
    assert!(f.f64(), "exp_double is f64 code");
    exp_of_sum(&mut f, p, Some(p_lo))
}

fn exp_of_sum(f: &mut F, x: &Value, x_lo: Option<&Value>) -> Value {
    let low = f.c(-746.0);
    let high = f.c(710.0);
    let above = f.cmp(CmpF::Ogt, x, &high);
    let xc = f.sel(&above, &high, x);
    let below = f.cmp(CmpF::Olt, &xc, &low);
    let xc = f.sel(&below, &low, &xc);
    // Past the clamps (and where it is not finite) the low part means nothing.
    let x_lo = x_lo.map(|lo| {
        let clamped = f.or(&above, &below);
        let a = f.abs(lo);
        let inf = f.c(f64::INFINITY);
        let finite = f.cmp(CmpF::Olt, &a, &inf);
        let keep = f.not(&clamped);
        let keep = f.and(&keep, &finite);
        let zero = f.c(0.0);
        f.sel(&keep, lo, &zero)
    });
    let (k, r_hi, r_lo) = reduce_ln2(f, &xc, x_lo.as_ref());
    let (s, lo) = expm1_reduced(f, &r_hi, &r_lo);
    let one = f.c(1.0);
    // |s| < 1: Fast2Sum.
    let (h, h_lo) = f.fast_two_sum(&one, &s);
    let lo = f.add(&h_lo, &lo);
    let e_r = f.add(&h, &lo);
    let r = f.ldexp(&e_r, &k);
    f.keep_nan(x, &r)
}

/// log(x) in f64 as vector code (IREE's f64 `math.log` is a scalar call per element):
/// x = m 2^e, log x = e ln2 + log m (`log_reduced`), e ln2 carried to twice the
/// precision and added to log m's leading part by Fast2Sum, so the sum rounds about once.
pub(super) fn log_own(f: &mut F, x: &Value) -> Value {
    let (a, lo) = log_parts(f, x);
    let r = f.add(&a, &lo);
    log_specials(f, x, &r)
}

/// f64 log(x), x positive and finite, as a + lo with |lo| about an ulp of a: e ln2 + g - u
/// (`log_reduced`), the leading parts summed by Fast2Sum (|e ln2| >= ln2 > |g| unless
/// e = 0, where it is 0), the rest to about 2^-100 relative.
fn log_parts(f: &mut F, x: &Value) -> (Value, Value) {
    let (m, e) = split_exponent(f, x);
    let (g, u) = log_reduced(f, &m);
    let (p, p_lo) = f.mul_split(&e, LN2_HI, LN2_LO);
    let (a, a_lo) = f.fast_two_sum(&p, &g);
    let lo = f.add(&a_lo, &p_lo);
    let lo = f.sub(&lo, &u);
    (a, lo)
}

/// f64 log(x) for x >= 0 (and +-inf, nan: `log`'s special values in the high part) to
/// about twice the precision, as (hi, lo), lo 0 where hi is not finite: pow's logarithm.
pub fn log_double(b: &mut Block, x: &Value) -> (Value, Value) {
    let mut f = F::new(b, x);
    assert!(f.f64(), "log_double is f64 code");
    let (m, e) = split_exponent(&mut f, x);
    let (lm, lm_lo) = log_reduced_double(&mut f, &m);
    let (p, p_lo) = f.mul_split(&e, LN2_HI, LN2_LO);
    // |e ln2| >= ln2 > |log m| unless e = 0 (then p = 0): Fast2Sum.
    let (a, a_lo) = f.fast_two_sum(&p, &lm);
    let lo = f.add(&a_lo, &p_lo);
    let lo = f.add(&lo, &lm_lo);
    let (hi, lo) = f.fast_two_sum(&a, &lo);
    let hi = log_specials(&mut f, x, &hi);
    let lo = f.finite_lo(&hi, &lo);
    (hi, lo)
}

/// 2/(2k+1), k = 1..11: log(m) = 2 atanh(s) = 2s + s z R(z), R(z) = sum_k 2/(2k+1) z^(k-1),
/// s = (m-1)/(m+1), z = s^2 <= 0.0295 for m in [sqrt(1/2), sqrt(2)]; the first term left
/// out is below 2^-60 of the value.
const ATANH_SERIES: [f64; 11] = [
    2.0 / 3.0,
    2.0 / 5.0,
    2.0 / 7.0,
    2.0 / 9.0,
    2.0 / 11.0,
    2.0 / 13.0,
    2.0 / 15.0,
    2.0 / 17.0,
    2.0 / 19.0,
    2.0 / 21.0,
    2.0 / 23.0,
];

/// log(m) for m in [sqrt(1/2), sqrt(2)] as g - u, g = m - 1 (exact) and u the small rest,
/// in fdlibm's arrangement: with s = g / (2 + g) and h = g^2 / 2, log m = g - (h - s (h +
/// z R(z))): the rounding of the division only touches s (h + ...), a fraction of the value.
fn log_reduced(f: &mut F, m: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let two = f.c(2.0);
    let half = f.c(0.5);
    let g = f.sub(m, &one);
    let d = f.add(&two, &g);
    let s = f.div(&g, &d);
    let z = f.mul(&s, &s);
    let series = f.poly(&z, &ATANH_SERIES, &ATANH_SERIES);
    let r = f.mul(&z, &series);
    let gg = f.mul(&g, &g);
    let h = f.mul(&gg, &half);
    let hr = f.add(&h, &r);
    let shr = f.mul(&s, &hr);
    let u = f.sub(&h, &shr);
    (g, u)
}

/// log(m) for m in [sqrt(1/2), sqrt(2)] to about 2^-70 relative, as (hi, lo): 2 atanh(s)
/// = 2s + 2s^3/3 + s^3 z R2(z) with s = (m-1)/(m+1) carried to twice the precision (the
/// division's remainder by FMA), the first tail term 2s^3/3 (up to 0.0034) to twice the
/// precision too, and the rest (below 6e-5) in working precision. What pow needs: y log x's
/// error is |y| times log's absolute error, and |y| log|x| reaches 745 while the result
/// stays finite; with the whole tail in working precision pow was 5.75 ULP off.
fn log_reduced_double(f: &mut F, m: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let two = f.c(2.0);
    let g = f.sub(m, &one);
    let (d, d_lo) = f.two_sum(&two, &g);
    let (s, s_lo) = f.div_double(&g, None, &d, &d_lo);
    // s^2 and s^3 to twice the precision (s_lo's share to first order).
    let two_s = f.add(&s, &s);
    let (z, z_lo) = f.two_prod(&s, &s);
    let z_lo = f.fma(&two_s, &s_lo, &z_lo);
    let (c, c_lo) = f.two_prod(&z, &s);
    let c_lo = f.fma(&z_lo, &s, &c_lo);
    let c_lo = f.fma(&z, &s_lo, &c_lo);
    // 2s^3/3 with 2/3 split in two.
    let (t, t_lo) = f.mul_split(&c, TWO_THIRDS, TWO_THIRDS_LO);
    let third_hi = f.k(TWO_THIRDS);
    let t_lo = f.fma(&c_lo, &third_hi, &t_lo);
    let series = f.poly(&z, &ATANH_SERIES[1..], &ATANH_SERIES[1..]);
    let cz = f.mul(&c, &z);
    let rest = f.mul(&cz, &series);
    // |2s| >= |t|: Fast2Sum; then everything small.
    let (hi, e) = f.fast_two_sum(&two_s, &t);
    let lo = f.add(&s_lo, &s_lo);
    let lo = f.add(&lo, &t_lo);
    let lo = f.add(&lo, &rest);
    let lo = f.add(&e, &lo);
    (hi, lo)
}

/// 2/3 as the double nearest it and what that leaves out.
const TWO_THIRDS: PerType = (2.0 / 3.0, 2.0 / 3.0);
const TWO_THIRDS_LO: PerType = (3.700743415417188e-17, 0.0);

/// expm1(r + r_lo) for |r| <= ln2/2 and r_lo below an ulp of r: Taylor's series
/// r + r^2/2 + r^3 (1/3! + r/4! + ...), with r + r^2/2 (most of the value) carried to
/// twice the precision, so the result rounds about once; r_lo enters to first order,
/// times e^r.
/// Returned as (s, lo): s = r + r^2/2 rounded, lo the rest.
fn expm1_reduced(f: &mut F, r: &Value, r_lo: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let half = f.c(0.5);
    let half_r = f.mul(r, &half);
    let (p, p_lo) = f.two_prod(r, &half_r);
    // |r| >= r^2/2 for |r| <= 2: Fast2Sum applies.
    let (s, s_lo) = f.fast_two_sum(r, &p);
    let q = f.poly(r, &INV_FACTORIALS_64, &INV_FACTORIALS_32);
    let r2 = f.mul(r, r);
    let r3 = f.mul(&r2, r);
    let tail = f.mul(&r3, &q);
    let e_r = f.add(&one, &s);
    let lo = f.fma(r_lo, &e_r, &tail);
    let lo = f.add(&lo, &p_lo);
    let lo = f.add(&lo, &s_lo);
    (s, lo)
}

/// e^x: ours (`exp_own` in f64, exp_log_f32.rs in f32).
pub fn exp(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    f.exp(x)
}

/// log(x): ours (`log_own` in f64, exp_log_f32.rs in f32).
pub fn log(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    f.log(x)
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
    // f32 below 2^-25: log1p(x) = x, computed on 0 (subnormal x was ~100x slower).
    match f.tame_tiny(x, 2f64.powi(-25)) {
        Some((safe, tiny)) => {
            let r = log1p_or_log(f, &safe, None);
            f.sel(&tiny, x, &r)
        }
        None => log1p_or_log(f, x, None),
    }
}

/// log1p(x), or log(y) in the lanes where `direct` holds (`Some((y, direct))`): one
/// logarithm for the functions that choose between the two per range (asinh, acosh).
/// Only in f64: the f32 variant (what Vulkan and Metal run) takes log(y) apart, because
/// with the select in front of log1p's logarithm lavapipe's compiler broke the TwoSum
/// correction (asinh(9.2e-6) came out 0.6% off: as if `1 + x - 1` were folded to `x`).
fn log1p_or_log(f: &mut F, x: &Value, log_of: Option<(&Value, &Value)>) -> Value {
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
    let u_arg = match log_of {
        Some((y, direct)) if f.f64() => f.sel(direct, y, &u),
        _ => u.clone(),
    };
    let log_u = log_near_one(f, &u_arg);
    let correction = f.div(&c, &u);
    let r = f.add(&log_u, &correction);
    let u_is_one = f.cmp(CmpF::Oeq, &u, &one);
    let r = f.sel(&u_is_one, x, &r);
    let x_inf = f.cmp(CmpF::Oeq, x, &inf);
    let r = f.sel(&x_inf, &inf, &r);
    let x_minus_one = f.cmp(CmpF::Oeq, x, &minus_one);
    let r = f.sel(&x_minus_one, &minus_inf, &r);
    // f32 near 0: without the TwoSum (see `log1p_central`).
    let r = if f.f64() {
        r
    } else {
        let central = exp_log_f32::log1p_central(f, x);
        let inside = f.inside(x, std::f64::consts::FRAC_1_SQRT_2 - 1.0, std::f64::consts::SQRT_2 - 1.0);
        f.sel(&inside, &central, &r)
    };
    match log_of {
        Some((_, direct)) if f.f64() => f.sel(direct, &log_u, &r),
        Some((y, direct)) => {
            let log_y = f.log(y);
            f.sel(direct, &log_y, &r)
        }
        None => r,
    }
}

/// x = m * 2^e with m in [sqrt(1/2), sqrt(2)), for a positive finite x (subnormals too):
/// (m, e as a float). Other x give garbage, to be replaced by the caller.
pub(super) fn split_exponent(f: &mut F, x: &Value) -> (Value, Value) {
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
pub(super) fn log_specials(f: &mut F, x: &Value, r: &Value) -> Value {
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

/// sinh, as fdlibm, from one expm1: with t = expm1(|x|), sinh = (2t - t^2/(t+1)) / 2
/// below 1 and (t + t/(t+1)) / 2 above (e^-|x| = 1/(t+1)); past 22 (12 in f32) e^-|x| no
/// longer shows and sinh = e^|x| / 2, as h * (h / 2) with h = e^(|x|/2) = 1 + expm1(|x|/2)
/// so it overflows only where sinh does. The sign is x's (-0.0 kept).
pub fn sinh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    // f32 below 2^-13: sinh(x) = x (x^3/6 is below half an ulp), computed on 0
    // (subnormal x made every op on its lane ~100x slower).
    let tame = f.tame_tiny(&a, 2f64.powi(-13));
    let a = tame.as_ref().map_or(a, |(v, _)| v.clone());
    let one = f.c(1.0);
    let half = f.c(0.5);
    let two = f.c(2.0);
    let limit = f.t(22.0, 12.0);
    let beyond = f.cmp(CmpF::Oge, &a, &limit);
    let a_half = f.mul(&a, &half);
    let arg = f.sel(&beyond, &a_half, &a);
    let t = expm1_in(&mut f, &arg);
    let t1 = f.add(&t, &one);
    // One division: t^2 / (t+1) below 1, t / (t+1) above.
    let below_one = f.cmp(CmpF::Olt, &a, &one);
    let tt = f.mul(&t, &t);
    let num = f.sel(&below_one, &tt, &t);
    let q = f.div(&num, &t1);
    let two_t = f.mul(&two, &t);
    let small = f.sub(&two_t, &q);
    let mid = f.add(&t, &q);
    let r = f.sel(&below_one, &small, &mid);
    let r = f.mul(&r, &half);
    // h = e^(|x|/2): in f32 straight from `F::exp` (within 1 ULP), as 1 + expm1 it was
    // rounded twice and sinh came out 8 ULP off at 30.
    let h = if f.f64() { t1.clone() } else { f.exp(&a_half) };
    let h_half = f.mul(&h, &half);
    let large = f.mul(&h_half, &h);
    let r = f.sel(&beyond, &large, &r);
    let r = f.keep_nan(x, &r);
    let r = match tame {
        Some((_, tiny)) => f.sel(&tiny, x, &r),
        None => r,
    };
    f.copysign(&r, x)
}

/// cosh, as fdlibm, from one expm1: 1 + t^2 / (2(1+t)) with t = expm1(|x|) below ln2/2
/// (where the sum of exponentials would lose the small part), e/2 + 1/(2e) with
/// e = 1 + t up to 22 (12 in f32), and past that e^|x| / 2 as h * (h / 2), h = e^(|x|/2).
pub fn cosh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    // f32 below 2^-13: cosh rounds to 1, as at 0 (subnormal x was ~100x slower).
    let a = f.tame_tiny(&a, 2f64.powi(-13)).map_or(a, |(v, _)| v);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let limit = f.t(22.0, 12.0);
    let beyond = f.cmp(CmpF::Oge, &a, &limit);
    let a_half = f.mul(&a, &half);
    let arg = f.sel(&beyond, &a_half, &a);
    let t = expm1_in(&mut f, &arg);
    let e = f.add(&one, &t);
    // One division: t^2 / (2e) near 0, 1 / (2e) = (1/2) / e above.
    let small_limit = f.c(0.5 * std::f64::consts::LN_2);
    let is_small = f.cmp(CmpF::Olt, &a, &small_limit);
    let tt = f.mul(&t, &t);
    let num = f.sel(&is_small, &tt, &half);
    let ee = f.add(&e, &e);
    let den = f.sel(&is_small, &ee, &e);
    let q = f.div(&num, &den);
    let small = f.add(&one, &q);
    let e_half = f.mul(&e, &half);
    let mid = f.add(&e_half, &q);
    let r = f.sel(&is_small, &small, &mid);
    // As in sinh: in f32 h = e^(|x|/2) from `F::exp` (9 ULP at 30 as 1 + expm1).
    let large = if f.f64() {
        f.mul(&e_half, &e)
    } else {
        let h = f.exp(&a_half);
        let h_half = f.mul(&h, &half);
        f.mul(&h_half, &h)
    };
    let r = f.sel(&beyond, &large, &r);
    f.keep_nan(x, &r)
}

/// tanh: in float64 as fdlibm, from one expm1: -t/(t+2) with t = expm1(-2|x|) below 1,
/// 1 - 2/(t+2) with t = expm1(2|x|) up to 22, past which tanh rounds to 1. Sign of x.
/// float32: `tanh_f32`.
pub fn tanh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    if !f.f64() {
        return tanh_f32(&mut f, x);
    }
    let a = f.abs(x);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let below_one = f.cmp(CmpF::Olt, &a, &one);
    let two_a = f.add(&a, &a);
    let minus_two_a = f.neg(&two_a);
    let arg = f.sel(&below_one, &minus_two_a, &two_a);
    let t = expm1_in(&mut f, &arg);
    let t2 = f.add(&t, &two);
    let minus_t = f.neg(&t);
    let num = f.sel(&below_one, &minus_t, &two);
    let q = f.div(&num, &t2);
    let mid = f.sub(&one, &q);
    let r = f.sel(&below_one, &q, &mid);
    let limit = f.c(22.0);
    let beyond = f.cmp(CmpF::Oge, &a, &limit);
    let r = f.sel(&beyond, &one, &r);
    let r = f.keep_nan(x, &r);
    f.copysign(&r, x)
}

/// P of `tanh_f32` (scripts/fit_tanh_f32.py: 0.04 ULP of 1 from tanh before rounding).
const TANH_F32_P: [f64; 5] = [-0.33333316445350647, 0.13332585990428925, -0.05385230854153633, 0.021071674302220345, -0.006274233106523752];

/// float32 tanh without expm1 (about twice as fast): x + x^3 P(x^2) below 0.55, and
/// 1 - 2 / (e^(2|x|) + 1) from our float32 exp above, where the quotient is below 1/2 so
/// the difference loses nothing (within 1.5 ULP); 1 past 9.1, where tanh rounds to 1.
/// Below 2^-13 tanh(x) = x, computed on 0 (subnormal products are slow). Sign of x.
fn tanh_f32(f: &mut F, x: &Value) -> Value {
    let a = f.abs(x);
    let (a, tiny) = f.tame_tiny(&a, 2f64.powi(-13)).expect("float32");
    let u = f.mul(&a, &a);
    let p = f.poly(&u, &TANH_F32_P, &TANH_F32_P);
    let au = f.mul(&a, &u);
    let small = f.fma(&au, &p, &a);
    let two_a = f.add(&a, &a);
    let e = f.exp(&two_a);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let e1 = f.add(&e, &one);
    let q = f.div(&two, &e1);
    let large = f.sub(&one, &q);
    let switch = f.c(0.55);
    let below = f.cmp(CmpF::Olt, &a, &switch);
    let r = f.sel(&below, &small, &large);
    let limit = f.c(9.1);
    let beyond = f.cmp(CmpF::Oge, &a, &limit);
    let r = f.sel(&beyond, &one, &r);
    let r = f.keep_nan(x, &r);
    let r = f.sel(&tiny, x, &r);
    f.copysign(&r, x)
}

/// asinh, as fdlibm: log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) up to 2,
/// log(2|x| + 1 / (|x| + sqrt(x^2 + 1))) up to 2^28 (2^12 in f32), log(|x|) + ln2 past
/// (where asinh equals log(2|x|) to the last bit, and 2|x| might overflow). The branches
/// share one sqrt, one division and one logarithm. Sign of x.
pub fn asinh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    // f32 below 2^-13: asinh(x) = x (x^3/6 is below half an ulp), computed on 0.
    let tame = f.tame_tiny(&a, 2f64.powi(-13));
    let a = tame.as_ref().map_or(a, |(v, _)| v.clone());
    let one = f.c(1.0);
    let two = f.c(2.0);
    let zero = f.c(0.0);
    let above_two = f.cmp(CmpF::Ogt, &a, &two);
    let limit = f.t(268435456.0, 4096.0);
    let beyond = f.cmp(CmpF::Ogt, &a, &limit);
    let t = f.mul(&a, &a);
    let s = f.add(&one, &t);
    let s = f.sqrt(&s);
    // t / (1 + s) up to 2, 1 / (s + |x|) above.
    let d_small = f.add(&one, &s);
    let d_mid = f.add(&s, &a);
    let num = f.sel(&above_two, &one, &t);
    let den = f.sel(&above_two, &d_mid, &d_small);
    let q = f.div(&num, &den);
    let small_arg = f.add(&a, &q);
    let two_a = f.mul(&two, &a);
    let mid_arg = f.add(&two_a, &q);
    let direct_arg = f.sel(&beyond, &a, &mid_arg);
    let r = log1p_or_log(&mut f, &small_arg, Some((&direct_arg, &above_two)));
    let ln2 = f.c(std::f64::consts::LN_2);
    let shift = f.sel(&beyond, &ln2, &zero);
    let r = f.add(&r, &shift);
    let r = match tame {
        Some((_, tiny)) => f.sel(&tiny, x, &r),
        None => r,
    };
    f.copysign(&r, x)
}

/// acosh, as fdlibm: log1p(t + sqrt(2t + t^2)) with t = x - 1 (exact) up to 2,
/// log(2x - 1 / (x + sqrt(x^2 - 1))) up to 2^28 (2^12 in f32), log(x) + ln2 past; nan below 1
/// (through sqrt of a negative number). The branches share one sqrt and one logarithm.
pub fn acosh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let zero = f.c(0.0);
    let above_two = f.cmp(CmpF::Ogt, x, &two);
    let limit = f.t(268435456.0, 4096.0);
    let beyond = f.cmp(CmpF::Ogt, x, &limit);
    let t = f.sub(x, &one);
    let two_t = f.add(&t, &t);
    let tt = f.mul(&t, &t);
    let inner = f.add(&two_t, &tt);
    let xx = f.mul(x, x);
    let xx1 = f.sub(&xx, &one);
    let radicand = f.sel(&above_two, &xx1, &inner);
    let root = f.sqrt(&radicand);
    let small_arg = f.add(&t, &root);
    let d = f.add(x, &root);
    let inv = f.div(&one, &d);
    let two_x = f.mul(&two, x);
    let mid_arg = f.sub(&two_x, &inv);
    let direct_arg = f.sel(&beyond, x, &mid_arg);
    let r = log1p_or_log(&mut f, &small_arg, Some((&direct_arg, &above_two)));
    let ln2 = f.c(std::f64::consts::LN_2);
    let shift = f.sel(&beyond, &ln2, &zero);
    let r = f.add(&r, &shift);
    // Below 1 (-inf too): nan, whatever a branch made of it.
    let nan = f.c(f64::NAN);
    let below = f.cmp(CmpF::Olt, x, &one);
    f.sel(&below, &nan, &r)
}

/// atanh, as fdlibm: log1p(2a + 2a * a / (1 - a)) / 2 below 1/2 and
/// log1p(2a / (1 - a)) / 2 above (1 - a exact there), a = |x|, with one division and one
/// log1p; +-inf at +-1, nan past.
pub fn atanh(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    // f32 below 2^-13: atanh(x) = x (x^3/3 is below half an ulp), computed on 0.
    let tame = f.tame_tiny(&a, 2f64.powi(-13));
    let a = tame.as_ref().map_or(a, |(v, _)| v.clone());
    let one = f.c(1.0);
    let half = f.c(0.5);
    let below_half = f.cmp(CmpF::Olt, &a, &half);
    let two_a = f.add(&a, &a);
    let one_minus = f.sub(&one, &a);
    let p = f.mul(&two_a, &a);
    let num = f.sel(&below_half, &p, &two_a);
    let q = f.div(&num, &one_minus);
    let small_arg = f.add(&two_a, &q);
    let arg = f.sel(&below_half, &small_arg, &q);
    let r = log1p_in(&mut f, &arg);
    let r = f.mul(&r, &half);
    // Past 1: nan (log1p of a number below -1 already is; +inf's quotient is not).
    let nan = f.c(f64::NAN);
    let beyond = f.cmp(CmpF::Ogt, &a, &one);
    let r = f.sel(&beyond, &nan, &r);
    let r = match tame {
        Some((_, tiny)) => f.sel(&tiny, x, &r),
        None => r,
    };
    f.copysign(&r, x)
}

/// sigmoid = 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) in (0, 1]: no
/// overflow (C's `1 / (1 + exp(-x))` gives 0 below -709 where sigmoid is subnormal). The
/// numerator is chosen before the one division (a division costs as much as the rest).
pub fn sigmoid(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    let minus_a = f.neg(&a);
    let e = f.exp(&minus_a);
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let d = f.add(&one, &e);
    let non_negative = f.cmp(CmpF::Oge, x, &zero);
    let num = f.sel(&non_negative, &one, &e);
    let r = f.div(&num, &d);
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
