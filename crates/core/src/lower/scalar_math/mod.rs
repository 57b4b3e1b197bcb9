//! Our own scalar math library: the functions IREE's `math` dialect lowering lacks or
//! computes inaccurately (measured in ../shared/FACTS.md), written as scalar MLIR through
//! the builder so the kernels that use them stay vectorized. One module per family, each
//! with float32 and float64 variants; `scalar.rs` calls them from its per-op rules.

pub mod bessel;
mod bessel_debye;
pub mod bessel_jv;
pub mod bessel_real;
pub mod beta;
pub mod beta_inv;
pub mod erf;
pub mod exp_log;
mod exp_log_f32;
pub mod gamma;
pub mod hyp2f1;
pub mod incomplete_gamma;
pub mod incomplete_gamma_inv;
mod newton;
pub mod owens_t;
pub mod polygamma;
pub mod trig;

use crate::mlir::{Arith, Block, Cast, CmpF, MathUnary, ScalarType, Value};

/// One stage of a function computed as a sequence of kernels (elemwise.rs gives each
/// stage of a bare `Elemwise` its own `linalg.generic`, reading the values the stage before
/// yields through `tensor.extract`, which IREE does not fuse into one body). What it is
/// for: a loop anywhere in a kernel leaves all of it scalar code, so a root finder's start
/// and first steps (straight-line, 8 f64 lanes at once on AVX-512) are one stage, its loop
/// for the lanes still unsettled another, and what follows a third.
pub struct Stage {
    /// How many values it yields: the next stage's `carried` (the last stage's one value
    /// is the result).
    pub yields: usize,
    /// (block, the function's arguments, the previous stage's values) -> its values.
    pub run: fn(&mut Block, &[Value], &[Value]) -> Vec<Value>,
}

/// All of `stages` in one kernel (a staged function inside a `Composite`): the result.
pub fn run_stages(b: &mut Block, stages: &[Stage], args: &[Value]) -> Value {
    let mut carried = Vec::new();
    for stage in stages {
        carried = (stage.run)(b, args, &carried);
        debug_assert_eq!(carried.len(), stage.yields);
    }
    carried.pop().expect("a stage list ends with the result")
}

thread_local! {
    /// Whether the function being emitted computes in f64 for a float32 result (scalar.rs
    /// widens float32 where the target has f64 math): its loops then need to stop only
    /// well below float32's half ulp, not at f64's last bit (`F::tolerance`).
    static FLOAT32_RESULT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `body` with `FLOAT32_RESULT` set to `on`.
pub fn with_float32_result<T>(on: bool, body: impl FnOnce() -> T) -> T {
    let previous = FLOAT32_RESULT.with(|c| c.replace(on));
    let r = body();
    FLOAT32_RESULT.with(|c| c.set(previous));
    r
}

/// A loop's relative stopping tolerance where f64 code serves a float32 result: an error
/// of 1e-10 moves the rounded result by 0.002 of its ulp at most.
pub const FLOAT32_RESULT_TOLERANCE: f64 = 1e-10;

/// A constant per float type: (f64 value, f32 value).
pub type PerType = (f64, f64);

/// Scalar code on one float type, with short names for the ops these formulas use.
pub struct F<'a> {
    pub b: &'a mut Block,
    pub ty: ScalarType,
}

impl<'a> F<'a> {
    pub fn new(b: &'a mut Block, x: &Value) -> F<'a> {
        let ty = x.scalar();
        assert!(matches!(ty, ScalarType::F32 | ScalarType::F64), "scalar math on {ty}");
        F { b, ty }
    }
    pub fn f64(&self) -> bool {
        self.ty == ScalarType::F64
    }
    /// A constant whose value is the same number in both types (or rounds acceptably).
    pub fn c(&mut self, v: f64) -> Value {
        self.b.constant_f64(v, self.ty)
    }
    /// A constant with a value per type.
    pub fn k(&mut self, v: PerType) -> Value {
        let v = if self.f64() { v.0 } else { v.1 };
        self.b.constant_f64(v, self.ty)
    }
    /// A loop's stopping tolerance per type (`v`), or FLOAT32_RESULT_TOLERANCE where this
    /// f64 code computes a float32 result.
    pub fn tolerance(&mut self, v: PerType) -> Value {
        if self.f64() && FLOAT32_RESULT.with(|c| c.get()) {
            return self.c(FLOAT32_RESULT_TOLERANCE);
        }
        self.k(v)
    }
    /// Whether this f64 code computes a float32 result (see `FLOAT32_RESULT`).
    pub fn for_float32(&self) -> bool {
        self.f64() && FLOAT32_RESULT.with(|c| c.get())
    }
    /// A threshold per type.
    pub fn t(&mut self, f64_value: f64, f32_value: f64) -> Value {
        self.k((f64_value, f32_value))
    }
    pub fn add(&mut self, a: &Value, c: &Value) -> Value {
        self.b.arith(Arith::AddF, a, c)
    }
    pub fn sub(&mut self, a: &Value, c: &Value) -> Value {
        self.b.arith(Arith::SubF, a, c)
    }
    pub fn mul(&mut self, a: &Value, c: &Value) -> Value {
        self.b.arith(Arith::MulF, a, c)
    }
    pub fn div(&mut self, a: &Value, c: &Value) -> Value {
        self.b.arith(Arith::DivF, a, c)
    }
    pub fn neg(&mut self, a: &Value) -> Value {
        self.b.negf(a)
    }
    pub fn fma(&mut self, a: &Value, c: &Value, d: &Value) -> Value {
        self.b.fma(a, c, d)
    }
    pub fn abs(&mut self, a: &Value) -> Value {
        self.b.math(MathUnary::AbsF, a)
    }
    /// e^a, ours: in f64 because IREE's f64 exp is a scalar call per element on
    /// llvm-cpu, in f32 because IREE's flushes subnormals and is 2 ULP off.
    pub fn exp(&mut self, a: &Value) -> Value {
        if self.f64() {
            return exp_log::exp_own(self, a);
        }
        exp_log_f32::exp(self, a)
    }
    /// log(a), ours in both types (as `exp`).
    pub fn log(&mut self, a: &Value) -> Value {
        if self.f64() {
            return exp_log::log_own(self, a);
        }
        exp_log_f32::log(self, a)
    }
    /// In f32: (x, or 0 where |x| < limit; the lanes where it is), for functions that
    /// equal x there to the last bit and select x back. Their formulas' products of tiny x
    /// are subnormal in f32 (never in f64, where f32 data was computed before), and x86
    /// takes about 100 cycles an op on those: tanh of 1e-19..1e-6 ran 2.7x slower than of
    /// 1e-3..1. In f64 (None) nothing changes.
    pub fn tame_tiny(&mut self, x: &Value, limit: f64) -> Option<(Value, Value)> {
        if self.f64() {
            return None;
        }
        let a = self.abs(x);
        let l = self.c(limit);
        let tiny = self.cmp(CmpF::Olt, &a, &l);
        let zero = self.c(0.0);
        Some((self.sel(&tiny, &zero, x), tiny))
    }
    pub fn sqrt(&mut self, a: &Value) -> Value {
        self.b.math(MathUnary::Sqrt, a)
    }
    pub fn copysign(&mut self, a: &Value, sign: &Value) -> Value {
        self.b.copysign(a, sign)
    }
    pub fn cmp(&mut self, p: CmpF, a: &Value, c: &Value) -> Value {
        self.b.cmpf(p, a, c)
    }
    pub fn sel(&mut self, cond: &Value, a: &Value, c: &Value) -> Value {
        self.b.select(cond, a, c)
    }
    /// The lanes where both masks hold.
    pub fn and(&mut self, a: &Value, c: &Value) -> Value {
        self.b.arith(Arith::AndI, a, c)
    }
    /// The lanes where either mask holds.
    pub fn or(&mut self, a: &Value, c: &Value) -> Value {
        self.b.arith(Arith::OrI, a, c)
    }
    /// The lanes where the mask does not hold.
    pub fn not(&mut self, a: &Value) -> Value {
        let t = self.b.constant_int(1, ScalarType::I1);
        self.b.arith(Arith::XOrI, a, &t)
    }
    /// The lanes where every mask holds.
    pub fn all(&mut self, masks: &[&Value]) -> Value {
        let (first, rest) = masks.split_first().expect("at least one mask");
        rest.iter().fold((*first).clone(), |acc, m| self.and(&acc, m))
    }
    /// lo < x < hi (false on nan): the open interval a regular argument lies in.
    pub fn inside(&mut self, x: &Value, lo: f64, hi: f64) -> Value {
        let lo = self.c(lo);
        let hi = self.c(hi);
        let above = self.cmp(CmpF::Ogt, x, &lo);
        let below = self.cmp(CmpF::Olt, x, &hi);
        self.and(&above, &below)
    }
    /// `r`, or `x` itself where `x` is nan (for formulas whose range tests are false on nan
    /// and would otherwise pick a finite branch).
    pub fn keep_nan(&mut self, x: &Value, r: &Value) -> Value {
        let nan = self.cmp(CmpF::Uno, x, x);
        self.sel(&nan, x, r)
    }
    /// `a * c` for a split constant c = hi + lo, to about twice the working precision, as
    /// (high part, low part).
    pub fn mul_split(&mut self, a: &Value, hi: PerType, lo: PerType) -> (Value, Value) {
        let hi = self.k(hi);
        let lo = self.k(lo);
        let p = self.mul(a, &hi);
        let minus_p = self.neg(&p);
        let err = self.fma(a, &hi, &minus_p);
        let low = self.fma(a, &lo, &err);
        (p, low)
    }
    /// `v * 2^k` for an integer-valued float `k` (|k| within twice the exponent range):
    /// two exact factors 2^(k/2) and 2^(k - k/2), each a normal number, so the product
    /// rounds once and only where it overflows or is subnormal.
    pub fn ldexp(&mut self, v: &Value, k: &Value) -> Value {
        let (ity, fraction_bits, bias) = if self.f64() { (ScalarType::I64, 52, 1023) } else { (ScalarType::I32, 23, 127) };
        let ki = self.b.cast(Cast::FPToSI, k, ity);
        let two = self.b.constant_int(2, ity);
        let k1 = self.b.arith(Arith::DivSI, &ki, &two);
        let k2 = self.b.arith(Arith::SubI, &ki, &k1);
        let bias = self.b.constant_int(bias, ity);
        let width = self.b.constant_int(fraction_bits, ity);
        let mut r = v.clone();
        for part in [k1, k2] {
            let biased = self.b.arith(Arith::AddI, &part, &bias);
            let bits = self.b.shli(&biased, &width);
            let p = self.b.cast(Cast::Bitcast, &bits, self.ty);
            r = self.mul(&r, &p);
        }
        r
    }
    pub fn floor(&mut self, a: &Value) -> Value {
        self.b.math(MathUnary::Floor, a)
    }
    /// The nearest integer to `a` (halves up), as a float.
    pub fn round(&mut self, a: &Value) -> Value {
        let half = self.c(0.5);
        let s = self.add(a, &half);
        self.floor(&s)
    }
    /// Knuth's TwoSum: (s, e) with s = a + c rounded and s + e = a + c exactly.
    pub fn two_sum(&mut self, a: &Value, c: &Value) -> (Value, Value) {
        let s = self.add(a, c);
        let cc = self.sub(&s, a);
        let aa = self.sub(&s, &cc);
        let ea = self.sub(a, &aa);
        let ec = self.sub(c, &cc);
        let e = self.add(&ea, &ec);
        (s, e)
    }
    /// (n + n_lo) / (d + d_lo) as (q, q_lo), q = n / d rounded and q_lo from the
    /// division's remainder by FMA (n - q d exact), to first order in the low parts;
    /// `n_lo` None: n alone (no + 0 that would turn -0 into +0).
    pub fn div_double(&mut self, n: &Value, n_lo: Option<&Value>, d: &Value, d_lo: &Value) -> (Value, Value) {
        let q = self.div(n, d);
        let minus_q = self.neg(&q);
        let rem = self.fma(&minus_q, d, n);
        let rem = self.fma(&minus_q, d_lo, &rem);
        let rem = match n_lo {
            Some(n_lo) => self.add(&rem, n_lo),
            None => rem,
        };
        let q_lo = self.div(&rem, d);
        (q, q_lo)
    }
    /// A two-double result's low part, 0 where its high part is not finite (past overflow
    /// the low part is an inf - inf nan, which must not reach a sum).
    pub fn finite_lo(&mut self, hi: &Value, lo: &Value) -> Value {
        let inf = self.c(f64::INFINITY);
        let ahi = self.abs(hi);
        let finite = self.cmp(CmpF::Olt, &ahi, &inf);
        let zero = self.c(0.0);
        self.sel(&finite, lo, &zero)
    }
    /// Dekker's Fast2Sum, for |a| >= |c| (or a == 0): (s, e) with s + e = a + c exactly.
    pub fn fast_two_sum(&mut self, a: &Value, c: &Value) -> (Value, Value) {
        let s = self.add(a, c);
        let cc = self.sub(&s, a);
        let e = self.sub(c, &cc);
        (s, e)
    }
    /// (p, e) with p = a * c rounded and p + e = a * c exactly, barring underflow (and,
    /// in f32, overflow past 1e34). f64 uses one FMA (llvm-cpu's is always fused), f32 on
    /// llvm-cpu too. Elsewhere f32 is what Vulkan and Metal run, whose SPIR-V `Fma` need not be fused (lavapipe's is
    /// not: the f32 reduction lost its exactness), so there it is Dekker's product:
    /// Veltkamp's split of each factor into 12-bit halves, whose partial products are
    /// exact, using only rounded `*`, `+`, `-`.
    pub fn two_prod(&mut self, a: &Value, c: &Value) -> (Value, Value) {
        let p = self.mul(a, c);
        // llvm-cpu's f32 FMA is fused too (and the 17 ops of Dekker's product made the
        // native f32 functions slower than f64's).
        if self.f64() || crate::lower::scalar::fused_f32_fma() {
            let minus_p = self.neg(&p);
            let e = self.fma(a, c, &minus_p);
            return (p, e);
        }
        let (ah, al) = self.split(a);
        let (ch, cl) = self.split(c);
        let hh = self.mul(&ah, &ch);
        let e = self.sub(&hh, &p);
        let hl = self.mul(&ah, &cl);
        let e = self.add(&e, &hl);
        let lh = self.mul(&al, &ch);
        let e = self.add(&e, &lh);
        let ll = self.mul(&al, &cl);
        let e = self.add(&e, &ll);
        (p, e)
    }
    /// Veltkamp's split of an f32 into a high half of 12 bits and the rest.
    fn split(&mut self, a: &Value) -> (Value, Value) {
        let k = self.c(4097.0);
        let g = self.mul(&k, a);
        let d = self.sub(&g, a);
        let h = self.sub(&g, &d);
        let l = self.sub(a, &h);
        (h, l)
    }
    /// The polynomial c[0] + c[1] t + ... by Horner's rule, with the coefficients of
    /// this type (`c64` or `c32`).
    pub fn poly(&mut self, t: &Value, c64: &[f64], c32: &[f64]) -> Value {
        let c = if self.f64() { c64 } else { c32 };
        let mut p = self.c(c[c.len() - 1]);
        for &k in c[..c.len() - 1].iter().rev() {
            let k = self.c(k);
            p = self.fma(&p, t, &k);
        }
        p
    }
}
