//! Writing MLIR: types and the typed builder.

pub mod builder;
pub mod types;

pub use builder::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, CmpI, Contraction, Function, IndexArg, IteratorType, MathUnary, Value};
pub use types::{ScalarType, TensorType, Type};
