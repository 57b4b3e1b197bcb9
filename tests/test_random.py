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


# (name, builder, parameters, the scipy distribution they give)
CONTINUOUS = [
    ("uniform", ptr.uniform, (-2.0, 3.0), stats.uniform(-2.0, 5.0)),
    ("normal", ptr.normal, (1.5, 2.0), stats.norm(1.5, 2.0)),
    ("halfnormal", ptr.halfnormal, (1.0, 3.0), stats.halfnorm(1.0, 3.0)),
    ("lognormal", ptr.lognormal, (0.5, 0.75), stats.lognorm(0.75, scale=np.exp(0.5))),
    ("cauchy", ptr.cauchy, (-1.0, 0.5), stats.cauchy(-1.0, 0.5)),
    ("laplace", ptr.laplace, (2.0, 1.5), stats.laplace(2.0, 1.5)),
    ("logistic", ptr.logistic, (0.0, 2.0), stats.logistic(0.0, 2.0)),
    ("gumbel", ptr.gumbel, (1.0, 2.0), stats.gumbel_r(1.0, 2.0)),
    ("exponential", ptr.exponential, (2.5,), stats.expon(scale=2.5)),
    ("weibull", ptr.weibull, (1.5,), stats.weibull_min(1.5)),
    ("pareto", ptr.pareto, (3.0, 2.0), stats.pareto(3.0, scale=2.0)),
    ("halfcauchy", ptr.halfcauchy, (1.0, 2.0), stats.halfcauchy(1.0, 2.0)),
    ("triangular", ptr.triangular, (-1.0, 0.5, 2.0), stats.triang(0.5, -1.0, 3.0)),
    ("wald", ptr.wald, (2.0, 3.0), stats.invgauss(2.0 / 3.0, scale=3.0)),
    ("truncexpon", ptr.truncexpon, (2.0, 1.0, 0.5), stats.truncexpon(2.0, 1.0, 0.5)),
    ("gamma small shape", lambda a, s, **k: ptr.gamma(a, scale=s, **k), (0.4, 2.0), stats.gamma(0.4, scale=2.0)),
    ("gamma", lambda a, s, **k: ptr.gamma(a, scale=s, **k), (3.5, 1.5), stats.gamma(3.5, scale=1.5)),
    ("beta small shapes", ptr.beta, (0.3, 0.7), stats.beta(0.3, 0.7)),
    ("beta", ptr.beta, (2.0, 5.0), stats.beta(2.0, 5.0)),
    ("invgamma", ptr.invgamma, (3.0, 2.0), stats.invgamma(3.0, scale=2.0)),
    ("t", ptr.t, (4.0, 1.0, 2.0), stats.t(4.0, 1.0, 2.0)),
    ("chisquare", ptr.chisquare, (3.0,), stats.chi2(3.0)),
    ("vonmises", ptr.vonmises, (0.0, 2.0), stats.vonmises(2.0)),
    ("gengamma", ptr.gengamma, (2.0, 1.5, 3.0), stats.gengamma(2.0 / 1.5, 1.5, scale=3.0)),
    ("vonmises wide", ptr.vonmises, (0.0, 1e-6), stats.vonmises(1e-6)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_continuous_distributions_pass_ks_tests(dtype):
    # All distributions in one function (one compile per dtype), each with parameters of
    # its own as symbolic scalars, the draws 100 x 200 matrices. Each KS test's p-value must
    # exceed 1e-3; the seed is fixed, so the outcome is the same on every run.
    rng = pytensor.shared(np.random.default_rng(7))
    inputs, draws, values = [], [], []
    for name, make, params, _ in CONTINUOUS:
        args = [pt.scalar(f"{name}_{k}", dtype=dtype) for k in range(len(params))]
        rng, x = make(*args, size=(100, 200), rng=rng, return_next_rng=True, **({} if name == "chisquare" else {"dtype": dtype}))
        inputs += args
        values += [np.asarray(v, dtype) for v in params]
        draws.append(x)
    f = pytensor.function(inputs, draws, mode=MLIR)
    outs = f(*values)
    for (name, _, _, dist), x in zip(CONTINUOUS, outs):
        want_dtype = "float64" if name == "chisquare" else dtype
        assert x.dtype == want_dtype and x.shape == (100, 200), name
        assert np.isfinite(x).all(), name
        pvalue = stats.kstest(x.ravel().astype(np.float64), dist.cdf).pvalue
        assert pvalue > 1e-3, f"{name}: KS p-value {pvalue}"
    # Draws from one chain of rngs are independent of each other.
    assert abs(np.corrcoef(outs[0].ravel(), outs[1].ravel())[0, 1]) < 0.03


def assert_fits(draws, dist, name):
    """A chi-square goodness-of-fit test of integer draws against `dist` (scipy), the tail
    bins merged so that each expects at least 20 draws; p-value above 1e-3."""
    n = draws.size
    hi = int(dist.ppf(1 - 20 / n)) + 1
    lo = max(int(dist.ppf(20 / n)) - 1, int(dist.support()[0]))
    edges = np.arange(lo, hi + 1)
    observed = np.array([(draws < lo).sum()] + [(draws == k).sum() for k in edges[:-1]] + [(draws >= hi).sum()])
    expected = n * np.array([dist.cdf(lo - 1)] + [dist.pmf(k) for k in edges[:-1]] + [dist.sf(hi - 1)])
    keep = expected > 0
    pvalue = stats.chisquare(observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()).pvalue
    assert pvalue > 1e-3, f"{name}: chi-square p-value {pvalue}"


def test_counts_fit_their_distributions():
    # Poisson below and above the switch of methods (10), geometric, negative binomial.
    rng = pytensor.shared(np.random.default_rng(13))
    lam, p, n, q = pt.dvector("lam"), pt.dscalar("p"), pt.dscalar("n"), pt.dscalar("q")
    rng, k = ptr.poisson(lam, size=(40000, 3), rng=rng, return_next_rng=True)
    rng, gk = ptr.geometric(p, size=(40000,), rng=rng, return_next_rng=True)
    _, nb = ptr.negative_binomial(n, q, size=(40000,), rng=rng, return_next_rng=True)
    trials, prob = pt.lvector("trials"), pt.dvector("prob")
    _, bk = ptr.binomial(trials, prob, size=(40000, 5), rng=rng, return_next_rng=True)
    f = pytensor.function([lam, p, n, q, trials, prob], [k, gk, nb, bk], mode=MLIR, on_unused_input="ignore")
    lams = np.array([0.7, 9.5, 150.0])
    # Binomials inverted term by term (means 6 and 5, the second by n - draw) and by BTRS.
    ns, ps = np.array([20, 50, 1000, 10**6, 7]), np.array([0.3, 0.9, 0.3, 0.7, 0.5])
    counts, geo, negbin, binom = f(lams, 0.3, 2.5, 0.3, ns, ps)
    assert binom.dtype == np.int64
    fresh = pytensor.shared(np.random.default_rng(41))
    bb = pytensor.function([], ptr.betabinom(10, 2.0, 3.0, size=(40000,), rng=fresh, return_next_rng=True)[1], mode=MLIR)()
    assert_fits(bb, stats.betabinom(10, 2.0, 3.0), "betabinom")
    for j in range(5):
        assert_fits(binom[:, j], stats.binom(ns[j], ps[j]), f"binomial {ns[j]}, {ps[j]}")
    assert counts.dtype == np.int64 and geo.dtype == np.int64 and negbin.dtype == np.int64
    for j, m in enumerate(lams):
        assert_fits(counts[:, j], stats.poisson(m), f"poisson {m}")
    assert_fits(geo, stats.geom(0.3), "geometric")
    assert_fits(negbin, stats.nbinom(2.5, 0.3), "negative_binomial")
    # Degenerate parameters: lam 0, p 1.
    counts, geo, negbin, binom = f(np.zeros(3), 1.0, 2.5, 1.0, np.array([0, 5, 5, 3, 0]), np.array([0.5, 0.0, 1.0, 1.0, 0.0]))
    assert (counts == 0).all() and (geo == 1).all() and (negbin == 0).all()
    assert (binom == [0, 0, 5, 3, 0]).all()


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


def test_categorical_and_dirichlet():
    # Vector parameters: categorical's weights (one vector per draw, batched) and
    # dirichlet's shapes (a vector of draws per vector of shapes).
    rng = pytensor.shared(np.random.default_rng(17))
    weights, alpha = pt.dmatrix("weights"), pt.dvector("alpha")
    rng2, c = ptr.categorical(weights, size=(30000, 3), rng=rng, return_next_rng=True)
    _, d = ptr.dirichlet(alpha, size=(30000,), rng=rng2, return_next_rng=True)
    _, c_plain = ptr.categorical(weights, rng=rng, return_next_rng=True)
    _, d_batched = ptr.dirichlet(pt.dmatrix("alphas"), rng=rng, return_next_rng=True)
    inputs = [weights, alpha, d_batched.owner.inputs[2]]
    f = pytensor.function(inputs, [c, d, c_plain, d_batched], mode=MLIR)
    ref = pytensor.function(inputs, [c, d, c_plain, d_batched], mode=C)
    w = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.1, 0.1, 0.1]])
    a = np.array([0.5, 1.0, 3.0])
    values = [w, a, np.ones((4, 2))]
    got, want = f(*values), ref(*values)
    for g, r in zip(got, want):
        assert g.dtype == r.dtype and g.shape == r.shape
    cats, dirs = got[0], got[1]
    # The weights are not normalized: sums below 1 leave draws past the last category.
    expected = [np.array([0.2, 0.3, 0.5]), np.array([1.0, 0.0, 0.0]), np.array([0.1, 0.1, 0.1, 0.7])]
    for j, e in enumerate(expected):
        observed = np.bincount(cats[:, j], minlength=len(e))
        assert len(observed) == len(e), j
        keep = e > 0
        assert (observed[~keep] == 0).all()
        if keep.sum() > 1:
            assert stats.chisquare(observed[keep], 30000 * e[keep]).pvalue > 1e-3, j
    np.testing.assert_allclose(dirs.sum(axis=1), 1.0, rtol=1e-12)
    for k in range(3):
        assert stats.kstest(dirs[:, k], stats.beta(a[k], a.sum() - a[k]).cdf).pvalue > 1e-3, k
    # Small shapes (numpy's gammas underflow there too): still vectors summing to 1.
    tiny = f(w, np.array([1e-3, 1e-3]), np.ones((4, 2)))[1]
    assert np.isfinite(tiny).all() and np.allclose(tiny.sum(axis=1), 1.0)
    raises_like(f, ref, [w, np.array([0.5, -1.0, 1.0]), np.ones((4, 2))])


def test_multivariate_normal():
    rng = pytensor.shared(np.random.default_rng(23))
    mean, cov = pt.dvector("mean"), pt.dmatrix("cov")
    rng2, x = ptr.multivariate_normal(mean, cov, size=(40000,), rng=rng, return_next_rng=True)
    means = pt.dmatrix("means")
    _, y = ptr.multivariate_normal(means, cov, rng=rng2, return_next_rng=True)
    f = pytensor.function([mean, cov, means], [x, y], mode=MLIR)
    ref = pytensor.function([mean, cov, means], [x, y], mode=C)
    m = np.array([1.0, -2.0, 0.5])
    a = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 0.5]])
    values = [m, a, np.zeros((5, 3))]
    got, want = f(*values), ref(*values)
    for g, r in zip(got, want):
        assert g.dtype == r.dtype and g.shape == r.shape
    draws = got[0]
    # Sample mean and covariance within 5 standard errors (n = 40000).
    se = np.sqrt(np.diag(a) / 40000)
    assert (np.abs(draws.mean(axis=0) - m) < 5 * se).all()
    np.testing.assert_allclose(np.cov(draws.T), a, atol=5 * np.sqrt(2 / 40000) * 2)
    # Each coordinate is normal with its variance.
    for k in range(3):
        assert stats.kstest(draws[:, k], stats.norm(m[k], np.sqrt(a[k, k])).cdf).pvalue > 1e-3
    # A cov that is not positive definite raises numpy's LinAlgError, as the C backend.
    raises_like(f, ref, [m, -a, np.zeros((5, 3))])
    raises_like(f, ref, [m, np.eye(2), np.zeros((5, 3))])

    # numpy's other methods, cov's root by its eigen or singular value decomposition: the
    # same law; a singular cov drawn from (the zero eigenvalue's rounding taken as 0); for
    # -I eigh's sqrt gives NaN draws and svd's |w| finite ones, as C; LinAlgError for a
    # NaN cov.
    for method in ["eigh", "svd"]:
        z = ptr.multivariate_normal(mean, cov, size=(40000,), method=method, rng=rng, return_next_rng=True)[1]
        f, ref = pytensor.function([mean, cov], z, mode=MLIR), pytensor.function([mean, cov], z, mode=C)
        draws = f(m, a)
        assert draws.dtype == ref(m, a).dtype and draws.shape == ref(m, a).shape
        assert (np.abs(draws.mean(axis=0) - m) < 5 * se).all(), method
        np.testing.assert_allclose(np.cov(draws.T), a, atol=5 * np.sqrt(2 / 40000) * 2, err_msg=method)
        singular = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
        draws = f(m, singular)
        assert np.isfinite(draws).all() and np.isfinite(ref(m, singular)).all(), method
        np.testing.assert_allclose(np.cov(draws.T), singular, atol=0.05, err_msg=method)
        got, want = f(m, -np.eye(3)), ref(m, -np.eye(3))
        assert (np.isnan(got) == np.isnan(want)).all(), method
        # (C's outcome for an infinity depends on its earlier calls: not compared.)
        err, _ = raises_like(f, ref, [m, np.full((3, 3), np.nan)])
        assert type(err).__name__ == "LinAlgError"


def test_multivariate_normal_with_a_covariance_per_draw():
    """A stack of covariance matrices: each draw uses its own (the stack's batch dims
    against size's, a batch dim of length 1 broadcast); sample means and covariances per
    matrix within 5 standard errors; LinAlgError where any is not positive definite, and
    a stack of another length raises, as C."""
    rng = pytensor.shared(np.random.default_rng(29))
    means, covs = pt.dmatrix("means"), pt.tensor3("covs")
    _, x = ptr.multivariate_normal(means, covs, size=(30000, 3), rng=rng, return_next_rng=True)
    one_mean = pt.TensorType("float64", shape=(1, None))("one_mean")
    _, y = ptr.multivariate_normal(one_mean, covs, rng=rng, return_next_rng=True)
    f = pytensor.function([means, covs], x, mode=MLIR)
    ref = pytensor.function([means, covs], x, mode=C)
    g = pytensor.function([one_mean, covs], y, mode=MLIR)
    gref = pytensor.function([one_mean, covs], y, mode=C)
    r = np.random.default_rng(0)
    stack = np.stack([(lambda a: a @ a.T + (k + 1) * np.eye(2))(r.normal(size=(2, 2))) for k in range(3)])
    m = np.arange(6.0).reshape(3, 2)
    got, want = f(m, stack), ref(m, stack)
    assert got.dtype == want.dtype and got.shape == want.shape
    for k in range(3):
        se = np.sqrt(np.diag(stack[k]) / 30000)
        assert (np.abs(got[:, k].mean(axis=0) - m[k]) < 5 * se).all(), k
        np.testing.assert_allclose(np.cov(got[:, k].T), stack[k], atol=5 * np.sqrt(2 / 30000) * np.abs(stack[k]).max())
    got, want = g(np.zeros((1, 2)), stack), gref(np.zeros((1, 2)), stack)
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = stack.copy()
    bad[1] = -np.eye(2)
    err, _ = raises_like(f, ref, [m, bad])
    assert type(err).__name__ == "LinAlgError"
    raises_like(f, ref, [m, stack[:2]])


@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_multivariate_normal_stack_by_eigh_and_svd(method):
    """methods eigh and svd with a stack of covariance matrices: each draw's sample mean
    and covariance within 5 standard errors of its own matrix's (one of them singular);
    -I's NaN draws (eigh) or finite ones (svd) as C's; LinAlgError for a NaN anywhere in
    the stack, as C raises it."""
    rng = pytensor.shared(np.random.default_rng(31))
    means, covs = pt.dmatrix("means"), pt.tensor3("covs")
    _, x = ptr.multivariate_normal(means, covs, size=(30000, 3), method=method, rng=rng, return_next_rng=True)
    f = pytensor.function([means, covs], x, mode=MLIR)
    ref = pytensor.function([means, covs], x, mode=C)
    r = np.random.default_rng(1)
    stack = np.stack([(lambda a: a @ a.T + (k + 1) * np.eye(3))(r.normal(size=(3, 3))) for k in range(3)])
    v = r.normal(size=3)
    stack[2] = np.outer(v, v)  # singular: rank 1
    m = np.arange(9.0).reshape(3, 3)
    got, want = f(m, stack), ref(m, stack)
    assert got.dtype == want.dtype and got.shape == want.shape
    for k in range(3):
        se = np.sqrt(np.diag(stack[k]) / 30000)
        assert (np.abs(got[:, k].mean(axis=0) - m[k]) < 5 * se + 1e-12).all(), k
        np.testing.assert_allclose(np.cov(got[:, k].T), stack[k], atol=5 * np.sqrt(2 / 30000) * np.abs(stack[k]).max())
    # The NaN pattern of the regular and the -I matrix's draws (the singular one's depends
    # on the sign of LAPACK's rounding of its zero eigenvalues: NaN in C here, where ours
    # are taken as 0 within n eps max|w|, as the statistics above check).
    neg = stack.copy()
    neg[1] = -np.eye(3)
    got, want = f(m, neg), ref(m, neg)
    np.testing.assert_array_equal(np.isnan(got[:, :2]), np.isnan(want[:, :2]))
    bad = stack.copy()
    bad[2, 1, 1] = np.nan
    err, _ = raises_like(f, ref, [m, bad])
    assert type(err).__name__ == "LinAlgError"


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
    # The Generator an update leaves is read back by its key; once numpy has drawn from
    # it, its state (and so the draws) differ.
    held = rng.get_value(borrow=True)
    rng.set_value(held)
    untouched = stepping()
    held.normal()
    rng.set_value(held)
    assert not np.allclose(stepping(), untouched)


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
    # Each parameter in turn set to 0, -1, NaN, infinity (and 0.5 for a probability's
    # sake), the others at their valid values; both backends raise the same exception, or
    # neither does, and where neither does NaN draws are NaN in both.
    cases = [(name, make, params) for name, make, params, _ in CONTINUOUS if name not in ("gamma small shape", "beta small shapes", "invgamma")]
    cases += [("poisson", ptr.poisson, (3.0,)), ("geometric", ptr.geometric, (0.3,)), ("negative_binomial", ptr.negative_binomial, (2.5, 0.3)),
              ("binomial", ptr.binomial, (5, 0.3)), ("betabinom", ptr.betabinom, (5, 2.0, 3.0))]
    for name, make, params in cases:
        # binomial's n is an integer (numpy refuses a float one with TypeError).
        args = [pt.lscalar(f"p{k}") if isinstance(v, int) else pt.dscalar(f"p{k}") for k, v in enumerate(params)]
        rng = pytensor.shared(np.random.default_rng(1))
        out = make(*args, rng=rng, return_next_rng=True)[1]
        f = pytensor.function(args, out, mode=MLIR)
        ref = pytensor.function(args, out, mode=C)
        for k in range(len(params)):
            for bad in [0, -1] if isinstance(params[k], int) else [0.0, -1.0, np.nan, np.inf, 0.5]:
                values = list(params)
                values[k] = bad
                try:
                    want = ref(*values)
                except Exception as e:
                    with pytest.raises(type(e)):
                        f(*values)
                    continue
                got = f(*values)
                assert got.dtype == want.dtype and got.shape == want.shape, (name, values)
                assert np.isnan(got) == np.isnan(want), (name, values)


def test_unsupported_distributions_are_refused_by_name():
    rng = pytensor.shared(np.random.default_rng(1))
    x = ptr.hypergeometric(pt.dscalar("good"), 4, 3, size=(4,), rng=rng, return_next_rng=True)[1]
    with pytest.raises(NotImplementedError, match="hypergeometric with a parameter of dtype float64"):
        pytensor.function([x.owner.inputs[2]], x, mode=MLIR)
    b = ptr.binomial(pt.dscalar("n"), 0.5, rng=rng, return_next_rng=True)[1]
    with pytest.raises(NotImplementedError, match="binomial with n of dtype float64"):
        pytensor.function([b.owner.inputs[2]], b, mode=MLIR)
    m = ptr.choice(np.arange(6).reshape(3, 2), size=(2,), replace=False, rng=rng, return_next_rng=True)[1]
    with pytest.raises(NotImplementedError, match="choice_without_replacement"):
        pytensor.function([], m, mode=MLIR)
    m = ptr.permutation(pt.lscalar("n"), rng=rng, return_next_rng=True)[1]
    with pytest.raises(NotImplementedError, match="permutation of a range"):
        pytensor.function([m.owner.inputs[2]], m, mode=MLIR)


def test_draws_inside_scan():
    # A random walk: the rng a loop state (returned each step), and a shared rng updated
    # by the loop (its update given to the function).
    def walk(x, r):
        next_r, e = ptr.normal(0.0, 1.0, rng=r, return_next_rng=True)
        return x + e, next_r

    x0 = pt.dscalar("x0")
    rng = pytensor.shared(np.random.default_rng(29))
    xs, _ = pytensor.scan(walk, outputs_info=[x0, rng], n_steps=2000, return_updates=False)
    f = pytensor.function([x0], xs, mode=MLIR)
    ref = pytensor.function([x0], xs, mode=C)
    a, r = f(1.0), ref(1.0)
    assert a.dtype == r.dtype and a.shape == r.shape
    steps = np.diff(np.concatenate([[1.0], a]))
    assert stats.kstest(steps, "norm").pvalue > 1e-3
    np.testing.assert_array_equal(f(1.0), a)

    shared = ptr.shared_rng(np.random.default_rng(31))

    def step(x):
        next_r, e = shared.normal(0.0, 1.0)
        return x + e, {shared: next_r}

    ys, updates = pytensor.scan(step, outputs_info=[x0], n_steps=2000)
    g = pytensor.function([x0], ys, mode=MLIR, updates=updates)
    first, second = g(0.0), g(0.0)
    assert not np.allclose(first, second)
    for y in (first, second):
        assert stats.kstest(np.diff(np.concatenate([[0.0], y])), "norm").pvalue > 1e-3


def test_a_constant_generator_draws_as_an_input_of_its_state():
    from pytensor.graph.basic import Constant
    from pytensor.tensor.random.type import RandomGeneratorType

    # A symbolic loc, so that PyTensor does not fold the draws into a constant itself.
    loc = pt.dscalar("loc")
    const = Constant(RandomGeneratorType(), np.random.default_rng(3))
    x = ptr.normal(loc, 1.0, size=(5,), rng=const, return_next_rng=True)[1]
    f = pytensor.function([loc], x, mode=MLIR)
    assert f(0.0).shape == pytensor.function([loc], x, mode=C)(0.0).shape
    shared = pytensor.shared(np.random.default_rng(3))
    y = ptr.normal(loc, 1.0, size=(5,), rng=shared, return_next_rng=True)[1]
    np.testing.assert_array_equal(f(0.0), pytensor.function([loc], y, mode=MLIR)(0.0))


def test_multinomial():
    rng = pytensor.shared(np.random.default_rng(37))
    n, p = pt.lvector("n"), pt.dvector("p")
    _, x = ptr.multinomial(n, p, size=(20000, 3), rng=rng, return_next_rng=True)
    f = pytensor.function([n, p], x, mode=MLIR)
    ref = pytensor.function([n, p], x, mode=C)
    probs = np.array([0.2, 0.5, 0.3])
    counts = f(np.array([10, 1000, 0]), probs)
    assert counts.dtype == np.int64 and counts.shape == ref(np.array([10, 1000, 0]), probs).shape
    np.testing.assert_array_equal(counts.sum(axis=-1), np.broadcast_to([10, 1000, 0], (20000, 3)))
    # Each category's count is binomial(n, p_k).
    for j, trials in enumerate([10, 1000]):
        for k in range(3):
            assert_fits(counts[:, j, k], stats.binom(trials, probs[k]), f"multinomial {trials} category {k}")
    # Categories of a row are dependent as a multinomial's are: cov = -n p_i p_j.
    c = np.cov(counts[:, 1, 0], counts[:, 1, 1])[0, 1]
    assert abs(c - (-1000 * 0.2 * 0.5)) < 5 * 1000 * 0.2 * 0.5 * np.sqrt(2 / 20000) * 3
    for bad in [(np.array([-1, 5, 5]), probs), (np.array([5, 5, 5]), np.array([0.6, 0.6, -0.2])),
                (np.array([5, 5, 5]), np.array([0.7, 0.6, 0.1])), (np.array([5, 5, 5]), np.array([np.nan, 0.5, 0.5]))]:
        raises_like(f, ref, list(bad))
    # A sum past 1 in the last probability alone is numpy's business: no error.
    assert f(np.array([5, 5, 5]), np.array([0.2, 0.2, 0.9])).sum(axis=-1).max() == 5


def sampler(make, inputs):
    """One draw per call of `make(rng)` (with the rng updated), MLIR and C functions."""
    rng = pytensor.shared(np.random.default_rng(41))
    next_rng, x = make(rng)
    f = pytensor.function(inputs, x, mode=MLIR, updates={rng: next_rng})
    ref = pytensor.function(inputs, x, mode=C, updates={rng: next_rng})
    return f, ref


def assert_frequencies(observed, probabilities, name):
    """A chi-square test of category counts against exact probabilities (p > 1e-3)."""
    observed, probabilities = np.asarray(observed, dtype=float), np.asarray(probabilities, dtype=float)
    keep = probabilities > 0
    assert observed[~keep].sum() == 0, f"{name}: a category of probability 0 was drawn"
    pvalue = stats.chisquare(observed[keep], probabilities[keep] / probabilities[keep].sum() * observed.sum()).pvalue
    assert pvalue > 1e-3, f"{name}: chi-square p-value {pvalue}"


def test_permutation():
    """permutation of a vector (float, lengths 0/1/7) and of a constant integer: the same
    elements as C's draw, dtype and shape; each ordered pair of the first two positions
    equally likely over 3000 draws; a fresh order per call with the rng updated."""
    x = pt.dvector("x")
    f, ref = sampler(lambda rng: ptr.permutation(x, rng=rng, return_next_rng=True), [x])
    for v in [np.zeros(0), np.array([2.5]), np.array([3.0, -1.0, 0.5, 7.0, 7.0, np.inf, -0.0])]:
        got, want = f(v), ref(v)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.sort(got), np.sort(v))
    v = np.arange(5.0)
    draws = np.array([f(v) for _ in range(3000)])
    assert len({tuple(d) for d in draws[:20]}) > 15, "the draws do not change from call to call"
    pairs = np.zeros((5, 5))
    np.add.at(pairs, (draws[:, 0].astype(int), draws[:, 1].astype(int)), 1)
    assert_frequencies(pairs.ravel(), (1 - np.eye(5)).ravel(), "permutation's first two positions")

    f, ref = sampler(lambda rng: ptr.permutation(6, rng=rng, return_next_rng=True), [])
    got, want = f(), ref()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.sort(got), np.arange(6))


def test_choice_without_replacement():
    """choice(replace=False) of k distinct elements, without and with weights: vs C's
    draw in dtype and shape; without weights each ordered pair of the first two equally
    likely; with weights the first draw has probability p_j and the second
    sum_i p_i p_j / (1 - p_i) (drawing one after another, as numpy's choice does), never
    an element of weight 0; numpy's ValueErrors as C raises them."""
    a, p, k = pt.lvector("a"), pt.dvector("p"), pt.lscalar("k")
    f, ref = sampler(lambda rng: ptr.choice(a, size=(3,), replace=False, rng=rng, return_next_rng=True), [a])
    pop = np.array([10, 20, 30, 40, 50, 60])
    draws = np.array([f(pop) for _ in range(3000)])
    assert draws.dtype == ref(pop).dtype and draws.shape[1:] == ref(pop).shape
    assert all(len(set(d)) == 3 for d in draws) and set(draws.ravel()) <= set(pop)
    pairs = np.zeros((6, 6))
    np.add.at(pairs, (draws[:, 0] // 10 - 1, draws[:, 1] // 10 - 1), 1)
    assert_frequencies(pairs.ravel(), (1 - np.eye(6)).ravel(), "choice's first two draws")

    f, ref = sampler(lambda rng: ptr.choice(a, size=(2,), replace=False, p=p, rng=rng, return_next_rng=True), [a, p])
    w = np.array([0.5, 0.0, 0.25, 0.15, 0.1])
    draws = np.array([f(np.arange(5), w) for _ in range(4000)])
    assert all(d[0] != d[1] for d in draws)
    assert_frequencies(np.bincount(draws[:, 0], minlength=5), w, "weighted choice's first draw")
    second = np.array([sum(w[i] * w[j] / (1 - w[i]) for i in range(5) if i != j) for j in range(5)])
    assert_frequencies(np.bincount(draws[:, 1], minlength=5), second, "weighted choice's second draw")

    # Errors: a sample larger than the population, an empty population, and weights that
    # are negative, NaN, of another length, not summing to 1 or with too few positive.
    f, ref = sampler(lambda rng: ptr.choice(a, size=(k,), replace=False, rng=rng, return_next_rng=True), [a, k])
    for args in [(np.arange(3), 4), (np.zeros(0, dtype=np.int64), 1)]:
        raises_like(f, ref, list(args))
    for args in [(np.arange(3), 3), (np.arange(3), 0), (np.zeros(0, dtype=np.int64), 0)]:
        got, want = f(*args), ref(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.sort(got), np.sort(want))
    f, ref = sampler(lambda rng: ptr.choice(a, size=(k,), replace=False, p=p, rng=rng, return_next_rng=True), [a, p, k])
    pop = np.arange(4)
    for weights, size in [([0.5, -0.1, 0.3, 0.3], 1), ([0.5, np.nan, 0.25, 0.25], 1), ([0.5, 0.5], 1),
                          ([0.5, 0.2, 0.2, 0.2], 1), ([0.5, 0.5, 0.0, 0.0], 3), ([0.25] * 4, 5)]:
        raises_like(f, ref, [pop, np.array(weights), size])
    got = f(pop, np.array([0.5, 0.5, 0.0, 0.0]), 2)
    np.testing.assert_array_equal(np.sort(got), [0, 1])


def test_hypergeometric():
    """Chi-square fits against scipy's hypergeom: ball by ball (under 10 drawn from the
    smaller side) and the ratio-of-uniforms method, with each symmetry (more good than bad
    balls, a sample past half the urn); an urn of one colour; numpy's ValueErrors as C."""
    rng = pytensor.shared(np.random.default_rng(43))
    good, bad, sample = pt.lscalar("good"), pt.lscalar("bad"), pt.lscalar("sample")
    _, x = ptr.hypergeometric(good, bad, sample, size=(40000,), rng=rng, return_next_rng=True)
    f = pytensor.function([good, bad, sample], x, mode=MLIR)
    ref = pytensor.function([good, bad, sample], x, mode=C)
    assert f(5, 4, 3).dtype == ref(5, 4, 3).dtype
    for g, b, n in [(5, 4, 3), (40, 7, 42), (50, 60, 30), (1000, 20, 500), (20, 1000, 990), (10**6, 3 * 10**6, 10**5)]:
        assert_fits(f(g, b, n), stats.hypergeom(g + b, g, n), f"hypergeometric({g}, {b}, {n})")
    np.testing.assert_array_equal(f(3, 0, 2), 2)
    np.testing.assert_array_equal(f(0, 5, 5), 0)
    for args in [(-1, 4, 3), (5, -1, 3), (5, 4, -1), (5, 4, 10), (10**9, 1, 3), (1, 10**9, 3)]:
        raises_like(f, ref, list(args))
