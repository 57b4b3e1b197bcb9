//! A compiled PyTensor graph: lowered, compiled (or read from the disk cache), loaded.

use crate::arrays::{element_type, result_array, Input};
use crate::backend;
use crate::errors::{check_failed_in, compile_error, graph_error, runtime_error, unsupported_dtypes};
use numpy::PyArrayDescr;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pytensor_mlir_core::lower::{shapes, ENTRY};
use pytensor_mlir_core::{Lowered, ScalarTarget};
use pytensor_mlir_iree::{Compiler, ExecutionModel, DiskCache, Function, HostInput, Module, Target, VulkanFeatures, NO_CONSTANT_EVALUATION, SLP_VECTORIZATION};
use std::path::Path;

#[pyclass(frozen, module = "pytensor_mlir._core")]
pub struct CompiledFunction {
    lowered: Lowered,
    flags: Vec<String>,
    /// What the device said it is when the module was loaded on it.
    device: String,
    target: &'static str,
    module: Module,
    function: Function,
    input_descrs: Vec<Py<PyArrayDescr>>,
    result_descrs: Vec<Py<PyArrayDescr>>,
}

fn descr(py: Python<'_>, dtype: pytensor_mlir_core::DType) -> PyResult<Py<PyArrayDescr>> {
    Ok(PyArrayDescr::new(py, dtype.name())?.unbind())
}

/// Refuses, before anything compiles, a graph with a dtype the target cannot compute,
/// naming every such dtype, where it is first used, and why.
fn check_dtypes(lowered: &Lowered, target: &Target, device: &str) -> PyResult<()> {
    let refused: Vec<String> = lowered
        .dtypes
        .iter()
        .filter(|(dtype, _)| !dtype.is_complex())
        .filter_map(|(dtype, first_use)| {
            target.check(element_type(*dtype)).err().map(|e| format!("{dtype} ({first_use}): {}", e.reason))
        })
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    Err(unsupported_dtypes(format!(
        "{device} ({}) cannot compute this graph; nothing was compiled. Unsupported dtypes:\n  {}",
        target.backend(),
        refused.join("\n  ")
    )))
}

/// The exported graph lowered with what `target` can compute: float32 math is widened to
/// f64 only where f64 `exp`/`log` compile (SPIR-V's GLSL functions take 16/32-bit floats
/// only, even on devices with shaderFloat64).
fn lower(export_json: &str, target: &Target) -> PyResult<Lowered> {
    let scalar = ScalarTarget {
        float64_math: matches!(target, Target::LlvmCpu { .. } | Target::Cuda { .. }),
        native_f32: matches!(target, Target::LlvmCpu { .. }),
        scatter: matches!(target, Target::LlvmCpu { .. }),
        sum_contractions: matches!(target, Target::LlvmCpu { .. }),
        lane_scans: matches!(target, Target::LlvmCpu { .. }),
        sequential_kernels: matches!(target, Target::LlvmCpu { .. }),
        packed_matmul: target.matmul_vector_bytes(),
    };
    pytensor_mlir_core::compile_export(export_json, scalar).map_err(graph_error)
}

/// The target's execution model, unless the graph holds compile-time tensors that IREE's
/// inline model loses (see `Lowered::constant_tensors`) or fusion barriers it cannot
/// compile (`Lowered::optimization_barriers`): then the full HAL.
fn execution_model(lowered: &Lowered, target: &Target) -> ExecutionModel {
    match target.execution_model() {
        ExecutionModel::Inline if lowered.constant_tensors || lowered.optimization_barriers => ExecutionModel::Hal,
        model => model,
    }
}

/// The module compiled for `target` (or taken from the disk cache); the MLIR and flags
/// it was compiled from.
fn compile(py: Python<'_>, lowered: &Lowered, target: &Target, compiler: &Compiler) -> PyResult<(Vec<u8>, String, Vec<String>)> {
    let mut flags = target.flags_for(execution_model(lowered, target));
    if !lowered.constant_tensors {
        flags.extend(NO_CONSTANT_EVALUATION.iter().map(|f| f.to_string()));
    }
    if lowered.sequential_kernels {
        flags.push(SLP_VECTORIZATION.to_string());
    }
    let module = target.module(&lowered.mlir);
    let key = DiskCache::key(&module, &flags, &compiler.revision());
    backend::dump(&key, &module, &flags)?;
    let cache = backend::cache();
    let vmfb = match cache.get(&key) {
        Some(vmfb) => vmfb,
        None => {
            let vmfb = py.detach(|| compiler.compile(&module, &flags)).map_err(compile_error)?;
            // A cache that cannot be written only costs a recompile next time.
            let _ = cache.put(&key, &vmfb);
            vmfb
        }
    };
    Ok((vmfb, module, flags))
}

/// Lowers the exported graph, compiles it for the device `device` (an ordinal or a path;
/// `None`: the default one) of `driver` (or takes it from the disk cache) and loads it.
#[pyfunction]
#[pyo3(signature = (export_json, driver, compiler_library, device=None))]
pub fn compile_graph(py: Python<'_>, export_json: &str, driver: &str, compiler_library: &str, device: Option<&str>) -> PyResult<CompiledFunction> {
    let (device, target) = backend::device(driver, device)?;
    let lowered = lower(export_json, &target)?;
    let description = device.description();
    check_dtypes(&lowered, &target, &description)?;
    let compiler = backend::compiler(Path::new(compiler_library))?;
    let (vmfb, _, flags) = compile(py, &lowered, &target, compiler)?;
    let module = Module::load_as(execution_model(&lowered, &target), device, vmfb).map_err(runtime_error)?.with_private_inputs(lowered.writes_inputs).with_private_inputs_only(lowered.written_inputs.clone()).with_input_alignment(target.input_alignment());
    let function = module.function(ENTRY).map_err(runtime_error)?;
    let input_descrs = lowered.inputs.iter().map(|t| descr(py, t.dtype)).collect::<PyResult<_>>()?;
    let result_descrs = lowered.results.iter().map(|t| descr(py, t.dtype)).collect::<PyResult<_>>()?;
    Ok(CompiledFunction { lowered, flags, device: description, target: target.backend(), module, function, input_descrs, result_descrs })
}

/// The target named by `spec`, for compiling without a device: "llvm-cpu", "cuda:<arch>"
/// (e.g. "cuda:sm_90"), "metal", "vulkan" (Vulkan 1.1's guaranteed features only) or
/// "vulkan+float64" (the same with shaderFloat64 and shaderInt64).
fn target_of_spec(spec: &str) -> PyResult<Target> {
    Ok(match spec.split_once(':') {
        None if spec == "llvm-cpu" => Target::LlvmCpu { driver: "local-sync".into() },
        None if spec == "metal" => Target::MetalSpirv,
        None if spec == "vulkan" => Target::VulkanSpirv(VulkanFeatures::baseline()),
        None if spec == "vulkan+float64" => {
            let mut features = VulkanFeatures::baseline();
            features.shader_float64 = true;
            features.shader_int64 = true;
            Target::VulkanSpirv(features)
        }
        Some(("cuda", arch)) if arch.starts_with("sm_") => Target::Cuda { arch: arch.to_string() },
        _ => return Err(PyValueError::new_err(format!(
            "unknown target {spec:?}: expected llvm-cpu, cuda:sm_<NN>, metal, vulkan or vulkan+float64"
        ))),
    })
}

/// Lowers and compiles the exported graph for the target `spec` without any device
/// (nothing is loaded or run): returns the VMFB bytes, the MLIR compiled and the flags.
#[pyfunction]
pub fn compile_for_target(py: Python<'_>, export_json: &str, spec: &str, compiler_library: &str) -> PyResult<(Vec<u8>, String, Vec<String>)> {
    let target = target_of_spec(spec)?;
    let lowered = lower(export_json, &target)?;
    check_dtypes(&lowered, &target, &format!("target {spec:?}"))?;
    let compiler = backend::compiler(Path::new(compiler_library))?;
    compile(py, &lowered, &target, compiler)
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

    /// The device it runs on: driver, name and path, e.g.
    /// "vulkan: llvmpipe (LLVM 15.0.6, 256 bits) [path ...]".
    #[getter]
    fn device(&self) -> &str {
        &self.device
    }

    /// IREE's compiler backend it was compiled with, e.g. "vulkan-spirv".
    #[getter]
    fn target(&self) -> &str {
        self.target
    }

    /// Runs the function; returns one numpy array per graph output.
    #[pyo3(signature = (*args))]
    fn __call__<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyList>> {
        if args.len() != self.lowered.inputs.len() {
            return Err(PyTypeError::new_err(format!("expected {} inputs, got {}", self.lowered.inputs.len(), args.len())));
        }
        PyList::new(py, self.run(py, args.iter())?)
    }

    /// Runs the function on the values in PyTensor's storage cells (one-element lists):
    /// reads `inputs[i][0]`, writes each result into `outputs[j][0]` and returns the
    /// results as a list. This is the whole of the linker's thunk, so that a call crosses
    /// from Python into Rust once.
    fn run_cells<'py>(&self, py: Python<'py>, inputs: &Bound<'py, PyList>, outputs: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
        if inputs.len() != self.lowered.inputs.len() || outputs.len() != self.lowered.outputs.len() {
            return Err(PyTypeError::new_err(format!(
                "expected {} input and {} output cells, got {} and {}",
                self.lowered.inputs.len(),
                self.lowered.outputs.len(),
                inputs.len(),
                outputs.len()
            )));
        }
        let values = inputs.iter().map(|cell| cell.get_item(0)).collect::<PyResult<Vec<_>>>()?;
        let results = self.run(py, values.into_iter())?;
        for (cell, result) in outputs.iter().zip(&results) {
            cell.set_item(0, result)?;
        }
        PyList::new(py, results)
    }
}

impl CompiledFunction {
    /// Runs the function on one value per graph input; one numpy array per graph output.
    fn run<'py>(&self, py: Python<'py>, args: impl Iterator<Item = Bound<'py, PyAny>>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let l = &self.lowered;
        let mut inputs = Vec::with_capacity(l.inputs.len());
        for (i, arg) in args.enumerate() {
            inputs.push(Input::new(py, &arg, &l.inputs[i], self.input_descrs[i].bind(py), &l.input_names[i])?);
        }
        let shapes: Vec<&[usize]> = inputs.iter().map(Input::shape).collect();
        let bytes: Vec<&[u8]> = inputs.iter().map(Input::bytes).collect();
        let call = shapes::Call { shapes: &shapes, bytes: &bytes };
        shapes::check(&l.shape_checks, &call, &l.input_names, &l.dim_exprs).map_err(|e| check_failed_in(e.kind, &e.message, &l.exceptions))?;
        let host: Vec<HostInput<'_>> = inputs
            .iter()
            .zip(&l.inputs)
            .map(|(input, ty)| HostInput { data: input.bytes(), shape: input.shape(), element: element_type(ty.dtype) })
            .collect();
        let mut results = py.detach(|| self.module.call(&self.function, &host)).map_err(runtime_error)?;
        let flags = results.split_off(l.results.len());
        for (flag, check) in flags.iter().zip(&l.checks) {
            if flag.bytes().first().is_some_and(|&b| b != 0) {
                return Err(check_failed_in(check.kind, &check.message, &l.exceptions));
            }
        }
        let arrays = results
            .into_iter()
            .zip(&self.result_descrs)
            .map(|(r, d)| result_array(py, r, d.bind(py)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(l.outputs.iter().map(|&i| arrays[i].clone()).collect())
    }
}
