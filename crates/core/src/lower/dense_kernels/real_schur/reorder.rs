//! Reordering a real Schur form so that the eigenvalues `sort` selects lead T's diagonal
//! (scipy's `schur(a, sort=...)`: dgees calls dtrsen, which moves each selected block up
//! with dtrexc's swaps of adjacent blocks). Selected blocks keep their relative order, and
//! so do the others.
//!
//! Swapping a block T11 (n1 x n1) with the block T22 (n2 x n2) below it (dlaexc's method,
//! in one form for the four sizes): X with T11 X - X T22 = T12 makes the columns of
//! [-X; I] span T22's invariant subspace, so an orthogonal Q whose first n2 columns span
//! them (Householder QR of [-X; I]) gives Q^T [T11 T12; 0 T22] Q = [T22' *; 0 T11'], the
//! same eigenvalues in the other order. The block below the new diagonal blocks is rounding
//! only; where it is not below 10 eps |D| (the two blocks' eigenvalues too close for the
//! swap to be accurate: dlaexc's weak stability test) the swap is refused, and so the
//! whole form is (NaN, as PyTensor reports dgees' failure to reorder). Each new 2 x 2
//! block is then standardized again. Last, as dgees does, the eigenvalues of the new
//! form are selected again: where rounding in the swaps moved one across the boundary
//! (a real part or a size within rounding of 0 or 1), so that a selected one follows one
//! that is not, the form counts as failed too.

use super::Schur;
use crate::lower::dense_kernels::block_order::{reorder, Blocks};
use crate::lower::dense_kernels::quasi_sylvester::solve_small;
use crate::mlir::{Arith, Block, CmpF, MathUnary, ScalarType, Value};

/// Which eigenvalues λ go first: scipy's `sort` strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::lower) enum Sort {
    /// "lhp": Re λ < 0.
    LeftHalfPlane,
    /// "rhp": Re λ >= 0.
    RightHalfPlane,
    /// "iuc": |λ| <= 1.
    InsideUnitCircle,
    /// "ouc": |λ| > 1.
    OutsideUnitCircle,
}

impl Sort {
    pub(in crate::lower) fn parse(name: &str) -> Option<Sort> {
        match name {
            "lhp" => Some(Sort::LeftHalfPlane),
            "rhp" => Some(Sort::RightHalfPlane),
            "iuc" => Some(Sort::InsideUnitCircle),
            "ouc" => Some(Sort::OutsideUnitCircle),
            _ => None,
        }
    }
}

/// T's blocks as the walk of block_order.rs sees them, selected by `sort` (the sizes
/// scaled back by `back`).
struct Sorting<'a> {
    schur: &'a Schur,
    sort: Sort,
    back: &'a [Value; 2],
}

impl Blocks for Sorting<'_> {
    fn order(&self) -> &Value {
        &self.schur.n
    }

    fn element(&self, g: &mut Block, data: &Value, i: &Value, j: &Value) -> Value {
        self.schur.matrix(data).get(g, i, j)
    }

    fn selected(&self, g: &mut Block, data: &Value, k: &Value, pair: &Value) -> Value {
        self.schur.selected(g, data, k, pair, self.sort, self.back)
    }

    fn swap(&self, g: &mut Block, data: &Value, j1: &Value, n1: usize, n2: usize) -> (Value, Value) {
        self.schur.swap(g, data, j1, n1, n2)
    }
}

impl Schur {
    /// T (scaled by `back`'s inverse) reordered by `sort` (block_order.rs). Returns the
    /// data and whether a swap was refused or the result is out of order.
    pub(super) fn reorder(&self, g: &mut Block, data: Value, sort: Sort, back: &[Value; 2]) -> (Value, Value) {
        reorder(&Sorting { schur: self, sort, back }, g, data, true)
    }

    /// Whether `sort` selects the eigenvalues of the block at k: for a 2 x 2 block, the
    /// real part half its trace and the size the square root of its determinant (the
    /// pair's product); the size scaled back to A's before it is compared with 1.
    fn selected(&self, g: &mut Block, data: &Value, k: &Value, pair: &Value, sort: Sort, back: &[Value; 2]) -> Value {
        let one = g.constant_index(1);
        let t = self.matrix(data);
        let next = g.arith(Arith::AddI, k, &one);
        let other = g.select(pair, &next, k);
        let (a, b, c, d) = (t.get(g, k, k), t.get(g, k, &other), t.get(g, &other, k), t.get(g, &other, &other));
        let zero_f = self.constant(g, 0.0);
        let unit = self.constant(g, 1.0);
        match sort {
            Sort::LeftHalfPlane | Sort::RightHalfPlane => {
                let half = self.constant(g, 0.5);
                let trace = g.arith(Arith::AddF, &a, &d);
                let real = g.arith(Arith::MulF, &half, &trace);
                let real = g.select(pair, &real, &a);
                let order = if sort == Sort::LeftHalfPlane { CmpF::Olt } else { CmpF::Oge };
                g.cmpf(order, &real, &zero_f)
            }
            Sort::InsideUnitCircle | Sort::OutsideUnitCircle => {
                let bc = g.arith(Arith::MulF, &b, &c);
                let ad = g.arith(Arith::MulF, &a, &d);
                let det = g.arith(Arith::SubF, &ad, &bc);
                let det = g.math(MathUnary::AbsF, &det);
                let size = g.math(MathUnary::Sqrt, &det);
                let single = g.math(MathUnary::AbsF, &a);
                let size = g.select(pair, &size, &single);
                let size = g.arith(Arith::MulF, &size, &back[0]);
                let size = g.arith(Arith::MulF, &size, &back[1]);
                let order = if sort == Sort::InsideUnitCircle { CmpF::Ole } else { CmpF::Ogt };
                g.cmpf(order, &size, &unit)
            }
        }
    }

    /// The n1 x n1 block at row j1 swapped with the n2 x n2 block below it; returns the
    /// data and whether the swap passed the stability test.
    fn swap(&self, g: &mut Block, data: &Value, j1: &Value, n1: usize, n2: usize) -> (Value, Value) {
        let nd = n1 + n2;
        let rows: Vec<Value> = (0..nd)
            .map(|i| {
                let i = g.constant_index(i as i64);
                g.arith(Arith::AddI, j1, &i)
            })
            .collect();
        let t = self.matrix(data);
        let d: Vec<Vec<Value>> = rows.iter().map(|r| rows.iter().map(|c| t.get(g, r, c)).collect()).collect();
        let zero_f = self.constant(g, 0.0);
        let largest = d.iter().flatten().fold(zero_f.clone(), |acc, x| {
            let x = g.math(MathUnary::AbsF, x);
            g.arith(Arith::MaximumF, &acc, &x)
        });
        let f32 = self.element == ScalarType::F32;
        let eps = if f32 { f32::EPSILON as f64 } else { f64::EPSILON };
        let tiny = self.constant(g, if f32 { f32::MIN_POSITIVE as f64 } else { f64::MIN_POSITIVE });
        let bound = |g: &mut Block, factor: f64| {
            let factor = self.constant(g, factor);
            let scaled = g.arith(Arith::MulF, &factor, &largest);
            g.arith(Arith::MaximumF, &scaled, &tiny)
        };
        let smin = bound(g, eps);
        let threshold = bound(g, 10.0 * eps);
        // T11 X - X T22 = T12 over the unknowns p = r + n1 c (X by columns).
        let unknown = |p: usize| (p % n1, p / n1);
        let size = n1 * n2;
        let mut matrix = vec![vec![zero_f.clone(); size]; size];
        let mut rhs = Vec::with_capacity(size);
        for (p, row) in matrix.iter_mut().enumerate() {
            let (r, c) = unknown(p);
            for (q, m) in row.iter_mut().enumerate() {
                let (r2, c2) = unknown(q);
                let from_t11 = (c == c2).then(|| d[r][r2].clone());
                let from_t22 = (r == r2).then(|| d[n1 + c2][n1 + c].clone());
                *m = match (from_t11, from_t22) {
                    (Some(a), Some(b)) => g.arith(Arith::SubF, &a, &b),
                    (Some(a), None) => a,
                    (None, Some(b)) => g.negf(&b),
                    (None, None) => zero_f.clone(),
                };
            }
            rhs.push(d[r][n1 + c].clone());
        }
        let x = solve_small(g, matrix, rhs, &smin);
        // [-X; I]'s columns, then Q = H1 H2 from their QR factorization.
        let one_f = self.constant(g, 1.0);
        let mut columns: Vec<Vec<Value>> = (0..n2)
            .map(|c| {
                let mut column: Vec<Value> = (0..n1).map(|r| g.negf(&x[r + n1 * c])).collect();
                column.extend((0..n2).map(|c2| if c2 == c { one_f.clone() } else { zero_f.clone() }));
                column
            })
            .collect();
        let last = rows[nd - 1].clone();
        let mut data = data.clone();
        for c in 0..n2 {
            let (vs, tau, _) = self.small_reflector(g, &columns[c][c], &columns[c][c + 1..]);
            // H_c on the columns after c: x_i less tau v_i (x_c + sum v_j x_j).
            for later in columns.iter_mut().skip(c + 1) {
                let mut w = later[c].clone();
                for (v, x) in vs.iter().zip(&later[c + 1..]) {
                    w = g.fma(v, x, &w);
                }
                let step = g.arith(Arith::MulF, &tau, &w);
                let step = g.negf(&step);
                later[c] = g.arith(Arith::AddF, &later[c], &step);
                for (v, x) in vs.iter().zip(later[c + 1..].iter_mut()) {
                    *x = g.fma(v, &step, x);
                }
            }
            data = self.small_reflect(g, &data, &rows[c..], &vs, &tau, j1, &last);
        }
        // Below the new diagonal blocks: rounding, measured then cleared.
        let mut residual = zero_f.clone();
        for r in n2..nd {
            for c in 0..n2 {
                let t = self.matrix(&data);
                let x = t.get(g, &rows[r], &rows[c]);
                let x = g.math(MathUnary::AbsF, &x);
                residual = g.arith(Arith::MaximumF, &residual, &x);
                data = t.set(g, &zero_f, &rows[r], &rows[c]);
            }
        }
        let stable = g.cmpf(CmpF::Ole, &residual, &threshold);
        if nd == 2 {
            // Two real eigenvalues trade places exactly (as dlaexc's rotation leaves them):
            // the transform's rounding could move one that is within rounding of the
            // selection's boundary across it.
            data = self.matrix(&data).set(g, &d[1][1], &rows[0], &rows[0]);
            data = self.matrix(&data).set(g, &d[0][0], &rows[1], &rows[1]);
        }
        if n2 == 2 {
            data = self.standardize(g, &data, &rows[1]);
        }
        if n1 == 2 {
            data = self.standardize(g, &data, &last);
        }
        (data, stable)
    }
}
