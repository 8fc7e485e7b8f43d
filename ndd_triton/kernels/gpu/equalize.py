"""equalize on the GPU: one launch, one program per (sample, frame, channel) plane.

Each program builds its plane's 256-bin histogram with `tl.histogram` over BLOCK-pixel chunks,
turns it into the OpenCV/DALI LUT (cumsum, first nonzero bin, fp32 scale, round half to even),
writes the LUT to a scratch row and gathers through it in a second sweep. The plane table rows
are `(in_off, out_off, pixels, first_pixel_stride...)`: pixel p of the plane is at
`base + p * STEP` with STEP = channel count for channel-last layouts and 1 otherwise.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels._equalize_tables import planes_view
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import equalize
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
PIXELS: tl.constexpr = tl.constexpr(2)
STEP: tl.constexpr = tl.constexpr(3)
NCOL: tl.constexpr = tl.constexpr(4)
BINS: tl.constexpr = tl.constexpr(256)
TILE = 1024


@triton.jit
def _equalize_kernel(src, dst, planes, luts, BLOCK: tl.constexpr):
    """Histogram, LUT and remap of one channel plane."""
    plane = tl.program_id(0).to(tl.int64)
    row = planes + plane * NCOL
    n = tl.load(row + PIXELS)
    step = tl.load(row + STEP)
    src_base = src + tl.load(row + IN_OFF)
    dst_base = dst + tl.load(row + OUT_OFF)
    hist = tl.zeros([BINS], dtype=tl.int32)
    for start in range(0, n, BLOCK):
        p = start + tl.arange(0, BLOCK).to(tl.int64)
        mask = p < n
        v = tl.load(src_base + p * step, mask=mask, other=0).to(tl.int32)
        hist += tl.histogram(v, BINS, mask=mask)
    bins = tl.arange(0, BINS)
    cdf = tl.cumsum(hist, 0)
    first = tl.min(tl.where(hist > 0, bins, BINS), 0)
    cdf_min = tl.sum(tl.where(bins == first, cdf, 0), 0)
    scale = 255.0 / tl.maximum(n - cdf_min, 1).to(tl.float32)
    value = (cdf - cdf_min).to(tl.float32) * scale
    r = tl.floor(value + 0.5)  # round half to even, as OpenCV's cvRound
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    r = tl.where(((r - value) == 0.5) & odd, r - 1.0, r)
    lut = tl.minimum(tl.maximum(r, 0.0), 255.0).to(tl.int32)
    lut = tl.where(n == cdf_min, bins, lut)  # constant plane: unchanged
    tl.store(luts + plane * BINS + bins, lut)
    tl.debug_barrier()
    for start in range(0, n, BLOCK):
        p = start + tl.arange(0, BLOCK).to(tl.int64)
        mask = p < n
        v = tl.load(src_base + p * step, mask=mask, other=0).to(tl.int64)
        mapped = tl.load(luts + plane * BINS + v, mask=mask, other=0)
        tl.store(dst_base + p * step, mapped.to(tl.uint8), mask=mask)


@register(equalize.schema, "gpu", replay=True)
def equalize_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """One program per plane; LUT rows live in a scratch buffer."""
    rows = []
    for i, shape in enumerate(inp.shapes):
        outer, pixels, inner = planes_view(tuple(shape), inp.layout or "HW")
        o = np.repeat(np.arange(outer, dtype=np.int64), inner)
        c = np.tile(np.arange(inner, dtype=np.int64), outer)
        start = o * pixels * inner + c
        rows.append(np.stack([inp.offsets[i] + start, out.offsets[i] + start,
                              np.full_like(start, pixels), np.full_like(start, inner)], 1))
    planes = np.concatenate(rows).astype(np.int64) if rows else np.zeros((0, 4), np.int64)
    luts = run.empty(max(len(planes), 1) * 256, torch.int32)
    run.launch(_equalize_kernel, (len(planes),), inp.data, out.data, planes, luts, BLOCK=TILE)
