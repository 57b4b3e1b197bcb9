//! `Dot` and `Dot22`: linalg's named contractions on a zero-filled accumulator.

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
