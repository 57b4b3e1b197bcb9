//! `Blockwise`: a core op applied over leading batch dims, with PyTensor's broadcasting
//! (a batch dim broadcasts only where its static size is 1; other sizes must agree, and
//! are checked before the call like `Elemwise`'s).
//!
//! Lowered for the core ops whose batched form is one linalg op: `Dot` (`pt.matmul`,
//! vectorized dots), a contraction over the batch dims. Any other core op is refused at
//! parse time, naming it (`Blockwise{Det}` ...): a generic per-batch loop around an
//! arbitrary core rule is not built.
//!
//! In the MLIR mode's own rewrites a `Blockwise{Dot}` rarely survives: PyTensor turns
//! matmuls with equal batch patterns into `BatchedDot` and moves broadcast batch dims into
//! the core dot with reshapes (`specialize_matmul_to_batched_dot`,
//! `local_batched_matmul_to_core_matmul*`). It stays where those rewrites are excluded,
//! or in graphs built after rewriting.

use super::shapes::Dim;
use super::{scalar, tensor_type, Context};
use crate::dtype::DType;
use crate::ir::{BlockwiseCore, Node};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, IteratorType};

pub fn blockwise(cx: &mut Context, b: &mut Block, node: &Node, core: BlockwiseCore, name: &str) -> Result<(), String> {
    match core {
        BlockwiseCore::Dot => matmul(cx, b, node, name),
    }
}

/// `Blockwise{Dot}`: `out[..., m, n] = sum_k x[..., m, k] * y[..., k, n]` as one
/// `linalg.generic` (batch and `m`, `n` parallel, `k` a reduction) on a zero-filled
/// accumulator, each operand's broadcast batch dims read at index 0. Batch dims align
/// from the right, as numpy's do.
fn matmul(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (xa, xb, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (ta, tb, to) = (cx.graph.ty(xa).clone(), cx.graph.ty(xb).clone(), cx.graph.ty(out).clone());
    let rank = to.ndim();
    if ta.ndim() < 2 || tb.ndim() < 2 || rank < 2 || ta.ndim().max(tb.ndim()) != rank {
        return Err(format!("{name} of ranks {} and {} to rank {rank}", ta.ndim(), tb.ndim()));
    }
    if to.dtype == DType::Bool {
        return Err(format!("{name} of bool"));
    }
    let (da, db) = (cx.dims(xa), cx.dims(xb));
    let batch = rank - 2;
    let (ba, bb) = (ta.ndim() - 2, tb.ndim() - 2);
    // Output batch dim `j` is operand batch dim `j - (batch - b_op)` where that is >= 0.
    let batch_axis = |j: usize, b_op: usize| (j + b_op).checked_sub(batch);
    cx.require_equal(da[ba + 1], db[bb], name);

    let va = cx.value(b, xa)?;
    let vb = cx.value(b, xb)?;
    let a = super::elemwise::cast(b, &va, &ta, to.dtype)?;
    let y = super::elemwise::cast(b, &vb, &tb, to.dtype)?;

    // Batch dims: the operands that do not broadcast there must agree; the first gives
    // the size.
    let mut dims: Vec<Dim> = Vec::with_capacity(rank);
    let mut sizes = Vec::new();
    for j in 0..batch {
        let mut from: Option<(Dim, usize, bool)> = None; // (dim, axis, in a?)
        for (in_a, b_op, ty, d) in [(true, ba, &ta, &da), (false, bb, &tb, &db)] {
            let Some(axis) = batch_axis(j, b_op) else { continue };
            if ty.shape[axis] == Some(1) {
                continue;
            }
            match from {
                None => from = Some((d[axis], axis, in_a)),
                Some((first, _, _)) => cx.require_equal(first, d[axis], name),
            }
        }
        let dim = match (to.shape[j], from) {
            (Some(n), _) => Dim::Static(n),
            (None, Some((d, _, _))) => d,
            (None, None) => return Err(format!("{name}: output batch dim {j} is dynamic but every operand broadcasts there")),
        };
        if to.shape[j].is_none() {
            let (_, axis, in_a) = from.expect("checked above");
            sizes.push(b.tensor_dim(if in_a { &a } else { &y }, axis));
        }
        dims.push(dim);
    }
    dims.push(da[ba]);
    dims.push(db[bb + 1]);
    if to.shape[batch].is_none() {
        sizes.push(b.tensor_dim(&a, ba));
    }
    if to.shape[batch + 1].is_none() {
        sizes.push(b.tensor_dim(&y, bb + 1));
    }

    // Iteration dims: the batch dims, then m, n, k.
    let (m, n, k) = (batch, batch + 1, batch + 2);
    let operand_map = |b_op: usize, ty: &crate::ir::TensorType, core: [usize; 2]| {
        let mut results: Vec<AffineExpr> = (0..b_op)
            .map(|axis| if ty.shape[axis] == Some(1) { AffineExpr::Constant(0) } else { AffineExpr::Dim(axis + batch - b_op) })
            .collect();
        results.extend(core.map(AffineExpr::Dim));
        AffineMap { dims: batch + 3, results }
    };
    let maps = [
        operand_map(ba, &ta, [m, k]),
        operand_map(bb, &tb, [k, n]),
        AffineMap { dims: batch + 3, results: (0..batch + 2).map(AffineExpr::Dim).collect() },
    ];
    let mut iterators = vec![IteratorType::Parallel; batch + 2];
    iterators.push(IteratorType::Reduction);

    let empty = b.tensor_empty(tensor_type(&to), &sizes);
    let zero = scalar::scalar_constant(b, to.dtype, &vec![0u8; to.dtype.byte_size()])?;
    let init = b.linalg_fill(&zero.value, &empty);
    let (mul, add) = if to.dtype.is_float() { (Arith::MulF, Arith::AddF) } else { (Arith::MulI, Arith::AddI) };
    let r = b.linalg_generic(&[a, y], &[init], &maps, &iterators, |body, args| {
        let p = body.arith(mul, &args[0], &args[1]);
        Ok::<_, String>(vec![body.arith(add, &args[2], &p)])
    })?;
    cx.define(out, r.into_iter().next().expect("one result"), dims);
    Ok(())
}
