//! The eigenvalues, and where asked the eigenvectors, of a symmetric matrix as one
//! dispatch (llvm-cpu): Householder reduction to a tridiagonal T = Q^T A Q, then implicit
//! QL iterations on T (Golub & Van Loan 8.3; the QL form of Bowdler, Martin, Reinsch and
//! Wilkinson's tql algorithms), the rotations applied to Q^T's rows. That is LAPACK's
//! route (dsytrd, then dsteqr or dsterf): O(n^3) once, where each of cyclic Jacobi's
//! sweeps (eigen.rs, kept for GPU targets) is O(n^3) and takes 6 to 10 of them.
//!
//! The kernel works on the matrix [A; V^T; s] (rows of n): A's rows, Q^T's (then V^T's)
//! where eigenvectors are asked, and one row of scratch. Reduction step k reflects A's
//! row k past column k + 1: v is kept there (its leading 1 at column k + 1), T's
//! off-diagonal e_k and the reflector's tau under the diagonal at (k + 1, k) and
//! (k + 2, k), and s holds p = tau A v, then w = p - (tau / 2)(p . v) v, for the
//! symmetric update A - v w^T - w v^T of rows and columns past k (both triangles, row by
//! row, eight columns a step). T's diagonal stays on A's; its off-diagonal moves to s
//! for the iterations. For the eigenvalues alone the QL steps are root-free (`root_free`,
//! dsterf's route).

use super::{add_multiple, add_multiples, copied_from, minus_dot, reflector, region, region_parts, rotate, transpose_in_place, Flat};
use super::real_schur::{power_scale, scaled_back, scaled_by_power};
use crate::lower::qr::lapy2;
use crate::lower::Context;
use crate::mlir::{Arith, Block, CmpF, CmpI, IndexArg, MathUnary, ScalarType, TensorType, Value};

/// QL iterations per eigenvalue before the kernel gives up (LAPACK's dsteqr allows 30):
/// the eigenvalues are then all NaN.
const MOST_ITERATIONS: i64 = 30;

/// [A'; V] of `start` ([A; I], A symmetric n x n; or A alone without `vectors`): A's
/// eigenvalues on A''s diagonal (in no order; the rest of A' is scratch), its
/// orthonormal eigenvectors in V's columns, as eigen.rs `sweeps` leaves them.
pub(in crate::lower) fn symmetric_eigen(cx: &mut Context, b: &mut Block, start: &Value, n: &Value, element: ScalarType, vectors: bool) -> Value {
    let rows = b.tensor_dim(start, 0);
    let one_outside = b.constant_index(1);
    let with_scratch = b.arith(Arith::AddI, &rows, &one_outside);
    let out = region(cx, b, element, (&with_scratch, n), &[start], &[&rows], |k, m, s| {
        let total = with_rows(k, &s[0]);
        let begin = Flat::start(k, element, &total, &m[0].cols);
        body(k, &m[0], &s[0], element, vectors, begin)
    });
    b.tensor_extract_slice(&out, &[IndexArg::Const(0), IndexArg::Const(0)], &[IndexArg::Dyn(rows), IndexArg::Dyn(n.clone())])
}

/// [`symmetric_eigen`] of each of `count` starts stacked in `start` ((count rows) x n),
/// one workgroup a matrix: count x rows x n.
pub(in crate::lower) fn symmetric_eigens(cx: &mut Context, b: &mut Block, start: &Value, count: &Value, rows: &Value, element: ScalarType, vectors: bool) -> Value {
    let n = b.tensor_dim(start, 1);
    let one_outside = b.constant_index(1);
    let with_scratch = b.arith(Arith::AddI, rows, &one_outside);
    let out = region_parts(cx, b, element, count, (&with_scratch, &n), &[start], &[rows], |k, m, s, begin| body(k, &m[0], &s[0], element, vectors, begin));
    let shape = TensorType::new(vec![None, None, None], element);
    let out = b.tensor_expand(&out, &[vec![0, 1], vec![2]], shape, &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(with_scratch), IndexArg::Dyn(n.clone())]);
    let cube = [IndexArg::Dyn(count.clone()), IndexArg::Dyn(rows.clone()), IndexArg::Dyn(n)];
    b.tensor_extract_slice(&out, &[IndexArg::Const(0), IndexArg::Const(0), IndexArg::Const(0)], &cube)
}

/// `rows` and the scratch row.
fn with_rows(k: &mut Block, rows: &Value) -> Value {
    let one = k.constant_index(1);
    k.arith(Arith::AddI, rows, &one)
}

/// The kernel of the start `src` (`rows` x n where its Flat says) into `begin` (not yet
/// written).
fn body(k: &mut Block, src: &Flat, rows: &Value, element: ScalarType, vectors: bool, begin: Value) -> Value {
    let n = src.cols.clone();
    let size = k.arith(Arith::MulI, rows, &n);
    let zero = k.constant_index(0);
    let from = src.base.clone().unwrap_or(zero);
    let data = copied_from(k, &src.data, &from, &size, begin);
    // A scaled by a power of two (its largest element into [1, 2)), the eigenvalues scaled
    // back: the reflectors' 1 / (alpha - beta) overflowed for a subnormal A (NaN values).
    let square = k.arith(Arith::MulI, &n, &n);
    let zero = k.constant_index(0);
    let (data, back, _) = scaled_by_power(k, data, (&zero, &square), element);
    let kernel = Kernel { n: n.clone(), cols: n.clone(), scratch: rows.clone(), diagonal: None, element, vectors };
    let data = kernel.tridiagonalize(k, data);
    let data = kernel.off_diagonal_to_scratch(k, data);
    let data = if vectors { kernel.accumulate(k, data) } else { data };
    let data = kernel.iterate(k, data);
    let data = kernel.scaled_back(k, data, &back);
    if vectors {
        let square = k.arith(Arith::MulI, &n, &n);
        transpose_in_place(k, &Flat::result(&data, &n).at(&square), &n)
    } else {
        data
    }
}

/// The eigenvalues of a symmetric tridiagonal matrix of order n, its diagonal in row
/// `d_row` and its off-diagonal in row `e_row` of a kernel's `data` (rows of `cols`; e_n-1
/// = 0), by the QL iterations below: left in row `d_row`, in no order (all NaN where they
/// did not converge).
pub(super) fn tridiagonal_eigenvalues(g: &mut Block, data: Value, cols: &Value, n: &Value, (d_row, e_row): (&Value, &Value), element: ScalarType) -> Value {
    let kernel = Kernel { n: n.clone(), cols: cols.clone(), scratch: e_row.clone(), diagonal: Some(d_row.clone()), element, vectors: false };
    kernel.iterate(g, data)
}

/// The kernel's sizes: n, the row length, the scratch row's index (T's off-diagonal), the
/// row holding T's diagonal (None: A's own diagonal), the element type, whether Q^T's rows
/// follow A's.
struct Kernel {
    n: Value,
    cols: Value,
    scratch: Value,
    diagonal: Option<Value>,
    element: ScalarType,
    vectors: bool,
}

impl Kernel {
    fn matrix(&self, data: &Value) -> Flat {
        Flat::result(data, &self.cols)
    }

    /// The data with T's diagonal times back[0] then back[1].
    fn scaled_back(&self, g: &mut Block, data: Value, back: &[Value; 2]) -> Value {
        scaled_back(g, data, &self.n, back, |h, d, i| self.d(h, &self.matrix(d), i), |h, d, x, i| self.set_d(h, &self.matrix(d), x, i))
    }

    /// T's diagonal element i.
    fn d(&self, g: &mut Block, cur: &Flat, i: &Value) -> Value {
        match &self.diagonal {
            Some(row) => cur.get(g, row, i),
            None => cur.get(g, i, i),
        }
    }

    /// The data with T's diagonal element i set to `v`.
    fn set_d(&self, g: &mut Block, cur: &Flat, v: &Value, i: &Value) -> Value {
        match &self.diagonal {
            Some(row) => cur.set(g, v, row, i),
            None => cur.set(g, v, i, i),
        }
    }

    fn constant(&self, g: &mut Block, v: f64) -> Value {
        g.constant_f64(v, self.element)
    }

    /// Steps k = 0 .. n - 3: row k's reflector, then the symmetric update of what is past
    /// it (skipped where tau = 0: x was already zero).
    fn tridiagonalize(&self, g: &mut Block, data: Value) -> Value {
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let less = g.arith(Arith::SubI, &self.n, &two);
        let steps = g.arith(Arith::MaxSI, &less, &zero);
        let r = g
            .scf_for(&zero, &steps, &one, &[data], |h, k, d| {
                let a = self.matrix(&d[0]);
                let next = h.arith(Arith::AddI, k, &one);
                let from = h.arith(Arith::AddI, k, &two);
                let (data, beta, tau) = reflector(h, &a, k, &next, (&from, &self.n), self.element);
                let one_f = self.constant(h, 1.0);
                let data = a.with(&data).set(h, &one_f, k, &next);
                let data = a.with(&data).set(h, &beta, &next, k);
                let data = a.with(&data).set(h, &tau, &from, k);
                let zero_f = self.constant(h, 0.0);
                let applies = h.cmpf(CmpF::Une, &tau, &zero_f);
                let ty = data.ty().clone();
                Ok::<_, String>(h.scf_if_values(&applies, std::slice::from_ref(&ty), |t| vec![self.update(t, &data, k, &tau)], |_| vec![data.clone()]))
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    }

    /// A's rows and columns past k less v w^T + w v^T (v in row k, from column k + 1).
    fn update(&self, g: &mut Block, data: &Value, k: &Value, tau: &Value) -> Value {
        let (one, zero_f) = (g.constant_index(1), self.constant(g, 0.0));
        let (n, s) = (&self.n, &self.scratch);
        let next = g.arith(Arith::AddI, k, &one);
        let count = g.arith(Arith::SubI, n, &next);
        let v = |f: &mut Block, cur: &Flat, j: &Value| cur.get(f, k, j);
        // s = p = tau A v over rows past k.
        let minus_tau = g.negf(tau);
        let p = g
            .scf_for(&next, n, &one, &[data.clone()], |h, i, d| {
                let cur = self.matrix(&d[0]);
                let minus = minus_dot(h, &count, &zero_f, &|f, c| {
                    let j = f.arith(Arith::AddI, &next, c);
                    (cur.get(f, i, &j), v(f, &cur, &j))
                });
                let p_i = h.arith(Arith::MulF, &minus_tau, &minus);
                Ok::<_, String>(vec![cur.set(h, &p_i, s, i)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        // w = p - (tau / 2)(p . v) v.
        let cur = self.matrix(&p[0]);
        let minus_pv = minus_dot(g, &count, &zero_f, &|f, c| {
            let j = f.arith(Arith::AddI, &next, c);
            (cur.get(f, s, &j), v(f, &cur, &j))
        });
        let half = self.constant(g, 0.5);
        let half_tau = g.arith(Arith::MulF, &half, tau);
        let factor = g.arith(Arith::MulF, &half_tau, &minus_pv);
        let w = add_multiple(g, &cur, s, &factor, &v, (&next, n));
        let r = g
            .scf_for(&next, n, &one, &[w], |h, i, d| {
                let cur = self.matrix(&d[0]);
                let (v_i, w_i) = (cur.get(h, k, i), cur.get(h, s, i));
                let (minus_v, minus_w) = (h.negf(&v_i), h.negf(&w_i));
                let w = |f: &mut Block, cur: &Flat, j: &Value| cur.get(f, s, j);
                Ok::<_, String>(vec![add_multiples(h, &cur, i, &[(&minus_v, &w), (&minus_w, &v)], (&next, n))])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    }

    /// T's off-diagonal into the scratch row: e_i (under the diagonal at (i + 1, i): where
    /// step i put it, or A's own for the last), and e_{n-1} = 0.
    fn off_diagonal_to_scratch(&self, g: &mut Block, data: Value) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let r = g
            .scf_for(&zero, &self.n, &one, &[data], |h, i, d| {
                let cur = self.matrix(&d[0]);
                let below = h.arith(Arith::AddI, i, &one);
                let inside = h.cmpi(CmpI::Ult, &below, &self.n);
                let row = h.select(&inside, &below, i);
                let e = cur.get(h, &row, i);
                let zero_f = self.constant(h, 0.0);
                let e = h.select(&inside, &e, &zero_f);
                Ok::<_, String>(vec![cur.set(h, &e, &self.scratch, i)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    }

    /// Q^T = H_{n-3} ... H_0 in the rows under A's (the identity there to start): the
    /// reflectors from the last, each applied from the right to the rows it changes (those
    /// past k: the ones before are still the identity's there).
    fn accumulate(&self, g: &mut Block, data: Value) -> Value {
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let n = &self.n;
        let less = g.arith(Arith::SubI, n, &two);
        let steps = g.arith(Arith::MaxSI, &less, &zero);
        let r = g
            .scf_for(&zero, &steps, &one, &[data], |h, step, d| {
                let last = h.arith(Arith::SubI, &steps, &one);
                let k = h.arith(Arith::SubI, &last, step);
                let next = h.arith(Arith::AddI, &k, &one);
                let from = h.arith(Arith::AddI, &k, &two);
                let tau = self.matrix(&d[0]).get(h, &from, &k);
                let minus_tau = h.negf(&tau);
                let count = h.arith(Arith::SubI, n, &next);
                let zero_f = self.constant(h, 0.0);
                h.scf_for(&next, n, &one, d, |e, r, d| {
                    let cur = self.matrix(&d[0]);
                    let row = e.arith(Arith::AddI, n, r);
                    // (row . v) as 0 - sum(-row_j v_j), then row - tau (row . v) v.
                    let minus_dot_v = minus_dot(e, &count, &zero_f, &|f, c| {
                        let j = f.arith(Arith::AddI, &next, c);
                        let x = cur.get(f, &row, &j);
                        (f.negf(&x), cur.get(f, &k, &j))
                    });
                    let factor = e.arith(Arith::MulF, &minus_tau, &minus_dot_v);
                    Ok::<_, String>(vec![add_multiple(e, &cur, &row, &factor, &|f, cur, j| cur.get(f, &k, j), (&next, n))])
                })
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        r[0].clone()
    }

    /// T's eigenvalues (and with `vectors` V^T's rotations): `ql`, root-free for the values
    /// alone.
    fn iterate(&self, g: &mut Block, data: Value) -> Value {
        if self.vectors {
            self.ql(g, data, false)
        } else {
            self.root_free(g, data)
        }
    }

    /// The eigenvalues alone, as LAPACK's dsterf finds them: T scaled by a power of two
    /// (its largest element into [1, 2): the squares below neither overflow nor lose the
    /// small elements that matter), its off-diagonal squared in place, root-free QL steps
    /// (Pal, Walker and Kahan's: two divisions and no square root a rotation, where the
    /// rotations with vectors take a square root and three divisions; the singular values'
    /// 2n x 2n Golub-Kahan matrices spent most of their time there), scaled back.
    fn root_free(&self, g: &mut Block, data: Value) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let s_row = &self.scratch;
        let cur = self.matrix(&data);
        let zero_f = self.constant(g, 0.0);
        let largest = g
            .scf_for(&zero, &self.n, &one, std::slice::from_ref(&zero_f), |h, i, acc| {
                let (d, e) = (self.d(h, &cur, i), cur.get(h, s_row, i));
                let (d, e) = (h.math(MathUnary::AbsF, &d), h.math(MathUnary::AbsF, &e));
                let m = h.arith(Arith::MaximumF, &acc[0], &d);
                Ok::<_, String>(vec![h.arith(Arith::MaximumF, &m, &e)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let (pre, factor, back, _) = power_scale(g, &largest[0], self.element);
        let scaled = g
            .scf_for(&zero, &self.n, &one, &[data], |h, i, d| {
                let cur = self.matrix(&d[0]);
                let (x, e) = (self.d(h, &cur, i), cur.get(h, s_row, i));
                let x = h.arith(Arith::MulF, &x, &pre);
                let x = h.arith(Arith::MulF, &x, &factor);
                let e = h.arith(Arith::MulF, &e, &pre);
                let e = h.arith(Arith::MulF, &e, &factor);
                let e2 = h.arith(Arith::MulF, &e, &e);
                let d = self.set_d(h, &cur, &x, i);
                Ok::<_, String>(vec![cur.with(&d).set(h, &e2, s_row, i)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let solved = self.ql(g, scaled[0].clone(), true);
        self.scaled_back(g, solved, &back)
    }

    /// Implicit QL on T (diagonal on A's, off-diagonal in the scratch row, squared where
    /// `squared`: `root_free`): for each l, iterations until e_l is negligible, each a
    /// shifted QL step on the unreduced block [l, m] chased by plane rotations from m - 1
    /// up to l. A NaN counts as negligible (scipy has raised for it already); past
    /// `MOST_ITERATIONS` the eigenvalues are NaN.
    fn ql(&self, g: &mut Block, data: Value, squared: bool) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let most = g.constant_index(MOST_ITERATIONS);
        let unset = g.constant_int(0, ScalarType::I1);
        let r = g
            .scf_for(&zero, &self.n, &one, &[data, unset.clone()], |h, l, carried| {
                let state = h.scf_while(
                    &[carried[0].clone(), zero.clone(), unset.clone()],
                    |c, args| {
                        let more = c.cmpi(CmpI::Ult, &args[1], &most);
                        let yes = c.constant_int(1, ScalarType::I1);
                        let open = c.arith(Arith::XOrI, &args[2], &yes);
                        c.arith(Arith::AndI, &more, &open)
                    },
                    |c, args| {
                        let m = self.block_end(c, &args[0], l, squared);
                        let done = c.cmpi(CmpI::Eq, &m, l);
                        let ty = args[0].ty().clone();
                        let next = c.scf_if_values(&done, std::slice::from_ref(&ty), |_| vec![args[0].clone()], |q| {
                            vec![if squared { self.step_root_free(q, &args[0], l, &m) } else { self.step(q, &args[0], l, &m) }]
                        });
                        let one = c.constant_index(1);
                        let count = c.arith(Arith::AddI, &args[1], &one);
                        let count = c.select(&done, &args[1], &count);
                        vec![next[0].clone(), count, done]
                    },
                );
                let yes = h.constant_int(1, ScalarType::I1);
                let stuck = h.arith(Arith::XOrI, &state[2], &yes);
                Ok::<_, String>(vec![state[0].clone(), h.arith(Arith::OrI, &carried[1], &stuck)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let nan = self.constant(g, f64::NAN);
        let ty = r[0].ty().clone();
        g.scf_if_values(
            &r[1],
            std::slice::from_ref(&ty),
            |h| {
                let filled = h
                    .scf_for(&zero, &self.n, &one, &r[0..1], |f, i, d| Ok::<_, String>(vec![self.set_d(f, &self.matrix(&d[0]), &nan, i)]))
                    .unwrap_or_else(|e| unreachable!("{e}"));
                vec![filled[0].clone()]
            },
            |_| vec![r[0].clone()],
        )[0]
            .clone()
    }

    /// The first m >= l with e_m negligible, |e_m| <= eps (|d_m| + |d_{m+1}|) (where
    /// `squared`, e_m^2 <= eps^2 |d_m d_{m+1}|, dsterf's test), or n - 1.
    fn block_end(&self, g: &mut Block, data: &Value, l: &Value, squared: bool) -> Value {
        let one = g.constant_index(1);
        let last = g.arith(Arith::SubI, &self.n, &one);
        let eps = self.constant(g, if self.element == ScalarType::F32 { f32::EPSILON as f64 } else { f64::EPSILON });
        let cur = self.matrix(data);
        let unset = g.constant_int(0, ScalarType::I1);
        let found = g
            .scf_for(l, &last, &one, &[last.clone(), unset], |f, m, acc| {
                let after = f.arith(Arith::AddI, m, &one);
                let e = cur.get(f, &self.scratch, m);
                let (d, d_next) = (self.d(f, &cur, m), self.d(f, &cur, &after));
                let (size, size_next) = (f.math(MathUnary::AbsF, &d), f.math(MathUnary::AbsF, &d_next));
                let (scale, eps) = if squared {
                    (f.arith(Arith::MulF, &size, &size_next), f.arith(Arith::MulF, &eps, &eps))
                } else {
                    (f.arith(Arith::AddF, &size, &size_next), eps.clone())
                };
                let bound = f.arith(Arith::MulF, &eps, &scale);
                let e_size = f.math(MathUnary::AbsF, &e);
                // Unordered: a NaN ends the block.
                let small = f.cmpf(CmpF::Ule, &e_size, &bound);
                let yes = f.constant_int(1, ScalarType::I1);
                let first = f.arith(Arith::XOrI, &acc[1], &yes);
                let take = f.arith(Arith::AndI, &small, &first);
                Ok::<_, String>(vec![f.select(&take, m, &acc[0]), f.arith(Arith::OrI, &acc[1], &small)])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        found[0].clone()
    }

    /// One root-free QL step on the block [l, m] (m > l) of T with its off-diagonal squared
    /// (dsterf's QL branch): the shift sigma from T's leading 2 x 2 there, then for i = m -
    /// 1 down to l, with p = gamma^2 / c (c the rotation's cosine squared): r = p + e_i^2, c
    /// = p / r, s = e_i^2 / r, gamma = c (d_i - sigma) - s gamma_old, d_i+1 = gamma_old + d_i
    /// - gamma, e_i+1^2 = s r. A 2 x 2 block's eigenvalues directly (LAPACK's dlae2). e_m
    /// (m < n - 1: negligible) is set to 0 first.
    fn step_root_free(&self, g: &mut Block, data: &Value, l: &Value, m: &Value) -> Value {
        let (one, s_row) = (g.constant_index(1), &self.scratch);
        let after_l = g.arith(Arith::AddI, l, &one);
        // The negligible e_m set to 0, as dsterf does (else a d_m that shrinks later could
        // join the blocks again).
        let zero_f = self.constant(g, 0.0);
        let data = &self.matrix(data).set(g, &zero_f, s_row, m);
        let pair = g.cmpi(CmpI::Eq, m, &after_l);
        let ty = data.ty().clone();
        let element = self.element;
        g.scf_if_values(
            &pair,
            std::slice::from_ref(&ty),
            |q| {
                let cur = self.matrix(data);
                let (a, c) = (self.d(q, &cur, l), self.d(q, &cur, &after_l));
                let e2 = cur.get(q, s_row, l);
                let b = q.math(MathUnary::Sqrt, &e2);
                let (rt1, rt2) = two_by_two(q, &a, &b, &c, element);
                let d = self.set_d(q, &cur, &rt1, l);
                let d = self.set_d(q, &cur.with(&d), &rt2, &after_l);
                let zero_f = q.constant_f64(0.0, element);
                vec![cur.with(&d).set(q, &zero_f, s_row, l)]
            },
            |q| vec![self.chase_root_free(q, data, l, m)],
        )[0]
            .clone()
    }

    /// `step_root_free` on a block of three or more.
    fn chase_root_free(&self, g: &mut Block, data: &Value, l: &Value, m: &Value) -> Value {
        let (zero, one, s_row) = (g.constant_index(0), g.constant_index(1), &self.scratch);
        let (zero_f, one_f, two_f) = (self.constant(g, 0.0), self.constant(g, 1.0), self.constant(g, 2.0));
        let cur = self.matrix(data);
        let after_l = g.arith(Arith::AddI, l, &one);
        let (p, d_after, d_m) = (self.d(g, &cur, l), self.d(g, &cur, &after_l), self.d(g, &cur, m));
        let e2_l = cur.get(g, s_row, l);
        // sigma = p - rte / (theta + sign(theta) hypot(theta, 1)), theta = (d_l+1 - p) / (2 rte).
        let rte = g.math(MathUnary::Sqrt, &e2_l);
        let gap = g.arith(Arith::SubF, &d_after, &p);
        let twice = g.arith(Arith::MulF, &two_f, &rte);
        let theta = g.arith(Arith::DivF, &gap, &twice);
        let theta_size = g.math(MathUnary::AbsF, &theta);
        let radius = lapy2(g, &theta_size, &one_f, self.element);
        let signed = g.copysign(&radius, &theta);
        let denominator = g.arith(Arith::AddF, &theta, &signed);
        let ratio = g.arith(Arith::DivF, &rte, &denominator);
        let sigma = g.arith(Arith::SubF, &p, &ratio);
        let gamma = g.arith(Arith::SubF, &d_m, &sigma);
        let p = g.arith(Arith::MulF, &gamma, &gamma);
        let count = g.arith(Arith::SubI, m, l);
        let last = g.arith(Arith::SubI, m, &one);
        // Carried: data, c, s, gamma, p.
        let r = g
            .scf_for(&zero, &count, &one, &[data.clone(), one_f.clone(), zero_f.clone(), gamma, p], |h, t, v| {
                let cur = self.matrix(&v[0]);
                let (c, s, gamma, p) = (&v[1], &v[2], &v[3], &v[4]);
                let i = h.arith(Arith::SubI, &last, t);
                let after = h.arith(Arith::AddI, &i, &one);
                let bb = cur.get(h, s_row, &i);
                let alpha = self.d(h, &cur, &i);
                let r = h.arith(Arith::AddF, p, &bb);
                // e_i+1^2 = s r, but for i = m - 1 (e_m stays as block_end found it).
                let first = h.cmpi(CmpI::Eq, &i, &last);
                let e_next = cur.get(h, s_row, &after);
                let sr = h.arith(Arith::MulF, s, &r);
                let e_next = h.select(&first, &e_next, &sr);
                let new_c = h.arith(Arith::DivF, p, &r);
                let new_s = h.arith(Arith::DivF, &bb, &r);
                let shifted = h.arith(Arith::SubF, &alpha, &sigma);
                let s_gamma = h.arith(Arith::MulF, &new_s, gamma);
                let minus = h.negf(&s_gamma);
                let new_gamma = h.fma(&new_c, &shifted, &minus);
                let drop = h.arith(Arith::SubF, &alpha, &new_gamma);
                let d_after = h.arith(Arith::AddF, gamma, &drop);
                let g2 = h.arith(Arith::MulF, &new_gamma, &new_gamma);
                let p_next = h.arith(Arith::DivF, &g2, &new_c);
                let p_zero = h.arith(Arith::MulF, c, &bb);
                let c_zero = h.cmpf(CmpF::Oeq, &new_c, &zero_f);
                let new_p = h.select(&c_zero, &p_zero, &p_next);
                let d = cur.set(h, &e_next, s_row, &after);
                let d = self.set_d(h, &cur.with(&d), &d_after, &after);
                Ok::<_, String>(vec![d, new_c, new_s, new_gamma, new_p])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let cur = self.matrix(&r[0]);
        let (s, gamma, p) = (&r[2], &r[3], &r[4]);
        let e_l = g.arith(Arith::MulF, s, p);
        let d_l = g.arith(Arith::AddF, &sigma, gamma);
        let d = cur.set(g, &e_l, s_row, l);
        self.set_d(g, &cur.with(&d), &d_l, l)
    }

    /// One QL step on the block [l, m] (m > l): the shift from T's leading 2 x 2 there,
    /// rotations in the planes (i, i + 1) for i = m - 1 down to l chasing the bulge, each
    /// also applied to V^T's rows i and i + 1. A rotation of radius 0 (an e_i that
    /// underflowed) splits the block there: the step ends, and the next finds the split.
    fn step(&self, g: &mut Block, data: &Value, l: &Value, m: &Value) -> Value {
        let (one, s_row) = (g.constant_index(1), &self.scratch);
        let (zero_f, one_f, two_f) = (self.constant(g, 0.0), self.constant(g, 1.0), self.constant(g, 2.0));
        let cur = self.matrix(data);
        let after_l = g.arith(Arith::AddI, l, &one);
        let (d_l, d_after, d_m) = (self.d(g, &cur, l), self.d(g, &cur, &after_l), self.d(g, &cur, m));
        let e_l = cur.get(g, s_row, l);
        // Shift: the eigenvalue of T's leading 2 x 2 nearer d_l, folded into g.
        let gap = g.arith(Arith::SubF, &d_after, &d_l);
        let twice_e = g.arith(Arith::MulF, &two_f, &e_l);
        let theta = g.arith(Arith::DivF, &gap, &twice_e);
        let theta_size = g.math(MathUnary::AbsF, &theta);
        let radius = lapy2(g, &theta_size, &one_f, self.element);
        let signed = g.copysign(&radius, &theta);
        let denominator = g.arith(Arith::AddF, &theta, &signed);
        let ratio = g.arith(Arith::DivF, &e_l, &denominator);
        let spread = g.arith(Arith::SubF, &d_m, &d_l);
        let start_g = g.arith(Arith::AddF, &spread, &ratio);
        let count = g.arith(Arith::SubI, m, l);
        let unset = g.constant_int(0, ScalarType::I1);
        let zero = g.constant_index(0);
        let carried = [data.clone(), one_f.clone(), one_f.clone(), zero_f.clone(), start_g, unset];
        let r = g
            .scf_for(&zero, &count, &one, &carried, |h, t, c| {
                let ty: Vec<_> = c.iter().map(|v| v.ty().clone()).collect();
                let broken = c[5].clone();
                Ok::<_, String>(h.scf_if_values(&broken, &ty, |_| c.to_vec(), |q| self.rotation(q, c, t, m)))
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        let (data, p, gv, broken) = (r[0].clone(), r[3].clone(), r[4].clone(), r[5].clone());
        let ty = data.ty().clone();
        g.scf_if_values(&broken, std::slice::from_ref(&ty), |_| vec![data.clone()], |q| {
            let cur = self.matrix(&data);
            let d_l = self.d(q, &cur, l);
            let d_l = q.arith(Arith::SubF, &d_l, &p);
            let d = self.set_d(q, &cur, &d_l, l);
            let d = cur.with(&d).set(q, &gv, s_row, l);
            let zero_f = self.constant(q, 0.0);
            vec![cur.with(&d).set(q, &zero_f, s_row, m)]
        })[0]
            .clone()
    }

    /// Rotation t of a QL step (plane (i, i + 1), i = m - 1 - t) on carried (data, s, c,
    /// p, g, broken).
    fn rotation(&self, g: &mut Block, carried: &[Value], t: &Value, m: &Value) -> Vec<Value> {
        let (data, s, c, p, gv) = (&carried[0], &carried[1], &carried[2], &carried[3], &carried[4]);
        let (one, s_row) = (g.constant_index(1), &self.scratch);
        let last = g.arith(Arith::SubI, m, &one);
        let i = g.arith(Arith::SubI, &last, t);
        let after = g.arith(Arith::AddI, &i, &one);
        let cur = self.matrix(data);
        let e_i = cur.get(g, s_row, &i);
        let f = g.arith(Arith::MulF, s, &e_i);
        let bb = g.arith(Arith::MulF, c, &e_i);
        let (f_size, g_size) = (g.math(MathUnary::AbsF, &f), g.math(MathUnary::AbsF, gv));
        let r = lapy2(g, &f_size, &g_size, self.element);
        // Every read before the first write: a read of the older tensor value would need
        // a copy, which bufferization refuses in a dispatch.
        let (d_i, d_after) = (self.d(g, &cur, &i), self.d(g, &cur, &after));
        let d = cur.set(g, &r, s_row, &after);
        let zero_f = self.constant(g, 0.0);
        let split = g.cmpf(CmpF::Oeq, &r, &zero_f);
        // r = 0: d_{i+1} less p, e_m = 0, and the step ends.
        let (new_s, new_c) = (g.arith(Arith::DivF, &f, &r), g.arith(Arith::DivF, gv, &r));
        let shifted = g.arith(Arith::SubF, &d_after, p);
        let diff = g.arith(Arith::SubF, &d_i, &shifted);
        let two_f = self.constant(g, 2.0);
        let cb = g.arith(Arith::MulF, &new_c, &bb);
        let twice_cb = g.arith(Arith::MulF, &two_f, &cb);
        let new_r = g.fma(&diff, &new_s, &twice_cb);
        let new_p = g.arith(Arith::MulF, &new_s, &new_r);
        let new_d = g.arith(Arith::AddF, &shifted, &new_p);
        let cr = g.arith(Arith::MulF, &new_c, &new_r);
        let new_g = g.arith(Arith::SubF, &cr, &bb);
        let d_value = g.select(&split, &shifted, &new_d);
        let d = self.set_d(g, &cur.with(&d), &d_value, &after);
        let e_m = cur.with(&d).get(g, s_row, m);
        let e_m = g.select(&split, &zero_f, &e_m);
        let d = cur.with(&d).set(g, &e_m, s_row, m);
        let d = if self.vectors {
            let ty = d.ty().clone();
            g.scf_if_values(&split, std::slice::from_ref(&ty), |_| vec![d.clone()], |q| {
                let (row_i, row_after) = (q.arith(Arith::AddI, &self.n, &i), q.arith(Arith::AddI, &self.n, &after));
                vec![rotate(q, &cur.with(&d), &self.n, (&row_i, &row_after), (&new_c, &new_s))]
            })[0]
                .clone()
        } else {
            d
        };
        let keep = |q: &mut Block, old: &Value, new: &Value| q.select(&split, old, new);
        vec![d, keep(g, s, &new_s), keep(g, c, &new_c), keep(g, p, &new_p), keep(g, gv, &new_g), split]
    }
}

/// The eigenvalues (rt1, rt2) of [[a, b], [b, c]], rt1 the larger in size, as LAPACK's
/// dlae2 computes them (rt2 from the determinant, not by cancellation).
fn two_by_two(g: &mut Block, a: &Value, b: &Value, c: &Value, element: ScalarType) -> (Value, Value) {
    let (zero, half) = (g.constant_f64(0.0, element), g.constant_f64(0.5, element));
    let sm = g.arith(Arith::AddF, a, c);
    let df = g.arith(Arith::SubF, a, c);
    let adf = g.math(MathUnary::AbsF, &df);
    let tb = g.arith(Arith::AddF, b, b);
    let ab = g.math(MathUnary::AbsF, &tb);
    let (a_size, c_size) = (g.math(MathUnary::AbsF, a), g.math(MathUnary::AbsF, c));
    let a_larger = g.cmpf(CmpF::Ogt, &a_size, &c_size);
    let acmx = g.select(&a_larger, a, c);
    let acmn = g.select(&a_larger, c, a);
    let rt = lapy2(g, &adf, &ab, element);
    // rt1 = (sm -+ rt) / 2 by sm's sign (0.5 rt where sm = 0), rt2 = (acmx / rt1) acmn -
    // (b / rt1) b.
    let minus_rt = g.negf(&rt);
    let negative = g.cmpf(CmpF::Olt, &sm, &zero);
    let signed = g.select(&negative, &minus_rt, &rt);
    let sum = g.arith(Arith::AddF, &sm, &signed);
    let rt1 = g.arith(Arith::MulF, &half, &sum);
    let q = g.arith(Arith::DivF, &acmx, &rt1);
    let q = g.arith(Arith::MulF, &q, &acmn);
    let w = g.arith(Arith::DivF, b, &rt1);
    let w = g.arith(Arith::MulF, &w, b);
    let rt2 = g.arith(Arith::SubF, &q, &w);
    let flat = g.cmpf(CmpF::Oeq, &sm, &zero);
    let half_rt = g.arith(Arith::MulF, &half, &rt);
    let minus_half = g.negf(&half_rt);
    (g.select(&flat, &half_rt, &rt1), g.select(&flat, &minus_half, &rt2))
}
