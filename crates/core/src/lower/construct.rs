//! Construction: `ARange`, `Eye`, `ExtractDiag`, `AllocDiag`, `FillDiagonal`,
//! `FillDiagonalOffset`, `Repeat` and `Bartlett`. (`tri`, `tril` and `triu` are built by
//! PyTensor from `ARange`, `DimShuffle` and `Elemwise` comparisons, so they need no rule of
//! their own.)
//!
//! Sizes given by run-time values are computed in the kernel (`Context::runtime_dim`),
//! like `Alloc`'s; sizes that follow from input dims (a diagonal's length, `arange(0,
//! x.shape[0])`) are derived dims, checkable before the call.

use super::basic::shape_entry;
use super::scalar::{self, Scalar};
use super::shapes::{Dim, DimExpr, IntExpr, IntOp};
use super::subtensor::{self, check, int_to_index, scalar_index};
use super::{tensor_type, Context, ErrorKind, IntValue};
use crate::dtype::DType;
use crate::ir::{Node, TensorType, VarId};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpF, CmpI, IteratorType, MathUnary, ScalarType, Value};

/// The `tensor.empty` sizes and dims of an output whose dims are `dims` with `index`
/// values `sizes`: where PyTensor's type fixes a dim, that size is used and the computed
/// one must equal it (before the call where known, else in the kernel, `ValueError`).
pub(super) fn output_sizes(cx: &mut Context, b: &mut Block, ty: &TensorType, dims: Vec<Dim>, sizes: Vec<Value>, what: &str) -> (Vec<Value>, Vec<Dim>) {
    let mut dynamic = Vec::new();
    let mut out = Vec::new();
    for (k, (dim, size)) in dims.into_iter().zip(sizes).enumerate() {
        match ty.shape[k] {
            Some(n) => {
                if cx.is_runtime(dim) {
                    let c = b.constant_index(n as i64);
                    let ne = b.cmpi(CmpI::Ne, &size, &c);
                    check(cx, b, &ne, ErrorKind::Value, format!("{what}: dim {k} is not the static size {n}"));
                } else {
                    cx.require_equal(dim, Dim::Static(n), what);
                }
                out.push(Dim::Static(n));
            }
            None => {
                dynamic.push(size);
                out.push(dim);
            }
        }
    }
    (dynamic, out)
}

/// A value computed as `dtype` (`i1` for bool) in its tensor storage type.
fn store(b: &mut Block, s: &Scalar, dtype: DType) -> Value {
    let v = scalar::convert(b, s, dtype).value;
    if dtype == DType::Bool {
        b.cast(Cast::ExtUI, &v, ScalarType::I8)
    } else {
        v
    }
}

/// A tensor element as scalar code sees it (bool bytes become `i1`).
fn load(b: &mut Block, v: &Value, dtype: DType) -> Scalar {
    let value = if dtype == DType::Bool {
        let z = b.constant_int(0, ScalarType::I8);
        b.cmpi(CmpI::Ne, v, &z)
    } else {
        v.clone()
    };
    Scalar { value, dtype }
}

fn known_const(cx: &Context, v: VarId) -> Option<i64> {
    match cx.int_values(v).as_deref() {
        Some([IntValue::Const(c)]) => Some(*c),
        _ => None,
    }
}

/// `ARange(start, stop, step)`: numpy's `arange` in the output dtype. Integer outputs are
/// computed exactly in 64-bit integers, `ceil((stop - start) / step)` elements; float
/// outputs in float64 (the length as numpy computes it, `ceil` of the float64 quotient),
/// rounded once to the output dtype. A step of 0 or an infinite length raises
/// `OverflowError` and a NaN one `ValueError`, as the C backend does.
pub fn arange(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    let dtype = out_ty.dtype;
    let [start, stop, step] = node.inputs[..] else { return Err("ARange needs three inputs".into()) };
    let overflow = cx.exception("builtins.OverflowError");
    let zero = b.constant_index(0);
    let one = b.constant_index(1);
    let (len, first, delta) = if dtype.is_int() {
        if [start, stop, step].iter().any(|&v| !cx.graph.ty(v).dtype.is_int()) {
            return Err("an integer ARange of non-integer bounds".into());
        }
        let (s, e, st) = (scalar_index(cx, b, start)?, scalar_index(cx, b, stop)?, scalar_index(cx, b, step)?);
        let is_zero = b.cmpi(CmpI::Eq, &st, &zero);
        check(cx, b, &is_zero, overflow, "arange: overflow while computing length".into());
        let st = b.select(&is_zero, &one, &st);
        // ceil((e - s) / st) for either sign of the step, 0 if not positive.
        let pos = b.cmpi(CmpI::Sgt, &st, &zero);
        let diff = b.arith(Arith::SubI, &e, &s);
        let neg_diff = b.arith(Arith::SubI, &zero, &diff);
        let neg_st = b.arith(Arith::SubI, &zero, &st);
        let num = b.select(&pos, &diff, &neg_diff);
        let den = b.select(&pos, &st, &neg_st);
        let den_m1 = b.arith(Arith::SubI, &den, &one);
        let up = b.arith(Arith::AddI, &num, &den_m1);
        let q = b.arith(Arith::DivSI, &up, &den);
        let nonempty = b.cmpi(CmpI::Sgt, &num, &zero);
        let len = b.select(&nonempty, &q, &zero);
        // Nothing is allocated for a step that raises.
        let len = b.select(&is_zero, &zero, &len);
        (len, Scalar { value: b.index_cast(&s, ScalarType::I64), dtype: DType::Int64 }, Scalar { value: b.index_cast(&st, ScalarType::I64), dtype: DType::Int64 })
    } else if dtype.is_float() {
        // In a kernel: IREE's host code (the VM) has no float64-to-integer conversion.
        let ins = [cx.value(b, start)?, cx.value(b, stop)?, cx.value(b, step)?];
        let in_dtypes = [start, stop, step].map(|v| cx.graph.ty(v).dtype);
        let i64_t = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I64), &[]);
        let flag_nan = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
        let flag_huge = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
        let maps = vec![AffineMap { dims: 0, results: vec![] }; 6];
        let r = b.linalg_generic(&ins, &[i64_t, flag_nan, flag_huge], &maps, &[], |body, args| {
            let f: Vec<Value> = (0..3)
                .map(|k| {
                    let s = load(body, &args[k], in_dtypes[k]);
                    scalar::convert(body, &s, DType::Float64).value
                })
                .collect();
            let diff = body.arith(Arith::SubF, &f[1], &f[0]);
            let q = body.arith(Arith::DivF, &diff, &f[2]);
            // ceil(q) = -floor(-q)
            let neg_q = body.negf(&q);
            let fl = body.math(MathUnary::Floor, &neg_q);
            let ceil = body.negf(&fl);
            let nan = body.cmpf(CmpF::Uno, &q, &q);
            let limit = body.constant_f64(9.2e18, ScalarType::F64);
            let abs = body.math(MathUnary::AbsF, &ceil);
            let huge = body.cmpf(CmpF::Oge, &abs, &limit);
            // Nothing is allocated for a length that raises.
            let bad = body.arith(Arith::OrI, &nan, &huge);
            let zero_f = body.constant_f64(0.0, ScalarType::F64);
            let positive = body.cmpf(CmpF::Ogt, &ceil, &zero_f);
            let safe = body.select(&positive, &ceil, &zero_f);
            let safe = body.select(&bad, &zero_f, &safe);
            let n = body.cast(Cast::FPToSI, &safe, ScalarType::I64);
            let nan = body.cast(Cast::ExtUI, &nan, ScalarType::I8);
            let huge = body.cast(Cast::ExtUI, &huge, ScalarType::I8);
            Ok::<_, String>(vec![n, nan, huge])
        })?;
        cx.add_check(r[1].clone(), super::RuntimeCheck { kind: ErrorKind::Value, message: "arange: cannot compute length".into() });
        cx.add_check(r[2].clone(), super::RuntimeCheck { kind: overflow, message: "arange: overflow while computing length".into() });
        let n = b.tensor_extract(&r[0], &[]);
        let len = b.index_cast(&n, ScalarType::Index);
        let _ = (zero, one);
        (len, Scalar { value: ins[0].clone(), dtype: in_dtypes[0] }, Scalar { value: ins[2].clone(), dtype: in_dtypes[2] })
    } else {
        return Err(format!("ARange of dtype {dtype}"));
    };
    // arange(s, d, st) with constants s >= 0, st > 0 and a known dim d has d[s::st]'s length.
    let dim = match (known_const(cx, start), cx.int_values(stop).as_deref(), known_const(cx, step)) {
        (Some(s), Some([IntValue::Dim(d)]), Some(st)) if s >= 0 && st > 0 && dtype.is_int() => {
            cx.derived(DimExpr::Slice { base: *d, start: Some(s), stop: None, step: st })
        }
        (Some(s), Some([IntValue::Const(e)]), Some(st)) if st != 0 && dtype.is_int() => {
            let n = if st > 0 { (e - s + st - 1).div_euclid(st) } else { (s - e - st - 1).div_euclid(-st) };
            Dim::Static(n.max(0) as u64)
        }
        // Bounds known before the call (integer arguments, dims): max(0, ceil((e - s) / st)),
        // as -((s - e) // st) with floor division for either sign of the step (invalid
        // for a zero step, which fails the checks before the call).
        _ if dtype.is_int() => match (cx.int_expr(start), cx.int_expr(stop), cx.int_expr(step)) {
            (Some(s), Some(e), Some(st)) => {
                let bin = |op, a, b| IntExpr::Bin(op, Box::new(a), Box::new(b));
                let len = IntExpr::Neg(Box::new(bin(IntOp::FloorDiv, bin(IntOp::Sub, s, e), st)));
                cx.derived(DimExpr::Value(bin(IntOp::Max, len, IntExpr::Const(0))))
            }
            _ => cx.runtime_dim(),
        },
        _ => cx.runtime_dim(),
    };
    let (sizes, dims) = output_sizes(cx, b, &out_ty, vec![dim], vec![len], "ARange");
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |body, _| {
        let i = body.linalg_index(0);
        let i = body.index_cast(&i, ScalarType::I64);
        let v = if dtype.is_int() {
            let off = body.arith(Arith::MulI, &i, &delta.value);
            let v = body.arith(Arith::AddI, &first.value, &off);
            Scalar { value: v, dtype: DType::Int64 }
        } else {
            // Float: `first` and `delta` are the 0-d input tensors, read here.
            let read = |body: &mut Block, s: &Scalar| {
                let e = body.tensor_extract(&s.value, &[]);
                let e = load(body, &e, s.dtype);
                scalar::convert(body, &e, DType::Float64).value
            };
            let (f0, d) = (read(body, &first), read(body, &delta));
            let fi = body.cast(Cast::SIToFP, &i, ScalarType::F64);
            // numpy's `start + i * delta`, rounded twice as numpy does.
            let off = body.arith(Arith::MulF, &fi, &d);
            Scalar { value: body.arith(Arith::AddF, &f0, &off), dtype: DType::Float64 }
        };
        Ok::<_, String>(vec![store(body, &v, dtype)])
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `Eye(n, m, k)`: an `n` x `m` matrix of the output dtype, one where `col - row == k`.
pub fn eye(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    let [n, m, k] = node.inputs[..] else { return Err("Eye needs three inputs".into()) };
    let (dn, vn) = shape_entry(cx, b, n, "Eye")?;
    let (dm, vm) = shape_entry(cx, b, m, "Eye")?;
    let kv = scalar_index(cx, b, k)?;
    let (sizes, dims) = output_sizes(cx, b, &out_ty, vec![dn, dm], vec![vn, vm], "Eye");
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let dtype = out_ty.dtype;
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |body, _| {
        let (i, j) = (body.linalg_index(0), body.linalg_index(1));
        let d = body.arith(Arith::SubI, &j, &i);
        let on = body.cmpi(CmpI::Eq, &d, &kv);
        Ok::<_, String>(vec![store(body, &Scalar { value: on, dtype: DType::Bool }, dtype)])
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// The length of diagonal `offset` of an `n1` x `n2` plane, as a dim and an `index`.
fn diag_len(cx: &mut Context, b: &mut Block, n1: (Dim, Value), n2: (Dim, Value), offset: i64) -> (Dim, Value) {
    let zero = b.constant_index(0);
    let off = b.constant_index(offset.abs());
    // max(0, min(n1, n2 - offset)) for offset >= 0; max(0, min(n1 + offset, n2)) else.
    let (short, other) = if offset >= 0 { (n2, n1) } else { (n1, n2) };
    let cut = b.arith(Arith::SubI, &short.1, &off);
    let cut = b.arith(Arith::MaxSI, &cut, &zero);
    let len = b.arith(Arith::MinSI, &cut, &other.1);
    let cut_dim = if offset == 0 { short.0 } else { cx.derived(DimExpr::Slice { base: short.0, start: Some(offset.abs()), stop: None, step: 1 }) };
    let dim = if cut_dim == other.0 { cut_dim } else { cx.derived(DimExpr::Min(vec![cut_dim, other.0])) };
    (dim, len)
}

/// `ExtractDiag(offset, axis1, axis2)`: `x`'s other axes in order, then the diagonal,
/// read at `(i + max(0, -offset), i + max(0, offset))` of the plane.
pub fn extract_diag(cx: &mut Context, b: &mut Block, node: &Node, offset: i64, axis1: usize, axis2: usize) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let x_ty = cx.graph.ty(x_var).clone();
    let out_ty = cx.graph.ty(out).clone();
    let rank = x_ty.ndim();
    if axis1 >= rank || axis2 >= rank || axis1 == axis2 || out_ty.ndim() + 1 != rank {
        return Err(format!("axes {axis1}, {axis2} of a rank-{rank} input"));
    }
    let x = cx.value(b, x_var)?;
    let x_dims = cx.dims(x_var);
    let rest: Vec<usize> = (0..rank).filter(|&a| a != axis1 && a != axis2).collect();
    let mut dims: Vec<Dim> = rest.iter().map(|&a| x_dims[a]).collect();
    let mut sizes: Vec<Value> = rest.iter().map(|&a| b.tensor_dim(&x, a)).collect();
    let (n1, n2) = (b.tensor_dim(&x, axis1), b.tensor_dim(&x, axis2));
    let (ld, lv) = diag_len(cx, b, (x_dims[axis1], n1), (x_dims[axis2], n2), offset);
    dims.push(ld);
    sizes.push(lv);
    let (sizes, dims) = output_sizes(cx, b, &out_ty, dims, sizes, "ExtractDiag");
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let out_rank = out_ty.ndim();
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(out_rank)], &vec![IteratorType::Parallel; out_rank], |body, _| {
        let i = body.linalg_index(out_rank - 1);
        let mut idx = vec![None; rank];
        for (p, &a) in rest.iter().enumerate() {
            idx[a] = Some(body.linalg_index(p));
        }
        let (o1, o2) = (body.constant_index((-offset).max(0)), body.constant_index(offset.max(0)));
        idx[axis1] = Some(body.arith(Arith::AddI, &i, &o1));
        idx[axis2] = Some(body.arith(Arith::AddI, &i, &o2));
        let idx: Vec<Value> = idx.into_iter().map(Option::unwrap).collect();
        Ok::<_, String>(vec![body.tensor_extract(&x, &idx)])
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `AllocDiag(offset, axis1, axis2)`: zeros, with `x`'s last axis on diagonal `offset`
/// of new axes `axis1` < `axis2`, each of length `n + |offset|`; `x`'s other axes fill the
/// remaining positions in order.
pub fn alloc_diag(cx: &mut Context, b: &mut Block, node: &Node, offset: i64, axis1: usize, axis2: usize) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let x_ty = cx.graph.ty(x_var).clone();
    let out_ty = cx.graph.ty(out).clone();
    let rank = out_ty.ndim();
    if x_ty.ndim() == 0 || rank != x_ty.ndim() + 1 || axis1 >= axis2 || axis2 >= rank {
        return Err(format!("axes {axis1}, {axis2} for a rank-{} input", x_ty.ndim()));
    }
    let x = cx.value(b, x_var)?;
    let x_dims = cx.dims(x_var);
    let last = x_ty.ndim() - 1;
    let n = b.tensor_dim(&x, last);
    let off = b.constant_index(offset.abs());
    let big = b.arith(Arith::AddI, &n, &off);
    let big_dim = if offset == 0 { x_dims[last] } else { cx.derived(DimExpr::Offset(vec![x_dims[last]], offset.abs())) };
    let rest: Vec<usize> = (0..rank).filter(|&a| a != axis1 && a != axis2).collect();
    let mut dims = Vec::new();
    let mut sizes = Vec::new();
    let mut src = 0;
    for a in 0..rank {
        if a == axis1 || a == axis2 {
            dims.push(big_dim);
            sizes.push(big.clone());
        } else {
            dims.push(x_dims[src]);
            sizes.push(b.tensor_dim(&x, src));
            src += 1;
        }
    }
    let (sizes, dims) = output_sizes(cx, b, &out_ty, dims, sizes, "AllocDiag");
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let elem = scalar::storage_type(out_ty.dtype);
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
        let (p, q) = (body.linalg_index(axis1), body.linalg_index(axis2));
        let d = body.arith(Arith::SubI, &q, &p);
        let k = body.constant_index(offset);
        let on = body.cmpi(CmpI::Eq, &d, &k);
        let i = if offset >= 0 { p } else { q };
        let mut idx: Vec<Value> = rest.iter().map(|&a| body.linalg_index(a)).collect();
        idx.push(i);
        let x = x.clone();
        Ok::<_, String>(body.scf_if(&on, &[elem], |t| vec![t.tensor_extract(&x, &idx)], |e| vec![subtensor::zero_of(e, elem)]))
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `FillDiagonal(a, val)` (every index equal) and `FillDiagonalOffset(a, val, offset)`
/// (a matrix, `col - row == offset`): `a` with those elements set to `val`, which
/// PyTensor has already cast to `a`'s dtype.
pub fn fill_diagonal(cx: &mut Context, b: &mut Block, node: &Node, offset: Option<i64>) -> Result<(), String> {
    let (a_var, v_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let a_ty = cx.graph.ty(a_var).clone();
    let v_ty = cx.graph.ty(v_var).clone();
    let rank = a_ty.ndim();
    if rank < 2 || v_ty.ndim() != 0 || v_ty.dtype != a_ty.dtype {
        return Err(format!("a value of type {v_ty:?} for an input of type {a_ty:?}"));
    }
    let k = match offset {
        Some(k) => b.constant_index(k),
        None => {
            if rank != 2 {
                return Err("FillDiagonalOffset of a rank other than 2".into());
            }
            let o = *node.inputs.get(2).ok_or("FillDiagonalOffset without an offset")?;
            scalar_index(cx, b, o)?
        }
    };
    let a = cx.value(b, a_var)?;
    let v = cx.value(b, v_var)?;
    let sizes: Vec<Value> = (0..rank).filter(|&d| a_ty.shape[d].is_none()).map(|d| b.tensor_dim(&a, d)).collect();
    let init = b.tensor_empty(tensor_type(&a_ty), &sizes);
    let maps = [AffineMap::identity(rank), AffineMap { dims: rank, results: vec![] }, AffineMap::identity(rank)];
    let r = b.linalg_generic(&[a, v], &[init], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
        let i0 = body.linalg_index(0);
        // A matrix: col - row == k; higher ranks (offset 0): every index equals the first.
        let i1 = body.linalg_index(1);
        let diff = body.arith(Arith::SubI, &i1, &i0);
        let mut on = body.cmpi(CmpI::Eq, &diff, &k);
        for d in 2..rank {
            let i = body.linalg_index(d);
            let eq = body.cmpi(CmpI::Eq, &i, &i0);
            on = body.arith(Arith::AndI, &on, &eq);
        }
        Ok::<_, String>(vec![body.select(&on, &args[1], &args[0])])
    })?;
    let dims = cx.dims(a_var);
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `Repeat(x, repeats)` along `axis`: a scalar count repeats every element; a vector
/// (one count per element, or one for all) repeats each its own number of times, the
/// output's length (their sum) computed in the kernel. An output element finds its
/// source by a binary search over the running sums. Negative counts raise `ValueError`.
pub fn repeat(cx: &mut Context, b: &mut Block, node: &Node, axis: usize) -> Result<(), String> {
    let (x_var, r_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let x_ty = cx.graph.ty(x_var).clone();
    let r_ty = cx.graph.ty(r_var).clone();
    let out_ty = cx.graph.ty(out).clone();
    let rank = x_ty.ndim();
    if axis >= rank || !r_ty.dtype.is_int() || r_ty.ndim() > 1 {
        return Err(format!("repeats of type {r_ty:?} along axis {axis} of a rank-{rank} input"));
    }
    let x = cx.value(b, x_var)?;
    let x_dims = cx.dims(x_var);
    let n = b.tensor_dim(&x, axis);
    let zero = b.constant_index(0);
    let mut dims = x_dims.clone();
    let mut sizes: Vec<Value> = (0..rank).map(|a| b.tensor_dim(&x, a)).collect();
    if r_ty.ndim() == 0 {
        let r = scalar_index(cx, b, r_var)?;
        let neg = b.cmpi(CmpI::Slt, &r, &zero);
        check(cx, b, &neg, ErrorKind::Value, "repeats may not contain negative values.".into());
        let r = b.arith(Arith::MaxSI, &r, &zero);
        sizes[axis] = b.arith(Arith::MulI, &n, &r);
        dims[axis] = match known_const(cx, r_var) {
            Some(c) if c >= 0 => cx.derived(DimExpr::Product(vec![x_dims[axis], Dim::Static(c as u64)])),
            _ => cx.derived(DimExpr::Repeated { scope: cx.scope, repeats: r_var, n: x_dims[axis] }),
        };
        let (sz, dims) = output_sizes(cx, b, &out_ty, dims, sizes, "Repeat");
        let init = b.tensor_empty(tensor_type(&out_ty), &sz);
        let one = b.constant_index(1);
        let r_safe = b.arith(Arith::MaxSI, &r, &one);
        let res = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
            let mut idx: Vec<Value> = (0..rank).map(|a| body.linalg_index(a)).collect();
            idx[axis] = body.arith(Arith::DivSI, &idx[axis], &r_safe);
            Ok::<_, String>(vec![body.tensor_extract(&x, &idx)])
        })?;
        cx.define(out, res[0].clone(), dims);
        return Ok(());
    }
    // A vector of counts: its length must be n, or 1 (then it is the scalar case).
    let reps = cx.value(b, r_var)?;
    let m = b.tensor_dim(&reps, 0);
    let one = b.constant_index(1);
    let m_is_one = b.cmpi(CmpI::Eq, &m, &one);
    let m_is_n = b.cmpi(CmpI::Eq, &m, &n);
    let ok_len = b.arith(Arith::OrI, &m_is_one, &m_is_n);
    let true_ = b.constant_int(1, ScalarType::I1);
    let bad_len = b.arith(Arith::XOrI, &ok_len, &true_);
    check(cx, b, &bad_len, ErrorKind::Value, format!("operands could not be broadcast together: repeats of the wrong length for axis {axis}"));
    // Running sums (inclusive) of the counts, as int64: ends[i] = sum(counts[..=i]).
    let rd = r_ty.dtype;
    let m_dyn: Vec<Value> = if r_ty.shape[0].is_none() { vec![m.clone()] } else { vec![] };
    let ends_ty = TensorType { dtype: DType::Int64, shape: r_ty.shape.clone() };
    let counts_init = b.tensor_empty(tensor_type(&ends_ty), &m_dyn);
    let counts = b.linalg_generic(&[reps], &[counts_init], &[AffineMap::identity(1), AffineMap::identity(1)], &[IteratorType::Parallel], |body, args| {
        let i = int_to_index(body, &args[0], rd);
        let z = body.constant_index(0);
        let i = body.arith(Arith::MaxSI, &i, &z);
        Ok::<_, String>(vec![body.index_cast(&i, ScalarType::I64)])
    })?;
    // The total and whether any count is negative: one reduction. (Reading the total off
    // the running sums on the host instead crashed IREE 3.13's runtime, a double free.)
    let reps = cx.value(b, r_var)?;
    let sum_init = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I64), &[]);
    let z64 = b.constant_int(0, ScalarType::I64);
    let sum_init = b.linalg_fill(&z64, &sum_init);
    let flag_init = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
    let z8 = b.constant_int(0, ScalarType::I8);
    let flag_init = b.linalg_fill(&z8, &flag_init);
    let scalar_map = AffineMap { dims: 1, results: vec![] };
    let red = b.linalg_generic(
        &[reps.clone()],
        &[sum_init, flag_init],
        &[AffineMap::identity(1), scalar_map.clone(), scalar_map],
        &[IteratorType::Reduction],
        |body, args| {
            let i = int_to_index(body, &args[0], rd);
            let z = body.constant_index(0);
            let lt = body.cmpi(CmpI::Slt, &i, &z);
            let i = body.arith(Arith::MaxSI, &i, &z);
            let i = body.index_cast(&i, ScalarType::I64);
            let lt = body.cast(Cast::ExtUI, &lt, ScalarType::I8);
            Ok::<_, String>(vec![body.arith(Arith::AddI, &args[1], &i), body.arith(Arith::OrI, &args[2], &lt)])
        },
    )?;
    cx.add_check(red[1].clone(), super::RuntimeCheck { kind: ErrorKind::Value, message: "repeats may not contain negative values.".into() });
    let ends = super::cumulative::inclusive_sum_i64(b, &counts[0]);
    let total = b.tensor_extract(&red[0], &[]);
    let total = b.index_cast(&total, ScalarType::Index);
    let has = b.cmpi(CmpI::Sgt, &m, &zero);
    // One count for all: n * count (read from the input, guarded for an empty vector).
    let first_count = {
        let (r, z) = (reps.clone(), zero.clone());
        b.scf_if(&has, &[scalar::storage_type(rd)], |t| vec![t.tensor_extract(&r, &[z])], |e| vec![subtensor::zero_of(e, scalar::storage_type(rd))]).remove(0)
    };
    let first_count = int_to_index(b, &first_count, rd);
    let first_count = b.arith(Arith::MaxSI, &first_count, &zero);
    let n_times = b.arith(Arith::MulI, &n, &first_count);
    let size = b.select(&m_is_one, &n_times, &total);
    // Counts of the wrong length raise: nothing is computed (or read) then.
    let size = b.select(&bad_len, &zero, &size);
    sizes[axis] = size;
    // The length is a function of the counts and n alone (the select above included).
    dims[axis] = cx.derived(DimExpr::Repeated { scope: cx.scope, repeats: r_var, n: x_dims[axis] });
    let (sz, dims) = output_sizes(cx, b, &out_ty, dims, sizes, "Repeat");
    let init = b.tensor_empty(tensor_type(&out_ty), &sz);
    let fc_safe = b.arith(Arith::MaxSI, &first_count, &one);
    let res = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
        let mut idx: Vec<Value> = (0..rank).map(|a| body.linalg_index(a)).collect();
        let j = idx[axis].clone();
        let j64 = body.index_cast(&j, ScalarType::I64);
        let found = super::cumulative::covering_position(body, &ends, &m, &j64);
        let by_scalar = body.arith(Arith::DivSI, &j, &fc_safe);
        idx[axis] = body.select(&m_is_one, &by_scalar, &found);
        Ok::<_, String>(vec![body.tensor_extract(&x, &idx)])
    })?;
    cx.define(out, res[0].clone(), dims);
    Ok(())
}

/// `Bartlett(M)`: numpy's Bartlett window, `max(M, 0)` float64 points: with `n = 1 - M +
/// 2k`, `1 + n / (M - 1)` where `n <= 0`, else `1 - n / (M - 1)` (numpy's formula, so the
/// same roundings); `[1.0]` for `M == 1`.
pub fn bartlett(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    if out_ty.dtype != DType::Float64 || out_ty.ndim() != 1 {
        return Err("Bartlett needs a float64 vector output".into());
    }
    let m = scalar_index(cx, b, node.inputs[0])?;
    let zero = b.constant_index(0);
    let len = b.arith(Arith::MaxSI, &m, &zero);
    let dim = match known_const(cx, node.inputs[0]) {
        Some(c) => Dim::Static(c.max(0) as u64),
        None => cx.runtime_dim(),
    };
    let (sizes, dims) = output_sizes(cx, b, &out_ty, vec![dim], vec![len], "Bartlett");
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let f64t = ScalarType::F64;
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |body, _| {
        let k = body.linalg_index(0);
        let one = body.constant_index(1);
        let two_k = body.arith(Arith::AddI, &k, &k);
        let one_minus_m = body.arith(Arith::SubI, &one, &m);
        let n = body.arith(Arith::AddI, &one_minus_m, &two_k);
        let n = body.index_cast(&n, ScalarType::I64);
        let n = body.cast(Cast::SIToFP, &n, f64t);
        let m_minus_1 = body.arith(Arith::SubI, &m, &one);
        let m_minus_1 = body.index_cast(&m_minus_1, ScalarType::I64);
        let m_minus_1 = body.cast(Cast::SIToFP, &m_minus_1, f64t);
        let q = body.arith(Arith::DivF, &n, &m_minus_1);
        let fone = body.constant_f64(1.0, f64t);
        let up = body.arith(Arith::AddF, &fone, &q);
        let down = body.arith(Arith::SubF, &fone, &q);
        let fzero = body.constant_f64(0.0, f64t);
        // `n <= 0` read off the quotient (same sign: M > 1 wherever it is used). IREE
        // folds `sitofp(n) <= 0.0` into an i64 compare, which on lavapipe (Mesa 22.3.6)
        // came out false for negative n (bartlett(5) was [2, 1.5, 1, 0.5, 0]; the SPIR-V
        // read right); a compare of floats is left as it is.
        let rising = body.cmpf(CmpF::Ole, &q, &fzero);
        let w = body.select(&rising, &up, &down);
        let single = body.cmpi(CmpI::Eq, &m, &one);
        Ok::<_, String>(vec![body.select(&single, &fone, &w)])
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}
