//! `AdvancedSubtensor` and `AdvancedIncSubtensor`: numpy's indexing by several integer
//! arrays (`x[i, j]`, `x[:, i]`, `x[i[:, None], j]`, `x[i, 1:5:2]`), with slices on the
//! other axes.
//!
//! The index arrays broadcast together to a shape B as numpy broadcasts them at run time
//! (a length 1 broadcasts though PyTensor types it as not broadcastable; lengths that do
//! not broadcast raise `IndexError` before the call, as numpy raises). The result is
//! x's sliced axes with B in place of the indexed ones where those are adjacent, else B
//! first (numpy's rule). Negative indices wrap; any other index out of bounds raises
//! `IndexError` and nothing is read or written out of bounds. Slices are normalized as
//! `Subtensor` normalizes them (a run-time step of 0 raises `ValueError`). Boolean masks
//! (whose result size depends on the data) are refused.

use super::shapes::{Dim, DimExpr};
use super::subtensor::{add_element, check, check_indices_on_axis, gathered_copy, guarded_extract, is_slice, scatter_updates, slice_axis, wrap, Region, SliceAxis};
use super::{scalar, tensor_type, Context, ErrorKind};
use crate::dtype::DType;
use crate::ir::{IdxEntry, Node, TensorType as IrType, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, CmpI, IndexArg, IteratorType, ScalarType, TensorType, Value};

/// Where each axis of the result comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OutAxis {
    /// Dim `d` of the broadcast index shape B.
    Broadcast(usize),
    /// A slice of x's axis.
    Slice(usize),
}

/// How one axis of x is indexed.
enum AxisIndex {
    /// By index array `j` (its position in `Plan::arrays`).
    Array(usize),
    /// Whole (`:`).
    Full,
    /// By a slice with bounds.
    Slice(SliceAxis),
}

/// The indexing of x by `idx_list`, worked out.
struct Plan {
    /// For each axis of x, how it is indexed.
    axes: Vec<AxisIndex>,
    /// The index arrays, in axis order.
    arrays: Vec<(VarId, IrType)>,
    /// The broadcast shape B.
    b_dims: Vec<Dim>,
    /// The result's axes.
    out: Vec<OutAxis>,
    /// The position of B's first dim among the result's axes.
    b_first: usize,
}

fn plan(cx: &mut Context, b: &mut Block, x: &Value, x_var: VarId, index_inputs: &[VarId], idx_list: &[IdxEntry], what: &str) -> Result<Plan, String> {
    let x_ty = cx.graph.ty(x_var).clone();
    let x_dims = cx.dims(x_var);
    if idx_list.len() > x_ty.ndim() {
        return Err(format!("{} indices for a tensor of rank {}", idx_list.len(), x_ty.ndim()));
    }
    let mut axes = Vec::with_capacity(x_ty.ndim());
    let mut arrays = Vec::new();
    let mut bad_step = None;
    for axis in 0..x_ty.ndim() {
        match idx_list.get(axis) {
            Some(IdxEntry::Index(p)) => {
                let v = *index_inputs.get(*p).ok_or("an index position beyond the inputs")?;
                let ty = cx.graph.ty(v).clone();
                if ty.dtype == DType::Bool {
                    return Err("boolean mask indexing (the result's size depends on the data)".into());
                }
                if !ty.dtype.is_int() {
                    return Err(format!("an index array of {}", ty.dtype));
                }
                axes.push(AxisIndex::Array(arrays.len()));
                arrays.push((v, ty));
            }
            None | Some(IdxEntry::Slice { start: None, stop: None, step: None }) => axes.push(AxisIndex::Full),
            Some(IdxEntry::Slice { start, stop, step }) => {
                let n = b.tensor_dim(x, axis);
                axes.push(AxisIndex::Slice(slice_axis(cx, b, &n, x_dims[axis], index_inputs, [*start, *stop, *step], &mut bad_step)?));
            }
        }
    }
    if let Some(bad) = bad_step {
        check(cx, b, &bad, ErrorKind::Value, format!("{what}: slice step cannot be zero"));
    }
    if arrays.is_empty() {
        return Err("no index array".into());
    }
    // B: the arrays right-aligned, broadcast as numpy does at run time (a dim that is 1
    // then broadcasts, though PyTensor's types mark only static 1s broadcastable); where
    // they do not broadcast, `IndexError` before the call, as numpy raises.
    let nb = arrays.iter().map(|(_, t)| t.ndim()).max().unwrap_or(0);
    let mut b_dims = Vec::with_capacity(nb);
    for d in 0..nb {
        let mut dims: Vec<Dim> = Vec::new();
        for (v, t) in &arrays {
            let Some(k) = (d + t.ndim()).checked_sub(nb) else { continue };
            let this = cx.dims(*v)[k];
            if !t.broadcastable(k) && !dims.contains(&this) {
                dims.push(this);
            }
        }
        b_dims.push(match dims[..] {
            [] => Dim::Static(1),
            [one] => one,
            _ => {
                let dim = cx.derived(DimExpr::Broadcast(dims));
                cx.require_valid(dim, &format!("{what} (index arrays broadcast together)"), ErrorKind::Index);
                dim
            }
        });
    }
    let is_array = |a: &AxisIndex| matches!(a, AxisIndex::Array(_));
    let indexed: Vec<usize> = (0..axes.len()).filter(|&a| is_array(&axes[a])).collect();
    let adjacent = indexed[indexed.len() - 1] - indexed[0] + 1 == indexed.len();
    let b_first = if adjacent { indexed[0] } else { 0 };
    let slices: Vec<usize> = (0..axes.len()).filter(|&a| !is_array(&axes[a])).collect();
    let mut out: Vec<OutAxis> = slices.iter().map(|&a| OutAxis::Slice(a)).collect();
    let before = slices.iter().filter(|&&a| adjacent && a < indexed[0]).count();
    out.splice(before..before, (0..nb).map(OutAxis::Broadcast));
    Ok(Plan { axes, arrays, b_dims, out, b_first })
}

impl Plan {
    /// The result's dims.
    fn out_dims(&self, cx: &mut Context, x_var: VarId) -> Vec<Dim> {
        let x_dims = cx.dims(x_var);
        self.out
            .iter()
            .map(|o| match *o {
                OutAxis::Broadcast(d) => self.b_dims[d],
                OutAxis::Slice(a) => match &self.axes[a] {
                    AxisIndex::Slice(s) => s.dim,
                    _ => x_dims[a],
                },
            })
            .collect()
    }

    /// The map reading index array `j` at the result's (or the update's) position,
    /// B's dims starting at `b_first` among `rank` iteration dims.
    fn array_map(&self, j: usize, rank: usize) -> AffineMap {
        let t = &self.arrays[j].1;
        let nb = self.b_dims.len();
        AffineMap {
            dims: rank,
            results: (0..t.ndim())
                .map(|k| if t.broadcastable(k) { AffineExpr::Constant(0) } else { AffineExpr::Dim(self.b_first + nb - t.ndim() + k) })
                .collect(),
        }
    }

    /// Checks every index array against the length of the axis it indexes.
    fn check_bounds(&self, cx: &mut Context, b: &mut Block, x: &Value, what: &str) -> Result<Vec<Value>, String> {
        let mut values = Vec::with_capacity(self.arrays.len());
        for (axis, a) in self.axes.iter().enumerate() {
            let AxisIndex::Array(j) = *a else { continue };
            let (v, t) = self.arrays[j].clone();
            let a = cx.value(b, v)?;
            let flat = b.tensor_flatten(&a);
            let n = b.tensor_dim(x, axis);
            check_indices_on_axis(cx, b, &flat, t.dtype, &n, what, axis);
            values.push(a);
        }
        // An array whose dim is 1 at run time where B's is not is read through an
        // indexing map over B: it is stretched to B there first.
        let b_sizes = self.b_sizes(b, &values);
        for (j, (v, t)) in self.arrays.iter().enumerate() {
            let nb = self.b_dims.len();
            let own = cx.dims(*v);
            let stretch: Vec<bool> = (0..t.ndim()).map(|k| t.shape[k].is_none() && own[k] != self.b_dims[nb - t.ndim() + k]).collect();
            if stretch.contains(&true) {
                values[j] = stretch_ones(b, &values[j], t, &stretch, &b_sizes[nb - t.ndim()..])?;
            }
        }
        Ok(values)
    }

    /// The sizes of B's dims: at each, the arrays' sizes folded as numpy broadcasts them
    /// (valid: checked before the call).
    fn b_sizes(&self, b: &mut Block, arrays: &[Value]) -> Vec<Value> {
        let nb = self.b_dims.len();
        (0..nb)
            .map(|d| {
                let mut size: Option<Value> = None;
                for (j, (_, t)) in self.arrays.iter().enumerate() {
                    let Some(k) = (d + t.ndim()).checked_sub(nb) else { continue };
                    if t.broadcastable(k) {
                        continue;
                    }
                    let n = b.tensor_dim(&arrays[j], k);
                    size = Some(broadcast_extent(b, size, n));
                }
                size.unwrap_or_else(|| b.constant_index(1))
            })
            .collect()
    }

    /// Sizes of the result's dynamic dims, for `tensor.empty`.
    fn out_sizes(&self, b: &mut Block, out_ty: &IrType, x: &Value, arrays: &[Value]) -> Vec<Value> {
        let mut sizes = Vec::new();
        for (k, o) in self.out.iter().enumerate() {
            if out_ty.shape[k].is_some() {
                continue;
            }
            sizes.push(match *o {
                OutAxis::Slice(a) => match &self.axes[a] {
                    AxisIndex::Slice(s) => s.len.clone(),
                    _ => b.tensor_dim(x, a),
                },
                OutAxis::Broadcast(d) => self.b_sizes(b, arrays).swap_remove(d),
            });
        }
        sizes
    }

    /// In a body over the result's axes (or leading ones of them): the index into x's
    /// sliced `axis`.
    fn slice_source(&self, body: &mut Block, axis: usize) -> Value {
        let k = self.out.iter().position(|o| *o == OutAxis::Slice(axis)).expect("every sliced axis is a result axis");
        let i = body.linalg_index(k);
        match &self.axes[axis] {
            AxisIndex::Slice(s) => {
                let off = body.arith(Arith::MulI, &s.step, &i);
                body.arith(Arith::AddI, &s.start, &off)
            }
            _ => i,
        }
    }

    /// In a body over the result's axes whose first arguments are the index elements:
    /// the source index into x and whether every index is in bounds.
    fn source(&self, body: &mut Block, args: &[Value], x: &Value) -> (Vec<Value>, Option<Value>) {
        let mut ok: Option<Value> = None;
        let mut src = Vec::with_capacity(self.axes.len());
        for (axis, a) in self.axes.iter().enumerate() {
            match *a {
                AxisIndex::Array(j) => {
                    let n = body.tensor_dim(x, axis);
                    let (w, in_bounds) = wrap(body, &args[j], self.arrays[j].1.dtype, &n);
                    ok = Some(match ok {
                        None => in_bounds,
                        Some(o) => body.arith(Arith::AndI, &o, &in_bounds),
                    });
                    src.push(w);
                }
                _ => src.push(self.slice_source(body, axis)),
            }
        }
        (src, ok)
    }
}

/// `AdvancedSubtensor`: a generic over the result reading x at the source index of each
/// element (a gather).
pub fn advanced_subtensor(cx: &mut Context, b: &mut Block, node: &Node, idx_list: &[IdxEntry]) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let out_ty = cx.graph.ty(out).clone();
    let x = cx.value(b, x_var)?;
    let p = plan(cx, b, &x, x_var, &node.inputs[1..], idx_list, "AdvancedSubtensor")?;
    if p.out.len() != out_ty.ndim() {
        return Err(format!("a result of rank {} where PyTensor says {}", p.out.len(), out_ty.ndim()));
    }
    let arrays = p.check_bounds(cx, b, &x, "AdvancedSubtensor")?;
    let rank = out_ty.ndim();
    let sizes = p.out_sizes(b, &out_ty, &x, &arrays);
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let mut maps: Vec<AffineMap> = (0..arrays.len()).map(|j| p.array_map(j, rank)).collect();
    maps.push(AffineMap::identity(rank));
    let r = b.linalg_generic(&arrays, &[init], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
        let (src, ok) = p.source(body, args, &x);
        Ok::<_, String>(vec![guarded_extract(body, ok.as_ref(), &x, &src)])
    })?;
    let mut dims = p.out_dims(cx, x_var);
    for (k, d) in dims.iter_mut().enumerate() {
        if let Some(s) = out_ty.shape[k] {
            *d = Dim::Static(s);
        }
    }
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `AdvancedIncSubtensor`: `x[idx] += y`, repeated positions accumulating in index order
/// (numpy's `np.add.at`), or `x[idx] = y`, where the last of repeated positions wins (as
/// numpy's assignment leaves it), `y` broadcast to the indexed region's shape.
///
/// On the CPU, a scatter: x's trailing whole axes (after the last index array or bounded
/// slice) are the region's trailing axes too and are written as whole rows; every other
/// element of the region is a row, at the position its indices name on x's other axes.
/// The increment scatters `y`'s rows with an add; the assignment scatters each row's number
/// with a max (order-free) to find the last row per position, then takes that row.
/// Targets without a scatter are refused by name.
pub fn advanced_inc_subtensor(cx: &mut Context, b: &mut Block, node: &Node, idx_list: &[IdxEntry], set: bool) -> Result<(), String> {
    let what = if set { "AdvancedSetSubtensor" } else { "AdvancedIncSubtensor" };
    if !scalar::has_scatter() {
        return Err("on this target (IREE's code generation for it has no scatter)".into());
    }
    let (x_var, y_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (x_ty, y_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(y_var).clone());
    let x = cx.value(b, x_var)?;
    let p = plan(cx, b, &x, x_var, &node.inputs[2..], idx_list, what)?;
    let region = p.out_dims(cx, x_var);
    let rank = region.len();
    if y_ty.ndim() > rank {
        return Err(format!("a value of rank {} for a region of rank {rank}", y_ty.ndim()));
    }
    let lead = rank - y_ty.ndim();
    let y_dims = cx.dims(y_var);
    // numpy, which the C backend calls here, broadcasts a value's dim that is 1 at run
    // time, though PyTensor's types mark only static 1s broadcastable (its
    // AdvancedIncSubtensor1 refuses that, and so does ours).
    let mut stretch = vec![false; y_ty.ndim()];
    for a in 0..y_ty.ndim() {
        if y_ty.broadcastable(a) || y_dims[a] == region[lead + a] {
            continue;
        }
        if y_ty.shape[a].is_some() {
            cx.require_equal(y_dims[a], region[lead + a], what);
        } else {
            cx.require_equal_or_one(y_dims[a], region[lead + a], what);
            stretch[a] = true;
        }
    }
    // x's trailing whole axes: the rows' axes. The others are the scatter's index depth.
    let whole = p.axes.iter().rev().take_while(|a| matches!(a, AxisIndex::Full)).count();
    let depth = x_ty.ndim() - whole;
    let per_row = rank - whole;
    if per_row == 0 {
        return Err("0-d index arrays on every axis".into());
    }
    let arrays = p.check_bounds(cx, b, &x, what)?;
    let y = cx.value(b, y_var)?;
    let region_ty = IrType { dtype: x_ty.dtype, shape: vec![None; rank] };
    let sizes = p.out_sizes(b, &region_ty, &x, &arrays);
    let y = if stretch.contains(&true) { stretch_ones(b, &y, &y_ty, &stretch, &sizes[lead..])? } else { y };
    // The number of rows. Where an indexed axis of x is empty every index is out of bounds
    // (the check raises after the call) and none may reach the scatter: then 0 rows.
    // Otherwise indices out of bounds are sent to 0, so nothing is written out of bounds.
    let zero = b.constant_index(0);
    let mut count = sizes[0].clone();
    for s in &sizes[1..per_row] {
        count = b.arith(Arith::MulI, &count, s);
    }
    for (axis, a) in p.axes.iter().enumerate() {
        if matches!(a, AxisIndex::Array(_)) {
            let n = b.tensor_dim(&x, axis);
            let empty = b.cmpi(CmpI::Eq, &n, &zero);
            count = b.select(&empty, &zero, &count);
        }
    }
    let positions = positions(b, &p, &x, &arrays, &sizes[..per_row], depth, &count)?;
    // Updates: y broadcast to the region in x's element type, as rows.
    let rest_shape = vec![None; rank - 1];
    let full = Region { count: &sizes[0], shape: &rest_shape, sizes: &sizes[1..], element: x.tensor().element, dtype: x_ty.dtype };
    let full = scatter_updates(b, &y, &y_ty, lead, &full)?;
    let rows = b.tensor_collapse_leading(&full, per_row);
    let mut row_sizes = vec![IndexArg::Dyn(count.clone())];
    row_sizes.extend(sizes[per_row..].iter().map(|s| IndexArg::Dyn(s.clone())));
    let updates = b.tensor_extract_slice(&rows, &vec![IndexArg::Const(0); whole + 1], &row_sizes);
    let xd = x_ty.dtype;
    let r = if set {
        let last = last_rows(b, &x, &x_ty, &positions, &count, depth)?;
        take_rows(b, &x, &x_ty, &last, &updates, depth)?
    } else {
        // A slice of another tensor gets a tensor of its own first (see subtensor.rs).
        let dest = if is_slice(cx, x_var) { gathered_copy(b, &x)? } else { cx.destination(&x) };
        b.scatter(&updates, &positions, &dest, false, |body, update, current| Ok::<_, String>(add_element(body, current, update, xd)))?
    };
    let dims = cx.dims(x_var);
    cx.define(out, r, dims);
    Ok(())
}

/// `y` with each axis `a` in `stretch` (checked before the call to be 1 or `sizes[a]`)
/// broadcast to `sizes[a]`: its index there is 0 where its length is 1.
fn stretch_ones(b: &mut Block, y: &Value, y_ty: &IrType, stretch: &[bool], sizes: &[Value]) -> Result<Value, String> {
    let rank = y_ty.ndim();
    let one = b.constant_index(1);
    let mut out_sizes = Vec::new();
    let mut is_one = Vec::with_capacity(rank);
    for a in 0..rank {
        let n = b.tensor_dim(y, a);
        is_one.push(if stretch[a] { Some(b.cmpi(CmpI::Eq, &n, &one)) } else { None });
        if y_ty.shape[a].is_none() {
            out_sizes.push(if stretch[a] { sizes[a].clone() } else { n });
        }
    }
    let init = b.tensor_empty(TensorType::new(y_ty.shape.clone(), y.tensor().element), &out_sizes);
    let source = y.clone();
    Ok(b
        .linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
            let index: Vec<Value> = (0..rank)
                .map(|a| {
                    let i = body.linalg_index(a);
                    match &is_one[a] {
                        Some(one) => {
                            let first = body.constant_index(0);
                            body.select(one, &first, &i)
                        }
                        None => i,
                    }
                })
                .collect();
            Ok::<_, String>(vec![body.tensor_extract(&source, &index)])
        })?
        .remove(0))
}

/// The scatter's positions, `count x depth` (i64): for each element of the region's
/// first axes (of dynamic `sizes`, in C order) the index its row goes to on x's first
/// `depth` axes (wrapped; 0 where out of bounds).
fn positions(b: &mut Block, p: &Plan, x: &Value, arrays: &[Value], sizes: &[Value], depth: usize, count: &Value) -> Result<Value, String> {
    let n_dims = sizes.len();
    let mut shape = vec![None; n_dims];
    shape.push(Some(depth as u64));
    let empty = b.tensor_empty(TensorType::new(shape, ScalarType::I64), sizes);
    let mut maps: Vec<AffineMap> = (0..arrays.len()).map(|j| p.array_map(j, n_dims + 1)).collect();
    maps.push(AffineMap::identity(n_dims + 1));
    let its = vec![IteratorType::Parallel; n_dims + 1];
    let all = b
        .linalg_generic(arrays, &[empty], &maps, &its, |body, args| {
            let which = body.linalg_index(n_dims);
            let mut v = body.constant_int(0, ScalarType::I64);
            for axis in 0..depth {
                let w = match p.axes[axis] {
                    AxisIndex::Array(j) => {
                        let n = body.tensor_dim(x, axis);
                        let (w, ok) = wrap(body, &args[j], p.arrays[j].1.dtype, &n);
                        let first = body.constant_index(0);
                        body.select(&ok, &w, &first)
                    }
                    _ => p.slice_source(body, axis),
                };
                let w = body.index_cast(&w, ScalarType::I64);
                let here = body.constant_index(axis as i64);
                let is = body.cmpi(CmpI::Eq, &which, &here);
                v = body.select(&is, &w, &v);
            }
            Ok::<_, String>(vec![v])
        })?
        .remove(0);
    let rows = b.tensor_collapse_leading(&all, n_dims);
    Ok(b.tensor_extract_slice(&rows, &[IndexArg::Const(0), IndexArg::Const(0)], &[IndexArg::Dyn(count.clone()), IndexArg::Const(depth as i64)]))
}

/// For each position on x's first `depth` axes, the last of the `count` rows the
/// positions send there (-1: none), by scattering each row's number with a max.
pub(super) fn last_rows(b: &mut Block, x: &Value, x_ty: &IrType, positions: &Value, count: &Value, depth: usize) -> Result<Value, String> {
    let order = {
        let empty = b.tensor_empty(TensorType::new(vec![None], ScalarType::I64), std::slice::from_ref(count));
        b.linalg_generic(&[], &[empty], &[AffineMap::identity(1)], &[IteratorType::Parallel], |body, _| {
            let i = body.linalg_index(0);
            Ok::<_, String>(vec![body.index_cast(&i, ScalarType::I64)])
        })?
        .remove(0)
    };
    let sizes: Vec<Value> = (0..depth).filter(|&k| x_ty.shape[k].is_none()).map(|k| b.tensor_dim(x, k)).collect();
    let empty = b.tensor_empty(TensorType::new(x_ty.shape[..depth].to_vec(), ScalarType::I64), &sizes);
    let none = b.constant_int(-1, ScalarType::I64);
    let init = b.linalg_fill(&none, &empty);
    b.scatter(&order, positions, &init, false, |body, update, current| Ok::<_, String>(body.arith(Arith::MaxSI, current, update)))
}

/// x with each position on its first `depth` axes that `last` names a row for replaced by
/// that row of `updates`.
pub(super) fn take_rows(b: &mut Block, x: &Value, x_ty: &IrType, last: &Value, updates: &Value, depth: usize) -> Result<Value, String> {
    let rank = x_ty.ndim();
    let sizes: Vec<Value> = (0..rank).filter(|&k| x_ty.shape[k].is_none()).map(|k| b.tensor_dim(x, k)).collect();
    let init = b.tensor_empty(tensor_type(x_ty), &sizes);
    let maps = [AffineMap::identity(rank), AffineMap { dims: rank, results: (0..depth).map(AffineExpr::Dim).collect() }, AffineMap::identity(rank)];
    Ok(b
        .linalg_generic(&[x.clone(), last.clone()], &[init], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
            let zero = body.constant_int(0, ScalarType::I64);
            let found = body.cmpi(CmpI::Sge, &args[1], &zero);
            let mut index = vec![body.index_cast(&args[1], ScalarType::Index)];
            index.extend((depth..rank).map(|k| body.linalg_index(k)));
            let (old, updates) = (args[0].clone(), updates.clone());
            Ok::<_, String>(body.scf_if(&found, &[old.scalar()], |then| vec![then.tensor_extract(&updates, &index)], |_| vec![old.clone()]))
        })?
        .remove(0))
}

/// One step of numpy's broadcast of run-time extents that may be 1: the extent so far
/// (none yet: `n`), unless it is 1, where `n` takes over. Mismatches are checked apart.
pub(super) fn broadcast_extent(b: &mut Block, so_far: Option<Value>, n: Value) -> Value {
    match so_far {
        None => n,
        Some(s) => {
            let one = b.constant_index(1);
            let is_one = b.cmpi(CmpI::Eq, &s, &one);
            b.select(&is_one, &n, &s)
        }
    }
}
