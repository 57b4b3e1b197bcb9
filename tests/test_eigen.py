"""`Eigh` and `Eigvalsh` (lower/eigen.rs: on the CPU tridiagonal reduction and QL,
lower/dense_kernels/symmetric_eigen.rs; on GPUs cyclic Jacobi rotations) against the C backend
(scipy's syevd) on the same inputs: eigenvalues ascending and equal within rounding,
eigenvectors orthonormal, reconstructing A and equal to scipy's up to sign where the
eigenvalues are distinct; the lower or upper triangle read; float32; stacks through
Blockwise (one dispatch on the CPU); the gradient; degenerate, zero and empty matrices; non-finite input; a matrix
that is not square."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.linalg import eigvalsh

from conftest import assert_same, compile_both, raises_like


def symmetric(rng, n, dtype="float64"):
    a = rng.normal(size=(n, n))
    return (a + a.T).astype(dtype)


def positive_definite(rng, n, spread):
    """A random symmetric positive definite matrix with eigenvalues from 1 to `spread`."""
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (q * np.geomspace(1.0, spread, n)) @ q.T


def assert_eigensystem(w, v, a, w_ref, v_ref, rtol):
    n = a.shape[0]
    scale = max(1.0, float(np.abs(w_ref).max(initial=0.0)))
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=rtol * scale * max(n, 1))
    assert np.all(np.diff(w) >= 0), "eigenvalues not ascending"
    # A V = V diag(w), V orthonormal.
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, a, rtol=0, atol=rtol * scale * max(n, 1) * 4)
    np.testing.assert_allclose(v.T @ v, np.eye(n), rtol=0, atol=rtol * max(n, 1) * 4)
    # Where the eigenvalues are distinct, each column is scipy's up to its sign.
    gaps = np.diff(w_ref)
    for k in range(n):
        distinct = (k == 0 or gaps[k - 1] > 1e-3 * scale) and (k == n - 1 or gaps[k] > 1e-3 * scale)
        if distinct:
            sign = np.sign(v[:, k] @ v_ref[:, k])
            np.testing.assert_allclose(sign * v[:, k], v_ref[:, k], rtol=0, atol=rtol * 1e3 * max(n, 1))


def test_eigh_and_eigvalsh_of_symmetric_matrices():
    x = pt.dmatrix("x")
    w, v = pt.linalg.eigh(x)
    f, ref = compile_both([x], [w, v, eigvalsh(x, None)])
    assert {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes} >= {"Eigh", "Eigvalsh"}
    rng = np.random.default_rng(0)
    cases = [symmetric(rng, n) for n in [1, 2, 3, 7, 16]]
    cases += [np.zeros((4, 4)), np.eye(3), np.diag([1.0, 1.0, 2.0, 2.0, 3.0]), np.diag(10.0 ** np.arange(0, -14, -2))]
    # A graded matrix (checked to the absolute tolerance LAPACK's own route meets).
    cases.append(np.array([[1.0, 1e-4, 0.0], [1e-4, 1e-6, 1e-9], [0.0, 1e-9, 1e-12]]))
    for a in cases:
        kept = a.copy()
        gw, gv, gvals = f(a)
        rw, rv, rvals = ref(a)
        np.testing.assert_array_equal(a, kept)
        assert gw.dtype == rw.dtype and gv.shape == rv.shape
        assert_eigensystem(gw, gv, a, rw, rv, rtol=1e-14)
        np.testing.assert_allclose(gvals, rvals, rtol=0, atol=1e-14 * max(1.0, np.abs(rvals).max(initial=0)) * len(a))


def test_the_triangle_read():
    """Only the lower (upper) triangle is read, as LAPACK does: a matrix that is not
    symmetric gives the eigensystem of its lower (upper) half mirrored."""
    x = pt.dmatrix("x")
    outs = [*pt.linalg.eigh(x, lower=True), *pt.linalg.eigh(x, lower=False)]
    f, ref = compile_both([x], outs)
    a = np.random.default_rng(1).normal(size=(5, 5))
    got, want = f(a), ref(a)
    assert_eigensystem(got[0], got[1], np.tril(a) + np.tril(a, -1).T, want[0], want[1], rtol=1e-14)
    assert_eigensystem(got[2], got[3], np.triu(a) + np.triu(a, 1).T, want[2], want[3], rtol=1e-14)


def test_float32_and_a_stack_through_blockwise():
    xf, x3 = pt.fmatrix("xf"), pt.tensor3("x3")
    f, ref = compile_both([xf, x3], [*pt.linalg.eigh(xf), pt.linalg.eigh(x3)[0]])
    rng = np.random.default_rng(2)
    a, stack = symmetric(rng, 6, "float32"), np.stack([symmetric(rng, 4) for _ in range(3)])
    got, want = f(a, stack), ref(a, stack)
    assert got[0].dtype == np.float32 == want[0].dtype
    assert_eigensystem(got[0].astype(float), got[1].astype(float), a.astype(float), want[0].astype(float), want[1].astype(float), rtol=2e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=0, atol=1e-13)


@pytest.mark.parametrize("lower", [True, False])
def test_stacks_are_one_dispatch_one_workgroup_a_matrix(lower):
    """Blockwise{Eigh} and {Eigvalsh} over two batch dims on the CPU: one dispatch of one
    workgroup a matrix (no loop of the host program), each matrix's eigensystem what the
    core op gives it alone, its triangle read; a non-finite element anywhere raises
    scipy's ValueError and matrices that are not square numpy's LinAlgError, as the C
    backend's loop; empty batches and 0 x 0 matrices."""
    x = pt.dtensor4("x")
    outs = [*pt.linalg.eigh(x, lower=lower), eigvalsh(x, None, lower=lower)]
    f, ref = compile_both([x], outs)
    assert "util.optimization_barrier" not in f.maker.linker.compiled.mlir
    rng = np.random.default_rng(5)
    for shape in [(2, 3, 5, 5), (1, 1, 1, 1), (3, 1, 12, 12)]:
        m = rng.normal(size=shape)
        m[0, 0] = np.diag([1.0, 1.0, 2.0, 2.0, 3.0] * 3)[: shape[-1], : shape[-1]]  # repeated eigenvalues
        w, v, vals = f(m)
        w_ref, v_ref, vals_ref = ref(m)
        for k in np.ndindex(*shape[:2]):
            a = np.tril(m[k]) + np.tril(m[k], -1).T if lower else np.triu(m[k]) + np.triu(m[k], 1).T
            assert_eigensystem(w[k], v[k], a, w_ref[k], v_ref[k], rtol=1e-14)
            np.testing.assert_allclose(vals[k], vals_ref[k], rtol=0, atol=1e-13 * max(1, np.abs(vals_ref[k]).max()))
    for shape in [(0, 2, 3, 3), (2, 2, 0, 0)]:
        assert [r.shape for r in f(np.zeros(shape))] == [shape[:-1], shape, shape[:-1]]
    bad = rng.normal(size=(2, 2, 3, 3))
    bad[1, 0, 0, 2] = np.nan
    raises_like(f, ref, [bad])
    got_e, _ = raises_like(f, ref, [np.ones((2, 2, 3, 2))])
    assert type(got_e).__name__ == "LinAlgError"
    # A batch dim of static size 1 (broadcastable) on the lone operand: stacked too.
    x1 = pt.tensor("x1", dtype="float64", shape=(1, None, None, None))
    g, g_ref = compile_both([x1], [eigvalsh(x1, None, lower=lower)])
    assert "util.optimization_barrier" not in g.maker.linker.compiled.mlir
    m = rng.normal(size=(1, 3, 4, 4))
    np.testing.assert_allclose(g(m)[0], g_ref(m)[0], rtol=0, atol=1e-13 * np.abs(m).max() * 4)


def test_gradient():
    x = pt.dmatrix("x")
    w, v = pt.linalg.eigh(x)
    # A cost that does not depend on the eigenvectors' signs.
    cost = (w**2 * pt.arange(1, 5)).sum() + ((v**2) * pt.arange(4)).sum()
    f, ref = compile_both([x], [cost, pytensor.grad(cost, x)])
    a = symmetric(np.random.default_rng(3), 4)
    for g, r in zip(f(a), ref(a)):
        assert_same(g, r, rtol=1e-9)


def test_non_finite_input_and_bad_shapes():
    x = pt.dmatrix("x")
    f, ref = compile_both([x], [eigvalsh(x, None), *pt.linalg.eigh(x)])
    # Non-finite anywhere, even in the triangle not read: scipy's check_finite ValueError.
    for bad in [np.nan, np.inf]:
        for at in [(2, 1), (0, 2)]:
            a = np.eye(3)
            a[at] = bad
            raises_like(f, ref, [a])
    # Not square: numpy's LinAlgError, as the C backend raises.
    got_e, want_e = raises_like(f, ref, [np.ones((3, 2))])
    assert type(got_e).__name__ == "LinAlgError"


def test_generalized_eigenvalues():
    """Eigvalsh(a, b) vs C (scipy's sygvd): B positive definite, well and less well
    conditioned, diagonal, identity (the standard problem), 1x1, empty, lower and upper
    triangles of non-symmetric inputs; B not positive definite (LinAlgError), non-finite
    (ValueError), another size (an error as C)."""
    rng = np.random.default_rng(11)
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    fs = [compile_both([x, y], eigvalsh(x, y, lower=lower)) for lower in (True, False)]

    cases = [
        (symmetric(rng, 5), positive_definite(rng, 5, 10.0)),
        (symmetric(rng, 6), positive_definite(rng, 6, 1e4)),
        (symmetric(rng, 4), np.diag([1.0, 2.0, 3.0, 4.0])),
        (symmetric(rng, 4), np.eye(4)),
        (np.zeros((3, 3)), positive_definite(rng, 3, 5.0)),
        (np.array([[3.0]]), np.array([[2.0]])),
        (np.zeros((0, 0)), np.zeros((0, 0))),
    ]
    for lower, (f, ref) in zip((True, False), fs):
        # Only the triangle read counts: the other one is noise.
        triangle, other = (np.tril, lambda m: np.triu(m, 1)) if lower else (np.triu, lambda m: np.tril(m, -1))
        noisy = (rng.normal(size=(4, 4)), triangle(positive_definite(rng, 4, 3.0)) + other(rng.normal(size=(4, 4))))
        for a, b in cases + [noisy]:
            got, want = f(a, b), ref(a, b)
            scale = max(1.0, float(np.abs(want).max(initial=0.0)))
            cond = np.linalg.cond(b) if b.size else 1.0
            assert_same(got, want, rtol=0, atol=1e-14 * scale * cond * max(len(a), 1), err_msg=f"{a}, {b}")
        got_e, _ = raises_like(f, ref, [np.eye(2), -np.eye(2)])
        assert type(got_e).__name__ == "LinAlgError"
        raises_like(f, ref, [np.eye(2), np.array([[1.0, 0.0], [0.0, np.nan]])])
        raises_like(f, ref, [np.eye(2), np.eye(3)])


def test_generalized_eigenvectors():
    """Eigh(a, b) vs C (scipy's eigh with b, sygvd): eigenvalues equal within B's
    condition, A X = B X diag(w), X^T B X = I (sygvd's normalization), each column
    scipy's up to sign where the eigenvalues are distinct; lower and upper triangles of
    non-symmetric inputs; float32; the errors of Eigvalsh(a, b); a Blockwise stack and the
    gradient of a cost that does not depend on the columns' signs."""
    rng = np.random.default_rng(12)
    x, y = pt.dmatrix("x"), pt.dmatrix("y")

    cases = [
        (symmetric(rng, 5), positive_definite(rng, 5, 10.0)),
        (symmetric(rng, 6), positive_definite(rng, 6, 1e3)),
        (symmetric(rng, 4), np.diag([1.0, 2.0, 3.0, 4.0])),
        (symmetric(rng, 3), np.eye(3)),
        (np.array([[3.0]]), np.array([[2.0]])),
        (np.zeros((0, 0)), np.zeros((0, 0))),
    ]
    for lower in (True, False):
        f, ref = compile_both([x, y], pt.linalg.eigh(x, y, lower=lower))
        assert "Eigh" in {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
        triangle, other = (np.tril, lambda m: np.triu(m, 1)) if lower else (np.triu, lambda m: np.tril(m, -1))
        noisy = (rng.normal(size=(4, 4)), triangle(positive_definite(rng, 4, 3.0)) + other(rng.normal(size=(4, 4))))
        for a, b in cases + [noisy]:
            (gw, gv), (rw, rv) = f(a, b), ref(a, b)
            assert gw.dtype == rw.dtype and gv.shape == rv.shape
            n = len(a)
            if n == 0:
                continue
            full_a = triangle(a) + triangle(a, -1 if lower else 1).T
            full_b = triangle(b) + triangle(b, -1 if lower else 1).T
            scale = max(1.0, float(np.abs(rw).max()))
            tol = 1e-14 * np.linalg.cond(full_b) * n
            np.testing.assert_allclose(gw, rw, rtol=0, atol=tol * scale)
            assert np.all(np.diff(gw) >= 0), "eigenvalues not ascending"
            np.testing.assert_allclose(full_a @ gv, full_b @ gv * gw, rtol=0, atol=tol * scale * np.abs(gv).max() * 4)
            np.testing.assert_allclose(gv.T @ full_b @ gv, np.eye(n), rtol=0, atol=tol * 4)
            gaps = np.diff(rw)
            for k in range(n):
                if (k == 0 or gaps[k - 1] > 1e-3 * scale) and (k == n - 1 or gaps[k] > 1e-3 * scale):
                    sign = np.sign(gv[:, k] @ full_b @ rv[:, k])
                    np.testing.assert_allclose(sign * gv[:, k], rv[:, k], rtol=0, atol=tol * 1e3 * np.abs(rv).max())
        got_e, _ = raises_like(f, ref, [np.eye(2), -np.eye(2)])
        assert type(got_e).__name__ == "LinAlgError"
        raises_like(f, ref, [np.eye(2), np.array([[1.0, 0.0], [0.0, np.nan]])])
        raises_like(f, ref, [np.array([[1.0, np.inf], [np.inf, 1.0]]), np.eye(2)])
        raises_like(f, ref, [np.eye(2), np.eye(3)])

    # float32 (eigenvalues within f32 rounding of C's float32 result).
    xf, yf = pt.fmatrix("xf"), pt.fmatrix("yf")
    f, ref = compile_both([xf, yf], pt.linalg.eigh(xf, yf))
    a, b = symmetric(rng, 5, "float32"), positive_definite(rng, 5, 10.0).astype("float32")
    (gw, gv), (rw, rv) = f(a, b), ref(a, b)
    assert gw.dtype == rw.dtype == np.float32
    np.testing.assert_allclose(gw, rw, rtol=0, atol=1e-5 * 10 * np.abs(rw).max())
    np.testing.assert_allclose(gv.T @ b @ gv, np.eye(5), rtol=0, atol=1e-4)

    # A stack of problems, and the gradient through both inputs of a cost that does not
    # depend on the columns' signs.
    xs, ys = pt.tensor3("xs"), pt.tensor3("ys")
    w, v = pt.linalg.eigh(xs, ys)
    cost = (w**2).sum() + (v**2).sum()
    f, ref = compile_both([xs, ys], [w, pt.grad(cost, xs), pt.grad(cost, ys)])
    a = np.stack([symmetric(rng, 4) for _ in range(3)])
    b = np.stack([positive_definite(rng, 4, 5.0) for _ in range(3)])
    for got, want in zip(f(a, b), ref(a, b)):
        assert_same(got, want, rtol=1e-9, atol=1e-10)


def test_singular_values():
    """`svd(compute_uv=False)` (on the CPU bidiagonalization and the Golub-Kahan
    tridiagonal's QL, dense_kernels/bidiagonal.rs): numpy's singular values, descending, for
    tall, wide, square (past the kernels' eight-lane chunks too), rank-deficient, graded,
    diagonal (values exact, as LAPACK's) and empty matrices, float32 too; numpy's
    LinAlgError for a NaN, NaN values for an infinity."""
    x, xf = pt.dmatrix("x"), pt.fmatrix("xf")
    f, ref = compile_both([x, xf], [pt.linalg.svd(x, compute_uv=False), pt.linalg.svd(xf, compute_uv=False)])
    assert "SVD" in {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    rng = np.random.default_rng(4)
    low_rank = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 5))
    graded = rng.normal(size=(5, 5)) * 10.0 ** -np.arange(0, 15, 3)
    big = [rng.normal(size=(45, 30)), rng.normal(size=(30, 45)), rng.normal(size=(64, 64)), rng.normal(size=(20, 17)) @ rng.normal(size=(17, 40))]
    for a in [rng.normal(size=(7, 3)), rng.normal(size=(3, 7)), rng.normal(size=(5, 5)), low_rank, graded, np.zeros((3, 2)), np.ones((1, 4)), np.zeros((0, 3))] + big:
        got, want = f(a, a.astype("float32")), ref(a, a.astype("float32"))
        assert got[0].shape == want[0].shape and got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
        scale = max(1.0, float(want[0].max(initial=0.0)))
        np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-14 * scale * max(a.shape))
        np.testing.assert_allclose(got[1], want[1], rtol=0, atol=2e-6 * scale * max(a.shape))
        assert np.all(np.diff(got[0]) <= 0)
    # The graded matrix's smallest values, relative to themselves (graded by columns,
    # LAPACK's and our bidiagonalization keep them).
    got = f(graded, graded.astype("float32"))[0]
    np.testing.assert_allclose(got, ref(graded, graded.astype("float32"))[0], rtol=1e-10)
    # Subnormal entries: W scaled by a power of two first (all values were 0).
    a = rng.normal(size=(6, 4)) * 1e-310
    got, want = f(a, a.astype("float32"))[0], ref(a, a.astype("float32"))[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * want.max())
    # Diagonal and 1 x 1 matrices: |d| exactly, sorted.
    for a in [np.diag([1.0, -5.0, 3.0, 0.0, 2.5]), np.eye(4), np.array([[-3.0]]), np.array([[1.0, 0.0, 0.0], [0.0, -2.0, 0.0]])]:
        for g, w in zip(f(a, a.astype("float32")), ref(a, a.astype("float32"))):
            np.testing.assert_array_equal(g, w)
    bad = np.eye(3)
    bad[1, 2] = np.nan
    raises_like(f, ref, [bad, bad.astype("float32")])
    # An infinity without a NaN: gesdd's values are all NaN, no error.
    bad[1, 2] = -np.inf
    for g, w in zip(f(bad, bad.astype("float32")), ref(bad, bad.astype("float32"))):
        assert_same(g, w)


def assert_svd(got, want, a, rtol, full):
    """(U, s, V^T) against numpy's (the C backend's) for `a`: s equal within rounding and
    descending, U diag(s) V^T = A, U and V^T orthonormal (the completed columns too, all
    m of U and n of V^T with `full`), and each column numpy's up to sign where its value
    is distinct and not ~0."""
    u, s, vt = got
    ru, rs, rvt = want
    m, n = a.shape
    k = min(m, n)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    size = max(m, n, 1)
    scale = max(1.0, float(rs.max(initial=0.0)))
    np.testing.assert_allclose(s, rs, rtol=0, atol=rtol * scale * size)
    assert np.all(np.diff(s) <= 0), "singular values not descending"
    np.testing.assert_allclose((u[:, :k] * s) @ vt[:k], a, rtol=0, atol=rtol * scale * size * 4)
    np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), rtol=0, atol=rtol * size * 4)
    np.testing.assert_allclose(vt @ vt.T, np.eye(vt.shape[0]), rtol=0, atol=rtol * size * 4)
    gaps = -np.diff(rs)
    for j in range(k):
        distinct = (j == 0 or gaps[j - 1] > 1e-3 * scale) and (j == k - 1 or gaps[j] > 1e-3 * scale)
        if distinct and rs[j] > 1e-3 * scale:
            sign = np.sign(u[:, j] @ ru[:, j])
            np.testing.assert_allclose(sign * u[:, j], ru[:, j], rtol=0, atol=rtol * 1e3 * size)
            np.testing.assert_allclose(sign * vt[j], rvt[j], rtol=0, atol=rtol * 1e3 * size)


def test_singular_vectors():
    """`svd(compute_uv=True)`, economic and full, vs C (numpy's gesdd): tall, wide, square,
    1x1, zero, rank-deficient (low rank, repeated rows: U's columns for the zero values
    completed to an orthonormal basis), empty, float32, a stack through Blockwise; numpy's
    LinAlgError for a non-finite element."""
    x, xf, x3 = pt.dmatrix("x"), pt.fmatrix("xf"), pt.dtensor3("x3")
    outs = [*pt.linalg.svd(x, full_matrices=False), *pt.linalg.svd(x), *pt.linalg.svd(xf, full_matrices=False), *pt.linalg.svd(xf)]
    outs += pt.linalg.svd(x3, full_matrices=False)
    f, ref = compile_both([x, xf, x3], outs)
    assert "SVD" in {type(n.op.core_op if hasattr(n.op, "core_op") else n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    rng = np.random.default_rng(5)
    low_rank = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 5))
    repeated = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    zero_column = rng.normal(size=(4, 3))
    zero_column[:, 1] = 0.0
    cases = [rng.normal(size=(7, 3)), rng.normal(size=(3, 7)), rng.normal(size=(5, 5)), np.array([[-2.5]]), np.zeros((3, 2)), np.zeros((2, 3))]
    cases += [low_rank, low_rank.T, repeated, repeated.T, zero_column, np.ones((1, 4)), np.ones((4, 1)), np.zeros((3, 0)), np.zeros((0, 3))]
    stack = np.stack([rng.normal(size=(4, 3)), low_rank[:4, :3], np.zeros((4, 3))])
    for a in cases:
        kept = a.copy()
        got, want = f(a, a.astype("float32"), stack), ref(a, a.astype("float32"), stack)
        np.testing.assert_array_equal(a, kept)
        for at, rtol, full in [(0, 1e-14, False), (3, 1e-14, True), (6, 2e-6, False), (9, 2e-6, True)]:
            c = a if rtol < 1e-10 else a.astype("float32").astype(float)
            assert_svd(got[at : at + 3], want[at : at + 3], c, rtol, full)
    for i in range(len(stack)):
        assert_svd([o[i] for o in got[12:]], [o[i] for o in want[12:]], stack[i], 1e-14, False)
    # NaN: LAPACK's gesdd refuses it, numpy raises LinAlgError (an infinity with it too).
    for a in [np.array([[1.0, 2.0], [np.nan, 3.0], [4.0, 5.0]]), np.array([[np.inf, np.nan, 1.0]]), np.full((2, 2), np.nan)]:
        got_e, _ = raises_like(f, ref, [a, a.astype("float32"), stack])
        assert type(got_e).__name__ == "LinAlgError"
    # An infinity alone: numpy's values are all NaN, U and V^T partly NaN as LAPACK leaves
    # them (not reproduced: ours are NaN throughout).
    for a in [np.array([[1.0, 2.0], [np.inf, 3.0], [4.0, 5.0]]), np.array([[-np.inf, 1.0, 2.0], [0.0, 1.0, np.inf]]), np.array([[np.inf]])]:
        got, want = f(a, a.astype("float32"), stack), ref(a, a.astype("float32"), stack)
        for at in range(0, 12, 3):
            assert_same(got[at + 1], want[at + 1])
            assert np.isnan(want[at + 1]).all()
            for o in (0, 2):
                assert got[at + o].shape == want[at + o].shape and got[at + o].dtype == want[at + o].dtype
                assert np.isnan(got[at + o]).all()


def test_hermitian_pinv():
    """MatrixPinv(hermitian=True) vs C (numpy's pinv through eigh, lower triangle, rcond
    1e-15): well conditioned, exactly rank deficient (zero rows and columns), indefinite,
    a non-symmetric input (only the lower triangle counts), zero, 1x1, empty, float32,
    non-finite (all NaN, as numpy), not square (LinAlgError)."""
    from pytensor.tensor.linalg import pinv

    rng = np.random.default_rng(7)
    x = pt.dmatrix("x")
    f, ref = compile_both([x], pinv(x, hermitian=True))
    b = symmetric(rng, 3)
    deficient = np.zeros((5, 5))
    deficient[np.ix_([0, 2, 4], [0, 2, 4])] = b
    cases = [
        symmetric(rng, 6) + 6 * np.eye(6),
        symmetric(rng, 5),
        deficient,
        np.tril(rng.normal(size=(4, 4))) + np.triu(rng.normal(size=(4, 4)), 1),
        np.zeros((3, 3)),
        np.array([[-2.5]]),
        np.array([[0.0]]),
        np.zeros((0, 0)),
        np.array([[1.0, np.nan], [np.nan, 2.0]]),
        np.array([[1.0, 0.0], [np.inf, 2.0]]),
    ]
    for a in cases:
        got, want = f(a), ref(a)
        scale = max(1.0, float(np.nanmax(np.abs(want), initial=0.0)))
        assert_same(got, want, rtol=0, atol=1e-12 * scale, err_msg=repr(a))
    raises_like(f, ref, [np.ones((2, 3))])

    x32 = pt.fmatrix("x32")
    f32, ref32 = compile_both([x32], pinv(x32, hermitian=True))
    a = symmetric(rng, 5, "float32") + np.float32(5) * np.eye(5, dtype="float32")
    got, want = f32(a), ref32(a)
    assert_same(got, want, rtol=0, atol=1e-5 * float(np.abs(want).max()))

    # A stack through Blockwise, and the gradient (PyTensor's pullback: products of X, X^+).
    s = pt.dtensor3("s")
    y = pinv(s, hermitian=True)
    weights = rng.normal(size=(4, 4))
    fs, refs = compile_both([s], [y, pytensor.grad((y * weights).sum(), s)])
    stack = np.stack([symmetric(rng, 4) + 4 * np.eye(4), symmetric(rng, 4), np.zeros((4, 4))])
    for got, want in zip(fs(stack), refs(stack)):
        assert_same(got, want, rtol=0, atol=1e-11 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("full", [False, True])
def test_svd_stacks_are_one_dispatch_one_workgroup_a_matrix(full):
    """Blockwise{SVD} over two batch dims on the CPU: each kernel one dispatch of one
    workgroup a matrix, no loop of the host program; each matrix's values, U and V^T what
    the core op gives it alone (square, tall, wide, a zero matrix), values alone too; a
    matrix with an infinity NaN throughout and its neighbours untouched (checked on ours
    alone: LAPACK's gesdd did not return on that stack); a NaN raises LinAlgError."""
    x = pt.dtensor4("x")
    outs = [*pt.linalg.svd(x, full_matrices=full), pt.linalg.svd(x, compute_uv=False)]
    f, ref = compile_both([x], outs)
    assert "util.optimization_barrier" not in f.maker.linker.compiled.mlir
    rng = np.random.default_rng(9)
    for shape in [(2, 3, 5, 5), (1, 2, 7, 4), (2, 1, 4, 7)]:
        m = rng.normal(size=shape)
        m[0, 0] = 0.0
        got, want = f(m), ref(m)
        for k in np.ndindex(*shape[:2]):
            assert_svd([o[k] for o in got[:3]], [o[k] for o in want[:3]], m[k], 1e-14, full)
            np.testing.assert_allclose(got[3][k], want[3][k], rtol=0, atol=1e-13 * max(1, want[3][k].max(initial=0)))
    m = rng.normal(size=(1, 2, 3, 3))
    clean = f(m)
    m[0, 0, 1, 2] = np.inf
    got = f(m)
    for o, c in zip(got, clean):
        assert np.isnan(o[0, 0]).all()
        np.testing.assert_array_equal(o[0, 1], c[0, 1])
    m[0, 1, 0, 0] = np.nan
    with pytest.raises(Exception) as e:
        f(m)
    assert type(e.value).__name__ == "LinAlgError"
    for shape in [(0, 2, 3, 4), (2, 2, 0, 3)]:
        m, n = shape[-2:]
        k = min(m, n)
        u, vt = ((m, m), (n, n)) if full else ((m, k), (k, n))
        assert [r.shape for r in f(np.zeros(shape))] == [shape[:2] + u, shape[:2] + (k,), shape[:2] + vt, shape[:2] + (k,)]


def test_svd_gradients():
    """`pytensor.grad` through svd (PyTensor's pullback: a plain graph of U, s, V^T) vs C:
    of the values alone (the pullback builds an economic svd with U and V^T) and of a cost
    of all three that does not depend on the columns' signs, for tall, wide and square
    matrices with distinct values."""
    x = pt.dmatrix("x")
    s_only = pt.linalg.svd(x, compute_uv=False)
    u, s, vt = pt.linalg.svd(x, full_matrices=False)
    cost_s = (s_only**3).sum()
    cost = (s**3).sum() + (u**4).sum() + 2 * (vt**4).sum()
    f, ref = compile_both([x], [cost_s, pytensor.grad(cost_s, x), cost, pytensor.grad(cost, x)])
    rng = np.random.default_rng(9)
    for a in [rng.normal(size=(5, 3)), rng.normal(size=(3, 5)), rng.normal(size=(4, 4)), np.array([[2.0]])]:
        for g, r in zip(f(a), ref(a)):
            assert_same(g, r, rtol=0, atol=1e-12 * max(1.0, float(np.abs(r).max())))


def test_general_pinv():
    """MatrixPinv(hermitian=False) vs C (numpy's pinv through gesdd, rcond 1e-15): tall,
    wide, square, rank deficient (low rank, repeated rows, zero rows), zero, 1x1, empty,
    float32; NaN raises LinAlgError as numpy; an infinity gives NaN (numpy's is LAPACK's
    partly NaN U and V^T times zeros, not reproduced); a stack and its gradient."""
    from pytensor.tensor.linalg import pinv

    rng = np.random.default_rng(8)
    x, xf = pt.dmatrix("x"), pt.fmatrix("xf")
    f, ref = compile_both([x, xf], [pinv(x), pinv(xf)])
    low_rank = rng.normal(size=(7, 3)) @ rng.normal(size=(3, 5))
    zero_rows = rng.normal(size=(5, 4))
    zero_rows[[1, 3]] = 0.0
    cases = [rng.normal(size=(6, 3)), rng.normal(size=(3, 6)), rng.normal(size=(5, 5)), low_rank, low_rank.T, zero_rows, zero_rows.T]
    cases += [np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [4.0, 5.0, 7.0]]), np.zeros((3, 2)), np.array([[-4.0]]), np.array([[0.0]]), np.zeros((3, 0)), np.zeros((0, 2))]
    for at, a in enumerate(cases):
        got, want = f(a, a.astype("float32")), ref(a, a.astype("float32"))
        s = np.linalg.svd(a, compute_uv=False)
        kept = s[s > 1e-15 * s.max(initial=0.0)]
        cond = kept.max(initial=1.0) / kept.min(initial=1.0)
        scale = max(1.0, float(np.abs(want[0]).max(initial=0.0)))
        assert_same(got[0], want[0], rtol=0, atol=1e-15 * cond * scale * max(a.shape), err_msg=repr(a))
        # float32: the values cut off at 1e-15 max(s) as in float64, so only the full-rank
        # and the exactly deficient (zero rows) cases compare; numpy's cut keeps float32's
        # rounding-level values of a low-rank matrix too.
        if at not in (3, 4, 7):
            assert_same(got[1], want[1], rtol=0, atol=2e-6 * cond * scale * max(a.shape), err_msg=repr(a))
    for a in [np.array([[1.0, np.nan], [0.0, 1.0]]), np.array([[np.inf, np.nan, 0.0]])]:
        got_e, _ = raises_like(f, ref, [a, a.astype("float32")])
        assert type(got_e).__name__ == "LinAlgError"
    for a in [np.array([[1.0, np.inf], [0.0, 1.0], [2.0, 3.0]]), np.array([[-np.inf]])]:
        got, want = f(a, a.astype("float32")), ref(a, a.astype("float32"))
        assert got[0].shape == want[0].shape and np.isnan(got[0]).all() and np.isnan(got[1]).all()

    # A stack through Blockwise, and the gradient (PyTensor's pullback: products of X, X^+).
    s3 = pt.dtensor3("s3")
    y = pinv(s3)
    weights = rng.normal(size=(3, 4))
    fs, refs = compile_both([s3], [y, pytensor.grad((y * weights).sum(), s3)])
    stack = np.stack([rng.normal(size=(4, 3)), rng.normal(size=(4, 2)) @ rng.normal(size=(2, 3)), np.zeros((4, 3))])
    for got, want in zip(fs(stack), refs(stack)):
        assert_same(got, want, rtol=0, atol=1e-12 * max(1.0, float(np.abs(want).max())))


def wilkinson(n):
    """Wilkinson's W_n^+: eigenvalues in nearly equal pairs."""
    m = (n - 1) / 2
    return np.diag(np.abs(np.arange(n) - m)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)


def test_tridiagonal_reduction_and_ql_on_the_cpu():
    """On the CPU, Eigh and Eigvalsh are one dispatch (lower/dense_kernels/symmetric_eigen.rs:
    Householder reduction to tridiagonal, then implicit QL): against the C backend at sizes
    around the eight-column chunks of its row updates, on matrices whose reduction or
    iterations take unusual paths: already tridiagonal or diagonal (no reflection), block
    diagonal (the QL blocks split), rank one, clustered and repeated eigenvalues, an arrow,
    and entries near the ends of float64's range."""
    x = pt.dmatrix("x")
    w, v = pt.linalg.eigh(x)
    f, ref = compile_both([x], [w, v, eigvalsh(x, None)])
    linker = f.maker.linker
    assert "flow.dispatch.workgroups" in linker.mlir
    assert "--iree-execution-model=inline-dynamic" in linker.compiled.flags
    rng = np.random.default_rng(21)
    cases = [np.zeros((0, 0))]
    for n in [2, 3, 8, 9, 17, 40]:
        cases.append(symmetric(rng, n))
    q, _ = np.linalg.qr(rng.normal(size=(9, 9)))
    cases.append((q * np.array([1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0])) @ q.T)
    cases.append(wilkinson(21))
    off = rng.normal(size=9)
    cases.append(np.diag(rng.normal(size=10)) + np.diag(off, 1) + np.diag(off, -1))
    cases.append(np.diag(rng.normal(size=6)))
    blocks = np.zeros((10, 10))
    blocks[:4, :4], blocks[4:, 4:] = symmetric(rng, 4), symmetric(rng, 6)
    cases.append(blocks)
    cases.append(np.ones((7, 7)))
    arrow = np.diag(np.arange(1.0, 12.0))
    arrow[0, 1:] = arrow[1:, 0] = 1.0
    cases.append(arrow)
    cases += [symmetric(rng, 12) * 1e150, symmetric(rng, 12) * 1e-150, symmetric(rng, 5) * 1e300, symmetric(rng, 5) * 1e-300]
    for a in cases:
        gw, gv, gvals = f(a)
        rw, rv, rvals = ref(a)
        assert gw.shape == rw.shape and gv.shape == rv.shape
        assert_eigensystem(gw, gv, a, rw, rv, rtol=1e-14)
        np.testing.assert_allclose(gvals, rvals, rtol=0, atol=1e-14 * max(1e-300, np.abs(rvals).max(initial=0)) * max(len(a), 1))
    # Subnormal entries (about 44 bits each): A is scaled by a power of two first (the
    # reflectors' 1 / (alpha - beta) overflowed: NaN eigenvalues).
    a = symmetric(rng, 6) * 1e-310
    (gw, gv, gvals), (rw, rv, rvals) = f(a), ref(a)
    for got in [gw, gvals]:
        np.testing.assert_allclose(got, rvals, rtol=0, atol=1e-11 * np.abs(rvals).max())
    np.testing.assert_allclose(gv.T @ gv, np.eye(6), rtol=0, atol=1e-13)
    # float32 runs in float32.
    xf = pt.fmatrix("xf")
    f32, ref32 = compile_both([xf], [*pt.linalg.eigh(xf), eigvalsh(xf, None)])
    for n in [3, 9, 17]:
        a = symmetric(rng, n, "float32")
        (gw, gv, gvals), (rw, rv, rvals) = f32(a), ref32(a)
        assert gw.dtype == np.float32 == rw.dtype
        assert_eigensystem(gw.astype(float), gv.astype(float), a.astype(float), rw.astype(float), rv.astype(float), rtol=2e-6)
        np.testing.assert_allclose(gvals, rvals, rtol=0, atol=2e-6 * np.abs(rvals).max() * n)
