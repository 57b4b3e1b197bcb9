//! The modified Bessel functions of the first kind, I0 and I1.
//!
//! Written for float64, as gamma.rs: float32 is computed with the f64 versions and rounded
//! once where the target has f64 math; on Vulkan and Metal the same code runs in f32 (the
//! thresholds per type). The polynomials are our own least-squares fits
//! (`scripts/fit_bessel.py`). For a = |x|, with A = 7.75:
//!
//! - a <= A: I0(a) = P(t) and I1(a) = (a/2) P(t) in t = a^2/4, the Taylor series' variable
//!   (every coefficient positive). t is carried in two parts (a*a exactly, by TwoProd), and
//!   the low part enters as t_lo P'(t): rounding t alone would cost up to a I1/(2 I0), about
//!   4 times half an ulp near A.
//! - a > A: sqrt(a) exp(-a) I(a) = Q(A/a), smooth in A/a down to 0 (Hankel's expansion is
//!   its asymptotic series). exp(a) overflows before I0 and I1 do (709.78 against 713.99 in
//!   f64), so past 700 (88 in f32) it is taken as exp(a/2) twice.
//!
//! I0 is even, I1 odd; nan stays nan. PyTensor's I0 and I1 have no C code (its C backend
//! runs scipy's i0 and i1), and we differ from scipy where it is not the function: scipy
//! gives nan at +-inf (we give the limits +inf, and -inf for I1), overflows from 709.78
//! (exp(x) alone; we from 713.99, where I0 and I1 do) and has I1(-0.0) = +0.0 (we keep the
//! odd symmetry: -0.0, as sin).

use super::erf::poly;
use super::F;
use crate::mlir::{Arith, Block, CmpF, Value};

// Polynomial coefficients, lowest degree first (scripts/fit_bessel.py prints them).
/// I0_SMALL: degree 14; max relative error of P: 2.58e-17 (exact arithmetic), 4.90e-16 (float64 coefficients and Horner).
const I0_SMALL: [f64; 15] = [
    1.0,
    0.9999999999999988,
    0.25000000000000916,
    0.027777777777752106,
    0.001736111111146933,
    6.944444441551258e-05,
    1.9290123604325594e-06,
    3.936759387623422e-08,
    6.151199081503164e-10,
    7.59386486309209e-12,
    7.596310820488771e-14,
    6.257706663969638e-16,
    4.4607694283535576e-18,
    2.2108801802401806e-20,
    2.0674856015856625e-22,
];
/// I1_SMALL: degree 14; max relative error of P: 4.09e-18 (exact arithmetic), 4.72e-16 (float64 coefficients and Horner).
const I1_SMALL: [f64; 15] = [
    1.0,
    0.49999999999999983,
    0.08333333333333443,
    0.006944444444441699,
    0.0003472222222257268,
    1.1574074071449506e-05,
    2.7557319349447614e-07,
    4.920949458089673e-09,
    6.834661590663075e-11,
    7.593916317254828e-13,
    6.90528222948309e-15,
    5.217498803834934e-17,
    3.420609025418325e-19,
    1.603874957623534e-21,
    1.35317385671829e-23,
];
/// I0_LARGE: degree 22; max relative error of P: 7.24e-17 (exact arithmetic), 2.05e-16 (float64 coefficients and Horner).
const I0_LARGE: [f64; 23] = [
    0.39894228040143265,
    0.006434552909710524,
    0.00046702399994111234,
    6.277213899505112e-05,
    1.2399533012489461e-05,
    3.296161756072661e-06,
    4.1292357559264367e-07,
    5.073416596588565e-06,
    -1.8734888361049166e-05,
    4.813159016665756e-06,
    0.0004788640952356943,
    -0.0035148005672775056,
    0.014978230161425453,
    -0.04460933897661783,
    0.09819377441531303,
    -0.16312411907530533,
    0.2055357202968723,
    -0.1952659021145836,
    0.13756281560257386,
    -0.06965755001921464,
    0.02396860480097648,
    -0.0050188122429915515,
    0.0004828161481022594,
];
/// I1_LARGE: degree 22; max relative error of P: 7.63e-17 (exact arithmetic), 2.10e-16 (float64 coefficients and Horner).
const I1_LARGE: [f64; 23] = [
    0.3989422804014327,
    -0.019303658729111724,
    -0.000778373334271954,
    -8.788095587535102e-05,
    -1.594316844245085e-05,
    -4.014324215357604e-06,
    -6.460175476153565e-07,
    -4.578558128767012e-06,
    1.3478060145843242e-05,
    3.093089183330774e-05,
    -0.0006623128234945035,
    0.004235349928361518,
    -0.01717267027531721,
    0.04982838915793251,
    -0.10791109840125748,
    0.1772595268778041,
    -0.22149074789984788,
    0.20906270481092085,
    -0.14651347969564513,
    0.07386820381757182,
    -0.025323861593669717,
    0.005285705726690192,
    -0.0005070706203013068,
];

/// The switch point A between the two kernels.
const A: f64 = 7.75;

/// P(t) for t = a^2/4 carried exactly as t_hi + t_lo: P(t_hi) + t_lo P'(t_hi).
fn small(f: &mut F, a: &Value, coeffs: &[f64]) -> Value {
    let (p, e) = f.two_prod(a, a);
    let quarter = f.c(0.25);
    let t_hi = f.mul(&p, &quarter);
    let t_lo = f.mul(&e, &quarter);
    let derivative: Vec<f64> = coeffs
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, c)| k as f64 * c)
        .collect();
    let value = poly(f, coeffs, &t_hi);
    let slope = poly(f, &derivative, &t_hi);
    f.fma(&t_lo, &slope, &value)
}

/// exp(a) Q(A/a) / sqrt(a), for a > A (+inf at +inf); `q` is Q's coefficients.
fn large(f: &mut F, a: &Value, q: &[f64]) -> Value {
    let big = f.c(A);
    let w = f.div(&big, a);
    let qw = poly(f, q, &w);
    let root = f.sqrt(a);
    let scaled = f.div(&qw, &root);
    // exp(a) as exp(a/2)^2 where exp(a) alone would overflow.
    let split = f.t(700.0, 88.0);
    let halves = f.cmp(CmpF::Ogt, a, &split);
    let half = f.c(0.5);
    let half_a = f.mul(a, &half);
    let h = f.sel(&halves, &half_a, a);
    let e = f.exp(&h);
    let r = f.mul(&scaled, &e);
    let twice = f.mul(&r, &e);
    let r = f.sel(&halves, &twice, &r);
    let inf = f.c(f64::INFINITY);
    let at_inf = f.cmp(CmpF::Oeq, a, &inf);
    f.sel(&at_inf, &inf, &r)
}

/// I0(|x|) from its two kernels.
pub fn i0(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let a = f.abs(x);
    let s = small(f, &a, &I0_SMALL);
    let l = large(f, &a, &I0_LARGE);
    let big = f.c(A);
    let is_small = f.cmp(CmpF::Ole, &a, &big);
    let r = f.sel(&is_small, &s, &l);
    f.keep_nan(x, &r)
}

/// I1(x) = sign(x) I1(|x|).
pub fn i1(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let a = f.abs(x);
    let p = small(f, &a, &I1_SMALL);
    let half = f.c(0.5);
    let half_a = f.mul(&a, &half);
    let s = f.mul(&half_a, &p);
    // Below 2^-500 (2^-60 in f32) I1 is a/2 (1 + a^2/8) = a/2 to far below an ulp, but a/2
    // of an odd subnormal is a tie that the product rounds to even: the true value is just
    // above it, so of the two neighbours a/2 and a - a/2 (exact) take the larger.
    let other = f.sub(&a, &half_a);
    let tie_up = f.b.arith(Arith::MaximumF, &half_a, &other);
    let tiny = f.t(3.054936363499605e-151, 8.673617379884035e-19);
    let is_tiny = f.cmp(CmpF::Olt, &a, &tiny);
    let s = f.sel(&is_tiny, &tie_up, &s);
    let l = large(f, &a, &I1_LARGE);
    let big = f.c(A);
    let is_small = f.cmp(CmpF::Ole, &a, &big);
    let r = f.sel(&is_small, &s, &l);
    let r = f.copysign(&r, x);
    f.keep_nan(x, &r)
}
