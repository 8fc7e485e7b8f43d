"""Resampling tables as dense band blocks for the CPU resize: one small GEMM per block of 16
output rows (rows of a resampling matrix have a few adjacent nonzeros, so a block touches a
narrow band of input columns)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ndd_triton.kernels._resample import AxisPlan, axis_table

_BLOCK = 16  # output rows per band block of the CPU GEMMs (16 beat 8, 32, 64 at 480x640->224)


@dataclass(frozen=True, slots=True)
class BandBlock:
    """Rows `[j0, j1)` of the dense resampling matrix, nonzero only in columns `[l0, l1)`."""

    j0: int
    j1: int
    l0: int
    l1: int
    matrix: np.ndarray  # [j1 - j0, l1 - l0] float32


@functools.lru_cache(maxsize=512)
def band_dense(plan: AxisPlan) -> tuple[list[int], list[int], list[int], np.ndarray]:
    """All band blocks of an axis at once: block starts `j0`, band starts `l0` and ends `l1`,
    and `[blocks, 16, width]` float32 matrices zero-padded to the widest band (see
    `band_blocks`; random crops make a new plan per sample, so this runs per sample)."""
    table = axis_table(plan)
    n_out = plan.n_out
    if n_out == 0:
        return [], [], [], np.zeros((0, _BLOCK, 0), np.float32)
    index = table.index.astype(np.int64)
    starts = np.arange(0, n_out, _BLOCK)
    lo = np.minimum.reduceat(index.min(axis=1), starts)
    hi = np.maximum.reduceat(index.max(axis=1), starts) + 1
    width = int((hi - lo).max())
    rows = np.arange(n_out)
    cols = index - lo[rows // _BLOCK][:, None]
    # Taps summed in float64 in (row, tap) order, then rounded once to float32.
    flat = (rows[:, None] * width + cols).reshape(-1)
    dense = np.bincount(flat, weights=table.weight.reshape(-1).astype(np.float64),
                        minlength=len(starts) * _BLOCK * width)  # fmt: skip
    dense = dense.reshape(len(starts), _BLOCK, width).astype(np.float32)
    return starts.tolist(), lo.tolist(), hi.tolist(), dense


def band_blocks(plan: AxisPlan) -> tuple[BandBlock, ...]:
    """The axis table as dense band blocks, for a CPU matmul (duplicate clamped taps summed).

    Rows of a resampling matrix have a few adjacent nonzeros, so blocks of 16 output rows touch
    a narrow band of input columns: one small GEMM per block does the whole pass.
    """
    starts, lo, hi, dense = band_dense(plan)
    blocks = []
    for b, (j0, l0, l1) in enumerate(zip(starts, lo, hi, strict=True)):
        j1 = min(j0 + _BLOCK, plan.n_out)
        blocks.append(BandBlock(j0, j1, l0, l1,
                                np.ascontiguousarray(dense[b, :j1 - j0, :l1 - l0])))  # fmt: skip
    return tuple(blocks)
