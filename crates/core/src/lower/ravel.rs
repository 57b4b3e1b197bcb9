//! `RavelMultiIndex` and `UnravelIndex`: conversions between flat indices and index
//! tuples into an array of shape `dims` (a vector input of known length), as numpy's
//! `ravel_multi_index` and `unravel_index` compute them, in C or Fortran order.
//!
//! Both are elementwise over the indices, in 64-bit integers. Invalid entries raise
//! `ValueError` after the call, as numpy does (their results are then never seen): a
//! negative dim, a flat index outside `[0, prod(dims))`, or (mode "raise") a coordinate
//! outside `[0, dim)`. The product of the dims is assumed not to overflow int64.

use super::subtensor::{check, int_to_index};
use super::shapes::Dim;
use super::{tensor_type, Context, ErrorKind, RuntimeCheck};
use crate::ir::{Node, RavelMode};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpI, IteratorType, ScalarType, TensorType, Value};

/// The entries of the dims vector `v` (of static length `n`) as `index` values, with a
/// check that none is negative.
fn dims(cx: &mut Context, b: &mut Block, v: crate::ir::VarId, n: usize, what: &str) -> Result<Vec<Value>, String> {
    let ty = cx.graph.ty(v).clone();
    if ty.ndim() != 1 || !ty.dtype.is_int() {
        return Err("dims must be an integer vector".into());
    }
    let t = cx.value(b, v)?;
    let len = b.tensor_dim(&t, 0);
    let want = b.constant_index(n as i64);
    let ne = b.cmpi(CmpI::Ne, &len, &want);
    check(cx, b, &ne, ErrorKind::Value, format!("{what}: dims must have {n} entries"));
    let zero = b.constant_index(0);
    let mut out = Vec::with_capacity(n);
    let mut negative: Option<Value> = None;
    for k in 0..n {
        // Read only where the vector is that long (else the check above raises).
        let i = b.constant_index(k as i64);
        let inside = b.cmpi(CmpI::Ult, &i, &len);
        let e = b.scf_if(&inside, &[t.tensor().element], |then| vec![then.tensor_extract(&t, &[i.clone()])], |other| vec![other.constant_int(1, t.tensor().element)]).remove(0);
        let d = int_to_index(b, &e, ty.dtype);
        let neg = b.cmpi(CmpI::Slt, &d, &zero);
        negative = Some(super::subtensor::or(b, negative, neg));
        out.push(d);
    }
    if let Some(neg) = negative {
        check(cx, b, &neg, ErrorKind::Value, format!("{what}: dimensions must be non-negative"));
    }
    Ok(out)
}

/// Adds a `ValueError` check raised where any element of the `i8` flags `flags` is set.
fn check_any(cx: &mut Context, b: &mut Block, flags: &Value, message: String) {
    let flat = b.tensor_flatten(flags);
    let empty = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let zero = b.constant_int(0, ScalarType::I8);
    let init = b.linalg_fill(&zero, &empty);
    let maps = [AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }];
    let r = b
        .linalg_generic(&[flat], &[init], &maps, &[IteratorType::Reduction], |body, args| Ok::<_, String>(vec![body.arith(Arith::OrI, &args[0], &args[1])]))
        .expect("the check's body cannot fail");
    cx.add_check(r[0].clone(), RuntimeCheck { kind: ErrorKind::Value, message });
}

/// An `i1` as an `i8` flag.
fn flag(b: &mut Block, bad: &Value) -> Value {
    b.cast(Cast::ExtUI, bad, ScalarType::I8)
}

/// The axes in the order their strides grow: last to first for C order.
fn minor_to_major(n: usize, fortran: bool) -> Vec<usize> {
    if fortran {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    }
}

/// `UnravelIndex(indices, dims)`: one output per dim, each of the indices' shape.
pub fn unravel_index(cx: &mut Context, b: &mut Block, node: &Node, fortran: bool) -> Result<(), String> {
    let what = "UnravelIndex";
    let [idx_var, dims_var] = node.inputs[..] else { return Err("UnravelIndex needs two inputs".into()) };
    let idx_ty = cx.graph.ty(idx_var).clone();
    if !idx_ty.dtype.is_int() {
        return Err(format!("indices of {}", idx_ty.dtype));
    }
    let n = node.outputs.len();
    let ds = dims(cx, b, dims_var, n, what)?;
    let idx = cx.value(b, idx_var)?;
    let rank = idx_ty.ndim();
    let mut total = b.constant_index(1);
    for d in &ds {
        total = b.arith(Arith::MulI, &total, d);
    }
    let sizes: Vec<Value> = (0..rank).filter(|&k| idx_ty.shape[k].is_none()).map(|k| b.tensor_dim(&idx, k)).collect();
    let mut inits: Vec<Value> = node.outputs.iter().map(|&o| {
        let ty = cx.graph.ty(o).clone();
        b.tensor_empty(tensor_type(&ty), &sizes)
    }).collect();
    inits.push(b.tensor_empty(TensorType::new(idx_ty.shape.clone(), ScalarType::I8), &sizes));
    let maps = vec![AffineMap::identity(rank); n + 2];
    let its = vec![IteratorType::Parallel; rank];
    let order = minor_to_major(n, fortran);
    let dt = idx_ty.dtype;
    let r = b.linalg_generic(&[idx], &inits, &maps, &its, |body, args| {
        let i = int_to_index(body, &args[0], dt);
        // Unsigned: a negative index is out of range too.
        let bad = body.cmpi(CmpI::Uge, &i, &total);
        let zero = body.constant_index(0);
        let one = body.constant_index(1);
        let mut rest = body.select(&bad, &zero, &i);
        let mut coords = vec![zero.clone(); n];
        for &k in &order {
            // A dim of 0 leaves no valid index (all flagged): 1 stands in for it.
            let is_zero = body.cmpi(CmpI::Eq, &ds[k], &zero);
            let d = body.select(&is_zero, &one, &ds[k]);
            coords[k] = body.arith(Arith::RemUI, &rest, &d);
            rest = body.arith(Arith::DivUI, &rest, &d);
        }
        let mut out: Vec<Value> = coords.iter().map(|c| body.index_cast(c, ScalarType::I64)).collect();
        out.push(flag(body, &bad));
        Ok::<_, String>(out)
    })?;
    check_any(cx, b, &r[n], format!("{what}: index out of bounds for the array's size"));
    let idx_dims = cx.dims(idx_var);
    for (k, &o) in node.outputs.iter().enumerate() {
        cx.define(o, r[k].clone(), idx_dims.clone());
    }
    Ok(())
}

/// `RavelMultiIndex(*multi_index, dims)`: the flat index of each coordinate tuple. The
/// coordinate arrays have the output's rank; dims of static size 1 broadcast, the others
/// must equal the output's.
pub fn ravel_multi_index(cx: &mut Context, b: &mut Block, node: &Node, mode: RavelMode, fortran: bool) -> Result<(), String> {
    let what = "RavelMultiIndex";
    let (&dims_var, coords) = node.inputs.split_last().ok_or("RavelMultiIndex needs inputs")?;
    let n = coords.len();
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    let rank = out_ty.ndim();
    let ds = dims(cx, b, dims_var, n, what)?;
    // The output's dims: the first coordinate array's where not static 1, else the others'.
    let mut out_dims = cx.dims(coords[0]);
    let mut values = Vec::with_capacity(n);
    let mut maps = Vec::with_capacity(n + 2);
    for &c in coords {
        let ty = cx.graph.ty(c).clone();
        if ty.ndim() != rank || !ty.dtype.is_int() {
            return Err("coordinate arrays of differing ranks or non-integer dtypes".into());
        }
        values.push(cx.value(b, c)?);
        maps.push(AffineMap { dims: rank, results: (0..rank).map(|k| if ty.broadcastable(k) { AffineExpr::Constant(0) } else { AffineExpr::Dim(k) }).collect() });
    }
    for k in 0..rank {
        let from = coords.iter().find(|&&c| !cx.graph.ty(c).broadcastable(k));
        if let Some(&c) = from {
            out_dims[k] = cx.dims(c)[k];
            for &other in coords {
                if !cx.graph.ty(other).broadcastable(k) {
                    let d = cx.dims(other)[k];
                    cx.require_equal(out_dims[k], d, what);
                }
            }
        }
    }
    let sizes: Vec<Value> = (0..rank)
        .filter(|&k| out_ty.shape[k].is_none())
        .map(|k| match coords.iter().position(|&c| !cx.graph.ty(c).broadcastable(k)) {
            Some(j) => b.tensor_dim(&values[j], k),
            None => b.constant_index(1),
        })
        .collect();
    let init = b.tensor_empty(tensor_type(&out_ty), &sizes);
    let flags = b.tensor_empty(TensorType::new(out_ty.shape.clone(), ScalarType::I8), &sizes);
    maps.push(AffineMap::identity(rank));
    maps.push(AffineMap::identity(rank));
    let its = vec![IteratorType::Parallel; rank];
    let dtypes: Vec<_> = coords.iter().map(|&c| cx.graph.ty(c).dtype).collect();
    let order = minor_to_major(n, fortran);
    let r = b.linalg_generic(&values, &[init, flags], &maps, &its, |body, args| {
        let zero = body.constant_index(0);
        let one = body.constant_index(1);
        let mut flat = zero.clone();
        let mut stride = one.clone();
        let mut bad: Option<Value> = None;
        for &k in &order {
            let i = int_to_index(body, &args[k], dtypes[k]);
            let d = &ds[k];
            let i = match mode {
                RavelMode::Raise => {
                    let out_of_range = body.cmpi(CmpI::Uge, &i, d);
                    bad = Some(super::subtensor::or(body, bad, out_of_range));
                    i
                }
                // numpy's modulo (non-negative); a dim of 0 leaves nothing to wrap to.
                RavelMode::Wrap => {
                    let is_zero = body.cmpi(CmpI::Eq, d, &zero);
                    bad = Some(super::subtensor::or(body, bad, is_zero.clone()));
                    let d1 = body.select(&is_zero, &one, d);
                    let m = body.arith(Arith::RemSI, &i, &d1);
                    let neg = body.cmpi(CmpI::Slt, &m, &zero);
                    let shifted = body.arith(Arith::AddI, &m, &d1);
                    body.select(&neg, &shifted, &m)
                }
                RavelMode::Clip => {
                    let hi = body.arith(Arith::SubI, d, &one);
                    let c = body.arith(Arith::MinSI, &i, &hi);
                    body.arith(Arith::MaxSI, &c, &zero)
                }
            };
            let term = body.arith(Arith::MulI, &i, &stride);
            flat = body.arith(Arith::AddI, &flat, &term);
            stride = body.arith(Arith::MulI, &stride, d);
        }
        let flat = body.index_cast(&flat, ScalarType::I64);
        let failed = match bad {
            Some(bad) => flag(body, &bad),
            None => body.constant_int(0, ScalarType::I8),
        };
        Ok::<_, String>(vec![flat, failed])
    })?;
    check_any(cx, b, &r[1], format!("{what}: invalid entry in coordinates array"));
    for (k, d) in out_dims.iter_mut().enumerate() {
        if let Some(s) = out_ty.shape[k] {
            *d = Dim::Static(s);
        }
    }
    cx.define(out, r[0].clone(), out_dims);
    Ok(())
}
