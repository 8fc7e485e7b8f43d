"""spectrogram on the CPU: strided frames of the padded signal, windowed, `torch.fft.rfft`."""

from __future__ import annotations

import numpy as np
import torch

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


def _frames_view(x: torch.Tensor, frames: int, step: int, length: int, center: bool,
                 reflect: bool) -> torch.Tensor | None:  # fmt: skip
    """`[frames, length]` strided view of the (padded) signal, or None when the signal is too
    short for torch's reflect padding (then `frame_positions` gathers)."""
    n = x.numel()
    if center:
        left, right = length // 2, length - length // 2
        if reflect and n <= right:
            return None
        mode = "reflect" if reflect else "constant"
        x = torch.nn.functional.pad(x[None, None], (left, right), mode=mode)[0, 0]
    return x.unfold(0, length, step)[:frames]


@register(spectrogram.schema, "cpu")
def spectrogram_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Frames -> window -> rfft(nfft) -> power or magnitude, written as `ft` or `tf`.

    torch's single-threaded FFT on the pool threads (NumPy's pocketfft is ~2x slower here and
    NumPy's BLAS threads oversubscribe the pool); frames are a strided view of the padded
    signal, not a gathered copy.
    """
    frames = int(arg.frames)
    if not frames:
        return
    window = torch.from_numpy(arg.window)
    length, step = len(arg.window), int(arg.window_step)
    x = torch.from_numpy(np.ascontiguousarray(inp.reshape(-1)))
    view = _frames_view(x, frames, step, length, bool(arg.center_windows),
                        bool(arg.reflect_padding))  # fmt: skip
    if view is None:
        pos, valid = frame_positions(x.numel(), frames, step, length, True, True)
        data = torch.from_numpy(np.where(valid, inp.reshape(-1)[pos], np.float32(0)))
        view = data
    spectrum = torch.fft.rfft(view * window, n=int(arg.nfft_value), dim=1)
    power = spectrum.real.square() + spectrum.imag.square()
    if arg.power == 1:
        power = power.sqrt()
    torch.from_numpy(out).copy_(power.T if arg.bins_first else power)
