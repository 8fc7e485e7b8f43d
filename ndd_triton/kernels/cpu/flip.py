"""flip on the CPU: a NumPy view with negative strides, copied into the output."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import flip
from ndd_triton.schema import SampleArgs


@register(flip.schema, "cpu", dense=True)
def flip_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Copy `inp` into `out`, reversing the W/H/D axes the sample asks for.

    Also called once on a dense `(N, ...)` uniform batch (layout "N..."): the axis lookup by
    layout letter handles the leading batch axis.
    """
    wanted = {"W": arg.horizontal, "H": arg.vertical, "D": arg.depthwise}
    axes = [i for i, name in enumerate(arg.layout) if wanted.get(name)]
    out[...] = np.flip(inp, axis=axes) if axes else inp
