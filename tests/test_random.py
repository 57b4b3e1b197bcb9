"""RandomVariables: draws from Philox4x32-10 in the kernel (lower/random.rs), keyed by a
hash of the Generator's state (pytensor_mlir/random.py).

The streams are this backend's own, so draws are compared with the distribution (KS tests
against scipy.stats with fixed seeds: deterministic, yet they fail on a wrong transform),
and bit-exactly with a Philox written here from the paper where the transform is exact
(uniform); errors, shapes and dtypes with PyTensor's C backend.
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats

from conftest import C, MLIR, raises_like
from pytensor_mlir import random as mlir_random

ptr = pt.random

# Philox4x32-10 (Salmon et al. 2011): round multipliers and key increments.
MULT = (0xD2511F53, 0xCD9E8D57)
WEYL = (0x9E3779B9, 0xBB67AE85)
MASK = 0xFFFFFFFF


def philox(counter, key):
    c, k = list(counter), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + WEYL[0]) & MASK, (k[1] + WEYL[1]) & MASK]
        p0, p1 = MULT[0] * c[0], MULT[1] * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & MASK, (p0 >> 32) ^ c[3] ^ k[1], p0 & MASK]
    return c


def test_reference_philox_known_answers():
    # Random123's known-answer vectors for philox4x32-10.
    assert philox([0] * 4, [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox([MASK] * 4, [MASK] * 2) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    got = philox([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0])
    assert got == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def test_uniform_draws_are_philox_bit_for_bit_and_the_next_rng_too():
    rng = pt.random.type.RandomGeneratorType()("rng")
    n = pt.lscalar("n")
    next_rng, x = ptr.uniform(0.0, 1.0, size=(n,), rng=rng, return_next_rng=True)
    f = pytensor.function([rng, n], [x, next_rng], mode=MLIR)
    gen = np.random.default_rng(2024)
    state = gen.bit_generator.state
    draws, out_rng = f(gen, 37)
    k0, k1, s0, s1 = (int(w) for w in mlir_random.key_of(gen))
    want = []
    for i in range(37):
        w = philox([i, 0, s0, s1], [k0, k1])
        want.append(((w[0] >> 5) * 2**26 + (w[1] >> 6)) * 2.0**-53)
    np.testing.assert_array_equal(draws, np.array(want))
    assert gen.bit_generator.state == state, "the caller's Generator was advanced"
    # The next rng: Philox of the reserved counter (0, 2^31, s0, s1).
    assert isinstance(out_rng, np.random.Generator)
    words = philox([0, 1 << 31, s0, s1], [k0, k1])
    np.testing.assert_array_equal(mlir_random.key_of(out_rng), mlir_random.key_of(mlir_random.generator_of(np.array(words, dtype=np.uint32))))
    # Empty and 0-d sizes.
    assert f(gen, 0)[0].shape == (0,)
    with pytest.raises(ValueError):
        f(gen, -1)


# (builder, params, scipy distribution of those params, output dtype)
CONTINUOUS = [
    ("uniform", lambda a, b, **k: ptr.uniform(a, b, **k), (-2.0, 3.0), stats.uniform(-2.0, 5.0)),
    ("normal", lambda a, b, **k: ptr.normal(a, b, **k), (1.5, 2.0), stats.norm(1.5, 2.0)),
    ("halfnormal", lambda a, b, **k: ptr.halfnormal(a, b, **k), (1.0, 3.0), stats.halfnorm(1.0, 3.0)),
    ("lognormal", lambda a, b, **k: ptr.lognormal(a, b, **k), (0.5, 0.75), stats.lognorm(0.75, scale=np.exp(0.5))),
    ("cauchy", lambda a, b, **k: ptr.cauchy(a, b, **k), (-1.0, 0.5), stats.cauchy(-1.0, 0.5)),
    ("laplace", lambda a, b, **k: ptr.laplace(a, b, **k), (2.0, 1.5), stats.laplace(2.0, 1.5)),
    ("logistic", lambda a, b, **k: ptr.logistic(a, b, **k), (0.0, 2.0), stats.logistic(0.0, 2.0)),
    ("gumbel", lambda a, b, **k: ptr.gumbel(a, b, **k), (1.0, 2.0), stats.gumbel_r(1.0, 2.0)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_continuous_distributions_pass_ks_tests(dtype):
    # All distributions in one function (one compile per dtype), each with parameters of
    # its own as symbolic scalars, the draws 100 x 200 matrices. Each KS test's p-value must
    # exceed 1e-3; the seed is fixed, so the outcome is the same on every run.
    rng = pytensor.shared(np.random.default_rng(7))
    inputs, draws, values = [], [], []
    for name, make, (p, q), _ in CONTINUOUS:
        a, b = pt.scalar(f"{name}_a", dtype=dtype), pt.scalar(f"{name}_b", dtype=dtype)
        rng, x = make(a, b, size=(100, 200), rng=rng, dtype=dtype, return_next_rng=True)
        inputs += [a, b]
        values += [np.asarray(p, dtype), np.asarray(q, dtype)]
        draws.append(x)
    scale = pt.scalar("scale", dtype=dtype)
    draws.append(ptr.exponential(scale, size=(100, 200), rng=rng, dtype=dtype, return_next_rng=True)[1])
    f = pytensor.function(inputs + [scale], draws, mode=MLIR)
    outs = f(*values, np.asarray(2.5, dtype))
    dists = [(name, dist) for name, _, _, dist in CONTINUOUS] + [("exponential", stats.expon(scale=2.5))]
    for (name, dist), x in zip(dists, outs):
        assert x.dtype == dtype and x.shape == (100, 200), name
        assert np.isfinite(x).all(), name
        pvalue = stats.kstest(x.ravel().astype(np.float64), dist.cdf).pvalue
        assert pvalue > 1e-3, f"{name}: KS p-value {pvalue}"
    # Draws from one chain of rngs are independent of each other.
    assert abs(np.corrcoef(outs[0].ravel(), outs[1].ravel())[0, 1]) < 0.03


def test_discrete_distributions():
    p = pt.dvector("p")
    low, high = pt.lscalar("low"), pt.lscalar("high")
    rng = pytensor.shared(np.random.default_rng(11))
    rng2, b = ptr.bernoulli(p, size=(20000, 3), rng=rng, return_next_rng=True)
    _, i = ptr.integers(low, high, size=(60000,), rng=rng2, return_next_rng=True)
    f = pytensor.function([p, low, high], [b, i], mode=MLIR)
    ref = pytensor.function([p, low, high], [b, i], mode=C)
    probs = np.array([0.0, 0.3, 1.0])
    bern, ints = f(probs, -3, 4)
    want_b, want_i = ref(probs, -3, 4)
    assert bern.dtype == want_b.dtype and bern.shape == want_b.shape
    assert ints.dtype == want_i.dtype and ints.shape == want_i.shape
    assert (bern[:, 0] == 0).all() and (bern[:, 2] == 1).all()
    # 20000 draws of p = 0.3: the count's sd is 65.
    assert abs(bern[:, 1].sum() - 6000) < 5 * 65
    assert ints.min() == -3 and ints.max() == 3
    counts = np.bincount(ints + 3, minlength=7)
    assert stats.chisquare(counts).pvalue > 1e-3
    # A range past 2^32 still reaches its whole width.
    big = f(probs, -(2**40), 2**40)[1]
    assert big.min() >= -(2**40) and big.max() < 2**40 and big.max() - big.min() > 2**40
    # Bad parameters raise what the C backend raises (scipy, numpy).
    for values in [(np.array([1.5]), 0, 1), (np.array([np.nan]), 0, 1), (np.array([-0.1]), 0, 1), (probs, 3, 3), (probs, 4, 3)]:
        raises_like(f, ref, values)


def test_parameters_broadcast_against_the_size():
    loc, scale = pt.dvector("loc"), pt.dmatrix("scale")
    rng = pytensor.shared(np.random.default_rng(3))
    n = pt.lscalar("n")
    _, x = ptr.normal(loc, scale, size=(n, loc.shape[0]), rng=rng, return_next_rng=True)
    _, y = ptr.normal(loc, scale, rng=rng, return_next_rng=True)
    f = pytensor.function([loc, scale, n], [x, y], mode=MLIR)
    ref = pytensor.function([loc, scale, n], [x, y], mode=C)
    locs = np.array([-100.0, 0.0, 100.0])
    x_, y_ = f(locs, np.array([[1.0, 2.0, 3.0]]), 30000)
    assert x_.shape == (30000, 3) and y_.shape == (1, 3)
    for k in range(3):
        assert stats.kstest(x_[:, k], stats.norm(locs[k], k + 1.0).cdf).pvalue > 1e-3
    # A scale of one row broadcast over n rows; of n rows (no broadcasting); the shapes
    # the C backend refuses are refused too.
    assert f(locs, np.ones((4, 3)), 4)[0].shape == (4, 3)
    for values in [(locs, np.ones((4, 3)), 5), (locs, np.ones((1, 2)), 5)]:
        raises_like(f, ref, values)
    with pytest.raises(ValueError):
        f(locs, np.ones((1, 3)), -2)


def test_stream_contract():
    rng = pytensor.shared(np.random.default_rng(5))
    next_rng, x = ptr.normal(0, 1, size=(1000,), rng=rng, return_next_rng=True)
    _, again = ptr.normal(0, 1, size=(1000,), rng=rng, return_next_rng=True)
    _, chained = ptr.normal(0, 1, size=(1000,), rng=next_rng, return_next_rng=True)
    plain = pytensor.function([], [x, again, chained], mode=MLIR)
    ref = pytensor.function([], [x, again, chained], mode=C)
    a, b, c = plain()
    ra, rb, rc = ref()
    # Two nodes on one rng draw the same numbers (as in the C backend); chained nodes do not.
    assert (ra == rb).all() and (a == b).all()
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.15 and not (ra == rc).all()
    # Without updates the shared Generator stays: the same draws every call, from two
    # functions alike; the caller's Generator is not advanced.
    state = rng.get_value(borrow=True).bit_generator.state
    again_f = pytensor.function([], x, mode=MLIR)
    np.testing.assert_array_equal(plain()[0], a)
    np.testing.assert_array_equal(again_f(), a)
    assert rng.get_value(borrow=True).bit_generator.state == state
    # With the update, successive calls draw anew, and resetting the seed repeats them.
    stepping = pytensor.function([], x, mode=MLIR, updates={rng: next_rng})
    first, second = stepping(), stepping()
    assert not np.allclose(first, second) and abs(np.corrcoef(first, second)[0, 1]) < 0.15
    assert isinstance(rng.get_value(borrow=True), np.random.Generator)
    rng.set_value(np.random.default_rng(5))
    np.testing.assert_array_equal(stepping(), first)
    np.testing.assert_array_equal(stepping(), second)
    # Another seed, other draws.
    rng.set_value(np.random.default_rng(6))
    assert not np.allclose(stepping(), first)


def test_shared_rng_method_api_and_a_size_argument():
    # PyTensor's rng.method() API with a size given as an integer vector argument.
    rng = ptr.shared_rng(seed=123)
    shape = pt.tensor("shape", shape=(2,), dtype="int64")
    next_rng, x = rng.uniform(-1.0, 1.0, size=shape)
    f = pytensor.function([shape], x, mode=MLIR, updates={rng: next_rng})
    a, b = f(np.array([3, 4])), f(np.array([3, 4]))
    assert a.shape == (3, 4) and (np.abs(a) <= 1).all() and not np.allclose(a, b)
    assert f(np.array([0, 5])).shape == (0, 5)
    ref = pytensor.function([shape], x, mode=C)
    raises_like(f, ref, [np.array([-1, 2])])


def test_parameter_errors_match_the_c_backend():
    a, b = pt.dscalar("a"), pt.dscalar("b")
    rng = pytensor.shared(np.random.default_rng(1))
    outs = {}
    for name, make, _, _ in CONTINUOUS:
        outs[name] = make(a, b, rng=rng, return_next_rng=True)[1]
    outs["exponential"] = ptr.exponential(b, rng=rng, return_next_rng=True)[1]
    for name, out in outs.items():
        f = pytensor.function([a, b], out, mode=MLIR, on_unused_input="ignore")
        ref = pytensor.function([a, b], out, mode=C, on_unused_input="ignore")
        for values in [(0.0, -1.0), (0.0, np.nan), (1.0, 0.5), (0.0, np.inf), (np.nan, 1.0), (0.0, 0.0)]:
            try:
                want = ref(*values)
            except Exception as e:
                with pytest.raises(type(e)):
                    f(*values)
                continue
            got = f(*values)
            assert got.dtype == want.dtype and got.shape == want.shape
            # Draws differ; what is determined must agree: NaN, infinities, the point mass.
            assert np.isnan(got) == np.isnan(want), (name, values)
            if values[1] == 0.0 and name not in ("uniform", "exponential"):
                expected = np.exp(values[0]) if name == "lognormal" else values[0]
                assert got == expected, (name, values)


def test_unsupported_distributions_are_refused_by_name():
    rng = pytensor.shared(np.random.default_rng(1))
    x = ptr.poisson(3.0, size=(4,), rng=rng, return_next_rng=True)[1]
    with pytest.raises(NotImplementedError, match="poisson"):
        pytensor.function([], x, mode=MLIR)
    m = ptr.multivariate_normal(np.zeros(2), np.eye(2), rng=rng, return_next_rng=True)[1]
    with pytest.raises(NotImplementedError, match="multivariate_normal"):
        pytensor.function([], m, mode=MLIR)
