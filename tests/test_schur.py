"""`Schur` (scipy's real Schur form, sorted or not) and `TRSYL` (trsyl, the Sylvester equation of two
such forms), and the Sylvester solves built on them. Schur against the C backend (LAPACK's gees) on the same
matrices. A Schur form is not unique (the eigenvalues' order on T's diagonal, the signs
of Z's columns), so each result is checked for what makes it one: A = Z T Z^T, Z
orthogonal, T quasi-upper-triangular with its 2 x 2 blocks in LAPACK's standard form,
and T's eigenvalues those of the C backend's T."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.tensor.linalg import schur
from pytensor.tensor.linalg.solvers.linear_control import TRSYL

import pytensor_mlir
from conftest import C, MLIR, compile_both

PY = Mode(linker="py", optimizer="fast_run")


def diagonal_eigenvalues(t):
    """T's eigenvalues read from its blocks, in their order on the diagonal."""
    n = t.shape[0]
    values, i = [], 0
    while i < n:
        if i + 1 < n and t[i + 1, i] != 0:
            a, b, c = t[i, i], t[i, i + 1], t[i + 1, i]
            im = np.sqrt(-b * c)
            values += [a + 1j * im, a - 1j * im]
            i += 2
        else:
            values.append(complex(t[i, i]))
            i += 1
    return np.array(values)


def assert_same_eigenvalues(got, want, rtol, atol):
    """Equal up to order: each of `got` paired with one of `want` (the pairing that
    minimizes the total distance), then compared."""
    from scipy.optimize import linear_sum_assignment

    assert len(got) == len(want)
    rows, cols = linear_sum_assignment(np.abs(got[:, None] - want[None, :]))
    np.testing.assert_allclose(got[rows], want[cols], rtol=rtol, atol=atol)


def assert_schur_form(t, z, a, t_ref, tol):
    """(t, z) a real Schur form of a: reconstruction and orthogonality to `tol` (relative
    to |a|), quasi-triangular with standardized blocks, eigenvalues those of t_ref."""
    n = a.shape[0]
    assert t.shape == z.shape == (n, n) and t.dtype == z.dtype == t_ref.dtype
    scale = max(np.abs(a).max(), np.finfo(a.dtype).tiny) if n else 1.0
    assert np.abs(z @ t @ z.T - a).max() <= tol * scale * max(n, 1), "A != Z T Z^T"
    assert np.abs(z.T @ z - np.eye(n)).max() <= tol * max(n, 1), "Z not orthogonal"
    assert not np.tril(t, -2).any(), "T has elements below its subdiagonal"
    sub = np.diag(t, -1)
    for i in np.flatnonzero(sub):
        assert i + 1 >= len(sub) or sub[i + 1] == 0, f"two subdiagonal elements in a row at {i}"
        assert t[i, i] == t[i + 1, i + 1], f"2 x 2 block at {i}: unequal diagonal"
        assert np.sign(t[i, i + 1]) == -np.sign(sub[i]), f"2 x 2 block at {i}: real eigenvalues"
    assert_same_eigenvalues(diagonal_eigenvalues(t), diagonal_eigenvalues(t_ref), 1e3 * tol, 1e3 * tol * scale)


def matrices(rng, n):
    """Random, symmetric, integer-valued, a permutation, a companion matrix, graded rows,
    zeros (none defective: a Jordan block's eigenvalues move by sqrt(eps))."""
    yield "normal", rng.normal(size=(n, n))
    s = rng.normal(size=(n, n))
    yield "symmetric", s + s.T
    yield "integers", rng.integers(-3, 4, size=(n, n)).astype(float)
    yield "cyclic", np.roll(np.eye(n), 1, axis=1)
    companion = np.diag(np.ones(n - 1), -1)
    companion[:, -1] = rng.normal(size=n)
    yield "companion", companion
    g = rng.normal(size=(n, n)) * np.logspace(0, -12, n)[:, None]
    yield "graded", g
    yield "zeros", np.zeros((n, n))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16, 40])
def test_real_schur_form_like_the_c_backend(n):
    a = pt.dmatrix("a")
    f, ref = compile_both([a], list(schur(a)))
    rng = np.random.default_rng(n)
    for name, m in matrices(rng, n):
        t, z = f(m)
        t_ref, _ = ref(m)
        try:
            assert_schur_form(t, z, m, t_ref, 1e-14)
        except AssertionError as e:
            raise AssertionError(f"{name} {n} x {n}: {e}") from e


def test_triangular_and_diagonal_matrices_are_their_own_form():
    """Nothing to reduce: T = A exactly and Z = I (gees gives the same)."""
    a = pt.dmatrix("a")
    f, ref = compile_both([a], list(schur(a)))
    rng = np.random.default_rng(3)
    for m in [np.triu(rng.normal(size=(6, 6))), np.diag(rng.normal(size=5)), np.array([[2.0, 1.0], [0.0, 2.0]])]:
        t, z = f(m)
        t_ref, z_ref = ref(m)
        np.testing.assert_array_equal(t, t_ref)
        np.testing.assert_array_equal(z, z_ref)
        np.testing.assert_array_equal(t, m)


def test_scaled_matrices_neither_overflow_nor_underflow():
    """Elements near 1e300 and 1e-300: the double shift squares them (scaled first by a
    power of two, so exactly)."""
    a = pt.dmatrix("a")
    f, ref = compile_both([a], list(schur(a)))
    rng = np.random.default_rng(5)
    m = rng.normal(size=(8, 8))
    for scale in [1e300, 1e-300, 2.0**-1060]:
        t, z = f(m * scale)
        t_ref, _ = ref(m * scale)
        assert np.isfinite(t).all() and np.isfinite(z).all(), scale
        assert_same_eigenvalues(diagonal_eigenvalues(t / scale), diagonal_eigenvalues(t_ref / scale), 1e-9, 1e-9 * (1 if scale > 1e-310 else 1e6))
        assert np.abs(z.T @ z - np.eye(8)).max() < 1e-13


def test_float32_integers_and_a_stack_through_blockwise():
    rng = np.random.default_rng(7)
    x = pt.fmatrix("x")
    f, ref = compile_both([x], list(schur(x)))
    m = rng.normal(size=(9, 9)).astype("float32")
    t, z = f(m)
    assert_schur_form(t, z, m, ref(m)[0], 2e-6)
    i = pt.lmatrix("i")
    f, ref = compile_both([i], list(schur(i)))
    m = rng.integers(-5, 6, size=(6, 6))
    t, z = f(m)
    assert t.dtype == "float64"
    assert_schur_form(t, z, m.astype(float), ref(m)[0], 1e-14)
    s = pt.dtensor3("s")
    f, ref = compile_both([s], list(schur(s)))
    m = rng.normal(size=(3, 5, 5))
    t, z = f(m)
    t_ref, _ = ref(m)
    for k in range(3):
        assert_schur_form(t[k], z[k], m[k], t_ref[k], 1e-14)
    # Sorted, in float32 (sorted stacks: the stacks' test).
    f, ref = compile_both([x], list(schur(x, sort="lhp")))
    m = rng.normal(size=(9, 9)).astype("float32")
    t, z = f(m)
    t_ref = ref(m)[0]
    assert_schur_form(t, z, m, t_ref, 2e-6)
    assert_sorted(t, t_ref, "lhp", np.abs(m).max())


@pytest.mark.parametrize(("mode", "sort"), [("MLIR", None), ("MLIR_THREADS", "iuc")])
def test_stacks_of_matrices_are_one_dispatch_one_workgroup_a_matrix(mode, sort):
    """Blockwise{Schur} over two batch dims: one dispatch, a workgroup a matrix (parallel on
    the threaded driver), no loop of the host program; each matrix's form what the core op
    gives it alone (NaN for the one with an infinity, the others untouched); empty batches
    and 0 x 0 matrices; a matrix that is not square raises."""
    s = pt.dtensor4("s")
    f, ref = compile_both([s], list(schur(s, sort=sort)), mode=mode)
    # A loop of the host program over the batch starts from a barrier (Context::loop_start).
    assert "util.optimization_barrier" not in f.maker.linker.compiled.mlir
    rng = np.random.default_rng(4)
    for shape in [(2, 3, 6, 6), (1, 1, 1, 1), (3, 1, 9, 9), (0, 2, 3, 3), (2, 2, 0, 0)]:
        m = rng.normal(size=shape) / 2
        if m.size > 1:
            m[0, 0, -1, 0] = np.inf
        t, z = f(m)
        assert t.shape == z.shape == m.shape
        if not m.size:
            continue  # (the C backend's Blockwise raises for an empty batch)
        t_ref, _ = ref(m)
        for k in np.ndindex(*shape[:2]):
            if not np.isfinite(m[k]).all():
                assert np.isnan(t[k]).all() and np.isnan(z[k]).all() and np.isnan(t_ref[k]).all()
            elif shape[-1]:
                assert_schur_form(t[k], z[k], m[k], t_ref[k], 1e-14)
                if sort:
                    assert_sorted(t[k], t_ref[k], sort, np.abs(m[k]).max())
    with pytest.raises(ValueError, match="square"):
        f(np.ones((2, 1, 2, 3)))


@pytest.mark.parametrize("sort", [None, "rhp"])
def test_non_finite_input_bad_shapes_and_refused_forms(sort):
    """A NaN or an infinity: T and Z NaN, as the Op's perform gives them (the py linker;
    the C backend's VM also runs perform). A matrix that is not square: scipy's
    ValueError (PyTensor's perform hands it to gees unchecked). The complex form and GPU
    targets are refused by name at compile time."""
    a = pt.dmatrix("a")
    f = pytensor.function([a], list(schur(a, sort=sort)), mode=MLIR)
    ref = pytensor.function([a], list(schur(a, sort=sort)), mode=PY)
    for bad in [np.nan, np.inf, -np.inf]:
        m = np.eye(3)
        m[1, 2] = bad
        for got, want in zip(f(m), ref(m)):
            assert np.isnan(got).all() and np.isnan(want).all()
    with pytest.raises(ValueError, match="square"):
        f(np.ones((2, 3)))
    for t, z in [f(np.zeros((0, 0)))]:
        assert t.shape == z.shape == (0, 0)
    with pytest.raises(NotImplementedError, match="complex"):
        pytensor.function([a], list(schur(a, output="complex", sort=sort)), mode=MLIR)
    with pytest.raises(NotImplementedError, match="Schur on a GPU target"):
        pytensor_mlir.compile_only([a], list(schur(a, sort=sort)), "cuda:sm_80")


SELECTS = {
    "lhp": lambda v: v.real < 0,
    "rhp": lambda v: v.real >= 0,
    "iuc": lambda v: abs(v) <= 1,
    "ouc": lambda v: abs(v) > 1,
}


def assert_sorted(t, t_ref, sort, scale):
    """The eigenvalues `sort` selects lead T's diagonal, and there are as many of them as
    on the C backend's T, unless one of those is within 1e-8 of the boundary (where
    rounding decides)."""
    select = SELECTS[sort]
    chosen = [bool(select(v)) for v in diagonal_eigenvalues(t)]
    k = sum(chosen)
    assert all(chosen[:k]) and not any(chosen[k:]), f"{sort}: not sorted: {chosen}"
    want = diagonal_eigenvalues(t_ref)
    distance = np.abs(want.real) / scale if sort in ("lhp", "rhp") else np.abs(np.abs(want) - 1)
    if len(want) and distance.min() > 1e-8:
        assert k == sum(bool(select(v)) for v in want), f"{sort}: {k} selected, the C backend {sum(map(select, want))}"


@pytest.mark.parametrize("sort", list(SELECTS))
def test_sorted_schur_forms_like_the_c_backend(sort):
    """`sort` (dtrsen's reordering in gees): the selected eigenvalues' blocks moved to the
    top by swaps of adjacent blocks, each 1 x 1 or 2 x 2. The result is still a Schur
    form of A with the C backend's eigenvalues, now in the two sets `sort` defines."""
    a = pt.dmatrix("a")
    f, ref = compile_both([a], list(schur(a, sort=sort)))
    rng = np.random.default_rng(11)
    for n in [1, 2, 3, 5, 8, 17, 40]:
        for name, m in matrices(rng, n):
            if sort in ("iuc", "ouc"):
                m = m / np.sqrt(n)  # as many eigenvalues inside the unit circle as out
            t, z = f(m)
            t_ref, _ = ref(m)
            try:
                assert_schur_form(t, z, m, t_ref, 1e-14)
                assert_sorted(t, t_ref, sort, max(np.abs(m).max(), 1e-300))
            except AssertionError as e:
                raise AssertionError(f"{name} {n} x {n}: {e}") from e


def test_sorting_moves_blocks_of_every_size_past_each_other():
    """A with known eigenvalues: complex pairs and real ones inside and outside the unit
    circle, interleaved, so that reordering swaps 1 x 1 and 2 x 2 blocks both ways. The
    leading block of T holds exactly those `sort` selects."""

    def pair(re, im):
        return np.array([[re, im], [-im, re]])

    inside = [pair(0.3, 0.4), np.array([[-0.5]]), pair(-0.2, 0.7), np.array([[0.9]])]
    outside = [pair(1.5, 1.0), np.array([[2.0]]), pair(-0.4, 1.2), np.array([[-3.0]])]
    blocks = [b for two in zip(outside, inside) for b in two]
    n = sum(len(b) for b in blocks)
    d = np.zeros((n, n))
    at = 0
    for b in blocks:
        d[at : at + len(b), at : at + len(b)] = b
        at += len(b)
    rng = np.random.default_rng(2)
    d += np.triu(rng.normal(size=(n, n)), 2)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    m = q @ d @ q.T
    a = pt.dmatrix("a")
    f, ref = compile_both([a], list(schur(a, sort="iuc")))
    t, z = f(m)
    t_ref, _ = ref(m)
    assert_schur_form(t, z, m, t_ref, 1e-14)
    k = sum(len(b) for b in inside)
    assert t[k, k - 1] == 0
    for part, want in [(t[:k, :k], inside), (t[k:, k:], outside)]:
        values = np.concatenate([np.linalg.eigvals(b) for b in want])
        assert_same_eigenvalues(diagonal_eigenvalues(part), values, 1e-12, 1e-12)


def test_a_reordering_that_rounding_leaves_out_of_order_is_nan():
    """A pair with real part 0 is not in the left half plane; the swaps that move the
    negative eigenvalues past it leave its real part as +-1e-17. Where it comes out
    negative, a selected pair follows an unselected eigenvalue: gees reports that
    (info = n + 2) and PyTensor gives NaN; so do we, and otherwise the form is sorted."""
    a = pt.dmatrix("a")
    # The reference eigenvalues from the C backend's unsorted form (its sorted one can
    # fail where ours does not).
    f = pytensor.function([a], list(schur(a, sort="lhp")), mode=MLIR)
    plain = pytensor.function([a], schur(a)[0], mode=C)
    rng = np.random.default_rng(0)
    failed = 0
    for _ in range(40):
        n = 3 + int(rng.integers(1, 4))
        m = np.triu(rng.normal(size=(n, n))) * 2
        diagonal = -np.abs(rng.normal(size=n)) - 0.1
        diagonal[0] = 1.0
        np.fill_diagonal(m, diagonal)
        w = rng.normal() * 3
        m[1:3, 1:3] = [[0, w], [-1 / w, 0]]
        t, z = f(m)
        if np.isnan(t).any():
            failed += 1
            assert np.isnan(t).all() and np.isnan(z).all()
        else:
            assert_schur_form(t, z, m, plain(m), 1e-14)
            assert_sorted(t, plain(m), "lhp", np.abs(m).max())
    assert 0 < failed < 40, failed


def quasi_triangular(rng, n):
    """A real Schur form with complex pairs (scipy's, of a random matrix)."""
    import scipy.linalg

    return scipy.linalg.schur(rng.normal(size=(n, n)))[0]


def test_trsyl_on_real_schur_forms_like_the_c_backend():
    """TRSYL (LAPACK's trsyl: R Y + Y S = F, R and S quasi-triangular) against the C
    backend's scipy call, over every combination of 1 x 1 and 2 x 2 blocks; shapes that do
    not fit raise ValueError; R and -S sharing an eigenvalue: trsyl's perturbed,
    huge but finite solution, as scipy's."""
    r, s, f = pt.dmatrix("r"), pt.dmatrix("s"), pt.dmatrix("f")
    fn, ref = compile_both([r, s, f], TRSYL()(r, s, f))
    rng = np.random.default_rng(11)
    for m, n in [(1, 1), (2, 2), (3, 4), (6, 5), (1, 7), (12, 9)]:
        for _ in range(3):
            args = [quasi_triangular(rng, m), quasi_triangular(rng, n), rng.normal(size=(m, n))]
            got, want = fn(*args), ref(*args)
            scale = np.abs(want).max()
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * scale, err_msg=f"{m} x {n}")
    # Shapes that do not fit: scipy's trsyl wrapper checks none of them (the C backend
    # returns what LAPACK computes reading past the arrays); a ValueError here.
    for bad in [[np.eye(2), np.eye(3), np.ones((3, 2))], [np.ones((2, 3)), np.eye(3), np.ones((2, 3))], [np.eye(2), np.ones((3, 2)), np.ones((2, 3))]]:
        with pytest.raises(ValueError, match="TRSYL"):
            fn(*bad)
    args = [np.array([[1.0, 2.0], [0.0, 3.0]]), np.array([[-1.0]]), np.array([[1.0], [3.0]])]
    got, want = fn(*args), ref(*args)
    assert np.isfinite(want).all() and np.abs(want).max() > 1e14
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(NotImplementedError, match="TRSYL on a GPU target"):
        pytensor_mlir.compile_only([r, s, f], TRSYL()(r, s, f), "cuda:sm_80")


def test_sylvester_solves_of_larger_systems():
    """solve_sylvester and solve_discrete_lyapunov at sizes the Kronecker form could not
    take (m n = 2000 to 3600 unknowns): Bartels-Stewart through the Schur forms and TRSYL,
    against the C backend (scipy's same route)."""
    a, b, q = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("q")
    syl = compile_both([a, b, q], pt.linalg.solve_sylvester(a, b, q))
    disc = compile_both([a, q], pt.linalg.solve_discrete_lyapunov(a, q))
    rng = np.random.default_rng(12)
    av, bv, qv = rng.normal(size=(40, 40)), rng.normal(size=(50, 50)), rng.normal(size=(40, 50))
    got, want = syl[0](av, bv, qv), syl[1](av, bv, qv)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())
    contracting = 0.9 * av / np.abs(np.linalg.eigvals(av)).max()
    qs = qv[:, :40] @ qv[:, :40].T
    got, want = disc[0](contracting, qs), disc[1](contracting, qs)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())
