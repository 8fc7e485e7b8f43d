"""decoders.audio: WAV/FLAC/OGG bytes -> `(samples, sample_rate)` (DALI `decoders.audio`,
core.md §17.1).

Samples are `(frames, channels)` (`(frames,)` with `downmix=True`: the channel mean); float32
is libsndfile's scaling (16-bit PCM / 32768), int16/int32 the file's full-scale values.
`sample_rate > 0` resamples (windowed sinc as `audio_resample`, `quality` likewise) and is
reported as the rate; otherwise the file's rate is. Shapes depend on the data (DALI returns
the frames a truncated file holds), so decoding happens in run; a sample that cannot be
decoded raises RuntimeError naming the sample and, for reader data, its source file.
CPU only, as in DALI.
"""

from __future__ import annotations

from ndd_triton.core.dtype import float32, int16, int32
from ndd_triton.ops._audio import resample_lobes
from ndd_triton.ops.decoders import encoded_samples
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

DTYPES = (int16, int32, float32)


def _infer(call: Call) -> tuple[OutputSpec, OutputSpec]:
    samples = encoded_samples(call, call.inputs[0])
    if call.dtype not in DTYPES:
        raise call.error(f"argument 'dtype': unsupported output type {call.dtype}; expected "
                         "int16, int32 or float32", RuntimeError)  # fmt: skip
    call.derive("encoded", samples, per_sample=True)
    call.derive("lobes", resample_lobes(min(max(float(call.quality), 0.0), 100.0)))
    return (OutputSpec(call.dtype, None, None, ndim=1 if call.downmix else 2),
            OutputSpec(float32, None, None, ndim=0))  # fmt: skip


schema = OpSchema(
    name="decoders.audio",
    doc="Decodes WAV, FLAC or OGG files into samples and their sampling rate.",
    inputs=(Input("input", host_values=True, doc="Encoded audio files (1-D uint8 samples)."),),
    args=(
        Arg("downmix", "bool", default=False, doc="Average the channels into one 1-D signal."),
        Arg("dtype", "dtype", default=float32, doc="Output type: float32, int16 or int32."),
        Arg("quality", "float", default=50.0, doc="Resampling quality (as audio_resample)."),
        Arg(
            "sample_rate",
            "float",
            default=0.0,
            per_sample=True,
            doc="Resample to this rate when > 0 (and report it as the rate).",
        ),
    ),
    infer=_infer,
    devices=("cpu",),
    module="decoders_audio",
    cpu_inputs=True,
    num_outputs=2,
)
