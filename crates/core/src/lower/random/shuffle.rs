//! `permutation(x)` and `choice(a, size, replace=False, p)` (PyTensor's `PermutationRV`
//! and `ChoiceWithoutReplacement`): a random order of the population, drawn by sorting
//! random keys, of which a choice keeps the first k.
//!
//! Without weights each element gets a 64-bit key from its own Philox counter: the order
//! of the sorted keys is uniform over the n! orders (two keys are equal with probability
//! below n^2 / 2^65; the stable sort then keeps their positions' order). With weights p
//! the key is E_i / p_i for standard exponentials E_i: the order of increasing keys has
//! the law of drawing one element after another without replacement, each with
//! probability proportional to its weight among those left (Efraimidis and Spirakis,
//! "Weighted random sampling with a reservoir", IPL 2006), which is the law of numpy's
//! `choice(replace=False, p=p)` (its batches of draws with replacement keep each value's
//! first appearance). The draws are this backend's own, as every distribution's.

use super::philox::Source;
use super::transforms::Math;
use super::{next_key, size_shape, KEY_WORDS};
use crate::dtype::DType;
use crate::ir::{Node, ScalarOp, TensorType};
use crate::lower::shapes::Dim;
use crate::lower::{sort, subtensor, tensor_type, Context, ErrorKind, RuntimeCheck};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, CmpI, IteratorType, MathUnary, ScalarType, Value};

/// `PermutationRV(x)`: x's elements (a vector) in a random order, or (x a constant
/// integer) a random order of 0..x.
pub fn permutation(cx: &mut Context, b: &mut Block, node: &Node, out_ty: &TensorType) -> Result<(), String> {
    let (rng, size, x) = (node.inputs[0], node.inputs[1], node.inputs[2]);
    let (next_out, draws_out) = (node.outputs[0], node.outputs[1]);
    if !cx.graph.variables[size].is_none {
        return Err("RandomVariable permutation with a size (batches of permutations are not lowered)".into());
    }
    if out_ty.ndim() != 1 {
        return Err("RandomVariable permutation of a tensor that is not a vector".into());
    }
    let key = cx.value(b, rng)?;
    let (population, n, dim) = population(cx, b, x, "permutation")?;
    let order = shuffled(cx, b, &key, &n, None)?;
    let draws = gather(b, &population, &order, &n, out_ty)?;
    cx.define(draws_out, draws, vec![dim]);
    let next = next_key(b, &key)?;
    cx.define(next_out, next, vec![Dim::Static(KEY_WORDS)]);
    Ok(())
}

/// `ChoiceWithoutReplacement(a, [p], core_shape)`: k = core_shape[0] distinct elements of
/// vector a (or of 0..a for an integer a), in the order drawn; numpy's ValueErrors for a
/// k larger than the population, an empty population, and weights that are negative,
/// NaN, of another length, not summing to 1 (within sqrt(eps), as numpy checks) or with
/// fewer than k positive.
pub fn choice(cx: &mut Context, b: &mut Block, node: &Node, out_ty: &TensorType) -> Result<(), String> {
    let (rng, size) = (node.inputs[0], node.inputs[1]);
    let (next_out, draws_out) = (node.outputs[0], node.outputs[1]);
    let (a, p, core_shape) = match node.inputs[2..] {
        [a, core] => (a, None, core),
        [a, p, core] => (a, Some(p), core),
        _ => return Err("RandomVariable choice_without_replacement with other inputs than (a, [p], size)".into()),
    };
    if !cx.graph.variables[size].is_none || out_ty.ndim() != 1 {
        return Err("RandomVariable choice_without_replacement with batch dims (only a vector sample of a vector or integer a is lowered)".into());
    }
    let key = cx.value(b, rng)?;
    let (population, mut n, _) = population(cx, b, a, "choice_without_replacement")?;
    let (mut dims, sizes) = size_shape(cx, b, core_shape, 1)?;
    let k = sizes[0].clone();
    if let Some(s) = out_ty.shape[0] {
        cx.require_equal(dims[0], Dim::Static(s), "choice_without_replacement");
        dims[0] = Dim::Static(s);
    }
    let weights = match p {
        Some(p) => {
            if cx.graph.ty(p).ndim() != 1 {
                return Err("RandomVariable choice_without_replacement with weights p that are not a vector".into());
            }
            let pv = cx.value(b, p)?;
            let pv = crate::lower::elemwise::cast(b, &pv, cx.graph.ty(p), DType::Float64)?;
            let len = b.tensor_dim(&pv, 0);
            let ne = b.cmpi(CmpI::Ne, &len, &n);
            subtensor::check(cx, b, &ne, ErrorKind::Value, "a and p must have same size".into());
            weight_checks(cx, b, &pv, &k)?;
            // The keys read p at positions below n: never past p's end, even before the
            // check of its length raises.
            n = b.arith(Arith::MinUI, &n, &len);
            Some(pv)
        }
        None => None,
    };
    let empty = b.constant_index(0);
    let no_population = b.cmpi(CmpI::Eq, &n, &empty);
    let some_taken = b.cmpi(CmpI::Ne, &k, &empty);
    let cannot = b.arith(Arith::AndI, &no_population, &some_taken);
    subtensor::check(cx, b, &cannot, ErrorKind::Value, "a cannot be empty unless no samples are taken".into());
    let larger = b.cmpi(CmpI::Ugt, &k, &n);
    let larger = b.arith(Arith::AndI, &larger, &some_taken);
    subtensor::check(cx, b, &larger, ErrorKind::Value, "Cannot take a larger sample than population when replace is False".into());
    let order = shuffled(cx, b, &key, &n, weights.as_ref())?;
    // Read as a sample of none until the checks raise.
    let k = b.arith(Arith::MinUI, &k, &n);
    let draws = gather(b, &population, &order, &k, out_ty)?;
    cx.define(draws_out, draws, dims);
    let next = next_key(b, &key)?;
    cx.define(next_out, next, vec![Dim::Static(KEY_WORDS)]);
    Ok(())
}

/// What is drawn from: the vector `x` itself, or 0..x for an integer x (numpy's
/// `arange`); its length n (an `index`), and that length as a dim where it is one.
enum Population {
    Vector(Value, DType),
    Range,
}

fn population(cx: &mut Context, b: &mut Block, x: crate::ir::VarId, what: &str) -> Result<(Population, Value, Dim), String> {
    let ty = cx.graph.ty(x).clone();
    match ty.ndim() {
        1 => {
            let v = cx.value(b, x)?;
            let n = b.tensor_dim(&v, 0);
            Ok((Population::Vector(v, ty.dtype), n, cx.dims(x)[0]))
        }
        0 if ty.dtype.is_int() => match cx.int_values(x).as_deref() {
            Some([crate::lower::IntValue::Const(c)]) if *c >= 0 => Ok((Population::Range, b.constant_index(*c), Dim::Static(*c as u64))),
            _ => Err(format!("RandomVariable {what} of a range whose length is not a non-negative constant")),
        },
        _ => Err(format!("RandomVariable {what} of a tensor of rank {} (a vector or an integer is lowered)", ty.ndim())),
    }
}

/// The positions 0..n in a random order (an int64 vector of length n): the arg-sort of
/// one key per position, E_i / p_i with `weights` p (f64), else 64 random bits.
fn shuffled(cx: &mut Context, b: &mut Block, key: &Value, n: &Value, weights: Option<&Value>) -> Result<Value, String> {
    let dtype = if weights.is_some() { DType::Float64 } else { DType::Int64 };
    let key_ty = TensorType { dtype, shape: vec![None] };
    let init = b.tensor_empty(tensor_type(&key_ty), std::slice::from_ref(n));
    let keys = b.linalg_generic(&[], &[init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let i = g.linalg_index(0);
        let src = Source::new(g, &i, key);
        match weights {
            None => {
                let w = src.block_at(g, 0);
                let hi = g.cast(Cast::ExtUI, &w[0], ScalarType::I64);
                let lo = g.cast(Cast::ExtUI, &w[1], ScalarType::I64);
                let shift = g.constant_int(32, ScalarType::I64);
                let hi = g.shli(&hi, &shift);
                Ok::<_, String>(vec![g.arith(Arith::OrI, &hi, &lo)])
            }
            Some(p) => {
                let m = Math::new(DType::Float64);
                let [u, _] = src.uniforms_at(g, 0, DType::Float64);
                // E = -log(1 - u), 1 - u in (0, 1]; a zero weight's key is +inf (last).
                let neg = g.negf(&u);
                let l = m.f(g, ScalarOp::Log1p, &neg);
                let e = g.negf(&l);
                m.finish()?;
                let w = g.tensor_extract(p, &[i]);
                Ok(vec![g.arith(Arith::DivF, &e, &w)])
            }
        }
    })?[0]
        .clone();
    sort::merge_sort(cx, b, &keys, &key_ty, 0, true)
}

/// The first `k` of the population in `order`, of the draws' type.
fn gather(b: &mut Block, population: &Population, order: &Value, k: &Value, out_ty: &TensorType) -> Result<Value, String> {
    let dyn_sizes: Vec<Value> = if out_ty.shape[0].is_none() { vec![k.clone()] } else { vec![] };
    let init = b.tensor_empty(tensor_type(out_ty), &dyn_sizes);
    let out_dtype = out_ty.dtype;
    Ok(b.linalg_generic(&[], &[init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let j = g.linalg_index(0);
        let at = g.tensor_extract(order, &[j]);
        Ok::<_, String>(vec![match population {
            Population::Vector(v, dtype) => {
                let at = g.index_cast(&at, ScalarType::Index);
                let e = g.tensor_extract(v, &[at]);
                subtensor::convert_element(g, &e, *dtype, out_dtype)
            }
            Population::Range => subtensor::convert_element(g, &at, DType::Int64, out_dtype),
        }])
    })?[0]
        .clone())
}

/// numpy's checks of choice's weights `p` (f64) for a sample of `k`: none negative or
/// NaN, their sum 1 within sqrt(eps), at least k of them positive. One reduction whose
/// result is a vector of the three tallies (IREE 3.13 read a second 0-d result of sibling
/// reductions wrong: see linalg.rs `diagonal_folds`).
fn weight_checks(cx: &mut Context, b: &mut Block, p: &Value, k: &Value) -> Result<(), String> {
    let f64t = ScalarType::F64;
    let tallies = b.tensor_empty(crate::mlir::TensorType::new(vec![Some(3)], f64t), &[]);
    let zero = b.constant_f64(0.0, f64t);
    let tallies = b.linalg_fill(&zero, &tallies);
    let maps = [
        AffineMap { dims: 2, results: vec![AffineExpr::Dim(1)] },
        AffineMap { dims: 2, results: vec![AffineExpr::Dim(0)] },
    ];
    let t = b.linalg_generic(&[p.clone()], &[tallies], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |g, args| {
        let (which, w, acc) = (g.linalg_index(0), &args[0], &args[1]);
        let zero = g.constant_f64(0.0, f64t);
        let one = g.constant_f64(1.0, f64t);
        let positive = g.cmpf(CmpF::Ogt, w, &zero);
        let counted = g.select(&positive, &one, &zero);
        // Negative or NaN: not (w >= 0).
        let bad = g.cmpf(CmpF::Ult, w, &zero);
        let bad = g.select(&bad, &one, &zero);
        let (first, second) = (g.constant_index(0), g.constant_index(1));
        let is_sum = g.cmpi(CmpI::Eq, &which, &first);
        let is_count = g.cmpi(CmpI::Eq, &which, &second);
        let term = g.select(&is_count, &counted, &bad);
        let term = g.select(&is_sum, w, &term);
        Ok::<_, String>(vec![g.arith(Arith::AddF, acc, &term)])
    })?[0]
        .clone();
    // Each flag computed by a kernel reading the tallies (a host-side tensor.extract of
    // such a result read wrong with IREE 3.13: see checks.rs).
    let k = b.index_cast(k, ScalarType::I64);
    let k = b.cast(Cast::SIToFP, &k, f64t);
    let flag = |cx: &mut Context, b: &mut Block, message: &str, failed: &dyn Fn(&mut Block, &[Value; 3]) -> Value| -> Result<(), String> {
        let init = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
        let f = b.linalg_generic(&[], &[init], &[AffineMap { dims: 0, results: vec![] }], &[], |g, _| {
            let tally: [Value; 3] = std::array::from_fn(|i| {
                let at = g.constant_index(i as i64);
                g.tensor_extract(&t, &[at])
            });
            let bad = failed(g, &tally);
            Ok::<_, String>(vec![g.cast(Cast::ExtUI, &bad, ScalarType::I8)])
        })?[0]
            .clone();
        cx.add_check(f, RuntimeCheck { kind: ErrorKind::Value, message: message.into() });
        Ok(())
    };
    flag(cx, b, "probabilities are not non-negative", &|g, t| {
        let zero = g.constant_f64(0.0, f64t);
        g.cmpf(CmpF::Ogt, &t[2], &zero)
    })?;
    flag(cx, b, "probabilities do not sum to 1", &|g, t| {
        // Not (|sum - 1| <= atol): a NaN sum fails too.
        let one = g.constant_f64(1.0, f64t);
        let off = g.arith(Arith::SubF, &t[0], &one);
        let off = g.math(MathUnary::AbsF, &off);
        let atol = g.constant_f64(f64::EPSILON.sqrt(), f64t);
        let far = g.cmpf(CmpF::Ogt, &off, &atol);
        let nan = g.cmpf(CmpF::Uno, &off, &off);
        g.arith(Arith::OrI, &far, &nan)
    })?;
    flag(cx, b, "Fewer non-zero entries in p than size", &|g, t| g.cmpf(CmpF::Olt, &t[1], &k))?;
    Ok(())
}
