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
        x = make(a, b, size=(100, 200), rng=rng, dtype=dtype)
        rng = x.owner.outputs[0]
        inputs += [a, b]
        values += [np.asarray(p, dtype), np.asarray(q, dtype)]
        draws.append(x)
    scale = pt.scalar("scale", dtype=dtype)
    draws.append(ptr.exponential(scale, size=(100, 200), rng=rng, dtype=dtype))
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
