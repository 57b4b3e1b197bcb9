//! Indexing: `Subtensor`, `IncSubtensor`, `AdvancedSubtensor1`, `AdvancedIncSubtensor1`,
//! and the index arithmetic they share with `Alloc`, `Reshape`, `Join` and `Split`.
//!
//! Every read is either through an indexing map over operands whose dims were checked
//! equal before the call, or a `tensor.extract` at an index the kernel has proven in
//! bounds (an `scf.if` around it): an index out of bounds sets a flag (`IndexError`) and
//! reads nothing.

use super::scalar::{self, Scalar};
use super::shapes::{Dim, DimExpr, IntExpr};
use super::row_updates::update_rows;
use super::{tensor_type, Context, ErrorKind, IntValue, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::{IdxEntry, Node, Op, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpI, IndexArg, IteratorType, ScalarType, TensorType, Value};

// ---- helpers shared with basic.rs and shape.rs ----

/// The value of a 0-d integer tensor as an `index` (sign- or zero-extended first).
pub(super) fn scalar_index(cx: &mut Context, b: &mut Block, v: VarId) -> Result<Value, String> {
    let ty = cx.graph.ty(v).clone();
    if ty.ndim() != 0 || !ty.dtype.is_int() {
        return Err(format!("an index input of type {ty:?} is not an integer scalar"));
    }
    if let Some(c) = cx.int_values(v).and_then(|vals| match vals.as_slice() {
        [IntValue::Const(c)] => Some(*c),
        _ => None,
    }) {
        return Ok(b.constant_index(c));
    }
    let t = cx.value(b, v)?;
    let e = b.tensor_extract(&t, &[]);
    Ok(int_to_index(b, &e, ty.dtype))
}

/// An integer element of `dtype` as an `index`.
pub(super) fn int_to_index(b: &mut Block, e: &Value, dtype: DType) -> Value {
    if dtype.is_signed_int() && dtype.bits() < 32 {
        // Sign-extended by hand: measured with IREE 3.13 on llvm-cpu, `arith.extsi` of an
        // i16 extracted from a 0-d tensor argument came out zero-extended (-1 read as
        // 65535); `(zext(v) ^ m) - m` with m the sign bit gives the signed value either way.
        let wide = b.cast(Cast::ExtUI, e, ScalarType::I64);
        let m = b.constant_int(1i64 << (dtype.bits() - 1), ScalarType::I64);
        let flipped = b.arith(Arith::XOrI, &wide, &m);
        let signed = b.arith(Arith::SubI, &flipped, &m);
        return b.index_cast(&signed, ScalarType::Index);
    }
    // A uint64 above i64::MAX reads as negative and wraps, as numpy and the C backend
    // read it (as intp).
    let wide = scalar::convert(b, &Scalar { value: e.clone(), dtype }, DType::Int64).value;
    b.index_cast(&wide, ScalarType::Index)
}

/// A one-element `tensor<i8>` flag from an `i1` condition (true: failed).
pub(super) fn flag(b: &mut Block, failed: &Value) -> Value {
    let byte = b.cast(Cast::ExtUI, failed, ScalarType::I8);
    let empty = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    b.linalg_fill(&byte, &empty)
}

/// Adds a run-time check raising `kind` where `failed` (`i1`) is true.
pub(super) fn check(cx: &mut Context, b: &mut Block, failed: &Value, kind: ErrorKind, message: String) {
    let f = flag(b, failed);
    cx.add_check(f, RuntimeCheck { kind, message });
}

pub(super) fn or(b: &mut Block, a: Option<Value>, c: Value) -> Value {
    match a {
        None => c,
        Some(a) => b.arith(Arith::OrI, &a, &c),
    }
}

/// Zero of a storage element type (bool bytes are `i8`).
pub(super) fn zero_of(b: &mut Block, t: ScalarType) -> Value {
    if t.is_float() {
        b.constant_f64(0.0, t)
    } else {
        b.constant_int(0, t)
    }
}

/// `min(max(v, lo), hi)` on `index` values.
fn clamp(b: &mut Block, v: &Value, lo: &Value, hi: &Value) -> Value {
    let v = b.arith(Arith::MaxSI, v, lo);
    b.arith(Arith::MinSI, &v, hi)
}

/// `tensor.extract` guarded by `ok`: zero where it is false, with nothing read.
pub(super) fn guarded_extract(b: &mut Block, ok: Option<&Value>, t: &Value, indices: &[Value]) -> Value {
    match ok {
        None => b.tensor_extract(t, indices),
        Some(ok) => {
            let elem = t.tensor().element;
            let (t, indices) = (t.clone(), indices.to_vec());
            b.scf_if(ok, &[elem], |then| vec![then.tensor_extract(&t, &indices)], |other| vec![zero_of(other, elem)])
                .remove(0)
        }
    }
}

/// A storage element of `from` as `to`'s storage (bool bytes via `i1`).
pub(super) fn convert_element(b: &mut Block, v: &Value, from: DType, to: DType) -> Value {
    if from == to {
        return v.clone();
    }
    let mut value = v.clone();
    if from == DType::Bool {
        let z = b.constant_int(0, ScalarType::I8);
        value = b.cmpi(CmpI::Ne, &value, &z);
    }
    let r = scalar::convert(b, &Scalar { value, dtype: from }, to).value;
    if to == DType::Bool {
        b.cast(Cast::ExtUI, &r, ScalarType::I8)
    } else {
        r
    }
}

/// The region a scatter writes: `count` rows, then dims of static sizes `shape` (`None`:
/// dynamic, their sizes in `sizes`, in order), of `dtype` stored as `element`.
pub(super) struct Region<'a> {
    pub count: &'a Value,
    pub shape: &'a [Option<u64>],
    pub sizes: &'a [Value],
    pub element: ScalarType,
    pub dtype: DType,
}

/// A scatter's updates: `y` (which lacks the region's first `lead` axes) broadcast to the
/// region, in its element type; where `y`'s axis 0 is the region's first (the index axis)
/// it is cut to the region's `count` rows first.
pub(super) fn scatter_updates(b: &mut Block, y: &Value, y_ty: &crate::ir::TensorType, lead: usize, region: &Region) -> Result<Value, String> {
    let rank = region.shape.len() + 1;
    let y = if lead == 0 && !y_ty.broadcastable(0) {
        let offsets = vec![IndexArg::Const(0); y_ty.ndim()];
        let mut sizes = vec![IndexArg::Dyn(region.count.clone())];
        for k in 1..y_ty.ndim() {
            sizes.push(match y_ty.shape[k] {
                Some(s) => IndexArg::Const(s as i64),
                None => IndexArg::Dyn(b.tensor_dim(y, k)),
            });
        }
        b.tensor_extract_slice(y, &offsets, &sizes)
    } else {
        y.clone()
    };
    let mut sizes = vec![region.count.clone()];
    sizes.extend(region.sizes.iter().cloned());
    let mut shape = vec![None];
    shape.extend(region.shape.iter().copied());
    let empty = b.tensor_empty(TensorType::new(shape, region.element), &sizes);
    let y_map = AffineMap {
        dims: rank,
        results: (0..y_ty.ndim()).map(|a| if y_ty.broadcastable(a) { AffineExpr::Constant(0) } else { AffineExpr::Dim(lead + a) }).collect(),
    };
    let (xd, yd) = (region.dtype, y_ty.dtype);
    Ok(b
        .linalg_generic(&[y], &[empty], &[y_map, AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, args| {
            Ok::<_, String>(vec![convert_element(body, &args[0], yd, xd)])
        })?
        .remove(0))
}

/// `x + y` of storage elements of `dtype` (bool: or, as numpy's `+=` on bools).
pub(super) fn add_element(b: &mut Block, x: &Value, y: &Value, dtype: DType) -> Value {
    let op = if dtype.is_float() {
        Arith::AddF
    } else if dtype == DType::Bool {
        Arith::OrI
    } else {
        Arith::AddI
    };
    b.arith(op, x, y)
}

// ---- basic indexing ----

/// One axis of `x[idx_list]`, computed in the kernel as `index` values.
enum Axis {
    /// Source index `start + step * i` for output index `i < len`.
    Slice { start: Value, step: Value, len: Value },
    /// A wrapped integer index (in bounds iff the whole access is valid).
    Index(Value),
}

/// A constant or run-time bound of a slice.
fn bound(cx: &mut Context, b: &mut Block, inputs: &[VarId], p: Option<usize>) -> Result<(Option<Value>, Option<Option<i64>>), String> {
    let Some(p) = p else { return Ok((None, Some(None))) };
    let v = *inputs.get(p).ok_or("idx_list points past the index inputs")?;
    if cx.graph.variables[v].is_none {
        return Ok((None, Some(None)));
    }
    let known = match cx.int_values(v).as_deref() {
        Some([IntValue::Const(c)]) => Some(Some(*c)),
        _ => None,
    };
    Ok((Some(scalar_index(cx, b, v)?), known))
}

/// A slice of one axis as numpy normalizes it: source index `start + step * i` for
/// `i < len`, as `index` values, and the result's dim.
pub(super) struct SliceAxis {
    pub start: Value,
    pub step: Value,
    pub len: Value,
    pub dim: Dim,
}

/// The slice of an axis of length `n` (whose dim is `base`) with bounds at positions of
/// `inputs` (`None`: left out). A run-time step of 0 is or-ed into `bad_step` (the caller
/// raises `ValueError` for it) and 1 stands in for it.
pub(super) fn slice_axis(
    cx: &mut Context,
    b: &mut Block,
    n: &Value,
    base: Dim,
    inputs: &[VarId],
    [start, stop, step]: [Option<usize>; 3],
    bad_step: &mut Option<Value>,
) -> Result<SliceAxis, String> {
    let (zero, one) = (b.constant_index(0), b.constant_index(1));
    let minus_one = b.constant_index(-1);
    let (start_v, start_c) = bound(cx, b, inputs, start)?;
    let (stop_v, stop_c) = bound(cx, b, inputs, stop)?;
    let (step_v, step_c) = bound(cx, b, inputs, step)?;
    if step_c == Some(Some(0)) {
        return Err("slice step is the constant 0".into());
    }
    // A run-time step of 0 raises ValueError as numpy does; 1 stands in for it.
    let step = match step_v {
        None => one.clone(),
        Some(s) => {
            if step_c.is_none() {
                let is_zero = b.cmpi(CmpI::Eq, &s, &zero);
                *bad_step = Some(or(b, bad_step.take(), is_zero.clone()));
                b.select(&is_zero, &one, &s)
            } else {
                s
            }
        }
    };
    let pos = b.cmpi(CmpI::Sgt, &step, &zero);
    let n_minus_1 = b.arith(Arith::SubI, n, &one);
    // numpy's canonical bounds: within [0, n] for a positive step, [-1, n-1] for a
    // negative one.
    let (lo, hi) = (b.select(&pos, &zero, &minus_one), b.select(&pos, n, &n_minus_1));
    let norm = |b: &mut Block, v: Option<Value>, default_pos: &Value, default_neg: &Value| match v {
        None => b.select(&pos, default_pos, default_neg),
        Some(v) => {
            let neg = b.cmpi(CmpI::Slt, &v, &zero);
            let shifted = b.arith(Arith::AddI, &v, n);
            let v = b.select(&neg, &shifted, &v);
            clamp(b, &v, &lo, &hi)
        }
    };
    let start_i = norm(b, start_v, &zero, &n_minus_1);
    let stop_i = norm(b, stop_v, n, &minus_one);
    // Positive step: ceil((stop - start) / step) if stop > start; negative: (start - stop
    // - 1) / -step + 1 if start > stop; else 0.
    let diff_pos = b.arith(Arith::SubI, &stop_i, &start_i);
    let step_m1 = b.arith(Arith::SubI, &step, &one);
    let num_pos = b.arith(Arith::AddI, &diff_pos, &step_m1);
    let len_pos = b.arith(Arith::DivSI, &num_pos, &step);
    let neg_step = b.arith(Arith::SubI, &zero, &step);
    let diff_neg = b.arith(Arith::SubI, &start_i, &stop_i);
    let num_neg = b.arith(Arith::SubI, &diff_neg, &one);
    let q_neg = b.arith(Arith::DivSI, &num_neg, &neg_step);
    let len_neg = b.arith(Arith::AddI, &q_neg, &one);
    let nonempty_pos = b.cmpi(CmpI::Sgt, &diff_pos, &zero);
    let nonempty_neg = b.cmpi(CmpI::Sgt, &diff_neg, &zero);
    let len_pos = b.select(&nonempty_pos, &len_pos, &zero);
    let len_neg = b.select(&nonempty_neg, &len_neg, &zero);
    let len = b.select(&pos, &len_pos, &len_neg);
    // A stop that is a known dim (`x[:y.shape[0]]`, as a Scan's gradient slices its
    // buffers) from the start with step 1: the lesser of the two, checkable before the
    // call.
    let stop_dim = stop.and_then(|p| inputs.get(p)).and_then(|&v| match cx.int_values(v).as_deref() {
        Some([IntValue::Dim(d)]) => Some(*d),
        _ => None,
    });
    // Bounds computed from dims (a Scan's gradient slices with PyTensor's own length
    // arithmetic: min, switch, floor division): a length evaluated before the call.
    let computed = |cx: &Context, p: Option<usize>| -> Option<Option<IntExpr>> {
        let Some(p) = p else { return Some(None) };
        let v = *inputs.get(p)?;
        if cx.graph.variables[v].is_none {
            return Some(None);
        }
        cx.int_expr(v).map(Some)
    };
    let dim = match (start_c, stop_c, step_c, stop_dim) {
        (Some(s), Some(e), Some(st), _) => cx.derived(DimExpr::Slice { base, start: s, stop: e, step: st.unwrap_or(1) }),
        (Some(None | Some(0)), None, Some(None | Some(1)), Some(d)) => cx.derived(DimExpr::Min(vec![base, d])),
        (_, _, Some(st), _) => match (computed(cx, start), computed(cx, stop)) {
            (Some(s), Some(e)) => cx.derived(DimExpr::SliceBy { base, start: s, stop: e, step: st.unwrap_or(1) }),
            _ => cx.runtime_dim(),
        },
        _ => cx.runtime_dim(),
    };
    Ok(SliceAxis { start: start_i, step, len, dim })
}

/// The axes of `x[idx_list]` (padded with full slices), the output's dims, and the `i1`
/// that is true where every integer index is in bounds (`None`: nothing to check).
fn plan(
    cx: &mut Context,
    b: &mut Block,
    x_var: VarId,
    idx_list: &[IdxEntry],
    inputs: &[VarId],
    what: &str,
) -> Result<(Vec<Axis>, Vec<Dim>, Option<Value>), String> {
    let x = cx.value(b, x_var)?;
    let x_ty = cx.graph.ty(x_var).clone();
    let x_dims = cx.dims(x_var);
    if idx_list.len() > x_ty.ndim() {
        return Err("more indices than dims".into());
    }
    let zero = b.constant_index(0);
    let mut axes = Vec::new();
    let mut dims = Vec::new();
    let mut valid: Option<Value> = None;
    let mut bad_step: Option<Value> = None;
    let full = IdxEntry::Slice { start: None, stop: None, step: None };
    for k in 0..x_ty.ndim() {
        let entry = idx_list.get(k).unwrap_or(&full);
        let n = b.tensor_dim(&x, k);
        match entry {
            IdxEntry::Index(p) => {
                let v = *inputs.get(*p).ok_or("idx_list points past the index inputs")?;
                let i = scalar_index(cx, b, v)?;
                let neg = b.cmpi(CmpI::Slt, &i, &zero);
                let shifted = b.arith(Arith::AddI, &i, &n);
                let wrapped = b.select(&neg, &shifted, &i);
                // Unsigned: a negative wrapped index is out of bounds too.
                let ok = b.cmpi(CmpI::Ult, &wrapped, &n);
                let bad = b.cmpi(CmpI::Uge, &wrapped, &n);
                check(cx, b, &bad, ErrorKind::Index, format!("{what}: index out of bounds for axis {k}"));
                valid = Some(match valid {
                    None => ok,
                    Some(v) => b.arith(Arith::AndI, &v, &ok),
                });
                axes.push(Axis::Index(wrapped));
            }
            IdxEntry::Slice { start, stop, step } => {
                let s = slice_axis(cx, b, &n, x_dims[k], inputs, [*start, *stop, *step], &mut bad_step)?;
                dims.push(s.dim);
                axes.push(Axis::Slice { start: s.start, step: s.step, len: s.len });
            }
        }
    }
    if let Some(bad) = bad_step {
        check(cx, b, &bad, ErrorKind::Value, format!("{what}: slice step cannot be zero"));
    }
    Ok((axes, dims, valid))
}

/// `Subtensor`: a generic over the output whose body reads `x` at the source index of
/// each output index (a gather, so negative steps need no reversed view).
pub fn subtensor(cx: &mut Context, b: &mut Block, node: &Node, idx_list: &[IdxEntry]) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let out_ty = cx.graph.ty(out).clone();
    let x = cx.value(b, x_var)?;
    let (axes, mut dims, valid) = plan(cx, b, x_var, idx_list, &node.inputs[1..], "Subtensor")?;
    let lens: Vec<Value> = axes
        .iter()
        .filter_map(|a| match a {
            Axis::Slice { len, .. } => Some(len.clone()),
            Axis::Index(_) => None,
        })
        .collect();
    if lens.len() != out_ty.ndim() {
        return Err(format!("{} sliced dims for an output of rank {}", lens.len(), out_ty.ndim()));
    }
    let mut sizes = Vec::new();
    for (j, len) in lens.iter().enumerate() {
        match out_ty.shape[j] {
            // PyTensor fixed it from the same constants and static dims.
            Some(n) => cx.require_equal(dims[j], Dim::Static(n), "Subtensor"),
            None => sizes.push(len.clone()),
        }
        if let Some(n) = out_ty.shape[j] {
            dims[j] = Dim::Static(n);
        }
    }
    let rank = out_ty.ndim();
    // Only slices with positive constant steps: a strided view, which IREE fuses with
    // what it reads from (a gather of a gather failed to compile in IREE 3.13).
    let steps: Option<Vec<i64>> = (0..axes.len())
        .map(|k| match idx_list.get(k) {
            None => Some(1),
            Some(IdxEntry::Slice { step: None, .. }) => Some(1),
            Some(IdxEntry::Slice { step: Some(p), .. }) => match cx.int_values(node.inputs[1 + p]).as_deref() {
                Some([IntValue::Const(c)]) if *c > 0 => Some(*c),
                _ => None,
            },
            Some(IdxEntry::Index(_)) => None,
        })
        .collect();
    if let Some(steps) = steps {
        let offsets: Vec<IndexArg> = axes
            .iter()
            .map(|a| match a {
                Axis::Slice { start, .. } => IndexArg::Dyn(start.clone()),
                Axis::Index(_) => unreachable!("only slices here"),
            })
            .collect();
        let slice_sizes: Vec<IndexArg> = lens
            .iter()
            .enumerate()
            .map(|(j, len)| match out_ty.shape[j] {
                Some(n) => IndexArg::Const(n as i64),
                None => IndexArg::Dyn(len.clone()),
            })
            .collect();
        let r = b.tensor_extract_slice_strided(&x, &offsets, &slice_sizes, &steps);
        cx.define(out, r, dims);
        return Ok(());
    }
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
        let mut src = Vec::with_capacity(axes.len());
        let mut j = 0;
        for a in &axes {
            match a {
                Axis::Index(i) => src.push(i.clone()),
                Axis::Slice { start, step, .. } => {
                    let i = body.linalg_index(j);
                    let off = body.arith(Arith::MulI, step, &i);
                    src.push(body.arith(Arith::AddI, start, &off));
                    j += 1;
                }
            }
        }
        Ok::<_, String>(vec![guarded_extract(body, valid.as_ref(), &x, &src)])
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `IncSubtensor`: a generic over `x` that, where an element lies in the indexed region,
/// adds (or sets) the matching element of `y` (broadcast over its leading and static-1
/// dims). A dim of `y` that differs from the region's raises `ValueError`, and elements
/// beyond `y`'s actual dims are never read.
pub fn inc_subtensor(cx: &mut Context, b: &mut Block, node: &Node, idx_list: &[IdxEntry], set: bool) -> Result<(), String> {
    let (x_var, y_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let x_ty = cx.graph.ty(x_var).clone();
    let y_ty = cx.graph.ty(y_var).clone();
    let x = cx.value(b, x_var)?;
    let y = cx.value(b, y_var)?;
    let what = if set { "SetSubtensor" } else { "IncSubtensor" };
    let (axes, _, valid) = plan(cx, b, x_var, idx_list, &node.inputs[2..], what)?;
    let view: Vec<usize> = (0..axes.len()).filter(|&k| matches!(axes[k], Axis::Slice { .. })).collect();
    if y_ty.ndim() > view.len() {
        return Err(format!("a value of rank {} for a region of rank {}", y_ty.ndim(), view.len()));
    }
    let lead = view.len() - y_ty.ndim();
    // y's dims: broadcast where static 1 or 1 at run time (numpy's assignment broadcasts
    // those, and the C backend with it: `pt.pad(mode="edge")` relies on it), else they
    // must equal the region's.
    let mut y_dims: Vec<Option<(Value, Value)>> = Vec::new();
    let mut mismatch: Option<Value> = None;
    let one = b.constant_index(1);
    for a in 0..y_ty.ndim() {
        if y_ty.broadcastable(a) {
            y_dims.push(None);
            continue;
        }
        let d = b.tensor_dim(&y, a);
        let Axis::Slice { len, .. } = &axes[view[lead + a]] else { unreachable!() };
        let ne = b.cmpi(CmpI::Ne, &d, len);
        let is_one = b.cmpi(CmpI::Eq, &d, &one);
        let t = b.constant_int(1, ScalarType::I1);
        let not_one = b.arith(Arith::XOrI, &is_one, &t);
        let bad = b.arith(Arith::AndI, &ne, &not_one);
        mismatch = Some(or(b, mismatch, bad));
        y_dims.push(Some((d, is_one)));
    }
    if let Some(m) = mismatch {
        check(cx, b, &m, ErrorKind::Value, format!("{what}: the value's shape does not match the indexed region"));
    }
    let rank = x_ty.ndim();
    let sizes: Vec<Value> = (0..rank).filter(|&k| x_ty.shape[k].is_none()).map(|k| b.tensor_dim(&x, k)).collect();
    let init = b.tensor_empty(tensor_type(&x_ty), &sizes);
    let maps = [AffineMap::identity(rank), AffineMap::identity(rank)];
    let (xd, yd) = (x_ty.dtype, y_ty.dtype);
    let r = b.linalg_generic(&[x], &[init], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
        let zero = body.constant_index(0);
        let mut inside: Option<Value> = valid.clone();
        let mut q_of = Vec::new();
        for (k, a) in axes.iter().enumerate() {
            let j = body.linalg_index(k);
            match a {
                Axis::Index(i) => {
                    let eq = body.cmpi(CmpI::Eq, &j, i);
                    inside = Some(match inside {
                        None => eq,
                        Some(v) => body.arith(Arith::AndI, &v, &eq),
                    });
                }
                Axis::Slice { start, step, len } => {
                    let d = body.arith(Arith::SubI, &j, start);
                    let q = body.arith(Arith::DivSI, &d, step);
                    let rem = body.arith(Arith::RemSI, &d, step);
                    let exact = body.cmpi(CmpI::Eq, &rem, &zero);
                    let ge = body.cmpi(CmpI::Sge, &q, &zero);
                    let lt = body.cmpi(CmpI::Slt, &q, len);
                    let c = body.arith(Arith::AndI, &exact, &ge);
                    let c = body.arith(Arith::AndI, &c, &lt);
                    inside = Some(match inside {
                        None => c,
                        Some(v) => body.arith(Arith::AndI, &v, &c),
                    });
                    q_of.push(q);
                }
            }
        }
        let mut y_index = Vec::new();
        for (a, yd_a) in y_dims.iter().enumerate() {
            match yd_a {
                None => y_index.push(zero.clone()),
                Some((d, is_one)) => {
                    let q = body.select(is_one, &zero, &q_of[lead + a]);
                    let lt = body.cmpi(CmpI::Slt, &q, d);
                    inside = Some(match inside {
                        None => lt,
                        Some(v) => body.arith(Arith::AndI, &v, &lt),
                    });
                    y_index.push(q);
                }
            }
        }
        let old = args[0].clone();
        let inside = match inside {
            Some(v) => v,
            None => body.constant_int(1, ScalarType::I1),
        };
        let elem = old.scalar();
        let y = y.clone();
        let r = body.scf_if(
            &inside,
            &[elem],
            |then| {
                let e = then.tensor_extract(&y, &y_index);
                let e = convert_element(then, &e, yd, xd);
                vec![if set { e } else { add_element(then, &old, &e, xd) }]
            },
            |_| vec![args[0].clone()],
        );
        Ok::<_, String>(r)
    })?;
    let dims = cx.dims(x_var);
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

// ---- advanced indexing by one integer vector ----

/// The wrapped `index` of an index element of `dtype` along an axis of length `n`, and
/// whether it is in bounds.
pub(super) fn wrap(b: &mut Block, e: &Value, dtype: DType, n: &Value) -> (Value, Value) {
    let i = int_to_index(b, e, dtype);
    let zero = b.constant_index(0);
    let neg = b.cmpi(CmpI::Slt, &i, &zero);
    let shifted = b.arith(Arith::AddI, &i, n);
    let w = b.select(&neg, &shifted, &i);
    let ok = b.cmpi(CmpI::Ult, &w, n);
    (w, ok)
}

/// A check that every element of the index vector `idx` is in bounds for length `n`.
fn check_indices(cx: &mut Context, b: &mut Block, idx: &Value, dtype: DType, n: &Value, what: &str) {
    check_indices_on_axis(cx, b, idx, dtype, n, what, 0)
}

/// The same for indices into axis `axis`.
pub(super) fn check_indices_on_axis(cx: &mut Context, b: &mut Block, idx: &Value, dtype: DType, n: &Value, what: &str, axis: usize) {
    let empty = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let zero = b.constant_int(0, ScalarType::I8);
    let init = b.linalg_fill(&zero, &empty);
    let maps = [AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }];
    let n = n.clone();
    let r = b
        .linalg_generic(std::slice::from_ref(idx), &[init], &maps, &[IteratorType::Reduction], |body, args| {
            let (_, ok) = wrap(body, &args[0], dtype, &n);
            let t = body.constant_int(1, ScalarType::I1);
            let bad = body.arith(Arith::XOrI, &ok, &t);
            let bad = body.cast(Cast::ExtUI, &bad, ScalarType::I8);
            Ok::<_, String>(vec![body.arith(Arith::OrI, &bad, &args[1])])
        })
        .expect("the check's body cannot fail");
    cx.add_check(r[0].clone(), RuntimeCheck { kind: ErrorKind::Index, message: format!("{what}: index out of bounds for axis {axis}") });
}

/// `AdvancedSubtensor1`: `x[idx]` along axis 0; negative indices wrap, others out of
/// bounds raise `IndexError` and are not read.
pub fn advanced_subtensor1(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (x_var, i_var, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (x_ty, i_ty, out_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(i_var).clone(), cx.graph.ty(out).clone());
    if x_ty.ndim() == 0 || i_ty.ndim() != 1 || !i_ty.dtype.is_int() {
        return Err("needs an integer vector indexing a tensor of rank >= 1".into());
    }
    let x = cx.value(b, x_var)?;
    let idx = cx.value(b, i_var)?;
    let n = b.tensor_dim(&x, 0);
    if x_ty.shape[0] == Some(0) {
        // No rows: nothing is read, every index is out of bounds.
        check_indices(cx, b, &idx, i_ty.dtype, &n, "AdvancedSubtensor1");
    }
    let rank = out_ty.ndim();
    let mut sizes = Vec::new();
    for k in 0..rank {
        if out_ty.shape[k].is_none() {
            sizes.push(if k == 0 { b.tensor_dim(&idx, 0) } else { b.tensor_dim(&x, k) });
        }
    }
    let out_tt = tensor_type(&out_ty);
    let init = b.tensor_empty(out_tt.clone(), &sizes);
    // The read is unconditional, from row 0 where an index is out of bounds (the check
    // raises after the call; the element is zeroed), so that IREE vectorizes it as a
    // gather: an `scf.if` around it (guarded_extract) kept the kernel scalar, and a gather
    // reading its result failed to compile. Row 0 exists only where x has rows.
    // The bounds check is folded into the gather, which also writes a byte per index
    // (1 where it is out of bounds) that a reduction then ORs: reading the 1-byte flags
    // again costs an eighth of reading the i64 indices a second time in a separate check.
    let idx_all = idx.clone();
    let gather = |cx: &mut Context, b: &mut Block, idx: &Value, init: &Value, count: &Value, no_rows: &Value| {
        let flags = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(count));
        let maps = [AffineMap { dims: rank, results: vec![AffineExpr::Dim(0)] }, AffineMap::identity(rank), AffineMap { dims: rank, results: vec![AffineExpr::Dim(0)] }];
        let (x, n, dtype) = (x.clone(), n.clone(), i_ty.dtype);
        let mut r = b
            .linalg_generic(std::slice::from_ref(idx), &[init.clone(), flags], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
                let (w, ok) = wrap(body, &args[0], dtype, &n);
                let first = body.constant_index(0);
                let mut src = vec![body.select(&ok, &w, &first)];
                src.extend((1..rank).map(|k| body.linalg_index(k)));
                let e = body.tensor_extract(&x, &src);
                let zero = zero_of(body, e.scalar());
                let t = body.constant_int(1, ScalarType::I1);
                let bad = body.arith(Arith::XOrI, &ok, &t);
                Ok::<_, String>(vec![body.select(&ok, &e, &zero), body.cast(Cast::ExtUI, &bad, ScalarType::I8)])
            })
            .expect("the gather's body cannot fail");
        let flags = r.remove(1);
        // Where x has no rows no index reached the gather, and any index is out of bounds.
        let idx_count = b.tensor_dim(&idx_all, 0);
        let zero = b.constant_index(0);
        let some = b.cmpi(CmpI::Ne, &idx_count, &zero);
        let missed = b.arith(Arith::AndI, no_rows, &some);
        let missed = b.cast(Cast::ExtUI, &missed, ScalarType::I8);
        let empty = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
        let acc = b.linalg_fill(&missed, &empty);
        let any = b
            .linalg_generic(&[flags], &[acc], &[AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }], &[IteratorType::Reduction], |body, args| {
                Ok::<_, String>(vec![body.arith(Arith::OrI, &args[0], &args[1])])
            })
            .expect("the check's body cannot fail");
        cx.add_check(any[0].clone(), RuntimeCheck { kind: ErrorKind::Index, message: "AdvancedSubtensor1: index out of bounds for axis 0".into() });
        r.remove(0)
    };
    let r = match x_ty.shape[0] {
        Some(0) => {
            let zero = zero_of(b, out_tt.element);
            b.linalg_fill(&zero, &init)
        }
        Some(_) => {
            let count = b.tensor_dim(&idx, 0);
            let no_rows = b.constant_int(0, ScalarType::I1);
            gather(cx, b, &idx, &init, &count, &no_rows)
        }
        None => {
            // Rows known at run time: where there are none, no index is read (m = 0 of
            // them; every index is out of bounds then and the check raises, so the rows
            // left unwritten are never seen). An `scf.if` on the host between a fill and
            // the gather lost the check of a second gather in the same function (IREE 3.13).
            let zero = b.constant_index(0);
            let count = b.tensor_dim(&idx, 0);
            let no_rows = b.cmpi(CmpI::Eq, &n, &zero);
            let m = b.select(&no_rows, &zero, &count);
            let idx_m = b.tensor_extract_slice(&idx, &[IndexArg::Const(0)], &[IndexArg::Dyn(m.clone())]);
            let mut part_shape = out_tt.shape.clone();
            part_shape[0] = None;
            let mut part_sizes = vec![m.clone()];
            part_sizes.extend((1..rank).filter(|&k| out_ty.shape[k].is_none()).map(|k| b.tensor_dim(&x, k)));
            let part = b.tensor_empty(TensorType::new(part_shape, out_tt.element), &part_sizes);
            let g = gather(cx, b, &idx_m, &part, &m, &no_rows);
            let offsets = vec![IndexArg::Const(0); rank];
            b.tensor_insert_slice(&g, &init, &offsets)
        }
    };
    let r = vec![r];
    let mut dims = vec![cx.dims(i_var)[0]];
    dims.extend(cx.dims(x_var).into_iter().skip(1));
    for (k, d) in dims.iter_mut().enumerate() {
        if let Some(s) = out_ty.shape[k] {
            *d = Dim::Static(s);
        }
    }
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// `AdvancedIncSubtensor1`: `x[idx] += y` with repeated indices accumulating in index
/// order (numpy's `np.add.at`), or `x[idx] = y` where the last of repeated indices wins.
/// `y` broadcasts against `(len(idx), *x.shape[1:])`; its other dims must equal those
/// (checked before the call). Where the target has `iree_linalg_ext.scatter` (the CPU)
/// both are scatters over the indices, O(len(idx) * row) work: the increment scatters
/// `y`'s rows with an add (repeated rows combined one after the other), the assignment
/// scatters each index's position with a max (order-free) to find the last one per row,
/// then takes that row of `y`. Elsewhere (GPUs) both are reductions over the indices for
/// each row of `x`: O(rows * len(idx)), simple and free of write races.
pub fn advanced_inc_subtensor1(cx: &mut Context, b: &mut Block, node: &Node, set: bool) -> Result<(), String> {
    let (x_var, y_var, i_var, out) = (node.inputs[0], node.inputs[1], node.inputs[2], node.outputs[0]);
    let (x_ty, y_ty, i_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(y_var).clone(), cx.graph.ty(i_var).clone());
    if x_ty.ndim() == 0 || i_ty.ndim() != 1 || !i_ty.dtype.is_int() || y_ty.ndim() > x_ty.ndim() {
        return Err("needs an integer vector indexing a tensor of rank >= 1 and a value of no larger rank".into());
    }
    let what = if set { "AdvancedSetSubtensor1" } else { "AdvancedIncSubtensor1" };
    let x = cx.value(b, x_var)?;
    let y = cx.value(b, y_var)?;
    let idx = cx.value(b, i_var)?;
    // The region's dims: (len(idx), x.shape[1:]); y's trailing dims must match them.
    let lead = x_ty.ndim() - y_ty.ndim();
    let mut region = vec![cx.dims(i_var)[0]];
    region.extend(cx.dims(x_var).into_iter().skip(1));
    let y_dims = cx.dims(y_var);
    for a in 0..y_ty.ndim() {
        if !y_ty.broadcastable(a) {
            cx.require_equal(y_dims[a], region[lead + a], what);
        }
    }
    let n = b.tensor_dim(&x, 0);
    if scalar::has_sequential_kernels() {
        let rows = RowUpdate { x, y, idx, n, x_ty, y_ty, index_dtype: i_ty.dtype, what };
        let r = rows.by_loop(cx, b, set)?;
        let dims = cx.dims(x_var);
        cx.define(out, r, dims);
        return Ok(());
    }
    if !scalar::has_scatter() {
        // The scatters check their indices as they wrap them (`positions`).
        check_indices(cx, b, &idx, i_ty.dtype, &n, what);
    }
    // The increment accumulates into x itself; a slice of another tensor first becomes a
    // tensor of its own (IREE 3.13 fails to compile a scatter into a strided view of an
    // argument, "stack allocation size overflows 64 bits": `inc_subtensor(m[1:][i], y)`).
    let x = if set {
        x
    } else if is_slice(cx, x_var) {
        gathered_copy(b, &x)?
    } else {
        cx.destination(&x)
    };
    let rows = RowUpdate { x, y, idx, n, x_ty, y_ty, index_dtype: i_ty.dtype, what };
    let r = match (set, scalar::has_scatter()) {
        (false, true) => rows.add_by_scatter(cx, b)?,
        (false, false) => rows.add_by_reduction(b)?,
        (true, scatter) => {
            let last = if scatter { rows.last_by_scatter(cx, b)? } else { rows.last_by_reduction(b)? };
            rows.take_last(b, last)?
        }
    };
    let dims = cx.dims(x_var);
    cx.define(out, r, dims);
    Ok(())
}

/// Whether `var` is a `Subtensor`'s result (a view of another tensor).
pub(super) fn is_slice(cx: &Context, var: VarId) -> bool {
    cx.graph.nodes.iter().any(|n| matches!(n.op, Op::Subtensor { .. }) && n.outputs.contains(&var))
}

/// A copy of `t` as a kernel that reads it element by element (an identity copy IREE
/// would fold back into the view).
pub(super) fn gathered_copy(b: &mut Block, t: &Value) -> Result<Value, String> {
    let rank = t.tensor().rank();
    let sizes: Vec<Value> = (0..rank).filter(|&a| t.tensor().shape[a].is_none()).map(|a| b.tensor_dim(t, a)).collect();
    let init = b.tensor_empty(t.tensor().clone(), &sizes);
    let source = t.clone();
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
        let index: Vec<Value> = (0..rank).map(|a| body.linalg_index(a)).collect();
        Ok::<_, String>(vec![body.tensor_extract(&source, &index)])
    })?;
    Ok(r[0].clone())
}

/// The operands of an `AdvancedIncSubtensor1`: `x`, whose rows `idx` names (along axis 0,
/// of length `n`), and `y`.
struct RowUpdate {
    x: Value,
    y: Value,
    idx: Value,
    n: Value,
    x_ty: crate::ir::TensorType,
    y_ty: crate::ir::TensorType,
    index_dtype: DType,
    what: &'static str,
}

impl RowUpdate {
    fn rank(&self) -> usize {
        self.x_ty.ndim()
    }

    /// Leading dims of the region that `y` leaves out (it broadcasts along them).
    fn lead(&self) -> usize {
        self.x_ty.ndim() - self.y_ty.ndim()
    }

    /// The indices as an `N x 1` i64 tensor of rows to scatter to, and `N`. Where `x`
    /// has no rows every index is out of bounds (the check raises after the call) and
    /// none may reach the scatter: then `N` is 0. Otherwise indices out of bounds are
    /// sent to row 0, so nothing is ever written out of bounds. The same pass checks the
    /// indices: it writes a byte per index (1 where out of bounds) that a reduction ORs,
    /// which reads an eighth of what a second pass over the i64 indices would.
    fn positions(&self, cx: &mut Context, b: &mut Block) -> Result<(Value, Value), String> {
        let zero = b.constant_index(0);
        let count = b.tensor_dim(&self.idx, 0);
        let no_rows = b.cmpi(CmpI::Eq, &self.n, &zero);
        let m = b.select(&no_rows, &zero, &count);
        let idx = b.tensor_extract_slice(&self.idx, &[IndexArg::Const(0)], &[IndexArg::Dyn(m.clone())]);
        let empty = b.tensor_empty(TensorType::new(vec![None], ScalarType::I64), std::slice::from_ref(&m));
        let flags = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(&m));
        let maps = [AffineMap::identity(1), AffineMap::identity(1), AffineMap::identity(1)];
        let (n, id) = (self.n.clone(), self.index_dtype);
        let mut r = b.linalg_generic(&[idx], &[empty, flags], &maps, &[IteratorType::Parallel], |body, args| {
            let (w, ok) = wrap(body, &args[0], id, &n);
            let first = body.constant_index(0);
            let w = body.select(&ok, &w, &first);
            let t = body.constant_int(1, ScalarType::I1);
            let bad = body.arith(Arith::XOrI, &ok, &t);
            Ok::<_, String>(vec![body.index_cast(&w, ScalarType::I64), body.cast(Cast::ExtUI, &bad, ScalarType::I8)])
        })?;
        // Where x has no rows no index was wrapped, and any index is out of bounds.
        let some = b.cmpi(CmpI::Ne, &count, &zero);
        let missed = b.arith(Arith::AndI, &no_rows, &some);
        let missed = b.cast(Cast::ExtUI, &missed, ScalarType::I8);
        let acc = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
        let acc = b.linalg_fill(&missed, &acc);
        let any = b.linalg_generic(&[r.remove(1)], &[acc], &[AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }], &[IteratorType::Reduction], |body, args| {
            Ok::<_, String>(vec![body.arith(Arith::OrI, &args[0], &args[1])])
        })?;
        cx.add_check(any[0].clone(), RuntimeCheck { kind: ErrorKind::Index, message: format!("{}: index out of bounds for axis 0", self.what) });
        let wrapped = r.remove(0);
        let positions = b.tensor_unflatten(&wrapped, TensorType::new(vec![None, Some(1)], ScalarType::I64), &[IndexArg::Dyn(m.clone()), IndexArg::Const(1)]);
        Ok((positions, m))
    }

    /// `x` with `y`'s rows added (`set`: written) in index order by one sequential
    /// kernel (row_updates.rs), which also checks the indices.
    fn by_loop(&self, cx: &mut Context, b: &mut Block, set: bool) -> Result<Value, String> {
        let (rank, x_ty, y_ty) = (self.rank(), &self.x_ty, &self.y_ty);
        let mut row = b.constant_index(1);
        for k in 1..rank {
            let d = b.tensor_dim(&self.x, k);
            row = b.arith(Arith::MulI, &row, &d);
        }
        // y as it is where it already is the region (the index's rows, then x's trailing
        // dims) in x's dtype; else broadcast and converted first.
        let whole = y_ty.ndim() == rank && (0..rank).all(|a| !y_ty.broadcastable(a)) && y_ty.dtype == x_ty.dtype;
        let y = if whole {
            self.y.clone()
        } else {
            let count = b.tensor_dim(&self.idx, 0);
            let rest: Vec<Value> = (1..rank).filter(|&k| x_ty.shape[k].is_none()).map(|k| b.tensor_dim(&self.x, k)).collect();
            let region = Region { count: &count, shape: &x_ty.shape[1..], sizes: &rest, element: self.x.tensor().element, dtype: x_ty.dtype };
            scatter_updates(b, &self.y, y_ty, self.lead(), &region)?
        };
        let flat = |b: &mut Block, t: &Value| if t.tensor().rank() == 1 { t.clone() } else { b.tensor_flatten(t) };
        let x = flat(b, &self.x);
        let y = flat(b, &y);
        let (r, out_of_bounds) = update_rows(cx, b, &x, &self.idx, &y, (&self.n, &row), self.index_dtype, x_ty.dtype, set);
        cx.add_check(out_of_bounds, RuntimeCheck { kind: ErrorKind::Index, message: format!("{}: index out of bounds for axis 0", self.what) });
        if rank == 1 {
            return Ok(if x.tensor().shape[0].is_some() { b.tensor_cast(&r, x.tensor().clone()) } else { r });
        }
        let sizes: Vec<IndexArg> = (0..rank).map(|k| b.dim_arg(&self.x, k)).collect();
        Ok(b.tensor_unflatten(&r, self.x.tensor().clone(), &sizes))
    }

    /// `x` with `y`'s rows scattered onto it with an add.
    fn add_by_scatter(&self, cx: &mut Context, b: &mut Block) -> Result<Value, String> {
        let (positions, m) = self.positions(cx, b)?;
        let (rank, lead, y_ty, x_ty) = (self.rank(), self.lead(), &self.y_ty, &self.x_ty);
        let rest: Vec<Value> = (1..rank).filter(|&k| x_ty.shape[k].is_none()).map(|k| b.tensor_dim(&self.x, k)).collect();
        let region = Region { count: &m, shape: &x_ty.shape[1..], sizes: &rest, element: self.x.tensor().element, dtype: x_ty.dtype };
        let updates = scatter_updates(b, &self.y, y_ty, lead, &region)?;
        let xd = x_ty.dtype;
        b.scatter(&updates, &positions, &self.x, false, |body, update, current| Ok(add_element(body, current, update, xd)))
    }

    /// The same as a reduction over the indices for each element of `x`: out[j, ..] =
    /// x[j, ..] + the sum of `y`'s rows whose index is j, accumulated in index order.
    fn add_by_reduction(&self, b: &mut Block) -> Result<Value, String> {
        let (rank, lead, y_ty) = (self.rank(), self.lead(), &self.y_ty);
        // y's axis a is region axis lead + a: the index axis (iteration dim `rank`, the
        // reduction) if that is 0, else a dim of x.
        let y_map = AffineMap {
            dims: rank + 1,
            results: (0..y_ty.ndim())
                .map(|a| {
                    if y_ty.broadcastable(a) {
                        AffineExpr::Constant(0)
                    } else if lead + a == 0 {
                        AffineExpr::Dim(rank)
                    } else {
                        AffineExpr::Dim(lead + a)
                    }
                })
                .collect(),
        };
        let maps = [
            AffineMap { dims: rank + 1, results: vec![AffineExpr::Dim(rank)] },
            y_map,
            AffineMap { dims: rank + 1, results: (0..rank).map(AffineExpr::Dim).collect() },
        ];
        let mut its = vec![IteratorType::Parallel; rank];
        its.push(IteratorType::Reduction);
        let (n, id, xd, yd) = (self.n.clone(), self.index_dtype, self.x_ty.dtype, y_ty.dtype);
        Ok(b
            .linalg_generic(&[self.idx.clone(), self.y.clone()], &[self.x.clone()], &maps, &its, |body, args| {
                let (w, _) = wrap(body, &args[0], id, &n);
                let j = body.linalg_index(0);
                let hit = body.cmpi(CmpI::Eq, &w, &j);
                let e = convert_element(body, &args[1], yd, xd);
                let sum = add_element(body, &args[2], &e, xd);
                Ok::<_, String>(vec![body.select(&hit, &sum, &args[2])])
            })?
            .remove(0))
    }

    /// -1 for every row of `x`, as an i64 vector: "no index names it".
    fn no_rows_named(&self, b: &mut Block) -> Value {
        let rows = if self.x_ty.shape[0].is_none() { vec![self.n.clone()] } else { vec![] };
        let empty = b.tensor_empty(TensorType::new(vec![self.x_ty.shape[0]], ScalarType::I64), &rows);
        let none = b.constant_int(-1, ScalarType::I64);
        b.linalg_fill(&none, &empty)
    }

    /// The last position among the indices of each row of `x` (-1: none), by scattering
    /// each position onto its row with a max.
    fn last_by_scatter(&self, cx: &mut Context, b: &mut Block) -> Result<Value, String> {
        let (positions, m) = self.positions(cx, b)?;
        let empty = b.tensor_empty(TensorType::new(vec![None], ScalarType::I64), std::slice::from_ref(&m));
        let order = b
            .linalg_generic(&[], &[empty], &[AffineMap::identity(1)], &[IteratorType::Parallel], |body, _| {
                let i = body.linalg_index(0);
                Ok::<_, String>(vec![body.index_cast(&i, ScalarType::I64)])
            })?
            .remove(0);
        let init = self.no_rows_named(b);
        b.scatter(&order, &positions, &init, false, |body, update, current| Ok::<_, String>(body.arith(Arith::MaxSI, current, update)))
    }

    /// The same as a reduction over the indices for each row.
    fn last_by_reduction(&self, b: &mut Block) -> Result<Value, String> {
        let init = self.no_rows_named(b);
        let maps = [AffineMap { dims: 2, results: vec![AffineExpr::Dim(1)] }, AffineMap { dims: 2, results: vec![AffineExpr::Dim(0)] }];
        let (n, id) = (self.n.clone(), self.index_dtype);
        Ok(b
            .linalg_generic(&[self.idx.clone()], &[init], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |body, args| {
                let (w, _) = wrap(body, &args[0], id, &n);
                let j = body.linalg_index(0);
                let hit = body.cmpi(CmpI::Eq, &w, &j);
                let i = body.linalg_index(1);
                let i = body.index_cast(&i, ScalarType::I64);
                let best = body.arith(Arith::MaxSI, &args[1], &i);
                Ok::<_, String>(vec![body.select(&hit, &best, &args[1])])
            })?
            .remove(0))
    }

    /// Each row of the result from `y`'s row at the row's `last` position, or from `x`.
    fn take_last(&self, b: &mut Block, last: Value) -> Result<Value, String> {
        let (rank, lead, x_ty, y_ty) = (self.rank(), self.lead(), &self.x_ty, self.y_ty.clone());
        let sizes: Vec<Value> = (0..rank).filter(|&k| x_ty.shape[k].is_none()).map(|k| b.tensor_dim(&self.x, k)).collect();
        let init = b.tensor_empty(tensor_type(x_ty), &sizes);
        let maps = [
            AffineMap::identity(rank),
            AffineMap { dims: rank, results: vec![AffineExpr::Dim(0)] },
            AffineMap::identity(rank),
        ];
        let (xd, yd, y) = (x_ty.dtype, y_ty.dtype, self.y.clone());
        Ok(b
            .linalg_generic(&[self.x.clone(), last], &[init], &maps, &vec![IteratorType::Parallel; rank], |body, args| {
                let zero = body.constant_int(0, ScalarType::I64);
                let found = body.cmpi(CmpI::Sge, &args[1], &zero);
                let row = body.index_cast(&args[1], ScalarType::Index);
                let y_index: Vec<Value> = (0..y_ty.ndim())
                    .map(|a| {
                        if y_ty.broadcastable(a) {
                            body.constant_index(0)
                        } else if lead + a == 0 {
                            row.clone()
                        } else {
                            body.linalg_index(lead + a)
                        }
                    })
                    .collect();
                let old = args[0].clone();
                let elem = old.scalar();
                let y = y.clone();
                Ok::<_, String>(body.scf_if(
                    &found,
                    &[elem],
                    |then| {
                        let e = then.tensor_extract(&y, &y_index);
                        vec![convert_element(then, &e, yd, xd)]
                    },
                    |_| vec![old.clone()],
                ))
            })?
            .remove(0))
    }
}
