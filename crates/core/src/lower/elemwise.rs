//! `Elemwise`: one `linalg.generic` over the output's shape, with PyTensor's broadcasting
//! (a dim broadcasts only where its static size is 1) spelled as constant indexing maps.

use super::scalar::{self, Flags, Scalar};
use super::shapes::Dim;
use super::{tensor_type, Context, ErrorKind, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::{Node, ScalarOp, TensorType};
use crate::mlir::{AffineExpr, AffineMap, Arith, Block, Cast, CmpI, IteratorType, ScalarType, Value};

/// The scalar op's PyTensor-style name, for messages.
pub fn scalar_name(op: &ScalarOp) -> String {
    match op {
        ScalarOp::Composite(_) => "Composite".into(),
        ScalarOp::Loop(_) => "ScalarLoop".into(),
        op => format!("{op:?}").to_lowercase(),
    }
}

/// Tensors made by an elementwise generic: the outputs, then flag tensors (`i8`, output
/// shape) for each error kind the scalar code may raise.
struct Generated {
    outputs: Vec<Value>,
    zero_division: Option<Value>,
    zero_modulo: Option<Value>,
}

/// The most operands (inputs and outputs) one `linalg.generic` gets. IREE makes one
/// dispatch of an elementwise generic, and its local executables take at most 32 buffer
/// bindings and 64 push constants (two per binding's offset, and the dynamic sizes) per
/// dispatch: a larger one compiles, then fails on every call. Fusion makes Composites with
/// more outputs than that, so their outputs are split over several generics (see
/// `generate`). Inputs cannot be split that way; IREE itself fuses more of those into one
/// dispatch than it can run, fused by PyTensor or not.
const MAX_OPERANDS: usize = 24;

/// Applies `op` elementwise to `ins` (all of the outputs' rank), writing outputs of types
/// `outs`. Where there are too many outputs for one generic (`MAX_OPERANDS`), each of
/// several generics computes the whole scalar code and yields some of the outputs; the
/// compiler drops what a generic does not yield. The error flags go with the first.
fn generate(b: &mut Block, op: &ScalarOp, ins: &[(Value, TensorType)], outs: &[TensorType]) -> Result<Generated, String> {
    let rank = outs[0].ndim();
    let mut sizes = Vec::new();
    for d in 0..rank {
        if outs[0].shape[d].is_some() {
            continue;
        }
        let (src, _) = ins
            .iter()
            .find(|(_, t)| !t.broadcastable(d))
            .ok_or_else(|| format!("output dim {d} is dynamic but every input broadcasts there"))?;
        sizes.push(b.tensor_dim(src, d));
    }
    if let (Some(stages), [out]) = (scalar::stages(op), outs) {
        let output = generate_staged(b, op, stages.len(), ins, out, &sizes)?;
        return Ok(Generated { outputs: vec![output], zero_division: None, zero_modulo: None });
    }
    let out_dtypes: Vec<DType> = outs.iter().map(|t| t.dtype).collect();
    let (raises_div, raises_mod) = scalar::may_raise(op, &out_dtypes);
    let n_flags = usize::from(raises_div) + usize::from(raises_mod);
    let per_generic = MAX_OPERANDS.saturating_sub(ins.len()).max(1);
    let mut generated = Generated { outputs: Vec::with_capacity(outs.len()), zero_division: None, zero_modulo: None };
    let mut start = 0;
    while start < outs.len() {
        let first = start == 0;
        let room = if first { per_generic.saturating_sub(n_flags).max(1) } else { per_generic };
        let end = (start + room).min(outs.len());
        let part = generate_part(b, op, ins, outs, &sizes, start..end, (first && raises_div, first && raises_mod))?;
        generated.outputs.extend(part.outputs);
        if first {
            generated.zero_division = part.zero_division;
            generated.zero_modulo = part.zero_modulo;
        }
        start = end;
    }
    Ok(generated)
}

/// A staged op (`scalar::stages`): a `linalg.generic` per stage, each reading the op's
/// inputs as its operands and the previous stage's values (tensors of the output's shape)
/// through `tensor.extract` at its own index: IREE fuses a producer that is an operand
/// into its consumer's body, where one stage's loop would leave the others scalar too, but
/// not one read so. The output.
fn generate_staged(b: &mut Block, op: &ScalarOp, stages: usize, ins: &[(Value, TensorType)], out: &TensorType, sizes: &[Value]) -> Result<Value, String> {
    let rank = out.ndim();
    let carried_type = crate::mlir::TensorType::new(out.shape.clone(), scalar::stage_type(op, out.dtype)?);
    let in_dtypes: Vec<DType> = ins.iter().map(|(_, t)| t.dtype).collect();
    let maps = input_maps(ins, rank);
    let mut carried: Vec<Value> = Vec::new();
    for stage in 0..stages {
        let last = stage + 1 == stages;
        let inits: Vec<Value> = if last {
            vec![b.tensor_empty(tensor_type(out), sizes)]
        } else {
            let yields = scalar::stage_yields(op, stage);
            (0..yields).map(|_| b.tensor_empty(carried_type.clone(), sizes)).collect()
        };
        let mut stage_maps = maps.clone();
        stage_maps.extend(std::iter::repeat_n(AffineMap::identity(rank), inits.len()));
        let previous = carried.clone();
        let operands: Vec<Value> = ins.iter().map(|(v, _)| v.clone()).collect();
        carried = b.linalg_generic(&operands, &inits, &stage_maps, &vec![IteratorType::Parallel; rank], |body, args| {
            let scalars: Vec<Scalar> = args.iter().zip(&in_dtypes).map(|(a, &dtype)| Scalar { value: load(body, a, dtype), dtype }).collect();
            let at: Vec<Value> = (0..rank).map(|d| body.linalg_index(d)).collect();
            let from_before: Vec<Value> = previous.iter().map(|t| body.tensor_extract(t, &at)).collect();
            let values = scalar::lower_stage(body, op, &scalars, out.dtype, stage, &from_before)?;
            Ok::<_, String>(if last { vec![store(body, &Scalar { value: values[0].clone(), dtype: out.dtype }, out.dtype)] } else { values })
        })?;
    }
    Ok(carried[0].clone())
}

/// The indexing maps of `ins` in a generic over `rank` dims: PyTensor's broadcasting.
fn input_maps(ins: &[(Value, TensorType)], rank: usize) -> Vec<AffineMap> {
    ins.iter()
        .map(|(_, t)| AffineMap {
            dims: rank,
            results: (0..rank).map(|d| if t.broadcastable(d) { AffineExpr::Constant(0) } else { AffineExpr::Dim(d) }).collect(),
        })
        .collect()
}

/// One `linalg.generic` of `generate`: the outputs `yielded` of `op`, and the error flags
/// asked for.
fn generate_part(
    b: &mut Block,
    op: &ScalarOp,
    ins: &[(Value, TensorType)],
    outs: &[TensorType],
    sizes: &[Value],
    yielded: std::ops::Range<usize>,
    (raises_div, raises_mod): (bool, bool),
) -> Result<Generated, String> {
    let rank = outs[0].ndim();
    let out_dtypes: Vec<DType> = outs.iter().map(|t| t.dtype).collect();
    let n_outputs = yielded.len();
    let mut inits: Vec<Value> = outs[yielded.clone()].iter().map(|t| b.tensor_empty(tensor_type(t), sizes)).collect();
    let flag_type = crate::mlir::TensorType::new(outs[0].shape.clone(), ScalarType::I8);
    for raises in [raises_div, raises_mod] {
        if raises {
            inits.push(b.tensor_empty(flag_type.clone(), sizes));
        }
    }
    let mut maps = input_maps(ins, rank);
    maps.extend(std::iter::repeat_n(AffineMap::identity(rank), inits.len()));
    let iterators = vec![IteratorType::Parallel; rank];
    let in_dtypes: Vec<DType> = ins.iter().map(|(_, t)| t.dtype).collect();
    let results = b.linalg_generic(&ins.iter().map(|(v, _)| v.clone()).collect::<Vec<_>>(), &inits, &maps, &iterators, |body, args| {
        let scalars: Vec<Scalar> = args
            .iter()
            .zip(&in_dtypes)
            .map(|(a, &dtype)| Scalar { value: load(body, a, dtype), dtype })
            .collect();
        let mut flags = Flags::default();
        let results = scalar::lower(body, op, &scalars, &out_dtypes, &mut flags)?;
        let mut yields: Vec<Value> = results[yielded.clone()]
            .iter()
            .zip(&out_dtypes[yielded.clone()])
            .map(|(r, &d)| store(body, r, d))
            .collect();
        for (raises, flag) in [(raises_div, flags.zero_division), (raises_mod, flags.zero_modulo)] {
            if raises {
                let f = flag.ok_or("a scalar op declared an error it never checks")?;
                yields.push(body.cast(Cast::ExtUI, &f, ScalarType::I8));
            }
        }
        Ok::<_, String>(yields)
    })?;
    let mut rest = results[n_outputs..].iter().cloned();
    Ok(Generated {
        outputs: results[..n_outputs].to_vec(),
        zero_division: if raises_div { rest.next() } else { None },
        zero_modulo: if raises_mod { rest.next() } else { None },
    })
}

/// A tensor element as scalar code sees it: bool bytes become `i1`.
fn load(b: &mut Block, arg: &Value, dtype: DType) -> Value {
    if dtype == DType::Bool {
        let z = b.constant_int(0, ScalarType::I8);
        b.cmpi(CmpI::Ne, arg, &z)
    } else {
        arg.clone()
    }
}

/// A scalar result as a tensor element: converted to the output dtype, bool as a byte.
fn store(b: &mut Block, r: &Scalar, dtype: DType) -> Value {
    let v = scalar::convert(b, r, dtype).value;
    if dtype == DType::Bool {
        b.cast(Cast::ExtUI, &v, ScalarType::I8)
    } else {
        v
    }
}

/// `any(flags)` of an `i8` flag tensor, as a `tensor<i8>`.
fn any(b: &mut Block, flags: &Value) -> Value {
    let rank = flags.tensor().rank();
    let acc_type = crate::mlir::TensorType::new(vec![], ScalarType::I8);
    let empty = b.tensor_empty(acc_type, &[]);
    let zero = b.constant_int(0, ScalarType::I8);
    let init = b.linalg_fill(&zero, &empty);
    let maps = [AffineMap::identity(rank), AffineMap { dims: rank, results: vec![] }];
    let result = b.linalg_generic(std::slice::from_ref(flags), &[init], &maps, &vec![IteratorType::Reduction; rank], |body, args| {
        Ok::<_, String>(vec![body.arith(Arith::OrI, &args[0], &args[1])])
    });
    result.expect("the reduction body cannot fail").remove(0)
}

/// `x` as `to`, elementwise (for rules that need their inputs in one dtype).
pub fn cast(b: &mut Block, x: &Value, from: &TensorType, to: DType) -> Result<Value, String> {
    if from.dtype == to {
        return Ok(x.clone());
    }
    let out = TensorType { dtype: to, shape: from.shape.clone() };
    Ok(generate(b, &ScalarOp::Cast, &[(x.clone(), from.clone())], &[out])?.outputs.remove(0))
}

pub fn lower(cx: &mut Context, b: &mut Block, node: &Node, op: &ScalarOp, name: &str) -> Result<(), String> {
    let outs: Vec<TensorType> = node.outputs.iter().map(|&o| cx.graph.ty(o).clone()).collect();
    let rank = outs[0].ndim();
    let mut ins = Vec::with_capacity(node.inputs.len());
    for &i in &node.inputs {
        let t = cx.graph.ty(i).clone();
        if t.ndim() != rank {
            return Err(format!("input of rank {} for an output of rank {rank}", t.ndim()));
        }
        ins.push((cx.value(b, i)?, t));
    }
    // Output dims, and the run-time equalities of every non-broadcast input dim.
    let mut dims = Vec::with_capacity(rank);
    for d in 0..rank {
        let mut chosen: Option<Dim> = None;
        for (&i, (_, t)) in node.inputs.iter().zip(&ins) {
            if t.broadcastable(d) {
                continue;
            }
            let dim = cx.dims(i)[d];
            match chosen {
                None => chosen = Some(dim),
                Some(c) => cx.require_equal(c, dim, name),
            }
        }
        dims.push(chosen.unwrap_or(Dim::Static(1)));
    }
    let generated = generate(b, op, &ins, &outs)?;
    for (kind_flags, message) in [
        (&generated.zero_division, "integer division by zero"),
        (&generated.zero_modulo, "integer modulo by zero"),
    ] {
        if let Some(flags) = kind_flags {
            let flag = any(b, flags);
            cx.add_check(flag, RuntimeCheck { kind: ErrorKind::ZeroDivision, message: message.into() });
        }
    }
    for (&o, v) in node.outputs.iter().zip(generated.outputs) {
        cx.define(o, v, dims.clone());
    }
    Ok(())
}
