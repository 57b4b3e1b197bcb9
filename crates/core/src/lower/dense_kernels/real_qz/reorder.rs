//! Reordering a generalized real Schur form so that the eigenvalues `sort` selects lead
//! (PyTensor's QZ(sort=...), which calls LAPACK's tgsen after gges: each selected block
//! moves up by swaps of adjacent blocks, tgexc's and tgex2's method). Selected blocks
//! keep their relative order, and so do the others.
//!
//! Swapping the blocks (S11, T11) (n1 x n1) and (S22, T22) (n2 x n2) below them: R and L
//! with S11 R - L S22 = -S12 and T11 R - L T22 = -T12 (the generalized Sylvester equation,
//! 2 n1 n2 unknowns, solved densely) make S [R; I] = [L; I] S22 and T [R; I] = [L; I] T22,
//! so orthogonal Z and Q whose first n2 columns span [R; I] and [L; I] (Givens QR of
//! each) give Q^T (S, T) Z with the two blocks' eigenvalues in the other order. The part
//! below the new diagonal blocks is rounding only; where it is not below 10 eps of either
//! block's largest element (the blocks' eigenvalues too close for an accurate swap:
//! tgex2's weak stability test) the swap is refused, and so the whole form is (NaN, as
//! PyTensor reports tgsen's failure). Each new block is then put in standard form again.

use super::{Part, Qz};
use crate::lower::dense_kernels::block_order::{reorder, Blocks};
use crate::lower::dense_kernels::quasi_sylvester::solve_small;
use crate::mlir::{Arith, Block, CmpF, MathUnary, ScalarType, Value};

/// Which eigenvalues lambda = alpha / beta go first: PyTensor's QZ `sort` strings (its
/// sort functions: strict comparisons, an infinite eigenvalue (beta = 0) selected only by
/// "ouc", where alpha != 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::lower) enum QzSort {
    LeftHalfPlane,
    RightHalfPlane,
    InsideUnitCircle,
    OutsideUnitCircle,
}

impl QzSort {
    pub(in crate::lower) fn parse(name: &str) -> Option<QzSort> {
        match name {
            "lhp" => Some(QzSort::LeftHalfPlane),
            "rhp" => Some(QzSort::RightHalfPlane),
            "iuc" => Some(QzSort::InsideUnitCircle),
            "ouc" => Some(QzSort::OutsideUnitCircle),
            _ => None,
        }
    }
}

/// The form's blocks (S's) as the walk of block_order.rs sees them, selected by `sort`
/// (the eigenvalues scaled back by `ratio`).
struct Sorting<'a> {
    qz: &'a Qz,
    sort: QzSort,
    ratio: &'a Value,
}

impl Blocks for Sorting<'_> {
    fn order(&self) -> &Value {
        &self.qz.n
    }

    fn element(&self, g: &mut Block, data: &Value, i: &Value, j: &Value) -> Value {
        self.qz.get(g, data, Part::S, i, j)
    }

    fn selected(&self, g: &mut Block, data: &Value, k: &Value, pair: &Value) -> Value {
        self.qz.selected(g, data, k, pair, self.sort, self.ratio)
    }

    fn swap(&self, g: &mut Block, data: &Value, j1: &Value, n1: usize, n2: usize) -> (Value, Value) {
        self.qz.swap(g, data, j1, n1, n2)
    }
}

impl Qz {
    /// The form reordered by `sort` (block_order.rs; tgsen makes no check of the order
    /// after its swaps, and so neither does this). `ratio` scales the scaled pencil's
    /// eigenvalues back to (A, B)'s. Returns the data and whether a swap was refused.
    pub(super) fn reorder(&self, g: &mut Block, data: Value, sort: QzSort, ratio: &Value) -> (Value, Value) {
        reorder(&Sorting { qz: self, sort, ratio }, g, data, false)
    }

    /// Whether `sort` selects the block at k: a 1 x 1 block's alpha and beta are S's and
    /// T's diagonal elements; a pair's (T's block diagonal, positive) real part is half the
    /// trace of S T^-1 on the block and its size the square root of that block's
    /// determinant.
    fn selected(&self, g: &mut Block, data: &Value, k: &Value, pair: &Value, sort: QzSort, ratio: &Value) -> Value {
        let one = g.constant_index(1);
        let next = g.arith(Arith::AddI, k, &one);
        let other = g.select(pair, &next, k);
        let [s11, s12, s21, s22] = [(k, k), (k, &other), (&other, k), (&other, &other)].map(|(r, c)| self.get(g, data, Part::S, r, c));
        let (t11, t22) = (self.get(g, data, Part::T, k, k), self.get(g, data, Part::T, &other, &other));
        let (zero_f, half) = (self.constant(g, 0.0), self.constant(g, 0.5));
        let finite = g.cmpf(CmpF::Une, &t11, &zero_f);
        // Pair: n11 = s11 / t11, n22 = s22 / t22, det = n11 n22 - (s12 / t22)(s21 / t11).
        let safe = |g: &mut Block, t: &Value| {
            let one_f = g.constant_f64(1.0, t.scalar());
            let none = g.cmpf(CmpF::Oeq, t, &zero_f);
            g.select(&none, &one_f, t)
        };
        let (u11, u22) = (safe(g, &t11), safe(g, &t22));
        let n11 = g.arith(Arith::DivF, &s11, &u11);
        let n22 = g.arith(Arith::DivF, &s22, &u22);
        let n12 = g.arith(Arith::DivF, &s12, &u22);
        let n21 = g.arith(Arith::DivF, &s21, &u11);
        let real = g.arith(Arith::AddF, &n11, &n22);
        let real = g.arith(Arith::MulF, &half, &real);
        let real = g.select(pair, &real, &n11);
        match sort {
            QzSort::LeftHalfPlane | QzSort::RightHalfPlane => {
                let order = if sort == QzSort::LeftHalfPlane { CmpF::Olt } else { CmpF::Ogt };
                let side = g.cmpf(order, &real, &zero_f);
                g.arith(Arith::AndI, &finite, &side)
            }
            QzSort::InsideUnitCircle | QzSort::OutsideUnitCircle => {
                let p = g.arith(Arith::MulF, &n11, &n22);
                let q = g.arith(Arith::MulF, &n12, &n21);
                let det = g.arith(Arith::SubF, &p, &q);
                let det = g.math(MathUnary::AbsF, &det);
                let size = g.math(MathUnary::Sqrt, &det);
                let single = g.math(MathUnary::AbsF, &n11);
                let size = g.select(pair, &size, &single);
                let size = g.arith(Arith::MulF, &size, ratio);
                let unit = self.constant(g, 1.0);
                if sort == QzSort::InsideUnitCircle {
                    let inside = g.cmpf(CmpF::Olt, &size, &unit);
                    g.arith(Arith::AndI, &finite, &inside)
                } else {
                    let outside = g.cmpf(CmpF::Ogt, &size, &unit);
                    let outside = g.arith(Arith::AndI, &finite, &outside);
                    let yes = g.constant_int(1, ScalarType::I1);
                    let infinite = g.arith(Arith::XOrI, &finite, &yes);
                    let alpha = g.cmpf(CmpF::Une, &s11, &zero_f);
                    let infinite = g.arith(Arith::AndI, &infinite, &alpha);
                    g.arith(Arith::OrI, &outside, &infinite)
                }
            }
        }
    }

    /// The n1 x n1 blocks at row j1 swapped with the n2 x n2 blocks below them; returns
    /// the data and whether the swap passed the stability test.
    fn swap(&self, g: &mut Block, data: &Value, j1: &Value, n1: usize, n2: usize) -> (Value, Value) {
        let nd = n1 + n2;
        let rows: Vec<Value> = (0..nd)
            .map(|i| {
                let i = g.constant_index(i as i64);
                g.arith(Arith::AddI, j1, &i)
            })
            .collect();
        let block = |g: &mut Block, part: Part| -> Vec<Vec<Value>> { rows.iter().map(|r| rows.iter().map(|c| self.get(g, data, part, r, c)).collect()).collect() };
        let (s, t) = (block(g, Part::S), block(g, Part::T));
        let zero_f = self.constant(g, 0.0);
        let largest = |g: &mut Block, m: &[Vec<Value>]| {
            m.iter().flatten().fold(zero_f.clone(), |acc, x| {
                let x = g.math(MathUnary::AbsF, x);
                g.arith(Arith::MaximumF, &acc, &x)
            })
        };
        let (s_max, t_max) = (largest(g, &s), largest(g, &t));
        let f32 = self.element == ScalarType::F32;
        let eps = if f32 { f32::EPSILON as f64 } else { f64::EPSILON };
        let tiny = self.constant(g, if f32 { f32::MIN_POSITIVE as f64 } else { f64::MIN_POSITIVE });
        let bound = |g: &mut Block, factor: f64, of: &Value| {
            let factor = self.constant(g, factor);
            let scaled = g.arith(Arith::MulF, &factor, of);
            g.arith(Arith::MaximumF, &scaled, &tiny)
        };
        let both = g.arith(Arith::MaximumF, &s_max, &t_max);
        let smin = bound(g, eps, &both);
        // S11 R - L S22 = -S12, T11 R - L T22 = -T12: unknowns vec(R) then vec(L), by
        // columns (p = r + n1 c).
        let m = n1 * n2;
        let unknown = |p: usize| (p % n1, p / n1);
        let mut matrix = vec![vec![zero_f.clone(); 2 * m]; 2 * m];
        let mut rhs = vec![zero_f.clone(); 2 * m];
        for (half, x) in [&s, &t].into_iter().enumerate() {
            for p in 0..m {
                let (r, c) = unknown(p);
                for q in 0..m {
                    let (r2, c2) = unknown(q);
                    if c == c2 {
                        matrix[half * m + p][q] = x[r][r2].clone();
                    }
                    if r == r2 {
                        matrix[half * m + p][m + q] = g.negf(&x[n1 + c2][n1 + c]);
                    }
                }
                rhs[half * m + p] = g.negf(&x[r][n1 + c]);
            }
        }
        let x = solve_small(g, matrix, rhs, &smin);
        // [R; I] and [L; I]: their Givens QR factorizations, the rotations in order.
        let one_f = self.constant(g, 1.0);
        let rotations = |g: &mut Block, offset: usize| -> Vec<(usize, Value, Value)> {
            let mut columns: Vec<Vec<Value>> = (0..n2)
                .map(|c| {
                    let mut column: Vec<Value> = (0..n1).map(|r| x[offset + r + n1 * c].clone()).collect();
                    column.extend((0..n2).map(|c2| if c2 == c { one_f.clone() } else { zero_f.clone() }));
                    column
                })
                .collect();
            let mut out = Vec::new();
            for c in 0..n2 {
                for i in (c + 1..nd).rev() {
                    let (cs, sn) = self.givens(g, &columns[c][i - 1], &columns[c][i]);
                    for column in columns.iter_mut().skip(c) {
                        let (a, b) = (column[i - 1].clone(), column[i].clone());
                        let sb = g.arith(Arith::MulF, &sn, &b);
                        column[i - 1] = g.fma(&cs, &a, &sb);
                        let sa = g.arith(Arith::MulF, &sn, &a);
                        let sa = g.negf(&sa);
                        column[i] = g.fma(&cs, &b, &sa);
                    }
                    out.push((i, cs, sn));
                }
            }
            out
        };
        let z_turns = rotations(g, 0);
        let q_turns = rotations(g, m);
        let mut d = data.clone();
        for (i, c, sn) in &z_turns {
            d = self.right(g, &d, (&rows[i - 1], &rows[*i]), (c, sn));
        }
        for (i, c, sn) in &q_turns {
            d = self.left(g, &d, (&rows[i - 1], &rows[*i]), (c, sn));
        }
        // Below the new diagonal blocks: rounding, measured then cleared.
        let (mut s_res, mut t_res) = (zero_f.clone(), zero_f.clone());
        for r in n2..nd {
            for c in 0..n2 {
                for (part, res) in [(Part::S, &mut s_res), (Part::T, &mut t_res)] {
                    let x = self.get(g, &d, part, &rows[r], &rows[c]);
                    let x = g.math(MathUnary::AbsF, &x);
                    *res = g.arith(Arith::MaximumF, res, &x);
                    d = self.zero_at(g, &d, part, &rows[r], &rows[c]);
                }
            }
        }
        let (s_bound, t_bound) = (bound(g, 10.0 * eps, &s_max), bound(g, 10.0 * eps, &t_max));
        let s_ok = g.cmpf(CmpF::Ole, &s_res, &s_bound);
        let t_ok = g.cmpf(CmpF::Ole, &t_res, &t_bound);
        let stable = g.arith(Arith::AndI, &s_ok, &t_ok);
        // An infinite eigenvalue (beta = 0, a 1 x 1 block) stays infinite where it moves:
        // the rotations would leave beta as rounding (1e-17), a huge finite eigenvalue of
        // either sign, that a later selection could take.
        for (old, new, size) in [(0, n2, n1), (n1, 0, n2)] {
            if size == 1 {
                let infinite = g.cmpf(CmpF::Oeq, &t[old][old], &zero_f);
                d = self.zero_if(g, &d, &infinite, Part::T, &rows[new], &rows[new]);
            }
        }
        // The new blocks in standard form: a pair's T part made triangular first.
        for (at, size) in [(0, n2), (n2, n1)] {
            if size == 2 {
                let (x, y) = (self.get(g, &d, Part::T, &rows[at], &rows[at]), self.get(g, &d, Part::T, &rows[at + 1], &rows[at]));
                let (c, sn) = self.givens(g, &x, &y);
                d = self.left(g, &d, (&rows[at], &rows[at + 1]), (&c, &sn));
                d = self.zero_at(g, &d, Part::T, &rows[at + 1], &rows[at]);
                d = self.standardize(g, &d, &rows[at]);
            } else {
                d = self.positive(g, &d, &rows[at]);
            }
        }
        (d, stable)
    }
}
