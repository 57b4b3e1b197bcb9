//! `Pad` in the modes `reflect`, `symmetric`, `edge` and `constant`: one gather whose
//! source index along each axis is the output index brought back into the axis. For
//! `reflect` and `symmetric` (PyTensor's inner graph for them holds a `Scan`) it is
//! reflected, for widths of any size (numpy's `pad`, which reflects repeatedly where a
//! width exceeds the axis, is periodic: `reflect` with period `2(n - 1)`, `symmetric`
//! with period `2n`); for `edge` clamped; for `constant` an element outside the input
//! takes the value of the last axis it lies outside of, on that side (numpy pads axis
//! after axis, so later axes own the corners). PyTensor's graphs for `edge` and
//! `constant` are chains of `set_subtensor`s, one kernel each, whose dispatches on a GPU
//! took more push constants than lavapipe's 128 bytes for a matrix. The other modes
//! (`mean`, `maximum`, `minimum`, `wrap`, ...) are lowered through the inner graph.
//!
//! Where PyTensor's own graph differs from numpy we follow numpy: a negative width or a
//! nonzero width on an empty axis raises `ValueError`, and `reflect` on an axis of
//! length 1 repeats its one element.
//!
//! The gradient (`pad_grad`) is the adjoint of the gather: PyTensor's pullback of the Op,
//! whose inner graph holds a `Scan`'s gradient, reaches it by what it is the pullback of.

use super::construct::output_sizes;
use super::shapes::DimExpr;
use super::subtensor::{check, convert_element, guarded_extract, int_to_index, or};
use super::{tensor_type, Context, ErrorKind, IntValue};
use crate::ir::ops::PadMode;
use crate::ir::Node;
use crate::mlir::{AffineMap, Arith, Block, CmpI, IteratorType, ScalarType, Value};

/// One axis of the padding: the input's length and the left width, as `index` values.
struct Axis {
    n: Value,
    left: Value,
    /// The period of the reflection (at least 1).
    period: Value,
}

pub fn pad(cx: &mut Context, b: &mut Block, node: &Node, mode: PadMode) -> Result<(), String> {
    let what = match mode {
        PadMode::Reflect => "pad(mode='reflect')",
        PadMode::Symmetric => "pad(mode='symmetric')",
        PadMode::Edge => "pad(mode='edge')",
        PadMode::Constant => "pad(mode='constant')",
    };
    let symmetric = mode == PadMode::Symmetric;
    let (x_var, w_var, c_var) = match (mode, &node.inputs[..]) {
        (PadMode::Constant, &[x, w, c]) => (x, w, Some(c)),
        (PadMode::Constant, _) => return Err("Pad in constant mode needs three inputs (x, pad_width, constant_values)".into()),
        (_, &[x, w]) => (x, w, None),
        _ => return Err("Pad needs two inputs (x, pad_width)".into()),
    };
    let out = node.outputs[0];
    let (x_ty, w_ty, out_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(w_var).clone(), cx.graph.ty(out).clone());
    let rank = x_ty.ndim();
    // PyTensor's graphs for constant and edge pad into `zeros`, float64: an integer x gives
    // a float64 result (where numpy keeps x's dtype), and so do we.
    let converts = matches!(mode, PadMode::Constant | PadMode::Edge);
    if (out_ty.dtype != x_ty.dtype && !converts) || out_ty.ndim() != rank {
        return Err(format!("an output of type {out_ty:?} for an input of type {x_ty:?}"));
    }
    if !w_ty.dtype.is_int() || w_ty.ndim() > 2 {
        return Err(format!("pad_width of type {w_ty:?} is not an integer tensor of rank 0 to 2"));
    }
    let widths = widths(cx, b, w_var, rank, what)?;
    let x = cx.value(b, x_var)?;
    let x_dims = cx.dims(x_var);
    let zero = b.constant_index(0);
    let mut axes = Vec::with_capacity(rank);
    let mut dims = Vec::with_capacity(rank);
    let mut sizes = Vec::with_capacity(rank);
    let mut empty_read: Option<Value> = None;
    for (k, (left, right, known)) in widths.into_iter().enumerate() {
        let n = b.tensor_dim(&x, k);
        let total = b.arith(Arith::AddI, &left, &right);
        // numpy: "can't extend empty axis using modes other than 'constant' or 'empty'".
        if mode == PadMode::Constant {
            // Any axis may be empty: its elements are all the constant (none is read).
            if x_ty.shape[k].is_none_or(|s| s == 0) {
                let empty = b.cmpi(CmpI::Eq, &n, &zero);
                empty_read = Some(or(b, empty_read, empty));
            }
        } else if x_ty.shape[k].is_none_or(|s| s == 0) && known != Some(0) {
            let empty = b.cmpi(CmpI::Eq, &n, &zero);
            let widened = b.cmpi(CmpI::Sgt, &total, &zero);
            let bad = b.arith(Arith::AndI, &empty, &widened);
            check(cx, b, &bad, ErrorKind::Value, format!("{what}: can't extend empty axis {k} using modes other than 'constant' or 'empty'"));
            empty_read = Some(or(b, empty_read, empty));
        }
        dims.push(match known {
            Some(0) => x_dims[k],
            Some(t) => cx.derived(DimExpr::Offset(vec![x_dims[k]], t)),
            None => cx.runtime_dim(),
        });
        sizes.push(b.arith(Arith::AddI, &n, &total));
        let period = period(b, &n, symmetric);
        axes.push(Axis { n, left, period });
    }
    let (dynamic, dims) = output_sizes(cx, b, &out_ty, dims, sizes, what);
    let init = b.tensor_empty(tensor_type(&out_ty), &dynamic);
    // constant mode: the value before and after each axis, as x's dtype.
    // Read before the kernel: read in it, a computed `constant_values` (a cast) was fused
    // into it and IREE 3.13 gave it a stack buffer of dynamic size ("stack allocation
    // size overflows 64 bits").
    let mut values = Vec::new();
    if let Some(c) = c_var {
        let pairs = Pairs::of(cx, b, c, rank, what, "constant_values")?;
        let c_dtype = cx.graph.ty(c).dtype;
        for axis in 0..rank {
            values.push([0, 1].map(|side| {
                let e = pairs.element(b, axis, side);
                convert_element(b, &e, c_dtype, out_ty.dtype)
            }));
        }
    }
    // Where an axis is empty (which raises, or is all constant) nothing may be read.
    let ok = empty_read.map(|e| {
        let t = b.constant_int(1, ScalarType::I1);
        b.arith(Arith::XOrI, &e, &t)
    });
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
        let mut constant: Option<(Value, Value)> = None;
        let mut src = Vec::with_capacity(rank);
        for (k, a) in axes.iter().enumerate() {
            let j = body.linalg_index(k);
            let t = body.arith(Arith::SubI, &j, &a.left);
            let z = body.constant_index(0);
            src.push(match mode {
                PadMode::Reflect | PadMode::Symmetric => {
                    // The floor modulo of t by the period, in [0, period).
                    let rem = body.arith(Arith::RemSI, &t, &a.period);
                    let neg = body.cmpi(CmpI::Slt, &rem, &z);
                    let wrapped = body.arith(Arith::AddI, &rem, &a.period);
                    let u = body.select(&neg, &wrapped, &rem);
                    // The second half of a period runs back: period - u (reflect, the edge
                    // not repeated) or period - 1 - u (symmetric, the edge repeated).
                    let back = body.arith(Arith::SubI, &a.period, &u);
                    let back = if symmetric {
                        let o = body.constant_index(1);
                        body.arith(Arith::SubI, &back, &o)
                    } else {
                        back
                    };
                    let inside = body.cmpi(CmpI::Slt, &u, &a.n);
                    body.select(&inside, &u, &back)
                }
                PadMode::Edge | PadMode::Constant => {
                    let o = body.constant_index(1);
                    let last = body.arith(Arith::SubI, &a.n, &o);
                    let last = body.arith(Arith::MaxSI, &last, &z);
                    if mode == PadMode::Constant {
                        // Outside along this axis: its value on that side, over any earlier
                        // axis's (numpy pads later axes over the corners).
                        let before = body.cmpi(CmpI::Slt, &t, &z);
                        let after = body.cmpi(CmpI::Sge, &t, &a.n);
                        let outside = body.arith(Arith::OrI, &before, &after);
                        let side = body.select(&before, &values[k][0], &values[k][1]);
                        constant = Some(match constant.take() {
                            None => (outside.clone(), side),
                            Some((any, c)) => {
                                let v = body.select(&outside, &side, &c);
                                (body.arith(Arith::OrI, &any, &outside), v)
                            }
                        });
                    }
                    let t = body.arith(Arith::MaxSI, &t, &z);
                    body.arith(Arith::MinSI, &t, &last)
                }
            });
        }
        let read = guarded_extract(body, ok.as_ref(), &x, &src);
        let read = convert_element(body, &read, x_ty.dtype, out_ty.dtype);
        Ok::<_, String>(vec![match constant {
            Some((outside, c)) => body.select(&outside, &c, &read),
            None => read,
        }])
    })?;
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// The period of the reflection along an axis of length `n`: `2(n - 1)` (reflect) or `2n`
/// (symmetric), at least 1 (an axis of length 1 gives index 0 everywhere).
fn period(b: &mut Block, n: &Value, symmetric: bool) -> Value {
    let one = b.constant_index(1);
    let p = if symmetric {
        b.arith(Arith::AddI, n, n)
    } else {
        let m = b.arith(Arith::SubI, n, &one);
        b.arith(Arith::AddI, &m, &m)
    };
    b.arith(Arith::MaxSI, &p, &one)
}

/// The pullback PyTensor builds for a `Pad` in mode reflect or symmetric (an
/// `OpFromGraph` of inputs x, pad_width, the output and its gradient, whose inner graph
/// holds the gradient of a `Scan`): the adjoint of the gather, one axis at a time. Along
/// an axis, the gradient of `x[i]` sums the output positions `j = t + left` whose `t` is
/// `i` or its mirror image modulo the period, one reduction step per period.
pub fn pad_grad(cx: &mut Context, b: &mut Block, node: &Node, mode: PadMode) -> Result<(), String> {
    let what = match mode {
        PadMode::Symmetric => "the gradient of pad(mode='symmetric')",
        PadMode::Reflect => "the gradient of pad(mode='reflect')",
        PadMode::Edge => "the gradient of pad(mode='edge')",
        PadMode::Constant => return Err("the gradient of pad(mode='constant') is PyTensor's graph".into()),
    };
    let symmetric = mode == PadMode::Symmetric;
    let (&[x_var, w_var, _, g_var], &[out]) = (&node.inputs[..], &node.outputs[..]) else {
        return Err("the pullback of Pad needs inputs (x, pad_width, output, output gradient) and one output".into());
    };
    let (x_ty, g_ty, out_ty) = (cx.graph.ty(x_var).clone(), cx.graph.ty(g_var).clone(), cx.graph.ty(out).clone());
    let rank = x_ty.ndim();
    if !out_ty.dtype.is_float() || g_ty.dtype != out_ty.dtype || out_ty.ndim() != rank || g_ty.ndim() != rank {
        return Err(format!("a gradient of type {out_ty:?} from an output gradient of type {g_ty:?} for an input of type {x_ty:?}"));
    }
    let widths = widths(cx, b, w_var, rank, what)?;
    let x = cx.value(b, x_var)?;
    let mut g = cx.value(b, g_var)?;
    let element = g.tensor().element;
    let dynamic = crate::mlir::TensorType::new(vec![None; rank], element);
    if *g.tensor() != dynamic {
        g = b.tensor_cast(&g, dynamic.clone());
    }
    // The output gradient's dims, read before the axes are reduced one by one.
    let g_dims: Vec<Value> = (0..rank).map(|a| b.tensor_dim(&g, a)).collect();
    for (k, (left, right, _)) in widths.into_iter().enumerate() {
        let n = b.tensor_dim(&x, k);
        let period = period(b, &n, symmetric);
        let m = g_dims[k].clone();
        let nl = b.arith(Arith::AddI, &n, &left);
        let padded = b.arith(Arith::AddI, &nl, &right);
        let ne = b.cmpi(CmpI::Ne, &m, &padded);
        check(cx, b, &ne, ErrorKind::Value, format!("{what}: the output gradient's dim {k} is not the padded length"));
        // t runs over [-left, n + right): periods q from -ceil(left / p) to floor((n + right - 1) / p).
        let one = b.constant_index(1);
        let zero = b.constant_index(0);
        let p_m1 = b.arith(Arith::SubI, &period, &one);
        let l_up = b.arith(Arith::AddI, &left, &p_m1);
        let q_lo = b.arith(Arith::DivSI, &l_up, &period);
        let last = b.arith(Arith::AddI, &n, &right);
        let last = b.arith(Arith::SubI, &last, &one);
        let q_hi = b.arith(Arith::FloorDivSI, &last, &period);
        let count = b.arith(Arith::AddI, &q_hi, &q_lo);
        let count = b.arith(Arith::AddI, &count, &one);
        let count = b.arith(Arith::MaxSI, &count, &zero);
        let sizes: Vec<Value> = (0..rank).map(|a| if a == k { n.clone() } else { b.tensor_dim(&g, a) }).collect();
        let init = b.tensor_empty(dynamic.clone(), &sizes);
        let src = g.clone();
        if mode == PadMode::Edge {
            // x[i] was read at j = i + left, and the first (last) element also at every
            // position left (right) of it: a sum over j in [lo, hi].
            let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
                let i = body.linalg_index(k);
                let (z, o) = (body.constant_index(0), body.constant_index(1));
                let at = body.arith(Arith::AddI, &i, &left);
                let first = body.cmpi(CmpI::Eq, &i, &z);
                let lo = body.select(&first, &z, &at);
                let n_m1 = body.arith(Arith::SubI, &n, &o);
                let last = body.cmpi(CmpI::Eq, &i, &n_m1);
                let m_m1 = body.arith(Arith::SubI, &m, &o);
                let hi = body.select(&last, &m_m1, &at);
                let others: Vec<Value> = (0..rank).map(|a| body.linalg_index(a)).collect();
                let zf = body.constant_f64(0.0, element);
                let done = body.scf_while(
                    &[lo, zf],
                    |c, args| c.cmpi(CmpI::Sle, &args[0], &hi),
                    |lp, args| {
                        let idx: Vec<Value> = others.iter().enumerate().map(|(a, v)| if a == k { args[0].clone() } else { v.clone() }).collect();
                        let v = lp.tensor_extract(&src, &idx);
                        let one = lp.constant_index(1);
                        vec![lp.arith(Arith::AddI, &args[0], &one), lp.arith(Arith::AddF, &args[1], &v)]
                    },
                );
                Ok::<_, String>(vec![done[1].clone()])
            })?;
            g = r[0].clone();
            continue;
        }
        // A loop over the periods inside a parallel generic (a reduction dim over them
        // failed IREE's SPIR-V code generation: shared memory out of range).
        let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
            let i = body.linalg_index(k);
            // The mirror image of i within a period, and whether it is another residue.
            let mirror = body.arith(Arith::SubI, &period, &i);
            let mirror = if symmetric {
                let o = body.constant_index(1);
                body.arith(Arith::SubI, &mirror, &o)
            } else {
                let full = body.cmpi(CmpI::Eq, &mirror, &period);
                let z = body.constant_index(0);
                body.select(&full, &z, &mirror)
            };
            let distinct = body.cmpi(CmpI::Ne, &mirror, &i);
            let others: Vec<Value> = (0..rank).map(|a| if a == k { i.clone() } else { body.linalg_index(a) }).collect();
            let q0 = body.constant_index(0);
            let zf = body.constant_f64(0.0, element);
            let done = body.scf_while(
                &[q0, zf],
                |c, args| c.cmpi(CmpI::Slt, &args[0], &count),
                |lp, args| {
                    let q = lp.arith(Arith::SubI, &args[0], &q_lo);
                    let base = lp.arith(Arith::MulI, &q, &period);
                    let mut acc = args[1].clone();
                    for (residue, only_if) in [(i.clone(), None), (mirror.clone(), Some(distinct.clone()))] {
                        let t = lp.arith(Arith::AddI, &base, &residue);
                        let j = lp.arith(Arith::AddI, &t, &left);
                        let z = lp.constant_index(0);
                        let lo = lp.cmpi(CmpI::Sge, &j, &z);
                        let hi = lp.cmpi(CmpI::Slt, &j, &m);
                        let mut ok = lp.arith(Arith::AndI, &lo, &hi);
                        if let Some(c) = only_if {
                            ok = lp.arith(Arith::AndI, &ok, &c);
                        }
                        let idx: Vec<Value> = others.iter().enumerate().map(|(a, v)| if a == k { j.clone() } else { v.clone() }).collect();
                        let v = guarded_extract(lp, Some(&ok), &src, &idx);
                        acc = lp.arith(Arith::AddF, &acc, &v);
                    }
                    let one = lp.constant_index(1);
                    vec![lp.arith(Arith::AddI, &args[0], &one), acc]
                },
            );
            Ok::<_, String>(vec![done[1].clone()])
        })?;
        g = r[0].clone();
    }
    let out_t = tensor_type(&out_ty);
    if *g.tensor() != out_t {
        g = b.tensor_cast(&g, out_t);
    }
    cx.define(out, g, cx.dims(x_var));
    Ok(())
}

/// `v_var` broadcast to `(rank, 2)`, numpy's broadcast checked (`ValueError`): its value,
/// its type, and, where a dim of it is dynamic, whether it broadcasts (a malformed `v` is
/// never read).
struct Pairs {
    value: Value,
    ty: crate::ir::TensorType,
    readable: Option<Value>,
}

impl Pairs {
    fn of(cx: &mut Context, b: &mut Block, v_var: usize, rank: usize, what: &str, name: &str) -> Result<Pairs, String> {
        let ty = cx.graph.ty(v_var).clone();
        if ty.ndim() > 2 {
            return Err(format!("{name} of type {ty:?} is not a tensor of rank 0 to 2"));
        }
        let v = cx.value(b, v_var)?;
        let mut malformed: Option<Value> = None;
        for (k, (d, want)) in ty.shape.iter().zip([rank, 2][2 - ty.ndim()..].iter()).enumerate() {
            match d {
                Some(s) if *s == 1 || *s as usize == *want => {}
                Some(s) => return Err(format!("{name} of shape {:?} does not broadcast to ({rank}, 2) (dim of size {s})", ty.shape)),
                None => {
                    let len = b.tensor_dim(&v, k);
                    let one = b.constant_index(1);
                    let want_v = b.constant_index(*want as i64);
                    let not_one = b.cmpi(CmpI::Ne, &len, &one);
                    let not_want = b.cmpi(CmpI::Ne, &len, &want_v);
                    let bad = b.arith(Arith::AndI, &not_one, &not_want);
                    check(cx, b, &bad, ErrorKind::Value, format!("{what}: {name} does not broadcast to ({rank}, 2)"));
                    malformed = Some(or(b, malformed, bad));
                }
            }
        }
        let readable = malformed.map(|m| {
            let t = b.constant_int(1, ScalarType::I1);
            b.arith(Arith::XOrI, &m, &t)
        });
        Ok(Pairs { value: v, ty, readable })
    }

    /// The flat position of the (axis, side) element where every dim is static.
    fn static_position(&self, axis: usize, side: usize) -> Option<usize> {
        let wanted = [axis, side];
        let coords = &wanted[2 - self.ty.ndim()..];
        coords.iter().zip(&self.ty.shape).try_fold(0usize, |acc, (&c, d)| d.map(|s| acc * s as usize + if s == 1 { 0 } else { c }))
    }

    /// The (axis, side) element, read in block `b` (a dim of size 1 broadcasts).
    fn element(&self, b: &mut Block, axis: usize, side: usize) -> Value {
        let wanted = [axis, side];
        let coords = &wanted[2 - self.ty.ndim()..];
        let idx: Vec<Value> = coords
            .iter()
            .zip(&self.ty.shape)
            .enumerate()
            .map(|(k, (&c, d))| match d {
                Some(1) => b.constant_index(0),
                Some(_) => b.constant_index(c as i64),
                None => {
                    let len = b.tensor_dim(&self.value, k);
                    let one = b.constant_index(1);
                    let is_one = b.cmpi(CmpI::Eq, &len, &one);
                    let zero = b.constant_index(0);
                    let cv = b.constant_index(c as i64);
                    b.select(&is_one, &zero, &cv)
                }
            })
            .collect();
        guarded_extract(b, self.readable.as_ref(), &self.value, &idx)
    }
}

/// The (left, right) widths of each axis as `index` values (a negative one raises
/// `ValueError`, as numpy), with their sum where both are constants.
fn widths(cx: &mut Context, b: &mut Block, w_var: usize, rank: usize, what: &str) -> Result<Vec<(Value, Value, Option<i64>)>, String> {
    let w_ty = cx.graph.ty(w_var).clone();
    let known = cx.int_values(w_var);
    let pairs = Pairs::of(cx, b, w_var, rank, what, "pad_width")?;
    let zero = b.constant_index(0);
    let mut out = Vec::with_capacity(rank);
    for axis in 0..rank {
        let mut pair = Vec::with_capacity(2);
        let mut consts = Vec::with_capacity(2);
        for side in 0..2 {
            let constant = match (pairs.static_position(axis, side), known.as_deref()) {
                (Some(p), Some(vals)) => match vals.get(p) {
                    Some(IntValue::Const(c)) if *c >= 0 => Some(*c),
                    _ => None,
                },
                _ => None,
            };
            let v = match constant {
                Some(c) => b.constant_index(c),
                None => {
                    let e = pairs.element(b, axis, side);
                    let v = int_to_index(b, &e, w_ty.dtype);
                    let neg = b.cmpi(CmpI::Slt, &v, &zero);
                    check(cx, b, &neg, ErrorKind::Value, format!("{what}: index can't contain negative values"));
                    b.arith(Arith::MaxSI, &v, &zero)
                }
            };
            pair.push(v);
            consts.push(constant);
        }
        let sum = match consts[..] {
            [Some(l), Some(r)] => l.checked_add(r),
            _ => None,
        };
        let right = pair.pop().unwrap();
        let left = pair.pop().unwrap();
        out.push((left, right, sum));
    }
    Ok(out)
}
