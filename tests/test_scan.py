"""`Scan` (lower/scan.rs): PyTensor's loop, compared with the C backend on the same inputs.

States read at one tap (sit_sot) and at several (mit_sot), per-step outputs (nit_sot),
sequences and non-sequences, states of several dtypes and ranks, the whole history or only
the last rows (PyTensor's `scan_save_mem` shrinks the buffers to rings), zero steps, one
compiled function for every number of steps and row size, and the errors the C backend
raises (a negative number of steps, a sequence shorter than it, an index out of bounds in a
step)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode

import pytensor_mlir
from conftest import assert_same, compile_both, raises_like


def scan(*args, **kwargs):
    return pytensor.scan(*args, return_updates=False, **kwargs)


def run_cases(inputs, outputs, cases, **tol):
    """One compile per mode; every case (a list of input values) through both, every output
    compared."""
    f, ref = compile_both(inputs, outputs)
    assert any(type(n.op).__name__ == "Scan" for n in f.maker.fgraph.apply_nodes), "no Scan left to lower"
    for values in cases:
        kept = [np.copy(v) for v in values]
        got, want = f(*values), ref(*values)
        # The loop updates its state in place: never the caller's arrays.
        for v, k in zip(values, kept):
            np.testing.assert_array_equal(v, k, err_msg="an input was written")
        if not isinstance(got, list):
            got, want = [got], [want]
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, err_msg=f"output {i} for shapes {[np.shape(v) for v in values]}", **tol)
    return f, ref


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_recurrence_with_sequence_and_non_sequence(dtype):
    """x_t = a * x_{t-1} + s_t: the whole history, its last row, and both with a sum."""
    seq = pt.matrix("s", dtype=dtype)
    x0 = pt.vector("x0", dtype=dtype)
    a = pt.scalar("a", dtype=dtype)
    ys = scan(lambda s, x, a: a * x + s, sequences=[seq], outputs_info=[x0], non_sequences=[a])
    rng = np.random.default_rng(0)
    cases = [
        [rng.normal(size=(n, m)).astype(dtype), rng.normal(size=m).astype(dtype), np.asarray(0.9, dtype)]
        for n, m in [(5, 3), (1, 4), (17, 2), (0, 3)]
    ]
    run_cases([seq, x0, a], [ys, ys[-1], ys[-3:], ys.sum()], cases[:3])
    # Zero steps: the history is empty (and ys[-1] would raise in both).
    run_cases([seq, x0, a], ys, cases)


def test_taps_several_steps_back():
    """A mit_sot read at taps -3 and -1, from an initial history of three rows."""
    x0 = pt.matrix("x0")
    n = pt.iscalar("n")
    ys = scan(lambda x3, x1: 0.5 * x1 - 0.25 * x3 + 1.0, outputs_info=[dict(initial=x0, taps=[-3, -1])], n_steps=n)
    rng = np.random.default_rng(1)
    cases = [[rng.normal(size=(3, m)), np.int32(k)] for m, k in [(2, 6), (4, 1), (1, 12)]]
    run_cases([x0, n], [ys, ys[-1], ys[-2:]], cases)


def test_states_of_several_dtypes_and_per_step_outputs():
    """An integer counter, a float matrix state and a per-step output (nit_sot) of another
    shape, in one loop."""
    seq = pt.dvector("s")
    m0 = pt.dmatrix("m0")
    w = pt.dmatrix("w")

    def step(s, i, m, w):
        m_next = pt.tanh(pt.dot(w, m) + s)
        return i + 1, m_next, (m_next.sum(axis=0) * s) ** 2

    (count, ms, per_step) = scan(step, sequences=[seq], outputs_info=[pt.constant(np.int64(0)), m0, None], non_sequences=[w])
    rng = np.random.default_rng(2)
    cases = [[rng.normal(size=n), rng.normal(size=(k, j)), rng.normal(size=(k, k)) / k] for n, k, j in [(4, 3, 2), (9, 2, 5), (1, 1, 1)]]
    run_cases([seq, m0, w], [count, ms, per_step, ms[-1], per_step[-1]], cases)


def test_number_of_steps_and_bad_input():
    """n_steps given with a sequence; a sequence shorter than n_steps (ValueError, as the C
    backend raises) and a negative n_steps (IndexError, as `Scan.perform` raises under the
    `py` linker; the C backend's Cython loop raises OverflowError), both before any step
    runs."""
    x0 = pt.dvector("x0")
    seq = pt.dvector("s")
    n = pt.lscalar("n")
    ys = scan(lambda s, x: x * 2.0 + s, sequences=[seq], outputs_info=[x0], n_steps=n)
    f, ref = compile_both([seq, x0, n], ys)
    values = [np.arange(6.0), np.array([1.0, -2.0]), np.int64(4)]
    assert_same(f(*values), ref(*values))
    values[2] = np.int64(0)
    assert_same(f(*values), ref(*values))
    got, want = raises_like(f, ref, [values[0], values[1], np.int64(7)])
    assert isinstance(got, ValueError)
    py = pytensor.function([seq, x0, n], ys, mode=Mode(linker="py", optimizer="fast_run"))
    got, want = raises_like(f, py, [values[0], values[1], np.int64(-1)])
    assert isinstance(got, IndexError)
    # The function still works after an error.
    values[2] = np.int64(6)
    assert_same(f(*values), ref(*values))


def test_index_out_of_bounds_in_a_step():
    """A step that indexes a non-sequence with the sequence's values: IndexError where one
    is out of bounds, as the C backend raises."""
    idx = pt.lvector("idx")
    table = pt.dvector("table")
    acc = scan(lambda i, acc, t: acc + t[i], sequences=[idx], outputs_info=[pt.constant(np.float64(0.0))], non_sequences=[table])
    f, ref = compile_both([idx, table], acc)
    values = [np.array([0, 3, -1, 2]), np.array([1.0, 10.0, 100.0, 1000.0])]
    assert_same(f(*values), ref(*values))
    got, want = raises_like(f, ref, [np.array([0, 4, 1]), values[1]])
    assert isinstance(got, IndexError)


def test_one_compile_for_every_shape():
    """Steps and row sizes vary between calls of one compiled function."""
    seq = pt.dmatrix("s")
    x0 = pt.dvector("x0")
    ys = scan(lambda s, x: pt.exp(-x) + s, sequences=[seq], outputs_info=[x0])
    before = pytensor_mlir.compiler_invocations()
    f, ref = compile_both([seq, x0], [ys[-1], ys])
    rng = np.random.default_rng(3)
    for n, m in [(3, 2), (40, 7), (2, 1)]:
        values = [rng.normal(size=(n, m)), rng.normal(size=m)]
        for g, w in zip(f(*values), ref(*values)):
            assert_same(g, w)
    assert pytensor_mlir.compiler_invocations() - before == 1


def test_mismatched_row_size_raises():
    """A sequence's rows and the state of another size: the C backend raises ValueError
    (numpy's broadcasting), so does the MLIR mode, before the call."""
    seq = pt.dmatrix("s")
    x0 = pt.dvector("x0")
    ys = scan(lambda s, x: x + s, sequences=[seq], outputs_info=[x0])
    f, ref = compile_both([seq, x0], ys)
    got, want = raises_like(f, ref, [np.ones((3, 2)), np.ones(3)])
    assert isinstance(got, ValueError)


def test_gradient_of_a_recurrence():
    """The gradient PyTensor builds through a Scan is a Scan with mit_mot buffers (read at
    taps 0 and 1, written at 1), a sit_sot accumulator and a nit_sot: with respect to the
    sequence, the initial state and a non-sequence, for several lengths."""
    seq = pt.dvector("s")
    x0 = pt.dscalar("x0")
    a = pt.dscalar("a")
    ys = scan(lambda s, x, a: x * a + pt.sin(s), sequences=[seq], outputs_info=[x0], non_sequences=[a])
    cost = (ys**2).sum() + ys[-1]
    grads = pytensor.grad(cost, [seq, x0, a])
    rng = np.random.default_rng(4)
    cases = [[rng.normal(size=n), np.float64(0.3), np.float64(0.8)] for n in [5, 1, 30]]
    f, _ = run_cases([seq, x0, a], grads, cases, rtol=1e-11)
    scans = [n.op for n in f.maker.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
    assert any(op.info.mit_mot_in_slices for op in scans), "no mit_mot Scan in the gradient"


@pytest.mark.parametrize("steps", [4, 1])
def test_gradient_through_taps_and_a_matrix_state(steps):
    """Gradients of a mit_sot read at taps -2 and -1 (an AR(2)-like log-density) and of a
    matrix state updated by a dot, over a fixed number of steps (as PyMC models write
    them), and of a recurrence driven by a sequence's length."""
    x0 = pt.dvector("x0")
    rho = pt.dvector("rho")
    xs = scan(lambda x2, x1, rho: rho[0] * x1 + rho[1] * x2 + 0.1, outputs_info=[dict(initial=x0, taps=[-2, -1])], non_sequences=[rho], n_steps=steps)
    cost = -0.5 * (xs**2).sum()
    m0 = pt.dmatrix("m0")
    w = pt.dmatrix("w")
    ms = scan(lambda m, w: pt.tanh(pt.dot(w, m)), outputs_info=[m0], non_sequences=[w], n_steps=steps)
    cost2 = (ms[-1] ** 2).sum()
    u = pt.dmatrix("u")
    hs = scan(lambda u_t, h, w: pt.tanh(pt.dot(w, h) + u_t), sequences=[u], outputs_info=[pt.zeros_like(u[0])], non_sequences=[w])
    cost3 = (hs * u).sum()
    grads = pytensor.grad(cost, [x0, rho]) + pytensor.grad(cost2, [m0, w]) + pytensor.grad(cost3, [u, w])
    rng = np.random.default_rng(5)
    cases = [[np.array([0.5, -0.2]), np.array([0.6, 0.3]), rng.normal(size=(3, 2)), rng.normal(size=(3, 3)) / 3, rng.normal(size=(k, 3))] for k in [4, 1, 9]]
    run_cases([x0, rho, m0, w, u], grads, cases, rtol=1e-10)


def test_shared_variable_updated_in_the_loop():
    """A shared variable updated in each step: the same outputs and the same final shared
    value as C, over two calls."""
    from pytensor.compile.sharedvalue import shared

    x = pt.dmatrix("x")
    results = {}
    for name, mode in [("mlir", pytensor_mlir.MLIR), ("c", "CVM")]:
        acc = shared(np.array([1.0, -2.0, 0.5]), name="acc")
        ys, updates = pytensor.scan(lambda x_t: (pt.exp(x_t), {acc: acc * 0.5 + x_t**2}), sequences=[x], return_updates=True)
        f = pytensor.function([x], ys, updates=updates, mode=mode)
        outs = [f(np.arange(12.0).reshape(4, 3) / 7), f(np.ones((2, 3)))]
        results[name] = outs + [acc.get_value()]
    for got, want in zip(results["mlir"], results["c"]):
        assert_same(got, want)


def test_untraced_state():
    """An untraced state (carried whole, only its final value returned; PyTensor makes
    one of a sit_sot whose buffer holds one row): a Scan built with one, next to a nit_sot,
    for several lengths, zero included."""
    from pytensor.scan.op import Scan, ScanInfo

    xt, a = pt.dvector("xt"), pt.dvector("a")
    info = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(), sit_sot_in_slices=(), n_nit_sot=1, n_untraced_sit_sot=1, n_non_seqs=0, as_while=False)
    op = Scan([xt, a], [pt.exp(xt), a * 0.5 + xt**2], info)
    x, a0 = pt.dmatrix("x"), pt.dvector("a0")
    ys, last = op(x.shape[0], x, a0, x.shape[0])
    f, ref = run_cases([x, a0], [ys, last], [[np.arange(12.0).reshape(4, 3) / 7, np.array([1.0, -2.0, 0.5])], [np.ones((1, 2)), np.zeros(2)]])
    assert any(type(n.op).__name__ == "Scan" and n.op.info.n_untraced_sit_sot for n in f.maker.fgraph.apply_nodes)
    # Zero steps: the untraced state is its initial value. A nit_sot of no steps keeps
    # its row shape here, (0, 2); `Scan.perform` returns (0, 0) ("plainly wrong", says its
    # own comment), so only the untraced state is compared with C.
    values = [np.ones((0, 2)), np.array([3.0, 4.0])]
    (got_ys, got_last), (want_ys, want_last) = f(*values), ref(*values)
    assert_same(got_last, want_last)
    assert got_ys.shape == (0, 2) and want_ys.shape == (0, 0)


def test_gradient_of_an_ar1_log_density():
    """An AR(1) log-density over a sequence's shifted slices and its gradient: PyTensor's
    gradient slices the Scan's buffers with lengths it computes from shapes (min, switch,
    floor division), dims now evaluated before the call instead of refused."""
    y, rho, sigma = pt.dvector("y"), pt.dscalar("rho"), pt.dscalar("sigma")
    mu = scan(lambda y_prev, rho: rho * y_prev, sequences=[y[:-1]], non_sequences=[rho])
    logp = (-0.5 * ((y[1:] - mu) / sigma) ** 2 - pt.log(sigma)).sum()
    rng = np.random.default_rng(6)
    cases = [[np.cumsum(rng.standard_normal(n)), np.float64(0.7), np.float64(1.3)] for n in [6, 2, 40]]
    run_cases([y, rho, sigma], [logp, *pytensor.grad(logp, [y, rho, sigma])], cases, rtol=1e-10)


def test_while_loops():
    """A Scan that stops on a condition (`until`): the steps stop after the first whose flag
    is true, and the outputs keep only the steps done, as the C backend's perform does: a
    sit_sot with its last row (`scan_save_mem` keeps a ring of it), a nit_sot, mit_sot taps,
    a sequence; stopping at the first step, never stopping, zero steps."""
    from pytensor.scan.utils import until

    x0, thr, n = pt.dscalar("x0"), pt.dscalar("thr"), pt.lscalar("n")
    # Newton's iteration for sqrt(thr), its step sizes (nit_sot), until a step is tiny.
    def newton(x, a):
        nxt = 0.5 * (x + a / x)
        return (nxt, abs(nxt - x)), until(abs(nxt - x) < 1e-8)

    (xs, steps) = scan(newton, outputs_info=[x0, None], non_sequences=[thr], n_steps=n)
    cases = [[np.float64(x), np.float64(a), np.int64(k)] for x, a, k in [(1.0, 2.0, 50), (1.0, 1e6, 50), (1.0, 1e6, 4), (3.0, 9.0, 10), (1.0, 2.0, 0), (1.0, 1.0, 5)]]
    f, _ = run_cases([x0, thr, n], [xs, steps, xs[-1]], cases)
    assert len(f(1.0, 2.0, 50)[0]) < 50
    # Only the last row: the state's buffer is a ring of PyTensor's choosing.
    run_cases([x0, thr, n], [xs[-1], steps.sum()], cases)

    # Two taps back (Fibonacci until past a bound) over an int64 state, and a sequence.
    f0, lim = pt.lvector("f0"), pt.lscalar("lim")
    fib = scan(lambda a, b, bound: (a + b, until(a + b > bound)), outputs_info=[dict(initial=f0, taps=[-2, -1])], non_sequences=[lim], n_steps=n)
    run_cases([f0, lim, n], [fib], [[np.array([0, 1]), np.int64(b), np.int64(k)] for b, k in [(100, 30), (100, 5), (0, 30), (10**6, 0)]])
    seq = pt.dvector("seq")
    total = scan(lambda v, acc, t: (acc + v, until(acc + v > t)), sequences=[seq], outputs_info=[pt.constant(0.0, dtype="float64")], non_sequences=[thr])
    run_cases([seq, thr], [total], [[np.arange(10.0), np.float64(t)] for t in [-1.0, 7.5, 100.0]] + [[np.arange(0.0), np.float64(1.0)]])
