//! Trigonometric functions and their inverses: argument reduction and polynomial
//! approximations for sin, cos, tan, arcsin, arccos, arctan, arctan2.
//!
//! sin, cos and tan share one reduction: x = k pi/2 + r with k the integer nearest
//! x * 2/pi and r carried as a double-word hi + lo. pi/2 is split into four floats
//! P1 + P2 + P3 + P4 (each the float nearest what the previous leave out, so about 4 x 53
//! bits); P1 has the type's full precision and `x - k*P1` by one FMA is exact (both are
//! multiples of 2^-52 for x >= 1, and the difference is below 2; f32, whose FMA may not be
//! fused on Vulkan, uses Dekker's exact product instead), the
//! products k*P2 and k*P3 are carried exactly as split pairs and everything is summed
//! with TwoSum steps, so r keeps its full precision also where x is very close to a
//! multiple of pi/2 (for doubles the remainder is never below about 2^-61).
//! The bound: |x| <= 2^53 (about 9e15) in f64 and 2^20 (about 1e6) in f32, where k is
//! an exact integer and the four parts of pi/2 suffice (the accuracy goal, 4 ULP, is
//! tested up to 1e15 and 1e5, measured within 2 ULP up to 2^53). Past it the results are only
//! finite and within [-1, 1] (r is clamped into [-1, 1]; k's parity still picks the
//! quadrant), not accurate: a Payne-Hanek reduction is not implemented. f32 data on the
//! CPU is computed in f64 (`scalar.rs`), so its bound is f64's.
//!
//! Kernels on |r| <= pi/4: sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2), with
//! lo added to first order and the rounding of 1 - r^2/2 recovered; tan is sin/cos (or
//! -cos/sin in odd quadrants).
//!
//! The inverses all go through `first_quadrant`, atan(num/den) for num, den >= 0: the
//! quotient q <= 1 (1/q otherwise, as pi/2 - atan), carried with its rounding error, then
//! atan(q) = q + q^3 A(q^2) on q <= tan(pi/8) and pi/4 + atan((q-1)/(q+1)) above. arcsin
//! and arccos are atan2(x, sqrt(1 - x^2)) and atan2(sqrt(1 - x^2), x), with 1 - x^2 and its
//! square root also carried to twice the precision (so arcsin near 1 and arccos near 1
//! keep their accuracy).
//!
//! The polynomials S, C, A are our own fits (`scripts/fit_trig.py`, weighted least squares
//! on Chebyshev nodes with mpmath), as are the split constants (`--constants`).

use super::{PerType, F};
use crate::mlir::{Block, CmpF, Value};

// pi/2 = P1 + P2 + P3 + P4 (python scripts/fit_trig.py --constants).
pub(super) const PIO2_1: PerType = (1.5707963267948966, 1.5707963705062866);
pub(super) const PIO2_2: PerType = (6.123233995736766e-17, -4.371138828673793e-08);
const PIO2_3: PerType = (-1.4973849048591698e-33, -1.7151245100058819e-15);
const PIO2_4: PerType = (5.562271104316826e-50, 1.056299898220315e-23);
const TWO_OVER_PI_HI: PerType = (0.6366197723675814, 0.6366197466850281);
const TWO_OVER_PI_LO: PerType = (-3.935735335036497e-17, 2.5682552973194106e-08);
pub(super) const PIO4_HI: PerType = (0.7853981633974483, 0.7853981852531433);
pub(super) const PIO4_LO: PerType = (3.061616997868383e-17, -2.1855694143368964e-08);
const PI_HI: PerType = (3.141592653589793, 3.1415927410125732);
const PI_LO: PerType = (1.2246467991473532e-16, -8.742277657347586e-08);

/// The largest |x| whose reduction is accurate (see the module comment).
const REDUCTION_BOUND: PerType = (9007199254740992.0, 1048576.0);

// sin(r) = r + r^3 S(r^2) on |r| <= pi/4 (scripts/fit_trig.py: relative error 3.9e-18 in
// f64, 4.0e-9 in f32, before rounding).
const SIN_F64: [f64; 6] = [
    -1.6666666666666634614e-1,
    8.3333333333229159225e-3,
    -1.9841269830141322473e-4,
    2.755731379153444033e-6,
    -2.5050771891107279983e-8,
    1.5897514175612065518e-10,
];
const SIN_F32: [f64; 3] = [-1.6666655140118591038e-1, 8.3321865328737716956e-3, -1.9518151367052505907e-4];
// cos(r) = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4 (relative error 5.8e-20, 1.2e-10).
const COS_F64: [f64; 6] = [
    4.1666666666666594322e-2,
    -1.3888888888873288671e-3,
    2.480158728898970466e-5,
    -2.7557314217199394076e-7,
    2.0875705747658926685e-9,
    -1.1358778930303724036e-11,
];
const COS_F32: [f64; 3] = [4.1666645590619166937e-2, -1.3887312834860493282e-3, 2.4432844619134798811e-5];
// atan(u) = u + u^3 A(u^2) on |u| <= tan(pi/8) (relative error 5.0e-20, 7.1e-10).
const ATAN_F64: [f64; 12] = [
    -3.3333333333333328449e-1,
    1.9999999999997940062e-1,
    -1.4285714285416697541e-1,
    1.1111111089731151827e-1,
    -9.0909081942315746156e-2,
    7.6922837710671228884e-2,
    -6.6662403932332019871e-2,
    5.8771448240505955682e-2,
    -5.2191402225085657952e-2,
    4.5063493772935285721e-2,
    -3.3535830767955088564e-2,
    1.5254151311257802856e-2,
];
const ATAN_F32: [f64; 5] = [
    -3.33333163864872072e-1,
    1.9998530763511081986e-1,
    -1.4244486661245166014e-1,
    1.0600013035995759773e-1,
    -6.092337244808297745e-2,
];
const TAN_PI_8: f64 = 0.41421356237309503;

/// x = k pi/2 + (hi + lo): (hi, lo, k mod 4 as a float). Non-finite x give nan.
pub(super) fn reduce(f: &mut F, x: &Value) -> (Value, Value, Value) {
    // k = round(x * 2/pi), corrected by the rounding of the product and of 2/pi itself
    // (both matter near 1e15), so that |r| <= pi/4 up to a rounding.
    let c_hi = f.k(TWO_OVER_PI_HI);
    let c_lo = f.k(TWO_OVER_PI_LO);
    let y = f.mul(x, &c_hi);
    let k0 = f.round(&y);
    let minus_k0 = f.neg(&k0);
    let e = f.fma(x, &c_hi, &minus_k0);
    let e = f.fma(x, &c_lo, &e);
    let de = f.round(&e);
    let k = f.add(&k0, &de);
    let minus_k = f.neg(&k);
    // r1 = x - k P1, exact: by one FMA in f64; in f32 (where FMA may not be fused) as
    // x + a1 (exact by Sterbenz's lemma: k P1 is within a factor 2 of x) and e1 (summed
    // exactly below).
    let p1 = f.k(PIO2_1);
    let zero = f.c(0.0);
    let (r1, e1) = if f.f64() {
        (f.fma(&minus_k, &p1, x), zero.clone())
    } else {
        let (a1, e1) = f.two_prod(&minus_k, &p1);
        (f.add(x, &a1), e1)
    };
    let p2 = f.k(PIO2_2);
    let p3 = f.k(PIO2_3);
    let p4 = f.k(PIO2_4);
    let (a2, e2) = f.two_prod(&minus_k, &p2);
    let (a3, e3) = f.two_prod(&minus_k, &p3);
    let a4 = f.mul(&minus_k, &p4);
    // Largest first; the cancellation near multiples of pi/2 is among r1, e1, a2, e2 and
    // a3, which are summed exactly; the lows are far below r's last bit.
    let (s, t0) = f.two_sum(&r1, &e1);
    let (s, t1) = f.two_sum(&s, &a2);
    let (s, t2) = f.two_sum(&s, &e2);
    let (s, t3) = f.two_sum(&s, &a3);
    let low = f.add(&t0, &t1);
    let low = f.add(&low, &t2);
    let low = f.add(&low, &t3);
    let low = f.add(&low, &e3);
    let low = f.add(&low, &a4);
    let (hi, lo) = f.two_sum(&s, &low);
    // Past the bound r means nothing: clamp it into [-1, 1] (nan stays nan).
    let ax = f.abs(x);
    let bound = f.k(REDUCTION_BOUND);
    let beyond = f.cmp(CmpF::Ogt, &ax, &bound);
    let one = f.c(1.0);
    let minus_one = f.c(-1.0);
    let above = f.cmp(CmpF::Ogt, &hi, &one);
    let clamped = f.sel(&above, &one, &hi);
    let below = f.cmp(CmpF::Olt, &clamped, &minus_one);
    let clamped = f.sel(&below, &minus_one, &clamped);
    let hi = f.sel(&beyond, &clamped, &hi);
    let lo = f.sel(&beyond, &zero, &lo);
    // k mod 4 (exact for any integer-valued float; 0 past 2^55, nan for nan).
    let quarter = f.c(0.25);
    let four = f.c(4.0);
    let kq = f.mul(&k, &quarter);
    let kq = f.floor(&kq);
    let minus_four = f.neg(&four);
    let q = f.fma(&kq, &minus_four, &k);
    (hi, lo, q)
}

/// sin(hi + lo) for |hi| <= pi/4 (and a little beyond), lo below hi's last bit:
/// hi + (hi^3 S(hi^2) + lo cos(hi)), cos(hi) taken as 1 - hi^2/2.
pub(super) fn sin_kernel(f: &mut F, hi: &Value, lo: &Value) -> Value {
    let t = f.mul(hi, hi);
    let s = f.poly(&t, &SIN_F64, &SIN_F32);
    let minus_half = f.c(-0.5);
    let half_t = f.mul(&t, &minus_half);
    let lo_cos = f.fma(&half_t, lo, lo);
    let ht = f.mul(hi, &t);
    let corr = f.fma(&ht, &s, &lo_cos);
    f.add(hi, &corr)
}

/// cos(hi + lo) = w + ((1 - w) - h) + (hi^4 C(hi^2) - hi lo - te/2), with h = t/2, t = hi^2
/// rounded, te its rounding error, and w = 1 - h rounded (whose error (1 - w) - h is
/// exact): the large part 1 - hi^2/2 to twice the precision.
pub(super) fn cos_kernel(f: &mut F, hi: &Value, lo: &Value) -> Value {
    let (t, te) = f.two_prod(hi, hi);
    let c = f.poly(&t, &COS_F64, &COS_F32);
    let half = f.c(0.5);
    let one = f.c(1.0);
    let h = f.mul(&t, &half);
    let w = f.sub(&one, &h);
    let back = f.sub(&one, &w);
    let err = f.sub(&back, &h);
    let half_te = f.mul(&te, &half);
    let minus_hi = f.neg(hi);
    let tail = f.fma(&minus_hi, lo, &err);
    let tail = f.sub(&tail, &half_te);
    let tt = f.mul(&t, &t);
    let tail = f.fma(&tt, &c, &tail);
    f.add(&w, &tail)
}

/// Which of four values, by the quadrant q (0..3 as a float; nan picks `by_q[0]`, which
/// is nan there).
pub(super) fn by_quadrant(f: &mut F, q: &Value, by_q: [&Value; 4]) -> Value {
    let mut r = by_q[0].clone();
    for (i, v) in by_q.iter().enumerate().skip(1) {
        let qi = f.c(i as f64);
        let is = f.cmp(CmpF::Oeq, q, &qi);
        r = f.sel(&is, v, &r);
    }
    r
}

/// x itself where |x| is so small that sin(x) and tan(x) round to it (2^-27, 2^-13 in
/// f32): also keeps -0.0.
fn keep_tiny(f: &mut F, x: &Value, r: &Value) -> Value {
    let a = f.abs(x);
    let tiny = f.t(7.450580596923828e-9, 0.0001220703125);
    let is_tiny = f.cmp(CmpF::Olt, &a, &tiny);
    f.sel(&is_tiny, x, r)
}

/// The quadrant q of x and the sine and cosine of its reduced argument with their
/// negations, (q, [s, c, -s, -c]), from which sin and cos pick by quadrant.
fn reduced_sin_cos(f: &mut F, x: &Value) -> (Value, [Value; 4]) {
    let (hi, lo, q) = reduce(f, x);
    let s = sin_kernel(f, &hi, &lo);
    let c = cos_kernel(f, &hi, &lo);
    let ms = f.neg(&s);
    let mc = f.neg(&c);
    (q, [s, c, ms, mc])
}

pub fn sin(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let (q, [s, c, ms, mc]) = reduced_sin_cos(&mut f, x);
    let r = by_quadrant(&mut f, &q, [&s, &c, &ms, &mc]);
    keep_tiny(&mut f, x, &r)
}

pub fn cos(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let (q, [s, c, ms, mc]) = reduced_sin_cos(&mut f, x);
    // q is nan for nan and infinite x; c (its pick) is then nan too.
    by_quadrant(&mut f, &q, [&c, &ms, &mc, &s])
}

/// tan = sin/cos of the reduced argument in even quadrants, -cos/sin in odd ones: three
/// roundings on two kernels within about 0.6 ULP each.
pub fn tan(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let (hi, lo, q) = reduce(&mut f, x);
    let s = sin_kernel(&mut f, &hi, &lo);
    let c = cos_kernel(&mut f, &hi, &lo);
    let even = f.div(&s, &c);
    let mc = f.neg(&c);
    let odd = f.div(&mc, &s);
    let r = by_quadrant(&mut f, &q, [&even, &odd, &even, &odd]);
    keep_tiny(&mut f, x, &r)
}

/// atan(a + a_lo) for 0 <= a <= 1 (a_lo below a's last bit), as a double-word (h, l):
/// a + a^3 A(a^2) up to tan(pi/8), pi/4 + atan(u) above with u = (a - 1)/(a + 1) and u's
/// rounding error (from TwoSums of a -+ 1 and the division's exact remainder) added to
/// first order. nan stays nan.
fn atan_core(f: &mut F, a: &Value, a_lo: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let minus_one = f.c(-1.0);
    let zero = f.c(0.0);
    let (n, ne) = f.two_sum(a, &minus_one);
    let (d, de) = f.two_sum(a, &one);
    let nl = f.add(&ne, a_lo);
    let dl = f.add(&de, a_lo);
    let u_mid = f.div(&n, &d);
    let minus_u = f.neg(&u_mid);
    let rem = f.fma(&minus_u, &d, &n);
    let rem = f.add(&rem, &nl);
    let rem = f.fma(&minus_u, &dl, &rem);
    let ue_mid = f.div(&rem, &d);
    let threshold = f.c(TAN_PI_8);
    let mid = f.cmp(CmpF::Ogt, a, &threshold);
    let u = f.sel(&mid, &u_mid, a);
    let ue = f.sel(&mid, &ue_mid, a_lo);
    // atan(u + ue) = u + u^3 A(u^2) + ue / (1 + u^2), the last as ue (1 - u^2).
    let t = f.mul(&u, &u);
    let p = f.poly(&t, &ATAN_F64, &ATAN_F32);
    let minus_t = f.neg(&t);
    let ue1 = f.fma(&minus_t, &ue, &ue);
    let ut = f.mul(&u, &t);
    let tail = f.fma(&ut, &p, &ue1);
    let c_hi = f.k(PIO4_HI);
    let c_lo = f.k(PIO4_LO);
    let c_hi = f.sel(&mid, &c_hi, &zero);
    let c_lo = f.sel(&mid, &c_lo, &zero);
    let (h, e) = f.two_sum(&c_hi, &u);
    let l = f.add(&c_lo, &tail);
    let l = f.add(&e, &l);
    (h, l)
}

/// atan((num + num_lo) / (den + den_lo)) in [0, pi/2] for num, den >= 0 (not both zero or
/// both infinite), as a double-word: the smaller over the larger (so the quotient is at
/// most 1), carried with its rounding error; pi/2 minus that where num is the larger.
fn first_quadrant(f: &mut F, num: &Value, num_lo: &Value, den: &Value, den_lo: &Value) -> (Value, Value) {
    let swapped = f.cmp(CmpF::Ogt, num, den);
    let n = f.sel(&swapped, den, num);
    let nl = f.sel(&swapped, den_lo, num_lo);
    let d = f.sel(&swapped, num, den);
    let dl = f.sel(&swapped, num_lo, den_lo);
    let q = f.div(&n, &d);
    let minus_q = f.neg(&q);
    let rem = f.fma(&minus_q, &d, &n);
    let rem = f.add(&rem, &nl);
    let rem = f.fma(&minus_q, &dl, &rem);
    let qe = f.div(&rem, &d);
    // n / inf: the remainder is nan (0 * inf), the quotient exact.
    let inf = f.c(f64::INFINITY);
    let zero = f.c(0.0);
    let d_inf = f.cmp(CmpF::Oeq, &d, &inf);
    let qe = f.sel(&d_inf, &zero, &qe);
    let (h, l) = atan_core(f, &q, &qe);
    let pio2_hi = f.k(PIO2_1);
    let pio2_lo = f.k(PIO2_2);
    let minus_h = f.neg(&h);
    let (sh, se) = f.fast_two_sum(&pio2_hi, &minus_h);
    let sl = f.sub(&pio2_lo, &l);
    let sl = f.add(&se, &sl);
    let hh = f.sel(&swapped, &sh, &h);
    let ll = f.sel(&swapped, &sl, &l);
    (hh, ll)
}

/// pi - (h + l), as a double-word (for h + l in [0, pi/2]).
fn pi_minus(f: &mut F, h: &Value, l: &Value) -> (Value, Value) {
    let pi_hi = f.k(PI_HI);
    let pi_lo = f.k(PI_LO);
    let minus_h = f.neg(h);
    let (s, e) = f.fast_two_sum(&pi_hi, &minus_h);
    let t = f.sub(&pi_lo, l);
    let t = f.add(&e, &t);
    (s, t)
}

pub fn atan(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    // f32 below 2^-13: atan(x) = x (x^3/3 is below half an ulp), computed on 0.
    let tame = f.tame_tiny(&a, 2f64.powi(-13));
    let a = tame.as_ref().map_or(a, |(v, _)| v.clone());
    let zero = f.c(0.0);
    let one = f.c(1.0);
    // f32 past 2^30: atan rounds to pi/2 as at inf; clamped, so that the kernel's powers
    // of 1/|x| stay normal (subnormal products are ~100x slower on x86).
    let a = if f.f64() {
        a
    } else {
        let big = f.c(2f64.powi(30));
        let above = f.cmp(CmpF::Ogt, &a, &big);
        f.sel(&above, &big, &a)
    };
    let (h, l) = first_quadrant(&mut f, &a, &zero, &one, &zero);
    let r = f.add(&h, &l);
    let r = match tame {
        Some((_, tiny)) => f.sel(&tiny, x, &r),
        None => r,
    };
    f.copysign(&r, x)
}

/// atan2(y, x) with C99's special values: the angle of |y| over |x| in the first
/// quadrant, pi minus that where x is negative (-0.0 too), y's sign; +-0 over +-0 gives
/// 0 (then pi for a negative x), +-inf over +-inf pi/4 (then 3pi/4).
pub fn atan2(b: &mut Block, y: &Value, x: &Value) -> Value {
    let mut f = F::new(b, y);
    let ay = f.abs(y);
    let ax = f.abs(x);
    let zero = f.c(0.0);
    let (h, l) = first_quadrant(&mut f, &ay, &zero, &ax, &zero);
    let y_zero = f.cmp(CmpF::Oeq, &ay, &zero);
    let x_zero = f.cmp(CmpF::Oeq, &ax, &zero);
    let both_zero = f.and(&y_zero, &x_zero);
    let h = f.sel(&both_zero, &zero, &h);
    let l = f.sel(&both_zero, &zero, &l);
    let inf = f.c(f64::INFINITY);
    let y_inf = f.cmp(CmpF::Oeq, &ay, &inf);
    let x_inf = f.cmp(CmpF::Oeq, &ax, &inf);
    let both_inf = f.and(&y_inf, &x_inf);
    let pio4_hi = f.k(PIO4_HI);
    let pio4_lo = f.k(PIO4_LO);
    let h = f.sel(&both_inf, &pio4_hi, &h);
    let l = f.sel(&both_inf, &pio4_lo, &l);
    let (ph, pl) = pi_minus(&mut f, &h, &l);
    let one = f.c(1.0);
    let x_sign = f.copysign(&one, x);
    let x_negative = f.cmp(CmpF::Olt, &x_sign, &zero);
    let h = f.sel(&x_negative, &ph, &h);
    let l = f.sel(&x_negative, &pl, &l);
    let r = f.add(&h, &l);
    f.copysign(&r, y)
}

/// sqrt(1 - a^2) for 0 <= a <= 1 as a double-word (w, we): a^2 exactly by an FMA, 1 - a^2
/// to twice the precision, and the square root's rounding error from its exact residue.
/// nan past 1.
fn sqrt_one_minus_square(f: &mut F, a: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let two = f.c(2.0);
    let (p, pe) = f.two_prod(a, a);
    let minus_p = f.neg(&p);
    let (s, se) = f.two_sum(&one, &minus_p);
    let m = f.sub(&se, &pe);
    let (w2, w2e) = f.two_sum(&s, &m);
    let w = f.sqrt(&w2);
    let minus_w = f.neg(&w);
    let res = f.fma(&minus_w, &w, &w2);
    let res = f.add(&res, &w2e);
    let two_w = f.mul(&two, &w);
    let we = f.div(&res, &two_w);
    let w_zero = f.cmp(CmpF::Oeq, &w, &zero);
    let we = f.sel(&w_zero, &zero, &we);
    (w, we)
}

/// nan where |x| > 1 (the formulas' own result there need not be nan: a^2 may round).
fn nan_past_one(f: &mut F, a: &Value, r: &Value) -> Value {
    let one = f.c(1.0);
    let nan = f.c(f64::NAN);
    let beyond = f.cmp(CmpF::Ogt, a, &one);
    f.sel(&beyond, &nan, r)
}

/// asin(x) = atan(|x| / sqrt(1 - x^2)) with x's sign.
pub fn asin(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    // f32 below 2^-13: asin(x) = x (x^3/6 is below half an ulp), computed on 0.
    let tame = f.tame_tiny(&a, 2f64.powi(-13));
    let a = tame.as_ref().map_or(a, |(v, _)| v.clone());
    let zero = f.c(0.0);
    let (w, we) = sqrt_one_minus_square(&mut f, &a);
    let (h, l) = first_quadrant(&mut f, &a, &zero, &w, &we);
    let r = f.add(&h, &l);
    let r = nan_past_one(&mut f, &a, &r);
    let r = match tame {
        Some((_, tiny)) => f.sel(&tiny, x, &r),
        None => r,
    };
    f.copysign(&r, x)
}

/// acos(x) = atan(sqrt(1 - x^2) / |x|), pi minus that for negative x.
pub fn acos(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let a = f.abs(x);
    // f32 below 2^-28: acos(x) rounds to pi/2 (x is below a quarter ulp of it), as at 0.
    let a = f.tame_tiny(&a, 2f64.powi(-28)).map_or(a, |(v, _)| v);
    let zero = f.c(0.0);
    let (w, we) = sqrt_one_minus_square(&mut f, &a);
    let (h, l) = first_quadrant(&mut f, &w, &we, &a, &zero);
    let (ph, pl) = pi_minus(&mut f, &h, &l);
    let negative = f.cmp(CmpF::Olt, x, &zero);
    let h = f.sel(&negative, &ph, &h);
    let l = f.sel(&negative, &pl, &l);
    let r = f.add(&h, &l);
    let r = nan_past_one(&mut f, &a, &r);
    f.keep_nan(x, &r)
}
