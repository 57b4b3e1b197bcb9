//! Sorting: `SortOp`, `ArgSortOp` (IREE's `iree_linalg_ext.sort`) and `SearchsortedOp`
//! (a binary search per value).
//!
//! Order is numpy's: NaN after every number, -0.0 equal to 0.0. `ArgSortOp` is always
//! stable (ties ordered by index in the comparator itself), which is what numpy's
//! "stable"/"mergesort" give and one valid order for its "quicksort".
//!
//! Cost: IREE 3.13 lowers `iree_linalg_ext.sort` on `llvm-cpu` to a scalar loop nest per
//! line that is quadratic in the sorted length (see the README); it is the stopgap until
//! a merge sort of our own.

use super::basic::axis_input;
use super::subtensor::int_to_index;
use super::{tensor_type, Context, ErrorKind};
use crate::dtype::DType;
use crate::ir::{Node, TensorType};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpF, CmpI, IteratorType, ScalarType, Value};

/// numpy's sort order on stored elements of `dtype`: whether `a` goes before `b`.
fn less(b: &mut Block, x: &Value, y: &Value, dtype: DType) -> Value {
    if dtype.is_float() {
        let lt = b.cmpf(CmpF::Olt, x, y);
        let y_nan = b.cmpf(CmpF::Uno, y, y);
        let x_nan = b.cmpf(CmpF::Uno, x, x);
        let t = b.constant_int(1, ScalarType::I1);
        let x_num = b.arith(Arith::XOrI, &x_nan, &t);
        let nan_last = b.arith(Arith::AndI, &y_nan, &x_num);
        b.arith(Arith::OrI, &lt, &nan_last)
    } else if dtype.is_signed_int() {
        b.cmpi(CmpI::Slt, x, y)
    } else {
        b.cmpi(CmpI::Ult, x, y)
    }
}

/// Whether neither of `a` and `b` goes before the other (NaN ties NaN).
fn tie(b: &mut Block, x: &Value, y: &Value, dtype: DType) -> Value {
    if dtype.is_float() {
        let eq = b.cmpf(CmpF::Oeq, x, y);
        let x_nan = b.cmpf(CmpF::Uno, x, x);
        let y_nan = b.cmpf(CmpF::Uno, y, y);
        let both = b.arith(Arith::AndI, &x_nan, &y_nan);
        b.arith(Arith::OrI, &eq, &both)
    } else {
        b.cmpi(CmpI::Eq, x, y)
    }
}

/// `SortOp(x, axis)` and `ArgSortOp(x, axis)` along a constant axis.
pub fn sort(cx: &mut Context, b: &mut Block, node: &Node, arg: bool) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let ty = cx.graph.ty(x_var).clone();
    let rank = ty.ndim();
    if rank == 0 {
        return Err("sorting a 0-d tensor".into());
    }
    let axis_var = *node.inputs.get(1).ok_or("no axis input")?;
    let axis = axis_input(cx, axis_var, rank)?;
    let out_ty = cx.graph.ty(out).clone();
    if (arg && out_ty.dtype != DType::Int64) || (!arg && out_ty.dtype != ty.dtype) {
        return Err(format!("an output of dtype {}", out_ty.dtype));
    }
    let x = cx.value(b, x_var)?;
    let dtype = ty.dtype;
    let sizes: Vec<Value> = (0..rank).filter(|&d| ty.shape[d].is_none()).map(|d| b.tensor_dim(&x, d)).collect();
    let copy_init = b.tensor_empty(tensor_type(&ty), &sizes);
    let idx_ty = TensorType { dtype: DType::Int64, shape: ty.shape.clone() };
    let mut outs = vec![copy_init];
    let mut maps = vec![AffineMap::identity(rank), AffineMap::identity(rank)];
    if arg {
        outs.push(b.tensor_empty(tensor_type(&idx_ty), &sizes));
        maps.push(AffineMap::identity(rank));
    }
    // The keys are sorted in place: a copy, with the indices made by the same generic
    // (IREE 3.13 fused an index-only generic into the sort's dispatch and failed to
    // compile it: an unbounded stack allocation).
    let seeded = b.linalg_generic(&[x], &outs, &maps, &vec![IteratorType::Parallel; rank], |body, args| {
        let mut ys = vec![args[0].clone()];
        if arg {
            let i = body.linalg_index(axis);
            ys.push(body.index_cast(&i, ScalarType::I64));
        }
        Ok::<_, String>(ys)
    })?;
    let sorted = b.linalg_ext_sort(axis, &seeded, |body, a| {
        let lt = less(body, &a[0], &a[1], dtype);
        if !arg {
            return lt;
        }
        let eq = tie(body, &a[0], &a[1], dtype);
        let first = body.cmpi(CmpI::Slt, &a[2], &a[3]);
        let stable = body.arith(Arith::AndI, &eq, &first);
        body.arith(Arith::OrI, &lt, &stable)
    });
    if arg {
        // The sorted keys must be used: IREE 3.13 gives a sort result nothing reads a
        // stack temporary of the sorted length, which fails to compile for dynamic
        // lengths ("unbounded stack allocations"). They are read by a check that they are
        // in order (one pass; it never fails unless the sort is wrong).
        let keys = sorted[0].clone();
        let flag_init = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
        let z8 = b.constant_int(0, ScalarType::I8);
        let flag_init = b.linalg_fill(&z8, &flag_init);
        let maps = [AffineMap::identity(rank), AffineMap { dims: rank, results: vec![] }];
        let keys_in = keys.clone();
        let bad = b.linalg_generic(&[keys], &[flag_init], &maps, &vec![IteratorType::Reduction; rank], |body, args| {
            let i = body.linalg_index(axis);
            let zero = body.constant_index(0);
            let has_prev = body.cmpi(CmpI::Sgt, &i, &zero);
            let mut prev: Vec<Value> = (0..rank).map(|d| body.linalg_index(d)).collect();
            let one = body.constant_index(1);
            let im1 = body.arith(Arith::SubI, &i, &one);
            prev[axis] = body.arith(Arith::MaxSI, &im1, &zero);
            let p = body.tensor_extract(&keys_in, &prev);
            let out_of_order = less(body, &args[0], &p, dtype);
            let bad = body.arith(Arith::AndI, &has_prev, &out_of_order);
            let bad = body.cast(Cast::ExtUI, &bad, ScalarType::I8);
            Ok::<_, String>(vec![body.arith(Arith::OrI, &args[1], &bad)])
        })?;
        let kind = cx.exception("builtins.RuntimeError");
        cx.add_check(bad[0].clone(), super::RuntimeCheck { kind, message: "internal error: ArgSortOp's keys came out unsorted".into() });
    }
    let dims = cx.dims(x_var);
    cx.define(out, sorted[if arg { 1 } else { 0 }].clone(), dims);
    Ok(())
}

/// `SearchsortedOp(x, v[, sorter])`: for each element of `v`, the first index of sorted
/// `x` (read through `sorter` if given) where it can be inserted keeping the order:
/// before equal elements (`side="left"`) or after them (`"right"`). A sorter of another
/// length than `x` or with an index out of range raises `ValueError` as numpy does.
pub fn searchsorted(cx: &mut Context, b: &mut Block, node: &Node, right: bool) -> Result<(), String> {
    let (x_var, v_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (x_ty, v_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(v_var).clone());
    if x_ty.ndim() != 1 || x_ty.dtype != v_ty.dtype || cx.graph.ty(out).dtype != DType::Int64 {
        return Err(format!("searching {v_ty:?} in {x_ty:?} (only one dtype for both)"));
    }
    let dtype = x_ty.dtype;
    let x = cx.value(b, x_var)?;
    let v = cx.value(b, v_var)?;
    let n = b.tensor_dim(&x, 0);
    let sorter = match node.inputs.get(2) {
        Some(&s) if !cx.graph.variables[s].is_none => {
            let s_ty = cx.graph.ty(s).clone();
            if s_ty.ndim() != 1 || !s_ty.dtype.is_int() {
                return Err(format!("a sorter of type {s_ty:?}"));
            }
            let (sd, xd) = (cx.dims(s)[0], cx.dims(x_var)[0]);
            cx.require(sd, xd, "SearchsortedOp (sorter.size must equal a.size)", ErrorKind::Value);
            let st = cx.value(b, s)?;
            // Any index out of [0, n): one flag by a reduction.
            let flag_init = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
            let z8 = b.constant_int(0, ScalarType::I8);
            let flag_init = b.linalg_fill(&z8, &flag_init);
            let sdt = s_ty.dtype;
            let n_c = n.clone();
            let bad = b.linalg_generic(&[st.clone()], &[flag_init], &[AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }], &[IteratorType::Reduction], |body, args| {
                let i = int_to_index(body, &args[0], sdt);
                let out = body.cmpi(CmpI::Uge, &i, &n_c);
                let out = body.cast(Cast::ExtUI, &out, ScalarType::I8);
                Ok::<_, String>(vec![body.arith(Arith::OrI, &args[1], &out)])
            })?;
            cx.add_check(bad[0].clone(), super::RuntimeCheck { kind: ErrorKind::Value, message: "Sorter index out of range.".into() });
            Some((st, sdt))
        }
        _ => None,
    };
    let rank = v_ty.ndim();
    let out_ty = TensorType { dtype: DType::Int64, shape: v_ty.shape.clone() };
    let sizes: Vec<Value> = (0..rank).filter(|&d| v_ty.shape[d].is_none()).map(|d| b.tensor_dim(&v, d)).collect();
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let r = b.linalg_generic(&[v], &[init], &[AffineMap::identity(rank), AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, args| {
        let key = args[0].clone();
        let lo = body.constant_index(0);
        let found = body.scf_while(
            &[lo, n.clone()],
            |c, s| c.cmpi(CmpI::Slt, &s[0], &s[1]),
            |w, s| {
                let one = w.constant_index(1);
                let sum = w.arith(Arith::AddI, &s[0], &s[1]);
                let mid = w.shrui(&sum, &one);
                let at = match &sorter {
                    None => mid.clone(),
                    Some((st, sdt)) => {
                        let e = w.tensor_extract(st, &[mid.clone()]);
                        let i = int_to_index(w, &e, *sdt);
                        // Clamped: an out-of-range sorter raises after the call.
                        let zero = w.constant_index(0);
                        let last = w.arith(Arith::SubI, &n, &one);
                        let i = w.arith(Arith::MaxSI, &i, &zero);
                        w.arith(Arith::MinSI, &i, &last)
                    }
                };
                let xm = w.tensor_extract(&x, &[at]);
                let go_right = if right {
                    let t = w.constant_int(1, ScalarType::I1);
                    let before = less(w, &key, &xm, dtype);
                    w.arith(Arith::XOrI, &before, &t)
                } else {
                    less(w, &xm, &key, dtype)
                };
                let mid1 = w.arith(Arith::AddI, &mid, &one);
                let lo = w.select(&go_right, &mid1, &s[0]);
                let hi = w.select(&go_right, &s[1], &mid);
                vec![lo, hi]
            },
        );
        Ok::<_, String>(vec![body.index_cast(&found[0], ScalarType::I64)])
    })?;
    let dims = cx.dims(v_var);
    cx.define(out, r[0].clone(), dims);
    Ok(())
}
