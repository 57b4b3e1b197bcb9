"""The spike's matrix, run in mode="MLIR" and checked against PyTensor's FAST_COMPILE.

Prints each result and exits non-zero on any mismatch.
"""

import sys

import numpy as np
import pytensor
import pytensor.tensor as pt

import pytensor_mlir


def case(name, inputs, output, values):
    f = pytensor.function(inputs, output, mode="MLIR")
    reference = pytensor.function(inputs, output, mode="FAST_COMPILE")
    got, want = f(*values), reference(*values)
    print(f"{name:<18} {np.array2string(np.asarray(got), separator=' ').replace(chr(10), ' ')}")
    assert np.asarray(got).dtype == np.asarray(want).dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
    np.testing.assert_allclose(got, want, err_msg=name)
    return f


def main():
    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float64")
    x32 = pt.vector("x", dtype="float32")
    y32 = pt.vector("y", dtype="float32")
    m = pt.matrix("m", dtype="float64")
    a = pt.matrix("a", dtype="float64")
    b = pt.matrix("b", dtype="float64")
    a32 = pt.matrix("a", dtype="float32")
    b32 = pt.matrix("b", dtype="float32")
    v123 = np.array([1.0, 2.0, 3.0])
    v456 = np.array([4.0, 5.0, 6.0])
    mat = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    case("vector_float64", [x, y], x + y * 2, [v123, v456])
    case("multiply_float64", [x, y], x * y, [v123, v456])
    case("vector_float32", [x32, y32], x32 + y32 * 2, [v123.astype("float32"), v456.astype("float32")])
    case("broadcast_float64", [m, x], m + x, [np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), np.array([10.0, 20.0, 30.0])])
    case("transpose_float64", [m], m.T, [mat.T.copy()])
    case("dot_float64", [a, b], pt.dot(a, b), [np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), np.array([[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]])])
    case("dot_float32", [a32, b32], pt.dot(a32, b32), [np.array([[1, 2, 3], [4, 5, 6]], "float32"), np.array([[7, 8], [9, 10], [11, 12]], "float32")])

    compiles = pytensor_mlir.compiler_invocations()
    f = case("exp(x)*y + 1", [x, y], pt.exp(x) * y + 1, [v123, v456])
    for n in (3, 5):
        values = [np.linspace(0, 1, n), np.arange(n, dtype="float64")]
        got = f(*values)
        print(f"dynamic_length_{n}   {np.array2string(got, separator=' ', precision=4)}")
        np.testing.assert_allclose(got, np.exp(values[0]) * values[1] + 1, rtol=1e-15)
    print(f"compiler invocations for the dynamic function: {pytensor_mlir.compiler_invocations() - compiles}"
          " (0 when the disk cache already had it)")
    print("\nthe MLIR of x + y*2:")
    print(pytensor_mlir.get_mlir(pytensor.function([x, y], x + y * 2, mode="MLIR")))
    print("all results match FAST_COMPILE")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"MISMATCH: {e}", file=sys.stderr)
        sys.exit(1)
