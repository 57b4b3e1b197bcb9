//! Host memory aligned like IREE's own allocations.

use super::host_memory;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// IREE's heap buffer alignment (IREE_HAL_HEAP_BUFFER_ALIGNMENT): host memory must start
/// on this boundary to be imported without a copy.
pub const IMPORT_ALIGNMENT: usize = eerie_sys::runtime::IREE_HAL_HEAP_BUFFER_ALIGNMENT as usize;

/// An owned byte buffer starting on a 64-byte boundary, so that results read back from a
/// device, copies of aliased results and staged copies of misaligned inputs are as
/// aligned as IREE's own buffers (and importable).
pub(crate) struct AlignedBytes {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain owned heap memory.
unsafe impl Send for AlignedBytes {}
// SAFETY: shared access only reads.
unsafe impl Sync for AlignedBytes {}

impl AlignedBytes {
    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len, IMPORT_ALIGNMENT).expect("allocation size overflows")
    }

    fn allocate(len: usize, zeroed: bool) -> AlignedBytes {
        if len == 0 {
            // No allocation; any aligned, non-null address serves an empty slice.
            let ptr = NonNull::new(IMPORT_ALIGNMENT as *mut u8).expect("non-zero");
            return AlignedBytes { ptr, len };
        }
        if let Some(raw) = host_memory::allocate_staging(len) {
            if zeroed {
                // SAFETY: `len` writable bytes.
                unsafe { std::ptr::write_bytes(raw, 0, len) };
            }
            let ptr = NonNull::new(raw).expect("allocate_staging never returns null");
            return AlignedBytes { ptr, len };
        }
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { if zeroed { alloc::alloc_zeroed(layout) } else { alloc::alloc(layout) } };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBytes { ptr, len }
    }

    pub(crate) fn zeroed(len: usize) -> AlignedBytes {
        Self::allocate(len, true)
    }

    /// A copy of `bytes`, written once (no zeroing first: this is on the call path).
    pub(crate) fn copy_of(bytes: &[u8]) -> AlignedBytes {
        let copy = Self::allocate(bytes.len(), false);
        // SAFETY: the new allocation has `bytes.len()` bytes and cannot overlap `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), copy.ptr.as_ptr(), bytes.len()) };
        copy
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` holds `len` initialized bytes (or is a dangling aligned pointer
        // with `len == 0`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBytes {
    fn drop(&mut self) {
        if self.len >= host_memory::LARGE {
            // SAFETY: allocated by `allocate_staging` (same length test), freed once.
            unsafe { host_memory::free_staging(self.ptr.as_ptr()) };
        } else if self.len > 0 {
            // SAFETY: allocated in `allocate` with this very layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_copies() {
        for len in [0, 1, 63, 64, 65, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let aligned = AlignedBytes::copy_of(&bytes);
            assert_eq!(aligned.as_slice(), &bytes[..]);
            assert_eq!(aligned.as_slice().as_ptr() as usize % IMPORT_ALIGNMENT, 0);
        }
    }
}
