//! `RandomVariable`s: draws from a counter-based generator in the kernel.
//!
//! An rng value (PyTensor's `RandomGeneratorType`, a numpy `Generator` outside) is held as
//! four 32-bit words: a Philox key (k0, k1) and a stream (s0, s1). Draw number i (the flat
//! index of the output element, in C order) is Philox4x32-10 of the counter
//! (i mod 2^32, i / 2^32, s0, s1) under the key, turned into the distribution's value by a
//! straight-line transform of the uniforms it gives: no state, every element computed
//! independently, so the draws are one parallel kernel. Philox (Salmon, Moraes, Dror and
//! Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11) passes BigCrush for any
//! key and counter, and distinct counters under one key are independent streams.
//!
//! A node's next rng is Philox of the counter (0, 2^31, s0, s1): a counter no draw uses
//! (the second word of a draw's counter is its index over 2^32, far below 2^31), so the
//! draws of chained nodes (rng -> x -> rng' -> y) are independent, while two nodes given
//! the same rng draw the same numbers, as PyTensor's own backends do (each copies its rng).
//! The runtime makes the key of an input Generator and the Generator of an output key
//! (pytensor_mlir/random.py); the streams are this backend's own, not numpy's.
//!
//! Invalid parameters raise what the C backend's numpy or scipy call raises, after the call.

use super::scalar::{self, Flags, Scalar};
use super::shapes::Dim;
use super::{subtensor, tensor_type, Context, ErrorKind, IntValue, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::random::Distribution;
use crate::ir::{Node, ScalarOp, VarId};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpF, CmpI, IteratorType, ScalarType, TensorType, Value};

/// The words of an rng value: the key's two, then the stream's two.
pub const KEY_WORDS: u64 = 4;

/// Philox4x32's round multipliers and key increments (Salmon et al., table 2 and 3.3).
const MULTIPLIERS: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
const WEYL: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
const ROUNDS: usize = 10;

/// The counter's second word for the next rng: a bit no draw's counter has set.
const NEXT_KEY_COUNTER: u32 = 1 << 31;

/// The high and low words of the 64-bit product of two 32-bit words.
fn mulhilo(g: &mut Block, a: &Value, b: &Value) -> (Value, Value) {
    let a = g.cast(Cast::ExtUI, a, ScalarType::I64);
    let b = g.cast(Cast::ExtUI, b, ScalarType::I64);
    let p = g.arith(Arith::MulI, &a, &b);
    let shift = g.constant_int(32, ScalarType::I64);
    let hi = g.shrui(&p, &shift);
    (g.cast(Cast::TruncI, &hi, ScalarType::I32), g.cast(Cast::TruncI, &p, ScalarType::I32))
}

/// Philox4x32-10 of counter `c` under key `k` (i32 words).
fn philox(g: &mut Block, c: &[Value; 4], k: &[Value; 2]) -> [Value; 4] {
    let word = |g: &mut Block, w: u32| g.constant_int(w as i32 as i64, ScalarType::I32);
    let (m0, m1) = (word(g, MULTIPLIERS[0]), word(g, MULTIPLIERS[1]));
    let (w0, w1) = (word(g, WEYL[0]), word(g, WEYL[1]));
    let mut c = c.clone();
    let mut k = k.clone();
    for round in 0..ROUNDS {
        if round > 0 {
            k = [g.arith(Arith::AddI, &k[0], &w0), g.arith(Arith::AddI, &k[1], &w1)];
        }
        let (hi0, lo0) = mulhilo(g, &m0, &c[0]);
        let (hi1, lo1) = mulhilo(g, &m1, &c[2]);
        let x0 = g.arith(Arith::XOrI, &hi1, &c[1]);
        let x0 = g.arith(Arith::XOrI, &x0, &k[0]);
        let x2 = g.arith(Arith::XOrI, &hi0, &c[3]);
        let x2 = g.arith(Arith::XOrI, &x2, &k[1]);
        c = [x0, lo1, x2, lo0];
    }
    c
}

/// The four words of an rng value.
fn key_words(g: &mut Block, key: &Value) -> [Value; 4] {
    std::array::from_fn(|j| {
        let at = g.constant_index(j as i64);
        g.tensor_extract(key, &[at])
    })
}

/// Two uniform numbers in [0, 1) of type `work` from Philox's four words: 53 bits each
/// (two words) in f64, 24 bits (one word) in f32, as numpy makes doubles and floats.
fn uniforms(g: &mut Block, w: &[Value; 4], work: DType) -> [Value; 2] {
    let t = scalar::scalar_type(work);
    if work == DType::Float32 {
        return std::array::from_fn(|h| {
            let eight = g.constant_int(8, ScalarType::I32);
            let x = g.shrui(&w[2 * h], &eight);
            let x = g.cast(Cast::UIToFP, &x, t);
            let scale = g.constant_f64(2f64.powi(-24), t);
            g.arith(Arith::MulF, &x, &scale)
        });
    }
    std::array::from_fn(|h| {
        let hi = g.cast(Cast::ExtUI, &w[2 * h], ScalarType::I64);
        let lo = g.cast(Cast::ExtUI, &w[2 * h + 1], ScalarType::I64);
        let (five, six, bits) = (g.constant_int(5, ScalarType::I64), g.constant_int(6, ScalarType::I64), g.constant_int(26, ScalarType::I64));
        let hi = g.shrui(&hi, &five);
        let hi = g.shli(&hi, &bits);
        let lo = g.shrui(&lo, &six);
        let x = g.arith(Arith::OrI, &hi, &lo);
        let x = g.cast(Cast::UIToFP, &x, t);
        let scale = g.constant_f64(2f64.powi(-53), t);
        g.arith(Arith::MulF, &x, &scale)
    })
}

/// `op` of `x` by the scalar lowering (this backend's accurate math), in `work`.
fn math(g: &mut Block, op: ScalarOp, x: &Value, work: DType) -> Result<Value, String> {
    let r = scalar::lower(g, &op, &[Scalar { value: x.clone(), dtype: work }], &[work], &mut Flags::default())?;
    Ok(r[0].value.clone())
}

/// `RandomVariable(rng, size, *params)`: (the next rng, the draws).
pub fn random_variable(cx: &mut Context, b: &mut Block, node: &Node, dist: Distribution, dtype: DType) -> Result<(), String> {
    let (rng, size, params) = (node.inputs[0], node.inputs[1], &node.inputs[2..]);
    let (next_out, draws_out) = (node.outputs[0], node.outputs[1]);
    if params.len() != dist.arity() {
        return Err(format!("{} parameters for a distribution of {}", params.len(), dist.arity()));
    }
    let out_ty = cx.graph.ty(draws_out).clone();
    if out_ty.dtype != dtype {
        return Err(format!("draws of type {out_ty:?} from an Op of dtype {dtype}"));
    }
    let rank = out_ty.ndim();
    if let Some(&p) = params.iter().find(|&&p| cx.graph.ty(p).ndim() != rank) {
        return Err(format!("a parameter of rank {} for draws of rank {rank}", cx.graph.ty(p).ndim()));
    }
    let key = cx.value(b, rng)?;
    let param_values: Vec<Value> = params.iter().map(|&p| cx.value(b, p)).collect::<Result<_, _>>()?;
    let (dims, sizes) = if cx.graph.variables[size].is_none { broadcast_shape(cx, b, params, &param_values) } else { size_shape(cx, b, size, rank)? };
    let mut dims = dims;
    // Where PyTensor knows an output dim statically, the draws have it.
    for k in 0..rank {
        if let Some(n) = out_ty.shape[k] {
            if cx.is_runtime(dims[k]) {
                let c = b.constant_index(n as i64);
                let ne = b.cmpi(CmpI::Ne, &sizes[k], &c);
                subtensor::check(cx, b, &ne, ErrorKind::Value, format!("RandomVariable {dist:?}: dim {k} is not the static size {n}"));
            } else {
                cx.require_equal(dims[k], Dim::Static(n), "RandomVariable");
            }
            dims[k] = Dim::Static(n);
        }
    }
    // Each parameter's index along each dim: the draw's, or 0 where it broadcasts.
    let mut reads: Vec<Vec<Index>> = Vec::with_capacity(params.len());
    for (&p, pv) in params.iter().zip(&param_values) {
        let (p_ty, p_dims) = (cx.graph.ty(p).clone(), cx.dims(p));
        let mut per_dim = Vec::with_capacity(rank);
        for k in 0..rank {
            if p_ty.broadcastable(k) {
                per_dim.push(Index::Zero);
                continue;
            }
            if p_dims[k] == dims[k] {
                per_dim.push(Index::Draw);
                continue;
            }
            // numpy broadcasts a parameter whose length is 1 at run time to the size.
            let actual = b.tensor_dim(pv, k);
            let one = b.constant_index(1);
            if cx.is_runtime(p_dims[k]) || cx.is_runtime(dims[k]) {
                let ne = b.cmpi(CmpI::Ne, &actual, &sizes[k]);
                let not_one = b.cmpi(CmpI::Ne, &actual, &one);
                let bad = b.arith(Arith::AndI, &ne, &not_one);
                subtensor::check(cx, b, &bad, ErrorKind::Value, "shape mismatch: a parameter cannot be broadcast to the size".into());
            } else {
                cx.require_equal_or_one(p_dims[k], dims[k], "RandomVariable parameter");
            }
            per_dim.push(Index::ZeroWhere(b.cmpi(CmpI::Eq, &actual, &one)));
        }
        reads.push(per_dim);
    }
    let params: Vec<(Value, DType, Vec<Index>)> =
        params.iter().zip(param_values).zip(reads).map(|((&p, v), r)| (v, cx.graph.ty(p).dtype, r)).collect();
    let (draws, failures) = draw(b, dist, &out_ty, &key, &params, &sizes)?;
    for (flag, kind, message) in failures {
        let kind = match kind {
            Failure::Value => ErrorKind::Value,
            Failure::Overflow => cx.exception("builtins.OverflowError"),
        };
        cx.add_check(flag, RuntimeCheck { kind, message });
    }
    cx.define(draws_out, draws, dims);
    let next = next_key(b, &key)?;
    cx.define(next_out, next, vec![Dim::Static(KEY_WORDS)]);
    Ok(())
}

/// How a parameter is read along one dim of the draws.
enum Index {
    /// At 0: the dim broadcasts (static length 1).
    Zero,
    /// At the draw's index: the same dim.
    Draw,
    /// At 0 where this `i1` is true (the parameter's length is 1 at run time), else the draw's.
    ZeroWhere(Value),
}

/// The exception a failed parameter check raises.
#[derive(Clone, Copy)]
enum Failure {
    Value,
    Overflow,
}

/// The draws' dims and sizes from `size` (an integer vector of one entry per dim): each
/// entry known before the call where it is a constant, a dim or computed from those and
/// small integer arguments; negative entries raise `ValueError`, as numpy does.
fn size_shape(cx: &mut Context, b: &mut Block, size: VarId, rank: usize) -> Result<(Vec<Dim>, Vec<Value>), String> {
    let s_ty = cx.graph.ty(size).clone();
    if s_ty.ndim() != 1 || !s_ty.dtype.is_int() || s_ty.shape[0] != Some(rank as u64) {
        return Err(format!("a size of type {s_ty:?} for draws of rank {rank}"));
    }
    let known = cx.int_values(size).filter(|v| v.len() == rank);
    let s = cx.value(b, size)?;
    let (mut dims, mut sizes) = (Vec::with_capacity(rank), Vec::with_capacity(rank));
    for k in 0..rank {
        let entry = known.as_ref().map_or(IntValue::Unknown, |v| v[k]);
        if let IntValue::Const(c) = entry {
            if c < 0 {
                return Err(format!("the constant size entry {c} is negative"));
            }
            dims.push(Dim::Static(c as u64));
            sizes.push(b.constant_index(c));
            continue;
        }
        let at = b.constant_index(k as i64);
        let e = b.tensor_extract(&s, &[at]);
        let v = subtensor::int_to_index(b, &e, s_ty.dtype);
        let dim = match entry {
            IntValue::Dim(d) => d,
            IntValue::Expr(i) => Dim::Derived(i),
            _ => cx.runtime_dim(),
        };
        let v = if matches!(entry, IntValue::Dim(_)) {
            v
        } else {
            // A negative entry raises after the call; read as 0 until then.
            let zero = b.constant_index(0);
            let neg = b.cmpi(CmpI::Slt, &v, &zero);
            subtensor::check(cx, b, &neg, ErrorKind::Value, "negative dimensions are not allowed".into());
            b.arith(Arith::MaxSI, &v, &zero)
        };
        dims.push(dim);
        sizes.push(v);
    }
    Ok((dims, sizes))
}

/// The draws' dims and sizes without a size: the parameters' broadcast shape (each dim
/// from the first parameter that does not broadcast there; the others must equal it).
fn broadcast_shape(cx: &mut Context, b: &mut Block, params: &[VarId], values: &[Value]) -> (Vec<Dim>, Vec<Value>) {
    let rank = params.first().map_or(0, |&p| cx.graph.ty(p).ndim());
    let (mut dims, mut sizes) = (Vec::with_capacity(rank), Vec::with_capacity(rank));
    for k in 0..rank {
        let mut found: Option<(Dim, Value)> = None;
        for (&p, v) in params.iter().zip(values) {
            if cx.graph.ty(p).broadcastable(k) {
                continue;
            }
            let d = cx.dims(p)[k];
            match &found {
                None => found = Some((d, b.tensor_dim(v, k))),
                Some((first, _)) => cx.require_equal(d, *first, "RandomVariable parameters"),
            }
        }
        let (d, s) = found.unwrap_or_else(|| (Dim::Static(1), b.constant_index(1)));
        dims.push(d);
        sizes.push(s);
    }
    (dims, sizes)
}

/// The draws (one parallel generic over the output) and the parameter checks' flags.
fn draw(
    b: &mut Block,
    dist: Distribution,
    out_ty: &crate::ir::TensorType,
    key: &Value,
    params: &[(Value, DType, Vec<Index>)],
    sizes: &[Value],
) -> Result<(Value, Vec<(Value, Failure, String)>), String> {
    let rank = out_ty.ndim();
    let dyn_sizes: Vec<Value> = (0..rank).filter(|&k| out_ty.shape[k].is_none()).map(|k| sizes[k].clone()).collect();
    let checks = checks_of(dist);
    let mut inits = vec![b.tensor_empty(tensor_type(out_ty), &dyn_sizes)];
    let flag_ty = TensorType::new(out_ty.shape.clone(), ScalarType::I8);
    for _ in &checks {
        inits.push(b.tensor_empty(flag_ty.clone(), &dyn_sizes));
    }
    // Row-major strides of the flat draw index.
    let mut strides = vec![b.constant_index(1); rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        strides[k] = b.arith(Arith::MulI, &strides[k + 1], &sizes[k + 1]);
    }
    let maps = vec![AffineMap::identity(rank); inits.len()];
    let out_dtype = out_ty.dtype;
    let work = if dist == Distribution::Integers { DType::Int64 } else if out_dtype == DType::Float32 { DType::Float32 } else { DType::Float64 };
    let results = b.linalg_generic(&[], &inits, &maps, &vec![IteratorType::Parallel; rank], |g, _| {
        let at: Vec<Value> = (0..rank).map(|k| g.linalg_index(k)).collect();
        let mut flat = g.constant_index(0);
        for k in 0..rank {
            let term = g.arith(Arith::MulI, &at[k], &strides[k]);
            flat = g.arith(Arith::AddI, &flat, &term);
        }
        let flat = g.index_cast(&flat, ScalarType::I64);
        let shift = g.constant_int(32, ScalarType::I64);
        let high = g.shrui(&flat, &shift);
        let [k0, k1, s0, s1] = key_words(g, key);
        let counter = [g.cast(Cast::TruncI, &flat, ScalarType::I32), g.cast(Cast::TruncI, &high, ScalarType::I32), s0, s1];
        let words = philox(g, &counter, &[k0, k1]);
        let values: Vec<Value> = params
            .iter()
            .map(|(t, dtype, reads)| {
                let idx: Vec<Value> = reads
                    .iter()
                    .zip(&at)
                    .map(|(r, i)| match r {
                        Index::Zero => g.constant_index(0),
                        Index::Draw => i.clone(),
                        Index::ZeroWhere(one) => {
                            let z = g.constant_index(0);
                            g.select(one, &z, i)
                        }
                    })
                    .collect();
                let e = g.tensor_extract(t, &idx);
                subtensor::convert_element(g, &e, *dtype, work)
            })
            .collect();
        let value = transform(g, dist, &words, &values, work)?;
        let value = scalar::convert(g, &Scalar { value, dtype: work }, out_dtype).value;
        let mut yields = vec![value];
        for (check, _, _) in &checks {
            let failed = check(g, &values, work);
            yields.push(g.cast(Cast::ExtUI, &failed, ScalarType::I8));
        }
        Ok::<_, String>(yields)
    })?;
    let failures = checks
        .into_iter()
        .zip(&results[1..])
        .map(|((_, kind, message), flags)| Ok((any_set(b, flags)?, kind, message.to_string())))
        .collect::<Result<_, String>>()?;
    Ok((results[0].clone(), failures))
}

/// A parameter check: `i1` true where the element's parameters are invalid.
type Check = fn(&mut Block, &[Value], DType) -> Value;

/// What numpy (or scipy, where PyTensor's rng_fn calls it) raises on, per distribution.
fn checks_of(dist: Distribution) -> Vec<(Check, Failure, &'static str)> {
    use Distribution::*;
    match dist {
        // numpy: "scale < 0" (NaN passes, giving NaN draws).
        Normal | LogNormal | Laplace | Logistic => vec![(|g, p, w| negative(g, &p[1], w), Failure::Value, "scale < 0")],
        Exponential => vec![(|g, p, w| negative(g, &p[0], w), Failure::Value, "scale < 0")],
        // scipy's rvs: the scale must be >= 0 (NaN fails).
        HalfNormal | Cauchy | Gumbel => {
            vec![(|g, p, w| not_at_least(g, &p[1], 0.0, w), Failure::Value, "Domain error in arguments: the scale must be >= 0")]
        }
        Bernoulli => vec![(
            |g, p, w| {
                let low = not_at_least(g, &p[0], 0.0, w);
                let one = g.constant_f64(1.0, scalar::scalar_type(w));
                let high = g.cmpf(CmpF::Ult, &one, &p[0]);
                g.arith(Arith::OrI, &low, &high)
            },
            Failure::Value,
            "Domain error in arguments: p must be in [0, 1]",
        )],
        // numpy: an infinite or NaN range overflows; a negative one is a ValueError.
        Uniform => vec![
            (
                |g, p, w| {
                    let range = g.arith(Arith::SubF, &p[1], &p[0]);
                    let size = g.math(crate::mlir::MathUnary::AbsF, &range);
                    let inf = g.constant_f64(f64::INFINITY, scalar::scalar_type(w));
                    g.cmpf(CmpF::Ule, &inf, &size)
                },
                Failure::Overflow,
                "high - low range exceeds valid bounds",
            ),
            (
                |g, p, w| {
                    let range = g.arith(Arith::SubF, &p[1], &p[0]);
                    negative(g, &range, w)
                },
                Failure::Value,
                "high - low < 0",
            ),
        ],
        Integers => vec![(|g, p, _| g.cmpi(CmpI::Sge, &p[0], &p[1]), Failure::Value, "low >= high")],
    }
}

fn negative(g: &mut Block, x: &Value, work: DType) -> Value {
    let zero = g.constant_f64(0.0, scalar::scalar_type(work));
    g.cmpf(CmpF::Olt, x, &zero)
}

/// `!(x >= bound)`: NaN fails too.
fn not_at_least(g: &mut Block, x: &Value, bound: f64, work: DType) -> Value {
    let c = g.constant_f64(bound, scalar::scalar_type(work));
    g.cmpf(CmpF::Ult, x, &c)
}

/// One draw of `dist` from Philox's words and the element's parameters (in `work`).
fn transform(g: &mut Block, dist: Distribution, words: &[Value; 4], p: &[Value], work: DType) -> Result<Value, String> {
    use Distribution::*;
    if dist == Integers {
        // low + (64 random bits mod (high - low)): the bias is below (high - low) / 2^64.
        let hi = g.cast(Cast::ExtUI, &words[0], ScalarType::I64);
        let lo = g.cast(Cast::ExtUI, &words[1], ScalarType::I64);
        let shift = g.constant_int(32, ScalarType::I64);
        let hi = g.shli(&hi, &shift);
        let bits = g.arith(Arith::OrI, &hi, &lo);
        let range = g.arith(Arith::SubI, &p[1], &p[0]);
        // A range that is not positive raises after the call; 1 keeps the division defined.
        let one = g.constant_int(1, ScalarType::I64);
        let range = g.arith(Arith::MaxSI, &range, &one);
        let r = g.arith(Arith::RemUI, &bits, &range);
        return Ok(g.arith(Arith::AddI, &p[0], &r));
    }
    let t = scalar::scalar_type(work);
    let [u, v] = uniforms(g, words, work);
    let c = |g: &mut Block, x: f64| g.constant_f64(x, t);
    // u in (0, 1), for the transforms that take the log of u and of 1 - u: the middle of
    // the interval u stands for.
    let open = |g: &mut Block, u: &Value| {
        let half_step = c(g, if work == DType::Float32 { 2f64.powi(-25) } else { 2f64.powi(-54) });
        g.arith(Arith::AddF, u, &half_step)
    };
    let loc_scale = |g: &mut Block, x: &Value| {
        let scaled = g.arith(Arith::MulF, &p[1], x);
        g.arith(Arith::AddF, &p[0], &scaled)
    };
    // A standard normal by Box-Muller: sqrt(-2 log(1 - u)) cos(2 pi v), 1 - u in (0, 1].
    let normal = |g: &mut Block| -> Result<Value, String> {
        let one = c(g, 1.0);
        let w = g.arith(Arith::SubF, &one, &u);
        let l = math(g, ScalarOp::Log, &w, work)?;
        let m2 = c(g, -2.0);
        let r2 = g.arith(Arith::MulF, &m2, &l);
        let r = math(g, ScalarOp::Sqrt, &r2, work)?;
        let tau = c(g, std::f64::consts::TAU);
        let a = g.arith(Arith::MulF, &tau, &v);
        let cos = math(g, ScalarOp::Cos, &a, work)?;
        Ok(g.arith(Arith::MulF, &r, &cos))
    };
    Ok(match dist {
        Uniform => {
            let range = g.arith(Arith::SubF, &p[1], &p[0]);
            let x = g.arith(Arith::MulF, &range, &u);
            g.arith(Arith::AddF, &p[0], &x)
        }
        Normal => {
            let z = normal(g)?;
            loc_scale(g, &z)
        }
        HalfNormal => {
            let z = normal(g)?;
            let z = g.math(crate::mlir::MathUnary::AbsF, &z);
            loc_scale(g, &z)
        }
        LogNormal => {
            let z = normal(g)?;
            let x = loc_scale(g, &z);
            math(g, ScalarOp::Exp, &x, work)?
        }
        Exponential => {
            // -log(1 - u) * scale
            let one = c(g, 1.0);
            let w = g.arith(Arith::SubF, &one, &u);
            let l = math(g, ScalarOp::Log, &w, work)?;
            let e = g.negf(&l);
            g.arith(Arith::MulF, &e, &p[0])
        }
        Cauchy => {
            // tan(pi (u - 1/2)), u in (0, 1)
            let u = open(g, &u);
            let half = c(g, 0.5);
            let x = g.arith(Arith::SubF, &u, &half);
            let pi = c(g, std::f64::consts::PI);
            let a = g.arith(Arith::MulF, &pi, &x);
            let t = math(g, ScalarOp::Tan, &a, work)?;
            loc_scale(g, &t)
        }
        Laplace => {
            // The inverse CDF: log(2u) below the median, -log(2(1 - u)) above it.
            let u = open(g, &u);
            let (half, two, one) = (c(g, 0.5), c(g, 2.0), c(g, 1.0));
            let below = g.cmpf(CmpF::Olt, &u, &half);
            let w = g.arith(Arith::SubF, &one, &u);
            let side = g.select(&below, &u, &w);
            let x = g.arith(Arith::MulF, &two, &side);
            let l = math(g, ScalarOp::Log, &x, work)?;
            let nl = g.negf(&l);
            let e = g.select(&below, &l, &nl);
            loc_scale(g, &e)
        }
        Logistic => {
            // log(u / (1 - u))
            let u = open(g, &u);
            let one = c(g, 1.0);
            let w = g.arith(Arith::SubF, &one, &u);
            let (lu, lw) = (math(g, ScalarOp::Log, &u, work)?, math(g, ScalarOp::Log, &w, work)?);
            let x = g.arith(Arith::SubF, &lu, &lw);
            loc_scale(g, &x)
        }
        Gumbel => {
            // -log(-log(u))
            let u = open(g, &u);
            let l = math(g, ScalarOp::Log, &u, work)?;
            let nl = g.negf(&l);
            let ll = math(g, ScalarOp::Log, &nl, work)?;
            let x = g.negf(&ll);
            loc_scale(g, &x)
        }
        Bernoulli => {
            let hit = g.cmpf(CmpF::Olt, &u, &p[0]);
            let (one, zero) = (c(g, 1.0), c(g, 0.0));
            g.select(&hit, &one, &zero)
        }
        Integers => unreachable!("handled above"),
    })
}

/// One `i8` that is nonzero where any element of `flags` is.
fn any_set(b: &mut Block, flags: &Value) -> Result<Value, String> {
    let rank = flags.tensor().rank();
    let none = b.constant_int(0, ScalarType::I8);
    let empty = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let init = b.linalg_fill(&none, &empty);
    let maps = [AffineMap::identity(rank), AffineMap { dims: rank, results: vec![] }];
    let r = b.linalg_generic(&[flags.clone()], &[init], &maps, &vec![IteratorType::Reduction; rank], |g, args| {
        Ok::<_, String>(vec![g.arith(Arith::OrI, &args[0], &args[1])])
    })?;
    Ok(r[0].clone())
}

/// The next rng: Philox of the reserved counter (0, 2^31, s0, s1) under the key.
fn next_key(b: &mut Block, key: &Value) -> Result<Value, String> {
    let empty = b.tensor_empty(TensorType::new(vec![Some(KEY_WORDS)], ScalarType::I32), &[]);
    let r = b.linalg_generic(&[], &[empty], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let [k0, k1, s0, s1] = key_words(g, key);
        let zero = g.constant_int(0, ScalarType::I32);
        let reserved = g.constant_int(NEXT_KEY_COUNTER as i32 as i64, ScalarType::I32);
        let words = philox(g, &[zero, reserved, s0, s1], &[k0, k1]);
        let j = g.linalg_index(0);
        let mut word = words[3].clone();
        for (i, w) in words.iter().enumerate().take(3).rev() {
            let at = g.constant_index(i as i64);
            let here = g.cmpi(CmpI::Eq, &j, &at);
            word = g.select(&here, w, &word);
        }
        Ok::<_, String>(vec![word])
    })?;
    Ok(r[0].clone())
}
