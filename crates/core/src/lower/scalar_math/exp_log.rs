//! The exponential and logarithm family: expm1, log1p, exp2, log2, log10, the hyperbolic
//! functions and their inverses, sigmoid, softplus, log1mexp.
