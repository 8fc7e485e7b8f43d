"""flip on the GPU: one row-tiled launch for the whole ragged batch (`_window_rows`).

A flipped axis reads the source at `extent - 1 - o` (anchor `extent - 1`, step -1). For HWC a
horizontal flip reverses the order of the C-element pixels inside each contiguous `W * C` row
(C constexpr), a vertical flip copies a row to the mirrored row, so loads and stores stay
contiguous; no per-element unravelling.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._window_rows import window_rows
from ndd_triton.ops import flip
from ndd_triton.ops.schema import Call


@register(flip.schema, "gpu", replay=True)
def flip_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Mirror the flagged axes of every sample in one launch."""
    layout = arg.inputs[0].layout or ""
    n, ndim = inp.shapes.shape
    mirror = np.zeros((n, ndim), dtype=bool)
    for name, values in (("W", arg.horizontal), ("H", arg.vertical), ("D", arg.depthwise)):
        if name in layout:
            mirror[:, layout.index(name)] = np.asarray(values).reshape(-1) != 0
    anchor = np.where(mirror, inp.shapes - 1, 0)
    step = np.where(mirror, -1, 1)
    window_rows(run, out, inp.data, inp.offsets, inp.shapes, anchor, step)
