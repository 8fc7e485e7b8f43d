"""preemphasis_filter on the GPU: one launch over every sample's BLOCK-element tiles.

Each lane reads x[t] and x[t-1] (the border value at t = 0), computes in fp32 and converts to
the output type with DALI's rounding and saturation.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.dtype import float32
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert, convert_meta
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.ops import preemphasis_filter
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
SIZE: tl.constexpr = tl.constexpr(2)
NCOL: tl.constexpr = tl.constexpr(3)
BLOCK = 1024


@triton.jit
def _preemphasis_kernel(src, dst, samples, coeffs, tiles, BORDER: tl.constexpr,
                        BLOCK: tl.constexpr, CONVERT: tl.constexpr, LO: tl.constexpr,
                        HI: tl.constexpr, NANV: tl.constexpr, LO_F: tl.constexpr,
                        HI_F: tl.constexpr):  # fmt: skip
    """dst[t] = x[t] - c x[t-1]; before t = 0: 0 (BORDER 0), x[0] (1) or x[1] (2)."""
    sample, tile = _helper_find_tile(tiles)
    first = tile.to(tl.int64) * BLOCK
    row = samples + sample.to(tl.int64) * NCOL
    base = tl.load(row + IN_OFF)
    size = tl.load(row + SIZE)
    c = tl.load(coeffs + sample)
    t = first + tl.arange(0, BLOCK)
    mask = t < size
    x = tl.load(src + base + t, mask=mask, other=0).to(tl.float32)
    prev = tl.load(src + base + t - 1, mask=mask & (t > 0), other=0).to(tl.float32)
    if BORDER == 1:
        prev = tl.where(t == 0, x, prev)
    elif BORDER == 2:
        nxt = tl.load(src + base + 1, mask=size > 1, other=0).to(tl.float32)
        nxt = tl.where(size > 1, nxt, tl.load(src + base).to(tl.float32))
        prev = tl.where(t == 0, nxt, prev)
    y = x - c * prev
    if CONVERT:
        y = _helper_dali_convert(y, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
    tl.store(dst + tl.load(row + OUT_OFF) + t, y, mask=mask)


@register(preemphasis_filter.schema, "gpu", replay=True)
def preemphasis_filter_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """One launch for the ragged batch; coefficients in a float32 table."""
    sizes = out.sizes
    samples = np.stack([inp.offsets, out.offsets, sizes], axis=1).astype(np.int64)
    coeffs = np.asarray(arg.preemph_coeff, dtype=np.float32).reshape(-1)
    tiles = tile_starts(-(-sizes // BLOCK))
    meta = convert_meta(float32, out.dtype)
    run.launch(_preemphasis_kernel, (grid_of(tiles),), inp.data, out.data, samples, coeffs, tiles,
               BORDER=int(arg.border_code), BLOCK=BLOCK, **meta)  # fmt: skip
