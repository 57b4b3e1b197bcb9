//! Reductions: `CAReduce` (`Sum`, `Prod`, `ProdWithoutZeros`, `Max`, `Min`, `All`,
//! `Any`), `Argmax`, `Softmax` and `LogSoftmax`. Each fold is a `linalg.generic` with
//! reduction iterators over the reduced axes, writing into an accumulator filled with the
//! fold's identity, so an empty reduction gives the identity as the C backend does.

use super::scalar::{self, Scalar};
use super::scalar_math::exp_log;
use super::shapes::Dim;
use super::column_folds::{column_folds, first_row_of};
use super::row_folds::{first_index_of, row_folds};
use super::{elemwise, tensor_type, Context, ErrorKind, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::{Node, Reduction, TensorType};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpF, CmpI, Contraction, IndexArg, IteratorType, ScalarType, Value};

/// PyTensor's axes (`None`: all; negative from the end) as sorted distinct axes.
fn normalize_axes(axis: Option<&[i64]>, ndim: usize) -> Result<Vec<usize>, String> {
    let Some(axis) = axis else {
        return Ok((0..ndim).collect());
    };
    let mut axes = Vec::with_capacity(axis.len());
    for &a in axis {
        let n = ndim as i64;
        if a < -n || a >= n {
            return Err(format!("axis {a} is out of range for an input of rank {ndim}"));
        }
        axes.push(if a < 0 { (a + n) as usize } else { a as usize });
    }
    axes.sort_unstable();
    axes.dedup();
    Ok(axes)
}

/// The kept axes, in order: the dims of a reduction's result.
fn kept(ndim: usize, axes: &[usize]) -> Vec<usize> {
    (0..ndim).filter(|d| !axes.contains(d)).collect()
}

/// The map from the input's iteration space to the reduced result.
fn kept_map(ndim: usize, axes: &[usize]) -> AffineMap {
    AffineMap { dims: ndim, results: kept(ndim, axes).into_iter().map(AffineExpr::Dim).collect() }
}

fn iterators(ndim: usize, axes: &[usize]) -> Vec<IteratorType> {
    (0..ndim).map(|d| if axes.contains(&d) { IteratorType::Reduction } else { IteratorType::Parallel }).collect()
}

/// An empty tensor of `ty` whose dynamic dims are `x`'s dims `source[p]`.
fn empty_like(b: &mut Block, ty: &TensorType, x: &Value, source: &[usize]) -> Value {
    let sizes: Vec<Value> = (0..ty.ndim()).filter(|&p| ty.shape[p].is_none()).map(|p| b.tensor_dim(x, source[p])).collect();
    b.tensor_empty(tensor_type(ty), &sizes)
}

/// A tensor element as scalar code sees it: bool bytes become `i1`.
fn load(b: &mut Block, arg: &Value, dtype: DType) -> Scalar {
    let value = if dtype == DType::Bool {
        let z = b.constant_int(0, ScalarType::I8);
        b.cmpi(CmpI::Ne, arg, &z)
    } else {
        arg.clone()
    };
    Scalar { value, dtype }
}

/// A scalar as a tensor element of `dtype`: converted, bool as a byte.
fn store(b: &mut Block, s: &Scalar, dtype: DType) -> Value {
    let v = scalar::convert(b, s, dtype).value;
    if dtype == DType::Bool {
        b.cast(Cast::ExtUI, &v, ScalarType::I8)
    } else {
        v
    }
}

/// The least value of `dtype` as stored (`-inf` for floats).
fn lowest(b: &mut Block, dtype: DType) -> Value {
    let ty = scalar::storage_type(dtype);
    if dtype.is_float() {
        b.constant_f64(f64::NEG_INFINITY, ty)
    } else if dtype.is_signed_int() {
        b.constant_int(i64::MIN >> (64 - ty.bits()), ty)
    } else {
        b.constant_int(0, ty)
    }
}

/// The greatest value of `dtype` as stored (`inf` for floats).
fn highest(b: &mut Block, dtype: DType) -> Value {
    let ty = scalar::storage_type(dtype);
    if dtype.is_float() {
        b.constant_f64(f64::INFINITY, ty)
    } else if dtype.is_signed_int() {
        b.constant_int(i64::MAX >> (64 - ty.bits()), ty)
    } else if dtype == DType::Bool {
        b.constant_int(1, ty)
    } else {
        // All ones: the unsigned maximum of any width.
        b.constant_int(-1, ty)
    }
}

fn small(b: &mut Block, dtype: DType, v: i64) -> Value {
    let ty = scalar::storage_type(dtype);
    if dtype.is_float() {
        b.constant_f64(v as f64, ty)
    } else {
        b.constant_int(v, ty)
    }
}

/// The identity of a fold of elements of `x_dtype`, as stored in `acc_dtype`. The C
/// backend takes a max or min's identity from the input's dtype (`NPY_MAX_INT16` for an
/// int16 input accumulating in int64), so an empty fold gives the input dtype's extreme,
/// not the accumulator's (int64's maximum cast back to int16 would be -1).
fn identity(b: &mut Block, r: Reduction, x_dtype: DType, acc_dtype: DType) -> Value {
    // An integer accumulator cannot hold a float input's infinities.
    let from = if x_dtype.is_float() && !acc_dtype.is_float() { acc_dtype } else { x_dtype };
    let value = match r {
        // MulWithoutZeros's identity is 0, "no factor yet" (an all-zero row gives 0).
        Reduction::Sum | Reduction::Any | Reduction::ProdWithoutZeros => small(b, from, 0),
        Reduction::Prod | Reduction::All => small(b, from, 1),
        Reduction::Max => lowest(b, from),
        Reduction::Min => highest(b, from),
    };
    let value = load(b, &value, from);
    store(b, &value, acc_dtype)
}

/// The C backend's float max (`greater`: `CmpF::Ogt`) or min (`CmpF::Olt`) step:
/// `x (greater) acc ? x : acc (greater or equal) x ? acc : nan`. Of equal values the
/// accumulator, the earlier one, stays (so of -0.0 and +0.0 the first seen, where
/// `arith.maximumf` orders -0.0 below +0.0), and a nan on either side gives nan.
fn float_extreme(b: &mut Block, greater: CmpF, or_equal: CmpF, acc: &Value, x: &Value) -> Value {
    let nan = b.constant_f64(f64::NAN, x.scalar());
    let take_x = b.cmpf(greater, x, acc);
    let keep_acc = b.cmpf(or_equal, acc, x);
    let kept = b.select(&keep_acc, acc, &nan);
    b.select(&take_x, x, &kept)
}

/// `acc (op) x` for stored values of `dtype` (bools are 0/1 bytes).
fn combine(b: &mut Block, r: Reduction, dtype: DType, acc: &Value, x: &Value) -> Value {
    let (float, signed, boolean) = (dtype.is_float(), dtype.is_signed_int(), dtype == DType::Bool);
    let op = match r {
        Reduction::Sum if boolean => Arith::OrI,
        Reduction::Sum if float => Arith::AddF,
        Reduction::Sum => Arith::AddI,
        Reduction::Prod if boolean => Arith::AndI,
        Reduction::Prod if float => Arith::MulF,
        Reduction::Prod => Arith::MulI,
        Reduction::ProdWithoutZeros => {
            // PyTensor's MulWithoutZeros: a == 0 ? b : b == 0 ? a : a * b.
            let zero = small(b, dtype, 0);
            let is_zero = |b: &mut Block, v: &Value| if float { b.cmpf(CmpF::Oeq, v, &zero) } else { b.cmpi(CmpI::Eq, v, &zero) };
            let (acc_zero, x_zero) = (is_zero(b, acc), is_zero(b, x));
            let product = combine(b, Reduction::Prod, dtype, acc, x);
            let skip_x = b.select(&x_zero, acc, &product);
            return b.select(&acc_zero, x, &skip_x);
        }
        Reduction::Max if float => return float_extreme(b, CmpF::Ogt, CmpF::Oge, acc, x),
        Reduction::Max if signed => Arith::MaxSI,
        Reduction::Max => Arith::MaxUI,
        Reduction::Min if float => return float_extreme(b, CmpF::Olt, CmpF::Ole, acc, x),
        Reduction::Min if signed => Arith::MinSI,
        Reduction::Min => Arith::MinUI,
        // On 0/1 bytes (All and Any are of bools), and/or are the logical ops.
        Reduction::All => Arith::AndI,
        Reduction::Any => Arith::OrI,
    };
    b.arith(op, acc, x)
}

/// Folds `x` (of `x_dtype`) over `axes` into a tensor of `acc` (the kept dims), each
/// element converted to `acc.dtype` first.
fn fold(b: &mut Block, r: Reduction, x: &Value, x_dtype: DType, axes: &[usize], acc: &TensorType) -> Value {
    let ndim = x.tensor().rank();
    let init = filled_like(b, r, x_dtype, acc, x, &kept(ndim, axes));
    fold_into(b, r, x, x_dtype, axes, init, acc.dtype)
}

/// Reduced extents below this (static) stay plain folds: a contraction gains nothing there.
const CONTRACTION_MIN: u64 = 16;

/// A float sum over leading axes as a contraction with a vector of ones: `x` as a matrix,
/// its leading axes summed by a vector-matrix product, all axes by a dot. IREE 3.13
/// vectorizes contractions with lane-wise accumulators and fuses the fill of ones into the
/// dispatch. Measured through our runtime (f64, aligned input, process time): 1e7-element
/// sum 8.7 -> 4.0 ms; a (1000, 10000) matrix over its first axis 26 -> 6 ms. Trailing axes
/// with kept ones before them stay plain folds: there IREE's matvec of dynamic shape lost
/// to the fold (f64, one process, median of 7, the fold's times second: 1000x1000 over axis
/// 1 989 -> 283 us, NUMBA 229; 1000x10000 11.8 -> 6.3 ms; 100x100000 115 -> 18 ms; its
/// kernel spills its accumulators to the stack). `x * 1` is `x` exactly, so only the order
/// of the additions changes (as numpy's pairwise sum orders them its own way). `None` where
/// it does not apply: other folds, dtypes or axes, a short static extent, or a GPU target
/// (IREE's GPU codegen fails on these contractions, see `scalar::has_sum_contractions`).
fn sum_as_contraction(b: &mut Block, r: Reduction, x: &Value, x_dtype: DType, axes: &[usize], acc: &TensorType) -> Option<Value> {
    let float = |d: DType| matches!(d, DType::Float32 | DType::Float64);
    if !scalar::has_sum_contractions() || r != Reduction::Sum || axes.is_empty() || !float(x_dtype) || !float(acc.dtype) || acc.dtype.bits() < x_dtype.bits() {
        return None;
    }
    let t = x.tensor().clone();
    let ndim = t.rank();
    let k = axes.len();
    if !axes.iter().copied().eq(0..k) {
        return None;
    }
    if axes.iter().try_fold(1u64, |n, &a| t.shape[a].map(|d| n * d)).is_some_and(|n| n < CONTRACTION_MIN) {
        return None;
    }
    // x as a vector (all axes) or a matrix (reduced axes in dim 0, kept ones in dim 1).
    let (reduced, kept_axes): (Vec<usize>, Vec<usize>) = ((0..k).collect(), (k..ndim).collect());
    let groups: Vec<Vec<usize>> = if kept_axes.is_empty() { vec![reduced.clone()] } else { vec![reduced.clone(), kept_axes.clone()] };
    let xm = b.tensor_collapse(x, &groups);
    let reduced_dim = 0;
    let n = xm.tensor().shape[reduced_dim];
    let element = x.tensor().element;
    let ones_sizes: Vec<Value> = if n.is_none() { vec![b.tensor_dim(&xm, reduced_dim)] } else { vec![] };
    let ones_empty = b.tensor_empty(crate::mlir::TensorType::new(vec![n], element), &ones_sizes);
    let one = b.constant_f64(1.0, element);
    let ones = b.linalg_fill(&one, &ones_empty);
    // The contraction's result has one dim, the kept axes merged (none for a dot); with at
    // most one kept axis that is the reduction's result itself.
    let kept_in_xm: Vec<usize> = if kept_axes.is_empty() { vec![] } else { vec![1] };
    let merged = TensorType { dtype: acc.dtype, shape: kept_in_xm.iter().map(|&d| xm.tensor().shape[d]).collect() };
    let result_ty = if kept_axes.len() <= 1 { acc } else { &merged };
    let init = filled_like(b, r, x_dtype, result_ty, &xm, &kept_in_xm);
    let sum = if kept_axes.is_empty() { b.contraction(Contraction::Dot, &xm, &ones, &init) } else { b.contraction(Contraction::Vecmat, &ones, &xm, &init) };
    if kept_axes.len() <= 1 {
        return Some(sum);
    }
    let sizes: Vec<IndexArg> = kept_axes
        .iter()
        .zip(&acc.shape)
        .map(|(&d, &static_size)| match static_size {
            Some(n) => IndexArg::Const(n as i64),
            None => IndexArg::Dyn(b.tensor_dim(x, d)),
        })
        .collect();
    Some(b.tensor_expand(&sum, &[(0..kept_axes.len()).collect()], tensor_type(acc), &sizes))
}

/// A fold along the last axis alone of a tensor of rank >= 2, or over all axes (one row of
/// all the elements), as one sequential kernel over its rows (row_folds.rs; CPU targets):
/// the folds `kernel_fold` takes. `None` where that does not apply (folds over leading
/// axes: `fold_of_columns`).
fn fold_of_rows(cx: &mut Context, b: &mut Block, r: Reduction, x: &Value, x_dtype: DType, axes: &[usize], acc: &TensorType) -> Option<Value> {
    if !kernel_fold(r, x_dtype, acc.dtype) {
        return None;
    }
    let (flat, rows, k) = as_rows(b, x, axes)?;
    let stored = scalar::storage_type(acc.dtype);
    let init = |g: &mut Block| identity(g, r, x_dtype, acc.dtype);
    let step = |g: &mut Block, earlier: &Value, later: &Value| combine(g, r, acc.dtype, earlier, later);
    let first_zero = r != Reduction::Sum && x_dtype.is_float();
    let folds = row_folds(cx, b, &flat, (&rows, &k), stored, &init, &step, first_zero);
    Some(from_rows(b, &folds, x, axes, acc))
}

/// `x` as rows for the row kernels where `axes` are its last axis (rank >= 2) or all its
/// axes (one row): (x flattened, rows, row length); `None` for other axes.
fn as_rows(b: &mut Block, x: &Value, axes: &[usize]) -> Option<(Value, Value, Value)> {
    let ndim = x.tensor().rank();
    let whole = ndim >= 1 && axes.iter().copied().eq(0..ndim);
    if !(whole || (ndim >= 2 && axes == [ndim - 1])) {
        return None;
    }
    let (rows, k) = if whole {
        (b.constant_index(1), count(b, x, axes))
    } else {
        (count(b, x, &(0..ndim - 1).collect::<Vec<_>>()), b.tensor_dim(x, ndim - 1))
    };
    let flat = if ndim == 1 { x.clone() } else { b.tensor_flatten(x) };
    Some((flat, rows, k))
}

/// A row kernel's vector of results (see `as_rows`) as the reduction's result of type `ty`.
fn from_rows(b: &mut Block, results: &Value, x: &Value, axes: &[usize], ty: &TensorType) -> Value {
    let ndim = x.tensor().rank();
    if axes.len() == ndim {
        let single = b.tensor_cast(results, crate::mlir::TensorType::new(vec![Some(1)], results.tensor().element));
        return b.tensor_collapse(&single, &[]);
    }
    shaped(b, results, x, 0..ndim - 1, ty)
}

/// Whether a fold is one the row and column kernels take (on a CPU target): a float sum
/// accumulated in float64, or a max or min of numbers in their own dtype.
fn kernel_fold(r: Reduction, x_dtype: DType, acc: DType) -> bool {
    let float_sum = r == Reduction::Sum && matches!(x_dtype, DType::Float32 | DType::Float64) && acc == DType::Float64;
    let extreme = matches!(r, Reduction::Max | Reduction::Min) && x_dtype != DType::Bool && acc == x_dtype;
    scalar::has_sequential_kernels() && (float_sum || extreme)
}

/// A fold over the leading axes of a tensor of rank >= 2 as one sequential kernel over the
/// columns of x as a (reduced, kept) matrix (column_folds.rs; CPU targets): the folds
/// `kernel_fold` takes. `None` where that does not apply.
fn fold_of_columns(cx: &mut Context, b: &mut Block, r: Reduction, x: &Value, x_dtype: DType, axes: &[usize], acc: &TensorType) -> Option<Value> {
    let ndim = x.tensor().rank();
    if !kernel_fold(r, x_dtype, acc.dtype) || ndim < 2 || axes.is_empty() || axes.len() == ndim || !axes.iter().copied().eq(0..axes.len()) {
        return None;
    }
    let rows = count(b, x, axes);
    let cols = count(b, x, &(axes.len()..ndim).collect::<Vec<_>>());
    let flat = b.tensor_flatten(x);
    let stored = scalar::storage_type(acc.dtype);
    let init = |g: &mut Block| identity(g, r, x_dtype, acc.dtype);
    let step = |g: &mut Block, earlier: &Value, later: &Value| combine(g, r, acc.dtype, earlier, later);
    let folds = column_folds(cx, b, &flat, (&rows, &cols), stored, &init, &step);
    Some(shaped(b, &folds, x, axes.len()..ndim, acc))
}

/// A kernel's vector of results as the reduction's result: shaped as `x`'s `kept` axes, with
/// `acc`'s static sizes.
fn shaped(b: &mut Block, sums: &Value, x: &Value, kept: std::ops::Range<usize>, acc: &TensorType) -> Value {
    let sizes: Vec<IndexArg> = kept.clone().map(|a| b.dim_arg(x, a)).collect();
    let ty = crate::mlir::TensorType::new(x.tensor().shape[kept].to_vec(), sums.tensor().element);
    let sums = if ty.rank() == 1 { sums.clone() } else { b.tensor_unflatten(sums, ty, &sizes) };
    let ty = tensor_type(acc);
    if sums.tensor().shape != ty.shape { b.tensor_cast(&sums, ty) } else { sums }
}

/// A tensor of `acc` filled with the identity of a fold of `x_dtype` elements, its dynamic
/// dims `x`'s dims `source[p]`.
fn filled_like(b: &mut Block, r: Reduction, x_dtype: DType, acc: &TensorType, x: &Value, source: &[usize]) -> Value {
    let empty = empty_like(b, acc, x, source);
    let init_value = identity(b, r, x_dtype, acc.dtype);
    b.linalg_fill(&init_value, &empty)
}

/// Folds `x` over `axes` into `init` (of the kept dims, of `acc_dtype`).
fn fold_into(b: &mut Block, r: Reduction, x: &Value, x_dtype: DType, axes: &[usize], init: Value, acc_dtype: DType) -> Value {
    let ndim = x.tensor().rank();
    let maps = [AffineMap::identity(ndim), kept_map(ndim, axes)];
    let result = b.linalg_generic(&[x.clone()], &[init], &maps, &iterators(ndim, axes), |body, args| {
        let element = load(body, &args[0], x_dtype);
        let element = store(body, &element, acc_dtype);
        Ok::<_, String>(vec![combine(body, r, acc_dtype, &args[1], &element)])
    });
    result.expect("the reduction body cannot fail").remove(0)
}

/// An `i1` condition as the `tensor<i8>` flag a `RuntimeCheck` reads.
fn flag(b: &mut Block, failed: &Value) -> Value {
    let byte = b.cast(Cast::ExtUI, failed, ScalarType::I8);
    let empty = b.tensor_empty(crate::mlir::TensorType::new(vec![], ScalarType::I8), &[]);
    b.linalg_fill(&byte, &empty)
}

/// The number of elements over `axes` of `x`, as an `index`.
fn count(b: &mut Block, x: &Value, axes: &[usize]) -> Value {
    let mut n = b.constant_index(1);
    for &a in axes {
        let d = b.tensor_dim(x, a);
        n = b.arith(Arith::MulI, &n, &d);
    }
    n
}

pub fn careduce(
    cx: &mut Context,
    b: &mut Block,
    node: &Node,
    r: Reduction,
    axis: Option<&[i64]>,
    acc_dtype: Option<DType>,
    zero_size_raises: bool,
) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x_ty = cx.graph.ty(input).clone();
    let out_ty = cx.graph.ty(output).clone();
    let axes = normalize_axes(axis, x_ty.ndim())?;
    let acc = acc_dtype.unwrap_or(out_ty.dtype);
    if matches!(r, Reduction::All | Reduction::Any) && acc != DType::Bool {
        return Err(format!("{r:?} accumulating in {}", acc.name()));
    }
    let x = cx.value(b, input)?;
    if zero_size_raises {
        // The C backend's check: any reduced axis of size 0, even with an empty result.
        let reduced = count(b, &x, &axes);
        let zero = b.constant_index(0);
        let empty = b.cmpi(CmpI::Eq, &reduced, &zero);
        let failed = flag(b, &empty);
        let message = format!("Input of {r:?} has zero-size on a reduced axis (axes {axes:?})");
        cx.add_check(failed, RuntimeCheck { kind: ErrorKind::Value, message });
    }
    let acc_ty = TensorType { dtype: acc, shape: out_ty.shape.clone() };
    let folded = if let Some(folds) = fold_of_columns(cx, b, r, &x, x_ty.dtype, &axes, &acc_ty) {
        folds
    } else if let Some(folds) = fold_of_rows(cx, b, r, &x, x_ty.dtype, &axes, &acc_ty) {
        folds
    } else if let Some(sum) = sum_as_contraction(b, r, &x, x_ty.dtype, &axes, &acc_ty) {
        sum
    } else {
        fold(b, r, &x, x_ty.dtype, &axes, &acc_ty)
    };
    let result = elemwise::cast(b, &folded, &acc_ty, out_ty.dtype)?;
    let in_dims = cx.dims(input);
    let dims = kept(x_ty.ndim(), &axes).into_iter().map(|a| in_dims[a]).collect();
    cx.define(output, result, dims);
    Ok(())
}

/// numpy's argmax: the first index of the maximum, a nan counting as greater than any
/// number (so the first nan wins). The index is flat over the reduced axes in C order.
pub fn argmax(cx: &mut Context, b: &mut Block, node: &Node, axis: Option<&[i64]>) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x_ty = cx.graph.ty(input).clone();
    let out_ty = cx.graph.ty(output).clone();
    if out_ty.dtype != DType::Int64 {
        return Err(format!("an index of dtype {}", out_ty.dtype.name()));
    }
    let ndim = x_ty.ndim();
    let axes = normalize_axes(axis, ndim)?;
    let kept_axes = kept(ndim, &axes);
    let x = cx.value(b, input)?;
    let dtype = x_ty.dtype;

    // numpy raises for an empty reduced extent unless there is nothing to compute.
    let reduced = count(b, &x, &axes);
    let outputs = count(b, &x, &kept_axes);
    let zero = b.constant_index(0);
    let none_reduced = b.cmpi(CmpI::Eq, &reduced, &zero);
    let some_out = b.cmpi(CmpI::Ne, &outputs, &zero);
    let empty = b.arith(Arith::AndI, &none_reduced, &some_out);
    let failed = flag(b, &empty);
    cx.add_check(failed, RuntimeCheck { kind: ErrorKind::Value, message: "attempt to get argmax of an empty sequence".into() });

    let numbers = matches!(dtype, DType::Float32 | DType::Float64 | DType::Bool) || dtype.is_signed_int() || dtype.is_unsigned_int();
    if scalar::has_sequential_kernels() && numbers {
        if let Some((flat, rows, k)) = as_rows(b, &x, &axes) {
            // The row kernels: each row's max (nan where it has one), then the index of its
            // first element equal to it (the first nan). IREE left the fold below, of two
            // results, scalar code: 1000 x 1000 f64 along axis 1 5.8 ms (NUMBA 0.95).
            let stored = scalar::storage_type(dtype);
            let init = |g: &mut Block| identity(g, Reduction::Max, dtype, dtype);
            let step = |g: &mut Block, earlier: &Value, later: &Value| combine(g, Reduction::Max, dtype, earlier, later);
            let maxima = row_folds(cx, b, &flat, (&rows, &k), stored, &init, &step, false);
            let indices = first_index_of(cx, b, &flat, &maxima, (&rows, &k));
            let result = from_rows(b, &indices, &x, &axes, &out_ty);
            let in_dims = cx.dims(input);
            cx.define(output, result, kept_axes.iter().map(|&a| in_dims[a]).collect());
            return Ok(());
        }
    }
    if scalar::has_sequential_kernels() && numbers && ndim >= 2 && !axes.is_empty() && axes.len() < ndim && axes.iter().copied().eq(0..axes.len()) {
        // Leading axes: the column kernel's maxima, then each column's first row equal to
        // its max in one pass over x (axis 0 of 1000 x 1000 f64: the fold below took 9 ms,
        // NUMBA 2).
        let rows = count(b, &x, &axes);
        let cols = count(b, &x, &kept_axes);
        let flat = b.tensor_flatten(&x);
        let stored = scalar::storage_type(dtype);
        let init = |g: &mut Block| identity(g, Reduction::Max, dtype, dtype);
        let step = |g: &mut Block, earlier: &Value, later: &Value| combine(g, Reduction::Max, dtype, earlier, later);
        let maxima = column_folds(cx, b, &flat, (&rows, &cols), stored, &init, &step);
        let indices = first_row_of(cx, b, &flat, &maxima, (&rows, &cols));
        let result = shaped(b, &indices, &x, axes.len()..ndim, &out_ty);
        let in_dims = cx.dims(input);
        cx.define(output, result, kept_axes.iter().map(|&a| in_dims[a]).collect());
        return Ok(());
    }
    let sizes: Vec<Value> = axes.iter().map(|&a| b.tensor_dim(&x, a)).collect();
    let value_ty = TensorType { dtype, shape: out_ty.shape.clone() };
    let value_empty = empty_like(b, &value_ty, &x, &kept_axes);
    let low = lowest(b, dtype);
    let value_init = b.linalg_fill(&low, &value_empty);
    let index_empty = empty_like(b, &out_ty, &x, &kept_axes);
    let no_index = b.constant_int(i64::MAX, ScalarType::I64);
    let index_init = b.linalg_fill(&no_index, &index_empty);
    let maps = [AffineMap::identity(ndim), kept_map(ndim, &axes), kept_map(ndim, &axes)];
    let results = b.linalg_generic(&[x.clone()], &[value_init, index_init], &maps, &iterators(ndim, &axes), |body, args| {
        let (v, best, best_index) = (&args[0], &args[1], &args[2]);
        let mut flat = body.constant_index(0);
        for (&a, size) in axes.iter().zip(&sizes) {
            let i = body.linalg_index(a);
            let scaled = body.arith(Arith::MulI, &flat, size);
            flat = body.arith(Arith::AddI, &scaled, &i);
        }
        let index = body.index_cast(&flat, ScalarType::I64);
        // The combination is a total order on (value, index), so any order of visits
        // gives numpy's answer.
        let (greater, equal) = if dtype.is_float() {
            let gt = body.cmpf(CmpF::Ogt, v, best);
            let v_nan = body.cmpf(CmpF::Uno, v, v);
            let best_nan = body.cmpf(CmpF::Uno, best, best);
            let best_number = body.cmpf(CmpF::Oeq, best, best);
            let nan_over_number = body.arith(Arith::AndI, &v_nan, &best_number);
            let greater = body.arith(Arith::OrI, &gt, &nan_over_number);
            let eq = body.cmpf(CmpF::Oeq, v, best);
            let both_nan = body.arith(Arith::AndI, &v_nan, &best_nan);
            (greater, body.arith(Arith::OrI, &eq, &both_nan))
        } else {
            let pred = if dtype.is_signed_int() { CmpI::Sgt } else { CmpI::Ugt };
            (body.cmpi(pred, v, best), body.cmpi(CmpI::Eq, v, best))
        };
        let earlier = body.cmpi(CmpI::Slt, &index, best_index);
        let tie = body.arith(Arith::AndI, &equal, &earlier);
        let take = body.arith(Arith::OrI, &greater, &tie);
        Ok::<_, String>(vec![body.select(&take, v, best), body.select(&take, &index, best_index)])
    })?;
    let in_dims = cx.dims(input);
    cx.define(output, results[1].clone(), kept_axes.iter().map(|&a| in_dims[a]).collect());
    Ok(())
}

/// `Softmax`: `exp(x - max) / sum(exp(x - max))`; `LogSoftmax`: `(x - max) - log(sum(..))`,
/// the max subtracted so that no exp overflows.
pub fn softmax(cx: &mut Context, b: &mut Block, node: &Node, axis: Option<i64>, log: bool) -> Result<(), String> {
    let (input, output) = (node.inputs[0], node.outputs[0]);
    let x_ty = cx.graph.ty(input).clone();
    let out_ty = cx.graph.ty(output).clone();
    if !out_ty.dtype.is_float() {
        return Err(format!("output of dtype {}", out_ty.dtype.name()));
    }
    let ndim = x_ty.ndim();
    let axes = match axis {
        None => normalize_axes(None, ndim)?,
        Some(a) => normalize_axes(Some(&[a]), ndim)?,
    };
    let kept_axes = kept(ndim, &axes);
    let x = cx.value(b, input)?;
    let x = elemwise::cast(b, &x, &x_ty, out_ty.dtype)?;
    let dtype = out_ty.dtype;
    let reduced_ty = TensorType {
        dtype,
        shape: kept_axes.iter().map(|&a| out_ty.shape[a]).collect(),
    };
    let max = fold(b, Reduction::Max, &x, dtype, &axes, &reduced_ty);

    let reduced_map = kept_map(ndim, &axes);
    let all = (0..ndim).collect::<Vec<_>>();
    let parallel = vec![IteratorType::Parallel; ndim];
    let out_empty = empty_like(b, &out_ty, &x, &all);
    let r = if log {
        // (x - max) - log(sum(exp(x - max))): the exps are only summed, in the fold that
        // computes them.
        let sum_empty = empty_like(b, &reduced_ty, &x, &kept_axes);
        let zero = b.constant_f64(0.0, scalar::storage_type(dtype));
        let sum_init = b.linalg_fill(&zero, &sum_empty);
        let maps = [AffineMap::identity(ndim), reduced_map.clone(), reduced_map.clone()];
        let sum = b.linalg_generic(&[x.clone(), max.clone()], &[sum_init], &maps, &iterators(ndim, &axes), |body, args| {
            let shifted = body.arith(Arith::SubF, &args[0], &args[1]);
            let e = exp_log::exp(body, &shifted);
            Ok::<_, String>(vec![body.arith(Arith::AddF, &args[2], &e)])
        })?;
        let maps = [AffineMap::identity(ndim), reduced_map.clone(), reduced_map, AffineMap::identity(ndim)];
        b.linalg_generic(&[x.clone(), max, sum[0].clone()], &[out_empty], &maps, &parallel, |body, args| {
            let shifted = body.arith(Arith::SubF, &args[0], &args[1]);
            let log_sum = exp_log::log(body, &args[2]);
            Ok::<_, String>(vec![body.arith(Arith::SubF, &shifted, &log_sum)])
        })?
    } else {
        // exp(x - max) computed once and divided by its sum, a contraction where the axes
        // allow (vectorized, see `sum_as_contraction`): the exps cost more than the extra
        // pass over them.
        let e_empty = empty_like(b, &out_ty, &x, &all);
        let maps = [AffineMap::identity(ndim), reduced_map.clone(), AffineMap::identity(ndim)];
        let e = b.linalg_generic(&[x.clone(), max], &[e_empty], &maps, &parallel, |body, args| {
            let shifted = body.arith(Arith::SubF, &args[0], &args[1]);
            Ok::<_, String>(vec![exp_log::exp(body, &shifted)])
        })?;
        let e = e[0].clone();
        let sum = match sum_as_contraction(b, Reduction::Sum, &e, dtype, &axes, &reduced_ty) {
            Some(sum) => sum,
            None => fold(b, Reduction::Sum, &e, dtype, &axes, &reduced_ty),
        };
        let maps = [AffineMap::identity(ndim), reduced_map, AffineMap::identity(ndim)];
        b.linalg_generic(&[e, sum], &[out_empty], &maps, &parallel, |body, args| {
            Ok::<_, String>(vec![body.arith(Arith::DivF, &args[0], &args[1])])
        })?
    };
    let dims: Vec<Dim> = cx.dims(input);
    cx.define(output, r[0].clone(), dims);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_are_normalized_sorted_and_checked() {
        assert_eq!(normalize_axes(None, 3).unwrap(), vec![0, 1, 2]);
        assert_eq!(normalize_axes(Some(&[-1, 0]), 3).unwrap(), vec![0, 2]);
        assert_eq!(normalize_axes(Some(&[1, -2]), 3).unwrap(), vec![1]);
        assert!(normalize_axes(Some(&[3]), 3).is_err());
        assert!(normalize_axes(Some(&[-4]), 3).is_err());
        assert_eq!(kept(4, &[1, 3]), vec![0, 2]);
    }

    fn lower_json(op: &str, props: &str, in_dtype: &str, out: &str) -> Result<crate::Lowered, crate::GraphError> {
        lower_json_for(crate::ScalarTarget::CPU, op, props, in_dtype, out)
    }

    fn lower_json_for(target: crate::ScalarTarget, op: &str, props: &str, in_dtype: &str, out: &str) -> Result<crate::Lowered, crate::GraphError> {
        let json = format!(
            r#"{{"variables": [{{"type": {{"kind": "tensor", "dtype": "{in_dtype}", "shape": [null, 3]}}, "name": "x"}},
                {{"type": {{"kind": "tensor", {out}}}, "name": null}}],
              "inputs": [0], "outputs": [1],
              "nodes": [{{"op": {{"type": "{op}", "props": {props}}}, "inputs": [0], "outputs": [1]}}]}}"#
        );
        crate::compile_export(&json, target)
    }

    #[test]
    fn sum_accumulates_in_acc_dtype_then_casts() {
        // As a fold (targets without sequential kernels) and, on the CPU, as the row-sum
        // kernel (row_folds.rs): both add in f64 and round the sums to f32 after.
        let props = r#"{"scalar_op": {"$op": {"type": "Add", "props": {}}}, "axis": [-1], "dtype": "float32", "acc_dtype": "float64"}"#;
        let out = r#""dtype": "float32", "shape": [null]"#;
        let gpu = crate::ScalarTarget { sequential_kernels: false, ..crate::ScalarTarget::CPU };
        let fold = lower_json_for(gpu, "Sum", props, "float32", out).unwrap();
        assert!(fold.mlir.contains(r#"iterator_types = ["parallel", "reduction"]"#), "{}", fold.mlir);
        let kernel = lower_json("Sum", props, "float32", out).unwrap();
        assert!(kernel.mlir.contains("flow.dispatch.workgroups"), "{}", kernel.mlir);
        for l in [fold, kernel] {
            assert!(l.mlir.contains("arith.addf") && l.mlir.contains("arith.extf") && l.mlir.contains("arith.truncf"), "{}", l.mlir);
            assert!(l.mlir.contains(": f64"), "{}", l.mlir);
            assert!(l.checks.is_empty());
        }
    }

    #[test]
    fn float_max_compares_and_selects_like_the_c_backend() {
        let props = r#"{"scalar_op": {"$op": {"type": "Maximum", "props": {}}}, "axis": [-1]}"#;
        let l = lower_json("Max", props, "float64", r#""dtype": "float64", "shape": [null]"#).unwrap();
        assert!(l.mlir.contains("arith.cmpf ogt") && l.mlir.contains("arith.cmpf oge") && l.mlir.contains("arith.select"), "{}", l.mlir);
        assert!(!l.mlir.contains("arith.maximumf"), "{}", l.mlir);
    }

    #[test]
    fn argmax_reports_empty_sequences_through_a_value_error_flag() {
        // As a fold of (value, flat index) on targets without sequential kernels, and on
        // the CPU as the row kernels (the max, then the scan for its first index).
        let out = r#""dtype": "int64", "shape": []"#;
        let gpu = crate::ScalarTarget { sequential_kernels: false, ..crate::ScalarTarget::CPU };
        let fold = lower_json_for(gpu, "Argmax", r#"{"axis": null}"#, "float64", out).unwrap();
        assert!(fold.mlir.contains("linalg.index 0") && fold.mlir.contains("linalg.index 1"), "{}", fold.mlir);
        let kernel = lower_json("Argmax", r#"{"axis": null}"#, "float64", out).unwrap();
        assert!(kernel.mlir.contains("flow.dispatch.workgroups") && kernel.mlir.contains("scf.while"), "{}", kernel.mlir);
        for l in [fold, kernel] {
            assert_eq!(l.checks.len(), 1);
            assert_eq!(l.checks[0].kind, ErrorKind::Value);
        }
    }

    #[test]
    fn reductions_by_other_scalar_ops_are_refused_by_name() {
        let props = r#"{"scalar_op": {"$op": {"type": "Sub", "props": {}}}, "axis": null}"#;
        let e = lower_json("CAReduce", props, "float64", r#""dtype": "float64", "shape": []"#).unwrap_err();
        assert!(e.to_string().contains("Sub"), "{e}");
    }
}
