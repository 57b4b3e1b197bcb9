//! Our float32 exponential and logarithm (`F::exp`, `F::log` in f32). IREE's f32
//! `math.exp` and `math.log` flush subnormals (exp(-100) is 0, log(1e-42) is log(2^-126))
//! and are about 2 ULP off (../shared/FACTS.md); these keep subnormal inputs and results
//! as C's expf and logf do, and are within 1 ULP, so that float32 functions built on them
//! can be computed in f32 (16 lanes a vector on llvm-cpu) instead of f64 and rounded.
//!
//! Both reductions are exact without a fused multiply-add (the hi part of ln2 has 16
//! bits, so e * hi is exact for any binary exponent e of f32), and the polynomials
//! are fitted by `scripts/fit_exp_log_f32.py` (weighted least squares on Chebyshev nodes,
//! coefficients rounded to f32; the fit's own error is 0.03 ULP for exp, 0.008 for log).

use super::exp_log::{log_specials, split_exponent};
use super::F;
use crate::mlir::{CmpF, Value};

/// ln2 = LN2_HI + LN2_LO, LN2_HI with 16 significant bits.
const LN2_HI: f64 = 0.693145751953125;
const LN2_LO: f64 = 1.428606765330187e-06;
const INV_LN2: f64 = 1.4426950216293335;

/// e^r ~ 1 + r + r^2 P(r) on |r| <= ln2/2 (`scripts/fit_exp_log_f32.py`, degree 4).
const EXP_P: [f64; 5] = [0.49999988079071045, 0.166665181517601, 0.04166954383254051, 0.00836898572742939, 0.0013751155929639935];

/// 2 atanh(s) ~ 2s + s z Q(z), z = s^2 <= 0.0295 (`scripts/fit_exp_log_f32.py`, degree 2).
const LOG_Q: [f64; 3] = [0.6666676998138428, 0.39978134632110596, 0.29857712984085083];

/// e^x for f32 x: x = k ln2 + r (k = round(x / ln2), r carried as r_hi + r_lo), e^r =
/// 1 + q with q = r + (r^2 P(r) + r_lo), then times 2^k exactly (`F::ldexp`, which rounds
/// only where the result is subnormal). x is clamped to [-104, 89]: past 89 (> ln(f32
/// max) = 88.72) the product overflows to inf, below -104 (< ln(2^-150) = -103.97) it
/// rounds to 0, as expf's. nan stays nan.
pub(super) fn exp(f: &mut F, x: &Value) -> Value {
    let low = f.c(-104.0);
    let high = f.c(89.0);
    let above = f.cmp(CmpF::Ogt, x, &high);
    let xc = f.sel(&above, &high, x);
    let below = f.cmp(CmpF::Olt, &xc, &low);
    let xc = f.sel(&below, &low, &xc);
    let inv_ln2 = f.c(INV_LN2);
    let half = f.c(0.5);
    let k = f.fma(&xc, &inv_ln2, &half);
    let k = f.floor(&k);
    // k * LN2_HI is exact (|k| <= 150 has 8 bits) and so is t = x - k LN2_HI (t is within
    // a factor 2 of x where k != 0: Sterbenz). The low part's product rounds, harmlessly
    // (|k LN2_LO| < 2.2e-4); Fast2Sum keeps the sum's rounding error (where |t| < |k lo|,
    // r is tiny and so is what it misses).
    let minus_k = f.neg(&k);
    let hi = f.c(LN2_HI);
    let lo = f.c(LN2_LO);
    let kh = f.mul(&minus_k, &hi);
    let t = f.add(&xc, &kh);
    let kl = f.mul(&minus_k, &lo);
    let (r, r_lo) = f.fast_two_sum(&t, &kl);
    let p = f.poly(&r, &EXP_P, &EXP_P);
    let r2 = f.mul(&r, &r);
    let small = f.fma(&r2, &p, &r_lo);
    let q = f.add(&r, &small);
    let one = f.c(1.0);
    let e_r = f.add(&one, &q);
    let e = f.ldexp(&e_r, &k);
    f.keep_nan(x, &e)
}

/// log(x) for f32 x, in fdlibm's arrangement: x = m 2^e with m in [sqrt(1/2), sqrt(2))
/// (subnormal x scaled first, exactly: `split_exponent`), g = m - 1 (exact), s = g / (2 +
/// g), h = g^2 / 2; log m = g - h + s (h + z Q(z)) with z = s^2, and e ln2 added with its
/// high part exact: e LN2_HI + (g - (h - (s (h + R) + e LN2_LO))). The roundings of the
/// division and of h only touch terms a fraction of the value. Specials as logf: -inf at
/// +-0, nan below 0 and at nan, inf at inf.
pub(super) fn log(f: &mut F, x: &Value) -> Value {
    let (m, e) = split_exponent(f, x);
    let one = f.c(1.0);
    let g = f.sub(&m, &one);
    let lo = f.c(LN2_LO);
    let e_lo = f.mul(&e, &lo);
    let v = log_of_one_plus(f, &g, Some(&e_lo));
    let hi = f.c(LN2_HI);
    let e_hi = f.mul(&e, &hi);
    let l = f.add(&e_hi, &v);
    log_specials(f, x, &l)
}

/// log1p(g) for g in [sqrt(1/2) - 1, sqrt(2) - 1], g exact: `log`'s kernel on g itself
/// instead of on (1 + g) - 1, so no rounding error of 1 + g needs carrying (the TwoSum
/// that carries it elsewhere was folded away by lavapipe's compiler: log1p(9.2e-6) came
/// out 0.6% off on Vulkan). Within 1 ULP, -0.0 kept.
pub(super) fn log1p_central(f: &mut F, g: &Value) -> Value {
    // Below 2^-25 log1p(g) = g (g^2/2 is below half an ulp): computed on 0 (`tame_tiny`).
    let Some((safe, tiny)) = f.tame_tiny(g, 2f64.powi(-25)) else { unreachable!("f32 code") };
    let v = log_of_one_plus(f, &safe, None);
    f.sel(&tiny, g, &v)
}

/// g - (h - (s (h + R) + low)), fdlibm's log(1 + g) (see `log`), plus `low` if given.
fn log_of_one_plus(f: &mut F, g: &Value, low: Option<&Value>) -> Value {
    let two = f.c(2.0);
    let half = f.c(0.5);
    let d = f.add(&two, g);
    let s = f.div(g, &d);
    let z = f.mul(&s, &s);
    let q = f.poly(&z, &LOG_Q, &LOG_Q);
    let r = f.mul(&z, &q);
    let hg = f.mul(g, &half);
    let h = f.mul(&hg, g);
    let hr = f.add(&h, &r);
    let shr = match low {
        Some(low) => f.fma(&s, &hr, low),
        None => f.mul(&s, &hr),
    };
    let u = f.sub(&h, &shr);
    f.sub(g, &u)
}
