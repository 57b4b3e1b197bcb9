//! The typed MLIR builder: the only code that spells MLIR syntax. Values carry their
//! types, SSA names are generated, and every op checks what it can of its operands.

use super::types::{ScalarType, TensorType, Type};
use std::cell::Cell;
use std::fmt::Write;
use std::rc::Rc;

/// An SSA value and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    name: String,
    ty: Type,
}

impl Value {
    pub fn ty(&self) -> &Type {
        &self.ty
    }

    /// The position of the entry function's argument this value is, if it is one.
    pub fn arg_index(&self) -> Option<usize> {
        self.name.strip_prefix("%arg")?.parse().ok()
    }

    /// The scalar type of a scalar value; calling this on a tensor is a lowering bug.
    pub fn scalar(&self) -> ScalarType {
        match &self.ty {
            Type::Scalar(s) => *s,
            Type::Tensor(t) => panic!("{} is a tensor ({t}), not a scalar", self.name),
        }
    }

    /// The tensor type of a tensor value; calling this on a scalar is a lowering bug.
    pub fn tensor(&self) -> &TensorType {
        match &self.ty {
            Type::Tensor(t) => t,
            Type::Scalar(s) => panic!("{} is a scalar ({s}), not a tensor", self.name),
        }
    }
}

/// Binary `arith` ops whose result has the operands' type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    AddF,
    SubF,
    MulF,
    DivF,
    RemF,
    /// NaN-propagating, like numpy's maximum/minimum.
    MaximumF,
    MinimumF,
    AddI,
    SubI,
    MulI,
    DivSI,
    DivUI,
    RemSI,
    RemUI,
    FloorDivSI,
    MaxSI,
    MaxUI,
    MinSI,
    MinUI,
    AndI,
    OrI,
    XOrI,
    /// Unsigned division rounding up (tile counts of a packed layout).
    CeilDivUI,
}

impl Arith {
    fn mnemonic(self) -> &'static str {
        use Arith::*;
        match self {
            AddF => "arith.addf",
            SubF => "arith.subf",
            MulF => "arith.mulf",
            DivF => "arith.divf",
            RemF => "arith.remf",
            MaximumF => "arith.maximumf",
            MinimumF => "arith.minimumf",
            AddI => "arith.addi",
            SubI => "arith.subi",
            MulI => "arith.muli",
            DivSI => "arith.divsi",
            DivUI => "arith.divui",
            RemSI => "arith.remsi",
            RemUI => "arith.remui",
            FloorDivSI => "arith.floordivsi",
            MaxSI => "arith.maxsi",
            MaxUI => "arith.maxui",
            MinSI => "arith.minsi",
            MinUI => "arith.minui",
            AndI => "arith.andi",
            OrI => "arith.ori",
            XOrI => "arith.xori",
            CeilDivUI => "arith.ceildivui",
        }
    }

    fn is_float(self) -> bool {
        use Arith::*;
        matches!(self, AddF | SubF | MulF | DivF | RemF | MaximumF | MinimumF)
    }
}

/// Unary `math` ops on one float operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathUnary {
    Sqrt,
    Exp,
    Log,
    AbsF,
    Floor,
    Trunc,
}

impl MathUnary {
    fn mnemonic(self) -> &'static str {
        match self {
            MathUnary::Sqrt => "math.sqrt",
            MathUnary::Exp => "math.exp",
            MathUnary::Log => "math.log",
            MathUnary::AbsF => "math.absf",
            MathUnary::Floor => "math.floor",
            MathUnary::Trunc => "math.trunc",
        }
    }
}

/// `arith.cmpf` predicates. Ordered (`O*`) is false on NaN, unordered (`U*`) true.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpF {
    Oeq,
    Olt,
    Ole,
    Ogt,
    Oge,
    Une,
    Uno,
    Ult,
    Ule,
}

/// `arith.cmpi` predicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpI {
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
}

/// Conversions between scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cast {
    ExtF,
    TruncF,
    ExtSI,
    ExtUI,
    TruncI,
    SIToFP,
    UIToFP,
    FPToSI,
    FPToUI,
    /// The same bits as another type of the same width.
    Bitcast,
}

impl Cast {
    fn mnemonic(self) -> &'static str {
        match self {
            Cast::ExtF => "arith.extf",
            Cast::TruncF => "arith.truncf",
            Cast::ExtSI => "arith.extsi",
            Cast::ExtUI => "arith.extui",
            Cast::TruncI => "arith.trunci",
            Cast::SIToFP => "arith.sitofp",
            Cast::UIToFP => "arith.uitofp",
            Cast::FPToSI => "arith.fptosi",
            Cast::FPToUI => "arith.fptoui",
            Cast::Bitcast => "arith.bitcast",
        }
    }
}

/// Linalg named contractions, all `ins(a, b) outs(c)` with `c += a * b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contraction {
    Matmul,
    Matvec,
    Vecmat,
    Dot,
    /// `(b,m,k),(b,k,n)->(b,m,n)`, batch sizes equal.
    BatchMatmul,
    /// Tiled operands (see [`Block::linalg_pack`]): `(M1,K1,M0,K0),(N1,K1,N0,K0)->(M1,N1,M0,N0)`.
    Mmt4d,
}

/// One result of an affine map: an iteration dim or a constant index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AffineExpr {
    Dim(usize),
    Constant(i64),
}

/// `affine_map<(d0, ..) -> (..)>` over `dims` iteration dims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffineMap {
    pub dims: usize,
    pub results: Vec<AffineExpr>,
}

impl AffineMap {
    pub fn identity(dims: usize) -> AffineMap {
        AffineMap { dims, results: (0..dims).map(AffineExpr::Dim).collect() }
    }

    fn write(&self, out: &mut String) {
        let dims: Vec<String> = (0..self.dims).map(|d| format!("d{d}")).collect();
        let results: Vec<String> = self
            .results
            .iter()
            .map(|r| match r {
                AffineExpr::Dim(d) => format!("d{d}"),
                AffineExpr::Constant(c) => c.to_string(),
            })
            .collect();
        write!(out, "affine_map<({}) -> ({})>", dims.join(", "), results.join(", ")).unwrap();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IteratorType {
    Parallel,
    Reduction,
}

/// A block of ops being written; nested regions share the SSA name counter and the
/// function's switches.
pub struct Block {
    text: String,
    indent: usize,
    shared: Rc<Shared>,
}

/// What a function's blocks share.
#[derive(Default)]
struct Shared {
    /// The next SSA name's number.
    next: Cell<usize>,
    /// See [`Function::poison_unwritten`].
    poison_unwritten: Cell<bool>,
}

fn join_names(values: &[Value]) -> String {
    values.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")
}

fn join_types(values: &[Value]) -> String {
    values.iter().map(|v| v.ty.to_string()).collect::<Vec<_>>().join(", ")
}

/// `%name = `, or `%name:N = ` for an op of several results.
fn results_head(name: &str, count: usize) -> String {
    if count == 1 {
        format!("{name} = ")
    } else {
        format!("{name}:{count} = ")
    }
}

/// The results of the op named `name`, of these types: `%name`, or `%name#i` each.
fn results(name: &str, types: impl ExactSizeIterator<Item = Type>) -> Vec<Value> {
    let count = types.len();
    types
        .enumerate()
        .map(|(i, ty)| Value { name: if count == 1 { name.to_string() } else { format!("{name}#{i}") }, ty })
        .collect()
}

impl Block {
    fn new(indent: usize, shared: Rc<Shared>) -> Block {
        Block { text: String::new(), indent, shared }
    }

    /// A block whose text is never written anywhere, naming its values from this one's
    /// counter: for lowering something only to learn the types and dims it gives.
    pub fn scratch(&self) -> Block {
        Block::new(self.indent, self.shared.clone())
    }

    fn fresh(&self) -> String {
        let n = self.shared.next.get();
        self.shared.next.set(n + 1);
        format!("%v{n}")
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.text.push_str("  ");
        }
        self.text.push_str(s);
        self.text.push('\n');
    }

    /// Writes `%name = <rhs>` and returns the value of type `ty`.
    fn def(&mut self, ty: Type, rhs: String) -> Value {
        let name = self.fresh();
        self.line(&format!("{name} = {rhs}"));
        Value { name, ty }
    }

    pub fn constant_int(&mut self, value: i64, ty: ScalarType) -> Value {
        assert!(!ty.is_float(), "integer constant of float type {ty}");
        // An `i1` is written `true`/`false`, a typed attribute of its own: `false : i1`
        // does not parse.
        let rhs = match (ty, value) {
            (ScalarType::I1, 0) => "arith.constant false".to_string(),
            (ScalarType::I1, _) => "arith.constant true".to_string(),
            _ => format!("arith.constant {value} : {ty}"),
        };
        self.def(ty.into(), rhs)
    }

    pub fn constant_index(&mut self, value: i64) -> Value {
        self.constant_int(value, ScalarType::Index)
    }

    /// A float constant from its bit pattern, so nan payloads, infinities, -0.0 and
    /// subnormals survive exactly.
    pub fn constant_float_bits(&mut self, bits: u64, ty: ScalarType) -> Value {
        let literal = match ty {
            ScalarType::F16 => format!("0x{:04X}", bits as u16),
            ScalarType::F32 => format!("0x{:08X}", bits as u32),
            ScalarType::F64 => format!("0x{bits:016X}"),
            _ => panic!("float constant of non-float type {ty}"),
        };
        self.def(ty.into(), format!("arith.constant {literal} : {ty}"))
    }

    pub fn constant_f64(&mut self, value: f64, ty: ScalarType) -> Value {
        match ty {
            ScalarType::F32 => self.constant_float_bits((value as f32).to_bits() as u64, ty),
            ScalarType::F64 => self.constant_float_bits(value.to_bits(), ty),
            _ => panic!("constant_f64 of type {ty}"),
        }
    }

    /// A dense tensor constant from its raw little-endian bytes (C order).
    pub fn constant_dense(&mut self, ty: TensorType, bytes: &[u8]) -> Value {
        let mut hex = String::with_capacity(2 * bytes.len());
        for b in bytes {
            write!(hex, "{b:02X}").unwrap();
        }
        self.def(ty.clone().into(), format!("arith.constant dense<\"0x{hex}\"> : {ty}"))
    }

    pub fn arith(&mut self, op: Arith, a: &Value, b: &Value) -> Value {
        assert_eq!(a.ty, b.ty, "{} on mismatched types", op.mnemonic());
        assert_eq!(op.is_float(), a.scalar().is_float(), "{} on {}", op.mnemonic(), a.ty);
        self.def(a.ty.clone(), format!("{} {}, {} : {}", op.mnemonic(), a.name, b.name, a.ty))
    }

    pub fn negf(&mut self, a: &Value) -> Value {
        self.def(a.ty.clone(), format!("arith.negf {} : {}", a.name, a.ty))
    }

    pub fn math(&mut self, op: MathUnary, a: &Value) -> Value {
        assert!(a.scalar().is_float(), "{} on {}", op.mnemonic(), a.ty);
        self.def(a.ty.clone(), format!("{} {} : {}", op.mnemonic(), a.name, a.ty))
    }

    pub fn absi(&mut self, a: &Value) -> Value {
        self.def(a.ty.clone(), format!("math.absi {} : {}", a.name, a.ty))
    }

    pub fn powf(&mut self, a: &Value, b: &Value) -> Value {
        assert_eq!(a.ty, b.ty, "math.powf on mismatched types");
        self.def(a.ty.clone(), format!("math.powf {}, {} : {}", a.name, b.name, a.ty))
    }

    /// `a * b + c` rounded once.
    pub fn fma(&mut self, a: &Value, b: &Value, c: &Value) -> Value {
        assert!(a.ty == b.ty && b.ty == c.ty, "math.fma on mismatched types");
        self.def(a.ty.clone(), format!("math.fma {}, {}, {} : {}", a.name, b.name, c.name, a.ty))
    }

    /// `|a|` with the sign of `b`.
    pub fn copysign(&mut self, a: &Value, b: &Value) -> Value {
        assert_eq!(a.ty, b.ty, "math.copysign on mismatched types");
        self.def(a.ty.clone(), format!("math.copysign {}, {} : {}", a.name, b.name, a.ty))
    }

    /// Logical shift right.
    pub fn shrui(&mut self, a: &Value, b: &Value) -> Value {
        assert_eq!(a.ty, b.ty, "arith.shrui on mismatched types");
        self.def(a.ty.clone(), format!("arith.shrui {}, {} : {}", a.name, b.name, a.ty))
    }

    /// Shift left.
    pub fn shli(&mut self, a: &Value, b: &Value) -> Value {
        assert_eq!(a.ty, b.ty, "arith.shli on mismatched types");
        self.def(a.ty.clone(), format!("arith.shli {}, {} : {}", a.name, b.name, a.ty))
    }

    pub fn cmpf(&mut self, pred: CmpF, a: &Value, b: &Value) -> Value {
        assert_eq!(a.ty, b.ty, "arith.cmpf on mismatched types");
        let p = format!("{pred:?}").to_lowercase();
        self.def(ScalarType::I1.into(), format!("arith.cmpf {p}, {}, {} : {}", a.name, b.name, a.ty))
    }

    pub fn cmpi(&mut self, pred: CmpI, a: &Value, b: &Value) -> Value {
        assert_eq!(a.ty, b.ty, "arith.cmpi on mismatched types");
        let p = format!("{pred:?}").to_lowercase();
        self.def(ScalarType::I1.into(), format!("arith.cmpi {p}, {}, {} : {}", a.name, b.name, a.ty))
    }

    pub fn select(&mut self, cond: &Value, a: &Value, b: &Value) -> Value {
        assert_eq!(cond.scalar(), ScalarType::I1, "arith.select condition must be i1");
        assert_eq!(a.ty, b.ty, "arith.select on mismatched types");
        self.def(a.ty.clone(), format!("arith.select {}, {}, {} : {}", cond.name, a.name, b.name, a.ty))
    }

    pub fn cast(&mut self, op: Cast, a: &Value, to: ScalarType) -> Value {
        self.def(to.into(), format!("{} {} : {} to {to}", op.mnemonic(), a.name, a.ty))
    }

    /// `scf.while` over scalar loop-carried values: `cond` gets them and returns whether
    /// to go on; `body` gets them and returns the next ones. Returns the final values.
    pub fn scf_while(
        &mut self,
        inits: &[Value],
        cond: impl FnOnce(&mut Block, &[Value]) -> Value,
        body: impl FnOnce(&mut Block, &[Value]) -> Vec<Value>,
    ) -> Vec<Value> {
        let types = join_types(inits);
        let mut before = Block::new(self.indent + 1, self.shared.clone());
        let before_args: Vec<Value> = inits.iter().map(|v| Value { name: before.fresh(), ty: v.ty.clone() }).collect();
        let go_on = cond(&mut before, &before_args);
        assert_eq!(go_on.scalar(), ScalarType::I1, "scf.condition must be i1");
        before.line(&format!("scf.condition({}) {} : {types}", go_on.name, join_names(&before_args)));
        let mut after = Block::new(self.indent + 1, self.shared.clone());
        let after_args: Vec<Value> = inits.iter().map(|v| Value { name: after.fresh(), ty: v.ty.clone() }).collect();
        let next = body(&mut after, &after_args);
        assert_eq!(join_types(&next), types, "scf.while body must yield the loop-carried types");
        after.line(&format!("scf.yield {} : {types}", join_names(&next)));

        let name = self.fresh();
        let head = results_head(&name, inits.len());
        let bound: Vec<String> = before_args.iter().zip(inits).map(|(a, i)| format!("{} = {}", a.name, i.name)).collect();
        self.line(&format!("{head}scf.while ({}) : ({types}) -> ({types}) {{", bound.join(", ")));
        self.text.push_str(&before.text);
        let after_decl: Vec<String> = after_args.iter().map(|a| format!("{}: {}", a.name, a.ty)).collect();
        self.line("} do {");
        self.line(&format!("^bb0({}):", after_decl.join(", ")));
        self.text.push_str(&after.text);
        self.line("}");
        results(&name, inits.iter().map(|v| v.ty.clone()))
    }

    /// `scf.for` from `lower` to `upper` by `step` (index values) over loop-carried values
    /// (scalars or tensors): `body` gets the induction variable and the values and returns
    /// the next ones (or the error that stops the lowering). Returns the final values.
    pub fn scf_for<E>(
        &mut self,
        lower: &Value,
        upper: &Value,
        step: &Value,
        inits: &[Value],
        body: impl FnOnce(&mut Block, &Value, &[Value]) -> Result<Vec<Value>, E>,
    ) -> Result<Vec<Value>, E> {
        for bound in [lower, upper, step] {
            assert_eq!(bound.scalar(), ScalarType::Index, "scf.for bounds must be index values");
        }
        let types = join_types(inits);
        let mut inner = Block::new(self.indent + 1, self.shared.clone());
        let iv = Value { name: inner.fresh(), ty: ScalarType::Index.into() };
        let args: Vec<Value> = inits.iter().map(|v| Value { name: inner.fresh(), ty: v.ty.clone() }).collect();
        let next = body(&mut inner, &iv, &args)?;
        assert_eq!(join_types(&next), types, "scf.for body must yield the loop-carried types");
        inner.line(&format!("scf.yield {} : {types}", join_names(&next)));
        let name = self.fresh();
        let head = results_head(&name, inits.len());
        let bound: Vec<String> = args.iter().zip(inits).map(|(a, i)| format!("{} = {}", a.name, i.name)).collect();
        self.line(&format!(
            "{head}scf.for {} = {} to {} step {} iter_args({}) -> ({types}) {{",
            iv.name,
            lower.name,
            upper.name,
            step.name,
            bound.join(", ")
        ));
        self.text.push_str(&inner.text);
        self.line("}");
        Ok(results(&name, inits.iter().map(|v| v.ty.clone())))
    }

    pub fn tensor_dim(&mut self, t: &Value, axis: usize) -> Value {
        let c = self.constant_index(axis as i64);
        self.def(ScalarType::Index.into(), format!("tensor.dim {}, {} : {}", t.name, c.name, t.ty))
    }

    /// `tensor.empty` with one index value per dynamic dim of `ty`, in order.
    pub fn tensor_empty(&mut self, ty: TensorType, dynamic_sizes: &[Value]) -> Value {
        let dynamic = ty.shape.iter().filter(|d| d.is_none()).count();
        assert_eq!(dynamic, dynamic_sizes.len(), "tensor.empty needs one size per dynamic dim");
        self.def(ty.clone().into(), format!("tensor.empty({}) : {ty}", join_names(dynamic_sizes)))
    }

    /// A 1-D `tensor.empty` of `size` elements for a kernel to write element by element;
    /// filled with NaN (-1 for integers) where the function was asked to
    /// ([`Function::poison_unwritten`]).
    pub fn tensor_unwritten(&mut self, element: ScalarType, size: &Value) -> Value {
        let empty = self.tensor_empty(TensorType::new(vec![None], element), std::slice::from_ref(size));
        if !self.shared.poison_unwritten.get() || matches!(element, ScalarType::I1 | ScalarType::Index) {
            return empty;
        }
        let (zero, one) = (self.constant_index(0), self.constant_index(1));
        // NaN, or an integer's all-ones bits (-1): an index or count nothing computes.
        let nan = if element.is_float() { self.constant_f64(f64::NAN, element) } else { self.constant_int(-1, element) };
        let filled = self.scf_for(&zero, size, &one, &[empty], |f, i, d| Ok::<_, String>(vec![f.tensor_insert(&nan, &d[0], std::slice::from_ref(i))]));
        filled.unwrap_or_else(|e| unreachable!("{e}"))[0].clone()
    }

    pub fn linalg_fill(&mut self, value: &Value, init: &Value) -> Value {
        assert_eq!(value.scalar(), init.tensor().element, "linalg.fill of another element type");
        self.def(
            init.ty.clone(),
            format!("linalg.fill ins({} : {}) outs({} : {}) -> {}", value.name, value.ty, init.name, init.ty, init.ty),
        )
    }

    pub fn contraction(&mut self, op: Contraction, a: &Value, b: &Value, init: &Value) -> Value {
        let name = match op {
            Contraction::Matmul => "linalg.matmul",
            Contraction::Matvec => "linalg.matvec",
            Contraction::Vecmat => "linalg.vecmat",
            Contraction::Dot => "linalg.dot",
            Contraction::BatchMatmul => "linalg.batch_matmul",
            Contraction::Mmt4d => "linalg.mmt4d",
        };
        self.def(
            init.ty.clone(),
            format!(
                "{name} ins({}, {} : {}, {}) outs({} : {}) -> {}",
                a.name, b.name, a.ty, b.ty, init.name, init.ty, init.ty
            ),
        )
    }

    /// `linalg.generic`; `body` gets the block's arguments (one element per input, then
    /// per output) and returns the values to yield, one per output.
    pub fn linalg_generic<E>(
        &mut self,
        ins: &[Value],
        outs: &[Value],
        maps: &[AffineMap],
        iterators: &[IteratorType],
        body: impl FnOnce(&mut Block, &[Value]) -> Result<Vec<Value>, E>,
    ) -> Result<Vec<Value>, E> {
        assert_eq!(maps.len(), ins.len() + outs.len(), "linalg.generic needs one map per operand");
        let mut attrs = String::from("{indexing_maps = [");
        for (i, m) in maps.iter().enumerate() {
            if i > 0 {
                attrs.push_str(", ");
            }
            m.write(&mut attrs);
        }
        attrs.push_str("], iterator_types = [");
        let its: Vec<&str> = iterators
            .iter()
            .map(|i| match i {
                IteratorType::Parallel => "\"parallel\"",
                IteratorType::Reduction => "\"reduction\"",
            })
            .collect();
        attrs.push_str(&its.join(", "));
        attrs.push_str("]}");

        let mut inner = Block::new(self.indent + 1, self.shared.clone());
        let args: Vec<Value> = ins
            .iter()
            .chain(outs)
            .map(|v| Value { name: inner.fresh(), ty: v.tensor().element.into() })
            .collect();
        let yields = body(&mut inner, &args)?;
        assert_eq!(yields.len(), outs.len(), "linalg.generic body must yield one value per output");
        for (y, o) in yields.iter().zip(outs) {
            assert_eq!(y.scalar(), o.tensor().element, "linalg.yield of the wrong element type");
        }
        inner.line(&format!("linalg.yield {} : {}", join_names(&yields), join_types(&yields)));

        let result_types: Vec<String> = outs.iter().map(|o| o.ty.to_string()).collect();
        let name = self.fresh();
        let mut head = results_head(&name, outs.len());
        head.push_str("linalg.generic ");
        head.push_str(&attrs);
        if !ins.is_empty() {
            write!(head, " ins({} : {})", join_names(ins), join_types(ins)).unwrap();
        }
        write!(head, " outs({} : {}) {{", join_names(outs), join_types(outs)).unwrap();
        self.line(&head);
        let block_args: Vec<String> = args.iter().map(|a| format!("{}: {}", a.name, a.ty)).collect();
        self.line(&format!("^bb0({}):", block_args.join(", ")));
        self.text.push_str(&inner.text);
        let tail = if outs.len() == 1 {
            format!("}} -> {}", result_types[0])
        } else {
            format!("}} -> ({})", result_types.join(", "))
        };
        self.line(&tail);
        Ok(results(&name, outs.iter().map(|o| o.ty.clone())))
    }

    /// `iree_linalg_ext.scatter`: row `i` of `indices` (an `N x depth` integer tensor)
    /// names a position in the first `depth` dims of `original`; the slice `i` of
    /// `updates` (`N` by `original`'s remaining dims, same element type) is combined with
    /// the elements there by `body(update, current) -> new`. With `unique` false,
    /// repeated positions are combined one after the other. Every index must be in
    /// bounds: the caller guarantees it.
    pub fn scatter<E>(
        &mut self,
        updates: &Value,
        indices: &Value,
        original: &Value,
        unique: bool,
        body: impl FnOnce(&mut Block, &Value, &Value) -> Result<Value, E>,
    ) -> Result<Value, E> {
        let element = original.tensor().element;
        assert_eq!(updates.tensor().element, element, "scatter of another element type");
        let depth = indices.tensor().shape[1].expect("scatter indices need a static depth") as usize;
        let mut inner = Block::new(self.indent + 1, self.shared.clone());
        let update = Value { name: inner.fresh(), ty: element.into() };
        let current = Value { name: inner.fresh(), ty: element.into() };
        let new = body(&mut inner, &update, &current)?;
        assert_eq!(new.scalar(), element, "scatter body yields the wrong element type");
        inner.line(&format!("iree_linalg_ext.yield {} : {}", new.name, new.ty));
        let map = (0..depth).map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
        let name = self.fresh();
        self.line(&format!(
            "{name} = iree_linalg_ext.scatter dimension_map = [{map}] unique_indices({unique}) ins({}, {} : {}, {}) outs({} : {}) {{",
            updates.name, indices.name, updates.ty, indices.ty, original.name, original.ty
        ));
        self.line(&format!("^bb0({}: {element}, {}: {element}):", update.name, current.name));
        self.text.push_str(&inner.text);
        self.line(&format!("}} -> {}", original.ty));
        Ok(Value { name, ty: original.ty.clone() })
    }
}

/// A `func.func` being written.
pub struct Function {
    name: String,
    args: Vec<Value>,
    body: Block,
}

impl Function {
    pub fn new(name: &str, arg_types: Vec<Type>) -> Function {
        let shared = Rc::new(Shared::default());
        let args = arg_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| Value { name: format!("%arg{i}"), ty })
            .collect();
        Function { name: name.to_string(), args, body: Block::new(1, shared) }
    }

    /// Kernels' results start filled with NaN instead of unwritten
    /// ([`Block::tensor_unwritten`]): a test switch (`PYTENSOR_MLIR_POISON_UNWRITTEN`) that
    /// makes a kernel reading an element before writing it give NaN on every call, where
    /// otherwise it reads what an earlier call left in the reused buffer.
    pub fn poison_unwritten(&mut self) {
        self.body.shared.poison_unwritten.set(true);
    }

    pub fn args(&self) -> &[Value] {
        &self.args
    }

    pub fn body(&mut self) -> &mut Block {
        &mut self.body
    }

    /// The function's text, returning `results`.
    pub fn finish(mut self, results: &[Value]) -> String {
        if results.is_empty() {
            self.body.line("return");
        } else {
            self.body.line(&format!("return {} : {}", join_names(results), join_types(results)));
        }
        let args: Vec<String> = self.args.iter().map(|a| format!("{}: {}", a.name, a.ty)).collect();
        let rets: Vec<String> = results.iter().map(|r| r.ty.to_string()).collect();
        format!("func.func @{}({}) -> ({}) {{\n{}}}\n", self.name, args.join(", "), rets.join(", "), self.body.text)
    }
}

/// `tensor` and `linalg` ops for reductions and shape ops.
impl Block {
    /// The iteration index along `dim` inside a `linalg.generic` body.
    pub fn linalg_index(&mut self, dim: usize) -> Value {
        self.def(ScalarType::Index.into(), format!("linalg.index {dim} : index"))
    }

    /// `arith.index_cast` between `index` and an integer type.
    pub fn index_cast(&mut self, a: &Value, to: ScalarType) -> Value {
        assert!(!a.scalar().is_float() && !to.is_float(), "arith.index_cast of a float");
        self.def(to.into(), format!("arith.index_cast {} : {} to {to}", a.name, a.ty))
    }

    /// A static-shaped tensor of `ty` from its elements in C order.
    pub fn tensor_from_elements(&mut self, ty: TensorType, elements: &[Value]) -> Value {
        let count: u64 = ty.shape.iter().map(|d| d.expect("tensor.from_elements needs a static shape")).product();
        assert_eq!(count as usize, elements.len(), "tensor.from_elements needs one value per element");
        assert!(elements.iter().all(|e| e.scalar() == ty.element), "tensor.from_elements of another element type");
        self.def(ty.clone().into(), format!("tensor.from_elements {} : {ty}", join_names(elements)))
    }

    /// One element of `t` at `indices` (`index` values, one per dim).
    pub fn tensor_extract(&mut self, t: &Value, indices: &[Value]) -> Value {
        assert_eq!(t.tensor().rank(), indices.len(), "tensor.extract needs one index per dim");
        let elem = t.tensor().element;
        self.def(elem.into(), format!("tensor.extract {}[{}] : {}", t.name, join_names(indices), t.ty))
    }

    /// `tensor.cast` to a type that differs only in which dims are static.
    pub fn tensor_cast(&mut self, t: &Value, to: TensorType) -> Value {
        assert_eq!(t.tensor().element, to.element, "tensor.cast changes the element type");
        assert_eq!(t.tensor().rank(), to.rank(), "tensor.cast changes the rank");
        self.def(to.clone().into(), format!("tensor.cast {} : {} to {to}", t.name, t.ty))
    }

    /// `util.optimization_barrier`: the same tensor, which IREE may not fuse across (so
    /// its producer and its consumers land in different dispatches). `dynamic_sizes`, one
    /// per dynamic dim of `t` in order, are tied to the result (`flow.tensor.tie_shape`):
    /// IREE cannot see sizes through the barrier, and must know every dispatch operand's.
    pub fn optimization_barrier(&mut self, t: &Value, dynamic_sizes: &[Value]) -> Value {
        let ty = t.tensor().clone();
        let dynamic = ty.shape.iter().filter(|d| d.is_none()).count();
        assert_eq!(dynamic, dynamic_sizes.len(), "a barrier needs one size per dynamic dim");
        let r = self.def(t.ty.clone(), format!("util.optimization_barrier {} : {ty}", t.name));
        self.tie_shape(&r, dynamic_sizes)
    }

    /// `flow.tensor.tie_shape`: `t` with its dynamic dims named by `dynamic_sizes` (one per
    /// dynamic dim, in order), for results IREE cannot see the sizes of (a barrier's, an
    /// `scf.if`'s in a program compiled for the full HAL).
    pub fn tie_shape(&mut self, t: &Value, dynamic_sizes: &[Value]) -> Value {
        let ty = t.tensor().clone();
        let dynamic = ty.shape.iter().filter(|d| d.is_none()).count();
        assert_eq!(dynamic, dynamic_sizes.len(), "tie_shape needs one size per dynamic dim");
        if dynamic == 0 {
            return t.clone();
        }
        self.def(t.ty.clone(), format!("flow.tensor.tie_shape {} : {ty}{{{}}}", t.name, join_names(dynamic_sizes)))
    }

    /// `t` with `value` at `indices` (`index` values, one per dim).
    pub fn tensor_insert(&mut self, value: &Value, t: &Value, indices: &[Value]) -> Value {
        assert_eq!(t.tensor().rank(), indices.len(), "tensor.insert needs one index per dim");
        assert_eq!(value.scalar(), t.tensor().element, "tensor.insert of another element type");
        self.def(t.ty.clone(), format!("tensor.insert {} into {}[{}] : {}", value.name, t.name, join_names(indices), t.ty))
    }

    /// `flow.dispatch.workgroups` run as one workgroup: what `body` builds is one dispatch,
    /// whatever it is (loops of scalar code over `tensor.extract`/`tensor.insert`
    /// included). The dispatch is isolated from the code around it: `body` gets
    /// `operands` (tensors, loaded whole, and scalars) as values of its own, and uses
    /// nothing else from outside; it returns a tensor of `output`'s type, whose dynamic
    /// sizes are `output`'s values (one per dynamic dim, in order). Being isolated, IREE
    /// fuses nothing into it (into a `flow.dispatch.region` it clones producers such as
    /// fills and casts, whose linalg ops it then distributes over workgroups and refuses
    /// the scalar writes beside them: "write affecting operations on global resources
    /// are restricted to workgroup distributed contexts").
    pub fn dispatch_workgroups(&mut self, operands: &[Value], output: (TensorType, Vec<Value>), body: impl FnOnce(&mut Block, &[Value]) -> Value) -> Value {
        self.dispatch(operands, output, false, |k, args| (body(k, args), None)).0
    }

    /// [`Block::dispatch_workgroups`] whose body also returns an `i1` (a failed check, say),
    /// given back as a `tensor<i8>` (0 or 1) beside the output: a second result of the
    /// dispatch, so no pass of its own is needed to compute it.
    pub fn dispatch_workgroups_flagged(&mut self, operands: &[Value], output: (TensorType, Vec<Value>), body: impl FnOnce(&mut Block, &[Value]) -> (Value, Value)) -> (Value, Value) {
        let (out, flag) = self.dispatch(operands, output, true, |k, args| {
            let (v, f) = body(k, args);
            (v, Some(f))
        });
        (out, flag.expect("a flagged dispatch has a flag"))
    }

    /// [`Block::dispatch_workgroups`] over `count` workgroups, one a part of a vector
    /// output (of `total` elements of `element`): `body` gets the operands and its
    /// workgroup's id (an `index` in [0, count)) and returns its part, a vector, which
    /// lands at id times the part's length. The parts are each a small tensor of their own
    /// (a batch's matrices, one a workgroup), where a loop over them inside one workgroup
    /// carries the whole output through every step, and IREE 3.13's bufferization of a
    /// large kernel nested that way did not finish.
    ///
    /// The body starts its part from the `tensor.empty` of `part` elements it is given:
    /// made with the same size as the store, which lets IREE bufferize it into the
    /// output's slice (a part of a size of the body's own was a stack allocation, refused).
    pub fn dispatch_parts(&mut self, operands: &[Value], (element, total): (ScalarType, &Value), (count, part): (&Value, &Value), body: impl FnOnce(&mut Block, &[Value], &Value, Value) -> Value) -> Value {
        let ty = TensorType::new(vec![None], element);
        let mut with_part = operands.to_vec();
        with_part.push(part.clone());
        self.dispatch_in(&with_part, (ty.clone(), vec![total.clone()]), false, Some(count), |k, args, id| {
            let (part, args) = args.split_last().expect("the part's size");
            let start = k.tensor_unwritten(element, part);
            (body(k, args, id.expect("a workgroup id"), start), None)
        })
        .0
    }

    fn dispatch(&mut self, operands: &[Value], output: (TensorType, Vec<Value>), flagged: bool, body: impl FnOnce(&mut Block, &[Value]) -> (Value, Option<Value>)) -> (Value, Option<Value>) {
        self.dispatch_in(operands, output, flagged, None, |k, args, _| body(k, args))
    }

    /// A dispatch of one workgroup, or of `count` that write parts of a vector output.
    fn dispatch_in(
        &mut self,
        operands: &[Value],
        output: (TensorType, Vec<Value>),
        flagged: bool,
        count: Option<&Value>,
        body: impl FnOnce(&mut Block, &[Value], Option<&Value>) -> (Value, Option<Value>),
    ) -> (Value, Option<Value>) {
        let (out_ty, out_sizes) = output;
        assert_eq!(out_ty.shape.iter().filter(|d| d.is_none()).count(), out_sizes.len(), "a dispatch result needs one size per dynamic dim");
        // Every dynamic size goes in as an index operand too: the body loads and stores
        // with sizes of its own.
        let mut outer = operands.to_vec();
        let mut outer_types = Vec::new();
        let mut operand_sizes = Vec::new();
        for v in operands {
            match &v.ty {
                Type::Tensor(t) => {
                    let sizes: Vec<Value> = (0..t.rank()).filter(|&a| t.shape[a].is_none()).map(|a| self.tensor_dim(v, a)).collect();
                    outer_types.push(if sizes.is_empty() { t.to_string() } else { format!("{t}{{{}}}", join_names(&sizes)) });
                    outer.extend(sizes.iter().cloned());
                    operand_sizes.push(sizes.len());
                }
                Type::Scalar(s) => {
                    outer_types.push(s.to_string());
                    operand_sizes.push(0);
                }
            }
        }
        let size_count: usize = operand_sizes.iter().sum();
        outer_types.extend(std::iter::repeat_n("index".to_string(), size_count + out_sizes.len()));
        outer.extend(out_sizes.iter().cloned());

        let mut inner = Block::new(self.indent + 1, self.shared.clone());
        let dispatch_tensor = |access: &str, t: &TensorType| format!("!iree_tensor_ext.dispatch.tensor<{access}:{t}>");
        let args: Vec<Value> = outer.iter().map(|v| Value { name: inner.fresh(), ty: v.ty.clone() }).collect();
        let out_arg = inner.fresh();
        let mut declared: Vec<String> = args
            .iter()
            .map(|a| match &a.ty {
                Type::Tensor(t) => format!("{}: {}", a.name, dispatch_tensor("readonly", t)),
                Type::Scalar(s) => format!("{}: {s}", a.name),
            })
            .collect();
        declared.push(format!("{out_arg}: {}", dispatch_tensor("writeonly", &out_ty)));
        let flag_ty = TensorType::new(vec![], ScalarType::I8);
        let flag_arg = inner.fresh();
        if flagged {
            declared.push(format!("{flag_arg}: {}", dispatch_tensor("writeonly", &flag_ty)));
        }
        let size_list = |t: &TensorType, sizes: &[Value]| {
            let mut dynamic = sizes.iter();
            t.shape.iter().map(|d| d.map_or_else(|| dynamic.next().expect("one size per dynamic dim").name.clone(), |n| n.to_string())).collect::<Vec<_>>().join(", ")
        };
        let access = |t: &TensorType, sizes: &[Value]| {
            let zeros = vec!["0"; t.rank()].join(", ");
            let ones = vec!["1"; t.rank()].join(", ");
            let dims = if sizes.is_empty() { String::new() } else { format!("{{{}}}", join_names(sizes)) };
            (format!("offsets = [{zeros}], sizes = [{}], strides = [{ones}]", size_list(t, sizes)), dims)
        };
        let mut next_size = operands.len();
        let mut loaded = Vec::with_capacity(operands.len());
        for (k, v) in operands.iter().enumerate() {
            match &v.ty {
                Type::Tensor(t) => {
                    let sizes = args[next_size..next_size + operand_sizes[k]].to_vec();
                    next_size += operand_sizes[k];
                    let (range, dims) = access(t, &sizes);
                    let from = dispatch_tensor("readonly", t);
                    loaded.push(inner.def(v.ty.clone(), format!("iree_tensor_ext.dispatch.tensor.load {}, {range} : {from}{dims} -> {t}", args[k].name)));
                }
                Type::Scalar(_) => loaded.push(args[k].clone()),
            }
        }
        let id = count.map(|_| inner.def(ScalarType::Index.into(), "flow.dispatch.workgroup.id[0] : index".to_string()));
        let (result, flag) = body(&mut inner, &loaded, id.as_ref());
        assert_eq!(result.tensor(), &out_ty, "a dispatch body returns its output's type");
        assert_eq!(flag.is_some(), flagged, "a flagged dispatch's body returns a flag, another's none");
        let (range, dims) = match &id {
            None => access(&out_ty, &args[next_size..]),
            Some(id) => {
                // The part's size: dispatch_parts' last operand.
                let part = loaded.last().expect("the part's size").clone();
                let at = inner.arith(Arith::MulI, id, &part);
                (format!("offsets = [{}], sizes = [{}], strides = [1]", at.name, part.name), format!("{{{}}}", join_names(&args[next_size..])))
            }
        };
        inner.line(&format!(
            "iree_tensor_ext.dispatch.tensor.store {}, {out_arg}, {range} : {out_ty} -> {}{dims}",
            result.name,
            dispatch_tensor("writeonly", &out_ty)
        ));
        if let Some(flag) = &flag {
            assert_eq!(flag.scalar(), ScalarType::I1, "a dispatch's flag is an i1");
            let byte = inner.cast(Cast::ExtUI, flag, ScalarType::I8);
            let empty = inner.tensor_empty(flag_ty.clone(), &[]);
            let t = inner.tensor_insert(&byte, &empty, &[]);
            inner.line(&format!(
                "iree_tensor_ext.dispatch.tensor.store {}, {flag_arg}, offsets = [], sizes = [], strides = [] : {flag_ty} -> {}",
                t.name,
                dispatch_tensor("writeonly", &flag_ty)
            ));
        }
        inner.line("flow.return");

        let name = self.fresh();
        let result_dims = if out_sizes.is_empty() { String::new() } else { format!("{{{}}}", join_names(&out_sizes)) };
        let result_types = if flagged { format!("({out_ty}{result_dims}, {flag_ty})") } else { format!("{out_ty}{result_dims}") };
        let head = if flagged { format!("{name}:2") } else { name.clone() };
        let workload = count.map_or_else(String::new, |c| format!("[{}]", c.name));
        self.line(&format!(
            "{head} = flow.dispatch.workgroups{workload}({}) : ({}) -> {result_types} =",
            join_names(&outer),
            outer_types.join(", ")
        ));
        self.line(&format!("    ({}) {{", declared.join(", ")));
        self.text.push_str(&inner.text);
        let one = self.fresh();
        match count {
            None => {
                self.line("} count() -> (index, index, index) {");
                self.line(&format!("  {one} = arith.constant 1 : index"));
                self.line(&format!("  flow.return {one}, {one}, {one} : index, index, index"));
            }
            Some(_) => {
                let x = self.fresh();
                self.line(&format!("}} count({x}: index) -> (index, index, index) {{"));
                self.line(&format!("  {one} = arith.constant 1 : index"));
                self.line(&format!("  flow.return {x}, {one}, {one} : index, index, index"));
            }
        }
        self.line("}");
        if flagged {
            (Value { name: format!("{name}#0"), ty: out_ty.into() }, Some(Value { name: format!("{name}#1"), ty: flag_ty.into() }))
        } else {
            (Value { name, ty: out_ty.into() }, None)
        }
    }
}

/// An offset or size of a slice op: a constant (static in the types) or an `index` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexArg {
    Const(i64),
    Dyn(Value),
}

impl IndexArg {
    fn text(&self) -> String {
        match self {
            IndexArg::Const(c) => c.to_string(),
            IndexArg::Dyn(v) => {
                assert_eq!(v.scalar(), ScalarType::Index, "a slice offset or size must be an index");
                v.name.clone()
            }
        }
    }

    fn static_size(&self) -> Option<u64> {
        match self {
            IndexArg::Const(c) => Some(*c as u64),
            IndexArg::Dyn(_) => None,
        }
    }
}

fn index_list(args: &[IndexArg]) -> String {
    args.iter().map(IndexArg::text).collect::<Vec<_>>().join(", ")
}

/// Slicing, reshaping and structured control flow for the indexing rules.
impl Block {
    /// `scf.if` yielding values of `types`: `then` and `otherwise` each return them.
    pub fn scf_if(
        &mut self,
        cond: &Value,
        types: &[ScalarType],
        then: impl FnOnce(&mut Block) -> Vec<Value>,
        otherwise: impl FnOnce(&mut Block) -> Vec<Value>,
    ) -> Vec<Value> {
        let types: Vec<Type> = types.iter().map(|&t| t.into()).collect();
        self.scf_if_values(cond, &types, then, otherwise)
    }

    /// `scf.if` yielding values of `types`, scalars or tensors (IREE runs a branch of
    /// tensors on the host, dispatching only the ops of the branch taken).
    pub fn scf_if_values(
        &mut self,
        cond: &Value,
        types: &[Type],
        then: impl FnOnce(&mut Block) -> Vec<Value>,
        otherwise: impl FnOnce(&mut Block) -> Vec<Value>,
    ) -> Vec<Value> {
        assert_eq!(cond.scalar(), ScalarType::I1, "scf.if condition must be i1");
        let type_list = types.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
        let mut branches = Vec::new();
        for f in [Box::new(then) as Box<dyn FnOnce(&mut Block) -> Vec<Value>>, Box::new(otherwise)] {
            let mut inner = Block::new(self.indent + 1, self.shared.clone());
            let ys = f(&mut inner);
            assert_eq!(ys.iter().map(|y| y.ty.clone()).collect::<Vec<_>>(), types, "scf.if branch yields other types");
            inner.line(&format!("scf.yield {} : {}", join_names(&ys), join_types(&ys)));
            branches.push(inner.text);
        }
        let name = self.fresh();
        let head = results_head(&name, types.len());
        self.line(&format!("{head}scf.if {} -> ({type_list}) {{", cond.name));
        self.text.push_str(&branches[0]);
        self.line("} else {");
        self.text.push_str(&branches[1]);
        self.line("}");
        results(&name, types.iter().cloned())
    }

    /// A block nested one level in this one, written before the op that holds it (see
    /// `scf_if_regions`): for branches whose contents are known only once both are written.
    pub fn region(&self) -> Block {
        Block::new(self.indent + 1, self.shared.clone())
    }

    /// `scf.if` over two regions written beforehand (`region`), each yielding its values,
    /// of `types` both.
    pub fn scf_if_regions(&mut self, cond: &Value, types: &[Type], then: (Block, &[Value]), otherwise: (Block, &[Value])) -> Vec<Value> {
        assert_eq!(cond.scalar(), ScalarType::I1, "scf.if condition must be i1");
        let mut texts = Vec::new();
        for (mut inner, ys) in [then, otherwise] {
            assert_eq!(ys.iter().map(|y| y.ty.clone()).collect::<Vec<_>>(), types, "scf.if branch yields other types");
            inner.line(&format!("scf.yield {} : {}", join_names(ys), join_types(ys)));
            texts.push(inner.text);
        }
        let type_list = types.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
        let name = self.fresh();
        self.line(&format!("{}scf.if {} -> ({type_list}) {{", results_head(&name, types.len()), cond.name));
        self.text.push_str(&texts[0]);
        self.line("} else {");
        self.text.push_str(&texts[1]);
        self.line("}");
        results(&name, types.iter().cloned())
    }

    /// `tensor.extract_slice` with unit strides; the result's dims are static where the
    /// size is a constant.
    pub fn tensor_extract_slice(&mut self, src: &Value, offsets: &[IndexArg], sizes: &[IndexArg]) -> Value {
        let ones = vec![1; src.tensor().rank()];
        self.tensor_extract_slice_strided(src, offsets, sizes, &ones)
    }

    /// `tensor.extract_slice` with positive constant strides.
    pub fn tensor_extract_slice_strided(&mut self, src: &Value, offsets: &[IndexArg], sizes: &[IndexArg], strides: &[i64]) -> Value {
        let t = src.tensor();
        assert!(offsets.len() == t.rank() && sizes.len() == t.rank(), "extract_slice needs an offset and a size per dim");
        assert!(strides.len() == t.rank() && strides.iter().all(|&s| s > 0), "extract_slice needs a positive stride per dim");
        let out = TensorType::new(sizes.iter().map(IndexArg::static_size).collect(), t.element);
        let strides = strides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
        self.def(
            out.clone().into(),
            format!("tensor.extract_slice {}[{}] [{}] [{strides}] : {} to {out}", src.name, index_list(offsets), index_list(sizes), src.ty),
        )
    }

    /// `tensor.insert_slice` of all of `src` into `dest` at `offsets` (unit strides); the
    /// sizes are `src`'s dims, static where its type is.
    pub fn tensor_insert_slice(&mut self, src: &Value, dest: &Value, offsets: &[IndexArg]) -> Value {
        let (s, d) = (src.tensor().clone(), dest.tensor());
        assert!(s.rank() == d.rank() && offsets.len() == d.rank(), "insert_slice of another rank");
        let sizes: Vec<IndexArg> = (0..s.rank()).map(|axis| self.dim_arg(src, axis)).collect();
        let strides = vec!["1"; s.rank()].join(", ");
        self.def(
            dest.ty.clone(),
            format!(
                "tensor.insert_slice {} into {}[{}] [{}] [{strides}] : {} into {}",
                src.name,
                dest.name,
                index_list(offsets),
                index_list(&sizes),
                src.ty,
                dest.ty
            ),
        )
    }

    /// `tensor.collapse_shape` merging each group of adjacent dims (given in order, covering
    /// every dim) into one; a merged dim is static where all its parts are.
    pub fn tensor_collapse(&mut self, t: &Value, groups: &[Vec<usize>]) -> Value {
        let ty = t.tensor();
        let shape = groups.iter().map(|g| g.iter().try_fold(1u64, |acc, &d| ty.shape[d].map(|n| acc * n))).collect();
        let out = TensorType::new(shape, ty.element);
        self.def(out.clone().into(), format!("tensor.collapse_shape {} [{}] : {} into {out}", t.name, reassociation(groups), t.ty))
    }

    /// `tensor.expand_shape` of `t` into `to`, each dim of `t` split into the group of
    /// `to`'s dims at the same position; `sizes` are `to`'s dims (their products must be
    /// `t`'s: the caller guarantees it).
    pub fn tensor_expand(&mut self, t: &Value, groups: &[Vec<usize>], to: TensorType, sizes: &[IndexArg]) -> Value {
        assert_eq!(to.rank(), sizes.len(), "expand_shape needs one size per dim");
        self.def(
            to.clone().into(),
            format!("tensor.expand_shape {} [{}] output_shape [{}] : {} into {to}", t.name, reassociation(groups), index_list(sizes), t.ty),
        )
    }

    /// The tensor's elements in C order as a vector (a 0-d tensor becomes a 1-element
    /// vector).
    pub fn tensor_flatten(&mut self, t: &Value) -> Value {
        let ty = t.tensor().clone();
        if ty.rank() == 0 {
            return self.tensor_expand(t, &[], TensorType::new(vec![Some(1)], ty.element), &[IndexArg::Const(1)]);
        }
        self.tensor_collapse(t, &[(0..ty.rank()).collect()])
    }

    /// The tensor with its first `k >= 1` dims collapsed into one (`tensor.collapse_shape`),
    /// the others kept.
    pub fn tensor_collapse_leading(&mut self, t: &Value, k: usize) -> Value {
        let rank = t.tensor().rank();
        assert!(k >= 1 && k <= rank, "collapse of {k} leading dims of a rank-{rank} tensor");
        let groups: Vec<Vec<usize>> = std::iter::once((0..k).collect()).chain((k..rank).map(|d| vec![d])).collect();
        self.tensor_collapse(t, &groups)
    }

    /// A vector as a tensor of type `to` whose dims are `sizes` (their product must be the
    /// vector's length: the caller guarantees it). To 0-d, the vector must be of static
    /// length 1.
    pub fn tensor_unflatten(&mut self, v: &Value, to: TensorType, sizes: &[IndexArg]) -> Value {
        assert_eq!(v.tensor().rank(), 1, "unflatten of a non-vector");
        if to.rank() == 0 {
            assert_eq!(v.tensor().shape[0], Some(1), "unflatten to 0-d needs a vector of static length 1");
            return self.tensor_collapse(v, &[]);
        }
        // expand_shape wants a vector of static length exactly where every dim of the
        // result is static ('incorrect number of dynamic sizes' otherwise); the caller
        // guarantees the length, so a cast says it.
        let length = to.shape.iter().try_fold(1u64, |n, d| d.map(|d| n * d));
        let v = if v.tensor().shape[0] != length { self.tensor_cast(v, TensorType::new(vec![length], v.tensor().element)) } else { v.clone() };
        self.tensor_expand(&v, &[(0..to.rank()).collect()], to, sizes)
    }

    /// `t`'s size along `axis` as an index argument: a constant where its type has it.
    pub fn dim_arg(&mut self, t: &Value, axis: usize) -> IndexArg {
        match t.tensor().shape[axis] {
            Some(n) => IndexArg::Const(n as i64),
            None => IndexArg::Dyn(self.tensor_dim(t, axis)),
        }
    }
}

/// A reshape's reassociation groups as MLIR spells them: `[0, 1], [2]`.
fn reassociation(groups: &[Vec<usize>]) -> String {
    groups
        .iter()
        .map(|g| format!("[{}]", g.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// IREE's `iree_linalg_ext` ops (issue 4): scans, which `linalg` lacks.
impl Block {
    /// `iree_linalg_ext.scan`, inclusive, of `input` along `dim` into `init` (`input`'s
    /// type); `acc` has `input`'s dims but `dim` and receives each line's last value.
    /// `combine(block, acc, x)` returns the next accumulated value. Returns the scan.
    pub fn linalg_ext_scan(
        &mut self,
        input: &Value,
        init: &Value,
        acc: &Value,
        dim: usize,
        combine: impl FnOnce(&mut Block, &Value, &Value) -> Value,
    ) -> Value {
        let elem = input.tensor().element;
        assert_eq!(init.ty, input.ty, "scan output of another type");
        assert_eq!(acc.tensor().rank() + 1, input.tensor().rank(), "scan accumulator of the wrong rank");
        let mut inner = Block::new(self.indent + 1, self.shared.clone());
        let a = Value { name: inner.fresh(), ty: elem.into() };
        let x = Value { name: inner.fresh(), ty: elem.into() };
        let r = combine(&mut inner, &a, &x);
        assert_eq!(r.scalar(), elem, "scan combiner yields another type");
        inner.line(&format!("iree_linalg_ext.yield {} : {elem}", r.name));
        let name = self.fresh();
        self.line(&format!(
            "{name}:2 = iree_linalg_ext.scan dimension({dim}) inclusive(true) ins({} : {}) outs({}, {} : {}, {}) {{",
            input.name, input.ty, init.name, acc.name, init.ty, acc.ty
        ));
        self.line(&format!("^bb0({}: {elem}, {}: {elem}):", a.name, x.name));
        self.text.push_str(&inner.text);
        self.line(&format!("}} -> {}, {}", init.ty, acc.ty));
        Value { name: format!("{name}#0"), ty: init.ty.clone() }
    }
}

/// Tiled data layouts (`linalg.pack` / `linalg.unpack`), for contractions on tiles.
impl Block {
    /// `linalg.pack` of `src` into `dest`: the dims `inner_dims_pos` of `src` are cut into
    /// tiles of `inner_tiles` (trailing dims of `dest`, in that order), partial tiles padded
    /// with `pad`; `outer_dims_perm` orders the tile-count dims.
    pub fn linalg_pack(&mut self, src: &Value, dest: &Value, pad: &Value, outer_dims_perm: &[usize], inner_dims_pos: &[usize], inner_tiles: &[u64]) -> Value {
        let (s, d) = (src.tensor(), dest.tensor());
        assert_eq!(pad.scalar(), s.element, "pack padding of another element type");
        assert!(inner_dims_pos.len() == inner_tiles.len() && outer_dims_perm.len() == s.rank(), "pack needs a tile per inner dim and a permutation of all dims");
        assert!(d.rank() == s.rank() + inner_tiles.len() && d.shape[s.rank()..].iter().zip(inner_tiles).all(|(&n, &t)| n == Some(t)), "pack destination does not end in the tiles");
        self.def(
            dest.ty.clone(),
            format!(
                "linalg.pack {} padding_value({} : {}) outer_dims_perm = [{}] inner_dims_pos = [{}] inner_tiles = [{}] into {} : {} -> {}",
                src.name,
                pad.name,
                pad.ty,
                list(outer_dims_perm),
                list(inner_dims_pos),
                list(inner_tiles),
                dest.name,
                src.ty,
                dest.ty
            ),
        )
    }

    /// `linalg.unpack` of `src` (tiles of `inner_tiles` over `dest`'s dims `inner_dims_pos`,
    /// tile-count dims in `dest`'s order) into `dest`, dropping the padding.
    pub fn linalg_unpack(&mut self, src: &Value, dest: &Value, inner_dims_pos: &[usize], inner_tiles: &[u64]) -> Value {
        let (s, d) = (src.tensor(), dest.tensor());
        assert!(inner_dims_pos.len() == inner_tiles.len() && s.rank() == d.rank() + inner_tiles.len(), "unpack needs a tile per inner dim");
        assert!(s.shape[d.rank()..].iter().zip(inner_tiles).all(|(&n, &t)| n == Some(t)), "unpack source does not end in the tiles");
        self.def(
            dest.ty.clone(),
            format!(
                "linalg.unpack {} inner_dims_pos = [{}] inner_tiles = [{}] into {} : {} -> {}",
                src.name,
                list(inner_dims_pos),
                list(inner_tiles),
                dest.name,
                src.ty,
                dest.ty
            ),
        )
    }
}

fn list<T: ToString>(items: &[T]) -> String {
    items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}
