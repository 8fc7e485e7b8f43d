"""grid_mask on the CPU: one float32 mask of the grid cells, applied to all channels."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import grid_mask
from ndd_triton.ops.schema import SampleArgs


def cell_mask(h: int, w: int, params: np.ndarray) -> np.ndarray:
    """`[H, W]` bool: True where the pixel lies in a zeroed square (float32 math)."""
    a, b, tx, ty, ratio = (np.float32(v) for v in params)
    x = np.arange(w, dtype=np.float32)[None, :]
    y = np.arange(h, dtype=np.float32)[:, None]
    u = a * x - b * y - tx
    v = b * x + a * y - ty
    return ((u - np.floor(u)) < ratio) & ((v - np.floor(v)) < ratio)  # type: ignore[no-any-return]


@register(grid_mask.schema, "cpu")
def grid_mask_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """`out` = `inp` with the grid cells set to 0."""
    out[...] = inp
    out[cell_mask(inp.shape[0], inp.shape[1], arg.grid_params)] = 0
