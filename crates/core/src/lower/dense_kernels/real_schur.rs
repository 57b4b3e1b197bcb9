//! The real Schur form A = Z T Z^T of a square matrix as one dispatch (llvm-cpu):
//! Householder reduction to upper Hessenberg form, then Francis' implicit double-shift QR
//! steps (Golub & Van Loan 7.4-7.5) until every subdiagonal element is negligible or
//! belongs to a 2 x 2 block of a complex pair, each such block put in the standard form
//! LAPACK's dlanv2 gives (equal diagonal, off-diagonal elements of opposite signs; a
//! 2 x 2 block with real eigenvalues made upper triangular). That is LAPACK's route for
//! the matrices PyTensor graphs hold (dgees: dgehrd, dorghr, then dhseqr, which calls
//! dlahqr below order 75). The eigenvalues may come out in another order on T's diagonal
//! than LAPACK's, and Z's columns with other signs: both forms are Schur forms of A.
//!
//! The kernel works on [T; Z^T; v; w] (rows of n): T's rows, Z^T's (so that every
//! reflector and rotation acting on Z's columns acts on contiguous rows), and two rows of
//! scratch for the Hessenberg step's reflector v and its products w. The matrix is scaled
//! by a power of two first (exactly), so that its largest element is in [1, 2): the
//! double shift's first column squares elements, which would overflow past 1e154 or
//! underflow below 1e-154 unscaled.

mod reorder;

pub(in crate::lower) use reorder::Sort;

use super::{add_multiple, copied_from, deflating, last_where, shifts, minus_dot, reflector, region, region_parts, rotate, transpose_in_place, turn, Flat};
use crate::lower::Context;
use crate::lower::qr::lapy2;
use crate::mlir::{Arith, Block, Cast, CmpF, CmpI, IndexArg, MathUnary, ScalarType, TensorType, Value};

/// Francis steps in all before the kernel gives up, per row (dlahqr allows 30 max(10, n)
/// in all): T and Z are then NaN, as PyTensor reports gees' failure.
const STEPS_PER_ROW: i64 = 30;


/// (T, Z) of the n x n matrix `a`: A = Z T Z^T, T in real Schur form (the eigenvalues
/// `sort` selects first, where given), Z orthogonal; both NaN where `a` has a NaN or an
/// infinity, the QR steps ran out or a reordering swap was refused.
pub(in crate::lower) fn real_schur(cx: &mut Context, b: &mut Block, a: &Value, element: ScalarType, sort: Option<Sort>) -> (Value, Value) {
    let n = b.tensor_dim(a, 0);
    let rows = kernel_rows(b, &n);
    let out = region(cx, b, element, (&rows, &n), &[a], &[], |k, m, _| {
        let total = kernel_rows(k, &m[0].cols);
        let begin = Flat::start(k, element, &total, &m[0].cols);
        body(k, &m[0], element, sort, begin)
    });
    // T's rows, then Z's.
    let [t, z] = [IndexArg::Const(0), IndexArg::Dyn(n.clone())].map(|at| {
        let square = [IndexArg::Dyn(n.clone()), IndexArg::Dyn(n.clone())];
        b.tensor_extract_slice(&out, &[at, IndexArg::Const(0)], &square)
    });
    (t, z)
}

/// [`real_schur`] of each of `count` n x n matrices stacked in `a` ((count n) x n), one
/// workgroup a matrix: their T and Z as count x n x n tensors.
pub(in crate::lower) fn real_schurs(cx: &mut Context, b: &mut Block, a: &Value, count: &Value, element: ScalarType, sort: Option<Sort>) -> (Value, Value) {
    let n = b.tensor_dim(a, 1);
    let rows = kernel_rows(b, &n);
    let out = region_parts(cx, b, element, count, (&rows, &n), &[a], &[], |k, m, _, begin| body(k, &m[0], element, sort, begin));
    let shape = TensorType::new(vec![None, None, None], element);
    let out = b.tensor_expand(&out, &[vec![0, 1], vec![2]], shape, &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(rows), IndexArg::Dyn(n.clone())]);
    let [t, z] = [IndexArg::Const(0), IndexArg::Dyn(n.clone())].map(|at| {
        let cube = [IndexArg::Dyn(count.clone()), IndexArg::Dyn(n.clone()), IndexArg::Dyn(n.clone())];
        b.tensor_extract_slice(&out, &[IndexArg::Const(0), at, IndexArg::Const(0)], &cube)
    });
    (t, z)
}

/// The kernel's rows: T's n, then Z's (Z^T transposed in place), then two of scratch.
fn kernel_rows(b: &mut Block, n: &Value) -> Value {
    let two = b.constant_index(2);
    let rows = b.arith(Arith::AddI, n, &two);
    b.arith(Arith::AddI, &rows, n)
}

/// The kernel of the matrix `a` (n x n, where its Flat says) into `begin` (not yet
/// written): [T; Z; scratch].
fn body(k: &mut Block, a: &Flat, element: ScalarType, sort: Option<Sort>, begin: Value) -> Value {
    let n = a.cols.clone();
    let (zero, one) = (k.constant_index(0), k.constant_index(1));
    let size = k.arith(Arith::MulI, &n, &n);
    let from = a.base.clone().unwrap_or_else(|| zero.clone());
    let data = copied_from(k, &a.data, &from, &size, begin);
    // Z^T = I to start.
    let (zero_f, one_f) = (k.constant_f64(0.0, element), k.constant_f64(1.0, element));
    let eye = k
        .scf_for(&zero, &n, &one, &[data], |h, i, d| {
            h.scf_for(&zero, &n, &one, d, |e, j, d| {
                let on = e.cmpi(CmpI::Eq, i, j);
                let v = e.select(&on, &one_f, &zero_f);
                let row = e.arith(Arith::AddI, &n, i);
                Ok::<_, String>(vec![Flat::result(&d[0], &n).set(e, &v, &row, j)])
            })
        })
        .unwrap_or_else(|e: String| unreachable!("{e}"));
    Schur { n, element, sort }.run(k, eye[0].clone())
}

/// The kernel's sizes.
struct Schur {
    n: Value,
    element: ScalarType,
    sort: Option<Sort>,
}

impl Schur {
    fn matrix(&self, data: &Value) -> Flat {
        Flat::result(data, &self.n)
    }

    fn constant(&self, g: &mut Block, v: f64) -> Value {
        g.constant_f64(v, self.element)
    }

    fn index(&self, g: &mut Block, rows_of_n: i64, plus: i64) -> Value {
        let k = g.constant_index(rows_of_n);
        let at = g.arith(Arith::MulI, &self.n, &k);
        let p = g.constant_index(plus);
        g.arith(Arith::AddI, &at, &p)
    }

    /// The kernel's body on `data` ([A; I; scratch] copied): [T; Z^T; scratch], T
    /// quasi-triangular (zeros below its subdiagonal), or T and Z^T NaN where A has a
    /// non-finite element (PyTensor's perform) or the steps ran out. (The check is the
    /// scaling's largest size, NaN or infinite: no kernels of its own.)
    fn run(&self, g: &mut Block, data: Value) -> Value {
        let (data, back, not_finite) = self.scaled(g, data);
        let data = self.hessenberg(g, data);
        let (data, ran_out) = self.iterate(g, data);
        let failed = g.arith(Arith::OrI, &ran_out, &not_finite);
        let (data, failed) = match self.sort {
            Some(sort) => {
                let (data, refused) = self.reorder(g, data, sort, &back);
                (data, g.arith(Arith::OrI, &failed, &refused))
            }
            None => (data, failed),
        };
        let data = self.finish(g, data, &back, &failed);
        let square = g.arith(Arith::MulI, &self.n, &self.n);
        transpose_in_place(g, &self.matrix(&data).at(&square), &self.n)
    }

    /// T scaled by a power of two ([`scaled_by_power`] over its n x n elements).
    fn scaled(&self, g: &mut Block, data: Value) -> (Value, [Value; 2], Value) {
        let zero = g.constant_index(0);
        let size = g.arith(Arith::MulI, &self.n, &self.n);
        scaled_by_power(g, data, (&zero, &size), self.element)
    }

    /// Steps k = 0 .. n - 3: the reflector H_k of T's column k below row k + 1 (v in the
    /// scratch row, its leading 1 at column k + 1), T <- H_k T H_k, Z^T <- H_k Z^T.
    fn hessenberg(&self, g: &mut Block, data: Value) -> Value {
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let n = self.n.clone();
        let v_row = self.index(g, 2, 0);
        let less = g.arith(Arith::SubI, &n, &two);
        let steps = g.arith(Arith::MaxSI, &less, &zero);
        let r = g
            .scf_for(&zero, &steps, &one, &[data], |h, k, d| {
                let next = h.arith(Arith::AddI, k, &one);
                let from = h.arith(Arith::AddI, k, &two);
                // Column k below the diagonal into the v row.
                let copied = h.scf_for(&next, &n, &one, d, |e, i, d| {
                    let t = self.matrix(&d[0]);
                    let x = t.get(e, i, k);
                    Ok::<_, String>(vec![t.set(e, &x, &v_row, i)])
                })?;
                let t = self.matrix(&copied[0]);
                let (data, beta, tau) = reflector(h, &t, &v_row, &next, (&from, &n), self.element);
                let t = self.matrix(&data);
                let data = t.set(h, &beta, &next, k);
                let zero_f = self.constant(h, 0.0);
                let cleared = h.scf_for(&from, &n, &one, &[data], |e, i, d| Ok::<_, String>(vec![self.matrix(&d[0]).set(e, &zero_f, i, k)]))?;
                let applies = h.cmpf(CmpF::Une, &tau, &zero_f);
                let (ty, kept) = (cleared[0].ty().clone(), cleared.clone());
                Ok(h.scf_if_values(&applies, std::slice::from_ref(&ty), |q| vec![self.hessenberg_update(q, &cleared[0], k, &tau)], |_| kept))
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        r[0].clone()
    }

    /// T <- H T H past column k (H = I - tau (1, v)(1, v)^T on rows k + 1 ..), and Z^T <- H Z^T.
    fn hessenberg_update(&self, g: &mut Block, data: &Value, k: &Value, tau: &Value) -> Value {
        let one = g.constant_index(1);
        let n = self.n.clone();
        let zero = g.constant_index(0);
        let next = g.arith(Arith::AddI, k, &one);
        let t_rows = g.constant_index(0);
        let left = self.reflect_left(g, data.clone(), &t_rows, (&next, &n), tau, (&next, &n));
        let z_rows = n.clone();
        let left = self.reflect_left(g, left, &z_rows, (&next, &n), tau, (&zero, &n));
        self.reflect_right(g, left, (&zero, &n), &next, tau)
    }

    /// Rows [first, end) of the matrix starting at row `base` (T's 0, Z^T's n) times H = I -
    /// tau (1, v)(1, v)^T from the left, over columns [from, to): w = row_first + sum_i
    /// v_i row_i into the w row, then each row less tau v_i w (v_first = 1).
    fn reflect_left(&self, g: &mut Block, data: Value, base: &Value, (first, end): (&Value, &Value), tau: &Value, (from, to): (&Value, &Value)) -> Value {
        let one = g.constant_index(1);
        let (v_row, w_row) = (self.index(g, 2, 0), self.index(g, 2, 1));
        let head = g.arith(Arith::AddI, base, first);
        let after = g.arith(Arith::AddI, first, &one);
        // w = row `first`, then plus v_i row i.
        let started = g
            .scf_for(from, to, &one, &[data], |h, j, d| {
                let t = self.matrix(&d[0]);
                let x = t.get(h, &head, j);
                Ok::<_, String>(vec![t.set(h, &x, &w_row, j)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let summed = g
            .scf_for(&after, end, &one, &started, |h, i, d| {
                let t = self.matrix(&d[0]);
                let v_i = t.get(h, &v_row, i);
                let row = h.arith(Arith::AddI, base, i);
                Ok::<_, String>(vec![add_multiple(h, &t, &w_row, &v_i, &|f, cur, j| cur.get(f, &row, j), (from, to))])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let minus_tau = g.negf(tau);
        let w = |f: &mut Block, cur: &Flat, j: &Value| cur.get(f, &w_row, j);
        let t = self.matrix(&summed[0]);
        let headed = add_multiple(g, &t, &head, &minus_tau, &w, (from, to));
        let r = g
            .scf_for(&after, end, &one, &[headed], |h, i, d| {
                let t = self.matrix(&d[0]);
                let v_i = t.get(h, &v_row, i);
                let factor = h.arith(Arith::MulF, &minus_tau, &v_i);
                let row = h.arith(Arith::AddI, base, i);
                Ok::<_, String>(vec![add_multiple(h, &t, &row, &factor, &w, (from, to))])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    }

    /// T's rows [from, to) times H from the right (H's v in the v row from column `first`,
    /// its 1 there): w_r = t_r,first + sum_i t_r,i v_i, then t_r,first - tau w_r and
    /// t_r,i - tau w_r v_i.
    fn reflect_right(&self, g: &mut Block, data: Value, (from, to): (&Value, &Value), first: &Value, tau: &Value) -> Value {
        let one = g.constant_index(1);
        let n = self.n.clone();
        let v_row = self.index(g, 2, 0);
        let after = g.arith(Arith::AddI, first, &one);
        let count = g.arith(Arith::SubI, &n, &after);
        let minus_tau = g.negf(tau);
        let r = g
            .scf_for(from, to, &one, &[data], |h, r, d| {
                let t = self.matrix(&d[0]);
                let head = t.get(h, r, first);
                // head + sum t_r,i v_i, as head - sum (-t_r,i) v_i.
                let w = minus_dot(h, &count, &head, &|f, c| {
                    let i = f.arith(Arith::AddI, &after, c);
                    let x = t.get(f, r, &i);
                    (f.negf(&x), t.get(f, &v_row, &i))
                });
                let step = h.arith(Arith::MulF, &minus_tau, &w);
                let new_head = h.arith(Arith::AddF, &head, &step);
                let d = t.set(h, &new_head, r, first);
                Ok::<_, String>(vec![add_multiple(h, &self.matrix(&d), r, &step, &|f, cur, i| cur.get(f, &v_row, i), (&after, &n))])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    }

    /// The QR steps (`deflating`: rows [0, top) still to be reduced). Each pass finds the start l of the unreduced block
    /// ending at h = top - 1, then deflates a 1 x 1 block (l = h), standardizes a 2 x 2 one
    /// (l = h - 1), or takes a Francis step on [l, h]. Returns the data and whether the
    /// steps ran out.
    fn iterate(&self, g: &mut Block, data: Value) -> (Value, Value) {
        deflating(g, data, &self.n, STEPS_PER_ROW, &|c, data, h, its| {
            let (zero, one, two) = (c.constant_index(0), c.constant_index(1), c.constant_index(2));
            let (data, l) = self.block_start(c, data, h);
            let single = c.cmpi(CmpI::Eq, &l, h);
            let h_less = c.arith(Arith::SubI, h, &one);
            let pair = c.cmpi(CmpI::Eq, &l, &h_less);
            let deflated = c.arith(Arith::OrI, &single, &pair);
            let ty = data.ty().clone();
            let next = c.scf_if_values(
                &deflated,
                std::slice::from_ref(&ty),
                |q| vec![q.scf_if_values(&pair, std::slice::from_ref(&ty), |p| vec![self.standardize(p, &data, h)], |_| vec![data.clone()])[0].clone()],
                |q| {
                    let its = q.arith(Arith::AddI, its, &one);
                    vec![self.francis(q, &data, &l, h, &its)]
                },
            );
            let size = c.select(&pair, &two, &one);
            (next[0].clone(), c.select(&deflated, &size, &zero))
        })
    }

    /// The start l of the unreduced block ending at h: the last i in (0, h] whose
    /// subdiagonal t_i,i-1 is negligible, |t_i,i-1| <= eps (|t_i-1,i-1| + |t_ii|) (or, both
    /// those 0, their neighbours' subdiagonals; and at least the smallest normal), that
    /// element then set to 0; else 0. A NaN counts as negligible (the result is NaN anyway).
    fn block_start(&self, g: &mut Block, data: &Value, h: &Value) -> (Value, Value) {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let t = self.matrix(data);
        let f32 = self.element == ScalarType::F32;
        let eps = self.constant(g, if f32 { f32::EPSILON as f64 } else { f64::EPSILON });
        let tiny = self.constant(g, if f32 { f32::MIN_POSITIVE as f64 } else { f64::MIN_POSITIVE });
        let zero_f = self.constant(g, 0.0);
        let negligible = |f: &mut Block, i: &Value| {
            let one = f.constant_index(1);
            // last_where asks at i = 0 too (its answer unused there): read inside T.
            let i = &f.arith(Arith::MaxUI, i, &one);
            let before = f.arith(Arith::SubI, i, &one);
            let sub = t.get(f, i, &before);
            let (p, q) = (t.get(f, &before, &before), t.get(f, i, i));
            let (p, q) = (f.math(MathUnary::AbsF, &p), f.math(MathUnary::AbsF, &q));
            let scale = f.arith(Arith::AddF, &p, &q);
            // Both diagonal elements 0: the subdiagonals beside (dlahqr's fallback).
            let two = f.constant_index(2);
            let has_left = f.cmpi(CmpI::Uge, i, &two);
            let left_i = f.select(&has_left, &before, i);
            let left_j = f.arith(Arith::SubI, &left_i, &one);
            let left_j = f.select(&has_left, &left_j, &before);
            let left = t.get(f, &left_i, &left_j);
            let left = f.math(MathUnary::AbsF, &left);
            let left = f.select(&has_left, &left, &zero_f);
            let after = f.arith(Arith::AddI, i, &one);
            let has_right = f.cmpi(CmpI::Ule, &after, h);
            let right_i = f.select(&has_right, &after, i);
            let right = t.get(f, &right_i, i);
            let right = f.math(MathUnary::AbsF, &right);
            let right = f.select(&has_right, &right, &zero_f);
            let beside = f.arith(Arith::AddF, &left, &right);
            let empty = f.cmpf(CmpF::Oeq, &scale, &zero_f);
            let scale = f.select(&empty, &beside, &scale);
            let bound = f.arith(Arith::MulF, &eps, &scale);
            let bound = f.arith(Arith::MaximumF, &bound, &tiny);
            let size = f.math(MathUnary::AbsF, &sub);
            f.cmpf(CmpF::Ule, &size, &bound)
        };
        let l = last_where(g, h, &zero, &negligible);
        let split = g.cmpi(CmpI::Ugt, &l, &zero);
        let ty = data.ty().clone();
        let data = g.scf_if_values(
            &split,
            std::slice::from_ref(&ty),
            |q| {
                let before = q.arith(Arith::SubI, &l, &one);
                let zero_f = self.constant(q, 0.0);
                vec![t.set(q, &zero_f, &l, &before)]
            },
            |_| vec![data.clone()],
        );
        (data[0].clone(), l)
    }

    /// One Francis double-shift step on the block [l, h] (h - l >= 2), `its` its steps so
    /// far: the shifts the eigenvalues of its trailing 2 x 2 (or the exceptional pair), the
    /// first column of (T - s1)(T - s2) reflected onto e1, the bulge chased down by 3 x 3
    /// reflectors, the last a 2 x 2 one; each applied to T's rows (from the bulge's column
    /// to n), to T's columns (rows 0 .. min(k + 3, h)) and to Z^T's rows.
    fn francis(&self, g: &mut Block, data: &Value, l: &Value, h: &Value, its: &Value) -> Value {
        let (one, two, three) = (g.constant_index(1), g.constant_index(2), g.constant_index(3));
        let t = self.matrix(data);
        let hm = g.arith(Arith::SubI, h, &one);
        let hmm = g.arith(Arith::SubI, h, &two);
        let (p, q, r, s) = (t.get(g, &hm, &hm), t.get(g, &hm, h), t.get(g, h, &hm), t.get(g, h, h));
        // Standard shifts: sum p + s, product p s - q r.
        let sum = g.arith(Arith::AddF, &p, &s);
        let ps = g.arith(Arith::MulF, &p, &s);
        let qr = g.arith(Arith::MulF, &q, &r);
        let product = g.arith(Arith::SubF, &ps, &qr);
        let before_sub = t.get(g, &hm, &hmm);
        let (sum, product) = shifts(g, its, (sum, product), &s, [&r, &before_sub]);
        // The first column of (T - s1)(T - s2) at rows l, l + 1, l + 2.
        let after = g.arith(Arith::AddI, l, &one);
        let third = g.arith(Arith::AddI, l, &two);
        let (t11, t12, t21, t22, t32) = (t.get(g, l, l), t.get(g, l, &after), t.get(g, &after, l), t.get(g, &after, &after), t.get(g, &third, &after));
        let x = g.arith(Arith::SubF, &t11, &sum);
        let x = g.fma(&x, &t11, &product);
        let x = g.fma(&t12, &t21, &x);
        let y = g.arith(Arith::AddF, &t11, &t22);
        let y = g.arith(Arith::SubF, &y, &sum);
        let y = g.arith(Arith::MulF, &t21, &y);
        let z = g.arith(Arith::MulF, &t21, &t32);
        let last = g.arith(Arith::SubI, h, &one);
        let chased = g
            .scf_for(l, &last, &one, &[data.clone(), x, y, z], |e, k, c| {
                let (vs, tau, beta) = self.small_reflector(e, &c[1], &c[2..4]);
                let k1 = e.arith(Arith::AddI, k, &one);
                let k2 = e.arith(Arith::AddI, k, &two);
                let rows = [k.clone(), k1.clone(), k2.clone()];
                let km = e.arith(Arith::SubI, k, &one);
                let first = e.cmpi(CmpI::Eq, k, l);
                let from = e.select(&first, l, &km);
                let k3 = e.arith(Arith::AddI, k, &three);
                let low = e.arith(Arith::MinUI, &k3, h);
                let d = self.small_reflect(e, &c[0], &rows, &vs, &tau, &from, &low);
                // Below the bulge's column: beta and exact zeros (not the reflector's rounding).
                let ty = d.ty().clone();
                let d = e.scf_if_values(&first, std::slice::from_ref(&ty), |_| vec![d.clone()], |q| {
                    let t = self.matrix(&d);
                    let zero_f = self.constant(q, 0.0);
                    let d = t.set(q, &beta, k, &km);
                    let d = t.with(&d).set(q, &zero_f, &k1, &km);
                    vec![t.with(&d).set(q, &zero_f, &k2, &km)]
                })[0]
                    .clone();
                let t = self.matrix(&d);
                let x = t.get(e, &k1, k);
                let y = t.get(e, &k2, k);
                // z from row k + 3 while that is in the block (the last 3 x 3 step keeps it).
                let within = e.cmpi(CmpI::Ule, &k3, h);
                let z_row = e.select(&within, &k3, &k2);
                let z = t.get(e, &z_row, k);
                let z = e.select(&within, &z, &c[3]);
                Ok::<_, String>(vec![d, x, y, z])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        // The last reflector, rows h - 1 and h.
        let (vs, tau, beta) = self.small_reflector(g, &chased[1], &chased[2..3]);
        let d = self.small_reflect(g, &chased[0], &[hm.clone(), h.clone()], &vs, &tau, &hmm, h);
        let t = self.matrix(&d);
        let zero_f = self.constant(g, 0.0);
        let d = t.set(g, &beta, &hm, &hmm);
        t.with(&d).set(g, &zero_f, h, &hmm)
    }

    /// dlarfg's reflector for (x, rest...) (two to four values): v = (1, vs...), tau and
    /// beta with (I - tau v v^T)(x, rest...) = (beta, 0...); tau = 0 (nothing to do) where
    /// the rest is 0.
    fn small_reflector(&self, g: &mut Block, x: &Value, rest: &[Value]) -> (Vec<Value>, Value, Value) {
        let zero_f = self.constant(g, 0.0);
        let sizes: Vec<Value> = rest.iter().map(|y| g.math(MathUnary::AbsF, y)).collect();
        let rest_norm = sizes[1..].iter().fold(sizes[0].clone(), |acc, s| lapy2(g, &acc, s, self.element));
        let xs = g.math(MathUnary::AbsF, x);
        let norm = lapy2(g, &xs, &rest_norm, self.element);
        let signed = g.copysign(&norm, x);
        let beta = g.negf(&signed);
        let gap = g.arith(Arith::SubF, &beta, x);
        let tau = g.arith(Arith::DivF, &gap, &beta);
        let one_f = self.constant(g, 1.0);
        let denominator = g.arith(Arith::SubF, x, &beta);
        let scale = g.arith(Arith::DivF, &one_f, &denominator);
        let nothing = g.cmpf(CmpF::Oeq, &rest_norm, &zero_f);
        let pick = |g: &mut Block, v: &Value, plain: &Value| g.select(&nothing, plain, v);
        let vs = rest
            .iter()
            .map(|y| {
                let v = g.arith(Arith::MulF, y, &scale);
                pick(g, &v, &zero_f)
            })
            .collect();
        (vs, pick(g, &tau, &zero_f), pick(g, &beta, x))
    }

    /// The small reflector (1, vs...) on `rows` (2 or 3 consecutive): T's rows over columns
    /// [from, n), T's columns over rows [0, low], Z^T's rows over every column.
    fn small_reflect(&self, g: &mut Block, data: &Value, rows: &[Value], vs: &[Value], tau: &Value, from: &Value, low: &Value) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let n = self.n.clone();
        let minus_tau = g.negf(tau);
        // Each element k of the run: x_k less tau v_k (sum_j v_j x_j), v_0 = 1.
        let combine = |f: &mut Block, xs: &[Value]| -> Vec<Value> {
            let mut w = xs[0].clone();
            for (x, v) in xs[1..].iter().zip(vs) {
                w = f.fma(v, x, &w);
            }
            let step = f.arith(Arith::MulF, &minus_tau, &w);
            let mut out = vec![f.arith(Arith::AddF, &xs[0], &step)];
            for (x, v) in xs[1..].iter().zip(vs) {
                out.push(f.fma(v, &step, x));
            }
            out
        };
        let on_rows = |f: &mut Block, d: &Value, base: &Value, (lo, hi): (&Value, &Value)| -> Value {
            let r = f
                .scf_for(lo, hi, &one, &[d.clone()], |e, j, d| {
                    let t = self.matrix(&d[0]);
                    let places: Vec<Value> = rows.iter().map(|r| e.arith(Arith::AddI, base, r)).collect();
                    let xs: Vec<Value> = places.iter().map(|r| t.get(e, r, j)).collect();
                    let out = combine(e, &xs);
                    let d = places.iter().zip(&out).fold(d[0].clone(), |d, (r, v)| self.matrix(&d).set(e, v, r, j));
                    Ok::<_, String>(vec![d])
                })
                .unwrap_or_else(|e| unreachable!("{e}"));
            r[0].clone()
        };
        let d = on_rows(g, data, &zero, (from, &n));
        let past_low = g.arith(Arith::AddI, low, &one);
        let r = g
            .scf_for(&zero, &past_low, &one, &[d], |e, i, d| {
                let t = self.matrix(&d[0]);
                let xs: Vec<Value> = rows.iter().map(|c| t.get(e, i, c)).collect();
                let out = combine(e, &xs);
                let d = rows.iter().zip(&out).fold(d[0].clone(), |d, (c, v)| self.matrix(&d).set(e, v, i, c));
                Ok::<_, String>(vec![d])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        on_rows(g, &r[0], &n, (&zero, &n))
    }

    /// The 2 x 2 block at rows h - 1, h in standard form (`standard_pair`), its rotation
    /// applied to T's rows past the block, T's columns above it and Z^T's rows.
    fn standardize(&self, g: &mut Block, data: &Value, h: &Value) -> Value {
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let t = self.matrix(data);
        let i = g.arith(Arith::SubI, h, &one);
        let (a, b, c, d) = (t.get(g, &i, &i), t.get(g, &i, h), t.get(g, h, &i), t.get(g, h, h));
        let ([a, b, c, d], cs, sn) = self.standard_pair(g, [a, b, c, d]);
        let data = t.set(g, &a, &i, &i);
        let data = t.with(&data).set(g, &b, &i, h);
        let data = t.with(&data).set(g, &c, h, &i);
        let data = t.with(&data).set(g, &d, h, h);
        // (x, y) -> (cs x + sn y, cs y - sn x): `turn` with -sn.
        let minus_sn = g.negf(&sn);
        let past = g.arith(Arith::AddI, &i, &two);
        let count = g.arith(Arith::SubI, &self.n, &past);
        let rows = rotate(g, &self.matrix(&data).at(&past), &count, (&i, h), (&cs, &minus_sn));
        let columns = g
            .scf_for(&zero, &i, &one, &[rows], |e, r, dd| {
                let t = self.matrix(&dd[0]);
                let (x, y) = (t.get(e, r, &i), t.get(e, r, h));
                let (x, y) = turn(e, &x, &y, &cs, &minus_sn);
                let dd = t.set(e, &x, r, &i);
                Ok::<_, String>(vec![t.with(&dd).set(e, &y, r, h)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let (zi, zh) = (g.arith(Arith::AddI, &self.n, &i), g.arith(Arith::AddI, &self.n, h));
        rotate(g, &self.matrix(&columns[0]), &self.n, (&zi, &zh), (&cs, &minus_sn))
    }

    /// dlanv2: the block [[a, b], [c, d]] as [[cs, -sn], [sn, cs]] [[a', b'], [c', d']]
    /// [[cs, sn], [-sn, cs]], in standard form: c' = 0 (real eigenvalues a', d'), or a' = d'
    /// with b' c' < 0 (the pair a' +- i sqrt(-b' c')). Every case computed, the one that
    /// holds selected.
    fn standard_pair(&self, g: &mut Block, [a, b, c, d]: [Value; 4]) -> ([Value; 4], Value, Value) {
        let f32 = self.element == ScalarType::F32;
        let (zero, one, half) = (self.constant(g, 0.0), self.constant(g, 1.0), self.constant(g, 0.5));
        let four_eps = self.constant(g, 4.0 * if f32 { f32::EPSILON as f64 } else { f64::EPSILON });
        let abs = |g: &mut Block, x: &Value| g.math(MathUnary::AbsF, x);
        let sign = |g: &mut Block, x: &Value| g.copysign(&one, x);
        let (c_zero, b_zero) = (g.cmpf(CmpF::Oeq, &c, &zero), g.cmpf(CmpF::Oeq, &b, &zero));
        let temp = g.arith(Arith::SubF, &a, &d);
        let (sb, sc) = (sign(g, &b), sign(g, &c));
        let same_signs = g.cmpf(CmpF::Oeq, &sb, &sc);
        let equal_diagonal = g.cmpf(CmpF::Oeq, &temp, &zero);
        let yes = g.constant_int(1, ScalarType::I1);
        let opposite = g.arith(Arith::XOrI, &same_signs, &yes);
        let already = g.arith(Arith::AndI, &equal_diagonal, &opposite);
        // General case.
        let p = g.arith(Arith::MulF, &half, &temp);
        let (b_size, c_size) = (abs(g, &b), abs(g, &c));
        let bcmax = g.arith(Arith::MaximumF, &b_size, &c_size);
        let smaller = g.arith(Arith::MinimumF, &b_size, &c_size);
        let signs = g.arith(Arith::MulF, &sb, &sc);
        let bcmis = g.arith(Arith::MulF, &smaller, &signs);
        let p_size = abs(g, &p);
        let scale = g.arith(Arith::MaximumF, &p_size, &bcmax);
        let p_scaled = g.arith(Arith::DivF, &p, &scale);
        let m_scaled = g.arith(Arith::DivF, &bcmax, &scale);
        let m_term = g.arith(Arith::MulF, &m_scaled, &bcmis);
        let z = g.fma(&p_scaled, &p, &m_term);
        let real = g.cmpf(CmpF::Oge, &z, &four_eps);
        // Real eigenvalues: z = p + sign(p) sqrt(scale) sqrt(z).
        let (root_scale, root_z) = (g.math(MathUnary::Sqrt, &scale), g.math(MathUnary::Sqrt, &z));
        let root = g.arith(Arith::MulF, &root_scale, &root_z);
        let root = g.copysign(&root, &p);
        let zr = g.arith(Arith::AddF, &p, &root);
        let ra = g.arith(Arith::AddF, &d, &zr);
        let ratio = g.arith(Arith::DivF, &bcmax, &zr);
        let ratio = g.arith(Arith::MulF, &ratio, &bcmis);
        let rd = g.arith(Arith::SubF, &d, &ratio);
        let zr_size = abs(g, &zr);
        let tau = lapy2(g, &c_size, &zr_size, self.element);
        let (r_cs, r_sn) = (g.arith(Arith::DivF, &zr, &tau), g.arith(Arith::DivF, &c, &tau));
        let rb = g.arith(Arith::SubF, &b, &c);
        // Complex or nearly equal: make the diagonal equal.
        let sigma = g.arith(Arith::AddF, &b, &c);
        let (sigma_size, temp_size) = (abs(g, &sigma), abs(g, &temp));
        let tau = lapy2(g, &sigma_size, &temp_size, self.element);
        let ratio = g.arith(Arith::DivF, &sigma_size, &tau);
        let ratio = g.arith(Arith::AddF, &one, &ratio);
        let ratio = g.arith(Arith::MulF, &half, &ratio);
        let cs = g.math(MathUnary::Sqrt, &ratio);
        let tau_cs = g.arith(Arith::MulF, &tau, &cs);
        let sn = g.arith(Arith::DivF, &p, &tau_cs);
        let sn = g.negf(&sn);
        let s_sigma = sign(g, &sigma);
        let sn = g.arith(Arith::MulF, &sn, &s_sigma);
        // [aa bb; cc dd] = [a b; c d] [cs -sn; sn cs], then [cs sn; -sn cs] times that.
        let lin = |g: &mut Block, x: &Value, u: &Value, y: &Value, w: &Value| {
            let yw = g.arith(Arith::MulF, y, w);
            g.fma(x, u, &yw)
        };
        let msn = g.negf(&sn);
        let aa = lin(g, &a, &cs, &b, &sn);
        let bb = lin(g, &a, &msn, &b, &cs);
        let cc = lin(g, &c, &cs, &d, &sn);
        let dd = lin(g, &c, &msn, &d, &cs);
        let nb = lin(g, &bb, &cs, &dd, &sn);
        let nc = lin(g, &aa, &msn, &cc, &cs);
        let ca = lin(g, &aa, &cs, &cc, &sn);
        let cd = lin(g, &bb, &msn, &dd, &cs);
        let mean = g.arith(Arith::AddF, &ca, &cd);
        let mean = g.arith(Arith::MulF, &half, &mean);
        // Then: c' != 0 and b' != 0 of one sign: real after all, made upper triangular.
        let (nb_zero, nc_zero) = (g.cmpf(CmpF::Oeq, &nb, &zero), g.cmpf(CmpF::Oeq, &nc, &zero));
        let (snb, snc) = (sign(g, &nb), sign(g, &nc));
        let one_sign = g.cmpf(CmpF::Oeq, &snb, &snc);
        let nb_nonzero = g.arith(Arith::XOrI, &nb_zero, &yes);
        let nc_nonzero = g.arith(Arith::XOrI, &nc_zero, &yes);
        let split = g.arith(Arith::AndI, &nc_nonzero, &nb_nonzero);
        let split = g.arith(Arith::AndI, &split, &one_sign);
        let (sab, sac) = (abs(g, &nb), abs(g, &nc));
        let (sab, sac) = (g.math(MathUnary::Sqrt, &sab), g.math(MathUnary::Sqrt, &sac));
        let pp = g.arith(Arith::MulF, &sab, &sac);
        let pp = g.copysign(&pp, &nc);
        let bc = g.arith(Arith::AddF, &nb, &nc);
        let bc = abs(g, &bc);
        let bc = g.math(MathUnary::Sqrt, &bc);
        let tau2 = g.arith(Arith::DivF, &one, &bc);
        let sa = g.arith(Arith::AddF, &mean, &pp);
        let sd = g.arith(Arith::SubF, &mean, &pp);
        let sbv = g.arith(Arith::SubF, &nb, &nc);
        let (cs1, sn1) = (g.arith(Arith::MulF, &sab, &tau2), g.arith(Arith::MulF, &sac, &tau2));
        let s_cs = lin(g, &cs, &cs1, &msn, &sn1);
        let s_sn = lin(g, &cs, &sn1, &sn, &cs1);
        // Or: c' != 0, b' = 0: swap, b' = -c'.
        let swap = g.arith(Arith::AndI, &nc_nonzero, &nb_zero);
        let neg_nc = g.negf(&nc);
        // Pick within the complex branch.
        let pick = |g: &mut Block, cond: &Value, x: &Value, y: &Value| g.select(cond, x, y);
        let xa = pick(g, &split, &sa, &mean);
        let xd = pick(g, &split, &sd, &mean);
        let xb = pick(g, &split, &sbv, &nb);
        let xb = pick(g, &swap, &neg_nc, &xb);
        let xc = pick(g, &split, &zero, &nc);
        let xc = pick(g, &swap, &zero, &xc);
        let xcs = pick(g, &split, &s_cs, &cs);
        let xcs = pick(g, &swap, &msn, &xcs);
        let xsn = pick(g, &split, &s_sn, &sn);
        let xsn = pick(g, &swap, &cs, &xsn);
        // Real branch against the complex one.
        let ga = pick(g, &real, &ra, &xa);
        let gb = pick(g, &real, &rb, &xb);
        let gc = pick(g, &real, &zero, &xc);
        let gd = pick(g, &real, &rd, &xd);
        let gcs = pick(g, &real, &r_cs, &xcs);
        let gsn = pick(g, &real, &r_sn, &xsn);
        // The special cases first: c = 0 (nothing), b = 0 (swap), already standard.
        let keep = g.arith(Arith::OrI, &c_zero, &already);
        let neg_c = g.negf(&c);
        let ra = pick(g, &b_zero, &d, &ga);
        let rb = pick(g, &b_zero, &neg_c, &gb);
        let rc = pick(g, &b_zero, &zero, &gc);
        let rd = pick(g, &b_zero, &a, &gd);
        let rcs = pick(g, &b_zero, &zero, &gcs);
        let rsn = pick(g, &b_zero, &one, &gsn);
        let fa = pick(g, &keep, &a, &ra);
        let fb = pick(g, &keep, &b, &rb);
        let fc = pick(g, &keep, &c, &rc);
        let fd = pick(g, &keep, &d, &rd);
        let fcs = pick(g, &keep, &one, &rcs);
        let fsn = pick(g, &keep, &zero, &rsn);
        ([fa, fb, fc, fd], fcs, fsn)
    }

    /// T scaled back by `back` (one factor, then the other), zeros below its subdiagonal;
    /// T and Z^T NaN where `failed`.
    fn finish(&self, g: &mut Block, data: Value, back: &[Value; 2], failed: &Value) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let n = self.n.clone();
        let zero_f = self.constant(g, 0.0);
        let nan = self.constant(g, f64::NAN);
        let rows = g.arith(Arith::AddI, &n, &n);
        let r = g
            .scf_for(&zero, &rows, &one, &[data], |h, i, d| {
                h.scf_for(&zero, &n, &one, d, |e, j, d| {
                    let t = self.matrix(&d[0]);
                    let x = t.get(e, i, j);
                    let in_t = e.cmpi(CmpI::Ult, i, &n);
                    let scaled = e.arith(Arith::MulF, &x, &back[0]);
                    let scaled = e.arith(Arith::MulF, &scaled, &back[1]);
                    let j1 = e.arith(Arith::AddI, j, &one);
                    let below = e.cmpi(CmpI::Ugt, i, &j1);
                    let t_value = e.select(&below, &zero_f, &scaled);
                    let v = e.select(&in_t, &t_value, &x);
                    let v = e.select(failed, &nan, &v);
                    Ok::<_, String>(vec![t.set(e, &v, i, j)])
                })
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        r[0].clone()
    }
}

/// `data` with the elements `get`/`set` reach at i in [0, count) times back[0] then
/// back[1]: undoes `power_scale`'s scaling of results (eigenvalues, singular values).
pub(super) fn scaled_back<G, S>(g: &mut Block, data: Value, count: &Value, back: &[Value; 2], get: G, set: S) -> Value
where
    G: Fn(&mut Block, &Value, &Value) -> Value,
    S: Fn(&mut Block, &Value, &Value, &Value) -> Value,
{
    let (zero, one) = (g.constant_index(0), g.constant_index(1));
    let r = g
        .scf_for(&zero, count, &one, &[data], |h, i, d| {
            let x = get(h, &d[0], i);
            let x = h.arith(Arith::MulF, &x, &back[0]);
            let x = h.arith(Arith::MulF, &x, &back[1]);
            Ok::<_, String>(vec![set(h, &d[0], &x, i)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    r[0].clone()
}

/// The elements [from, to) of `data` scaled by 2^-e, e the exponent of their largest
/// size (none where that is 0); returns the factors that scale them back, 2^e then 2^-p. A subnormal largest size
/// is first made normal by 2^p (p = the mantissa's bits + 2): 2^-e alone would overflow.
/// Also whether that size is NaN or infinite (maximumf keeps a NaN).
pub(super) fn scaled_by_power(g: &mut Block, data: Value, (from, to): (&Value, &Value), element: ScalarType) -> (Value, [Value; 2], Value) {
    let one = g.constant_index(1);
    let zero_f = g.constant_f64(0.0, element);
    let largest = g
        .scf_for(from, to, &one, std::slice::from_ref(&zero_f), |h, at, acc| {
            let x = h.tensor_extract(&data, std::slice::from_ref(at));
            let x = h.math(MathUnary::AbsF, &x);
            Ok::<_, String>(vec![h.arith(Arith::MaximumF, &acc[0], &x)])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    let (pre, factor, back, not_finite) = power_scale(g, &largest[0], element);
    let r = g
        .scf_for(from, to, &one, &[data], |h, at, d| {
            let x = h.tensor_extract(&d[0], std::slice::from_ref(at));
            let x = h.arith(Arith::MulF, &x, &pre);
            let x = h.arith(Arith::MulF, &x, &factor);
            Ok::<_, String>(vec![h.tensor_insert(&x, &d[0], std::slice::from_ref(at))])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    (r[0].clone(), back, not_finite)
}

/// For the largest size `largest` of some elements: (pre, factor, back, not_finite), the
/// elements times pre then factor have their largest in [1, 2) (see `scaled_by_power`),
/// times back[0] then back[1] they are themselves again; none where `largest` is 0 or
/// not finite (not_finite: whether it is NaN or infinite).
pub(super) fn power_scale(g: &mut Block, largest: &Value, element: ScalarType) -> (Value, Value, [Value; 2], Value) {
    let zero_f = g.constant_f64(0.0, element);
    let (int, mask, tiny, bits) = match element {
        ScalarType::F32 => (ScalarType::I32, 0x7f80_0000_i64, f32::MIN_POSITIVE as f64, 25),
        _ => (ScalarType::I64, 0x7ff0_0000_0000_0000_i64, f64::MIN_POSITIVE, 54),
    };
    let one_f = g.constant_f64(1.0, element);
    let tiny = g.constant_f64(tiny, element);
    let lift = g.constant_f64(2f64.powi(bits), element);
    let drop = g.constant_f64(2f64.powi(-bits), element);
    let inf = g.constant_f64(f64::INFINITY, element);
    let finite = g.cmpf(CmpF::Olt, largest, &inf);
    let yes = g.constant_int(1, ScalarType::I1);
    let not_finite = g.arith(Arith::XOrI, &finite, &yes);
    let subnormal = g.cmpf(CmpF::Olt, largest, &tiny);
    let pre = g.select(&subnormal, &lift, &one_f);
    let post = g.select(&subnormal, &drop, &one_f);
    let largest = g.arith(Arith::MulF, largest, &pre);
    // 2^e: the largest size's exponent bits alone.
    let word = g.cast(Cast::Bitcast, &largest, int);
    let mask = g.constant_int(mask, int);
    let exponent = g.arith(Arith::AndI, &word, &mask);
    let power = g.cast(Cast::Bitcast, &exponent, element);
    // A zero matrix (exponent bits 0), or a non-finite element (the result is NaN
    // anyway): no scaling.
    let plain = g.cmpf(CmpF::Oeq, &power, &zero_f);
    let endless = g.cmpf(CmpF::Oeq, &power, &inf);
    let plain = g.arith(Arith::OrI, &plain, &endless);
    let power = g.select(&plain, &one_f, &power);
    let factor = g.arith(Arith::DivF, &one_f, &power);
    (pre, factor, [power, post], not_finite)
}
