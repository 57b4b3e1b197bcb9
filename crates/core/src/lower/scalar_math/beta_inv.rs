//! The inverse of the regularized incomplete beta function in x: betaincinv(a, b, y), the
//! x with I_x(a, b) = y. PyTensor's Op has no C code: it runs scipy's `betaincinv`, whose
//! special values are the model.
//!
//! - Which equation: I_x(a, b) = y directly, unless y > 1/4 (`FLOAT64_REFLECT_FROM`; for a
//!   float32 result y > 1e-4: `FLOAT32_ABSOLUTE_FROM`) and the root is past 1/2 (y >
//!   I_(1/2)(a, b)) or y > 0.9; there I_z(b, a) = 1 - y (within an ulp of y) for z = 1 - x, so
//!   the target is the smaller tail (I near 1 is accurate only absolutely: with a small
//!   density at the root the direct equation lost up to 1e13 ulps). Reflecting a root
//!   below 1/2 costs its relative accuracy in 1 - z (ulp(z) / x), so it is done only
//!   past 0.9. A tiny root with y > 0.9 (a near 0.01, b in the hundreds) lost ulp(1) /
//!   ulp(x) to that rounding (1.3e5 ULP at betaincinv(0.0103, 291, 0.935)); solving those
//!   directly from the start was worse (8e7 ULP at betaincinv(0.49, 653, 1 - 1.1e-10)), so
//!   they are solved reflected and then polished by Newton's steps on the direct equation
//!   (`polish`).
//! - A starting point (as the betainc branch's unwired attempt): for p, q >= 1 a normal
//!   approximation mapped through p / (p + q e^(2w)) (Abramowitz and Stegun 26.5.22, the
//!   normal quantile from our erfcinv); below, the leading terms x^p / (p B) and
//!   (1-x)^q / (q B) of the two tails, with B approximated so that they add up to one.
//!   Computed for both equations, as vector code.
//! - Newton on log I in log x (I is like x^p near 0: the step is multiplicative, x e^-s,
//!   s = log(I / y) I / (x I'), x I' = x^p (1-x)^q / B / (1 - x) from beta.rs's power
//!   term), with Halley's correction (the second derivative is the density's, no extra
//!   cost), bracketed in (0, 1) (newton.rs, shared with the incomplete gamma inverses).
//! - In two kernels (`Stage`, elemwise.rs), as gammaincinv: the starts and the first
//!   Newton steps as vector code, over betainc's straight-line form (its power term and
//!   a fixed count of fraction steps: beta.rs's `betainc_straight`), which settles most
//!   lanes; then a loop (scalar code) for the rest, over betainc's loops.
//! - A root below the smallest subnormal (the lower tail's leading term, exact there up
//!   to a factor 1 + O(x), underflows) is 0.
//!
//! Accuracy follows betainc's (beta.rs: tens of ulps where I is tiny, (a + b) / 8 near the
//! mean) times the root's condition I / (x I'), which is 1 / a in the lower tail.
//! Special values (scipy's): nan where a <= 0, b <= 0, y outside [0, 1] or anything nan;
//! 0 at y = 0 and 1 at y = 1; for y inside, 1 where only a is infinite, 0 where only b
//! is, nan where both are.

use super::beta::{betainc_core, betainc_straight, branch, PairTerms};
use super::erf::erfcinv;
use super::exp_log::log1p;
use super::gamma::{lgamma1p, lgamma_positive};
use super::newton::{halley, newton_loop, unrolled_where, State, Step};
use super::{run_stages, Stage, F};
use crate::mlir::{Arith, Block, CmpF, ScalarType, Value};

/// The most Newton steps (each a betainc).
const STEPS: f64 = 40.0;
/// Past this y the equation is reflected even for a root below 1/2.
const NEAR_ONE: f64 = 0.9;
/// `polish` runs on roots below this (and below a / 16).
const POLISH_BELOW: f64 = 1.0 / 64.0;
/// The most Newton steps of `polish` (from a root within ulp(1) of it, like x^a: one or two).
const POLISH_STEPS: f64 = 8.0;


/// The starting point for I_x(p, q) = y, p, q > 0 finite, 0 < y <= 1/2 or a root below
/// 1/2: inside (0, 1).
fn start(f: &mut F, p: &Value, q: &Value, y: &Value) -> Value {
    let one = f.c(1.0);
    let two = f.c(2.0);
    // Normal approximation: zq the upper normal quantile of y (the lower of 1 - y).
    let y2 = f.mul(y, &two);
    let zq = erfcinv(f.b, &y2);
    let sqrt2 = f.c(std::f64::consts::SQRT_2);
    let zq = f.mul(&zq, &sqrt2);
    let three = f.c(3.0);
    let six = f.c(6.0);
    let zz = f.mul(&zq, &zq);
    let lam = f.sub(&zz, &three);
    let lam = f.div(&lam, &six);
    let tp = f.mul(&two, p);
    let tp = f.sub(&tp, &one);
    let ip = f.div(&one, &tp);
    let tq = f.mul(&two, q);
    let tq = f.sub(&tq, &one);
    let iq = f.div(&one, &tq);
    let sum = f.add(&ip, &iq);
    let h = f.div(&two, &sum);
    let lh = f.add(&lam, &h);
    let root = f.sqrt(&lh);
    let w1 = f.mul(&zq, &root);
    let w1 = f.div(&w1, &h);
    let diff = f.sub(&iq, &ip);
    let five_sixths = f.c(5.0 / 6.0);
    let two_thirds = f.c(2.0 / 3.0);
    let th = f.div(&two_thirds, &h);
    let k = f.add(&lam, &five_sixths);
    let k = f.sub(&k, &th);
    let w2 = f.mul(&diff, &k);
    let w = f.sub(&w1, &w2);
    let w2x = f.mul(&two, &w);
    let e = f.exp(&w2x);
    let qe = f.mul(q, &e);
    let den = f.add(p, &qe);
    let normal = f.div(p, &den);
    // Tails: x^p / (p B) and (1-x)^q / (q B), B ~ (p / s)^p / p + (q / s)^q / q.
    let s = f.add(p, q);
    let lp = f.div(p, &s);
    let lq = f.div(q, &s);
    let llp = f.log(&lp);
    let llq = f.log(&lq);
    let ep = f.mul(p, &llp);
    let ep = f.exp(&ep);
    let tl = f.div(&ep, p);
    let eq = f.mul(q, &llq);
    let eq = f.exp(&eq);
    let tu = f.div(&eq, q);
    let wsum = f.add(&tl, &tu);
    let ratio = f.div(&tl, &wsum);
    let low_tail = f.cmp(CmpF::Olt, y, &ratio);
    let inv_p = f.div(&one, p);
    let inv_q = f.div(&one, q);
    let a1 = f.mul(p, &wsum);
    let a1 = f.mul(&a1, y);
    let la1 = f.log(&a1);
    let la1 = f.mul(&la1, &inv_p);
    let x_low = f.exp(&la1);
    let ymc = f.sub(&one, y);
    let b1 = f.mul(q, &wsum);
    let b1 = f.mul(&b1, &ymc);
    let lb1 = f.log(&b1);
    let lb1 = f.mul(&lb1, &inv_q);
    let eb = f.exp(&lb1);
    let x_high = f.sub(&one, &eb);
    let tails = f.sel(&low_tail, &x_low, &x_high);
    let p_big = f.cmp(CmpF::Oge, p, &one);
    let q_big = f.cmp(CmpF::Oge, q, &one);
    let both = f.and(&p_big, &q_big);
    let g = f.sel(&both, &normal, &tails);
    // Inside (0, 1), or the middle when the formulas fail.
    let zero = f.c(0.0);
    let inside = f.cmp(CmpF::Ogt, &g, &zero);
    let below = f.cmp(CmpF::Olt, &g, &one);
    let inside = f.and(&inside, &below);
    let half = f.c(0.5);
    f.sel(&inside, &g, &half)
}

/// Whether the root of I_x(p, q) = y is below the smallest subnormal: the lower tail's
/// leading term x = (y p B(p, q))^(1/p) underflows to 0.
fn root_underflows(f: &mut F, p: &Value, q: &Value, y: &Value) -> Value {
    // log(p B(p, q)) = lgamma(1 + p) + lgamma(q) - lgamma(p + q).
    let s = f.add(p, q);
    let l1 = lgamma1p(f, p);
    let l2 = lgamma_positive(f, q);
    let l3 = lgamma_positive(f, &s);
    let lb = f.add(&l1, &l2);
    let lb = f.sub(&lb, &l3);
    let ly = f.log(y);
    let e = f.add(&ly, &lb);
    let e = f.div(&e, p);
    let x = f.exp(&e);
    let zero = f.c(0.0);
    f.cmp(CmpF::Oeq, &x, &zero)
}

/// Whether the root of I_x(p, q) = y (p, q > 0 finite, 0 < y < 1) may be below the smallest
/// subnormal: a cheap test (no lgamma) that `root_underflows` then settles.
fn may_underflow(f: &mut F, p: &Value, q: &Value, y: &Value) -> Value {
    let one = f.c(1.0);
    // A lower bound of log(p B(p, q)) = lgamma(p + 1) + lgamma(q) - lgamma(p + q): lgamma >=
    // -0.1215 on the positives, and lgamma(s) <= -log s below 1 (gamma(s + 1) <= 1), <= (s -
    // 1/2) log s - s + 1.01 from 1 on (Stirling's bound, sqrt(2 pi) e^(1/12) < e^1.01).
    // Where log y + that bound >= -744 p, x = (y p B)^(1/p) >= e^-744 > 0.
    let s = f.add(p, q);
    let log_s = f.log(&s);
    let below_one = f.cmp(CmpF::Olt, &s, &one);
    let minus_log_s = f.neg(&log_s);
    let half = f.c(0.5);
    let s_half = f.sub(&s, &half);
    let stirling = f.mul(&s_half, &log_s);
    let stirling = f.sub(&stirling, &s);
    let c = f.c(1.01);
    let stirling = f.add(&stirling, &c);
    let upper = f.sel(&below_one, &minus_log_s, &stirling);
    let floor = f.c(-0.25);
    let lower = f.sub(&floor, &upper);
    let log_y = f.log(y);
    let lhs = f.add(&log_y, &lower);
    let limit = f.c(-744.0);
    let rhs = f.mul(&limit, p);
    f.cmp(CmpF::Olt, &lhs, &rhs)
}

/// Newton's step for I_x(p, q) = y at x from I = I_x(p, q) and its power term `pre`
/// (beta.rs: x^p (1-x)^q / B(p, q)).
#[allow(clippy::too_many_arguments)]
fn newton_step(g: &mut F, p: &Value, q: &Value, y: &Value, x: &Value, i: &Value, pre: &Value) -> Step {
    let zero = g.c(0.0);
    let one = g.c(1.0);
    let err = g.sub(i, y);
    let past = g.cmp(CmpF::Ogt, &err, &zero);
    // s = log(I / y) I (1 - x) / pre; x e^-s.
    let rel = g.div(&err, y);
    let log_ratio = log1p(g.b, &rel);
    let xc = g.sub(&one, x);
    let ratio = g.mul(i, &xc);
    let ratio = g.div(&ratio, pre);
    let s = g.mul(&log_ratio, &ratio);
    // Halley's correction (newton.rs): k = (p - (q - 1) x / (1 - x)) I / (x I') - 1, from
    // d log(x I') / d log x = p - (q - 1) x / (1 - x).
    let qm1 = g.sub(q, &one);
    let odds = g.div(x, &xc);
    let k = g.mul(&qm1, &odds);
    let k = g.sub(p, &k);
    let k = g.mul(&k, &ratio);
    let k = g.sub(&k, &one);
    let s = halley(g, &s, &log_ratio, &k);
    let minus_s = g.neg(&s);
    let factor = g.exp(&minus_s);
    let next = g.mul(x, &factor);
    let exact = g.cmp(CmpF::Oeq, &err, &zero);
    let scale = g.b.arith(Arith::MinimumF, x, &xc);
    Step { past, next, exact, scale }
}

/// The arguments on safe stand-ins (a = b = 1, y = 1/2) where they are special:
/// (a, b, y, regular).
fn setup(f: &mut F, a: &Value, b: &Value, y: &Value) -> (Value, Value, Value, Value) {
    let one = f.c(1.0);
    let half = f.c(0.5);
    let a_regular = f.inside(a, 0.0, f64::INFINITY);
    let b_regular = f.inside(b, 0.0, f64::INFINITY);
    let y_inside = f.inside(y, 0.0, 1.0);
    let regular = f.all(&[&a_regular, &b_regular, &y_inside]);
    let sa = f.sel(&regular, a, &one);
    let sb = f.sel(&regular, b, &one);
    let sy = f.sel(&regular, y, &half);
    (sa, sb, sy, regular)
}

/// Newton steps taken as vector code in stage one, for a float32 result: from the starts
/// most lanes settle in three (two Halley steps and one that confirms), as gammaincinv's.
const VECTOR_STEPS: usize = 3;
/// For a float64 result: two, after which the loop's steps over betainc's loops finish
/// (see `first_steps`). With the Wallis loops' drift gone (`Deviation`, beta.rs) the
/// straight-line betainc settles as the loop's does, so the loop's bracket, with that x
/// for an end, no longer holds roots a few ulps off (before it, two steps left 60 ULP at
/// test_betainc's (0.0945, 17.9, 0.391); one was taken then). Two steps instead of one:
/// 8-20% faster by domain group (a /tmp script, 50000 points a group).
const VECTOR_STEPS_F64: usize = 2;
/// Steps of the continued fraction in stage one's straight-line betainc: lanes that need
/// more go on in stage two's loop.
const FRACTION_STEPS: usize = 30;

/// Whether the reflected equation I_z(b, a) = 1 - y (z = 1 - x) is solved (see the module
/// comment); `i_half` is I_(1/2)(a, b) (only read where `half_decides`).
fn reflects(f: &mut F, y: &Value, i_half: &Value) -> Value {
    let past_root = f.cmp(CmpF::Ogt, y, i_half);
    let near_one = f.c(NEAR_ONE);
    let near_one = f.cmp(CmpF::Ogt, y, &near_one);
    let past_root = f.or(&past_root, &near_one);
    let from = f.c(reflect_from(f));
    let past_half = f.cmp(CmpF::Ogt, y, &from);
    f.and(&past_root, &past_half)
}

/// The equation I_x(p, q) = t solved: (b, a, 1 - y) where `upper` (it reflects), else
/// (a, b, y).
fn oriented(f: &mut F, a: &Value, b: &Value, y: &Value, upper: &Value) -> (Value, Value, Value) {
    let one = f.c(1.0);
    let p = f.sel(upper, b, a);
    let q = f.sel(upper, a, b);
    let yc = f.sub(&one, y);
    let t = f.sel(upper, &yc, y);
    (p, q, t)
}

/// For a float32 result (f64 code) a target t from here on is met to 2^-53 / t < 1e-12
/// relative by an I accurate only absolutely. So betainc's power series may give way to
/// the swapped fraction (its 1 - I_(1-x)(b, a)): the series took thousands of terms near
/// x = 1 (small b), 4.4 us an element on a fifth of the points with a, b < 10. And a root
/// past 1/2 is found from the reflected equation I_z(b, a) = 1 - y for y below 1/2 too:
/// Newton's steps in log x crept to a root near 1 (with b < 0.1 <= 1 <= a, half the
/// points were not settled after stage one's steps).
const FLOAT32_ABSOLUTE_FROM: f64 = 1e-4;

/// The lanes where betainc's power series may serve the Newton steps: all for a float64
/// result; for a float32 one where the target `t` is below `FLOAT32_ABSOLUTE_FROM`.
fn series_ok(f: &mut F, t: &Value) -> Value {
    if f.for_float32() {
        let below = f.c(FLOAT32_ABSOLUTE_FROM);
        f.cmp(CmpF::Olt, t, &below)
    } else {
        f.b.constant_int(1, ScalarType::I1)
    }
}

/// Past this y a root past 1/2 is found from the reflected equation (see the module
/// comment): `FLOAT64_REFLECT_FROM`, or for a float32 result `FLOAT32_ABSOLUTE_FROM`.
fn reflect_from(f: &F) -> f64 {
    if f.for_float32() {
        FLOAT32_ABSOLUTE_FROM
    } else {
        FLOAT64_REFLECT_FROM
    }
}

/// For a float64 result: from 1/4 on 1 - y is within one ulp of y of the exact 1 - y
/// (exact from 1/2). With 1/2, roots past 1/2 for y in (1/4, 1/2] crept from below in log
/// x (betaincinv(28.09, 0.0117, 0.469), root 1 - 6e-26: 0.99999999999954, 4.1e3 ULP); on
/// 20,000 points of accuracy_cases' sampler (/work/notes/s33/binv.py, seed 1) 54 points
/// better by more than 4 ULP, none worse, mean 74.5 -> 65.5 ULP. From 0.1 on 3 points were
/// worse (by up to 6.5 ULP), from 1e-4 on 21 (by up to 91).
const FLOAT64_REFLECT_FROM: f64 = 0.25;

/// Whether I_(1/2)(a, b) decides the equation: `reflect_from` < y <= 0.9.
fn half_decides(f: &mut F, y: &Value) -> Value {
    let from = f.c(reflect_from(f));
    let above_half = f.cmp(CmpF::Ogt, y, &from);
    let near_one = f.c(NEAR_ONE);
    let not_near_one = f.cmp(CmpF::Ole, y, &near_one);
    f.and(&above_half, &not_near_one)
}

/// Stage one (vector code): the starting points of both equations, the equation where
/// I_(1/2)(a, b) settles in straight-line code, and its first `VECTOR_STEPS` Newton steps
/// over a straight-line betainc (`betainc_straight`), which settle most lanes. Yields the
/// iteration's state, then upper, undecided (1 or 0) and both starts: lanes whose
/// I_(1/2) did not settle (undecided) and those whose root may underflow take no step
/// here. (float32, 5e4 points with y uniform, a and b log-uniform in [0.01, 1000]: 67 ms
/// with every step scalar code, 28 ms so; float64: 87 -> 78 ms.)
fn first_steps(blk: &mut Block, args: &[Value], _: &[Value]) -> Vec<Value> {
    let mut f = F::new(blk, &args[2]);
    let f = &mut f;
    let (sa, sb, sy, regular) = setup(f, &args[0], &args[1], &args[2]);
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let yc = f.sub(&one, &sy);
    let x_low = start(f, &sa, &sb, &sy);
    let x_up = start(f, &sb, &sa, &yc);
    let decides = half_decides(f, &sy);
    // Compared with y in (1/4, 0.9], I_(1/2) needs only absolute accuracy: the swapped
    // fraction serves it, never the series (which at x = 1/2 has 50 terms).
    // (`no_series` also serves as "no lane starts settled" below.)
    let no_series = f.b.constant_int(0, ScalarType::I1);
    // The power term's parts of (a, b) alone, for I_(1/2) and every step.
    let pair = PairTerms::new(f, &sa, &sb);
    let (i_half, _, half_settled) = betainc_straight(f, &sa, &sb, &half, FRACTION_STEPS, Some(&no_series), &pair.oriented(&no_series));
    let half_unsettled = f.not(&half_settled);
    let undecided = f.and(&decides, &half_unsettled);
    let upper = reflects(f, &sy, &i_half);
    let (p, q, t) = oriented(f, &sa, &sb, &sy, &upper);
    let x0 = f.sel(&upper, &x_up, &x_low);
    let may = may_underflow(f, &p, &q, &t);
    let series_ok = series_ok(f, &t);
    let waits = f.or(&undecided, &may);
    let not_waiting = f.not(&waits);
    let eligible = f.and(&not_waiting, &regular);
    let state = State::new(f, &x0, &no_series, &zero, &one);
    let count = if f.for_float32() { VECTOR_STEPS } else { VECTOR_STEPS_F64 };
    let oriented_pair = pair.oriented(&upper);
    let state = unrolled_where(f, state, count, STEPS, &|g, x| {
        let (i, pre, settled) = betainc_straight(g, &p, &q, x, FRACTION_STEPS, Some(&series_ok), &oriented_pair);
        let step = newton_step(g, &p, &q, &t, x, &i, &pre);
        (step, Some(g.and(&settled, &eligible)))
    });
    // Only a float32 result's lanes end here. A float64 root is found by the loop's steps
    // over betainc's loops, which start anew from stage one's x: in (0, 1), with no last
    // step. Measured while the straight-line fraction still settled to 16 ulps (before
    // `Deviation`, beta.rs): where stage one took the last steps as well, or set the
    // bracket's ends by signs of I - y within that noise of the root (holding the loop's
    // steps there), the roots' residuals doubled (median 1.2e-15 against 6e-16 relative,
    // on the sixth of accuracy_cases' float64 points where the roots differed).
    let mut values = state.values();
    if !f.for_float32() {
        values[4] = one.clone();
    }
    values[2] = zero.clone();
    values[3] = one.clone();
    let upper = f.sel(&upper, &one, &zero);
    let undecided = f.sel(&undecided, &one, &zero);
    values.extend([upper, undecided, x_low, x_up]);
    values
}

/// Stage two (scalar code): the lanes stage one left unsettled (the equation decided by
/// betainc's loop where stage one could not, the underflowing roots), to the root, and the
/// special values.
fn roots(blk: &mut Block, args: &[Value], carried: &[Value]) -> Vec<Value> {
    let (a, b, y) = (&args[0], &args[1], &args[2]);
    let mut f = F::new(blk, y);
    let f = &mut f;
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let half = f.c(0.5);
    let inf = f.c(f64::INFINITY);
    let nan = f.c(f64::NAN);
    // valid: a, b > 0 and y in [0, 1]; regular: also finite a, b and y inside (0, 1).
    let a_pos = f.cmp(CmpF::Ogt, a, &zero);
    let b_pos = f.cmp(CmpF::Ogt, b, &zero);
    let y_low = f.cmp(CmpF::Oge, y, &zero);
    let y_high = f.cmp(CmpF::Ole, y, &one);
    let valid = f.all(&[&a_pos, &b_pos, &y_low, &y_high]);
    let (sa, sb, sy, _) = setup(f, a, b, y);
    let (x_low, x_up) = (&carried[7], &carried[8]);
    // The undecided lanes' I_(1/2) (elsewhere the branch skips it: the kernel is scalar
    // code, its loops are not vectorized); 2 stands in for "not past".
    let undecided = f.cmp(CmpF::Ogt, &carried[6], &half);
    let (ha, hb, hh) = (sa.clone(), sb.clone(), half.clone());
    let i_half = branch(
        f,
        &undecided,
        |g| {
            let no_series = g.b.constant_int(0, ScalarType::I1);
            betainc_core(g, &ha, &hb, &hh, Some(&no_series)).0
        },
        |g| g.c(2.0),
    );
    let upper_late = reflects(f, &sy, &i_half);
    let upper_early = f.cmp(CmpF::Ogt, &carried[5], &half);
    let upper = f.sel(&undecided, &upper_late, &upper_early);
    let (p, q, t) = oriented(f, &sa, &sb, &sy, &upper);
    let late_start = f.sel(&upper, x_up, x_low);
    let x0 = f.sel(&undecided, &late_start, &carried[1]);
    let series_ok = series_ok(f, &t);
    // A root below the smallest subnormal is 0 (stage one stepped none of these lanes).
    let may = may_underflow(f, &p, &q, &t);
    let (up, uq, ut) = (p.clone(), q.clone(), t.clone());
    let underflow = branch(
        f,
        &may,
        |g| {
            let u = root_underflows(g, &up, &uq, &ut);
            let one = g.c(1.0);
            let zero = g.c(0.0);
            g.sel(&u, &one, &zero)
        },
        |g| g.c(0.0),
    );
    let underflow = f.cmp(CmpF::Ogt, &underflow, &half);
    let x0 = f.sel(&underflow, &zero, &x0);
    let size = f.sel(&underflow, &zero, &carried[4]);
    let state = State([carried[0].clone(), x0, carried[2].clone(), carried[3].clone(), size]);
    let z = newton_loop(f, state, STEPS, &|g, x| {
        let (i, pre) = betainc_core(g, &p, &q, x, Some(&series_ok));
        newton_step(g, &p, &q, &t, x, &i, &pre)
    })
    .x()
    .clone();
    let zc = f.sub(&one, &z);
    let r = f.sel(&upper, &zc, &z);
    let r = polish(f, &sa, &sb, &sy, &r, &upper);
    // Infinite parameters (y inside): all the mass at 1 (a) or at 0 (b); both: nan.
    let a_inf = f.cmp(CmpF::Oeq, a, &inf);
    let b_inf = f.cmp(CmpF::Oeq, b, &inf);
    let r = f.sel(&a_inf, &one, &r);
    let r = f.sel(&b_inf, &zero, &r);
    let both_inf = f.and(&a_inf, &b_inf);
    let r = f.sel(&both_inf, &nan, &r);
    let at_zero = f.cmp(CmpF::Oeq, y, &zero);
    let r = f.sel(&at_zero, &zero, &r);
    let at_one = f.cmp(CmpF::Oeq, y, &one);
    let r = f.sel(&at_one, &one, &r);
    vec![f.sel(&valid, &r, &nan)]
}

/// A root of the reflected equation far below 1/2 (y > 0.9: `NEAR_ONE`) is 1 - z rounded,
/// ulp(1) / x relative (1e6 ULP at betaincinv(0.0108, 83.7, 0.908)). Where x < a / 16 and
/// x < `POLISH_BELOW`, Newton's steps on the direct equation from there, whose residual
/// I - y is accurate to about eps absolute, take it to about eps / (a y) relative (I is
/// like x^a). On 20,000 points of accuracy_cases' sampler (/work/notes/s33/binv.py, seed
/// 1): max 1.03e6 -> 748 ULP, mean 65.5 -> 5.3, 117 points better by more than 4 ULP, 2
/// worse (by 25 and 28). Without the a / 16 and 1/64 limits, roots near 1 of large a went
/// astray (1e14 ULP).
fn polish(f: &mut F, a: &Value, b: &Value, y: &Value, r: &Value, upper: &Value) -> Value {
    let zero = f.c(0.0);
    let sixteenth = f.c(1.0 / 16.0);
    let limit = f.mul(a, &sixteenth);
    let far = f.c(POLISH_BELOW);
    let limit = f.b.arith(Arith::MinimumF, &limit, &far);
    let small = f.cmp(CmpF::Olt, r, &limit);
    let positive = f.cmp(CmpF::Ogt, r, &zero);
    let tiny = f.all(&[upper, &small, &positive]);
    let (pa, pb, py, pr) = (a.clone(), b.clone(), y.clone(), r.clone());
    branch(
        f,
        &tiny,
        |g| {
            let no = g.b.constant_int(0, ScalarType::I1);
            let yes = g.b.constant_int(1, ScalarType::I1);
            let zero = g.c(0.0);
            let one = g.c(1.0);
            let state = State::new(g, &pr, &no, &zero, &one);
            newton_loop(g, state, POLISH_STEPS, &|h, x| {
                let (i, pre) = betainc_core(h, &pa, &pb, x, Some(&yes));
                newton_step(h, &pa, &pb, &py, x, &i, &pre)
            })
            .x()
            .clone()
        },
        |_| pr.clone(),
    )
}

/// betaincinv(a, b, y) in two stages (see `Stage`).
pub const BETAINCINV: [Stage; 2] = [Stage { yields: 9, run: first_steps }, Stage { yields: 1, run: roots }];

pub fn betaincinv(blk: &mut Block, a: &Value, b: &Value, y: &Value) -> Value {
    run_stages(blk, &BETAINCINV, &[a.clone(), b.clone(), y.clone()])
}
