"""cat, stack on the CPU: `np.concatenate` / `np.stack` straight into the output sample."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import concat
from ndd_triton.ops.schema import SampleArgs


@register(concat.cat, "cpu")
def cat_cpu(out: np.ndarray, *rest: np.ndarray | SampleArgs) -> None:
    """Concatenate one sample of every input (the last positional is the sample's args)."""
    *inputs, arg = rest
    np.concatenate(inputs, axis=arg.resolved_axis, out=out)  # type: ignore[union-attr]


@register(concat.stack, "cpu")
def stack_cpu(out: np.ndarray, *rest: np.ndarray | SampleArgs) -> None:
    """Stack one sample of every input along the new axis."""
    *inputs, arg = rest
    np.stack(inputs, axis=arg.resolved_axis, out=out)  # type: ignore[union-attr]
