//! Each distribution's draw from a draw's random words (`Source`) and its parameters:
//! inverse CDFs and other straight-line transforms of uniforms, and bounded rejection
//! loops (gamma, Poisson) for the rest. Arithmetic in the work type (the output's float
//! type; f64 for integer outputs), the math by this backend's accurate scalar lowerings.

use super::philox::Source;
use crate::dtype::DType;
use crate::ir::random::Distribution;
use crate::ir::ScalarOp;
use crate::lower::scalar::{self, Flags, Scalar};
use crate::mlir::{Arith, Block, Cast, CmpF, CmpI, MathUnary, ScalarType, Value};
use std::cell::RefCell;

/// Attempts of a gamma draw's rejection loop: Marsaglia and Tsang's method accepts with
/// probability above 0.95 for every shape, so 16 all fail with probability below 1e-20.
const GAMMA_ATTEMPTS: u32 = 16;
/// Blocks one gamma draw may read: its boost's, then two per attempt.
const GAMMA_BLOCKS: u32 = 1 + 2 * GAMMA_ATTEMPTS;
/// Below this mean a Poisson draw multiplies uniforms (Knuth), one per step; at most this
/// many steps (a count past 200 has probability below 1e-180 there).
const POISSON_SMALL: f64 = 10.0;
const POISSON_STEPS: u32 = 200;
/// Attempts of the PTRS loop (Hoermann 1993: acceptance above 0.9).
const PTRS_ATTEMPTS: u32 = 64;

/// Scalar math in the work type; the first lowering error is kept for `finish`.
pub struct Math {
    pub work: DType,
    error: RefCell<Option<String>>,
}

impl Math {
    pub fn new(work: DType) -> Math {
        Math { work, error: RefCell::new(None) }
    }

    pub fn c(&self, g: &mut Block, x: f64) -> Value {
        g.constant_f64(x, scalar::scalar_type(self.work))
    }

    /// `op(x)` by the scalar lowering.
    pub fn f(&self, g: &mut Block, op: ScalarOp, x: &Value) -> Value {
        match scalar::lower(g, &op, &[Scalar { value: x.clone(), dtype: self.work }], &[self.work], &mut Flags::default()) {
            Ok(r) => r[0].value.clone(),
            Err(e) => {
                self.error.borrow_mut().get_or_insert(e);
                x.clone()
            }
        }
    }

    pub fn finish(self) -> Result<(), String> {
        self.error.into_inner().map_or(Ok(()), Err)
    }
}

fn add(g: &mut Block, a: &Value, b: &Value) -> Value {
    g.arith(Arith::AddF, a, b)
}
fn sub(g: &mut Block, a: &Value, b: &Value) -> Value {
    g.arith(Arith::SubF, a, b)
}
fn mul(g: &mut Block, a: &Value, b: &Value) -> Value {
    g.arith(Arith::MulF, a, b)
}
fn div(g: &mut Block, a: &Value, b: &Value) -> Value {
    g.arith(Arith::DivF, a, b)
}

/// `u` moved into (0, 1): the middle of the interval it stands for, for the transforms
/// that take the log of u or of 1 - u.
fn open(g: &mut Block, m: &Math, u: &Value) -> Value {
    let half_step = m.c(g, if m.work == DType::Float32 { 2f64.powi(-25) } else { 2f64.powi(-54) });
    add(g, u, &half_step)
}

/// loc + scale x
fn loc_scale(g: &mut Block, loc: &Value, scale: &Value, x: &Value) -> Value {
    let s = mul(g, scale, x);
    add(g, loc, &s)
}

/// -log(1 - u): a standard exponential.
fn exponential(g: &mut Block, m: &Math, u: &Value) -> Value {
    let neg = g.negf(u);
    let l = m.f(g, ScalarOp::Log1p, &neg);
    g.negf(&l)
}

/// A standard normal by Box-Muller: sqrt(-2 log(1 - u)) cos(2 pi v), 1 - u in (0, 1].
fn normal(g: &mut Block, m: &Math, [u, v]: &[Value; 2]) -> Value {
    let one = m.c(g, 1.0);
    let w = sub(g, &one, u);
    let l = m.f(g, ScalarOp::Log, &w);
    let m2 = m.c(g, -2.0);
    let r2 = mul(g, &m2, &l);
    let r = m.f(g, ScalarOp::Sqrt, &r2);
    let tau = m.c(g, std::f64::consts::TAU);
    let a = mul(g, &tau, v);
    let cos = m.f(g, ScalarOp::Cos, &a);
    mul(g, &r, &cos)
}

fn i32_const(g: &mut Block, v: u32) -> Value {
    g.constant_int(v as i64, ScalarType::I32)
}

/// A bounded rejection loop: `attempt(g, j)` gives (accepted, value) for attempt j (an
/// i32); the first accepted value, NaN where none of `attempts` is (NaN parameters).
fn rejection(g: &mut Block, m: &Math, attempts: u32, attempt: impl FnOnce(&mut Block, &Value) -> (Value, Value)) -> Value {
    let zero = i32_const(g, 0);
    let no = g.constant_int(0, ScalarType::I1);
    let nan = m.c(g, f64::NAN);
    let r = g.scf_while(
        &[zero, no, nan],
        |c, s| {
            let limit = i32_const(c, attempts);
            let more = c.cmpi(CmpI::Slt, &s[0], &limit);
            let yes = c.constant_int(1, ScalarType::I1);
            let open = c.arith(Arith::XOrI, &s[1], &yes);
            c.arith(Arith::AndI, &more, &open)
        },
        |bd, s| {
            let (accepted, value) = attempt(bd, &s[0]);
            let x = bd.select(&accepted, &value, &s[2]);
            let one = i32_const(bd, 1);
            vec![bd.arith(Arith::AddI, &s[0], &one), accepted, x]
        },
    );
    r[2].clone()
}

/// Block `base + step * j + offset` (i32) for attempt j.
fn block_of(g: &mut Block, base: u32, step: u32, offset: u32, j: &Value) -> Value {
    let s = i32_const(g, step);
    let o = i32_const(g, base + offset);
    let x = g.arith(Arith::MulI, j, &s);
    g.arith(Arith::AddI, &x, &o)
}

/// A standard gamma draw of shape `a`, reading blocks `base .. base + GAMMA_BLOCKS`:
/// Marsaglia and Tsang's method ("A simple method for generating gamma variables", 2000)
/// for shape a, or a + 1 boosted by u^(1/a) where a < 1. Returns the draw of the (raised)
/// shape and the log of the boost (0 where there is none), apart, so that a beta of small
/// shapes can work in logs without underflow.
fn standard_gamma_parts(g: &mut Block, m: &Math, src: &Source, a: &Value, base: u32) -> (Value, Value) {
    let work = m.work;
    let t = scalar::scalar_type(work);
    let one = m.c(g, 1.0);
    let small = g.cmpf(CmpF::Olt, a, &one);
    let a1 = add(g, a, &one);
    let shape = g.select(&small, &a1, a);
    let third = m.c(g, 1.0 / 3.0);
    let d = sub(g, &shape, &third);
    let nine = m.c(g, 9.0);
    let nine_d = mul(g, &nine, &d);
    let root = m.f(g, ScalarOp::Sqrt, &nine_d);
    let c = div(g, &one, &root);
    let dv = rejection(g, m, GAMMA_ATTEMPTS, |g, j| {
        let b1 = block_of(g, base, 2, 1, j);
        let uv = src.uniforms(g, &b1, work);
        let z = normal(g, m, &uv);
        let b2 = block_of(g, base, 2, 2, j);
        let [w, _] = src.uniforms(g, &b2, work);
        let one = m.c(g, 1.0);
        let cz = mul(g, &c, &z);
        let t1 = add(g, &one, &cz);
        let t2 = mul(g, &t1, &t1);
        let v = mul(g, &t2, &t1);
        let zero = m.c(g, 0.0);
        let positive = g.cmpf(CmpF::Ogt, &v, &zero);
        let dv = mul(g, &d, &v);
        // The squeeze w < 1 - 0.0331 z^4 accepts most attempts without a log.
        let z2 = mul(g, &z, &z);
        let z4 = mul(g, &z2, &z2);
        let k = m.c(g, 0.0331);
        let q = mul(g, &k, &z4);
        let squeeze = sub(g, &one, &q);
        let inside = g.cmpf(CmpF::Olt, &w, &squeeze);
        let accepted = g.scf_if(
            &inside,
            &[ScalarType::I1],
            |y| vec![y.constant_int(1, ScalarType::I1)],
            |n| {
                // log(w) < z^2 / 2 + d - d v + d log(v)
                let half = m.c(n, 0.5);
                let hz2 = mul(n, &half, &z2);
                let lv = m.f(n, ScalarOp::Log, &v);
                let dlv = mul(n, &d, &lv);
                let r = add(n, &hz2, &d);
                let r = sub(n, &r, &dv);
                let r = add(n, &r, &dlv);
                let lw = m.f(n, ScalarOp::Log, &w);
                vec![n.cmpf(CmpF::Olt, &lw, &r)]
            },
        );
        (g.arith(Arith::AndI, &positive, &accepted[0]), dv)
    });
    let boost_log = g
        .scf_if(
            &small,
            &[t],
            |y| {
                let [u0, _] = src.uniforms_at(y, base, work);
                let u0 = open(y, m, &u0);
                let lu = m.f(y, ScalarOp::Log, &u0);
                vec![div(y, &lu, a)]
            },
            |n| vec![m.c(n, 0.0)],
        )
        .remove(0);
    // An infinite shape: numpy's infinity (the loop's d - d v is NaN there).
    let inf = m.c(g, f64::INFINITY);
    let infinite = g.cmpf(CmpF::Oeq, a, &inf);
    (g.select(&infinite, &inf, &dv), boost_log)
}

/// A standard gamma draw of shape `a` (see `standard_gamma_parts`).
fn standard_gamma(g: &mut Block, m: &Math, src: &Source, a: &Value, base: u32) -> Value {
    let (x, boost_log) = standard_gamma_parts(g, m, src, a, base);
    let boost = m.f(g, ScalarOp::Exp, &boost_log);
    mul(g, &x, &boost)
}

/// A beta draw: X / (X + Y) = 1 / (1 + exp(log Y - log X)) for gammas X, Y of shapes a,
/// b (blocks 0 .. 2 GAMMA_BLOCKS), in logs so that small shapes do not underflow.
fn beta(g: &mut Block, m: &Math, src: &Source, a: &Value, b: &Value) -> Value {
    let lx = log_standard_gamma(g, m, src, a, 0);
    let ly = log_standard_gamma(g, m, src, b, GAMMA_BLOCKS);
    let d = sub(g, &ly, &lx);
    let e = m.f(g, ScalarOp::Exp, &d);
    let one = m.c(g, 1.0);
    let den = add(g, &one, &e);
    let x = div(g, &one, &den);
    // numpy's X / (X + Y) is inf / inf where a is infinite.
    let (inf, nan) = (m.c(g, f64::INFINITY), m.c(g, f64::NAN));
    let infinite = g.cmpf(CmpF::Oeq, a, &inf);
    g.select(&infinite, &nan, &x)
}

/// The log of a standard gamma draw of shape `a`.
fn log_standard_gamma(g: &mut Block, m: &Math, src: &Source, a: &Value, base: u32) -> Value {
    let (x, boost_log) = standard_gamma_parts(g, m, src, a, base);
    let lx = m.f(g, ScalarOp::Log, &x);
    add(g, &lx, &boost_log)
}

/// The candidate of attempt `j` (i32) of Hoermann's transformed rejection (PTRS, BTRS),
/// from block `base + j`'s uniforms u, v: (us, v, k) with us = 1/2 - |u - 1/2| and
/// k = floor((2 a / us + b) (u - 1/2) + shift).
#[allow(clippy::too_many_arguments)]
fn transformed_candidate(g: &mut Block, m: &Math, src: &Source, base: u32, j: &Value, a: &Value, b: &Value, shift: &Value) -> (Value, Value, Value) {
    let blk = block_of(g, base, 1, 0, j);
    let [u, v] = src.uniforms(g, &blk, m.work);
    let half = m.c(g, 0.5);
    let uc = sub(g, &u, &half);
    let au = g.math(MathUnary::AbsF, &uc);
    let us = sub(g, &half, &au);
    let two = m.c(g, 2.0);
    let ta = mul(g, &two, a);
    let x = div(g, &ta, &us);
    let x = add(g, &x, b);
    let x = mul(g, &x, &uc);
    let x = add(g, &x, shift);
    (us, v, g.math(MathUnary::Floor, &x))
}

/// A Poisson draw of mean `lam` (f64), as a float, from blocks `base ..`: Knuth's product
/// of uniforms below `POISSON_SMALL`, Hoermann's PTRS ("The transformed rejection method
/// for generating Poisson random variables", 1993) above.
fn poisson(g: &mut Block, m: &Math, src: &Source, lam: &Value, base: u32) -> Value {
    let work = m.work;
    let t = scalar::scalar_type(work);
    let small_limit = m.c(g, POISSON_SMALL);
    let small = g.cmpf(CmpF::Olt, lam, &small_limit);
    g.scf_if(
        &small,
        &[t],
        |s| {
            // Count the uniforms multiplied while the product stays above exp(-lam).
            let neg = s.negf(lam);
            let limit = m.f(s, ScalarOp::Exp, &neg);
            let (zero, one) = (i32_const(s, 0), m.c(s, 1.0));
            let count = m.c(s, 0.0);
            let r = s.scf_while(
                &[zero, one, count],
                |c, st| {
                    let steps = i32_const(c, POISSON_STEPS);
                    let more = c.cmpi(CmpI::Slt, &st[0], &steps);
                    let above = c.cmpf(CmpF::Ogt, &st[1], &limit);
                    c.arith(Arith::AndI, &more, &above)
                },
                |bd, st| {
                    let blk = block_of(bd, base, 1, 0, &st[0]);
                    let [u, _] = src.uniforms(bd, &blk, work);
                    let prod = mul(bd, &st[1], &u);
                    let above = bd.cmpf(CmpF::Ogt, &prod, &limit);
                    let (one, zero) = (m.c(bd, 1.0), m.c(bd, 0.0));
                    let inc = bd.select(&above, &one, &zero);
                    let k = add(bd, &st[2], &inc);
                    let step = i32_const(bd, 1);
                    vec![bd.arith(Arith::AddI, &st[0], &step), prod, k]
                },
            );
            vec![r[2].clone()]
        },
        |l| {
            let slam = m.f(l, ScalarOp::Sqrt, lam);
            let loglam = m.f(l, ScalarOp::Log, lam);
            let c = |l: &mut Block, x: f64| m.c(l, x);
            let (k0931, k253) = (c(l, 0.931), c(l, 2.53));
            let b = mul(l, &k253, &slam);
            let b = add(l, &k0931, &b);
            let (k0059, k02483) = (c(l, -0.059), c(l, 0.02483));
            let a = mul(l, &k02483, &b);
            let a = add(l, &k0059, &a);
            let (k11239, k11328, k34) = (c(l, 1.1239), c(l, 1.1328), c(l, 3.4));
            let bm = sub(l, &b, &k34);
            let q = div(l, &k11328, &bm);
            let inv_alpha = add(l, &k11239, &q);
            let (k09277, k36224, two) = (c(l, 0.9277), c(l, 3.6224), c(l, 2.0));
            let bm2 = sub(l, &b, &two);
            let q = div(l, &k36224, &bm2);
            let vr = sub(l, &k09277, &q);
            let log_inv_alpha = m.f(l, ScalarOp::Log, &inv_alpha);
            let k043 = c(l, 0.43);
            let shift = add(l, lam, &k043);
            let k = rejection(l, m, PTRS_ATTEMPTS, |g, j| {
                let (us, v, k) = transformed_candidate(g, m, src, base, j, &a, &b, &shift);
                let (k007, k0013, zero) = (m.c(g, 0.07), m.c(g, 0.013), m.c(g, 0.0));
                let wide = g.cmpf(CmpF::Oge, &us, &k007);
                let low_v = g.cmpf(CmpF::Ole, &v, &vr);
                let quick = g.arith(Arith::AndI, &wide, &low_v);
                let negative = g.cmpf(CmpF::Olt, &k, &zero);
                let narrow = g.cmpf(CmpF::Olt, &us, &k0013);
                let high_v = g.cmpf(CmpF::Ogt, &v, &us);
                let tail = g.arith(Arith::AndI, &narrow, &high_v);
                let reject = g.arith(Arith::OrI, &negative, &tail);
                // log(v) + log(inv_alpha) - log(a / us^2 + b) <= -lam + k log(lam) - lgamma(k + 1)
                let lv = m.f(g, ScalarOp::Log, &v);
                let us2 = mul(g, &us, &us);
                let q = div(g, &a, &us2);
                let q = add(g, &q, &b);
                let lq = m.f(g, ScalarOp::Log, &q);
                let lhs = add(g, &lv, &log_inv_alpha);
                let lhs = sub(g, &lhs, &lq);
                let one = m.c(g, 1.0);
                let k1 = add(g, &k, &one);
                let lg = m.f(g, ScalarOp::GammaLn, &k1);
                let kl = mul(g, &k, &loglam);
                let rhs = sub(g, &kl, lam);
                let rhs = sub(g, &rhs, &lg);
                let fits = g.cmpf(CmpF::Ole, &lhs, &rhs);
                let yes = g.constant_int(1, ScalarType::I1);
                let keep = g.arith(Arith::XOrI, &reject, &yes);
                let slow = g.arith(Arith::AndI, &keep, &fits);
                (g.arith(Arith::OrI, &quick, &slow), k)
            });
            vec![k]
        },
    )
    .remove(0)
}

/// Below this mean (n min(p, 1 - p)) a binomial draw inverts the CDF step by step.
const BINOMIAL_SMALL: f64 = 10.0;
/// Steps of that inversion (a count past 200 has probability below 1e-100 there).
const BINOMIAL_STEPS: u32 = 200;
/// Attempts of the BTRS loop (acceptance above 0.9).
const BTRS_ATTEMPTS: u32 = 64;

/// A binomial draw of `n` trials (f64) of probability `p`, as a float, from blocks
/// `base ..`: for p' = min(p, 1 - p), the CDF inverted term by term (each pmf from the
/// last) where n p' is small, else Hoermann's BTRS ("The generation of binomial random
/// variates", 1993); n minus the draw where p > 1/2.
pub(super) fn binomial(g: &mut Block, m: &Math, src: &Source, n: &Value, p: &Value, base: u32) -> Value {
    let work = m.work;
    let t = scalar::scalar_type(work);
    let (half, one) = (m.c(g, 0.5), m.c(g, 1.0));
    let flip = g.cmpf(CmpF::Ogt, p, &half);
    let q1 = sub(g, &one, p);
    let pp = g.select(&flip, &q1, p);
    let q = sub(g, &one, &pp);
    let mean = mul(g, n, &pp);
    let small_limit = m.c(g, BINOMIAL_SMALL);
    let small = g.cmpf(CmpF::Olt, &mean, &small_limit);
    let k = g
        .scf_if(
            &small,
            &[t],
            |s| {
                // u -= pmf(x) while u > pmf(x); pmf(x + 1) = pmf(x) ((n + 1) r / (x + 1) - r), r = p / q.
                let r = div(s, &pp, &q);
                let one = m.c(s, 1.0);
                let n1 = add(s, n, &one);
                let a = mul(s, &n1, &r);
                let npp = s.negf(&pp);
                let lq = m.f(s, ScalarOp::Log1p, &npp);
                let nlq = mul(s, n, &lq);
                let pmf0 = m.f(s, ScalarOp::Exp, &nlq);
                let [u, _] = src.uniforms_at(s, base, work);
                let (zero_i, zero) = (i32_const(s, 0), m.c(s, 0.0));
                let out = s.scf_while(
                    &[zero_i, u, zero, pmf0],
                    |c, st| {
                        let steps = i32_const(c, BINOMIAL_STEPS);
                        let more = c.cmpi(CmpI::Slt, &st[0], &steps);
                        let above = c.cmpf(CmpF::Ogt, &st[1], &st[3]);
                        let below_n = c.cmpf(CmpF::Olt, &st[2], n);
                        let go = c.arith(Arith::AndI, &more, &above);
                        c.arith(Arith::AndI, &go, &below_n)
                    },
                    |bd, st| {
                        let u = sub(bd, &st[1], &st[3]);
                        let one = m.c(bd, 1.0);
                        let x = add(bd, &st[2], &one);
                        let ax = div(bd, &a, &x);
                        let f = sub(bd, &ax, &r);
                        let pmf = mul(bd, &st[3], &f);
                        let step = i32_const(bd, 1);
                        vec![bd.arith(Arith::AddI, &st[0], &step), u, x, pmf]
                    },
                );
                vec![out[2].clone()]
            },
            |l| {
                let c = |l: &mut Block, x: f64| m.c(l, x);
                let npq = mul(l, &mean, &q);
                let spq = m.f(l, ScalarOp::Sqrt, &npq);
                let (k115, k253) = (c(l, 1.15), c(l, 2.53));
                let b = mul(l, &k253, &spq);
                let b = add(l, &k115, &b);
                let (k0873, k0248, k001) = (c(l, -0.0873), c(l, 0.0248), c(l, 0.01));
                let a = mul(l, &k0248, &b);
                let a = add(l, &k0873, &a);
                let ap = mul(l, &k001, &pp);
                let a = add(l, &a, &ap);
                let half = c(l, 0.5);
                let cc = add(l, &mean, &half);
                let (k092, k42) = (c(l, 0.92), c(l, 4.2));
                let q42 = div(l, &k42, &b);
                let vr = sub(l, &k092, &q42);
                let (k283, k51) = (c(l, 2.83), c(l, 5.1));
                let q51 = div(l, &k51, &b);
                let alpha = add(l, &k283, &q51);
                let alpha = mul(l, &alpha, &spq);
                let ratio = div(l, &pp, &q);
                let lpq = m.f(l, ScalarOp::Log, &ratio);
                let one = c(l, 1.0);
                let n1 = add(l, n, &one);
                let mm = mul(l, &n1, &pp);
                let mode = l.math(MathUnary::Floor, &mm);
                let m1 = add(l, &mode, &one);
                let nm1 = sub(l, &n1, &mode);
                let lg1 = m.f(l, ScalarOp::GammaLn, &m1);
                let lg2 = m.f(l, ScalarOp::GammaLn, &nm1);
                let h = add(l, &lg1, &lg2);
                let k = rejection(l, m, BTRS_ATTEMPTS, |g, j| {
                    let (us, v, k) = transformed_candidate(g, m, src, base, j, &a, &b, &cc);
                    let zero = m.c(g, 0.0);
                    let negative = g.cmpf(CmpF::Olt, &k, &zero);
                    let past = g.cmpf(CmpF::Ogt, &k, n);
                    let outside = g.arith(Arith::OrI, &negative, &past);
                    let k007 = m.c(g, 0.07);
                    let wide = g.cmpf(CmpF::Oge, &us, &k007);
                    let low_v = g.cmpf(CmpF::Ole, &v, &vr);
                    let quick = g.arith(Arith::AndI, &wide, &low_v);
                    // log(v alpha / (a / us^2 + b)) <= h - lgamma(k + 1) - lgamma(n - k + 1) + (k - mode) log(p / q)
                    let us2 = mul(g, &us, &us);
                    let d = div(g, &a, &us2);
                    let d = add(g, &d, &b);
                    let va = mul(g, &v, &alpha);
                    let lhs = div(g, &va, &d);
                    let lhs = m.f(g, ScalarOp::Log, &lhs);
                    let one = m.c(g, 1.0);
                    let k1 = add(g, &k, &one);
                    let nk1 = sub(g, n, &k);
                    let nk1 = add(g, &nk1, &one);
                    let l1 = m.f(g, ScalarOp::GammaLn, &k1);
                    let l2 = m.f(g, ScalarOp::GammaLn, &nk1);
                    let km = sub(g, &k, &mode);
                    let t = mul(g, &km, &lpq);
                    let rhs = sub(g, &h, &l1);
                    let rhs = sub(g, &rhs, &l2);
                    let rhs = add(g, &rhs, &t);
                    let fits = g.cmpf(CmpF::Ole, &lhs, &rhs);
                    let accepted = g.arith(Arith::OrI, &quick, &fits);
                    let yes = g.constant_int(1, ScalarType::I1);
                    let inside = g.arith(Arith::XOrI, &outside, &yes);
                    (g.arith(Arith::AndI, &inside, &accepted), k)
                });
                vec![k]
            },
        )
        .remove(0);
    let other = sub(g, n, &k);
    g.select(&flip, &other, &k)
}

/// Below this many balls drawn (the smaller of nsample and the balls left behind) a
/// hypergeometric draw empties the urn ball by ball, as numpy does.
const HYPERGEOMETRIC_SMALL: f64 = 10.0;
/// Attempts of the hypergeometric ratio-of-uniforms loop (each accepted with probability
/// above one half: a draw left undecided after 64 has probability below 1e-19).
const HRUA_ATTEMPTS: u32 = 64;
/// Stadlober's constants: 2 sqrt(2 / e) and 3 - 2 sqrt(3 / e).
const HRUA_D1: f64 = 1.715_527_769_921_413_5;
const HRUA_D2: f64 = 0.898_916_162_058_898_8;

/// The number of good balls among `sample` drawn without replacement from an urn of `good`
/// and `bad` (integers in the work type, checked valid). By symmetry it draws the smaller
/// of the sample and its complement, counting the scarcer colour (`lo` of `total`), then
/// maps back. Fewer than 10 balls: one uniform per ball, each the scarce colour with
/// probability (scarce left) / (balls left). Else Stadlober's ratio-of-uniforms method
/// ("The ratio of uniforms approach for generating discrete random variates", J. Comput.
/// Appl. Math. 1990), which numpy uses there too: a candidate k = floor(a + h (v - 1/2) / u)
/// accepted where 2 log u <= log f(k) - log f(mode), f the unnormalized pmf (log-factorials by
/// our gammaln), with the quick squeezes u (4 - u) - 3 <= T and u (u - T) >= 1.
fn hypergeometric(g: &mut Block, m: &Math, src: &Source, good: &Value, bad: &Value, sample: &Value) -> Value {
    let work = m.work;
    let t = scalar::scalar_type(work);
    let total = add(g, good, bad);
    let rest = sub(g, &total, sample);
    let complement = g.cmpf(CmpF::Olt, &rest, sample);
    let n = g.select(&complement, &rest, sample);
    let swap = g.cmpf(CmpF::Ogt, good, bad);
    let lo = g.select(&swap, bad, good);
    let hi = g.select(&swap, good, bad);
    let small_limit = m.c(g, HYPERGEOMETRIC_SMALL);
    let small = g.cmpf(CmpF::Olt, &n, &small_limit);
    let x = g.scf_if(
        &small,
        &[t],
        |s| {
            let (zero_i, zero) = (i32_const(s, 0), m.c(s, 0.0));
            let r = s.scf_while(
                &[zero_i, zero.clone(), lo.clone(), total.clone()],
                |c, st| {
                    let drawn = c.cast(Cast::SIToFP, &st[0], t);
                    c.cmpf(CmpF::Olt, &drawn, &n)
                },
                |bd, st| {
                    let blk = block_of(bd, 0, 1, 0, &st[0]);
                    let [u, _] = src.uniforms(bd, &blk, work);
                    let share = div(bd, &st[2], &st[3]);
                    let scarce = bd.cmpf(CmpF::Olt, &u, &share);
                    let (one, zero) = (m.c(bd, 1.0), m.c(bd, 0.0));
                    let inc = bd.select(&scarce, &one, &zero);
                    let count = add(bd, &st[1], &inc);
                    let left = sub(bd, &st[2], &inc);
                    let balls = sub(bd, &st[3], &one);
                    let step = i32_const(bd, 1);
                    vec![bd.arith(Arith::AddI, &st[0], &step), count, left, balls]
                },
            );
            vec![r[1].clone()]
        },
        |l| {
            let c = |l: &mut Block, x: f64| m.c(l, x);
            let p = div(l, &lo, &total);
            let q = div(l, &hi, &total);
            let mean = mul(l, &n, &p);
            let half = c(l, 0.5);
            let a = add(l, &mean, &half);
            let one = c(l, 1.0);
            let total1 = sub(l, &total, &one);
            let spread = sub(l, &total, &n);
            let var = mul(l, &spread, &n);
            let var = mul(l, &var, &p);
            let var = mul(l, &var, &q);
            let var = div(l, &var, &total1);
            let var = add(l, &var, &half);
            let cc = m.f(l, ScalarOp::Sqrt, &var);
            let (d1, d2) = (c(l, HRUA_D1), c(l, HRUA_D2));
            let h = mul(l, &d1, &cc);
            let h = add(l, &h, &d2);
            // The mode floor((n + 1) (lo + 1) / (total + 2)) and log f there.
            let two = c(l, 2.0);
            let n1 = add(l, &n, &one);
            let lo1 = add(l, &lo, &one);
            let total2 = add(l, &total, &two);
            let mode = mul(l, &n1, &lo1);
            let mode = div(l, &mode, &total2);
            let mode = l.math(MathUnary::Floor, &mode);
            let log_f = |l: &mut Block, k: &Value| {
                let one = m.c(l, 1.0);
                let terms = [
                    add(l, k, &one),
                    {
                        let d = sub(l, &lo, k);
                        add(l, &d, &one)
                    },
                    {
                        let d = sub(l, &n, k);
                        add(l, &d, &one)
                    },
                    {
                        let d = sub(l, &hi, &n);
                        let d = add(l, &d, k);
                        add(l, &d, &one)
                    },
                ];
                let mut sum = m.c(l, 0.0);
                for x in &terms {
                    let lg = m.f(l, ScalarOp::GammaLn, x);
                    sum = add(l, &sum, &lg);
                }
                sum
            };
            let at_mode = log_f(l, &mode);
            // Candidates at or past min(n, lo) + 1 or a + 16 c are rejected outright.
            let top = l.arith(Arith::MinimumF, &n, &lo);
            let top = add(l, &top, &one);
            let k16 = c(l, 16.0);
            let far = mul(l, &k16, &cc);
            let far = add(l, &a, &far);
            let far = l.math(MathUnary::Floor, &far);
            let bound = l.arith(Arith::MinimumF, &top, &far);
            vec![rejection(l, m, HRUA_ATTEMPTS, |g, j| {
                let blk = block_of(g, 0, 1, 0, j);
                let [u, v] = src.uniforms(g, &blk, work);
                // u in (0, 1]: 1 - u of [0, 1).
                let one = m.c(g, 1.0);
                let u = sub(g, &one, &u);
                let half = m.c(g, 0.5);
                let dv = sub(g, &v, &half);
                let x = mul(g, &h, &dv);
                let x = div(g, &x, &u);
                let x = add(g, &a, &x);
                let zero = m.c(g, 0.0);
                let negative = g.cmpf(CmpF::Ult, &x, &zero);
                let past = g.cmpf(CmpF::Oge, &x, &bound);
                let outside = g.arith(Arith::OrI, &negative, &past);
                // Read log f at a clamped k where outside (the candidate is rejected).
                let k = g.math(MathUnary::Floor, &x);
                let k = g.select(&outside, &mode, &k);
                let lf = log_f(g, &k);
                let tt = sub(g, &at_mode, &lf);
                let four = m.c(g, 4.0);
                let three = m.c(g, 3.0);
                let w = sub(g, &four, &u);
                let w = mul(g, &u, &w);
                let w = sub(g, &w, &three);
                let quick = g.cmpf(CmpF::Ole, &w, &tt);
                let ut = sub(g, &u, &tt);
                let ut = mul(g, &u, &ut);
                let quick_reject = g.cmpf(CmpF::Oge, &ut, &one);
                let lu = m.f(g, ScalarOp::Log, &u);
                let two = m.c(g, 2.0);
                let lu2 = mul(g, &two, &lu);
                let slow = g.cmpf(CmpF::Ole, &lu2, &tt);
                let yes = g.constant_int(1, ScalarType::I1);
                let not_rejected = g.arith(Arith::XOrI, &quick_reject, &yes);
                let slow = g.arith(Arith::AndI, &not_rejected, &slow);
                let accepted = g.arith(Arith::OrI, &quick, &slow);
                let inside = g.arith(Arith::XOrI, &outside, &yes);
                (g.arith(Arith::AndI, &inside, &accepted), k)
            })]
        },
    )[0]
        .clone();
    // Back from the scarce colour and the smaller side of the sample.
    let flipped = sub(g, &n, &x);
    let x = g.select(&swap, &flipped, &x);
    let rest_good = sub(g, good, &x);
    g.select(&complement, &rest_good, &x)
}

/// Attempts of the von Mises rejection loop (Best and Fisher: acceptance above 0.65 for
/// every kappa, so 64 all fail with probability below 1e-29).
const VON_MISES_ATTEMPTS: u32 = 64;

/// A von Mises draw of mean `mu` and concentration `kappa`, as numpy draws it: uniform on
/// (-pi, pi) for kappa below 1e-8, a wrapped normal above 1e6, else Best and Fisher's
/// rejection ("Efficient simulation of the von Mises distribution", 1979) for the angle's
/// cosine W, the sign from another uniform; mu added and the result wrapped to [-pi, pi].
fn von_mises(g: &mut Block, m: &Math, src: &Source, mu: &Value, kappa: &Value) -> Value {
    let work = m.work;
    let c = |g: &mut Block, x: f64| m.c(g, x);
    let pi = c(g, std::f64::consts::PI);
    // s: 1/kappa + kappa below 1e-5 (the series of the formula below), else from r and rho.
    let one = c(g, 1.0);
    let four = c(g, 4.0);
    let kk = mul(g, kappa, kappa);
    let q = mul(g, &four, &kk);
    let q = add(g, &one, &q);
    let q = m.f(g, ScalarOp::Sqrt, &q);
    let r = add(g, &one, &q);
    let two = c(g, 2.0);
    let tr = mul(g, &two, &r);
    let sq = m.f(g, ScalarOp::Sqrt, &tr);
    let num = sub(g, &r, &sq);
    let tk = mul(g, &two, kappa);
    let rho = div(g, &num, &tk);
    let rr = mul(g, &rho, &rho);
    let sn = add(g, &one, &rr);
    let trho = mul(g, &two, &rho);
    let s_formula = div(g, &sn, &trho);
    let inv = div(g, &one, kappa);
    let s_series = add(g, &inv, kappa);
    let tiny = c(g, 1e-5);
    let small = g.cmpf(CmpF::Olt, kappa, &tiny);
    let s = g.select(&small, &s_series, &s_formula);
    let w = rejection(g, m, VON_MISES_ATTEMPTS, |g, j| {
        let blk = block_of(g, 0, 1, 1, j);
        let [u, v] = src.uniforms(g, &blk, work);
        let a = mul(g, &pi, &u);
        let z = m.f(g, ScalarOp::Cos, &a);
        let one = m.c(g, 1.0);
        let sz = mul(g, &s, &z);
        let num = add(g, &one, &sz);
        let den = add(g, &s, &z);
        let w = div(g, &num, &den);
        let sw = sub(g, &s, &w);
        let y = mul(g, kappa, &sw);
        // y (2 - y) >= v, or log(y / v) + 1 - y >= 0
        let two = m.c(g, 2.0);
        let ty = sub(g, &two, &y);
        let yy = mul(g, &y, &ty);
        let zero = m.c(g, 0.0);
        let d = sub(g, &yy, &v);
        let quick = g.cmpf(CmpF::Oge, &d, &zero);
        let ratio = div(g, &y, &v);
        let l = m.f(g, ScalarOp::Log, &ratio);
        let l = add(g, &l, &one);
        let l = sub(g, &l, &y);
        let slow = g.cmpf(CmpF::Oge, &l, &zero);
        (g.arith(Arith::OrI, &quick, &slow), w)
    });
    let [u, z_u] = src.uniforms_at(g, 0, work);
    let angle = m.f(g, ScalarOp::ArcCos, &w);
    let half = c(g, 0.5);
    let lower = g.cmpf(CmpF::Olt, &u, &half);
    let neg_angle = g.negf(&angle);
    let angle = g.select(&lower, &neg_angle, &angle);
    // kappa above 1e6: mu + z / sqrt(kappa); below 1e-8: uniform on (-pi, pi).
    let [u2, _] = src.uniforms_at(g, 1 + VON_MISES_ATTEMPTS, work);
    let z = normal(g, m, &[z_u, u2.clone()]);
    let rk = m.f(g, ScalarOp::Sqrt, kappa);
    let wrapped = div(g, &z, &rk);
    let huge = c(g, 1e6);
    let concentrated = g.cmpf(CmpF::Ogt, kappa, &huge);
    let angle = g.select(&concentrated, &wrapped, &angle);
    let x = add(g, &angle, mu);
    // Wrapped to [-pi, pi] keeping the sign: fmod(|x| + pi, 2 pi) - pi, negated back.
    let zero = c(g, 0.0);
    let negative = g.cmpf(CmpF::Olt, &x, &zero);
    let ax = g.math(MathUnary::AbsF, &x);
    let shifted = add(g, &ax, &pi);
    let two_pi = c(g, std::f64::consts::TAU);
    // (arith.remf becomes a call to fmod, which IREE's embedded executables cannot link.)
    let turns = div(g, &shifted, &two_pi);
    let turns = g.math(MathUnary::Floor, &turns);
    let whole = mul(g, &turns, &two_pi);
    let md = sub(g, &shifted, &whole);
    let md = sub(g, &md, &pi);
    let neg_md = g.negf(&md);
    let x = g.select(&negative, &neg_md, &md);
    let uniform = mul(g, &two, &u);
    let uniform = sub(g, &uniform, &one);
    let uniform = mul(g, &pi, &uniform);
    let flat = c(g, 1e-8);
    let spread = g.cmpf(CmpF::Olt, kappa, &flat);
    g.select(&spread, &uniform, &x)
}

/// A parameter read whole by a draw: the vector `tensor[prefix.., :]`, of `dtype`.
pub struct Vector {
    pub tensor: Value,
    pub prefix: Vec<Value>,
    pub dtype: DType,
}

/// The category of a uniform draw `u`: how many of the weights' running sums are below
/// it (numpy's left searchsorted of p's cumulative sum, as PyTensor's rng_fn draws; the
/// weights are not normalized, and NaN sums count as above).
fn categorical(g: &mut Block, m: &Math, weights: &Vector, u: &Value) -> Value {
    let last = weights.prefix.len();
    let n = g.tensor_dim(&weights.tensor, last);
    let (zero, step) = (g.constant_index(0), g.constant_index(1));
    let (acc, count) = (m.c(g, 0.0), m.c(g, 0.0));
    let r = g.scf_for(&zero, &n, &step, &[acc, count], |lp, k, st| {
        let mut at = weights.prefix.clone();
        at.push(k.clone());
        let w = lp.tensor_extract(&weights.tensor, &at);
        let w = crate::lower::subtensor::convert_element(lp, &w, weights.dtype, m.work);
        let acc = add(lp, &st[0], &w);
        let below = lp.cmpf(CmpF::Olt, &acc, u);
        let (one, zero) = (m.c(lp, 1.0), m.c(lp, 0.0));
        let inc = lp.select(&below, &one, &zero);
        Ok::<_, String>(vec![acc.clone(), add(lp, &st[1], &inc)])
    });
    match r {
        Ok(r) => r[1].clone(),
        Err(e) => {
            m.error.borrow_mut().get_or_insert(e);
            u.clone()
        }
    }
}

/// Dirichlet draws from the logs of their gammas (the last axis one vector): each log
/// less the vector's largest, exponentiated and divided by their sum, so that small
/// shapes, whose gammas underflow, still give a vector summing to 1.
pub fn normalize_logs(b: &mut Block, logs: &Value) -> Result<Value, String> {
    let ty = logs.tensor().clone();
    let rank = ty.rank();
    let lead = rank - 1;
    let sizes: Vec<Value> = (0..rank).filter(|&a| ty.shape[a].is_none()).map(|a| b.tensor_dim(logs, a)).collect();
    let lead_sizes: Vec<Value> = (0..lead).filter(|&a| ty.shape[a].is_none()).map(|a| b.tensor_dim(logs, a)).collect();
    let row_ty = crate::mlir::TensorType::new(ty.shape[..lead].to_vec(), ty.element);
    let row_map = crate::mlir::AffineMap { dims: rank, results: (0..lead).map(crate::mlir::AffineExpr::Dim).collect() };
    let identity = crate::mlir::AffineMap::identity(rank);
    let mut iters = vec![crate::mlir::IteratorType::Parallel; rank];
    iters[lead] = crate::mlir::IteratorType::Reduction;
    let reduce = |b: &mut Block, ins: &[Value], init: f64, op: &dyn Fn(&mut Block, &[Value]) -> Value| -> Result<Value, String> {
        let start = b.constant_f64(init, ty.element);
        let empty = b.tensor_empty(row_ty.clone(), &lead_sizes);
        let acc = b.linalg_fill(&start, &empty);
        let mut maps = vec![identity.clone(); ins.len()];
        maps.push(row_map.clone());
        let r = b.linalg_generic(ins, &[acc], &maps, &iters, |g, args| Ok::<_, String>(vec![op(g, args)]))?;
        Ok(r[0].clone())
    };
    let most = reduce(b, std::slice::from_ref(logs), f64::NEG_INFINITY, &|g, a| g.arith(Arith::MaximumF, &a[0], &a[1]))?;
    let shifted = |g: &mut Block, l: &Value, top: &Value| {
        // A vector whose largest log is infinite (an infinite shape) is NaN, as numpy's inf / inf.
        let d = g.arith(Arith::SubF, l, top);
        g.math(MathUnary::Exp, &d)
    };
    let total = {
        let start = b.constant_f64(0.0, ty.element);
        let empty = b.tensor_empty(row_ty.clone(), &lead_sizes);
        let acc = b.linalg_fill(&start, &empty);
        let maps = vec![identity.clone(), row_map.clone(), row_map.clone()];
        b.linalg_generic(&[logs.clone(), most.clone()], &[acc], &maps, &iters, |g, a| {
            let e = shifted(g, &a[0], &a[1]);
            Ok::<_, String>(vec![g.arith(Arith::AddF, &a[2], &e)])
        })?[0]
            .clone()
    };
    let empty = b.tensor_empty(ty.clone(), &sizes);
    let maps = vec![identity.clone(), row_map.clone(), row_map.clone(), identity.clone()];
    let r = b.linalg_generic(&[logs.clone(), most, total], &[empty], &maps, &vec![crate::mlir::IteratorType::Parallel; rank], |g, a| {
        let e = shifted(g, &a[0], &a[1]);
        Ok::<_, String>(vec![g.arith(Arith::DivF, &e, &a[2])])
    })?;
    Ok(r[0].clone())
}

/// One draw of `dist` from `src` and the element's parameters `p` (in `m.work`; i64 for
/// `Integers`), and the vectors it reads whole.
pub fn transform(g: &mut Block, m: &Math, dist: Distribution, src: &Source, p: &[Value], vectors: &[Vector]) -> Value {
    use Distribution::*;
    let work = m.work;
    if dist == Integers {
        // low + (64 random bits mod (high - low)): the bias is below (high - low) / 2^64.
        let words = src.block_at(g, 0);
        let hi = g.cast(Cast::ExtUI, &words[0], ScalarType::I64);
        let lo = g.cast(Cast::ExtUI, &words[1], ScalarType::I64);
        let shift = g.constant_int(32, ScalarType::I64);
        let hi = g.shli(&hi, &shift);
        let bits = g.arith(Arith::OrI, &hi, &lo);
        let range = g.arith(Arith::SubI, &p[1], &p[0]);
        // A range that is not positive raises after the call; 1 keeps the division defined.
        let one = g.constant_int(1, ScalarType::I64);
        let range = g.arith(Arith::MaxSI, &range, &one);
        let r = g.arith(Arith::RemUI, &bits, &range);
        return g.arith(Arith::AddI, &p[0], &r);
    }
    let uv = src.uniforms_at(g, 0, work);
    let u = uv[0].clone();
    match dist {
        Uniform => {
            let range = sub(g, &p[1], &p[0]);
            let x = mul(g, &range, &u);
            add(g, &p[0], &x)
        }
        Normal => {
            let z = normal(g, m, &uv);
            loc_scale(g, &p[0], &p[1], &z)
        }
        HalfNormal => {
            let z = normal(g, m, &uv);
            let z = g.math(MathUnary::AbsF, &z);
            loc_scale(g, &p[0], &p[1], &z)
        }
        LogNormal => {
            let z = normal(g, m, &uv);
            let x = loc_scale(g, &p[0], &p[1], &z);
            m.f(g, ScalarOp::Exp, &x)
        }
        Exponential => {
            let e = exponential(g, m, &u);
            mul(g, &e, &p[0])
        }
        Cauchy => {
            // tan(pi (u - 1/2)), u in (0, 1)
            let u = open(g, m, &u);
            let half = m.c(g, 0.5);
            let x = sub(g, &u, &half);
            let pi = m.c(g, std::f64::consts::PI);
            let a = mul(g, &pi, &x);
            let t = m.f(g, ScalarOp::Tan, &a);
            loc_scale(g, &p[0], &p[1], &t)
        }
        HalfCauchy => {
            // tan(pi u / 2), u in [0, 1)
            let half_pi = m.c(g, std::f64::consts::FRAC_PI_2);
            let a = mul(g, &half_pi, &u);
            let t = m.f(g, ScalarOp::Tan, &a);
            loc_scale(g, &p[0], &p[1], &t)
        }
        Laplace => {
            // The inverse CDF: log(2u) below the median, -log(2(1 - u)) above it.
            let u = open(g, m, &u);
            let (half, two, one) = (m.c(g, 0.5), m.c(g, 2.0), m.c(g, 1.0));
            let below = g.cmpf(CmpF::Olt, &u, &half);
            let w = sub(g, &one, &u);
            let side = g.select(&below, &u, &w);
            let x = mul(g, &two, &side);
            let l = m.f(g, ScalarOp::Log, &x);
            let nl = g.negf(&l);
            let e = g.select(&below, &l, &nl);
            loc_scale(g, &p[0], &p[1], &e)
        }
        Logistic => {
            // log(u / (1 - u))
            let u = open(g, m, &u);
            let one = m.c(g, 1.0);
            let w = sub(g, &one, &u);
            let (lu, lw) = (m.f(g, ScalarOp::Log, &u), m.f(g, ScalarOp::Log, &w));
            let x = sub(g, &lu, &lw);
            loc_scale(g, &p[0], &p[1], &x)
        }
        Gumbel => {
            // -log(-log(u))
            let u = open(g, m, &u);
            let l = m.f(g, ScalarOp::Log, &u);
            let nl = g.negf(&l);
            let ll = m.f(g, ScalarOp::Log, &nl);
            let x = g.negf(&ll);
            loc_scale(g, &p[0], &p[1], &x)
        }
        Bernoulli => {
            let hit = g.cmpf(CmpF::Olt, &u, &p[0]);
            let (one, zero) = (m.c(g, 1.0), m.c(g, 0.0));
            g.select(&hit, &one, &zero)
        }
        Weibull => {
            // E^(1/a) for a standard exponential E; numpy's 0 where a is 0.
            let e = exponential(g, m, &u);
            let l = m.f(g, ScalarOp::Log, &e);
            let q = div(g, &l, &p[0]);
            let x = m.f(g, ScalarOp::Exp, &q);
            let zero = m.c(g, 0.0);
            let degenerate = g.cmpf(CmpF::Oeq, &p[0], &zero);
            g.select(&degenerate, &zero, &x)
        }
        Pareto => {
            // scale (1 - u)^(-1/b) = scale exp(E / b)
            let e = exponential(g, m, &u);
            let q = div(g, &e, &p[0]);
            let x = m.f(g, ScalarOp::Exp, &q);
            mul(g, &p[1], &x)
        }
        Geometric => {
            // ceil(log(1 - u) / log(1 - p)), at least 1 (p = 1 gives 0 / -inf).
            let u = open(g, m, &u);
            let nu = g.negf(&u);
            let lu = m.f(g, ScalarOp::Log1p, &nu);
            let np = g.negf(&p[0]);
            let lp = m.f(g, ScalarOp::Log1p, &np);
            let q = div(g, &lu, &lp);
            let k = m.f(g, ScalarOp::Ceil, &q);
            let one = m.c(g, 1.0);
            g.arith(Arith::MaximumF, &k, &one)
        }
        Triangular => {
            // The inverse CDF on each side of the mode.
            let (left, mode, right) = (&p[0], &p[1], &p[2]);
            let base = sub(g, right, left);
            let left_base = sub(g, mode, left);
            let right_base = sub(g, right, mode);
            let ratio = div(g, &left_base, &base);
            let below = g.cmpf(CmpF::Ole, &u, &ratio);
            let lp = mul(g, &left_base, &base);
            let lp = mul(g, &u, &lp);
            let ls = m.f(g, ScalarOp::Sqrt, &lp);
            let lo = add(g, left, &ls);
            let one = m.c(g, 1.0);
            let w = sub(g, &one, &u);
            let rp = mul(g, &right_base, &base);
            let rp = mul(g, &w, &rp);
            let rs = m.f(g, ScalarOp::Sqrt, &rp);
            let hi = sub(g, right, &rs);
            g.select(&below, &lo, &hi)
        }
        Wald => {
            // Michael, Schucany and Haas (1976): the smaller root x of the chi-square
            // transform, written without cancellation, x = m - 2 m y / (y + sqrt(4 s y + y^2))
            // for y = m z^2 (the limit m where y is 0 or the scale infinite), or m^2 / x as a
            // second uniform chooses.
            let (mean, scale) = (&p[0], &p[1]);
            let z = normal(g, m, &uv);
            let y = mul(g, &z, &z);
            let y = mul(g, mean, &y);
            let four = m.c(g, 4.0);
            let q = mul(g, &four, scale);
            let q = mul(g, &q, &y);
            let yy = mul(g, &y, &y);
            let q = add(g, &q, &yy);
            let r = m.f(g, ScalarOp::Sqrt, &q);
            let den = add(g, &y, &r);
            let two = m.c(g, 2.0);
            let num = mul(g, &two, mean);
            let num = mul(g, &num, &y);
            let d = div(g, &num, &den);
            let zero = m.c(g, 0.0);
            let at_mean = g.cmpf(CmpF::Oeq, &y, &zero);
            let d = g.select(&at_mean, &zero, &d);
            let x = sub(g, mean, &d);
            let [w, _] = src.uniforms_at(g, 1, work);
            let mx = add(g, mean, &x);
            let bound = div(g, mean, &mx);
            let first = g.cmpf(CmpF::Ole, &w, &bound);
            let mm = mul(g, mean, mean);
            let other = div(g, &mm, &x);
            g.select(&first, &x, &other)
        }
        TruncExpon => {
            // -log(1 - u (1 - e^-b)), then loc and scale.
            let nb = g.negf(&p[0]);
            let em = m.f(g, ScalarOp::Expm1, &nb);
            let mass = g.negf(&em);
            let q = mul(g, &u, &mass);
            let nq = g.negf(&q);
            let l = m.f(g, ScalarOp::Log1p, &nq);
            let x = g.negf(&l);
            loc_scale(g, &p[1], &p[2], &x)
        }
        Gamma => {
            let x = standard_gamma(g, m, src, &p[0], 0);
            mul(g, &x, &p[1])
        }
        InvGamma => {
            let x = standard_gamma(g, m, src, &p[0], 0);
            div(g, &p[1], &x)
        }
        Beta => beta(g, m, src, &p[0], &p[1]),
        BetaBinomial => {
            let q = beta(g, m, src, &p[1], &p[2]);
            binomial(g, m, src, &p[0], &q, 2 * GAMMA_BLOCKS)
        }
        GenGamma => {
            // lambd G(alpha / p)^(1 / p)
            let a = div(g, &p[0], &p[1]);
            let l = log_standard_gamma(g, m, src, &a, 0);
            let q = div(g, &l, &p[1]);
            let x = m.f(g, ScalarOp::Exp, &q);
            mul(g, &p[2], &x)
        }
        StudentT => {
            // z / sqrt(V / df), V = 2 G(df / 2) a chi-square of df degrees of freedom.
            let (df, loc, scale) = (&p[0], &p[1], &p[2]);
            let z = normal(g, m, &uv);
            let half = m.c(g, 0.5);
            let shape = mul(g, &half, df);
            let x = standard_gamma(g, m, src, &shape, 1);
            let two = m.c(g, 2.0);
            let v = mul(g, &two, &x);
            let q = div(g, &v, df);
            let r = m.f(g, ScalarOp::Sqrt, &q);
            let t = div(g, &z, &r);
            loc_scale(g, loc, scale, &t)
        }
        Poisson => poisson(g, m, src, &p[0], 0),
        Binomial => binomial(g, m, src, &p[0], &p[1], 0),
        HyperGeometric => hypergeometric(g, m, src, &p[0], &p[1], &p[2]),
        Categorical => categorical(g, m, &vectors[0], &u),
        // The log of a gamma of the weight; `normalize_logs` makes the vector.
        Dirichlet => log_standard_gamma(g, m, src, &p[0], 0),
        VonMises => von_mises(g, m, src, &p[0], &p[1]),
        // multivariate_normal's z (lower/random/mod.rs multiplies by the factor).
        MvNormal(_) => normal(g, m, &uv),
        Multinomial => unreachable!("lowered by lower/random/multinomial.rs"),
        Permutation | Choice => unreachable!("lowered by lower/random/shuffle.rs"),
        NegativeBinomial => {
            // A Poisson of mean G(n) (1 - p) / p.
            let x = standard_gamma(g, m, src, &p[0], 0);
            let one = m.c(g, 1.0);
            let q = sub(g, &one, &p[1]);
            let q = div(g, &q, &p[1]);
            let lam = mul(g, &x, &q);
            poisson(g, m, src, &lam, GAMMA_BLOCKS)
        }
        Integers => unreachable!("drawn from the words above"),
    }
}
