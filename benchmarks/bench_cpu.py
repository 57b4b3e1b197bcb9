#!/usr/bin/env python
"""CPU benchmark: mode="MLIR" against PyTensor's own backends and the spike's route.

Prints, all measured in one run:

1. Per-call time of four graphs (``x + y*2`` and ``exp(x)*y + z`` at 10 float64
   elements, ``exp(x)*y + z`` at 1e7, a 512x512 float64 dot) under
   MLIR (our mode), NUMBA, C (PyTensor's "CVM"), JAX (when importable) and
   "spike": the same MLIR text our mode compiled, compiled by the ``iree.compiler``
   Python API with our flags and called through ``iree.runtime`` (local-sync), with
   ``np.asarray`` of the result. Then MLIR's ratio against each, and the issue's targets.
2. "Where the microseconds go" for the 10-element ``x + y*2`` call: the PyTensor
   ``Function`` call, the same with ``trust_input``, the JIT thunk ``f.vm()``, and the
   compiled callable itself (our ``CompiledFunction.__call__``; Numba's dispatcher).

Every peer's result is checked against NUMBA's before it is timed, so a wrong answer
cannot win. Timings are the median over several repeats of timed loops; the peers of a
row are timed round-robin (one repeat of each in turn), so load that comes and goes on a
noisy machine hits them all alike.

    python benchmarks/bench_cpu.py           # full run
    python benchmarks/bench_cpu.py --quick   # smoke run (CI): smaller sizes, fewer repeats

A script, not a test: it asserts correctness but never fails on speed.
"""

import argparse
from importlib.metadata import version as package_version
import os
import statistics
import sys
import time
import timeit
import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt

import pytensor_mlir

# PyTensor's C backend warns that it found no BLAS to link; its Dot22 then calls numpy's
# dot (OpenBLAS) from Python. Said once in the table's notes instead.
warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")

# The flags our mode compiles with (`llvm_cpu_flags()` in crates/iree/src/compile.rs)
# but the execution model.
# Taken from the compiled function when it exposes them (and checked to be these).
LLVM_CPU_FLAGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-llvmcpu-reassociate-fp-reductions=true",
    "--iree-llvmcpu-vector-pproc-strategy=peel",
    "--iree-input-demote-f64-to-f32=false",
    "--iree-input-demote-i64-to-i32=false",
    "--iree-vm-target-truncate-unsupported-floats=false",
]

# Targets from the issue, checked (not enforced) at the end of the table.
TARGET_SMALL_VS_NUMBA = 1.5
TARGET_BIG_VS_COPY = 1.5


# --------------------------------------------------------------------------- peers


def optional_import(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception as e:  # ImportError, or a broken install
        return e


jax = optional_import("jax")
iree_compiler = optional_import("iree.compiler")
iree_runtime = optional_import("iree.runtime")
HAVE_JAX = not isinstance(jax, Exception)
HAVE_SPIKE = not isinstance(iree_compiler, Exception) and not isinstance(iree_runtime, Exception)

try:
    from pytensor_mlir import _core

    input_copies = _core.input_copies
except (ImportError, AttributeError):
    input_copies = None


def compiled_of(f):
    """Our CompiledFunction behind an MLIR-mode pytensor Function."""
    return f.maker.linker.compiled


def spike_callable(f):
    """The spike's route for the MLIR text `f` was compiled from."""
    mlir = pytensor_mlir.get_mlir(f)
    # The spike ran the full HAL (iree.runtime's contexts have no hal_inline module), so
    # its route compiles without our inline execution model; everything else is ours.
    inline = "--iree-execution-model=inline-dynamic"
    flags = [f for f in getattr(compiled_of(f), "flags", LLVM_CPU_FLAGS) if f != inline]
    if flags != LLVM_CPU_FLAGS:
        warnings.warn(f"our mode's flags differ from this script's copy: {flags}")
    vmfb = iree_compiler.compile_str(mlir, target_backends=["llvm-cpu"], extra_args=flags)
    module = iree_runtime.load_vm_flatbuffer(vmfb, driver="local-sync")
    main = module.main
    return lambda *args: np.asarray(main(*args))


def jax_callable(f):
    # PyTensor's JAX mode returns jax Arrays and JAX dispatches asynchronously: wait for
    # the result, or the timing only measures the dispatch.
    block = jax.block_until_ready
    return lambda *args: block(f(*args))


def aligned_copy(a, alignment=64):
    """A copy of `a` whose data starts on an `alignment`-byte boundary.

    IREE's own buffers start on 64-byte boundaries; numpy's (glibc malloc) on 16. Our CPU
    runtime imports both in place (the compiled code assumes 8 bytes): this row shows that
    the alignment no longer matters.
    """
    a = np.ascontiguousarray(a)
    buf = np.empty(a.nbytes + alignment, dtype=np.uint8)
    offset = -buf.ctypes.data % alignment
    out = buf[offset : offset + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert out.ctypes.data % alignment == 0
    return out


# --------------------------------------------------------------------------- timing


def calibrate(fn, min_time):
    """Loops per repeat so that one repeat takes at least `min_time` seconds."""
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= min_time:
            return number
        if t <= 0:
            number *= 10
        else:
            number = max(number * 2, int(number * min_time / t * 1.1) + 1)


def time_round_robin(fns, min_time, repeats, warmup=2):
    """Median seconds per call of each callable in `fns` (a dict), timed in turn."""
    numbers = {}
    for name, fn in fns.items():
        for _ in range(warmup):
            fn()
        numbers[name] = calibrate(fn, min_time)
    samples = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            n = numbers[name]
            samples[name].append(timeit.timeit(fn, number=n) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def bench_options(doc, quick_help):
    """The options the tensor-op benchmarks share: (opts, repeats, min_time per sample)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--repeats", type=int, default=None)
    opts = parser.parse_args()
    return opts, opts.repeats or (3 if opts.quick else 5), 0.02 if opts.quick else 0.2


def print_run_header(opts, repeats):
    """The versions, the machine's CPUs and load, and the kind of run, as the first line."""
    print(f"pytensor {pytensor.__version__}, numpy {np.__version__}" + (f", jax {jax.__version__}" if HAVE_JAX else "")
          + f"; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          + ("--quick" if opts.quick else "full") + f" run, median of {repeats} repeats")


def bench_peers(reference):
    """MLIR, NUMBA, JAX where importable, then `reference`; and the notes to print."""
    notes = []
    if not HAVE_JAX:
        notes.append(f"JAX column skipped: jax is not importable ({jax!r}); scripts/bootstrap.sh --bench installs it")
    return ["MLIR", "NUMBA"] + (["JAX"] if HAVE_JAX else []) + [reference], notes


def time_graph_rows(rows, peers, notes, min_time, repeats, rtol=1e-9, atol=1e-12):
    """For rows of (label, size, inputs, outputs, values): each peer's pytensor Function
    (C: PyTensor's "CVM"), checked against C's result, then timed round-robin. Returns
    [(label, size, {peer: seconds or None})]; a peer that cannot compile or run a row is
    n/a there, with a note."""
    modes = {"C": "CVM"}
    results = []
    for label, size, inputs, output, vals in rows:
        fns, compile_s = {}, {}
        # C first, and called first: NUMBA's compilation rewrites an OpFromGraph's inner
        # graph in place (inplace Ops, e.g. solve_discrete_are's SetSubtensor), which the C
        # backend's perform of that Op (compiling the inner graph at its first call) then
        # refuses.
        want = None
        for peer in sorted(peers, key=lambda p: p != "C"):
            t0 = time.perf_counter()
            try:
                f = pytensor.function(inputs, output, mode=modes.get(peer, peer))
            except Exception as e:  # a peer that cannot compile a row is n/a there
                notes.append(f"{label}: {peer} failed to compile ({type(e).__name__}: {str(e).splitlines()[0][:160]})")
                continue
            compile_s[peer] = time.perf_counter() - t0
            call = jax_callable(f) if peer == "JAX" else f
            own = [np.copy(v) for v in vals]
            fns[peer] = lambda call=call, own=own: call(*own)
            if peer == "C":
                want = fns["C"]()
        want = want if isinstance(want, list) else [want]
        for peer, fn in list(fns.items()):
            try:
                got = fn()
            except Exception as e:  # JAX traces at the first call: a shape it cannot trace
                notes.append(f"{label}: {peer} failed at its first call ({type(e).__name__}: {str(e).splitlines()[0][:160]})")
                del fns[peer]
                continue
            got = got if isinstance(got, (list, tuple)) else [got]
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=atol, err_msg=f"{label}: {peer} vs C")
        times = dict.fromkeys(peers) | time_round_robin(fns, min_time, repeats)
        print(f"  {label} ({size}): timed (compile s: " + ", ".join(f"{p} {c:.1f}" for p, c in compile_s.items()) + ")", flush=True)
        results.append((label, size, times))
    return results


def run_graph_bench(doc, quick_help, rows, rtol=1e-9, atol=1e-12, notes_after=()):
    """A whole benchmark of graph rows against NUMBA, JAX and C: options from `doc`, the
    rows `rows(quick)` timed by `time_graph_rows`, the table, `notes_after` and the run's
    notes."""
    opts, repeats, min_time = bench_options(doc, quick_help)
    peers, notes = bench_peers("C")
    print_run_header(opts, repeats)
    t_start = time.perf_counter()
    results = time_graph_rows(rows(opts.quick), peers, notes, min_time, repeats, rtol=rtol, atol=atol)
    print_times_and_ratios(results, peers, "graph", "Per-call time (the pytensor Function call)")
    notes.extend(notes_after)
    print_notes(notes, t_start)


def print_times_and_ratios(results, peers, first, per_call):
    """The per-call table (`per_call` its title) and MLIR's ratio to each other peer, for
    rows of (label, size, {peer: seconds or None}); `first` names the label column."""
    print()
    print(per_call)
    print_table([first, "size", *peers], [[l, s, *(fmt_time(t[p]) for p in peers)] for l, s, t in results])
    print()
    others = [p for p in peers if p != "MLIR"]
    ratio = lambda a, b: None if a is None or b is None else a / b  # noqa: E731
    print("Ratio MLIR / peer (below 1.00x: MLIR is faster)")
    print_table([first, "size", *(f"/{p}" for p in others)],
                [[l, s, *(fmt_ratio(ratio(t["MLIR"], t[p])) for p in others)] for l, s, t in results])


def print_notes(notes, t_start):
    """The run's notes, the load at its end, and its total time."""
    notes.append(f"load average {os.getloadavg()[0]:.2f} at the end: the machine is shared, so ratios are rough.")
    print()
    for n in notes:
        print("Note: " + n)
    print(f"\ntotal {time.perf_counter() - t_start:.1f} s")


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}x"


def print_table(header, rows, first_width=None):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    if first_width:
        widths[0] = max(widths[0], first_width)

    def line(cells):
        return "  ".join(
            str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


# --------------------------------------------------------------------------- graphs


def build_functions(inputs, output, peers):
    """One pytensor Function per mode (and the spike), with compile times."""
    fns, compile_s = {}, {}
    for peer in peers:
        if peer == "spike":
            continue
        mode = {"C": "CVM"}.get(peer, peer)
        t0 = time.perf_counter()
        fns[peer] = pytensor.function(inputs, output, mode=mode)
        compile_s[peer] = time.perf_counter() - t0
    if "spike" in peers:
        t0 = time.perf_counter()
        fns["spike"] = spike_callable(fns["MLIR"])
        compile_s["spike"] = time.perf_counter() - t0
    return fns, compile_s


def callables(fns):
    """What gets timed for each peer: the pytensor Function call (the user's call)."""
    out = {}
    for peer, f in fns.items():
        out[peer] = jax_callable(f) if peer == "JAX" else f
    return out


def check(results, peer, rtol, atol):
    ref = np.asarray(results["NUMBA"])
    got = np.asarray(results[peer])
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, err_msg=f"{peer} disagrees with NUMBA")


def run_row(label, fns, args, min_time, repeats, rtol, atol, extra=None):
    """Times one row. `extra`: more callables (diagnostics) timed in the same rounds."""
    calls = callables(fns)
    results = {peer: np.array(c(*args), copy=True) for peer, c in calls.items()}
    for peer in calls:
        if peer != "NUMBA":
            check(results, peer, rtol, atol)
    timed = {peer: (lambda c=c: c(*args)) for peer, c in calls.items()}
    for name, fn in (extra or {}).items():
        if name.startswith("MLIR"):  # diagnostics of our mode: checked like a peer
            results[name] = np.array(fn(), copy=True)
            check(results, name, rtol, atol)
        timed[name] = fn
    times = time_round_robin(timed, min_time, repeats)
    print(f"  {label}: timed", flush=True)
    return times


# --------------------------------------------------------------------------- part 1


def part1(quick, peers):
    repeats_small = 5 if quick else 9
    repeats_big = 3 if quick else 7
    min_small = 0.02 if quick else 0.2
    n_small = 10
    n_big = 10**5 if quick else 10**7
    n_dot = 128 if quick else 512
    rng = np.random.default_rng(0)

    x, y, z = pt.dvectors("x", "y", "z")
    A, B = pt.dmatrices("A", "B")

    print("compiling...", flush=True)
    f_add, c_add = build_functions([x, y], x + y * 2, peers)
    f_exp, c_exp = build_functions([x, y, z], pt.exp(x) * y + z, peers)
    f_dot, c_dot = build_functions([A, B], pt.dot(A, B), peers)
    print("  compile (+ spike compile) seconds: "
          + "; ".join(f"{p} {c_add[p] + c_exp[p] + c_dot[p]:.1f}" for p in peers), flush=True)

    def mlir_aligned(fns, args):
        al = [aligned_copy(a) for a in args]
        f = fns["MLIR"]
        return {"MLIR@64": lambda: f(*al)}

    small2 = [rng.standard_normal(n_small) for _ in range(2)]
    small3 = [rng.standard_normal(n_small) for _ in range(3)]
    big3 = [rng.standard_normal(n_big) for _ in range(3)]
    dot2 = [rng.standard_normal((n_dot, n_dot)) for _ in range(2)]

    def copy3(a=big3[0], b=big3[1], c=big3[2]):
        a.copy()
        b.copy()
        c.copy()

    rows = []
    rows.append(("x + y*2", f"n={n_small}", run_row(
        "x + y*2", f_add, small2, min_small, repeats_small, 1e-12, 1e-14, mlir_aligned(f_add, small2))))
    rows.append(("exp(x)*y + z", f"n={n_small}", run_row(
        "exp(x)*y + z small", f_exp, small3, min_small, repeats_small, 1e-12, 1e-14, mlir_aligned(f_exp, small3))))
    extra_big = mlir_aligned(f_exp, big3)
    extra_big["copy3"] = copy3
    rows.append(("exp(x)*y + z", f"n={n_big:.0e}", run_row(
        "exp(x)*y + z big", f_exp, big3, 0, repeats_big, 1e-12, 1e-14, extra_big)))
    rows.append(("dot", f"{n_dot}x{n_dot}", run_row(
        "dot", f_dot, dot2, 0 if not quick else 0.02, repeats_big, 1e-10, 1e-10, mlir_aligned(f_dot, dot2))))

    # Copies per call of our runtime (inputs not 64-byte aligned are copied, not imported).
    copies = []
    for fns, args in ((f_add, small2), (f_exp, small3), (f_exp, big3), (f_dot, dot2)):
        if input_copies is None:
            copies.append("?")
            continue
        before = input_copies()
        fns["MLIR"](*args)
        copies.append(str(input_copies() - before))

    print()
    print(f"Per-call time (median of {repeats_small} repeats for n=10, {repeats_big} for the big rows), float64.")
    print("MLIR, NUMBA, C, JAX: the pytensor Function call f(*inputs); spike: iree.runtime main(*inputs) + np.asarray")
    header = ["graph", "size", *peers]
    print_table(header, [[g, s, *(fmt_time(t.get(p)) for p in peers)] for g, s, t in rows])

    print()
    print("Ratio MLIR / peer (below 1.00x: MLIR is faster)")
    others = [p for p in peers if p != "MLIR"]
    header = ["graph", "size", *(f"/{p}" for p in others)]
    print_table(header, [[g, s, *(fmt_ratio(t["MLIR"] / t[p]) for p in others)] for g, s, t in rows])

    print("Notes: MLIR and spike run on IREE's local-sync driver (one thread). NUMBA's and C's dot call")
    print("numpy's dot (OpenBLAS, its own threads"
          + ("; C links no BLAS of its own" if not pytensor.config.blas__ldflags else "")
          + "); JAX/XLA uses its own thread pool. JAX times include waiting for the result.")

    big = rows[2][2]
    print()
    print(f"Row 3: numpy copy of the three inputs once (a.copy(); b.copy(); c.copy()): "
          f"{fmt_time(big['copy3'])}; MLIR / copy = {fmt_ratio(big['MLIR'] / big['copy3'])}")

    print()
    print("Diagnostics: on the CPU our runtime imports an input in place when its data is 8-byte aligned")
    print("(numpy's arrays are 16-byte aligned); others are copied (count below: these arrays).")
    print("MLIR@64 = the same call with 64-byte-aligned copies of the inputs (made once, before timing).")
    header = ["graph", "size", "MLIR", "MLIR@64", "MLIR@64 / NUMBA", "input copies per call"]
    print_table(header, [
        [g, s, fmt_time(t["MLIR"]), fmt_time(t["MLIR@64"]), fmt_ratio(t["MLIR@64"] / t["NUMBA"]), c]
        for (g, s, t), c in zip(rows, copies)
    ])

    print()
    print("Targets (from the issue)" + ("  [--quick: sizes differ from the issue's]" if quick else ""))

    def verdict(ok):
        return "MET" if ok else "NOT MET"

    for i in (0, 1):
        g, s, t = rows[i]
        r = t["MLIR"] / t["NUMBA"]
        print(f"  {g} ({s}): MLIR within {TARGET_SMALL_VS_NUMBA}x of NUMBA: {fmt_ratio(r)} -> "
              f"{verdict(r <= TARGET_SMALL_VS_NUMBA)}")
    r = big["MLIR"] / big["copy3"]
    print(f"  exp(x)*y + z ({rows[2][1]}): MLIR within {TARGET_BIG_VS_COPY}x of the three-input copy: "
          f"{fmt_ratio(r)} -> {verdict(r <= TARGET_BIG_VS_COPY)}")
    if "spike" in peers:
        for g, s, t in rows:
            r = t["MLIR"] / t["spike"]
            print(f"  {g} ({s}): MLIR faster than spike: {fmt_ratio(r)} -> {verdict(r < 1)}")
    else:
        print("  faster than spike: not measured (iree.runtime not importable)")
    g, s, t = rows[3]
    print(f"  {g} ({s}): report only: MLIR {fmt_time(t['MLIR'])}, NUMBA {fmt_time(t['NUMBA'])}")
    return f_add, small2


# --------------------------------------------------------------------------- part 2


def part2(quick, f_add, args, peers):
    """Where the microseconds go in the 10-element x + y*2 call."""
    repeats = 5 if quick else 9
    min_time = 0.02 if quick else 0.2
    a, b = args
    al = [aligned_copy(v) for v in args]
    x, y = pt.dvectors("x", "y")

    levels = {}
    for peer in [p for p in ("MLIR", "NUMBA") if p in peers]:
        f = f_add[peer]
        # A second Function of the same graph with trust_input: no input validation.
        ft = pytensor.function([x, y], x + y * 2, mode=peer, trust_input=True)
        # A third one whose thunk is called alone: f(a, b) clears its input storage after
        # each call (allow_gc), so the thunk gets a Function nobody else calls.
        fv = pytensor.function([x, y], x + y * 2, mode=peer)
        vm = fv.vm
        jit_fn = f.vm.jit_fn  # what JITLinker's thunk calls: our CompiledFunction / Numba's dispatcher
        ref = f(a, b)
        for container, v in zip(fv.input_storage, args):
            container.storage[0] = v  # what fv(a, b) would put there for the thunk to read
        vm()
        np.testing.assert_allclose(fv.output_storage[0].storage[0], ref)
        np.testing.assert_allclose(ft(a, b), ref)
        np.testing.assert_allclose(jit_fn(a, b)[0], ref)
        levels[peer] = {
            "f(a, b)": lambda f=f: f(a, b),
            "f(a, b), trust_input": lambda ft=ft: ft(a, b),
            "f.vm()  (JIT thunk)": vm,
            "f.vm.jit_fn(a, b)": lambda j=jit_fn: j(a, b),
        }
        if peer == "MLIR":
            compiled = compiled_of(f)
            assert compiled is jit_fn
            levels[peer]["f.vm.jit_fn(a64, b64)"] = lambda: compiled(*al)
            levels[peer]["f(a64, b64)"] = lambda f=f: f(*al)

    refs = {
        "numpy a + b*2": lambda: a + b * 2,
        "np.empty(10)": lambda: np.empty(10),
    }

    fns = {}
    for peer, lv in levels.items():
        for name, fn in lv.items():
            fns[(peer, name)] = fn
    for name, fn in refs.items():
        fns[("ref", name)] = fn
    times = time_round_robin(fns, min_time, repeats)

    print()
    print("Where the microseconds go: x + y*2, 10 float64 elements, per call (median)")
    print("  a64, b64: the same inputs copied to 64-byte-aligned memory (imported in place, not copied)")
    for peer, lv in levels.items():
        print()
        names = list(lv)
        inner = times[(peer, "f.vm.jit_fn(a, b)")]
        rows = []
        for name in names:
            t = times[(peer, name)]
            rows.append([f"{peer}: {name}", fmt_time(t), f"{(t - inner) * 1e6:+.2f} us"])
        print_table(["level", "per call", "vs jit_fn(a, b)"], rows, first_width=36)
        full, trust = times[(peer, "f(a, b)")], times[(peer, "f(a, b), trust_input")]
        thunk = times[(peer, "f.vm()  (JIT thunk)")]
        print(f"  input validation (f - trust_input): {(full - trust) * 1e6:.2f} us; "
              f"Function wrapper (trust_input - thunk): {(trust - thunk) * 1e6:.2f} us; "
              f"JIT thunk (thunk - jit_fn): {(thunk - inner) * 1e6:.2f} us; compiled call: {inner * 1e6:.2f} us")
    print()
    print_table(["reference", "per call"], [[n, fmt_time(times[("ref", n)])] for n in refs], first_width=36)


# --------------------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: smaller sizes, fewer repeats")
    opts = parser.parse_args()

    peers = ["MLIR", "NUMBA", "C"]
    if HAVE_JAX:
        peers.append("JAX")
    else:
        print(f"JAX column skipped: {jax!r}")
    if HAVE_SPIKE:
        peers.append("spike")
    else:
        print(f"spike column skipped: iree.runtime / iree.compiler not importable "
              f"({iree_runtime if isinstance(iree_runtime, Exception) else iree_compiler!r})")

    print(f"pytensor {pytensor.__version__}, numpy {np.__version__}"
          + (f", jax {jax.__version__}" if HAVE_JAX else "")
          + (f", iree-base-runtime {package_version('iree-base-runtime')}" if HAVE_SPIKE else "")
          + f"; python {sys.version.split()[0]}; {'--quick' if opts.quick else 'full'} run")

    t0 = time.perf_counter()
    f_add, small2 = part1(opts.quick, peers)
    part2(opts.quick, f_add, small2, peers)
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
