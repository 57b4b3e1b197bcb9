//! Lowering rules for scalar ops: the body of an `Elemwise`'s `linalg.generic`, and the
//! nodes of a `Composite`. One function per op; PyTensor's dtype rules decide the casts.

use crate::dtype::{promote, DType};
use crate::ir::{ScalarGraph, ScalarLoop, ScalarOp};
use crate::mlir::{Arith, Block, Cast, CmpF, CmpI, MathUnary, ScalarType, Value};

use super::scalar_math::{
    self,
    bessel, bessel_jv, bessel_real, beta, beta_inv, erf, exp_log, gamma, hyp2f1, incomplete_gamma, incomplete_gamma_inv, owens_t,
    polygamma, trig, Stage,
};

/// IEEE 754 double: 52 fraction bits, exponent bias 1023.
const F64_FRACTION_BITS: i64 = 52;
const F64_BIAS: i64 = 1023;

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

/// What the target lets scalar code use, set for the span of one lowering.
///
/// float32 `exp`, `log` and `pow` are computed in f64 and rounded once where the target
/// compiles f64 math (IREE's f32 versions flush subnormals and are less accurate); other
/// targets (Vulkan, Metal) get IREE's f32 versions instead. A thread-local
/// rather than a parameter because every rule that builds a `linalg.generic` would have to
/// carry it to the scalar code, for one bit.
///
/// `native_f32`: the float32 functions of `native_f32_op` are computed in f32 even where
/// f64 math is there (llvm-cpu: twice the lanes a vector, no conversions), being within
/// their accuracy goal in f32.
///
/// `scatter`: the target compiles `iree_linalg_ext.scatter` on dynamic shapes (llvm-cpu;
/// IREE 3.13's SPIR-V codegen fails on it, asking for 2^56 bytes of workgroup memory), so
/// scatter-adds use it instead of a reduction over every (row, index) pair.
///
/// `sum_contractions`: float sums may be contractions with a vector of ones (llvm-cpu
/// vectorizes those). IREE 3.13's GPU codegen fails on every such sum of dynamic extent:
/// SPIR-V (Vulkan, Metal) asks for a dynamic or 2^55-byte workgroup allocation, CUDA
/// "failed to distribute" the dot; there sums stay `linalg.generic` folds.
///
/// `lane_scans`: Scans with elementwise steps become one sequential generic over (lanes,
/// steps) (scan_lanes.rs; llvm-cpu). Lavapipe's (Vulkan) run of one gave zeros
/// (test_vulkan::test_scan_and_its_gradient); GPU targets keep the loop in the host program.
///
/// `sequential_kernels`: dense factorizations and substitutions are one dispatch of
/// scalar loops (dense_kernels/; llvm-cpu); GPU targets keep the loop in the host program.
///
/// `packed_matmul`: the width in bytes of the CPU's vector registers, where float matrix
/// products are packed into tiles that fit them (see `blas::packed_matmul`); `None`: plain
/// `linalg.matmul` (GPU targets, CPUs whose tiles were not measured).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarTarget {
    pub float64_math: bool,
    pub native_f32: bool,
    pub scatter: bool,
    pub sum_contractions: bool,
    pub lane_scans: bool,
    pub sequential_kernels: bool,
    pub packed_matmul: Option<u32>,
}

impl ScalarTarget {
    /// llvm-cpu's: everything but the packed matmuls, whose tiles depend on the host.
    pub const CPU: ScalarTarget =
        ScalarTarget { float64_math: true, native_f32: true, scatter: true, sum_contractions: true, lane_scans: true, sequential_kernels: true, packed_matmul: None };
}

thread_local! {
    static TARGET: std::cell::Cell<ScalarTarget> = const { std::cell::Cell::new(ScalarTarget::CPU) };
}

/// Runs `f` (a lowering) with `target` in force; the previous one is restored after.
pub fn with_target<R>(target: ScalarTarget, f: impl FnOnce() -> R) -> R {
    let previous = TARGET.with(|t| t.replace(target));
    let result = f();
    TARGET.with(|t| t.set(previous));
    result
}

pub(crate) fn widen_f32() -> bool {
    TARGET.with(|t| t.get().float64_math)
}

thread_local! {
    /// Whether the op being lowered is computed in f32 on f32 data (`native_f32`).
    static NATIVE_OP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether f32 `math.fma` is surely fused: on llvm-cpu (`native_f32`'s target), not on
/// SPIR-V (lavapipe's is not).
pub(crate) fn fused_f32_fma() -> bool {
    TARGET.with(|t| t.get().native_f32)
}

/// Whether f32 math of the op being lowered is widened to f64: where the target has f64
/// math, unless the target computes this op natively (`native_f32`).
fn widen_this_f32() -> bool {
    widen_f32() && !NATIVE_OP.with(|n| n.get())
}

/// Whether the target compiles `iree_linalg_ext.scatter` (see [`ScalarTarget`]).
pub fn has_scatter() -> bool {
    TARGET.with(|t| t.get().scatter)
}

/// Whether float sums may be contractions with ones (see [`ScalarTarget`]).
pub fn has_sum_contractions() -> bool {
    TARGET.with(|t| t.get().sum_contractions)
}

/// Whether elementwise Scans may be one sequential generic (see [`ScalarTarget`]).
pub fn has_lane_scans() -> bool {
    TARGET.with(|t| t.get().lane_scans)
}

/// Whether dense factorizations may be one dispatch of scalar loops (see [`ScalarTarget`]).
pub fn has_sequential_kernels() -> bool {
    TARGET.with(|t| t.get().sequential_kernels)
}

/// The vector width in bytes that float matmuls are packed for, if they are (see [`ScalarTarget`]).
pub fn packed_matmul() -> Option<u32> {
    TARGET.with(|t| t.get().packed_matmul)
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
        ScalarOp::IntDiv if !out_dtypes[0].is_float() => (true, false),
        ScalarOp::Mod if !out_dtypes[0].is_float() => (false, true),
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
    match op {
        ScalarOp::Composite(g) => return composite(b, g, ins, flags),
        ScalarOp::Loop(l) => return scalar_loop(b, l, ins),
        _ => {}
    }
    if ins.iter().any(|s| s.dtype.is_complex()) || outs.iter().any(|d| d.is_complex()) {
        return Err("complex dtypes are not supported".into());
    }
    let out = outs[0];
    let v = with_native_flag(op, || lower_op(b, op, ins, out, flags));
    Ok(vec![Scalar { value: v?, dtype: out }])
}

/// The stages of an op computed as a sequence of kernels (`scalar_math::Stage`), which
/// elemwise.rs gives a bare `Elemwise` of it; None for the others (one kernel). Inside a
/// `Composite` the op's own function runs in its one kernel (`lower`): the stages in turn
/// (`run_stages`), or for betainc, the one op here PyTensor fuses (the others have no C
/// code, which its fusion requires), a form for scalar code.
pub fn stages(op: &ScalarOp) -> Option<&'static [Stage]> {
    match op {
        ScalarOp::GammaIncInv => Some(&incomplete_gamma_inv::GAMMAINCINV),
        ScalarOp::GammaIncCInv => Some(&incomplete_gamma_inv::GAMMAINCCINV),
        ScalarOp::BetaInc => Some(&beta::BETAINC),
        ScalarOp::BetaIncInv => Some(&beta_inv::BETAINCINV),
        ScalarOp::Ive => Some(&bessel_real::IVE),
        ScalarOp::Kve => Some(&bessel_real::KVE),
        _ => None,
    }
}

/// How many values stage `stage` of `op` hands on.
pub fn stage_yields(op: &ScalarOp, stage: usize) -> usize {
    stages(op).map_or(1, |s| s[stage].yields)
}

/// The element type of the values a stage of `op` hands on: the type it works in.
pub fn stage_type(op: &ScalarOp, out: DType) -> Result<ScalarType, String> {
    with_native_flag(op, || {
        if !out.is_float() {
            return Err(format!("float function to {out}"));
        }
        Ok(work_type(scalar_type(out)))
    })
}

/// Stage `stage` of `op` (`stages`) on the op's inputs and the previous stage's values:
/// its values, the last stage's one value converted to the output's dtype.
pub fn lower_stage(b: &mut Block, op: &ScalarOp, ins: &[Scalar], out: DType, stage: usize, carried: &[Value]) -> Result<Vec<Value>, String> {
    let stages = stages(op).ok_or("not a staged op")?;
    with_native_flag(op, || {
        let xs: Vec<&Scalar> = ins.iter().collect();
        let (args, ty, work) = own_math_args(b, &xs, out)?;
        let mut values = float32_result(ty, work, || (stages[stage].run)(b, &args, carried));
        if stage + 1 == stages.len() && work != ty {
            values[0] = b.cast(Cast::TruncF, &values[0], ty);
        }
        Ok(values)
    })
}

/// Runs `body` with the flag `widen_this_f32` reads set for `op`, as `lower` does.
fn with_native_flag<T>(op: &ScalarOp, body: impl FnOnce() -> T) -> T {
    let native = TARGET.with(|t| t.get().native_f32) && native_f32_op(op);
    let previous = NATIVE_OP.with(|n| n.replace(native));
    let r = body();
    NATIVE_OP.with(|n| n.set(previous));
    r
}

/// The float32 functions computed in f32 where the target allows it (`native_f32`,
/// llvm-cpu: 16 lanes a vector instead of 8, no conversions): those within their goal in
/// f32 (4 ULP for elementary functions; 8 for special ones where scipy is that
/// accurate). The others stay in f64, rounded once (nearly correctly rounded). Max ULP of
/// the f32 code: first from the accuracy report's 5000 points (`python
/// benchmarks/accuracy.py --dtype float32 NAME`), then from every 61st float32 bit
/// pattern (70 million points, against numpy/scipy in f64).
fn native_f32_op(op: &ScalarOp) -> bool {
    match op {
        // exp 0.76 / 0.85, log 0.74 / 0.83 (exp_log_f32.rs), exp2 0.84 / 0.98.
        ScalarOp::Exp | ScalarOp::Log | ScalarOp::Exp2 => true,
        // expm1 1.03 / 1.06, log1p 1.27 / 1.44, log2 1.15 / 1.53, log10 1.28 / 1.52.
        ScalarOp::Expm1 | ScalarOp::Log1p | ScalarOp::Log2 | ScalarOp::Log10 => true,
        // tanh 1.37 / 1.40 (exp_log.rs `tanh_f32`), sinh 2.08 / 2.52, cosh 2.17 / 2.52, arcsinh 1.46 / 1.97,
        // arccosh 1.77 / 2.48, arctanh 1.42 / 2.03.
        ScalarOp::Tanh | ScalarOp::Sinh | ScalarOp::Cosh | ScalarOp::ArcSinh | ScalarOp::ArcCosh | ScalarOp::ArcTanh => true,
        // sigmoid 1.74 / 2.30, softplus 1.45 / 1.93, log1mexp 1.58 / 2.03.
        ScalarOp::Sigmoid | ScalarOp::Softplus | ScalarOp::Log1mexp => true,
        // Widened: erf and erfc (f32 code 2.22 / 2.45 and 3.36 / 4.04, within the special
        // functions' 8 ULP, but less accurate than C's erff/erfcf, 0.71 and 2.25 on the
        // report's points: issue 3 wants never less accurate than C).
        // arcsin 0.60 / 0.64, arccos 0.55 / 0.63, arctan 0.54 / 0.64.
        ScalarOp::ArcSin | ScalarOp::ArcCos | ScalarOp::ArcTan => true,
        // Widened: sin, cos and tan, whose f32 reduction is accurate only up to 2^20
        // (trig.rs; in f64 up to 2^53): at 1.2e9 the f32 code is wrong in every digit.
        // arctan2 is accurate in f32 (0.72 ULP) but was slower there (2865 vs 1270 us on
        // bench_scalar.py's points: tiny quotients make subnormal products, see
        // `F::tame_tiny`).
        _ => false,
    }
}

/// One scalar op (not a `Composite` or `Loop`) at the output dtype `out`.
fn lower_op(b: &mut Block, op: &ScalarOp, ins: &[Scalar], out: DType, flags: &mut Flags) -> Result<Value, String> {
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
        // Issue 3: rounding, tests and the exp/log family (math in scalar_math/exp_log.rs).
        ScalarOp::IsNan => is_nan(b, &ins[0]),
        ScalarOp::IsInf => is_inf(b, &ins[0]),
        ScalarOp::Clip => clip(b, ins, out),
        ScalarOp::Sign => sign(b, &ins[0], out)?,
        ScalarOp::Ceil => float_rounding(b, &ins[0], out, ceil)?,
        ScalarOp::Floor => float_rounding(b, &ins[0], out, floor)?,
        ScalarOp::Trunc => float_rounding(b, &ins[0], out, trunc)?,
        ScalarOp::RoundHalfToEven => float_rounding(b, &ins[0], out, round_half_to_even)?,
        ScalarOp::RoundHalfAwayFromZero => float_rounding(b, &ins[0], out, round_half_away_from_zero)?,
        ScalarOp::Reciprocal => reciprocal(b, &ins[0], out)?,
        ScalarOp::Deg2Rad => scale_by_double(b, &ins[0], out, std::f64::consts::PI / 180.0)?,
        ScalarOp::Rad2Deg => scale_by_double(b, &ins[0], out, 180.0 / std::f64::consts::PI)?,
        ScalarOp::Log1p => own_math(b, &ins[0], out, exp_log::log1p)?,
        ScalarOp::Expm1 => own_math(b, &ins[0], out, exp_log::expm1)?,
        ScalarOp::Log2 => own_math(b, &ins[0], out, exp_log::log2)?,
        ScalarOp::Log10 => own_math(b, &ins[0], out, exp_log::log10)?,
        ScalarOp::Exp2 => own_math(b, &ins[0], out, exp_log::exp2)?,
        ScalarOp::Sinh => own_math(b, &ins[0], out, exp_log::sinh)?,
        ScalarOp::Cosh => own_math(b, &ins[0], out, exp_log::cosh)?,
        ScalarOp::Tanh => own_math(b, &ins[0], out, exp_log::tanh)?,
        ScalarOp::ArcSinh => own_math(b, &ins[0], out, exp_log::asinh)?,
        ScalarOp::ArcCosh => own_math(b, &ins[0], out, exp_log::acosh)?,
        ScalarOp::ArcTanh => own_math(b, &ins[0], out, exp_log::atanh)?,
        ScalarOp::Sigmoid => own_math(b, &ins[0], out, exp_log::sigmoid)?,
        ScalarOp::Softplus => own_math(b, &ins[0], out, exp_log::softplus)?,
        ScalarOp::Log1mexp => own_math(b, &ins[0], out, exp_log::log1mexp)?,
        // End of issue 3's exp/log block.
        // Issue 3: trig (math in scalar_math/trig.rs).
        ScalarOp::Sin => own_math(b, &ins[0], out, trig::sin)?,
        ScalarOp::Cos => own_math(b, &ins[0], out, trig::cos)?,
        ScalarOp::Tan => own_math(b, &ins[0], out, trig::tan)?,
        ScalarOp::ArcSin => own_math(b, &ins[0], out, trig::asin)?,
        ScalarOp::ArcCos => own_math(b, &ins[0], out, trig::acos)?,
        ScalarOp::ArcTan => own_math(b, &ins[0], out, trig::atan)?,
        ScalarOp::ArcTan2 => own_math2(b, &ins[0], &ins[1], out, trig::atan2)?,
        // End of issue 3's trig block.
        // Issue 3: special functions (lower/scalar_math/{erf,gamma}.rs).
        ScalarOp::Erf => own_math(b, &ins[0], out, erf::erf)?,
        ScalarOp::Erfc => own_math(b, &ins[0], out, erf::erfc)?,
        ScalarOp::Erfcx => own_math(b, &ins[0], out, erf::erfcx)?,
        ScalarOp::Erfinv => own_math(b, &ins[0], out, erf::erfinv)?,
        ScalarOp::Erfcinv => own_math(b, &ins[0], out, erf::erfcinv)?,
        ScalarOp::Gamma => own_math(b, &ins[0], out, gamma::gamma)?,
        ScalarOp::GammaLn => own_math(b, &ins[0], out, gamma::gammaln)?,
        ScalarOp::Psi => own_math(b, &ins[0], out, gamma::psi)?,
        ScalarOp::TriGamma => own_math(b, &ins[0], out, gamma::tri_gamma)?,
        // Issue 3: Bessel functions.
        ScalarOp::I0 => own_math(b, &ins[0], out, bessel::i0)?,
        ScalarOp::I1 => own_math(b, &ins[0], out, bessel::i1)?,
        ScalarOp::J0 => own_math(b, &ins[0], out, bessel::j0)?,
        ScalarOp::J1 => own_math(b, &ins[0], out, bessel::j1)?,
        ScalarOp::Ive => own_math2(b, &ins[0], &ins[1], out, bessel_real::ive)?,
        ScalarOp::Kve => own_math2(b, &ins[0], &ins[1], out, bessel_real::kve)?,
        ScalarOp::Jv => own_math2(b, &ins[0], &ins[1], out, bessel_jv::jv)?,
        ScalarOp::GammaInc => own_math2(b, &ins[0], &ins[1], out, incomplete_gamma::gammainc)?,
        ScalarOp::GammaIncC => own_math2(b, &ins[0], &ins[1], out, incomplete_gamma::gammaincc)?,
        ScalarOp::GammaIncInv => own_math2(b, &ins[0], &ins[1], out, incomplete_gamma_inv::gammaincinv)?,
        ScalarOp::GammaIncCInv => own_math2(b, &ins[0], &ins[1], out, incomplete_gamma_inv::gammainccinv)?,
        ScalarOp::GammaL => own_math2(b, &ins[0], &ins[1], out, incomplete_gamma::gammal)?,
        ScalarOp::GammaU => own_math2(b, &ins[0], &ins[1], out, incomplete_gamma::gammau)?,
        // The integer order converted to the float type (exact up to 2^24).
        ScalarOp::PolyGamma => own_math2(b, &ins[0], &ins[1], out, polygamma::polygamma)?,
        ScalarOp::BetaInc => own_math3(b, [&ins[0], &ins[1], &ins[2]], out, beta::betainc)?,
        ScalarOp::BetaIncInv => own_math3(b, [&ins[0], &ins[1], &ins[2]], out, beta_inv::betaincinv)?,
        ScalarOp::OwensT => own_math2(b, &ins[0], &ins[1], out, owens_t::owens_t)?,
        ScalarOp::Hyp2F1 => own_math4(b, [&ins[0], &ins[1], &ins[2], &ins[3]], out, hyp2f1::hyp2f1)?,
        // End of issue 3's special-function block.
        ScalarOp::Composite(_) | ScalarOp::Loop(_) => unreachable!("handled above"),
    };
    Ok(v)
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

/// A `ScalarLoop` as an `scf.while` in the enclosing body, with the C backend's semantics:
/// `n_steps <= 0` runs no step (the state comes back unchanged and a while loop's `until`
/// is true); a while loop stops after the first step whose `until` is true.
fn scalar_loop(b: &mut Block, l: &ScalarLoop, ins: &[Scalar]) -> Result<Vec<Scalar>, String> {
    let g = &l.graph;
    let (n_steps, rest) = ins.split_first().ok_or("ScalarLoop without n_steps")?;
    if rest.len() != g.inputs.len() {
        return Err(format!("ScalarLoop takes {} inputs after n_steps, got {}", g.inputs.len(), rest.len()));
    }
    let n = convert(b, n_steps, DType::Int64).value;
    let rest: Vec<Scalar> = rest.iter().zip(&g.inputs).map(|(s, &i)| convert(b, s, g.dtypes[i])).collect();
    let (state, constants) = rest.split_at(l.n_update);
    let zero = b.constant_int(0, ScalarType::I64);
    let mut inits: Vec<Value> = std::iter::once(zero).chain(state.iter().map(|s| s.value.clone())).collect();
    if l.is_while {
        inits.push(b.constant_int(1, ScalarType::I1));
    }
    let mut failure: Option<String> = None;
    let finals = b.scf_while(
        &inits,
        |c, v| {
            let more = c.cmpi(CmpI::Slt, &v[0], &n);
            if !l.is_while {
                return more;
            }
            // `until` starts true (what n_steps <= 0 reports), so the first step is taken
            // regardless of it.
            let z = c.constant_int(0, ScalarType::I64);
            let first = c.cmpi(CmpI::Eq, &v[0], &z);
            let t = c.constant_int(1, ScalarType::I1);
            let not_done = c.arith(Arith::XOrI, &v[l.n_update + 1], &t);
            let go = c.arith(Arith::OrI, &first, &not_done);
            c.arith(Arith::AndI, &more, &go)
        },
        |body, v| {
            let current: Vec<Scalar> = v[1..=l.n_update]
                .iter()
                .zip(&g.inputs)
                .map(|(value, &i)| Scalar { value: value.clone(), dtype: g.dtypes[i] })
                .chain(constants.iter().cloned())
                .collect();
            let mut inner_flags = Flags::default();
            let next = composite(body, g, &current, &mut inner_flags);
            let one = body.constant_int(1, ScalarType::I64);
            let mut yielded = vec![body.arith(Arith::AddI, &v[0], &one)];
            match next {
                Ok(outs) if inner_flags.zero_division.is_none() && inner_flags.zero_modulo.is_none() => {
                    yielded.extend(outs.into_iter().map(|s| s.value));
                }
                Ok(_) => {
                    // The error flags of the elementwise kernel cannot leave the loop's region.
                    failure = Some("an integer division or modulo that may fail inside a ScalarLoop".into());
                    yielded.extend(v[1..].iter().cloned());
                }
                Err(why) => {
                    failure = Some(why);
                    yielded.extend(v[1..].iter().cloned());
                }
            }
            yielded
        },
    );
    if let Some(why) = failure {
        return Err(format!("inside ScalarLoop: {why}"));
    }
    Ok(finals[1..]
        .iter()
        .zip(&g.outputs)
        .map(|(value, &o)| Scalar { value: value.clone(), dtype: g.dtypes[o] })
        .collect())
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
        return Ok(float_floor_div(b, x, y));
    }
    if out == DType::Bool {
        // PyTensor keeps bool // bool a bool: `x / y` in C, which is `x` wherever `y` is
        // true; a false `y` raises as any integer division by zero.
        let z = zero(b, out);
        let is_zero = b.cmpi(CmpI::Eq, y, &z);
        Flags::raise(&mut flags.zero_division, b, is_zero);
        return Ok(x.clone());
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

/// Float `//` as PyTensor's C code computes it. Where x's and y's signs agree (or y is 0)
/// that is `floor(x / y)`; where they differ it is `-floor(-(x / y)) - (fmod(x, y) != 0)`,
/// which differs from `floor(x / y)` where the quotient rounds to an integer that the exact
/// one is not: `1 // -inf` and `1e-300 // -3` are -1 (as in Python), not -0.
fn float_floor_div(b: &mut Block, x: &Value, y: &Value) -> Value {
    let ty = x.scalar();
    let z = b.constant_f64(0.0, ty);
    let t = b.arith(Arith::DivF, x, y);
    let same_signs = b.math(MathUnary::Floor, &t);
    let x_neg = b.cmpf(CmpF::Olt, x, &z);
    let y_neg = b.cmpf(CmpF::Olt, y, &z);
    let signs_differ = b.arith(Arith::XOrI, &x_neg, &y_neg);
    let y_nonzero = b.cmpf(CmpF::Une, y, &z);
    let differ = b.arith(Arith::AndI, &signs_differ, &y_nonzero);
    let neg_t = b.negf(&t);
    let floor_neg_t = b.math(MathUnary::Floor, &neg_t);
    let minus_floor = b.negf(&floor_neg_t);
    let r = fmod(b, x, y);
    let inexact = b.cmpf(CmpF::Une, &r, &z);
    let one = b.constant_f64(1.0, ty);
    let step = b.select(&inexact, &one, &z);
    let differing = b.arith(Arith::SubF, &minus_floor, &step);
    b.select(&differ, &differing, &same_signs)
}

/// Python's `%`: the result takes the divisor's sign. Integer modulo by zero raises.
fn modulo(b: &mut Block, ins: &[Scalar], out: DType, flags: &mut Flags) -> Result<Value, String> {
    let a = all_to(b, ins, out);
    let (x, y) = (&a[0], &a[1]);
    if out == DType::Bool {
        // bool % bool stays bool: `x % 1` is false; a false `y` raises.
        let z = zero(b, out);
        let is_zero = b.cmpi(CmpI::Eq, y, &z);
        Flags::raise(&mut flags.zero_modulo, b, is_zero);
        return Ok(z);
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
        let x = off_the_minimum(b, x, &d, out);
        b.arith(Arith::RemSI, &x, &d)
    };
    // r has x's sign. Where x's and y's signs differ, PyTensor's C code returns
    // `r + (r != 0 ? y : 0)`: a zero remainder becomes +0.0 there (-2.0 % 1.0 and
    // 2.0 % -1.0 are both +0.0), and keeps x's sign elsewhere (-0.0 % 1.0 is -0.0).
    let (x_neg, y_neg, r_nonzero) = if out.is_float() {
        (b.cmpf(CmpF::Olt, x, &z), b.cmpf(CmpF::Olt, y, &z), b.cmpf(CmpF::Une, &r, &z))
    } else {
        (b.cmpi(CmpI::Slt, x, &z), b.cmpi(CmpI::Slt, y, &z), b.cmpi(CmpI::Ne, &r, &z))
    };
    let signs_differ = b.arith(Arith::XOrI, &x_neg, &y_neg);
    let addend = b.select(&r_nonzero, y, &z);
    let shifted = b.arith(if out.is_float() { Arith::AddF } else { Arith::AddI }, &r, &addend);
    Ok(b.select(&signs_differ, &shifted, &r))
}

/// x, or x + |d| where x is its type's minimum (and d is not): the same truncated
/// remainder (both negative, |d| apart), for a `remsi` that cannot take the minimum.
/// MLIR's SPIR-V lowering of `remsi` (Vulkan, Metal) works on absolute values and loses
/// the sign where |x| overflows: lavapipe gave 23 for -2**31 rem 75, not -23. Where d is
/// the minimum too, |d| would overflow; x is kept (MIN rem MIN is 0 there anyway).
fn off_the_minimum(b: &mut Block, x: &Value, d: &Value, dtype: DType) -> Value {
    let min = constant(b, dtype, i64::MIN >> (64 - dtype.bits()));
    let z = zero(b, dtype);
    let x_min = b.cmpi(CmpI::Eq, x, &min);
    let d_not_min = b.cmpi(CmpI::Ne, d, &min);
    let shift = b.arith(Arith::AndI, &x_min, &d_not_min);
    let d_neg = b.cmpi(CmpI::Slt, d, &z);
    let minus_d = b.arith(Arith::SubI, &z, d);
    let abs_d = b.select(&d_neg, &minus_d, d);
    let shifted = b.arith(Arith::AddI, x, &abs_d);
    b.select(&shift, &shifted, x)
}

/// C's `fmod` for floats: exact, with x's sign. f32 is `arith.remf` (IREE links `fmodf`);
/// on f64 `arith.remf` calls a libm `fmod` that IREE's linker cannot find, so `fmod_f64`.
fn fmod(b: &mut Block, x: &Value, y: &Value) -> Value {
    if x.scalar() == ScalarType::F64 {
        fmod_f64(b, x, y)
    } else {
        b.arith(Arith::RemF, x, y)
    }
}

/// `fmod` of f64, exactly, by integer long division. With |x| = mx * 2^ex and
/// |y| = my * 2^ey (53-bit integer mantissas), |x| mod |y| = (mx * 2^(ex-ey) mod my) * 2^ey:
/// the shift goes 11 bits at a time (so `m << s` stays below 2^64), one `remui` each, in
/// a loop of at most 191 turns (the widest exponent gap) and none where ex == ey. Any
/// shortcut through a float quotient is inexact once |x/y| passes 2^53.
fn fmod_f64(b: &mut Block, x: &Value, y: &Value) -> Value {
    let f64t = ScalarType::F64;
    let i64t = ScalarType::I64;
    let ax = b.math(MathUnary::AbsF, x);
    let ay = b.math(MathUnary::AbsF, y);
    let (mx, ex) = f64_parts(b, &ax);
    let (my0, ey) = f64_parts(b, &ay);
    let zero = b.constant_int(0, i64t);
    let one = b.constant_int(1, i64t);
    // my is 0 only where y is, whose result is nan (chosen below): divide by 1 there.
    let my_zero = b.cmpi(CmpI::Eq, &my0, &zero);
    let my = b.select(&my_zero, &one, &my0);
    let gap = b.arith(Arith::SubI, &ex, &ey);
    let gap = b.arith(Arith::MaxSI, &gap, &zero);
    let m0 = b.arith(Arith::RemUI, &mx, &my);
    let step = b.constant_int(11, i64t);
    let done = b.scf_while(
        &[m0, gap],
        |c, v| c.cmpi(CmpI::Sgt, &v[1], &zero),
        |l, v| {
            let s = l.arith(Arith::MinSI, &v[1], &step);
            let shifted = l.shli(&v[0], &s);
            let m = l.arith(Arith::RemUI, &shifted, &my);
            let left = l.arith(Arith::SubI, &v[1], &s);
            vec![m, left]
        },
    );
    // m * 2^(ey - 1075), in two exact steps so that neither power of two is subnormal:
    // 2^min(ey - 53, 0) (down to 2^-52), then 2^max(ey - 1075, -1022).
    let mf = b.cast(Cast::UIToFP, &done[0], f64t);
    let c53 = b.constant_int(53, i64t);
    let e2 = b.arith(Arith::SubI, &ey, &c53);
    let e2 = b.arith(Arith::MinSI, &e2, &zero);
    let c1075 = b.constant_int(F64_BIAS + F64_FRACTION_BITS, i64t);
    let min_normal = b.constant_int(1 - F64_BIAS, i64t);
    let e1 = b.arith(Arith::SubI, &ey, &c1075);
    let e1 = b.arith(Arith::MaxSI, &e1, &min_normal);
    let p2 = f64_power_of_two(b, &e2);
    let p1 = f64_power_of_two(b, &e1);
    let scaled = b.arith(Arith::MulF, &mf, &p2);
    let r = b.arith(Arith::MulF, &scaled, &p1);
    let r = b.copysign(&r, x);
    // |x| < |y| (x = +-0 too, and finite x with y infinite): x itself. x infinite or nan,
    // y zero or nan: nan.
    let smaller = b.cmpf(CmpF::Olt, &ax, &ay);
    let r = b.select(&smaller, x, &r);
    let inf = b.constant_f64(f64::INFINITY, f64t);
    let x_bad = b.cmpf(CmpF::Oge, &ax, &inf);
    let x_nan = b.cmpf(CmpF::Uno, x, x);
    let zf = b.constant_f64(0.0, f64t);
    let y_zero = b.cmpf(CmpF::Oeq, &ay, &zf);
    let y_nan = b.cmpf(CmpF::Uno, y, y);
    let bad = b.arith(Arith::OrI, &x_bad, &x_nan);
    let bad = b.arith(Arith::OrI, &bad, &y_zero);
    let bad = b.arith(Arith::OrI, &bad, &y_nan);
    let nan = b.constant_f64(f64::NAN, f64t);
    b.select(&bad, &nan, &r)
}

/// The integer mantissa and exponent of a non-negative finite f64 `v`, as i64:
/// v = m * 2^(e - 1075), subnormals with e = 1 and no hidden bit.
fn f64_parts(b: &mut Block, v: &Value) -> (Value, Value) {
    let i64t = ScalarType::I64;
    let bits = b.cast(Cast::Bitcast, v, i64t);
    let width = b.constant_int(F64_FRACTION_BITS, i64t);
    let fraction_mask = b.constant_int((1 << F64_FRACTION_BITS) - 1, i64t);
    let hidden = b.constant_int(1 << F64_FRACTION_BITS, i64t);
    let zero = b.constant_int(0, i64t);
    let one = b.constant_int(1, i64t);
    let e = b.shrui(&bits, &width);
    let fraction = b.arith(Arith::AndI, &bits, &fraction_mask);
    let normal = b.cmpi(CmpI::Ne, &e, &zero);
    let lead = b.select(&normal, &hidden, &zero);
    let m = b.arith(Arith::OrI, &fraction, &lead);
    (m, b.arith(Arith::MaxSI, &e, &one))
}

/// 2^e as an f64, for an i64 `e` in the normal range [-1022, 1023].
fn f64_power_of_two(b: &mut Block, e: &Value) -> Value {
    let i64t = ScalarType::I64;
    let bias = b.constant_int(F64_BIAS, i64t);
    let width = b.constant_int(F64_FRACTION_BITS, i64t);
    let biased = b.arith(Arith::AddI, e, &bias);
    let bits = b.shli(&biased, &width);
    b.cast(Cast::Bitcast, &bits, ScalarType::F64)
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

/// `pow`. Floats use `float_pow`; integers use exact square-and-multiply over the
/// exponent's bits, with C's results for negative exponents (1, -1 or 0).
fn pow(b: &mut Block, ins: &[Scalar], out: DType) -> Result<Value, String> {
    let a = all_to(b, ins, out);
    let (x, y) = (&a[0], &a[1]);
    if out.is_float() {
        // In f64 whatever the float type: f32 results then round once, as from powf.
        let ty = x.scalar();
        if ty == ScalarType::F64 {
            return Ok(float_pow(b, x, y));
        }
        if !widen_f32() {
            return Ok(b.powf(x, y));
        }
        let xw = b.cast(Cast::ExtF, x, ScalarType::F64);
        let yw = b.cast(Cast::ExtF, y, ScalarType::F64);
        let r = float_pow(b, &xw, &yw);
        return Ok(b.cast(Cast::TruncF, &r, ty));
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

/// C's `pow` (C99 Annex F, as glibc) on f64. `math.powf` in IREE is `exp(y * log(x))`:
/// nan for every negative base, for 0 ** 0 and 1 ** inf, and 500 ulps off near overflow.
/// Here the magnitude is `exp(y * log|x|)` with log|x| to twice the precision
/// (`exp_log::log_double`) and the product's rounding error (by FMA) added back inside
/// the exp (`exp_log::exp_double`); then the special cases, and the sign.
pub(crate) fn float_pow(b: &mut Block, x: &Value, y: &Value) -> Value {
    let ty = ScalarType::F64;
    let zero = b.constant_f64(0.0, ty);
    let one = b.constant_f64(1.0, ty);
    let inf = b.constant_f64(f64::INFINITY, ty);
    let is_finite = |b: &mut Block, v: &Value| {
        let a = b.math(MathUnary::AbsF, v);
        b.cmpf(CmpF::Olt, &a, &inf)
    };
    let ax = b.math(MathUnary::AbsF, x);
    // log|x| to twice the precision (hi + lo), so y log|x| is carried exactly enough
    // that exp sees the product's and log's rounding errors: within about 1e-16 * |y|.
    let (log, log_lo) = exp_log::log_double(b, &ax);
    let p = b.arith(Arith::MulF, y, &log);
    let minus_p = b.negf(&p);
    let p_rounding = b.fma(y, &log, &minus_p);
    // (exp_double drops the low part where p is past its clamps or the low part is
    // not finite.)
    let p_low = b.fma(y, &log_lo, &p_rounding);
    let magnitude = exp_log::exp_double(b, &p, &p_low);
    // An odd integer power of a negative base (-0.0 and -inf too) is negative.
    let y_trunc = b.math(MathUnary::Trunc, y);
    let y_integer = b.cmpf(CmpF::Oeq, &y_trunc, y);
    let half = b.constant_f64(0.5, ty);
    let half_y = b.arith(Arith::MulF, y, &half);
    let half_trunc = b.math(MathUnary::Trunc, &half_y);
    let half_fraction = b.cmpf(CmpF::Une, &half_trunc, &half_y);
    let y_odd = b.arith(Arith::AndI, &y_integer, &half_fraction);
    let sign = b.copysign(&one, x);
    let x_negative = b.cmpf(CmpF::Olt, &sign, &zero);
    let flip = b.arith(Arith::AndI, &y_odd, &x_negative);
    let negated = b.negf(&magnitude);
    let r = b.select(&flip, &negated, &magnitude);
    // A finite negative base to a finite non-integer power: nan.
    let x_below = b.cmpf(CmpF::Olt, x, &zero);
    let x_finite = is_finite(b, x);
    let y_finite = is_finite(b, y);
    let y_fraction = b.cmpf(CmpF::Une, &y_trunc, y);
    let invalid = b.arith(Arith::AndI, &x_below, &x_finite);
    let invalid = b.arith(Arith::AndI, &invalid, &y_finite);
    let invalid = b.arith(Arith::AndI, &invalid, &y_fraction);
    let nan = b.constant_f64(f64::NAN, ty);
    let r = b.select(&invalid, &nan, &r);
    // x ** 1 is x exactly (max ** 1 must not round up to inf).
    let y_one = b.cmpf(CmpF::Oeq, y, &one);
    let r = b.select(&y_one, x, &r);
    // Exactly 1: x ** +-0 (nan too), 1 ** y (nan too), (-1) ** +-inf.
    let y_zero = b.cmpf(CmpF::Oeq, y, &zero);
    let x_one = b.cmpf(CmpF::Oeq, x, &one);
    let ax_one = b.cmpf(CmpF::Oeq, &ax, &one);
    let ay = b.math(MathUnary::AbsF, y);
    let y_inf = b.cmpf(CmpF::Oeq, &ay, &inf);
    let minus_one_inf = b.arith(Arith::AndI, &ax_one, &y_inf);
    let unit = b.arith(Arith::OrI, &y_zero, &x_one);
    let unit = b.arith(Arith::OrI, &unit, &minus_one_inf);
    b.select(&unit, &one, &r)
}

/// maximum/minimum. On floats, C's `y > x ? y : (x >= y ? x : nan)` (`<`, `<=` for
/// minimum): nan wins, and of equal values (0.0 and -0.0) the first, x.
fn extremum(b: &mut Block, ins: &[Scalar], out: DType, max: bool) -> Value {
    let a = all_to(b, ins, out);
    if out.is_float() {
        let (x, y) = (&a[0], &a[1]);
        let (strict, loose) = if max { (CmpF::Ogt, CmpF::Oge) } else { (CmpF::Olt, CmpF::Ole) };
        let y_wins = b.cmpf(strict, y, x);
        let x_wins = b.cmpf(loose, x, y);
        let nan = b.constant_f64(f64::NAN, x.scalar());
        let x_or_nan = b.select(&x_wins, x, &nan);
        return b.select(&y_wins, y, &x_or_nan);
    }
    let op = match (out.is_signed_int(), max) {
        (true, true) => Arith::MaxSI,
        (true, false) => Arith::MinSI,
        (false, true) => Arith::MaxUI,
        (false, false) => Arith::MinUI,
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
    let ty = x.value.scalar();
    // exp and log in f64 are ours (scalar_math/exp_log.rs: vector code, where IREE's are
    // a scalar call per element).
    let apply = |b: &mut Block, v: &Value| match op {
        MathUnary::Exp => exp_log::exp(b, v),
        MathUnary::Log => exp_log::log(b, v),
        _ => b.math(op, v),
    };
    if ty == ScalarType::F64 || op == MathUnary::Sqrt || !widen_this_f32() {
        return Ok(apply(b, &x.value));
    }
    // In f64, then rounded once, exp and log are nearly correctly rounded; in f32 (ours,
    // scalar_math/exp_log_f32.rs) within 1 ULP. (sqrt is exact in any width.)
    let wide = b.cast(Cast::ExtF, &x.value, ScalarType::F64);
    let r = apply(b, &wide);
    Ok(b.cast(Cast::TruncF, &r, ty))
}

// ---------------------------------------------------------------------------------------
// Issue 3: rounding, tests and the exp/log family.

/// `isnan`: bool; integers and bools are never nan.
fn is_nan(b: &mut Block, x: &Scalar) -> Value {
    if !x.dtype.is_float() {
        return b.constant_int(0, ScalarType::I1);
    }
    b.cmpf(CmpF::Uno, &x.value, &x.value)
}

/// `isinf`: bool, for either infinity; integers and bools never are.
fn is_inf(b: &mut Block, x: &Scalar) -> Value {
    if !x.dtype.is_float() {
        return b.constant_int(0, ScalarType::I1);
    }
    let a = b.math(MathUnary::AbsF, &x.value);
    let inf = b.constant_f64(f64::INFINITY, a.scalar());
    b.cmpf(CmpF::Oeq, &a, &inf)
}

/// `clip(x, lo, hi)` as C's `x < lo ? lo : (x > hi ? hi : x)` at the output dtype: a nan
/// `x` stays nan, nan bounds are ignored (every comparison with nan is false).
fn clip(b: &mut Block, ins: &[Scalar], out: DType) -> Value {
    let a = all_to(b, ins, out);
    let (x, lo, hi) = (&a[0], &a[1], &a[2]);
    let (below, above) = if out.is_float() {
        (b.cmpf(CmpF::Olt, x, lo), b.cmpf(CmpF::Ogt, x, hi))
    } else if out.is_signed_int() {
        (b.cmpi(CmpI::Slt, x, lo), b.cmpi(CmpI::Sgt, x, hi))
    } else {
        (b.cmpi(CmpI::Ult, x, lo), b.cmpi(CmpI::Ugt, x, hi))
    };
    let r = b.select(&above, hi, x);
    b.select(&below, lo, &r)
}

/// `sign` as PyTensor's C code: 1, -1, nan for nan and +0.0 for either zero on floats;
/// 1, -1, 0 on integers. PyTensor has no sign of bools.
fn sign(b: &mut Block, x: &Scalar, out: DType) -> Result<Value, String> {
    if out == DType::Bool {
        return Err("sign of bool".into());
    }
    let x = convert(b, x, out).value;
    let z = zero(b, out);
    let one = constant(b, out, 1);
    if out.is_float() {
        let minus_one = constant(b, out, -1);
        let pos = b.cmpf(CmpF::Ogt, &x, &z);
        let neg = b.cmpf(CmpF::Olt, &x, &z);
        let nan = b.cmpf(CmpF::Uno, &x, &x);
        let r = b.select(&nan, &x, &z);
        let r = b.select(&neg, &minus_one, &r);
        return Ok(b.select(&pos, &one, &r));
    }
    if out.is_unsigned_int() {
        let nonzero = b.cmpi(CmpI::Ne, &x, &z);
        return Ok(b.select(&nonzero, &one, &z));
    }
    let minus_one = constant(b, out, -1);
    let pos = b.cmpi(CmpI::Sgt, &x, &z);
    let neg = b.cmpi(CmpI::Slt, &x, &z);
    let r = b.select(&neg, &minus_one, &z);
    Ok(b.select(&pos, &one, &r))
}

/// A rounding op on a float output (integers are converted first, as `upgrade_to_float`
/// says). `math.floor` and `math.trunc` compile for f64 and f32 in IREE and are the
/// only rounding ops used (the others are built from them); float16 rounds in f32 (exact).
fn float_rounding(b: &mut Block, x: &Scalar, out: DType, op: fn(&mut Block, &Value) -> Value) -> Result<Value, String> {
    if !out.is_float() {
        return Err(format!("rounding to {out}"));
    }
    let x = convert(b, x, out).value;
    if out == DType::Float16 {
        let wide = b.cast(Cast::ExtF, &x, ScalarType::F32);
        let r = op(b, &wide);
        return Ok(b.cast(Cast::TruncF, &r, ScalarType::F16));
    }
    Ok(op(b, &x))
}

fn floor(b: &mut Block, x: &Value) -> Value {
    b.math(MathUnary::Floor, x)
}

/// `ceil(x) = -floor(-x)`: exact, with C's signs (ceil(-0.5) is -0.0).
fn ceil(b: &mut Block, x: &Value) -> Value {
    let minus_x = b.negf(x);
    let f = b.math(MathUnary::Floor, &minus_x);
    b.negf(&f)
}

/// PyTensor's C code is `x >= 0 ? floor(x) : -floor(-x)`: `trunc`.
fn trunc(b: &mut Block, x: &Value) -> Value {
    b.math(MathUnary::Trunc, x)
}

/// PyTensor's C code (after numpy's `npy_rint`): y = floor(x), r = x - y (exact); y + 1
/// where r > 1/2, y plus y's parity where r == 1/2. Negative values that round to zero
/// give +0.0 there (-1 + 1), unlike numpy's -0.0; infinities give r = nan and stay.
fn round_half_to_even(b: &mut Block, x: &Value) -> Value {
    let ty = x.scalar();
    let half = b.constant_f64(0.5, ty);
    let one = b.constant_f64(1.0, ty);
    let two = b.constant_f64(2.0, ty);
    let y = b.math(MathUnary::Floor, x);
    let r = b.arith(Arith::SubF, x, &y);
    let up = b.arith(Arith::AddF, &y, &one);
    let half_y = b.arith(Arith::MulF, &y, &half);
    let half_floor = b.math(MathUnary::Floor, &half_y);
    let twice = b.arith(Arith::MulF, &two, &half_floor);
    let parity = b.arith(Arith::SubF, &y, &twice);
    let to_even = b.arith(Arith::AddF, &y, &parity);
    let is_tie = b.cmpf(CmpF::Oeq, &r, &half);
    let res = b.select(&is_tie, &to_even, &y);
    let above = b.cmpf(CmpF::Ogt, &r, &half);
    b.select(&above, &up, &res)
}

/// C's `round`: t = trunc(x), then one step away from zero where |x - t| >= 1/2. The sign
/// of zero is x's (round(-0.3) is -0.0); infinities give nan differences and stay.
fn round_half_away_from_zero(b: &mut Block, x: &Value) -> Value {
    let ty = x.scalar();
    let half = b.constant_f64(0.5, ty);
    let one = b.constant_f64(1.0, ty);
    let t = b.math(MathUnary::Trunc, x);
    let d = b.arith(Arith::SubF, x, &t);
    let d = b.math(MathUnary::AbsF, &d);
    let step = b.copysign(&one, x);
    let away = b.arith(Arith::AddF, &t, &step);
    let far = b.cmpf(CmpF::Oge, &d, &half);
    b.select(&far, &away, &t)
}

/// `1 / x` at the float output dtype, rounded once (C computes `1.0 / x` in double and
/// rounds again for float32: the same but in rare halfway cases).
fn reciprocal(b: &mut Block, x: &Scalar, out: DType) -> Result<Value, String> {
    if !out.is_float() {
        return Err(format!("reciprocal to {out}"));
    }
    let x = convert(b, x, out).value;
    let one = b.constant_f64(1.0, x.scalar());
    Ok(b.arith(Arith::DivF, &one, &x))
}

/// `x * c` for deg2rad/rad2deg as C computes it: in double with c = M_PI / 180 (or its
/// inverse) rounded to double, then rounded to the output dtype. Targets without f64
/// math multiply in float32 by c rounded to float32.
fn scale_by_double(b: &mut Block, x: &Scalar, out: DType, c: f64) -> Result<Value, String> {
    if !out.is_float() {
        return Err(format!("deg2rad/rad2deg to {out}"));
    }
    let x = convert(b, x, out).value;
    let ty = x.scalar();
    if ty == ScalarType::F64 {
        let k = b.constant_f64(c, ty);
        return Ok(b.arith(Arith::MulF, &x, &k));
    }
    let wide_ty = if widen_f32() { ScalarType::F64 } else { ScalarType::F32 };
    let wide = if wide_ty == ty { x } else { b.cast(Cast::ExtF, &x, wide_ty) };
    let k = b.constant_f64(c, wide_ty);
    let r = b.arith(Arith::MulF, &wide, &k);
    Ok(if wide_ty == ty { r } else { b.cast(Cast::TruncF, &r, ty) })
}

/// A function of our own math library (`scalar_math`) at the float output dtype. float32
/// is computed with the f64 version and rounded once where the target has f64 math
/// (llvm-cpu, CUDA): nearly correctly rounded. Elsewhere (Vulkan, Metal) the f32 version
/// runs on the device's f32 exp and log. float16 goes through the wider of the two.
fn own_math(b: &mut Block, x: &Scalar, out: DType, f: fn(&mut Block, &Value) -> Value) -> Result<Value, String> {
    let (args, ty, work) = own_math_args(b, &[x], out)?;
    let r = float32_result(ty, work, || f(b, &args[0]));
    Ok(if work == ty { r } else { b.cast(Cast::TruncF, &r, ty) })
}

/// `own_math` for a function of two arguments (atan2), both converted to the output dtype.
fn own_math2(b: &mut Block, x: &Scalar, y: &Scalar, out: DType, f: fn(&mut Block, &Value, &Value) -> Value) -> Result<Value, String> {
    let (args, ty, work) = own_math_args(b, &[x, y], out)?;
    let r = float32_result(ty, work, || f(b, &args[0], &args[1]));
    Ok(if work == ty { r } else { b.cast(Cast::TruncF, &r, ty) })
}

/// `own_math` for a function of three arguments (betainc), all converted to the output dtype.
fn own_math3(
    b: &mut Block,
    xs: [&Scalar; 3],
    out: DType,
    f: fn(&mut Block, &Value, &Value, &Value) -> Value,
) -> Result<Value, String> {
    let (args, ty, work) = own_math_args(b, &xs, out)?;
    let r = float32_result(ty, work, || f(b, &args[0], &args[1], &args[2]));
    Ok(if work == ty { r } else { b.cast(Cast::TruncF, &r, ty) })
}

/// `own_math` for a function of four arguments (hyp2f1), all converted to the output dtype.
fn own_math4(
    b: &mut Block,
    xs: [&Scalar; 4],
    out: DType,
    f: fn(&mut Block, &Value, &Value, &Value, &Value) -> Value,
) -> Result<Value, String> {
    let (args, ty, work) = own_math_args(b, &xs, out)?;
    let r = float32_result(ty, work, || f(b, &args[0], &args[1], &args[2], &args[3]));
    Ok(if work == ty { r } else { b.cast(Cast::TruncF, &r, ty) })
}

/// `body` (an `own_math` function's code) told whether it computes in f64 for a float32
/// result (`scalar_math::float32_result`).
fn float32_result<T>(ty: ScalarType, work: ScalarType, body: impl FnOnce() -> T) -> T {
    scalar_math::with_float32_result(ty == ScalarType::F32 && work == ScalarType::F64, body)
}

/// The type an `own_math` function computes in for results of type `ty`.
fn work_type(ty: ScalarType) -> ScalarType {
    match ty {
        ScalarType::F64 => ScalarType::F64,
        _ if widen_this_f32() => ScalarType::F64,
        _ => ScalarType::F32,
    }
}

/// The arguments of an `own_math` function at the type it works in: (arguments, the
/// output's type, the working type).
fn own_math_args(b: &mut Block, xs: &[&Scalar], out: DType) -> Result<(Vec<Value>, ScalarType, ScalarType), String> {
    if !out.is_float() {
        return Err(format!("float function to {out}"));
    }
    let ty = scalar_type(out);
    let work = work_type(ty);
    let args = xs
        .iter()
        .map(|x| {
            let x = convert(b, x, out).value;
            if work == ty {
                x
            } else {
                b.cast(Cast::ExtF, &x, work)
            }
        })
        .collect();
    Ok((args, ty, work))
}

// ---------------------------------------------------------------------------------------
// Issue 3: special functions (lower/scalar_math/{erf,gamma}.rs).

#[cfg(test)]
mod special_function_tests {
    fn lower_elemwise(op: &str, dtype: &str, float64_math: bool) -> Result<crate::Lowered, crate::GraphError> {
        let json = format!(
            r#"{{"variables": [{{"type": {{"kind": "tensor", "dtype": "{dtype}", "shape": [null]}}, "name": "x"}},
                {{"type": {{"kind": "tensor", "dtype": "{dtype}", "shape": [null]}}, "name": null}}],
              "inputs": [0], "outputs": [1],
              "nodes": [{{"op": {{"type": "Elemwise", "props": {{"scalar_op": {{"$op": {{"type": "{op}", "props": {{}}}}}}}}}},
                          "inputs": [0], "outputs": [1]}}]}}"#
        );
        // Without llvm-cpu's native f32 functions (erf, erfc): CUDA's.
        crate::compile_export(&json, crate::ScalarTarget { float64_math, native_f32: false, scatter: true, ..crate::ScalarTarget::CPU })
    }

    /// Targets without f64 math (Vulkan, Metal) get the f32 versions: no f64 in the MLIR.
    #[test]
    fn special_functions_have_a_float32_formulation() {
        for op in ["Erf", "Erfc", "Erfcx", "Erfinv", "Erfcinv", "Gamma", "GammaLn", "Psi", "TriGamma", "I0", "I1", "J0", "J1"] {
            let lowered = lower_elemwise(op, "float32", false).unwrap_or_else(|e| panic!("{op}: {e}"));
            assert!(!lowered.mlir.contains("f64"), "{op} uses f64 on a target without f64 math");
            // With f64 math, float32 is computed in f64 and rounded once.
            let lowered = lower_elemwise(op, "float32", true).unwrap_or_else(|e| panic!("{op}: {e}"));
            assert!(lowered.mlir.contains("arith.extf") && lowered.mlir.contains("arith.truncf"), "{op} not in f64");
        }
    }

    /// The incomplete gamma functions and polygamma (two arguments; polygamma's first an
    /// integer) too.
    #[test]
    fn incomplete_gamma_and_polygamma_have_a_float32_formulation() {
        for (op, first) in [("GammaInc", "float32"), ("GammaIncC", "float32"), ("GammaL", "float32"), ("GammaU", "float32"), ("GammaIncInv", "float32"), ("GammaIncCInv", "float32"), ("PolyGamma", "int32")] {
            for float64_math in [false, true] {
                let json = format!(
                    r#"{{"variables": [{{"type": {{"kind": "tensor", "dtype": "{first}", "shape": [null]}}, "name": "a"}},
                        {{"type": {{"kind": "tensor", "dtype": "float32", "shape": [null]}}, "name": "x"}},
                        {{"type": {{"kind": "tensor", "dtype": "float32", "shape": [null]}}, "name": null}}],
                      "inputs": [0, 1], "outputs": [2],
                      "nodes": [{{"op": {{"type": "Elemwise", "props": {{"scalar_op": {{"$op": {{"type": "{op}", "props": {{}}}}}}}}}},
                                  "inputs": [0, 1], "outputs": [2]}}]}}"#
                );
                let lowered = crate::compile_export(&json, crate::ScalarTarget { float64_math, scatter: true, ..crate::ScalarTarget::CPU })
                    .unwrap_or_else(|e| panic!("{op}: {e}"));
                assert_eq!(lowered.mlir.contains("f64"), float64_math, "{op}: f64 only where the target has f64 math");
            }
        }
    }

    /// Owen's T (two float arguments) too.
    #[test]
    fn owens_t_has_a_float32_formulation() {
        for float64_math in [false, true] {
            let json = r#"{"variables": [{"type": {"kind": "tensor", "dtype": "float32", "shape": [null]}, "name": "h"},
                {"type": {"kind": "tensor", "dtype": "float32", "shape": [null]}, "name": "a"},
                {"type": {"kind": "tensor", "dtype": "float32", "shape": [null]}, "name": null}],
              "inputs": [0, 1], "outputs": [2],
              "nodes": [{"op": {"type": "Elemwise", "props": {"scalar_op": {"$op": {"type": "Owens_t", "props": {}}}}},
                          "inputs": [0, 1], "outputs": [2]}]}"#;
            let lowered = crate::compile_export(json, crate::ScalarTarget { float64_math, scatter: true, ..crate::ScalarTarget::CPU }).unwrap();
            assert_eq!(lowered.mlir.contains("f64"), float64_math, "f64 only where the target has f64 math");
        }
    }

    /// hyp2f1 (four arguments) too.
    #[test]
    fn hyp2f1_has_a_float32_formulation() {
        for float64_math in [false, true] {
            let var = r#"{"type": {"kind": "tensor", "dtype": "float32", "shape": [null]}, "name": null}"#;
            let json = format!(
                r#"{{"variables": [{var}, {var}, {var}, {var}, {var}], "inputs": [0, 1, 2, 3], "outputs": [4],
                  "nodes": [{{"op": {{"type": "Elemwise", "props": {{"scalar_op": {{"$op": {{"type": "Hyp2F1", "props": {{}}}}}}}}}},
                              "inputs": [0, 1, 2, 3], "outputs": [4]}}]}}"#
            );
            let lowered = crate::compile_export(&json, crate::ScalarTarget { float64_math, scatter: true, ..crate::ScalarTarget::CPU }).unwrap();
            assert_eq!(lowered.mlir.contains("f64"), float64_math, "f64 only where the target has f64 math");
        }
    }
}
// End of issue 3's special-function block.
