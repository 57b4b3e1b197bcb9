"""MLIR_VULKAN end to end on the machine's Vulkan device (Mesa's lavapipe in CI): the CPU
tests' graphs in float32, float64 and int64 where the device reports them, dtype
refusals before compilation, transfers, subnormals and leaks.

Every test here needs a Vulkan device and is skipped, with the reason, only when there is
none (no Vulkan loader, or no device: `apt-get install mesa-vulkan-drivers libvulkan1`)."""

import gc

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from conftest import SUBNORMAL_CASES, assert_same, assert_subnormals_kept, check, compile_both, raises_like, run_in_threads, vulkan_devices
from test_eigen import assert_svd
from test_leak import grown_over

import pytensor_mlir
from pytensor_mlir import _core


DEVICES, WHY_NONE = vulkan_devices()
pytestmark = pytest.mark.skipif(
    not DEVICES,
    reason=f"no Vulkan device ({WHY_NONE or 'the Vulkan driver lists none'}); "
    "install mesa-vulkan-drivers and libvulkan1 for lavapipe",
)

VULKAN = pytensor_mlir.MLIR_VULKAN
F32 = "float32"


def vcheck(inputs, outputs, values, **kwargs):
    return check(inputs, outputs, values, mode=VULKAN, **kwargs)


def vec(name, dtype=F32):
    return pt.vector(name, dtype=dtype)


def test_mode_reports_its_device():
    x = vec("x")
    f = pytensor.function([x], x * 2, mode="MLIR_VULKAN")
    description = pytensor_mlir.device_description(f)
    name, path = DEVICES[0]
    assert description.startswith("vulkan: ") and name in description and path in description
    assert "--iree-hal-target-device=vulkan" in pytensor_mlir.get_flags(f)
    assert_same(f(np.arange(4, dtype=F32)), np.arange(4, dtype=F32) * 2)


def test_device_chosen_by_ordinal_and_by_path():
    x = vec("x")
    name, path = DEVICES[0]
    for selector in (0, path):
        f = pytensor.function([x], x + 1, mode=pytensor_mlir.mlir_mode("vulkan", device=selector))
        assert name in pytensor_mlir.device_description(f)
        assert_same(f(np.ones(3, dtype=F32)), np.full(3, 2, dtype=F32))
    with pytest.raises(pytensor_mlir.IreeRuntimeError):
        pytensor.function([x], x + 1, mode=pytensor_mlir.mlir_mode("vulkan", device=len(DEVICES)))


# The CPU backend's op set (tests/test_graphs.py, tests/test_runtime.py), in float32.
UNARY = [pt.neg, pt.abs, pt.sqr, pt.sqrt, pt.exp, pt.log, lambda x: pt.cast(x, "int32"), lambda x: x]
BINARY = [
    lambda x, y: x + y,
    lambda x, y: x - y,
    lambda x, y: x * y,
    lambda x, y: x / y,
    lambda x, y: x**y,
    pt.maximum,
    pt.minimum,
    lambda x, y: pt.switch(x < y, x, y * 2),
    lambda x, y: [x < y, x > y, x <= y, x >= y, pt.eq(x, y), pt.neq(x, y)],
    lambda x, y: pt.second(x, y),
]


# Vulkan's precision for GLSL.std.450 Exp is 3 + 2*|x| ULP (the spec's table of
# precisions): at x = 88, 179 ULP of float32, 2.2e-5 relative. lavapipe is within that.
UNARY_RTOL = {"exp": 2.2e-5}


@pytest.mark.parametrize("op", UNARY, ids=["neg", "abs", "sqr", "sqrt", "exp", "log", "cast", "identity"])
def test_unary_float32(request, op):
    x = vec("x")
    a = np.array([0.5, 1.0, 2.5, 10.0, 1e-3, 88.0, np.inf, 0.0], dtype=F32)
    vcheck([x], op(x) * 1, [a], rtol=UNARY_RTOL.get(request.node.callspec.id))


@pytest.mark.parametrize("op", BINARY, ids=["add", "sub", "mul", "div", "pow", "max", "min", "switch", "cmp", "second"])
def test_binary_float32(op):
    x = vec("x")
    y = vec("y")
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 3, size=50).astype(F32)
    b = rng.uniform(-2, 2, size=50).astype(F32)
    b[:3] = a[:3]
    vcheck([x, y], op(x, y), [a, b], rtol=1e-5)


def test_fused_composite_float32():
    x = vec("x")
    y = vec("y")
    z = vec("z")
    f = vcheck([x, y, z], pt.exp(x) * y + pt.sqrt(z), [np.linspace(-3, 3, 101, dtype=F32)] * 3, rtol=1e-5)
    assert "f32" in pytensor_mlir.get_mlir(f)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int16", "int8", "uint8", "uint32", "bool"])
def test_integer_and_bool_ops(dtype):
    x = pt.vector("x", dtype=dtype)
    y = pt.vector("y", dtype=dtype)
    rng = np.random.default_rng(1)
    if dtype == "bool":
        a, b = rng.integers(0, 2, 40).astype(bool), rng.integers(0, 2, 40).astype(bool)
        vcheck([x, y], [x & y, x | y, x ^ y, ~x, pt.eq(x, y)], [a, b])
        return
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -1000), min(info.max, 1000), 40).astype(dtype)
    b = rng.integers(1, min(info.max, 100), 40).astype(dtype)
    vcheck([x, y], [x + y, x - y, x * y, x // y, x % y, pt.maximum(x, y), x & y, x | y, x ^ y, x < y], [a, b])
    # Wrap-around at the extremes, never truncated or saturated (against numpy: the C
    # backend's maximum of int64 extremes is wrong).
    f = pytensor.function([x, y], [x + y, x * y, pt.maximum(x, y), pt.minimum(x, y)], mode=VULKAN)
    e = np.array([info.max, info.min, info.max], dtype=dtype)
    g = np.array([1, -1, 2], dtype=dtype) if info.min < 0 else np.array([1, 1, 2], dtype=dtype)
    with np.errstate(over="ignore"):
        want = [e + g, e * g, np.maximum(e, g), np.minimum(e, g)]
    for got, w in zip(f(e, g), want):
        assert_same(got, w)


@pytest.mark.parametrize("mode", [pytensor_mlir.MLIR, VULKAN], ids=["cpu", "vulkan"])
def test_int_min_floor_division_and_modulo_against_numpy(mode):
    """Against numpy, not the C backend: PyTensor's C code gives 28633114 for
    -2**31 // 75 (numpy: -28633116) and 98 for -2**31 % 75 (numpy: 52)."""
    for dtype in ["int8", "int16", "int32", "int64"]:
        lo = np.iinfo(dtype).min
        x = pt.vector("x", dtype=dtype)
        y = pt.vector("y", dtype=dtype)
        f = pytensor.function([x, y], [x // y, x % y], mode=mode)
        a = np.array([lo, lo, lo + 1, lo, 7, -7, lo, 100], dtype=dtype)
        b = np.array([75, 3, 7, lo, lo, lo, -3, -7], dtype=dtype)
        div, mod = f(a, b)
        assert_same(div, a // b)
        assert_same(mod, a % b)


def test_int64_values_beyond_32_bits():
    x = pt.vector("x", dtype="int64")
    a = np.array([2**40 + 3, -(2**50), 2**62, 7], dtype="int64")
    vcheck([x], [x * 3 + 1, x // 7, pt.cast(x, "float32")], [a])


def test_integer_division_by_zero_raises_like_c():
    x = pt.vector("x", dtype="int32")
    y = pt.vector("y", dtype="int32")
    f, ref = compile_both([x, y], x // y, mode=VULKAN)
    raises_like(f, ref, [np.array([1, 2], dtype="int32"), np.array([1, 0], dtype="int32")])


@pytest.mark.parametrize("rank", [0, 1, 2, 3, 4])
def test_ranks(rank):
    x = pt.tensor("x", shape=(None,) * rank, dtype=F32)
    y = pt.tensor("y", shape=(None,) * rank, dtype=F32)
    shape = (2, 3, 1, 4)[:rank]
    rng = np.random.default_rng(rank)
    # SPIR-V lets the device contract x*y - x into one FMA (one rounding instead of two):
    # under cancellation that is up to an ulp of the operands, not of the result.
    values = [rng.normal(size=shape).astype(F32), rng.normal(size=shape).astype(F32)]
    vcheck([x, y], [x * y - x, pt.maximum(x, y)], values, atol=4 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_empty_arrays(shape):
    # IREE 3.13's compiler binds an empty tensor with a zero-length range, which its
    # Vulkan driver refuses; runtime/empty_bindings.rs drops dispatches of zero workgroups
    # or only empty bindings and rebinds empty ranges. Reductions over empty axes have
    # non-empty results; a scan along an empty axis binds nothing but empty tensors.
    x = pt.tensor("x", shape=(None,) * len(shape), dtype=F32)
    outputs = [x + 1, pt.exp(x), x.sum(axis=-1), x.prod(axis=0), x.sum(), pt.all(x > 0), pt.cumsum(x, axis=0), pt.cumprod(x, axis=-1)]
    vcheck([x], outputs, [np.zeros(shape, dtype=F32)])


def test_one_compile_serves_every_length():
    x = vec("x")
    y = vec("y")
    before = pytensor_mlir.compiler_invocations()
    f, ref = compile_both([x, y], pt.exp(x) * y + 1, mode=VULKAN)
    assert pytensor_mlir.compiler_invocations() == before + 1
    for n in (3, 5, 1, 100_000):
        a, b = np.linspace(-1, 1, n, dtype=F32), np.linspace(2, 3, n, dtype=F32)
        assert_same(f(a, b), ref(a, b), rtol=1e-5)
    assert pytensor_mlir.compiler_invocations() == before + 1


def test_broadcasting_and_dimshuffle():
    m = pt.tensor("m", shape=(None, None), dtype=F32)
    row = pt.tensor("row", shape=(1, None), dtype=F32)
    col = pt.tensor("col", shape=(None, 1), dtype=F32)
    v = vec("v")
    rng = np.random.default_rng(0)
    vals = [rng.normal(size=s).astype(F32) for s in [(3, 4), (1, 4), (3, 1), (4,)]]
    vcheck([m, row, col, v], [m + row * col, m * v, m.T, v.dimshuffle("x", 0, "x")], vals)


def test_shapes_from_scalar_inputs_across_functions_and_calls():
    """Shapes and values read from scalar inputs, several functions called in turn with
    other values each time. The host program copies the scalars out of their input
    buffers with a memoized command buffer; IREE's Vulkan driver replayed its first
    recording, with the first call's (since freed and reused) buffers: on lavapipe
    zeros((a, b)) came out (b, a), eye(4, 3, -1) (3, 4), arange(-1, -9, -3) empty."""
    # (inputs, outputs, the input values made of a case (start, stop, step)).
    functions = []
    for dtype in ["int8", "int16", "int32", "int64"]:
        a, b, c = (pt.scalar(n, dtype=dtype) for n in "abc")
        functions.append(([a, b, c], pt.arange(a, b, c), lambda case, dtype=dtype: [np.array(v, dtype=dtype) for v in case]))
    n, m, k = pt.lscalar("n"), pt.lscalar("m"), pt.lscalar("k")
    functions.append(([n, m, k], pt.eye(n, m, k, dtype=F32), lambda case: [np.int64(abs(case[0])), np.int64(abs(case[1])), np.int64(case[2])]))
    r, s = pt.iscalar("r"), pt.lscalar("s")
    functions.append(([r, s], [pt.zeros((r, s), dtype=F32), pt.ones((s, r, 2), dtype="int8")], lambda case: [np.int32(abs(case[0])), np.int64(abs(case[1]))]))
    compiled = [(compile_both(ins, outs, mode=VULKAN), values_of) for ins, outs, values_of in functions]
    cases = [(0, 5, 1), (-1, -9, -3), (7, 2, 1), (4, 3, -1), (5, 0, -2), (2, 7, 4), (-3, 7, 3), (3, 3, 1), (0, 1, -1)]
    for case in cases:
        for i, ((f, ref), values_of) in enumerate(compiled):
            values = values_of(case)
            got, want = f(*values), ref(*values)
            for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
                assert_same(g, w, err_msg=f"function {i}, inputs {values}")


def test_runtime_shapes_that_do_not_fit_raise_value_error():
    m = pt.tensor("m", shape=(None, None), dtype=F32)
    v = vec("v")
    f = pytensor.function([m, v], m + v, mode=VULKAN)
    with pytest.raises(ValueError, match="v.shape"):
        f(np.ones((2, 3), dtype=F32), np.ones(4, dtype=F32))


def test_linear_algebra_float32():
    """The host loops of lower/linalg.rs on the device: a Cholesky factor, a general solve,
    a determinant and an inverse in one function (four loops)."""
    a = pt.matrix("a", dtype=F32)
    b = vec("b")
    rng = np.random.default_rng(11)
    g = rng.normal(size=(6, 6))
    m = (g @ g.T + 6 * np.eye(6)).astype(F32)
    outs = [pt.linalg.cholesky(a), pt.linalg.solve(a, b), pt.linalg.det(a), pt.linalg.inv(a)]
    vcheck([a, b], outs, [m, rng.normal(size=6).astype(F32)], rtol=1e-4, atol=1e-5)


def test_svd_by_the_host_loops_sweeps():
    """SVD on a GPU target: one-sided Jacobi's sweeps and U's completing QR are loops of the
    host program (lower/eigen.rs `stacked_svd` with one matrix), float32 against the C
    backend (numpy's gesdd): values, U and V^T economic and full, tall, wide and rank
    deficient; a NaN numpy's LinAlgError, an infinity NaN results."""
    x = pt.matrix("x", dtype=F32)
    outs = [*pt.linalg.svd(x, full_matrices=False), *pt.linalg.svd(x)]
    f, ref = compile_both([x], outs, mode=VULKAN)
    rng = np.random.default_rng(13)
    low_rank = rng.normal(size=(5, 2)) @ rng.normal(size=(2, 4))
    for a in [rng.normal(size=(6, 3)), rng.normal(size=(3, 5)), low_rank, np.ones((1, 3))]:
        a = a.astype(F32)
        got, want = f(a), ref(a)
        assert_svd(got[:3], want[:3], a.astype(float), 2e-6, False)
        assert_svd(got[3:], want[3:], a.astype(float), 2e-6, True)
    bad = np.array([[1.0, np.nan], [2.0, 3.0]], dtype=F32)
    got_e, _ = raises_like(f, ref, [bad])
    assert type(got_e).__name__ == "LinAlgError"
    got = f(np.array([[1.0, np.inf], [2.0, 3.0]], dtype=F32))
    assert all(np.isnan(o).all() for o in got)


def test_sylvester_solve_by_its_kronecker_form():
    """GPU targets have no Schur kernel: SolveSylvester there is one dense solve of its
    Kronecker form (lower/sylvester.rs `kronecker`), float32 against the C backend; a
    singular system (A and -B sharing an eigenvalue) NaN; Schur itself refused by name."""
    from pytensor.tensor.linalg import schur

    a, bm, q = (pt.matrix(n, dtype=F32) for n in "abq")
    rng = np.random.default_rng(12)
    args = [rng.normal(size=(4, 4)), rng.normal(size=(3, 3)) + 4 * np.eye(3), rng.normal(size=(4, 3))]
    vcheck([a, bm, q], pt.linalg.solve_sylvester(a, bm, q), [v.astype(F32) for v in args], rtol=2e-4, atol=2e-4)
    f = pytensor.function([a, bm, q], pt.linalg.solve_sylvester(a, bm, q), mode=VULKAN)
    assert np.isnan(f(np.eye(2, dtype=F32), -np.eye(2, dtype=F32), np.ones((2, 2), F32))).all()
    with pytest.raises(NotImplementedError, match="Schur on a GPU target"):
        pytensor.function([a], list(schur(a)), mode=VULKAN)


@pytest.mark.parametrize(
    "shapes",
    [
        ((3, 4), (4, 5)),
        ((3, 4), (4,)),
        ((4,), (4, 5)),
        ((4,), (4,)),
        ((0, 4), (4, 2)),
        ((3, 0), (0, 2)),
        ((64, 100), (100, 33)),
    ],
    ids=["mm", "mv", "vm", "vv", "empty-rows", "empty-inner", "larger"],
)
def test_dot_float32(shapes):
    a = pt.tensor("a", dtype=F32, shape=(None,) * len(shapes[0]))
    b = pt.tensor("b", dtype=F32, shape=(None,) * len(shapes[1]))
    rng = np.random.default_rng(2)
    vcheck([a, b], pt.dot(a, b), [rng.normal(size=s).astype(F32) for s in shapes], rtol=1e-4, atol=1e-5)


def test_reductions_of_symbolic_slices():
    """Sums, means, products and maxima over slices with run-time bounds and steps, and a
    slice feeding a matmul, against C. Float sums used to be contractions with a vector
    of ones (dot, vecmat), which IREE 3.13's SPIR-V codegen cannot compile for a dynamic
    extent (a dynamic-size workgroup allocation); on GPU targets they are plain folds."""
    x, v = pt.matrix("x", dtype=F32), vec("v")
    n, k = pt.iscalar("n"), pt.iscalar("k")
    outputs = [
        x[:n].sum(),
        x[:n].sum(axis=0),
        x[1:n].mean(axis=0),
        x[:n].prod(axis=0),
        x[::k].sum(axis=1),
        x[::k].max(axis=0),
        x[:, :n].sum(axis=1),
        x[:, n:].mean(),
        v[:n].sum(),
        v[n:].sum(),
        pt.dot(x[:n].T, x[:n]),
        # Empty for n = 0 (see test_empty_arrays).
        x[:n] * 2,
        x[:, :n].max(axis=0),
    ]
    f, ref = compile_both([x, v, n, k], outputs, mode=VULKAN)
    rng = np.random.default_rng(11)
    xv = rng.normal(size=(5, 4)).astype(F32)
    xv[2, 0], xv[3, 1], xv[4, 2] = -0.0, np.inf, np.nan
    vv = rng.normal(size=40).astype(F32)
    vv[30] = -np.inf
    for nv, kv in [(2, 1), (-1, 2), (0, -1), (10, 3), (-7, -2), (1, 1)]:
        got, want = f(xv, vv, nv, kv), ref(xv, vv, nv, kv)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol=1e-5, atol=1e-6, err_msg=f"output {i}, n={nv}, k={kv}")


def test_plain_sums_and_softmax():
    """Whole-array, leading-axis and trailing-axis float32 sums (accumulated in float64
    as C does) and softmax, whose sum of exps was a contraction too."""
    x, v = pt.matrix("x", dtype=F32), vec("v")
    outputs = [x.sum(), x.sum(axis=0), x.sum(axis=1), v.sum(), v.mean(), pt.special.softmax(x, axis=0), pt.special.softmax(x, axis=1)]
    rng = np.random.default_rng(12)
    xv, vv = rng.normal(size=(37, 19)).astype(F32), rng.normal(size=1000).astype(F32)
    vcheck([x, v], outputs, [xv, vv], rtol=UNARY_RTOL["exp"], atol=1e-6)


def test_sort_searchsorted_and_bartlett():
    """The merge sort's constants fit SPIR-V's 32-bit index (a 2^32 limit did not
    compile); Bartlett's window read 2 - |x| instead of 1 - |x| on its rising half on
    lavapipe before its `n <= 0` became a float compare."""
    m, v = pt.matrix("m", dtype=F32), vec("v")
    n = pt.lscalar("n")
    outputs = [
        pt.sort(m, kind="stable"),
        pt.argsort(m, kind="stable"),
        pt.sort(m, axis=0, kind="stable"),
        pt.searchsorted(pt.sort(v, kind="stable"), m.ravel(), side="left"),
        pt.searchsorted(pt.sort(v, kind="stable"), m.ravel(), side="right"),
        pt.bartlett(n),
    ]
    f, ref = compile_both([m, v, n], outputs, mode=VULKAN)
    rng = np.random.default_rng(13)
    for shape, length, window in [((3, 7), 9, 5), ((5, 40), 100, 0), ((1, 1), 1, 1), ((4, 33), 2, 2), ((2, 6), 7, 101)]:
        # Few distinct values (ties, which a stable sort orders by index), NaN, -0.0.
        mv = rng.integers(-2, 3, size=shape).astype(F32)
        mv.flat[:: 5] = np.nan
        mv.flat[1:: 7] = -0.0
        vv = rng.integers(-2, 3, size=length).astype(F32)
        vv[::4] = np.nan
        for i, (g, w) in enumerate(zip(f(mv, vv, window), ref(mv, vv, window))):
            assert_same(g, w, err_msg=f"{shape} {length} {window}: output {i}")


def test_outputs_sized_by_the_data():
    """Nonzero, a boolean mask and Unique: a count computed on the device sizes the
    outputs."""
    v = vec("v")
    outputs = [v[v > 0], pt.nonzero(v)[0], *pt.unique(v, return_index=True, return_inverse=True, return_counts=True)]
    f, ref = compile_both([v], outputs, mode=VULKAN)
    for vv in [np.array([3, -1, 0, 3, np.nan, 2, -1, -0.0], F32), np.zeros(0, F32), np.full(5, -1, F32)]:
        for i, (g, w) in enumerate(zip(f(vv), ref(vv))):
            assert_same(g, w, err_msg=f"{vv}: output {i}")


@pytest.mark.parametrize("set_instead_of_inc", [False, True], ids=["inc", "set"])
def test_gather_and_scatter_with_repeated_indices(set_instead_of_inc):
    # The scatter (iree_linalg_ext.scatter) combines repeated rows; on a GPU in any order,
    # so float32 sums may differ from C's in the last bits.
    x, y = pt.matrix("x", dtype=F32), pt.matrix("y", dtype=F32)
    i = pt.vector("i", dtype="int32")
    region = pt.set_subtensor(x[i], y) if set_instead_of_inc else pt.inc_subtensor(x[i], y)
    rng = np.random.default_rng(7)
    xv, yv = rng.normal(size=(5, 3)).astype(F32), rng.normal(size=(7, 3)).astype(F32)
    iv = np.array([0, 4, 4, -1, 2, 0, 4], dtype="int32")
    vcheck([x, i, y], [region, x[i]], [xv, iv, yv], rtol=1e-5, atol=1e-6)
    f, ref = compile_both([x, i, y], region, mode=VULKAN)
    raises_like(f, ref, [xv, np.array([1, 5], dtype="int32"), yv[:2]])


def test_gather_by_several_index_arrays():
    x = pt.matrix("x", dtype=F32)
    i, j = pt.vector("i", dtype="int32"), pt.vector("j", dtype="int32")
    xv = np.random.default_rng(8).normal(size=(5, 4)).astype(F32)
    iv, jv = np.array([0, 4, -1, 2], dtype="int32"), np.array([3, 0, 1, -4], dtype="int32")
    vcheck([x, i, j], [x[i, j], x[i[:, None], j]], [xv, iv, jv])
    f, ref = compile_both([x, i, j], x[i, j], mode=VULKAN)
    raises_like(f, ref, [xv, iv, np.array([3, 0, 1, 4], dtype="int32")])


def test_several_and_odd_outputs():
    x = vec("x")
    y = vec("y")
    twice = x * y
    const = pt.as_tensor_variable(np.array([1.5, -0.0, np.inf], dtype=F32))
    f = vcheck([x, y], [twice, x, twice, const, y + 1], [np.arange(3, dtype=F32), np.ones(3, dtype=F32)])
    a = np.arange(3, dtype=F32)
    out = f(a, np.ones(3, dtype=F32))
    assert not np.shares_memory(out[1], a)


@pytest.mark.parametrize(
    "make",
    [lambda a: a, lambda a: a[::2], lambda a: a[::-1], lambda a: a[1:], lambda a: np.broadcast_to(a[:1], a.shape)],
    ids=["contiguous", "strided", "negative", "offset", "zero-stride"],
)
def test_inputs_of_any_layout_are_uploaded_once(make):
    """No host-pointer import on a GPU: every input is uploaded (one copy), whatever its
    alignment, and results come back whole (the Python runtime's to_host fails here)."""
    x = vec("x")
    f = pytensor.function([x], x * 2 + 1, mode=VULKAN)
    a = make(np.arange(4097, dtype=F32))
    before = _core.input_copies()
    assert_same(f(a), a * 2 + 1)
    assert _core.input_copies() == before + 1
    # Odd sizes and one element: no alignment requirement on the host side.
    for n in (1, 3, 63, 65):
        b = np.arange(n, dtype=F32)[1:] if n > 1 else np.ones(1, dtype=F32)
        assert_same(f(b), b * 2 + 1)


def test_results_own_their_memory_and_outlive_the_function():
    x = vec("x")
    f = pytensor.function([x], [x, pt.exp(x)], mode=VULKAN)
    a = np.zeros(1000, dtype=F32)
    same, e = f(a)
    assert not np.shares_memory(same, a)
    same[:] = 5
    assert_same(a, np.zeros(1000, dtype=F32))
    del f
    gc.collect()
    assert_same(e, np.ones(1000, dtype=F32))


def test_threads():
    x = vec("x")
    y = vec("y")
    f = pytensor.function([x, y], pt.exp(x) * y + x, mode=VULKAN)
    compiled = f.maker.linker.compiled

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(50):
            n = int(rng.integers(0, 300))
            a, b = rng.normal(size=n).astype(F32), rng.normal(size=n).astype(F32)
            (got,) = compiled(a, b)
            np.testing.assert_allclose(got, np.exp(a) * b + a, rtol=1e-5, atol=1e-6)

    errors = run_in_threads(work, 4)
    assert not errors, errors


# Subnormals: what the device does is measured here and written in the README. lavapipe
# keeps float32 and float64 subnormals, in results and as inputs, like the CPU mode.
@pytest.mark.parametrize("dtype, tiny, half", SUBNORMAL_CASES)
def test_subnormals_are_kept(dtype, tiny, half):
    assert_subnormals_kept(VULKAN, dtype, tiny, half, where="the device")


def test_float64_runs_where_the_device_reports_it():
    """lavapipe reports shaderFloat64: float64 compiles with the Float64 capability and
    gives the C backend's results, never float32's."""
    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float64")
    f = vcheck([x, y], [x * y + x / y, pt.sqrt(x) - y], [np.linspace(0.1, 2, 7), np.full(7, 1 / 3)])
    # 2**-40 is below float32's resolution at 1: only float64 arithmetic keeps it.
    got = f(np.array([1 + 2**-40]), np.array([1.0]))[0]
    assert got.dtype == np.float64 and got[0] == 2 + 2**-39


def test_leak_small_calls():
    x = vec("x")
    y = vec("y")
    f = pytensor.function([x, y], [x + y * 2, pt.exp(x)], mode=VULKAN)
    a, b = np.arange(10, dtype=F32), np.ones(10, dtype=F32)
    grown = grown_over(lambda: f(a, b), warmup=500, calls=10_000)
    assert grown < 5 * 2**20, f"RSS grew {grown / 2**20:.2f} MiB over 10,000 calls"


def test_leak_large_calls():
    """No per-call growth on 1e6-element calls. RSS may step up once (measured: 11.5 MiB at
    one point within the first 600 calls, then flat for 1,400 more: the pool behind the
    device's host-visible buffers growing a block), so the growth is measured over three
    windows of 150 calls: a leak grows in every window, a one-time step in one; the
    smallest window must stay under 1 MiB (catches ~7 KB a call), the total under 32 MiB."""
    x = vec("x")
    y = vec("y")
    f = pytensor.function([x, y], pt.exp(x) * y, mode=VULKAN)
    a, b = np.zeros(1_000_000, dtype=F32), np.ones(1_000_000, dtype=F32)
    windows = [grown_over(lambda: f(a, b), warmup=20 if i == 0 else 0, calls=150) for i in range(3)]
    mib = [round(w / 2**20, 2) for w in windows]
    assert min(windows) < 2**20, f"RSS grew in every window of 150 calls of 1e6 elements: {mib} MiB"
    assert sum(windows) < 32 * 2**20, f"RSS grew {sum(mib):.1f} MiB over 450 calls of 1e6 elements: {mib}"


def test_leak_failing_calls():
    x = pt.vector("x", dtype="int32")
    f = pytensor.function([x], x // x, mode=VULKAN)
    a = np.array([1, 0] * 50, dtype="int32")

    def call():
        with pytest.raises(ZeroDivisionError):
            f(a)

    grown = grown_over(call, warmup=200, calls=3_000)
    assert grown < 5 * 2**20, f"RSS grew {grown / 2**20:.2f} MiB over 3,000 failing calls"


def test_reflecting_pad_its_gradient_and_choose():
    # pad's reflect/symmetric rule and its gradient (a loop over periods per element),
    # and Choose, on the device, against the CPU mode (tested against C in test_pad.py and
    # test_construct.py; the C backend's float32 Scan takes minutes to compile here).
    x, w, a, c = pt.matrix("x", dtype=F32), pt.lmatrix("w"), pt.lmatrix("a"), pt.tensor3("c", dtype=F32)
    outputs = [pt.choose(a, c, mode="wrap")]
    for mode in ("reflect", "symmetric"):
        y = pt.pad(x, w, mode=mode)
        outputs += [y, pytensor.grad((y**3).sum(), x)]
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(3, 4)).astype(F32), np.array([[2, 5], [0, 7]]), rng.integers(-5, 5, size=(1, 3)), rng.normal(size=(3, 2, 3)).astype(F32)]
    vcheck([x, w, a, c], outputs, values, rtol=1e-5, reference=pytensor_mlir.MLIR)


def test_constant_and_edge_pad_of_matrices():
    """One gather each (lower/pad.rs): PyTensor's set_subtensor chains for these modes
    took more than lavapipe's 128 bytes of push constants for a matrix."""
    x, w = pt.matrix("x", dtype=F32), pt.lmatrix("w")
    outputs = [pt.pad(x, w, mode="constant", constant_values=((1, 2), (3, 4))), pt.pad(x, w, mode="edge"), pt.pad(x, 2, mode="constant")]
    f, ref = compile_both([x, w], outputs, mode=VULKAN)
    rng = np.random.default_rng(4)
    for xv, wv in [(rng.normal(size=(3, 4)).astype(F32), np.array([[2, 5], [0, 7]])), (rng.normal(size=(1, 2)).astype(F32), np.array([[0, 0], [3, 1]]))]:
        for i, (g, want) in enumerate(zip(f(xv, wv), ref(xv, wv))):
            assert_same(g, want, err_msg=f"output {i}")


@pytest.mark.parametrize("rank", [1, 2])
def test_more_operands_than_a_dispatch_takes(rank):
    """40 inputs in one fused expression: past the device's 32 storage buffers and 128
    bytes of push constants per dispatch unless pytensor_mlir.fusion splits it."""
    xs = [pt.tensor(f"x{i}", shape=(None,) * rank, dtype=F32) for i in range(40)]
    out = xs[0] + pt.add(*[pt.exp(x) for x in xs[1:]])
    rng = np.random.default_rng(rank)
    vcheck(xs, [out], [rng.normal(size=(3,) * rank).astype(F32) for _ in xs])


def test_scan_and_its_gradient():
    """A float32 recurrence through `Scan` (a loop in the host program around Vulkan
    dispatches), its last row, and its gradients (a mit_mot Scan; the per-step gradient
    buffer starts uninitialized, which must not be copied: that failed to compile for
    Vulkan), compared with C."""
    seq, x0, a = pt.fmatrix("s"), pt.fvector("x0"), pt.fscalar("a")
    ys = pytensor.scan(lambda s, x, a: a * x + pt.exp(s), sequences=[seq], outputs_info=[x0], non_sequences=[a], return_updates=False)
    cost = (ys**2).sum()
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(6, 3)).astype("float32"), np.ones(3, "float32"), np.float32(0.8)]
    vcheck([seq, x0, a], [ys, ys[-1], *pytensor.grad(cost, [seq, x0, a])], values, rtol=1e-5, atol=1e-5)


def test_tridiagonal_solves():
    """A float32 tridiagonal solve (one sequential dispatch per recurrence, lower/
    tridiagonal.rs) and gttrs's transposed solve from gttrf's factors, on a matrix whose
    pivoting swaps rows, with three right-hand sides, vs C."""
    from pytensor.tensor.linalg import tridiagonal_lu_factor, tridiagonal_lu_solve

    a, b = pt.fmatrix("a"), pt.fmatrix("b")
    factors = tridiagonal_lu_factor(a)
    outputs = [pt.linalg.solve(a, b, assume_a="tridiagonal", b_ndim=2), tridiagonal_lu_solve(factors, b, b_ndim=2, transposed=True), factors[4]]
    rng = np.random.default_rng(3)
    n = 12
    m = np.diag(rng.normal(size=n)) + np.diag(rng.normal(size=n - 1), 1) + np.diag(5 * rng.normal(size=n - 1), -1)
    vcheck([a, b], outputs, [m.astype("float32"), rng.normal(size=(n, 3)).astype("float32")], rtol=1e-4, atol=1e-4)


def test_while_loop():
    """A float32 `Scan` with a stop condition on lavapipe: the loop stops after the first
    step whose flag is true, its outputs keep only the steps done (vs C), with the bound
    reached before the condition and zero steps."""
    from pytensor.scan.utils import until

    x0, thr, n = pt.fscalar("x0"), pt.fscalar("thr"), pt.lscalar("n")
    ys = pytensor.scan(lambda x, t: (x * 2, until(x * 2 > t)), outputs_info=[x0], non_sequences=[thr], n_steps=n, return_updates=False)
    f, ref = compile_both([x0, thr, n], [ys, ys[-1]], mode=VULKAN)
    for args in [(1.0, 100.0, 20), (1.0, 100.0, 3), (1.0, 0.5, 5), (1.0, 10.0, 0)]:
        values = [np.float32(args[0]), np.float32(args[1]), np.int64(args[2])]
        for g, w in zip(f(*values), ref(*values)):
            assert_same(g, w, err_msg=str(args))


def test_random_variables():
    """Draws on lavapipe: Philox and the transforms in float32 and int64 give the CPU's
    integers exactly and its normals to within float32 rounding of the math (same stream),
    and the normals pass a KS test; a bad scale raises as on the CPU."""
    from scipy import stats

    rng = pt.random.shared_rng(np.random.default_rng(1))
    scale = pt.fscalar("scale")
    next_rng, x = rng.normal(1.0, scale, size=(20000,), dtype="float32")
    _, i = pt.random.integers(0, 10, size=(1000,), rng=next_rng, return_next_rng=True)
    f = pytensor.function([scale], [x, i], mode=VULKAN)
    cpu = pytensor.function([scale], [x, i], mode=pytensor_mlir.MLIR)
    (gx, gi), (cx, ci) = f(np.float32(2)), cpu(np.float32(2))
    assert gx.dtype == np.float32 and gi.dtype == np.int64
    np.testing.assert_array_equal(gi, ci)
    np.testing.assert_allclose(gx, cx, rtol=1e-5, atol=1e-5)
    assert stats.kstest(gx, stats.norm(1, 2).cdf).pvalue > 1e-3
    with pytest.raises(ValueError):
        f(np.float32(-1))


def test_shuffles_and_hypergeometric_draws():
    """permutation and choice without replacement (64-bit keys sorted on the device) give
    the CPU's draws exactly; hypergeometric draws (both methods) have scipy's mean."""
    from scipy import stats

    rng = pt.random.shared_rng(np.random.default_rng(2))
    x, k = pt.fvector("x"), pt.lscalar("k")
    next_rng, perm = rng.permutation(x)
    next_rng, pick = pt.random.choice(x, size=(k,), replace=False, rng=next_rng, return_next_rng=True)
    _, h = pt.random.hypergeometric(60, 40, pt.stack([k, 30]), size=(20000, 2), rng=next_rng, return_next_rng=True)
    f = pytensor.function([x, k], [perm, pick, h], mode=VULKAN)
    cpu = pytensor.function([x, k], [perm, pick, h], mode=pytensor_mlir.MLIR)
    v = np.arange(50, dtype=np.float32)
    got, want = f(v, 5), cpu(v, 5)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(np.sort(got[0]), v)
    assert got[2].dtype == np.int64
    for col, n in [(0, 5), (1, 30)]:
        mean = stats.hypergeom(100, 60, n).mean()
        sd = stats.hypergeom(100, 60, n).std() / np.sqrt(20000)
        assert abs(got[2][:, col].mean() - mean) < 5 * sd
