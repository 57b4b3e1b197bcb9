//! Median time of one call of a 10-element f64 multiply, on local-sync and local-task,
//! with 64-byte aligned inputs (the zero-copy path).
//!
//! cargo run --release -p pytensor-mlir-iree --example call_overhead [-- path/to/libIREECompiler.so]

use pytensor_mlir_iree::runtime::input_copy_count;
use pytensor_mlir_iree::{Compiler, Device, ElementType, HostInput, Module, Target};
use std::path::PathBuf;
use std::time::Instant;

const MUL_F64: &str = r#"
func.func @main(%a: tensor<?xf64>, %b: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf64>
  %e = tensor.empty(%n) : tensor<?xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %m = arith.mulf %x, %y : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  return %r : tensor<?xf64>
}"#;

/// 10 f64 values on a 64-byte boundary.
#[repr(C, align(64))]
struct Aligned([f64; 10]);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let library = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../.venv/lib/python3.11/site-packages/iree/compiler/_mlir_libs/libIREECompiler.so")
    });
    let compiler = Compiler::load(&library)?;
    let a = Aligned([1.5; 10]);
    let b = Aligned([2.0; 10]);
    // SAFETY: the 80 bytes of an aligned [f64; 10], borrowed in place.
    let view = |x: &Aligned| unsafe { std::slice::from_raw_parts(x.0.as_ptr().cast::<u8>(), 80) };
    let inputs = [
        HostInput {
            data: view(&a),
            shape: &[10],
            element: ElementType::F64,
        },
        HostInput {
            data: view(&b),
            shape: &[10],
            element: ElementType::F64,
        },
    ];
    for driver in ["local-sync", "local-task"] {
        let target = Target::LlvmCpu { driver: driver.to_string() };
        let vmfb = compiler.compile(MUL_F64, &target.flags())?;
        let device = Device::new(driver, None)?;
        let description = device.description();
        let module = Module::load_as(target.execution_model(), device, vmfb)?;
        let function = module.function("module.main")?;
        for _ in 0..2_000 {
            module.call(&function, &inputs)?;
        }
        let copies = input_copy_count();
        let mut samples = Vec::with_capacity(20_000);
        for _ in 0..20_000 {
            let start = Instant::now();
            let out = module.call(&function, &inputs)?;
            samples.push(start.elapsed());
            std::hint::black_box(out);
        }
        assert_eq!(input_copy_count(), copies, "inputs were copied");
        samples.sort();
        println!(
            "{description}: median {:.2} us per call (p10 {:.2}, p90 {:.2}), 10 x f64 multiply, zero-copy inputs",
            samples[samples.len() / 2].as_secs_f64() * 1e6,
            samples[samples.len() / 10].as_secs_f64() * 1e6,
            samples[samples.len() * 9 / 10].as_secs_f64() * 1e6,
        );
    }
    Ok(())
}
