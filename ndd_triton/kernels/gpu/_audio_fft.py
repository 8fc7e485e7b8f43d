"""Framing and power kernels around torch.fft (cuFFT) for spectrogram and power_spectrum.

1. `_frames_kernel` gathers every frame of the batch into one `[frames, nfft]` float32 buffer:
   row r reads `length` values of a line of its sample (`base + pos * stride`, positions from
   `start`, reflected into the signal or zero outside it), multiplied by the window, and zero
   pads to `nfft`. One launch, tiles `(row, first column)`.
2. `torch.fft.rfft` over the rows (one batched cuFFT call: a library beats a hand-rolled FFT).
3. `_power_kernel` writes `re^2 + im^2` (or its square root) of row r's bins to
   `out_base[r] + bin * bin_stride`: `ft` and `tf` spectrograms and any power_spectrum axis
   are just different (base, stride) tables. One launch.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._tables import GpuRun

F_BASE: tl.constexpr = tl.constexpr(0)  # absolute element offset of the line's first value
F_START: tl.constexpr = tl.constexpr(1)  # position of the frame's first value (may be < 0)
F_LEN: tl.constexpr = tl.constexpr(2)  # values in the line
F_STRIDE: tl.constexpr = tl.constexpr(3)
F_OUT: tl.constexpr = tl.constexpr(4)  # output element offset of bin 0
F_BIN_STRIDE: tl.constexpr = tl.constexpr(5)
NCOL: tl.constexpr = tl.constexpr(6)


@triton.jit
def _frames_kernel(src, frames, rows, window, nfft, length, BLOCK: tl.constexpr,
                   REFLECT: tl.constexpr):  # fmt: skip
    """frames[r, i] = window[i] * line[start + i] (0 outside the line, or reflected)."""
    r = tl.program_id(0)
    first = tl.program_id(1) * BLOCK
    row = rows + r.to(tl.int64) * NCOL
    start = tl.load(row + F_START)
    size = tl.load(row + F_LEN)
    i = first + tl.arange(0, BLOCK)
    pos = start + i
    if REFLECT:
        period = tl.maximum(2 * (size - 1), 1)
        pos = tl.abs(pos) % period
        pos = tl.where(pos >= size, period - pos, pos)
    ok = (i < length) & (pos >= 0) & (pos < size)
    x = tl.load(src + tl.load(row + F_BASE) + pos * tl.load(row + F_STRIDE), mask=ok, other=0.0)
    w = tl.load(window + i, mask=i < length, other=0.0)
    tl.store(frames + r.to(tl.int64) * nfft + i, x * w, mask=i < nfft)


@triton.jit
def _power_kernel(spectrum, dst, rows, bins, BLOCK: tl.constexpr, MAGNITUDE: tl.constexpr):
    """dst[out_base + b * bin_stride] = |X[r, b]|^2 (or |X[r, b]|) for the bins of row r."""
    r = tl.program_id(0)
    b = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = b < bins
    row = rows + r.to(tl.int64) * NCOL
    pair = spectrum + (r.to(tl.int64) * bins + b) * 2
    re = tl.load(pair, mask=mask, other=0.0)
    im = tl.load(pair + 1, mask=mask, other=0.0)
    p = re * re + im * im
    if MAGNITUDE:
        p = tl.sqrt(p)
    tl.store(dst + tl.load(row + F_OUT) + b * tl.load(row + F_BIN_STRIDE), p, mask=mask)


def frame_power(run: GpuRun, src: torch.Tensor, dst: torch.Tensor, rows: np.ndarray,
                window: np.ndarray, nfft: int, reflect: bool, magnitude: bool) -> None:  # fmt: skip
    """Frames (`rows`: `[R, NCOL]` int64) -> rfft(nfft) -> power into `dst`."""
    count = len(rows)
    if not count:
        return
    frames = run.empty(count * nfft, torch.float32)
    # the frame table (read by both launches) and the window in one upload
    rows_dev, window_dev = run.upload(rows, np.ascontiguousarray(window, dtype=np.float32))
    block = min(1 << (nfft - 1).bit_length(), 1024)
    run.launch(_frames_kernel, (count, -(-nfft // block)), src, frames, rows_dev, window_dev,
               nfft, len(window), BLOCK=block, REFLECT=reflect)  # fmt: skip
    spectrum = torch.view_as_real(torch.fft.rfft(frames.view(count, nfft), dim=1)).contiguous()
    bins = nfft // 2 + 1
    block = min(1 << (bins - 1).bit_length(), 1024)
    run.launch(_power_kernel, (count, -(-bins // block)), spectrum.view(-1), dst, rows_dev, bins,
               BLOCK=block, MAGNITUDE=magnitude)  # fmt: skip
