//! `Unique` (`pt.unique`, axis None): numpy's `np.unique` of the flattened input, with
//! `return_index`, `return_inverse` (flat) and `return_counts`: the sorted distinct values
//! (NaNs collapsed into one, numpy's `equal_nan=True`; -0.0 equal to 0.0), the first
//! position of each, each element's position among them, and how often each occurs.
//!
//! The input is argsorted stably (sort.rs's merge sort), so each run of equal values in
//! sorted order starts with its first occurrence. A run starts where a value differs from
//! the one before; the number of runs, counted by a kernel of its own, is the outputs'
//! length (a run-time dim, as `Nonzero`'s), and the `j`-th run starts at the position
//! whose running count of starts covers `j` (cumulative::covering_position). An element's
//! inverse is the number of distinct values before it: a binary search in the result.
//! Refused by name: `axis` (unique rows or columns).

use super::{cumulative, scalar, sort, tensor_type, Context};
use crate::dtype::DType;
use crate::ir::{Node, TensorType};
use crate::mlir::{AffineMap, Arith, Block, CmpF, CmpI, IteratorType, ScalarType, TensorType as MlirTensor};

pub fn unique(cx: &mut Context, b: &mut Block, node: &Node, index: bool, inverse: bool, counts: bool, axis: Option<usize>) -> Result<(), String> {
    if axis.is_some() {
        return Err("Unique along an axis (unique rows or columns); axis=None is lowered".into());
    }
    let x_var = node.inputs[0];
    let ty = cx.graph.ty(x_var).clone();
    if ty.dtype.is_complex() || node.outputs.len() != 1 + index as usize + inverse as usize + counts as usize {
        return Err(format!("Unique of {ty:?} with {} outputs", node.outputs.len()));
    }
    let x = cx.value(b, x_var)?;
    let flat = b.tensor_flatten(&x);
    let flat_ty = TensorType { dtype: ty.dtype, shape: vec![flat.tensor().shape[0]] };
    let n = b.tensor_dim(&flat, 0);
    let perm = sort::merge_sort(cx, b, &flat, &flat_ty, 0, true)?;
    let elem = scalar::storage_type(ty.dtype);
    let float = elem.is_float();
    let vec_i64 = TensorType { dtype: DType::Int64, shape: vec![None] };
    // The values in sorted order.
    let init = b.tensor_empty(tensor_type(&flat_ty), &[n.clone()]);
    let sorted = b.linalg_generic(&[perm.clone()], &[init], &[AffineMap::identity(1), AffineMap::identity(1)], &[IteratorType::Parallel], |body, args| {
        let i = body.index_cast(&args[0], ScalarType::Index);
        Ok::<_, String>(vec![body.tensor_extract(&flat, &[i])])
    })?[0]
        .clone();
    // 1 where a run of equal values starts.
    let init = b.tensor_empty(tensor_type(&vec_i64), &[n.clone()]);
    let starts = b.linalg_generic(&[], &[init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |body, _| {
        let k = body.linalg_index(0);
        let zero = body.constant_index(0);
        let one = body.constant_index(1);
        let first = body.cmpi(CmpI::Eq, &k, &zero);
        let prev = body.arith(Arith::SubI, &k, &one);
        let prev = body.arith(Arith::MaxSI, &prev, &zero);
        let a = body.tensor_extract(&sorted, &[prev]);
        let v = body.tensor_extract(&sorted, &[k]);
        let differ = if float {
            // Unordered-or-unequal is true for NaN against NaN too: NaNs are one value.
            let ne = body.cmpf(CmpF::Une, &a, &v);
            let a_nan = body.cmpf(CmpF::Uno, &a, &a);
            let v_nan = body.cmpf(CmpF::Uno, &v, &v);
            let both = body.arith(Arith::AndI, &a_nan, &v_nan);
            let t = body.constant_int(1, ScalarType::I1);
            let not_both = body.arith(Arith::XOrI, &both, &t);
            body.arith(Arith::AndI, &ne, &not_both)
        } else {
            body.cmpi(CmpI::Ne, &a, &v)
        };
        let start = body.arith(Arith::OrI, &first, &differ);
        let (one64, zero64) = (body.constant_int(1, ScalarType::I64), body.constant_int(0, ScalarType::I64));
        Ok::<_, String>(vec![body.select(&start, &one64, &zero64)])
    })?[0]
        .clone();
    // The number of runs by a reduction of its own (see nonzero.rs).
    let sum_init = b.tensor_empty(MlirTensor::new(vec![], ScalarType::I64), &[]);
    let z64 = b.constant_int(0, ScalarType::I64);
    let sum_init = b.linalg_fill(&z64, &sum_init);
    let total = b.linalg_generic(&[starts.clone()], &[sum_init], &[AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }], &[IteratorType::Reduction], |body, args| {
        Ok::<_, String>(vec![body.arith(Arith::AddI, &args[0], &args[1])])
    })?;
    let ends = cumulative::inclusive_sum_i64(b, &starts);
    let count = b.tensor_extract(&total[0], &[]);
    let count = b.index_cast(&count, ScalarType::Index);
    let len = cx.runtime_dim();

    // Per run j: its value, its first position, its length.
    let out_ty = TensorType { dtype: ty.dtype, shape: vec![None] };
    let mut outs = vec![b.tensor_empty(tensor_type(&out_ty), &[count.clone()])];
    if index {
        outs.push(b.tensor_empty(tensor_type(&vec_i64), &[count.clone()]));
    }
    if counts {
        outs.push(b.tensor_empty(tensor_type(&vec_i64), &[count.clone()]));
    }
    let maps = vec![AffineMap::identity(1); outs.len()];
    let runs = b.linalg_generic(&[], &outs, &maps, &[IteratorType::Parallel], |body, _| {
        let j = body.linalg_index(0);
        let j64 = body.index_cast(&j, ScalarType::I64);
        let at = cumulative::covering_position(body, &ends, &n, &j64);
        let mut r = vec![body.tensor_extract(&sorted, &[at.clone()])];
        if index {
            r.push(body.tensor_extract(&perm, &[at.clone()]));
        }
        if counts {
            let one64 = body.constant_int(1, ScalarType::I64);
            let next = body.arith(Arith::AddI, &j64, &one64);
            let end = cumulative::covering_position(body, &ends, &n, &next);
            let c = body.arith(Arith::SubI, &end, &at);
            r.push(body.index_cast(&c, ScalarType::I64));
        }
        Ok::<_, String>(r)
    })?;
    let mut outputs = node.outputs.iter();
    let mut runs = runs.into_iter();
    let values = runs.next().unwrap();
    cx.define(*outputs.next().unwrap(), values.clone(), vec![len]);
    if index {
        cx.define(*outputs.next().unwrap(), runs.next().unwrap(), vec![len]);
    }
    if inverse {
        let init = b.tensor_empty(tensor_type(&vec_i64), &[n.clone()]);
        let dtype = ty.dtype;
        let inv = b.linalg_generic(&[flat.clone()], &[init], &[AffineMap::identity(1), AffineMap::identity(1)], &[IteratorType::Parallel], |body, args| {
            // The number of distinct values that sort before this one.
            let lo = body.constant_index(0);
            let found = super::search::partition_point(body, &lo, &count, |w, mid| {
                let u = w.tensor_extract(&values, &[mid.clone()]);
                sort::less(w, &u, &args[0], dtype)
            });
            Ok::<_, String>(vec![body.index_cast(&found, ScalarType::I64)])
        })?;
        // The input's size.
        let size = match cx.dims(x_var).as_slice() {
            [] => super::shapes::Dim::Static(1),
            [d] => *d,
            ds => cx.derived(super::shapes::DimExpr::Product(ds.to_vec())),
        };
        cx.define(*outputs.next().unwrap(), inv[0].clone(), vec![size]);
    }
    if counts {
        cx.define(*outputs.next().unwrap(), runs.next().unwrap(), vec![len]);
    }
    Ok(())
}
