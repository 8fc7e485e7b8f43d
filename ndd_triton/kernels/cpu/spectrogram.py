"""spectrogram on the CPU: strided frames of the padded signal, windowed, `numpy.fft.rfft`."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import spectrogram
from ndd_triton.ops.schema import SampleArgs


def frame_positions(n: int, frames: int, step: int, length: int, center: bool, reflect: bool
                    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`[frames, length]` source indices into the signal and a validity mask (False = zero)."""
    start = np.arange(frames, dtype=np.int64) * step - (length // 2 if center else 0)
    pos = start[:, None] + np.arange(length, dtype=np.int64)[None, :]
    if center and reflect and n > 1:
        period = 2 * (n - 1)  # np.pad(mode="reflect"), repeated for pads longer than n
        pos = np.abs(pos) % period
        pos = np.where(pos >= n, period - pos, pos)
    elif center and reflect:
        pos = np.zeros_like(pos)
    valid = (pos >= 0) & (pos < n)
    return np.clip(pos, 0, max(n - 1, 0)), valid


@register(spectrogram.schema, "cpu")
def spectrogram_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Frames -> window -> rfft(nfft) -> power or magnitude, written as `ft` or `tf`."""
    x = inp.reshape(-1)
    frames = int(arg.frames)
    if not frames:
        return
    window = arg.window
    pos, valid = frame_positions(x.size, frames, int(arg.window_step), len(window),
                                 bool(arg.center_windows), bool(arg.reflect_padding))  # fmt: skip
    data = np.where(valid, x[pos] if x.size else 0.0, 0.0) * window
    spectrum = np.fft.rfft(data, n=int(arg.nfft_value), axis=1)
    power = spectrum.real**2 + spectrum.imag**2
    if arg.power == 1:
        power = np.sqrt(power)
    out[...] = power.T if arg.bins_first else power
