"""ARange, Eye, ExtractDiag, AllocDiag, tri/tril/triu (ARange and Elemwise), FillDiagonal,
FillDiagonalOffset, Repeat, Bartlett, UnravelIndex, RavelMultiIndex, pad and tile against
the C backend: dynamic shapes, empty inputs, bad input raising like the C backend, and
gradients."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.basic import alloc_diag

from conftest import C, MLIR, assert_same, check, compile_both, raises_like


def ops_of(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.toposort()}


def check_with(op_name, inputs, outputs, cases, **kwargs):
    """Compiles once (the op must survive the MLIR mode's rewrites), runs every case."""
    f, ref = compile_both(inputs, outputs, **kwargs)
    assert op_name in ops_of(f), ops_of(f)
    for values in cases:
        got, want = f(*values), ref(*values)
        if not isinstance(outputs, (list, tuple)):
            got, want = [got], [want]
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, err_msg=f"{values}: output {i}")
    return f, ref


# ---- ARange ----


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint16"])
def test_arange_int(dtype):
    a, b, c = (pt.scalar(n, dtype=dtype) for n in "abc")
    cases = [(0, 5, 1), (1, 9, 3), (3, 3, 1), (7, 2, 1), (2, 7, 4)]
    if dtype[0] == "i":
        cases += [(5, 0, -2), (-3, 7, 3), (-1, -9, -3), (0, 1, -1)]
    f, ref = check_with("ARange", [a, b, c], pt.arange(a, b, c), [tuple(np.array(v, dtype=dtype) for v in cs) for cs in cases])
    # A step of 0: the C backend raises OverflowError ("arange: overflow while computing length").
    got, want = raises_like(f, ref, [np.array(v, dtype=dtype) for v in (0, 5, 0)])
    assert str(got) == str(want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_arange_float(dtype):
    a, b, c = (pt.scalar(n, dtype=dtype) for n in "abc")
    cases = [(0.5, 3.2, 0.3), (1.0, 0.0, -0.25), (0.0, 1.0, 0.1), (2.0, 2.0, 1.0), (0.0, -1.0, 1.0), (-2.5, 2.5, 0.5)]
    f, ref = compile_both([a, b, c], pt.arange(a, b, c))
    assert "ARange" in ops_of(f)
    for cs in cases:
        vals = [np.array(v, dtype=dtype) for v in cs]
        assert_same(f(*vals), ref(*vals), rtol=1e-6 if dtype == "float32" else 1e-14, atol=1e-6, err_msg=str(cs))
    for bad in [(0.0, 5.0, 0.0), (0.0, np.nan, 1.0), (0.0, np.inf, 1.0)]:
        got, want = raises_like(f, ref, [np.array(v, dtype=dtype) for v in bad])
        assert str(got) == str(want)


def test_arange_of_a_shape_broadcasts_against_the_input():
    # arange(x.shape[0]) has x's length: a dim checkable before the call, not a run-time one.
    x = pt.vector("x")
    check_with("ARange", [x], x * pt.arange(x.shape[0]) + pt.arange(1, x.shape[0] + 1), [(np.arange(5.0),), (np.zeros(0),)])


def test_tri_tril_triu():
    m = pt.matrix("m")
    n, k = pt.lscalar("n"), pt.lscalar("k")
    outs = [pt.tril(m), pt.triu(m, 1), pt.tril(m, -2), pt.triu(m, -1)]
    cases = [(np.arange(12.0).reshape(3, 4),), (np.arange(12.0).reshape(4, 3),), (np.zeros((0, 3)),)]
    check_with("ARange", [m], outs, cases)
    check_with("ARange", [n, k], [pt.tri(n, k, 0), pt.tri(n, None, -1)], [(np.int64(3), np.int64(4)), (np.int64(0), np.int64(2))])


# ---- Eye ----


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_eye(dtype):
    n, m, k = pt.lscalar("n"), pt.lscalar("m"), pt.lscalar("k")
    cases = [(3, 4, 1), (4, 3, -1), (3, 3, 0), (0, 2, 0), (2, 2, 5), (2, 3, -7)]
    f, ref = check_with("Eye", [n, m, k], pt.eye(n, m, k, dtype=dtype), [tuple(np.int64(v) for v in c) for c in cases])
    raises_like(f, ref, [np.int64(-1), np.int64(2), np.int64(0)])


# ---- ExtractDiag ----


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3])
def test_extract_diag(offset):
    m = pt.matrix("m")
    cases = [(np.arange(15.0).reshape(3, 5),), (np.arange(15.0).reshape(5, 3),), (np.zeros((0, 3)),), (np.zeros((2, 0)),)]
    check_with("ExtractDiag", [m], m.diagonal(offset), cases)


def test_extract_diag_3d_and_static():
    t = pt.tensor3("t")
    check_with("ExtractDiag", [t], [t.diagonal(1, 0, 2), t.diagonal(-1, 2, 1)], [(np.arange(60.0).reshape(3, 4, 5),)])
    s = pt.tensor("s", shape=(3, 4), dtype="int32")
    check_with("ExtractDiag", [s], s.diagonal(), [(np.arange(12, dtype="int32").reshape(3, 4),)])


def test_diag_plus_vector_checks_lengths_before_the_call():
    m, v = pt.matrix("m"), pt.vector("v")
    f, ref = check_with("ExtractDiag", [m, v], pt.diag(m) + v, [(np.ones((3, 3)), np.arange(3.0)), (np.ones((3, 5)), np.arange(3.0))])
    raises_like(f, ref, [np.ones((3, 3)), np.arange(4.0)])


# ---- AllocDiag ----


@pytest.mark.parametrize("offset", [-2, 0, 1])
def test_alloc_diag(offset):
    # AllocDiag is an OpFromGraph that fast_run inlines (into AdvancedIncSubtensor):
    # kept here, in both modes, by leaving that rewrite out.
    modes = dict(mode=MLIR.excluding("inline_ofg"), reference=C.excluding("inline_ofg"))
    x = pt.vector("x")
    check_with("AllocDiag", [x], alloc_diag(x, offset), [(np.arange(1.0, 4.0),), (np.zeros(0),)], **modes)
    b = pt.matrix("b")
    check_with("AllocDiag", [b], alloc_diag(b, offset, axis1=0, axis2=2), [(np.arange(6.0).reshape(2, 3),)], **modes)


# ---- FillDiagonal, FillDiagonalOffset ----


def test_fill_diagonal():
    m = pt.matrix("m")
    v = pt.dscalar("v")
    cases = [(np.arange(15.0).reshape(3, 5), 7.5), (np.arange(15.0).reshape(5, 3), -1.0), (np.zeros((0, 0)), 2.0)]
    check_with("FillDiagonal", [m, v], pt.fill_diagonal(m, v), cases)
    t = pt.tensor3("t", dtype="int32")
    check_with("FillDiagonal", [t], pt.fill_diagonal(t, 9), [(np.arange(27, dtype="int32").reshape(3, 3, 3),)])


def test_fill_diagonal_offset():
    m = pt.matrix("m")
    v, k = pt.dscalar("v"), pt.lscalar("k")
    cases = [(np.arange(15.0).reshape(3, 5), 7.5, np.int64(o)) for o in (-2, -1, 0, 1, 4)]
    cases += [(np.arange(15.0).reshape(5, 3), 1.0, np.int64(o)) for o in (-3, 2)]
    check_with("FillDiagonalOffset", [m, v, k], pt.fill_diagonal_offset(m, v, k), cases)


# ---- Repeat ----


def test_repeat_by_vector():
    m = pt.matrix("m")
    r = pt.lvector("r")
    cases = [
        (np.arange(6.0).reshape(3, 2), np.array([1, 0, 3])),
        (np.arange(6.0).reshape(3, 2), np.array([2])),
        (np.arange(6.0).reshape(3, 2), np.array([0, 0, 0])),
        (np.zeros((0, 2)), np.zeros(0, dtype="int64")),
    ]
    f, ref = check_with("Repeat", [m, r], pt.repeat(m, r, axis=0), cases)
    raises_like(f, ref, [np.ones((3, 2)), np.array([1, -1, 2])])
    raises_like(f, ref, [np.ones((3, 2)), np.array([1, 2])])
    check_with("Repeat", [m, r], pt.repeat(m, r, axis=1), [(np.arange(6.0).reshape(2, 3), np.array([3, 1, 2]))])


def test_repeat_by_scalar():
    x = pt.ivector("x")
    n = pt.lscalar("n")
    f, ref = compile_both([x, n], pt.repeat(x, n))
    for values in [(np.arange(4, dtype="int32"), np.int64(3)), (np.arange(4, dtype="int32"), np.int64(0))]:
        assert_same(f(*values), ref(*values))


# ---- Gradients ----


def test_gradients():
    m = pt.matrix("m")
    v = pt.dscalar("v")
    r = pt.lvector("r")
    # ExtractDiag's gradient is an AllocDiag, which fast_run inlines into
    # AdvancedIncSubtensor: kept as AllocDiag (in both modes) for the diagonal costs.
    keep = dict(mode=MLIR.excluding("inline_ofg"), reference=C.excluding("inline_ofg"))
    a = np.arange(1.0, 10.0).reshape(3, 3) / 7
    cases = [
        ((pt.diag(m) ** 2).sum(), [m], [m], [a], keep),
        ((m.diagonal(1) * pt.arange(1, 3)).sum(), [m], [m], [a], keep),
        ((pt.fill_diagonal(m, v) ** 2).sum(), [m, v], [m, v], [a, 0.5], {}),
        ((pt.tril(m) * m).sum(), [m], [m], [a], {}),
    ]
    for cost, wrt, ins, vals, modes in cases:
        check(ins, [cost, *pytensor.grad(cost, wrt)], vals, **modes)


def test_gradient_of_repeat():
    # The gradient scatters the repeated rows back with AdvancedIncSubtensor1 at positions
    # Repeat(arange(len(m)), r): both lengths are Repeat's by the same counts, one dim. A
    # scalar count's gradient is a Reshape to (len(m), width, s) summed, into which the
    # scatter adds: its known entries keep m's dims.
    m, r, q, s = pt.matrix("m"), pt.lvector("r"), pt.lvector("q"), pt.lscalar("s")
    cost = (pt.repeat(m, r, axis=0) ** 2).sum() + (pt.repeat(m, q, axis=1) ** 3 * pt.arange(1.0, 4.0)[:, None]).sum()
    cost = cost + (pt.repeat(m, s, axis=1) * 1.5).sum() ** 2
    f, ref = check_with("AdvancedIncSubtensor1", [m, r, q, s], [cost, pytensor.grad(cost, m)], [
        [np.arange(1.0, 10.0).reshape(3, 3), np.array([2, 0, 1]), np.array([1, 0, 2]), np.array(2)],
        [np.ones((3, 3)), np.array([0, 0, 0]), np.array([3]), np.array(0)],
        [np.arange(3.0).reshape(3, 1), np.array([4]), np.array([2]), np.array(3)],
    ])
    # Counts of the wrong length or negative raise like the C backend.
    for r_bad, q_bad, s_bad in [([1, 2], [1, 1, 1], 1), ([1, 1, 1], [1, -1, 1], 1)]:
        got, _ = raises_like(f, ref, [np.ones((3, 3)), np.array(r_bad), np.array(q_bad), np.array(s_bad)])
        assert isinstance(got, ValueError)


def test_unique_along_an_axis_is_refused_by_name():
    # (Nonzero, boolean masks and Unique with axis=None are lowered: tests/test_nonzero.py.)
    x = pt.matrix("x")
    with pytest.raises(NotImplementedError, match="Unique along an axis"):
        pytensor.function([x], pt.unique(x, axis=0), mode="MLIR")


def test_bartlett_unravel_and_ravel_multi_index():
    m, c, a, d = pt.lscalar("m"), pt.lvector("c"), pt.ivector("a"), pt.lvector("d")
    w = pt.bvector("w")
    outputs = [
        pt.bartlett(m),
        *pt.unravel_index(c, (3, 4)),
        *pt.unravel_index(c, (3, 4), order="F"),
        *pt.unravel_index(c, pt.specify_shape(d, (2,))),
        pt.ravel_multi_index((a, a[::-1]), (5, 4)),
        pt.ravel_multi_index((w, a), (5, 6), mode="wrap", order="F"),
        pt.ravel_multi_index((w, w[::-1]), (3, 2), mode="clip"),
    ]
    cases = [
        (5, [0, 11, 5, 7], [0, 1, 3, 2], [3, 4], [0, -1, 7, 100]),
        (1, [0], [1], [1, 1], [-128]),
        (0, [], [], [2, 2], []),
        (-3, [3, 2], [3, 0], [2, 2], [-7, 9]),
        (10, [1, 0], [2, 3], [1, 2], [5, 6]),
    ]
    cases = [
        [np.array(mv), np.array(cv, "int64"), np.array(av, "int32"), np.array(dv, "int64"), np.array(wv, "int8")]
        for mv, cv, av, dv, wv in cases
    ]
    f, ref = check_with("RavelMultiIndex", [m, c, a, d, w], outputs, cases)
    assert {"Bartlett", "UnravelIndex"} <= ops_of(f)
    # Out of range: a flat index, a coordinate in mode "raise", a negative dim.
    for cv, av, dv in [([12, 0], [0, 0], [3, 4]), ([0, 1], [0, 5], [3, 4]), ([-1, 0], [0, 0], [3, 4]), ([0, 0], [0, 0], [-1, 2])]:
        args = [np.array(3), np.array(cv, "int64"), np.array(av, "int32"), np.array(dv, "int64"), np.array([0, 0], "int8")]
        got, _ = raises_like(f, ref, args)
        assert isinstance(got, ValueError)


def test_pad_and_tile():
    # pt.pad builds a Pad OpFromGraph (its inner graph lowered); pt.tile an Alloc and a Reshape.
    x, r = pt.matrix("x"), pt.lscalar("r")
    # (Each Pad's inner graph takes seconds to compile: one mode here. "edge" sets its
    # borders from slices one row wide, broadcast at run time, as numpy's assignment does.)
    outputs = [pt.pad(x, ((1, 2), (0, 3)), mode="edge"), pt.tile(x, (r, 2))]
    f, _ = check_with("Pad", [x, r], outputs, [[np.arange(12.0).reshape(3, 4), np.array(2)], [np.random.default_rng(3).normal(size=(1, 5)), np.array(0)]])
    # linear_ramp's inner graph needs a dim known only at run time to equal another: refused.
    # (reflect and symmetric, whose inner graph holds a Scan, have a rule: test_pad.py.)
    with pytest.raises(NotImplementedError, match="SpecifyShape"):
        pytensor.function([x], pt.pad(x, 1, mode="linear_ramp"), mode=MLIR)


# ---- Choose ----


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_like_c(mode):
    # pt.choose with a tensor of choices (Choose has no C code: the C backend runs numpy's
    # choose): a and choices[0] broadcast together, also where a length is 1 at run time;
    # entries out of range raise (mode raise), wrap or clip; no choice at all and shapes
    # that do not broadcast raise ValueError, as numpy does.
    a, a8, c, ci, m = pt.lmatrix("a"), pt.vector("a8", dtype="int8"), pt.tensor3("c"), pt.tensor3("ci", dtype="int32"), pt.matrix("m")
    outputs = [pt.choose(a, c, mode=mode), pt.choose(a8, ci, mode=mode), pt.choose(a[0, 0], m, mode=mode)]
    f, ref = check_with("Choose", [a, a8, c, ci, m], outputs, [])
    rng = np.random.default_rng(5)
    lo, hi = (0, None) if mode == "raise" else (-7, 9)
    for a_shape, c_shape in [((2, 3), (4, 2, 3)), ((1, 3), (3, 2, 3)), ((2, 1), (3, 2, 4)), ((2, 3), (3, 1, 3)), ((2, 3), (1, 1, 1))]:
        n = c_shape[0]
        args = [
            rng.integers(lo, n if hi is None else hi, size=a_shape),
            rng.integers(lo, n if hi is None else hi, size=c_shape[2]).astype("int8"),
            rng.normal(size=c_shape),
            rng.integers(-100, 100, size=c_shape).astype("int32"),
            rng.normal(size=(n, 5)),
        ]
        for i, (g, w) in enumerate(zip(f(*args), ref(*args))):
            assert_same(g, w, err_msg=f"{a_shape}, {c_shape}: output {i}")
    av, cv = np.array([[0, 1, 2], [2, 1, 0]]), rng.normal(size=(3, 2, 3))
    bad = [
        [av, np.array([0, 0, 0], "int8"), cv[:, :, :2], cv.astype("int32"), cv[:, 0]],  # does not broadcast
        [av, np.array([0, 0, 0], "int8"), cv[:0], cv.astype("int32"), cv[:, 0]],  # no choice
    ]
    if mode == "raise":
        bad += [[av, np.array([0, 3, 0], "int8"), cv, cv.astype("int32"), cv[:, 0]], [av - 1, np.array([0, 1, 0], "int8"), cv, cv.astype("int32"), cv[:, 0]]]
    for args in bad:
        got, want = raises_like(f, ref, args)
        assert isinstance(got, ValueError), got


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_of_a_list_like_c(mode):
    # Choices given as a Python list (PyTensor's TypedList, stacked by our rewrite): values
    # like the C backend (numpy's choose), a broadcasting against the choices; an entry out
    # of range raises in mode raise; choices whose run-time lengths differ raise ValueError
    # (numpy would broadcast a length-1 one; PyTensor's rule: only static 1 broadcasts).
    a, x, y, z = pt.lmatrix("a"), pt.vector("x"), pt.vector("y"), pt.vector("z")
    i, j = pt.vector("i", dtype="int16"), pt.vector("j", dtype="int16")
    outputs = [pt.choose(a, [x, y, z], mode=mode), pt.choose(a[0] % 2, [i, j], mode=mode)]
    f, ref = check_with("Choose", [a, x, y, z, i, j], outputs, [])
    assert "MakeList" not in ops_of(f)
    rng = np.random.default_rng(11)
    lo, hi = (0, 3) if mode == "raise" else (-5, 7)
    for rows in (1, 3):
        args = [rng.integers(lo, hi, size=(rows, 4)), *rng.normal(size=(3, 4)), *rng.integers(-9, 9, size=(2, 4)).astype("int16")]
        for k, (g, w) in enumerate(zip(f(*args), ref(*args))):
            assert_same(g, w, err_msg=f"{rows} rows: output {k}")
    good = [np.zeros((2, 4), "int64"), *np.ones((3, 4)), *np.ones((2, 4), "int16")]
    bad = [[good[0], good[1][:3], *good[2:]]]  # choices of different lengths
    if mode == "raise":
        bad.append([good[0] + 3, *good[1:]])  # an entry past the last choice
    for args in bad:
        got, want = raises_like(f, ref, args)
        assert isinstance(got, ValueError), got
    # Choices of more dimensions than a: numpy's result would have more than PyTensor's
    # type says; left to the TypedList, refused by name.
    v, m = pt.lvector("v"), pt.matrix("m")
    with pytest.raises(NotImplementedError, match="MakeList"):
        pytensor.function([v, m], pt.choose(v, [m, m]), mode=MLIR)
