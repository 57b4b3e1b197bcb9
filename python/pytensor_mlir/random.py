"""Random generators at the boundary of a compiled function.

Inside, an rng is four 32-bit words, a Philox key and stream (see the Rust core's
lower/random.rs, which draws from them). A numpy ``Generator`` passed in becomes words by
hashing its bit generator's state, so the caller's Generator is never advanced and the same
state always gives the same draws, whatever its bit generator; the words a function returns
for an rng output become a fresh ``Generator(Philox(key))``. The streams are this
backend's own: a seed gives other numbers than numpy's (or the C backend's) draws from it.
"""

import hashlib

import numpy as np

KEY_WORDS = 4


def _state_bytes(value, out):
    # A canonical byte form of a bit generator's state (nested dicts of names, integers of
    # any size and arrays): each item tagged by its kind, so distinct states give distinct
    # byte strings.
    if isinstance(value, dict):
        out.append(b"{")
        for k, v in value.items():
            _state_bytes(k, out)
            _state_bytes(v, out)
        out.append(b"}")
    elif isinstance(value, np.ndarray):
        out.append(b"a" + str(value.dtype).encode() + repr(value.shape).encode())
        out.append(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (int, np.integer)):
        out.append(b"i" + str(int(value)).encode() + b";")
    else:
        out.append(b"s" + repr(value).encode() + b";")


def key_of(generator):
    """The words a compiled function reads for `generator` (a numpy ``Generator``)."""
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"expected a numpy.random.Generator for a random generator input, got {type(generator).__name__}")
    state = generator.bit_generator.state
    if _fresh_philox(state):
        # A Philox Generator nothing has drawn from (what `generator_of` returns, so every
        # call after the first of a function whose rng is updated): its key is the words,
        # read back without hashing (about 1 us instead of 14).
        return state["state"]["key"].astype("<u8").view("<u4").astype(np.uint32)
    parts = []
    _state_bytes(state, parts)
    digest = hashlib.blake2b(b"".join(parts), digest_size=4 * KEY_WORDS, person=b"pytensor-mlir").digest()
    return np.frombuffer(digest, dtype="<u4").astype(np.uint32)


def _fresh_philox(state):
    if state.get("bit_generator") != "Philox" or state.get("buffer_pos") != 4 or state.get("has_uint32"):
        return False
    counter = state["state"]["counter"]
    return not counter.any()


def generator_of(words):
    """A new ``Generator`` for the words of an rng output."""
    words = np.asarray(words, dtype="<u4")
    return np.random.Generator(np.random.Philox(key=words.view("<u8")))
