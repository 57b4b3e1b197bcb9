//! `Scan`: PyTensor's loop as an `scf.for` in the host program, one step per iteration,
//! each step the inner graph lowered in place on the step's rows (as `Blockwise`'s loops
//! lower their core op), its results inserted into the loop-carried buffers.
//!
//! What PyTensor's `Scan.perform` does, and so this rule:
//! - step `i` reads row `i` of each sequence. A state buffer of length `L` is read at
//!   `(pos + tap) mod L` for each of its input taps and written at `(pos + tap) mod L` for
//!   each of its output taps (0 for a mit_sot or sit_sot; a mit_mot, the buffers of the
//!   gradients PyTensor builds through a Scan, lists its own), where `pos = (i - mintap)
//!   mod L` and `mintap` is the buffer's least input tap: a mit_sot or sit_sot buffer
//!   shorter than the whole history (PyTensor's `scan_save_mem` keeps only the rows a graph
//!   uses) is a ring. A nit_sot (an output with no state) of length `S` is written at
//!   `i mod S`. Untraced states are carried whole.
//! - after the loop, a mit_sot, sit_sot or nit_sot ring that wrapped is rotated so its
//!   oldest row comes first, and the rows the loop never reached are zeros (PyTensor's
//!   step 6); mit_mot buffers are returned as they are.
//! - a negative number of steps raises `IndexError`, a sequence shorter than the number of
//!   steps `ValueError` (the loop then runs no step: nothing is read out of bounds), a
//!   buffer with no rows for a loop that has steps `ValueError`; a run-time check inside
//!   the step (an index out of bounds) raises after the call, as its rule's does.
//!
//! The loop carries one tensor, every state packed into it (packed.rs: IREE 3.13 mixes up
//! the buffers of a loop carrying several), and it starts as a private copy made behind an
//! optimization barrier as linalg.rs's loops do (`Context::loop_start`: IREE updates it in
//! place).
//! The inner graph is lowered once more, beforehand, into a block that is thrown away, to
//! learn its outputs' dims (a nit_sot buffer is allocated before the first step) and its
//! run-time checks (each one a flag carried through the loop).
//!
//! A while loop (`until`: the inner graph's last output is a stop flag) stops after the
//! first step whose flag is true (an `scf.for` over the most steps whose steps are skipped
//! once stopped: IREE 3.13 miscompiles an `scf.while` carrying a tensor); its mit_sot,
//! sit_sot and nit_sot outputs that did not fill lose the rows of the steps not done
//! (PyTensor's step 6: a buffer of `L` rows after `d` of `n` steps keeps `L - (n - d)`),
//! so their lengths are known only after the call.
//!
//! Refused by name: a nit_sot output whose dims are not dims of the node's inputs.
//!
//! A Scan whose step is elementwise is lowered by scan_lanes.rs instead (one dispatch for
//! the whole loop); `scan` tries that first.

use super::shapes::{Dim, DimExpr};
use super::subtensor::scalar_index;
use super::packed::Packed;
use super::{inner, tensor_type, Context, ErrorKind, IntValue, RuntimeCheck};
use crate::ir::{Node, Scan};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpI, IndexArg, IteratorType, ScalarType, TensorType, Value};

/// Where each kind of the node's inputs starts.
pub(super) struct Layout {
    pub seqs: usize,
    pub bufs: usize,
    pub untraced: usize,
    pub nit_lengths: usize,
    pub non_seqs: usize,
}

impl Layout {
    pub(super) fn of(s: &Scan) -> Layout {
        let seqs = 1;
        let bufs = seqs + s.n_seqs;
        let untraced = bufs + s.mit_mot_in.len() + s.sot_taps.len();
        let nit_lengths = untraced + s.n_untraced;
        let non_seqs = nit_lengths + s.n_nit_sot;
        Layout { seqs, bufs, untraced, nit_lengths, non_seqs }
    }
}

/// A state buffer: the taps a step reads it at and writes it at (relative to the step's
/// position), and whether it is a ring put in order after the loop (mit_sot, sit_sot).
struct Buffer<'s> {
    reads: &'s [i64],
    writes: &'s [i64],
    ring: bool,
}

const WRITTEN_AT_0: &[i64] = &[0];

/// A non-sequence as bound in every step: the outer value and its dims.
struct Bound {
    value: Value,
    dims: Vec<Dim>,
}

pub fn scan(cx: &mut Context, b: &mut Block, node: &Node, s: &Scan) -> Result<(), String> {
    // Elementwise steps: the whole loop in one dispatch (scan_lanes.rs).
    if super::scan_lanes::try_scan(cx, b, node, s)? {
        return Ok(());
    }
    let at = Layout::of(s);
    // The state buffers: mit_mot's (read and written at their taps), then mit_sot's and
    // sit_sot's (read at negative taps, written at tap 0, put in order after the loop).
    let bufs: Vec<Buffer> = s
        .mit_mot_in
        .iter()
        .zip(&s.mit_mot_out)
        .map(|(i, o)| Buffer { reads: i, writes: o, ring: false })
        .chain(s.sot_taps.iter().map(|t| Buffer { reads: t, writes: WRITTEN_AT_0, ring: true }))
        .collect();
    let n_buf = bufs.len();
    // Where each buffer's outputs start among the inner graph's outputs.
    let mut out_base = Vec::with_capacity(n_buf);
    let mut n_buf_outs = 0;
    for buf in &bufs {
        out_base.push(n_buf_outs);
        n_buf_outs += buf.writes.len();
    }
    let (nit_out, untraced_out) = (n_buf_outs, n_buf_outs + s.n_nit_sot);
    if node.inputs.len() != at.non_seqs + s.n_non_seqs || node.outputs.len() != n_buf + s.n_nit_sot + s.n_untraced {
        return Err(format!("a node of {} inputs and {} outputs for its ScanInfo", node.inputs.len(), node.outputs.len()));
    }
    let taps_read: usize = bufs.iter().map(|b| b.reads.len()).sum();
    let g = &s.graph;
    // A while loop's stop flag is the inner graph's last output.
    let flag_out = untraced_out + s.n_untraced;
    if g.inputs.len() != s.n_seqs + taps_read + s.n_untraced + s.n_non_seqs || g.outputs.len() != flag_out + usize::from(s.as_while) {
        return Err(format!("an inner graph of {} inputs and {} outputs for its ScanInfo", g.inputs.len(), g.outputs.len()));
    }
    let ins: Vec<Value> = node.inputs.iter().map(|&v| cx.value(b, v)).collect::<Result<_, _>>()?;
    let idx = |b: &mut Block, v: i64| b.constant_index(v);
    let (zero, one) = (idx(b, 0), idx(b, 1));

    let buf_lens: Vec<Value> = (0..n_buf).map(|k| b.tensor_dim(&ins[at.bufs + k], 0)).collect();
    let nit_lens: Vec<Value> = (0..s.n_nit_sot).map(|k| scalar_index(cx, b, node.inputs[at.nit_lengths + k])).collect::<Result<_, _>>()?;
    let count = step_count(cx, b, node, s, &ins, &buf_lens, &nit_lens)?;
    // Ring lengths for the index arithmetic: at least 1 (a loop that would divide by 0
    // runs no step).
    let ring = |b: &mut Block, len: &Value| b.arith(Arith::MaxSI, len, &one);
    let buf_rings: Vec<Value> = buf_lens.iter().map(|l| ring(b, l)).collect();
    let nit_rings: Vec<Value> = nit_lens.iter().map(|l| ring(b, l)).collect();
    let mintaps: Vec<i64> = bufs.iter().map(|b| b.reads.iter().copied().min().unwrap_or(0)).collect();
    // pos at step 0, and each tap as a non-negative offset, modulo the ring's length.
    let modulo = |b: &mut Block, v: i64, len: &Value| {
        let c = b.constant_index(v);
        let r = b.arith(Arith::RemSI, &c, len);
        let r = b.arith(Arith::AddI, &r, len);
        b.arith(Arith::RemSI, &r, len)
    };
    let pos0: Vec<Value> = (0..n_buf).map(|k| modulo(b, -mintaps[k], &buf_rings[k])).collect();
    let tap_offsets: Vec<Vec<Value>> = (0..n_buf).map(|k| bufs[k].reads.iter().map(|&t| modulo(b, t, &buf_rings[k])).collect()).collect();
    let write_offsets: Vec<Vec<Value>> = (0..n_buf).map(|k| bufs[k].writes.iter().map(|&t| modulo(b, t, &buf_rings[k])).collect()).collect();

    // The inner inputs as bound in a step (`value` filled in the step).
    let outer_dims = |cx: &Context, k: usize, from: usize| cx.dims(node.inputs[k])[from..].to_vec();
    let non_seqs: Vec<Bound> = (0..s.n_non_seqs).map(|k| Bound { value: ins[at.non_seqs + k].clone(), dims: outer_dims(cx, at.non_seqs + k, 0) }).collect();

    // Learn what the inner graph gives (its outputs' dims, its run-time checks) by lowering
    // one step where nothing is written; then drop what that lowering recorded.
    let (checks_before, shape_checks_before) = (cx.checks.len(), cx.shape_checks.len());
    let (out_dims, step_checks) = {
        let mut scratch = b.scratch();
        let carried: Vec<Value> = (0..n_buf).map(|k| ins[at.bufs + k].clone()).chain(ins[at.untraced..at.nit_lengths].iter().cloned()).collect();
        let pos: Vec<Value> = pos0.clone();
        let mut read = |b: &mut Block, k: usize, r: Option<&Value>| match r {
            Some(r) => row_at(b, &carried[k], r),
            None => carried[k].clone(),
        };
        let bound = step_inputs(cx, &mut scratch, node, s, &at, &ins, &zero, &mut read, &pos, &tap_offsets, &buf_rings, &non_seqs);
        let outs = inner::lower_graph(cx, &mut scratch, g, bound?)?;
        let checks: Vec<RuntimeCheck> = cx.checks.drain(checks_before..).map(|(_, c)| c).collect();
        cx.shape_checks.truncate(shape_checks_before);
        (outs.into_iter().map(|(_, dims, _, _)| dims).collect::<Vec<_>>(), checks)
    };

    // The nit_sot buffers, sized (length, the inner output's dims), found among the dims
    // of the node's inputs.
    let mut starts: Vec<Value> = (0..n_buf).map(|k| ins[at.bufs + k].clone()).collect();
    let mut nit_dims: Vec<Vec<Dim>> = Vec::new();
    for k in 0..s.n_nit_sot {
        let o = g.outputs[nit_out + k];
        let ty = g.ty(o);
        let dims = &out_dims[nit_out + k];
        let mut sizes = vec![nit_lens[k].clone()];
        for (a, &d) in dims.iter().enumerate() {
            sizes.push(match ty.shape[a] {
                Some(size) => idx(b, size as i64),
                None => cx.dim_value(b, d, node, &ins).ok_or_else(|| format!("a nit_sot output whose dim {a} is not a dim of the Scan's inputs"))?,
            });
        }
        let full = TensorType::new(vec![None; 1 + ty.ndim()], tensor_type(ty).element);
        let dyn_sizes: Vec<Value> = sizes.clone();
        starts.push(b.tensor_empty(full, &dyn_sizes));
        let length = match cx.int_values(node.inputs[at.nit_lengths + k]).as_deref() {
            Some([IntValue::Dim(d)]) => *d,
            Some([IntValue::Const(c)]) if *c >= 0 => Dim::Static(*c as u64),
            _ => cx.runtime_dim(),
        };
        nit_dims.push(std::iter::once(length).chain(dims.iter().copied()).collect());
    }
    starts.extend((0..s.n_untraced).map(|k| ins[at.untraced + k].clone()));
    // The loop writes into the state buffers: an argument passed as one is the caller's
    // (IREE writes into a destination argument in place).
    for v in &starts {
        if v.arg_index().is_some() {
            cx.destination(v);
        }
    }
    // The shapes a step must keep (checked before the call, from the inputs' dims).
    for k in 0..n_buf {
        let row = outer_dims(cx, at.bufs + k, 1);
        for j in 0..bufs[k].writes.len() {
            for (&o, &r) in out_dims[out_base[k] + j].iter().zip(&row) {
                cx.require_equal(o, r, "Scan (a step's output and its buffer's rows)");
            }
        }
    }
    for k in 0..s.n_untraced {
        let init = outer_dims(cx, at.untraced + k, 0);
        for (&o, &r) in out_dims[untraced_out + k].iter().zip(&init) {
            cx.require_equal(o, r, "Scan (an untraced state's next and first values)");
        }
    }
    for _ in &step_checks {
        let e = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
        let none = b.constant_int(0, ScalarType::I8);
        starts.push(b.linalg_fill(&none, &e));
    }
    // Parts: the state buffers, the nit_sot buffers, the untraced states, the check flags.
    // The nit_sot buffers start uninitialized: their rows are written before they are read.
    let written: Vec<bool> = (0..starts.len()).map(|k| k < n_buf || k >= n_buf + s.n_nit_sot).collect();
    let (pack, start) = Packed::pack(b, &starts, &written);
    let start = cx.loop_start(b, &start)?;
    let (nit_at, untraced_at, flags_at) = (n_buf, n_buf + s.n_nit_sot, n_buf + s.n_nit_sot + s.n_untraced);
    // One step: the next packed state, and (a while loop) whether to stop after it.
    let step = |cx: &mut Context, body: &mut Block, i: &Value, state: &Value| -> Result<(Value, Option<Value>), String> {
        let pos: Vec<Value> = (0..n_buf)
            .map(|k| {
                let p = body.arith(Arith::AddI, &pos0[k], i);
                body.arith(Arith::RemSI, &p, &buf_rings[k])
            })
            .collect();
        // Part k of the reader: state buffer k, then untraced state k - n_buf.
        let mut read = |b: &mut Block, k: usize, r: Option<&Value>| match r {
            Some(r) => pack.read_row(b, state, k, r),
            None => pack.read_all(b, state, untraced_at + k - n_buf),
        };
        let bound = step_inputs(cx, body, node, s, &at, &ins, i, &mut read, &pos, &tap_offsets, &buf_rings, &non_seqs)?;
        let checks_before = cx.checks.len();
        let outs = inner::lower_graph(cx, body, g, bound)?;
        let flags: Vec<Value> = cx.checks.drain(checks_before..).map(|(f, _)| f).collect();
        if flags.len() != step_checks.len() {
            return Err("a Scan step whose run-time checks change between lowerings".to_string());
        }
        let mut next = state.clone();
        for k in 0..n_buf {
            for (j, off) in write_offsets[k].iter().enumerate() {
                let row = body.arith(Arith::AddI, &pos[k], off);
                let row = body.arith(Arith::RemSI, &row, &buf_rings[k]);
                next = pack.write_row(body, &next, k, &row, &outs[out_base[k] + j].0);
            }
        }
        for k in 0..s.n_nit_sot {
            let row = body.arith(Arith::RemSI, i, &nit_rings[k]);
            next = pack.write_row(body, &next, nit_at + k, &row, &outs[nit_out + k].0);
        }
        for k in 0..s.n_untraced {
            next = pack.write_all(body, &next, untraced_at + k, &outs[untraced_out + k].0);
        }
        for (c, flag) in flags.iter().enumerate() {
            let old = pack.read_all(body, state, flags_at + c);
            let e = body.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
            let maps = vec![AffineMap { dims: 0, results: vec![] }; 3];
            let r = body.linalg_generic(&[flag.clone(), old], &[e], &maps, &[], |gb, args| Ok::<_, String>(vec![gb.arith(Arith::OrI, &args[0], &args[1])]))?;
            next = pack.write_all(body, &next, flags_at + c, &r[0]);
        }
        let stop = if s.as_while { Some(truthy(body, &outs[flag_out].0)) } else { None };
        Ok((next, stop))
    };
    // The loop, and the number of steps it did.
    let (packed, done) = if s.as_while {
        // An `scf.for` over the most steps, each an `scf.if` that skips the step once the
        // loop has stopped: IREE 3.13 miscompiles an `scf.while` carrying a tensor (its
        // stream conversion forwards the condition's values without the tensor's size:
        // "region branch point has 3 operands, but region successor needs 4 inputs").
        // A skipped step costs the host a branch (about 30 ns measured).
        // The branches' tensor has the start's size: tied to the `scf.if`'s result, whose
        // dim IREE cannot resolve otherwise ("tensor.dim op unexpected during shape cleanup").
        let size = b.tensor_dim(&start, 0);
        let no = b.constant_int(0, ScalarType::I1);
        let r = b.scf_for(&zero, &count, &one, &[start, zero.clone(), no], |body, _, carried| {
            let (state, done, stopped) = (&carried[0], &carried[1], &carried[2]);
            let mut go = body.region();
            let (next, stop) = step(cx, &mut go, done, state)?;
            let stop = stop.ok_or("a while loop's step without its stop flag")?;
            let one = go.constant_index(1);
            let done_next = go.arith(Arith::AddI, done, &one);
            let types: Vec<crate::mlir::Type> = carried.iter().map(|v| v.ty().clone()).collect();
            let stay = body.region();
            let mut r = body.scf_if_regions(stopped, &types, (stay, carried), (go, &[next, done_next, stop]));
            r[0] = body.tie_shape(&r[0], &[size.clone()]);
            Ok::<_, String>(r)
        })?;
        (r[0].clone(), r[1].clone())
    } else {
        let r = b.scf_for(&zero, &count, &one, &[start], |body, i, carried| Ok::<_, String>(vec![step(cx, body, i, &carried[0])?.0]))?;
        (r[0].clone(), count.clone())
    };
    let results: Vec<Value> = (0..pack.parts.len()).map(|k| pack.read_all(b, &packed, k)).collect();

    // Rings that wrapped are rotated, rows never reached are zeros (mit_mot buffers are
    // returned as they are, as `Scan.perform` does).
    for k in 0..n_buf + s.n_nit_sot {
        let history = if k < n_buf { -mintaps[k] } else { 0 };
        let (written, len, mut dims) = if k < n_buf {
            let history = idx(b, history);
            let w = b.arith(Arith::AddI, &done, &history);
            (w, buf_lens[k].clone(), cx.dims(node.inputs[at.bufs + k]))
        } else {
            (done.clone(), nit_lens[k - n_buf].clone(), nit_dims[k - n_buf].clone())
        };
        let ring = k >= n_buf || bufs[k].ring;
        let mut ordered = if ring { in_order(b, &results[k], &written, &len)? } else { results[k].clone() };
        if s.as_while && ring {
            ordered = without_steps_not_done(b, &ordered, &written, &len, &done, &count);
            dims[0] = cx.derived(DimExpr::WhileRows { scope: cx.scope, scan: node.outputs[0], rows: dims[0], history });
        }
        let out = node.outputs[k];
        let want = tensor_type(cx.graph.ty(out));
        let v = if *ordered.tensor() == want { ordered } else { b.tensor_cast(&ordered, want) };
        cx.define(out, v, dims);
    }
    for k in 0..s.n_untraced {
        let out = node.outputs[untraced_at + k];
        let r = &results[untraced_at + k];
        let want = tensor_type(cx.graph.ty(out));
        let v = if *r.tensor() == want { r.clone() } else { b.tensor_cast(r, want) };
        let dims = cx.dims(node.inputs[at.untraced + k]);
        cx.define(out, v, dims);
    }
    for (c, check) in step_checks.into_iter().enumerate() {
        cx.add_check(results[flags_at + c].clone(), check);
    }
    Ok(())
}

/// The number of steps the loop runs: the node's count, or 0 where a check
/// before the first step fails (a negative count: IndexError; a sequence shorter than the
/// count, or a buffer with no rows for a loop that has steps: ValueError), so no step reads
/// or writes out of bounds.
pub(super) fn step_count(cx: &mut Context, b: &mut Block, node: &Node, s: &Scan, ins: &[Value], buf_lens: &[Value], nit_lens: &[Value]) -> Result<Value, String> {
    let at = Layout::of(s);
    let zero = b.constant_index(0);
    // The number of steps, and the checks that keep every step in bounds.
    let n = scalar_index(cx, b, node.inputs[0])?;
    let negative = b.cmpi(CmpI::Slt, &n, &zero);
    let mut short = b.cmpi(CmpI::Ne, &zero, &zero);
    for k in 0..s.n_seqs {
        let len = b.tensor_dim(&ins[at.seqs + k], 0);
        let c = b.cmpi(CmpI::Sgt, &n, &len);
        short = b.arith(Arith::OrI, &short, &c);
    }
    let has_steps = b.cmpi(CmpI::Sgt, &n, &zero);
    let mut no_rows = b.cmpi(CmpI::Ne, &zero, &zero);
    for len in buf_lens.iter().chain(nit_lens) {
        let c = b.cmpi(CmpI::Sle, len, &zero);
        no_rows = b.arith(Arith::OrI, &no_rows, &c);
    }
    let no_rows = b.arith(Arith::AndI, &no_rows, &has_steps);
    let mut bad = b.arith(Arith::OrI, &negative, &short);
    bad = b.arith(Arith::OrI, &bad, &no_rows);
    let count = b.select(&bad, &zero, &n);
    for (flag, kind, message) in [
        (&negative, ErrorKind::Index, "Scan was asked to run for a negative number of steps"),
        (&short, ErrorKind::Value, "a sequence of the Scan is shorter than its number of steps"),
        (&no_rows, ErrorKind::Value, "a Scan output buffer has no rows to write its steps to"),
    ] {
        let f = flag_tensor(b, flag);
        cx.add_check(f, RuntimeCheck { kind, message: message.into() });
    }
    Ok(count)
}

/// The inner graph's inputs in step `i`: the sequences' row `i`, each state buffer's row at
/// each of its taps, the untraced states and the non-sequences. `read(k, Some(r))` gives
/// row `r` of state buffer `k`, `read(n_buf + k, None)` untraced state `k`.
#[allow(clippy::too_many_arguments)]
fn step_inputs(
    cx: &mut Context,
    b: &mut Block,
    node: &Node,
    s: &Scan,
    at: &Layout,
    ins: &[Value],
    i: &Value,
    read: &mut dyn FnMut(&mut Block, usize, Option<&Value>) -> Value,
    pos: &[Value],
    tap_offsets: &[Vec<Value>],
    rings: &[Value],
    non_seqs: &[Bound],
) -> Result<Vec<(usize, Value, Vec<Dim>, Option<Vec<IntValue>>)>, String> {
    let g = &s.graph;
    let mut inner_inputs = g.inputs.iter();
    let mut bound = Vec::with_capacity(g.inputs.len());
    let mut bind = |b: &mut Block, value: Value, dims: Vec<Dim>, inner_inputs: &mut std::slice::Iter<usize>| -> Result<(), String> {
        let iv = *inner_inputs.next().ok_or("an inner graph of too few inputs")?;
        let want = tensor_type(g.ty(iv));
        let v = if *value.tensor() == want { value } else { b.tensor_cast(&value, want) };
        bound.push((iv, v, dims, None));
        Ok(())
    };
    for k in 0..s.n_seqs {
        let row = row_at(b, &ins[at.seqs + k], i);
        let dims = cx.dims(node.inputs[at.seqs + k])[1..].to_vec();
        bind(b, row, dims, &mut inner_inputs)?;
    }
    for (k, offsets) in tap_offsets.iter().enumerate() {
        let dims = cx.dims(node.inputs[at.bufs + k])[1..].to_vec();
        for off in offsets {
            let r = b.arith(Arith::AddI, &pos[k], off);
            let r = b.arith(Arith::RemSI, &r, &rings[k]);
            let row = read(b, k, Some(&r));
            bind(b, row, dims.clone(), &mut inner_inputs)?;
        }
    }
    for k in 0..s.n_untraced {
        let dims = cx.dims(node.inputs[at.untraced + k]);
        let state = read(b, tap_offsets.len() + k, None);
        bind(b, state, dims, &mut inner_inputs)?;
    }
    for ns in non_seqs {
        bind(b, ns.value.clone(), ns.dims.clone(), &mut inner_inputs)?;
    }
    Ok(bound)
}

/// Row `r` of `t` (its leading axis dropped).
fn row_at(b: &mut Block, t: &Value, r: &Value) -> Value {
    let ty = t.tensor().clone();
    let mut offsets = vec![IndexArg::Dyn(r.clone())];
    offsets.extend((1..ty.rank()).map(|_| IndexArg::Const(0)));
    let mut sizes = vec![IndexArg::Const(1)];
    for a in 1..ty.rank() {
        sizes.push(b.dim_arg(t, a));
    }
    let slice = b.tensor_extract_slice(t, &offsets, &sizes);
    b.tensor_collapse(&slice, &row_groups(ty.rank() - 1))
}

/// The reassociation between a row of rank `rank` and the same row with a unit leading
/// axis: the unit axis grouped with the first (a 0-d row: no groups).
fn row_groups(rank: usize) -> Vec<Vec<usize>> {
    if rank == 0 {
        return Vec::new();
    }
    std::iter::once(vec![0, 1]).chain((2..=rank).map(|a| vec![a])).collect()
}

/// A buffer of `len` rows after `written` rows were written to it as a ring from row 0:
/// rotated so the oldest row comes first where it wrapped, rows past `written` zero where
/// it did not fill (PyTensor's step 6 of `Scan.perform`).
fn in_order(b: &mut Block, t: &Value, written: &Value, len: &Value) -> Result<Value, String> {
    let ty = t.tensor().clone();
    let sizes: Vec<Value> = (0..ty.rank()).filter(|&a| ty.shape[a].is_none()).map(|a| b.tensor_dim(t, a)).collect();
    let e = b.tensor_empty(ty.clone(), &sizes);
    let one = b.constant_index(1);
    let ring = b.arith(Arith::MaxSI, len, &one);
    let wrapped = b.cmpi(CmpI::Sgt, written, len);
    let start = b.arith(Arith::RemSI, written, &ring);
    let zero = b.constant_index(0);
    let start = b.select(&wrapped, &start, &zero);
    let fill_from = b.arith(Arith::MinSI, written, len);
    let maps = vec![AffineMap::identity(ty.rank())];
    let r = b.linalg_generic(&[], &[e], &maps, &vec![IteratorType::Parallel; ty.rank()], |gb, _| {
        let mut at: Vec<Value> = (0..ty.rank()).map(|a| gb.linalg_index(a)).collect();
        let j = at[0].clone();
        let src = gb.arith(Arith::AddI, &start, &j);
        at[0] = gb.arith(Arith::RemSI, &src, &ring);
        let v = gb.tensor_extract(t, &at);
        let past = gb.cmpi(CmpI::Sge, &j, &fill_from);
        let zero = if ty.element.is_float() { gb.constant_f64(0.0, ty.element) } else { gb.constant_int(0, ty.element) };
        Ok::<_, String>(vec![gb.select(&past, &zero, &v)])
    })?;
    Ok(r[0].clone())
}

/// An `i1` as the `tensor<i8>` flag of a run-time check.
/// A run-time check's flag (a rank-0 i8) from an i1 computed in the host program.
pub(super) fn flag_tensor(b: &mut Block, flag: &Value) -> Value {
    let byte = b.cast(Cast::ExtUI, flag, ScalarType::I8);
    b.tensor_from_elements(TensorType::new(vec![], ScalarType::I8), &[byte])
}

/// Whether a 0-d tensor (a while loop's stop flag) is true: nonzero.
fn truthy(b: &mut Block, t: &Value) -> Value {
    let e = b.tensor_extract(t, &[]);
    if e.scalar().is_float() {
        let z = b.constant_f64(0.0, e.scalar());
        b.cmpf(crate::mlir::CmpF::Une, &e, &z)
    } else {
        let z = b.constant_int(0, e.scalar());
        b.cmpi(CmpI::Ne, &e, &z)
    }
}

/// A while loop's output buffer of `len` rows, `written` of them written, after `done` of
/// `count` steps: where it did not fill and the loop stopped early, its first
/// `len - (count - done)` rows (PyTensor's step 6 drops the last `count - done`).
fn without_steps_not_done(b: &mut Block, t: &Value, written: &Value, len: &Value, done: &Value, count: &Value) -> Value {
    let not_full = b.cmpi(CmpI::Sgt, len, written);
    let early = b.cmpi(CmpI::Slt, done, count);
    let cut = b.arith(Arith::AndI, &not_full, &early);
    let missing = b.arith(Arith::SubI, count, done);
    let kept = b.arith(Arith::SubI, len, &missing);
    let rows = b.select(&cut, &kept, len);
    let ty = t.tensor().clone();
    let offsets = vec![IndexArg::Const(0); ty.rank()];
    let mut sizes = vec![IndexArg::Dyn(rows)];
    for a in 1..ty.rank() {
        sizes.push(b.dim_arg(t, a));
    }
    b.tensor_extract_slice(t, &offsets, &sizes)
}
