//! `pytensor_mlir._core`: the Python face of the Rust core. numpy in and out, errors as
//! Python exceptions, the GIL released while IREE compiles or runs.

mod arrays;
mod backend;
mod compiled;
mod errors;

use pyo3::prelude::*;

/// How many times this process ran the IREE compiler (disk-cache hits excluded).
#[pyfunction]
fn compiler_invocations() -> u64 {
    pytensor_mlir_iree::compile::invocation_count()
}

/// How many inputs were copied rather than handed to IREE in place.
#[pyfunction]
fn input_copies() -> u64 {
    pytensor_mlir_iree::runtime::input_copy_count()
}

/// The devices `driver` can create here, as (name, path) pairs in ordinal order; raises
/// if this build or machine has no such driver (no Vulkan loader, no CUDA library, ...).
#[pyfunction]
fn available_devices(driver: &str) -> PyResult<Vec<(String, String)>> {
    let devices = pytensor_mlir_iree::Device::available(driver).map_err(errors::runtime_error)?;
    Ok(devices.into_iter().map(|d| (d.name, d.path)).collect())
}

/// The Op class names the core lowers: (tensor Ops, scalar Ops inside `Elemwise` and
/// `Composite`), as the IR's parser accepts them (for `scripts/coverage.py`).
#[pyfunction]
fn lowered_op_names() -> (Vec<&'static str>, Vec<&'static str>) {
    (pytensor_mlir_core::ir::ops::TENSOR_OP_NAMES.to_vec(), pytensor_mlir_core::ir::ops::scalar_op_names())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compiled::compile_graph, m)?)?;
    m.add_function(wrap_pyfunction!(compiled::compile_for_target, m)?)?;
    m.add_function(wrap_pyfunction!(available_devices, m)?)?;
    m.add_function(wrap_pyfunction!(compiler_invocations, m)?)?;
    m.add_function(wrap_pyfunction!(input_copies, m)?)?;
    m.add_function(wrap_pyfunction!(lowered_op_names, m)?)?;
    m.add_class::<compiled::CompiledFunction>()?;
    m.add_class::<arrays::ResultBuffer>()?;
    m.add("CompileError", m.py().get_type::<errors::CompileError>())?;
    m.add("IreeRuntimeError", m.py().get_type::<errors::IreeRuntimeError>())?;
    m.add("UnsupportedDtypeError", m.py().get_type::<errors::UnsupportedDtypeError>())?;
    Ok(())
}
