//! Host memory for IREE's local devices: every buffer IREE allocates (results included)
//! and our staged copies of misaligned inputs.
//!
//! Large blocks are where time goes: a fresh 80 MB buffer costs ~20k page faults, each
//! zeroing a 4 KiB page, which took longer than the kernel that filled it. So large blocks
//! are mapped with transparent huge pages advised (as numpy does) and, once freed, kept in
//! a small pool for the next call of the same shapes, which then touches no new page.
//! Small blocks go to malloc unchanged.

use eerie_sys::runtime as sys;
use std::ffi::c_void;
use std::sync::Mutex;

/// Blocks of at least this many bytes are mapped and pooled; smaller ones are malloc'd.
/// From 64 KiB: below 1 MiB the results went to calloc, which zeroes a block reused from
/// the heap whole (`ZEROED_PREFIX`): sqrt of 1e5 float64 (an 800 KB result) spent 12% of
/// its call in memset, 80 us against NUMBA's 67.
pub(crate) const LARGE: usize = 64 << 10;
const HUGE_PAGE: usize = 2 << 20;
/// A reused large block asked for zeros gets this many leading bytes zeroed, not all.
/// IREE's malloc is a calloc, so every block it allocates asks for zeros; the large ones
/// are HAL buffers (IREE's "slab" heap buffers: the buffer's bookkeeping struct in the
/// first few hundred bytes, then its contents). HAL leaves a buffer's contents undefined
/// until written (GPU allocators do not zero them) and IREE's compiler fills explicitly
/// whatever it reads before writing, so only the bookkeeping needs the zeros. Zeroing a
/// whole reused result block cost ~18% of an `x * 2` call on 1e6 float64 (bench_ops).
const ZEROED_PREFIX: usize = 4096;
/// Idle pooled memory is capped so a burst of large calls does not stay resident forever.
const POOL_LIMIT: usize = 512 << 20;
/// And so is the count of idle blocks: finding one is a scan of the pool.
const POOL_BLOCKS: usize = 256;
/// Every block starts with a header (its kind and capacity); 64 bytes keeps payloads of
/// mapped blocks on IREE's 64-byte import alignment.
const HEADER: usize = 64;
const SMALL: usize = 0x736d_616c_6c00_0001;
const MAPPED: usize = 0x6d61_7070_6564_0002;

struct Pool {
    /// Idle mapped blocks: (base, capacity).
    idle: Vec<(usize, usize)>,
    idle_bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    idle: Vec::new(),
    idle_bytes: 0,
});

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    // The pool's invariants hold between statements, so a poisoned lock is still usable.
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn capacity_for(len: usize) -> Option<usize> {
    let total = len.checked_add(HEADER)?;
    // Round so that blocks of one shape reuse each other; coarser for huge ones.
    let granule = if total >= 4 * HUGE_PAGE { HUGE_PAGE } else { 64 << 10 };
    total.checked_next_multiple_of(granule)
}

/// A mapped block's payload (64-byte aligned), from the pool when one of the same
/// capacity is idle. `zeroed` asks for zeros (fresh mappings already are; a reused block
/// gets its first `ZEROED_PREFIX` bytes zeroed).
fn map_large(len: usize, zeroed: bool) -> *mut u8 {
    let Some(capacity) = capacity_for(len) else {
        return std::ptr::null_mut();
    };
    let reused = {
        let mut pool = pool();
        // The block freed last of that capacity: its pages are the likeliest still in the
        // caches and the TLB. Taking the one freed first instead rotated calls through
        // every idle block of the shape (a softmax that freed two 8 MB blocks made the
        // next 8 MB scatter-add 1.4x slower, its result never warm).
        let found = pool.idle.iter().rposition(|&(_, c)| c == capacity);
        found.map(|i| {
            pool.idle_bytes -= capacity;
            // `remove`, not `swap_remove`: the order is the order of freeing (see
            // `unmap_large`).
            pool.idle.remove(i).0
        })
    };
    let base = match reused {
        Some(base) => {
            if zeroed {
                // Only the leading bytes: see `ZEROED_PREFIX`.
                // SAFETY: the block has `capacity` >= HEADER + len writable bytes.
                unsafe { std::ptr::write_bytes((base + HEADER) as *mut u8, 0, len.min(ZEROED_PREFIX)) };
            }
            base as *mut u8
        }
        None => {
            // SAFETY: an anonymous private mapping; no file or address is given.
            let raw = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    capacity,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if raw == libc::MAP_FAILED {
                return std::ptr::null_mut();
            }
            if capacity >= HUGE_PAGE {
                // Advice only: without THP the mapping still works, with 4 KiB pages.
                // SAFETY: the range is the mapping just made.
                unsafe { libc::madvise(raw, capacity, libc::MADV_HUGEPAGE) };
            }
            raw.cast::<u8>()
        }
    };
    // SAFETY: the block starts with HEADER writable bytes, 8-byte aligned (page aligned).
    unsafe {
        base.cast::<usize>().write(MAPPED);
        base.cast::<usize>().add(1).write(capacity);
        base.add(HEADER)
    }
}

/// Gives a mapped block back to the pool, making room by returning the blocks freed
/// longest ago to the system; a block larger than the whole pool goes to the system.
///
/// Room is made for the newest block rather than refusing it: blocks of shapes no longer
/// called would otherwise fill the pool for good, and every later call of any shape would
/// map (and fault in) its results afresh. That happened in bench_ops, whose earlier rows
/// left the pool full: 1e6-element results cost 1.3-1.4x NUMBA in the full run against
/// 0.85-0.9x in a run of their own.
///
/// # Safety
/// `payload` came from `map_large` and is not used afterwards.
unsafe fn unmap_large(payload: *mut u8) {
    // SAFETY: per the contract, the header precedes the payload.
    let base = unsafe { payload.sub(HEADER) };
    // SAFETY: as above.
    let capacity = unsafe { base.cast::<usize>().add(1).read() };
    let mut released = vec![(base as usize, capacity)];
    if capacity <= POOL_LIMIT {
        released.clear();
        let mut pool = pool();
        while pool.idle_bytes + capacity > POOL_LIMIT || pool.idle.len() >= POOL_BLOCKS {
            let oldest = pool.idle.remove(0);
            pool.idle_bytes -= oldest.1;
            released.push(oldest);
        }
        pool.idle_bytes += capacity;
        pool.idle.push((base as usize, capacity));
    }
    for (base, capacity) in released {
        // SAFETY: a whole mapping made by `map_large`, no longer used (out of the pool).
        unsafe { libc::munmap(base as *mut c_void, capacity) };
    }
}

/// A 64-byte aligned block for our own staging copies; `None` for sizes below
/// [`LARGE`], which the caller allocates itself.
pub(crate) fn allocate_staging(len: usize) -> Option<*mut u8> {
    if len < LARGE {
        return None;
    }
    let payload = map_large(len, false);
    if payload.is_null() {
        std::alloc::handle_alloc_error(
            std::alloc::Layout::from_size_align(len, 64).expect("valid layout"),
        );
    }
    Some(payload)
}

/// Frees a block from [`allocate_staging`].
///
/// # Safety
/// `payload` came from `allocate_staging` and is not used afterwards.
pub(crate) unsafe fn free_staging(payload: *mut u8) {
    // SAFETY: forwarded contract.
    unsafe { unmap_large(payload) }
}

fn allocate(len: usize, zeroed: bool) -> *mut u8 {
    if len >= LARGE {
        return map_large(len, zeroed);
    }
    let total = len + HEADER;
    // SAFETY: plain libc allocation of a non-zero size.
    let base = unsafe {
        if zeroed {
            libc::calloc(1, total)
        } else {
            libc::malloc(total)
        }
    }
    .cast::<u8>();
    if base.is_null() {
        return base;
    }
    // SAFETY: `base` has HEADER writable bytes, malloc-aligned.
    unsafe {
        base.cast::<usize>().write(SMALL);
        base.cast::<usize>().add(1).write(len);
        base.add(HEADER)
    }
}

/// # Safety
/// `payload` came from `allocate` (through the ctl below) and is not used afterwards.
unsafe fn free(payload: *mut u8) {
    // SAFETY: the header precedes every payload handed out.
    let base = unsafe { payload.sub(HEADER) };
    // SAFETY: as above.
    match unsafe { base.cast::<usize>().read() } {
        // SAFETY: a malloc'd block.
        SMALL => unsafe { libc::free(base.cast()) },
        // SAFETY: a mapped block.
        MAPPED => unsafe { unmap_large(payload) },
        other => panic!("host_memory: freeing a block with a bad header ({other:#x})"),
    }
}

/// # Safety
/// `payload` is null or came from `allocate`.
unsafe fn reallocate(payload: *mut u8, len: usize) -> *mut u8 {
    if payload.is_null() {
        return allocate(len, false);
    }
    // SAFETY: the header precedes every payload handed out.
    let base = unsafe { payload.sub(HEADER) };
    // SAFETY: as above.
    let (kind, size) = unsafe { (base.cast::<usize>().read(), base.cast::<usize>().add(1).read()) };
    if kind == SMALL && len < LARGE {
        // SAFETY: a malloc'd block, resized in place or moved by realloc.
        let moved = unsafe { libc::realloc(base.cast(), len + HEADER) }.cast::<u8>();
        if moved.is_null() {
            return moved;
        }
        // SAFETY: the header survived the realloc; update the recorded size.
        unsafe {
            moved.cast::<usize>().add(1).write(len);
            return moved.add(HEADER);
        }
    }
    let old_len = if kind == SMALL { size } else { size - HEADER };
    let fresh = allocate(len, false);
    if !fresh.is_null() {
        // SAFETY: both blocks hold at least the copied length; they are distinct.
        unsafe {
            std::ptr::copy_nonoverlapping(payload, fresh, old_len.min(len));
            free(payload);
        }
    }
    fresh
}

unsafe extern "C" fn ctl(
    _self: *mut c_void,
    command: sys::iree_allocator_command_t,
    params: *const c_void,
    inout_ptr: *mut *mut c_void,
) -> sys::iree_status_t {
    // SAFETY: IREE passes alloc params for the three allocating commands and a valid
    // in/out pointer for all four (allocator.h).
    unsafe {
        let byte_length = || (*params.cast::<sys::iree_allocator_alloc_params_t>()).byte_length;
        let result = match command {
            sys::iree_allocator_command_e_IREE_ALLOCATOR_COMMAND_MALLOC => {
                allocate(byte_length().max(1), false)
            }
            sys::iree_allocator_command_e_IREE_ALLOCATOR_COMMAND_CALLOC => {
                allocate(byte_length().max(1), true)
            }
            sys::iree_allocator_command_e_IREE_ALLOCATOR_COMMAND_REALLOC => {
                reallocate((*inout_ptr).cast(), byte_length().max(1))
            }
            sys::iree_allocator_command_e_IREE_ALLOCATOR_COMMAND_FREE => {
                let payload = (*inout_ptr).cast::<u8>();
                if !payload.is_null() {
                    free(payload);
                }
                *inout_ptr = std::ptr::null_mut();
                return std::ptr::null_mut();
            }
            _ => {
                return sys::iree_status_allocate(
                    sys::iree_status_code_e_IREE_STATUS_UNIMPLEMENTED,
                    c"host_memory.rs".as_ptr(),
                    0,
                    sys::iree_string_view_t {
                        data: c"unknown allocator command".as_ptr(),
                        size: 25,
                    },
                )
            }
        };
        if result.is_null() {
            return sys::iree_status_allocate(
                sys::iree_status_code_e_IREE_STATUS_RESOURCE_EXHAUSTED,
                c"host_memory.rs".as_ptr(),
                0,
                sys::iree_string_view_t {
                    data: c"out of host memory".as_ptr(),
                    size: 18,
                },
            );
        }
        *inout_ptr = result.cast();
        std::ptr::null_mut()
    }
}

/// The allocator handed to local drivers: their buffers come from here.
pub(crate) fn device_allocator() -> sys::iree_allocator_t {
    sys::iree_allocator_t {
        self_: std::ptr::null_mut(),
        ctl: Some(ctl),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that allocate large blocks run one at a time: the pool is the process's,
    /// and two of them look at which block it hands out.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn small_and_large_blocks_round_trip() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        for len in [1, 100, LARGE - 1, LARGE, 3 * LARGE + 5, 9 * HUGE_PAGE] {
            let p = allocate(len, true);
            assert!(!p.is_null());
            assert_eq!(p as usize % 16, 0);
            // SAFETY: `len` bytes were just allocated, zeroed.
            unsafe {
                assert!(std::slice::from_raw_parts(p, len).iter().all(|&b| b == 0));
                std::ptr::write_bytes(p, 0xAB, len);
                let q = reallocate(p, len * 2);
                assert_eq!(*q.add(len - 1), 0xAB);
                free(q);
            }
        }
    }

    #[test]
    fn freed_large_blocks_are_reused_with_their_prefix_zeroed_on_request() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let p = allocate(5 * LARGE, false);
        // SAFETY: 5 * LARGE bytes.
        unsafe { std::ptr::write_bytes(p, 7, 5 * LARGE) };
        // SAFETY: from allocate, not used again.
        unsafe { free(p) };
        let q = allocate(5 * LARGE, true);
        assert_eq!(q, p, "the freed block is reused");
        // SAFETY: an allocation of that many bytes.
        unsafe {
            let bytes = std::slice::from_raw_parts(q, 5 * LARGE);
            assert!(bytes[..ZEROED_PREFIX].iter().all(|&b| b == 0));
            assert!(bytes[ZEROED_PREFIX..].iter().all(|&b| b == 7), "contents are left as they were");
            free(q);
        }
    }

    #[test]
    fn of_several_idle_blocks_of_one_shape_the_one_freed_last_is_reused() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let len = 7 * LARGE + 3;
        let blocks: Vec<*mut u8> = (0..3).map(|_| allocate(len, false)).collect();
        for &p in &blocks {
            // SAFETY: from allocate, not used again.
            unsafe { free(p) };
        }
        // A call pattern of one block at a time keeps landing on the same (warm) block.
        for _ in 0..3 {
            let q = allocate(len, false);
            assert_eq!(q, blocks[2], "the block freed last is handed out");
            // SAFETY: from allocate, not used again.
            unsafe { free(q) };
        }
    }

    #[test]
    fn a_full_pool_makes_room_for_the_block_freed_last() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // More idle blocks of one shape than the pool holds (mapped, never touched), small
        // enough that the room they leave is less than the next block needs...
        let stale_len = LARGE;
        let stale_capacity = capacity_for(stale_len).expect("a small size");
        let stale: Vec<*mut u8> = (0..POOL_LIMIT / stale_capacity + 2).map(|_| allocate(stale_len, false)).collect();
        for p in stale {
            // SAFETY: from allocate, not used again.
            unsafe { free(p) };
        }
        assert!(pool().idle_bytes <= POOL_LIMIT);
        // ...and a block of another shape, freed last, is still there for the next call.
        let len = 3 * LARGE + 7;
        let p = allocate(len, false);
        // SAFETY: from allocate, not used again.
        unsafe { free(p) };
        assert!(pool().idle.iter().any(|&(base, _)| base + HEADER == p as usize), "the block freed last is pooled");
        let q = allocate(len, false);
        assert_eq!(q, p, "the block freed last is reused");
        // SAFETY: from allocate, not used again.
        unsafe { free(q) };
        assert!(pool().idle_bytes <= POOL_LIMIT);
    }
}
