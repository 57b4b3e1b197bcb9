//! `AdvancedSubtensor` and `AdvancedIncSubtensor`: numpy's indexing by several integer
//! arrays (`x[i, j]`, `x[:, i]`, `x[i[:, None], j]`), with full slices on the other axes.
//!
//! The index arrays broadcast together to a shape B (a dim that is not statically 1 must
//! equal the others': `IndexError` before the call, as numpy raises). The result is
//! x's sliced axes with B in place of the indexed ones where those are adjacent, else B
//! first (numpy's rule). Negative indices wrap; any other index out of bounds raises
//! `IndexError` and nothing is read or written out of bounds. Slices with bounds mixed
//! with arrays, and boolean masks (whose result size depends on the data), are refused.

use super::shapes::Dim;
use super::subtensor::{add_element, check_indices_on_axis, guarded_extract, scatter_updates, wrap, Region};
use super::{scalar, tensor_type, Context, ErrorKind};
use crate::dtype::DType;
use crate::ir::{IdxEntry, Node, TensorType as IrType, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, CmpI, IndexArg, IteratorType, ScalarType, TensorType, Value};

/// Where each axis of the result comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OutAxis {
    /// Dim `d` of the broadcast index shape B.
    Broadcast(usize),
    /// All of x's axis.
    Slice(usize),
}

/// The indexing of x by `idx_list`, worked out.
struct Plan {
    /// For each axis of x: the index array (position in `arrays`) that indexes it, or
    /// `None` for a full slice.
    axes: Vec<Option<usize>>,
    /// The index arrays, in axis order.
    arrays: Vec<(VarId, IrType)>,
    /// The broadcast shape B.
    b_dims: Vec<Dim>,
    /// The result's axes.
    out: Vec<OutAxis>,
    /// The position of B's first dim among the result's axes.
    b_first: usize,
}

fn plan(cx: &mut Context, x_var: VarId, index_inputs: &[VarId], idx_list: &[IdxEntry], what: &str) -> Result<Plan, String> {
    let x_ty = cx.graph.ty(x_var).clone();
    if idx_list.len() > x_ty.ndim() {
        return Err(format!("{} indices for a tensor of rank {}", idx_list.len(), x_ty.ndim()));
    }
    let mut axes = vec![None; x_ty.ndim()];
    let mut arrays = Vec::new();
    for (axis, entry) in idx_list.iter().enumerate() {
        match entry {
            IdxEntry::Index(p) => {
                let v = *index_inputs.get(*p).ok_or("an index position beyond the inputs")?;
                let ty = cx.graph.ty(v).clone();
                if ty.dtype == DType::Bool {
                    return Err("boolean mask indexing (the result's size depends on the data)".into());
                }
                if !ty.dtype.is_int() {
                    return Err(format!("an index array of {}", ty.dtype));
                }
                axes[axis] = Some(arrays.len());
                arrays.push((v, ty));
            }
            IdxEntry::Slice { start: None, stop: None, step: None } => {}
            IdxEntry::Slice { .. } => return Err("a slice with bounds among integer index arrays".into()),
        }
    }
    if arrays.is_empty() {
        return Err("no index array".into());
    }
    // B: the arrays right-aligned; a dim not statically 1 must equal the others there.
    let nb = arrays.iter().map(|(_, t)| t.ndim()).max().unwrap_or(0);
    let mut b_dims = Vec::with_capacity(nb);
    for d in 0..nb {
        let mut dim: Option<Dim> = None;
        for (v, t) in &arrays {
            let Some(k) = (d + t.ndim()).checked_sub(nb) else { continue };
            if t.broadcastable(k) {
                continue;
            }
            let this = cx.dims(*v)[k];
            match dim {
                None => dim = Some(this),
                Some(first) => cx.require(first, this, &format!("{what} (index arrays broadcast together)"), ErrorKind::Index),
            }
        }
        b_dims.push(dim.unwrap_or(Dim::Static(1)));
    }
    let indexed: Vec<usize> = (0..axes.len()).filter(|&a| axes[a].is_some()).collect();
    let adjacent = indexed[indexed.len() - 1] - indexed[0] + 1 == indexed.len();
    let b_first = if adjacent { indexed[0] } else { 0 };
    let slices: Vec<usize> = (0..axes.len()).filter(|&a| axes[a].is_none()).collect();
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
                OutAxis::Slice(a) => x_dims[a],
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
        for (axis, j) in self.axes.iter().enumerate() {
            let Some(j) = *j else { continue };
            let (v, t) = self.arrays[j].clone();
            let a = cx.value(b, v)?;
            let flat = b.tensor_flatten(&a);
            let n = b.tensor_dim(x, axis);
            check_indices_on_axis(cx, b, &flat, t.dtype, &n, what, axis);
            values.push(a);
        }
        Ok(values)
    }

    /// Sizes of the result's dynamic dims, for `tensor.empty`.
    fn out_sizes(&self, b: &mut Block, out_ty: &IrType, x: &Value, arrays: &[Value]) -> Vec<Value> {
        let nb = self.b_dims.len();
        let mut sizes = Vec::new();
        for (k, o) in self.out.iter().enumerate() {
            if out_ty.shape[k].is_some() {
                continue;
            }
            sizes.push(match *o {
                OutAxis::Slice(a) => b.tensor_dim(x, a),
                OutAxis::Broadcast(d) => {
                    // The first array with a dim there that is not a broadcast 1.
                    let found = self.arrays.iter().enumerate().find_map(|(j, (_, t))| {
                        let kk = (d + t.ndim()).checked_sub(nb)?;
                        (!t.broadcastable(kk)).then_some((j, kk))
                    });
                    match found {
                        Some((j, kk)) => b.tensor_dim(&arrays[j], kk),
                        None => b.constant_index(1),
                    }
                }
            });
        }
        sizes
    }

    /// In a body over the result's axes whose first arguments are the index elements:
    /// the source index into x and whether every index is in bounds.
    fn source(&self, body: &mut Block, args: &[Value], x: &Value) -> (Vec<Value>, Option<Value>) {
        let mut ok: Option<Value> = None;
        let mut src = Vec::with_capacity(self.axes.len());
        for (axis, j) in self.axes.iter().enumerate() {
            match *j {
                Some(j) => {
                    let n = body.tensor_dim(x, axis);
                    let (w, in_bounds) = wrap(body, &args[j], self.arrays[j].1.dtype, &n);
                    ok = Some(match ok {
                        None => in_bounds,
                        Some(o) => body.arith(Arith::AndI, &o, &in_bounds),
                    });
                    src.push(w);
                }
                None => {
                    let k = self.out.iter().position(|o| *o == OutAxis::Slice(axis)).expect("every sliced axis is a result axis");
                    src.push(body.linalg_index(k));
                }
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
    let p = plan(cx, x_var, &node.inputs[1..], idx_list, "AdvancedSubtensor")?;
    if p.out.len() != out_ty.ndim() {
        return Err(format!("a result of rank {} where PyTensor says {}", p.out.len(), out_ty.ndim()));
    }
    let x = cx.value(b, x_var)?;
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
/// (numpy's `np.add.at`), `y` broadcast to the indexed region's shape. On the CPU, for
/// vectors (or scalars) of indices on x's leading axes (`x[i, j]`, `x[i, j, :]`: what the
/// gradient of such an `AdvancedSubtensor` makes), a scatter of `y`'s rows at the
/// positions; other layouts, set semantics and other targets are refused by name.
pub fn advanced_inc_subtensor(cx: &mut Context, b: &mut Block, node: &Node, idx_list: &[IdxEntry], set: bool) -> Result<(), String> {
    let what = if set { "AdvancedSetSubtensor" } else { "AdvancedIncSubtensor" };
    if set {
        return Err("set semantics (set_subtensor) with several index arrays".into());
    }
    let (x_var, y_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (x_ty, y_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(y_var).clone());
    let p = plan(cx, x_var, &node.inputs[2..], idx_list, what)?;
    let m = p.arrays.len();
    if p.axes.iter().take(m).any(Option::is_none) || p.b_dims.len() != 1 {
        return Err("index arrays other than vectors on x's leading axes".into());
    }
    if !scalar::has_scatter() {
        return Err("on this target (IREE's code generation for it has no scatter)".into());
    }
    // The region: (N, x.shape[m:]); y broadcasts against it.
    let region = p.out_dims(cx, x_var);
    let rank = region.len();
    if y_ty.ndim() > rank {
        return Err(format!("a value of rank {} for a region of rank {rank}", y_ty.ndim()));
    }
    let lead = rank - y_ty.ndim();
    let y_dims = cx.dims(y_var);
    for a in 0..y_ty.ndim() {
        if !y_ty.broadcastable(a) {
            cx.require_equal(y_dims[a], region[lead + a], what);
        }
    }
    let x = cx.value(b, x_var)?;
    let arrays = p.check_bounds(cx, b, &x, what)?;
    let y = cx.value(b, y_var)?;
    let region_ty = IrType { dtype: x_ty.dtype, shape: vec![None; rank] };
    let sizes = p.out_sizes(b, &region_ty, &x, &arrays);
    // Where an indexed axis of x is empty every index is out of bounds (the check raises
    // after the call) and none may reach the scatter: it then scatters N = 0 rows.
    // Otherwise indices out of bounds are sent to 0, so nothing is written out of bounds.
    let zero = b.constant_index(0);
    let mut count = sizes[0].clone();
    for axis in 0..m {
        let n = b.tensor_dim(&x, axis);
        let empty = b.cmpi(CmpI::Eq, &n, &zero);
        count = b.select(&empty, &zero, &count);
    }
    let mut region_sizes = sizes.clone();
    region_sizes[0] = count.clone();
    // Positions: row k holds the m wrapped indices of B's element k (i64).
    let positions = {
        let empty = b.tensor_empty(TensorType::new(vec![None, Some(m as u64)], ScalarType::I64), std::slice::from_ref(&count));
        let arrays: Vec<Value> = arrays
            .iter()
            .zip(&p.arrays)
            .map(|(a, (_, t))| if t.ndim() == 1 && !t.broadcastable(0) { b.tensor_extract_slice(a, &[IndexArg::Const(0)], &[IndexArg::Dyn(count.clone())]) } else { a.clone() })
            .collect();
        let mut maps: Vec<AffineMap> = (0..m).map(|j| p.array_map(j, 2)).collect();
        maps.push(AffineMap::identity(2));
        let (xx, pp) = (x.clone(), &p);
        b.linalg_generic(&arrays, &[empty], &maps, &[IteratorType::Parallel, IteratorType::Parallel], |body, args| {
            let which = body.linalg_index(1);
            let mut v = body.constant_int(0, ScalarType::I64);
            for (j, a) in args[..m].iter().enumerate() {
                let n = body.tensor_dim(&xx, j);
                let (w, ok) = wrap(body, a, pp.arrays[j].1.dtype, &n);
                let first = body.constant_index(0);
                let w = body.select(&ok, &w, &first);
                let w = body.index_cast(&w, ScalarType::I64);
                let here = body.constant_index(j as i64);
                let is = body.cmpi(CmpI::Eq, &which, &here);
                v = body.select(&is, &w, &v);
            }
            Ok::<_, String>(vec![v])
        })?
        .remove(0)
    };
    // Updates: y broadcast to (N, x.shape[m:]) in x's element type.
    let rest_shape = vec![None; rank - 1];
    let region = Region { count: &count, shape: &rest_shape, sizes: &region_sizes[1..], element: x.tensor().element, dtype: x_ty.dtype };
    let updates = scatter_updates(b, &y, &y_ty, lead, &region)?;
    let xd = x_ty.dtype;
    let dest = cx.destination(&x);
    let r = b.scatter(&updates, &positions, &dest, false, |body, update, current| Ok::<_, String>(add_element(body, current, update, xd)))?;
    let dims = cx.dims(x_var);
    cx.define(out, r, dims);
    Ok(())
}
