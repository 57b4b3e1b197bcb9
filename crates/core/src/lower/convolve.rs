//! `Convolve1d(in1, in2, full_mode)`: numpy's `convolve` in mode "full" (`full_mode`
//! true) or "valid"; PyTensor builds "same" as "valid" of a zero-padded `in1`, and the
//! batched form is `Blockwise`'s loop over this rule.
//!
//! One `linalg.generic` over (output position `j`, kernel position `i`), reducing over
//! `i`: `out[j] = sum_i in2[i] * in1[j + off - i]`, a term counted only where that index
//! of `in1` exists (its product, not the element, is replaced by 0, so an infinity out of
//! range gives no NaN). Sums start at +0.0, as numpy's do (a sum of -0.0 terms is +0.0). `off` is 0 in mode full and `min(n, k) - 1` in mode valid, which
//! is numpy's valid part of the full result whichever input is longer.
//!
//! The mode is usually a constant; a gradient computes its own from the inputs' lengths
//! (`k < n`), and the output's length is then that choice of the two lengths, evaluated
//! before the call; a mode from data gives a length known only in the kernel. An empty input
//! raises `ValueError`, as numpy and the C backend do.

use super::shapes::{BoolExpr, Dim, DimExpr, IntExpr, IntOp};
use super::subtensor::zero_of;
use super::{elemwise, tensor_type, Context, ErrorKind, IntValue, RuntimeCheck};
use crate::ir::{Node, Op, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpI, IteratorType, ScalarType, TensorType};

pub fn convolve1d(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (x, y, mode) = match node.inputs[..] {
        [x, y, mode] => (x, y, mode),
        _ => return Err(format!("{} inputs (in1, in2, full_mode expected)", node.inputs.len())),
    };
    let out = node.outputs[0];
    let out_ty = cx.graph.ty(out).clone();
    if !(out_ty.dtype.is_float() || out_ty.dtype.is_int()) {
        return Err(format!("a convolution of dtype {} (real numbers only)", out_ty.dtype.name()));
    }
    if [x, y, out].iter().any(|&v| cx.graph.ty(v).ndim() != 1) {
        return Err("inputs or an output that are not vectors".into());
    }
    let xv = cx.value(b, x)?;
    let yv = cx.value(b, y)?;
    let xv = elemwise::cast(b, &xv, cx.graph.ty(x), out_ty.dtype)?;
    let yv = elemwise::cast(b, &yv, cx.graph.ty(y), out_ty.dtype)?;
    let (nd, kd) = (cx.dims(x)[0], cx.dims(y)[0]);
    let full_known = constant_bool(cx, mode);
    let (n, k) = (b.tensor_dim(&xv, 0), b.tensor_dim(&yv, 0));
    let (zero, one) = (b.constant_index(0), b.constant_index(1));

    // The output's length and offset in the full result, for each mode.
    let sum = b.arith(Arith::AddI, &n, &k);
    let full_len = b.arith(Arith::SubI, &sum, &one);
    let (lo, hi) = (b.arith(Arith::MinSI, &n, &k), b.arith(Arith::MaxSI, &n, &k));
    let spread = b.arith(Arith::SubI, &hi, &lo);
    let valid_len = b.arith(Arith::AddI, &spread, &one);
    let valid_off = b.arith(Arith::SubI, &lo, &one);
    let (len, off, dim) = match full_known {
        Some(true) => (full_len, zero.clone(), cx.derived(DimExpr::Offset(vec![nd, kd], -1))),
        Some(false) => {
            let dim = cx.derived(DimExpr::Value(valid_expr(nd, kd)));
            (valid_len, valid_off, dim)
        }
        None => {
            let m = cx.value(b, mode)?;
            let m = b.tensor_extract(&m, &[]);
            let z = b.constant_int(0, m.scalar());
            let full = b.cmpi(CmpI::Ne, &m, &z);
            // A mode computed from the lengths (a gradient's, `k < n`) gives a length
            // computed from them too, checkable before the call.
            let dim = match cx.int_values(mode).as_deref() {
                Some([IntValue::Expr(e)]) => {
                    let is_full = BoolExpr::Not(Box::new(BoolExpr::Eq(IntExpr::Value(*e), IntExpr::Const(0))));
                    let full_expr = IntExpr::Bin(IntOp::Add, Box::new(IntExpr::Dim(nd)), Box::new(IntExpr::Bin(IntOp::Sub, Box::new(IntExpr::Dim(kd)), Box::new(IntExpr::Const(1)))));
                    cx.derived(DimExpr::Value(IntExpr::Select(Box::new(is_full), Box::new(full_expr), Box::new(valid_expr(nd, kd)))))
                }
                _ => cx.runtime_dim(),
            };
            (b.select(&full, &full_len, &valid_len), b.select(&full, &zero, &valid_off), dim)
        }
    };
    let dim = out_ty.shape[0].map_or(dim, Dim::Static);
    // An empty input raises after the call; the kernel then computes an empty output.
    let (n_empty, k_empty) = (b.cmpi(CmpI::Eq, &n, &zero), b.cmpi(CmpI::Eq, &k, &zero));
    let empty = b.arith(Arith::OrI, &n_empty, &k_empty);
    let len = b.select(&empty, &zero, &len);
    let flag = b.cast(Cast::ExtUI, &empty, ScalarType::I8);
    let flag = b.tensor_from_elements(TensorType::new(vec![], ScalarType::I8), &[flag]);
    cx.add_check(flag, RuntimeCheck { kind: ErrorKind::Value, message: "convolve: an input is empty".into() });

    let ty = tensor_type(&out_ty);
    let elem = ty.element;
    let e = b.tensor_empty(ty.clone(), if out_ty.shape[0].is_none() { std::slice::from_ref(&len) } else { &[] });
    let z = zero_of(b, elem);
    let init = b.linalg_fill(&z, &e);
    let maps = vec![AffineMap { dims: 2, results: vec![AffineExpr::Dim(1)] }, AffineMap { dims: 2, results: vec![AffineExpr::Dim(0)] }];
    let last = b.arith(Arith::SubI, &n, &one);
    let last = b.arith(Arith::MaxSI, &last, &zero);
    let r = b.linalg_generic(&[yv], &[init], &maps, &[IteratorType::Parallel, IteratorType::Reduction], |gb, args| {
        let (j, i) = (gb.linalg_index(0), gb.linalg_index(1));
        let p = gb.arith(Arith::AddI, &j, &off);
        let p = gb.arith(Arith::SubI, &p, &i);
        let (ge, lt) = (gb.cmpi(CmpI::Sge, &p, &zero), gb.cmpi(CmpI::Slt, &p, &n));
        let inside = gb.arith(Arith::AndI, &ge, &lt);
        let p = gb.arith(Arith::MaxSI, &p, &zero);
        let p = gb.arith(Arith::MinSI, &p, &last);
        let a = gb.tensor_extract(&xv, &[p]);
        let (mul, add) = if elem.is_float() { (Arith::MulF, Arith::AddF) } else { (Arith::MulI, Arith::AddI) };
        let term = gb.arith(mul, &args[0], &a);
        let none = zero_of(gb, elem);
        let term = gb.select(&inside, &term, &none);
        Ok::<_, String>(vec![gb.arith(add, &args[1], &term)])
    })?;
    cx.define(out, r[0].clone(), vec![dim]);
    Ok(())
}

/// Mode valid's length, `max(n, k) - min(n, k) + 1`.
fn valid_expr(n: Dim, k: Dim) -> IntExpr {
    let d = |a: Dim| Box::new(IntExpr::Dim(a));
    let spread = IntExpr::Bin(IntOp::Sub, Box::new(IntExpr::Bin(IntOp::Max, d(n), d(k))), Box::new(IntExpr::Bin(IntOp::Min, d(n), d(k))));
    IntExpr::Bin(IntOp::Add, Box::new(spread), Box::new(IntExpr::Const(1)))
}

/// The value of a constant bool scalar (`None`: computed at run time), through the
/// `ScalarFromTensor` that PyTensor wraps a constant mode in.
fn constant_bool(cx: &Context, v: VarId) -> Option<bool> {
    if let Some(bytes) = &cx.graph.variables[v].constant {
        return Some(bytes.iter().any(|&x| x != 0));
    }
    let producer = cx.graph.nodes.iter().find(|n| n.outputs.contains(&v))?;
    match producer.op {
        Op::ScalarFromTensor | Op::TensorFromScalar => constant_bool(cx, producer.inputs[0]),
        _ => None,
    }
}
