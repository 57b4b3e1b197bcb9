//! Symbolic dims, and the checks of PyTensor's shape rules that run before IREE does.
//! IREE does not check that broadcast dims agree at run time: a mismatch would read out
//! of bounds, so every equality a lowering relies on is checked here first.

use super::ErrorKind;
use crate::dtype::DType;
use std::fmt;

/// What the checks before a call read: each input's shape, and its bytes (the values of
/// the small integer inputs that `IntExpr::Input` names).
#[derive(Clone, Copy, Debug, Default)]
pub struct Call<'a> {
    pub shapes: &'a [&'a [usize]],
    pub bytes: &'a [&'a [u8]],
}

impl<'a> Call<'a> {
    /// Nothing known of the inputs: what resolves then depends on no input.
    pub const NONE: Call<'static> = Call { shapes: &[], bytes: &[] };

    /// Element `index` (C order) of input `input`, a `dtype` integer; `None` if not given.
    fn int(&self, input: usize, index: usize, dtype: DType) -> Option<i64> {
        let size = dtype.byte_size();
        let bytes = self.bytes.get(input)?.get(index * size..(index + 1) * size)?;
        Some(super::shape::constant_int(bytes, dtype))
    }
}

/// A dim as a function of the call's input shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    Static(u64),
    /// `inputs[input].shape[axis]`
    Input { input: usize, axis: usize },
    /// `exprs[i]` of the lowering's `DimExpr` table: a dim computed from other dims
    /// (a slice's length, a join's sum) or from run-time values.
    Derived(usize),
}

/// A dim derived from others. Structurally equal expressions are interned to one
/// `Dim::Derived`, so equal slices of one input need no check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DimExpr {
    /// Computed in the kernel from the values of tensors (an `Alloc` shape input, a
    /// symbolic slice bound): no check before the call can know it, so a rule that needs
    /// it equal to another dim is refused (`Context::require`).
    Runtime(usize),
    /// `Repeat`'s output length along its axis: `n` elements repeated by the counts in
    /// graph variable `repeats` (computed in the kernel, so a run-time dim too). Two
    /// `Repeat`s by the same counts of equally long axes have one length: interned to one
    /// dim, they need no check (a gradient of `repeat` scatters one's rows at the other's
    /// positions).
    /// `scope`: the lowering the variable belongs to (`Context::scope`).
    Repeated { scope: usize, repeats: usize, n: Dim },
    /// The number of non-zero elements of graph variable `var` of lowering `scope`
    /// (`Nonzero`'s length, known only in the kernel): interned, so two `Nonzero`s of one
    /// mask have one length.
    NonzeroCount { scope: usize, var: usize },
    /// The rows a while `Scan` (the node whose first output is graph variable `scan` of
    /// lowering `scope`) keeps of an output buffer of `rows` rows with `history` initial
    /// rows: known only after the loop; interned, so outputs kept alike have one length.
    WhileRows { scope: usize, scan: usize, rows: Dim, history: i64 },
    /// The length of `base[start:stop:step]`, numpy's rules (`step != 0`).
    Slice { base: Dim, start: Option<i64>, stop: Option<i64>, step: i64 },
    /// The sum of dims (`Join`'s axis).
    Sum(Vec<Dim>),
    /// The sum of dims plus a constant (`x.shape[0] - 1` as a shape entry); invalid where
    /// negative.
    Offset(Vec<Dim>, i64),
    /// The product of dims (a tensor's size, for `Reshape`'s check).
    Product(Vec<Dim>),
    /// `product(num) / product(den)`, rounded down (`Reshape`'s -1 entry); invalid where
    /// `product(den)` is 0.
    Quotient { num: Vec<Dim>, den: Vec<Dim> },
    /// The least of dims (a diagonal's length).
    Min(Vec<Dim>),
    /// numpy's broadcast of dims (index arrays of `AdvancedSubtensor`): the one that is not
    /// 1, or 1; invalid where two differ and neither is 1.
    Broadcast(Vec<Dim>),
    /// A signed integer computed from dims (a slice bound or an allocation's size that
    /// PyTensor's rewrites derive from shapes through comparisons, min/max and floor
    /// division), which an `IntValue::Expr` refers to; as a dim, valid where not negative.
    Value(IntExpr),
    /// The length of `base[start:stop:step]` with bounds computed from dims, numpy's rules
    /// (`step != 0`).
    SliceBy { base: Dim, start: Option<IntExpr>, stop: Option<IntExpr>, step: i64 },
}

/// An integer computed from dims and constants, evaluated before the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IntExpr {
    Const(i64),
    Dim(Dim),
    /// The `DimExpr::Value` at this index of the table.
    Value(usize),
    /// Element `index` of graph input `input`, an integer tensor with a few elements (a
    /// size or a slice bound given as an argument): read from the input before the call.
    Input { input: usize, index: usize, dtype: DType },
    Bin(IntOp, Box<IntExpr>, Box<IntExpr>),
    Neg(Box<IntExpr>),
    Select(Box<BoolExpr>, Box<IntExpr>, Box<IntExpr>),
}

/// Integer arithmetic as PyTensor's scalar ops do it on int64 (`int_div` and `mod` round
/// toward negative infinity, as Python's and numpy's do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    Min,
    Max,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoolExpr {
    Const(bool),
    Lt(IntExpr, IntExpr),
    Le(IntExpr, IntExpr),
    Eq(IntExpr, IntExpr),
    And(Box<BoolExpr>, Box<BoolExpr>),
    Or(Box<BoolExpr>, Box<BoolExpr>),
    Not(Box<BoolExpr>),
}

/// The value of `e` for these inputs; `None` where it depends on what is not known before
/// the call, overflows, or divides by zero.
pub fn value(e: &IntExpr, call: &Call, exprs: &[DimExpr]) -> Option<i64> {
    match e {
        IntExpr::Const(c) => Some(*c),
        IntExpr::Input { input, index, dtype } => call.int(*input, *index, *dtype),
        IntExpr::Dim(d) => resolve(*d, call, exprs).and_then(|n| i64::try_from(n).ok()),
        IntExpr::Value(i) => match &exprs[*i] {
            DimExpr::Value(inner) => value(inner, call, exprs),
            _ => None,
        },
        IntExpr::Neg(a) => value(a, call, exprs)?.checked_neg(),
        IntExpr::Bin(op, a, b) => {
            let (a, b) = (value(a, call, exprs)?, value(b, call, exprs)?);
            match op {
                IntOp::Add => a.checked_add(b),
                IntOp::Sub => a.checked_sub(b),
                IntOp::Mul => a.checked_mul(b),
                IntOp::FloorDiv => floor_div(a, b),
                IntOp::Mod => a.checked_sub(b.checked_mul(floor_div(a, b)?)?),
                IntOp::Min => Some(a.min(b)),
                IntOp::Max => Some(a.max(b)),
            }
        }
        IntExpr::Select(c, a, b) => {
            if truth(c, call, exprs)? {
                value(a, call, exprs)
            } else {
                value(b, call, exprs)
            }
        }
    }
}

/// `a // b` rounded toward negative infinity; `None` for a zero divisor or an overflow.
fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    Some(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
}

fn truth(c: &BoolExpr, call: &Call, exprs: &[DimExpr]) -> Option<bool> {
    let v = |e: &IntExpr| value(e, call, exprs);
    match c {
        BoolExpr::Const(b) => Some(*b),
        BoolExpr::Lt(a, b) => Some(v(a)? < v(b)?),
        BoolExpr::Le(a, b) => Some(v(a)? <= v(b)?),
        BoolExpr::Eq(a, b) => Some(v(a)? == v(b)?),
        BoolExpr::And(a, b) => Some(truth(a, call, exprs)? && truth(b, call, exprs)?),
        BoolExpr::Or(a, b) => Some(truth(a, call, exprs)? || truth(b, call, exprs)?),
        BoolExpr::Not(a) => Some(!truth(a, call, exprs)?),
    }
}

/// Whether `e` depends on values only the kernel knows.
fn expr_is_runtime(e: &IntExpr, exprs: &[DimExpr]) -> bool {
    match e {
        IntExpr::Const(_) | IntExpr::Input { .. } => false,
        IntExpr::Dim(d) => is_runtime(*d, exprs),
        IntExpr::Value(i) => match &exprs[*i] {
            DimExpr::Value(inner) => expr_is_runtime(inner, exprs),
            _ => true,
        },
        IntExpr::Neg(a) => expr_is_runtime(a, exprs),
        IntExpr::Bin(_, a, b) => expr_is_runtime(a, exprs) || expr_is_runtime(b, exprs),
        IntExpr::Select(c, a, b) => cond_is_runtime(c, exprs) || expr_is_runtime(a, exprs) || expr_is_runtime(b, exprs),
    }
}

fn cond_is_runtime(c: &BoolExpr, exprs: &[DimExpr]) -> bool {
    match c {
        BoolExpr::Const(_) => false,
        BoolExpr::Lt(a, b) | BoolExpr::Le(a, b) | BoolExpr::Eq(a, b) => expr_is_runtime(a, exprs) || expr_is_runtime(b, exprs),
        BoolExpr::And(a, b) | BoolExpr::Or(a, b) => cond_is_runtime(a, exprs) || cond_is_runtime(b, exprs),
        BoolExpr::Not(a) => cond_is_runtime(a, exprs),
    }
}

/// The length numpy gives `x[start:stop:step]` for `x` of length `n`.
pub fn slice_len(n: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> i64 {
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let norm = |v: i64, lo: i64, hi: i64| clamp(if v < 0 { v + n } else { v }, lo, hi);
    if step > 0 {
        let start = start.map_or(0, |v| norm(v, 0, n));
        let stop = stop.map_or(n, |v| norm(v, 0, n));
        if stop > start { (stop - start + step - 1) / step } else { 0 }
    } else {
        let start = start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let stop = stop.map_or(-1, |v| norm(v, -1, n - 1));
        if start > stop { (start - stop - 1) / (-step) + 1 } else { 0 }
    }
}

/// `left == right` (or, with `or_one`, `left == 1`) must hold, or `op` cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeCheck {
    pub left: Dim,
    pub right: Dim,
    pub op: String,
    /// Whether `left` may also be 1: a value numpy broadcasts from a run-time 1.
    pub or_one: bool,
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

/// The value of `d` for these inputs (`Call::NONE`: only dims without inputs);
/// `None` where it depends on run-time values or inputs not given, or is invalid (a
/// quotient by zero).
pub fn resolve(d: Dim, call: &Call, exprs: &[DimExpr]) -> Option<u64> {
    let all = |ds: &[Dim]| ds.iter().map(|&d| resolve(d, call, exprs)).collect::<Option<Vec<u64>>>();
    match d {
        Dim::Static(n) => Some(n),
        Dim::Input { input, axis } => call.shapes.get(input).map(|s| s[axis] as u64),
        Dim::Derived(i) => match &exprs[i] {
            DimExpr::Runtime(_) | DimExpr::Repeated { .. } | DimExpr::NonzeroCount { .. } | DimExpr::WhileRows { .. } => None,
            DimExpr::Slice { base, start, stop, step } => {
                let n = resolve(*base, call, exprs)?;
                Some(slice_len(n as i64, *start, *stop, *step) as u64)
            }
            DimExpr::Sum(ds) => all(ds)?.into_iter().try_fold(0u64, u64::checked_add),
            DimExpr::Product(ds) => all(ds)?.into_iter().try_fold(1u64, u64::checked_mul),
            DimExpr::Offset(ds, c) => {
                let sum = all(ds)?.into_iter().try_fold(0u64, u64::checked_add)?;
                u64::try_from(i64::try_from(sum).ok()?.checked_add(*c)?).ok()
            }
            DimExpr::Quotient { num, den } => {
                let n = all(num)?.into_iter().try_fold(1u64, u64::checked_mul)?;
                let d = all(den)?.into_iter().try_fold(1u64, u64::checked_mul)?;
                n.checked_div(d)
            }
            DimExpr::Min(ds) => all(ds)?.into_iter().min(),
            DimExpr::Broadcast(ds) => all(ds)?.into_iter().try_fold(1u64, |acc, n| match (acc, n) {
                (1, n) => Some(n),
                (acc, n) if n == 1 || n == acc => Some(acc),
                _ => None,
            }),
            // A value used as a dim (an Alloc's size): valid where not negative.
            DimExpr::Value(e) => value(e, call, exprs).and_then(|v| u64::try_from(v).ok()),
            DimExpr::SliceBy { base, start, stop, step } => {
                let n = i64::try_from(resolve(*base, call, exprs)?).ok()?;
                let bound = |b: &Option<IntExpr>| match b {
                    None => Some(None),
                    Some(e) => value(e, call, exprs).map(Some),
                };
                Some(slice_len(n, bound(start)?, bound(stop)?, *step) as u64)
            }
        },
    }
}

/// Whether `d` depends on values only the kernel knows.
pub fn is_runtime(d: Dim, exprs: &[DimExpr]) -> bool {
    let any = |ds: &[Dim]| ds.iter().any(|&d| is_runtime(d, exprs));
    match d {
        Dim::Static(_) | Dim::Input { .. } => false,
        Dim::Derived(i) => match &exprs[i] {
            DimExpr::Runtime(_) | DimExpr::Repeated { .. } | DimExpr::NonzeroCount { .. } | DimExpr::WhileRows { .. } => true,
            DimExpr::Slice { base, .. } => is_runtime(*base, exprs),
            DimExpr::Sum(ds) | DimExpr::Product(ds) | DimExpr::Offset(ds, _) | DimExpr::Min(ds) | DimExpr::Broadcast(ds) => any(ds),
            DimExpr::Quotient { num, den } => any(num) || any(den),
            DimExpr::Value(e) => expr_is_runtime(e, exprs),
            DimExpr::SliceBy { base, start, stop, .. } => {
                is_runtime(*base, exprs) || [start, stop].into_iter().flatten().any(|e| expr_is_runtime(e, exprs))
            }
        },
    }
}

fn describe(d: Dim, names: &[String], exprs: &[DimExpr]) -> String {
    let list = |ds: &[Dim], sep: &str| ds.iter().map(|&d| describe(d, names, exprs)).collect::<Vec<_>>().join(sep);
    match d {
        Dim::Static(n) => format!("the static size {n}"),
        Dim::Input { input, axis } => format!("{}.shape[{axis}]", names[input]),
        Dim::Derived(i) => match &exprs[i] {
            DimExpr::Runtime(_) | DimExpr::Repeated { .. } | DimExpr::NonzeroCount { .. } | DimExpr::WhileRows { .. } => "a size computed at run time".into(),
            DimExpr::Slice { base, start, stop, step } => {
                let f = |v: &Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
                format!("the length of [{}:{}:{step}] of {}", f(start), f(stop), describe(*base, names, exprs))
            }
            DimExpr::Sum(ds) => format!("({})", list(ds, " + ")),
            DimExpr::Product(ds) => format!("({})", list(ds, " * ")),
            DimExpr::Offset(ds, c) => format!("({} + {c})", list(ds, " + ")),
            DimExpr::Quotient { num, den } => format!("({}) / ({})", list(num, " * "), list(den, " * ")),
            DimExpr::Min(ds) => format!("min({})", list(ds, ", ")),
            DimExpr::Broadcast(ds) => format!("broadcast({})", list(ds, ", ")),
            DimExpr::Value(_) => "a value computed from shapes and integer inputs".into(),
            DimExpr::SliceBy { base, step, .. } => {
                format!("the length of a slice [..:..:{step}] of {} with bounds computed from shapes and integer inputs", describe(*base, names, exprs))
            }
        },
    }
}

/// The sizes a `DimExpr::Broadcast` dim broadcasts, for its error message.
fn broadcast_sizes(d: Dim, call: &Call, exprs: &[DimExpr]) -> String {
    match d {
        Dim::Derived(i) => match &exprs[i] {
            DimExpr::Broadcast(ds) => ds.iter().map(|&d| resolve(d, call, exprs).map_or("?".into(), |n| n.to_string())).collect::<Vec<_>>().join(" and "),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// Runs every check on the call's input shapes (ranks already validated by PyTensor);
/// `exprs` is the lowering's table of derived dims.
pub fn check(checks: &[ShapeCheck], call: &Call, names: &[String], exprs: &[DimExpr]) -> Result<(), ShapeError> {
    for c in checks {
        let (l, r) = (resolve(c.left, call, exprs), resolve(c.right, call, exprs));
        if l.is_none() || (l != r && !(c.or_one && l == Some(1))) {
            let (left, right) = (describe(c.left, names, exprs), describe(c.right, names, exprs));
            let show = |v: Option<u64>| v.map_or("invalid (negative, or a division by zero)".to_string(), |v| v.to_string());
            let (l, r) = (show(l), show(r));
            let message = match c.kind {
                // A dim checked for being valid at all: index arrays that do not broadcast.
                _ if c.left == c.right => format!("shape mismatch in {}: {left} of {}", c.op, broadcast_sizes(c.left, call, exprs)),
                ErrorKind::Assertion => format!("{}: {left} is {l}, expected {right}", c.op),
                _ if c.or_one => format!("shape mismatch in {}: {left} is {l}, which broadcasts neither as 1 nor as {right}, {r}", c.op),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy's slice length by enumeration: the indices `range(start, stop, step)` visits
    /// after `slice.indices(n)`'s clamping, counted one by one.
    fn by_enumeration(n: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> i64 {
        let norm = |v: i64| if v < 0 { v + n } else { v };
        let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
        let s = start.map_or(if step > 0 { 0 } else { n - 1 }, |v| norm(v).clamp(lo, hi));
        let e = stop.map_or(if step > 0 { n } else { -1 }, |v| norm(v).clamp(lo, hi));
        let (mut i, mut count) = (s, 0);
        while (step > 0 && i < e) || (step < 0 && i > e) {
            count += 1;
            i += step;
        }
        count
    }

    #[test]
    fn slice_len_matches_enumeration() {
        let bounds = [None, Some(-9), Some(-3), Some(-1), Some(0), Some(1), Some(2), Some(5), Some(9)];
        for n in 0..7 {
            for start in bounds {
                for stop in bounds {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        assert_eq!(slice_len(n, start, stop, step), by_enumeration(n, start, stop, step), "{n} {start:?} {stop:?} {step}");
                    }
                }
            }
        }
    }

    #[test]
    fn derived_dims_resolve_from_input_shapes() {
        let x0 = Dim::Input { input: 0, axis: 0 };
        let exprs = vec![
            DimExpr::Slice { base: x0, start: Some(1), stop: None, step: 1 },
            DimExpr::Sum(vec![x0, Dim::Static(2)]),
            DimExpr::Offset(vec![x0], -5),
            DimExpr::Quotient { num: vec![x0, Dim::Static(3)], den: vec![Dim::Static(2)] },
            DimExpr::Quotient { num: vec![x0], den: vec![Dim::Static(0)] },
            DimExpr::Runtime(5),
        ];
        let shapes: [&[usize]; 1] = [&[4]];
        let call = Call { shapes: &shapes, bytes: &[] };
        let r = |i| resolve(Dim::Derived(i), &call, &exprs);
        assert_eq!((r(0), r(1), r(2), r(3), r(4), r(5)), (Some(3), Some(6), None, Some(6), None, None));
        assert!(is_runtime(Dim::Derived(5), &exprs) && !is_runtime(Dim::Derived(3), &exprs));
        // A check on an invalid dim fails rather than passing.
        let c = ShapeCheck { left: Dim::Derived(4), right: Dim::Derived(4), op: "Reshape".into(), kind: ErrorKind::Value, or_one: false };
        assert!(check(&[c], &call, &["x".into()], &exprs).is_err());
    }

    #[test]
    fn broadcast_dims_follow_numpy() {
        let (a, b) = (Dim::Input { input: 0, axis: 0 }, Dim::Input { input: 1, axis: 0 });
        let exprs = vec![DimExpr::Broadcast(vec![a, b])];
        let r = |x: usize, y: usize| resolve(Dim::Derived(0), &Call { shapes: &[&[x], &[y]], bytes: &[] }, &exprs);
        assert_eq!((r(1, 3), r(3, 1), r(3, 3), r(1, 1), r(0, 1), r(1, 0), r(0, 0)), (Some(3), Some(3), Some(3), Some(1), Some(0), Some(0), Some(0)));
        assert_eq!((r(2, 3), r(0, 3)), (None, None));
    }

    /// `int_div` and `mod` round toward negative infinity (Python's `//` and `%`, which
    /// numpy's integer ops follow), by definition: q = floor(a / b) as an exact rational.
    #[test]
    fn floor_division_and_modulo_match_python() {
        for a in -7i64..=7 {
            for b in [-3i64, -2, -1, 1, 2, 3] {
                let q = (a as f64 / b as f64).floor() as i64;
                let e = |op| IntExpr::Bin(op, Box::new(IntExpr::Const(a)), Box::new(IntExpr::Const(b)));
                assert_eq!(value(&e(IntOp::FloorDiv), &Call::NONE, &[]), Some(q), "{a} // {b}");
                assert_eq!(value(&e(IntOp::Mod), &Call::NONE, &[]), Some(a - b * q), "{a} % {b}");
            }
            let by_zero = IntExpr::Bin(IntOp::FloorDiv, Box::new(IntExpr::Const(a)), Box::new(IntExpr::Const(0)));
            assert_eq!(value(&by_zero, &Call::NONE, &[]), None);
        }
    }

    /// A slice whose stop is computed from an input's dim: numpy's length for each shape,
    /// and a select on a comparison of dims.
    #[test]
    fn slice_with_computed_bounds() {
        let n = Dim::Input { input: 0, axis: 0 };
        let m = Dim::Input { input: 1, axis: 0 };
        // stop = m - 1 if m < n else -2
        let stop = IntExpr::Select(
            Box::new(BoolExpr::Lt(IntExpr::Dim(m), IntExpr::Dim(n))),
            Box::new(IntExpr::Bin(IntOp::Sub, Box::new(IntExpr::Dim(m)), Box::new(IntExpr::Const(1)))),
            Box::new(IntExpr::Const(-2)),
        );
        let exprs = vec![DimExpr::SliceBy { base: n, start: None, stop: Some(stop), step: 1 }];
        for (len_n, len_m) in [(5usize, 3usize), (5, 7), (0, 4), (2, 1)] {
            let want = if len_m < len_n { slice_len(len_n as i64, None, Some(len_m as i64 - 1), 1) } else { slice_len(len_n as i64, None, Some(-2), 1) };
            assert_eq!(resolve(Dim::Derived(0), &Call { shapes: &[&[len_n], &[len_m]], bytes: &[] }, &exprs), Some(want as u64));
        }
    }
}
