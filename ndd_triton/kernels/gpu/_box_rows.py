"""Row tiles for the box and coordinate kernels: a program owns BLOCK rows (boxes, points) of
one sample; a row is a few contiguous float32 coordinates read as strided columns.

Box data are tiny next to images (a few hundred bytes per sample), so these kernels are bound
by the launch itself; what matters is one launch per batch and one upload of the tables.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._tiles import _helper_find_tile, tile_starts

ROW_BLOCK = 128  # rows per program (tests shrink it to get several tiles per sample)

# sample-table columns shared by the box kernels; kernels append their own after R_NCOL
R_IN: tl.constexpr = tl.constexpr(0)  # element offset of the sample's input
R_OUT: tl.constexpr = tl.constexpr(1)  # element offset of the sample's output
R_ROWS: tl.constexpr = tl.constexpr(2)  # rows in the sample
R_NCOL = 3


def row_plan(in_offsets: np.ndarray, out_offsets: np.ndarray, rows: np.ndarray,
             *columns: np.ndarray, block: int | None = None
             ) -> tuple[np.ndarray, np.ndarray, int]:  # fmt: skip
    """`(samples, tiles, block)`: int64 sample table `[N, R_NCOL + len(columns)]`, the
    `tile_starts` table of every sample's rows in chunks of `block` rows (empty samples: no
    program; the launch's grid is `grid_of(tiles)`), and that block (ROW_BLOCK unless given),
    the kernels' BLOCK."""
    rows = np.asarray(rows, np.int64)
    cols = [np.asarray(in_offsets, np.int64), np.asarray(out_offsets, np.int64), rows]
    cols += [np.asarray(c).astype(np.int64).reshape(len(rows)) for c in columns]
    samples = np.stack(cols, axis=1) if len(rows) else np.zeros((0, len(cols)), np.int64)
    block = block or ROW_BLOCK
    return np.ascontiguousarray(samples), tile_starts(-(-rows // block)), block


@triton.jit
def _helper_row_tile(samples, tiles, NCOL: tl.constexpr, BLOCK: tl.constexpr):
    """This program's sample-table row pointer, its rows (int64) and their mask."""
    s, tile = _helper_find_tile(tiles)
    row = samples + s.to(tl.int64) * NCOL
    rows = tile.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    return s, row, rows, rows < tl.load(row + R_ROWS)
