"""nonsilent_region: the first non-silent sample and the region's length (DALI
`nonsilent_region`, ops.md §6.7).

Short-term power at t is the mean of `x^2` over the `window_length` values ending at t; t is
non-silent when `power >= ref * 10^(cutoff_db / 10)` (`ref = reference_power`, or the largest
short-term power). The region starts `window_length - 1` before the first non-silent t
(clamped to 0) and ends after the last one; nothing loud enough gives length 0, a signal
shorter than the window `(0, n)`. An all-zero signal with the default reference gives `(0, n)`
(its reference power is 0, so every position reaches the threshold: DALI's golden output,
although ops.md says length 0). Outputs are int32 scalars `(begin, length)`.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32, int32
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _infer(call: Call) -> tuple[OutputSpec, OutputSpec]:
    inp = call.inputs[0]
    if inp.ndim != 1:
        raise call.error(f"input 0 must be 1-D; got samples of {inp.ndim} dimensions",
                         RuntimeError)  # fmt: skip
    if not (inp.dtype.is_integer or inp.dtype == float32) or inp.dtype.name == "bool":
        raise call.error(f"input 0 has dtype {inp.dtype}; expected float32 or an integer type",
                         RuntimeError)  # fmt: skip
    window, reset = int(call.window_length), int(call.reset_interval)
    if window < 1:
        raise call.error(f"argument 'window_length' must be positive; got {window}")
    if reset != -1 and (reset <= 0 or reset % window):
        raise call.error(f"argument 'reset_interval' shall be -1 or a positive multiple of "
                         f"'window_length'; got reset_interval {reset} vs window_length "
                         f"{window}", RuntimeError)  # fmt: skip
    if call.reference_power < 0:
        raise call.error(f"argument 'reference_power' has to be positive; got "
                         f"{call.reference_power}", RuntimeError)  # fmt: skip
    shapes = np.zeros((call.batch_size, 0), np.int64)
    return OutputSpec(int32, shapes, None), OutputSpec(int32, shapes.copy(), None)


schema = OpSchema(
    name="nonsilent_region",
    doc="Finds the leading and trailing silence of 1-D signals: outputs (begin, length).",
    inputs=(Input("input"),),
    args=(
        Arg("cutoff_db", "float", default=-60.0, doc="Silence threshold (dB below reference)."),
        Arg("window_length", "int", default=2048, doc="Samples averaged per short-term power."),
        Arg(
            "reference_power",
            "float",
            default=0.0,
            doc="Reference power (0: the maximum short-term power of the sample).",
        ),
        Arg(
            "reset_interval",
            "int",
            default=8192,
            doc="Samples between recomputations of the running sum (-1: never); a multiple "
            "of window_length. Sums are exact here, so it does not change the result.",
        ),
    ),
    infer=_infer,
    num_outputs=2,
)
