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


def test_tile_counts_match_the_tiles_of_row_and_block_tables():
    from ndd_triton.kernels.gpu._tables import block_tiles, row_tiles

    rows, row_len = np.array([5, 0, 1, 17, 3]), np.array([7, 9, 0, 33, 64])
    tiles = row_tiles(rows, row_len, 4, 16)
    counts = row_tile_counts(rows, row_len, 4, 16)
    np.testing.assert_array_equal(np.bincount(tiles[:, 0], minlength=5), counts)
    planes, cols = np.array([2, 1, 0, 3, 1]), np.array([7, 20, 3, 2, 0])
    tiles = block_tiles(planes, rows, cols, 2, 8)
    counts = block_tile_counts(planes, rows, cols, 2, 8)
    np.testing.assert_array_equal(np.bincount(tiles[:, 0], minlength=5), counts)


def test_too_many_programs_is_an_error():
    with pytest.raises(ValueError, match="grid limit"):
        tile_starts(np.array([2**30, 2**30]))
