//! The Bessel functions of the first kind J0 and J1 and the modified ones I0 and I1.
//!
//! ## I0 and I1
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

//!
//! ## J0 and J1
//!
//! For a = |x|, with X = 5:
//!
//! - a <= X: J0(a) = (a - z1)(a - z2) P(u) and J1(a) = a (a - z1) P(u), u = 2a/X - 1, with
//!   z1, z2 the first positive zeros of J0 (z2 = 5.52 just past X: left in, P would nearly
//!   vanish at X) and z1 that of J1, each split in two floats so that a - z is exact to
//!   twice the precision: relative accuracy at and near the zeros.
//! - a > X: Hankel's modulus and phase, sqrt(pi a/2) (J_n + i Y_n) = M exp(i theta) with
//!   theta = a - (2n+1) pi/4 + alpha, M = MOD(v) and alpha = w PHASE(v) in w = X/a, v = w^2.
//!   J_n = sqrt(2/(pi a)) M cos(theta). The cosine is taken of a reduced angle carried in
//!   two floats: a = k pi/2 + r by trig.rs's reduction, then s = r + (alpha - pi/4) (pi/4
//!   split in two), moved by pi/2 where below -pi/4, and cos(theta) = +-sin(s) or +-cos(s)
//!   by the quadrant. So near the zeros past X the error is the phase's absolute error
//!   (about 2e-18: alpha and w are rounded) over |s|, instead of the 1e-16 a product of
//!   rounded cos and sin would leave: not relative accuracy at the zeros themselves
//!   (measured 2.4e14 ULP at the float64 nearest J0's second zero, C's j0 9.5e16). Beyond trig.rs's reduction bound (2^53, 2^20 in f32) only the magnitude
//!   is right: the angle is not reduced accurately there.
//!
//! J0 is even and J1 odd (J1(-0.0) = -0.0, as C's j1); both are 0 at +-inf, nan stays nan.

use super::erf::poly;
use super::trig::{by_quadrant, cos_kernel, reduce, sin_kernel, PIO2_1, PIO2_2, PIO4_HI, PIO4_LO};
use super::{PerType, F};
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

/// J0_SMALL: degree 18; max relative error of P: 1.99e-18 (exact arithmetic), 2.34e-16 (float64 coefficients and Horner).
const J0_SMALL: [f64; 19] = [
    0.16832989280671087,
    0.04127362662224216,
    -0.07761272102419794,
    -0.015261027144499915,
    0.014045027587325886,
    0.0022976026308265504,
    -0.0013888078795084731,
    -0.00019418225497235366,
    8.70721523000551e-05,
    1.0619907221275244e-05,
    -3.7778607823087724e-06,
    -4.0837052217403603e-07,
    1.202640264132556e-07,
    1.1667705895711096e-08,
    -2.9295634121967684e-09,
    -2.5717381796849194e-10,
    5.6230555839758165e-11,
    4.234822532640372e-12,
    -8.151485889804223e-13,
];
/// J1_SMALL: degree 18; max relative error of P: 2.92e-18 (exact arithmetic), 3.88e-16 (float64 coefficients and Horner).
const J1_SMALL: [f64; 19] = [
    -0.149310467501115,
    0.05465387353898272,
    0.06676678355246733,
    -0.020257778717477217,
    -0.011822618724510507,
    0.00305473429716944,
    0.0011503843925438466,
    -0.0002584573916667305,
    -7.123850721757218e-05,
    1.4146602575286441e-05,
    3.060856787889664e-06,
    -5.443190732576485e-07,
    -9.66727817289669e-08,
    1.5559464549501993e-08,
    2.339528237873686e-09,
    -3.430894130320007e-10,
    -4.4617003305534584e-11,
    5.6518660733375786e-12,
    6.344227011572625e-13,
];
/// J0_MOD: degree 20; max relative error of P: 6.81e-19 (exact arithmetic), 5.67e-17 (float64 coefficients and Horner).
const J0_MOD: [f64; 21] = [
    1.0,
    -0.0024999999999993634,
    0.0001656249999001768,
    -3.4742181204276316e-05,
    1.4972457293811228e-05,
    -1.094067789723632e-05,
    1.2091555573996972e-05,
    -1.8387930279510694e-05,
    3.4423269704965615e-05,
    -6.989031230943084e-05,
    0.0001378125394525432,
    -0.00024444151163447136,
    0.0003716346385726435,
    -0.0004692577729167029,
    0.00048033917522123394,
    -0.00038937699291031775,
    0.00024307447903343813,
    -0.00011237985192722011,
    3.616416811811184e-05,
    -7.220876929732436e-06,
    6.729141172949555e-07,
];
/// J0_PHASE: degree 20; max relative error of P: 5.30e-17 (exact arithmetic), 1.48e-16 (float64 coefficients and Horner).
const J0_PHASE: [f64; 21] = [
    -0.024999999999999998,
    0.0005208333333320938,
    -6.706249980513245e-05,
    2.096723097530013e-05,
    -1.2018845364607943e-05,
    1.0960958844739035e-05,
    -1.448080353265805e-05,
    2.533987855174601e-05,
    -5.249641158717942e-05,
    0.00011392574578271712,
    -0.00023421853727938384,
    0.0004264754117528738,
    -0.0006594970765726202,
    0.0008423396135432389,
    -0.0008692063371361108,
    0.0007087535835715364,
    -0.0004444080832985529,
    0.00020616354209632772,
    -6.652293976061287e-05,
    1.3311420065800161e-05,
    -1.2426946929827679e-06,
];
/// J1_MOD: degree 20; max relative error of P: 7.54e-19 (exact arithmetic), 1.12e-16 (float64 coefficients and Horner).
const J1_MOD: [f64; 21] = [
    1.0,
    0.007499999999999295,
    -0.0003093749998895204,
    5.1539055532224356e-05,
    -1.981404585242709e-05,
    1.358979966570679e-05,
    -1.4440444223055375e-05,
    2.1403350471830138e-05,
    -3.941833273306087e-05,
    7.924823933987954e-05,
    -0.00015537006686445565,
    0.0002746521226108604,
    -0.0004167030632435004,
    0.0005254741597663283,
    -0.0005374165136845079,
    0.00043538785123378894,
    -0.0002716850634308572,
    0.00012557032364599204,
    -4.040033565553306e-05,
    8.065471620297736e-06,
    -7.515385003807614e-07,
];
/// J1_PHASE: degree 20; max relative error of P: 1.96e-17 (exact arithmetic), 1.24e-16 (float64 coefficients and Horner).
const J1_PHASE: [f64; 21] = [
    0.075,
    -0.0013124999999986257,
    0.00011868749978401658,
    -3.0328278750440978e-05,
    1.567902890078188e-05,
    -1.3490195935772843e-05,
    1.7185804097359246e-05,
    -2.9372139484340967e-05,
    5.995515250536879e-05,
    -0.00012896524794792126,
    0.0002637586438528452,
    -0.00047875436272884443,
    0.0007388733699100581,
    -0.0009424846619533505,
    0.0009716625130726703,
    -0.0007917790051099256,
    0.0004962260968810923,
    -0.00023011673122403596,
    7.42303628592335e-05,
    -1.4850255059001748e-05,
    1.3860930566568537e-06,
];

/// The first two positive zeros of J0 and the first of J1, each as (hi, lo) per type
/// (f64 and f32 splits: lo is the rest of the zero after hi).
const J0_Z1: (PerType, PerType) = ((2.404825557695773, 2.404825448989868), (-1.176691651530894e-16, 1.0870590460455913e-07));
const J0_Z2: (PerType, PerType) = ((5.520078110286311, 5.520078182220459), (8.088597146146722e-17, -7.19341483347784e-08));
const J1_Z1: (PerType, PerType) = ((3.8317059702075125, 3.8317060470581055), (-1.5269184090088067e-16, -7.685059315313556e-08));

/// The switch point X of J0 and J1.
const X: f64 = 5.0;

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

/// a - z for a zero z split in (hi, lo): exact near z, to twice the precision.
fn minus_zero(f: &mut F, a: &Value, z: (PerType, PerType)) -> Value {
    let hi = f.k(z.0);
    let lo = f.k(z.1);
    let d = f.sub(a, &hi);
    f.sub(&d, &lo)
}

/// J_n(a) for a > X (n = 0, 1) by modulus and phase (see the module comment); 0 at +inf.
fn j_large(f: &mut F, a: &Value, n: u32, modulus: &[f64], phase: &[f64]) -> Value {
    let big = f.c(X);
    let w = f.div(&big, a);
    let v = f.mul(&w, &w);
    let m = poly(f, modulus, &v);
    let p = poly(f, phase, &v);
    let alpha = f.mul(&w, &p);
    // sqrt(2/(pi a)) M
    let root = f.sqrt(a);
    let c = f.c((2.0 / std::f64::consts::PI).sqrt());
    let cm = f.mul(&c, &m);
    let amplitude = f.div(&cm, &root);
    // s = r + (alpha - pi/4) in two floats.
    let (r_hi, r_lo, q) = reduce(f, a);
    let minus_pio4_hi = f.k((-PIO4_HI.0, -PIO4_HI.1));
    let minus_pio4_lo = f.k((-PIO4_LO.0, -PIO4_LO.1));
    let (d_hi, d_lo) = f.two_sum(&alpha, &minus_pio4_hi);
    let d_lo = f.add(&d_lo, &minus_pio4_lo);
    let (s_hi, e) = f.two_sum(&r_hi, &d_hi);
    let low = f.add(&r_lo, &d_lo);
    let low = f.add(&e, &low);
    let (s_hi, s_lo) = f.fast_two_sum(&s_hi, &low);
    // Below -pi/4: s + pi/2, one quadrant less.
    let pio4 = f.k(PIO4_HI);
    let minus_pio4 = f.neg(&pio4);
    let below = f.cmp(CmpF::Olt, &s_hi, &minus_pio4);
    let p1 = f.k(PIO2_1);
    let p2 = f.k(PIO2_2);
    let (t_hi, t_e) = f.two_sum(&s_hi, &p1);
    let t_low = f.add(&s_lo, &p2);
    let t_low = f.add(&t_e, &t_low);
    let (t_hi, t_lo) = f.fast_two_sum(&t_hi, &t_low);
    let s_hi = f.sel(&below, &t_hi, &s_hi);
    let s_lo = f.sel(&below, &t_lo, &s_lo);
    // The quadrant of theta: k, minus 1 where moved, minus n; mod 4.
    let one = f.c(1.0);
    let q_moved = f.sub(&q, &one);
    let q = f.sel(&below, &q_moved, &q);
    let nn = f.c(n as f64);
    let q = f.sub(&q, &nn);
    let four = f.c(4.0);
    let zero = f.c(0.0);
    let q_up = f.add(&q, &four);
    let negative = f.cmp(CmpF::Olt, &q, &zero);
    let q = f.sel(&negative, &q_up, &q);
    let sin = sin_kernel(f, &s_hi, &s_lo);
    let cos = cos_kernel(f, &s_hi, &s_lo);
    let minus_sin = f.neg(&sin);
    let minus_cos = f.neg(&cos);
    let c = by_quadrant(f, &q, [&cos, &minus_sin, &minus_cos, &sin]);
    let r = f.mul(&amplitude, &c);
    let inf = f.c(f64::INFINITY);
    let at_inf = f.cmp(CmpF::Oeq, a, &inf);
    f.sel(&at_inf, &zero, &r)
}

/// A small-argument kernel of J0 or J1: `coefficients` in u = 2a/X - 1, over [0, X].
fn poly_below_x(f: &mut F, a: &Value, coefficients: &[f64]) -> Value {
    let scale = f.c(2.0 / X);
    let one = f.c(1.0);
    let minus_one = f.neg(&one);
    let u = f.fma(a, &scale, &minus_one);
    poly(f, coefficients, &u)
}

/// `small` for a <= X, else `large`.
fn below_x_or(f: &mut F, a: &Value, small: &Value, large: &Value) -> Value {
    let big = f.c(X);
    let is_small = f.cmp(CmpF::Ole, a, &big);
    f.sel(&is_small, small, large)
}

/// J0(|x|).
pub fn j0(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let a = f.abs(x);
    let p = poly_below_x(f, &a, &J0_SMALL);
    let d1 = minus_zero(f, &a, J0_Z1);
    let d2 = minus_zero(f, &a, J0_Z2);
    let d = f.mul(&d1, &d2);
    let s = f.mul(&d, &p);
    let l = j_large(f, &a, 0, &J0_MOD, &J0_PHASE);
    let r = below_x_or(f, &a, &s, &l);
    f.keep_nan(x, &r)
}

/// J1(x) = sign(x) J1(|x|).
pub fn j1(b: &mut Block, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let a = f.abs(x);
    let p = poly_below_x(f, &a, &J1_SMALL);
    let d1 = minus_zero(f, &a, J1_Z1);
    let dp = f.mul(&d1, &p);
    let s = f.mul(&a, &dp);
    // Below 2^-500 (2^-60 in f32) J1 is a/2 (1 - a^2/8) = a/2 to far below an ulp; a/2 of
    // an odd subnormal is a tie and the true value just below it: the smaller neighbour.
    let half = f.c(0.5);
    let half_a = f.mul(&a, &half);
    let other = f.sub(&a, &half_a);
    let tie_down = f.b.arith(Arith::MinimumF, &half_a, &other);
    let tiny = f.t(3.054936363499605e-151, 8.673617379884035e-19);
    let is_tiny = f.cmp(CmpF::Olt, &a, &tiny);
    let s = f.sel(&is_tiny, &tie_down, &s);
    let l = j_large(f, &a, 1, &J1_MOD, &J1_PHASE);
    let r = below_x_or(f, &a, &s, &l);
    // J1 changes sign: times sign(x) (-1 for -0.0, so J1(-0.0) = -0.0).
    let one = f.c(1.0);
    let sign = f.copysign(&one, x);
    let r = f.mul(&r, &sign);
    f.keep_nan(x, &r)
}
