"""`QZ` (scipy's qz and ordqz: the real generalized Schur form of a pencil, sorted or not)
and `solve_discrete_are`, whose inner graph sorts a QZ form, against the C backend
(LAPACK's gges and tgsen) on the same matrices. A generalized Schur form is not unique
(the blocks' order, the signs of Q's and Z's columns), so each result is checked for what
makes it one: A = Q AA Z^T, B = Q BB Z^T, Q and Z orthogonal, AA quasi-upper triangular,
BB upper triangular with a diagonal >= 0 and diagonal 2 x 2 blocks under AA's, and its
eigenvalues alpha / beta those of the C backend (ordqz's alpha and beta)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.tensor.linalg import qz, solve_discrete_are

import pytensor_mlir
from conftest import C, MLIR, compile_both
from test_schur import assert_same_eigenvalues

PY = Mode(linker="py", optimizer="fast_run")


def pencil_eigenvalues(aa, bb):
    """(finite eigenvalues alpha / beta, count of infinite ones (beta = 0)) read from the
    form's blocks."""
    import scipy.linalg

    n = aa.shape[0]
    finite, infinite, i = [], 0, 0
    while i < n:
        if i + 1 < n and aa[i + 1, i] != 0:
            finite += list(scipy.linalg.eigvals(aa[i : i + 2, i : i + 2], bb[i : i + 2, i : i + 2]))
            i += 2
        else:
            if bb[i, i] == 0:
                infinite += 1
            else:
                finite.append(complex(aa[i, i] / bb[i, i]))
            i += 1
    return np.array(finite), infinite


def reference_eigenvalues(alpha, beta, scale):
    """The C backend's (ordqz's) eigenvalues, split as `pencil_eigenvalues` splits ours:
    beta within rounding of 0 counts as infinite."""
    infinite = np.abs(beta) <= 1e-12 * scale
    return alpha[~infinite] / beta[~infinite], int(infinite.sum())


def assert_qz_form(form, a, b, reference, tol):
    """(AA, BB, Q, Z) a real generalized Schur form of (a, b) to `tol` (relative to each
    matrix's largest element), with the eigenvalues of `reference` ((alpha, beta) of the C
    backend)."""
    aa, bb, q, z = form
    n = a.shape[0]
    assert all(m.shape == (n, n) and m.dtype == aa.dtype for m in form)
    for m, full, name in [(aa, a, "A"), (bb, b, "B")]:
        scale = max(np.abs(full).max(), np.finfo(full.dtype).tiny) if n else 1.0
        assert np.abs(q @ m @ z.T - full).max() <= tol * scale * max(n, 1), f"{name} != Q {name}{name} Z^T"
    for m, name in [(q, "Q"), (z, "Z")]:
        assert np.abs(m.T @ m - np.eye(n)).max() <= tol * max(n, 1), f"{name} not orthogonal"
    assert not np.tril(aa, -2).any(), "AA has elements below its subdiagonal"
    assert not np.tril(bb, -1).any(), "BB is not upper triangular"
    assert (np.diag(bb) >= 0).all(), "BB has a negative diagonal element"
    sub = np.diag(aa, -1)
    for i in np.flatnonzero(sub):
        assert i + 1 >= len(sub) or sub[i + 1] == 0, f"two subdiagonal elements in a row at {i}"
        assert bb[i, i + 1] == 0 and bb[i, i] > 0 and bb[i + 1, i + 1] > 0, f"2 x 2 block at {i}: BB's block not diagonal"
        values, _ = pencil_eigenvalues(aa[i : i + 2, i : i + 2], bb[i : i + 2, i : i + 2])
        assert (values.imag != 0).all(), f"2 x 2 block at {i}: real eigenvalues"
    scale = max(np.abs(a).max(), np.abs(b).max(), 1e-300) if n else 1.0
    got, got_infinite = pencil_eigenvalues(aa, bb)
    want, want_infinite = reference_eigenvalues(*reference, np.abs(b).max() if n else 1.0)
    assert got_infinite == want_infinite, f"{got_infinite} infinite eigenvalues, the C backend {want_infinite}"
    assert_same_eigenvalues(got, want, 1e4 * tol, 1e4 * tol * scale)


def pencils(rng, n):
    """Random; B singular (leading columns 0), the identity, diagonal, upper triangular
    with zeros on its diagonal; integers; graded rows."""
    a, b = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    yield "normal", a, b
    singular = b.copy()
    singular[:, : n // 2] = 0
    yield "singular B", a, singular
    yield "identity B", a, np.eye(n)
    yield "diagonal", np.diag(rng.normal(size=n)), np.diag(rng.normal(size=n))
    t = np.triu(rng.normal(size=(n, n)))
    t[np.arange(0, n, 3), np.arange(0, n, 3)] = 0
    yield "triangular B, zero diagonal", a, t
    yield "integers", rng.integers(-3, 4, size=(n, n)).astype(float), rng.integers(-3, 4, size=(n, n)).astype(float) + 5 * np.eye(n)
    yield "graded", a * np.logspace(0, -10, n)[:, None], b


def compile_qz(x, y, sort=None):
    """Ours, and the C backend's form with its eigenvalues (ordqz's outputs)."""
    f = pytensor.function([x, y], list(qz(x, y, sort=sort)), mode=MLIR)
    ref = pytensor.function([x, y], list(qz(x, y, sort=sort, return_eigenvalues=True)), mode=C)
    return f, ref


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16, 30])
def test_qz_forms_like_the_c_backend(n):
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    f, ref = compile_qz(x, y)
    rng = np.random.default_rng(n)
    for name, a, b in pencils(rng, n):
        form = f(a, b)
        _, _, alpha, beta, _, _ = ref(a, b)
        try:
            assert_qz_form(form, a, b, (alpha, beta), 1e-14)
        except AssertionError as e:
            raise AssertionError(f"{name} {n} x {n}: {e}") from e


SELECTS = {
    "lhp": lambda v: v.real < 0,
    "rhp": lambda v: v.real > 0,
    "iuc": lambda v: abs(v) < 1,
    "ouc": lambda v: abs(v) > 1,
}


def assert_qz_sorted(form, sort, reference):
    """The blocks `sort` selects (PyTensor's rules: strict; an infinite eigenvalue selected
    by "ouc" only) lead, as many as the C backend selects unless one of its eigenvalues is
    within 1e-8 of the boundary. (A beta within rounding of 0 in the C backend's counts as
    an infinite eigenvalue, as ours is exactly 0: gges can leave it as 1e-17, whose ratio
    is then a huge finite eigenvalue with either sign.)"""
    aa, bb = form[0], form[1]
    n = aa.shape[0]
    chosen, i = [], 0
    while i < n:
        size = 2 if i + 1 < n and aa[i + 1, i] != 0 else 1
        if bb[i, i] == 0:
            chosen.append(sort == "ouc" and aa[i, i] != 0)
        else:
            values, _ = pencil_eigenvalues(aa[i : i + size, i : i + size], bb[i : i + size, i : i + size])
            chosen += [bool(SELECTS[sort](v)) for v in values]
        i += size
    k = sum(chosen)
    assert all(chosen[:k]) and not any(chosen[k:]), f"{sort}: not sorted: {chosen}"
    alpha, beta = reference
    finite = np.abs(beta) > 1e-12 * max(np.abs(beta).max(initial=0), 1e-300)
    values = alpha[finite] / beta[finite]
    want = sum(bool(SELECTS[sort](v)) for v in values) + (sort == "ouc") * int((~finite & (alpha != 0)).sum())
    distance = np.abs(values.real) if sort in ("lhp", "rhp") else np.abs(np.abs(values) - 1)
    if not len(values) or distance.min() > 1e-8:
        assert k == want, f"{sort}: {k} selected, the C backend {want}"


@pytest.mark.parametrize("sort", list(SELECTS))
def test_sorted_qz_forms_like_the_c_backend(sort):
    """`sort` (tgsen's reordering after gges): the selected blocks moved to the top by swaps
    of adjacent 1 x 1 and 2 x 2 blocks (a generalized Sylvester equation each). Still a
    form of (A, B) with the C backend's eigenvalues, now in the two sets `sort` defines."""
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    f, ref = compile_qz(x, y, sort)
    rng = np.random.default_rng(11)
    for n in [1, 2, 3, 5, 8, 17]:
        for name, a, b in pencils(rng, n):
            form = f(a, b)
            _, _, alpha, beta, _, _ = ref(a, b)
            try:
                assert_qz_form(form, a, b, (alpha, beta), 1e-14)
                assert_qz_sorted(form, sort, (alpha, beta))
            except AssertionError as e:
                raise AssertionError(f"{name} {n} x {n}: {e}") from e


def test_qz_in_float32_of_integers_scaled_and_stacked():
    """float32 stays float32 (its own tolerances); integer matrices give float64; elements
    near 1e300 and 1e-300 (each matrix scaled by a power of two first, so the shifts'
    products neither overflow nor underflow); a Blockwise stack, each matrix's form what
    the core op gives it alone."""
    rng = np.random.default_rng(5)
    x, y = pt.fmatrix("x"), pt.fmatrix("y")
    f, ref = compile_qz(x, y, "iuc")
    a, b = rng.normal(size=(9, 9)).astype("float32"), rng.normal(size=(9, 9)).astype("float32")
    form = f(a, b)
    _, _, alpha, beta, _, _ = ref(a, b)
    assert form[0].dtype == "float32"
    assert_qz_form(form, a, b, (alpha, beta), 2e-6)
    xi, yi = pt.lmatrix("xi"), pt.lmatrix("yi")
    f, ref = compile_qz(xi, yi)
    a, b = rng.integers(-5, 6, size=(6, 6)), rng.integers(-5, 6, size=(6, 6))
    form = f(a, b)
    assert form[0].dtype == "float64"
    assert_qz_form(form, a.astype(float), b.astype(float), ref(a, b)[2:4], 1e-14)
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    f, ref = compile_qz(x, y)
    a, b = rng.normal(size=(8, 8)), rng.normal(size=(8, 8))
    for sa, sb in [(1e300, 1e-300), (1e-300, 1e300), (2.0**-1060, 1.0)]:
        form = f(a * sa, b * sb)
        assert all(np.isfinite(m).all() for m in form), (sa, sb)
        # The reference of the matrices as scaling rounded them (2^-1060 leaves about 14
        # bits of a subnormal element), scaled back exactly.
        _, _, alpha, beta, _, _ = ref((a * sa) / sa, (b * sb) / sb)
        # (AA itself is subnormal there, to about 14 bits: its blocks' eigenvalues so.)
        tol = 1e-9 if sa > 1e-310 else 1e-3
        assert_same_eigenvalues(pencil_eigenvalues(form[0] / sa, form[1] / sb)[0], alpha / beta, tol, tol)
    s, t = pt.dtensor3("s"), pt.dtensor3("t")
    f, ref = compile_qz(s, t)
    a, b = rng.normal(size=(3, 5, 5)), rng.normal(size=(3, 5, 5))
    form = f(a, b)
    _, _, alpha, beta, _, _ = ref(a, b)
    for k in range(3):
        part = [m[k] for m in form]
        assert_qz_form(part, a[k], b[k], (alpha[k], beta[k]), 1e-14)


def test_qz_of_non_finite_input_bad_shapes_and_refused_forms():
    """A NaN or an infinity in either matrix: every output NaN, as the Op's perform gives
    them where gges fails (for an infinity LAPACK may also return finite garbage, and a
    pencil already in the form as it is, NaN in place: ours is NaN everywhere). Matrices that are not square or not of one size: ValueError (gges
    reads past them unchecked). The complex form, eigenvalue outputs (complex alpha) and
    GPU targets are refused by name at compile time."""
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    f = pytensor.function([x, y], list(qz(x, y, sort="lhp")), mode=MLIR)
    ref = pytensor.function([x, y], list(qz(x, y, sort="lhp")), mode=PY)
    rng = np.random.default_rng(1)
    for bad in [np.nan, np.inf, -np.inf]:
        for which in range(2):
            m = [rng.normal(size=(3, 3)), rng.normal(size=(3, 3))]
            m[which][1, 2] = bad
            # The reference: NaN for a NaN (but the zeros below the diagonal it puts
            # there); for an infinity, sometimes NaN and sometimes LAPACK's finite garbage.
            for got, want in zip(f(*m), ref(*m)):
                assert np.isnan(got).all()
                if np.isnan(bad):
                    assert np.isnan(want[np.triu_indices(3)]).all()
    for shapes in [((2, 3), (2, 3)), ((3, 3), (2, 2)), ((3, 3), (3, 2))]:
        with pytest.raises(ValueError, match="QZ"):
            f(np.ones(shapes[0]), np.ones(shapes[1]))
    assert all(m.shape == (0, 0) for m in f(np.zeros((0, 0)), np.zeros((0, 0))))
    with pytest.raises(NotImplementedError, match="complex"):
        pytensor.function([x, y], list(qz(x, y, output="complex")), mode=MLIR)
    with pytest.raises(NotImplementedError, match="complex128 is not supported"):
        pytensor.function([x, y], list(qz(x, y, return_eigenvalues=True)), mode=MLIR)
    with pytest.raises(NotImplementedError, match="QZ on a GPU target"):
        pytensor_mlir.compile_only([x, y], list(qz(x, y)), "cuda:sm_80")


def riccati_problems(rng):
    """(A, B, Q, R) of discrete algebraic Riccati equations with a stabilizing solution:
    random (A unstable too); A singular (the pencil has infinite eigenvalues); R = 0 (no
    observation noise in a state-space model's filter); Q = 0 with A unstable; m > n."""
    for n, m in [(1, 1), (2, 1), (3, 2), (5, 3), (8, 2), (4, 6)]:
        a = rng.normal(size=(n, n)) * rng.choice([0.5, 1.5])
        b = rng.normal(size=(n, m))
        q = rng.normal(size=(n, n))
        r = rng.normal(size=(m, m))
        yield f"random {n} x {m}", a, b, q @ q.T + 0.1 * np.eye(n), r @ r.T + 0.1 * np.eye(m)
    companion = np.array([[0.5, 1.0, 0.0], [0.2, 0.0, 1.0], [0.0, 0.0, 0.0]])
    b = rng.normal(size=(3, 2))
    yield "A singular", companion, b, np.eye(3), np.eye(2)
    yield "R zero", rng.normal(size=(3, 3)), b, np.eye(3), np.zeros((2, 2))
    yield "Q zero", 1.5 * rng.normal(size=(3, 3)), b, np.zeros((3, 3)), np.eye(2)


def test_solve_discrete_are_like_the_c_backend():
    """solve_discrete_are's inner graph (the extended pencil's QR, QZ sorted "iuc", an LU
    solve and PyTensor's symmetry check) against the C backend. For a non-symmetric Q (no
    symmetric solution) both give NaN; for a non-finite input, the inner LU's ValueError
    (the C backend: NaN).
    (Where the pencil has an eigenvalue exactly on the unit circle, e.g. an uncontrollable
    unit root, the C backend computes it exactly, gges's balancing permuting it apart, and
    gives NaN; ours is within rounding of 1 and gives a huge finite X: see the README.)"""
    a, b, q, r = (pt.dmatrix(name) for name in "abqr")
    f, ref = compile_both([a, b, q, r], solve_discrete_are(a, b, q, r))
    rng = np.random.default_rng(3)
    for name, *args in riccati_problems(rng):
        got, want = f(*args), ref(*args)
        # The solution's condition: tolerances as for scipy's own tests of this solver.
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9 * np.abs(want).max(), err_msg=name)
        np.testing.assert_array_equal(got, got.T, err_msg=name)
    n, m = 3, 2
    bm = rng.normal(size=(n, m))
    for name, args in [
        ("Q not symmetric", (rng.normal(size=(n, n)), bm, np.eye(n) + np.triu(np.ones((n, n)), 1), np.eye(m))),
    ]:
        assert np.isnan(ref(*args)).all(), name
        assert np.isnan(f(*args)).all(), name
    bad = rng.normal(size=(n, n))
    bad[0, 0] = np.nan
    # Both raise LU's ValueError (scipy's check_finite): the C backend runs the OpFromGraph's
    # inner graph in PyTensor's default mode, the C backend here (conftest; Numba's LU does
    # not check and returns NaN).
    for g in (f, ref):
        with pytest.raises(ValueError, match="infs or NaNs"):
            g(bad, bm, np.eye(n), np.eye(m))


def test_solve_discrete_are_gradient():
    """The gradient PyTensor derives (its pullback solves the equation again and a discrete
    Lyapunov equation) against the C backend. (Stacks: Blockwise{QZ} in the float32 test,
    through the same Blockwise loop.)"""
    rng = np.random.default_rng(8)
    a, b, q, r = (pt.dmatrix(name) for name in "abqr")
    x = solve_discrete_are(a, b, q, r)
    cost = (x * pt.arange(9.0).reshape((3, 3))).sum()
    grads = pytensor.grad(cost, [a, b, q, r])
    f, ref = compile_both([a, b, q, r], grads)
    args = (rng.normal(size=(3, 3)), rng.normal(size=(3, 2)), np.eye(3) * 1.5, np.eye(2))
    for got, want in zip(f(*args), ref(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9 * np.abs(want).max())
