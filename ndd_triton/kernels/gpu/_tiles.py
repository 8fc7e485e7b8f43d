"""Which sample and tile a program handles, found in the kernel from a per-sample table.

A ragged batch is one launch of `sum(tiles per sample)` programs. Instead of a per-tile table
(one `(sample, ...)` row per tile: thousands of rows to build with NumPy and upload per call),
the host uploads a *tile-start table* of `N + 2` int32: N, then the first program of each
sample and the total (`tile_starts`, NumPy over `[N]` arrays). A program finds its sample with
`_helper_find_tile`: a binary search for the last sample whose first program is <= its id.
The tile within the sample is `pid - start`; kernels unravel it into row / column / plane blocks
with one int32 divmod per program (per-sample block counts come from their sample table).

Why the search is cheap on a GPU: it runs once per program, not per element, on scalars (one
lane's worth, uniform across the program, so no divergence); it is `ceil(log2(N))` steps (6 for
64 samples, 10 for 1024) of an int32 compare and a scalar load from a table of a few hundred
bytes that every program of the launch reads, so after the first programs it is an L1/L2 hit
(tens of cycles each). A per-tile table cost one dependent load per program too, plus the host
building and uploading ~12 bytes per tile; here a program of thousands of elements pays a few
hundred cycles of latency that other resident programs hide. Int32 throughout: sample and tile
indices are below the grid limit (2**31).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl


def tile_starts(counts: np.ndarray) -> np.ndarray:
    """`[N + 2]` int32: N, then the first program of each of the N samples (an exclusive prefix
    sum of `counts`, the programs per sample; 0 for an empty sample) and the total."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    n = len(counts)
    table = np.empty(n + 2, np.int64)
    table[0] = n
    table[1] = 0
    np.cumsum(counts, out=table[2:])
    if table[-1] >= 2**31:
        total = int(table[-1])
        raise ValueError(f"GPU launch: {total} programs exceed the grid limit of 2**31 - 1")
    return table.astype(np.int32)


def grid_of(starts: np.ndarray) -> int:
    """Programs of a launch over a `tile_starts` table."""
    return int(starts[-1])


@triton.jit
def _helper_find_tile(starts):
    """(sample, tile within the sample) of this program over a `tile_starts` table (int32).

    Invariant `first[lo] <= pid < first[hi]` (`first[N]` is the total); empty samples share
    their first program with the next sample, so the last sample with `first <= pid` is the
    one that owns `pid`.
    """
    pid = tl.program_id(0)
    first = starts + 1
    lo = pid * 0
    hi = tl.load(starts)
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        below = tl.load(first + mid) <= pid
        lo = tl.where(below, mid, lo)
        hi = tl.where(below, hi, mid)
    return lo, pid - tl.load(first + lo)


def row_tile_counts(rows: np.ndarray, row_len: np.ndarray, rows_per_tile: int, block: int
                    ) -> np.ndarray:  # fmt: skip
    """Programs per sample of `rows[i]` rows of `row_len[i]` elements in blocks of
    `rows_per_tile` x `block` (row-block major: a program's tile `t` is row block
    `t // col_blocks`, column block `t % col_blocks`, `col_blocks = cdiv(row_len, block)`)."""
    rows = np.asarray(rows, dtype=np.int64)
    row_len = np.asarray(row_len, dtype=np.int64)
    return -(-rows // rows_per_tile) * -(-row_len // block)


def block_tile_counts(planes: np.ndarray, rows: np.ndarray, cols: np.ndarray, block_rows: int,
                      span: int) -> np.ndarray:  # fmt: skip
    """Programs per sample of `planes[i]` planes of `rows[i]` x `cols[i]` pixels in blocks of
    `block_rows` x `span` (plane major, then row block, then column block)."""
    planes, rows, cols = (np.asarray(a, dtype=np.int64) for a in (planes, rows, cols))
    return planes * -(-rows // block_rows) * -(-cols // span)


@triton.jit
def _helper_row_block(t, length, BY: tl.constexpr, BX: tl.constexpr):
    """(first row, first element) of tile `t` of one plane of rows of `length` (int32, > 0)
    elements in BY x BX blocks, row-block major (`row_tile_counts`): one int32 divmod."""
    col_blocks = (length - 1) // BX + 1
    block_row = t // col_blocks
    return block_row * BY, (t - block_row * col_blocks) * BX


@triton.jit
def _helper_row_tile(t, rows, length, BY: tl.constexpr, BX: tl.constexpr):
    """Row indices `[BY]`, element indices `[BX]` and their `[BY, BX]` bounds mask of tile `t`
    of `rows` rows of `length` elements (`_helper_row_block`; give `length` its alignment with
    `tl.multiple_of` first, so that loads and stores along a row can be vectorised)."""
    r0, j0 = _helper_row_block(t, length, BY, BX)
    r = r0 + tl.arange(0, BY)
    j = tl.multiple_of(j0, BX) + tl.arange(0, BX)
    return r, j, (r < rows)[:, None] & (j < length)[None, :]


@triton.jit
def _helper_plane_block(t, rows, length, BY: tl.constexpr, BX: tl.constexpr):
    """(plane, first row, first element) of tile `t` of planes of `rows` x `length` (int32,
    > 0) in BY x BX blocks, plane major then row block (`block_tile_counts`): two int32
    divmods."""
    col_blocks = (length - 1) // BX + 1
    per_plane = ((rows - 1) // BY + 1) * col_blocks
    plane = t // per_plane
    rest = t - plane * per_plane
    block_row = rest // col_blocks
    return plane, block_row * BY, (rest - block_row * col_blocks) * BX
