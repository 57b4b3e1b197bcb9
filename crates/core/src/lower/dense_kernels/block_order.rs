//! Reordering the diagonal blocks (1 x 1 and 2 x 2) of a quasi-triangular form so that
//! the ones a selection takes lead, as LAPACK's trsen and tgsen do: walking the blocks
//! from the top, each selected one moves up to just below the selected ones before it, by
//! swaps with the block above, one at a time (trexc's and tgexc's method). Selected blocks
//! keep their relative order, and so do the others. Shared by the real Schur form's T
//! (real_schur/reorder.rs) and the QZ form's (S, T) (real_qz/reorder.rs), which say how a
//! block is read, selected and swapped.

use crate::mlir::{Arith, Block, CmpF, CmpI, ScalarType, Value};

/// A quasi-triangular form as the walk sees it.
pub(super) trait Blocks {
    /// The form's order n.
    fn order(&self) -> &Value;
    /// The element (i, j) of the quasi-triangular matrix: a nonzero one below the diagonal
    /// joins a 2 x 2 block.
    fn element(&self, g: &mut Block, data: &Value, i: &Value, j: &Value) -> Value;
    /// Whether the selection takes the block at row k (2 x 2 where `pair`).
    fn selected(&self, g: &mut Block, data: &Value, k: &Value, pair: &Value) -> Value;
    /// The n1 x n1 block at row j1 swapped with the n2 x n2 block below it: the data and
    /// whether the swap passed its stability test.
    fn swap(&self, g: &mut Block, data: &Value, j1: &Value, n1: usize, n2: usize) -> (Value, Value);
}

/// The form reordered; returns the data and whether a swap was refused (or, with
/// `check_order`, whether rounding in the swaps left a selected block after one that is
/// not: gees' info = n + 2).
pub(super) fn reorder(form: &dyn Blocks, g: &mut Block, data: Value, check_order: bool) -> (Value, Value) {
    let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
    let no = g.constant_int(0, ScalarType::I1);
    // (data, k: the next block's start, ks: where the next selected block goes, refused)
    let state = g.scf_while(
        &[data, zero.clone(), zero, no],
        |c, s| c.cmpi(CmpI::Ult, &s[1], form.order()),
        |c, s| {
            let (data, k, ks, refused) = (&s[0], &s[1], &s[2], &s[3]);
            let pair = pair_at(form, c, data, k);
            let size = c.select(&pair, &two, &one);
            let chosen = form.selected(c, data, k, &pair);
            let elsewhere = c.cmpi(CmpI::Ne, k, ks);
            let moves = c.arith(Arith::AndI, &chosen, &elsewhere);
            let types = [data.ty().clone(), refused.ty().clone()];
            let moved = c.scf_if_values(&moves, &types, |q| move_up(form, q, data, (k, ks), &pair, refused), |_| vec![data.clone(), refused.clone()]);
            let next_ks = c.arith(Arith::AddI, ks, &size);
            let next_ks = c.select(&chosen, &next_ks, ks);
            let next_k = c.arith(Arith::AddI, k, &size);
            vec![moved[0].clone(), next_k, next_ks, moved[1].clone()]
        },
    );
    if !check_order {
        return (state[0].clone(), state[3].clone());
    }
    let late = out_of_order(form, g, &state[0]);
    let failed = g.arith(Arith::OrI, &state[3], &late);
    (state[0].clone(), failed)
}

/// Whether a block that the selection takes follows one that it does not.
fn out_of_order(form: &dyn Blocks, g: &mut Block, data: &Value) -> Value {
    let (zero, one, two) = (g.constant_index(0), g.constant_index(1), g.constant_index(2));
    let no = g.constant_int(0, ScalarType::I1);
    // (k, an unselected block seen, a selected one after it)
    let state = g.scf_while(
        &[zero, no.clone(), no],
        |c, s| c.cmpi(CmpI::Ult, &s[0], form.order()),
        |c, s| {
            let pair = pair_at(form, c, data, &s[0]);
            let size = c.select(&pair, &two, &one);
            let chosen = form.selected(c, data, &s[0], &pair);
            let late = c.arith(Arith::AndI, &chosen, &s[1]);
            let yes = c.constant_int(1, ScalarType::I1);
            let passed = c.arith(Arith::XOrI, &chosen, &yes);
            vec![c.arith(Arith::AddI, &s[0], &size), c.arith(Arith::OrI, &s[1], &passed), c.arith(Arith::OrI, &s[2], &late)]
        },
    );
    state[2].clone()
}

/// Whether the element (i, j) is nonzero.
fn coupled(form: &dyn Blocks, g: &mut Block, data: &Value, i: &Value, j: &Value) -> Value {
    let below = form.element(g, data, i, j);
    let zero_f = g.constant_f64(0.0, below.scalar());
    g.cmpf(CmpF::Une, &below, &zero_f)
}

/// Whether the block starting at row k is 2 x 2 (element (k + 1, k) != 0).
fn pair_at(form: &dyn Blocks, g: &mut Block, data: &Value, k: &Value) -> Value {
    let one = g.constant_index(1);
    let next = g.arith(Arith::AddI, k, &one);
    let inside = g.cmpi(CmpI::Ult, &next, form.order());
    let row = g.select(&inside, &next, k);
    let coupled = coupled(form, g, data, &row, k);
    g.arith(Arith::AndI, &inside, &coupled)
}

/// The block at k (2 x 2 where `pair`) moved up to row ks by swaps with the block above
/// it, one at a time; returns the data and `refused` or'ed with any refusal.
fn move_up(form: &dyn Blocks, g: &mut Block, data: &Value, (k, ks): (&Value, &Value), pair: &Value, refused: &Value) -> Vec<Value> {
    let (one, two) = (g.constant_index(1), g.constant_index(2));
    let state = g.scf_while(
        &[data.clone(), k.clone(), refused.clone()],
        |c, s| c.cmpi(CmpI::Ugt, &s[1], ks),
        |c, s| {
            let (data, j, refused) = (&s[0], &s[1], &s[2]);
            // The block above ends at j - 1; it is 2 x 2 where element (j - 1, j - 2) !=
            // 0 (within the part still to pass: ks starts a block).
            let room = c.arith(Arith::AddI, ks, &two);
            let room = c.cmpi(CmpI::Uge, j, &room);
            let last = c.arith(Arith::SubI, j, &one);
            let before = c.arith(Arith::SubI, j, &two);
            let column = c.select(&room, &before, &last);
            let joined = coupled(form, c, data, &last, &column);
            let above_pair = c.arith(Arith::AndI, &room, &joined);
            let above = c.select(&above_pair, &two, &one);
            let start = c.arith(Arith::SubI, j, &above);
            let types = [data.ty().clone(), refused.ty().clone()];
            let swap = |q: &mut Block, n1: usize, n2: usize| -> Vec<Value> {
                let (d, ok) = form.swap(q, data, &start, n1, n2);
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
