//! The in-process compiler: diagnostics, failures that must not abort, the run counter.

mod common;
use common::*;
use pytensor_mlir_iree::{compile::invocation_count, llvm_cpu_flags};

#[test]
fn compiles_and_counts_runs() {
    let compiler = compiler();
    assert!(!compiler.revision().is_empty());
    // Other tests of this binary compile concurrently, so only a lower bound holds.
    let before = invocation_count();
    let vmfb = compiler.compile(&mul_f64(), &llvm_cpu_flags()).unwrap();
    assert!(vmfb.len() > 1000);
    assert!(invocation_count() > before);
}

#[test]
fn invalid_mlir_is_an_error_with_its_location() {
    let error = compiler()
        .compile(
            "func.func @main(%a: tensor<?xf64>) -> tensor<?xf64> {\n  return %b : tensor<?xf64>\n}",
            &llvm_cpu_flags(),
        )
        .expect_err("undefined value must not compile");
    let text = error.to_string();
    assert!(text.contains("undeclared SSA value"), "{text}");
    assert!(
        text.contains(":2:10:"),
        "diagnostics must carry line and column: {text}"
    );
}

#[test]
fn unsupported_op_is_an_error_not_an_abort() {
    // `math.sin` on f64 fails to lower in IREE 3.13's llvm-cpu backend.
    let mlir = binary_1d("f64", "arith.mulf").replace(
        "%m = arith.mulf %x, %y : f64",
        "%p = arith.mulf %x, %y : f64\n    %m = math.sin %p : f64",
    );
    let error = compiler()
        .compile(&mlir, &llvm_cpu_flags())
        .expect_err("f64 sin must not compile");
    // The linker's own "undefined symbol: sin" goes to stderr; the diagnostics say where.
    assert!(
        error.to_string().contains("failed to link executable"),
        "{error}"
    );

    let unknown_op = mul_f64().replace("arith.mulf", "arith.no_such_op");
    let error = compiler()
        .compile(&unknown_op, &llvm_cpu_flags())
        .expect_err("unknown op");
    assert!(error.to_string().contains("no_such_op"), "{error}");
}

#[test]
fn unknown_flag_is_an_error() {
    let error = compiler()
        .compile(&mul_f64(), &["--no-such-iree-flag=1".to_string()])
        .expect_err("unknown flag");
    assert!(error.to_string().contains("no-such-iree-flag"), "{error}");
}
