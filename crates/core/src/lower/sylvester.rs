//! `SolveSylvester(A, B, C)`: the X with A X + X B = C (scipy's `solve_sylvester`, which
//! `solve_continuous_lyapunov` and the bilinear `solve_discrete_lyapunov` call), lowered
//! by its own rule instead of its inner graph (a real Schur form, `Schur`, then LAPACK's
//! trsyl, `TRSYL`: neither lowered). Column by column, vec(A X + X B) = (I_n (x) A +
//! B^T (x) I_m) vec(X), so X is one dense solve of order m n (elimination with partial
//! pivoting, linalg.rs `lu_solve`): exact to rounding like Bartels-Stewart, but O((m n)^3)
//! work, made for the small systems of state-space models (n up to a few tens).

use super::linalg::{any_not_finite, define, lu_solve, nan_if, operand, working_type};
use super::{Context, ErrorKind};
use crate::ir::Node;
use crate::mlir::{AffineMap, Arith, Block, CmpI, IteratorType, TensorType, Value};

pub fn solve_sylvester(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let [a_var, b_var, c_var] = node.inputs[..] else { return Err("SolveSylvester needs three inputs".into()) };
    let out = node.outputs[0];
    if [a_var, b_var, c_var].iter().any(|&v| cx.graph.ty(v).ndim() != 2) {
        return Err("SolveSylvester of tensors that are not matrices".into());
    }
    let element = working_type(cx.graph.ty(out), "SolveSylvester")?;
    let dtype = cx.graph.ty(out).dtype;
    let (a, bm, c) = (operand(cx, b, a_var, dtype)?, operand(cx, b, b_var, dtype)?, operand(cx, b, c_var, dtype)?);
    let (da, db, dc) = (cx.dims(a_var), cx.dims(b_var), cx.dims(c_var));
    // scipy's schur of A and B: ValueError for a matrix that is not square.
    cx.require(da[0], da[1], "SolveSylvester (expected square matrix A)", ErrorKind::Value);
    cx.require(db[0], db[1], "SolveSylvester (expected square matrix B)", ErrorKind::Value);
    cx.require_equal(dc[0], da[0], "SolveSylvester (C's rows and A)");
    cx.require_equal(dc[1], db[0], "SolveSylvester (C's columns and B)");
    // A non-finite A or B: NaN everywhere (C's result for a NaN; for an infinity LAPACK's
    // is finite garbage).
    let not_finite = [any_not_finite(b, &a)?, any_not_finite(b, &bm)?];
    let (m, n) = (b.tensor_dim(&a, 0), b.tensor_dim(&bm, 0));
    let mn = b.arith(Arith::MulI, &m, &n);
    // K[j m + i, l m + k] = A[i, k] [j = l] + B[l, j] [i = k].
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[mn.clone(), mn.clone()]);
    let (mm, aa, bb) = (m.clone(), a.clone(), bm.clone());
    let k = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, s) = (g.linalg_index(0), g.linalg_index(1));
        let (i, j) = (g.arith(Arith::RemUI, &r, &mm), g.arith(Arith::DivUI, &r, &mm));
        let (kk, l) = (g.arith(Arith::RemUI, &s, &mm), g.arith(Arith::DivUI, &s, &mm));
        let zero = g.constant_f64(0.0, element);
        let same_column = g.cmpi(CmpI::Eq, &j, &l);
        let from_a = g.tensor_extract(&aa, &[i.clone(), kk.clone()]);
        let from_a = g.select(&same_column, &from_a, &zero);
        let same_row = g.cmpi(CmpI::Eq, &i, &kk);
        let from_b = g.tensor_extract(&bb, &[l, j]);
        let from_b = g.select(&same_row, &from_b, &zero);
        Ok::<_, String>(vec![g.arith(Arith::AddF, &from_a, &from_b)])
    })?[0]
        .clone();
    let rhs = reshaped(b, &c, &m, &mn, element, true)?;
    let (x, failed) = lu_solve(cx, b, &k, &rhs)?;
    let x = reshaped(b, &x, &m, &n, element, false)?;
    // A singular system (A and -B share an eigenvalue): NaN, where trsyl perturbs the
    // system and returns a huge solution.
    let x = nan_if(b, &x, &failed)?;
    let x = nan_if(b, &x, &not_finite[0])?;
    let x = nan_if(b, &x, &not_finite[1])?;
    define(cx, b, out, &x, vec![da[0], db[0]]);
    Ok(())
}

/// vec(M) of the m x n matrix `v` as an (m n) x 1 column, by columns (`to_column`); or
/// back, the m x `other` matrix of such a column.
fn reshaped(b: &mut Block, v: &Value, m: &Value, other: &Value, element: crate::mlir::ScalarType, to_column: bool) -> Result<Value, String> {
    let sizes = if to_column { [other.clone(), b.constant_index(1)] } else { [m.clone(), other.clone()] };
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &sizes);
    let (v, m) = (v.clone(), m.clone());
    Ok(b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let e = if to_column {
            let (i, j) = (g.arith(Arith::RemUI, &r, &m), g.arith(Arith::DivUI, &r, &m));
            g.tensor_extract(&v, &[i, j])
        } else {
            let at = g.arith(Arith::MulI, &c, &m);
            let at = g.arith(Arith::AddI, &at, &r);
            let zero = g.constant_index(0);
            g.tensor_extract(&v, &[at, zero])
        };
        Ok::<_, String>(vec![e])
    })?[0]
        .clone())
}
