"""paste on the GPU: one row-tiled launch (`_window_rows`); the canvas reads the image shifted by
its anchor, and the fill colour outside it.

out[y, x, ch] = in[y - y0, x - x0, ch] inside the image, else fill[ch]: a canvas row is the
contiguous `out_w * C` run, whose image part is a contiguous run of an input row.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._window_rows import window_rows
from ndd_triton.ops import paste
from ndd_triton.ops.schema import Call


@register(paste.schema, "gpu", replay=True)
def paste_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, call: Call) -> None:
    """Anchors as negative window starts and the fill colour per channel; one launch."""
    n = inp.batch_size
    anchor = np.zeros((n, 3), np.int64)
    anchor[:, :2] = -np.asarray(call.paste_anchor, np.int64).reshape(-1, 2)
    fill = np.asarray(call.paste_fill, np.uint8).reshape(1, -1)
    window_rows(run, out, inp.data, inp.offsets, inp.shapes, anchor,
                fills=np.broadcast_to(fill, (n, fill.shape[1])), channel_axis=2)  # fmt: skip
