//! The regularized incomplete beta function I_x(a, b) (PyTensor's `BetaInc`, behind
//! PyMC's Beta, Binomial and StudentT CDFs).
//!
//! Two kernels (`Stage`, elemwise.rs): the power term (logarithms, gammas, an exponential:
//! as much work as the fraction's usual few steps) as vector code, every lane computing its
//! three forms; then each lane runs only the loop it needs (`branch`, scf.if: the loops keep
//! that kernel scalar code anyway, where selects would pay for every side).
//!
//! Written once for both float types, as gamma.rs (f32 is computed in f64 and rounded once
//! where the target has f64 math; Vulkan and Metal run the same code in f32). The approach
//! (the textbook one, e.g. DLMF 8.17.22 and Numerical Recipes' `betai`):
//!
//! - I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 1 / (1 + d1 / (1 + d2 / (1 + ...))) with
//!   d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)), d(2m) = m(b-m) x / ((a+2m-1)(a+2m)),
//!   evaluated by Lentz's method for stage one's steps, then by Wallis's recurrences in an
//!   `scf.while` (`fraction_loop`) until a block of steps changes it by less than an ulp.
//!   It converges quickly for x < (a+1)/(a+b+2); beyond, the symmetry
//!   I_x(a, b) = 1 - I_(1-x)(b, a) swaps the arguments.
//! - The power term z^p w^q / B(p, q) (z the continued fraction's variable, w = 1 - z) is
//!   where accuracy is lost to cancellation for large p, q (lgamma(p + q) - lgamma(p) -
//!   lgamma(q) cancels to about eps * p log p). So three forms, by size:
//!   both p, q >= 10: Stirling's formula for the three gammas, which leaves
//!   sqrt(x0 q / 2pi) exp(p log1pmx(u) + q log1pmx(v) + mu(p+q) - mu(p) - mu(q)) with
//!   x0 = p / (p+q), u = (z - x0) / x0, v = -(z - x0) / y0 and log1pmx(u) = log(1+u) - u
//!   (both terms negative: no cancellation); one of them small (s < 10 <= l): Stirling for
//!   gamma(s + l) / gamma(l) only, exp(s log((s+l) z_s) + l log z_l + (l - 1/2)
//!   log1p(s/l) - s + mu(s+l) - mu(l)) / gamma(s); both < 10: exp(p log z + q log w)
//!   gamma(p+q) / gamma(p) / gamma(q) with our gamma (accurate to a few ulps).
//!   log x and log(1 - x) are taken as log(x) and log1p(-x), so the powers of a factor near
//!   1 keep their accuracy. What is left is the exponential's: an error of about
//!   eps |exponent|, i.e. tens of ulps where the result is far below 1e-10 (PyTensor's C
//!   code uses pow() there, accurate for a + b < 171).
//! - Known limitation: near the mean with a + b large, each odd step of the fraction
//!   computes 1 + d(2m+1) h' with the two terms cancelling to about 1 / (a + b) of their
//!   size, so rounding costs up to about (a + b) / 12 ulps (150 at a + b = 1800); an asymptotic
//!   expansion in a + b (Temme's) would be needed there. PyTensor's C code loses more on
//!   the same points (its lgamma form past a + b = 171).
//! - The power series where b x <= 1, x <= 0.99 and x is past the swap point (below it the
//!   unswapped fraction is as accurate and shorter). Known limitation: it computes its terms by a
//!   recurrence whose rounding grows with the term's index: about 1 / (1 - x) ulps
//!   (50 at x = 0.986), where scipy stays within 8.
//! - For a, b < 10 the power term adds the errors of three gamma evaluations and an
//!   exponential: up to about 12 ulps measured (scipy: within 8). In f64 its exponent
//!   p log z + q log w is carried in two doubles (betaincinv's Newton steps need it).
//!
//! Special values follow PyTensor's C code (`incbet.c`): nan where a <= 0, b <= 0, x
//! outside [0, 1] or any argument nan (and a or b infinite); 0 at x = 0 and 1 at x = 1.
//! Where I_x is within an ulp of 1 we return the rounded value 1 (the C code returns
//! 1 - 2^-53 there).

use super::{exp_log, gamma, Stage, F};
use crate::mlir::{Block, CmpF, Value};

/// Lentz's tiny value, which stands in for a zero denominator (per type: f64, f32).
const TINY: (f64, f64) = (1e-300, 1e-30);
/// The continued fraction stops when a step changes it by less than this (per type).
const TOLERANCE: (f64, f64) = (1.1102230246251565e-16, 5.960464477539063e-8);
/// The most steps: the fraction needs about sqrt(max(a, b)) of them near the mean.
const MAX_STEPS: f64 = 10000.0;
/// The power series is used for b x <= 1 past the swap point up to this x (about 4000
/// terms at most).
const SERIES_BELOW: f64 = 0.99;
/// The power term switches to Stirling's formula for arguments from here.
const STIRLING_FROM: f64 = 10.0;



/// log(1 + u) - u for |u| < 1/2: with s = u / (2 + u), log(1 + u) = 2 atanh(s) =
/// 2 (s + s^3/3 + s^5/5 + ...) and 2s - u = -u s, so it is -u s + 2 s^3 (1/3 + s^2/5 + ...);
/// |s| <= 1/3 there, so 20 terms of the (exact, Taylor) series reach 1e-19.
fn log1pmx_small(f: &mut F, u: &Value) -> Value {
    let two = f.c(2.0);
    let den = f.add(&two, u);
    let s = f.div(u, &den);
    let s2 = f.mul(&s, &s);
    let coeffs: Vec<f64> = (0..20).map(|k| 1.0 / (2 * k + 3) as f64).collect();
    let p = f.poly(&s2, &coeffs, &coeffs[..9]);
    let s3 = f.mul(&s2, &s);
    let two_s3 = f.mul(&two, &s3);
    let tail = f.mul(&two_s3, &p);
    let us = f.mul(u, &s);
    f.sub(&tail, &us)
}

/// log(1 + u) - u, given also log(1 + u) computed from the factor's own logarithm (for
/// |u| >= 1/2, where nothing cancels).
fn log1pmx(f: &mut F, u: &Value, log_ratio: &Value) -> Value {
    let small = log1pmx_small(f, u);
    let big = f.sub(log_ratio, u);
    let au = f.abs(u);
    let half = f.c(0.5);
    let is_small = f.cmp(CmpF::Olt, &au, &half);
    f.sel(&is_small, &small, &big)
}

/// z^p w^q / B(p, q) for p, q > 0, z in (0, 1), w = 1 - z (log_z, log_w their logarithms).
/// `num` is z (p + q) - p (see `offset_from_mean`).
/// `x` and `swapped` (z = 1 - x) give the small form its logarithms to twice the precision.
/// `straight`: every form computed and the right one selected (vector code, see `choose`).
/// `pair`: the parts of (p, q) alone, computed beforehand (see `PairTerms`); else here.
#[allow(clippy::too_many_arguments)]
fn power_term(f: &mut F, p: &Value, q: &Value, z: &Value, w: &Value, log_z: &Value, log_w: &Value, num: &Value, x: &Value, swapped: &Value, straight: bool, pair: Option<&Oriented<'_>>) -> Value {
    let from = f.c(STIRLING_FROM);
    let p_big = f.cmp(CmpF::Oge, p, &from);
    let q_big = f.cmp(CmpF::Oge, q, &from);
    let big = f.and(&p_big, &q_big);
    let any_big = f.or(&p_big, &q_big);
    let (p, q, z, w, log_z, log_w, num) = (p.clone(), q.clone(), z.clone(), w.clone(), log_z.clone(), log_w.clone(), num.clone());
    let (x, swapped) = (x.clone(), swapped.clone());
    choose(
        f,
        &big,
        straight,
        |g| {
            let parts = match pair {
                Some(pair) => pair.big(g),
                None => BigParts::new(g, &p, &q),
            };
            power_term_big(g, &parts, &p, &q, &log_z, &log_w, &num)
        },
        |g| {
            choose(
                g,
                &any_big,
                straight,
                |h| {
                    let parts = match pair {
                        Some(pair) => pair.one_small(h),
                        None => OneSmallParts::new(h, &p, &q),
                    };
                    power_term_one_small(h, &parts, &z, &w, &log_z, &log_w)
                },
                |h| {
                    let inverse_beta = match pair {
                        Some(pair) => pair.terms.inverse_beta.clone(),
                        None => {
                            let s = h.add(&p, &q);
                            inverse_beta_small(h, &p, &q, &s)
                        }
                    };
                    power_term_small(h, &p, &q, &log_z, &log_w, &x, &swapped, &inverse_beta)
                },
            )
        },
    )
}

/// What the power term's three forms need of (a, b) alone, for lanes that evaluate it at
/// several x with the same pair (betaincinv's Newton steps as vector code, where every
/// step computes all three forms): about a third of each evaluation's work (five
/// Stirling corrections, three gammas, three logarithms). Each part is symmetric in
/// (a, b) or kept for both orders, so one `PairTerms` serves either orientation
/// (`PairTerms::oriented`).
pub(super) struct PairTerms {
    /// `BigParts` of (a, b); of (b, a) the same with the two logarithms exchanged.
    big: BigParts,
    /// `OneSmallParts` of (a, b); of (b, a) the same with `p_small` from b < a.
    one_small: OneSmallParts,
    /// b < a: `p_small` of the order (b, a).
    b_small: Value,
    /// 1 / B(a, b) by `inverse_beta_small` (meaningful for a, b < 10).
    inverse_beta: Value,
}

impl PairTerms {
    pub(super) fn new(f: &mut F, a: &Value, b: &Value) -> PairTerms {
        let big = BigParts::new(f, a, b);
        let one_small = OneSmallParts::new(f, a, b);
        let b_small = f.cmp(CmpF::Olt, b, a);
        let s = f.add(a, b);
        let inverse_beta = inverse_beta_small(f, a, b, &s);
        PairTerms { big, one_small, b_small, inverse_beta }
    }

    /// These terms for arguments (p, q) that are (b, a) where `swapped`, else (a, b).
    pub(super) fn oriented<'a>(&'a self, swapped: &Value) -> Oriented<'a> {
        Oriented { terms: self, swapped: swapped.clone() }
    }
}

/// `PairTerms` for (p, q) = (b, a) where `swapped`, else (a, b).
pub(super) struct Oriented<'a> {
    terms: &'a PairTerms,
    swapped: Value,
}

impl Oriented<'_> {
    /// Another orientation of the same pair: for (q, p) where `swapped` (the fraction's
    /// own swap, on top of this one).
    fn swapped_again(&self, f: &mut F, swapped: &Value) -> Self {
        let not_self = f.not(&self.swapped);
        let either = f.sel(swapped, &not_self, &self.swapped);
        Oriented { terms: self.terms, swapped: either }
    }

    fn big(&self, f: &mut F) -> BigParts {
        let t = &self.terms.big;
        BigParts {
            mu: t.mu.clone(),
            lead: t.lead.clone(),
            log_x0: f.sel(&self.swapped, &t.log_y0, &t.log_x0),
            log_y0: f.sel(&self.swapped, &t.log_x0, &t.log_y0),
        }
    }

    fn one_small(&self, f: &mut F) -> OneSmallParts {
        let t = &self.terms.one_small;
        OneSmallParts { p_small: f.sel(&self.swapped, &self.terms.b_small, &t.p_small), ..t.clone() }
    }
}

/// `power_term_big`'s parts of (p, q) alone.
struct BigParts {
    /// mu(p + q) - mu(p) - mu(q), Stirling's corrections.
    mu: Value,
    /// sqrt(x0 q / 2pi), x0 = p / (p + q).
    lead: Value,
    log_x0: Value,
    /// log(y0), y0 = q / (p + q).
    log_y0: Value,
}

impl BigParts {
    fn new(f: &mut F, p: &Value, q: &Value) -> BigParts {
        let s = f.add(p, q);
        let mu_s = gamma::stirling_correction(f, &s);
        let mu_p = gamma::stirling_correction(f, p);
        let mu_q = gamma::stirling_correction(f, q);
        let x0 = f.div(p, &s);
        let y0 = f.div(q, &s);
        let log_x0 = f.log(&x0);
        let log_y0 = f.log(&y0);
        let mu = f.sub(&mu_s, &mu_p);
        let mu = f.sub(&mu, &mu_q);
        let inv_two_pi = f.c(1.0 / (2.0 * std::f64::consts::PI));
        let r = f.mul(&x0, q);
        let r = f.mul(&r, &inv_two_pi);
        let lead = f.sqrt(&r);
        BigParts { mu, lead, log_x0, log_y0 }
    }
}

/// The power term for p, q >= 10: Stirling's formula for the three gammas.
fn power_term_big(f: &mut F, parts: &BigParts, p: &Value, q: &Value, log_z: &Value, log_w: &Value, num: &Value) -> Value {
    // u = (z - x0) / x0 = (z (p + q) - p) / p and v = (w - y0) / y0 =
    // -(z (p + q) - p) / q: z - x0 itself would cancel near the mean (x0 rounded),
    // costing thousands of ulps in q v.
    let u = f.div(num, p);
    let minus_num = f.neg(num);
    let v = f.div(&minus_num, q);
    let ru = f.sub(log_z, &parts.log_x0);
    let rv = f.sub(log_w, &parts.log_y0);
    let lu = log1pmx(f, &u, &ru);
    let lv = log1pmx(f, &v, &rv);
    let e = f.fma(q, &lv, &parts.mu);
    let e = f.fma(p, &lu, &e);
    let ex = f.exp(&e);
    f.mul(&parts.lead, &ex)
}

/// `power_term_one_small`'s parts of (p, q) alone: sm = min(p, q), lg = max(p, q).
#[derive(Clone)]
struct OneSmallParts {
    /// p < q: whether p is sm.
    p_small: Value,
    s: Value,
    sm: Value,
    lg: Value,
    /// mu(p + q) - mu(lg) - sm, Stirling's corrections.
    mu: Value,
    /// log1p(sm / lg).
    l1p: Value,
    /// sm / gamma(1 + sm) = 1 / gamma(sm).
    inv_gamma_sm: Value,
}

impl OneSmallParts {
    fn new(f: &mut F, p: &Value, q: &Value) -> OneSmallParts {
        let s = f.add(p, q);
        let p_small = f.cmp(CmpF::Olt, p, q);
        let sm = f.sel(&p_small, p, q);
        let lg = f.sel(&p_small, q, p);
        let mu_s = gamma::stirling_correction(f, &s);
        let mu_lg = gamma::stirling_correction(f, &lg);
        let ratio = f.div(&sm, &lg);
        let l1p = exp_log::log1p(f.b, &ratio);
        let mu = f.sub(&mu_s, &mu_lg);
        let mu = f.sub(&mu, &sm);
        // gamma(sm) = gamma(1 + sm) / sm, straight-line (see `inverse_beta_small`).
        let gamma1p_sm = gamma::gamma1p_below_10(f, &sm);
        let inv_gamma_sm = f.div(&sm, &gamma1p_sm);
        OneSmallParts { p_small, s, sm, lg, mu, l1p, inv_gamma_sm }
    }
}

/// The power term for one of p, q small (sm < 10 <= lg): Stirling's formula for
/// gamma(sm + lg) / gamma(lg) only.
fn power_term_one_small(f: &mut F, parts: &OneSmallParts, z: &Value, w: &Value, log_z: &Value, log_w: &Value) -> Value {
    let OneSmallParts { p_small, s, sm, lg, mu, l1p, inv_gamma_sm } = parts;
    let half = f.c(0.5);
    let z_sm = f.sel(p_small, z, w);
    let log_z_lg = f.sel(p_small, log_w, log_z);
    let sz = f.mul(s, &z_sm);
    let log_sz = f.log(&sz);
    let lg_half = f.sub(lg, &half);
    let e = f.fma(&lg_half, l1p, mu);
    let e = f.fma(lg, &log_z_lg, &e);
    let e = f.fma(sm, &log_sz, &e);
    let ex = f.exp(&e);
    f.mul(&ex, inv_gamma_sm)
}

/// The power term for p, q < 10: z^p w^q gamma(p+q) / gamma(p) / gamma(q). In f64 the
/// exponent p log z + q log w is carried to twice the precision: where the term is tiny
/// (log z near -700) its rounding, an ulp of |p log z|, was hundreds of ulps of the
/// result, and betaincinv's Newton steps stalled on that noise (667 ULP at
/// betaincinv(0.328, 1.49, 7e-101), whose root is 2.4e-306). `inverse_beta`: 1 / B(p, q)
/// (`inverse_beta_small`).
#[allow(clippy::too_many_arguments)]
fn power_term_small(f: &mut F, p: &Value, q: &Value, log_z: &Value, log_w: &Value, x: &Value, swapped: &Value, inverse_beta: &Value) -> Value {
    let ex = if f.f64() {
        // log x and log(1 - x) as hi + lo: 1 - x is exact from 1/2 on; below, |log1p(-x)|
        // < 0.7 and its rounding is small in absolute terms.
        let (lx, lx_lo) = exp_log::log_double(f.b, x);
        let one = f.c(1.0);
        let xc = f.sub(&one, x);
        let (lxc, lxc_lo) = exp_log::log_double(f.b, &xc);
        let half = f.c(0.5);
        let upper = f.cmp(CmpF::Oge, x, &half);
        let zero = f.c(0.0);
        let log_xc = f.sel(swapped, log_z, log_w);
        let lxc = f.sel(&upper, &lxc, &log_xc);
        let lxc_lo = f.sel(&upper, &lxc_lo, &zero);
        let lz = f.sel(swapped, &lxc, &lx);
        let lz_lo = f.sel(swapped, &lxc_lo, &lx_lo);
        let lw = f.sel(swapped, &lx, &lxc);
        let lw_lo = f.sel(swapped, &lx_lo, &lxc_lo);
        let (a, a_lo) = f.two_prod(p, &lz);
        let a_lo = f.fma(p, &lz_lo, &a_lo);
        let (b, b_lo) = f.two_prod(q, &lw);
        let b_lo = f.fma(q, &lw_lo, &b_lo);
        let (e, e_lo) = f.two_sum(&a, &b);
        let lo = f.add(&a_lo, &b_lo);
        let e_lo = f.add(&e_lo, &lo);
        exp_log::exp_double(f.b, &e, &e_lo)
    } else {
        let e = f.mul(q, log_w);
        let e = f.fma(p, log_z, &e);
        f.exp(&e)
    };
    f.mul(&ex, inverse_beta)
}

/// 1 / B(p, q) = gamma(s) / (gamma(p) gamma(q)) for 0 < p, q < 10, s = p + q, from
/// gamma(1 + a) = a gamma(a) by `gamma1p_below` (straight-line products, where `gamma`'s
/// Stirling branch and reflection cost several times more on every lane): gamma(p) =
/// gamma(1 + p) / p, and gamma(s) = gamma(1 + (s - 1)) (s - 1 exact) from s = 1 on.
fn inverse_beta_small(f: &mut F, p: &Value, q: &Value, s: &Value) -> Value {
    let one = f.c(1.0);
    let s_big = f.cmp(CmpF::Oge, s, &one);
    let sm1 = f.sub(s, &one);
    let arg = f.sel(&s_big, &sm1, s);
    let g_s = gamma::gamma1p_below(f, &arg, 20);
    let g_s_small = f.div(&g_s, s);
    let g_s = f.sel(&s_big, &g_s, &g_s_small);
    let g_p = gamma::gamma1p_below_10(f, p);
    let g_q = gamma::gamma1p_below_10(f, q);
    // In this order nothing underflows for tiny p, q (p q would).
    let rp = f.div(p, &g_p);
    let rq = f.div(q, &g_q);
    let g = f.mul(&g_s, &rp);
    f.mul(&g, &rq)
}

/// `then` where `cond` holds, `other` elsewhere: as `branch` in scalar code, and for
/// `straight` (vector code, where an `scf.if` would leave the kernel scalar) both sides
/// computed and selected.
fn choose(f: &mut F, cond: &Value, straight: bool, then: impl FnOnce(&mut F) -> Value, other: impl FnOnce(&mut F) -> Value) -> Value {
    if straight {
        let t = then(f);
        let o = other(f);
        f.sel(cond, &t, &o)
    } else {
        branch(f, cond, then, other)
    }
}

/// `then` where `cond` holds, `other` elsewhere, as an `scf.if`: only one side runs. The
/// kernel is scalar code anyway (its loops stop IREE's vectorizer), so a `select` of both
/// sides would pay for both on every element.
pub(super) fn branch(f: &mut F, cond: &Value, then: impl FnOnce(&mut F) -> Value, other: impl FnOnce(&mut F) -> Value) -> Value {
    let ty = f.ty;
    f.b.scf_if(cond, &[ty], |b| vec![then(&mut F { b, ty })], |b| vec![other(&mut F { b, ty })]).remove(0)
}

/// The continued fraction's arguments: p, q, z with its rounding error z_lo (z + z_lo is
/// 1 - x exactly when swapped: every term is multiplied by z + z_lo, since near the mean
/// each half ulp of z costs hundreds) and s = p + q.
struct Fraction {
    p: Value,
    q: Value,
    s: Value,
    z: Value,
    z_lo: Value,
}

/// Lentz's state (m, h, c, d, the last step's factor) before the first step of
/// 1 / (1 + d1 / (1 + d2 / ...)) of I_z(p, q); `num` is z (p + q) - p (see
/// `offset_from_mean`); `skip` lanes start converged (the last factor 1).
fn fraction_start(f: &mut F, fr: &Fraction, num: &Value, skip: &Value) -> Vec<Value> {
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let tiny = f.k(TINY);
    let p1 = f.add(&fr.p, &one);
    // d = 1 / (1 - (p+q) z / (p+1)) = (p+1) / (1 - num), c = 1, h = d. Near the swap
    // point (a+1)/(a+b+2) the denominator cancels and h grows as large as its inverse:
    // every ulp of (p+q) z would cost hundreds in the result.
    let den = f.sub(&one, num);
    let d = fix_tiny(f, &den, &tiny);
    let d = f.div(&p1, &d);
    let start = f.sel(skip, &one, &zero);
    vec![one.clone(), d.clone(), one, d, start]
}

/// Whether Lentz's `state` goes on: its last factor is not yet within the tolerance of
/// 1, and the step cap is not reached.
fn fraction_goes_on(g: &mut F, state: &[Value]) -> Value {
    let one = g.c(1.0);
    let change = g.sub(&state[4], &one);
    let change = g.abs(&change);
    let tol = g.k(TOLERANCE);
    let go_on = g.cmp(CmpF::Oge, &change, &tol);
    let max = g.c(MAX_STEPS);
    let more = g.cmp(CmpF::Ole, &state[0], &max);
    g.and(&go_on, &more)
}

/// The two terms of step m: the even m (q - m) z / ((p + 2m - 1)(p + 2m)) and the odd
/// -(p + m)(p + q + m) z / ((p + 2m)(p + 2m + 1)).
fn fraction_terms(g: &mut F, fr: &Fraction, m: &Value) -> [Value; 2] {
    fraction_term_parts(g, fr, m).map(|(num, den)| g.div(&num, &den))
}

/// `fraction_terms` as (numerator, denominator) pairs.
fn fraction_term_parts(g: &mut F, fr: &Fraction, m: &Value) -> [(Value, Value); 2] {
    let one = g.c(1.0);
    let m2 = g.add(m, m);
    let pm2 = g.add(&fr.p, &m2);
    let qm = g.sub(&fr.q, m);
    let num = g.mul(m, &qm);
    let num = times_z(g, &num, &fr.z, &fr.z_lo);
    let pm2m1 = g.sub(&pm2, &one);
    let den = g.mul(&pm2m1, &pm2);
    let even = (num, den);
    let pm = g.add(&fr.p, m);
    let sm = g.add(&fr.s, m);
    let num = g.mul(&pm, &sm);
    let num = times_z(g, &num, &fr.z, &fr.z_lo);
    let num = g.neg(&num);
    let pm2p1 = g.add(&pm2, &one);
    let den = g.mul(&pm2, &pm2p1);
    [even, (num, den)]
}

/// One step of Lentz's method: its two terms (`fraction_terms`).
fn fraction_step(g: &mut F, fr: &Fraction, state: &[Value]) -> Vec<Value> {
    let (m, h, c, d) = (&state[0], &state[1], &state[2], &state[3]);
    let one = g.c(1.0);
    let tiny = g.k(TINY);
    let [even, odd] = fraction_terms(g, fr, m);
    let (c, d, step) = lentz_step(g, &even, c, d, &tiny);
    let h = g.mul(h, &step);
    let (c, d, step) = lentz_step(g, &odd, &c, &d, &tiny);
    let h = g.mul(&h, &step);
    let m = g.add(m, &one);
    vec![m, h, c, d, step]
}

/// The fraction h from Lentz's `state` to its end (an `scf.while`), by Wallis's
/// recurrences for its numerator and denominator, X_n+1 = X_n + d X_n-1 (one fma each),
/// two steps (four terms) at a time in f64 code and one in f32 code, then h = A / B and
/// both scaled by 1 / B (the one division of a block; it also keeps them in range).
/// Lentz's method divides twice per term, one after the other: its loop was a chain of
/// divisions (betainc 17.1 -> 15.5 ms on 1e5 float64 with this). The numerator is carried
/// as its deviation E = A - h B from the last block's h (`Deviation`). It stops where a
/// block changed h by less than the tolerance (relative), or past the step cap.
fn fraction_loop(f: &mut F, fr: &Fraction, state: &[Value]) -> Value {
    let ty = f.ty;
    let (m, h, c, d, step) = (&state[0], &state[1], &state[2], &state[3], &state[4]);
    let one = f.c(1.0);
    let e_prev = Deviation::from_lentz(f, h, c, d);
    // The carried change: |step - 1| before the first block (settled lanes skip the loop).
    let change = f.sub(step, &one);
    let change = f.abs(&change);
    // A and B grow by at most 1 + |d| a term, and below the swap point (z < (p + 1) /
    // (p + q + 2)) the terms are about 1 in size or less: a block moves them by a few
    // powers of two. One step in f32 code, which has less range to spare.
    let steps = if f.f64() { 2 } else { 1 };
    let done = f.b.scf_while(
        &[m.clone(), h.clone(), e_prev, d.clone(), change],
        |c, v| {
            let mut g = F { b: c, ty };
            let tol = g.k(TOLERANCE);
            let go_on = g.cmp(CmpF::Oge, &v[4], &tol);
            let max = g.c(MAX_STEPS);
            let more = g.cmp(CmpF::Ole, &v[0], &max);
            g.and(&go_on, &more)
        },
        |l, v| {
            let g = &mut F { b: l, ty };
            let one = g.c(1.0);
            let mut m = v[0].clone();
            let mut x = Deviation::start(g, &v[2], &v[3]);
            for _ in 0..steps {
                for term in fraction_terms(g, fr, &m) {
                    x.term(g, &term, None);
                }
                m = g.add(&m, &one);
            }
            let (h, e_prev, b_prev, change) = x.block_end(g, &v[1]);
            vec![m, h, e_prev, b_prev, change]
        },
    );
    done[1].clone()
}

/// Wallis's recurrences X_n = k_n X_n-1 + c_n X_n-2 (k_n = 1, c_n the term; or with the
/// terms' denominators multiplied through, `fraction_straight`) within one block, from
/// B_n = 1, with the numerator carried as E = A - h B for the block's starting h: it
/// satisfies the same recurrence, and the block ends at h + E / B. Carried as A itself,
/// the numerator sat on a binade's edge with B where the terms no longer counted: A = h
/// just above 1 kept its value while B = 1 lost an ulp of its own (half A's) to each term
/// of -7e-17, so h = A / B crept up 4 ulps a block, to the loop's cap (2e-12 off at
/// I_x(0.011, 0.28), x = 2.6e-16, from the fraction's start: betaincinv's Newton steps
/// stopped on it, 1e6 ULP from the root).
struct Deviation {
    e: Value,
    e_prev: Value,
    b: Value,
    b_prev: Value,
}

impl Deviation {
    /// E_n-1 = A_n-1 - h B_n-1 from Lentz's state (h = A_n / B_n, c = A_n / A_n-1, d =
    /// B_n-1 / B_n; B_n = 1): h / c - h d = h (1 - c d) / c.
    fn from_lentz(f: &mut F, h: &Value, c: &Value, d: &Value) -> Value {
        let one = f.c(1.0);
        let minus_c = f.neg(c);
        let r = f.fma(&minus_c, d, &one);
        let e = f.mul(h, &r);
        f.div(&e, c)
    }

    /// A block's start: E_n = 0, B_n = 1.
    fn start(f: &mut F, e_prev: &Value, b_prev: &Value) -> Deviation {
        let zero = f.c(0.0);
        let one = f.c(1.0);
        Deviation { e: zero, e_prev: e_prev.clone(), b: one, b_prev: b_prev.clone() }
    }

    /// One term c (with k, where given, the multiplier of X_n-1).
    fn term(&mut self, f: &mut F, c: &Value, k: Option<&Value>) {
        let (e, b) = match k {
            Some(k) => (f.mul(k, &self.e), f.mul(k, &self.b)),
            None => (self.e.clone(), self.b.clone()),
        };
        let e_next = f.fma(c, &self.e_prev, &e);
        let b_next = f.fma(c, &self.b_prev, &b);
        self.e_prev = std::mem::replace(&mut self.e, e_next);
        self.b_prev = std::mem::replace(&mut self.b, b_next);
    }

    /// The block's end from its starting h: (h + E / B; the next block's E_n-1 and B_n-1,
    /// rescaled to B_n = 1; the relative change |E / B| / |h|). E_n-1 about the new h is
    /// (E_n-1 - (E / B) B_n-1) / B.
    fn block_end(&self, f: &mut F, h_old: &Value) -> (Value, Value, Value, Value) {
        let one = f.c(1.0);
        let tiny = f.k(TINY);
        let b = fix_tiny(f, &self.b, &tiny);
        let scale = f.div(&one, &b);
        let dh = f.mul(&self.e, &scale);
        let h = f.add(h_old, &dh);
        let minus_dh = f.neg(&dh);
        let e_prev = f.fma(&minus_dh, &self.b_prev, &self.e_prev);
        let e_prev = f.mul(&e_prev, &scale);
        let b_prev = f.mul(&self.b_prev, &scale);
        let size = f.abs(&h);
        let change = f.abs(&dh);
        let change = f.div(&change, &size);
        (h, e_prev, b_prev, change)
    }
}

/// `steps` steps of Lentz's method as straight-line code (vector code): lanes that have
/// settled keep their state.
fn fraction_steps(f: &mut F, fr: &Fraction, mut state: Vec<Value>, steps: usize) -> Vec<Value> {
    for _ in 0..steps {
        let go_on = fraction_goes_on(f, &state);
        let next = fraction_step(f, fr, &state);
        state = next.iter().zip(&state).map(|(n, o)| f.sel(&go_on, n, o)).collect();
    }
    state
}

/// `steps` steps of the fraction from its start (`fraction_start`'s h) as straight-line
/// code (vector code), with no division but one a block: Wallis's recurrences with each
/// term's denominator multiplied through (an equivalence transformation: A_n = den_n
/// A_n-1 + den_n-1 num_n A_n-2, the same for B, leaves A_n / B_n as it was), A and B
/// rescaled by 1 / B after each block (two steps in f64 code, one in f32). Lentz's
/// method divided six times a step (`fraction_steps`). (h, settled): settled where the
/// last block changed h by less than the tolerance (not where anything overflowed).
fn fraction_straight(f: &mut F, fr: &Fraction, h: &Value, steps: usize) -> (Value, Value) {
    let one = f.c(1.0);
    let block = if f.f64() { 2 } else { 1 };
    // From the start (Lentz's c = 1, d = h).
    let e_prev = Deviation::from_lentz(f, h, &one, h);
    let mut x = Deviation::start(f, &e_prev, h);
    let mut den_prev = one.clone();
    let mut h = h.clone();
    let mut change = one.clone();
    let mut m = one.clone();
    for step in 0..steps {
        for (num, den) in fraction_term_parts(f, fr, &m) {
            let c = f.mul(&den_prev, &num);
            x.term(f, &c, Some(&den));
            den_prev = den;
        }
        m = f.add(&m, &one);
        if (step + 1) % block == 0 || step + 1 == steps {
            let (h_new, e_prev, b_prev, block_change) = x.block_end(f, &h);
            (h, change) = (h_new, block_change);
            x = Deviation::start(f, &e_prev, &b_prev);
        }
    }
    let tol = f.tolerance(TOLERANCE);
    let settled = f.cmp(CmpF::Olt, &change, &tol);
    (h, settled)
}

/// v (z + z_lo), rounded once.
fn times_z(f: &mut F, v: &Value, z: &Value, z_lo: &Value) -> Value {
    let low = f.mul(v, z_lo);
    f.fma(v, z, &low)
}

fn fix_tiny(f: &mut F, v: &Value, tiny: &Value) -> Value {
    let a = f.abs(v);
    let small = f.cmp(CmpF::Olt, &a, tiny);
    f.sel(&small, tiny, v)
}

/// One term `aa` of Lentz's method: (c, d, the factor of h).
fn lentz_step(f: &mut F, aa: &Value, c: &Value, d: &Value, tiny: &Value) -> (Value, Value, Value) {
    let one = f.c(1.0);
    let d = f.fma(aa, d, &one);
    let d = fix_tiny(f, &d, tiny);
    let d = f.div(&one, &d);
    let ac = f.div(aa, c);
    let c = f.add(&one, &ac);
    let c = fix_tiny(f, &c, tiny);
    let step = f.mul(&d, &c);
    (c, d, step)
}

/// sum_(n >= 0) (1-b)(2-b)...(n-b) x^n / (n! (a + n)), the power series of
/// B_x(a, b) / x^a (DLMF 8.17.8 with 8.17.7), in an `scf.while` until a term is below an
/// ulp of the sum; `skip` lanes stop at once.
fn power_series(f: &mut F, a: &Value, b: &Value, x: &Value, skip: &Value) -> Value {
    let ty = f.ty;
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let first = f.div(&one, a);
    let one_minus_b = f.sub(&one, b);
    let t1 = f.mul(&one_minus_b, x);
    let t1 = f.sel(skip, &zero, &t1);
    let a1 = f.add(a, &one);
    let term1 = f.div(&t1, &a1);
    let (a, b, x) = (a.clone(), b.clone(), x.clone());
    // The next term t_n / (a + n) is carried, so that the stopping test does not divide
    // again. The sum is compensated (Neumaier's, by TwoSum): up to thousands of terms
    // near x = 1.
    let done = f.b.scf_while(
        &[one.clone(), t1, term1, first, zero.clone()],
        |c, v| {
            let mut g = F { b: c, ty };
            let (n, term, sum) = (&v[0], &v[2], &v[3]);
            let term = g.abs(term);
            let tol = g.k(TOLERANCE);
            let limit = g.mul(sum, &tol);
            let go_on = g.cmp(CmpF::Ogt, &term, &limit);
            let max = g.c(MAX_STEPS);
            let more = g.cmp(CmpF::Ole, n, &max);
            g.and(&go_on, &more)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (n, t, term, sum, err) = (&v[0], &v[1], &v[2], &v[3], &v[4]);
            let one = g.c(1.0);
            let (sum, e) = g.two_sum(sum, term);
            let err = g.add(err, &e);
            let n1 = g.add(n, &one);
            let nb = g.sub(&n1, &b);
            let r = g.div(&nb, &n1);
            let r = g.mul(&r, &x);
            let t = g.mul(t, &r);
            let an = g.add(&a, &n1);
            let term = g.div(&t, &an);
            vec![n1, t, term, sum, err]
        },
    );
    f.add(&done[3], &done[4])
}

/// z (p + q) - p for z = x (`swapped` false: p = a, q = b) or z = 1 - x (true: p = b,
/// q = a), which is -(x (p + q) - q) there, both from x itself (not the rounded 1 - x,
/// whose half ulp costs hundreds where the density is large) and the exact sum p + q,
/// with FMAs: the relative offset of z from the mean p / (p + q), times p + q.
fn offset_from_mean(f: &mut F, p: &Value, q: &Value, x: &Value, swapped: &Value) -> Value {
    let (s, s_lo) = f.two_sum(p, q);
    let minus_p = f.neg(p);
    let minus_q = f.neg(q);
    let c = f.sel(swapped, &minus_q, &minus_p);
    let n = f.fma(x, &s, &c);
    let n = f.fma(x, &s_lo, &n);
    let minus_n = f.neg(&n);
    f.sel(swapped, &minus_n, &n)
}

/// How I_x(a, b) is computed for a, b > 0 finite and 0 < x < 1 (`prepare`).
///
/// Where b x <= 1, x <= 0.99 and x > (a+1)/(a+b+2) the power series (every term positive
/// for b <= 1), otherwise the continued fraction, on the swapped arguments past (a+1)/(a+b+2). The
/// series keeps small b accurate: there the swap's 1 - I_(1-x)(b, a) cancels (I near 1).
struct Plan {
    /// The power series serves (else the continued fraction).
    series: Value,
    /// The fraction runs on I_(1-x)(b, a).
    swap: Value,
    /// The fraction's arguments: (a, b, x) or, swapped, (b, a, 1 - x); w = 1 - z.
    p: Value,
    q: Value,
    z: Value,
    w: Value,
    /// z (p + q) - p (`offset_from_mean`).
    num: Value,
}

/// `series_ok`: the lanes where the series may serve (None: all); elsewhere the swapped
/// fraction does, whose 1 - I_(1-x)(b, a) is accurate only absolutely (see
/// `betainc_core`).
fn prepare(f: &mut F, a: &Value, b: &Value, x: &Value, series_ok: Option<&Value>) -> Plan {
    let one = f.c(1.0);
    let two = f.c(2.0);
    let xc = f.sub(&one, x);
    let a1 = f.add(a, &one);
    let s = f.add(a, b);
    let s2 = f.add(&s, &two);
    let cut = f.div(&a1, &s2);
    let bx = f.mul(b, x);
    let small_bx = f.cmp(CmpF::Ole, &bx, &one);
    let series_cut = f.c(SERIES_BELOW);
    let x_ok = f.cmp(CmpF::Ole, x, &series_cut);
    let past = f.cmp(CmpF::Ogt, x, &cut);
    // Below the cut the unswapped fraction is as accurate and far shorter (about 6 steps
    // where the series took 87 terms on average for x > 0.1 on accuracy_cases' points).
    let series = f.and(&small_bx, &x_ok);
    let series = f.and(&series, &past);
    let series = match series_ok {
        Some(ok) => f.and(&series, ok),
        None => series,
    };
    let not_series = f.not(&series);
    let swap = f.and(&past, &not_series);
    let p = f.sel(&swap, b, a);
    let q = f.sel(&swap, a, b);
    let z = f.sel(&swap, &xc, x);
    let w = f.sel(&swap, x, &xc);
    let num = offset_from_mean(f, &p, &q, x, &swap);
    Plan { series, swap, p, q, z, w, num }
}

/// log(1 - x), from x itself: a factor near 1 keeps its accuracy.
fn log_complement(f: &mut F, x: &Value) -> Value {
    let minus_x = f.neg(x);
    exp_log::log1p(f.b, &minus_x)
}

/// The power term x^a (1-x)^b / B(a, b) of `plan` (symmetric in (a, x) <-> (b, 1 - x):
/// swapped or not, the same).
/// `pair`: the parts of the arguments (a, b) alone (see `power_term`).
fn plan_power_term(f: &mut F, plan: &Plan, x: &Value, straight: bool, pair: Option<&Oriented<'_>>) -> Value {
    let Plan { p, q, z, w, num, swap, .. } = plan;
    let log_x = f.log(x);
    let log_xc = log_complement(f, x);
    let log_z = f.sel(swap, &log_xc, &log_x);
    let log_w = f.sel(swap, &log_x, &log_xc);
    // (p, q) is (a, b) swapped where the fraction swaps.
    let pair = pair.map(|pair| pair.swapped_again(f, swap));
    power_term(f, p, q, z, w, &log_z, &log_w, num, x, swap, straight, pair.as_ref())
}

/// I_x(a, b) from `plan` and its power term `pre`: the series or the continued fraction.
/// `started`: the continued fraction's state after stage one's steps (else from its start).
fn series_or_fraction(f: &mut F, plan: &Plan, a: &Value, b: &Value, x: &Value, pre: &Value, started: Option<&[Value]>) -> Value {
    let fr = fraction_of(f, plan, x);
    let not_series = f.not(&plan.series);
    // Only one of the series and the continued fraction runs (see `branch`); the other's
    // `skip` lanes would start converged anyway.
    let (a, b, x, pre) = (a.clone(), b.clone(), x.clone(), pre.clone());
    let Plan { series, swap, num, .. } = plan;
    branch(
        f,
        series,
        |g| {
            // The series: x^a / B(a, b) = pre / (1-x)^b (b |log(1-x)| <= 5 there).
            let sum = power_series(g, &a, &b, &x, &not_series);
            let log_xc = log_complement(g, &x);
            let bl = g.mul(&b, &log_xc);
            let minus_bl = g.neg(&bl);
            let undo = g.exp(&minus_bl);
            let i = g.mul(&pre, &undo);
            g.mul(&i, &sum)
        },
        |g| {
            let one = g.c(1.0);
            let state = match started {
                Some(state) => state.to_vec(),
                None => fraction_start(g, &fr, num, series),
            };
            let h = fraction_loop(g, &fr, &state);
            let i = g.mul(&pre, &h);
            let i = g.div(&i, &fr.p);
            let rest = g.sub(&one, &i);
            g.sel(swap, &rest, &i)
        },
    )
}

/// The continued fraction's arguments for `plan`.
fn fraction_of(f: &mut F, plan: &Plan, x: &Value) -> Fraction {
    // 1 - z is exact (z >= 1/2), and so is (1 - z) - x: the error of z = 1 - x.
    let one = f.c(1.0);
    let zero = f.c(0.0);
    let omz = f.sub(&one, &plan.z);
    let z_err = f.sub(&omz, x);
    let z_lo = f.sel(&plan.swap, &z_err, &zero);
    let s = f.add(&plan.p, &plan.q);
    Fraction { p: plan.p.clone(), q: plan.q.clone(), s, z: plan.z.clone(), z_lo }
}

/// (I_x(a, b), x^a (1-x)^b / B(a, b)) without the special values: for a, b > 0 finite
/// and 0 < x < 1. `series_ok` as `prepare`'s: a caller that needs I only to an absolute
/// accuracy, or to a relative one where I is not small, can spare the power series' long
/// sums near x = 1 (thousands of terms from x = 0.99: 1 / (1 - x) times log(1 / eps)).
pub(super) fn betainc_core(f: &mut F, a: &Value, b: &Value, x: &Value, series_ok: Option<&Value>) -> (Value, Value) {
    let plan = prepare(f, a, b, x, series_ok);
    let pre = plan_power_term(f, &plan, x, false, None);
    let r = series_or_fraction(f, &plan, a, b, x, &pre, None);
    (r, pre)
}

/// (I_x(a, b), the power term, settled) as straight-line code (vector code: betaincinv's
/// first Newton steps): the power term's forms selected and `steps` steps of the continued
/// fraction (`fraction_straight`); `series_ok` as `betainc_core`'s. `settled` is false
/// where those steps did not reach the fraction's tolerance, or where the power series
/// would serve: there the first value is not I. For a, b > 0 finite and 0 < x < 1.
/// `pair`: `PairTerms` of (a, b) (possibly computed for (b, a): see `PairTerms::oriented`).
pub(super) fn betainc_straight(f: &mut F, a: &Value, b: &Value, x: &Value, steps: usize, series_ok: Option<&Value>, pair: &Oriented<'_>) -> (Value, Value, Value) {
    let plan = prepare(f, a, b, x, series_ok);
    let pre = plan_power_term(f, &plan, x, true, Some(pair));
    let fr = fraction_of(f, &plan, x);
    let state = fraction_start(f, &fr, &plan.num, &plan.series);
    let (h, converged) = fraction_straight(f, &fr, &state[1], steps);
    let not_series = f.not(&plan.series);
    let settled = f.and(&converged, &not_series);
    let one = f.c(1.0);
    let i = f.mul(&pre, &h);
    let i = f.div(&i, &fr.p);
    let rest = f.sub(&one, &i);
    let i = f.sel(&plan.swap, &rest, &i);
    (i, pre, settled)
}

/// Safe stand-ins (1, 1, 1/2) for the arguments where they are special or x is 0 or 1:
/// (a, b, x, valid), valid meaning a, b > 0 finite and x in [0, 1].
fn safe_arguments(f: &mut F, a: &Value, b: &Value, x: &Value) -> (Value, Value, Value, Value) {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let a_ok = f.inside(a, 0.0, f64::INFINITY);
    let b_ok = f.inside(b, 0.0, f64::INFINITY);
    let x_low = f.cmp(CmpF::Oge, x, &zero);
    let x_high = f.cmp(CmpF::Ole, x, &one);
    let valid = f.all(&[&a_ok, &b_ok, &x_low, &x_high]);
    let inner_x = f.inside(x, 0.0, 1.0);
    let safe = f.and(&valid, &inner_x);
    let sa = f.sel(&safe, a, &one);
    let sb = f.sel(&safe, b, &one);
    let sx = f.sel(&safe, x, &half);
    (sa, sb, sx, valid)
}

/// The result `r` on the regular arguments, and the special values elsewhere.
fn with_specials(f: &mut F, x: &Value, valid: &Value, r: &Value) -> Value {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let at_zero = f.cmp(CmpF::Oeq, x, &zero);
    let r = f.sel(&at_zero, &zero, r);
    let at_one = f.cmp(CmpF::Oeq, x, &one);
    let r = f.sel(&at_one, &one, &r);
    let nan = f.c(f64::NAN);
    f.sel(valid, &r, &nan)
}

/// Steps of the continued fraction taken as vector code in stage one: most lanes need a few
/// (see `BETAINC`).
const VECTOR_STEPS: usize = 6;

/// Stage one (vector code): the power term (logarithms, gammas and an exponential) and
/// the continued fraction's first `VECTOR_STEPS` steps: (pre, Lentz's state).
fn first_stage(blk: &mut Block, args: &[Value], _: &[Value]) -> Vec<Value> {
    let mut f = F::new(blk, &args[2]);
    let f = &mut f;
    let (a, b, x, _) = safe_arguments(f, &args[0], &args[1], &args[2]);
    let plan = prepare(f, &a, &b, &x, None);
    let pre = plan_power_term(f, &plan, &x, true, None);
    let fr = fraction_of(f, &plan, &x);
    let state = fraction_start(f, &fr, &plan.num, &plan.series);
    let mut values = vec![pre];
    values.extend(fraction_steps(f, &fr, state, VECTOR_STEPS));
    values
}

/// Stage two (scalar code): the series, or the rest of the continued fraction, and the
/// special values.
fn last_stage(blk: &mut Block, args: &[Value], carried: &[Value]) -> Vec<Value> {
    let mut f = F::new(blk, &args[2]);
    let f = &mut f;
    let (a, b, x, valid) = safe_arguments(f, &args[0], &args[1], &args[2]);
    let plan = prepare(f, &a, &b, &x, None);
    let r = series_or_fraction(f, &plan, &a, &b, &x, &carried[0], Some(&carried[1..]));
    vec![with_specials(f, &args[2], &valid, &r)]
}

/// betainc(a, b, x) in two stages (see `Stage`).
pub const BETAINC: [Stage; 2] = [Stage { yields: 6, run: first_stage }, Stage { yields: 1, run: last_stage }];

/// betainc(a, b, x) in one kernel (inside a fused `Composite`, which is scalar code for
/// its loops): each lane computes only its own power term's form and its own loop; the
/// stages' vector-code forms (all three power-term forms, six fraction steps for every
/// lane) made `exp(betainc(a, b, x))` 2x slower there (bench_scalar's points, 1e5 f64: 43.9
/// ms against 21.8 for NUMBA).
pub fn betainc(blk: &mut Block, a: &Value, b: &Value, x: &Value) -> Value {
    let mut f = F::new(blk, x);
    let f = &mut f;
    let (sa, sb, sx, valid) = safe_arguments(f, a, b, x);
    let (r, _) = betainc_core(f, &sa, &sb, &sx, None);
    with_specials(f, x, &valid, &r)
}
