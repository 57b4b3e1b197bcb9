//! Tridiagonal systems, as LAPACK solves them: `LUFactorTridiagonal` (gttrf: the LU
//! factors with partial pivoting, U with two superdiagonals), `SolveLUFactorTridiagonal`
//! (gttrs: A x = b or A^T x = b from those factors) and `Solve(assume_a="tridiagonal")`
//! (the two, NaN where a pivot is exactly 0, as PyTensor's perform gives for scipy's
//! LinAlgError).
//!
//! Each is a recurrence along the diagonal, each step reading the last one's values: one
//! sequential generic each (sequential.rs; the values a step hands on are 0-d outputs, one
//! per right-hand side), so O(n) in one dispatch where a loop in the host program cost
//! about 3 us per step.
//! A backward recurrence runs over the reversed rows and is flipped afterwards.
//!
//! Every read is guarded (`get`): rows past an input's end read 0, so a step needs no case
//! of its own for the ends and diagonals of other lengths never read out of bounds.

use super::linalg::{define, map, operand, working_type};
use super::sequential::private_output;
use super::shapes::{DimExpr, IntExpr, IntOp};
use super::{Context, ErrorKind, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::Node;
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, CmpI, IndexArg, IteratorType, MathUnary, ScalarType, TensorType, Value};

/// `t[at..]` (the leading index `at`, then `rest`) where 0 <= at < len, else `zero`.
fn get(g: &mut Block, t: &Value, at: &Value, rest: &[Value], len: &Value, zero: &Value) -> Value {
    let c0 = g.constant_index(0);
    let ge = g.cmpi(CmpI::Sge, at, &c0);
    let lt = g.cmpi(CmpI::Slt, at, len);
    let inside = g.arith(Arith::AndI, &ge, &lt);
    let index: Vec<Value> = std::iter::once(at.clone()).chain(rest.iter().cloned()).collect();
    let t = t.clone();
    g.scf_if(&inside, &[zero.scalar()], |then| vec![then.tensor_extract(&t, &index)], |_| vec![zero.clone()])[0].clone()
}

fn offset(g: &mut Block, i: &Value, by: i64) -> Value {
    let k = g.constant_index(by);
    g.arith(Arith::AddI, i, &k)
}

/// The factors gttrf returns, each a vector: dl (n - 1 multipliers), d (U's diagonal), du
/// (U's first superdiagonal), du2 (its second, n - 2), ipiv (int32, 1-based: row i was
/// swapped with row ipiv_i - 1).
pub(super) struct Factors {
    dl: Value,
    d: Value,
    du: Value,
    du2: Value,
    ipiv: Value,
}

/// gttrf of the tridiagonal matrix with subdiagonal `dl`, diagonal `d` and superdiagonal
/// `du` (vectors of `element`), step i in LAPACK's order: no swap where |d_i| >= |dl_i|
/// (l_i = dl_i / d_i unless d_i is 0), else rows i and i + 1 swapped (a fill-in du2_i).
fn factor(b: &mut Block, dl: &Value, d: &Value, du: &Value, element: ScalarType) -> Result<Factors, String> {
    let n = b.tensor_dim(d, 0);
    let (n_dl, n_du) = (b.tensor_dim(dl, 0), b.tensor_dim(du, 0));
    let mut outs: Vec<Value> = (0..4).map(|k| private_output(b, element, std::slice::from_ref(&n), k)).collect();
    outs.push(private_output(b, ScalarType::I32, std::slice::from_ref(&n), 4));
    outs.push(private_output(b, element, &[], 5));
    outs.push(private_output(b, element, &[], 6));
    let row = AffineMap::identity(1);
    let carried = map(1, &[]);
    let maps = [row.clone(), row.clone(), row.clone(), row.clone(), row, carried.clone(), carried];
    let (dl, d, du) = (dl.clone(), d.clone(), du.clone());
    let r = b.linalg_generic(&[], &outs, &maps, &[IteratorType::Reduction], |g, args| {
        let (cur_d, cur_du) = (&args[5], &args[6]);
        let zero = g.constant_f64(0.0, element);
        let i = g.linalg_index(0);
        let c0 = g.constant_index(0);
        let first = g.cmpi(CmpI::Eq, &i, &c0);
        let d0 = get(g, &d, &c0, &[], &n, &zero);
        let du0 = get(g, &du, &c0, &[], &n_du, &zero);
        let d_i = g.select(&first, &d0, cur_d);
        let du_i = g.select(&first, &du0, cur_du);
        let dl_i = get(g, &dl, &i, &[], &n_dl, &zero);
        let next = offset(g, &i, 1);
        let d_next = get(g, &d, &next, &[], &n, &zero);
        let du_next = get(g, &du, &next, &[], &n_du, &zero);
        // The last row only takes what the steps before left on its diagonal.
        let n_1 = offset(g, &n, -1);
        let last = g.cmpi(CmpI::Sge, &i, &n_1);
        let (size_d, size_dl) = (g.math(MathUnary::AbsF, &d_i), g.math(MathUnary::AbsF, &dl_i));
        let keep = g.cmpf(CmpF::Oge, &size_d, &size_dl);
        let keep = g.arith(Arith::OrI, &keep, &last);
        // No swap (LAPACK's test is D(I) .NE. ZERO: true for NaN).
        let nonzero = g.cmpf(CmpF::Une, &d_i, &zero);
        let l = g.arith(Arith::DivF, &dl_i, &d_i);
        let dl_keep = g.select(&nonzero, &l, &dl_i);
        let prod = g.arith(Arith::MulF, &l, &du_i);
        let reduced = g.arith(Arith::SubF, &d_next, &prod);
        let d_next_keep = g.select(&nonzero, &reduced, &d_next);
        // Rows i and i + 1 swapped.
        let fact = g.arith(Arith::DivF, &d_i, &dl_i);
        let prod = g.arith(Arith::MulF, &fact, &d_next);
        let d_next_swap = g.arith(Arith::SubF, &du_i, &prod);
        let prod = g.arith(Arith::MulF, &fact, &du_next);
        let du_next_swap = g.negf(&prod);
        let one = g.constant_index(1);
        let two = g.constant_index(2);
        let piv_keep = g.arith(Arith::AddI, &i, &one);
        let piv_swap = g.arith(Arith::AddI, &i, &two);
        let piv = g.select(&keep, &piv_keep, &piv_swap);
        let piv = g.index_cast(&piv, ScalarType::I32);
        Ok::<_, String>(vec![
            g.select(&keep, &dl_keep, &fact),
            g.select(&keep, &d_i, &dl_i),
            g.select(&keep, &du_i, &d_next),
            g.select(&keep, &zero, &du_next),
            piv,
            g.select(&keep, &d_next_keep, &d_next_swap),
            g.select(&keep, &du_next, &du_next_swap),
        ])
    })?;
    // The vectors' own lengths: n - 1, n, n - 1, n - 2 (0 for n < 2), n.
    let (c0, c1, c2) = (b.constant_index(0), b.constant_index(1), b.constant_index(2));
    let short = b.arith(Arith::SubI, &n, &c1);
    let short = b.arith(Arith::MaxSI, &short, &c0);
    let shorter = b.arith(Arith::SubI, &n, &c2);
    let shorter = b.arith(Arith::MaxSI, &shorter, &c0);
    let take = |b: &mut Block, v: &Value, len: &Value| b.tensor_extract_slice(v, &[IndexArg::Const(0)], &[IndexArg::Dyn(len.clone())]);
    Ok(Factors {
        dl: take(b, &r[0], &short),
        d: r[1].clone(),
        du: take(b, &r[2], &short),
        du2: take(b, &r[3], &shorter),
        ipiv: r[4].clone(),
    })
}

/// `rows` (m x k) with its rows in reverse order: row i is row m - 1 - i.
fn flipped(b: &mut Block, rows: &Value, m: &Value) -> Result<Value, String> {
    let k = b.tensor_dim(rows, 1);
    let init = b.tensor_empty(rows.tensor().clone(), &[m.clone(), k]);
    let rows = rows.clone();
    let last = b.constant_index(1);
    let last = b.arith(Arith::SubI, m, &last);
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (i, c) = (g.linalg_index(0), g.linalg_index(1));
        let from = g.arith(Arith::SubI, &last, &i);
        Ok::<_, String>(vec![g.tensor_extract(&rows, &[from, c])])
    })?;
    Ok(r[0].clone())
}

/// One recurrence down the rows of an `len` x k result, every column at once: `step` gets
/// the row index and column and the `carried` values (one per column each, 0 before the
/// first row) and returns the row's value and the values carried on.
fn recurrence(
    b: &mut Block,
    element: ScalarType,
    len: &Value,
    k: &Value,
    carried: usize,
    step: impl FnOnce(&mut Block, &Value, &Value, &[Value]) -> (Value, Vec<Value>),
) -> Result<Value, String> {
    let mut outs = vec![private_output(b, element, &[len.clone(), k.clone()], 0)];
    outs.extend((0..carried).map(|c| private_output(b, element, std::slice::from_ref(k), c + 1)));
    let (row, c) = (AffineExpr::Dim(1), AffineExpr::Dim(0));
    let mut maps = vec![map(2, &[row, c.clone()])];
    maps.extend((0..carried).map(|_| map(2, std::slice::from_ref(&c))));
    let r = b.linalg_generic(&[], &outs, &maps, &[IteratorType::Parallel, IteratorType::Reduction], |g, args| {
        let (c, i) = (g.linalg_index(0), g.linalg_index(1));
        let zero = g.constant_f64(0.0, element);
        let c0 = g.constant_index(0);
        let first = g.cmpi(CmpI::Eq, &i, &c0);
        let state: Vec<Value> = args[1..].iter().map(|v| g.select(&first, &zero, v)).collect();
        let (value, next) = step(g, &i, &c, &state);
        Ok::<_, String>(std::iter::once(value).chain(next).collect())
    })?;
    Ok(r[0].clone())
}

/// The pivot row gttrf recorded for row i (0-based: i or i + 1).
fn pivot_row(g: &mut Block, ipiv: &Value, i: &Value, n: &Value) -> Value {
    let zero = g.constant_int(0, ScalarType::I32);
    let p = get(g, ipiv, i, &[], n, &zero);
    let p = g.index_cast(&p, ScalarType::Index);
    offset(g, &p, -1)
}

/// One row of a substitution with U (or U^T), whose row holds `u` = (u0 on the diagonal,
/// u1 and u2 one and two rows away): (b - u1 x1 - u2 x2) / u0 with x1, x2 the last two
/// rows' values (`s`); the row's value, and the values carried on (x, x1).
fn substituted(g: &mut Block, b: &Value, u: [&Value; 3], s: &[Value]) -> (Value, Vec<Value>) {
    let t = g.arith(Arith::MulF, u[1], &s[0]);
    let v = g.arith(Arith::SubF, b, &t);
    let t = g.arith(Arith::MulF, u[2], &s[1]);
    let v = g.arith(Arith::SubF, &v, &t);
    let x = g.arith(Arith::DivF, &v, u[0]);
    (x.clone(), vec![x, s[0].clone()])
}

/// x (n x k) with A x = rhs, or A^T x = rhs where `transposed`, from A's factors (gttrs).
fn solve_factored(b: &mut Block, f: &Factors, rhs: &Value, transposed: bool) -> Result<Value, String> {
    let element = rhs.tensor().element;
    let n = b.tensor_dim(rhs, 0);
    let k = b.tensor_dim(rhs, 1);
    let lens: Vec<Value> = [&f.dl, &f.d, &f.du, &f.du2, &f.ipiv].iter().map(|v| b.tensor_dim(v, 0)).collect();
    let (n_dl, n_d, n_du, n_du2, n_piv) = (&lens[0], &lens[1], &lens[2], &lens[3], &lens[4]);
    let (dl, d, du, du2, ipiv) = (f.dl.clone(), f.d.clone(), f.du.clone(), f.du2.clone(), f.ipiv.clone());
    let c1 = b.constant_index(1);
    let n_1 = b.arith(Arith::SubI, &n, &c1);
    if !transposed {
        // L y = P rhs, forward: row i's swap is with row i + 1 (LAPACK's dgtts2).
        let r = rhs.clone();
        let y = recurrence(b, element, &n, &k, 1, |g, i, c, s| {
            let zero = g.constant_f64(0.0, element);
            let c0 = g.constant_index(0);
            let first = g.cmpi(CmpI::Eq, i, &c0);
            let r0 = get(g, &r, &c0, &[c.clone()], &n, &zero);
            let x = g.select(&first, &r0, &s[0]);
            let next = offset(g, i, 1);
            let b_next = get(g, &r, &next, &[c.clone()], &n, &zero);
            let l = get(g, &dl, i, &[], n_dl, &zero);
            let p = pivot_row(g, &ipiv, i, n_piv);
            let swap = g.cmpi(CmpI::Ne, &p, i);
            let prod = g.arith(Arith::MulF, &l, &x);
            let carry_keep = g.arith(Arith::SubF, &b_next, &prod);
            let prod = g.arith(Arith::MulF, &l, &b_next);
            let carry_swap = g.arith(Arith::SubF, &x, &prod);
            let value = g.select(&swap, &b_next, &x);
            (value, vec![g.select(&swap, &carry_swap, &carry_keep)])
        })?;
        // U x = y, backward: row i = n - 1 - j.
        let reversed = recurrence(b, element, &n, &k, 2, |g, j, c, s| {
            let zero = g.constant_f64(0.0, element);
            let i = g.arith(Arith::SubI, &n_1, j);
            let y_i = get(g, &y, &i, &[c.clone()], &n, &zero);
            let u0 = get(g, &d, &i, &[], n_d, &zero);
            let u1 = get(g, &du, &i, &[], n_du, &zero);
            let u2 = get(g, &du2, &i, &[], n_du2, &zero);
            substituted(g, &y_i, [&u0, &u1, &u2], s)
        })?;
        return flipped(b, &reversed, &n);
    }
    // U^T z = rhs, forward.
    let r = rhs.clone();
    let z = recurrence(b, element, &n, &k, 2, |g, i, c, s| {
        let zero = g.constant_f64(0.0, element);
        let b_i = get(g, &r, i, &[c.clone()], &n, &zero);
        let (i1, i2) = (offset(g, i, -1), offset(g, i, -2));
        let u0 = get(g, &d, i, &[], n_d, &zero);
        let u1 = get(g, &du, &i1, &[], n_du, &zero);
        let u2 = get(g, &du2, &i2, &[], n_du2, &zero);
        substituted(g, &b_i, [&u0, &u1, &u2], s)
    })?;
    // L^T P^T x = z, backward over i = n - 2 .. 0: step i settles row i + 1 (a swap may
    // still move it until then). Iteration j = 0 .. n for i = n - 1 - j: j = 0 starts from
    // z's last row, j = n gives row 0; result row j is row n - j.
    let c1 = b.constant_index(1);
    let steps = b.arith(Arith::AddI, &n, &c1);
    let reversed = recurrence(b, element, &steps, &k, 1, |g, j, c, s| {
        let zero = g.constant_f64(0.0, element);
        let c0 = g.constant_index(0);
        let i = g.arith(Arith::SubI, &n_1, j);
        let start = g.cmpi(CmpI::Eq, j, &c0);
        let done = g.cmpi(CmpI::Slt, &i, &c0);
        let z_last = get(g, &z, &n_1, &[c.clone()], &n, &zero);
        let cur = g.select(&start, &z_last, &s[0]);
        let z_i = get(g, &z, &i, &[c.clone()], &n, &zero);
        let l = get(g, &dl, &i, &[], n_dl, &zero);
        let p = pivot_row(g, &ipiv, &i, n_piv);
        let swap = g.cmpi(CmpI::Ne, &p, &i);
        let prod = g.arith(Arith::MulF, &l, &cur);
        let temp = g.arith(Arith::SubF, &z_i, &prod);
        let settled = g.select(&swap, &temp, &cur);
        let carry = g.select(&swap, &cur, &temp);
        let settled = g.select(&done, &cur, &settled);
        let carry = g.select(&done, &cur, &carry);
        let carry = g.select(&start, &z_last, &carry);
        (settled, vec![carry])
    })?;
    // Row p of x is row n - p of `reversed` (its first row is no row of x).
    let tail = b.tensor_extract_slice(&reversed, &[IndexArg::Const(1), IndexArg::Const(0)], &[IndexArg::Dyn(n.clone()), IndexArg::Dyn(k)]);
    flipped(b, &tail, &n)
}

/// Whether an element of the vector `v` is exactly 0 (a rank-0 i8, 1 where so).
fn any_zero(b: &mut Block, v: &Value) -> Result<Value, String> {
    let none = b.constant_int(0, ScalarType::I8);
    let flag = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let init = b.linalg_fill(&none, &flag);
    let r = b.linalg_generic(std::slice::from_ref(v), &[init], &[AffineMap::identity(1), map(1, &[])], &[IteratorType::Reduction], |g, args| {
        let zero = g.constant_f64(0.0, args[0].scalar());
        let is_zero = g.cmpf(CmpF::Oeq, &args[0], &zero);
        let flag = g.cast(Cast::ExtUI, &is_zero, ScalarType::I8);
        Ok::<_, String>(vec![g.arith(Arith::OrI, &flag, &args[1])])
    })?;
    Ok(r[0].clone())
}

/// A vector input of the factorization or solve, in `element` (ValueError where not a vector).
fn vector(cx: &mut Context, b: &mut Block, node: &Node, k: usize, dtype: DType, what: &str) -> Result<Value, String> {
    if cx.graph.ty(node.inputs[k]).ndim() != 1 {
        return Err(format!("{what} with an input that is not a vector"));
    }
    operand(cx, b, node.inputs[k], dtype)
}

/// `LUFactorTridiagonal`: gttrf's (dl, d, du, du2, ipiv).
pub fn lu_factor_tridiagonal(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let out = node.outputs[0];
    let dtype = cx.graph.ty(out).dtype;
    let element = working_type(cx.graph.ty(out), "LUFactorTridiagonal")?;
    if cx.graph.ty(node.outputs[4]).dtype != DType::Int32 {
        return Err("LUFactorTridiagonal with pivots that are not int32".into());
    }
    let dl = vector(cx, b, node, 0, dtype, "LUFactorTridiagonal")?;
    let d = vector(cx, b, node, 1, dtype, "LUFactorTridiagonal")?;
    let du = vector(cx, b, node, 2, dtype, "LUFactorTridiagonal")?;
    let (d_dl, d_d, d_du) = (cx.dims(node.inputs[0]), cx.dims(node.inputs[1]), cx.dims(node.inputs[2]));
    cx.require_equal(d_dl[0], d_du[0], "LUFactorTridiagonal (the sub- and superdiagonal differ in length)");
    let f = factor(b, &dl, &d, &du, element)?;
    // The subdiagonal must be one shorter than the diagonal (scipy's gttrf refuses other
    // lengths): checked at run time, the factors' lengths following the diagonal's.
    let n = b.tensor_dim(&d, 0);
    let m = b.tensor_dim(&dl, 0);
    let one = b.constant_index(1);
    let m1 = b.arith(Arith::AddI, &m, &one);
    let zero = b.constant_index(0);
    let empty = b.cmpi(CmpI::Eq, &n, &zero);
    let agree = b.cmpi(CmpI::Eq, &m1, &n);
    let fine = b.arith(Arith::OrI, &agree, &empty);
    let bad = b.constant_int(1, ScalarType::I1);
    let bad = b.arith(Arith::XOrI, &fine, &bad);
    let flag = super::scan::flag_tensor(b, &bad);
    cx.add_check(flag, RuntimeCheck { kind: ErrorKind::Value, message: "LUFactorTridiagonal: the subdiagonal must be one shorter than the diagonal".into() });
    // du2's length, max(n - 2, 0) (an expression Blockwise can compute before its loop).
    let short = IntExpr::Bin(IntOp::Sub, Box::new(IntExpr::Dim(d_d[0])), Box::new(IntExpr::Const(2)));
    let du2_dim = cx.derived(DimExpr::Value(IntExpr::Bin(IntOp::Max, Box::new(short), Box::new(IntExpr::Const(0)))));
    define(cx, b, node.outputs[0], &f.dl, d_dl.clone());
    define(cx, b, node.outputs[1], &f.d, d_d.clone());
    define(cx, b, node.outputs[2], &f.du, d_du);
    define(cx, b, node.outputs[3], &f.du2, vec![du2_dim]);
    define(cx, b, node.outputs[4], &f.ipiv, d_d);
    Ok(())
}

/// `SolveLUFactorTridiagonal`: gttrs from gttrf's factors (`transposed`: A^T x = b).
pub fn solve_lu_factor_tridiagonal(cx: &mut Context, b: &mut Block, node: &Node, b_ndim: usize, transposed: bool) -> Result<(), String> {
    let out = node.outputs[0];
    let dtype = cx.graph.ty(out).dtype;
    working_type(cx.graph.ty(out), "SolveLUFactorTridiagonal")?;
    let b_var = node.inputs[5];
    if cx.graph.ty(b_var).ndim() != b_ndim || !(1..=2).contains(&b_ndim) {
        return Err(format!("SolveLUFactorTridiagonal of a right-hand side of rank {} (b_ndim {b_ndim})", cx.graph.ty(b_var).ndim()));
    }
    let factors: Vec<Value> = (0..4).map(|k| vector(cx, b, node, k, dtype, "SolveLUFactorTridiagonal")).collect::<Result<_, _>>()?;
    if cx.graph.ty(node.inputs[4]).ndim() != 1 {
        return Err("SolveLUFactorTridiagonal with pivots that are not a vector".into());
    }
    let ipiv = operand(cx, b, node.inputs[4], DType::Int32)?;
    let (d_d, d_b) = (cx.dims(node.inputs[1]), cx.dims(b_var));
    cx.require_equal(d_d[0], d_b[0], "SolveLUFactorTridiagonal (the shapes of the factors and b are incompatible)");
    let f = Factors { dl: factors[0].clone(), d: factors[1].clone(), du: factors[2].clone(), du2: factors[3].clone(), ipiv };
    let rhs = operand(cx, b, b_var, dtype)?;
    let rhs = as_columns(b, &rhs, b_ndim);
    let x = solve_factored(b, &f, &rhs, transposed)?;
    define_solution(cx, b, out, &x, b_ndim, d_b);
    Ok(())
}

/// `Solve(assume_a="tridiagonal")` of `a` (n x n; only its three diagonals are read).
pub fn solve_tridiagonal(b: &mut Block, a: &Value, rhs: &Value) -> Result<(Value, Value), String> {
    let element = a.tensor().element;
    let n = b.tensor_dim(a, 0);
    let diagonal = |b: &mut Block, offset: i64| -> Result<Value, String> {
        // Element i of the diagonal `offset` (-1, 0, 1): a[i - min(offset, 0), i + max(offset, 0)].
        let c0 = b.constant_index(0);
        let short = b.constant_index(offset.abs());
        let len = b.arith(Arith::SubI, &n, &short);
        let len = b.arith(Arith::MaxSI, &len, &c0);
        let init = b.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(&len));
        let a = a.clone();
        let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
            let i = g.linalg_index(0);
            let row = offset_index(g, &i, (-offset).max(0));
            let col = offset_index(g, &i, offset.max(0));
            Ok::<_, String>(vec![g.tensor_extract(&a, &[row, col])])
        })?;
        Ok(r[0].clone())
    };
    let dl = diagonal(b, -1)?;
    let d = diagonal(b, 0)?;
    let du = diagonal(b, 1)?;
    let f = factor(b, &dl, &d, &du, element)?;
    let x = solve_factored(b, &f, rhs, false)?;
    let singular = any_zero(b, &f.d)?;
    Ok((x, singular))
}

fn offset_index(g: &mut Block, i: &Value, by: i64) -> Value {
    if by == 0 {
        return i.clone();
    }
    offset(g, i, by)
}

/// `v` as an n x k matrix: a vector right-hand side (b_ndim 1) as one column.
fn as_columns(b: &mut Block, v: &Value, b_ndim: usize) -> Value {
    if b_ndim == 2 {
        return v.clone();
    }
    let n = b.tensor_dim(v, 0);
    b.tensor_expand(v, &[vec![0, 1]], TensorType::new(vec![None, Some(1)], v.tensor().element), &[IndexArg::Dyn(n), IndexArg::Const(1)])
}

fn define_solution(cx: &mut Context, b: &mut Block, out: crate::ir::VarId, x: &Value, b_ndim: usize, dims: Vec<super::shapes::Dim>) {
    let x = if b_ndim == 1 { b.tensor_collapse(x, &[vec![0, 1]]) } else { x.clone() };
    define(cx, b, out, &x, dims);
}
