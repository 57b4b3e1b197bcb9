//! `Choose(a, choices)` (`pt.choose`) with a tensor of choices: numpy's `choose`, the
//! result at each position taken from `choices[a[...], ...]`, `a` and `choices[0]`
//! broadcast together as numpy broadcasts them at run time (a length 1 broadcasts; lengths
//! that do not broadcast raise `ValueError` before the call). Mode `raise` raises
//! `ValueError` for an entry outside `[0, n)`, `wrap` takes it modulo `n`, `clip` clamps
//! it. No choice at all (`n == 0`) raises `ValueError`, as numpy does. Choices given as a
//! Python list are a `TypedList` (`MakeList`), which is not lowered.

use super::advanced::broadcast_extent;
use super::construct::output_sizes;
use super::shapes::{Dim, DimExpr};
use super::subtensor::{check, guarded_extract, int_to_index};
use super::{tensor_type, Context, ErrorKind, RuntimeCheck};
use crate::dtype::DType;
use crate::ir::{Node, RavelMode};
use crate::mlir::{AffineMap, Arith, Block, Cast, CmpI, IteratorType, ScalarType, TensorType, Value};

/// How an operand is read at a position of the result: per operand axis, the result axis
/// and whether its index is 0 (a static 1), 0 where its run-time length is 1, or the
/// result's.
#[derive(Clone)]
enum Read {
    Zero,
    ZeroIfOne(Value),
    Same,
}

pub fn choose(cx: &mut Context, b: &mut Block, node: &Node, mode: RavelMode) -> Result<(), String> {
    let what = "Choose";
    let [a_var, c_var] = node.inputs[..] else { return Err("Choose needs two inputs (a, choices)".into()) };
    let out = node.outputs[0];
    let (a_ty, c_ty, out_ty) = (cx.graph.ty(a_var).clone(), cx.graph.ty(c_var).clone(), cx.graph.ty(out).clone());
    if !a_ty.dtype.is_int() || c_ty.ndim() == 0 || out_ty.dtype != c_ty.dtype {
        return Err(format!("choices of type {c_ty:?} chosen by {a_ty:?} into {out_ty:?}"));
    }
    let rank = out_ty.ndim();
    if rank != a_ty.ndim().max(c_ty.ndim() - 1) {
        return Err(format!("a result of rank {rank} for a of rank {} and choices of rank {}", a_ty.ndim(), c_ty.ndim()));
    }
    let (a, c) = (cx.value(b, a_var)?, cx.value(b, c_var)?);
    let (a_dims, c_dims) = (cx.dims(a_var), cx.dims(c_var));
    // Operand axes right-aligned with the result's: (operand, its axis) per result axis.
    let a_lead = rank - a_ty.ndim();
    let c_lead = rank - (c_ty.ndim() - 1);
    let mut dims = Vec::with_capacity(rank);
    let mut sizes = Vec::with_capacity(rank);
    let mut a_read = vec![Read::Same; a_ty.ndim()];
    let mut c_read = vec![Read::Same; c_ty.ndim()];
    for k in 0..rank {
        let parts: Vec<(bool, usize)> = [(k >= a_lead).then(|| (true, k - a_lead)), (k >= c_lead).then(|| (false, k - c_lead + 1))].into_iter().flatten().collect();
        let mut own: Vec<Dim> = Vec::new();
        let mut size: Option<Value> = None;
        for &(is_a, axis) in &parts {
            let (ty, d) = if is_a { (&a_ty, a_dims[axis]) } else { (&c_ty, c_dims[axis]) };
            if ty.broadcastable(axis) {
                continue;
            }
            if !own.contains(&d) {
                own.push(d);
            }
            let n = b.tensor_dim(if is_a { &a } else { &c }, axis);
            size = Some(broadcast_extent(b, size, n));
        }
        let dim = match own[..] {
            [] => Dim::Static(1),
            [one] => one,
            _ => {
                let d = cx.derived(DimExpr::Broadcast(own));
                cx.require_valid(d, &format!("{what} (a and choices broadcast together)"), ErrorKind::Value);
                d
            }
        };
        for &(is_a, axis) in &parts {
            let (ty, d) = if is_a { (&a_ty, a_dims[axis]) } else { (&c_ty, c_dims[axis]) };
            let read = if ty.broadcastable(axis) {
                Read::Zero
            } else if d != dim {
                let n = b.tensor_dim(if is_a { &a } else { &c }, axis);
                let one = b.constant_index(1);
                Read::ZeroIfOne(b.cmpi(CmpI::Eq, &n, &one))
            } else {
                Read::Same
            };
            if is_a {
                a_read[axis] = read;
            } else {
                c_read[axis] = read;
            }
        }
        dims.push(dim);
        sizes.push(size.unwrap_or_else(|| b.constant_index(1)));
    }
    let n = b.tensor_dim(&c, 0);
    if c_ty.shape[0].is_none_or(|s| s == 0) {
        let zero = b.constant_index(0);
        let none = b.cmpi(CmpI::Eq, &n, &zero);
        check(cx, b, &none, ErrorKind::Value, format!("{what}: 0-length sequence."));
    }
    let spec = Source { a, a_dtype: a_ty.dtype, a_read, a_lead, c_read, c_lead, n, mode };
    let (dynamic, dims) = output_sizes(cx, b, &out_ty, dims, sizes, what);
    let init = b.tensor_empty(tensor_type(&out_ty), &dynamic);
    let r = b.linalg_generic(&[], &[init], &[AffineMap::identity(rank)], &vec![IteratorType::Parallel; rank], |body, _| {
        let (index, ok) = spec.choice(body);
        Ok::<_, String>(vec![guarded_extract(body, Some(&ok), &c, &index)])
    })?;
    if mode == RavelMode::Raise {
        // Over the result's positions (the entries of a that are used), whether any is
        // not a choice.
        let empty = b.tensor_empty(TensorType::new(vec![], ScalarType::I8), &[]);
        let z8 = b.constant_int(0, ScalarType::I8);
        let init = b.linalg_fill(&z8, &empty);
        let maps = [AffineMap::identity(rank), AffineMap { dims: rank, results: vec![] }];
        let flag = b.linalg_generic(std::slice::from_ref(&r[0]), &[init], &maps, &vec![IteratorType::Reduction; rank], |body, args| {
            let (_, ok) = spec.choice(body);
            let t = body.constant_int(1, ScalarType::I1);
            let bad = body.arith(Arith::XOrI, &ok, &t);
            let bad = body.cast(Cast::ExtUI, &bad, ScalarType::I8);
            Ok::<_, String>(vec![body.arith(Arith::OrI, &bad, &args[1])])
        })?;
        cx.add_check(flag[0].clone(), RuntimeCheck { kind: ErrorKind::Value, message: format!("{what}: invalid entry in choice array") });
    }
    cx.define(out, r[0].clone(), dims);
    Ok(())
}

/// What a kernel over the result's positions needs to find the choice at each.
struct Source {
    a: Value,
    a_dtype: DType,
    a_read: Vec<Read>,
    a_lead: usize,
    c_read: Vec<Read>,
    c_lead: usize,
    /// The number of choices.
    n: Value,
    mode: RavelMode,
}

impl Source {
    /// The operand index of `reads` (axis `axis` on result axis `lead + axis - skip`),
    /// leaving out its first `skip` axes.
    fn index(body: &mut Block, reads: &[Read], lead: usize, skip: usize) -> Vec<Value> {
        reads
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(axis, r)| {
                let i = body.linalg_index(lead + axis - skip);
                match r {
                    Read::Zero => body.constant_index(0),
                    Read::ZeroIfOne(one) => {
                        let z = body.constant_index(0);
                        body.select(one, &z, &i)
                    }
                    Read::Same => i,
                }
            })
            .collect()
    }

    /// In a body over the result's positions: the index into choices, and whether its
    /// first entry (after the mode) is in `[0, n)`.
    fn choice(&self, body: &mut Block) -> (Vec<Value>, Value) {
        let ai = Self::index(body, &self.a_read, self.a_lead, 0);
        let e = body.tensor_extract(&self.a, &ai);
        let i = int_to_index(body, &e, self.a_dtype);
        let zero = body.constant_index(0);
        let one = body.constant_index(1);
        let n = &self.n;
        let k = match self.mode {
            RavelMode::Raise => i,
            RavelMode::Wrap => {
                let m = body.arith(Arith::MaxSI, n, &one);
                let r = body.arith(Arith::RemSI, &i, &m);
                let neg = body.cmpi(CmpI::Slt, &r, &zero);
                let up = body.arith(Arith::AddI, &r, &m);
                body.select(&neg, &up, &r)
            }
            RavelMode::Clip => {
                let last = body.arith(Arith::SubI, n, &one);
                let lo = body.arith(Arith::MaxSI, &i, &zero);
                body.arith(Arith::MinSI, &lo, &last)
            }
        };
        let ge = body.cmpi(CmpI::Sge, &k, &zero);
        let lt = body.cmpi(CmpI::Slt, &k, n);
        let ok = body.arith(Arith::AndI, &ge, &lt);
        let mut index = vec![k];
        index.extend(Self::index(body, &self.c_read, self.c_lead, 1));
        (index, ok)
    }
}
