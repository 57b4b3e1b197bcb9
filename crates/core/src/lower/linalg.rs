//! Dense linear algebra of `pytensor.tensor.linalg`: `Cholesky`, `SolveTriangular` and
//! `CholeskySolve` (a multivariate normal's log-density and its gradient, Gaussian
//! processes), with the results LAPACK's potrf, trtrs and potrs give PyTensor's `perform`.
//!
//! IREE has no LAPACK, and these are sequential along the matrix: each is an `scf.for`
//! in the host program over the factor's columns (the solution's rows), each step one
//! reduction (the dot products with the finished part) and one elementwise update of the
//! new column (row), on dynamic slices of the loop-carried tensor. O(n) dispatches per
//! call, each parallel over the column; the arithmetic is the textbook one (Golub & Van
//! Loan, the left-looking Cholesky and forward/back substitution), in the working type
//! PyTensor names (float32 or float64; integer inputs are converted as LAPACK's
//! wrappers convert them).
//!
//! Each loop's carried tensor starts as a private copy made behind an optimization barrier
//! (`Context::loop_start`, which also compiles the graph for the full HAL): without it IREE 3.13 miscompiled two
//! loops in one function, measured: packed into one allocation, the second loop's start
//! lost its offset and the loop read the first one's data (a determinant and an inverse
//! of one matrix both wrong), and the inline model ran two loops started from one
//! shared value in one buffer (a lower and an upper Cholesky factor mixed).
//!
//! What LAPACK reports as a failure PyTensor turns into a result of NaN, and so do we:
//! a Cholesky whose pivot is not positive (or NaN) anywhere, a triangular solve with an
//! exact zero on the diagonal (unless `unit_diagonal`). `CholeskySolve` (potrs) checks
//! nothing: a zero on the factor's diagonal divides by zero. Only the triangle a routine
//! reads is read. A matrix that is not square, or a right-hand side of another length,
//! raises `ValueError` before the call, as PyTensor's `perform` does.

use super::shapes::DimExpr;
use super::{dense_kernels, elemwise, scalar, tensor_type, Context, ErrorKind};
use crate::dtype::DType;
use crate::ir::{Node, TensorType as IrType, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, CmpI, IndexArg, IteratorType, MathUnary, ScalarType, TensorType, Value};

/// The input `v` converted to the (float) output dtype `to`, as a tensor of dynamic dims.
pub(super) fn operand(cx: &mut Context, b: &mut Block, v: VarId, to: DType) -> Result<Value, String> {
    let ty = cx.graph.ty(v).clone();
    let x = cx.value(b, v)?;
    let x = elemwise::cast(b, &x, &ty, to)?;
    Ok(dynamic(b, &x))
}

/// `t` as a tensor of the same element type whose dims are all dynamic.
pub(super) fn dynamic(b: &mut Block, t: &Value) -> Value {
    let ty = t.tensor();
    let dyn_ty = TensorType::new(vec![None; ty.rank()], ty.element);
    if *ty == dyn_ty {
        t.clone()
    } else {
        b.tensor_cast(t, dyn_ty)
    }
}

/// The working type: PyTensor's output dtype, which must be a real float.
pub(super) fn working_type(out_ty: &IrType, what: &str) -> Result<ScalarType, String> {
    match out_ty.dtype {
        DType::Float32 => Ok(ScalarType::F32),
        DType::Float64 => Ok(ScalarType::F64),
        d => Err(format!("{what} in {d}")),
    }
}

/// `result` (dynamic dims) as the output's type, defined with `dims`.
pub(super) fn define(cx: &mut Context, b: &mut Block, out: VarId, result: &Value, dims: Vec<super::shapes::Dim>) {
    let want = tensor_type(cx.graph.ty(out));
    let r = if *result.tensor() == want { result.clone() } else { b.tensor_cast(result, want) };
    cx.define(out, r, dims);
}

pub(super) fn zeros(b: &mut Block, element: ScalarType, sizes: &[Value]) -> Value {
    let empty = b.tensor_empty(TensorType::new(vec![None; sizes.len()], element), sizes);
    let zero = b.constant_f64(0.0, element);
    b.linalg_fill(&zero, &empty)
}

pub(super) fn map(dims: usize, results: &[AffineExpr]) -> AffineMap {
    AffineMap { dims, results: results.to_vec() }
}

/// Whether any of the n diagonal elements of `m` is `bad` (a rank-0 `i8`, 1 where so).
fn any_on_diagonal(b: &mut Block, m: &Value, n: &Value, bad: impl Fn(&mut Block, &Value) -> Value) -> Result<Value, String> {
    let lanes = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(n));
    let none = b.constant_int(0, ScalarType::I8);
    let flag = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let init = b.linalg_fill(&none, &flag);
    let m = m.clone();
    let r = b.linalg_generic(&[lanes], &[init], &[AffineMap::identity(1), map(1, &[])], &[IteratorType::Reduction], |body, args| {
        let i = body.linalg_index(0);
        let v = body.tensor_extract(&m, &[i.clone(), i]);
        let is_bad = bad(body, &v);
        let flag = body.cast(Cast::ExtUI, &is_bad, ScalarType::I8);
        Ok::<_, String>(vec![body.arith(Arith::OrI, &flag, &args[1])])
    })?;
    Ok(r[0].clone())
}

/// `m` (dynamic dims) with every element NaN where the rank-0 flag `bad` is set.
pub(super) fn nan_if(b: &mut Block, m: &Value, bad: &Value) -> Result<Value, String> {
    let rank = m.tensor().rank();
    let sizes: Vec<Value> = (0..rank).map(|a| b.tensor_dim(m, a)).collect();
    let init = b.tensor_empty(m.tensor().clone(), &sizes);
    let maps = [AffineMap::identity(rank), map(rank, &[]), AffineMap::identity(rank)];
    let r = b.linalg_generic(&[m.clone(), bad.clone()], &[init], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
        let no = body.constant_int(0, ScalarType::I8);
        let is_bad = body.cmpi(CmpI::Ne, &args[1], &no);
        let nan = body.constant_f64(f64::NAN, args[0].scalar());
        Ok::<_, String>(vec![body.select(&is_bad, &nan, &args[0])])
    })?;
    Ok(r[0].clone())
}

/// The dot products of one step: for each `i < len`, `sum_k p[i, k] q[k]` where `p` and
/// `q` are slices read through `p_map` and `q_map` over (i, k) (`k < count`).
fn dots(b: &mut Block, p: &Value, q: &Value, p_map: AffineMap, q_map: AffineMap, len: &Value) -> Result<Value, String> {
    let element = p.tensor().element;
    let init = zeros(b, element, std::slice::from_ref(len));
    let maps = [p_map, q_map, map(2, &[AffineExpr::Dim(0)])];
    let r = b.linalg_generic(&[p.clone(), q.clone()], &[init], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |body, args| {
        let prod = body.arith(Arith::MulF, &args[0], &args[1]);
        Ok::<_, String>(vec![body.arith(Arith::AddF, &args[2], &prod)])
    })?;
    Ok(r[0].clone())
}

/// A vector of length `len` as a column (`as_column`) or a row of a matrix, to insert.
pub(super) fn as_matrix(b: &mut Block, v: &Value, len: &Value, as_column: bool) -> Value {
    let element = v.tensor().element;
    let (shape, sizes) = if as_column {
        (vec![None, Some(1)], [IndexArg::Dyn(len.clone()), IndexArg::Const(1)])
    } else {
        (vec![Some(1), None], [IndexArg::Const(1), IndexArg::Dyn(len.clone())])
    };
    b.tensor_expand(v, &[vec![0, 1]], TensorType::new(shape, element), &sizes)
}

/// `m` (dynamic dims) transposed.
pub(super) fn transposed(b: &mut Block, m: &Value) -> Result<Value, String> {
    let (rows, cols) = (b.tensor_dim(m, 0), b.tensor_dim(m, 1));
    let init = b.tensor_empty(TensorType::new(vec![None, None], m.tensor().element), &[cols, rows]);
    let maps = [map(2, &[AffineExpr::Dim(1), AffineExpr::Dim(0)]), AffineMap::identity(2)];
    let r = b.linalg_generic(std::slice::from_ref(m), &[init], &maps, &[IteratorType::Parallel; 2], |_, args| Ok::<_, String>(vec![args[0].clone()]))?;
    Ok(r[0].clone())
}

/// The Cholesky factor of `a` (n x n, dynamic dims) from its lower triangle (`lower`:
/// L with L L^T = a) or its upper one (U with U^T U = a). Both are built by rows, as U:
/// L is the transpose of the U of a^T (whose upper triangle is a's lower one). By rows
/// each step's dot products run down the finished rows, a reduction over the outer axis
/// that IREE vectorizes along the contiguous inner one; by columns they were row-wise
/// reductions, which IREE 3.13 tiles 32 x 16 with peeling and spills (measured, n = 400:
/// 16.1 ms by columns, 3.4 ms by rows and the two transposes; n = 100: 0.50 -> 0.42 ms).
pub(super) fn factor(cx: &mut Context, b: &mut Block, a: &Value, n: &Value, lower: bool) -> Result<Value, String> {
    if scalar::has_sequential_kernels() {
        return Ok(dense_kernels::cholesky(cx, b, a, n, lower, false, !lower));
    }
    if lower {
        let at = transposed(b, a)?;
        let u = factor_by_rows(cx, b, &at, n)?;
        return transposed(b, &u);
    }
    factor_by_rows(cx, b, a, n)
}

/// U with U^T U = a from a's upper triangle, row by row: u_jj = sqrt(a_jj - sum_{k<j}
/// u_kj^2), u_ji = (a_ji - sum_{k<j} u_kj u_ki) / u_jj.
fn factor_by_rows(cx: &mut Context, b: &mut Block, a: &Value, n: &Value) -> Result<Value, String> {
    let element = a.tensor().element;
    let start = zeros(b, element, &[n.clone(), n.clone()]);
    let start = cx.loop_start(b, &start)?;
    let (first, step) = (b.constant_index(0), b.constant_index(1));
    let a = a.clone();
    let n = n.clone();
    let r = b.scf_for(&first, &n, &step, &[start], |body, j, args| {
        let u = &args[0];
        let m = body.arith(Arith::SubI, &n, j);
        let (dj, dm) = (IndexArg::Dyn(j.clone()), IndexArg::Dyn(m.clone()));
        let (zero, one) = (IndexArg::Const(0), IndexArg::Const(1));
        let (i, k) = (AffineExpr::Dim(0), AffineExpr::Dim(1));
        // The finished rows above row j, against its columns from j on.
        let part = body.tensor_extract_slice(u, &[zero.clone(), dj.clone()], &[dj.clone(), dm.clone()]);
        let own = body.tensor_extract_slice(u, &[zero.clone(), dj.clone()], &[dj.clone(), one.clone()]);
        let (part_map, own_map) = (map(2, &[k.clone(), i.clone()]), map(2, &[k.clone(), AffineExpr::Constant(0)]));
        let a_slice = body.tensor_extract_slice(&a, &[dj.clone(), dj.clone()], &[one.clone(), dm.clone()]);
        let a_map = map(1, &[AffineExpr::Constant(0), AffineExpr::Dim(0)]);
        let sums = dots(body, &part, &own, part_map, own_map, &m)?;
        let init = body.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(&m));
        // a_jj and its sum are read through constant maps (IREE's vectorizer mistypes a
        // tensor.extract at a loop-invariant index here).
        let corner = map(1, &[AffineExpr::Constant(0), AffineExpr::Constant(0)]);
        let maps = [a_map, AffineMap::identity(1), corner, map(1, &[AffineExpr::Constant(0)]), AffineMap::identity(1)];
        let ins = [a_slice.clone(), sums.clone(), a_slice, sums];
        let values = body.linalg_generic(&ins, &[init], &maps, &[IteratorType::Parallel], |g, args| {
            let rest = g.arith(Arith::SubF, &args[0], &args[1]);
            let c0 = g.constant_index(0);
            let pivot = g.arith(Arith::SubF, &args[2], &args[3]);
            // A pivot <= 0 is kept as it is (no sqrt, which would make it NaN) so that
            // `not_positive` tells it from a NaN pivot.
            let root = g.math(MathUnary::Sqrt, &pivot);
            let zero = g.constant_f64(0.0, element);
            let failed = g.cmpf(CmpF::Ole, &pivot, &zero);
            let u_jj = g.select(&failed, &pivot, &root);
            let below = g.arith(Arith::DivF, &rest, &u_jj);
            let row = g.linalg_index(0);
            let on_diagonal = g.cmpi(CmpI::Eq, &row, &c0);
            Ok::<_, String>(vec![g.select(&on_diagonal, &u_jj, &below)])
        })?;
        let row = as_matrix(body, &values[0], &m, false);
        Ok::<_, String>(vec![body.tensor_insert_slice(&row, u, &[dj.clone(), dj])])
    })?;
    Ok(r[0].clone())
}

/// Whether a pivot of the factor `l` was not positive (`factor` keeps such a pivot on the
/// diagonal, <= 0, where a root would be).
pub(super) fn not_positive(b: &mut Block, l: &Value, n: &Value) -> Result<Value, String> {
    any_on_diagonal(b, l, n, |g, v| {
        let zero = g.constant_f64(0.0, v.scalar());
        g.cmpf(CmpF::Ole, v, &zero)
    })
}

/// `Cholesky(lower)`: the factor, NaN everywhere where potrf fails (a pivot that is not
/// positive, or NaN).
pub fn cholesky(cx: &mut Context, b: &mut Block, node: &Node, lower: bool) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    if cx.graph.ty(x_var).ndim() != 2 {
        return Err("Cholesky of a tensor that is not a matrix".into());
    }
    working_type(cx.graph.ty(out), "Cholesky")?;
    let d = cx.dims(x_var);
    cx.require_equal(d[0], d[1], "Cholesky (the input array is expected to be square)");
    let a = operand(cx, b, x_var, cx.graph.ty(out).dtype)?;
    let n = b.tensor_dim(&a, 0);
    if scalar::has_sequential_kernels() {
        let l = dense_kernels::cholesky(cx, b, &a, &n, lower, true, !lower);
        define(cx, b, out, &l, vec![d[0], d[0]]);
        return Ok(());
    }
    let l = factor(cx, b, &a, &n, lower)?;
    // potrf's test: a pivot a_jj - sum l_jk^2 <= 0 (l_jj = 0 or NaN from a negative).
    // A NaN pivot from NaN input passes, as in the OpenBLAS potrf behind scipy here: the
    // NaN then spreads through the factor by itself.
    let bad = not_positive(b, &l, &n)?;
    let r = nan_if(b, &l, &bad)?;
    define(cx, b, out, &r, vec![d[0], d[0]]);
    Ok(())
}

/// The solution x (n x k) of T x = rhs, T = `a` or (`transposed`) its transpose, read
/// from its lower (`lower`: forward substitution) or upper triangle (back substitution):
/// row i is (rhs_i - sum_c T_ic x_c) / T_ii over the finished rows c (1 for T_ii where
/// `unit`).
pub(super) fn substitute(cx: &mut Context, b: &mut Block, a: &Value, rhs: &Value, lower: bool, transposed: bool, unit: bool) -> Result<Value, String> {
    if scalar::has_sequential_kernels() {
        return Ok(dense_kernels::substitute(cx, b, a, rhs, lower, transposed, unit, false));
    }
    let element = a.tensor().element;
    let n = b.tensor_dim(rhs, 0);
    let k = b.tensor_dim(rhs, 1);
    let start = zeros(b, element, &[n.clone(), k.clone()]);
    let start = cx.loop_start(b, &start)?;
    let (first, step) = (b.constant_index(0), b.constant_index(1));
    let (a, rhs) = (a.clone(), rhs.clone());
    let r = b.scf_for(&first, &n, &step, &[start], |body, s, args| {
        let x = &args[0];
        // Row i (forward: i = s; back: i = n - 1 - s), against rows [from, from + count).
        let one_index = body.constant_index(1);
        let (i, from, count) = if lower {
            (s.clone(), body.constant_index(0), s.clone())
        } else {
            let last = body.arith(Arith::SubI, &n, &one_index);
            let i = body.arith(Arith::SubI, &last, s);
            let from = body.arith(Arith::AddI, &i, &one_index);
            (i, from, s.clone())
        };
        let (di, dfrom, dcount, dk) = (IndexArg::Dyn(i.clone()), IndexArg::Dyn(from.clone()), IndexArg::Dyn(count), IndexArg::Dyn(k.clone()));
        let (zero, one) = (IndexArg::Const(0), IndexArg::Const(1));
        let (q, c) = (AffineExpr::Dim(0), AffineExpr::Dim(1));
        let done = body.tensor_extract_slice(x, &[dfrom.clone(), zero.clone()], &[dcount.clone(), dk.clone()]);
        // T_ic for the finished c: a row of a, or a column where transposed.
        let (t_row, t_map) = if transposed {
            (body.tensor_extract_slice(&a, &[dfrom, di.clone()], &[dcount, one.clone()]), map(2, &[c.clone(), AffineExpr::Constant(0)]))
        } else {
            (body.tensor_extract_slice(&a, &[di.clone(), dfrom], &[one.clone(), dcount]), map(2, &[AffineExpr::Constant(0), c.clone()]))
        };
        let sums = dots(body, &done, &t_row, map(2, &[c, q]), t_map, &k)?;
        let rhs_row = body.tensor_extract_slice(&rhs, &[di.clone(), zero.clone()], &[one.clone(), dk]);
        let init = body.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(&k));
        // T_ii through a constant map (see `factor`).
        let t_ii = body.tensor_extract_slice(&a, &[di.clone(), di.clone()], &[one.clone(), one.clone()]);
        let corner = map(1, &[AffineExpr::Constant(0), AffineExpr::Constant(0)]);
        let maps = [map(1, &[AffineExpr::Constant(0), AffineExpr::Dim(0)]), AffineMap::identity(1), corner, AffineMap::identity(1)];
        let row = body.linalg_generic(&[rhs_row, sums, t_ii], &[init], &maps, &[IteratorType::Parallel], |g, args| {
            let rest = g.arith(Arith::SubF, &args[0], &args[1]);
            if unit {
                return Ok::<_, String>(vec![rest]);
            }
            Ok(vec![g.arith(Arith::DivF, &rest, &args[2])])
        })?;
        let row = as_matrix(body, &row[0], &k, false);
        Ok::<_, String>(vec![body.tensor_insert_slice(&row, x, &[di, zero])])
    })?;
    Ok(r[0].clone())
}

/// The operands of a solve: the matrix (square, ValueError otherwise) and the right-hand
/// side (`b_ndim` 1 or 2, as many rows as the matrix), converted to the output dtype; a
/// vector becomes an n x 1 matrix.
fn solve_operands(cx: &mut Context, b: &mut Block, node: &Node, b_ndim: usize, what: &str) -> Result<(Value, Value), String> {
    let (a_var, b_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    if cx.graph.ty(a_var).ndim() != 2 || cx.graph.ty(b_var).ndim() != b_ndim || !(1..=2).contains(&b_ndim) {
        return Err(format!("{what} of ranks {} and {} (b_ndim {b_ndim})", cx.graph.ty(a_var).ndim(), cx.graph.ty(b_var).ndim()));
    }
    let dtype = cx.graph.ty(out).dtype;
    working_type(cx.graph.ty(out), what)?;
    let (da, db) = (cx.dims(a_var), cx.dims(b_var));
    cx.require_equal(da[0], da[1], &format!("{what} (expected a square matrix)"));
    cx.require_equal(da[0], db[0], &format!("{what} (the shapes of a and b are incompatible)"));
    let a = operand(cx, b, a_var, dtype)?;
    let mut rhs = operand(cx, b, b_var, dtype)?;
    if b_ndim == 1 {
        let n = b.tensor_dim(&rhs, 0);
        rhs = as_matrix(b, &rhs, &n, true);
        rhs = dynamic(b, &rhs);
    }
    Ok((a, rhs))
}

/// The solution as the output: back to a vector where b was one.
fn define_solution(cx: &mut Context, b: &mut Block, node: &Node, x: &Value, b_ndim: usize) {
    let x = if b_ndim == 1 { b.tensor_collapse(x, &[vec![0, 1]]) } else { x.clone() };
    let dims = cx.dims(node.inputs[1]);
    define(cx, b, node.outputs[0], &x, dims);
}

/// `SolveTriangular(lower, unit_diagonal, b_ndim)`: a x = b from a's `lower` (else upper)
/// triangle; NaN everywhere where trtrs reports a singular matrix (an exact zero on the
/// diagonal, unless `unit_diagonal`).
pub fn solve_triangular(cx: &mut Context, b: &mut Block, node: &Node, lower: bool, unit: bool, b_ndim: usize) -> Result<(), String> {
    let (a, rhs) = solve_operands(cx, b, node, b_ndim, "SolveTriangular")?;
    if scalar::has_sequential_kernels() {
        let x = dense_kernels::substitute(cx, b, &a, &rhs, lower, false, unit, true);
        define_solution(cx, b, node, &x, b_ndim);
        return Ok(());
    }
    let mut x = substitute(cx, b, &a, &rhs, lower, false, unit)?;
    if !unit {
        let n = b.tensor_dim(&a, 0);
        let singular = any_on_diagonal(b, &a, &n, |g, v| {
            let zero = g.constant_f64(0.0, v.scalar());
            g.cmpf(CmpF::Oeq, v, &zero)
        })?;
        x = nan_if(b, &x, &singular)?;
    }
    define_solution(cx, b, node, &x, b_ndim);
    Ok(())
}

/// `CholeskySolve(lower, b_ndim)`: a x = b for a = c c^T (`lower`) or c^T c, given the
/// factor c: two substitutions, as potrs does (no check: a zero pivot divides by zero).
pub fn cholesky_solve(cx: &mut Context, b: &mut Block, node: &Node, lower: bool, b_ndim: usize) -> Result<(), String> {
    let (c, rhs) = solve_operands(cx, b, node, b_ndim, "CholeskySolve")?;
    // lower: c y = b, then c^T x = y (c^T upper); upper: c^T y = b (lower), then c x = y.
    let y = substitute(cx, b, &c, &rhs, true, !lower, false)?;
    let x = substitute(cx, b, &c, &y, false, lower, false)?;
    define_solution(cx, b, node, &x, b_ndim);
    Ok(())
}

/// The pivot of column j: the offset from row j of the first row r >= j of largest
/// |w_rj| (getrf's idamax; a NaN counts as below every number), as a rank-0 i64.
fn pivot(b: &mut Block, w: &Value, j: &Value, m: &Value) -> Result<Value, String> {
    let element = w.tensor().element;
    let (dj, dm) = (IndexArg::Dyn(j.clone()), IndexArg::Dyn(m.clone()));
    let column = b.tensor_extract_slice(w, &[dj.clone(), dj], &[dm, IndexArg::Const(1)]);
    let scalar = |b: &mut Block, ty: ScalarType, v: Value| {
        let e = b.tensor_empty(TensorType::new(vec![], ty), &[]);
        b.linalg_fill(&v, &e)
    };
    let below_all = b.constant_f64(-1.0, element);
    let best_init = scalar(b, element, below_all);
    let no_row = b.constant_int(i64::MAX, ScalarType::I64);
    let row_init = scalar(b, ScalarType::I64, no_row);
    let maps = [map(1, &[AffineExpr::Dim(0), AffineExpr::Constant(0)]), map(1, &[]), map(1, &[])];
    let r = b.linalg_generic(&[column], &[best_init, row_init], &maps, &[IteratorType::Reduction], |g, args| {
        let size = g.math(MathUnary::AbsF, &args[0]);
        let half = g.constant_f64(-0.5, element);
        let is_nan = g.cmpf(CmpF::Uno, &size, &size);
        let key = g.select(&is_nan, &half, &size);
        let row = g.linalg_index(0);
        let row = g.index_cast(&row, ScalarType::I64);
        // A total order on (key, row): any order of visits gives the first largest.
        let greater = g.cmpf(CmpF::Ogt, &key, &args[1]);
        let equal = g.cmpf(CmpF::Oeq, &key, &args[1]);
        let earlier = g.cmpi(CmpI::Slt, &row, &args[2]);
        let tie = g.arith(Arith::AndI, &equal, &earlier);
        let take = g.arith(Arith::OrI, &greater, &tie);
        Ok::<_, String>(vec![g.select(&take, &key, &args[1]), g.select(&take, &row, &args[2])])
    })?;
    Ok(r[1].clone())
}

/// What `eliminate` keeps in w's last column.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum LastColumn {
    /// Eliminated as the others are (a right-hand side).
    Eliminated,
    /// Records at row j the row swapped with row j (getrf's pivot).
    Pivots,
    /// Swapped with the rows, not eliminated: started as the row numbers, it ends as the
    /// permutation (row i of the result is the input's row `perm[i]`).
    Rows,
}

/// Gaussian elimination with partial pivoting (getrf's choices) of the rows x (n + k [+ 1])
/// matrix `w` = [a | rhs | last column], over the first `steps` columns (min(rows, n)):
/// the row operations on a's and rhs's columns, so the last k become the permuted and
/// eliminated right-hand sides, U left in the upper triangle and the multipliers below
/// it. The last column is kept as `last` says (its numbers as floats: exact below 2^24
/// rows). A zero pivot leaves its column as it is (getrf goes on; U is singular). One
/// loop-carried tensor: IREE 3.13 returned wrong buffers for the second result of an
/// scf.for carrying two (LUFactor's pivots read as LU's bits).
fn eliminate(cx: &mut Context, b: &mut Block, w: &Value, rows: &Value, steps: &Value, last: LastColumn) -> Result<Value, String> {
    if scalar::has_sequential_kernels() {
        return Ok(dense_kernels::eliminate(cx, b, w, rows, steps, last));
    }
    let width = b.tensor_dim(w, 1);
    let w = cx.loop_start(b, w)?;
    let (first, step) = (b.constant_index(0), b.constant_index(1));
    let rows = rows.clone();
    let r = b.scf_for(&first, steps, &step, std::slice::from_ref(&w), |body, j, args| {
        Ok::<_, String>(vec![elimination_step(body, &args[0], j, &rows, &width, last)?])
    })?;
    Ok(r[0].clone())
}

/// One column of `eliminate`: rows j and p = j + (pivot offset) swapped, then row r > j
/// less m_r times the pivot row (m_r = w_rj / w_pj, stored in column j).
fn elimination_step(b: &mut Block, w: &Value, j: &Value, n: &Value, width: &Value, last_column: LastColumn) -> Result<Value, String> {
    let element = w.tensor().element;
    let m = b.arith(Arith::SubI, n, j);
    let offset = pivot(b, w, j, &m)?;
    let (jj, ww) = (j.clone(), w.clone());
    let one = b.constant_index(1);
    let last = b.arith(Arith::SubI, width, &one);
    let pivot_row = |g: &mut Block, off: &Value| {
        let off = g.index_cast(off, ScalarType::Index);
        g.arith(Arith::AddI, &jj, &off)
    };
    let source_row = |g: &mut Block, r: &Value, p: &Value| {
        let is_j = g.cmpi(CmpI::Eq, r, &jj);
        let is_p = g.cmpi(CmpI::Eq, r, p);
        let other = g.select(&is_p, &jj, r);
        g.select(&is_j, p, &other)
    };
    // The pivot row and the (swapped) pivot column as tensors: gathers whose index varies
    // along the kernel (IREE's vectorizer mistypes an extract at a loop-invariant index).
    let row_init = b.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(width));
    let row = b.linalg_generic(std::slice::from_ref(&offset), &[row_init], &[map(1, &[]), AffineMap::identity(1)], &[IteratorType::Parallel], |g, args| {
        let p = pivot_row(g, &args[0]);
        let c = g.linalg_index(0);
        Ok::<_, String>(vec![g.tensor_extract(&ww, &[p, c])])
    })?[0]
        .clone();
    let col_init = b.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(n));
    let col = b.linalg_generic(std::slice::from_ref(&offset), &[col_init], &[map(1, &[]), AffineMap::identity(1)], &[IteratorType::Parallel], |g, args| {
        let p = pivot_row(g, &args[0]);
        let r = g.linalg_index(0);
        let src = source_row(g, &r, &p);
        Ok::<_, String>(vec![g.tensor_extract(&ww, &[src, jj.clone()])])
    })?[0]
        .clone();
    let pivot_value = b.tensor_extract_slice(&row, &[IndexArg::Dyn(j.clone())], &[IndexArg::Const(1)]);
    // Rows j.. only: the rows above are finished (neither swapped nor eliminated again),
    // and the new rows are written over w's in place (measured, Solve in process: n = 400
    // 67 -> 45 ms, n = 200 10.1 -> 6.6 ms, n = 100 1.77 -> 1.34 ms).
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[m.clone(), width.clone()]);
    let (r_, c_) = (AffineExpr::Dim(0), AffineExpr::Dim(1));
    let col_below = b.tensor_extract_slice(&col, &[IndexArg::Dyn(j.clone())], &[IndexArg::Dyn(m.clone())]);
    let maps = [map(2, &[c_]), map(2, &[r_]), map(2, &[AffineExpr::Constant(0)]), map(2, &[]), AffineMap::identity(2)];
    let below = b.linalg_generic(&[row, col_below, pivot_value, offset], &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        let (pivot_elem, col_elem, piv) = (&args[0], &args[1], &args[2]);
        let p = pivot_row(g, &args[3]);
        let (below_j, c) = (g.linalg_index(0), g.linalg_index(1));
        let r = g.arith(Arith::AddI, &below_j, &jj);
        let src = source_row(g, &r, &p);
        let v = g.tensor_extract(&ww, &[src, c.clone()]);
        let zero = g.constant_f64(0.0, element);
        let singular = g.cmpf(CmpF::Oeq, piv, &zero);
        let ratio = g.arith(Arith::DivF, col_elem, piv);
        let multiplier = g.select(&singular, &zero, &ratio);
        let prod = g.arith(Arith::MulF, &multiplier, pivot_elem);
        let eliminated = g.arith(Arith::SubF, &v, &prod);
        let stored = g.select(&singular, &v, &multiplier);
        let right = g.cmpi(CmpI::Ugt, &c, &jj);
        let at = g.cmpi(CmpI::Eq, &c, &jj);
        let below = g.cmpi(CmpI::Ugt, &r, &jj);
        let lower_part = g.select(&at, &stored, &v);
        let lower_part = g.select(&right, &eliminated, &lower_part);
        let value = g.select(&below, &lower_part, &v);
        let is_record = g.cmpi(CmpI::Eq, &c, &last);
        match last_column {
            LastColumn::Eliminated => return Ok::<_, String>(vec![value]),
            LastColumn::Rows => return Ok(vec![g.select(&is_record, &v, &value)]),
            LastColumn::Pivots => {}
        }
        // The pivot column: p at row j, the rest kept in place.
        let kept = g.tensor_extract(&ww, &[r.clone(), c]);
        let p_int = g.index_cast(&p, ScalarType::I64);
        let p_value = g.cast(Cast::SIToFP, &p_int, element);
        let is_j = g.cmpi(CmpI::Eq, &r, &jj);
        let record = g.select(&is_j, &p_value, &kept);
        Ok(vec![g.select(&is_record, &record, &value)])
    })?[0]
        .clone();
    Ok(b.tensor_insert_slice(&below, w, &[IndexArg::Dyn(j.clone()), IndexArg::Const(0)]))
}

/// [a | rhs | zeros (where `pivots`)] for `eliminate`: the n x n matrix, the n x k
/// right-hand sides (none: k = 0) and the pivots' column side by side; or a batch of
/// them stacked ((B n) x n and (B n) x k).
pub(super) fn augmented(b: &mut Block, a: &Value, rhs: Option<&Value>, pivots: bool) -> Value {
    let element = a.tensor().element;
    let rows = b.tensor_dim(a, 0);
    let n = b.tensor_dim(a, 1);
    let mut width = n.clone();
    if let Some(rhs) = rhs {
        let k = b.tensor_dim(rhs, 1);
        width = b.arith(Arith::AddI, &width, &k);
    }
    if pivots {
        let one = b.constant_index(1);
        width = b.arith(Arith::AddI, &width, &one);
    }
    let w = zeros(b, element, &[rows, width]);
    let zero = IndexArg::Const(0);
    let w = b.tensor_insert_slice(a, &w, &[zero.clone(), zero.clone()]);
    match rhs {
        Some(rhs) => b.tensor_insert_slice(rhs, &w, &[zero, IndexArg::Dyn(n)]),
        None => w,
    }
}

/// The pivots `eliminate` recorded in w's last column, as i32.
fn recorded_pivots(b: &mut Block, w: &Value, n: &Value) -> Result<Value, String> {
    let e = b.tensor_empty(TensorType::new(vec![None], ScalarType::I32), std::slice::from_ref(n));
    let w = w.clone();
    let r = b.linalg_generic(&[], &[e], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let r = g.linalg_index(0);
        let last = g.constant_index(1);
        let width = g.tensor_dim(&w, 1);
        let last = g.arith(Arith::SubI, &width, &last);
        let v = g.tensor_extract(&w, &[r, last]);
        Ok::<_, String>(vec![g.cast(Cast::FPToSI, &v, ScalarType::I32)])
    })?;
    Ok(r[0].clone())
}

/// The solution of a x = rhs (n x k) by elimination with partial pivoting and back
/// substitution, and whether a's U has an exact zero on its diagonal (rank-0 i8).
pub(super) fn lu_solve(cx: &mut Context, b: &mut Block, a: &Value, rhs: &Value) -> Result<(Value, Value), String> {
    let n = b.tensor_dim(a, 0);
    let k = b.tensor_dim(rhs, 1);
    let w = augmented(b, a, Some(rhs), false);
    let w = eliminate(cx, b, &w, &n, &n, LastColumn::Eliminated)?;
    let zero = IndexArg::Const(0);
    let u = b.tensor_extract_slice(&w, &[zero.clone(), zero.clone()], &[IndexArg::Dyn(n.clone()), IndexArg::Dyn(n.clone())]);
    let y = b.tensor_extract_slice(&w, &[zero, IndexArg::Dyn(n.clone())], &[IndexArg::Dyn(n.clone()), IndexArg::Dyn(k)]);
    let x = substitute(cx, b, &u, &y, false, false, false)?;
    let singular = any_on_diagonal(b, &u, &n, |g, v| {
        let zero = g.constant_f64(0.0, v.scalar());
        g.cmpf(CmpF::Oeq, v, &zero)
    })?;
    Ok((x, singular))
}

/// a's `lower` (else upper) triangle mirrored onto the other: the symmetric matrix
/// sytrf and potrf read.
pub(super) fn symmetrized(b: &mut Block, a: &Value, lower: bool) -> Result<Value, String> {
    let n = b.tensor_dim(a, 0);
    let init = b.tensor_empty(a.tensor().clone(), &[n.clone(), n]);
    let t = map(2, &[AffineExpr::Dim(1), AffineExpr::Dim(0)]);
    let r = b.linalg_generic(&[a.clone(), a.clone()], &[init], &[AffineMap::identity(2), t, AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, args| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let keep = g.cmpi(if lower { CmpI::Uge } else { CmpI::Ule }, &r, &c);
        Ok::<_, String>(vec![g.select(&keep, &args[0], &args[1])])
    })?;
    Ok(r[0].clone())
}

/// `Solve(assume_a, lower, b_ndim)`: a x = b; "gen" by elimination with partial pivoting,
/// "sym" and "her" (real: the same) on the symmetric matrix of a's `lower` triangle (by
/// elimination: sytrf's pivots differ, the solution agrees to rounding), "pos" by its
/// Cholesky factor. Where scipy's solve raises LinAlgError (a singular matrix, or one
/// that is not positive definite), PyTensor returns NaN, and so do we.
pub fn solve(cx: &mut Context, b: &mut Block, node: &Node, assume_a: &str, lower: bool, b_ndim: usize) -> Result<(), String> {
    let (a, rhs) = solve_operands(cx, b, node, b_ndim, "Solve")?;
    let (x, failed) = match assume_a {
        "gen" => lu_solve(cx, b, &a, &rhs)?,
        "sym" | "her" => {
            let s = symmetrized(b, &a, lower)?;
            lu_solve(cx, b, &s, &rhs)?
        }
        "pos" => {
            let n = b.tensor_dim(&a, 0);
            let l = factor(cx, b, &a, &n, lower)?;
            let y = substitute(cx, b, &l, &rhs, true, !lower, false)?;
            let x = substitute(cx, b, &l, &y, false, lower, false)?;
            let failed = not_positive(b, &l, &n)?;
            (x, failed)
        }
        "tridiagonal" => super::tridiagonal::solve_tridiagonal(b, &a, &rhs)?,
        other => return Err(format!("assume_a={other:?} (gen, sym, her, pos and tridiagonal are lowered)")),
    };
    let x = nan_if(b, &x, &failed)?;
    define_solution(cx, b, node, &x, b_ndim);
    Ok(())
}

/// The input of a determinant or inverse: a square matrix in the output dtype; else
/// `kind` before the call (PyTensor's perform: ValueError from Det, SLogDet and LUFactor,
/// numpy's LinAlgError, a ValueError too, from MatrixInverse).
fn square_operand(cx: &mut Context, b: &mut Block, node: &Node, out: VarId, what: &str, kind: ErrorKind) -> Result<Value, String> {
    let x_var = node.inputs[0];
    if cx.graph.ty(x_var).ndim() != 2 {
        return Err(format!("{what} of a tensor that is not a matrix"));
    }
    working_type(cx.graph.ty(out), what)?;
    let d = cx.dims(x_var);
    cx.require(d[0], d[1], &format!("{what} (the last two dims must be square)"), kind);
    let dtype = cx.graph.ty(out).dtype;
    operand(cx, b, x_var, dtype)
}

/// Folds U's diagonal (of the eliminated `w`, pivots recorded) into rank-0 results, one
/// per entry of `inits`: `step(acc, u_ii, swapped)` gives each result's next value
/// (`swapped`: whether row i was exchanged, a factor -1 of the permutation's sign). One
/// reduction whose results are the entries of a vector (not a generic of several 0-d
/// results, nor sibling reductions IREE fuses into one: IREE 3.13 read such a second
/// result wrong, see checks.rs).
fn diagonal_folds(b: &mut Block, w: &Value, n: &Value, inits: &[f64], step: impl Fn(&mut Block, &Value, &Value, &Value) -> Vec<Value>) -> Result<Vec<Value>, String> {
    let element = w.tensor().element;
    let count = inits.len() as u64;
    let lanes = b.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(n));
    let e = b.tensor_empty(TensorType::new(vec![Some(count)], element), &[]);
    let init = b.linalg_generic(&[], &[e], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let t = g.linalg_index(0);
        let mut v = g.constant_f64(inits[0], element);
        for (k, &x) in inits.iter().enumerate().skip(1) {
            let here = g.constant_index(k as i64);
            let is = g.cmpi(CmpI::Eq, &t, &here);
            let c = g.constant_f64(x, element);
            v = g.select(&is, &c, &v);
        }
        Ok::<_, String>(vec![v])
    })?[0]
        .clone();
    let w = w.clone();
    let maps = [map(2, &[AffineExpr::Dim(1)]), map(2, &[AffineExpr::Dim(0)])];
    let folded = b.linalg_generic(&[lanes], &[init], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |g, args| {
        let (t, i) = (g.linalg_index(0), g.linalg_index(1));
        let u = g.tensor_extract(&w, &[i.clone(), i.clone()]);
        let width = g.tensor_dim(&w, 1);
        let one = g.constant_index(1);
        let last = g.arith(Arith::SubI, &width, &one);
        let p = g.tensor_extract(&w, &[i.clone(), last]);
        let i = g.index_cast(&i, ScalarType::I64);
        let i = g.cast(Cast::SIToFP, &i, element);
        let swapped = g.cmpf(CmpF::Une, &p, &i);
        let next = step(g, &args[1], &u, &swapped);
        let mut v = next[0].clone();
        for (k, x) in next.iter().enumerate().skip(1) {
            let here = g.constant_index(k as i64);
            let is = g.cmpi(CmpI::Eq, &t, &here);
            v = g.select(&is, x, &v);
        }
        Ok::<_, String>(vec![v])
    })?[0]
        .clone();
    Ok((0..inits.len())
        .map(|k| {
            let one = b.tensor_extract_slice(&folded, &[IndexArg::Const(k as i64)], &[IndexArg::Const(1)]);
            b.tensor_collapse(&one, &[])
        })
        .collect())
}

/// `acc` times -1 where `swapped`.
fn flip(g: &mut Block, acc: &Value, swapped: &Value) -> Value {
    let minus = g.negf(acc);
    g.select(swapped, &minus, acc)
}

/// `Det`: the product of U's diagonal times the permutation's sign (numpy's det, from
/// getrf; a singular matrix gives 0, +0 where a pivot is exactly zero, as numpy's sign 0
/// times exp(-inf); the 0 x 0 matrix 1).
pub fn det(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let out = node.outputs[0];
    let a = square_operand(cx, b, node, out, "Det", ErrorKind::Value)?;
    let n = b.tensor_dim(&a, 0);
    let w = augmented(b, &a, None, true);
    let w = eliminate(cx, b, &w, &n, &n, LastColumn::Pivots)?;
    let r = diagonal_folds(b, &w, &n, &[1.0, 0.0], |g, acc, u, swapped| {
        let p = g.arith(Arith::MulF, acc, u);
        let (zero, one) = (g.constant_f64(0.0, u.scalar()), g.constant_f64(1.0, u.scalar()));
        let zero_pivot = g.cmpf(CmpF::Oeq, u, &zero);
        vec![flip(g, &p, swapped), g.select(&zero_pivot, &one, acc)]
    })?;
    let zero = b.constant_f64(0.0, a.tensor().element);
    let product = b.tensor_extract(&r[0], &[]);
    let seen = b.tensor_extract(&r[1], &[]);
    let zero_pivot = b.cmpf(CmpF::Une, &seen, &zero);
    let d = b.select(&zero_pivot, &zero, &product);
    let e = b.tensor_empty(TensorType::new(vec![], a.tensor().element), &[]);
    let d = b.linalg_fill(&d, &e);
    define(cx, b, out, &d, vec![]);
    Ok(())
}

/// `SLogDet`: (sign, log|det|) as numpy's slogdet: the permutation's sign times the
/// signs of U's diagonal, and the sum of the logs of its magnitudes (a singular matrix:
/// (0, -inf)).
pub fn slogdet(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (sign_out, log_out) = (node.outputs[0], node.outputs[1]);
    let a = square_operand(cx, b, node, sign_out, "SLogDet", ErrorKind::Value)?;
    if cx.graph.ty(log_out).dtype != cx.graph.ty(sign_out).dtype {
        return Err("SLogDet with outputs of two dtypes".into());
    }
    let n = b.tensor_dim(&a, 0);
    let w = augmented(b, &a, None, true);
    let w = eliminate(cx, b, &w, &n, &n, LastColumn::Pivots)?;
    let r = diagonal_folds(b, &w, &n, &[1.0, 0.0], |g, acc, u, swapped| {
        let (one, zero) = (g.constant_f64(1.0, u.scalar()), g.constant_f64(0.0, u.scalar()));
        let signed_one = g.copysign(&one, u);
        let is_zero = g.cmpf(CmpF::Oeq, u, &zero);
        let s = g.select(&is_zero, &zero, &signed_one);
        let s = g.arith(Arith::MulF, acc, &s);
        let size = g.math(MathUnary::AbsF, u);
        let log = g.math(MathUnary::Log, &size);
        vec![flip(g, &s, swapped), g.arith(Arith::AddF, acc, &log)]
    })?;
    define(cx, b, sign_out, &r[0], vec![]);
    define(cx, b, log_out, &r[1], vec![]);
    Ok(())
}

/// The `rows` x `cols` identity matrix (ones on the main diagonal) of float `element`.
pub(super) fn identity(b: &mut Block, element: ScalarType, rows: &Value, cols: &Value) -> Result<Value, String> {
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), cols.clone()]);
    Ok(b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let on = g.cmpi(CmpI::Eq, &r, &c);
        let (one, zero) = (g.constant_f64(1.0, element), g.constant_f64(0.0, element));
        Ok::<_, String>(vec![g.select(&on, &one, &zero)])
    })?[0]
        .clone())
}

/// `MatrixInverse`: a x = I by elimination; a singular matrix (an exact zero pivot)
/// raises numpy's LinAlgError("Singular matrix") after the call, as np.linalg.inv does.
pub fn matrix_inverse(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let out = node.outputs[0];
    let linalg_error = cx.exception("numpy.linalg.LinAlgError");
    let a = square_operand(cx, b, node, out, "MatrixInverse", linalg_error)?;
    let n = b.tensor_dim(&a, 0);
    let element = a.tensor().element;
    let eye = identity(b, element, &n, &n)?;
    let (x, singular) = lu_solve(cx, b, &a, &eye)?;
    cx.add_check(singular, super::RuntimeCheck { kind: linalg_error, message: "Singular matrix".into() });
    let dims = cx.dims(node.inputs[0]);
    define(cx, b, out, &x, dims);
    Ok(())
}

/// `LUFactor`: getrf's (LU, pivots): L's multipliers below U's diagonal, the pivots as
/// i32; where getrf reports a singular matrix (an exact zero pivot), LU is NaN
/// everywhere, as PyTensor's `perform` leaves it. Square matrices only (ValueError before
/// the call; getrf's rectangular factorization, which PyTensor's perform would give, is
/// not built: the solvers and determinants that use LUFactor are square).
pub fn lu_factor(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (lu_out, piv_out) = (node.outputs[0], node.outputs[1]);
    if cx.graph.ty(piv_out).dtype != DType::Int32 {
        return Err("LUFactor with pivots that are not int32".into());
    }
    let a = square_operand(cx, b, node, lu_out, "LUFactor", ErrorKind::Value)?;
    let n = b.tensor_dim(&a, 0);
    let w = augmented(b, &a, None, true);
    let w = eliminate(cx, b, &w, &n, &n, LastColumn::Pivots)?;
    let pivots = recorded_pivots(b, &w, &n)?;
    let zero = IndexArg::Const(0);
    let lu = b.tensor_extract_slice(&w, &[zero.clone(), zero], &[IndexArg::Dyn(n.clone()), IndexArg::Dyn(n.clone())]);
    let singular = any_on_diagonal(b, &lu, &n, |g, v| {
        let zero = g.constant_f64(0.0, v.scalar());
        g.cmpf(CmpF::Oeq, v, &zero)
    })?;
    let lu = nan_if(b, &lu, &singular)?;
    let d = cx.dims(node.inputs[0]);
    define(cx, b, lu_out, &lu, d.clone());
    define(cx, b, piv_out, &pivots, vec![d[0]]);
    Ok(())
}

/// Whether any element of the matrix `m` is NaN or infinite (a rank-0 `i8`, 1 where so).
pub(super) fn any_not_finite(b: &mut Block, m: &Value) -> Result<Value, String> {
    let none = b.constant_int(0, ScalarType::I8);
    let flag = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let init = b.linalg_fill(&none, &flag);
    let maps = [AffineMap::identity(2), map(2, &[])];
    let r = b.linalg_generic(&[m.clone()], &[init], &maps, &[IteratorType::Reduction; 2], |g, args| {
        let size = g.math(MathUnary::AbsF, &args[0]);
        let inf = g.constant_f64(f64::INFINITY, size.scalar());
        // Not below infinity: NaN or infinite.
        let finite = g.cmpf(CmpF::Olt, &size, &inf);
        let (no, yes) = (g.constant_int(0, ScalarType::I8), g.constant_int(1, ScalarType::I8));
        let flag = g.select(&finite, &no, &yes);
        Ok::<_, String>(vec![g.arith(Arith::OrI, &flag, &args[1])])
    })?;
    Ok(r[0].clone())
}

/// `LU(permute_l, p_indices)`: scipy's lu of an m x n matrix, A = P L U: P (m x m) the
/// permutation, L (m x k, k = min(m, n)) unit lower triangular, U (k x n); with
/// `p_indices` p (m, int32) with A = L[p] U in place of P; with `permute_l` (P L, U).
/// getrf's elimination (`eliminate`), its row swaps followed by a column of row numbers.
/// NaN or infinity in the input raises ValueError, as scipy's check_finite does.
pub fn lu(cx: &mut Context, b: &mut Block, node: &Node, permute_l: bool, p_indices: bool) -> Result<(), String> {
    let x_var = node.inputs[0];
    if cx.graph.ty(x_var).ndim() != 2 {
        return Err("LU of a tensor that is not a matrix".into());
    }
    let (l_out, u_out) = if permute_l { (node.outputs[0], node.outputs[1]) } else { (node.outputs[1], node.outputs[2]) };
    let element = working_type(cx.graph.ty(l_out), "LU")?;
    let p_out = (!permute_l).then(|| node.outputs[0]);
    if p_indices && cx.graph.ty(node.outputs[0]).dtype != DType::Int32 {
        return Err("LU with p_indices that are not int32".into());
    }
    let a = operand(cx, b, x_var, cx.graph.ty(l_out).dtype)?;
    let not_finite = any_not_finite(b, &a)?;
    cx.add_check(not_finite, super::RuntimeCheck { kind: ErrorKind::Value, message: "array must not contain infs or NaNs".into() });
    let (m, n) = (b.tensor_dim(&a, 0), b.tensor_dim(&a, 1));
    let k = b.arith(Arith::MinUI, &m, &n);
    let one = b.constant_index(1);
    let width = b.arith(Arith::AddI, &n, &one);
    let numbers_init = b.tensor_empty(TensorType::new(vec![None, Some(1)], element), std::slice::from_ref(&m));
    let numbers = b.linalg_generic(&[], &[numbers_init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let r = g.linalg_index(0);
        let r = g.index_cast(&r, ScalarType::I64);
        Ok::<_, String>(vec![g.cast(Cast::SIToFP, &r, element)])
    })?[0]
        .clone();
    let zero = IndexArg::Const(0);
    let w = zeros(b, element, &[m.clone(), width]);
    let w = b.tensor_insert_slice(&a, &w, &[zero.clone(), zero.clone()]);
    let w = b.tensor_insert_slice(&numbers, &w, &[zero.clone(), IndexArg::Dyn(n.clone())]);
    let w = eliminate(cx, b, &w, &m, &k, LastColumn::Rows)?;
    let perm = b.tensor_extract_slice(&w, &[zero.clone(), IndexArg::Dyn(n.clone())], &[IndexArg::Dyn(m.clone()), IndexArg::Const(1)]);
    let d = cx.dims(x_var);
    let dk = cx.derived(DimExpr::Min(vec![d[0], d[1]]));
    // p = perm's inverse: p[r] is the i with perm[i] = r (A[r] = (L U)[p[r]]).
    let e = b.tensor_empty(TensorType::new(vec![None], ScalarType::I64), std::slice::from_ref(&m));
    let nothing = b.constant_int(0, ScalarType::I64);
    let e = b.linalg_fill(&nothing, &e);
    let maps = [map(2, &[AffineExpr::Dim(1), AffineExpr::Constant(0)]), map(2, &[AffineExpr::Dim(0)])];
    let inverse = b.linalg_generic(std::slice::from_ref(&perm), &[e], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |g, args| {
        let (r, i) = (g.linalg_index(0), g.linalg_index(1));
        let r = g.index_cast(&r, ScalarType::I64);
        let r = g.cast(Cast::SIToFP, &r, element);
        let here = g.cmpf(CmpF::Oeq, &args[0], &r);
        let i = g.index_cast(&i, ScalarType::I64);
        let nothing = g.constant_int(0, ScalarType::I64);
        let add = g.select(&here, &i, &nothing);
        Ok::<_, String>(vec![g.arith(Arith::AddI, &args[1], &add)])
    })?[0]
        .clone();
    // L (m x k), rows permuted by p where `permute_l` (P L's row r is L's row p[r]).
    let l_init = b.tensor_empty(TensorType::new(vec![None, None], element), &[m.clone(), k.clone()]);
    let ww = w.clone();
    let l = b.linalg_generic(std::slice::from_ref(&inverse), &[l_init], &[map(2, &[AffineExpr::Dim(0)]), AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, args| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let r = if permute_l { g.index_cast(&args[0], ScalarType::Index) } else { r };
        let v = g.tensor_extract(&ww, &[r.clone(), c.clone()]);
        let (one, zero) = (g.constant_f64(1.0, element), g.constant_f64(0.0, element));
        let (below, on) = (g.cmpi(CmpI::Ugt, &r, &c), g.cmpi(CmpI::Eq, &r, &c));
        let above = g.select(&on, &one, &zero);
        Ok::<_, String>(vec![g.select(&below, &v, &above)])
    })?[0]
        .clone();
    define(cx, b, l_out, &l, vec![d[0], dk]);
    let u_init = b.tensor_empty(TensorType::new(vec![None, None], element), &[k.clone(), n.clone()]);
    let u = b.linalg_generic(&[], &[u_init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let v = g.tensor_extract(&w, &[r.clone(), c.clone()]);
        let zero = g.constant_f64(0.0, element);
        let upper = g.cmpi(CmpI::Ule, &r, &c);
        Ok::<_, String>(vec![g.select(&upper, &v, &zero)])
    })?[0]
        .clone();
    define(cx, b, u_out, &u, vec![dk, d[1]]);
    let Some(p_out) = p_out else { return Ok(()) };
    if p_indices {
        let e = b.tensor_empty(TensorType::new(vec![None], ScalarType::I32), std::slice::from_ref(&m));
        let p = b.linalg_generic(std::slice::from_ref(&inverse), &[e], &[AffineMap::identity(1), AffineMap::identity(1)], &[IteratorType::Parallel], |g, args| {
            Ok::<_, String>(vec![g.cast(Cast::TruncI, &args[0], ScalarType::I32)])
        })?[0]
            .clone();
        define(cx, b, p_out, &p, vec![d[0]]);
        return Ok(());
    }
    // P[r, c] = 1 where perm[c] = r.
    let p_element = working_type(cx.graph.ty(p_out), "LU")?;
    let init = b.tensor_empty(TensorType::new(vec![None, None], p_element), &[m.clone(), m]);
    let maps = [map(2, &[AffineExpr::Dim(1), AffineExpr::Constant(0)]), AffineMap::identity(2)];
    let p = b.linalg_generic(std::slice::from_ref(&perm), &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        let r = g.linalg_index(0);
        let r = g.index_cast(&r, ScalarType::I64);
        let r = g.cast(Cast::SIToFP, &r, element);
        let here = g.cmpf(CmpF::Oeq, &args[0], &r);
        let (one, zero) = (g.constant_f64(1.0, p_element), g.constant_f64(0.0, p_element));
        Ok::<_, String>(vec![g.select(&here, &one, &zero)])
    })?[0]
        .clone();
    define(cx, b, p_out, &p, vec![d[0], d[0]]);
    Ok(())
}

/// `PivotToPermutations(inverse)`: getrf's pivots applied as swaps to the entries of
/// 0..n in order (`inverse`: the permutation p with a[p] = L U), or else to its values
/// (p's inverse, numpy's argsort of p).
pub fn pivot_to_permutations(cx: &mut Context, b: &mut Block, node: &Node, inverse: bool) -> Result<(), String> {
    let (piv_var, out) = (node.inputs[0], node.outputs[0]);
    let ty = cx.graph.ty(piv_var).clone();
    if ty.ndim() != 1 || !ty.dtype.is_int() || cx.graph.ty(out).dtype != DType::Int64 {
        return Err("PivotToPermutations of other than an integer vector to int64".into());
    }
    if scalar::has_sequential_kernels() {
        return super::pivots::pivot_to_permutations(cx, b, node, inverse);
    }
    let pivots = cx.value(b, piv_var)?;
    let pivots = dynamic(b, &pivots);
    let n = b.tensor_dim(&pivots, 0);
    let e = b.tensor_empty(TensorType::new(vec![None], ScalarType::I64), std::slice::from_ref(&n));
    let start = b.linalg_generic(&[], &[e], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let r = g.linalg_index(0);
        Ok::<_, String>(vec![g.index_cast(&r, ScalarType::I64)])
    })?[0]
        .clone();
    let start = cx.loop_start(b, &start)?;
    let (first, step) = (b.constant_index(0), b.constant_index(1));
    let pv = pivots.clone();
    let swapped = b.scf_for(&first, &n, &step, &[start], |body, i, args| {
        let perm = args[0].clone();
        let here = body.tensor_extract_slice(&pv, &[IndexArg::Dyn(i.clone())], &[IndexArg::Const(1)]);
        let e = body.tensor_empty(TensorType::new(vec![None], ScalarType::I64), std::slice::from_ref(&n));
        let maps = [map(1, &[AffineExpr::Constant(0)]), AffineMap::identity(1)];
        let (perm2, i2) = (perm.clone(), i.clone());
        let r = body.linalg_generic(&[here], &[e], &maps, &[IteratorType::Parallel], |g, args| {
            let p = g.index_cast(&args[0], ScalarType::Index);
            let k = g.linalg_index(0);
            let k_value = g.tensor_extract(&perm2, &[k.clone()]);
            if inverse {
                // Entries i and p swapped: p_inv[k] = p_inv[swap(k)].
                let (is_i, is_p) = (g.cmpi(CmpI::Eq, &k, &i2), g.cmpi(CmpI::Eq, &k, &p));
                let other = g.select(&is_p, &i2, &k);
                let src = g.select(&is_i, &p, &other);
                Ok::<_, String>(vec![g.tensor_extract(&perm2, &[src])])
            } else {
                // Values i and p swapped: the inverse's swaps compose the other way.
                let (i64_i, i64_p) = (g.index_cast(&i2, ScalarType::I64), g.index_cast(&p, ScalarType::I64));
                let (is_i, is_p) = (g.cmpi(CmpI::Eq, &k_value, &i64_i), g.cmpi(CmpI::Eq, &k_value, &i64_p));
                let other = g.select(&is_p, &i64_i, &k_value);
                Ok(vec![g.select(&is_i, &i64_p, &other)])
            }
        })?;
        Ok::<_, String>(vec![r[0].clone()])
    })?;
    let result = swapped[0].clone();
    let dims = cx.dims(piv_var);
    define(cx, b, out, &result, dims);
    Ok(())
}
