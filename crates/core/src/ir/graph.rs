//! The typed, validated graph IR: what the lowering reads.

use super::export::{ExportedGraph, ExportedType};
use super::ops::{Op, ScalarOp};
use crate::dtype::DType;
use std::fmt;

pub type VarId = usize;

/// A `TensorType`: dtype and static shape (`None` where PyTensor leaves a dim free).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Vec<Option<u64>>,
}

impl TensorType {
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// PyTensor broadcasts a dim only where its static size is 1.
    pub fn broadcastable(&self, axis: usize) -> bool {
        self.shape[axis] == Some(1)
    }
}

#[derive(Debug, Clone)]
pub struct Variable {
    pub ty: TensorType,
    pub name: Option<String>,
    /// A constant's bytes in C order, little-endian (bool: one byte per element).
    pub constant: Option<Vec<u8>>,
    /// `NoneConst`: no value at all; `ty` is a 0-d placeholder that no rule may read,
    /// and `Context::value` refuses it.
    pub is_none: bool,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub op: Op,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

/// A tensor graph: variables, graph inputs and outputs, and nodes in topological order.
#[derive(Debug, Clone)]
pub struct Graph {
    pub variables: Vec<Variable>,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
    pub nodes: Vec<Node>,
}

/// The scalar graph of a `Composite`.
#[derive(Debug, Clone)]
pub struct ScalarGraph {
    pub dtypes: Vec<DType>,
    pub constants: Vec<Option<Vec<u8>>>,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
    pub nodes: Vec<ScalarNode>,
}

#[derive(Debug, Clone)]
pub struct ScalarNode {
    pub op: ScalarOp,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

/// An Op the backend cannot lower, named by its type and props.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub op: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    /// Every Op of the graph that has no lowering, not only the first.
    Unsupported(Vec<Unsupported>),
    /// The export itself is malformed or uses a type this backend cannot hold.
    Invalid(String),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::Unsupported(ops) => {
                writeln!(f, "the MLIR backend cannot lower {} Op(s) of this graph:", ops.len())?;
                for u in ops {
                    writeln!(f, "  {}: {}", u.op, u.reason)?;
                }
                Ok(())
            }
            GraphError::Invalid(why) => write!(f, "invalid graph export: {why}"),
        }
    }
}

impl std::error::Error for GraphError {}

fn tensor_type(ty: &ExportedType) -> Result<TensorType, String> {
    match ty {
        ExportedType::Tensor { dtype, shape } => Ok(TensorType {
            dtype: parse_dtype(dtype)?,
            shape: shape.clone(),
        }),
        ExportedType::Scalar { dtype } => Ok(TensorType {
            dtype: parse_dtype(dtype)?,
            shape: vec![],
        }),
        ExportedType::None => Ok(TensorType { dtype: DType::Bool, shape: vec![] }),
        // The runtime passes a Generator as the four words of its key.
        ExportedType::Rng => Ok(TensorType { dtype: DType::UInt32, shape: vec![Some(crate::lower::random::KEY_WORDS)] }),
        ExportedType::Other { repr } => Err(format!("type {repr} is not a tensor type")),
    }
}

fn parse_dtype(name: &str) -> Result<DType, String> {
    let dtype = DType::parse(name).ok_or_else(|| format!("unknown dtype {name}"))?;
    if dtype.is_complex() || dtype == DType::Float16 {
        return Err(format!("dtype {name} is not supported by the MLIR backend"));
    }
    Ok(dtype)
}

fn decode_hex(hex: &str) -> Result<Vec<u8>, String> {
    if hex.len() % 2 != 0 {
        return Err("odd-length hex constant".into());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

fn check_ids(ids: &[usize], n: usize, what: &str) -> Result<(), GraphError> {
    match ids.iter().find(|&&i| i >= n) {
        Some(i) => Err(GraphError::Invalid(format!("{what} refers to variable {i} of {n}"))),
        None => Ok(()),
    }
}

impl Graph {
    /// Validates an export into the typed IR, gathering every unsupported Op.
    pub fn from_export(g: &ExportedGraph) -> Result<Graph, GraphError> {
        let n = g.variables.len();
        check_ids(&g.inputs, n, "an input")?;
        check_ids(&g.outputs, n, "an output")?;
        let mut unsupported = Vec::new();
        let mut variables = Vec::with_capacity(n);
        for (i, v) in g.variables.iter().enumerate() {
            let ty = tensor_type(&v.ty).map_err(|why| {
                GraphError::Invalid(format!("variable {i} ({}): {why}", v.name.as_deref().unwrap_or("?")))
            });
            let ty = match ty {
                Ok(ty) => ty,
                Err(e) => {
                    unsupported.push(Unsupported { op: format!("variable {i}"), reason: e.to_string() });
                    continue;
                }
            };
            let constant = v.constant.as_deref().map(decode_hex).transpose().map_err(GraphError::Invalid)?;
            if let Some(bytes) = &constant {
                let count: u64 = ty.shape.iter().map(|d| d.unwrap_or(0)).product();
                if ty.shape.iter().any(Option::is_none) || bytes.len() as u64 != count * ty.dtype.byte_size() as u64 {
                    return Err(GraphError::Invalid(format!("constant {i} does not match its type")));
                }
            }
            let is_none = matches!(v.ty, ExportedType::None);
            variables.push(Variable { ty, name: v.name.clone(), constant, is_none });
        }
        let mut nodes = Vec::with_capacity(g.nodes.len());
        for node in &g.nodes {
            check_ids(&node.inputs, n, "a node input")?;
            check_ids(&node.outputs, n, "a node output")?;
            match Op::parse(&node.op) {
                Ok(op) => nodes.push(Node { op, inputs: node.inputs.clone(), outputs: node.outputs.clone() }),
                Err(reason) => unsupported.push(Unsupported { op: node.op.describe(), reason }),
            }
        }
        if !unsupported.is_empty() {
            // One entry per distinct Op: a graph with fifty identical nodes names it once.
            let mut seen = Vec::new();
            unsupported.retain(|u| {
                let new = !seen.contains(u);
                if new {
                    seen.push(u.clone());
                }
                new
            });
            return Err(GraphError::Unsupported(unsupported));
        }
        Ok(Graph { variables, inputs: g.inputs.clone(), outputs: g.outputs.clone(), nodes })
    }

    pub fn ty(&self, v: VarId) -> &TensorType {
        &self.variables[v].ty
    }
}

impl ScalarGraph {
    pub fn from_export(g: &ExportedGraph) -> Result<ScalarGraph, String> {
        let n = g.variables.len();
        let mut dtypes = Vec::with_capacity(n);
        let mut constants = Vec::with_capacity(n);
        for v in &g.variables {
            if matches!(v.ty, ExportedType::None) {
                return Err("a Composite variable is None".into());
            }
            let ty = tensor_type(&v.ty)?;
            if ty.ndim() != 0 {
                return Err("a Composite variable is not a scalar".into());
            }
            dtypes.push(ty.dtype);
            constants.push(v.constant.as_deref().map(decode_hex).transpose()?);
        }
        let valid = |ids: &[usize]| ids.iter().all(|&i| i < n);
        if !valid(&g.inputs) || !valid(&g.outputs) {
            return Err("Composite refers to a missing variable".into());
        }
        let mut nodes = Vec::with_capacity(g.nodes.len());
        for node in &g.nodes {
            if !valid(&node.inputs) || !valid(&node.outputs) {
                return Err("Composite refers to a missing variable".into());
            }
            let op = ScalarOp::parse(&node.op).map_err(|why| format!("inner {}: {why}", node.op.describe()))?;
            nodes.push(ScalarNode { op, inputs: node.inputs.clone(), outputs: node.outputs.clone() });
        }
        Ok(ScalarGraph { dtypes, constants, inputs: g.inputs.clone(), outputs: g.outputs.clone(), nodes })
    }
}
