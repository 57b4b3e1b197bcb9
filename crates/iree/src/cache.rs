//! Compiled modules on disk, keyed by everything that determines their bytes.
//!
//! File layout: `MAGIC` (8 bytes), payload length (u64 little endian), SHA-256 of the
//! payload (32 bytes), payload. A file that does not match all three is treated as
//! missing, so a crash mid-write or a damaged disk costs a recompile, never a bad module.

use sha2::{Digest, Sha256};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

const MAGIC: &[u8; 8] = b"PTMVMFB1";
const HEADER_LEN: usize = MAGIC.len() + 8 + 32;
const EXTENSION: &str = "vmfb";

/// A directory of compiled modules. Safe to share between threads and processes.
#[derive(Clone, Debug)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir`; the directory is created on the first `put`.
    pub fn new(dir: PathBuf) -> DiskCache {
        DiskCache { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache key of a module: SHA-256 (hex) of the MLIR, the flags, the compiler
    /// revision and the host CPU. The CPU is part of it because modules are compiled with
    /// `--iree-llvmcpu-target-cpu=host`: a cache directory shared between machines must
    /// not hand one CPU's code to another.
    pub fn key(mlir: &str, flags: &[String], compiler_revision: &str) -> String {
        let mut hasher = Sha256::new();
        // Length prefixes keep the fields apart: ("ab", "c") and ("a", "bc") differ.
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(mlir.as_bytes());
        field(&(flags.len() as u64).to_le_bytes());
        for flag in flags {
            field(flag.as_bytes());
        }
        field(compiler_revision.as_bytes());
        field(host_cpu_fingerprint().as_bytes());
        hex(&hasher.finalize())
    }

    /// The module stored under `key`, or `None` if it is missing, truncated or corrupt.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let path = self.path(key).ok()?;
        let mut file = fs::read(path).ok()?;
        if file.len() < HEADER_LEN || &file[..MAGIC.len()] != MAGIC {
            return None;
        }
        let length_bytes: [u8; 8] = file[MAGIC.len()..MAGIC.len() + 8].try_into().ok()?;
        let length = u64::from_le_bytes(length_bytes);
        if length != (file.len() - HEADER_LEN) as u64 {
            return None;
        }
        let digest = &file[MAGIC.len() + 8..HEADER_LEN];
        if Sha256::digest(&file[HEADER_LEN..]).as_slice() != digest {
            return None;
        }
        file.drain(..HEADER_LEN);
        Some(file)
    }

    /// Stores `vmfb` under `key`, atomically: readers see the old file or the whole new
    /// one, never a part. Concurrent puts of one key are fine (the last rename wins, and
    /// both wrote the same bytes).
    pub fn put(&self, key: &str, vmfb: &[u8]) -> io::Result<()> {
        let path = self.path(key)?;
        fs::create_dir_all(&self.dir)?;
        let temp = self.dir.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            unique_suffix()
        ));
        let written = write_synced(&temp, vmfb).and_then(|()| fs::rename(&temp, &path));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written?;
        sync_dir(&self.dir);
        Ok(())
    }

    fn path(&self, key: &str) -> io::Result<PathBuf> {
        // Keys come from `key()`; anything else could name a path outside the cache.
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cache key must be hex digits, got {key:?}"),
            ));
        }
        Ok(self.dir.join(format!("{key}.{EXTENSION}")))
    }
}

fn write_synced(path: &Path, vmfb: &[u8]) -> io::Result<()> {
    let mut file = fs::File::create(path)?;
    file.write_all(MAGIC)?;
    file.write_all(&(vmfb.len() as u64).to_le_bytes())?;
    file.write_all(&Sha256::digest(vmfb))?;
    file.write_all(vmfb)?;
    file.sync_all()
}

/// Makes the rename durable. Best effort: not every platform can open a directory.
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Distinguishes temp files of threads within one process.
fn unique_suffix() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What identifies this CPU for code compiled with `target-cpu=host`: the architecture,
/// and on Linux the first processor's model and feature lines from /proc/cpuinfo.
fn host_cpu_fingerprint() -> &'static str {
    static FINGERPRINT: OnceLock<String> = OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        let mut fingerprint = std::env::consts::ARCH.to_string();
        if let Ok(cpuinfo) = fs::read_to_string("/proc/cpuinfo") {
            let first_processor = cpuinfo.split("\n\n").next().unwrap_or("");
            for line in first_processor.lines() {
                let name = line.split(':').next().unwrap_or("").trim();
                if matches!(
                    name,
                    "vendor_id"
                        | "model name"
                        | "flags"
                        | "Features"
                        | "CPU implementer"
                        | "CPU part"
                ) {
                    fingerprint.push('\n');
                    fingerprint.push_str(line);
                }
            }
        } else {
            fingerprint.push_str(&detected_features());
        }
        fingerprint
    })
}

/// Feature detection for hosts without /proc/cpuinfo.
#[cfg(target_arch = "x86_64")]
fn detected_features() -> String {
    let mut features = String::new();
    macro_rules! probe {
        ($($feature:tt),*) => {
            $(if std::arch::is_x86_feature_detected!($feature) {
                features.push(' ');
                features.push_str($feature);
            })*
        };
    }
    probe!(
        "sse4.2",
        "popcnt",
        "avx",
        "avx2",
        "fma",
        "f16c",
        "bmi1",
        "bmi2",
        "lzcnt",
        "avx512f",
        "avx512bw",
        "avx512cd",
        "avx512dq",
        "avx512vl",
        "avx512vnni",
        "avx512bf16",
        "avx512fp16"
    );
    features
}

#[cfg(target_arch = "aarch64")]
fn detected_features() -> String {
    let mut features = String::new();
    macro_rules! probe {
        ($($feature:tt),*) => {
            $(if std::arch::is_aarch64_feature_detected!($feature) {
                features.push(' ');
                features.push_str($feature);
            })*
        };
    }
    probe!("neon", "fp16", "dotprod", "i8mm", "bf16", "sve", "sve2", "sme");
    features
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detected_features() -> String {
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn temp_cache(name: &str) -> DiskCache {
        let dir = std::env::temp_dir().join(format!(
            "pytensor-mlir-iree-cache-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        DiskCache::new(dir)
    }

    fn flags() -> Vec<String> {
        vec!["--a".to_string(), "--b".to_string()]
    }

    #[test]
    fn key_depends_on_every_input() {
        let base = DiskCache::key("m", &flags(), "r");
        assert_eq!(base.len(), 64);
        assert_eq!(base, DiskCache::key("m", &flags(), "r"));
        assert_ne!(base, DiskCache::key("m2", &flags(), "r"));
        assert_ne!(base, DiskCache::key("m", &flags()[..1], "r"));
        assert_ne!(base, DiskCache::key("m", &flags(), "r2"));
        assert_ne!(
            DiskCache::key("m", &["--ab".into()], "r"),
            DiskCache::key("m", &["--a".into(), "b".into()], "r")
        );
    }

    #[test]
    fn round_trip() {
        let cache = temp_cache("roundtrip");
        let key = DiskCache::key("m", &flags(), "r");
        assert_eq!(cache.get(&key), None);
        cache.put(&key, b"module bytes").unwrap();
        assert_eq!(cache.get(&key).as_deref(), Some(&b"module bytes"[..]));
        cache.put(&key, b"").unwrap();
        assert_eq!(cache.get(&key).as_deref(), Some(&b""[..]));
        fs::remove_dir_all(cache.dir()).unwrap();
    }

    #[test]
    fn truncated_or_flipped_file_is_a_miss() {
        let cache = temp_cache("corrupt");
        let key = DiskCache::key("m", &flags(), "r");
        let payload = vec![7u8; 1000];
        cache.put(&key, &payload).unwrap();
        let path = cache.path(&key).unwrap();
        let good = fs::read(&path).unwrap();

        fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert_eq!(cache.get(&key), None);
        fs::write(&path, &good[..10]).unwrap();
        assert_eq!(cache.get(&key), None);

        for index in [0, MAGIC.len(), HEADER_LEN - 1, HEADER_LEN + 500] {
            let mut flipped = good.clone();
            flipped[index] ^= 0x01;
            fs::write(&path, &flipped).unwrap();
            assert_eq!(cache.get(&key), None, "flipped byte {index}");
        }
        fs::write(&path, &good).unwrap();
        assert_eq!(cache.get(&key), Some(payload));
        fs::remove_dir_all(cache.dir()).unwrap();
    }

    #[test]
    fn concurrent_puts_of_one_key() {
        let cache = Arc::new(temp_cache("concurrent"));
        let key = DiskCache::key("m", &flags(), "r");
        let payload: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (cache, key, payload) = (cache.clone(), key.clone(), payload.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        cache.put(&key, &payload).unwrap();
                        assert_eq!(cache.get(&key).as_ref(), Some(&payload));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(cache.get(&key), Some(payload));
        let leftovers = fs::read_dir(cache.dir()).unwrap().count();
        assert_eq!(leftovers, 1, "temp files must not be left behind");
        fs::remove_dir_all(cache.dir()).unwrap();
    }

    #[test]
    fn keys_that_are_not_hex_are_rejected() {
        let cache = temp_cache("badkey");
        assert!(cache.put("../escape", b"x").is_err());
        assert_eq!(cache.get("../escape"), None);
    }
}
