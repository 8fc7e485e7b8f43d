"""pad on the GPU: one row-tiled launch for the whole ragged batch (`_window_rows`).

The data stay at the start of every axis (anchor 0): output elements inside the input copy it,
the others get the sample's fill value (stored in the output dtype, so integer wrap-around is
exact). Each program copies rows of the contiguous innermost run; no per-element unravelling.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._window_rows import window_rows
from ndd_triton.ops import pad
from ndd_triton.ops.schema import Call


@register(pad.schema, "gpu", replay=True)
def pad_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Copy every sample into the start of its padded output, fill the rest; one launch."""
    fills = np.ascontiguousarray(arg.fill, dtype=out.dtype.numpy_dtype).reshape(-1, 1)
    window_rows(run, out, inp.data, inp.offsets, inp.shapes, np.zeros_like(inp.shapes),
                fills=np.broadcast_to(fills, (inp.batch_size, 1)))  # fmt: skip
