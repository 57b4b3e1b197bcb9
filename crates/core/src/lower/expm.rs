//! `Expm` (`pt.linalg.expm`): scaling and squaring with the degree-13 Padé approximant
//! (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005).
//!
//! `s` is the least integer >= 0 with `||A / 2^s||_1 <= theta_13`; then
//! `r(B) = q(B)^-1 p(B)` for `B = A / 2^s`, by linalg.rs's LU solve, and `r` squared `s`
//! times in a loop in the host program. `p(x) = sum_j c_j x^j` with Padé's coefficients
//! `c_j = (2m - j)! m! / ((2m)! j! (m - j)!)`, `q(x) = p(-x)`, evaluated as Higham's
//! `U = B (B^6 (c13 B^6 + c11 B^4 + c9 B^2) + c7 B^6 + c5 B^4 + c3 B^2 + c1 I)` (odd part)
//! and `V` (even part), `p = V + U`, `q = V - U`: six matrix products and one solve.
//!
//! Always degree 13 (Higham picks 3 to 9 for small norms to save products; 13 is as
//! accurate there). scipy's `expm` (PyTensor's perform) follows Al-Mohy and Higham 2009:
//! results agree to rounding, not bit for bit. A NaN anywhere gives NaN everywhere (scipy
//! keeps the zeros a triangular matrix's structure gives); a
//! singular `q` (not expected for norms <= theta_13) gives NaN like linalg.rs's solves.

use super::linalg;
use super::Context;
use crate::ir::Node;
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, CmpI, Contraction, IteratorType, MathUnary, ScalarType, TensorType, Value};

const DEGREE: usize = 13;
/// Higham 2005, Table 2.3: the largest 1-norm for which degree 13 needs no scaling.
const THETA_13: f64 = 5.371920351148152;

pub fn expm(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (x, out) = (node.inputs[0], node.outputs[0]);
    if cx.graph.ty(x).ndim() != 2 {
        return Err("Expm of a tensor that is not a matrix".into());
    }
    let element = linalg::working_type(cx.graph.ty(out), "Expm")?;
    let d = cx.dims(x);
    // scipy's expm raises numpy's LinAlgError (a ValueError) for a matrix not square.
    let not_square = cx.exception("numpy.linalg.LinAlgError");
    cx.require(d[0], d[1], "Expm (expected a square matrix)", not_square);
    let a = linalg::operand(cx, b, x, cx.graph.ty(out).dtype)?;
    let n = b.tensor_dim(&a, 0);

    // s, and B = A * 2^-s.
    let norm = one_norm(b, &a, &n)?;
    let norm = if element == ScalarType::F64 { norm } else { b.cast(Cast::ExtF, &norm, ScalarType::F64) };
    let theta = b.constant_f64(THETA_13, ScalarType::F64);
    let ratio = b.arith(Arith::DivF, &norm, &theta);
    let (s, scale) = halvings(b, &ratio);
    let scale = if element == ScalarType::F64 { scale } else { b.cast(Cast::TruncF, &scale, element) };
    let bm = combine(b, &n, element, &[(1.0, &a)], 0.0, Some(&scale))?;

    let c = pade_coefficients();
    let mm = |b: &mut Block, p: &Value, q: &Value| {
        let init = linalg::zeros(b, element, &[n.clone(), n.clone()]);
        b.contraction(Contraction::Matmul, p, q, &init)
    };
    let b2 = mm(b, &bm, &bm);
    let b4 = mm(b, &b2, &b2);
    let b6 = mm(b, &b4, &b2);
    let t = combine(b, &n, element, &[(c[13], &b6), (c[11], &b4), (c[9], &b2)], 0.0, None)?;
    let t = mm(b, &b6, &t);
    let t = combine(b, &n, element, &[(1.0, &t), (c[7], &b6), (c[5], &b4), (c[3], &b2)], c[1], None)?;
    let u = mm(b, &bm, &t);
    let t = combine(b, &n, element, &[(c[12], &b6), (c[10], &b4), (c[8], &b2)], 0.0, None)?;
    let t = mm(b, &b6, &t);
    let v = combine(b, &n, element, &[(1.0, &t), (c[6], &b6), (c[4], &b4), (c[2], &b2)], c[0], None)?;
    let p = combine(b, &n, element, &[(1.0, &v), (1.0, &u)], 0.0, None)?;
    let q = combine(b, &n, element, &[(1.0, &v), (-1.0, &u)], 0.0, None)?;
    let (r, singular) = linalg::lu_solve(cx, b, &q, &p)?;
    let r = linalg::nan_if(b, &r, &singular)?;

    // r squared s times.
    let start = cx.loop_start(b, &r)?;
    let (zero, one) = (b.constant_index(0), b.constant_index(1));
    let squared = b.scf_for(&zero, &s, &one, &[start], |body, _, carried| {
        let init = linalg::zeros(body, element, &[n.clone(), n.clone()]);
        Ok::<_, String>(vec![body.contraction(Contraction::Matmul, &carried[0], &carried[0], &init)])
    })?;
    linalg::define(cx, b, out, &squared[0], vec![d[0], d[0]]);
    Ok(())
}

/// `c_0 ..= c_13`: `c_{j+1} = c_j (m - j) / ((2m - j)(j + 1))`, `c_0 = 1`.
fn pade_coefficients() -> [f64; DEGREE + 1] {
    let m = DEGREE as f64;
    let mut c = [1.0; DEGREE + 1];
    for j in 0..DEGREE {
        let jf = j as f64;
        c[j + 1] = c[j] * (m - jf) / ((2.0 * m - jf) * (jf + 1.0));
    }
    c
}

/// The matrix 1-norm (the largest column sum of |a|) as an f32/f64 scalar; NaN if any
/// element is NaN.
fn one_norm(b: &mut Block, a: &Value, n: &Value) -> Result<Value, String> {
    let element = a.tensor().element;
    let zero = b.constant_f64(0.0, element);
    let e = b.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(n));
    let sums = b.linalg_fill(&zero, &e);
    let maps = [AffineMap::identity(2), AffineMap { dims: 2, results: vec![AffineExpr::Dim(1)] }];
    let sums = b.linalg_generic(&[a.clone()], &[sums], &maps, &[IteratorType::Reduction, IteratorType::Parallel], |g, args| {
        let v = g.math(MathUnary::AbsF, &args[0]);
        Ok::<_, String>(vec![g.arith(Arith::AddF, &args[1], &v)])
    })?;
    let e = b.tensor_empty(TensorType::new(vec![], element), &[]);
    let most = b.linalg_fill(&zero, &e);
    let maps = [AffineMap::identity(1), AffineMap { dims: 1, results: vec![] }];
    let most = b.linalg_generic(&[sums[0].clone()], &[most], &maps, &[IteratorType::Reduction], |g, args| {
        Ok::<_, String>(vec![g.arith(Arith::MaximumF, &args[1], &args[0])])
    })?;
    Ok(b.tensor_extract(&most[0], &[]))
}

/// For an f64 `ratio` (`||A||_1 / theta`): `s = max(0, ceil(log2(ratio)))` as an index
/// (at most 1022; 0 for NaN) and `2^-s` as f64, from the exponent's bits.
fn halvings(b: &mut Block, ratio: &Value) -> (Value, Value) {
    let i64t = ScalarType::I64;
    let bits = b.cast(Cast::Bitcast, ratio, i64t);
    let c = |b: &mut Block, v: i64| b.constant_int(v, i64t);
    let (shift, mask, bias, frac_mask) = (c(b, 52), c(b, 0x7ff), c(b, 1023), c(b, (1i64 << 52) - 1));
    let biased = b.shrui(&bits, &shift);
    let biased = b.arith(Arith::AndI, &biased, &mask);
    let exponent = b.arith(Arith::SubI, &biased, &bias);
    let frac = b.arith(Arith::AndI, &bits, &frac_mask);
    let zero = c(b, 0);
    let inexact = b.cmpi(CmpI::Ne, &frac, &zero);
    let up = b.cast(Cast::ExtUI, &inexact, i64t);
    let s = b.arith(Arith::AddI, &exponent, &up);
    // Only a ratio above 1 needs halvings (NaN compares false).
    let one = b.constant_f64(1.0, ScalarType::F64);
    let above = b.cmpf(CmpF::Ogt, ratio, &one);
    let s = b.select(&above, &s, &zero);
    let most = c(b, 1022);
    let s = b.arith(Arith::MinSI, &s, &most);
    let exp_bits = b.arith(Arith::SubI, &bias, &s);
    let exp_bits = b.shli(&exp_bits, &shift);
    let scale = b.cast(Cast::Bitcast, &exp_bits, ScalarType::F64);
    let s = b.index_cast(&s, ScalarType::Index);
    (s, scale)
}

/// `sum_k w_k t_k + diag * I` (`scale`: times this scalar), elementwise over n x n.
fn combine(b: &mut Block, n: &Value, element: ScalarType, terms: &[(f64, &Value)], diag: f64, scale: Option<&Value>) -> Result<Value, String> {
    let ins: Vec<Value> = terms.iter().map(|(_, t)| (*t).clone()).collect();
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[n.clone(), n.clone()]);
    let maps = vec![AffineMap::identity(2); ins.len() + 1];
    let r = b.linalg_generic(&ins, &[init], &maps, &[IteratorType::Parallel; 2], |g, args| {
        let mut acc = g.constant_f64(0.0, element);
        for (k, (w, _)) in terms.iter().enumerate() {
            let term = if *w == 1.0 {
                args[k].clone()
            } else {
                let w = g.constant_f64(*w, element);
                g.arith(Arith::MulF, &w, &args[k])
            };
            acc = if k == 0 { term } else { g.arith(Arith::AddF, &acc, &term) };
        }
        if diag != 0.0 {
            let (i, j) = (g.linalg_index(0), g.linalg_index(1));
            let on = g.cmpi(CmpI::Eq, &i, &j);
            let dv = g.constant_f64(diag, element);
            let zero = g.constant_f64(0.0, element);
            let add = g.select(&on, &dv, &zero);
            acc = g.arith(Arith::AddF, &acc, &add);
        }
        if let Some(s) = scale {
            acc = g.arith(Arith::MulF, &acc, s);
        }
        Ok::<_, String>(vec![acc])
    })?;
    Ok(r[0].clone())
}
