//! `Dot`, `Dot22` and `BatchedDot`: linalg's named contractions on a zero-filled
//! accumulator.
//!
//! The C backend's BLAS Ops (`Dot22Scalar`, `Gemm`, `Gemv`, `Ger`) never reach this
//! backend: the mode excludes the `BlasOpt` rewrites that make them (see
//! `MLIRLinker.incompatible_rewrites`), so `alpha * dot(x, y) + beta * z` stays a `Dot`
//! and an elementwise `Composite`, which IREE fuses itself. Neither PyTensor's JAX nor
//! its Numba backend lowers them either.

use super::shapes::Dim;
use super::{elemwise, scalar, tensor_type, Context};
use crate::dtype::DType;
use crate::ir::Node;
use crate::mlir::{Arith, Block, CmpI, Contraction, IndexArg, ScalarType, TensorType, Value};

pub fn dot(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (xa, xb, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (ta, tb, to) = (cx.graph.ty(xa).clone(), cx.graph.ty(xb).clone(), cx.graph.ty(out).clone());
    if to.dtype == DType::Bool {
        return Err("dot of bool".into());
    }
    let op = match (ta.ndim(), tb.ndim()) {
        (2, 2) => Contraction::Matmul,
        (2, 1) => Contraction::Matvec,
        (1, 2) => Contraction::Vecmat,
        (1, 1) => Contraction::Dot,
        (ra, rb) => return Err(format!("dot of ranks {ra} and {rb}")),
    };
    let (da, db) = (cx.dims(xa), cx.dims(xb));
    cx.require_equal(da[ta.ndim() - 1], db[0], name);
    let va = cx.value(b, xa)?;
    let vb = cx.value(b, xb)?;
    let a = elemwise::cast(b, &va, &ta, to.dtype)?;
    let bb = elemwise::cast(b, &vb, &tb, to.dtype)?;
    let mut sizes = Vec::new();
    let mut dims: Vec<Dim> = Vec::new();
    if ta.ndim() == 2 {
        if to.shape[0].is_none() {
            sizes.push(b.tensor_dim(&a, 0));
        }
        dims.push(da[0]);
    }
    if tb.ndim() == 2 {
        if to.shape[dims.len()].is_none() {
            sizes.push(b.tensor_dim(&bb, 1));
        }
        dims.push(db[1]);
    }
    let empty = b.tensor_empty(tensor_type(&to), &sizes);
    let out_sizes = sizes.clone();
    let zero = scalar::scalar_constant(b, to.dtype, &vec![0u8; to.dtype.byte_size()])?;
    let plain = |b: &mut Block| {
        let init = b.linalg_fill(&zero.value, &empty);
        b.contraction(op, &a, &bb, &init)
    };
    let r = match scalar::packed_matmul() {
        Some(vector_bytes) if op == Contraction::Matmul && matches!(to.dtype, DType::Float32 | DType::Float64) => {
            let (m0, n0) = matmul_tiles(a.tensor().element, vector_bytes);
            let packed = |b: &mut Block| packed_matmul(b, &a, &bb, &zero.value, &empty, (m0, n0));
            // M, K and N with the least each needs to be packed: at least one tile of rows
            // and of columns (so the padded copies are under twice the operands) and
            // PACKED_MATMUL_MIN_K products per element of C (so unpacking C costs little).
            let operands = [(&a, 0, ta.shape[0], m0), (&a, 1, ta.shape[1], PACKED_MATMUL_MIN_K), (&bb, 1, tb.shape[1], n0)];
            let static_work = operands.iter().try_fold(1u64, |w, &(_, _, d, _)| d.map(|d| w.saturating_mul(d)));
            if operands.iter().any(|&(_, _, d, least)| d.is_some_and(|d| d < least)) || static_work.is_some_and(|w| w < PACKED_MATMUL_MIN_WORK) {
                plain(b)
            } else if static_work.is_some() {
                packed(b)
            } else {
                let index = |b: &mut Block, n: u64| b.constant_index(n as i64);
                let sizes: Vec<Value> = operands.iter().map(|&(src, axis, _, _)| b.tensor_dim(src, axis)).collect();
                // M * K * N < 2^56 in an index: each of M*K, K*N, M*N counts a buffer's elements.
                let mk = b.arith(Arith::MulI, &sizes[0], &sizes[1]);
                let work = b.arith(Arith::MulI, &mk, &sizes[2]);
                let min_work = index(b, PACKED_MATMUL_MIN_WORK);
                let mut large = b.cmpi(CmpI::Uge, &work, &min_work);
                for (size, &(_, _, _, least)) in sizes.iter().zip(&operands) {
                    let least = index(b, least);
                    let enough = b.cmpi(CmpI::Uge, size, &least);
                    large = b.arith(Arith::AndI, &large, &enough);
                }
                let ty = empty.ty().clone();
                let r = b.scf_if_values(&large, &[ty], |b| vec![packed(b)], |b| vec![plain(b)]).remove(0);
                // The full HAL (a Scan's loop around this dot) must see the result's sizes.
                b.tie_shape(&r, &out_sizes)
            }
        }
        _ => plain(b),
    };
    cx.define(out, r, dims);
    Ok(())
}

/// The work (M * K * N) from which a float matmul is packed (see [`packed_matmul`]); smaller
/// ones run IREE's plain kernel, which the copies would only slow down while the operands
/// sit in cache. Per call, process time, one thread (iree-benchmark-module, AVX-512, plain
/// -> packed): f64 128^3 46 -> 52 us, 256^3 369 -> 356 us, 512^3 3.7 -> 3.6 ms, 768^3
/// 14.7 -> 11.0 ms; f32 512^3 1.29 -> 1.32 ms, 768^3 4.4 -> 4.8 ms, 1000^3 10.0 -> 11.2 ms,
/// but 1024^3 18.2 -> 11.6 ms and 1536^3 53 -> 42 ms (the plain kernel falls off on large
/// and power-of-two strides); 4x4 1 -> 2 us (three more dispatches).
const PACKED_MATMUL_MIN_WORK: u64 = 1 << 27;

/// The least K of a packed matmul (see the sizes checked in [`dot`]).
const PACKED_MATMUL_MIN_K: u64 = 16;

/// The (M0, N0) tiles of a packed matmul of `element`s for vector registers of
/// `vector_bytes` (see [`packed_matmul`]).
fn matmul_tiles(element: ScalarType, vector_bytes: u32) -> (u64, u64) {
    (u64::from(vector_bytes / (element.bits() / 8)), u64::from(vector_bytes / 4))
}

/// `a @ bm` into `out` (unfilled) through tiled copies of the operands: `linalg.pack` A
/// into tiles of (M0, 1), B transposed into tiles of (N0, 1), `linalg.mmt4d`, unpack. The
/// tiles are IREE's own for f32 on x86 (what its data tiling picks: 16x16 with AVX-512,
/// 8x8 with AVX2) and, for f64, as many rows (8, 4) of the same width in elements: an
/// accumulator of half the registers. IREE's x86 data tiling has no f64 tiles, and its
/// plain matmul kernel runs at about half the speed of the tiled one. 1024x1024, one
/// thread, process time (iree-benchmark-module, median of 7, twice): f64 45 -> 26 ms,
/// f32 19 -> 12 ms with AVX-512; with AVX2 (`-target-cpu=haswell`) 112 -> 47 ms and
/// 61 -> 23 ms. Wider f32 tiles (2 vectors) ran 50-80x slower.
fn packed_matmul(b: &mut Block, a: &Value, bm: &Value, zero: &Value, out: &Value, (m0, n0): (u64, u64)) -> Value {
    let element = a.tensor().element;
    let tile_count = |b: &mut Block, src: &Value, axis: usize, tile: u64| {
        let n = b.tensor_dim(src, axis);
        let t = b.constant_index(tile as i64);
        b.arith(Arith::CeilDivUI, &n, &t)
    };
    let m1 = tile_count(b, a, 0, m0);
    let n1 = tile_count(b, bm, 1, n0);
    let k = b.tensor_dim(a, 1);
    let tiled = |inner: [u64; 2]| TensorType::new(vec![None, None, Some(inner[0]), Some(inner[1])], element);
    let a_empty = b.tensor_empty(tiled([m0, 1]), &[m1.clone(), k.clone()]);
    let a_tiles = b.linalg_pack(a, &a_empty, zero, &[0, 1], &[0, 1], &[m0, 1]);
    let b_empty = b.tensor_empty(tiled([n0, 1]), &[n1.clone(), k]);
    let b_tiles = b.linalg_pack(bm, &b_empty, zero, &[1, 0], &[1, 0], &[n0, 1]);
    let c_empty = b.tensor_empty(tiled([m0, n0]), &[m1.clone(), n1.clone()]);
    let c_init = b.linalg_fill(zero, &c_empty);
    // K in chunks (see K_CHUNK_BYTES), each chunk's product added into the tiles of C.
    let chunk = b.constant_index(K_CHUNK_BYTES / i64::from(element.bits() / 8));
    let first = b.constant_index(0);
    let k = b.tensor_dim(a, 1);
    let c_tiles = b
        .scf_for(&first, &k, &chunk, &[c_init], |g, from, acc| {
            let left = g.arith(Arith::SubI, &k, from);
            let len = g.arith(Arith::MinUI, &left, &chunk);
            let part = |g: &mut Block, tiles: &Value, count: &Value, tile: u64| {
                let (z, at) = (IndexArg::Const(0), IndexArg::Dyn(from.clone()));
                g.tensor_extract_slice(tiles, &[z.clone(), at, z.clone(), z], &[IndexArg::Dyn(count.clone()), IndexArg::Dyn(len.clone()), IndexArg::Const(tile as i64), IndexArg::Const(1)])
            };
            let a_part = part(g, &a_tiles, &m1, m0);
            let b_part = part(g, &b_tiles, &n1, n0);
            Ok::<_, String>(vec![g.contraction(Contraction::Mmt4d, &a_part, &b_part, &acc[0])])
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
    b.linalg_unpack(&c_tiles[0], out, &[0, 1], &[m0, n0])
}

/// The bytes of each tile row of a K chunk of a packed matmul. One `linalg.mmt4d` over the
/// whole K computes each tile of C over all of K before the next, so every row of tiles of
/// C streamed all of B's tiles (8 MB at 1024^2 f64) from past the L2 cache; with K in chunks
/// of 128 f64 (256 f32) a chunk's B tiles are 1 MB at N = 1024, and stay there while each
/// row of tiles of C takes its share. 1024^3 f64, one thread, iree-benchmark-module,
/// medians of 3, twice (Intel Xeon, AVX-512, 2 MB L2 a core): whole K 59-64 ms, chunks of
/// 32, 64, 96, 128, 256, 512: 46, 42-43, 40-41, 40-42, 47-54, 61-68 ms.
const K_CHUNK_BYTES: i64 = 1024;

/// `BatchedDot`: `linalg.batch_matmul`. PyTensor never broadcasts its batch dim (the C
/// backend raises `ValueError` on unequal batch or summed sizes), so both are checked
/// equal before the call.
pub fn batched_dot(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (xa, xb, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (ta, tb, to) = (cx.graph.ty(xa).clone(), cx.graph.ty(xb).clone(), cx.graph.ty(out).clone());
    if (ta.ndim(), tb.ndim(), to.ndim()) != (3, 3, 3) {
        return Err(format!("BatchedDot of ranks {} and {}", ta.ndim(), tb.ndim()));
    }
    if to.dtype == DType::Bool {
        return Err("BatchedDot of bool".into());
    }
    let (da, db) = (cx.dims(xa), cx.dims(xb));
    cx.require_equal(da[0], db[0], name);
    cx.require_equal(da[2], db[1], name);
    let va = cx.value(b, xa)?;
    let vb = cx.value(b, xb)?;
    let a = elemwise::cast(b, &va, &ta, to.dtype)?;
    let bb = elemwise::cast(b, &vb, &tb, to.dtype)?;
    // Each output dim with the operand that gives its size (the batch size from either,
    // since they are equal; the static one where there is one).
    let batch = if matches!(db[0], Dim::Static(_)) { db[0] } else { da[0] };
    let dims = vec![batch, da[1], db[2]];
    let mut sizes = Vec::new();
    for (axis, (src, src_axis)) in [(&a, 0), (&a, 1), (&bb, 2)].into_iter().enumerate() {
        if to.shape[axis].is_none() {
            sizes.push(b.tensor_dim(src, src_axis));
        }
    }
    let empty = b.tensor_empty(tensor_type(&to), &sizes);
    let zero = scalar::scalar_constant(b, to.dtype, &vec![0u8; to.dtype.byte_size()])?;
    let init = b.linalg_fill(&zero.value, &empty);
    let r = b.contraction(Contraction::BatchMatmul, &a, &bb, &init);
    cx.define(out, r, dims);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::ScalarTarget;

    /// The MLIR of `a @ b` for static (or `null`: dynamic) shapes, packed for AVX-512.
    fn dot(dtype: &str, a: &str, b: &str, c: &str) -> String {
        let var = |shape: &str, name: &str| format!(r#"{{"type": {{"kind": "tensor", "dtype": "{dtype}", "shape": {shape}}}, "name": {name}}}"#);
        let json = format!(
            r#"{{"variables": [{}, {}, {}], "inputs": [0, 1], "outputs": [2],
              "nodes": [{{"op": {{"type": "Dot", "props": {{}}}}, "inputs": [0, 1], "outputs": [2]}}]}}"#,
            var(a, "\"a\""),
            var(b, "\"b\""),
            var(c, "null")
        );
        let target = ScalarTarget { packed_matmul: Some(64), ..ScalarTarget::CPU };
        crate::compile_export(&json, target).unwrap().mlir
    }

    #[test]
    fn float_matmuls_pack_into_tiles_of_the_vector_width() {
        let f64 = dot("float64", "[517, 515]", "[515, 513]", "[517, 513]");
        assert!(f64.contains("linalg.mmt4d") && f64.contains("inner_tiles = [8, 16]") && !f64.contains("scf.if"), "{f64}");
        let f32 = dot("float32", "[517, 515]", "[515, 513]", "[517, 513]");
        assert!(f32.contains("inner_tiles = [16, 16]"), "{f32}");
        // Dynamic shapes: both kernels, chosen at run time.
        let dynamic = dot("float64", "[null, null]", "[null, null]", "[null, null]");
        assert!(dynamic.contains("scf.if") && dynamic.contains("linalg.mmt4d") && dynamic.contains("linalg.matmul"), "{dynamic}");
    }

    #[test]
    fn small_skinny_or_integer_matmuls_stay_plain() {
        for (dtype, a, b, c) in [
            ("float64", "[100, 100]", "[100, 100]", "[100, 100]"),
            ("float64", "[7, 65536]", "[65536, 4096]", "[7, 4096]"),
            ("float32", "[15, 65536]", "[65536, 4096]", "[15, 4096]"),
            ("float64", "[4096, 65536]", "[65536, 15]", "[4096, 15]"),
            ("float64", "[8192, 15]", "[15, 8192]", "[8192, 8192]"),
            ("float64", "[7, null]", "[null, null]", "[7, null]"),
            ("int64", "[1024, 1024]", "[1024, 1024]", "[1024, 1024]"),
        ] {
            let mlir = dot(dtype, a, b, c);
            assert!(!mlir.contains("mmt4d") && mlir.contains("linalg.matmul"), "{a} {b}: {mlir}");
        }
    }
}
