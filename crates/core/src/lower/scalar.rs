//! Lowering rules for scalar ops: the body of an `Elemwise`'s `linalg.generic`, and the
//! nodes of a `Composite`. One function per op; PyTensor's dtype rules decide the casts.

use crate::dtype::{promote, DType};
use crate::ir::{ScalarGraph, ScalarOp};
use crate::mlir::{Arith, Block, Cast, CmpF, CmpI, MathUnary, ScalarType, Value};

/// A scalar SSA value with the PyTensor dtype it stands for (MLIR integers are signless).
#[derive(Clone, Debug)]
pub struct Scalar {
    pub value: Value,
    pub dtype: DType,
}

/// The MLIR type of a scalar of `dtype` inside scalar code: bool is `i1`.
pub fn scalar_type(dtype: DType) -> ScalarType {
    match dtype {
        DType::Bool => ScalarType::I1,
        DType::Float16 => ScalarType::F16,
        DType::Float32 => ScalarType::F32,
        DType::Float64 => ScalarType::F64,
        d => ScalarType::int(d.bits()),
    }
}

/// The element type of a tensor of `dtype`: bool is stored as one `i8` byte, as numpy does.
pub fn storage_type(dtype: DType) -> ScalarType {
    match dtype {
        DType::Bool => ScalarType::I8,
        d => scalar_type(d),
    }
}

/// Run-time errors a scalar op can raise, as `i1` flags "this element failed".
#[derive(Default)]
pub struct Flags {
    pub zero_division: Option<Value>,
    pub zero_modulo: Option<Value>,
}

impl Flags {
    fn raise(slot: &mut Option<Value>, b: &mut Block, failed: Value) {
        *slot = Some(match slot.take() {
            Some(prev) => b.arith(Arith::OrI, &prev, &failed),
            None => failed,
        });
    }
}

/// Whether lowering `op` can raise a run-time error, so the caller reserves flag outputs.
pub fn may_raise(op: &ScalarOp, out_dtypes: &[DType]) -> (bool, bool) {
    match op {
        ScalarOp::IntDiv if out_dtypes[0].is_int() => (true, false),
        ScalarOp::Mod if out_dtypes[0].is_int() => (false, true),
        ScalarOp::Composite(g) => g.nodes.iter().fold((false, false), |(d, m), n| {
            let outs: Vec<DType> = n.outputs.iter().map(|&i| g.dtypes[i]).collect();
            let (nd, nm) = may_raise(&n.op, &outs);
            (d || nd, m || nm)
        }),
        _ => (false, false),
    }
}

fn zero(b: &mut Block, dtype: DType) -> Value {
    constant(b, dtype, 0)
}

/// A small integral constant of `dtype`.
fn constant(b: &mut Block, dtype: DType, v: i64) -> Value {
    let ty = scalar_type(dtype);
    if ty.is_float() {
        b.constant_f64(v as f64, ty)
    } else {
        b.constant_int(v, ty)
    }
}

/// numpy's `astype`: the value of `s` as `to`.
pub fn convert(b: &mut Block, s: &Scalar, to: DType) -> Scalar {
    let from = s.dtype;
    let out = |value| Scalar { value, dtype: to };
    if from == to {
        return s.clone();
    }
    let to_ty = scalar_type(to);
    if to == DType::Bool {
        let z = zero(b, from);
        let v = if from.is_float() { b.cmpf(CmpF::Une, &s.value, &z) } else { b.cmpi(CmpI::Ne, &s.value, &z) };
        return out(v);
    }
    let v = match (from.is_float(), to.is_float()) {
        (true, true) if to.bits() > from.bits() => b.cast(Cast::ExtF, &s.value, to_ty),
        (true, true) => b.cast(Cast::TruncF, &s.value, to_ty),
        (true, false) if to.is_signed_int() => b.cast(Cast::FPToSI, &s.value, to_ty),
        (true, false) => b.cast(Cast::FPToUI, &s.value, to_ty),
        (false, true) if from.is_signed_int() => b.cast(Cast::SIToFP, &s.value, to_ty),
        (false, true) => b.cast(Cast::UIToFP, &s.value, to_ty),
        (false, false) => {
            let from_bits = scalar_type(from).bits();
            if to_ty.bits() > from_bits {
                let op = if from.is_signed_int() { Cast::ExtSI } else { Cast::ExtUI };
                b.cast(op, &s.value, to_ty)
            } else if to_ty.bits() < from_bits {
                b.cast(Cast::TruncI, &s.value, to_ty)
            } else {
                // Same width, other signedness: the same bits.
                s.value.clone()
            }
        }
    };
    out(v)
}

fn all_to(b: &mut Block, ins: &[Scalar], to: DType) -> Vec<Value> {
    ins.iter().map(|s| convert(b, s, to).value).collect()
}

fn common_dtype(ins: &[Scalar]) -> DType {
    ins.iter().map(|s| s.dtype).reduce(promote).expect("a scalar op with no inputs")
}

/// Lowers one scalar op; `outs` are the dtypes PyTensor gave its outputs.
pub fn lower(b: &mut Block, op: &ScalarOp, ins: &[Scalar], outs: &[DType], flags: &mut Flags) -> Result<Vec<Scalar>, String> {
    if let ScalarOp::Composite(g) = op {
        return composite(b, g, ins, flags);
    }
    if ins.iter().any(|s| s.dtype.is_complex()) || outs.iter().any(|d| d.is_complex()) {
        return Err("complex dtypes are not supported".into());
    }
    let out = outs[0];
    let v = match op {
        ScalarOp::Add => arith_rule(b, ins, out, Arith::AddF, Arith::AddI, Some(Arith::OrI)),
        ScalarOp::Sub => arith_rule(b, ins, out, Arith::SubF, Arith::SubI, None),
        ScalarOp::Mul => arith_rule(b, ins, out, Arith::MulF, Arith::MulI, Some(Arith::AndI)),
        ScalarOp::TrueDiv => true_div(b, ins, out)?,
        ScalarOp::IntDiv => int_div(b, ins, out, flags)?,
        ScalarOp::Mod => modulo(b, ins, out, flags)?,
        ScalarOp::Neg => neg(b, &ins[0], out)?,
        ScalarOp::Abs => abs(b, &ins[0], out),
        ScalarOp::Pow => pow(b, ins, out)?,
        ScalarOp::Maximum => extremum(b, ins, out, true),
        ScalarOp::Minimum => extremum(b, ins, out, false),
        ScalarOp::Lt => compare(b, ins, CmpF::Olt, CmpI::Slt, CmpI::Ult),
        ScalarOp::Gt => compare(b, ins, CmpF::Ogt, CmpI::Sgt, CmpI::Ugt),
        ScalarOp::Le => compare(b, ins, CmpF::Ole, CmpI::Sle, CmpI::Ule),
        ScalarOp::Ge => compare(b, ins, CmpF::Oge, CmpI::Sge, CmpI::Uge),
        ScalarOp::Eq => compare(b, ins, CmpF::Oeq, CmpI::Eq, CmpI::Eq),
        ScalarOp::Neq => compare(b, ins, CmpF::Une, CmpI::Ne, CmpI::Ne),
        ScalarOp::And => bitwise(b, ins, out, Arith::AndI)?,
        ScalarOp::Or => bitwise(b, ins, out, Arith::OrI)?,
        ScalarOp::Xor => bitwise(b, ins, out, Arith::XOrI)?,
        ScalarOp::Invert => invert(b, &ins[0], out)?,
        ScalarOp::Switch => switch(b, ins, out),
        ScalarOp::Sqr => {
            let x = convert(b, &ins[0], out);
            arith_rule(b, &[x.clone(), x], out, Arith::MulF, Arith::MulI, Some(Arith::AndI))
        }
        ScalarOp::Sqrt => float_unary(b, &ins[0], out, MathUnary::Sqrt)?,
        ScalarOp::Exp => float_unary(b, &ins[0], out, MathUnary::Exp)?,
        ScalarOp::Log => float_unary(b, &ins[0], out, MathUnary::Log)?,
        ScalarOp::Cast | ScalarOp::Identity => convert(b, &ins[0], out).value,
        ScalarOp::Second => convert(b, &ins[1], out).value,
        ScalarOp::Composite(_) => unreachable!("handled above"),
    };
    Ok(vec![Scalar { value: v, dtype: out }])
}

/// The `Composite`'s scalar graph, node by node, inside the enclosing body.
fn composite(b: &mut Block, g: &ScalarGraph, ins: &[Scalar], flags: &mut Flags) -> Result<Vec<Scalar>, String> {
    let mut env: Vec<Option<Scalar>> = vec![None; g.dtypes.len()];
    for (&i, s) in g.inputs.iter().zip(ins) {
        env[i] = Some(convert(b, s, g.dtypes[i]));
    }
    for (i, c) in g.constants.iter().enumerate() {
        if let Some(bytes) = c {
            env[i] = Some(scalar_constant(b, g.dtypes[i], bytes)?);
        }
    }
    for node in &g.nodes {
        let args = node
            .inputs
            .iter()
            .map(|&i| env[i].clone().ok_or("Composite input used before it is defined"))
            .collect::<Result<Vec<_>, _>>()?;
        let outs: Vec<DType> = node.outputs.iter().map(|&o| g.dtypes[o]).collect();
        let results = lower(b, &node.op, &args, &outs, flags)?;
        for (&o, r) in node.outputs.iter().zip(results) {
            env[o] = Some(r);
        }
    }
    g.outputs
        .iter()
        .map(|&o| env[o].clone().ok_or_else(|| "Composite output is never computed".to_string()))
        .collect()
}

/// A scalar constant from its little-endian bytes.
pub fn scalar_constant(b: &mut Block, dtype: DType, bytes: &[u8]) -> Result<Scalar, String> {
    if bytes.len() != dtype.byte_size() {
        return Err(format!("a {dtype} constant of {} bytes", bytes.len()));
    }
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    let bits = u64::from_le_bytes(raw);
    let ty = scalar_type(dtype);
    let value = if ty.is_float() {
        b.constant_float_bits(bits, ty)
    } else {
        // Sign-extend so `arith.constant` gets the value it expects for the width.
        let shift = 64 - dtype.bits().max(1);
        let v = if dtype == DType::Bool { (bits != 0) as i64 } else { ((bits << shift) as i64) >> shift };
        b.constant_int(v, ty)
    };
    Ok(Scalar { value, dtype })
}

/// `add`/`sub`/`mul` at the output dtype; integers wrap as in C. On bool, add is `or` and
/// mul is `and`, as numpy does.
fn arith_rule(b: &mut Block, ins: &[Scalar], out: DType, float: Arith, int: Arith, on_bool: Option<Arith>) -> Value {
    let args = all_to(b, ins, out);
    let op = if out.is_float() {
        float
    } else if out == DType::Bool {
        on_bool.unwrap_or(Arith::XOrI)
    } else {
        int
    };
    args[1..].iter().fold(args[0].clone(), |acc, x| b.arith(op, &acc, x))
}

fn true_div(b: &mut Block, ins: &[Scalar], out: DType) -> Result<Value, String> {
    if !out.is_float() {
        return Err(format!("true_div to {out}"));
    }
    let a = all_to(b, ins, out);
    Ok(b.arith(Arith::DivF, &a[0], &a[1]))
}

/// A divisor safe for integer division: 1 where `y` is zero (flagged) or where `x / y`
/// would overflow (`MIN / -1`, handled by the caller).
fn guarded_divisor(b: &mut Block, y: &Value, dtype: DType, slot: &mut Option<Value>) -> Value {
    let z = zero(b, dtype);
    let one = constant(b, dtype, 1);
    let is_zero = b.cmpi(CmpI::Eq, y, &z);
    let safe = b.select(&is_zero, &one, y);
    Flags::raise(slot, b, is_zero);
    if dtype.is_signed_int() {
        let minus_one = constant(b, dtype, -1);
        let is_minus_one = b.cmpi(CmpI::Eq, y, &minus_one);
        b.select(&is_minus_one, &one, &safe)
    } else {
        safe
    }
}

/// Floor division (Python's `//`). Integer division by zero raises ZeroDivisionError, as
/// PyTensor's C backend does; `MIN // -1` wraps to `MIN`.
fn int_div(b: &mut Block, ins: &[Scalar], out: DType, flags: &mut Flags) -> Result<Value, String> {
    let a = all_to(b, ins, out);
    let (x, y) = (&a[0], &a[1]);
    if out.is_float() {
        let q = b.arith(Arith::DivF, x, y);
        return Ok(b.math(MathUnary::Floor, &q));
    }
    if out == DType::Bool {
        return Err("int_div of bool".into());
    }
    let d = guarded_divisor(b, y, out, &mut flags.zero_division);
    if out.is_unsigned_int() {
        return Ok(b.arith(Arith::DivUI, x, &d));
    }
    let q = b.arith(Arith::FloorDivSI, x, &d);
    // y == -1 divided by 1 above: the quotient is -x (wrapping).
    let minus_one = constant(b, out, -1);
    let is_minus_one = b.cmpi(CmpI::Eq, y, &minus_one);
    let z = zero(b, out);
    let neg_x = b.arith(Arith::SubI, &z, x);
    Ok(b.select(&is_minus_one, &neg_x, &q))
}

/// Python's `%`: the result takes the divisor's sign. Integer modulo by zero raises.
fn modulo(b: &mut Block, ins: &[Scalar], out: DType, flags: &mut Flags) -> Result<Value, String> {
    let a = all_to(b, ins, out);
    let (x, y) = (&a[0], &a[1]);
    if out == DType::Bool {
        return Err("mod of bool".into());
    }
    if out.is_unsigned_int() {
        let d = guarded_divisor(b, y, out, &mut flags.zero_modulo);
        return Ok(b.arith(Arith::RemUI, x, &d));
    }
    let z = zero(b, out);
    let r = if out.is_float() {
        fmod(b, x, y)
    } else {
        // The guarded divisor is 1 for y == -1, and x % 1 == x % -1 == 0.
        let d = guarded_divisor(b, y, out, &mut flags.zero_modulo);
        b.arith(Arith::RemSI, x, &d)
    };
    // r has x's sign; where it differs from y's and r != 0, shift r by y.
    let (r_neg, y_neg, r_nonzero) = if out.is_float() {
        (b.cmpf(CmpF::Olt, &r, &z), b.cmpf(CmpF::Olt, y, &z), b.cmpf(CmpF::Une, &r, &z))
    } else {
        (b.cmpi(CmpI::Slt, &r, &z), b.cmpi(CmpI::Slt, y, &z), b.cmpi(CmpI::Ne, &r, &z))
    };
    let signs_differ = b.arith(Arith::XOrI, &r_neg, &y_neg);
    let adjust = b.arith(Arith::AndI, &signs_differ, &r_nonzero);
    let shifted = b.arith(if out.is_float() { Arith::AddF } else { Arith::AddI }, &r, y);
    Ok(b.select(&adjust, &shifted, &r))
}

/// C's `fmod` for floats. IREE's `arith.remf` on f64 calls a libm `fmod` that its linker
/// cannot find, so: the truncated quotient `q`, and the remainder `x - q*y` by FMA, which
/// is exact while |x/y| < 2^53. Where rounding pushed `q` one step too far, `r` has the
/// opposite sign of `x`; one `|y|` towards `x`'s sign puts it back.
fn fmod(b: &mut Block, x: &Value, y: &Value) -> Value {
    if x.scalar() == ScalarType::F32 {
        return b.arith(Arith::RemF, x, y);
    }
    let q0 = b.arith(Arith::DivF, x, y);
    let q = b.math(MathUnary::Trunc, &q0);
    let neg_q = b.negf(&q);
    let r = b.fma(&neg_q, y, x);
    let z = b.constant_f64(0.0, x.scalar());
    let r_neg = b.cmpf(CmpF::Olt, &r, &z);
    let x_neg = b.cmpf(CmpF::Olt, x, &z);
    let r_nonzero = b.cmpf(CmpF::Une, &r, &z);
    let sign_flip = b.arith(Arith::XOrI, &r_neg, &x_neg);
    let overshot = b.arith(Arith::AndI, &sign_flip, &r_nonzero);
    let ay = b.math(MathUnary::AbsF, y);
    let signed_y = b.copysign(&ay, x);
    let fixed = b.arith(Arith::AddF, &r, &signed_y);
    let r1 = b.select(&overshot, &fixed, &r);
    // fmod(x, +-inf) is x for finite x (0 * inf made r nan); a zero remainder keeps x's sign.
    let inf = b.constant_f64(f64::INFINITY, x.scalar());
    let ax = b.math(MathUnary::AbsF, x);
    let y_inf = b.cmpf(CmpF::Oeq, &ay, &inf);
    let x_finite = b.cmpf(CmpF::Olt, &ax, &inf);
    let keep_x = b.arith(Arith::AndI, &y_inf, &x_finite);
    let r2 = b.select(&keep_x, x, &r1);
    let signed_zero = b.copysign(&z, x);
    let r_zero = b.cmpf(CmpF::Oeq, &r2, &z);
    b.select(&r_zero, &signed_zero, &r2)
}

fn neg(b: &mut Block, x: &Scalar, out: DType) -> Result<Value, String> {
    let x = convert(b, x, out);
    if out.is_float() {
        Ok(b.negf(&x.value))
    } else if out == DType::Bool {
        Err("neg of bool (numpy has no negative of booleans)".into())
    } else {
        let z = zero(b, out);
        Ok(b.arith(Arith::SubI, &z, &x.value))
    }
}

fn abs(b: &mut Block, x: &Scalar, out: DType) -> Value {
    let x = convert(b, x, out);
    if out.is_float() {
        b.math(MathUnary::AbsF, &x.value)
    } else if out.is_signed_int() {
        b.absi(&x.value)
    } else {
        x.value
    }
}

/// `pow`. Floats use `math.powf`; integers use exact square-and-multiply over the
/// exponent's bits, with C's results for negative exponents (1, -1 or 0).
fn pow(b: &mut Block, ins: &[Scalar], out: DType) -> Result<Value, String> {
    let a = all_to(b, ins, out);
    let (x, y) = (&a[0], &a[1]);
    if out.is_float() {
        return Ok(b.powf(x, y));
    }
    if out == DType::Bool {
        return Err("pow of bool".into());
    }
    let one = constant(b, out, 1);
    let z = zero(b, out);
    let mut result = one.clone();
    let mut base = x.clone();
    let mut e = y.clone();
    for _ in 0..scalar_type(out).bits() {
        let bit = b.arith(Arith::AndI, &e, &one);
        let odd = b.cmpi(CmpI::Ne, &bit, &z);
        let times = b.arith(Arith::MulI, &result, &base);
        result = b.select(&odd, &times, &result);
        base = b.arith(Arith::MulI, &base, &base);
        let shift = b.constant_int(1, scalar_type(out));
        e = b.shrui(&e, &shift);
    }
    if !out.is_signed_int() {
        return Ok(result);
    }
    // Negative exponents: 1**-n = 1, (-1)**-n = +-1, anything else truncates to 0.
    let y_neg = b.cmpi(CmpI::Slt, y, &z);
    let minus_one = constant(b, out, -1);
    let x_one = b.cmpi(CmpI::Eq, x, &one);
    let x_minus_one = b.cmpi(CmpI::Eq, x, &minus_one);
    let y_bit = b.arith(Arith::AndI, y, &one);
    let y_odd = b.cmpi(CmpI::Ne, &y_bit, &z);
    let minus_one_pow = b.select(&y_odd, &minus_one, &one);
    let r0 = b.select(&x_minus_one, &minus_one_pow, &z);
    let negative = b.select(&x_one, &one, &r0);
    Ok(b.select(&y_neg, &negative, &result))
}

/// maximum/minimum; on floats nan wins, as in numpy.
fn extremum(b: &mut Block, ins: &[Scalar], out: DType, max: bool) -> Value {
    let a = all_to(b, ins, out);
    let op = match (out.is_float(), out.is_signed_int(), max) {
        (true, _, true) => Arith::MaximumF,
        (true, _, false) => Arith::MinimumF,
        (false, true, true) => Arith::MaxSI,
        (false, true, false) => Arith::MinSI,
        (false, false, true) => Arith::MaxUI,
        (false, false, false) => Arith::MinUI,
    };
    b.arith(op, &a[0], &a[1])
}

/// Comparisons at the inputs' common dtype. Floats use ordered predicates (false on nan)
/// except `neq`, which is true on nan.
fn compare(b: &mut Block, ins: &[Scalar], f: CmpF, signed: CmpI, unsigned: CmpI) -> Value {
    let common = common_dtype(ins);
    let a = all_to(b, ins, common);
    if common.is_float() {
        b.cmpf(f, &a[0], &a[1])
    } else if common.is_signed_int() {
        b.cmpi(signed, &a[0], &a[1])
    } else {
        b.cmpi(unsigned, &a[0], &a[1])
    }
}

fn bitwise(b: &mut Block, ins: &[Scalar], out: DType, op: Arith) -> Result<Value, String> {
    if out.is_float() {
        return Err(format!("bitwise op on {out}"));
    }
    let a = all_to(b, ins, out);
    Ok(b.arith(op, &a[0], &a[1]))
}

/// `~x`: logical not on bool, bitwise not on integers.
fn invert(b: &mut Block, x: &Scalar, out: DType) -> Result<Value, String> {
    if out.is_float() {
        return Err(format!("invert of {out}"));
    }
    let x = convert(b, x, out);
    let all_ones = b.constant_int(-1, scalar_type(out));
    Ok(b.arith(Arith::XOrI, &x.value, &all_ones))
}

fn switch(b: &mut Block, ins: &[Scalar], out: DType) -> Value {
    let cond = convert(b, &ins[0], DType::Bool);
    let t = convert(b, &ins[1], out);
    let f = convert(b, &ins[2], out);
    b.select(&cond.value, &t.value, &f.value)
}

fn float_unary(b: &mut Block, x: &Scalar, out: DType, op: MathUnary) -> Result<Value, String> {
    if !out.is_float() {
        return Err(format!("{op:?} to {out}"));
    }
    let x = convert(b, x, out);
    Ok(b.math(op, &x.value))
}
