//! Sequential `linalg.generic`s: a recurrence written as one generic whose step dim is a
//! *reduction* iterator. IREE runs a reduction dim in order, in one dispatch; the values a
//! step hands to the next are outputs not indexed by that dim, which every iteration reads
//! and rewrites, and the steps' results go to outputs indexed by it. The body is no
//! reduction IREE knows, so nothing reorders the steps (it is not vectorized along them).
//! One dispatch for n steps where a loop of the host program costs a dispatch or more per
//! step: 1000 steps of a scalar recurrence in 4 us (iree-benchmark-module) against 3.8 ms.
//! Used by tridiagonal.rs (gttrf, gttrs) and scan_lanes.rs (elementwise Scans).

use crate::mlir::{Block, ScalarType, TensorType, Value};

/// An output for a sequential generic: a tensor of `sizes` filled with `tag`, a value of its
/// own per output. IREE merges equal `tensor.empty`s and fills, and two outputs a generic
/// reads back (its carried values) given one buffer overwrite each other (an AR(2)'s two
/// lags did); the tag is never read.
pub(super) fn private_output(b: &mut Block, element: ScalarType, sizes: &[Value], tag: usize) -> Value {
    let empty = b.tensor_empty(TensorType::new(vec![None; sizes.len()], element), sizes);
    let tag = if element.is_float() { b.constant_f64(tag as f64, element) } else { b.constant_int(tag as i64, element) };
    b.linalg_fill(&tag, &empty)
}

