//! Lowering the graph IR to one MLIR function: a driver, and one rule per Op in the
//! modules named after PyTensor's own (elemwise, shape, blas, basic).

mod advanced;
mod basic;
mod blas;
mod blockwise;
mod elemwise;
mod reduce;
pub mod scalar;
pub mod scalar_math;
mod shape;
pub mod shapes;
mod subtensor;
// Issue 4: construction, checks, sorting, inner graphs.
mod checks;
mod choose;
mod construct;
mod cumulative;
mod inner;
mod linalg;
mod nonzero;
mod qr;
mod eigen;
mod sylvester;
mod schur;
mod unique;
mod permute;
mod pad;
mod ravel;
mod sort;
mod search;
mod packed;
mod scan;
mod scan_lanes;
mod sequential;
mod row_updates;
mod row_folds;
mod column_folds;
mod batched_linalg;
mod pivots;
mod dense_kernels;
mod ifelse;
mod block_diagonal;
mod convolve;
mod expm;
mod tridiagonal;
pub mod random;
// End of the tensor-ops block.

use crate::ir::{BlockwiseCore, Graph, GraphError, Node, Op, ScalarOp, TensorType, Unsupported, VarId};
use crate::DType;
use crate::mlir::{self, Block, Function, Type, Value};
use shapes::{BoolExpr, Dim, DimExpr, IntExpr, IntOp, ShapeCheck};

/// The name of the lowered function; IREE exposes it as `module.main`.
pub const ENTRY: &str = "main";

/// The Python exception a run-time check raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    ZeroDivision,
    /// `ValueError`: numpy's error for an argmax of an empty sequence, and broadcasting.
    Value,
    /// `AssertionError`: a failed `SpecifyShape`, as the C backend raises.
    Assertion,
    /// `IndexError`: an index out of bounds, as numpy and the C backend raise.
    Index,
    /// The Python exception class `Lowered::exceptions[i]` (`module.QualName`), raised with
    /// the check's message: what a `CheckAndRaise` names.
    Raise(usize),
}

/// A run-time error the kernels report through an extra `tensor<i8>` result: nonzero
/// means some element failed and the call raises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeCheck {
    pub kind: ErrorKind,
    pub message: String,
}

/// What the runtime needs to call the lowered function and to give PyTensor its outputs.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub mlir: String,
    /// The graph inputs, in order: the function's arguments.
    pub inputs: Vec<TensorType>,
    pub input_names: Vec<String>,
    /// The function's tensor results, without the check flags that follow them.
    pub results: Vec<TensorType>,
    /// For each graph output, the index of its result (an output listed twice is one result).
    pub outputs: Vec<usize>,
    /// The flag results after `results`, in order.
    pub checks: Vec<RuntimeCheck>,
    /// Shape equalities verified on the inputs before every call.
    pub shape_checks: Vec<ShapeCheck>,
    /// The derived dims that `shape_checks` refer to (`Dim::Derived`).
    pub dim_exprs: Vec<DimExpr>,
    /// Every dtype the graph computes with (inner `Composite` graphs included), each
    /// with the first variable that has it, so a target can refuse a dtype by name.
    pub dtypes: Vec<(DType, String)>,
    /// Whether the compiler may see a tensor of more than one element whose value is
    /// known at compile time (a constant that is not a splat, or anything computed from
    /// constants and static shapes alone). IREE 3.13's inline execution model loses such
    /// tensors (their constant pool is never initialized: the call fails with "source_buffer
    /// is null"), so these graphs are compiled for the full HAL instead.
    pub constant_tensors: bool,
    /// Whether the graph holds an optimization barrier (a `FusionBarrier`, or the start
    /// of a loop in the host program: see lower/linalg.rs; or a branch there: an `IfElse`,
    /// see lower/ifelse.rs): IREE 3.13's inline execution
    /// model fails to compile an optimization barrier on a dispatch's result ("failed to
    /// legalize operation 'util.buffer.subspan'"), so these graphs too are compiled for
    /// the full HAL.
    pub optimization_barriers: bool,
    /// Whether the graph holds a dispatch of scalar loops (dense_kernels/), whose
    /// inner products LLVM's SLP vectorizer makes vector code: compilers of the module
    /// should turn it on (IREE's `--iree-llvmcpu-slp-vectorization`; off by default).
    pub sequential_kernels: bool,
    /// Whether an operation's destination may be an input's buffer (a scatter onto an
    /// input): IREE 3.13 then writes into the argument in place (iree-org/iree#16168), so
    /// the runtime must pass these inputs as private copies.
    pub writes_inputs: bool,
    /// Which inputs those destinations are, where each is an argument itself; `None`
    /// where one may be a value derived from an argument (then any input may be written).
    pub written_inputs: Option<Vec<usize>>,
    /// The exception classes `ErrorKind::Raise` refers to, by `module.QualName`.
    pub exceptions: Vec<String>,
}

/// The state of one lowering: MLIR values and symbolic dims of the variables so far.
pub struct Context<'g> {
    pub graph: &'g Graph,
    values: Vec<Option<Value>>,
    dims: Vec<Option<Vec<Dim>>>,
    shape_checks: Vec<ShapeCheck>,
    checks: Vec<(Value, RuntimeCheck)>,
    /// The table behind `Dim::Derived`.
    dim_exprs: Vec<DimExpr>,
    /// Integer tensors whose values are known as dims or constants (the results of
    /// `Shape`, `Shape_i`, `MakeVector` of those), so `Alloc` and `Reshape` shapes built
    /// from them give dims checkable before the call.
    int_values: Vec<Option<Vec<IntValue>>>,
    /// Why the node being lowered relies on a dim no check before the call can know.
    refusal: Option<String>,
    /// See [`Lowered::writes_inputs`].
    writes_inputs: bool,
    /// See [`Lowered::optimization_barriers`].
    optimization_barriers: bool,
    /// See [`Lowered::sequential_kernels`].
    sequential_kernels: bool,
    /// See [`Lowered::written_inputs`].
    written_inputs: Option<Vec<usize>>,
    /// See `Lowered::exceptions`.
    exceptions: Vec<String>,
    /// Which lowering of a graph this is: the outer graph is 0, each inner graph lowered
    /// (an `OpFromGraph` applied twice is lowered twice) gets the next number. Variable
    /// ids are per graph: a dim interned by a variable (`DimExpr::NonzeroCount`) names
    /// its scope too.
    pub scope: usize,
    /// The number of scopes given out so far (carried in and out of inner lowerings).
    scopes: usize,
    /// For each node, the `IfElse` branch it is lowered in (`None`: where it comes in
    /// the graph's order); see lower/ifelse.rs.
    branches: Vec<Option<ifelse::Branch>>,
}

/// An element of an integer tensor as known while lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntValue {
    Const(i64),
    /// The value equals this (non-negative) dim.
    Dim(Dim),
    /// Known only at run time (an element of a vector whose others are known).
    Unknown,
    /// A signed integer computed from dims: the `DimExpr::Value` at this index of the
    /// table (not a dim; a slice bound derived from shapes).
    Expr(usize),
}

/// The MLIR tensor type of a PyTensor tensor type.
pub fn tensor_type(t: &TensorType) -> mlir::TensorType {
    mlir::TensorType::new(t.shape.clone(), scalar::storage_type(t.dtype))
}

impl<'g> Context<'g> {
    /// Notes that an operation's destination is `value`, which may be (a view of) an
    /// input's buffer: see [`Lowered::writes_inputs`].
    pub fn destination(&mut self, value: &Value) -> Value {
        self.writes_inputs = true;
        // Only the inputs written need private copies: a scatter onto x leaves its index
        // and update inputs as the caller's bytes (each copy is a memcpy per call).
        match (value.arg_index(), &mut self.written_inputs) {
            (Some(k), Some(list)) => list.push(k),
            _ => self.written_inputs = None,
        }
        value.clone()
    }

    /// The tensor a loop in the host program (`scf.for`) starts from and updates in place:
    /// a private copy of `t`, made behind an optimization barrier (its dynamic dims tied to
    /// it; see [`Lowered::optimization_barriers`]).
    ///
    /// IREE updates a loop's carried tensor in place, and in 3.13 it does not check that
    /// the start's buffer is the loop's alone: two loops started from one value (the
    /// zeros two solves start from, merged by CSE) both wrote into it, and a loop started
    /// from an argument would write into the caller's array. A barrier is not CSE'd but it
    /// passes its operand's buffer through, so the copy is made after it, reading through
    /// `tensor.extract` (an identity `linalg.generic` would be folded away): a new buffer
    /// per loop, once per call.
    pub fn loop_start(&mut self, b: &mut mlir::Block, t: &Value) -> Result<Value, String> {
        self.optimization_barriers = true;
        let ty = t.tensor().clone();
        let sizes: Vec<Value> = (0..ty.rank()).filter(|&a| ty.shape[a].is_none()).map(|a| b.tensor_dim(t, a)).collect();
        let shared = b.optimization_barrier(t, &sizes);
        let empty = b.tensor_empty(ty.clone(), &sizes);
        let maps = vec![mlir::AffineMap::identity(ty.rank())];
        let copy = b.linalg_generic(&[], &[empty], &maps, &vec![mlir::IteratorType::Parallel; ty.rank()], |gb, _| {
            let at: Vec<Value> = (0..ty.rank()).map(|a| gb.linalg_index(a)).collect();
            Ok::<_, String>(vec![gb.tensor_extract(&shared, &at)])
        })?;
        Ok(copy[0].clone())
    }

    /// The MLIR value of `v`, writing a constant's value where it is first used.
    pub fn value(&mut self, b: &mut Block, v: VarId) -> Result<Value, String> {
        if let Some(value) = &self.values[v] {
            return Ok(value.clone());
        }
        let var = &self.graph.variables[v];
        if var.is_none {
            return Err(format!("variable {v} is NoneConst, which has no value"));
        }
        let bytes = var.constant.as_ref().ok_or_else(|| format!("variable {v} is used before it is computed"))?;
        let value = basic::constant(b, &var.ty, bytes);
        self.values[v] = Some(value.clone());
        Ok(value)
    }

    /// The symbolic dims of `v` (constants and static dims are static).
    pub fn dims(&self, v: VarId) -> Vec<Dim> {
        match &self.dims[v] {
            Some(d) => d.clone(),
            None => self.graph.ty(v).shape.iter().map(|d| Dim::Static(d.unwrap_or(0))).collect(),
        }
    }

    /// Records what a rule computed for `v`.
    pub fn define(&mut self, v: VarId, value: Value, dims: Vec<Dim>) {
        self.values[v] = Some(value);
        self.dims[v] = Some(dims);
    }

    /// Requires `left == right` at run time, checked before the call.
    pub fn require_equal(&mut self, left: Dim, right: Dim, op: &str) {
        self.require(left, right, op, ErrorKind::Value);
    }

    /// Requires `left == right` before the call, raising `kind` if not. A dim computed
    /// from run-time values cannot be checked then, and a kernel relying on it could read
    /// out of bounds: the node is refused instead (see `lower_node`).
    pub fn require(&mut self, left: Dim, right: Dim, op: &str, kind: ErrorKind) {
        self.push_check(ShapeCheck { left, right, op: op.to_string(), kind, or_one: false });
    }

    /// Requires derived dim `d` to be valid before the call (index arrays that broadcast
    /// together), raising `kind` if not.
    pub fn require_valid(&mut self, d: Dim, op: &str, kind: ErrorKind) {
        if shapes::is_runtime(d, &self.dim_exprs) {
            self.refusal = Some(format!("{op} needs dims computed from run-time values to broadcast together, which cannot be checked before the call"));
            return;
        }
        self.shape_checks.push(ShapeCheck { left: d, right: d, op: op.to_string(), kind, or_one: false });
    }

    /// Requires `value == 1 || value == target` before the call (`ValueError`): a value's
    /// dim that numpy broadcasts where it is 1 at run time.
    pub fn require_equal_or_one(&mut self, value: Dim, target: Dim, op: &str) {
        self.push_check(ShapeCheck { left: value, right: target, op: op.to_string(), kind: ErrorKind::Value, or_one: true });
    }

    fn push_check(&mut self, check: ShapeCheck) {
        let (left, right, op) = (check.left, check.right, &check.op);
        if left == right || (check.or_one && left == Dim::Static(1)) {
            return;
        }
        if shapes::is_runtime(left, &self.dim_exprs) || shapes::is_runtime(right, &self.dim_exprs) {
            self.refusal = Some(format!(
                "{op} needs a dim computed from run-time values (an Alloc or Reshape shape, a symbolic slice bound) \
                 to equal another dim, which cannot be checked before the call"
            ));
            return;
        }
        self.shape_checks.push(check);
    }

    /// The dim `expr` is, interned: static if it depends on no input.
    pub fn derived(&mut self, expr: DimExpr) -> Dim {
        // A whole slice is its base (`arange(0, x.shape[0])` has x's length): one dim, so
        // equalities with it need no check.
        if let DimExpr::Slice { base, start: None | Some(0), stop: None, step: 1 } = expr {
            return base;
        }
        if let Some(pos) = self.dim_exprs.iter().position(|e| *e == expr) {
            return Dim::Derived(pos);
        }
        self.dim_exprs.push(expr);
        let d = Dim::Derived(self.dim_exprs.len() - 1);
        shapes::resolve(d, &shapes::Call::NONE, &self.dim_exprs).map_or(d, Dim::Static)
    }

    /// A fresh dim known only inside the kernel.
    pub fn runtime_dim(&mut self) -> Dim {
        let id = self.dim_exprs.len();
        self.dim_exprs.push(DimExpr::Runtime(id));
        Dim::Derived(id)
    }

    /// Whether `d` is known only inside the kernel.
    pub fn is_runtime(&self, d: Dim) -> bool {
        shapes::is_runtime(d, &self.dim_exprs)
    }

    /// The elements of integer tensor `v` where each is a constant or a known dim.
    pub fn int_values(&self, v: VarId) -> Option<Vec<IntValue>> {
        let var = &self.graph.variables[v];
        if let (Some(bytes), true) = (&var.constant, var.ty.dtype.is_int()) {
            let size = var.ty.dtype.byte_size();
            return Some(bytes.chunks(size).map(|c| IntValue::Const(shape::constant_int(c, var.ty.dtype))).collect());
        }
        self.int_values[v].clone()
    }

    /// The value of 0-d integer `v` where it is known before the call (a constant, a dim,
    /// or computed from those and small integer inputs).
    pub fn int_expr(&self, v: VarId) -> Option<IntExpr> {
        match self.int_values(v).as_deref() {
            Some([known]) => int_expr_of(*known),
            _ => None,
        }
    }

    /// Records that integer tensor `v` holds `values`.
    pub fn set_int_values(&mut self, v: VarId, values: Vec<IntValue>) {
        self.int_values[v] = Some(values);
    }

    /// The `ErrorKind` raising the Python class `name` (`module.QualName`).
    pub fn exception(&mut self, name: &str) -> ErrorKind {
        let i = self.exceptions.iter().position(|e| e == name).unwrap_or_else(|| {
            self.exceptions.push(name.to_string());
            self.exceptions.len() - 1
        });
        ErrorKind::Raise(i)
    }

    /// Dim `d` as an `index` value computed from the dims of `node`'s inputs (`ins`, their
    /// values): a static size, an input's dim, or sums, offsets, products, quotients and
    /// minimums of those; `None` where it is none of these (a run-time dim). For outputs
    /// whose sizes a rule must allocate before computing them (a loop's buffers).
    pub fn dim_value(&self, b: &mut Block, d: Dim, node: &Node, ins: &[Value]) -> Option<Value> {
        if let Dim::Static(s) = d {
            return Some(b.constant_index(s as i64));
        }
        for (k, &v) in node.inputs.iter().enumerate() {
            if let Some(a) = self.dims(v).iter().position(|&x| x == d) {
                return Some(b.tensor_dim(&ins[k], a));
            }
        }
        let Dim::Derived(i) = d else { return None };
        let all = |b: &mut Block, ds: &[Dim]| ds.iter().map(|&x| self.dim_value(b, x, node, ins)).collect::<Option<Vec<Value>>>();
        let fold = |b: &mut Block, vs: Vec<Value>, op: mlir::Arith| {
            let mut it = vs.into_iter();
            let first = it.next()?;
            Some(it.fold(first, |acc, v| b.arith(op, &acc, &v)))
        };
        match self.dim_exprs[i].clone() {
            DimExpr::Sum(ds) => {
                let vs = all(b, &ds)?;
                fold(b, vs, mlir::Arith::AddI)
            }
            DimExpr::Offset(ds, c) => {
                let vs = all(b, &ds)?;
                let sum = fold(b, vs, mlir::Arith::AddI)?;
                let c = b.constant_index(c);
                Some(b.arith(mlir::Arith::AddI, &sum, &c))
            }
            DimExpr::Product(ds) => {
                let vs = all(b, &ds)?;
                fold(b, vs, mlir::Arith::MulI)
            }
            DimExpr::Min(ds) => {
                let vs = all(b, &ds)?;
                fold(b, vs, mlir::Arith::MinSI)
            }
            DimExpr::Quotient { num, den } => {
                let (n, d) = (all(b, &num)?, all(b, &den)?);
                let (one, n) = (b.constant_index(1), fold(b, n, mlir::Arith::MulI)?);
                let d = fold(b, d, mlir::Arith::MulI).unwrap_or_else(|| one.clone());
                // A zero divisor only where the check before the call fails.
                let d = b.arith(mlir::Arith::MaxUI, &d, &one);
                Some(b.arith(mlir::Arith::DivUI, &n, &d))
            }
            DimExpr::Value(e) => self.int_expr_value(b, &e, node, ins),
            _ => None,
        }
    }

    /// `e` as an `index` value where it is sums, differences, products, minimums and
    /// maximums of dims `dim_value` computes (`Convolve1d`'s valid length, |n - k| + 1).
    fn int_expr_value(&self, b: &mut Block, e: &IntExpr, node: &Node, ins: &[Value]) -> Option<Value> {
        match e {
            IntExpr::Const(c) => Some(b.constant_index(*c)),
            IntExpr::Dim(d) => self.dim_value(b, *d, node, ins),
            IntExpr::Bin(op, l, r) => {
                let op = match op {
                    IntOp::Add => mlir::Arith::AddI,
                    IntOp::Sub => mlir::Arith::SubI,
                    IntOp::Mul => mlir::Arith::MulI,
                    IntOp::Min => mlir::Arith::MinSI,
                    IntOp::Max => mlir::Arith::MaxSI,
                    IntOp::FloorDiv | IntOp::Mod => return None,
                };
                let (l, r) = (self.int_expr_value(b, l, node, ins)?, self.int_expr_value(b, r, node, ins)?);
                Some(b.arith(op, &l, &r))
            }
            _ => None,
        }
    }

    /// Adds a flag result (`tensor<i8>`, nonzero on failure) to the function.
    pub fn add_check(&mut self, flag: Value, check: RuntimeCheck) {
        self.checks.push((flag, check));
    }
}

fn op_name(node: &Node) -> String {
    match &node.op {
        Op::Elemwise(s) => format!("Elemwise{{{}}}", elemwise::scalar_name(s)),
        Op::Blockwise { core: BlockwiseCore::Looped { core, .. } } => {
            format!("Blockwise{{{}}}", op_name(&Node { op: (**core).clone(), inputs: vec![], outputs: vec![] }))
        }
        Op::Blockwise { core } => format!("Blockwise{{{core:?}}}"),
        op => format!("{op:?}").split([' ', '{', '(']).next().unwrap_or("?").to_string(),
    }
}

pub(super) fn lower_node(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    cx.refusal = None;
    lower_rule(cx, b, node)?;
    track_int_arith(cx, node);
    track_int_extreme(cx, node);
    track_int_element(cx, node);
    track_int_slice(cx, node);
    cx.refusal.take().map_or(Ok(()), Err)
}

/// A slice by constants of a vector of known integers stays known: `x.shape[-2:]`, as
/// `tri`'s mask spells it in the gradient of a Scan over `cholesky` (its ARange's length
/// then is x's dim, which the matrix it masks has).
fn track_int_slice(cx: &mut Context, node: &Node) {
    let Op::Subtensor { idx_list } = &node.op else { return };
    let (input, out) = (node.inputs[0], node.outputs[0]);
    let ([crate::ir::IdxEntry::Slice { start, stop, step }], 1, 1) = (idx_list.as_slice(), cx.graph.ty(input).ndim(), cx.graph.ty(out).ndim()) else { return };
    let Some(values) = cx.int_values(input) else { return };
    // None: not a constant; Some(None): the entry is absent.
    let constant = |p: &Option<usize>| -> Option<Option<i64>> {
        let Some(p) = p else { return Some(None) };
        match cx.int_values(*node.inputs.get(1 + p)?)?[..] {
            [IntValue::Const(c)] => Some(Some(c)),
            _ => None,
        }
    };
    let (Some(start), Some(stop), Some(step)) = (constant(start), constant(stop), constant(step)) else { return };
    let Some(picked) = python_slice(values.len() as i64, start, stop, step.unwrap_or(1)) else { return };
    let picked: Vec<IntValue> = picked.into_iter().map(|i| values[i as usize]).collect();
    cx.set_int_values(out, picked);
}

/// The positions a Python slice [start:stop:step] takes from a sequence of `len`; None
/// for a step of 0.
fn python_slice(len: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> Option<Vec<i64>> {
    let bound = |v: i64, low: i64, high: i64| (if v < 0 { v + len } else { v }).clamp(low, high);
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, end) = (start.map_or(0, |v| bound(v, 0, len)), stop.map_or(len, |v| bound(v, 0, len)));
        while i < end {
            out.push(i);
            i += step;
        }
    } else if step < 0 {
        let (mut i, end) = (start.map_or(len - 1, |v| bound(v, -1, len - 1)), stop.map_or(-1, |v| bound(v, -1, len - 1)));
        while i > end {
            out.push(i);
            i += step;
        }
    } else {
        return None;
    }
    Some(out)
}

/// An element of a vector of known integers at a constant position stays known:
/// `x.shape[0]` as an unrewritten inner graph spells it, `Subtensor{i}(Shape(x), 0)`
/// (`KroneckerProduct`'s reshape to (m0 m1, n0 n1)).
fn track_int_element(cx: &mut Context, node: &Node) {
    let Op::Subtensor { idx_list } = &node.op else { return };
    let (input, out) = (node.inputs[0], node.outputs[0]);
    let ([crate::ir::IdxEntry::Index(p)], 1, 0) = (idx_list.as_slice(), cx.graph.ty(input).ndim(), cx.graph.ty(out).ndim()) else { return };
    let (Some(values), Some(&at)) = (cx.int_values(input), node.inputs.get(1 + p)) else { return };
    let Some(index) = cx.int_values(at) else { return };
    let [IntValue::Const(i)] = index[..] else { return };
    let len = values.len() as i64;
    let i = if i < 0 { i + len } else { i };
    if let Some(&v) = usize::try_from(i).ok().and_then(|i| values.get(i)) {
        if !matches!(v, IntValue::Unknown) {
            cx.set_int_values(out, vec![v]);
        }
    }
}

/// The least or greatest of a vector of known integers stays known: `min((m, n))` over
/// `MakeVector(x.shape[0], x.shape[1])`, as SVD's gradient sizes its `eye(k)` (the dims
/// then equal the SVD's k by a check before the call, not refused as run-time ones).
fn track_int_extreme(cx: &mut Context, node: &Node) {
    let Op::CAReduce { reduction, .. } = &node.op else { return };
    let o = match reduction {
        crate::ir::Reduction::Min => IntOp::Min,
        crate::ir::Reduction::Max => IntOp::Max,
        _ => return,
    };
    let (input, out) = (node.inputs[0], node.outputs[0]);
    if cx.graph.ty(input).ndim() != 1 || cx.graph.ty(out).ndim() != 0 || !cx.graph.ty(out).dtype.is_int() {
        return;
    }
    let Some(values) = cx.int_values(input) else { return };
    let Some(exprs) = values.iter().map(|&v| int_expr_of(v)).collect::<Option<Vec<_>>>() else { return };
    let Some(folded) = exprs.into_iter().reduce(|acc, x| IntExpr::Bin(o, Box::new(acc), Box::new(x))) else { return };
    if let Sym::Int(v) = int_expr(cx, folded) {
        cx.set_int_values(out, vec![v]);
    }
}

/// Integer scalars computed from known dims and constants stay known: sums and
/// differences (`x.shape[0] - 1`, as gradients and `split` build shapes) as an offset
/// dim, products (`x.shape[0] * x.shape[1]`, as `tensordot` and `einsum` build the shapes
/// of the reshapes around their `Dot`) as a product dim; through a fused `Composite` of
/// such arithmetic too (the gradients of those reshapes fuse their shape arithmetic with
/// `Reshape`'s -1 handling: `switch(eq(a*b, -1), ..., a*b)`, decided here since dims are
/// never negative).
fn track_int_arith(cx: &mut Context, node: &Node) {
    let Op::Elemwise(op) = &node.op else { return };
    let scalar_int = |cx: &Context, v: VarId| cx.graph.ty(v).ndim() == 0 && cx.graph.ty(v).dtype.is_int();
    // A bool computed from dims (`Convolve1d`'s mode in its gradient, `n < k`) is kept too,
    // as the integer 0 or 1.
    let scalar_bool = |cx: &Context, v: VarId| cx.graph.ty(v).ndim() == 0 && cx.graph.ty(v).dtype == DType::Bool;
    if !node.outputs.iter().any(|&o| scalar_int(cx, o) || scalar_bool(cx, o)) || node.inputs.iter().any(|&i| cx.graph.ty(i).ndim() != 0) {
        return;
    }
    let ins: Vec<Sym> = node
        .inputs
        .iter()
        .map(|&i| match (cx.graph.ty(i).dtype == DType::Bool, cx.int_values(i).as_deref()) {
            (true, Some([IntValue::Const(c)])) => Sym::Bool(*c != 0),
            (true, Some([IntValue::Expr(e)])) => Sym::Cond(BoolExpr::Not(Box::new(BoolExpr::Eq(IntExpr::Value(*e), IntExpr::Const(0))))),
            (true, _) => Sym::Unknown,
            (false, Some([v @ (IntValue::Const(_) | IntValue::Dim(_) | IntValue::Expr(_))])) => Sym::Int(*v),
            (false, _) => Sym::Unknown,
        })
        .collect();
    let outs = match op {
        ScalarOp::Composite(g) => {
            let mut vals: Vec<Sym> = g
                .constants
                .iter()
                .zip(&g.dtypes)
                .map(|(c, &dtype)| match c {
                    Some(bytes) if dtype.is_int() => Sym::Int(IntValue::Const(shape::constant_int(bytes, dtype))),
                    Some(bytes) if dtype == DType::Bool => Sym::Bool(bytes.iter().any(|&b| b != 0)),
                    _ => Sym::Unknown,
                })
                .collect();
            for (&i, s) in g.inputs.iter().zip(&ins) {
                vals[i] = s.clone();
            }
            for n in &g.nodes {
                let args: Vec<Sym> = n.inputs.iter().map(|&i| vals[i].clone()).collect();
                let r = eval_int(cx, &n.op, &args);
                for &o in &n.outputs {
                    vals[o] = if g.dtypes[o].is_int() || g.dtypes[o] == DType::Bool { r.clone() } else { Sym::Unknown };
                }
            }
            g.outputs.iter().map(|&o| vals[o].clone()).collect()
        }
        op => vec![eval_int(cx, op, &ins)],
    };
    for (&o, s) in node.outputs.iter().zip(outs) {
        match (scalar_int(cx, o), scalar_bool(cx, o), s) {
            (true, _, Sym::Int(v)) => cx.set_int_values(o, vec![v]),
            (_, true, Sym::Bool(b)) => cx.set_int_values(o, vec![IntValue::Const(b as i64)]),
            (_, true, Sym::Cond(c)) => {
                let one_or_zero = IntExpr::Select(Box::new(c), Box::new(IntExpr::Const(1)), Box::new(IntExpr::Const(0)));
                if let Sym::Int(v) = int_expr(cx, one_or_zero) {
                    cx.set_int_values(o, vec![v]);
                }
            }
            _ => {}
        }
    }
}

/// A scalar as `track_int_arith` knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sym {
    Int(IntValue),
    Bool(bool),
    /// A comparison of integers computed from dims.
    Cond(BoolExpr),
    Unknown,
}

impl Sym {
    /// The integer as an expression (`None`: not a known integer).
    fn expr(&self) -> Option<IntExpr> {
        match self {
            Sym::Int(IntValue::Const(c)) => Some(IntExpr::Const(*c)),
            Sym::Int(IntValue::Dim(d)) => Some(IntExpr::Dim(*d)),
            Sym::Int(IntValue::Expr(i)) => Some(IntExpr::Value(*i)),
            _ => None,
        }
    }

    fn cond(&self) -> Option<BoolExpr> {
        match self {
            Sym::Bool(b) => Some(BoolExpr::Const(*b)),
            Sym::Cond(c) => Some(c.clone()),
            _ => None,
        }
    }
}

/// `expr` as a known integer: a constant where it is one, else a `DimExpr::Value`.
fn int_expr(cx: &mut Context, expr: IntExpr) -> Sym {
    if let IntExpr::Const(c) = expr {
        return Sym::Int(IntValue::Const(c));
    }
    match cx.derived(DimExpr::Value(expr)) {
        Dim::Derived(i) => Sym::Int(IntValue::Expr(i)),
        // Constants only, folded.
        Dim::Static(n) => i64::try_from(n).map_or(Sym::Unknown, |c| Sym::Int(IntValue::Const(c))),
        Dim::Input { .. } => Sym::Unknown,
    }
}

/// What `eval_int`'s exact rules do not know: integer arithmetic, comparisons and
/// selections of known integers as expressions evaluated before the call.
fn eval_expr(cx: &mut Context, op: &ScalarOp, args: &[Sym]) -> Sym {
    let ints: Option<Vec<IntExpr>> = args.iter().map(Sym::expr).collect();
    let bin = |o: IntOp, v: &[IntExpr]| -> Option<IntExpr> {
        let mut it = v.iter().cloned();
        let first = it.next()?;
        Some(it.fold(first, |acc, x| IntExpr::Bin(o, Box::new(acc), Box::new(x))))
    };
    let e = match (op, ints.as_deref()) {
        (ScalarOp::Add, Some(v)) => bin(IntOp::Add, v),
        (ScalarOp::Sub, Some(v)) if v.len() == 2 => bin(IntOp::Sub, v),
        (ScalarOp::Mul, Some(v)) => bin(IntOp::Mul, v),
        (ScalarOp::IntDiv, Some(v)) if v.len() == 2 => bin(IntOp::FloorDiv, v),
        (ScalarOp::Mod, Some(v)) if v.len() == 2 => bin(IntOp::Mod, v),
        (ScalarOp::Minimum, Some(v)) => bin(IntOp::Min, v),
        (ScalarOp::Maximum, Some(v)) => bin(IntOp::Max, v),
        (ScalarOp::Neg, Some([a])) => Some(IntExpr::Neg(Box::new(a.clone()))),
        (ScalarOp::Cast | ScalarOp::Identity, Some([a])) => Some(a.clone()),
        (ScalarOp::Lt | ScalarOp::Gt | ScalarOp::Le | ScalarOp::Ge | ScalarOp::Eq | ScalarOp::Neq, Some([a, b])) => {
            let (a, b) = (a.clone(), b.clone());
            return Sym::Cond(match op {
                ScalarOp::Lt => BoolExpr::Lt(a, b),
                ScalarOp::Gt => BoolExpr::Lt(b, a),
                ScalarOp::Le => BoolExpr::Le(a, b),
                ScalarOp::Ge => BoolExpr::Le(b, a),
                ScalarOp::Eq => BoolExpr::Eq(a, b),
                _ => BoolExpr::Not(Box::new(BoolExpr::Eq(a, b))),
            });
        }
        (ScalarOp::Switch, _) if args.len() == 3 => match (args[0].cond(), args[1].expr(), args[2].expr()) {
            (Some(c), Some(a), Some(b)) => Some(IntExpr::Select(Box::new(c), Box::new(a), Box::new(b))),
            _ => None,
        },
        (ScalarOp::And | ScalarOp::Or, _) if args.len() == 2 => {
            return match (args[0].cond(), args[1].cond()) {
                (Some(a), Some(b)) if matches!(op, ScalarOp::And) => Sym::Cond(BoolExpr::And(Box::new(a), Box::new(b))),
                (Some(a), Some(b)) => Sym::Cond(BoolExpr::Or(Box::new(a), Box::new(b))),
                _ => Sym::Unknown,
            }
        }
        (ScalarOp::Invert, _) if args.len() == 1 => return args[0].cond().map_or(Sym::Unknown, |c| Sym::Cond(BoolExpr::Not(Box::new(c)))),
        _ => None,
    };
    e.map_or(Sym::Unknown, |e| int_expr(cx, e))
}

fn eval_int(cx: &mut Context, op: &ScalarOp, args: &[Sym]) -> Sym {
    // x^2 as x * x (`kron` and `solve_discrete_lyapunov` size an `Eye` by sqr(n)).
    if let (ScalarOp::Sqr, [x]) = (op, args) {
        return eval_int(cx, &ScalarOp::Mul, &[x.clone(), x.clone()]);
    }
    match eval_exact(cx, op, args) {
        Sym::Unknown => eval_expr(cx, op, args),
        known => known,
    }
}

/// Sums, differences and products of dims as dims, and what is decided without values.
fn eval_exact(cx: &mut Context, op: &ScalarOp, args: &[Sym]) -> Sym {
    let ints: Option<Vec<IntValue>> = args.iter().map(|a| if let Sym::Int(v) = a { Some(*v) } else { None }).collect();
    match (op, ints) {
        (ScalarOp::Add | ScalarOp::Sub, Some(vals)) => {
            let mut dims = Vec::new();
            let mut constant = 0i64;
            for (pos, v) in vals.iter().enumerate() {
                let negate = matches!(op, ScalarOp::Sub) && pos > 0;
                match *v {
                    IntValue::Const(c) => match constant.checked_add(if negate { -c } else { c }) {
                        Some(sum) => constant = sum,
                        None => return Sym::Unknown,
                    },
                    IntValue::Dim(d) if !negate => dims.push(d),
                    _ => return Sym::Unknown,
                }
            }
            Sym::Int(if dims.is_empty() {
                IntValue::Const(constant)
            } else if constant == 0 && dims.len() == 1 {
                IntValue::Dim(dims[0])
            } else {
                IntValue::Dim(cx.derived(DimExpr::Offset(dims, constant)))
            })
        }
        (ScalarOp::Mul, Some(vals)) => {
            let mut dims = Vec::new();
            let mut constant = 1i64;
            for v in vals {
                match v {
                    IntValue::Const(c) => match constant.checked_mul(c) {
                        Some(p) => constant = p,
                        None => return Sym::Unknown,
                    },
                    IntValue::Dim(d) => dims.push(d),
                    IntValue::Unknown | IntValue::Expr(_) => return Sym::Unknown,
                }
            }
            Sym::Int(if dims.is_empty() || constant == 0 {
                IntValue::Const(if dims.is_empty() { constant } else { 0 })
            } else if constant < 0 {
                return Sym::Unknown;
            } else if constant == 1 && dims.len() == 1 {
                IntValue::Dim(dims[0])
            } else {
                if constant != 1 {
                    dims.push(Dim::Static(constant as u64));
                }
                IntValue::Dim(cx.derived(DimExpr::Product(dims)))
            })
        }
        // A dim (never negative) against a negative constant, or two constants.
        (ScalarOp::Eq | ScalarOp::Neq, Some(vals)) if vals.len() == 2 => {
            let equal = match (vals[0], vals[1]) {
                (IntValue::Const(a), IntValue::Const(b)) => a == b,
                (IntValue::Dim(_), IntValue::Const(c)) | (IntValue::Const(c), IntValue::Dim(_)) if c < 0 => false,
                _ => return Sym::Unknown,
            };
            Sym::Bool(equal == matches!(op, ScalarOp::Eq))
        }
        (ScalarOp::Identity, _) if args.len() == 1 => args[0].clone(),
        (ScalarOp::Switch, _) if args.len() == 3 => match args[0] {
            Sym::Bool(c) => args[if c { 1 } else { 2 }].clone(),
            _ => Sym::Unknown,
        },
        _ => Sym::Unknown,
    }
}

fn lower_rule(cx: &mut Context, b: &mut Block, node: &Node) -> Result<(), String> {
    let name = op_name(node);
    match &node.op {
        Op::Elemwise(s) => elemwise::lower(cx, b, node, s, &name),
        Op::DimShuffle { new_order, .. } => shape::dimshuffle(cx, b, node, new_order),
        Op::DeepCopy => basic::deep_copy(cx, b, node),
        Op::FusionBarrier => basic::fusion_barrier(cx, b, node),
        Op::Dot => blas::dot(cx, b, node, &name),
        Op::CAReduce { reduction, axis, acc_dtype, zero_size_raises } => {
            reduce::careduce(cx, b, node, *reduction, axis.as_deref(), *acc_dtype, *zero_size_raises)
        }
        Op::Argmax { axis } => reduce::argmax(cx, b, node, axis.as_deref()),
        Op::Softmax { axis, log } => reduce::softmax(cx, b, node, *axis, *log),
        Op::Shape => shape::shape(cx, b, node),
        Op::ShapeI(i) => shape::shape_i(cx, b, node, *i),
        Op::SpecifyShape => shape::specify_shape(cx, b, node, &name),
        Op::MakeVector => basic::make_vector(cx, b, node),
        Op::TensorFromScalar | Op::ScalarFromTensor => basic::scalar_identity(cx, b, node),
        Op::Alloc => basic::alloc(cx, b, node, &name),
        Op::AllocEmpty => basic::alloc_empty(cx, b, node, &name),
        Op::Reshape => shape::reshape(cx, b, node, &name),
        Op::Join => basic::join(cx, b, node, &name),
        Op::Split => basic::split(cx, b, node, &name),
        Op::Subtensor { idx_list } => subtensor::subtensor(cx, b, node, idx_list),
        Op::IncSubtensor { idx_list, set_instead_of_inc } => {
            subtensor::inc_subtensor(cx, b, node, idx_list, *set_instead_of_inc)
        }
        Op::AdvancedSubtensor1 => subtensor::advanced_subtensor1(cx, b, node),
        Op::AdvancedIncSubtensor1 { set_instead_of_inc } => {
            subtensor::advanced_inc_subtensor1(cx, b, node, *set_instead_of_inc)
        }
        Op::AdvancedSubtensor { idx_list } => advanced::advanced_subtensor(cx, b, node, idx_list),
        Op::AdvancedIncSubtensor { idx_list, set_instead_of_inc } => {
            advanced::advanced_inc_subtensor(cx, b, node, idx_list, *set_instead_of_inc)
        }
        // Issue 4: BLAS and Blockwise (lower/blas.rs, lower/blockwise.rs).
        Op::BatchedDot => blas::batched_dot(cx, b, node, &name),
        Op::Blockwise { core } => blockwise::blockwise(cx, b, node, core, &name),
        // End of the BLAS block.
        Op::Cholesky { lower } => linalg::cholesky(cx, b, node, *lower),
        Op::SolveTriangular { lower, unit_diagonal, b_ndim } => {
            linalg::solve_triangular(cx, b, node, *lower, *unit_diagonal, *b_ndim)
        }
        Op::CholeskySolve { lower, b_ndim } => linalg::cholesky_solve(cx, b, node, *lower, *b_ndim),
        Op::Solve { assume_a, lower, b_ndim } => linalg::solve(cx, b, node, assume_a, *lower, *b_ndim),
        Op::Det => linalg::det(cx, b, node),
        Op::SLogDet => linalg::slogdet(cx, b, node),
        Op::MatrixInverse => linalg::matrix_inverse(cx, b, node),
        Op::LUFactor => linalg::lu_factor(cx, b, node),
        Op::LUFactorTridiagonal => tridiagonal::lu_factor_tridiagonal(cx, b, node),
        Op::SolveLUFactorTridiagonal { b_ndim, transposed } => tridiagonal::solve_lu_factor_tridiagonal(cx, b, node, *b_ndim, *transposed),
        Op::PivotToPermutations { inverse } => linalg::pivot_to_permutations(cx, b, node, *inverse),
        Op::LU { permute_l, p_indices } => linalg::lu(cx, b, node, *permute_l, *p_indices),
        Op::QR { mode, pivoting } => qr::qr(cx, b, node, *mode, *pivoting),
        Op::Eigh { lower } => eigen::eigh(cx, b, node, *lower, true),
        Op::Eigvalsh { lower } => eigen::eigh(cx, b, node, *lower, false),
        Op::SVD { full_matrices, compute_uv } => eigen::svd(cx, b, node, *full_matrices, *compute_uv),
        Op::MatrixPinv { hermitian } => eigen::pinv(cx, b, node, *hermitian),
        Op::SolveSylvester => sylvester::solve_sylvester(cx, b, node),
        Op::Trsyl => sylvester::trsyl(cx, b, node),
        Op::Schur { output, sort } => schur::schur(cx, b, node, output, sort.as_deref()),
        Op::QZ { complex_output, sort, return_eigenvalues } => schur::qz(cx, b, node, *complex_output, sort.as_deref(), *return_eigenvalues),
        // Issue 4: construction, checks, sorting, inner graphs.
        Op::CheckAndRaise { msg, exception } => checks::check_and_raise(cx, b, node, msg, exception),
        Op::ARange => construct::arange(cx, b, node),
        Op::Eye => construct::eye(cx, b, node),
        Op::ExtractDiag { offset, axis1, axis2 } => construct::extract_diag(cx, b, node, *offset, *axis1, *axis2),
        Op::AllocDiag { offset, axis1, axis2 } => construct::alloc_diag(cx, b, node, *offset, *axis1, *axis2),
        Op::FillDiagonal { offset } => construct::fill_diagonal(cx, b, node, *offset),
        Op::Repeat { axis } => construct::repeat(cx, b, node, *axis),
        Op::Bartlett => construct::bartlett(cx, b, node),
        Op::Nonzero => nonzero::nonzero(cx, b, node),
        Op::Unique { index, inverse, counts, axis } => unique::unique(cx, b, node, *index, *inverse, *counts, *axis),
        Op::UnravelIndex { fortran } => ravel::unravel_index(cx, b, node, *fortran),
        Op::RavelMultiIndex { mode, fortran } => ravel::ravel_multi_index(cx, b, node, *mode, *fortran),
        Op::PermuteRowElements { inverse } => permute::permute_row_elements(cx, b, node, *inverse),
        Op::CumOp { axis, mul } => cumulative::cumop(cx, b, node, *axis, *mul),
        Op::Sort { arg } => sort::sort(cx, b, node, *arg),
        Op::Searchsorted { right } => sort::searchsorted(cx, b, node, *right),
        Op::OpFromGraph(inner) => inner::op_from_graph(cx, b, node, inner),
        Op::Scan(s) => scan::scan(cx, b, node, s),
        Op::Pad { mode } => pad::pad(cx, b, node, *mode),
        Op::PadGrad { mode } => pad::pad_grad(cx, b, node, *mode),
        Op::Choose { mode } => choose::choose(cx, b, node, *mode),
        Op::IfElse { n_outs } => ifelse::ifelse(cx, b, node, *n_outs),
        Op::BlockDiagonal => block_diagonal::block_diagonal(cx, b, node),
        Op::Convolve1d => convolve::convolve1d(cx, b, node),
        Op::Expm => expm::expm(cx, b, node),
        Op::RandomVariable { dist, dtype } => random::random_variable(cx, b, node, *dist, *dtype),
        // End of the tensor-ops block.
    }
}

/// A known element as an expression (`Unknown` has none).
pub fn int_expr_of(v: IntValue) -> Option<IntExpr> {
    match v {
        IntValue::Const(c) => Some(IntExpr::Const(c)),
        IntValue::Dim(d) => Some(IntExpr::Dim(d)),
        IntValue::Expr(i) => Some(IntExpr::Value(i)),
        IntValue::Unknown => None,
    }
}

/// Integer inputs of at most this many elements (of static shape) are read before the call.
const SMALL_INT_INPUT: u64 = 8;

/// Lowers the whole graph, gathering every node that fails rather than stopping at one.
pub fn lower(graph: &Graph) -> Result<Lowered, GraphError> {
    let n = graph.variables.len();
    let arg_types: Vec<Type> = graph.inputs.iter().map(|&i| tensor_type(graph.ty(i)).into()).collect();
    let mut f = Function::new(ENTRY, arg_types);
    // A test switch (tests/test_buffer_reuse.py): kernels' results start as NaN.
    if std::env::var_os("PYTENSOR_MLIR_POISON_UNWRITTEN").is_some_and(|v| v == "1") {
        f.poison_unwritten();
    }
    let mut cx = Context {
        graph,
        values: vec![None; n],
        dims: vec![None; n],
        shape_checks: Vec::new(),
        checks: Vec::new(),
        dim_exprs: Vec::new(),
        int_values: vec![None; n],
        refusal: None,
        writes_inputs: false,
        optimization_barriers: false,
        sequential_kernels: false,
        written_inputs: Some(Vec::new()),
        exceptions: Vec::new(),
        scope: 0,
        scopes: 1,
        branches: ifelse::branches(graph),
    };
    for (pos, &v) in graph.inputs.iter().enumerate() {
        let dims = graph
            .ty(v)
            .shape
            .iter()
            .enumerate()
            .map(|(axis, d)| match d {
                Some(s) => Dim::Static(*s),
                None => Dim::Input { input: pos, axis },
            })
            .collect();
        cx.define(v, f.args()[pos].clone(), dims);
        // A small integer input (a length, a slice bound, a shape vector given as an
        // argument): its values are read before the call, so the dims computed from them
        // (`x[:n]`, `arange(n)`, `reshape(x, (n, -1))`) are checked then like any other.
        let ty = graph.ty(v);
        let size = ty.shape.iter().try_fold(1u64, |acc, d| d.and_then(|d| acc.checked_mul(d)));
        if let (true, Some(size @ 1..=SMALL_INT_INPUT)) = (ty.dtype.is_int(), size) {
            let values = (0..size as usize)
                .map(|index| match cx.derived(DimExpr::Value(IntExpr::Input { input: pos, index, dtype: ty.dtype })) {
                    Dim::Derived(i) => IntValue::Expr(i),
                    d => unreachable!("an input's value resolved without the input: {d:?}"),
                })
                .collect();
            cx.set_int_values(v, values);
        }
    }
    let mut failures = Vec::new();
    // Variables a refused node would have computed: the nodes that use them are not
    // lowered, and not listed (their error would only say a value is missing).
    let mut missing = vec![false; graph.variables.len()];
    for (k, node) in graph.nodes.iter().enumerate() {
        // A node of an IfElse branch is lowered by that IfElse's rule, in the branch.
        if cx.branches[k].is_some() {
            continue;
        }
        let lowered = !node.inputs.iter().any(|&i| missing[i]) && match lower_node(&mut cx, f.body(), node) {
            Ok(()) => true,
            Err(reason) => {
                failures.push(Unsupported { op: op_name(node), reason });
                false
            }
        };
        if !lowered {
            for &o in &node.outputs {
                missing[o] = true;
            }
        }
    }
    if !failures.is_empty() {
        return Err(GraphError::Unsupported(failures));
    }
    let mut results: Vec<VarId> = Vec::new();
    let mut outputs = Vec::with_capacity(graph.outputs.len());
    for &o in &graph.outputs {
        let index = results.iter().position(|&r| r == o).unwrap_or_else(|| {
            results.push(o);
            results.len() - 1
        });
        outputs.push(index);
    }
    let mut values = Vec::with_capacity(results.len() + cx.checks.len());
    for &r in &results {
        values.push(cx.value(f.body(), r).map_err(GraphError::Invalid)?);
    }
    values.extend(cx.checks.iter().map(|(v, _)| v.clone()));
    let input_names = graph
        .inputs
        .iter()
        .enumerate()
        .map(|(pos, &v)| graph.variables[v].name.clone().unwrap_or_else(|| format!("input {pos}")))
        .collect();
    Ok(Lowered {
        mlir: f.finish(&values),
        inputs: graph.inputs.iter().map(|&i| graph.ty(i).clone()).collect(),
        input_names,
        results: results.iter().map(|&r| graph.ty(r).clone()).collect(),
        outputs,
        checks: cx.checks.into_iter().map(|(_, c)| c).collect(),
        shape_checks: cx.shape_checks,
        dim_exprs: cx.dim_exprs,
        dtypes: dtypes_used(graph),
        constant_tensors: has_constant_tensors(graph),
        optimization_barriers: cx.optimization_barriers || graph.nodes.iter().any(|n| matches!(n.op, Op::FusionBarrier)),
        sequential_kernels: cx.sequential_kernels,
        writes_inputs: cx.writes_inputs,
        written_inputs: cx.written_inputs,
        exceptions: cx.exceptions,
    })
}

/// See [`Lowered::constant_tensors`]. Conservative: every variable computed from
/// constants only, and every `Shape`/`Shape_i` (static dims fold to constants), counts.
/// Counting only shapes of static dims was tried (caae55a): graphs with shapes of dynamic
/// dims then ran inline and some went wrong (test_scan_lanes' last rows 0 x 4 for 3 x 4,
/// a pad's gradient of the wrong shape, out-of-range buffer views in `__init` for dots of
/// other ranks), so every shape counts
/// unless its static shape holds at most one element; a constant counts unless it is a
/// splat (MLIR keeps one value for those, which IREE fills rather than copies).
fn has_constant_tensors(graph: &Graph) -> bool {
    let is_constant = |v: VarId| graph.variables[v].constant.is_some();
    let mut known = graph.variables.iter().map(|v| v.constant.is_some()).collect::<Vec<bool>>();
    for node in &graph.nodes {
        let from_constants = node.inputs.iter().all(|&i| known[i]) || matches!(node.op, Op::Shape | Op::ShapeI(_));
        for &o in &node.outputs {
            known[o] = from_constants;
        }
    }
    // An inner graph's own constants count too (its other variables are computed from
    // the node's inputs, counted above).
    let inner = graph.nodes.iter().any(|n| matches!(&n.op, Op::OpFromGraph(g) if has_constant_tensors(g)) || matches!(&n.op, Op::Scan(s) if has_constant_tensors(&s.graph)));
    inner || (0..graph.variables.len()).any(|v| {
        if !known[v] || graph.variables[v].is_none {
            return false;
        }
        let ty = graph.ty(v);
        let at_most_one = ty.shape.iter().all(|d| d.is_some()) && ty.shape.iter().map(|d| d.unwrap_or(0)).product::<u64>() <= 1;
        if at_most_one {
            return false;
        }
        !(is_constant(v) && is_splat(graph.variables[v].constant.as_deref().unwrap_or_default(), ty.dtype))
    })
}

/// Whether `bytes` (C-order elements of `dtype`) hold one value repeated.
fn is_splat(bytes: &[u8], dtype: DType) -> bool {
    let size = dtype.byte_size();
    bytes.chunks_exact(size).all(|c| c == &bytes[..size])
}

/// The graph's dtypes in order of first use: inputs, then each node's operands and results
/// and the variables of its inner scalar graph, then the outputs. Constant operands do not
/// count: their values are folded into the ops that use them, whose own dtypes count.
fn dtypes_used(graph: &Graph) -> Vec<(DType, String)> {
    let mut used: Vec<(DType, String)> = Vec::new();
    let mut add = |dtype: DType, what: &dyn Fn() -> String| {
        if !used.iter().any(|(d, _)| *d == dtype) {
            used.push((dtype, what()));
        }
    };
    for (pos, &v) in graph.inputs.iter().enumerate() {
        let name = graph.variables[v].name.clone().unwrap_or_else(|| format!("input {pos}"));
        add(graph.ty(v).dtype, &|| format!("input {name}"));
    }
    for node in &graph.nodes {
        for &v in node.inputs.iter().chain(&node.outputs) {
            if graph.variables[v].constant.is_none() {
                let role = if node.outputs.contains(&v) { "the output" } else { "an input" };
                add(graph.ty(v).dtype, &|| format!("{role} of {}", op_name(node)));
            }
        }
        if let Some(inner) = match &node.op {
            Op::OpFromGraph(g) => Some(&**g),
            Op::Scan(s) => Some(&s.graph),
            _ => None,
        } {
            for (dtype, _) in dtypes_used(inner) {
                add(dtype, &|| format!("inside {}", op_name(node)));
            }
        }
        if let Some(inner) = match &node.op {
            Op::Elemwise(op) => op.inner_graph(),
            _ => None,
        } {
            for (dtype, constant) in inner.dtypes.iter().zip(&inner.constants) {
                if constant.is_none() {
                    add(*dtype, &|| format!("inside {}", op_name(node)));
                }
            }
        }
    }
    // A constant output is stored in its own dtype.
    for &v in &graph.outputs {
        add(graph.ty(v).dtype, &|| "a graph output".to_string());
    }
    used
}

#[cfg(test)]
mod tests {
    use super::python_slice;

    #[test]
    fn python_slices_take_the_positions_python_does() {
        // list(range(5))[1:4:2], [::-1], [3:0:-1], [-10:10], [4:-10:-2], [-1:-3:-1]
        assert_eq!(python_slice(5, Some(1), Some(4), 2), Some(vec![1, 3]));
        assert_eq!(python_slice(5, None, None, -1), Some(vec![4, 3, 2, 1, 0]));
        assert_eq!(python_slice(5, Some(3), Some(0), -1), Some(vec![3, 2, 1]));
        assert_eq!(python_slice(5, Some(-10), Some(10), 1), Some(vec![0, 1, 2, 3, 4]));
        assert_eq!(python_slice(5, Some(4), Some(-10), -2), Some(vec![4, 2, 0]));
        assert_eq!(python_slice(5, Some(-1), Some(-3), -1), Some(vec![4, 3]));
        // x.shape[-2:] of a matrix
        assert_eq!(python_slice(2, Some(-2), None, 1), Some(vec![0, 1]));
        assert_eq!(python_slice(5, None, None, 0), None);
    }
}
