//! The inverses of the regularized incomplete gamma functions in x: gammaincinv(a, p)
//! (the x with P(a, x) = p) and gammainccinv(a, q) (Q(a, x) = q). PyTensor's Ops run
//! scipy's functions (they have no C code), so scipy's special values are the model.
//!
//! Both solve the same equation on the smaller of the two tails: P(a, x) = p where
//! p <= 1/2, Q(a, x) = q where q < 1/2, the other given as 1 - (argument), which is exact
//! there (Sterbenz). So a tail probability down to the smallest subnormal keeps its
//! relative accuracy, and the root is found from the forward functions of
//! incomplete_gamma.rs:
//!
//! - A starting point: the Wilson-Hilferty approximation (the cube root of a gamma
//!   variate is nearly normal: x = a (1 - 1/(9a) + z / (3 sqrt a))^3 with z the normal
//!   quantile, from our erfcinv); in the lower tail the leading term of P's series,
//!   P ~ x^a / Gamma(1 + a), solved for x and corrected for the next terms by two
//!   fixed-point steps (also the start of upper-tail lanes whose root lies below
//!   0.3 (a + 1), which a < 1 gives even at p = 1/2); in the upper tail the leading term of Q's
//!   asymptotic series, Q ~ x^(a-1) e^-x / Gamma(a), by three fixed-point steps.
//! - Newton's method on the logarithm of the tail: the tails behave like powers of x
//!   (lower: log P is linear in log x, so the step is multiplicative, x e^-s) or like
//!   e^-x (upper: log Q is nearly linear in x, the step additive, x (1 + s)), where a
//!   plain Newton step on P - p would creep. s = log(T / t) T / (x T'), with log(T / t)
//!   = log1p((T - t) / t) so the last steps see the relative residual at full precision.
//!   Halley's correction comes at no extra cost (the tails' second derivatives are the
//!   density's), so from the starts' 1e-2 or so two steps reach the root.
//! - Kept inside a bracket (newton.rs, shared with betaincinv); then, for roots below 1 in
//!   the lower tail, one more step with a log x and log p to twice the precision.
//! - In two kernels (`Stage`, elemwise.rs): the start and the first three steps as vector
//!   code (the forward functions' straight-line form, `tails_and_density`'s `straight`),
//!   which settles most lanes; then a loop for the rest and the refinement, scalar code (a
//!   loop anywhere in a kernel leaves all of it scalar). bench_scalar.py at 1e5 elements,
//!   f64: gammaincinv 178 -> 63 ms, gammainccinv 171 -> 61 ms (NUMBA 58 and 86 ms).
//!
//! Accuracy: the forward function's relative error e gives the root an error of about
//! e T / (x T'): below 1 for a >= 1 in the lower tail (there x T' = a T), larger for a < 1
//! (1 / a: the root of a tail like x^a is ill-conditioned) and in the upper tail for
//! x >> a (about x). Special values (scipy's): nan where a < 0, a is nan, or the
//! probability is outside [0, 1] or nan; probability 0 and 1 give the ends 0 and inf
//! for every a >= 0 (inf included); a = 0 or a = inf with a probability inside (0, 1)
//! gives nan. Huge a (1e15 tested) converges: near x = a the forward functions use
//! Temme's expansion, not their capped loops.

use super::erf::erfcinv;
use super::exp_log::{log1p, log_dd};
use super::gamma::{lgamma1p, lgamma_positive};
use super::beta::branch;
use super::incomplete_gamma::{p_series, tails_and_density};
use super::newton::{halley, newton_loop, unrolled, State, Step};
use super::{run_stages, Stage, F};
use crate::mlir::{Arith, Block, CmpF, Value};

/// The most Newton steps (each a P and Q); from the starting points they take a few.
const STEPS: f64 = 40.0;
/// The lower tail's power-law start is used while it lands below this fraction of a + 1
/// (its relative error is about x / (a + 1)); the upper tail's past this multiple.
const LOWER_START_BELOW: f64 = 0.3;
const UPPER_START_ABOVE: f64 = 2.0;
/// Fixed-point steps that correct the lower tail's start for P's next terms: Newton steps
/// (`/work/notes/s32/ginvd.py`, a debug build's step counts on accuracy_cases' points)
/// for a in [100, 1000), p < 1e-3 4.98 -> 2.82 on average, 8 -> 3 for the 90th percentile.
const LOWER_START_STEPS: usize = 2;




/// The starting point for a > 0 finite, `t` = min(p, q) in (0, 1/2], `upper` whether
/// t is q (see the module comment), positive and finite; and whether the root is below
/// the smallest subnormal (P's leading term, accurate there, underflows to 0).
fn start(f: &mut F, a: &Value, p: &Value, q: &Value, upper: &Value) -> (Value, Value) {
    let one = f.c(1.0);
    let two = f.c(2.0);
    let zero = f.c(0.0);
    let t = f.sel(upper, q, p);
    // Wilson-Hilferty: z = +-sqrt(2) erfcinv(2 t), the normal quantile of p.
    let t2 = f.mul(&t, &two);
    let w = erfcinv(f.b, &t2);
    let sqrt2 = f.c(std::f64::consts::SQRT_2);
    let w = f.mul(&w, &sqrt2);
    let minus_w = f.neg(&w);
    let z = f.sel(upper, &w, &minus_w);
    let nine = f.c(9.0);
    let nine_a = f.mul(a, &nine);
    let c = f.div(&one, &nine_a);
    let root_c = f.sqrt(&c);
    let base = f.sub(&one, &c);
    let base = f.fma(&z, &root_c, &base);
    let cube = f.mul(&base, &base);
    let cube = f.mul(&cube, &base);
    let wilson = f.mul(a, &cube);
    // Lower tail: x = (p Gamma(1 + a))^(1/a), P's leading term (relative error about x, so
    // also the test of a root below the smallest subnormal, on either side: there log p
    // as log1p(-q), p = 1 - q being rounded).
    let log_p_direct = f.log(p);
    let minus_q = f.neg(q);
    let log_p_upper = log1p(f.b, &minus_q);
    let log_p = f.sel(upper, &log_p_upper, &log_p_direct);
    let lg1p = lgamma1p(f, a);
    let e = f.add(&log_p, &lg1p);
    let e = f.div(&e, a);
    let x0_lower = f.exp(&e);
    let mut lower = x0_lower.clone();
    let a1 = f.add(a, &one);
    // Then LOWER_START_STEPS of x = x0 exp((x - log M(x)) / a), P = x^a e^-x M(x) / Gamma(1
    // + a) with M(x) = sum_k x^k / (a+1)_k (three terms): each cuts the relative error by
    // a factor of about x / (a + 1), which is about x0's own.
    for _ in 0..LOWER_START_STEPS {
        let a2 = f.add(&a1, &one);
        let a3 = f.add(&a2, &one);
        let t3 = f.div(&lower, &a3);
        let m = f.add(&one, &t3);
        let t2 = f.div(&lower, &a2);
        let m = f.fma(&t2, &m, &one);
        let t1 = f.div(&lower, &a1);
        let m = f.fma(&t1, &m, &one);
        let lm = f.log(&m);
        let d = f.sub(&lower, &lm);
        let d = f.div(&d, a);
        let d = f.exp(&d);
        let next = f.mul(&x0_lower, &d);
        lower = next;
    }
    // Upper tail: x = x1 + (a - 1) log x, x1 = -log q - lgamma(a), from max(x1, 1).
    let log_q = f.log(q);
    let lg = lgamma_positive(f, a);
    let x1 = f.add(&log_q, &lg);
    let x1 = f.neg(&x1);
    let am1 = f.sub(a, &one);
    let mut up = f.b.arith(Arith::MaximumF, &x1, &one);
    for _ in 0..3 {
        let l = f.log(&up);
        let next = f.fma(&am1, &l, &x1);
        up = f.b.arith(Arith::MaximumF, &next, &one);
    }
    // Choose: the tails' forms where they hold, Wilson-Hilferty elsewhere (if positive).
    let lower_limit = f.c(LOWER_START_BELOW);
    let lower_limit = f.mul(&lower_limit, &a1);
    let upper_limit = f.c(UPPER_START_ABOVE);
    let upper_limit = f.mul(&upper_limit, &a1);
    let lower_fits = f.cmp(CmpF::Olt, &lower, &lower_limit);
    let upper_fits = f.cmp(CmpF::Ogt, &up, &upper_limit);
    let wilson_bad = f.cmp(CmpF::Ule, &base, &zero);
    // The smaller tail's form where it fits, else (upper tail) the lower's, else
    // Wilson-Hilferty where positive, the smaller tail's form where not. (The lower form
    // for upper-tail lanes: with a < 1 and 1/2 < p < 1 the root can be far below 1,
    // 5e-29 for a = 0.0102, p = 0.5185; Wilson-Hilferty's base is negative there, and the
    // upper form's start is 1 at least: from 1 the bracket's bisection took 29 steps.)
    let own = f.sel(upper, &up, &lower);
    let own_fits = f.sel(upper, &upper_fits, &lower_fits);
    let tail = f.sel(&own_fits, &own, &lower);
    let tail_ok = f.or(&own_fits, &lower_fits);
    let fallback = f.sel(&wilson_bad, &own, &wilson);
    let x0 = f.sel(&tail_ok, &tail, &fallback);
    // Not a positive finite number (underflow, overflow): 1, the bracket does the rest.
    let inf = f.c(f64::INFINITY);
    let pos = f.cmp(CmpF::Ogt, &x0, &zero);
    let fin = f.cmp(CmpF::Olt, &x0, &inf);
    let ok = f.and(&pos, &fin);
    let x0 = f.sel(&ok, &x0, &one);
    let underflow = f.cmp(CmpF::Oeq, &x0_lower, &zero);
    (x0, underflow)
}

/// The arguments as the solver sees them: a and the two tails p and q (p + q = 1, the
/// smaller exact), safe stand-ins (a = 1, p = 1/2) where the arguments are special
/// (`regular` false), and whether the smaller tail is q (`upper`). Every stage computes
/// them again from the arguments (a few operations) rather than carry them.
struct Setup {
    a: Value,
    p: Value,
    q: Value,
    upper: Value,
    regular: Value,
}

fn setup(f: &mut F, a: &Value, y: &Value, lower: bool) -> Setup {
    let one = f.c(1.0);
    let half = f.c(0.5);
    let a_regular = f.inside(a, 0.0, f64::INFINITY);
    let y_inside = f.inside(y, 0.0, 1.0);
    let regular = f.and(&a_regular, &y_inside);
    let sa = f.sel(&regular, a, &one);
    let sy = f.sel(&regular, y, &half);
    let other = f.sub(&one, &sy);
    let (p, q) = if lower { (sy, other) } else { (other, sy) };
    let upper = f.cmp(CmpF::Olt, &q, &p);
    Setup { a: sa, p, q, upper, regular }
}

/// Newton's step on the log of the smaller tail (see the module comment), with Halley's
/// correction: the tails' second derivatives come from the density at no extra cost, and
/// cubic convergence takes the starting points' 1e-2 or so to the root in two steps.
/// `straight`: the forward functions without loops or branches (stage one's vector code).
fn step(g: &mut F, s: &Setup, x: &Value, straight: bool) -> Step {
    let zero = g.c(0.0);
    let one = g.c(1.0);
    let (big_p, big_q, x_density) = tails_and_density(g, &s.a, x, straight);
    let tail = g.sel(&s.upper, &big_q, &big_p);
    let target = g.sel(&s.upper, &s.q, &s.p);
    let err = g.sub(&tail, &target);
    // x is past the root where P > p, i.e. Q < q.
    let tail_above = g.cmp(CmpF::Ogt, &err, &zero);
    let tail_below = g.cmp(CmpF::Olt, &err, &zero);
    let past = g.sel(&s.upper, &tail_below, &tail_above);
    // h = log(T / t); Newton: s = h T / (x T'); lower: x e^-s, upper: x (1 + s).
    let rel = g.div(&err, &target);
    let h = log1p(g.b, &rel);
    let ratio = g.div(&tail, &x_density);
    let newton = g.mul(&h, &ratio);
    // Halley's correction (newton.rs): k = (a - x) T / (x T') - 1 for g(log x) = log P -
    // log p, and -((a - 1 - x) T / (x T') + 1) for g(x) = log Q - log q.
    let am1 = g.sub(&s.a, &one);
    let shift = g.sel(&s.upper, &am1, &s.a);
    let k = g.sub(&shift, x);
    let k = g.mul(&k, &ratio);
    let minus_one = g.c(-1.0);
    let sign = g.sel(&s.upper, &one, &minus_one);
    let k = g.add(&k, &sign);
    let k = g.mul(&k, &sign);
    let k = g.neg(&k);
    let s_step = halley(g, &newton, &h, &k);
    let minus_s = g.neg(&s_step);
    let factor_lower = g.exp(&minus_s);
    let factor_upper = g.add(&one, &s_step);
    let factor = g.sel(&s.upper, &factor_upper, &factor_lower);
    let next = g.mul(x, &factor);
    let exact = g.cmp(CmpF::Oeq, &err, &zero);
    Step { past, next, exact, scale: x.clone() }
}

/// Steps taken as vector code in stage one: from the starting points most lanes settle
/// in three (two Halley steps and one that confirms); the rest go on in stage two's loop.
const VECTOR_STEPS: usize = 3;

/// Stage one (vector code): the start and the first `VECTOR_STEPS` steps for a > 0
/// finite and 0 < p, q < 1; yields the iteration's state.
fn first_steps<const LOWER: bool>(b: &mut Block, args: &[Value], _: &[Value]) -> Vec<Value> {
    let mut f = F::new(b, &args[0]);
    let f = &mut f;
    let s = setup(f, &args[0], &args[1], LOWER);
    let zero = f.c(0.0);
    let inf = f.c(f64::INFINITY);
    let (x0, underflow) = start(f, &s.a, &s.p, &s.q, &s.upper);
    // A root below the smallest subnormal is 0 (those lanes start converged).
    let x0 = f.sel(&underflow, &zero, &x0);
    let state = State::new(f, &x0, &underflow, &zero, &inf);
    unrolled(f, state, VECTOR_STEPS, STEPS, &|g, x| step(g, &s, x, true)).values()
}

/// Stage two (scalar code): the lanes stage one left unsettled, to the end; then the lower
/// tail's refinement below 1 and the special values. (A third kernel of these two, read
/// through `tensor.extract` as the stages are, IREE 3.13 fused into this one's dispatch,
/// where the value handed over became a stack buffer of the whole tensor: too big to
/// compile. Stage one's several values it leaves alone.)
fn last_steps<const LOWER: bool>(b: &mut Block, args: &[Value], carried: &[Value]) -> Vec<Value> {
    let mut f = F::new(b, &args[0]);
    let f = &mut f;
    let (a, y) = (&args[0], &args[1]);
    let s = setup(f, a, y, LOWER);
    let state = State::from_values(carried);
    let x = newton_loop(f, state, STEPS, &|g, x| step(g, &s, x, false)).x().clone();
    // Only below 1 (and a): nearer the middle the sum's O(a log a) terms round worse than
    // the Newton steps' P and S / a is no longer small.
    let refine = f.cmp(CmpF::Olt, &x, &s.a);
    let one = f.c(1.0);
    let below_one = f.cmp(CmpF::Olt, &x, &one);
    let refine = f.and(&refine, &below_one);
    let not_upper = f.not(&s.upper);
    let refine = f.and(&refine, &not_upper);
    // Its lanes only (the kernel is scalar code).
    let x = branch(f, &refine, |g| lower_tail_refinement(g, &s.a, &s.p, &x, &refine), |_| x.clone());
    vec![with_specials(f, a, y, &s.regular, &x, LOWER)]
}

/// gammaincinv(a, p) in two stages (see `Stage`).
pub const GAMMAINCINV: [Stage; 2] = [Stage { yields: 5, run: first_steps::<true> }, Stage { yields: 1, run: last_steps::<true> }];

/// gammainccinv(a, q) in two stages.
pub const GAMMAINCCINV: [Stage; 2] = [Stage { yields: 5, run: first_steps::<false> }, Stage { yields: 1, run: last_steps::<false> }];

/// One more Newton step for a root x < a of P(a, x) = p, on log P = a log x - x -
/// lgamma(1 + a) + log S (S = P's series, `incomplete_gamma::p_series`) with a log x and
/// log p carried to twice the precision: the residual log(P / p) is then accurate to an
/// ulp of its O(1) terms rather than of a log x (up to 745 a, whose rounding alone would
/// cost the root |log x| / 2 ulps, and 1 / a times more for small a, where
/// the root is ill-conditioned). d log P / d log x = a / S. Lanes not to `refine` get
/// stand-ins.
fn lower_tail_refinement(f: &mut F, a: &Value, p: &Value, x: &Value, refine: &Value) -> Value {
    let one = f.c(1.0);
    let half = f.c(0.5);
    let zero = f.c(0.0);
    let usable = f.cmp(CmpF::Ogt, x, &zero);
    let use_it = f.and(refine, &usable);
    let x_in = x.clone();
    let a = f.sel(&use_it, a, &one);
    let x = f.sel(&use_it, x, &half);
    let (series, _) = p_series(f, &a, &x);
    let (lx, lx_lo) = log_dd(f, &x);
    let (t, t_lo) = f.two_prod(&a, &lx);
    let t_lo = f.fma(&a, &lx_lo, &t_lo);
    let (lp, lp_lo) = log_dd(f, p);
    let r = f.sub(&t, &lp);
    let lo = f.sub(&t_lo, &lp_lo);
    let r = f.add(&r, &lo);
    let r = f.sub(&r, &x);
    let lg = lgamma1p(f, &a);
    let r = f.sub(&r, &lg);
    let ls = f.log(&series);
    let r = f.add(&r, &ls);
    // x exp(-r S / a), r tiny: x - x r S / a.
    let s = f.mul(&r, &series);
    let s = f.div(&s, &a);
    let minus_s = f.neg(&s);
    let refined = f.fma(&x, &minus_s, &x);
    f.sel(&use_it, &refined, &x_in)
}

/// The result x where the arguments were `regular`, and the special values elsewhere.
fn with_specials(f: &mut F, a: &Value, y: &Value, regular: &Value, x: &Value, lower: bool) -> Value {
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let inf = f.c(f64::INFINITY);
    let nan = f.c(f64::NAN);
    // Ends: p = 0 (q = 1) gives 0, p = 1 (q = 0) inf, for every a >= 0.
    let (at_zero, at_inf) = if lower { (zero.clone(), inf.clone()) } else { (inf.clone(), zero.clone()) };
    let y_zero = f.cmp(CmpF::Oeq, y, &zero);
    let y_one = f.cmp(CmpF::Oeq, y, &one);
    let r = f.sel(regular, x, &nan);
    let a_ok = f.cmp(CmpF::Oge, a, &zero); // false on nan
    let end_zero = f.and(&y_zero, &a_ok);
    let end_one = f.and(&y_one, &a_ok);
    let r = f.sel(&end_zero, &at_zero, &r);
    f.sel(&end_one, &at_inf, &r)
}

pub fn gammaincinv(b: &mut Block, a: &Value, p: &Value) -> Value {
    run_stages(b, &GAMMAINCINV, &[a.clone(), p.clone()])
}

pub fn gammainccinv(b: &mut Block, a: &Value, q: &Value) -> Value {
    run_stages(b, &GAMMAINCCINV, &[a.clone(), q.clone()])
}
