"""Owen's T function owens_t(h, a) (lower/scalar_math/owens_t.rs).

- accuracy: against mpmath (benchmarks/accuracy_cases.py's quadrature) on its points: h
  up to where T underflows, a from 1e-3 to 1e3, many near owens_t.rs's switch at a h = 3,
  signs random: within 8 ULP everywhere (PyTensor's C backend runs scipy, whose error
  grows with h^2 in the far tail: thousands of ULP), and never a larger max than scipy's.
- values, special values and bad input: as the C backend (scipy), signed zeros included.
- integer inputs: float32 or float64 as PyTensor's `upgrade_to_float` says.
- the gradient (PyTensor's own formula, of exp and erf) as the C backend's.
- Vulkan: the f32 formulation, against the CPU mode's f64-computed results.
"""

import os
import sys

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from conftest import C, MLIR, assert_same, compile_both, vulkan_devices
from ulp import exact, ulp_errors

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from accuracy_cases import BY_NAME, points  # noqa: E402

MAX_ULP = 8.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_owens_t_accuracy(dtype):
    case = BY_NAME["owens_t"]
    rng = np.random.default_rng(41)
    h, a = pt.vector("h", dtype=dtype), pt.vector("a", dtype=dtype)
    f, ref = compile_both([h, a], pt.owens_t(h, a))
    v = points(case, dtype, 300, rng)
    with np.errstate(all="ignore"):
        got, c_got = f(*v), ref(*v)
    want = exact(case.mpmath, *v)
    errors, c_errors = ulp_errors(got, want, dtype), ulp_errors(c_got, want, dtype)
    report = []
    if errors.max() > MAX_ULP:
        i = int(np.argmax(errors))
        report.append(f"{errors[i]:.3g} ULP at {tuple(v[:, i])!r} (got {got[i]!r}, want {float(want[i])!r}; C {c_errors[i]:.3g})")
    if errors.max() > max(c_errors.max(), 0.5):
        report.append(f"max {errors.max():.3g} ULP, the C backend's (scipy) {c_errors.max():.3g}")
    assert not report, "\n".join(report)


def test_owens_t_special_values_like_the_c_backend():
    """nan in, nan out; T(h, +-0) = +0; T(+-inf, a) = 0 with a's sign; T(h, +-inf) =
    +-erfc(|h|/sqrt2)/4; T(0, a) = atan(a)/(2 pi); underflow to a zero of a's sign; tiny
    and huge arguments; the switch a h = 3 and a = 1 on both sides. float64 and float32."""
    nan, inf = np.nan, np.inf
    rows = [(nan, 1), (1, nan), (nan, nan), (nan, 0), (inf, nan), (0, 0), (1, 0), (1, -0.0), (-0.0, -0.0),
            (inf, 1), (-inf, 1), (inf, -1), (-inf, -inf), (inf, inf), (inf, 0), (1, inf), (1, -inf), (-2, inf),
            (0, inf), (0, -inf), (40, inf), (0, 1), (-0.0, -1), (0, 5), (0, 0.2), (0, 1e300), (50, 1), (50, -1),
            (40, -0.5), (40, -3), (1e300, 1e-300), (1e-300, 1e300), (2, 1e-300), (1, 5e-324), (1, -5e-324),
            (5e-324, -1), (1e-310, 1e5), (0.1, 1e308), (1, 1e308), (3, 1), (3, 0.9999999), (3, 1.0000001),
            (1, 3), (1, 2.9999999), (1, 3.0000001), (0.5, 6), (6, 0.5), (-6, -0.5), (12, 0.25), (13, 0.1),
            (1e-3, 1e3), (1e3, 1e-3), (1, 1), (-1, 1), (1, -1)]  # fmt: skip
    cols = [np.array(c, dtype="float64") for c in zip(*rows)]
    h, a = pt.dvector("h"), pt.dvector("a")
    h32, a32 = pt.fvector("h32"), pt.fvector("a32")
    f, ref = compile_both([h, a, h32, a32], [pt.owens_t(h, a), pt.owens_t(h32, a32)])
    with np.errstate(all="ignore"):
        vals = [*cols, *(c.astype("float32") for c in cols)]
        got, want = f(*vals), ref(*vals)
    assert_same(got[0], want[0], rtol=1e-14, err_msg="float64")
    assert_same(got[1], want[1], rtol=1e-6, err_msg="float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_owens_t_values_like_the_c_backend(dtype):
    """Random points where scipy is accurate (|h| <= 8; past that its error grows with
    h^2, see the accuracy test): a few ulps apart at most."""
    rng = np.random.default_rng(43)
    n = 400
    hv = np.concatenate([rng.uniform(-8, 8, n), rng.standard_normal(n)])
    av = np.concatenate([10.0 ** rng.uniform(-3, 3, n) * rng.choice([-1, 1], n), rng.uniform(-2, 2, n)])
    h, a = pt.vector("h", dtype=dtype), pt.vector("a", dtype=dtype)
    f, ref = compile_both([h, a], pt.owens_t(h, a))
    vals = hv.astype(dtype), av.astype(dtype)
    got, want = f(*vals), ref(*vals)
    assert_same(got, want, rtol=1e-13 if dtype == "float64" else 3e-7, atol=1e-300 if dtype == "float64" else 1e-37)


def test_owens_t_integer_inputs():
    """Integer and bool inputs: the output dtype and values of the C backend (float32 for
    8- and 16-bit integers and bool, float64 for 32- and 64-bit ones), in one function."""
    pairs = [("int32", "int32"), ("int8", "int16"), ("int64", "float32"), ("bool", "int8"), ("uint8", "float64")]
    base_h = np.array([0, 1, -1, 3, 5, -7, 20, 100, 2])
    base_a = np.array([1, 0, 2, -3, 1, 1, -1, 5, 100])
    inputs, outputs, vals = [], [], []
    for i, (dh, da) in enumerate(pairs):
        h, a = pt.vector(f"h{i}", dtype=dh), pt.vector(f"a{i}", dtype=da)
        inputs += [h, a]
        outputs.append(pt.owens_t(h, a))
        hv = (base_h % 2).astype(bool) if dh == "bool" else np.abs(base_h) if dh[0] == "u" else base_h
        vals += [hv.astype(dh), base_a.astype(da)]
    f, ref = compile_both(inputs, outputs)
    for pair, g, w in zip(pairs, f(*vals), ref(*vals)):
        tol = (1e-13, 1e-300) if w.dtype == np.float64 else (1e-6, 1e-37)
        assert_same(g, w, rtol=tol[0], atol=tol[1], err_msg=str(pair))


def test_owens_t_gradient_like_the_c_backend():
    """pytensor.grad of a weighted sum through owens_t: the value and both partial
    derivatives (PyTensor's pullback: exp and erf) as mode="FAST_RUN" with the C backend."""
    rng = np.random.default_rng(47)
    h, a, w = pt.dvector("h"), pt.dvector("a"), pt.dvector("w")
    cost = pt.sum(w * pt.owens_t(h, a))
    gh, ga = pytensor.grad(cost, [h, a])
    f, ref = compile_both([h, a, w], [cost, gh, ga], reference=pytensor.compile.mode.get_mode("FAST_RUN").clone(linker="cvm"))
    hv = np.concatenate([rng.uniform(-6, 6, 50), [0.0, 1.0, -1.0, 30.0, 3.0]])
    av = np.concatenate([rng.uniform(-4, 4, 50), [1.0, 0.0, 1e3, 0.5, -1.0]])
    wv = rng.standard_normal(hv.size)
    got, want = f(hv, av, wv), ref(hv, av, wv)
    for name, g, r in zip(["cost", "d/dh", "d/da"], got, want):
        assert_same(np.asarray(g), np.asarray(r), rtol=1e-12, atol=1e-300, err_msg=name)


VULKAN_DEVICES, WHY_NO_VULKAN = vulkan_devices()


@pytest.mark.skipif(not VULKAN_DEVICES, reason=f"no Vulkan device ({WHY_NO_VULKAN or 'none listed'})")
def test_owens_t_float32_formulation_on_vulkan():
    """On Vulkan owens_t runs in f32 on the device's exp (lavapipe's: 68 ULP): within 1e-4
    relative of the CPU mode's f64-computed results where those are normal numbers (lavapipe
    flushes subnormals), the special values and both switches included."""
    rng = np.random.default_rng(53)
    nan, inf = np.nan, np.inf
    hv = np.concatenate([[nan, 1, inf, -inf, 0, 0, 1, 1, 3, 3, 1, 1, 12, -5, 0.5, 1e-30, 1e30],
                         rng.uniform(-10, 10, 60), rng.standard_normal(30)]).astype("float32")  # fmt: skip
    av = np.concatenate([[1, nan, 1, -1, 1, inf, -inf, 0, 0.9999, 1.0001, 2.9999, 3.0001, 0.25, -0.5, 1e30, 1e30, 1e-30],
                         10.0 ** rng.uniform(-2, 2, 60) * rng.choice([-1, 1], 60), rng.uniform(-2, 2, 30)]).astype("float32")  # fmt: skip
    h, a = pt.fvector("h"), pt.fvector("a")
    cpu = pytensor.function([h, a], pt.owens_t(h, a), mode=MLIR)
    gpu = pytensor.function([h, a], pt.owens_t(h, a), mode="MLIR_VULKAN")
    want, got = cpu(hv, av), gpu(hv, av)
    normal = ~(np.abs(want) < np.finfo("float32").tiny) | (want == 0)
    assert_same(got[normal] + 0, want[normal] + 0, rtol=1e-4, atol=1e-30)
