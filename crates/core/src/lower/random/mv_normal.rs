//! `multivariate_normal(mean, cov)`: mean + R z, R cov's Cholesky factor (method
//! "cholesky") or the square root numpy's "eigh" and "svd" methods take.

use super::{broadcast_shape, draw, next_key, size_shape, KEY_WORDS};
use crate::ir::random::{Distribution, MvMethod};
use crate::ir::{Node, TensorType};
use crate::lower::shapes::Dim;
use crate::lower::{eigen, elemwise, linalg, tensor_type, Context, RuntimeCheck};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, IndexArg, IteratorType, ScalarType, TensorType as CoreTensorType, Value};

/// `multivariate_normal(mean, cov)`: mean + L z for standard normal vectors z, L the lower
/// Cholesky factor of cov (method "cholesky": one for every draw, or each draw's own
/// where cov has batch dims, `batched_factors_times`; a cov that is not positive definite
/// raises numpy's `LinAlgError`, as `np.linalg.cholesky` in PyTensor's rng_fn does), or
/// the square root of cov by its eigen or singular value decomposition (methods "eigh"
/// and "svd": `eigen::covariance_root`, of one cov or, in the same loop, of each).
pub fn mv_normal(cx: &mut Context, b: &mut Block, node: &Node, out_ty: &TensorType, method: MvMethod) -> Result<(), String> {
    let (rng, size, mean, cov) = (node.inputs[0], node.inputs[1], node.inputs[2], node.inputs[3]);
    let rank = out_ty.ndim();
    let batch = rank.checked_sub(1).ok_or("draws of rank 0")?;
    let (mean_ty, cov_ty) = (cx.graph.ty(mean).clone(), cx.graph.ty(cov).clone());
    if mean_ty.ndim() != rank || cov_ty.ndim() != rank + 1 {
        return Err(format!("a mean of rank {} and a cov of rank {} for draws of rank {rank}", mean_ty.ndim(), cov_ty.ndim()));
    }
    let element = linalg::working_type(out_ty, "multivariate_normal")?;
    let work = out_ty.dtype;
    let key = cx.value(b, rng)?;
    let mean_v = cx.value(b, mean)?;
    let mean_v = elemwise::cast(b, &mean_v, &mean_ty, work)?;
    let (mean_dims, cov_dims) = (cx.dims(mean), cx.dims(cov));
    // The batch shape: size's, or the mean's and cov's broadcast.
    let (mut dims, mut sizes) = if cx.graph.variables[size].is_none {
        let cov_v = cx.value(b, cov)?;
        broadcast_shape(cx, b, &[mean, cov], &[mean_v.clone(), cov_v], batch)
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
    let batched = (0..batch).any(|k| !cov_ty.broadcastable(k));
    // The factor of the one cov, or (`batched`) of each.
    let c = linalg::operand(cx, b, cov, work)?;
    if batched {
        for k in (0..batch).filter(|&k| !cov_ty.broadcastable(k)) {
            cx.require_equal(cov_dims[k], dims[k], "multivariate_normal (cov's batch dims and the draws')");
        }
        let z_ty = TensorType { dtype: work, shape: vec![None; rank] };
        let (z, _) = draw(b, Distribution::MvNormal(MvMethod::Cholesky), &z_ty, &key, &[], &sizes)?;
        let lz = batched_factors_times(cx, b, &c, &z, &cov_ty, &n, batch, method, element)?;
        return finish(cx, b, node, out_ty, lz, mean_v, &mean_ty, &sizes, dims, &key);
    }
    let c = if batch > 0 { b.tensor_collapse(&c, &[(0..=batch).collect(), vec![batch + 1]]) } else { c };
    let l = match method {
        MvMethod::Cholesky => {
            let l = linalg::factor(cx, b, &c, &n, true)?;
            let bad = linalg::not_positive(b, &l, &n)?;
            let failed = cx.exception("numpy.linalg.LinAlgError");
            cx.add_check(bad, RuntimeCheck { kind: failed, message: "Matrix is not positive definite".into() });
            l
        }
        MvMethod::Eigh | MvMethod::Svd => eigen::covariance_root(cx, b, &c, method == MvMethod::Svd, element)?,
    };
    // z: standard normals, one per element of the draws.
    let z_ty = TensorType { dtype: work, shape: vec![None; rank] };
    let (z, _) = draw(b, Distribution::MvNormal(MvMethod::Cholesky), &z_ty, &key, &[], &sizes)?;
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
    finish(cx, b, node, out_ty, lz, mean_v, &mean_ty, &sizes, dims, &key)
}

/// mean + `lz` as the draws, and the next rng.
#[allow(clippy::too_many_arguments)]
fn finish(cx: &mut Context, b: &mut Block, node: &Node, out_ty: &TensorType, lz: Value, mean_v: Value, mean_ty: &TensorType, sizes: &[Value], dims: Vec<Dim>, key: &Value) -> Result<(), String> {
    let (next_out, draws_out) = (node.outputs[0], node.outputs[1]);
    let rank = out_ty.ndim();
    let work = out_ty.dtype;
    let dim = |k: usize| AffineExpr::Dim(k);
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
    let next = next_key(b, key)?;
    cx.define(next_out, next, vec![Dim::Static(KEY_WORDS)]);
    Ok(())
}

/// L_b z for each draw, L_b the square root of the draw's own covariance matrix as
/// `method` makes it (`c`: batch dims, then n x n; a batch dim of length 1 broadcast): the
/// roots of the flattened stack of matrices, one after another in a loop of the host
/// program, then one contraction reading each draw's root by its flat batch position.
/// numpy's `LinAlgError` where any is not positive definite (cholesky, as
/// `np.linalg.cholesky` of the stack) or where any element is not finite (eigh, svd: as
/// PyTensor's rng_fn, checked on the whole stack before the loop).
#[allow(clippy::too_many_arguments)]
fn batched_factors_times(cx: &mut Context, b: &mut Block, c: &Value, z: &Value, cov_ty: &TensorType, n: &Value, batch: usize, method: MvMethod, element: ScalarType) -> Result<Value, String> {
    if method != MvMethod::Cholesky {
        let rows = b.tensor_collapse(c, &[(0..=batch).collect(), vec![batch + 1]]);
        eigen::check_covariance_finite(cx, b, &rows)?;
    }
    let c = b.tensor_collapse(c, &[(0..batch).collect(), vec![batch], vec![batch + 1]]);
    let count = b.tensor_dim(&c, 0);
    let stack = linalg::zeros(b, element, &[count.clone(), n.clone(), n.clone()]);
    let stack = cx.loop_start(b, &stack)?;
    let (first, step) = (b.constant_index(0), b.constant_index(1));
    let (dn, zero, one) = (IndexArg::Dyn(n.clone()), IndexArg::Const(0), IndexArg::Const(1));
    let factors = b.scf_for(&first, &count, &step, &[stack], |body, k, args| {
        let dk = IndexArg::Dyn(k.clone());
        let ck = body.tensor_extract_slice(&c, &[dk.clone(), zero.clone(), zero.clone()], &[one.clone(), dn.clone(), dn.clone()]);
        let ck = body.tensor_collapse(&ck, &[vec![0, 1], vec![2]]);
        let l = match method {
            MvMethod::Cholesky => linalg::factor(cx, body, &ck, n, true)?,
            MvMethod::Eigh | MvMethod::Svd => eigen::covariance_root_of_finite(cx, body, &ck, method == MvMethod::Svd, element)?,
        };
        let l = body.tensor_expand(&l, &[vec![0, 1], vec![2]], CoreTensorType::new(vec![Some(1), None, None], element), &[one.clone(), dn.clone(), dn.clone()]);
        Ok::<_, String>(vec![body.tensor_insert_slice(&l, &args[0], &[dk, zero.clone(), zero.clone()])])
    })?[0]
        .clone();
    // Any pivot of any Cholesky factor not positive (`factor` keeps such a pivot on the
    // diagonal); the other methods' roots have no failure (NaN where an eigenvalue < 0).
    if method == MvMethod::Cholesky {
        let flag = b.tensor_empty(CoreTensorType::new(vec![], ScalarType::I8), &[]);
        let none = b.constant_int(0, ScalarType::I8);
        let flag = b.linalg_fill(&none, &flag);
        let lanes = b.tensor_empty(CoreTensorType::new(vec![None, None], ScalarType::I8), &[count.clone(), n.clone()]);
        let f = factors.clone();
        let bad = b.linalg_generic(&[lanes], &[flag], &[AffineMap::identity(2), AffineMap { dims: 2, results: vec![] }], &[IteratorType::Reduction; 2], |g, args| {
            let (k, i) = (g.linalg_index(0), g.linalg_index(1));
            let pivot = g.tensor_extract(&f, &[k, i.clone(), i]);
            let zero = g.constant_f64(0.0, element);
            let failed = g.cmpf(CmpF::Ole, &pivot, &zero);
            let failed = g.cast(Cast::ExtUI, &failed, ScalarType::I8);
            Ok::<_, String>(vec![g.arith(Arith::OrI, &args[1], &failed)])
        })?[0]
            .clone();
        let failed = cx.exception("numpy.linalg.LinAlgError");
        cx.add_check(bad, RuntimeCheck { kind: failed, message: "Matrix is not positive definite".into() });
    }
    // Row-major strides of the cov's batch dims (0 where one broadcasts).
    let mut strides = vec![b.constant_index(0); batch];
    let mut stride = b.constant_index(1);
    for k in (0..batch).rev() {
        if !cov_ty.broadcastable(k) {
            strides[k] = stride.clone();
            let d = b.tensor_dim(z, k);
            stride = b.arith(Arith::MulI, &stride, &d);
        }
    }
    let rank = batch + 1;
    let sizes: Vec<Value> = (0..rank).map(|k| b.tensor_dim(z, k)).collect();
    let zeros = linalg::zeros(b, element, &sizes);
    let dim = |k: usize| AffineExpr::Dim(k);
    let z_map = AffineMap { dims: rank + 1, results: (0..batch).map(dim).chain([dim(rank)]).collect() };
    let out_map = AffineMap { dims: rank + 1, results: (0..rank).map(dim).collect() };
    let mut iters = vec![IteratorType::Parallel; rank];
    iters.push(IteratorType::Reduction);
    Ok(b.linalg_generic(&[z.clone()], &[zeros], &[z_map, out_map], &iters, |g, a| {
        let mut flat = g.constant_index(0);
        for (k, s) in strides.iter().enumerate() {
            let at = g.linalg_index(k);
            let term = g.arith(Arith::MulI, &at, s);
            flat = g.arith(Arith::AddI, &flat, &term);
        }
        let (i, j) = (g.linalg_index(batch), g.linalg_index(rank));
        let l = g.tensor_extract(&factors, &[flat, i, j]);
        let p = g.arith(Arith::MulF, &a[0], &l);
        Ok::<_, String>(vec![g.arith(Arith::AddF, &a[1], &p)])
    })?[0]
        .clone())
}
