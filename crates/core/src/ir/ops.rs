//! The Ops this backend understands, typed. Each variant is named after its PyTensor class.

use super::export::ExportedOp;
use super::graph::ScalarGraph;
use crate::dtype::DType;
use serde_json::Value;

/// A tensor-level Op of a `FunctionGraph`.
#[derive(Debug, Clone)]
pub enum Op {
    /// `Elemwise(scalar_op)`: the scalar op applied with PyTensor's broadcasting.
    Elemwise(ScalarOp),
    /// `DimShuffle`: `new_order` holds input axes, `None` for an inserted broadcastable axis.
    DimShuffle { input_ndim: usize, new_order: Vec<Option<usize>> },
    /// `DeepCopyOp`: a fresh copy, so an output never aliases an input.
    DeepCopy,
    /// `FusionBarrier` (pytensor_mlir.fusion): its input as it is, kept by IREE in a
    /// dispatch apart from its consumers.
    FusionBarrier,
    /// `Dot` (and `Dot22`): matrix and vector products, inputs of rank 1 or 2.
    Dot,
    /// `CAReduce` and its subclasses (`Sum`, `Prod`, `Max`, ...): `axis` as PyTensor
    /// holds it (`None`: every axis), accumulating in `acc_dtype` (`None`: the output's).
    /// `Max` and `Min` raise `ValueError` on a reduced axis of size 0 (`zero_size_raises`),
    /// where a plain `CAReduce` gives the identity.
    CAReduce { reduction: Reduction, axis: Option<Vec<i64>>, acc_dtype: Option<DType>, zero_size_raises: bool },
    /// `Argmax`: the flat index over `axis` (`None`: every axis) of the first maximum.
    Argmax { axis: Option<Vec<i64>> },
    /// `Softmax` and `LogSoftmax` along `axis` (`None`: over every axis).
    Softmax { axis: Option<i64>, log: bool },
    /// `Shape`: the input's shape as an int64 vector.
    Shape,
    /// `Shape_i`: one dim of the input as an int64 scalar.
    ShapeI(usize),
    /// `SpecifyShape`: the input, once its dims equal the shape inputs that are not None.
    SpecifyShape,
    /// `MakeVector`: scalars (0-d tensors) as a vector of the output's dtype.
    MakeVector,
    /// `TensorFromScalar` and `ScalarFromTensor`: scalars are 0-d tensors here already.
    TensorFromScalar,
    ScalarFromTensor,
    // Construction, reshaping and indexing (issue 4).
    /// `Alloc`: the value broadcast to the shape given by the scalar inputs.
    Alloc,
    /// `AllocEmpty`: a tensor of the given shape; filled with zeros here.
    AllocEmpty,
    /// `Reshape`: the input with the shape of the vector input (one entry may be -1).
    Reshape,
    /// `Join`: the tensor inputs concatenated along the axis given by the first input.
    Join,
    /// `Split`: the input cut along an axis into pieces of the sizes given at run time.
    Split,
    /// `Subtensor`: basic indexing; slice bounds and indices not in `idx_list` as
    /// constants are the extra scalar inputs it points to.
    Subtensor { idx_list: Vec<IdxEntry> },
    /// `IncSubtensor`: a copy of the input with the indexed part incremented (or set) by
    /// the second input; `inplace` is ignored (the mode excludes in-place rewrites).
    IncSubtensor { idx_list: Vec<IdxEntry>, set_instead_of_inc: bool },
    /// `AdvancedSubtensor1`: rows of the input gathered by an integer vector.
    AdvancedSubtensor1,
    /// `AdvancedIncSubtensor1`: rows of the input incremented (repeated indices
    /// accumulate) or set by an integer vector.
    AdvancedIncSubtensor1 { set_instead_of_inc: bool },
    /// `AdvancedSubtensor`: indexing by several integer arrays (and full slices), entries
    /// of `idx_list` pointing at the index inputs after the indexed tensor.
    AdvancedSubtensor { idx_list: Vec<IdxEntry> },
    /// `AdvancedIncSubtensor`: a copy of the input with the region `AdvancedSubtensor`
    /// would read incremented (repeated positions accumulate) or set by the second input.
    AdvancedIncSubtensor { idx_list: Vec<IdxEntry>, set_instead_of_inc: bool },
    // Issue 4: BLAS and Blockwise (lower/blas.rs, lower/blockwise.rs).
    /// `BatchedDot`: `x[i] @ y[i]` for each `i` of the first axis; both inputs of rank 3,
    /// batch sizes equal (no broadcasting).
    BatchedDot,
    /// `Blockwise(core)`: the core op applied over the leading batch dims, which broadcast
    /// where their static size is 1 (PyTensor's rule).
    Blockwise { core: BlockwiseCore },
    // End of the BLAS block.
    // Dense linear algebra (lower/linalg.rs).
    /// `Cholesky`: the factor from the `lower` (else upper) triangle.
    Cholesky { lower: bool },
    /// `SolveTriangular`: `a x = b` from a's `lower` (else upper) triangle; `b_ndim` 1 or 2.
    SolveTriangular { lower: bool, unit_diagonal: bool, b_ndim: usize },
    /// `CholeskySolve`: `a x = b` given a's Cholesky factor (`lower`: c c^T = a).
    CholeskySolve { lower: bool, b_ndim: usize },
    /// `Solve`: `a x = b`, `assume_a` "gen", "sym", "her" or "pos" (the others refused
    /// when lowered), reading a's `lower` triangle where symmetric.
    Solve { assume_a: String, lower: bool, b_ndim: usize },
    /// `Det`, `SLogDet` (sign and log|det|) and `MatrixInverse` of a square matrix.
    Det,
    SLogDet,
    MatrixInverse,
    /// `LUFactor`: getrf's (LU, pivots).
    LUFactor,
    /// `LUFactorTridiagonal`: gttrf's (dl, d, du, du2, ipiv) of the three diagonals.
    LUFactorTridiagonal,
    /// `SolveLUFactorTridiagonal`: gttrs (A x = b, or A^T x = b where `transposed`).
    SolveLUFactorTridiagonal { b_ndim: usize, transposed: bool },
    /// `PivotToPermutations`: getrf's pivots as a permutation (`inverse`: its inverse).
    PivotToPermutations { inverse: bool },
    /// `LU`: scipy's lu, (P, L, U); (p, L, U) with `p_indices`; (P L, U) with `permute_l`.
    LU { permute_l: bool, p_indices: bool },
    /// `QR`: geqrf's factorization in `mode` (full, economic, r, raw); `pivoting` (geqp3).
    QR { mode: QrMode, pivoting: bool },
    /// `Eigh` (eigenvalues and eigenvectors of a symmetric matrix read from its `lower` or
    /// upper triangle) and `Eigvalsh` (the eigenvalues alone).
    Eigh { lower: bool },
    Eigvalsh { lower: bool },
    /// `SVD`: numpy's svd, (U, s, V^T) with `compute_uv` (square U and V^T with
    /// `full_matrices`), s alone without.
    SVD { full_matrices: bool, compute_uv: bool },
    /// `MatrixPinv`: numpy's pinv (through the eigen decomposition where `hermitian`).
    MatrixPinv { hermitian: bool },
    /// `SolveSylvester(A, B, C)`: X with A X + X B = C (an OpFromGraph lowered by a rule
    /// of its own, by its inner graph's route on the CPU).
    SolveSylvester,
    /// `TRSYL(A, B, C)`: X with A X + X B = C, A and B in real Schur form.
    Trsyl,
    /// `Schur`: scipy's schur, (T, Z) with A = Z T Z^T; `output` "real" lowered (the
    /// complex form and `sort` are refused by name).
    Schur { output: String, sort: Option<String> },
    /// `QZ`: scipy's qz / ordqz, (AA, BB, Q, Z) with A = Q AA Z^T and B = Q BB Z^T; the
    /// real form without eigenvalue outputs lowered (lower/schur.rs).
    QZ { complex_output: bool, sort: Option<String>, return_eigenvalues: bool },
    // End of the linear algebra block.
    // Issue 4: construction, checks, sorting, inner graphs.
    /// `CheckAndRaise` (and `Assert`): the first input, once every condition input is
    /// true; else the call raises `exception` (a Python class, `module.QualName`) with `msg`.
    CheckAndRaise { msg: String, exception: String },
    /// `ARange(start, stop, step)` in the output's dtype, numpy's length.
    ARange,
    /// `Eye(n, m, k)`: ones where `col - row == k`.
    Eye,
    /// `ExtractDiag`: the diagonal `offset` of the plane (`axis1`, `axis2`), as a last axis.
    ExtractDiag { offset: i64, axis1: usize, axis2: usize },
    /// `AllocDiag`: the last axis of the input placed on diagonal `offset` of two new axes.
    AllocDiag { offset: i64, axis1: usize, axis2: usize },
    /// `FillDiagonal(a, val)` (`offset` 0) and `FillDiagonalOffset(a, val, offset)`
    /// (`offset: None`: the third input).
    FillDiagonal { offset: Option<i64> },
    /// `CumOp`: the inclusive scan along `axis` by addition (`mul`: multiplication).
    CumOp { axis: usize, mul: bool },
    /// `SortOp` and `ArgSortOp` along the axis given by the second input (a constant);
    /// `arg`: the indices. Always stable (numpy's order: NaN last).
    Sort { arg: bool },
    /// `SearchsortedOp(x, v[, sorter])`; `right`: `side == "right"`.
    Searchsorted { right: bool },
    /// `Repeat(x, repeats)` along `axis`.
    Repeat { axis: usize },
    /// `Bartlett(M)`: numpy's Bartlett window of `M` points (float64).
    Bartlett,
    /// `Nonzero(a)`: the coordinates of `a`'s non-zero elements, one int64 vector per axis.
    Nonzero,
    /// `Unique(x)`: numpy's `unique`, with the optional outputs it names.
    Unique { index: bool, inverse: bool, counts: bool, axis: Option<usize> },
    /// `UnravelIndex(indices, dims)`; `fortran`: order "F".
    UnravelIndex { fortran: bool },
    /// `RavelMultiIndex(*multi_index, dims)`; `fortran`: order "F".
    RavelMultiIndex { mode: RavelMode, fortran: bool },
    /// `PermuteRowElements(x, y)`: x's rows reordered by y's (`inverse`: by the inverse).
    PermuteRowElements { inverse: bool },
    /// `OpFromGraph` (and subclasses such as `Einsum`): its inner graph, whose inputs are
    /// the node's inputs.
    OpFromGraph(Box<super::graph::Graph>),
    /// `Pad(x, pad_width[, constant_values])` in the modes lowered by their meaning (the
    /// inner graphs of reflect and symmetric hold a `Scan`; constant and edge are one
    /// gather instead of PyTensor's chain of set_subtensors); the other modes are
    /// `OpFromGraph`s.
    Pad { mode: PadMode },
    /// The pullback PyTensor builds for such a `Pad` (a plain `OpFromGraph` whose inner
    /// graph holds a `Scan`'s gradient): inputs x, pad_width, the output and its gradient.
    PadGrad { mode: PadMode },
    /// `Scan`: PyTensor's loop over its inner graph.
    Scan(Box<super::scan::Scan>),
    /// `Choose(a, choices)` with a tensor of choices (numpy's `choose`; `mode` as
    /// `RavelMultiIndex`'s: raise, wrap, clip).
    Choose { mode: RavelMode },
    /// `IfElse(cond, *then, *else)`: the `n_outs` values of the then-branch where the
    /// scalar condition is nonzero, else those of the else-branch.
    IfElse { n_outs: usize },
    /// `BlockDiagonal`: its matrices on the diagonal of a zero matrix, in the output's dtype.
    BlockDiagonal,
    /// `Convolve1d(in1, in2, full_mode)`: numpy's `convolve`, mode "full" where the scalar
    /// `full_mode` is true, else "valid".
    Convolve1d,
    /// `Expm`: the matrix exponential of a square matrix.
    Expm,
    /// A `RandomVariable` (`NormalRV`, ...): inputs (rng, size, *params), outputs (the
    /// next rng, the draws of `dtype`).
    RandomVariable { dist: super::random::Distribution, dtype: DType },
    // End of the tensor-ops block.
}

/// What a `QR` returns (PyTensor's modes; "complete" and "reduced" are full and economic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrMode {
    /// Q (m x m), R (m x n).
    Full,
    /// Q (m x k), R (k x n), k = min(m, n).
    Economic,
    /// R (m x n) alone.
    R,
    /// geqrf's own (H, tau, R): the reflectors below R, their factors, R (k x n).
    Raw,
}

/// How `RavelMultiIndex` treats a coordinate outside its dim (numpy's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RavelMode {
    Raise,
    Wrap,
    Clip,
}

fn prop_fortran(op: &ExportedOp) -> Result<bool, String> {
    match op.props.get("order").and_then(Value::as_str) {
        Some("C") => Ok(false),
        Some("F") => Ok(true),
        _ => Err("prop order is not C or F".into()),
    }
}

/// The core ops a `Blockwise` is lowered for.
#[derive(Debug, Clone)]
pub enum BlockwiseCore {
    /// `Dot` (matmul, signature `(m,k),(k,n)->(m,n)`): `pt.matmul` and vectorized dots.
    Dot,
    /// Any other core op with a rule, applied batch by batch in a loop; the gufunc
    /// signature's dim names per input and output (`(m,m),(m)->(m)`).
    Looped { core: Box<Op>, inputs: Vec<Vec<String>>, outputs: Vec<Vec<String>> },
}

/// A gufunc signature `(m,n),(n)->(m),()` as dim names per input and per output.
fn parse_signature(s: &str) -> Result<(Vec<Vec<String>>, Vec<Vec<String>>), String> {
    let bad = || format!("a gufunc signature {s:?} not of the form (a,b),(c)->(d)");
    let side = |part: &str| -> Result<Vec<Vec<String>>, String> {
        let part = part.trim();
        if part.is_empty() {
            return Ok(Vec::new());
        }
        let inner = part.strip_prefix('(').and_then(|p| p.strip_suffix(')')).ok_or_else(bad)?;
        inner
            .split("),(")
            .map(|dims| {
                let dims = dims.trim();
                if dims.contains(['(', ')']) {
                    return Err(bad());
                }
                Ok(if dims.is_empty() { Vec::new() } else { dims.split(',').map(|d| d.trim().to_string()).collect() })
            })
            .collect()
    };
    let (ins, outs) = s.split_once("->").ok_or_else(bad)?;
    Ok((side(ins)?, side(outs)?))
}

/// An entry of a `Subtensor`'s `idx_list`: positions among the index inputs (after the
/// indexed tensor, and after the value for `IncSubtensor`), `None` for a bound left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdxEntry {
    Index(usize),
    Slice { start: Option<usize>, stop: Option<usize>, step: Option<usize> },
}

fn prop_idx_list(op: &ExportedOp) -> Result<Vec<IdxEntry>, String> {
    let position = |v: &Value| match v {
        Value::Null => Ok(None),
        v => v.as_u64().map(|p| Some(p as usize)).ok_or_else(|| format!("bad idx_list slice entry {v}")),
    };
    prop_list(op, "idx_list")?
        .iter()
        .map(|e| match e {
            Value::Object(o) if o.contains_key("$slice") => {
                let parts = o["$slice"].as_array().filter(|a| a.len() == 3).ok_or("bad idx_list slice")?;
                Ok(IdxEntry::Slice { start: position(&parts[0])?, stop: position(&parts[1])?, step: position(&parts[2])? })
            }
            v => v.as_u64().map(|p| IdxEntry::Index(p as usize)).ok_or_else(|| format!("bad idx_list entry {v}")),
        })
        .collect()
}

fn prop_str(op: &ExportedOp, prop: &str) -> Result<String, String> {
    op.props.get(prop).and_then(Value::as_str).map(str::to_string).ok_or_else(|| format!("prop {prop} is not a string"))
}

fn prop_bool(op: &ExportedOp, prop: &str) -> Result<bool, String> {
    op.props.get(prop).and_then(Value::as_bool).ok_or_else(|| format!("prop {prop} is not a bool"))
}

/// The binary scalar op a `CAReduce` folds with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Prod,
    /// `ProdWithoutZeros`: zeros are skipped.
    ProdWithoutZeros,
    Max,
    Min,
    All,
    Any,
}

/// A scalar op as held by an `Elemwise` or inside a `Composite`.
#[derive(Debug, Clone)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    TrueDiv,
    IntDiv,
    Mod,
    Neg,
    Abs,
    Pow,
    Maximum,
    Minimum,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Neq,
    And,
    Or,
    Xor,
    Invert,
    Switch,
    Sqr,
    Sqrt,
    Exp,
    Log,
    /// The target dtype is the node's output type.
    Cast,
    Identity,
    /// `second(a, b)`: `b` broadcast to the shape of both.
    Second,
    // Issue 3: rounding, tests and the exp/log family (math in lower/scalar_math/exp_log.rs).
    IsNan,
    IsInf,
    /// `clip(x, min, max)`: C's `x < min ? min : x > max ? max : x`.
    Clip,
    Sign,
    Ceil,
    Floor,
    Trunc,
    RoundHalfToEven,
    RoundHalfAwayFromZero,
    Reciprocal,
    Deg2Rad,
    Rad2Deg,
    Log1p,
    Expm1,
    Log2,
    Log10,
    Exp2,
    Sinh,
    Cosh,
    Tanh,
    ArcSinh,
    ArcCosh,
    ArcTanh,
    Sigmoid,
    Softplus,
    Log1mexp,
    // End of issue 3's exp/log block.
    // Issue 3: trig (lower/scalar_math/trig.rs).
    Sin,
    Cos,
    Tan,
    ArcSin,
    ArcCos,
    ArcTan,
    ArcTan2,
    // End of issue 3's trig block.
    // Issue 3: special functions (lower/scalar_math/{erf,gamma}.rs).
    Erf,
    Erfc,
    /// `erfcx(x) = exp(x^2) erfc(x)`.
    Erfcx,
    Erfinv,
    Erfcinv,
    Gamma,
    /// `gammaln(x) = log|gamma(x)|`.
    GammaLn,
    /// The digamma function.
    Psi,
    /// `polygamma(1, x)`.
    TriGamma,
    /// The regularized lower incomplete gamma function P(a, x).
    GammaInc,
    /// The regularized upper incomplete gamma function Q(a, x).
    GammaIncC,
    /// The inverse of GammaInc in x: `gammaincinv(a, p)`.
    GammaIncInv,
    /// The inverse of GammaIncC in x: `gammainccinv(a, q)`.
    GammaIncCInv,
    /// The lower incomplete gamma function P(a, x) Gamma(a).
    GammaL,
    /// The upper incomplete gamma function Q(a, x) Gamma(a).
    GammaU,
    /// `polygamma(n, x)`, n an integer per element.
    PolyGamma,
    /// The regularized incomplete beta function `betainc(a, b, x)`.
    BetaInc,
    /// The inverse of BetaInc in x: `betaincinv(a, b, y)`.
    BetaIncInv,
    /// Owen's T function `owens_t(h, a)`.
    OwensT,
    /// The Gauss hypergeometric function `hyp2f1(a, b, c, z)`.
    Hyp2F1,
    // End of issue 3's special-function block.
    // Issue 3: Bessel functions (lower/scalar_math/bessel.rs).
    /// The modified Bessel function of the first kind, order 0.
    I0,
    /// The modified Bessel function of the first kind, order 1.
    I1,
    /// The Bessel function of the first kind, order 0.
    J0,
    /// The Bessel function of the first kind, order 1.
    J1,
    /// `ive(v, x) = exp(-|x|) I_v(x)`, real order (lower/scalar_math/bessel_real.rs).
    Ive,
    /// `kve(v, x) = exp(x) K_v(x)`, real order.
    Kve,
    /// `jv(v, x)`, the Bessel function of the first kind of real order (bessel_jv.rs).
    Jv,
    // End of issue 3's Bessel block.
    Composite(Box<ScalarGraph>),
    /// `ScalarLoop` (and its subclasses): an inner scalar graph iterated `n_steps` times.
    Loop(Box<ScalarLoop>),
}

/// A `ScalarLoop`: the node's inputs are `n_steps`, the initial state, then constants;
/// `graph` maps (state, constants) to (next state, and the `until` flag of a while loop).
#[derive(Debug, Clone)]
pub struct ScalarLoop {
    pub graph: ScalarGraph,
    /// How many state variables the loop carries: the first `n_update` graph inputs and
    /// outputs.
    pub n_update: usize,
    /// Whether the graph's last output is a bool that stops the loop when true.
    pub is_while: bool,
}

impl ScalarLoop {
    fn new(graph: ScalarGraph, is_while: bool) -> Result<ScalarLoop, String> {
        let n_update = graph.outputs.len().checked_sub(is_while as usize).ok_or("a while loop without outputs")?;
        if n_update > graph.inputs.len() {
            return Err("more updates than state variables".into());
        }
        for k in 0..n_update {
            if graph.dtypes[graph.inputs[k]] != graph.dtypes[graph.outputs[k]] {
                return Err(format!("state {k} changes dtype in the loop"));
            }
        }
        if is_while && graph.dtypes[graph.outputs[n_update]] != DType::Bool {
            return Err("the until condition is not bool".into());
        }
        Ok(ScalarLoop { graph, n_update, is_while })
    }
}

impl ScalarOp {
    /// The scalar graph inside a `Composite` or `ScalarLoop`.
    pub fn inner_graph(&self) -> Option<&ScalarGraph> {
        match self {
            ScalarOp::Composite(g) => Some(g),
            ScalarOp::Loop(l) => Some(&l.graph),
            _ => None,
        }
    }

    /// The op for a scalar class name, without props; `None` if unknown here.
    fn from_name(name: &str) -> Option<ScalarOp> {
        use ScalarOp::*;
        Some(match name {
            "Add" => Add,
            "Sub" => Sub,
            "Mul" => Mul,
            "TrueDiv" => TrueDiv,
            "IntDiv" => IntDiv,
            "Mod" => Mod,
            "Neg" => Neg,
            "Abs" => Abs,
            "Pow" => Pow,
            "Maximum" | "ScalarMaximum" => Maximum,
            "Minimum" | "ScalarMinimum" => Minimum,
            "LT" => Lt,
            "GT" => Gt,
            "LE" => Le,
            "GE" => Ge,
            "EQ" => Eq,
            "NEQ" => Neq,
            "AND" => And,
            "OR" => Or,
            "XOR" => Xor,
            "Invert" => Invert,
            "Switch" => Switch,
            "Sqr" => Sqr,
            "Sqrt" => Sqrt,
            "Exp" => Exp,
            "Log" => Log,
            "Cast" => Cast,
            "Identity" => Identity,
            "Second" => Second,
            // Issue 3: rounding, tests and the exp/log family.
            "IsNan" => IsNan,
            "IsInf" => IsInf,
            "Clip" => Clip,
            "Sign" => Sign,
            "Ceil" => Ceil,
            "Floor" => Floor,
            "Trunc" => Trunc,
            "RoundHalfToEven" => RoundHalfToEven,
            "RoundHalfAwayFromZero" => RoundHalfAwayFromZero,
            "Reciprocal" => Reciprocal,
            "Deg2Rad" => Deg2Rad,
            "Rad2Deg" => Rad2Deg,
            "Log1p" => Log1p,
            "Expm1" => Expm1,
            "Log2" => Log2,
            "Log10" => Log10,
            "Exp2" => Exp2,
            "Sinh" => Sinh,
            "Cosh" => Cosh,
            "Tanh" => Tanh,
            "ArcSinh" => ArcSinh,
            "ArcCosh" => ArcCosh,
            "ArcTanh" => ArcTanh,
            "Sigmoid" => Sigmoid,
            "Softplus" => Softplus,
            "Log1mexp" => Log1mexp,
            // End of issue 3's exp/log block.
            // Issue 3: trig.
            "Sin" => Sin,
            "Cos" => Cos,
            "Tan" => Tan,
            "ArcSin" => ArcSin,
            "ArcCos" => ArcCos,
            "ArcTan" => ArcTan,
            "ArcTan2" => ArcTan2,
            // End of issue 3's trig block.
            // Issue 3: special functions (lower/scalar_math/{erf,gamma}.rs).
            "Erf" => Erf,
            "Erfc" => Erfc,
            "Erfcx" => Erfcx,
            "Erfinv" => Erfinv,
            "Erfcinv" => Erfcinv,
            "Gamma" => Gamma,
            "GammaLn" => GammaLn,
            "Psi" => Psi,
            "TriGamma" => TriGamma,
            "GammaInc" => GammaInc,
            "GammaIncC" => GammaIncC,
            "GammaIncInv" => GammaIncInv,
            "GammaIncCInv" => GammaIncCInv,
            "GammaL" => GammaL,
            "GammaU" => GammaU,
            "PolyGamma" => PolyGamma,
            "BetaInc" => BetaInc,
            "BetaIncInv" => BetaIncInv,
            "Owens_t" => OwensT,
            "Hyp2F1" => Hyp2F1,
            // End of issue 3's special-function block.
            // Issue 3: Bessel functions (lower/scalar_math/bessel.rs).
            "I0" => I0,
            "I1" => I1,
            "J0" => J0,
            "J1" => J1,
            "Ive" => Ive,
            "Kve" => Kve,
            "Jv" => Jv,
            // End of issue 3's Bessel block.
            _ => return None,
        })
    }

    pub fn parse(op: &ExportedOp) -> Result<ScalarOp, String> {
        let inner_graph = || -> Result<ScalarGraph, String> {
            let graph = op.props.get("fgraph").and_then(|v| v.get("$graph")).ok_or("no exported fgraph")?;
            let exported = serde_json::from_value(graph.clone()).map_err(|e| e.to_string())?;
            ScalarGraph::from_export(&exported)
        };
        if op.type_name == "Composite" {
            return Ok(ScalarOp::Composite(Box::new(inner_graph()?)));
        }
        // The exporter marks ScalarLoops (subclasses such as Grad2F1Loop included) by the
        // loop kind, which their props leave implicit.
        if let Some(is_while) = op.props.get("$is_while").and_then(Value::as_bool) {
            return Ok(ScalarOp::Loop(Box::new(ScalarLoop::new(inner_graph()?, is_while)?)));
        }
        ScalarOp::from_name(&op.type_name).ok_or_else(|| "no lowering rule for this scalar op".into())
    }
}

impl Op {
    /// Types the exported op, or says why it cannot be lowered.
    pub fn parse(op: &ExportedOp) -> Result<Op, String> {
        match op.type_name.as_str() {
            "Elemwise" => {
                let scalar = nested_op(op, "scalar_op")?;
                ScalarOp::parse(&scalar)
                    .map(Op::Elemwise)
                    .map_err(|why| format!("scalar op {}: {why}", scalar.describe()))
            }
            "DimShuffle" => {
                let input_ndim = prop_usize(op, "input_ndim")?;
                let new_order = prop_list(op, "new_order")?
                    .iter()
                    .map(|v| match v {
                        Value::String(s) if s == "x" => Ok(None),
                        v => v.as_u64().map(|a| Some(a as usize)).ok_or("bad new_order entry"),
                    })
                    .collect::<Result<_, _>>()?;
                Ok(Op::DimShuffle { input_ndim, new_order })
            }
            "DeepCopyOp" => Ok(Op::DeepCopy),
            "FusionBarrier" => Ok(Op::FusionBarrier),
            "Dot" | "Dot22" => Ok(Op::Dot),
            "CAReduce" | "Sum" | "Prod" | "ProdWithoutZeros" | "Max" | "Min" | "All" | "Any" => {
                let scalar = nested_op(op, "scalar_op")?;
                let reduction = match scalar.type_name.as_str() {
                    "Add" => Reduction::Sum,
                    "Mul" => Reduction::Prod,
                    "MulWithoutZeros" => Reduction::ProdWithoutZeros,
                    "Maximum" | "ScalarMaximum" => Reduction::Max,
                    "Minimum" | "ScalarMinimum" => Reduction::Min,
                    "AND" => Reduction::All,
                    "OR" => Reduction::Any,
                    _ => return Err(format!("reduction by scalar op {}", scalar.describe())),
                };
                let acc_dtype = match op.props.get("acc_dtype") {
                    None | Some(Value::Null) => None,
                    Some(v) => {
                        let name = v.as_str().ok_or("prop acc_dtype is not a dtype name")?;
                        Some(DType::parse(name).ok_or_else(|| format!("unknown acc_dtype {name}"))?)
                    }
                };
                let zero_size_raises = matches!(op.type_name.as_str(), "Max" | "Min");
                Ok(Op::CAReduce { reduction, axis: prop_axes(op, "axis")?, acc_dtype, zero_size_raises })
            }
            "Argmax" => Ok(Op::Argmax { axis: prop_axes(op, "axis")? }),
            "Softmax" | "LogSoftmax" => {
                let axis = match prop_axes(op, "axis")?.as_deref() {
                    None => None,
                    Some([a]) => Some(*a),
                    Some(_) => return Err("axis is not one axis".into()),
                };
                Ok(Op::Softmax { axis, log: op.type_name == "LogSoftmax" })
            }
            "Shape" => Ok(Op::Shape),
            "Shape_i" => Ok(Op::ShapeI(prop_usize(op, "i")?)),
            "SpecifyShape" => Ok(Op::SpecifyShape),
            "MakeVector" => Ok(Op::MakeVector),
            "TensorFromScalar" => Ok(Op::TensorFromScalar),
            "ScalarFromTensor" => Ok(Op::ScalarFromTensor),
            "Alloc" => Ok(Op::Alloc),
            "AllocEmpty" => Ok(Op::AllocEmpty),
            "Reshape" => Ok(Op::Reshape),
            "Join" => Ok(Op::Join),
            "Split" => Ok(Op::Split),
            "Subtensor" => Ok(Op::Subtensor { idx_list: prop_idx_list(op)? }),
            "IncSubtensor" => Ok(Op::IncSubtensor {
                idx_list: prop_idx_list(op)?,
                set_instead_of_inc: prop_bool(op, "set_instead_of_inc")?,
            }),
            "AdvancedSubtensor1" => Ok(Op::AdvancedSubtensor1),
            "AdvancedIncSubtensor1" => {
                Ok(Op::AdvancedIncSubtensor1 { set_instead_of_inc: prop_bool(op, "set_instead_of_inc")? })
            }
            "AdvancedSubtensor" => Ok(Op::AdvancedSubtensor { idx_list: prop_idx_list(op)? }),
            "AdvancedIncSubtensor" => {
                if prop_bool(op, "ignore_duplicates")? {
                    return Err("ignore_duplicates=True (repeated indices not accumulated) is not supported".into());
                }
                Ok(Op::AdvancedIncSubtensor { idx_list: prop_idx_list(op)?, set_instead_of_inc: prop_bool(op, "set_instead_of_inc")? })
            }
            // Issue 4: BLAS and Blockwise.
            "BatchedDot" => Ok(Op::BatchedDot),
            // Dense linear algebra.
            "Cholesky" => Ok(Op::Cholesky { lower: prop_bool(op, "lower")? }),
            "SolveTriangular" => Ok(Op::SolveTriangular {
                lower: prop_bool(op, "lower")?,
                unit_diagonal: prop_bool(op, "unit_diagonal")?,
                b_ndim: prop_usize(op, "b_ndim")?,
            }),
            "CholeskySolve" => Ok(Op::CholeskySolve { lower: prop_bool(op, "lower")?, b_ndim: prop_usize(op, "b_ndim")? }),
            "Solve" => Ok(Op::Solve {
                assume_a: prop_str(op, "assume_a")?,
                lower: prop_bool(op, "lower")?,
                b_ndim: prop_usize(op, "b_ndim")?,
            }),
            "Det" => Ok(Op::Det),
            "SLogDet" => Ok(Op::SLogDet),
            "MatrixInverse" => Ok(Op::MatrixInverse),
            "LUFactor" => Ok(Op::LUFactor),
            "LUFactorTridiagonal" => Ok(Op::LUFactorTridiagonal),
            "SolveLUFactorTridiagonal" => Ok(Op::SolveLUFactorTridiagonal { b_ndim: prop_usize(op, "b_ndim")?, transposed: prop_bool(op, "transposed")? }),
            "PivotToPermutations" => Ok(Op::PivotToPermutations { inverse: prop_bool(op, "inverse")? }),
            "LU" => Ok(Op::LU { permute_l: prop_bool(op, "permute_l")?, p_indices: prop_bool(op, "p_indices")? }),
            "QR" => {
                let mode = match prop_str(op, "mode")?.as_str() {
                    "full" => QrMode::Full,
                    "economic" => QrMode::Economic,
                    "r" => QrMode::R,
                    "raw" => QrMode::Raw,
                    other => return Err(format!("QR mode {other:?}")),
                };
                Ok(Op::QR { mode, pivoting: prop_bool(op, "pivoting")? })
            }
            "Eigh" => Ok(Op::Eigh { lower: prop_bool(op, "lower")? }),
            "Eigvalsh" => Ok(Op::Eigvalsh { lower: prop_bool(op, "lower")? }),
            "SVD" => Ok(Op::SVD { full_matrices: prop_bool(op, "full_matrices")?, compute_uv: prop_bool(op, "compute_uv")? }),
            "MatrixPinv" => Ok(Op::MatrixPinv { hermitian: prop_bool(op, "hermitian")? }),
            "SolveSylvester" => Ok(Op::SolveSylvester),
            "TRSYL" => Ok(Op::Trsyl),
            "QZ" => Ok(Op::QZ {
                complex_output: prop_bool(op, "complex_output")?,
                sort: match op.props.get("sort") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_str().ok_or("prop sort is not a string")?.to_string()),
                },
                return_eigenvalues: prop_bool(op, "return_eigenvalues")?,
            }),
            "Schur" => Ok(Op::Schur {
                output: prop_str(op, "output")?,
                sort: match op.props.get("sort") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_str().ok_or("prop sort is not a string")?.to_string()),
                },
            }),
            "Blockwise" => {
                let core = nested_op(op, "core_op")?;
                match core.type_name.as_str() {
                    "Dot" => Ok(Op::Blockwise { core: BlockwiseCore::Dot }),
                    _ => {
                        let core_op = Op::parse(&core).map_err(|why| format!("Blockwise{{{}}}: its core op {}: {why}", core.type_name, core.describe()))?;
                        let signature = op.props.get("signature").and_then(Value::as_str).ok_or("prop signature is not a string")?;
                        let (inputs, outputs) = parse_signature(signature)?;
                        Ok(Op::Blockwise { core: BlockwiseCore::Looped { core: Box::new(core_op), inputs, outputs } })
                    }
                }
            }
            // End of the BLAS block.
            // Issue 4: construction, checks, sorting, inner graphs.
            "CheckAndRaise" | "Assert" => {
                let msg = op.props.get("msg").and_then(Value::as_str).ok_or("prop msg is not a string")?.to_string();
                let exception = op
                    .props
                    .get("exc_type")
                    .and_then(|v| v.get("$class"))
                    .and_then(Value::as_str)
                    .ok_or("prop exc_type is not an exported class")?
                    .to_string();
                Ok(Op::CheckAndRaise { msg, exception })
            }
            "ARange" => Ok(Op::ARange),
            "Eye" => Ok(Op::Eye),
            "ExtractDiag" => Ok(Op::ExtractDiag {
                offset: prop_i64(op, "offset")?,
                axis1: prop_usize(op, "axis1")?,
                axis2: prop_usize(op, "axis2")?,
            }),
            "AllocDiag" => Ok(Op::AllocDiag {
                offset: prop_i64(op, "offset")?,
                axis1: prop_usize(op, "axis1")?,
                axis2: prop_usize(op, "axis2")?,
            }),
            "FillDiagonal" => Ok(Op::FillDiagonal { offset: Some(0) }),
            "FillDiagonalOffset" => Ok(Op::FillDiagonal { offset: None }),
            "CumOp" => {
                let mul = match op.props.get("mode").and_then(Value::as_str) {
                    Some("add") => false,
                    Some("mul") => true,
                    _ => return Err("prop mode is not add or mul".into()),
                };
                Ok(Op::CumOp { axis: prop_usize(op, "axis")?, mul })
            }
            "SortOp" | "ArgSortOp" => Ok(Op::Sort { arg: op.type_name == "ArgSortOp" }),
            "SearchsortedOp" => match op.props.get("side").and_then(Value::as_str) {
                Some("left") => Ok(Op::Searchsorted { right: false }),
                Some("right") => Ok(Op::Searchsorted { right: true }),
                _ => Err("prop side is not left or right".into()),
            },
            "Repeat" => Ok(Op::Repeat { axis: prop_usize(op, "axis")? }),
            "Bartlett" => Ok(Op::Bartlett),
            "PermuteRowElements" => match op.props.get("inverse") {
                Some(Value::Bool(b)) => Ok(Op::PermuteRowElements { inverse: *b }),
                Some(v) if v.as_i64().is_some() => Ok(Op::PermuteRowElements { inverse: v.as_i64() != Some(0) }),
                _ => Err("prop inverse is not a bool".into()),
            },
            "UnravelIndex" => Ok(Op::UnravelIndex { fortran: prop_fortran(op)? }),
            "RavelMultiIndex" => {
                let mode = match op.props.get("mode").and_then(Value::as_str) {
                    Some("raise") => RavelMode::Raise,
                    Some("wrap") => RavelMode::Wrap,
                    Some("clip") => RavelMode::Clip,
                    _ => return Err("prop mode is not raise, wrap or clip".into()),
                };
                Ok(Op::RavelMultiIndex { mode, fortran: prop_fortran(op)? })
            }
            "Choose" => {
                let mode = match op.props.get("mode").and_then(Value::as_str) {
                    Some("raise") => RavelMode::Raise,
                    Some("wrap") => RavelMode::Wrap,
                    Some("clip") => RavelMode::Clip,
                    _ => return Err("prop mode is not raise, wrap or clip".into()),
                };
                Ok(Op::Choose { mode })
            }
            "IfElse" => Ok(Op::IfElse { n_outs: prop_usize(op, "n_outs")? }),
            "BlockDiagonal" => Ok(Op::BlockDiagonal),
            "Convolve1d" => Ok(Op::Convolve1d),
            "Expm" => Ok(Op::Expm),
            "Nonzero" => Ok(Op::Nonzero),
            "Unique" => Ok(Op::Unique {
                index: prop_bool(op, "return_index")?,
                inverse: prop_bool(op, "return_inverse")?,
                counts: prop_bool(op, "return_counts")?,
                axis: match op.props.get("axis") {
                    None | Some(Value::Null) => None,
                    Some(_) => Some(prop_usize(op, "axis")?),
                },
            }),
            "Scan" => super::scan::Scan::parse(op).map(|s| Op::Scan(Box::new(s))),
            "Pad" => match pad_mode(op)? {
                Some(mode) => Ok(Op::Pad { mode }),
                None => op_from_graph(op),
            },
            // The exporter names the OpFromGraph a pullback was built for.
            "OpFromGraph" if op.props.contains_key("$pullback_of") => {
                let forward: ExportedOp =
                    serde_json::from_value(op.props["$pullback_of"].clone()).map_err(|e| e.to_string())?;
                match (forward.type_name.as_str(), pad_mode(&forward)?) {
                    // (constant's pullback, slices of the output gradient, stays a graph)
                    ("Pad", Some(mode)) if mode != PadMode::Constant => Ok(Op::PadGrad { mode }),
                    _ => op_from_graph(op),
                }
            }
            _ if op.props.contains_key("$inner_graph") && has_base(op, "OpFromGraph") => op_from_graph(op),
            // A scalar Op applied to scalars in the tensor graph (`CheckAndRaise` casts its
            // conditions to bool so): an `Elemwise` on 0-d tensors, which scalars are here.
            name if ScalarOp::from_name(name).is_some() || name == "Composite" || op.props.contains_key("$is_while") => {
                ScalarOp::parse(op).map(Op::Elemwise)
            }
            // PyTensor's RandomVariable subclasses, by their `name` prop (lower/random.rs).
            name if name.ends_with("RV") || name == "RandomVariable" || name == "ChoiceWithoutReplacement" => {
                super::random::parse(op).map(|(dist, dtype)| Op::RandomVariable { dist, dtype })
            }
            // End of the tensor-ops block.
            _ => Err("no lowering rule for this Op".into()),
        }
    }
}

/// `Some(symmetric)` for a `Pad` in mode reflect or symmetric, `None` for the other modes.
fn pad_mode(op: &ExportedOp) -> Result<Option<PadMode>, String> {
    let attr = |name: &str| op.props.get("$attrs").and_then(|a| a.get(name)).and_then(Value::as_str);
    match attr("pad_mode") {
        Some(mode @ ("reflect" | "symmetric")) => match attr("reflect_type") {
            None | Some("even") => Ok(Some(if mode == "symmetric" { PadMode::Symmetric } else { PadMode::Reflect })),
            Some(t) => Err(format!("reflect_type={t:?} (only 'even' is lowered)")),
        },
        Some("constant") => Ok(Some(PadMode::Constant)),
        Some("edge") => Ok(Some(PadMode::Edge)),
        _ => Ok(None),
    }
}

/// The modes of `Pad` with a rule of their own (lower/pad.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    Reflect,
    Symmetric,
    Constant,
    Edge,
}

/// An `OpFromGraph` (or subclass) as its inner graph.
fn op_from_graph(op: &ExportedOp) -> Result<Op, String> {
    let g = op.props.get("$inner_graph").and_then(|g| g.get("$graph")).ok_or("$inner_graph is not a graph")?;
    let exported = serde_json::from_value(g.clone()).map_err(|e| e.to_string())?;
    let inner = super::graph::Graph::from_export(&exported).map_err(|e| format!("inner graph: {e}"))?;
    Ok(Op::OpFromGraph(Box::new(inner)))
}


/// The PyTensor class names `Op::parse` accepts (with the props each needs), for the
/// coverage report; a test checks each is parsed and not refused by name.
pub const TENSOR_OP_NAMES: &[&str] = &[
    "Elemwise", "DimShuffle", "DeepCopyOp", "Dot", "Dot22", "CAReduce", "Sum", "Prod", "ProdWithoutZeros", "Max",
    "Min", "All", "Any", "Argmax", "Softmax", "LogSoftmax", "Shape", "Shape_i", "SpecifyShape", "MakeVector",
    "TensorFromScalar", "ScalarFromTensor", "Alloc", "AllocEmpty", "Reshape", "Join", "Split", "Subtensor",
    "IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1", "AdvancedSubtensor", "AdvancedIncSubtensor",
    // Issue 4: BLAS and Blockwise.
    "BatchedDot", "Blockwise",
    // Dense linear algebra.
    "Cholesky", "SolveTriangular", "CholeskySolve", "Solve", "Det", "SLogDet", "MatrixInverse", "LUFactor",
    "LUFactorTridiagonal", "SolveLUFactorTridiagonal", "PivotToPermutations", "LU", "QR", "Eigh", "Eigvalsh", "SVD",
    "MatrixPinv", "SolveSylvester", "Schur", "QZ", "TRSYL",
    // Issue 4: construction, checks, sorting, inner graphs.
    "CheckAndRaise", "Assert", "ARange", "Eye", "ExtractDiag", "AllocDiag", "FillDiagonal", "FillDiagonalOffset",
    "CumOp", "SortOp", "ArgSortOp", "SearchsortedOp", "Repeat", "OpFromGraph", "Bartlett", "UnravelIndex",
    "RavelMultiIndex", "PermuteRowElements", "Nonzero", "Unique",
    // Issue 4: Pad's reflect and symmetric modes, Choose.
    "Pad", "Choose",
    // Issue 4: IfElse, BlockDiagonal, Convolve1d, Expm (lower/ifelse.rs, block_diagonal.rs, convolve.rs, expm.rs).
    "IfElse", "BlockDiagonal", "Convolve1d", "Expm",
    // RandomVariable's subclasses (NormalRV, ...; lower/random.rs), by the base's name.
    "RandomVariable",
    // Scan (for loops; see lower/scan.rs for what is refused).
    "Scan",
    // This backend's own Op (pytensor_mlir.fusion), which its rewrites insert.
    "FusionBarrier",
    // End of the tensor-ops block.
];

/// The scalar op class names `ScalarOp::parse` accepts (inside `Elemwise` and `Composite`).
pub fn scalar_op_names() -> Vec<&'static str> {
    SCALAR_OP_NAMES.iter().copied().filter(|n| ScalarOp::from_name(n).is_some()).chain(["Composite", "ScalarLoop"]).collect()
}

const SCALAR_OP_NAMES: &[&str] = &[
    "Add", "Sub", "Mul", "TrueDiv", "IntDiv", "Mod", "Neg", "Abs", "Pow", "Maximum", "ScalarMaximum", "Minimum",
    "ScalarMinimum", "LT", "GT", "LE", "GE", "EQ", "NEQ", "AND", "OR", "XOR", "Invert", "Switch", "Sqr", "Sqrt",
    "Exp", "Log", "Cast", "Identity", "Second", "IsNan", "IsInf", "Clip", "Sign", "Ceil", "Floor", "Trunc",
    "RoundHalfToEven", "RoundHalfAwayFromZero", "Reciprocal", "Deg2Rad", "Rad2Deg", "Log1p", "Expm1", "Log2",
    "Log10", "Exp2", "Sinh", "Cosh", "Tanh", "ArcSinh", "ArcCosh", "ArcTanh", "Sigmoid", "Softplus", "Log1mexp",
    "Sin", "Cos", "Tan", "ArcSin", "ArcCos", "ArcTan", "ArcTan2", "Erf", "Erfc", "Erfcx", "Erfinv", "Erfcinv", "Gamma",
    "GammaLn", "Psi", "TriGamma", "I0", "I1", "J0", "J1", "GammaInc", "GammaIncC", "GammaL", "GammaU",
    "PolyGamma", "BetaInc", "GammaIncInv", "GammaIncCInv", "BetaIncInv",
    "Owens_t", "Hyp2F1", "Ive", "Kve", "Jv",
];

/// Whether the exported class derives from `base` (the exporter lists the class's MRO
/// for Ops with an inner graph).
fn has_base(op: &ExportedOp, base: &str) -> bool {
    op.props.get("$mro").and_then(Value::as_array).is_some_and(|m| m.iter().any(|c| c.as_str() == Some(base)))
}

fn prop_i64(op: &ExportedOp, prop: &str) -> Result<i64, String> {
    op.props.get(prop).and_then(Value::as_i64).ok_or_else(|| format!("prop {prop} is not an integer"))
}

fn nested_op(op: &ExportedOp, prop: &str) -> Result<ExportedOp, String> {
    let v = op
        .props
        .get(prop)
        .and_then(|v| v.get("$op"))
        .ok_or_else(|| format!("prop {prop} is not an Op"))?;
    serde_json::from_value(v.clone()).map_err(|e| e.to_string())
}

fn prop_usize(op: &ExportedOp, prop: &str) -> Result<usize, String> {
    op.props
        .get(prop)
        .and_then(Value::as_u64)
        .map(|v| v as usize)
        .ok_or_else(|| format!("prop {prop} is not a non-negative integer"))
}

/// An axis prop: `None`, one integer or a list of them (negative counts from the end).
fn prop_axes(op: &ExportedOp, prop: &str) -> Result<Option<Vec<i64>>, String> {
    let bad = || format!("prop {prop} is not an axis or a list of axes");
    match op.props.get(prop) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items.iter().map(|v| v.as_i64().ok_or_else(bad)).collect::<Result<_, _>>().map(Some),
        Some(v) => v.as_i64().map(|a| Some(vec![a])).ok_or_else(bad),
    }
}

fn prop_list<'a>(op: &'a ExportedOp, prop: &str) -> Result<&'a Vec<Value>, String> {
    op.props
        .get(prop)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("prop {prop} is not a list"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every listed name reaches its rule: refused for its (here missing) props or its
    /// data-dependent output, never as an unknown Op.
    #[test]
    fn listed_names_are_parsed() {
        for name in TENSOR_OP_NAMES {
            let op = ExportedOp { type_name: name.to_string(), props: Default::default() };
            match Op::parse(&op) {
                Err(e) if e == "no lowering rule for this Op" && *name != "OpFromGraph" => panic!("{name} is listed but not parsed"),
                _ => {}
            }
        }
        assert!(scalar_op_names().contains(&"Log1mexp") && scalar_op_names().contains(&"Composite"));
        assert!(scalar_op_names().contains(&"ArcTan2") && scalar_op_names().contains(&"TriGamma"));
    }
}
