//! Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as
//! 1, 2, 3", SC'11) and the blocks of random words one draw reads.

use crate::dtype::DType;
use crate::lower::scalar;
use crate::mlir::{Arith, Block, Cast, CmpI, ScalarType, Value};

/// Philox4x32's round multipliers and key increments (the paper's constants).
const MULTIPLIERS: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
const WEYL: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
const ROUNDS: usize = 10;

/// The counter's second word for the next rng: a bit no draw's counter has set.
const NEXT_KEY_COUNTER: u32 = 1 << 31;

/// Where a block number goes in the counter's second word: above the draw index's high
/// word (below 2^16: 2^48 draws), below the next rng's bit (15 bits, 32768 blocks).
const BLOCK_SHIFT: i64 = 16;

/// The high and low words of the 64-bit product of two 32-bit words.
fn mulhilo(g: &mut Block, a: &Value, b: &Value) -> (Value, Value) {
    let a = g.cast(Cast::ExtUI, a, ScalarType::I64);
    let b = g.cast(Cast::ExtUI, b, ScalarType::I64);
    let p = g.arith(Arith::MulI, &a, &b);
    let shift = g.constant_int(32, ScalarType::I64);
    let hi = g.shrui(&p, &shift);
    (g.cast(Cast::TruncI, &hi, ScalarType::I32), g.cast(Cast::TruncI, &p, ScalarType::I32))
}

fn word(g: &mut Block, w: u32) -> Value {
    g.constant_int(w as i32 as i64, ScalarType::I32)
}

/// Philox4x32-10 of counter `c` under key `k` (i32 words).
pub fn philox(g: &mut Block, c: &[Value; 4], k: &[Value; 2]) -> [Value; 4] {
    let (m0, m1) = (word(g, MULTIPLIERS[0]), word(g, MULTIPLIERS[1]));
    let (w0, w1) = (word(g, WEYL[0]), word(g, WEYL[1]));
    let mut c = c.clone();
    let mut k = k.clone();
    for round in 0..ROUNDS {
        if round > 0 {
            k = [g.arith(Arith::AddI, &k[0], &w0), g.arith(Arith::AddI, &k[1], &w1)];
        }
        let (hi0, lo0) = mulhilo(g, &m0, &c[0]);
        let (hi1, lo1) = mulhilo(g, &m1, &c[2]);
        let x0 = g.arith(Arith::XOrI, &hi1, &c[1]);
        let x0 = g.arith(Arith::XOrI, &x0, &k[0]);
        let x2 = g.arith(Arith::XOrI, &hi0, &c[3]);
        let x2 = g.arith(Arith::XOrI, &x2, &k[1]);
        c = [x0, lo1, x2, lo0];
    }
    c
}

/// The four words of an rng value: key (2), stream (2).
fn key_words(g: &mut Block, key: &Value) -> [Value; 4] {
    std::array::from_fn(|j| {
        let at = g.constant_index(j as i64);
        g.tensor_extract(key, &[at])
    })
}

/// The random words of one draw: block `b` is Philox of the counter
/// (index mod 2^32, index / 2^32 + b * 2^16, s0, s1) under the key, so a draw that needs
/// more than one block's numbers (a rejection loop) reads blocks 0, 1, ...
pub struct Source {
    low: Value,
    high: Value,
    stream: [Value; 2],
    key: [Value; 2],
}

impl Source {
    /// The source of the draw at flat index `flat` (an `index`) from rng value `key`.
    pub fn new(g: &mut Block, flat: &Value, key: &Value) -> Source {
        let flat = g.index_cast(flat, ScalarType::I64);
        let shift = g.constant_int(32, ScalarType::I64);
        let high = g.shrui(&flat, &shift);
        let [k0, k1, s0, s1] = key_words(g, key);
        Source {
            low: g.cast(Cast::TruncI, &flat, ScalarType::I32),
            high: g.cast(Cast::TruncI, &high, ScalarType::I32),
            stream: [s0, s1],
            key: [k0, k1],
        }
    }

    /// The source of part `i` (an `index`) of a draw that takes several independent
    /// parts (a multinomial's binomials): the key's second word mixed with i, so each
    /// part's blocks are another stream.
    pub fn part(&self, g: &mut Block, i: &Value) -> Source {
        let i = g.index_cast(i, ScalarType::I32);
        let one = word(g, 1);
        let i1 = g.arith(Arith::AddI, &i, &one);
        let golden = word(g, WEYL[0]);
        let mix = g.arith(Arith::MulI, &i1, &golden);
        let k1 = g.arith(Arith::XOrI, &self.key[1], &mix);
        Source { low: self.low.clone(), high: self.high.clone(), stream: self.stream.clone(), key: [self.key[0].clone(), k1] }
    }

    /// Block `block` (an i32 value) of this draw's words.
    pub fn block(&self, g: &mut Block, block: &Value) -> [Value; 4] {
        let shift = g.constant_int(BLOCK_SHIFT, ScalarType::I32);
        let b = g.shli(block, &shift);
        let second = g.arith(Arith::OrI, &self.high, &b);
        let counter = [self.low.clone(), second, self.stream[0].clone(), self.stream[1].clone()];
        philox(g, &counter, &self.key)
    }

    /// Block `block`, a constant.
    pub fn block_at(&self, g: &mut Block, block: u32) -> [Value; 4] {
        let b = word(g, block);
        self.block(g, &b)
    }

    /// Two uniform numbers in [0, 1) of type `work` from block `block`.
    pub fn uniforms(&self, g: &mut Block, block: &Value, work: DType) -> [Value; 2] {
        let w = self.block(g, block);
        uniforms(g, &w, work)
    }

    pub fn uniforms_at(&self, g: &mut Block, block: u32, work: DType) -> [Value; 2] {
        let b = word(g, block);
        self.uniforms(g, &b, work)
    }
}

/// Two uniform numbers in [0, 1) of type `work` from Philox's four words: 53 bits each
/// (two words) in f64, 24 bits (one word) in f32, as numpy makes doubles and floats.
fn uniforms(g: &mut Block, w: &[Value; 4], work: DType) -> [Value; 2] {
    let t = scalar::scalar_type(work);
    if work == DType::Float32 {
        return std::array::from_fn(|h| {
            let eight = g.constant_int(8, ScalarType::I32);
            let x = g.shrui(&w[2 * h], &eight);
            let x = g.cast(Cast::UIToFP, &x, t);
            let scale = g.constant_f64(2f64.powi(-24), t);
            g.arith(Arith::MulF, &x, &scale)
        });
    }
    std::array::from_fn(|h| {
        let hi = g.cast(Cast::ExtUI, &w[2 * h], ScalarType::I64);
        let lo = g.cast(Cast::ExtUI, &w[2 * h + 1], ScalarType::I64);
        let (five, six, bits) = (g.constant_int(5, ScalarType::I64), g.constant_int(6, ScalarType::I64), g.constant_int(26, ScalarType::I64));
        let hi = g.shrui(&hi, &five);
        let hi = g.shli(&hi, &bits);
        let lo = g.shrui(&lo, &six);
        let x = g.arith(Arith::OrI, &hi, &lo);
        let x = g.cast(Cast::UIToFP, &x, t);
        let scale = g.constant_f64(2f64.powi(-53), t);
        g.arith(Arith::MulF, &x, &scale)
    })
}

/// Word `j` (an `index`) of the next rng: Philox of the reserved counter (0, 2^31, s0, s1)
/// under the key.
pub fn next_key_word(g: &mut Block, key: &Value, j: &Value) -> Value {
    let [k0, k1, s0, s1] = key_words(g, key);
    let zero = g.constant_int(0, ScalarType::I32);
    let reserved = word(g, NEXT_KEY_COUNTER);
    let words = philox(g, &[zero, reserved, s0, s1], &[k0, k1]);
    let mut out = words[3].clone();
    for (i, w) in words.iter().enumerate().take(3).rev() {
        let at = g.constant_index(i as i64);
        let here = g.cmpi(CmpI::Eq, j, &at);
        out = g.select(&here, w, &out);
    }
    out
}
