//! Several tensors carried by one `scf.for` as one flat tensor.
//!
//! IREE 3.13 mixes up the buffers of a loop that carries several tensors, measured with
//! `Scan`s of two states (iree-compile/iree-run-module on the dumped modules, full HAL):
//! two states started from one value (PyTensor's CSE merges equal initial buffers) came
//! out as one, and an integer and a float state each came out with the other's bytes, with
//! or without optimization barriers on the starts or the results. One carried tensor is
//! right (every loop of linalg.rs carries one), so the states are packed: each part is a
//! range of one vector, in C order. Parts of one element type are stored as they are;
//! mixed types go into 64-bit integer slots (floats by their bits, integers extended and
//! truncated back), which every storage type fits.

use crate::mlir::{AffineMap, Block, Cast, IndexArg, IteratorType, ScalarType, TensorType, Value};

pub struct Part {
    pub element: ScalarType,
    /// The part's dims (every axis), as index values computed before the loop.
    pub sizes: Vec<Value>,
    offset: Value,
    /// Elements per row (the product of the dims after the first; 1 for a vector).
    row: Value,
}

pub struct Packed {
    pub element: ScalarType,
    pub parts: Vec<Part>,
}

impl Packed {
    /// The layout of `tensors` and the packed vector holding their values; a tensor whose
    /// `written` is false only gives its part's size (the loop writes all of it before
    /// reading it, and copying an uninitialized `tensor.empty` fails to compile for
    /// Vulkan: "failed to legalize hal.interface.binding.subspan").
    pub fn pack(b: &mut Block, tensors: &[Value], written: &[bool]) -> (Packed, Value) {
        let first = tensors.first().map(|t| t.tensor().element);
        let element = match first {
            Some(e) if tensors.iter().all(|t| t.tensor().element == e) => e,
            _ => ScalarType::I64,
        };
        let mut offset = b.constant_index(0);
        let mut parts = Vec::with_capacity(tensors.len());
        for t in tensors {
            let ty = t.tensor().clone();
            let sizes: Vec<Value> = (0..ty.rank())
                .map(|a| match ty.shape[a] {
                    Some(s) => b.constant_index(s as i64),
                    None => b.tensor_dim(t, a),
                })
                .collect();
            let mut row = b.constant_index(1);
            for s in sizes.iter().skip(1) {
                row = b.arith(crate::mlir::Arith::MulI, &row, s);
            }
            let size = match sizes.first() {
                Some(n) => b.arith(crate::mlir::Arith::MulI, n, &row),
                None => row.clone(),
            };
            parts.push(Part { element: ty.element, sizes, offset: offset.clone(), row });
            offset = b.arith(crate::mlir::Arith::AddI, &offset, &size);
        }
        let packed = Packed { element, parts };
        let empty = b.tensor_empty(TensorType::new(vec![None], element), &[offset]);
        let mut v = empty;
        for (k, t) in tensors.iter().enumerate().filter(|&(k, _)| written[k]) {
            let at = packed.parts[k].offset.clone();
            v = packed.write_at(b, &v, k, t, &at);
        }
        (packed, v)
    }

    /// Row `r` of part `k` (a tensor of the part's rank less one, dynamic dims).
    pub fn read_row(&self, b: &mut Block, packed: &Value, k: usize, r: &Value) -> Value {
        let p = &self.parts[k];
        let skip = b.arith(crate::mlir::Arith::MulI, r, &p.row);
        let at = b.arith(crate::mlir::Arith::AddI, &p.offset, &skip);
        self.read_at(b, packed, k, &at, &p.sizes[1..].to_vec())
    }

    /// All of part `k` (dynamic dims).
    pub fn read_all(&self, b: &mut Block, packed: &Value, k: usize) -> Value {
        let p = &self.parts[k];
        let (at, sizes) = (p.offset.clone(), p.sizes.clone());
        self.read_at(b, packed, k, &at, &sizes)
    }

    /// `packed` with row `r` of part `k` replaced by `v`.
    pub fn write_row(&self, b: &mut Block, packed: &Value, k: usize, r: &Value, v: &Value) -> Value {
        let p = &self.parts[k];
        let skip = b.arith(crate::mlir::Arith::MulI, r, &p.row);
        let at = b.arith(crate::mlir::Arith::AddI, &p.offset, &skip);
        self.write_at(b, packed, k, v, &at)
    }

    /// `packed` with all of part `k` replaced by `v`.
    pub fn write_all(&self, b: &mut Block, packed: &Value, k: usize, v: &Value) -> Value {
        let at = self.parts[k].offset.clone();
        self.write_at(b, packed, k, v, &at)
    }

    fn read_at(&self, b: &mut Block, packed: &Value, k: usize, at: &Value, sizes: &[Value]) -> Value {
        let element = self.parts[k].element;
        // A 0-d value is one element: a static length, so it unflattens to 0-d.
        let len = if sizes.is_empty() {
            IndexArg::Const(1)
        } else {
            let mut n = sizes[0].clone();
            for s in &sizes[1..] {
                n = b.arith(crate::mlir::Arith::MulI, &n, s);
            }
            IndexArg::Dyn(n)
        };
        let flat = b.tensor_extract_slice(packed, &[IndexArg::Dyn(at.clone())], &[len]);
        let flat = convert(b, &flat, element, self.element, self.element);
        let to = TensorType::new(vec![None; sizes.len()], element);
        let dims: Vec<IndexArg> = sizes.iter().map(|s| IndexArg::Dyn(s.clone())).collect();
        b.tensor_unflatten(&flat, to, &dims)
    }

    fn write_at(&self, b: &mut Block, packed: &Value, k: usize, v: &Value, at: &Value) -> Value {
        let flat = b.tensor_flatten(v);
        let flat = convert(b, &flat, self.element, self.parts[k].element, self.element);
        b.tensor_insert_slice(&flat, packed, &[IndexArg::Dyn(at.clone())])
    }
}

/// Vector `v` of element type `from` as `to`, one of them the container type `slot`.
fn convert(b: &mut Block, v: &Value, to: ScalarType, from: ScalarType, slot: ScalarType) -> Value {
    if to == from {
        return v.clone();
    }
    let ty = v.tensor().clone();
    let sizes: Vec<Value> = if ty.shape[0].is_none() { vec![b.tensor_dim(v, 0)] } else { Vec::new() };
    let out = b.tensor_empty(TensorType::new(ty.shape.clone(), to), &sizes);
    let maps = vec![AffineMap::identity(1); 2];
    let r = b.linalg_generic(std::slice::from_ref(v), &[out], &maps, &[IteratorType::Parallel], |g, args| {
        let x = &args[0];
        let y = if to == slot {
            into_slot(g, x, from, slot)
        } else {
            from_slot(g, x, to, slot)
        };
        Ok::<_, String>(vec![y])
    });
    match r {
        Ok(r) => r[0].clone(),
        Err(e) => unreachable!("{e}"),
    }
}

/// A value of type `from` in a slot of type `slot` (64-bit integer for mixed parts).
fn into_slot(b: &mut Block, x: &Value, from: ScalarType, slot: ScalarType) -> Value {
    debug_assert_eq!(slot, ScalarType::I64);
    if from.is_float() {
        let bits = b.cast(Cast::Bitcast, x, ScalarType::int(from.bits()));
        return if from.bits() == 64 { bits } else { b.cast(Cast::ExtUI, &bits, slot) };
    }
    b.cast(Cast::ExtUI, x, slot)
}

/// The value of type `to` a slot holds.
fn from_slot(b: &mut Block, x: &Value, to: ScalarType, slot: ScalarType) -> Value {
    debug_assert_eq!(slot, ScalarType::I64);
    let bits = if to.bits() == 64 { x.clone() } else { b.cast(Cast::TruncI, x, ScalarType::int(to.bits())) };
    if to.is_float() {
        b.cast(Cast::Bitcast, &bits, to)
    } else {
        bits
    }
}
