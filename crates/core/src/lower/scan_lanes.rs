//! A `Scan` whose steps are elementwise, as one dispatch: every element ("lane") of the
//! states evolves on its own, so the whole loop is one sequential generic (sequential.rs)
//! over (lanes..., steps), the values a step hands to the next outputs indexed by the lanes
//! only. A loop of the host program costs a dispatch or more per step (about 5 us:
//! x_t = a x_{t-1} + s_t over 1000 steps of 100 lanes took 4.6 ms, this 0.46 ms).
//!
//! Taken where the loop is a plain for loop (no `until`) whose states are sit_sot or mit_sot
//! (read at earlier steps: a state read h steps back carries its last h values) or nit_sot
//! outputs, no mit_mot or untraced state, and whose inner graph
//! is `Elemwise` nodes (no op that can raise: integer division) and `DimShuffle`s that only
//! give a 0-d value broadcastable axes, every value either of the states' rank with no
//! broadcastable axis (a lane value) or one element (the same in every lane: a 0-d
//! sequence row, a 0-d non-sequence, a constant); the lanes' dims are checked equal before
//! the call; and only on llvm-cpu (`ScalarTarget::lane_scans`: lavapipe's run of one gave
//! zeros). Anything else goes to scan.rs's general loop.
//!
//! The outputs are PyTensor's buffers after step 6 of `Scan.perform`: a buffer of `len`
//! rows after `written` rows (the initial state and the steps' states, or the steps' nit_sot
//! values) holds the last `min(written, len)` of them in order, then zeros.

use super::scalar::{self, Flags, Scalar};
use super::scan::{step_count, Layout};
use super::shapes::Dim;
use super::subtensor::scalar_index;
use super::sequential::private_output;
use super::{tensor_type, Context, IntValue};
use crate::dtype::DType;
use crate::ir::{Node, Op, Scan, VarId};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, CmpI, IndexArg, IteratorType, TensorType, Value};
use std::collections::HashMap;

/// How an inner value varies: per lane, or the same in every lane.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Lane,
    Uniform,
}

/// The inner graph's variables' kinds where the fast path applies (see the module comment),
/// with the lanes' rank.
fn plan(s: &Scan) -> Option<(usize, HashMap<VarId, Kind>)> {
    if s.as_while || !s.mit_mot_in.is_empty() || s.n_untraced != 0 || s.sot_taps.iter().any(|t| t.is_empty()) {
        return None;
    }
    let g = &s.graph;
    let n_states = s.sot_taps.len();
    if n_states + s.n_nit_sot == 0 || g.outputs.len() != n_states + s.n_nit_sot {
        return None;
    }
    let rank = g.ty(g.outputs[0]).ndim();
    let storable = |v: VarId| {
        let d = g.ty(v).dtype;
        !d.is_complex() && d != DType::Bool && scalar::scalar_type(d) == scalar::storage_type(d)
    };
    let single = |v: VarId| g.ty(v).shape.iter().all(|&d| d == Some(1));
    let lane_shaped = |v: VarId| g.ty(v).ndim() == rank && g.ty(v).shape.iter().all(|&d| d != Some(1));
    let kind_of_input = |v: VarId| -> Option<Kind> {
        if single(v) {
            Some(Kind::Uniform)
        } else if lane_shaped(v) {
            Some(Kind::Lane)
        } else {
            None
        }
    };
    let mut kinds = HashMap::new();
    for &v in &g.inputs {
        if !storable(v) {
            return None;
        }
        kinds.insert(v, kind_of_input(v)?);
    }
    // The states, at every tap, must be lane values (or 0-d where the lanes are).
    let n_taps: usize = s.sot_taps.iter().map(Vec::len).sum();
    if g.inputs[s.n_seqs..s.n_seqs + n_taps].iter().any(|&v| g.ty(v).ndim() != rank) {
        return None;
    }
    for (v, var) in g.variables.iter().enumerate() {
        if var.constant.is_some() {
            if !single(v) || !storable(v) {
                return None;
            }
            kinds.insert(v, Kind::Uniform);
        }
    }
    for node in &g.nodes {
        let mut kind = Kind::Uniform;
        for i in &node.inputs {
            match kinds.get(i)? {
                Kind::Lane => kind = Kind::Lane,
                Kind::Uniform => {}
            }
        }
        match &node.op {
            Op::Elemwise(op) => {
                let outs: Vec<DType> = node.outputs.iter().map(|&o| g.ty(o).dtype).collect();
                if scalar::may_raise(op, &outs) != (false, false) {
                    return None;
                }
            }
            Op::DimShuffle { input_ndim: 0, new_order } if new_order.iter().all(Option::is_none) => {}
            _ => return None,
        }
        for &o in &node.outputs {
            let fits = match kind {
                Kind::Lane => lane_shaped(o),
                Kind::Uniform => single(o),
            };
            // A bool is i1 in the step but i8 in a tensor: a step's bools stay inside it.
            let stored = g.outputs.contains(&o);
            if !fits || g.ty(o).dtype.is_complex() || (stored && !storable(o)) {
                return None;
            }
            kinds.insert(o, kind);
        }
    }
    // Every output is written per lane (a value the same in every lane would be written by
    // every lane at once), unless there are no lanes.
    if rank > 0 && g.outputs.iter().any(|o| kinds.get(o) != Some(&Kind::Lane)) {
        return None;
    }
    Some((rank, kinds))
}

/// Lowers the node by the fast path; `Ok(false)` where it does not apply.
pub fn try_scan(cx: &mut Context, b: &mut Block, node: &Node, s: &Scan) -> Result<bool, String> {
    if !scalar::has_lane_scans() {
        return Ok(false);
    }
    let Some((rank, kinds)) = plan(s) else { return Ok(false) };
    let g = &s.graph;
    let n_states = s.sot_taps.len();
    // The node's inputs: n_steps, sequences, state buffers, nit_sot lengths, non-sequences.
    let Layout { seqs, bufs, nit_lengths, non_seqs, .. } = Layout::of(s);
    // Each state's taps (all negative), its rows before the first step, and where its
    // inner inputs start.
    let history: Vec<usize> = s.sot_taps.iter().map(|t| t.iter().map(|&x| (-x) as usize).max().unwrap_or(1)).collect();
    let mut tap_inputs = Vec::with_capacity(n_states);
    let mut n_taps = 0;
    for taps in &s.sot_taps {
        tap_inputs.push(s.n_seqs + n_taps);
        n_taps += taps.len();
    }
    let first_non_seq = s.n_seqs + n_taps;
    if node.inputs.len() != non_seqs + s.n_non_seqs || g.inputs.len() != first_non_seq + s.n_non_seqs {
        return Ok(false);
    }
    // The lanes' dims: each lane value's outer dims after its leading (row) axis, if any,
    // checked equal to the first's.
    let mut lane_sources: Vec<(usize, usize)> = Vec::new();
    for k in 0..s.n_seqs {
        if kinds[&g.inputs[k]] == Kind::Lane {
            lane_sources.push((seqs + k, 1));
        }
    }
    for k in 0..n_states {
        if rank > 0 {
            lane_sources.push((bufs + k, 1));
        }
    }
    for k in 0..s.n_non_seqs {
        if kinds[&g.inputs[first_non_seq + k]] == Kind::Lane {
            lane_sources.push((non_seqs + k, 0));
        }
    }
    if rank > 0 && lane_sources.is_empty() {
        return Ok(false);
    }
    let lane_dims: Vec<Dim> = match lane_sources.first() {
        Some(&(k, from)) => cx.dims(node.inputs[k])[from..].to_vec(),
        None => Vec::new(),
    };
    for &(k, from) in &lane_sources[1.min(lane_sources.len())..] {
        let dims = cx.dims(node.inputs[k])[from..].to_vec();
        for (&a, &d) in lane_dims.iter().zip(&dims) {
            cx.require_equal(a, d, "Scan (the shapes of its elementwise step's values differ)");
        }
    }
    let ins: Vec<Value> = node.inputs.iter().map(|&v| cx.value(b, v)).collect::<Result<_, _>>()?;
    let buf_lens: Vec<Value> = (0..n_states).map(|k| b.tensor_dim(&ins[bufs + k], 0)).collect();
    let nit_lens: Vec<Value> = (0..s.n_nit_sot).map(|k| scalar_index(cx, b, node.inputs[nit_lengths + k])).collect::<Result<_, _>>()?;
    let count = step_count(cx, b, node, s, &ins, &buf_lens, &nit_lens)?;
    let lane_sizes: Vec<Value> = match lane_sources.first() {
        Some(&(k, from)) => (from..from + rank).map(|a| b.tensor_dim(&ins[k], a)).collect(),
        None => Vec::new(),
    };

    // The loop's operands: the sequences' first `count` rows and the non-sequences (the
    // states' initial rows are read from their buffers in the step).
    let dims = rank + 1;
    let lanes: Vec<AffineExpr> = (0..rank).map(AffineExpr::Dim).collect();
    let step = AffineExpr::Dim(rank);
    // A lane value is read at the lanes' indices, a one-element value at 0 on each of its
    // `ndim` axes.
    let per_lane = |kind: Kind, ndim: usize| if kind == Kind::Lane { lanes.clone() } else { vec![AffineExpr::Constant(0); ndim] };
    let row_map = |kind: Kind, ndim: usize| AffineMap { dims, results: std::iter::once(step.clone()).chain(per_lane(kind, ndim)).collect() };
    let lane_map = |kind: Kind, ndim: usize| AffineMap { dims, results: per_lane(kind, ndim) };
    let mut operands = Vec::new();
    let mut maps = Vec::new();
    for k in 0..s.n_seqs {
        let kind = kinds[&g.inputs[k]];
        let seq = &ins[seqs + k];
        let mut sizes = vec![IndexArg::Dyn(count.clone())];
        sizes.extend((1..seq.tensor().rank()).map(|a| IndexArg::Dyn(b.tensor_dim(seq, a))));
        let offsets = vec![IndexArg::Const(0); sizes.len()];
        operands.push(b.tensor_extract_slice(seq, &offsets, &sizes));
        maps.push(row_map(kind, g.ty(g.inputs[k]).ndim()));
    }
    for k in 0..s.n_non_seqs {
        let v = g.inputs[first_non_seq + k];
        operands.push(ins[non_seqs + k].clone());
        maps.push(lane_map(kinds[&v], g.ty(v).ndim()));
    }
    // Outputs: each state's values after every step and the nit_sot values (count rows),
    // then each state's last `history` values (the one j steps back j-th).
    let mut outs = Vec::new();
    for &o in &g.outputs {
        let element = tensor_type(g.ty(o)).element;
        let sizes: Vec<Value> = std::iter::once(count.clone()).chain(lane_sizes.iter().cloned()).collect();
        // (Stored whole: each gets a buffer of its own; only the carried values need tags.)
        outs.push(b.tensor_empty(TensorType::new(vec![None; 1 + rank], element), &sizes));
        maps.push(row_map(Kind::Lane, rank));
    }
    let mut carried_at = Vec::with_capacity(n_states);
    for k in 0..n_states {
        carried_at.push(outs.len());
        let element = tensor_type(g.ty(g.outputs[k])).element;
        for _ in 0..history[k] {
            // A buffer of its own (a step reads a value only once one is written).
            let tag = outs.len();
            outs.push(private_output(b, element, &lane_sizes, tag));
            maps.push(lane_map(Kind::Lane, rank));
        }
    }
    let buffers: Vec<Value> = (0..n_states).map(|k| ins[bufs + k].clone()).collect();
    let mut iterators = vec![IteratorType::Parallel; rank];
    iterators.push(IteratorType::Reduction);
    let n_in = operands.len();
    let r = b.linalg_generic(&operands, &outs, &maps, &iterators, |body, args| {
        let t = body.linalg_index(rank);
        let mut values: HashMap<VarId, Scalar> = HashMap::new();
        for k in 0..s.n_seqs {
            values.insert(g.inputs[k], Scalar { value: args[k].clone(), dtype: g.ty(g.inputs[k]).dtype });
        }
        for k in 0..s.n_non_seqs {
            let v = g.inputs[first_non_seq + k];
            values.insert(v, Scalar { value: args[s.n_seqs + k].clone(), dtype: g.ty(v).dtype });
        }
        // Tap -j at step t: the value j steps back once there is one (t >= j), before that
        // the buffer's initial row h - j + t (h rows of history).
        let lane_index: Vec<Value> = (0..rank).map(|a| body.linalg_index(a)).collect();
        for k in 0..n_states {
            let h = history[k] as i64;
            for (m, &tap) in s.sot_taps[k].iter().enumerate() {
                let v = g.inputs[tap_inputs[k] + m];
                let j = -tap;
                let back = &args[n_in + carried_at[k] + (j as usize - 1)];
                let jj = body.constant_index(j);
                let early = body.cmpi(CmpI::Slt, &t, &jj);
                let row = body.constant_index(h - j);
                let row = body.arith(Arith::AddI, &row, &t);
                // (A buffer shorter than its history is read nowhere past its end.)
                let len = body.tensor_dim(&buffers[k], 0);
                let inside = body.cmpi(CmpI::Slt, &row, &len);
                let early = body.arith(Arith::AndI, &early, &inside);
                let buffer = buffers[k].clone();
                let at: Vec<Value> = std::iter::once(row).chain(lane_index.iter().cloned()).collect();
                let element = back.scalar();
                let back = back.clone();
                let value = body.scf_if(&early, &[element], |x| vec![x.tensor_extract(&buffer, &at)], |_| vec![back.clone()])[0].clone();
                values.insert(v, Scalar { value, dtype: g.ty(v).dtype });
            }
        }
        for (v, var) in g.variables.iter().enumerate() {
            if let Some(bytes) = &var.constant {
                values.insert(v, scalar::scalar_constant(body, g.ty(v).dtype, bytes)?);
            }
        }
        let mut flags = Flags::default();
        for node in &g.nodes {
            let ins: Vec<Scalar> = node.inputs.iter().map(|i| values[i].clone()).collect();
            let results = match &node.op {
                Op::Elemwise(op) => {
                    let outs: Vec<DType> = node.outputs.iter().map(|&o| g.ty(o).dtype).collect();
                    scalar::lower(body, op, &ins, &outs, &mut flags)?
                }
                _ => ins,
            };
            for (&o, r) in node.outputs.iter().zip(results) {
                values.insert(o, r);
            }
        }
        let next: Vec<Value> = g.outputs.iter().map(|o| scalar::convert(body, &values[o], g.ty(*o).dtype).value).collect();
        // The carried values shift by one step: the newest first.
        let mut yields = next.clone();
        for k in 0..n_states {
            yields.push(next[k].clone());
            for j in 1..history[k] {
                yields.push(args[n_in + carried_at[k] + j - 1].clone());
            }
        }
        Ok::<_, String>(yields)
    })?;

    // The buffers as Scan.perform leaves them.
    for k in 0..n_states + s.n_nit_sot {
        let out = node.outputs[k];
        let (len, written, initial, out_dims) = if k < n_states {
            let h = b.constant_index(history[k] as i64);
            let written = b.arith(Arith::AddI, &count, &h);
            (buf_lens[k].clone(), written, Some((&ins[bufs + k], history[k] as i64)), cx.dims(node.inputs[bufs + k]))
        } else {
            let length = match cx.int_values(node.inputs[nit_lengths + k - n_states]).as_deref() {
                Some([IntValue::Dim(d)]) => *d,
                Some([IntValue::Const(c)]) if *c >= 0 => Dim::Static(*c as u64),
                _ => cx.runtime_dim(),
            };
            (nit_lens[k - n_states].clone(), count.clone(), None, std::iter::once(length).chain(lane_dims.iter().copied()).collect())
        };
        let v = last_rows(b, &r[k], initial, &written, &len, &lane_sizes)?;
        let want = tensor_type(cx.graph.ty(out));
        let v = if *v.tensor() == want { v } else { b.tensor_cast(&v, want) };
        cx.define(out, v, out_dims);
    }
    Ok(true)
}

/// A buffer of `len` rows holding the last min(written, len) of the `written` rows (the
/// `initial` buffer's first h rows then `rows`, or `rows` alone) in order, then zeros.
fn last_rows(b: &mut Block, rows: &Value, initial: Option<(&Value, i64)>, written: &Value, len: &Value, lane_sizes: &[Value]) -> Result<Value, String> {
    let ty = rows.tensor().clone();
    let sizes: Vec<Value> = std::iter::once(len.clone()).chain(lane_sizes.iter().cloned()).collect();
    let e = b.tensor_empty(ty.clone(), &sizes);
    let zero = b.constant_index(0);
    let shift = b.arith(Arith::SubI, written, len);
    let shift = b.arith(Arith::MaxSI, &shift, &zero);
    let filled = b.arith(Arith::MinSI, written, len);
    let rank = ty.rank();
    let r = b.linalg_generic(&[], &[e], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |g, _| {
        let at: Vec<Value> = (0..rank).map(|a| g.linalg_index(a)).collect();
        let j = &at[0];
        let zero_value = if ty.element.is_float() { g.constant_f64(0.0, ty.element) } else { g.constant_int(0, ty.element) };
        let inside = g.cmpi(CmpI::Slt, j, &filled);
        let q = g.arith(Arith::AddI, j, &shift);
        let rows = rows.clone();
        let initial = initial.map(|(v, h)| (v.clone(), h));
        let at_rest = at[1..].to_vec();
        let v = g.scf_if(&inside, &[ty.element], |then| {
            let value = match &initial {
                Some((init, h)) => {
                    // Row q of [h initial rows; rows]: row q - h of rows past those.
                    let hh = then.constant_index(*h);
                    let is_initial = then.cmpi(CmpI::Slt, &q, &hh);
                    let init = init.clone();
                    let at0: Vec<Value> = std::iter::once(q.clone()).chain(at_rest.iter().cloned()).collect();
                    let row = then.arith(Arith::SubI, &q, &hh);
                    let at1: Vec<Value> = std::iter::once(row).chain(at_rest.iter().cloned()).collect();
                    then.scf_if(&is_initial, &[ty.element], |x| vec![x.tensor_extract(&init, &at0)], |y| vec![y.tensor_extract(&rows, &at1)])[0].clone()
                }
                None => {
                    let at1: Vec<Value> = std::iter::once(q.clone()).chain(at_rest.iter().cloned()).collect();
                    then.tensor_extract(&rows, &at1)
                }
            };
            vec![value]
        }, |_| vec![zero_value.clone()])[0].clone();
        Ok::<_, String>(vec![v])
    })?;
    Ok(r[0].clone())
}
