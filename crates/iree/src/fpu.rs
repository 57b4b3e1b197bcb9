//! IEEE floating-point state for IREE dispatches.
//!
//! IREE's runtime wraps every dispatch in
//! `iree_fpu_state_push(IREE_FPU_STATE_FLAG_FLUSH_DENORMALS_TO_ZERO)` (inline command
//! buffers on the calling thread, task workers once per worker thread), and there is no
//! option to turn that off. Flushing subnormals silently changes results
//! (`f64::MIN_POSITIVE * 0.5` becomes 0.0), which a numerical backend must not do.
//!
//! The two functions below replace IREE's `fpu_state.c`: they are the only symbols of that
//! object, and because this crate's object defines them before the linker reaches IREE's
//! static archive, the archive member is never pulled in. Whatever flags IREE asks for,
//! they install an explicit IEEE state (round to nearest, exceptions masked, subnormals
//! kept) and give the caller's own state back on pop.

/// The C layout of IREE's `iree_fpu_state_t` (base/internal/fpu_state.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IreeFpuState {
    pub previous_value: u64,
    pub current_value: u64,
}

/// IREE's `iree_fpu_state_flags_t`. The flags are ignored on purpose: the only one IREE
/// defines asks for flush-to-zero.
pub type IreeFpuStateFlags = u32;

/// Replaces IREE's `iree_fpu_state_push`: saves the thread's control register and
/// installs the IEEE state.
#[no_mangle]
pub extern "C" fn iree_fpu_state_push(_flags: IreeFpuStateFlags) -> IreeFpuState {
    let previous_value = arch::load();
    let current_value = arch::ieee(previous_value);
    if current_value != previous_value {
        arch::store(current_value);
    }
    IreeFpuState {
        previous_value,
        current_value,
    }
}

/// Replaces IREE's `iree_fpu_state_pop`: restores what the matching push saved.
#[no_mangle]
pub extern "C" fn iree_fpu_state_pop(state: IreeFpuState) {
    if state.current_value != state.previous_value {
        arch::store(state.previous_value);
    }
}

/// Makes sure the object holding the two overrides is linked in.
///
/// The linker only pulls an archive member that resolves a symbol it is looking for at
/// that moment; referencing the overrides from code that is surely linked (device
/// creation) pulls them in before IREE's archive is scanned, so IREE's `fpu_state.o` is
/// never needed, in test binaries and in a cdylib alike.
pub(crate) fn keep_overrides_linked() {
    std::hint::black_box(iree_fpu_state_push as extern "C" fn(IreeFpuStateFlags) -> IreeFpuState);
    std::hint::black_box(iree_fpu_state_pop as extern "C" fn(IreeFpuState));
}

/// The calling thread's floating-point control register (MXCSR on x86-64, FPCR on
/// aarch64, 0 elsewhere). Exposed so tests can prove a call leaves it untouched.
pub fn control_register() -> u64 {
    arch::load()
}

/// Sets the calling thread's floating-point control register; the counterpart of
/// [`control_register`] for tests that start from a non-default state.
pub fn set_control_register(value: u64) {
    arch::store(value)
}

#[cfg(target_arch = "x86_64")]
mod arch {
    use std::arch::asm;

    /// MXCSR with round to nearest, all six exceptions masked, no status flags, and
    /// FTZ (bit 15) and DAZ (bit 6) cleared: the power-on default.
    const IEEE_MXCSR: u64 = 0x1F80;

    pub fn load() -> u64 {
        let mut mxcsr: u32 = 0;
        // SAFETY: stmxcsr only writes the 4 bytes at the given, valid, stack address.
        unsafe { asm!("stmxcsr [{}]", in(reg) &mut mxcsr, options(nostack, preserves_flags)) };
        u64::from(mxcsr)
    }

    pub fn store(value: u64) {
        let mxcsr = value as u32;
        // SAFETY: ldmxcsr reads 4 valid bytes; every value passed here came from stmxcsr
        // or is IEEE_MXCSR, so no reserved bit is set (which would fault).
        unsafe {
            asm!("ldmxcsr [{}]", in(reg) &mxcsr, options(nostack, preserves_flags, readonly))
        };
    }

    pub fn ieee(_previous: u64) -> u64 {
        IEEE_MXCSR
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    use std::arch::asm;

    /// FPCR bits that leave IEEE semantics: FZ (24), FZ16 (19), DN (25), the rounding
    /// mode (23:22, 0 = nearest) and the trap enables (8-12, 15).
    const NON_IEEE_FPCR: u64 =
        (1 << 24) | (1 << 19) | (1 << 25) | (0b11 << 22) | (0x1F << 8) | (1 << 15);

    pub fn load() -> u64 {
        let fpcr: u64;
        // SAFETY: reading FPCR has no side effects.
        unsafe { asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags)) };
        fpcr
    }

    pub fn store(value: u64) {
        // SAFETY: the value is a previously read FPCR with only architectural control bits
        // cleared, so no reserved bit changes.
        unsafe { asm!("msr fpcr, {}", in(reg) value, options(nomem, nostack, preserves_flags)) };
    }

    pub fn ieee(previous: u64) -> u64 {
        previous & !NON_IEEE_FPCR
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod arch {
    // IREE's own fpu_state.c does nothing on other architectures either.
    pub fn load() -> u64 {
        0
    }

    pub fn store(_value: u64) {}

    pub fn ieee(previous: u64) -> u64 {
        previous
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_installs_ieee_state_and_pop_restores_the_callers() {
        let before = control_register();
        #[cfg(target_arch = "x86_64")]
        set_control_register(before | 0x8040);
        let callers = control_register();
        let state = iree_fpu_state_push(1);
        assert_eq!(state.previous_value, callers);
        assert_eq!(control_register(), state.current_value);
        let half_min = std::hint::black_box(f64::MIN_POSITIVE) * 0.5;
        assert_eq!(half_min, 1.1125369292536007e-308);
        iree_fpu_state_pop(state);
        assert_eq!(control_register(), callers);
        set_control_register(before);
    }
}
