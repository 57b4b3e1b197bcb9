//! `OpFromGraph` (and its subclasses, e.g. `Einsum`): the inner graph lowered in place,
//! its inputs bound to the node's input values. The inner graph shares the outer
//! lowering's shape checks, run-time checks and derived dims, so a dim of the outer graph
//! stays the same dim inside (and a check the inner graph needs runs before the call).

use super::shapes::Dim;
use super::{lower_node, op_name, tensor_type, Context, IntValue};
use crate::ir::{Graph, Node, TensorType, VarId};
use crate::mlir::{Block, Value};

pub fn op_from_graph(cx: &mut Context, b: &mut Block, node: &Node, inner: &Graph) -> Result<(), String> {
    if inner.inputs.len() != node.inputs.len() || inner.outputs.len() != node.outputs.len() {
        return Err(format!(
            "an inner graph of {} inputs and {} outputs for a node of {} and {}",
            inner.inputs.len(),
            inner.outputs.len(),
            node.inputs.len(),
            node.outputs.len()
        ));
    }
    let mut bound = Vec::with_capacity(node.inputs.len());
    for (&outer, &iv) in node.inputs.iter().zip(&inner.inputs) {
        let (o_ty, i_ty) = (cx.graph.ty(outer).clone(), inner.ty(iv).clone());
        if o_ty.dtype != i_ty.dtype || o_ty.ndim() != i_ty.ndim() {
            return Err(format!("an input of type {o_ty:?} for an inner input of type {i_ty:?}"));
        }
        let mut v = cx.value(b, outer)?;
        // The inner graph's rules build their types from its own (possibly less static) types.
        if tensor_type(&o_ty) != tensor_type(&i_ty) {
            v = b.tensor_cast(&v, tensor_type(&i_ty));
        }
        bound.push((iv, v, cx.dims(outer), cx.int_values(outer)));
    }
    let outputs = lower_graph(cx, b, inner, bound)?;
    for (&o, (mut v, dims, known, i_ty)) in node.outputs.iter().zip(outputs) {
        let o_ty = cx.graph.ty(o).clone();
        if tensor_type(&o_ty) != tensor_type(&i_ty) {
            if o_ty.dtype != i_ty.dtype || o_ty.ndim() != i_ty.ndim() {
                return Err(format!("an inner output of type {i_ty:?} for an output of type {o_ty:?}"));
            }
            v = b.tensor_cast(&v, tensor_type(&o_ty));
        }
        cx.define(o, v, dims);
        if let Some(k) = known {
            cx.set_int_values(o, k);
        }
    }
    Ok(())
}

/// An inner graph's output as lowered: value, dims, known integer values, inner type.
pub(super) type InnerOutput = (Value, Vec<Dim>, Option<Vec<IntValue>>, TensorType);

/// Lowers `inner` in place with its inputs bound to (variable, value, dims, known
/// integer values), sharing the outer lowering's checks and derived dims; returns its
/// outputs.
pub(super) fn lower_graph(
    cx: &mut Context,
    b: &mut Block,
    inner: &Graph,
    bound: Vec<(VarId, Value, Vec<Dim>, Option<Vec<IntValue>>)>,
) -> Result<Vec<InnerOutput>, String> {
    let n = inner.variables.len();
    let mut icx = Context {
        graph: inner,
        values: vec![None; n],
        dims: vec![None; n],
        shape_checks: std::mem::take(&mut cx.shape_checks),
        checks: std::mem::take(&mut cx.checks),
        dim_exprs: std::mem::take(&mut cx.dim_exprs),
        int_values: vec![None; n],
        refusal: None,
        exceptions: std::mem::take(&mut cx.exceptions),
        scope: cx.scopes,
        scopes: cx.scopes + 1,
        writes_inputs: cx.writes_inputs,
        optimization_barriers: cx.optimization_barriers,
        sequential_kernels: cx.sequential_kernels,
        written_inputs: cx.written_inputs.take(),
        branches: super::ifelse::branches(inner),
    };
    for (iv, v, dims, known) in bound {
        icx.define(iv, v, dims);
        if let Some(k) = known {
            icx.set_int_values(iv, k);
        }
    }
    let mut result: Result<Vec<InnerOutput>, String> = Ok(Vec::new());
    for (k, inner_node) in inner.nodes.iter().enumerate() {
        // An IfElse's rule lowers the nodes of its branches.
        if icx.branches[k].is_some() {
            continue;
        }
        if let Err(e) = lower_node(&mut icx, b, inner_node) {
            result = Err(format!("inner {}: {e}", op_name(inner_node)));
            break;
        }
    }
    if let Ok(outs) = &mut result {
        for &o in &inner.outputs {
            match icx.value(b, o) {
                Ok(v) => outs.push((v, icx.dims(o), icx.int_values(o), inner.ty(o).clone())),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
    }
    cx.shape_checks = icx.shape_checks;
    cx.checks = icx.checks;
    cx.dim_exprs = icx.dim_exprs;
    cx.exceptions = icx.exceptions;
    cx.scopes = icx.scopes;
    cx.writes_inputs = icx.writes_inputs;
    cx.optimization_barriers = icx.optimization_barriers;
    cx.sequential_kernels = icx.sequential_kernels;
    cx.written_inputs = icx.written_inputs;
    result
}
