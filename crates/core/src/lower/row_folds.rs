//! Folds along the last axis on the CPU (`x.sum(axis=-1)`, the sums of softmax-like rows;
//! `x.max(axis=-1)`; a fold over all axes as one row): one dispatch of scalar loops over the
//! rows, each folded into [`WIDE`] partial results (then [`LANES`], then one by one), which
//! LLVM's SLP vectorizer makes vector operations.
//!
//! IREE 3.13 tiles such a `linalg.generic` fold 8 rows by 8 columns and reduces each tile
//! to 8 scalars as it goes, a horizontal sum per row every 8 elements. Through PyTensor,
//! min of 50 (Zen 4, one thread), IREE's fold -> this kernel, against NUMBA: 1000 x 1000
//! f64 126 -> 90 us (NUMBA 88); 100000 x 10 346 -> 243 us (231); 100 x 100003 2.2 -> 2.9
//! ms (2.9, noisy); 1000 x 1000 f32 (summed in f64) 225 -> 85 us (77). Tile sizes of our
//! own for IREE's fold (its `compilation_info`: one row at a time, 8 to 32 columns) got
//! 1000 x 1000 to 128 us and lost on float32 data. Sixteen partial sums keep two vector
//! add chains going (1000 x 1000: 97 us with eight); rows shorter than sixteen take one
//! step of eight (100000 x 10: 369 us without it).
//!
//! The order of the additions differs from a left-to-right sum, as numpy's pairwise sum
//! differs from it. A float max or min (the C backend's compare-and-select step, which
//! keeps the earlier of equal values) is the same in any order but for the sign of a zero
//! result: there the row's first zero is the C backend's result, found by a scan of the
//! row that stops at it (`first_zero`). IREE's fold of that step stayed scalar code: 1000
//! x 1000 f64 max along axis 1 814 us (NUMBA 449).

use super::column_folds::equal_or_both_nan;
use super::dense_kernels::LANES;
use super::Context;
use crate::mlir::{Arith, Block, Cast, CmpF, CmpI, ScalarType, TensorType, Value};

/// Partial sums of the main loop.
const WIDE: i64 = 16;

/// The folds of the rows of `x` (`rows` x `k`, flattened) into results of `acc` (each
/// element converted to `acc` first: float32 rows are summed in float64, as PyTensor's
/// accumulator type says), from `init` by `combine(earlier, later)`, associative and
/// commutative; with `first_zero` a zero result is the row's first zero (see the module
/// comment).
pub(super) fn row_folds(
    cx: &mut Context,
    b: &mut Block,
    x: &Value,
    (rows, k): (&Value, &Value),
    acc: ScalarType,
    init: &dyn Fn(&mut Block) -> Value,
    combine: &dyn Fn(&mut Block, &Value, &Value) -> Value,
    first_zero: bool,
) -> Value {
    cx.sequential_kernels = true;
    let out_ty = TensorType::new(vec![None], acc);
    b.dispatch_workgroups(&[x.clone(), rows.clone(), k.clone()], (out_ty.clone(), vec![rows.clone()]), |g, args| {
        let (x, rows, k) = (&args[0], &args[1], &args[2]);
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let out = g.tensor_unwritten(out_ty.element, rows);
        // Where the steps of WIDE and then of LANES elements end (at most one of LANES
        // follows the last of WIDE); the rest goes one by one.
        let ends: Vec<(i64, Value)> = [WIDE, LANES].iter().map(|&w| {
            let wv = g.constant_index(w);
            let chunks = g.arith(Arith::DivUI, k, &wv);
            (w, g.arith(Arith::MulI, &chunks, &wv))
        }).collect();
        let r = g
            .scf_for(&zero, rows, &one, &[out], |h, i, t| {
                let base = h.arith(Arith::MulI, i, k);
                let z = init(h);
                let mut accs = vec![z; WIDE as usize];
                let mut from = zero.clone();
                for (w, end) in &ends {
                    let step = h.constant_index(*w);
                    accs = h
                        .scf_for(&from, end, &step, &accs, |body, c, accs| {
                            let at = body.arith(Arith::AddI, &base, c);
                            let mut next = accs.to_vec();
                            for (lane, a) in accs.iter().take(*w as usize).enumerate() {
                                let offset = body.constant_index(lane as i64);
                                let p = body.arith(Arith::AddI, &at, &offset);
                                let v = element(body, x, &p, acc);
                                next[lane] = combine(body, a, &v);
                            }
                            Ok::<_, String>(next)
                        })
                        .unwrap_or_else(|e| unreachable!("{e}"));
                    from = end.clone();
                }
                let mut parts = accs;
                while parts.len() > 1 {
                    parts = parts.chunks(2).map(|p| combine(h, &p[0], &p[1])).collect();
                }
                let s = h
                    .scf_for(&from, k, &one, &[parts[0].clone()], |body, c, s| {
                        let p = body.arith(Arith::AddI, &base, c);
                        let v = element(body, x, &p, acc);
                        Ok::<_, String>(vec![combine(body, &s[0], &v)])
                    })
                    .unwrap_or_else(|e| unreachable!("{e}"));
                let s = if first_zero { first_zero_if_zero(h, x, &base, &s[0]) } else { s[0].clone() };
                Ok::<_, String>(vec![h.tensor_insert(&s, &t[0], std::slice::from_ref(i))])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    })
}

/// For each row of `x` (`rows` x `k`, flattened) the index (int64) of its first element
/// equal to the row's `target` (a vector of `rows`), a nan matching a nan target; 0 where
/// none does (an empty row). With the row's max as its target (a nan where the row has
/// one) that is numpy's argmax: the first of the greatest, the first nan before all.
/// Each row is read up to its match, by scalar code.
pub(super) fn first_index_of(cx: &mut Context, b: &mut Block, x: &Value, target: &Value, (rows, k): (&Value, &Value)) -> Value {
    cx.sequential_kernels = true;
    let out_ty = TensorType::new(vec![None], ScalarType::I64);
    b.dispatch_workgroups(&[x.clone(), target.clone(), rows.clone(), k.clone()], (out_ty.clone(), vec![rows.clone()]), |g, args| {
        let (x, target, rows, k) = (&args[0], &args[1], &args[2], &args[3]);
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let out = g.tensor_unwritten(ScalarType::I64, rows);
        let r = g.scf_for(&zero, rows, &one, &[out], |h, i, t| {
            let base = h.arith(Arith::MulI, i, k);
            let want = h.tensor_extract(target, std::slice::from_ref(i));
            let found = h.scf_while(
                std::slice::from_ref(&zero),
                |c, j| {
                    let inside = c.cmpi(CmpI::Ult, &j[0], k);
                    // Read only inside the row (an empty row reads nothing).
                    let hit = c.scf_if(&inside, &[ScalarType::I1], |r| {
                        let at = r.arith(Arith::AddI, &base, &j[0]);
                        let v = r.tensor_extract(x, std::slice::from_ref(&at));
                        vec![equal_or_both_nan(r, &v, &want)]
                    }, |r| vec![r.constant_int(0, ScalarType::I1)])
                    .remove(0);
                    let yes = c.constant_int(1, ScalarType::I1);
                    let miss = c.arith(Arith::XOrI, &hit, &yes);
                    c.arith(Arith::AndI, &inside, &miss)
                },
                |body, j| vec![body.arith(Arith::AddI, &j[0], &one)],
            );
            let inside = h.cmpi(CmpI::Ult, &found[0], k);
            let index = h.select(&inside, &found[0], &zero);
            let index = h.index_cast(&index, ScalarType::I64);
            Ok::<_, String>(vec![h.tensor_insert(&index, &t[0], std::slice::from_ref(i))])
        });
        r.unwrap_or_else(|e| unreachable!("{e}"))[0].clone()
    })
}

/// `s`, or where it is a zero the row's first zero (one exists then) from `base` on.
fn first_zero_if_zero(h: &mut Block, x: &Value, base: &Value, s: &Value) -> Value {
    let zero = h.constant_f64(0.0, s.scalar());
    let is_zero = h.cmpf(CmpF::Oeq, s, &zero);
    h.scf_if(&is_zero, &[s.scalar()], |t| {
        let one = t.constant_index(1);
        let at = t.scf_while(
            std::slice::from_ref(base),
            |c, at| {
                let v = c.tensor_extract(x, std::slice::from_ref(&at[0]));
                let z = c.constant_f64(0.0, v.scalar());
                c.cmpf(CmpF::Une, &v, &z)
            },
            |body, at| vec![body.arith(Arith::AddI, &at[0], &one)],
        );
        vec![t.tensor_extract(x, std::slice::from_ref(&at[0]))]
    }, |_| vec![s.clone()])
    .remove(0)
}

/// Element `at` of the vector `x`, widened to `acc`.
pub(super) fn element(b: &mut Block, x: &Value, at: &Value, acc: ScalarType) -> Value {
    let v = b.tensor_extract(x, std::slice::from_ref(at));
    if v.scalar() == acc { v } else { b.cast(Cast::ExtF, &v, acc) }
}
