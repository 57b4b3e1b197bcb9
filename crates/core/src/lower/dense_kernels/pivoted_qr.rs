//! QR with column pivoting (`QR(pivoting=True)`, LAPACK's geqp3), as one dispatch on the
//! CPU: before reflector i, the column of largest remaining norm (over rows i ..) is
//! swapped into place; after it, the other columns' norms are downdated as dlaqp2 does.
//!
//! The kernel works on a^T as `qr_reflectors` does (rows = a's columns), each row widened
//! by three elements: the column's running norm (vn1), the norm it was last computed from
//! scratch (vn2) and its original index (jpvt, the integer's bits in the float's place,
//! so exact at every size). Swapping two rows then swaps all that goes with a column, as
//! LAPACK swaps columns, vn1, vn2 and jpvt. Row n holds tau, as for `qr_reflectors`.
//!
//! Norm downdating (dlaqp2): after step i, column c's norm over rows i + 1 .. is
//! vn1 sqrt(1 - (|r_ic| / vn1)^2); where that has lost too much to cancellation
//! ((1 - (|r_ic| / vn1)^2) (vn1 / vn2)^2 <= sqrt(eps)) it is computed again from the
//! column. LAPACK's blocked geqp3 (min(m, n) past 128) downdates the same norms in
//! another order: pivots agree up to rounding, so only where two columns' remaining norms
//! tie to rounding may they choose differently.

use super::{norm_parts, reflect_rows, reflector, region, region_parts, Flat};
use crate::lower::Context;
use crate::mlir::{Arith, Block, Cast, CmpF, CmpI, IndexArg, MathUnary, ScalarType, Value};

/// geqp3's w^T ((n + 1) x m, as `qr_reflectors` gives it, of a P) and P's column indices
/// (n, an integer's bits in the element type's place: see `index_of_bits`) from a^T
/// (n x m).
pub(crate) fn qr_pivoted_reflectors(cx: &mut Context, b: &mut Block, at: &Value, element: ScalarType) -> (Value, Value) {
    let n = b.tensor_dim(at, 0);
    let m = b.tensor_dim(at, 1);
    let (one, three) = (b.constant_index(1), b.constant_index(3));
    let rows = b.arith(Arith::AddI, &n, &one);
    let width = b.arith(Arith::AddI, &m, &three);
    let t = region(cx, b, element, (&rows, &width), &[at], &[&n], |k, a, s| {
        let (one, three) = (k.constant_index(1), k.constant_index(3));
        let rows = k.arith(Arith::AddI, &s[0], &one);
        let width = k.arith(Arith::AddI, &a[0].cols, &three);
        let begin = Flat::start(k, element, &rows, &width);
        kernel(k, &a[0], &s[0], element, begin)
    });
    let (wt, bits) = split(b, &t, &rows, &m);
    let zero = IndexArg::Const(0);
    let indices = b.tensor_extract_slice(&bits, &[zero.clone(), zero], &[IndexArg::Dyn(n), IndexArg::Const(1)]);
    (wt, b.tensor_collapse(&indices, &[vec![0, 1]]))
}

/// [`qr_pivoted_reflectors`] of each of `count` matrices a^T (n x m) stacked in `at`
/// ((count n) x m), one workgroup a matrix: the w^T stacked ((count (n + 1)) x m) and
/// the column indices' bits ((count (n + 1)) x 1, row n of each matrix not an index).
pub(crate) fn qr_pivoted_reflectors_stacked(cx: &mut Context, b: &mut Block, at: &Value, count: &Value, n: &Value, element: ScalarType) -> (Value, Value) {
    let m = b.tensor_dim(at, 1);
    let (one, three) = (b.constant_index(1), b.constant_index(3));
    let rows = b.arith(Arith::AddI, n, &one);
    let width = b.arith(Arith::AddI, &m, &three);
    let t = region_parts(cx, b, element, count, (&rows, &width), &[at], &[n], |k, a, s, begin| kernel(k, &a[0], &s[0], element, begin));
    let all_rows = b.arith(Arith::MulI, count, &rows);
    split(b, &t, &all_rows, &m)
}

/// The kernel's result `t` (`rows` x (m + 3)) split into w^T (its first m columns) and the
/// column indices' bits (its last column, `rows` x 1).
fn split(b: &mut Block, t: &Value, rows: &Value, m: &Value) -> (Value, Value) {
    let zero = IndexArg::Const(0);
    let wt = b.tensor_extract_slice(t, &[zero.clone(), zero.clone()], &[IndexArg::Dyn(rows.clone()), IndexArg::Dyn(m.clone())]);
    let two = b.constant_index(2);
    let index_column = b.arith(Arith::AddI, m, &two);
    let bits = b.tensor_extract_slice(t, &[zero, IndexArg::Dyn(index_column)], &[IndexArg::Dyn(rows.clone()), IndexArg::Const(1)]);
    (wt, bits)
}

/// The integer type whose bits stand in a column index's place in a kernel of `element`s.
fn index_bits_type(element: ScalarType) -> ScalarType {
    if element == ScalarType::F32 {
        ScalarType::I32
    } else {
        ScalarType::I64
    }
}

/// A column index (int32) from its bits in a pivoted kernel's float `v`.
pub(crate) fn index_of_bits(g: &mut Block, v: &Value) -> Value {
    let int = index_bits_type(v.scalar());
    let index = g.cast(Cast::Bitcast, v, int);
    if int == ScalarType::I32 {
        index
    } else {
        g.cast(Cast::TruncI, &index, ScalarType::I32)
    }
}

/// The kernel on a^T (n x m) into `begin` ((n + 1) x (m + 3)): see the module comment.
fn kernel(k: &mut Block, a: &Flat, n: &Value, element: ScalarType, begin: Value) -> Value {
    let m = a.cols.clone();
    let (zero, one, two, three) = (k.constant_index(0), k.constant_index(1), k.constant_index(2), k.constant_index(3));
    let width = k.arith(Arith::AddI, &m, &three);
    let norm = m.clone();
    let computed = k.arith(Arith::AddI, &m, &one);
    let index = k.arith(Arith::AddI, &m, &two);
    let zero_f = k.constant_f64(0.0, element);
    // Each column copied, its norm as vn1 and vn2, its index; row n (tau) zeroed.
    let start = k
        .scf_for(&zero, n, &one, &[begin], |g, c, t| {
            let copied = g.scf_for(&zero, &m, &one, t, |h, r, t| {
                let x = a.get(h, c, r);
                Ok::<_, String>(vec![Flat::result(&t[0], &width).set(h, &x, c, r)])
            })?;
            let w = Flat::result(&copied[0], &width);
            let size = column_norm(g, &w, c, &zero, &m, element);
            let t = w.set(g, &size, c, &norm);
            let t = Flat::result(&t, &width).set(g, &size, c, &computed);
            let bits = g.index_cast(c, index_bits_type(element));
            let bits = g.cast(Cast::Bitcast, &bits, element);
            Ok::<_, String>(vec![Flat::result(&t, &width).set(g, &bits, c, &index)])
        })
        .unwrap_or_else(|e: String| unreachable!("{e}"));
    let start = k
        .scf_for(&zero, &width, &one, &start, |g, r, t| Ok::<_, String>(vec![Flat::result(&t[0], &width).set(g, &zero_f, n, r)]))
        .unwrap_or_else(|e| unreachable!("{e}"));
    let steps = k.arith(Arith::MinUI, &m, n);
    let r = k
        .scf_for(&zero, &steps, &one, &start, |g, i, t| {
            let next = g.arith(Arith::AddI, i, &one);
            let w = Flat::result(&t[0], &width);
            let pivot = largest(g, &w, i, n, &norm);
            let w = Flat::result(&swap_rows(g, &w, i, &pivot), &width);
            let (stored, beta, tau) = reflector(g, &w, i, i, (&next, &m), element);
            let w = Flat::result(&stored, &width);
            let t = w.set(g, &beta, i, i);
            let t = Flat::result(&t, &width).set(g, &tau, n, i);
            let v = |h: &mut Block, w: &Flat, r: &Value| w.get(h, i, r);
            let t = reflect_rows(g, &Flat::result(&t, &width), &v, &tau, i, n, &m, element);
            Ok::<_, String>(vec![downdate_norms(g, &Flat::result(&t, &width), i, (n, &m), element)])
        })
        .unwrap_or_else(|e: String| unreachable!("{e}"));
    r[0].clone()
}

/// The norm of row `row` of `t` over columns [from, to) (dnrm2's, without overflow or
/// underflow on the way; 0 for no columns).
fn column_norm(g: &mut Block, t: &Flat, row: &Value, from: &Value, to: &Value, element: ScalarType) -> Value {
    let parts = norm_parts(g, t, row, (from, to), element);
    crate::lower::qr::norm_of_parts(g, &parts, element)
}

/// The first row c in [i, n) of largest vn1 (idamax's choice: a later row only where its
/// vn1 is strictly larger, so NaN is never chosen over a number before it).
fn largest(g: &mut Block, t: &Flat, i: &Value, n: &Value, norm: &Value) -> Value {
    let one = g.constant_index(1);
    let next = g.arith(Arith::AddI, i, &one);
    let first = t.get(g, i, norm);
    let r = g
        .scf_for(&next, n, &one, &[i.clone(), first], |h, c, best| {
            let size = t.get(h, c, norm);
            let larger = h.cmpf(CmpF::Ogt, &size, &best[1]);
            Ok::<_, String>(vec![h.select(&larger, c, &best[0]), h.select(&larger, &size, &best[1])])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    r[0].clone()
}

/// `t` with rows i and p exchanged, every element (a no-op where p = i).
fn swap_rows(g: &mut Block, t: &Flat, i: &Value, p: &Value) -> Value {
    let (zero, one) = (g.constant_index(0), g.constant_index(1));
    let moves = g.cmpi(CmpI::Ne, i, p);
    let ty = t.data.ty().clone();
    g.scf_if_values(
        &moves,
        std::slice::from_ref(&ty),
        |h| {
            h.scf_for(&zero, &t.cols, &one, &[t.data.clone()], |e, r, d| {
                let cur = t.with(&d[0]);
                let (x, y) = (cur.get(e, i, r), cur.get(e, p, r));
                let d = cur.set(e, &y, i, r);
                Ok::<_, String>(vec![t.with(&d).set(e, &x, p, r)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"))
        },
        |_| vec![t.data.clone()],
    )[0]
        .clone()
}

/// dlaqp2's norm update after reflector i, for the rows c in (i, n): vn1 downdated by
/// r_ic, or computed again over columns (i, m) where the downdate lost too much (and set
/// to 0 past the last column), vn2 with it; a zero vn1 stays.
fn downdate_norms(g: &mut Block, t: &Flat, i: &Value, (n, m): (&Value, &Value), element: ScalarType) -> Value {
    let one = g.constant_index(1);
    let next = g.arith(Arith::AddI, i, &one);
    let computed = g.arith(Arith::AddI, m, &one);
    let (zero_f, one_f) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element));
    // sqrt of dlamch('Epsilon'), LAPACK's relative machine precision (2^-53, 2^-24).
    let tolerance = g.constant_f64(if element == ScalarType::F32 { 2f64.powi(-12) } else { 2f64.powf(-26.5) }, element);
    let r = g
        .scf_for(&next, n, &one, &[t.data.clone()], |h, c, d| {
            let cur = t.with(&d[0]);
            let (vn1, vn2) = (cur.get(h, c, m), cur.get(h, c, &computed));
            let r_ic = cur.get(h, c, i);
            let size = h.math(MathUnary::AbsF, &r_ic);
            let ratio = h.arith(Arith::DivF, &size, &vn1);
            let square = h.arith(Arith::MulF, &ratio, &ratio);
            let left = h.arith(Arith::SubF, &one_f, &square);
            let left = h.arith(Arith::MaximumF, &left, &zero_f);
            let drift = h.arith(Arith::DivF, &vn1, &vn2);
            let drift = h.arith(Arith::MulF, &drift, &drift);
            let lost = h.arith(Arith::MulF, &left, &drift);
            let nonzero = h.cmpf(CmpF::Une, &vn1, &zero_f);
            let lost = h.cmpf(CmpF::Ole, &lost, &tolerance);
            let again = h.arith(Arith::AndI, &nonzero, &lost);
            let root = h.math(MathUnary::Sqrt, &left);
            let downdated = h.arith(Arith::MulF, &vn1, &root);
            let downdated = h.select(&nonzero, &downdated, &vn1);
            let ty = element.into();
            let (vn1, vn2) = {
                let r = h.scf_if_values(
                    &again,
                    &[ty, element.into()],
                    |e| {
                        // Over rows i + 1 .. of a (columns of a^T): none past the last.
                        let again = column_norm(e, &cur, c, &next, m, element);
                        vec![again.clone(), again]
                    },
                    |_| vec![downdated.clone(), vn2.clone()],
                );
                (r[0].clone(), r[1].clone())
            };
            let d = cur.set(h, &vn1, c, m);
            Ok::<_, String>(vec![t.with(&d).set(h, &vn2, c, &computed)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    r[0].clone()
}
