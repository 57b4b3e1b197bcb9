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
use crate::lower::dense_kernels::quasi_sylvester::solve_small;
use crate::mlir::{Arith, Block, CmpF, CmpI, MathUnary, ScalarType, Value};

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

impl Schur {
    /// T (scaled by `back`'s inverse) reordered: walking its blocks from the top, each one
    /// that `sort` selects moves up to just below the selected ones before it. Returns the
    /// data and whether a swap was refused or the result is out of order.
    pub(super) fn reorder(&self, g: &mut Block, data: Value, sort: Sort, back: &[Value; 2]) -> (Value, Value) {
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let no = g.constant_int(0, ScalarType::I1);
        // (data, k: the next block's start, ks: where the next selected block goes, refused)
        let state = g.scf_while(
            &[data, zero.clone(), zero, no],
            |c, s| c.cmpi(CmpI::Ult, &s[1], &self.n),
            |c, s| {
                let (data, k, ks, refused) = (&s[0], &s[1], &s[2], &s[3]);
                let pair = self.pair_at(c, data, k);
                let size = c.select(&pair, &two, &one);
                let chosen = self.selected(c, data, k, &pair, sort, back);
                let elsewhere = c.cmpi(CmpI::Ne, k, ks);
                let moves = c.arith(Arith::AndI, &chosen, &elsewhere);
                let types = [data.ty().clone(), refused.ty().clone()];
                let moved = c.scf_if_values(&moves, &types, |q| self.move_up(q, data, k, ks, &pair, refused), |_| vec![data.clone(), refused.clone()]);
                let next_ks = c.arith(Arith::AddI, ks, &size);
                let next_ks = c.select(&chosen, &next_ks, ks);
                let next_k = c.arith(Arith::AddI, k, &size);
                vec![moved[0].clone(), next_k, next_ks, moved[1].clone()]
            },
        );
        let out_of_order = self.out_of_order(g, &state[0], sort, back);
        let failed = g.arith(Arith::OrI, &state[3], &out_of_order);
        (state[0].clone(), failed)
    }

    /// Whether a block that `sort` selects follows one that it does not.
    fn out_of_order(&self, g: &mut Block, data: &Value, sort: Sort, back: &[Value; 2]) -> Value {
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let no = g.constant_int(0, ScalarType::I1);
        // (k, an unselected block seen, a selected one after it)
        let state = g.scf_while(
            &[zero, no.clone(), no],
            |c, s| c.cmpi(CmpI::Ult, &s[0], &self.n),
            |c, s| {
                let pair = self.pair_at(c, data, &s[0]);
                let size = c.select(&pair, &two, &one);
                let chosen = self.selected(c, data, &s[0], &pair, sort, back);
                let late = c.arith(Arith::AndI, &chosen, &s[1]);
                let yes = c.constant_int(1, ScalarType::I1);
                let passed = c.arith(Arith::XOrI, &chosen, &yes);
                vec![c.arith(Arith::AddI, &s[0], &size), c.arith(Arith::OrI, &s[1], &passed), c.arith(Arith::OrI, &s[2], &late)]
            },
        );
        state[2].clone()
    }

    /// Whether the block starting at row k is 2 x 2 (t_k+1,k != 0).
    fn pair_at(&self, g: &mut Block, data: &Value, k: &Value) -> Value {
        let one = g.constant_index(1);
        let next = g.arith(Arith::AddI, k, &one);
        let inside = g.cmpi(CmpI::Ult, &next, &self.n);
        let row = g.select(&inside, &next, k);
        let below = self.matrix(data).get(g, &row, k);
        let zero_f = self.constant(g, 0.0);
        let coupled = g.cmpf(CmpF::Une, &below, &zero_f);
        g.arith(Arith::AndI, &inside, &coupled)
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

    /// The block at k (2 x 2 where `pair`) moved up to row ks by swaps with the block
    /// above it, one at a time; returns the data and `refused` or'ed with any refusal.
    fn move_up(&self, g: &mut Block, data: &Value, k: &Value, ks: &Value, pair: &Value, refused: &Value) -> Vec<Value> {
        let (one, two) = (g.constant_index(1), g.constant_index(2));
        let state = g.scf_while(
            &[data.clone(), k.clone(), refused.clone()],
            |c, s| c.cmpi(CmpI::Ugt, &s[1], ks),
            |c, s| {
                let (data, j, refused) = (&s[0], &s[1], &s[2]);
                // The block above ends at j - 1; it is 2 x 2 where t_j-1,j-2 != 0 (within
                // the part still to pass: ks starts a block).
                let room = c.arith(Arith::AddI, ks, &two);
                let room = c.cmpi(CmpI::Uge, j, &room);
                let last = c.arith(Arith::SubI, j, &one);
                let before = c.arith(Arith::SubI, j, &two);
                let column = c.select(&room, &before, &last);
                let left = self.matrix(data).get(c, &last, &column);
                let zero_f = self.constant(c, 0.0);
                let coupled = c.cmpf(CmpF::Une, &left, &zero_f);
                let above_pair = c.arith(Arith::AndI, &room, &coupled);
                let above = c.select(&above_pair, &two, &one);
                let start = c.arith(Arith::SubI, j, &above);
                let types = [data.ty().clone(), refused.ty().clone()];
                let swap = |q: &mut Block, n1: usize, n2: usize| -> Vec<Value> {
                    let (d, ok) = self.swap(q, data, &start, n1, n2);
                    let yes = q.constant_int(1, ScalarType::I1);
                    let bad = q.arith(Arith::XOrI, &ok, &yes);
                    vec![d, q.arith(Arith::OrI, refused, &bad)]
                };
                let swapped = c.scf_if_values(
                    &above_pair,
                    &types,
                    |q| q.scf_if_values(pair, &types, |p| swap(p, 2, 2), |p| swap(p, 2, 1)),
                    |q| q.scf_if_values(pair, &types, |p| swap(p, 1, 2), |p| swap(p, 1, 1)),
                );
                vec![swapped[0].clone(), start, swapped[1].clone()]
            },
        );
        vec![state[0].clone(), state[2].clone()]
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
