//! The X with A X + X B = C for A (m x m) and B (n x n) in real Schur form (upper
//! quasi-triangular: 1 x 1 and 2 x 2 diagonal blocks), as LAPACK's dtrsyl solves it
//! (Bartels & Stewart's back substitution): one dispatch (llvm-cpu) walking B's diagonal
//! blocks from the left and, within each, A's from the bottom. Block (K, L) of X solves
//! the small Sylvester equation A_KK X_KL + X_KL B_LL = C_KL - A_K,after X_after,L -
//! X_K,before B_before,L, whose right-hand side needs only blocks already found.
//!
//! Every small equation is posed as one 4 x 4 system over the unknowns (k1, l1), (k2, l1),
//! (k1, l2), (k2, l2) (vec of the 2 x 2 block by columns): where K or L is a 1 x 1 block
//! the unknowns it lacks get the equation x = 0 and no coupling, so one straight-line
//! elimination (partial pivoting by selects) serves the four shapes. A pivot smaller than
//! smin = max(eps max(|A|, |B|), the smallest normal) is replaced by smin, as dtrsyl
//! perturbs a nearly singular system (A and -B sharing an eigenvalue) instead of failing.

use super::{minus_dot, region, Flat};
use crate::lower::Context;
use crate::mlir::{Arith, Block, CmpF, CmpI, MathUnary, ScalarType, Value};

/// X (m x n) with a X + X b = c; `a`, `b` in real Schur form (their parts below the
/// subdiagonal are not read).
pub(in crate::lower) fn quasi_triangular_sylvester(cx: &mut Context, b: &mut Block, a: &Value, bm: &Value, c: &Value, element: ScalarType) -> Value {
    let m = b.tensor_dim(c, 0);
    let n = b.tensor_dim(c, 1);
    region(cx, b, element, (&m, &n), &[a, bm, c], &[&m, &n], |k, mats, sizes| {
        let kernel = Kernel { a: mats[0].clone(), b: mats[1].clone(), c: mats[2].clone(), m: sizes[0].clone(), n: sizes[1].clone(), element };
        let begin = Flat::start(k, element, &kernel.m, &kernel.n);
        kernel.run(k, begin)
    })
}

struct Kernel {
    a: Flat,
    b: Flat,
    c: Flat,
    m: Value,
    n: Value,
    element: ScalarType,
}

impl Kernel {
    fn constant(&self, g: &mut Block, v: f64) -> Value {
        g.constant_f64(v, self.element)
    }

    fn run(&self, g: &mut Block, data: Value) -> Value {
        let smin = self.smallest_pivot(g);
        let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
        let zero_f = self.constant(g, 0.0);
        // Columns: l1 = l, l2 = l + 1 where B_{l+1,l} != 0 (a 2 x 2 block), else l.
        let r = g.scf_while(
            &[data, zero.clone()],
            |c, s| c.cmpi(CmpI::Ult, &s[1], &self.n),
            |c, s| {
                let l1 = s[1].clone();
                let l_next = c.arith(Arith::AddI, &l1, &one);
                let has_next = c.cmpi(CmpI::Ult, &l_next, &self.n);
                let probe = c.select(&has_next, &l_next, &l1);
                let below = self.b.get(c, &probe, &l1);
                let coupled = c.cmpf(CmpF::Une, &below, &zero_f);
                let wide = c.arith(Arith::AndI, &has_next, &coupled);
                let l2 = c.select(&wide, &l_next, &l1);
                // Rows from the bottom: k2 = top - 1, k1 = k2 - 1 where A_{k2,k2-1} != 0.
                let inner = c.scf_while(
                    &[s[0].clone(), self.m.clone()],
                    |q, t| q.cmpi(CmpI::Ugt, &t[1], &zero),
                    |q, t| {
                        let k2 = q.arith(Arith::SubI, &t[1], &one);
                        let has_above = q.cmpi(CmpI::Ugt, &k2, &zero);
                        let k_above = q.arith(Arith::SubI, &k2, &one);
                        let k_above = q.select(&has_above, &k_above, &k2);
                        let left = self.a.get(q, &k2, &k_above);
                        let coupled = q.cmpf(CmpF::Une, &left, &zero_f);
                        let tall = q.arith(Arith::AndI, &has_above, &coupled);
                        let k1 = q.select(&tall, &k_above, &k2);
                        let data = self.block(q, &t[0], (&k1, &k2, &tall), (&l1, &l2, &wide), &smin);
                        let drop = q.select(&tall, &two, &one);
                        vec![data, q.arith(Arith::SubI, &t[1], &drop)]
                    },
                );
                let step = c.select(&wide, &two, &one);
                vec![inner[0].clone(), c.arith(Arith::AddI, &l1, &step)]
            },
        );
        r[0].clone()
    }

    /// max(eps max(max |A|, max |B|), the smallest normal).
    fn smallest_pivot(&self, g: &mut Block) -> Value {
        let (zero, one) = (g.constant_index(0), g.constant_index(1));
        let zero_f = self.constant(g, 0.0);
        let largest = |g: &mut Block, t: &Flat, size: &Value| {
            let r = g
                .scf_for(&zero, size, &one, &[zero_f.clone()], |h, i, acc| {
                    let r = h.scf_for(&zero, size, &one, acc, |e, j, acc| {
                        let x = t.get(e, i, j);
                        let x = e.math(MathUnary::AbsF, &x);
                        Ok::<_, String>(vec![e.arith(Arith::MaximumF, &acc[0], &x)])
                    })?;
                    Ok::<_, String>(r)
                })
                .unwrap_or_else(|e| unreachable!("{e}"));
            r[0].clone()
        };
        let big_a = largest(g, &self.a, &self.m);
        let big_b = largest(g, &self.b, &self.n);
        let big = g.arith(Arith::MaximumF, &big_a, &big_b);
        let f32 = self.element == ScalarType::F32;
        let eps = self.constant(g, if f32 { f32::EPSILON as f64 } else { f64::EPSILON });
        let tiny = self.constant(g, if f32 { f32::MIN_POSITIVE as f64 } else { f64::MIN_POSITIVE });
        let scaled = g.arith(Arith::MulF, &eps, &big);
        g.arith(Arith::MaximumF, &scaled, &tiny)
    }

    /// Block (K, L) of X solved and written: rows (k1, k2) (k1 = k2 unless `tall`),
    /// columns (l1, l2) (l2 = l1 unless `wide`).
    fn block(&self, g: &mut Block, data: &Value, (k1, k2, tall): (&Value, &Value, &Value), (l1, l2, wide): (&Value, &Value, &Value), smin: &Value) -> Value {
        let x = Flat::result(data, &self.n);
        let yes = g.constant_int(1, ScalarType::I1);
        let (zero_f, one_f) = (self.constant(g, 0.0), self.constant(g, 1.0));
        let one = g.constant_index(1);
        let rows = [k1.clone(), k2.clone()];
        let columns = [l1.clone(), l2.clone()];
        let row_on = [tall.clone(), yes.clone()];
        let column_on = [yes.clone(), wide.clone()];
        // Unknown p = ri + 2 ci.
        let on: Vec<Value> = (0..4).map(|p| g.arith(Arith::AndI, &row_on[p % 2], &column_on[p / 2])).collect();
        let after = g.arith(Arith::AddI, k2, &one);
        let later = g.arith(Arith::SubI, &self.m, &after);
        let mut rhs = Vec::with_capacity(4);
        for p in 0..4 {
            let (r, c) = (&rows[p % 2], &columns[p / 2]);
            let start = self.c.get(g, r, c);
            // C_rc - sum_{j > k2} A_rj X_jc - sum_{i < l1} X_ri B_ic.
            let less_a = minus_dot(g, &later, &start, &|f, t| {
                let j = f.arith(Arith::AddI, &after, t);
                (self.a.get(f, r, &j), x.get(f, &j, c))
            });
            let v = minus_dot(g, l1, &less_a, &|f, i| (x.get(f, r, i), self.b.get(f, i, c)));
            rhs.push(g.select(&on[p], &v, &zero_f));
        }
        // The 4 x 4 matrix: row p = (ri, ci), column q = (rj, cj); A_{r_ri, r_rj} where cj =
        // ci, plus B_{c_cj, c_ci} where rj = ri; identity rows and zero couplings for the
        // unknowns a 1 x 1 block lacks.
        let mut matrix = vec![vec![zero_f.clone(); 4]; 4];
        for p in 0..4 {
            for q in 0..4 {
                let (ri, ci, rj, cj) = (p % 2, p / 2, q % 2, q / 2);
                let mut v = zero_f.clone();
                if ci == cj {
                    v = self.a.get(g, &rows[ri], &rows[rj]);
                }
                if ri == rj {
                    let from_b = self.b.get(g, &columns[cj], &columns[ci]);
                    v = if ci == cj { g.arith(Arith::AddF, &v, &from_b) } else { from_b };
                }
                let both = g.arith(Arith::AndI, &on[p], &on[q]);
                let v = g.select(&both, &v, &zero_f);
                matrix[p][q] = if p == q {
                    let off = g.arith(Arith::XOrI, &on[p], &yes);
                    g.select(&off, &one_f, &v)
                } else {
                    v
                };
            }
        }
        let solution = solve_small(g, matrix, rhs, smin);
        // Unknown 1 (k2, l1) always exists; a lacking unknown's place is that one's.
        let mut d = data.clone();
        for p in [0, 2, 3, 1] {
            let (r, c) = (g.select(&on[p], &rows[p % 2], k2), g.select(&on[p], &columns[p / 2], l1));
            let v = g.select(&on[p], &solution[p], &solution[1]);
            d = x.with(&d).set(g, &v, &r, &c);
        }
        d
    }
}

/// The solution of the small dense system `matrix` x = `rhs`: Gaussian elimination with
/// partial pivoting as straight-line code (rows exchanged by selects), a pivot smaller
/// than `smin` in size replaced by smin (with its sign).
pub(super) fn solve_small(g: &mut Block, mut matrix: Vec<Vec<Value>>, mut rhs: Vec<Value>, smin: &Value) -> Vec<Value> {
    let size = rhs.len();
    for j in 0..size {
        // The pivot row: the largest |m_rj| for r >= j (the first of equals).
        let mut best = g.math(MathUnary::AbsF, &matrix[j][j]);
        let mut at = g.constant_index(j as i64);
        for r in j + 1..size {
            let s = g.math(MathUnary::AbsF, &matrix[r][j]);
            let larger = g.cmpf(CmpF::Ogt, &s, &best);
            best = g.select(&larger, &s, &best);
            let here = g.constant_index(r as i64);
            at = g.select(&larger, &here, &at);
        }
        // Row j exchanged with the pivot's.
        for r in j + 1..size {
            let here = g.constant_index(r as i64);
            let flag = g.cmpi(CmpI::Eq, &at, &here);
            for c in j..size {
                let (top, other) = (matrix[j][c].clone(), matrix[r][c].clone());
                matrix[j][c] = g.select(&flag, &other, &top);
                matrix[r][c] = g.select(&flag, &top, &other);
            }
            let (top, other) = (rhs[j].clone(), rhs[r].clone());
            rhs[j] = g.select(&flag, &other, &top);
            rhs[r] = g.select(&flag, &top, &other);
        }
        let pivot = matrix[j][j].clone();
        let size_p = g.math(MathUnary::AbsF, &pivot);
        let small = g.cmpf(CmpF::Olt, &size_p, smin);
        let signed = g.copysign(smin, &pivot);
        let pivot = g.select(&small, &signed, &pivot);
        matrix[j][j] = pivot.clone();
        for r in j + 1..size {
            let factor = g.arith(Arith::DivF, &matrix[r][j], &pivot);
            let minus = g.negf(&factor);
            for c in j + 1..size {
                matrix[r][c] = g.fma(&minus, &matrix[j][c], &matrix[r][c]);
            }
            rhs[r] = g.fma(&minus, &rhs[j], &rhs[r]);
        }
    }
    let mut x = vec![rhs[0].clone(); size];
    for j in (0..size).rev() {
        let mut v = rhs[j].clone();
        for c in j + 1..size {
            let minus = g.negf(&matrix[j][c]);
            v = g.fma(&minus, &x[c], &v);
        }
        x[j] = g.arith(Arith::DivF, &v, &matrix[j][j]);
    }
    x
}
