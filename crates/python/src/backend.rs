//! The process-wide IREE pieces: one compiler, one disk cache, one open device per
//! driver and device.

use crate::errors::{compile_error, runtime_error};
use pyo3::PyResult;
use pytensor_mlir_iree::{Compiler, Device, DiskCache, Target};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

static COMPILER: OnceLock<Compiler> = OnceLock::new();
/// Open devices by (driver, selector), each with the compiler target it
/// reported. Weak: a device closes once no compiled function uses it. That matters on
/// lavapipe, where each open Vulkan device keeps two threads busy: IREE 3.13's queue
/// completion threads wait with `VK_SEMAPHORE_WAIT_ANY_BIT`, which Mesa 22.3 emulates by
/// polling the clock (measured: two threads spinning per open device, even when idle).
type Devices = HashMap<(String, Option<String>), (Weak<Device>, Target)>;
static DEVICES: Mutex<Option<Devices>> = Mutex::new(None);

/// The compiler, loaded from `library` the first time (eerie allows one per process).
pub fn compiler(library: &Path) -> PyResult<&'static Compiler> {
    if let Some(c) = COMPILER.get() {
        return Ok(c);
    }
    let loaded = Compiler::load(library).map_err(compile_error)?;
    Ok(COMPILER.get_or_init(|| loaded))
}

/// `$PYTENSOR_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/pytensor_mlir`, else `~/.cache/pytensor_mlir`.
pub fn cache() -> DiskCache {
    let dir = std::env::var_os("PYTENSOR_MLIR_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("pytensor_mlir")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("pytensor_mlir")))
        .unwrap_or_else(|| std::env::temp_dir().join("pytensor_mlir"));
    DiskCache::new(dir)
}

/// The device `selector` (an ordinal or a driver-specific path; `None` for the default)
/// of `driver`, and the target that compiles for it: the open one if some compiled
/// function still uses it (whichever selector named it), else a new one.
pub fn device(driver: &str, selector: Option<&str>) -> PyResult<(Arc<Device>, Target)> {
    let mut guard = DEVICES.lock().unwrap_or_else(|p| p.into_inner());
    let devices = guard.get_or_insert_with(HashMap::new);
    devices.retain(|_, (device, _)| device.strong_count() > 0);
    let key = (driver.to_string(), selector.map(str::to_string));
    if let Some((device, target)) = devices.get(&key) {
        if let Some(device) = device.upgrade() {
            return Ok((device, target.clone()));
        }
    }
    let new = Device::new(driver, selector).map_err(runtime_error)?;
    // Another selector may name the same device (the default, its ordinal, its path):
    // then the open one is shared and the new one closed.
    let open = devices.values().find_map(|(device, target)| {
        let device = device.upgrade()?;
        let same = device.driver() == driver && !new.path().is_empty() && device.path() == new.path();
        same.then(|| (device, target.clone()))
    });
    let (device, target) = match open {
        Some(open) => open,
        None => {
            let target = Target::of_device(&new).map_err(runtime_error)?;
            (new, target)
        }
    };
    devices.insert(key, (Arc::downgrade(&device), target.clone()));
    Ok((device, target))
}

/// `$PYTENSOR_MLIR_DUMP`: a folder that receives every module's MLIR and flags.
pub fn dump(key: &str, mlir: &str, flags: &[String]) -> std::io::Result<()> {
    let Some(dir) = std::env::var_os("PYTENSOR_MLIR_DUMP") else { return Ok(()) };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(format!("{key}.mlir")), mlir)?;
    std::fs::write(dir.join(format!("{key}.flags")), flags.join("\n") + "\n")
}
