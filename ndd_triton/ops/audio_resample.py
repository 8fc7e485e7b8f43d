"""audio_resample: windowed-sinc resampling along the first axis (DALI `audio_resample`,
ops.md §6.8).

Input `(n,)` or `(n, channels)`. Exactly one of `scale`, `in_rate` + `out_rate` or
`out_length` (all per sample); output length `ceil(n * scale)`. Output j is taken at input
position `j * in / out` from the `2 * lobes` nearest inputs weighed by a Hann-windowed sinc
(lobes from `quality`: 0 -> 3, 50 -> 16, 100 -> 64), read from a `lobes * 64 + 1` point table
with linear interpolation as DALI does. Converting types rescales: integers are read as
fractions of their range (signed: `x / max`, unsigned: `2 x / max - 1`) and written back the
same way (signed round half away, unsigned truncate, both saturating).
"""

from __future__ import annotations

import math

import numpy as np

from ndd_triton.core.dtype import DType, float32, int8, int16, int32, uint8, uint16, uint32
from ndd_triton.ops._audio import resample_lobes
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

DTYPES = (int8, uint8, int16, uint16, int32, uint32, float32)


def _supported(call: Call, dtype: DType, what: str) -> None:
    if dtype not in DTYPES:
        names = ", ".join(str(d) for d in DTYPES)
        raise call.error(f"{what} has dtype {dtype}; supported types are {names}", RuntimeError)


def _ratios(call: Call, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample output lengths and input positions per output step."""
    given = [name for name in ("scale", "in_rate", "out_rate", "out_length")
             if call.values.get(name) is not None]  # fmt: skip
    rates = {"in_rate", "out_rate"} & set(given)
    if len(rates) == 1:
        raise call.error("arguments 'in_rate' and 'out_rate' must be specified together",
                         RuntimeError)  # fmt: skip
    kinds = len(set(given) - rates) + (1 if rates else 0)
    if kinds == 0:
        raise call.error(
            "No resampling factor specified! Please supply either the scale, the "
            "output length or the input and output sampling rates.",
            RuntimeError,
        )
    if kinds > 1:
        raise call.error("The sampling rates, 'scale' and 'out_length' cannot be used together.",
                         RuntimeError)  # fmt: skip
    n = lengths.astype(np.float64)
    if "out_length" in given:
        out = np.asarray(call.out_length, dtype=np.int64).reshape(-1)
        bad = np.nonzero(out < 0)[0]
        if len(bad):
            raise call.error(f"argument 'out_length' sample {bad[0]}: must be non-negative; got "
                             f"{out[bad[0]]}", RuntimeError)  # fmt: skip
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(out > 0, n / np.maximum(out, 1), 0.0)
        return out, step
    if rates:
        in_rate = np.asarray(call.in_rate, dtype=np.float64).reshape(-1)
        out_rate = np.asarray(call.out_rate, dtype=np.float64).reshape(-1)
        bad = np.nonzero((in_rate <= 0) | (out_rate <= 0))[0]
        if len(bad):
            raise call.error(
                f"sample {bad[0]}: sampling rates must be positive; got in_rate "
                f"{in_rate[bad[0]]}, out_rate {out_rate[bad[0]]}",
                RuntimeError,
            )
        scale = out_rate / in_rate
        step = in_rate / out_rate
    else:
        scale = np.asarray(call.scale, dtype=np.float64).reshape(-1)
        bad = np.nonzero(scale < 0)[0]
        if len(bad):
            raise call.error(f"The scaling factor must be non-negative. Got scale == "
                             f"{scale[bad[0]]:g} for sample {bad[0]}", RuntimeError)  # fmt: skip
        with np.errstate(divide="ignore"):
            step = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    out = np.array([math.ceil(a * b) for a, b in zip(n.tolist(), scale.tolist(), strict=True)],
                   dtype=np.int64)  # fmt: skip
    return out, step


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.ndim not in (1, 2):
        raise call.error("input 0: audio resampling supports only time series data, with an "
                         "optional innermost channel dimension", RuntimeError)  # fmt: skip
    _supported(call, inp.dtype, "input 0")
    dtype = inp.dtype if call.dtype is None else call.dtype
    _supported(call, dtype, "argument 'dtype'")
    if not 0 <= call.quality <= 100:
        raise call.error(f"argument 'quality' out of range: {call.quality:g}; valid range is "
                         "[0, 100]", RuntimeError)  # fmt: skip
    out_len, step = _ratios(call, inp.shapes[:, 0])
    call.derive("out_len", out_len, per_sample=True)
    call.derive("step", step, per_sample=True)
    call.derive("lobes", resample_lobes(float(call.quality)))
    shapes = inp.shapes.copy()
    shapes[:, 0] = out_len
    return OutputSpec(dtype, shapes, inp.layout)


schema = OpSchema(
    name="audio_resample",
    doc="Resamples signals along their first axis with a Hann-windowed sinc filter.",
    inputs=(Input("input"),),
    args=(
        Arg("scale", "float", per_sample=True, doc="Output/input sampling-rate ratio."),
        Arg("in_rate", "float", per_sample=True, doc="Input sampling rate (with out_rate)."),
        Arg("out_rate", "float", per_sample=True, doc="Output sampling rate (with in_rate)."),
        Arg("out_length", "int", per_sample=True, doc="Output length in samples."),
        Arg("quality", "float", default=50.0, doc="0..100: sinc lobes 3 (0), 16 (50), 64 (100)."),
        Arg("dtype", "dtype", doc="Output type (default: the input's); converting rescales."),
    ),
    infer=_infer,
)
