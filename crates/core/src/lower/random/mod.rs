//! `RandomVariable`s: draws from a counter-based generator in the kernel.
//!
//! An rng value (PyTensor's `RandomGeneratorType`, a numpy `Generator` outside) is held as
//! four 32-bit words: a Philox key (k0, k1) and a stream (s0, s1). Draw number i (the flat
//! index of the output element, in C order) reads Philox4x32-10 of the counters
//! (i mod 2^32, i / 2^32 + 2^16 b, s0, s1) under the key for blocks b = 0, 1, ... (most
//! distributions read block 0 alone; rejection loops read a block or two per attempt), and
//! turns those uniforms into the distribution's value (`transforms`): no state, every
//! element computed independently, so the draws are one parallel kernel. Philox (Salmon,
//! Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11) passes
//! BigCrush for any key and counter, and distinct counters under one key are independent
//! streams (`philox`).
//!
//! A node's next rng is Philox of the counter (0, 2^31, s0, s1): a counter no draw uses,
//! so the draws of chained nodes (rng -> x -> rng' -> y) are independent, while two nodes
//! given the same rng draw the same numbers, as PyTensor's own backends do (each copies its
//! rng). The runtime makes the key of an input Generator and the Generator of an output key
//! (pytensor_mlir/random.py); the streams are this backend's own, not numpy's.
//!
//! Invalid parameters raise what the C backend's numpy or scipy call raises, after the
//! call (`checks`).

mod checks;
mod multinomial;
mod mv_normal;
mod philox;
mod shuffle;
mod transforms;

use super::scalar::{self, Scalar};
use super::shapes::Dim;
use super::{subtensor, tensor_type, Context, ErrorKind, IntValue, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::random::Distribution;
use crate::ir::{Node, VarId};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpI, IteratorType, ScalarType, TensorType, Value};
use checks::{checks_of, Failure};
use philox::Source;
use transforms::Math;

/// The words of an rng value: the key's two, then the stream's two.
pub const KEY_WORDS: u64 = 4;

/// `RandomVariable(rng, size, *params)`: (the next rng, the draws).
pub fn random_variable(cx: &mut Context, b: &mut Block, node: &Node, dist: Distribution, dtype: DType) -> Result<(), String> {
    let (rng, size, params) = (node.inputs[0], node.inputs[1], &node.inputs[2..]);
    let (next_out, draws_out) = (node.outputs[0], node.outputs[1]);
    if matches!(dist, Distribution::Permutation | Distribution::Choice) {
        let out_ty = cx.graph.ty(draws_out).clone();
        let shuffle = if dist == Distribution::Permutation { shuffle::permutation } else { shuffle::choice };
        return shuffle(cx, b, node, &out_ty);
    }
    if params.len() != dist.arity() {
        return Err(format!("{} parameters for a distribution of {}", params.len(), dist.arity()));
    }
    let out_ty = cx.graph.ty(draws_out).clone();
    if out_ty.dtype != dtype {
        return Err(format!("draws of type {out_ty:?} from an Op of dtype {dtype}"));
    }
    let rank = out_ty.ndim();
    if let Distribution::MvNormal(method) = dist {
        return mv_normal::mv_normal(cx, b, node, &out_ty, method);
    }
    if dist == Distribution::Multinomial {
        return multinomial::multinomial(cx, b, node, &out_ty);
    }
    // The batch dims (size's) lead; the core dims (categorical's weights, dirichlet's
    // vectors) follow.
    let (core_in, core_out) = dist.core_ndims();
    let batch = rank.checked_sub(core_out).ok_or("draws of too low a rank")?;
    if let Some(&p) = params.iter().find(|&&p| cx.graph.ty(p).ndim() != batch + core_in) {
        return Err(format!("a parameter of rank {} for draws of rank {rank}", cx.graph.ty(p).ndim()));
    }
    if dist == Distribution::HyperGeometric {
        if let Some(&p) = params.iter().find(|&&p| !cx.graph.ty(p).dtype.is_int()) {
            // numpy truncates float counts; only integer ones are lowered.
            return Err(format!("RandomVariable hypergeometric with a parameter of dtype {} (integer counts are lowered)", cx.graph.ty(p).dtype));
        }
    }
    if matches!(dist, Distribution::Binomial | Distribution::BetaBinomial) && !cx.graph.ty(params[0]).dtype.is_int() {
        // numpy's binomial refuses it at every call ("Cannot cast ... according to the rule 'safe'").
        let name = format!("{dist:?}").to_lowercase();
        return Err(format!("RandomVariable {name} with n of dtype {} (n must be an integer)", cx.graph.ty(params[0]).dtype));
    }
    let key = cx.value(b, rng)?;
    let param_values: Vec<Value> = params.iter().map(|&p| cx.value(b, p)).collect::<Result<_, _>>()?;
    let (mut dims, mut sizes) =
        if cx.graph.variables[size].is_none { broadcast_shape(cx, b, params, &param_values, batch) } else { size_shape(cx, b, size, batch)? };
    if core_out == 1 {
        // dirichlet: one draw per weight.
        dims.push(cx.dims(params[0])[batch]);
        sizes.push(b.tensor_dim(&param_values[0], batch));
    }
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
        for k in 0..batch {
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
        if core_out == 1 {
            // dirichlet's weight k for draw k.
            per_dim.push(Index::Draw);
        }
        reads.push(per_dim);
    }
    let params: Vec<Param> = params
        .iter()
        .zip(param_values)
        .zip(reads)
        .map(|((&p, value), reads)| Param { value, dtype: cx.graph.ty(p).dtype, reads, vector: core_in > core_out })
        .collect();
    let (draws, failures) = draw(b, dist, &out_ty, &key, &params, &sizes)?;
    let draws = if dist == Distribution::Dirichlet { transforms::normalize_logs(b, &draws)? } else { draws };
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

/// A parameter as the draw kernel reads it.
struct Param {
    value: Value,
    dtype: DType,
    /// Its index along each of its leading dims.
    reads: Vec<Index>,
    /// A vector per draw (categorical's weights), read whole by the transform.
    vector: bool,
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
fn broadcast_shape(cx: &mut Context, b: &mut Block, params: &[VarId], values: &[Value], rank: usize) -> (Vec<Dim>, Vec<Value>) {
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
    params: &[Param],
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
    // Integers in i64; floats in the output's type; integer draws (counts) in f64.
    let work = if dist == Distribution::Integers { DType::Int64 } else if out_dtype == DType::Float32 { DType::Float32 } else { DType::Float64 };
    let results = b.linalg_generic(&[], &inits, &maps, &vec![IteratorType::Parallel; rank], |g, _| {
        let at: Vec<Value> = (0..rank).map(|k| g.linalg_index(k)).collect();
        let mut flat = g.constant_index(0);
        for k in 0..rank {
            let term = g.arith(Arith::MulI, &at[k], &strides[k]);
            flat = g.arith(Arith::AddI, &flat, &term);
        }
        let src = Source::new(g, &flat, key);
        let (mut values, mut vectors) = (Vec::new(), Vec::new());
        for p in params {
            let idx: Vec<Value> = p
                .reads
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
            if p.vector {
                vectors.push(transforms::Vector { tensor: p.value.clone(), prefix: idx, dtype: p.dtype });
            } else {
                let e = g.tensor_extract(&p.value, &idx);
                values.push(subtensor::convert_element(g, &e, p.dtype, work));
            }
        }
        let m = Math::new(work);
        let value = transforms::transform(g, &m, dist, &src, &values, &vectors);
        m.finish()?;
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

/// The next rng (see `philox::next_key_word`).
fn next_key(b: &mut Block, key: &Value) -> Result<Value, String> {
    let empty = b.tensor_empty(TensorType::new(vec![Some(KEY_WORDS)], ScalarType::I32), &[]);
    let r = b.linalg_generic(&[], &[empty], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let j = g.linalg_index(0);
        Ok::<_, String>(vec![philox::next_key_word(g, key, &j)])
    })?;
    Ok(r[0].clone())
}
