//! Runtime errors, carrying IREE's own status text.

use eerie_sys::runtime as sys;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A failed IREE call: the formatted status (code, message, annotations).
    #[error("{0}")]
    Iree(String),
    /// An input that does not describe a valid host array.
    #[error("input {index}: {reason}")]
    InvalidInput { index: usize, reason: String },
    /// A request this crate cannot serve (unknown function, foreign `Function`, ...).
    #[error("{0}")]
    Usage(String),
}

/// Turns an IREE status into a `Result`, consuming (freeing) the status.
pub(crate) fn check(status: sys::iree_status_t) -> Result<(), RuntimeError> {
    if status.is_null() {
        return Ok(());
    }
    Err(RuntimeError::Iree(format_and_free(status)))
}

fn format_and_free(status: sys::iree_status_t) -> String {
    let mut length: sys::iree_host_size_t = 0;
    // SAFETY: a null buffer with capacity 0 only asks for the length of the text.
    unsafe { sys::iree_status_format(status, 0, std::ptr::null_mut(), &mut length) };
    let mut text = vec![0u8; length + 1];
    // SAFETY: `text` has room for `length` bytes plus the terminating NUL.
    let formatted = unsafe {
        sys::iree_status_format(status, text.len(), text.as_mut_ptr().cast(), &mut length)
    };
    // SAFETY: the status is a live, owned, non-OK status; it is not used after this.
    unsafe { sys::iree_status_free(status) };
    if !formatted {
        return "IREE error (status text could not be formatted)".to_string();
    }
    text.truncate(length);
    String::from_utf8_lossy(&text).into_owned()
}
