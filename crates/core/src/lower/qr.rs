//! `QR` (`pytensor.tensor.linalg.qr`): the factorization LAPACK's geqrf and orgqr give
//! PyTensor's `perform`, by Householder reflections (Golub & Van Loan 5.2), with LAPACK's
//! conventions (dgeqr2, dlarfg, dorg2r) so that the signs agree with scipy's: reflector j
//! maps column j's part from the diagonal down, (alpha, x), to beta e_1 with
//! beta = -sign(alpha) * |(alpha, x)| (R's diagonal), tau = (beta - alpha) / beta and
//! v = (1, x / (alpha - beta)); where x is zero, tau = 0 and the column is left as it is
//! (R's diagonal keeps alpha's sign). Q is accumulated backward from the reflectors.
//!
//! As in linalg.rs: each is an `scf.for` in the host program over the reflectors, each
//! step a few parallel dispatches on one loop-carried tensor behind `Context::barrier`.
//! The working tensor is w = [a | tau] (m x (n + 1)), as geqrf stores its result: R on and
//! above the diagonal, the reflectors' v below it (their leading 1 implied), and tau_j at
//! row j of the last column. The norm of x is scaled by its largest element (as dnrm2
//! does) so that neither huge nor tiny columns overflow or underflow; dlarfg's rescaling
//! of columns whose norm is below the smallest normal number is not done.

use super::linalg::{define, identity, map, operand, transposed, working_type, zeros};
use super::shapes::DimExpr;
use super::{dense_kernels, scalar, Context};
use crate::ir::{Node, QrMode};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, CmpF, CmpI, IndexArg, IteratorType, MathUnary, ScalarType, TensorType, Value};

/// `QR(mode, pivoting)`: Q and R, R alone, or geqrf's raw (H, tau, R); see the module
/// comment. With `pivoting`, those of a P (geqp3's column pivoting, the CPU's kernel
/// `dense_kernels::qr_pivoted_reflectors`) and P's column indices as the last output.
pub fn qr(cx: &mut Context, b: &mut Block, node: &Node, mode: QrMode, pivoting: bool) -> Result<(), String> {
    if pivoting && !scalar::has_sequential_kernels() {
        return Err("QR with pivoting=True (geqp3's column pivoting) is lowered for the CPU only".into());
    }
    let x_var = node.inputs[0];
    if cx.graph.ty(x_var).ndim() != 2 {
        return Err("QR of a tensor that is not a matrix".into());
    }
    let dtype = cx.graph.ty(node.outputs[0]).dtype;
    let element = working_type(cx.graph.ty(node.outputs[0]), "QR")?;
    let a = operand(cx, b, x_var, dtype)?;
    let (m, n) = (b.tensor_dim(&a, 0), b.tensor_dim(&a, 1));
    let k = b.arith(Arith::MinUI, &m, &n);
    let d = cx.dims(x_var);
    let dk = cx.derived(DimExpr::Min(vec![d[0], d[1]]));
    let zero = IndexArg::Const(0);
    let w = if pivoting {
        let at = transposed(b, &a)?;
        let (wt, bits) = dense_kernels::qr_pivoted_reflectors(cx, b, &at, element);
        let p = column_indices(b, &bits, &n)?;
        let last = *node.outputs.last().ok_or("QR without outputs")?;
        define(cx, b, last, &p, vec![d[1]]);
        transposed(b, &wt)?
    } else {
        reflectors(cx, b, &a, element)?
    };
    let (r_rows, r_dim) = match mode {
        QrMode::Economic | QrMode::Raw => (k.clone(), dk),
        QrMode::Full | QrMode::R => (m.clone(), d[0]),
    };
    let r = upper(b, &w, &r_rows, &n, element)?;
    match mode {
        QrMode::R => define(cx, b, node.outputs[0], &r, vec![r_dim, d[1]]),
        QrMode::Raw => {
            let h = b.tensor_extract_slice(&w, &[zero.clone(), zero.clone()], &[IndexArg::Dyn(m), IndexArg::Dyn(n.clone())]);
            let tau = b.tensor_extract_slice(&w, &[zero, IndexArg::Dyn(n)], &[IndexArg::Dyn(k), IndexArg::Const(1)]);
            let tau = b.tensor_collapse(&tau, &[vec![0, 1]]);
            define(cx, b, node.outputs[0], &h, d.clone());
            define(cx, b, node.outputs[1], &tau, vec![dk]);
            define(cx, b, node.outputs[2], &r, vec![r_dim, d[1]]);
        }
        QrMode::Full | QrMode::Economic => {
            let (columns, q_dim) = if mode == QrMode::Full { (m.clone(), d[0]) } else { (k.clone(), dk) };
            let q = accumulate(cx, b, &w, &m, &n, &k, &columns)?;
            define(cx, b, node.outputs[0], &q, vec![d[0], q_dim]);
            define(cx, b, node.outputs[1], &r, vec![r_dim, d[1]]);
        }
    }
    Ok(())
}

/// geqrf's w = [a | tau] (m x (n + 1)) of `a` (m x n) after its min(m, n) reflectors (see
/// the module comment); Q from it by `accumulate`. SVD's U completes its basis with them.
pub(super) fn reflectors(cx: &mut Context, b: &mut Block, a: &Value, element: ScalarType) -> Result<Value, String> {
    if scalar::has_sequential_kernels() {
        let at = transposed(b, a)?;
        let wt = dense_kernels::qr_reflectors(cx, b, &at, element);
        return transposed(b, &wt);
    }
    let (m, n) = (b.tensor_dim(a, 0), b.tensor_dim(a, 1));
    let k = b.arith(Arith::MinUI, &m, &n);
    let one = b.constant_index(1);
    let width = b.arith(Arith::AddI, &n, &one);
    let zero = IndexArg::Const(0);
    let w = zeros(b, element, &[m.clone(), width]);
    let w = b.tensor_insert_slice(a, &w, &[zero.clone(), zero]);
    let w = cx.loop_start(b, &w)?;
    let (first, step) = (b.constant_index(0), b.constant_index(1));
    Ok(b.scf_for(&first, &k, &step, std::slice::from_ref(&w), |body, j, args| {
        Ok::<_, String>(vec![reflect(body, &args[0], j, &m, &n)?])
    })?[0]
        .clone())
}

/// P's column indices (int32, as PyTensor's QR gives geqp3's jpvt) from their bits in the
/// pivoted kernel's floats (`dense_kernels::index_of_bits`).
fn column_indices(b: &mut Block, bits: &Value, n: &Value) -> Result<Value, String> {
    let init = b.tensor_empty(TensorType::new(vec![None], ScalarType::I32), std::slice::from_ref(n));
    Ok(b.linalg_generic(std::slice::from_ref(bits), &[init], &[AffineMap::identity(1), AffineMap::identity(1)], &[IteratorType::Parallel], |g, args| {
        Ok::<_, String>(vec![dense_kernels::index_of_bits(g, &args[0])])
    })?[0]
        .clone())
}

/// A rank-0 tensor holding `v`.
fn scalar(b: &mut Block, element: ScalarType, v: f64) -> Value {
    let e = b.tensor_empty(TensorType::new(vec![], element), &[]);
    let v = b.constant_f64(v, element);
    b.linalg_fill(&v, &e)
}

/// The reduction over the rows r > j of `column` (m x 1) into a rank-0 tensor from 0:
/// `step(acc, x_r, extra)`, `extra` the rank-0 inputs.
fn below_diagonal(b: &mut Block, column: &Value, j: &Value, extra: &[Value], step: impl Fn(&mut Block, &Value, &Value, &[Value]) -> Value) -> Result<Value, String> {
    let element = column.tensor().element;
    let init = scalar(b, element, 0.0);
    let mut ins = vec![column.clone()];
    ins.extend(extra.iter().cloned());
    let mut maps = vec![map(1, &[AffineExpr::Dim(0), AffineExpr::Constant(0)])];
    maps.extend(extra.iter().map(|_| map(1, &[])));
    maps.push(map(1, &[]));
    let j = j.clone();
    let count = extra.len();
    let r = b.linalg_generic(&ins, &[init], &maps, &[IteratorType::Reduction], |g, args| {
        let r = g.linalg_index(0);
        let below = g.cmpi(CmpI::Ugt, &r, &j);
        let next = step(g, &args[count + 1], &args[0], &args[1..=count]);
        Ok::<_, String>(vec![g.select(&below, &next, &args[count + 1])])
    })?;
    Ok(r[0].clone())
}

/// Reflector j of w (dgeqr2's step j): dlarfg's (beta, tau, v) from column j, H_j applied
/// to the columns right of j (`apply_reflector`), and column j and tau_j stored as geqrf
/// stores them.
fn reflect(b: &mut Block, w: &Value, j: &Value, m: &Value, n: &Value) -> Result<Value, String> {
    let element = w.tensor().element;
    let (dj, zero) = (IndexArg::Dyn(j.clone()), IndexArg::Const(0));
    let column = b.tensor_extract_slice(w, &[zero.clone(), dj.clone()], &[IndexArg::Dyn(m.clone()), IndexArg::Const(1)]);
    // The parts of |x| (`householder`; NaN propagates).
    let big = below_diagonal(b, &column, j, &[], |g, acc, x, _| {
        let size = g.math(MathUnary::AbsF, x);
        g.arith(Arith::MaximumF, acc, &size)
    })?;
    // The squares rounded before they are summed (not fused into FMAs; see
    // `apply_reflector`): the norm then agrees with dnrm2's to the last bit.
    let init = b.tensor_empty(TensorType::new(vec![None, Some(1)], element), std::slice::from_ref(m));
    let squares = b.linalg_generic(std::slice::from_ref(&column), &[init], &[AffineMap::identity(2), AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, args| {
        Ok::<_, String>(vec![g.arith(Arith::MulF, &args[0], &args[0])])
    })?[0]
        .clone();
    let squares = b.optimization_barrier(&squares, std::slice::from_ref(m));
    let plain = below_diagonal(b, &squares, j, &[], |g, acc, square, _| g.arith(Arith::AddF, acc, square))?;
    let scaled = below_diagonal(b, &column, j, std::slice::from_ref(&big), |g, acc, x, extra| {
        let zero = g.constant_f64(0.0, element);
        let is_zero = g.cmpf(CmpF::Oeq, &extra[0], &zero);
        let scaled = g.arith(Arith::DivF, x, &extra[0]);
        let scaled = g.select(&is_zero, &zero, &scaled);
        let square = g.arith(Arith::MulF, &scaled, &scaled);
        g.arith(Arith::AddF, acc, &square)
    })?;
    // alpha through a constant map (IREE's vectorizer mistypes a tensor.extract at a
    // loop-invariant index, linalg.rs).
    let alpha = b.tensor_extract_slice(w, &[dj.clone(), dj.clone()], &[IndexArg::Const(1), IndexArg::Const(1)]);
    // One rank-0 kernel per value (a kernel of three lanes read through constant maps was
    // read wrong by IREE 3.13: beta and tau as 0).
    let mut parts = Vec::new();
    for part in 0..4 {
        let e = b.tensor_empty(TensorType::new(vec![], element), &[]);
        let maps = [map(0, &[AffineExpr::Constant(0), AffineExpr::Constant(0)]), map(0, &[]), map(0, &[]), map(0, &[]), map(0, &[])];
        let ins = [alpha.clone(), big.clone(), plain.clone(), scaled.clone()];
        let r = b.linalg_generic(&ins, &[e], &maps, &[], |g, args| Ok::<_, String>(vec![householder(g, &args[..4], element)[part].clone()]))?;
        parts.push(r[0].clone());
    }
    let (beta, tau, scale, lift) = (parts[0].clone(), parts[1].clone(), parts[2].clone(), parts[3].clone());
    // v below the diagonal: x scaled by the reciprocal, as dlarfg does.
    let maps = [map(2, &[AffineExpr::Dim(0), AffineExpr::Constant(0)]), map(2, &[]), map(2, &[]), AffineMap::identity(2)];
    let init = b.tensor_empty(TensorType::new(vec![None, Some(1)], element), std::slice::from_ref(m));
    let v = b.linalg_generic(&[column, lift, scale], &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        let lifted = g.arith(Arith::MulF, &args[0], &args[1]);
        Ok::<_, String>(vec![g.arith(Arith::MulF, &lifted, &args[2])])
    })?[0]
        .clone();
    let next = apply_reflector(b, w, &v, &tau, j, n)?;
    // Column j as geqrf stores it: beta on the diagonal, v below; tau_j in the last column.
    let init = b.tensor_empty(TensorType::new(vec![None, Some(1)], element), std::slice::from_ref(m));
    let old = b.tensor_extract_slice(w, &[zero.clone(), dj.clone()], &[IndexArg::Dyn(m.clone()), IndexArg::Const(1)]);
    let maps = [AffineMap::identity(2), AffineMap::identity(2), map(2, &[]), AffineMap::identity(2)];
    let jj = j.clone();
    let own = b.linalg_generic(&[old, v, beta], &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        let r = g.linalg_index(0);
        let (at, below) = (g.cmpi(CmpI::Eq, &r, &jj), g.cmpi(CmpI::Ugt, &r, &jj));
        let value = g.select(&below, &args[1], &args[0]);
        Ok::<_, String>(vec![g.select(&at, &args[2], &value)])
    })?[0]
        .clone();
    let next = b.tensor_insert_slice(&own, &next, &[zero, dj.clone()]);
    let tau = b.tensor_expand(&tau, &[], TensorType::new(vec![Some(1), Some(1)], element), &[IndexArg::Const(1), IndexArg::Const(1)]);
    Ok(b.tensor_insert_slice(&tau, &next, &[dj, IndexArg::Dyn(n.clone())]))
}

/// `c` with the reflector H = I - tau (1, v) (1, v)^T applied to its rows from i down, in
/// its columns i < col < end (within `extent`), as LAPACK 3.12's dlarf1f does: w = c_i + v^T c_below (the
/// part below first), c_i - tau w and c_below - v (tau w); nothing where tau = 0. v (a
/// column, read below row i) and tau (rank 0) are tensors. The products (of w's sums and
/// of the update) go through memory (an optimization barrier) before they are added:
/// fused into FMAs (as IREE compiles a multiply feeding an add) they round otherwise than
/// OpenBLAS's dgemv and dger, and the exact zeros LAPACK leaves in a rank-deficient
/// matrix become noise that the next reflectors act on (Q's later columns all differ).
fn apply_reflector(b: &mut Block, c: &Value, v: &Value, tau: &Value, i: &Value, end: &Value) -> Result<Value, String> {
    let element = c.tensor().element;
    let (m, width) = (b.tensor_dim(c, 0), b.tensor_dim(c, 1));
    // Only rows i.. and columns i + 1.. can change: the kernels run over that block, which
    // is written back over c in place; `extent` reads the same block (measured, QR's R in
    // process: n = 200 80 -> 27 ms, n = 50 2.6 -> 1.8 ms).
    // Indices below are the block's; (i + r, from + col) in c.
    let one = b.constant_index(1);
    let after = b.arith(Arith::AddI, i, &one);
    let from = b.arith(Arith::MinUI, &after, &width);
    let rows = b.arith(Arith::SubI, &m, i);
    let cols = b.arith(Arith::SubI, &width, &from);
    let (di, dfrom, drows, dcols) = (IndexArg::Dyn(i.clone()), IndexArg::Dyn(from.clone()), IndexArg::Dyn(rows.clone()), IndexArg::Dyn(cols.clone()));
    let block = b.tensor_extract_slice(c, &[di.clone(), dfrom.clone()], &[drows.clone(), dcols.clone()]);
    let v = b.tensor_extract_slice(v, &[di.clone(), IndexArg::Const(0)], &[drows, IndexArg::Const(1)]);
    let (last_row, last_column) = extent(b, &block, &v, i, &from, end)?;
    // v_r c_rc, rounded before they are summed (see above: dgemv's products).
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), cols.clone()]);
    let maps = [AffineMap::identity(2), map(2, &[AffineExpr::Dim(0), AffineExpr::Constant(0)]), AffineMap::identity(2)];
    let terms = b.linalg_generic(&[block.clone(), v.clone()], &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        Ok::<_, String>(vec![g.arith(Arith::MulF, &args[1], &args[0])])
    })?[0]
        .clone();
    let terms = b.optimization_barrier(&terms, &[rows.clone(), cols.clone()]);
    let init = zeros(b, element, std::slice::from_ref(&cols));
    let (c_, r_) = (AffineExpr::Dim(0), AffineExpr::Dim(1));
    let maps = [map(2, &[r_, c_.clone()]), map(2, &[]), map(2, &[c_])];
    let ii = i.clone();
    let below = b.linalg_generic(&[terms, last_row.clone()], &[init], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |g, args| {
        let r = g.linalg_index(1);
        let sum = g.arith(Arith::AddF, &args[2], &args[0]);
        let zero = g.constant_index(0);
        let under = g.cmpi(CmpI::Ugt, &r, &zero);
        let last = g.index_cast(&args[1], ScalarType::Index);
        let row = g.arith(Arith::AddI, &r, &ii);
        let inside = g.cmpi(CmpI::Ule, &row, &last);
        let used = g.arith(Arith::AndI, &under, &inside);
        Ok::<_, String>(vec![g.select(&used, &sum, &args[2])])
    })?[0]
        .clone();
    let row = b.tensor_extract_slice(&block, &[IndexArg::Const(0), IndexArg::Const(0)], &[IndexArg::Const(1), dcols]);
    let (r_, c_) = (AffineExpr::Dim(0), AffineExpr::Dim(1));
    let maps = [
        map(2, &[r_, AffineExpr::Constant(0)]),
        map(2, &[AffineExpr::Constant(0), c_.clone()]),
        map(2, &[c_]),
        map(2, &[]),
        AffineMap::identity(2),
    ];
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), cols.clone()]);
    let products = b.linalg_generic(&[v.clone(), row, below, tau.clone()], &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        let (v, c_i, below, tau) = (&args[0], &args[1], &args[2], &args[3]);
        let r = g.linalg_index(0);
        let w = g.arith(Arith::AddF, c_i, below);
        let minus_tau = g.negf(tau);
        let t = g.arith(Arith::MulF, &minus_tau, &w);
        let vt = g.arith(Arith::MulF, v, &t);
        let zero = g.constant_index(0);
        let at = g.cmpi(CmpI::Eq, &r, &zero);
        Ok::<_, String>(vec![g.select(&at, &t, &vt)])
    })?[0]
        .clone();
    let sizes = [rows.clone(), cols.clone()];
    let products = b.optimization_barrier(&products, &sizes);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows, cols]);
    let maps = [AffineMap::identity(2), AffineMap::identity(2), map(2, &[]), map(2, &[]), map(2, &[]), AffineMap::identity(2)];
    let (ii, ff) = (i.clone(), from.clone());
    let r = b.linalg_generic(&[block, products, tau.clone(), last_row, last_column], &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        let (a, p, tau) = (&args[0], &args[1], &args[2]);
        let r = g.linalg_index(0);
        let r = g.arith(Arith::AddI, &r, &ii);
        let col = g.linalg_index(1);
        let col = g.arith(Arith::AddI, &col, &ff);
        let updated = g.arith(Arith::AddF, a, p);
        let zero = g.constant_f64(0.0, element);
        let applies = g.cmpf(CmpF::Une, tau, &zero);
        let (last_row, end) = (g.index_cast(&args[3], ScalarType::Index), g.index_cast(&args[4], ScalarType::Index));
        let to_last = g.cmpi(CmpI::Ule, &r, &last_row);
        let inside = g.cmpi(CmpI::Ult, &col, &end);
        let active = g.arith(Arith::AndI, &inside, &to_last);
        let active = g.arith(Arith::AndI, &active, &applies);
        Ok::<_, String>(vec![g.select(&active, &updated, a)])
    })?;
    Ok(b.tensor_insert_slice(&r[0], c, &[di, dfrom]))
}

/// The part of `c` a reflector acts on, as dlarf1f finds it (iladlr, iladlc): the last row
/// r > i where v_r != 0 (i where none), and one past the last column in (i, end) with an
/// element != 0 (NaN counts) in rows i to that row (i + 1 where none), both rank-0 i64.
/// Beyond them LAPACK leaves `c` as it is (its zeros' signs, and where tau is NaN). Read
/// from `block` (c's rows i.. and columns `from` = i + 1.., as `apply_reflector` cuts it)
/// and v's rows i..; the results are c's indices.
fn extent(b: &mut Block, block: &Value, v: &Value, i: &Value, from: &Value, end: &Value) -> Result<(Value, Value), String> {
    let element = block.tensor().element;
    let index_scalar = |b: &mut Block, at: &Value| {
        let e = b.tensor_empty(TensorType::new(vec![], ScalarType::I64), &[]);
        let at = b.index_cast(at, ScalarType::I64);
        b.linalg_fill(&at, &e)
    };
    let init = index_scalar(b, i);
    let ii = i.clone();
    let maps = [map(1, &[AffineExpr::Dim(0), AffineExpr::Constant(0)]), map(1, &[])];
    let last_row = b.linalg_generic(std::slice::from_ref(v), &[init], &maps, &[IteratorType::Reduction], |g, args| {
        let r = g.linalg_index(0);
        let zero = g.constant_f64(0.0, element);
        let first = g.constant_index(0);
        let (under, nonzero) = (g.cmpi(CmpI::Ugt, &r, &first), g.cmpf(CmpF::Une, &args[0], &zero));
        let counts = g.arith(Arith::AndI, &under, &nonzero);
        let r = g.arith(Arith::AddI, &r, &ii);
        let r = g.index_cast(&r, ScalarType::I64);
        let later = g.arith(Arith::MaxSI, &args[1], &r);
        Ok::<_, String>(vec![g.select(&counts, &later, &args[1])])
    })?[0]
        .clone();
    let one = b.constant_index(1);
    let next = b.arith(Arith::AddI, i, &one);
    let init = index_scalar(b, &next);
    let (ii, ff, end) = (i.clone(), from.clone(), end.clone());
    let maps = [AffineMap::identity(2), map(2, &[]), map(2, &[])];
    let last_column = b.linalg_generic(&[block.clone(), last_row.clone()], &[init], &maps, &[IteratorType::Reduction; 2], |g, args| {
        let (r, col) = (g.linalg_index(0), g.linalg_index(1));
        let (r, col) = (g.arith(Arith::AddI, &r, &ii), g.arith(Arith::AddI, &col, &ff));
        let zero = g.constant_f64(0.0, element);
        let last = g.index_cast(&args[1], ScalarType::Index);
        let to_last = g.cmpi(CmpI::Ule, &r, &last);
        let inside = g.cmpi(CmpI::Ult, &col, &end);
        let nonzero = g.cmpf(CmpF::Une, &args[0], &zero);
        let counts = g.arith(Arith::AndI, &to_last, &inside);
        let counts = g.arith(Arith::AndI, &counts, &nonzero);
        let one = g.constant_index(1);
        let past = g.arith(Arith::AddI, &col, &one);
        let past = g.index_cast(&past, ScalarType::I64);
        let later = g.arith(Arith::MaxSI, &args[2], &past);
        Ok::<_, String>(vec![g.select(&counts, &later, &args[2])])
    })?[0]
        .clone();
    Ok((last_row, last_column))
}

/// dlarfg's [beta, tau, scale, lift] from [alpha, max |x_r|, sum x_r^2, sum (x_r /
/// max)^2], v = x lift scale (lift scale = 1 / (alpha - beta)): |x| from the plain sum of
/// squares (as OpenBLAS's x86-64 dnrm2 sums them, in extended precision) where no square
/// can overflow or underflow, else from the scaled one; x = 0 gives H = I (tau = 0, the
/// column kept). Where alpha - beta is tiny (a subnormal column), its reciprocal would
/// overflow (NaN in v and R): lift is then 2^LIFT and scale 1 / ((alpha - beta) 2^LIFT),
/// else lift 1 (dlarfg rescales by 1 / safmin instead).
pub(super) fn householder(g: &mut Block, args: &[Value], element: ScalarType) -> [Value; 4] {
    let alpha = &args[0];
    let (zero, one) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element));
    let x_norm = norm_of_parts(g, &args[1..4], element);
    let alpha_size = g.math(MathUnary::AbsF, alpha);
    let norm = lapy2(g, &alpha_size, &x_norm, element);
    let signed = g.copysign(&norm, alpha);
    let beta = g.negf(&signed);
    let gap = g.arith(Arith::SubF, &beta, alpha);
    let tau = g.arith(Arith::DivF, &gap, &beta);
    let back = g.arith(Arith::SubF, alpha, &beta);
    let (tiny, lift) = if element == ScalarType::F32 { (2f64.powi(-64), 2f64.powi(50)) } else { (2f64.powi(-600), 2f64.powi(200)) };
    let (tiny, lift) = (g.constant_f64(tiny, element), g.constant_f64(lift, element));
    let back_size = g.math(MathUnary::AbsF, &back);
    let small = g.cmpf(CmpF::Olt, &back_size, &tiny);
    let lift = g.select(&small, &lift, &one);
    let lifted = g.arith(Arith::MulF, &back, &lift);
    let scale = g.arith(Arith::DivF, &one, &lifted);
    let trivial = g.cmpf(CmpF::Oeq, &x_norm, &zero);
    [g.select(&trivial, alpha, &beta), g.select(&trivial, &zero, &tau), g.select(&trivial, &one, &scale), g.select(&trivial, &one, &lift)]
}

/// |x| from the parts of x (`big` = max |x_r|, `plain` = sum x_r^2, `scaled` = sum
/// (x_r / big)^2): the plain sum's root where no square can overflow or underflow, else
/// big times the scaled sum's; inf where an x_r is (and none is NaN), as dnrm2 gives.
pub(super) fn norm_of_parts(g: &mut Block, parts: &[Value], element: ScalarType) -> Value {
    let (big, plain, scaled) = (&parts[0], &parts[1], &parts[2]);
    // The plain sum is safe for |x_r| in [2^-e, 2^e], e a quarter of the exponent range.
    let safe = if element == ScalarType::F32 { 2f64.powi(30) } else { 2f64.powi(250) };
    let (high, low) = (g.constant_f64(safe, element), g.constant_f64(1.0 / safe, element));
    let (below_high, above_low) = (g.cmpf(CmpF::Olt, big, &high), g.cmpf(CmpF::Ogt, big, &low));
    let in_range = g.arith(Arith::AndI, &below_high, &above_low);
    let plain_norm = g.math(MathUnary::Sqrt, plain);
    let root = g.math(MathUnary::Sqrt, scaled);
    let scaled_norm = g.arith(Arith::MulF, big, &root);
    let x_norm = g.select(&in_range, &plain_norm, &scaled_norm);
    let inf = g.constant_f64(f64::INFINITY, element);
    let infinite = g.cmpf(CmpF::Oeq, big, &inf);
    g.select(&infinite, &inf, &x_norm)
}

/// dlapy2: sqrt(x^2 + y^2) of sizes x, y >= 0 without overflow or underflow on the way,
/// the larger times sqrt(1 + (smaller / larger)^2) (the larger itself where the smaller is
/// 0 or the larger infinite).
pub(super) fn lapy2(g: &mut Block, x: &Value, y: &Value, element: ScalarType) -> Value {
    let (zero, one, inf) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element), g.constant_f64(f64::INFINITY, element));
    let larger = g.arith(Arith::MaximumF, x, y);
    let smaller = g.arith(Arith::MinimumF, x, y);
    let ratio = g.arith(Arith::DivF, &smaller, &larger);
    let ratio_squared = g.arith(Arith::MulF, &ratio, &ratio);
    let sum = g.arith(Arith::AddF, &one, &ratio_squared);
    let sum = g.math(MathUnary::Sqrt, &sum);
    let norm = g.arith(Arith::MulF, &larger, &sum);
    let smaller_is_zero = g.cmpf(CmpF::Oeq, &smaller, &zero);
    let larger_is_inf = g.cmpf(CmpF::Oeq, &larger, &inf);
    let plain_larger = g.arith(Arith::OrI, &smaller_is_zero, &larger_is_inf);
    g.select(&plain_larger, &larger, &norm)
}

/// R: the upper triangle of w's first `rows` rows and n columns (zeros below).
fn upper(b: &mut Block, w: &Value, rows: &Value, n: &Value, element: ScalarType) -> Result<Value, String> {
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), n.clone()]);
    let w = w.clone();
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let v = g.tensor_extract(&w, &[r.clone(), c.clone()]);
        let zero = g.constant_f64(0.0, element);
        let on_or_above = g.cmpi(CmpI::Ule, &r, &c);
        Ok::<_, String>(vec![g.select(&on_or_above, &v, &zero)])
    })?;
    Ok(r[0].clone())
}

/// Q's first `columns` columns, H_0 H_1 ... H_{k-1} applied to the identity's, as dorg2r
/// builds it: reflectors from the last, H_i applied to the columns right of i, then
/// column i set to H_i's (1 - tau_i at row i, -tau_i v_r below, zeros above).
pub(super) fn accumulate(cx: &mut Context, b: &mut Block, w: &Value, m: &Value, n: &Value, k: &Value, columns: &Value) -> Result<Value, String> {
    let element = w.tensor().element;
    if scalar::has_sequential_kernels() {
        let wt = transposed(b, w)?;
        let qt = dense_kernels::qr_accumulate(cx, b, &wt, n, k, columns, element);
        return transposed(b, &qt);
    }
    let eye = identity(b, element, m, columns)?;
    let start = cx.loop_start(b, &eye)?;
    let (first, step) = (b.constant_index(0), b.constant_index(1));
    let (w, m, n, k, columns) = (w.clone(), m.clone(), n.clone(), k.clone(), columns.clone());
    let r = b.scf_for(&first, &k, &step, &[start], |body, s, args| {
        let q = &args[0];
        let one = body.constant_index(1);
        let last = body.arith(Arith::SubI, &k, &one);
        let i = body.arith(Arith::SubI, &last, s);
        let zero = IndexArg::Const(0);
        let di = IndexArg::Dyn(i.clone());
        let column = body.tensor_extract_slice(&w, &[zero, di.clone()], &[IndexArg::Dyn(m.clone()), IndexArg::Const(1)]);
        let tau = body.tensor_extract_slice(&w, &[di, IndexArg::Dyn(n.clone())], &[IndexArg::Const(1), IndexArg::Const(1)]);
        let tau = body.tensor_collapse(&tau, &[]);
        let next = apply_reflector(body, q, &column, &tau, &i, &columns)?;
        // Column i: dscal's -tau v_r below, 1 - tau on the diagonal, zeros above.
        let init = body.tensor_empty(TensorType::new(vec![None, Some(1)], element), std::slice::from_ref(&m));
        let maps = [AffineMap::identity(2), map(2, &[]), AffineMap::identity(2)];
        let ii = i.clone();
        let own = body.linalg_generic(&[column, tau], &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
            let r = g.linalg_index(0);
            let (zero, one) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element));
            let minus_tau = g.negf(&args[1]);
            let below = g.arith(Arith::MulF, &minus_tau, &args[0]);
            let diagonal = g.arith(Arith::SubF, &one, &args[1]);
            let (at, under) = (g.cmpi(CmpI::Eq, &r, &ii), g.cmpi(CmpI::Ugt, &r, &ii));
            let value = g.select(&under, &below, &zero);
            Ok::<_, String>(vec![g.select(&at, &diagonal, &value)])
        })?[0]
            .clone();
        let next = body.tensor_insert_slice(&own, &next, &[IndexArg::Const(0), IndexArg::Dyn(i)]);
        Ok::<_, String>(vec![next])
    })?;
    Ok(r[0].clone())
}
