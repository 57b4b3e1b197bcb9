//! `BlockDiagonal` (`pt.linalg.block_diag`): a zero matrix of the summed sizes, each input
//! inserted on the diagonal after the ones before it. Inputs are cast to the output's dtype
//! (numpy's promotion of theirs, as PyTensor types it); the batched form is `Blockwise`'s
//! loop over this rule.

use super::shapes::{Dim, DimExpr};
use super::subtensor::zero_of;
use super::{elemwise, tensor_type, Context};
use crate::ir::Node;
use crate::mlir::{Arith, Block, IndexArg};

pub fn block_diagonal(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    if out_ty.ndim() != 2 || node.inputs.iter().any(|&i| cx.graph.ty(i).ndim() != 2) {
        return Err("inputs or an output that are not matrices".into());
    }
    let mut blocks = Vec::with_capacity(node.inputs.len());
    for &i in &node.inputs {
        let v = cx.value(b, i)?;
        blocks.push(elemwise::cast(b, &v, cx.graph.ty(i), out_ty.dtype)?);
    }
    // Each axis of the output is the sum of the inputs' along it.
    let mut dims = Vec::with_capacity(2);
    let mut sizes = Vec::new();
    for axis in 0..2 {
        let sum = cx.derived(DimExpr::Sum(node.inputs.iter().map(|&i| cx.dims(i)[axis]).collect()));
        dims.push(out_ty.shape[axis].map_or(sum, Dim::Static));
        if out_ty.shape[axis].is_none() {
            let mut total = b.constant_index(0);
            for v in &blocks {
                let d = b.tensor_dim(v, axis);
                total = b.arith(Arith::AddI, &total, &d);
            }
            sizes.push(total);
        }
    }
    let ty = tensor_type(&out_ty);
    let e = b.tensor_empty(ty.clone(), &sizes);
    let zero = zero_of(b, ty.element);
    let mut r = b.linalg_fill(&zero, &e);
    let (mut row, mut col) = (b.constant_index(0), b.constant_index(0));
    for v in &blocks {
        r = b.tensor_insert_slice(v, &r, &[IndexArg::Dyn(row.clone()), IndexArg::Dyn(col.clone())]);
        let (m, n) = (b.tensor_dim(v, 0), b.tensor_dim(v, 1));
        row = b.arith(Arith::AddI, &row, &m);
        col = b.arith(Arith::AddI, &col, &n);
    }
    cx.define(out, r, dims);
    Ok(())
}
