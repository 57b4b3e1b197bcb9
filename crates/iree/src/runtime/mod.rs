//! The IREE runtime: devices, loaded modules, calls and their buffers.

mod aligned;
mod buffer;
mod device;
mod empty_bindings;
mod error;
mod host_memory;
mod instance;
mod module;

pub use aligned::IMPORT_ALIGNMENT;
pub use buffer::{input_copy_count, live_input_imports, HostInput, OutputBuffer};
pub use device::{Device, DeviceInfo};
pub use error::RuntimeError;
pub use module::{Function, Module};
