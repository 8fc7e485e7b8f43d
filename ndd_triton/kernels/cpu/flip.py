"""flip on the CPU: a NumPy view with negative strides, copied into the output."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import flip
from ndd_triton.schema import SampleArgs


@register(flip.schema, "cpu")
def flip_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Copy `inp` into `out`, reversing the W/H/D axes the sample asks for."""
    wanted = {"W": arg.horizontal, "H": arg.vertical, "D": arg.depthwise}
    axes = [i for i, name in enumerate(arg.layout) if wanted.get(name)]
    out[...] = np.flip(inp, axis=axes) if axes else inp
