//! `DimShuffle`: transpose, drop broadcastable axes, insert new ones; a copying
//! `linalg.generic` that IREE fuses into its consumers. `Shape`, `Shape_i` and
//! `SpecifyShape`.

use super::scalar::{self, Scalar};
use super::shapes::{BoolExpr, Dim, DimExpr, IntExpr, IntOp};
use super::subtensor;
use super::{tensor_type, Context, ErrorKind, IntValue, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::Node;
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpI, IndexArg, IteratorType, ScalarType, Value};

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
    let known = cx.dims(input).into_iter().map(IntValue::Dim).collect();
    cx.set_int_values(output, known);
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
    let known = IntValue::Dim(cx.dims(input)[i]);
    cx.set_int_values(output, vec![known]);
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
pub(super) fn constant_int(bytes: &[u8], dtype: DType) -> i64 {
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

/// `Reshape(x, shape)`: `x`'s elements in C order under the shape vector's dims (one entry
/// may be -1: the rest of the size). Where the shape's entries are constants or known dims
/// (`Shape`, `Shape_i`, `MakeVector` of those), the sizes are checked before the call
/// (`ValueError`) and the output dims are known; otherwise they are checked in the kernel
/// and, on failure, the output is a 0-element slice of `x` (never more than `x` holds),
/// the entries that are known keeping their dims.
pub fn reshape(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (x_var, s_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let out_ty = cx.graph.ty(out).clone();
    let s_ty = cx.graph.ty(s_var).clone();
    let rank = out_ty.ndim();
    // An empty shape (to 0-d) may come as a float64 constant.
    let int_or_empty = s_ty.dtype.is_int() || s_ty.shape.first() == Some(&Some(0));
    if s_ty.ndim() != 1 || !int_or_empty || s_ty.shape[0].is_some_and(|n| n as usize != rank) {
        return Err(format!("a shape of type {s_ty:?} for an output of rank {rank}"));
    }
    let x = cx.value(b, x_var)?;
    let x_dims = cx.dims(x_var);
    let known = if rank == 0 {
        Some(vec![])
    } else {
        cx.int_values(s_var).filter(|v| v.len() == rank && !v.contains(&IntValue::Unknown))
    };
    let shape = cx.value(b, s_var)?;
    let (zero, one) = (b.constant_index(0), b.constant_index(1));
    let flat = b.tensor_flatten(&x);
    let total = b.tensor_dim(&flat, 0);
    // Each entry at run time; -1 marks the entry computed from the others.
    let mut entries = Vec::with_capacity(rank);
    for k in 0..rank {
        let at = b.constant_index(k as i64);
        let e = b.tensor_extract(&shape, &[at]);
        entries.push(subtensor::int_to_index(b, &e, s_ty.dtype));
    }
    let minus_one = b.constant_index(-1);
    let mut known_product = one.clone();
    let mut fills = zero.clone();
    let mut bad_entry: Option<Value> = None;
    for e in &entries {
        let is_fill = b.cmpi(CmpI::Eq, e, &minus_one);
        let as_one = b.select(&is_fill, &one, e);
        known_product = b.arith(Arith::MulI, &known_product, &as_one);
        let c = b.select(&is_fill, &one, &zero);
        fills = b.arith(Arith::AddI, &fills, &c);
        let below = b.cmpi(CmpI::Slt, e, &minus_one);
        bad_entry = Some(subtensor::or(b, bad_entry, below));
    }
    // The -1 entry's size; a zero divisor only where the check below fails.
    let is_zero = b.cmpi(CmpI::Eq, &known_product, &zero);
    let divisor = b.select(&is_zero, &one, &known_product);
    let fill = b.arith(Arith::DivUI, &total, &divisor);
    let mut sizes: Vec<Value> = Vec::with_capacity(rank);
    for e in &entries {
        let is_fill = b.cmpi(CmpI::Eq, e, &minus_one);
        sizes.push(b.select(&is_fill, &fill, e));
    }
    let mut dims: Vec<Dim>;
    let src;
    match known {
        Some(known) if known.iter().any(|v| matches!(v, IntValue::Expr(_))) => {
            // Entries computed before the call (integer arguments), any of which may be
            // -1: each dim is its entry, or the size over the product of the others.
            let entries: Vec<IntExpr> = known.iter().map(|v| super::int_expr_of(*v)).collect::<Option<_>>().ok_or("an unknown shape entry")?;
            let bin = |op, a: IntExpr, b: IntExpr| IntExpr::Bin(op, Box::new(a), Box::new(b));
            let is_fill = |e: &IntExpr| Box::new(BoolExpr::Eq(e.clone(), IntExpr::Const(-1)));
            let den = entries
                .iter()
                .map(|e| IntExpr::Select(is_fill(e), Box::new(IntExpr::Const(1)), Box::new(e.clone())))
                .reduce(|a, b| bin(IntOp::Mul, a, b))
                .unwrap_or(IntExpr::Const(1));
            let size = cx.derived(DimExpr::Product(x_dims.clone()));
            // A zero product of the others leaves the fill invalid: numpy raises too.
            let fill = bin(IntOp::FloorDiv, IntExpr::Dim(size), den);
            dims = entries
                .iter()
                .map(|e| cx.derived(DimExpr::Value(IntExpr::Select(is_fill(e), Box::new(fill.clone()), Box::new(e.clone())))))
                .collect();
            let after = cx.derived(DimExpr::Product(dims.clone()));
            cx.require_equal(size, after, name);
            src = flat;
        }
        Some(known) => {
            let mut fill_at = None;
            dims = Vec::with_capacity(rank);
            for (k, v) in known.iter().enumerate() {
                dims.push(match *v {
                    IntValue::Const(-1) if fill_at.is_none() => {
                        fill_at = Some(k);
                        Dim::Static(0)
                    }
                    IntValue::Const(c) if c < 0 => return Err(format!("the shape entry {c}")),
                    IntValue::Const(c) => Dim::Static(c as u64),
                    IntValue::Dim(d) => d,
                    IntValue::Unknown | IntValue::Expr(_) => unreachable!("filtered out above"),
                });
            }
            if let Some(k) = fill_at {
                let others = dims.iter().enumerate().filter(|&(j, _)| j != k).map(|(_, d)| *d).collect();
                dims[k] = cx.derived(DimExpr::Quotient { num: x_dims.clone(), den: others });
            }
            let before = cx.derived(DimExpr::Product(x_dims.clone()));
            let after = cx.derived(DimExpr::Product(dims.clone()));
            cx.require_equal(before, after, name);
            src = flat;
        }
        None => {
            // Entries known as dims or constants (`(x.shape[0], s)`) keep them: on failure
            // only the other dynamic dims are zeroed, which empties the output as long as
            // there is one (else every dynamic dim is zeroed and none is known).
            let partial = cx.int_values(s_var).filter(|v| v.len() == rank);
            let mut keep: Vec<Option<Dim>> = (0..rank)
                .map(|k| match partial.as_ref().map(|v| v[k]) {
                    Some(IntValue::Dim(d)) => Some(d),
                    Some(IntValue::Const(c)) if c >= 0 => Some(Dim::Static(c as u64)),
                    _ => None,
                })
                .collect();
            if !(0..rank).any(|k| keep[k].is_none() && out_ty.shape[k].is_none()) {
                keep = vec![None; rank];
            }
            dims = Vec::with_capacity(rank);
            for k in &keep {
                dims.push(k.unwrap_or_else(|| cx.runtime_dim()));
            }
            let mut product = one.clone();
            for s in &sizes {
                product = b.arith(Arith::MulI, &product, s);
            }
            let wrong_size = b.cmpi(CmpI::Ne, &product, &total);
            let many = b.cmpi(CmpI::Ugt, &fills, &one);
            let f = subtensor::or(b, bad_entry, wrong_size);
            let mut f = subtensor::or(b, Some(f), many);
            for (k, s) in sizes.iter().enumerate() {
                if let Some(n) = out_ty.shape[k] {
                    let c = b.constant_index(n as i64);
                    let ne = b.cmpi(CmpI::Ne, s, &c);
                    f = subtensor::or(b, Some(f), ne);
                }
            }
            subtensor::check(cx, b, &f, ErrorKind::Value, format!("{name}: cannot reshape to the requested shape"));
            if rank == 0 || out_ty.shape.iter().all(|d| d.is_some()) {
                return Err("a run-time shape for an output whose dims are all static".into());
            }
            // On failure every dynamic dim not kept is 0, so the slice below is empty.
            let t = b.constant_int(1, ScalarType::I1);
            let ok = b.arith(Arith::XOrI, &f, &t);
            for (k, s) in sizes.iter_mut().enumerate() {
                if out_ty.shape[k].is_none() && keep[k].is_none() {
                    *s = b.select(&ok, s, &zero);
                }
            }
            let mut count = one.clone();
            for (k, s) in sizes.iter().enumerate() {
                let s = match out_ty.shape[k] {
                    Some(n) => b.constant_index(n as i64),
                    None => s.clone(),
                };
                count = b.arith(Arith::MulI, &count, &s);
            }
            src = b.tensor_extract_slice(&flat, &[IndexArg::Const(0)], &[IndexArg::Dyn(count)]);
        }
    }
    for k in 0..rank {
        if let Some(n) = out_ty.shape[k] {
            // A run-time dim was checked with the sizes above.
            if !cx.is_runtime(dims[k]) {
                cx.require_equal(dims[k], Dim::Static(n), name);
            }
            dims[k] = Dim::Static(n);
        }
    }
    // (The size was checked equal before the call: tensor_unflatten may rely on it.)
    let r = if rank == 0 {
        // A 0-d result: the vector holds one element once the check has passed.
        let v = b.tensor_extract_slice(&src, &[IndexArg::Const(0)], &[IndexArg::Const(1)]);
        b.tensor_unflatten(&v, tensor_type(&out_ty), &[])
    } else {
        let args: Vec<IndexArg> = (0..rank)
            .map(|k| match out_ty.shape[k] {
                Some(n) => IndexArg::Const(n as i64),
                None => IndexArg::Dyn(sizes[k].clone()),
            })
            .collect();
        b.tensor_unflatten(&src, tensor_type(&out_ty), &args)
    };
    cx.define(out, r, dims);
    Ok(())
}
