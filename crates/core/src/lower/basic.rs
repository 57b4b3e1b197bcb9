//! Constants and `DeepCopyOp`.

use super::{tensor_type, Context};
use crate::ir::{Node, TensorType};
use crate::mlir::{AffineMap, Block, IteratorType, Value};

/// A constant tensor from its bytes; an empty one is just an empty tensor.
pub fn constant(b: &mut Block, ty: &TensorType, bytes: &[u8]) -> Value {
    let t = tensor_type(ty);
    if bytes.is_empty() {
        b.tensor_empty(t, &[])
    } else {
        b.constant_dense(t, bytes)
    }
}

/// A real copy, so that an output is a buffer of its own.
pub fn deep_copy(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x = cx.value(b, input)?;
    let ty = cx.graph.ty(output).clone();
    let rank = ty.ndim();
    let sizes: Vec<Value> = (0..rank).filter(|&d| ty.shape[d].is_none()).map(|d| b.tensor_dim(&x, d)).collect();
    let init = b.tensor_empty(tensor_type(&ty), &sizes);
    let maps = [AffineMap::identity(rank), AffineMap::identity(rank)];
    let r = b.linalg_generic(&[x], &[init], &maps, &vec![IteratorType::Parallel; rank], |_, args| {
        Ok::<_, String>(vec![args[0].clone()])
    })?;
    let dims = cx.dims(input);
    cx.define(output, r[0].clone(), dims);
    Ok(())
}
