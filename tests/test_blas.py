"""BLAS and Blockwise: Dot at every rank pt.dot accepts, the graphs the C backend turns
into Gemm/Gemv/Ger/Dot22Scalar, BatchedDot, Blockwise{Dot} (pt.matmul), outer,
tensordot and einsum; with gradients. Compared with the C backend on the same inputs."""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import pytensor_mlir
from pytensor.compile.mode import Mode
from pytensor.tensor.blas import BatchedDot, Dot22, Dot22Scalar, Gemm, Gemv, Ger
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.einsum import Einsum

from conftest import C, MLIR, assert_same, check, compile_both, raises_like

# batched_dot is deprecated in favour of matmul; it is still an Op a graph may hold.
warnings.filterwarnings("ignore", message="batched_dot is deprecated", category=FutureWarning)

# The MLIR mode without the rewrites that turn a batched matmul into BatchedDot or into a
# core Dot with reshapes: the Blockwise{Dot} itself reaches the backend.
BLOCKWISE = MLIR.excluding(
    "specialize_matmul_to_batched_dot",
    "local_batched_matmul_to_core_matmul",
    "local_batched_matmul_to_core_matmul_with_reshape",
)

FLOATS = ["float64", "float32"]


def tol(dtype):
    """Sums in another order than OpenBLAS's: a few ulps of the largest partial sum."""
    return dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)


def values(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.normal(size=shape).astype(dtype)
    return rng.integers(-9, 10, size=shape).astype(dtype)


# Ops some graphs below need that another branch lowers (tensor-ops: CheckAndRaise, the
# general OpFromGraph, ARange). Until it is merged those graphs must fail loudly at
# compile time, naming only these Ops; once it is, they are compared with C like the rest.
PENDING_ELSEWHERE = ("Assert", "CheckAndRaise", "OpFromGraph", "ARange")


def check_or_refused(inputs, outputs, vals, **kwargs):
    """`check`, or a NotImplementedError listing only Ops of PENDING_ELSEWHERE."""
    try:
        f = pytensor.function(inputs, outputs, mode=MLIR)
    except NotImplementedError as e:
        lines = [ln.strip() for ln in str(e).splitlines()[1:] if ln.strip()]
        assert lines, str(e)
        for ln in lines:
            assert ln.startswith(PENDING_ELSEWHERE), f"refused an Op this branch should lower: {ln}"
        return None
    return check(inputs, outputs, vals, **kwargs)


def op_types(f):
    return [type(n.op) for n in f.maker.fgraph.toposort()]


def ops_of(f):
    """The Ops of a compiled function's graph, and of the core ops of its Blockwises."""
    out = set()
    for n in f.maker.fgraph.toposort():
        out.add(type(n.op))
        if isinstance(n.op, Blockwise):
            out.add(type(n.op.core_op))
    return out


# --------------------------------------------------------------------------- Dot


# PyTensor's Dot is 2-d by 2-d; pt.dot builds every other rank pair around it
# (ExpandDims/Squeeze, a Mul for 0-d, tensordot's reshapes for rank > 2).
RANKS = [(0, 1), (1, 0), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2), (2, 3), (3, 3), (1, 3), (4, 2)]


def dot_shapes(ra, rb, k=4):
    """Shapes for pt.dot of ranks ra, rb with inner size k: numpy's dot sums the last
    axis of a against b's only axis or its second-to-last."""
    a = (3, 2, 5)[: ra - 1] + (k,) if ra else ()
    b = () if rb == 0 else (k,) if rb == 1 else (2, 3)[: rb - 2] + (k, 6)
    return a, b


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64"])
def test_dot_ranks(dtype):
    # Every rank combination in one graph (one compile per dtype), each dot on its own inputs.
    inputs, outputs, vals = [], [], []
    for ra, rb in RANKS:
        sa, sb = dot_shapes(ra, rb)
        rng = np.random.default_rng(ra * 10 + rb)
        a = pt.tensor(f"a_{ra}x{rb}", dtype=dtype, shape=(None,) * ra)
        b = pt.tensor(f"b_{ra}x{rb}", dtype=dtype, shape=(None,) * rb)
        inputs += [a, b]
        outputs.append(pt.dot(a, b))
        vals += [values(rng, sa, dtype), values(rng, sb, dtype)]
    f, ref = compile_both(inputs, outputs)
    for (ra, rb), got, want in zip(RANKS, f(*vals), ref(*vals)):
        assert_same(got, want, err_msg=f"dot of ranks {ra}x{rb}", **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_dot_static_shapes(dtype):
    rng = np.random.default_rng(5)
    a = pt.tensor("a", dtype=dtype, shape=(3, 4))
    b = pt.tensor("b", dtype=dtype, shape=(4, None))
    v = pt.tensor("v", dtype=dtype, shape=(4,))
    t = pt.tensor("t", dtype=dtype, shape=(2, 3, 4))
    check(
        [a, b, v, t],
        [pt.dot(a, b), pt.dot(a, v), pt.dot(v, b), pt.dot(t, b), pt.dot(v, v)],
        [values(rng, s, dtype) for s in [(3, 4), (4, 5), (4,), (2, 3, 4)]],
        **tol(dtype),
    )


@pytest.mark.parametrize(
    "sa, sb",
    [((0, 4), (4, 2)), ((3, 0), (0, 2)), ((3, 4), (4, 0)), ((0,), (0,)), ((2, 0, 3), (3, 4)), ((2, 3, 0), (0, 5))],
    ids=["rows", "inner", "cols", "vv-inner", "3d-batch", "3d-inner"],
)
def test_dot_empty_dims(sa, sb):
    a = pt.tensor("a", shape=(None,) * len(sa))
    b = pt.tensor("b", shape=(None,) * len(sb))
    rng = np.random.default_rng(6)
    check([a, b], pt.dot(a, b), [values(rng, sa, "float64"), values(rng, sb, "float64")])


def test_dot_mixed_dtypes():
    rng = np.random.default_rng(7)
    i8 = pt.tensor("i8", dtype="int8", shape=(None, None))
    f32 = pt.tensor("f32", dtype="float32", shape=(None, None))
    u16 = pt.tensor("u16", dtype="uint16", shape=(None,))
    i64 = pt.tensor("i64", dtype="int64", shape=(None, None))
    check(
        [i8, f32, u16, i64],
        [pt.dot(i8, f32), pt.dot(i64, u16), pt.dot(u16, f32)],
        [values(rng, (3, 4), "int8"), values(rng, (4, 2), "float32"), rng.integers(0, 300, 4).astype("uint16"),
         values(rng, (3, 4), "int64")],
        rtol=1e-5,
        atol=1e-3,  # float32 sums of products of hundreds, in another order than OpenBLAS's
    )


@pytest.mark.parametrize(
    "sa, sb",
    [((2, 3), (4, 2)), ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 2)), ((2, 2, 3), (4, 2))],
    ids=["mm", "vv", "mv", "vm", "3d"],
)
def test_dot_inner_mismatch_raises_like_c(sa, sb):
    a = pt.tensor("a", shape=(None,) * len(sa))
    b = pt.tensor("b", shape=(None,) * len(sb))
    f, ref = compile_both([a, b], pt.dot(a, b))
    got, _ = raises_like(f, ref, [np.ones(sa), np.ones(sb)])
    assert isinstance(got, ValueError)


def host_packs_matmuls():
    """Whether this host's CPU gets the packed (linalg.mmt4d) matmul: x86-64 with AVX2 and FMA."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return False
    return "avx2" in flags and "fma" in flags


# (a's shape, b's shape): over the packed kernel's least work (M*K*N >= 2**27; its other
# limits are checked on the MLIR in blas.rs), tiles partly filled; and a small one.
PACKED_CASES = [((517, 515), (515, 513)), ((40, 2048), (2048, 1700)), ((100, 100), (100, 100))]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_packed_matmul(dtype, static):
    # One graph of every case (one compile), against C; nan, inf and -0 in the packed one.
    rng = np.random.default_rng(11)
    inputs, outputs, vals = [], [], []
    for i, (sa, sb) in enumerate(PACKED_CASES):
        a = pt.tensor(f"a{i}", dtype=dtype, shape=sa if static else (None, None))
        b = pt.tensor(f"b{i}", dtype=dtype, shape=sb if static else (None, None))
        inputs += [a, b]
        outputs.append(pt.dot(a, b))
        vals += [values(rng, sa, dtype), values(rng, sb, dtype)]
    vals[0][3, ::97] = np.inf
    vals[0][5, 7] = -np.inf
    vals[0][8, 9] = np.nan
    vals[0][10] = -0.0
    vals[1][::89, 20] = np.nan
    vals[1][:, 30] = -0.0
    f, ref = compile_both(inputs, outputs)
    mlir = pytensor_mlir.get_mlir(f)
    if host_packs_matmuls():
        # Dynamic shapes choose at run time; static ones at compile time.
        assert mlir.count("linalg.mmt4d") == (2 if static else 3), mlir
        assert ("scf.if" in mlir) != static
    eps = np.finfo(dtype).eps
    for i, (got, want) in enumerate(zip(f(*vals), ref(*vals))):
        a, b = vals[2 * i], vals[2 * i + 1]
        # Sums of K products in another order than OpenBLAS's: within K ulps of |a| @ |b|.
        with np.errstate(invalid="ignore"):
            bound = a.shape[1] * eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
        finite = np.isfinite(want)
        assert_same(np.where(finite, 0, got), np.where(finite, 0, want), err_msg=f"case {i}")
        assert (np.abs(got[finite] - want[finite]) <= bound[finite]).all(), f"case {i}"
        zeros = (got == 0) & (want == 0)
        assert (np.signbit(got[zeros]) == np.signbit(want[zeros])).all(), f"case {i}: signed zeros"


# --------------------------------------------------------------------------- Gemm family


def blas_graphs(dtype):
    x, y, z = (pt.tensor(n, dtype=dtype, shape=(None, None)) for n in "xyz")
    v, w = (pt.tensor(n, dtype=dtype, shape=(None,)) for n in "vw")
    a, b = (pt.tensor(n, dtype=dtype, shape=()) for n in "ab")
    return {
        # name: (inputs, output, the Op the C backend's BLAS rewrites make of it)
        "gemm": ([x, y, z, a, b], b * z + a * pt.dot(x, y), Gemm),
        "dot22scalar": ([x, y, a], a * pt.dot(x, y), Dot22Scalar),
        "dot22": ([x, y], pt.dot(x, y), Dot22),
        "gemv": ([x, v, w, a, b], b * w + a * pt.dot(x, v), Gemv),
        "ger": ([z, v, w, a], z + a * pt.outer(v, w), Ger),
    }


def blas_values(rng, name, dtype, m=3, k=4, n=5):
    shapes = {
        "gemm": [(m, k), (k, n), (m, n), (), ()],
        "dot22scalar": [(m, k), (k, n), ()],
        "dot22": [(m, k), (k, n)],
        "gemv": [(m, k), (k,), (m,), (), ()],
        "ger": [(m, n), (m,), (n,), ()],
    }[name]
    return [values(rng, s, dtype) for s in shapes]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["gemm", "dot22scalar", "dot22", "gemv", "ger"])
def test_graphs_c_makes_blas_ops_of(name, dtype):
    """The MLIR mode excludes the BlasOpt rewrites (MLIRLinker.incompatible_rewrites):
    what the C backend turns into Gemm & co stays a Dot and an elementwise Composite."""
    inputs, out, blas_op = blas_graphs(dtype)[name]
    rng = np.random.default_rng(8)
    f, ref = compile_both(inputs, out)
    assert blas_op in op_types(ref), f"the C backend no longer makes {blas_op.__name__} of this graph"
    assert not {Gemm, Gemv, Ger, Dot22, Dot22Scalar} & set(op_types(f))
    for shapes_scale in [(3, 4, 5), (0, 4, 5), (3, 0, 5), (1, 1, 1)]:
        vals = blas_values(rng, name, dtype, *shapes_scale)
        assert_same(f(*vals), ref(*vals), **tol(dtype), err_msg=f"{name} {shapes_scale}")


@pytest.mark.parametrize("name", ["gemm", "gemv"])
def test_beta_zero_keeps_nan_of_z_like_numpy(name):
    """`0 * z + a * dot(x, y)` with nan in z is nan, as numpy and PyTensor's py linker
    compute it. The C backend's Gemm/Gemv follow BLAS instead (beta = 0: z is not read),
    a difference of that backend's rewrite, not of the graph."""
    inputs, out, _ = blas_graphs("float64")[name]
    rng = np.random.default_rng(9)
    vals = blas_values(rng, name, "float64")
    vals[2][...] = np.nan
    vals[-1] = np.float64(0.0)  # b
    x, y, z, a, b = vals
    want = b * z + a * np.dot(x, y)
    f = pytensor.function(inputs, out, mode=MLIR)
    py = pytensor.function(inputs, out, mode=Mode(linker="py", optimizer="fast_compile"))
    assert np.isnan(want).all()
    assert_same(f(*vals), want)
    assert_same(py(*vals), want)


def test_gemm_shape_mismatch_raises_valueerror():
    inputs, out, _ = blas_graphs("float64")["gemm"]
    f, ref = compile_both(inputs, out)
    bad = [np.ones((3, 4)), np.ones((4, 5)), np.ones((3, 6)), 1.0, 1.0]
    got, _ = raises_like(f, ref, bad)
    assert isinstance(got, ValueError)


# --------------------------------------------------------------------------- BatchedDot


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64"])
def test_matmul_of_equal_batches_is_batched_dot(dtype):
    rng = np.random.default_rng(10)
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    y = pt.tensor("y", dtype=dtype, shape=(None, None, None))
    f = check([x, y], pt.matmul(x, y), [values(rng, (4, 3, 5), dtype), values(rng, (4, 5, 2), dtype)], **tol(dtype))
    assert BatchedDot in op_types(f)


@pytest.mark.parametrize("dtype", FLOATS)
def test_batched_dot_static_dynamic_and_empty(dtype):
    rng = np.random.default_rng(11)
    x = pt.tensor("x", dtype=dtype, shape=(4, None, 5))
    y = pt.tensor("y", dtype=dtype, shape=(None, 5, None))
    z = pt.tensor("z", dtype=dtype, shape=(None, None, None))
    f, ref = compile_both([x, y, z], [pt.batched_dot(x, y), pt.batched_dot(z, z.transpose(0, 2, 1))])
    assert BatchedDot in op_types(f)
    for m, n, b in [(3, 2, 6), (0, 2, 0), (3, 0, 1)]:
        vals = [values(rng, (4, m, 5), dtype), values(rng, (4, 5, n), dtype), values(rng, (b, m, 5), dtype)]
        for i, (g, w) in enumerate(zip(f(*vals), ref(*vals))):
            assert_same(g, w, **tol(dtype), err_msg=f"output {i}, m={m} n={n} b={b}")
    # The sum over an empty axis.
    assert_same(f(values(rng, (4, 2, 5), dtype), values(rng, (4, 5, 3), dtype), values(rng, (2, 3, 0), dtype))[1],
                np.zeros((2, 3, 3), dtype))


@pytest.mark.parametrize("bad", ["batch", "inner"])
def test_batched_dot_mismatch_raises_like_c(bad):
    x, y = pt.tensor3("x"), pt.tensor3("y")
    f, ref = compile_both([x, y], pt.batched_dot(x, y))
    assert BatchedDot in op_types(f)
    sx, sy = ((4, 3, 5), (3, 5, 2)) if bad == "batch" else ((4, 3, 5), (4, 6, 2))
    mismatch_raises(f, ref, [np.ones(sx), np.ones(sy)])


def mismatch_raises(f, ref, vals):
    """Both raise; ours ValueError. The C backend's BatchedDot raises ValueError from its
    C code, but TypeError from its Python `perform` for unequal batch sizes (used where
    PyTensor links no BLAS, as here): ValueError is what numpy's matmul and that C code
    raise."""
    with pytest.raises((ValueError, TypeError)):
        ref(*vals)
    with pytest.raises(ValueError, match="shape mismatch"):
        f(*vals)


# --------------------------------------------------------------------------- Blockwise


# (x shape type, y shape type, x value shape, y value shape): batch dims of static size 1
# broadcast; ranks may differ (batch dims align from the right).
MATMULS = [
    ((None, None, None), (None, None, None), (4, 3, 5), (4, 5, 2)),
    ((None, 1, None, None), (1, None, None, None), (3, 1, 4, 5), (1, 2, 5, 6)),
    ((None, None, None), (None, None), (4, 3, 5), (5, 2)),
    ((None, None), (None, None, None, None), (3, 5), (2, 4, 5, 6)),
    ((1, None, None), (None, None, None), (1, 3, 5), (4, 5, 2)),
    ((2, 3, None, 5), (2, None, 5, 4), (2, 3, 6, 5), (2, 3, 5, 4)),
    ((None, None, None), (None, None, None), (0, 3, 5), (0, 5, 2)),
    ((None, None, None), (None, None, None), (4, 3, 0), (4, 0, 2)),
    ((None, 1, None, None), (None, None, None, None), (2, 1, 0, 3), (2, 5, 3, 4)),
]


# Every dtype for the cases with elements; the empty ones (no arithmetic to get wrong in
# another dtype) in float64 only: each case compiles two functions.
BLOCKWISE_MATMULS = [(d, c) for c in MATMULS for d in ("float64", "float32", "int64") if d == "float64" or 0 not in c[2] + c[3]]


@pytest.mark.parametrize("dtype, case", BLOCKWISE_MATMULS, ids=[f"{c[2]}@{c[3]}-{d}" for d, c in BLOCKWISE_MATMULS])
def test_blockwise_matmul(dtype, case):
    tx, ty, sx, sy = case
    rng = np.random.default_rng(12)
    x = pt.tensor("x", dtype=dtype, shape=tx)
    y = pt.tensor("y", dtype=dtype, shape=ty)
    vals = [values(rng, sx, dtype), values(rng, sy, dtype)]
    f = check([x, y], pt.matmul(x, y), vals, mode=BLOCKWISE, **tol(dtype))
    assert any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.toposort())
    # The same graph as the MLIR mode rewrites it (BatchedDot, or a Dot between reshapes;
    # where a batch dim moves into the core dot, PyTensor asserts the broadcast).
    check_or_refused([x, y], pt.matmul(x, y), vals, **tol(dtype))


def test_blockwise_matmul_mixed_dtypes():
    rng = np.random.default_rng(13)
    x = pt.tensor("x", dtype="int16", shape=(None, None, None))
    y = pt.tensor("y", dtype="float32", shape=(1, None, None))
    check([x, y], pt.matmul(x, y), [values(rng, (3, 2, 4), "int16"), values(rng, (1, 4, 5), "float32")],
          mode=BLOCKWISE, rtol=1e-6)


@pytest.mark.parametrize(
    "sx, sy",
    [((4, 3, 5), (3, 5, 2)), ((4, 3, 5), (4, 6, 2)), ((4, 3, 5), (1, 5, 2))],
    ids=["batch", "inner", "runtime-1-does-not-broadcast"],
)
def test_blockwise_matmul_mismatch_raises_valueerror(sx, sy):
    """Batch dims of run-time size 1 do not broadcast (PyTensor's rule), like any other
    unequal sizes."""
    x, y = pt.tensor3("x"), pt.tensor3("y")
    f = pytensor.function([x, y], pt.matmul(x, y), mode=BLOCKWISE)
    ref = pytensor.function([x, y], pt.matmul(x, y), mode=C)
    mismatch_raises(f, ref, [np.ones(sx), np.ones(sy)])


def test_blockwise_of_an_op_without_a_rule_fails_loudly():
    s = pt.tensor("s", shape=(None, 3, 3))
    with pytest.raises(NotImplementedError, match=r"Blockwise\{core_op=Eig(.|\n)*Eig: no lowering rule"):
        pytensor.function([s], pt.linalg.eig(s)[0].real, mode=MLIR)


# --------------------------------------------------------------------------- outer, tensordot, einsum


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_outer(dtype):
    rng = np.random.default_rng(14)
    v = pt.tensor("v", dtype=dtype, shape=(None,))
    w = pt.tensor("w", dtype=dtype, shape=(None,))
    f, ref = compile_both([v, w], pt.outer(v, w))
    for n, m in [(3, 4), (0, 4), (3, 0)]:
        vals = [values(rng, (n,), dtype), values(rng, (m,), dtype)]
        assert_same(f(*vals), ref(*vals), **tol(dtype))


TENSORDOTS = [
    ((3, 4, 5), (5, 6), 1),
    ((3, 4, 5), (4, 5, 6), 2),
    ((3, 4, 5), (4, 3, 2), [[0, 1], [1, 0]]),
    ((3, 4), (4, 3), [[0, 1], [1, 0]]),
    ((2, 3, 4), (5, 2), [[0], [1]]),
    ((3, 4), (5, 6), 0),
    ((2, 0, 4), (4, 3), 1),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", TENSORDOTS, ids=[f"{c[0]}.{c[1]}.{c[2]}" for c in TENSORDOTS])
def test_tensordot(dtype, case):
    sa, sb, axes = case
    rng = np.random.default_rng(15)
    a = pt.tensor("a", dtype=dtype, shape=(None,) * len(sa))
    b = pt.tensor("b", dtype=dtype, shape=(None,) * len(sb))
    # Summing two axes at once, PyTensor asserts that their sizes agree (an Assert).
    check_or_refused([a, b], pt.tensordot(a, b, axes=axes), [values(rng, sa, dtype), values(rng, sb, dtype)],
                     **tol(dtype))


def test_tensordot_static_shapes_and_mismatch():
    rng = np.random.default_rng(16)
    a = pt.tensor("a", shape=(3, 4, 5))
    b = pt.tensor("b", shape=(5, None))
    check([a, b], pt.tensordot(a, b, axes=1), [values(rng, (3, 4, 5), "float64"), values(rng, (5, 2), "float64")])
    c, d = pt.tensor3("c"), pt.matrix("d")
    f, ref = compile_both([c, d], pt.tensordot(c, d, axes=1))
    got, _ = raises_like(f, ref, [np.ones((3, 4, 5)), np.ones((6, 2))])
    assert isinstance(got, ValueError)


SIZES = dict(a=2, b=3, i=4, j=5, k=6, l=2)
# PyTensor 3.0.7 builds these of Dot/BatchedDot with reshapes and transposes.
EINSUMS = ["ij,jk->ik", "i,i->", "i,j->ij", "bij,bjk->bik", "bij,jk->bik", "ij->ji", "ij,ij->ij", "bij->b",
           "ij,j->i", "abij,abjk->abik", "ij,kj->ik", "i,ij,jk->k", "ij,jk,kl->il", "bij,bjk,bkl->bil"]
# Specs that sum two axes in one contraction carry an Assert of equal reduced sizes;
# diagonals (`ii->i`, traces) an ARange.
EINSUMS_PENDING = ["ij,ij->", "ijk,jkl->il", "ii->i", "ii->", "bii->bi"]


# float32 with dynamic shapes only: static shapes change the contraction order PyTensor
# picks, not what the dtype does to it.
EINSUM_CASES = [(spec, dtype, static) for static in (False, True) for spec in EINSUMS for dtype in FLOATS if not (static and dtype == "float32")]


@pytest.mark.parametrize("spec, dtype, static", EINSUM_CASES, ids=[f"{'static' if st else 'dynamic'}-{s}-{d}" for s, d, st in EINSUM_CASES])
def test_einsum(spec, dtype, static):
    """Einsum is an OpFromGraph: PyTensor inlines it once it has chosen a contraction
    order (which needs static shapes); our own rewrite (pytensor_mlir.rewrites) inlines
    the rest, so no Einsum reaches the backend."""
    rng = np.random.default_rng(17)
    terms = spec.split("->")[0].split(",")
    shapes = [tuple(SIZES[c] for c in t) for t in terms]
    ins = [pt.tensor(f"x{n}", dtype=dtype, shape=s if static else (None,) * len(s)) for n, s in enumerate(shapes)]
    vals = [values(rng, s, dtype) for s in shapes]
    f = check(ins, pt.einsum(spec, *ins), vals, **tol(dtype))
    assert Einsum not in op_types(f)
    assert_same(f(*vals), np.einsum(spec, *vals), **tol(dtype))


@pytest.mark.parametrize("spec", EINSUMS_PENDING)
def test_einsum_needing_ops_of_another_branch(spec):
    rng = np.random.default_rng(21)
    terms = spec.split("->")[0].split(",")
    shapes = [tuple(SIZES[c] for c in t) for t in terms]
    ins = [pt.tensor(f"x{n}", shape=(None,) * len(s)) for n, s in enumerate(shapes)]
    check_or_refused(ins, pt.einsum(spec, *ins), [values(rng, s, "float64") for s in shapes])


def test_einsum_shape_mismatch_raises_valueerror():
    x, y = pt.matrix("x"), pt.matrix("y")
    f, ref = compile_both([x, y], pt.einsum("ij,jk->ik", x, y))
    got, _ = raises_like(f, ref, [np.ones((2, 3)), np.ones((4, 5))])
    assert isinstance(got, ValueError)


# --------------------------------------------------------------------------- gradients


def grads(cost, wrt):
    return pytensor.grad(cost, wrt)


# The gradients' reference: PyTensor's Python linker (numpy's BLAS), which compiles no C:
# on a fresh compile cache the C backend took longer to compile a gradient graph of the
# dot family than IREE did (12.9 s against 9.3 s).
PY = Mode(linker="py", optimizer="fast_run")


@pytest.mark.parametrize("dtype", FLOATS)
def test_gradients_through_dot_family(dtype):
    rng = np.random.default_rng(18)
    x, y, z = (pt.tensor(n, dtype=dtype, shape=(None, None)) for n in "xyz")
    v, w = (pt.tensor(n, dtype=dtype, shape=(None,)) for n in "vw")
    a = pt.tensor("a", dtype=dtype, shape=())
    t = pt.tensor("t", dtype=dtype, shape=(None, None, None))
    cost = (
        pt.sum(pt.tanh(pt.dot(x, y)))
        + pt.sum((a * pt.dot(x, y) + 2 * z) ** 2)  # a Gemm in C
        + pt.sum(pt.dot(x, v) ** 2) + pt.sum(pt.dot(y, w))  # Gemv
        + pt.sum(pt.tanh(z + pt.outer(pt.dot(x, v), w)))  # Ger
        + pt.sum(pt.dot(t, y) ** 2)  # 3-d by 2-d
        + pt.dot(v, v)
    )
    wrt = [x, y, z, v, w, a, t]
    vals = [values(rng, s, dtype) for s in [(3, 4), (4, 5), (3, 5), (4,), (5,), (), (2, 3, 4)]]
    check(wrt, grads(cost, wrt), vals, reference=PY, **tol(dtype))


# float64 only (float32 in the dot family's gradient and in the forward tests): each
# compiles gradient graphs of several matmuls.
@pytest.mark.parametrize("dtype", ["float64"])
def test_gradients_through_batched_and_blockwise_matmul(dtype):
    rng = np.random.default_rng(19)
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    y = pt.tensor("y", dtype=dtype, shape=(None, None, None))
    b = pt.tensor("b", dtype=dtype, shape=(1, None, None))
    cost = pt.sum(pt.exp(pt.matmul(x, y) / 10)) + pt.sum(pt.matmul(b, y) ** 2) + pt.sum(pt.batched_dot(x, y))
    wrt = [x, y, b]
    vals = [values(rng, (4, 3, 5), dtype), values(rng, (4, 5, 2), dtype), values(rng, (1, 3, 5), dtype)]
    got = check(wrt, grads(cost, wrt), vals, reference=PY, **tol(dtype))
    assert BatchedDot in ops_of(got)
    f = check(wrt, grads(cost, wrt), vals, mode=BLOCKWISE, reference=PY, **tol(dtype))
    assert any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.toposort())


# float64 only (float32 in the dot family's gradient and in the forward tests): each
# compiles gradient graphs of several matmuls.
@pytest.mark.parametrize("dtype", ["float64"])
def test_gradients_through_tensordot_and_einsum(dtype):
    rng = np.random.default_rng(20)
    a = pt.tensor("a", dtype=dtype, shape=(None, None, None))
    b = pt.tensor("b", dtype=dtype, shape=(None, None))
    c = pt.tensor("c", dtype=dtype, shape=(None, None))
    wrt = [a, b, c]
    vals = [values(rng, s, dtype) for s in [(2, 3, 4), (4, 5), (5, 2)]]
    cost = pt.sum(pt.tensordot(a, b, axes=1) ** 2) + pt.sum(pt.tanh(pt.tensordot(a, pt.dot(b, c), axes=[[2], [0]])))
    check(wrt, grads(cost, wrt), vals, reference=PY, **tol(dtype))
    # Einsum's gradient is an OpFromGraph of its own (OpFromGraph.L_op), which PyTensor
    # does not inline.
    cost = pt.sum(pt.exp(pt.einsum("bij,jk->bik", a, b) / 10)) + pt.sum(pt.einsum("bij,jk,kl->bil", a, b, c))
    check_or_refused(wrt, grads(cost, wrt), vals, **tol(dtype))
