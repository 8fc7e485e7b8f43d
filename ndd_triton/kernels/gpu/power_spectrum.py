"""power_spectrum on the GPU (DALI has none): every line along the axis is a frame of
`_audio_fft` (stride = the inner extent), so the batch is one framing launch, one rfft, one
power launch. Lines shorter than nfft are zero-padded, longer ones truncated."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._audio_fft import frame_power
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import power_spectrum
from ndd_triton.ops._audio import axis_split
from ndd_triton.ops.schema import Call


@register(power_spectrum.schema, "gpu")
def power_spectrum_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Samples grouped by nfft (usually one group): one launch triple per group."""
    nfft_all = np.asarray(arg.nfft_per_sample, dtype=np.int64).reshape(-1)
    split = axis_split(inp.shapes, int(arg.fft_axis))
    for nfft in np.unique(nfft_all):
        chosen = np.flatnonzero(nfft_all == nfft)
        outer, extent, inner = (split[chosen, c] for c in range(3))
        lines = outer * inner
        sample = np.repeat(chosen, lines)
        local = np.arange(int(lines.sum()), dtype=np.int64) - np.repeat(np.cumsum(lines) - lines,
                                                                      lines)  # fmt: skip
        line_extent, line_inner = np.repeat(extent, lines), np.repeat(inner, lines)
        o, t = np.divmod(local, line_inner)
        bins = int(nfft) // 2 + 1
        base = inp.offsets[sample] + o * line_extent * line_inner + t
        out_pos = out.offsets[sample] + o * bins * line_inner + t
        rows = np.stack([base, np.zeros_like(base), np.minimum(line_extent, nfft), line_inner,
                         out_pos, line_inner], axis=1).astype(np.int64)  # fmt: skip
        window = np.ones(min(int(nfft), int(extent.max(initial=1))), np.float32)
        frame_power(run, inp.data, out.data, rows, window, int(nfft), False, arg.power == 1)
