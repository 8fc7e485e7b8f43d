"""Flat streams over packed batches: tiles aligned to the output buffer, so memory ops vectorise.

Elementwise kernels see the output batch as one stream of elements (`out.data[base:]`, sample
`s` at `[start_s, end_s)`) and cut it into BLOCK-aligned blocks. A program owns the part of one
block that lies in one sample: a *full* tile (the whole block inside the sample, the common case)
runs unmasked at an address that is a multiple of BLOCK, so Triton emits 16-byte loads and
stores; the one or two partial tiles per sample take a masked path. Index math is a 64-bit
block base plus int32 lane offsets; nothing is unravelled per element.

* GLOBAL (no per-sample arguments, inputs packed like the output, output packed without gaps):
  program `p` is block `p` of the stream; no tile table at all.
* tiles: the programs are the blocks each sample touches, sample by sample; the host uploads
  only a `_tiles.tile_starts` table (`[N + 2]` int32, the first program of each sample) and a
  program finds its sample by binary search (`_tiles._helper_find_tile`); its block is the
  sample's first block (`S_START // BLOCK`) plus its index within the sample.
  An input packed like the output (same relative offsets) is read at the output's stream index
  through a view at its own base (`SAME`); otherwise at the index plus a per-sample delta.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._tables import GpuBatch
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, tile_starts

# stream columns of a sample table; kernels append their own columns after these
S_START: tl.constexpr = tl.constexpr(0)  # first element of the sample, relative to the stream base
S_END: tl.constexpr = tl.constexpr(1)  # one past its last element
S_NCOL = 2


def block_for(*dtypes: Any, budget: int = 8192, lo: int = 1024, hi: int = 4096) -> int:
    """Elements per tile: `budget` bytes of the widest type, clipped to [lo, hi] (powers of 2).

    With Triton's 4 warps: 8-32 elements per lane (2-4 16-byte accesses per operand), under
    ~150 registers for the elementwise kernels (measured with ptxas, sm_90a).
    """
    size = max(torch.empty(0, dtype=d).element_size() if isinstance(d, torch.dtype)
               else np.dtype(d).itemsize for d in dtypes)  # fmt: skip
    return int(min(max(budget // size, lo), hi))


@dataclass(frozen=True, slots=True)
class StreamPlan:
    """Launch geometry of one stream: grid, tiles (None: GLOBAL) and the sample columns."""

    grid: int
    tiles: np.ndarray | None  # `tile_starts` table; None: program p is block p
    columns: np.ndarray  # [N, S_NCOL] int64: S_START, S_END
    total: int  # stream length (GLOBAL: elements of the batch)
    out: torch.Tensor  # output buffer viewed at the stream base

    @property
    def is_global(self) -> bool:
        """Program p is block p of the stream (no tile table)."""
        return self.tiles is None

    def tables(self, *columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sample table: the stream columns then `columns`, tile table or a 1-row stand-in)."""
        cols = [np.asarray(c, np.int64).reshape(len(self.columns), -1) for c in columns]
        tiles = self.tiles if self.tiles is not None else np.zeros(2, np.int32)
        return np.concatenate([self.columns, *cols], axis=1), tiles


def packed_like(x: GpuBatch, out: GpuBatch) -> bool:
    """Whether every sample of `x` sits at the same offset from its first as in `out`."""
    if x.batch_size == 0:
        return True
    return bool(np.array_equal(x.offsets - x.offsets[0], out.offsets - out.offsets[0]))


def _first(out: GpuBatch) -> int:
    """Index of the sample at the lowest output offset (the stream base)."""
    return int(np.argmin(out.offsets)) if out.batch_size else 0


def input_view(x: GpuBatch, out: GpuBatch) -> tuple[torch.Tensor, np.ndarray, bool]:
    """(buffer, per-sample delta, same packing) to read `x` at the output's stream index.

    Same packing: the buffer is viewed at x's sample that is first in the output stream, deltas
    are 0; else the buffer is whole and delta = x offset - stream start of the sample (added
    per tile in the kernel).
    """
    if x.batch_size == 0:
        return x.data, np.zeros(0, np.int64), True
    first = _first(out)
    base = int(out.offsets[first])
    if packed_like(x, out):
        return x.data[int(x.offsets[first]) :], np.zeros(x.batch_size, np.int64), True
    return x.data, x.offsets - (out.offsets - base), False


def plan_tiles(starts: np.ndarray, sizes: np.ndarray, block: int, *, global_ok: bool
               ) -> tuple[int, np.ndarray | None, np.ndarray, int]:  # fmt: skip
    """(grid, `tile_starts` table or None, `[N, S_NCOL]` columns, total) of samples at stream
    `starts`: sample i gets one program per BLOCK block it touches.

    GLOBAL (tiles None) when allowed and the samples lie back to back from 0 in order.
    """
    n = len(sizes)
    starts = np.asarray(starts, np.int64)
    sizes = np.asarray(sizes, np.int64)
    columns = np.stack([starts, starts + sizes], axis=1).reshape(n, S_NCOL)
    total = int(sizes.sum()) if n else 0
    if global_ok and (n == 0 or bool(np.array_equal(starts, np.cumsum(sizes) - sizes))):
        return -(-total // block), None, columns, total
    nonempty = sizes > 0
    first = np.where(nonempty, starts // block, 0)
    last = np.where(nonempty, (starts + sizes - 1) // block, -1)
    if n and int(last.max()) >= 2**31:
        raise ValueError("GPU stream: the output buffer exceeds 2**31 tiles")
    tiles = tile_starts(last - first + 1)
    return int(tiles[-1]), tiles, columns, total


def plan_stream(out: GpuBatch, block: int, *, global_ok: bool) -> StreamPlan:
    """Cut the output stream into BLOCK tiles (GLOBAL when allowed and the output is gapless)."""
    base = int(out.offsets[_first(out)]) if out.batch_size else 0
    grid, tiles, columns, total = plan_tiles(out.offsets - base, out.sizes, block,
                                             global_ok=global_ok)  # fmt: skip
    return StreamPlan(grid, tiles, columns, total, out.data[base:])


@triton.jit
def _helper_stream_tile(tiles, samples, total, NCOL: tl.constexpr, BLOCK: tl.constexpr,
                        GLOBAL: tl.constexpr):  # fmt: skip
    """(sample, row, block start, lo, hi) of this program: stream elements [lo, hi) of the
    block at `start` (int64) belong to `sample` (0 when GLOBAL), whose table row is `row`."""
    pid = tl.program_id(0)
    if GLOBAL:
        sample = pid * 0
        start = pid.to(tl.int64) * BLOCK
        row = samples
        lo = start
        hi = tl.minimum(start + BLOCK, total)
    else:
        sample, t = _helper_find_tile(tiles)
        row = samples + sample.to(tl.int64) * NCOL
        first = tl.load(row + S_START)
        start = (first // BLOCK + t) * BLOCK  # BLOCK: a power of two (a shift)
        lo = tl.maximum(start, first)
        hi = tl.minimum(start + BLOCK, tl.load(row + S_END))
    return sample, row, start, lo, hi
