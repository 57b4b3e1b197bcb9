//! Folds over leading axes on the CPU (`x.sum(axis=0)`, the gradient of a row broadcast;
//! `x.max(axis=0)`): one dispatch that walks `x` row by row in memory order, folding
//! [`ROWS`] rows at a time into the results of their columns, [`WIDE`] columns a step (then
//! [`LANES`], then one by one) as straight-line code that LLVM's SLP vectorizer turns into
//! vector loads and operations. The column results stay in the output (in L1 or L2 for up
//! to a few thousand columns) and every element of `x` is read once, in order.
//!
//! Sums: it replaced IREE's vector-matrix product with a vector of ones
//! (`sum_as_contraction`, reduce.rs), whose kernel for 1000 x 1000 f64 took 152 us through
//! PyTensor against NUMBA's 99 (bench_ops, Zen 4, one thread). Max and min: IREE's
//! `linalg.generic` fold of the C backend's compare-and-select step stayed scalar code
//! (1000 x 1000 f64: 1.1 and 3.1 ms against NUMBA's 0.16 and 0.22).
//!
//! Each column's elements are folded in their order, [`ROWS`] at a time as a balanced tree
//! (((x0 . x1) . (x2 . x3)) ...), then into the column's result. So a max or min, whose step
//! keeps the earlier of equal values, gives the C backend's result exactly (its first of
//! -0.0 and +0.0); a sum's last bits can differ from a left-to-right sum, as numpy's
//! pairwise sum's do.

use super::dense_kernels::LANES;
use super::row_folds::element;
use super::Context;
use crate::mlir::{Arith, Block, CmpF, CmpI, ScalarType, TensorType, Value};

/// Columns a step of the main loop.
const WIDE: i64 = 16;
/// Rows folded into the results at a time: fewer loads and stores of them per element.
/// iree-benchmark-module (f64, Zen 4, medians of 5, twice): 1000 x 1000, 100000 x 10,
/// 10 x 100000: four rows 103-116, 119-131, 165-187 us; eight 96-97, 109, 154-160 us (32
/// columns a step instead of 16 gained nothing).
const ROWS: i64 = 8;

/// The folds of the columns of `x` (`rows` x `cols`, flattened) into results of `acc`
/// (each element converted to `acc` first: float32 is summed in float64, as PyTensor's
/// accumulator type says), from `init` by `combine(earlier, later)`, an associative step.
pub(super) fn column_folds(
    cx: &mut Context,
    b: &mut Block,
    x: &Value,
    (rows, cols): (&Value, &Value),
    acc: ScalarType,
    init: &dyn Fn(&mut Block) -> Value,
    combine: &dyn Fn(&mut Block, &Value, &Value) -> Value,
) -> Value {
    cx.sequential_kernels = true;
    let out_ty = TensorType::new(vec![None], acc);
    b.dispatch_workgroups(&[x.clone(), rows.clone(), cols.clone()], (out_ty.clone(), vec![cols.clone()]), |g, args| {
        let (x, rows, cols) = (&args[0], &args[1], &args[2]);
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let out = g.tensor_empty(TensorType::new(vec![None], acc), std::slice::from_ref(cols));
        let z = init(g);
        let out = g
            .scf_for(&zero, cols, &one, &[out], |h, j, t| Ok::<_, String>(vec![h.tensor_insert(&z, &t[0], std::slice::from_ref(j))]))
            .unwrap_or_else(|e| unreachable!("{e}"));
        let ends = column_steps(g, cols);
        let rows_step = g.constant_index(ROWS);
        let groups = g.arith(Arith::DivUI, rows, &rows_step);
        let grouped_end = g.arith(Arith::MulI, &groups, &rows_step);
        let out = fold_rows(g, x, &out[0], cols, (&zero, &grouped_end), ROWS, &ends, combine);
        fold_rows(g, x, &out, cols, (&grouped_end, rows), 1, &ends, combine)
    })
}

/// Where the steps of [`WIDE`] and then of [`LANES`] columns end (at most one of LANES
/// follows the last of WIDE), and the rest one by one: (step, end) pairs.
fn column_steps(g: &mut Block, cols: &Value) -> Vec<(i64, Value)> {
    let mut ends: Vec<(i64, Value)> = [WIDE, LANES]
        .iter()
        .map(|&w| {
            let wv = g.constant_index(w);
            let chunks = g.arith(Arith::DivUI, cols, &wv);
            (w, g.arith(Arith::MulI, &chunks, &wv))
        })
        .collect();
    ends.push((1, cols.clone()));
    ends
}

/// `t` (a vector of a column each) through `step(body, columns, t)` over the columns in the
/// steps whose ends `ends` gives (`column_steps`): each step gets its columns' indices.
fn over_columns(h: &mut Block, ends: &[(i64, Value)], t: &Value, step: &dyn Fn(&mut Block, &[Value], &Value) -> Value) -> Value {
    let mut t = t.clone();
    let mut start = h.constant_index(0);
    for (w, end) in ends {
        let wv = h.constant_index(*w);
        t = h
            .scf_for(&start, end, &wv, &[t], |body, c, s| {
                let cols: Vec<Value> = (0..*w)
                    .map(|lane| {
                        let offset = body.constant_index(lane);
                        body.arith(Arith::AddI, c, &offset)
                    })
                    .collect();
                Ok::<_, String>(vec![step(body, &cols, &s[0])])
            })
            .unwrap_or_else(|e| unreachable!("{e}"))
            .remove(0);
        start = end.clone();
    }
    t
}

/// Rows `from..to` of `x` (`count` at a time; their number a multiple of it) folded into
/// the column results `t`, the columns in steps whose ends `ends` gives (see `column_folds`).
#[allow(clippy::too_many_arguments)]
fn fold_rows(
    g: &mut Block,
    x: &Value,
    t: &Value,
    cols: &Value,
    (from, to): (&Value, &Value),
    count: i64,
    ends: &[(i64, Value)],
    combine: &dyn Fn(&mut Block, &Value, &Value) -> Value,
) -> Value {
    let step = g.constant_index(count);
    let r = g.scf_for(from, to, &step, std::slice::from_ref(t), |h, i, t| {
        let bases: Vec<Value> = (0..count)
            .map(|r| {
                let ri = h.constant_index(r);
                let row = h.arith(Arith::AddI, i, &ri);
                h.arith(Arith::MulI, &row, cols)
            })
            .collect();
        let t = over_columns(h, ends, &t[0], &|body, cols, s| {
            // Every load before the first store: LLVM does not know that x and the results
            // never overlap, and would not move a load above a store to make vectors of them.
            let acc = s.tensor().element;
            let olds: Vec<Value> = cols.iter().map(|col| body.tensor_extract(s, std::slice::from_ref(col))).collect();
            let rows: Vec<Vec<Value>> = bases
                .iter()
                .map(|base| {
                    cols.iter()
                        .map(|col| {
                            let at = body.arith(Arith::AddI, base, col);
                            element(body, x, &at, acc)
                        })
                        .collect()
                })
                .collect();
            let mut s = s.clone();
            for (lane, col) in cols.iter().enumerate() {
                let mut parts: Vec<Value> = rows.iter().map(|r| r[lane].clone()).collect();
                while parts.len() > 1 {
                    parts = parts.chunks(2).map(|p| if p.len() == 2 { combine(body, &p[0], &p[1]) } else { p[0].clone() }).collect();
                }
                let new = combine(body, &olds[lane], &parts[0]);
                s = body.tensor_insert(&new, &s, std::slice::from_ref(col));
            }
            s
        });
        Ok::<_, String>(vec![t])
    });
    r.unwrap_or_else(|e| unreachable!("{e}")).remove(0)
}

/// For each column of `x` (`rows` x `cols`, flattened) the index (int64) of its first row
/// equal to the column's `target` (a vector of `cols`), a nan matching a nan target; 0
/// where none does (no rows). With the column's max as its target (a nan where the column
/// has one) that is numpy's argmax over the leading axes. One pass over `x` in memory
/// order, [`WIDE`] columns a step as straight-line selects (a column scan would stride
/// through memory).
pub(super) fn first_row_of(cx: &mut Context, b: &mut Block, x: &Value, target: &Value, (rows, cols): (&Value, &Value)) -> Value {
    cx.sequential_kernels = true;
    let out_ty = TensorType::new(vec![None], ScalarType::I64);
    b.dispatch_workgroups(&[x.clone(), target.clone(), rows.clone(), cols.clone()], (out_ty, vec![cols.clone()]), |g, args| {
        let (x, target, rows, cols) = (&args[0], &args[1], &args[2], &args[3]);
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let out = g.tensor_empty(TensorType::new(vec![None], ScalarType::I64), std::slice::from_ref(cols));
        // -1: no row yet.
        let none = g.constant_int(-1, ScalarType::I64);
        let out = g
            .scf_for(&zero, cols, &one, &[out], |h, j, t| Ok::<_, String>(vec![h.tensor_insert(&none, &t[0], std::slice::from_ref(j))]))
            .unwrap_or_else(|e| unreachable!("{e}"))
            .remove(0);
        let ends = column_steps(g, cols);
        let out = g
            .scf_for(&zero, rows, &one, &[out], |h, i, t| {
                let base = h.arith(Arith::MulI, i, cols);
                let row = h.index_cast(i, ScalarType::I64);
                let t = over_columns(h, &ends, &t[0], &|body, cols, s| {
                    // Every load before the first store (see `fold_rows`).
                    let olds: Vec<Value> = cols.iter().map(|col| body.tensor_extract(s, std::slice::from_ref(col))).collect();
                    let wants: Vec<Value> = cols.iter().map(|col| body.tensor_extract(target, std::slice::from_ref(col))).collect();
                    let values: Vec<Value> = cols
                        .iter()
                        .map(|col| {
                            let at = body.arith(Arith::AddI, &base, col);
                            body.tensor_extract(x, std::slice::from_ref(&at))
                        })
                        .collect();
                    let mut s = s.clone();
                    for (lane, col) in cols.iter().enumerate() {
                        let hit = equal_or_both_nan(body, &values[lane], &wants[lane]);
                        let z = zero_i64(body);
                        let unset = body.cmpi(CmpI::Slt, &olds[lane], &z);
                        let take = body.arith(Arith::AndI, &hit, &unset);
                        let new = body.select(&take, &row, &olds[lane]);
                        s = body.tensor_insert(&new, &s, std::slice::from_ref(col));
                    }
                    s
                });
                Ok::<_, String>(vec![t])
            })
            .unwrap_or_else(|e| unreachable!("{e}"))
            .remove(0);
        // No row (an empty column): 0.
        g.scf_for(&zero, cols, &one, &[out], |h, j, t| {
            let old = h.tensor_extract(&t[0], std::slice::from_ref(j));
            let z = zero_i64(h);
            let unset = h.cmpi(CmpI::Slt, &old, &z);
            let new = h.select(&unset, &z, &old);
            Ok::<_, String>(vec![h.tensor_insert(&new, &t[0], std::slice::from_ref(j))])
        })
        .unwrap_or_else(|e| unreachable!("{e}"))
        .remove(0)
    })
}

/// The int64 zero.
fn zero_i64(b: &mut Block) -> Value {
    b.constant_int(0, ScalarType::I64)
}

/// Whether `v` equals `want`, a nan matching a nan.
pub(super) fn equal_or_both_nan(b: &mut Block, v: &Value, want: &Value) -> Value {
    if !v.scalar().is_float() {
        return b.cmpi(CmpI::Eq, v, want);
    }
    let eq = b.cmpf(CmpF::Oeq, v, want);
    let v_nan = b.cmpf(CmpF::Uno, v, v);
    let want_nan = b.cmpf(CmpF::Uno, want, want);
    let both_nan = b.arith(Arith::AndI, &v_nan, &want_nan);
    b.arith(Arith::OrI, &eq, &both_nan)
}
