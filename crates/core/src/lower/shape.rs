//! `DimShuffle`: transpose, drop broadcastable axes, insert new ones; a copying
//! `linalg.generic` that IREE fuses into its consumers. `Shape`, `Shape_i` and
//! `SpecifyShape`.

use super::scalar::{self, Scalar};
use super::shapes::Dim;
use super::{tensor_type, Context, ErrorKind, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::Node;
use crate::mlir::{AffineExpr, AffineMap, Block, Cast, CmpI, IteratorType, ScalarType, Value};

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

/// `Shape`: the dims of the input as an int64 vector.
pub fn shape(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x = cx.value(b, input)?;
    let ndim = cx.graph.ty(input).ndim();
    let out_ty = tensor_type(cx.graph.ty(output));
    let r = if ndim == 0 {
        b.tensor_empty(out_ty, &[])
    } else {
        let dims: Vec<Value> = (0..ndim)
            .map(|d| {
                let i = b.tensor_dim(&x, d);
                b.index_cast(&i, ScalarType::I64)
            })
            .collect();
        b.tensor_from_elements(out_ty, &dims)
    };
    cx.define(output, r, vec![Dim::Static(ndim as u64)]);
    Ok(())
}

/// `Shape_i`: dim `i` of the input as an int64 scalar.
pub fn shape_i(cx: &mut Context, b: &mut Block, node: &Node, i: usize) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let ndim = cx.graph.ty(input).ndim();
    if i >= ndim {
        return Err(format!("dim {i} of an input of rank {ndim}"));
    }
    let x = cx.value(b, input)?;
    let d = b.tensor_dim(&x, i);
    let d = b.index_cast(&d, ScalarType::I64);
    let r = b.tensor_from_elements(tensor_type(cx.graph.ty(output)), &[d]);
    cx.define(output, r, vec![]);
    Ok(())
}

/// `SpecifyShape`: constant dims are checked before the call (downstream code relies on
/// the output's static type); dims given at run time are compared inside the kernel, and
/// the output is the input unchanged. Either failure raises `AssertionError`.
pub fn specify_shape(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x_ty = cx.graph.ty(input).clone();
    let out_ty = cx.graph.ty(output).clone();
    let shape = &node.inputs[1..];
    if shape.len() != x_ty.ndim() {
        return Err(format!("{} dims specified for an input of rank {}", shape.len(), x_ty.ndim()));
    }
    let x = cx.value(b, input)?;
    let in_dims = cx.dims(input);
    let mut dims = in_dims.clone();
    for (axis, &s) in shape.iter().enumerate() {
        let var = &cx.graph.variables[s];
        if var.is_none {
            continue;
        }
        if var.ty.ndim() != 0 || !var.ty.dtype.is_int() {
            return Err(format!("shape entry {axis} is not an integer scalar"));
        }
        if let Some(bytes) = &var.constant {
            let expected = constant_int(bytes, var.ty.dtype);
            if expected < 0 {
                return Err(format!("dim {axis} specified as {expected}"));
            }
            cx.require(in_dims[axis], Dim::Static(expected as u64), name, ErrorKind::Assertion);
            dims[axis] = Dim::Static(expected as u64);
            continue;
        }
        let expected = cx.value(b, s)?;
        let expected = b.tensor_extract(&expected, &[]);
        let expected = scalar::convert(b, &Scalar { value: expected, dtype: var.ty.dtype }, DType::Int64).value;
        let actual = b.tensor_dim(&x, axis);
        let actual = b.index_cast(&actual, ScalarType::I64);
        let differs = b.cmpi(CmpI::Ne, &actual, &expected);
        let byte = b.cast(Cast::ExtUI, &differs, ScalarType::I8);
        let empty = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
        let failed = b.linalg_fill(&byte, &empty);
        cx.add_check(
            failed,
            RuntimeCheck { kind: ErrorKind::Assertion, message: format!("SpecifyShape: dim {axis} of input has another shape than specified") },
        );
    }
    let r = if x.tensor().shape == tensor_type(&out_ty).shape { x } else { b.tensor_cast(&x, tensor_type(&out_ty)) };
    cx.define(output, r, dims);
    Ok(())
}

/// A little-endian integer constant of `dtype` (unsigned 64-bit values above `i64::MAX`
/// come out negative, and are refused as dims).
fn constant_int(bytes: &[u8], dtype: DType) -> i64 {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    let raw = i64::from_le_bytes(buf);
    let bits = dtype.bits();
    if dtype.is_signed_int() && bits < 64 {
        (raw << (64 - bits)) >> (64 - bits)
    } else {
        raw
    }
}
