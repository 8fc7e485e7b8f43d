"""slice on the GPU: one row-tiled launch for the whole ragged batch (`_window_rows`).

Each output axis reads the source at `anchor + coord`; outside the input the out-of-bounds
policy (constexpr) decides: pad reads the fill value of the element's channel, edge clamps,
wrap takes the modulus, reflect_1001 / reflect_101 fold with periods 2E / 2E-2. Values are
converted to the output dtype with DALI's rounding rules. Rows of the contiguous innermost run
are copied per program; only border columns of the folding policies divide.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu import _window_rows as rows
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import convert_meta
from ndd_triton.ops import slice as slice_op
from ndd_triton.ops.schema import Call

# slice's policy codes -> the row kernel's (windows of "error"/"trim_to_shape" stay inside)
_POLICY = {slice_op.INSIDE: rows.PAD, slice_op.PAD: rows.PAD, slice_op.EDGE: rows.EDGE,
           slice_op.REFLECT_1001: rows.REFLECT_1001, slice_op.REFLECT_101: rows.REFLECT_101,
           slice_op.WRAP: rows.WRAP}  # fmt: skip


@register(slice_op.schema, "gpu", replay=True)
def slice_gpu(run: GpuRun, out: GpuBatch, data: GpuBatch, anchor: object, shape: object,
              arg: Call) -> None:  # fmt: skip
    """Gather every sample's window in one launch."""
    fills = np.ascontiguousarray(arg.fill, dtype=out.dtype.numpy_dtype).reshape(1, -1)
    conv = convert_meta(data.dtype, out.dtype)
    conv["CONV"] = rows.CONV_DALI if conv.pop("CONVERT") else rows.CONV_NONE
    fills = np.broadcast_to(fills, (data.batch_size, fills.shape[1]))
    rows.window_rows(run, out, data.data, data.offsets, data.shapes, arg.anchor_full,
                     policy=_POLICY[arg.policy_code], fills=fills,
                     channel_axis=arg.channel_axis, conv=conv)  # fmt: skip
