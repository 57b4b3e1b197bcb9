//! Rust errors as precise Python exceptions, keeping the Rust context in the message.

use pyo3::exceptions::{PyAssertionError, PyIndexError, PyNotImplementedError, PyRuntimeError, PyValueError, PyZeroDivisionError};
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

pub fn check_failed(kind: ErrorKind, message: &str) -> PyErr {
    match kind {
        ErrorKind::ZeroDivision => PyZeroDivisionError::new_err(message.to_string()),
        ErrorKind::Value => PyValueError::new_err(message.to_string()),
        ErrorKind::Assertion => PyAssertionError::new_err(message.to_string()),
        ErrorKind::Index => PyIndexError::new_err(message.to_string()),
    }
}

pub fn unsupported_dtypes(message: String) -> PyErr {
    UnsupportedDtypeError::new_err(message)
}
