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
use crate::mlir::{Arith, Block, ScalarType, TensorType, Value};

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
        // Where the steps of WIDE and then of LANES columns end (at most one of LANES
        // follows the last of WIDE); the rest goes one by one.
        let mut ends: Vec<(i64, Value)> = [WIDE, LANES]
            .iter()
            .map(|&w| {
                let wv = g.constant_index(w);
                let chunks = g.arith(Arith::DivUI, cols, &wv);
                (w, g.arith(Arith::MulI, &chunks, &wv))
            })
            .collect();
        ends.push((1, cols.clone()));
        let rows_step = g.constant_index(ROWS);
        let groups = g.arith(Arith::DivUI, rows, &rows_step);
        let grouped_end = g.arith(Arith::MulI, &groups, &rows_step);
        let out = fold_rows(g, x, &out[0], cols, (&zero, &grouped_end), ROWS, &ends, combine);
        fold_rows(g, x, &out, cols, (&grouped_end, rows), 1, &ends, combine)
    })
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
    let zero = g.constant_index(0);
    let r = g.scf_for(from, to, &step, std::slice::from_ref(t), |h, i, t| {
        let bases: Vec<Value> = (0..count)
            .map(|r| {
                let ri = h.constant_index(r);
                let row = h.arith(Arith::AddI, i, &ri);
                h.arith(Arith::MulI, &row, cols)
            })
            .collect();
        let mut t = t[0].clone();
        let mut start = zero.clone();
        for (w, end) in ends {
            let wv = h.constant_index(*w);
            t = h
                .scf_for(&start, end, &wv, &[t], |body, c, s| {
                    // Every load before the first store: LLVM does not know that x and the
                    // results never overlap, and would not move a load above a store to make
                    // vectors of them.
                    let acc = s[0].tensor().element;
                    let cols: Vec<Value> = (0..*w)
                        .map(|lane| {
                            let offset = body.constant_index(lane);
                            body.arith(Arith::AddI, c, &offset)
                        })
                        .collect();
                    let olds: Vec<Value> = cols.iter().map(|col| body.tensor_extract(&s[0], std::slice::from_ref(col))).collect();
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
                    let mut s = s[0].clone();
                    for (lane, col) in cols.iter().enumerate() {
                        let mut parts: Vec<Value> = rows.iter().map(|r| r[lane].clone()).collect();
                        while parts.len() > 1 {
                            parts = parts.chunks(2).map(|p| if p.len() == 2 { combine(body, &p[0], &p[1]) } else { p[0].clone() }).collect();
                        }
                        let new = combine(body, &olds[lane], &parts[0]);
                        s = body.tensor_insert(&new, &s, std::slice::from_ref(col));
                    }
                    Ok::<_, String>(vec![s])
                })
                .unwrap_or_else(|e| unreachable!("{e}"))
                .remove(0);
            start = end.clone();
        }
        Ok::<_, String>(vec![t])
    });
    r.unwrap_or_else(|e| unreachable!("{e}")).remove(0)
}
