"""The disk cache of compiled modules, seen from a fresh process each time, and the
PYTENSOR_MLIR_DUMP debugging folder."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, numpy as np, pytensor, pytensor.tensor as pt
    import pytensor_mlir
    x = pt.vector("x"); y = pt.vector("y")
    f = pytensor.function([x, y], pt.exp(x) * y + {constant}, mode="MLIR")
    out = f(np.array([0.0, 1.0]), np.array([2.0, 3.0]))
    print(json.dumps({{"compiles": pytensor_mlir.compiler_invocations(), "out": out.tolist()}}))
    """
)


def run(cache_dir, constant=1.0, **env):
    environment = dict(os.environ, PYTENSOR_MLIR_CACHE_DIR=str(cache_dir), **env)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(constant=constant)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def expected(constant):
    import numpy as np

    return (np.exp([0.0, 1.0]) * [2.0, 3.0] + constant).tolist()


def entries(cache_dir):
    return sorted(p for p in cache_dir.iterdir() if p.suffix == ".vmfb")


def test_second_process_does_not_compile(tmp_path):
    first = run(tmp_path)
    assert first["compiles"] == 1
    assert len(entries(tmp_path)) == 1
    second = run(tmp_path)
    assert second["compiles"] == 0
    assert second["out"] == first["out"] == pytest.approx(expected(1.0), rel=1e-15)
    # Another graph is another entry.
    third = run(tmp_path, constant=2.0)
    assert third["compiles"] == 1
    assert len(entries(tmp_path)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_damaged_entry_is_recompiled(tmp_path, damage):
    run(tmp_path)
    (entry,) = entries(tmp_path)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 0xFF
        entry.write_bytes(bytes(flipped))
    elif damage == "empty":
        entry.write_bytes(b"")
    else:
        entry.write_bytes(os.urandom(len(data)))
    again = run(tmp_path)
    assert again["compiles"] == 1
    assert again["out"] == pytest.approx(expected(1.0), rel=1e-15)
    # The recompiled module replaced the damaged one.
    assert run(tmp_path)["compiles"] == 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_unwritable_cache_still_runs(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    out = run(blocker)
    assert out["compiles"] == 1
    assert out["out"] == pytest.approx(expected(1.0), rel=1e-15)


def test_dump_writes_mlir_and_flags(tmp_path):
    dump = tmp_path / "dump"
    run(tmp_path / "cache", PYTENSOR_MLIR_DUMP=str(dump))
    mlir = list(dump.glob("*.mlir"))
    flags = list(dump.glob("*.flags"))
    assert len(mlir) == 1 and len(flags) == 1
    assert "func.func @main" in mlir[0].read_text()
    assert "--iree-input-demote-f64-to-f32=false" in flags[0].read_text().split()


def test_mlir_is_reachable_from_python():
    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    import pytensor_mlir

    x = pt.vector("x")
    f = pytensor.function([x], x * 3, mode=pytensor_mlir.MLIR)
    text = pytensor_mlir.get_mlir(f)
    assert text.startswith("func.func @main") and "arith.mulf" in text
    assert f.maker.linker.compiled.flags == pytensor_mlir.get_flags(f)
    assert np.allclose(f(np.ones(2)), 3)
