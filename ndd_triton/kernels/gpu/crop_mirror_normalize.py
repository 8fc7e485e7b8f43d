"""crop_mirror_normalize on the GPU: one launch for the whole batch.

The training case, an HWC image whose window lies inside it, normalised to CHW or HWC, runs a
row-tiled kernel (`_cmn_rows_kernel`): a program owns ROWS x BLOCK output pixels of one
sample and all C channels; a row's source and destination come from one multiply per row,
the mirror is a per-sample reversal of the column, and a CHW plane row is stored as 16-byte
vectors when every row starts aligned. No per-element division, unlike the generic N-D
window kernel (`crop._window_kernel`: three divisions and modulos per element, each sample's
coordinates unravelled element by element), which handles everything else (windows outside
the image, padded channels, other layouts). Both compute `float32(v) * gain + bias` (no FMA)
and round integer outputs the same way, so they agree bit for bit.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu import _tables
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, row_block
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_row_tile,
    grid_of,
    row_tile_counts,
    tile_starts,
)
from ndd_triton.kernels.gpu._window_rows import _helper_crop_convert
from ndd_triton.kernels.gpu.crop import window_launch
from ndd_triton.ops import crop_mirror_normalize
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
OUT_H: tl.constexpr = tl.constexpr(2)
OUT_W: tl.constexpr = tl.constexpr(3)
IN_ROW: tl.constexpr = tl.constexpr(4)  # elements per input row (W_in * C)
Y0: tl.constexpr = tl.constexpr(5)
X0: tl.constexpr = tl.constexpr(6)
MIRROR: tl.constexpr = tl.constexpr(7)
NCOL: tl.constexpr = tl.constexpr(8)


@triton.jit
def _cmn_rows_kernel(src, dst, samples, floats, tiles, C: tl.constexpr, CMAX: tl.constexpr,
                     CHW: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                     ALIGN: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """ROWS x BLOCK output pixels of one sample, each of its C channels in turn: the window
    pixel (Y0 + r, X0 + j, or X0 + W - 1 - j mirrored) times the channel's gain plus its bias.
    Int32 offsets within a sample (the host checks that they fit)."""
    sample, t = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    row = samples + sample * NCOL
    h = tl.load(row + OUT_H).to(tl.int32)
    w = tl.multiple_of(tl.load(row + OUT_W).to(tl.int32), ALIGN)
    r, j, mask = _helper_row_tile(t, h, w, ROWS, BLOCK)
    x = tl.where(tl.load(row + MIRROR) != 0, w - 1 - j, j) + tl.load(row + X0).to(tl.int32)
    y = r + tl.load(row + Y0).to(tl.int32)
    pixels = (y * tl.load(row + IN_ROW).to(tl.int32))[:, None] + (x * C)[None, :]
    src = src + tl.load(row + IN_OFF)
    dst = dst + tl.multiple_of(tl.load(row + OUT_OFF), ALIGN)
    frow = floats + sample * (3 * CMAX)  # gain, bias, fill rows of CMAX (fill unused here)
    for c in tl.static_range(C):
        v = tl.load(src + pixels + c, mask=mask, other=0).to(tl.float32)
        v = v * tl.load(frow + c) + tl.load(frow + CMAX + c)
        v = _helper_crop_convert(v, dst.dtype.element_ty, LO, HI)  # integers: saturate, round
        if CHW:
            out = dst + tl.multiple_of((c * h + r) * w, ALIGN)[:, None] + j[None, :]
        else:
            out = dst + ((r * w)[:, None] + j[None, :]) * C + c
        tl.store(out, v, mask=mask)


def _rows_launch(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call,
                 floats: np.ndarray) -> bool:  # fmt: skip
    """Launch `_cmn_rows_kernel` when the call is its case (else False, nothing launched):
    HWC in, CHW or HWC out with the same channels, every window inside its image."""
    layout, out_layout = call.inputs[0].layout, call.out_layout
    if layout != "HWC" or out_layout not in ("CHW", "HWC") or inp.shapes.shape[1] != 3:
        return False
    n = inp.batch_size
    c = int(inp.shapes[0, 2])
    chw = out_layout == "CHW"
    h, w = (out.shapes[:, 1], out.shapes[:, 2]) if chw else (out.shapes[:, 0], out.shapes[:, 1])
    start = np.asarray(call.window_start, np.int64).reshape(n, 2)
    if not 1 <= c <= 4 or (inp.shapes[:, 2] != c).any() or \
            (out.shapes[:, 0 if chw else 2] != c).any():  # fmt: skip
        return False
    if (start < 0).any() or (start[:, 0] + h > inp.shapes[:, 0]).any() or \
            (start[:, 1] + w > inp.shapes[:, 1]).any():  # fmt: skip
        return False
    if max(int(inp.sizes.max(initial=0)), int(out.sizes.max(initial=0))) >= 2**31:
        return False
    mirror = np.zeros(n, np.int64) if call.mirror is None else \
        (np.asarray(call.mirror).reshape(n) != 0).astype(np.int64)  # fmt: skip
    samples = np.stack([inp.offsets, out.offsets, h, w, inp.shapes[:, 1] * c, start[:, 0],
                        start[:, 1], mirror], axis=1).astype(np.int64)  # fmt: skip
    vec = max(16 // out.data.element_size(), 1)
    live = h * w > 0
    aligned = chw and not ((out.offsets[live] % vec).any() or (w[live] % vec).any())
    rows_per_tile, block = row_block(h, w)
    per_tile = max(_tables.ROW_TILE_ELEMENTS // (block * c), 1)
    rows_per_tile = min(rows_per_tile, 1 << (per_tile.bit_length() - 1))
    tiles = tile_starts(row_tile_counts(h, w, rows_per_tile, block))
    is_int = not out.dtype.is_float
    info = np.iinfo(out.dtype.numpy_dtype) if is_int else None
    run.launch(_cmn_rows_kernel, (grid_of(tiles),), inp.data, out.data, samples,
               np.ascontiguousarray(floats, dtype=np.float32), tiles, C=c, CMAX=floats.shape[2],
               CHW=chw, LO=float(info.min) if info is not None else 0.0,
               HI=float(info.max) if info is not None else 0.0, ALIGN=vec if aligned else 1,
               ROWS=rows_per_tile, BLOCK=block)  # fmt: skip
    return True


@register(crop_mirror_normalize.schema, "gpu", replay=True)
def crop_mirror_normalize_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Crop, mirror, normalise, convert and permute every sample in one launch."""
    floats = np.stack([call.gain, call.bias, call.fill], axis=1).astype(np.float32)
    if not _rows_launch(run, out, inp, call, floats):
        window_launch(run, out, inp, call, call.out_layout, floats, call.mirror, affine=True)
