"""mel_filter_bank: triangular mel filters along the frequency axis (DALI `mel_filter_bank`,
ops.md §6.4).

The `f` axis comes from the layout (without one: `f`, `ft` or `*ft` by rank) and is replaced
by `nfilter` bands; FFT bin k stands for `k * sample_rate / nfft` with `nfft = 2 (bins - 1)`.
The filters are librosa's `mel(htk=..., norm="slaney" if normalize else None)`.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32
from ndd_triton.ops._audio import axis_split, mel_matrix
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def frequency_axis(layout: str | None, ndim: int) -> int:
    """Index of the `f` axis: from the layout, else `f` (1-D) or the second to last axis."""
    if layout and "f" in layout:
        return layout.index("f")
    return 0 if ndim == 1 else ndim - 2


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != float32:
        raise call.error(f"input 0 has dtype {inp.dtype}; expected float32", RuntimeError)
    if call.mel_formula not in ("slaney", "htk"):
        raise call.error(f"argument 'mel_formula' must be 'slaney' or 'htk'; got "
                         f"{call.mel_formula!r}", RuntimeError)  # fmt: skip
    if call.nfilter < 1:
        raise call.error(f"argument 'nfilter' must be positive; got {call.nfilter}", RuntimeError)
    if call.sample_rate <= 0:
        raise call.error(f"argument 'sample_rate' must be positive; got {call.sample_rate}",
                         RuntimeError)  # fmt: skip
    high = call.freq_high if call.freq_high > 0 else call.sample_rate / 2
    if not 0 <= call.freq_low < high:
        raise call.error(f"arguments 'freq_low' ({call.freq_low}) and 'freq_high' ({high}) must "
                         "satisfy 0 <= freq_low < freq_high", RuntimeError)  # fmt: skip
    if inp.ndim < 1:
        raise call.error("input 0 must have a frequency axis (got 0-D samples)", RuntimeError)
    axis = frequency_axis(inp.layout, inp.ndim)
    split = axis_split(inp.shapes, axis)
    matrices = {int(nb): mel_matrix(int(nb), int(call.nfilter), float(call.sample_rate),
                                    float(call.freq_low), float(call.freq_high),
                                    call.mel_formula == "slaney", bool(call.normalize))
                for nb in np.unique(split[:, 1])}  # fmt: skip
    call.derive("axis_split", split, per_sample=True)
    call.derive("matrices", matrices)
    shapes = inp.shapes.copy()
    shapes[:, axis] = call.nfilter
    return OutputSpec(float32, shapes, inp.layout)


schema = OpSchema(
    name="mel_filter_bank",
    doc="Converts a spectrogram to mel bands with triangular filters along the `f` axis.",
    inputs=(Input("input"),),
    args=(
        Arg("nfilter", "int", default=128, doc="Number of mel bands."),
        Arg("sample_rate", "float", default=44100.0, doc="Sampling rate of the signal (Hz)."),
        Arg("freq_low", "float", default=0.0, doc="Lowest frequency (Hz)."),
        Arg("freq_high", "float", default=0.0, doc="Highest frequency (Hz; 0: sample_rate / 2)."),
        Arg("mel_formula", "str", default="slaney", doc="`slaney` (librosa) or `htk`."),
        Arg(
            "normalize",
            "bool",
            default=True,
            doc="Scale each triangle to unit area (`2 / band width`); False: peak 1.",
        ),
    ),
    infer=_infer,
)
