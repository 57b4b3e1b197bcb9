//! pytensor-mlir's core: the graph IR, the typed MLIR builder and the lowering rules.
//! It knows nothing of IREE's runtime or of Python.

pub mod dtype;
pub mod ir;
pub mod lower;
pub mod mlir;

pub use dtype::DType;
pub use ir::{Graph, GraphError};
pub use lower::scalar::ScalarTarget;
pub use lower::{lower, Lowered};

/// Export JSON to lowered MLIR for a target with what `target` says: validation, then
/// lowering.
pub fn compile_export(json: &str, target: ScalarTarget) -> Result<Lowered, GraphError> {
    let exported = ir::export::parse(json).map_err(|e| GraphError::Invalid(e.to_string()))?;
    let graph = Graph::from_export(&exported)?;
    lower::scalar::with_target(target, || lower(&graph))
}
