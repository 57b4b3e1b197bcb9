//! `IfElse`: an `scf.if` in the host program choosing between the two branches' values.
//!
//! Lazy, as PyTensor's VM evaluates it: a node whose outputs are used only by one branch
//! of an `IfElse` (directly, or through other such nodes) is lowered inside that branch's
//! region, so the branch not taken computes nothing and raises nothing (an index out of
//! bounds there is not an error). `branches` decides where each node is lowered; the main
//! loop (and an inner graph's) skips the nodes it puts in a branch, and this rule lowers
//! them in their region, in the graph's order.
//!
//! A run-time check of a node in a branch becomes a flag the branch yields (the other
//! branch yields 0). A shape equality a branch's node needs is still checked before the
//! call, whichever branch is taken: those checks read only the inputs' dims.
//!
//! The two branches' values may differ in shape: the result's type keeps the static dims
//! both agree on (the output's PyTensor type), and a dim the branches give differently is
//! known only at run time.

use super::shapes::Dim;
use super::{lower_node, op_name, tensor_type, Context, RuntimeCheck};
use crate::ir::{Graph, Node, Op, VarId};
use crate::mlir::{Block, CmpF, CmpI, ScalarType, TensorType, Type, Value};

/// A branch of an `IfElse` node: the node's index in its graph, and whether it is the
/// then-branch.
pub type Branch = (usize, bool);

/// For each node of `graph`, the innermost `IfElse` branch that holds every use of its
/// outputs (`None`: the function's body). A use as an `IfElse`'s then (else) value lies in
/// that node's then (else) branch; its condition, and any other node's input, lies where
/// the using node is lowered; a graph output lies in the body.
pub fn branches(graph: &Graph) -> Vec<Option<Branch>> {
    let mut users: Vec<Vec<(usize, usize)>> = vec![Vec::new(); graph.variables.len()];
    for (k, node) in graph.nodes.iter().enumerate() {
        for (pos, &v) in node.inputs.iter().enumerate() {
            users[v].push((k, pos));
        }
    }
    let mut owner: Vec<Option<Branch>> = vec![None; graph.nodes.len()];
    // Users come after their producers: in reverse order, every user is placed first.
    for k in (0..graph.nodes.len()).rev() {
        let mut place: Option<Option<Branch>> = None;
        for &o in &graph.nodes[k].outputs {
            let uses = users[o].iter().map(|&(u, pos)| match graph.nodes[u].op {
                Op::IfElse { n_outs } if pos > 0 => Some((u, pos <= n_outs)),
                _ => owner[u],
            });
            let output = graph.outputs.contains(&o).then_some(None);
            for r in uses.chain(output) {
                place = Some(place.map_or(r, |q| common(&owner, q, r)));
            }
        }
        owner[k] = place.flatten();
    }
    owner
}

/// The innermost branch that holds both `a` and `b` (a branch lies in the one its
/// `IfElse` node is lowered in).
fn common(owner: &[Option<Branch>], a: Option<Branch>, b: Option<Branch>) -> Option<Branch> {
    let mut outer_a = Vec::new();
    let mut r = a;
    while let Some(br) = r {
        outer_a.push(br);
        r = owner[br.0];
    }
    let mut r = b;
    while let Some(br) = r {
        if outer_a.contains(&br) {
            return Some(br);
        }
        r = owner[br.0];
    }
    None
}

pub fn ifelse(cx: &mut Context, b: &mut Block, node: &Node, n_outs: usize) -> Result<(), String> {
    if node.inputs.len() != 1 + 2 * n_outs || node.outputs.len() != n_outs {
        return Err(format!("a node of {} inputs and {} outputs for n_outs={n_outs}", node.inputs.len(), node.outputs.len()));
    }
    let graph = cx.graph;
    let here = graph.nodes.iter().position(|n| std::ptr::eq(n, node)).ok_or("an IfElse node not in the graph being lowered")?;
    let cond = truthy(cx, b, node.inputs[0])?;
    let types: Vec<Type> = node.outputs.iter().map(|&o| tensor_type(graph.ty(o)).into()).collect();
    let checks_before = cx.checks.len();
    let mut lowered = Vec::with_capacity(2);
    for (then, values) in [(true, &node.inputs[1..=n_outs]), (false, &node.inputs[1 + n_outs..])] {
        let mut region = b.region();
        // A value defined in the region (a constant written at its first use included) is
        // not visible after it.
        let outside = cx.values.clone();
        let branch = lower_branch(cx, &mut region, (here, then), values, &types);
        cx.values = outside;
        let (values, dims) = branch?;
        let flags: Vec<(Value, RuntimeCheck)> = cx.checks.drain(checks_before..).collect();
        lowered.push((region, values, dims, flags));
    }
    let (mut other, mut other_values, other_dims, other_flags) = lowered.pop().ok_or("no else branch")?;
    let (mut then, mut then_values, then_dims, then_flags) = lowered.pop().ok_or("no then branch")?;
    // Each branch yields its own checks' flags and zeros for the other's.
    for (v, _) in &then_flags {
        then_values.push(v.clone());
        other_values.push(no_failure(&mut other));
    }
    for (v, _) in &other_flags {
        then_values.push(no_failure(&mut then));
        other_values.push(v.clone());
    }
    let all_types: Vec<Type> = types.iter().cloned().chain(then_flags.iter().chain(&other_flags).map(|(v, _)| v.ty().clone())).collect();
    // IREE 3.13's inline execution model failed on a branch yielding constant flags
    // ("ref is null" creating a buffer view in module.__init): the full HAL, as for loops.
    cx.optimization_barriers = true;
    let results = b.scf_if_regions(&cond, &all_types, (then, &then_values), (other, &other_values));
    for (k, &o) in node.outputs.iter().enumerate() {
        let static_shape = &graph.ty(o).shape;
        let dims = then_dims[k]
            .iter()
            .zip(&other_dims[k])
            .zip(static_shape)
            .map(|((&t, &e), s)| match s {
                Some(size) => Dim::Static(*size),
                None if t == e => t,
                None => cx.runtime_dim(),
            })
            .collect();
        cx.define(o, results[k].clone(), dims);
    }
    for (flag, (_, check)) in results[n_outs..].iter().zip(then_flags.into_iter().chain(other_flags)) {
        cx.add_check(flag.clone(), check);
    }
    Ok(())
}

/// Lowers the nodes of `branch` in `region`, in the graph's order; returns the branch's
/// `values` (cast to the results' `types`) and their dims.
fn lower_branch(cx: &mut Context, region: &mut Block, branch: Branch, values: &[VarId], types: &[Type]) -> Result<(Vec<Value>, Vec<Vec<Dim>>), String> {
    let graph = cx.graph;
    let side = if branch.1 { "then" } else { "else" };
    for (k, n) in graph.nodes.iter().enumerate() {
        if cx.branches[k] == Some(branch) {
            lower_node(cx, region, n).map_err(|e| format!("in its {side} branch, {}: {e}", op_name(n)))?;
        }
    }
    let mut out = Vec::with_capacity(values.len());
    let mut dims = Vec::with_capacity(values.len());
    for (&v, ty) in values.iter().zip(types) {
        let mut value = cx.value(region, v)?;
        if value.ty() != ty {
            let Type::Tensor(t) = ty else { return Err("a result that is not a tensor".into()) };
            value = region.tensor_cast(&value, t.clone());
        }
        out.push(value);
        dims.push(cx.dims(v));
    }
    Ok((out, dims))
}

/// The scalar condition as an `i1`: nonzero is true (NaN too), as Python's `bool` says.
fn truthy(cx: &mut Context, b: &mut Block, v: VarId) -> Result<Value, String> {
    if cx.graph.ty(v).ndim() != 0 {
        return Err("a condition that is not a scalar".into());
    }
    let c = cx.value(b, v)?;
    let s = b.tensor_extract(&c, &[]);
    let elem = s.scalar();
    Ok(if elem.is_float() {
        let zero = b.constant_f64(0.0, elem);
        b.cmpf(CmpF::Une, &s, &zero)
    } else if elem == ScalarType::I1 {
        s
    } else {
        let zero = b.constant_int(0, elem);
        b.cmpi(CmpI::Ne, &s, &zero)
    })
}

/// A run-time check's flag that reports nothing (`tensor<i8>` zero).
fn no_failure(b: &mut Block) -> Value {
    let e = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let zero = b.constant_int(0, ScalarType::I8);
    b.linalg_fill(&zero, &e)
}
