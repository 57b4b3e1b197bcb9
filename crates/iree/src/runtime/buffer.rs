//! Host arrays going in (imported or copied) and result buffers coming out (mapped).

use super::aligned::{AlignedBytes, IMPORT_ALIGNMENT};
use super::device::Device;
use super::error::{check, RuntimeError};
use super::instance::host_allocator;
use crate::ElementType;
use eerie_sys::runtime as sys;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A C-contiguous host array passed to a call. The bytes are only borrowed for the call.
#[derive(Clone, Copy, Debug)]
pub struct HostInput<'a> {
    pub data: &'a [u8],
    pub shape: &'a [usize],
    pub element: ElementType,
}

static INPUT_COPIES: AtomicU64 = AtomicU64::new(0);
static LIVE_IMPORTS: AtomicU64 = AtomicU64::new(0);

/// How many non-empty inputs this process copied instead of importing (because they
/// were less aligned than the module's code assumes, a private copy was asked for, or
/// the device cannot read host memory).
pub fn input_copy_count() -> u64 {
    INPUT_COPIES.load(Ordering::Relaxed)
}

/// How many imported host arrays IREE still references: zero after every call seen, on
/// local-sync and local-task, because no result keeps a caller's memory alive.
pub fn live_input_imports() -> u64 {
    LIVE_IMPORTS.load(Ordering::Acquire)
}

// Access bits are an enum of u32 values stored in a u16 field.
const ACCESS_READ: sys::iree_hal_memory_access_t =
    sys::iree_hal_memory_access_bits_t_IREE_HAL_MEMORY_ACCESS_READ as sys::iree_hal_memory_access_t;
const ACCESS_ALL: sys::iree_hal_memory_access_t =
    sys::iree_hal_memory_access_bits_t_IREE_HAL_MEMORY_ACCESS_ALL as sys::iree_hal_memory_access_t;

/// IREE_HAL_QUEUE_AFFINITY_ANY, a C cast macro that has no binding.
const QUEUE_AFFINITY_ANY: u64 = u64::MAX;

/// Makes a buffer view of `input` for `device`. On devices that read host memory, the
/// caller's own bytes when they are aligned to `alignment` (what the module's code
/// assumes of its buffers), else one aligned copy put in `staging` (which must outlive
/// the call), and always a copy where `private`; on other devices a fresh device buffer.
/// Returns the view and, if imported, the host address range it wraps.
pub(crate) fn input_view(
    device: &Device,
    index: usize,
    input: &HostInput<'_>,
    staging: &mut Vec<AlignedBytes>,
    private: bool,
    alignment: usize,
) -> Result<(*mut sys::iree_hal_buffer_view_t, Option<HostRange>), RuntimeError> {
    let byte_length = expected_byte_length(input).ok_or_else(|| RuntimeError::InvalidInput {
        index,
        reason: format!("shape {:?} overflows the address space", input.shape),
    })?;
    if byte_length != input.data.len() {
        return Err(RuntimeError::InvalidInput {
            index,
            reason: format!(
                "{} bytes given for shape {:?} of {:?} ({byte_length} bytes expected)",
                input.data.len(),
                input.shape,
                input.element
            ),
        });
    }
    if byte_length == 0 || !device.host_memory_is_device_memory {
        if byte_length > 0 {
            INPUT_COPIES.fetch_add(1, Ordering::Relaxed);
        }
        return Ok((copy(device, input)?, None));
    }
    if !private && (input.data.as_ptr() as usize).is_multiple_of(alignment) {
        let view = import(device, input)?;
        return Ok((view, Some(HostRange::of(input.data))));
    }
    // Host memory less aligned than the code assumes (a float32 array 4 bytes past an
    // 8-byte boundary, or any array for a module compiled with IREE's default 64), or a
    // private copy asked for: one memcpy into aligned memory, imported in place. IREE's
    // own host-to-device copy path (`allocate_buffer_copy`) goes through a transfer
    // command and was ~20x slower than a memcpy on 8 MB here.
    INPUT_COPIES.fetch_add(1, Ordering::Relaxed);
    let copy = AlignedBytes::copy_of(input.data);
    let staged = HostInput {
        data: copy.as_slice(),
        ..*input
    };
    let view = import(device, &staged)?;
    let range = HostRange::of(staged.data);
    staging.push(copy);
    Ok((view, Some(range)))
}

fn expected_byte_length(input: &HostInput<'_>) -> Option<usize> {
    input
        .shape
        .iter()
        .try_fold(input.element.byte_size(), |bytes, &dim| {
            bytes.checked_mul(dim)
        })
}

/// Called by IREE when the last reference to an imported host array goes away.
unsafe extern "C" fn import_released(
    _user_data: *mut std::ffi::c_void,
    _buffer: *mut sys::iree_hal_buffer_t,
) {
    LIVE_IMPORTS.fetch_sub(1, Ordering::Release);
}

/// Wraps the caller's bytes in a buffer view without copying them. IREE's heap allocator
/// only imports host memory starting on an IMPORT_ALIGNMENT (64-byte) boundary, so the
/// import starts at the boundary at or below the data and the view is a subspan from the
/// data's first byte: the up to 63 bytes in front share the data's 64-byte block, hence
/// its page, so the range is mapped, and nothing reads them (the view and every binding
/// made from it start at the data).
fn import(
    device: &Device,
    input: &HostInput<'_>,
) -> Result<*mut sys::iree_hal_buffer_view_t, RuntimeError> {
    let lead = input.data.as_ptr() as usize % IMPORT_ALIGNMENT;
    // Read-only access: the compiled function reads its arguments and never writes them,
    // and the caller only lent us shared bytes.
    let params = sys::iree_hal_buffer_params_t {
        usage: sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_DEFAULT,
        access: ACCESS_READ,
        type_: sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_HOST_LOCAL
            | sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE,
        queue_affinity: QUEUE_AFFINITY_ANY,
        min_alignment: 0,
    };
    let mut external = sys::iree_hal_external_buffer_t {
        type_: sys::iree_hal_external_buffer_type_e_IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION,
        flags: 0,
        size: lead + input.data.len(),
        handle: sys::iree_hal_external_buffer_t__bindgen_ty_1 {
            host_allocation: sys::iree_hal_external_buffer_t__bindgen_ty_1__bindgen_ty_1 {
                // Address arithmetic only: this pointer is never dereferenced here.
                ptr: input.data.as_ptr().wrapping_sub(lead).cast_mut().cast(),
            },
        },
    };
    let release = sys::iree_hal_buffer_release_callback_t {
        fn_: Some(import_released),
        user_data: std::ptr::null_mut(),
    };
    let mut whole = std::ptr::null_mut();
    // SAFETY: the device is alive; the host range is valid for the whole call (the
    // caller's borrow, and the lead bytes as said above), and the call makes sure nothing
    // keeps it past that; IREE only reads it (READ access), through the subspan below.
    check(unsafe {
        sys::iree_hal_allocator_import_buffer(
            sys::iree_hal_device_allocator(device.raw),
            params,
            &mut external,
            release,
            &mut whole,
        )
    })?;
    LIVE_IMPORTS.fetch_add(1, Ordering::Relaxed);
    let buffer = if lead == 0 {
        whole
    } else {
        let mut span = std::ptr::null_mut();
        // SAFETY: `whole` is live and `lead + len` bytes long; the subspan retains it,
        // so ours is released right after.
        let status = unsafe {
            let status = sys::iree_hal_buffer_subspan(
                whole,
                lead as sys::iree_device_size_t,
                input.data.len() as sys::iree_device_size_t,
                host_allocator(),
                &mut span,
            );
            sys::iree_hal_buffer_release(whole);
            status
        };
        check(status)?;
        span
    };
    let mut view = std::ptr::null_mut();
    // SAFETY: `buffer` is live; the shape slice is valid for the call; the view
    // retains the buffer, so ours is released right after.
    let status = unsafe {
        let status = sys::iree_hal_buffer_view_create(
            buffer,
            input.shape.len(),
            input.shape.as_ptr(),
            input.element.to_hal(),
            sys::iree_hal_encoding_types_t_IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR,
            host_allocator(),
            &mut view,
        );
        sys::iree_hal_buffer_release(buffer);
        status
    };
    check(status)?;
    Ok(view)
}

fn copy(
    device: &Device,
    input: &HostInput<'_>,
) -> Result<*mut sys::iree_hal_buffer_view_t, RuntimeError> {
    let params = sys::iree_hal_buffer_params_t {
        usage: sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_DEFAULT,
        access: ACCESS_ALL,
        type_: sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
        queue_affinity: QUEUE_AFFINITY_ANY,
        min_alignment: 0,
    };
    let mut view = std::ptr::null_mut();
    // SAFETY: the device is alive; the data and shape slices are valid for the call and
    // IREE copies the bytes before returning.
    check(unsafe {
        sys::iree_hal_buffer_view_allocate_buffer_copy(
            device.raw,
            sys::iree_hal_device_allocator(device.raw),
            input.shape.len(),
            input.shape.as_ptr(),
            input.element.to_hal(),
            sys::iree_hal_encoding_types_t_IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR,
            params,
            sys::iree_const_byte_span_t {
                data: input.data.as_ptr(),
                data_length: input.data.len(),
            },
            &mut view,
        )
    })?;
    Ok(view)
}

/// The host addresses of an imported input, to recognise results that alias it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostRange {
    start: usize,
    end: usize,
}

impl HostRange {
    fn of(bytes: &[u8]) -> HostRange {
        let start = bytes.as_ptr() as usize;
        HostRange {
            start,
            end: start + bytes.len(),
        }
    }

    fn overlaps(&self, other: &HostRange) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// One result of a call: its shape, element type and bytes.
///
/// On devices whose memory the host can map (local CPU devices) the bytes are IREE's
/// own result buffer, mapped for as long as this value lives, so they can be handed on
/// without a copy. Otherwise they are read back once into owned memory. Either way the
/// bytes start on a 64-byte boundary and never alias a caller's input.
pub struct OutputBuffer {
    shape: Vec<usize>,
    element: ElementType,
    storage: Storage,
}

enum Storage {
    Mapped {
        view: *mut sys::iree_hal_buffer_view_t,
        mapping: sys::iree_hal_buffer_mapping_t,
        /// IREE buffers do not retain the device whose allocator made them, yet they
        /// touch it when freed: the device must outlive the buffer.
        _device: Arc<Device>,
    },
    Owned(AlignedBytes),
}

// SAFETY: the view is reference counted with atomics and the mapping is plain host
// memory that only this value unmaps; IREE objects may be released on any thread.
unsafe impl Send for OutputBuffer {}
// SAFETY: shared access only reads the mapped bytes.
unsafe impl Sync for OutputBuffer {}

impl OutputBuffer {
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn element(&self) -> ElementType {
        self.element
    }

    /// True when `bytes()` is IREE's result buffer itself, mapped (no copy was made).
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped { .. })
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.storage {
            // SAFETY: the mapping covers exactly `data_length` bytes of a buffer that the
            // retained view keeps alive, and stays mapped until drop.
            Storage::Mapped { mapping, .. } => unsafe {
                std::slice::from_raw_parts(mapping.contents.data, mapping.contents.data_length)
            },
            Storage::Owned(bytes) => bytes.as_slice(),
        }
    }

    /// Takes over `view` (one retained reference) returned by a call.
    pub(crate) fn from_view(
        device: &Arc<Device>,
        view: *mut sys::iree_hal_buffer_view_t,
        imports: &[HostRange],
    ) -> Result<OutputBuffer, RuntimeError> {
        let owned = ViewRef(view);
        // SAFETY: the view is alive (we hold a reference); dims has `rank` entries.
        let (hal_type, shape, byte_length, buffer) = unsafe {
            let rank = sys::iree_hal_buffer_view_shape_rank(view);
            let dims = sys::iree_hal_buffer_view_shape_dims(view);
            let shape = if rank == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(dims, rank).to_vec()
            };
            (
                sys::iree_hal_buffer_view_element_type(view),
                shape,
                sys::iree_hal_buffer_view_byte_length(view),
                sys::iree_hal_buffer_view_buffer(view),
            )
        };
        let element = ElementType::from_hal(hal_type).ok_or_else(|| {
            RuntimeError::Usage(format!(
                "result element type {hal_type:#010x} has no host type"
            ))
        })?;
        let storage = if byte_length == 0 {
            Storage::Owned(AlignedBytes::zeroed(0))
        } else if let Some(mapping) = map(buffer, byte_length)? {
            let range = HostRange {
                start: mapping.contents.data as usize,
                end: mapping.contents.data as usize + byte_length,
            };
            let aligned = range.start.is_multiple_of(IMPORT_ALIGNMENT);
            if aligned && !imports.iter().any(|import| import.overlaps(&range)) {
                Storage::Mapped {
                    view: owned.into_raw(),
                    mapping,
                    _device: device.clone(),
                }
            } else {
                // The function returned (part of) an input that the caller owns and may
                // free, or a misaligned subspan: the result must own its bytes.
                let mut mapping = mapping;
                // SAFETY: the mapping is live and covers `byte_length` bytes.
                let bytes = unsafe {
                    AlignedBytes::copy_of(std::slice::from_raw_parts(
                        mapping.contents.data,
                        byte_length,
                    ))
                };
                // SAFETY: unmapping the mapping made above, once.
                check(unsafe { sys::iree_hal_buffer_unmap_range(&mut mapping) })?;
                Storage::Owned(bytes)
            }
        } else {
            Storage::Owned(read_back(device, buffer, byte_length)?)
        };
        Ok(OutputBuffer {
            shape,
            element,
            storage,
        })
    }
}

impl std::fmt::Debug for OutputBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputBuffer")
            .field("shape", &self.shape)
            .field("element", &self.element)
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

impl Drop for OutputBuffer {
    fn drop(&mut self) {
        if let Storage::Mapped { view, mapping, .. } = &mut self.storage {
            // SAFETY: the mapping was made by `from_view` and is unmapped only here; then
            // the view reference taken over by `from_view` is released.
            unsafe {
                let unmapped = sys::iree_hal_buffer_unmap_range(mapping);
                // Unmapping a heap buffer cannot fail; a status (if any) has nowhere to go.
                sys::iree_status_free(unmapped);
                sys::iree_hal_buffer_view_release(*view);
            }
        }
    }
}

/// A retained buffer view, released on drop unless taken with `into_raw`.
struct ViewRef(*mut sys::iree_hal_buffer_view_t);

impl ViewRef {
    fn into_raw(self) -> *mut sys::iree_hal_buffer_view_t {
        let raw = self.0;
        std::mem::forget(self);
        raw
    }
}

impl Drop for ViewRef {
    fn drop(&mut self) {
        // SAFETY: we own one reference to the view.
        unsafe { sys::iree_hal_buffer_view_release(self.0) };
    }
}

/// Maps `buffer` for reading if the host can see it directly; `None` if it cannot.
fn map(
    buffer: *mut sys::iree_hal_buffer_t,
    byte_length: usize,
) -> Result<Option<sys::iree_hal_buffer_mapping_t>, RuntimeError> {
    // SAFETY: the buffer is alive (its view is held by the caller).
    let (memory_type, usage) = unsafe {
        (
            sys::iree_hal_buffer_memory_type(buffer),
            sys::iree_hal_buffer_allowed_usage(buffer),
        )
    };
    let host_visible =
        memory_type & sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_HOST_VISIBLE != 0;
    let mappable =
        usage & sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_MAPPING_SCOPED != 0;
    if !(host_visible && mappable) {
        return Ok(None);
    }
    let mut mapping = sys::iree_hal_buffer_mapping_t::default();
    // SAFETY: the buffer is alive and at least `byte_length` long (it backs the view).
    check(unsafe {
        sys::iree_hal_buffer_map_range(
            buffer,
            sys::iree_hal_mapping_mode_bits_t_IREE_HAL_MAPPING_MODE_SCOPED,
            ACCESS_READ,
            0,
            byte_length,
            &mut mapping,
        )
    })?;
    Ok(Some(mapping))
}

/// Copies a buffer the host cannot map into owned memory.
fn read_back(
    device: &Device,
    buffer: *mut sys::iree_hal_buffer_t,
    byte_length: usize,
) -> Result<AlignedBytes, RuntimeError> {
    let mut bytes = AlignedBytes::zeroed(byte_length);
    let wait_forever = sys::iree_timeout_t {
        type_: sys::iree_timeout_type_e_IREE_TIMEOUT_ABSOLUTE,
        nanos: i64::MAX,
    };
    // SAFETY: the device and buffer are alive; the target has `byte_length` bytes.
    check(unsafe {
        sys::iree_hal_device_transfer_d2h(
            device.raw,
            buffer,
            0,
            bytes.as_mut_slice().as_mut_ptr().cast(),
            byte_length,
            sys::iree_hal_transfer_buffer_flag_bits_t_IREE_HAL_TRANSFER_BUFFER_FLAG_DEFAULT,
            wait_forever,
        )
    })?;
    Ok(bytes)
}
