//! Many calls must not grow the process: every IREE object a call makes is released.

mod common;
use common::*;
use pytensor_mlir_iree::ElementType;

fn max_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("needs Linux /proc");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn soak(driver: &str, calls: usize) -> i64 {
    let module = load(driver, &mul_f64());
    let f = module.function("module.main").unwrap();
    let aligned = HostArray::f64(&[1.0; 10]);
    let misaligned = HostArray::misaligned(&f64_bytes(&[2.0; 10]));
    let run = |n: usize| {
        for i in 0..n {
            // Alternate the zero-copy and the copying paths.
            let b = if i % 2 == 0 { &aligned } else { &misaligned };
            let out = module
                .call(
                    &f,
                    &[
                        aligned.input(&[10], ElementType::F64),
                        b.input(&[10], ElementType::F64),
                    ],
                )
                .unwrap();
            assert_eq!(out[0].bytes().len(), 80);
        }
    };
    run(2_000); // warm up pools and allocator caches
    let before = max_rss_kib() as i64;
    run(calls);
    max_rss_kib() as i64 - before
}

#[test]
fn twenty_thousand_calls_do_not_grow_rss() {
    for driver in DRIVERS {
        let growth = soak(driver, 20_000);
        // A leak of even one 64-byte object per call would be over 1 MiB here.
        assert!(
            growth < 512,
            "{driver}: RSS grew by {growth} KiB over 20k calls"
        );
    }
}

#[test]
#[ignore = "long soak: cargo test --release --test soak -- --ignored"]
fn a_million_calls_do_not_grow_rss() {
    for driver in DRIVERS {
        let growth = soak(driver, 1_000_000);
        assert!(
            growth < 1024,
            "{driver}: RSS grew by {growth} KiB over 1M calls"
        );
    }
}
