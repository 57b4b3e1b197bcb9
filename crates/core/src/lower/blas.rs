//! `Dot`, `Dot22` and `BatchedDot`: linalg's named contractions on a zero-filled
//! accumulator.
//!
//! The C backend's BLAS Ops (`Dot22Scalar`, `Gemm`, `Gemv`, `Ger`) never reach this
//! backend: the mode excludes the `BlasOpt` rewrites that make them (see
//! `MLIRLinker.incompatible_rewrites`), so `alpha * dot(x, y) + beta * z` stays a `Dot`
//! and an elementwise `Composite`, which IREE fuses itself. Neither PyTensor's JAX nor
//! its Numba backend lowers them either.

use super::shapes::Dim;
use super::{elemwise, scalar, tensor_type, Context};
use crate::dtype::DType;
use crate::ir::Node;
use crate::mlir::{Block, Contraction};

pub fn dot(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (xa, xb, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (ta, tb, to) = (cx.graph.ty(xa).clone(), cx.graph.ty(xb).clone(), cx.graph.ty(out).clone());
    if to.dtype == DType::Bool {
        return Err("dot of bool".into());
    }
    let op = match (ta.ndim(), tb.ndim()) {
        (2, 2) => Contraction::Matmul,
        (2, 1) => Contraction::Matvec,
        (1, 2) => Contraction::Vecmat,
        (1, 1) => Contraction::Dot,
        (ra, rb) => return Err(format!("dot of ranks {ra} and {rb}")),
    };
    let (da, db) = (cx.dims(xa), cx.dims(xb));
    cx.require_equal(da[ta.ndim() - 1], db[0], name);
    let va = cx.value(b, xa)?;
    let vb = cx.value(b, xb)?;
    let a = elemwise::cast(b, &va, &ta, to.dtype)?;
    let bb = elemwise::cast(b, &vb, &tb, to.dtype)?;
    let mut sizes = Vec::new();
    let mut dims: Vec<Dim> = Vec::new();
    if ta.ndim() == 2 {
        if to.shape[0].is_none() {
            sizes.push(b.tensor_dim(&a, 0));
        }
        dims.push(da[0]);
    }
    if tb.ndim() == 2 {
        if to.shape[dims.len()].is_none() {
            sizes.push(b.tensor_dim(&bb, 1));
        }
        dims.push(db[1]);
    }
    let empty = b.tensor_empty(tensor_type(&to), &sizes);
    let zero = scalar::scalar_constant(b, to.dtype, &vec![0u8; to.dtype.byte_size()])?;
    let init = b.linalg_fill(&zero.value, &empty);
    let r = b.contraction(op, &a, &bb, &init);
    cx.define(out, r, dims);
    Ok(())
}

/// `BatchedDot`: `linalg.batch_matmul`. PyTensor never broadcasts its batch dim (the C
/// backend raises `ValueError` on unequal batch or summed sizes), so both are checked
/// equal before the call.
pub fn batched_dot(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (xa, xb, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (ta, tb, to) = (cx.graph.ty(xa).clone(), cx.graph.ty(xb).clone(), cx.graph.ty(out).clone());
    if (ta.ndim(), tb.ndim(), to.ndim()) != (3, 3, 3) {
        return Err(format!("BatchedDot of ranks {} and {}", ta.ndim(), tb.ndim()));
    }
    if to.dtype == DType::Bool {
        return Err("BatchedDot of bool".into());
    }
    let (da, db) = (cx.dims(xa), cx.dims(xb));
    cx.require_equal(da[0], db[0], name);
    cx.require_equal(da[2], db[1], name);
    let va = cx.value(b, xa)?;
    let vb = cx.value(b, xb)?;
    let a = elemwise::cast(b, &va, &ta, to.dtype)?;
    let bb = elemwise::cast(b, &vb, &tb, to.dtype)?;
    // Each output dim with the operand that gives its size (the batch size from either,
    // since they are equal; the static one where there is one).
    let batch = if matches!(db[0], Dim::Static(_)) { db[0] } else { da[0] };
    let dims = vec![batch, da[1], db[2]];
    let mut sizes = Vec::new();
    for (axis, (src, src_axis)) in [(&a, 0), (&a, 1), (&bb, 2)].into_iter().enumerate() {
        if to.shape[axis].is_none() {
            sizes.push(b.tensor_dim(src, src_axis));
        }
    }
    let empty = b.tensor_empty(tensor_type(&to), &sizes);
    let zero = scalar::scalar_constant(b, to.dtype, &vec![0u8; to.dtype.byte_size()])?;
    let init = b.linalg_fill(&zero.value, &empty);
    let r = b.contraction(Contraction::BatchMatmul, &a, &bb, &init);
    cx.define(out, r, dims);
    Ok(())
}
