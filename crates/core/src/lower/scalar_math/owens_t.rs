//! Owen's T function T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx
//! (PyTensor's `Owens_t`, whose impl is scipy.special.owens_t).
//!
//! After the symmetries T(-h, a) = T(h, a) and T(h, -a) = -T(h, a), with h, a >= 0 and
//! s = a h, the (h, a) plane is split as in Patefield & Tandy (J. Stat. Software 5(5),
//! 2000), but into four regions only, each a fixed quadrature (straight-line code: every
//! element computes them all and selects; the two Legendre rules share their 13 node
//! slots, each element picking its rule's nodes):
//!
//! - s < 3, a <= 1: with x = a t, T = e^(-h^2/2) a/(2 pi) int_0^1 e^(-s^2 t^2/2) /
//!   (1 + a^2 t^2) dt by 26-point Gauss-Legendre on [-1, 1] (the integrand is even: 13
//!   nodes). Patefield and Tandy's T5 is such a rule; the integrand's pole at t = +-i/a
//!   (a <= 1) and the Gaussian's width (s < 3) keep the rule's error below 3e-17
//!   (measured with mpmath at the region's corners). The sum is compensated.
//! - s >= 3, any a: T = T(h, inf) - R with T(h, inf) = erfc(h/sqrt2)/4 and R the integral
//!   over [a, inf). Substituting v = h^2 (x^2 - a^2)/2 gives R = e^(-(h^2 + s^2)/2)/(2 pi)
//!   int_0^inf e^-v h / (y (h^2 + y^2)) dv, y = sqrt(s^2 + 2v), by 20-point Gauss-Laguerre;
//!   the integrand's nearest singularity is at v = -s^2/2, so the rule's error falls
//!   like e^(-2.8 s sqrt(20)): below 3e-17 from s = 3. R is at most 0.27% of T(h, inf)
//!   there (mpmath), so the difference loses nothing. Factoring e^(-h^2/2) out,
//!   T = e^(-h^2/2) (erfcx(h/sqrt2)/4 - e^(-s^2/2) L): no erfc of an inexact h/sqrt2, whose
//!   rounding would cost h^2/2 ulps in the far tail (below h/sqrt2 = 1/2 erfc comes from
//!   erf instead, where the product's two roundings were most of the error).
//! - s < 3, 1 < a <= 2: T(h, a) = T(h, 1) + e^(-h^2/2)/(2 pi) int_1^a e^(-h^2 x^2/2) /
//!   (1 + x^2) dx, T(h, 1) = Q(h)(1 - Q(h))/2 with Q(x) = erfc(x/sqrt2)/2 the normal upper
//!   tail, and the integral by the 13-point Gauss-Legendre rule on [1, a] (error below
//!   1e-17 of T there, mpmath). Owen's identity (next) would halve T here by subtraction.
//! - s < 3, a > 2 (so h < 1.5): Owen's identity T(h, a) = Q(h)/2 + Q(s)(1/2 - Q(h)) -
//!   T(s, 1/a), with T(s, 1/a) by the first rule (its own s is h). Every term is positive
//!   and T(h, a) > T(h, 2), so the subtraction costs at most a bit of its terms' rounding.
//!
//! Each exponential e^(-x^2/2) is taken of x^2 = hi + lo exact (FMA; s = a h itself as a
//! double-length product): e^(-hi/2)(1 - lo/2), as erf.rs does, so the result's error
//! does not grow with x^2. Where it is subnormal, e^(-hi/4) twice (its own exp would be
//! flushed or inexact). The nodes and weights are scripts/owens_t_nodes.py's (mpmath).
//!
//! Special values as scipy: nan in, nan out; T(h, +-0) = +0; T(+-inf, a) = 0 with a's
//! sign (as scipy: -0.0 for a < 0, also where T underflows); T(h, +-inf) =
//! +-erfc(|h|/sqrt2)/4; T(0, a) = atan(a)/(2 pi) (from the rules: no special case).
//!
//! Written for f64; f32 on targets with f64 math computes in f64 (`scalar.rs`). Elsewhere
//! (Vulkan, Metal) it runs in f32 with per-type thresholds, and is as accurate as the
//! device's f32 exp (lavapipe: 74 ULP at most on 2000 points, benchmarks/accuracy.py).

use super::erf::{erf_small, erfcx_positive};
use super::F;
use crate::mlir::{Arith, Block, CmpF, Value};

/// Gauss-Legendre: the 13 positive nodes of the 26-point rule on [-1, 1].
const LEGENDRE_T: [f64; 13] = [
    0.05923009342931321,
    0.17685882035689018,
    0.2920048394859569,
    0.4030517551234863,
    0.5084407148245057,
    0.6066922930176181,
    0.6964272604199573,
    0.7763859488206789,
    0.845445942788498,
    0.9026378619843071,
    0.9471590666617142,
    0.978385445956471,
    0.9958857011456169,
];
/// Their weights divided by 2 pi (T's factor).
const LEGENDRE_W: [f64; 13] = [
    0.018831438115323503,
    0.01856708624397765,
    0.018042093461223385,
    0.017263829606398752,
    0.016243219975989858,
    0.014994592034116705,
    0.01353547446966209,
    0.011886351605820165,
    0.010070377242777432,
    0.008113054574229958,
    0.006041900952847024,
    0.0038862217010742057,
    0.001679303108454609,
];
/// Gauss-Legendre: the 13 nodes of the 13-point rule on [-1, 1] (for [1, a]).
const SHORT_T: [f64; 13] = [
    -0.9841830547185881,
    -0.9175983992229779,
    -0.8015780907333099,
    -0.6423493394403402,
    -0.44849275103644687,
    -0.2304583159551348,
    0.0,
    0.2304583159551348,
    0.44849275103644687,
    0.6423493394403402,
    0.8015780907333099,
    0.9175983992229779,
    0.9841830547185881,
];
/// Their weights divided by 2 pi.
const SHORT_W: [f64; 13] = [
    0.0064432294745558685,
    0.014661592064213717,
    0.022102405616001984,
    0.028352813430217356,
    0.033074951219316105,
    0.0360140866773945,
    0.03701172922039161,
    0.0360140866773945,
    0.033074951219316105,
    0.028352813430217356,
    0.022102405616001984,
    0.014661592064213717,
    0.0064432294745558685,
];
/// Gauss-Laguerre: the 20 nodes.
const LAGUERRE_V: [f64; 20] = [
    0.07053988969198875,
    0.37212681800161146,
    0.9165821024832735,
    1.707306531028344,
    2.749199255309432,
    4.048925313850887,
    5.6151749708616165,
    7.459017453671064,
    9.594392869581096,
    12.038802546964316,
    14.81429344263074,
    17.948895520519375,
    21.47878824028501,
    25.451702793186904,
    29.93255463170061,
    35.013434240479,
    40.83305705672857,
    47.6199940473465,
    55.810795750063896,
    66.52441652561575,
];
/// Their weights divided by 2 pi.
const LAGUERRE_W: [f64; 20] = [
    0.026856887645553364,
    0.04635457141034208,
    0.042444411525196936,
    0.026420111003223376,
    0.01190893806415213,
    0.003973210416181298,
    0.0009871666266924818,
    0.00018222642346209301,
    2.4787073023272296e-05,
    2.4512154444380626e-06,
    1.7291967583328963e-07,
    8.483150900334203e-09,
    2.7979139450841843e-10,
    5.929321228605678e-12,
    7.587758467238733e-14,
    5.368048336101757e-16,
    1.8382624147350907e-18,
    2.4502255867309577e-21,
    8.413634911465233e-25,
    2.6363325789647577e-29,
];

/// The boundary in s = a h between the Legendre and the Laguerre rule.
const S_SPLIT: f64 = 3.0;
/// Past this x, e^(-x^2/2) times anything here (at most 1) is below the smallest
/// subnormal: 0 (per type).
const FAR: (f64, f64) = (40.0, 15.0);
/// Past this x^2/2, e^(-x^2/2) is subnormal (or nearly): two halves (per type).
const DEEP: (f64, f64) = (705.0, 85.0);
const FRAC_1_SQRT_2: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// (m e^(-x^2/2), e^(-x^2/2)) for x = x_hi + x_lo >= 0 (|x_lo| at most an ulp of x_hi)
/// and 0 <= m <= 1: 0 past `FAR` (whatever m is: inf and nan there come from terms the
/// factor makes vanish).
fn times_exp_minus_half_square(f: &mut F, x: &Value, x_lo: Option<&Value>, m: &Value) -> (Value, Value) {
    let q = f.mul(x, x);
    let minus_q = f.neg(&q);
    let mut lo = f.fma(x, x, &minus_q);
    if let Some(x_lo) = x_lo {
        let two_x = f.add(x, x);
        lo = f.fma(&two_x, x_lo, &lo);
    }
    let half = f.c(0.5);
    let quarter = f.c(0.25);
    let minus_half_q = f.mul(&minus_q, &half);
    let minus_half_lo = f.mul(&lo, &half);
    let minus_half_lo = f.neg(&minus_half_lo);
    // e^(-(hi + lo)/2) = e^(-hi/2) (1 - lo/2): lo is below an ulp of hi, its square nothing.
    let e = f.exp(&minus_half_q);
    let plain = f.fma(&e, &minus_half_lo, &e);
    let direct = f.mul(m, &plain);
    let minus_quarter_q = f.mul(&minus_q, &quarter);
    let e4 = f.exp(&minus_quarter_q);
    let split = f.mul(m, &e4);
    let split = f.mul(&split, &e4);
    let split = f.fma(&split, &minus_half_lo, &split);
    let deep_at = f.k(DEEP);
    let minus_deep_at = f.neg(&deep_at);
    let deep = f.cmp(CmpF::Olt, &minus_half_q, &minus_deep_at);
    let r = f.sel(&deep, &split, &direct);
    let zero = f.c(0.0);
    let far_at = f.k(FAR);
    let far = f.cmp(CmpF::Ogt, x, &far_at);
    let r = f.sel(&far, &zero, &r);
    let plain = f.sel(&far, &zero, &plain);
    (r, plain)
}

/// One of two Gauss-Legendre sums, per element (`short`: the second):
/// - a/(2 pi) int_0^1 e^(-s^2 t^2/2) / (1 + a^2 t^2) dt for 0 <= a <= 1 and 0 <= s =
///   s_hi + s_lo < 3 (T(h, a) is e^(-h^2/2) times it; `h` unused);
/// - 1/(2 pi) int_1^a e^(-h^2 x^2/2) / (1 + x^2) dx for 1 < a <= 2 and h a < 3, the 13-point
///   rule on [1, a] (T(h, a) - T(h, 1) is e^(-h^2/2) times it; `s` unused).
/// Both are sum W_i e^(-u_i^2/2) / (1 + x_i^2) with u = h x, from the node's x_i.
fn legendre(f: &mut F, a: &Value, s: &Value, s_lo: &Value, h: &Value, short: &Value) -> Value {
    let one = f.c(1.0);
    let half = f.c(0.5);
    let minus_half = f.c(-0.5);
    // a - 1 is exact for a in (1, 2].
    let am1 = f.sub(a, &one);
    let half_am1 = f.mul(&am1, &half);
    // Smallest terms (x largest) first, compensated: the plain sum's roundings were worth
    // up to an ulp of the result. Each term is added as soon as it is made, so that few
    // values are live at once (float32 computed in f64 runs on twice as many registers).
    let mut sum = f.c(0.0);
    let mut err = f.c(0.0);
    for i in (0..LEGENDRE_T.len()).rev() {
        let t = f.c(LEGENDRE_T[i]);
        let tau1 = f.c(1.0 + SHORT_T[i]);
        let w_long = f.c(LEGENDRE_W[i]);
        let w_short = f.c(SHORT_W[i]);
        // The long rule: x = a t, u = s t (u_lo: s_lo's share).
        let x_long = f.mul(a, &t);
        let u_long = f.mul(s, &t);
        let u_long_lo = f.mul(s_lo, &t);
        // The short one: x = 1 + (a - 1)(1 + tau)/2, u = h x = u + u_lo exactly.
        let x_short = f.fma(&half_am1, &tau1, &one);
        let u_short = f.mul(h, &x_short);
        let minus_u_short = f.neg(&u_short);
        let u_short_lo = f.fma(h, &x_short, &minus_u_short);
        let x = f.sel(short, &x_short, &x_long);
        let u = f.sel(short, &u_short, &u_long);
        let u_lo = f.sel(short, &u_short_lo, &u_long_lo);
        let w = f.sel(short, &w_short, &w_long);
        // u^2 = q + lo, e^(-u^2/2) = e^(-q/2)(1 - lo/2).
        let q = f.mul(&u, &u);
        let minus_q = f.neg(&q);
        let lo = f.fma(&u, &u, &minus_q);
        let two_u = f.add(&u, &u);
        let lo = f.fma(&two_u, &u_lo, &lo);
        let arg = f.mul(&q, &minus_half);
        let e = f.exp(&arg);
        let c = f.mul(&lo, &minus_half);
        let e = f.fma(&e, &c, &e);
        let d = f.fma(&x, &x, &one);
        let we = f.mul(&w, &e);
        let term = f.div(&we, &d);
        let (next, e) = f.two_sum(&sum, &term);
        sum = next;
        err = f.add(&err, &e);
    }
    let sum = f.add(&sum, &err);
    let factor = f.sel(short, &half_am1, a);
    f.mul(&factor, &sum)
}

/// 1/(2 pi) int_0^inf e^-v h / (y (h^2 + y^2)) dv, y = sqrt(s^2 + 2v), by the
/// Gauss-Laguerre rule, for h >= 0 and s >= 3 (R = e^(-(h^2 + s^2)/2) times it).
fn laguerre(f: &mut F, h: &Value, s: &Value) -> Value {
    let s2 = f.mul(s, s);
    let h2 = f.mul(h, h);
    let hs = f.add(&h2, &s2);
    // Smallest terms first, each added as soon as it is made (see `legendre`).
    let mut sum = f.c(0.0);
    for (&v, &w) in LAGUERRE_V.iter().zip(LAGUERRE_W.iter()).rev() {
        let two_v = f.c(2.0 * v);
        let w = f.c(w);
        let y2 = f.add(&s2, &two_v);
        let y = f.sqrt(&y2);
        let d = f.add(&hs, &two_v);
        let d = f.mul(&y, &d);
        let wh = f.mul(&w, h);
        let term = f.div(&wh, &d);
        sum = f.add(&sum, &term);
    }
    sum
}

/// (Q(x), 1/2 - Q(x), z < 1/2) for z = x/sqrt2 >= 0, Q(x) = erfc(z)/2 the normal upper
/// tail, given e = e^(-x^2/2) and erfcx(z): Q = e erfcx(z)/2, or from erf(z) for z < 1/2,
/// where that product's two roundings would be most of Q's error (Q near 1/2).
fn normal_tails(f: &mut F, z: &Value, e: &Value, erfcx_z: &Value) -> (Value, Value, Value) {
    let half = f.c(0.5);
    let small_e = erf_small(f, z);
    let p_small = f.mul(&small_e, &half);
    let q_small = f.sub(&half, &p_small);
    let q_big = f.mul(e, erfcx_z);
    let q_big = f.mul(&q_big, &half);
    let p_big = f.sub(&half, &q_big);
    let small = f.cmp(CmpF::Olt, z, &half);
    let q = f.sel(&small, &q_small, &q_big);
    let p = f.sel(&small, &p_small, &p_big);
    (q, p, small)
}



pub fn owens_t(b: &mut Block, h: &Value, a: &Value) -> Value {
    let mut f = F::new(b, h);
    let f = &mut f;
    let zero = f.c(0.0);
    let half = f.c(0.5);
    let quarter = f.c(0.25);
    let one = f.c(1.0);
    let inf = f.c(f64::INFINITY);
    let h_abs = f.abs(h);
    let a_abs = f.abs(a);
    // s = a h = s_hi + s_lo exactly; where a is infinite, s is too (h = 0 included: only
    // the Laguerre rule's T(h, inf) term survives, and it is 1/4 there).
    let (s, s_lo) = f.two_prod(&h_abs, &a_abs);
    let a_inf = f.cmp(CmpF::Oeq, &a_abs, &inf);
    let s = f.sel(&a_inf, &inf, &s);
    let s_lo = f.sel(&a_inf, &zero, &s_lo);
    let s_finite = f.cmp(CmpF::Olt, &s, &inf);
    let s_lo = f.sel(&s_finite, &s_lo, &zero);
    let split = f.c(S_SPLIT);
    let small_s = f.cmp(CmpF::Olt, &s, &split);
    let a_big = f.cmp(CmpF::Ogt, &a_abs, &one);

    // The Legendre rules: the long one at (a, s) for a <= 1 and at (1/a, h) for the
    // identity (a > 2); the short one on [1, a] for 1 < a <= 2. Harmless stand-ins (s = 0,
    // h = 0) where none is used.
    let two = f.c(2.0);
    let a_far = f.cmp(CmpF::Ogt, &a_abs, &two);
    let short = f.b.arith(Arith::XOrI, &a_big, &a_far);
    let short = f.and(&short, &small_s);
    let inv_a = f.div(&one, &a_abs);
    let a_l = f.sel(&a_far, &inv_a, &a_abs);
    let s_l = f.sel(&a_far, &h_abs, &s);
    let s_l_lo = f.sel(&a_far, &zero, &s_lo);
    let s_l = f.sel(&small_s, &s_l, &zero);
    let s_l_lo = f.sel(&small_s, &s_l_lo, &zero);
    let h_l = f.sel(&short, &h_abs, &zero);
    let g = legendre(f, &a_l, &s_l, &s_l_lo, &h_l, &short);

    // e^(-s^2/2) and erfcx(h/sqrt2), erfcx(s/sqrt2), shared by the Laguerre rule and the
    // identity.
    let (_, es) = times_exp_minus_half_square(f, &s, Some(&s_lo), &one);
    let r = f.c(FRAC_1_SQRT_2);
    let zh = f.mul(&h_abs, &r);
    let xh = erfcx_positive(f, &zh);
    let zs = f.mul(&s, &r);
    let xs = erfcx_positive(f, &zs);

    // s >= 3: erfcx(h/sqrt2)/4 - e^(-s^2/2) L.
    let l = laguerre(f, &h_abs, &s);
    let quarter_xh = f.mul(&xh, &quarter);
    let minus_es = f.neg(&es);
    let bracket = f.fma(&minus_es, &l, &quarter_xh);
    // a <= 1, s < 3: the Legendre integral.
    let m = f.sel(&small_s, &g, &bracket);
    let (direct, eh) = times_exp_minus_half_square(f, &h_abs, None, &m);

    let (qh, ph, h_small) = normal_tails(f, &zh, &eh, &xh);
    let (qs, _, _) = normal_tails(f, &zs, &es, &xs);
    // s >= 3 with h/sqrt2 < 1/2: Q(h)/2 - e^(-h^2/2) e^(-s^2/2) L, Q(h) from erf.
    let half_qh = f.mul(&qh, &half);
    let es_l = f.mul(&es, &l);
    let minus_eh = f.neg(&eh);
    let near_zero = f.fma(&minus_eh, &es_l, &half_qh);
    let direct_b = f.sel(&h_small, &near_zero, &direct);
    let direct = f.sel(&small_s, &direct, &direct_b);

    // 1 < a <= 2, s < 3: T(h, 1) = Q(h)(1 - Q(h))/2 plus e^(-h^2/2) g.
    let one_minus_qh = f.add(&half, &ph);
    let t1 = f.mul(&half_qh, &one_minus_qh);
    let near_one = f.add(&t1, &direct);
    let t = f.sel(&short, &near_one, &direct);

    // a > 2, s < 3 (so h < 1.5): Q(h)/2 + Q(s)(1/2 - Q(h)) - e^(-s^2/2) g.
    let owen = f.fma(&qs, &ph, &half_qh);
    let minus_es_g = f.mul(&minus_es, &g);
    let owen = f.add(&owen, &minus_es_g);

    let use_owen = f.and(&small_s, &a_far);
    let t = f.sel(&use_owen, &owen, &t);

    // T(h, 0) = 0 (also for infinite h, where s is nan); T(inf, a) = 0.
    let a_zero = f.cmp(CmpF::Oeq, &a_abs, &zero);
    let h_inf = f.cmp(CmpF::Oeq, &h_abs, &inf);
    let vanish = f.or(&a_zero, &h_inf);
    let t = f.sel(&vanish, &zero, &t);
    // The sign of a, as scipy: -0.0 for a < 0, +0.0 for a = -0.0.
    let minus_t = f.neg(&t);
    let negative = f.cmp(CmpF::Olt, a, &zero);
    let t = f.sel(&negative, &minus_t, &t);
    let t = f.keep_nan(a, &t);
    f.keep_nan(h, &t)
}
