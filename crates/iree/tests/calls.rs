//! Calls into compiled modules: shapes, element types, several results, errors, threads.

mod common;
use common::*;
use pytensor_mlir_iree::{ElementType, HostInput, RuntimeError, IMPORT_ALIGNMENT};

fn call_mul(module: &pytensor_mlir_iree::Module, a: &[f64], b: &[f64]) -> Vec<f64> {
    let f = module.function("module.main").unwrap();
    let (ha, hb) = (HostArray::f64(a), HostArray::f64(b));
    let out = call_f64_vectors(module, &f, &[&ha, &hb], a.len()).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].shape(), &[a.len()]);
    assert_eq!(out[0].element(), ElementType::F64);
    assert_eq!(
        out[0].bytes().as_ptr() as usize % IMPORT_ALIGNMENT,
        0,
        "result not 64-byte aligned"
    );
    f64_values(out[0].bytes())
}

#[test]
fn one_function_at_lengths_3_5_and_0_on_both_drivers() {
    for driver in DRIVERS {
        let module = load(driver, &mul_f64());
        assert_eq!(
            call_mul(&module, &[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]),
            [4.0, 10.0, 18.0]
        );
        assert_eq!(
            call_mul(&module, &[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0; 5]),
            [2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(call_mul(&module, &[], &[]), Vec::<f64>::new());
    }
}

#[test]
fn bare_name_is_qualified_with_the_module_name() {
    let device = device("local-sync");
    assert!(
        device.description().starts_with("local-sync"),
        "{}",
        device.description()
    );
    let module = load("local-sync", &mul_f64());
    assert_eq!(module.name(), "module");
    assert_eq!(module.function("main").unwrap().name(), "module.main");
    let missing = module.function("module.nope").unwrap_err();
    assert!(missing.to_string().contains("module.nope"), "{missing}");
}

#[test]
fn misaligned_inputs_are_copied_and_still_correct() {
    let module = load("local-sync", &mul_f64());
    let f = module.function("module.main").unwrap();
    let a = HostArray::misaligned(&f64_bytes(&[1.5, 2.5]));
    let b = HostArray::misaligned(&f64_bytes(&[2.0, 4.0]));
    let out = module
        .call(
            &f,
            &[
                a.input(&[2], ElementType::F64),
                b.input(&[2], ElementType::F64),
            ],
        )
        .unwrap();
    assert_eq!(f64_values(out[0].bytes()), [3.0, 10.0]);
}

#[test]
fn several_results_of_different_types() {
    let mlir = r#"
func.func @main(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xi8>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf64>
  %e = tensor.empty(%n) : tensor<?xf64>
  %e8 = tensor.empty(%n) : tensor<?xi8>
  %r:3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<?xf64>, tensor<?xf64>) outs(%e, %e, %e8 : tensor<?xf64>, tensor<?xf64>, tensor<?xi8>) {
  ^bb0(%x: f64, %y: f64, %o: f64, %p: f64, %q: i8):
    %s = arith.addf %x, %y : f64
    %d = arith.subf %x, %y : f64
    %lt = arith.cmpf olt, %x, %y : f64
    %l = arith.extui %lt : i1 to i8
    linalg.yield %s, %d, %l : f64, f64, i8
  } -> (tensor<?xf64>, tensor<?xf64>, tensor<?xi8>)
  return %r#0, %r#1, %r#2 : tensor<?xf64>, tensor<?xf64>, tensor<?xi8>
}"#;
    for driver in DRIVERS {
        let module = load(driver, mlir);
        let f = module.function("module.main").unwrap();
        let a = HostArray::f64(&[1.0, 5.0, 3.0]);
        let b = HostArray::f64(&[2.0, 4.0, 3.0]);
        let out = call_f64_vectors(&module, &f, &[&a, &b], 3).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(f64_values(out[0].bytes()), [3.0, 9.0, 6.0]);
        assert_eq!(f64_values(out[1].bytes()), [-1.0, 1.0, 0.0]);
        assert_eq!(out[2].element(), ElementType::I8);
        assert_eq!(out[2].bytes(), &[1u8, 0, 0]);
    }
}

#[test]
fn rank_0() {
    let mlir = r#"
func.func @main(%a: tensor<f64>, %b: tensor<f64>) -> tensor<f64> {
  %e = tensor.empty() : tensor<f64>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%a, %b : tensor<f64>, tensor<f64>) outs(%e : tensor<f64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %m = arith.mulf %x, %y : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  return %r : tensor<f64>
}"#;
    for driver in DRIVERS {
        let module = load(driver, mlir);
        let f = module.function("module.main").unwrap();
        let a = HostArray::f64(&[3.0]);
        let b = HostArray::f64(&[-2.5]);
        let out = module
            .call(
                &f,
                &[
                    a.input(&[], ElementType::F64),
                    b.input(&[], ElementType::F64),
                ],
            )
            .unwrap();
        assert_eq!(out[0].shape(), &[] as &[usize]);
        assert_eq!(f64_values(out[0].bytes()), [-7.5]);
    }
}

#[test]
fn integer_and_bool_inputs_use_signless_integers() {
    let module = load("local-sync", &binary_1d("i8", "arith.addi"));
    let f = module.function("main").unwrap();
    let (a, b) = (
        HostArray::aligned(&[1, 0x7f, 0xff]),
        HostArray::aligned(&[2, 1, 1]),
    );
    // int8, uint8 and bool all travel as MLIR i8 and are accepted by the ABI check.
    for element in [ElementType::I8, ElementType::U8, ElementType::Bool] {
        let out = module
            .call(&f, &[a.input(&[3], element), b.input(&[3], element)])
            .unwrap();
        assert_eq!(out[0].bytes(), &[3u8, 0x80, 0x00], "{element:?}");
        assert_eq!(out[0].element(), ElementType::I8);
    }

    let module = load("local-sync", &binary_1d("i64", "arith.muli"));
    let f = module.function("main").unwrap();
    let a = HostArray::aligned(&i64_bytes(&[i64::MAX / 2, -3, 1 << 40]));
    let b = HostArray::aligned(&i64_bytes(&[2, 7, 1 << 20]));
    for element in [ElementType::I64, ElementType::U64] {
        let out = module
            .call(&f, &[a.input(&[3], element), b.input(&[3], element)])
            .unwrap();
        assert_eq!(i64_values(out[0].bytes()), [i64::MAX - 1, -21, 1 << 60]);
    }

    for (mlir_type, element, width) in [
        ("i16", ElementType::I16, 2),
        ("i32", ElementType::U32, 4),
        ("f32", ElementType::F32, 4),
    ] {
        let op = if mlir_type.starts_with('f') {
            "arith.addf"
        } else {
            "arith.addi"
        };
        let module = load("local-sync", &binary_1d(mlir_type, op));
        let f = module.function("main").unwrap();
        let zeros = HostArray::aligned(&vec![0u8; 2 * width]);
        let out = module
            .call(
                &f,
                &[zeros.input(&[2], element), zeros.input(&[2], element)],
            )
            .unwrap();
        assert_eq!(out[0].bytes(), vec![0u8; 2 * width], "{mlir_type}");
    }
}

#[test]
fn mismatched_inputs_are_errors() {
    let module = load("local-sync", &mul_f64());
    let f = module.function("module.main").unwrap();
    let a = HostArray::f64(&[1.0, 2.0, 3.0]);
    let a32 = HostArray::aligned(&f32_bytes(&[1.0, 2.0, 3.0]));
    let m = HostArray::f64(&[1.0, 2.0, 3.0, 4.0]);

    let wrong_type = module.call(
        &f,
        &[
            a.input(&[3], ElementType::F64),
            a32.input(&[3], ElementType::F32),
        ],
    );
    let message = wrong_type.expect_err("f32 for f64 must fail").to_string();
    assert!(message.contains("element type mismatch"), "{message}");

    let wrong_rank = module.call(
        &f,
        &[
            a.input(&[3], ElementType::F64),
            m.input(&[2, 2], ElementType::F64),
        ],
    );
    assert!(wrong_rank.is_err());

    let wrong_count = module.call(&f, &[a.input(&[3], ElementType::F64)]);
    assert!(wrong_count.is_err());

    let too_few_bytes = HostInput {
        data: &a.bytes()[..16],
        shape: &[3],
        element: ElementType::F64,
    };
    let error = module
        .call(&f, &[too_few_bytes, too_few_bytes])
        .unwrap_err();
    assert!(
        matches!(error, RuntimeError::InvalidInput { index: 0, .. }),
        "{error}"
    );

    // The module is still usable after each failure.
    let out = call_f64_vectors(&module, &f, &[&a, &a], 3).unwrap();
    assert_eq!(f64_values(out[0].bytes()), [1.0, 4.0, 9.0]);
}

#[test]
fn function_of_another_module_is_refused() {
    let first = load("local-sync", &mul_f64());
    let second = load("local-sync", &mul_f64());
    let f = first.function("module.main").unwrap();
    let a = HostArray::f64(&[1.0]);
    let error = second.call(
        &f,
        &[
            a.input(&[1], ElementType::F64),
            a.input(&[1], ElementType::F64),
        ],
    );
    assert!(matches!(error, Err(RuntimeError::Usage(_))));
}

#[test]
fn unknown_driver_is_an_error() {
    let error = pytensor_mlir_iree::Device::new("no-such-driver", None)
        .err()
        .expect("must fail");
    assert!(error.to_string().contains("no-such-driver"), "{error}");
}

#[test]
fn concurrent_calls_from_several_threads() {
    for driver in DRIVERS {
        let module = std::sync::Arc::new(load(driver, &mul_f64()));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let module = module.clone();
                std::thread::spawn(move || {
                    let f = module.function("module.main").unwrap();
                    for i in 0..500 {
                        let n = 1 + (i + t) % 17;
                        let a: Vec<f64> = (0..n).map(|k| (k + t) as f64).collect();
                        let b: Vec<f64> = (0..n).map(|k| (k * i) as f64).collect();
                        let (ha, hb) = (HostArray::f64(&a), HostArray::f64(&b));
                        let out = module
                            .call(
                                &f,
                                &[
                                    ha.input(&[n], ElementType::F64),
                                    hb.input(&[n], ElementType::F64),
                                ],
                            )
                            .unwrap();
                        let expected: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
                        assert_eq!(f64_values(out[0].bytes()), expected);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    }
}

#[test]
fn results_outlive_their_module_and_move_between_threads() {
    let module = load("local-task", &mul_f64());
    let f = module.function("module.main").unwrap();
    let a = HostArray::f64(&[2.0, 3.0]);
    let out = module
        .call(
            &f,
            &[
                a.input(&[2], ElementType::F64),
                a.input(&[2], ElementType::F64),
            ],
        )
        .unwrap();
    drop(module);
    let values = std::thread::spawn(move || f64_values(out[0].bytes()))
        .join()
        .unwrap();
    assert_eq!(values, [4.0, 9.0]);
}
