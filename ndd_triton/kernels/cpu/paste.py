"""paste on the CPU: fill the canvas, copy the image at its anchor."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import paste
from ndd_triton.ops.schema import SampleArgs


@register(paste.schema, "cpu")
def paste_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """`out` = fill colour, with `inp` at `arg.paste_anchor` (y, x)."""
    y0, x0 = (int(v) for v in arg.paste_anchor)
    out[...] = arg.paste_fill
    out[y0 : y0 + inp.shape[0], x0 : x0 + inp.shape[1]] = inp
