//! IREE for pytensor-mlir: the in-process compiler, a disk cache of compiled modules,
//! and a runtime that calls them on host arrays with as few copies as IREE allows.

pub mod cache;
pub mod compile;
mod element_type;
pub mod fpu;
pub mod runtime;

pub use cache::DiskCache;
pub use compile::{llvm_cpu_flags, CompileError, Compiler};
pub use element_type::ElementType;
pub use runtime::{
    Device, Function, HostInput, Module, OutputBuffer, RuntimeError, IMPORT_ALIGNMENT,
};
