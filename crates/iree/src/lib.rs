//! IREE for pytensor-mlir: the in-process compiler, a disk cache of compiled modules,
//! and a runtime that calls them on host arrays with as few copies as IREE allows.
//!
//! The usual flow: [`Compiler::compile`] (or [`DiskCache::get`]) gives VMFB bytes,
//! [`Module::load`] puts them on a [`Device`], [`Module::function`] resolves
//! `"module.main"` once (`func.func @main` in an unnamed MLIR module lives in the VM
//! module named `module`), and [`Module::call`] runs it on [`HostInput`]s, returning
//! [`OutputBuffer`]s.
//!
//! Zero copy, both ways, on local CPU devices: inputs aligned as the module's code assumes
//! ([`Module::with_input_alignment`]: IREE's 64 bytes by default, 8 for modules compiled
//! from [`Target::module`] on the CPU) are handed to IREE in place; results are IREE's
//! own buffers, mapped. A result that is an input returned as is gets copied, so no result
//! ever aliases the caller's memory.
//!
//! Linking this crate replaces IREE's FPU state functions (see [`fpu`]): dispatches run
//! with IEEE semantics, subnormals included.

pub mod cache;
pub mod compile;
mod element_type;
pub mod fpu;
pub mod runtime;
pub mod target;

pub use cache::DiskCache;
pub use compile::{llvm_cpu_flags, CompileError, Compiler};
pub use element_type::ElementType;
pub use target::{ExecutionModel, Target, UnsupportedElement, VulkanFeatures, NO_CONSTANT_EVALUATION, SLP_VECTORIZATION};
pub use runtime::{
    Device, DeviceInfo, Function, HostInput, Module, OutputBuffer, RuntimeError, IMPORT_ALIGNMENT,
};
