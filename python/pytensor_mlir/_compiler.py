"""Where the IREE compiler library is: the one inside the installed iree-base-compiler."""

import functools
import os


@functools.cache
def compiler_library():
    import iree.compiler

    path = os.path.join(os.path.dirname(iree.compiler.__file__), "_mlir_libs", "libIREECompiler.so")
    if not os.path.exists(path):
        raise ImportError(f"iree-base-compiler is installed without its compiler library ({path})")
    return path
