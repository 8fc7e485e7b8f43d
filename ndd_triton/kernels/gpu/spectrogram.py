"""spectrogram on the GPU: Triton framing + window, torch.fft.rfft, Triton power (`_audio_fft`).

The frame table (one row per frame of the batch) is built with NumPy over the `[N]` arrays.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._audio_fft import frame_power
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import spectrogram
from ndd_triton.ops.schema import Call


@register(spectrogram.schema, "gpu")
def spectrogram_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """All frames of the batch in one framing launch, one rfft, one power launch."""
    frames = np.asarray(arg.frames, dtype=np.int64)
    n = np.asarray(arg.signal_length, dtype=np.int64)
    total = int(frames.sum())
    sample = np.repeat(np.arange(len(frames)), frames)
    k = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(frames) - frames, frames)
    length, step = len(arg.window), int(arg.window_step)
    start = k * step - (length // 2 if arg.center_windows else 0)
    bins = int(arg.nfft_value) // 2 + 1
    if arg.bins_first:  # (bins, frames): bin b of frame k at b * frames + k
        out_pos, bin_stride = out.offsets[sample] + k, frames[sample]
    else:
        out_pos, bin_stride = out.offsets[sample] + k * bins, np.ones_like(k)
    rows = np.stack([inp.offsets[sample], start, n[sample], np.ones_like(k), out_pos, bin_stride],
                    axis=1).astype(np.int64)  # fmt: skip
    frame_power(run, inp.data, out.data, rows, arg.window, int(arg.nfft_value),
                bool(arg.center_windows and arg.reflect_padding), arg.power == 1)  # fmt: skip
