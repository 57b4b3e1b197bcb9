//! polygamma(n, x), the n-th derivative of psi, for an integer order n per element.
//!
//! n = 0 is psi and n = 1 tri_gamma (gamma.rs), with scipy's values at the poles (the Op
//! has no C code: its reference is scipy.special.polygamma). For n >= 2,
//! polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) with Hurwitz's zeta summed directly,
//! sum 1/(x+k)^s (s = n + 1), while x + k < s + 22, then Euler-Maclaurin's tail at
//! z = x + N: z^(1-s)/(s-1) + z^-s/2 + sum_{j=1..10} B_2j/(2j)! s(s+1)...(s+2j-2) z^(-s-2j+1),
//! whose remainder is below 1e-17 relative from z >= s + 21. The direct sum takes
//! negative x as it is (the terms there have the sign of (x+k)^s): accurate in absolute
//! terms next to the zeros between the poles, as scipy. The powers z^s are exact-integer
//! binary powering with TwoProd (the powers and the reciprocal to about twice the precision),
//! and the terms are summed by TwoSum: next to the zeros between negative poles the terms
//! on either side of a pole nearly cancel.
//!
//! Limits: n! overflows past n = 170, where the result is +-inf (or nan), as scipy's; x
//! below -1e6 (the direct sum's iteration cap) gives nan. Poles (x = 0, -0, a negative
//! integer, -inf) give (-1)^(n+1) inf, as scipy.

use super::gamma::{gamma, psi, tri_gamma};
use super::F;
use crate::mlir::{Arith, Block, CmpF, Value};

/// B_2j / (2j)! for j = 1..10 (Bernoulli numbers B2 = 1/6, B4 = -1/30, B6 = 1/42,
/// B8 = -1/30, B10 = 5/66, B12 = -691/2730, B14 = 7/6, B16 = -3617/510, B18 = 43867/798,
/// B20 = -174611/330), divided by (2j)! here at lowering time.
fn bernoulli_over_factorial() -> [f64; 10] {
    let b = [
        1.0 / 6.0,
        -1.0 / 30.0,
        1.0 / 42.0,
        -1.0 / 30.0,
        5.0 / 66.0,
        -691.0 / 2730.0,
        7.0 / 6.0,
        -3617.0 / 510.0,
        43867.0 / 798.0,
        -174611.0 / 330.0,
    ];
    let mut out = [0.0; 10];
    let mut factorial = 1.0f64;
    for (j, bj) in b.iter().enumerate() {
        let k = 2 * (j + 1);
        factorial *= ((k - 1) * k) as f64;
        out[j] = bj / factorial;
    }
    out
}

/// Where the direct sum stops: z >= s + EM_START (s = n + 1).
const EM_START: f64 = 22.0;
/// The direct sum's iteration cap (x below about -1e6 is refused as nan).
const MAX_ITER: f64 = 1.0e6;
/// Binary powering handles exponents below 2^POWER_BITS (n up to 254; past 170 n! is inf).
const POWER_BITS: usize = 8;



/// The binary digits of an integer-valued s in [0, 2^POWER_BITS), lowest first, as masks
/// (digit is 1): the steps of binary powering.
fn exponent_bits(f: &mut F, s: &Value) -> Vec<Value> {
    let half = f.c(0.5);
    let two = f.c(2.0);
    let zero = f.c(0.0);
    let mut e = s.clone();
    let mut bits = Vec::with_capacity(POWER_BITS);
    for _ in 0..POWER_BITS {
        let h = f.mul(&e, &half);
        let h = f.floor(&h);
        let twice = f.mul(&h, &two);
        let bit = f.sub(&e, &twice);
        bits.push(f.cmp(CmpF::Ogt, &bit, &zero));
        e = h;
    }
    bits
}

/// z^s for an integer-valued s in [0, 2^POWER_BITS), by binary powering.
fn pow_int(f: &mut F, z: &Value, s: &Value) -> Value {
    let bits = exponent_bits(f, s);
    let mut r = f.c(1.0);
    let mut p = z.clone();
    for (i, set) in bits.iter().enumerate() {
        let times = f.mul(&r, &p);
        r = f.sel(set, &times, &r);
        if i + 1 < POWER_BITS {
            p = f.mul(&p, &p);
        }
    }
    r
}

/// z^s as two doubles (hi, lo) for an integer-valued s in [0, 2^POWER_BITS), by binary
/// powering with every product carried by TwoProd: hi is pow_int's value, lo its rounding
/// to about twice the precision (meaningless where hi overflows or underflows).
fn pow_int_double(f: &mut F, z: &Value, s: &Value) -> (Value, Value) {
    let bits = exponent_bits(f, s);
    let zero = f.c(0.0);
    let (mut r, mut r_lo) = (f.c(1.0), zero.clone());
    let (mut p, mut p_lo) = (z.clone(), zero);
    for (i, set) in bits.iter().enumerate() {
        let (t, t_lo) = mul_double(f, (&r, &r_lo), (&p, &p_lo));
        r = f.sel(set, &t, &r);
        r_lo = f.sel(set, &t_lo, &r_lo);
        if i + 1 < POWER_BITS {
            let (q, q_lo) = mul_double(f, (&p, &p_lo), (&p, &p_lo));
            p = q;
            p_lo = q_lo;
        }
    }
    (r, r_lo)
}

/// (a_hi + a_lo)(b_hi + b_lo) as two doubles (the lo * lo product left out). The high
/// part is the rounded product a_hi b_hi itself, not renormalized: so it keeps the sign of
/// a zero (an underflowed odd power of a negative z is -0, and its reciprocal -inf), and
/// the powers' high parts are pow_int's.
fn mul_double(f: &mut F, a: (&Value, &Value), b: (&Value, &Value)) -> (Value, Value) {
    let (p, e) = f.two_prod(a.0, b.0);
    let e = f.fma(a.0, b.1, &e);
    let e = f.fma(a.1, b.0, &e);
    (p, e)
}

/// zeta(s, x) = sum_{k>=0} (x+k)^-s for s = n + 1 >= 3 and finite x off the poles; and
/// whether the direct part finished within the cap.
fn hurwitz_zeta(f: &mut F, s: &Value, x: &Value) -> (Value, Value) {
    let zero = f.c(0.0);
    let start = f.c(EM_START);
    let z0 = f.add(s, &start);
    let ty = f.ty;
    let (s_in, z0_in) = (s.clone(), z0.clone());
    // Each term 1/(x+k)^s to about twice the precision (its power in two doubles, the
    // division's remainder by FMA) and summed by TwoSum into (sum, comp): for negative x
    // the terms on either side of a pole nearly cancel (+-8 around polygamma(2)'s zeros),
    // and a term rounded once would cost several ULP of the result.
    let done = f.b.scf_while(
        &[x.clone(), zero.clone(), zero.clone(), zero],
        |c, v| {
            let mut g = F { b: c, ty };
            let limit = g.c(MAX_ITER);
            let below = g.cmp(CmpF::Olt, &v[0], &z0_in);
            let under = g.cmp(CmpF::Olt, &v[2], &limit);
            g.and(&below, &under)
        },
        |l, v| {
            let mut g = F { b: l, ty };
            let (z, sum, count, comp) = (&v[0], &v[1], &v[2], &v[3]);
            let one = g.c(1.0);
            let zero = g.c(0.0);
            let (zs, zs_lo) = pow_int_double(&mut g, z, &s_in);
            let term = g.div(&one, &zs);
            // 1/(hi + lo) = q (1 + r) to first order, r = 1 - q (hi + lo); nan where the
            // power overflowed or underflowed (then the term is q alone).
            let minus_q = g.neg(&term);
            let r = g.fma(&minus_q, &zs, &one);
            let r = g.fma(&minus_q, &zs_lo, &r);
            let term_lo = g.mul(&term, &r);
            let bad = g.cmp(CmpF::Uno, &term_lo, &term_lo);
            let term_lo = g.sel(&bad, &zero, &term_lo);
            let (sum, e) = g.two_sum(sum, &term);
            // An infinite term (z^s underflowed next to a pole) makes e nan: sum is inf.
            let e_bad = g.cmp(CmpF::Uno, &e, &e);
            let e = g.sel(&e_bad, &zero, &e);
            let comp = g.add(comp, &e);
            let comp = g.add(&comp, &term_lo);
            let z = g.add(z, &one);
            let count = g.add(count, &one);
            vec![z, sum, count, comp]
        },
    );
    let (z, sum) = (&done[0], &done[1]);
    let limit = f.c(MAX_ITER);
    let finished = f.cmp(CmpF::Olt, &done[2], &limit);
    // Euler-Maclaurin: z^-s (z/(s-1) + 1/2 + sum_j c_j), c_1 = B2/2! s / z and
    // c_{j+1} = c_j (s+2j-1)(s+2j) / z^2 times the ratio of consecutive B_2j/(2j)!.
    let one = f.c(1.0);
    let half = f.c(0.5);
    let inv_z = f.div(&one, z);
    let inv_z2 = f.mul(&inv_z, &inv_z);
    let coeffs = bernoulli_over_factorial();
    let mut rising = f.mul(s, &inv_z); // s (s+1)...(s+2j-2) / z^(2j-1)
    let mut terms = Vec::new();
    for (j, c) in coeffs.iter().enumerate() {
        if j > 0 {
            let k1 = f.c((2 * j - 1) as f64);
            let k2 = f.c((2 * j) as f64);
            let a1 = f.add(s, &k1);
            let a2 = f.add(s, &k2);
            let m = f.mul(&a1, &a2);
            let m = f.mul(&m, &inv_z2);
            rising = f.mul(&rising, &m);
        }
        let cv = f.c(*c);
        terms.push(f.mul(&rising, &cv));
    }
    let mut em = f.c(0.0);
    for t in terms.iter().rev() {
        em = f.add(&em, t);
    }
    // As z^(1-s) (1/(s-1) + 1/(2z) + sum_j c_j / z): z^-s alone underflows for large z
    // where the result does not.
    let s1 = f.sub(s, &one);
    let lead = f.div(&one, &s1);
    let half_inv = f.mul(&half, &inv_z);
    let em = f.mul(&em, &inv_z);
    let rest = f.add(&half_inv, &em);
    let bracket = f.add(&lead, &rest);
    let zs = pow_int(f, z, &s1);
    let scale = f.div(&one, &zs);
    // Where z^(s-1) overflows, (1/z)^(s-1) (subnormal or 0; 1/z's rounding matters less
    // there than the lost bits).
    let inf = f.c(f64::INFINITY);
    let overflow = f.cmp(CmpF::Oeq, &zs, &inf);
    let small_scale = pow_int(f, &inv_z, &s1);
    let scale = f.sel(&overflow, &small_scale, &scale);
    let tail = f.mul(&scale, &bracket);
    let low = f.add(&done[3], &tail);
    (f.add(sum, &low), finished)
}

pub fn polygamma(b: &mut Block, n: &Value, x: &Value) -> Value {
    let mut f = F::new(b, x);
    let f = &mut f;
    let zero = f.c(0.0);
    let one = f.c(1.0);
    let two = f.c(2.0);
    let half = f.c(0.5);
    let inf = f.c(f64::INFINITY);
    let nan = f.c(f64::NAN);
    // Poles: 0, -0, the negative integers, -inf.
    let fl = f.floor(x);
    let integral = f.cmp(CmpF::Oeq, &fl, x);
    let non_positive = f.cmp(CmpF::Ole, x, &zero);
    let pole = f.and(&integral, &non_positive);
    let x_inf = f.cmp(CmpF::Oeq, x, &inf);
    let x_nan = f.cmp(CmpF::Uno, x, x);
    let odd_pole = f.or(&pole, &x_inf);
    let special = f.or(&odd_pole, &x_nan);
    // n >= 2 on regular x (stand-ins elsewhere keep the loop short).
    let n2 = f.b.arith(Arith::MaximumF, n, &two);
    let s = f.add(&n2, &one);
    let x_r = f.sel(&special, &one, x);
    let (zeta, finished) = hurwitz_zeta(f, &s, &x_r);
    let n_plus_one = f.add(&n2, &one);
    let factorial = gamma(f.b, &n_plus_one);
    // (-1)^(n+1): -1 for even n.
    let hn = f.mul(&n2, &half);
    let hf = f.floor(&hn);
    let even = f.cmp(CmpF::Oeq, &hf, &hn);
    let minus_one = f.c(-1.0);
    let sign = f.sel(&even, &minus_one, &one);
    let signed = f.mul(&factorial, &sign);
    let general = f.mul(&signed, &zeta);
    let general = f.sel(&finished, &general, &nan);
    let at_pole = f.mul(&sign, &inf);
    let general = f.sel(&pole, &at_pole, &general);
    let at_inf = f.mul(&sign, &zero); // -0.0 for even n, as scipy
    let general = f.sel(&x_inf, &at_inf, &general);
    // n = 0: psi, with scipy's poles: -1/x at zero (-inf at +0, inf at -0), nan at the
    // negative integers and -inf (PyTensor's C psi gives +inf there).
    let p = psi(f.b, x);
    let x_zero = f.cmp(CmpF::Oeq, x, &zero);
    let minus_inv = f.div(&minus_one, x);
    let p = f.sel(&pole, &nan, &p);
    let p = f.sel(&x_zero, &minus_inv, &p);
    let t = tri_gamma(f.b, x);
    let is0 = f.cmp(CmpF::Oeq, n, &zero);
    let is1 = f.cmp(CmpF::Oeq, n, &one);
    let r = f.sel(&is1, &t, &general);
    let r = f.sel(&is0, &p, &r);
    // Negative orders: nan (scipy); nan x stays nan.
    let negative = f.cmp(CmpF::Olt, n, &zero);
    let r = f.sel(&negative, &nan, &r);
    f.keep_nan(x, &r)
}
