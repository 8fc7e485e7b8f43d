"""`RNG`: a counter-based Philox stream whose whole state is two integers (key, offset).

Random ops draw their per-sample parameters in prepare from `rng=` or the thread-local default
RNG, so kernels stay deterministic, results do not depend on the backend or the thread count,
and a checkpoint only needs `str(rng.state)`.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

import numpy as np

from ndd_triton.random._philox import draws_u32, to_unit_float32, to_unit_float64

_MASK64 = (1 << 64) - 1
_DRAW_SPACE = 1 << 64  # draw indices (and the kernels' uint64 arithmetic) wrap modulo 2**64
_PREFIX = "Philox_"
_STATE_LEN = len("Philox_0000000000000000_0000000000000000:0000000000000000_0")
_STATE_RE = re.compile(r"Philox_([0-9a-fA-F]{16})_([0-9a-fA-F]{16}):([0-9a-fA-F]{16})_([0-3])")
_tls = threading.local()


class RNGState:
    """An opaque RNG state; `str()` gives a text form accepted by `RNG.set_state`."""

    __slots__ = ("key", "offset")

    def __init__(self, key: int, offset: int) -> None:
        self.key = key
        self.offset = offset

    def __str__(self) -> str:
        block, lane = divmod(self.offset, 4)
        return (f"{_PREFIX}{self.key:016x}_{(block >> 64) & _MASK64:016x}:"
                f"{block & _MASK64:016x}_{lane}")  # fmt: skip

    def __repr__(self) -> str:
        return f"RNGState('{self}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RNGState) and (self.key, self.offset) == (other.key, other.offset)

    def __hash__(self) -> int:
        return hash((self.key, self.offset))

    @staticmethod
    def parse(text: str) -> RNGState:
        """Inverse of `str(state)`."""
        if not isinstance(text, str):
            raise TypeError(f"RNG state must be an RNGState or its string form; got "
                            f"{type(text).__name__}")
        if len(text) != _STATE_LEN:
            raise ValueError(f"Invalid Philox state string length: {len(text)}")
        match = _STATE_RE.fullmatch(text)
        if match is None:
            raise ValueError(f"Invalid Philox state string: {text!r} (expected 'Philox_<key>_"
                             "<counter high>:<counter low>_<lane>', 16 hex digits each, lane 0-3)")
        key = int(match[1], 16)
        block = (int(match[2], 16) << 64) | int(match[3], 16)
        lane = int(match[4])
        return RNGState(key, block * 4 + lane)


class RNG:
    """Philox-4x32-10 random stream; `RNG(seed=42)`; `rng()` returns the next uint32.

    The state is (64-bit key = seed, draw offset): draw d is lane d % 4 of the Philox block with
    counter d // 4. Random ops reserve ranges of draws in prepare (`reserve`), so their values
    depend only on the state, never on the backend, the thread count or the eval mode.
    `seed` is write-only; `state`/`get_state`/`set_state` round-trip through `str(state)`.
    """

    __slots__ = ("__weakref__", "_key", "_lock", "_offset")

    def __init__(self, seed: int | None = None, state: Any = None) -> None:
        if seed is not None and state is not None:
            raise ValueError("Cannot specify both seed and state")
        self._lock = threading.Lock()
        self._offset = 0
        self._key = 0
        if state is not None:
            self.set_state(state)
        else:
            self._reseed(seed)

    def _reseed(self, seed: int | None) -> None:
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise TypeError(f"RNG seed must be an int; got {type(seed).__name__}")
        with self._lock:
            self._key = int(seed) & _MASK64
            self._offset = 0

    @property
    def seed(self) -> None:
        """Write-only: assigning reseeds the stream."""
        raise AttributeError("seed is write-only")

    @seed.setter
    def seed(self, value: int) -> None:
        self._reseed(value)

    @property
    def state(self) -> RNGState:
        """The current state (key and draw offset)."""
        with self._lock:
            return RNGState(self._key, self._offset)

    @state.setter
    def state(self, value: Any) -> None:
        self.set_state(value)

    def get_state(self, *, cuda_stream: Any = None) -> RNGState:
        """The current state (for checkpoints)."""
        return self.state

    def set_state(self, value: Any) -> None:
        """Restore a state from `get_state()` or its string form."""
        parsed = value if isinstance(value, RNGState) else RNGState.parse(value)
        with self._lock:
            self._key, self._offset = parsed.key, parsed.offset

    def clone(self) -> RNG:
        """An independent RNG continuing the same sequence."""
        return RNG(state=self.state)

    def advance(self, n: int) -> None:
        """Skip `n` draws (only the offset moves; nothing is computed)."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer):
            raise TypeError(f"RNG.advance: n must be an int; got {type(n).__name__}")
        if n < 0:
            raise ValueError(f"RNG.advance: n must be non-negative; got {n}")
        with self._lock:
            self._offset += int(n)

    def __call__(self) -> int:
        return int(self.take_u32(1)[0])

    def __repr__(self) -> str:
        return f"RNG(state='{self.state}')"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle / copy as the state string (the lock is not copied)."""
        return (RNG, (None, str(self.state)))

    # ---- bulk draws used by the random ops (all advance the stream atomically) --------------
    def take_u32(self, count: int) -> np.ndarray:
        """`count` uint32 draws."""
        with self._lock:
            key, offset = self._key, self._offset
            self._offset += int(count)
        return draws_u32(key, offset % _DRAW_SPACE, int(count))

    def take_position(self, count: int) -> tuple[int, int]:
        """Reserve the next `count` uint32 draws without computing them: `(key, offset)`, the
        draws being `draws_u32(key, offset, count)` (what `take_u32(count)` would return). An
        op whose kernels compute their random numbers themselves (on the device) takes this."""
        with self._lock:
            key, offset = self._key, self._offset
            self._offset += int(count)
        return key, offset % _DRAW_SPACE

    def take_uniform(self, count: int, dtype: Any = np.float32) -> np.ndarray:
        """`count` floats in [0, 1) (float64 uses two draws per value)."""
        if np.dtype(dtype) == np.float64:
            u = self.take_u32(2 * count).reshape(count, 2) if count else np.zeros((0, 2), np.uint32)
            return to_unit_float64(u[:, 0], u[:, 1])
        return to_unit_float32(self.take_u32(count))

    def take_normal(self, count: int) -> np.ndarray:
        """`count` standard normal float64 values (Box-Muller on float64 uniforms)."""
        pairs = (count + 1) // 2
        u = self.take_uniform(2 * pairs, np.float64).reshape(pairs, 2) if pairs else \
            np.zeros((0, 2))  # fmt: skip
        radius = np.sqrt(-2.0 * np.log1p(-u[:, 0]))
        angle = 2.0 * np.pi * u[:, 1]
        return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1).reshape(-1)[
            :count]

    def reserve(self, counts: Any) -> tuple[int, np.ndarray]:
        """Reserve `counts[i]` draws for sample i; returns `(key, bases)` and advances the RNG.

        Each base is a multiple of 4 (the start of a Philox block), so a kernel reading draws
        `base + k*e .. base + k*e + k-1` of element `e` with k in {2, 4, ...} touches one block per
        pair. Draw `d` is lane `d % 4` of block `d // 4`: values are a pure function of
        (key, draw index), hence identical on every backend and for any thread split. Bases are
        uint64 (draw indices wrap modulo 2**64).
        """
        counts = np.asarray(counts, dtype=np.int64).reshape(-1)
        if (counts < 0).any():
            raise ValueError("RNG.reserve: counts must be non-negative")
        padded = (counts + 3) // 4 * 4
        starts = np.concatenate([[0], np.cumsum(padded)[:-1]]).astype(np.int64) if len(counts) \
            else np.zeros(0, np.int64)  # fmt: skip
        with self._lock:
            start = (self._offset + 3) // 4 * 4
            self._offset = start + int(padded.sum())
            key = self._key
        bases = (np.uint64(start % _DRAW_SPACE) + starts.astype(np.uint64)).astype(np.uint64)
        return key, bases

    def noise_key(self) -> tuple[int, int]:
        """A fresh `(seed, offset)` pair for per-element noise kernels; reserves 2**40 draws."""
        with self._lock:
            offset = self._offset
            self._offset += 1 << 40
        return self._key, offset


def get_default_rng() -> RNG:
    """This thread's default RNG (random ops without `rng=` draw from it)."""
    rng = getattr(_tls, "rng", None)
    if rng is None:
        rng = _tls.rng = RNG()
    return rng  # type: ignore[no-any-return]


def swap_default_rng(rng: RNG | None) -> RNG | None:
    """Make `rng` this thread's default RNG (None: a fresh one on next use); returns the old one.

    A loader installs its own RNG around the user's per-batch function, so the random ops in it
    draw from a stream whose state the loader saves and restores.
    """
    previous = getattr(_tls, "rng", None)
    _tls.rng = rng
    return previous


def set_seed(seed: int) -> None:
    """Reseed this thread's default RNG."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"set_seed: seed must be an int; got {type(seed).__name__}")
    get_default_rng()._reseed(int(seed))
