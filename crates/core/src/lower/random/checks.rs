//! Which parameters each distribution refuses, as the C backend's numpy or scipy call
//! refuses them: a predicate per element (true: invalid) and the exception it raises.

use crate::dtype::DType;
use crate::ir::random::Distribution;
use crate::lower::scalar;
use crate::mlir::{Arith, Block, CmpF, CmpI, MathUnary, Value};

/// The exception a failed parameter check raises.
#[derive(Clone, Copy)]
pub enum Failure {
    Value,
    Overflow,
}

/// A parameter check: `i1` true where the element's parameters (in the work type) are
/// invalid.
pub type Check = fn(&mut Block, &[Value], DType) -> Value;

/// numpy's largest Poisson mean (INT64_MAX - 10 sqrt(INT64_MAX)): "lam value too large".
const POISSON_LAM_MAX: f64 = 9.223_372_006_484_771e18;

fn constant(g: &mut Block, x: f64, work: DType) -> Value {
    g.constant_f64(x, scalar::scalar_type(work))
}

/// `x < bound` (NaN passes, as numpy's `x < 0` checks let it).
fn below(g: &mut Block, x: &Value, bound: f64, work: DType) -> Value {
    let c = constant(g, bound, work);
    g.cmpf(CmpF::Olt, x, &c)
}

/// `x <= bound` (NaN passes).
fn at_most(g: &mut Block, x: &Value, bound: f64, work: DType) -> Value {
    let c = constant(g, bound, work);
    g.cmpf(CmpF::Ole, x, &c)
}

/// `!(x >= bound)`: scipy's domain checks, which NaN fails.
fn not_at_least(g: &mut Block, x: &Value, bound: f64, work: DType) -> Value {
    let c = constant(g, bound, work);
    g.cmpf(CmpF::Ult, x, &c)
}

/// `!(x > bound)` (NaN fails).
fn not_above(g: &mut Block, x: &Value, bound: f64, work: DType) -> Value {
    let c = constant(g, bound, work);
    g.cmpf(CmpF::Ule, x, &c)
}

/// `!(0 < p <= 1)` (NaN fails).
fn not_probability(g: &mut Block, p: &Value, work: DType) -> Value {
    let low = not_above(g, p, 0.0, work);
    let one = constant(g, 1.0, work);
    let high = g.cmpf(CmpF::Ult, &one, p);
    g.arith(Arith::OrI, &low, &high)
}

fn or(g: &mut Block, a: Value, b: Value) -> Value {
    g.arith(Arith::OrI, &a, &b)
}

/// What numpy (or scipy, where PyTensor's rng_fn calls it) raises on, per distribution.
pub fn checks_of(dist: Distribution) -> Vec<(Check, Failure, &'static str)> {
    use Distribution::*;
    let scipy_scale = "Domain error in arguments: the scale must be >= 0";
    match dist {
        // numpy's "scale < 0" (NaN passes, giving NaN draws).
        Normal | LogNormal | Laplace | Logistic => vec![(|g, p, w| below(g, &p[1], 0.0, w), Failure::Value, "scale < 0")],
        Exponential => vec![(|g, p, w| below(g, &p[0], 0.0, w), Failure::Value, "scale < 0")],
        Weibull => vec![(|g, p, w| below(g, &p[0], 0.0, w), Failure::Value, "a < 0")],
        BetaBinomial => vec![(|g, p, w| {
            let n = below(g, &p[0], 0.0, w);
            let a = not_above(g, &p[1], 0.0, w);
            let inf = constant(g, f64::INFINITY, w);
            let a_inf = g.cmpf(CmpF::Oeq, &p[1], &inf);
            let b = not_above(g, &p[2], 0.0, w);
            let bad = or(g, n, a);
            let bad = or(g, bad, a_inf);
            or(g, bad, b)
        }, Failure::Value, "Domain error in arguments: n must be >= 0, a finite and > 0, b > 0")],
        GenGamma => vec![(|g, p, w| {
            let a = not_above(g, &p[0], 0.0, w);
            let c = not_above(g, &p[1], 0.0, w);
            let inf = constant(g, f64::INFINITY, w);
            let c_inf = g.cmpf(CmpF::Oeq, &p[1], &inf);
            let s = not_at_least(g, &p[2], 0.0, w);
            let bad = or(g, a, c);
            let bad = or(g, bad, c_inf);
            or(g, bad, s)
        }, Failure::Value, "Domain error in arguments: alpha and p must be > 0 (p finite), lambd >= 0")],
        VonMises => vec![(|g, p, w| below(g, &p[1], 0.0, w), Failure::Value, "kappa < 0")],
        Dirichlet => vec![(|g, p, w| below(g, &p[0], 0.0, w), Failure::Value, "alpha < 0")],
        // PyTensor's categorical searches the running sums of whatever weights it is given.
        Categorical => vec![],
        // Their checks are their own rules' (lower/random/mod.rs, multinomial.rs).
        MvNormal(_) | Multinomial | Permutation | Choice => vec![],
        Gamma | InvGamma => {
            vec![(|g, p, w| {
                let a = below(g, &p[0], 0.0, w);
                let s = below(g, &p[1], 0.0, w);
                or(g, a, s)
            }, Failure::Value, "shape < 0 or scale < 0")]
        }
        Beta => vec![(|g, p, w| {
            let a = at_most(g, &p[0], 0.0, w);
            let b = at_most(g, &p[1], 0.0, w);
            or(g, a, b)
        }, Failure::Value, "a <= 0 or b <= 0")],
        Wald => vec![(|g, p, w| {
            let m = at_most(g, &p[0], 0.0, w);
            let s = at_most(g, &p[1], 0.0, w);
            or(g, m, s)
        }, Failure::Value, "mean <= 0 or scale <= 0")],
        Triangular => vec![(|g, p, _| {
            let left_above = g.cmpf(CmpF::Ogt, &p[0], &p[1]);
            let mode_above = g.cmpf(CmpF::Ogt, &p[1], &p[2]);
            let same = g.cmpf(CmpF::Oeq, &p[0], &p[2]);
            let bad = or(g, left_above, mode_above);
            or(g, bad, same)
        }, Failure::Value, "left > mode, mode > right or left == right")],
        // scipy's rvs: a scale >= 0 (NaN fails), shapes > 0.
        HalfNormal | Cauchy | Gumbel | HalfCauchy => vec![(|g, p, w| not_at_least(g, &p[1], 0.0, w), Failure::Value, scipy_scale)],
        Pareto => vec![(|g, p, w| {
            let b = not_above(g, &p[0], 0.0, w);
            let s = not_at_least(g, &p[1], 0.0, w);
            or(g, b, s)
        }, Failure::Value, "Domain error in arguments: b must be > 0 and the scale >= 0")],
        TruncExpon => vec![(|g, p, w| {
            let b = not_above(g, &p[0], 0.0, w);
            let s = not_at_least(g, &p[2], 0.0, w);
            or(g, b, s)
        }, Failure::Value, "Domain error in arguments: b must be > 0 and the scale >= 0")],
        StudentT => vec![(|g, p, w| {
            let df = not_above(g, &p[0], 0.0, w);
            let s = not_at_least(g, &p[2], 0.0, w);
            or(g, df, s)
        }, Failure::Value, "Domain error in arguments: df must be > 0 and the scale >= 0")],
        Bernoulli => vec![(|g, p, w| {
            let low = not_at_least(g, &p[0], 0.0, w);
            let one = constant(g, 1.0, w);
            let high = g.cmpf(CmpF::Ult, &one, &p[0]);
            or(g, low, high)
        }, Failure::Value, "Domain error in arguments: p must be in [0, 1]")],
        Geometric => vec![(|g, p, w| not_probability(g, &p[0], w), Failure::Value, "p <= 0, p > 1 or p contains NaNs")],
        Poisson => vec![(|g, p, w| {
            let low = not_at_least(g, &p[0], 0.0, w);
            let c = constant(g, POISSON_LAM_MAX, w);
            let high = g.cmpf(CmpF::Ogt, &p[0], &c);
            or(g, low, high)
        }, Failure::Value, "lam < 0, lam is NaN or lam value too large")],
        NegativeBinomial => vec![(|g, p, w| {
            let n = not_above(g, &p[0], 0.0, w);
            let size = g.math(MathUnary::AbsF, &p[0]);
            let inf = constant(g, f64::INFINITY, w);
            let infinite = g.cmpf(CmpF::Oeq, &size, &inf);
            let n = or(g, n, infinite);
            let q = not_probability(g, &p[1], w);
            or(g, n, q)
        }, Failure::Value, "Domain error in arguments: n must be finite and > 0, p in (0, 1]")],
        HyperGeometric => vec![
            (|g, p, w| below(g, &p[0], 0.0, w), Failure::Value, "ngood < 0"),
            (|g, p, w| below(g, &p[1], 0.0, w), Failure::Value, "nbad < 0"),
            (|g, p, w| below(g, &p[2], 0.0, w), Failure::Value, "nsample < 0"),
            (|g, p, w| {
                let limit = constant(g, 1e9, w);
                let good = g.cmpf(CmpF::Oge, &p[0], &limit);
                let bad = g.cmpf(CmpF::Oge, &p[1], &limit);
                or(g, good, bad)
            }, Failure::Value, "both ngood and nbad must be less than 1000000000"),
            (|g, p, _| {
                let total = g.arith(Arith::AddF, &p[0], &p[1]);
                g.cmpf(CmpF::Olt, &total, &p[2])
            }, Failure::Value, "ngood + nbad < nsample"),
        ],
        Binomial => vec![(|g, p, w| {
            let n = below(g, &p[0], 0.0, w);
            let low = not_at_least(g, &p[1], 0.0, w);
            let one = constant(g, 1.0, w);
            let high = g.cmpf(CmpF::Ult, &one, &p[1]);
            let q = or(g, low, high);
            or(g, n, q)
        }, Failure::Value, "n < 0, or p < 0, p > 1 or p is NaN")],
        // numpy: an infinite or NaN range overflows; a negative one is a ValueError.
        Uniform => vec![
            (|g, p, w| {
                let range = g.arith(Arith::SubF, &p[1], &p[0]);
                let size = g.math(MathUnary::AbsF, &range);
                let inf = constant(g, f64::INFINITY, w);
                g.cmpf(CmpF::Ule, &inf, &size)
            }, Failure::Overflow, "high - low range exceeds valid bounds"),
            (|g, p, w| {
                let range = g.arith(Arith::SubF, &p[1], &p[0]);
                below(g, &range, 0.0, w)
            }, Failure::Value, "high - low < 0"),
        ],
        Integers => vec![(|g, p, _| g.cmpi(CmpI::Sge, &p[0], &p[1]), Failure::Value, "low >= high")],
    }
}
