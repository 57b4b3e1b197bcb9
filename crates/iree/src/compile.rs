//! The in-process IREE compiler: MLIR text in, VMFB bytes out.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

static INVOCATIONS: AtomicU64 = AtomicU64::new(0);

/// How many times this process has run the compiler (cache hits do not count).
pub fn invocation_count() -> u64 {
    INVOCATIONS.load(Ordering::Relaxed)
}

/// A compile that failed; `Display` is IREE's full diagnostics text, locations included.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CompileError {
    message: String,
}

impl CompileError {
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<eerie::compiler::CompilerError> for CompileError {
    fn from(error: eerie::compiler::CompilerError) -> Self {
        CompileError {
            message: error.to_string(),
        }
    }
}

/// The compiler library loaded into this process. Each `compile` runs in its own
/// compiler session, so one `Compiler` may serve several threads at once.
#[derive(Debug)]
pub struct Compiler {
    inner: eerie::compiler::Compiler,
    revision: String,
}

impl Compiler {
    /// Loads `libIREECompiler.so` (from the `iree-base-compiler` wheel) at `library_path`.
    ///
    /// IREE allows one compiler library per process: a second call with the same path
    /// shares it; one with another path fails.
    pub fn load(library_path: &Path) -> Result<Compiler, CompileError> {
        let inner = eerie::compiler::Compiler::with_library(library_path)?;
        let revision = inner.get_revision()?;
        Ok(Compiler { inner, revision })
    }

    /// The compiler's build revision (e.g. "3.13.0"); part of every cache key.
    pub fn revision(&self) -> String {
        self.revision.clone()
    }

    /// Compiles MLIR text with the given command-line style flags to a VMFB module.
    pub fn compile(&self, mlir: &str, flags: &[String]) -> Result<Vec<u8>, CompileError> {
        INVOCATIONS.fetch_add(1, Ordering::Relaxed);
        Ok(self.inner.compile_str(mlir, flags)?)
    }
}

/// Flags that compile for the CPU this process runs on.
///
/// float64 must keep its precision, so demotion to f32 (on by default in some IREE
/// input pipelines) is turned off explicitly.
pub fn llvm_cpu_flags() -> Vec<String> {
    [
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=host",
        "--iree-input-demote-f64-to-f32=false",
    ]
    .iter()
    .map(|flag| flag.to_string())
    .collect()
}
