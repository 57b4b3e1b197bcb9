//! Rust errors as precise Python exceptions, keeping the Rust context in the message.

use pyo3::exceptions::{PyAssertionError, PyIndexError, PyNotImplementedError, PyRuntimeError, PyValueError, PyZeroDivisionError};
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyo3::{create_exception, PyErr};
use pytensor_mlir_core::lower::ErrorKind;
use pytensor_mlir_core::GraphError;

create_exception!(pytensor_mlir, CompileError, PyRuntimeError, "IREE could not compile the lowered MLIR.");
create_exception!(pytensor_mlir, IreeRuntimeError, PyRuntimeError, "IREE's runtime failed.");
create_exception!(
    pytensor_mlir,
    UnsupportedDtypeError,
    PyNotImplementedError,
    "The device cannot compute a dtype of the graph (e.g. float64 on Metal); raised before compiling."
);

pub fn graph_error(e: GraphError) -> PyErr {
    match e {
        GraphError::Unsupported(_) => PyNotImplementedError::new_err(e.to_string()),
        GraphError::Invalid(_) => PyValueError::new_err(e.to_string()),
    }
}

pub fn compile_error(e: pytensor_mlir_iree::CompileError) -> PyErr {
    CompileError::new_err(e.to_string())
}

pub fn runtime_error(e: pytensor_mlir_iree::RuntimeError) -> PyErr {
    IreeRuntimeError::new_err(e.to_string())
}

/// A failed run-time check as its Python exception; `exceptions` names the classes of
/// `ErrorKind::Raise` (`module.QualName`), imported here and called with the message, as
/// `CheckAndRaise.perform` raises them.
pub fn check_failed_in(kind: ErrorKind, message: &str, exceptions: &[String]) -> PyErr {
    match kind {
        ErrorKind::Raise(i) => {
            let name = exceptions.get(i).map(String::as_str).unwrap_or("builtins.AssertionError");
            Python::attach(|py| match named_class(py, name) {
                Ok(class) => match class.call1((message,)) {
                    Ok(exc) => PyErr::from_value(exc),
                    Err(e) => e,
                },
                Err(e) => PyRuntimeError::new_err(format!("cannot raise {name} ({e}): {message}")),
            })
        }
        ErrorKind::ZeroDivision => PyZeroDivisionError::new_err(message.to_string()),
        ErrorKind::Value => PyValueError::new_err(message.to_string()),
        ErrorKind::Assertion => PyAssertionError::new_err(message.to_string()),
        ErrorKind::Index => PyIndexError::new_err(message.to_string()),
    }
}

/// The class `module.QualName` (nested qualnames walked attribute by attribute).
fn named_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    // The longest importable module prefix, then attributes.
    let parts: Vec<&str> = name.split('.').collect();
    for split in (1..parts.len()).rev() {
        if let Ok(module) = PyModule::import(py, parts[..split].join(".")) {
            let mut obj = module.into_any();
            for attr in &parts[split..] {
                obj = obj.getattr(*attr)?;
            }
            return Ok(obj);
        }
    }
    Err(PyRuntimeError::new_err(format!("no module for {name}")))
}

pub fn unsupported_dtypes(message: String) -> PyErr {
    UnsupportedDtypeError::new_err(message)
}
