"""A banded matrix applied along one axis, for mel_filter_bank and mfcc on the GPU.

Sample i is viewed as (outer, J, inner); output row (o, k) over an inner block t is
`sum_{j in band(k)} M[k, j] in[o, j, t]`. Matrices of every distinct J are stacked in one
float32 table; each matrix row has its nonzero band `[lo, hi)` (mel triangles are narrow),
so a program reads only the rows of its band. One launch per batch:
tiles `(sample, output row, first inner index)`.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, row_tile_counts, tile_starts
from ndd_triton.ops._audio import band_limits
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
EXTENT: tl.constexpr = tl.constexpr(2)  # J
ROWS_OUT: tl.constexpr = tl.constexpr(3)  # K
INNER: tl.constexpr = tl.constexpr(4)
MAT_ROW: tl.constexpr = tl.constexpr(5)  # first row of this sample's matrix in the band table
NCOL: tl.constexpr = tl.constexpr(6)


@triton.jit
def _axis_matrix_kernel(src, dst, samples, weights, bands, tiles, BLOCK: tl.constexpr):
    """dst[o, k, t] = sum_j weights[band row] * src[o, j, t] over the band of row k."""
    sample, tile = _helper_find_tile(tiles)
    row = samples + sample.to(tl.int64) * NCOL
    extent = tl.load(row + EXTENT).to(tl.int32)
    k_rows = tl.load(row + ROWS_OUT).to(tl.int32)
    inner = tl.load(row + INNER)
    col_tiles = ((inner + BLOCK - 1) // BLOCK).to(tl.int32)  # a program: one row, BLOCK columns
    out_row = tile // col_tiles  # o * K + k
    first = (tile - out_row * col_tiles).to(tl.int64) * BLOCK
    o = out_row // k_rows
    k = out_row - o * k_rows
    band = bands + (tl.load(row + MAT_ROW) + k) * 3
    lo = tl.load(band).to(tl.int32)
    hi = tl.load(band + 1).to(tl.int32)
    w_base = tl.load(band + 2)  # weights of column lo of this row
    t = first + tl.arange(0, BLOCK)
    mask = t < inner
    src_row = src + tl.load(row + IN_OFF) + o.to(tl.int64) * extent * inner
    acc = tl.zeros((BLOCK,), tl.float32)
    for j in range(lo, hi):
        w = tl.load(weights + w_base + (j - lo))
        acc += w * tl.load(src_row + j * inner + t, mask=mask, other=0.0)
    tl.store(dst + tl.load(row + OUT_OFF) + out_row.to(tl.int64) * inner + t, acc, mask=mask)


def launch_axis_matrix(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Build the band tables of `arg.matrices` and launch once over the ragged batch."""
    split = np.asarray(arg.axis_split, dtype=np.int64).reshape(-1, 3)
    weights, bands, first_row = [], [], {}
    w_pos = 0
    row_pos = 0
    for extent, matrix in arg.matrices.items():
        lo, hi = band_limits(matrix)
        first_row[extent] = row_pos
        for k in range(matrix.shape[0]):
            weights.append(matrix[k, lo[k] : hi[k]].astype(np.float32))
            bands.append((lo[k], hi[k], w_pos))
            w_pos += int(hi[k] - lo[k])
        row_pos += matrix.shape[0]
    # per sample, by its extent (NumPy over [N]; the distinct extents are few)
    extents = np.fromiter(first_row, np.int64, len(first_row))
    order = np.argsort(extents)
    which = order[np.searchsorted(extents, split[:, 1], sorter=order)]
    k_rows = np.array([arg.matrices[int(e)].shape[0] for e in extents], np.int64)[which]
    mat_row = np.fromiter(first_row.values(), np.int64, len(first_row))[which]
    samples = np.stack([inp.offsets, out.offsets, split[:, 1], k_rows, split[:, 2], mat_row],
                       axis=1).astype(np.int64)  # fmt: skip
    block = int(min(max(1 << (int(split[:, 2].max(initial=1)) - 1).bit_length(), 16), 256))
    tiles = tile_starts(row_tile_counts(split[:, 0] * k_rows, split[:, 2], 1, block))
    weight_table = np.concatenate(weights) if w_pos else np.zeros(1, np.float32)
    run.launch(_axis_matrix_kernel, (grid_of(tiles),), inp.data, out.data, samples, weight_table,
               np.asarray(bands, dtype=np.int64).reshape(-1, 3), tiles, BLOCK=block)  # fmt: skip
