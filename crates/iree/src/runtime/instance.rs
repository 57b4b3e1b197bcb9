//! The process-wide IREE VM instance and HAL driver registry shared by all devices.

use super::error::{check, RuntimeError};
use eerie_sys::runtime as sys;
use std::sync::OnceLock;

unsafe extern "C" {
    // IREE's libc allocator (base/allocator_libc.c): the body of `iree_allocator_system()`,
    // which is a C inline function and so has no binding.
    fn iree_allocator_libc_ctl(
        self_: *mut std::ffi::c_void,
        command: sys::iree_allocator_command_t,
        params: *const std::ffi::c_void,
        inout_ptr: *mut *mut std::ffi::c_void,
    ) -> sys::iree_status_t;
}

/// IREE's system allocator (malloc/free).
pub(crate) fn host_allocator() -> sys::iree_allocator_t {
    sys::iree_allocator_t {
        self_: std::ptr::null_mut(),
        ctl: Some(iree_allocator_libc_ctl),
    }
}

pub(crate) struct Instance {
    pub(crate) vm: *mut sys::iree_vm_instance_t,
    pub(crate) drivers: *mut sys::iree_hal_driver_registry_t,
}

// SAFETY: IREE VM instances and driver registries are documented thread-safe; the
// pointers are created once and never freed (the instance lives for the process).
unsafe impl Send for Instance {}
// SAFETY: as above.
unsafe impl Sync for Instance {}

/// The instance, created on first use. A private driver registry (not IREE's global
/// default) keeps us clear of other IREE users in the same process.
pub(crate) fn instance() -> Result<&'static Instance, RuntimeError> {
    static INSTANCE: OnceLock<Result<Instance, String>> = OnceLock::new();
    INSTANCE
        .get_or_init(|| create().map_err(|error| error.to_string()))
        .as_ref()
        .map_err(|message| RuntimeError::Iree(message.clone()))
}

fn create() -> Result<Instance, RuntimeError> {
    let mut vm = std::ptr::null_mut();
    // SAFETY: out-pointer is valid; the allocator is IREE's own.
    check(unsafe {
        sys::iree_vm_instance_create(
            sys::IREE_VM_TYPE_CAPACITY_DEFAULT as usize,
            host_allocator(),
            &mut vm,
        )
    })?;
    let drivers = register_types_and_drivers(vm);
    if drivers.is_err() {
        // SAFETY: `vm` is ours and nothing else refers to it yet.
        unsafe { sys::iree_vm_instance_release(vm) };
    }
    Ok(Instance {
        vm,
        drivers: drivers?,
    })
}

fn register_types_and_drivers(
    vm: *mut sys::iree_vm_instance_t,
) -> Result<*mut sys::iree_hal_driver_registry_t, RuntimeError> {
    // SAFETY: `vm` is a live instance.
    check(unsafe { sys::iree_hal_module_register_all_types(vm) })?;
    let mut drivers = std::ptr::null_mut();
    // SAFETY: out-pointer is valid.
    check(unsafe { sys::iree_hal_driver_registry_allocate(host_allocator(), &mut drivers) })?;
    // SAFETY: `drivers` is a fresh registry, so no factory is registered twice.
    let registered = check(unsafe { sys::iree_hal_register_all_available_drivers(drivers) });
    if registered.is_err() {
        // SAFETY: the registry is ours and unused.
        unsafe { sys::iree_hal_driver_registry_free(drivers) };
    }
    registered.map(|()| drivers)
}
