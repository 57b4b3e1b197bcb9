//! `Scan`: PyTensor's loop, as its `ScanInfo` describes it (the exporter writes the record
//! under `$attrs.info`, the inner graph under `$inner_graph`).
//!
//! The node's inputs are `n_steps`, the sequences, the state buffers (mit_mot, mit_sot,
//! sit_sot, in that order), the untraced states' initial values, the nit_sot lengths, then
//! the non-sequences. Its outputs are the buffers (mit_mot, mit_sot, sit_sot), the nit_sot
//! buffers, then the untraced states' final values. The inner graph's inputs are a row of
//! each sequence, one row of a buffer per tap, the untraced states and the non-sequences;
//! its outputs, a row per buffer (one per mit_mot out-tap), the untraced states' next
//! values and, for a while loop, the stop flag.

use super::export::ExportedOp;
use super::graph::Graph;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct Scan {
    pub graph: Graph,
    pub n_seqs: usize,
    /// The taps each mit_mot buffer is read at, and written at.
    pub mit_mot_in: Vec<Vec<i64>>,
    pub mit_mot_out: Vec<Vec<i64>>,
    /// The taps each mit_sot, then each sit_sot buffer is read at (all negative: earlier
    /// steps' rows); every such buffer is written at tap 0.
    pub sot_taps: Vec<Vec<i64>>,
    pub n_nit_sot: usize,
    pub n_untraced: usize,
    pub n_non_seqs: usize,
    /// Whether the inner graph's last output is an `until` flag.
    pub as_while: bool,
}

impl Scan {
    pub fn parse(op: &ExportedOp) -> Result<Scan, String> {
        let info = op
            .props
            .get("$attrs")
            .and_then(|a| a.get("info"))
            .and_then(|i| i.get("$fields"))
            .ok_or("a Scan without its ScanInfo record")?;
        let count = |name: &str| -> Result<usize, String> {
            info.get(name).and_then(Value::as_u64).map(|n| n as usize).ok_or_else(|| format!("ScanInfo.{name} is not a count"))
        };
        let slices = |name: &str| -> Result<Vec<Vec<i64>>, String> {
            let list = info.get(name).and_then(Value::as_array).ok_or_else(|| format!("ScanInfo.{name} is not a list"))?;
            list.iter()
                .map(|taps| {
                    taps.as_array()
                        .and_then(|t| t.iter().map(Value::as_i64).collect::<Option<Vec<i64>>>())
                        .ok_or_else(|| format!("ScanInfo.{name} holds a non-integer tap"))
                })
                .collect()
        };
        let mut sot_taps = slices("mit_sot_in_slices")?;
        sot_taps.extend(slices("sit_sot_in_slices")?);
        if let Some(t) = sot_taps.iter().flatten().find(|&&t| t >= 0) {
            return Err(format!("a Scan state read at tap {t} (only earlier steps' rows, negative taps, exist)"));
        }
        if sot_taps.iter().any(Vec::is_empty) {
            return Err("a Scan state read at no tap".into());
        }
        let g = op.props.get("$inner_graph").and_then(|g| g.get("$graph")).ok_or("a Scan without its inner graph")?;
        let exported = serde_json::from_value(g.clone()).map_err(|e| e.to_string())?;
        let graph = Graph::from_export(&exported).map_err(|e| format!("inner graph: {e}"))?;
        Ok(Scan {
            graph,
            n_seqs: count("n_seqs")?,
            mit_mot_in: slices("mit_mot_in_slices")?,
            mit_mot_out: slices("mit_mot_out_slices")?,
            sot_taps,
            n_nit_sot: count("n_nit_sot")?,
            n_untraced: count("n_untraced_sit_sot")?,
            n_non_seqs: count("n_non_seqs")?,
            as_while: info.get("as_while").and_then(Value::as_bool).ok_or("ScanInfo.as_while is not a bool")?,
        })
    }
}
