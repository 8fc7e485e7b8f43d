"""sphere on the CPU: water's remap sampling with the radial map."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.water import remap_sample
from ndd_triton.ops import sphere
from ndd_triton.schema import SampleArgs


def sphere_coords(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 source coordinates `c + v * |v| / d`, `v = p - c`, `c = ((W-1)/2, (H-1)/2)`.

    `d = max((W - 1) / 2, H / 2)`: fitted to DALI 2.4's outputs (tests/golden: all pixels of
    the wide and tall cases), not the `max(W, H) / 2` of the spec.
    """
    cx, cy = np.float32((w - 1) / 2), np.float32((h - 1) / 2)
    vx = np.arange(w, dtype=np.float32)[None, :] - cx
    vy = np.arange(h, dtype=np.float32)[:, None] - cy
    scale = np.sqrt(vx * vx + vy * vy) / np.float32(max((w - 1) / 2, h / 2))
    return cx + vx * scale, cy + vy * scale


@register(sphere.schema, "cpu")
def sphere_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Radial remap; NN rounds half up."""
    sx, sy = sphere_coords(inp.shape[0], inp.shape[1])
    remap_sample(out, inp, sx, sy, arg, 0.5, 0.0)
