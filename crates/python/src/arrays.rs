//! numpy in and out: inputs borrowed in place, results wrapped without a copy.

use numpy::npyffi::{self, npy_intp, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pytensor_mlir_core::ir::TensorType;
use pytensor_mlir_core::DType;
use pytensor_mlir_iree::{ElementType, OutputBuffer};
use std::os::raw::{c_int, c_void};

pub fn element_type(dtype: DType) -> ElementType {
    match dtype {
        DType::Bool => ElementType::Bool,
        DType::Int8 => ElementType::I8,
        DType::Int16 => ElementType::I16,
        DType::Int32 => ElementType::I32,
        DType::Int64 => ElementType::I64,
        DType::UInt8 => ElementType::U8,
        DType::UInt16 => ElementType::U16,
        DType::UInt32 => ElementType::U32,
        DType::UInt64 => ElementType::U64,
        DType::Float16 => ElementType::F16,
        DType::Float32 => ElementType::F32,
        DType::Float64 => ElementType::F64,
        DType::Complex64 | DType::Complex128 => unreachable!("complex graphs are rejected before lowering"),
    }
}

/// An input array, C-contiguous (copied by numpy if it was not), checked against its type.
pub struct Input<'py> {
    pub array: Bound<'py, PyUntypedArray>,
}

impl<'py> Input<'py> {
    pub fn new(py: Python<'py>, obj: &Bound<'py, PyAny>, ty: &TensorType, descr: &Bound<'py, PyArrayDescr>, name: &str) -> PyResult<Self> {
        let array = obj.cast::<PyUntypedArray>().map_err(|_| {
            PyTypeError::new_err(format!("{name}: expected a numpy array, got {}", obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()))
        })?;
        if !array.dtype().is_equiv_to(descr) || array.ndim() != ty.ndim() {
            return Err(PyTypeError::new_err(format!(
                "{name}: expected a {}-d array of {}, got a {}-d array of {}",
                ty.ndim(),
                ty.dtype,
                array.ndim(),
                array.dtype()
            )));
        }
        // Other strides (transposed, negative, broadcast with 0) get one packed copy.
        let array = if array.is_c_contiguous() {
            array.clone()
        } else {
            let numpy = py.import("numpy")?;
            numpy.call_method1("ascontiguousarray", (array,))?.cast_into::<PyUntypedArray>()?
        };
        Ok(Input { array })
    }

    pub fn shape(&self) -> &[usize] {
        self.array.shape()
    }

    /// The array's bytes; valid while `self` (a reference to the array) lives.
    pub fn bytes(&self) -> &[u8] {
        let len = self.array.len() * self.array.dtype().itemsize();
        if len == 0 {
            return &[];
        }
        // SAFETY: a C-contiguous array of `len` bytes starting at its data pointer, kept
        // alive by `self.array`.
        unsafe { std::slice::from_raw_parts((*self.array.as_array_ptr()).fields.data as *const u8, len) }
    }
}

/// Keeps an IREE result buffer alive as the base of the numpy array that views it.
#[pyclass(frozen, module = "pytensor_mlir._core")]
pub struct ResultBuffer {
    _buffer: OutputBuffer,
}

/// A numpy array of `descr` over the result's bytes, without a copy.
pub fn result_array<'py>(py: Python<'py>, buffer: OutputBuffer, descr: &Bound<'py, PyArrayDescr>) -> PyResult<Bound<'py, PyAny>> {
    let mut dims: Vec<npy_intp> = buffer.shape().iter().map(|&d| d as npy_intp).collect();
    let data = buffer.bytes().as_ptr() as *mut c_void;
    let holder = Bound::new(py, ResultBuffer { _buffer: buffer })?;
    // SAFETY: `data` points at `product(dims) * itemsize` bytes, C-contiguous, owned by
    // `holder`, which becomes the array's base (SetBaseObject steals the reference) so the
    // bytes live as long as the array. The descr reference is stolen by NewFromDescr.
    unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type),
            descr.clone().into_dtype_ptr(),
            dims.len() as c_int,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            data,
            npyffi::NPY_ARRAY_WRITEABLE | npyffi::NPY_ARRAY_C_CONTIGUOUS | npyffi::NPY_ARRAY_ALIGNED,
            std::ptr::null_mut(),
        );
        if ptr.is_null() {
            return Err(PyErr::fetch(py));
        }
        let array = Bound::from_owned_ptr(py, ptr);
        if PY_ARRAY_API.PyArray_SetBaseObject(py, ptr as *mut npyffi::PyArrayObject, holder.into_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(array)
    }
}
