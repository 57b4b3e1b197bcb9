//! The generic export format that the Python side writes: a PyTensor `FunctionGraph` as
//! op type names, `__props__`, variable types and constant bytes. Nothing here knows what
//! an Op means; `ir::graph` turns this into the typed IR.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
pub struct ExportedGraph {
    pub variables: Vec<ExportedVariable>,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
    /// Apply nodes in a topological order.
    pub nodes: Vec<ExportedNode>,
}

#[derive(Debug, Deserialize)]
pub struct ExportedVariable {
    #[serde(rename = "type")]
    pub ty: ExportedType,
    #[serde(default)]
    pub name: Option<String>,
    /// For constants: the value's bytes in C order, little-endian, as hex.
    #[serde(default)]
    pub constant: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ExportedType {
    /// A `TensorType`; `None` in `shape` is a dimension PyTensor does not fix.
    Tensor { dtype: String, shape: Vec<Option<u64>> },
    /// A `ScalarType`, as found inside a `Composite`.
    Scalar { dtype: String },
    /// `NoneTypeT`: `NoneConst`, an optional input left out (a free `SpecifyShape` dim).
    None,
    /// `RandomGeneratorType`: a numpy `Generator`, held here as its key (see lower/random.rs).
    Rng,
    /// Any other type, named by its repr.
    Other { repr: String },
}

#[derive(Debug, Deserialize)]
pub struct ExportedNode {
    pub op: ExportedOp,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
}

#[derive(Debug, Deserialize, Clone)]
pub struct ExportedOp {
    /// The Op's Python class name, e.g. `Elemwise`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// `__props__` by name. Values are JSON, or tagged objects: `{"$op": ExportedOp}`,
    /// `{"$graph": ExportedGraph}`, `{"$type": ExportedType}`, `{"$repr": str}`.
    #[serde(default)]
    pub props: serde_json::Map<String, Value>,
}

impl ExportedOp {
    /// `Type{a=1, b=[0, 1]}`: how errors name an Op, nested ops by their type name.
    pub fn describe(&self) -> String {
        // `$`-keys are what the exporter adds beside `__props__` (an inner graph, bases).
        let props: Vec<String> = self
            .props
            .iter()
            .filter(|(k, _)| !k.starts_with('$'))
            .map(|(k, v)| format!("{k}={}", describe_value(v)))
            .collect();
        if props.is_empty() {
            return self.type_name.clone();
        }
        format!("{}{{{}}}", self.type_name, props.join(", "))
    }
}

fn describe_value(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            if let Some(op) = m.get("$op") {
                match serde_json::from_value::<ExportedOp>(op.clone()) {
                    Ok(op) => op.describe(),
                    Err(_) => op.to_string(),
                }
            } else if m.contains_key("$graph") {
                "<graph>".to_string()
            } else if let Some(Value::String(r)) = m.get("$repr").or_else(|| m.get("$class")) {
                r.clone()
            } else {
                v.to_string()
            }
        }
        _ => v.to_string(),
    }
}

pub fn parse(json: &str) -> Result<ExportedGraph, serde_json::Error> {
    serde_json::from_str(json)
}
