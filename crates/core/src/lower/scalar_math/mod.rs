//! Our own scalar math library: the functions IREE's `math` dialect lowering lacks or
//! computes inaccurately (measured in ../shared/FACTS.md), written as scalar MLIR through
//! the builder so the kernels that use them stay vectorized. One module per family, each
//! with float32 and float64 variants; `scalar.rs` calls them from its per-op rules.

pub mod exp_log;
pub mod trig;
pub mod erf;
pub mod gamma;
