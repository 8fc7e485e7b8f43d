"""nonsilent_region on the CPU: prefix sums of x^2 (float64) for every window at once."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import nonsilent_region
from ndd_triton.ops.schema import SampleArgs


def region(x: np.ndarray, cutoff_db: float, window: int, reference_power: float
           ) -> tuple[int, int]:  # fmt: skip
    """(begin, length) of the non-silent part of the 1-D signal `x`."""
    n = x.size
    if n < window:
        return 0, n
    prefix = np.concatenate([[0.0], np.cumsum(np.square(x.astype(np.float64)))])
    ends = np.arange(1, n + 1)
    power = (prefix[ends] - prefix[np.maximum(ends - window, 0)]) / window
    reference = reference_power if reference_power > 0 else float(power.max())
    loud = np.flatnonzero(power >= reference * 10.0 ** (cutoff_db / 10.0))
    if not loud.size:
        return 0, 0
    begin = max(int(loud[0]) - window + 1, 0)
    return begin, int(loud[-1]) + 1 - begin


@register(nonsilent_region.schema, "cpu")
def nonsilent_region_cpu(out: tuple[np.ndarray, np.ndarray], inp: np.ndarray,
                         arg: SampleArgs) -> None:  # fmt: skip
    """Writes begin and length (int32 scalars)."""
    begin, length = region(inp, float(arg.cutoff_db), int(arg.window_length),
                           float(arg.reference_power))  # fmt: skip
    out[0][...] = begin
    out[1][...] = length
