"""Per-sample affine colour transform on the CPU: `out = M · pixel + offset`, then conversion.

Shared by the seven colour-adjustment ops and color_space_conversion. Math is float32, as in
DALI; integer outputs round half away from zero and saturate (spec ops.md §0.4).
"""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.ops import color
from ndd_triton.schema import SampleArgs


def store_rounded(out: np.ndarray, values: torch.Tensor, ties_to_even: bool = False,
                  offset: torch.Tensor | None = None, finite: bool = False) -> None:
    """Write float32 `values` (+ `offset`) into `out`: round (half away or to even), saturate.

    `values` is scratch and gets modified. NaN becomes 0 (`finite=True` skips that pass when the
    caller knows there is none). The float -> int copy truncates toward zero, so adding `±0.5`
    first rounds half away from zero; for unsigned outputs offset, +0.5 and the clamp fuse.
    """
    dst = torch.from_numpy(out.reshape(-1))
    if out.dtype.kind == "f":
        if offset is not None:
            values.add_(offset)
        dst.copy_(values.reshape(-1))
        return
    info = np.iinfo(out.dtype)
    if not finite:
        if offset is not None:
            values.add_(offset)
            offset = None
        values.nan_to_num_(0.0)
    if info.min == 0 and info.bits < 32 and not ties_to_even:
        values.add_(offset + 0.5 if offset is not None else 0.5)
        values.clamp_(0.5, info.max + 0.5)
        dst.copy_(values.reshape(-1))
        return
    if offset is not None:
        values.add_(offset)
    values = values.reshape(-1)
    if ties_to_even:
        values.round_()
    if info.bits >= 32:  # float32 cannot hold INT32_MAX exactly: saturate in float64
        values = values.double()
    values.clamp_(float(info.min), float(info.max))
    if not ties_to_even:
        if info.min == 0:
            values.add_(0.5)
        else:
            values.add_(torch.copysign(torch.tensor(0.5, dtype=values.dtype), values))
        if info.bits < 32:
            values.clamp_(float(info.min), float(info.max))
    dst.copy_(values)


def apply_affine(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray, offset: np.ndarray) -> None:
    """`out[..., k] = Σ_c matrix[k, c] · inp[..., c] + offset[k]`; 1x1 matrices act elementwise."""
    cout, cin = matrix.shape
    src = torch.from_numpy(inp)
    finite = inp.dtype.kind in "iu"
    if cin == 1 and cout == 1:
        values = src.reshape(-1).to(torch.float32, copy=True).mul_(float(matrix[0, 0]))
        store_rounded(out, values, offset=torch.tensor(float(offset[0])), finite=finite)
        return
    pixels = src.reshape(-1, cin).to(torch.float32)
    values = pixels @ torch.from_numpy(np.ascontiguousarray(matrix.T, np.float32))
    bias = None if not offset.any() else torch.from_numpy(np.ascontiguousarray(offset, np.float32))
    store_rounded(out, values, offset=bias, finite=finite)


def _color_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Apply this sample's colour matrix and offset."""
    apply_affine(out, inp, arg.color_matrix, arg.color_offset)


for _schema in color.schemas:
    register(_schema, "cpu")(_color_cpu)
