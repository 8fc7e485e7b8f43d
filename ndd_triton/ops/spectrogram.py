"""spectrogram: short-time Fourier power or magnitude of 1-D signals (DALI `spectrogram`,
ops.md §6.2).

Frame k starts at `k * window_step` (minus `window_length // 2` when centred, the signal then
padded by reflection or zeros); it is multiplied by the window, zero-padded to `nfft` and
transformed; bins = `nfft // 2 + 1`. Centred: `1 + n // step` frames; otherwise
`1 + (n - window_length) // step` (none when the signal is shorter than a window).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import float32
from ndd_triton.ops._audio import hann_window
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def signal_lengths(call: Call) -> np.ndarray:
    """Per-sample signal length of `(n,)`, `(n, 1)` or `(1, n)` inputs."""
    inp = call.inputs[0]
    shapes = inp.shapes
    if inp.ndim == 1:
        return shapes[:, 0].copy()
    ok = inp.ndim == 2 and bool(((shapes[:, 0] == 1) | (shapes[:, 1] == 1)).all())
    if not ok:
        raise call.error(f"input 0 must be a 1-D signal (shape (n,), (n, 1) or (1, n)); got "
                         f"samples of {inp.ndim} dimensions", RuntimeError)  # fmt: skip
    return shapes.max(axis=1)


def _window(call: Call, length: int) -> np.ndarray:
    if call.window_fn is None:
        return hann_window(length)
    window = np.asarray(call.window_fn, dtype=np.float32)
    if len(window) != length:
        raise call.error(f"argument 'window_fn' has {len(window)} values; expected "
                         f"window_length = {length}", RuntimeError)  # fmt: skip
    return window


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if inp.dtype != float32:
        raise call.error(f"input 0 has dtype {inp.dtype}; expected float32", RuntimeError)
    length, step = int(call.window_length), int(call.window_step)
    if length < 1 or step < 1:
        raise call.error(f"arguments 'window_length' and 'window_step' must be positive; got "
                         f"{length} and {step}", RuntimeError)  # fmt: skip
    nfft = length if call.nfft is None else int(call.nfft)
    if nfft < length:
        raise call.error(f"argument 'nfft' ({nfft}) must be at least window_length ({length})",
                         RuntimeError)  # fmt: skip
    if call.power not in (1, 2):
        raise call.error(f"argument 'power' must be 1 or 2; got {call.power}", RuntimeError)
    if call.layout not in ("ft", "tf"):
        raise call.error(f"argument 'layout' must be 'ft' or 'tf'; got {call.layout!r}")
    n = signal_lengths(call)
    if call.center_windows:
        frames = 1 + n // step
    else:
        frames = np.where(n >= length, 1 + (n - length) // step, 0)
    bins = np.full_like(frames, nfft // 2 + 1)
    call.derive("nfft_value", nfft)
    call.derive("bins_first", call.layout == "ft")  # `arg.layout` in kernels is the sample's
    call.derive("window", _window(call, length))
    call.derive("signal_length", n, per_sample=True)
    call.derive("frames", frames, per_sample=True)
    shapes = np.stack([bins, frames] if call.layout == "ft" else [frames, bins], axis=1)
    return OutputSpec(float32, shapes.astype(np.int64), call.layout)


schema = OpSchema(
    name="spectrogram",
    doc="Computes the spectrogram (STFT power or magnitude) of 1-D float32 signals.",
    inputs=(Input("input"),),
    args=(
        Arg("nfft", "int", doc="FFT size (>= window_length; default window_length)."),
        Arg("window_length", "int", default=512, doc="Samples per frame."),
        Arg("window_step", "int", default=256, doc="Samples between frame starts."),
        Arg(
            "window_fn",
            "float",
            vector=True,
            doc="Window of window_length values (default: Hann, `0.5 - 0.5 cos(2 pi (i+0.5)/L)`).",
        ),
        Arg("power", "int", default=2, doc="2: squared magnitude, 1: magnitude."),
        Arg("center_windows", "bool", default=True, doc="Centre frame k at `k * window_step`."),
        Arg(
            "reflect_padding",
            "bool",
            default=True,
            doc="Pad centred frames by reflection (True) or zeros (False).",
        ),
        Arg("layout", "layout", default="ft", doc="`ft` (bins, frames) or `tf` (frames, bins)."),
    ),
    infer=_infer,
)
