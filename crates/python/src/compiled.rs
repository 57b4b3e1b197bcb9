//! A compiled PyTensor graph: lowered, compiled (or read from the disk cache), loaded.

use crate::arrays::{element_type, result_array, Input};
use crate::backend;
use crate::errors::{check_failed, compile_error, graph_error, runtime_error};
use numpy::PyArrayDescr;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pytensor_mlir_core::lower::{shapes, ENTRY};
use pytensor_mlir_core::Lowered;
use pytensor_mlir_iree::{llvm_cpu_flags, DiskCache, Function, HostInput, Module};
use std::path::Path;

#[pyclass(frozen, module = "pytensor_mlir._core")]
pub struct CompiledFunction {
    lowered: Lowered,
    flags: Vec<String>,
    module: Module,
    function: Function,
    input_descrs: Vec<Py<PyArrayDescr>>,
    result_descrs: Vec<Py<PyArrayDescr>>,
}

fn descr(py: Python<'_>, dtype: pytensor_mlir_core::DType) -> PyResult<Py<PyArrayDescr>> {
    Ok(PyArrayDescr::new(py, dtype.name())?.unbind())
}

/// Lowers the exported graph, compiles it for `driver` (or takes it from the disk cache)
/// and loads it.
#[pyfunction]
pub fn compile_graph(py: Python<'_>, export_json: &str, driver: &str, compiler_library: &str) -> PyResult<CompiledFunction> {
    let lowered = pytensor_mlir_core::compile_export(export_json).map_err(graph_error)?;
    let flags = match driver {
        "local-sync" | "local-task" => llvm_cpu_flags(),
        other => return Err(PyValueError::new_err(format!("unknown driver {other:?}"))),
    };
    let compiler = backend::compiler(Path::new(compiler_library))?;
    let key = DiskCache::key(&lowered.mlir, &flags, &compiler.revision());
    backend::dump(&key, &lowered.mlir, &flags)?;
    let cache = backend::cache();
    let vmfb = match cache.get(&key) {
        Some(vmfb) => vmfb,
        None => {
            let vmfb = py.detach(|| compiler.compile(&lowered.mlir, &flags)).map_err(compile_error)?;
            // A cache that cannot be written only costs a recompile next time.
            let _ = cache.put(&key, &vmfb);
            vmfb
        }
    };
    let device = backend::device(driver)?;
    let module = Module::load(device, vmfb).map_err(runtime_error)?;
    let function = module.function(ENTRY).map_err(runtime_error)?;
    let input_descrs = lowered.inputs.iter().map(|t| descr(py, t.dtype)).collect::<PyResult<_>>()?;
    let result_descrs = lowered.results.iter().map(|t| descr(py, t.dtype)).collect::<PyResult<_>>()?;
    Ok(CompiledFunction { lowered, flags, module, function, input_descrs, result_descrs })
}

#[pymethods]
impl CompiledFunction {
    /// The MLIR module that was compiled.
    #[getter]
    fn mlir(&self) -> &str {
        &self.lowered.mlir
    }

    /// The IREE compiler flags it was compiled with.
    #[getter]
    fn flags(&self) -> Vec<String> {
        self.flags.clone()
    }

    /// Runs the function; returns one numpy array per graph output.
    #[pyo3(signature = (*args))]
    fn __call__<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyList>> {
        let l = &self.lowered;
        if args.len() != l.inputs.len() {
            return Err(PyTypeError::new_err(format!("expected {} inputs, got {}", l.inputs.len(), args.len())));
        }
        let mut inputs = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            inputs.push(Input::new(py, &arg, &l.inputs[i], self.input_descrs[i].bind(py), &l.input_names[i])?);
        }
        let shapes: Vec<&[usize]> = inputs.iter().map(Input::shape).collect();
        shapes::check(&l.shape_checks, &shapes, &l.input_names).map_err(|e| check_failed(e.kind, &e.message))?;
        let host: Vec<HostInput<'_>> = inputs
            .iter()
            .zip(&l.inputs)
            .map(|(input, ty)| HostInput { data: input.bytes(), shape: input.shape(), element: element_type(ty.dtype) })
            .collect();
        let mut results = py.detach(|| self.module.call(&self.function, &host)).map_err(runtime_error)?;
        let flags = results.split_off(l.results.len());
        for (flag, check) in flags.iter().zip(&l.checks) {
            if flag.bytes().first().is_some_and(|&b| b != 0) {
                return Err(check_failed(check.kind, &check.message));
            }
        }
        let arrays = results
            .into_iter()
            .zip(&self.result_descrs)
            .map(|(r, d)| result_array(py, r, d.bind(py)))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, l.outputs.iter().map(|&i| arrays[i].clone()))
    }
}
