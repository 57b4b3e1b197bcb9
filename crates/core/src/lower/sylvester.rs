//! `SolveSylvester(A, B, C)`: the X with A X + X B = C (scipy's `solve_sylvester`, which
//! `solve_continuous_lyapunov` and the bilinear `solve_discrete_lyapunov` call), and
//! `TRSYL(R, S, F)`, the same equation for R and S in real Schur form (LAPACK's trsyl).
//!
//! On the CPU, SolveSylvester is its inner graph's route, Bartels and Stewart's: real
//! Schur forms A = U R U^T and B = V S V^T (dense_kernels/real_schur.rs), F = U^T C V, Y
//! with R Y + Y S = F by back substitution over the forms' blocks
//! (dense_kernels/quasi_sylvester.rs), X = U Y V^T: O(m^3 + n^3 + m n (m + n)). GPU
//! targets have no such sequential kernels: there, column by column, vec(A X + X B) = (I_n
//! (x) A + B^T (x) I_m) vec(X), so X is one dense solve of order m n (elimination with
//! partial pivoting, linalg.rs `lu_solve`): exact to rounding too, but O((m n)^3) work,
//! for the small systems of state-space models (n up to a few tens).

use super::linalg::{any_not_finite, define, lu_solve, nan_if, operand, transposed, working_type, zeros};
use super::shapes::Dim;
use super::{dense_kernels, scalar, Context, ErrorKind};
use crate::ir::Node;
use crate::mlir::{AffineMap, Arith, Block, CmpI, Contraction, IteratorType, ScalarType, TensorType, Value};

pub fn solve_sylvester(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let Operands { a, bm, c, dims: [da, db, dc], element } = operands(cx, b, node, "SolveSylvester")?;
    cx.require_equal(dc[0], da[0], "SolveSylvester (C's rows and A)");
    cx.require_equal(dc[1], db[0], "SolveSylvester (C's columns and B)");
    // A non-finite A or B: NaN everywhere (C's result for a NaN; for an infinity LAPACK's
    // is finite garbage). On the CPU its Schur form is NaN, and so U Y V^T.
    let x = if scalar::has_sequential_kernels() {
        bartels_stewart(cx, b, &a, &bm, &c, element)
    } else {
        let not_finite = [any_not_finite(b, &a)?, any_not_finite(b, &bm)?];
        let x = kronecker(cx, b, &a, &bm, &c, element)?;
        let x = nan_if(b, &x, &not_finite[0])?;
        nan_if(b, &x, &not_finite[1])?
    };
    define(cx, b, node.outputs[0], &x, vec![da[0], db[0]]);
    Ok(())
}

/// `TRSYL(R, S, F)`: Y with R Y + Y S = F, R and S in real Schur form (scipy's trsyl,
/// which PyTensor's perform calls with its defaults: no transposes, the + sign). Where R
/// and -S share an eigenvalue trsyl perturbs the system (see quasi_sylvester.rs) and so
/// does this rule. CPU only.
pub fn trsyl(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    if !scalar::has_sequential_kernels() {
        return Err("TRSYL on a GPU target is not lowered (its back substitution is one CPU dispatch of scalar loops)".into());
    }
    let Operands { a, bm, c, dims: [da, db, dc], element } = operands(cx, b, node, "TRSYL")?;
    // scipy's trsyl wrapper checks no shapes (LAPACK then reads past the arrays): a
    // ValueError here.
    cx.require(dc[0], da[0], "TRSYL (C's rows and A)", ErrorKind::Value);
    cx.require(dc[1], db[0], "TRSYL (C's columns and B)", ErrorKind::Value);
    let x = dense_kernels::quasi_triangular_sylvester(cx, b, &a, &bm, &c, element);
    define(cx, b, node.outputs[0], &x, vec![dc[0], dc[1]]);
    Ok(())
}

/// A Sylvester equation's matrices A, B and C at its output's dtype, their dims and the
/// working type.
struct Operands {
    a: Value,
    bm: Value,
    c: Value,
    dims: [Vec<Dim>; 3],
    element: ScalarType,
}

/// `node`'s three matrix operands; A and B required square (scipy's schur raises
/// ValueError for one that is not).
fn operands(cx: &mut Context, b: &mut Block, node: &Node, what: &str) -> Result<Operands, String> {
    let [a_var, b_var, c_var] = node.inputs[..] else { return Err(format!("{what} needs three inputs")) };
    if [a_var, b_var, c_var].iter().any(|&v| cx.graph.ty(v).ndim() != 2) {
        return Err(format!("{what} of tensors that are not matrices"));
    }
    let out = node.outputs[0];
    let element = working_type(cx.graph.ty(out), what)?;
    let dtype = cx.graph.ty(out).dtype;
    let (a, bm, c) = (operand(cx, b, a_var, dtype)?, operand(cx, b, b_var, dtype)?, operand(cx, b, c_var, dtype)?);
    let dims = [cx.dims(a_var), cx.dims(b_var), cx.dims(c_var)];
    cx.require(dims[0][0], dims[0][1], &format!("{what} (expected square matrix A)"), ErrorKind::Value);
    cx.require(dims[1][0], dims[1][1], &format!("{what} (expected square matrix B)"), ErrorKind::Value);
    Ok(Operands { a, bm, c, dims, element })
}

/// Bartels-Stewart on the CPU: A = U R U^T, B = V S V^T, R Y + Y S = U^T C V, X = U Y V^T.
fn bartels_stewart(cx: &mut Context, b: &mut Block, a: &Value, bm: &Value, c: &Value, element: ScalarType) -> Value {
    let (m, n) = (b.tensor_dim(a, 0), b.tensor_dim(bm, 0));
    let (r, u) = dense_kernels::real_schur(cx, b, a, element, None);
    let (s, v) = dense_kernels::real_schur(cx, b, bm, element, None);
    let product = |b: &mut Block, x: &Value, y: &Value, rows: &Value, cols: &Value| {
        let init = zeros(b, element, &[rows.clone(), cols.clone()]);
        b.contraction(Contraction::Matmul, x, y, &init)
    };
    let ut = transposed(b, &u).unwrap_or_else(|e| unreachable!("{e}"));
    let vt = transposed(b, &v).unwrap_or_else(|e| unreachable!("{e}"));
    let utc = product(b, &ut, c, &m, &n);
    let f = product(b, &utc, &v, &m, &n);
    let y = dense_kernels::quasi_triangular_sylvester(cx, b, &r, &s, &f, element);
    let uy = product(b, &u, &y, &m, &n);
    product(b, &uy, &vt, &m, &n)
}

/// The Kronecker form's one dense solve (GPU targets): NaN for a singular system (A and -B
/// sharing an eigenvalue).
fn kronecker(cx: &mut Context, b: &mut Block, a: &Value, bm: &Value, c: &Value, element: ScalarType) -> Result<Value, String> {
    let (m, n) = (b.tensor_dim(a, 0), b.tensor_dim(bm, 0));
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
    let rhs = reshaped(b, c, &m, &mn, element, true)?;
    let (x, failed) = lu_solve(cx, b, &k, &rhs)?;
    let x = reshaped(b, &x, &m, &n, element, false)?;
    // A singular system (A and -B share an eigenvalue): NaN, where trsyl perturbs the
    // system and returns a huge solution.
    nan_if(b, &x, &failed)
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
