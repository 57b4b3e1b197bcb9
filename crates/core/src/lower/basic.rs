//! Constants, `DeepCopyOp`, `MakeVector`, `TensorFromScalar` and `ScalarFromTensor`.

use super::scalar::{self, Scalar};
use super::{tensor_type, Context};
use crate::dtype::DType;
use crate::ir::{Node, TensorType};
use crate::mlir::{AffineMap, Block, Cast, CmpI, IteratorType, ScalarType, Value};

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

/// `TensorFromScalar` and `ScalarFromTensor`: a scalar is a 0-d tensor here, so the value
/// passes through.
pub fn scalar_identity(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let (in_ty, out_ty) = (cx.graph.ty(input), cx.graph.ty(output));
    if in_ty.ndim() != 0 || out_ty.ndim() != 0 || in_ty.dtype != out_ty.dtype {
        return Err(format!("from {in_ty:?} to {out_ty:?}"));
    }
    let x = cx.value(b, input)?;
    cx.define(output, x, vec![]);
    Ok(())
}

/// `MakeVector`: its scalar inputs, converted to the output's dtype, as one vector.
pub fn make_vector(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let output = node.outputs[0];
    let out_ty = cx.graph.ty(output).clone();
    let dtype = out_ty.dtype;
    let mut elements = Vec::with_capacity(node.inputs.len());
    for &i in &node.inputs {
        let from = cx.graph.ty(i).dtype;
        let t = cx.value(b, i)?;
        let mut value = b.tensor_extract(&t, &[]);
        if from == DType::Bool {
            let z = b.constant_int(0, ScalarType::I8);
            value = b.cmpi(CmpI::Ne, &value, &z);
        }
        let mut v = scalar::convert(b, &Scalar { value, dtype: from }, dtype).value;
        if dtype == DType::Bool {
            v = b.cast(Cast::ExtUI, &v, ScalarType::I8);
        }
        elements.push(v);
    }
    let r = if elements.is_empty() {
        b.tensor_empty(tensor_type(&out_ty), &[])
    } else {
        b.tensor_from_elements(tensor_type(&out_ty), &elements)
    };
    cx.define(output, r, vec![super::shapes::Dim::Static(node.inputs.len() as u64)]);
    Ok(())
}
