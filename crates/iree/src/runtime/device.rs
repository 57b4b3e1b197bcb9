//! A HAL device and the HAL VM module bound to it.

use super::error::{check, RuntimeError};
use super::host_memory::device_allocator;
use super::instance::{host_allocator, instance};
use eerie_sys::runtime as sys;
use std::sync::Arc;

/// One IREE device (e.g. the local CPU). Thread-safe: modules on several threads share it.
pub struct Device {
    pub(crate) raw: *mut sys::iree_hal_device_t,
    /// The `hal` VM module every context of this device starts with. VM modules hold no
    /// per-context state, so one serves all contexts.
    pub(crate) hal_module: *mut sys::iree_vm_module_t,
    driver: String,
    /// The driver's name and path of the device, as it enumerates them.
    info: DeviceInfo,
    /// Local CPU devices read host memory directly, so inputs can be imported as is.
    pub(crate) host_memory_is_device_memory: bool,
}

// SAFETY: HAL devices and VM modules are internally synchronized (IREE documents them
// as thread-safe); this struct only holds retained references to them.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl Device {
    /// Creates a device of `driver` ("local-sync", "local-task", and whatever else this
    /// build registers, e.g. "vulkan" or "cuda"). `device` selects one: a number is an
    /// ordinal, anything else a driver-specific path; `None` takes the default device.
    pub fn new(driver: &str, device: Option<&str>) -> Result<Arc<Device>, RuntimeError> {
        crate::fpu::keep_overrides_linked();
        let instance = instance()?;
        let (raw, info) = create_device(instance.drivers, driver, device)?;
        if driver == "vulkan" {
            super::empty_bindings::install(raw);
        }
        let hal_module = match create_hal_module(instance.vm, raw) {
            Ok(module) => module,
            Err(error) => {
                // SAFETY: `raw` is ours and not shared yet.
                unsafe { sys::iree_hal_device_release(raw) };
                return Err(error);
            }
        };
        Ok(Arc::new(Device {
            raw,
            hal_module,
            driver: driver.to_string(),
            info,
            host_memory_is_device_memory: driver.starts_with("local-"),
        }))
    }

    /// The driver and the device's name and path as the driver enumerates them, e.g.
    /// "vulkan: llvmpipe (LLVM 15.0.6, 256 bits) [path 0000...]"; IREE's device identifier
    /// where the driver lists no devices.
    pub fn description(&self) -> String {
        if self.info.name.is_empty() {
            // SAFETY: the device is alive; the id is a view into device-owned storage that
            // we copy before returning.
            let id = unsafe { string(sys::iree_hal_device_id(self.raw)) };
            return format!("{}: {id}", self.driver);
        }
        format!("{}: {} [path {}]", self.driver, self.info.name, self.info.path)
    }

    /// The devices `driver` can create here, in ordinal order; `Err` if this build or this
    /// machine has no such driver (e.g. no Vulkan loader, no CUDA library).
    pub fn available(driver: &str) -> Result<Vec<DeviceInfo>, RuntimeError> {
        let instance = instance()?;
        let raw = create_driver(instance.drivers, driver)?;
        let infos = query_devices(raw);
        // SAFETY: ours, used no more.
        unsafe { sys::iree_hal_driver_release(raw) };
        infos
    }

    /// One of IREE's `iree_hal_device_query_i64` values, e.g. ("vulkan.feature",
    /// "shader_float64") or ("cuda.device", "compute_capability_major").
    pub fn query_i64(&self, category: &str, key: &str) -> Result<i64, RuntimeError> {
        let mut value = 0i64;
        // SAFETY: the device is alive; the views outlive the call.
        check(unsafe { sys::iree_hal_device_query_i64(self.raw, view(category), view(key), &mut value) })
            .map_err(|e| RuntimeError::Usage(format!("{} cannot tell {category}/{key}: {e}", self.driver)))?;
        Ok(value)
    }

    /// The device's path as its driver lists it (empty where the driver lists none).
    pub fn path(&self) -> &str {
        &self.info.path
    }

    pub fn driver(&self) -> &str {
        &self.driver
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: both were retained by `new`; modules referring to them hold an Arc to
        // this Device, so nothing uses them any more.
        unsafe {
            sys::iree_vm_module_release(self.hal_module);
            sys::iree_hal_device_release(self.raw);
        }
    }
}

/// A device as its driver lists it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    pub path: String,
}

fn create_driver(
    registry: *mut sys::iree_hal_driver_registry_t,
    driver_name: &str,
) -> Result<*mut sys::iree_hal_driver_t, RuntimeError> {
    let mut driver = std::ptr::null_mut();
    // SAFETY: the registry lives for the process; the name view outlives the call.
    check(unsafe {
        sys::iree_hal_driver_registry_try_create(
            registry,
            view(driver_name),
            // The driver allocates its buffers (results included) with this allocator.
            device_allocator(),
            &mut driver,
        )
    })?;
    Ok(driver)
}

fn query_devices(driver: *mut sys::iree_hal_driver_t) -> Result<Vec<DeviceInfo>, RuntimeError> {
    let mut count = 0;
    let mut infos: *mut sys::iree_hal_device_info_t = std::ptr::null_mut();
    // SAFETY: the driver is alive; IREE allocates `infos` (strings included, in the same
    // block) with our allocator, freed below after the strings are copied.
    check(unsafe {
        sys::iree_hal_driver_query_available_devices(driver, host_allocator(), &mut count, &mut infos)
    })?;
    let list = (0..count)
        // SAFETY: `count` entries; their views point into the same allocation.
        .map(|i| unsafe {
            let info = &*infos.add(i);
            DeviceInfo { name: string(info.name), path: string(info.path) }
        })
        .collect();
    // SAFETY: allocated by IREE with this allocator; nothing refers to it any more.
    unsafe { sys::iree_allocator_free(host_allocator(), infos.cast()) };
    Ok(list)
}

/// Creates the device that `device` selects (see [`Device::new`]) and says which one it is.
fn create_device(
    registry: *mut sys::iree_hal_driver_registry_t,
    driver_name: &str,
    device: Option<&str>,
) -> Result<(*mut sys::iree_hal_device_t, DeviceInfo), RuntimeError> {
    let driver = create_driver(registry, driver_name)?;
    // The default device is the first listed; a path is whatever the driver takes.
    let infos = query_devices(driver).unwrap_or_default();
    let info = match device.map(|d| (d, d.parse::<usize>())) {
        None => infos.first().cloned(),
        Some((_, Ok(ordinal))) => infos.get(ordinal).cloned(),
        Some((path, Err(_))) => infos.iter().find(|i| i.path == path).cloned(),
    };
    let result = create_device_on(driver, driver_name, device);
    // SAFETY: the device (if any) retains what it needs of its driver.
    unsafe { sys::iree_hal_driver_release(driver) };
    let info = info.unwrap_or_else(|| DeviceInfo { name: String::new(), path: device.unwrap_or_default().to_string() });
    result.map(|raw| (raw, info))
}

fn create_device_on(
    driver: *mut sys::iree_hal_driver_t,
    driver_name: &str,
    device: Option<&str>,
) -> Result<*mut sys::iree_hal_device_t, RuntimeError> {
    // Devices do their async I/O through a proactor pool; the device retains it.
    let mut pool = std::ptr::null_mut();
    // SAFETY: null node ids means "nodes 0..count"; the out-pointer is valid.
    check(unsafe {
        sys::iree_async_proactor_pool_create(
            sys::iree_numa_node_count(),
            std::ptr::null(),
            sys::iree_async_proactor_pool_options_default(),
            host_allocator(),
            &mut pool,
        )
    })?;
    let params = sys::iree_hal_device_create_params_t {
        next: std::ptr::null(),
        proactor_pool: pool,
    };
    let options = device_options(driver_name);
    let mut raw = std::ptr::null_mut();
    // SAFETY: `driver` and `pool` are live; strings and `options` outlive the calls.
    let status = unsafe {
        match device {
            None => sys::iree_hal_driver_create_device_by_id(
                driver,
                sys::IREE_HAL_DEVICE_ID_DEFAULT as sys::iree_hal_device_id_t,
                options.len(),
                options.as_ptr(),
                &params,
                host_allocator(),
                &mut raw,
            ),
            Some(selector) => match selector.parse::<usize>() {
                Ok(ordinal) => sys::iree_hal_driver_create_device_by_ordinal(
                    driver,
                    ordinal,
                    options.len(),
                    options.as_ptr(),
                    &params,
                    host_allocator(),
                    &mut raw,
                ),
                Err(_) => sys::iree_hal_driver_create_device_by_path(
                    driver,
                    view(driver_name),
                    view(selector),
                    options.len(),
                    options.as_ptr(),
                    &params,
                    host_allocator(),
                    &mut raw,
                ),
            },
        }
    };
    // SAFETY: the device holds its own reference to the pool.
    unsafe { sys::iree_async_proactor_pool_release(pool) };
    check(status)?;
    Ok(raw)
}

/// The driver's device options (key, value) we set.
///
/// Vulkan: `cached_bda_replay_instances=0` turns off IREE 3.13's cache of recorded
/// command buffers. A reusable command buffer (the module's memoized ones, replayed with a
/// binding table on every call) is recorded into a Vulkan command buffer on its first
/// submission and replayed as is on later ones; only its dispatches' buffer addresses are
/// refreshed, while its copies and fills keep the buffers of the first call
/// (`hal/drivers/vulkan/queue.c`, `acquire_native_replay`). Scalars that the host program
/// copies out of its inputs were then read from buffers since freed and reused by other
/// calls' inputs: `zeros((a, b))` of shape `(b, a)`, an empty `arange(-1, -9, -3)`.
fn device_options(driver_name: &str) -> Vec<sys::iree_string_pair_t> {
    let pairs: &[(&'static str, &'static str)] = match driver_name {
        "vulkan" => &[("cached_bda_replay_instances", "0")],
        _ => &[],
    };
    pairs
        .iter()
        .map(|&(key, value)| sys::iree_string_pair_t {
            __bindgen_anon_1: sys::iree_string_pair_t__bindgen_ty_1 { key: view(key) },
            __bindgen_anon_2: sys::iree_string_pair_t__bindgen_ty_2 { value: view(value) },
        })
        .collect()
}

fn create_hal_module(
    vm: *mut sys::iree_vm_instance_t,
    device: *mut sys::iree_hal_device_t,
) -> Result<*mut sys::iree_vm_module_t, RuntimeError> {
    let mut tracker = std::ptr::null_mut();
    // These are the defaults of iree_async_frontier_tracker_options_default(), a C inline.
    let options = sys::iree_async_frontier_tracker_options_t {
        axis_table_capacity: 256,
        session_epoch: 1,
        machine_index: 0,
    };
    // SAFETY: the out-pointer is valid.
    check(unsafe {
        sys::iree_async_frontier_tracker_create(options, host_allocator(), &mut tracker)
    })?;
    let mut group = std::ptr::null_mut();
    // SAFETY: `device` and `tracker` are live; the group retains both.
    let grouped = check(unsafe {
        sys::iree_hal_device_group_create_from_device(device, tracker, host_allocator(), &mut group)
    });
    // SAFETY: the group (if created) holds its own reference.
    unsafe { sys::iree_async_frontier_tracker_release(tracker) };
    grouped?;
    let mut module = std::ptr::null_mut();
    // SAFETY: `vm` and `group` are live; the module retains the group.
    let created = check(unsafe {
        sys::iree_hal_module_create(
            vm,
            sys::iree_hal_module_device_policy_default(),
            group,
            sys::iree_hal_module_flag_bits_t_IREE_HAL_MODULE_FLAG_NONE,
            sys::iree_hal_module_debug_sink_null(),
            host_allocator(),
            &mut module,
        )
    });
    // SAFETY: the module (if created) holds its own reference.
    unsafe { sys::iree_hal_device_group_release(group) };
    created?;
    Ok(module)
}

/// A borrowed IREE string view of `text` (valid while `text` is).
pub(crate) fn view(text: &str) -> sys::iree_string_view_t {
    sys::iree_string_view_t {
        data: text.as_ptr().cast(),
        size: text.len(),
    }
}

/// Copies an IREE string view into a Rust string.
///
/// # Safety
/// `view` must point at `size` readable bytes (or be empty).
pub(crate) unsafe fn string(view: sys::iree_string_view_t) -> String {
    if view.size == 0 || view.data.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { std::slice::from_raw_parts(view.data.cast::<u8>(), view.size) };
    String::from_utf8_lossy(bytes).into_owned()
}
