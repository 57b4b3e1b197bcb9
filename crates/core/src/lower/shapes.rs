//! Symbolic dims, and the checks of PyTensor's shape rules that run before IREE does.
//! IREE does not check that broadcast dims agree at run time: a mismatch would read out
//! of bounds, so every equality a lowering relies on is checked here first.

use super::ErrorKind;
use std::fmt;

/// A dim as a function of the call's input shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    Static(u64),
    /// `inputs[input].shape[axis]`
    Input { input: usize, axis: usize },
}

/// `left == right` must hold, or `op` cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeCheck {
    pub left: Dim,
    pub right: Dim,
    pub op: String,
    /// The exception a mismatch raises.
    pub kind: ErrorKind,
}

/// A failed check, with the inputs named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ShapeError {}

fn resolve(d: Dim, shapes: &[&[usize]]) -> u64 {
    match d {
        Dim::Static(n) => n,
        Dim::Input { input, axis } => shapes[input][axis] as u64,
    }
}

fn describe(d: Dim, names: &[String]) -> String {
    match d {
        Dim::Static(n) => format!("the static size {n}"),
        Dim::Input { input, axis } => format!("{}.shape[{axis}]", names[input]),
    }
}

/// Runs every check on the call's input shapes (ranks already validated by PyTensor).
pub fn check(checks: &[ShapeCheck], shapes: &[&[usize]], names: &[String]) -> Result<(), ShapeError> {
    for c in checks {
        let (l, r) = (resolve(c.left, shapes), resolve(c.right, shapes));
        if l != r {
            let (left, right) = (describe(c.left, names), describe(c.right, names));
            let message = match c.kind {
                ErrorKind::Assertion => format!("{}: {left} is {l}, expected {right}", c.op),
                _ => format!(
                    "shape mismatch in {}: {left} is {l} but {right} is {r} (only dims of static size 1 broadcast)",
                    c.op
                ),
            };
            return Err(ShapeError { kind: c.kind, message });
        }
    }
    Ok(())
}
