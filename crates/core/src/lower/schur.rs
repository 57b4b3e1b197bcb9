//! `Schur(output="real")`: scipy's real Schur form, T quasi-upper-triangular (1 x 1 blocks
//! for real eigenvalues, standardized 2 x 2 blocks for complex pairs) and Z orthogonal
//! with A = Z T Z^T, by Hessenberg reduction and Francis' double-shift QR steps in one
//! dispatch (dense_kernels/real_schur.rs). The eigenvalues may sit on T's diagonal in
//! another order than LAPACK's gees leaves them, and Z's columns may differ in sign:
//! both are Schur forms of A, and neither order is specified by scipy. `sort` moves the
//! selected eigenvalues' blocks to the top (dense_kernels/real_schur/reorder.rs). Refused
//! by name: the complex form (complex dtypes are out of scope), GPU targets (the steps
//! need the CPU's sequential kernels).
//!
//! `QZ(complex_output=False)`: scipy's qz of a pencil (A, B), (AA, BB, Q, Z) with A = Q AA
//! Z^T and B = Q BB Z^T, AA quasi-upper triangular and BB upper triangular, by Moler and
//! Stewart's QZ steps in one dispatch (dense_kernels/real_qz.rs); with `sort`, ordqz's
//! reordering (PyTensor's selection rules, see real_qz/reorder.rs). As for Schur, the
//! blocks' order and the columns' signs may differ from LAPACK's. Refused by name: the
//! complex form, `return_eigenvalues` (its alpha output is complex), GPU targets.

use super::linalg::{define, operand, working_type};
use super::{dense_kernels, scalar, Context, ErrorKind};
use crate::ir::Node;
use crate::mlir::Block;

pub fn schur(cx: &mut Context, b: &mut Block, node: &Node, output: &str, sort: Option<&str>) -> Result<(), String> {
    let sort = form(output, sort)?;
    let x_var = node.inputs[0];
    if cx.graph.ty(x_var).ndim() != 2 || node.outputs.len() != 2 {
        return Err("Schur of a tensor that is not a matrix".into());
    }
    let element = working_type(cx.graph.ty(node.outputs[0]), "Schur")?;
    let a = operand(cx, b, x_var, cx.graph.ty(node.outputs[0]).dtype)?;
    let d = cx.dims(x_var);
    // scipy.linalg.schur's ValueError for a matrix that is not square (PyTensor's perform
    // hands it to gees unchecked, which reads past it).
    cx.require(d[0], d[1], "Schur (expected square matrix)", ErrorKind::Value);
    let (t, z) = dense_kernels::real_schur(cx, b, &a, element, sort);
    // A non-finite element: NaN T and Z (the kernel's), as PyTensor's perform gives them.
    define(cx, b, node.outputs[0], &t, vec![d[0], d[0]]);
    define(cx, b, node.outputs[1], &z, vec![d[0], d[0]]);
    Ok(())
}

/// The forms lowered: the real one, sorted or not, on the CPU (also for Blockwise stacks,
/// batched_linalg.rs).
pub(super) fn form(output: &str, sort: Option<&str>) -> Result<Option<dense_kernels::SchurSort>, String> {
    if output != "real" {
        return Err(format!("Schur with output={output:?} (complex results are not supported)"));
    }
    let sort = match sort {
        None => None,
        Some(name) => Some(dense_kernels::SchurSort::parse(name).ok_or_else(|| format!("Schur with sort={name:?} (not one of scipy's lhp, rhp, iuc, ouc)"))?),
    };
    if !scalar::has_sequential_kernels() {
        return Err("Schur on a GPU target is not lowered (its QR steps are one CPU dispatch of scalar loops)".into());
    }
    Ok(sort)
}

pub fn qz(cx: &mut Context, b: &mut Block, node: &Node, complex_output: bool, sort: Option<&str>, return_eigenvalues: bool) -> Result<(), String> {
    if complex_output {
        return Err("QZ with output=\"complex\" (complex results are not supported)".into());
    }
    if return_eigenvalues {
        return Err("QZ with return_eigenvalues=True (ordqz: its alpha output is complex, which is not supported)".into());
    }
    let sort = match sort {
        None => None,
        Some(name) => Some(dense_kernels::QzSort::parse(name).ok_or_else(|| format!("QZ with sort={name:?} (not one of lhp, rhp, iuc, ouc)"))?),
    };
    if !scalar::has_sequential_kernels() {
        return Err("QZ on a GPU target is not lowered (its QZ steps are one CPU dispatch of scalar loops)".into());
    }
    let [a_var, b_var] = node.inputs[..] else { return Err("QZ needs two inputs".into()) };
    if cx.graph.ty(a_var).ndim() != 2 || cx.graph.ty(b_var).ndim() != 2 || node.outputs.len() != 4 {
        return Err("QZ of tensors that are not matrices".into());
    }
    let out_ty = cx.graph.ty(node.outputs[0]).clone();
    let element = working_type(&out_ty, "QZ")?;
    let a = operand(cx, b, a_var, out_ty.dtype)?;
    let bm = operand(cx, b, b_var, out_ty.dtype)?;
    let (da, db) = (cx.dims(a_var), cx.dims(b_var));
    // gges reads past a matrix that is not square (PyTensor's perform checks nothing): a
    // ValueError here, as for Schur.
    cx.require(da[0], da[1], "QZ (expected square matrix A)", ErrorKind::Value);
    cx.require(db[0], db[1], "QZ (expected square matrix B)", ErrorKind::Value);
    cx.require(da[0], db[0], "QZ (A and B of different sizes)", ErrorKind::Value);
    let parts = dense_kernels::real_qz(cx, b, &a, &bm, element, sort);
    for (out, m) in node.outputs.iter().zip(parts) {
        define(cx, b, *out, &m, vec![da[0], da[0]]);
    }
    Ok(())
}
