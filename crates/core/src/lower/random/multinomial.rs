//! `multinomial(n, p)`: counts of n draws over p's categories, as numpy draws them: a
//! binomial per category of the trials left, with p_i over the probability left, the last
//! category taking what remains.

use super::philox::Source;
use super::transforms::{binomial, Math};
use super::{any_set, broadcast_shape, next_key, size_shape, KEY_WORDS};
use crate::dtype::DType;
use crate::lower::scalar::{self, Scalar};
use crate::lower::shapes::Dim;
use crate::lower::{subtensor, tensor_type, Context, ErrorKind, RuntimeCheck};
use crate::ir::{Node, TensorType};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpF, CmpI, IteratorType, ScalarType, Value};

/// numpy's tolerance on the sum of all but the last probability.
const SUM_TOLERANCE: f64 = 1e-12;

/// Each element (batch..., k) reads the counter of its batch row, so the elements of a
/// row draw the same binomials: element k draws those of categories 0..=k (each from a
/// stream of its own, `Source::part`) and keeps the last: O(K^2) binomials per row, for
/// the few categories multinomials have.
pub fn multinomial(cx: &mut Context, b: &mut Block, node: &Node, out_ty: &TensorType) -> Result<(), String> {
    let (rng, size, n_var, p_var) = (node.inputs[0], node.inputs[1], node.inputs[2], node.inputs[3]);
    let (next_out, draws_out) = (node.outputs[0], node.outputs[1]);
    let rank = out_ty.ndim();
    let batch = rank.checked_sub(1).ok_or("draws of rank 0")?;
    let (n_ty, p_ty) = (cx.graph.ty(n_var).clone(), cx.graph.ty(p_var).clone());
    if n_ty.ndim() != batch || p_ty.ndim() != rank {
        return Err(format!("n of rank {} and p of rank {} for draws of rank {rank}", n_ty.ndim(), p_ty.ndim()));
    }
    if !n_ty.dtype.is_int() {
        return Err(format!("RandomVariable multinomial with n of dtype {} (numpy raises TypeError; n must be an integer)", n_ty.dtype));
    }
    let key = cx.value(b, rng)?;
    let n = cx.value(b, n_var)?;
    let p = cx.value(b, p_var)?;
    let (mut dims, mut sizes) = if cx.graph.variables[size].is_none {
        broadcast_shape(cx, b, &[n_var, p_var], &[n.clone(), p.clone()], batch)
    } else {
        size_shape(cx, b, size, batch)?
    };
    for (v, ty) in [(n_var, &n_ty), (p_var, &p_ty)] {
        let d = cx.dims(v);
        for k in 0..batch {
            if !ty.broadcastable(k) {
                cx.require_equal(d[k], dims[k], "multinomial (a parameter's batch dims and the size)");
            }
        }
    }
    dims.push(cx.dims(p_var)[batch]);
    let categories = b.tensor_dim(&p, batch);
    sizes.push(categories.clone());
    for (k, d) in out_ty.shape.iter().enumerate() {
        if let Some(s) = d {
            cx.require_equal(dims[k], Dim::Static(*s), "multinomial");
            dims[k] = Dim::Static(*s);
        }
    }
    let dyn_sizes: Vec<Value> = (0..rank).filter(|&k| out_ty.shape[k].is_none()).map(|k| sizes[k].clone()).collect();
    let draws = b.tensor_empty(tensor_type(out_ty), &dyn_sizes);
    let flags = b.tensor_empty(crate::mlir::TensorType::new(out_ty.shape.clone(), ScalarType::I8), &dyn_sizes);
    let mut strides = vec![b.constant_index(1); batch];
    for k in (0..batch.saturating_sub(1)).rev() {
        strides[k] = b.arith(Arith::MulI, &strides[k + 1], &sizes[k + 1]);
    }
    let (n_dtype, p_dtype, out_dtype) = (n_ty.dtype, p_ty.dtype, out_ty.dtype);
    let work = DType::Float64;
    let r = b.linalg_generic(&[], &[draws, flags], &[AffineMap::identity(rank), AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |g, _| {
        let at: Vec<Value> = (0..rank).map(|k| g.linalg_index(k)).collect();
        let mut row = g.constant_index(0);
        for k in 0..batch {
            let t = g.arith(Arith::MulI, &at[k], &strides[k]);
            row = g.arith(Arith::AddI, &row, &t);
        }
        let src = Source::new(g, &row, &key);
        let m = Math::new(work);
        let read = |g: &mut Block, ty: &crate::ir::TensorType, k: usize| if ty.broadcastable(k) { g.constant_index(0) } else { at[k].clone() };
        let n_at: Vec<Value> = (0..batch).map(|k| read(g, &n_ty, k)).collect();
        let p_at: Vec<Value> = (0..batch).map(|k| read(g, &p_ty, k)).collect();
        let trials = g.tensor_extract(&n, &n_at);
        let trials = subtensor::convert_element(g, &trials, n_dtype, work);
        let prob = |g: &mut Block, i: &Value, p_at: &[Value]| {
            let mut idx = p_at.to_vec();
            idx.push(i.clone());
            let e = g.tensor_extract(&p, &idx);
            subtensor::convert_element(g, &e, p_dtype, work)
        };
        let k = at[batch].clone();
        let one_i = g.constant_index(1);
        let last = g.arith(Arith::SubI, &categories, &one_i);
        let upto = g.arith(Arith::AddI, &k, &one_i);
        let zero_i = g.constant_index(0);
        let (one, zero) = (m.c(g, 1.0), m.c(g, 0.0));
        let counts = g.scf_for(&zero_i, &upto, &one_i, &[trials.clone(), one.clone(), zero.clone()], |lp, i, st| {
            let pi = prob(lp, i, &p_at);
            let ratio = lp.arith(Arith::DivF, &pi, &st[1]);
            let (one, zero) = (m.c(lp, 1.0), m.c(lp, 0.0));
            let ratio = lp.arith(Arith::MinimumF, &ratio, &one);
            let ratio = lp.arith(Arith::MaximumF, &ratio, &zero);
            let part = src.part(lp, i);
            let x = binomial(lp, &m, &part, &st[0], &ratio, 0);
            let is_last = lp.cmpi(CmpI::Eq, i, &last);
            let x = lp.select(&is_last, &st[0], &x);
            let left = lp.arith(Arith::SubF, &st[0], &x);
            let mass = lp.arith(Arith::SubF, &st[1], &pi);
            Ok::<_, String>(vec![left, mass, x])
        })?;
        let count = scalar::convert(g, &Scalar { value: counts[2].clone(), dtype: work }, out_dtype).value;
        // numpy's checks: n < 0; p_k outside [0, 1] or NaN; the sum of all but the last
        // probability above 1 (summed by every element of the row: K adds beside its
        // binomials).
        let zero = m.c(g, 0.0);
        let bad_n = g.cmpf(CmpF::Olt, &trials, &zero);
        let pk = prob(g, &k, &p_at);
        let low = g.cmpf(CmpF::Ult, &pk, &zero);
        let one = m.c(g, 1.0);
        let high = g.cmpf(CmpF::Ult, &one, &pk);
        let bad = g.arith(Arith::OrI, &bad_n, &low);
        let bad = g.arith(Arith::OrI, &bad, &high);
        let start = m.c(g, 0.0);
        let total = g.scf_for(&zero_i, &last, &one_i, &[start], |lp, i, st| {
            let pi = prob(lp, i, &p_at);
            Ok::<_, String>(vec![lp.arith(Arith::AddF, &st[0], &pi)])
        })?;
        let limit = m.c(g, 1.0 + SUM_TOLERANCE);
        let over = g.cmpf(CmpF::Ogt, &total[0], &limit);
        let bad = g.arith(Arith::OrI, &bad, &over);
        m.finish()?;
        Ok::<_, String>(vec![count, g.cast(Cast::ExtUI, &bad, ScalarType::I8)])
    })?;
    let flag = any_set(b, &r[1])?;
    cx.add_check(flag, RuntimeCheck { kind: ErrorKind::Value, message: "n < 0, pvals < 0, pvals > 1, pvals contains NaNs or sum(pvals[:-1]) > 1.0".into() });
    cx.define(draws_out, r[0].clone(), dims);
    let next = next_key(b, &key)?;
    cx.define(next_out, next, vec![Dim::Static(KEY_WORDS)]);
    Ok(())
}
