"""zeros, ones, full and the `_like` forms on the GPU: one broadcasting gather launch each.

`zeros`/`ones` read a one-element host array (uploaded with the tables) with all strides 0;
`full`/`full_like` read the fill sample with broadcast strides (0 on repeated axes), converting
to the output dtype with DALI's rules where it differs.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import gather
from ndd_triton.ops import constants
from ndd_triton.ops.schema import Call


def _fill_constant(run: GpuRun, out: GpuBatch, value: int) -> None:
    n, ndim = out.shapes.shape
    src = np.full(1, value, dtype=out.dtype.numpy_dtype)
    gather(run, out, src, np.zeros(n, np.int64), out.dtype, np.zeros((n, ndim), np.int64))


@register(constants.zeros, "gpu")
@register(constants.zeros_like, "gpu")
def zeros_gpu(run: GpuRun, out: GpuBatch, *rest: object) -> None:
    """Fill the batch with 0 in one launch."""
    _fill_constant(run, out, 0)


@register(constants.ones, "gpu")
@register(constants.ones_like, "gpu")
def ones_gpu(run: GpuRun, out: GpuBatch, *rest: object) -> None:
    """Fill the batch with 1 in one launch."""
    _fill_constant(run, out, 1)


@register(constants.full, "gpu")
def full_gpu(run: GpuRun, out: GpuBatch, fill: GpuBatch, arg: Call) -> None:
    """Broadcast every fill sample in one launch."""
    gather(run, out, fill.data, fill.offsets, fill.dtype, arg.fill_strides)


@register(constants.full_like, "gpu")
def full_like_gpu(run: GpuRun, out: GpuBatch, like: GpuBatch, fill: GpuBatch, arg: Call) -> None:
    """Broadcast and convert every fill sample in one launch."""
    gather(run, out, fill.data, fill.offsets, fill.dtype, arg.fill_strides)
