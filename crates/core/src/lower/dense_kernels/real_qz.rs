//! The real generalized Schur form of a pencil (A, B) as one dispatch (llvm-cpu): A = Q S
//! Z^T and B = Q T Z^T with Q and Z orthogonal, T upper triangular and S quasi-upper
//! triangular (1 x 1 blocks for real eigenvalues alpha / beta, 2 x 2 blocks for complex
//! pairs, where T's block is diagonal with positive elements), T's diagonal >= 0. That is
//! LAPACK's dgges (scipy's qz), by Moler and Stewart's route (Golub & Van Loan 7.7):
//!
//! - Hessenberg-triangular reduction: B's QR factorization, then A's elements below its
//!   subdiagonal zeroed column by column, each left rotation's fill in T undone by a right
//!   one.
//! - Double-shift QZ steps on the unreduced block [l, h]: the shifts are the eigenvalues
//!   of the trailing 2 x 2 pencil (every tenth step on a block an exceptional pair, as
//!   real_schur.rs takes), the first column of (S T^-1 - s1)(S T^-1 - s2) rotated onto e1
//!   and the bulge chased down. A diagonal element of T within eps ||T|| of 0 is an
//!   infinite eigenvalue: it is set to 0 and pushed down to the block's end by rotations,
//!   where it deflates.
//! - Each deflated 2 x 2 block is split into two 1 x 1 blocks where its eigenvalues are
//!   real (a right rotation onto an eigenvector, a left one onto its image); otherwise a
//!   one-sided Jacobi rotation of T's block makes T's block diagonal (LAPACK's dlagv2 does
//!   both with its own 2 x 2 SVD).
//!
//! Every transformation is a Givens rotation (also the bulge's 3-vectors, two rotations
//! each, where LAPACK reflects): one primitive for the left side, acting on S's and T's
//! rows and Q^T's, one for the right side, on S's and T's columns and Z^T's rows. The
//! kernel works on [S; T; Q^T; Z^T] (4n rows of n). A and B are each scaled by a power of
//! two first (exactly), so that the shifts' products neither overflow nor underflow; the
//! eigenvalues' ratio is scaled back where `sort` compares it with 1. The blocks may come
//! out in another order than LAPACK's, and Q's and Z's columns with other signs: both are
//! generalized Schur forms of (A, B).
//!
//! `sort` (scipy's ordqz, PyTensor's QZ(sort=...)) then moves the selected blocks to the
//! top (real_qz/reorder.rs).

mod reorder;

use super::real_schur::scaled_by_power;
use super::{deflating, last_where, region, shifts, transpose_in_place, turn, Flat};
use crate::lower::qr::lapy2;
use crate::lower::Context;
use crate::mlir::{Arith, Block, CmpF, CmpI, IndexArg, MathUnary, ScalarType, Value};

pub(in crate::lower) use reorder::QzSort;

/// QZ steps in all before the kernel gives up, per row (dhgeqz allows 30 n; `deflating`
/// counts them against max(n, 10)): S, T, Q and Z are then NaN, as PyTensor reports gges'
/// failure.
const STEPS_PER_ROW: i64 = 30;

/// (S, T, Q, Z) of the n x n matrices `a` and `bm`; all NaN where either has a NaN or an
/// infinity, the steps ran out or a reordering swap was refused.
pub(in crate::lower) fn real_qz(cx: &mut Context, b: &mut Block, a: &Value, bm: &Value, element: ScalarType, sort: Option<QzSort>) -> [Value; 4] {
    let n = b.tensor_dim(a, 0);
    let four = b.constant_index(4);
    let rows = b.arith(Arith::MulI, &n, &four);
    let out = region(cx, b, element, (&rows, &n), &[a, bm], &[], |k, m, _| {
        let n = m[0].cols.clone();
        let four = k.constant_index(4);
        let rows = k.arith(Arith::MulI, &n, &four);
        let begin = Flat::start(k, element, &rows, &n);
        Qz { n, element, sort }.run(k, &m[0], &m[1], begin)
    });
    [0, 1, 2, 3].map(|part| {
        let at = b.constant_index(part);
        let at = b.arith(Arith::MulI, &at, &n);
        let square = [IndexArg::Dyn(n.clone()), IndexArg::Dyn(n.clone())];
        b.tensor_extract_slice(&out, &[IndexArg::Dyn(at), IndexArg::Const(0)], &square)
    })
}

/// The kernel's parts: rows [part n, (part + 1) n).
#[derive(Clone, Copy)]
enum Part {
    S = 0,
    T = 1,
    Qt = 2,
    Zt = 3,
}

/// A rotation's pair of elements in one part: (part, (row, column) of x, of y).
type Place<'a> = (Part, (&'a Value, &'a Value), (&'a Value, &'a Value));

/// Which side a rotation acts on.
#[derive(Clone, Copy)]
enum Side {
    Left,
    Right,
}

struct Qz {
    n: Value,
    element: ScalarType,
    sort: Option<QzSort>,
}

impl Qz {
    fn constant(&self, g: &mut Block, v: f64) -> Value {
        g.constant_f64(v, self.element)
    }

    fn flat(&self, data: &Value) -> Flat {
        Flat::result(data, &self.n)
    }

    /// The kernel row of `part`'s row i.
    fn row(&self, g: &mut Block, part: Part, i: &Value) -> Value {
        let p = g.constant_index(part as i64);
        let first = g.arith(Arith::MulI, &self.n, &p);
        g.arith(Arith::AddI, &first, i)
    }

    fn get(&self, g: &mut Block, data: &Value, part: Part, i: &Value, j: &Value) -> Value {
        let r = self.row(g, part, i);
        self.flat(data).get(g, &r, j)
    }

    fn set(&self, g: &mut Block, data: &Value, v: &Value, part: Part, i: &Value, j: &Value) -> Value {
        let r = self.row(g, part, i);
        self.flat(data).set(g, v, &r, j)
    }

    fn zero_at(&self, g: &mut Block, data: &Value, part: Part, i: &Value, j: &Value) -> Value {
        let zero_f = self.constant(g, 0.0);
        self.set(g, data, &zero_f, part, i, j)
    }

    /// The data with the element (i, j) of `part` set to 0 where `when` (its own value
    /// kept otherwise: a scalar select, the tensor written either way).
    fn zero_if(&self, g: &mut Block, data: &Value, when: &Value, part: Part, i: &Value, j: &Value) -> Value {
        let x = self.get(g, data, part, i, j);
        let zero_f = self.constant(g, 0.0);
        let v = g.select(when, &zero_f, &x);
        self.set(g, data, &v, part, i, j)
    }

    /// (c, s) with [c s; -s c] (a, b) = (r, 0); (1, 0) where both are 0.
    fn givens(&self, g: &mut Block, a: &Value, b: &Value) -> (Value, Value) {
        let (x, y) = (g.math(MathUnary::AbsF, a), g.math(MathUnary::AbsF, b));
        let r = lapy2(g, &x, &y, self.element);
        let (zero_f, one_f) = (self.constant(g, 0.0), self.constant(g, 1.0));
        let none = g.cmpf(CmpF::Oeq, &r, &zero_f);
        let safe = g.select(&none, &one_f, &r);
        let (c, s) = (g.arith(Arith::DivF, a, &safe), g.arith(Arith::DivF, b, &safe));
        (g.select(&none, &one_f, &c), g.select(&none, &zero_f, &s))
    }

    /// Rows i and j times [c s; -s c] from the left, in S, T and Q^T; columns i and j
    /// times [c -s; s c] from the right (column i <- c col_i + s col_j, column j <- c col_j -
    /// s col_i), in S and T, and so Z^T's rows i and j. Each over all n places, in one loop
    /// of one body: elements that are 0 in both rows or columns (left of the active block,
    /// below it) stay 0, and a rotation written once keeps the kernel's code small (the
    /// call sites are many; an unrolled one each made QZ with sorting a 10-minute compile).
    fn rotation(&self, g: &mut Block, data: &Value, (i, j): (&Value, &Value), (c, s): (&Value, &Value), side: Side) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let minus_s = g.negf(s);
        let r = g
            .scf_for(&zero, &self.n, &one, std::slice::from_ref(data), |e, at, d| {
                let mut d = d[0].clone();
                let places: [Place; 3] = match side {
                    Side::Left => [(Part::S, (i, at), (j, at)), (Part::T, (i, at), (j, at)), (Part::Qt, (i, at), (j, at))],
                    Side::Right => [(Part::S, (at, i), (at, j)), (Part::T, (at, i), (at, j)), (Part::Zt, (i, at), (j, at))],
                };
                let values: Vec<(Value, Value)> = places
                    .iter()
                    .map(|(part, x, y)| {
                        let (x, y) = (self.get(e, &d, *part, x.0, x.1), self.get(e, &d, *part, y.0, y.1));
                        turn(e, &x, &y, c, &minus_s)
                    })
                    .collect();
                for ((part, x, y), (vx, vy)) in places.iter().zip(values) {
                    d = self.set(e, &d, &vx, *part, x.0, x.1);
                    d = self.set(e, &d, &vy, *part, y.0, y.1);
                }
                Ok::<_, String>(vec![d])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    }

    fn left(&self, g: &mut Block, data: &Value, rows: (&Value, &Value), cs: (&Value, &Value)) -> Value {
        self.rotation(g, data, rows, cs, Side::Left)
    }

    fn right(&self, g: &mut Block, data: &Value, columns: (&Value, &Value), cs: (&Value, &Value)) -> Value {
        self.rotation(g, data, columns, cs, Side::Right)
    }

    /// Column j of S and T (all rows) and row j of Z^T negated where `flip`.
    fn negate_where(&self, g: &mut Block, data: &Value, j: &Value, flip: &Value) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let (plus, minus) = (self.constant(g, 1.0), self.constant(g, -1.0));
        let sign = g.select(flip, &minus, &plus);
        let r = g
            .scf_for(&zero, &self.n, &one, std::slice::from_ref(data), |e, r, d| {
                let mut d = d[0].clone();
                for (part, i, k) in [(Part::S, r, j), (Part::T, r, j), (Part::Zt, j, r)] {
                    let x = self.get(e, &d, part, i, k);
                    let x = e.arith(Arith::MulF, &x, &sign);
                    d = self.set(e, &d, &x, part, i, k);
                }
                Ok::<_, String>(vec![d])
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        r[0].clone()
    }

    /// T's diagonal element j made >= 0 (its column and S's negated, and Z's).
    fn positive(&self, g: &mut Block, data: &Value, j: &Value) -> Value {
        let t = self.get(g, data, Part::T, j, j);
        let zero_f = self.constant(g, 0.0);
        let negative = g.cmpf(CmpF::Olt, &t, &zero_f);
        self.negate_where(g, data, j, &negative)
    }

    /// The kernel's body: [A; B; I; I], scaled, reduced, iterated, sorted, scaled back,
    /// Q^T and Z^T transposed.
    fn run(&self, g: &mut Block, a: &Flat, bm: &Flat, begin: Value) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let n = self.n.clone();
        let (zero_f, one_f) = (self.constant(g, 0.0), self.constant(g, 1.0));
        let r = g
            .scf_for(&zero, &n, &one, &[begin], |h, i, d| {
                h.scf_for(&zero, &n, &one, d, |e, j, d| {
                    let (x, y) = (a.get(e, i, j), bm.get(e, i, j));
                    let on = e.cmpi(CmpI::Eq, i, j);
                    let eye = e.select(&on, &one_f, &zero_f);
                    let mut d = d[0].clone();
                    for (part, v) in [(Part::S, &x), (Part::T, &y), (Part::Qt, &eye), (Part::Zt, &eye)] {
                        d = self.set(e, &d, v, part, i, j);
                    }
                    Ok::<_, String>(vec![d])
                })
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        let square = g.arith(Arith::MulI, &n, &n);
        let twice = g.arith(Arith::AddI, &square, &square);
        let (data, back_s, s_bad) = scaled_by_power(g, r[0].clone(), (&zero, &square), self.element);
        let (data, back_t, t_bad) = scaled_by_power(g, data, (&square, &twice), self.element);
        let not_finite = g.arith(Arith::OrI, &s_bad, &t_bad);
        let data = self.reduce(g, data);
        let (data, ran_out) = self.iterate(g, data);
        let failed = g.arith(Arith::OrI, &ran_out, &not_finite);
        let (data, failed) = match self.sort {
            Some(sort) => {
                // The eigenvalues' scale: alpha / beta of the scaled pencil times this.
                let ratio = g.arith(Arith::DivF, &back_s[0], &back_t[0]);
                let post = g.arith(Arith::DivF, &back_s[1], &back_t[1]);
                let ratio = g.arith(Arith::MulF, &ratio, &post);
                let (data, refused) = self.reorder(g, data, sort, &ratio);
                (data, g.arith(Arith::OrI, &failed, &refused))
            }
            None => (data, failed),
        };
        let data = self.finish(g, data, [&back_s, &back_t], &failed);
        let at_q = g.arith(Arith::AddI, &twice, &square);
        let data = transpose_in_place(g, &self.flat(&data).at(&twice), &n);
        transpose_in_place(g, &self.flat(&data).at(&at_q), &n)
    }

    /// Hessenberg-triangular form: T's elements below its diagonal zeroed column by
    /// column from the bottom (left rotations), then S's below its subdiagonal, each left
    /// rotation's fill T[i, i - 1] zeroed by a right rotation of columns i - 1, i.
    fn reduce(&self, g: &mut Block, data: Value) -> Value {
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let n = self.n.clone();
        // Over (j, i) with i from the bottom up to j + first: `step(d, i, j)`.
        let sweep = |g: &mut Block, data: Value, first: &Value, step: &dyn Fn(&mut Block, &Value, &Value, &Value) -> Value| -> Value {
            let r = g
                .scf_for(&zero, &n, &one, &[data], |h, j, d| {
                    let low = h.arith(Arith::AddI, j, first);
                    let low = h.arith(Arith::MinUI, &low, &n);
                    let count = h.arith(Arith::SubI, &n, &low);
                    h.scf_for(&zero, &count, &one, d, |e, back, d| {
                        let last = e.arith(Arith::SubI, &n, &one);
                        let i = e.arith(Arith::SubI, &last, back);
                        Ok::<_, String>(vec![step(e, &d[0], &i, j)])
                    })
                })
                .unwrap_or_else(|e: String| unreachable!("{e}"));
            r[0].clone()
        };
        let data = sweep(g, data, &one, &|e, d, i, j| {
            let above = e.arith(Arith::SubI, i, &one);
            let (x, y) = (self.get(e, d, Part::T, &above, j), self.get(e, d, Part::T, i, j));
            let (c, s) = self.givens(e, &x, &y);
            let d = self.left(e, d, (&above, i), (&c, &s));
            self.zero_at(e, &d, Part::T, i, j)
        });
        sweep(g, data, &two, &|e, d, i, j| {
            let above = e.arith(Arith::SubI, i, &one);
            let (x, y) = (self.get(e, d, Part::S, &above, j), self.get(e, d, Part::S, i, j));
            let (c, s) = self.givens(e, &x, &y);
            let d = self.left(e, d, (&above, i), (&c, &s));
            let d = self.zero_at(e, &d, Part::S, i, j);
            let (x, y) = (self.get(e, &d, Part::T, i, i), self.get(e, &d, Part::T, i, &above));
            let (c, s) = self.givens(e, &x, &y);
            let d = self.right(e, &d, (i, &above), (&c, &s));
            self.zero_at(e, &d, Part::T, i, &above)
        })
    }

    /// eps times the Frobenius norm of the part (at least the smallest normal): the size
    /// below which its elements count as 0.
    fn tolerance(&self, g: &mut Block, data: &Value, part: Part) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let zero_f = self.constant(g, 0.0);
        let sum = g
            .scf_for(&zero, &self.n, &one, &[zero_f], |h, i, acc| {
                h.scf_for(&zero, &self.n, &one, acc, |e, j, acc| {
                    let x = self.get(e, data, part, i, j);
                    Ok::<_, String>(vec![e.fma(&x, &x, &acc[0])])
                })
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        let norm = g.math(MathUnary::Sqrt, &sum[0]);
        let f32 = self.element == ScalarType::F32;
        let eps = self.constant(g, if f32 { f32::EPSILON as f64 } else { f64::EPSILON });
        let tiny = self.constant(g, if f32 { f32::MIN_POSITIVE as f64 } else { f64::MIN_POSITIVE });
        let bound = g.arith(Arith::MulF, &eps, &norm);
        g.arith(Arith::MaximumF, &bound, &tiny)
    }

    /// The QZ steps (`deflating`: rows [0, top) still to be reduced). Each pass finds the start l of the unreduced block
    /// ending at h = top - 1, then deflates an infinite eigenvalue, a 1 x 1 block or a 2 x 2
    /// one (standardized), or takes a QZ step on [l, h]. Returns the data and whether the
    /// steps ran out.
    fn iterate(&self, g: &mut Block, data: Value) -> (Value, Value) {
        let atol = self.tolerance(g, &data, Part::S);
        let btol = self.tolerance(g, &data, Part::T);
        deflating(g, data, &self.n, STEPS_PER_ROW, &|c, data, h, its| {
            let (zero, one, two) = (c.constant_index(0), c.constant_index(1), c.constant_index(2));
            // l: the last i in (0, h] with S[i, i - 1] negligible (set to 0), else 0.
            let negligible = |f: &mut Block, i: &Value| {
                let one = f.constant_index(1);
                let i = f.arith(Arith::MaxUI, i, &one);
                let before = f.arith(Arith::SubI, &i, &one);
                let x = self.get(f, data, Part::S, &i, &before);
                let x = f.math(MathUnary::AbsF, &x);
                f.cmpf(CmpF::Ule, &x, &atol)
            };
            let l = last_where(c, h, &zero, &negligible);
            let split = c.cmpi(CmpI::Ugt, &l, &zero);
            let before_l = c.arith(Arith::MaxUI, &l, &one);
            let before_l = c.arith(Arith::SubI, &before_l, &one);
            let data = self.zero_if(c, data, &split, Part::S, &l, &before_l);
            // z: the last j in [l, h] with T[j, j] negligible (an infinite eigenvalue).
            let tiny_t = |f: &mut Block, j: &Value| {
                let x = self.get(f, &data, Part::T, j, j);
                let x = f.math(MathUnary::AbsF, &x);
                f.cmpf(CmpF::Ule, &x, &btol)
            };
            let z = last_where(c, h, &l, &tiny_t);
            let infinite = tiny_t(c, &z);
            let single = c.cmpi(CmpI::Eq, &l, h);
            let h_less = c.arith(Arith::SubI, h, &one);
            let pair = c.cmpi(CmpI::Eq, &l, &h_less);
            let ty = data.ty().clone();
            let next = c.scf_if_values(
                &infinite,
                std::slice::from_ref(&ty),
                |q| vec![self.push_down(q, &data, &z, &l, h)],
                |q| {
                    q.scf_if_values(
                        &single,
                        std::slice::from_ref(&ty),
                        |p| vec![self.positive(p, &data, h)],
                        |p| {
                            p.scf_if_values(
                                &pair,
                                std::slice::from_ref(&ty),
                                |o| vec![self.standardize(o, &data, &h_less)],
                                |o| {
                                    let its = o.arith(Arith::AddI, its, &one);
                                    vec![self.step(o, &data, &l, h, &its)]
                                },
                            )
                        },
                    )
                },
            );
            // An infinite eigenvalue or a single block deflates one row, a pair two, a
            // step none.
            let dropped = c.select(&pair, &two, &zero);
            let dropped = c.select(&single, &one, &dropped);
            (next[0].clone(), c.select(&infinite, &one, &dropped))
        })
    }

    /// T[z, z] (negligible) set to 0 and the zero pushed down to T[h, h]: for k = z .. h - 1
    /// a left rotation of rows k, k + 1 zeroes T[k + 1, k + 1] (T[k, k] and T[k + 1, k]
    /// being 0) and a right one of columns k - 1, k the fill S[k + 1, k - 1]; then a right
    /// rotation of columns h - 1, h zeroes S[h, h - 1], and the infinite eigenvalue at h
    /// deflates.
    fn push_down(&self, g: &mut Block, data: &Value, z: &Value, l: &Value, h: &Value) -> Value {
        let one = g.constant_index(1);
        let data = self.zero_at(g, data, Part::T, z, z);
        let r = g
            .scf_for(z, h, &one, &[data], |e, k, d| {
                let k1 = e.arith(Arith::AddI, k, &one);
                let (x, y) = (self.get(e, &d[0], Part::T, k, &k1), self.get(e, &d[0], Part::T, &k1, &k1));
                let (c, s) = self.givens(e, &x, &y);
                let d = self.left(e, &d[0], (k, &k1), (&c, &s));
                let d = self.zero_at(e, &d, Part::T, &k1, &k1);
                // k > l: the fill S[k + 1, k - 1]; at k = l nothing (column l with itself,
                // the identity).
                let inner = e.cmpi(CmpI::Ugt, k, l);
                let km = e.arith(Arith::SubI, k, &one);
                let km = e.select(&inner, &km, k);
                let (x, y) = (self.get(e, &d, Part::S, &k1, k), self.get(e, &d, Part::S, &k1, &km));
                let (c, s) = self.givens(e, &x, &y);
                let (one_f, zero_f) = (self.constant(e, 1.0), self.constant(e, 0.0));
                let (c, s) = (e.select(&inner, &c, &one_f), e.select(&inner, &s, &zero_f));
                let d = self.right(e, &d, (k, &km), (&c, &s));
                Ok::<_, String>(vec![self.zero_if(e, &d, &inner, Part::S, &k1, &km)])
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        // S[h, h - 1] (where the block has more than one row).
        let longer = g.cmpi(CmpI::Ugt, h, l);
        let hm = g.arith(Arith::SubI, h, &one);
        let hm = g.select(&longer, &hm, h);
        let d = &r[0];
        let (x, y) = (self.get(g, d, Part::S, h, h), self.get(g, d, Part::S, h, &hm));
        let (c, s) = self.givens(g, &x, &y);
        let (one_f, zero_f) = (self.constant(g, 1.0), self.constant(g, 0.0));
        let (c, s) = (g.select(&longer, &c, &one_f), g.select(&longer, &s, &zero_f));
        let d = self.right(g, d, (h, &hm), (&c, &s));
        self.zero_if(g, &d, &longer, Part::S, h, &hm)
    }

    /// S T^-1 on the 2 x 2 blocks at rows and columns i, i + 1: (n11, n12, n21, n22).
    fn ratio_block(&self, g: &mut Block, data: &Value, i: &Value) -> [Value; 4] {
        let one = g.constant_index(1);
        let i1 = g.arith(Arith::AddI, i, &one);
        let [s11, s12, s21, s22] = [(i, i), (i, &i1), (&i1, i), (&i1, &i1)].map(|(r, c)| self.get(g, data, Part::S, r, c));
        let [t11, t12, t22] = [(i, i), (i, &i1), (&i1, &i1)].map(|(r, c)| self.get(g, data, Part::T, r, c));
        let n11 = g.arith(Arith::DivF, &s11, &t11);
        let n21 = g.arith(Arith::DivF, &s21, &t11);
        let x = g.arith(Arith::MulF, &n11, &t12);
        let x = g.arith(Arith::SubF, &s12, &x);
        let n12 = g.arith(Arith::DivF, &x, &t22);
        let y = g.arith(Arith::MulF, &n21, &t12);
        let y = g.arith(Arith::SubF, &s22, &y);
        let n22 = g.arith(Arith::DivF, &y, &t22);
        [n11, n12, n21, n22]
    }

    /// One double-shift QZ step on the block [l, h] (h - l >= 2), `its` its steps so far:
    /// the first column of (M - s1)(M - s2), M = S T^-1, rotated onto e1 by two left
    /// rotations, then the bulge chased down: at each k, left rotations of rows k + 1 and
    /// k + 2, then k and k + 1, zero S's column k - 1 below its subdiagonal; right
    /// rotations of columns (k + 1, k + 2), (k, k + 2) and (k, k + 1) T's fill below its
    /// diagonal.
    fn step(&self, g: &mut Block, data: &Value, l: &Value, h: &Value, its: &Value) -> Value {
        let (one, two, three) = (g.constant_index(1), g.constant_index(2), g.constant_index(3));
        let hm = g.arith(Arith::SubI, h, &one);
        let [b11, b12, b21, b22] = self.ratio_block(g, data, &hm);
        let sum = g.arith(Arith::AddF, &b11, &b22);
        let p = g.arith(Arith::MulF, &b11, &b22);
        let q = g.arith(Arith::MulF, &b12, &b21);
        let product = g.arith(Arith::SubF, &p, &q);
        // The exceptional pair from M's last two subdiagonal elements.
        let hmm = g.arith(Arith::SubI, h, &two);
        let w1 = self.get(g, data, Part::S, h, &hm);
        let d1 = self.get(g, data, Part::T, &hm, &hm);
        let w2 = self.get(g, data, Part::S, &hm, &hmm);
        let d2 = self.get(g, data, Part::T, &hmm, &hmm);
        let w1 = g.arith(Arith::DivF, &w1, &d1);
        let w2 = g.arith(Arith::DivF, &w2, &d2);
        let (sum, product) = shifts(g, its, (sum, product), &b22, [&w1, &w2]);
        // The first column of M^2 - sum M + product at rows l, l + 1, l + 2.
        let [m11, m12, m21, m22] = self.ratio_block(g, data, l);
        let (l1, l2) = (g.arith(Arith::AddI, l, &one), g.arith(Arith::AddI, l, &two));
        let s32 = self.get(g, data, Part::S, &l2, &l1);
        let t22 = self.get(g, data, Part::T, &l1, &l1);
        let m32 = g.arith(Arith::DivF, &s32, &t22);
        let x = g.arith(Arith::SubF, &m11, &sum);
        let x = g.fma(&x, &m11, &product);
        let x = g.fma(&m12, &m21, &x);
        let y = g.arith(Arith::AddF, &m11, &m22);
        let y = g.arith(Arith::SubF, &y, &sum);
        let y = g.arith(Arith::MulF, &m21, &y);
        let z = g.arith(Arith::MulF, &m21, &m32);
        let chased = g
            .scf_for(l, h, &one, &[data.clone(), x, y, z], |e, k, c| {
                let (one_f, zero_f) = (self.constant(e, 1.0), self.constant(e, 0.0));
                let k1 = e.arith(Arith::AddI, k, &one);
                let k2 = e.arith(Arith::AddI, k, &two);
                // Three rows while k + 2 <= h; the last step has two (row k + 2 clamped,
                // its rotations the identity).
                let three_rows = e.cmpi(CmpI::Ule, &k2, h);
                let k2 = e.select(&three_rows, &k2, &k1);
                let inner = e.cmpi(CmpI::Ugt, k, l);
                let km = e.arith(Arith::SubI, k, &one);
                let km = e.select(&inner, &km, k);
                let identity = |e: &mut Block, (c, s): (Value, Value), on: &Value| (e.select(on, &c, &one_f), e.select(on, &s, &zero_f));
                let z = e.select(&three_rows, &c[3], &zero_f);
                let rot = self.givens(e, &c[2], &z);
                let (cz, sz) = identity(e, rot, &three_rows);
                let d = self.left(e, &c[0], (&k1, &k2), (&cz, &sz));
                let yz = {
                    let (ay, az) = (e.math(MathUnary::AbsF, &c[2]), e.math(MathUnary::AbsF, &z));
                    let r = lapy2(e, &ay, &az, self.element);
                    // The rotated y keeps its sign where z is 0 (the rotation the identity).
                    let z_zero = e.cmpf(CmpF::Oeq, &z, &zero_f);
                    e.select(&z_zero, &c[2], &r)
                };
                let (cy, sy) = self.givens(e, &c[1], &yz);
                let d = self.left(e, &d, (k, &k1), (&cy, &sy));
                // The bulge's column k - 1 below the subdiagonal is now 0.
                let d = self.zero_if(e, &d, &inner, Part::S, &k1, &km);
                let both = e.arith(Arith::AndI, &inner, &three_rows);
                let d = self.zero_if(e, &d, &both, Part::S, &k2, &km);
                // T's fill: row k + 2's elements at k + 1 and k, then row k + 1's at k.
                let (x, y) = (self.get(e, &d, Part::T, &k2, &k2), self.get(e, &d, Part::T, &k2, &k1));
                let rot = self.givens(e, &x, &y);
                let (c1, s1) = identity(e, rot, &three_rows);
                let d = self.right(e, &d, (&k2, &k1), (&c1, &s1));
                let (x, y) = (self.get(e, &d, Part::T, &k2, &k2), self.get(e, &d, Part::T, &k2, k));
                let rot = self.givens(e, &x, &y);
                let (c2, s2) = identity(e, rot, &three_rows);
                let d = self.right(e, &d, (&k2, k), (&c2, &s2));
                let (x, y) = (self.get(e, &d, Part::T, &k1, &k1), self.get(e, &d, Part::T, &k1, k));
                let (c3, s3) = self.givens(e, &x, &y);
                let d = self.right(e, &d, (&k1, k), (&c3, &s3));
                let d = self.zero_at(e, &d, Part::T, &k1, k);
                let d = self.zero_if(e, &d, &three_rows, Part::T, &k2, k);
                let d = self.zero_if(e, &d, &three_rows, Part::T, &k2, &k1);
                // The next bulge: S's column k at rows k + 1 .. k + 3 (past h: 0).
                let x = self.get(e, &d, Part::S, &k1, k);
                let y = self.get(e, &d, Part::S, &k2, k);
                let y = e.select(&three_rows, &y, &zero_f);
                let k3 = e.arith(Arith::AddI, k, &three);
                let four_rows = e.cmpi(CmpI::Ule, &k3, h);
                let k3 = e.select(&four_rows, &k3, k);
                let z = self.get(e, &d, Part::S, &k3, k);
                let z = e.select(&four_rows, &z, &zero_f);
                Ok::<_, String>(vec![d, x, y, z])
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        chased[0].clone()
    }

    /// The 2 x 2 block at rows and columns i, i + 1 (T's part upper triangular, its
    /// diagonal not negligible) in standard form: real eigenvalues split into two 1 x 1
    /// blocks (a right rotation whose first column is an eigenvector z of the larger row
    /// of S - lambda T, a left one onto T z, or S z where that is larger); a complex pair
    /// with T's block diagonal (a one-sided Jacobi rotation of T's columns, then the left
    /// rotation that takes T's first column to its first axis). T's diagonal made >= 0.
    fn standardize(&self, g: &mut Block, data: &Value, i: &Value) -> Value {
        let one = g.constant_index(1);
        let i1 = g.arith(Arith::AddI, i, &one);
        let [s11, s12, s21, s22] = [(i, i), (i, &i1), (&i1, i), (&i1, &i1)].map(|(r, c)| self.get(g, data, Part::S, r, c));
        let [t11, t12, t22] = [(i, i), (i, &i1), (&i1, &i1)].map(|(r, c)| self.get(g, data, Part::T, r, c));
        let [n11, n12, n21, n22] = self.ratio_block(g, data, i);
        let (zero_f, half) = (self.constant(g, 0.0), self.constant(g, 0.5));
        let abs = |g: &mut Block, x: &Value| g.math(MathUnary::AbsF, x);
        let size2 = |g: &mut Block, x: &Value, y: &Value| {
            let (x, y) = (abs(g, x), abs(g, y));
            lapy2(g, &x, &y, self.element)
        };
        let p = g.arith(Arith::SubF, &n11, &n22);
        let p = g.arith(Arith::MulF, &half, &p);
        let cross = g.arith(Arith::MulF, &n12, &n21);
        let disc = g.fma(&p, &p, &cross);
        let real = g.cmpf(CmpF::Oge, &disc, &zero_f);
        // Real: lambda = n22 + p + sign(p) sqrt(disc); M = S - lambda T.
        let root = g.arith(Arith::MaximumF, &disc, &zero_f);
        let root = g.math(MathUnary::Sqrt, &root);
        let root = g.copysign(&root, &p);
        let lambda = g.arith(Arith::AddF, &n22, &p);
        let lambda = g.arith(Arith::AddF, &lambda, &root);
        let minus = |g: &mut Block, s: &Value, t: &Value| {
            let lt = g.arith(Arith::MulF, &lambda, t);
            g.arith(Arith::SubF, s, &lt)
        };
        let (m11, m12, m22) = (minus(g, &s11, &t11), minus(g, &s12, &t12), minus(g, &s22, &t22));
        let (first, second) = (size2(g, &m11, &m12), size2(g, &s21, &m22));
        let upper = g.cmpf(CmpF::Oge, &first, &second);
        let r0 = g.select(&upper, &m11, &s21);
        let r1 = g.select(&upper, &m12, &m22);
        let minus_r1 = g.negf(&r1);
        let (rc, rs) = self.givens(g, &minus_r1, &r0);
        // T z and S z (z = (rc, rs)).
        let lin = |g: &mut Block, x: &Value, u: &Value, y: &Value, w: &Value| {
            let yw = g.arith(Arith::MulF, y, w);
            g.fma(x, u, &yw)
        };
        let tz0 = lin(g, &rc, &t11, &rs, &t12);
        let tz1 = g.arith(Arith::MulF, &rs, &t22);
        let sz0 = lin(g, &rc, &s11, &rs, &s12);
        let sz1 = lin(g, &rc, &s21, &rs, &s22);
        let (tn, sn) = (size2(g, &tz0, &tz1), size2(g, &sz0, &sz1));
        let by_t = g.cmpf(CmpF::Oge, &tn, &sn);
        let q0 = g.select(&by_t, &tz0, &sz0);
        let q1 = g.select(&by_t, &tz1, &sz1);
        let (rqc, rqs) = self.givens(g, &q0, &q1);
        // Complex: columns (t11, 0) and (t12, t22) made orthogonal.
        let alpha = g.arith(Arith::MulF, &t11, &t11);
        let beta = g.arith(Arith::MulF, &t22, &t22);
        let beta = g.fma(&t12, &t12, &beta);
        let gamma = g.arith(Arith::MulF, &t11, &t12);
        let gap = g.arith(Arith::SubF, &beta, &alpha);
        let twice = g.arith(Arith::AddF, &gamma, &gamma);
        let no_gamma = g.cmpf(CmpF::Oeq, &gamma, &zero_f);
        let one_f = self.constant(g, 1.0);
        let safe = g.select(&no_gamma, &one_f, &twice);
        let zeta = g.arith(Arith::DivF, &gap, &safe);
        let zeta_size = abs(g, &zeta);
        let hyp = lapy2(g, &one_f, &zeta_size, self.element);
        let denominator = g.arith(Arith::AddF, &zeta_size, &hyp);
        let t = g.arith(Arith::DivF, &one_f, &denominator);
        let t = g.copysign(&t, &zeta);
        let t_size = abs(g, &t);
        let th = lapy2(g, &one_f, &t_size, self.element);
        let jc = g.arith(Arith::DivF, &one_f, &th);
        let js = g.arith(Arith::MulF, &jc, &t);
        let jc = g.select(&no_gamma, &one_f, &jc);
        let js = g.select(&no_gamma, &zero_f, &js);
        let minus_js = g.negf(&js);
        // T's first column after the right rotation (c, -s): (c t11 - s t12, -s t22).
        let u0 = lin(g, &jc, &t11, &minus_js, &t12);
        let u1 = g.arith(Arith::MulF, &minus_js, &t22);
        let (uc, us) = self.givens(g, &u0, &u1);
        let cz = g.select(&real, &rc, &jc);
        let sz = g.select(&real, &rs, &minus_js);
        let cq = g.select(&real, &rqc, &uc);
        let sq = g.select(&real, &rqs, &us);
        let d = self.right(g, data, (i, &i1), (&cz, &sz));
        let d = self.left(g, &d, (i, &i1), (&cq, &sq));
        let d = self.zero_at(g, &d, Part::T, &i1, i);
        let d = self.zero_if(g, &d, &real, Part::S, &i1, i);
        let yes = g.constant_int(1, ScalarType::I1);
        let complex = g.arith(Arith::XOrI, &real, &yes);
        let d = self.zero_if(g, &d, &complex, Part::T, i, &i1);
        let d = self.positive(g, &d, i);
        self.positive(g, &d, &i1)
    }

    /// S and T scaled back (`back`: each part's two factors), zeros below S's subdiagonal
    /// and T's diagonal; everything NaN where `failed`.
    fn finish(&self, g: &mut Block, data: Value, back: [&[Value; 2]; 2], failed: &Value) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let n = self.n.clone();
        let (zero_f, nan) = (self.constant(g, 0.0), self.constant(g, f64::NAN));
        let four = g.constant_index(4);
        let rows = g.arith(Arith::MulI, &n, &four);
        let r = g
            .scf_for(&zero, &rows, &one, &[data], |h, i, d| {
                h.scf_for(&zero, &n, &one, d, |e, j, d| {
                    let t = self.flat(&d[0]);
                    let x = t.get(e, i, j);
                    // Part and row within it.
                    let in_s = e.cmpi(CmpI::Ult, i, &n);
                    let twice = e.arith(Arith::AddI, &n, &n);
                    let in_t = e.cmpi(CmpI::Ult, i, &twice);
                    let past_s = e.cmpi(CmpI::Uge, i, &n);
                    let in_t = e.arith(Arith::AndI, &in_t, &past_s);
                    let in_second = e.arith(Arith::SubI, i, &n);
                    let row = e.select(&in_s, i, &in_second);
                    let (f0, f1) = (e.select(&in_s, &back[0][0], &back[1][0]), e.select(&in_s, &back[0][1], &back[1][1]));
                    let scaled = e.arith(Arith::MulF, &x, &f0);
                    let scaled = e.arith(Arith::MulF, &scaled, &f1);
                    let j1 = e.arith(Arith::AddI, j, &one);
                    let below_s = e.cmpi(CmpI::Ugt, &row, &j1);
                    let below_t = e.cmpi(CmpI::Ugt, &row, j);
                    let below = e.select(&in_s, &below_s, &below_t);
                    let value = e.select(&below, &zero_f, &scaled);
                    let either = e.arith(Arith::OrI, &in_s, &in_t);
                    let v = e.select(&either, &value, &x);
                    let v = e.select(failed, &nan, &v);
                    Ok::<_, String>(vec![t.set(e, &v, i, j)])
                })
            })
            .unwrap_or_else(|e: String| unreachable!("{e}"));
        r[0].clone()
    }
}
