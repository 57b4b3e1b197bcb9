//! `Blockwise` linear algebra on the CPU: every matrix of the batch in one dispatch, the
//! kernels of dense_kernels running over the matrices stacked ((B n) x n, the batch dims
//! collapsed), each matrix's result what the core op gives it alone (NaN where LAPACK
//! fails). Cholesky, triangular and Cholesky solves, general solves, determinants,
//! inverses, LU factors and their pivots' permutations (pivots.rs); and Schur forms,
//! symmetric eigenproblems, QR factorizations and SVDs, one workgroup a matrix (`Block::dispatch_parts`: the kernel is too large for IREE to
//! bufferize inside a loop over the stack). Each rule returns `None` where it does not apply (GPU targets, a broadcast
//! batch dim, other variants), and blockwise.rs loops over the batch instead: one
//! host-loop step a matrix, about 7 us each (a batched solve of 100 5 x 5 systems took
//! 0.71 ms that way, 27 us stacked; NUMBA 0.10 ms).

use super::linalg::{as_matrix, augmented, define, dynamic, map, operand, working_type, LastColumn};
use super::shapes::{Dim, DimExpr};
use super::{dense_kernels, scalar, Context, ErrorKind, RuntimeCheck};
use crate::ir::{Node, QrMode, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, CmpI, IndexArg, IteratorType, ScalarType, TensorType, Value};

/// Whether a batch of `batch` dims can run stacked: on the CPU, no operand broadcasting a
/// batch dim (a lone operand's static 1 is just a size), every operand of `batch` + its
/// core's dims.
fn applies(cx: &Context, node: &Node, batch: usize, core_dims: &[usize]) -> bool {
    let alone = node.inputs.len() == 1;
    let fits = node.inputs.iter().zip(core_dims).all(|(&v, &core)| {
        let ty = cx.graph.ty(v);
        ty.ndim() == batch + core && (alone || (0..batch).all(|j| !ty.broadcastable(j)))
    });
    scalar::has_sequential_kernels() && batch > 0 && fits
}

/// (B n) x c: the batch dims of `t` (a value of `batch` + 2 dims) and its rows as one.
fn stacked(b: &mut Block, t: &Value, batch: usize) -> Value {
    b.tensor_collapse(t, &[(0..=batch).collect(), vec![batch + 1]])
}

/// The square matrices of `x_var` (`batch` dims of them) in the output's dtype, stacked;
/// `kind` before the call where they are not square.
fn square_stack(cx: &mut Context, b: &mut Block, x_var: VarId, out: VarId, batch: usize, what: &str, kind: ErrorKind) -> Result<Value, String> {
    working_type(cx.graph.ty(out), what)?;
    let d = cx.dims(x_var);
    cx.require(d[batch], d[batch + 1], &format!("{what} (the last two dims must be square)"), kind);
    let a = operand(cx, b, x_var, cx.graph.ty(out).dtype)?;
    Ok(stacked(b, &a, batch))
}

/// A batch of systems a x = rhs: a stacked, the right-hand sides as (B n) x k (k = 1 for
/// vectors), and the right-hand sides' sizes and dims (the solution's).
struct Systems {
    a: Value,
    rhs: Value,
    sizes: Vec<Value>,
    dims: Vec<Dim>,
}

/// The systems of `node` (a, b; `b_ndim` core dims of b), with the core op's checks:
/// the batch dims equal, a square, b as long as a.
fn systems(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, b_ndim: usize, what: &str) -> Result<Systems, String> {
    let (a_var, b_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let dtype = cx.graph.ty(out).dtype;
    working_type(cx.graph.ty(out), what)?;
    let (da, db) = (cx.dims(a_var), cx.dims(b_var));
    for j in 0..batch {
        cx.require_equal(da[j], db[j], what);
    }
    cx.require_equal(da[batch], da[batch + 1], &format!("{what} (expected a square matrix)"));
    cx.require_equal(da[batch], db[batch], &format!("{what} (the shapes of a and b are incompatible)"));
    let a = operand(cx, b, a_var, dtype)?;
    let rhs = operand(cx, b, b_var, dtype)?;
    let sizes: Vec<Value> = (0..batch + b_ndim).map(|k| b.tensor_dim(&rhs, k)).collect();
    let rhs = if b_ndim == 1 {
        let flat = b.tensor_flatten(&rhs);
        let rows = b.tensor_dim(&flat, 0);
        let column = as_matrix(b, &flat, &rows, true);
        dynamic(b, &column)
    } else {
        stacked(b, &rhs, batch)
    };
    Ok(Systems { a: stacked(b, &a, batch), rhs, sizes, dims: db })
}

/// `x` (stacked solutions) as the node's output, of the right-hand sides' shape.
fn define_solutions(cx: &mut Context, b: &mut Block, node: &Node, x: &Value, systems: Systems) {
    let full = TensorType::new(vec![None; systems.sizes.len()], x.tensor().element);
    let sizes: Vec<IndexArg> = systems.sizes.into_iter().map(IndexArg::Dyn).collect();
    let flat = b.tensor_flatten(x);
    let shaped = b.tensor_unflatten(&flat, full, &sizes);
    define(cx, b, node.outputs[0], &shaped, systems.dims);
}

/// `Blockwise{Cholesky}`: `dense_kernels::cholesky` over the stack, each factor NaN where
/// potrf fails.
pub fn cholesky(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, lower: bool) -> Result<Option<()>, String> {
    if !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let a = square_stack(cx, b, x_var, out, batch, "Cholesky", ErrorKind::Value)?;
    let n = b.tensor_dim(&a, 1);
    let l = dense_kernels::cholesky(cx, b, &a, &n, lower, true, !lower);
    define_unstacked(cx, b, out, x_var, &l, batch)
}

/// `out`, of `x_var`'s shape, from its matrices stacked in `m`.
fn define_unstacked(cx: &mut Context, b: &mut Block, out: VarId, x_var: VarId, m: &Value, batch: usize) -> Result<Option<()>, String> {
    let sizes: Vec<IndexArg> = {
        let x = cx.value(b, x_var)?;
        (0..batch + 2).map(|k| IndexArg::Dyn(b.tensor_dim(&x, k))).collect()
    };
    let full = TensorType::new(vec![None; batch + 2], m.tensor().element);
    let shaped = b.tensor_expand(m, &[(0..=batch).collect(), vec![batch + 1]], full, &sizes);
    let d = cx.dims(x_var);
    define(cx, b, out, &shaped, d);
    Ok(Some(()))
}

/// `Blockwise{SolveTriangular}`: `dense_kernels::substitute` over the stack, each
/// solution NaN where its matrix is singular.
pub fn solve_triangular(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, (lower, unit, b_ndim): (bool, bool, usize)) -> Result<Option<()>, String> {
    if !(1..=2).contains(&b_ndim) || !applies(cx, node, batch, &[2, b_ndim]) {
        return Ok(None);
    }
    let systems = systems(cx, b, node, batch, b_ndim, "SolveTriangular")?;
    let x = dense_kernels::substitute(cx, b, &systems.a, &systems.rhs, lower, false, unit, true);
    define_solutions(cx, b, node, &x, systems);
    Ok(Some(()))
}

/// `Blockwise{CholeskySolve}`: the two substitutions with each factor c over the stack
/// (lower: c y = b, then c^T x = y; upper: c^T y = b, then c x = y); potrs checks
/// nothing, and neither do they.
pub fn cholesky_solve(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, (lower, b_ndim): (bool, usize)) -> Result<Option<()>, String> {
    if !(1..=2).contains(&b_ndim) || !applies(cx, node, batch, &[2, b_ndim]) {
        return Ok(None);
    }
    let systems = systems(cx, b, node, batch, b_ndim, "CholeskySolve")?;
    let y = dense_kernels::substitute(cx, b, &systems.a, &systems.rhs, true, !lower, false, false);
    let x = dense_kernels::substitute(cx, b, &systems.a, &y, false, lower, false, false);
    define_solutions(cx, b, node, &x, systems);
    Ok(Some(()))
}

/// The stacked solutions of a x = rhs by elimination with partial pivoting
/// (`dense_kernels::eliminate` on [a | rhs]) and back substitution (`substitute` on U),
/// and U; where `nan_if_singular`, a solution is NaN where its U has a zero pivot.
fn lu_solve(cx: &mut Context, b: &mut Block, a: &Value, rhs: &Value, nan_if_singular: bool) -> (Value, Value) {
    let (rows, n, k) = (b.tensor_dim(a, 0), b.tensor_dim(a, 1), b.tensor_dim(rhs, 1));
    let w = augmented(b, a, Some(rhs), false);
    let w = dense_kernels::eliminate(cx, b, &w, &n, &n, LastColumn::Eliminated);
    let zero = IndexArg::Const(0);
    let u = b.tensor_extract_slice(&w, &[zero.clone(), zero.clone()], &[IndexArg::Dyn(rows.clone()), IndexArg::Dyn(n.clone())]);
    let y = b.tensor_extract_slice(&w, &[zero, IndexArg::Dyn(n)], &[IndexArg::Dyn(rows), IndexArg::Dyn(k)]);
    (dense_kernels::substitute(cx, b, &u, &y, false, false, false, nan_if_singular), u)
}

/// `Blockwise{Solve}` with assume_a "gen": each solution NaN where its matrix is
/// singular (an exact zero pivot), as `solve` gives them one by one.
pub fn solve(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, assume_a: &str, b_ndim: usize) -> Result<Option<()>, String> {
    if assume_a != "gen" || !(1..=2).contains(&b_ndim) || !applies(cx, node, batch, &[2, b_ndim]) {
        return Ok(None);
    }
    let systems = systems(cx, b, node, batch, b_ndim, "Solve")?;
    let (x, _) = lu_solve(cx, b, &systems.a, &systems.rhs, true);
    define_solutions(cx, b, node, &x, systems);
    Ok(Some(()))
}

/// The i8 `flag` set to 1 where the pivot `v` is an exact zero (a singular U).
fn or_if_zero(g: &mut Block, v: &Value, flag: &Value) -> Value {
    let zero = g.constant_f64(0.0, v.scalar());
    let is_zero = g.cmpf(CmpF::Oeq, v, &zero);
    let (no, yes) = (g.constant_int(0, ScalarType::I8), g.constant_int(1, ScalarType::I8));
    let bit = g.select(&is_zero, &yes, &no);
    g.arith(Arith::OrI, &bit, flag)
}

/// `Blockwise{MatrixInverse}`: a x = I for each matrix; any singular matrix (an exact zero
/// pivot) raises numpy's LinAlgError("Singular matrix") after the call, as the core op.
pub fn inverse(cx: &mut Context, b: &mut Block, node: &Node, batch: usize) -> Result<Option<()>, String> {
    if !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let linalg_error = cx.exception("numpy.linalg.LinAlgError");
    let a = square_stack(cx, b, x_var, out, batch, "MatrixInverse", linalg_error.clone())?;
    let (rows, n) = (b.tensor_dim(&a, 0), b.tensor_dim(&a, 1));
    let element = a.tensor().element;
    // The identities stacked: ones where the column is the row within its matrix.
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), n.clone()]);
    let nn = n.clone();
    let eye = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let within = g.arith(Arith::RemUI, &r, &nn);
        let on = g.cmpi(CmpI::Eq, &within, &c);
        let (one, zero) = (g.constant_f64(1.0, element), g.constant_f64(0.0, element));
        Ok::<_, String>(vec![g.select(&on, &one, &zero)])
    })?[0]
        .clone();
    let (x, u) = lu_solve(cx, b, &a, &eye, false);
    // Any zero on the diagonals of the U's: (r, r mod n) over the stacked rows.
    let none = b.constant_int(0, ScalarType::I8);
    let flag = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let flag = b.linalg_fill(&none, &flag);
    let rows_domain = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(&rows));
    let maps = [AffineMap::identity(1), map(1, &[])];
    let nn = n.clone();
    let singular = b.linalg_generic(&[rows_domain], &[flag], &maps, &[IteratorType::Reduction], |g, args| {
        let r = g.linalg_index(0);
        let c = g.arith(Arith::RemUI, &r, &nn);
        let v = g.tensor_extract(&u, &[r, c]);
        Ok::<_, String>(vec![or_if_zero(g, &v, &args[1])])
    })?[0]
        .clone();
    cx.add_check(singular, RuntimeCheck { kind: linalg_error, message: "Singular matrix".into() });
    define_unstacked(cx, b, out, x_var, &x, batch)
}

/// The batch dims' sizes of `x_var` and their product B (from the sizes: rows / n fails
/// for n = 0).
fn batch_sizes(cx: &mut Context, b: &mut Block, x_var: VarId, batch: usize) -> Result<(Vec<Value>, Value), String> {
    let x = cx.value(b, x_var)?;
    let sizes: Vec<Value> = (0..batch).map(|k| b.tensor_dim(&x, k)).collect();
    let mut count = b.constant_index(1);
    for s in &sizes {
        count = b.arith(Arith::MulI, &count, s);
    }
    Ok((sizes, count))
}

/// `Blockwise{LUFactor}`: the stacked elimination, getrf's pivots in its last column (as
/// `det` reads them), each matrix's LU NaN where its U has an exact zero pivot, as the
/// core op gives it alone (linalg.rs `lu_factor`).
pub fn lu_factor(cx: &mut Context, b: &mut Block, node: &Node, batch: usize) -> Result<Option<()>, String> {
    if !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let (x_var, lu_out, piv_out) = (node.inputs[0], node.outputs[0], node.outputs[1]);
    if cx.graph.ty(piv_out).dtype != crate::dtype::DType::Int32 {
        return Err("LUFactor with pivots that are not int32".into());
    }
    let a = square_stack(cx, b, x_var, lu_out, batch, "LUFactor", ErrorKind::Value)?;
    let (rows, n) = (b.tensor_dim(&a, 0), b.tensor_dim(&a, 1));
    let element = a.tensor().element;
    let w = augmented(b, &a, None, true);
    let w = dense_kernels::eliminate(cx, b, &w, &n, &n, LastColumn::Pivots);
    let (sizes, count) = batch_sizes(cx, b, x_var, batch)?;
    // Whether each matrix's U has a zero on its diagonal (B flags), then LU with those
    // matrices NaN.
    let none = b.constant_int(0, ScalarType::I8);
    let flags = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(&count));
    let flags = b.linalg_fill(&none, &flags);
    let lanes = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(&n));
    let maps = [map(2, &[AffineExpr::Dim(1)]), map(2, &[AffineExpr::Dim(0)])];
    let (nn, ww) = (n.clone(), w.clone());
    let singular = b.linalg_generic(&[lanes], &[flags], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |g, args| {
        let (e, i) = (g.linalg_index(0), g.linalg_index(1));
        let first = g.arith(Arith::MulI, &e, &nn);
        let row = g.arith(Arith::AddI, &first, &i);
        let u = g.tensor_extract(&ww, &[row, i]);
        Ok::<_, String>(vec![or_if_zero(g, &u, &args[1])])
    })?[0]
        .clone();
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), n.clone()]);
    let (nn, ww) = (n.clone(), w.clone());
    let lu = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let e = g.arith(Arith::DivUI, &r, &nn);
        let flag = g.tensor_extract(&singular, &[e]);
        let none = g.constant_int(0, ScalarType::I8);
        let bad = g.cmpi(CmpI::Ne, &flag, &none);
        let v = g.tensor_extract(&ww, &[r, c]);
        let nan = g.constant_f64(f64::NAN, element);
        Ok::<_, String>(vec![g.select(&bad, &nan, &v)])
    })?[0]
        .clone();
    let pivots_init = b.tensor_empty(TensorType::new(vec![None], ScalarType::I32), std::slice::from_ref(&rows));
    let nn = n.clone();
    let pivots = b.linalg_generic(&[], &[pivots_init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let r = g.linalg_index(0);
        let v = g.tensor_extract(&w, &[r, nn.clone()]);
        Ok::<_, String>(vec![g.cast(Cast::FPToSI, &v, ScalarType::I32)])
    })?[0]
        .clone();
    let mut piv_sizes: Vec<IndexArg> = sizes.into_iter().map(IndexArg::Dyn).collect();
    piv_sizes.push(IndexArg::Dyn(n));
    let pivots = b.tensor_unflatten(&pivots, TensorType::new(vec![None; batch + 1], ScalarType::I32), &piv_sizes);
    let d = cx.dims(x_var);
    define(cx, b, piv_out, &pivots, d[..=batch].to_vec());
    define_unstacked(cx, b, lu_out, x_var, &lu, batch)
}

/// `Blockwise{Det}`: for each matrix the product of its U's diagonal times the
/// permutation's sign (numpy's det from getrf: 0 for a singular matrix, 1 for 0 x 0).
pub fn det(cx: &mut Context, b: &mut Block, node: &Node, batch: usize) -> Result<Option<()>, String> {
    if !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let a = square_stack(cx, b, x_var, out, batch, "Det", ErrorKind::Value)?;
    let n = b.tensor_dim(&a, 1);
    let element = a.tensor().element;
    let w = augmented(b, &a, None, true);
    let w = dense_kernels::eliminate(cx, b, &w, &n, &n, LastColumn::Pivots);
    let (sizes, count) = batch_sizes(cx, b, x_var, batch)?;
    // Two lanes a matrix (one reduction, see linalg.rs `diagonal_folds`): the product of
    // U's diagonal with the swaps' signs, and whether a pivot is exactly zero, where
    // numpy's det is +0 (sign 0 times exp(-inf)), whatever the product's sign.
    let two = b.constant_index(2);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[count.clone(), two]);
    let nn = n.clone();
    let init = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let t = g.linalg_index(1);
        let zero = g.constant_index(0);
        let product = g.cmpi(CmpI::Eq, &t, &zero);
        let (one, none) = (g.constant_f64(1.0, element), g.constant_f64(0.0, element));
        Ok::<_, String>(vec![g.select(&product, &one, &none)])
    })?[0]
        .clone();
    let lanes = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(&n));
    let maps = [map(3, &[AffineExpr::Dim(2)]), map(3, &[AffineExpr::Dim(0), AffineExpr::Dim(1)])];
    let kinds = [IteratorType::Parallel, IteratorType::Parallel, IteratorType::Reduction];
    let folded = b.linalg_generic(&[lanes], &[init], &maps, &kinds, |g, args| {
        let (e, t, i) = (g.linalg_index(0), g.linalg_index(1), g.linalg_index(2));
        let first = g.arith(Arith::MulI, &e, &nn);
        let row = g.arith(Arith::AddI, &first, &i);
        let u = g.tensor_extract(&w, &[row.clone(), i.clone()]);
        let p = g.tensor_extract(&w, &[row, nn.clone()]);
        let i = g.index_cast(&i, ScalarType::I64);
        let i = g.cast(Cast::SIToFP, &i, element);
        let swapped = g.cmpf(CmpF::Une, &p, &i);
        let product = g.arith(Arith::MulF, &args[1], &u);
        let minus = g.negf(&product);
        let product = g.select(&swapped, &minus, &product);
        let (zero, one) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element));
        let zero_pivot = g.cmpf(CmpF::Oeq, &u, &zero);
        let seen = g.select(&zero_pivot, &one, &args[1]);
        let first_lane = g.constant_index(0);
        let is_product = g.cmpi(CmpI::Eq, &t, &first_lane);
        Ok::<_, String>(vec![g.select(&is_product, &product, &seen)])
    })?[0]
        .clone();
    let out_init = b.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(&count));
    let folded = b.linalg_generic(&[], &[out_init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let e = g.linalg_index(0);
        let (lane0, lane1) = (g.constant_index(0), g.constant_index(1));
        let product = g.tensor_extract(&folded, &[e.clone(), lane0]);
        let seen = g.tensor_extract(&folded, &[e, lane1]);
        let zero = g.constant_f64(0.0, element);
        let zero_pivot = g.cmpf(CmpF::Une, &seen, &zero);
        Ok::<_, String>(vec![g.select(&zero_pivot, &zero, &product)])
    })?[0]
        .clone();
    let shaped = if batch == 1 {
        folded
    } else {
        let full = TensorType::new(vec![None; batch], element);
        let dynamic: Vec<IndexArg> = sizes.into_iter().map(IndexArg::Dyn).collect();
        b.tensor_unflatten(&folded, full, &dynamic)
    };
    let d = cx.dims(x_var);
    define(cx, b, out, &shaped, d[..batch].to_vec());
    Ok(Some(()))
}

/// `Blockwise{PivotToPermutations}`: every batch's pivots in one dispatch (pivots.rs).
pub fn pivot_to_permutations(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, inverse: bool) -> Result<Option<()>, String> {
    if !applies(cx, node, batch, &[1]) {
        return Ok(None);
    }
    super::pivots::batched_pivot_to_permutations(cx, b, node, batch, inverse)?;
    Ok(Some(()))
}

/// `Blockwise{Schur}`: `dense_kernels::real_schurs`, one workgroup a matrix, each (T, Z)
/// what the core op gives its matrix alone.
pub fn schur(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, output: &str, sort: Option<&str>) -> Result<Option<()>, String> {
    if !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let sort = super::schur::form(output, sort)?;
    let x_var = node.inputs[0];
    let a = square_stack(cx, b, x_var, node.outputs[0], batch, "Schur", ErrorKind::Value)?;
    let (sizes, count) = batch_sizes(cx, b, x_var, batch)?;
    let n = b.tensor_dim(&a, 1);
    let (t, z) = dense_kernels::real_schurs(cx, b, &a, &count, a.tensor().element, sort);
    let mut shape: Vec<IndexArg> = sizes.into_iter().map(IndexArg::Dyn).collect();
    shape.extend([IndexArg::Dyn(n.clone()), IndexArg::Dyn(n)]);
    let full = TensorType::new(vec![None; batch + 2], a.tensor().element);
    let groups = [(0..batch).collect(), vec![batch], vec![batch + 1]];
    for (out, m) in node.outputs.iter().zip([t, z]) {
        let shaped = b.tensor_expand(&m, &groups, full.clone(), &shape);
        define(cx, b, *out, &shaped, cx.dims(x_var));
    }
    Ok(Some(()))
}

/// `Blockwise{Eigh}` and `Blockwise{Eigvalsh}` of one matrix each (not the generalized
/// problem): `eigen::stacked_eigh`, with the core op's checks (numpy's LinAlgError for
/// matrices that are not square, scipy's ValueError for a non-finite element anywhere).
pub fn eigh(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, lower: bool, vectors: bool) -> Result<Option<()>, String> {
    if node.inputs.len() != 1 || !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let what = if vectors { "Eigh" } else { "Eigvalsh" };
    let x_var = node.inputs[0];
    let not_square = cx.exception("numpy.linalg.LinAlgError");
    let a = square_stack(cx, b, x_var, node.outputs[0], batch, what, not_square)?;
    let not_finite = super::linalg::any_not_finite(b, &a)?;
    cx.add_check(not_finite, RuntimeCheck { kind: ErrorKind::Value, message: "array must not contain infs or NaNs".into() });
    let (sizes, count) = batch_sizes(cx, b, x_var, batch)?;
    let n = b.tensor_dim(&a, 1);
    let element = a.tensor().element;
    let (w, v) = super::eigen::stacked_eigh(cx, b, &a, &count, lower, element, vectors)?;
    let d = cx.dims(x_var);
    let mut shape: Vec<IndexArg> = sizes.into_iter().map(IndexArg::Dyn).collect();
    shape.push(IndexArg::Dyn(n.clone()));
    let w = b.tensor_expand(&w, &[(0..batch).collect(), vec![batch]], TensorType::new(vec![None; batch + 1], element), &shape);
    define(cx, b, node.outputs[0], &w, d[..=batch].to_vec());
    if let Some(v) = v {
        shape.push(IndexArg::Dyn(n));
        let v = b.tensor_expand(&v, &[(0..batch).collect(), vec![batch], vec![batch + 1]], TensorType::new(vec![None; batch + 2], element), &shape);
        define(cx, b, node.outputs[1], &v, d);
    }
    Ok(Some(()))
}

/// `Blockwise{QR}` in modes full, economic and r, with or without pivoting: qr.rs's route
/// (the kernels on each a^T: `qr_reflectors` or `qr_pivoted_reflectors`, then
/// `qr_accumulate` for Q), one workgroup a matrix. Raw mode keeps the loop, whose checks
/// refuse the H of a matrix that is not square (the signature says (n, m), geqrf gives
/// (m, n)); so does pivoting where there are no sequential kernels (the core rule then
/// refuses it by name).
pub fn qr(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, mode: QrMode, pivoting: bool) -> Result<Option<()>, String> {
    if (pivoting && !scalar::has_sequential_kernels()) || mode == QrMode::Raw || !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let x_var = node.inputs[0];
    let dtype = cx.graph.ty(node.outputs[0]).dtype;
    let element = working_type(cx.graph.ty(node.outputs[0]), "QR")?;
    let a = operand(cx, b, x_var, dtype)?;
    let (sizes, count) = batch_sizes(cx, b, x_var, batch)?;
    let (m, n) = (b.tensor_dim(&a, batch), b.tensor_dim(&a, batch + 1));
    let k = b.arith(Arith::MinUI, &m, &n);
    let a3 = b.tensor_collapse(&a, &[(0..batch).collect(), vec![batch], vec![batch + 1]]);
    // Each a^T, stacked: (count n) x m.
    let rows = b.arith(Arith::MulI, &count, &n);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows, m.clone()]);
    let nn = n.clone();
    let at = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, i) = (g.linalg_index(0), g.linalg_index(1));
        let (c, j) = (g.arith(Arith::DivUI, &r, &nn), g.arith(Arith::RemUI, &r, &nn));
        Ok::<_, String>(vec![g.tensor_extract(&a3, &[c, i, j])])
    })?[0]
        .clone();
    let n1 = b.constant_index(1);
    let n1 = b.arith(Arith::AddI, &n, &n1);
    let wt = if pivoting {
        let (wt, bits) = dense_kernels::qr_pivoted_reflectors_stacked(cx, b, &at, &count, &n, element);
        // P of each matrix: the first n of its n + 1 rows' bits, as int32, batch dims restored.
        let bits = b.tensor_expand(&bits, &[vec![0, 1], vec![2]], TensorType::new(vec![None, None, Some(1)], element), &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(n1.clone()), IndexArg::Const(1)]);
        let init = b.tensor_empty(TensorType::new(vec![None, None], ScalarType::I32), &[count.clone(), n.clone()]);
        let p = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
            let (c, j) = (g.linalg_index(0), g.linalg_index(1));
            let zero = g.constant_index(0);
            let v = g.tensor_extract(&bits, &[c, j, zero]);
            Ok::<_, String>(vec![dense_kernels::index_of_bits(g, &v)])
        })?[0]
            .clone();
        let mut shape: Vec<IndexArg> = sizes.iter().cloned().map(IndexArg::Dyn).collect();
        shape.push(IndexArg::Dyn(n.clone()));
        let p = b.tensor_expand(&p, &[(0..batch).collect(), vec![batch]], TensorType::new(vec![None; batch + 1], ScalarType::I32), &shape);
        let d = cx.dims(x_var);
        let last = *node.outputs.last().ok_or("QR without outputs")?;
        define(cx, b, last, &p, d[..batch].iter().copied().chain([d[batch + 1]]).collect());
        wt
    } else {
        dense_kernels::qr_reflectors_stacked(cx, b, &at, &count, &n, element)
    };
    let wt = b.tensor_expand(&wt, &[vec![0, 1], vec![2]], TensorType::new(vec![None; 3], element), &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(n1.clone()), IndexArg::Dyn(m.clone())]);
    let d = cx.dims(x_var);
    let dk = cx.derived(DimExpr::Min(vec![d[batch], d[batch + 1]]));
    let (r_rows, r_dim) = match mode {
        QrMode::Economic | QrMode::Raw => (k.clone(), dk),
        QrMode::Full | QrMode::R => (m.clone(), d[batch]),
    };
    // (count, rows, cols) of what `value` gives each (matrix, row, column), then the
    // batch dims restored.
    let shaped = |b: &mut Block, (rows, cols): (&Value, &Value), value: &dyn Fn(&mut Block, Value, Value, Value) -> Value| -> Result<Value, String> {
        let init = b.tensor_empty(TensorType::new(vec![None; 3], element), &[count.clone(), rows.clone(), cols.clone()]);
        let t = b.linalg_generic(&[], &[init], &[AffineMap::identity(3)], &[IteratorType::Parallel; 3], |g, _| {
            let (c, i, j) = (g.linalg_index(0), g.linalg_index(1), g.linalg_index(2));
            Ok::<_, String>(vec![value(g, c, i, j)])
        })?[0]
            .clone();
        let mut shape: Vec<IndexArg> = sizes.iter().cloned().map(IndexArg::Dyn).collect();
        shape.extend([IndexArg::Dyn(rows.clone()), IndexArg::Dyn(cols.clone())]);
        let full = TensorType::new(vec![None; batch + 2], element);
        Ok(b.tensor_expand(&t, &[(0..batch).collect(), vec![batch], vec![batch + 1]], full, &shape))
    };
    // R: w's upper triangle (w^T's lower one, transposed).
    let r = shaped(b, (&r_rows, &n), &|g, c, i, j| {
        let v = g.tensor_extract(&wt, &[c, j.clone(), i.clone()]);
        let zero = g.constant_f64(0.0, element);
        let on_or_above = g.cmpi(CmpI::Ule, &i, &j);
        g.select(&on_or_above, &v, &zero)
    })?;
    let with = |dims: &[Dim], last: [Dim; 2]| -> Vec<Dim> { dims[..batch].iter().copied().chain(last).collect() };
    match mode {
        QrMode::R => define(cx, b, node.outputs[0], &r, with(&d, [r_dim, d[batch + 1]])),
        QrMode::Raw => unreachable!("raw mode keeps the loop"),
        QrMode::Full | QrMode::Economic => {
            let (columns, q_dim) = if mode == QrMode::Full { (m.clone(), d[batch]) } else { (k.clone(), dk) };
            let flat_wt = b.tensor_collapse(&wt, &[vec![0, 1], vec![2]]);
            let qt = dense_kernels::qr_accumulate_stacked(cx, b, &flat_wt, &count, &n, &k, &columns, element);
            let qt = b.tensor_expand(&qt, &[vec![0, 1], vec![2]], TensorType::new(vec![None; 3], element), &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(columns.clone()), IndexArg::Dyn(m.clone())]);
            let q = shaped(b, (&m, &columns), &|g, c, i, j| g.tensor_extract(&qt, &[c, j, i]))?;
            define(cx, b, node.outputs[0], &q, with(&d, [d[batch], q_dim]));
            define(cx, b, node.outputs[1], &r, with(&d, [r_dim, d[batch + 1]]));
        }
    }
    Ok(Some(()))
}

/// `Blockwise{SVD}`: `eigen::stacked_svd`, each matrix's values (and U, V^T) what the
/// core op gives it alone.
pub fn svd(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, full_matrices: bool, compute_uv: bool) -> Result<Option<()>, String> {
    if !applies(cx, node, batch, &[2]) {
        return Ok(None);
    }
    let x_var = node.inputs[0];
    let out_s = node.outputs[usize::from(compute_uv)];
    let element = working_type(cx.graph.ty(out_s), "SVD")?;
    let a = operand(cx, b, x_var, cx.graph.ty(out_s).dtype)?;
    let (sizes, count) = batch_sizes(cx, b, x_var, batch)?;
    let a3 = b.tensor_collapse(&a, &[(0..batch).collect(), vec![batch], vec![batch + 1]]);
    let results = super::eigen::stacked_svd(cx, b, &a3, &count, element, full_matrices, compute_uv)?;
    let d = cx.dims(x_var);
    let dk = cx.derived(DimExpr::Min(vec![d[batch], d[batch + 1]]));
    let (u_columns, vt_rows) = if full_matrices { (d[batch], d[batch + 1]) } else { (dk, dk) };
    let core: Vec<Vec<Dim>> = if compute_uv { vec![vec![d[batch], u_columns], vec![dk], vec![vt_rows, d[batch + 1]]] } else { vec![vec![dk]] };
    for ((out, t), core) in node.outputs.iter().zip(&results).zip(core) {
        let rank = t.tensor().rank();
        let mut shape: Vec<IndexArg> = sizes.iter().cloned().map(IndexArg::Dyn).collect();
        shape.extend((1..rank).map(|a| IndexArg::Dyn(b.tensor_dim(t, a))));
        let groups: Vec<Vec<usize>> = std::iter::once((0..batch).collect()).chain((1..rank).map(|a| vec![batch + a - 1])).collect();
        let full = TensorType::new(vec![None; batch + rank - 1], element);
        let shaped = b.tensor_expand(t, &groups, full, &shape);
        define(cx, b, *out, &shaped, d[..batch].iter().copied().chain(core).collect());
    }
    Ok(Some(()))
}
