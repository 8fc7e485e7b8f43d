"""bbox_paste on the GPU: one launch; a program maps BLOCK boxes of one sample.

Per-sample float32 table: `1 / ratio` and the margins `pos * ((ratio - 1) / ratio)` computed on
the host in float32 exactly as the CPU kernel does, so both backends give the same bits.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._box_rows import (
    R_IN,
    R_NCOL,
    R_OUT,
    _helper_row_tile,
    row_plan,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import grid_of
from ndd_triton.ops import bbox_paste
from ndd_triton.ops.schema import Call

NCOL: tl.constexpr = tl.constexpr(R_NCOL)


@triton.jit
def _bbox_paste_kernel(src, dst, samples, coefs, tiles, LTRB: tl.constexpr,
                       BLOCK: tl.constexpr):  # fmt: skip
    """BLOCK boxes of one sample; coefs row: inv, margin_x, margin_y."""
    s, row, boxes, mask = _helper_row_tile(samples, tiles, NCOL, BLOCK)
    i_off = tl.load(row + R_IN) + boxes * 4
    o_off = tl.load(row + R_OUT) + boxes * 4
    inv = tl.load(coefs + 3 * s)
    for c in tl.static_range(4):
        margin = tl.load(coefs + 3 * s + 1 + (c % 2))
        v = tl.load(src + i_off + c, mask=mask, other=0.0) * inv
        if LTRB or c < 2:
            v = v + margin
        tl.store(dst + o_off + c, v, mask=mask)


@register(bbox_paste.schema, "gpu")
def bbox_paste_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Sample and parameter tables, one launch."""
    one = np.float32(1)
    ratio = np.asarray(arg.ratio, np.float32).reshape(-1)
    pos = np.stack([np.asarray(arg.paste_x, np.float32).reshape(-1),
                    np.asarray(arg.paste_y, np.float32).reshape(-1)], axis=1)  # fmt: skip
    margin = pos * ((ratio - one) / ratio)[:, None]
    params = np.ascontiguousarray(np.concatenate([(one / ratio)[:, None], margin], axis=1),
                                  np.float32)  # fmt: skip
    samples, tiles, block = row_plan(inp.offsets, out.offsets, inp.sizes // 4)
    run.launch(_bbox_paste_kernel, (grid_of(tiles),), inp.data, out.data, samples, params, tiles,
               LTRB=bool(arg.ltrb), BLOCK=block)  # fmt: skip
