//! `PivotToPermutations` on the CPU, alone or batched: getrf's pivots (row i was swapped
//! with row piv[i], in order) made permutations in one dispatch of scalar loops, each
//! batch's pivots applied as swaps to its own row of the result. The GPU targets keep
//! linalg.rs's loop of the host program, a dispatch a pivot (which also kept any graph
//! holding one, e.g. two solves with one matrix, off IREE's inline model: 31 us against
//! NUMBA's 4 us for two 5 x 5 solves).
//!
//! PyTensor's `perform` swaps the entries i and piv[i] of p_inv = arange(n) for i = 0, 1,
//! ...: p_inv is the product of those transpositions, t_0 t_1 ... t_(n-1), and with
//! `inverse=False` it returns argsort(p_inv), the inverse permutation, which is the
//! product in the other order: the same swaps for i = n - 1 down to 0. Either way n
//! swaps, no sort.
//!
//! A pivot indexes p_inv as numpy does: a negative one wraps once, one still outside
//! [0, n) is skipped (nothing is read or written out of bounds) and raises `IndexError`
//! after the call.

use super::dense_kernels::batch_count;
use super::linalg::{define, dynamic};
use super::subtensor::wrap;
use super::{Context, ErrorKind, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::Node;
use crate::mlir::{Arith, Block, IndexArg, ScalarType, TensorType, Value};

/// The permutations of `pivots` (a vector of B n pivots of `dtype`, B batches of `n`
/// stacked), as i64 in the same layout; `inverse` as the Op's. Checks that every pivot
/// is in bounds.
fn permutations(cx: &mut Context, b: &mut Block, pivots: &Value, n: &Value, dtype: DType, inverse: bool, what: &str) -> Value {
    cx.sequential_kernels = true;
    let total = b.tensor_dim(pivots, 0);
    let out_ty = TensorType::new(vec![None], ScalarType::I64);
    let operands = [pivots.clone(), n.clone()];
    let (result, flag) = b.dispatch_workgroups_flagged(&operands, (out_ty.clone(), vec![total]), |k, args| {
        let (pivots, n) = (&args[0], &args[1]);
        let (zero, one) = (k.constant_index(0), k.constant_index(1));
        let total = k.tensor_dim(pivots, 0);
        let count = batch_count(k, &total, n);
        let start = k.tensor_unwritten(out_ty.element, &total);
        let none = k.constant_int(0, ScalarType::I1);
        let r = k
            .scf_for(&zero, &count, &one, &[start, none], |batch, e, t| {
                let base = batch.arith(Arith::MulI, e, n);
                let at = |g: &mut Block, i: &Value| g.arith(Arith::AddI, &base, i);
                let identity = batch.scf_for(&zero, n, &one, &[t[0].clone()], |h, i, t| {
                    let v = h.index_cast(i, ScalarType::I64);
                    let place = at(h, i);
                    Ok::<_, String>(vec![h.tensor_insert(&v, &t[0], &[place])])
                })?;
                batch.scf_for(&zero, n, &one, &[identity[0].clone(), t[1].clone()], |h, s, t| {
                    let i = if inverse {
                        s.clone()
                    } else {
                        let last = h.arith(Arith::SubI, n, &one);
                        h.arith(Arith::SubI, &last, s)
                    };
                    let here = at(h, &i);
                    let p = h.tensor_extract(pivots, std::slice::from_ref(&here));
                    let (w, ok) = wrap(h, &p, dtype, n);
                    // A pivot out of bounds swaps nothing.
                    let w = h.select(&ok, &w, &i);
                    let there = at(h, &w);
                    let (x, y) = (h.tensor_extract(&t[0], std::slice::from_ref(&here)), h.tensor_extract(&t[0], std::slice::from_ref(&there)));
                    let swapped = h.tensor_insert(&y, &t[0], &[here]);
                    let swapped = h.tensor_insert(&x, &swapped, &[there]);
                    let yes = h.constant_int(1, ScalarType::I1);
                    let bad = h.arith(Arith::XOrI, &ok, &yes);
                    Ok::<_, String>(vec![swapped, h.arith(Arith::OrI, &t[1], &bad)])
                })
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        (r[0].clone(), r[1].clone())
    });
    cx.add_check(flag, RuntimeCheck { kind: ErrorKind::Index, message: format!("{what}: a pivot is out of bounds for its axis") });
    result
}

/// `PivotToPermutations` of a vector (the Op's own checks done by the caller).
pub(super) fn pivot_to_permutations(cx: &mut Context, b: &mut Block, node: &Node, inverse: bool) -> Result<(), String> {
    let (piv_var, out) = (node.inputs[0], node.outputs[0]);
    let dtype = cx.graph.ty(piv_var).dtype;
    let pivots = cx.value(b, piv_var)?;
    let pivots = dynamic(b, &pivots);
    let n = b.tensor_dim(&pivots, 0);
    let result = permutations(cx, b, &pivots, &n, dtype, inverse, "PivotToPermutations");
    let dims = cx.dims(piv_var);
    define(cx, b, out, &result, dims);
    Ok(())
}

/// `Blockwise{PivotToPermutations}` over `batch` batch dims: every batch's pivots in the
/// one dispatch.
pub(super) fn batched_pivot_to_permutations(cx: &mut Context, b: &mut Block, node: &Node, batch: usize, inverse: bool) -> Result<(), String> {
    let (piv_var, out) = (node.inputs[0], node.outputs[0]);
    let ty = cx.graph.ty(piv_var).clone();
    if ty.ndim() != batch + 1 || !ty.dtype.is_int() || cx.graph.ty(out).dtype != DType::Int64 {
        return Err("PivotToPermutations of other than integer vectors to int64".into());
    }
    let pivots = cx.value(b, piv_var)?;
    let sizes: Vec<IndexArg> = (0..=batch).map(|k| IndexArg::Dyn(b.tensor_dim(&pivots, k))).collect();
    let n = b.tensor_dim(&pivots, batch);
    let flat = b.tensor_flatten(&pivots);
    let result = permutations(cx, b, &flat, &n, ty.dtype, inverse, "Blockwise{PivotToPermutations}");
    let shaped = b.tensor_unflatten(&result, TensorType::new(vec![None; batch + 1], ScalarType::I64), &sizes);
    let dims = cx.dims(piv_var);
    define(cx, b, out, &shaped, dims);
    Ok(())
}
