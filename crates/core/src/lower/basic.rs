//! Constants, `DeepCopyOp`, `FusionBarrier`, `MakeVector`, `TensorFromScalar` and `ScalarFromTensor`.

use super::scalar::{self, Scalar};
use super::shapes::{Dim, DimExpr};
use super::subtensor;
use super::{tensor_type, Context, ErrorKind, IntValue};
use crate::dtype::DType;
use crate::ir::{Node, TensorType, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpI, IndexArg, IteratorType, ScalarType, Value};

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
/// `FusionBarrier`: the input behind an optimization barrier. IREE takes every buffer a
/// dispatch reads or writes as one binding and each dynamic dim as a push constant, and
/// its runtime refuses a dispatch past 32 bindings or 64 constants; pytensor_mlir.fusion
/// splits an elementwise graph with more operands at these barriers.
pub fn fusion_barrier(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x = cx.value(b, input)?;
    let ty = cx.graph.ty(input).clone();
    let sizes: Vec<Value> = (0..ty.ndim()).filter(|&d| ty.shape[d].is_none()).map(|d| b.tensor_dim(&x, d)).collect();
    let r = b.optimization_barrier(&x, &sizes);
    let dims = cx.dims(input);
    cx.define(output, r, dims);
    Ok(())
}

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
    if let Some(v) = cx.int_values(input) {
        cx.set_int_values(output, v);
    }
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
    if dtype.is_int() {
        // A vector of known dims (e.g. `x.shape` rebuilt by a rewrite) stays known.
        let known: Vec<IntValue> = node
            .inputs
            .iter()
            .map(|&i| cx.int_values(i).and_then(|v| v.first().copied()).unwrap_or(IntValue::Unknown))
            .collect();
        if known.iter().any(|v| *v != IntValue::Unknown) {
            cx.set_int_values(output, known);
        }
    }
    Ok(())
}

// ---- Alloc, AllocEmpty, Join, Split ----

/// An output dim given by a 0-d integer shape input: its dim (checkable before the call
/// where the input is a constant or a known dim, else computed in the kernel) and its
/// run-time `index` value, negative sizes raising `ValueError` (as numpy) and read as 0.
pub(super) fn shape_entry(cx: &mut Context, b: &mut Block, s: VarId, what: &str) -> Result<(Dim, Value), String> {
    let known = match cx.int_values(s).as_deref() {
        Some([v]) => Some(*v),
        _ => None,
    };
    match known {
        Some(IntValue::Const(c)) if c < 0 => Err(format!("the constant shape entry {c} is negative")),
        Some(IntValue::Const(c)) => Ok((Dim::Static(c as u64), b.constant_index(c))),
        Some(IntValue::Dim(d)) => Ok((d, subtensor::scalar_index(cx, b, s)?)),
        None | Some(IntValue::Unknown | IntValue::Expr(_)) => {
            let v = subtensor::scalar_index(cx, b, s)?;
            let zero = b.constant_index(0);
            let neg = b.cmpi(CmpI::Slt, &v, &zero);
            subtensor::check(cx, b, &neg, ErrorKind::Value, format!("{what}: negative dimensions are not allowed"));
            let v = b.arith(Arith::MaxSI, &v, &zero);
            // An entry computed from dims (a Scan buffer's length) is that value as a dim,
            // known before the call where it is not negative.
            let dim = match known {
                Some(IntValue::Expr(i)) => Dim::Derived(i),
                _ => cx.runtime_dim(),
            };
            Ok((dim, v))
        }
    }
}

/// `Alloc` and `AllocEmpty`: `value` (zero if `None`) broadcast to the shape inputs. A
/// dim where `value` does not broadcast is `value`'s own: the shape entry must equal it
/// (before the call where known, else in the kernel), so the result never reads past it.
fn alloc_like(cx: &mut Context, b: &mut Block, node: &Node, value: Option<VarId>, shape: &[VarId], what: &str) -> Result<(), String> {
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    let rank = out_ty.ndim();
    if shape.len() != rank {
        return Err(format!("{} shape inputs for an output of rank {rank}", shape.len()));
    }
    let (v, v_ty) = match value {
        Some(v) => (cx.value(b, v)?, cx.graph.ty(v).clone()),
        None => {
            let t = TensorType { dtype: out_ty.dtype, shape: vec![] };
            let e = b.tensor_empty(tensor_type(&t), &[]);
            let z = subtensor::zero_of(b, scalar::storage_type(out_ty.dtype));
            (b.linalg_fill(&z, &e), t)
        }
    };
    if v_ty.ndim() > rank || v_ty.dtype != out_ty.dtype {
        return Err(format!("a value of type {v_ty:?} for an output of type {out_ty:?}"));
    }
    let lead = rank - v_ty.ndim();
    let v_dims = match value {
        Some(var) => cx.dims(var),
        None => vec![],
    };
    let mut dims = Vec::with_capacity(rank);
    let mut sizes = Vec::new();
    for k in 0..rank {
        let (entry, entry_v) = shape_entry(cx, b, shape[k], what)?;
        let own = (k >= lead && !v_ty.broadcastable(k - lead)).then(|| k - lead);
        let (mut dim, size) = match own {
            Some(a) => {
                let actual = b.tensor_dim(&v, a);
                if cx.is_runtime(entry) {
                    let ne = b.cmpi(CmpI::Ne, &actual, &entry_v);
                    subtensor::check(cx, b, &ne, ErrorKind::Value, format!("{what}: the value's dim {a} does not match the shape"));
                } else {
                    cx.require_equal(entry, v_dims[a], what);
                }
                (v_dims[a], actual)
            }
            None => (entry, entry_v),
        };
        match out_ty.shape[k] {
            Some(n) => {
                if cx.is_runtime(dim) && own.is_some() {
                    // The generic would read the value's dim up to the static size.
                    return Err(format!("output dim {k} is static but the value's dim is only known at run time"));
                } else if cx.is_runtime(dim) {
                    let c = b.constant_index(n as i64);
                    let ne = b.cmpi(CmpI::Ne, &size, &c);
                    subtensor::check(cx, b, &ne, ErrorKind::Value, format!("{what}: dim {k} is not the static size {n}"));
                } else {
                    cx.require_equal(dim, Dim::Static(n), what);
                }
                dim = Dim::Static(n);
            }
            None => sizes.push(size),
        }
        dims.push(dim);
    }
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let v_map = AffineMap {
        dims: rank,
        results: (0..v_ty.ndim())
            .map(|a| if v_ty.broadcastable(a) { AffineExpr::Constant(0) } else { AffineExpr::Dim(lead + a) })
            .collect(),
    };
    let r = b.linalg_generic(&[v], &[init], &[v_map, AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |_, args| {
        Ok::<_, String>(vec![args[0].clone()])
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `Alloc(value, *shape)`.
pub fn alloc(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    alloc_like(cx, b, node, Some(node.inputs[0]), &node.inputs[1..], name)
}

/// `AllocEmpty(*shape)`: numpy's `empty` leaves the contents unspecified; zeros here.
pub fn alloc_empty(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    alloc_like(cx, b, node, None, &node.inputs, name)
}

/// A constant axis input, made non-negative for rank `ndim`.
pub(super) fn axis_input(cx: &Context, v: VarId, ndim: usize) -> Result<usize, String> {
    let a = match cx.int_values(v).as_deref() {
        Some([IntValue::Const(a)]) => *a,
        _ => return Err("the axis is not a constant".into()),
    };
    let n = ndim as i64;
    if a < -n || a >= n {
        return Err(format!("axis {a} for rank {ndim}"));
    }
    Ok(a.rem_euclid(n.max(1)) as usize)
}

/// `Join(axis, *tensors)`: the inputs (cast to the output dtype) inserted one after the
/// other into one tensor. Their other dims must agree (`ValueError` before the call).
pub fn join(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    let rank = out_ty.ndim();
    let axis = axis_input(cx, node.inputs[0], rank)?;
    let parts = &node.inputs[1..];
    if parts.is_empty() {
        return Err("no tensors to join".into());
    }
    let mut values = Vec::new();
    for &p in parts {
        let t = cx.graph.ty(p).clone();
        if t.ndim() != rank {
            return Err(format!("an input of rank {} for an output of rank {rank}", t.ndim()));
        }
        let v = cx.value(b, p)?;
        values.push(super::elemwise::cast(b, &v, &t, out_ty.dtype)?);
    }
    let first = cx.dims(parts[0]);
    let mut dims = first.clone();
    for &p in &parts[1..] {
        let d = cx.dims(p);
        for k in (0..rank).filter(|&k| k != axis) {
            cx.require_equal(first[k], d[k], name);
        }
    }
    dims[axis] = cx.derived(DimExpr::Sum(parts.iter().map(|&p| cx.dims(p)[axis]).collect()));
    if let Some(n) = out_ty.shape[axis] {
        cx.require_equal(dims[axis], Dim::Static(n), name);
    }
    for k in 0..rank {
        if let Some(n) = out_ty.shape[k] {
            dims[k] = Dim::Static(n);
        }
    }
    let mut sizes = Vec::new();
    for k in (0..rank).filter(|&k| out_ty.shape[k].is_none()) {
        if k == axis {
            let mut total = b.constant_index(0);
            for v in &values {
                let d = b.tensor_dim(v, axis);
                total = b.arith(Arith::AddI, &total, &d);
            }
            sizes.push(total);
        } else {
            sizes.push(b.tensor_dim(&values[0], k));
        }
    }
    let mut r = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let mut offset = b.constant_index(0);
    for v in &values {
        let offsets: Vec<IndexArg> =
            (0..rank).map(|k| if k == axis { IndexArg::Dyn(offset.clone()) } else { IndexArg::Const(0) }).collect();
        r = b.tensor_insert_slice(v, &r, &offsets);
        let d = b.tensor_dim(v, axis);
        offset = b.arith(Arith::AddI, &offset, &d);
    }
    cx.define(out, r, dims);
    Ok(())
}

/// `Split(x, axis, splits)`: consecutive slices of `x` along `axis`. Their sizes must be
/// non-negative and sum to the dim (`ValueError`: before the call where the sizes are
/// known, else in the kernel); each slice is clamped to `x`, so nothing is read past it.
pub fn split(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (x_var, axis_var, splits_var) = (node.inputs[0], node.inputs[1], node.inputs[2]);
    let x_ty = cx.graph.ty(x_var).clone();
    let s_ty = cx.graph.ty(splits_var).clone();
    let rank = x_ty.ndim();
    let axis = axis_input(cx, axis_var, rank)?;
    let count = node.outputs.len();
    if s_ty.ndim() != 1 || !s_ty.dtype.is_int() {
        return Err("the split sizes are not an integer vector".into());
    }
    let x = cx.value(b, x_var)?;
    let x_dims = cx.dims(x_var);
    let known = cx.int_values(splits_var).filter(|v| v.len() == count);
    let splits = cx.value(b, splits_var)?;
    let n = b.tensor_dim(&x, axis);
    let zero = b.constant_index(0);
    let mut offset = zero.clone();
    let mut raw_sum = zero.clone();
    let mut failed: Option<Value> = None;
    let mut split_dims = Vec::new();
    for i in 0..count {
        let raw = match known.as_ref().map(|k| k[i]) {
            Some(IntValue::Const(c)) => {
                if c < 0 {
                    return Err(format!("the constant split size {c} is negative"));
                }
                split_dims.push(Dim::Static(c as u64));
                b.constant_index(c)
            }
            other => {
                split_dims.push(match other {
                    Some(IntValue::Dim(d)) => d,
                    _ => cx.runtime_dim(),
                });
                let at = b.constant_index(i as i64);
                let e = b.tensor_extract(&splits, &[at]);
                subtensor::int_to_index(b, &e, s_ty.dtype)
            }
        };
        let neg = b.cmpi(CmpI::Slt, &raw, &zero);
        failed = Some(subtensor::or(b, failed, neg));
        let room = b.arith(Arith::SubI, &n, &offset);
        let size = b.arith(Arith::MaxSI, &raw, &zero);
        let size = b.arith(Arith::MinSI, &size, &room);
        let out = node.outputs[i];
        let out_ty = cx.graph.ty(out).clone();
        let offsets: Vec<IndexArg> =
            (0..rank).map(|k| if k == axis { IndexArg::Dyn(offset.clone()) } else { IndexArg::Const(0) }).collect();
        let sizes: Vec<IndexArg> = (0..rank)
            .map(|k| match out_ty.shape[k] {
                Some(s) => IndexArg::Const(s as i64),
                None if k == axis => IndexArg::Dyn(size.clone()),
                None => IndexArg::Dyn(b.tensor_dim(&x, k)),
            })
            .collect();
        let piece = b.tensor_extract_slice(&x, &offsets, &sizes);
        let mut dims = x_dims.clone();
        dims[axis] = split_dims[i];
        for k in 0..rank {
            if let Some(s) = out_ty.shape[k] {
                if cx.is_runtime(dims[k]) {
                    // A slice cut to a static size could reach past x before a kernel
                    // check could stop it.
                    return Err(format!("output dim {k} is static but its size is only known at run time"));
                } else {
                    cx.require_equal(dims[k], Dim::Static(s), name);
                }
                dims[k] = Dim::Static(s);
            }
        }
        cx.define(out, piece, dims);
        offset = b.arith(Arith::AddI, &offset, &size);
        raw_sum = b.arith(Arith::AddI, &raw_sum, &raw);
    }
    let total = cx.derived(DimExpr::Sum(split_dims.clone()));
    if cx.is_runtime(total) {
        let ne = b.cmpi(CmpI::Ne, &raw_sum, &n);
        let f = subtensor::or(b, failed, ne);
        subtensor::check(cx, b, &f, ErrorKind::Value, format!("{name}: the split sizes do not sum to the dim, or one is negative"));
    } else {
        cx.require_equal(total, x_dims[axis], name);
    }
    Ok(())
}
