//! `Eigh` and `Eigvalsh` (the standard problem; the generalized one is reduced to it,
//! `reduced`): the eigenvalues
//! (ascending, as LAPACK's syevd gives them to scipy) and eigenvectors of a symmetric
//! matrix read from one triangle, on the CPU by tridiagonal reduction and QL iterations in
//! one dispatch (dense_kernels/symmetric_eigen.rs), on GPUs by cyclic Jacobi rotations
//! (Golub & Van Loan 8.5, below); and `SVD` (values, U and V^T) by one-sided Jacobi on the
//! same rounds (see `stacked_svd`), the values alone on the CPU by bidiagonalization
//! (`bidiagonal_values`).
//!
//! A rotation in the plane (p, q), J = [[c, s], [-s, c]] there, with t = s / c the smaller
//! root of t^2 + 2 theta t - 1 = 0, theta = (a_qq - a_pp) / (2 a_pq), makes A' = J^T A J
//! zero at (p, q). The rotations of a round act on disjoint planes (the round-robin order
//! of Brent & Luk: one index fixed, the others turning), so a round is two parallel
//! kernels: one computes each index's rotation coefficients, the other every element of
//! A' = J^T A J and V' = V J from the four elements of A (two of V) its row's and column's
//! planes touch. A sweep is m - 1 rounds (m = n rounded up to even; an odd n's last slot is a
//! dummy whose partner rests); the loop in the host program runs sweeps until every plane
//! is diagonal to rounding (`unconverged`, read by the host), at most `SWEEPS`. A and V
//! travel as one tensor, A's rows over V's (IREE 3.13 mixes up the buffers of a loop
//! carrying several), started by `Context::loop_start`.
//!
//! The eigenvalues are A's diagonal, put in ascending order (ties by index), V's columns
//! with them. An eigenvector's sign is not defined: LAPACK's choice is not reproduced, the
//! columns are as the rotations leave them. A non-finite element raises scipy's
//! `ValueError` (its check_finite, as the C backend calls it).

use super::linalg::{any_not_finite, define, factor, nan_if, not_positive, operand, substitute, symmetrized, working_type};
use super::qr;
use super::shapes::{Dim, DimExpr};
use super::{dense_kernels, scalar, Context, ErrorKind, RuntimeCheck};
use crate::ir::Node;
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, CmpF, CmpI, IndexArg, IteratorType, MathUnary, ScalarType, TensorType, Value};

/// Sweeps of rotations per type (f64, f32): cyclic Jacobi converges quadratically once the
/// off-diagonal part is small, in well under 10 sweeps for the sizes PyTensor graphs hold.
const SWEEPS: (i64, i64) = (12, 8);

fn most_sweeps(element: ScalarType) -> i64 {
    if element == ScalarType::F64 {
        SWEEPS.0
    } else {
        SWEEPS.1
    }
}

/// `Eigh` (eigenvalues and eigenvectors) or `Eigvalsh` (eigenvalues only, `vectors`
/// false), reading A's lower (`lower`) or upper triangle.
pub fn eigh(cx: &mut Context, b: &mut Block, node: &Node, lower: bool, vectors: bool) -> Result<(), String> {
    let what = if vectors { "Eigh" } else { "Eigvalsh" };
    let x_var = node.inputs[0];
    if cx.graph.ty(x_var).ndim() != 2 || node.outputs.len() != 1 + usize::from(vectors) {
        return Err(format!("{what} of a tensor that is not a matrix"));
    }
    let out_w = node.outputs[0];
    let element = working_type(cx.graph.ty(out_w), what)?;
    let a = operand(cx, b, x_var, cx.graph.ty(out_w).dtype)?;
    let d = cx.dims(x_var);
    // numpy's LinAlgError, as the C backend raises for a matrix that is not square.
    let not_square = cx.exception("numpy.linalg.LinAlgError");
    cx.require(d[0], d[1], &format!("{what} (the last 2 dimensions of A must be square)"), not_square);
    // scipy's check_finite (on by default, as PyTensor's perform calls it): a non-finite
    // element anywhere raises ValueError.
    let not_finite = any_not_finite(b, &a)?;
    cx.add_check(not_finite, RuntimeCheck { kind: ErrorKind::Value, message: "array must not contain infs or NaNs".into() });
    // The generalized problem's factor of B, kept for its eigenvectors.
    let mut factor_of_b = None;
    let (state, n) = if node.inputs.len() == 2 {
        let (c, t) = reduced(cx, b, node, &a, lower, what)?;
        factor_of_b = Some(t);
        rotated(cx, b, &c, true, element, vectors)?
    } else {
        rotated(cx, b, &a, lower, element, vectors)?
    };

    let eigenvalue = |g: &mut Block, k: &Value| g.tensor_extract(&state, &[k.clone(), k.clone()]);
    let (source, w) = order(b, &n, &eigenvalue, CmpF::Olt, element)?;
    define(cx, b, out_w, &w, vec![d[0]]);
    if vectors {
        let v_init = b.tensor_empty(TensorType::new(vec![None, None], element), &[n.clone(), n.clone()]);
        let nn = n.clone();
        let v = b.linalg_generic(&[], &[v_init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
            let (r, k) = (g.linalg_index(0), g.linalg_index(1));
            let i = g.tensor_extract(&source, &[k]);
            let i = g.index_cast(&i, ScalarType::Index);
            let row = g.arith(Arith::AddI, &nn, &r);
            Ok::<_, String>(vec![g.tensor_extract(&state, &[row, i])])
        })?[0]
            .clone();
        // The generalized problem's eigenvectors x = L^-T y from C's y (B = L L^T; L^T
        // = U for the upper triangle): x^T B x = y^T y = I, sygvd's normalization.
        let v = match &factor_of_b {
            Some(t) => substitute(cx, b, t, &v, false, lower, false)?,
            None => v,
        };
        define(cx, b, node.outputs[1], &v, vec![d[0], d[0]]);
    }
    Ok(())
}

/// A square root R of the n x n `cov` (R R^T = cov where cov is positive semidefinite), as
/// PyTensor's multivariate_normal makes it for numpy's methods: "eigh" (`svd` false), V
/// diag(sqrt(w)) from cov's lower triangle (a NaN column where w < 0, as numpy's sqrt
/// gives); "svd", U diag(sqrt(s)) = W diag(1/sqrt(s)) from one-sided Jacobi (A V = W, s =
/// W's column norms; zero columns where s = 0). numpy's LinAlgError for a non-finite cov,
/// as PyTensor's rng_fn raises. The columns are in no particular order, which does not
/// change R z's law.
pub(super) fn covariance_root(cx: &mut Context, b: &mut Block, cov: &Value, svd: bool, element: ScalarType) -> Result<Value, String> {
    check_covariance_finite(cx, b, cov)?;
    covariance_root_of_finite(cx, b, cov, svd, element)
}

/// PyTensor's rng_fn raises numpy's LinAlgError for a non-finite cov, whichever method:
/// the check on `cov`, a matrix or a stack of them collapsed to one (rows after rows).
pub(super) fn check_covariance_finite(cx: &mut Context, b: &mut Block, cov: &Value) -> Result<(), String> {
    let not_finite = any_not_finite(b, cov)?;
    let failed = cx.exception("numpy.linalg.LinAlgError");
    cx.add_check(not_finite, RuntimeCheck { kind: failed, message: "Array must not contain infs or NaNs".into() });
    Ok(())
}

/// `covariance_root` of a cov already checked to be finite: no check of its own, so that
/// it can run in a loop over a stack of covariances.
pub(super) fn covariance_root_of_finite(cx: &mut Context, b: &mut Block, cov: &Value, svd: bool, element: ScalarType) -> Result<Value, String> {
    let n = b.tensor_dim(cov, 0);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[n.clone(), n.clone()]);
    let maps = [AffineMap::identity(2)];
    let root = if svd {
        let OneSided { state, norms, .. } = one_sided(cx, b, cov, element, false, false)?;
        let root = b.linalg_generic(&[], &[init], &maps, &[IteratorType::Parallel; 2], |g, _| {
            let (i, k) = (g.linalg_index(0), g.linalg_index(1));
            let w = g.tensor_extract(&state, &[i, k.clone()]);
            let s = g.tensor_extract(&norms, &[k]);
            let zero = g.constant_f64(0.0, element);
            let positive = g.cmpf(CmpF::Ogt, &s, &zero);
            let root = g.math(MathUnary::Sqrt, &s);
            let r = g.arith(Arith::DivF, &w, &root);
            Ok::<_, String>(vec![g.select(&positive, &r, &zero)])
        })?[0]
            .clone();
        root
    } else {
        let (state, n) = rotated(cx, b, cov, true, element, true)?;
        let nn = n.clone();
        b.linalg_generic(&[], &[init], &maps, &[IteratorType::Parallel; 2], |g, _| {
            let (i, k) = (g.linalg_index(0), g.linalg_index(1));
            let row = g.arith(Arith::AddI, &nn, &i);
            let v = g.tensor_extract(&state, &[row, k.clone()]);
            let w = g.tensor_extract(&state, &[k.clone(), k]);
            // A semidefinite cov's zero eigenvalues come out as rounding either side of 0:
            // those within n eps max|w| of 0 are 0 (LAPACK's happened to be >= 0 on the
            // singular covariances tried); a negative one past that is NaN, as numpy's sqrt.
            let (z, o) = (g.constant_index(0), g.constant_index(1));
            let zero = g.constant_f64(0.0, element);
            let largest = g.scf_for(&z, &nn, &o, &[zero.clone()], |lp, j, c| {
                let d = lp.tensor_extract(&state, &[j.clone(), j.clone()]);
                let size = lp.math(MathUnary::AbsF, &d);
                Ok::<_, String>(vec![lp.arith(Arith::MaximumF, &c[0], &size)])
            })?[0]
                .clone();
            let n_f = g.index_cast(&nn, ScalarType::I64);
            let n_f = g.cast(crate::mlir::Cast::SIToFP, &n_f, element);
            let eps = g.constant_f64(if element == ScalarType::F32 { f32::EPSILON as f64 } else { f64::EPSILON }, element);
            let tol = g.arith(Arith::MulF, &n_f, &eps);
            let tol = g.arith(Arith::MulF, &tol, &largest);
            let size = g.math(MathUnary::AbsF, &w);
            let rounding = g.cmpf(CmpF::Ole, &size, &tol);
            let w = g.select(&rounding, &zero, &w);
            let root = g.math(MathUnary::Sqrt, &w);
            Ok::<_, String>(vec![g.arith(Arith::MulF, &v, &root)])
        })?[0]
            .clone()
    };
    Ok(root)
}

/// `MatrixPinv(hermitian=True)`: numpy's pinv of a symmetric matrix (its lower triangle,
/// as numpy's eigh reads it) from the eigen decomposition A = V diag(w) V^T: A^+ =
/// V diag(1/w) V^T over the w with |w| > 1e-15 max|w| (numpy's default rcond, in either
/// type), a sum over the eigenvalues per element, so their order does not matter. A
/// non-finite element makes every element NaN, as numpy's result is. `hermitian` false:
/// `general_pinv`.
pub fn pinv(cx: &mut Context, b: &mut Block, node: &Node, hermitian: bool) -> Result<(), String> {
    if !hermitian {
        return general_pinv(cx, b, node);
    }
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    let element = working_type(cx.graph.ty(out), "MatrixPinv")?;
    let a = operand(cx, b, x_var, cx.graph.ty(out).dtype)?;
    let d = cx.dims(x_var);
    // numpy's eigh raises LinAlgError for a matrix that is not square.
    let not_square = cx.exception("numpy.linalg.LinAlgError");
    cx.require(d[0], d[1], "MatrixPinv (the last 2 dimensions of the array must be square)", not_square);
    let not_finite = any_not_finite(b, &a)?;
    let (state, n) = rotated(cx, b, &a, true, element, true)?;
    let p_init = b.tensor_empty(TensorType::new(vec![None, None], element), &[n.clone(), n.clone()]);
    let nn = n.clone();
    let p = b.linalg_generic(&[], &[p_init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (i, j) = (g.linalg_index(0), g.linalg_index(1));
        let (z, o) = (g.constant_index(0), g.constant_index(1));
        let zero = g.constant_f64(0.0, element);
        let largest = g.scf_for(&z, &nn, &o, &[zero.clone()], |lp, k, c| {
            let w = lp.tensor_extract(&state, &[k.clone(), k.clone()]);
            let size = lp.math(MathUnary::AbsF, &w);
            Ok::<_, String>(vec![lp.arith(Arith::MaximumF, &c[0], &size)])
        })?[0]
            .clone();
        let rcond = g.constant_f64(1e-15, element);
        let cutoff = g.arith(Arith::MulF, &rcond, &largest);
        let (vi, vj) = (g.arith(Arith::AddI, &nn, &i), g.arith(Arith::AddI, &nn, &j));
        let sum = g.scf_for(&z, &nn, &o, &[zero.clone()], |lp, k, c| {
            let w = lp.tensor_extract(&state, &[k.clone(), k.clone()]);
            let size = lp.math(MathUnary::AbsF, &w);
            let kept = lp.cmpf(CmpF::Ogt, &size, &cutoff);
            let ik = lp.tensor_extract(&state, &[vi.clone(), k.clone()]);
            let jk = lp.tensor_extract(&state, &[vj.clone(), k.clone()]);
            let prod = lp.arith(Arith::MulF, &ik, &jk);
            let term = lp.arith(Arith::DivF, &prod, &w);
            let zero = lp.constant_f64(0.0, element);
            let term = lp.select(&kept, &term, &zero);
            Ok::<_, String>(vec![lp.arith(Arith::AddF, &c[0], &term)])
        })?[0]
            .clone();
        let flag = g.tensor_extract(&not_finite, &[]);
        let none = g.constant_int(0, ScalarType::I8);
        let bad = g.cmpi(CmpI::Ne, &flag, &none);
        let nan = g.constant_f64(f64::NAN, element);
        Ok::<_, String>(vec![g.select(&bad, &nan, &sum)])
    })?[0]
        .clone();
    define(cx, b, out, &p, vec![d[0], d[0]]);
    Ok(())
}

/// `MatrixPinv(hermitian=False)`: numpy's pinv, V diag(1/s) U^T over the s > 1e-15 max(s)
/// (numpy's default rcond, in either type), from one-sided Jacobi (`one_sided`): with
/// A V = W and U = W / s, A^+[i, j] = sum_k V[i, k] (1/s_k) U[j, k]; for a wide A (A^T V = W)
/// the same with W's and V's rows swapped. A sum over the values per element, so their
/// order does not matter, and the values cut off are not used: U needs no completion.
/// numpy's LinAlgError for a NaN; an infinity makes every element NaN (numpy's is LAPACK's
/// partly NaN U and V^T times zeros: NaN in places, 0 in others).
fn general_pinv(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let (x_var, out) = (node.inputs[0], node.outputs[0]);
    if cx.graph.ty(x_var).ndim() != 2 {
        return Err("MatrixPinv of a tensor that is not a matrix".into());
    }
    let element = working_type(cx.graph.ty(out), "MatrixPinv")?;
    let a = operand(cx, b, x_var, cx.graph.ty(out).dtype)?;
    let OneSided { state, r, c, tall, norms, infinite } = one_sided(cx, b, &a, element, true, true)?;
    let (m, n) = (b.tensor_dim(&a, 0), b.tensor_dim(&a, 1));
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[n, m]);
    let p = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (i, j) = (g.linalg_index(0), g.linalg_index(1));
        let (z, o) = (g.constant_index(0), g.constant_index(1));
        let zero = g.constant_f64(0.0, element);
        let largest = g.scf_for(&z, &c, &o, &[zero.clone()], |lp, k, acc| {
            let s = lp.tensor_extract(&norms, &[k.clone()]);
            Ok::<_, String>(vec![lp.arith(Arith::MaximumF, &acc[0], &s)])
        })?[0]
            .clone();
        let rcond = g.constant_f64(1e-15, element);
        let cutoff = g.arith(Arith::MulF, &rcond, &largest);
        // V's row and W's: (r + i, j) where tall, (r + j, i) where wide.
        let (vi, vj) = (g.arith(Arith::AddI, &r, &i), g.arith(Arith::AddI, &r, &j));
        let v_row = g.select(&tall, &vi, &vj);
        let w_row = g.select(&tall, &j, &i);
        let sum = g.scf_for(&z, &c, &o, &[zero.clone()], |lp, k, acc| {
            let s = lp.tensor_extract(&norms, &[k.clone()]);
            let kept = lp.cmpf(CmpF::Ogt, &s, &cutoff);
            let v = lp.tensor_extract(&state, &[v_row.clone(), k.clone()]);
            let w = lp.tensor_extract(&state, &[w_row.clone(), k.clone()]);
            let one = lp.constant_f64(1.0, element);
            let inverse = lp.arith(Arith::DivF, &one, &s);
            let u = lp.arith(Arith::DivF, &w, &s);
            let scaled = lp.arith(Arith::MulF, &inverse, &u);
            let term = lp.arith(Arith::MulF, &v, &scaled);
            let zero = lp.constant_f64(0.0, element);
            let term = lp.select(&kept, &term, &zero);
            Ok::<_, String>(vec![lp.arith(Arith::AddF, &acc[0], &term)])
        })?[0]
            .clone();
        Ok::<_, String>(vec![sum])
    })?[0]
        .clone();
    let p = nan_if(b, &p, &infinite)?;
    let d = cx.dims(x_var);
    define(cx, b, out, &p, vec![d[1], d[0]]);
    Ok(())
}

/// The generalized problem A x = w B x (B symmetric positive definite, both read from
/// the `lower` or upper triangle, as sygvd) of Eigvalsh or Eigh (`what`): the standard one
/// C = L^-1 A L^-T with the same eigenvalues, B = L L^T (L = U^T for the upper triangle),
/// and B's factor (L, or U from the upper triangle). B's checks are scipy's: ValueError
/// for a non-finite element or another size, LinAlgError where B's factorization fails
/// (a pivot not positive).
fn reduced(cx: &mut Context, b: &mut Block, node: &Node, a: &Value, lower: bool, what: &str) -> Result<(Value, Value), String> {
    let b_var = node.inputs[1];
    if cx.graph.ty(b_var).ndim() != 2 {
        return Err(format!("{what} with a second matrix b that is not a matrix"));
    }
    let bm = operand(cx, b, b_var, cx.graph.ty(node.outputs[0]).dtype)?;
    let (da, db) = (cx.dims(node.inputs[0]), cx.dims(b_var));
    let message = format!("{what} (wrong b dimensions)");
    cx.require_equal(da[0], db[0], &message);
    cx.require_equal(da[0], db[1], &message);
    let not_finite = any_not_finite(b, &bm)?;
    cx.add_check(not_finite, RuntimeCheck { kind: ErrorKind::Value, message: "array must not contain infs or NaNs".into() });
    let n = b.tensor_dim(&bm, 0);
    // L from the lower triangle, or U (U^T U = B) from the upper: either way T x = rhs
    // below solves L x = rhs (U^T x = rhs: U read transposed).
    let t = factor(cx, b, &bm, &n, lower)?;
    let bad = not_positive(b, &t, &n)?;
    let failed = cx.exception("numpy.linalg.LinAlgError");
    cx.add_check(bad, RuntimeCheck { kind: failed, message: "B is not positive definite".into() });
    let full = symmetrized(b, a, lower)?;
    let x = substitute(cx, b, &t, &full, true, !lower, false)?;
    // X^T = A L^-T (A symmetric), so C = L^-1 X^T.
    let xt = super::linalg::transposed(b, &x)?;
    let c = substitute(cx, b, &t, &xt, true, !lower, false)?;
    Ok((c, t))
}

/// The rotated [A; V] of the symmetric matrix read from `a`'s `lower` (or upper) triangle,
/// after the sweeps: the eigenvalues on A's diagonal, the eigenvectors in V's columns (in
/// no order), and n. Without `vectors`, A alone (a third less work a rotation).
fn rotated(cx: &mut Context, b: &mut Block, a: &Value, lower: bool, element: ScalarType, vectors: bool) -> Result<(Value, Value), String> {
    let n = b.tensor_dim(a, 0);
    let rows = if vectors { b.arith(Arith::AddI, &n, &n) } else { n.clone() };

    // [A; I]: A symmetric from the triangle read, under it the identity.
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), n.clone()]);
    let nn = n.clone();
    let start = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let in_a = g.cmpi(CmpI::Ult, &r, &nn);
        let row = g.arith(Arith::RemUI, &r, &nn);
        // The element of the triangle read: (max, min) of (row, c) for the lower one.
        let (hi, lo) = (g.arith(Arith::MaxUI, &row, &c), g.arith(Arith::MinUI, &row, &c));
        let (i, j) = if lower { (hi, lo) } else { (lo, hi) };
        let v = g.tensor_extract(a, &[i, j]);
        let on_diagonal = g.cmpi(CmpI::Eq, &row, &c);
        let (z, o) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element));
        let id = g.select(&on_diagonal, &o, &z);
        Ok::<_, String>(vec![g.select(&in_a, &v, &id)])
    })?[0]
        .clone();
    if scalar::has_sequential_kernels() {
        return Ok((dense_kernels::symmetric_eigen(cx, b, &start, &n, element, vectors), n));
    }
    Ok((sweeps(cx, b, &start, &n, element, true)?, n))
}

/// The sweeps of rotations on `start` ([A; V] two-sided, [W; V] one-sided) over its `n`
/// columns, in a loop of the host program started by `Context::loop_start`: m slots (n
/// rounded up to even), m - 1 rounds a sweep. Before each sweep the host reads whether
/// any plane still needs a rotation (`unconverged`), and stops where none does, or after
/// `SWEEPS`.
fn sweeps(cx: &mut Context, b: &mut Block, start: &Value, n: &Value, element: ScalarType, two_sided: bool) -> Result<Value, String> {
    let most = most_sweeps(element);
    // On the CPU the two-sided problem never gets here (`rotated`: `symmetric_eigen`).
    if !two_sided && scalar::has_sequential_kernels() {
        return Ok(dense_kernels::jacobi_sweeps(cx, b, start, n, element, most, true));
    }
    let start = cx.loop_start(b, start)?;
    let (zero, one, two) = (b.constant_index(0), b.constant_index(1), b.constant_index(2));
    let odd = b.arith(Arith::RemUI, n, &two);
    let m = b.arith(Arith::AddI, n, &odd);
    let m1 = b.arith(Arith::SubI, &m, &one);
    let rounds = b.arith(Arith::MaxSI, &m1, &one);
    let most = b.constant_index(most);
    // The closures of scf.while give no Result: the first error is kept here.
    // The sizes of the tensor scf.while carries, tied to it in each region and after:
    // IREE cannot see them through the loop (tensor.dim left unresolved).
    let sizes = [b.tensor_dim(&start, 0), n.clone()];
    let failed = std::cell::RefCell::new(None);
    let state = b.scf_while(
        &[start, zero.clone()],
        |g, args| {
            let more = g.cmpi(CmpI::Ult, &args[1], &most);
            let carried = g.tie_shape(&args[0], &sizes);
            let flag = match unconverged(g, &carried, n, element, two_sided) {
                Ok(flag) => g.tensor_extract(&flag, &[]),
                Err(e) => {
                    failed.borrow_mut().get_or_insert(e);
                    g.constant_int(0, ScalarType::I8)
                }
            };
            let none = g.constant_int(0, ScalarType::I8);
            let rotating = g.cmpi(CmpI::Ne, &flag, &none);
            g.arith(Arith::AndI, &more, &rotating)
        },
        |body, args| {
            let carried = body.tie_shape(&args[0], &sizes);
            let r = body.scf_for(&zero, &rounds, &one, std::slice::from_ref(&carried), |inner, round, carried| {
                Ok::<_, String>(vec![rotate(inner, &carried[0], n, &m, round, element, two_sided)?])
            });
            let next = match r {
                Ok(r) => r[0].clone(),
                Err(e) => {
                    failed.borrow_mut().get_or_insert(e);
                    args[0].clone()
                }
            };
            let one = body.constant_index(1);
            vec![next, body.arith(Arith::AddI, &args[1], &one)]
        },
    );
    if let Some(e) = failed.into_inner() {
        return Err(e);
    }
    Ok(b.tie_shape(&state[0], &sizes))
}

/// Whether a rotation of some plane (p, q) of `s` would still change it (a rank-0 i8, 1
/// where so): |a_pq| > n eps sqrt(|a_pp|) sqrt(|a_qq|) (A's entries two-sided, W's
/// columns' Gram matrix one-sided: the relative criterion of Demmel & Veselic, which keeps
/// small values' relative accuracy; n eps: the rounding a sweep leaves). One lane per p
/// over the q > p, then the lanes' flags folded. NaN counts as converged (no rotation
/// repairs it).
fn unconverged(b: &mut Block, s: &Value, n: &Value, element: ScalarType, two_sided: bool) -> Result<Value, String> {
    let lanes = b.tensor_empty(TensorType::new(vec![None], ScalarType::I8), std::slice::from_ref(n));
    let rows = b.tensor_dim(s, 0);
    let per_p = b.linalg_generic(&[], &[lanes], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let p = g.linalg_index(0);
        let one = g.constant_index(1);
        let from = g.arith(Arith::AddI, &p, &one);
        let none = g.constant_int(0, ScalarType::I8);
        let r = g.scf_for(&from, n, &one, &[none], |lp, q, acc| {
            let (app, aqq, apq) = if two_sided {
                let at = |g: &mut Block, x: &Value, y: &Value| g.tensor_extract(s, &[x.clone(), y.clone()]);
                (at(lp, &p, &p), at(lp, q, q), at(lp, &p, q))
            } else {
                column_products(lp, s, &rows, &p, q, element)
            };
            let off = needs_rotation(lp, &app, &aqq, &apq, n, element);
            let (no, yes) = (lp.constant_int(0, ScalarType::I8), lp.constant_int(1, ScalarType::I8));
            let flag = lp.select(&off, &yes, &no);
            Ok::<_, String>(vec![lp.arith(Arith::OrI, &flag, &acc[0])])
        })?;
        Ok::<_, String>(vec![r[0].clone()])
    })?[0]
        .clone();
    let none = b.constant_int(0, ScalarType::I8);
    let flag = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let init = b.linalg_fill(&none, &flag);
    let maps = [AffineMap::identity(1), super::linalg::map(1, &[])];
    let r = b.linalg_generic(&[per_p], &[init], &maps, &[IteratorType::Reduction], |g, args| {
        Ok::<_, String>(vec![g.arith(Arith::OrI, &args[0], &args[1])])
    })?;
    Ok(r[0].clone())
}

/// Whether the plane (p, q) of a symmetric matrix (of size `n`) is off its diagonal by more
/// than rounding: |a_pq| > n eps sqrt(|a_pp|) sqrt(|a_qq|) (an i1; false for NaN).
pub(super) fn needs_rotation(g: &mut Block, app: &Value, aqq: &Value, apq: &Value, n: &Value, element: ScalarType) -> Value {
    let eps = g.constant_f64(if element == ScalarType::F64 { f64::EPSILON } else { f32::EPSILON as f64 }, element);
    let count = g.index_cast(n, ScalarType::I64);
    let count = g.cast(crate::mlir::Cast::SIToFP, &count, element);
    let tol = g.arith(Arith::MulF, &eps, &count);
    let (sp, sq) = (g.math(MathUnary::AbsF, app), g.math(MathUnary::AbsF, aqq));
    let (sp, sq) = (g.math(MathUnary::Sqrt, &sp), g.math(MathUnary::Sqrt, &sq));
    let bound = g.arith(Arith::MulF, &sp, &sq);
    let bound = g.arith(Arith::MulF, &tol, &bound);
    let size = g.math(MathUnary::AbsF, apq);
    g.cmpf(CmpF::Ogt, &size, &bound)
}

/// The n values `value(k)` in ascending (`before` `Olt`) or descending (`Ogt`) order, ties
/// by index, and the position each comes from: each value's rank (how many come before
/// it), then the source of each rank, an i64 vector (index tensors cannot cross IREE's
/// dispatches); the values gathered from it.
fn order(b: &mut Block, n: &Value, value: &dyn Fn(&mut Block, &Value) -> Value, before: CmpF, element: ScalarType) -> Result<(Value, Value), String> {
    orders(b, &[], n, &|g, _, k| value(g, k), before, element)
}

/// [`order`] of each of a batch's vectors (`batch` the sizes of its leading dims;
/// `value` gets the batch indices too): batch x n tensors.
fn orders(b: &mut Block, batch: &[Value], n: &Value, value: &dyn Fn(&mut Block, &[Value], &Value) -> Value, before: CmpF, element: ScalarType) -> Result<(Value, Value), String> {
    let rank = batch.len() + 1;
    let mut sizes = batch.to_vec();
    sizes.push(n.clone());
    let maps = [AffineMap::identity(rank)];
    let parallel = vec![IteratorType::Parallel; rank];
    let at = |g: &mut Block| -> (Vec<Value>, Value) { ((0..rank - 1).map(|d| g.linalg_index(d)).collect(), g.linalg_index(rank - 1)) };
    let vec_i = b.tensor_empty(TensorType::new(vec![None; rank], ScalarType::I64), &sizes);
    let ranks = b.linalg_generic(&[], &[vec_i.clone()], &maps, &parallel, |g, _| {
        let (m, i) = at(g);
        let wi = value(g, &m, &i);
        let (z, o) = (g.constant_index(0), g.constant_index(1));
        let r = g.scf_for(&z, n, &o, &[z.clone()], |lp, j, c| {
            let wj = value(lp, &m, j);
            let ahead = lp.cmpf(before, &wj, &wi);
            let same = lp.cmpf(CmpF::Oeq, &wj, &wi);
            let lower_index = lp.cmpi(CmpI::Ult, j, &i);
            let tie = lp.arith(Arith::AndI, &same, &lower_index);
            let earlier = lp.arith(Arith::OrI, &ahead, &tie);
            let one = lp.constant_index(1);
            let next = lp.arith(Arith::AddI, &c[0], &one);
            Ok::<_, String>(vec![lp.select(&earlier, &next, &c[0])])
        })?;
        Ok::<_, String>(vec![g.index_cast(&r[0], ScalarType::I64)])
    })?[0]
        .clone();
    let source = b.linalg_generic(&[], &[vec_i], &maps, &parallel, |g, _| {
        let (m, k) = at(g);
        let (z, o) = (g.constant_index(0), g.constant_index(1));
        let r = g.scf_for(&z, n, &o, &[z.clone()], |lp, i, c| {
            let mut place = m.clone();
            place.push(i.clone());
            let ri = lp.tensor_extract(&ranks, &place);
            let ri = lp.index_cast(&ri, ScalarType::Index);
            let here = lp.cmpi(CmpI::Eq, &ri, &k);
            Ok::<_, String>(vec![lp.select(&here, i, &c[0])])
        })?;
        Ok::<_, String>(vec![g.index_cast(&r[0], ScalarType::I64)])
    })?[0]
        .clone();
    let init = b.tensor_empty(TensorType::new(vec![None; rank], element), &sizes);
    let sorted = b.linalg_generic(&[], &[init], &maps, &parallel, |g, _| {
        let (mut m, k) = at(g);
        m.push(k);
        let i = g.tensor_extract(&source, &m);
        let i = g.index_cast(&i, ScalarType::Index);
        m.pop();
        Ok::<_, String>(vec![value(g, &m, &i)])
    })?[0]
        .clone();
    Ok((source, sorted))
}

/// `Eigh` (`vectors`) or `Eigvalsh` of each of `count` matrices stacked in `a` ((count n)
/// x n, finite), read from their `lower` or upper triangles, on the CPU, one workgroup a
/// matrix (`dense_kernels::symmetric_eigens`): the eigenvalues, count x n ascending, and
/// the eigenvectors, count x n x n in columns.
pub(super) fn stacked_eigh(cx: &mut Context, b: &mut Block, a: &Value, count: &Value, lower: bool, element: ScalarType, vectors: bool) -> Result<(Value, Option<Value>), String> {
    let n = b.tensor_dim(a, 1);
    let rows = if vectors { b.arith(Arith::AddI, &n, &n) } else { n.clone() };
    // Each [A; I] as `rotated` makes it, stacked.
    let all_rows = b.arith(Arith::MulI, count, &rows);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[all_rows, n.clone()]);
    let (nn, rr) = (n.clone(), rows.clone());
    let start = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, c) = (g.linalg_index(0), g.linalg_index(1));
        let m = g.arith(Arith::DivUI, &r, &rr);
        let local = g.arith(Arith::RemUI, &r, &rr);
        let in_a = g.cmpi(CmpI::Ult, &local, &nn);
        let row = g.arith(Arith::RemUI, &local, &nn);
        let (hi, lo) = (g.arith(Arith::MaxUI, &row, &c), g.arith(Arith::MinUI, &row, &c));
        let (i, j) = if lower { (hi, lo) } else { (lo, hi) };
        let first = g.arith(Arith::MulI, &m, &nn);
        let i = g.arith(Arith::AddI, &first, &i);
        let v = g.tensor_extract(a, &[i, j]);
        let on_diagonal = g.cmpi(CmpI::Eq, &row, &c);
        let (z, o) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element));
        let id = g.select(&on_diagonal, &o, &z);
        Ok::<_, String>(vec![g.select(&in_a, &v, &id)])
    })?[0]
        .clone();
    let state = dense_kernels::symmetric_eigens(cx, b, &start, count, &rows, element, vectors);
    let eigenvalue = |g: &mut Block, m: &[Value], k: &Value| g.tensor_extract(&state, &[m[0].clone(), k.clone(), k.clone()]);
    let (source, w) = orders(b, std::slice::from_ref(count), &n, &eigenvalue, CmpF::Olt, element)?;
    if !vectors {
        return Ok((w, None));
    }
    let v_init = b.tensor_empty(TensorType::new(vec![None; 3], element), &[count.clone(), n.clone(), n.clone()]);
    let v = b.linalg_generic(&[], &[v_init], &[AffineMap::identity(3)], &[IteratorType::Parallel; 3], |g, _| {
        let (m, r, k) = (g.linalg_index(0), g.linalg_index(1), g.linalg_index(2));
        let i = g.tensor_extract(&source, &[m.clone(), k]);
        let i = g.index_cast(&i, ScalarType::Index);
        let row = g.arith(Arith::AddI, &n, &r);
        Ok::<_, String>(vec![g.tensor_extract(&state, &[m, row, i])])
    })?[0]
        .clone();
    Ok((w, Some(v)))
}

/// `SVD(full_matrices, compute_uv)`: numpy's singular values, descending, by one-sided
/// Jacobi; the matrix as a stack of one (`stacked_svd`, where the method is).
pub fn svd(cx: &mut Context, b: &mut Block, node: &Node, full_matrices: bool, compute_uv: bool) -> Result<(), String> {
    let x_var = node.inputs[0];
    if cx.graph.ty(x_var).ndim() != 2 || node.outputs.len() != if compute_uv { 3 } else { 1 } {
        return Err("SVD of a tensor that is not a matrix".into());
    }
    let out_s = node.outputs[usize::from(compute_uv)];
    let element = working_type(cx.graph.ty(out_s), "SVD")?;
    let a = operand(cx, b, x_var, cx.graph.ty(out_s).dtype)?;
    let one = b.constant_index(1);
    let (m, n) = (b.tensor_dim(&a, 0), b.tensor_dim(&a, 1));
    let cube = TensorType::new(vec![None; 3], element);
    let a3 = b.tensor_expand(&a, &[vec![0, 1], vec![2]], cube, &[IndexArg::Dyn(one.clone()), IndexArg::Dyn(m), IndexArg::Dyn(n)]);
    let results = stacked_svd(cx, b, &a3, &one, element, full_matrices, compute_uv)?;
    let d = cx.dims(x_var);
    let dk = cx.derived(DimExpr::Min(vec![d[0], d[1]]));
    let (u_columns, vt_rows) = if full_matrices { (d[0], d[1]) } else { (dk, dk) };
    let core: Vec<Vec<Dim>> = if compute_uv { vec![vec![d[0], u_columns], vec![dk], vec![vt_rows, d[1]]] } else { vec![vec![dk]] };
    for ((out, t), dims) in node.outputs.iter().zip(&results).zip(core) {
        // The stack's one matrix: its leading dim (1) folded into the next.
        let rank = t.tensor().rank();
        let groups: Vec<Vec<usize>> = std::iter::once(vec![0, 1]).chain((2..rank).map(|a| vec![a])).collect();
        let alone = b.tensor_collapse(t, &groups);
        define(cx, b, *out, &alone, dims);
    }
    Ok(())
}
/// numpy's SVD of each of the matrices of `a3` (count x m x n): the values (count x k),
/// descending, and, with `compute_uv`, U and V^T (count x m x u_columns, count x vt_rows x
/// n). The values alone on the CPU: `bidiagonal_values`. Else one-sided Jacobi (Hestenes): W = A (A^T where A is wide, the same values), its
/// columns rotated pairwise until orthogonal in the round-robin order and number of sweeps
/// of `eigh`, the rotations carried on an identity below it (V): A V = W, the values W's
/// column norms, V's columns the right singular vectors and U's W's columns over their
/// norms (for a wide A, U and V swapped). U's columns where a value is 0, and the m - k
/// beyond with `full_matrices`, complete an orthonormal basis: Q of the Householder QR of
/// [W_1 / s_1, ..., W_r / s_r, 0, ..., 0] (the zero values come last), its column j times
/// the sign of R_jj. Where s_j > 0 that is W_j / s_j to rounding (R = diag(+-1)); where the
/// column is 0 the reflector is the identity and Q's column is orthogonal to the others.
/// Signs are as the rotations leave them, not LAPACK's. On the CPU each kernel is one
/// dispatch, a workgroup a matrix; elsewhere (`count` 1: a Blockwise loops there) the
/// sweeps and the QR are loops of the host program. A NaN anywhere raises numpy's
/// LinAlgError (gesdd refuses a NaN norm); a matrix with an infinity gets NaN results
/// (gesdd's values are then NaN, its U and V^T partly), the others theirs.
pub(super) fn stacked_svd(cx: &mut Context, b: &mut Block, a3: &Value, count: &Value, element: ScalarType, full_matrices: bool, compute_uv: bool) -> Result<Vec<Value>, String> {
    let (m, n) = (b.tensor_dim(a3, 1), b.tensor_dim(a3, 2));
    let flat = b.tensor_collapse(a3, &[vec![0, 1], vec![2]]);
    let nan = any_nan(b, &flat)?;
    let failed = cx.exception("numpy.linalg.LinAlgError");
    cx.add_check(nan, RuntimeCheck { kind: failed, message: "SVD did not converge".into() });
    // Each matrix's infinity (past that check, not finite is infinite).
    let no = b.constant_int(0, ScalarType::I1);
    let init = b.tensor_empty(TensorType::new(vec![None], ScalarType::I1), std::slice::from_ref(count));
    let init = b.linalg_fill(&no, &init);
    let maps = [AffineMap::identity(3), super::linalg::map(3, &[AffineExpr::Dim(0)])];
    let reduced = [IteratorType::Parallel, IteratorType::Reduction, IteratorType::Reduction];
    let infinite = b.linalg_generic(std::slice::from_ref(a3), &[init], &maps, &reduced, |g, args| {
        let size = g.math(MathUnary::AbsF, &args[0]);
        let inf = g.constant_f64(f64::INFINITY, element);
        let bad = g.cmpf(CmpF::Oeq, &size, &inf);
        Ok::<_, String>(vec![g.arith(Arith::OrI, &bad, &args[1])])
    })?[0]
        .clone();
    let tall = b.cmpi(CmpI::Uge, &m, &n);
    let (r, c) = (b.arith(Arith::MaxUI, &m, &n), b.arith(Arith::MinUI, &m, &n));
    let sequential = scalar::has_sequential_kernels();
    // NaN for a matrix with an infinity.
    let nan_where = |g: &mut Block, x: &Value, v: Value| {
        let bad = g.tensor_extract(&infinite, std::slice::from_ref(x));
        let nan = g.constant_f64(f64::NAN, element);
        g.select(&bad, &nan, &v)
    };
    if !compute_uv && sequential {
        return Ok(vec![bidiagonal_values(cx, b, a3, count, (&r, &c), &tall, element, &nan_where)?]);
    }
    // [W; I], W = A or A^T, stacked; without the identity where V is not asked for (the
    // host loop's sweeps expect it always).
    let vectors = compute_uv || !sequential;
    let rows = if vectors { b.arith(Arith::AddI, &r, &c) } else { r.clone() };
    let start = jacobi_start(b, a3, count, (&r, &c, &rows), &tall, element)?;
    // The swept [W; V] of each, transposed: state(x, i, k) = swept[x, k, i].
    let swept = if sequential {
        dense_kernels::jacobi_sweeps_stacked(cx, b, &start, count, &rows, element, most_sweeps(element), vectors)
    } else {
        let state = sweeps(cx, b, &start, &c, element, false)?;
        let t = super::linalg::transposed(b, &state)?;
        b.tensor_expand(&t, &[vec![0, 1], vec![2]], TensorType::new(vec![None; 3], element), &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(c.clone()), IndexArg::Dyn(rows.clone())])
    };
    let norms_init = b.tensor_empty(TensorType::new(vec![None, None], element), &[count.clone(), c.clone()]);
    let rr = r.clone();
    let norms = b.linalg_generic(&[], &[norms_init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (x, k) = (g.linalg_index(0), g.linalg_index(1));
        let (z, o) = (g.constant_index(0), g.constant_index(1));
        let zero = g.constant_f64(0.0, element);
        let sum = g.scf_for(&z, &rr, &o, &[zero], |lp, i, acc| {
            let w = lp.tensor_extract(&swept, &[x.clone(), k.clone(), i.clone()]);
            Ok::<_, String>(vec![lp.fma(&w, &w, &acc[0])])
        })?;
        Ok::<_, String>(vec![g.math(MathUnary::Sqrt, &sum[0])])
    })?[0]
        .clone();
    let norm = |g: &mut Block, x: &[Value], k: &Value| g.tensor_extract(&norms, &[x[0].clone(), k.clone()]);
    let (source, sv) = orders(b, std::slice::from_ref(count), &c, &norm, CmpF::Ogt, element)?;
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[count.clone(), c.clone()]);
    let values = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (x, k) = (g.linalg_index(0), g.linalg_index(1));
        let v = g.tensor_extract(&sv, &[x.clone(), k]);
        Ok::<_, String>(vec![nan_where(g, &x, v)])
    })?[0]
        .clone();
    if !compute_uv {
        return Ok(vec![values]);
    }
    let from = |g: &mut Block, x: &Value, k: &Value| {
        let i = g.tensor_extract(&source, &[x.clone(), k.clone()]);
        g.index_cast(&i, ScalarType::Index)
    };
    // Each [W_k / s_k] (r x c) transposed and stacked, (count c) x r, for the QR kernels.
    let all_c = b.arith(Arith::MulI, count, &c);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[all_c, r.clone()]);
    let cc = c.clone();
    let scaled_t = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (row, i) = (g.linalg_index(0), g.linalg_index(1));
        let (x, k) = (g.arith(Arith::DivUI, &row, &cc), g.arith(Arith::RemUI, &row, &cc));
        let src = from(g, &x, &k);
        let w = g.tensor_extract(&swept, &[x.clone(), src, i]);
        let s = g.tensor_extract(&sv, &[x, k]);
        let u = g.arith(Arith::DivF, &w, &s);
        let zero = g.constant_f64(0.0, element);
        let positive = g.cmpf(CmpF::Ogt, &s, &zero);
        Ok::<_, String>(vec![g.select(&positive, &u, &zero)])
    })?[0]
        .clone();
    let columns = if full_matrices { r.clone() } else { c.clone() };
    let (wt, qt) = if sequential {
        let wt = dense_kernels::qr_reflectors_stacked(cx, b, &scaled_t, count, &c, element);
        let qt = dense_kernels::qr_accumulate_stacked(cx, b, &wt, count, &c, &c, &columns, element);
        (wt, qt)
    } else {
        let scaled = super::linalg::transposed(b, &scaled_t)?;
        let w = qr::reflectors(cx, b, &scaled, element)?;
        let q = qr::accumulate(cx, b, &w, &r, &c, &c, &columns)?;
        (super::linalg::transposed(b, &w)?, super::linalg::transposed(b, &q)?)
    };
    let one = b.constant_index(1);
    let c1 = b.arith(Arith::AddI, &c, &one);
    let cube = TensorType::new(vec![None; 3], element);
    let wt = b.tensor_expand(&wt, &[vec![0, 1], vec![2]], cube.clone(), &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(c1), IndexArg::Dyn(r.clone())]);
    let qt = b.tensor_expand(&qt, &[vec![0, 1], vec![2]], cube, &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(columns), IndexArg::Dyn(r.clone())]);
    // U's columns from Q (r x columns) times sign(R_jj) for j < c (R_jj = w_jj = wt_jj, read
    // at clamped indices beyond); V's columns in the values' order.
    let u_w = |g: &mut Block, x: &Value, i: &Value, j: &Value| {
        let v = g.tensor_extract(&qt, &[x.clone(), j.clone(), i.clone()]);
        let one = g.constant_index(1);
        let last = g.arith(Arith::SubI, &r, &one);
        let (row, column) = (g.arith(Arith::MinUI, j, &c), g.arith(Arith::MinUI, j, &last));
        let rjj = g.tensor_extract(&wt, &[x.clone(), row, column]);
        let zero = g.constant_f64(0.0, element);
        let negative = g.cmpf(CmpF::Olt, &rjj, &zero);
        let inside = g.cmpi(CmpI::Ult, j, &c);
        let flip = g.arith(Arith::AndI, &negative, &inside);
        let minus = g.negf(&v);
        g.select(&flip, &minus, &v)
    };
    let v_sorted = |g: &mut Block, x: &Value, i: &Value, k: &Value| {
        let src = from(g, x, k);
        let row = g.arith(Arith::AddI, &r, i);
        g.tensor_extract(&swept, &[x.clone(), src, row])
    };
    let k = b.arith(Arith::MinUI, &m, &n);
    let (u_columns, vt_rows) = if full_matrices { (m.clone(), n.clone()) } else { (k.clone(), k) };
    // A tall: U from W, V^T from V; wide: the other way round (an element read from the
    // one picked only: the other may be smaller).
    let picked = |b: &mut Block, (rows, cols): (&Value, &Value), transposed: bool| -> Result<Value, String> {
        let init = b.tensor_empty(TensorType::new(vec![None; 3], element), &[count.clone(), rows.clone(), cols.clone()]);
        Ok(b.linalg_generic(&[], &[init], &[AffineMap::identity(3)], &[IteratorType::Parallel; 3], |g, _| {
            let (x, i, j) = (g.linalg_index(0), g.linalg_index(1), g.linalg_index(2));
            let (i, j) = if transposed { (j, i) } else { (i, j) };
            let v = g.scf_if(&tall, &[element], |t| vec![if transposed { v_sorted(t, &x, &i, &j) } else { u_w(t, &x, &i, &j) }], |e| {
                vec![if transposed { u_w(e, &x, &i, &j) } else { v_sorted(e, &x, &i, &j) }]
            });
            Ok::<_, String>(vec![nan_where(g, &x, v[0].clone())])
        })?[0]
            .clone())
    };
    let u = picked(b, (&m, &u_columns), false)?;
    let vt = picked(b, (&vt_rows, &n), true)?;
    Ok(vec![u, values, vt])
}

/// The singular values alone of each of `count` matrices of `a3` (count x m x n) on the
/// CPU, descending (count x c): W = A or A^T (r x c, r >= c), its bidiagonal's values by
/// the Golub-Kahan tridiagonal's eigenvalues in one dispatch
/// (`dense_kernels::bidiagonal_singular_values`). `nan_where` puts NaN in a matrix with an
/// infinity.
fn bidiagonal_values(
    cx: &mut Context,
    b: &mut Block,
    a3: &Value,
    count: &Value,
    (r, c): (&Value, &Value),
    tall: &Value,
    element: ScalarType,
    nan_where: &dyn Fn(&mut Block, &Value, Value) -> Value,
) -> Result<Value, String> {
    // W^T stacked, (count c) x r: row j of matrix x is W's column j.
    let all_c = b.arith(Arith::MulI, count, c);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[all_c, r.clone()]);
    let cc = c.clone();
    let wt = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (row, i) = (g.linalg_index(0), g.linalg_index(1));
        let (x, j) = (g.arith(Arith::DivUI, &row, &cc), g.arith(Arith::RemUI, &row, &cc));
        // W = A (tall) or A^T: W[i, j] = A[i, j] or A[j, i].
        let v = g.scf_if(tall, &[element], |t| vec![t.tensor_extract(a3, &[x.clone(), i.clone(), j.clone()])], |e| {
            vec![e.tensor_extract(a3, &[x.clone(), j.clone(), i.clone()])]
        });
        Ok::<_, String>(vec![v[0].clone()])
    })?[0]
        .clone();
    let out = dense_kernels::bidiagonal_singular_values(cx, b, &wt, count, c, element);
    let extra = b.constant_index(dense_kernels::BIDIAGONAL_EXTRA_ROWS);
    let rows = b.arith(Arith::AddI, c, &extra);
    let (cc, rr) = (c.clone(), rows.clone());
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[count.clone(), c.clone()]);
    Ok(b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (x, k) = (g.linalg_index(0), g.linalg_index(1));
        // Matrix x's k-th value at (c + BIDIAGONAL_VALUES_ROW, k) of its rows. (Read as
        // (row, 2k), IREE's vectorizer took the index k + k for a contiguous one: it read
        // elements k.)
        let offset = g.constant_index(dense_kernels::BIDIAGONAL_VALUES_ROW);
        let first = g.arith(Arith::MulI, &x, &rr);
        let row = g.arith(Arith::AddI, &first, &cc);
        let row = g.arith(Arith::AddI, &row, &offset);
        let v = g.tensor_extract(&out, &[row, k]);
        Ok::<_, String>(vec![nan_where(g, &x, v)])
    })?[0]
        .clone())
}

/// One-sided Jacobi's start for each matrix of `a3` (count x m x n), stacked ((count rows)
/// x c): W = A where `tall`, else A^T (r x c, r = max(m, n), c = min(m, n)), and below it,
/// where `rows` is r + c, the c x c identity (V's start).
fn jacobi_start(b: &mut Block, a3: &Value, count: &Value, (r, c, rows): (&Value, &Value, &Value), tall: &Value, element: ScalarType) -> Result<Value, String> {
    let all_rows = b.arith(Arith::MulI, count, rows);
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[all_rows, c.clone()]);
    Ok(b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (row, j) = (g.linalg_index(0), g.linalg_index(1));
        let which = g.arith(Arith::DivUI, &row, rows);
        let i = g.arith(Arith::RemUI, &row, rows);
        let in_w = g.cmpi(CmpI::Ult, &i, r);
        let o = g.constant_index(1);
        let last = g.arith(Arith::SubI, r, &o);
        let wi = g.arith(Arith::MinUI, &i, &last);
        let (ai, aj) = (g.select(tall, &wi, &j), g.select(tall, &j, &wi));
        let v = g.tensor_extract(a3, &[which, ai, aj]);
        let vi = g.arith(Arith::SubI, &i, r);
        let on_diagonal = g.cmpi(CmpI::Eq, &vi, &j);
        let (z, o) = (g.constant_f64(0.0, element), g.constant_f64(1.0, element));
        let id = g.select(&on_diagonal, &o, &z);
        Ok::<_, String>(vec![g.select(&in_w, &v, &id)])
    })?[0]
        .clone())
}

/// One-sided Jacobi's result (`one_sided`).
struct OneSided {
    /// [W; V] (r x c over c x c) after the sweeps; W alone where V was not asked for.
    state: Value,
    /// max(m, n) and min(m, n).
    r: Value,
    c: Value,
    /// m >= n: W = A V; else W = A^T V.
    tall: Value,
    /// W's column norms (the singular values, in no order).
    norms: Value,
    /// Whether A holds an infinity (a rank-0 i8): then gesdd's values are all NaN.
    infinite: Value,
}

/// One-sided Jacobi (Hestenes) on W = A (A^T where A is wide, the same values): W's
/// columns rotated pairwise until orthogonal, in the round-robin order and number of
/// sweeps of `eigh`, the rotations carried on an identity below it (V). A NaN raises
/// numpy's LinAlgError (LAPACK's gesdd refuses a NaN norm); an infinity (no NaN) does not
/// (`infinite`: gesdd scales by it and its values come out NaN). `check_nan` false: the
/// caller has checked A (the check cannot be made in a loop of the host program).
fn one_sided(cx: &mut Context, b: &mut Block, a: &Value, element: ScalarType, check_nan: bool, vectors: bool) -> Result<OneSided, String> {
    if check_nan {
        let nan = any_nan(b, a)?;
        let failed = cx.exception("numpy.linalg.LinAlgError");
        cx.add_check(nan, RuntimeCheck { kind: failed, message: "SVD did not converge".into() });
    }
    // Past that check, not finite is infinite.
    let infinite = any_not_finite(b, a)?;
    let (m, n) = (b.tensor_dim(a, 0), b.tensor_dim(a, 1));
    let tall = b.cmpi(CmpI::Uge, &m, &n);
    let (r, c) = (b.arith(Arith::MaxUI, &m, &n), b.arith(Arith::MinUI, &m, &n));
    // [W; I]: W = A, or A^T where A is wide; under it the identity, where V is asked
    // for (always on GPUs, whose sweeps expect it).
    let vectors = vectors || !scalar::has_sequential_kernels();
    let rows = if vectors { b.arith(Arith::AddI, &r, &c) } else { r.clone() };
    let one = b.constant_index(1);
    let a3 = b.tensor_expand(a, &[vec![0, 1], vec![2]], TensorType::new(vec![None; 3], element), &[IndexArg::Dyn(one.clone()), IndexArg::Dyn(m), IndexArg::Dyn(n)]);
    let start = jacobi_start(b, &a3, &one, (&r, &c, &rows), &tall, element)?;
    let state = if vectors { sweeps(cx, b, &start, &c, element, false)? } else { dense_kernels::jacobi_sweeps(cx, b, &start, &c, element, most_sweeps(element), false) };
    let norms_init = b.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(&c));
    let rr = r.clone();
    let norms = b.linalg_generic(&[], &[norms_init], &[AffineMap::identity(1)], &[IteratorType::Parallel], |g, _| {
        let k = g.linalg_index(0);
        let (z, o) = (g.constant_index(0), g.constant_index(1));
        let zero = g.constant_f64(0.0, element);
        let sum = g.scf_for(&z, &rr, &o, &[zero], |lp, i, acc| {
            let w = lp.tensor_extract(&state, &[i.clone(), k.clone()]);
            Ok::<_, String>(vec![lp.fma(&w, &w, &acc[0])])
        })?;
        Ok::<_, String>(vec![g.math(MathUnary::Sqrt, &sum[0])])
    })?[0]
        .clone();
    Ok(OneSided { state, r, c, tall, norms, infinite })
}

/// Whether any element of the matrix `m` is NaN (a rank-0 `i8`, 1 where so).
fn any_nan(b: &mut Block, m: &Value) -> Result<Value, String> {
    let none = b.constant_int(0, ScalarType::I8);
    let flag = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
    let init = b.linalg_fill(&none, &flag);
    let maps = [AffineMap::identity(2), super::linalg::map(2, &[])];
    let r = b.linalg_generic(&[m.clone()], &[init], &maps, &[IteratorType::Reduction; 2], |g, args| {
        let nan = g.cmpf(CmpF::Uno, &args[0], &args[0]);
        let (no, yes) = (g.constant_int(0, ScalarType::I8), g.constant_int(1, ScalarType::I8));
        let flag = g.select(&nan, &yes, &no);
        Ok::<_, String>(vec![g.arith(Arith::OrI, &flag, &args[1])])
    })?;
    Ok(r[0].clone())
}

/// The (a_pp, a_qq, a_pq) a rotation in the plane (p, q) is computed from.
type Gram<'a> = dyn Fn(&mut Block, &Value, &Value) -> (Value, Value, Value) + 'a;

/// One round of rotations: `two_sided`, on [A; V] (2n x n), A' = J^T A J and V' = V J;
/// else on [W; V] ((rows - n) x n over n x n), W' = W J and V' = V J with J from W's
/// columns' Gram matrix (one-sided Jacobi). J: the rotations of round `round` in the
/// round-robin order of `m` slots. Each index's (a_k, b_k) is computed once, by a kernel
/// of n lanes, then read by every element.
fn rotate(b: &mut Block, s: &Value, n: &Value, m: &Value, round: &Value, element: ScalarType, two_sided: bool) -> Result<Value, String> {
    let coef_init = b.tensor_empty(TensorType::new(vec![None, Some(2)], element), std::slice::from_ref(n));
    let rows = b.tensor_dim(s, 0);
    let columns_gram = |g: &mut Block, p: &Value, q: &Value| column_products(g, s, &rows, p, q, element);
    let entries = |g: &mut Block, p: &Value, q: &Value| {
        let at = |g: &mut Block, x: &Value, y: &Value| g.tensor_extract(s, &[x.clone(), y.clone()]);
        (at(g, p, p), at(g, q, q), at(g, p, q))
    };
    let gram: &Gram = if two_sided { &entries } else { &columns_gram };
    let coefs = b.linalg_generic(&[], &[coef_init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (k, which) = (g.linalg_index(0), g.linalg_index(1));
        let (ak, bk, _) = plane(g, n, m, round, &k, element, gram);
        let z = g.constant_index(0);
        let first = g.cmpi(CmpI::Eq, &which, &z);
        Ok::<_, String>(vec![g.select(&first, &ak, &bk)])
    })?[0]
        .clone();
    let init = b.tensor_empty(TensorType::new(vec![None, None], element), &[rows.clone(), n.clone()]);
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(2)], &[IteratorType::Parallel; 2], |g, _| {
        let (r, j) = (g.linalg_index(0), g.linalg_index(1));
        let coef = |g: &mut Block, k: &Value| {
            let (z, o) = (g.constant_index(0), g.constant_index(1));
            let a = g.tensor_extract(&coefs, &[k.clone(), z]);
            let bb = g.tensor_extract(&coefs, &[k.clone(), o]);
            let p = resting_partner(g, n, m, round, k);
            (a, bb, p)
        };
        let (aj, bj, pj) = coef(g, &j);
        // Rotated columns (V, or SVD's W and V): row r, columns j and its partner.
        let v1 = g.tensor_extract(s, &[r.clone(), j.clone()]);
        let v2 = g.tensor_extract(s, &[r.clone(), pj.clone()]);
        let right = g.arith(Arith::MulF, &aj, &v1);
        let right = g.fma(&bj, &v2, &right);
        if !two_sided {
            return Ok(vec![right]);
        }
        // A's rows (r < n) rotate on both sides: rows i and its partner, columns j and its.
        let in_a = g.cmpi(CmpI::Ult, &r, n);
        let i = g.arith(Arith::RemUI, &r, n);
        let (ai, bi, pi) = coef(g, &i);
        let at = |g: &mut Block, x: &Value, y: &Value| g.tensor_extract(s, &[x.clone(), y.clone()]);
        let (x11, x12, x21, x22) = (at(g, &i, &j), at(g, &i, &pj), at(g, &pi, &j), at(g, &pi, &pj));
        let left = {
            let u = g.arith(Arith::MulF, &aj, &x11);
            let u = g.fma(&bj, &x12, &u);
            let w = g.arith(Arith::MulF, &aj, &x21);
            let w = g.fma(&bj, &x22, &w);
            let u = g.arith(Arith::MulF, &ai, &u);
            g.fma(&bi, &w, &u)
        };
        Ok::<_, String>(vec![g.select(&in_a, &left, &right)])
    })?;
    Ok(r[0].clone())
}

/// k's partner in round `round`, or k itself where the partner is the dummy slot.
fn resting_partner(g: &mut Block, n: &Value, m: &Value, round: &Value, k: &Value) -> Value {
    let partner = partner(g, m, round, k);
    let real = g.cmpi(CmpI::Ult, &partner, n);
    g.select(&real, &partner, k)
}

/// For index `k` in round `round`: (a_k, b_k, partner) with column k of J equal to a_k e_k
/// + b_k e_partner; (1, 0, k) where k's partner is the dummy slot or its plane is already
/// diagonal.
/// `gram(p, q)` gives (a_pp, a_qq, a_pq) of the symmetric matrix the rotation diagonalizes
/// (A itself, or the Gram matrix of SVD's columns).
fn plane(g: &mut Block, n: &Value, m: &Value, round: &Value, k: &Value, element: ScalarType, gram: &Gram) -> (Value, Value, Value) {
    // A dummy partner reads k's own plane (a valid index), and rests.
    let pk = resting_partner(g, n, m, round, k);
    let (p, q) = (g.arith(Arith::MinUI, k, &pk), g.arith(Arith::MaxUI, k, &pk));
    let (app, aqq, apq) = gram(g, &p, &q);
    let (c, sn) = rotation(g, &app, &aqq, &apq, element);
    // No rotation where k has no partner.
    let alone = g.cmpi(CmpI::Eq, &p, &q);
    let (one, zero) = (g.constant_f64(1.0, element), g.constant_f64(0.0, element));
    let c = g.select(&alone, &one, &c);
    let sn = g.select(&alone, &zero, &sn);
    let is_p = g.cmpi(CmpI::Eq, k, &p);
    let minus_s = g.negf(&sn);
    let bk = g.select(&is_p, &minus_s, &sn);
    (c, bk, pk)
}

/// The rotation (c, s), J = [[c, s], [-s, c]] in the plane (p, q), that makes a_pq of
/// J^T A J zero: t = s / c the smaller root of t^2 + 2 theta t - 1 = 0, theta = (a_qq -
/// a_pp) / (2 a_pq), 1 / (2 theta) where theta^2 would overflow; (1, 0) where the plane is
/// diagonal already.
pub(super) fn rotation(g: &mut Block, app: &Value, aqq: &Value, apq: &Value, element: ScalarType) -> (Value, Value) {
    let zero = g.constant_f64(0.0, element);
    let one = g.constant_f64(1.0, element);
    let diff = g.arith(Arith::SubF, aqq, app);
    let two_apq = g.arith(Arith::AddF, apq, apq);
    let theta = g.arith(Arith::DivF, &diff, &two_apq);
    let size = g.math(MathUnary::AbsF, &theta);
    let big = g.constant_f64(if element == ScalarType::F64 { 1e150 } else { 1e18 }, element);
    let huge = g.cmpf(CmpF::Ogt, &size, &big);
    let safe = g.select(&huge, &zero, &theta);
    let sq = g.fma(&safe, &safe, &one);
    let root = g.math(MathUnary::Sqrt, &sq);
    let den = g.arith(Arith::AddF, &size, &root);
    let t = g.arith(Arith::DivF, &one, &den);
    let half = g.constant_f64(0.5, element);
    let t_far = g.arith(Arith::DivF, &half, &size);
    let t = g.select(&huge, &t_far, &t);
    let t = g.copysign(&t, &theta);
    let tt = g.fma(&t, &t, &one);
    let root_tt = g.math(MathUnary::Sqrt, &tt);
    let c = g.arith(Arith::DivF, &one, &root_tt);
    let sn = g.arith(Arith::MulF, &t, &c);
    let rests = g.cmpf(CmpF::Oeq, apq, &zero);
    (g.select(&rests, &one, &c), g.select(&rests, &zero, &sn))
}

/// k's partner in round `round` of the round-robin order of `m` slots (m even): slot 0 is
/// fixed, slots 1..m turn; position x (0 <= x < m) holds slot 0 at x = 0, else
/// 1 + (x - 1 + round) mod (m - 1); positions x and m - 1 - x are partners.
fn partner(g: &mut Block, m: &Value, round: &Value, k: &Value) -> Value {
    let (zero, one) = (g.constant_index(0), g.constant_index(1));
    let m1 = g.arith(Arith::SubI, m, &one);
    let ring = g.arith(Arith::MaxSI, &m1, &one);
    // k's position: 0 for slot 0, else 1 + (k - 1 - round) mod (m - 1).
    let k1 = g.arith(Arith::SubI, k, &one);
    let back = g.arith(Arith::SubI, &k1, round);
    let back = g.arith(Arith::AddI, &back, &ring);
    let back = g.arith(Arith::RemSI, &back, &ring);
    let pos = g.arith(Arith::AddI, &back, &one);
    let is_fixed = g.cmpi(CmpI::Eq, k, &zero);
    let pos = g.select(&is_fixed, &zero, &pos);
    // The partner's position, and the slot there.
    let other = g.arith(Arith::SubI, &m1, &pos);
    let o1 = g.arith(Arith::SubI, &other, &one);
    let fwd = g.arith(Arith::AddI, &o1, round);
    let fwd = g.arith(Arith::RemSI, &fwd, &ring);
    let slot = g.arith(Arith::AddI, &fwd, &one);
    let at_fixed = g.cmpi(CmpI::Eq, &other, &zero);
    g.select(&at_fixed, &zero, &slot)
}

/// (|w_p|^2, |w_q|^2, w_p . w_q) of columns p and q of W, the first `rows - n` rows of
/// `s` (V's rows under it are not part of it).
fn column_products(g: &mut Block, s: &Value, rows: &Value, p: &Value, q: &Value, element: ScalarType) -> (Value, Value, Value) {
    let n = g.tensor_dim(s, 1);
    let w_rows = g.arith(Arith::SubI, rows, &n);
    let (z, o) = (g.constant_index(0), g.constant_index(1));
    let zero = g.constant_f64(0.0, element);
    let r = g
        .scf_for(&z, &w_rows, &o, &[zero.clone(), zero.clone(), zero], |lp, i, acc| {
            let wp = lp.tensor_extract(s, &[i.clone(), p.clone()]);
            let wq = lp.tensor_extract(s, &[i.clone(), q.clone()]);
            Ok::<_, String>(vec![lp.fma(&wp, &wp, &acc[0]), lp.fma(&wq, &wq, &acc[1]), lp.fma(&wp, &wq, &acc[2])])
        })
        .expect("the products' loop cannot fail");
    (r[0].clone(), r[1].clone(), r[2].clone())
}
