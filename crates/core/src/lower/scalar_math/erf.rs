//! The error function family: erf, erfc, erfcx (the scaled exp(x^2) erfc(x)), and the
//! inverses erfinv and erfcinv.
//!
//! Written for float64: `scalar.rs` computes float32 (and float16) with the f64 versions
//! and rounds once where the target has f64 math (`own_math`). On Vulkan and Metal the
//! same code runs in f32 (thresholds per type; the f64 coefficients rounded to f32, more
//! terms than f32 needs) on the device's f32 exp and log, so it is as accurate as those
//! (lavapipe's exp: 68 ULP). The polynomials are our own least-squares fits
//! (`scripts/fit_special.py`, mpmath at 50 digits; the script prints each fit's error).
//! The approach:
//!
//! - erf(x) = x P(x^2) for |x| < 1/2.
//! - erfcx(x) for x >= 0 as (1 + 2x) erfcx(x) = P(y), y = (x - 4)/(x + 4) in [-1, 1): the
//!   variable of Shepherd & Laframboise (Math. Comp. 36, 1981), which maps [0, inf) onto an
//!   interval where the function is smooth enough for one polynomial (degree 30); past
//!   2^27, erfcx(x) = 1/(sqrt(pi) x) to the last bit.
//! - erfc(x) = exp(-x^2) erfcx(x) for x >= 1/2, with x^2 = hi + lo exactly (FMA) and
//!   exp(-x^2) = exp(-hi)(1 - lo): no cancellation, and no loss where the result is
//!   subnormal (exp(-hi/2) twice there, so nothing flushes on the way); 1 - erf(x) below
//!   1/2 (no cancellation: erf(x) < 0.53), 2 - erfc(-x) for x <= -1/2.
//! - erf(x) = 1 - erfc(x) (sign of x) for |x| >= 1/2, where erfc(|x|) < 0.48.
//! - erfcx(x) = 2 exp(x^2) - erfcx(-x) for x < 0 (exp(x^2) as above); it overflows from
//!   about -26.63.
//! - erfinv(y) = y P(y^2) for |y| <= 1/2; beyond, and erfcinv(q) for q < 1/2, a starting
//!   value from s = sqrt(-log q) refined by two Halley steps on g(x) = log erfc(x) - log q,
//!   computed as log(erfcx(x)) - x^2 - log q (accurate down to the subnormal q, where
//!   erfc itself would have few bits left). erfcinv(q) = erfinv(1 - q) for q in [1/2, 3/2]
//!   and -erfcinv(2 - q) above (1 - q and 2 - q are exact there).

use super::F;
use crate::mlir::{Block, CmpF, Value};

// Polynomial coefficients, lowest degree first (scripts/fit_special.py prints them).
/// ERF_SMALL: degree 10; max relative error of P: 1.30e-22 (exact arithmetic), 1.29e-16 (float64 coefficients and Horner).
const ERF_SMALL: [f64; 11] = [
    1.1283791670955126,
    -0.37612638903183754,
    0.11283791670955125,
    -0.0268661706451302,
    0.005223977625407091,
    -0.0008548327016695918,
    0.00012055332176900727,
    -1.4925588998627391e-05,
    1.6459113586206544e-06,
    -1.6274574331649785e-07,
    1.3225485865838038e-08,
];
/// ERFCX: degree 30; max relative error of P: 6.37e-22 (exact arithmetic), 2.25e-16 (float64 coefficients and Horner).
const ERFCX: [f64; 31] = [
    1.2329951186255526,
    -0.1396211168405625,
    0.015379652102620043,
    0.06809705425469155,
    -0.10103906603632537,
    0.09373283499839602,
    -0.06633036581163647,
    0.037167515536643915,
    -0.016197734066155104,
    0.005031969985842333,
    -0.000757773217611563,
    -0.00019925673499053074,
    0.00015062129604596116,
    -2.439910614430542e-05,
    -1.1220708495372453e-05,
    5.709646204974201e-06,
    2.9078474542096735e-07,
    -8.257581999886979e-07,
    7.916392205257528e-08,
    1.1121699476006274e-07,
    -2.2220411405071565e-08,
    -1.574448256982935e-08,
    4.256370770985145e-09,
    2.4305432504377344e-09,
    -7.154823584137921e-10,
    -3.849745575682388e-10,
    1.0620829357105862e-10,
    5.182612858792245e-11,
    -1.2420242035183467e-11,
    -4.032200806544452e-12,
    8.29110560208787e-13,
];
/// ERFINV_SMALL: degree 14; max relative error of P: 2.90e-19 (exact arithmetic), 1.14e-16 (float64 coefficients and Horner).
const ERFINV_SMALL: [f64; 15] = [
    0.886226925452758,
    0.23201366653465427,
    0.12755617530567645,
    0.08655212923162,
    0.06495961838344348,
    0.05173125770840445,
    0.04283731624875298,
    0.0364560101926195,
    0.03180459213963,
    0.027023977140885756,
    0.030653033202491794,
    -0.0006299076328540621,
    0.08546793355681409,
    -0.09421984210478505,
    0.11880377054242217,
];
/// ERFCINV_START: degree 16; max relative error of P: 1.95e-07 (exact arithmetic), 1.95e-07 (float64 coefficients and Horner).
const ERFCINV_START: [f64; 17] = [
    1.000117359084144,
    -0.01685333900457061,
    -1.8188145568477503,
    8.160595211344715,
    -42.4886902152354,
    196.46301733893782,
    -715.9539915898536,
    2010.111400591326,
    -4331.505989500444,
    7150.647268550297,
    -9002.051739946372,
    8555.717330281055,
    -6026.007107619366,
    3045.607283091455,
    -1043.5078322489169,
    216.92682209244055,
    -20.646099350106667,
];

/// K in y = (x - K)/(x + K) for ERFCX.
const ERFCX_K: f64 = 4.0;
/// 1/sqrt(pi) and 2/sqrt(pi) (correctly rounded).
const FRAC_1_SQRT_PI: f64 = 0.5641895835477563;
const FRAC_2_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// P(v) by Horner's rule with FMAs; `coeffs` lowest degree first.
pub(super) fn poly(f: &mut F, coeffs: &[f64], v: &Value) -> Value {
    let (last, rest) = coeffs.split_last().expect("a polynomial with no coefficients");
    let mut p = f.c(*last);
    for &c in rest.iter().rev() {
        let k = f.c(c);
        p = f.fma(&p, v, &k);
    }
    p
}

/// erf(x) = x P(x^2), for |x| <= 1/2 (-0.0 kept).
pub(super) fn erf_small(f: &mut F, x: &Value) -> Value {
    let t = f.mul(x, x);
    let p = poly(f, &ERF_SMALL, &t);
    f.mul(x, &p)
}

/// erfcx(a) for a >= 0 (+inf gives 0; nan stays nan).
pub(super) fn erfcx_positive(f: &mut F, a: &Value) -> Value {
    let k = f.c(ERFCX_K);
    let num = f.sub(a, &k);
    let den = f.add(a, &k);
    let y = f.div(&num, &den);
    let p = poly(f, &ERFCX, &y);
    let one = f.c(1.0);
    let two_a = f.add(a, a);
    let d = f.add(&one, &two_a);
    let r = f.div(&p, &d);
    // Past 2^27 (2^13 in f32) the asymptotic series' next term, -1/(2a^2), is below half
    // an ulp: 1/(sqrt(pi) a) (finite where 1 + 2a overflows, and 0 at +inf).
    let c = f.c(FRAC_1_SQRT_PI);
    let far = f.div(&c, a);
    let limit = f.t(134217728.0, 8192.0);
    let beyond = f.cmp(CmpF::Ogt, a, &limit);
    f.sel(&beyond, &far, &r)
}

/// exp(-a^2) * s for a >= 0 and 0 <= s < 1 (s = erfcx(a)): 0 past a = 40 (12 in f32;
/// and at inf).
fn times_exp_minus_square(f: &mut F, a: &Value, s: &Value) -> Value {
    let hi = f.mul(a, a);
    let minus_hi = f.neg(&hi);
    let lo = f.fma(a, a, &minus_hi);
    let e = f.exp(&minus_hi);
    let direct = f.mul(s, &e);
    // Where the result is subnormal, exp(-hi) alone may be too (or flushed): two halves.
    let half = f.c(0.5);
    let minus_half = f.mul(&minus_hi, &half);
    let h = f.exp(&minus_half);
    let sh = f.mul(s, &h);
    let split = f.mul(&sh, &h);
    let cut = f.t(705.0, 85.0);
    let deep = f.cmp(CmpF::Ogt, &hi, &cut);
    let r = f.sel(&deep, &split, &direct);
    // exp(-hi - lo) = exp(-hi) (1 - lo) (|lo| < 2^-43 hi's ulp, its square is nothing).
    let minus_r = f.neg(&r);
    let r = f.fma(&minus_r, &lo, &r);
    let zero = f.c(0.0);
    let forty = f.t(40.0, 12.0);
    let far = f.cmp(CmpF::Ogt, a, &forty);
    f.sel(&far, &zero, &r)
}

/// erfc(|x|) for |x| >= 1/2 (meaningless below): exp(-x^2) erfcx(|x|).
fn erfc_tail(f: &mut F, a: &Value) -> Value {
    let s = erfcx_positive(f, a);
    times_exp_minus_square(f, a, &s)
}

/// (x or, in f32 below 2^-13, 0: the argument the formulas work on; erf_small(x)). In f32
/// tiny x would make subnormal products, which x86 computes about 100 times slower
/// (`F::tame_tiny`): there erf(x) = x + x (2/sqrt(pi) - 1), the x^3 term below half an ulp.
fn erf_tame(f: &mut F, x: &Value) -> (Value, Value) {
    let Some((xs, tiny)) = f.tame_tiny(x, 2f64.powi(-13)) else {
        return (x.clone(), erf_small(f, x));
    };
    let small = erf_small(f, &xs);
    let c = f.c(2.0 / std::f64::consts::PI.sqrt() - 1.0);
    let linear = f.fma(x, &c, x);
    (xs, f.sel(&tiny, &linear, &small))
}

pub fn erf(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let (xs, small) = erf_tame(f, x);
    let a = f.abs(&xs);
    let tail = erfc_tail(f, &a);
    let one = f.c(1.0);
    let big = f.sub(&one, &tail);
    let big = f.copysign(&big, x);
    let half = f.c(0.5);
    let is_small = f.cmp(CmpF::Olt, &a, &half);
    let r = f.sel(&is_small, &small, &big);
    f.keep_nan(x, &r)
}

pub fn erfc(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let (xs, small) = erf_tame(f, x);
    let a = f.abs(&xs);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let small = f.sub(&one, &small);
    let tail = erfc_tail(f, &a);
    let tail_negative = f.sub(&two, &tail);
    let zero = f.c(0.0);
    let negative = f.cmp(CmpF::Olt, x, &zero);
    let big = f.sel(&negative, &tail_negative, &tail);
    let half = f.c(0.5);
    let is_small = f.cmp(CmpF::Olt, &a, &half);
    let r = f.sel(&is_small, &small, &big);
    f.keep_nan(x, &r)
}

pub fn erfcx(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let a = f.abs(x);
    let s = erfcx_positive(f, &a);
    // x < 0: 2 exp(x^2) - erfcx(|x|), exp(x^2) = exp(hi)(1 + lo).
    let hi = f.mul(&a, &a);
    let minus_hi = f.neg(&hi);
    let lo = f.fma(&a, &a, &minus_hi);
    let e = f.exp(&hi);
    let two_e = f.add(&e, &e);
    let two_e = f.fma(&two_e, &lo, &two_e);
    let neg = f.sub(&two_e, &s);
    // From about -26.63 on it overflows (where 2 exp(hi) is inf, the FMA would make
    // inf - inf; -inf's lo is nan).
    let inf = f.c(f64::INFINITY);
    let e2 = f.add(&e, &e);
    let overflow = f.cmp(CmpF::Oeq, &e2, &inf);
    let limit = f.c(-27.0);
    let far = f.cmp(CmpF::Olt, x, &limit);
    let far = f.or(&far, &overflow);
    let neg = f.sel(&far, &inf, &neg);
    let zero = f.c(0.0);
    let negative = f.cmp(CmpF::Olt, x, &zero);
    let r = f.sel(&negative, &neg, &s);
    f.keep_nan(x, &r)
}

/// erfcinv(q) for 0 < q <= 1/2 (x >= 0.47): a start from s = sqrt(-log q) (within 2e-7),
/// then one Halley step (cubic: to about 1e-20) on g(x) = log(erfcx(x)) - x^2 - log(q), whose derivatives are
/// g' = -2/(sqrt(pi) erfcx(x)) and g'' = g' (-2x - g'): x -= g / (g' + g (2x + g') / 2).
/// q = 0 gives +inf (set by the caller).
fn erfcinv_tail(f: &mut F, q: &Value) -> Value {
    let log_q = f.log(q);
    let minus_log_q = f.neg(&log_q);
    let s = f.sqrt(&minus_log_q);
    let one = f.c(1.0);
    let inv_s = f.div(&one, &s);
    let p = poly(f, &ERFCINV_START, &inv_s);
    let x = f.mul(&s, &p);
    let half = f.c(0.5);
    let minus_two_over_sqrt_pi = f.c(-FRAC_2_SQRT_PI);
    let e = erfcx_positive(f, &x);
    let log_e = f.log(&e);
    let hi = f.mul(&x, &x);
    let minus_hi = f.neg(&hi);
    let lo = f.fma(&x, &x, &minus_hi);
    // -log q - x^2 first: the two nearly cancel for small q.
    let d = f.sub(&minus_log_q, &hi);
    let g = f.add(&log_e, &d);
    let g = f.sub(&g, &lo);
    let g1 = f.div(&minus_two_over_sqrt_pi, &e);
    let two_x = f.add(&x, &x);
    let w = f.add(&two_x, &g1);
    let gw = f.mul(&g, &w);
    let den = f.fma(&gw, &half, &g1);
    let step = f.div(&g, &den);
    f.sub(&x, &step)
}

/// erfinv(y) = y P(y^2) for |y| <= 1/2.
fn erfinv_small(f: &mut F, y: &Value) -> Value {
    let t = f.mul(y, y);
    let p = poly(f, &ERFINV_SMALL, &t);
    f.mul(y, &p)
}

pub fn erfinv(b: &mut Block, y: &Value) -> Value {
    let mut f = F::new(b, y);
    let f = &mut f;
    let a = f.abs(y);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let small = erfinv_small(f, y);
    // |y| in (1/2, 1]: erfcinv(1 - |y|), 1 - |y| exact.
    let q = f.sub(&one, &a);
    let q_big = f.cmp(CmpF::Ogt, &q, &half);
    let q_safe = f.sel(&q_big, &half, &q);
    let tail = erfcinv_tail(f, &q_safe);
    let inf = f.c(f64::INFINITY);
    let at_one = f.cmp(CmpF::Oeq, &a, &one);
    let tail = f.sel(&at_one, &inf, &tail);
    let tail = f.copysign(&tail, y);
    let is_small = f.cmp(CmpF::Ole, &a, &half);
    let r = f.sel(&is_small, &small, &tail);
    let nan = f.c(f64::NAN);
    let beyond = f.cmp(CmpF::Ogt, &a, &one);
    let r = f.sel(&beyond, &nan, &r);
    f.keep_nan(y, &r)
}

pub fn erfcinv(b: &mut Block, q: &Value) -> Value {
    let mut f = F::new(b, q);
    let f = &mut f;
    let zero = f.c(0.0);
    let half = f.c(0.5);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let three_halves = f.c(1.5);
    // q in [1/2, 3/2]: erfinv(1 - q) (exact), |1 - q| <= 1/2.
    let y = f.sub(&one, q);
    let small = erfinv_small(f, &y);
    // q < 1/2: the tail at q; q > 3/2: minus the tail at 2 - q (exact).
    let upper = f.cmp(CmpF::Ogt, q, &three_halves);
    let mirrored = f.sub(&two, q);
    let t = f.sel(&upper, &mirrored, q);
    let t_ok = f.cmp(CmpF::Ogt, &t, &zero);
    let t_small = f.cmp(CmpF::Olt, &t, &half);
    let t_ok = f.and(&t_ok, &t_small);
    let t_safe = f.sel(&t_ok, &t, &half);
    let tail = erfcinv_tail(f, &t_safe);
    let inf = f.c(f64::INFINITY);
    let at_end = f.cmp(CmpF::Oeq, &t, &zero);
    let tail = f.sel(&at_end, &inf, &tail);
    let minus_tail = f.neg(&tail);
    let tail = f.sel(&upper, &minus_tail, &tail);
    let below = f.cmp(CmpF::Olt, q, &half);
    let middle = f.or(&below, &upper);
    let r = f.sel(&middle, &tail, &small);
    let nan = f.c(f64::NAN);
    let under = f.cmp(CmpF::Olt, q, &zero);
    let over = f.cmp(CmpF::Ogt, q, &two);
    let r = f.sel(&under, &nan, &r);
    let r = f.sel(&over, &nan, &r);
    f.keep_nan(q, &r)
}
