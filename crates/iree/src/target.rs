//! What differs per device, in one place: the IREE compiler target (flags, and the device
//! description IREE has no flag for), the runtime driver, and the element types the
//! device computes.
//!
//! | target         | runtime driver           | element types                        |
//! |----------------|--------------------------|--------------------------------------|
//! | `llvm-cpu`     | `local-sync`, `local-task` | all                                  |
//! | `vulkan-spirv` | `vulkan`                 | what the device reports (see below)  |
//! | `cuda`         | `cuda`                   | all                                  |
//! | `metal-spirv`  | `metal`                  | no float64 (Metal has no double)     |
//!
//! A Vulkan target is derived from the device's own features (`shaderFloat64`,
//! `shaderInt64`, ..., subgroup size and workgroup limits as IREE's Vulkan driver reports
//! them), so a float64 graph compiles with the SPIR-V `Float64` capability exactly where
//! the device has it. IREE 3.13 only takes named Vulkan targets on its command line, so
//! the derived one travels in the module as `hal.device.targets`, which IREE uses instead
//! of its flags.

use crate::runtime::{Device, RuntimeError};
use crate::ElementType;

/// An IREE compiler target and the runtime driver that runs what it compiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The host CPU: IREE's `llvm-cpu` backend, run by `local-sync` or `local-task`.
    LlvmCpu { driver: String },
    /// A Vulkan device, described by the features it reports.
    VulkanSpirv(VulkanFeatures),
    /// An NVIDIA GPU of compute capability `arch` (e.g. "sm_80"): PTX embedded.
    Cuda { arch: String },
    /// An Apple GPU: Metal Shading Language embedded as source (`metallib` needs Xcode).
    MetalSpirv,
}

/// How a compiled module drives its device: IREE's `--iree-execution-model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionModel {
    /// The full HAL: command buffers, semaphores and fences, on any driver.
    Hal,
    /// `inline-dynamic`: the host code calls the executables directly on the calling
    /// thread (`hal_inline` + `hal_loader` modules at run time). Only for local-sync,
    /// which runs dispatches on the calling thread anyway; it halves what a call on a
    /// small input costs.
    Inline,
}

/// What a Vulkan device can do, as far as code generation cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VulkanFeatures {
    /// The Vulkan API version (`VK_MAKE_API_VERSION` encoding).
    pub api_version: u32,
    pub shader_float64: bool,
    pub shader_int64: bool,
    pub shader_int16: bool,
    pub shader_int8: bool,
    pub storage_buffer_8bit_access: bool,
    pub storage_buffer_16bit_access: bool,
    pub subgroup_size: u32,
    pub max_workgroup_invocations: u32,
    pub max_workgroup_size: [u32; 3],
    pub max_workgroup_count: [u32; 3],
}

impl VulkanFeatures {
    /// Vulkan 1.1's guaranteed minimums and nothing optional: every Vulkan device can
    /// run what this compiles (float32 and 32-bit integers only).
    pub fn baseline() -> VulkanFeatures {
        VulkanFeatures {
            api_version: 1 << 22 | 1 << 12,
            shader_float64: false,
            shader_int64: false,
            shader_int16: false,
            shader_int8: false,
            storage_buffer_8bit_access: false,
            storage_buffer_16bit_access: false,
            subgroup_size: 32,
            max_workgroup_invocations: 128,
            max_workgroup_size: [128, 128, 64],
            max_workgroup_count: [65535, 65535, 65535],
        }
    }

    /// The features IREE's Vulkan driver enabled on `device` (it enables every optional
    /// feature the physical device reports).
    pub fn of_device(device: &Device) -> Result<VulkanFeatures, RuntimeError> {
        let feature = |key: &str| device.query_i64("vulkan.feature", key).map(|v| v != 0);
        let limit = |key: &str| device.query_i64("vulkan.device", key).map(|v| v as u32);
        Ok(VulkanFeatures {
            api_version: limit("api_version")?,
            shader_float64: feature("shader_float64")?,
            shader_int64: feature("shader_int64")?,
            shader_int16: feature("shader_int16")?,
            shader_int8: feature("shader_int8")?,
            storage_buffer_8bit_access: feature("storage_buffer_8bit_access")?,
            storage_buffer_16bit_access: feature("storage_buffer_16bit_access")?,
            subgroup_size: limit("subgroup_size")?,
            max_workgroup_invocations: limit("max_compute_workgroup_invocations")?,
            max_workgroup_size: [
                limit("max_compute_workgroup_size_x")?,
                limit("max_compute_workgroup_size_y")?,
                limit("max_compute_workgroup_size_z")?,
            ],
            max_workgroup_count: [
                limit("max_compute_workgroup_count_x")?,
                limit("max_compute_workgroup_count_y")?,
                limit("max_compute_workgroup_count_z")?,
            ],
        })
    }

    /// The highest SPIR-V version the Vulkan version guarantees.
    fn spirv_version(&self) -> &'static str {
        let (major, minor) = (self.api_version >> 22 & 0x7f, self.api_version >> 12 & 0x3ff);
        match (major, minor) {
            (1, 0) => "v1.0",
            (1, 1) => "v1.3",
            (1, 2) => "v1.5",
            _ => "v1.6",
        }
    }

    /// `#iree_gpu.target` with exactly these features. Optional subgroup operations,
    /// dot products and cooperative matrices are not claimed (IREE's driver does not
    /// report them); workgroup memory is Vulkan's guaranteed minimum, 16 KiB.
    fn gpu_target(&self) -> String {
        let mut compute = vec!["fp32", "int32"];
        let mut storage = vec!["b32"];
        if self.shader_float64 {
            compute.push("fp64");
        }
        if self.shader_int64 {
            compute.push("int64");
        }
        if self.shader_int16 {
            compute.push("int16");
        }
        if self.shader_int8 {
            compute.push("int8");
        }
        if self.shader_float64 || self.shader_int64 {
            storage.push("b64");
        }
        if self.storage_buffer_16bit_access {
            storage.push("b16");
        }
        if self.storage_buffer_8bit_access {
            storage.push("b8");
        }
        let [sx, sy, sz] = self.max_workgroup_size;
        let [cx, cy, cz] = self.max_workgroup_count;
        format!(
            "#iree_gpu.target<arch = \"\", features = \"spirv:{},cap:Shader\", wgp = <compute = {}, \
             storage = {}, subgroup = none, subgroup_size_choices = [{}], \
             max_workgroup_sizes = [{sx}, {sy}, {sz}], max_thread_count_per_workgroup = {}, \
             max_workgroup_memory_bytes = 16384, max_workgroup_counts = [{cx}, {cy}, {cz}]>>",
            self.spirv_version(),
            compute.join("|"),
            storage.join("|"),
            self.subgroup_size,
            self.max_workgroup_invocations,
        )
    }

    /// Why `element` cannot be computed on this device, if it cannot.
    fn lacks(&self, element: ElementType) -> Option<&'static str> {
        use ElementType::*;
        match element {
            F64 if !self.shader_float64 => Some("shaderFloat64"),
            I64 | U64 if !self.shader_int64 => Some("shaderInt64"),
            I16 | U16 if !self.shader_int16 => Some("shaderInt16"),
            I8 | U8 if !self.shader_int8 => Some("shaderInt8"),
            _ => None,
        }
    }
}

/// CUDA compute capabilities IREE 3.13 has no target details for (its `--iree-cuda-target`
/// accepts them, then fails with "missing GPU target"): they get Ampere's details, a
/// subset of what they have, with their own `arch` and PTX version.
const CUDA_ARCHS_WITHOUT_IREE_DETAILS: &[(&str, &str)] = &[("sm_90", "+ptx78"), ("sm_90a", "+ptx80")];

/// IREE 3.13's description of `sm_80` (`iree-compile --iree-cuda-target=sm_80`).
const AMPERE_WGP: &str = "compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, \
     subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, \
     <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, \
     <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 1024], \
     max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 166912, \
     max_workgroup_counts = [2147483647, 65535, 65535]";

/// The alignment the llvm-cpu code assumes of every buffer it is handed (the binding
/// base pointers). IREE's default is 64, its heap allocations' alignment: Stream annotates
/// each dispatch binding with its resource config's `min_buffer_offset_alignment`
/// (`stream.alignment`, AnnotateDispatchArguments), the HAL conversion makes that the
/// subspan's `alignment(64)`, and codegen an `llvm.assume align 64` on the binding
/// pointer, which lets LLVM pick aligned-only moves (vmovapd) that fault elsewhere. numpy's
/// arrays are 16-byte aligned (their slices element-aligned), so with 64 every input was
/// copied once per call. 8 is the largest element size (i64/f64): an array of any dtype
/// aligned to it is imported in place, and the code assumes no more than its elements'
/// own alignment, which LLVM's loads assume anyway.
///
/// The `iree-stream-resource-min-offset-alignment` flag says the same but is a global
/// LLVM option, which the in-process compiler's session flags do not take (and it also
/// packs results at 8-byte offsets); the module's `stream.resources` attribute is what
/// Stream looks up for a dispatch's bindings. Stream's FuseDispatchBindings rebases every
/// binding to offset 0 and passes the offsets as operands, so the bases claim exactly
/// this and an offset's alignment is a fact about that integer: in the 245 modules the
/// subtensor, shape, BLAS and graph tests compile, all 2186 binding assumptions are 8 and
/// no aligned-only move has a memory operand off the stack.
pub const CPU_BINDING_ALIGNMENT: usize = 8;

/// Every op of a module runs on the one device IREE creates for the target it is given
/// (`@__device_0`), and the module says so. Without it IREE's stream conversion does not
/// know where a loop's carried tensor (an `scf.for` iter_arg: Scan, the linalg loops)
/// lives, inserts a transfer to the device at each of its uses, and the transfer becomes a
/// copy of the whole tensor per iteration: a Scan keeping its 1000 x 100 trace took 17.6
/// ms per call for 1000 copies of 800 kB, 2.8 ms without (iree-benchmark-module on the
/// dumped module). On the function instead of the module the attribute makes IREE wrap
/// the entry point, and IREE 3.13 then fails on some modules (a constant result: "failed
/// to legalize unresolved target materialization"; "operand is unlinked" in its IPO pass).
pub const DEVICE_AFFINITY: &str = "stream.affinity = #hal.device.affinity<@__device_0>";

#[cfg(target_arch = "x86_64")]
fn host_vector_bytes() -> Option<u32> {
    if std::arch::is_x86_feature_detected!("avx512f") {
        Some(64)
    } else if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        Some(32)
    } else {
        None
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn host_vector_bytes() -> Option<u32> {
    None
}

/// No silent dtype changes: IREE 3.13 demotes f64 to f32 by default, and would truncate
/// floats its VM target cannot hold; both are turned off (the latter then fails loudly).
/// i64 demotion is off by default and pinned off here.
const NO_DEMOTION: [&str; 3] = [
    "--iree-input-demote-f64-to-f32=false",
    "--iree-input-demote-i64-to-i32=false",
    "--iree-vm-target-truncate-unsupported-floats=false",
];

/// For a module with no tensor known at compile time (nothing for IREE to evaluate ahead):
/// IREE 3.13's constant-expression hoisting analyses every operation, the scalar ones in
/// kernel bodies too, and on the long bodies of the special functions it was most of the
/// compile: gammaincinv's module 20.3 -> 9.2 s (`iree-compile --mlir-timing`:
/// ConstExprAnalysis 11.5 s, JitGlobals 3.0 s).
pub const NO_CONSTANT_EVALUATION: [&str; 2] = ["--iree-opt-const-eval=false", "--iree-opt-const-expr-hoisting=false"];

/// LLVM's SLP vectorizer, off in IREE 3.13's llvm-cpu pipeline: IREE vectorizes its own
/// kernels before LLVM sees them, but a dispatch of scalar loops (the core's dense
/// kernels, `Lowered::sequential_kernels`) gets vector code only from LLVM. A Cholesky
/// factor at n = 200 (iree-benchmark-module, Zen 4): 0.41 ms without, 0.22 ms with.
pub const SLP_VECTORIZATION: &str = "--iree-llvmcpu-slp-vectorization=true";

/// A dtype the target cannot compute; `Display` says which and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{element:?} is not available on {target}: {reason}")]
pub struct UnsupportedElement {
    pub element: ElementType,
    pub target: String,
    pub reason: String,
}

impl Target {
    /// The target of the runtime driver `driver`, as `device` (created by that driver)
    /// reports itself: the one place that maps drivers to compiler targets.
    pub fn of_device(device: &Device) -> Result<Target, RuntimeError> {
        match device.driver() {
            "local-sync" | "local-task" => Ok(Target::LlvmCpu { driver: device.driver().to_string() }),
            "vulkan" => Ok(Target::VulkanSpirv(VulkanFeatures::of_device(device)?)),
            "cuda" => {
                let major = device.query_i64("cuda.device", "compute_capability_major")?;
                let minor = device.query_i64("cuda.device", "compute_capability_minor")?;
                Ok(Target::Cuda { arch: format!("sm_{major}{minor}") })
            }
            "metal" => Ok(Target::MetalSpirv),
            other => Err(RuntimeError::Usage(format!("no compiler target for driver {other:?}"))),
        }
    }

    /// The width in bytes of the vector registers the compiled code uses, where it is worth
    /// tiling matrix products for them: the host's on llvm-cpu (compiled for
    /// `--iree-llvmcpu-target-cpu=host`), 64 with AVX-512, 32 with AVX2 and FMA; `None` on
    /// other CPUs (their tiles were never measured) and on GPUs (IREE tiles for those itself).
    pub fn matmul_vector_bytes(&self) -> Option<u32> {
        match self {
            Target::LlvmCpu { .. } => host_vector_bytes(),
            _ => None,
        }
    }

    /// The execution model modules for this target are compiled for and loaded with.
    pub fn execution_model(&self) -> ExecutionModel {
        match self {
            Target::LlvmCpu { driver } if driver == "local-sync" => ExecutionModel::Inline,
            _ => ExecutionModel::Hal,
        }
    }

    /// The alignment the compiled code assumes of the host memory it is handed:
    /// [`CPU_BINDING_ALIGNMENT`] on the CPU (see [`crate::Module::with_input_alignment`]);
    /// other devices get their inputs copied into device buffers anyway, and keep IREE's
    /// default.
    pub fn input_alignment(&self) -> usize {
        match self {
            Target::LlvmCpu { .. } => CPU_BINDING_ALIGNMENT,
            _ => crate::runtime::IMPORT_ALIGNMENT,
        }
    }

    /// IREE's name of the compiler backend.
    pub fn backend(&self) -> &'static str {
        match self {
            Target::LlvmCpu { .. } => "llvm-cpu",
            Target::VulkanSpirv(_) => "vulkan-spirv",
            Target::Cuda { .. } => "cuda",
            Target::MetalSpirv => "metal-spirv",
        }
    }

    /// The runtime driver that runs modules compiled for this target.
    pub fn driver(&self) -> &str {
        match self {
            Target::LlvmCpu { driver } => driver,
            Target::VulkanSpirv(_) => "vulkan",
            Target::Cuda { .. } => "cuda",
            Target::MetalSpirv => "metal",
        }
    }

    /// The compiler flags for this target's own execution model (the device
    /// description, where it is not a flag, goes in [`Target::module`]).
    pub fn flags(&self) -> Vec<String> {
        self.flags_for(self.execution_model())
    }

    /// The compiler flags for `model`: the full HAL works everywhere; `Inline` only where
    /// [`Target::execution_model`] says so.
    pub fn flags_for(&self, model: ExecutionModel) -> Vec<String> {
        let mut flags: Vec<String> = match self {
            Target::LlvmCpu { .. } => vec![
                "--iree-hal-target-device=local".into(),
                "--iree-hal-local-target-device-backends=llvm-cpu".into(),
                "--iree-llvmcpu-target-cpu=host".into(),
                "--iree-llvmcpu-reassociate-fp-reductions=true".into(),
                // IREE's x86 default masks every vector iteration of a dynamic-length
                // elementwise loop; AVX2's masked load/store (vmaskmovpd) is microcoded and
                // slow on AMD Zen. Peeling runs full vectors and masks only the remainder:
                // `x * 2` on 1e4 f64 14 -> 6 us (iree-benchmark-module, Zen 3).
                "--iree-llvmcpu-vector-pproc-strategy=peel".into(),
                // On AVX-512 hosts (AMD Zen 4/5 here) IREE 3.13 tiles an f64 or i64 matmul
                // into vector.contracts past its 32 KiB "large vector" guard and refuses
                // to compile them ("operations with large vector sizes (32768 bytes)");
                // LLVM compiles them fine: a 1024x1024 f64 matmul 20.9 ms
                // (iree-benchmark-module, 2 threads), numpy 50 ms in the same minute.
                "--iree-llvmcpu-fail-on-large-vector=false".into(),
            ],
            // The module carries the device target; the flag only names the device kind.
            Target::VulkanSpirv(_) => vec!["--iree-hal-target-device=vulkan".into()],
            Target::Cuda { arch } => {
                let mut flags = vec!["--iree-hal-target-device=cuda".to_string()];
                if Self::cuda_needs_details(arch).is_none() {
                    flags.push(format!("--iree-cuda-target={arch}"));
                }
                flags
            }
            Target::MetalSpirv => vec![
                "--iree-hal-target-device=metal".into(),
                "--iree-metal-compile-to-metallib=false".into(),
            ],
        };
        if model == ExecutionModel::Inline {
            flags.push("--iree-execution-model=inline-dynamic".into());
        }
        flags.extend(NO_DEMOTION.iter().map(|f| f.to_string()));
        flags
    }

    fn cuda_needs_details(arch: &str) -> Option<&'static str> {
        CUDA_ARCHS_WITHOUT_IREE_DETAILS.iter().find(|(a, _)| *a == arch).map(|(_, ptx)| *ptx)
    }

    /// The `#hal.device.target` this target needs in the module, if its flags cannot say it.
    fn device_target(&self) -> Option<String> {
        match self {
            Target::VulkanSpirv(features) => Some(format!(
                "#hal.device.target<\"vulkan\", [#hal.executable.target<\"vulkan-spirv\", \"vulkan-spirv-fb\", \
                 {{iree_codegen.target_info = {}}}>]>",
                features.gpu_target()
            )),
            Target::Cuda { arch } => Self::cuda_needs_details(arch).map(|ptx| {
                format!(
                    "#hal.device.target<\"cuda\", [#hal.executable.target<\"cuda\", \"cuda-nvptx-fb\", \
                     {{iree_codegen.target_info = #iree_gpu.target<arch = \"{arch}\", features = \"{ptx}\", \
                     wgp = <{AMPERE_WGP}>>}}>]>"
                )
            }),
            _ => None,
        }
    }

    /// The module to compile: `mlir` (top-level ops, no `module` of its own) wrapped in a
    /// module that places everything on the one device ([`DEVICE_AFFINITY`]) and names the
    /// device target where the flags cannot or, on the CPU, the alignment its code may
    /// assume of its buffers ([`CPU_BINDING_ALIGNMENT`]).
    pub fn module(&self, mlir: &str) -> String {
        let mut attributes = vec![DEVICE_AFFINITY.to_string()];
        match (self, self.device_target()) {
            (_, Some(target)) => attributes.push(format!("hal.device.targets = [{target}]")),
            // IREE's host defaults but for the offset alignment, every field spelled out:
            // the parser's own defaults (sizes 0, 32-bit indices, discrete memory) differ.
            // With these the host program (allocations, packing, results' offsets) is the
            // same as without the attribute: only the dispatches' binding alignment changes.
            (Target::LlvmCpu { .. }, None) => attributes.push(format!(
                "stream.resources = #stream.resource_config<{{max_allocation_size = {max}, \
                 min_buffer_offset_alignment = {CPU_BINDING_ALIGNMENT}, max_buffer_range = {max}, \
                 min_buffer_range_alignment = {range}, index_bits = 64, \
                 alias_mutable_bindings = false, memory_model = Unified}}>",
                max = i64::MAX,
                range = crate::runtime::IMPORT_ALIGNMENT,
            )),
            (_, None) => {}
        }
        format!("module attributes {{{}}} {{\n{mlir}}}\n", attributes.join(", "))
    }

    /// Whether the device computes `element`; `Err` says why not, before anything compiles.
    pub fn check(&self, element: ElementType) -> Result<(), UnsupportedElement> {
        let reason = match self {
            Target::VulkanSpirv(features) => features
                .lacks(element)
                .map(|feature| format!("the Vulkan device does not report {feature}")),
            Target::MetalSpirv if element == ElementType::F64 => {
                Some("Metal has no 64-bit floating-point type".to_string())
            }
            _ => None,
        };
        match reason {
            None => Ok(()),
            Some(reason) => Err(UnsupportedElement { element, target: self.backend().to_string(), reason }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_flags_pin_no_demotion() {
        let flags = Target::LlvmCpu { driver: "local-sync".into() }.flags();
        assert!(flags.contains(&"--iree-llvmcpu-target-cpu=host".to_string()));
        assert!(flags.contains(&"--iree-input-demote-f64-to-f32=false".to_string()));
        assert!(flags.contains(&"--iree-execution-model=inline-dynamic".to_string()));
        let task = Target::LlvmCpu { driver: "local-task".into() };
        assert_eq!(task.execution_model(), ExecutionModel::Hal);
        assert!(!task.flags().iter().any(|f| f.starts_with("--iree-execution-model")));
        assert!(task.module("x\n").contains("min_buffer_offset_alignment = 8,"));
    }

    #[test]
    fn only_the_cpu_tiles_matmuls_for_its_vectors() {
        let cpu = Target::LlvmCpu { driver: "local-sync".into() }.matmul_vector_bytes();
        assert!(matches!(cpu, None | Some(32) | Some(64)), "{cpu:?}");
        assert_eq!(Target::Cuda { arch: "sm_80".into() }.matmul_vector_bytes(), None);
        assert_eq!(Target::VulkanSpirv(VulkanFeatures::baseline()).matmul_vector_bytes(), None);
    }

    #[test]
    fn vulkan_target_follows_features() {
        let mut features = VulkanFeatures::baseline();
        let target = Target::VulkanSpirv(features.clone());
        assert!(target.check(ElementType::F64).unwrap_err().to_string().contains("shaderFloat64"));
        assert!(target.check(ElementType::I64).is_err());
        assert!(target.check(ElementType::F32).is_ok() && target.check(ElementType::Bool).is_ok());
        assert!(target.module("func.func @main() {\n}\n").contains("compute = fp32|int32,"));
        features.shader_float64 = true;
        let target = Target::VulkanSpirv(features);
        assert!(target.check(ElementType::F64).is_ok());
        assert!(target.module("").contains("compute = fp32|int32|fp64,"));
    }

    #[test]
    fn metal_refuses_only_float64() {
        assert!(Target::MetalSpirv.check(ElementType::F64).is_err());
        assert!(Target::MetalSpirv.check(ElementType::I64).is_ok());
    }

    #[test]
    fn cuda_sm90_carries_its_own_details() {
        let sm80 = Target::Cuda { arch: "sm_80".into() };
        assert!(sm80.flags().contains(&"--iree-cuda-target=sm_80".to_string()));
        assert_eq!(sm80.module("x\n"), format!("module attributes {{{DEVICE_AFFINITY}}} {{\nx\n}}\n"));
        let sm90 = Target::Cuda { arch: "sm_90".into() };
        assert!(sm90.module("x\n").contains("arch = \"sm_90\""));
    }
}
