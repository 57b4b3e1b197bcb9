//! `PermuteRowElements(x, y)`: each row (innermost axis) of x reordered by the matching
//! row of the integer tensor y (`x[..., y[..., j]]`), or by its inverse (`out[..., y[...,
//! j]] = x[..., j]`). x and y have the same rank (PyTensor pads the smaller); their other
//! axes broadcast where static 1 and must otherwise be equal (`ValueError`), as must the
//! row lengths. Indices wrap where negative; others out of bounds raise `IndexError`.
//!
//! The inverse is only defined for permutations: where y repeats an index the last write
//! wins (numpy's assignment) and positions nobody writes are 0 (the C backend leaves them
//! uninitialized). It is a scatter, so CPU only; other targets refuse it by name.

use super::advanced::{last_rows, take_rows};
use super::shapes::Dim;
use super::subtensor::{check_indices_on_axis, guarded_extract, wrap};
use super::{scalar, tensor_type, Context};
use crate::ir::Node;
use crate::mlir::{AffineExpr, AffineMap, Block, CmpI, IndexArg, IteratorType, ScalarType, TensorType, Value};

pub fn permute_row_elements(cx: &mut Context, b: &mut Block, node: &Node, inverse: bool) -> Result<(), String> {
    let what = "PermuteRowElements";
    let [x_var, y_var] = node.inputs[..] else { return Err("PermuteRowElements needs two inputs".into()) };
    let out = node.outputs[0];
    let (x_ty, y_ty, out_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(y_var).clone(), cx.graph.ty(out).clone());
    let rank = out_ty.ndim();
    if rank == 0 || x_ty.ndim() != rank || y_ty.ndim() != rank || !y_ty.dtype.is_int() {
        return Err("needs x and an integer y of the same rank >= 1".into());
    }
    let last = rank - 1;
    if x_ty.broadcastable(last) != y_ty.broadcastable(last) {
        return Err("a row of static length 1 against a longer one".into());
    }
    if inverse && !scalar::has_scatter() {
        return Err("the inverse permutation on this target (IREE's code generation for it has no scatter)".into());
    }
    // The output's dims: x's where y broadcasts, else y's (equal to x's where x does not).
    let (x_dims, y_dims) = (cx.dims(x_var), cx.dims(y_var));
    let mut dims = Vec::with_capacity(rank);
    for a in 0..rank {
        dims.push(match (x_ty.broadcastable(a), y_ty.broadcastable(a)) {
            (_, true) => x_dims[a],
            (true, false) => y_dims[a],
            (false, false) => {
                cx.require_equal(x_dims[a], y_dims[a], what);
                x_dims[a]
            }
        });
    }
    let x = cx.value(b, x_var)?;
    let y = cx.value(b, y_var)?;
    let n = b.tensor_dim(&x, last);
    let flat = b.tensor_flatten(&y);
    check_indices_on_axis(cx, b, &flat, y_ty.dtype, &n, what, last);
    let sizes: Vec<Value> = (0..rank)
        .filter(|&a| out_ty.shape[a].is_none())
        .map(|a| if y_ty.broadcastable(a) { b.tensor_dim(&x, a) } else { b.tensor_dim(&y, a) })
        .collect();
    let map_of = |t: &crate::ir::TensorType, dims: usize| AffineMap {
        dims,
        results: (0..rank).map(|a| if t.broadcastable(a) { AffineExpr::Constant(0) } else { AffineExpr::Dim(a) }).collect(),
    };
    let its = vec![IteratorType::Parallel; rank];
    let yd = y_ty.dtype;
    let r = if !inverse {
        let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
        let maps = [map_of(&y_ty, rank), AffineMap::identity(rank)];
        b.linalg_generic(&[y], &[init], &maps, &its, |body, args| {
            let (w, ok) = wrap(body, &args[0], yd, &n);
            let mut src: Vec<Value> = (0..last).map(|a| if x_ty.broadcastable(a) { body.constant_index(0) } else { body.linalg_index(a) }).collect();
            src.push(w);
            Ok::<_, String>(vec![guarded_extract(body, Some(&ok), &x, &src)])
        })?
        .remove(0)
    } else {
        // Positions: each element's index in the output, its row position from y.
        let mut shape = out_ty.shape.clone();
        shape.push(Some(rank as u64));
        let empty = b.tensor_empty(TensorType::new(shape, ScalarType::I64), &sizes);
        let maps = [map_of(&y_ty, rank + 1), AffineMap::identity(rank + 1)];
        let mut its1 = its.clone();
        its1.push(IteratorType::Parallel);
        let all = b
            .linalg_generic(&[y], &[empty], &maps, &its1, |body, args| {
                let which = body.linalg_index(rank);
                let (w, ok) = wrap(body, &args[0], yd, &n);
                let zero = body.constant_index(0);
                let mut v = body.select(&ok, &w, &zero);
                v = body.index_cast(&v, ScalarType::I64);
                for a in 0..last {
                    let i = body.linalg_index(a);
                    let i = body.index_cast(&i, ScalarType::I64);
                    let here = body.constant_index(a as i64);
                    let is = body.cmpi(CmpI::Eq, &which, &here);
                    v = body.select(&is, &i, &v);
                }
                Ok::<_, String>(vec![v])
            })?
            .remove(0);
        let positions = b.tensor_collapse_leading(&all, rank);
        // Updates: x broadcast to the output's shape, flattened.
        let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
        let maps = [map_of(&x_ty, rank), AffineMap::identity(rank)];
        let spread = b.linalg_generic(&[x], &[init], &maps, &its, |_, args| Ok::<_, String>(vec![args[0].clone()]))?.remove(0);
        let updates = b.tensor_flatten(&spread);
        let count = b.tensor_dim(&updates, 0);
        // Where a row is empty no index is valid (the check raises) and none may reach the
        // scatter: then no rows.
        let zero = b.constant_index(0);
        let empty_row = b.cmpi(CmpI::Eq, &n, &zero);
        let count = b.select(&empty_row, &zero, &count);
        let rows = [IndexArg::Dyn(count.clone()), IndexArg::Const(rank as i64)];
        let positions = b.tensor_extract_slice(&positions, &[IndexArg::Const(0), IndexArg::Const(0)], &rows);
        let updates = b.tensor_extract_slice(&updates, &[IndexArg::Const(0)], &[IndexArg::Dyn(count.clone())]);
        let base = {
            let empty = b.tensor_empty(tensor_type(&out_ty), &sizes);
            let z = super::subtensor::zero_of(b, empty.tensor().element);
            b.linalg_fill(&z, &empty)
        };
        let lastw = last_rows(b, &base, &out_ty, &positions, &count, rank)?;
        take_rows(b, &base, &out_ty, &lastw, &updates, rank)?
    };
    for (a, d) in dims.iter_mut().enumerate() {
        if let Some(s) = out_ty.shape[a] {
            *d = Dim::Static(s);
        }
    }
    cx.define(out, r, dims);
    Ok(())
}
