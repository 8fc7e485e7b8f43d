"""erase on the CPU: copy the sample, then fill each region with a slice assignment."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import erase
from ndd_triton.ops.schema import SampleArgs


@register(erase.schema, "cpu")
def erase_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """`out` = `inp` with every region of `arg.erase_regions` set to the fill."""
    out[...] = inp
    fill = np.asarray(arg.erase_fill)
    if fill.size > 1:  # per channel: broadcast along the channel axis
        shape = [1] * out.ndim
        shape[arg.erase_channel_axis] = fill.size
        fill = fill.reshape(shape)
    else:
        fill = fill.reshape(())
    ch = arg.erase_channel_axis
    for region in np.asarray(arg.erase_regions):
        box = tuple(slice(int(s), int(e)) for s, e in region)
        # a region may also cut the channel axis: take the matching per-channel values
        out[box] = (
            fill
            if fill.ndim == 0
            else fill[tuple(box[k] if k == ch else slice(None) for k in range(out.ndim))]
        )
