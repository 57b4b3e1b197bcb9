//! Singular values alone: Golub and Kahan's bidiagonalization B = U^T W V of a matrix W (r
//! x c, r >= c) by Householder reflectors from both sides, alternately (Golub & Van Loan
//! 5.4.8; LAPACK's dgebd2), then B's singular values as the eigenvalues +-sigma of the 2c x
//! 2c symmetric tridiagonal matrix with a zero diagonal and the off-diagonal (d_0, e_0,
//! d_1, e_1, ..., d_c-1) (the Golub-Kahan form), by `symmetric_eigen`'s QL iterations
//! (`tridiagonal_eigenvalues`), all in one dispatch. That is LAPACK's amount of work for
//! the reduction (4 r c^2 - 4 c^3 / 3 flops), where one-sided Jacobi swept the whole
//! matrix 6 to 10 times; the values come with LAPACK's error bound, a small multiple of
//! eps ||W|| (Jacobi's also kept small values' relative accuracy).
//!
//! The kernel works on W^T (rows of r: W's columns) and four more rows, each of width =
//! max(r, 2c): W_ROW and U_ROW scratch, D_ROW and E_ROW the tridiagonal's diagonal and
//! off-diagonal. Step j: the left reflector from row j past column j (`reflector`: d_j =
//! beta stays at (j, j)), applied to rows j + 1 .. c (`reflect_rows`, as QR's step j); then
//! W's row j past column j + 1 (column j of rows j + 1 .. c here) gathered into U_ROW, its
//! right reflector there (e_j = beta at (j + 1, j)), and applied to the columns j + 1 .. r
//! of rows j + 1 .. c: w = sum_i u_i row_i into W_ROW, then row_i - tau u_i w (row
//! operations over contiguous elements, `add_multiple`). Later steps read neither (j, j)
//! nor (j + 1, j). Where d_j is alone (e_j-1 and e_j zero: a diagonal W, a 1 x 1) its 2 x 2
//! block [[0, d], [d, 0]] goes in as diag(|d_j|, -|d_j|) instead, the same eigenvalues
//! exactly (QL's rotations made the values of eye(5) 1 - eps). The 2c eigenvalues' sizes
//! are then ranked, descending: they come in pairs, so the even ranks' are the c values,
//! put in E_ROW.

use super::real_schur::{power_scale, scaled_back};
use super::{add_multiple, reflect_rows, reflector, region_parts, tridiagonal_eigenvalues, Flat};
use crate::lower::Context;
use crate::mlir::{Arith, Block, CmpF, CmpI, MathUnary, ScalarType, Value};

/// Row offsets past W^T's c rows (see the module comment).
const W_ROW: i64 = 0;
const U_ROW: i64 = 1;
const D_ROW: i64 = 2;
pub(in crate::lower) const E_ROW: i64 = 3;
/// The rows of a matrix's part of the result: c + EXTRA_ROWS.
pub(in crate::lower) const EXTRA_ROWS: i64 = 4;

/// The sorted singular values of each of `count` matrices W^T (c x r) stacked in `wt`
/// ((count c) x r), one workgroup a matrix: (count (c + EXTRA_ROWS)) x max(r, 2c), matrix
/// x's k-th largest value at (c + E_ROW, k) of its rows (see the module comment); NaN
/// where QL did not converge.
pub(in crate::lower) fn bidiagonal_singular_values(cx: &mut Context, b: &mut Block, wt: &Value, count: &Value, c: &Value, element: ScalarType) -> Value {
    let r = b.tensor_dim(wt, 1);
    let extra = b.constant_index(EXTRA_ROWS);
    let rows = b.arith(Arith::AddI, c, &extra);
    let two_c = b.arith(Arith::AddI, c, c);
    let width = b.arith(Arith::MaxUI, &r, &two_c);
    region_parts(cx, b, element, count, (&rows, &width), &[wt], &[c, &width], |k, m, s, begin| body(k, &m[0], (&s[0], &s[1]), element, begin))
}

/// The kernel of W^T (c x r where its Flat says) into `begin` (not yet written; rows of
/// `width`).
fn body(k: &mut Block, src: &Flat, (c, width): (&Value, &Value), element: ScalarType, begin: Value) -> Value {
    let r = src.cols.clone();
    let (zero, one) = (k.constant_index(0), k.constant_index(1));
    let row = |k: &mut Block, offset: i64| {
        let o = k.constant_index(offset);
        k.arith(Arith::AddI, c, &o)
    };
    let (w_row, u_row, d_row, e_row) = (row(k, W_ROW), row(k, U_ROW), row(k, D_ROW), row(k, E_ROW));
    // W^T's rows into rows of `width`, scaled by a power of two (the largest element into
    // [1, 2); the values scaled back at the end): the reflectors' 1 / (alpha - beta)
    // overflowed for a subnormal W.
    let zero_f = k.constant_f64(0.0, element);
    let largest = k
        .scf_for(&zero, c, &one, std::slice::from_ref(&zero_f), |g, j, acc| {
            g.scf_for(&zero, &r, &one, acc, |f, i, acc| {
                let x = src.get(f, j, i);
                let x = f.math(MathUnary::AbsF, &x);
                Ok::<_, String>(vec![f.arith(Arith::MaximumF, &acc[0], &x)])
            })
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    let (pre, factor, back, _) = power_scale(k, &largest[0], element);
    // The rows' columns past r zeroed: `reflect_rows` scans the reflector's row over the
    // whole width for its last nonzero, and the output buffer holds an earlier call's data
    // (wrong values for every later call of another size, only the first call was right).
    let copied = k
        .scf_for(&zero, c, &one, &[begin], |g, j, d| {
            let d = g.scf_for(&zero, &r, &one, d, |f, i, d| {
                let x = src.get(f, j, i);
                let x = f.arith(Arith::MulF, &x, &pre);
                let x = f.arith(Arith::MulF, &x, &factor);
                Ok::<_, String>(vec![Flat::result(&d[0], width).set(f, &x, j, i)])
            })?;
            g.scf_for(&r, width, &one, &d, |f, i, d| Ok::<_, String>(vec![Flat::result(&d[0], width).set(f, &zero_f, j, i)]))
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    let reduced = k
        .scf_for(&zero, c, &one, &copied, |g, j, d| {
            let t = Flat::result(&d[0], width);
            let next = g.arith(Arith::AddI, j, &one);
            // Left: W's column j from row j.
            let (stored, beta, tau) = reflector(g, &t, j, j, (&next, &r), element);
            let stored = t.with(&stored).set(g, &beta, j, j);
            let v = |h: &mut Block, w: &Flat, i: &Value| w.get(h, j, i);
            let data = reflect_rows(g, &t.with(&stored), &v, &tau, j, c, &t.cols, element);
            Ok::<_, String>(vec![right(g, &t.with(&data), j, (c, &r), (&w_row, &u_row), element)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    let t = Flat::result(&reduced[0], width);
    let filled = golub_kahan(k, &t, c, (&d_row, &e_row), element);
    let two_c = k.arith(Arith::AddI, c, c);
    let solved = tridiagonal_eigenvalues(k, filled, width, &two_c, (&d_row, &e_row), element);
    let sorted = sorted_sizes(k, &t.with(&solved), (&d_row, &e_row), &two_c);
    scaled_back(k, sorted, c, &back, |g, d, j| t.with(d).get(g, &e_row, j), |g, d, x, j| t.with(d).set(g, x, &e_row, j))
}

/// The Golub-Kahan tridiagonal's diagonal and off-diagonal into the rows `d_row` and
/// `e_row` (see the module comment), from B's d_j at (j, j) and e_j at (j + 1, j).
fn golub_kahan(g: &mut Block, t: &Flat, c: &Value, (d_row, e_row): (&Value, &Value), element: ScalarType) -> Value {
    let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
    let r = g
        .scf_for(&zero, c, &one, &[t.data.clone()], |h, j, data| {
            let cur = t.with(&data[0]);
            let zero_f = h.constant_f64(0.0, element);
            let last = h.arith(Arith::SubI, c, &one);
            // e_k, 0 past the end (k >= c - 1: read at a clamped row).
            let e = |h: &mut Block, k: &Value| {
                let below = h.arith(Arith::AddI, k, &one);
                let below = h.arith(Arith::MinUI, &below, &last);
                let v = cur.get(h, &below, k);
                let past = h.cmpi(CmpI::Uge, k, &last);
                h.select(&past, &zero_f, &v)
            };
            let d = cur.get(h, j, j);
            let e_j = e(h, j);
            let first = h.cmpi(CmpI::Eq, j, &zero);
            let prev = h.arith(Arith::SubI, j, &one);
            let prev = h.select(&first, &zero, &prev);
            let e_prev = e(h, &prev);
            let e_prev = h.select(&first, &zero_f, &e_prev);
            let after_zero = h.cmpf(CmpF::Oeq, &e_j, &zero_f);
            let before_zero = h.cmpf(CmpF::Oeq, &e_prev, &zero_f);
            let alone = h.arith(Arith::AndI, &after_zero, &before_zero);
            let size = h.math(MathUnary::AbsF, &d);
            let minus = h.negf(&size);
            let even = h.arith(Arith::MulI, j, &two);
            let odd = h.arith(Arith::AddI, &even, &one);
            let d_even = h.select(&alone, &size, &zero_f);
            let d_odd = h.select(&alone, &minus, &zero_f);
            let e_even = h.select(&alone, &zero_f, &d);
            let data = cur.set(h, &d_even, d_row, &even);
            let data = cur.with(&data).set(h, &d_odd, d_row, &odd);
            let data = cur.with(&data).set(h, &e_even, e_row, &even);
            Ok::<_, String>(vec![cur.with(&data).set(h, &e_j, e_row, &odd)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    r[0].clone()
}

/// The first n elements of row `from` (eigenvalues +-sigma, in pairs) by size, descending,
/// into row `to`, one of each pair: each one's rank counted over the others (ties by
/// index) and the size stored at half the rank where the rank is even.
fn sorted_sizes(g: &mut Block, t: &Flat, (from, to): (&Value, &Value), n: &Value) -> Value {
    let (zero, one) = (g.constant_index(0), g.constant_index(1));
    let r = g
        .scf_for(&zero, n, &one, &[t.data.clone()], |h, i, d| {
            let cur = t.with(&d[0]);
            let v = cur.get(h, from, i);
            let v = h.math(MathUnary::AbsF, &v);
            let rank = h.scf_for(&zero, n, &one, &[zero.clone()], |f, j, acc| {
                let w = cur.get(f, from, j);
                let w = f.math(MathUnary::AbsF, &w);
                let larger = f.cmpf(CmpF::Ogt, &w, &v);
                let same = f.cmpf(CmpF::Oeq, &w, &v);
                let before = f.cmpi(CmpI::Ult, j, i);
                let tie = f.arith(Arith::AndI, &same, &before);
                let ahead = f.arith(Arith::OrI, &larger, &tie);
                let next = f.arith(Arith::AddI, &acc[0], &one);
                Ok::<_, String>(vec![f.select(&ahead, &next, &acc[0])])
            })?;
            // Only the even ranks: one of each pair +-sigma.
            let two = h.constant_index(2);
            let (half, odd) = (h.arith(Arith::DivUI, &rank[0], &two), h.arith(Arith::RemUI, &rank[0], &two));
            let even = h.cmpi(CmpI::Eq, &odd, &zero);
            let ty = d[0].ty().clone();
            Ok::<_, String>(h.scf_if_values(&even, std::slice::from_ref(&ty), |q| vec![cur.set(q, &v, to, &half)], |_| vec![d[0].clone()]))
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    r[0].clone()
}

/// Step j's right reflector (where j + 1 < c; see the module comment), on `t` (W^T, c x
/// r, and the scratch rows `w_row` and `u_row`).
fn right(g: &mut Block, t: &Flat, j: &Value, (c, r): (&Value, &Value), (w_row, u_row): (&Value, &Value), element: ScalarType) -> Value {
    let (one, two) = (g.constant_index(1), g.constant_index(2));
    let (head, from) = (g.arith(Arith::AddI, j, &one), g.arith(Arith::AddI, j, &two));
    let more = g.cmpi(CmpI::Ult, &head, c);
    let ty = t.data.ty().clone();
    g.scf_if_values(
        &more,
        std::slice::from_ref(&ty),
        |h| {
            // W's row j from column j + 1, into the scratch row c + 1.
            let gathered = h
                .scf_for(&head, c, &one, &[t.data.clone()], |f, i, d| {
                    let cur = t.with(&d[0]);
                    let x = cur.get(f, i, j);
                    Ok::<_, String>(vec![cur.set(f, &x, u_row, i)])
                })
                .unwrap_or_else(|e| unreachable!("{e}"));
            let u = t.with(&gathered[0]);
            let (stored, beta, tau) = reflector(h, &u, u_row, &head, (&from, c), element);
            let stored = u.with(&stored).set(h, &beta, &head, j);
            let zero_f = h.constant_f64(0.0, element);
            let applies = h.cmpf(CmpF::Une, &tau, &zero_f);
            vec![h.scf_if_values(&applies, std::slice::from_ref(&ty), |q| vec![apply_right(q, &t.with(&stored), (&head, c, r), (w_row, u_row), &tau)], |_| vec![stored.clone()])[0].clone()]
        },
        |_| vec![t.data.clone()],
    )[0]
    .clone()
}

/// Rows [head, c) of `t`, over columns [head, r), times I - tau u u^T from the left, u_head
/// = 1 and u_i in the row `u_row` (i > head): w = sum_i u_i row_i into the row `w_row`,
/// then row_i - (tau u_i) w.
fn apply_right(g: &mut Block, t: &Flat, (head, c, r): (&Value, &Value, &Value), (w_row, u_row): (&Value, &Value), tau: &Value) -> Value {
    let r = r.clone();
    let one = g.constant_index(1);
    let after = g.arith(Arith::AddI, head, &one);
    let range = (head, &r);
    // w = row_head, then + u_i row_i.
    let copied = g
        .scf_for(head, &r, &one, &[t.data.clone()], |f, q, d| {
            let cur = t.with(&d[0]);
            let x = cur.get(f, head, q);
            Ok::<_, String>(vec![cur.set(f, &x, w_row, q)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    let summed = g
        .scf_for(&after, c, &one, &copied, |f, i, d| {
            let cur = t.with(&d[0]);
            let u_i = cur.get(f, u_row, i);
            let row = |h: &mut Block, w: &Flat, q: &Value| w.get(h, i, q);
            Ok::<_, String>(vec![add_multiple(f, &cur, w_row, &u_i, &row, range)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    let w = |h: &mut Block, cur: &Flat, q: &Value| cur.get(h, w_row, q);
    let minus_tau = g.negf(tau);
    let first = add_multiple(g, &t.with(&summed[0]), head, &minus_tau, &w, range);
    let rest = g
        .scf_for(&after, c, &one, &[first], |f, i, d| {
            let cur = t.with(&d[0]);
            let u_i = cur.get(f, u_row, i);
            let s = f.arith(Arith::MulF, &minus_tau, &u_i);
            Ok::<_, String>(vec![add_multiple(f, &cur, i, &s, &w, range)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    rest[0].clone()
}
