"""paste on the GPU: one launch; each output element reads the image or the fill colour."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import paste
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
H: tl.constexpr = tl.constexpr(2)
W: tl.constexpr = tl.constexpr(3)
OUT_H: tl.constexpr = tl.constexpr(4)
OUT_W: tl.constexpr = tl.constexpr(5)
Y0: tl.constexpr = tl.constexpr(6)
X0: tl.constexpr = tl.constexpr(7)
NCOL: tl.constexpr = tl.constexpr(8)
TILE = 1024


@triton.jit
def _paste_kernel(src, dst, samples, tiles, fill, C: tl.constexpr, BLOCK: tl.constexpr):
    """One canvas tile: out[y, x, ch] = in[y - y0, x - x0, ch] inside the image, else fill."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    h = tl.load(row + H)
    w = tl.load(row + W)
    out_w = tl.load(row + OUT_W)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + OUT_H) * out_w * C
    ch = idx % C
    y = idx // (out_w * C) - tl.load(row + Y0)
    x = (idx // C) % out_w - tl.load(row + X0)
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    val = tl.load(src + tl.load(row + IN_OFF) + (y * w + x) * C + ch, mask=mask & inside, other=0)
    val = tl.where(inside, val, tl.load(fill + ch, mask=mask, other=0))
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val, mask=mask)


@register(paste.schema, "gpu")
def paste_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Sample table (offsets, extents, anchors) and the fill colour; one launch."""
    anchor = np.asarray(call.paste_anchor, np.int64).reshape(-1, 2)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], inp.shapes[:, :2],
                              out.shapes[:, :2], anchor], axis=1).astype(np.int64)  # fmt: skip
    tiles = tile_table(out.sizes, TILE)
    channels = int(inp.shapes[0, 2]) if inp.batch_size else 1
    run.launch(
        _paste_kernel,
        (len(tiles),),
        inp.data,
        out.data,
        samples,
        tiles,
        np.asarray(call.paste_fill, np.uint8),
        C=channels,
        BLOCK=TILE,
    )
