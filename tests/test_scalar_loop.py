"""ScalarLoop (what the gradients of gammainc, betainc and hyp2f1 build): an inner scalar
graph iterated per element, compared with the C backend, which runs the same loop in C."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.scalar import ScalarLoop, float64, int64, float32
from pytensor.tensor.elemwise import Elemwise

from conftest import C, MLIR, assert_all_same, assert_same, scalar_op_names


def test_for_loop_with_state_of_several_dtypes_and_constants():
    # x <- x * c + k, k <- k + 1 (an int64 state), n_steps per element: 0 and negative run no step.
    x0, c, k0 = float64("x0"), float64("c"), int64("k0")
    op = ScalarLoop(init=[x0, k0], update=[x0 * c + k0, k0 + 1], constant=[c])
    n = pt.lvector("n")
    x = pt.dvector("x")
    cc = pt.dscalar("c")
    k = pt.lvector("k")
    outs = Elemwise(op)(n, x, k, cc)
    f = pytensor.function([n, x, k, cc], outs, mode=MLIR)
    ref = pytensor.function([n, x, k, cc], outs, mode=C)
    values = [np.array([0, 1, 3, 7, -2, 30]), np.linspace(-1.5, 2.0, 6), np.array([5, -3, 0, 2, 9, 1]), 1.25]
    assert_all_same(["x", "k"], f(*values), ref(*values))
    # A different length, the same compiled function.
    values = [np.array([4]), np.array([0.5]), np.array([2]), -0.5]
    assert_all_same(["x", "k"], f(*values), ref(*values))


def test_while_loop_stops_at_until_and_reports_it():
    # Doubling until above a limit, at most n steps: until is true where the limit was
    # reached, and for n <= 0 (no step taken, as the C backend reports).
    x0, limit = float32("x0"), float32("limit")
    doubled = x0 * np.float32(2)
    op = ScalarLoop(init=[x0], update=[doubled], constant=[limit], until=doubled > limit)
    n = pt.lscalar("n")
    x = pt.fvector("x")
    lim = pt.fscalar("lim")
    outs = Elemwise(op)(n, x, lim)
    f = pytensor.function([n, x, lim], outs, mode=MLIR)
    ref = pytensor.function([n, x, lim], outs, mode=C)
    x_val = np.array([0.1, 1.0, 3.0, 100.0, -1.0, 0.0], dtype=np.float32)
    for steps in [5, 0, -1, 40]:
        got, want = f(steps, x_val, np.float32(10.0)), ref(steps, x_val, np.float32(10.0))
        assert_all_same([f"x (n={steps})", f"until (n={steps})"], got, want)
        assert got[1].dtype == np.bool_


def test_loop_inside_a_larger_fused_graph_and_its_dtype_casts():
    # Inputs of other dtypes are cast to the loop's state types (int32 n_steps, int8 data),
    # and the loop's output feeds more elementwise math (fusion may put it in a Composite).
    x0 = float64("x0")
    op = ScalarLoop(init=[x0], update=[x0 * 0.5 + 1.0])
    n = pt.ivector("n")
    x = pt.bvector("x")
    loop_out = Elemwise(op)(n, pt.cast(x, "float64"))
    out = pt.exp(loop_out) - 1.0
    f = pytensor.function([n, x], out, mode=MLIR)
    ref = pytensor.function([n, x], out, mode=C)
    values = [np.array([0, 1, 2, 60], dtype=np.int32), np.array([-8, 4, 100, 1], dtype=np.int8)]
    assert_all_same(["out"], [f(*values)], [ref(*values)])


def test_a_loop_whose_body_divides_integers_is_refused_by_name():
    # Its division-by-zero flag could not leave the loop: refused at compile time, not wrong.
    k0, d = int64("k0"), int64("d")
    op = ScalarLoop(init=[k0], update=[k0 // d], constant=[d])
    n, k, dd = pt.lscalar("n"), pt.lvector("k"), pt.lscalar("d")
    with pytest.raises(NotImplementedError, match="ScalarLoop"):
        pytensor.function([n, k, dd], Elemwise(op)(n, k, dd), mode=MLIR)


def test_gradients_of_gammainc_and_gammaincc_run_their_loops():
    # d/dk of the regularized incomplete gamma functions is a ScalarLoop (a while loop with
    # the forward functions and psi around it): the whole gradient against the C backend.
    k, x = pt.dvector("k"), pt.dvector("x")
    cost = (pt.gammainc(k, x) + 2.0 * pt.gammaincc(k, x)).sum()
    outs = pytensor.grad(cost, [k, x])
    f = pytensor.function([k, x], outs, mode=MLIR)
    ref = pytensor.function([k, x], outs, mode=C)
    assert "ScalarLoop" in scalar_op_names(f)
    kv = np.array([0.5, 1.0, 2.5, 7.0, 30.0, 120.0])
    xv = np.array([0.3, 2.0, 1.0, 9.0, 25.0, 100.0])
    # PyTensor's series stops once a term is below 1e-10: results within a few of that of C's
    # (our gammainc, gammaincc, psi, exp and log are not bit-equal to C's, so a loop may stop
    # a term apart). The last two d/dk points are where PyTensor's own formula cancels
    # catastrophically: C gives -8.6e4 and 2.5e67 where mpmath's derivative is 0.050 and
    # 0.0061, so one ulp of difference in exp or log moves the result by ~4e-7 relatively;
    # there the same formula is checked to a tolerance that such noise passes and a wrong
    # branch does not.
    got_k, got_x = f(kv, xv)
    want_k, want_x = ref(kv, xv)
    assert_same(got_x, want_x, rtol=5e-9)
    assert_same(got_k[:4], want_k[:4], rtol=5e-9)
    assert_same(got_k[4:], want_k[4:], rtol=1e-5)
