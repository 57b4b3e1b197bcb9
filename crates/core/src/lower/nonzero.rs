//! `Nonzero` (`pt.nonzero`, `nonzero_values`, `flatnonzero`): for each axis of `a`, the
//! int64 coordinates of its non-zero elements in row-major order, as `np.nonzero` gives
//! them (NaN counts as non-zero, -0.0 as zero).
//!
//! The outputs' length is the count of non-zero elements, known only once a kernel has
//! counted them (a run-time dim, as `Repeat`'s length by counts). Then the `j`-th output
//! element is found without a scatter: `ends`, the running count over the flattened
//! input, is non-decreasing, so the flat position of the `j`-th non-zero element is the
//! first `k` with `ends[k] > j` (a binary search per output element, all in parallel),
//! and its coordinates follow from `k` and the input's dims.

use super::shapes::DimExpr;
use super::{cumulative, scalar, tensor_type, Context};
use crate::dtype::DType;
use crate::ir::{Graph, Node, Op, TensorType, VarId};
use crate::mlir::{AffineMap, Arith, Block, CmpF, CmpI, IteratorType, ScalarType, TensorType as MlirTensor, Value};

pub fn nonzero(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let a_var = node.inputs[0];
    let ty = cx.graph.ty(a_var).clone();
    let rank = ty.ndim();
    if rank == 0 || node.outputs.len() != rank || node.outputs.iter().any(|&o| cx.graph.ty(o).dtype != DType::Int64) {
        return Err(format!("Nonzero of {ty:?} with {} outputs", node.outputs.len()));
    }
    if ty.dtype.is_complex() {
        return Err(format!("Nonzero of {}", ty.dtype));
    }
    let a = cx.value(b, a_var)?;
    let dims: Vec<Value> = (0..rank).map(|d| b.tensor_dim(&a, d)).collect();
    let flat = if rank == 1 { a.clone() } else { b.tensor_collapse(&a, &[(0..rank).collect()]) };
    let n = b.tensor_dim(&flat, 0);

    // 1 where an element is non-zero, as int64.
    let elem = scalar::storage_type(ty.dtype);
    let vec_ty = TensorType { dtype: DType::Int64, shape: vec![None] };
    let init = b.tensor_empty(tensor_type(&vec_ty), &[n.clone()]);
    let ones = b.linalg_generic(&[flat.clone()], &[init], &[AffineMap::identity(1), AffineMap::identity(1)], &[IteratorType::Parallel], |body, args| {
        let nonzero = if elem.is_float() {
            let z = body.constant_f64(0.0, elem);
            body.cmpf(CmpF::Une, &args[0], &z)
        } else {
            let z = body.constant_int(0, elem);
            body.cmpi(CmpI::Ne, &args[0], &z)
        };
        let one = body.constant_int(1, ScalarType::I64);
        let zero = body.constant_int(0, ScalarType::I64);
        Ok::<_, String>(vec![body.select(&nonzero, &one, &zero)])
    })?;
    // The count by a reduction of its own (as Repeat's total: reading it off the running
    // counts on the host crashed IREE 3.13's runtime).
    let sum_init = b.tensor_empty(MlirTensor::new(vec![], ScalarType::I64), &[]);
    let z64 = b.constant_int(0, ScalarType::I64);
    let sum_init = b.linalg_fill(&z64, &sum_init);
    let total = b.linalg_generic(&[ones[0].clone()], &[sum_init], &[AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }], &[IteratorType::Reduction], |body, args| {
        Ok::<_, String>(vec![body.arith(Arith::AddI, &args[0], &args[1])])
    })?;
    let ends = cumulative::inclusive_sum_i64(b, &ones[0]);
    let count = b.tensor_extract(&total[0], &[]);
    let count = b.index_cast(&count, ScalarType::Index);

    let outs: Vec<Value> = (0..rank).map(|_| b.tensor_empty(tensor_type(&vec_ty), &[count.clone()])).collect();
    let maps = vec![AffineMap::identity(1); rank];
    let coords = b.linalg_generic(&[], &outs, &maps, &[IteratorType::Parallel], |body, _| {
        let j = body.linalg_index(0);
        let j64 = body.index_cast(&j, ScalarType::I64);
        let mut k = cumulative::covering_position(body, &ends, &n, &j64);
        // Row-major coordinates of flat position k, last axis first.
        let mut out = vec![None; rank];
        for d in (0..rank).rev() {
            if d == 0 {
                out[d] = Some(k.clone());
            } else {
                out[d] = Some(body.arith(Arith::RemUI, &k, &dims[d]));
                k = body.arith(Arith::DivUI, &k, &dims[d]);
            }
        }
        Ok::<_, String>(out.into_iter().map(|c| body.index_cast(&c.unwrap(), ScalarType::I64)).collect())
    })?;
    // One length per mask: PyTensor's rewrite of `x[m] * y[m]` gives y's mask a shape check
    // (`CheckAndRaise`) of its own, so two Nonzeros of one mask meet; their counts are one
    // dim, and the product needs no check.
    let len = cx.derived(DimExpr::NonzeroCount { scope: cx.scope, var: checked_value(cx.graph, a_var) });
    for (&o, c) in node.outputs.iter().zip(coords) {
        cx.define(o, c, vec![len]);
    }
    Ok(())
}

/// The variable `v` passes through: through `CheckAndRaise`s, which return their first
/// input once their conditions hold.
fn checked_value(graph: &Graph, mut v: VarId) -> VarId {
    while let Some(node) = graph.nodes.iter().find(|n| n.outputs.contains(&v)) {
        match node.op {
            Op::CheckAndRaise { .. } => v = node.inputs[0],
            _ => break,
        }
    }
    v
}
