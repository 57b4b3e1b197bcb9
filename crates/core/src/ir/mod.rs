//! The graph IR: the generic export, and the typed graph validated from it.

pub mod export;
pub mod graph;
pub mod ops;
pub mod random;
pub mod scan;

pub use graph::{Graph, GraphError, Node, ScalarGraph, ScalarNode, TensorType, Unsupported, VarId, Variable};
pub use ops::{BlockwiseCore, IdxEntry, Op, QrMode, RavelMode, Reduction, ScalarLoop, ScalarOp};
pub use scan::Scan;
