//! Binary search inside a kernel body: one search per element, all lanes in parallel
//! (searchsorted, the merge step of sort, Unique's inverse, the covering position of a
//! running count).

use crate::mlir::{Arith, Block, CmpI, Value};

/// The first position `p` in `[lo, hi)` where `goes_right(p)` is false (`hi` if none),
/// for a predicate that is true on a prefix of the range and false after it (C++'s
/// `partition_point`). `goes_right` reads the element at the `index` it is given.
pub(super) fn partition_point(body: &mut Block, lo: &Value, hi: &Value, mut goes_right: impl FnMut(&mut Block, &Value) -> Value) -> Value {
    let found = body.scf_while(
        &[lo.clone(), hi.clone()],
        |c, s| c.cmpi(CmpI::Slt, &s[0], &s[1]),
        |w, s| {
            let one = w.constant_index(1);
            // lo + hi never overflows: both are sizes of buffers far below 2^62.
            let sum = w.arith(Arith::AddI, &s[0], &s[1]);
            let mid = w.shrui(&sum, &one);
            let right = goes_right(w, &mid);
            let mid1 = w.arith(Arith::AddI, &mid, &one);
            vec![w.select(&right, &mid1, &s[0]), w.select(&right, &s[1], &mid)]
        },
    );
    found[0].clone()
}
