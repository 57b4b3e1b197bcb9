//! `CheckAndRaise` and its subclass `Assert`: the value passes through, and the call
//! raises the Op's exception class with its message where a condition is false.

use super::{subtensor, Context, RuntimeCheck};
use crate::ir::Node;
use crate::mlir::{AffineMap, Block, Cast, CmpF, CmpI, ScalarType, TensorType, Value};

/// `CheckAndRaise(exc_type, msg)(value, *conds)`: every condition is a 0-d bool (an `i8`
/// byte here); one flag, set where any is zero, raises `exception(msg)` after the call, as
/// the C backend's `PyErr_SetString(exc_type, msg)` does. The flag is a result of the
/// function, so the check runs even when nothing else reads the conditions.
pub fn check_and_raise(cx: &mut Context, b: &mut Block, node: &Node, msg: &str, exception: &str) -> Result<(), String> {
    let (value, out) = (node.inputs[0], node.outputs[0]);
    let mut conds = Vec::new();
    let mut dtypes = Vec::new();
    for &c in &node.inputs[1..] {
        let ty = cx.graph.ty(c).clone();
        if ty.ndim() != 0 {
            return Err(format!("a condition of rank {}", ty.ndim()));
        }
        conds.push(cx.value(b, c)?);
        dtypes.push(ty.dtype);
    }
    if !conds.is_empty() {
        // The flag is computed by a generic over the conditions, not by `tensor.extract`s
        // on the host side: measured with IREE 3.13, extracting both results of a
        // two-result 0-d generic (a fused Composite of two conditions) read the first
        // one wrong, so a false condition did not raise.
        let init = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
        let maps = vec![AffineMap { dims: 0, results: vec![] }; conds.len() + 1];
        let flag = b.linalg_generic(&conds, &[init], &maps, &[], |body, args| {
            let mut failed: Option<Value> = None;
            for (arg, dtype) in args.iter().zip(&dtypes) {
                let is_false = if dtype.is_float() {
                    let zero = body.constant_f64(0.0, arg.scalar());
                    body.cmpf(CmpF::Oeq, arg, &zero)
                } else {
                    let zero = body.constant_int(0, arg.scalar());
                    body.cmpi(CmpI::Eq, arg, &zero)
                };
                failed = Some(subtensor::or(body, failed, is_false));
            }
            let failed = failed.expect("at least one condition");
            Ok::<_, String>(vec![body.cast(Cast::ExtUI, &failed, ScalarType::I8)])
        })?;
        let kind = cx.exception(exception);
        cx.add_check(flag[0].clone(), RuntimeCheck { kind, message: msg.to_string() });
    }
    let v = cx.value(b, value)?;
    let dims = cx.dims(value);
    cx.define(out, v, dims);
    if let Some(known) = cx.int_values(value) {
        cx.set_int_values(out, known);
    }
    Ok(())
}
