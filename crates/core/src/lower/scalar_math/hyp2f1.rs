//! The Gauss hypergeometric function hyp2f1(a, b; c; z) for real arguments (PyTensor's
//! `Hyp2F1`, whose reference is scipy.special.hyp2f1).
//!
//! Written from Abramowitz & Stegun ch. 15 and DLMF 15.2, 15.8. Every element evaluates a
//! few candidate forms, each with an estimate of its own rounding error, and keeps the
//! one with the smallest (as selects: a form that does not apply gets stand-in arguments
//! on which its loops stop at once):
//!
//! - the Maclaurin series in z (`series`), where -1 < z <= 0.999: `scf.while`, Kahan's
//!   compensated sum, stopped when the next terms cannot change it (the ratio of terms
//!   below 1 and the term below eps |sum| (1 - ratio)), after the terms' signs have settled
//!   (k past -a, -b, -c). The error estimate is sum |t_k| sqrt(5 k) / |sum|: cancellation,
//!   and the rounding of the terms' running products.
//! - for 1/2 <= z < 1 the connection formula in 1 - z (A&S 15.3.6, DLMF 15.8.4): two series
//!   times gamma functions when d = c - a - b is not an integer; for integer d the limit
//!   form with psi (A&S 15.3.10, 15.3.11; d < 0 first through Euler's transformation
//!   F = (1-z)^d F(c-a, c-b; c; z)), with psi's values carried along by their recurrence;
//!   also for d within NEAR_INTEGER_D of an integer, where the fractional form's two terms
//!   cancel (decimal parameters: 1.2 - (-8.3) - 2.5 = 7 + 7e-16), Gamma(m) there corrected
//!   to first order in d - m.
//!   d is carried as two doubles: (1-z)^d rounds no more than the power itself although
//!   |d log(1-z)| is large near z = 1; the gamma functions of rounded differences (c - a,
//!   c - b, d) get their first-order correction lo psi(x).
//! - for z < 0 Pfaff's transformations F = (1-z)^-a F(a, c-b; c; w) and (1-z)^-b F(b, c-a;
//!   c; w), w = z/(z-1) in (0, 1): each by the two forms above, in w and 1 - w = 1/(1-z),
//!   so every z < 0 is reached, z -> -inf included. (1-z)^-a is C's pow of the
//!   exactly split 1 - z = hi + lo, hi^-a (1 - a lo/hi).
//! - the recurrence in a (or b) of F(a, b; c; z) and of Pfaff's F(a, c-b; c; w)
//!   (`recurrence`): upwards from a - round(a - c) where a exceeds c by 2 or more,
//!   downwards from a - round(a) where a is below -3/2, where the series' terms alternate.
//! - where c - a or c - b is a non-positive integer, Euler's (1-z)^d F(c-a, c-b; c; z), a
//!   polynomial times a power (the other forms of a polynomial F cancel near its zeros).
//!
//! Cost: the kernel is scalar code (its loops), so each form runs under an `scf.if` only
//! where it applies, the series in z or w from 1/2 on (50 to thousands of terms) only where
//! the connection formula's own estimate is above 10 eps, and Pfaff's series only where
//! the series in z's is (from w = 0.9 on, only where the connection's estimate is above 40
//! and only the faster form: `W_NEAR`). The gamma and psi functions of arguments in (-19,
//! 20) take straight-line forms (`gamma_fast`, `rgamma`, `psi_rough`: products of up to
//! 19 factors, the reflection formula for negative arguments), not the vector code of
//! `gamma` and `psi`. With Pfaff's series first on (-1, -1/2) (`PFAFF_FIRST`), on
//! accuracy_cases' groups (/work/notes/s30/hyp.py, float64, 10,000 points each): Pfaff's
//! integer d' (b - a an integer, z <= -1) 46.0 -> 21.5 ms (NUMBA 14.0), z = -10^[0, 6]
//! 35.3 -> 15.4 ms (NUMBA 5.5), z in (-1, 1) 38.1 -> 29.2 (NUMBA 11.7), all groups 1.08x ->
//! 0.72x NUMBA's time; accuracy.py -n 20000: max 3.15e4 ULP, mean 6.98, both.
//!
//! A polynomial (a or b a non-positive integer) is also summed term by term for every
//! finite z, as scipy does (the forms above, where they apply, can do better: the sum
//! cancels). Special values follow scipy (pytensor 3.0.7's reference for this Op, which
//! has no C code): 1 at z = 0 (nan parameters too) and for a = 0 or b = 0 with c != 0;
//! inf where c is a non-positive integer not preceded by the polynomial's end, unless c = a
//! or c = b with |z| < 1 (then (1-z)^-b or (1-z)^-a); at z = 1
//! Gauss's sum Gamma(c) Gamma(d) / (Gamma(c-a) Gamma(c-b)) for d > 0, inf otherwise; z > 1
//! (outside the real function's domain) inf, except polynomials and, for an integer
//! d <= -1, Euler's (1-z)^d times a polynomial in c-a or c-b; z = -inf 0 where a, b > 0;
//! nan with any nan otherwise.
//!
//! Known limits (measured in benchmarks/accuracy.py): the forms above all cancel where a
//! and b exceed c with z < 0, the recurrence too where its error estimate is no better
//! (up to 2.8e5 ULP); c - a - b near but not at an integer loses the digits of the gamma
//! functions' near-poles; the series stop at 10,000 terms (nan past that), the finite sum of the
//! integer case too (d up to 10,000).

use super::beta::branch;
use super::exp_log::log1p;
use super::gamma::{gamma, gamma1p_below, psi, psi_positive, sin_cos_pi};
use super::F;
use crate::lower::scalar::float_pow;
use crate::mlir::{Arith, CmpF, ScalarType, Value};

/// Below this z (from 1/2) the series in z is tried before the connection formula.
const SERIES_FIRST_BELOW: f64 = 0.75;
/// There the connection formula runs only where the series' estimate is above this (then
/// the better estimate wins), lower than CONNECTION_GOOD as measured: of the points where
/// scipy is within 8 ULP (/work/notes/s33/cmp.py on accuracy_cases' 43,015 and the decimal
/// set's 15,244), ours above 8: 10 -> 226 and 308,
/// 8 -> 211 and 292, 7 -> 206 and 290, 6 or 4 -> 205 and 290; the cost over z in (1/2, 3/4)
/// (/work/notes/s36/hspeed.py, NUMBA 0.245 us an element): 0.69, 0.75, 0.81, 0.84 us.
const SERIES_EARLY_GOOD: f64 = 7.0;
/// The unit roundoff per type.
const EPS: (f64, f64) = (1.1102230246251565e-16, 5.960464477539063e-08);
/// The loops' iteration cap.
const MAX_ITER: f64 = 10000.0;
/// The series in z is tried up to here (at 0.999 about 40,000 / (1 - z) terms would be
/// needed for the worst exponents; the cap stops it, and the connection takes over).
const SERIES_MAX_X: f64 = 0.999;
/// The connection formula is tried from here (its series in 1 - z converge like 2^-k).
const CONNECTION_MIN_X: f64 = 0.5;
/// The weight of the gamma functions' rounding (a few ulps each) in the connection
/// formula's error estimate.
const GAMMA_ULPS: f64 = 4.0;
/// A term's relative error after k steps of five roundings each is a random walk of
/// about sqrt(5 k) / 2 roundings, and neighbouring terms share it: the series' estimate
/// sum |t_k| sqrt(k) / |sum| times sqrt(5) (hyp2f1(5.64, 8.80, 10.97, 0.930): the series
/// estimated 6.8 had 19 ULP, the connection formula estimated 9.6 had 1).
const SERIES_ROUNDING: f64 = 2.2;
/// An error estimate (in eps) good enough to skip the other forms: the series in z or w
/// (from x = 1/2, where the connection formula applies, 50 to thousands of terms) where the
/// connection's estimate is at most this, Pfaff's series where the series in z's is. The
/// connection's estimate is at least GAMMA_ULPS + SERIES_ROUNDING = 6.2 (at 5 no lane of
/// the fractional case ever skipped the series: z in (-300, -10] cost 30 us an element,
/// 20x NUMBA); a series' own estimate, sqrt(5 k) weighted over its terms, is rarely below
/// it there anyway (on 2,000 points: the same max error, a few points 3-6 ULP better or
/// worse).
const CONNECTION_GOOD: f64 = 10.0;
/// From w = W_NEAR on (z <= -9), where Pfaff's series need hundreds to thousands of terms
/// (about 36 / (1 - w)) and their own estimates are 2.2 sqrt(k) weighted over those terms,
/// they run only where the connection formulas' estimate is above W_SERIES_AFTER (not
/// CONNECTION_GOOD), and only the form whose terms fall faster, F(e, c - o; c; w) with e =
/// min(a, b) (its terms go like k^(e - o - 1) w^k). accuracy_cases' z = -10^[0, 6] group,
/// float64, 10,000 points (/work/notes/s32/sub.py): -1000 < z <= -10 7.6 -> 2.5 us an
/// element (NUMBA 0.6); hdiff of 60,000 points against mpmath: 26 + 8 points moved by more
/// than 16 ULP, mostly better (the series' low estimates had been picked over better
/// connection formulas: 40 -> 1.7 ULP at (1.76, 1.51, 12.4, -259.5)), the worst now 82
/// ULP (scipy's 149) at (3.14, 4.15, 0.70, -25.1), was 8.2.
const W_NEAR: f64 = 0.9;
/// Below this z (down to -1) Pfaff's two series in w = z / (z - 1) (1/3 < w < 1/2, 50
/// terms at most) run before the series in z (up to thousands of terms near z = -1), which
/// runs only where the better of theirs has an estimate above PFAFF_GOOD (CONNECTION_GOOD
/// kept estimates of 5 to 10 that were 7 to 13 ULP off where the series in z had been
/// within 1 ULP: hyp2f1(8.77, -2.58, 16.63, -0.9957) 0.7 -> 12.7 ULP; with 4, of 60,000
/// accuracy_cases points none moved by more than 4.4 ULP). accuracy_cases' z in (-1,
/// -0.75], float64 (/work/notes/s32/sub2.py): 3.6 -> 1.6 us an element (NUMBA 0.24).
const PFAFF_FIRST: f64 = -0.5;
const PFAFF_GOOD: f64 = 4.0;
const W_SERIES_AFTER: f64 = 40.0;
/// Gamma(v) takes straight-line products for 0 < v < PRODUCT_LIMIT (up to PRODUCT_LIMIT -
/// 1 factors) and, by the reflection formula from 1 - v, for 1 - PRODUCT_LIMIT < v < 0,
/// where `psi_rough` reflects too.
const PRODUCT_LIMIT: usize = 20;
/// Where d = c - a - b is this close to an integer m (relative to max(1, |m|)) the
/// connection formula takes its integer form at m: the two terms of the fractional form
/// are each about 1/(d - m) times F and cancel (hyp2f1(-8.3, 2.5, 1.2, 0.95), d = 7 + 7e-16
/// as the decimals round: 1.3e24 ULP off; (0.9, -9.4, 2.5, 0.99998): nan), while the
/// integer form is off by about (d - m) d/dd log F, part of its error estimate. cephes
/// switches at 1e-13; at 1e-9 both forms lose about 1e-8 relative.
const NEAR_INTEGER_D: f64 = 1e-9;
/// The recurrences of F(a, b; c; z) run only where the best estimate so far is above this:
/// from CONNECTION_GOOD (10) on they took accuracy_cases' groups (/work/notes/s30/hyp.py,
/// float64) from 118 to 154 ms (NUMBA 160: c < 1 13 -> 29 ms, z in (-1, 1) 30 -> 43 ms);
/// at 40, 143 ms with the same errors but at 3 of 90,000 points (by 4 to 13 ULP either
/// way); at 100 worse at 39 points (by up to 30 ULP). With the estimates that follow u and
/// v, at 10 instead: 141 -> 168 ms (NUMBA 158, 162), points where scipy is within 8 ULP
/// and ours above (/work/notes/s33/cmp.py) 208 -> 206 and 242 -> 231 only.
const RECURRENCE_AFTER: f64 = 40.0;
/// A recurrence step's rounding, in eps of the sizes of the products it sums (two
/// divisions, two products and a sum behind them).
const RECURRENCE_ROUNDING: f64 = 4.0;
/// psi(1) = -Euler's constant.
const PSI_ONE: f64 = -0.5772156649015329;




fn max(f: &mut F, a: &Value, c: &Value) -> Value {
    f.b.arith(Arith::MaximumF, a, c)
}

fn is_finite(f: &mut F, v: &Value) -> Value {
    let inf = f.c(f64::INFINITY);
    let a = f.abs(v);
    f.cmp(CmpF::Olt, &a, &inf)
}

/// Whether the integer v is odd (the sign of (-1)^v).
fn odd(f: &mut F, v: &Value) -> Value {
    let half = f.c(0.5);
    let half_v = f.mul(v, &half);
    let whole = f.floor(&half_v);
    f.cmp(CmpF::Une, &whole, &half_v)
}

/// Whether v is 0 or a negative integer (the poles of Gamma, the ends of polynomials).
fn non_positive_integer(f: &mut F, v: &Value) -> Value {
    let zero = f.c(0.0);
    let fl = f.floor(v);
    let integral = f.cmp(CmpF::Oeq, &fl, v);
    let non_positive = f.cmp(CmpF::Ole, v, &zero);
    f.and(&integral, &non_positive)
}

/// Gamma(v): for 0 < v < 20 by gamma(1 + (v - 1)) (v - 1 exact from 1 on) or gamma(1 +
/// v) / v, straight-line products (`gamma1p_below`), for -19 < v < 0 by the reflection
/// pi / (sin(pi v) Gamma(1 - v)) with Gamma(1 - v) = gamma(1 + (-v)) the same way, each
/// under an `scf.if`: the kernel is scalar code (its loops), and `gamma` computes its
/// Stirling form and reflection on every lane (it is written for vector code).
fn gamma_fast(f: &mut F, v: &Value) -> Value {
    let v2 = v.clone();
    by_range(f, v, |g| gamma_below_20(g, &v2), |g| {
        let (sin, g1) = reflected(g, &v2);
        let pi = g.c(std::f64::consts::PI);
        let den = g.mul(&sin, &g1);
        g.div(&pi, &den)
    }, |g| gamma(g.b, &v2))
}

/// Gamma(v) for 0 < v < 20 (see `gamma_fast`).
fn gamma_below_20(f: &mut F, v: &Value) -> Value {
    let one = f.c(1.0);
    let big = f.cmp(CmpF::Oge, v, &one);
    let vm1 = f.sub(v, &one);
    let arg = f.sel(&big, &vm1, v);
    let r = gamma1p_below(f, &arg, PRODUCT_LIMIT);
    let small = f.div(&r, v);
    f.sel(&big, &r, &small)
}

/// `positive`'s value for 0 < v < 20, `negative`'s for -19 < v < 0, `other`'s elsewhere,
/// each in its own branch.
fn by_range(
    f: &mut F,
    v: &Value,
    positive: impl FnOnce(&mut F) -> Value,
    negative: impl FnOnce(&mut F) -> Value,
    other: impl FnOnce(&mut F) -> Value,
) -> Value {
    let zero = f.c(0.0);
    let limit = f.c(PRODUCT_LIMIT as f64);
    let low = f.c(1.0 - PRODUCT_LIMIT as f64);
    let pos = f.cmp(CmpF::Ogt, v, &zero);
    let below = f.cmp(CmpF::Olt, v, &limit);
    let easy = f.and(&pos, &below);
    let neg = f.cmp(CmpF::Olt, v, &zero);
    let above = f.cmp(CmpF::Ogt, v, &low);
    let mirrored = f.and(&neg, &above);
    branch(f, &easy, positive, |g| branch(g, &mirrored, negative, other))
}

/// (sin(pi v), Gamma(1 - v)) for -19 < v < 0, the parts of the reflection formula.
fn reflected(f: &mut F, v: &Value) -> (Value, Value) {
    let (sin, _) = sin_cos_pi(f, v);
    let minus_v = f.neg(v);
    (sin, gamma1p_below(f, &minus_v, PRODUCT_LIMIT))
}

/// psi(v): `psi_positive` alone for v > 0 (see `gamma_fast`).
fn psi_fast(f: &mut F, v: &Value) -> Value {
    let zero = f.c(0.0);
    let pos = f.cmp(CmpF::Ogt, v, &zero);
    let v2 = v.clone();
    branch(f, &pos, |g| psi_positive(g, &v2), |g| psi(g.b, &v2))
}

/// psi(v) for the first-order corrections of the gamma functions of rounded arguments
/// (`first_order`), which need it only to about 1/(8 |v|) absolute: as `psi_fast`, but for
/// -19 < v < 0 off the poles by the reflection psi(1 - v) - pi cos(pi v) / sin(pi v),
/// whose absolute error is that of its larger term (`psi`'s full code keeps psi's relative
/// accuracy near its negative roots, which the sums of psi values in the integer case
/// need: with the reflection there hyp2f1(2.875, -2.125, 0.75, 0.99997) went from 6.3e3
/// to 1.9e4 ULP).
fn psi_rough(f: &mut F, v: &Value) -> Value {
    let zero = f.c(0.0);
    let low = f.c(1.0 - PRODUCT_LIMIT as f64);
    let pos = f.cmp(CmpF::Ogt, v, &zero);
    let above = f.cmp(CmpF::Ogt, v, &low);
    let pole = non_positive_integer(f, v);
    let regular = f.not(&pole);
    let mirrored = f.and(&above, &regular);
    let v2 = v.clone();
    branch(f, &pos, |g| psi_positive(g, &v2), |g| {
        branch(g, &mirrored, |h| {
            let one = h.c(1.0);
            let w = h.sub(&one, &v2);
            let p = psi_positive(h, &w);
            let (sin, cos) = sin_cos_pi(h, &v2);
            let pi = h.c(std::f64::consts::PI);
            let cot = h.div(&cos, &sin);
            let t = h.mul(&pi, &cot);
            h.sub(&p, &t)
        }, |h| psi(h.b, &v2))
    })
}

/// 1 / Gamma(v), 0 at the poles: for -19 < v < 0 sin(pi v) Gamma(1 - v) / pi (see
/// `gamma_fast`), exactly 0 at the integers.
fn rgamma(f: &mut F, v: &Value) -> Value {
    let v2 = v.clone();
    by_range(f, v, |g| {
        let r = gamma_below_20(g, &v2);
        let one = g.c(1.0);
        g.div(&one, &r)
    }, |g| {
        let (sin, g1) = reflected(g, &v2);
        let inv_pi = g.c(std::f64::consts::FRAC_1_PI);
        let p = g.mul(&sin, &g1);
        g.mul(&p, &inv_pi)
    }, |g| {
        let r = gamma(g.b, &v2);
        let one = g.c(1.0);
        let r = g.div(&one, &r);
        let pole = non_positive_integer(g, &v2);
        let zero = g.c(0.0);
        g.sel(&pole, &zero, &r)
    })
}

/// x^y for x > 0: C's pow in f64 (within about 1e-16 |y| relative), exp(y log x) where
/// the working type is f32 (Vulkan, Metal).
fn pow(f: &mut F, x: &Value, y: &Value) -> Value {
    if f.f64() {
        return float_pow(f.b, x, y);
    }
    let l = f.log(x);
    let p = f.mul(y, &l);
    f.exp(&p)
}

/// The base s of the connection formula's powers, as s = h^e (1 + lo/h)^e with e = 1
/// (s = h exactly, lo = 0) or e = -1 (s = 1 / (1 - z), h + lo = 1 - z exactly): run-time
/// values, so that one connection serves z in [1/2, 1] and Pfaff's w alike.
struct Base {
    h: Value,
    lo: Value,
    e: Value,
}

/// s^y = h^(e y) (1 + e y lo / h) (see `Base`).
fn power(f: &mut F, base: &Base, y: &Value) -> Value {
    let ey = f.mul(&base.e, y);
    let p = pow(f, &base.h, &ey);
    let one = f.c(1.0);
    let ratio = f.div(&base.lo, &base.h);
    let corr = f.fma(&ey, &ratio, &one);
    f.mul(&p, &corr)
}

/// A result with its estimated relative error (in units of eps; inf or nan: unusable)
/// and whether its loops ended by convergence.
struct Estimate {
    value: Value,
    error: Value,
    ok: Value,
}

/// The Maclaurin series sum_k (a)_k (b)_k / ((c)_k k!) x^k (see the module comment).
fn series(f: &mut F, a: &Value, b: &Value, c: &Value, x: &Value) -> Estimate {
    let zero = f.c(0.0);
    series_lo(f, a, b, (c, &zero), x)
}

/// `series` with c = c_hi + c_lo in two floats: each c + k is (c_hi + k) + c_lo, exact to
/// twice the precision where c_hi + k is (Sterbenz: k near -c), so a factor c + k near 0
/// keeps its relative accuracy.
fn series_lo(f: &mut F, a: &Value, b: &Value, (c, c_lo): (&Value, &Value), x: &Value) -> Estimate {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let two = f.c(2.0);
    // Past k_min, (a+k), (b+k) and (c+k) keep their signs.
    let minus_a = f.neg(a);
    let minus_b = f.neg(b);
    let minus_c = f.neg(c);
    let k_min = max(f, &zero, &minus_a);
    let k_min = max(f, &k_min, &minus_b);
    let k_min = max(f, &k_min, &minus_c);
    let ty = f.ty;
    let (a_in, b_in, c_in, c_lo_in, x_in) = (a.clone(), b.clone(), c.clone(), c_lo.clone(), x.clone());
    // (k, term, sum, compensation, sum of |term| sqrt(k), |ratio|)
    let done = f.b.scf_while(
        &[zero.clone(), one.clone(), one.clone(), zero.clone(), one.clone(), two],
        |cb, v| {
            let mut g = F { b: cb, ty };
            let (k, term, sum, ratio) = (&v[0], &v[1], &v[2], &v[5]);
            let zero = g.c(0.0);
            let one = g.c(1.0);
            let eps = g.k(EPS);
            let limit = g.c(MAX_ITER);
            let settled = g.cmp(CmpF::Ogt, k, &k_min);
            let shrinking = g.cmp(CmpF::Olt, ratio, &one);
            let abs_sum = g.abs(sum);
            let room = g.sub(&one, ratio);
            let small = g.mul(&abs_sum, &eps);
            let small = g.mul(&small, &room);
            let abs_term = g.abs(term);
            let negligible = g.cmp(CmpF::Ole, &abs_term, &small);
            let converged = g.and(&settled, &shrinking);
            let converged = g.and(&converged, &negligible);
            let ended = g.cmp(CmpF::Oeq, term, &zero);
            let stop = g.or(&converged, &ended);
            // nan or inf (a pole of c, an overflow): no use going on.
            let finite = is_finite(&mut g, sum);
            let broken = g.not(&finite);
            let stop = g.or(&stop, &broken);
            let go_on = g.not(&stop);
            let under = g.cmp(CmpF::Olt, k, &limit);
            g.and(&go_on, &under)
        },
        |lb, v| {
            let mut g = F { b: lb, ty };
            let (k, term, sum, comp, sabs) = (&v[0], &v[1], &v[2], &v[3], &v[4]);
            let one = g.c(1.0);
            let ak = g.add(&a_in, k);
            let bk = g.add(&b_in, k);
            let ck = g.add(&c_in, k);
            let ck = g.add(&ck, &c_lo_in);
            let k1 = g.add(k, &one);
            let num = g.mul(&ak, &bk);
            let den = g.mul(&ck, &k1);
            let r = g.div(&num, &den);
            let r = g.mul(&r, &x_in);
            let term = g.mul(term, &r);
            // Kahan's compensated sum.
            let y = g.sub(&term, comp);
            let t = g.add(sum, &y);
            let grown = g.sub(&t, sum);
            let comp = g.sub(&grown, &y);
            let abs_term = g.abs(&term);
            let root = g.sqrt(&k1);
            let sabs = g.fma(&abs_term, &root, sabs);
            let ratio = g.abs(&r);
            vec![k1, term, t, comp, sabs, ratio]
        },
    );
    let (k, sum, sabs) = (&done[0], &done[2], &done[4]);
    let limit = f.c(MAX_ITER);
    let under = f.cmp(CmpF::Olt, k, &limit);
    let finite = is_finite(f, sum);
    let ok = f.and(&under, &finite);
    let abs_sum = f.abs(sum);
    let error = f.div(sabs, &abs_sum);
    let weight = f.c(SERIES_ROUNDING);
    let error = f.mul(&error, &weight);
    let inf = f.c(f64::INFINITY);
    let error = f.sel(&ok, &error, &inf);
    Estimate { value: sum.clone(), error, ok }
}

/// The parameters of one F(a, b; c; x) evaluation: c - a and c - b as the caller knows them
/// best (exactly, for Pfaff's forms), and d = c - a - b as two doubles; b, c - a and c - b
/// with their rounding errors (a is exact), for the gamma functions of the connection
/// formula, whose relative error is psi(x) times the error of x: 20 ULP for x = 17 alone.
struct Params<'v> {
    a: &'v Value,
    b: &'v Value,
    c: &'v Value,
    ca: &'v Value,
    cb: &'v Value,
    d_hi: &'v Value,
    d_lo: &'v Value,
    b_lo: &'v Value,
    ca_lo: &'v Value,
    cb_lo: &'v Value,
}

/// 1 - lo psi(x) (1 + lo psi(x) with `plus`): Gamma(x + lo) / Gamma(x) or its inverse to
/// first order; 1 where lo = 0 (psi may be infinite there).
fn first_order(f: &mut F, psi_x: &Value, lo: &Value, plus: bool) -> Value {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let t = f.mul(lo, psi_x);
    let exact = f.cmp(CmpF::Oeq, lo, &zero);
    let t = f.sel(&exact, &zero, &t);
    if plus {
        f.add(&one, &t)
    } else {
        f.sub(&one, &t)
    }
}

/// (lo psi(x))^2 / eps: the relative size, in eps, of what `first_order` leaves out (the
/// second-order term lo^2 (psi(x)^2 + psi'(x)) / 2, and psi' is about psi^2 near the
/// poles, where it matters); 0 where lo = 0. Near a pole lo psi(x) is not small: d = c -
/// a - b within a few ulps of an integer (hyp2f1(-8.3, 2.5, 1.2, 0.95), d = 7 + 7e-16,
/// rounded to d_hi = 7 + 9e-16 and d_lo = -2e-16), where both terms of the connection
/// formula are about 1/(d - 7) times F and the corrections of Gamma(d) and Gamma(-d) are
/// 25% off: the estimate (|u| + |v|) / |u + v| then measured a garbage sum and let it win
/// (a value of -5.5e5 for 0.002; such d now take the integer form, NEAR_INTEGER_D, but d
/// further off, up to about 1e-3, meets the same).
fn second_order(f: &mut F, psi_x: &Value, lo: &Value) -> Value {
    let zero = f.c(0.0);
    let t = f.mul(lo, psi_x);
    let t = f.mul(&t, &t);
    let eps = f.k(EPS);
    let t = f.div(&t, &eps);
    let exact = f.cmp(CmpF::Oeq, lo, &zero);
    f.sel(&exact, &zero, &t)
}

/// (1 / Gamma(hi + lo), what its first order leaves out (`second_order`)): 1/Gamma(hi)
/// (1 - lo psi(hi)), but where hi is a pole -n and lo != 0 (-n + lo: the difference of two
/// decimals rounded onto an integer, c - a = -4 - 1.7e-16 in hyp2f1(4.45, 3.15, 0.45, z))
/// (-1)^n n! lo, the first term of 1/Gamma's Taylor series there (relative error about
/// lo H_n), where the correction through psi would be 0 times inf.
fn rgamma_split(f: &mut F, hi: &Value, lo: &Value) -> (Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let r = rgamma(f, hi);
    let psi_hi = psi_rough(f, hi);
    let corr = first_order(f, &psi_hi, lo, false);
    let r = f.mul(&r, &corr);
    let q = second_order(f, &psi_hi, lo);
    let pole = non_positive_integer(f, hi);
    let off = f.cmp(CmpF::Une, lo, &zero);
    let pole = f.and(&pole, &off);
    let n1 = f.sub(&one, hi);
    let fact = branch(f, &pole, |g| gamma_fast(g, &n1), |g| g.c(1.0));
    let slope = f.mul(&fact, lo);
    let n = f.neg(hi);
    let odd = odd(f, &n);
    let minus = f.neg(&slope);
    let slope = f.sel(&odd, &minus, &slope);
    (f.sel(&pole, &slope, &r), f.sel(&pole, &zero, &q))
}

/// F(a, b; c; 1 - s) for 0 <= s <= 1/2 by the connection formula (see the module comment);
/// also Gauss's sum Gamma(c) Gamma(d) / (Gamma(c-a) Gamma(c-b)), its value at s = 0.
fn connection(f: &mut F, p: &Params, s: &Value, log_s: &Value, base: &Base) -> (Estimate, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let (a, b, c, ca, cb, d, d_lo) = (p.a, p.b, p.c, p.ca, p.cb, p.d_hi, p.d_lo);
    // d within NEAR_INTEGER_D of an integer m takes the integer form at m (see there).
    let d_round = f.round(d);
    let delta = f.sub(d, &d_round);
    let delta = f.add(&delta, d_lo);
    let abs_delta = f.abs(&delta);
    let abs_round = f.abs(&d_round);
    let scale = max(f, &one, &abs_round);
    let near = f.c(NEAR_INTEGER_D);
    let near = f.mul(&near, &scale);
    let integral = f.cmp(CmpF::Ole, &abs_delta, &near);
    let fractional = f.not(&integral);
    let gamma_weight = f.c(GAMMA_ULPS);
    // The gamma functions both forms share.
    let g_c = gamma_fast(f, c);
    let g_d = gamma_fast(f, d);
    let minus_d = f.neg(d);
    let g_minus_d = gamma_fast(f, &minus_d);
    // 1/Gamma of a (exact), b, c - a and c - b (rounded: with their first-order
    // corrections), and Gamma(d), Gamma(-d) with theirs.
    let r_a = rgamma(f, a);
    let (r_b, q_b) = rgamma_split(f, b, p.b_lo);
    let (r_ca, q_ca) = rgamma_split(f, ca, p.ca_lo);
    let (r_cb, q_cb) = rgamma_split(f, cb, p.cb_lo);
    let psi_d = psi_rough(f, d);
    let psi_minus_d = psi_rough(f, &minus_d);
    let corr_d = first_order(f, &psi_d, d_lo, true);
    let minus_d_lo = f.neg(d_lo);
    let corr_minus_d = first_order(f, &psi_minus_d, &minus_d_lo, true);
    // What the first-order corrections leave out: of the 1/Gamma's (both forms), and of
    // Gamma(d) and Gamma(-d) (the fractional form's).
    let left_out = f.add(&q_b, &q_ca);
    let left_out = f.add(&left_out, &q_cb);
    let mut left_out_frac = left_out.clone();
    for psi_x in [&psi_d, &psi_minus_d] {
        let q = second_order(f, psi_x, d_lo);
        left_out_frac = f.add(&left_out_frac, &q);
    }
    let weight = f.add(&gamma_weight, &left_out);
    let weight_frac = f.add(&gamma_weight, &left_out_frac);
    let gauss = f.mul(&g_c, &g_d);
    let gauss = f.mul(&gauss, &r_ca);
    let gauss = f.mul(&gauss, &r_cb);
    let gauss = f.mul(&gauss, &corr_d);

    // d not an integer: Gamma(c) Gamma(d) / (Gamma(c-a) Gamma(c-b)) F(a, b; 1-d; s)
    // + s^d Gamma(c) Gamma(-d) / (Gamma(a) Gamma(b)) F(c-a, c-b; 1+d; s).
    let s_frac = f.sel(&fractional, s, &zero);
    // 1 - d and 1 + d in two floats (with d's low part): near an integer m > 0, the factor
    // 1 - d + (m - 1) = -(d - m) in s1's terms is small (for m < 0 likewise 1 + d - m - 1
    // in s2's), and its rounding would be the singular parts' relative error, which the two
    // terms no longer cancel (the gamma functions and s^d take d's low part):
    // hyp2f1(-0.00476, 2.7796, 12.775, 0.7758), d = 10.00017, 191 ULP.
    let minus_d = f.neg(d);
    let (one_minus_d, omd_lo) = f.two_sum(&one, &minus_d);
    let omd_lo = f.sub(&omd_lo, d_lo);
    let (one_plus_d, opd_lo) = f.two_sum(&one, d);
    let opd_lo = f.add(&opd_lo, d_lo);
    let s1 = series_lo(f, a, b, (&one_minus_d, &omd_lo), &s_frac);
    let s2 = series_lo(f, ca, cb, (&one_plus_d, &opd_lo), &s_frac);
    let u = f.mul(&gauss, &s1.value);
    let t2 = f.mul(&g_c, &g_minus_d);
    let t2 = f.mul(&t2, &r_a);
    let t2 = f.mul(&t2, &r_b);
    let t2 = f.mul(&t2, &corr_minus_d);
    let s_d = power(f, base, d);
    // The low part of d: s^(d_hi + d_lo) = s^d_hi (1 + d_lo log s).
    let d_corr = f.mul(d_lo, log_s);
    let d_corr = f.add(&one, &d_corr);
    let v = f.mul(&t2, &s_d);
    let v = f.mul(&v, &d_corr);
    let v = f.mul(&v, &s2.value);
    let frac_value = f.add(&u, &v);
    let abs_u = f.abs(&u);
    let abs_v = f.abs(&v);
    let both = f.add(&abs_u, &abs_v);
    let err = f.mul(&both, &weight_frac);
    let err = f.fma(&abs_u, &s1.error, &err);
    let err = f.fma(&abs_v, &s2.error, &err);
    let abs_r = f.abs(&frac_value);
    let frac_error = f.div(&err, &abs_r);
    let frac_ok = f.and(&s1.ok, &s2.ok);

    // d = m an integer, after Euler's transformation where d < 0 (a' = c-a, b' = c-b):
    // F = Gamma(m) Gamma(c) / (Gamma(a'+m) Gamma(b'+m)) sum_{n<m} (a')_n (b')_n /
    // (n! (1-m)_n) s^n - (-s)^m Gamma(c) / (Gamma(a') Gamma(b')) sum_n (a'+m)_n (b'+m)_n /
    // (n! (n+m)!) s^n (log s - psi(n+1) - psi(n+m+1) + psi(a'+n+m) + psi(b'+n+m)).
    // a' + m and b' + m are c - b and b, or a and c - a: every gamma function is one of
    // the above.
    let negative = f.cmp(CmpF::Olt, &d_round, &zero);
    let m = f.sel(&integral, &abs_round, &zero);
    let ap = f.sel(&negative, ca, a);
    let bp = f.sel(&negative, cb, b);
    let apm = f.sel(&negative, b, cb);
    let bpm = f.sel(&negative, a, ca);
    let r_ap = f.sel(&negative, &r_ca, &r_a);
    let r_bp = f.sel(&negative, &r_cb, &r_b);
    let r_apm = f.sel(&negative, &r_b, &r_cb);
    let r_bpm = f.sel(&negative, &r_a, &r_ca);
    // Gamma(m) of the integer m itself (Gamma(d) and Gamma(-d) are off it by delta).
    let m_or_one = max(f, &m, &one);
    let g_m = branch(f, &integral, |g| gamma_fast(g, &m_or_one), |g| g.c(1.0));
    // (1-z)^d with d's low part, as the fractional form's s^d.
    let euler = power(f, base, d);
    let euler_lo = f.mul(d_lo, log_s);
    let euler_lo = f.add(&one, &euler_lo);
    let euler = f.mul(&euler, &euler_lo);
    let euler = f.sel(&negative, &euler, &one);
    // The finite sum, n = 1 .. m-1 (term n from term n-1; none while m <= 1).
    let s_int = f.sel(&integral, s, &zero);
    let ty = f.ty;
    let (ap_in, bp_in, m_in, s_in) = (ap.clone(), bp.clone(), m.clone(), s_int.clone());
    let finite = f.b.scf_while(
        &[zero.clone(), one.clone(), one.clone(), one.clone()],
        |cb_, v| {
            let mut g = F { b: cb_, ty };
            let one = g.c(1.0);
            let last = g.sub(&m_in, &one);
            let n1 = g.add(&v[0], &one);
            let limit = g.c(MAX_ITER);
            let more = g.cmp(CmpF::Ole, &n1, &last);
            let under = g.cmp(CmpF::Olt, &v[0], &limit);
            g.and(&more, &under)
        },
        |lb, v| {
            let mut g = F { b: lb, ty };
            let (n, t, sum, sabs) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let an = g.add(&ap_in, n);
            let bn = g.add(&bp_in, n);
            let n1 = g.add(n, &one);
            let one_m = g.sub(&one, &m_in);
            let mn = g.add(&one_m, n);
            let num = g.mul(&an, &bn);
            let den = g.mul(&n1, &mn);
            let r = g.div(&num, &den);
            let r = g.mul(&r, &s_in);
            let t = g.mul(t, &r);
            let sum = g.add(sum, &t);
            let at = g.abs(&t);
            let sabs = g.add(sabs, &at);
            vec![n1, t, sum, sabs]
        },
    );
    let (fs, fs_abs) = (&finite[2], &finite[3]);
    let m1 = f.add(&m, &one);
    let psi_m1_early = branch(f, &integral, |g| psi_positive(g, &m1), |g| g.c(0.0));
    let g_fs = f.mul(&g_m, &g_c);
    let g_fs = f.mul(&g_fs, &r_apm);
    let g_fs = f.mul(&g_fs, &r_bpm);
    let has_finite = f.cmp(CmpF::Oge, &m, &one);
    // The finite sum's Gamma(m) stands for Gamma(d'), d' = |d| (c - a - b after Euler's
    // transformation) = m + delta_m, which its first order gives: Gamma(m) (1 + delta_m
    // psi(m)). Near z = 1 that term is F, and delta_m psi(m) its error uncorrected:
    // hyp2f1(-10.6, -11.2, 8.2, 0.99938), d = 30 - 1.8e-15, 28 ULP of its 52.
    let delta_m = f.neg(&delta);
    let delta_m = f.sel(&negative, &delta_m, &delta);
    let inv_m = f.div(&one, &m_or_one);
    let psi_m = f.sub(&psi_m1_early, &inv_m);
    let shift = f.mul(&delta_m, &psi_m);
    let shift = f.add(&one, &shift);
    let g_fs = f.mul(&g_fs, &shift);
    let fs = f.mul(fs, &g_fs);
    let fs = f.sel(&has_finite, &fs, &zero);
    let abs_g_fs = f.abs(&g_fs);
    let fs_abs = f.mul(fs_abs, &abs_g_fs);
    let fs_abs = f.sel(&has_finite, &fs_abs, &zero);
    // The logarithmic series: p_n = (a'+m)_n (b'+m)_n / (n! (n+m)!) s^n, p_0 = 1/m!.
    let m_fact = f.mul(&m, &g_m);
    let p0 = f.div(&one, &m_fact);
    let p0 = f.sel(&has_finite, &p0, &one);
    let p0 = f.sel(&integral, &p0, &zero);
    let psi_m1 = psi_m1_early.clone();
    let psi_m1_kept = psi_m1.clone();
    // psi(a' + m) and psi(b' + m) to full accuracy (not `psi_rough`), only where d is an
    // integer.
    let psi_apm = branch(f, &integral, |g| psi_fast(g, &apm), |g| g.c(0.0));
    let psi_bpm = branch(f, &integral, |g| psi_fast(g, &bpm), |g| g.c(0.0));
    let psi1 = f.c(PSI_ONE);
    let minus_apm = f.neg(&apm);
    let minus_bpm = f.neg(&bpm);
    let n_min = max(f, &zero, &minus_apm);
    let n_min = max(f, &n_min, &minus_bpm);
    let n_min = f.sel(&integral, &n_min, &zero);
    let (apm_in, bpm_in, m_in, s_in, log_s_in) = (apm.clone(), bpm.clone(), m.clone(), s_int.clone(), log_s.clone());
    let big = f.c(f64::INFINITY);
    // (n, p, psi(n+1), psi(n+m+1), psi(a'+m+n), psi(b'+m+n), sum, sum of |terms| sqrt(n+1), |last term|)
    let log_series = f.b.scf_while(
        &[zero.clone(), p0, psi1, psi_m1, psi_apm, psi_bpm, zero.clone(), zero.clone(), big],
        |cb_, v| {
            let mut g = F { b: cb_, ty };
            let (n, p, sum, last) = (&v[0], &v[1], &v[6], &v[8]);
            let half_eps = g.k(EPS);
            let half = g.c(0.5);
            let half_eps = g.mul(&half_eps, &half);
            let limit = g.c(MAX_ITER);
            let settled = g.cmp(CmpF::Ogt, n, &n_min);
            let abs_sum = g.abs(sum);
            let small = g.mul(&abs_sum, &half_eps);
            let abs_p = g.abs(p);
            let p_small = g.cmp(CmpF::Ole, &abs_p, &small);
            let last_small = g.cmp(CmpF::Ole, last, &small);
            let converged = g.and(&settled, &p_small);
            let converged = g.and(&converged, &last_small);
            let finite = is_finite(&mut g, sum);
            let broken = g.not(&finite);
            let stop = g.or(&converged, &broken);
            let go_on = g.not(&stop);
            let under = g.cmp(CmpF::Olt, n, &limit);
            g.and(&go_on, &under)
        },
        |lb, v| {
            let mut g = F { b: lb, ty };
            let (n, p, p1, p2, p3, p4, sum, sabs) = (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
            let one = g.c(1.0);
            let bracket = g.sub(&log_s_in, p1);
            let bracket = g.sub(&bracket, p2);
            let bracket = g.add(&bracket, p3);
            let bracket = g.add(&bracket, p4);
            let q = g.mul(p, &bracket);
            let sum = g.add(sum, &q);
            let mut size = g.abs(&log_s_in);
            for x in [p1, p2, p3, p4] {
                let ax = g.abs(x);
                size = g.add(&size, &ax);
            }
            let n1 = g.add(n, &one);
            let root = g.sqrt(&n1);
            let abs_p = g.abs(p);
            let w = g.mul(&abs_p, &size);
            let sabs = g.fma(&w, &root, sabs);
            let an = g.add(&apm_in, n);
            let bn = g.add(&bpm_in, n);
            let nm1 = g.add(&n1, &m_in);
            let num = g.mul(&an, &bn);
            let den = g.mul(&n1, &nm1);
            let r = g.div(&num, &den);
            let r = g.mul(&r, &s_in);
            let inv = g.div(&one, &an);
            let p3 = g.add(p3, &inv);
            let inv = g.div(&one, &bn);
            let p4 = g.add(p4, &inv);
            let inv = g.div(&one, &n1);
            let p1 = g.add(p1, &inv);
            let inv = g.div(&one, &nm1);
            let p2 = g.add(p2, &inv);
            let p = g.mul(p, &r);
            let last = g.abs(&q);
            vec![n1, p, p1, p2, p3, p4, sum, sabs, last]
        },
    );
    let (n_done, tot, tot_abs) = (&log_series[0], &log_series[6], &log_series[7]);
    // (-1)^m s^m Gamma(c) / (Gamma(a') Gamma(b')).
    let s_m = power(f, base, &m);
    let odd = odd(f, &m);
    let g_log = f.mul(&g_c, &r_ap);
    let g_log = f.mul(&g_log, &r_bp);
    let g_log = f.mul(&g_log, &s_m);
    let minus_g_log = f.neg(&g_log);
    let g_log = f.sel(&odd, &minus_g_log, &g_log);
    let ls = f.mul(&g_log, tot);
    let diff = f.sub(&fs, &ls);
    let int_value = f.mul(&euler, &diff);
    let abs_g_log = f.abs(&g_log);
    let err = f.mul(&fs_abs, &weight);
    let err = f.fma(&abs_g_log, tot_abs, &err);
    let abs_ls = f.abs(&ls);
    let err = f.fma(&abs_ls, &left_out, &err);
    // F's change from d to m: delta times d/dd log F, which is about |log s| + psi(m + 1)
    // (the power s^d and Gamma(d)).
    let abs_log_s = f.abs(log_s);
    let abs_psi_m1 = f.abs(&psi_m1_kept);
    let slope = f.add(&abs_log_s, &abs_psi_m1);
    let slope = f.add(&slope, &one);
    let eps = f.k(EPS);
    let moved = f.mul(&abs_delta, &slope);
    let moved = f.div(&moved, &eps);
    let abs_diff = f.abs(&diff);
    let err = f.fma(&abs_diff, &moved, &err);
    let abs_euler = f.abs(&euler);
    let err = f.mul(&err, &abs_euler);
    let abs_int = f.abs(&int_value);
    let int_error = f.div(&err, &abs_int);
    let limit = f.c(MAX_ITER);
    let int_ok = f.cmp(CmpF::Olt, n_done, &limit);
    let m_ok = f.cmp(CmpF::Olt, &m, &limit);
    let int_ok = f.and(&int_ok, &m_ok);

    let value = f.sel(&integral, &int_value, &frac_value);
    let error = f.sel(&integral, &int_error, &frac_error);
    let ok = f.sel(&integral, &int_ok, &frac_ok);
    let inf = f.c(f64::INFINITY);
    let error = f.sel(&ok, &error, &inf);
    (Estimate { value, error, ok }, gauss)
}

/// The better of `a` and `c` by their error estimates (a nan estimate loses).
fn better(f: &mut F, a: Estimate, c: Estimate) -> Estimate {
    let usable = f.cmp(CmpF::Olt, &c.error, &a.error);
    let a_bad = f.cmp(CmpF::Uno, &a.error, &a.error);
    let c_bad = f.cmp(CmpF::Uno, &c.error, &c.error);
    let c_good = f.not(&c_bad);
    let rescue = f.and(&a_bad, &c_good);
    let take = f.or(&usable, &rescue);
    Estimate {
        value: f.sel(&take, &c.value, &a.value),
        error: f.sel(&take, &c.error, &a.error),
        ok: f.sel(&take, &c.ok, &a.ok),
    }
}

/// F(e, q; c; x) for -1 < x <= 0.999, or any finite x where F is a polynomial (where
/// `here`), by the recurrence in the first
/// parameter (A&S 15.2.10) (c - t) F(t - 1) + (2t - c + (q - t) x) F(t) + t (x - 1) F(t + 1)
/// = 0, from t = e - n and t + sign(n) by their series, in n steps of one towards e:
/// upwards from within 1/2 of c (n = round(e - c) >= 2), or where e is below -3/2 and c
/// (or c >= 0) downwards from e's fractional part (n = round(e) <= -2), so that t never
/// crosses c (cephes' hyp2f1ra chooses the same way). Either series cancels less than
/// F(e, ...)'s: that one's terms alternate over the first |e - c| or |e| terms. The error
/// estimate is first order: F(e) = u F(t) + v F(t + step), u and v the recurrence's
/// solutions from (1, 0) and (0, 1) (carried beside F), so the starts' errors reach F(e)
/// times |u| and |v|; each step's rounding, relative to its result, is scaled by the
/// condition of the steps after it (see `recurrence_from`).
fn recurrence(f: &mut F, e: &Value, q: &Value, c: &Value, x: &Value, here: &Value) -> Estimate {
    let zero = f.c(0.0);
    let two = f.c(2.0);
    let minus_two = f.c(-2.0);
    let ec = f.sub(e, c);
    let n_up = f.round(&ec);
    let up = f.cmp(CmpF::Oge, &n_up, &two);
    let n_down = f.round(e);
    let down = f.cmp(CmpF::Ole, &n_down, &minus_two);
    let c_pos = f.cmp(CmpF::Oge, c, &zero);
    let e_above_c = f.cmp(CmpF::Ogt, e, c);
    let no_crossing = f.or(&c_pos, &e_above_c);
    let down = f.and(&down, &no_crossing);
    let not_up = f.not(&up);
    let down = f.and(&down, &not_up);
    let n = f.sel(&down, &n_down, &n_up);
    let used = f.or(&up, &down);
    let limit = f.c(MAX_ITER);
    let steps = f.abs(&n);
    let capped = f.cmp(CmpF::Olt, &steps, &limit);
    let used = f.and(&used, &capped);
    let here = f.and(here, &used);
    let n = f.sel(&here, &n, &zero);
    let x = f.sel(&here, x, &zero);
    when(f, &here, 0, |f| (recurrence_from(f, e, q, c, &x, &n), vec![])).0
}

/// `recurrence` from t = e - n (|n| >= 2) at x.
///
/// Its error estimate, first order: with u and v the recurrence's solutions from (1, 0)
/// and (0, 1) at (t, t + step), F(e) = u_N F(t) + v_N F(t + step), so the starts' errors
/// reach F(e) times |u_N| and |v_N|; a step's rounding (RECURRENCE_ROUNDING eps of |p1| +
/// |p0|, the products it sums) perturbs F(tau + step) alone, which reaches F(e) times the
/// solution that is 0 at tau and 1 at tau + step, (u(tau) v_N - v(tau) u_N) / D(tau +
/// step), D the Casoratian u(tau) v(tau + step) - v(tau) u(tau + step) = the product of
/// the steps' ca. u_N and v_N come from a first loop over the coefficients alone. (A bound
/// carried with the coefficients' absolute values, as before, grew where F passes near a
/// zero on the way and stayed orders above the error, so that hyp2f1(-10.3, 8.4, 1.4,
/// 0.177) took the series in z, 491 ULP, over this recurrence, 0 ULP; scaling each step's
/// rounding by the starts' condition instead missed the loss of polynomials near z = 1:
/// /work/notes/s37/rec3.py, rec5.py, rec6.py.)
fn recurrence_from(f: &mut F, e: &Value, q: &Value, c: &Value, x: &Value, n: &Value) -> Estimate {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let minus_one = f.c(-1.0);
    let upward = f.cmp(CmpF::Ogt, n, &zero);
    let step = f.sel(&upward, &one, &minus_one);
    let steps = f.abs(n);
    let t = f.sub(e, n);
    let t1 = f.add(&t, &step);
    let ty = f.ty;
    // (ca, cb) of the step from tau: F(tau + step) = -(ca F(tau - step) + cb F(tau));
    // upwards ca = (c - tau) / (tau (x - 1)), cb = (2 tau - c + (q - tau) x) / (tau (x -
    // 1)); downwards the two denominators' parts swap.
    let coefficients = |g: &mut F, tau: &Value| {
        let one = g.c(1.0);
        let two = g.c(2.0);
        let wm1 = g.sub(x, &one);
        let tx = g.mul(tau, &wm1);
        let ct = g.sub(c, tau);
        let p = g.sel(&upward, &ct, &tx);
        let r = g.sel(&upward, &tx, &ct);
        let ca = g.div(&p, &r);
        let qt = g.sub(q, tau);
        let mid = g.mul(&qt, x);
        let two_tau = g.mul(&two, tau);
        let tc = g.sub(&two_tau, c);
        let mid = g.add(&tc, &mid);
        (ca, g.div(&mid, &r))
    };
    let next = |g: &mut F, (ca, cb): (&Value, &Value), before: &Value, last: &Value| {
        let p1 = g.mul(ca, before);
        let p0 = g.mul(cb, last);
        let sum = g.add(&p1, &p0);
        (g.neg(&sum), p1, p0)
    };
    // u_N and v_N: (j, tau, u(tau - step), u(tau), v(tau - step), v(tau)).
    let ends = f.b.scf_while(
        &[one.clone(), t1.clone(), one.clone(), zero.clone(), zero.clone(), one.clone()],
        |cb, v| cb.cmpf(CmpF::Olt, &v[0], &steps),
        |lb, v| {
            let mut g = F { b: lb, ty };
            let (ca, cb) = coefficients(&mut g, &v[1]);
            let (u_next, _, _) = next(&mut g, (&ca, &cb), &v[2], &v[3]);
            let (v_next, _, _) = next(&mut g, (&ca, &cb), &v[4], &v[5]);
            let one = g.c(1.0);
            let tau = g.add(&v[1], &step);
            let j = g.add(&v[0], &one);
            vec![j, tau, v[3].clone(), u_next, v[5].clone(), v_next]
        },
    );
    let (u_n, v_n) = (ends[3].clone(), ends[5].clone());
    let s1 = series(f, &t, q, c, x);
    let s0 = series(f, &t1, q, c, x);
    // (j, tau, F(tau - step), F(tau), u(tau - step), u(tau), v(tau - step), v(tau), D(tau),
    // the steps' rounding so far as it reaches F(e))
    let done = f.b.scf_while(
        &[one.clone(), t1, s1.value.clone(), s0.value.clone(), one.clone(), zero.clone(), zero.clone(), one.clone(), one.clone(), zero.clone()],
        |cb, v| cb.cmpf(CmpF::Olt, &v[0], &steps),
        |lb, v| {
            let mut g = F { b: lb, ty };
            let (ca, cb) = coefficients(&mut g, &v[1]);
            let (f_next, p1, p0) = next(&mut g, (&ca, &cb), &v[2], &v[3]);
            let (u_next, _, _) = next(&mut g, (&ca, &cb), &v[4], &v[5]);
            let (v_next, _, _) = next(&mut g, (&ca, &cb), &v[6], &v[7]);
            let d_next = g.mul(&ca, &v[8]);
            let uv = g.mul(&v[5], &v_n);
            let vu = g.mul(&v[7], &u_n);
            let reach = g.sub(&uv, &vu);
            let reach = g.div(&reach, &d_next);
            let reach = g.abs(&reach);
            let (p1, p0) = (g.abs(&p1), g.abs(&p0));
            let sizes = g.add(&p1, &p0);
            let rounding = g.c(RECURRENCE_ROUNDING);
            let sizes = g.mul(&sizes, &rounding);
            let reached = g.fma(&sizes, &reach, &v[9]);
            let one = g.c(1.0);
            let tau = g.add(&v[1], &step);
            let j = g.add(&v[0], &one);
            vec![j, tau, v[3].clone(), f_next, v[5].clone(), u_next, v[7].clone(), v_next, d_next, reached]
        },
    );
    let value = &done[3];
    let start_err = |f: &mut F, s: &Estimate, factor: &Value| {
        let size = f.abs(&s.value);
        let size = f.mul(&size, &s.error);
        let factor = f.abs(factor);
        f.mul(&factor, &size)
    };
    let from_t = start_err(f, &s1, &u_n);
    let from_t1 = start_err(f, &s0, &v_n);
    let bound = f.add(&from_t, &from_t1);
    let bound = f.add(&bound, &done[9]);
    let abs_v = f.abs(value);
    let error = f.div(&bound, &abs_v);
    let ok = f.and(&s1.ok, &s0.ok);
    Estimate { value: value.clone(), error, ok }
}

/// `make`'s estimate (and `extra` more values) where `here`; elsewhere an unusable
/// estimate (nan, infinite error, not ok) and nans, without running `make`. The kernel is
/// scalar code already (the loops in it keep IREE from vectorizing it), so a branch costs
/// nothing there and skips the gamma and psi functions and loops of forms that do not
/// apply to this element.
fn when(f: &mut F, here: &Value, extra: usize, make: impl FnOnce(&mut F) -> (Estimate, Vec<Value>)) -> (Estimate, Vec<Value>) {
    let ty = f.ty;
    let mut types = vec![ty, ty, ScalarType::I1];
    types.extend(std::iter::repeat_n(ty, extra));
    let mut out = f.b.scf_if(
        here,
        &types,
        |blk| {
            let mut g = F { b: blk, ty };
            let (e, more) = make(&mut g);
            assert_eq!(more.len(), extra, "`when` yields `extra` more values");
            let mut ys = vec![e.value, e.error, e.ok];
            ys.extend(more);
            ys
        },
        |blk| {
            let mut g = F { b: blk, ty };
            let nan = g.c(f64::NAN);
            let inf = g.c(f64::INFINITY);
            let no = g.b.constant_int(0, ScalarType::I1);
            let mut ys = vec![nan.clone(), inf, no];
            ys.extend(std::iter::repeat_n(nan, extra));
            ys
        },
    );
    let more = out.split_off(3);
    let mut it = out.into_iter();
    let (value, error, ok) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    (Estimate { value, error, ok }, more)
}

/// Pfaff's (1-z)^-e F(e, c - o; c; w) (`pre` the power) by the series in w, where `here`.
fn pfaff_series(f: &mut F, here: &Value, e: &Value, c_o: &Value, c: &Value, w: &Value, pre: &Value) -> Estimate {
    when(f, here, 0, |g| {
        let est = series(g, e, c_o, c, w);
        let value = g.mul(pre, &est.value);
        (Estimate { value, ..est }, vec![])
    })
    .0
}

/// (hi, lo) = x - y as two doubles.
fn difference(f: &mut F, x: &Value, y: &Value) -> (Value, Value) {
    let minus_y = f.neg(y);
    f.two_sum(x, &minus_y)
}

pub fn hyp2f1(blk: &mut crate::mlir::Block, a: &Value, b: &Value, c: &Value, z: &Value) -> Value {
    let mut f = F::new(blk, a);
    let f = &mut f;
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let minus_one = f.c(-1.0);
    let half = f.c(CONNECTION_MIN_X);
    let series_max = f.c(SERIES_MAX_X);
    let inf = f.c(f64::INFINITY);
    let nan = f.c(f64::NAN);

    let poly_a = non_positive_integer(f, a);
    let poly_b = non_positive_integer(f, b);
    let poly = f.or(&poly_a, &poly_b);
    let not_poly = f.not(&poly);
    let z_finite = is_finite(f, z);
    let z_below_one = f.cmp(CmpF::Olt, z, &one);
    let z_negative = f.cmp(CmpF::Olt, z, &zero);
    let z_negative = f.and(&z_negative, &z_finite);

    // The series in z: F(a, b; c; z) itself, for -1 < z <= 0.999 (every finite z for
    // polynomials).
    let (ca_hi, ca_lo) = difference(f, c, a);
    let (d1, d1_lo) = difference(f, &ca_hi, b);
    let d1_lo = f.add(&d1_lo, &ca_lo);
    let (d1, d1_lo) = f.fast_two_sum(&d1, &d1_lo);
    let (ca, ca_lo1) = difference(f, c, a);
    let (cb, cb_lo1) = difference(f, c, b);
    let above_minus_one = f.cmp(CmpF::Ogt, z, &minus_one);
    let up_to_max = f.cmp(CmpF::Ole, z, &series_max);
    let series_z = f.and(&above_minus_one, &up_to_max);
    let series_z = f.and(&series_z, &not_poly);
    let poly_finite = f.and(&poly, &z_finite);
    let series_z = f.or(&series_z, &poly_finite);
    let series_z_all = series_z.clone();

    // Pfaff's (1-z)^-a F(a, c-b; c; w) and (1-z)^-b F(b, c-a; c; w) for z < 0, w = z / (z-1),
    // 1 - w = 1 / (1 - z): F(e, c - o; c; w) with (e, o) = (a, b), (b, a), whose own c - a'
    // is c - e, c - b' is o exactly, d' = o - e. Their series here.
    let z_pfaff = f.sel(&z_negative, z, &minus_one);
    let (om_hi, om_lo) = difference(f, &one, &z_pfaff);
    let z_m1 = f.sub(&z_pfaff, &one);
    let w = f.div(&z_pfaff, &z_m1);
    let sw = f.div(&one, &om_hi);
    let log_sw = {
        let minus_z = f.neg(&z_pfaff);
        let l = log1p(f.b, &minus_z);
        f.neg(&l)
    };
    let w_series = f.cmp(CmpF::Ole, &w, &series_max);
    let w_series = f.and(&w_series, &z_negative);
    let w_conn = f.cmp(CmpF::Oge, &w, &half);
    let w_conn = f.and(&w_conn, &z_negative);
    let pfaff_base = Base { h: om_hi.clone(), lo: om_lo.clone(), e: minus_one.clone() };
    let mut pfaff = Vec::new();
    for (e, o) in [(a, b), (b, a)] {
        let (c_o, c_o_lo) = difference(f, c, o);
        let (c_e, c_e_lo) = difference(f, c, e);
        let (d_hi, d_lo) = difference(f, o, e);
        let pre = power(f, &pfaff_base, e);
        pfaff.push((e.clone(), c_o, c_e, o.clone(), d_hi, d_lo, pre, c_o_lo, c_e_lo));
    }

    // The connection formula: once for z in [1/2, 1] (z = 1: Gauss's sum, s = 0) or else
    // Pfaff's first form, once for the second.
    let conn_z = f.cmp(CmpF::Oge, z, &half);
    let z_upto_one = f.cmp(CmpF::Ole, z, &one);
    let conn_z = f.and(&conn_z, &z_upto_one);
    let s1 = f.sub(&one, z);
    let log_s1 = {
        let minus_z = f.neg(z);
        log1p(f.b, &minus_z)
    };
    let (e, c_o, c_e, o, d_hi, d_lo, pre, c_o_lo, c_e_lo) = &pfaff[0];
    let pick = |f: &mut F, x: &Value, y: &Value| f.sel(&conn_z, x, y);
    let (pa, pb, pca, pcb) = (pick(f, a, e), pick(f, b, c_o), pick(f, &ca, c_e), pick(f, &cb, o));
    let (pd, pd_lo) = (pick(f, &d1, d_hi), pick(f, &d1_lo, d_lo));
    let ps = pick(f, &s1, &sw);
    let plog = pick(f, &log_s1, &log_sw);
    let base = Base { h: pick(f, &s1, &om_hi), lo: pick(f, &zero, &om_lo), e: pick(f, &one, &minus_one) };
    let ppre = pick(f, &one, pre);
    // From z = 1/2 to SERIES_FIRST_BELOW the series in z (under 130 terms there) goes
    // first, and the connection formula (gamma and psi functions, two series) only where
    // its estimate is above SERIES_EARLY_GOOD: 1.64 -> 0.65 us an element over z in (1/2,
    // 3/4), a, b in [-3, 10], c in (0.05, 20] (NUMBA 0.25; 0.81 at 7). Either form's estimate within CONNECTION_GOOD can
    // be 15 ulps off: of 60000 accuracy_cases points 643 changed, by up to 16 ULP either
    // way (old 163 ULP -> 0.8 at (-1.97, -0.41, 0.61, 0.54); 0.9 -> 15.9 at (9.54, 3.56,
    // 2.15, 0.62)); accuracy.py -n 20000: mean 6.98 -> 6.98 ULP, max 3.15e4 both.
    let first_below = f.c(SERIES_FIRST_BELOW);
    let series_first = f.cmp(CmpF::Olt, z, &first_below);
    let series_first = f.and(&series_first, &conn_z);
    let series_first = f.and(&series_first, &series_z);
    let (early, _) = when(f, &series_first, 0, |g| (series(g, a, b, c, z), vec![]));
    let good = f.c(CONNECTION_GOOD);
    let early_bar = f.c(SERIES_EARLY_GOOD);
    let early_good = f.cmp(CmpF::Ole, &early.error, &early_bar);
    let early_done = f.and(&series_first, &early_good);
    let early_open = f.not(&early_done);
    let conn_z = f.and(&conn_z, &early_open);
    let here = f.or(&conn_z, &w_conn);
    let s_here = f.sel(&here, &ps, &zero);
    let (pb_lo, pca_lo, pcb_lo) = (pick(f, &zero, c_o_lo), pick(f, &ca_lo1, c_e_lo), pick(f, &cb_lo1, &zero));
    let p = Params { a: &pa, b: &pb, c, ca: &pca, cb: &pcb, d_hi: &pd, d_lo: &pd_lo, b_lo: &pb_lo, ca_lo: &pca_lo, cb_lo: &pcb_lo };
    let (est, gauss) = when(f, &here, 1, |g| {
        let (est, gauss) = connection(g, &p, &s_here, &plog, &base);
        let value = g.mul(&ppre, &est.value);
        (Estimate { value, ..est }, vec![gauss])
    });
    let gauss = gauss[0].clone();
    let conn1 = est;
    // Pfaff's second form only where the first's estimate is poor (as the series in z
    // before the connection formula above).
    let conn1_good = f.cmp(CmpF::Ole, &conn1.error, &good);
    let conn1_poor = f.not(&conn1_good);
    let w_conn2 = f.and(&w_conn, &conn1_poor);
    let (e, c_o, c_e, o, d_hi, d_lo, pre, c_o_lo, c_e_lo) = &pfaff[1];
    let s_here = f.sel(&w_conn2, &sw, &zero);
    let p = Params { a: e, b: c_o, c, ca: c_e, cb: o, d_hi, d_lo, b_lo: c_o_lo, ca_lo: c_e_lo, cb_lo: &zero };
    let (est, _) = when(f, &w_conn2, 0, |g| {
        let (est, _) = connection(g, &p, &s_here, &log_sw, &pfaff_base);
        let value = g.mul(pre, &est.value);
        (Estimate { value, ..est }, vec![])
    });
    let conn2 = est;

    // The series in z and in w, where the connection formula's estimate is not already
    // good (they need about 36 / (1 - x) terms: thousands near x = 1, against the
    // connection's two series in 1 - x, which converge like 2^-k at worst); below x = 1/2
    // no connection ran (its estimate is infinite). Then every form in the same order as
    // ever.
    let conn_err = f.b.arith(Arith::MinimumF, &conn1.error, &conn2.error);
    let conn_good = f.cmp(CmpF::Ole, &conn_err, &good);
    let conn_poor = f.not(&conn_good);
    let series_z = f.and(&series_z, &conn_poor);
    let not_first = f.not(&series_first);
    let series_z = f.and(&series_z, &not_first);
    // For -1 < z < PFAFF_FIRST Pfaff's two series in w (1/3 < w < 1/2) before the series
    // in z, which runs only where theirs are poor (see PFAFF_GOOD).
    let pfaff_limit = f.c(PFAFF_FIRST);
    let pfaff_first = f.cmp(CmpF::Olt, z, &pfaff_limit);
    let pfaff_first = f.and(&pfaff_first, &above_minus_one);
    let pfaff_first = f.and(&pfaff_first, &not_poly);
    let w_first = f.sel(&pfaff_first, &w, &zero);
    let mut early_pfaff = Vec::new();
    for (e, c_o, _, _, _, _, pre, _, _) in &pfaff {
        early_pfaff.push(pfaff_series(f, &pfaff_first, e, c_o, c, &w_first, pre));
    }
    let second = early_pfaff.pop().unwrap();
    let first = early_pfaff.pop().unwrap();
    let pfaff_best = better(f, first, second);
    let pfaff_enough = f.c(PFAFF_GOOD);
    let pfaff_good = f.cmp(CmpF::Ole, &pfaff_best.error, &pfaff_enough);
    let pfaff_poor = f.not(&pfaff_good);
    let series_z = f.and(&series_z, &pfaff_poor);
    let (best, _) = when(f, &series_z, 0, |g| (series(g, a, b, c, z), vec![]));
    let best = better(f, early, best);
    let mut best = better(f, best, pfaff_best);
    let w_beat = f.c(W_SERIES_AFTER);
    let w_near = f.c(W_NEAR);
    let w_far = f.cmp(CmpF::Ogt, &w, &w_near);
    let w_beat = f.sel(&w_far, &w_beat, &good);
    let w_worth = f.cmp(CmpF::Ogt, &conn_err, &w_beat);
    let w_series = f.and(&w_series, &w_worth);
    // Nor Pfaff's series and recurrences where the series in z is good already (-1 < z <
    // 0: they tripled the cost there).
    let z_good = f.cmp(CmpF::Ole, &best.error, &good);
    let z_poor = f.not(&z_good);
    let w_series = f.and(&w_series, &z_poor);
    let w_s = f.sel(&w_series, &w, &zero);
    let w_close = f.not(&w_far);
    for (i, (e, c_o, _, o, _, _, pre, _, _)) in pfaff.iter().enumerate() {
        // The first form where a <= b, the second where b < a; both where w < W_NEAR.
        let faster = if i == 0 { f.cmp(CmpF::Ole, e, o) } else { f.cmp(CmpF::Olt, e, o) };
        let runs = f.or(&faster, &w_close);
        let runs = f.and(&w_series, &runs);
        let not_yet = f.not(&pfaff_first);
        let runs = f.and(&runs, &not_yet);
        let est = pfaff_series(f, &runs, e, c_o, c, &w_s, pre);
        best = better(f, best, est);
        let est = recurrence(f, e, c_o, c, &w, &w_series);
        let value = f.mul(pre, &est.value);
        best = better(f, best, Estimate { value, ..est });
        // And in its second parameter c - o, downwards where that is below -3/2 (a and b
        // above c: the series in w alternates over its first |c - o| terms): on
        // accuracy_cases' 4726 points where a, b > c and z < 0, max 1.5e5 -> 3.1e4 ULP,
        // mean 95 -> 16, more than 8 ULP worse than scipy at 628 -> 139 (and 119 since the
        // recurrences' estimates follow u and v). The first one's estimate weighed at 1/2
        // (/work/notes/s33/cmp.py; at 1/4 before), points where scipy is within 8 ULP and
        // ours above: 93 -> 104 there, 242 -> 269 on the decimal set; this one's at 1/2: 93
        // -> 95, 242 -> 253.
        let est = recurrence(f, c_o, e, c, &w, &w_series);
        let value = f.mul(pre, &est.value);
        best = better(f, best, Estimate { value, ..est });
    }
    best = better(f, best, conn1);
    best = better(f, best, conn2);
    // The recurrences in a and in b of F(a, b; c; z) itself (polynomials too), where the
    // best estimate so far is poor: the series in z alternates over its first |a| or |b|
    // terms where a or b is far below 0 or far above c with the other one negative
    // (hyp2f1(9.8, -11.6, 6.4, 0.498): 1.4e6 -> 12 ULP; scipy 9). Only where the
    // estimate is above RECURRENCE_AFTER.
    let after = f.c(RECURRENCE_AFTER);
    let rec_domain = f.and(&series_z_all, &z_finite);
    for (e, q) in [(a, b), (b, a)] {
        // The second only where the first left the estimate poor.
        let poor = f.cmp(CmpF::Ogt, &best.error, &after);
        let rec_here = f.and(&rec_domain, &poor);
        let z_r = f.sel(&rec_here, z, &zero);
        let est = recurrence(f, e, q, c, &z_r, &rec_here);
        best = better(f, best, est);
    }
    // Euler's (1-z)^d F(c-a, c-b; c; z) where c - a or c - b is a non-positive integer
    // (exactly): a polynomial, which the forms above can lose to cancellation (near a zero
    // of a polynomial F close to z = 1), for every z < 1.
    let ca_exact = f.cmp(CmpF::Oeq, &ca_lo1, &zero);
    let ca_poly = non_positive_integer(f, &ca);
    let ca_poly = f.and(&ca_poly, &ca_exact);
    let cb_exact = f.cmp(CmpF::Oeq, &cb_lo1, &zero);
    let cb_poly = non_positive_integer(f, &cb);
    let cb_poly = f.and(&cb_poly, &cb_exact);
    let ecp = f.or(&ca_poly, &cb_poly);
    let (zh, zl) = difference(f, &one, z);
    let whole = Base { h: zh, lo: zl, e: minus_one.clone() };
    let euler_here = f.and(&ecp, &z_finite);
    let euler_here = f.and(&euler_here, &z_below_one);
    let z_eu = f.sel(&euler_here, z, &zero);
    let (est, _) = when(f, &euler_here, 0, |g| {
        let eu = series(g, &ca, &cb, c, &z_eu);
        let minus_d = g.neg(&d1);
        let pw = power(g, &whole, &minus_d);
        let d_corr = g.mul(&d1_lo, &log_s1);
        let one = g.c(1.0);
        let d_corr = g.add(&one, &d_corr);
        let pw = g.mul(&pw, &d_corr);
        let value = g.mul(&pw, &eu.value);
        (Estimate { value, ..eu }, vec![])
    });
    best = better(f, best, est);
    let r = f.sel(&best.ok, &best.value, &nan);

    // Special values, scipy's (the later ones take precedence).
    // z > 1: inf; for an integer d <= -1 with c - a or c - b a non-positive integer,
    // Euler's (1-z)^d F(c-a, c-b; c; z), a polynomial (summed in `euler_poly`).
    let above = f.cmp(CmpF::Ogt, z, &one);
    let above = f.and(&above, &not_poly);
    let r = f.sel(&above, &inf, &r);
    let d_floor = f.floor(&d1);
    let d_int = f.cmp(CmpF::Oeq, &d_floor, &d1);
    let lo_zero = f.cmp(CmpF::Oeq, &d1_lo, &zero);
    let d_int = f.and(&d_int, &lo_zero);
    let d_le = f.cmp(CmpF::Ole, &d1, &minus_one);
    let euler_case = f.and(&d_int, &d_le);
    let euler_case = f.and(&euler_case, &ecp);
    let euler_case = f.and(&euler_case, &above);
    let z_e = f.sel(&euler_case, z, &zero);
    let (euler_est, _) = when(f, &euler_case, 0, |f| {
        let ep = series(f, &ca, &cb, c, &z_e);
        let one = f.c(1.0);
        let s_e = f.sub(&one, &z_e);
        let s_e = f.sel(&euler_case, &s_e, &one);
        let pw = if f.f64() {
            float_pow(f.b, &s_e, &d1)
        } else {
            let abs_s = f.abs(&s_e);
            let p = pow(f, &abs_s, &d1);
            let odd = odd(f, &d1);
            let neg = f.cmp(CmpF::Olt, &s_e, &zero);
            let flip = f.and(&odd, &neg);
            let minus_p = f.neg(&p);
            f.sel(&flip, &minus_p, &p)
        };
        let value = f.mul(&pw, &ep.value);
        (Estimate { value, ..ep }, vec![])
    });
    let r = f.sel(&euler_case, &euler_est.value, &r);
    // z = 1: Gauss's sum where d > 0, inf where d <= 0.
    let at_one = f.cmp(CmpF::Oeq, z, &one);
    let at_one = f.and(&at_one, &not_poly);
    let d_pos = f.cmp(CmpF::Ogt, &d1, &zero);
    let gauss = f.sel(&d_pos, &gauss, &inf);
    let r = f.sel(&at_one, &gauss, &r);
    // c a non-positive integer not preceded by the polynomial's end: inf.
    let c_pole = non_positive_integer(f, c);
    let a_ends = f.cmp(CmpF::Ogt, a, c);
    let a_ends = f.and(&poly_a, &a_ends);
    let b_ends = f.cmp(CmpF::Ogt, b, c);
    let b_ends = f.and(&poly_b, &b_ends);
    let ends = f.or(&a_ends, &b_ends);
    let not_ends = f.not(&ends);
    let c_pole = f.and(&c_pole, &not_ends);
    let r = f.sel(&c_pole, &inf, &r);
    // c = a or c = b with |z| < 1 or z = -1: (1-z)^-b or (1-z)^-a, poles of c or not (for
    // c = b a non-positive integer scipy sums the first 1 - b terms instead: not followed).
    let c_is_a = f.cmp(CmpF::Oeq, c, a);
    let c_is_b = f.cmp(CmpF::Oeq, c, b);
    let other = f.sel(&c_is_a, b, a);
    let binomial = power(f, &whole, &other);
    let az = f.abs(z);
    let inside = f.cmp(CmpF::Olt, &az, &one);
    let at_minus_one = f.cmp(CmpF::Oeq, z, &minus_one);
    let inside = f.or(&inside, &at_minus_one);
    let c_is = f.or(&c_is_a, &c_is_b);
    let c_is = f.and(&c_is, &inside);
    let r = f.sel(&c_is, &binomial, &r);
    // z = -inf: the limit, 0, where a > 0 and b > 0 (F ~ (-z)^-a, (-z)^-b); nan otherwise
    // (scipy: nan also where b - a is an integer, inf for some negative a or b).
    let minus_inf = f.c(f64::NEG_INFINITY);
    let z_minus_inf = f.cmp(CmpF::Oeq, z, &minus_inf);
    let a_pos = f.cmp(CmpF::Ogt, a, &zero);
    let b_pos = f.cmp(CmpF::Ogt, b, &zero);
    let decays = f.and(&a_pos, &b_pos);
    let decays = f.and(&decays, &z_minus_inf);
    let r = f.sel(&decays, &zero, &r);
    // nan in, nan out (z, then the parameters).
    let r = f.keep_nan(z, &r);
    let any_nan = {
        let na = f.cmp(CmpF::Uno, a, a);
        let nb = f.cmp(CmpF::Uno, b, b);
        let nc = f.cmp(CmpF::Uno, c, c);
        let n = f.or(&na, &nb);
        f.or(&n, &nc)
    };
    let r = f.sel(&any_nan, &nan, &r);
    // a = 0 or b = 0 (with c != 0), and z = 0: 1, whatever else is nan.
    let a_zero = f.cmp(CmpF::Oeq, a, &zero);
    let b_zero = f.cmp(CmpF::Oeq, b, &zero);
    let c_nonzero = f.cmp(CmpF::Une, c, &zero);
    let ab_zero = f.or(&a_zero, &b_zero);
    let trivial = f.and(&ab_zero, &c_nonzero);
    let z_zero = f.cmp(CmpF::Oeq, z, &zero);
    let trivial = f.or(&trivial, &z_zero);
    f.sel(&trivial, &one, &r)
}
