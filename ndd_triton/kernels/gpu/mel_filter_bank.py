"""mel_filter_bank on the GPU: the banded filter matrix along `f` (`_audio_matrix.py`)."""

from __future__ import annotations

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._audio_matrix import launch_axis_matrix
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import mel_filter_bank
from ndd_triton.ops.schema import Call


@register(mel_filter_bank.schema, "gpu", replay=True)
def mel_filter_bank_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """One launch; each mel band reads only the bins of its triangle."""
    launch_axis_matrix(run, out, inp, arg)
