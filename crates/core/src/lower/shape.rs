//! `DimShuffle`: transpose, drop broadcastable axes, insert new ones; a copying
//! `linalg.generic` that IREE fuses into its consumers.

use super::shapes::Dim;
use super::{tensor_type, Context};
use crate::ir::Node;
use crate::mlir::{AffineExpr, AffineMap, Block, IteratorType};

pub fn dimshuffle(cx: &mut Context, b: &mut Block, node: &Node, new_order: &[Option<usize>]) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x = cx.value(b, input)?;
    let in_ty = cx.graph.ty(input).clone();
    let out_ty = cx.graph.ty(output).clone();
    let in_dims = cx.dims(input);
    let rank = new_order.len();
    let mut input_map = Vec::with_capacity(in_ty.ndim());
    for axis in 0..in_ty.ndim() {
        match new_order.iter().position(|&o| o == Some(axis)) {
            Some(p) => input_map.push(AffineExpr::Dim(p)),
            None if in_ty.broadcastable(axis) => input_map.push(AffineExpr::Constant(0)),
            None => return Err(format!("drops axis {axis}, which is not of static size 1")),
        }
    }
    let mut sizes = Vec::new();
    let mut dims = Vec::with_capacity(rank);
    for (p, o) in new_order.iter().enumerate() {
        match o {
            Some(axis) => {
                if out_ty.shape[p].is_none() {
                    sizes.push(b.tensor_dim(&x, *axis));
                }
                dims.push(in_dims[*axis]);
            }
            None => dims.push(Dim::Static(1)),
        }
    }
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let maps = [AffineMap { dims: rank, results: input_map }, AffineMap::identity(rank)];
    let r = b.linalg_generic(&[x], &[init], &maps, &vec![IteratorType::Parallel; rank], |_, args| {
        Ok::<_, String>(vec![args[0].clone()])
    })?;
    cx.define(output, r[0].clone(), dims);
    Ok(())
}
