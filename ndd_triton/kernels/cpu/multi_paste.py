"""multi_paste on the CPU: zero the canvases, then copy the regions in table order."""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import multi_paste
from ndd_triton.ops.schema import Call


@register(multi_paste.schema, "cpu", batched=True)
def multi_paste_cpu(call: Call, outs: list[list[np.ndarray]], ins: list[list[Any]]) -> None:
    """Whole batch: a region may come from any input sample (in_ids)."""
    canvases = outs[0]
    for canvas in canvases:
        canvas[...] = 0
    for i, k, j, iy, ix, h, w, oy, ox in np.asarray(call.paste_regions).tolist():
        src = ins[k][j][iy : iy + h, ix : ix + w]
        dst = canvases[i][oy : oy + h, ox : ox + w]
        if src.dtype == dst.dtype:
            dst[...] = src
        else:
            convert_numpy(src, dst.dtype, out=dst)
