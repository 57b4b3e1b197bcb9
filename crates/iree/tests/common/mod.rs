//! Shared helpers of the integration tests: the compiler, MLIR samples, aligned arrays.
#![allow(dead_code)] // each test binary uses a different subset

use pytensor_mlir_iree::{
    Compiler, Device, ElementType, Function, HostInput, Module, OutputBuffer, RuntimeError, Target,
};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The compiler library: `$IREE_COMPILER_LIBRARY`, else the wheel in the workspace venv.
pub fn compiler() -> &'static Compiler {
    static COMPILER: OnceLock<Compiler> = OnceLock::new();
    COMPILER.get_or_init(|| {
        let path = std::env::var_os("IREE_COMPILER_LIBRARY")
            .map(PathBuf::from)
            .unwrap_or_else(workspace_wheel_library);
        Compiler::load(&path).unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
    })
}

fn workspace_wheel_library() -> PathBuf {
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
    let pythons = std::fs::read_dir(&lib).unwrap_or_else(|e| {
        panic!(
            "no venv at {} ({e}); set IREE_COMPILER_LIBRARY",
            lib.display()
        )
    });
    pythons
        .filter_map(|entry| entry.ok())
        .map(|entry| {
            entry
                .path()
                .join("site-packages/iree/compiler/_mlir_libs/libIREECompiler.so")
        })
        .find(|path| path.exists())
        .expect("iree-base-compiler is not installed in the venv; set IREE_COMPILER_LIBRARY")
}

/// The target of a local driver: local-sync modules are compiled for the inline
/// execution model, local-task ones for the full HAL, as the Python package does.
pub fn target(driver: &str) -> Target {
    Target::LlvmCpu {
        driver: driver.to_string(),
    }
}

/// `mlir` compiled for local-sync (the inline execution model).
pub fn compile(mlir: &str) -> Vec<u8> {
    compile_for("local-sync", mlir)
}

pub fn compile_for(driver: &str, mlir: &str) -> Vec<u8> {
    compiler()
        .compile(mlir, &target(driver).flags())
        .unwrap_or_else(|e| panic!("compile failed:\n{e}"))
}

/// `vmfb` (compiled with `compile_for(driver, ..)`) loaded on a device of `driver`.
pub fn load_vmfb(driver: &str, vmfb: Vec<u8>) -> Module {
    Module::load_as(target(driver).execution_model(), device(driver), vmfb)
        .unwrap_or_else(|e| panic!("load: {e}"))
}

pub fn device(driver: &str) -> Arc<Device> {
    Device::new(driver, None).unwrap_or_else(|e| panic!("device {driver}: {e}"))
}

pub fn load(driver: &str, mlir: &str) -> Module {
    load_vmfb(driver, compile_for(driver, mlir))
}

pub const DRIVERS: [&str; 2] = ["local-sync", "local-task"];

/// Elementwise binary op on two 1-D tensors of any length.
pub fn binary_1d(element: &str, op: &str) -> String {
    format!(
        r#"func.func @main(%a: tensor<?x{element}>, %b: tensor<?x{element}>) -> tensor<?x{element}> {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x{element}>
  %e = tensor.empty(%n) : tensor<?x{element}>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%a, %b : tensor<?x{element}>, tensor<?x{element}>) outs(%e : tensor<?x{element}>) {{
  ^bb0(%x: {element}, %y: {element}, %o: {element}):
    %m = {op} %x, %y : {element}
    linalg.yield %m : {element}
  }} -> tensor<?x{element}>
  return %r : tensor<?x{element}>
}}"#
    )
}

pub fn mul_f64() -> String {
    binary_1d("f64", "arith.mulf")
}

/// Host bytes starting on a 64-byte boundary (or deliberately 8 bytes past one).
pub struct HostArray {
    storage: Vec<u8>,
    offset: usize,
    len: usize,
}

impl HostArray {
    pub fn aligned(bytes: &[u8]) -> HostArray {
        Self::at_offset(bytes, 0)
    }

    pub fn misaligned(bytes: &[u8]) -> HostArray {
        Self::at_offset(bytes, 8)
    }

    fn at_offset(bytes: &[u8], extra: usize) -> HostArray {
        let mut storage = vec![0u8; bytes.len() + 64 + extra];
        let offset = storage.as_ptr().align_offset(64) + extra;
        storage[offset..offset + bytes.len()].copy_from_slice(bytes);
        HostArray {
            storage,
            offset,
            len: bytes.len(),
        }
    }

    pub fn f64(values: &[f64]) -> HostArray {
        Self::aligned(&f64_bytes(values))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.storage[self.offset..self.offset + self.len]
    }

    pub fn input<'a>(&'a self, shape: &'a [usize], element: ElementType) -> HostInput<'a> {
        HostInput {
            data: self.bytes(),
            shape,
            element,
        }
    }
}

/// `f` called on f64 vectors of length `len`, one per array.
pub fn call_f64_vectors(
    module: &Module,
    f: &Function,
    arrays: &[&HostArray],
    len: usize,
) -> Result<Vec<OutputBuffer>, RuntimeError> {
    let shape = [len];
    let inputs: Vec<HostInput> = arrays
        .iter()
        .map(|a| a.input(&shape, ElementType::F64))
        .collect();
    module.call(f, &inputs)
}

pub fn f64_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

pub fn f64_values(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn i64_bytes(values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

pub fn i64_values(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}
