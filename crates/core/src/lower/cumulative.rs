//! `CumOp` (cumsum, cumprod): IREE's `iree_linalg_ext.scan` along the axis, in the
//! input's dtype (integers wrap, as the C backend's `PyArray_CumSum` in the same dtype).
//! `axis=None` needs no case: PyTensor flattens the input first.

use super::{tensor_type, Context};
use crate::dtype::DType;
use crate::ir::{Node, TensorType};
use crate::mlir::{Arith, Block, CmpI, ScalarType, Value};

/// The inclusive scan of `x` along `axis` by `op`, starting from `identity`.
fn scan(b: &mut Block, x: &Value, ty: &TensorType, axis: usize, op: Arith, identity: Value) -> Value {
    let rank = ty.ndim();
    let sizes: Vec<Value> = (0..rank).filter(|&d| ty.shape[d].is_none()).map(|d| b.tensor_dim(x, d)).collect();
    let init = b.tensor_empty(tensor_type(ty), &sizes);
    let acc_ty = TensorType { dtype: ty.dtype, shape: (0..rank).filter(|&d| d != axis).map(|d| ty.shape[d]).collect() };
    let acc_sizes: Vec<Value> = (0..rank).filter(|&d| d != axis && ty.shape[d].is_none()).map(|d| b.tensor_dim(x, d)).collect();
    let acc = b.tensor_empty(tensor_type(&acc_ty), &acc_sizes);
    let acc = b.linalg_fill(&identity, &acc);
    b.linalg_ext_scan(x, &init, &acc, axis, |body, a, v| body.arith(op, a, v))
}

/// Running sums of an int64 vector.
pub(super) fn inclusive_sum_i64(b: &mut Block, v: &Value) -> Value {
    let ty = TensorType { dtype: DType::Int64, shape: v.tensor().shape.clone() };
    let zero = b.constant_int(0, ScalarType::I64);
    scan(b, v, &ty, 0, Arith::AddI, zero)
}

/// The first `k` in `[0, len)` with `ends[k] > j` (`len` if none), by binary search: where
/// `ends` are running counts (non-decreasing), the position whose count covers the `j`-th
/// unit (`j` an int64). Inside a kernel body, one search per element.
pub(super) fn covering_position(body: &mut Block, ends: &Value, len: &Value, j: &Value) -> Value {
    let lo = body.constant_index(0);
    super::search::partition_point(body, &lo, len, |w, mid| {
        let e = w.tensor_extract(ends, &[mid.clone()]);
        w.cmpi(CmpI::Sle, &e, j)
    })
}

/// `CumOp(axis, mode)`: `mode` add or mul along `axis`.
pub fn cumop(cx: &mut Context, b: &mut Block, node: &Node, axis: usize, mul: bool) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let ty = cx.graph.ty(x_var).clone();
    if cx.graph.ty(out).dtype != ty.dtype || ty.dtype == DType::Bool || axis >= ty.ndim() {
        return Err(format!("a CumOp along axis {axis} of {ty:?} to {:?}", cx.graph.ty(out)));
    }
    let elem = super::scalar::storage_type(ty.dtype);
    let (op, identity) = match (ty.dtype.is_float(), mul) {
        (true, false) => (Arith::AddF, b.constant_f64(0.0, elem)),
        (true, true) => (Arith::MulF, b.constant_f64(1.0, elem)),
        (false, false) => (Arith::AddI, b.constant_int(0, elem)),
        (false, true) => (Arith::MulI, b.constant_int(1, elem)),
    };
    let x = cx.value(b, x_var)?;
    let r = scan(b, &x, &ty, axis, op, identity);
    let dims = cx.dims(x_var);
    cx.define(out, r, dims);
    Ok(())
}
