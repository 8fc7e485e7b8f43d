"""coord_flip on the CPU: `2 * center - c` on the flagged columns (float32)."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import coord_flip
from ndd_triton.ops.schema import SampleArgs

_TWO = np.float32(2)


@register(coord_flip.schema, "cpu")
def coord_flip_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Columns come mapped to flags and centres by infer (the layout is resolved there)."""
    flip = np.asarray(arg.column_flip) != 0
    out[...] = np.where(flip, _TWO * np.asarray(arg.column_center, np.float32) - inp, inp)
