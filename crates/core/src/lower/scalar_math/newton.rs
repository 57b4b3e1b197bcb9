//! Bracketed Newton iteration for the inverses of the monotone special functions
//! (gammaincinv and gammainccinv in incomplete_gamma_inv.rs, betaincinv in beta_inv.rs),
//! as one `scf.while` per lane:
//!
//! - each step evaluates the function at x and gets (from the caller) whether x is past
//!   the root, Newton's next point and whether the residual is exactly 0;
//! - the bracket [lo, hi] those signs narrow keeps the iteration from running away: a step
//!   that leaves it (or a nan, from an underflowed function) goes to the bracket's middle
//!   (geometric while its ends are more than a factor 4 apart; a factor 16 past an end
//!   still at 0 or inf); one that leaves it by a hair (the residual's rounding, at the
//!   root) goes to the end it crossed, which the next step then confirms;
//! - it stops when a step moves x by less than 4 ulps (closer, the rounding of the
//!   residual decides the steps), when the residual is 0, or at the step cap;
//! - and when a small step (`STALL`) is not at least 4 times smaller than the one before:
//!   converging, the steps shrink quadratically; these are the residual's rounding (a
//!   function some ulps off, times the root's condition), which otherwise went on to the
//!   cap (betaincinv: 16% of accuracy_cases' points ran all 40 steps, at a = 1 or b = 1
//!   among others with steps of 5-10e-16 about the root, in the far tails with 1e-14).

use super::F;
use crate::mlir::{Arith, CmpF, Value};

/// The iteration stops once a step is below this many ulps of x (per type).
const STEP_TOLERANCE: (f64, f64) = (4.0 * 1.1102230246251565e-16, 4.0 * 5.960464477539063e-08);
/// How far past a bracket end (relative) a step may land and still go to that end.
const NEAR_END: (f64, f64) = (64.0 * 1.1102230246251565e-16, 64.0 * 5.960464477539063e-08);
/// Below this (relative) a step that does not shrink is the residual's rounding: the
/// iteration stops (per type: 2^-44 and 2^-15, 256 ulps of 1). betainc's rounding, tens to
/// thousands of ulps in its tails (beta.rs), times the root's condition, gave steps of
/// 1e-14 to 2e-14 there; converging, Newton's step after one of 2^-44 would be about 2^-88.
/// (2^-36 stopped a slow, linear approach to a root near 1 at 1.3e5 ulps.)
const STALL: (f64, f64) = (5.684341886080802e-14, 3.0517578125e-05);

/// For a float32 result computed in f64: a Newton step below this (relative) is the last.
const FLOAT32_STEP: f64 = 1e-6;

/// What one step computes at x.
pub(super) struct Step {
    /// x is past the root (it becomes the bracket's upper end).
    pub past: Value,
    /// Newton's next point.
    pub next: Value,
    /// The residual is exactly 0 (x is the root).
    pub exact: Value,
    /// What x's precision is relative to: x, or 1 - x for a root in (0, 1) whose distance
    /// from 1 matters (betaincinv: near 1 a step of 1e-6 x could be 30% of 1 - x).
    pub scale: Value,
}

/// The iteration's state, per lane: the step count, x, the bracket [lo, hi], and the
/// last step's relative size (0 once it stopped: see the module comment).
pub(super) struct State(pub [Value; 5]);

impl State {
    /// The state before the first step from `x0` within [lo, hi]; lanes with `start_done`
    /// true keep x0.
    pub fn new(f: &mut F, x0: &Value, start_done: &Value, lo: &Value, hi: &Value) -> State {
        let zero = f.c(0.0);
        let one = f.c(1.0);
        let first = f.sel(start_done, &zero, &one);
        State([zero, x0.clone(), lo.clone(), hi.clone(), first])
    }

    /// From the values `values` gave (a stage's carried values: elemwise.rs).
    pub fn from_values(v: &[Value]) -> State {
        State([v[0].clone(), v[1].clone(), v[2].clone(), v[3].clone(), v[4].clone()])
    }

    pub fn values(&self) -> Vec<Value> {
        self.0.to_vec()
    }

    pub fn x(&self) -> &Value {
        &self.0[1]
    }
}

/// Whether the iteration goes on from `v` (a `State`'s values): the last step was not
/// below the tolerance and the count is below `steps`.
fn going(g: &mut F, v: &[Value], steps: f64) -> Value {
    let tol = g.k(STEP_TOLERANCE);
    let go_on = g.cmp(CmpF::Ogt, &v[4], &tol);
    let max = g.c(steps);
    let more = g.cmp(CmpF::Olt, &v[0], &max);
    g.and(&go_on, &more)
}

/// `count` steps as straight-line code, each taken only by the lanes still `going`: no
/// loop, so IREE vectorizes a kernel of it (and of a `step` with no loop or branch). The
/// lanes it leaves going are `newton_loop`'s.
pub(super) fn unrolled(f: &mut F, state: State, count: usize, steps: f64, step: &dyn Fn(&mut F, &Value) -> Step) -> State {
    unrolled_where(f, state, count, steps, &|g, x| (step(g, x), None))
}

/// A Newton step that also says where its forward function settled (`unrolled_where`).
pub(super) type GuardedStep<'a> = dyn Fn(&mut F, &Value) -> (Step, Option<Value>) + 'a;

/// As `unrolled`, for a `step` whose straight-line forward function may not have settled
/// on some lanes (its second value, where given: false there). Those lanes keep their
/// state, so they take no more steps here (the next would see the same x) and go on in
/// the loop.
pub(super) fn unrolled_where(
    f: &mut F,
    state: State,
    count: usize,
    steps: f64,
    step: &GuardedStep<'_>,
) -> State {
    let mut v = state.values();
    for _ in 0..count {
        let go = going(f, &v, steps);
        let (s, valid) = step(f, &v[1]);
        let go = match valid {
            Some(valid) => f.and(&go, &valid),
            None => go,
        };
        let next = advance(f, &v, s);
        v = v.iter().zip(&next).map(|(old, new)| f.sel(&go, new, old)).collect();
    }
    State::from_values(&v)
}

/// The iteration to its end from `state`, as one `scf.while` (the kernel is scalar code).
pub(super) fn newton_loop(f: &mut F, state: State, steps: f64, step: &dyn Fn(&mut F, &Value) -> Step) -> State {
    let ty = f.ty;
    let done = f.b.scf_while(
        &state.values(),
        |c, v| {
            let mut g = F { b: c, ty };
            going(&mut g, v, steps)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let s = step(&mut g, &v[1]);
            advance(&mut g, v, s)
        },
    );
    State::from_values(&done)
}

/// One step from the state `v` with `step`, the function's values at x: the bracket
/// narrowed, Newton's point (or the bracket's, see the module comment), and the step's size.
fn advance(g: &mut F, v: &[Value], step: Step) -> Vec<Value> {
    let (n, x, lo, hi) = (&v[0], &v[1], &v[2], &v[3]);
    let zero = g.c(0.0);
    let one = g.c(1.0);
    let Step { past, next, exact, scale } = step;
    let hi = g.sel(&past, x, hi);
    let lo = g.sel(&past, lo, x);
    let in_lo = g.cmp(CmpF::Ogt, &next, &lo);
    let in_hi = g.cmp(CmpF::Olt, &next, &hi);
    let inside = g.and(&in_lo, &in_hi);
    let below = g.cmp(CmpF::Ole, &next, &lo);
    let end = g.sel(&below, &lo, &hi);
    let miss = g.sub(&next, &end);
    let miss = g.abs(&miss);
    let near = g.k(NEAR_END);
    let near = g.mul(&end, &near);
    let at_end = g.cmp(CmpF::Ole, &miss, &near);
    let mid = bracket_middle(g, &lo, &hi);
    let fallback = g.sel(&at_end, &end, &mid);
    let next = g.sel(&inside, &next, &fallback);
    let change = g.sub(&next, x);
    let change = g.abs(&change);
    let size = g.div(&change, &next);
    // A small step not 4 times below the last one: stalled (size 0 stops). Newton's
    // or not: about the root, the residual's rounding also sends steps out of the
    // bracket's ends.
    let stall = g.k(STALL);
    let small = g.cmp(CmpF::Olt, &size, &stall);
    let quarter = g.c(0.25);
    let shrunk = g.mul(&v[4], &quarter);
    let not_shrinking = g.cmp(CmpF::Ogt, &size, &shrunk);
    let stalled = g.and(&small, &not_shrinking);
    let stop = g.or(&exact, &stalled);
    // For a float32 result (f64 code, `F::for_float32`) a Newton step (not the bracket's)
    // below FLOAT32_STEP ends it where it is also below the square of the step before (the
    // iteration converges at its order: what is left after a Halley step s is about s^3).
    let stop = if g.for_float32() {
        let small = g.c(FLOAT32_STEP);
        let small = g.mul(&small, &scale);
        let small = g.cmp(CmpF::Olt, &change, &small);
        let square = g.mul(&v[4], &v[4]);
        let fast = g.cmp(CmpF::Olt, &size, &square);
        let newton = g.and(&small, &inside);
        let newton = g.and(&newton, &fast);
        g.or(&stop, &newton)
    } else {
        stop
    };
    let size_out = g.sel(&stop, &zero, &size);
    let next = g.sel(&exact, x, &next);
    let n = g.add(n, &one);
    vec![n, next, lo, hi, size_out]
}

/// Halley's step from Newton's step `s` = g / g' for the equation g = 0: s / (1 - h k / 2)
/// with h = g (the residual) and k = g'' / g'^2, which the callers write out (the inverses'
/// second derivatives come from the density at no extra cost). Far from the root the
/// divisor is kept within [1/2, 4]: never a step backwards, at most twice Newton's.
pub(super) fn halley(f: &mut F, s: &Value, h: &Value, k: &Value) -> Value {
    let one = f.c(1.0);
    let half = f.c(0.5);
    let four = f.c(4.0);
    let t = f.mul(h, k);
    let t = f.mul(&t, &half);
    let d = f.sub(&one, &t);
    let d = f.b.arith(Arith::MaximumF, &d, &half);
    let d = f.b.arith(Arith::MinimumF, &d, &four);
    f.div(s, &d)
}

/// The middle of the bracket [lo, hi] (lo >= 0, hi <= inf, not both ends open).
fn bracket_middle(f: &mut F, lo: &Value, hi: &Value) -> Value {
    let zero = f.c(0.0);
    let half = f.c(0.5);
    let four = f.c(4.0);
    let sixteen = f.c(16.0);
    let sixteenth = f.c(0.0625);
    let inf = f.c(f64::INFINITY);
    let sum = f.add(lo, hi);
    let arithmetic = f.mul(&sum, &half);
    let prod = f.mul(lo, hi);
    let geometric = f.sqrt(&prod);
    let four_lo = f.mul(lo, &four);
    let wide = f.cmp(CmpF::Ogt, hi, &four_lo);
    let mid = f.sel(&wide, &geometric, &arithmetic);
    let below = f.mul(hi, &sixteenth);
    let above = f.mul(lo, &sixteen);
    let lo_open = f.cmp(CmpF::Oeq, lo, &zero);
    let hi_open = f.cmp(CmpF::Oeq, hi, &inf);
    let mid = f.sel(&lo_open, &below, &mid);
    f.sel(&hi_open, &above, &mid)
}
