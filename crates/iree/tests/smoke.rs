mod common;
use common::*;
use pytensor_mlir_iree::ElementType;

#[test]
fn smoke() {
    let module = load("local-sync", &mul_f64());
    println!("name {}", module.name());
    let f = module.function("module.main").unwrap();
    let a = HostArray::f64(&[1.0, 2.0, 3.0]);
    let b = HostArray::f64(&[4.0, 5.0, 6.0]);
    let out = module.call(&f, &[a.input(&[3], ElementType::F64), b.input(&[3], ElementType::F64)]).unwrap();
    println!("{:?} {:?} {:?}", out[0].shape(), out[0].element(), f64_values(out[0].bytes()));
    println!("copies {} live {}", pytensor_mlir_iree::runtime::input_copy_count(), pytensor_mlir_iree::runtime::live_input_imports());
}
