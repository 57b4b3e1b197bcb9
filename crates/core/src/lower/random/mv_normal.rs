//! `multivariate_normal(mean, cov)`: mean + L z, as numpy's method "cholesky" draws it.

use super::{broadcast_shape, draw, next_key, size_shape, KEY_WORDS};
use crate::ir::random::Distribution;
use crate::ir::{Node, TensorType};
use crate::lower::shapes::Dim;
use crate::lower::{elemwise, linalg, tensor_type, Context, RuntimeCheck};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, IteratorType, Value};

/// `multivariate_normal(mean, cov)` (numpy's method "cholesky"): mean + L z for standard
/// normal vectors z, L the lower Cholesky factor of cov (one cov for every draw: its batch
/// dims must broadcast); a cov that is not positive definite raises numpy's
/// `LinAlgError`, as `np.linalg.cholesky` in PyTensor's rng_fn does.
pub fn mv_normal(cx: &mut Context, b: &mut Block, node: &Node, out_ty: &TensorType) -> Result<(), String> {
    let (rng, size, mean, cov) = (node.inputs[0], node.inputs[1], node.inputs[2], node.inputs[3]);
    let (next_out, draws_out) = (node.outputs[0], node.outputs[1]);
    let rank = out_ty.ndim();
    let batch = rank.checked_sub(1).ok_or("draws of rank 0")?;
    let (mean_ty, cov_ty) = (cx.graph.ty(mean).clone(), cx.graph.ty(cov).clone());
    if mean_ty.ndim() != rank || cov_ty.ndim() != rank + 1 {
        return Err(format!("a mean of rank {} and a cov of rank {} for draws of rank {rank}", mean_ty.ndim(), cov_ty.ndim()));
    }
    if (0..batch).any(|k| !cov_ty.broadcastable(k)) {
        return Err("multivariate_normal with a batch of covariance matrices (one cov for all draws is lowered)".into());
    }
    let element = linalg::working_type(out_ty, "multivariate_normal")?;
    let work = out_ty.dtype;
    let key = cx.value(b, rng)?;
    let mean_v = cx.value(b, mean)?;
    let mean_v = elemwise::cast(b, &mean_v, &mean_ty, work)?;
    let (mean_dims, cov_dims) = (cx.dims(mean), cx.dims(cov));
    // The batch shape: size's, or the mean's.
    let (mut dims, mut sizes) = if cx.graph.variables[size].is_none {
        broadcast_shape(cx, b, &[mean], std::slice::from_ref(&mean_v), batch)
    } else {
        size_shape(cx, b, size, batch)?
    };
    for k in 0..batch {
        if !mean_ty.broadcastable(k) {
            cx.require_equal(mean_dims[k], dims[k], "multivariate_normal (the mean's batch dims and the size)");
        }
    }
    let n_dim = mean_dims[batch];
    cx.require_equal(cov_dims[batch], n_dim, "multivariate_normal (cov's rows and the mean)");
    cx.require_equal(cov_dims[batch + 1], n_dim, "multivariate_normal (cov's columns and the mean)");
    dims.push(n_dim);
    let n = b.tensor_dim(&mean_v, batch);
    sizes.push(n.clone());
    for (k, d) in out_ty.shape.iter().enumerate() {
        if let Some(s) = d {
            cx.require_equal(dims[k], Dim::Static(*s), "multivariate_normal");
            dims[k] = Dim::Static(*s);
        }
    }
    // The factor of the one cov.
    let c = linalg::operand(cx, b, cov, work)?;
    let c = if batch > 0 { b.tensor_collapse(&c, &[(0..=batch).collect(), vec![batch + 1]]) } else { c };
    let l = linalg::factor(cx, b, &c, &n, true)?;
    let bad = linalg::not_positive(b, &l, &n)?;
    let failed = cx.exception("numpy.linalg.LinAlgError");
    cx.add_check(bad, RuntimeCheck { kind: failed, message: "Matrix is not positive definite".into() });
    // z: standard normals, one per element of the draws.
    let z_ty = TensorType { dtype: work, shape: vec![None; rank] };
    let (z, _) = draw(b, Distribution::MvNormal, &z_ty, &key, &[], &sizes)?;
    // mean + L z, contracting z's last dim against L's columns.
    let dyn_sizes: Vec<Value> = sizes.clone();
    let zeros = linalg::zeros(b, element, &dyn_sizes);
    let dim = |k: usize| AffineExpr::Dim(k);
    let batch_and = |last: usize| -> Vec<AffineExpr> { (0..batch).map(dim).chain([dim(last)]).collect() };
    let maps = [
        AffineMap { dims: rank + 1, results: batch_and(rank) },
        AffineMap { dims: rank + 1, results: vec![dim(batch), dim(rank)] },
        AffineMap { dims: rank + 1, results: batch_and(batch) },
    ];
    let mut iters = vec![IteratorType::Parallel; rank];
    iters.push(IteratorType::Reduction);
    let lz = b.linalg_generic(&[z, l], &[zeros], &maps, &iters, |g, a| {
        let p = g.arith(Arith::MulF, &a[0], &a[1]);
        Ok::<_, String>(vec![g.arith(Arith::AddF, &a[2], &p)])
    })?[0]
        .clone();
    let mean_map = AffineMap {
        dims: rank,
        results: (0..rank).map(|k| if mean_ty.broadcastable(k) { AffineExpr::Constant(0) } else { dim(k) }).collect(),
    };
    let empty = b.tensor_empty(tensor_type(out_ty), &(0..rank).filter(|&k| out_ty.shape[k].is_none()).map(|k| sizes[k].clone()).collect::<Vec<_>>());
    let lz = b.tensor_cast(&lz, tensor_type(&TensorType { dtype: work, shape: out_ty.shape.clone() }));
    let x = b.linalg_generic(&[lz, mean_v], &[empty], &[AffineMap::identity(rank), mean_map, AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |g, a| {
        Ok::<_, String>(vec![g.arith(Arith::AddF, &a[0], &a[1])])
    })?[0]
        .clone();
    cx.define(draws_out, x, dims);
    let next = next_key(b, &key)?;
    cx.define(next_out, next, vec![Dim::Static(KEY_WORDS)]);
    Ok(())
}
