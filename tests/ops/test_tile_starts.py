"""The per-sample tile-start table and the in-kernel search (`kernels/gpu/_tiles.py`) against
the per-tile tables they replace: every program finds the sample and tile a `(sample, tile)`
row table would have given it, with empty samples anywhere in the batch."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_plane_block,
    _helper_row_block,
    block_tile_counts,
    grid_of,
    row_tile_counts,
    tile_starts,
)

DEVICE = "cuda" if os.environ.get("NDD_TRITON_TEST_DEVICE") == "cuda" else "cpu"


@triton.jit
def _find_tiles_probe(starts, out):
    sample, t = _helper_find_tile(starts)
    pid = tl.program_id(0)
    tl.store(out + 2 * pid, sample)
    tl.store(out + 2 * pid + 1, t)


def _expected(counts: np.ndarray) -> np.ndarray:
    """`(sample, tile within sample)` per program, by enumeration."""
    return np.array([(s, t) for s, c in enumerate(counts) for t in range(c)], np.int32
                    ).reshape(-1, 2)  # fmt: skip


@pytest.mark.parametrize("counts", [[3], [1, 1], [0, 2, 0, 0, 5, 1, 0], [4, 0],
                                    [0, 0, 1], list(range(17)), [2] * 64 + [0, 9]])  # fmt: skip
def test_programs_find_their_sample_and_tile(counts):
    counts = np.array(counts, np.int64)
    starts = tile_starts(counts)
    assert starts.dtype == np.int32
    assert starts[0] == len(counts)
    assert grid_of(starts) == counts.sum()
    np.testing.assert_array_equal(starts[1:-1], np.cumsum(counts) - counts)
    grid = grid_of(starts)
    out = torch.full((grid, 2), -1, dtype=torch.int32, device=DEVICE)
    _find_tiles_probe[(grid,)](torch.from_numpy(starts).to(DEVICE), out)
    np.testing.assert_array_equal(out.cpu().numpy(), _expected(counts))


@triton.jit
def _block_probe(starts, rows, length, out, BY: tl.constexpr, BX: tl.constexpr):
    sample, t = _helper_find_tile(starts)
    n = tl.load(rows + sample)
    w = tl.load(length + sample)
    plane, y0, x0 = _helper_plane_block(t, n, w, BY, BX)
    r0, c0 = _helper_row_block(t, w, BY, BX)
    at = out + 6 * tl.program_id(0)
    tl.store(at, sample)
    tl.store(at + 1, plane)
    tl.store(at + 2, y0)
    tl.store(at + 3, x0)
    tl.store(at + 4, r0)
    tl.store(at + 5, c0)


def test_tiles_unravel_plane_row_and_column_blocks():
    """Blocks of BY rows x BX elements, plane major then row block then column block (the order
    the per-tile tables had); the one-plane helper gives the same blocks over all rows."""
    planes = np.array([2, 1, 0, 3, 1, 2], np.int32)
    rows = np.array([5, 1, 4, 0, 9, 3], np.int32)
    length = np.array([7, 20, 3, 2, 8, 17], np.int32)
    by, bx = 2, 8
    starts = tile_starts(block_tile_counts(planes, rows, length, by, bx))
    expected = [(s, p, y, x) for s in range(len(planes)) for p in range(planes[s])
                for y in range(0, rows[s], by) for x in range(0, length[s], bx)]  # fmt: skip
    grid = grid_of(starts)
    assert grid == len(expected)
    out = torch.full((grid, 6), -1, dtype=torch.int32, device=DEVICE)
    dev = [torch.from_numpy(a).to(DEVICE) for a in (starts, rows, length)]
    _block_probe[(grid,)](*dev, out, BY=by, BX=bx)
    got = out.cpu().numpy()
    np.testing.assert_array_equal(got[:, :4], np.array(expected, np.int32).reshape(-1, 4))
    # one plane of planes * rows rows: the row block counts on across planes
    np.testing.assert_array_equal(got[:, 4], got[:, 1] * (-(-rows[got[:, 0]] // by) * by)
                                  + got[:, 2])  # fmt: skip
    np.testing.assert_array_equal(got[:, 5], got[:, 3])


def test_row_tile_counts():
    rows, row_len = np.array([5, 0, 1, 17, 3]), np.array([7, 9, 0, 33, 64])
    counts = row_tile_counts(rows, row_len, 4, 16)
    # ceil(rows / 4) row blocks of ceil(row_len / 16) column blocks; empty samples: none
    np.testing.assert_array_equal(counts, [2 * 1, 0, 1 * 0, 5 * 3, 1 * 4])


def test_too_many_programs_is_an_error():
    with pytest.raises(ValueError, match="grid limit"):
        tile_starts(np.array([2**30, 2**30]))
