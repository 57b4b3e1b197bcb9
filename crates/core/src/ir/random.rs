//! PyTensor's `RandomVariable`s (`NormalRV`, `UniformRV`, ...): which distribution a
//! node draws from, by the Op's `name` prop, and the dtype of its draws.

use super::export::ExportedOp;
use crate::dtype::DType;
use serde_json::Value;

/// The distributions lowered, each with PyTensor's parameters in its order.
/// How `multivariate_normal` takes the square root of its covariance: numpy's methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MvMethod {
    Cholesky,
    Eigh,
    Svd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// (low, high)
    Uniform,
    /// (loc, scale)
    Normal,
    /// (loc, scale): loc + scale |z|, scipy's halfnorm.
    HalfNormal,
    /// (mean, sigma): exp(mean + sigma z).
    LogNormal,
    /// (scale)
    Exponential,
    /// (loc, scale), scipy's cauchy.
    Cauchy,
    /// (loc, scale)
    Laplace,
    /// (loc, scale)
    Logistic,
    /// (loc, scale), scipy's gumbel_r.
    Gumbel,
    /// (p), scipy's bernoulli: int64 draws.
    Bernoulli,
    /// (low, high): numpy's `integers`, high excluded.
    Integers,
    /// (a): numpy's weibull, (-log(1 - u))^(1/a).
    Weibull,
    /// (b, scale), scipy's pareto.
    Pareto,
    /// (loc, scale), scipy's halfcauchy.
    HalfCauchy,
    /// (p): trials to the first success, int64.
    Geometric,
    /// (left, mode, right)
    Triangular,
    /// (mean, scale): the inverse Gaussian.
    Wald,
    /// (b, loc, scale), scipy's truncexpon.
    TruncExpon,
    /// (shape, scale)
    Gamma,
    /// (alpha, beta)
    Beta,
    /// (shape, scale): 1 / gamma(shape, 1 / scale).
    InvGamma,
    /// (df, loc, scale), scipy's t.
    StudentT,
    /// (lam): int64.
    Poisson,
    /// (n, p), scipy's nbinom: a Poisson of a gamma mean, int64.
    NegativeBinomial,
    /// (n, p): int64 n, int64 draws.
    Binomial,
    /// (p): a vector of category weights per draw; int64, numpy's searchsorted of p's
    /// cumulative sum (as PyTensor's rng_fn).
    Categorical,
    /// (alpha): a vector per draw, and a vector of draws.
    Dirichlet,
    /// (n, a, b), scipy's betabinom: a binomial of a beta probability, int64.
    BetaBinomial,
    /// (alpha, p, lambd): scipy's gengamma(alpha / p, p, scale=lambd).
    GenGamma,
    /// (n, p): counts of n draws over p's categories, int64.
    Multinomial,
    /// (mu, kappa): numpy's von Mises, in [-pi, pi].
    VonMises,
    /// (mean, cov): mean + R z, R cov's square root by the method (lower/random/mv_normal.rs).
    MvNormal(MvMethod),
    /// (ngood, nbad, nsample), integer counts.
    HyperGeometric,
    /// `PermutationRV` (lower/random/shuffle.rs).
    Permutation,
    /// `ChoiceWithoutReplacement`, with or without weights (lower/random/shuffle.rs).
    Choice,
}

impl Distribution {
    /// The distribution PyTensor's `name` prop names, if lowered.
    pub fn from_name(name: &str) -> Option<Distribution> {
        Some(match name {
            "uniform" => Distribution::Uniform,
            "normal" => Distribution::Normal,
            "halfnormal" => Distribution::HalfNormal,
            "lognormal" => Distribution::LogNormal,
            "exponential" => Distribution::Exponential,
            "cauchy" => Distribution::Cauchy,
            "laplace" => Distribution::Laplace,
            "logistic" => Distribution::Logistic,
            "gumbel" => Distribution::Gumbel,
            "bernoulli" => Distribution::Bernoulli,
            "integers" => Distribution::Integers,
            "weibull" => Distribution::Weibull,
            "pareto" => Distribution::Pareto,
            "halfcauchy" => Distribution::HalfCauchy,
            "geometric" => Distribution::Geometric,
            "triangular" => Distribution::Triangular,
            "wald" => Distribution::Wald,
            "truncexpon" => Distribution::TruncExpon,
            "gamma" => Distribution::Gamma,
            "beta" => Distribution::Beta,
            "invgamma" => Distribution::InvGamma,
            "t" => Distribution::StudentT,
            "poisson" => Distribution::Poisson,
            "negative_binomial" => Distribution::NegativeBinomial,
            "binomial" => Distribution::Binomial,
            "categorical" => Distribution::Categorical,
            "dirichlet" => Distribution::Dirichlet,
            "multivariate_normal" => Distribution::MvNormal(MvMethod::Cholesky),
            "vonmises" => Distribution::VonMises,
            "multinomial" => Distribution::Multinomial,
            "beta_binomial" => Distribution::BetaBinomial,
            "gengamma" => Distribution::GenGamma,
            "hypergeometric" => Distribution::HyperGeometric,
            "permutation" => Distribution::Permutation,
            "choice_without_replacement" => Distribution::Choice,
            _ => return None,
        })
    }

    /// How many parameters the distribution takes (each a scalar per draw).
    pub fn arity(self) -> usize {
        use Distribution::*;
        match self {
            Exponential | Bernoulli | Weibull | Geometric | Poisson | Categorical | Dirichlet => 1,
            Triangular | TruncExpon | StudentT | BetaBinomial | GenGamma | HyperGeometric => 3,
            _ => 2,
        }
    }
}

impl Distribution {
    /// The core dims of each parameter and of the draws (gufunc signature): a vector of
    /// weights per draw for categorical, a vector per draw for dirichlet.
    pub fn core_ndims(self) -> (usize, usize) {
        match self {
            Distribution::Categorical => (1, 0),
            Distribution::Dirichlet => (1, 1),
            _ => (0, 0),
        }
    }

    /// PyTensor's signature for the distribution.
    pub fn signature(self) -> String {
        match self {
            Distribution::Categorical => "(p)->()".into(),
            Distribution::Dirichlet => "(a)->(a)".into(),
            Distribution::MvNormal(_) => "(n),(n,n)->(n)".into(),
            Distribution::Multinomial => "(),(p)->(p)".into(),
            Distribution::Permutation => "(x0)->(x0)".into(),
            Distribution::Choice => "(a0),(1)->(s0)".into(),
            _ => ["()"; 3][..self.arity()].join(",") + "->()",
        }
    }
}

/// A `RandomVariable` node's distribution and output dtype, from its props (`name`,
/// `signature`, `dtype`).
pub fn parse(op: &ExportedOp) -> Result<(Distribution, DType), String> {
    let name = op.props.get("name").and_then(Value::as_str).ok_or("prop name is not a string")?;
    let dist = Distribution::from_name(name).ok_or_else(|| format!("RandomVariable {name}: no lowering rule for this distribution"))?;
    let signature = op.props.get("signature").and_then(Value::as_str).ok_or("prop signature is not a string")?;
    let expected = dist.signature();
    // A shuffle of a range (an integer x or a) is the other signature lowered; a choice's
    // weights the other input.
    let also = match dist {
        Distribution::Permutation => &["()->(x)"][..],
        Distribution::Choice => &["(),(1)->(s0)", "(a0),(a0),(1)->(s0)"][..],
        _ => &[][..],
    };
    if signature != expected && !also.contains(&signature) {
        return Err(format!("RandomVariable {name} with signature {signature} (only {expected} is lowered)"));
    }
    let dist = match dist {
        // How cov's square root is taken (lower/random/mv_normal.rs).
        Distribution::MvNormal(_) => match op.props.get("method").and_then(Value::as_str) {
            Some("cholesky") => Distribution::MvNormal(MvMethod::Cholesky),
            Some("eigh") => Distribution::MvNormal(MvMethod::Eigh),
            Some("svd") => Distribution::MvNormal(MvMethod::Svd),
            other => return Err(format!("RandomVariable multivariate_normal with method={}", other.unwrap_or("?"))),
        },
        d => d,
    };
    let dtype = op.props.get("dtype").and_then(Value::as_str).ok_or("prop dtype is not a string")?;
    let dtype = DType::parse(dtype).ok_or_else(|| format!("unknown dtype {dtype}"))?;
    Ok((dist, dtype))
}
