"""Scans with elementwise steps (lower/scan_lanes.rs): the whole loop one dispatch, each
element of the states evolving on its own. Compared with the C backend on the same inputs:
vector, matrix and 0-d states, sequences whose rows are lane values or one element,
non-sequences of both kinds, several states of several dtypes beside per-step outputs,
the whole history or only its last rows (PyTensor's `scan_save_mem` rings), zero steps,
and the errors the C backend raises. Each graph is checked to take this path (no loop in
the host program) or, for a step that is not elementwise, not to."""

import re

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from conftest import assert_same, compile_both, raises_like
from test_scan import run_cases as compare_with_c
from test_scan import scan


def host_loops(f):
    """Loops in the host program of f's compiled module (scan.rs's general path has one),
    not those inside a dispatch region (a sequential kernel's, e.g. a whole sum's)."""
    host = re.sub(r"flow\.dispatch\.workgroups.*?\} count\(", "", f.maker.linker.mlir, flags=re.S)
    return host.count("scf.for")


def run_cases(inputs, outputs, cases, loops=0, **tol):
    """test_scan's comparison with C (inputs never written), and the path the Scan took."""
    f, ref = compare_with_c(inputs, outputs, cases, **tol)
    assert host_loops(f) == loops, f.maker.linker.mlir
    return f, ref


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_vector_recurrence_with_both_kinds_of_non_sequence(dtype):
    s = pt.matrix("s", dtype=dtype)
    x0 = pt.vector("x0", dtype=dtype)
    a = pt.scalar("a", dtype=dtype)
    w = pt.vector("w", dtype=dtype)
    xs = scan(lambda s_t, x, a, w: pt.tanh(a * x + w * s_t), sequences=[s], outputs_info=[x0], non_sequences=[a, w])
    rng = np.random.default_rng(0)
    cases = [
        [rng.normal(size=(t, m)).astype(dtype), rng.normal(size=m).astype(dtype), np.asarray(0.7, dtype), rng.normal(size=m).astype(dtype)]
        for t, m in [(7, 5), (1, 3), (0, 4), (40, 17)]
    ]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else {}
    run_cases([s, x0, a, w], xs, cases, **tol)


def test_several_states_of_several_dtypes_and_per_step_outputs():
    """A float and an int64 state and two nit_sot outputs (one of them integer)."""
    s = pt.dmatrix("s")
    x0 = pt.dvector("x0")
    c0 = pt.lvector("c0")

    def step(s_t, x, c):
        x_next = 0.5 * x + s_t
        return x_next, c + (x_next > 0), x_next * 2.0, c * 3

    outs = scan(step, sequences=[s], outputs_info=[x0, c0, None, None])
    rng = np.random.default_rng(1)
    cases = [[rng.normal(size=(t, 6)), rng.normal(size=6), rng.integers(-5, 5, size=6)] for t in (9, 1)]
    f, ref = run_cases([s, x0, c0], outs, cases)
    # Zero steps: the states are their initial rows, as C gives them. A per-step output has
    # no rows but keeps its row shape, (0, 6); Scan.perform returns np.empty((0, 0)) there
    # (its own comment calls that "plainly wrong"), as numpy's stacking of no rows of 6 would not.
    values = [np.zeros((0, 6)), rng.normal(size=6), rng.integers(-5, 5, size=6)]
    got, want = f(*values), ref(*values)
    for i in (0, 1):
        assert_same(got[i], want[i], err_msg=f"state {i} after zero steps")
    for i, dtype in ((2, "float64"), (3, "int64")):
        assert_same(got[i], np.empty((0, 6), dtype=dtype), err_msg=f"per-step output {i} after zero steps")


def test_scalar_state_from_a_vector_sequence():
    """0-d states (no lanes): an AR(1) filter over a vector of innovations."""
    eps = pt.dvector("eps")
    rho = pt.dscalar("rho")
    x0 = pt.dscalar("x0")
    xs = scan(lambda e, x, rho: rho * x + e, sequences=[eps], outputs_info=[x0], non_sequences=[rho])
    rng = np.random.default_rng(2)
    cases = [[rng.normal(size=t), np.float64(0.9), np.float64(0.3)] for t in (50, 1, 0)]
    run_cases([eps, rho, x0], [xs, xs.sum()], cases)


def test_matrix_states():
    s = pt.tensor3("s")
    x0 = pt.dmatrix("x0")
    xs = scan(lambda s_t, x: pt.exp(-x) + s_t, sequences=[s], outputs_info=[x0])
    rng = np.random.default_rng(3)
    cases = [[rng.normal(size=(t, 3, 4)), rng.normal(size=(3, 4))] for t in (6, 1)]
    run_cases([s, x0], xs, cases)


def test_two_states_of_one_type_and_shape():
    """Two float states of one shape (IREE merges equal buffers: each carried value needs
    its own) coupled elementwise, a damped rotation of each element."""
    x0 = pt.dvector("x0")
    y0 = pt.dvector("y0")
    (xs, ys) = scan(lambda x, y: (0.9 * x - 0.2 * y, 0.2 * x + 0.9 * y), outputs_info=[x0, y0], n_steps=20)
    rng = np.random.default_rng(9)
    run_cases([x0, y0], [xs, ys, xs[-1] - ys[-1]], [[rng.normal(size=5), rng.normal(size=5)]])


@pytest.mark.parametrize("taps", [[-2, -1], [-3, -1], [-1, -4, -2]])
def test_states_read_several_steps_back(taps):
    """mit_sot states (an AR(p) recurrence): each carries its last values; the first steps
    read the initial rows."""
    s = pt.dmatrix("s")
    x_init = pt.dmatrix("x_init")
    c = pt.dvector("c")

    def step(s_t, *args):
        *lags, c = args
        return s_t + sum(c[k] * lag for k, lag in enumerate(lags))

    xs = scan(step, sequences=[s], outputs_info=[dict(initial=x_init, taps=taps)], non_sequences=[c])
    rng = np.random.default_rng(7)
    h = -min(taps)
    cases = [[rng.normal(size=(t, 3)), rng.normal(size=(h, 3)), rng.normal(size=len(taps)) * 0.4] for t in (12, 2, 1)]
    run_cases([s, x_init, c], [xs, xs[-1]], cases)


def test_scalar_ar2_last_value_only():
    e = pt.dvector("e")
    x_init = pt.dvector("x_init")
    xs = scan(lambda e_t, x2, x1: 0.5 * x1 - 0.3 * x2 + e_t, sequences=[e], outputs_info=[dict(initial=x_init, taps=[-2, -1])])
    rng = np.random.default_rng(8)
    run_cases([e, x_init], xs[-1], [[rng.normal(size=t), rng.normal(size=2)] for t in (30, 1)])


@pytest.mark.parametrize("keep", ["last", "last_three", "first_and_last"])
def test_only_the_last_rows_kept(keep):
    """PyTensor shrinks the buffers to rings of the rows a graph reads (scan_save_mem)."""
    s = pt.dmatrix("s")
    x0 = pt.dvector("x0")
    xs = scan(lambda s_t, x: 0.9 * x + s_t, sequences=[s], outputs_info=[x0])
    ys = scan(lambda s_t: s_t**2, sequences=[s])
    out = {"last": [xs[-1], ys[-1]], "last_three": [xs[-3:], ys[-3:]], "first_and_last": [xs[0] + xs[-1], ys[0] * ys[-1]]}[keep]
    rng = np.random.default_rng(4)
    cases = [[rng.normal(size=(t, 4)), rng.normal(size=4)] for t in (10, 3)]
    run_cases([s, x0], out, cases)


def test_negative_steps_and_short_sequences_raise_like_c():
    s = pt.dmatrix("s")
    x0 = pt.dvector("x0")
    n = pt.lscalar("n")
    xs = scan(lambda s_t, x: x + s_t, sequences=[s], outputs_info=[x0], n_steps=n)
    f, ref = compile_both([s, x0, n], xs)
    assert host_loops(f) == 0
    rng = np.random.default_rng(5)
    good = [rng.normal(size=(5, 3)), rng.normal(size=3), np.int64(4)]
    assert_same(f(*good), ref(*good))
    raises_like(f, ref, [good[0], good[1], np.int64(6)])
    with pytest.raises(IndexError):
        f(good[0], good[1], np.int64(-1))


def test_lanes_of_other_lengths_raise_like_c():
    s = pt.dmatrix("s")
    x0 = pt.dvector("x0")
    xs = scan(lambda s_t, x: x * s_t, sequences=[s], outputs_info=[x0])
    f, ref = compile_both([s, x0], xs)
    assert host_loops(f) == 0
    raises_like(f, ref, [np.ones((3, 4)), np.ones(5)])


def test_a_step_that_is_not_elementwise_keeps_the_host_loop():
    """A matrix-vector product in the step mixes the lanes: scan.rs's general loop."""
    x0 = pt.dvector("x0")
    m = pt.dmatrix("m")
    xs = scan(lambda x, m: pt.tanh(pt.dot(m, x)), outputs_info=[x0], non_sequences=[m], n_steps=5)
    rng = np.random.default_rng(6)
    run_cases([x0, m], xs, [[rng.normal(size=4), rng.normal(size=(4, 4))]], loops=1)
