//! Debye's expansions of J_v(x) and Y_v(x) for a large order v (DLMF 10.19.3 and 10.19.6), straight-line
//! code for the lanes `bessel_jv`'s loops cannot reach (their depth grows with v and x - v).
//!
//! With w = sqrt(|x^2 - v^2|) and p = v / w (coth alpha below the turning point, cot beta
//! above it), the coefficients u_k(p) of DLMF 10.41.10 (a polynomial of degree 3k with the
//! powers p^k, p^k+2, ..., made here from the recurrence 10.41.11 when the kernel is built)
//! give, as p^k / v^k = 1 / w^k, the terms T_k = p^-k u_k(p) / w^k:
//!
//! - x < v: J_v(x) = exp(-v (atanh t - t)) / sqrt(2 pi w) sum_k T_k, t = w / v (tanh alpha).
//!   The exponent (some hundreds) in two floats: below t = 1/2 as (w^3 / v^2) times the series
//!   1/3 + t^2/5 + ..., w from w^2 = (v - x)(v + x) in two floats; from t = 1/2 on (only
//!   lanes where J underflows come there) log1p(2 w (v + w) / x^2) / 2 - t. Y_v(x) =
//!   -2 exp(v (atanh t - t)) / sqrt(2 pi w) sum_k (-1)^k T_k (for J_-v = cos(v pi) J_v -
//!   sin(v pi) Y_v; overflowing where J_-v does).
//! - x > v: J_v(x) = sqrt(2 / (pi w)) (P cos xi + Q sin xi), xi = w - v acos(v / x) - pi/4,
//!   P and Q the even and odd terms with u_k(i p) = i^k (u_k with the signs of p^2 flipped),
//!   signed (-1)^(k/2) and (-1)^((k-1)/2); Y_v(x) = sqrt(2 / (pi w)) (P sin xi - Q cos xi).
//!   The phase is some v in size and must be right to an ulp of 1: `phase` writes it in two
//!   floats as series in s^2 or u^2 (s = v/x, u = w/x).
//!
//! The terms fall like C_k (p^3 / v)^k with C_k growing factorially (C_10 ~ 7e7): with
//! TERMS = 11 they reach 1e-17 while p^3 / v <= MAX_Z = 3e-3, that is outside about
//! |x - v| < 24 v^(1/3) (the transition region: `bessel_jv` evaluates them at an order just
//! past it and recurs back). `ok` says whether a lane is within that bound.
//!
//! float32 lanes run this in float64 where the target has float64 math (else in float32,
//! with the two-float steps in float32).

use super::bessel_jv;
use super::bessel_real::dd_add;
use super::exp_log::{exp_double, log1p, LN2_HI, LN2_LO};
use super::trig;
use super::F;
use crate::lower::scalar::widen_f32;
use crate::mlir::{Arith, Cast, CmpF, ScalarType, Value};

/// The number of terms u_0 .. u_{TERMS-1}.
const TERMS: usize = 11;
/// The largest p^3 / v where TERMS terms reach the unit roundoff.
const MAX_Z: f64 = 3e-3;
/// atanh t - t = t^3 sum_m t^2m / (2m + 3) below t = 1/2: 27 terms reach 0.25^27 ~ 6e-17.
const ATANH_TERMS: usize = 27;

/// The coefficients of u_0 .. u_{TERMS-1}, u[k][j] that of p^j, by DLMF 10.41.11:
/// u_k+1(p) = p^2 (1 - p^2) u_k'(p) / 2 + (1/8) int_0^p (1 - 5 t^2) u_k(t) dt.
fn u_coefficients() -> Vec<Vec<f64>> {
    let mut u = vec![vec![1.0]];
    for _ in 1..TERMS {
        let a = u.last().unwrap();
        let mut next = vec![0.0; a.len() + 3];
        for (j, &c) in a.iter().enumerate() {
            let d = c * j as f64 / 2.0;
            next[j + 1] += d + c / (8.0 * (j as f64 + 1.0));
            next[j + 3] -= d + 5.0 * c / (8.0 * (j as f64 + 3.0));
        }
        u.push(next);
    }
    u
}

/// (J_v(x), Y_v(x) 2^-y_scale, ok) by Debye's expansions for 0 < v, 0 < x (see the module
/// comment); `ok` is false in the transition region and where x = v. Y is scaled by a power
/// of two inside its exponential (bessel_jv's Y_SCALE: 2^-64, 2^-16 in f32), so that it
/// overflows only where the scaled value does.
pub(super) fn debye_jy(f: &mut F, v: &Value, x: &Value) -> (Value, Value, Value) {
    let ty = f.ty;
    let y_scale = if ty == ScalarType::F64 { 64.0 } else { 16.0 };
    if ty == ScalarType::F32 && widen_f32() {
        let vw = f.b.cast(Cast::ExtF, v, ScalarType::F64);
        let xw = f.b.cast(Cast::ExtF, x, ScalarType::F64);
        let (j, y, ok) = debye_in(&mut F { b: f.b, ty: ScalarType::F64 }, &vw, &xw, y_scale);
        return (f.b.cast(Cast::TruncF, &j, ty), f.b.cast(Cast::TruncF, &y, ty), ok);
    }
    debye_in(f, v, x, y_scale)
}

/// Whether the expansions reach 1e-17 at (v, x) (p^3 / v <= MAX_Z, x != v): false in the
/// transition region.
pub(super) fn debye_reaches(f: &mut F, v: &Value, x: &Value) -> Value {
    reach(f, v, x).2
}

/// (w, p, ok): w = sqrt(|x^2 - v^2|) (1 where it is 0), p = v / w, and `debye_reaches`.
fn reach(f: &mut F, v: &Value, x: &Value) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    // w = sqrt(|x - v| (x + v)), as two roots (no overflow of the product for huge v).
    let d = f.sub(x, v);
    let d = f.abs(&d);
    let s = f.add(x, v);
    let rd = f.sqrt(&d);
    let rs = f.sqrt(&s);
    let w = f.mul(&rd, &rs);
    let w_pos = f.cmp(CmpF::Ogt, &w, &zero);
    let w = f.sel(&w_pos, &w, &one);
    let p = f.div(v, &w);
    let p2 = f.mul(&p, &p);
    let p3 = f.mul(&p2, &p);
    let z = f.div(&p3, v);
    let max_z = f.c(MAX_Z);
    let ok = f.cmp(CmpF::Ole, &z, &max_z);
    let ok = f.and(&ok, &w_pos);
    (w, p, ok)
}

fn debye_in(f: &mut F, v: &Value, x: &Value, y_scale: f64) -> (Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let (w, p, ok) = reach(f, v, x);
    let q = f.mul(&p, &p);
    let osc = f.cmp(CmpF::Ogt, x, v);
    // T_k = (u_k(p) / p^k) / w^k, as a polynomial in +-p^2 (- above the turning point).
    let minus_q = f.neg(&q);
    let sq = f.sel(&osc, &minus_q, &q);
    let r = f.div(&one, &w);
    let u = u_coefficients();
    let mut even = zero.clone();
    let mut odd = zero.clone();
    let mut even_osc = zero.clone();
    let mut odd_osc = zero.clone();
    let mut rk = one.clone();
    for (k, c) in u.iter().enumerate() {
        let inner: Vec<f64> = c.iter().skip(k).step_by(2).copied().collect();
        let t = f.poly(&sq, &inner, &inner);
        let t = f.mul(&t, &rk);
        let minus_t = f.neg(&t);
        // (-1)^(k/2) for even k, (-1)^((k-1)/2) for odd k.
        let signed = if (k / 2) % 2 == 0 { t.clone() } else { minus_t };
        if k % 2 == 0 {
            even = f.add(&even, &t);
            even_osc = f.add(&even_osc, &signed);
        } else {
            odd = f.add(&odd, &t);
            odd_osc = f.add(&odd_osc, &signed);
        }
        rk = f.mul(&rk, &r);
    }
    let pi = f.c(std::f64::consts::PI);
    let two_pi_w = f.mul(&pi, &w);
    let two = f.c(2.0);
    let two_pi_w = f.mul(&two_pi_w, &two);
    // Below the turning point.
    let t = f.div(&w, v);
    // v (atanh t - t) = (w^3 / v^2) sum_m t^2m / (2m + 3) for t < 1/2, in two floats from
    // w^2 = (v - x)(v + x) (v - x exact there, x > 0.86 v): the exponent is some hundreds
    // and its rounding would be the result's (1e3 ulp with w in one float).
    let d = f.sub(v, x);
    let (sh, sl) = f.two_sum(v, x);
    let (w2, w2_lo) = f.two_prod(&d, &sh);
    let w2_lo = f.fma(&d, &sl, &w2_lo);
    let (wh, wl) = dd_sqrt(f, &w2, &w2_lo);
    let (vv, vv_lo) = f.two_prod(v, v);
    let (t2, t2_lo) = f.div_double(&w2, Some(&w2_lo), &vv, &vv_lo);
    let series: Vec<(f64, f64)> = (0..ATANH_TERMS).map(|m| dd_scale(1.0, 0.0, 2.0 * m as f64 + 3.0, true)).collect();
    let (ser, ser_lo) = dd_series(f, (&t2, &t2_lo), &series);
    let (w3, w3_lo) = dd_mul(f, (&w2, &w2_lo), (&wh, &wl));
    let (c, c_lo) = f.div_double(&w3, Some(&w3_lo), &vv, &vv_lo);
    let (e_ser, e_ser_lo) = dd_mul(f, (&c, &c_lo), (&ser, &ser_lo));
    // From t = 1/2 on, log1p(2 w (v + w) / x^2) / 2 - t (only where J underflows in the
    // lanes that come here: v (atanh t - t) >= 0.049 v there, v > 1e4).
    let wx = f.div(&w, x);
    let vw = f.add(v, &w);
    let vwx = f.div(&vw, x);
    let arg = f.mul(&wx, &vwx);
    let arg = f.mul(&arg, &two);
    let l = log1p(f.b, &arg);
    let minus_t = f.neg(&t);
    let direct = f.fma(&l, &half, &minus_t);
    let direct = f.mul(v, &direct);
    let small_t = f.cmp(CmpF::Olt, &t, &half);
    let gap = f.sel(&small_t, &e_ser, &direct);
    let gap_lo = f.sel(&small_t, &e_ser_lo, &zero);
    let e = f.neg(&gap);
    let e_lo = f.neg(&gap_lo);
    let e = if f.f64() { exp_double(f.b, &e, &e_lo) } else { f.exp(&e) };
    let root = f.sqrt(&two_pi_w);
    let lead = f.div(&e, &root);
    let sum = f.add(&even, &odd);
    let below = f.mul(&lead, &sum);
    // Y_v = -2 e^(v (atanh t - t)) / sqrt(2 pi w) sum_k (-1)^k T_k (DLMF 10.19.3), the
    // exponent less y_scale ln 2 (exact: a power of two times ln 2's leading float).
    let times = f.c(-y_scale);
    let ln2 = f.k(LN2_HI);
    let shift = f.mul(&ln2, &times);
    let (g, g_lo) = f.two_sum(&gap, &shift);
    let ln2_lo = f.k(LN2_LO);
    let shift_lo = f.mul(&ln2_lo, &times);
    let g_lo = f.add(&g_lo, &shift_lo);
    let g_lo = f.add(&g_lo, &gap_lo);
    let grow = if f.f64() { exp_double(f.b, &g, &g_lo) } else { f.exp(&g) };
    let minus_two = f.c(-2.0);
    let grow = f.mul(&grow, &minus_two);
    let grow = f.div(&grow, &root);
    let alternating = f.sub(&even, &odd);
    let y_below = f.mul(&grow, &alternating);
    // Above it: J = A (P cos xi + Q sin xi), Y = A (P sin xi - Q cos xi) (DLMF 10.19.6).
    let (cos_xi, sin_xi) = phase(f, v, x);
    let qs = f.mul(&odd_osc, &sin_xi);
    let above = f.fma(&even_osc, &cos_xi, &qs);
    let qc = f.mul(&odd_osc, &cos_xi);
    let minus_qc = f.neg(&qc);
    let y_above = f.fma(&even_osc, &sin_xi, &minus_qc);
    let four = f.c(4.0);
    let amp = f.div(&four, &two_pi_w);
    let amp = f.sqrt(&amp);
    let above = f.mul(&amp, &above);
    let y_amp = f.c((-y_scale).exp2());
    let y_amp = f.mul(&amp, &y_amp);
    let y_above = f.mul(&y_amp, &y_above);
    (f.sel(&osc, &above, &below), f.sel(&osc, &y_above, &y_below), ok)
}

/// The phase series' lengths: PHASE_TERMS coefficients, the first PHASE_DD of them in two
/// floats (the tail, at most 0.5^PHASE_DD of the sum, in one).
const PHASE_TERMS: usize = 72;
const PHASE_DD: usize = 24;

/// (hi, lo) * k and (hi, lo) / k in two floats (when the kernel is built).
fn dd_scale(h: f64, l: f64, k: f64, divide: bool) -> (f64, f64) {
    let (q, r) = if divide {
        let q = h / k;
        let r = -q.mul_add(k, -h) + l;
        (q, r / k)
    } else {
        let p = h * k;
        (p, h.mul_add(k, -p) + l * k)
    };
    let s = q + r;
    (s, r - (s - q))
}

/// asin's Taylor coefficients a_m (asin u = sum a_m u^(2m+1)) in two floats: a_m = t_m /
/// (2m + 1), t_m = t_m-1 (2m - 1) / (2m).
fn asin_coefficients() -> Vec<(f64, f64)> {
    let mut t = (1.0, 0.0);
    let mut a = vec![(1.0, 0.0)];
    for m in 1..=PHASE_TERMS {
        let m = m as f64;
        t = dd_scale(t.0, t.1, 2.0 * m - 1.0, false);
        t = dd_scale(t.0, t.1, 2.0 * m, true);
        a.push(dd_scale(t.0, t.1, 2.0 * m + 1.0, true));
    }
    a
}

/// (hi, lo) products in two floats, to first order in the low parts.
fn dd_mul(f: &mut F, a: (&Value, &Value), b: (&Value, &Value)) -> (Value, Value) {
    let (p, e) = f.two_prod(a.0, b.0);
    let e = f.fma(a.0, b.1, &e);
    let e = f.fma(a.1, b.0, &e);
    f.fast_two_sum(&p, &e)
}

/// sum c_m t^m for t in two floats: the tail from PHASE_DD on in one float, then Horner's
/// rule in two.
fn dd_series(f: &mut F, t: (&Value, &Value), c: &[(f64, f64)]) -> (Value, Value) {
    let tail: Vec<f64> = c[PHASE_DD..].iter().map(|p| p.0).collect();
    let mut h = f.poly(t.0, &tail, &tail);
    let mut l = f.c(0.0);
    for &(ch, cl) in c[..PHASE_DD].iter().rev() {
        let (ph, pl) = dd_mul(f, (&h, &l), t);
        let ch = f.c(ch);
        let cl = f.c(cl);
        let (sh, sl) = dd_add(f, (&ph, &pl), (&ch, &cl));
        h = sh;
        l = sl;
    }
    (h, l)
}

/// sqrt(hi + lo) in two floats: the root of hi and one Newton correction.
fn dd_sqrt(f: &mut F, h: &Value, l: &Value) -> (Value, Value) {
    let w = f.sqrt(h);
    let minus_w = f.neg(&w);
    let r = f.fma(&minus_w, &w, h);
    let r = f.add(&r, l);
    let two_w = f.add(&w, &w);
    (w.clone(), f.div(&r, &two_w))
}

/// (cos, sin) of hi + lo, |lo| <= ulp(hi): hi's, corrected to first order in lo.
fn cos_sin_dd(f: &mut F, h: &Value, l: &Value) -> (Value, Value) {
    let c = trig::cos(f.b, h);
    let s = trig::sin(f.b, h);
    let sl = f.mul(&s, l);
    let minus = f.neg(&sl);
    let cos = f.add(&c, &minus);
    let sin = f.fma(&c, l, &s);
    (cos, sin)
}

/// (cos xi, sin xi), xi = w - v beta - pi/4, cos beta = v / x = s, sin beta = w / x = u,
/// for x > v. The phase is some v in size and must be right to an ulp of 1, so it is
/// written as series in whichever of s^2, u^2 (they add to 1) is at most 1/2, in two floats:
///
/// - x >= sqrt(2) v: xi = chi + delta, chi = x - (v/2 + 1/4) pi exactly as in Hankel's
///   expansion (cos x and sin x by the exact reduction, tau = v/2 + 1/4 mod 2), delta = w -
///   x + v asin(s) = x sum_m a_m s^(2m+2) / (2m+2) = (v^2 / x) sum_m a_m / (2m+2) s^2m
///   (its derivative in s is x asin s).
/// - below: xi + pi/4 = w - v asin(u) = w (x - v) / x - (v w / x) u^2 sum_m a_m+1 u^2m, with
///   x - v exact (Sterbenz) and w = sqrt((x - v)(x + v)) in two floats.
fn phase(f: &mut F, v: &Value, x: &Value) -> (Value, Value) {
    let zero = f.c(0.0);
    let a = asin_coefficients();
    // Far: chi and delta.
    let (cos_chi, sin_chi) = bessel_jv::hankel_phase(f, v, x);
    let (vv, vv_lo) = f.two_prod(v, v);
    let (q, q_lo) = f.div_double(&vv, Some(&vv_lo), x, &zero);
    let (t, t_lo) = f.div_double(&q, Some(&q_lo), x, &zero);
    let b: Vec<(f64, f64)> = a.iter().enumerate().map(|(m, &(h, l))| dd_scale(h, l, 2.0 * m as f64 + 2.0, true)).collect();
    let (g, g_lo) = dd_series(f, (&t, &t_lo), &b);
    let (dh, dl) = dd_mul(f, (&q, &q_lo), (&g, &g_lo));
    let (cd, sd) = cos_sin_dd(f, &dh, &dl);
    let ss = f.mul(&sin_chi, &sd);
    let minus = f.neg(&ss);
    let cos_far = f.fma(&cos_chi, &cd, &minus);
    let cs = f.mul(&cos_chi, &sd);
    let sin_far = f.fma(&sin_chi, &cd, &cs);
    // Near: theta = xi + pi/4.
    let d = f.sub(x, v);
    let (sh, sl) = f.two_sum(x, v);
    let (w2, w2_lo) = f.two_prod(&d, &sh);
    let w2_lo = f.fma(&d, &sl, &w2_lo);
    let (w, w_lo) = dd_sqrt(f, &w2, &w2_lo);
    let (xx, xx_lo) = f.two_prod(x, x);
    let (u2, u2_lo) = f.div_double(&w2, Some(&w2_lo), &xx, &xx_lo);
    let (dw, dw_lo) = dd_mul(f, (&d, &zero), (&w, &w_lo));
    let (lead, lead_lo) = f.div_double(&dw, Some(&dw_lo), x, &zero);
    let (vw, vw_lo) = dd_mul(f, (v, &zero), (&w, &w_lo));
    let (vwx, vwx_lo) = f.div_double(&vw, Some(&vw_lo), x, &zero);
    let (k, k_lo) = dd_mul(f, (&vwx, &vwx_lo), (&u2, &u2_lo));
    let (s1, s1_lo) = dd_series(f, (&u2, &u2_lo), &a[1..]);
    let (k, k_lo) = dd_mul(f, (&k, &k_lo), (&s1, &s1_lo));
    let minus_k = f.neg(&k);
    let minus_k_lo = f.neg(&k_lo);
    let (th, th_lo) = dd_add(f, (&lead, &lead_lo), (&minus_k, &minus_k_lo));
    let (ct, st) = cos_sin_dd(f, &th, &th_lo);
    let r2 = f.c(std::f64::consts::FRAC_1_SQRT_2);
    let sum = f.add(&ct, &st);
    let cos_near = f.mul(&sum, &r2);
    let diff = f.sub(&st, &ct);
    let sin_near = f.mul(&diff, &r2);
    // s^2 <= 1/2: 2 v^2 <= x^2.
    let two = f.c(2.0);
    let vv2 = f.mul(&vv, &two);
    let far = f.cmp(CmpF::Ole, &vv2, &xx);
    (f.sel(&far, &cos_far, &cos_near), f.sel(&far, &sin_far, &sin_near))
}

/// The Taylor coefficients g_m (in two floats) of (sqrt(1 + s^2) - 1) / s - asinh(s) = s
/// sum_m g_m s^2m, |s| < 1: binom(1/2, m + 1) less asinh's (-1)^m (2m)! / (4^m m!^2 (2m +
/// 1)), by their ratios' recurrences in two floats (when the kernel is built).
fn ik_exponent_coefficients() -> Vec<(f64, f64)> {
    // binom(1/2, k) = prod_{j<k} (1/2 - j) / (j + 1), asinh's a_m = a_m-1 (-(2m-1)^2) / (2m (2m+1)).
    let mut binom = (0.5, 0.0); // binom(1/2, 1)
    let mut asinh = (1.0, 0.0); // (2m)! / (4^m m!^2) with its sign, m = 0
    let mut g = Vec::with_capacity(IK_TERMS);
    for m in 0..IK_TERMS {
        let mf = m as f64;
        let a = dd_scale(asinh.0, asinh.1, 2.0 * mf + 1.0, true);
        // Knuth's two-sum of binom - a, then the low parts.
        let s = binom.0 - a.0;
        let back = s - binom.0;
        let lo = (binom.0 - (s - back)) + (-a.0 - back) + binom.1 - a.1;
        let t = s + lo;
        g.push((t, lo - (t - s)));
        // binom(1/2, m + 2) = binom(1/2, m + 1) (1/2 - (m + 1)) / (m + 2).
        binom = dd_scale(binom.0, binom.1, 2.0 * mf + 1.0, false);
        binom = dd_scale(-binom.0, -binom.1, 2.0 * mf + 4.0, true);
        // (2m+2)! / (4^(m+1) (m+1)!^2) = that of m times (2m + 1) / (2m + 2), sign flipped.
        asinh = dd_scale(asinh.0, asinh.1, 2.0 * mf + 1.0, false);
        asinh = dd_scale(-asinh.0, -asinh.1, 2.0 * mf + 2.0, true);
    }
    g
}

/// The exponent series' length: s^2 <= 1/4, so 0.25^40 ~ 1e-24 relative.
const IK_TERMS: usize = 40;

/// (ive(v, x), kve(v, x)) by Debye's expansions (DLMF 10.41.3, 10.41.4) for large v > 0,
/// x > 0, with the same u_k as J's: w = sqrt(x^2 + v^2), p = v / w <= 1, T_k = (u_k(p) /
/// p^k) / w^k; ive = e^E / sqrt(2 pi w) sum_k T_k and kve = e^-E sqrt(pi / (2 w)) sum_k
/// (-1)^k T_k, E = v eta - x = (w - x) - v asinh(v / x). The terms fall like C_k / v^k
/// (p <= 1: no turning point), so TERMS of them reach the unit roundoff for v >= 1 / MAX_Z.
///
/// E is some hundreds where the results neither underflow nor overflow and must be right to
/// an ulp of 1: for s = v / x <= 1/2 it is written as (v^2 / x) sum_m g_m s^2m in two
/// floats; above (x < 2 v), E <= -0.245 v, which for the orders this serves (v >= 3200, 500
/// in f32) is past the exponential's range either way, and E is plain arithmetic.
///
/// kve comes times e^k_shift (the shift in its exponent, so that a K scaled down to keep
/// I's reflection term finite does not overflow first).
pub(super) fn debye_ik(f: &mut F, v: &Value, x: &Value, k_shift: f64) -> (Value, Value) {
    let ty = f.ty;
    if ty == ScalarType::F32 && widen_f32() {
        let vw = f.b.cast(Cast::ExtF, v, ScalarType::F64);
        let xw = f.b.cast(Cast::ExtF, x, ScalarType::F64);
        let (i, k) = debye_ik_in(&mut F { b: f.b, ty: ScalarType::F64 }, &vw, &xw, k_shift);
        return (f.b.cast(Cast::TruncF, &i, ty), f.b.cast(Cast::TruncF, &k, ty));
    }
    debye_ik_in(f, v, x, k_shift)
}

fn debye_ik_in(f: &mut F, v: &Value, x: &Value, k_shift: f64) -> (Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    // w = max(v, x) sqrt(1 + (min / max)^2): no overflow for huge arguments.
    let s = f.div(v, x);
    let big = f.b.arith(Arith::MaximumF, v, x);
    let small = f.b.arith(Arith::MinimumF, v, x);
    let t = f.div(&small, &big);
    let tt = f.mul(&t, &t);
    let root = f.add(&one, &tt);
    let root = f.sqrt(&root);
    let w = f.mul(&big, &root);
    let p = f.div(v, &w);
    let q = f.mul(&p, &p);
    let r = f.div(&one, &w);
    let mut plus = zero.clone();
    let mut minus = zero.clone();
    let mut rk = one.clone();
    for (k, c) in u_coefficients().iter().enumerate() {
        let inner: Vec<f64> = c.iter().skip(k).step_by(2).copied().collect();
        let t = f.poly(&q, &inner, &inner);
        let t = f.mul(&t, &rk);
        plus = f.add(&plus, &t);
        minus = if k % 2 == 0 { f.add(&minus, &t) } else { f.sub(&minus, &t) };
        rk = f.mul(&rk, &r);
    }
    // E for s <= 1/2 in two floats: (v^2 / x) G(s^2).
    let (vv, vv_lo) = f.two_prod(v, v);
    let (vx, vx_lo) = f.div_double(&vv, Some(&vv_lo), x, &zero);
    let (s2, s2_lo) = f.div_double(&vx, Some(&vx_lo), x, &zero);
    let (g, g_lo) = dd_series(f, (&s2, &s2_lo), &ik_exponent_coefficients());
    let (e_ser, e_ser_lo) = dd_mul(f, (&vx, &vx_lo), (&g, &g_lo));
    // Above: (w - x) - v log((v + w) / x), w - x = v^2 / (w + x).
    let wx = f.add(&w, x);
    let gap = f.div(&vv, &wx);
    let vw = f.add(v, &w);
    let ratio = f.div(&vw, x);
    let l = f.log(&ratio);
    let vl = f.mul(v, &l);
    let e_plain = f.sub(&gap, &vl);
    let near = f.cmp(CmpF::Ole, &s, &half);
    let e = f.sel(&near, &e_ser, &e_plain);
    let e_lo = f.sel(&near, &e_ser_lo, &zero);
    let minus_e = f.neg(&e);
    let minus_e_lo = f.neg(&e_lo);
    let shift = f.c(k_shift);
    let (minus_e, shift_lo) = f.two_sum(&minus_e, &shift);
    let minus_e_lo = f.add(&minus_e_lo, &shift_lo);
    let (up, down) = if f.f64() {
        (exp_double(f.b, &e, &e_lo), exp_double(f.b, &minus_e, &minus_e_lo))
    } else {
        (f.exp(&e), f.exp(&minus_e))
    };
    let two_pi = f.c(2.0 * std::f64::consts::PI);
    let two_pi_w = f.mul(&two_pi, &w);
    let root_i = f.sqrt(&two_pi_w);
    let i = f.div(&up, &root_i);
    let i = f.mul(&i, &plus);
    let pi_2 = f.c(std::f64::consts::FRAC_PI_2);
    let k_sq = f.div(&pi_2, &w);
    let root_k = f.sqrt(&k_sq);
    let k = f.mul(&down, &root_k);
    let k = f.mul(&k, &minus);
    (i, k)
}
