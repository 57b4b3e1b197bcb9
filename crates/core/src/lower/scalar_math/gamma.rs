//! The gamma function family: gamma, gammaln (log|gamma|), psi (digamma) and tri_gamma.
//!
//! Written for float64, as erf.rs: float32 is computed with the f64 versions and rounded
//! once where the target has f64 math; on Vulkan and Metal the same code runs in f32
//! (thresholds and scale factors per type). The polynomials are our own least-squares fits
//! (`scripts/fit_special.py`). The approach:
//!
//! - Polynomials on short intervals around the awkward points, with the roots factored out
//!   so that the result is accurate relative to itself: lgamma(1 + t) = t P(t) and
//!   lgamma(2 + t) = t P(t) for |t| <= 1/2 (lgamma's roots at 1 and 2), psi(x) =
//!   (x - x0) P(x) on [1, 2] with psi's root x0 = 1.4616... split in two doubles, psi on
//!   [2, 3], gamma on [1, 2].
//! - Recurrences to reach them: lgamma(a) = lgamma(a - n) + log((a-1)...(a-n)) below 10,
//!   psi(a) = psi(a - n) + sum 1/(a-j) (every term positive) below 10, trigamma by the
//!   upward sum of 1/(a+k)^2 (every term positive) up to 10, gamma(a) = gamma(a - n)
//!   (a-1)...(a-n) with the product carried in two doubles (so the up to 190 factors add
//!   no rounding) and scaled by 2^-512 when it grows (2^-100 in f32), so that gamma of a negative x whose
//!   |x|! overflows still comes out (subnormal or not).
//! - Past 10, the asymptotic (Stirling) series, each as a fitted polynomial in 1/a^2.
//! - Negative x by reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x),
//!   psi(x) = psi(1 - x) - pi cot(pi x), trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x),
//!   gamma(x) = -pi / (x sin(pi x) gamma(-x)) (-x exact: the rounding of 1 - x would cost
//!   gamma up to |x| psi(1 - x) ulps). sin(pi x) and cos(pi x) come from an exact reduction
//!   to |r| <= 1/4 and fitted polynomials.
//!
//! Near the zeros of lgamma and psi on the negative axis the reflection's difference
//! cancels between terms of size lgamma(1 - x) or psi(1 - x): on -20 < x < -1 lgamma and
//! psi use the upward recurrence to [1, 2) instead (`lgamma_shifted`, `psi_shift_sum`),
//! whose factors and terms are exact and whose product and sum are carried in two
//! doubles: lgamma's error next to its zeros is about 1e-19 absolute, psi's about 1e-17
//! (psi(x + m)'s rounding). Below -20 (and on (-1, 0)) the reflection stays.
//!
//! Special values follow PyTensor's C backend: lgamma is +inf at 0, the negative integers
//! and -inf (C's lgamma); gamma is +-inf at +-0 and nan at the negative integers and -inf
//! (C's tgamma); psi is +inf at 0, the negative integers and -inf (PyTensor's C `_psi`).
//! tri_gamma follows scipy's polygamma(1, x), which the C code does not: +inf at the poles
//! (0, the negative integers, -inf) and the true value for negative x (the C code returns
//! 0 for every x <= 0).

use super::erf::poly;
use super::exp_log::{self, log_double};
use super::{PerType, F};
use crate::mlir::{Arith, Block, CmpF, MathUnary, Value};

// Polynomial coefficients, lowest degree first (scripts/fit_special.py prints them).
/// LGAMMA_NEAR1: degree 30; max relative error of P: 2.35e-19 (exact arithmetic), 2.89e-16 (float64 coefficients and Horner).
pub(super) const LGAMMA_NEAR1: [f64; 31] = [
    -0.5772156649015329,
    0.8224670334241132,
    -0.4006856343865314,
    0.27058080842778104,
    -0.20738555102869508,
    0.1695571769980864,
    -0.14404989676662208,
    0.12550966946368927,
    -0.11133426598789478,
    0.1000994606234073,
    -0.09095401357678125,
    0.08335374088165817,
    -0.07693257915442721,
    0.07143508567827879,
    -0.06666813643510701,
    0.06246895912530113,
    -0.05882392397805829,
    0.055896899781883884,
    -0.05270219532351598,
    0.04738081148178645,
    -0.046654367543134366,
    0.059907708954299005,
    -0.05068885935749074,
    -0.014711403706459956,
    -0.00579219431477567,
    0.18807939833397533,
    -0.14144841395548788,
    -0.2134473172707422,
    0.1591233922116,
    0.246449538951845,
    -0.21347544247829592,
];
/// LGAMMA_NEAR2: degree 18; max relative error of P: 1.42e-18 (exact arithmetic), 2.60e-16 (float64 coefficients and Horner).
const LGAMMA_NEAR2: [f64; 19] = [
    0.42278433509846713,
    0.32246703342411326,
    -0.06735230105319827,
    0.020580808427780404,
    -0.007385551028653873,
    0.0028905103310329244,
    -0.001192753912586913,
    0.0005096695154453676,
    -0.00022315473870210706,
    9.945767310644536e-05,
    -4.492649017533604e-05,
    2.0505594177782874e-05,
    -9.437515259088525e-06,
    4.38468964510872e-06,
    -2.048650638058676e-06,
    9.200865627332866e-07,
    -4.224009847689993e-07,
    2.7870898791632095e-07,
    -1.4119647050723332e-07,
];
/// LGAMMA_NEAR1_LO (scripts/fit_lgamma_lo.py): low parts of LGAMMA_NEAR1's first coefficients; relative error of P 8.73e-17 with the float64 coefficients, 2.34e-19 with these low parts.
const LGAMMA_NEAR1_LO: [f64; 8] = [
    4.897310717436408e-18,
    2.0588683821209995e-17,
    2.367084772985426e-17,
    -2.7542341342390458e-18,
    2.2421579506143976e-18,
    1.2756945968711306e-17,
    -1.1742310514910845e-17,
    -7.617575237195406e-18,
];
/// LGAMMA_NEAR2_LO (scripts/fit_lgamma_lo.py): low parts of LGAMMA_NEAR2's first coefficients; relative error of P 6.46e-17 with the float64 coefficients, 1.42e-18 with these low parts.
const LGAMMA_NEAR2_LO: [f64; 8] = [
    5.205366249325079e-18,
    -2.3049526049022202e-17,
    -4.863441371993931e-18,
    7.741953592637401e-20,
    -1.2607192397260566e-19,
    1.25942859194643e-19,
    6.382090268426016e-20,
    1.715544802534823e-20,
];
/// LGAMMA_TAIL: degree 6; max relative error of P: 3.49e-19 (exact arithmetic), 1.38e-16 (float64 coefficients and Horner).
pub(super) const LGAMMA_TAIL: [f64; 7] = [
    0.08333333333333333,
    -0.0027777777777774917,
    0.0007936507931900875,
    -0.0005952378165582424,
    0.000841670233533309,
    -0.0019054572918370228,
    0.005495146969381825,
];
/// PSI_NEAR_ROOT: degree 21; max relative error of P: 1.66e-17 (exact arithmetic), 2.28e-16 (float64 coefficients and Horner).
const PSI_NEAR_ROOT: [f64; 22] = [
    0.951055876031833,
    -0.42362742128146047,
    0.2405424842407744,
    -0.1484049230539182,
    0.09498872445491668,
    -0.06192213327225021,
    0.040760833813685074,
    -0.02697579678866966,
    0.017907252406390132,
    -0.011908217288035022,
    0.007926945142547413,
    -0.005279974272120003,
    0.0035190018717982732,
    -0.002345190093614966,
    0.001556657328941998,
    -0.0010380410684524238,
    0.0007232393621304359,
    -0.00048091135300706286,
    0.0002273979166718253,
    -0.00015378389146321241,
    0.00025955267170200584,
    -0.00017136569586432938,
];
/// PSI_NEG_ROOT: degree 19; max relative error of P: 2.18e-18 (exact arithmetic), 1.62e-16 (float64 coefficients and Horner).
const PSI_NEG_ROOT: [f64; 20] = [
    8.937031623531025,
    -0.5460246078251478,
    32.23757513641601,
    -0.6677994684545627,
    128.101396110654,
    -2.1511605111728263,
    512.0739782733608,
    -8.38891871571935,
    2048.153902011011,
    -33.461878873744965,
    8192.595252645462,
    -133.80485728977834,
    32764.25384222952,
    -535.297605413315,
    131606.61283480877,
    -2138.3617383755136,
    496503.17020062514,
    -8462.65084640629,
    2887888.7201673817,
    -42394.36319050712,
];
/// PSI_2_3: degree 16; max relative error of P: 1.69e-17 (exact arithmetic), 4.35e-16 (float64 coefficients and Horner).
const PSI_2_3: [f64; 17] = [
    0.7031566406452432,
    0.4903577561002345,
    -0.11810202582086111,
    0.03731764146960402,
    -0.01307316664634549,
    0.004821409817925986,
    -0.001830564030259814,
    0.0007073882520884575,
    -0.00027643939296944845,
    0.00010882468944063501,
    -4.305134094381053e-05,
    1.7097808635903947e-05,
    -6.8065755594380585e-06,
    2.6726294061093682e-06,
    -1.0558456484653583e-06,
    5.125880235104667e-07,
    -2.1509723887049367e-07,
];
/// PSI_TAIL: degree 6; max relative error of P: 5.10e-18 (exact arithmetic), 1.39e-16 (float64 coefficients and Horner).
const PSI_TAIL: [f64; 7] = [
    0.08333333333333333,
    -0.008333333333329153,
    0.003968253961521467,
    -0.004166662590118671,
    0.007574576595610564,
    -0.020915493429236442,
    0.06981743982710836,
];
/// TRIGAMMA_TAIL: degree 6; max relative error of P: 3.96e-17 (exact arithmetic), 1.38e-16 (float64 coefficients and Horner).
const TRIGAMMA_TAIL: [f64; 7] = [
    0.16666666666666666,
    -0.033333333333268295,
    0.02380952370471921,
    -0.03333326980817233,
    0.075739142445335,
    -0.25033834142177913,
    0.95389739216582,
];
/// GAMMA_1_2: degree 22; max relative error of P: 4.47e-18 (exact arithmetic), 1.18e-16 (float64 coefficients and Horner).
const GAMMA_1_2: [f64; 23] = [
    0.886226925452758,
    0.032338397448884865,
    0.4148134536883018,
    -0.10729480456472032,
    0.14464535904449663,
    -0.07752305230525706,
    0.058610303826438066,
    -0.038001935295909776,
    0.025837606101348647,
    -0.017222449989051605,
    0.011522523379791094,
    -0.007690100232809411,
    0.005131529699684303,
    -0.0034239504825512045,
    0.0022836525710724343,
    -0.001514292575889538,
    0.0010082117657156959,
    -0.0007099922087504,
    0.0004776194849803789,
    -0.00021195538678564756,
    0.0001340973980355403,
    -0.0002602435056386095,
    0.00017874735653864937,
];
/// SINPI: degree 7; max relative error of P: 2.14e-21 (exact arithmetic), 1.43e-16 (float64 coefficients and Horner).
const SINPI: [f64; 8] = [
    3.141592653589793,
    -5.16771278004997,
    2.550164039877342,
    -0.5992645293203428,
    0.08214588658189266,
    -0.007370429924312106,
    0.00046628316054036616,
    -2.171926763137092e-05,
];
/// COSPI: degree 7; max relative error of P: 4.08e-20 (exact arithmetic), 2.04e-16 (float64 coefficients and Horner).
const COSPI: [f64; 8] = [
    1.0,
    -4.934802200544679,
    4.058712126416749,
    -1.3352627688520298,
    0.23533063019466724,
    -0.025806885719965256,
    0.0019294663401272546,
    -0.00010356955680679986,
];

/// psi's positive root x0 = 1.46163214496836234126... as hi + lo per type (f64, f32)
/// (mpmath, in fit_special.py).
const PSI_ROOT_HI: (f64, f64) = (1.4616321449683622, 1.4616321325302124);
const PSI_ROOT_LO: (f64, f64) = (9.549995429965697e-17, 1.2438149938918909e-08);
/// psi's first negative root x1 = -0.50408300826445540925... as hi + lo per type.
const PSI_NEG_ROOT_HI: (f64, f64) = (-0.5040830082644554, -0.5040830373764038);
const PSI_NEG_ROOT_LO: (f64, f64) = (-8.15428206243813e-18, 2.911194839933548e-08);
/// log(2 pi) / 2 - 1/2, the constant of lgamma's Stirling formula written with (a - 1/2)(log a - 1).
const HALF_LOG_TWO_PI_MINUS_HALF: f64 = 0.41893853320467274;
/// log(2 pi) / 2 as hi + lo (scripts/exp_log_constants.py).
const HALF_LOG_TWO_PI: (f64, f64) = (0.9189385332046728, -3.8782941580672414e-17);
/// Below this |x|, lgamma(x) = -log|x|, gamma(x) = 1/x and psi(x) = -1/x to the last bit.
const TINY: f64 = 8.673617379884035e-19; // 2^-60
/// The scale of gamma's product, per type (f64, f32): 2^512 or 2^100, and its inverse.
const SCALE: (f64, f64) = (1.3407807929942597e154, 1.2676506002282294e30);
const INV_SCALE: (f64, f64) = (7.458340731200207e-155, 7.888609052210118e-31);
/// gammaln of -LGAMMA_SHIFTS < x < -1 by the upward recurrence to [1, 2) (at most one
/// more factor than this), below by the reflection: past -20 the zeros of lgamma lie within 1/20!
/// of the integers, closer than the doubles there, and the reflection's terms no longer
/// cancel much (measured: within 2 ULP from -20 to -30).
const LGAMMA_SHIFTS: f64 = 20.0;
/// How many of the last Horner steps of lgamma(x + m)'s polynomial run in two doubles:
/// the rounding of the earlier ones is scaled by |t|^LGAMMA_DD_STEPS <= 2^-8.
const LGAMMA_DD_STEPS: usize = 8;
/// Where gamma's recurrence stops: gamma(a) overflows from 171.62 (35.04 in f32),
/// gamma(-a) is 0 past 190 (50 in f32). Two scalings at most cover the product up to there.
const GAMMA_LIMIT: (f64, f64) = (190.0, 50.0);

fn floor(f: &mut F, v: &Value) -> Value {
    f.b.math(MathUnary::Floor, v)
}


/// (sin(pi x), cos(pi x)) for finite x: x = n + r with n the nearest integer (x itself
/// past 2^52, where every double is one) and r exact in [-1/2, 1/2]; then |r| <= 1/4 is
/// the kernels' range, and beyond it sin(pi|r|) = cos(pi w), cos(pi|r|) = sin(pi w) with
/// w = 1/2 - |r| (exact); odd n flips both signs.
pub(super) fn sin_cos_pi(f: &mut F, x: &Value) -> (Value, Value) {
    let half = f.c(0.5);
    let quarter = f.c(0.25);
    let shifted = f.add(x, &half);
    let n = floor(f, &shifted);
    let ax = f.abs(x);
    let big = f.t(4503599627370496.0, 8388608.0);
    let integral = f.cmp(CmpF::Oge, &ax, &big);
    let n = f.sel(&integral, x, &n);
    let r = f.sub(x, &n);
    let ar = f.abs(&r);
    let w = f.sub(&half, &ar);
    let near = f.cmp(CmpF::Ole, &ar, &quarter);
    let v = f.sel(&near, &ar, &w);
    let t = f.mul(&v, &v);
    let sp = poly(f, &SINPI, &t);
    let s = f.mul(&v, &sp);
    let c = poly(f, &COSPI, &t);
    let sin_abs = f.sel(&near, &s, &c);
    let cos_r = f.sel(&near, &c, &s);
    let sin_r = f.copysign(&sin_abs, &r);
    let h = f.mul(&n, &half);
    let hf = floor(f, &h);
    let odd = f.cmp(CmpF::Une, &hf, &h);
    let minus_sin = f.neg(&sin_r);
    let minus_cos = f.neg(&cos_r);
    let sin = f.sel(&odd, &minus_sin, &sin_r);
    let cos = f.sel(&odd, &minus_cos, &cos_r);
    (sin, cos)
}

/// Whether x is a pole of the family: 0 (either sign), a negative integer or -inf.
fn non_positive_integer(f: &mut F, x: &Value) -> Value {
    let zero = f.c(0.0);
    let fl = floor(f, x);
    let integral = f.cmp(CmpF::Oeq, &fl, x);
    let non_positive = f.cmp(CmpF::Ole, x, &zero);
    f.and(&integral, &non_positive)
}

fn is_tiny(f: &mut F, x: &Value) -> Value {
    let a = f.abs(x);
    let tiny = f.c(TINY);
    f.cmp(CmpF::Olt, &a, &tiny)
}

fn negative(f: &mut F, x: &Value) -> Value {
    let zero = f.c(0.0);
    f.cmp(CmpF::Olt, x, &zero)
}

/// The reflection of lgamma, psi and trigamma: (x < 0, the argument their kernel for
/// positive arguments takes: 1 - x there, x elsewhere).
fn reflected(f: &mut F, x: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let neg = negative(f, x);
    let reflected = f.sub(&one, x);
    let arg = f.sel(&neg, &reflected, x);
    (neg, arg)
}

/// `r` with +inf at the poles (0, the negative integers, -inf) and nan kept.
fn inf_at_poles(f: &mut F, x: &Value, r: &Value) -> Value {
    let inf = f.c(f64::INFINITY);
    let pole = non_positive_integer(f, x);
    let r = f.sel(&pole, &inf, r);
    f.keep_nan(x, &r)
}

/// Stirling's correction mu(a) = lgamma(a) - ((a - 1/2) log a - a + log(2 pi)/2) for
/// a >= 10: the tail of lgamma below, P(1/a^2)/a (small: at most 1/120 there).
pub(super) fn stirling_correction(f: &mut F, a: &Value) -> Value {
    let one = f.c(1.0);
    let inv = f.div(&one, a);
    let t = f.mul(&inv, &inv);
    let p = poly(f, &LGAMMA_TAIL, &t);
    f.mul(&p, &inv)
}

/// lgamma(a) for a > 0 (inf and nan go through).
pub(super) fn lgamma_positive(f: &mut F, a: &Value) -> Value {
    let half = f.c(0.5);
    let one = f.c(1.0);
    let log_a = f.log(a);
    // Below 3/2: lgamma(1 + t) = t P1(t) with t = a - 1, or t = a below 1/2, where
    // lgamma(a) = lgamma(1 + a) - log(a).
    let below_half = f.cmp(CmpF::Olt, a, &half);
    let a_minus_one = f.sub(a, &one);
    let t1 = f.sel(&below_half, a, &a_minus_one);
    let p1 = poly(f, &LGAMMA_NEAR1, &t1);
    let l1 = f.mul(&t1, &p1);
    let r_low = f.sub(&l1, &log_a);
    let r = f.sel(&below_half, &r_low, &l1);
    // [3/2, 10): lgamma(z) + log((a-1)...(a-n)), z = a - n in [3/2, 5/2), n <= 8 (exact
    // differences), lgamma(2 + t) = t P2(t).
    let three_halves = f.c(1.5);
    let m = f.sub(a, &three_halves);
    let n = floor(f, &m);
    let zero = f.c(0.0);
    let eight = f.c(8.0);
    let n = f.b.arith(Arith::MaximumF, &n, &zero);
    let n = f.b.arith(Arith::MinimumF, &n, &eight);
    let z = f.sub(a, &n);
    let two = f.c(2.0);
    let t2 = f.sub(&z, &two);
    let p2 = poly(f, &LGAMMA_NEAR2, &t2);
    let l2 = f.mul(&t2, &p2);
    let mut prod = one.clone();
    for j in 1..=8 {
        let jv = f.c(j as f64);
        let factor = f.sub(a, &jv);
        let used = f.cmp(CmpF::Oge, &n, &jv);
        let factor = f.sel(&used, &factor, &one);
        prod = f.mul(&prod, &factor);
    }
    let log_prod = f.log(&prod);
    let r_mid = f.add(&l2, &log_prod);
    let in_mid = f.cmp(CmpF::Oge, a, &three_halves);
    let r = f.sel(&in_mid, &r_mid, &r);
    // [10, inf): (a - 1/2)(log a - 1) + log(2 pi)/2 - 1/2 + P(1/a^2)/a.
    let inv = f.div(&one, a);
    let t = f.mul(&inv, &inv);
    let p = poly(f, &LGAMMA_TAIL, &t);
    let tail = f.mul(&p, &inv);
    let c = f.c(HALF_LOG_TWO_PI_MINUS_HALF);
    let small_part = f.add(&c, &tail);
    let lm1 = f.sub(&log_a, &one);
    let am = f.sub(a, &half);
    let r_big = f.fma(&am, &lm1, &small_part);
    let ten = f.c(10.0);
    let big = f.cmp(CmpF::Oge, a, &ten);
    f.sel(&big, &r_big, &r)
}

/// lgamma(1 + a) for a >= 0 without rounding 1 + a where that would cost: a P1(a) below
/// 1/2 and (a - 1) P2(a - 1) below 3/2 (a - 1 exact; lgamma(2) = 0 there), then
/// lgamma_positive(1 + a).
pub(super) fn lgamma1p(f: &mut F, a: &Value) -> Value {
    let half = f.c(0.5);
    let one = f.c(1.0);
    let three_halves = f.c(1.5);
    let p1 = poly(f, &LGAMMA_NEAR1, a);
    let near1 = f.mul(a, &p1);
    let t = f.sub(a, &one);
    let p2 = poly(f, &LGAMMA_NEAR2, &t);
    let near2 = f.mul(&t, &p2);
    let up = f.add(a, &one);
    let far = lgamma_positive(f, &up);
    let below_3_2 = f.cmp(CmpF::Olt, a, &three_halves);
    let r = f.sel(&below_3_2, &near2, &far);
    let below_half = f.cmp(CmpF::Olt, a, &half);
    f.sel(&below_half, &near1, &r)
}

/// For -LGAMMA_SHIFTS < x < -1 (other lanes: don't care): lgamma(x) = lgamma(x + m) -
/// log|x (x+1) ... (x+m-1)| with m = 1 - floor(x), so x + m in [1, 2). Every factor x + j
/// is exact (it lies on x's grid and below |x|) and the product is carried in two doubles
/// (TwoProd); lgamma(x + m) = t P(t) (t = x + m - 1 or x + m - 2, exact) with P's last
/// Horner steps in two doubles (and its first coefficients' low parts), and in f64 the logarithm to twice the precision
/// (log_double). Near lgamma's zeros the two parts cancel (each up to 0.12 in size) and
/// their low parts keep the difference: the reflection cancels between terms of size
/// lgamma(1 - x) (up to 40 near -20), each rounded.
fn lgamma_shifted(f: &mut F, x: &Value) -> Value {
    let one = f.c(1.0);
    let two = f.c(2.0);
    let zero = f.c(0.0);
    let fl = floor(f, x);
    let m = f.sub(&one, &fl);
    let frac = f.sub(x, &fl);
    let (mut hi, mut lo) = (one.clone(), zero.clone());
    for j in 0..=(LGAMMA_SHIFTS as usize) {
        let jv = f.c(j as f64);
        let factor = f.add(x, &jv);
        let used = f.cmp(CmpF::Olt, &jv, &m);
        let factor = f.sel(&used, &factor, &one);
        let (p, e) = f.two_prod(&hi, &factor);
        lo = f.fma(&lo, &factor, &e);
        hi = p;
    }
    let abs_hi = f.abs(&hi);
    let (log_hi, log_lo) = if f.f64() {
        log_double(f.b, &abs_hi)
    } else {
        (f.log(&abs_hi), zero.clone())
    };
    let ratio = f.div(&lo, &hi);
    let log_lo = f.add(&log_lo, &ratio);
    // a = x + m = frac + 1 in [1, 2): t = a - 1 = frac below 3/2 (P1), t = a - 2 above (P2).
    let three_halves = f.c(1.5);
    let a = f.add(&frac, &one);
    let low = f.cmp(CmpF::Olt, &a, &three_halves);
    let t_high = f.sub(&a, &two);
    let t = f.sel(&low, &frac, &t_high);
    let coeff = |f: &mut F, k: usize| {
        let c1 = f.c(LGAMMA_NEAR1[k]);
        let c2 = f.c(*LGAMMA_NEAR2.get(k).unwrap_or(&0.0));
        f.sel(&low, &c1, &c2)
    };
    let top = LGAMMA_NEAR1.len() - 1;
    let mut p = coeff(f, top);
    for k in (LGAMMA_DD_STEPS..top).rev() {
        let c = coeff(f, k);
        p = f.fma(&p, &t, &c);
    }
    let mut p_lo = zero;
    for k in (0..LGAMMA_DD_STEPS).rev() {
        let c = coeff(f, k);
        let c1_lo = f.c(LGAMMA_NEAR1_LO[k]);
        let c2_lo = f.c(LGAMMA_NEAR2_LO[k]);
        let c_lo = f.sel(&low, &c1_lo, &c2_lo);
        let (q, q_e) = f.two_prod(&p, &t);
        let q_e = f.fma(&p_lo, &t, &q_e);
        let (s, s_e) = f.two_sum(&q, &c);
        let e = f.add(&s_e, &q_e);
        let e = f.add(&e, &c_lo);
        let (h, l) = f.fast_two_sum(&s, &e);
        p = h;
        p_lo = l;
    }
    let (l_hi, l_e) = f.two_prod(&t, &p);
    let l_lo = f.fma(&t, &p_lo, &l_e);
    // l_hi - log_hi is exact where they cancel (Sterbenz); the low parts come after.
    let d = f.sub(&l_hi, &log_hi);
    let d_lo = f.sub(&l_lo, &log_lo);
    f.add(&d, &d_lo)
}

pub fn gammaln(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let (neg, arg) = reflected(f, x);
    let l = lgamma_positive(f, &arg);
    let (s, _) = sin_cos_pi(f, x);
    let pi = f.c(std::f64::consts::PI);
    let abs_s = f.abs(&s);
    let q = f.div(&pi, &abs_s);
    let log_q = f.log(&q);
    let refl = f.sub(&log_q, &l);
    let r = f.sel(&neg, &refl, &l);
    let shift = f.inside(x, -LGAMMA_SHIFTS, -1.0);
    let up = lgamma_shifted(f, x);
    let r = f.sel(&shift, &up, &r);
    let ax = f.abs(x);
    let log_ax = f.log(&ax);
    let minus_log = f.neg(&log_ax);
    let tiny = is_tiny(f, x);
    let r = f.sel(&tiny, &minus_log, &r);
    // +0.0 at 1 and 2 (t P(t) is -0.0 at t = 0 where P < 0), as C's lgamma.
    let zero = f.c(0.0);
    let r = f.add(&r, &zero);
    inf_at_poles(f, x, &r)
}

/// a - (hi + lo) for a root of psi split in two (per type), a near it: a - hi is exact.
fn minus_root(f: &mut F, a: &Value, hi: PerType, lo: PerType) -> Value {
    let hi = f.k(hi);
    let lo = f.k(lo);
    let d = f.sub(a, &hi);
    // GPU compilers may fold two constants in a row (Mesa's turns (a - hi) - lo into
    // a - (hi + lo), which is a - hi in f32, an absolute error of 1e-8 near the root): lo
    // goes through a select on a run-time value there.
    let lo = if f.f64() {
        lo
    } else {
        let zero = f.c(0.0);
        let a_nan = f.cmp(CmpF::Uno, a, a);
        f.sel(&a_nan, &zero, &lo)
    };
    f.sub(&d, &lo)
}

/// (psi(a) for a > 0, psi(a + 1) for a < 1): below 2 from the fit around the root, whose
/// variables at a + 1 are taken from a exactly.
pub(super) fn psi_positive(f: &mut F, a: &Value) -> Value {
    let one = f.c(1.0);
    let below_one = f.cmp(CmpF::Olt, a, &one);
    let half = f.c(0.5);
    let three_halves = f.c(1.5);
    let u_low = f.sub(a, &half);
    let u_high = f.sub(a, &three_halves);
    let u = f.sel(&below_one, &u_low, &u_high);
    let d_low = minus_root(f, a, (PSI_ROOT_HI.0 - 1.0, PSI_ROOT_HI.1 - 1.0), PSI_ROOT_LO);
    let d_high = minus_root(f, a, PSI_ROOT_HI, PSI_ROOT_LO);
    let d = f.sel(&below_one, &d_low, &d_high);
    let p = poly(f, &PSI_NEAR_ROOT, &u);
    let pr = f.mul(&d, &p);
    let inv_a = f.div(&one, a);
    let r_low = f.sub(&pr, &inv_a);
    let r = f.sel(&below_one, &r_low, &pr);
    // [2, 10): psi(z) + sum_{j=1..n} 1/(a - j), z = a - n in [2, 3).
    let two = f.c(2.0);
    let fl = floor(f, a);
    let n = f.sub(&fl, &two);
    let zero = f.c(0.0);
    let seven = f.c(7.0);
    let n = f.b.arith(Arith::MaximumF, &n, &zero);
    let n = f.b.arith(Arith::MinimumF, &n, &seven);
    let z = f.sub(a, &n);
    let five_halves = f.c(2.5);
    let v = f.sub(&z, &five_halves);
    let p23 = poly(f, &PSI_2_3, &v);
    let mut sum = zero.clone();
    for j in (1..=7).rev() {
        let jv = f.c(j as f64);
        let d = f.sub(a, &jv);
        let term = f.div(&one, &d);
        let used = f.cmp(CmpF::Oge, &n, &jv);
        let term = f.sel(&used, &term, &zero);
        sum = f.add(&sum, &term);
    }
    let r_mid = f.add(&p23, &sum);
    let in_mid = f.cmp(CmpF::Oge, a, &two);
    let r = f.sel(&in_mid, &r_mid, &r);
    // [10, inf): log a - 1/(2a) - P(1/a^2)/a^2.
    let t = f.mul(&inv_a, &inv_a);
    let p = poly(f, &PSI_TAIL, &t);
    let tail = f.mul(&t, &p);
    let half_inv = f.mul(&inv_a, &half);
    let corr = f.add(&half_inv, &tail);
    let log_a = f.log(a);
    let r_big = f.sub(&log_a, &corr);
    let ten = f.c(10.0);
    let big = f.cmp(CmpF::Oge, a, &ten);
    f.sel(&big, &r_big, &r)
}

/// For -LGAMMA_SHIFTS < x < -1 (other lanes: don't care): (x + m in [1, 2) with m = 1 -
/// floor(x), and sum_{j<m} 1/(x+j) as hi + lo), for psi(x) = psi(x + m) - sum. Every
/// x + j is exact (as in `lgamma_shifted`), each reciprocal gets its FMA remainder and the
/// sum its TwoSum errors, so the sum is good to about twice the precision and psi(x + m)'s
/// rounding (below 1e-16 absolute) is the error left: the reflection's terms psi(1 - x)
/// and pi cot(pi x) are of size log|x| and more, each rounded.
fn psi_shift_sum(f: &mut F, x: &Value) -> (Value, Value, Value) {
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let fl = floor(f, x);
    let m = f.sub(&one, &fl);
    let frac = f.sub(x, &fl);
    let a = f.add(&frac, &one);
    let (mut sum, mut comp) = (zero.clone(), zero.clone());
    for j in (0..=(LGAMMA_SHIFTS as usize)).rev() {
        let jv = f.c(j as f64);
        let z = f.add(x, &jv);
        let q = f.div(&one, &z);
        let minus_q = f.neg(&q);
        let r = f.fma(&minus_q, &z, &one);
        let q_lo = f.mul(&q, &r);
        let used = f.cmp(CmpF::Olt, &jv, &m);
        let q = f.sel(&used, &q, &zero);
        let q_lo = f.sel(&used, &q_lo, &zero);
        let (s, e) = f.two_sum(&sum, &q);
        let e = f.add(&e, &q_lo);
        comp = f.add(&comp, &e);
        sum = s;
    }
    (a, sum, comp)
}

pub fn psi(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let one = f.c(1.0);
    let (neg, arg) = reflected(f, x);
    let shift = f.inside(x, -LGAMMA_SHIFTS, -1.0);
    let (shifted, sum, comp) = psi_shift_sum(f, x);
    let arg = f.sel(&shift, &shifted, &arg);
    let p = psi_positive(f, &arg);
    let (s, c) = sin_cos_pi(f, x);
    let pi = f.c(std::f64::consts::PI);
    let pc = f.mul(&pi, &c);
    let cot = f.div(&pc, &s);
    let refl = f.sub(&p, &cot);
    let r = f.sel(&neg, &refl, &p);
    let up = f.sub(&p, &sum);
    let up = f.sub(&up, &comp);
    let r = f.sel(&shift, &up, &r);
    // Around the root x1 on (-1, 0) the reflection's terms (about 0.04 each) cancel to an
    // absolute error near 1e-16, thousands of ulps of psi there (the C backend keeps its
    // accuracy with a series about the root): the fit (x - x1) P(x + 1/2) instead.
    let half = f.c(0.5);
    let u = f.add(x, &half);
    let au = f.abs(&u);
    let eighth = f.c(0.125);
    let near = f.cmp(CmpF::Ole, &au, &eighth);
    let d = minus_root(f, x, PSI_NEG_ROOT_HI, PSI_NEG_ROOT_LO);
    let p = poly(f, &PSI_NEG_ROOT, &u);
    let around = f.mul(&d, &p);
    let r = f.sel(&near, &around, &r);
    // Tiny negative x: -1/x (sin(pi x) could be subnormal there).
    let inv = f.div(&one, x);
    let minus_inv = f.neg(&inv);
    let tiny = is_tiny(f, x);
    let tiny_negative = f.and(&tiny, &neg);
    let r = f.sel(&tiny_negative, &minus_inv, &r);
    inf_at_poles(f, x, &r)
}

/// trigamma(a) for a > 0: sum of 1/(a+k)^2 while a + k < 10, then the asymptotic
/// 1/z + 1/(2z^2) + P(1/z^2)/z^3.
fn trigamma_positive(f: &mut F, a: &Value) -> Value {
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let ten = f.c(10.0);
    let half = f.c(0.5);
    let mut z = a.clone();
    let mut sum = zero.clone();
    for _ in 0..10 {
        let small = f.cmp(CmpF::Olt, &z, &ten);
        let inv = f.div(&one, &z);
        let term = f.div(&inv, &z);
        let term = f.sel(&small, &term, &zero);
        sum = f.add(&sum, &term);
        let next = f.add(&z, &one);
        z = f.sel(&small, &next, &z);
    }
    let inv = f.div(&one, &z);
    let t = f.mul(&inv, &inv);
    let p = poly(f, &TRIGAMMA_TAIL, &t);
    let inner = f.fma(&inv, &p, &half);
    let tail = f.fma(&t, &inner, &inv);
    f.add(&sum, &tail)
}

pub fn tri_gamma(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let (neg, arg) = reflected(f, x);
    let p = trigamma_positive(f, &arg);
    let (s, _) = sin_cos_pi(f, x);
    let pi = f.c(std::f64::consts::PI);
    let q = f.div(&pi, &s);
    let q2 = f.mul(&q, &q);
    let refl = f.sub(&q2, &p);
    let r = f.sel(&neg, &refl, &p);
    inf_at_poles(f, x, &r)
}

/// (gamma(a), 1/gamma(a)) for f64 a >= 10 by Stirling's formula, lgamma(a) = (a - 1/2) log a
/// - a + log(2 pi)/2 + mu(a), carried to twice the precision (log a as a double-double,
/// the product's rounding error by FMA; a - 1/2 is exact) into the exponential, which
/// takes the low part into its reduced argument: the exponent, up to 745, is off by
/// about 1e-18, so the result by about an ulp. 1/gamma(a) is the exponential of the
/// negated exponent, so gamma(-a) past gamma(a)'s overflow (a > 171.6) is not lost.
pub(super) fn gamma_stirling(f: &mut F, a: &Value) -> (Value, Value) {
    let half = f.c(0.5);
    let (log_a, log_a_lo) = log_double(&mut *f.b, a);
    let t = f.sub(a, &half);
    let (p, p_err) = f.two_prod(&t, &log_a);
    let p_lo = f.fma(&t, &log_a_lo, &p_err);
    // (a - 1/2) log a > a for a >= 10: Fast2Sum; then log(2 pi)/2 < 1 below what is left.
    let minus_a = f.neg(a);
    let (q, q_err) = f.fast_two_sum(&p, &minus_a);
    let c = f.c(HALF_LOG_TWO_PI.0);
    let (hi, c_err) = f.fast_two_sum(&q, &c);
    let mu = stirling_correction(f, a);
    let c_lo = f.c(HALF_LOG_TWO_PI.1);
    let lo = f.add(&p_lo, &q_err);
    let lo = f.add(&lo, &c_err);
    let lo = f.add(&lo, &c_lo);
    let lo = f.add(&lo, &mu);
    let up = exp_log::exp_double(&mut *f.b, &hi, &lo);
    let minus_hi = f.neg(&hi);
    let minus_lo = f.neg(&lo);
    let down = exp_log::exp_double(&mut *f.b, &minus_hi, &minus_lo);
    (up, down)
}

/// Gamma(1 + a) for 0 <= a < 10 as straight-line code (incomplete_gamma.rs's prefactor,
/// where `gamma`'s loop would run for every element): a (a - 1) ... (a - n + 1) Gamma(z),
/// n = floor(a), z = 1 + a - n in [1, 2) by GAMMA_1_2 at u = (a - n) - 1/2 (exact), the
/// product carried in two doubles as in `gamma`.
pub(super) fn gamma1p_below_10(f: &mut F, a: &Value) -> Value {
    gamma1p_below(f, a, 10)
}

/// Gamma(1 + a) for 0 <= a < `limit` as `gamma1p_below_10` (limit - 1 factors, unrolled).
pub(super) fn gamma1p_below(f: &mut F, a: &Value, limit: usize) -> Value {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let n_max = f.c((limit - 1) as f64);
    let n = floor(f, a);
    let n = f.b.arith(Arith::MaximumF, &n, &zero);
    let n = f.b.arith(Arith::MinimumF, &n, &n_max);
    let frac = f.sub(a, &n);
    let u = f.sub(&frac, &half);
    let g = poly(f, &GAMMA_1_2, &u);
    let (mut hi, mut lo) = (one.clone(), zero);
    for j in 0..limit - 1 {
        let jv = f.c(j as f64);
        let used = f.cmp(CmpF::Olt, &jv, &n);
        let factor = f.sub(a, &jv);
        let factor = f.sel(&used, &factor, &one);
        let (p, e) = f.two_prod(&hi, &factor);
        lo = f.fma(&lo, &factor, &e);
        hi = p;
    }
    let glo = f.mul(&g, &lo);
    f.fma(&g, &hi, &glo)
}

pub fn gamma(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let half = f.c(0.5);
    let a = f.abs(x);
    // gamma(|x|) = g * (hi + lo) * 2^(512 scale) / d, with g = gamma(1 + t) (t = |x| - 1/2
    // below 1, where d = |x|) or gamma(z), z = |x| - n in [1, 2).
    let below_one = f.cmp(CmpF::Olt, &a, &one);
    let fl = floor(f, &a);
    let n = f.sub(&fl, &one);
    let limit = f.k(GAMMA_LIMIT);
    let n = f.b.arith(Arith::MaximumF, &n, &zero);
    let n = f.b.arith(Arith::MinimumF, &n, &limit);
    // f64 from |x| = 10 on: Stirling's formula to twice the precision (`gamma_stirling`);
    // those lanes skip the product below, which otherwise runs up to 189 turns (the lanes
    // of a vector wait for the longest).
    let large = if f.f64() {
        let ten = f.c(10.0);
        Some(f.cmp(CmpF::Oge, &a, &ten))
    } else {
        None
    };
    let n_loop = match &large {
        Some(large) => f.sel(large, &zero, &n),
        None => n.clone(),
    };
    let z = f.sub(&a, &n);
    let three_halves = f.c(1.5);
    let u_low = f.sub(&a, &half);
    let u_high = f.sub(&z, &three_halves);
    let u = f.sel(&below_one, &u_low, &u_high);
    let g = poly(f, &GAMMA_1_2, &u);
    let d = f.sel(&below_one, &a, &one);
    // (a-1)(a-2)...(a-n) in two doubles (TwoProd by FMA); in f32 (up to 49 factors) a loop
    // scaled by 2^-100 past 2^100.
    let big = f.k(SCALE);
    let small = f.k(INV_SCALE);
    let ty = f.ty;
    let done = if f.f64() {
        // n <= 8 where the product is used (|x| < 10): unrolled, so the kernel stays
        // vector code (a loop in it would not be), and no scaling.
        let (mut hi, mut lo) = (one.clone(), zero.clone());
        for j in 1..=8 {
            let jv = f.c(j as f64);
            let factor = f.sub(&a, &jv);
            let (p, e) = f.two_prod(&hi, &factor);
            let lo_next = f.fma(&lo, &factor, &e);
            let used = f.cmp(CmpF::Oge, &n_loop, &jv);
            hi = f.sel(&used, &p, &hi);
            lo = f.sel(&used, &lo_next, &lo);
        }
        vec![one.clone(), hi, lo, zero.clone()]
    } else {
        let inits = [one.clone(), one.clone(), zero.clone(), zero.clone()];
        let (n_in, a_in) = (n_loop, a.clone());
        f.b.scf_while(
            &inits,
            |c, v| c.cmpf(CmpF::Ole, &v[0], &n_in),
            |l, v| {
                let mut g = F { b: l, ty };
                let (j, hi, lo, scale) = (&v[0], &v[1], &v[2], &v[3]);
                let one = g.c(1.0);
                let factor = g.sub(&a_in, j);
                let p = g.mul(hi, &factor);
                let minus_p = g.neg(&p);
                let e = g.fma(hi, &factor, &minus_p);
                let lo = g.fma(lo, &factor, &e);
                let big = g.k(SCALE);
                let small = g.k(INV_SCALE);
                let grown = g.cmp(CmpF::Ogt, &p, &big);
                let p_scaled = g.mul(&p, &small);
                let lo_scaled = g.mul(&lo, &small);
                let p = g.sel(&grown, &p_scaled, &p);
                let lo = g.sel(&grown, &lo_scaled, &lo);
                let scale_up = g.add(scale, &one);
                let scale = g.sel(&grown, &scale_up, scale);
                let j = g.add(j, &one);
                vec![j, p, lo, scale]
            },
        )
    };
    let (hi, lo, scale) = (&done[1], &done[2], &done[3]);
    let glo = f.mul(&g, lo);
    let core = f.fma(&g, hi, &glo);
    let scaled_once = f.cmp(CmpF::Oge, scale, &one);
    let two = f.c(2.0);
    let scaled_twice = f.cmp(CmpF::Oge, scale, &two);
    // x > 0: core / d, times 2^512 per scaling (overflowing past 171.62).
    let mut pos = f.div(&core, &d);
    for s in [&scaled_once, &scaled_twice] {
        let up = f.mul(&pos, &big);
        pos = f.sel(s, &up, &pos);
    }
    // x < 0: -pi / (x sin(pi x) gamma(|x|)) = v d / core, times 2^-512 per scaling.
    let (s, _) = sin_cos_pi(f, x);
    let xs = f.mul(x, &s);
    let minus_pi = f.c(-std::f64::consts::PI);
    let v = f.div(&minus_pi, &xs);
    let vd = f.mul(&v, &d);
    let mut neg_r = f.div(&vd, &core);
    for s in [&scaled_once, &scaled_twice] {
        let down = f.mul(&neg_r, &small);
        neg_r = f.sel(s, &down, &neg_r);
    }
    if let Some(large) = &large {
        let (up, down) = gamma_stirling(f, &a);
        pos = f.sel(large, &up, &pos);
        let v_down = f.mul(&v, &down);
        neg_r = f.sel(large, &v_down, &neg_r);
    }
    let beyond = f.cmp(CmpF::Ogt, &a, &limit);
    let inf = f.c(f64::INFINITY);
    let pos = f.sel(&beyond, &inf, &pos);
    let signed_zero = f.copysign(&zero, &v);
    let neg_r = f.sel(&beyond, &signed_zero, &neg_r);
    let neg = negative(f, x);
    let r = f.sel(&neg, &neg_r, &pos);
    let inv = f.div(&one, x);
    let tiny = is_tiny(f, x);
    let r = f.sel(&tiny, &inv, &r);
    let nan = f.c(f64::NAN);
    let pole = non_positive_integer(f, x);
    let not_zero = f.cmp(CmpF::Une, x, &zero);
    let pole = f.and(&pole, &not_zero);
    let r = f.sel(&pole, &nan, &r);
    f.keep_nan(x, &r)
}
