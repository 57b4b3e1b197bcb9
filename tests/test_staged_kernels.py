"""Staged elementwise kernels (scalar_math::Stage: a bare Elemwise of betainc, gammaincinv,
gammainccinv, betaincinv, ive or kve is two linalg.generics, the second reading the
first's values through tensor.extract) on the CPU's inline execution model.

Several staged ops on the same inputs in one function, at several lengths in turn (the
buffers of one call's kernels are sized per call), must give each output bit for bit as
the op alone does: a mix-up of the stages' intermediate buffers would show here (an early
build of ive and kve together showed one, and such graphs then ran on the full HAL; on
IREE 3.13 with this build's flags it does not reproduce, and they run inline again).
"""

import os
import sys

import numpy as np
import pytensor
import pytensor.tensor as pt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from accuracy_cases import BY_NAME, points  # noqa: E402


def test_staged_ops_together_agree_with_each_alone():
    a, b, y, v, x = (pt.dvector(n) for n in ("a", "b", "y", "v", "x"))
    inputs = [a, b, y, v, x]
    outs = [pt.ive(v, x), pt.kve(v, x), pt.betainc(a, b, y), pt.gammaincinv(a, y), pt.betainc(b, a, y) * 2.0]
    together = pytensor.function(inputs, outs, mode="MLIR")
    assert "--iree-execution-model=inline-dynamic" in together.maker.linker.compiled.flags
    alone = [pytensor.function(inputs, o, mode="MLIR", on_unused_input="ignore") for o in outs]
    rng = np.random.default_rng(12)
    for n in (1, 7, 250, 4099, 3):
        vx = points(BY_NAME["ive"], "float64", n, rng)
        aby = [10.0 ** rng.uniform(-1, 2, n), 10.0 ** rng.uniform(-1, 2, n), rng.uniform(0, 1, n)]
        with np.errstate(all="ignore"):
            got = together(*aby, *vx)
            for k, fn in enumerate(alone):
                want = fn(*aby, *vx)
                assert np.array_equal(got[k], want, equal_nan=True), (n, k)
                assert np.isfinite(want).mean() > 0.5, "mostly regular arguments"
