//! The in-process IREE compiler: MLIR text in, VMFB bytes out.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

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
        use eerie::compiler::CompilerError as E;
        // eerie's own Display prints the diagnostics with Debug formatting; spell them
        // out one per line instead ("Error: buffer:2:10: use of undeclared ...").
        let message = match &error {
            E::IREECompilerError(failure, diagnostics) => {
                let diagnostics = diagnostics.to_string();
                if diagnostics.is_empty() {
                    failure.to_string()
                } else {
                    format!("{failure}\n{}", diagnostics.trim_end())
                }
            }
            E::IREECompilerDiagnosticsError(diagnostics) => {
                diagnostics.to_string().trim_end().to_string()
            }
            other => other.to_string(),
        };
        CompileError { message }
    }
}

/// The compiler library loaded into this process. Shareable between threads; compiles
/// run one at a time (see `ONE_COMPILE_AT_A_TIME`).
#[derive(Debug)]
pub struct Compiler {
    inner: eerie::compiler::Compiler,
    revision: String,
}

/// Serializes compiles process-wide. Compiles on several threads at once crashed the
/// process now and then (SIGSEGV right after LLVM printed
/// "createTargetMachine(x86_64-unknown-unknown-eabi-elf) failed; machine may not be
/// enabled in LLVM", twice, interleaved): IREE 3.13's llvm-cpu target lookup is not safe
/// to run concurrently. A compile takes ~0.3 s, so serializing costs little.
static ONE_COMPILE_AT_A_TIME: Mutex<()> = Mutex::new(());

impl Compiler {
    /// Loads `libIREECompiler.so` (from the `iree-base-compiler` wheel) at `library_path`.
    ///
    /// IREE allows one compiler library per process: a second call with the same path
    /// shares it; one with another path fails.
    pub fn load(library_path: &Path) -> Result<Compiler, CompileError> {
        let mut inner = eerie::compiler::Compiler::with_library(library_path)?;
        // The options that a session does not take (see `PROCESS_FLAGS`), set once for the
        // process; a second load of the shared library finds them set already.
        let argv = std::iter::once("pytensor-mlir".to_string()).chain(PROCESS_FLAGS.iter().map(|f| f.to_string())).collect();
        match inner.setup_global_cl(argv) {
            Ok(_) | Err(eerie::compiler::CompilerError::GlobalCLAlreadySet) => {}
            Err(error) => return Err(error.into()),
        }
        let revision = inner.get_revision()?;
        Ok(Compiler { inner, revision })
    }

    /// The compiler's build revision (e.g. "3.13.0"); part of every cache key.
    pub fn revision(&self) -> String {
        self.revision.clone()
    }

    /// Compiles MLIR text with the given command-line style flags to a VMFB module.
    pub fn compile(&self, mlir: &str, flags: &[String]) -> Result<Vec<u8>, CompileError> {
        // The guard protects no data, so a lock poisoned by a panicking thread is as good
        // as a fresh one.
        let _one_at_a_time = ONE_COMPILE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        INVOCATIONS.fetch_add(1, Ordering::Relaxed);
        // Process-wide options are in effect already; a session would refuse them.
        let session_flags: Vec<String> = flags.iter().filter(|f| !PROCESS_FLAGS.contains(&f.as_str())).cloned().collect();
        Ok(self.inner.compile_str(mlir, &session_flags)?)
    }
}

/// Compiler options that IREE registers as process-wide LLVM options, which a compiler
/// session refuses ("option not found"): set once when the library is loaded (they apply
/// to every compile in the process), and still listed in a target's flags so that cache
/// keys, `CompiledFunction.flags` and dumps say what the code was compiled with (and
/// `iree-compile` takes them as they are).
pub const PROCESS_FLAGS: &[&str] = &["--iree-llvmcpu-vector-pproc-strategy=peel", "--iree-llvmcpu-fail-on-large-vector=false"];

/// Flags that compile for the CPU this process runs on: [`crate::Target::LlvmCpu`]'s.
pub fn llvm_cpu_flags() -> Vec<String> {
    crate::Target::LlvmCpu { driver: "local-sync".to_string() }.flags()
}
