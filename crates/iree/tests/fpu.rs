//! Subnormals survive IREE dispatches, and the caller's FPU state survives a call.

mod common;
use common::*;
use pytensor_mlir_iree::{fpu, ElementType};

fn halve(element: &str) -> String {
    format!(
        r#"func.func @main(%a: tensor<?x{element}>) -> tensor<?x{element}> {{
  %c0 = arith.constant 0 : index
  %half = arith.constant 0.5 : {element}
  %n = tensor.dim %a, %c0 : tensor<?x{element}>
  %e = tensor.empty(%n) : tensor<?x{element}>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%a : tensor<?x{element}>) outs(%e : tensor<?x{element}>) {{
  ^bb0(%x: {element}, %o: {element}):
    %m = arith.mulf %x, %half : {element}
    linalg.yield %m : {element}
  }} -> tensor<?x{element}>
  return %r : tensor<?x{element}>
}}"#
    )
}

#[test]
fn subnormal_results_are_kept_on_both_drivers() {
    for driver in DRIVERS {
        let module = load(driver, &halve("f64"));
        let f = module.function("module.main").unwrap();
        let a = HostArray::f64(&[1.0, 3.0, 2.2250738585072014e-308]);
        let out = module.call(&f, &[a.input(&[3], ElementType::F64)]).unwrap();
        assert_eq!(
            f64_values(out[0].bytes()),
            [0.5, 1.5, 1.1125369292536007e-308],
            "{driver}"
        );

        let module = load(driver, &halve("f32"));
        let f = module.function("module.main").unwrap();
        let a = HostArray::aligned(&f32_bytes(&[f32::MIN_POSITIVE, 2.0]));
        let out = module.call(&f, &[a.input(&[2], ElementType::F32)]).unwrap();
        assert_eq!(f32_values(out[0].bytes()), [5.877472e-39, 1.0], "{driver}");
    }
}

#[test]
fn callers_fpu_state_is_the_same_after_a_call() {
    for driver in DRIVERS {
        let module = load(driver, &halve("f64"));
        let f = module.function("module.main").unwrap();
        let a = HostArray::f64(&[2.2250738585072014e-308]);
        let original = fpu::control_register();
        #[cfg(target_arch = "x86_64")]
        let states = [original, original | 0x8040, (original & !0x6000) | 0x2000];
        #[cfg(not(target_arch = "x86_64"))]
        let states = [original];
        for state in states {
            fpu::set_control_register(state);
            let out = module.call(&f, &[a.input(&[1], ElementType::F64)]);
            let after = fpu::control_register();
            fpu::set_control_register(original);
            assert_eq!(after, state, "{driver}: control register changed by a call");
            // The dispatch ran in IEEE mode whatever the caller had set.
            assert_eq!(
                f64_values(out.unwrap()[0].bytes()),
                [1.1125369292536007e-308]
            );
        }
    }
}
