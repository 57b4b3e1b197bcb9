//! Empty tensors on Vulkan.
//!
//! IREE 3.13's compiler binds every tensor of a dispatch with its exact byte range, so an
//! empty input, result or intermediate gives a binding of length 0; its Vulkan driver
//! refuses those when the command buffer is replayed ("Vulkan dispatch binding N resolved
//! to an empty buffer range", `hal/drivers/vulkan/command_buffer.c`), as the Vulkan spec
//! requires a descriptor range above 0. Nothing in the module can ask for other ranges.
//!
//! The fix sits between the HAL module and the driver, on the two vtable entries that
//! record a dispatch. A device of the Vulkan driver gets a copy of its vtable whose
//! `create_command_buffer` gives each new command buffer a copy of its own vtable whose
//! `dispatch`:
//! - drops a dispatch of zero workgroups (it runs no invocation, so it reads and writes
//!   nothing: what `vkCmdDispatch` with a zero count does, minus the bindings check), and
//!   one whose bindings are all empty (a kernel writes only through its bindings, so
//!   nothing it could do is seen: e.g. a scan along an empty axis of a (0, 3, 2) tensor);
//! - binds an empty range to another, non-empty binding of the same dispatch: the kernel
//!   indexes an empty tensor zero times, so the stand-in range is never read or written.
//! Bindings given as slots of a binding table (resolved when the command buffer is
//! submitted) are left as they are. `end` puts the driver's own vtable back, since the
//! driver's queue recognises its command buffers by their vtable.
//!
//! IREE's C code checks these types only in assertions (`IREE_HAL_ASSERT_TYPE`, compiled
//! out of its release build), so the hook is installed only where they are compiled out:
//! builds without Rust debug assertions (cmake-rs builds IREE in Debug for those).

use eerie_sys::runtime as sys;
use std::sync::OnceLock;

/// A driver's vtable and our copy of it with some entries replaced.
struct Patched<T: 'static> {
    original: &'static T,
    patched: &'static T,
}

// SAFETY: both are immutable vtables that live as long as the process.
unsafe impl<T> Send for Patched<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Patched<T> {}

static DEVICE: OnceLock<Patched<sys::iree_hal_device_vtable_t>> = OnceLock::new();
static COMMAND_BUFFER: OnceLock<Patched<sys::iree_hal_command_buffer_vtable_t>> = OnceLock::new();

/// The vtable slot of a HAL object: every HAL object starts with an `iree_hal_resource_t`.
///
/// # Safety
/// `object` is a live HAL object.
unsafe fn vtable_slot(object: *mut std::ffi::c_void) -> *mut *const std::ffi::c_void {
    std::ptr::addr_of_mut!((*object.cast::<sys::iree_hal_resource_t>()).vtable)
}

/// Swaps `object`'s vtable for the patched copy in `cell` (made from the first vtable
/// seen); leaves an object of another vtable alone.
///
/// # Safety
/// `object` is a live HAL object of the vtable type `T`, not yet used by other threads.
unsafe fn patch<T: Copy + 'static>(object: *mut std::ffi::c_void, cell: &'static OnceLock<Patched<T>>, replace: fn(&mut T)) {
    let slot = vtable_slot(object);
    let original: &'static T = &*(*slot).cast::<T>();
    let patched = cell.get_or_init(|| {
        let mut copy = *original;
        replace(&mut copy);
        Patched { original, patched: Box::leak(Box::new(copy)) }
    });
    if std::ptr::eq(patched.original, original) {
        *slot = (patched.patched as *const T).cast();
    }
}

/// Makes `device` (of the Vulkan driver, just created) record empty bindings as above.
pub(crate) fn install(device: *mut sys::iree_hal_device_t) {
    if cfg!(debug_assertions) {
        return;
    }
    // SAFETY: the device was just created and is not shared yet; it is a HAL object.
    unsafe { patch(device.cast(), &DEVICE, |v| v.create_command_buffer = Some(create_command_buffer)) };
}

unsafe extern "C" fn create_command_buffer(
    device: *mut sys::iree_hal_device_t,
    mode: sys::iree_hal_command_buffer_mode_t,
    command_categories: sys::iree_hal_command_category_t,
    queue_affinity: sys::iree_hal_queue_affinity_t,
    binding_capacity: sys::iree_host_size_t,
    out_command_buffer: *mut *mut sys::iree_hal_command_buffer_t,
) -> sys::iree_status_t {
    let original = DEVICE.get().expect("installed with the device vtable").original;
    let create = original.create_command_buffer.expect("every device creates command buffers");
    let status = create(device, mode, command_categories, queue_affinity, binding_capacity, out_command_buffer);
    if status.is_null() && !(*out_command_buffer).is_null() {
        // SAFETY: just created by the driver, not shared yet.
        patch((*out_command_buffer).cast(), &COMMAND_BUFFER, |v| {
            v.dispatch = Some(dispatch);
            v.end = Some(end);
        });
    }
    status
}

fn original_command_buffer() -> &'static sys::iree_hal_command_buffer_vtable_t {
    COMMAND_BUFFER.get().expect("installed with the command buffer vtable").original
}

unsafe extern "C" fn end(command_buffer: *mut sys::iree_hal_command_buffer_t) -> sys::iree_status_t {
    let original = original_command_buffer();
    *vtable_slot(command_buffer.cast()) = (original as *const sys::iree_hal_command_buffer_vtable_t).cast();
    (original.end.expect("every command buffer ends"))(command_buffer)
}

/// The bytes a binding covers; `None` for a slot of a binding table (resolved later).
unsafe fn byte_range(binding: &sys::iree_hal_buffer_ref_t) -> Option<sys::iree_device_size_t> {
    if binding.buffer.is_null() {
        return None;
    }
    // IREE_HAL_WHOLE_BUFFER: from the offset to the end.
    Some(if binding.length == sys::iree_device_size_t::MAX {
        sys::iree_hal_buffer_byte_length(binding.buffer).saturating_sub(binding.offset)
    } else {
        binding.length
    })
}

unsafe extern "C" fn dispatch(
    command_buffer: *mut sys::iree_hal_command_buffer_t,
    executable: *mut sys::iree_hal_executable_t,
    function: sys::iree_hal_executable_function_t,
    config: sys::iree_hal_dispatch_config_t,
    constants: sys::iree_const_byte_span_t,
    bindings: sys::iree_hal_buffer_ref_list_t,
    flags: sys::iree_hal_dispatch_flags_t,
) -> sys::iree_status_t {
    let record = original_command_buffer().dispatch.expect("every command buffer dispatches");
    let indirect = (sys::iree_hal_dispatch_flag_bits_t_IREE_HAL_DISPATCH_FLAG_DYNAMIC_INDIRECT_PARAMETERS
        | sys::iree_hal_dispatch_flag_bits_t_IREE_HAL_DISPATCH_FLAG_STATIC_INDIRECT_PARAMETERS) as sys::iree_hal_dispatch_flags_t;
    if flags & indirect == 0 && config.workgroup_count.contains(&0) {
        return std::ptr::null_mut();
    }
    let refs = if bindings.count == 0 || bindings.values.is_null() {
        &[][..]
    } else {
        std::slice::from_raw_parts(bindings.values, bindings.count)
    };
    let empty = |r: &sys::iree_hal_buffer_ref_t| byte_range(r) == Some(0);
    if refs.iter().all(empty) {
        return std::ptr::null_mut();
    }
    let stand_in = refs.iter().find(|r| byte_range(r).is_some_and(|n| n > 0));
    let (Some(stand_in), true) = (stand_in, refs.iter().any(empty)) else {
        return record(command_buffer, executable, function, config, constants, bindings, flags);
    };
    let rebound: Vec<sys::iree_hal_buffer_ref_t> = refs.iter().map(|r| if empty(r) { *stand_in } else { *r }).collect();
    let list = sys::iree_hal_buffer_ref_list_t { count: rebound.len(), values: rebound.as_ptr() };
    // The driver copies the references while recording; `rebound` outlives the call.
    record(command_buffer, executable, function, config, constants, list, flags)
}
