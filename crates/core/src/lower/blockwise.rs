//! `Blockwise`: a core op applied over leading batch dims, with PyTensor's broadcasting
//! (a batch dim broadcasts only where its static size is 1; other sizes must agree, and
//! are checked before the call like `Elemwise`'s).
//!
//! `Dot` (`pt.matmul`, vectorized dots) is one linalg op, a contraction over the batch
//! dims. Any other core op with a rule of its own (`Blockwise{Cholesky}`, `{Det}`,
//! `{SolveTriangular}`, ...) is a loop in the host program over the batch elements, in
//! C order, each step the core rule on one element's slices, its result inserted at its
//! batch position: one loop per output (IREE 3.13 returned wrong buffers for the later
//! results of a loop carrying several, see linalg.rs); a run-time check of the core rule
//! (a batched inverse's singular matrix) gets a loop of its own that ors the step's flag
//! into a carried one. An output dim that no input has (`Blockwise{AllocDiag}`'s
//! n + |offset|) is the core rule's own dim, computed from the inputs' dims before the
//! loop (`Context::dim_value`). A core op whose own rule refuses is refused by name.
//! On the CPU, a Blockwise of Cholesky, SolveTriangular, CholeskySolve, Solve ("gen"),
//! Det or MatrixInverse (no broadcast batch dims) skips the loop: the kernels take the
//! batch's matrices stacked, in one dispatch (batched_linalg.rs). `Blockwise{AllocDiag}` is
//! AllocDiag's own rule with its axes past the batch's (the rule takes leading axes). A
//! Blockwise without batch dims is its core op.
//!
//! In the MLIR mode's own rewrites a `Blockwise{Dot}` rarely survives: PyTensor turns
//! matmuls with equal batch patterns into `BatchedDot` and moves broadcast batch dims into
//! the core dot with reshapes (`specialize_matmul_to_batched_dot`,
//! `local_batched_matmul_to_core_matmul*`). It stays where those rewrites are excluded,
//! or in graphs built after rewriting.

use super::shapes::Dim;
use super::{batched_linalg, inner, scalar, tensor_type, Context, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::{BlockwiseCore, Graph, Node, Op, TensorType as IrType, Variable};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, IndexArg, IteratorType, Value};

pub fn blockwise(cx: &mut Context, b: &mut Block, node: &Node, core: &BlockwiseCore, name: &str) -> Result<(), String> {
    match core {
        BlockwiseCore::Dot => matmul(cx, b, node, name),
        BlockwiseCore::Looped { core, inputs, outputs } => looped(cx, b, node, core, inputs, outputs, name),
    }
}

/// The one-node graph of the core op on one batch element: inputs 0.., then outputs.
/// `constants`: an input's bytes where it is a constant of one batch element (every batch
/// dim 1), so the core rule sees it as the constant it is (`Convolve1d`'s mode).
fn core_graph(core: &Op, ins: &[IrType], outs: &[IrType], constants: Vec<Option<Vec<u8>>>) -> Graph {
    let variable = |(ty, constant): (&IrType, Option<Vec<u8>>)| Variable { ty: ty.clone(), name: None, constant, is_none: false };
    let n = ins.len();
    Graph {
        variables: ins.iter().chain(outs).zip(constants.into_iter().chain(std::iter::repeat(None))).map(variable).collect(),
        inputs: (0..n).collect(),
        outputs: (n..n + outs.len()).collect(),
        nodes: vec![Node { op: core.clone(), inputs: (0..n).collect(), outputs: (n..n + outs.len()).collect() }],
    }
}

/// The reassociation that merges the `batch` leading unit dims of a rank `batch + core`
/// tensor into the first core dim (a 0-d core: every dim merged away).
fn batch_groups(batch: usize, core: usize) -> Vec<Vec<usize>> {
    if core == 0 {
        return Vec::new();
    }
    let mut groups = vec![(0..=batch).collect::<Vec<_>>()];
    groups.extend((batch + 1..batch + core).map(|d| vec![d]));
    groups
}

#[allow(clippy::too_many_arguments)]
fn looped(cx: &mut Context, b: &mut Block, node: &Node, core: &Op, sig_in: &[Vec<String>], sig_out: &[Vec<String>], name: &str) -> Result<(), String> {
    if sig_in.len() != node.inputs.len() || sig_out.len() != node.outputs.len() {
        return Err(format!("{name}: a signature of {} inputs and {} outputs", sig_in.len(), sig_out.len()));
    }
    let in_tys: Vec<IrType> = node.inputs.iter().map(|&v| cx.graph.ty(v).clone()).collect();
    let out_tys: Vec<IrType> = node.outputs.iter().map(|&v| cx.graph.ty(v).clone()).collect();
    let batch = out_tys[0].ndim().checked_sub(sig_out[0].len()).ok_or("an output of fewer dims than its core")?;
    for (ty, sig) in in_tys.iter().zip(sig_in).chain(out_tys.iter().zip(sig_out)) {
        if ty.ndim() != batch + sig.len() {
            return Err(format!("{name}: operands of {batch} batch dims and one of {} dims for a core of {}", ty.ndim(), sig.len()));
        }
    }
    // Cores whose rules take the batch at once: the CPU kernels of stacked matrices, and
    // AllocDiag.
    let stacked = match core {
        Op::Cholesky { lower } => batched_linalg::cholesky(cx, b, node, batch, *lower)?,
        Op::SolveTriangular { lower, unit_diagonal, b_ndim } => batched_linalg::solve_triangular(cx, b, node, batch, (*lower, *unit_diagonal, *b_ndim))?,
        Op::CholeskySolve { lower, b_ndim } => batched_linalg::cholesky_solve(cx, b, node, batch, (*lower, *b_ndim))?,
        Op::Solve { assume_a, b_ndim, .. } => batched_linalg::solve(cx, b, node, batch, assume_a, *b_ndim)?,
        Op::Det => batched_linalg::det(cx, b, node, batch)?,
        Op::MatrixInverse => batched_linalg::inverse(cx, b, node, batch)?,
        Op::LUFactor => batched_linalg::lu_factor(cx, b, node, batch)?,
        Op::PivotToPermutations { inverse } => batched_linalg::pivot_to_permutations(cx, b, node, batch, *inverse)?,
        Op::Schur { output, sort } => batched_linalg::schur(cx, b, node, batch, output, sort.as_deref())?,
        Op::Eigh { lower } => batched_linalg::eigh(cx, b, node, batch, *lower, true)?,
        Op::Eigvalsh { lower } => batched_linalg::eigh(cx, b, node, batch, *lower, false)?,
        Op::QR { mode, pivoting } => batched_linalg::qr(cx, b, node, batch, *mode, *pivoting)?,
        Op::SVD { full_matrices, compute_uv } => batched_linalg::svd(cx, b, node, batch, *full_matrices, *compute_uv)?,
        // AllocDiag's rule takes leading axes itself: its axes move past the batch's.
        Op::AllocDiag { offset, axis1, axis2 } if batch > 0 => {
            super::construct::alloc_diag(cx, b, node, *offset, axis1 + batch, axis2 + batch)?;
            Some(())
        }
        _ => None,
    };
    if stacked.is_some() {
        return Ok(());
    }
    // No batch dims (a Blockwise that vectorizing a Scan's inner graph for its gradient
    // leaves, e.g. of ARange): the core op's rule on the node's own inputs and outputs, in
    // this graph's context, so that what is known of them holds (an ARange's length from
    // a Shape: a separate inner graph made it a dim known only at run time, and then the
    // tril mask built from it could not meet the matrix it masks).
    if batch == 0 {
        let core_node = Node { op: core.clone(), inputs: node.inputs.clone(), outputs: node.outputs.clone() };
        return super::lower_node(cx, b, &core_node);
    }
    let values: Vec<Value> = node.inputs.iter().map(|&v| cx.value(b, v)).collect::<Result<_, _>>()?;
    let in_dims: Vec<Vec<Dim>> = node.inputs.iter().map(|&v| cx.dims(v)).collect();
    // Batch dims: the inputs that do not broadcast there (static 1) agree; the first
    // gives the size.
    let mut dims: Vec<Dim> = Vec::with_capacity(batch);
    let mut sizes: Vec<Value> = Vec::with_capacity(batch);
    for j in 0..batch {
        let mut from: Option<(Dim, usize)> = None;
        for (i, ty) in in_tys.iter().enumerate() {
            if ty.broadcastable(j) {
                continue;
            }
            match from {
                None => from = Some((in_dims[i][j], i)),
                Some((first, _)) => cx.require_equal(first, in_dims[i][j], name),
            }
        }
        match from {
            Some((d, i)) => {
                dims.push(d);
                sizes.push(b.tensor_dim(&values[i], j));
            }
            None => {
                dims.push(Dim::Static(1));
                sizes.push(b.constant_index(1));
            }
        }
    }
    // A core dim named twice among the inputs (LU's "(m,m)") sizes the outputs by its
    // first occurrence, so the others must agree (ValueError before the call; PyTensor's
    // perform gives a non-square LU's rectangular factors, outside its signature).
    for (i, sig) in sig_in.iter().enumerate() {
        for (a, letter) in sig.iter().enumerate() {
            let first = sig_in.iter().enumerate().find_map(|(i0, s0)| s0.iter().position(|l| l == letter).map(|a0| (i0, a0)));
            if let Some((i0, a0)) = first.filter(|&(i0, a0)| (i0, a0) != (i, a)) {
                cx.require_equal(in_dims[i0][batch + a0], in_dims[i][batch + a], &format!("{name} (core dims named {letter} differ)"));
            }
        }
    }
    // A core dim by its name: the first input that has it.
    let named = |b: &mut Block, letter: &str| -> Result<(Dim, Value), String> {
        for (i, sig) in sig_in.iter().enumerate() {
            if let Some(a) = sig.iter().position(|l| l == letter) {
                return Ok((in_dims[i][batch + a], b.tensor_dim(&values[i], batch + a)));
            }
        }
        Err(format!("{name}: output dim {letter} is not an input's"))
    };
    let mut count = b.constant_index(1);
    for s in &sizes {
        count = b.arith(Arith::MulI, &count, s);
    }
    let core_in: Vec<IrType> = in_tys.iter().map(|t| IrType { dtype: t.dtype, shape: t.shape[batch..].to_vec() }).collect();
    let core_out: Vec<IrType> = out_tys.iter().map(|t| IrType { dtype: t.dtype, shape: t.shape[batch..].to_vec() }).collect();
    let constants = node
        .inputs
        .iter()
        .map(|&v| cx.graph.variables[v].constant.clone().filter(|_| cx.graph.ty(v).shape[..batch].iter().all(|&d| d == Some(1))))
        .collect();
    let graph = core_graph(core, &core_in, &core_out, constants);
    // An output dim no input has (AllocDiag's n + |offset|): the core rule's own dim for
    // it, learnt by lowering the core on one element where nothing is written, computed
    // from the inputs' dims before the loop (its buffer is allocated first).
    let mut core_dims: Option<Vec<Vec<Dim>>> = None;
    let mut out_core: Vec<Vec<(Dim, Value)>> = Vec::new();
    for (k, sig) in sig_out.iter().enumerate() {
        let mut dims_k = Vec::with_capacity(sig.len());
        for (a, letter) in sig.iter().enumerate() {
            if let Ok(found) = named(b, letter) {
                dims_k.push(found);
                continue;
            }
            if core_dims.is_none() {
                core_dims = Some(core_output_dims(cx, b, &graph, &values, &in_tys, &in_dims, batch)?);
            }
            let d = core_dims.as_ref().map(|c| c[k][a]).ok_or("no core dims")?;
            let v = cx.dim_value(b, d, node, &values).ok_or_else(|| format!("{name}: output dim {letter} is neither an input's nor computed from inputs' dims"))?;
            dims_k.push((d, v));
        }
        out_core.push(dims_k);
    }
    // The core rule's own output dims must be the signature's, or its results would not
    // fit the buffers (QR's raw mode: PyTensor's signature says H is (n, m), its perform
    // returns (m, n)): else ValueError before the call.
    if core_dims.is_none() {
        core_dims = core_output_dims(cx, b, &graph, &values, &in_tys, &in_dims, batch).ok();
    }
    if let Some(core_dims) = &core_dims {
        for (k, dims_k) in out_core.iter().enumerate() {
            for (a, (d, _)) in dims_k.iter().enumerate() {
                // (A dim known only in the kernel cannot be checked before the call.)
                let own = core_dims.get(k).and_then(|c| c.get(a)).copied().filter(|&own| !cx.is_runtime(own) && !cx.is_runtime(*d));
                if let Some(own) = own {
                    cx.require_equal(own, *d, &format!("{name} (its core's output {k} has other dims than its signature's)"));
                }
            }
        }
    }
    // The core's run-time checks, as its rule adds them in each loop's step.
    let mut raised = Vec::new();
    for (k, &out) in node.outputs.iter().enumerate() {
        let full_ty = IrType { dtype: out_tys[k].dtype, shape: vec![None; batch + sig_out[k].len()] };
        let mut all_sizes = sizes.clone();
        all_sizes.extend(out_core[k].iter().map(|(_, v)| v.clone()));
        let empty = b.tensor_empty(tensor_type(&full_ty), &all_sizes);
        let zero = scalar::scalar_constant(b, full_ty.dtype, &vec![0u8; full_ty.dtype.byte_size()])?;
        let start = b.linalg_fill(&zero.value, &empty);
        let start = cx.loop_start(b, &start)?;
        let (first, step) = (b.constant_index(0), b.constant_index(1));
        let checks_before = cx.checks.len();
        let r = b.scf_for(&first, &count, &step, &[start], |body, i, args| {
            let (next, dropped) = batch_step(cx, body, &graph, i, &args[0], Carried::Output(k), &values, &in_tys, &in_dims, &sizes, batch, name)?;
            raised = dropped;
            Ok::<_, String>(vec![next])
        })?;
        let want = tensor_type(&out_tys[k]);
        let result = if *r[0].tensor() == want { r[0].clone() } else { b.tensor_cast(&r[0], want) };
        let mut out_dims = dims.clone();
        out_dims.extend(out_core[k].iter().map(|(d, _)| *d));
        cx.define(out, result, out_dims);
        debug_assert_eq!(cx.checks.len(), checks_before);
    }
    // The core's run-time checks (a batched inverse's singular matrix): one loop each,
    // or'ing the step's flag into a carried one, raised after the call like the core's.
    for (c, check) in raised.into_iter().enumerate() {
        let e = b.tensor_empty(crate::mlir::TensorType::new(vec![], crate::mlir::ScalarType::I8), &[]);
        let none = b.constant_int(0, crate::mlir::ScalarType::I8);
        let start = b.linalg_fill(&none, &e);
        let start = cx.loop_start(b, &start)?;
        let (first, step) = (b.constant_index(0), b.constant_index(1));
        let r = b.scf_for(&first, &count, &step, &[start], |body, i, args| {
            let (next, _) = batch_step(cx, body, &graph, i, &args[0], Carried::Check(c), &values, &in_tys, &in_dims, &sizes, batch, name)?;
            Ok::<_, String>(vec![next])
        })?;
        cx.add_check(r[0].clone(), check);
    }
    Ok(())
}

/// The dims of the core graph's outputs, as its rules give them, from one lowering of it
/// on batch element 0 into a block that is thrown away (its checks dropped too).
fn core_output_dims(cx: &mut Context, b: &mut Block, graph: &Graph, values: &[Value], in_tys: &[IrType], in_dims: &[Vec<Dim>], batch: usize) -> Result<Vec<Vec<Dim>>, String> {
    let mut scratch = b.scratch();
    let (checks, shape_checks) = (cx.checks.len(), cx.shape_checks.len());
    let bound = element_inputs(&mut scratch, graph, None, values, in_tys, in_dims, batch);
    let outs = inner::lower_graph(cx, &mut scratch, graph, bound);
    cx.checks.truncate(checks);
    cx.shape_checks.truncate(shape_checks);
    Ok(outs?.into_iter().map(|(_, dims, _, _)| dims).collect())
}

/// Each input's slice at batch element `index` (one index per batch dim; `None`: element
/// 0; a broadcast batch dim read at 0), bound to the core graph's inputs.
#[allow(clippy::too_many_arguments)]
fn element_inputs(
    b: &mut Block,
    graph: &Graph,
    index: Option<&[Value]>,
    values: &[Value],
    in_tys: &[IrType],
    in_dims: &[Vec<Dim>],
    batch: usize,
) -> Vec<(usize, Value, Vec<Dim>, Option<Vec<super::IntValue>>)> {
    let mut bound = Vec::with_capacity(values.len());
    for (n, (v, ty)) in values.iter().zip(in_tys).enumerate() {
        let core = ty.ndim() - batch;
        let mut offsets: Vec<IndexArg> = (0..batch)
            .map(|j| match index {
                Some(index) if !ty.broadcastable(j) => IndexArg::Dyn(index[j].clone()),
                _ => IndexArg::Const(0),
            })
            .collect();
        offsets.extend((0..core).map(|_| IndexArg::Const(0)));
        let mut lens: Vec<IndexArg> = vec![IndexArg::Const(1); batch];
        for a in batch..ty.ndim() {
            lens.push(match ty.shape[a] {
                Some(s) => IndexArg::Const(s as i64),
                None => IndexArg::Dyn(b.tensor_dim(v, a)),
            });
        }
        let slice = b.tensor_extract_slice(v, &offsets, &lens);
        let element = b.tensor_collapse(&slice, &batch_groups(batch, core));
        let want = tensor_type(&graph.variables[n].ty);
        let element = if *element.tensor() == want { element } else { b.tensor_cast(&element, want) };
        bound.push((n, element, in_dims[n][batch..].to_vec(), None));
    }
    bound
}

/// What one of `looped`'s loops carries: output k, or the flag of the core's check c.
#[derive(Clone, Copy)]
enum Carried {
    Output(usize),
    Check(usize),
}

/// One batch element `i` (flat, C order) of `looped`'s loop for `k`: the inputs' slices
/// there (index 0 on their broadcast batch dims), the core graph lowered on them, and its
/// output `k` inserted into `into` (or check `k`'s flag or'ed into it).
#[allow(clippy::too_many_arguments)]
fn batch_step(
    cx: &mut Context,
    b: &mut Block,
    graph: &Graph,
    i: &Value,
    into: &Value,
    k: Carried,
    values: &[Value],
    in_tys: &[IrType],
    in_dims: &[Vec<Dim>],
    sizes: &[Value],
    batch: usize,
    name: &str,
) -> Result<(Value, Vec<RuntimeCheck>), String> {
    let mut index = vec![i.clone(); batch];
    let mut rest = i.clone();
    for j in (0..batch).rev() {
        index[j] = b.arith(Arith::RemUI, &rest, &sizes[j]);
        rest = b.arith(Arith::DivUI, &rest, &sizes[j]);
    }
    let bound = element_inputs(b, graph, Some(&index), values, in_tys, in_dims, batch);
    let checks = cx.checks.len();
    let outs = inner::lower_graph(cx, b, graph, bound)?;
    // The core's run-time checks: flags computed in this step, carried by loops of their
    // own (`Carried::Check`); here they are dropped.
    let raised: Vec<(Value, RuntimeCheck)> = cx.checks.drain(checks..).collect();
    let descriptors: Vec<RuntimeCheck> = raised.iter().map(|(_, c)| c.clone()).collect();
    let k = match k {
        Carried::Output(k) => k,
        Carried::Check(c) => {
            let flag = raised.get(c).ok_or_else(|| format!("{name}: a check that comes and goes"))?.0.clone();
            let e = b.tensor_empty(into.tensor().clone(), &[]);
            let maps = vec![AffineMap { dims: 0, results: vec![] }; 3];
            let r = b.linalg_generic(&[flag, into.clone()], &[e], &maps, &[], |g, args| Ok::<_, String>(vec![g.arith(Arith::OrI, &args[0], &args[1])]))?;
            return Ok((r[0].clone(), descriptors));
        }
    };
    let (value, _, _, ty) = outs.into_iter().nth(k).ok_or("the core graph has fewer outputs")?;
    let core = ty.ndim();
    let mut shape: Vec<Option<u64>> = vec![Some(1); batch];
    let mut lens: Vec<IndexArg> = vec![IndexArg::Const(1); batch];
    for a in 0..core {
        shape.push(value.tensor().shape[a]);
        lens.push(b.dim_arg(&value, a));
    }
    let expanded = b.tensor_expand(&value, &batch_groups(batch, core), crate::mlir::TensorType::new(shape, value.tensor().element), &lens);
    let mut offsets: Vec<IndexArg> = index.into_iter().map(IndexArg::Dyn).collect();
    offsets.extend((0..core).map(|_| IndexArg::Const(0)));
    Ok((b.tensor_insert_slice(&expanded, into, &offsets), descriptors))
}

/// `Blockwise{Dot}`: `out[..., m, n] = sum_k x[..., m, k] * y[..., k, n]` as one
/// `linalg.generic` (batch and `m`, `n` parallel, `k` a reduction) on a zero-filled
/// accumulator, each operand's broadcast batch dims read at index 0. Batch dims align
/// from the right, as numpy's do.
fn matmul(cx: &mut Context, b: &mut Block, node: &Node, name: &str) -> Result<(), String> {
    let (xa, xb, out) = (node.inputs[0], node.inputs[1], node.outputs[0]);
    let (ta, tb, to) = (cx.graph.ty(xa).clone(), cx.graph.ty(xb).clone(), cx.graph.ty(out).clone());
    let rank = to.ndim();
    if ta.ndim() < 2 || tb.ndim() < 2 || rank < 2 || ta.ndim().max(tb.ndim()) != rank {
        return Err(format!("{name} of ranks {} and {} to rank {rank}", ta.ndim(), tb.ndim()));
    }
    if to.dtype == DType::Bool {
        return Err(format!("{name} of bool"));
    }
    let (da, db) = (cx.dims(xa), cx.dims(xb));
    let batch = rank - 2;
    let (ba, bb) = (ta.ndim() - 2, tb.ndim() - 2);
    // Output batch dim `j` is operand batch dim `j - (batch - b_op)` where that is >= 0.
    let batch_axis = |j: usize, b_op: usize| (j + b_op).checked_sub(batch);
    cx.require_equal(da[ba + 1], db[bb], name);

    let va = cx.value(b, xa)?;
    let vb = cx.value(b, xb)?;
    let a = super::elemwise::cast(b, &va, &ta, to.dtype)?;
    let y = super::elemwise::cast(b, &vb, &tb, to.dtype)?;

    // Batch dims: the operands that do not broadcast there must agree; the first gives
    // the size.
    let mut dims: Vec<Dim> = Vec::with_capacity(rank);
    let mut sizes = Vec::new();
    for j in 0..batch {
        let mut from: Option<(Dim, usize, bool)> = None; // (dim, axis, in a?)
        for (in_a, b_op, ty, d) in [(true, ba, &ta, &da), (false, bb, &tb, &db)] {
            let Some(axis) = batch_axis(j, b_op) else { continue };
            if ty.shape[axis] == Some(1) {
                continue;
            }
            match from {
                None => from = Some((d[axis], axis, in_a)),
                Some((first, _, _)) => cx.require_equal(first, d[axis], name),
            }
        }
        let dim = match (to.shape[j], from) {
            (Some(n), _) => Dim::Static(n),
            (None, Some((d, _, _))) => d,
            (None, None) => return Err(format!("{name}: output batch dim {j} is dynamic but every operand broadcasts there")),
        };
        if to.shape[j].is_none() {
            let (_, axis, in_a) = from.expect("checked above");
            sizes.push(b.tensor_dim(if in_a { &a } else { &y }, axis));
        }
        dims.push(dim);
    }
    dims.push(da[ba]);
    dims.push(db[bb + 1]);
    if to.shape[batch].is_none() {
        sizes.push(b.tensor_dim(&a, ba));
    }
    if to.shape[batch + 1].is_none() {
        sizes.push(b.tensor_dim(&y, bb + 1));
    }

    // Iteration dims: the batch dims, then m, n, k.
    let (m, n, k) = (batch, batch + 1, batch + 2);
    let operand_map = |b_op: usize, ty: &crate::ir::TensorType, core: [usize; 2]| {
        let mut results: Vec<AffineExpr> = (0..b_op)
            .map(|axis| if ty.shape[axis] == Some(1) { AffineExpr::Constant(0) } else { AffineExpr::Dim(axis + batch - b_op) })
            .collect();
        results.extend(core.map(AffineExpr::Dim));
        AffineMap { dims: batch + 3, results }
    };
    let maps = [
        operand_map(ba, &ta, [m, k]),
        operand_map(bb, &tb, [k, n]),
        AffineMap { dims: batch + 3, results: (0..batch + 2).map(AffineExpr::Dim).collect() },
    ];
    let mut iterators = vec![IteratorType::Parallel; batch + 2];
    iterators.push(IteratorType::Reduction);

    let empty = b.tensor_empty(tensor_type(&to), &sizes);
    let zero = scalar::scalar_constant(b, to.dtype, &vec![0u8; to.dtype.byte_size()])?;
    let init = b.linalg_fill(&zero.value, &empty);
    let (mul, add) = if to.dtype.is_float() { (Arith::MulF, Arith::AddF) } else { (Arith::MulI, Arith::AddI) };
    let r = b.linalg_generic(&[a, y], &[init], &maps, &iterators, |body, args| {
        let p = body.arith(mul, &args[0], &args[1]);
        Ok::<_, String>(vec![body.arith(add, &args[2], &p)])
    })?;
    cx.define(out, r.into_iter().next().expect("one result"), dims);
    Ok(())
}
