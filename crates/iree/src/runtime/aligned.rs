//! Host memory aligned like IREE's own allocations.

/// IREE's heap buffer alignment (IREE_HAL_HEAP_BUFFER_ALIGNMENT): host memory must start
/// on this boundary to be imported without a copy.
pub const IMPORT_ALIGNMENT: usize = eerie_sys::runtime::IREE_HAL_HEAP_BUFFER_ALIGNMENT as usize;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; IMPORT_ALIGNMENT]);

/// An owned byte buffer starting on a 64-byte boundary, so that results read back from a
/// device (or copied off an aliased input) are as aligned as IREE's own buffers.
pub(crate) struct AlignedBytes {
    lines: Box<[Line]>,
    len: usize,
}

impl AlignedBytes {
    pub(crate) fn zeroed(len: usize) -> AlignedBytes {
        let lines = vec![Line([0; IMPORT_ALIGNMENT]); len.div_ceil(IMPORT_ALIGNMENT)];
        AlignedBytes {
            lines: lines.into_boxed_slice(),
            len,
        }
    }

    pub(crate) fn copy_of(bytes: &[u8]) -> AlignedBytes {
        let mut aligned = AlignedBytes::zeroed(bytes.len());
        aligned.as_mut_slice().copy_from_slice(bytes);
        aligned
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `lines` holds at least `len` initialized bytes, contiguous because
        // `Line` is a plain byte array with no padding.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<u8>(), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<u8>(), self.len) }
    }
}

const _: () = assert!(std::mem::align_of::<Line>() == IMPORT_ALIGNMENT);

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
