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


def store_rounded(out: np.ndarray, values: torch.Tensor, ties_to_even: bool = False) -> None:
    """Write float32 `values` into `out`: round (half away, or ties to even) and saturate."""
    dst = torch.from_numpy(out.reshape(-1))
    values = values.reshape(-1)
    if out.dtype.kind == "f":
        dst.copy_(values)
        return
    info = np.iinfo(out.dtype)
    values = torch.nan_to_num(values, nan=0.0)
    if ties_to_even:
        values = values.round()
    elif info.min == 0:
        values = values.clamp(0.0, float(info.max)).add_(0.5).floor_()
    else:
        values = torch.copysign(values.abs().add_(0.5).floor_(), values)
    # float32 cannot hold INT32_MAX exactly: clamp in float64 for the widest types
    wide = values.double() if info.bits >= 32 else values
    dst.copy_(wide.clamp(float(info.min), float(info.max)))


def apply_affine(out: np.ndarray, inp: np.ndarray, matrix: np.ndarray, offset: np.ndarray) -> None:
    """`out[..., k] = Σ_c matrix[k, c] · inp[..., c] + offset[k]`; 1x1 matrices act elementwise."""
    cout, cin = matrix.shape
    src = torch.from_numpy(inp)
    if cin == 1 and cout == 1:
        values = src.reshape(-1).to(torch.float32).mul_(float(matrix[0, 0]))
        values.add_(float(offset[0]))
    else:
        pixels = src.reshape(-1, cin).to(torch.float32)
        values = torch.addmm(torch.from_numpy(np.ascontiguousarray(offset, np.float32)), pixels,
                             torch.from_numpy(np.ascontiguousarray(matrix.T, np.float32)))
    store_rounded(out, values)


def _color_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Apply this sample's colour matrix and offset."""
    apply_affine(out, inp, arg.color_matrix, arg.color_offset)


for _schema in color.schemas:
    register(_schema, "cpu")(_color_cpu)
