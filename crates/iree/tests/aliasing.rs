//! Zero-copy inputs, and results that are (or contain) an input.
//! One test per binary: the counters it checks are process-wide.

mod common;
use common::*;
use pytensor_mlir_iree::runtime::{input_copy_count, live_input_imports};
use pytensor_mlir_iree::ElementType;

const RETURNS_ITS_ARGUMENT: &str = r#"
func.func @main(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  return %a, %b : tensor<?xf64>, tensor<?xf64>
}"#;

#[test]
fn aligned_inputs_are_not_copied_and_results_never_alias_them() {
    for driver in DRIVERS {
        let module = load(driver, &mul_f64());
        let f = module.function("module.main").unwrap();
        let a = HostArray::f64(&[1.0, 2.0, 3.0]);
        let copies = input_copy_count();
        for _ in 0..10 {
            let out = call_f64_vectors(&module, &f, &[&a, &a], 3).unwrap();
            assert_eq!(f64_values(out[0].bytes()), [1.0, 4.0, 9.0]);
            assert!(
                out[0].is_mapped(),
                "local results are handed out without a copy"
            );
        }
        assert_eq!(
            input_copy_count(),
            copies,
            "aligned inputs must be imported ({driver})"
        );
        let unaligned = HostArray::misaligned(&f64_bytes(&[1.0, 2.0, 3.0]));
        call_f64_vectors(&module, &f, &[&unaligned, &a], 3).unwrap();
        assert_eq!(input_copy_count(), copies + 1);
        assert_imports_released(driver);

        // IREE hands an argument returned as is straight back as the result; it must be
        // copied off the caller's memory, which the caller may free right after the call.
        let module = load(driver, RETURNS_ITS_ARGUMENT);
        let f = module.function("module.main").unwrap();
        let a = HostArray::f64(&[7.0, 8.0]);
        let b = HostArray::misaligned(&f64_bytes(&[9.0]));
        let out = module
            .call(
                &f,
                &[
                    a.input(&[2], ElementType::F64),
                    b.input(&[1], ElementType::F64),
                ],
            )
            .unwrap();
        let a_range = a.bytes().as_ptr_range();
        assert!(
            !a_range.contains(&out[0].bytes().as_ptr()),
            "result aliases the caller's input"
        );
        assert!(!out[0].is_mapped());
        // The misaligned input was staged in an aligned copy that lives only for the call:
        // a result returning it must own its bytes too.
        assert!(!out[1].is_mapped());
        assert_imports_released(driver);
        drop(a);
        drop(b);
        assert_eq!(f64_values(out[0].bytes()), [7.0, 8.0]);
        assert_eq!(f64_values(out[1].bytes()), [9.0]);
        assert_eq!(out[0].bytes().as_ptr() as usize % 64, 0);
    }
}

/// local-sync drops its last reference to an import before `call` returns. local-task
/// did too in every run seen, but a worker thread could in principle retire its command
/// buffer (dropping, never reading, the reference) just after signalling: allow a moment.
fn assert_imports_released(driver: &str) {
    if driver == "local-sync" {
        assert_eq!(
            live_input_imports(),
            0,
            "imports still referenced after the call"
        );
        return;
    }
    for _ in 0..1000 {
        if live_input_imports() == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!(
        "{} imported inputs still referenced by IREE",
        live_input_imports()
    );
}
