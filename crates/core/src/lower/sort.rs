//! Sorting: `SortOp`, `ArgSortOp` (a merge sort) and `SearchsortedOp`
//! (a binary search per value).
//!
//! Order is numpy's: NaN after every number, -0.0 equal to 0.0. Both are always stable
//! (the merge takes ties from the earlier run), which is what numpy's "stable"/"mergesort"
//! give and one valid order for its "quicksort".
//!
//! The sort is a merge sort of our own (O(n log^2 n) work, every pass one parallel
//! generic): IREE 3.13 lowers `iree_linalg_ext.sort` on `llvm-cpu` to a loop per line
//! that is quadratic in its length (measured: 1.1 s for 16,000 float64), and fails to
//! compile it for dynamic lengths when a result goes unused.

use super::search::partition_point;
use super::basic::axis_input;
use super::subtensor::int_to_index;
use super::{tensor_type, Context, ErrorKind};
use crate::dtype::DType;
use crate::ir::{Node, TensorType};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpF, CmpI, IteratorType, ScalarType, Value};

/// Merge passes for a dynamic length: lines up to 2^31 - 1 elements. Every constant the
/// kernels see fits a signed 32-bit index, which SPIR-V targets (Vulkan, Metal) compile
/// `index` to (IREE 3.13 fails to legalize `arith.constant 4294967296 : index` there).
const MAX_PASSES: u32 = 31;

/// numpy's sort order on stored elements of `dtype`: whether `a` goes before `b`.
pub(super) fn less(b: &mut Block, x: &Value, y: &Value, dtype: DType) -> Value {
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
    let sorted = merge_sort(cx, b, &x, &ty, axis, arg)?;
    let dims = cx.dims(x_var);
    cx.define(out, sorted, dims);
    Ok(())
}

/// `x` (of type `ty`) sorted along `axis` in numpy's order, stably: the sorted values, or
/// (`arg`) the int64 positions along the axis that sort it.
pub(super) fn merge_sort(cx: &mut Context, b: &mut Block, x: &Value, ty: &TensorType, axis: usize, arg: bool) -> Result<Value, String> {
    let rank = ty.ndim();
    let dtype = ty.dtype;
    let sizes: Vec<Value> = (0..rank).filter(|&d| ty.shape[d].is_none()).map(|d| b.tensor_dim(&x, d)).collect();
    let idx_ty = TensorType { dtype: DType::Int64, shape: ty.shape.clone() };
    // One tensor is carried through the passes: a copy of the keys (`SortOp`; never the
    // input itself, which an output must not alias) or the indices along the axis
    // (`ArgSortOp`, keys read through them from the input). Each made by a generic of its
    // own: measured with IREE 3.13, tensors read by `tensor.extract` from the results of
    // one two-result generic came back wrong (the indices unpermuted).
    let (carried_ty, keys0) = if arg { (&idx_ty, x.clone()) } else { (ty, x.clone()) };
    let init = b.tensor_empty(tensor_type(carried_ty), &sizes);
    let ins: Vec<Value> = if arg { vec![] } else { vec![x.clone()] };
    let maps = vec![AffineMap::identity(rank); ins.len() + 1];
    let seeded = b.linalg_generic(&ins, &[init], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
        if arg {
            let i = body.linalg_index(axis);
            Ok::<_, String>(vec![body.index_cast(&i, ScalarType::I64)])
        } else {
            Ok(vec![args[0].clone()])
        }
    })?;
    let n = b.tensor_dim(&x, axis);
    let one = b.constant_index(1);
    let inits = vec![one, seeded[0].clone()];
    let out_types: Vec<TensorType> = if arg { vec![idx_ty.clone()] } else { vec![ty.clone()] };
    // Bottom-up merge sort: runs of `width` merged pairwise while `width < n`, one
    // generic per pass computing every output element from its rank in the merge of
    // its two runs (a binary search for how many come from the first run). Ties take
    // the first run's element, so the sort is stable. O(n log^2 n) work, parallel.
    // The passes are unrolled, not a host loop: measured with IREE 3.13, a function
    // with two sorts written as `scf.while` loops carrying tensors returned one loop's
    // initial tensor as the other's result. Pass k merges runs of 2^k; a pass whose
    // width is at least the length copies. `MAX_PASSES` passes sort lines shorter than 2^MAX_PASSES,
    // longer ones raise `ValueError` (nothing is read out of bounds either way).
    let limit = b.constant_index((1i64 << MAX_PASSES) - 1);
    let too_long = b.cmpi(CmpI::Sgt, &n, &limit);
    super::subtensor::check(cx, b, &too_long, ErrorKind::Value, format!("sorting more than 2^{MAX_PASSES} elements along an axis"));
    let w = &mut *b;
    let mut current = inits[1].clone();
    let passes = match ty.shape[axis] {
        // A static length needs only ceil(log2(n)) passes.
        Some(len) => (0..MAX_PASSES).take_while(|k| (1u64 << k) < len).count() as u32,
        None => MAX_PASSES,
    };
    // The widths are values the compiler cannot fold (`n >> 31` is 0 for any length that
    // passes the check above; 31, not 63, as a shift past a 32-bit index's width is
    // undefined), so every pass is one and the same kernel with its width as an operand:
    // IREE compiles it once instead of once per pass.
    let c31 = w.constant_index(MAX_PASSES as i64);
    let rt_zero = w.shrui(&n, &c31);
    for k in 0..passes {
        let v = vec![inits[0].clone(), current.clone()];
        {
            let c = w.constant_index(1i64 << k);
            let width = w.arith(Arith::AddI, &rt_zero, &c);
            let two_w = w.arith(Arith::AddI, &width, &width);
            let carried_sizes: Vec<Value> = (0..rank).filter(|&d| ty.shape[d].is_none()).map(|d| w.tensor_dim(&v[1], d)).collect();
            let empties: Vec<Value> = out_types.iter().map(|t| w.tensor_empty(tensor_type(t), &carried_sizes)).collect();
            let carried: Vec<Value> = v[1..].to_vec();
            let maps = vec![AffineMap::identity(rank); empties.len()];
            let merged = w.linalg_generic(&[], &empties, &maps, &vec![IteratorType::Parallel; rank], |body, _| {
                let idx: Vec<Value> = (0..rank).map(|d| body.linalg_index(d)).collect();
                let carried = &carried[0];
                let (zero, one) = (body.constant_index(0), body.constant_index(1));
                let last = body.arith(Arith::SubI, &n, &one);
                // An element along the axis, at a position clamped into the tensor (the
                // logic below never uses a clamped read).
                let read = |body: &mut Block, t: &Value, pos: &Value| {
                    let pos = body.arith(Arith::MinSI, pos, &last);
                    let mut at = idx.clone();
                    at[axis] = pos;
                    body.tensor_extract(t, &at)
                };
                // The key at a position of the carried tensor.
                let key = |body: &mut Block, pos: &Value| {
                    let v = read(body, carried, pos);
                    if !arg {
                        return v;
                    }
                    let i = body.index_cast(&v, ScalarType::Index);
                    read(body, &keys0, &i)
                };
                let p = idx[axis].clone();
                let q = body.arith(Arith::DivUI, &p, &two_w);
                let a0 = body.arith(Arith::MulI, &q, &two_w);
                let k = body.arith(Arith::SubI, &p, &a0);
                let left = body.arith(Arith::SubI, &n, &a0);
                let a_len = body.arith(Arith::MinSI, &width, &left);
                let b0 = body.arith(Arith::AddI, &a0, &width);
                let left_b = body.arith(Arith::SubI, &n, &b0);
                let left_b = body.arith(Arith::MaxSI, &left_b, &zero);
                let b_len = body.arith(Arith::MinSI, &width, &left_b);
                let k_minus_b = body.arith(Arith::SubI, &k, &b_len);
                let lo = body.arith(Arith::MaxSI, &k_minus_b, &zero);
                let hi = body.arith(Arith::MinSI, &k, &a_len);
                // a before b (a from the first run): not (b < a).
                let before = |body: &mut Block, a: &Value, bv: &Value| {
                    let t = body.constant_int(1, ScalarType::I1);
                    let b_first = less(body, bv, a, dtype);
                    body.arith(Arith::XOrI, &b_first, &t)
                };
                let i = partition_point(body, &lo, &hi, |ww, mid| {
                    let one = ww.constant_index(1);
                    let pa = ww.arith(Arith::AddI, &a0, mid);
                    let kb = ww.arith(Arith::SubI, &k, mid);
                    let kb = ww.arith(Arith::SubI, &kb, &one);
                    let pb = ww.arith(Arith::AddI, &b0, &kb);
                    let av = key(ww, &pa);
                    let bv = key(ww, &pb);
                    before(ww, &av, &bv)
                });
                let j = body.arith(Arith::SubI, &k, &i);
                let pa = body.arith(Arith::AddI, &a0, &i);
                let pb = body.arith(Arith::AddI, &b0, &j);
                let av = key(body, &pa);
                let bv = key(body, &pb);
                let b_done = body.cmpi(CmpI::Sge, &j, &b_len);
                let a_left = body.cmpi(CmpI::Slt, &i, &a_len);
                let a_wins = before(body, &av, &bv);
                let a_ok = body.arith(Arith::AndI, &a_left, &a_wins);
                let take_a = body.arith(Arith::OrI, &b_done, &a_ok);
                let src = body.select(&take_a, &pa, &pb);
                Ok::<_, std::convert::Infallible>(vec![read(body, carried, &src)])
            });
            let merged = match merged {
                Ok(m) => m,
                Err(e) => match e {},
            };
            current = merged[0].clone();
        }
    }
    Ok(current)
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
        let found = partition_point(body, &lo, &n, |w, mid| {
            let at = match &sorter {
                None => mid.clone(),
                Some((st, sdt)) => {
                    let e = w.tensor_extract(st, &[mid.clone()]);
                    let i = int_to_index(w, &e, *sdt);
                    // Clamped: an out-of-range sorter raises after the call.
                    let (zero, one) = (w.constant_index(0), w.constant_index(1));
                    let last = w.arith(Arith::SubI, &n, &one);
                    let i = w.arith(Arith::MaxSI, &i, &zero);
                    w.arith(Arith::MinSI, &i, &last)
                }
            };
            let xm = w.tensor_extract(&x, &[at]);
            if right {
                let t = w.constant_int(1, ScalarType::I1);
                let before = less(w, &key, &xm, dtype);
                w.arith(Arith::XOrI, &before, &t)
            } else {
                less(w, &xm, &key, dtype)
            }
        });
        Ok::<_, String>(vec![body.index_cast(&found, ScalarType::I64)])
    })?;
    let dims = cx.dims(v_var);
    cx.define(out, r[0].clone(), dims);
    Ok(())
}
